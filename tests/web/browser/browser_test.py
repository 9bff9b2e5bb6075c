#!/usr/bin/python3
"""tally serve's front end in a real browser (issue 19): headless Chromium driven by Selenium.

Each test class starts `tally serve --no-browser --http 127.0.0.1:0 ...` itself, reads the URL
it prints, drives the pages and checks what they show against tally's own CLI reports (top,
list, disasm, diff) and against /api/flame's numbers. No test passes with an error in the
browser's console. A screenshot of each view goes to $TALLY_SCREENSHOT_DIR.

Environment: TALLY_BIN (the tally binary), TALLY_FIXTURES (shared/fixtures),
TALLY_SCREENSHOT_DIR (where the screenshots go). Runs with Debian's /usr/bin/python3, chromium,
chromium-driver and python3-selenium.
"""
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select
from selenium.webdriver.support.ui import WebDriverWait

HERE = os.path.dirname(os.path.abspath(__file__))
TALLY = os.environ.get("TALLY_BIN", "tally")
FIXTURES = os.environ.get("TALLY_FIXTURES", os.path.join(HERE, "../../../../shared/fixtures"))
SCREENSHOTS = os.environ.get("TALLY_SCREENSHOT_DIR", os.path.join(tempfile.gettempdir(), "tally-web-screenshots"))
# Generous: under ASan the server and the CLI are several times slower.
WAIT = float(os.environ.get("TALLY_BROWSER_WAIT", "60"))


def run_tally(*args, cwd=FIXTURES):
    done = subprocess.run([TALLY, *args], cwd=cwd, capture_output=True, text=True, timeout=300)
    if done.returncode != 0:
        raise AssertionError("tally %s failed (%d): %s" % (" ".join(args), done.returncode, done.stderr))
    return done.stdout


class Server:
    """`tally serve` on a free port; its URL is the first http:// URL it prints on stdout."""

    def __init__(self, args, cwd=FIXTURES):
        self.process = subprocess.Popen(
            [TALLY, "serve", "--no-browser", "--http", "127.0.0.1:0", *args], cwd=cwd,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        self.lines = queue.Queue()
        self.stderr = []
        threading.Thread(target=self._read, args=(self.process.stdout, self.lines.put), daemon=True).start()
        threading.Thread(target=self._read, args=(self.process.stderr, self.stderr.append), daemon=True).start()
        deadline = time.monotonic() + 120
        self.url = None
        seen = []
        while self.url is None:
            left = deadline - time.monotonic()
            if left <= 0 or self.process.poll() is not None and self.lines.empty():
                self.stop()
                raise AssertionError("tally serve printed no URL; stdout %r, stderr %r" % (seen, "".join(self.stderr)))
            try:
                line = self.lines.get(timeout=min(left, 0.5))
            except queue.Empty:
                continue
            seen.append(line)
            found = re.search(r"http://127\.0\.0\.1:\d+", line)
            if found:
                self.url = found.group(0)

    @staticmethod
    def _read(stream, put):
        for line in stream:
            put(line)

    def api(self, path):
        with urllib.request.urlopen(self.url + path, timeout=WAIT) as answer:
            return json.loads(answer.read().decode("utf-8"))

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        time.sleep(0.2)  # the reader threads take the last of stderr


def make_browser():
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1300,900", "--force-device-scale-factor=1", "--no-first-run",
                     "--disable-extensions", "--disable-background-networking"):
        options.add_argument(argument)
    options.binary_location = shutil.which("chromium") or "/usr/bin/chromium"
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver") or "/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(WAIT)
    driver.set_script_timeout(WAIT)
    return driver


def top_rows(text):
    """`tally top`'s rows: name -> (flat%, cum%, ±) as printed, in order."""
    rows = []
    for line in text.splitlines():
        m = re.match(r"^\s*(\S+)\s+(\S+%)\s+(\S+%)\s+(\S+)\s+(\S+%)\s+(±\S+|-)\s+(.+)$", line)
        if m and not line.lstrip().startswith("flat"):
            rows.append({"flat": m.group(1), "flat_pct": m.group(2), "cum": m.group(4), "cum_pct": m.group(5),
                         "pm": m.group(6), "name": m.group(7)})
    return rows


def matched_share(flame, pattern):
    """The share of the total under frames whose name matches (each sample counted once),
    from /api/flame's preorder arrays: a frame inside a matched frame adds nothing."""
    regex = re.compile(pattern)
    names, nodes = flame["names"], flame["nodes"]
    matched, inside_depth = 0, None
    for i in range(len(nodes["name"])):
        depth = nodes["depth"][i]
        if inside_depth is not None and depth <= inside_depth:
            inside_depth = None
        if inside_depth is None and regex.search(names[nodes["name"][i]]):
            matched += nodes["total"][i]
            inside_depth = depth
    return 100.0 * matched / flame["total"]


def hottest_in_listing(text, place):
    """The place (line number, address) with the largest flat in a tally list / disasm
    listing: rows are "FLAT CUM PLACE: ...", "." for nothing, one unit per listing."""
    best, best_value = None, 0.0
    for line in text.splitlines():
        m = re.match(r"^\s*(\S+)\s+(\S+)\s+" + place, line)
        if not m or m.group(1) == ".":
            continue
        number = re.match(r"[\d.]+", m.group(1))
        if number and float(number.group(0)) > best_value:
            best, best_value = m.group(3), float(number.group(0))
    return best


class BrowserCase(unittest.TestCase):
    """One server and one browser per class; console errors fail the test that made them."""

    server_args = []
    allowed_console = ()  # regexes of SEVERE console messages a test provokes on purpose

    @classmethod
    def setUpClass(cls):
        os.makedirs(SCREENSHOTS, exist_ok=True)
        cls.server = Server(cls.server_args)
        try:
            cls.driver = make_browser()
        except Exception:
            cls.server.stop()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.driver.quit()
        cls.server.stop()
        # A sanitizer's report (CI's ASan+UBSan run) fails the class even when the pages worked.
        stderr = "".join(cls.server.stderr)
        if re.search(r"ERROR: AddressSanitizer|runtime error:|LeakSanitizer", stderr):
            raise AssertionError("tally serve: a sanitizer reported:\n" + stderr[-4000:])

    def setUp(self):
        self.allowed_console = ()
        self.driver.get_log("browser")  # drop what an earlier test left

    def tearDown(self):
        severe = [entry["message"] for entry in self.driver.get_log("browser") if entry["level"] == "SEVERE"
                  and not any(re.search(p, entry["message"]) for p in self.allowed_console)]
        self.assertEqual(severe, [], "errors in the browser console")

    # Helpers
    def open(self, path):
        self.driver.get(self.server.url + path)
        return self.wait_ready()

    def wait_ready(self, states=("ready",)):
        view = self.driver.find_element(By.ID, "view")
        try:
            WebDriverWait(self.driver, WAIT).until(lambda d: view.get_attribute("data-state") in ("ready", "error"))
        except TimeoutException:
            self.fail("the view did not finish loading: " + view.text[:300])
        state = view.get_attribute("data-state")
        if state not in states:
            self.fail("the view's state is %s, error shown: %r" % (state, self.driver.find_element(By.ID, "error").text))
        return view

    def wait_for(self, condition, what):
        try:
            return WebDriverWait(self.driver, WAIT).until(condition)
        except TimeoutException:
            self.fail("timed out waiting for " + what)

    def screenshot(self, name):
        self.driver.save_screenshot(os.path.join(SCREENSHOTS, name + ".png"))

    def canvas(self):
        return self.driver.find_element(By.ID, "flame-canvas")

    def table_rows(self, table_id):
        """Each body row of a table as {column key: cell text}, in page order."""
        return self.driver.execute_script(
            "return Array.from(document.querySelectorAll('#' + arguments[0] + ' tbody tr')).map(function (tr) {"
            "  var row = {className: tr.className};"
            "  tr.querySelectorAll('td').forEach(function (td) {"
            "    row[td.dataset.key] = td.dataset.key === 'name' ? td.querySelector('.fn').textContent : td.textContent;"
            "    if (td.dataset.value !== undefined) row[td.dataset.key + '_value'] = Number(td.dataset.value); });"
            "  return row; });", table_id)

    def all_table_rows(self, table_id):
        """table_rows after "show all" (a table draws its first 2000 rows; a database made on
        a busy machine holds more functions than that)."""
        more = self.driver.execute_script(
            "var b = document.querySelector('#' + arguments[0]).closest('.table-wrap').querySelector('button.more');"
            "return b && !b.hidden ? b : null;", table_id)
        if more is not None:
            more.click()
            self.wait_for(lambda d: not more.is_displayed(), "all rows of " + table_id)
        return self.table_rows(table_id)

    def click_frame(self, name):
        box = self.driver.execute_script("return window.tally.flame.findFrame(arguments[0]);", name)
        self.assertIsNotNone(box, "no drawn frame named " + name)
        canvas = self.canvas()
        size = canvas.size
        # Offsets are from the canvas's centre in Selenium 4.
        ActionChains(self.driver).move_to_element_with_offset(
            canvas, int(box["x"] + min(box["w"] / 2, 20) - size["width"] / 2),
            int(box["y"] + 8 - size["height"] / 2)).click().perform()
        return box


class SingleProfileTest(BrowserCase):
    """One pprof profile of the split workload (func_a 40%, func_b 30%, func_c 20%, func_d 10%)."""

    profile = "gperf/split.pb.gz"
    server_args = ["--binary-path", "bin", "--source-path", "../peers/workloads", profile]

    def test_numbers_round_like_tallys_text_reports(self):
        # toFixed rounds an exact tie up (40.625 -> 40.63); printf and fmt, which print
        # tally's text reports, round it to the even digit (40.62). Python's % formatting
        # rounds as glibc does, so it is the reference here.
        self.open("/top")
        values = [k / 8 for k in range(-20, 900)] + [k / 64 for k in range(0, 200)] + [k / 1000 for k in range(0, 1200)]
        values += [40.625, 9.995, 99.995, 0.0995, 0.00995, 1e-5, 1.5e-5, 0.000125, 0.125, 123456.785, 2.5, 0.5, 1e-7]
        values += [(i * 7919 % 100003) / 997.0 for i in range(1, 600)]
        got = self.driver.execute_script(
            "var T = window.tally; return arguments[0].map(function (x) {"
            "  return [T.fixed(x, 2), T.fixed(x, 1), T.fixed(x, 0), T.general(Math.abs(x), 2), T.general(x, 3)]; });", values)
        for x, row in zip(values, got):
            self.assertEqual(row, ["%.2f" % x, "%.1f" % x, "%.0f" % x, "%.2g" % abs(x), "%.3g" % x], x)
        self.assertEqual(self.driver.execute_script("return window.tally.tallyPct(40.625);"), "40.62%")

    def test_flame_graph_zooms_on_click_and_back_undoes_it(self):
        self.open("/")
        canvas = self.wait_for(lambda d: d.find_element(By.CSS_SELECTOR, "#flame-canvas[data-ready='1']"), "the flame graph")
        width = float(canvas.get_attribute("data-width"))
        self.assertEqual(canvas.get_attribute("data-zoom-name"), "root")
        self.screenshot("flame")
        # func_b starts right of func_a under run_rounds, so zooming must move it to x = 0.
        before = self.click_frame("func_b")
        self.assertGreater(before["x"], 1)
        self.assertLess(before["w"], width * 0.5)
        self.wait_for(lambda d: self.canvas().get_attribute("data-zoom-name") == "func_b", "the zoom on func_b")
        canvas = self.canvas()
        self.assertAlmostEqual(float(canvas.get_attribute("data-zoom-x")), 0, delta=0.01)
        self.assertAlmostEqual(float(canvas.get_attribute("data-zoom-width")), width, delta=0.01)
        after = self.driver.execute_script("return window.tally.flame.findFrame('func_b');")
        self.assertAlmostEqual(after["w"], width, delta=0.01)
        # The zoom is in the URL: a link to it, and back goes to the whole graph.
        self.assertIn("z=", self.driver.current_url)
        self.screenshot("flame-zoomed")
        zoomed_url = self.driver.current_url
        self.driver.back()
        self.wait_for(lambda d: d.find_element(By.CSS_SELECTOR, "#flame-canvas[data-ready='1']").get_attribute("data-zoom-name") == "root",
                      "back to the unzoomed graph")
        self.driver.get(zoomed_url)
        self.wait_ready()
        self.wait_for(lambda d: d.find_element(By.CSS_SELECTOR, "#flame-canvas[data-ready='1']").get_attribute("data-zoom-name") == "func_b",
                      "the zoom restored from the URL")

    def test_search_shows_the_matched_share_of_the_total(self):
        self.open("/flame")
        self.wait_for(lambda d: d.find_element(By.CSS_SELECTOR, "#flame-canvas[data-ready='1']"), "the flame graph")
        flame = self.server.api("/api/flame")
        pattern = "func_[ab]|run_rounds"
        expected = matched_share(flame, pattern)
        # run_rounds holds func_a and func_b: the share counts each sample once, so it is
        # run_rounds' share, not the sum of the three.
        self.assertLess(expected, 100.0 + 1e-9)
        box = self.driver.find_element(By.ID, "flame-search")
        box.send_keys(pattern)
        matched = self.wait_for(lambda d: re.search(r"Matched: ([\d.]+)%", d.find_element(By.ID, "flame-matched").text),
                                "the matched share")
        self.assertEqual(matched.group(1), "%.2f" % expected)
        self.assertAlmostEqual(float(self.canvas().get_attribute("data-matched-pct")), expected, places=6)
        # A narrower search: func_a alone.
        box.clear()
        box.send_keys("^func_a$")
        self.wait_for(lambda d: ("Matched: %.2f%%" % matched_share(flame, "^func_a$")) in d.find_element(By.ID, "flame-matched").text,
                      "the share of func_a")
        self.assertIn("s=%5Efunc_a%24", self.driver.current_url)
        self.screenshot("flame-search")

    def test_hover_shows_name_self_total_and_share(self):
        self.open("/flame")
        self.wait_for(lambda d: d.find_element(By.CSS_SELECTOR, "#flame-canvas[data-ready='1']"), "the flame graph")
        top = {row["name"]: row for row in self.server.api("/api/top")["rows"]}
        self.wait_for(lambda d: d.execute_script("return !!window.tally.flame.options.topRows;"), "/api/top's rows for the tooltip")
        box = self.driver.execute_script("return window.tally.flame.findFrame('func_a');")
        canvas = self.canvas()
        ActionChains(self.driver).move_to_element_with_offset(
            canvas, int(box["x"] + box["w"] / 2 - canvas.size["width"] / 2), int(box["y"] + 8 - canvas.size["height"] / 2)).perform()
        tip = self.wait_for(lambda d: d.find_element(By.ID, "flame-tip") if d.find_element(By.ID, "flame-tip").is_displayed() else None,
                            "the tooltip")
        text = tip.text
        self.assertIn("func_a", text)
        self.assertIn("self", text)
        self.assertIn("total", text)
        self.assertIn("%.2f%%" % top["func_a"]["flat_pct"], text)
        self.assertIn("±", text)
        self.screenshot("flame-hover")
        # The frame's menu opens it in the other views, with f=^func_a$.
        ActionChains(self.driver).context_click().perform()
        menu = self.driver.find_element(By.ID, "flame-menu")
        self.assertTrue(menu.is_displayed())
        link = menu.find_element(By.CSS_SELECTOR, "a.disasm-link")
        self.assertIn("f=%5Efunc_a%24", link.get_attribute("href"))
        link.click()
        self.wait_ready()
        self.assertTrue(self.driver.current_url.startswith(self.server.url + "/disasm?"))
        self.assertEqual(self.driver.find_element(By.CSS_SELECTOR, "section.routine h3").text.split()[0], "func_a")

    def test_icicle_toggle_puts_the_root_on_top_and_keys_open_views(self):
        self.open("/flame")
        self.wait_for(lambda d: d.find_element(By.CSS_SELECTOR, "#flame-canvas[data-ready='1']"), "the flame graph")
        flame = self.driver.execute_script("return [window.tally.flame.findFrame('root'), window.tally.flame.findFrame('func_a')];")
        self.assertGreater(flame[0]["y"], flame[1]["y"])  # flame: the root at the bottom
        self.driver.find_element(By.ID, "flame-icicle").click()
        self.wait_for(lambda d: self.canvas().get_attribute("data-icicle") == "1", "the icicle layout")
        icicle = self.driver.execute_script("return [window.tally.flame.findFrame('root'), window.tally.flame.findFrame('func_a')];")
        self.assertEqual(icicle[0]["y"], 0)
        self.assertGreater(icicle[1]["y"], icicle[0]["y"])
        self.assertIn("icicle=1", self.driver.current_url)
        self.screenshot("flame-icicle")
        # "s" over a frame opens its source.
        canvas = self.canvas()
        box = icicle[1]
        ActionChains(self.driver).move_to_element_with_offset(
            canvas, int(box["x"] + box["w"] / 2 - canvas.size["width"] / 2), int(box["y"] + 8 - canvas.size["height"] / 2)).send_keys("s").perform()
        self.wait_for(lambda d: "/source?" in d.current_url, "the source view")
        self.wait_ready()
        self.assertEqual(self.driver.find_element(By.ID, "function-regex").get_attribute("value"), "^func_a$")

    def test_top_sorts_and_matches_tally_top(self):
        cli = top_rows(run_tally("top", "--binary-path", "bin", self.profile))
        self.assertGreaterEqual(len(cli), 5)
        self.open("/top")
        rows = self.table_rows("top-table")
        self.screenshot("top")
        # The same rows, in the same order (flat first) and with the same figures as tally top.
        self.assertEqual([r["name"] for r in rows], [r["name"] for r in cli])
        for page, want in zip(rows, cli):
            self.assertEqual((page["flat_pct"], page["cum_pct"], page["flat_pm"]),
                             (want["flat_pct"].strip(), want["cum_pct"].strip(), want["pm"]), page["name"])
        # Sort by cum, ascending then descending, with a click on the header each.
        self.driver.find_element(By.CSS_SELECTOR, "#top-table th[data-key='cum']").click()
        self.wait_ready()
        descending = self.table_rows("top-table")
        values = [r["cum_value"] for r in descending]
        self.assertEqual(values, sorted(values, reverse=True))
        self.assertIn("sort=cum", self.driver.current_url)
        self.driver.find_element(By.CSS_SELECTOR, "#top-table th[data-key='cum']").click()
        self.wait_for(lambda d: "order=asc" in d.current_url, "the ascending sort")
        self.wait_ready()
        ascending = self.table_rows("top-table")
        self.assertEqual([r["cum_value"] for r in ascending], sorted(values))
        by_name = {r["name"]: r for r in cli}
        for page in ascending:
            self.assertEqual(page["cum_pct"], by_name[page["name"]]["cum_pct"].strip())
        self.screenshot("top-sorted")
        # Sort by name; then back restores the cum order.
        self.driver.find_element(By.CSS_SELECTOR, "#top-table th[data-key='name']").click()
        self.wait_for(lambda d: "sort=name" in d.current_url, "the name sort")
        self.wait_ready()
        names = [r["name"] for r in self.table_rows("top-table")]
        self.assertEqual(sorted(names), sorted(by_name))
        self.driver.back()
        self.wait_for(lambda d: "order=asc" in d.current_url and "sort=cum" in d.current_url, "back to the cum sort")
        self.wait_ready()
        self.assertEqual([r["cum_value"] for r in self.table_rows("top-table")], sorted(values))
        # The filter box keeps the matching rows only.
        self.driver.find_element(By.ID, "filter").send_keys("func_[cd]")
        self.wait_for(lambda d: len(self.table_rows("top-table")) == 2, "the filtered rows")
        self.assertEqual(sorted(r["name"] for r in self.table_rows("top-table")), ["func_c", "func_d"])

    def hottest(self):
        return self.server.api("/api/top")["rows"][0]["name"]

    def test_source_of_the_hottest_function_marks_its_hot_line(self):
        name = self.hottest()
        self.assertEqual(name, "func_a")
        self.open("/source?f=" + urllib.parse.quote("^%s$" % name))
        self.screenshot("source")
        hot = self.driver.find_elements(By.CSS_SELECTOR, "table.source tr.hot")
        self.assertGreater(len(hot), 0)
        hottest = max(hot, key=lambda tr: float(tr.get_attribute("data-share")))
        # tally list names the same hottest line; its source text is func_a's definition.
        listing = run_tally("list", "--source-path", "../peers/workloads", "^%s$" % name, self.profile)
        self.assertEqual(hottest.get_attribute("data-line"), hottest_in_listing(listing, r"(\d+):"), listing)
        self.assertIn("func_a", hottest.find_element(By.CSS_SELECTOR, "td.code").text)
        cold = self.driver.find_elements(By.CSS_SELECTOR, "table.source tbody tr:not(.hot)")
        self.assertGreater(len(cold), 0)

    def test_disasm_of_the_hottest_function_marks_its_hot_instruction(self):
        name = self.hottest()
        self.open("/disasm?f=" + urllib.parse.quote("^%s$" % name))
        self.screenshot("disasm")
        hot = self.driver.find_elements(By.CSS_SELECTOR, "table.disasm tr.hot")
        self.assertGreater(len(hot), 0)
        hottest = max(hot, key=lambda tr: float(tr.get_attribute("data-share")))
        # tally disasm: the address with the largest flat.
        text = run_tally("disasm", "--binary-path", "bin", "^%s$" % name, self.profile)
        self.assertEqual(int(hottest.get_attribute("data-address"), 16), int(hottest_in_listing(text, r"([0-9a-f]+):"), 16), text)
        self.assertGreater(len(self.driver.find_elements(By.CSS_SELECTOR, "table.disasm tbody tr:not(.hot)")), 0)

    def test_peek_shows_callers_and_callees(self):
        self.open("/peek?f=" + urllib.parse.quote("^run_rounds$"))
        self.screenshot("peek")
        callers = [e.text for e in self.driver.find_elements(By.CSS_SELECTOR, "table.peek tr.caller a")]
        callees = [e.text for e in self.driver.find_elements(By.CSS_SELECTOR, "table.peek tr.callee a")]
        self.assertEqual(callers, ["main"])
        self.assertEqual(sorted(callees), ["func_a", "func_b", "func_c", "func_d"])
        # An edge is a link to the peek of that function.
        self.driver.find_element(By.LINK_TEXT, "main").click()
        self.wait_ready()
        self.assertEqual(self.driver.find_element(By.CSS_SELECTOR, "table.peek tr.self b").text, "main")

    def test_nav_links_keep_the_filters_and_back_works(self):
        self.open("/top?focus=func_a")
        names = [r["name"] for r in self.table_rows("top-table")]
        self.assertIn("func_a", names)
        self.assertNotIn("func_b", names)
        self.assertEqual(self.driver.find_element(By.NAME, "focus").get_attribute("value"), "func_a")
        self.driver.find_element(By.CSS_SELECTOR, "#nav a[data-view='flame']").click()
        self.wait_for(lambda d: d.find_element(By.CSS_SELECTOR, "#flame-canvas[data-ready='1']"), "the flame graph")
        self.assertIn("/flame?focus=func_a", self.driver.current_url)
        self.assertIsNone(self.driver.execute_script("return window.tally.flame.findFrame('func_b');"))
        self.driver.back()
        self.wait_for(lambda d: "/top" in d.current_url, "back to /top")
        self.wait_ready()
        self.assertIn("func_a", [r["name"] for r in self.table_rows("top-table")])

    def test_sample_type_choice_applies_to_the_views(self):
        cli = {r["name"]: r for r in top_rows(run_tally("top", "--sample-index", "samples", self.profile))}
        self.open("/top")
        select = self.driver.find_element(By.NAME, "si")
        options = [o.text for o in select.find_elements(By.TAG_NAME, "option")]
        self.assertTrue(any(o.startswith("samples") for o in options), options)
        for option in select.find_elements(By.TAG_NAME, "option"):
            if option.text.startswith("samples"):
                option.click()
        self.wait_for(lambda d: "si=samples" in d.current_url, "si=samples in the URL")
        self.wait_ready()
        rows = {r["name"]: r for r in self.table_rows("top-table")}
        # Counts, as tally top --sample-index samples prints them.
        self.assertEqual(rows["func_a"]["flat"], cli["func_a"]["flat"])
        self.assertEqual(rows["func_a"]["flat_value"], int(cli["func_a"]["flat"]))
        self.driver.find_element(By.CSS_SELECTOR, "#nav a[data-view='flame']").click()
        self.wait_for(lambda d: d.find_element(By.CSS_SELECTOR, "#flame-canvas[data-ready='1']"), "the flame graph")
        self.assertIn("si=samples", self.driver.current_url)
        self.assertEqual(self.driver.execute_script("return window.tally.flame.data.unit;"), "count")

    def test_a_bad_query_shows_the_servers_error_on_the_page(self):
        # The 400 is expected: the browser logs the failed request, nothing else may fail.
        self.allowed_console = (r"/api/\w+\?focus=%28%28 - Failed to load resource: the server responded with a status of 400",)
        self.driver.get(self.server.url + "/top?focus=((")
        self.wait_ready(states=("error",))
        error = self.driver.find_element(By.ID, "error")
        self.assertTrue(error.is_displayed())
        self.assertIn("focus", error.text)
        self.screenshot("error")


class LabelFilterTest(BrowserCase):
    """A perf script written here whose samples carry comm, pid, tid and cpu labels: alpha
    (pid 100; thread 100 runs func_a 5 times, thread 101 func_b 3 times) and beta (pid 200:
    func_a 2, func_c 4 times). The Refine bar's label filters apply to every view."""

    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.mkdtemp(prefix="tally-web-labels-")
        cls.script = os.path.join(cls.folder, "labels.perf-script.txt")
        runs = [("alpha", 100, 100, 0, "func_a", 5), ("alpha", 100, 101, 1, "func_b", 3),
                ("beta", 200, 200, 2, "func_a", 2), ("beta", 200, 200, 2, "func_c", 4)]
        n = 0
        with open(cls.script, "w") as out:
            for comm, pid, tid, cpu, function, count in runs:
                for _ in range(count):
                    out.write("%s %d/%d [%03d] 1.%d:    1000000 cpu-clock: \n"
                              "\t            1674 %s+0x4 (/nonexistent/app)\n"
                              "\t            153c main+0x3dc (/nonexistent/app)\n\n"
                              % (comm, pid, tid, cpu, 100 + n, function))
                    n += 1
        cls.server_args = [cls.script]
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.folder, ignore_errors=True)

    def apply_label_filter(self, field, text, url_part):
        box = self.driver.find_element(By.NAME, field)
        box.clear()
        box.send_keys(text)
        self.driver.find_element(By.CSS_SELECTOR, "#refine button[type='submit']").click()
        self.wait_for(lambda d: url_part in d.current_url, url_part + " in the URL")
        return self.wait_ready()

    def test_label_filters_apply_to_top_and_the_flame_graph(self):
        self.open("/top")
        self.assertEqual({r["name"] for r in self.table_rows("top-table")}, {"main", "func_a", "func_b", "func_c"})
        # The label keys of the profile are offered.
        keys = self.driver.execute_script(
            "return Array.from(document.querySelectorAll('#label-keys option')).map(function (o) { return o.value; });")
        self.assertEqual(keys, ["comm=", "cpu=", "pid=", "tid="])
        self.apply_label_filter("label_focus", "pid=100", "label_focus=pid%3D100")
        self.screenshot("top-label-focus")
        rows = {r["name"]: r for r in self.table_rows("top-table")}
        cli = {r["name"]: r for r in top_rows(run_tally("top", "--label-focus", "pid=100", self.script))}
        self.assertEqual(set(rows), set(cli))
        self.assertEqual(set(rows), {"main", "func_a", "func_b"})
        for name, row in rows.items():
            self.assertEqual((row["flat"], row["cum"]), (cli[name]["flat"], cli[name]["cum"]), name)
        self.assertEqual(rows["func_a"]["flat_value"], 5e6)  # thread 100's 5 samples only
        # The flame graph keeps the filter (nav links carry it) and draws the kept samples only.
        self.driver.find_element(By.CSS_SELECTOR, "#nav a[data-view='flame']").click()
        self.wait_for(lambda d: d.find_element(By.CSS_SELECTOR, "#flame-canvas[data-ready='1']"), "the flame graph")
        self.assertIn("label_focus=pid%3D100", self.driver.current_url)
        self.assertIsNone(self.driver.execute_script("return window.tally.flame.findFrame('func_c');"))
        self.assertIsNotNone(self.driver.execute_script("return window.tally.flame.findFrame('func_b');"))
        self.assertEqual(self.driver.execute_script("return window.tally.flame.data.total;"), 8e6)
        # An ignore filter beside it: thread 101 goes, with func_b.
        self.assertEqual(self.driver.find_element(By.NAME, "label_focus").get_attribute("value"), "pid=100")
        self.apply_label_filter("label_ignore", "tid=101", "label_ignore=tid%3D101")
        self.wait_for(lambda d: d.find_element(By.CSS_SELECTOR, "#flame-canvas[data-ready='1']"), "the flame graph")
        self.screenshot("flame-label-filters")
        self.assertIsNone(self.driver.execute_script("return window.tally.flame.findFrame('func_b');"))
        self.assertEqual(self.driver.execute_script("return window.tally.flame.data.total;"), 5e6)
        # Two focus filters in one box, separated by a space: both must match.
        self.apply_label_filter("label_focus", "comm=beta cpu=2", "label_focus=cpu%3D2")
        self.assertIn("label_focus=comm%3Dbeta", self.driver.current_url)
        self.wait_for(lambda d: d.find_element(By.CSS_SELECTOR, "#flame-canvas[data-ready='1']"), "the flame graph")
        self.assertEqual(self.driver.execute_script("return window.tally.flame.data.total;"), 6e6)


class CompareTest(BrowserCase):
    """Two folded profiles written here: func_a doubles, func_c shrinks, func_b keeps its share
    exactly, func_d disappears."""

    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.mkdtemp(prefix="tally-web-compare-")
        cls.base = os.path.join(cls.folder, "base.folded")
        cls.new = os.path.join(cls.folder, "new.folded")
        with open(cls.base, "w") as out:
            out.write("main;run_rounds;func_a 200\nmain;run_rounds;func_b 300\nmain;run_rounds;func_c 400\nmain;run_rounds;func_d 100\n")
        with open(cls.new, "w") as out:
            out.write("main;run_rounds;func_a 400\nmain;run_rounds;func_b 300\nmain;run_rounds;func_c 300\n")
        cls.server_args = [cls.base, cls.new]
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.folder, ignore_errors=True)

    def significant_in_cli(self):
        """The functions tally diff marks significant (*)."""
        marked = set()
        for line in run_tally("diff", self.base, self.new, cwd=self.folder).splitlines():
            fields = line.split()
            if " * " in " " + line + " " and fields:
                marked.add(fields[-1])
        return marked

    def test_diff_marks_the_changed_functions_only(self):
        marked = self.significant_in_cli()
        self.assertIn("func_a", marked)
        self.assertNotIn("func_b", marked)
        self.open("/diff")
        self.screenshot("diff")
        rows = {r["name"]: r for r in self.table_rows("diff-table")}
        self.assertIn("changed", rows["func_a"]["className"].split())
        self.assertIn("up", rows["func_a"]["className"].split())
        self.assertIn("changed", rows["func_c"]["className"].split())
        self.assertIn("down", rows["func_c"]["className"].split())
        self.assertNotIn("changed", rows["func_b"]["className"].split())
        # The page marks what tally diff marks.
        for name, row in rows.items():
            self.assertEqual("changed" in row["className"].split(), name in marked, name)
        removed = [li.text for li in self.driver.find_elements(By.CSS_SELECTOR, "#removed li")]
        self.assertEqual(len(removed), 1)
        self.assertTrue(removed[0].startswith("func_d"))

    def test_differential_flame_graph_colours_only_significant_changes(self):
        self.open("/flame")
        self.wait_for(lambda d: d.find_element(By.CSS_SELECTOR, "#flame-canvas[data-ready='1']"), "the flame graph")
        self.screenshot("flame-diff")
        colours = self.driver.execute_script(
            "var f = window.tally.flame, out = {};"
            "['func_a', 'func_b', 'func_c'].forEach(function (n) { out[n] = f.colourOf(f.findFrame(n).index); });"
            "return out;")
        self.assertTrue(colours["func_a"].startswith("rgb(255,"), colours)  # more: red
        self.assertTrue(colours["func_c"].endswith(",255)"), colours)  # less: blue
        self.assertEqual(colours["func_b"], "#d9d9d0")  # unchanged: grey
        # The base side is a plain flame graph of the base profile, with func_d in it.
        self.open("/flame?side=base")
        self.wait_for(lambda d: d.find_element(By.CSS_SELECTOR, "#flame-canvas[data-ready='1']"), "the base flame graph")
        self.assertIsNotNone(self.driver.execute_script("return window.tally.flame.findFrame('func_d');"))


class LargeProfileTest(BrowserCase):
    """200,000 unique stacks (folded, written here): the graph draws only what is wide enough,
    merging the rest, and zooms."""

    @classmethod
    def setUpClass(cls):
        import random
        cls.folder = tempfile.mkdtemp(prefix="tally-web-large-")
        path = os.path.join(cls.folder, "large.folded")
        chooser = random.Random(19)
        functions = ["fn_%d" % i for i in range(2000)]
        seen = set()
        with open(path, "w") as out:
            while len(seen) < 200000:
                stack = ["main", "work"] + [chooser.choice(functions[:30] if chooser.random() < 0.8 else functions)
                                            for _ in range(chooser.randint(3, 40))]
                line = ";".join(stack)
                if line not in seen:
                    seen.add(line)
                    out.write("%s %d\n" % (line, chooser.randint(1, 20)))
        cls.server_args = [path]
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.folder, ignore_errors=True)

    def test_large_flame_graph_draws_the_visible_frames_and_zooms(self):
        self.open("/flame")
        canvas = self.wait_for(lambda d: d.find_element(By.CSS_SELECTOR, "#flame-canvas[data-ready='1']"), "the flame graph")
        flame = self.server.api("/api/flame")
        nodes = len(flame["nodes"]["name"])
        drawn, merged = int(canvas.get_attribute("data-drawn")), int(canvas.get_attribute("data-merged"))
        # Every frame is drawn or merged into a block; a 1300 px canvas cannot show them all.
        self.assertEqual(drawn + merged, nodes)
        self.assertLess(drawn, nodes / 4)
        self.screenshot("flame-large")
        # Zoom into the widest frame at depth 3: it spans the canvas, and its subtree shows.
        names = flame["names"]
        depth3 = [i for i, d in enumerate(flame["nodes"]["depth"]) if d == 3]
        widest = max(depth3, key=lambda i: flame["nodes"]["total"][i])
        self.driver.execute_script("window.tally.flame.zoomTo(arguments[0], true);", widest)
        canvas = self.canvas()
        self.assertEqual(canvas.get_attribute("data-zoom-name"), names[flame["nodes"]["name"][widest]])
        self.assertAlmostEqual(float(canvas.get_attribute("data-zoom-width")), float(canvas.get_attribute("data-width")), delta=0.01)
        self.assertIn("z=%d" % widest, self.driver.current_url)
        self.screenshot("flame-large-zoomed")


class DatabaseTest(BrowserCase):
    """A database made here by a real `tally daemon` (root, as CI runs): an epoch with the
    split workload, then an epoch with the shlib workload."""

    @classmethod
    def setUpClass(cls):
        cls.folder = tempfile.mkdtemp(prefix="tally-web-db-")
        cls.db = os.path.join(cls.folder, "db")
        cls.split = os.path.realpath(os.path.join(FIXTURES, "bin/split"))
        daemon = subprocess.Popen([TALLY, "daemon", "--db", cls.db, "-F", "499", "--flush", "3600",
                                   "--log", os.path.join(cls.folder, "daemon.log")], start_new_session=True)
        try:
            time.sleep(1.0)
            if daemon.poll() is not None:
                with open(os.path.join(cls.folder, "daemon.log")) as log:
                    raise AssertionError("tally daemon exited: " + log.read())
            subprocess.run([cls.split, "-r", "40"], check=True, stdout=subprocess.DEVNULL, timeout=120)
            run_tally("epoch", "--db", cls.db)
            subprocess.run([os.path.join(FIXTURES, "bin/shlib_main"), "-r", "20"], check=True, stdout=subprocess.DEVNULL, timeout=120)
            run_tally("flush", "--db", cls.db)
        finally:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=60)
        cls.epochs = sorted(e for e in os.listdir(cls.db) if re.fullmatch(r"\d{14}", e))
        cls.server_args = ["--db", cls.db]
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.folder, ignore_errors=True)

    def setUp(self):
        if os.geteuid() != 0 and os.environ.get("TALLY_REQUIRE_PEERS") != "1":
            self.skipTest("tally daemon needs root (CI runs as root and sets TALLY_REQUIRE_PEERS=1)")
        super().setUp()

    def test_epochs_images_chart_and_the_choice_applies_to_every_view(self):
        self.assertEqual(len(self.epochs), 2, self.epochs)
        self.open("/db")
        self.screenshot("db")
        epochs = [tr.get_attribute("data-epoch") for tr in self.driver.find_elements(By.CSS_SELECTOR, "#db-epochs tbody tr")]
        self.assertEqual(epochs, self.epochs)
        overview = self.server.api("/api/db")
        images = {tr.get_attribute("data-image"): int(tr.find_element(By.CSS_SELECTOR, "td.num").get_attribute("data-value"))
                  for tr in self.driver.find_elements(By.CSS_SELECTOR, "#db-images tbody tr")}
        self.assertEqual(images, {i["name"]: i["total"] for i in overview["images"]})
        self.assertIn(self.split, images)
        lines = self.driver.find_elements(By.CSS_SELECTOR, "#db-chart polyline")
        self.assertEqual(len(lines), min(5, len(overview["images"])))
        # The first epoch holds the split workload: choose it, then the split image.
        self.driver.find_element(By.CSS_SELECTOR, "#db-epochs tr[data-epoch='%s'] a" % self.epochs[0]).click()
        self.wait_for(lambda d: "epoch=" + self.epochs[0] in d.current_url, "the epoch in the URL")
        self.wait_ready()
        self.driver.find_element(By.CSS_SELECTOR, "#db-images tr[data-image='%s'] a" % self.split).click()
        self.wait_for(lambda d: "image=" in d.current_url, "the image in the URL")
        self.wait_ready()
        self.screenshot("db-chosen")
        self.driver.find_element(By.CSS_SELECTOR, "#nav a[data-view='top']").click()
        self.wait_for(lambda d: "/top" in d.current_url, "/top")
        self.wait_ready()
        query = urllib.parse.parse_qs(urllib.parse.urlparse(self.driver.current_url).query)
        self.assertEqual(query["epoch"], [self.epochs[0]])
        rows = {r["name"]: r for r in self.table_rows("top-table")}
        self.screenshot("db-top")
        self.assertIn("func_a", rows)
        cli = {r["name"]: r for r in top_rows(run_tally("top", "--db", self.db, "--epoch", self.epochs[0], "--image", query["image"][0]))}
        self.assertEqual(rows["func_a"]["flat_pct"], cli["func_a"]["flat_pct"].strip())
        self.assertEqual(rows["func_a"]["cum_pct"], cli["func_a"]["cum_pct"].strip())
        # The image's chip in the bar removes that choice and keeps the epoch.
        chip = [c for c in self.driver.find_elements(By.CSS_SELECTOR, "#db-params .chip") if c.text.startswith("image")]
        self.assertEqual(len(chip), 1)
        chip[0].find_element(By.TAG_NAME, "button").click()
        self.wait_for(lambda d: "image=" not in d.current_url, "the image choice removed")
        self.wait_ready()
        self.assertIn("epoch=" + self.epochs[0], self.driver.current_url)
        self.assertTrue(self.driver.current_url.startswith(self.server.url + "/top?"))
        # The second epoch has no split samples: choosing it there shows shlib's functions.
        self.open("/top?epoch=" + self.epochs[1])
        names = [r["name"] for r in self.table_rows("top-table")]
        self.assertIn("lib_hot", names)

    def diff_marks(self, *args):
        """`tally diff`'s rows: (marked names, unmarked names). Each row has eight number
        columns, then "* " when marked, then the name (which may hold spaces)."""
        cli = run_tally("diff", *args)
        marked, unmarked = set(), set()
        header = False
        for line in cli.splitlines():
            if line.split()[:1] == ["base%"]:
                header = True
            elif header and line.strip():
                rest = re.match(r"^(?:\s*\S+){8}\s+(.*)$", line).group(1)
                (marked.add(rest[2:]) if rest.startswith("* ") else unmarked.add(rest))
        return marked, unmarked

    def test_a_base_range_compared_with_an_epoch(self):
        first, second = self.epochs
        self.open("/db")
        Select(self.driver.find_element(By.ID, "db-compare-base")).select_by_value(first)
        Select(self.driver.find_element(By.ID, "db-compare-base-to")).select_by_value(second)
        Select(self.driver.find_element(By.ID, "db-compare-new")).select_by_value(second)
        self.driver.find_element(By.ID, "db-compare").click()
        self.wait_for(lambda d: "/diff?" in d.current_url, "the comparison page")
        self.wait_ready()
        self.screenshot("db-diff-base-range")
        query = urllib.parse.parse_qs(urllib.parse.urlparse(self.driver.current_url).query)
        self.assertEqual((query["base_epoch"], query["base_epoch_to"], query["epoch"]), ([first], [second], [second]))
        self.assertNotIn("epoch_to", query)
        self.assertIn(first + " … " + second, self.driver.find_element(By.ID, "diff-epochs").text)
        # The base is both epochs: what `tally diff --db` reads for the two epochs' common
        # name prefix (the database holds only these two).
        prefix = os.path.commonprefix([first, second])
        marked, unmarked = self.diff_marks("--db", self.db, prefix, second)
        rows = {r["name"]: r for r in self.all_table_rows("diff-table")}
        self.assertEqual(set(rows), marked | unmarked)
        for name in marked:
            self.assertIn("changed", rows[name]["className"].split(), name)
        # split's functions ran in the base range only: removed in the new epoch.
        self.assertEqual(rows["func_a"]["new_value"], 0)
        self.assertGreater(rows["func_a"]["base_value"], 0)

    def test_two_epochs_compared_and_a_range_chosen_on_the_db_page(self):
        base, new = self.epochs
        self.open("/db")
        Select(self.driver.find_element(By.ID, "db-compare-base")).select_by_value(base)
        Select(self.driver.find_element(By.ID, "db-compare-new")).select_by_value(new)
        self.driver.find_element(By.ID, "db-compare").click()
        self.wait_for(lambda d: "/diff?" in d.current_url, "the comparison page")
        self.wait_ready()
        self.screenshot("db-diff")
        query = urllib.parse.parse_qs(urllib.parse.urlparse(self.driver.current_url).query)
        self.assertEqual((query["base_epoch"], query["epoch"]), ([base], [new]))
        # The first epoch ran split only, the second shlib_main: func_a went away, lib_hot came.
        marked, unmarked = self.diff_marks("--db", self.db, base, new)
        self.assertIn("func_a", marked)
        self.assertIn("lib_hot", marked)
        rows = {r["name"]: r for r in self.all_table_rows("diff-table")}
        self.assertEqual(set(rows), marked | unmarked)
        for name in marked:
            self.assertIn("changed", rows[name]["className"].split(), name)
        # Unmarked and on both sides (status "same"): not marked on the page either.
        same = [n for n in unmarked if rows[n]["status"] == "same"]
        self.assertTrue(same, sorted(unmarked))
        for name in same:
            self.assertNotIn("changed", rows[name]["className"].split(), name)
        self.assertIn("up", rows["lib_hot"]["className"].split())
        removed = [li.text.split()[0] for li in self.driver.find_elements(By.CSS_SELECTOR, "#removed li")]
        self.assertIn("func_a", removed)
        # The differential flame graph of the two epochs: lib_hot grew (red).
        self.driver.find_element(By.CSS_SELECTOR, "#nav a[data-view='flame']").click()
        self.wait_for(lambda d: d.find_element(By.CSS_SELECTOR, "#flame-canvas[data-ready='1']"), "the flame graph")
        self.assertIn("base_epoch=" + base, self.driver.current_url)
        self.screenshot("db-flame-diff")
        colour = self.driver.execute_script(
            "var f = window.tally.flame; return f.colourOf(f.findFrame('lib_hot').index);")
        self.assertTrue(colour.startswith("rgb(255,"), colour)
        # A range: the first epoch through the second is both workloads, as tally top reads it.
        self.open("/db?epoch=" + base)
        Select(self.driver.find_element(By.ID, "db-epoch-to")).select_by_value(new)
        self.wait_for(lambda d: "epoch_to=" + new in d.current_url, "the range in the URL")
        self.wait_ready()
        self.screenshot("db-range")
        chosen = [tr.get_attribute("data-epoch") for tr in self.driver.find_elements(By.CSS_SELECTOR, "#db-epochs tr.chosen")]
        self.assertEqual(chosen, self.epochs)
        self.driver.find_element(By.CSS_SELECTOR, "#nav a[data-view='top']").click()
        self.wait_for(lambda d: "/top" in d.current_url, "/top")
        self.wait_ready()
        self.assertIn("epoch_to=" + new, self.driver.current_url)
        rows = {r["name"]: r for r in self.table_rows("top-table")}
        self.screenshot("db-range-top")
        cli = {r["name"]: r for r in top_rows(run_tally("top", "--db", self.db, "--epoch", base, "--epoch-to", new))}
        for name in ("func_a", "lib_hot"):
            self.assertEqual(rows[name]["flat_pct"], cli[name]["flat_pct"].strip(), name)


if __name__ == "__main__":
    unittest.main(verbosity=2)
