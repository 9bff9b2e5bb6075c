#!/usr/bin/python3
"""serve_vs_pprof.py [PROFILE]: `tally serve` against `pprof -http` on one profile.

For each tool, RUNS times (default 3), alternated: start the server on a free loopback
port and time, from the start,
  - tally: the URL printed (profile read and symbolized), then GET /api/top and GET
    /api/flame (each timed on its own, cold), and the flame graph's data answered;
  - pprof: GET /ui/flamegraph answered 200 (pprof reads and symbolizes before it listens,
    then renders the page server-side).
Then the server's peak RSS (wait4's ru_maxrss after SIGTERM: the process and the children it
waited for, e.g. pprof's llvm-symbolizer), and `tally top`'s peak RSS on the same file.
Medians are printed; the flame graph's total must equal /api/top's. Default PROFILE: ${TALLY_BENCH_DATA:-/tmp/tally-bench}/clang-top.pb.gz
(top_symbolized_vs_pprof.sh makes it: 1M cpu-clock samples of clang++ -O2).

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
profile = sys.argv[1] if len(sys.argv) > 1 else os.path.join(data, "clang-top.pb.gz")
for path in (tally, pprof, profile):
    if not os.path.exists(path):
        sys.exit("serve_vs_pprof.py: %s is missing" % path)


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


def run_tally():
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
    rss = stop(proc)
    proc.stdout.close()
    return {"ready": ready, "top": top_time, "flame": flame_time, "flame_done": flame_done,
            "flame_bytes": len(flame), "rss": rss}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_pprof():
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
    rss = stop(proc)
    return {"flame_done": flame_done, "rss": rss, "flame_bytes": len(body)}


def tally_top_rss():
    proc = subprocess.Popen([tally, "top", "--no-debuginfod", profile], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    _, _, usage = os.wait4(proc.pid, 0)
    return usage.ru_maxrss / 1000.0


load = open("/proc/loadavg").read().split()[:3]
tally_runs, pprof_runs, top_rss = [], [], []
for _ in range(runs):
    tally_runs.append(run_tally())
    pprof_runs.append(run_pprof())
    top_rss.append(tally_top_rss())


def med(rows, key):
    return statistics.median(r[key] for r in rows)


print("profile: %s; %d runs each, alternated; load at start %s" % (profile, runs, " ".join(load)))
print("tally serve: ready (read + symbolized) %.2f s; /api/top %.3f s; /api/flame %.3f s (%d bytes); "
      "flame data answered %.2f s after start; peak RSS %.1f MB"
      % (med(tally_runs, "ready"), med(tally_runs, "top"), med(tally_runs, "flame"),
         med(tally_runs, "flame_bytes"), med(tally_runs, "flame_done"), med(tally_runs, "rss")))
print("pprof -http: /ui/flamegraph answered %.2f s after start (%d bytes); peak RSS %.1f MB"
      % (med(pprof_runs, "flame_done"), med(pprof_runs, "flame_bytes"), med(pprof_runs, "rss")))
print("tally top: peak RSS %.1f MB; serve / top memory: %.2fx"
      % (statistics.median(top_rss), med(tally_runs, "rss") / statistics.median(top_rss)))
print("flame graph answered: pprof / tally %.1fx; memory pprof / tally %.1fx"
      % (med(pprof_runs, "flame_done") / med(tally_runs, "flame_done"),
         med(pprof_runs, "rss") / med(tally_runs, "rss")))
