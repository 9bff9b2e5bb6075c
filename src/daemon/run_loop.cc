#include "daemon/run_loop.h"

#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fmt/format.h>

#include <chrono>
#include <ctime>
#include <fstream>

#include "collect/trace_clock.h"
#include "daemon/otlp_request.h"
#include "daemon/push_payload.h"

namespace tally::daemon {

namespace {

// Processes (and threads) that exited this long ago are forgotten: their samples have
// been read by then.
constexpr uint64_t kExitedGraceNs = 10'000'000'000ULL;

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

store::MachineInfo machine_info() {
  store::MachineInfo m;
  utsname u{};
  if (::uname(&u) == 0) m.platform = fmt::format("{} {} {}", u.machine, u.sysname, u.release);
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (!line.starts_with("cpu MHz")) continue;
    if (auto colon = line.find(':'); colon != std::string::npos)
      m.cpuspeed_mhz = static_cast<uint64_t>(std::strtod(line.c_str() + colon + 1, nullptr) + 0.5);
    break;
  }
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  m.cpu_count = cpus > 0 ? static_cast<uint64_t>(cpus) : 0;
  return m;
}

int64_t unix_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch()).count();
}

uint64_t after_seconds(uint64_t now_ns, double seconds) {
  return now_ns + static_cast<uint64_t>(seconds * 1e9);
}

}  // namespace

RunLoop::RunLoop(Log& log, store::Database* db, std::string epoch, collect::Sampler& sampler,
                 store::Aggregate& aggregate, Collector& collector, const Options& options,
                 PushPath& push, const volatile std::sig_atomic_t& stop)
    : log_(log), db_(db), epoch_(std::move(epoch)), sampler_(sampler), aggregate_(aggregate),
      collector_(collector), options_(options), machine_(machine_info()), push_(push),
      stop_(stop), started_ns_(collect::monotonic_ns()), push_started_unix_ns_(unix_ns()) {}

std::string RunLoop::push(const char* why) {
  if (!push_.interval) return "";
  (void)sampler_.read(collector_, 0);
  const uint64_t now = collect::monotonic_ns();
  const int64_t now_unix = unix_ns();
  next_push_ns_ = after_seconds(now, options_.push.every_seconds);
  auto profiles = push_.interval->take(aggregate_, push_started_unix_ns_,
                                       now_unix - push_started_unix_ns_);
  push_started_unix_ns_ = now_unix;
  if (db_ == nullptr) collector_.forget_exited(now, kExitedGraceNs);  // else flush() does
  if (profiles.empty()) return "";
  uint64_t samples = 0;
  for (const auto& p : profiles) samples += p.samples;
  pushed_samples_ += samples;
  const size_t count = profiles.size();
  // Symbolizing reads the binaries: on a thread of its own, so that the rings are read on
  // time meanwhile. One interval at a time, in order, always on the same thread.
  if (!packing_) packing_ = std::make_unique<PackingWorker>();
  packing_->submit([this, samples, why, profiles = std::move(profiles)]() mutable {
    core::Diagnostics diagnostics;
    push_.symbolizer->symbolize(profiles, diagnostics);
    std::string message;
    if (options_.push.format == PushFormat::otlp) {
      std::vector<OtlpProfile> otlp;
      for (auto& p : profiles)
        otlp.push_back({otlp_resource(p.service, push_.host, options_.push.labels),
                        std::move(p.profile)});
      message = encode_otlp_request(std::move(otlp));
    } else {
      std::vector<ProfileSeries> series;
      for (auto& p : profiles) {
        const std::string type = profile_type_name(p.profile);
        series.push_back({series_labels(type, p.service, push_.host, options_.push.labels),
                          {raw_sample(std::move(p.profile))}});
      }
      message = encode_push_request(series);
    }
    if (auto st = push_.pusher->enqueue(message, samples); !st)
      log_.line(fmt::format("push ({}): cannot spool {} samples: {}", why, samples, st.error().message));
  });
  return fmt::format("{} samples of {} profile(s) to push", samples, count);
}

void RunLoop::finish_packing() {
  if (packing_) packing_->wait();
}

core::Expected<std::string> RunLoop::flush(const char* why) {
  if (db_ == nullptr) {  // --push only: a flush pushes
    std::string text = push(why);
    return text.empty() ? std::string("nothing to push") : text;
  }
  // What the rings hold up to now goes in too.
  (void)sampler_.read(collector_, 0);
  const uint64_t pending = aggregate_.pending_samples();
  const auto started = std::chrono::steady_clock::now();
  const std::string epoch_before = epoch_;
  auto result = db_->flush_rolling_over(epoch_, aggregate_, machine_,
                                       static_cast<int64_t>(std::time(nullptr)));
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const uint64_t now = collect::monotonic_ns();
  if (!result) {
    // Retry sooner than the interval: the disk may have room again soon.
    const double retry = std::min(options_.flush_seconds, 30.0);
    next_flush_ns_ = after_seconds(now, retry);
    log_.line(fmt::format("flush ({}) failed: {}; {} samples kept in memory, retrying in {:g} s",
                          why, result.error().message, aggregate_.pending_samples(), retry));
    return result.error();
  }
  next_flush_ns_ = after_seconds(now, options_.flush_seconds);
  for (const std::string& w : result->warnings) log_.line("warning: " + w);
  if (epoch_ != epoch_before) log_.line(fmt::format("epoch {} ended, epoch {} begins", epoch_before, epoch_));
  flushed_samples_ += result->samples;
  std::string text = fmt::format("flushed {} samples ({} files) into epoch {} in {:.3f} s",
                                 result->samples, result->files, epoch_, seconds);
  if (pending != 0 || std::string_view(why) != "timer") log_.line(fmt::format("{} ({})", text, why));
  collector_.forget_exited(now, kExitedGraceNs);
  return text;
}

std::string RunLoop::status() const {
  std::string pushes;
  if (push_.pusher) {
    const PushStats p = push_.pusher->stats();
    pushes = fmt::format("; pushes {} ({} bytes, {} samples spooled in all), retries {}, "
                         "spooled {} ({} bytes), refused {}, dropped {} ({} samples)",
                         p.pushes, p.bytes, pushed_samples_, p.retries, p.spooled_files,
                         p.spooled_bytes, p.refused, p.dropped_files, p.dropped_samples);
    const auto cache = push_.symbolizer->counters();
    pushes += fmt::format("; symbol cache {} addresses, {} hits, {} misses, {} kB, {} resets",
                          cache.cached, cache.hits, cache.misses, cache.bytes / 1024, cache.resets);
  }
  return pushes.empty() ? base_status() : base_status() + pushes;
}

std::string RunLoop::base_status() const {
  const collect::SamplerStats& s = sampler_.stats();
  const CollectorStats& c = collector_.stats();
  return fmt::format("epoch {}; samples {} ({} pending, {} flushed), lost {}, throttled {}; "
                     "processes {}; unmapped frames {}; cpu {:.3f} s in {:.1f} s",
                     epoch_, s.samples, aggregate_.pending_samples(), flushed_samples_,
                     s.lost + s.lost_samples, s.throttled, collector_.processes(),
                     c.unmapped_frames, cpu_seconds(),
                     double(collect::monotonic_ns() - started_ns_) / 1e9);
}

void RunLoop::handle(ControlServer::Request& request) {
  if (request.command == "flush") {
    auto text = flush("tally flush");
    ControlServer::reply(request, bool(text), text ? *text : text.error().message);
  } else if (request.command == "epoch") {
    if (db_ == nullptr) {
      ControlServer::reply(request, false, "this daemon keeps no database (--push without --db)");
      return;
    }
    auto text = flush("tally epoch");
    if (!text) {
      ControlServer::reply(request, false, "the epoch was not changed: " + text.error().message);
      return;
    }
    auto next = db_->start_epoch(static_cast<int64_t>(std::time(nullptr)));
    if (!next) {
      log_.line("cannot start a new epoch: " + next.error().message);
      ControlServer::reply(request, false, next.error().message);
      return;
    }
    log_.line(fmt::format("epoch {} ended, epoch {} begins", epoch_, *next));
    epoch_ = *next;
    ControlServer::reply(request, true, fmt::format("{}; new epoch {}", *text, epoch_));
  } else if (request.command == "status") {
    ControlServer::reply(request, true, status());
  } else {
    ControlServer::reply(request, false, "unknown command '" + request.command +
                                             "' (expected flush, epoch or status)");
  }
}

core::Status RunLoop::run(ControlServer& control) {
  next_flush_ns_ = after_seconds(collect::monotonic_ns(), options_.flush_seconds);
  next_push_ns_ = after_seconds(collect::monotonic_ns(), options_.push.every_seconds);
  while (!stop_) {
    // A quarter second at most between looks at the control socket and the clock.
    if (auto read = sampler_.read(collector_, 250); !read) {
      log_.line("reading the ring buffers failed: " + read.error().message);
      break;
    }
    std::string refused;
    while (auto request = control.accept(refused)) handle(*request);
    if (!refused.empty()) log_.line(refused);
    if (db_ != nullptr && collect::monotonic_ns() >= next_flush_ns_) (void)flush("timer");
    if (push_.interval && collect::monotonic_ns() >= next_push_ns_) (void)push("timer");
  }
  sampler_.disable();
  (void)sampler_.drain(collector_);
  core::Expected<std::string> last = std::string();
  if (db_ != nullptr) last = flush(stop_ ? "exit" : "exit after an error");
  if (push_.pusher) {
    if (std::string text = push("exit"); !text.empty()) log_.line(text + " (exit)");
    finish_packing();
    // A few seconds for the store to take the rest; what it does not stays spooled.
    if (!push_.pusher->drain(5))
      log_.line(fmt::format("push: {} request(s) stay spooled for the next start",
                            push_.pusher->stats().spooled_files));
  }
  log_.line("stopping: " + status());
  // Exit status 3 (kIoError) whatever the flush's error was: the profiles were not written.
  if (!last) return core::Error{"the last flush failed: " + last.error().message, core::ErrorKind::io};
  return core::Done{};
}

}  // namespace tally::daemon
