#!/usr/bin/env python3
"""The exporter's cost (issue 20): `mcptop serve` against `mcptop watch` on
the same healthy bench fleet (bench/fleetserver.mjs), and the CPU of one
scrape of /metrics.

For each N:
  watch  `mcptop watch -c FLEET > FILE` (its JSON Lines go to a file, as a
         pipeline would take them); once every server dialed, its CPU over
         WINDOW seconds (utime + stime from /proc/PID/stat).
  serve  `mcptop serve -c FLEET`, scraped every 15 s with Prometheus's
         Accept header (OpenMetrics) for the whole window, like a
         Prometheus server at its default interval; once /readyz says
         every server dialed, its CPU over the same window, scrapes
         included.
  scrape then SCRAPES back-to-back scrapes of serve; CPU per scrape from
         the exporter's own process_cpu_seconds_total (getrusage, read at
         the end of each scrape's render) between the first and the last,
         less the idle rate measured by watching serve alone for the
         window, and the size of one scrape in bytes.

Both programs run the default ping interval (15 s). Results: one JSON line
per N on stdout and in bench/results/exporter.jsonl.

  bench/exporter.py --mcptop /tmp/build-bench/mcptop [--sizes 1000,10000]
                    [--window 60] [--scrapes 20] [--runs 1]
"""
import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
import urllib.request

BENCH = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, BENCH)
from driver import Fleet, log, proc_cpu_ticks, write_config  # noqa: E402

ACCEPT = ("application/openmetrics-text;version=1.0.0,application/"
          "openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;"
          "q=0.5,*/*;q=0.1")
_CPU = re.compile(rb"^process_cpu_seconds_total ([0-9.e+]+)$", re.M)


def scrape(port, accept=ACCEPT):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/metrics",
                                 headers={"Accept": accept})
    with urllib.request.urlopen(req, timeout=60) as r:
        return r.read()


def cpu_s(pid, hz):
    return proc_cpu_ticks(pid) / hz


def run_watch(a, cfg, n, hz):
    out = os.path.join(a.workdir, f"watch-{n}.jsonl")
    f = open(out, "w")
    p = subprocess.Popen([a.mcptop, "watch", "-c", cfg], stdout=f,
                         stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 180
    dialed = 0
    while time.monotonic() < deadline:
        time.sleep(0.5)
        with open(out, "rb") as g:
            dialed = sum(1 for line in g if b'"op":"dial"' in line and
                         b'"outcome":"completed"' in line)
        if dialed >= n:
            break
    time.sleep(2.0)
    t0, c0 = time.monotonic(), cpu_s(p.pid, hz)
    time.sleep(a.window)
    c1, t1 = cpu_s(p.pid, hz), time.monotonic()
    p.send_signal(signal.SIGINT)
    p.wait(timeout=60)
    f.close()
    return {"dialed": dialed, "cpu_s": c1 - c0, "seconds": t1 - t0,
            "cpu_pct": 100.0 * (c1 - c0) / (t1 - t0)}


def run_serve(a, cfg, n, hz):
    err = os.path.join(a.workdir, f"serve-{n}.err")
    p = subprocess.Popen([a.mcptop, "serve", "--listen", "127.0.0.1:0",
                          "-c", cfg], stdout=subprocess.DEVNULL,
                         stderr=open(err, "w"))
    port = None
    deadline = time.monotonic() + 30
    while port is None and time.monotonic() < deadline:
        time.sleep(0.1)
        m = re.search(r"127\.0\.0\.1:(\d+)/metrics", open(err).read())
        port = int(m.group(1)) if m else None
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(
                    f"http://127.0.0.1:{port}/readyz", timeout=5) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        time.sleep(0.5)
    time.sleep(2.0)
    # Idle, no scrapes: the background rate.
    t0, c0 = time.monotonic(), cpu_s(p.pid, hz)
    time.sleep(a.window)
    c1, t1 = cpu_s(p.pid, hz), time.monotonic()
    idle = {"cpu_s": c1 - c0, "seconds": t1 - t0,
            "cpu_pct": 100.0 * (c1 - c0) / (t1 - t0)}
    # Scraped every 15 s, like Prometheus.
    t0, c0 = time.monotonic(), cpu_s(p.pid, hz)
    scrapes, size = 0, 0
    next_at = t0
    while time.monotonic() < t0 + a.window:
        if time.monotonic() >= next_at:
            size = len(scrape(port))
            scrapes += 1
            next_at += 15
        time.sleep(0.05)
    c1, t1 = cpu_s(p.pid, hz), time.monotonic()
    scraped = {"cpu_s": c1 - c0, "seconds": t1 - t0, "scrapes": scrapes,
               "cpu_pct": 100.0 * (c1 - c0) / (t1 - t0)}
    # Back-to-back scrapes: CPU per scrape from the exporter's own counter.
    body = scrape(port)
    first = float(_CPU.search(body).group(1))
    w0 = time.monotonic()
    for _ in range(a.scrapes):
        body = scrape(port)
    wall = time.monotonic() - w0
    last = float(_CPU.search(body).group(1))
    text = scrape(port, accept="text/plain")
    per = (last - first - idle["cpu_s"] / idle["seconds"] * wall) / a.scrapes
    lines = body.count(b"\n")
    p.send_signal(signal.SIGTERM)
    p.wait(timeout=60)
    return {"idle": idle, "scraped": scraped,
            "scrape_cpu_ms": per * 1000.0,
            "scrape_wall_ms": wall * 1000.0 / a.scrapes,
            "scrape_bytes_openmetrics": len(body),
            "scrape_bytes_text": len(text), "scrape_lines": lines}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mcptop", required=True)
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--window", type=int, default=60)
    ap.add_argument("--scrapes", type=int, default=20)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--base-port", type=int, default=20000)
    ap.add_argument("--workdir", default="/tmp/mcptop-bench-exporter")
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    import resource
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    shard = max(100, (soft - 200) // 3)
    hz = os.sysconf("SC_CLK_TCK")
    out = open(os.path.join(BENCH, "results", "exporter.jsonl"), "a")
    for n in [int(x) for x in a.sizes.split(",")]:
        cfg = os.path.join(a.workdir, f"fleet-{n}.json")
        write_config(cfg, a.base_port, n)
        fleet = Fleet(a.base_port, n, shard)
        try:
            for run in range(a.runs):
                log(f"N={n} run {run + 1}: watch")
                w = run_watch(a, cfg, n, hz)
                log(f"N={n} run {run + 1}: watch {w}")
                log(f"N={n} run {run + 1}: serve")
                s = run_serve(a, cfg, n, hz)
                r = {"n": n, "run": run + 1, "window_s": a.window,
                     "watch": w, "serve": s,
                     "serve_over_watch": (s["scraped"]["cpu_pct"] /
                                          w["cpu_pct"]) if w["cpu_pct"] else
                     None}
                log(f"N={n} run {run + 1}: {r}")
                print(json.dumps(r), flush=True)
                out.write(json.dumps(r) + "\n")
                out.flush()
        finally:
            fleet.stop()


if __name__ == "__main__":
    main()
