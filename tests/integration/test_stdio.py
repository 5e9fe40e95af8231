#!/usr/bin/env python3
"""stdio servers (issue 3): real ones and tests/stdio/fake.mjs's misbehaving
children, through `mcptop check --json` and `mcptop watch`.

- server-everything over stdio: its tool count equals the HTTP count given by
  the SDK's own client (count_tools.mjs);
- @modelcontextprotocol/server-memory: its tool count equals the count an SDK
  stdio client (StdioClientTransport) gets;
- fake children: banner (stray stdout lines), hang-after-init (timeout),
  exit-at-once (connection_closed at connect, exit code 3), close-stdout
  (connection_closed on the ping), flood-stderr (reachable, mcptop's memory
  bounded), big-line (not_mcp_response on the ping);
- spawn_failed for a missing command and a file without the execute bit;
- no child left behind, no zombie;
- watch: SIGKILL the child -> connection_closed, unreachable, re-dial,
  reachable; SIGINT -> exit, no child left.
- watch: a crash loop (issue 45, item 4): a child that answers and exits
  200 ms after its listing is started a few times in 12 s (the backoff
  grows), never ok again after its first exit, each exit's `process`
  exchange says when the next start is, and every child started is reaped.

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_stdio.py
The last line is "N passed, N failed"; the exit status is 1 on any failure.
"""

import atexit
import json
import os
import signal
import subprocess
import sys
import time
import uuid

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402
from mcptest import dig  # noqa: E402

rep = mcptest.Reporter("stdio servers: check and watch (issue 3)")


# Every child marker this run used. mcptop starts stdio children in their own
# process groups, so if mcptop itself dies (a crash, a sanitizer abort) they
# outlive it; at exit, whatever still carries one of our markers is killed.
_markers = []


def new_marker():
    m = "mcptest-stdio-" + uuid.uuid4().hex[:12]
    _markers.append(m)
    return m


def kill_marked():
    for m in _markers:
        try:
            r = subprocess.run(["pgrep", "-f", m], stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, timeout=10)
        except (OSError, subprocess.SubprocessError):
            continue
        for pid in r.stdout.split():
            pid = int(pid)
            if pid == os.getpid():
                continue
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def _on_signal(signum, frame):
    kill_marked()
    mcptest._on_signal(signum, frame)


atexit.register(kill_marked)
for _sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(_sig, _on_signal)

NODE = mcptest._NODE
FAKE_MJS = mcptest.TESTS_DIR / "stdio" / "fake.mjs"
MEMORY_JS = mcptest.NODE_MODULES / ".bin" / "mcp-server-memory"
SDK_CLIENT = mcptest.NODE_MODULES / "@modelcontextprotocol" / "sdk" / "dist" / "esm" / "client"
def _sanitized_build():
    """True when the binary is an AddressSanitizer build (its shadow memory
    and quarantine count in its RSS)."""
    try:
        out = subprocess.run(["ldd", str(mcptest.MCPTOP_BIN)], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return False
    return b"libasan" in out


# mcptop's own bound; an ASan build's accounting adds its quarantine.
RSS_LIMIT_KB = (256 if _sanitized_build() else 200) * 1024
FLOOD_BYTES = 100 * 1024 * 1024   # what flood-stderr writes
EXIT_WAIT = 6.0                   # s after SIGINT (teardown 3 s + grace 1 s + margin)


def tag():
    return uuid.uuid4().hex[:12]


def fake(mode, marker, **extra):
    d = {"command": NODE, "args": [str(FAKE_MJS), "--mode=%s" % mode, "--tag=%s" % marker]}
    d.update(extra)
    return d


def memory_server(marker, **extra):
    # server-memory ignores extra arguments; the marker finds it with pgrep.
    d = {"command": NODE, "args": [str(MEMORY_JS), "--mcptest-tag=%s" % marker],
         "env": {"MEMORY_FILE_PATH": str(mcptest.tmpdir() / ("memory-%s.jsonl" % marker))}}
    d.update(extra)
    return d


def pgrep(marker):
    r = subprocess.run(["pgrep", "-f", marker], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       timeout=10)
    me = os.getpid()
    return [int(p) for p in r.stdout.split() if int(p) != me]


def wait_pgrep(marker, want_some, timeout):
    deadline = time.monotonic() + timeout
    while True:
        pids = pgrep(marker)
        if bool(pids) == want_some or time.monotonic() >= deadline:
            return pids
        time.sleep(0.1)


def proc_state(pid):
    """The state letter of /proc/PID/stat ('Z' zombie), or None when gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            text = f.read()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()[0]


def wait_gone(pid, timeout=3.0):
    deadline = time.monotonic() + timeout
    while proc_state(pid) is not None and time.monotonic() < deadline:
        time.sleep(0.05)
    return proc_state(pid)


def ps_lines(pids):
    if not pids:
        return ""
    r = subprocess.run(["ps", "-o", "pid,ppid,stat,args", "-p", ",".join(map(str, pids))],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10)
    return r.stdout.decode(errors="replace")


def vm_hwm_kb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def wchar(pid):
    try:
        with open("/proc/%d/io" % pid) as f:
            for line in f:
                if line.startswith("wchar:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


_ORACLE_JS = r"""
const [clientDir, command, ...args] = process.argv.slice(1);
const { Client } = await import('file://' + clientDir + '/index.js');
const { StdioClientTransport } = await import('file://' + clientDir + '/stdio.js');
const killer = setTimeout(() => { process.stderr.write('oracle: timed out\n'); process.exit(3); }, 20000);
const transport = new StdioClientTransport({ command, args, env: { ...process.env }, stderr: 'ignore' });
const client = new Client({ name: 'mcptest-stdio-oracle', version: '0.0.0' }, { capabilities: {} });
await client.connect(transport);
const names = [];
let cursor;
do {
  const r = await client.listTools(cursor ? { cursor } : {});
  names.push(...r.tools.map((t) => t.name));
  cursor = r.nextCursor;
} while (cursor);
process.stdout.write(JSON.stringify({ tools: names.length, names }) + '\n');
await client.close();
clearTimeout(killer);
"""


def stdio_oracle(command, args, env=None):
    """Tool count of a stdio server from the SDK's own stdio client."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    r = mcptest.run([NODE, "--input-type=module", "-e", _ORACLE_JS, str(SDK_CLIENT), command] + list(args),
                    timeout=30, env=full_env, cwd=str(mcptest.TESTS_DIR))
    if r.rc != 0:
        raise mcptest.SetupError("the SDK stdio oracle failed:\n%s" % r.describe())
    return json.loads(r.stdout)


# --------------------------------------------------------------------------
# check --json on a fleet of stdio servers


def check_fleet(c):
    marker = new_marker()
    noexec = mcptest.write_file("#!/bin/sh\necho should never run\n", suffix=".sh")
    os.chmod(noexec, 0o644)
    ev_argv = mcptest.everything_stdio_argv()
    mem = memory_server(marker)
    servers = {
        "everything": {"command": ev_argv[0], "args": ev_argv[1:] + ["--mcptest-tag=%s" % marker]},
        "memory": mem,
        "healthy": fake("healthy", marker),
        "banner": fake("banner", marker),
        "hang": fake("hang-after-init", marker),
        "exit3": fake("exit-at-once", marker),
        "closeout": fake("close-stdout", marker),
        "flood": fake("flood-stderr", marker),
        "nocmd": {"command": "/nonexistent/mcptest-%s/no-such-server" % marker},
        "noexec": {"command": noexec, "args": ["--tag=%s" % marker]},
    }
    cfg = mcptest.write_config(servers, mcptop={"timeout_ms": 3000, "open_deadline_ms": 8000})

    # Independent counts first (the oracle's children are not mcptop's).
    with mcptest.everything_http() as http_srv:
        http_count = mcptest.count_tools(http_srv.url)["tools"]
    mem_count = stdio_oracle(mem["command"], mem["args"], mem["env"])["tools"]
    c.attach("oracle counts: server-everything (HTTP, SDK) %d, server-memory (stdio, SDK) %d"
             % (http_count, mem_count))

    # Run check, sampling mcptop's own peak RSS while it runs.
    argv = [mcptest.MCPTOP_BIN, "check", "--json", "-c", cfg]
    p = mcptest.spawn(argv, env=mcptest.mcptop_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    hwm = 0
    out = err = b""
    t0 = time.monotonic()
    try:
        while p.poll() is None and time.monotonic() - t0 < 30:
            h = vm_hwm_kb(p.pid)
            if h:
                hwm = max(hwm, h)
            time.sleep(0.05)
        timed_out = p.poll() is None
        if timed_out:
            mcptest.terminate(p, grace=1)
        out, err = p.communicate(timeout=10)
    finally:
        mcptest.terminate(p, grace=1)
    r = mcptest.Result(argv, None if timed_out else p.returncode, out.decode(errors="replace"),
                       err.decode(errors="replace"), timed_out, time.monotonic() - t0)
    c.attach(r.describe())
    c.no_crash(r)
    c.eq(r.rc, 1, "exit code (some servers are not ok)")
    doc = r.json()
    c.require(doc is not None, "check --json prints JSON (%s)" % r.json_error)
    by = {s.get("name"): s for s in dig(doc, "servers") or []}
    c.require(set(by) == set(servers), "one record per server (got %s)" % sorted(by))

    def ok_server(name, tools=None):
        s = by[name]
        c.eq(s.get("transport"), "stdio", "%s: transport" % name)
        c.eq(dig(s, "liveness", "state"), "reachable", "%s: liveness" % name)
        c.eq(s.get("ok"), True, "%s: ok" % name)
        c.eq(s.get("last_failure"), None, "%s: last_failure" % name)
        if tools is not None:
            c.eq(s.get("tools"), tools, "%s: tools" % name)

    def failed(name, kind, delivered, site, op=None, liveness="unreachable", detail=None):
        s = by[name]
        c.eq(s.get("ok"), False, "%s: ok" % name)
        c.eq(dig(s, "last_failure", "kind"), kind, "%s: last_failure.kind" % name)
        c.eq(dig(s, "last_failure", "delivered"), delivered, "%s: last_failure.delivered" % name)
        c.eq(dig(s, "last_failure", "site"), site, "%s: last_failure.site" % name)
        if op is not None:
            c.eq(dig(s, "last_failure", "op"), op, "%s: last_failure.op" % name)
        c.eq(dig(s, "liveness", "state"), liveness, "%s: liveness" % name)
        if liveness == "unreachable":
            c.eq(dig(s, "liveness", "error_code"), kind, "%s: liveness.error_code" % name)
        if detail is not None:
            d = dig(s, "last_failure", "detail")
            c.check(isinstance(d, str) and detail in d,
                    "%s: %r in last_failure.detail (got %r)" % (name, detail, d))
        return s

    ok_server("everything", tools=http_count)
    c.eq(dig(by["everything"], "session", "server_name"), "mcp-servers/everything",
         "everything: serverInfo.name")
    ok_server("memory", tools=mem_count)
    c.check(mem_count > 0, "server-memory has tools (oracle says %d)" % mem_count)
    ok_server("healthy", tools=2)
    ok_server("banner", tools=2)
    sl = by["banner"].get("stray_stdout_lines")
    c.check(isinstance(sl, int) and sl >= 2, "banner: stray_stdout_lines >= 2 (got %r)" % sl)
    c.eq(by["healthy"].get("stray_stdout_lines"), 0, "healthy: stray_stdout_lines")
    ok_server("flood", tools=2)

    failed("hang", "timeout", "no", "connect", op="dial")
    s = failed("exit3", "connection_closed", "no", "connect", op="dial", detail="status 3")
    c.eq(s.get("exit"), {"code": 3}, "exit3: exit")
    failed("closeout", "connection_closed", "unknown", "request", op="ping")
    for name in ("nocmd", "noexec"):
        failed(name, "spawn_failed", "no", "connect", op="dial")
        c.check("pid" not in by[name], "%s: no pid" % name)

    c.check(hwm > 0, "mcptop's VmHWM was sampled")
    c.check(hwm < RSS_LIMIT_KB, "mcptop's peak RSS %d kB < %d kB (flood-stderr child)" % (hwm, RSS_LIMIT_KB))

    # Nothing left: no child by its marker, and every pid check reported is
    # gone (reaped: not a zombie either).
    left = wait_pgrep(marker, False, 3.0)
    c.check(not left, "no child left after check exited: %s" % ps_lines(left))
    for name, s in by.items():
        pid = s.get("pid")
        if isinstance(pid, int) and pid > 0:
            st = wait_gone(pid, 2.0)
            c.check(st is None, "%s: child pid %d gone after mcptop exited (state %r)" % (name, pid, st))


# --------------------------------------------------------------------------
# big-line: a stdout line past max_message_bytes (its own run, so that a
# crash here does not hide the rest of the fleet)


def check_big_line(c):
    marker = new_marker()
    cfg = mcptest.write_config({"bigline": fake("big-line", marker, max_message_bytes=1048576)},
                               mcptop={"timeout_ms": 5000, "open_deadline_ms": 8000})
    r = mcptest.run_mcptop(["check", "--json", "-c", cfg], timeout=30)
    c.attach(r.describe())
    c.no_crash(r)
    c.eq(r.rc, 1, "exit code")
    doc = r.json()
    c.require(doc is not None, "check --json prints JSON (%s)" % r.json_error)
    s = dig(doc, "servers", 0)
    c.eq(dig(s, "tools"), 2, "the dial completed (tools)")
    c.eq(dig(s, "last_failure", "kind"), "not_mcp_response", "last_failure.kind")
    c.eq(dig(s, "last_failure", "delivered"), "unknown", "last_failure.delivered")
    c.eq(dig(s, "last_failure", "site"), "request", "last_failure.site")
    c.eq(dig(s, "last_failure", "op"), "ping", "last_failure.op")
    c.eq(dig(s, "liveness", "state"), "unknown", "liveness (not_mcp_response)")
    left = wait_pgrep(marker, False, 3.0)
    c.check(not left, "no child left after check exited: %s" % ps_lines(left))


# --------------------------------------------------------------------------
# flood-stderr under watch: memory stays bounded, pings keep completing


def watch_flood_stderr_bounded(c):
    marker = new_marker()
    cfg = mcptest.write_config({"flood": fake("flood-stderr", marker, ping_interval_s=0.5)})
    w = mcptest.Watch(["watch", "-c", cfg])
    try:
        deadline = time.monotonic() + 25
        ev = w.wait_for(lambda e: e.get("event") == "liveness" and e.get("state") == "reachable", deadline)
        c.require(ev is not None, "flood: reachable")
        pids = wait_pgrep(marker, True, 5)
        c.require(len(pids) == 1, "one flood-stderr child (got %r)" % pids)
        child = pids[0]
        hwm = 0
        drained = False
        while time.monotonic() < deadline:
            hwm = max(hwm, vm_hwm_kb(w.proc.pid) or 0)
            wc = wchar(child)
            if wc is None or wc >= FLOOD_BYTES:
                drained = wc is not None
                break
            time.sleep(0.1)
        c.attach("flood child wrote %s bytes" % wchar(child))
        if not drained:
            time.sleep(3)  # /proc/PID/io unreadable: give the flood time
        # After (most of) the flood: a ping still completes, so stderr is drained.
        ev = w.wait_for(lambda e: e.get("event") == "exchange" and e.get("op") == "ping"
                        and e.get("outcome") == "completed", time.monotonic() + 5)
        c.check(ev is not None, "a ping completes after the flood")
        hwm = max(hwm, vm_hwm_kb(w.proc.pid) or 0)
        c.check(0 < hwm < RSS_LIMIT_KB, "mcptop's peak RSS %d kB < %d kB" % (hwm, RSS_LIMIT_KB))
        c.check(not any(e.get("event") == "liveness" and e.get("state") != "reachable" for e in w.events),
                "flood stays reachable throughout")
        w.signal(signal.SIGINT)
        rc = w.wait_exit(EXIT_WAIT)
        c.eq(rc, 0, "exit code after SIGINT")
        left = wait_pgrep(marker, False, 3)
        c.check(not left, "no child left: %s" % ps_lines(left))
    finally:
        if c.failures:
            c.attach(w.describe())
        w.close()


# --------------------------------------------------------------------------
# watch: kill the child, see it, see the re-dial


def watch_memory_kill_redial(c):
    marker = new_marker()
    cfg = mcptest.write_config({"memory": memory_server(marker, ping_interval_s=1)})
    w = mcptest.Watch(["watch", "-c", cfg])
    try:
        deadline = time.monotonic() + 40
        ev = w.wait_for(lambda e: e.get("event") == "liveness" and e.get("state") == "reachable", deadline)
        c.require(ev is not None, "memory: reachable")
        pids = wait_pgrep(marker, True, 5)
        c.require(len(pids) == 1, "one server-memory child (got %r)" % pids)
        victim = pids[0]
        os.kill(victim, signal.SIGKILL)
        ev = w.wait_for(lambda e: e.get("event") == "exchange" and e.get("outcome") == "connection_closed",
                        deadline)
        c.require(ev is not None, "a connection_closed exchange after SIGKILL")
        c.is_in(ev.get("delivered"), ("no", "unknown"), "delivered of the connection_closed exchange")
        ev = w.wait_for(lambda e: e.get("event") == "liveness" and e.get("state") == "unreachable", deadline)
        if ev is None:
            ev = next((e for e in w.events if e.get("event") == "liveness" and e.get("state") == "unreachable"),
                      None)
        c.require(ev is not None, "liveness unreachable after SIGKILL")
        c.eq(ev.get("error_code"), "connection_closed", "liveness error_code")
        # mcptop reaps the killed child while it runs on (no zombie)
        st = wait_gone(victim, 3.0)
        c.check(st is None, "the killed child %d is reaped (state %r)" % (victim, st))
        ev = w.wait_for(lambda e: e.get("event") == "liveness" and e.get("state") == "reachable", deadline)
        c.require(ev is not None, "reachable again after the re-dial")
        dials = [e for e in w.events if e.get("event") == "exchange" and e.get("op") == "dial"
                 and e.get("outcome") == "completed"]
        c.check(len(dials) >= 2, "two completed dials (got %d)" % len(dials))
        pids = wait_pgrep(marker, True, 5)
        c.check(len(pids) == 1 and victim not in pids, "one new child after the re-dial (got %r)" % pids)
        w.signal(signal.SIGINT)
        rc = w.wait_exit(EXIT_WAIT)
        c.check(rc is not None, "watch exits within %.0f s of SIGINT" % EXIT_WAIT)
        c.eq(rc, 0, "exit code after SIGINT")
        w.close()
        ending = [e for e in w.events if e.get("event") == "ending"]
        c.check(len(ending) == 1 and ending[0].get("outcome") == "exited",
                "one ending, exited (got %s)" % json.dumps(ending))
        left = wait_pgrep(marker, False, 3)
        c.check(not left, "no child left after watch exited: %s" % ps_lines(left))
        for pid in pids:
            st = wait_gone(pid, 2.0)
            c.check(st is None, "child %d gone (state %r)" % (pid, st))
        err = w.stderr()
        for marker_s in ("Sanitizer", "runtime error:"):
            c.check(marker_s not in err, "no %r in stderr" % marker_s)
    finally:
        if c.failures:
            c.attach(w.describe())
        w.close()


CRASH_WATCH_S = 12.0      # how long the crash loop is watched
CRASH_MAX_STARTS = 5      # 1 + backoffs of about 1, 2, 4 s (8 before the fix)


def watch_crash_loop(c):
    marker = new_marker()
    spawns = mcptest.tmpdir() / ("crash-spawns-%s.log" % tag())
    decl = fake("crash-after-list", marker, ping_interval_s=1)
    decl["args"] += ["--spawn-log=%s" % spawns, "--crash-ms=200"]
    cfg = mcptest.write_config({"crashy": decl})
    w = mcptest.Watch(["watch", "-c", cfg])
    try:
        t0 = time.monotonic()
        first = w.wait_for(lambda e: e.get("event") == "exchange" and e.get("op") == "process",
                           t0 + 10)
        c.require(first is not None, "the first exit is seen (a process exchange)")
        # Watch the rest of the 12 s: nothing to wait for, every line kept.
        w.wait_for(lambda e: False, t0 + CRASH_WATCH_S)
        try:
            pids = [int(x) for x in spawns.read_text().split()]
        except OSError:
            pids = []
        c.check(2 <= len(pids) <= CRASH_MAX_STARTS,
                "a few starts in %.0f s (1 <= N <= %d): %d" % (CRASH_WATCH_S, CRASH_MAX_STARTS, len(pids)))
        health = [e for e in w.events if e.get("event") == "health"]
        words = [e.get("state") for e in health]
        down = words.index("down") if "down" in words else None
        c.require(down is not None, "health goes down: %r" % words)
        c.check("ok" not in words[down:], "never ok after the first exit: %r" % words)
        c.check(any("crash loop" in (e.get("reason") or "") for e in health[down:]),
                "the reason names the crash loop: %r" % [e.get("reason") for e in health])
        procs = [e for e in w.events if e.get("event") == "exchange" and e.get("op") == "process"]
        c.check(len(procs) >= 2, "two exits or more seen (got %d)" % len(procs))
        c.check(all(isinstance(e.get("next_attempt_at"), int) for e in procs),
                "each process exchange says when the next start is: %s"
                % [json.dumps(e) for e in procs[:3]])
        w.signal(signal.SIGINT)
        rc = w.wait_exit(EXIT_WAIT)
        c.eq(rc, 0, "watch exits 0 after SIGINT")
        left = [p for p in pids if wait_gone(p, 3.0) is not None]
        c.check(not left, "every child started is reaped (%d started): %s"
                % (len(pids), ps_lines(left)))
    finally:
        if c.failures:
            c.attach(w.describe())
        w.close()


def main():
    try:
        mcptest.require_mcptop()
        mcptest.require_node_modules()
        if not MEMORY_JS.exists():
            raise mcptest.SetupError("%s is missing: run scripts/install-deps.sh" % MEMORY_JS)
    except mcptest.SetupError as e:
        print("setup: %s" % e)
        rep.failed += 1
        rep.finish()
    rep.run("check_fleet", check_fleet)
    rep.run("check_big_line", check_big_line)
    rep.run("watch_flood_stderr_bounded", watch_flood_stderr_bounded)
    rep.run("watch_memory_kill_redial", watch_memory_kill_redial)
    rep.run("watch_crash_loop", watch_crash_loop)
    rep.finish()


if __name__ == "__main__":
    main()
