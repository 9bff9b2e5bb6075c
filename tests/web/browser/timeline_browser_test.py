#!/usr/bin/python3
"""The per-thread timeline of tally serve in a real browser (issue 23).

Records `tally record --off-cpu` of tests/programs/phases.c (one thread: burn_first 200 ms,
nanosleep 200 ms under sleep_phase, burn_last 200 ms), serves it, and checks on the page:
the thread's row is drawn on-CPU, then off-CPU for the sleep, then on-CPU again (read from
the canvas's pixels, in the colours the legend shows); a drag over the sleep only sets
time_range, and the top view then shows the sleep's stack (nanosleep) and no burn function;
the other views get the range too. No error in the browser's console (BrowserCase).

Environment: as browser_test.py, plus TALLY_PHASES (the phases program).
"""
import os
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
