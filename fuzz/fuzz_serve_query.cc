// tally serve's request handling on any query string: httplib's decoding of the query,
// then parse_view_query and Api::answer on a small profile, for every endpoint. A request
// is answered 200, 400 or 404 with a JSON body, never a crash; a query accepted has every
// value within its cap and free of control bytes. The Host check on the same bytes.
#include <httplib.h>

#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

#include "formats/folded/folded.h"
#include "fuzz_check.h"
#include "web/api.h"
#include "web/host_check.h"
#include "web/query.h"

using namespace tally;

namespace {

web::Api& api() {
  static web::Api* instance = [] {
    static const std::string stacks =
        "main;run;func_a 40\nmain;run;func_b 30\nmain;run;func_c 20\nmain;func_d 10\n"
        "main;run;std::vector<int>::push_back(int const&) 5\n";
    core::Diagnostics diagnostics;
    auto profile = folded::read_profile(
        {reinterpret_cast<const uint8_t*>(stacks.data()), stacks.size()}, "seed", diagnostics);
    FUZZ_CHECK(profile.has_value(), "the seed profile reads");
    web::ServeData data;
    data.files = {"seed"};
    data.profiles.push_back(std::move(*profile));
    data.source_path = "/nonexistent";  // no file is ever found (folded stacks name none)
    data.debuginfod.enabled = false;
    return new web::Api(std::move(data));
  }();
  return *instance;
}

bool has_control_byte(const std::string& s) {
  for (char c : s)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return true;
  return false;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  static const char* kPaths[] = {"/api/meta",   "/api/top",  "/api/flame", "/api/peek",
                                 "/api/source", "/api/disasm", "/api/diff", "/api/db",
                                 "/api/timeline", "/api/nope"};
  const std::string path = kPaths[data[0] % 10];
  const std::string raw(reinterpret_cast<const char*>(data + 1), size - 1);

  httplib::Params params;
  httplib::detail::parse_query_text(raw, params);
  FUZZ_CHECK(web::query_piece_count(raw) >= params.size(), "httplib makes no pieces up");

  if (auto endpoint = web::endpoint_of(path)) {
    auto query = web::parse_view_query(*endpoint, web::ServeMode::single, params);
    if (query) {
      for (const std::string* s : {&query->filters.focus, &query->filters.ignore,
                                   &query->filters.hide, &query->filters.show, &query->function,
                                   &query->sample_index}) {
        FUZZ_CHECK(s->size() <= web::kMaxRegexLength, "accepted values are within the cap");
        FUZZ_CHECK(!has_control_byte(*s), "accepted values hold no control bytes");
      }
      if (query->filters.time.any())
        FUZZ_CHECK(0 <= query->filters.time.start_ns && query->filters.time.start_ns < query->filters.time.end_ns,
                   "an accepted time range is ordered");
    } else {
      FUZZ_CHECK(!query.error().message.empty(), "a refusal says why");
    }
  }

  const web::ApiAnswer answer = api().answer(path, params);
  FUZZ_CHECK(answer.status == 200 || answer.status == 400 || answer.status == 404,
             "answers are 200, 400 or 404");
  const auto body = nlohmann::json::parse(answer.body, nullptr, /*allow_exceptions=*/false);
  FUZZ_CHECK(!body.is_discarded(), "every answer is JSON");
  if (answer.status != 200) FUZZ_CHECK(body.contains("error"), "an error answer says why");

  const std::vector<std::string> allowed = web::allowed_hosts("127.0.0.1", 8080);
  if (web::host_allowed(raw, allowed)) {
    std::string lower = raw;
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    FUZZ_CHECK(std::find(allowed.begin(), allowed.end(), lower) != allowed.end(),
               "only the listed hosts pass");
  }
  if (web::is_ip_literal_host(raw, 8080))
    FUZZ_CHECK(raw.ends_with(":8080") && raw.find_first_of("gG/@") == std::string::npos,
               "an IP literal is an address and the port, nothing else");
  return 0;
}
