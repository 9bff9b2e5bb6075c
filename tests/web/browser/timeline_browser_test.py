#!/usr/bin/python3
"""The per-thread timeline of tally serve in a real browser (issue 23).

Records `tally record --off-cpu` of tests/programs/phases.c (one thread: burn_first 200 ms,
nanosleep 200 ms under sleep_phase, burn_last 200 ms), serves it, and checks on the page:
the thread's row is drawn on-CPU, then off-CPU for the sleep, then on-CPU again (read from
the canvas's pixels, in the colours the legend shows); a drag over the sleep only sets
time_range, and the top view then shows the sleep's stack (nanosleep) and no burn function;
the other views get the range too; the range's zoom button redraws the timeline for just that
time (from /api/timeline?window=) and "whole recording" goes back; the zoom is in the URL (tz=):
a zoomed URL opens zoomed, and the browser's back undoes a zoom. The flame graph draws the
frames that tally flame's SVG draws blue (mostly off the CPU: the sleep's nanosleep and kernel
wait frames) in the same blues, the burn frames in warm colours, with a legend line. No error
in the browser's console (BrowserCase).

Environment: as browser_test.py, plus TALLY_PHASES (the phases program).
"""
import html
import os
import re
import shutil
import subprocess
import tempfile
import unittest
import urllib.parse

from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.by import By

from browser_test import TALLY, BrowserCase

PHASES = os.environ.get("TALLY_PHASES", "phases")
MS = 1e6


def is_off_cpu_blue(rgb):
    """In analyze/flame_svg.cc's flame_off_cpu_colour palette (the blues)."""
    r, g, b = rgb
    return 60 <= r < 120 and 110 <= g < 190 and 205 <= b <= 255


def is_warm(rgb):
    """In flame_colour's palette (red-orange-yellow)."""
    r, g, b = rgb
    return r >= 205 and b < 56


def hex_rgb(colour):
    colour = colour.strip()
    if colour.startswith("#"):
        return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))
    parts = colour[colour.index("(") + 1:colour.index(")")].split(",")
    return tuple(int(float(p)) for p in parts[:3])


class TimelineTest(BrowserCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="tally-timeline-")
        cls.profile = os.path.join(cls.tmp, "phases.pb.gz")
        done = subprocess.run([TALLY, "record", "--off-cpu", "-o", cls.profile, "--", PHASES],
                              capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            shutil.rmtree(cls.tmp)
            raise AssertionError("tally record --off-cpu failed (%d): %s" % (done.returncode, done.stderr))
        cls.server_args = ["--no-debuginfod", cls.profile]
        try:
            super().setUpClass()
        except Exception:
            shutil.rmtree(cls.tmp)
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            shutil.rmtree(cls.tmp)

    def main_thread(self, timeline):
        threads = [t for t in timeline["threads"] if t["name"] == "phases"]
        self.assertEqual(len(threads), 1, [(t["name"], t["tid"]) for t in timeline["threads"]])
        return timeline["threads"].index(threads[0]), threads[0]

    def sleep_span(self, timeline, thread):
        """The thread's sleep: its one off-CPU span of 150-300 ms (the program sleeps 200 ms)."""
        s = thread["spans"]
        sleeps = [(start, end) for start, end, state in zip(s["start"], s["end"], s["state"])
                  if timeline["states"][state] == "sleep" and 150 * MS <= end - start <= 300 * MS]
        self.assertEqual(len(sleeps), 1, "the sleep span: %r" % sleeps)
        return sleeps[0]

    def row_pixels(self, row):
        """The colour of every CSS pixel along the middle of a timeline row, left to right."""
        return self.driver.execute_script("""
            var canvas = document.getElementById('timeline-canvas'), row = arguments[0];
            var ratio = canvas.width / canvas.clientWidth;
            var y = Math.round((Number(canvas.dataset.axis) + (row + 0.5) * Number(canvas.dataset.rowHeight)) * ratio);
            var data = canvas.getContext('2d').getImageData(0, y, canvas.width, 1).data, out = [];
            for (var x = 0; x < canvas.clientWidth; x++) {
              var i = 4 * Math.floor((x + 0.5) * ratio);
              out.push([data[i], data[i + 1], data[i + 2]]);
            }
            return out;""", row)

    def legend_colours(self):
        return {s.get_attribute("data-state"): hex_rgb(s.value_of_css_property("background-color"))
                for s in self.driver.find_elements(By.CSS_SELECTOR, "#timeline .timeline-legend .swatch")}

    def test_row_shows_the_phases_and_a_drag_over_the_sleep_filters_every_view(self):
        self.open("/top")
        self.wait_for(lambda d: d.find_elements(By.ID, "timeline-canvas"), "the timeline")
        timeline = self.server.api("/api/timeline")
        self.assertTrue(timeline["has_timestamps"])
        row, thread = self.main_thread(timeline)
        label = self.driver.find_element(By.CSS_SELECTOR, ".timeline-label[data-row='%d']" % row)
        self.assertEqual(label.text.strip(), "phases %d" % thread["tid"])
        sleep_start, sleep_end = self.sleep_span(timeline, thread)
        # The model: on-CPU spans before the sleep and after it (burn_first, burn_last).
        s = thread["spans"]
        on = [(start, end) for start, end, state in zip(s["start"], s["end"], s["state"]) if state == 0]
        self.assertTrue(any(end <= sleep_start + 5 * MS for _, end in on), "no on-CPU span before the sleep")
        self.assertTrue(any(start >= sleep_end - 5 * MS for start, _ in on), "no on-CPU span after the sleep")

        # The page: the row's pixels, in the legend's colours, go on-CPU, sleep, on-CPU.
        colours = self.legend_colours()
        self.assertIn("on-cpu", colours)
        self.assertIn("sleep", colours)
        canvas = self.driver.find_element(By.ID, "timeline-canvas")
        width = canvas.size["width"]
        end = float(canvas.get_attribute("data-end"))
        x_of = lambda t: t / end * width
        pixels = self.row_pixels(row)
        self.screenshot("timeline")
        kinds = []
        for colour in pixels:
            kind = next((state for state, c in colours.items() if tuple(colour) == c), None)
            if kind is not None and (not kinds or kinds[-1] != kind):
                kinds.append(kind)
        self.assertIn("sleep", kinds)
        first_sleep = kinds.index("sleep")
        self.assertIn("on-cpu", kinds[:first_sleep], kinds)
        self.assertIn("on-cpu", kinds[first_sleep:], kinds)
        self.assertEqual(kinds.count("sleep"), 1, kinds)
        # The sleep's middle is drawn in the sleep's colour.
        self.assertEqual(tuple(pixels[int(x_of((sleep_start + sleep_end) / 2))]), colours["sleep"])

        # Drag over the middle half of the sleep.
        box = self.driver.execute_script("var r = arguments[0].getBoundingClientRect(); return [r.left, r.top];", canvas)
        y = box[1] + float(canvas.get_attribute("data-axis")) + (row + 0.5) * float(canvas.get_attribute("data-row-height"))
        x0 = box[0] + x_of(sleep_start + 0.25 * (sleep_end - sleep_start))
        x1 = box[0] + x_of(sleep_start + 0.75 * (sleep_end - sleep_start))
        actions = ActionBuilder(self.driver)
        actions.pointer_action.move_to_location(int(x0), int(y)).pointer_down()
        actions.pointer_action.move_to_location(int((x0 + x1) / 2), int(y))
        actions.pointer_action.move_to_location(int(x1), int(y)).pointer_up()
        actions.perform()
        self.wait_for(lambda d: "time_range=" in d.current_url, "time_range in the URL")
        self.wait_ready()
        query = urllib.parse.parse_qs(urllib.parse.urlparse(self.driver.current_url).query)
        start_s, end_s = (float(v) for v in query["time_range"][0].split(":"))
        self.assertGreater(start_s * 1e9, sleep_start)
        self.assertLess(end_s * 1e9, sleep_end)
        self.assertTrue(self.driver.find_element(By.ID, "timeline-range").is_displayed())
        self.screenshot("timeline-selected")

        # The top view shows the sleep's stack only.
        names = [r["name"] for r in self.table_rows("top-table")]
        self.assertTrue(any("nanosleep" in n for n in names), names)
        self.assertIn("sleep_phase", names)
        self.assertFalse([n for n in names if "burn" in n], names)

        # Every view gets the range: the flame graph's nav link carries it, and its tree is the sleep's.
        flame_link = self.driver.find_element(By.CSS_SELECTOR, "#nav a[data-view='flame']")
        self.assertIn("time_range=", flame_link.get_attribute("href"))
        flame_link.click()
        self.wait_for(lambda d: d.find_elements(By.CSS_SELECTOR, "#flame-canvas[data-ready='1']"), "the flame graph")
        self.assertIn("time_range=", self.driver.current_url)
        self.assertIsNotNone(self.driver.execute_script("return window.tally.flame.findFrame('sleep_phase');"))
        self.assertIsNone(self.driver.execute_script("return window.tally.flame.findFrame('burn_first');"))
        self.assertIsNone(self.driver.execute_script("return window.tally.flame.findFrame('burn_last');"))

        # The chip's × shows all the time again: burn_first is back in the top view.
        self.driver.find_element(By.CSS_SELECTOR, "#nav a[data-view='top']").click()
        self.wait_ready()
        self.driver.find_element(By.CSS_SELECTOR, "#timeline-range button").click()
        self.wait_for(lambda d: "time_range=" not in d.current_url, "the range removed")
        self.wait_ready()
        self.assertIn("burn_first", [r["name"] for r in self.table_rows("top-table")])

    def drawn_frames(self):
        """Every frame the flame graph drew: [name, colour, x, w]."""
        return self.driver.execute_script("""
            var f = window.tally.flame, out = [];
            f.drawnByDepth.forEach(function (list) { (list || []).forEach(function (i) {
              var b = f.frameBox(i); out.push([f.nameOf(i), f.colourOf(i), b.x, b.w]); }); });
            return out;""")

    def svg_fills(self):
        """tally flame's SVG of the same profile: each frame name's fill colours."""
        svg = os.path.join(self.tmp, "phases.svg")
        done = subprocess.run([TALLY, "flame", "--no-debuginfod", "-o", svg, self.profile],
                              capture_output=True, text=True, timeout=120)
        self.assertEqual(done.returncode, 0, done.stderr)
        with open(svg) as f:
            text = f.read()
        fills = {}
        for name, fill in re.findall(r'<title>(.*?) \([^<]*</title><rect [^>]*fill="(#[0-9a-f]{6})"', text):
            fills.setdefault(html.unescape(name), set()).add(fill)
        return fills

    def test_flame_graph_draws_off_cpu_frames_in_the_svgs_blues(self):
        self.open("/flame")
        self.wait_for(lambda d: d.find_elements(By.CSS_SELECTOR, "#flame-canvas[data-ready='1']"), "the flame graph")
        flame = self.server.api("/api/flame")
        self.assertTrue(flame["has_off_cpu"])  # wall, the default, holds off-CPU time
        frames = self.drawn_frames()
        self.screenshot("flame-off-cpu")
        colours = {}
        for name, colour, _, _ in frames:
            colours.setdefault(name, set()).add(colour)
        # The sleep: sleep_phase and its nanosleep frames (libc's, and the kernel's wait frames
        # down to do_nanosleep) are off the CPU. Only the wide ones, the sleep's 200 ms: a
        # tiny frame of the same name may hold an on-CPU sample of the syscall alone.
        width = float(self.canvas().get_attribute("data-width"))
        sleepy = sorted({n for n, _, _, w in frames if "nanosleep" in n and w > width / 10})
        self.assertTrue(sleepy, sorted(colours))
        for name, colour, _, w in frames:
            if (name in sleepy or name == "sleep_phase") and w > width / 10:
                self.assertTrue(is_off_cpu_blue(hex_rgb(colour)), "%s drawn %s" % (name, colour))
        # The burns are on the CPU, unless a loaded machine preempted them for more than half
        # their wall time (the preemptions are off-CPU time under them): the expected palette
        # from tally top's cum of off-cpu against wall, one frame each.
        wall = {r["name"]: r["cum"] for r in self.server.api("/api/top?si=wall")["rows"]}
        off = {r["name"]: r["cum"] for r in self.server.api("/api/top?si=off-cpu")["rows"]}
        for name in ("burn_first", "burn_last", "main"):
            self.assertIn(name, colours)
            expect_off = 2 * off.get(name, 0) > wall[name]
            for colour in colours[name]:
                self.assertEqual(is_off_cpu_blue(hex_rgb(colour)), expect_off,
                                 "%s drawn %s; off-CPU %s of %s ns" % (name, colour, off.get(name, 0), wall[name]))
                self.assertEqual(is_warm(hex_rgb(colour)), not expect_off, "%s drawn %s" % (name, colour))
        # The same rule and palette as tally flame's SVG: the page draws each of these functions
        # in colours the SVG gives it (the SVG draws narrower frames than the page, so it may
        # have more).
        fills = self.svg_fills()
        for name in sleepy + ["sleep_phase", "burn_first", "burn_last", "main"]:
            self.assertIn(name, fills)
            self.assertLessEqual(colours[name], fills[name], name)
        legend = self.driver.find_element(By.ID, "flame-off-cpu-legend")
        self.assertTrue(legend.is_displayed())
        self.assertIn("off the CPU", legend.text)
        # Drawn by cpu, no frame is off the CPU: no blues, no legend.
        self.open("/flame?si=cpu")
        self.wait_for(lambda d: d.find_elements(By.CSS_SELECTOR, "#flame-canvas[data-ready='1']"), "the cpu flame graph")
        self.assertFalse([f for f in self.drawn_frames() if is_off_cpu_blue(hex_rgb(f[1]))])
        self.assertFalse(self.driver.find_elements(By.ID, "flame-off-cpu-legend"))

    def test_zoom_to_the_selected_range_and_back(self):
        timeline = self.server.api("/api/timeline")
        row, thread = self.main_thread(timeline)
        # A range inside the sleep, as a drag sets it.
        lo, hi, text = self.middle_of_the_sleep(timeline, thread)
        self.open("/top?time_range=" + text)
        self.wait_for(lambda d: d.find_elements(By.ID, "timeline-zoom"), "the zoom button")
        canvas = self.driver.find_element(By.ID, "timeline-canvas")
        self.assertEqual(float(canvas.get_attribute("data-start")), 0)
        self.assertEqual(float(canvas.get_attribute("data-end")), timeline["end"])
        self.driver.find_element(By.ID, "timeline-zoom").click()
        self.wait_for(lambda d: d.find_elements(By.CSS_SELECTOR, "#timeline-canvas[data-zoomed='1']"), "the zoomed timeline")
        self.screenshot("timeline-zoomed")
        self.assertEqual(self.url_params().get("tz"), [text])
        canvas = self.driver.find_element(By.ID, "timeline-canvas")
        start, end = float(canvas.get_attribute("data-start")), float(canvas.get_attribute("data-end"))
        self.assertAlmostEqual(start, lo, delta=1000)  # the range's microseconds
        self.assertAlmostEqual(end, hi, delta=1000)
        # The window is all sleep: the row is drawn in the sleep's colour from edge to edge.
        colours = self.legend_colours()
        pixels = self.row_pixels(row)
        self.assertGreater(len(pixels), 100)
        self.assertEqual({tuple(p) for p in pixels[1:-1]}, {colours["sleep"]})
        # The axis is of the window: its range drawn over the whole width, the URL's range
        # unchanged and the view still filtered by it.
        self.assertIn("time_range=", self.driver.current_url)
        self.assertTrue(self.driver.find_element(By.ID, "timeline-unzoom").is_displayed())
        self.assertFalse(self.driver.find_elements(By.ID, "timeline-zoom"))
        # The zoom stays when the view changes.
        self.driver.find_element(By.CSS_SELECTOR, "#nav a[data-view='flame']").click()
        self.wait_ready()
        self.assertTrue(self.driver.find_elements(By.CSS_SELECTOR, "#timeline-canvas[data-zoomed='1']"))
        self.assertEqual(self.url_params().get("tz"), [text])
        # Back to the whole recording; without the range (its shade) the row shows on-CPU, the
        # sleep, on-CPU again.
        self.driver.find_element(By.ID, "timeline-unzoom").click()
        self.wait_for(lambda d: d.find_elements(By.CSS_SELECTOR, "#timeline-canvas[data-zoomed='0']"), "the whole timeline")
        canvas = self.driver.find_element(By.ID, "timeline-canvas")
        self.assertEqual(float(canvas.get_attribute("data-start")), 0)
        self.assertEqual(float(canvas.get_attribute("data-end")), timeline["end"])
        self.assertTrue(self.driver.find_elements(By.ID, "timeline-zoom"))
        self.driver.find_element(By.CSS_SELECTOR, "#timeline-range button").click()
        self.wait_for(lambda d: "time_range=" not in d.current_url, "the range removed")
        self.wait_ready()
        colours = self.legend_colours()  # the whole recording's legend: on-CPU too
        kinds = []
        for colour in self.row_pixels(row):
            kind = next((state for state, c in colours.items() if tuple(colour) == c), None)
            if kind is not None and (not kinds or kinds[-1] != kind):
                kinds.append(kind)
        self.assertIn("sleep", kinds)
        self.assertIn("on-cpu", kinds[:kinds.index("sleep")], kinds)
        self.assertIn("on-cpu", kinds[kinds.index("sleep"):], kinds)

    def url_params(self):
        return urllib.parse.parse_qs(urllib.parse.urlparse(self.driver.current_url).query)

    def drawn_window(self):
        canvas = self.driver.find_element(By.ID, "timeline-canvas")
        return (canvas.get_attribute("data-zoomed"), float(canvas.get_attribute("data-start")),
                float(canvas.get_attribute("data-end")))

    def middle_of_the_sleep(self, timeline, thread):
        """The middle half of the thread's sleep span (ns from the start), and as a range text."""
        sleep_start, sleep_end = self.sleep_span(timeline, thread)
        lo, hi = sleep_start + 0.25 * (sleep_end - sleep_start), sleep_start + 0.75 * (sleep_end - sleep_start)
        return lo, hi, "%.6f:%.6f" % (lo / 1e9, hi / 1e9)

    def wait_zoomed(self, zoomed, what):
        return self.wait_for(lambda d: d.find_elements(By.CSS_SELECTOR, "#timeline-canvas[data-zoomed='%s']" % zoomed), what)

    def test_a_zoomed_url_opens_zoomed_and_back_undoes_a_zoom(self):
        timeline = self.server.api("/api/timeline")
        row, thread = self.main_thread(timeline)
        lo, hi, text = self.middle_of_the_sleep(timeline, thread)
        # A shared link to a zoomed timeline (no time range): drawn zoomed at once, all sleep,
        # and the views unfiltered (the zoom filters nothing).
        self.open("/top?tz=" + text)
        self.wait_zoomed("1", "the zoomed timeline from the URL")
        zoomed, start, end = self.drawn_window()
        self.assertAlmostEqual(start, lo, delta=1000)
        self.assertAlmostEqual(end, hi, delta=1000)
        colours = self.legend_colours()
        self.assertEqual({tuple(p) for p in self.row_pixels(row)[1:-1]}, {colours["sleep"]})
        # The legend names the states drawn in the window, and no other (the whole recording
        # has on-CPU spans, which this window of a sleep does not).
        windowed = self.server.api("/api/timeline?window=" + text)
        drawn = {windowed["states"][s] for t in windowed["threads"] for s in t["spans"]["state"]}
        self.assertIn("on-cpu", self.server.api("/api/timeline")["states"])
        self.assertEqual(set(colours), drawn)
        names = {r["name"] for r in self.table_rows("top-table")}
        self.assertTrue(any("burn_first" in n for n in names), names)
        # "whole recording" is a new history entry: back zooms in again, forward out.
        self.driver.find_element(By.ID, "timeline-unzoom").click()
        self.wait_zoomed("0", "the whole timeline")
        self.assertNotIn("tz", self.url_params())
        self.assertEqual(self.drawn_window(), ("0", 0, timeline["end"]))
        self.driver.back()
        self.wait_zoomed("1", "the zoom back")
        self.assertEqual(self.url_params().get("tz"), [text])
        zoomed, start, end = self.drawn_window()
        self.assertAlmostEqual(start, lo, delta=1000)
        self.assertAlmostEqual(end, hi, delta=1000)
        # A zoom from the range's button: back undoes it and keeps the range.
        self.open("/flame?time_range=" + text)
        self.wait_for(lambda d: d.find_elements(By.ID, "timeline-zoom"), "the zoom button")
        self.assertEqual(self.drawn_window(), ("0", 0, timeline["end"]))
        self.driver.find_element(By.ID, "timeline-zoom").click()
        self.wait_zoomed("1", "the zoomed timeline")
        self.driver.back()
        self.wait_zoomed("0", "the zoom undone")
        self.assertEqual(self.drawn_window(), ("0", 0, timeline["end"]))
        self.assertEqual(self.url_params(), {"time_range": [text]})
        self.assertTrue(self.driver.find_elements(By.ID, "timeline-zoom"))

    def test_profile_without_timestamps_says_so(self):
        # A profile of the fixtures has no timestamps: the timeline says so, the views work.
        from browser_test import Server
        server = Server(["gperf/split.pb.gz"])
        try:
            self.driver.get(server.url + "/top")
            self.wait_ready()
            note = self.wait_for(lambda d: d.find_element(By.ID, "timeline-none"), "the timeline's note")
            self.assertIn("no timestamps", note.text)
            self.assertGreater(len(self.table_rows("top-table")), 3)
        finally:
            server.stop()


if __name__ == "__main__":
    unittest.main(verbosity=2)
