#!/usr/bin/env python3
"""The HTTP tap against a hostile agent and a hostile server (issue 31):
what an attacker on either side of `mcptop tap --listen` sends, and what
must (not) come of it.

  header_smuggling  a bare CR in a header value, an obs-fold line: 400,
                    and nothing reaches the upstream (it would read a
                    header the agent smuggled in); a HTAB in a value is
                    passed on; more headers than the tap passes on: 431

Each upstream is a small raw-socket server on a thread here (it logs the
bytes it was sent). Everything local; every wait is bounded.

Standalone: MCPTOP_BIN=build/mcptop MCPTOP_TESTS_DIR=tests python3 tests/integration/test_tap_http_hostile.py
"""

import json
import os
import socket
import sys
import threading
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402

rep = mcptest.Reporter("tap_http_hostile: the HTTP tap against a hostile agent and server")


def tmp(name):
    return str(mcptest.tmpdir() / name)


def answer_json(req):
    """A JSON answer to the request's id, with Content-Length."""
    body = req.split(b"\r\n\r\n", 1)[1] if b"\r\n\r\n" in req else b""
    try:
        rid = json.loads(body).get("id", 1)
    except ValueError:
        rid = 1
    ans = json.dumps({"jsonrpc": "2.0", "id": rid, "result": {}}).encode()
    return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(ans)) + ans


class Upstream:
    """A raw HTTP/1.1 server on 127.0.0.1 on a thread: reads one request
    per connection (its head and Content-Length body), logs its bytes,
    answers with respond(request bytes) -> bytes, closes."""

    def __init__(self, respond=answer_json):
        self.respond = respond
        self.requests = []
        self.lock = threading.Lock()
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind((mcptest.LOOPBACK, 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.url = "http://%s:%d/mcp" % (mcptest.LOOPBACK, self.port)
        self.done = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while not self.done:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn):
        conn.settimeout(10)
        req = b""
        try:
            while b"\r\n\r\n" not in req:
                d = conn.recv(65536)
                if not d:
                    return
                req += d
            want = 0
            for line in req.split(b"\r\n\r\n", 1)[0].split(b"\r\n"):
                if line.lower().startswith(b"content-length:"):
                    want = int(line.split(b":", 1)[1])
            while len(req.split(b"\r\n\r\n", 1)[1]) < want:
                d = conn.recv(65536)
                if not d:
                    break
                req += d
            with self.lock:
                self.requests.append(req)
            out = self.respond(req)
            if isinstance(out, list):   # pieces, a little apart
                for piece in out:
                    conn.sendall(piece)
                    time.sleep(0.3)
            else:
                conn.sendall(out)
        except OSError:
            pass
        finally:
            conn.close()

    def got(self):
        with self.lock:
            return list(self.requests)

    def stop(self):
        self.done = True
        self.thread.join(timeout=5)
        self.sock.close()


class Tap:
    """mcptop tap --listen 127.0.0.1:PORT --upstream URL."""

    def __init__(self, upstream, name="hostile"):
        self.port = mcptest.free_port()
        self.sock = tmp("tap-hostile-%d.sock" % self.port)
        self.err = tmp("tap-hostile-%d.err" % self.port)
        with open(self.err, "wb") as err:
            self.proc = mcptest.spawn([mcptest.MCPTOP_BIN, "tap", "--listen",
                                       "%s:%d" % (mcptest.LOOPBACK, self.port),
                                       "--upstream", upstream, "--name", name,
                                       "--socket", self.sock],
                                      env=mcptest.mcptop_env(), stderr=err)
        if not mcptest.wait_port(self.port, timeout=20, proc=self.proc):
            raise mcptest.SetupError("the tap did not listen: %s" % self.stderr())

    def stderr(self):
        with open(self.err, errors="replace") as f:
            return f.read()

    def stop(self):
        mcptest.terminate(self.proc)
        STOPPED.append((self.port, self.proc.returncode, self.stderr()))
        return self.proc.returncode


STOPPED = []    # (port, exit status, stderr) of every tap, for the last case


def raw(port, data, timeout=20.0):
    """Send data on a new connection to the tap, read until it closes."""
    c = socket.create_connection((mcptest.LOOPBACK, port), timeout=timeout)
    out = b""
    try:
        c.sendall(data)
        while True:
            d = c.recv(65536)
            if not d:
                break
            out += d
    except OSError as e:
        out += b"<<%s>>" % str(e).encode()
    finally:
        c.close()
    return out


def status_of(resp):
    try:
        return int(resp.split(b" ", 2)[1])
    except (IndexError, ValueError):
        return None


BODY = b'{"jsonrpc":"2.0","id":7,"method":"tools/list"}'


def post_with(headers):
    """A raw POST of BODY with extra header bytes (CRLF-ended lines)."""
    return (b"POST /mcp HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
            b"Content-Type: application/json\r\n" + headers +
            b"Content-Length: %d\r\n\r\n" % len(BODY) + BODY)


@mcptest.case(rep)
def header_smuggling(c):
    up = Upstream()
    tap = Tap(up.url)
    try:
        got = raw(tap.port, post_with(b"X-A: b\rSmuggled-Cr: yes\r\n"))
        c.eq(status_of(got), 400, "a bare CR in a value: 400: %r" % got[:200])
        got = raw(tap.port, post_with(b"X-B: a\r\n Smuggled-Fold: yes\r\n"))
        c.eq(status_of(got), 400, "an obs-fold line: 400: %r" % got[:200])
        sent = b"".join(up.got())
        c.check(b"Smuggled" not in sent,
                "neither reached the upstream: %r" % sent[:400])
        got = raw(tap.port, post_with(b"X-Tab: a\tb\r\n"))
        c.eq(status_of(got), 200, "a HTAB in a value is fine: %r" % got[:200])
        c.check(any(b"X-Tab: a\tb\r\n" in r for r in up.got()),
                "and passed on as it came")
        many = b"".join(b"X-H%d: v\r\n" % i for i in range(150))
        got = raw(tap.port, post_with(many))
        c.eq(status_of(got), 431, "150 headers: 431: %r" % got[:200])
    finally:
        tap.stop()
        up.stop()


def in_flight(sock):
    cfg = mcptest.write_config({"hostile": {"tap": sock}})
    got = mcptest.run_mcptop(["check", "-c", cfg, "--json"], timeout=30)
    return mcptest.dig(got.json() or {}, "servers", 0, "in_flight")


@mcptest.case(rep)
def agent_gives_up_on_silent_server(c):
    # A server that never sends the head of its answer to "hang"; the
    # agent gives up (closes) on 70 such calls, more than the tap's 64
    # connections. The tap notices each close while it waits: the next
    # call is served, nothing is left in flight.
    hung = threading.Event()

    def respond(req):
        if b'"hang"' in req:
            hung.wait(60)
            return b""
        return answer_json(req)

    up = Upstream(respond)
    tap = Tap(up.url)
    try:
        for batch in (40, 30):
            socks = []
            for i in range(batch):
                s = socket.create_connection((mcptest.LOOPBACK, tap.port), timeout=10)
                body = b'{"jsonrpc":"2.0","id":%d,"method":"hang"}' % (len(socks) + batch)
                s.sendall(b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: "
                          b"application/json\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
                socks.append(s)
            deadline = time.monotonic() + 20
            while len(up.got()) < batch and time.monotonic() < deadline:
                time.sleep(0.05)
            for s in socks:
                s.close()
            up.requests.clear()
        got = raw(tap.port, post_with(b""), timeout=20)
        c.eq(status_of(got), 200, "a call after 70 abandoned ones is served: %r" % got[:200])
        left = None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            left = in_flight(tap.sock)
            if left == []:
                break
            time.sleep(0.2)
        c.eq(left, [], "nothing of the abandoned calls is left in flight")
    finally:
        hung.set()
        tap.stop()
        up.stop()


@mcptest.case(rep)
def compressed_unasked(c):
    # The tap asks for no encoding (it reads the copy); a server that
    # gzips its answer anyway: the agent gets it decoded (no
    # Content-Encoding), and the ledger reads it as the answer (no
    # not_mcp_response against a server that answered).
    import gzip

    def respond(req):
        plain = answer_json(req)
        head, body = plain.split(b"\r\n\r\n", 1)
        z = gzip.compress(body)
        return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Content-Encoding: gzip\r\nContent-Length: %d\r\n\r\n" % len(z)) + z

    up = Upstream(respond)
    tap = Tap(up.url)
    try:
        got = raw(tap.port, post_with(b"Accept-Encoding: identity\r\n"))
        head, _, body = got.partition(b"\r\n\r\n")
        c.eq(status_of(got), 200, "answered: %r" % got[:200])
        c.check(b"content-encoding" not in head.lower(), "no Content-Encoding: %r" % head)
        c.check(b'"id":7' in body.replace(b" ", b""), "the answer decoded: %r" % body[:200])
        c.check(all(b"accept-encoding" not in r.lower() for r in up.got()),
                "no Accept-Encoding went upstream: %r" % up.got()[:1])
        cfg = mcptest.write_config({"hostile": {"tap": tap.sock}})
        got = mcptest.run_mcptop(["check", "-c", cfg, "--json"], timeout=30)
        srv = mcptest.dig(got.json() or {}, "servers", 0) or {}
        c.eq(srv.get("last_failure"), None, "the ledger read the answer: %s" % got.describe())
    finally:
        tap.stop()
        up.stop()


@mcptest.case(rep)
def cancel_in_a_batch(c):
    # A batch of two to a server that never answers: cancelling one of
    # them is refused (the tap's answer would be one object where the
    # agent waits for a list, the other request never answered, in flight
    # for ever); when the agent gives up, neither is left in flight.
    hung = threading.Event()

    def respond(req):
        hung.wait(60)
        return b""

    up = Upstream(respond)
    tap = Tap(up.url)
    cfg = mcptest.write_config({"hostile": {"tap": tap.sock}})
    s = None
    try:
        body = (b'[{"jsonrpc":"2.0","id":10,"method":"hang"},'
                b'{"jsonrpc":"2.0","id":11,"method":"hang"}]')
        s = socket.create_connection((mcptest.LOOPBACK, tap.port), timeout=10)
        s.sendall(b"POST /mcp HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  b"Content-Length: %d\r\n\r\n" % len(body) + body)
        deadline = time.monotonic() + 20
        while not up.got() and time.monotonic() < deadline:
            time.sleep(0.05)
        got = mcptest.run_mcptop(["cancel", "-c", cfg, "--server", "hostile",
                                  "--request", "10"], timeout=30)
        c.check(got.rc != 0, "the cancel is refused: %s" % got.describe())
        c.check("batch" in got.stdout + got.stderr, "saying why: %s" % got.describe())
        s.settimeout(1.0)
        try:
            early = s.recv(100)
        except socket.timeout:
            early = b""
        c.eq(early, b"", "the agent got no answer of the tap's")
        s.close()
        s = None
        left = None
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            left = in_flight(tap.sock)
            if left == []:
                break
            time.sleep(0.2)
        c.eq(left, [], "the agent gone, neither is in flight")
    finally:
        if s is not None:
            s.close()
        hung.set()
        tap.stop()
        up.stop()


@mcptest.case(rep)
def cancel_then_cut_mid_event(c):
    # mcptop cancel while the server is mid-event (the tap's answer waits
    # for the event's end), then the server ends its stream there: the
    # agent still gets the tap's -32800 (it was told cancelled; without
    # it the agent waits for an answer that will never come).
    def respond(req):
        return ([b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n",
                 b'event: message\ndata: {"jsonrpc":"2.0","method":"notifications/pro']
                + [b""] * 8)

    up = Upstream(respond)
    tap = Tap(up.url)
    cfg = mcptest.write_config({"hostile": {"tap": tap.sock}})
    s = None
    try:
        s = socket.create_connection((mcptest.LOOPBACK, tap.port), timeout=20)
        s.sendall(post_with(b""))
        head = b""
        while b"notifications/pro" not in head:
            d = s.recv(4096)
            if not d:
                break
            head += d
        c.require(status_of(head) == 200 and b"notifications/pro" in head,
                  "the stream began, mid-event: %r" % head[:300])
        got = mcptest.run_mcptop(["cancel", "-c", cfg, "--server", "hostile",
                                  "--request", "7"], timeout=30)
        c.eq(got.rc, 0, "the cancel: %s" % got.describe())
        rest = head
        try:
            while True:
                d = s.recv(65536)
                if not d:
                    break
                rest += d
        except OSError:
            pass
        c.check(b"-32800" in rest, "the agent got the tap's -32800: %r" % rest[-300:])
    finally:
        if s is not None:
            s.close()
        tap.stop()
        up.stop()


@mcptest.case(rep)
def end_answered_with_a_stream(c):
    # The operator's DELETE answered 200 with an SSE stream the server
    # keeps open: the session was terminated (the status is the answer),
    # not timed_out at the tap's deadline with "HTTP 200".
    def respond(req):
        if req.startswith(b"DELETE"):
            return ([b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n",
                     b": still here\n\n"] + [b""] * 20)
        plain = answer_json(req)
        return plain.replace(b"\r\n\r\n", b"\r\nMcp-Session-Id: sess-hostile-42\r\n\r\n", 1)

    up = Upstream(respond)
    tap = Tap(up.url)
    cfg = mcptest.write_config({"hostile": {"tap": tap.sock}})
    try:
        init = b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}'
        got = raw(tap.port, b"POST /mcp HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
                  b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(init) + init)
        c.require(status_of(got) == 200, "initialized: %r" % got[:200])
        got = mcptest.run_mcptop(["end", "-c", cfg, "--server", "hostile", "--session",
                                  "sess-hos"], timeout=40)
        c.check("terminated" in got.stdout, "the ending: terminated: %s" % got.describe())
        c.check("timed_out" not in got.stdout, "not timed_out: %s" % got.describe())
    finally:
        tap.stop()
        up.stop()


@mcptest.case(rep)
def resets_do_not_flood_stderr(c):
    # 60 agents that reset their connection under a streamed answer: each
    # makes libmicrohttpd say so; the tap says at most 20 a minute.
    def respond(req):
        return [b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\n",
                b"event: message\ndata: {}\n\n"] * 3

    up = Upstream(respond)
    tap = Tap(up.url)
    try:
        for i in range(60):
            s = socket.create_connection((mcptest.LOOPBACK, tap.port), timeout=10)
            s.sendall(post_with(b""))
            try:
                s.recv(100)     # the head: the answer streams
            except OSError:
                pass
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            s.close()           # a reset
        time.sleep(1.5)
        said = [l for l in tap.stderr().splitlines() if l.startswith("mcptop tap: http:")]
        c.check(len(said) <= 21, "at most 20 of libmicrohttpd's lines: %d\n%s" %
                (len(said), "\n".join(said[:5])))
    finally:
        tap.stop()
        up.stop()


@mcptest.case(rep)
def bad_upstream_and_listen(c):
    # An upstream URL libcurl cannot parse is refused at the start (not a
    # 502 for every call), and a password in it, '@' and all, is nowhere.
    for bad in ("http://a b/mcp", "http://user:pa@ss-w0rd@127.0.0.1:9/mcp"):
        got = mcptest.run_mcptop(["tap", "--listen", "127.0.0.1:0", "--upstream", bad,
                                  "--no-socket"], timeout=20)
        c.eq(got.rc, 2, "%s is refused at the start: %s" % (bad, got.describe()))
        c.check("--upstream" in got.stderr, "saying which: %r" % got.stderr)
        c.check("ss-w0rd" not in got.stderr and "pa@" not in got.stderr,
                "no piece of the password: %r" % got.stderr)
    # A port in use: the message names it.
    busy = socket.socket()
    busy.bind((mcptest.LOOPBACK, 0))
    busy.listen(1)
    port = busy.getsockname()[1]
    try:
        got = mcptest.run_mcptop(["tap", "--listen", "127.0.0.1:%d" % port, "--upstream",
                                  "http://127.0.0.1:9/mcp", "--no-socket"], timeout=20)
        c.eq(got.rc, 2, "a port in use: %s" % got.describe())
        c.check("port %d" % port in got.stderr and "in use" in got.stderr,
                "the message names the port: %r" % got.stderr)
    finally:
        busy.close()


@mcptest.case(rep)
def taps_exit_clean(c):
    c.check(len(STOPPED) >= 1, "the taps above were stopped: %d" % len(STOPPED))
    for port, rc, err in STOPPED:
        c.check("Sanitizer" not in err and "runtime error" not in err,
                "the tap on port %d: no sanitizer report: %s" % (port, err[-2000:]))
        c.eq(rc, 0, "the tap on port %d exits 0 on SIGTERM" % port)


rep.finish()
