#!/usr/bin/env python3
"""mcptop bench driver (started by bench/run, which builds the binaries and
raises the file-descriptor limit first).

For each fleet size N: start the bench fleet (bench/fleetserver.mjs), run the
three clients -- mcptop check, the bare libcurl+libev floor, the official
TypeScript SDK client -- side by side, interleaved, --runs times each, and
write bench/RESULTS.md (plus every raw JSON answer in bench/results/).

Definitions (identical for the three clients, each measured by the client
itself around its own phases):
  CPU/dial      dial phase CPU (user+system, whole process) / N
  CPU/ping      ping phase CPU / (N * R)
  RSS/session   (peak RSS at the end of the dial phase at N
                 - median peak RSS at the end of the dial phase at N=1)
                / (N - 1)   : the marginal resident memory of one more open
                session, with every session open and idle
  dial wall     wall time of the dial phase
  ping round    median wall time of the R synchronized ping rounds
  endings wall  wall time to end every session (all DELETEs at once)
The fleet server's CPU during each client run is read from the server itself
(SIGUSR2 -> process.cpuUsage()) and reported apart.
"""
import argparse
import datetime
import json
import os
import platform
import re
import signal
import statistics
import subprocess
import sys
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
SDK_DIR = os.path.join(REPO, "tests/node_modules/@modelcontextprotocol/sdk")
CLIENTS = ["mcptop", "floor", "sdk"]


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr,
          flush=True)


# ---------------------------------------------------------------- fleet

class Fleet:
    """The bench fleet: ports base .. base+n-1, in shards of at most
    `shard` servers, one Node process each (one process whenever the file
    descriptor limit allows it)."""

    def __init__(self, base, n, shard, cpu_list=None):
        self.base, self.n = base, n
        self.procs = []
        first = 0
        while first < n:
            count = min(shard, n - first)
            cmd = ["node", os.path.join(BENCH, "fleetserver.mjs"),
                   "--base-port", str(base), "--first", str(first),
                   "--count", str(count)]
            if cpu_list:
                cmd = ["taskset", "-c", cpu_list] + cmd
            p = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
            line = p.stdout.readline()
            if not line.startswith("fleetserver ready"):
                raise RuntimeError(f"fleet shard at {first} did not start: "
                                   f"{line!r}")
            self.procs.append(p)
            first += count
        log(f"fleet of {n} up on ports {base}..{base + n - 1} "
            f"({len(self.procs)} Node process(es))")

    def stats(self):
        """Sum of every shard's stats line (SIGUSR2)."""
        tot = {}
        for p in self.procs:
            p.send_signal(signal.SIGUSR2)
            while True:
                line = p.stdout.readline()
                if not line:
                    raise RuntimeError("fleet shard died")
                if line.startswith("fleetserver stats "):
                    break
            d = json.loads(line[len("fleetserver stats "):])
            for k, v in d.items():
                if isinstance(v, (int, float)) and k != "pid":
                    tot[k] = tot.get(k, 0) + v
        return tot

    def pids(self):
        return [p.pid for p in self.procs]

    def stop(self):
        for p in self.procs:
            p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def write_config(path, base, n):
    servers = {f"s{i:05d}": {"url": f"http://127.0.0.1:{base + i}/mcp"}
               for i in range(n)}
    with open(path, "w") as f:
        json.dump({"mcpServers": servers}, f)


# ---------------------------------------------------------------- clients

def client_cmd(name, a, n, cfg):
    if name == "mcptop":
        # --timeout: see MCPTOP_TIMEOUT_MS.
        return [a.mcptop, "check", "-c", cfg, "--json", "--pings",
                str(a.pings), "--stats", "--timeout", str(a.mcptop_timeout)]
    if name == "floor":
        return [a.floor, "--base-port", str(a.base_port), "--count", str(n),
                "--pings", str(a.pings)]
    return ["node", "--expose-gc", "--max-old-space-size=16384",
            os.path.join(BENCH, "sdkclient.mjs"), "--base-port",
            str(a.base_port), "--count", str(n), "--pings", str(a.pings)]


def run_client(name, a, n, cfg, fleet):
    # Through a small shell that forks the client: Linux carries a
    # process's peak RSS across exec (and from the forking parent), so a
    # client forked straight from this Python process would report at
    # least Python's RSS as its own ru_maxrss.
    cmd = ["/bin/sh", "-c", '"$@"; exit $?', "sh"] + \
        client_cmd(name, a, n, cfg)
    before = fleet.stats()
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    out, err = p.communicate()
    # communicate() already reaped it; rusage of the child comes from
    # RUSAGE_CHILDREN deltas instead.
    wall = time.monotonic() - t0
    after = fleet.stats()
    try:
        d = json.loads(out.strip().splitlines()[-1])
    except Exception:
        raise RuntimeError(f"{name} at N={n}: no JSON (rc={p.returncode})\n"
                           f"{out[-2000:]}\n{err[-2000:]}")
    st = d["stats"]
    r = {
        "client": name, "n": n, "rc": p.returncode, "process_wall_s": wall,
        "dial": st["dial"], "pings": st["pings"], "endings": st["endings"],
        "ping_round_ms": st["ping_round_ms"],
        "server_cpu_us": after["cpu_us"] - before["cpu_us"],
        "server_requests": after["requests"] - before["requests"],
        "server_connections": after["connections"] - before["connections"],
        "server_sessions_live_after": after["sessions_live"],
        "server_requests_per_session": (after["requests"] -
                                        before["requests"]) / n,
        "stderr_tail": err[-500:],
    }
    if name == "mcptop":
        r["open"] = sum(1 for s in d["servers"] if s["ok"])
        r["ping_summary"] = d["summary"].get("pings")
    else:
        r["open"] = d["summary"]["sessions_open"]
        r["ping_summary"] = d["summary"].get("pings")
        r["ended"] = d["summary"].get("ended")
    if name == "sdk":
        r["errors"] = d.get("errors")
        r["rss_after_dial_gc_kib"] = st.get("rss_after_dial_gc_kib")
        r["dial_rss_now_kib"] = st["dial"].get("rss_now_kib")
    if name == "floor":
        r["connects"] = {k: st[k].get("connects") for k in
                         ("dial", "pings", "endings")}
    return r


# ---------------------------------------------------------------- idle

def proc_cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    fields = s[s.rindex(")") + 2:].split()
    return int(fields[11]) + int(fields[12])     # utime + stime


def idle_run(a, n, seconds):
    cfg = os.path.join(a.workdir, f"fleet-{n}.json")
    write_config(cfg, a.base_port, n)
    fleet = Fleet(a.base_port, n, a.shard)
    outpath = os.path.join(a.workdir, "watch.jsonl")
    out = open(outpath, "w")
    p = subprocess.Popen([a.mcptop, "watch", "-c", cfg], stdout=out,
                         stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    dialed = 0
    while time.monotonic() < deadline:
        time.sleep(0.5)
        with open(outpath) as f:
            dialed = sum(1 for line in f if '"op":"dial"' in line and
                         '"outcome":"completed"' in line)
        if dialed >= n:
            break
    time.sleep(2.0)
    hz = os.sysconf("SC_CLK_TCK")
    with open(outpath) as f:
        lines0 = sum(1 for _ in f)
    t0 = time.monotonic()
    c0 = proc_cpu_ticks(p.pid)
    s0 = fleet.stats()
    time.sleep(seconds)
    c1 = proc_cpu_ticks(p.pid)
    t1 = time.monotonic()
    s1 = fleet.stats()
    with open(outpath) as f:
        lines = f.readlines()
    window = lines[lines0:]
    pings = sum(1 for line in window if '"op":"ping"' in line)
    pings_ok = sum(1 for line in window if '"op":"ping"' in line and
                   '"outcome":"completed"' in line)
    p.send_signal(signal.SIGINT)
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    out.close()
    fleet.stop()
    cpu_s = (c1 - c0) / hz
    return {
        "n": n, "seconds": t1 - t0, "dialed": dialed,
        "cpu_s": cpu_s, "cpu_pct_of_core": 100.0 * cpu_s / (t1 - t0),
        "pings_in_window": pings, "pings_completed": pings_ok,
        "cpu_us_per_ping": (cpu_s * 1e6 / pings) if pings else None,
        "server_cpu_s": (s1["cpu_us"] - s0["cpu_us"]) / 1e6,
        "server_requests": s1["requests"] - s0["requests"],
        "server_connections_opened": s1["connections"] - s0["connections"],
        "clock_ticks_per_s": hz,
    }


# ---------------------------------------------------------------- endings

def endings_check(a, n, cfg, fleet):
    """One extra (unmeasured) mcptop check with --log: every ending's
    outcome and the time it took, against the teardown deadline."""
    logpath = os.path.join(a.workdir, f"endings-{n}.log")
    if os.path.exists(logpath):
        os.unlink(logpath)
    p = subprocess.run(["/bin/sh", "-c", '"$@"; exit $?', "sh",
                        a.mcptop, "check", "-c", cfg, "--json", "--pings",
                        "1", "--stats", "--log", logpath, "--timeout",
                        str(a.mcptop_timeout)],
                       capture_output=True, text=True)
    d = json.loads(p.stdout.strip().splitlines()[-1])
    outcomes, durs, settled = {}, [], 0
    rx = re.compile(r": ending(?: \(half-open\))?: (\w+) in ([0-9.]+) ms")
    with open(logpath) as f:
        for line in f:
            m = rx.search(line)
            if m:
                outcomes[m.group(1)] = outcomes.get(m.group(1), 0) + 1
                durs.append(float(m.group(2)))
            elif "ending settled after" in line:
                settled += 1
    os.unlink(logpath)
    return {
        "n": n, "teardown_ms": 3000, "outcomes": outcomes,
        "endings": len(durs), "settled": settled,
        "max_duration_ms": max(durs) if durs else None,
        "median_duration_ms": statistics.median(durs) if durs else None,
        "endings_phase_wall_ms": d["stats"]["endings"]["wall_ms"],
        "sessions_open_before": sum(1 for s in d["servers"] if s["ok"]),
    }


# ---------------------------------------------------------------- stats

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(v, digits=0):
    if v is None:
        return "—"
    if digits == 0:
        return f"{v:,.0f}"
    return f"{v:,.{digits}f}"


def mmm(xs, digits=0):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "—"
    if len(xs) == 1:
        return f"{fmt(xs[0], digits)} (1 run)"
    return (f"{fmt(statistics.median(xs), digits)} "
            f"[{fmt(min(xs), digits)}–{fmt(max(xs), digits)}]")


def derive(r, n, pings, base_rss):
    r["cpu_per_dial_us"] = r["dial"]["cpu_us"] / n
    r["cpu_per_ping_us"] = r["pings"]["cpu_us"] / (n * pings)
    r["dial_peak_rss_kib"] = r["dial"]["max_rss_kib"]
    r["peak_rss_kib"] = max(r["dial"]["max_rss_kib"],
                            r["pings"]["max_rss_kib"],
                            r["endings"]["max_rss_kib"])
    b = base_rss.get(r["client"])
    r["rss_per_session_kib"] = ((r["dial"]["max_rss_kib"] - b) / (n - 1)
                                if b is not None and n > 1 else None)
    r["dial_wall_ms"] = r["dial"]["wall_ms"]
    r["ping_round_median_ms"] = med(r["ping_round_ms"])
    r["endings_wall_ms"] = r["endings"]["wall_ms"]
    ps = r.get("ping_summary") or {}
    r["pings_completed"] = ps.get("count", 0)
    r["server_cpu_per_client_req_us"] = (
        r["server_cpu_us"] / r["server_requests"]
        if r["server_requests"] else None)


# ---------------------------------------------------------------- main

def machine_info(a):
    def sh(cmd):
        try:
            return subprocess.run(cmd, shell=True, capture_output=True,
                                  text=True).stdout.strip()
        except Exception:
            return "?"
    model = sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").strip()
    with open(os.path.join(SDK_DIR, "package.json")) as f:
        sdkv = json.load(f)["version"]
    return {
        "date": datetime.datetime.now().astimezone().isoformat(
            timespec="seconds"),
        "nproc": os.cpu_count(), "cpu": model,
        "mem": sh("free -g | awk '/Mem:/{print $2\" GiB\"}'"),
        "kernel": platform.release(),
        "os": sh(". /etc/os-release && echo $PRETTY_NAME"),
        "libcurl": sh(f"{a.mcptop} -V | sed -n 2p"),
        "libev": sh("dpkg-query -W -f='${Version}' libev4 2>/dev/null"),
        "node": sh("node --version"), "sdk": sdkv,
        "cc": sh("cc --version | head -1"),
        "mcptop": sh(f"{a.mcptop} -V | head -1"),
        "mcptop_commit": sh(f"git -C {REPO} rev-parse --short HEAD") +
        (" (+ uncommitted changes)" if sh(f"git -C {REPO} status --porcelain "
                                          "-- src include") else ""),
        "ulimit_n": sh("ulimit -n") + " (hard " + sh("ulimit -Hn") + ")",
        "ephemeral": sh("cat /proc/sys/net/ipv4/ip_local_port_range"),
        "loadavg_at_start": sh("cut -d' ' -f1-3 /proc/loadavg"),
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100,1000,10000")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--pings", type=int, default=5)
    ap.add_argument("--sdk-runs-large", type=int, default=1,
                    help="SDK runs at N >= --large (default 1)")
    ap.add_argument("--large", type=int, default=10000)
    ap.add_argument("--idle", action="store_true")
    ap.add_argument("--idle-n", type=int, default=1000)
    ap.add_argument("--idle-seconds", type=int, default=60)
    ap.add_argument("--base-port", type=int, default=20000)
    ap.add_argument("--shard", type=int, default=0,
                    help="servers per Node process (0: from the fd limit)")
    ap.add_argument("--mcptop")
    ap.add_argument("--floor")
    ap.add_argument("--workdir")
    ap.add_argument("--from-raw", metavar="RAW_JSONL",
                    help="only rebuild the report from a raw.jsonl")
    ap.add_argument("--out", default=os.path.join(BENCH, "RESULTS.md"))
    ap.add_argument("--no-endings-check", action="store_true")
    ap.add_argument("--mcptop-timeout", type=int, default=60000,
                    help="mcptop check --timeout MS (default 60000, the "
                    "SDK's default request timeout)")
    a = ap.parse_args()
    if a.from_raw:
        return report_from_raw(a)
    if not (a.mcptop and a.floor and a.workdir):
        ap.error("--mcptop, --floor and --workdir are required")
    sizes = [int(x) for x in a.sizes.split(",") if x]
    os.makedirs(a.workdir, exist_ok=True)
    os.makedirs(os.path.join(BENCH, "results"), exist_ok=True)

    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if a.shard <= 0:
        # Each server: one listener + up to two client connections (the SDK
        # may hold a POST and its GET at once), plus headroom.
        a.shard = max(100, (soft - 200) // 3)
    lo = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
    if a.base_port + max(sizes + [a.idle_n]) > lo:
        sys.exit(f"ports {a.base_port}..{a.base_port + max(sizes)} reach the "
                 f"ephemeral range (starts at {lo})")
    info = machine_info(a)
    log(f"machine: {info}")
    rawpath = os.path.join(BENCH, "results", "raw.jsonl")
    if os.path.abspath(a.out) != os.path.join(BENCH, "RESULTS.md"):
        rawpath = os.path.splitext(a.out)[0] + ".raw.jsonl"   # a side run
    raw = open(rawpath, "w")
    raw.write(json.dumps({"machine": info, "args": vars(a)}) + "\n")

    results = {}           # n -> list of run records
    base_rss = {}
    endings = {}
    t_start = time.monotonic()
    for si, n in enumerate(sizes):
        fleet = Fleet(a.base_port, n, a.shard)
        cfg = os.path.join(a.workdir, f"fleet-{n}.json")
        write_config(cfg, a.base_port, n)
        if si == 0:
            cfg1 = os.path.join(a.workdir, "fleet-1.json")
            write_config(cfg1, a.base_port, 1)
            base = {c: [] for c in CLIENTS}
            for run in range(a.runs):
                for c in CLIENTS[run % 3:] + CLIENTS[:run % 3]:
                    r = run_client(c, a, 1, cfg1, fleet)
                    raw.write(json.dumps({"baseline": r}) + "\n")
                    base[c].append(r["dial"]["max_rss_kib"])
            base_rss = {c: med(v) for c, v in base.items()}
            log(f"baseline peak RSS after one dial (KiB): {base_rss}")
        recs = []
        for run in range(a.runs):
            order = CLIENTS[run % 3:] + CLIENTS[:run % 3]
            for c in order:
                if c == "sdk" and n >= a.large and run >= a.sdk_runs_large:
                    continue
                t0 = time.monotonic()
                r = run_client(c, a, n, cfg, fleet)
                derive(r, n, a.pings, base_rss)
                r["run"] = run + 1
                recs.append(r)
                raw.write(json.dumps(r) + "\n")
                raw.flush()
                log(f"N={n} run {run + 1} {c}: {time.monotonic() - t0:.1f} s,"
                    f" open {r['open']}/{n}, "
                    f"{r['cpu_per_dial_us']:.0f} us/dial, "
                    f"{r['cpu_per_ping_us']:.0f} us/ping, "
                    f"dial RSS {r['dial']['max_rss_kib']} KiB, "
                    f"rc {r['rc']}")
        results[n] = recs
        if not a.no_endings_check:
            endings[n] = endings_check(a, n, cfg, fleet)
            raw.write(json.dumps({"endings_check": endings[n]}) + "\n")
            log(f"N={n} endings check: {endings[n]}")
        fleet.stop()
        time.sleep(1.0)
    idle = None
    if a.idle:
        log(f"idle: mcptop watch on {a.idle_n} servers for "
            f"{a.idle_seconds} s")
        idle = idle_run(a, a.idle_n, a.idle_seconds)
        raw.write(json.dumps({"idle": idle}) + "\n")
        log(f"idle: {idle}")
    total = time.monotonic() - t_start
    raw.write(json.dumps({"total_s": total}) + "\n")
    with open("/proc/loadavg") as f:
        info["loadavg_at_end"] = " ".join(f.read().split()[:3])
    raw.write(json.dumps({"loadavg_at_end": info["loadavg_at_end"]}) + "\n")
    raw.close()
    write_results(a, info, sizes, results, base_rss, endings, idle, total)
    log(f"done in {total:.0f} s; wrote {a.out} and {rawpath}")


# ---------------------------------------------------------------- report

def report_from_raw(a):
    """Rebuild RESULTS.md from a raw.jsonl of an earlier run."""
    info, args, results, base, endings, idle, total = None, None, {}, {}, \
        {}, None, 0.0
    with open(a.from_raw) as f:
        for line in f:
            d = json.loads(line)
            if "machine" in d:
                info, args = d["machine"], d["args"]
            elif "baseline" in d:
                r = d["baseline"]
                base.setdefault(r["client"], []).append(r["dial"]["max_rss_kib"])
            elif "endings_check" in d:
                endings[d["endings_check"]["n"]] = d["endings_check"]
            elif "idle" in d:
                idle = d["idle"]
            elif "total_s" in d:
                total = d["total_s"]
            elif "loadavg_at_end" in d:
                info["loadavg_at_end"] = d["loadavg_at_end"]
            elif "client" in d:
                results.setdefault(d["n"], []).append(d)
    base_rss = {c: med(v) for c, v in base.items()}
    for k in ("runs", "pings", "sdk_runs_large", "large", "base_port",
              "shard", "mcptop_timeout"):
        setattr(a, k, args[k])
    for n, recs in results.items():
        for r in recs:
            derive(r, n, a.pings, base_rss)
    sizes = sorted(results)
    write_results(a, info, sizes, results, base_rss, endings, idle, total)
    log(f"wrote {a.out} from {a.from_raw}")


def write_results(a, info, sizes, results, base_rss, endings, idle, total):
    L = []
    w = L.append
    w("# mcptop benchmark results (issue 7)\n")
    w(f"Generated by `bench/run` on {info['date']} in {total / 60:.1f} min.\n")
    w("## Machine\n")
    w("| | |\n| --- | --- |")
    for k in ("nproc", "cpu", "mem", "os", "kernel", "libcurl", "libev",
              "node", "sdk", "cc", "mcptop", "mcptop_commit", "ulimit_n",
              "ephemeral", "loadavg_at_start", "loadavg_at_end"):
        w(f"| {k} | {info.get(k, '?')} |")
    w("")
    w("## What was run\n")
    w(f"- Fleet: `bench/fleetserver.mjs`, N minimal MCP Streamable HTTP "
      f"servers on 127.0.0.1:{a.base_port}.. (JSON answers, never closes an "
      f"idle kept-alive connection); at most {a.shard} servers per Node "
      "process (the file-descriptor limit decides; see README).")
    w(f"- Workload per client: dial N (initialize, notifications/initialized,"
      f" tools/list; at most 50 dials in flight), {a.pings} synchronized "
      "ping rounds over every session, end every session (DELETE, all at "
      "once).")
    w("- Clients: **mcptop** = `mcptop check -c FLEET --json --pings "
      f"{a.pings} --stats --timeout {a.mcptop_timeout}`; **floor** = `bench/floor.c` (libcurl multi "
      "socket + libev, the same HTTP requests as mcptop -- including the "
      "2026-07-28 era probe (POST server/discover, answered 400 by these "
      "legacy servers) that mcptop sends before initialize when a server's "
      "era is not configured -- same easy-handle options, no MCP logic, "
      "CURLOPT_DNS_CACHE_TIMEOUT -1); **sdk** = `bench/sdkclient.mjs` "
      "(@modelcontextprotocol/sdk Client + StreamableHTTPClientTransport; "
      "no probe, but it opens the optional GET stream after "
      "notifications/initialized, answered 405).")
    w(f"- {a.runs} runs per client and size, interleaved (the order rotates "
      "each run); at N ≥ "
      f"{a.large} the SDK ran {a.sdk_runs_large} time(s). Cells: median "
      "[min–max].")
    w("- CPU = user + system of the whole client process within the phase "
      "(getrusage / process.cpuUsage, all threads). CPU/dial = dial-phase "
      f"CPU / N; CPU/ping = ping-phase CPU / (N × {a.pings}).")
    w("- RSS/session = (peak RSS at the end of the dial phase at N − the "
      "same client's median peak RSS at the end of the dial phase with a "
      "one-server fleet) / (N − 1). Baselines (KiB): " +
      ", ".join(f"{c} {fmt(v)}" for c, v in base_rss.items()) + ".")
    w("- Ping round = median of the rounds' wall times; endings = wall time "
      "from the first DELETE to the last outcome.")
    w(f"- `--timeout {a.mcptop_timeout}` (request timeout and open deadline; "
      "the SDK's default request timeout is 60 s, the floor has none): with "
      "the defaults (10 s) `mcptop check` bounds the whole check by "
      "open deadline + timeout × R + 2 s = 62 s, which 10,000 servers "
      "overrun, and the check then stops mid-phase and misreports its "
      "phases (see ANALYSIS below). The teardown deadline stays at its "
      "default, 3000 ms.")
    w("")
    for n in sizes:
        recs = results[n]
        w(f"## N = {n:,}\n")
        w("| metric | mcptop | floor | sdk | sdk / mcptop | mcptop / floor |")
        w("| --- | --- | --- | --- | --- | --- |")
        rows = [("CPU per dial (µs)", "cpu_per_dial_us", 0),
                ("CPU per ping (µs)", "cpu_per_ping_us", 0),
                ("RSS per open session (KiB)", "rss_per_session_kib", 1),
                ("peak RSS after dials (KiB)", "dial_peak_rss_kib", 0),
                ("peak RSS, whole run (KiB)", "peak_rss_kib", 0),
                ("dial phase wall (ms)", "dial_wall_ms", 0),
                ("one ping round wall (ms)", "ping_round_median_ms", 1),
                ("end all sessions wall (ms)", "endings_wall_ms", 1),
                ("fleet server CPU during the run (ms)", "server_cpu_ms", 0),
                ("fleet server CPU per request (µs)",
                 "server_cpu_per_client_req_us", 0),
                ("pings completed (of N × R)", "pings_completed", 0),
                ("HTTP requests per session (fleet count)",
                 "server_requests_per_session", 1),
                ("TCP connections opened to the fleet", "server_connections",
                 0)]
        for r in recs:
            r["server_cpu_ms"] = r["server_cpu_us"] / 1000.0
        for label, key, dg in rows:
            vals = {c: [r[key] for r in recs if r["client"] == c]
                    for c in CLIENTS}
            m = {c: med(v) for c, v in vals.items()}
            rs = (m["sdk"] / m["mcptop"]) if m["sdk"] and m["mcptop"] else None
            rf = (m["mcptop"] / m["floor"]) if m["mcptop"] and m["floor"] \
                else None
            w(f"| {label} | {mmm(vals['mcptop'], dg)} | "
              f"{mmm(vals['floor'], dg)} | {mmm(vals['sdk'], dg)} | "
              f"{fmt(rs, 2) + '×' if rs else '—'} | "
              f"{fmt(rf, 2) + '×' if rf else '—'} |")
        opens = {c: [r["open"] for r in recs if r["client"] == c]
                 for c in CLIENTS}
        w("")
        w("Sessions opened per run: " + "; ".join(
            f"{c} {opens[c]}" for c in CLIENTS) + f" (of {n}).")
        sdk = [r for r in recs if r["client"] == "sdk"]
        if sdk and sdk[0].get("rss_after_dial_gc_kib"):
            b = base_rss.get("sdk")
            per = [(r["rss_after_dial_gc_kib"] - b) / (n - 1) for r in sdk
                   if r.get("rss_after_dial_gc_kib")]
            w(f"SDK RSS after a forced full GC with every session open "
              f"(outside the phases): {mmm([r['rss_after_dial_gc_kib'] for r in sdk])}"
              f" KiB, i.e. {mmm(per, 1)} KiB per session against the same "
              "baseline.")
        fl = [r for r in recs if r["client"] == "floor"]
        if fl:
            w(f"Floor connections made (dial/pings/endings): "
              f"{fl[0]['connects']}.")
        if n in endings:
            e = endings[n]
            w(f"Endings check (one extra `mcptop check --pings 1 --log`): "
              f"{e['endings']} endings of {e['sessions_open_before']} open "
              f"sessions, outcomes {e['outcomes']}, {e['settled']} settled; "
              f"slowest outcome {fmt(e['max_duration_ms'], 1)} ms, median "
              f"{fmt(e['median_duration_ms'], 1)} ms, against a teardown "
              f"deadline of {e['teardown_ms']} ms; endings phase "
              f"{fmt(e['endings_phase_wall_ms'], 1)} ms.")
        w("")
    if idle:
        w("## Idle cost\n")
        w(f"`mcptop watch` on {idle['n']:,} healthy servers, default ping "
          f"interval (15 s), measured for {idle['seconds']:.0f} s after every "
          f"dial completed ({idle['dialed']} dialed): "
          f"**{idle['cpu_pct_of_core']:.2f}% of one core** "
          f"({idle['cpu_s']:.2f} s CPU from /proc/PID/stat utime+stime, "
          f"{idle['clock_ticks_per_s']} ticks/s); {idle['pings_in_window']} "
          f"pings in the window ({idle['pings_completed']} completed), "
          f"{fmt(idle['cpu_us_per_ping'])} µs CPU per ping including "
          f"timers and the JSON Lines output; fleet server "
          f"{idle['server_cpu_s']:.2f} s CPU, "
          f"{idle['server_connections_opened']} new connections.\n")
    write_targets(w, a, sizes, results, endings, idle)
    analysis = os.path.join(BENCH, "ANALYSIS.md")
    if os.path.exists(analysis):
        with open(analysis) as f:
            w(f.read())
    with open(a.out, "w") as f:
        f.write("\n".join(L) + "\n")


def write_targets(w, a, sizes, results, endings, idle):
    w("## Targets\n")
    w("| target | N | measured | holds? |")
    w("| --- | --- | --- | --- |")

    def m(n, c, k):
        return med([r[k] for r in results[n] if r["client"] == c])
    for n in sizes:
        for key, label in (("cpu_per_dial_us", "CPU per dial"),
                           ("cpu_per_ping_us", "CPU per ping")):
            mc, fl = m(n, "mcptop", key), m(n, "floor", key)
            if mc and fl:
                r = mc / fl
                w(f"| mcptop {label} ≤ 1.3× floor | {n:,} | {mc:.0f} / "
                  f"{fl:.0f} µs = {r:.2f}× | {'yes' if r <= 1.3 else 'NO'} |")
    big = max(sizes)
    rs = m(big, "mcptop", "rss_per_session_kib")
    if rs is not None:
        w(f"| ≤ 20 KiB RSS per open HTTP session | {big:,} | {rs:.1f} KiB | "
          f"{'yes' if rs <= 20 else 'NO'}{'' if big >= 10000 else ' (N < 10,000)'} |")
    if idle:
        w(f"| idle CPU < 1% of a core | {idle['n']:,} | "
          f"{idle['cpu_pct_of_core']:.2f}% | "
          f"{'yes' if idle['cpu_pct_of_core'] < 1 else 'NO'} |")
    else:
        w("| idle CPU < 1% of a core | 1,000 | not run (`--idle`) | — |")
    if big in endings:
        e = endings[big]
        ok = (e["outcomes"].get("terminated", 0) == e["sessions_open_before"]
              and e["max_duration_ms"] is not None
              and e["max_duration_ms"] <= e["teardown_ms"])
        w(f"| every ending's outcome by its deadline ({e['teardown_ms']} ms) "
          f"| {big:,} | outcomes {e['outcomes']} for "
          f"{e['sessions_open_before']} open sessions; slowest "
          f"{fmt(e['max_duration_ms'], 1)} ms | {'yes' if ok else 'NO'} |")
        ew = [r["endings_wall_ms"] for r in results[big]
              if r["client"] == "mcptop"]
        w(f"| (measured runs) mcptop end-all wall ≤ deadline | {big:,} | "
          f"{mmm(ew, 1)} ms | {'yes' if max(ew) <= e['teardown_ms'] else 'NO'} |")
    w("")


if __name__ == "__main__":
    main()
