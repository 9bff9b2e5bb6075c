#include "analyze/name_filter.h"

#include <string_view>

namespace tally::analyze {

// Every report regex is compiled with libstdc++'s __polynomial option: matched by its
// breadth-first executor, in time polynomial in the name's length, so that a pattern such
// as "(a|a)*x" or ".??*s*" cannot hang a report (or `tally serve`, which takes regexes from
// requests) for hours as the backtracking executor does. Backreferences are then refused.
namespace {

core::Expected<std::optional<std::regex>> compile(const std::string& name, const std::string& text) {
  if (text.empty()) return std::optional<std::regex>{};
  try {
    return std::optional<std::regex>{
        std::regex(text, std::regex::ECMAScript | std::regex_constants::__polynomial)};
  } catch (const std::regex_error& e) {
    return core::Error{"invalid --" + name + " regex '" + text + "': " + e.what(),
                       core::ErrorKind::unsupported};
  }
}

bool search(const std::regex& re, std::string_view text) {
  return std::regex_search(text.begin(), text.end(), re);
}

bool line_matches(const core::Profile& p, const core::Line& line, const std::regex& re) {
  if (line.function == 0) return false;
  const core::Function& f = p.function(line.function);
  return search(re, p.str(f.name)) || search(re, p.str(f.filename));
}

bool mapping_matches(const core::Profile& p, const core::Location& loc, const std::regex& re) {
  return loc.mapping != 0 && search(re, p.str(p.mapping(loc.mapping).file));
}

bool location_matches(const core::Profile& p, const core::Location& loc, const std::regex& re) {
  for (const core::Line& line : loc.lines)
    if (line_matches(p, line, re)) return true;
  return mapping_matches(p, loc, re);
}

}  // namespace

core::Expected<std::regex> compile_report_regex(const std::string& text) {
  try {
    return std::regex(text, std::regex::ECMAScript | std::regex_constants::__polynomial);
  } catch (const std::regex_error& e) {
    return core::Error{"invalid regex '" + text + "': " + e.what(), core::ErrorKind::invalid_input};
  }
}

std::vector<std::string> NameFilters::active() const {
  std::vector<std::string> out;
  if (!focus.empty()) out.push_back("focus=" + focus);
  if (!ignore.empty()) out.push_back("ignore=" + ignore);
  if (!hide.empty()) out.push_back("hide=" + hide);
  if (!show.empty()) out.push_back("show=" + show);
  for (const std::string& f : labels.focus) out.push_back("tagfocus=" + f);
  for (const std::string& f : labels.ignore) out.push_back("tagignore=" + f);
  if (time.any()) out.push_back("time_range=" + time.text);
  return out;
}

core::Expected<LocationFilter> LocationFilter::create(const core::Profile& profile,
                                                      const NameFilters& filters) {
  auto focus = compile("focus", filters.focus);
  if (!focus) return focus.error();
  auto ignore = compile("ignore", filters.ignore);
  if (!ignore) return ignore.error();
  auto hide = compile("hide", filters.hide);
  if (!hide) return hide.error();
  auto show = compile("show", filters.show);
  if (!show) return show.error();

  auto labels = SampleLabelFilter::create(profile, filters.labels);
  if (!labels) return labels.error();
  auto time = SampleTimeFilter::create(profile, filters.time);
  if (!time) return time.error();

  LocationFilter f;
  f.filters_ = filters;
  f.labels_ = std::move(*labels);
  f.time_ = std::move(*time);
  f.has_focus_ = focus->has_value();
  const size_t n = profile.locations.size();
  if (!filters.names()) return f;
  f.verdicts_.assign(n, Verdict::none);
  const bool hide_or_show = hide->has_value() || show->has_value();
  if (hide_or_show) {
    f.hidden_.assign(n, 0);
    f.kept_lines_.resize(n);
  }
  for (size_t i = 0; i < n; ++i) {
    const core::Location& loc = profile.locations[i];
    if (*ignore && location_matches(profile, loc, **ignore)) {
      f.ignore_matched_ = true;
      f.verdicts_[i] = Verdict::ignored;
    } else if (!*focus || location_matches(profile, loc, **focus)) {
      f.focus_matched_ = true;
      f.verdicts_[i] = Verdict::focused;
    }
    if (!hide_or_show) continue;
    core::LineList lines = loc.lines;
    bool changed = false;
    if (*hide && location_matches(profile, loc, **hide)) {
      f.hide_matched_ = true;
      changed = true;
      core::LineList kept;
      if (!mapping_matches(profile, loc, **hide))
        for (const core::Line& line : lines)
          if (!line_matches(profile, line, **hide)) kept.push_back(line);
      lines = std::move(kept);
      if (lines.empty()) f.hidden_[i] = 1;
    }
    if (*show) {
      changed = true;
      if (!mapping_matches(profile, loc, **show)) {
        core::LineList kept;
        for (const core::Line& line : lines)
          if (line.function == 0 || line_matches(profile, line, **show)) kept.push_back(line);
        lines = std::move(kept);
      }
      if (lines.empty()) f.hidden_[i] = 1;
      else f.show_matched_ = true;
    }
    if (changed) f.kept_lines_[i] = std::move(lines);
  }
  return f;
}

bool LocationFilter::keeps_stack(std::span<const core::LocationId> stack) const {
  if (verdicts_.empty()) return true;
  bool focused = false;
  for (core::LocationId id : stack) {
    Verdict v = verdicts_[id - 1];
    if (v == Verdict::ignored) return false;
    if (v == Verdict::focused) focused = true;
  }
  return focused;
}

std::span<const core::Line> LocationFilter::lines(const core::Profile& profile,
                                                  core::LocationId id) const {
  if (!kept_lines_.empty() && kept_lines_[id - 1]) return *kept_lines_[id - 1];
  return profile.location(id).lines;
}

std::vector<std::string> LocationFilter::unmatched() const {
  std::vector<std::string> out;
  if (!filters_.focus.empty() && !focus_matched_) out.push_back("focus");
  if (!filters_.ignore.empty() && !ignore_matched_) out.push_back("ignore");
  if (!filters_.hide.empty() && !hide_matched_) out.push_back("hide");
  if (!filters_.show.empty() && !show_matched_) out.push_back("show");
  return out;
}

}  // namespace tally::analyze
