// read_profile: walks the lines of `perf script` output, sample by sample, and hands each
// sample to the ProfileBuilder. Besides parsing, it checks that every sample of an event
// prints the same fields as the first one did: perf prints a fixed field list per event
// type, so a header or frame that lacks a field is a line cut short (a truncated file).
#include <fmt/format.h>

#include <cctype>
#include <unordered_map>

#include "formats/perfscript/perf_script.h"
#include "formats/perfscript/perf_script_builder.h"
#include "formats/perfscript/perf_script_lines.h"
#include "io/line_reader.h"

namespace tally::perfscript {

namespace {

constexpr std::string_view kHeaderForm = "'COMM PID[/TID] [CPU] TIME: [PERIOD] EVENT:'";
// The sample type of samples whose header names no event (perf script -F without event).
constexpr std::string_view kUnnamedEvent = "event";

bool is_blank_line(std::string_view line) {
  return line.find_first_not_of(" \t") == std::string_view::npos;
}

std::string_view trim(std::string_view s) {
  size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// Which fields a sample header or a frame line printed.
struct HeaderFields {
  bool comm = false, pid = false, tid = false, cpu = false, period = false;
  bool operator==(const HeaderFields&) const = default;
  std::string describe() const {
    return fmt::format("{}{}{}TIME: {}EVENT:", comm ? "COMM " : "",
                       pid ? "PID/TID " : tid ? "TID " : "", cpu ? "[CPU] " : "",
                       period ? "PERIOD " : "");
  }
};

struct FrameFields {
  bool symbol = false, dso = false;
  bool operator==(const FrameFields&) const = default;
  std::string describe() const {
    return fmt::format("ADDRESS{}{}", symbol ? " SYMBOL" : "", dso ? " (DSO)" : "");
  }
};

struct EventFields {
  HeaderFields header;
  uint64_t header_line = 0;
  bool has_frame = false;
  FrameFields frame;
  uint64_t frame_line = 0;
};

class Reader {
 public:
  Reader(std::string_view text, core::Diagnostics& diagnostics)
      : text_(text), lines_(text), diagnostics_(diagnostics) {}

  core::Profile read() {
    std::string_view line;
    while (lines_.next(line)) {
      const uint64_t n = lines_.line_number();
      if (is_blank_line(line)) {
        finish_sample();
      } else if (line.front() == '#') {
        if (builder_.sample_count() == 0 && !in_sample_) header_comment(line.substr(1));
      } else if (line.front() == '\t') {
        if (!in_sample_)
          core::fail_at_line(n, fmt::format("frame line outside a sample: expected a sample "
                                            "header {} before it", kHeaderForm));
        add_frame(trim(line), n);
      } else if (auto header = parse_sample_header(line, n)) {
        finish_sample();
        start_sample(*header, line, n);
      } else if (!add_source_line(line)) {
        core::fail_at_line(n, fmt::format("expected a sample header {}, a tab-indented frame "
                                          "'ADDRESS SYMBOL (DSO)', a '#' comment or a blank "
                                          "line; found '{}'", kHeaderForm, excerpt(line)));
      }
    }
    // perf ends every line with a newline: a last line without one was cut, and for a
    // sample header the cut may have shortened the event name ("task-clock:ppp:" ->
    // "task-clock:") without breaking its form.
    if (in_sample_ && frames_.empty() && header_line_ == lines_.line_number() &&
        !text_.ends_with('\n'))
      core::fail_at_line(header_line_, "the file ends inside this sample header (no newline "
                                        "and no frames after it; is the file truncated?)");
    finish_sample();
    if (builder_.sample_count() == 0)
      core::fail_at_line(lines_.line_number() + (lines_.line_number() == 0),
                         fmt::format("no samples: expected sample header lines {} (is this "
                                     "`perf script` output?)", kHeaderForm));
    if (side_band_ > 0)
      diagnostics_.warn(fmt::format("skipped {} side-band record line{} (PERF_RECORD_*: "
                                    "mmap, comm, task events), which are not samples",
                                    side_band_, side_band_ == 1 ? "" : "s"));
    return builder_.finish();
  }

 private:
  // "# captured on    : Wed Aug 15 16:01:24 2018", "# hostname : box", ...
  void header_comment(std::string_view text) {
    size_t colon = text.find(':');
    if (colon == std::string_view::npos) return;
    std::string_view key = trim(text.substr(0, colon));
    std::string_view value = trim(text.substr(colon + 1));
    if (key.empty() || value.empty()) return;
    for (char c : key)  // "(Tip: ...)" and other prose are not header fields
      if (!(std::isalnum(static_cast<unsigned char>(c)) || c == ' ' || c == '_' || c == '-'))
        return;
    builder_.add_header_field(key, value);
    if (key == "captured on") {
      if (auto t = parse_captured_on(value)) builder_.set_captured_on(*t);
      else diagnostics_.warn(fmt::format("line {}: cannot read the date '{}' of 'captured on'; "
                                         "the profile has no start time", lines_.line_number(),
                                         value));
    }
  }

  void start_sample(SampleHeader header, std::string_view line, uint64_t n) {
    if (header.side_band) {
      ++side_band_;
      return;
    }
    if (!named_events_known_) {
      named_events_ = !header.event.empty();
      named_events_known_ = true;
    }
    if (header.event.empty() == named_events_)
      core::fail_at_line(n, fmt::format("sample header '{}' names {}event, but the first "
                                        "sample's header {} (is the line cut short?)",
                                        excerpt(trim(line)), named_events_ ? "no " : "an ",
                                        named_events_ ? "does" : "does not"));
    if (header.event.empty()) header.event = kUnnamedEvent;

    const HeaderFields fields{!header.comm.empty(), header.pid.has_value(),
                              header.tid.has_value(), header.cpu.has_value(),
                              header.period.has_value()};
    auto [it, first] = event_fields_.try_emplace(std::string(header.event));
    event_ = &it->second;
    if (first) {
      event_->header = fields;
      event_->header_line = n;
    } else if (!(event_->header == fields)) {
      core::fail_at_line(n, fmt::format("sample header has the fields '{}', but the '{}' sample "
                                        "on line {} has '{}' (is the line cut short?)",
                                        fields.describe(), header.event, event_->header_line,
                                        event_->header.describe()));
    }
    header_ = header;
    header_line_ = n;
    in_sample_ = true;
    frames_.clear();
    // A sample without a call chain has its frame on the header line, after the event.
    if (!header.rest.empty()) {
      std::string_view first_token = header.rest.substr(0, header.rest.find_first_of(" \t"));
      if (is_address(first_token)) add_frame(header.rest, n);
    }
  }

  void add_frame(std::string_view text, uint64_t n) {
    Frame f{parse_frame_line(text, n), {}, 0};
    if (!f.line.inlined) {
      const FrameFields fields{f.line.has_symbol, f.line.has_dso};
      if (!event_->has_frame) {
        event_->has_frame = true;
        event_->frame = fields;
        event_->frame_line = n;
      } else if (!(event_->frame == fields)) {
        core::fail_at_line(n, fmt::format("frame '{}' has the fields '{}', but the frame on line "
                                          "{} has '{}' (is the line cut short?)", excerpt(text),
                                          fields.describe(), event_->frame_line,
                                          event_->frame.describe()));
      }
    }
    frames_.push_back(f);
  }

  // "  split.cc:26" after a frame (perf script -F +srcline) gives that frame's source line.
  bool add_source_line(std::string_view line) {
    if (!in_sample_ || frames_.empty() || line.front() != ' ') return false;
    auto source = parse_source_line(line);
    if (!source) return false;
    frames_.back().file = source->file;
    frames_.back().source_line = source->line;
    return true;
  }

  void finish_sample() {
    if (!in_sample_) return;
    builder_.add_sample(header_, frames_);
    in_sample_ = false;
    frames_.clear();
  }

  std::string_view text_;
  io::LineReader lines_;
  core::Diagnostics& diagnostics_;
  ProfileBuilder builder_;
  std::unordered_map<std::string, EventFields> event_fields_;
  EventFields* event_ = nullptr;
  bool named_events_known_ = false;
  bool named_events_ = true;
  bool in_sample_ = false;
  SampleHeader header_;
  uint64_t header_line_ = 0;
  std::vector<Frame> frames_;
  uint64_t side_band_ = 0;
};

}  // namespace

core::Expected<core::Profile> read_profile(std::span<const uint8_t> bytes,
                                           const std::string& source,
                                           core::Diagnostics& diagnostics) {
  std::string_view text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  try {
    return Reader(text, diagnostics).read();
  } catch (const core::FormatError& e) {
    return e.located(source);
  }
}

}  // namespace tally::perfscript
