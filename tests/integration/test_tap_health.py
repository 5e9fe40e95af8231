#!/usr/bin/env python3
"""Health of a tap server (DESIGN.md section 4b, issue 31) is one word
everywhere: `mcptop check --json`, `mcptop watch` and `mcptop serve` read
the same taps and must give each the same health, from the agent's own
traffic and nothing else:

  answering  the agent's calls complete                     ok
  erroring   every call of the agent's answered -32603      degraded
  quiet      a tap whose agent has sent nothing yet         pending
  missing    a {"tap": PATH} with no socket at PATH         down
  gone       a tap that exits while the monitors read it    down

Each tap is `mcptop tap -- python3 SERVER MODE` with a scripted agent
writing JSON-RPC to its stdin; the monitors never dial the server (the
server counts the requests it got: exactly the agent's).

check: each server's "health" and "ok". watch: each server's last
{"event":"health"} line once settled. serve: the state label of its one
mcp_health series, and mcp_probe_success (1 for ok, else 0).

Everything local; every wait is bounded.

Standalone: MCPTOP_BIN=build/mcptop MCPTOP_TESTS_DIR=tests python3 tests/integration/test_tap_health.py
"""

import json
import os
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402
from mcptest import SetupError  # noqa: E402

rep = mcptest.Reporter("tap health: check, watch and serve agree on taps")

SETTLE_WAIT = 30.0
STABLE_FOR = 2.0
EXIT_WAIT = 15.0


# A stdio MCP server: initialize answered; every other request answered
# with a result (mode ok) or -32603 (mode error); it appends each method it
# was asked to COUNT_FILE, so the test can tell who asked.
SERVER = r'''
import json, sys
mode, count = sys.argv[1], sys.argv[2]
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if "id" not in m or "method" not in m:
        continue
    with open(count, "a") as f:
        f.write(m["method"] + "\n")
    if m["method"] == "initialize":
        res = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
               "serverInfo": {"name": "scripted", "version": "1"}}
        out = {"jsonrpc": "2.0", "id": m["id"], "result": res}
    elif mode == "ok":
        out = {"jsonrpc": "2.0", "id": m["id"], "result": {"content": []}}
    else:
        out = {"jsonrpc": "2.0", "id": m["id"],
               "error": {"code": -32603, "message": "internal error"}}
    sys.stdout.write(json.dumps(out) + "\n")
    sys.stdout.flush()
'''

EXPECTED = {
    "answering": "ok",
    "erroring": "degraded",
    "quiet": "pending",
    "missing": "down",
    "gone": "down",
}


def tmp(name):
    return str(mcptest.tmpdir() / name)


class Tap:
    """`mcptop tap --name NAME --socket SOCK -- python3 SERVER MODE COUNT`
    with the test as its agent."""

    def __init__(self, name, mode):
        self.name = name
        self.sock = tmp("th-%s.sock" % name)
        self.count = tmp("th-%s.count" % name)
        server = tmp("th-server.py")
        if not os.path.exists(server):
            with open(server, "w") as f:
                f.write(SERVER)
        argv = [mcptest.MCPTOP_BIN, "tap", "--name", name, "--socket", self.sock, "--",
                sys.executable, server, mode, self.count]
        self.p = mcptest.spawn(argv, env=mcptest.mcptop_env(), stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 1
        deadline = time.monotonic() + 15
        while not os.path.exists(self.sock):
            if time.monotonic() > deadline or self.p.poll() is not None:
                raise SetupError("tap %s made no socket at %s" % (name, self.sock))
            time.sleep(0.05)

    def call(self, method, params=None):
        """Send one request and read its answer (bounded)."""
        mid = self.next_id
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": mid, "method": method}
        if params is not None:
            msg["params"] = params
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            line = self.p.stdout.readline()
            if not line:
                break
            try:
                a = json.loads(line)
            except ValueError:
                continue
            if a.get("id") == mid:
                return a
        raise SetupError("tap %s: no answer to %s" % (self.name, method))

    def agent_session(self, calls):
        self.call("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                 "clientInfo": {"name": "test_tap_health", "version": "0"}})
        self.p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        self.p.stdin.flush()
        for i in range(calls):
            self.call("tools/call", {"name": "t", "arguments": {"i": i}})

    def methods(self):
        try:
            with open(self.count) as f:
                return f.read().split()
        except OSError:
            return []

    def close(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            return self.p.wait(timeout=EXIT_WAIT)
        except subprocess.TimeoutExpired:
            return mcptest.terminate(self.p)


def wait_stable(read, want, timeout=SETTLE_WAIT, stable_for=STABLE_FOR):
    """Poll read() until it equals want for stable_for seconds, or until it
    has not changed for stable_for seconds once it covers every server; the
    last value at the deadline otherwise."""
    deadline = time.monotonic() + timeout
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        cur = read()
        if cur != last:
            last, since = cur, time.monotonic()
        elif set(want) <= set(cur or {}) and time.monotonic() - since >= stable_for:
            if cur == want:
                return cur, True
        time.sleep(0.25)
    return last, last == want


@mcptest.case(rep)
def check_watch_serve_agree_on_taps(c):
    mcptest.require_mcptop()
    taps = {"answering": Tap("answering", "ok"), "erroring": Tap("erroring", "error"),
            "quiet": Tap("quiet", "ok"), "gone": Tap("gone", "ok")}
    servers = {n: {"tap": t.sock} for n, t in taps.items()}
    servers["missing"] = {"tap": tmp("th-nobody.sock")}
    cfg = mcptest.write_config(servers)
    w = s = None
    try:
        taps["answering"].agent_session(3)
        taps["erroring"].agent_session(3)
        taps["gone"].agent_session(1)
        w = mcptest.Watch(["watch", "-c", cfg])
        s = mcptest.ServeMetrics(cfg, exit_wait=EXIT_WAIT)

        def watch_last():
            last = {}
            for ev in list(w.events):
                if ev.get("event") == "health":
                    last[ev.get("server")] = ev.get("state")
            return last

        # Both monitors have read "gone" as ok before it goes.
        before = dict(EXPECTED, gone="ok")
        got, ok = wait_stable(watch_last, before)
        c.check(ok, "watch settles with the tap still there: %s" % got)
        got, ok = wait_stable(lambda: {n: tuple(st for st, x in v if x == 1) for n, v in s.health()[0].items()},
                              {n: (h,) for n, h in before.items()})
        c.check(ok, "serve settles with the tap still there: %s" % got)

        rc = taps["gone"].close()
        c.eq(rc, 0, "the tap named gone exits with its server's status")

        r = mcptest.run_mcptop(["check", "--json", "-c", cfg], timeout=30)
        c.no_crash(r, "check")
        doc = r.json() if r.stdout.strip() else None
        c.require(isinstance(doc, dict) and isinstance(doc.get("servers"), list),
                  "check --json gives a servers array:\n%s" % r.describe())
        check = {x.get("name"): x.get("health") for x in doc["servers"]}
        check_ok = {x.get("name"): x.get("ok") for x in doc["servers"]}
        for x in doc["servers"]:
            c.eq(x.get("source"), "tap", "%s is read from its tap" % x.get("name"))

        watch, ok = wait_stable(watch_last, EXPECTED)
        c.check(ok, "watch's health settled: %s" % watch)
        serve, ok = wait_stable(lambda: {n: tuple(st for st, x in v if x == 1) for n, v in s.health()[0].items()},
                                {n: (h,) for n, h in EXPECTED.items()})
        c.check(ok, "serve's health settled: %s" % serve)
        serve = {n: (v[0] if len(v) == 1 else v) for n, v in (serve or {}).items()}
        probe = s.health()[1]

        for n, want in EXPECTED.items():
            got = (check.get(n), (watch or {}).get(n), serve.get(n))
            c.check(got[0] == got[1] == got[2], "%s: check %r, watch %r, serve %r disagree" % ((n,) + got))
            c.eq(check.get(n), want, "check's health of %s" % n)
            c.eq(check_ok.get(n), want == "ok", "check's ok of %s" % n)
            c.eq(probe.get(n), 1.0 if want == "ok" else 0.0, "mcp_probe_success of %s" % n)

        # Nothing but the agent spoke to the servers: no ping, no dial.
        c.eq(taps["answering"].methods(), ["initialize"] + ["tools/call"] * 3,
             "the answering server got exactly the agent's requests")
        c.eq(taps["erroring"].methods(), ["initialize"] + ["tools/call"] * 3,
             "the erroring server got exactly the agent's requests")
        c.eq(taps["quiet"].methods(), [], "the quiet server got nothing")
    finally:
        if w is not None:
            w.signal(signal.SIGINT)
            rc = w.wait_exit(EXIT_WAIT)
            c.check(rc == 0, "watch exits 0 after SIGINT (got %s)" % rc)
            w.close()
        if s is not None:
            rc = s.close()
            c.check(rc == 0, "serve exits 0 after SIGTERM (got %s)" % rc)
        for t in taps.values():
            if t.p.poll() is None:
                rc = t.close()
                c.check(rc == 0, "tap %s exits 0 when its agent closes stdin (got %s)" % (t.name, rc))


rep.finish()
