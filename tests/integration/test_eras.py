#!/usr/bin/env python3
"""Protocol eras (DESIGN.md section 6): legacy (2025 revisions, and the
2024-11-05 HTTP+SSE transport) and modern (2026-07-28) servers in one fleet.

Servers: server-everything over Streamable HTTP (legacy, 2025-11-25) and in
`sse` mode (legacy_sse); tests/era/server.mjs, built on the official
@modelcontextprotocol/server 2.4.0, modern-only and dual-era, over HTTP and
stdio; the fault lab's /probe/<case> endpoints.

The contract (mcptop check --json): each server object carries
"era": "modern" | "legacy" | "legacy_sse" | null and session.protocol_version
("2026-07-28" for modern); a modern server has session.id_prefix null; config
per-server "era": "auto" (default) | "modern" | "legacy". A modern server's
liveness exchange is server/discover (watch: exchange op "discover"); its
ending is local: outcome no_session, detail containing
"sessionless (2026-07-28)", settled.

Cases:
  a  one fleet: each server reachable, with its era, protocol version and
     tool count (counted independently: the SDK client for server-everything,
     a hand-written 2024-11-05 SSE client, a hand-written 2026-07-28 client
     for HTTP and stdio); what the era servers saw (no initialize, ping, GET
     or DELETE on a modern dial; the headers on every modern request)
  a2 the era set in the config (legacy on a dual-era server; modern on a
     legacy-only one and legacy on a modern-only one fail)
  b  mcptop end on that fleet: terminated (legacy Streamable HTTP), no_session
     + "sessionless" (modern), each settled; no DELETE reached a modern server;
     no stdio child left
  c  a tool added on a modern server (HTTP, stdio) reaches `mcptop watch` as
     tools_changed through subscriptions/listen within a bound
  d  killed servers: HTTP connect_refused, stdio connection_closed
  e  the probe table against the fault lab's /probe/* endpoints

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_eras.py
The last line is "N passed, N failed"; the exit status is 1 on any failure.
"""

import glob
import http.client
import json
import os
import queue
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402
from mcptest import MISSING, SetupError, dig  # noqa: E402
import faultlab  # noqa: E402

rep = mcptest.Reporter("protocol eras: modern (2026-07-28), legacy and legacy_sse")

NODE = mcptest._NODE
ERA_SERVER_MJS = mcptest.TESTS_DIR / "era" / "server.mjs"
ERA_PACKAGE = mcptest.NODE_MODULES / "@modelcontextprotocol" / "server" / "package.json"

MODERN = "2026-07-28"
LEGACY = "2025-11-25"      # what mcptop offers in initialize, and what the servers here echo
SESSIONLESS = "sessionless (2026-07-28)"
OK_OUTCOMES = ("terminated", "not_allowed", "already_gone", "exited", "no_session", "stream_closed")

CHECK_TIMEOUT = 40.0       # s for one `mcptop check` / `mcptop end` of a whole fleet
FLEET_OPTS = {"timeout_ms": 5000, "open_deadline_ms": 10000}
PROBE_OPTS = {"timeout_ms": 1500, "open_deadline_ms": 1500}
WATCH_BOUND = 25.0         # s for one watch story
EXIT_WAIT = 6.0            # s after SIGINT (teardown 3 s + grace 1 s + margin)

# Tool counts of the era servers (each its own, to tell rows apart).
N_MODERN_HTTP, N_DUAL_HTTP, N_MODERN_STDIO, N_DUAL_STDIO = 3, 5, 2, 4

META = {
    "io.modelcontextprotocol/protocolVersion": MODERN,
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "mcptest-era-oracle", "version": "0.0.0"},
}


def tag():
    return uuid.uuid4().hex[:12]


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# --------------------------------------------------------------------------
# the era servers (tests/era/server.mjs)


def require_era_server():
    if not NODE:
        raise SetupError("node is not on PATH")
    if not ERA_SERVER_MJS.exists():
        raise SetupError("%s is missing" % ERA_SERVER_MJS)
    if not ERA_PACKAGE.exists():
        raise SetupError("%s is missing: run scripts/install-deps.sh (npm ci in tests/)" % ERA_PACKAGE)


def read_state(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return {}


def merged_state(pattern):
    """The counters of every process whose state file matches pattern (a stdio
    server is spawned anew on each dial), added up; tools/names/pid from the
    newest file; "processes" counts the files."""
    files = sorted(glob.glob(pattern), key=lambda p: os.path.getmtime(p) if os.path.exists(p) else 0)
    out = {"processes": 0, "methods": {}, "http": {}, "listens": 0, "added": 0,
           "modern_requests": 0, "missing_headers": 0}
    for path in files:
        if path.endswith(".tmp"):
            continue
        st = read_state(path)
        if not st:
            continue
        out["processes"] += 1
        for k in ("methods", "http"):
            for m, n in st.get(k, {}).items():
                out[k][m] = out[k].get(m, 0) + n
        for k in ("listens", "added", "modern_requests", "missing_headers"):
            out[k] += st.get(k, 0)
        for k in ("tools", "names", "pid", "era", "transport"):
            if k in st:
                out[k] = st[k]
    return out


class EraHttp:
    """tests/era/server.mjs over HTTP on 127.0.0.1 (port chosen by the server), /mcp."""

    def __init__(self, era, tools, extra=()):
        self.era = era
        self.tools = tools
        self.extra = [str(a) for a in extra]
        self.marker = tag()
        self.state_path = mcptest.tmpdir() / ("era-http-%s.json" % self.marker)
        self.log_path = mcptest.tmpdir() / ("era-http-%s.log" % self.marker)
        self.proc = None
        self.url = None
        self.port = None
        self._lines = queue.Queue()

    def start(self, timeout=20.0):
        require_era_server()
        argv = [NODE, ERA_SERVER_MJS, "--transport", "http", "--port", "0", "--era", self.era,
                "--tools", str(self.tools), "--state-file", self.state_path,
                "--parent-pid", str(os.getpid()), "--tag", self.marker] + self.extra
        err = open(self.log_path, "ab")
        self.proc = mcptest.spawn(argv, stdout=subprocess.PIPE, stderr=err, cwd=str(mcptest.TESTS_DIR))
        err.close()
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self._lines.get(timeout=0.2)
            except queue.Empty:
                if self.proc.poll() is not None:
                    break
                continue
            if line is None:
                break
            if line.startswith("era-server ready "):
                info = json.loads(line[len("era-server ready "):])
                self.url, self.port = info["url"], int(info["port"])
                return self
        rc = self.proc.poll()
        mcptest.terminate(self.proc)
        raise SetupError("era server (http, %s) did not get ready within %.0fs (exit %s):\n%s"
                         % (self.era, timeout, rc, self.output()))

    def _read(self):
        for raw in iter(self.proc.stdout.readline, b""):
            self._lines.put(raw.decode(errors="replace").rstrip("\n"))
        self._lines.put(None)

    def output(self):
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def state(self):
        return read_state(self.state_path)

    def kill(self):
        if self.proc is not None:
            mcptest._signal_group(self.proc, signal.SIGKILL)
            mcptest.terminate(self.proc, grace=0.1)
            self.proc = None
        mcptest.wait_port_closed(self.port, timeout=10.0)

    def stop(self):
        if self.proc is not None:
            mcptest.terminate(self.proc, grace=3.0)
            self.proc = None


class EraStdio:
    """A config declaration of tests/era/server.mjs over stdio (mcptop spawns it)."""

    def __init__(self, era, tools, extra=()):
        self.era = era
        self.tools = tools
        self.marker = tag()
        self.state_path = mcptest.tmpdir() / ("era-stdio-%s-%%p.json" % self.marker)
        self.args = [str(ERA_SERVER_MJS), "--transport", "stdio", "--era", era, "--tools", str(tools),
                     "--state-file", str(self.state_path), "--tag", self.marker] + [str(a) for a in extra]

    def decl(self, **extra):
        require_era_server()
        d = {"command": NODE, "args": list(self.args)}
        d.update(extra)
        return d

    def argv(self):
        """argv for an oracle's own child (its counters go to another file)."""
        args = list(self.args)
        i = args.index("--state-file")
        args[i + 1] = args[i + 1].replace("-%p.json", ".oracle-%p")
        return [NODE] + args

    def state(self):
        """The counters of every child mcptop spawned from this declaration, added up."""
        return merged_state(str(self.state_path).replace("%p", "*"))

    def pids(self):
        r = subprocess.run(["pgrep", "-f", self.marker], stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, timeout=10)
        me = os.getpid()
        return [int(p) for p in r.stdout.split() if int(p) != me]

    def wait_pids(self, want_some, timeout):
        deadline = time.monotonic() + timeout
        while True:
            pids = self.pids()
            if bool(pids) == want_some or time.monotonic() >= deadline:
                return pids
            time.sleep(0.1)


# --------------------------------------------------------------------------
# independent oracles (stdlib only; they speak the wire themselves)


def _post(url, obj, headers, timeout=10.0):
    """POST obj as JSON; (status, headers, [JSON-RPC messages]) from a JSON or SSE answer."""
    body = json.dumps(obj).encode()
    h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    h.update(headers)
    rq = urllib.request.Request(url, data=body, method="POST", headers=h)
    try:
        with urllib.request.urlopen(rq, timeout=timeout) as r:
            status, rh, raw = r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        status, rh, raw = e.code, e.headers, e.read()
    text = raw.decode(errors="replace")
    msgs = []
    if "text/event-stream" in (rh.get("Content-Type") or ""):
        for line in text.splitlines():
            if line.startswith("data:"):
                data = line[5:].strip()
                if data:
                    try:
                        msgs.append(json.loads(data))
                    except ValueError:
                        pass
    elif text.strip():
        try:
            msgs.append(json.loads(text))
        except ValueError:
            pass
    return status, rh, msgs


def _answer(msgs, rid):
    for m in msgs:
        if isinstance(m, dict) and m.get("id") == rid and ("result" in m or "error" in m):
            return m
    return None


def modern_http_oracle(url):
    """server/discover + every tools/list page, as a 2026-07-28 client."""
    def call(rid, method, params):
        p = dict(params)
        p["_meta"] = META
        st, _, msgs = _post(url, {"jsonrpc": "2.0", "id": rid, "method": method, "params": p},
                            {"MCP-Protocol-Version": MODERN, "Mcp-Method": method})
        a = _answer(msgs, rid)
        if st != 200 or a is None or "result" not in a:
            raise SetupError("oracle: %s at %s answered HTTP %s: %r" % (method, url, st, msgs))
        return a["result"]
    d = call(1, "server/discover", {})
    names, cursor, rid = [], None, 2
    while True:
        r = call(rid, "tools/list", {"cursor": cursor} if cursor is not None else {})
        names += [t["name"] for t in r.get("tools", [])]
        cursor = r.get("nextCursor")
        rid += 1
        if cursor is None or rid > 100:
            break
    return {"tools": len(names), "names": names, "supported": d.get("supportedVersions"),
            "server_name": dig(d, "_meta", "io.modelcontextprotocol/serverInfo", "name"),
            "ttl_ms": d.get("ttlMs"), "cache_scope": d.get("cacheScope")}


def legacy_http_oracle(url):
    """initialize + tools/list without a session (what a dual-era server serves statelessly)."""
    st, rh, msgs = _post(url, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {},
        "clientInfo": {"name": "mcptest-era-oracle", "version": "0.0.0"}}}, {})
    a = _answer(msgs, 1)
    if st != 200 or a is None or "result" not in a:
        raise SetupError("oracle: initialize at %s answered HTTP %s: %r" % (url, st, msgs))
    h = {"MCP-Protocol-Version": a["result"]["protocolVersion"]}
    sid = rh.get("Mcp-Session-Id")
    if sid:
        h["Mcp-Session-Id"] = sid
    _post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, h)
    st, _, msgs = _post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, h)
    t = _answer(msgs, 2)
    if st != 200 or t is None or "result" not in t:
        raise SetupError("oracle: tools/list at %s answered HTTP %s: %r" % (url, st, msgs))
    return {"tools": len(t["result"]["tools"]), "protocol_version": a["result"]["protocolVersion"],
            "session_id": sid}


class _LineChild:
    """A child speaking newline-delimited JSON-RPC on stdin/stdout, bounded reads."""

    def __init__(self, argv):
        self.p = mcptest.spawn(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL, cwd=str(mcptest.TESTS_DIR))
        self.buf = b""

    def send(self, obj):
        self.p.stdin.write((json.dumps(obj) + "\n").encode())
        self.p.stdin.flush()

    def answer(self, rid, timeout=10.0):
        deadline = time.monotonic() + timeout
        fd = self.p.stdout.fileno()
        while True:
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                try:
                    m = json.loads(line)
                except ValueError:
                    continue
                if isinstance(m, dict) and m.get("id") == rid and ("result" in m or "error" in m):
                    return m
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            r, _, _ = select.select([fd], [], [], left)
            if not r:
                return None
            chunk = os.read(fd, 65536)
            if not chunk:
                return None
            self.buf += chunk

    def close(self):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        mcptest.terminate(self.p, grace=3.0)


def modern_stdio_oracle(argv):
    """server/discover + every tools/list page over stdio, as a 2026-07-28 client."""
    ch = _LineChild(argv)
    try:
        ch.send({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": META}})
        d = ch.answer(1)
        if d is None or "result" not in d:
            raise SetupError("oracle: server/discover over stdio answered %r" % (d,))
        names, cursor, rid = [], None, 2
        while True:
            params = {"_meta": META}
            if cursor is not None:
                params["cursor"] = cursor
            ch.send({"jsonrpc": "2.0", "id": rid, "method": "tools/list", "params": params})
            r = ch.answer(rid)
            if r is None or "result" not in r:
                raise SetupError("oracle: tools/list over stdio answered %r" % (r,))
            names += [t["name"] for t in r["result"].get("tools", [])]
            cursor = r["result"].get("nextCursor")
            rid += 1
            if cursor is None or rid > 100:
                break
        return {"tools": len(names), "names": names,
                "server_name": dig(d, "result", "_meta", "io.modelcontextprotocol/serverInfo", "name")}
    finally:
        ch.close()


def legacy_stdio_oracle(argv):
    ch = _LineChild(argv)
    try:
        ch.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": LEGACY, "capabilities": {},
            "clientInfo": {"name": "mcptest-era-oracle", "version": "0.0.0"}}})
        a = ch.answer(1)
        if a is None or "result" not in a:
            raise SetupError("oracle: initialize over stdio answered %r" % (a,))
        ch.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        ch.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        t = ch.answer(2)
        if t is None or "result" not in t:
            raise SetupError("oracle: tools/list over stdio answered %r" % (t,))
        return {"tools": len(t["result"]["tools"]), "protocol_version": a["result"]["protocolVersion"]}
    finally:
        ch.close()


def sse_oracle(url, timeout=15.0):
    """The 2024-11-05 HTTP+SSE transport by hand: GET the stream, read the
    `endpoint` event, POST initialize / initialized / tools/list there, read
    the answers from the stream."""
    events = queue.Queue()
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=timeout)
    conn.request("GET", u.path or "/", headers={"Accept": "text/event-stream"})
    sock = conn.sock
    resp = conn.getresponse()
    if resp.status != 200:
        conn.close()
        raise SetupError("oracle: GET %s answered HTTP %s" % (url, resp.status))

    def reader():
        ev, data = "message", []
        try:
            for raw in resp:
                line = raw.decode(errors="replace").rstrip("\r\n")
                if line == "":
                    if data:
                        events.put((ev, "\n".join(data)))
                    ev, data = "message", []
                elif line.startswith("event:"):
                    ev = line[6:].strip()
                elif line.startswith("data:"):
                    data.append(line[5:].lstrip(" "))
        except Exception:
            pass
        events.put(None)

    threading.Thread(target=reader, daemon=True).start()
    deadline = time.monotonic() + timeout

    def next_event(pred):
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise SetupError("oracle: no matching SSE event from %s in time" % url)
            try:
                e = events.get(timeout=left)
            except queue.Empty:
                continue
            if e is None:
                raise SetupError("oracle: the SSE stream from %s ended" % url)
            if pred(e):
                return e

    try:
        _, endpoint = next_event(lambda e: e[0] == "endpoint")
        post_url = urllib.parse.urljoin(url, endpoint)

        def post(obj):
            rq = urllib.request.Request(post_url, data=json.dumps(obj).encode(), method="POST",
                                        headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(rq, timeout=timeout) as r:
                r.read()

        def answer(rid):
            def pred(e):
                try:
                    m = json.loads(e[1])
                except ValueError:
                    return False
                return isinstance(m, dict) and m.get("id") == rid
            return json.loads(next_event(pred)[1])

        post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": LEGACY, "capabilities": {},
            "clientInfo": {"name": "mcptest-sse-oracle", "version": "0.0.0"}}})
        init = answer(1)
        post({"jsonrpc": "2.0", "method": "notifications/initialized"})
        time.sleep(0.2)  # server-everything adds a tool when `initialized` arrives
        post({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
        tl = answer(2)
        return {"tools": len(tl["result"]["tools"]), "protocol_version": init["result"]["protocolVersion"],
                "server_name": init["result"]["serverInfo"]["name"], "endpoint": endpoint}
    finally:
        # unblock the reader thread at once (a plain close waits for its read)
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except (OSError, AttributeError):
            pass
        conn.close()


# --------------------------------------------------------------------------
# running mcptop


def check_json(c, args, expect_rc=None, timeout=CHECK_TIMEOUT):
    r = mcptest.run_mcptop(["check"] + args, timeout=timeout)
    c.attach(r.describe())
    c.no_crash(r)
    if expect_rc is not None:
        c.eq(r.rc, expect_rc, "exit code")
    doc = r.json()
    c.require(isinstance(doc, dict), "JSON object on stdout: %s" % (r.json_error or "not an object"))
    c.require(isinstance(doc.get("servers"), list), "servers is an array")
    return r, doc


def rows_by_name(doc):
    return {s.get("name"): s for s in doc["servers"] if isinstance(s, dict)}


def endings_of(c, r):
    out = {}
    for line in r.stdout.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            c.check(False, "stdout line is not JSON: %r" % line)
            continue
        if c.check(isinstance(obj, dict) and isinstance(obj.get("server"), str),
                   "each stdout line is an object with a server name: %r" % line):
            c.check(obj["server"] not in out, "one ending per server (%s twice)" % obj["server"])
            out[obj["server"]] = obj
    return out


def check_settled(c, e, what):
    d, s = e.get("duration_ms", MISSING), e.get("settled_ms", MISSING)
    c.check(is_num(d) and d >= 0, "%s: duration_ms is a number >= 0 (got %r)" % (what, d))
    ok = c.check(is_num(s), "%s: settled (settled_ms is a number, got %r)" % (what, s))
    if ok and is_num(d):
        c.check(s >= d, "%s: settled_ms %r >= duration_ms %r" % (what, s, d))
    if "settled" in e:
        c.eq(e["settled"], True, "%s: settled" % what)


def check_reachable_row(c, row, name, era, version, tools, modern_server_name=None):
    c.eq(dig(row, "ok"), True, "%s: ok" % name)
    c.eq(dig(row, "liveness", "state"), "reachable", "%s: liveness.state" % name)
    c.eq(dig(row, "era"), era, "%s: era" % name)
    c.eq(dig(row, "session", "protocol_version"), version, "%s: session.protocol_version" % name)
    c.eq(dig(row, "tools"), tools, "%s: tools" % name)
    c.eq(dig(row, "last_failure"), None, "%s: last_failure" % name)
    if era == "modern":
        c.eq(dig(row, "session", "id_prefix"), None, "%s: session.id_prefix (no session in 2026-07-28)" % name)
        if modern_server_name is not None:
            c.eq(dig(row, "session", "server_name"), modern_server_name,
                 "%s: session.server_name (from the discover result's _meta serverInfo)" % name)


def check_modern_traffic(c, name, st, transport):
    """What a modern-era dial must (not) send, as the era server counted it."""
    c.require(st and st.get("processes", 1) >= 1, "%s: the era server wrote its counters" % name)
    m = st.get("methods", {})
    c.check(m.get("server/discover", 0) >= 1, "%s: server/discover was sent (methods %r)" % (name, m))
    for bad in ("initialize", "notifications/initialized", "ping"):
        c.eq(m.get(bad, 0), 0, "%s: %s requests at a modern server" % (name, bad))
    if transport == "http":
        c.eq(dig(st, "http", "GET"), 0, "%s: GET requests (no GET stream in 2026-07-28)" % name)
        c.eq(dig(st, "http", "DELETE"), 0, "%s: DELETE requests (no session to end)" % name)
        c.eq(st.get("missing_headers"), 0,
             "%s: modern requests without MCP-Protocol-Version / Mcp-Method" % name)


# --------------------------------------------------------------------------
# the fleet of case a / b (started once, stopped at exit)


class Fleet:
    def __init__(self):
        self.everything = mcptest.everything_http()
        self.sse = mcptest.everything_sse()
        self.modern_http = EraHttp("modern", N_MODERN_HTTP).start()
        self.dual_http = EraHttp("dual", N_DUAL_HTTP).start()
        self.modern_stdio = EraStdio("modern", N_MODERN_STDIO)
        self.dual_stdio = EraStdio("dual", N_DUAL_STDIO)

    def config(self, **overrides):
        servers = {
            "everything": {"url": self.everything.url},
            "everything_sse": {"url": self.sse.url},
            "modern_http": {"url": self.modern_http.url},
            "dual_http": {"url": self.dual_http.url},
            "modern_stdio": self.modern_stdio.decl(),
            "dual_stdio": self.dual_stdio.decl(),
        }
        for k, v in overrides.items():
            servers[k].update(v)
        return mcptest.write_config(servers, mcptop=dict(FLEET_OPTS))

    def stop(self):
        for s in (self.everything, self.sse, self.modern_http, self.dual_http):
            s.stop()


_fleet = None


def fleet():
    global _fleet
    if _fleet is None:
        _fleet = Fleet()
    return _fleet


# --------------------------------------------------------------------------
# a: one fleet, every era


def a_fleet_check(c):
    f = fleet()
    # the independent counts, before mcptop touches anything
    ev = mcptest.count_tools(f.everything.url)
    sse = sse_oracle(f.sse.url)
    mh = modern_http_oracle(f.modern_http.url)
    dh = modern_http_oracle(f.dual_http.url)
    ms = modern_stdio_oracle(f.modern_stdio.argv())
    ds = modern_stdio_oracle(f.dual_stdio.argv())
    c.attach("oracles: everything %s tools (%s); sse %s tools (%s, endpoint %s); modern_http %s; "
             "dual_http %s; modern_stdio %s; dual_stdio %s"
             % (ev["tools"], ev["protocol_version"], sse["tools"], sse["protocol_version"],
                sse["endpoint"], mh["tools"], dh["tools"], ms["tools"], ds["tools"]))
    c.eq(mh["tools"], N_MODERN_HTTP, "oracle: modern_http tools")
    c.eq(dh["tools"], N_DUAL_HTTP, "oracle: dual_http tools")
    c.eq(ms["tools"], N_MODERN_STDIO, "oracle: modern_stdio tools")
    c.eq(ds["tools"], N_DUAL_STDIO, "oracle: dual_stdio tools")
    c.eq(mh["supported"], [MODERN], "oracle: modern_http supportedVersions")
    c.eq(mh["ttl_ms"], 60000, "oracle: modern_http discover ttlMs")
    before = {n: s.state().get("methods", {}).copy() for n, s in
              (("modern_http", f.modern_http), ("dual_http", f.dual_http))}

    r, doc = check_json(c, ["--json", "-c", f.config()], expect_rc=0)
    rows = rows_by_name(doc)
    c.require(set(rows) == {"everything", "everything_sse", "modern_http", "dual_http",
                            "modern_stdio", "dual_stdio"}, "one row per server: %r" % sorted(rows))
    check_reachable_row(c, rows["everything"], "everything", "legacy", ev["protocol_version"], ev["tools"])
    c.eq(ev["protocol_version"], LEGACY, "oracle: everything protocol")
    idp = dig(rows["everything"], "session", "id_prefix")
    c.check(isinstance(idp, str) and idp != "", "everything: session.id_prefix is a non-empty string: %r" % (idp,))
    check_reachable_row(c, rows["everything_sse"], "everything_sse", "legacy_sse", sse["protocol_version"],
                        sse["tools"])
    check_reachable_row(c, rows["modern_http"], "modern_http", "modern", MODERN, N_MODERN_HTTP,
                        mh["server_name"])
    check_reachable_row(c, rows["dual_http"], "dual_http", "modern", MODERN, N_DUAL_HTTP, dh["server_name"])
    check_reachable_row(c, rows["modern_stdio"], "modern_stdio", "modern", MODERN, N_MODERN_STDIO,
                        ms["server_name"])
    check_reachable_row(c, rows["dual_stdio"], "dual_stdio", "modern", MODERN, N_DUAL_STDIO, ds["server_name"])
    for name in ("modern_stdio", "dual_stdio"):
        c.check(is_num(dig(rows[name], "pid")), "%s: pid is a number: %r" % (name, dig(rows[name], "pid")))
    c.eq(dig(doc, "summary", "reachable"), 6, "summary.reachable")

    # what the era servers saw of mcptop (the oracles' own requests taken out)
    for name, srv in (("modern_http", f.modern_http), ("dual_http", f.dual_http)):
        st = srv.state()
        m = dict(st.get("methods", {}))
        for k, v in before[name].items():
            m[k] = m.get(k, 0) - v
        st["methods"] = m
        check_modern_traffic(c, name, st, "http")
    # stdio: the state file is mcptop's child's (the oracles' children wrote elsewhere)
    for name, srv in (("modern_stdio", f.modern_stdio), ("dual_stdio", f.dual_stdio)):
        check_modern_traffic(c, name, srv.state(), "stdio")


def a2_config_era(c):
    f = fleet()
    lh = legacy_http_oracle(f.dual_http.url)
    ls = legacy_stdio_oracle(f.dual_stdio.argv())
    c.attach("oracles (legacy): dual_http %s tools (%s, session id %r); dual_stdio %s tools (%s)"
             % (lh["tools"], lh["protocol_version"], lh["session_id"], ls["tools"], ls["protocol_version"]))
    c.eq(lh["tools"], N_DUAL_HTTP, "oracle: dual_http tools in the legacy era")
    c.eq(ls["tools"], N_DUAL_STDIO, "oracle: dual_stdio tools in the legacy era")
    dual_stdio_legacy = EraStdio("dual", N_DUAL_STDIO)
    d0 = f.dual_http.state().get("methods", {}).get("server/discover", 0)
    cfg = mcptest.write_config({
        "dual_http_legacy": {"url": f.dual_http.url, "era": "legacy"},
        "dual_stdio_legacy": dual_stdio_legacy.decl(era="legacy"),
        "modern_http_modern": {"url": f.modern_http.url, "era": "modern"},
        "modern_http_auto": {"url": f.modern_http.url, "era": "auto"},
        "everything_modern": {"url": f.everything.url, "era": "modern"},
        "modern_http_legacy": {"url": f.modern_http.url, "era": "legacy"},
    }, mcptop=dict(FLEET_OPTS))
    r, doc = check_json(c, ["--json", "-c", cfg], expect_rc=1)
    rows = rows_by_name(doc)
    c.require(len(rows) == 6, "six rows: %r" % sorted(rows))
    check_reachable_row(c, rows.get("dual_http_legacy"), "dual_http_legacy", "legacy", LEGACY, lh["tools"])
    check_reachable_row(c, rows.get("dual_stdio_legacy"), "dual_stdio_legacy", "legacy", LEGACY, ls["tools"])
    check_reachable_row(c, rows.get("modern_http_modern"), "modern_http_modern", "modern", MODERN, N_MODERN_HTTP)
    check_reachable_row(c, rows.get("modern_http_auto"), "modern_http_auto", "modern", MODERN, N_MODERN_HTTP)
    # A dual-era server set to legacy is not probed.
    c.eq(f.dual_http.state().get("methods", {}).get("server/discover", 0) - d0, 0,
         "dual_http_legacy: server/discover requests (the config said legacy: no probe)")
    st = dual_stdio_legacy.state()
    c.eq(st.get("methods", {}).get("server/discover", 0), 0,
         "dual_stdio_legacy: server/discover requests (the config said legacy: no probe)")
    c.check(st.get("methods", {}).get("initialize", 0) >= 1, "dual_stdio_legacy: initialize was sent")
    # A server that does not speak the era it was set to fails; no fallback.
    for name in ("everything_modern", "modern_http_legacy"):
        row = rows.get(name)
        c.eq(dig(row, "ok"), False, "%s: ok (the configured era is not served)" % name)
        c.check(dig(row, "last_failure") not in (None, MISSING), "%s: a last_failure" % name)


# --------------------------------------------------------------------------
# b: mcptop end on the fleet


def b_fleet_end(c):
    f = fleet()
    d_before = {n: dig(s.state(), "http", "DELETE") for n, s in
                (("modern_http", f.modern_http), ("dual_http", f.dual_http))}
    r = mcptest.run_mcptop(["end", "--json", "-c", f.config()], timeout=CHECK_TIMEOUT)
    c.attach(r.describe())
    c.no_crash(r)
    c.eq(r.rc, 0, "exit code")
    ends = endings_of(c, r)
    c.require(set(ends) == {"everything", "everything_sse", "modern_http", "dual_http",
                            "modern_stdio", "dual_stdio"}, "one ending per server: %r" % sorted(ends))
    e = ends["everything"]
    c.eq(e.get("outcome"), "terminated", "everything: outcome (DELETE answered 2xx)")
    check_settled(c, e, "everything")
    e = ends["everything_sse"]
    c.eq(e.get("outcome"), "stream_closed", "everything_sse: outcome (2024-11-05 has no "
         "DELETE: its session ends with its stream)")
    c.check("no session id was issued" not in str(e.get("detail", "")),
            "everything_sse: the detail does not say no session was issued: %r" % e.get("detail"))
    check_settled(c, e, "everything_sse")
    for name in ("modern_http", "dual_http", "modern_stdio", "dual_stdio"):
        e = ends[name]
        c.eq(e.get("outcome"), "no_session", "%s: outcome" % name)
        c.check(SESSIONLESS in str(e.get("detail", "")),
                "%s: detail contains %r (got %r)" % (name, SESSIONLESS, e.get("detail")))
        c.check("http_status" not in e, "%s: no http_status (nothing was sent): %r" % (name, e.get("http_status")))
        check_settled(c, e, name)
    for name, srv in (("modern_http", f.modern_http), ("dual_http", f.dual_http)):
        c.eq(dig(srv.state(), "http", "DELETE"), d_before[name], "%s: DELETE requests during end" % name)
    for name, srv in (("modern_stdio", f.modern_stdio), ("dual_stdio", f.dual_stdio)):
        left = srv.wait_pids(False, timeout=3.0)
        c.check(not left, "%s: no child left after end (pids %r)" % (name, left))


# --------------------------------------------------------------------------
# c: a tools change reaches watch through subscriptions/listen


def seen_or_wait(w, pred, deadline):
    """The first event so far for which pred is true, else the next one by the deadline."""
    for e in list(w.events):
        try:
            if pred(e):
                return e
        except Exception:
            pass
    return w.wait_for(pred, deadline)


def watch_tools_change(c, transport):
    n = 2
    srv = None
    if transport == "http":
        srv = EraHttp("modern", n, extra=["--add-tool-after-ms", "1000"]).start()
        decl = {"url": srv.url}
        state = srv.state
    else:
        st = EraStdio("modern", n, extra=["--add-tool-after-ms", "1000"])
        decl = st.decl()
        state = st.state
    cfg = mcptest.write_config({"m": decl}, mcptop={"ping_interval_s": 1, "timeout_ms": 5000,
                                                    "open_deadline_ms": 10000})
    deadline = time.monotonic() + WATCH_BOUND
    w = mcptest.Watch(["watch", "-c", cfg])
    try:
        ev = w.wait_for(lambda e: e.get("event") == "liveness" and e.get("server") == "m"
                        and e.get("state") == "reachable", deadline)
        c.require(ev is not None, "a liveness event with state reachable")
        # The tool is added 1 s after the first subscriptions/listen that asks
        # for toolsListChanged: no listen, no change.
        ev = w.wait_for(lambda e: e.get("event") == "tools_changed" and e.get("server") == "m", deadline)
        s = state()
        c.attach("era server counters: %s" % json.dumps(s))
        c.require(ev is not None, "a tools_changed event within %.0fs (subscriptions/listen sent: %s)"
                  % (WATCH_BOUND, s.get("listens")))
        c.eq(ev.get("tools"), n + 1, "tools_changed.tools")
        c.check(s.get("listens", 0) >= 1, "the server saw subscriptions/listen (%r)" % s.get("listens"))
        # liveness of a modern server is observed with server/discover
        ev = seen_or_wait(w, lambda e: e.get("event") == "exchange" and e.get("server") == "m"
                          and e.get("op") == "discover" and e.get("outcome") == "completed", deadline)
        c.check(ev is not None, "an exchange event with op discover, completed (the modern liveness exchange)")
        c.require(w.proc.poll() is None, "mcptop watch is still running before SIGINT")
        before_sigint = len(w.events)
        w.signal(signal.SIGINT)
        rc = w.wait_exit(EXIT_WAIT)
        c.eq(rc, 0, "exit code after SIGINT (within %.0fs)" % EXIT_WAIT)
        w.close()
        ops = sorted({e.get("op") for e in w.events if e.get("event") == "exchange" and e.get("server") == "m"})
        c.check("ping" not in ops, "no ping exchange with a modern server (ops %r)" % ops)
        endings = [e for e in w.events if e.get("event") == "ending" and e.get("server") == "m"]
        if c.check(endings, "an ending event for m after SIGINT"):
            c.eq(endings[-1].get("outcome"), "no_session", "ending outcome")
            c.check(SESSIONLESS in str(endings[-1].get("detail", "")),
                    "ending detail contains %r: %r" % (SESSIONLESS, endings[-1].get("detail")))
        s = state()
        check_modern_traffic(c, "m", s, transport)
        for e in w.events[:before_sigint]:
            if e.get("event") == "liveness":
                c.check(e.get("state") == "reachable",
                        "only reachable liveness while the server was up: %s" % json.dumps(e))
    finally:
        if c.failures:
            c.attach(w.describe())
            if srv is not None:
                c.attach("era server log:\n" + srv.output()[-2000:])
        w.close()
        if srv is not None:
            srv.stop()


def c_watch_tools_change_http(c):
    watch_tools_change(c, "http")


def c_watch_tools_change_stdio(c):
    watch_tools_change(c, "stdio")


# --------------------------------------------------------------------------
# d: killed servers


def d_check_killed_http(c):
    for era in ("modern", "dual"):
        srv = EraHttp(era, 2).start()
        url = srv.url
        srv.kill()
        c.require(not mcptest.port_open(srv.port), "%s: port %d closed after the kill" % (era, srv.port))
        r, doc = check_json(c, ["--json", url], expect_rc=1)
        s = doc["servers"][0] if doc["servers"] else {}
        c.eq(dig(s, "ok"), False, "%s: ok" % era)
        c.eq(dig(s, "liveness", "state"), "unreachable", "%s: liveness.state" % era)
        c.eq(dig(s, "liveness", "error_code"), "connect_refused", "%s: liveness.error_code" % era)
        c.eq(dig(s, "last_failure", "kind"), "connect_refused", "%s: last_failure.kind" % era)
        c.eq(dig(s, "era"), None, "%s: era (a refused connection is no era evidence)" % era)


def d_watch_kill_fleet(c):
    """Every server of a watched fleet dies; each gets its failure kind."""
    mh = EraHttp("modern", N_MODERN_HTTP).start()
    dh = EraHttp("dual", N_DUAL_HTTP).start()
    sse = mcptest.everything_sse()
    ms = EraStdio("modern", N_MODERN_STDIO)
    ds = EraStdio("dual", N_DUAL_STDIO)
    names = ("modern_http", "dual_http", "everything_sse", "modern_stdio", "dual_stdio")
    cfg = mcptest.write_config({
        "modern_http": {"url": mh.url}, "dual_http": {"url": dh.url}, "everything_sse": {"url": sse.url},
        "modern_stdio": ms.decl(), "dual_stdio": ds.decl(),
    }, mcptop={"ping_interval_s": 1, "timeout_ms": 3000, "open_deadline_ms": 10000})
    expect = {"modern_http": ("connect_refused",), "dual_http": ("connect_refused",),
              # the SSE stream breaking may be seen before a refused re-dial
              "everything_sse": ("connect_refused", "connection_closed"),
              "modern_stdio": ("connection_closed",), "dual_stdio": ("connection_closed",)}
    deadline = time.monotonic() + WATCH_BOUND + 10
    w = mcptest.Watch(["watch", "-c", cfg])
    try:
        up = set()
        while up != set(names):
            ev = w.wait_for(lambda e: e.get("event") == "liveness" and e.get("state") == "reachable"
                            and e.get("server") in names and e.get("server") not in up, deadline)
            c.require(ev is not None, "every server reachable first (reachable: %r)" % sorted(up))
            up.add(ev["server"])
        mark = len(w.events)
        pids = {"modern_stdio": ms.pids(), "dual_stdio": ds.pids()}
        c.require(pids["modern_stdio"] and pids["dual_stdio"], "the stdio children are running: %r" % pids)
        mh.kill()
        dh.kill()
        sse.kill()
        for name in ("modern_stdio", "dual_stdio"):
            for pid in pids[name]:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        seen = {}
        while set(seen) != set(names):
            ev = w.wait_for(lambda e: e.get("event") == "liveness" and e.get("state") == "unreachable"
                            and e.get("server") in names and e.get("server") not in seen, deadline)
            if ev is None:
                break
            seen[ev["server"]] = ev.get("error_code")
        c.attach("unreachable after the kills: %r" % seen)
        for name in names:
            if c.check(name in seen, "%s: liveness unreachable after the kill" % name):
                c.is_in(seen[name], expect[name], "%s: error_code" % name)
        c.check(len(w.events) > mark, "events after the kills")
        w.signal(signal.SIGINT)
        c.eq(w.wait_exit(EXIT_WAIT), 0, "exit code after SIGINT (within %.0fs)" % EXIT_WAIT)
    finally:
        if c.failures:
            c.attach(w.describe())
        w.close()
        for s in (mh, dh):
            s.stop()
        sse.stop()


# --------------------------------------------------------------------------
# e: the probe table (fault lab /probe/<case>)

# case -> (era, expect): expect "reachable" (with the protocol version) or
# (failure kind, http_status or None)
PROBE_TABLE = [
    ("discover", "modern", ("reachable", MODERN)),
    ("e32022modern", "modern", ("reachable", MODERN)),
    ("e32022legacy", "legacy", ("reachable", LEGACY)),
    ("e32000", "legacy", ("reachable", LEGACY)),
    ("404", "legacy", ("reachable", LEGACY)),
    ("405", "legacy", ("reachable", LEGACY)),
    ("e32603", "legacy", ("reachable", LEGACY)),
    ("dead32603", None, ("cannot_be_initialized", None)),
    ("401", None, ("http_status", 401)),
    ("503", None, ("http_status", 503)),
    ("reset", None, ("connection_failed", None)),
    ("hang", None, ("timeout", None)),
]


class Probe:
    lab = None
    run = None
    result = None
    doc = None
    error = None


def probe_run():
    """One `mcptop check` over every /probe endpoint (fresh endpoint state per run)."""
    if Probe.doc is not None or Probe.error is not None:
        return
    try:
        Probe.lab = faultlab.FaultLab().start()
        Probe.run = tag()
        servers = {}
        for case, _, _ in PROBE_TABLE:
            servers["probe_" + case] = dict(PROBE_OPTS, url=Probe.lab.url(probe_path(case)))
        cfg = mcptest.write_config(servers)
        Probe.result = mcptest.run_mcptop(["check", "--json", "-c", cfg], timeout=CHECK_TIMEOUT)
        Probe.doc = Probe.result.json()
    except SetupError as e:
        Probe.error = str(e)


def probe_path(case):
    return "/probe/%s?run=%s" % (case, Probe.run)


def warnings_text(row):
    w = dig(row, "warnings")
    return " | ".join(str(x) for x in w) if isinstance(w, list) else ""


def probe_row(c, case, era, expect):
    probe_run()
    if Probe.error:
        raise SetupError(Probe.error)
    r = Probe.result
    c.no_crash(r)
    c.require(isinstance(Probe.doc, dict) and isinstance(Probe.doc.get("servers"), list),
              "check --json printed a servers array: %s" % (r.json_error,))
    row = rows_by_name(Probe.doc).get("probe_" + case)
    c.require(row is not None, "a row named probe_%s" % case)
    cnt = Probe.lab.endpoint_counts(probe_path(case))
    methods = cnt.get("methods", {})
    c.attach("row: %s\nlab counts: %s" % (json.dumps(row), json.dumps(cnt)))
    c.eq(dig(row, "era"), era, "era")
    c.check(methods.get("server/discover", 0) >= 1, "the dial began with server/discover (methods %r)" % methods)
    if expect[0] == "reachable":
        c.eq(dig(row, "ok"), True, "ok")
        c.eq(dig(row, "liveness", "state"), "reachable", "liveness.state")
        c.eq(dig(row, "session", "protocol_version"), expect[1], "session.protocol_version")
        c.eq(dig(row, "tools"), 3, "tools (the lab serves 3)")
        if era == "modern":
            c.eq(methods.get("initialize", 0), 0, "initialize requests (a modern verdict never falls back)")
            c.eq(dig(row, "session", "id_prefix"), None, "session.id_prefix")
            c.eq(cnt.get("probe_rejections"), 1 if case == "e32022modern" else 0,
                 "modern requests the lab refused (headers, _meta, version)")
            c.check(dig(cnt, "with_mcp_method", "server/discover") == methods.get("server/discover"),
                    "every discover carried Mcp-Method (%r of %r)"
                    % (dig(cnt, "with_mcp_method", "server/discover"), methods.get("server/discover")))
        if case == "e32022modern":
            c.check(methods.get("server/discover", 0) >= 2,
                    "the -32022 was followed by a retried discover (methods %r)" % methods)
        if era == "legacy":
            c.check(methods.get("initialize", 0) >= 1, "fell back to initialize (methods %r)" % methods)
        if case == "e32603":
            # initialize worked, so legacy; the probe's -32603 is said
            ws = warnings_text(row)
            c.check("era legacy: server/discover answered JSON-RPC error -32603" in ws
                    and "initialize worked" in ws, "the warning names the -32603: %r" % ws)
    elif expect[0] == "cannot_be_initialized":
        # issue 45.2: a gateway whose child is gone answers every method
        # -32603: no era evidence, and down, not degraded
        ws = warnings_text(row)
        c.eq(dig(row, "ok"), False, "ok")
        c.eq(dig(row, "health"), "down", "health")
        c.eq(dig(row, "health_reason"), "cannot be initialized", "health_reason")
        c.eq(dig(row, "liveness", "state"), "reachable", "liveness.state (it answers)")
        c.eq(dig(row, "last_failure", "kind"), "protocol", "last_failure.kind")
        c.check("MCP server process exited" in str(dig(row, "last_failure", "detail")),
                "the server's words in last_failure.detail: %r" % dig(row, "last_failure", "detail"))
        c.check("no era evidence" in ws and "-32603" in ws, "the warning names what was seen: %r" % ws)
        c.check(methods.get("initialize", 0) >= 1, "initialize was tried (methods %r)" % methods)
    else:
        kind, status = expect
        c.eq(dig(row, "ok"), False, "ok")
        c.eq(dig(row, "last_failure", "kind"), kind, "last_failure.kind")
        if status is not None:
            c.eq(dig(row, "last_failure", "http_status"), status, "last_failure.http_status")
        c.eq(dig(row, "session"), None, "session (the dial failed)")
        c.eq(methods.get("initialize", 0), 0,
             "initialize requests (an auth error or an outage is no era evidence: no fallback)")


def e_probe_end_modern(c):
    """`mcptop end` at the lab's modern endpoint: nothing sent, no_session."""
    probe_run()
    if Probe.error:
        raise SetupError(Probe.error)
    path = "/probe/discover?end=%s" % tag()
    r = mcptest.run_mcptop(["end", "--json", Probe.lab.url(path)], timeout=20)
    c.attach(r.describe())
    c.no_crash(r)
    c.eq(r.rc, 0, "exit code")
    ends = list(endings_of(c, r).values())
    c.require(len(ends) == 1, "one ending line (got %d)" % len(ends))
    e = ends[0]
    c.eq(e.get("outcome"), "no_session", "outcome")
    c.check(SESSIONLESS in str(e.get("detail", "")), "detail contains %r: %r" % (SESSIONLESS, e.get("detail")))
    check_settled(c, e, "ending")
    cnt = Probe.lab.endpoint_counts(path)
    c.attach("lab counts: %s" % json.dumps(cnt))
    c.eq(cnt.get("DELETE", 0), 0, "DELETE requests at the lab")
    c.eq(cnt.get("GET", 0), 0, "GET requests at the lab")
    c.eq(cnt.get("methods", {}).get("initialize", 0), 0, "initialize requests at the lab")


def f_deep_check_input_required(c):
    """A 2026-07-28 server asks its client through an InputRequiredResult
    (MRTR) in answer to the deep check: a protocol failure with the reason
    input_required and the detail naming what was asked, at once, never a
    timeout; the same server's plain tool is ok."""
    probe_run()
    if Probe.error:
        raise SetupError(Probe.error)
    t = tag()
    cfg = mcptest.write_config({
        "asker": dict(PROBE_OPTS, url=Probe.lab.url("/probe/discover?call=input_required&t=" + t),
                      probe_tool={"name": "book"}),
        "plain": dict(PROBE_OPTS, url=Probe.lab.url("/probe/discover?call=complete&t=" + t),
                      probe_tool={"name": "book", "expect_text": "lab tool ok"}),
    })
    r, doc = check_json(c, ["--json", "-c", cfg])
    rows = rows_by_name(doc or {})
    a = rows.get("asker") or {}
    c.attach("asker: %s" % json.dumps(a))
    f = dig(a, "last_failure") or {}
    c.eq(dig(a, "era"), "modern", "asker: era")
    c.eq(f.get("kind"), "protocol", "asker: the deep check fails as protocol")
    c.eq(f.get("reason"), "input_required", "asker: reason")
    c.eq(f.get("delivered"), "yes", "asker: delivered")
    c.check("elicitation/create" in (f.get("detail") or "") and
            "sampling/createMessage" in (f.get("detail") or "") and
            (f.get("detail") or "").startswith("tools/call: "),
            "asker: the detail names the step and what was asked: %r" % f.get("detail"))
    c.eq(dig(a, "health"), "degraded", "asker: health")
    c.eq(dig(rows.get("plain") or {}, "ok"), True, "plain: the same server's complete answer is ok")


def main():
    try:
        mcptest.require_mcptop()
        mcptest.require_node_modules()
        require_era_server()
    except SetupError as e:
        print("setup: %s" % e)
        rep.failed += 1
        rep.finish()
    rep.run("a_fleet_check", a_fleet_check)
    rep.run("a2_config_era", a2_config_era)
    rep.run("b_fleet_end", b_fleet_end)
    if _fleet is not None:
        _fleet.stop()
    rep.run("c_watch_tools_change_http", c_watch_tools_change_http)
    rep.run("c_watch_tools_change_stdio", c_watch_tools_change_stdio)
    rep.run("d_check_killed_http", d_check_killed_http)
    rep.run("d_watch_kill_fleet", d_watch_kill_fleet)
    for case, era, expect in PROBE_TABLE:
        rep.run("e_probe_%s" % case, probe_row, case, era, expect)
    rep.run("e_probe_end_modern", e_probe_end_modern)
    rep.run("f_deep_check_input_required", f_deep_check_input_required)
    rep.finish()


if __name__ == "__main__":
    main()
