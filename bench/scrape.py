#!/usr/bin/env python3
"""One scrape and one probe (issue 29): `mcptop serve` on the healthy bench
fleet (bench/fleetserver.mjs, N servers on distinct ports), and for each N

  - one scrape of /metrics in three forms: text 0.0.4 plain, text 0.0.4
    with Accept-Encoding: gzip, and what Prometheus asks (OpenMetrics,
    gzip): bytes on the wire, series (sample lines, decompressed), CPU;
  - one /probe of one server (a dial, a ping, the session ended, the
    answer): CPU and wall time.

A scrape's CPU is what the exporter says of it in its debug log (--log):
the process's getrusage around the render and the compression, which run
synchronously on its one thread, so nothing else is counted (the median
over SCRAPES back-to-back scrapes; sending the bytes is not in it). A
probe's CPU is the exporter's utime + stime (/proc/PID/stat) over PROBES
back-to-back probes of one server by a serve watching only that one (its
idle rate, measured over IDLE seconds just before, taken out). Wall times
are the client's, per request. Results: one JSON line per
N and run on stdout and in bench/results/scrape.jsonl; --markdown (and
--from-raw) print the RESULTS.md section, which `bench/run --report`
rebuilds from those records.

  bench/scrape.py --mcptop build-bench/mcptop [--sizes 1000,10000]
                  [--scrapes 0] [--probes 20] [--idle 30] [--runs 1]
  bench/scrape.py --from-raw bench/results/scrape.jsonl
"""
import argparse
import gzip
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

# What Prometheus 2.42 sends on every scrape.
PROM_ACCEPT = ("application/openmetrics-text;version=1.0.0,application/"
               "openmetrics-text;version=0.0.1;q=0.75,text/plain;"
               "version=0.0.4;q=0.5,*/*;q=0.1")
FORMS = [
    ("text", {}),
    ("text_gzip", {"Accept-Encoding": "gzip"}),
    ("prometheus", {"Accept": PROM_ACCEPT, "Accept-Encoding": "gzip"}),
]


def get(port, path, headers=None, decode=True):
    """(wire bytes, decompressed text; None unless decode) of one GET."""
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}",
                                 headers=headers or {})
    with urllib.request.urlopen(req, timeout=120) as r:
        wire = r.read()
        coding = r.headers.get("Content-Encoding")
    if not decode:
        return wire, None
    return wire, gzip.decompress(wire) if coding == "gzip" else wire


def series(text):
    return sum(1 for ln in text.split(b"\n") if ln and not ln.startswith(b"#"))


def wait_up(port, n, deadline):
    """Every server up (mcp_up 1) and pinged once (its liveness histogram
    is there: the series a healthy server has), as the exporter says."""
    up = 0
    while time.monotonic() < deadline:
        try:
            _, t = get(port, "/metrics")
            up = len(re.findall(rb"^mcp_up\{[^}]*\} 1$", t, re.M))
            pinged = len(re.findall(
                rb"^mcp_client_operation_duration_seconds_count\{", t, re.M))
            if up >= n and pinged >= n:
                return up
        except OSError:
            pass
        time.sleep(1.0)
    return up


_SCRAPE_LOG = re.compile(r"serve: /metrics: (\d+) bytes \((\d+) sent[^)]*\), "
                         r"([0-9.]+) ms CPU \(render ([0-9.]+)\)")


def scrape_log(path, start):
    """(CPU ms, render ms) of each scrape logged past byte offset start."""
    with open(path, errors="replace") as f:
        f.seek(start)
        return [(float(m.group(3)), float(m.group(4)))
                for m in _SCRAPE_LOG.finditer(f.read())]


def cpu_per(pid, idle_rate, count, fn):
    """CPU (ms) and wall (ms) per call of fn, less the idle rate."""
    c0, t0 = proc_cpu(pid), time.monotonic()
    for _ in range(count):
        fn()
    c1, t1 = proc_cpu(pid), time.monotonic()
    return ((c1 - c0 - idle_rate * (t1 - t0)) / count * 1000.0,
            (t1 - t0) / count * 1000.0)


def start_serve(a, cfg, tag, log_path=None):
    err = os.path.join(a.workdir, f"serve-{tag}.err")
    argv = [a.mcptop, "serve", "--listen", "127.0.0.1:0", "-c", cfg]
    if log_path:
        argv += ["--log", log_path]
    s = subprocess.Popen(argv, stdout=subprocess.DEVNULL,
                         stderr=open(err, "w"))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        m = re.search(r"127\.0\.0\.1:(\d+)/metrics", open(err).read())
        if m:
            return s, int(m.group(1))
        time.sleep(0.1)
    stop(s)
    raise RuntimeError("serve did not say where it listens")


def stop(s):
    s.send_signal(signal.SIGTERM)
    try:
        s.wait(timeout=60)
    except subprocess.TimeoutExpired:
        s.kill()
        s.wait()


def run_one(a, cfg, one_cfg, n):
    log_path = os.path.join(a.workdir, f"serve-{n}.log")
    if os.path.exists(log_path):
        os.unlink(log_path)
    s, port = start_serve(a, cfg, n, log_path)
    try:
        up = wait_up(port, n, time.monotonic() + 300)
        time.sleep(2.0)
        c0, t0 = proc_cpu(s.pid), time.monotonic()
        time.sleep(a.idle)
        r = {"n": n, "up": up, "idle_pct": 100.0 * (proc_cpu(s.pid) - c0) /
             (time.monotonic() - t0)}
        scrapes = a.scrapes or max(20, 200000 // n)
        for name, headers in FORMS:
            wire, text = get(port, "/metrics", headers)
            at = os.path.getsize(log_path)
            t0 = time.monotonic()
            for _ in range(scrapes):
                get(port, "/metrics", headers, decode=False)
            wall = (time.monotonic() - t0) / scrapes * 1000.0
            logged = scrape_log(log_path, at)
            r[name] = {"bytes": len(wire), "series": series(text),
                       "cpu_ms": statistics.median(c for c, _ in logged),
                       "render_ms": statistics.median(x for _, x in logged),
                       "wall_ms": wall, "scrapes": len(logged)}
    finally:
        stop(s)
    # One probe of one server, by a serve watching that one alone (its
    # idle rate is near nothing: a ping every 15 s).
    s, port = start_serve(a, one_cfg, f"{n}-probe")
    try:
        wait_up(port, 1, time.monotonic() + 60)
        c0, t0 = proc_cpu(s.pid), time.monotonic()
        time.sleep(min(a.idle, 10.0))
        idle_rate = (proc_cpu(s.pid) - c0) / (time.monotonic() - t0)
        wire, text = get(port, "/probe?target=s00000")
        ok = b"\nprobe_success 1\n" in b"\n" + text
        cpu, wall = cpu_per(s.pid, idle_rate, a.probes,
                            lambda: get(port, "/probe?target=s00000"))
        r["probe"] = {"ok": ok, "bytes": len(wire), "cpu_ms": cpu,
                      "wall_ms": wall, "probes": a.probes}
    finally:
        stop(s)
    return r


def markdown(rows):
    """The RESULTS.md section for the rows (medians over runs per N)."""
    med = statistics.median
    sizes = sorted({r["n"] for r in rows})
    out = ["## One scrape and one probe (`mcptop serve`, issue 29)", "",
           "`bench/scrape.py`: `mcptop serve` on the healthy bench fleet "
           "(every server up and pinged). A scrape's CPU is the "
           "exporter's own getrusage around the render and the "
           "compression (synchronous on its one thread; from its debug "
           "log), the median of back-to-back scrapes; a probe's is its "
           "utime + stime over 100 probes by a serve watching only that "
           "server, less its idle rate. Wall times are the client's "
           "(Python's urllib reading the answer, not decompressing it). Series are the "
           "sample lines of the decompressed answer.", "",
           "| measure | " + " | ".join(f"{n:,} servers" for n in sizes) +
           " |", "| --- |" + " --- |" * len(sizes)]

    def cell(f, show):
        vals = []
        for n in sizes:
            v = [f(r) for r in rows if r["n"] == n]
            vals.append(show(med(v)) + (f" [{show(min(v))}–{show(max(v))}]"
                                        if len(v) > 1 else ""))
        return " | ".join(vals)

    mb = lambda v: f"{v / 1e6:.2f}"   # noqa: E731
    ms = lambda v: f"{v:.1f}"         # noqa: E731
    lines = [("series per scrape", lambda r: r["text"]["series"],
              lambda v: f"{v:,.0f}"),
             ("series per server", lambda r: r["text"]["series"] / r["n"],
              lambda v: f"{v:.2f}")]
    for key, what in (("text", "text 0.0.4, plain"),
                      ("text_gzip", "text 0.0.4, gzip"),
                      ("prometheus", "OpenMetrics, gzip (Prometheus's "
                       "request)")):
        lines += [(f"{what}: bytes (MB)", lambda r, k=key: r[k]["bytes"], mb),
                  (f"{what}: CPU per scrape (ms)",
                   lambda r, k=key: r[k]["cpu_ms"], ms),
                  (f"{what}: of which the render (ms)",
                   lambda r, k=key: r[k]["render_ms"], ms),
                  (f"{what}: wall per scrape, client included (ms)",
                   lambda r, k=key: r[k]["wall_ms"], ms)]
    lines += [("`/probe` of one server: CPU (ms)",
               lambda r: r["probe"]["cpu_ms"], ms),
              ("`/probe` of one server: wall (ms)",
               lambda r: r["probe"]["wall_ms"], ms),
              ("`serve` idle, no scrape (% of one core)",
               lambda r: r["idle_pct"], lambda v: f"{v:.2f}%")]
    for name, f, show in lines:
        out.append(f"| {name} | {cell(f, show)} |")
    runs = {n: sum(1 for r in rows if r["n"] == n) for n in sizes}
    ok = all(r["probe"]["ok"] for r in rows)
    out += ["", f"Runs per size: {runs}; every probe succeeded: {ok}. "
            "Targets (issue 29): at most 2 MB gzipped and 50 ms of CPU per "
            "scrape at 10,000 servers.", ""]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mcptop")
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--scrapes", type=int, default=0,
                    help="scrapes per form (0: max(20, 200000 / N))")
    ap.add_argument("--probes", type=int, default=100)
    ap.add_argument("--idle", type=float, default=30.0)
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--base-port", type=int, default=None)
    ap.add_argument("--workdir", default="/tmp/mcptop-bench-scrape")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--no-record", action="store_true",
                    help="do not append to bench/results/scrape.jsonl")
    ap.add_argument("--from-raw", metavar="JSONL")
    a = ap.parse_args()
    if a.from_raw:
        with open(a.from_raw) as f:
            print(markdown([json.loads(line) for line in f if line.strip()]))
        return
    if not a.mcptop:
        ap.error("--mcptop is required (or --from-raw)")
    os.makedirs(a.workdir, exist_ok=True)
    rows = []
    out = None if a.no_record else open(
        os.path.join(BENCH, "results", "scrape.jsonl"), "a")
    # The largest first: its span of ports is free before a smaller
    # fleet's connections linger in TIME_WAIT across it.
    for n in sorted((int(x) for x in a.sizes.split(",")), reverse=True):
        fleet = Fleet(fleet_args(a.workdir, a.base_port), "json", "distinct",
                      n)
        cfg = fleet.write_config(os.path.join(a.workdir, f"fleet-{n}.json"))
        one_cfg = os.path.join(a.workdir, f"one-{n}.json")
        with open(one_cfg, "w") as f:
            json.dump({"mcpServers": {"s00000": {"url": fleet.url(0)}}}, f)
        try:
            for run in range(a.runs):
                log(f"N={n} run {run + 1}: serve, scrapes and probes")
                r = run_one(a, cfg, one_cfg, n)
                r["run"] = run + 1
                log(f"N={n} run {run + 1}: {json.dumps(r)}")
                rows.append(r)
                if not a.markdown:
                    print(json.dumps(r), flush=True)
                if out is not None:
                    out.write(json.dumps(r) + "\n")
                    out.flush()
        finally:
            fleet.stop()
    if a.markdown:
        print(markdown(rows))


if __name__ == "__main__":
    main()
