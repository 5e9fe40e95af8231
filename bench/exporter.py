#!/usr/bin/env python3
"""The exporter's cost (issue 20): `mcptop serve` against `mcptop watch` on
the same healthy bench fleet (bench/fleetserver.mjs), and the CPU of one
scrape of /metrics.

For each N, watch and serve are started together on the fleet (watch's JSON
Lines go to a file, as a pipeline would take them). Once every server has
dialed in both, the CPU of each process (utime + stime from /proc/PID/stat)
is measured over the same WINDOW, while serve is scraped every 15 s with
Prometheus's Accept header (OpenMetrics), like a Prometheus server at its
default interval. Same window, same fleet: both see the same phase of the
ping bursts (after a fleet dials at once its pings come in bursts every
15 s, and the idle cost creeps up as jitter spreads them, so windows taken
one after the other would not compare). Then serve's idle rate over 30 s,
and SCRAPES back-to-back scrapes: CPU per scrape from the exporter's own
process_cpu_seconds_total (getrusage, read at the end of each scrape's
render), less that idle rate, and the size of one scrape.

Both run the default ping interval (15 s). Results: one JSON line per N and
run on stdout and in bench/results/exporter.jsonl.

  bench/exporter.py --mcptop build-bench/mcptop [--sizes 1000,10000]
                    [--window 150] [--scrapes 20] [--runs 1] [--markdown]
  bench/exporter.py --from-raw bench/results/exporter.jsonl   (the table
                    only, from earlier runs)

--markdown (and --from-raw) print the "Exporter" section of RESULTS.md;
`bench/run --exporter` runs it and rebuilds RESULTS.md with it.
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
from driver import Fleet, fleet_args, log, proc_cpu  # noqa: E402

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
    return proc_cpu(pid)


def watch_dialed(path):
    with open(path, "rb") as g:
        return sum(1 for line in g if b'"op":"dial"' in line and
                   b'"outcome":"completed"' in line)


def serve_port(err_path, deadline):
    while time.monotonic() < deadline:
        m = re.search(r"127\.0\.0\.1:(\d+)/metrics", open(err_path).read())
        if m:
            return int(m.group(1))
        time.sleep(0.1)
    raise RuntimeError("serve did not say where it listens")


def ready(port):
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz",
                                    timeout=5) as r:
            return r.status == 200
    except OSError:
        return False


def run_pair(a, cfg, n, hz):
    """watch and serve started together on the fleet, measured over the
    same window: the same phase of the fleet's ping bursts for both."""
    out = os.path.join(a.workdir, f"watch-{n}.jsonl")
    err = os.path.join(a.workdir, f"serve-{n}.err")
    f = open(out, "w")
    w = subprocess.Popen([a.mcptop, "watch", "-c", cfg], stdout=f,
                         stderr=subprocess.DEVNULL)
    s = subprocess.Popen([a.mcptop, "serve", "--listen", "127.0.0.1:0",
                          "-c", cfg], stdout=subprocess.DEVNULL,
                         stderr=open(err, "w"))
    try:
        port = serve_port(err, time.monotonic() + 30)
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            if watch_dialed(out) >= n and ready(port):
                break
            time.sleep(0.5)
        dialed = watch_dialed(out)
        time.sleep(2.0)
        # The window: serve scraped every 15 s, like Prometheus.
        t0 = time.monotonic()
        w0, s0 = cpu_s(w.pid, hz), cpu_s(s.pid, hz)
        scrapes, next_at = 0, t0
        while time.monotonic() < t0 + a.window:
            if time.monotonic() >= next_at:
                scrape(port)
                scrapes += 1
                next_at += 15
            time.sleep(0.05)
        w1, s1, t1 = cpu_s(w.pid, hz), cpu_s(s.pid, hz), time.monotonic()
        secs = t1 - t0
        pair = {"dialed": dialed, "seconds": secs, "scrapes": scrapes,
                "watch_cpu_s": w1 - w0, "serve_cpu_s": s1 - s0,
                "watch_pct": 100.0 * (w1 - w0) / secs,
                "serve_pct": 100.0 * (s1 - s0) / secs}
        # serve's rate with no scrape, over two ping periods ...
        i0, c0 = time.monotonic(), cpu_s(s.pid, hz)
        time.sleep(30)
        idle_rate = (cpu_s(s.pid, hz) - c0) / (time.monotonic() - i0)
        pair["serve_idle_pct"] = 100.0 * idle_rate
        # ... to take out of back-to-back scrapes: the CPU of one scrape,
        # from the exporter's own counter.
        body = scrape(port)
        first = float(_CPU.search(body).group(1))
        b0 = time.monotonic()
        for _ in range(a.scrapes):
            body = scrape(port)
        wall = time.monotonic() - b0
        last = float(_CPU.search(body).group(1))
        text = scrape(port, accept="text/plain")
        pair.update({
            "scrape_cpu_ms": (last - first - idle_rate * wall) /
            a.scrapes * 1000.0,
            "scrape_wall_ms": wall * 1000.0 / a.scrapes,
            "scrape_bytes_openmetrics": len(body),
            "scrape_bytes_text": len(text),
            "scrape_lines": body.count(b"\n")})
        return pair
    finally:
        s.send_signal(signal.SIGTERM)
        w.send_signal(signal.SIGINT)
        s.wait(timeout=60)
        w.wait(timeout=60)
        f.close()


def fmt_pct(v):
    return f"{v:.2f}%"


def markdown(rows):
    """The RESULTS.md section for the rows (medians over runs per N)."""
    med = statistics.median
    out = ["## Exporter (`mcptop serve`, issue 20)", "",
           "`bench/exporter.py`: `mcptop watch` and `mcptop serve` started "
           "together on the same healthy bench fleet (default 15 s ping "
           "interval); once every server dialed in both, each process's "
           "CPU (utime + stime from /proc) over the same window while "
           "serve is scraped every 15 s with Prometheus's Accept header "
           "(OpenMetrics); then back-to-back scrapes: CPU per scrape from "
           "the exporter's own getrusage, less its idle rate.", "",
           "| metric | " + " | ".join(
               f"{n:,} servers" for n in sorted({r['n'] for r in rows})) +
           " |", "| --- |" + " --- |" * len({r['n'] for r in rows})]
    sizes = sorted({r["n"] for r in rows})

    def cell(f, show):
        vals = []
        for n in sizes:
            v = [f(r) for r in rows if r["n"] == n]
            vals.append(show(med(v)) + (f" [{show(min(v))}–{show(max(v))}]"
                                        if len(v) > 1 else ""))
        return " | ".join(vals)

    lines = [
        ("`watch`, CPU (% of one core)", lambda r: r["watch_pct"], fmt_pct),
        ("`serve` scraped every 15 s, same window",
         lambda r: r["serve_pct"], fmt_pct),
        ("`serve` / `watch`", lambda r: r["serve_pct"] / r["watch_pct"],
         lambda v: f"{v:.2f}×"),
        ("`serve` − `watch` (points of one core)",
         lambda r: r["serve_pct"] - r["watch_pct"], lambda v: f"{v:+.2f}"),
        ("`serve` with no scrape, the 30 s after (the ping bursts "
         "spread as jitter builds up: the idle cost creeps up)", lambda r:
         r["serve_idle_pct"], fmt_pct),
        ("CPU of one scrape (ms)", lambda r: r["scrape_cpu_ms"],
         lambda v: f"{v:.1f}"),
        ("one scrape every 15 s, as % of one core",
         lambda r: r["scrape_cpu_ms"] / 150.0, lambda v: f"{v:.2f}%"),
        ("wall time of one scrape, client included (ms)",
         lambda r: r["scrape_wall_ms"], lambda v: f"{v:.1f}"),
        ("scrape size, OpenMetrics (MB)",
         lambda r: r["scrape_bytes_openmetrics"] / 1e6,
         lambda v: f"{v:.1f}"),
        ("scrape size, text 0.0.4 (MB)",
         lambda r: r["scrape_bytes_text"] / 1e6, lambda v: f"{v:.1f}"),
        ("lines per scrape", lambda r: r["scrape_lines"],
         lambda v: f"{v:,.0f}"),
    ]
    for name, f, show in lines:
        out.append(f"| {name} | {cell(f, show)} |")
    runs = {n: sum(1 for r in rows if r["n"] == n) for n in sizes}
    out += ["", f"Runs per size: {runs}; window "
            f"{rows[0]['window_s']} s. Targets (issue 20): one scrape of "
            "10,000 servers under 100 ms of CPU; the exporter within 5% "
            "of `watch`'s CPU at 10,000.", ""]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mcptop")
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--window", type=int, default=150)
    ap.add_argument("--scrapes", type=int, default=20)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--base-port", type=int, default=None,
                    help="first port to try (default: a free range)")
    ap.add_argument("--workdir", default="/tmp/mcptop-bench-exporter")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--from-raw", metavar="JSONL")
    a = ap.parse_args()
    if a.from_raw:
        with open(a.from_raw) as f:
            print(markdown([json.loads(line) for line in f if line.strip()]))
        return
    if not a.mcptop:
        ap.error("--mcptop is required (or --from-raw)")
    rows = []
    os.makedirs(a.workdir, exist_ok=True)
    import resource
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    shard = max(100, (soft - 200) // 3)
    hz = os.sysconf("SC_CLK_TCK")
    out = open(os.path.join(BENCH, "results", "exporter.jsonl"), "a")
    for n in [int(x) for x in a.sizes.split(",")]:
        fleet = Fleet(fleet_args(a.workdir, a.base_port, shard=shard),
                      "json", "distinct", n)
        cfg = fleet.write_config(os.path.join(a.workdir, f"fleet-{n}.json"))
        try:
            for run in range(a.runs):
                log(f"N={n} run {run + 1}: watch and serve together")
                r = {"n": n, "run": run + 1, "window_s": a.window}
                r.update(run_pair(a, cfg, n, hz))
                log(f"N={n} run {run + 1}: {r}")
                rows.append(r)
                if not a.markdown:
                    print(json.dumps(r), flush=True)
                out.write(json.dumps(r) + "\n")
                out.flush()
        finally:
            fleet.stop()
    if a.markdown:
        print(markdown(rows))


if __name__ == "__main__":
    main()
