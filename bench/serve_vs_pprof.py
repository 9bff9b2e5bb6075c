#!/usr/bin/python3
"""serve_vs_pprof.py [PROFILE...]: `tally serve` against `pprof -http`, each profile in turn.

For each tool, RUNS times (default 3), alternated: start the server on a free loopback
port and time, from the start,
  - tally: the URL printed (profile read and symbolized), then GET /api/top and GET
    /api/flame (each timed on its own, cold), and the flame graph's data answered;
  - pprof: GET /ui/flamegraph answered 200 (pprof reads and symbolizes before it listens,
    then renders the page server-side).
Then, in headless Chromium (Debian's chromium, chromium-driver, python3-selenium; skipped
when missing), on the running server, from the page's request (navigation start):
  - tally: /top's rows in the page and painted; /flame's first paint (the front end's
    performance marks "tally:VIEW:ready" / "tally:VIEW:painted"); a zoom's redraw: a click's
    zoomTo() until the next animation frame, median of zooms into the widest frame at
    several depths and back;
  - pprof: /ui/flamegraph until its d3 flame graph has drawn its frames (#chart svg rects).
Then the server's peak RSS (wait4's ru_maxrss after SIGTERM: the process and the children it
waited for, e.g. pprof's llvm-symbolizer), after the browser's requests, and `tally top`'s
peak RSS on the same file. Medians are printed; the flame graph's total must equal
/api/top's. Default PROFILEs: ${TALLY_BENCH_DATA:-/tmp/tally-bench}/clang-top.pb.gz
(top_symbolized_vs_pprof.sh makes it: 1M cpu-clock samples of clang++ -O2), and the deep
gperftools profile of clang++ -O2 under libprofiler when it is there
(/tmp/deepgen/clang-libprofiler.prof, else /tmp/deepgen/clang-O2-4000hz.prof).

Environment: TALLY_BUILD (default <repo>/build/release), PPROF (default /opt/peers/pprof), RUNS.
"""
import http.client
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import time

repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
tally = os.path.join(os.environ.get("TALLY_BUILD", os.path.join(repo, "build/release")), "src/cli/tally")
pprof = os.environ.get("PPROF", "/opt/peers/pprof")
runs = int(os.environ.get("RUNS", "3"))
data = os.environ.get("TALLY_BENCH_DATA", "/tmp/tally-bench")
profiles = sys.argv[1:]
if not profiles:
    profiles = [os.path.join(data, "clang-top.pb.gz")]
    for deep in ("/tmp/deepgen/clang-libprofiler.prof", "/tmp/deepgen/clang-O2-4000hz.prof"):
        if os.path.exists(deep):
            profiles.append(deep)
            break
for path in [tally, pprof] + profiles:
    if not os.path.exists(path):
        sys.exit("serve_vs_pprof.py: %s is missing" % path)

try:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    browser_error = None
except ImportError as e:  # the timings without a browser still run
    browser_error = str(e)


def make_browser():
    options = webdriver.ChromeOptions()
    for argument in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1300,900", "--force-device-scale-factor=1", "--no-first-run",
                     "--disable-extensions", "--disable-background-networking"):
        options.add_argument(argument)
    options.binary_location = "/usr/bin/chromium"
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(600)
    driver.set_script_timeout(600)
    return driver


# Resolves with performance.now() (ms since the navigation started) once the mark is there.
WAIT_MARK = """
const name = arguments[0], done = arguments[arguments.length - 1];
(function poll() {
  const m = performance.getEntriesByName(name);
  if (m.length) done(m[0].startTime); else setTimeout(poll, 5);
})();"""

# Zooms into the widest frame at several depths and back to the root, each timed from the
# call to the next animation frame (the redraw is done and handed to the compositor).
ZOOMS = """
const done = arguments[arguments.length - 1], f = window.tally.flame, nodes = f.data.nodes;
const targets = [];
for (const depth of [1, 3, 6, 10, 20, 40, 80]) {
  let best = -1;
  for (let i = 0; i < nodes.depth.length; i++)
    if (nodes.depth[i] === depth && (best < 0 || nodes.total[i] > nodes.total[best])) best = i;
  if (best > 0) targets.push(best, 0);
}
const times = [];
(function next() {
  if (!targets.length) { done(times); return; }
  const i = targets.shift(), t0 = performance.now();
  f.zoomTo(i, true);
  requestAnimationFrame(function () { times.push(performance.now() - t0); setTimeout(next, 20); });
})();"""

# pprof's flame graph page: d3-flame-graph draws one rect per frame into #chart's svg.
WAIT_PPROF_FLAME = """
const done = arguments[arguments.length - 1];
(function poll() {
  if (document.querySelectorAll('#chart svg rect').length > 1) done(performance.now());
  else setTimeout(poll, 5);
})();"""


def browse_tally(driver, port):
    base = "http://127.0.0.1:%d" % port
    driver.get(base + "/top")
    top_ready = driver.execute_async_script(WAIT_MARK, "tally:top:ready")
    top_painted = driver.execute_async_script(WAIT_MARK, "tally:top:painted")
    rows = driver.execute_script("return document.querySelectorAll('#top-table tbody tr').length;")
    assert rows > 0, "no rows on /top"
    driver.get(base + "/flame")
    flame_painted = driver.execute_async_script(WAIT_MARK, "tally:flame:painted")
    zooms = driver.execute_async_script(ZOOMS)
    return {"top_rows_ms": top_ready, "top_painted_ms": top_painted, "flame_paint_ms": flame_painted,
            "zoom_ms": statistics.median(zooms), "zoom_max_ms": max(zooms), "zooms": len(zooms)}


def browse_pprof(driver, port):
    driver.get("http://127.0.0.1:%d/ui/flamegraph" % port)
    return {"flame_shown_ms": driver.execute_async_script(WAIT_PPROF_FLAME)}


def get(port, path, timeout=600):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    conn.request("GET", path)
    response = conn.getresponse()
    body = response.read()
    conn.close()
    return response.status, body


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = status
    return usage.ru_maxrss / 1000.0  # kB -> MB (10^6 bytes, as bench/README)


def run_tally(profile, driver):
    start = time.monotonic()
    proc = subprocess.Popen([tally, "serve", "--no-browser", "--no-debuginfod", "--http",
                             "127.0.0.1:0", profile], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    ready = time.monotonic() - start
    port = int(re.search(r":(\d+)/", line).group(1))
    t = time.monotonic()
    status, top = get(port, "/api/top")
    assert status == 200, top[:200]
    top_time = time.monotonic() - t
    t = time.monotonic()
    status, flame = get(port, "/api/flame")
    assert status == 200, flame[:200]
    flame_time = time.monotonic() - t
    flame_done = time.monotonic() - start
    # A fast wrong answer fails: the flame graph holds the whole profile, top has rows.
    top_json, flame_json = json.loads(top), json.loads(flame)
    assert top_json["rows"] and flame_json["total"] == top_json["total"], "flame and top disagree"
    result = {"ready": ready, "top": top_time, "flame": flame_time, "flame_done": flame_done,
              "flame_bytes": len(flame)}
    if driver:
        result.update(browse_tally(driver, port))
    result["rss"] = stop(proc)
    proc.stdout.close()
    return result


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_pprof(profile, driver):
    port = free_port()
    start = time.monotonic()
    proc = subprocess.Popen([pprof, "-http=127.0.0.1:%d" % port, "-no_browser", profile],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while True:
        try:
            status, body = get(port, "/ui/flamegraph")
            if status == 200:
                break
        except OSError:
            time.sleep(0.05)
        if proc.poll() is not None:
            sys.exit("pprof -http exited")
    flame_done = time.monotonic() - start
    result = {"flame_done": flame_done, "flame_bytes": len(body)}
    if driver:
        result.update(browse_pprof(driver, port))
    result["rss"] = stop(proc)
    return result


def tally_top_rss(profile):
    proc = subprocess.Popen([tally, "top", "--no-debuginfod", profile], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    return usage.ru_maxrss / 1000.0


def med(rows, key):
    return statistics.median(r[key] for r in rows)


def bench(profile, driver):
    load = open("/proc/loadavg").read().split()[:3]
    tally_runs, pprof_runs, top_rss = [], [], []
    for _ in range(runs):
        tally_runs.append(run_tally(profile, driver))
        pprof_runs.append(run_pprof(profile, driver))
        top_rss.append(tally_top_rss(profile))
    print("profile: %s; %d runs each, alternated; load at start %s" % (profile, runs, " ".join(load)))
    print("tally serve: ready (read + symbolized) %.2f s; /api/top %.3f s; /api/flame %.3f s (%d bytes); "
          "flame data answered %.2f s after start; peak RSS %.1f MB"
          % (med(tally_runs, "ready"), med(tally_runs, "top"), med(tally_runs, "flame"),
             med(tally_runs, "flame_bytes"), med(tally_runs, "flame_done"), med(tally_runs, "rss")))
    if driver:
        print("tally serve in Chromium: /top rows in the page %.0f ms, painted %.0f ms after the request; "
              "/flame first paint %.0f ms; zoom redraw median %.1f ms (max %.1f ms, %d zooms)"
              % (med(tally_runs, "top_rows_ms"), med(tally_runs, "top_painted_ms"),
                 med(tally_runs, "flame_paint_ms"), med(tally_runs, "zoom_ms"),
                 max(r["zoom_max_ms"] for r in tally_runs), tally_runs[0]["zooms"]))
    print("pprof -http: /ui/flamegraph answered %.2f s after start (%d bytes); peak RSS %.1f MB"
          % (med(pprof_runs, "flame_done"), med(pprof_runs, "flame_bytes"), med(pprof_runs, "rss")))
    if driver:
        print("pprof -http in Chromium: flame graph drawn %.0f ms after the page's request"
              % med(pprof_runs, "flame_shown_ms"))
    print("tally top: peak RSS %.1f MB; serve / top memory: %.2fx"
          % (statistics.median(top_rss), med(tally_runs, "rss") / statistics.median(top_rss)))
    print("flame graph answered: pprof / tally %.1fx; memory pprof / tally %.1fx"
          % (med(pprof_runs, "flame_done") / med(tally_runs, "flame_done"),
             med(pprof_runs, "rss") / med(tally_runs, "rss")))
    print()


driver = None
if browser_error is None:
    try:
        driver = make_browser()
    except Exception as e:  # no chromium here: the timings without a browser
        browser_error = str(e)
if driver is None:
    print("(no browser measurements: %s)" % browser_error)
try:
    for profile in profiles:
        bench(profile, driver)
finally:
    if driver:
        driver.quit()
