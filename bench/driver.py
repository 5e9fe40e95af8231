#!/usr/bin/env python3
"""mcptop bench driver (started by bench/run, which builds the binaries,
raises the file-descriptor limit and cleans up the process group).

Sections (all by default; --only picks some):
  check  mcptop check --pings R and the floor (bench/floor.c), alternating,
         --runs pairs per cell; cells: fleet (json: bench/fleetserver.mjs,
         sse: bench/sdkfleet.mjs, the official SDK's server) x ports
         (distinct: one port per server, one: every server on one port)
         x size. Per run: the whole process's user+sys (wait4 of the
         client), the per-phase figures the client prints itself, the
         fleet's own CPU and the TCP connections it accepted.
  idle   mcptop watch on --idle-n servers, distinct ports, default
         interval: CPU % of a core in --idle-windows windows of
         --idle-seconds after every session is open (and, on the SSE fleet,
         every GET stream) and a warm-up.
  tui    the same for the TUI, run detached in tmux.
  rss    RSS per open session at --rss-n servers: mcptop watch on the SSE
         fleet (GET streams open) and on the JSON fleet (no streams),
         against watch with one server; the floor's dial-phase peak.
  instructions (only when named: bench/run --instructions) the check cells
         (--sizes 100,1000, distinct ports, both fleets) under callgrind,
         mcptop and the floor one after the other, --instr-runs each:
         whole-process instructions and their split by phase; then --runs
         alternating pairs without callgrind for the CPU ratio beside them.
         Labels issue30-before|after|interim-NAME write
         results/issue30-LABEL.jsonl (issue 30's section of RESULTS.md).

Raw records go to bench/results/<label>.jsonl for --label before|after
(merged: a section run again replaces that section's records), else to
WORKDIR/<label>.jsonl; RESULTS.md is rebuilt from results/before.jsonl and
results/after.jsonl (--report rebuilds it without running anything).
"""
import argparse
import ctypes
import datetime
import json
import os
import platform
import re
import select
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
MODULES = os.path.join(REPO, "tests", "node_modules")
SDK_DIR = os.path.join(MODULES, "@modelcontextprotocol", "sdk")
RESULTS = os.path.join(BENCH, "results")
SECTIONS = ["check", "idle", "tui", "rss"]
# Selectable with --only (bench/run --instructions), never a default: the
# check cells under callgrind (issue 30).
EXTRA_SECTIONS = ["instructions"]
LABELS = ["before", "after"]
# Issue 30's labels: results/issue30-LABEL.jsonl, a section of their own.
I30 = "issue30-"
# Fleet kinds. sse-keep: the SDK fleet with a keep-alive timeout past the
# ping interval, so that idle connections stay in the client's pool.
FLEET_SCRIPT = {"json": "fleetserver.mjs", "sse": "sdkfleet.mjs",
                "sse-keep": "sdkfleet.mjs"}
SSE_KEEP_MS = 120000
PORTS_NAME = {"distinct": "distinct ports", "one": "one port"}
START_S = time.monotonic()
CLIENT_PGID = None      # the process group of the client being measured


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')} +{time.monotonic() - START_S:5.0f}s] "
          f"{msg}", file=sys.stderr, flush=True)


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


_libc = ctypes.CDLL(None, use_errno=True)


def _die_with_parent():
    """preexec_fn: SIGTERM when the driver dies, whatever kills it."""
    _libc.prctl(1, signal.SIGTERM)      # PR_SET_PDEATHSIG


# ---------------------------------------------------------------- ports

def listening_ports():
    ports = set()
    for fn in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            with open(fn) as f:
                next(f)
                for line in f:
                    p = line.split()
                    if p[3] == "0A":                 # LISTEN
                        ports.add(int(p[1].rsplit(":", 1)[1], 16))
        except OSError:
            pass
    return ports


def ephemeral_low():
    with open("/proc/sys/net/ipv4/ip_local_port_range") as f:
        return int(f.read().split()[0])


def pick_base(span, want=None, avoid=()):
    """A base port with [base, base+span) free and below the ephemeral
    range (so no client connection can take one). Other sessions on the
    machine may run fleets too: never assume a fixed range is free."""
    lo = ephemeral_low()
    busy = listening_ports()
    cands = ([want] if want else []) + list(range(10000, lo - span, 500))
    for b in cands:
        if b in avoid or b + span > lo:
            continue
        if not any(p in busy for p in range(b, b + span)):
            return b
    raise RuntimeError(f"no free range of {span} ports below {lo}")


# ---------------------------------------------------------------- fleet

class Fleet:
    """N servers of one kind (json|sse) on distinct ports or one port, in
    shards of at most `shard` servers per Node process (distinct ports)."""

    def __init__(self, a, kind, ports, n):
        self.kind, self.ports, self.n = kind, ports, n
        self.procs = []
        self.ready = []
        span = 1 if ports == "one" else n
        tried = []
        for attempt in range(4):
            self.base = pick_base(span, a.base_port if attempt == 0 else None,
                                  tried)
            tried.append(self.base)
            try:
                self._start(a)
                break
            except RuntimeError as e:
                self.stop()
                if "EADDRINUSE" not in str(e) or attempt == 3:
                    raise
                log(f"{e}; trying another range")
        log(f"{kind} fleet of {n} up ({PORTS_NAME[ports]}, base {self.base}, "
            f"{len(self.procs)} Node process(es))")

    def _start(self, a):
        self.procs, self.ready = [], []
        shard = self.n if self.ports == "one" else a.shard
        first = 0
        while first < self.n:
            count = min(shard, self.n - first)
            cmd = [a.node, os.path.join(BENCH, FLEET_SCRIPT[self.kind]),
                   "--base-port", str(self.base), "--count", str(count)]
            if self.ports == "one":
                cmd.append("--one-port")
            else:
                cmd += ["--first", str(first)]
            if self.kind == "sse-keep":
                cmd += ["--keep-alive-timeout", str(SSE_KEEP_MS)]
            elif self.kind == "sse" and a.keep_alive_timeout is not None:
                cmd += ["--keep-alive-timeout", str(a.keep_alive_timeout)]
            errpath = os.path.join(a.workdir, f"fleet-{self.kind}-{first}"
                                   ".stderr")
            with open(errpath, "w") as errf:
                # stderr to a file: a full pipe would block Node.
                p = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                     stderr=errf, stdin=subprocess.DEVNULL,
                                     preexec_fn=_die_with_parent)
            p.linebuf = b""
            self.procs.append(p)
            line = self._readline(p, 120)
            if not line.startswith("fleetserver ready"):
                time.sleep(0.2)
                with open(errpath) as f:
                    err = f.read()[-600:]
                raise RuntimeError(f"{self.kind} fleet shard at {first} did "
                                   f"not start: {line.strip()} {err.strip()}")
            self.ready.append(json.loads(line[len("fleetserver ready "):]))
            first += count

    @staticmethod
    def _readline(p, timeout):
        """One line from a shard's stdout within timeout s ('' at EOF)."""
        end = time.monotonic() + timeout
        fd = p.stdout.fileno()
        while b"\n" not in p.linebuf:
            left = end - time.monotonic()
            if left <= 0:
                raise RuntimeError(f"fleet: no answer within {timeout} s")
            r, _, _ = select.select([fd], [], [], left)
            if r:
                chunk = os.read(fd, 65536)
                if not chunk:
                    return ""
                p.linebuf += chunk
        line, p.linebuf = p.linebuf.split(b"\n", 1)
        return line.decode() + "\n"

    def url(self, i):
        if self.ports == "one":
            return f"http://127.0.0.1:{self.base}/mcp/{i}"
        return f"http://127.0.0.1:{self.base + i}/mcp"

    def floor_args(self):
        args = ["--base-port", str(self.base), "--count", str(self.n)]
        return args + (["--one-port"] if self.ports == "one" else [])

    def write_config(self, path, extra=None):
        d = {"mcpServers": {f"s{i:05d}": {"url": self.url(i)}
                            for i in range(self.n)}}
        if extra:
            d["mcptop"] = extra
        with open(path, "w") as f:
            json.dump(d, f)
        return path

    def stats(self):
        """Sum of every shard's stats line (SIGUSR2)."""
        tot = {}
        for p in self.procs:
            p.send_signal(signal.SIGUSR2)
            while True:
                line = self._readline(p, 30)
                if not line:
                    raise RuntimeError("fleet shard died")
                if line.startswith("fleetserver stats "):
                    break
            d = json.loads(line[len("fleetserver stats "):])
            for k, v in d.items():
                if isinstance(v, (int, float)) and k != "pid":
                    tot[k] = tot.get(k, 0) + v
        return tot

    def wait_for(self, pred, timeout, what):
        """Poll the fleet's counters until pred(stats) holds."""
        end = time.monotonic() + timeout
        st = self.stats()
        while not pred(st):
            if time.monotonic() > end:
                raise RuntimeError(f"{what}: not reached within {timeout} s "
                                   f"(sessions {st.get('sessions_live')}, "
                                   f"streams {st.get('streams_open')})")
            time.sleep(1.0)
            st = self.stats()
        return st

    def stop(self):
        for p in self.procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in self.procs:
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        self.procs = []


def fleet_args(workdir, base_port=None, node="node", shard=0,
               keep_alive_timeout=None):
    """The options a Fleet reads, for the scripts that share the fleets
    (bench/exporter.py)."""
    import resource
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    return argparse.Namespace(
        workdir=workdir, base_port=base_port, node=node,
        shard=shard or max(100, (soft - 200) // 3),
        keep_alive_timeout=keep_alive_timeout)


# ---------------------------------------------------------------- clients

def client_cmd(name, a, fleet, cfg):
    if name == "mcptop":
        # --timeout: the run bound is open deadline + timeout x R + 2 s.
        return [a.mcptop, "check", "-c", cfg, "--json", "--pings",
                str(a.pings), "--stats", "--timeout", str(a.mcptop_timeout)]
    if name == "floor":
        return [a.floor] + fleet.floor_args() + ["--pings", str(a.pings)] + \
            a.floor_extra
    if name == "floor-old":
        # The floor as it was before issue 19: one multi handle, DNS cache
        # timeout -1 on every transfer.
        return [a.floor] + fleet.floor_args() + ["--pings", str(a.pings),
                                                 "--servers-per-multi", "0",
                                                 "--dns-cache-timeout", "-1"]
    args = fleet.floor_args()
    return [a.node, "--expose-gc", "--max-old-space-size=16384",
            os.path.join(BENCH, "sdkclient.mjs")] + args + \
        ["--pings", str(a.pings)]


def run_measured(cmd, timeout, workdir):
    """Run cmd through a small shell that forks it (Linux carries a
    process's peak RSS across exec and from the forking parent, so a client
    forked straight from Python would report Python's RSS as its own). The
    rusage from wait4 on that shell covers the shell (about 1 ms) and the
    client it waited for: the whole process's user+sys and peak RSS."""
    global CLIENT_PGID
    out = tempfile.TemporaryFile(mode="w+", dir=workdir)
    err = tempfile.TemporaryFile(mode="w+", dir=workdir)
    t0 = time.monotonic()
    # Its own process group, so that a run past its time can be killed
    # whole (the shell and the client), and nothing else.
    p = subprocess.Popen(["/bin/sh", "-c", '"$@"; exit $?', "sh"] + cmd,
                         stdout=out, stderr=err, stdin=subprocess.DEVNULL,
                         process_group=0)
    CLIENT_PGID = p.pid
    end = t0 + timeout
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid == p.pid:
            break
        if time.monotonic() > end:
            os.killpg(p.pid, signal.SIGKILL)
            pid, status, ru = os.wait4(p.pid, 0)
            status = -1
            break
        time.sleep(0.02)
    CLIENT_PGID = None
    p.returncode = os.waitstatus_to_exitcode(status) if status != -1 else -1
    wall = time.monotonic() - t0
    out.seek(0)
    err.seek(0)
    o, e = out.read(), err.read()
    out.close()
    err.close()
    return {"rc": p.returncode, "wall_s": wall, "cpu_user_s": ru.ru_utime,
            "cpu_sys_s": ru.ru_stime, "cpu_s": ru.ru_utime + ru.ru_stime,
            "maxrss_kib": ru.ru_maxrss}, o, e


def run_client(name, a, fleet, cfg):
    la = loadavg()
    before = fleet.stats()
    m, out, err = run_measured(client_cmd(name, a, fleet, cfg), a.run_timeout,
                               a.workdir)
    after = fleet.stats()
    r = {"type": "check", "client": name, "fleet": fleet.kind,
         "ports": fleet.ports, "n": fleet.n, "loadavg": la, **m,
         "server_cpu_us": after["cpu_us"] - before["cpu_us"],
         "server_requests": after["requests"] - before["requests"],
         "server_connections": after["connections"] - before["connections"],
         "sessions_live_after": after["sessions_live"],
         "stderr_tail": err[-400:]}
    try:
        d = json.loads(out.strip().splitlines()[-1])
    except Exception:
        r["error"] = f"no JSON (rc {m['rc']}): {out[-300:]} {err[-300:]}"
        return r
    st = d.get("stats", {})
    r["phases"] = {k: st.get(k) for k in ("dial", "pings", "endings")}
    r["ping_round_ms"] = st.get("ping_round_ms")
    if name == "mcptop":
        r["open"] = sum(1 for s in d["servers"] if s["ok"])
        r["pings_completed"] = (d["summary"].get("pings") or {}).get("count", 0)
    else:
        r["open"] = d["summary"]["sessions_open"]
        r["pings_completed"] = (d["summary"].get("pings") or {}).get("count", 0)
        r["ended"] = d["summary"].get("ended")
    if name.startswith("floor"):
        r["floor_connects"] = {k: (st.get(k) or {}).get("connects")
                               for k in ("dial", "pings", "endings")}
        r["floor_settings"] = {k: d.get(k) for k in (
            "dns_cache_timeout", "multis", "servers_per_multi", "probe")}
    return r


def section_check(a, emit):
    clients = a.clients
    for kind in a.fleets:
        for ports in a.ports:
            for n in a.sizes:
                fleet = Fleet(a, kind, ports, n)
                try:
                    cfg = fleet.write_config(os.path.join(
                        a.workdir, f"{kind}-{ports}-{n}.json"))
                    # One unmeasured run warms the fleet (Node's JIT).
                    run_measured([a.floor] + fleet.floor_args() +
                                 ["--pings", "1"], a.run_timeout, a.workdir)
                    for k in range(a.runs):
                        order = clients[k % len(clients):] + \
                            clients[:k % len(clients)]
                        for pos, c in enumerate(order):
                            r = run_client(c, a, fleet, cfg)
                            r["pair"], r["order"] = k + 1, pos
                            emit(r)
                            log(f"check {kind}/{ports}/{n} #{k + 1} {c}: "
                                f"{r['cpu_s'] * 1000:.0f} ms CPU, "
                                f"{r['wall_s']:.1f} s, open "
                                f"{r.get('open')}/{n}, "
                                f"{r['server_connections']} connects"
                                + (f", ERROR {r['error']}" if 'error' in r
                                   else ""))
                finally:
                    fleet.stop()


# ---------------------------------------------------------------- instructions

# Callgrind splits a run into parts at every getrusage call, which both
# clients make exactly at their phase marks (check.c check_mark, floor.c
# floor_mark): part 1 is start-up (libraries, config, the fleet's
# structures), then the dial, the pings, [mcptop: building the report],
# the endings, and the last part the report's printing and exit.
INSTR_PARTS = ("startup", "dial", "pings", "endings", "report_exit")


def callgrind_parts(prefix):
    """{part: instructions} from the files of one run made with
    --callgrind-out-file=PREFIX --dump-before=getrusage (PREFIX.1, .2, ...
    in order; PREFIX itself is what was left at exit)."""
    def total(path):
        with open(path) as f:
            for line in f:
                if line.startswith("totals:"):
                    return int(line.split()[1])
        raise RuntimeError(f"{path}: no totals line")
    numbered = []
    d, base = os.path.split(prefix)
    for fn in os.listdir(d):
        m = re.fullmatch(re.escape(base) + r"\.(\d+)", fn)
        if m:
            numbered.append((int(m.group(1)), os.path.join(d, fn)))
    parts = [total(p) for _, p in sorted(numbered)] + [total(prefix)]
    if len(parts) < 5:
        raise RuntimeError(f"{prefix}: {len(parts)} parts, not the phases "
                           "(startup, dial, pings, ..., endings, exit)")
    return {"startup": parts[0], "dial": parts[1], "pings": parts[2],
            "endings": parts[-2],
            "report_exit": sum(parts[3:-2]) + parts[-1],
            "total": sum(parts), "nparts": len(parts)}


def run_callgrind(name, a, fleet, cfg, rep):
    """One run of a client under callgrind: whole-process instructions
    (Ir) and their split by phase."""
    prefix = os.path.join(a.workdir, f"cg-{a.label}-{fleet.kind}-{fleet.n}-"
                          f"{name}-{rep}.out")
    d, base = os.path.split(prefix)
    for fn in os.listdir(d):
        if fn == base or fn.startswith(base + "."):
            os.unlink(os.path.join(d, fn))
    cmd = [a.valgrind, "--tool=callgrind", f"--callgrind-out-file={prefix}",
           "--dump-before=getrusage"] + client_cmd(name, a, fleet, cfg)
    la = loadavg()
    before = fleet.stats()
    m, out, err = run_measured(cmd, a.instr_timeout, a.workdir)
    after = fleet.stats()
    r = {"type": "instructions", "tool": "callgrind", "client": name,
         "fleet": fleet.kind, "ports": fleet.ports, "n": fleet.n,
         "pings": a.pings, "rep": rep, "loadavg": la, "rc": m["rc"],
         "wall_s": m["wall_s"],
         "server_connections": after["connections"] - before["connections"],
         "callgrind_out": prefix}
    try:
        r.update(callgrind_parts(prefix))
        d = json.loads(out.strip().splitlines()[-1])
    except Exception as e:
        r["error"] = f"{e} (rc {m['rc']}): {out[-300:]} {err[-300:]}"
        return r
    if name == "mcptop":
        r["open"] = sum(1 for s in d["servers"] if s["ok"])
    else:
        r["open"] = d["summary"]["sessions_open"]
    r["pings_completed"] = (d["summary"].get("pings") or {}).get("count", 0)
    if r["open"] != fleet.n or r["pings_completed"] != fleet.n * a.pings:
        r["error"] = (f"open {r['open']}/{fleet.n}, pings "
                      f"{r['pings_completed']}/{fleet.n * a.pings}")
    return r


def section_instructions(a, emit):
    """The check cells under callgrind (mcptop and the floor on the same
    fleet, one after the other, alternating which goes first), then
    --runs alternating pairs without it for the CPU ratio."""
    clients = ["mcptop", "floor"]
    if shutil.which(a.valgrind) is None:
        raise RuntimeError("instructions: valgrind is not installed "
                           "(apt-get install valgrind)")
    for kind in a.fleets:
        for ports in a.ports:
            for n in a.sizes:
                fleet = Fleet(a, kind, ports, n)
                try:
                    cfg = fleet.write_config(os.path.join(
                        a.workdir, f"instr-{kind}-{ports}-{n}.json"))
                    run_measured([a.floor] + fleet.floor_args() +
                                 ["--pings", "1"], a.run_timeout, a.workdir)
                    for k in range(a.instr_runs):
                        order = clients if k % 2 == 0 else clients[::-1]
                        for c in order:
                            r = run_callgrind(c, a, fleet, cfg, k + 1)
                            emit(r)
                            log(f"instructions {kind}/{ports}/{n} #{k + 1} "
                                f"{c}: {r.get('total', 0) / 1e6:.1f} M Ir, "
                                f"{r['wall_s']:.1f} s"
                                + (f", ERROR {r['error']}" if 'error' in r
                                   else ""))
                    for k in range(a.runs):
                        order = clients if k % 2 == 0 else clients[::-1]
                        for pos, c in enumerate(order):
                            r = run_client(c, a, fleet, cfg)
                            r["type"] = "instructions_cpu"
                            r["pair"], r["order"] = k + 1, pos
                            emit(r)
                            log(f"instructions {kind}/{ports}/{n} CPU pair "
                                f"#{k + 1} {c}: {r['cpu_s'] * 1000:.0f} ms"
                                + (f", ERROR {r['error']}" if 'error' in r
                                   else ""))
                finally:
                    fleet.stop()


def instr_cells(recs):
    """{(fleet, ports, n): {"ir": {client: [records]}, "cpu": {client:
    [records]}}}"""
    out = {}
    for r in recs:
        t = r.get("type")
        if t not in ("instructions", "instructions_cpu") or "error" in r:
            continue
        c = out.setdefault((r["fleet"], r["ports"], r["n"]),
                           {"ir": {}, "cpu": {}})
        c["ir" if t == "instructions" else "cpu"].setdefault(
            r["client"], []).append(r)
    return out


def instr_summary(cell):
    """Medians and ratios of one cell: instructions whole and per phase,
    the CPU ratio of the pairs."""
    s = {}
    m, f = cell["ir"].get("mcptop", []), cell["ir"].get("floor", [])
    for part in ("total",) + INSTR_PARTS:
        mm, ff = med([r[part] for r in m]), med([r[part] for r in f])
        s[part] = (mm, ff, mm / ff if mm and ff else None)
    s["ir_spread"] = max([spread([r["total"] for r in m]) or 1.0,
                          spread([r["total"] for r in f]) or 1.0])
    s["ir_runs"] = min(len(m), len(f))
    cm, cf = cell["cpu"].get("mcptop", []), cell["cpu"].get("floor", [])
    fm = {r["pair"]: r for r in cf}
    s["pair_ratios"] = [r["cpu_s"] / fm[r["pair"]]["cpu_s"] for r in cm
                        if r["pair"] in fm and fm[r["pair"]]["cpu_s"] > 0]
    s["cpu_ms"] = (med([r["cpu_s"] * 1000 for r in cm]),
                   med([r["cpu_s"] * 1000 for r in cf]))
    s["loadavg"] = [float(r["loadavg"].split()[0]) for r in cm + cf]
    return s


def instr_rows(recs):
    """(row label, value text, holds?, target) for the issue 30 table."""
    rows = []
    cs = instr_cells(recs)
    for key in sorted(cs, key=lambda k: (k[0], k[1], k[2])):
        s = instr_summary(cs[key])
        t = s["total"]
        if t[2] is not None:
            rows.append((f"instructions, check --pings 5, mcptop / floor: "
                         f"{key[0]}, {PORTS_NAME[key[1]]}, {key[2]:,}",
                         f"{x(t[2])} ({t[0] / 1e6:,.0f} / {t[1] / 1e6:,.0f}"
                         " M)", t[2] <= 1.10, "≤ 1.10×"))
        if s["pair_ratios"]:
            rows.append((f"CPU (loaded machine), check --pings 5, paired "
                         f"median: {key[0]}, {PORTS_NAME[key[1]]}, "
                         f"{key[2]:,}",
                         f"{x(med(s['pair_ratios']))} [{x(min(s['pair_ratios']))}"
                         f"–{x(max(s['pair_ratios']))}] (load "
                         f"{min(s['loadavg']):.1f}–{max(s['loadavg']):.1f})",
                         med(s["pair_ratios"]) <= 1.10, "≤ 1.10×"))
    return rows


def write_instr_section(w, label, recs):
    cs = instr_cells(recs)
    if not cs:
        return
    machines = [r for r in recs if r.get("type") == "machine" and
                "instructions" in r["sections"]]
    name = label[len(I30):] if label.startswith(I30) else label
    w(f"### {name.capitalize()}: instructions per cell\n")
    for mi in machines:
        w(f"Run on {mi['date']}, mcptop {mi['mcptop_commit']}, took "
          f"{fmt(mi.get('total_s', 0) / 60, 1)} min; load average "
          f"{mi['loadavg_at_start']} at its start, "
          f"{mi.get('loadavg_at_end', '?')} at its end.")
    a = machines[-1]["args"] if machines else {"pings": 5}
    w("")
    w(f"`check -c FLEET --json --pings {a['pings']} --stats --timeout "
      "60000` and the floor on the same fleet, one after the other, under "
      "`valgrind --tool=callgrind --dump-before=getrusage` (both clients "
      "call getrusage exactly at their phase marks, so the parts are the "
      "phases). Instructions (Ir) in millions, median of the runs; "
      "per server = whole / N in thousands. Instruction counts do not move "
      "with the machine's load (runs of one binary agree within the "
      "spread shown); CPU ratios do: they come from alternating pairs on "
      "a machine shared with other sessions (load average shown).\n")
    w("| fleet | N | Ir mcptop / floor (M) | **ratio** | per server (k) | "
      "start-up | dial | pings (per ping, k) | endings | report + exit | "
      "Ir spread | CPU paired median [min–max] | load |")
    w("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | "
      "--- | --- |")
    pings = a["pings"]
    for key in sorted(cs, key=lambda k: (k[0], k[1], k[2])):
        s = instr_summary(cs[key])
        n = key[2]

        def ph(p):
            mm, ff, rr = s[p]
            if mm is None or ff is None:
                return "—"
            return f"{mm / 1e6:,.1f} / {ff / 1e6:,.1f} ({x(rr)})"
        pm, pf, pr = s["pings"]
        pingc = (f"{pm / 1e6:,.1f} / {pf / 1e6:,.1f} ({x(pr)}; "
                 f"{pm / (n * pings) / 1e3:,.1f} / "
                 f"{pf / (n * pings) / 1e3:,.1f})" if pm and pf else "—")
        tm, tf, tr = s["total"]
        pr_ = s["pair_ratios"]
        cpu = (f"{x(med(pr_))} [{x(min(pr_))}–{x(max(pr_))}] ({len(pr_)} "
               f"pairs; {fmt(s['cpu_ms'][0])} / {fmt(s['cpu_ms'][1])} ms)"
               if pr_ else "—")
        load = (f"{min(s['loadavg']):.1f}–{max(s['loadavg']):.1f}"
                if s["loadavg"] else "—")
        w(f"| {key[0]}{'' if key[1] == 'distinct' else ', one port'} | "
          f"{n:,} | {tm / 1e6:,.1f} / {tf / 1e6:,.1f} | **{x(tr)}** | "
          f"{tm / n / 1e3:,.0f} / {tf / n / 1e3:,.0f} | {ph('startup')} | "
          f"{ph('dial')} | {pingc} | {ph('endings')} | "
          f"{ph('report_exit')} | {x(s['ir_spread'], 3)} "
          f"({s['ir_runs']} runs) | {cpu} | {load} |")
    w("")


def write_i30_report(w):
    """Issue 30's section: a summary column per label, then the tables."""
    labels = i30_labels()
    data = {lb: load_raw(os.path.join(RESULTS, f"{lb}.jsonl"))
            for lb in labels}
    labels = [lb for lb in labels if data[lb]]
    if not labels:
        return
    w("## Issue 30: instructions against the floor, before and after\n")
    sums = {lb: {r[0]: r for r in instr_rows(data[lb])} for lb in labels}
    keys = []
    for lb in labels:
        for k in sums[lb]:
            if k not in keys:
                keys.append(k)

    def commit(lb):
        cs = []
        for r in data[lb]:
            if r.get("type") == "machine":
                c = r["mcptop_commit"].split()[0]
                if c not in cs:
                    cs.append(c)
        return f" ({', '.join(cs)})" if cs else ""
    w("| measure | target | " + " | ".join(
        lb[len(I30):] + commit(lb) for lb in labels) + " |")
    w("| --- | --- |" + " --- |" * len(labels))
    for k in keys:
        tgt = next(sums[lb][k][3] for lb in labels if k in sums[lb])
        row = []
        for lb in labels:
            r = sums[lb].get(k)
            row.append("—" if r is None else
                       r[1] + (" ✓" if r[2] else " ✗"))
        w(f"| {k} | {tgt} | " + " | ".join(row) + " |")
    w("")
    for lb in labels:
        write_instr_section(w, lb, data[lb])
    analysis = os.path.join(BENCH, "ANALYSIS-30.md")
    if os.path.exists(analysis):
        with open(analysis) as f:
            w(f.read())


def i30_labels():
    """issue30-before, any issue30-interim-* (sorted), issue30-after."""
    interim = sorted(f[:-len(".jsonl")] for f in os.listdir(RESULTS)
                     if f.startswith(I30 + "interim-") and
                     f.endswith(".jsonl")) if os.path.isdir(RESULTS) else []
    return [I30 + "before"] + interim + [I30 + "after"]


# ---------------------------------------------------------------- idle

def proc_cpu(pid):
    """utime+stime of a live process, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        s = f.read()
    fields = s[s.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_status(pid, key):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    return None


def all_open(fleet):
    """Every session open, and on the SSE fleet (which offers
    tools.listChanged) every GET stream too."""
    n = fleet.n
    if fleet.kind.startswith("sse"):
        return lambda st: st["sessions_live"] >= n and st["streams_open"] >= n
    return lambda st: st["sessions_live"] >= n


def measure_windows(a, pid, fleet, extra_pids=()):
    wins = []
    for w in range(a.idle_windows):
        t0 = time.monotonic()
        c0 = proc_cpu(pid)
        x0 = [proc_cpu(p) for p in extra_pids]
        s0 = fleet.stats()
        time.sleep(a.idle_seconds)
        c1 = proc_cpu(pid)
        x1 = [proc_cpu(p) for p in extra_pids]
        t1 = time.monotonic()
        s1 = fleet.stats()
        win = {"seconds": t1 - t0, "cpu_s": c1 - c0,
               "pct": 100.0 * (c1 - c0) / (t1 - t0),
               "other_cpu_s": sum(x1) - sum(x0),
               "server_cpu_s": (s1["cpu_us"] - s0["cpu_us"]) / 1e6,
               "server_requests": s1["requests"] - s0["requests"],
               "server_connections": s1["connections"] - s0["connections"],
               "sessions_live": s1["sessions_live"],
               "streams_open": s1["streams_open"], "loadavg": loadavg()}
        wins.append(win)
        log(f"  window {w + 1}: {win['pct']:.2f}% of a core, "
            f"{win['server_requests']} requests, "
            f"{win['server_connections']} connects")
    return wins


def stop_proc(p, sig=signal.SIGINT, timeout=30):
    if p.poll() is None:
        p.send_signal(sig)
        try:
            p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def builds(a):
    """(name, binary) of the builds measured: mcptop, and with --ab-mcptop
    the other build, alternating (a, b, a, b, ...)."""
    if not a.ab_mcptop:
        return [("a", a.mcptop)]
    return [("a", a.mcptop), ("b", a.ab_mcptop)] * a.ab_rounds


def start_measured(a, mode, binary, cfg):
    """Start watch or the TUI (in tmux); returns (pid, [other pids],
    stop())."""
    if mode == "watch":
        p = subprocess.Popen([binary, "watch", "-c", cfg],
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        return p.pid, [], lambda: stop_proc(p)
    tmux(a, "new-session", "-d", "-s", "bench", "-x", "160", "-y", "50",
         f"exec {binary} -c {cfg}")
    pid = int(tmux(a, "display-message", "-p", "-t", "bench",
                   "#{pane_pid}").stdout.strip())
    tpid = int(tmux(a, "display-message", "-p", "#{pid}").stdout.strip())

    def stop():
        try:
            os.kill(pid, signal.SIGTERM)       # ends the sessions, bounded
            end = time.monotonic() + 15
            while time.monotonic() < end and os.path.exists(f"/proc/{pid}"):
                time.sleep(0.2)
        except ProcessLookupError:
            pass
        tmux(a, "kill-server", check=False)
    return pid, [tpid], stop


def section_idle_mode(a, emit, mode, fleets):
    typ = "idle" if mode == "watch" else "tui"
    if mode == "tui" and shutil.which("tmux") is None:
        raise RuntimeError("tui: tmux is not installed (apt-get install "
                           "tmux)")
    for kind in fleets:
        fleet = Fleet(a, kind, "distinct", a.idle_n)
        try:
            cfg = fleet.write_config(os.path.join(
                a.workdir, f"{typ}-{kind}-{a.idle_n}.json"))
            for rnd, (build, binary) in enumerate(builds(a)):
                base = fleet.stats()
                t0 = time.monotonic()
                pid, others, stop = start_measured(a, mode, binary, cfg)
                try:
                    st = fleet.wait_for(
                        lambda st: all_open(fleet)(
                            {k: st[k] - base.get(k, 0) for k in
                             ("sessions_live", "streams_open")}),
                        a.open_timeout, f"{mode} on the {kind} fleet")
                    opened = time.monotonic() - t0
                    log(f"{mode}, {kind}{' build ' + build if a.ab_mcptop else ''}:"
                        f" all open in {opened:.1f} s; warm-up "
                        f"{a.idle_warmup} s, then {a.idle_windows} x "
                        f"{a.idle_seconds} s")
                    time.sleep(a.idle_warmup)
                    wins = measure_windows(a, pid, fleet, extra_pids=others)
                finally:
                    stop()
                rec = {"type": typ, "mode": mode, "fleet": kind,
                       "n": a.idle_n, "open_s": opened,
                       "streams_open": st["streams_open"] -
                       base.get("streams_open", 0), "windows": wins,
                       "keep_alive_timeout_ms": fleet.ready[0].get(
                           "keep_alive_timeout_ms")}
                if mode == "tui":
                    rec["terminal"] = "tmux 160x50"
                if a.ab_mcptop:
                    rec.update({"build": build, "round": rnd // 2 + 1,
                                "binary": a.ab_names[build]})
                emit(rec)
                # The ended sessions leave the fleet before the next build.
                try:
                    fleet.wait_for(lambda st: st["sessions_live"] <=
                                   base["sessions_live"], 60,
                                   "the sessions to end")
                except RuntimeError as e:
                    log(f"{mode}, {kind}: {e}")
            if mode == "watch" and a.idle_floor:
                idle_floor(a, emit, fleet, kind)
        finally:
            fleet.stop()


def idle_floor(a, emit, fleet, kind):
    """Issue 30: the floor pinging the same fleet at watch's default
    interval (15 s, +-10% jitter; no GET stream), measured as watch is."""
    base = fleet.stats()
    t0 = time.monotonic()
    p = subprocess.Popen([a.floor] + fleet.floor_args() +
                         ["--idle-interval", "15000"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         stdin=subprocess.DEVNULL)
    try:
        fleet.wait_for(lambda st: st["sessions_live"] - base.get(
            "sessions_live", 0) >= fleet.n, a.open_timeout,
            f"the floor on the {kind} fleet")
        opened = time.monotonic() - t0
        log(f"floor idle, {kind}: all open in {opened:.1f} s; warm-up "
            f"{a.idle_warmup} s, then {a.idle_windows} x {a.idle_seconds} s")
        time.sleep(a.idle_warmup)
        wins = measure_windows(a, p.pid, fleet)
    finally:
        stop_proc(p, signal.SIGTERM)
    emit({"type": "idle-floor", "mode": "floor", "fleet": kind,
          "n": fleet.n, "open_s": opened, "streams_open": 0,
          "windows": wins, "keep_alive_timeout_ms": fleet.ready[0].get(
              "keep_alive_timeout_ms")})
    try:
        fleet.wait_for(lambda st: st["sessions_live"] <=
                       base["sessions_live"], 60, "the sessions to end")
    except RuntimeError as e:
        log(f"floor idle, {kind}: {e}")


def section_idle(a, emit):
    section_idle_mode(a, emit, "watch", a.idle_fleets)


def tmux(a, *args, check=True):
    return subprocess.run(["tmux", "-L", a.tmux_socket, "-f", "/dev/null"] +
                          list(args), capture_output=True, text=True,
                          check=check)


def section_tui(a, emit):
    section_idle_mode(a, emit, "tui", a.tui_fleets)


def watch_rss(a, fleet, cfg):
    """Current RSS (median of samples every 2 s over 16 s: one ping cycle)
    and peak RSS of mcptop watch once every session (and stream) is open."""
    p = subprocess.Popen([a.mcptop, "watch", "-c", cfg],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         stdin=subprocess.DEVNULL)
    try:
        t0 = time.monotonic()
        st = fleet.wait_for(all_open(fleet), a.open_timeout,
                            f"watch at {fleet.n} on the {fleet.kind} fleet")
        opened = time.monotonic() - t0
        time.sleep(5)
        samples = []
        for _ in range(9):
            samples.append(proc_status(p.pid, "VmRSS"))
            time.sleep(2)
        return {"rss_kib": statistics.median(samples),
                "rss_samples_kib": samples,
                "hwm_kib": proc_status(p.pid, "VmHWM"),
                "streams_open": fleet.stats()["streams_open"],
                "sessions_live": st["sessions_live"], "open_s": opened}
    finally:
        stop_proc(p, timeout=60)


def section_rss(a, emit):
    for kind in a.fleets:
        res = {}
        for n in (1, a.rss_n):
            fleet = Fleet(a, kind, "distinct", n)
            try:
                cfg = fleet.write_config(os.path.join(
                    a.workdir, f"rss-{kind}-{n}.json"))
                res[n] = watch_rss(a, fleet, cfg)
                log(f"rss: watch, {kind}, {n} servers: {res[n]['rss_kib']} "
                    f"KiB (peak {res[n]['hwm_kib']}), streams "
                    f"{res[n]['streams_open']}")
                fl = run_measured([a.floor] + fleet.floor_args() +
                                  ["--pings", "1"], a.run_timeout, a.workdir)
                d = json.loads(fl[1].strip().splitlines()[-1])
                res[n]["floor_dial_maxrss_kib"] = \
                    d["stats"]["dial"]["max_rss_kib"]
            finally:
                fleet.stop()
        big, one = res[a.rss_n], res[1]
        per = (big["rss_kib"] - one["rss_kib"]) / (a.rss_n - 1)
        fper = (big["floor_dial_maxrss_kib"] - one["floor_dial_maxrss_kib"]) \
            / (a.rss_n - 1)
        emit({"type": "rss", "fleet": kind, "n": a.rss_n, "base": one,
              "big": big, "per_session_kib": per,
              "peak_per_session_kib": (big["hwm_kib"] - one["hwm_kib"]) /
              (a.rss_n - 1),
              "floor_per_session_kib": fper})
        log(f"rss: {kind}: {per:.1f} KiB per open session (floor {fper:.1f})")


# ---------------------------------------------------------------- machine

def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True,
                              text=True).stdout.strip()
    except Exception:
        return "?"


def mcptop_commit(a, dirty):
    """The last commit that changed what a binary built in this checkout is
    built from (the bench's own commits do not change it); for a binary
    from elsewhere, the commit its --version names."""
    if os.path.realpath(a.mcptop).startswith(os.path.realpath(REPO) + "/"):
        return sh(f"git -C '{REPO}' log -1 --format=%h -- src include "
                  "CMakeLists.txt cmake") + \
            (" (+ uncommitted changes in src/ or include/)" if dirty else "")
    m = re.search(r"commit ([0-9a-f]{7})", sh(f"'{a.mcptop}' --version"))
    return (m.group(1) if m else "unknown") + " (binary from elsewhere)"


def machine_info(a):
    model = sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").strip()
    with open(os.path.join(SDK_DIR, "package.json")) as f:
        sdkv = json.load(f)["version"]
    dirty = sh(f"git -C '{REPO}' status --porcelain -- src include")
    return {
        "date": datetime.datetime.now().astimezone().isoformat(
            timespec="seconds"),
        "nproc": os.cpu_count(), "cpu": model,
        "mem": sh("free -g | awk '/Mem:/{print $2\" GiB\"}'"),
        "kernel": platform.release(),
        "os": sh(". /etc/os-release && echo $PRETTY_NAME"),
        "libcurl": sh(f"'{a.mcptop}' --version | grep -m1 -i libcurl"),
        "libev": sh("dpkg-query -W -f='${Version}' libev4 2>/dev/null"),
        "node": sh(f"'{a.node}' --version"), "sdk": sdkv,
        "mcptop": sh(f"'{a.mcptop}' --version | head -1"),
        "mcptop_commit": a.mcptop_commit or mcptop_commit(a, dirty),
        "ulimit_n": sh("ulimit -n") + " (hard " + sh("ulimit -Hn") + ")",
        "loadavg_at_start": loadavg(),
    }


# ---------------------------------------------------------------- stats

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def fmt(v, digits=0):
    if v is None:
        return "—"
    return f"{v:,.{digits}f}"


def mmm(xs, digits=0, unit=""):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "—"
    if len(xs) == 1:
        return f"{fmt(xs[0], digits)}{unit} (1 run)"
    return (f"{fmt(statistics.median(xs), digits)}{unit} "
            f"[{fmt(min(xs), digits)}–{fmt(max(xs), digits)}]")


def load_raw(path):
    recs = []
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                if line:
                    recs.append(json.loads(line))
    return recs


def cells(recs):
    """check records -> {(fleet, ports, n): {client: [records by pair]}}"""
    out = {}
    for r in recs:
        if r.get("type") != "check" or "error" in r:
            continue
        c = out.setdefault((r["fleet"], r["ports"], r["n"]), {})
        c.setdefault(r["client"], []).append(r)
    return out


def cell_summary(cl, pings):
    """Medians and paired ratios of one cell."""
    m, f = cl.get("mcptop", []), cl.get("floor", [])
    s = {"mcptop_cpu_ms": [r["cpu_s"] * 1000 for r in m],
         "floor_cpu_ms": [r["cpu_s"] * 1000 for r in f],
         "mcptop_connects": [r["server_connections"] for r in m],
         "floor_connects": [r["server_connections"] for r in f],
         "mcptop_server_ms": [r["server_cpu_us"] / 1000 for r in m],
         "floor_server_ms": [r["server_cpu_us"] / 1000 for r in f]}
    fm = {r["pair"]: r for r in f}
    s["pair_ratios"] = [r["cpu_s"] / fm[r["pair"]]["cpu_s"] for r in m
                        if r["pair"] in fm and fm[r["pair"]]["cpu_s"] > 0]
    mm, ff = med(s["mcptop_cpu_ms"]), med(s["floor_cpu_ms"])
    s["ratio"] = mm / ff if mm and ff else None

    def per(rs, ph, div):
        return [r["phases"][ph]["cpu_us"] / div for r in rs
                if r.get("phases") and r["phases"].get(ph)]
    n = (m or f or [{"n": 1}])[0]["n"]
    for who, rs in (("mcptop", m), ("floor", f)):
        s[f"{who}_dial_us"] = per(rs, "dial", n)
        s[f"{who}_ping_us"] = per(rs, "pings", n * pings)
        # Whole process minus its three phases: start-up (config, the
        # fleet's structures, libraries) and exit.
        s[f"{who}_outside_ms"] = [
            r["cpu_s"] * 1000 - sum((r["phases"][p] or {}).get("cpu_us", 0)
                                    for p in ("dial", "pings", "endings"))
            / 1000 for r in rs if r.get("phases")]
        s[f"{who}_open"] = [r.get("open") for r in rs]
        s[f"{who}_pings"] = [r.get("pings_completed") for r in rs]
    dm, df = med(s["mcptop_dial_us"]), med(s["floor_dial_us"])
    pm, pf = med(s["mcptop_ping_us"]), med(s["floor_ping_us"])
    s["dial_ratio"] = dm / df if dm and df else None
    s["ping_ratio"] = pm / pf if pm and pf else None
    return s


def spread(xs):
    xs = [x for x in xs if x]
    return max(xs) / min(xs) if len(xs) > 1 else None


# ---------------------------------------------------------------- report

def x(v, d=2):
    return f"{v:.{d}f}×" if v is not None else "—"


def idle_pct(rec):
    return med([w["pct"] for w in rec["windows"]]) if rec else None


def find(recs, typ, **kw):
    for r in reversed(recs):
        if r.get("type") == typ and all(r.get(k) == v for k, v in kw.items()):
            return r
    return None


def write_label_section(w, label, recs):
    machines = [r for r in recs if r.get("type") == "machine"]
    title = (f"Interim ({label[len('interim-'):]})" if
             label.startswith("interim-") else label.capitalize())
    w(f"## {title}: details\n")
    for mi in machines:
        a = mi["args"]
        w(f"Run of section(s) {', '.join(mi['sections'])} on {mi['date']}, "
          f"mcptop {mi['mcptop_commit']}, took "
          f"{fmt(mi.get('total_s', 0) / 60, 1)} min; load average "
          f"{mi['loadavg_at_start']} at its start, "
          f"{mi.get('loadavg_at_end', '?')} at its end.")
    if machines:
        mi = machines[-1]
        w("")
        w("| machine | |\n| --- | --- |")
        for k in ("nproc", "cpu", "mem", "os", "kernel", "libcurl", "libev",
                  "node", "sdk", "mcptop", "ulimit_n"):
            w(f"| {k} | {mi.get(k, '?')} |")
        w("")
    ch = [r for r in machines if "check" in r["sections"]]
    cs = cells(recs)
    if cs:
        a = ch[-1]["args"] if ch else {"pings": 5, "runs": "?"}
        pings = a["pings"]
        w(f"### check --pings {pings}: whole process and phases\n")
        w(f"{a['runs']} alternating pairs per cell (mcptop, floor / floor, "
          "mcptop, ...). Whole = user+sys of the client process from wait4, "
          "start to exit, in ms: median [min–max]. Ratio = median mcptop / "
          "median floor; paired = the median [min–max] of the per-pair "
          "ratios. Connects = TCP connections the fleet accepted during "
          "one run (median). Per phase: CPU per dial and per ping (µs) "
          "that each client measures itself (getrusage around its phases); "
          "outside = whole − the three phases (start-up and exit), ms.\n")
        w("| fleet | ports | N | mcptop whole ms | floor whole ms | ratio | "
          "paired | connects mcptop / floor | dial µs mcptop / floor | "
          "ping µs mcptop / floor | outside ms mcptop / floor | fleet CPU "
          "ms per run (mcptop / floor) |")
        w("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | "
          "--- | --- |")
        noisy = []
        for key in sorted(cs, key=lambda k: (k[0], k[1], k[2])):
            s = cell_summary(cs[key], pings)
            noisy += [spread(s["mcptop_cpu_ms"]), spread(s["floor_cpu_ms"])]
            w(f"| {key[0]} | {key[1]} | {key[2]:,} | "
              f"{mmm(s['mcptop_cpu_ms'])} | {mmm(s['floor_cpu_ms'])} | "
              f"**{x(s['ratio'])}** | {x(med(s['pair_ratios']))} "
              f"[{x(min(s['pair_ratios'], default=None))}–"
              f"{x(max(s['pair_ratios'], default=None))}] | "
              f"{fmt(med(s['mcptop_connects']))} / "
              f"{fmt(med(s['floor_connects']))} | "
              f"{fmt(med(s['mcptop_dial_us']))} / "
              f"{fmt(med(s['floor_dial_us']))} ({x(s['dial_ratio'])}) | "
              f"{fmt(med(s['mcptop_ping_us']))} / "
              f"{fmt(med(s['floor_ping_us']))} ({x(s['ping_ratio'])}) | "
              f"{fmt(med(s['mcptop_outside_ms']))} / "
              f"{fmt(med(s['floor_outside_ms']))} | "
              f"{fmt(med(s['mcptop_server_ms']))} / "
              f"{fmt(med(s['floor_server_ms']))} |")
        w("")
        extra = sorted({c for cl in cs.values() for c in cl} -
                       {"mcptop", "floor"})
        if extra:
            w("Other clients (`--clients`), same cells, whole process and "
              "phases; ratio = median / the floor's median:\n")
            w("| client | fleet | ports | N | whole ms | ratio to floor | "
              "connects | dial µs | ping µs |")
            w("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
            for key in sorted(cs, key=lambda k: (k[0], k[1], k[2])):
                fl = med([r["cpu_s"] * 1000 for r in cs[key].get("floor", [])])
                for c in extra:
                    rs = cs[key].get(c, [])
                    if not rs:
                        continue
                    wm = med([r["cpu_s"] * 1000 for r in rs])
                    dial = med([r["phases"]["dial"]["cpu_us"] / key[2]
                                for r in rs if r.get("phases")])
                    ping = med([r["phases"]["pings"]["cpu_us"] /
                                (key[2] * pings) for r in rs
                                if r.get("phases")])
                    w(f"| {c} | {key[0]} | {key[1]} | {key[2]:,} | "
                      f"{mmm([r['cpu_s'] * 1000 for r in rs])} | "
                      f"{x(wm / fl if wm and fl else None)} | "
                      f"{fmt(med([r['server_connections'] for r in rs]))} | "
                      f"{fmt(dial)} | {fmt(ping)} |")
            w("")
        bad = [r for r in recs if r.get("type") == "check" and
               ("error" in r or r.get("open") != r["n"] or
                r.get("pings_completed") != r["n"] * pings)]
        noisy = [v for v in noisy if v]
        w(f"Noise: within a cell, the slowest run of a client took "
          f"{x(med(noisy))} the fastest's CPU (median over cells; worst "
          f"{x(max(noisy, default=None))}). Runs with a session not opened, "
          f"a ping missing or no JSON: {len(bad)}"
          + (" (" + "; ".join(f"{r['client']} {r['fleet']}/{r['ports']}/"
                               f"{r['n']} #{r.get('pair')}: open "
                               f"{r.get('open')}, pings "
                               f"{r.get('pings_completed')}"
                               for r in bad[:6]) + ")" if bad else "") + ".\n")
    for typ, title in (("idle", "mcptop watch, idle"),
                       ("idle-floor", "the floor, idle (pinging the same "
                        "fleet at 15 s, +-10% jitter, no GET stream; "
                        "`--idle-floor`)"),
                       ("tui", "the TUI, idle (tmux, detached, 160x50)")):
        rs = [r for r in recs if r.get("type") == typ]
        if not rs:
            continue
        w(f"### {title}\n")
        w("| fleet | N | CPU % of a core: median [min–max] of the windows | "
          "windows | all open after | requests / connects per window "
          "(fleet) | fleet CPU % | other |")
        w("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for r in rs:
            ws = r["windows"]
            if r.get("build"):
                r = dict(r, fleet=f"{r['fleet']} (build {r['build']}, round "
                         f"{r['round']})")
            other = ("fleet keeps idle connections " +
                     (f"{r['keep_alive_timeout_ms'] / 1000:.0f} s"
                      if r.get("keep_alive_timeout_ms") else "forever"))
            if typ == "tui":
                other += ("; tmux server " + mmm(
                    [100 * v["other_cpu_s"] / v["seconds"] for v in ws], 2)
                    + "%")
            w(f"| {r['fleet']} | {r['n']:,} | "
              f"**{mmm([v['pct'] for v in ws], 2)}** | {len(ws)} × "
              f"{ws[0]['seconds']:.0f} s | {r['open_s']:.1f} s "
              f"({r['streams_open']} GET streams) | "
              f"{fmt(med([v['server_requests'] for v in ws]))} / "
              f"{fmt(med([v['server_connections'] for v in ws]))} | "
              f"{fmt(med([100 * v['server_cpu_s'] / v['seconds'] for v in ws]), 2)} | "
              f"{other} |")
        w("")
        ab = [r for r in rs if r.get("build")]
        if ab:
            w("A/B: build a = " + next(r["binary"] for r in ab
                                       if r["build"] == "a") +
              ", build b = " + next(r["binary"] for r in ab
                                    if r["build"] == "b") +
              ", alternating on the same fleet (a, b, a, b...); % of a "
              "core, median of all windows of a build, and per round the "
              "ratio a / b of the rounds' medians.\n")
            w("| fleet | a | b | a / b | per round |")
            w("| --- | --- | --- | --- | --- |")
            for fl in sorted({r["fleet"] for r in ab}):
                pa = [v["pct"] for r in ab if r["fleet"] == fl and
                      r["build"] == "a" for v in r["windows"]]
                pb = [v["pct"] for r in ab if r["fleet"] == fl and
                      r["build"] == "b" for v in r["windows"]]
                rounds = sorted({r["round"] for r in ab if r["fleet"] == fl})
                per = []
                for k in rounds:
                    ma = med([v["pct"] for r in ab if r["fleet"] == fl and
                              r["round"] == k and r["build"] == "a"
                              for v in r["windows"]])
                    mb = med([v["pct"] for r in ab if r["fleet"] == fl and
                              r["round"] == k and r["build"] == "b"
                              for v in r["windows"]])
                    per.append(x(ma / mb if ma and mb else None))
                w(f"| {fl} | {mmm(pa, 2)} | {mmm(pb, 2)} | "
                  f"{x(med(pa) / med(pb) if med(pa) and med(pb) else None)}"
                  f" | {', '.join(per)} |")
            w("")
    rs = [r for r in recs if r.get("type") == "rss"]
    if rs:
        w("### RSS per open session\n")
        w("(RSS of `mcptop watch` with N servers open − the same with one) "
          "/ (N − 1); RSS is the median of 9 samples of VmRSS 2 s apart "
          "after every session (and GET stream) was open; peak = VmHWM. The "
          "floor: (its dial-phase peak RSS at N − at 1) / (N − 1), no "
          "streams.\n")
        w("| fleet | N | GET streams open | mcptop KiB/session | peak KiB/"
          "session | mcptop RSS at N / at 1 (KiB) | floor KiB/session |")
        w("| --- | --- | --- | --- | --- | --- | --- |")
        for r in rs:
            w(f"| {r['fleet']} | {r['n']:,} | {r['big']['streams_open']:,} | "
              f"**{r['per_session_kib']:.1f}** | "
              f"{r['peak_per_session_kib']:.1f} | "
              f"{fmt(r['big']['rss_kib'])} / {fmt(r['base']['rss_kib'])} | "
              f"{r['floor_per_session_kib']:.1f} |")
        w("")


def summary_rows(recs):
    """(row label, value text, holds?) for the before/after table."""
    rows = []
    ch = [r for r in recs if r.get("type") == "machine" and
          "check" in r["sections"]]
    pings = ch[-1]["args"]["pings"] if ch else 5
    cs = cells(recs)
    for key in sorted(cs, key=lambda k: (k[0], k[1], k[2])):
        s = cell_summary(cs[key], pings)
        rows.append((f"check --pings {pings}, whole process, mcptop / floor: "
                     f"{key[0]}, {PORTS_NAME[key[1]]}, {key[2]:,}",
                     f"{x(s['ratio'])} ({fmt(med(s['mcptop_cpu_ms']))} / "
                     f"{fmt(med(s['floor_cpu_ms']))} ms; connects "
                     f"{fmt(med(s['mcptop_connects']))} / "
                     f"{fmt(med(s['floor_connects']))})",
                     s["ratio"] is not None and s["ratio"] <= 1.3, "≤ 1.3×"))
    for typ, name, target in (("idle", "watch idle", 1.0),
                              ("tui", "TUI idle", 1.5)):
        for fl in ("json", "sse", "sse-keep"):
            rs = [r for r in recs if r.get("type") == typ and
                  r["fleet"] == fl and r.get("build", "a") == "a"]
            if rs:
                r = {"n": rs[-1]["n"],
                     "windows": [v for q in rs for v in q["windows"]]}
                p = idle_pct(r)
                rows.append((f"{name} at {r['n']:,}, {fl} fleet, % of a core",
                             f"{p:.2f}% ({fmt(med([v['server_connections'] for v in r['windows']]))}"
                             " connects a minute)", p < target,
                             f"< {target}%" if typ == "tui" or fl != "json"
                             else f"(< {target}%)"))
    for fl in ("json", "sse", "sse-keep"):
        rw = [r for r in recs if r.get("type") == "idle" and
              r["fleet"] == fl and r.get("build", "a") == "a"]
        rf = [r for r in recs if r.get("type") == "idle-floor" and
              r["fleet"] == fl]
        if rw and rf:
            pw = med([v["pct"] for q in rw for v in q["windows"]])
            pf = med([v["pct"] for q in rf for v in q["windows"]])
            ratio = pw / pf if pf else None
            rows.append((f"watch idle / the floor's at {rw[-1]['n']:,}, "
                         f"{fl} fleet", f"{x(ratio)} ({pw:.2f}% / "
                         f"{pf:.2f}%)", ratio is not None and ratio <= 1.1,
                         "≤ 1.1×" if fl.startswith("sse") else "—"))
    for fl in ("sse", "json"):
        r = find(recs, "rss", fleet=fl)
        if r:
            rows.append((f"RSS per open session at {r['n']:,}, {fl} fleet"
                         f"{' (GET streams open)' if fl == 'sse' else ' (no streams)'}",
                         f"{r['per_session_kib']:.1f} KiB (floor "
                         f"{r['floor_per_session_kib']:.1f})",
                         r["per_session_kib"] <= 12,
                         "≤ 12 KiB" if fl == "sse" else "—"))
    return rows


def report_labels():
    """before, any interim-* (sorted), after: the columns of issue 19's
    part of RESULTS.md."""
    interim = sorted(f[:-len(".jsonl")] for f in os.listdir(RESULTS)
                     if f.startswith("interim-") and f.endswith(".jsonl")) \
        if os.path.isdir(RESULTS) else []
    return ["before"] + interim + ["after"]


def is_results_label(label):
    return label in LABELS or re.fullmatch(
        r"(issue30-)?interim-[\w.-]+|issue30-(before|after)", label)


def write_report(a):
    labels = report_labels()
    data = {lb: load_raw(os.path.join(RESULTS, f"{lb}.jsonl"))
            for lb in labels}
    L = []
    w = L.append
    w("# mcptop benchmark results\n")
    w("Generated by `bench/driver.py` from `bench/results/before.jsonl`, "
      "`interim-*.jsonl` and `after.jsonl` (rebuild: `bench/run --report`). "
      "How to run: bench/README.md. Hand-written analysis: "
      "bench/ANALYSIS.md, appended below. The results of issue 7 "
      "(per-phase, JSON fleet, the SDK client, up to 10,000 servers) are "
      "kept in `bench/results/issue7.md`. Issue 30's instruction counts "
      "(`bench/run --instructions`) come first, from "
      "`bench/results/issue30-*.jsonl`, with their own analysis "
      "(bench/ANALYSIS-30.md).\n")
    write_i30_report(w)
    w("## Issue 19: before and after\n")
    sums = {lb: {r[0]: r for r in summary_rows(data[lb])} for lb in labels}
    keys = []
    for lb in labels:
        for k in sums[lb]:
            if k not in keys:
                keys.append(k)
    if not keys:
        w("No run yet: `bench/run --label before`.\n")
    else:
        def commit(lb):
            # Every commit a label's runs measured (sections run again on a
            # later build name theirs too), in order.
            cs = []
            for r in data[lb]:
                if r.get("type") == "machine":
                    c = r["mcptop_commit"].split()[0]
                    if c not in cs:
                        cs.append(c)
            return f" ({', '.join(cs)})" if cs else ""
        w("| measure | target | " + " | ".join(
            ("interim" if lb.startswith("interim-") else lb) + commit(lb)
            for lb in labels) + " |")
        w("| --- | --- |" + " --- |" * len(labels))
        for k in keys:
            tgt = next((sums[lb][k][3] for lb in labels if k in sums[lb]),
                       "")
            cells_ = []
            for lb in labels:
                r = sums[lb].get(k)
                if r is None:
                    cells_.append("—")
                else:
                    mark = "" if tgt == "—" or tgt.startswith("(") else \
                        (" ✓" if r[2] else " ✗")
                    cells_.append(r[1] + mark)
            w(f"| {k} | {tgt} | " + " | ".join(cells_) + " |")
        w("")
    for lb in labels:
        if data[lb]:
            write_label_section(w, lb, data[lb])
    exp = os.path.join(RESULTS, "exporter.jsonl")
    if os.path.exists(exp):
        # Issue 20's section, from bench/exporter.py's own records.
        import exporter
        with open(exp) as f:
            w(exporter.markdown([json.loads(line) for line in f
                                 if line.strip()]))
    scr = os.path.join(RESULTS, "scrape.jsonl")
    if os.path.exists(scr):
        # Issue 29's section, from bench/scrape.py's own records.
        import scrape
        with open(scr) as f:
            w(scrape.markdown([json.loads(line) for line in f
                               if line.strip()]))
    analysis = os.path.join(BENCH, "ANALYSIS.md")
    if os.path.exists(analysis):
        with open(analysis) as f:
            w(f.read())
    with open(os.path.join(BENCH, "RESULTS.md"), "w") as f:
        f.write("\n".join(L).rstrip() + "\n")
    log("wrote bench/RESULTS.md")


def write_scratch_report(a, path, recs):
    L = []
    w = L.append
    w(f"# mcptop bench: {a.label}\n")
    rows = summary_rows(recs) + instr_rows(recs)
    if rows:
        w("| measure | target | value |\n| --- | --- | --- |")
        for r in rows:
            w(f"| {r[0]} | {r[3]} | {r[1]} |")
        w("")
    write_label_section(w, a.label, recs)
    write_instr_section(w, a.label, recs)
    with open(path, "w") as f:
        f.write("\n".join(L).rstrip() + "\n")


# ---------------------------------------------------------------- main

def smoke_check(recs, a):
    """--smoke: every run opened every session and completed every ping."""
    bad = []
    for r in recs:
        if r.get("type") != "check":
            continue
        if "error" in r or r.get("rc") != 0 or r.get("open") != r["n"] or \
                r.get("pings_completed") != r["n"] * a.pings:
            bad.append(f"{r['client']} {r['fleet']}/{r['ports']}: rc "
                       f"{r.get('rc')}, open {r.get('open')}, pings "
                       f"{r.get('pings_completed')} {r.get('error', '')}"
                       f"{r.get('stderr_tail', '')[-200:]}")
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--mcptop")
    ap.add_argument("--floor")
    ap.add_argument("--workdir")
    ap.add_argument("--node", default=os.environ.get("NODE", "node"))
    ap.add_argument("--ab-mcptop", default=None, metavar="BINARY",
                    help="idle and tui: alternate this build (b) with "
                    "--mcptop (a), --ab-rounds times each, on the same fleet")
    ap.add_argument("--ab-rounds", type=int, default=2)
    ap.add_argument("--ab-name", default=None,
                    help="what to call the --ab-mcptop build (default: the "
                    "commit its --version names)")
    ap.add_argument("--mcptop-commit", default=None,
                    help="the commit to name for --mcptop (default: found)")
    ap.add_argument("--label", default="scratch",
                    help="before, after or interim-NAME write bench/results/"
                    "LABEL.jsonl and rebuild RESULTS.md; anything else "
                    "writes WORKDIR/LABEL.{jsonl,md} only")
    ap.add_argument("--only", default=",".join(SECTIONS),
                    help="sections: " + ",".join(SECTIONS + EXTRA_SECTIONS)
                    + " (instructions only when named)")
    ap.add_argument("--sizes", default=None,
                    help="check: 100,300,1000; instructions: 100,1000")
    ap.add_argument("--fleets", default="json,sse",
                    help="fleets of check and rss: json, sse")
    ap.add_argument("--idle-fleets", default="json,sse,sse-keep",
                    help="fleets of idle (sse-keep: the SSE fleet keeping "
                    "idle connections 120 s)")
    ap.add_argument("--tui-fleets", default="json,sse")
    ap.add_argument("--ports", default=None,
                    help="check: distinct,one; instructions: distinct")
    ap.add_argument("--clients", default="mcptop,floor",
                    help="mcptop,floor[,floor-old][,sdk] (floor-old: the "
                    "floor before issue 19; sdk: bench/sdkclient.mjs)")
    ap.add_argument("--runs", type=int, default=5, help="pairs per cell")
    ap.add_argument("--pings", type=int, default=5)
    ap.add_argument("--mcptop-timeout", type=int, default=60000)
    ap.add_argument("--floor-args", default="",
                    help="extra floor arguments, e.g. '--servers-per-multi 0 "
                    "--dns-cache-timeout -1' (the floor before issue 19)")
    ap.add_argument("--run-timeout", type=int, default=300,
                    help="seconds before a client run is killed")
    ap.add_argument("--valgrind", default="valgrind")
    ap.add_argument("--instr-runs", type=int, default=2,
                    help="instructions: callgrind runs of each client per "
                    "cell (alternating which goes first)")
    ap.add_argument("--instr-timeout", type=int, default=1800,
                    help="seconds before a run under callgrind is killed")
    ap.add_argument("--idle-floor", action="store_true",
                    help="idle: after watch, the floor pinging the same "
                    "fleet at the same interval (floor --idle-interval), "
                    "measured the same way (issue 30)")
    ap.add_argument("--idle-n", type=int, default=1000)
    ap.add_argument("--idle-seconds", type=int, default=60)
    ap.add_argument("--idle-windows", type=int, default=3)
    ap.add_argument("--idle-warmup", type=int, default=60,
                    help="seconds between every session open and the first "
                    "window (the first minute costs less than the next)")
    ap.add_argument("--rss-n", type=int, default=5000)
    ap.add_argument("--open-timeout", type=int, default=300)
    ap.add_argument("--keep-alive-timeout", type=int, default=None,
                    help="SSE fleet: Node's keepAliveTimeout in ms (default:"
                    " Node's own, 5000)")
    ap.add_argument("--base-port", type=int, default=None,
                    help="first port to try (default: the first free range "
                    "from 10000)")
    ap.add_argument("--shard", type=int, default=0,
                    help="servers per Node process (0: from the fd limit)")
    ap.add_argument("--tmux-socket", default=f"mcptop-bench-{os.getpid()}")
    ap.add_argument("--smoke", action="store_true",
                    help="10 servers, one run, check only, both fleets and "
                    "port modes; exit 1 unless every session opened and "
                    "every ping completed")
    ap.add_argument("--report", action="store_true",
                    help="only rebuild RESULTS.md from bench/results/")
    a = ap.parse_args()
    if a.report:
        return write_report(a)
    if not (a.mcptop and a.floor and a.workdir):
        ap.error("--mcptop, --floor and --workdir are required")
    if a.smoke:
        a.sizes, a.runs, a.only, a.pings = "10", 1, "check", 2
        a.ports = a.ports or "distinct,one"
        a.label = "smoke"
    sections = [v for v in a.only.split(",") if v]
    only_instr = sections == ["instructions"]
    if a.sizes is None:
        a.sizes = "100,1000" if only_instr else "100,300,1000"
    if a.ports is None:
        a.ports = "distinct" if only_instr else "distinct,one"
    a.sizes = [int(v) for v in a.sizes.split(",") if v]
    a.fleets = [v for v in a.fleets.split(",") if v]
    a.idle_fleets = [v for v in a.idle_fleets.split(",") if v]
    a.tui_fleets = [v for v in a.tui_fleets.split(",") if v]
    a.ports = [v for v in a.ports.split(",") if v]
    a.clients = [v for v in a.clients.split(",") if v]
    a.floor_extra = a.floor_args.split()
    for v in sections:
        if v not in SECTIONS + EXTRA_SECTIONS:
            ap.error(f"unknown section {v}")
    if not set(a.fleets + a.idle_fleets + a.tui_fleets) <= set(FLEET_SCRIPT) \
            or \
            not set(a.ports) <= {"distinct", "one"} or \
            not set(a.clients) <= {"mcptop", "floor", "floor-old", "sdk"}:
        ap.error("bad --fleets, --ports or --clients")
    if not os.path.isdir(SDK_DIR):
        sys.exit(f"bench: no {SDK_DIR} (cd tests && npm ci)")
    os.makedirs(a.workdir, exist_ok=True)
    import resource
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if a.shard <= 0:
        # Each server: a listener, its POST connection and its GET stream.
        a.shard = max(100, (soft - 200) // 3)
    # SIGTERM or SIGINT (bench/run's cleanup, or anyone's) kills the
    # client being measured and unwinds the finally blocks: fleets
    # stopped, tmux server killed.
    def on_signal(signum, frame):
        if CLIENT_PGID is not None:
            try:
                os.killpg(CLIENT_PGID, signal.SIGKILL)
            except ProcessLookupError:
                pass
        sys.exit(128 + signum)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    if is_results_label(a.label):
        os.makedirs(RESULTS, exist_ok=True)
        rawpath = os.path.join(RESULTS, f"{a.label}.jsonl")
    else:
        rawpath = os.path.join(a.workdir, f"{a.label}.jsonl")
    # A section run again replaces that section's records.
    kept = [r for r in load_raw(rawpath) if is_results_label(a.label) and not (
        r.get("type") in sections or (r.get("type") == "machine" and
                                      set(r["sections"]) <= set(sections)))]
    info = machine_info(a)
    info.update({"type": "machine", "sections": sections,
                 "args": {k: v for k, v in vars(a).items()
                          if k not in ("mcptop", "floor", "workdir",
                                       "ab_mcptop")}})
    if a.ab_mcptop:
        m = re.search(r"commit ([0-9a-f]{7})",
                      sh(f"'{a.ab_mcptop}' --version"))
        a.ab_names = {"a": info["mcptop_commit"].split()[0],
                      "b": a.ab_name or (m.group(1) if m else "b")}
        info["ab"] = a.ab_names
    log(f"machine: load {info['loadavg_at_start']}, mcptop "
        f"{info['mcptop_commit']}; sections {sections}")
    new = []

    def emit(r):
        new.append(r)
        with open(rawpath + ".partial", "a") as f:
            f.write(json.dumps(r) + "\n")

    t0 = time.monotonic()
    if os.path.exists(rawpath + ".partial"):
        os.unlink(rawpath + ".partial")
    for sec in sections:
        {"check": section_check, "idle": section_idle,
         "tui": section_tui, "rss": section_rss,
         "instructions": section_instructions}[sec](a, emit)
    # Only a finished run replaces the records (a failed one leaves its
    # records in RAW.partial).
    info["total_s"] = time.monotonic() - t0
    info["loadavg_at_end"] = loadavg()
    with open(rawpath, "w") as f:
        for r in kept + [info] + new:
            f.write(json.dumps(r) + "\n")
    if os.path.exists(rawpath + ".partial"):
        os.unlink(rawpath + ".partial")
    log(f"done in {info['total_s']:.0f} s; raw records in {rawpath}")
    if is_results_label(a.label):
        write_report(a)
    else:
        md = os.path.splitext(rawpath)[0] + ".md"
        write_scratch_report(a, md, kept + [info] + new)
        log(f"wrote {md}")
    if a.smoke:
        bad = smoke_check(new, a)
        for b in bad:
            log(f"smoke: FAIL {b}")
        if bad:
            return 1
        log(f"smoke: ok ({len(new)} runs)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
