#!/usr/bin/env python3
"""The passive tap (issue 31): `mcptop tap -- CMD` between an agent and its
stdio server, and the monitor reading it.

  bytes_unchanged   a scripted server (partial writes, a stray log line,
                    CRLF, a 3 MiB line, invalid UTF-8, no newline at the
                    end, stderr) behind the tap: the agent receives exactly
                    its bytes, the server exactly the agent's, stderr
                    passes, the exit status is the server's; the socket is
                    0600 and goes away with the tap
  cancel_at_line_boundaries  a cancel asked while the agent is mid-line
                    reaches the server after that line, never inside it
  held_tail_at_eof  two calls cancelled; the server answers one late,
                    writes a line with no newline and exits: the agent
                    gets every byte the server wrote but the late answer
                    (sha256), and the tap's two -32800
  sdk_identical     the official SDK client with server-everything:
                    tools/list, echo, a long-running tool with progress;
                    every byte the client receives through the tap is the
                    bytes of a direct run
  in_flight_cancel  while a long call runs, check --json on {"tap": PATH}
                    shows it in flight with its progress; mcptop cancel
                    ends it: the client gets -32800 (reason in data), the
                    ledger says cancelled_by_operator
  sampling_in_flight  the server's own request (server-everything's
                    trigger-sampling-request sends sampling/createMessage)
                    held by the agent: check --json lists both requests in
                    flight, the agent's to_server and the server's to_agent;
                    watch --taps shows the to_agent start; once the agent
                    answers, the tool's result carries its answer and the
                    ledger ends both completed, the server's first
  sigkill           the server SIGKILLed during a call: the ledger and the
                    record say connection_closed (delivered unknown) for
                    that request; the tap exits 137; a monitor shows the
                    tap gone as down with the reason
  stuck_reader      a socket reader that never reads does not delay the
                    agent: every answer comes, its lines are dropped and
                    counted, and a gap line tells it once it reads
  tui_ledger_and_cancel  the TUI on a tap: the row, the header's in-flight
                    count, the ledger in the detail pane, C y cancelling
  probe             --probe pings a quiet server after initialize; the
                    pings' answers never reach the agent
  agent_config_entry  an agent's entry that starts `mcptop tap` is read
                    from that tap's default socket, never started again

Everything local; every wait is bounded.

Standalone: MCPTOP_BIN=build/mcptop MCPTOP_TESTS_DIR=tests python3 tests/integration/test_tap.py
"""

import base64
import hashlib
import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402

rep = mcptest.Reporter("tap: mcptop tap between an agent and its server")

CLIENT_MJS = mcptest.TESTS_DIR / "integration" / "tap_client.mjs"
NODE = mcptest._NODE


def tmp(name):
    return str(mcptest.tmpdir() / name)


def tap_argv(name, sock, *cmd):
    return [mcptest.MCPTOP_BIN, "tap", "--name", name, "--socket", sock, "--"] + list(cmd)


def wait_until(pred, timeout):
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def script_file(name, text):
    """A scripted server's source in this run's temp dir; its path."""
    path = tmp(name)
    with open(path, "w") as f:
        f.write(text)
    return path


def spawn_tap(name, sock, *cmd):
    """A tap around cmd, every stream piped."""
    return mcptest.spawn(tap_argv(name, sock, *cmd), env=mcptest.mcptop_env(),
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def rpc(obj):
    return (json.dumps(obj) + "\n").encode()


INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "test_tap", "version": "0"}}}


class Agent:
    """A plain agent: JSON-RPC lines to the tap's stdin, answers read from
    its stdout on a thread."""

    def __init__(self, argv, env=None):
        self.p = mcptest.spawn(argv, env=mcptest.mcptop_env(env), stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.answers = {}
        self.cond = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.p.stdout:
            try:
                m = json.loads(line)
            except ValueError:
                continue
            if "id" in m and ("result" in m or "error" in m):
                with self.cond:
                    self.answers[m["id"]] = m
                    self.cond.notify_all()

    def send(self, obj):
        self.p.stdin.write(rpc(obj))
        self.p.stdin.flush()

    def answer(self, mid, timeout):
        deadline = time.monotonic() + timeout
        with self.cond:
            while mid not in self.answers:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.cond.wait(left)
            return self.answers[mid]

    def initialize(self, timeout=20.0):
        self.send(INIT)
        a = self.answer(1, timeout)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return a

    def close(self, timeout=15.0):
        try:
            self.p.stdin.close()
        except OSError:
            pass
        try:
            return self.p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            mcptest.terminate(self.p)
            return None


# The scripted server: what it writes, and the file it copies its stdin to.
FAKE = r'''
import os, sys, time
out = sys.argv[1]
parts = [b'{"jsonrpc":"2.0","method":"notifications/message","par',
         b'ams":{"level":"info","data":"split"}}\n',
         b'a stray log line\r\n',
         b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"' + b'x' * (3 * 1024 * 1024) + b'"}}\n',
         b'\xff\xfe not utf-8 \xc3\n',
         b'{"jsonrpc":"2.0","id":99,"result":{}}\r\n',
         b'no newline at the end']
os.write(2, b"err one\nerr two, cut")
for p in parts:
    view = memoryview(p)
    while view:
        n = os.write(1, view[:65536])
        view = view[n:]
    time.sleep(0.05)
got = b""
while True:
    b = os.read(0, 65536)
    if not b:
        break
    got += b
open(out, "wb").write(got)
sys.exit(7)
'''


@mcptest.case(rep)
def bytes_unchanged(c):
    fake = script_file("fake.py", FAKE)
    got_path = tmp("fake-got.bin")
    sock = tmp("bytes.sock")
    expect = subprocess.run([sys.executable, fake, tmp("direct-got.bin")], input=b"",
                            capture_output=True, timeout=30)
    c.require(expect.returncode == 7, "the scripted server runs directly: %r" % expect.returncode)
    p = spawn_tap("fake", sock, sys.executable, fake, got_path)
    r = mcptest.TapReader(sock)
    mode = stat.S_IMODE(os.stat(sock).st_mode)
    c.eq(oct(mode), oct(0o600), "the socket's mode")
    # The agent's bytes: lines, a request split in two writes, a huge
    # request, bytes that are no JSON, and no final newline.
    sent = [rpc(INIT), b'{"jsonrpc":"2.0","id":2,"me', b'thod":"tools/list"}\n',
            rpc({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                 "params": {"name": "big", "arguments": {"blob": "y" * (2 * 1024 * 1024)}}}),
            b'\x00\x01 garbage\n', b'{"jsonrpc":"2.0","method":"notifications/initialized"}']
    # Read while writing, as an agent does (the pipes are bounded).
    got = {}

    def drain(name, f):
        got[name] = f.read()

    readers = [threading.Thread(target=drain, args=(k, f), daemon=True)
               for k, f in (("out", p.stdout), ("err", p.stderr))]
    for t in readers:
        t.start()
    for s in sent:
        p.stdin.write(s)
        p.stdin.flush()
        time.sleep(0.02)
    p.stdin.close()
    try:
        p.wait(timeout=30)
    except subprocess.TimeoutExpired:
        mcptest.terminate(p)
        c.fatal("the tap did not exit after its server")
    for t in readers:
        t.join(10)
    out, err = got.get("out", b""), got.get("err", b"")
    c.eq(p.returncode, 7, "the tap's exit status is the server's")
    c.check(out == expect.stdout, "the agent received the server's bytes unchanged "
            "(%d bytes, expected %d)" % (len(out), len(expect.stdout)))
    c.check(err.startswith(b"err one\nerr two, cut"),
            "the server's stderr passes through: %r" % err[:80])
    with open(got_path, "rb") as f:
        c.check(f.read() == b"".join(sent), "the server received the agent's bytes unchanged")
    c.check(not os.path.exists(sock), "the socket goes away with the tap")
    snap = r.lines[0] if r.lines else {}
    c.eq(snap.get("event"), "snapshot", "a reader gets a snapshot first")
    c.eq(mcptest.dig(snap, "source"), "tap", "the snapshot's source")
    # The split request was read whole; the server's answer to 99 pairs
    # with nothing.
    ends = r.events("request_end")
    c.check(any(e.get("id") == 2 and e.get("kind") == "connection_closed" for e in ends),
            "the split tools/list was read as one request (closed in flight): %r" % ends)
    r.close()


SINK = r'''
import os, sys
out = open(sys.argv[1], "wb", buffering=0)
while True:
    b = os.read(0, 65536)
    if not b:
        break
    out.write(b)
'''


@mcptest.case(rep)
def cancel_at_line_boundaries(c):
    # The tap's own messages go only between lines: a cancel asked while
    # the agent is mid-line waits for the end of the line the agent's
    # bytes leave open (even when a chunk ends one line and begins the
    # next).
    sink = tmp("sink.py")
    with open(sink, "w") as f:
        f.write(SINK)
    got_path = tmp("sink-got.bin")
    sock = tmp("boundary.sock")
    p = mcptest.spawn(tap_argv("sink", sock, sys.executable, sink, got_path),
                      env=mcptest.mcptop_env(), stdin=subprocess.PIPE,
                      stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    r = mcptest.TapReader(sock)
    req = b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"slow"}}\n'
    parts = [req, b'{"jsonrpc":"2.0","method":"notifications/x"',
             b'}\n{"jsonrpc":"2.0","method":"notifications/y"', b'}\n']
    p.stdin.write(parts[0] + parts[1])
    p.stdin.flush()
    c.require(r.wait_for(lambda o: o.get("event") == "request" or
                         (o.get("event") == "snapshot" and o.get("in_flight")), 10)
              is not None, "the request is in flight")
    got = mcptest.run_mcptop(["cancel", "--socket", sock, "--request", "5"], timeout=20)
    c.eq(got.rc, 0, "mcptop cancel: %s" % got.describe())
    for part in parts[2:]:
        time.sleep(0.1)
        p.stdin.write(part)
        p.stdin.flush()
    answer = p.stdout.readline()
    c.check(b'"code":-32800' in answer and b'"id":5' in answer,
            "the agent's answer: %r" % answer[:200])
    p.stdin.close()
    try:
        p.wait(timeout=15)
    except subprocess.TimeoutExpired:
        mcptest.terminate(p)
    with open(got_path, "rb") as f:
        seen = f.read().split(b"\n")
    c.eq(seen[:3], [req[:-1], b'{"jsonrpc":"2.0","method":"notifications/x"}',
                    b'{"jsonrpc":"2.0","method":"notifications/y"}'],
         "the agent's lines reached the server whole")
    c.check(len(seen) > 3 and b'"method":"notifications/cancelled"' in seen[3] and
            b'"requestId":5' in seen[3], "then the cancel, on a line of its own: %r" % seen[3:4])
    r.close()


# A server that, once both its calls are cancelled, answers the first one
# late, begins one more line and exits inside it (no newline). Every byte
# it writes to stdout is copied to argv[1].
HELD_TAIL = r"""
import json, os, sys, time
copy = open(sys.argv[1], "wb", buffering=0)
def w(b):
    copy.write(b)
    while b:
        b = b[os.write(1, b):]
cancelled = set()
for line in sys.stdin.buffer:
    m = json.loads(line)
    if m.get("method") == "initialize":
        w(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": {
            "protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
            "serverInfo": {"name": "held", "version": "0"}}}).encode() + b"\n")
    elif m.get("method") == "tools/call":
        w(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"working on %d"}}\n'
          % m["id"])
    elif m.get("method") == "notifications/cancelled":
        cancelled.add(m["params"]["requestId"])
        if cancelled == {5, 6}:
            w(b'{"jsonrpc":"2.0","id":5,"result":{"content":[],"late":true}}\n')
            w(b'{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"last wo')
            time.sleep(0.2)
            w(b'rds, no newline"}}')
            sys.exit(0)
"""


@mcptest.case(rep)
def held_tail_at_eof(c):
    # While a cancelled call's late answer is watched for, the tap holds
    # the server's lines until their newline; a line the server's EOF cuts
    # is still the agent's.
    script = script_file("held.py", HELD_TAIL)
    wrote = tmp("held-wrote.bin")
    sock = tmp("held.sock")
    p = spawn_tap("held", sock, sys.executable, script, wrote)
    got = {}

    def drain(name, f):
        got[name] = f.read()

    readers = [threading.Thread(target=drain, args=(k, f), daemon=True)
               for k, f in (("out", p.stdout), ("err", p.stderr))]
    for t in readers:
        t.start()
    r = mcptest.TapReader(sock)
    p.stdin.write(rpc(INIT))
    for mid in (5, 6):
        p.stdin.write(rpc({"jsonrpc": "2.0", "id": mid, "method": "tools/call",
                           "params": {"name": "slow", "arguments": {}}}))
    p.stdin.flush()
    c.require(r.wait_for(lambda o: o.get("event") == "request" and
                         mcptest.dig(o, "request", "id") == 6, 10)
              is not None, "both calls in flight")
    for mid in ("5", "6"):
        got_c = mcptest.run_mcptop(["cancel", "--socket", sock, "--request", mid], timeout=20)
        c.eq(got_c.rc, 0, "mcptop cancel %s: %s" % (mid, got_c.describe()))
    try:
        rc = p.wait(timeout=20)
    except subprocess.TimeoutExpired:
        mcptest.terminate(p)
        c.fatal("the tap did not exit after its server")
    for t in readers:
        t.join(10)
    p.stdin.close()
    r.close()
    c.eq(rc, 0, "the tap's exit status is the server's")
    out = got.get("out", b"")
    with open(wrote, "rb") as f:
        server = f.read()
    late = b'{"jsonrpc":"2.0","id":5,"result":{"content":[],"late":true}}\n'
    c.require(late in server and server.endswith(b'no newline"}}'),
              "the server wrote its late answer and an unterminated tail: %r" % server[-120:])
    ours = [ln for ln in out.split(b"\n") if b'"code":-32800' in ln]
    c.eq(len(ours), 2, "the agent got the tap's two -32800 (%r)" % ours)
    agent = b"".join(ln for ln in out.splitlines(keepends=True) if b'"code":-32800' not in ln)
    want = server.replace(late, b"")
    c.check(hashlib.sha256(agent).hexdigest() == hashlib.sha256(want).hexdigest(),
            "the agent got every byte the server wrote but the late answer "
            "(%d bytes, expected %d; the end: %r)" % (len(agent), len(want), agent[-60:]))


def run_client(mode, out, *cmd, timeout=60.0, extra=()):
    return mcptest.run([NODE, str(CLIENT_MJS), mode, out] + list(extra) + ["--"] + list(cmd),
                       timeout=timeout, env=mcptest.mcptop_env())


@mcptest.case(rep)
def sdk_identical(c):
    ev = mcptest.everything_stdio_argv()
    direct, tapped = tmp("direct.json"), tmp("tapped.json")
    r = run_client("script", direct, *ev)
    c.require(r.rc == 0, "the SDK client runs directly: %s" % r.describe())
    r = run_client("script", tapped, mcptest.MCPTOP_BIN, "tap", "--name", "ev",
                   "--socket", tmp("sdk.sock"), "--", *ev)
    c.require(r.rc == 0, "the SDK client runs through the tap: %s" % r.describe())
    with open(direct) as f:
        a = json.load(f)
    with open(tapped) as f:
        b = json.load(f)
    c.check(a["tools"] > 0 and a["tools"] == b["tools"], "tools/list: %r, %r" % (a["tools"], b["tools"]))
    # The SDK drops a progress notice that arrives in the same read as the
    # answer (its handler is gone by then): how many reach onprogress
    # depends on how the bytes were cut, not on the bytes; every notice
    # is in the messages compared below.
    n = min(len(a["progress"]), len(b["progress"]))
    c.check(n >= 3 and b["progress"][:n] == a["progress"][:n],
            "progress notices through the tap: %r, directly %r" % (b["progress"], a["progress"]))
    c.eq(b["echo"], a["echo"], "the echo result")
    c.eq(b["long"], a["long"], "the long-running tool's result")
    ra, rb = base64.b64decode(a["raw"]), base64.b64decode(b["raw"])
    c.check(len(ra) > 0 and ra == rb, "every byte the client received is a direct run's "
            "(%d and %d bytes)" % (len(ra), len(rb)))
    c.eq(b["messages"], a["messages"], "the messages the client read")


def tap_config(name, sock):
    return mcptest.write_config({name: {"tap": sock}})


def ev_tap(dirname):
    """A taps directory of its own, the socket of a tap named ev in it, and
    a config that reads that tap."""
    taps = mcptest.tmpdir() / dirname
    taps.mkdir(exist_ok=True)
    sock = str(taps / "tap-ev.sock")
    return taps, sock, tap_config("ev", sock)


@mcptest.case(rep)
def in_flight_cancel(c):
    ev = mcptest.everything_stdio_argv()
    taps, sock, cfg = ev_tap("taps")
    out = tmp("long.json")
    port = mcptest.free_port()
    client = mcptest.spawn([NODE, str(CLIENT_MJS), "long", out, "--",
                            mcptest.MCPTOP_BIN, "tap", "--name", "ev", "--socket", sock, "--"] + ev,
                           env=mcptest.mcptop_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = b""
    deadline = time.monotonic() + 30
    while b"STARTED" not in line and time.monotonic() < deadline:
        line = client.stdout.readline()
        if not line:
            break
    c.require(b"STARTED" in line, "the long call reports progress")
    r = mcptest.TapReader(sock)
    watch = mcptest.Watch(["watch", "--taps", str(taps)])
    serve = mcptest.spawn([mcptest.MCPTOP_BIN, "serve", "--taps", str(taps), "--listen",
                           "%s:%d" % (mcptest.LOOPBACK, port)], env=mcptest.mcptop_env(),
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    started = watch.wait_for(lambda e: e.get("event") == "request" and
                             e.get("phase") == "start", time.monotonic() + 20)
    c.eq(mcptest.dig(started, "method"), "tools/call", "watch --taps: the request in flight")
    c.eq(mcptest.dig(started, "server"), "ev", "watch --taps: the server named from the socket")
    got = mcptest.run_mcptop(["check", "-c", cfg, "--json"], timeout=30)
    c.no_crash(got, "check")
    doc = got.json() or {}
    s = mcptest.dig(doc, "servers", 0)
    c.eq(mcptest.dig(s, "source"), "tap", "check --json: source")
    c.eq(mcptest.dig(s, "transport"), "tap", "check --json: transport")
    c.eq(mcptest.dig(s, "health"), "ok", "check --json: health from the agent's traffic")
    fl = mcptest.dig(s, "in_flight")
    c.require(isinstance(fl, list) and len(fl) == 1, "one request in flight: %r" % fl)
    req = fl[0]
    c.eq(req.get("method"), "tools/call", "in flight: method")
    c.eq(req.get("tool"), "trigger-long-running-operation", "in flight: tool")
    c.eq(req.get("direction"), "to_server", "in flight: direction")
    c.check(isinstance(req.get("age_ms"), (int, float)) and req["age_ms"] >= 0, "in flight: age_ms")
    c.check(isinstance(mcptest.dig(req, "progress", "progress"), (int, float)) and
            mcptest.dig(req, "progress", "total") == 60, "in flight: progress %r" % req.get("progress"))
    c.check(isinstance(mcptest.dig(s, "last_exchange_age_ms"), (int, float)),
            "the age of the last real exchange")
    server_pid = mcptest.dig(s, "pid")
    c.check(isinstance(server_pid, int) and server_pid > 0, "check --json: the server's pid")
    metrics = ""
    deadline = time.monotonic() + 20
    while "mcp_tap_in_flight_requests" not in metrics and time.monotonic() < deadline:
        try:
            with urllib.request.urlopen("http://%s:%d/metrics" % (mcptest.LOOPBACK, port),
                                        timeout=5) as resp:
                metrics = resp.read().decode()
        except OSError:
            time.sleep(0.2)
    c.check('mcp_tap_in_flight_requests{server="ev"} 1' in metrics,
            "/metrics: the in-flight count")
    c.check('mcp_tap_oldest_in_flight_seconds{server="ev"} ' in metrics,
            "/metrics: the oldest's age")
    mcptest.terminate(serve)
    t0 = time.monotonic()
    got = mcptest.run_mcptop(["cancel", "-c", cfg, "--server", "ev", "--request",
                              json.dumps(req["id"]), "--reason", "stuck"], timeout=20)
    c.eq(got.rc, 0, "mcptop cancel: %s" % got.describe())
    try:
        client.wait(timeout=20)
    except subprocess.TimeoutExpired:
        c.fatal("the client still waits after the cancel")
    elapsed = time.monotonic() - t0
    mcptest.log("  the client had its answer %.2f s after mcptop cancel started" % elapsed)
    with open(out) as f:
        res = json.load(f)
    c.eq(mcptest.dig(res, "error", "code"), -32800, "the client's error code")
    c.check("cancelled by the operator" in (mcptest.dig(res, "error", "message") or ""),
            "the client's error message: %r" % res.get("error"))
    c.eq(mcptest.dig(res, "error", "data", "reason"), "stuck", "the reason in data")
    end = r.wait_for(lambda o: o.get("event") == "request_end", 10)
    c.eq(mcptest.dig(end, "outcome"), "cancelled_by_operator", "the ledger's end")
    # The client closed the tap's stdin: the server is ended and reaped
    # (its tool goes on after the cancel, so SIGTERM ends it).
    deadline = time.monotonic() + 15
    while isinstance(server_pid, int) and time.monotonic() < deadline:
        try:
            os.kill(server_pid, 0)
        except OSError:
            break
        time.sleep(0.1)
    c.check(isinstance(server_pid, int) and time.monotonic() < deadline,
            "the server's process is gone after the agent left")
    wend = watch.wait_for(lambda e: e.get("event") == "request" and e.get("phase") == "end",
                          time.monotonic() + 10)
    c.eq(mcptest.dig(wend, "outcome"), "cancelled_by_operator", "watch: the request's end")
    watch.close()
    again = mcptest.run_mcptop(["cancel", "--socket", sock, "--request", "12345"], timeout=20)
    c.is_in(again.rc, (1,), "cancelling what is not in flight: %s" % again.describe())
    r.close()


class Lines:
    """A process's stdout lines, read on a thread (a wait for one is bounded)."""

    def __init__(self, f):
        self.lines = []
        threading.Thread(target=self._read, args=(f,), daemon=True).start()

    def _read(self, f):
        for line in f:
            self.lines.append(line)

    def wait(self, text, timeout):
        return wait_until(lambda: any(text in ln for ln in self.lines), timeout)


def in_flight_by_direction(fl):
    """{direction: [entry, ...]} of check --json's in_flight."""
    out = {}
    for e in fl if isinstance(fl, list) else []:
        out.setdefault(e.get("direction"), []).append(e)
    return out


@mcptest.case(rep)
def sampling_in_flight(c):
    # A request in each direction at once: the agent's tools/call waits on
    # the server's sampling/createMessage, which the agent holds until the
    # release file exists.
    ev = mcptest.everything_stdio_argv()
    taps, sock, cfg = ev_tap("taps-sample")
    out = tmp("sample.json")
    release = out + ".release"
    err_path = tmp("sample-client.err")
    with open(err_path, "wb") as err:
        client = mcptest.spawn([NODE, str(CLIENT_MJS), "sample", out, release, "--"] +
                               tap_argv("ev", sock, *ev),
                               env=mcptest.mcptop_env(), stdout=subprocess.PIPE, stderr=err)
    said = Lines(client.stdout)
    r = watch = None
    try:
        c.require(said.wait(b"SAMPLING", 30), "the server's sampling/createMessage reached the "
                  "agent")
        r = mcptest.TapReader(sock)
        watch = mcptest.Watch(["watch", "--taps", str(taps)])
        got = mcptest.run_mcptop(["check", "-c", cfg, "--json"], timeout=30)
        c.attach(got.describe())
        c.no_crash(got, "check")
        s = mcptest.dig(got.json() or {}, "servers", 0)
        c.eq(mcptest.dig(s, "health"), "ok", "check --json: health")
        fl = mcptest.dig(s, "in_flight")
        c.require(isinstance(fl, list) and len(fl) == 2, "two requests in flight: %r" % (fl,))
        by = in_flight_by_direction(fl)
        c.require(len(by.get("to_server", [])) == 1 and len(by.get("to_agent", [])) == 1,
                  "one request in flight each way: %r" % fl)
        up, down = by["to_server"][0], by["to_agent"][0]
        c.eq(up.get("method"), "tools/call", "the agent's request: method")
        c.eq(up.get("tool"), "trigger-sampling-request", "the agent's request: tool")
        c.eq(down.get("method"), "sampling/createMessage", "the server's request: method")
        c.eq(down.get("tool"), None, "the server's request: no tool")
        c.check(isinstance(down.get("age_ms"), (int, float)) and down["age_ms"] >= 0,
                "the server's request: age_ms %r" % down.get("age_ms"))
        server_pid = mcptest.dig(s, "pid")
        c.check(isinstance(server_pid, int) and server_pid > 0, "check --json: the server's pid")
        wstart = watch.wait_for(lambda e: e.get("event") == "request" and
                                e.get("phase") == "start" and
                                e.get("direction") == "to_agent", time.monotonic() + 20)
        c.eq(mcptest.dig(wstart, "method"), "sampling/createMessage",
             "watch --taps: the server's request starts")
        c.eq(mcptest.dig(wstart, "server"), "ev", "watch --taps: the server named from the socket")
        c.eq(mcptest.dig(wstart, "id"), down.get("id"), "watch --taps: the server's request's id")
        # The agent holds its answer: the tool has no result yet.
        c.check(client.poll() is None and not os.path.exists(out),
                "the tool waits for the agent's answer")
        with open(release, "w"):
            pass
        try:
            rc = client.wait(timeout=30)
        except subprocess.TimeoutExpired:
            c.fatal("the client still waits after its answer was released")
        c.eq(rc, 0, "the client's exit status")
        with open(out) as f:
            res = json.load(f)
        c.eq(res.get("error"), None, "the tool call's error")
        text = " ".join(str(x.get("text")) for x in mcptest.dig(res, "result", "content") or [])
        c.check("sampled by the test" in text, "the tool's result carries the agent's answer: %r"
                % text[:300])
        c.check("a tap test" in json.dumps(res.get("sampling")),
                "the agent got the server's request whole: %r" % res.get("sampling"))
        ends = {}
        for d in ("to_server", "to_agent"):
            ends[d] = r.wait_for(lambda o, d=d: o.get("event") == "request_end" and
                                 o.get("direction") == d, 15)
            c.eq(mcptest.dig(ends[d], "outcome"), "completed", "the ledger ends %s: %s"
                 % (d, json.dumps(ends[d])))
        c.eq(mcptest.dig(ends["to_agent"], "method"), "sampling/createMessage",
             "the ledger's to_agent end: method")
        c.eq(mcptest.dig(ends["to_agent"], "id"), down.get("id"), "the ledger's to_agent end: id")
        c.eq(mcptest.dig(ends["to_server"], "tool"), "trigger-sampling-request",
             "the ledger's to_server end: tool")
        wends = []
        for d in ("to_agent", "to_server"):
            wends.append(watch.wait_for(lambda e, d=d: e.get("event") == "request" and
                                        e.get("phase") == "end" and e.get("direction") == d,
                                        time.monotonic() + 10))
            c.eq(mcptest.dig(wends[-1], "outcome"), "completed", "watch: the %s request's end" % d)
        # The tool answers only after the agent's answer: the server's
        # request ends first.
        c.check(None not in wends and watch.events.index(wends[0]) < watch.events.index(wends[1]),
                "watch: sampling/createMessage ends before the tools/call it serves")
        c.check(isinstance(server_pid, int) and
                wait_until(lambda: not mcptest.pid_alive(server_pid), 15),
                "the server's process is gone after the agent left")
    finally:
        if c.failures:
            if watch is not None:
                c.attach(watch.describe(last=30))
            if r is not None:
                c.attach("tap socket lines:\n" + "\n".join(json.dumps(o) for o in r.lines[-30:]))
            with open(err_path, "rb") as f:
                c.attach("client stderr:\n" + f.read().decode(errors="replace")[-3000:])
        if watch is not None:
            watch.close()
        if r is not None:
            r.close()
        if client.poll() is None:
            mcptest.terminate(client)


@mcptest.case(rep)
def sigkill(c):
    ev = mcptest.everything_stdio_argv()
    sock = tmp("kill.sock")
    cfg = tap_config("ev", sock)
    a = Agent(tap_argv("ev", sock, *ev))
    c.require(a.initialize() is not None, "initialize through the tap")
    r = mcptest.TapReader(sock)
    snap = r.wait_for(lambda o: o.get("event") == "snapshot", 10)
    pid = mcptest.dig(snap, "tap", "server_pid")
    c.require(isinstance(pid, int) and pid > 0, "the snapshot names the server's pid: %r" % snap)
    a.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": "trigger-long-running-operation",
                       "arguments": {"duration": 60, "steps": 60},
                       "_meta": {"progressToken": "k"}}})
    c.require(r.wait_for(lambda o: o.get("event") == "progress", 20) is not None,
              "the call progresses")
    os.kill(pid, signal.SIGKILL)
    end = r.wait_for(lambda o: o.get("event") == "request_end" and o.get("id") == 7, 15)
    c.eq(mcptest.dig(end, "kind"), "connection_closed", "the ledger: that request's end")
    x = r.wait_for(lambda o: o.get("event") == "exchange" and o.get("id") == 7, 5)
    c.eq(mcptest.dig(x, "outcome"), "connection_closed", "the record: that exchange")
    c.eq(mcptest.dig(x, "delivered"), "unknown", "delivered")
    c.eq(mcptest.dig(x, "op"), "tools/call", "the exchange's op is the method")
    lv = r.wait_for(lambda o: o.get("event") == "liveness", 5)
    c.eq(mcptest.dig(lv, "state"), "unreachable", "liveness")
    rc = a.close()
    c.eq(rc, 128 + signal.SIGKILL, "the tap exits as its server did")
    got = mcptest.run_mcptop(["check", "-c", cfg, "--json"], timeout=30)
    s = mcptest.dig(got.json() or {}, "servers", 0)
    c.eq(mcptest.dig(s, "health"), "down", "a tap gone is down")
    c.check("no tap" in (mcptest.dig(s, "last_failure", "detail") or ""),
            "with the reason: %r" % mcptest.dig(s, "last_failure"))
    c.eq(got.rc, 1, "check exits 1")
    r.close()


@mcptest.case(rep)
def stuck_reader(c):
    ev = mcptest.everything_stdio_argv()
    sock = tmp("stuck.sock")
    a = Agent(tap_argv("ev", sock, *ev))
    c.require(a.initialize() is not None, "initialize through the tap")
    stuck = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stuck.connect(sock)
    n = 1500
    t0 = time.monotonic()
    missing = None
    for i in range(n):
        a.send({"jsonrpc": "2.0", "id": 100 + i, "method": "tools/call",
                "params": {"name": "echo", "arguments": {"message": "x" * 200}}})
        if a.answer(100 + i, 20) is None:
            missing = 100 + i
            break
    elapsed = time.monotonic() - t0
    c.check(missing is None, "every answer came while a reader was stuck (first missing %r)" % missing)
    mcptest.log("  %d calls through the tap with a stuck reader: %.2f s" % (n, elapsed))
    late = mcptest.TapReader(sock)
    snap = late.wait_for(lambda o: o.get("event") == "snapshot", 10)
    dropped = mcptest.dig(snap, "stats", "events_dropped")
    c.check(isinstance(dropped, int) and dropped > 0, "the stuck reader's lines were dropped "
            "and counted: %r" % dropped)
    # The stuck reader reads now: a gap line says how many it lost.
    stuck.settimeout(10)
    buf = b""
    deadline = time.monotonic() + 15
    while b'"event":"gap"' not in buf and time.monotonic() < deadline:
        try:
            chunk = stuck.recv(1 << 20)
        except socket.timeout:
            break
        if not chunk:
            break
        buf += chunk
    c.check(b'"event":"gap"' in buf, "a gap line once the reader reads")
    stuck.close()
    late.close()
    c.eq(a.close(), 0, "the tap exits 0 when the agent closes its stdin")


@mcptest.case(rep)
def tui_ledger_and_cancel(c):
    # The TUI on a tap: its row, the header's in-flight count, the ledger
    # in the detail pane, and C y cancelling the agent's call.
    if mcptest.tmux_bin() is None:
        raise mcptest.SetupError("tmux is needed")
    ev = mcptest.everything_stdio_argv()
    sock = tmp("tui.sock")
    cfg = tap_config("ev", sock)
    a = Agent(tap_argv("ev", sock, *ev))
    c.require(a.initialize() is not None, "initialize through the tap")
    a.send({"jsonrpc": "2.0", "id": "call-1", "method": "tools/call",
            "params": {"name": "trigger-long-running-operation",
                       "arguments": {"duration": 60, "steps": 60},
                       "_meta": {"progressToken": 5}}})
    tui = mcptest.Tui(["-c", cfg], cols=140, rows=30)
    tui.expect(c, [("the header counts the call in flight", lambda t: "in flight 1" in t),
                   ("the row shows the tap", lambda t: "tap" in (mcptest.table_row(t, "ev") or ""))],
               timeout=20, require=True)
    tui.keys("Enter")
    tui.expect(c, [("the detail pane has the ledger",
                    lambda t: "in flight through the tap (1" in t and
                    "tools/call trigger-long" in t and '"call-1"' in t)], timeout=10)
    tui.keys("C")
    tui.expect(c, [("C asks first", lambda t: "Cancel request" in t and "y: cancel" in t)],
               timeout=5)
    tui.keys("y")
    ans = a.answer("call-1", 15)
    c.eq(mcptest.dig(ans, "error", "code"), -32800, "the agent's answer after C y")
    tui.expect(c, [("the TUI says it was cancelled", lambda t: "cancelled (the agent was answered" in t),
                   ("nothing in flight any more", lambda t: "in flight 0" in t)], timeout=10)
    tui.close(c)
    # The server's tool goes on after the cancel (server-everything's does
    # not stop), so stdin's close is followed by SIGTERM: the tap exits as
    # its server did.
    c.is_in(a.close(), (0, 128 + signal.SIGTERM), "the tap's exit after stdin closes")


@mcptest.case(rep)
def probe(c):
    # --probe: pings of the tap's own while the agent is quiet, after
    # initialize was answered; their answers never reach the agent.
    ev = mcptest.everything_stdio_argv()
    sock = tmp("probe.sock")
    p = mcptest.spawn([mcptest.MCPTOP_BIN, "tap", "--probe", "--probe-interval", "300",
                       "--socket", sock, "--"] + ev, env=mcptest.mcptop_env(),
                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    lines = []

    def read():
        for line in p.stdout:
            lines.append(line)

    threading.Thread(target=read, daemon=True).start()
    p.stdin.write(rpc(INIT))
    p.stdin.flush()
    deadline = time.monotonic() + 20
    while not any(b'"id":1' in l for l in lines) and time.monotonic() < deadline:
        time.sleep(0.05)
    p.stdin.write(rpc({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    p.stdin.flush()
    r = mcptest.TapReader(sock)
    pinged = r.wait_for(lambda o: o.get("event") == "exchange" and o.get("op") == "ping" and
                        o.get("outcome") == "completed", 15)
    c.check(pinged is not None, "the tap pinged the quiet server and the ping completed")
    p.stdin.write(rpc({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
    p.stdin.flush()
    deadline = time.monotonic() + 15
    while not any(b'"id":2' in l for l in lines) and time.monotonic() < deadline:
        time.sleep(0.05)
    c.check(any(b'"id":2' in l for l in lines), "the agent's own request is answered")
    c.check(not any(b"mcptop-tap-ping" in l for l in lines),
            "no answer to the tap's pings reached the agent")
    p.stdin.close()
    try:
        c.eq(p.wait(timeout=15), 0, "the tap exits 0")
    except subprocess.TimeoutExpired:
        mcptest.terminate(p)
        c.fatal("the tap did not exit")
    r.close()


@mcptest.case(rep)
def agent_config_entry(c):
    # An agent's own entry that starts mcptop tap is read from that tap,
    # not started a second time.
    runtime = mcptest.tmpdir() / "runtime"
    runtime.mkdir(mode=0o700, exist_ok=True)
    marker = tmp("started-twice")
    cfg = mcptest.write_config({"gh": {"command": "mcptop", "args": [
        "tap", "--name", "github", "--", "touch", marker]}})
    got = mcptest.run_mcptop(["check", "-c", cfg, "--json"], timeout=30,
                             env={"XDG_RUNTIME_DIR": str(runtime)})
    s = mcptest.dig(got.json() or {}, "servers", 0)
    c.eq(mcptest.dig(s, "transport"), "tap", "the entry is a tap's server")
    c.eq(mcptest.dig(s, "tap"), str(runtime / "mcptop" / "tap-github.sock"),
         "read at the socket the tap publishes at")
    c.eq(mcptest.dig(s, "health"), "down", "no tap running: down")
    c.check(not os.path.exists(marker), "the agent's server was not started by the monitor")


@mcptest.case(rep)
def socket_dir_guarded(c):
    # --socket in a directory others may write into (not sticky) is not
    # used: another user could put their own socket there. The relay goes
    # on, unobserved, and says why. A sticky one (as /tmp) is used. And a
    # monitor or cancel never talks to a socket another user listens on.
    base = mcptest.tmpdir() / "sockdirs"
    base.mkdir(exist_ok=True)
    for mode, published in ((0o777, False), (0o770, False), (0o1777, True)):
        d = base / ("m%o" % mode)
        d.mkdir(exist_ok=True)
        os.chmod(d, mode)
        sock = str(d / "t.sock")
        err_path = tmp("sockdir-%o.err" % mode)
        with open(err_path, "wb") as err:
            p = mcptest.spawn(tap_argv("cat", sock, "cat"), env=mcptest.mcptop_env(),
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=err)
        try:
            p.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/x"}\n')
            p.stdin.flush()
            echoed = p.stdout.readline()
            c.eq(echoed, b'{"jsonrpc":"2.0","method":"notifications/x"}\n',
                 "mode %o: the relay passes bytes either way" % mode)
            if published:
                c.check(wait_until(lambda: os.path.exists(sock), 10),
                        "mode %o (sticky): the socket is published" % mode)
            else:
                said = lambda: open(err_path, "rb").read().decode(errors="replace")
                c.check(wait_until(lambda: "not publishing" in said(), 10),
                        "mode %o: the tap says it does not publish: %r" % (mode, said()[-300:]))
                c.check(("%s is writable by %s and not sticky" % (d, "others" if mode & 2
                                                                  else "its group")) in said(),
                        "mode %o: naming the directory and why: %r" % (mode, said()[-300:]))
                c.check("chmod go-w" in said(), "mode %o: and the fix" % mode)
                c.check(not os.path.exists(sock), "mode %o: no socket made" % mode)
        finally:
            p.stdin.close()
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                mcptest.terminate(p)
                c.fatal("the tap did not exit at its agent's EOF")
    py = "/usr/bin/python3"
    if os.getuid() != 0 or not os.access(py, os.X_OK):
        return      # another user's socket needs root (and a python they may run)
    # A socket another user (nobody) listens on, in a sticky directory
    # they can reach (this run's tmpdir is 0700).
    top = Path(tempfile.mkdtemp(prefix="mcptest-squat-"))
    os.chmod(top, 0o755)
    d = top / "sticky"
    d.mkdir()
    os.chmod(d, 0o1777)
    squat = str(d / "squat.sock")
    listener = ("import socket, sys, time\n"
                "s = socket.socket(socket.AF_UNIX)\n"
                "s.bind(sys.argv[1]); s.listen(8)\n"
                "print('up', flush=True)\n"
                "time.sleep(60)\n")
    q = subprocess.Popen([py, "-c", listener, squat], user=65534,
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        c.require(q.stdout.readline() == b"up\n", "another user listens at %s" % squat)
        got = mcptest.run_mcptop(["cancel", "--socket", squat, "--request", "1"], timeout=20)
        c.check(got.rc != 0, "cancel on another user's socket fails: %s" % got.describe())
        c.check("another user's" in got.stderr, "and says why: %r" % got.stderr[-300:])
        runtime = top / "runtime"
        runtime.mkdir(mode=0o755, exist_ok=True)
        (runtime / "mcptop").mkdir(mode=0o700, exist_ok=True)
        os.chmod(runtime / "mcptop", 0o1777)
        q2 = subprocess.Popen([py, "-c", listener,
                               str(runtime / "mcptop" / "tap-github.sock")], user=65534,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            c.require(q2.stdout.readline() == b"up\n", "another user listens at the tap's path")
            cfg = mcptest.write_config({"gh": {"command": "mcptop", "args": [
                "tap", "--name", "github", "--", "cat"]}})
            got = mcptest.run_mcptop(["check", "-c", cfg, "--json"], timeout=30,
                                     env={"XDG_RUNTIME_DIR": str(runtime)})
            s = mcptest.dig(got.json() or {}, "servers", 0)
            c.eq(mcptest.dig(s, "health"), "down", "a monitor does not read their socket")
            c.check("another user's" in str(mcptest.dig(s, "last_failure", "detail")),
                    "and says why: %r" % mcptest.dig(s, "last_failure"))
        finally:
            q2.kill()
            q2.wait(timeout=10)
    finally:
        q.kill()
        q.wait(timeout=10)
        shutil.rmtree(top, ignore_errors=True)


rep.finish()
