#!/usr/bin/env python3
"""The zoo (issue 26): MCP servers nobody here wrote, pinned in
tests/package.json, run on 127.0.0.1 the ways their users run them.

- fastmcp (zoo/fastmcp.mjs): httpStream with sessions, stateless, stdio;
- supergateway: stdio->SSE, stdio->Streamable HTTP stateful and stateless,
  and as a stdio bridge (`--streamableHttp URL`, `--sse URL`) in front of
  server-everything;
- mcp-proxy: its default Streamable HTTP endpoint (which also speaks
  2026-07-28) and `--no-modern`;
- mcp-framework (zoo/mcp-framework/): its http-stream transport and stdio;
- server-everything itself (issue 45), over each of its three transports:
  stdio, Streamable HTTP (/mcp) and the 2024-11-05 HTTP+SSE one (/sse; its
  ended session is shown gone by its own log, since a POST naming an id it
  no longer knows is never answered).

For each: `mcptop check --json` is ok and lists as many tools as the
official SDK client (count_tools.mjs); `mcptop end` gives an outcome and,
where the transport has session ids, a request carrying the ended id is
refused afterwards (MCPTOP_TEST_REPEAT_DELETE's second DELETE, or a POST to
supergateway's /message); no stdio child is left. Under `mcptop watch`,
four of them (Streamable HTTP, 2024-11-05 HTTP+SSE, 2026-07-28, a stdio
bridge) are SIGKILLed, started again on the same port, and recover at the
first dial after they are back (within one backoff step).

Issue 26 item 3: a stdio bridge forwards the era probe upstream and then
refuses initialize; mcptop dials a fresh child, legacy, with no probe.
Shown with the real supergateway bridges and with stdio/fake.mjs
--mode=init-first (needs no npm package). A use after free the zoo showed
under ASan (a notification after the answer on one SSE response, from
supergateway --stateful) is made deterministic with the fault lab's
/healthy?sse=1&trail=1.

Each server runs in its own process group and is stopped by it; servers
start in parallel, and the cases run in parallel threads (reported in
order once all are done).

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_zoo.py
The last line is "N passed, N failed"; the exit status is 1 on any failure.
"""

import datetime
import json
import os
import signal
import subprocess
import sys
import time
import traceback
import urllib.error
import urllib.request
import uuid
from concurrent.futures import ThreadPoolExecutor

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402
import faultlab  # noqa: E402

rep = mcptest.Reporter("the zoo: third-party MCP servers (issue 26)")

TESTS = mcptest.TESTS_DIR
NM = mcptest.NODE_MODULES
NODE = mcptest._NODE
FAKE = TESTS / "stdio" / "fake.mjs"
FASTMCP = TESTS / "zoo" / "fastmcp.mjs"
FRAMEWORK = TESTS / "zoo" / "mcp-framework" / "server.mjs"
SUPERGATEWAY = NM / "supergateway" / "dist" / "index.js"
MCP_PROXY = NM / "mcp-proxy" / "dist" / "bin" / "mcp-proxy.mjs"
EVERYTHING = NM / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
PACKAGES = ("fastmcp", "supergateway", "mcp-proxy", "mcp-framework")

# Bounds (seconds), generous: 2 shared cores, and CI runs this under ASan.
START_WAIT = 45.0
CHECK_TIMEOUT = 60.0
READY_WAIT = 45.0
LOSS_WAIT = 30.0
RECOVER_WAIT = 60.0
WORKERS = 4
# stdio endings: a third of it passes between stdin's close and SIGTERM;
# node servers under load (and ASan) need more than the default 1 s
STDIO_TEARDOWN_MS = 9000
# mcptop's own keys for every fleet here: a slow start (node under load)
# is not a failure; pings often, so that a loss is seen soon.
OPTS = {"timeout_ms": 15000, "open_deadline_ms": 40000, "ping_interval_s": 1}

MARKER = "zoo-" + uuid.uuid4().hex[:12]   # in every stdio child's environment


def wall_ms():
    return int(time.time() * 1000)


def ts_ms(ev):
    """An event's ts (ISO 8601, UTC, ms) as epoch ms."""
    t = datetime.datetime.strptime(ev["ts"], "%Y-%m-%dT%H:%M:%S.%fZ")
    return int(t.replace(tzinfo=datetime.timezone.utc).timestamp() * 1000)


def everything_stdio():
    return "%s %s stdio" % (NODE, EVERYTHING)


# --------------------------------------------------------------------------
# processes


class Launched:
    """A third-party HTTP server on 127.0.0.1:port, in its own process group.
    argv(port) gives its node arguments; preload: node --require mcptest's
    hook, for a server that would listen on every interface; env(port): more
    of its environment (server-everything takes its port from PORT)."""

    def __init__(self, name, argv, path, preload=False, env=None):
        self.name = name
        self.port = mcptest.free_port()
        self._argv = argv
        self._env = env
        self.path = path
        self.preload = preload
        self.proc = None
        self.log_path = mcptest.tmpdir() / ("zoo-%s.log" % name)
        self.starts = 0
        self.error = None       # why the last start failed

    @property
    def url(self):
        return "http://%s:%d%s" % (mcptest.LOOPBACK, self.port, self.path)

    def output(self):
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def start(self, timeout=START_WAIT):
        self.launch()
        return self.wait(timeout)

    def launch(self):
        """Spawn it (from a thread that outlives it: setpriv's parent-death
        signal follows the thread that spawned)."""
        argv = [NODE]
        if self.preload:
            argv += ["--require", str(mcptest._preload_path())]
        argv += [str(a) for a in self._argv(self.port)]
        env = dict(os.environ)
        env["MCPTEST_PARENT_PID"] = str(os.getpid())
        env.pop("NODE_OPTIONS", None)
        if self._env is not None:
            env.update(self._env(self.port))
        self.starts += 1
        with open(self.log_path, "ab") as out:
            out.write(b"--- start %d on port %d ---\n" % (self.starts, self.port))
            out.flush()
            self.proc = mcptest.spawn(argv, env=env, stdout=out, stderr=subprocess.STDOUT,
                                      cwd=str(TESTS))

    def wait(self, timeout=START_WAIT):
        if not mcptest.wait_port(self.port, timeout=timeout, proc=self.proc):
            rc = self.proc.poll()
            mcptest.terminate(self.proc)
            self.error = ("%s did not listen on port %d within %.0f s (exit %s):\n%s"
                          % (self.name, self.port, timeout, rc, self.output()[-3000:]))
            raise mcptest.SetupError(self.error)
        self.error = None
        return self

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def kill(self):
        """SIGKILL to the whole tree (supergateway starts its child in a
        process group of its own), then wait until the port refuses."""
        if self.proc is not None:
            tree = descendants(self.proc.pid)
            mcptest._signal_group(self.proc, signal.SIGKILL)
            kill_tree(tree)
            mcptest.terminate(self.proc, grace=0.1)
            self.proc = None
        mcptest.wait_port_closed(self.port, timeout=10.0)

    def stop(self):
        if self.proc is not None:
            tree = descendants(self.proc.pid)
            mcptest.terminate(self.proc, grace=3.0)
            kill_tree(tree)
            self.proc = None


def marked_pids():
    """Processes whose environment carries this run's marker (stdio children
    mcptop started from a config here, and theirs)."""
    found = []
    needle = ("MCPTEST_ZOO=%s" % MARKER).encode()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/environ" % d, "rb") as f:
                if needle in f.read().split(b"\0"):
                    found.append(int(d))
        except OSError:
            pass
    return found


def kill_marked():
    for pid in marked_pids():
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def children_of(pid):
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(d))
    return out


def descendants(pid):
    """pid's children, theirs, and so on (read from /proc)."""
    parent = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                parent[int(d)] = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        kids = [k for k, pp in parent.items() if pp == p]
        out += kids
        todo += kids
    return out


def kill_tree(pids):
    for p in pids:
        for f in (lambda: os.killpg(p, signal.SIGKILL), lambda: os.kill(p, signal.SIGKILL)):
            try:
                f()
            except OSError:
                pass


def stdio_decl(argv, **extra):
    d = {"command": str(argv[0]), "args": [str(a) for a in argv[1:]],
         "env": {"MCPTEST_ZOO": MARKER}}
    d.update(extra)
    return d


# --------------------------------------------------------------------------
# the zoo


class Zoo:
    http = {}       # name -> Launched
    upstream = {}   # "http" / "sse" -> mcptest.Everything, behind the bridges


def http_servers():
    ev = everything_stdio()
    fake = "%s %s" % (NODE, FAKE)
    return [
        Launched("fastmcp_http", lambda p: [FASTMCP, "http", p], "/mcp"),
        Launched("fastmcp_stateless", lambda p: [FASTMCP, "http", p, "--stateless"], "/mcp"),
        Launched("supergateway_sse", lambda p: [SUPERGATEWAY, "--stdio", ev, "--port", p], "/sse",
                 preload=True),
        Launched("supergateway_stateful", lambda p: [
            SUPERGATEWAY, "--stdio", ev, "--outputTransport", "streamableHttp", "--stateful",
            "--port", p], "/mcp", preload=True),
        # stateless spawns a child for every request: the light fake, not everything
        Launched("supergateway_stateless", lambda p: [
            SUPERGATEWAY, "--stdio", fake, "--outputTransport", "streamableHttp", "--port", p],
            "/mcp", preload=True),
        Launched("mcp_proxy", lambda p: [
            MCP_PROXY, "--host", "127.0.0.1", "--port", p, "--", NODE, EVERYTHING, "stdio"],
            "/mcp"),
        Launched("mcp_proxy_no_modern", lambda p: [
            MCP_PROXY, "--host", "127.0.0.1", "--port", p, "--no-modern", "--", NODE,
            EVERYTHING, "stdio"], "/mcp"),
        Launched("mcp_framework_http", lambda p: [FRAMEWORK, "http", p], "/mcp"),
        # server-everything's own HTTP transports: app.listen(PORT) (every
        # interface without the preload), the mode its first argument
        Launched("everything_http", lambda p: [EVERYTHING, "streamableHttp"], "/mcp",
                 preload=True, env=lambda p: {"PORT": str(p)}),
        Launched("everything_sse", lambda p: [EVERYTHING, "sse"], "/sse",
                 preload=True, env=lambda p: {"PORT": str(p)}),
    ]


def start_zoo():
    """Every HTTP server and the bridges' upstreams, started at once from
    this (the main) thread, then waited for."""
    servers = http_servers()
    ups = {"http": mcptest.Everything(), "sse": mcptest.Everything(mode="sse")}
    Zoo.http = {s.name: s for s in servers}
    Zoo.upstream = ups
    errs = []
    for s in servers:
        s.launch()
    for w in [u.start for u in ups.values()] + [s.wait for s in servers]:
        try:
            w(timeout=START_WAIT)
        except mcptest.SetupError as e:  # reported by the cases that need it
            errs.append(str(e))
    return errs


def stop_zoo():
    for s in Zoo.http.values():
        s.stop()
    for u in Zoo.upstream.values():
        u.stop()
    kill_marked()


def bridge_argv(kind):
    up = Zoo.upstream[kind]
    flag = "--streamableHttp" if kind == "http" else "--sse"
    return [NODE, SUPERGATEWAY, flag, up.url, "--logLevel", "none"]


# --------------------------------------------------------------------------
# check and end, one server


def check_row(c, name, decl, tools, extra_env=None):
    """`mcptop check --json` on a one-server fleet: the row, ok, the tools."""
    cfg = mcptest.write_config({name: decl}, mcptop=OPTS)
    r = mcptest.run_mcptop(["check", "--json", "-c", cfg], timeout=CHECK_TIMEOUT, env=extra_env)
    c.attach(r.describe())
    c.no_crash(r)
    doc = r.json()
    c.require(doc is not None and len(doc.get("servers", [])) == 1,
              "check --json gives one server row (%s)" % r.json_error)
    row = doc["servers"][0]
    c.eq(row.get("ok"), True, "%s: ok" % name)
    c.eq(r.rc, 0, "%s: check exit status" % name)
    c.eq(row.get("tools"), tools, "%s: tools, as many as the SDK client lists" % name)
    return row


def end_lines(c, name, decl, repeat=False, teardown_ms=None):
    cfg = mcptest.write_config({name: decl}, mcptop=OPTS)
    env = {"MCPTOP_TEST_REPEAT_DELETE": "1"} if repeat else None
    args = ["end", "--json", "-c", cfg]
    if teardown_ms is not None:
        args += ["--teardown", str(teardown_ms)]
    r = mcptest.run_mcptop(args, timeout=CHECK_TIMEOUT, env=env)
    c.attach(r.describe())
    c.no_crash(r)
    lines = []
    for ln in r.stdout.splitlines():
        try:
            ev = json.loads(ln)
        except ValueError:
            continue
        if isinstance(ev, dict) and ev.get("outcome"):
            lines.append(ev)
    c.require(lines, "%s: end --json gives an outcome" % name)
    return r, lines


def refused(st):
    return st is not None and st >= 400


# name -> (transport, era, the ending's outcome, how an old session id is
# shown refused: "delete" (a second DELETE), "sse_post" (a POST to
# supergateway's /message), "sse_log" (server-everything's HTTP+SSE: its
# log says the session's stream closed, and a POST naming it finds no
# transport), None: no session id on this transport)
HTTP_CASES = {
    "fastmcp_http": ("http", "legacy", "terminated", "delete"),
    "fastmcp_stateless": ("http", "legacy", "no_session", None),
    "supergateway_sse": ("sse", "legacy_sse", "stream_closed", "sse_post"),
    "supergateway_stateful": ("http", "legacy", "terminated", "delete"),
    "supergateway_stateless": ("http", "legacy", "no_session", None),
    "mcp_proxy": ("http", "modern", "no_session", None),
    "mcp_proxy_no_modern": ("http", "legacy", "terminated", "delete"),
    "mcp_framework_http": ("http", "legacy", "terminated", "delete"),
    "everything_http": ("http", "legacy", "terminated", "delete"),
    "everything_sse": ("sse", "legacy_sse", "stream_closed", "sse_log"),
}

# `mcptop end`'s exit status is 0 when every outcome is one of these (its
# --help), 1 otherwise
END_OK = ("terminated", "not_allowed", "already_gone", "exited", "no_session", "stream_closed")


def sse_sessions(srv):
    """supergateway stdio->SSE: the session ids it logged (POST to SSE transport)."""
    ids = []
    for ln in srv.output().splitlines():
        i = ln.find("POST to SSE transport (session ")
        if i >= 0:
            sid = ln[i + len("POST to SSE transport (session "):].split(")")[0]
            if sid not in ids:
                ids.append(sid)
    return ids


def everything_sse_log(srv, what):
    """server-everything in sse mode: the session ids of its log lines
    "Client Connected:  ID" (what="Connected") or "Client Disconnected:  ID"."""
    ids = []
    for ln in srv.output().splitlines():
        head = "Client %s: " % what
        if ln.startswith(head):
            sid = ln[len(head):].strip()
            if sid and sid not in ids:
                ids.append(sid)
    return ids


def wait_log(srv, pred, timeout):
    deadline = time.monotonic() + timeout
    while not pred(srv.output()):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def post_status(url, body=None, headers=None, timeout=5.0):
    data = json.dumps(body or {"jsonrpc": "2.0", "id": 99, "method": "ping"}).encode()
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    h.update(headers or {})
    rq = urllib.request.Request(url, data=data, method="POST", headers=h)
    try:
        with urllib.request.urlopen(rq, timeout=timeout) as resp:
            resp.read(4096)
            return resp.status
    except urllib.error.HTTPError as e:
        e.read()
        return e.code
    except OSError:
        return None


def http_case(c, name):
    transport, era, outcome, old_id = HTTP_CASES[name]
    srv = Zoo.http.get(name)
    c.require(srv is not None and srv.running(), "%s is running%s"
              % (name, "" if srv is None or srv.error is None else ": " + srv.error))
    try:
        # The oracle first, alone: supergateway's stdio->SSE hands every
        # child answer to every session, so two clients at once would see
        # each other's ids.
        oracle = mcptest.count_tools(srv.url, sse=(transport == "sse"), timeout=30.0)
        row = check_row(c, name, {"url": srv.url}, oracle["tools"])
        c.eq(row.get("transport"), transport, "%s: transport" % name)
        c.eq(row.get("era"), era, "%s: era" % name)
        c.eq(row.get("health"), "ok", "%s: health" % name)
        before = (sse_sessions(srv) if old_id == "sse_post" else
                  everything_sse_log(srv, "Connected") if old_id == "sse_log" else [])
        r, lines = end_lines(c, name, {"url": srv.url}, repeat=(old_id == "delete"))
        c.eq(lines[0].get("outcome"), outcome, "%s: the ending's outcome" % name)
        c.eq(r.rc, 0 if all(ln.get("outcome") in END_OK for ln in lines) else 1,
             "%s: end exit status (%s)" % (name, [ln.get("outcome") for ln in lines]))
        if old_id == "delete":
            # MCPTOP_TEST_REPEAT_DELETE: the ended id DELETEd once more
            c.require(len(lines) == 2, "%s: a second ending line (the repeated DELETE)" % name)
            c.is_in(lines[1].get("outcome"), ("already_gone", "rejected"),
                    "%s: the ended session's id is refused afterwards" % name)
            c.check(refused(lines[1].get("http_status")),
                    "%s: the repeated DELETE got a 4xx: %s" % (name, json.dumps(lines[1])))
        elif old_id == "sse_post":
            new = [s for s in sse_sessions(srv) if s not in before]
            c.require(len(new) == 1, "%s: one HTTP+SSE session of mcptop's in the server's log "
                      "(got %r)" % (name, new))
            st = post_status("http://127.0.0.1:%d/message?sessionId=%s" % (srv.port, new[0]))
            c.check(refused(st), "%s: a POST with the ended session's id is refused "
                    "(HTTP %s)" % (name, st))
        elif old_id == "sse_log":
            new = [s for s in everything_sse_log(srv, "Connected") if s not in before]
            c.require(len(new) == 1, "%s: one HTTP+SSE session of mcptop's in the server's log "
                      "(got %r)" % (name, new))
            c.check(wait_log(srv, lambda _: new[0] in everything_sse_log(srv, "Disconnected"),
                             10.0),
                    "%s: the server saw the session's stream close (Client Disconnected: %s)"
                    % (name, new[0]))
            # It never answers a POST naming an id it does not know (it only
            # logs it): a short wait, then its log says no transport.
            st = post_status("http://127.0.0.1:%d/message?sessionId=%s" % (srv.port, new[0]),
                             timeout=1.0)
            c.check(st is None or refused(st), "%s: a POST with the ended session's id is not "
                    "taken (HTTP %s)" % (name, st))
            c.check(wait_log(srv, lambda t: "No transport found for sessionId %s" % new[0] in t,
                             10.0),
                    "%s: the server has no transport for the ended session's id" % name)
        else:
            c.eq(len(lines), 1, "%s: one ending line" % name)
    finally:
        if c.failures:
            c.attach("%s's output (last 3000 characters):\n%s" % (name, srv.output()[-3000:]))


def stdio_case(c, name, argv, refuses_after_probe=False, ending=None):
    """A stdio server: check (the SDK client's count over stdio), end (the
    shutdown sequence's outcome: ending, where the server's own behaviour
    makes it known), and no child of ours left."""
    oracle = mcptest.count_tools(None, command=argv, timeout=30.0)
    row = check_row(c, name, stdio_decl(argv), oracle["tools"])
    c.eq(row.get("transport"), "stdio", "%s: transport" % name)
    c.eq(row.get("era"), "legacy", "%s: era" % name)
    warnings = row.get("warnings") or []
    said = [w for w in warnings if "refused initialize after server/discover" in w]
    if refuses_after_probe:
        c.check(said, "%s: a warning says initialize was refused after the probe and a fresh "
                "child took it: %r" % (name, warnings))
    r, lines = end_lines(c, name, stdio_decl(argv), teardown_ms=STDIO_TEARDOWN_MS)
    outcome = lines[0].get("outcome")
    c.is_in(outcome, ("exited", "signalled", "killed"), "%s: the ending's outcome" % name)
    if ending is not None:
        c.eq(outcome, ending, "%s: the ending's outcome (%s)" % (name, lines[0].get("detail")))
    # `end` exits 0 only when the child exited by itself once stdin closed
    c.eq(r.rc, 0 if outcome == "exited" else 1, "%s: end exit status (%s)" % (name, outcome))


def fixture_init_first(c):
    """Item 3 without npm: stdio/fake.mjs --mode=init-first answers the probe
    -32601 and refuses the initialize that follows; mcptop spawns a fresh
    child and dials it legacy with no probe (2 spawns, ok, 2 tools, the
    warning); before the fix the dial failed with protocol -32600."""
    spawns = mcptest.tmpdir() / ("init-first-spawns-%s" % uuid.uuid4().hex[:8])
    log = mcptest.tmpdir() / ("init-first-%s.log" % uuid.uuid4().hex[:8])
    decl = stdio_decl([NODE, FAKE, "--mode=init-first", "--spawn-log=%s" % spawns])
    cfg = mcptest.write_config({"bridge": decl}, mcptop=OPTS)
    r = mcptest.run_mcptop(["check", "--json", "--log", str(log), "-c", cfg], timeout=CHECK_TIMEOUT)
    c.attach(r.describe())
    c.no_crash(r)
    doc = r.json()
    c.require(doc is not None, "check --json is JSON (%s)" % r.json_error)
    row = doc["servers"][0]
    c.eq(row.get("ok"), True, "ok")
    c.eq(r.rc, 0, "check exit status")
    c.eq(row.get("tools"), 2, "tools")
    c.eq(row.get("era"), "legacy", "era")
    c.eq(row.get("last_failure"), None, "no failure left from the refused initialize")
    warnings = row.get("warnings") or []
    c.check(any("refused initialize after server/discover" in w and "fresh child" in w and
                "-32600" in w for w in warnings),
            "a warning says why the fresh child (JSON-RPC error -32600): %r" % warnings)
    n = len(spawns.read_text().split()) if spawns.exists() else 0
    c.eq(n, 2, "children spawned (the refusing one, the fresh one)")
    text = log.read_text(errors="replace") if log.exists() else ""
    c.eq(text.count("stdin server/discover"), 1, "probes sent (none to the fresh child)")
    c.attach("log:\n" + text[-3000:])


def faultlab_notice_after_answer(c):
    """What the zoo's supergateway --stateful showed under ASan: an SSE
    answer followed, in the same write, by a notification, then the
    stream's end. The answer was emitted first and its request freed, then
    the notification went up still naming that request (a use after free:
    this case fails under ASan on the code before the fix). The fault lab
    makes it deterministic: /healthy?sse=1&trail=1."""
    lab = faultlab.FaultLab().start()
    try:
        url = lab.url("/healthy?sse=1&trail=1")
        r = mcptest.run_mcptop(["check", "--json", "--pings", "3", url], timeout=CHECK_TIMEOUT)
        c.attach(r.describe())
        c.no_crash(r)
        doc = r.json()
        c.require(doc is not None, "check --json is JSON (%s)" % r.json_error)
        row = doc["servers"][0]
        c.eq(row.get("ok"), True, "ok")
        c.eq(row.get("tools"), 3, "tools")
        c.eq(r.rc, 0, "check exit status")
    finally:
        lab.stop()


# --------------------------------------------------------------------------
# watch: SIGKILL, restart, recovery


def liveness(name, state):
    return lambda ev: (ev.get("event") == "liveness" and ev.get("server") == name
                       and ev.get("state") == state)


def watch_recovery(c, name, decl, kill, restart, probes_once=False):
    """Under `mcptop watch`: reachable; kill(w) (SIGKILL); the loss seen;
    restart(); reachable again, and no dial that began after the server was
    back failed (it recovered within one backoff step); SIGINT: exit 0."""
    log = mcptest.tmpdir() / ("zoo-watch-%s.log" % name)
    cfg = mcptest.write_config({name: decl}, mcptop=OPTS)
    w = mcptest.Watch(["watch", "-c", cfg, "--log", str(log)])
    try:
        c.require(w.wait_for(liveness(name, "reachable"), time.monotonic() + READY_WAIT)
                  is not None, "%s: reachable under watch" % name)
        kill(w)
        lost = w.wait_for(liveness(name, "unreachable"), time.monotonic() + LOSS_WAIT)
        c.require(lost is not None, "%s: the SIGKILL is seen (liveness unreachable)" % name)
        restart()
        t_up = wall_ms()
        back = w.wait_for(liveness(name, "reachable"), time.monotonic() + RECOVER_WAIT)
        c.require(back is not None, "%s: reachable again after the restart" % name)
        late = [e for e in w.events
                if e.get("event") == "exchange" and e.get("server") == name and
                e.get("op") == "dial" and e.get("outcome") != "completed" and
                ts_ms(e) - float(e.get("ms") or 0) > t_up + 1000]
        c.check(not late, "%s: no dial that began once the server was back failed: %s"
                % (name, [json.dumps(e) for e in late[:3]]))
        if probes_once:
            text = log.read_text(errors="replace")
            c.eq(text.count("stdin server/discover"), 1,
                 "%s: probes sent (the redial after the kill remembers legacy)" % name)
        w.signal(signal.SIGINT)
        rc = w.wait_exit(15.0)
        c.eq(rc, 0, "%s: watch exit status after SIGINT" % name)
        c.check("Sanitizer" not in w.stderr() and "runtime error:" not in w.stderr(),
                "%s: no sanitizer report" % name)
    finally:
        w.close()
        if c.failures:
            c.attach(w.describe(last=40))
            try:
                c.attach("log (last 4000 characters):\n" + log.read_text(errors="replace")[-4000:])
            except OSError:
                pass


def watch_http(c, name):
    srv = Zoo.http.get(name)
    c.require(srv is not None and srv.running(), "%s is running%s"
              % (name, "" if srv is None or srv.error is None else ": " + srv.error))
    try:
        watch_recovery(c, name, {"url": srv.url}, lambda w: srv.kill(), srv.start)
    finally:
        if c.failures:
            c.attach("%s's output (last 3000 characters):\n%s" % (name, srv.output()[-3000:]))


def watch_stdio_bridge(c):
    """The stdio bridge (supergateway --streamableHttp): its child SIGKILLed
    (its whole group); mcptop sees the exit, dials a new one after its
    backoff, legacy as remembered, with no probe."""
    name = "bridge_watch"

    def kill(w):
        kids = children_of(w.proc.pid)
        c.require(kids, "mcptop has a child to kill")
        for k in kids:
            try:
                os.killpg(k, signal.SIGKILL)
            except OSError:
                os.kill(k, signal.SIGKILL)

    watch_recovery(c, name, stdio_decl(bridge_argv("http")), kill, lambda: None,
                   probes_once=True)


# --------------------------------------------------------------------------
# running the cases in parallel, reporting in order


def run_parallel(cases, workers=WORKERS):
    """cases: [(name, fn, args)]. Each runs in a thread with its own Case;
    the results are reported in order (the times printed are the threads')."""
    def one(fn, args):
        c = mcptest.Case(fn.__name__)
        t0 = time.monotonic()
        try:
            fn(c, *args)
        except mcptest.CaseFailed:
            pass
        except mcptest.SetupError as e:
            c.failures.append("setup: %s" % e)
        except Exception:
            c.failures.append("exception:\n" + traceback.format_exc())
        return c, time.monotonic() - t0

    with ThreadPoolExecutor(workers) as ex:
        futs = [(name, ex.submit(one, fn, args)) for name, fn, args in cases]
        results = [(name, f.result()) for name, f in futs]
    for name, (done, secs) in results:
        def replay(c, done=done, secs=secs):
            c.failures.extend(done.failures)
            c.context.extend(done.context)
            if done.failures:
                c.context.append("(the case ran %.1f s in its thread)" % secs)
        rep.run(name, replay)


def main():
    try:
        mcptest.require_mcptop()
        mcptest.require_node_modules()
    except mcptest.SetupError as e:
        print("setup: %s" % e)
        rep.failed += 1
        rep.finish()
    mcptest.tmpdir()
    mcptest._preload_path()   # made once, before the threads
    rep.run("fixture_init_first", fixture_init_first)
    rep.run("faultlab_notice_after_answer", faultlab_notice_after_answer)
    missing = [p for p in PACKAGES if not (NM / p / "package.json").exists()]
    if missing:
        print("setup: npm packages missing in %s: %s (run scripts/install-deps.sh)"
              % (NM, ", ".join(missing)))
        rep.failed += 1
        rep.finish()
    t0 = time.monotonic()
    errs = start_zoo()
    print("the zoo started in %.1f s%s" % (time.monotonic() - t0,
          "".join("\n  setup: " + e.splitlines()[0] for e in errs)), flush=True)
    try:
        cases = [(n, http_case, (n,)) for n in HTTP_CASES]
        cases += [
            ("fastmcp_stdio", stdio_case, ("fastmcp_stdio", [NODE, FASTMCP, "stdio"])),
            ("mcp_framework_stdio", stdio_case,
             ("mcp_framework_stdio", [NODE, FRAMEWORK, "stdio"])),
            ("supergateway_bridge_streamable_http", stdio_case,
             ("supergateway_bridge_streamable_http", bridge_argv("http"), True)),
            ("supergateway_bridge_sse", stdio_case, ("supergateway_bridge_sse", bridge_argv("sse"))),
            # server-everything exits by itself once its stdin closes
            ("everything_stdio", stdio_case,
             ("everything_stdio", [NODE, EVERYTHING, "stdio"], False, "exited")),
        ]
        run_parallel(cases)
        run_parallel([
            ("watch_fastmcp_http", watch_http, ("fastmcp_http",)),
            ("watch_supergateway_sse", watch_http, ("supergateway_sse",)),
            ("watch_mcp_proxy_modern", watch_http, ("mcp_proxy",)),
            ("watch_supergateway_bridge", watch_stdio_bridge, ()),
        ])
        leftover = marked_pids()
        rep.run("no_stdio_child_left", lambda c: c.check(
            not leftover, "no process of a stdio server left: %r" % leftover))
    finally:
        stop_zoo()
    print("the zoo ran in %.1f s" % (time.monotonic() - t0), flush=True)
    rep.finish()


if __name__ == "__main__":
    main()
