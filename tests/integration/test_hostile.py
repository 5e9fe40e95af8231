#!/usr/bin/env python3
"""Hostile input (issue 12): every promise kept under abuse. One case per
fault kind 1-9 of the issue, each with the issue's own small input, built in
tests/faultlab/server.mjs and tests/stdio/fake.mjs:

  1 secret_other_origin    an HTTP+SSE `endpoint` on another origin: refused
                           (protocol, detail names the origin), nothing goes there
  2 reconnect_floor        a GET stream that says `retry: 0` and closes: reopened
                           at most once a second; unsafe SSE ids never echoed
  3 big_page_loop_served   a 100,000-tool page: pings of another server keep
                           being served; a dial that ended past its open
                           deadline is a timeout
    stdio_700k_args        a 700,000-argument stdio entry: no server is left
                           "dialing" by check's bound
  4 sessions_ended         a session issued by a dial that then failed
                           (notifications/initialized 500, tools/list 500, the
                           open deadline during tools/list, a version mcptop
                           refuses), a 404 re-dial and a TUI `r` redial: DELETEd
  5 no_orphans             a stdio server that forks a worker and exits (or
                           stays): the worker does not outlive mcptop
  6 sighup                 watch, check and end on SIGHUP: sessions DELETEd,
                           children that ignore SIGTERM killed, no death by signal
  7 nofile_stdio_fleet     a fleet bigger than RLIMIT_NOFILE: local limit named
    nofile_http_fleet      once, classified unknown/no, never connect_refused
                           or spawn_failed; the soft limit raised to the hard
  8 listchanged_storm      list_changed after every listing: re-listings at most
                           about one a second
  9 low_kinds              a 100 KB session id, a 1 MB configured header, invalid
                           UTF-8 in args, Retry-After 99999999999999999999999

After every scenario: sessions issued == sessions ended on its lab endpoints
(lab /_counts: a DELETE seen for every session id it issued), and no child or
grandchild process left (marker, pid files, process groups seen while it ran).

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_hostile.py
The last line is "N passed, N failed"; the exit status is 1 on any failure.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402
from mcptest import dig  # noqa: E402
import scenario as sc  # noqa: E402
from scenario import fake, key, lab  # noqa: E402

rep = mcptest.Reporter("hostile input (issue 12): no leaked session, orphan, hot loop, frozen loop, "
                       "or secret sent away")

FAST = {"timeout_ms": 1500, "open_deadline_ms": 1500}
SECRET = "Bearer hostile-%s" % sc.tag()


def rate_window(c, k, window_s, first_method="GET"):
    """Wait (bounded) until the first `first_method` on k, then window_s more seconds."""
    first = sc.wait_until(lambda: [e for e in sc.counts_of(k).get("log", []) if e.get("m") == first_method],
                          timeout=15)
    c.require(first, "the lab saw a %s on %s within 15 s" % (first_method, k))
    t0 = first[0]["t"] / 1000.0
    while time.time() < t0 + window_s:
        time.sleep(0.1)
    return t0


# --------------------------------------------------------------------------
# 1. a secret sent to another host


def secret_other_origin(c):
    """405 to every POST -> 2024-11-05 HTTP+SSE; the stream's `endpoint` names
    http://127.0.0.1:<other port>/steal. Expected: refused before any request
    goes there, as a `protocol` failure whose detail names that origin; the
    same-origin control dials and still sends its configured header."""
    L = lab()
    k_steal = key("/legacysse?endpoint=other")
    k_same = key("/legacysse?endpoint=same")
    before = L.other_origin()
    r, by = sc.check_json(c, {
        "steal": {"url": L.url(k_steal), "headers": {"Authorization": SECRET}},
        "same": {"url": L.url(k_same), "headers": {"Authorization": SECRET}},
    }, mcptop=dict(FAST, timeout_ms=3000, open_deadline_ms=3000))
    other = L.other_origin()
    c.attach("other origin before: %s\nafter: %s" % (json.dumps(before), json.dumps(other)))
    s = by["steal"]
    c.eq(s.get("ok"), False, "steal: ok")
    c.eq(dig(s, "last_failure", "kind"), "protocol", "steal: last_failure.kind")
    c.eq(dig(s, "last_failure", "delivered"), "yes", "steal: last_failure.delivered (protocol at the dial)")
    c.eq(dig(s, "last_failure", "site"), "connect", "steal: last_failure.site")
    c.eq(dig(s, "liveness", "state"), "reachable", "steal: liveness (the server answered: protocol)")
    origin = "127.0.0.1:%d" % L.other_port
    d = dig(s, "last_failure", "detail")
    c.check(isinstance(d, str) and origin in d, "steal: the detail names the origin %s: %r" % (origin, d))
    frm = (other.get("by_from") or {}).get(k_steal) or {}
    c.eq(frm.get("requests", 0), 0, "requests that reached the other origin for %s" % k_steal)
    c.eq(other.get("with_authorization", 0) - before.get("with_authorization", 0), 0,
         "requests carrying Authorization that reached the other origin")
    # the control: same origin, dials, and the header is sent where it belongs
    s = by["same"]
    c.eq(s.get("ok"), True, "same: ok")
    c.eq(s.get("era"), "legacy_sse", "same: era")
    c.eq(s.get("tools"), 3, "same: tools")
    cnt = sc.counts_of(k_same)
    c.check(cnt.get("with_authorization", 0) >= 3,
            "same: the configured Authorization reached the same origin (%r requests)"
            % cnt.get("with_authorization"))
    c.check(SECRET not in r.stdout and SECRET not in r.stderr, "the secret is never printed")
    # the HTTP+SSE streams were closed when check exited (their sessions' end)
    for k in (k_steal, k_same):
        cnt = sc.counts_of(k)
        c.eq(cnt.get("sse_sessions_closed", 0), cnt.get("sse_sessions_opened", 0),
             "%s: HTTP+SSE streams closed == opened" % k)
    sc.balanced(c, [k_steal, k_same])


# --------------------------------------------------------------------------
# 2. a reconnect hot loop


REOPEN_WINDOW_S = 6.0
RETRY_FLOOR_S = 1.0


def reconnect_floor(c):
    """GET streams that open, say `retry: 0` (with an event id: short, 1000
    bytes long, or non-ASCII) and close. Expected over 6 s from the first GET:
    reopened (>= 2 GETs) but never sooner than the 1 s floor after the last,
    so at most window/floor + 2 GETs; the short id is sent back in
    Last-Event-ID, the long and non-ASCII ones never."""
    L = lab()
    keys = {"short": key("/retry0?id=short"), "long": key("/retry0?id=long"), "utf8": key("/retry0?id=utf8")}
    cfg = mcptest.write_config({n: dict(FAST, url=L.url(k), ping_interval_s=1) for n, k in keys.items()})
    w = sc.TimedWatch(["watch", "-c", cfg])
    try:
        t0 = rate_window(c, keys["short"], REOPEN_WINDOW_S)
        c.check(w.proc.poll() is None, "watch still running after the window")
        counts = {n: sc.counts_of(k) for n, k in keys.items()}
        w.signal(signal.SIGINT)
        rc = w.wait_exit(8)
        c.check(rc is not None, "watch exits within 8 s of SIGINT")
        for n, cnt in counts.items():
            gets = [e["t"] / 1000.0 for e in cnt.get("log", []) if e.get("m") == "GET"]
            in_window = [t for t in gets if t <= t0 + REOPEN_WINDOW_S]
            total = cnt.get("GET", 0)
            c.attach("%s: GET x%d (log: %d kept, %d dropped), first gaps %s"
                     % (n, total, len(cnt.get("log", [])), cnt.get("log_dropped", 0),
                        ["%.3f" % (b - a) for a, b in zip(gets, gets[1:])][:12]))
            bound = int(REOPEN_WINDOW_S / RETRY_FLOOR_S) + 2
            c.check(len(in_window) <= bound and cnt.get("log_dropped", 0) == 0,
                    "%s: at most %d GETs in %.0f s (floor %.0f s), got %d (total %d)"
                    % (n, bound, REOPEN_WINDOW_S, RETRY_FLOOR_S, len(in_window), total))
            c.check(len(gets) >= 2, "%s: the closed stream was reopened (GET x%d)" % (n, len(gets)))
            gaps = [b - a for a, b in zip(gets, gets[1:])]
            c.check(not gaps or min(gaps) >= RETRY_FLOOR_S - 0.1,
                    "%s: no reopen sooner than %.1f s after the last (shortest gap %.3f s)"
                    % (n, RETRY_FLOOR_S - 0.1, min(gaps) if gaps else -1))
        c.check(counts["short"].get("last_event_ids", 0) >= 1,
                "short id: sent back in Last-Event-ID (%r GETs carried one)"
                % counts["short"].get("last_event_ids"))
        for n in ("long", "utf8"):
            c.eq(counts[n].get("last_event_id_unsafe", 0), 0,
                 "%s id: GETs whose Last-Event-ID is long or not visible ASCII" % n)
        sc.balanced(c, list(keys.values()))
    finally:
        if c.failures:
            c.attach(w.describe(last=8))
        w.close()


# --------------------------------------------------------------------------
# 3. the event loop frozen


BIG_TOOLS = 100000
BIG_DEADLINE_MS = 3000
PING_GAP_MAX_S = 3.0


def big_page_loop_served(c):
    """One tools/list page of 100,000 tools on `big` (open deadline 3 s) while
    `pinger` is pinged every 0.25 s. Expected: pinger's completed pings never
    stop for more than 3 s (the loop is never frozen; a linear read of the
    11 MB page may take a moment, under ASan too); big's dial is either
    completed within its open deadline by the clock, or a `timeout` at
    connect; SIGINT is served at once afterwards."""
    L = lab()
    k_big = key("/healthy?tools=%d" % BIG_TOOLS)
    k_ping = key("/healthy")
    cfg = mcptest.write_config({
        "big": {"url": L.url(k_big), "timeout_ms": BIG_DEADLINE_MS, "open_deadline_ms": BIG_DEADLINE_MS,
                "ping_interval_s": 5},
        "pinger": {"url": L.url(k_ping), "timeout_ms": 1000, "open_deadline_ms": 3000,
                   "ping_interval_s": 0.25},
    })
    w = sc.TimedWatch(["watch", "-c", cfg])
    try:
        ev = w.until(lambda e: e.get("server") == "pinger" and e.get("event") == "liveness"
                     and e.get("state") == "reachable", time.monotonic() + 15)
        c.require(ev is not None, "pinger reachable within 15 s")
        listed = sc.wait_until(lambda: [e for e in sc.counts_of(k_big).get("log", [])
                                        if e.get("rpc") == "tools/list"], timeout=15)
        c.require(listed, "the lab saw big's tools/list within 15 s")
        first_req = sc.counts_of(k_big)["log"][0]["t"] / 1000.0
        dial = w.until(lambda e: e.get("server") == "big" and e.get("event") == "exchange"
                       and e.get("op") == "dial", time.monotonic() + 30)
        c.require(dial is not None, "big's dial has an outcome within 30 s")
        dial_at = next(t for t in w.timed if t[2] is dial)
        # keep watching the pinger for 1.5 s more
        end_mono = dial_at[0] + 1.5
        while time.monotonic() < end_mono:
            time.sleep(0.1)
        t_sig = time.monotonic()
        w.signal(signal.SIGINT)
        rc = w.wait_exit(8)
        c.check(rc is not None, "watch exits within 8 s of SIGINT (took %.1f s)" % (time.monotonic() - t_sig))
        pings = [t[0] for t in w.timed if t[2].get("server") == "pinger" and t[2].get("event") == "exchange"
                 and t[2].get("op") == "ping" and t[2].get("outcome") == "completed" and t[0] <= end_mono]
        start = next(t[0] for t in w.timed if t[2] is ev)
        marks = [start] + pings + [end_mono]
        gap = max(b - a for a, b in zip(marks, marks[1:]))
        c.attach("pinger: %d completed pings; longest gap %.2f s; big's dial: %s after %.2f s"
                 % (len(pings), gap, json.dumps(dial), dial_at[1] - first_req))
        c.check(gap <= PING_GAP_MAX_S, "pinger's pings kept being served while big's page was read: "
                "longest gap without a completed ping %.2f s (max %.1f s)" % (gap, PING_GAP_MAX_S))
        took = dial_at[1] - first_req
        if dial.get("outcome") == "completed":
            c.check(took <= BIG_DEADLINE_MS / 1000.0 + 0.7,
                    "a completed dial finished within its open deadline by the clock: %.2f s after its "
                    "first request, deadline %.1f s (a dial that finished late is a timeout)"
                    % (took, BIG_DEADLINE_MS / 1000.0))
        else:
            c.eq((dial.get("outcome"), dial.get("site")), ("timeout", "connect"),
                 "big's failed dial: outcome, site")
        sc.balanced(c, [k_big, k_ping])
    finally:
        if c.failures:
            c.attach(w.describe(last=10))
        w.close()


def stdio_700k_args(c):
    """A stdio entry with 700,000 arguments next to two healthy servers, open
    deadline 1.5 s. Expected: no server still `dialing` in check's report;
    both healthy servers ok; the big entry refused (spawn_failed or
    invalid_config), nothing left running."""
    L = lab()
    marker = sc.new_marker()
    k_good = key("/healthy")
    big = fake("healthy", marker)
    big["args"] = big["args"] + ["a"] * 700000
    sampler = sc.GroupSampler(marker)
    t0 = time.monotonic()
    r, by = sc.check_json(c, {"args700k": big, "good": {"url": L.url(k_good)},
                              "goodstdio": fake("healthy", marker)},
                          mcptop={"timeout_ms": 1500, "open_deadline_ms": 1500}, timeout=45, attach=False)
    c.attach("states: %s" % {n: (s.get("state"), dig(s, "last_failure", "kind")) for n, s in by.items()})
    c.attach("check took %.1f s" % (time.monotonic() - t0))
    for name, s in by.items():
        c.check(s.get("state") != "dialing", "%s: not left dialing (state %r)" % (name, s.get("state")))
    for name in ("good", "goodstdio"):
        c.eq(dig(by, name, "ok"), True, "%s: ok" % name)
        c.eq(dig(by, name, "liveness", "state"), "reachable", "%s: liveness" % name)
    c.is_in(dig(by, "args700k", "last_failure", "kind"), ("spawn_failed", "invalid_config"),
            "args700k: last_failure.kind")
    sc.balanced(c, [k_good])
    sc.nothing_left(c, marker, sampler)


# --------------------------------------------------------------------------
# 4. sessions never ended


DIAL_FAILS = [
    # name, path, kind, http_status
    ("init500", "/error500/initialized", "http_status", 500),
    ("list500", "/error500/list", "http_status", 500),
    ("listhang", "/hang/list", "timeout", None),
    ("badversion", "/badversion/dial", "protocol", None),
]


def sessions_ended_failed_dial_check(c):
    """A session issued by initialize, then the dial fails (notifications/
    initialized 500, tools/list 500, the open deadline during tools/list, a
    protocol version mcptop refuses). Expected: the dial's failure as such,
    and every issued session DELETEd before check exits."""
    L = lab()
    keys = {n: key(p) for n, p, _, _ in DIAL_FAILS}
    r, by = sc.check_json(c, {n: dict(FAST, url=L.url(k)) for n, k in keys.items()})
    for n, _, kind, status in DIAL_FAILS:
        s = by.get(n, {})
        c.eq(dig(s, "last_failure", "kind"), kind, "%s: last_failure.kind" % n)
        c.eq(dig(s, "last_failure", "site"), "connect", "%s: last_failure.site" % n)
        if status is not None:
            c.eq(dig(s, "last_failure", "http_status"), status, "%s: http_status" % n)
        c.eq(sc.counts_of(keys[n]).get("sessions_issued"), 1, "%s: the lab issued one session" % n)
    sc.balanced(c, list(keys.values()))


def sessions_ended_failed_dial_end(c):
    """`mcptop end` on the same failed dials: each issued session is ended by
    the ending procedure, once (one DELETE), listed as one half-open ending,
    terminated; no ending of theirs says "no session id was issued"."""
    L = lab()
    keys = {n: key(p) for n, p, _, _ in DIAL_FAILS}
    cfg = mcptest.write_config({n: dict(FAST, url=L.url(k)) for n, k in keys.items()})
    r = mcptest.run_mcptop(["end", "--json", "--teardown", "1000", "-c", cfg], timeout=30)
    c.attach(r.describe())
    c.no_crash(r)
    ends = sc.endings_of(r.stdout)
    for n, _, _, _ in DIAL_FAILS:
        mine = [e for e in ends if e.get("server") == n]
        half = [e for e in mine if e.get("half_open") is True]
        c.check(len(half) == 1 and half[0].get("outcome") == "terminated",
                "%s: one half-open ending, terminated (endings %s)" % (n, json.dumps(mine)))
        for e in mine:
            c.check("no session id was issued" not in str(e.get("detail", "")),
                    "%s: no ending says no session id was issued: %r" % (n, e.get("detail")))
        cnt = sc.counts_of(keys[n])
        c.eq(cnt.get("delete_with_session", 0), 1, "%s: DELETEs with the session id (once)" % n)
    sc.balanced(c, list(keys.values()))


def sessions_ended_redial_404(c):
    """A session that expires (404 after 2 requests) under watch: the re-dial
    gets a new session and the lost one still gets its DELETE."""
    L = lab()
    k = key("/expire?after=2")
    cfg = mcptest.write_config({"exp": dict(FAST, url=L.url(k), ping_interval_s=0.3)})
    w = sc.TimedWatch(["watch", "-c", cfg])
    try:
        dials = sc.wait_until(lambda: len([e for e in w.events if e.get("event") == "exchange"
                                           and e.get("op") == "dial" and e.get("outcome") == "completed"]) >= 2,
                              timeout=10)
        c.require(dials, "a second completed dial after the 404 within 10 s")
        w.signal(signal.SIGINT)
        c.check(w.wait_exit(8) is not None, "watch exits within 8 s of SIGINT")
        cnt = sc.counts_of(k)
        c.eq(cnt.get("sessions_issued"), 2, "sessions the lab issued (the first expired)")
        sc.balanced(c, [k])
    finally:
        if c.failures:
            c.attach(w.describe(last=10))
        w.close()


def sessions_ended_tui_redial(c):
    """`r` (redial) in the TUI: the old session is DELETEd, the new one at `q`."""
    L = lab()
    k = key("/healthy")
    cfg = mcptest.write_config({"redialme": dict(FAST, url=L.url(k), ping_interval_s=1)})
    t = sc.Tmux(["-c", cfg])
    try:
        text, ok = t.wait(lambda s: "reachable" in s and "redialme" in s, 15)
        c.require(ok, "the TUI shows redialme reachable within 15 s:\n%s" % text)
        t.keys("r")
        ok = sc.wait_until(lambda: sc.counts_of(k).get("sessions_issued", 0) >= 2, timeout=8)
        c.require(ok, "the lab issued a second session after `r` within 8 s")
        t.keys("q")
        text, ok = t.wait(lambda s: "__EXIT=" in s, 10)
        c.check(ok, "mcptop quit within 10 s of q:\n%s" % text)
        c.eq(sc.counts_of(k).get("sessions_issued"), 2, "sessions issued (dial, redial)")
        sc.balanced(c, [k])
    finally:
        t.kill()


# --------------------------------------------------------------------------
# 5. orphaned grandchildren


def orphans_check_fork_exit(c):
    """check on a stdio server that forks a worker (ignoring SIGTERM) and exits."""
    marker = sc.new_marker()
    pidfile = mcptest.write_file("", suffix=".pids")
    sampler = sc.GroupSampler(marker)
    r, by = sc.check_json(c, {"forker": fake("fork-exit", marker, "--worker-pids=%s" % pidfile,
                                             "--worker-ignores-term")},
                          mcptop={"timeout_ms": 2000, "open_deadline_ms": 3000})
    c.check(len(sc.pids_in(pidfile)) >= 1, "the server forked a worker (pids %r)" % sc.pids_in(pidfile))
    sc.nothing_left(c, marker, sampler, [pidfile])


def orphans_watch_redials(c):
    """watch on the same server: it redials; while watch still runs, the
    workers of children that already exited are gone; after SIGINT, all."""
    marker = sc.new_marker()
    pidfile = mcptest.write_file("", suffix=".pids")
    cfg = mcptest.write_config({"forker": fake("fork-exit", marker, "--worker-pids=%s" % pidfile,
                                               "--worker-ignores-term", timeout_ms=2000,
                                               open_deadline_ms=3000, teardown_ms=1000)})
    sampler = sc.GroupSampler(marker)
    w = sc.TimedWatch(["watch", "-c", cfg])
    try:
        pids = sc.wait_until(lambda: len(sc.pids_in(pidfile)) >= 3 and sc.pids_in(pidfile), timeout=15)
        c.require(pids, "three workers forked (three spawns) within 15 s: %r" % sc.pids_in(pidfile))
        earlier = pids[:-1]
        left = sc.wait_until(lambda: not [p for p in earlier if sc.alive(p)], timeout=4) or \
            [p for p in earlier if sc.alive(p)]
        c.check(left is True, "while watch runs, the workers of exited children are gone: %s"
                % ("" if left is True else sc.ps_lines(left)))
        w.signal(signal.SIGINT)
        c.check(w.wait_exit(8) is not None, "watch exits within 8 s of SIGINT")
        sc.nothing_left(c, marker, sampler, [pidfile])
    finally:
        if c.failures:
            c.attach(w.describe(last=10))
        w.close()


def orphans_end_fork_stay(c):
    """end on a healthy stdio server with a worker (ignoring SIGTERM): the
    ending signals the whole group; nothing is left once end exits."""
    marker = sc.new_marker()
    pidfile = mcptest.write_file("", suffix=".pids")
    cfg = mcptest.write_config({"pool": fake("fork-stay", marker, "--worker-pids=%s" % pidfile,
                                             "--worker-ignores-term")})
    sampler = sc.GroupSampler(marker)
    r = mcptest.run_mcptop(["end", "--json", "--teardown", "1500", "-c", cfg], timeout=30)
    c.attach(r.describe())
    c.no_crash(r)
    ends = sc.endings_of(r.stdout)
    c.check(len(ends) == 1, "one ending (got %d)" % len(ends))
    c.check(len(sc.pids_in(pidfile)) == 1, "one worker forked (pids %r)" % sc.pids_in(pidfile))
    sc.nothing_left(c, marker, sampler, [pidfile])


def orphans_setsid_daemon_end(c):
    """end on a stdio server that starts a daemon in a session of its own
    (setsid, ignoring SIGTERM): no group signal reaches it, but mcptop is a
    child subreaper, so the daemon is re-parented to it and ended at exit."""
    marker = sc.new_marker()
    pidfile = mcptest.write_file("", suffix=".pids")
    cfg = mcptest.write_config({"pool": fake("fork-stay", marker, "--worker-pids=%s" % pidfile,
                                             "--worker-ignores-term", "--worker-setsid")})
    r = mcptest.run_mcptop(["end", "--json", "--teardown", "1000", "-c", cfg], timeout=30)
    c.attach(r.describe())
    c.no_crash(r)
    c.eq(len(sc.endings_of(r.stdout)), 1, "one ending")
    c.check(len(sc.pids_in(pidfile)) == 1, "one daemon started (pids %r)" % sc.pids_in(pidfile))
    sc.nothing_left(c, marker, None, [pidfile])


def orphans_setsid_daemon_watch(c):
    """The same daemon under watch: gone once watch exits after SIGTERM."""
    marker = sc.new_marker()
    pidfile = mcptest.write_file("", suffix=".pids")
    cfg = mcptest.write_config({"pool": fake("fork-stay", marker, "--worker-pids=%s" % pidfile,
                                             "--worker-setsid", teardown_ms=1000)})
    w = sc.TimedWatch(["watch", "-c", cfg])
    try:
        pids = sc.wait_until(lambda: sc.pids_in(pidfile), timeout=15)
        c.require(pids, "the server started its daemon: %r" % sc.pids_in(pidfile))
        c.check(sc.alive(pids[0]), "the daemon runs while watch does")
        w.signal(signal.SIGTERM)
        c.check(w.wait_exit(8) is not None, "watch exits within 8 s of SIGTERM")
        sc.nothing_left(c, marker, None, [pidfile])
    finally:
        if c.failures:
            c.attach(w.describe(last=10))
        w.close()


# --------------------------------------------------------------------------
# 6. SIGHUP


def _wait_reachable(w, names, timeout):
    deadline = time.monotonic() + timeout
    for n in names:
        ev = w.until(lambda e, n=n: e.get("server") == n and e.get("event") == "liveness"
                     and e.get("state") == "reachable", deadline)
        if ev is None:
            return n
    return None


def sighup_watch(c):
    """watch on a lab server and a stdio child that ignores SIGTERM; SIGHUP.
    Expected: exit 0 as after SIGINT, the session DELETEd, the child gone."""
    L = lab()
    marker = sc.new_marker()
    k = key("/healthy")
    cfg = mcptest.write_config({"http": {"url": L.url(k)}, "stubborn": fake("ignore-sigterm", marker)},
                               mcptop={"teardown_ms": 1000})
    sampler = sc.GroupSampler(marker)
    w = sc.TimedWatch(["watch", "-c", cfg])
    try:
        missing = _wait_reachable(w, ("http", "stubborn"), 20)
        c.require(missing is None, "%s reachable within 20 s" % missing)
        w.signal(signal.SIGHUP)
        rc = w.wait_exit(8)
        c.check(rc is not None, "watch exits within 8 s of SIGHUP")
        c.eq(rc, 0, "exit code after SIGHUP (as after SIGINT; -1 is death by the signal)")
        sc.balanced(c, [k])
        sc.nothing_left(c, marker, sampler)
    finally:
        if c.failures:
            c.attach(w.describe(last=10))
        w.close()


def _spawn_mcptop(args):
    mcptest.require_mcptop()
    argv = [mcptest.MCPTOP_BIN] + [str(a) for a in args]
    return mcptest.spawn(argv, env=mcptest.mcptop_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _hup_and_collect(c, p, grace=8.0):
    os.kill(p.pid, signal.SIGHUP)
    try:
        out, err = p.communicate(timeout=grace)
    except subprocess.TimeoutExpired:
        mcptest.terminate(p, grace=1)
        out, err = p.communicate(timeout=5)
        c.check(False, "exited within %.0f s of SIGHUP" % grace)
    c.attach("rc %s\n--- stdout ---\n%s\n--- stderr ---\n%s"
             % (p.returncode, out.decode(errors="replace")[-3000:], err.decode(errors="replace")[-3000:]))
    return p.returncode, out.decode(errors="replace"), err.decode(errors="replace")


def sighup_check(c):
    """check mid-ping (the lab holds the ping) with a SIGTERM-ignoring child;
    SIGHUP. Expected: not killed by the signal (exit 129 or 130, interrupted),
    the session DELETEd, the child gone."""
    L = lab()
    marker = sc.new_marker()
    k = key("/hang/ping")
    cfg = mcptest.write_config({"hang": {"url": L.url(k), "timeout_ms": 8000, "open_deadline_ms": 8000},
                                "stubborn": fake("ignore-sigterm", marker)},
                               mcptop={"teardown_ms": 1000})
    sampler = sc.GroupSampler(marker)
    p = _spawn_mcptop(["check", "--json", "-c", cfg])
    try:
        ok = sc.wait_until(lambda: sc.counts_of(k).get("methods", {}).get("ping", 0) >= 1, timeout=15)
        c.require(ok, "the lab saw check's ping within 15 s")
        rc, out, err = _hup_and_collect(c, p)
        c.is_in(rc, (129, 130), "exit code after SIGHUP (interrupted; negative is death by the signal)")
        sc.balanced(c, [k])
        sc.nothing_left(c, marker, sampler)
    finally:
        mcptest.terminate(p, grace=1)


def sighup_end(c):
    """end while the dial is still listing (the session already issued), with
    a SIGTERM-ignoring child; SIGHUP as soon as the lab saw tools/list.
    Expected: not killed by the signal, the session DELETEd, the child gone."""
    L = lab()
    marker = sc.new_marker()
    k = key("/delay/list?ms=3000")
    cfg = mcptest.write_config({"slow": {"url": L.url(k), "timeout_ms": 8000, "open_deadline_ms": 8000},
                                "stubborn": fake("ignore-sigterm", marker)},
                               mcptop={"teardown_ms": 1000})
    sampler = sc.GroupSampler(marker)
    p = _spawn_mcptop(["end", "--json", "-c", cfg])
    try:
        ok = sc.wait_until(lambda: sc.counts_of(k).get("methods", {}).get("tools/list", 0) >= 1,
                           timeout=15, step=0.02)
        c.require(ok, "the lab saw end's tools/list within 15 s")
        rc, out, err = _hup_and_collect(c, p)
        c.is_in(rc, (129, 130), "exit code after SIGHUP (interrupted; negative is death by the signal)")
        sc.balanced(c, [k])
        sc.nothing_left(c, marker, sampler)
    finally:
        mcptest.terminate(p, grace=1)


def sighup_at_first_child(c):
    """check with a slow-starting stdio child that stays when its stdin
    closes; SIGHUP the moment the child exists (the handlers must be in
    place before the first child starts). Expected: not killed by the
    signal, the child ended (it needs SIGTERM), nothing left."""
    marker = sc.new_marker()
    cfg = mcptest.write_config({"slow": fake("ignore-stdin-eof", marker, "--slow-ms=3000")},
                               mcptop={"teardown_ms": 1000, "timeout_ms": 8000, "open_deadline_ms": 8000})
    sampler = sc.GroupSampler(marker)
    p = _spawn_mcptop(["check", "--json", "-c", cfg])
    try:
        seen = sc.wait_until(lambda: sc.marked(marker), timeout=10, step=0.005)
        c.require(seen, "the stdio child started within 10 s")
        rc, out, err = _hup_and_collect(c, p)
        c.is_in(rc, (129, 130), "exit code after SIGHUP at the first child (negative is death by the signal)")
        sc.nothing_left(c, marker, sampler)
    finally:
        mcptest.terminate(p, grace=1)


# --------------------------------------------------------------------------
# 7. local limits shown as a remote outage


NOFILE_FLEET = 300
NOFILE_SOFT = 128
STDIO_FLEET = 12
STDIO_NOFILE = 24
LOCAL_LIMIT = "local limit: too many open files"


def _local_limit_verdicts(c, what, by, stderr, must_fail):
    """Failures are the local limit's (never connect_refused or spawn_failed), said once on stderr."""
    refused = [n for n, s in by.items() if dig(s, "last_failure", "kind") in ("connect_refused", "spawn_failed")]
    c.check(not refused, "%s: no server called connect_refused / spawn_failed (%d were, e.g. %r)"
            % (what, len(refused), [(n, dig(by[n], "last_failure", "detail")) for n in refused[:2]]))
    failed = {n: s for n, s in by.items() if s.get("ok") is not True}
    ok = [n for n, s in by.items() if s.get("ok") is True]
    if must_fail:
        c.check(len(ok) >= 1, "%s: the servers that fit are ok (%d)" % (what, len(ok)))
        c.check(len(failed) >= 1, "%s: the fleet does not fit (%d not ok)" % (what, len(failed)))
    wrong = [(n, dig(s, "last_failure", "kind"), dig(s, "last_failure", "delivered"),
              dig(s, "last_failure", "detail"), dig(s, "liveness", "state"))
             for n, s in failed.items()
             if (dig(s, "last_failure", "kind"), dig(s, "last_failure", "delivered"),
                 dig(s, "liveness", "state")) != ("unknown", "no", "unknown")
             or LOCAL_LIMIT not in str(dig(s, "last_failure", "detail"))]
    c.check(not wrong, "%s: every server that did not fit is unknown / delivered no / liveness unknown / "
            "%r (%d are not, e.g. %r)" % (what, LOCAL_LIMIT, len(wrong), wrong[:2]))
    lines = [ln for ln in stderr.splitlines() if re.search(r"open files", ln, re.I)]
    if failed:
        c.check(len(lines) == 1, "%s: one stderr line names the open-files limit (got %d: %r)"
                % (what, len(lines), lines[:5]))


def _prlimit():
    p = shutil.which("prlimit")
    if not p:
        raise mcptest.SetupError("prlimit (util-linux) is not installed")
    return p


def nofile_stdio_fleet(c):
    """12 stdio servers under RLIMIT_NOFILE 24:24 (three pipes each: they
    cannot all fit, and the soft limit cannot be raised). Expected: the
    ones that fit are ok; every other one is `unknown`, delivered `no`,
    liveness unknown, detail "local limit: too many open files" (never
    spawn_failed: the command exists); one clear stderr line; no child left."""
    marker = sc.new_marker()
    servers = {"c%02d" % i: fake("healthy", marker) for i in range(STDIO_FLEET)}
    sampler = sc.GroupSampler(marker)
    r, by = sc.check_json(c, servers, mcptop={"timeout_ms": 5000, "open_deadline_ms": 8000}, timeout=60,
                          argv_prefix=[_prlimit(), "--nofile=%d:%d" % (STDIO_NOFILE, STDIO_NOFILE), "--"])
    _local_limit_verdicts(c, "stdio, nofile %d:%d" % (STDIO_NOFILE, STDIO_NOFILE), by, r.stderr, must_fail=True)
    sc.nothing_left(c, marker, sampler)


def nofile_http_fleet(c):
    """300 HTTP servers under RLIMIT_NOFILE 128:128: never connect_refused
    (today 4 in 5 "refuse" with errno 0); whatever does not fit is the local
    limit's, said once; the sessions of those that dialed are ended. Under
    128:4096 (the soft limit raised to the hard one at start) every server
    is ok."""
    L = lab()
    for hard in (NOFILE_SOFT, 4096):
        t = sc.tag()
        keys = {"s%03d" % i: "/healthy?nf=%s-%d" % (t, i) for i in range(NOFILE_FLEET)}
        r, by = sc.check_json(c, {n: {"url": L.url(k)} for n, k in keys.items()},
                              mcptop={"timeout_ms": 5000, "open_deadline_ms": 5000}, timeout=60,
                              argv_prefix=[_prlimit(), "--nofile=%d:%d" % (NOFILE_SOFT, hard), "--"],
                              attach=False)
        what = "http, nofile %d:%d" % (NOFILE_SOFT, hard)
        _local_limit_verdicts(c, what, by, r.stderr, must_fail=False)
        if hard != NOFILE_SOFT:
            failed = {n: s for n, s in by.items() if s.get("ok") is not True}
            c.check(not failed, "%s: the soft limit is raised to the hard one: every server ok (%d not: %r)"
                    % (what, len(failed), [(n, dig(s, "last_failure", "detail")) for n, s in failed.items()][:3]))
        sc.balanced(c, list(keys.values()))


# --------------------------------------------------------------------------
# 8. no debounce on list_changed


STORM_WINDOW_S = 6.0


def listchanged_storm(c):
    """A server that answers every listing with a list_changed notice on its
    GET stream. Expected over 6 s from the stream's opening: re-listings
    happen (>= 2) but at most about one a second (<= 8)."""
    L = lab()
    k = key("/storm")
    cfg = mcptest.write_config({"storm": dict(FAST, url=L.url(k), ping_interval_s=1)})
    w = sc.TimedWatch(["watch", "-c", cfg])
    try:
        rate_window(c, k, STORM_WINDOW_S)
        cnt = sc.counts_of(k)
        w.signal(signal.SIGINT)
        c.check(w.wait_exit(8) is not None, "watch exits within 8 s of SIGINT")
        rel = cnt.get("relistings", 0)
        c.attach("after %.0f s: relistings %d, tools/list %d, notices sent %d"
                 % (STORM_WINDOW_S, rel, dig(cnt, "methods", "tools/list"), cnt.get("list_changed_sent", 0)))
        c.check(2 <= rel <= int(STORM_WINDOW_S) + 2,
                "re-listings in %.0f s: between 2 and %d (at most ~1/s), got %d"
                % (STORM_WINDOW_S, int(STORM_WINDOW_S) + 2, rel))
        sc.balanced(c, [k])
    finally:
        if c.failures:
            c.attach(w.describe(last=8))
        w.close()


# --------------------------------------------------------------------------
# 9. low, but the kind is fixed


def low_kinds(c):
    """A 100 KB session id; a configured 1 MB header; invalid UTF-8 in a
    stdio server's args; Retry-After 99999999999999999999999."""
    L = lab()
    marker = sc.new_marker()
    k_sid = key("/bigsession/dial?kb=100")
    k_hdr = key("/healthy")
    k_ra = key("/busy503/ping?s=99999999999999999999999")
    badarg = fake("healthy", marker)
    badarg["args"].append("\udcff\udcfebad-\udcc3(")  # surrogateescape: raw bytes ff fe ... c3 28
    servers = {
        "bigsid": dict(FAST, url=L.url(k_sid)),
        "bighdr": dict(FAST, url=L.url(k_hdr), headers={"X-Big": "a" * (1024 * 1024)}),
        "badutf8": badarg,
        "hugeretry": dict(FAST, url=L.url(k_ra)),
    }
    text = json.dumps({"mcpServers": servers}, ensure_ascii=False)
    cfg = mcptest.write_file(text.encode("utf-8", "surrogateescape"))
    sampler = sc.GroupSampler(marker)
    mcptest.require_mcptop()
    t0 = time.monotonic()
    p = mcptest.spawn([mcptest.MCPTOP_BIN, "check", "--json", "-c", cfg], env=mcptest.mcptop_env(),
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        raw, err = p.communicate(timeout=60)
        timed_out = False
    except subprocess.TimeoutExpired:
        mcptest.terminate(p, grace=1)
        raw, err = p.communicate(timeout=5)
        timed_out = True
    r = mcptest.Result(p.args, None if timed_out else p.returncode, raw.decode(errors="replace"),
                       err.decode(errors="replace"), timed_out, time.monotonic() - t0)
    c.attach(r.describe())
    c.no_crash(r)
    try:
        raw.decode("utf-8", "strict")
        valid = True
    except UnicodeDecodeError as e:
        valid = False
        c.attach("invalid UTF-8 in check --json: %s" % e)
    c.check(valid, "check --json output is valid UTF-8 (invalid bytes in config args are sanitized)")
    doc = r.json()
    c.require(isinstance(doc, dict), "check --json printed JSON (%s)" % r.json_error)
    by = {s.get("name"): s for s in doc.get("servers", [])}
    s = by.get("bigsid", {})
    c.eq(dig(s, "last_failure", "kind"), "not_mcp_response", "bigsid: last_failure.kind (an answer past a limit)")
    d = str(dig(s, "last_failure", "detail"))
    c.check("limit" in d.lower() and "out of memory" not in d.lower(),
            "bigsid: the detail names the limit, not 'Out of memory': %r" % d)
    s = by.get("bighdr", {})
    c.eq(dig(s, "last_failure", "kind"), "invalid_config", "bighdr: last_failure.kind (the declaration)")
    d = str(dig(s, "last_failure", "detail"))
    c.check("header" in d.lower() and "limit" in d.lower() and "out of memory" not in d.lower(),
            "bighdr: the detail names the header limit: %r" % d)
    c.eq(sc.counts_of(k_hdr).get("POST", 0), 0, "bighdr: nothing was sent")
    s = by.get("hugeretry", {})
    d = str(dig(s, "last_failure", "detail"))
    c.eq(dig(s, "last_failure", "http_status"), 503, "hugeretry: http_status")
    c.check("9223372036854775807" not in d and "Retry-After" in d and "clamp" in d.lower(),
            "hugeretry: Retry-After clamped and said so, never 9223372036854775807: %r" % d)
    # the 100 KB session id was never taken by mcptop: nothing to DELETE there
    sc.balanced(c, [k_hdr, k_ra])
    sc.nothing_left(c, marker, sampler)


# --------------------------------------------------------------------------


CASES = [
    ("1 secret_other_origin", secret_other_origin),
    ("2 reconnect_floor", reconnect_floor),
    ("3 big_page_loop_served", big_page_loop_served),
    ("3 stdio_700k_args", stdio_700k_args),
    ("4 sessions_ended_failed_dial_check", sessions_ended_failed_dial_check),
    ("4 sessions_ended_failed_dial_end", sessions_ended_failed_dial_end),
    ("4 sessions_ended_redial_404", sessions_ended_redial_404),
    ("4 sessions_ended_tui_redial", sessions_ended_tui_redial),
    ("5 orphans_check_fork_exit", orphans_check_fork_exit),
    ("5 orphans_watch_redials", orphans_watch_redials),
    ("5 orphans_end_fork_stay", orphans_end_fork_stay),
    ("5 orphans_setsid_daemon_end", orphans_setsid_daemon_end),
    ("5 orphans_setsid_daemon_watch", orphans_setsid_daemon_watch),
    ("6 sighup_watch", sighup_watch),
    ("6 sighup_check", sighup_check),
    ("6 sighup_end", sighup_end),
    ("6 sighup_at_first_child", sighup_at_first_child),
    ("7 nofile_stdio_fleet", nofile_stdio_fleet),
    ("7 nofile_http_fleet", nofile_http_fleet),
    ("8 listchanged_storm", listchanged_storm),
    ("9 low_kinds", low_kinds),
]


def main():
    sc.run_cases(rep, CASES)


if __name__ == "__main__":
    main()
