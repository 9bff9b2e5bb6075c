// The flame graph as one self-contained interactive SVG (no external scripts or network):
// the root at the bottom and callees stacked above their callers, as FlameGraph draws
// them; frame widths proportional to the value; colours from a hash of the name, so a
// function has the same colour in every graph. The embedded script adds click-to-zoom,
// reset zoom, regex search (also from the URL: file.svg#s=REGEX) with the matched share,
// and hover details. Output depends only on the tree and options (deterministic).
#pragma once

#include <cstdint>
#include <string>

#include "analyze/flame_tree.h"

namespace tally::analyze {

struct FlameSvgOptions {
  std::string title = "Flame Graph";
  int width = 1200;            // pixels
  double min_frame_px = 0.1;   // narrower frames are folded into their parent
};

// The share of the total under which a frame is narrower than min_frame_px at this
// width (for FlameTreeOptions::min_fraction), and that as a value.
double min_frame_fraction(const FlameSvgOptions& options);
int64_t min_frame_value(int64_t total, const FlameSvgOptions& options);

// Prunes `tree` to min_frame_value and writes the SVG document.
std::string render_flame_svg(FlameTree& tree, const FlameSvgOptions& options);

// A hot (red-orange-yellow) colour from a hash of the name, "#rrggbb".
std::string flame_colour(std::string_view name);
// A blue one, for frames mostly off the CPU (tally record --off-cpu, wall or off-cpu drawn).
std::string flame_off_cpu_colour(std::string_view name);

}  // namespace tally::analyze
