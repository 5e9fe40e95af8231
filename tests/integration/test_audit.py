#!/usr/bin/env python3
"""The session-hygiene audit (issue 32): `mcptop audit`.

- the fault lab, one habit per path (frees or not after DELETE, each expiry
  signal 404 / 400 / 200 + -32600 / served, a missing id served, ids minted
  on refused requests, two replicas without affinity, ping -32601, DELETE
  405, a GET stream, no session at all, modern-only and dual-era servers,
  2024-11-05 HTTP+SSE, a refused port): each check's verdict, the exit
  status, and for every endpoint the lab's own count of live sessions
  after the audit: zero, except where the server never frees (then exactly
  what the audit says it could not end);
- server-everything over Streamable HTTP and in its `sse` mode: the
  verdicts, and by the server's own log every session the audit opened is
  gone;
- stdio (tests/stdio/fake.mjs): shutdown on stdin close / SIGTERM /
  SIGKILL, ping, versions, era, no child left;
- the table (a glyph and a word per cell, the legend), usage errors, and
  SIGINT mid-check: exit 130 with every session ended.

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_audit.py
The last line is "N passed, N failed"; the exit status is 1 on any failure.
"""

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402
from mcptest import MISSING, dig  # noqa: E402
import faultlab  # noqa: E402

rep = mcptest.Reporter("audit: mcptop audit, the session-hygiene report (issue 32)")

FAKE_MJS = mcptest.TESTS_DIR / "stdio" / "fake.mjs"
NODE = mcptest._NODE
CHECKS = ("delete", "freed", "unknown_session", "missing_session", "probe_leak", "session_ids",
          "ping", "stream", "affinity", "versions", "era", "shutdown")
HTTP_NA = ("shutdown",)
SESSION_CHECKS = ("delete", "freed", "unknown_session", "missing_session", "stream", "affinity")

_lab = None


def lab():
    global _lab
    if _lab is None:
        _lab = faultlab.FaultLab().start()
    return _lab


def audit_json(c, args, timeout=60.0, rc=None):
    r = mcptest.run_mcptop(["audit", "--json"] + list(args), timeout=timeout)
    c.no_crash(r)
    c.attach(r.describe())
    if rc is not None:
        c.eq(r.rc, rc, "exit status")
    try:
        doc = r.json()
    except (ValueError, AttributeError):
        doc = None
    c.require(isinstance(doc, dict), "stdout is one JSON object")
    return r, doc


def by_name(doc):
    return {s.get("name"): s for s in doc.get("servers", [])}


def verdict(s, check):
    return dig(s, "checks", check, "verdict")


def sessions(s):
    return dig(s, "audit_sessions", "opened"), dig(s, "audit_sessions", "ended")


# --------------------------------------------------------------------------
# the fault lab: one habit per path

# name -> (path, {check: verdict}, clean)
HABITS = {
    "healthy": ("/healthy", {"delete": "terminated", "freed": "yes", "unknown_session": "spec",
                             "missing_session": "spec", "probe_leak": "none", "ping": "supported",
                             "stream": "none", "affinity": "stable", "versions": "negotiates",
                             "era": "legacy", "shutdown": "n/a", "session_ids": "unique"},
                True),
    "nofree": ("/healthy?free=0", {"delete": "terminated", "freed": "no"}, False),
    "exp400": ("/healthy?expired=400", {"freed": "other", "unknown_session": "nonstandard"}, False),
    "exprpc200": ("/healthy?expired=rpc200", {"freed": "other",
                                              "unknown_session": "nonstandard"}, False),
    "expserve": ("/healthy?expired=serve", {"unknown_session": "accepted", "freed": "no"}, False),
    "missserve": ("/healthy?missing=serve", {"missing_session": "accepted", "freed": "yes"}, True),
    "mint": ("/healthy?mint=1", {"probe_leak": "leaks", "delete": "terminated"}, False),
    "replicas": ("/healthy?replicas=2", {"affinity": "broken", "ping": "supported",
                                         "freed": "yes"}, False),
    # strict round robin: notifications/initialized already misses; no check
    # can open a session, which is the affinity verdict, not an error of each
    "roundrobin": ("/healthy?replicas=2&rr=1", {"affinity": "broken", "ping": "n/a",
                                                "delete": "n/a", "freed": "n/a",
                                                "unknown_session": "n/a",
                                                "missing_session": "n/a",
                                                "stream": "n/a"}, False),
    # one session at a time: each check ends its sessions before the next
    # opens one, versions too (it used to hold four at once: "accepts 1")
    "onesession": ("/healthy?maxsessions=1", {"versions": "negotiates", "delete": "terminated",
                                             "affinity": "stable", "ping": "supported"}, True),
    # ...and one that cannot be ended: the refusals it causes are no verdict
    "onesession405": ("/healthy?maxsessions=1&delete=405", {"versions": "n/a", "ping": "n/a",
                                                           "affinity": "n/a"}, True),
    "noping": ("/healthy?ping=unsupported", {"ping": "unsupported", "affinity": "stable"}, False),
    "del405": ("/delete405", {"delete": "not_allowed", "freed": "n/a"}, True),
    "stream": ("/listchanged", {"stream": "opens"}, True),
    "nosession": ("/nosession", {"delete": "n/a", "freed": "n/a", "unknown_session": "n/a",
                                 "missing_session": "n/a", "ping": "supported",
                                 "affinity": "stable", "probe_leak": "none",
                                 "session_ids": "n/a"}, True),
    "modern": ("/probe/discover", {"era": "modern", "probe_leak": "none", "ping": "n/a",
                                   "delete": "n/a", "versions": "n/a"}, True),
    "dual": ("/healthy?era=dual", {"era": "dual", "delete": "terminated"}, True),
    "legacysse": ("/legacysse", {"era": "legacy_sse", "ping": "supported", "affinity": "stable",
                                 "versions": "negotiates", "delete": "n/a",
                                 "probe_leak": "n/a"}, True),
}
# Where the server keeps sessions the audit cannot end (it ended them as the
# spec lets a client; the server did not free them).
NEVER_FREES = ("nofree", "del405", "onesession405")


@mcptest.case(rep)
def lab_habits(c):
    """Each habit's verdicts; the lab holds no session the audit says it ended."""
    L = lab()
    servers = {n: {"url": L.url(p)} for n, (p, _, _) in HABITS.items()}
    servers["refused"] = {"url": "http://127.0.0.1:%d/mcp" % mcptest.free_port()}
    cfg = mcptest.write_config(servers)
    r, doc = audit_json(c, ["-c", cfg, "--timeout", "8000"], timeout=90, rc=1)
    got = by_name(doc)
    counts = L.counts().get("endpoints", {})
    for name, (path, want, clean) in HABITS.items():
        s = got.get(name)
        if not c.check(isinstance(s, dict), "%s: in the report" % name):
            continue
        c.eq(s.get("transport"), "sse" if name == "legacysse" else "http", "%s: transport" % name)
        for check, v in want.items():
            c.eq(verdict(s, check), v, "%s: %s" % (name, check))
        for check in CHECKS:
            k = dig(s, "checks", check)
            c.check(isinstance(k, dict) and k.get("verdict") and k.get("grade") and
                    isinstance(k.get("spec"), str) and isinstance(k.get("evidence"), dict),
                    "%s: %s has verdict, grade, spec, evidence (%r)" % (name, check, k))
        c.eq(s.get("clean"), clean, "%s: clean" % name)
        opened, ended = sessions(s)
        ep = counts.get(path, {})
        if name == "legacysse":
            c.eq(ep.get("sse_sessions_opened"), opened, "%s: streams the lab saw opened" % name)
            c.eq(ep.get("sse_sessions_closed"), opened, "%s: all closed" % name)
            continue
        c.eq(ep.get("sessions_issued", 0), opened, "%s: sessions the lab issued == opened" % name)
        c.eq(ep.get("sessions_ended", 0), ep.get("sessions_issued", 0),
             "%s: a DELETE for every session id the lab issued" % name)
        # The lab's own count of live sessions, after the audit.
        live = ep.get("sessions_live", MISSING)
        if name in NEVER_FREES:
            c.check(live > 0, "%s: the lab keeps sessions (%r)" % (name, live))
            c.eq(live, opened - ended, "%s: lab live == what the audit could not end" % name)
        else:
            c.eq(live, 0, "%s: the lab holds no live session after the audit" % name)
            c.eq(ended, opened, "%s: every session opened was ended" % name)
    # the habits' evidence, where it carries the number
    c.eq(dig(got, "mint", "checks", "probe_leak", "evidence", "minted"), 4,
         "mint: GET, HEAD, OPTIONS and a malformed POST each minted an id")
    c.eq(dig(got, "replicas", "checks", "affinity", "evidence", "not_found"), 2,
         "replicas: every fourth request of the session 404 (2 of 10)")
    c.eq(counts.get("/healthy?maxsessions=1", {}).get("refused_initializes", 0), 0,
         "onesession: no initialize of the audit was refused for a session it held")
    c.check("could not end" in (dig(got, "onesession405", "checks", "ping", "detail") or ""),
            "onesession405: the n/a says why: %r" % dig(got, "onesession405", "checks", "ping"))
    rr = dig(got, "roundrobin", "checks", "affinity") or {}
    c.eq(dig(rr, "evidence", "after_initialize", "status"), 404,
         "roundrobin: the evidence is the 404 right after initialize")
    c.check("just issued" in (rr.get("detail") or ""), "roundrobin: the detail says so: %r" % rr)
    c.check(not [k for k, v in (dig(got, "roundrobin", "checks") or {}).items()
                 if isinstance(v, dict) and v.get("verdict") == "error"],
            "roundrobin: no check is an error: %r" % dig(got, "roundrobin", "checks"))
    c.eq(dig(got, "noping", "checks", "affinity", "evidence", "method"), "tools/list",
         "noping: affinity uses tools/list when ping is unsupported")
    c.eq(dig(got, "del405", "checks", "delete", "evidence", "status"), 405, "del405: status 405")
    c.eq(dig(got, "exp400", "checks", "unknown_session", "evidence", "status"), 400,
         "exp400: status 400")
    c.eq(dig(got, "exprpc200", "checks", "unknown_session", "evidence", "error_code"), -32600,
         "exprpc200: 200 with -32600")
    acc = dig(got, "healthy", "checks", "versions", "evidence", "accepted")
    c.eq(acc, ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"], "healthy: versions accepted")
    c.eq(dig(got, "healthy", "checks", "versions", "evidence", "newest"), "2025-11-25",
         "healthy: the newest")
    c.eq(dig(got, "healthy", "checks", "versions", "evidence", "answers", "2099-01-01"),
         "2025-11-25", "healthy: an unknown revision is answered with one it speaks")
    # the server nothing listens on
    s = got.get("refused", {})
    c.eq(verdict(s, "era"), "error", "refused: era error")
    c.eq(verdict(s, "delete"), "error", "refused: the rest not audited (error)")
    c.eq(verdict(s, "shutdown"), "n/a", "refused: shutdown n/a (HTTP)")
    c.eq(dig(s, "clean"), False, "refused: not clean")
    c.eq(dig(doc, "summary", "servers"), len(HABITS) + 1, "summary.servers")
    c.eq(dig(doc, "summary", "clean"), sum(1 for _, _, k in HABITS.values() if k), "summary.clean")
    # no session id in the report
    for sid in re.findall(r"lab-\d+-[0-9a-f]{16}", json.dumps(L.counts())):
        c.check(sid not in r.stdout and sid not in r.stderr, "no session id in the report")
        break


@mcptest.case(rep)
def reused_session_id(c):
    """A server that gives every initialize one Mcp-Session-Id: each session
    the audit opened is counted (not the one id) and ended, and the reuse is
    its own finding (issue 41, item 5)."""
    L = lab()
    path = "/healthy?sameid=1&tag=" + uuid.uuid4().hex[:8]
    cfg = mcptest.write_config({"sameid": {"url": L.url(path)}})
    r, doc = audit_json(c, ["-c", cfg, "--timeout", "8000"], timeout=90, rc=1)
    s = by_name(doc).get("sameid", {})
    ep = L.counts().get("endpoints", {}).get(path, {})
    issued = ep.get("sessions_issued", 0)
    c.check(issued > 2, "the lab issued sessions under one id: %r" % issued)
    opened, ended = sessions(s)
    c.eq(opened, issued, "SESSIONS counts each session the audit opened, not distinct ids")
    c.eq(ended, opened, "every one was ended")
    c.eq(ep.get("sessions_ended"), issued, "the lab saw a DELETE for each")
    c.eq(ep.get("sessions_live"), 0, "the lab holds no session after the audit")
    c.eq(verdict(s, "session_ids"), "reused", "session_ids: reused")
    c.eq(dig(s, "checks", "session_ids", "grade"), "bad", "a bad grade")
    c.eq(dig(s, "checks", "session_ids", "evidence", "distinct_ids"), 1, "one distinct id")
    c.eq(dig(s, "checks", "session_ids", "evidence", "reused"), ep.get("reused_ids"),
         "the reuses, as the lab counted them")
    c.eq(s.get("clean"), False, "not spec-clean")
    t = mcptest.run_mcptop(["audit", "-c", cfg, "--timeout", "8000"], timeout=90)
    row = [ln for ln in t.stdout.splitlines() if ln.startswith("sameid")]
    want = "%d/%d" % (issued, issued)    # the same audit again: as many
    c.check(len(row) == 1 and row[0].rstrip().endswith(want) and "reused" in row[0],
            "the table: SESSIONS %s and session_ids reused: %r" % (want, row))


@mcptest.case(rep)
def table_and_exit_0(c):
    """A clean server: exit 0; the table has a column per check, a glyph and a word, a legend."""
    url = lab().url("/healthy?tag=" + uuid.uuid4().hex[:8])
    r = mcptest.run_mcptop(["audit", url], timeout=30)
    c.no_crash(r)
    c.attach(r.describe())
    c.eq(r.rc, 0, "exit status of a spec-clean server")
    lines = r.stdout.splitlines()
    c.require(len(lines) >= 2, "a header and a row")
    for check in CHECKS:
        c.check(check.upper() in lines[0], "header has %s" % check.upper())
    c.check("SESSIONS" in lines[0], "header has SESSIONS")
    for cell in ("\u2713 terminated", "\u2713 yes", "\u2713 spec", "\u2713 none", "\u2713 supported",
                 "\u2713 stable", "\u2713 2025-11-25", "\u2713 legacy", "\u2014 n/a", "12/12"):
        c.check(cell in lines[1], "row has %r" % cell)
    c.check("as the spec says" in r.stdout and "not applicable" in r.stdout, "the legend")
    r2 = mcptest.run_mcptop(["audit", lab().url("/delete405?tag=x")], timeout=30)
    c.eq(r2.rc, 0, "DELETE 405 is allowed by the spec: still clean")
    c.check("\u25d0 not_allowed" in r2.stdout and "delete: DELETE answered 405" in r2.stdout,
            "a note's glyph and its detail line")
    r3 = mcptest.run_mcptop(["audit", lab().url("/healthy?expired=400&tag=y")], timeout=30)
    c.eq(r3.rc, 1, "exit 1 when a server is not spec-clean")
    c.check("\u2717 nonstandard" in r3.stdout and "unknown_session:" in r3.stdout,
            "a bad cell and its detail")


@mcptest.case(rep)
def parallel_and_server(c):
    """--server picks servers; --parallel runs several at once with the same verdicts."""
    L = lab()
    t = uuid.uuid4().hex[:8]
    cfg = mcptest.write_config({
        "a": {"url": L.url("/healthy?p=a" + t)},
        "b": {"url": L.url("/healthy?replicas=2&p=b" + t)},
        "c": {"url": L.url("/healthy?mint=1&p=c" + t)},
        "skipped": {"url": L.url("/healthy?p=s" + t)},
    })
    r, doc = audit_json(c, ["-c", cfg, "--parallel", "3", "-s", "a", "--server", "b",
                            "--server", "c"], rc=1)
    got = by_name(doc)
    c.eq(sorted(got), ["a", "b", "c"], "only the servers named")
    c.eq(verdict(got.get("b", {}), "affinity"), "broken", "b: affinity broken")
    c.eq(verdict(got.get("c", {}), "probe_leak"), "leaks", "c: leaks")
    c.eq(dig(got, "a", "clean"), True, "a: clean")
    counts = L.counts().get("endpoints", {})
    for name in ("a", "b", "c"):
        key = [k for k in counts if k.endswith("p=%s%s" % (name, t))]
        c.require(len(key) == 1, "%s: the lab saw it" % name)
        c.eq(counts[key[0]].get("sessions_live"), 0, "%s: no live session left" % name)
    c.eq([k for k in counts if k.endswith("p=s" + t)], [], "the server not named: never reached")


# --------------------------------------------------------------------------
# the reference servers

SE_INIT = re.compile(r"Session initialized with ID: (\S+)")
SE_CLOSED = re.compile(r"Transport closed for session (\S+?),")
SSE_OPEN = re.compile(r"Client Connected:\s+(\S+)")
SSE_CLOSED = re.compile(r"Client Disconnected:\s+(\S+)")


def wait_log(srv, pred, timeout=5.0):
    deadline = time.monotonic() + timeout
    while True:
        text = srv.output()
        if pred(text) or time.monotonic() >= deadline:
            return text
        time.sleep(0.1)


@mcptest.case(rep)
def reference_streamable_http(c):
    """server-everything: the verdicts, and by its own log no session of the audit's is left."""
    with mcptest.everything_http() as srv:
        r, doc = audit_json(c, [srv.url], rc=1)
        s = doc["servers"][0]
        want = {"delete": "terminated", "freed": "other", "unknown_session": "nonstandard",
                "missing_session": "spec", "probe_leak": "none", "ping": "supported",
                "stream": "opens", "affinity": "stable", "versions": "negotiates",
                "era": "legacy", "shutdown": "n/a"}
        for check, v in want.items():
            c.eq(verdict(s, check), v, "server-everything: %s" % check)
        c.eq(dig(s, "checks", "unknown_session", "evidence", "status"), 400,
             "server-everything answers an unknown id 400")
        opened, ended = sessions(s)
        c.check(opened >= 10 and ended == opened, "every session ended (%r/%r)" % (ended, opened))
        text = wait_log(srv, lambda t: set(SE_INIT.findall(t)) <= set(SE_CLOSED.findall(t)))
        made, closed = set(SE_INIT.findall(text)), set(SE_CLOSED.findall(text))
        c.eq(len(made), opened, "the server's log: sessions initialized == audit opened")
        c.eq(sorted(made - closed), [], "the server's log: every session closed")
        for sid in made:
            c.check(sid not in r.stdout, "no session id in the report")


@mcptest.case(rep)
def reference_sse(c):
    """server-everything in sse mode: legacy_sse (HTTP+SSE); session checks n/a; every stream closed."""
    with mcptest.everything_sse() as srv:
        r, doc = audit_json(c, [srv.url], rc=0)
        s = doc["servers"][0]
        c.eq(s.get("transport"), "sse", "transport sse")
        c.eq(dig(s, "checks", "era", "evidence", "transport"), "sse", "era evidence: sse")
        for check, v in {"era": "legacy_sse", "ping": "supported", "affinity": "stable",
                         "versions": "negotiates"}.items():
            c.eq(verdict(s, check), v, "sse: %s" % check)
        for check in ("delete", "freed", "unknown_session", "missing_session", "probe_leak",
                      "stream", "shutdown"):
            c.eq(verdict(s, check), "n/a", "sse: %s n/a" % check)
        opened, ended = sessions(s)
        c.check(opened >= 3 and ended == opened, "every stream ended (%r/%r)" % (ended, opened))
        text = wait_log(srv, lambda t: set(SSE_OPEN.findall(t)) <= set(SSE_CLOSED.findall(t)))
        made, gone = set(SSE_OPEN.findall(text)), set(SSE_CLOSED.findall(text))
        c.eq(len(made), opened, "the server's log: clients connected == audit opened")
        c.eq(sorted(made - gone), [], "the server's log: every client disconnected")


# --------------------------------------------------------------------------
# stdio

def is_ms(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0


def pgrep(marker):
    r = subprocess.run(["pgrep", "-f", marker], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                       timeout=10)
    return [int(p) for p in r.stdout.split() if int(p) != os.getpid()]


@mcptest.case(rep)
def stdio_shutdown(c):
    """How a child ends: stdin / sigterm / sigkill; no child left."""
    marker = "mcptest-audit-" + uuid.uuid4().hex[:12]
    modes = {"ok": "healthy", "term": "ignore-stdin-eof", "kill": "ignore-sigterm"}
    # Each audit starts 9 children (5 at once for versions): generous
    # request bounds so a loaded machine is not a verdict; the healthy one
    # has the default teardown (a second to exit after its stdin closes),
    # the others never exit by themselves, so theirs can be short.
    cfg = mcptest.write_config({
        n: {"command": NODE, "args": [str(FAKE_MJS), "--mode=" + m, "--version=2025-11-25",
                                      "--tag=" + marker],
            "teardown_ms": 3000 if n == "ok" else 900, "timeout_ms": 30000}
        for n, m in modes.items()})
    r, doc = audit_json(c, ["-c", cfg, "--parallel", "3", "--timeout", "45000"], timeout=240,
                        rc=1)
    got = by_name(doc)
    c.eq(verdict(got.get("ok", {}), "shutdown"), "stdin", "healthy: exits on stdin close")
    c.eq(verdict(got.get("term", {}), "shutdown"), "sigterm", "ignores stdin EOF: needs SIGTERM")
    c.eq(verdict(got.get("kill", {}), "shutdown"), "sigkill", "ignores SIGTERM: needs SIGKILL")
    c.eq(verdict(got.get("ok", {}), "ping"), "supported", "healthy: ping supported")
    c.eq(verdict(got.get("ok", {}), "era"), "legacy", "healthy: era legacy")
    # --version=2025-11-25: the fake answers that whatever is offered
    c.eq(dig(got, "ok", "checks", "versions", "evidence", "accepted"), ["2025-11-25"],
         "a fixed version: only that one accepted")
    c.eq(verdict(got.get("ok", {}), "versions"), "negotiates", "an unknown one gets 2025-11-25")
    for n in modes:
        s = got.get(n, {})
        c.eq(s.get("transport"), "stdio", "%s: stdio" % n)
        for check in SESSION_CHECKS + ("probe_leak",):
            c.eq(verdict(s, check), "n/a", "%s: %s n/a" % (n, check))
        opened, ended = sessions(s)
        c.check(opened >= 3 and ended == opened, "%s: every child ended (%r/%r)"
                % (n, ended, opened))
        c.check(is_ms(dig(s, "checks", "shutdown", "evidence", "duration_ms")),
                "%s: how long the shutdown took" % n)
    c.eq(pgrep(marker), [], "no child left behind")


@mcptest.case(rep)
def stdio_wrapper_shutdown(c):
    """Issue 45, item 5: the server behind `sh -c` ignores SIGTERM; sh
    goes on it. The shutdown check judges the server (sigkill), and its
    detail names the child and the member; every server started (each
    writes its pid to the spawn log) is gone."""
    marker = "mcptest-audit-" + uuid.uuid4().hex[:12]
    spawns = mcptest.tmpdir() / ("audit-wrap-%s.log" % uuid.uuid4().hex[:8])
    line = "%s %s --mode=ignore-sigterm --version=2025-11-25 --tag=%s --spawn-log=%s; true" % (
        NODE, FAKE_MJS, marker, spawns)
    cfg = mcptest.write_config({"wrapped": {"command": "sh", "args": ["-c", line],
                                            "teardown_ms": 900, "timeout_ms": 30000}})
    r, doc = audit_json(c, ["-c", cfg, "--timeout", "45000"], timeout=180, rc=1)
    s = by_name(doc).get("wrapped", {})
    c.eq(verdict(s, "shutdown"), "sigkill", "the server needed SIGKILL (not sh's SIGTERM)")
    detail = dig(s, "checks", "shutdown", "detail") or ""
    c.check("the child (sh) exited on SIGTERM" in detail, "names the child: %r" % detail)
    c.check("1 process of its group (pid " in detail and ", node) needed SIGKILL" in detail,
            "names the member: %r" % detail)
    c.eq(dig(s, "checks", "shutdown", "evidence", "group_left"), 1, "evidence: group_left")
    opened, ended = sessions(s)
    c.check(opened >= 3 and ended == opened, "every child ended (%r/%r)" % (ended, opened))
    try:
        pids = [int(x) for x in spawns.read_text().split()]
    except OSError:
        pids = []
    c.check(len(pids) >= opened, "a server started per child (%d for %d)" % (len(pids), opened))
    deadline = time.monotonic() + 5
    while any(mcptest.pid_alive(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    c.eq([p for p in pids if mcptest.pid_alive(p)], [], "every server started is gone")
    c.eq(pgrep(marker), [], "no child left behind")


# --------------------------------------------------------------------------
# usage and interruption

@mcptest.case(rep)
def usage(c):
    for args, what in ((["--parallel", "0"], "--parallel 0"), (["--parallel", "x"], "--parallel x"),
                       (["--timeout", "-5"], "--timeout -5"), (["--bogus"], "an unknown option")):
        r = mcptest.run_mcptop(["audit"] + args + [lab().url("/healthy")], timeout=15)
        c.eq(r.rc, 2, "%s: exit 2" % what)
        c.check(r.stderr.startswith("mcptop audit:"), "%s: says so (%r)" % (what, r.stderr))
    cfg = mcptest.write_config({"a": {"url": lab().url("/healthy")}})
    r = mcptest.run_mcptop(["audit", "-c", cfg, "--server", "nope"], timeout=15)
    c.eq(r.rc, 2, "an unknown --server: exit 2")
    c.check("no server named 'nope'" in r.stderr, "names it")
    r = mcptest.run_mcptop(["audit", "--help"], timeout=15)
    c.eq(r.rc, 0, "--help exits 0")
    for word in ("--parallel", "--server", "probe_leak", "shutdown"):
        c.check(word in r.stdout, "--help mentions %s" % word)


@mcptest.case(rep)
def interrupted(c):
    """SIGINT while a check waits on a hanging ping: exit 130, every session opened ended."""
    L = lab()
    path = "/hang/ping?tag=" + uuid.uuid4().hex[:8]
    mcptest.require_mcptop()
    p = mcptest.spawn([mcptest.MCPTOP_BIN, "audit", "--json", L.url(path)],
                      env=mcptest.mcptop_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        ep = L.counts().get("endpoints", {}).get(path, {})
        if ep.get("methods", {}).get("ping", 0) >= 1:
            break
        time.sleep(0.05)
    c.require(ep.get("methods", {}).get("ping", 0) >= 1, "a ping is hanging")
    p.send_signal(signal.SIGINT)
    try:
        out, err = p.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        c.fatal("mcptop did not exit within 10 s of SIGINT")
    c.eq(p.returncode, 130, "exit 130")
    c.check("interrupted" in err.decode(), "says it was interrupted")
    doc = json.loads(out)
    c.eq(dig(doc, "summary", "interrupted"), True, "summary.interrupted")
    ep = L.counts().get("endpoints", {}).get(path, {})
    c.check(ep.get("sessions_issued", 0) >= 1, "sessions were issued")
    c.eq(ep.get("sessions_live"), 0, "every session the audit opened was ended")
    c.eq(ep.get("sessions_ended"), ep.get("sessions_issued"), "a DELETE for each")


rep.finish()
