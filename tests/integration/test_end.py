#!/usr/bin/env python3
"""Endings (issue 5; DESIGN.md section 5) through `mcptop end` and `mcptop watch`.

- server-everything (Streamable HTTP): `end --json` -> terminated and settled;
  the session is really gone on the server (its own log, a POST with the old
  id, and the MCPTOP_TEST_REPEAT_DELETE hook: a second DELETE is rejected 400);
  the debug log never holds a full session id.
- the fault lab: one row per DELETE behaviour (405, 404, 500, never, late,
  reset, no session id) with its outcome, the lab's DELETE counts and the exit
  status; a half-open ending after a late initialize.
- stdio: the MCP shutdown sequence (stdin closed / SIGTERM / SIGKILL) by the
  teardown deadline, and no child left behind.
- `mcptop watch` on a fleet: SIGINT ends every session before exit.

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_end.py
The last line is "N passed, N failed"; the exit status is 1 on any failure.
"""

import atexit
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402
from mcptest import MISSING, dig  # noqa: E402
import faultlab  # noqa: E402

rep = mcptest.Reporter("endings: mcptop end and watch (issue 5)")


# Every child marker this run used. mcptop starts stdio children in their own
# process groups, so if mcptop itself dies (a crash, a sanitizer abort) they
# outlive it; at exit, whatever still carries one of our markers is killed.
_markers = []


def new_marker():
    m = "mcptest-end-" + uuid.uuid4().hex[:12]
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

FAKE_MJS = mcptest.TESTS_DIR / "stdio" / "fake.mjs"
NODE = mcptest._NODE

TEARDOWN = 1000          # ms, for the fault-lab rows
STDIO_TEARDOWN = 1500    # ms, for the stdio rows
SLACK_MS = 100           # an outcome is known within this much of the deadline
WATCH_EXIT_WAIT = 6.0    # s: default teardown 3 s + grace 1 s, plus a margin

OK_OUTCOMES = ("terminated", "not_allowed", "already_gone", "exited", "no_session",
               "stream_closed")
SESSION_RE = re.compile(r"Session initialized with ID: (\S+)")


# --------------------------------------------------------------------------
# shared fixtures (started lazily, stopped at exit by mcptest's cleanup)

_lab = None
_everything = None


def lab():
    global _lab
    if _lab is None:
        _lab = faultlab.FaultLab().start()
    return _lab


def everything():
    global _everything
    if _everything is None or not _everything.running():
        _everything = mcptest.everything_http()
    return _everything


def tag():
    return uuid.uuid4().hex[:12]


def endings_of(c, r):
    """The JSON lines `mcptop end --json` printed, as a list of objects."""
    out = []
    for line in r.stdout.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            c.check(False, "stdout line is not JSON: %r" % line)
            continue
        c.check(isinstance(obj, dict), "each stdout line is a JSON object: %r" % line)
        if isinstance(obj, dict):
            out.append(obj)
    return out


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_settled(c, e, what):
    """duration_ms and settled_ms present, settled_ms a number >= duration_ms."""
    d, s = e.get("duration_ms", MISSING), e.get("settled_ms", MISSING)
    c.check(is_num(d) and d >= 0, "%s: duration_ms is a number >= 0 (got %r)" % (what, d))
    ok = c.check(is_num(s), "%s: settled (settled_ms is a number, got %r)" % (what, s))
    if ok and is_num(d):
        c.check(s >= d, "%s: settled_ms %r >= duration_ms %r" % (what, s, d))
    if "settled" in e:
        c.eq(e["settled"], True, "%s: settled" % what)


def pgrep(marker):
    """PIDs of processes whose command line contains marker (never our own)."""
    r = subprocess.run(["pgrep", "-f", marker], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       timeout=10)
    me = os.getpid()
    return [int(p) for p in r.stdout.split() if int(p) != me]


def wait_no_process(marker, timeout=3.0):
    deadline = time.monotonic() + timeout
    while True:
        left = pgrep(marker)
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.1)


def ps_lines(pids):
    if not pids:
        return ""
    r = subprocess.run(["ps", "-o", "pid,ppid,stat,args", "-p", ",".join(map(str, pids))],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10)
    return r.stdout.decode(errors="replace")


def no_sanitizer(c, text, what="mcptop"):
    for marker in ("Sanitizer", "runtime error:"):
        c.check(marker not in text, "%s: no %r in stderr" % (what, marker))


def session_ids(srv):
    return SESSION_RE.findall(srv.output())


def post_with_session(url, sid, timeout=5.0):
    """POST tools/list carrying Mcp-Session-Id sid; the HTTP status."""
    body = json.dumps({"jsonrpc": "2.0", "id": 99, "method": "tools/list"}).encode()
    rq = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Mcp-Session-Id": sid,
        "MCP-Protocol-Version": "2025-11-25",
    })
    try:
        with urllib.request.urlopen(rq, timeout=timeout) as resp:
            resp.read()
            return resp.status
    except urllib.error.HTTPError as e:
        e.read()
        return e.code


# --------------------------------------------------------------------------
# server-everything


def everything_terminated(c):
    srv = everything()
    before = set(session_ids(srv))
    r = mcptest.run_mcptop(["end", "--json", srv.url], timeout=20)
    c.attach(r.describe())
    c.no_crash(r)
    c.eq(r.rc, 0, "exit code")
    ends = endings_of(c, r)
    c.require(len(ends) == 1, "one ending line (got %d)" % len(ends))
    e = ends[0]
    c.eq(e.get("outcome"), "terminated", "outcome")
    c.eq(e.get("half_open"), False, "half_open")
    c.check("http_status" not in e or 200 <= e["http_status"] < 300,
            "no error http_status on a terminated ending (got %r)" % e.get("http_status"))
    check_settled(c, e, "terminated")
    # The server saw the session start and end.
    new = [s for s in session_ids(srv) if s not in before]
    c.require(len(new) == 1, "server-everything issued exactly one session to mcptop (got %r)" % new)
    sid = new[0]
    deadline = time.monotonic() + 3
    while "Received session termination request for session %s" % sid not in srv.output() \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    c.check("Received session termination request for session %s" % sid in srv.output(),
            "server-everything logged the DELETE of session %s" % sid)
    # ... and no longer knows it: a request with the old id is refused
    # (server-everything answers 400 to an unknown session, the spec says 404).
    st = post_with_session(srv.url, sid)
    c.is_in(st, (400, 404), "HTTP status of a POST carrying the ended session's id")
    c.check(sid not in r.stdout and sid not in r.stderr, "the full session id is not printed")


def everything_repeat_delete_and_log(c):
    """MCPTOP_TEST_REPEAT_DELETE: the second DELETE of the same id is rejected
    with 400 (server-everything's answer to an id it no longer knows), so the
    first really ended the session; --log never holds a full session id."""
    srv = everything()
    help_r = mcptest.run_mcptop(["end", "--help"], timeout=10)
    c.require("MCPTOP_TEST_REPEAT_DELETE" in help_r.stdout,
              "`mcptop end --help` documents the MCPTOP_TEST_REPEAT_DELETE hook")
    before = set(session_ids(srv))
    log_path = mcptest.write_file("", suffix=".log")
    r = mcptest.run_mcptop(["end", "--json", "--log", log_path, srv.url], timeout=20,
                           env={"MCPTOP_TEST_REPEAT_DELETE": "1"})
    c.attach(r.describe())
    c.no_crash(r)
    ends = endings_of(c, r)
    c.require(len(ends) == 2, "two endings: the real one and the repeated DELETE (got %d)" % len(ends))
    first, second = ends
    c.eq(first.get("outcome"), "terminated", "first ending outcome")
    check_settled(c, first, "first ending")
    c.eq(second.get("outcome"), "rejected", "second DELETE of the same id: outcome")
    c.eq(second.get("http_status"), 400, "second DELETE of the same id: http_status")
    check_settled(c, second, "second ending")
    c.eq(r.rc, 1, "exit code (a rejected outcome is not ok)")
    new = [s for s in session_ids(srv) if s not in before]
    c.require(len(new) == 1, "server-everything issued exactly one session (got %r)" % new)
    sid = new[0]
    log_text = open(log_path, errors="replace").read()
    c.attach("--- debug log ---\n" + log_text[-3000:])
    c.check("DELETE" in log_text, "the debug log records the DELETEs")
    c.check(sid not in log_text, "the debug log never contains the full session id %s" % sid)
    c.check(sid not in r.stdout and sid not in r.stderr, "stdout/stderr never contain the full session id")


# --------------------------------------------------------------------------
# the fault lab


def lab_row(c, path, outcome, rc, status=None, kind=None, delivered=None, deletes=1,
            deleted=None, deadline_row=False):
    """`mcptop end --json --teardown 1000` against one lab endpoint (path gets a
    unique ?t= so its counts are its own)."""
    L = lab()
    sep = "&" if "?" in path else "?"
    key = "%s%st=%s" % (path, sep, tag())
    t0 = time.monotonic()
    r = mcptest.run_mcptop(["end", "--json", "--teardown", str(TEARDOWN), L.url(key)], timeout=20)
    wall = (time.monotonic() - t0) * 1000
    c.attach(r.describe())
    c.no_crash(r)
    ends = endings_of(c, r)
    c.require(len(ends) == 1, "one ending line (got %d)" % len(ends))
    e = ends[0]
    c.eq(e.get("outcome"), outcome, "outcome")
    c.eq(r.rc, rc, "exit code (outcome %s)" % outcome)
    if status is not None:
        c.eq(e.get("http_status"), status, "http_status")
    if kind is not None:
        c.eq(e.get("kind"), kind, "kind")
    if delivered is not None:
        c.eq(e.get("delivered"), delivered, "delivered")
    c.eq(e.get("half_open"), False, "half_open")
    check_settled(c, e, outcome)
    d = e.get("duration_ms")
    if deadline_row and is_num(d):
        c.check(TEARDOWN <= d <= TEARDOWN + SLACK_MS,
                "duration_ms %r within [%d, %d] (the teardown deadline)" % (d, TEARDOWN, TEARDOWN + SLACK_MS))
    elif is_num(d):
        c.check(d < TEARDOWN, "an answered DELETE ends before the deadline (duration_ms %r)" % d)
    c.check(wall < TEARDOWN + 5000, "mcptop end returned in %.0f ms" % wall)
    counts = L.endpoint_counts(key)
    c.attach("lab counts for %s: %s" % (key, json.dumps(counts)))
    if isinstance(deletes, tuple):
        c.is_in(counts.get("DELETE", 0), deletes, "the lab's DELETE count")
        c.is_in(counts.get("delete_with_session", 0), deletes, "the lab's DELETEs carrying a session id")
    else:
        c.eq(counts.get("DELETE", 0), deletes, "the lab's DELETE count")
        c.eq(counts.get("delete_with_session", 0), deletes, "the lab's DELETEs carrying a session id")
    if deleted is not None:
        c.eq(counts.get("sessions_deleted", 0), deleted, "the lab's sessions_deleted")
    return e


def lab_terminated(c):
    lab_row(c, "/healthy", "terminated", 0, deleted=1)


def lab_405_not_allowed(c):
    lab_row(c, "/delete405", "not_allowed", 0, status=405)


def lab_404_already_gone(c):
    lab_row(c, "/delete404", "already_gone", 0, status=404)


def lab_500_rejected(c):
    lab_row(c, "/delete500", "rejected", 1, status=500)


def lab_never_timed_out(c):
    lab_row(c, "/deletehang", "timed_out", 1, deadline_row=True)


def lab_late_timed_out(c):
    # answered after twice the deadline
    e = lab_row(c, "/deletedelay?ms=%d" % (2 * TEARDOWN), "timed_out", 1, deadline_row=True)
    c.check(e.get("settled_ms") is not None, "the late DELETE's ending settles")


def lab_reset_failed(c):
    # A reset on a reused (keep-alive) connection makes libcurl send the
    # request once more on a fresh one; the detail says "may have been
    # re-sent". So the lab sees one or two DELETEs here, never more.
    e = lab_row(c, "/deletereset", "failed", 1, kind="connection_failed", delivered="unknown",
                deletes=(1, 2))
    c.check(e.get("http_status") is None, "a transport failure carries no http_status")


def lab_no_session(c):
    e = lab_row(c, "/nosession", "no_session", 0, deletes=0)
    c.check(e.get("http_status") is None, "no_session carries no http_status")


def lab_repeat_delete_already_gone(c):
    """The hook against the lab: a second DELETE of the same id is answered
    404 (the lab no longer knows it): already_gone. Two DELETEs, one deleted."""
    L = lab()
    key = "/healthy?t=%s" % tag()
    r = mcptest.run_mcptop(["end", "--json", L.url(key)], timeout=20,
                           env={"MCPTOP_TEST_REPEAT_DELETE": "1"})
    c.attach(r.describe())
    c.no_crash(r)
    ends = endings_of(c, r)
    c.require(len(ends) == 2, "two endings (got %d)" % len(ends))
    c.eq([e.get("outcome") for e in ends], ["terminated", "already_gone"], "outcomes")
    c.eq(r.rc, 0, "exit code")
    counts = L.endpoint_counts(key)
    c.attach("lab counts: %s" % json.dumps(counts))
    c.eq(counts.get("delete_with_session"), 2, "DELETEs with the session id")
    c.eq(counts.get("sessions_deleted"), 1, "sessions deleted")


def lab_fleet_exit_status(c):
    """One run, several servers: exit 0 when every outcome is ok, 1 when one is not."""
    L = lab()
    t = tag()
    ok_servers = {
        "term": {"url": L.url("/healthy?t=%s" % t)},
        "no405": {"url": L.url("/delete405?t=%s" % t)},
        "gone404": {"url": L.url("/delete404?t=%s" % t)},
        "nosess": {"url": L.url("/nosession?t=%s" % t)},
    }
    cfg = mcptest.write_config(ok_servers)
    r = mcptest.run_mcptop(["end", "--json", "--teardown", str(TEARDOWN), "-c", cfg], timeout=20)
    c.attach(r.describe())
    c.no_crash(r)
    outs = {e.get("server"): e.get("outcome") for e in endings_of(c, r)}
    c.eq(outs, {"term": "terminated", "no405": "not_allowed", "gone404": "already_gone",
                "nosess": "no_session"}, "outcomes of the all-ok fleet")
    c.eq(r.rc, 0, "exit code when every outcome is ok")
    bad = dict(ok_servers)
    bad["err500"] = {"url": L.url("/delete500?t=%s-b" % t)}
    for k in ok_servers:
        bad[k] = {"url": ok_servers[k]["url"] + "-b"}
    cfg = mcptest.write_config(bad)
    r = mcptest.run_mcptop(["end", "--json", "--teardown", str(TEARDOWN), "-c", cfg], timeout=20)
    c.attach(r.describe())
    c.no_crash(r)
    outs = {e.get("server"): e.get("outcome") for e in endings_of(c, r)}
    c.eq(outs.get("err500"), "rejected", "the 500 server's outcome")
    c.eq(r.rc, 1, "exit code when one outcome (rejected) is not ok")


def lab_half_open(c):
    """Late initialize: the open deadline (500 ms) passes, the initialize is
    left to settle (timeout 5000 ms), its answer issues a session at ~1500 ms:
    mcptop ends that session too, as a half-open ending."""
    L = lab()
    key = "/lateinit?ms=1500&t=%s" % tag()
    cfg = mcptest.write_config({"late": {"url": L.url(key)}},
                               mcptop={"open_deadline_ms": 500, "timeout_ms": 5000})
    r = mcptest.run_mcptop(["end", "--json", "-c", cfg], timeout=30)
    c.attach(r.describe())
    c.no_crash(r)
    ends = endings_of(c, r)
    half = [e for e in ends if e.get("half_open") is True]
    c.require(len(half) == 1, "exactly one ending with half_open true (got %d of %d)" % (len(half), len(ends)))
    h = half[0]
    c.eq(h.get("server"), "late", "half-open ending's server")
    c.eq(h.get("outcome"), "terminated", "half-open ending's outcome (the lab accepts the DELETE)")
    check_settled(c, h, "half-open ending")
    for e in ends:
        c.is_in(e.get("outcome"), OK_OUTCOMES, "every outcome is ok")
    c.eq(r.rc, 0, "exit code")
    counts = L.endpoint_counts(key)
    c.attach("lab counts for %s: %s" % (key, json.dumps(counts)))
    c.eq(counts.get("sessions_issued"), 1, "sessions issued by the late initialize")
    c.eq(counts.get("delete_with_session"), 1, "the late session got a DELETE with its id")
    c.eq(counts.get("sessions_deleted"), 1, "the late session was deleted")


def lab_half_open_dial_is_timeout(c):
    """The dial itself failed by the open deadline: timeout, site connect;
    and check, too, ends the late session before it exits."""
    L = lab()
    key = "/lateinit?ms=1500&t=%s" % tag()
    cfg = mcptest.write_config({"late": {"url": L.url(key)}},
                               mcptop={"open_deadline_ms": 500, "timeout_ms": 5000})
    r = mcptest.run_mcptop(["check", "--json", "-c", cfg], timeout=30)
    c.attach(r.describe())
    c.no_crash(r)
    c.eq(r.rc, 1, "exit code (not ok)")
    doc = r.json()
    c.require(doc is not None, "check --json prints JSON (%s)" % r.json_error)
    s = dig(doc, "servers", 0)
    c.eq(dig(s, "last_failure", "kind"), "timeout", "last_failure.kind")
    c.eq(dig(s, "last_failure", "site"), "connect", "last_failure.site")
    c.eq(dig(s, "last_failure", "delivered"), "no", "last_failure.delivered (a failed dial)")
    c.eq(dig(s, "liveness", "state"), "unreachable", "liveness")
    # check leaves no session behind either: the late session is ended
    # (half-open) before it exits.
    counts = L.endpoint_counts(key)
    c.attach("lab counts for %s: %s" % (key, json.dumps(counts)))
    c.eq(counts.get("sessions_issued"), 1, "sessions issued by the late initialize")
    c.eq(counts.get("sessions_deleted"), 1, "the late session was deleted by check before it exited")


# --------------------------------------------------------------------------
# stdio


def fake_server(mode, marker, **extra):
    d = {"command": NODE, "args": [str(FAKE_MJS), "--mode=%s" % mode, "--tag=%s" % marker]}
    d.update(extra)
    return d


STDIO_ROWS = [
    # mode, outcome, signal (None: absent), exit_code (None: not checked)
    ("healthy", "exited", None, 0),
    ("ignore-stdin-eof", "signalled", signal.SIGTERM, None),
    ("ignore-sigterm", "killed", signal.SIGKILL, None),
]


def stdio_endings(c):
    marker = new_marker()
    servers = {"f-" + mode: fake_server(mode, marker) for mode, _, _, _ in STDIO_ROWS}
    cfg = mcptest.write_config(servers, mcptop={"timeout_ms": 5000, "open_deadline_ms": 10000})
    r = mcptest.run_mcptop(["end", "--json", "--teardown", str(STDIO_TEARDOWN), "-c", cfg], timeout=40)
    c.attach(r.describe())
    c.no_crash(r)
    ends = {e.get("server"): e for e in endings_of(c, r)}
    for mode, outcome, sig, code in STDIO_ROWS:
        e = ends.get("f-" + mode)
        if not c.check(e is not None, "an ending for f-%s" % mode):
            continue
        what = "f-%s" % mode
        c.eq(e.get("outcome"), outcome, "%s: outcome" % what)
        if sig is not None:
            c.eq(e.get("signal"), int(sig), "%s: signal" % what)
        if code is not None:
            c.eq(e.get("exit_code"), code, "%s: exit_code" % what)
        c.eq(e.get("half_open"), False, "%s: half_open" % what)
        check_settled(c, e, what)
        d = e.get("duration_ms")
        c.check(is_num(d) and d <= STDIO_TEARDOWN + SLACK_MS,
                "%s: duration_ms %r <= teardown %d + %d" % (what, d, STDIO_TEARDOWN, SLACK_MS))
    c.eq(r.rc, 1, "exit code (signalled and killed are not ok outcomes)")
    left = wait_no_process(marker)
    c.check(not left, "no fake.mjs child left after mcptop exited: %s" % ps_lines(left))


def stdio_exited_alone_exit_0(c):
    """A lone well-behaved child: exited, exit code 0 of `mcptop end`."""
    marker = new_marker()
    cfg = mcptest.write_config({"ok": fake_server("healthy", marker)})
    r = mcptest.run_mcptop(["end", "--json", "--teardown", str(STDIO_TEARDOWN), "-c", cfg], timeout=30)
    c.attach(r.describe())
    c.no_crash(r)
    ends = endings_of(c, r)
    c.require(len(ends) == 1, "one ending (got %d)" % len(ends))
    c.eq(ends[0].get("outcome"), "exited", "outcome")
    c.eq(r.rc, 0, "exit code")
    left = wait_no_process(marker)
    c.check(not left, "no child left: %s" % ps_lines(left))


def wrapped_server(marker, spawns, mode="ignore-sigterm"):
    """The fake behind `sh -c` as a wrapper that stays (the `; true`): the
    child is sh, the server a member of its process group."""
    line = "%s %s --mode=%s --tag=%s --spawn-log=%s; true" % (NODE, FAKE_MJS, mode, marker, spawns)
    return {"command": "sh", "args": ["-c", line]}


def stdio_wrapper_group_killed(c):
    """Issue 45, item 5: a server started through `sh -c` that ignores
    SIGTERM. sh goes on SIGTERM, the server only on SIGKILL: the ending
    is the group's (killed), settled when the last member went, and the
    detail names both; every server started is gone."""
    marker = new_marker()
    spawns = mcptest.tmpdir() / ("wrap-spawns-%s.log" % tag())
    cfg = mcptest.write_config({"wrapped": wrapped_server(marker, spawns)})
    r = mcptest.run_mcptop(["end", "--json", "--teardown", str(STDIO_TEARDOWN), "-c", cfg], timeout=30)
    c.attach(r.describe())
    c.no_crash(r)
    ends = endings_of(c, r)
    c.require(len(ends) == 1, "one ending (got %d)" % len(ends))
    e = ends[0]
    c.eq(e.get("outcome"), "killed", "outcome: the strongest step of the group")
    c.eq(e.get("signal"), int(signal.SIGKILL), "signal")
    c.eq(e.get("group_left"), 1, "one member of the group outlived the child")
    check_settled(c, e, "wrapped")
    d = e.get("detail") or ""
    try:
        pids = [int(x) for x in spawns.read_text().split()]
    except OSError:
        pids = []
    c.require(len(pids) == 1, "one server started (got %r)" % pids)
    c.check("the child (sh) exited on SIGTERM" in d, "the detail names the child: %r" % d)
    c.check("1 process of its group (pid %d, node) needed SIGKILL at " % pids[0] in d,
            "the detail names the member and its step: %r" % d)
    c.check(is_num(e.get("settled_ms")) and e["settled_ms"] >= STDIO_TEARDOWN * 2 / 3 - 50,
            "settled when the member went, after the SIGKILL at 2/3 of the teardown: %r"
            % e.get("settled_ms"))
    c.eq(r.rc, 1, "exit code (killed is not an ok outcome)")
    left = [p for p in pids if mcptest.pid_alive(p)]
    c.check(not left, "every server started is gone: %s" % ps_lines(left))
    left = wait_no_process(marker)
    c.check(not left, "no child left: %s" % ps_lines(left))


# --------------------------------------------------------------------------
# watch on a fleet, SIGINT


def watch_fleet_sigint(c):
    srv = everything()
    before = set(session_ids(srv))
    marker = new_marker()
    cfg = mcptest.write_config({"ev": {"url": srv.url}, "fk": fake_server("healthy", marker)})
    w = mcptest.Watch(["watch", "-c", cfg])
    try:
        deadline = time.monotonic() + 30
        for name in ("ev", "fk"):
            ev = w.wait_for(lambda e, n=name: e.get("event") == "liveness" and e.get("server") == n
                            and e.get("state") == "reachable", deadline)
            # wait_for skips what does not match: look in what was already read too
            if ev is None:
                ev = next((e for e in w.events if e.get("event") == "liveness" and e.get("server") == name
                           and e.get("state") == "reachable"), None)
            c.require(ev is not None, "%s reachable before SIGINT" % name)
        c.require(w.proc.poll() is None, "watch still running before SIGINT")
        t0 = time.monotonic()
        w.signal(signal.SIGINT)
        rc = w.wait_exit(WATCH_EXIT_WAIT)
        took = time.monotonic() - t0
        c.check(rc is not None, "watch exits within %.0f s of SIGINT (took %.1f s)" % (WATCH_EXIT_WAIT, took))
        c.eq(rc, 0, "exit code after SIGINT")
        w.close()
        no_sanitizer(c, w.stderr())
        for name, outcome in (("ev", "terminated"), ("fk", "exited")):
            endings = [e for e in w.events if e.get("event") == "ending" and e.get("server") == name]
            settled = [e for e in w.events if e.get("event") == "settled" and e.get("server") == name]
            c.check(len(endings) == 1, "%s: one ending line (got %d)" % (name, len(endings)))
            c.check(len(settled) == 1, "%s: one settled line (got %d)" % (name, len(settled)))
            if endings:
                c.eq(endings[0].get("outcome"), outcome, "%s: ending outcome" % name)
            if settled:
                c.eq(settled[0].get("outcome"), outcome, "%s: settled outcome" % name)
                check_settled(c, settled[0], "%s settled line" % name)
            if endings and settled:
                c.check(w.events.index(endings[0]) < w.events.index(settled[0]),
                        "%s: the ending line comes before its settled line" % name)
        new = [s for s in session_ids(srv) if s not in before]
        c.check(len(new) == 1, "server-everything issued one session to watch (got %r)" % new)
        for sid in new:
            c.check("Received session termination request for session %s" % sid in srv.output(),
                    "server-everything saw the DELETE of %s" % sid)
        left = wait_no_process(marker)
        c.check(not left, "no fake.mjs child left after watch exited: %s" % ps_lines(left))
    finally:
        if c.failures:
            c.attach(w.describe())
        w.close()


# --------------------------------------------------------------------------


def exit_says_what_was_not_ended(c):
    """A session whose DELETE is never answered is not ended by the
    bounded exit, and mcptop says so: watch on stderr and in a last
    {"event":"exit"} line, check on stderr and in its JSON, both exit 1; a
    session that was ended counts in sessions_ended."""
    L = lab()
    hang, ok = L.url("/deletehang?t=%s" % tag()), L.url("/healthy?t=%s" % tag())
    cfg = mcptest.write_config({"hang": {"url": hang, "teardown_ms": 700},
                                "fine": {"url": ok, "teardown_ms": 700}})
    w = mcptest.Watch(["watch", "-c", cfg])
    try:
        deadline = time.monotonic() + 20
        for name in ("hang", "fine"):
            ev = w.wait_for(lambda e, n=name: e.get("event") == "liveness" and
                            e.get("server") == n and e.get("state") == "reachable", deadline)
            if ev is None:
                ev = next((e for e in w.events if e.get("event") == "liveness" and
                           e.get("server") == name and e.get("state") == "reachable"), None)
            c.require(ev is not None, "%s reachable before SIGTERM" % name)
        w.signal(signal.SIGTERM)
        rc = w.wait_exit(WATCH_EXIT_WAIT)
        w.close()
        c.eq(rc, 1, "watch's exit status when a session was not ended")
        c.check("1 of 2 sessions were not ended" in w.stderr(),
                "stderr says how many: %r" % w.stderr()[-400:])
        last = w.events[-1] if w.events else {}
        c.eq(last.get("event"), "exit", "the last line is the exit event")
        c.eq(last.get("sessions_not_ended"), 1, "sessions_not_ended")
        c.eq(last.get("sessions_ended"), 1, "sessions_ended")
    finally:
        w.close()
    r = mcptest.run_mcptop(["check", "--json", "-c", cfg], timeout=30)
    c.attach(r.describe())
    c.eq(r.rc, 1, "check's exit status")
    c.check("1 of 2 sessions were not ended" in r.stderr, "check's stderr: %r" % r.stderr)
    c.eq(dig(r.json(), "sessions_not_ended"), 1, "check --json sessions_not_ended")


def ending_after_recovery_describes_itself(c):
    """A sessionless server whose first dials failed (nothing listened yet)
    and which then came up: the ending at exit says no session was issued,
    not the stale "(the dial failed: connect_refused)" of dials long since
    followed by one that worked."""
    port = mcptest.free_port()
    cfg = mcptest.write_config({"late": {"url": "http://127.0.0.1:%d/nosession" % port,
                                         "ping_interval_s": 1, "timeout_ms": 800,
                                         "open_deadline_ms": 1000}})
    w = mcptest.Watch(["watch", "-c", cfg])
    srv = None
    try:
        failed = w.wait_for(lambda e: e.get("event") == "exchange" and e.get("op") == "dial"
                            and e.get("outcome") == "connect_refused", time.monotonic() + 20)
        c.require(failed is not None, "a dial was refused while nothing listened")
        # The fault lab's sessionless endpoint comes up on that port.
        srv = mcptest.spawn([mcptest._NODE, str(mcptest.TESTS_DIR / "faultlab" / "server.mjs"),
                             "--port", str(port), "--other-port", "0",
                             "--parent-pid", str(os.getpid())])
        c.require(mcptest.wait_port(port, timeout=20, proc=srv), "the lab listens")
        back = w.wait_for(lambda e: e.get("event") == "exchange" and e.get("op") == "dial"
                          and e.get("outcome") == "completed", time.monotonic() + 20)
        c.require(back is not None, "a later dial completed")
        w.signal(signal.SIGTERM)
        c.check(w.wait_exit(WATCH_EXIT_WAIT) is not None, "watch exits")
        ends = [e for e in w.events if e.get("event") == "ending"]
        c.require(len(ends) == 1, "one ending (%d)" % len(ends))
        c.eq(ends[0].get("outcome"), "no_session", "outcome")
        c.check("dial failed" not in (ends[0].get("detail") or ""),
                "the detail describes this ending: %r" % ends[0].get("detail"))
    finally:
        w.close()
        if srv is not None:
            mcptest.terminate(srv)
        if c.failures:
            c.attach(w.describe(last=15))


def lost_session_is_not_half_open(c):
    """A session the server forgot (400 "No valid session ID", then 404) was
    open: the ending mcptop gives it is an ending like any other, never
    marked half_open (that is for what a failed dial leaves)."""
    L = lab()
    key = "/forget?after=2&mode=400&t=%s" % tag()
    cfg = mcptest.write_config({"lost": {"url": L.url(key), "ping_interval_s": 1}})
    w = mcptest.Watch(["watch", "-c", cfg])
    try:
        lost = w.wait_for(lambda e: e.get("event") == "ending" and e.get("server") == "lost",
                          time.monotonic() + 30)
        c.require(lost is not None, "the forgotten session is ended while watch runs")
        c.eq(lost.get("half_open"), False, "a lost session's ending is not half-open")
        # The redial completes before the stop (a dial cut short by the stop
        # leaves a half-open session, rightly).
        back = w.wait_for(lambda e: e.get("event") == "exchange" and e.get("op") == "dial"
                          and e.get("outcome") == "completed", time.monotonic() + 30)
        c.require(back is not None, "the server is dialed again")
        w.signal(signal.SIGTERM)
        c.check(w.wait_exit(WATCH_EXIT_WAIT) is not None, "watch exits")
        for e in w.events:
            if e.get("event") == "ending":
                c.eq(e.get("half_open"), False, "no ending here is half-open: %r" % e)
    finally:
        w.close()
        if c.failures:
            c.attach(w.describe(last=20))
    counts = L.endpoint_counts(key)
    c.attach("lab counts for %s: %s" % (key, json.dumps(counts)))
    c.eq(counts.get("sessions_ended"), counts.get("sessions_issued"),
         "every session issued got a DELETE")


SESSION_LOOP_S = 12.0       # how long the session-loss loop is watched
SESSION_LOOP_MAX_DIALS = 6  # 2 at once, then backoffs of about 1, 2, 4 s (12 before)


def session_lost_after_every_dial(c):
    """An HTTP server that forgets every session at its first ping (issue 45,
    item 4): from the second loss in a row within the crash window of its
    dial, each counts toward the backoff (a few dials in 12 s, not one a
    second), health stays down with the crash loop's words, and every
    session issued still gets its DELETE."""
    L = lab()
    key = "/forget?after=2&times=1000&mode=404&t=%s" % tag()
    cfg = mcptest.write_config({"forgetful": {"url": L.url(key), "ping_interval_s": 1}})
    w = mcptest.Watch(["watch", "-c", cfg])
    try:
        t0 = time.monotonic()
        w.wait_for(lambda e: False, t0 + SESSION_LOOP_S)   # every line kept
        dials = [e for e in w.events if e.get("event") == "exchange" and e.get("op") == "dial"
                 and e.get("outcome") == "completed"]
        c.check(3 <= len(dials) <= SESSION_LOOP_MAX_DIALS,
                "a few dials in %.0f s (3 <= N <= %d): %d"
                % (SESSION_LOOP_S, SESSION_LOOP_MAX_DIALS, len(dials)))
        health = [e for e in w.events if e.get("event") == "health"]
        words = [e.get("state") for e in health]
        loop = [i for i, e in enumerate(health) if "crash loop" in (e.get("reason") or "")]
        c.require(loop, "health names the crash loop: %r" % [e.get("reason") for e in health])
        c.eq(health[loop[0]].get("state"), "down", "the crash loop is down")
        c.check("ok" not in words[loop[0]:], "never ok after it: %r" % words)
        c.check("session was lost" in health[loop[0]].get("reason"),
                "the words say what was lost: %r" % health[loop[0]].get("reason"))
        w.signal(signal.SIGTERM)
        c.check(w.wait_exit(WATCH_EXIT_WAIT) is not None, "watch exits")
    finally:
        w.close()
        if c.failures:
            c.attach(w.describe(last=20))
    counts = L.endpoint_counts(key)
    c.eq(counts.get("sessions_ended"), counts.get("sessions_issued"),
         "every session issued got a DELETE (%r of %r)"
         % (counts.get("sessions_ended"), counts.get("sessions_issued")))


def main():
    try:
        mcptest.require_mcptop()
        mcptest.require_node_modules()
    except mcptest.SetupError as e:
        print("setup: %s" % e)
        rep.failed += 1
        rep.finish()
    rep.run("everything_terminated", everything_terminated)
    rep.run("everything_repeat_delete_and_log", everything_repeat_delete_and_log)
    rep.run("lab_terminated", lab_terminated)
    rep.run("lab_405_not_allowed", lab_405_not_allowed)
    rep.run("lab_404_already_gone", lab_404_already_gone)
    rep.run("lab_500_rejected", lab_500_rejected)
    rep.run("lab_never_timed_out", lab_never_timed_out)
    rep.run("lab_late_timed_out", lab_late_timed_out)
    rep.run("lab_reset_failed", lab_reset_failed)
    rep.run("lab_no_session", lab_no_session)
    rep.run("lab_repeat_delete_already_gone", lab_repeat_delete_already_gone)
    rep.run("lab_fleet_exit_status", lab_fleet_exit_status)
    rep.run("lab_half_open", lab_half_open)
    rep.run("lab_half_open_dial_is_timeout", lab_half_open_dial_is_timeout)
    rep.run("stdio_endings", stdio_endings)
    rep.run("stdio_exited_alone_exit_0", stdio_exited_alone_exit_0)
    rep.run("stdio_wrapper_group_killed", stdio_wrapper_group_killed)
    rep.run("watch_fleet_sigint", watch_fleet_sigint)
    rep.run("exit_says_what_was_not_ended", exit_says_what_was_not_ended)
    rep.run("ending_after_recovery_describes_itself", ending_after_recovery_describes_itself)
    rep.run("lost_session_is_not_half_open", lost_session_is_not_half_open)
    rep.run("session_lost_after_every_dial", session_lost_after_every_dial)
    rep.finish()


if __name__ == "__main__":
    main()
