#!/usr/bin/env python3
"""The HTTP tap (issue 31): `mcptop tap --listen 127.0.0.1:PORT --upstream
URL` between an agent and a Streamable HTTP server, and the monitor
reading it.

  sdk_identical_streamed  the official SDK client (StreamableHTTPClient-
                    Transport) with server-everything: tools/list, echo, a
                    long-running tool with progress, through the tap and
                    directly: the same results; the progress notices
                    arrive spread over the call, before its answer (the
                    SSE answer is passed on as it comes, not held to its
                    end); the socket saw the exchanges
  in_flight_cancel  while a long call runs, check --json on {"tap": PATH}
                    shows it in flight with its progress and the agent's
                    session; mcptop cancel ends it: the client gets -32800
                    (the reason in data) as an SSE event on its open
                    answer, the ledger says cancelled_by_operator
  session_end       the agent's session is listed (8 characters of its id,
                    never the whole) and mcptop end --session ends it
                    through the tap (DELETE upstream: terminated); the
                    TUI's detail pane lists it; the
                    client's next call gets the server's 404
  upstream_killed   the server killed during a call: that request ends as
                    connection_closed (delivered unknown) in the ledger
                    and the record
  agent_goes_away   an agent that closes its connection under a call:
                    the call leaves the ledger as cancelled
  slow_agent_backpressure  an agent that does not read a 25 MiB SSE
                    answer: the tap's memory stays bounded (the upstream
                    pauses); then every event comes, in order
  headers_passed    the agent's headers reach the server but the
                    hop-by-hop ones, Host the upstream's; the server's
                    reach the agent the same way; the credentials and the
                    whole session id are never on the socket or stderr
  cancel_reaches_upstream  a cancel while the server is mid-event:
                    notifications/cancelled upstream in the agent's
                    session with its credentials; the agent gets the rest
                    of that event, then -32800 as an event, never the late
                    answer
  refused_and_502   an upstream that refuses: the agent gets 502 and the
                    record says connect_refused, delivered no; the fault
                    lab's 502 gateway page is passed on with its status and
                    the record says http_status
  loopback_only     a non-loopback --listen is refused without --public

Everything local; every wait is bounded.

Standalone: MCPTOP_BIN=build/mcptop MCPTOP_TESTS_DIR=tests python3 tests/integration/test_tap_http.py
"""

import json
import socket
import threading
import os
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402
import faultlab  # noqa: E402

rep = mcptest.Reporter("tap_http: mcptop tap --listen between an agent and its HTTP server")

CLIENT_MJS = mcptest.TESTS_DIR / "integration" / "tap_http_client.mjs"
NODE = mcptest._NODE


def tmp(name):
    return str(mcptest.tmpdir() / name)


class Tap:
    """mcptop tap --listen 127.0.0.1:PORT --upstream URL, its socket."""

    def __init__(self, upstream, name="ev"):
        self.port = mcptest.free_port()
        self.sock = tmp("tap-http-%s-%d.sock" % (name, self.port))
        self.err = tmp("tap-http-%d.err" % self.port)
        with open(self.err, "wb") as err:
            self.proc = mcptest.spawn([mcptest.MCPTOP_BIN, "tap", "--listen",
                                       "%s:%d" % (mcptest.LOOPBACK, self.port),
                                       "--upstream", upstream, "--name", name,
                                       "--socket", self.sock],
                                      env=mcptest.mcptop_env(), stderr=err)
        if not mcptest.wait_port(self.port, timeout=20, proc=self.proc):
            raise mcptest.SetupError("the tap did not listen: %s" % self.stderr())
        self.url = "http://%s:%d/mcp" % (mcptest.LOOPBACK, self.port)

    def stderr(self):
        with open(self.err, errors="replace") as f:
            return f.read()

    def stop(self):
        mcptest.terminate(self.proc)
        STOPPED.append((self.port, self.proc.returncode, self.stderr()))
        return self.proc.returncode


STOPPED = []    # (port, exit status, stderr) of every tap, for the last case


def client(mode, out, url, stdin=subprocess.DEVNULL):
    return mcptest.spawn([NODE, str(CLIENT_MJS), mode, out, url], env=mcptest.mcptop_env(),
                         stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def run_client(mode, out, url, timeout=60.0):
    return mcptest.run([NODE, str(CLIENT_MJS), mode, out, url], timeout=timeout,
                       env=mcptest.mcptop_env())


def wait_line(proc, word, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            return None
        if line.startswith(word):
            return line.decode(errors="replace").strip()
    return None


def load(path):
    with open(path) as f:
        return json.load(f)


def tap_server(cfg_sock):
    got = mcptest.run_mcptop(["check", "-c", mcptest.write_config({"ev": {"tap": cfg_sock}}),
                              "--json"], timeout=30)
    return got, mcptest.dig(got.json() or {}, "servers", 0)


INIT = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                              "clientInfo": {"name": "test_tap_http", "version": "0"}}}).encode()


def post(url, body, extra=None):
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    headers.update(extra or {})
    rq = urllib.request.Request(url, data=body, method="POST", headers=headers)
    try:
        with urllib.request.urlopen(rq, timeout=20) as resp:
            return resp.status, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


@mcptest.case(rep)
def sdk_identical_streamed(c):
    with mcptest.everything_http() as ev:
        tap = Tap(ev.url)
        r = mcptest.TapReader(tap.sock)
        try:
            direct, tapped = tmp("direct.json"), tmp("tapped.json")
            got = run_client("script", direct, ev.url)
            c.require(got.rc == 0, "the SDK client runs directly: %s" % got.describe())
            got = run_client("script", tapped, tap.url)
            c.require(got.rc == 0, "the SDK client runs through the tap: %s\n%s" %
                      (got.describe(), tap.stderr()))
            a, b = load(direct), load(tapped)
            c.check(len(a["tools"]) > 0, "tools/list directly")
            c.eq(b["tools"], a["tools"], "tools/list through the tap")
            c.eq(b["echo"], a["echo"], "the echo result")
            c.eq(b["long"], a["long"], "the long-running tool's result")
            at = [p["at"] for p in b["progress"]]
            c.check(len(at) >= 3, "progress notices through the tap: %r" % b["progress"])
            # Passed on as they came: spread over the 2 s call, the first
            # well before the answer (a stream held to its end would bring
            # them all at once, with the answer).
            c.check(len(at) >= 2 and at[-1] - at[0] >= 500,
                    "the notices arrive spread out (%r ms)" % [x - at[0] for x in at])
            c.check(len(at) >= 1 and b["long_done_at"] - at[0] >= 500,
                    "the first notice comes before the answer (%d ms)" %
                    (b["long_done_at"] - at[0] if at else -1))
            c.eq([p.get("progress") for p in b["progress"]],
                 [p.get("progress") for p in a["progress"]][:len(at)], "the notices' progress")
            ends = [o for o in r.events("request_end") if o.get("method") == "tools/call"]
            c.check(len(ends) == 2 and all(o.get("outcome") == "completed" for o in ends),
                    "the ledger saw both calls complete: %r" % ends)
            x = r.wait_for(lambda o: o.get("event") == "exchange" and o.get("op") == "initialize", 5)
            c.eq(mcptest.dig(x, "outcome"), "completed", "the record: initialize")
            snap = mcptest.run_mcptop(["check", "-c", mcptest.write_config({"ev": {"tap": tap.sock}}),
                                       "--json"], timeout=30)
            s = mcptest.dig(snap.json() or {}, "servers", 0)
            c.eq(mcptest.dig(s, "health"), "ok", "check --json: health from the agent's traffic")
        finally:
            r.close()
            c.eq(tap.stop(), 0, "the tap exits 0 on SIGTERM")


@mcptest.case(rep)
def in_flight_cancel(c):
    with mcptest.everything_http() as ev:
        tap = Tap(ev.url)
        r = mcptest.TapReader(tap.sock)
        out = tmp("long.json")
        cl = client("long", out, tap.url)
        try:
            c.require(wait_line(cl, b"STARTED") is not None, "the long call reports progress")
            got, s = tap_server(tap.sock)
            c.no_crash(got, "check")
            c.eq(mcptest.dig(s, "source"), "tap", "check --json: source")
            fl = mcptest.dig(s, "in_flight")
            c.require(isinstance(fl, list) and len(fl) == 1, "one request in flight: %r" % fl)
            req = fl[0]
            c.eq(req.get("method"), "tools/call", "in flight: method")
            c.eq(req.get("tool"), "trigger-long-running-operation", "in flight: tool")
            c.check(mcptest.dig(req, "progress", "total") == 60, "in flight: progress %r" %
                    req.get("progress"))
            sessions = mcptest.dig(s, "sessions")
            c.check(isinstance(sessions, list) and len(sessions) == 1 and
                    len(sessions[0].get("id_prefix", "")) == 8,
                    "check --json: the agent's session: %r" % sessions)
            t0 = time.monotonic()
            got = mcptest.run_mcptop(["cancel", "--socket", tap.sock, "--request",
                                      json.dumps(req["id"]), "--reason", "stuck"], timeout=20)
            c.eq(got.rc, 0, "mcptop cancel: %s" % got.describe())
            try:
                cl.wait(timeout=20)
            except subprocess.TimeoutExpired:
                c.fatal("the client still waits after the cancel")
            mcptest.log("  the client had its answer %.2f s after mcptop cancel started" %
                        (time.monotonic() - t0))
            res = load(out)
            c.eq(mcptest.dig(res, "error", "code"), -32800, "the client's error code")
            c.eq(mcptest.dig(res, "error", "data", "reason"), "stuck", "the reason in data")
            end = r.wait_for(lambda o: o.get("event") == "request_end" and
                             o.get("method") == "tools/call", 10)
            c.eq(mcptest.dig(end, "outcome"), "cancelled_by_operator", "the ledger's end")
            again = mcptest.run_mcptop(["cancel", "--socket", tap.sock, "--request", "12345"],
                                       timeout=20)
            c.eq(again.rc, 1, "cancelling what is not in flight: %s" % again.describe())
        finally:
            mcptest.terminate(cl)
            r.close()
            tap.stop()


@mcptest.case(rep)
def session_end(c):
    with mcptest.everything_http() as ev:
        tap = Tap(ev.url)
        r = mcptest.TapReader(tap.sock)
        out = tmp("ended.json")
        cl = client("ended", out, tap.url, stdin=subprocess.PIPE)
        try:
            ready = wait_line(cl, b"READY")
            c.require(ready is not None, "the client initialized through the tap")
            sid = ready.split(" ", 1)[1] if " " in ready else ""
            c.require(len(sid) > 8, "the server issued a session id")
            cfg = mcptest.write_config({"ev": {"tap": tap.sock}})
            got = mcptest.run_mcptop(["check", "-c", cfg, "--json"], timeout=30)
            s = mcptest.dig(got.json() or {}, "servers", 0)
            sessions = mcptest.dig(s, "sessions") or []
            c.eq([x.get("id_prefix") for x in sessions], [sid[:8]], "the agent's session, listed")
            c.check(sid not in got.stdout, "the whole id is never shown")
            c.check(all(isinstance(x.get("requests"), int) and x["requests"] >= 1 and
                        isinstance(x.get("age_ms"), (int, float)) for x in sessions),
                    "its requests and age: %r" % sessions)
            if mcptest.tmux_bin() is not None:
                tui = mcptest.Tui(["-c", cfg], cols=140, rows=40)
                tui.keys("Enter")
                tui.expect(c, [("the detail pane lists the agent's session",
                                lambda t: "the agent's sessions (1" in t and sid[:8] in t and
                                sid not in t)], timeout=20)
                tui.close(c)
            got = mcptest.run_mcptop(["end", "-c", cfg, "--server", "ev", "--session", sid[:8],
                                      "--json"], timeout=30)
            c.eq(got.rc, 0, "mcptop end --session on the tap: %s" % got.describe())
            ans = got.json() or {}
            c.eq(ans.get("outcome"), "terminated", "the DELETE's outcome")
            c.check(sid not in got.stdout, "the ending shows only the prefix")
            dx = r.wait_for(lambda o: o.get("event") == "exchange" and o.get("op") == "delete", 10)
            c.eq(mcptest.dig(dx, "outcome"), "completed", "the DELETE is an exchange of the record")
            gone = r.wait_for(lambda o: o.get("event") == "session_gone", 10)
            c.check(gone is not None, "the session left the list")
            got = mcptest.run_mcptop(["end", "-c", cfg, "--server", "ev", "--session", sid[:8]],
                                     timeout=30)
            c.eq(got.rc, 1, "an ended session cannot be ended again: %s" % got.describe())
            cl.stdin.write(b"go\n")
            cl.stdin.flush()
            try:
                cl.wait(timeout=30)
            except subprocess.TimeoutExpired:
                c.fatal("the client's next call did not end")
            res = load(out)
            # What the server says of an ended session, passed on: the
            # spec's 404 (server-everything answers 400 "No valid session
            # ID provided"): the same status as asked directly.
            direct, _ = post(ev.url, INIT.replace(b'"initialize"', b'"tools/list"'),
                             {"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"})
            c.is_in(direct, (400, 404), "directly, the ended session is refused")
            c.eq(mcptest.dig(res, "error", "code"), direct,
                 "the client's next call gets the server's status: %r" % res)
            ex = [o for o in r.events("exchange") if o.get("op") == "tools/call"]
            c.check(any(o.get("outcome") == "http_status" for o in ex),
                    "the record: that call's http_status: %r" % ex)
        finally:
            mcptest.terminate(cl)
            r.close()
            tap.stop()


@mcptest.case(rep)
def upstream_killed(c):
    with mcptest.everything_http() as ev:
        tap = Tap(ev.url)
        r = mcptest.TapReader(tap.sock)
        cl = client("long", tmp("killed.json"), tap.url)
        try:
            c.require(wait_line(cl, b"STARTED") is not None, "the long call reports progress")
            ev.kill()
            end = r.wait_for(lambda o: o.get("event") == "request_end" and
                             o.get("method") == "tools/call", 15)
            c.eq(mcptest.dig(end, "kind"), "connection_closed", "the ledger: that request's end")
            x = r.wait_for(lambda o: o.get("event") == "exchange" and o.get("op") == "tools/call", 5)
            c.eq(mcptest.dig(x, "outcome"), "connection_closed", "the record: that exchange")
            c.eq(mcptest.dig(x, "delivered"), "unknown", "delivered")
        finally:
            mcptest.terminate(cl)
            r.close()
            tap.stop()


@mcptest.case(rep)
def agent_goes_away(c):
    # An agent that closes its connection under a call: the call leaves
    # the ledger (as the agent's own cancel would), nothing stays in
    # flight for ever.
    import http.client
    with mcptest.everything_http() as ev:
        tap = Tap(ev.url)
        r = mcptest.TapReader(tap.sock)
        try:
            conn = http.client.HTTPConnection(mcptest.LOOPBACK, tap.port, timeout=20)
            hdrs = {"Content-Type": "application/json",
                    "Accept": "application/json, text/event-stream"}
            conn.request("POST", "/mcp", INIT, hdrs)
            resp = conn.getresponse()
            sid = resp.getheader("Mcp-Session-Id")
            resp.read()
            c.require(resp.status == 200 and sid, "initialize through the tap: %d" % resp.status)
            hdrs.update({"Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-06-18"})
            conn.request("POST", "/mcp", json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}), hdrs)
            conn.getresponse().read()
            conn.request("POST", "/mcp", json.dumps({
                "jsonrpc": "2.0", "id": 9, "method": "tools/call",
                "params": {"name": "trigger-long-running-operation",
                           "arguments": {"duration": 30, "steps": 30},
                           "_meta": {"progressToken": "p"}}}), hdrs)
            resp = conn.getresponse()
            c.eq(resp.getheader("Content-Type"), "text/event-stream", "the answer is a stream")
            c.require(r.wait_for(lambda o: o.get("event") == "progress", 15) is not None,
                      "the call progresses")
            conn.sock.close()
            conn.close()
            end = r.wait_for(lambda o: o.get("event") == "request_end" and o.get("id") == 9, 15)
            c.eq(mcptest.dig(end, "outcome"), "cancelled", "the call leaves the ledger")
        finally:
            r.close()
            tap.stop()


BIG_EVENTS = 400            # 400 events of 64 KiB: 25 MiB of answer


class BigUpstream:
    """A Streamable HTTP endpoint of the test's own: every POST is answered
    with an SSE stream of BIG_EVENTS notifications of 64 KiB, written as
    fast as the tap takes them, then the answer to the request's id."""

    def __init__(self):
        import http.server

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                pad = "x" * 65000
                for i in range(BIG_EVENTS):
                    ev = {"jsonrpc": "2.0", "method": "notifications/message",
                          "params": {"level": "info", "data": "%d %s" % (i, pad)}}
                    self.wfile.write(b"event: message\ndata: " + json.dumps(ev).encode() + b"\n\n")
                ans = {"jsonrpc": "2.0", "id": body.get("id"), "result": {}}
                self.wfile.write(b"event: message\ndata: " + json.dumps(ans).encode() + b"\n\n")
                self.wfile.flush()

        self.server = http.server.ThreadingHTTPServer((mcptest.LOOPBACK, 0), H)
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = "http://%s:%d/mcp" % (mcptest.LOOPBACK, self.port)

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


@mcptest.case(rep)
def slow_agent_backpressure(c):
    # An agent that does not read: the tap pauses the upstream transfer
    # rather than hold 25 MiB for it; once it reads, every byte comes, in
    # order, and the answer ends the call in the ledger.
    up = BigUpstream()
    tap = Tap(up.url, name="big")
    r = mcptest.TapReader(tap.sock)
    try:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
        s.connect((mcptest.LOOPBACK, tap.port))
        body = json.dumps({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                           "params": {"name": "big", "arguments": {}}}).encode()
        s.sendall(b"POST /mcp HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                  b"Content-Type: application/json\r\n"
                  b"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n"
                  % len(body) + body)
        base = rss_kib(tap.proc.pid)
        time.sleep(3)       # the agent reads nothing meanwhile
        held = rss_kib(tap.proc.pid)
        mcptest.log("  the tap's RSS: %d KiB, then %d KiB with the agent not reading" % (base, held))
        c.check(held - base < 12 * 1024, "the tap holds a bounded amount for a slow agent "
                "(%d KiB more, not 25 MiB)" % (held - base))
        parts, tail = [], b""
        s.settimeout(30)
        t0 = time.monotonic()
        while True:
            b = s.recv(1 << 18)
            if not b:
                break
            parts.append(b)
            tail = (tail + b)[-16:]
            if tail.endswith(b"\r\n0\r\n\r\n"):
                break
        s.close()
        got = b"".join(parts)
        mcptest.log("  %d bytes read in %.1f s" % (len(got), time.monotonic() - t0))
        head, _, rest = got.partition(b"\r\n\r\n")
        c.check(head.startswith(b"HTTP/1.1 200"), "the answer's status: %r" % head[:40])
        # chunked toward the agent: undo it
        chunks, pos = [], 0
        while pos < len(rest):
            eol = rest.index(b"\r\n", pos)
            n = int(rest[pos:eol], 16)
            if n == 0:
                break
            chunks.append(rest[eol + 2:eol + 2 + n])
            pos = eol + 2 + n + 2
        data = b"".join(chunks)
        events = [e for e in data.split(b"\n\n") if e]
        c.eq(len(events), BIG_EVENTS + 1, "every event came")
        c.check(all(json.loads(e.split(b"data: ", 1)[1])["params"]["data"].startswith("%d " % i)
                    for i, e in enumerate(events[:-1])), "in order, whole")
        end = r.wait_for(lambda o: o.get("event") == "request_end" and o.get("id") == 5, 10)
        c.eq(mcptest.dig(end, "outcome"), "completed", "the answer ended the call")
    finally:
        r.close()
        tap.stop()
        up.stop()


class HeaderUpstream:
    """An endpoint that answers every request with JSON naming the headers
    it received, and headers of its own (some of them hop-by-hop)."""

    def __init__(self):
        import http.server
        self.seen = []
        seen = self.seen

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def answer(self):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                seen.append({"method": self.command, "headers": dict(self.headers.items()),
                             "body": body.decode(errors="replace")})
                out = json.dumps({"jsonrpc": "2.0", "id": 1, "result": {}}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Mcp-Session-Id", "sess-0123456789abcdef")
                self.send_header("X-Upstream", "yes")
                self.send_header("Keep-Alive", "timeout=5")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            do_POST = answer
            do_GET = answer
            do_DELETE = answer

        self.server = http.server.ThreadingHTTPServer((mcptest.LOOPBACK, 0), H)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = "http://%s:%d/mcp" % (mcptest.LOOPBACK, self.port)

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


@mcptest.case(rep)
def headers_passed(c):
    # What the agent sends reaches the server but the hop-by-hop headers;
    # Host is the upstream's; what the server answers reaches the agent
    # the same way; the credentials are never on the socket or stderr.
    up = HeaderUpstream()
    tap = Tap(up.url, name="hdr")
    r = mcptest.TapReader(tap.sock)
    secret = "Bearer sekrit-token-4711"
    try:
        rq = urllib.request.Request(tap.url, data=INIT, method="POST", headers={
            "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
            "Authorization": secret, "MCP-Protocol-Version": "2025-06-18",
            "Last-Event-ID": "ev-7", "X-Agent": "kept", "TE": "trailers",
            "Proxy-Authorization": "Basic cHJveHk=", "Accept-Encoding": "gzip",
            "User-Agent": "test-agent/1"})
        with urllib.request.urlopen(rq, timeout=20) as resp:
            status, rh, body = resp.status, resp.headers, resp.read()
        c.eq(status, 200, "the status")
        c.eq(json.loads(body).get("result"), {}, "the body")
        c.eq(rh.get("X-Upstream"), "yes", "the server's own header reaches the agent")
        c.eq(rh.get("Mcp-Session-Id"), "sess-0123456789abcdef", "Mcp-Session-Id reaches the agent")
        c.check(rh.get("Keep-Alive") is None, "a hop-by-hop answer header does not: %r" % rh.get("Keep-Alive"))
        c.require(len(up.seen) == 1, "the server got one request: %d" % len(up.seen))
        h = {k.lower(): v for k, v in up.seen[0]["headers"].items()}
        c.eq(up.seen[0]["body"], INIT.decode(), "the body, unchanged")
        c.eq(h.get("authorization"), secret, "Authorization reaches the server")
        c.eq(h.get("mcp-protocol-version"), "2025-06-18", "MCP-Protocol-Version")
        c.eq(h.get("last-event-id"), "ev-7", "Last-Event-ID")
        c.eq(h.get("x-agent"), "kept", "the agent's own header")
        c.eq(h.get("accept"), "application/json, text/event-stream", "Accept")
        c.eq(h.get("host"), "%s:%d" % (mcptest.LOOPBACK, up.port), "Host is the upstream's")
        for hop in ("te", "proxy-authorization", "accept-encoding"):
            c.check(hop not in h, "%s is not passed on" % hop)
        c.eq(h.get("user-agent"), "test-agent/1", "the agent's User-Agent, not libcurl's")
        got, s = tap_server(tap.sock)
        c.eq([x.get("id_prefix") for x in mcptest.dig(s, "sessions") or []], ["sess-012"],
             "the session the server issued, 8 characters")
        r2 = mcptest.TapReader(tap.sock)
        time.sleep(0.5)
        seen = json.dumps(r.lines + r2.lines)
        r2.close()
        c.check("sekrit" not in seen and "sess-0123456789abcdef" not in seen,
                "the socket shows neither the credentials nor the whole session id")
        c.check("sekrit" not in got.stdout, "nor check --json")
    finally:
        r.close()
        tap.stop()
        up.stop()
    c.check("sekrit" not in tap.stderr(), "nor the tap's stderr")


class HoldingUpstream:
    """An endpoint whose tools/call answer is an SSE stream with one
    progress notice that then waits (at most 20 s) for the request's
    notifications/cancelled; every request's method and headers are kept."""

    def __init__(self):
        import http.server
        self.seen = []
        self.cancelled = threading.Event()
        up = self

        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def do_POST(self):
                msg = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                up.seen.append({"msg": msg, "headers": {k.lower(): v for k, v in self.headers.items()}})
                if msg.get("method") != "tools/call":
                    if msg.get("method") == "notifications/cancelled":
                        up.cancelled.set()
                    self.send_response(202)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                note = {"jsonrpc": "2.0", "method": "notifications/progress",
                        "params": {"progressToken": "t", "progress": 1, "total": 10}}
                # half an event first: the tap's answer waits for its end
                self.wfile.write(b"event: message\ndata: " + json.dumps(note).encode())
                self.wfile.flush()
                time.sleep(0.5)
                self.wfile.write(b"\n\n")
                self.wfile.flush()
                up.cancelled.wait(20)
                late = {"jsonrpc": "2.0", "id": msg["id"], "result": {"late": True}}
                try:
                    self.wfile.write(b"event: message\ndata: " + json.dumps(late).encode() + b"\n\n")
                    self.wfile.flush()
                except OSError:
                    pass

        self.server = http.server.ThreadingHTTPServer((mcptest.LOOPBACK, 0), H)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = "http://%s:%d/mcp" % (mcptest.LOOPBACK, self.port)

    def stop(self):
        self.cancelled.set()
        self.server.shutdown()
        self.server.server_close()


@mcptest.case(rep)
def cancel_reaches_upstream(c):
    # The operator's cancel mid-event: notifications/cancelled goes
    # upstream in the agent's session with its credentials; the agent's
    # stream gets the rest of the event it was in, then the -32800 answer
    # as an event of its own, then the end; the late answer never comes.
    up = HoldingUpstream()
    tap = Tap(up.url, name="hold")
    try:
        s = socket.create_connection((mcptest.LOOPBACK, tap.port), timeout=20)
        body = json.dumps({"jsonrpc": "2.0", "id": 41, "method": "tools/call",
                           "params": {"name": "slow", "arguments": {},
                                      "_meta": {"progressToken": "t"}}}).encode()
        s.sendall(b"POST /mcp HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                  b"Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                  b"Mcp-Session-Id: agent-session-42\r\nAuthorization: Bearer tok-9\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(body) + body)
        time.sleep(0.2)     # the tap is mid-event now
        got = mcptest.run_mcptop(["cancel", "--socket", tap.sock, "--request", "41",
                                  "--reason", "stop it"], timeout=20)
        c.eq(got.rc, 0, "mcptop cancel: %s" % got.describe())
        data = b""
        while True:
            b = s.recv(65536)
            if not b:
                break
            data += b
        s.close()
        c.check(up.cancelled.wait(10), "notifications/cancelled reached the server")
        notes = [x for x in up.seen if x["msg"].get("method") == "notifications/cancelled"]
        c.require(len(notes) == 1, "one notification: %r" % notes)
        c.eq(mcptest.dig(notes[0], "msg", "params", "requestId"), 41, "its requestId")
        c.eq(notes[0]["headers"].get("mcp-session-id"), "agent-session-42", "in the agent's session")
        c.eq(notes[0]["headers"].get("authorization"), "Bearer tok-9", "with the agent's credentials")
        text = data.decode(errors="replace")
        i_note = text.find("notifications/progress")
        i_err = text.find("-32800")
        c.check(0 <= i_note < i_err, "the progress event whole, then the tap's answer: %r" % text[-600:])
        c.check('"late"' not in text, "the late answer never reaches the agent")
        c.check("\n\nevent: message\ndata: {" in text[i_note:], "the answer is an event of its own")
    finally:
        tap.stop()
        up.stop()


@mcptest.case(rep)
def refused_and_502(c):
    dead = mcptest.free_port()
    tap = Tap("http://%s:%d/mcp" % (mcptest.LOOPBACK, dead), name="dead")
    r = mcptest.TapReader(tap.sock)
    try:
        status, body = post(tap.url, INIT)
        c.eq(status, 502, "a refused upstream: the agent gets 502 (%r)" % body[:200])
        x = r.wait_for(lambda o: o.get("event") == "exchange", 10)
        c.eq(mcptest.dig(x, "outcome"), "connect_refused", "the record: connect_refused")
        c.eq(mcptest.dig(x, "delivered"), "no", "delivered no")
    finally:
        r.close()
        tap.stop()
    lab = faultlab.FaultLab().start()
    try:
        tap = Tap(lab.url("/html502/dial"), name="lab")
        r = mcptest.TapReader(tap.sock)
        try:
            status, body = post(tap.url, INIT)
            c.eq(status, 502, "the gateway's 502 is passed on")
            c.check(b"<" in body, "with its page: %r" % body[:120])
            x = r.wait_for(lambda o: o.get("event") == "exchange", 10)
            c.eq(mcptest.dig(x, "outcome"), "http_status", "the record: http_status")
        finally:
            r.close()
            tap.stop()
    finally:
        lab.stop()


@mcptest.case(rep)
def loopback_only(c):
    got = mcptest.run_mcptop(["tap", "--listen", "0.0.0.0:0", "--upstream",
                              "http://127.0.0.1:9/mcp", "--no-socket"], timeout=20)
    c.eq(got.rc, 2, "a non-loopback --listen is refused: %s" % got.describe())
    c.check("--public" in got.stderr, "saying how to mean it: %r" % got.stderr)
    got = mcptest.run_mcptop(["tap", "--listen", "127.0.0.1:1", "--upstream", "ftp://x/"],
                             timeout=20)
    c.eq(got.rc, 2, "an upstream that is no http URL: %s" % got.describe())


@mcptest.case(rep)
def taps_exit_clean(c):
    # Every tap above ended on SIGTERM with status 0 and said nothing of a
    # sanitizer's (an ASan build reports leaks and errors on stderr).
    c.check(len(STOPPED) >= 5, "the taps above were stopped: %d" % len(STOPPED))
    for port, rc, err in STOPPED:
        c.check("Sanitizer" not in err and "runtime error" not in err,
                "the tap on port %d: no sanitizer report: %s" % (port, err[-2000:]))
        c.eq(rc, 0, "the tap on port %d exits 0 on SIGTERM" % port)


rep.finish()
