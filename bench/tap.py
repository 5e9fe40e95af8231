#!/usr/bin/env python3
"""What `mcptop tap` costs (issue 31): latency added per message and CPU per
MB forwarded, against a direct pipe. No timing is asserted anywhere; the
numbers go in bench/RESULTS.md by hand (see the tap section there).

  latency   (and the tap's CPU per message, start-up included, from wait4)
            an agent (this script) sends a JSON-RPC request and waits for
            its answer, N times, to a server that answers at once (sed -u
            turns each request line into a result line with its id): round
            trips directly, then through the tap with a socket reader
            attached (events published); median and p99 of each, and of
            the difference
  cpu/MB    M MB of 64 KiB notification lines through the tap to `cat`
            and back (2M MB forwarded), the tap's user+sys CPU from wait4,
            against cat's own CPU for the same bytes (what a direct pipe
            costs the process that copies them)

  http      (--http N) the HTTP form: N ping round trips (POST, the
            answer read whole: server-everything answers each on an SSE
            stream) on one keep-alive connection, to server-everything's
            Streamable HTTP endpoint directly, then through `mcptop tap
            --listen --upstream` with a socket reader attached; median and
            p99 of each and of the difference, and the tap's CPU per
            exchange (needs tests/node_modules)

usage: bench/tap.py [--mcptop BIN] [--n N] [--mb M] [--runs R] [--http N]
"""

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SED = ["sed", "-u", "-e", 's/"method":"ping"/"result":{}/']


def quantile(xs, q):
    xs = sorted(xs)
    k = max(0, min(len(xs) - 1, int(round(q * (len(xs) - 1)))))
    return xs[k]


def spawn(argv):
    return subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, bufsize=0)


def round_trips(p, n):
    """n request/answer round trips over p's pipes, in microseconds."""
    out = []
    f = p.stdout
    for i in range(n):
        line = b'{"jsonrpc":"2.0","id":%d,"method":"ping"}\n' % i
        t0 = time.perf_counter_ns()
        p.stdin.write(line)
        got = f.readline()
        out.append((time.perf_counter_ns() - t0) / 1000.0)
        if not got:
            raise RuntimeError("the server went away")
    return out


def finish(p):
    p.stdin.close()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = status
    return ru.ru_utime + ru.ru_stime


def reader(path, stop):
    """A socket reader that reads everything (events are really published)."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    for _ in range(200):
        try:
            s.connect(path)
            break
        except OSError:
            time.sleep(0.01)
    s.settimeout(0.2)
    n = 0
    while not stop.is_set():
        try:
            b = s.recv(1 << 16)
        except socket.timeout:
            continue
        except OSError:
            break
        if not b:
            break
        n += len(b)
    s.close()
    return n


def latency(mcptop, n, sock):
    direct = spawn(SED)
    d = round_trips(direct, n)
    finish(direct)
    tap = spawn([mcptop, "tap", "--name", "bench", "--socket", sock, "--"] + SED)
    stop = threading.Event()
    got = {}
    th = threading.Thread(target=lambda: got.update(bytes=reader(sock, stop)), daemon=True)
    th.start()
    time.sleep(0.2)
    t = round_trips(tap, n)
    stop.set()
    th.join(5)
    cpu = finish(tap)
    return d, t, got.get("bytes", 0), cpu


def bulk(argv, mb):
    """mb MB of notification lines through argv and back; the process's CPU."""
    line = b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"' + \
        b"x" * (65536 - 80) + b'"}}\n'
    count = mb * 1024 * 1024 // len(line)
    p = spawn(argv)
    done = {}

    def drain():
        total = 0
        while True:
            b = p.stdout.read(1 << 16)
            if not b:
                break
            total += len(b)
        done["bytes"] = total

    th = threading.Thread(target=drain, daemon=True)
    th.start()
    t0 = time.perf_counter()
    for _ in range(count):
        p.stdin.write(line)
    cpu = finish(p)
    th.join(30)
    wall = time.perf_counter() - t0
    return cpu, wall, done.get("bytes", 0), count * len(line)


def http_round_trips(port, n):
    """initialize, then n pings on one connection; microseconds each."""
    import http.client
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    hdrs = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    conn.request("POST", "/mcp", json.dumps({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "0"}}}), hdrs)
    resp = conn.getresponse()
    sid = resp.getheader("Mcp-Session-Id")
    resp.read()
    hdrs.update({"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"})
    conn.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0",
                                             "method": "notifications/initialized"}), hdrs)
    conn.getresponse().read()
    out = []
    for i in range(n):
        body = b'{"jsonrpc":"2.0","id":%d,"method":"ping"}' % (i + 1)
        t0 = time.perf_counter_ns()
        conn.request("POST", "/mcp", body, hdrs)
        got = conn.getresponse().read()
        out.append((time.perf_counter_ns() - t0) / 1000.0)
        if b'"result"' not in got:
            raise RuntimeError("no answer to ping %d: %r" % (i, got[:200]))
    conn.request("DELETE", "/mcp", headers=hdrs)
    conn.getresponse().read()
    conn.close()
    return out


def http_latency(mcptop, n, sock):
    sys.path.insert(0, os.path.join(HERE, "..", "tests", "integration"))
    import mcptest
    with mcptest.everything_http() as ev:
        d = http_round_trips(ev.port, n)
        port = mcptest.free_port()
        tap = subprocess.Popen([mcptop, "tap", "--listen", "127.0.0.1:%d" % port, "--upstream",
                                ev.url, "--name", "bench-http", "--socket", sock],
                               stderr=subprocess.DEVNULL)
        mcptest.wait_port(port, timeout=20, proc=tap)
        stop = threading.Event()
        got = {}
        th = threading.Thread(target=lambda: got.update(bytes=reader(sock, stop)), daemon=True)
        th.start()
        time.sleep(0.2)
        t = http_round_trips(port, n)
        stop.set()
        th.join(5)
        tap.terminate()
        _, _, ru = os.wait4(tap.pid, 0)
    return {
        "http_direct_median_us": statistics.median(d), "http_direct_p99_us": quantile(d, 0.99),
        "http_tap_median_us": statistics.median(t), "http_tap_p99_us": quantile(t, 0.99),
        "http_added_median_us": statistics.median(t) - statistics.median(d),
        "http_added_p99_us": quantile(t, 0.99) - quantile(d, 0.99),
        "http_events_bytes_read": got.get("bytes", 0),
        "http_tap_cpu_us_per_exchange": (ru.ru_utime + ru.ru_stime) * 1e6 / (n + 3),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mcptop", default=os.path.join(HERE, "..", "build", "mcptop"))
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--mb", type=int, default=64)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--http", type=int, default=0, metavar="N")
    a = ap.parse_args()
    sock = "/tmp/mcptop-bench-tap-%d.sock" % os.getpid()
    rows = []
    if a.http > 0:
        for run in range(a.runs):
            row = dict(run=run + 1, **http_latency(a.mcptop, a.http, sock))
            rows.append(row)
            print(json.dumps(row), flush=True)
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0]
               if isinstance(rows[0][k], float)}
        print("medians of %d runs: %s" % (a.runs, json.dumps({k: round(v, 2) for k, v in med.items()})))
        return 0
    for run in range(a.runs):
        d, t, evbytes, lat_cpu = latency(a.mcptop, a.n, sock)
        cat_cpu, cat_wall, cat_out, sent = bulk(["cat"], a.mb)
        tap_cpu, tap_wall, tap_out, _ = bulk([a.mcptop, "tap", "--name", "bulk", "--socket",
                                              sock, "--", "cat"], a.mb)
        row = {
            "run": run + 1,
            "direct_median_us": statistics.median(d), "direct_p99_us": quantile(d, 0.99),
            "tap_median_us": statistics.median(t), "tap_p99_us": quantile(t, 0.99),
            "added_median_us": statistics.median(t) - statistics.median(d),
            "added_p99_us": quantile(t, 0.99) - quantile(d, 0.99),
            "events_bytes_read": evbytes,
            "tap_cpu_us_per_message": lat_cpu * 1e6 / (2 * a.n),
            "mb_each_way": sent / 1048576.0,
            "cat_cpu_ms_per_mb": cat_cpu * 1000 / (sent / 1048576.0),
            "tap_cpu_ms_per_mb_forwarded": tap_cpu * 1000 / (2 * sent / 1048576.0),
            "tap_bytes_back_ok": tap_out == sent and cat_out == sent,
            "cat_wall_s": cat_wall, "tap_wall_s": tap_wall,
        }
        rows.append(row)
        print(json.dumps(row), flush=True)
    med = {k: statistics.median(r[k] for r in rows) for k in rows[0]
           if isinstance(rows[0][k], float)}
    print("medians of %d runs: %s" % (a.runs, json.dumps({k: round(v, 2) for k, v in med.items()})))


if __name__ == "__main__":
    sys.exit(main())
