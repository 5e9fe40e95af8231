#!/usr/bin/env python3
"""The operator's console (issue 14 items 2, 3, 4, 7 and 10; issue 15 item 1,
`disabled`): the TUI's r, x y / x s, P, the endings pane, the retry
countdown, SIGHUP reloading the config, disabled servers, `mcptop end
--session ID` and `check --json` on a fleet with a disabled server.

mcptop runs in tmux (mcptest.Tui: keys with send-keys, the screen with
capture-pane) against the fault lab (tests/faultlab, 127.0.0.1 only) and
tests/stdio/fake.mjs children. Each scenario gets endpoints of its own
(scenario.key) and, after it, checks that every session the lab issued got
its DELETE (sessions issued == sessions ended) and that no child, process
group or mcptop process is left. Every wait is bounded and waits for the
state it asserts; the "nothing happens" checks sample the lab over a bounded
window.

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_tui_console.py
"""

import json
import os
import re
import signal
import sys
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402
import scenario as sc  # noqa: E402
from mcptest import table_cell, table_row, selected_name, header_counts  # noqa: E402

rep = mcptest.Reporter("the operator's console: r, x y / x s, P, endings, retry, SIGHUP, "
                       "disabled, end --session (TUI in tmux, fault lab, stdio fakes)")

PING_S = 1              # ping interval of every fleet here
START_WAIT = 20.0       # the first screen with every row settled
KEY_WAIT = 5.0          # a key's effect on the screen
STILL_S = 2.0           # how long "nothing is dialed" is watched
ENDING_OUTCOMES_STDIO = ("exited", "signalled", "killed")


# --------------------------------------------------------------------------
# helpers


def config(servers):
    return mcptest.write_config(servers, mcptop={"ping_interval_s": PING_S})


def spawn_log():
    path = mcptest.write_file("", suffix=".spawn")
    return path


def spawned(path):
    return sc.pids_in(path)


def kid(marker, log, **decl):
    """A healthy stdio fake that logs its pid at start."""
    return sc.fake("healthy", marker, "--spawn-log=%s" % log, **decl)


def session_of(text, name):
    return table_cell(text, name, "SESSION") or ""


def reachable(s, name):
    return table_cell(s, name, "LIVENESS") == "\u25cf reachable"


def has_session(name):
    """Predicate: name's row is reachable with a lab session id shown."""
    return lambda s: reachable(s, name) and session_of(s, name).startswith("lab-")


def has_pid(name):
    """Predicate: name's row is reachable with a child's pid shown."""
    return lambda s: reachable(s, name) and re.fullmatch(r"pid \d+", session_of(s, name)) is not None


def pid_of(text, name):
    m = re.fullmatch(r"pid (\d+)", session_of(text, name))
    return int(m.group(1)) if m else None


def start(c, cfg, ready):
    """mcptop -c cfg in tmux; waits (bounded) until every predicate holds."""
    t = mcptest.Tui(["-c", cfg])
    t.expect(c, ready, START_WAIT, require=True)
    return t


def row_names(text):
    """The names of the table's rows, top to bottom."""
    lines = text.split("\n")
    out = []
    for k, line in enumerate(lines):
        if " NAME" in line and "HEALTH" in line:
            for row in lines[k + 1:]:
                cells = row[3:].split()
                if not cells:
                    break
                out.append(cells[0])
            break
    return out


def select(c, t, name):
    """Move the selection to name's row with Up and Down, as a user would,
    each key's effect waited for."""
    text = t.screen()
    for _ in range(40):
        names, cur = row_names(text), selected_name(text)
        if cur == name:
            return
        if name in names and cur in names:
            t.keys("Down" if names.index(name) > names.index(cur) else "Up")
            text, _ = t.wait(lambda s: selected_name(s) != cur, 2.0)
        else:
            time.sleep(0.1)
            text = t.screen()
    c.attach("--- screen ---\n" + text)
    c.fatal("could not select %s" % name)


def status_line(text):
    lines = text.rstrip("\n").split("\n")
    return lines[-1] if lines else ""


def endings_rows(text):
    """(server, outcome, line) for each row of the endings pane."""
    out = []
    for line in text.split("\n"):
        m = re.match(r"^\d\d:\d\d:\d\d (\S+)\s+(\S+)", line)
        if m:
            out.append((m.group(1), m.group(2), line))
    return out


def in_endings(t, c, checks):
    """e: the endings pane; expect checks on it; e: back to the table."""
    t.keys("e")
    text = t.expect(c, [("the endings pane is shown", lambda s: "ENDINGS" in s)] + checks)
    t.keys("e")
    t.wait(lambda s: "HEALTH" in s)
    return text


def lab_counts(k):
    return sc.counts_of(k)


def wait_lab(k, pred, timeout=KEY_WAIT):
    """Poll the lab's counts of endpoint k until pred holds: (counts, held)."""
    deadline = time.monotonic() + timeout
    while True:
        cnt = lab_counts(k)
        try:
            if pred(cnt):
                return cnt, True
        except Exception:
            pass
        if time.monotonic() >= deadline:
            return cnt, False
        time.sleep(0.1)


def issued(cnt):
    return cnt.get("sessions_issued", 0)


def ended(cnt):
    return cnt.get("sessions_ended", 0)


def traffic(cnt):
    """What reached the endpoint, in a form to compare over time."""
    return (cnt.get("POST", 0), cnt.get("GET", 0), cnt.get("DELETE", 0), issued(cnt))


def session_traffic(cnt):
    return (cnt.get("DELETE", 0), issued(cnt), ended(cnt))


def still(k, seconds, what, of=traffic):
    """Sample endpoint k for `seconds`: None when nothing (by default: no
    request at all; of=session_traffic: no DELETE, no new session) reached
    it, else why."""
    first = of(lab_counts(k))
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        time.sleep(0.2)
        now = of(lab_counts(k))
        if now != first:
            return "%s: the lab's counts moved %r -> %r" % (what, first, now)
    return None


def after_scenario(c, keys, marker, sampler):
    """The invariants after every scenario (mcptop has exited)."""
    sc.balanced(c, keys, timeout=3.0)
    sc.nothing_left(c, marker, sampler)


def lab_initialize(k):
    """A session of another client: initialize POSTed with urllib. Its id."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "another-client", "version": "1.0"}}}).encode()
    req = urllib.request.Request(sc.lab().url(k), data=body, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    with urllib.request.urlopen(req, timeout=5) as r:
        sid = r.headers.get("Mcp-Session-Id")
        r.read()
    if not sid:
        raise mcptest.SetupError("the lab issued no Mcp-Session-Id on %s" % k)
    return sid


# --------------------------------------------------------------------------
# item 2: r ends the old session first


def case_redial(c):
    L = sc.lab()
    k = sc.key("/healthy")
    marker = sc.new_marker("mcptest-console")
    log = spawn_log()
    sampler = sc.GroupSampler(marker)
    cfg = config({"web": {"url": L.url(k)}, "kid": kid(marker, log)})
    t = start(c, cfg, [("web has a session", has_session("web")),
                       ("kid has a child", has_pid("kid"))])
    try:
        select(c, t, "web")
        for i in range(1, 6):
            before = session_of(t.screen(), "web")
            t.keys("r")
            if i == 1:
                t.expect(c, [("r says the old session is ended first",
                              lambda s: "ending the session of web first, then dialing"
                              in status_line(s))])
            cnt, ok = wait_lab(k, lambda n: issued(n) == i + 1 and ended(n) == i)
            c.require(ok, "r #%d: the lab saw the old session ended and a new one issued "
                      "(issued %d, ended %d; want %d, %d)" % (i, issued(cnt), ended(cnt), i + 1, i))
            t.expect(c, [("r #%d: web shows a new session id" % i,
                          lambda s: has_session("web")(s) and session_of(s, "web") != before)],
                     require=True)
        cnt = lab_counts(k)
        c.check(issued(cnt) == 6 and ended(cnt) == 5,
                "after 5 r: 6 sessions issued, 5 ended, one open (got %d, %d)"
                % (issued(cnt), ended(cnt)))
        in_endings(t, c, [
            ("the endings pane lists 5 endings of web, each terminated with HTTP 200",
             lambda s: len([r for r in endings_rows(s) if r[0] == "web" and r[1] == "terminated"
                            and "HTTP 200" in r[2]]) == 5),
        ])
        t.expect(c, [("web's history strip marks the endings (e)",
                      lambda s: "e" in (table_cell(s, "web", "HISTORY") or ""))])

        # stdio: the shutdown sequence, then a new child
        select(c, t, "kid")
        text = t.screen()
        old = pid_of(text, "kid")
        c.require(old is not None and spawned(log) == [old],
                  "kid's pid is shown and is the one child spawned (%r, log %r)"
                  % (old, spawned(log)))
        t.keys("r")
        t.expect(c, [("r on kid: a new child's pid is shown",
                      lambda s: has_pid("kid")(s) and pid_of(s, "kid") != old)], require=True)
        new = pid_of(t.screen(), "kid")
        gone = sc.wait_until(lambda: not sc.alive(old), 3.0)
        c.check(gone, "the old child %d is gone" % old)
        # The pid is shown from the spawn on; the child logs itself once it runs.
        sc.wait_until(lambda: len(spawned(log)) >= 2, 3.0)
        c.check(spawned(log) == [old, new], "exactly one new child was spawned: %r, shown %r"
                % (spawned(log), new))
        in_endings(t, c, [
            ("the endings pane shows kid's ending by the shutdown sequence (%s)"
             % "/".join(ENDING_OUTCOMES_STDIO),
             lambda s: [r[1] for r in endings_rows(s) if r[0] == "kid"] != [] and
             all(r[1] in ENDING_OUTCOMES_STDIO for r in endings_rows(s) if r[0] == "kid")),
        ])
    finally:
        t.close(c)
    cnt, _ = wait_lab(k, lambda n: ended(n) == 6, 3.0)
    c.check(issued(cnt) == 6 and ended(cnt) == 6,
            "by the end of the run: 6 sessions issued, 6 ended (got %d, %d)"
            % (issued(cnt), ended(cnt)))
    after_scenario(c, [k], marker, sampler)


# --------------------------------------------------------------------------
# item 3: x asks reconnect or stop; P pauses and resumes


def case_stop_reconnect_pause(c):
    L = sc.lab()
    k = sc.key("/healthy")
    marker = sc.new_marker("mcptest-console")
    log = spawn_log()
    sampler = sc.GroupSampler(marker)
    cfg = config({"svc": {"url": L.url(k)}, "kid": kid(marker, log)})
    t = start(c, cfg, [("svc has a session", has_session("svc")),
                       ("kid has a child", has_pid("kid"))])
    try:
        select(c, t, "svc")
        # x s: end and stop
        t.keys("x")
        t.expect(c, [("x asks: y end and reconnect, s end and stop",
                      lambda s: "y: end and reconnect" in s and "s: end and stop" in s)],
                 require=True)
        t.keys("s")
        t.expect(c, [("x s: the row says stopped", lambda s: session_of(s, "svc") == "stopped"),
                     ("x s: the status line says it stays stopped until r",
                      lambda s: "stopping it until r" in status_line(s))], require=True)
        cnt, ok = wait_lab(k, lambda n: ended(n) == 1)
        c.check(ok and issued(cnt) == 1, "x s: the session was ended (DELETE seen), none issued "
                "since (issued %d, ended %d)" % (issued(cnt), ended(cnt)))
        why = still(k, STILL_S, "a stopped server")
        c.check(why is None, why or "")
        t.expect(c, [("still stopped after %.0f s" % STILL_S,
                      lambda s: session_of(s, "svc") == "stopped")])
        # r dials it again
        t.keys("r")
        cnt, ok = wait_lab(k, lambda n: issued(n) == 2)
        c.check(ok, "r on a stopped server dials it again (issued %d)" % issued(cnt))
        t.expect(c, [("r: svc has a session again", has_session("svc"))], require=True)
        before = session_of(t.screen(), "svc")
        # x y: end and reconnect
        t.keys("x")
        t.expect(c, [("x asks again", lambda s: "s: end and stop" in s)], require=True)
        t.keys("y")
        t.expect(c, [("x y: the status line says it dials again",
                      lambda s: "dialing it again" in status_line(s))])
        cnt, ok = wait_lab(k, lambda n: issued(n) == 3 and ended(n) == 2)
        c.check(ok, "x y: the session ended and a new one issued (issued %d, ended %d)"
                % (issued(cnt), ended(cnt)))
        t.expect(c, [("x y: a new session id", lambda s: has_session("svc")(s)
                      and session_of(s, "svc") != before)], require=True)
        sid = session_of(t.screen(), "svc")
        # P pauses: no pings for a few intervals
        t.keys("P")
        t.expect(c, [("P: the row says paused", lambda s: session_of(s, "svc") == "paused"),
                     ("P: the status line says so",
                      lambda s: "monitoring paused" in status_line(s))], require=True)
        pings = lab_counts(k).get("methods", {}).get("ping", 0)
        why = still(k, 3 * PING_S, "a paused server (%d ping intervals)" % 3)
        c.check(why is None, why or "")
        t.expect(c, [("still paused", lambda s: session_of(s, "svc") == "paused")])
        # P again resumes: pings come back, on the same session
        t.keys("P")
        t.expect(c, [("P again: monitoring resumed", lambda s: "monitoring resumed" in status_line(s))])
        cnt, ok = wait_lab(k, lambda n: n.get("methods", {}).get("ping", 0) > pings,
                           2 * PING_S + 3)
        c.check(ok, "pings reach the lab again after P (ping count %d -> %d)"
                % (pings, cnt.get("methods", {}).get("ping", 0)))
        c.check(issued(cnt) == 3, "resuming kept the session (issued %d, want 3)" % issued(cnt))
        t.expect(c, [("resumed on the same session %s" % sid, lambda s: session_of(s, "svc") == sid)])
    finally:
        t.close(c)
    after_scenario(c, [k], marker, sampler)


# --------------------------------------------------------------------------
# item 4: an ending's answer is not the server's failure


def case_ending_answers(c):
    L = sc.lab()
    k405 = sc.key("/healthy?delete=405")
    khang = sc.key("/healthy?delete=hang")
    marker = sc.new_marker("mcptest-console")
    log = spawn_log()
    sampler = sc.GroupSampler(marker)
    cfg = config({"nodel": {"url": L.url(k405)},
                  "hangdel": {"url": L.url(khang), "teardown_ms": 1000},
                  "kid": kid(marker, log)})
    t = start(c, cfg, [("nodel has a session", has_session("nodel")),
                       ("hangdel has a session", has_session("hangdel")),
                       ("kid has a child", has_pid("kid"))])
    try:
        select(c, t, "nodel")
        t.keys("x")
        t.expect(c, [("x asks", lambda s: "y: end and reconnect" in s)], require=True)
        t.keys("y")
        cnt, ok = wait_lab(k405, lambda n: ended(n) == 1 and issued(n) == 2)
        c.check(ok, "x y on nodel: DELETE sent (answered 405), then dialed again "
                "(issued %d, ended %d)" % (issued(cnt), ended(cnt)))

        def strip_ok(s):
            h = table_cell(s, "nodel", "HISTORY") or ""
            return "e" in h and set(h) <= {"\u2588", "e"}
        t.expect(c, [
            ("nodel reachable with a session after the 405", has_session("nodel")),
            ("nodel: LAST FAILURE stays empty", lambda s: table_cell(s, "nodel", "LAST FAILURE") == ""),
            ("nodel: no HTTP status shown", lambda s: table_cell(s, "nodel", "HTTP") == ""),
            ("nodel: the history strip has the ending mark e and no failure bar", strip_ok),
            ("the header counts no down or unknown server",
             lambda s: header_counts(s).get("down") == 0 and header_counts(s).get("unknown") == 0),
        ])
        in_endings(t, c, [("the endings pane says not_allowed (HTTP 405) for nodel",
                           lambda s: any(r[0] == "nodel" and r[1] == "not_allowed" and "405" in r[2]
                                         for r in endings_rows(s)))])

        select(c, t, "hangdel")
        t.keys("x")
        t.expect(c, [("x asks", lambda s: "y: end and reconnect" in s)], require=True)
        t.keys("y")
        t.expect(c, [
            ("hangdel: a DELETE that hangs past the teardown shows a failure marked 'ending:'",
             lambda s: (table_cell(s, "hangdel", "LAST FAILURE") or "").startswith("ending: timeout")),
            ("hangdel dialed again after its ending", has_session("hangdel")),
        ], timeout=1.0 + KEY_WAIT, require=True)
        in_endings(t, c, [("the endings pane says timed_out for hangdel",
                           lambda s: any(r[0] == "hangdel" and r[1] == "timed_out"
                                         for r in endings_rows(s)))])
        cnt = lab_counts(khang)
        c.check(issued(cnt) == 2 and ended(cnt) == 1,
                "hangdel: the hung DELETE reached the lab, a new session followed (issued %d, "
                "ended %d)" % (issued(cnt), ended(cnt)))
    finally:
        t.close(c)
    after_scenario(c, [k405, khang], marker, sampler)


# --------------------------------------------------------------------------
# item 7: the retry countdown; SIGHUP reloads the config


def case_retry_and_reload(c):
    L = sc.lab()
    kkeep, kgone, kadd = sc.key("/healthy"), sc.key("/healthy"), sc.key("/healthy")
    marker = sc.new_marker("mcptest-console")
    log = spawn_log()
    sampler = sc.GroupSampler(marker)
    down = "http://127.0.0.1:%d/mcp" % mcptest.free_port()
    servers = {"keep": {"url": L.url(kkeep)}, "gone": {"url": L.url(kgone)},
               "down": {"url": down}, "kid": kid(marker, log)}
    cfg = config(servers)
    t = start(c, cfg, [("keep has a session", has_session("keep")),
                       ("gone has a session", has_session("gone")),
                       ("kid has a child", has_pid("kid")),
                       ("down is unreachable", lambda s: "connect_refused" in (table_row(s, "down") or ""))])
    try:
        # The backoff's next attempt, counting down.
        def retry(s):
            m = re.fullmatch(r"retry (\d+)s", session_of(s, "down"))
            return int(m.group(1)) if m else None
        text, ok = t.wait(lambda s: (retry(s) or 0) >= 2, 8.0)
        c.require(ok, "down shows 'retry Ns' with N >= 2 during its backoff:\n%s"
                  % table_row(text, "down"))
        n = retry(text)
        t.expect(c, [("the retry counts down from %ds" % n,
                      lambda s: retry(s) is not None and 1 <= retry(s) < n)], timeout=n + 1.0)

        # SIGHUP after editing the file: gone removed, added added.
        text = t.screen()
        keep_sid, kid_pid = session_of(text, "keep"), pid_of(text, "kid")
        del servers["gone"]
        servers["added"] = {"url": L.url(kadd)}
        write_fleet(cfg, servers)
        sighup(c, t)
        t.expect(c, [
            ("the status line says the config was reloaded",
             lambda s: "config reloaded (SIGHUP)" in status_line(s)),
            ("the removed server's row is gone", lambda s: table_row(s, "gone") is None),
            ("the added server appears and dials", has_session("added")),
            ("the unchanged server keeps its session %s" % keep_sid,
             lambda s: session_of(s, "keep") == keep_sid),
            ("the unchanged stdio server keeps its child %s" % kid_pid,
             lambda s: pid_of(s, "kid") == kid_pid),
            ("down is still there", lambda s: table_row(s, "down") is not None),
            ("4 servers", lambda s: "4 servers" in s.split("\n")[0]),
        ], require=True)
        cnt, ok = wait_lab(kgone, lambda n: issued(n) == 1 and ended(n) == 1)
        c.check(ok, "the removed server's session was DELETEd (issued %d, ended %d)"
                % (issued(cnt), ended(cnt)))
        cnt = lab_counts(kadd)
        c.check(issued(cnt) == 1, "the added server dialed once (issued %d)" % issued(cnt))
        cnt = lab_counts(kkeep)
        c.check(issued(cnt) == 1 and ended(cnt) == 0,
                "the unchanged server was not redialed (issued %d, ended %d)"
                % (issued(cnt), ended(cnt)))
        c.check(spawned(log) == [kid_pid], "the unchanged stdio server was not respawned: %r"
                % spawned(log))
    finally:
        t.close(c)
    after_scenario(c, [kkeep, kgone, kadd], marker, sampler)


def write_fleet(path, servers):
    """Rewrite the config file in place (atomically), as an editor would save it."""
    tmp = path + ".new"
    with open(tmp, "w") as f:
        json.dump({"mcpServers": servers, "mcptop": {"ping_interval_s": PING_S}}, f)
    os.replace(tmp, path)


def sighup(c, t):
    pids = t.mcptop_pids()
    c.require(len(pids) == 1, "one mcptop process in the pane: %r" % pids)
    os.kill(pids[0], signal.SIGHUP)


def case_reload_while_asking(c):
    """SIGHUP while x asks about a row, with a filter and a reversed sort:
    the question (which named a row by number) is withdrawn, y then ends
    nothing, and the sort, filter and selection stay."""
    L = sc.lab()
    ka, kb, kc = sc.key("/healthy"), sc.key("/healthy"), sc.key("/healthy")
    marker = sc.new_marker("mcptest-console")
    log = spawn_log()
    sampler = sc.GroupSampler(marker)
    servers = {"alpha": {"url": L.url(ka), "tags": ["blue"]},
               "bravo": {"url": L.url(kb), "tags": ["blue"]},
               "charlie": {"url": L.url(kc), "tags": ["red"]},
               "kid": kid(marker, log, tags=["red"])}
    cfg = config(servers)
    t = start(c, cfg, [(n + " has a session", has_session(n)) for n in ("alpha", "bravo", "charlie")]
              + [("kid has a child", has_pid("kid"))])
    try:
        t.keys("/")
        t.tmux("send-keys", "-l", "tag:blue")
        t.keys("Enter")
        t.keys("I")
        t.expect(c, [("the filter shows alpha and bravo only",
                      lambda s: table_row(s, "alpha") and table_row(s, "bravo") and not table_row(s, "charlie")),
                     ("the sort is reversed (name \u25b4)", lambda s: "sort name \u25b4" in s)], require=True)
        select(c, t, "alpha")
        t.keys("x")
        t.expect(c, [("x asks about alpha", lambda s: "End the session of alpha?" in s)], require=True)
        del servers["bravo"]
        write_fleet(cfg, servers)
        sighup(c, t)
        t.expect(c, [
            ("the config is reloaded", lambda s: "config reloaded (SIGHUP)" in status_line(s)),
            ("the question is withdrawn", lambda s: "End the session" not in s),
            ("mcptop still runs", lambda s: "__EXIT=" not in s),
            ("bravo is gone", lambda s: table_row(s, "bravo") is None),
            ("the filter stays (charlie still hidden)", lambda s: table_row(s, "charlie") is None
             and 'filter "tag:blue"' in s.split("\n")[0]),
            ("the sort stays reversed", lambda s: "sort name \u25b4" in s.split("\n")[0]),
            ("alpha stays selected", lambda s: selected_name(s) == "alpha"),
        ], require=True)
        cnt, ok = wait_lab(kb, lambda n: ended(n) == 1)
        c.check(ok, "the removed server's session was ended")
        t.keys("y")
        why = still(ka, 1.0, "y after the withdrawn question (DELETE, issued, ended)",
                    of=session_traffic)
        c.check(why is None, why or "")
        c.check(ended(lab_counts(ka)) == 0, "y after the withdrawn question ends nothing")
        t.expect(c, [("alpha keeps its session", has_session("alpha"))])
    finally:
        t.close(c)
    after_scenario(c, [ka, kb, kc], marker, sampler)


def case_reload_while_quitting(c):
    """SIGHUP while q's endings run (a DELETE that hangs): no reload, so no
    server is added and left with a session open."""
    L = sc.lab()
    khang, klate = sc.key("/healthy?delete=hang"), sc.key("/healthy")
    servers = {"slow": {"url": L.url(khang), "teardown_ms": 2000}}
    cfg = config(servers)
    t = start(c, cfg, [("slow has a session", has_session("slow"))])
    try:
        t.keys("q")
        t.expect(c, [("q: the quit waits for the hung DELETE", lambda s: "quitting: ending" in s)],
                 require=True)
        servers["late"] = {"url": L.url(klate)}
        write_fleet(cfg, servers)
        sighup(c, t)
        text, ok = t.wait(lambda s: "__EXIT=" in s, 2.0 + 1.0 + KEY_WAIT)
        c.check(ok and "__EXIT=0__" in text, "mcptop quits with exit code 0 after the teardown")
        c.check("late" not in text, "no server was added during the quit")
    finally:
        t.close(c)
    cnt = lab_counts(klate)
    c.check(issued(cnt) == 0, "the server named after q was never dialed (issued %d, ended %d)"
            % (issued(cnt), ended(cnt)))
    sc.balanced(c, [khang, klate], timeout=3.0)


# --------------------------------------------------------------------------
# issue 25: the state column and the header counts are health


def health_of(text, name):
    return table_cell(text, name, "HEALTH") or ""


def counted(**want):
    """Predicate: the header counts exactly these (every other health 0)."""
    full = dict(dict.fromkeys(mcptest.HEALTH_WORDS, 0), **want)
    return lambda s: header_counts(s) == full


def at_widths(c, t, checks, widths=(80, 160)):
    """The same checks at each width (the window resized to it)."""
    for cols in widths:
        t.resize(cols, 30)
        t.expect(c, [("%d cols: %s" % (cols, d), lambda s, p=p, cols=cols:
                      max(len(l) for l in s.split("\n")) <= cols and p(s))
                     for d, p in checks], require=True)


def not_current(name):
    """Predicate: name's row shows no observation as current: no liveness,
    round trip or failure in the cells that are shown."""
    def pred(s):
        return all((table_cell(s, name, col) or "") == ""
                   for col in ("LIVENESS", "RTT ms", "LAST FAILURE", "HTTP"))
    return pred


def case_health_operator_states(c):
    L = sc.lab()
    ksvc, kother = sc.key("/healthy"), sc.key("/healthy")
    marker = sc.new_marker("mcptest-console")
    sampler = sc.GroupSampler(marker)
    cfg = config({"svc": {"url": L.url(ksvc)}, "other": {"url": L.url(kother)}})
    t = mcptest.Tui(["-c", cfg], cols=160)
    try:
        t.expect(c, [("svc has a session", has_session("svc")),
                     ("other has a session", has_session("other")),
                     ("HEALTH says ok", lambda s: health_of(s, "svc") == "\u25cf ok"),
                     ("the header counts ok 2", counted(ok=2))], START_WAIT, require=True)
        select(c, t, "svc")
        # P: paused, at both widths; the header moves one from ok to paused.
        t.keys("P")
        at_widths(c, t, [
            ("P: svc's state column says paused",
             lambda s: health_of(s, "svc") == "\u2016 paused"),
            ("P: the header counts ok 1, paused 1", counted(ok=1, paused=1)),
            ("P: svc's row shows no observation as current", not_current("svc")),
            ("P: svc's AGE says how long it has been paused",
             lambda s: re.fullmatch(r"\d+s", table_cell(s, "svc", "AGE") or "") is not None),
            ("other stays ok", lambda s: health_of(s, "other") == "\u25cf ok"),
        ])
        t.keys("Enter")
        t.expect(c, [("the detail pane says paused, and the last observation is history",
                      lambda s: re.search(r"health\s+\u2016 paused", s) is not None
                      and "history" in s)])
        t.keys("Enter")
        t.keys("P")
        t.expect(c, [("P again: ok again, the header counts ok 2",
                      lambda s: health_of(s, "svc") == "\u25cf ok" and counted(ok=2)(s))],
                 require=True)
        # x s: stopped, at both widths.
        t.keys("x")
        t.expect(c, [("x asks", lambda s: "s: end and stop" in s)], require=True)
        t.keys("s")
        at_widths(c, t, [
            ("x s: svc's state column says stopped",
             lambda s: health_of(s, "svc") == "\u25a0 stopped"),
            ("x s: the header counts ok 1, stopped 1", counted(ok=1, stopped=1)),
            ("x s: svc's row shows no observation as current", not_current("svc")),
        ], widths=(160, 80))
        # Sorted by health, the stopped server goes below the ok one.
        t.keys("H")
        t.expect(c, [("H sorts by health: other (ok) above svc (stopped)",
                      lambda s: "sort health" in s.split("\n")[0]
                      and row_names(s) == ["other", "svc"])])
        t.keys("r")
        t.expect(c, [("r: svc ok again", lambda s: health_of(s, "svc") == "\u25cf ok"
                      and counted(ok=2)(s))], require=True)
    finally:
        t.close(c)
    after_scenario(c, [ksvc, kother], marker, sampler)


def case_health_degraded_and_gateway(c):
    L = sc.lab()
    kh, krpc, kgw = sc.key("/healthy"), sc.key("/rpcerror/ping"), sc.key("/html502/ping")
    marker = sc.new_marker("mcptest-console")
    sampler = sc.GroupSampler(marker)
    cfg = config({"healthy": {"url": L.url(kh)}, "rpc-errors": {"url": L.url(krpc)},
                  "gateway-502": {"url": L.url(kgw)}})
    t = mcptest.Tui(["-c", cfg], cols=80)
    try:
        fail = lambda s: table_cell(s, "gateway-502", "LAST FAILURE") or ""
        text = t.expect(c, [
            ("80 cols: JSON-RPC errors to ping: rpc-errors is degraded",
             lambda s: health_of(s, "rpc-errors") == "\u25d0 degraded"),
            ("80 cols: healthy is ok", lambda s: health_of(s, "healthy") == "\u25cf ok"),
            ("80 cols: the HTTP column gave way", lambda s: "HTTP" not in s.split("\n")[3]),
            ("80 cols: gateway-502's failure cell says 502 bad gateway with its streak",
             lambda s: re.fullmatch(r"502 bad gateway \u00d7\d+", fail(s)) is not None),
            ("80 cols: the header counts ok 1, degraded 1, unknown 1",
             counted(ok=1, degraded=1, unknown=1)),
            ("80 cols: no line is wider than the screen",
             lambda s: max(len(l) for l in s.split("\n")) <= 80),
        ], START_WAIT)
        c.attach("--- screen ---\n" + text)
        t.resize(160, 30)
        t.expect(c, [
            ("160 cols: the HTTP column is back with the status",
             lambda s: (table_cell(s, "gateway-502", "HTTP") or "") == "502 bad gateway"),
            ("160 cols: LAST FAILURE names the kind", lambda s: fail(s).startswith("http_status")),
            ("160 cols: LIVENESS shows beside HEALTH: rpc-errors reachable but degraded",
             lambda s: (table_cell(s, "rpc-errors", "LIVENESS") or "") == "\u25cf reachable"
             and health_of(s, "rpc-errors") == "\u25d0 degraded"),
        ])
    finally:
        t.close(c)
    after_scenario(c, [kh, krpc, kgw], marker, sampler)


# --------------------------------------------------------------------------
# issue 15 item 1: disabled


def case_disabled(c):
    L = sc.lab()
    klive, koff = sc.key("/healthy"), sc.key("/healthy")
    marker = sc.new_marker("mcptest-console")
    log = spawn_log()
    sampler = sc.GroupSampler(marker)
    cfg = config({"live": {"url": L.url(klive)},
                  "off": {"url": L.url(koff), "disabled": True},
                  "offkid": kid(marker, log, disabled=True)})
    t = start(c, cfg, [("live has a session", has_session("live")),
                       ("off shows disabled", lambda s: session_of(s, "off") == "disabled"),
                       ("offkid shows disabled", lambda s: session_of(s, "offkid") == "disabled")])
    try:
        t.expect(c, [
            ("no failure counted in the header (down 0, unknown 0)",
             lambda s: header_counts(s).get("down") == 0 and header_counts(s).get("unknown") == 0),
            ("no incident", lambda s: "incidents: none" in s),
            ("off has no failure", lambda s: table_cell(s, "off", "LAST FAILURE") == ""),
        ])
        why = still(koff, STILL_S, "a disabled server")
        c.check(why is None, why or "")
        c.check(traffic(lab_counts(koff)) == (0, 0, 0, 0),
                "a disabled server is never dialed: %r" % (lab_counts(koff),))
        c.check(spawned(log) == [] and sc.marked(marker) == [],
                "a disabled stdio server is never spawned: %r" % spawned(log))
        select(c, t, "off")
        t.keys("x")
        t.expect(c, [("x on a disabled server says why nothing is ended",
                      lambda s: "disabled in the config" in status_line(s))])
        t.keys("r")
        t.expect(c, [("r enables it for the run", lambda s: "off enabled for this run" in status_line(s)),
                     ("and it dials", has_session("off"))], require=True)
        c.check(issued(lab_counts(koff)) == 1, "r: the enabled server dialed once")
        select(c, t, "offkid")
        t.keys("r")
        t.expect(c, [("r on the disabled stdio server starts its child", has_pid("offkid"))],
                 require=True)
        sc.wait_until(lambda: spawned(log), 3.0)
        c.check(len(spawned(log)) == 1, "one child spawned: %r" % spawned(log))
    finally:
        t.close(c)
    after_scenario(c, [klive, koff], marker, sampler)


# --------------------------------------------------------------------------
# issue 14 item 10: end --session ID


def case_end_session(c):
    L = sc.lab()
    k, kother = sc.key("/healthy"), sc.key("/healthy")
    marker = sc.new_marker("mcptest-console")
    log = spawn_log()
    url = L.url(k)
    two = config({"a": {"url": url}, "b": {"url": L.url(kother)}})
    withkid = config({"a": {"url": url}, "kid": kid(marker, log)})
    sid = lab_initialize(k)

    r = mcptest.run_mcptop(["end", "--session", sid, "-c", two], timeout=20)
    c.no_crash(r)
    c.check(r.rc == 2 and "--session" in r.stderr, "--session with two servers and no --server "
            "is a usage error (exit 2): %s" % r.describe())
    r = mcptest.run_mcptop(["end", "--session", sid, "-c", withkid, "--server", "kid"], timeout=20)
    c.no_crash(r)
    c.check(r.rc == 2 and "cannot end a session by id" in r.stderr,
            "--session on a stdio server is a usage error (exit 2): %s" % r.describe())
    c.check(spawned(log) == [] and sc.marked(marker) == [], "nothing was spawned for it: %r"
            % spawned(log))
    r = mcptest.run_mcptop(["end", "--session"], timeout=20)
    c.check(r.rc == 2, "--session without an id is a usage error (exit 2): %s" % r.describe())
    cnt = lab_counts(k)
    c.check(cnt.get("DELETE", 0) == 0 and ended(cnt) == 0 and cnt.get("POST", 0) == 1,
            "the usage errors sent nothing (POST %d, DELETE %d)" % (cnt.get("POST", 0),
                                                                   cnt.get("DELETE", 0)))

    r = mcptest.run_mcptop(["end", "--session", sid, url], timeout=20)
    c.attach(r.describe())
    c.no_crash(r)
    out = r.stdout + r.stderr
    c.check(r.rc == 0, "end --session ID URL exits 0 (exit %s)" % r.rc)
    c.check(re.search(r"\bterminated\b", r.stdout) is not None, "the ending is terminated")
    c.check(sid not in out, "the session id is never printed whole")
    c.check(sid[:8] in r.stdout, "its prefix %r is printed" % sid[:8])
    cnt = lab_counts(k)
    c.check(ended(cnt) == 1 and issued(cnt) == 1 and cnt.get("POST", 0) == 1,
            "the lab saw that session ended and nothing dialed (issued %d, ended %d, POST %d)"
            % (issued(cnt), ended(cnt), cnt.get("POST", 0)))

    sid2 = lab_initialize(k)
    r = mcptest.run_mcptop(["end", "--json", "--session", sid2, url], timeout=20)
    c.attach(r.describe())
    c.no_crash(r)
    lines = sc.endings_of(r.stdout)
    c.check(r.rc == 0 and len(lines) == 1, "--json: exit 0, one JSON line (exit %s, %d lines)"
            % (r.rc, len(lines)))
    e = lines[0] if lines else {}
    c.check(e.get("outcome") == "terminated" and e.get("http_status") == 200,
            "--json: outcome terminated, HTTP 200: %r" % e)
    c.check(sid2 not in r.stdout + r.stderr and sid2[:8] in str(e.get("detail")),
            "--json: only the id's prefix %r is shown (detail %r)" % (sid2[:8], e.get("detail")))
    c.check(ended(lab_counts(k)) == 2, "the lab saw the second session ended")

    sid3 = lab_initialize(k)
    r = mcptest.run_mcptop(["end", "--session", sid3, "-c", two, "--server", "a"], timeout=20)
    c.attach(r.describe())
    c.no_crash(r)
    c.check(r.rc == 0 and re.search(r"\bterminated\b", r.stdout) is not None and sid3 not in r.stdout,
            "end --session ID -c FILE --server NAME ends it too")
    c.check(ended(lab_counts(k)) == 3 and traffic(lab_counts(kother)) == (0, 0, 0, 0),
            "the lab saw the third session ended; the other server was not touched")
    sc.balanced(c, [k, kother])
    sc.nothing_left(c, marker)


# --------------------------------------------------------------------------
# check --json: a disabled server is neither ok nor a failure


def case_check_disabled(c):
    L = sc.lab()
    klive, koff = sc.key("/healthy"), sc.key("/healthy")
    marker = sc.new_marker("mcptest-console")
    log = spawn_log()
    off = {"off": {"url": L.url(koff), "disabled": True},
           "offkid": kid(marker, log, disabled=True)}
    # --timeout 20000: the check's own bound is past 40 s, so a check that
    # waited for a disabled server's dial shows as this run's 15 s timeout.
    r, by = sc.check_json(c, dict(off, live={"url": L.url(klive)}),
                          mcptop={"ping_interval_s": PING_S}, args=["--timeout", "20000"],
                          timeout=15)
    c.check(not r.timed_out, "check does not wait for a disabled server's dial")
    c.check(r.rc == 0, "exit 0: the live server is ok, the disabled ones do not count (exit %s)" % r.rc)
    c.check(mcptest.dig(by, "live", "ok") is True, "live: ok true")
    summary = (r.json() or {}).get("summary") or {}
    c.check(summary.get("disabled") == 2 and summary.get("absent") == 0 and summary.get("reachable") == 1,
            "summary: 2 disabled, none absent, 1 reachable: %r" % summary)
    for name in ("off", "offkid"):
        c.check(mcptest.dig(by, name, "state") == "disabled", "%s: state disabled" % name)
        c.check(mcptest.dig(by, name, "ok") is None, "%s: ok null (neither ok nor a failure): %r"
                % (name, mcptest.dig(by, name, "ok")))
        c.check(mcptest.dig(by, name, "liveness") is None and mcptest.dig(by, name, "last_failure") is None,
                "%s: no observation, no failure" % name)
    r, by = sc.check_json(c, off, mcptop={"ping_interval_s": PING_S}, args=["--timeout", "20000"],
                          timeout=15)
    c.check(not r.timed_out and r.rc == 0,
            "a fleet of disabled servers alone: exit 0 (exit %s, timed out %s)" % (r.rc, r.timed_out))
    # end: a disabled server has nothing to end, and counts neither way.
    both = config(dict(off, live={"url": L.url(klive)}))
    r = mcptest.run_mcptop(["end", "--json", "-c", both], timeout=20)
    c.attach(r.describe())
    c.no_crash(r)
    by = {e.get("server"): e for e in sc.endings_of(r.stdout)}
    c.check(mcptest.dig(by, "live", "outcome") == "terminated", "end: live terminated")
    for name in ("off", "offkid"):
        c.check(mcptest.dig(by, name, "outcome") is None and
                mcptest.dig(by, name, "detail") == "not dialed (disabled)",
                "end: %s not dialed (disabled): %r" % (name, by.get(name)))
    c.check(r.rc == 0, "end: exit 0, the disabled servers do not make it 1 (exit %s)" % r.rc)
    c.check(traffic(lab_counts(koff)) == (0, 0, 0, 0), "the disabled server was never dialed")
    c.check(spawned(log) == [], "the disabled stdio server was never spawned: %r" % spawned(log))
    sc.balanced(c, [klive, koff])
    sc.nothing_left(c, marker)


def main():
    try:
        mcptest.tmux_bin()
        mcptest.require_mcptop()
        sc.lab()
    except mcptest.SetupError as e:
        print("setup: %s" % e)
        print("0 passed, 1 failed")
        sys.exit(1)
    rep.run("r x5 on HTTP ends each old session (5+1 issued, all ended); r on stdio: shutdown "
            "sequence, new pid", case_redial)
    rep.run("x s stops until r; x y reconnects; P pauses and resumes", case_stop_reconnect_pause)
    rep.run("DELETE 405: not a failure, e mark, not_allowed; a hung DELETE: 'ending:' failure",
            case_ending_answers)
    rep.run("retry Ns counts down; SIGHUP: removed ended, added dialed, unchanged kept",
            case_retry_and_reload)
    rep.run("SIGHUP while x asks: the question is withdrawn; sort, filter, selection stay",
            case_reload_while_asking)
    rep.run("SIGHUP while quitting: no reload, nothing added and left open",
            case_reload_while_quitting)
    rep.run("disabled: shown, never dialed or spawned, no failure; r enables", case_disabled)
    rep.run("health: P paused and x s stopped in the state column and the header, at 80 and "
            "160 columns", case_health_operator_states)
    rep.run("health: JSON-RPC errors degraded, a 502 gateway's failure cell at 80 columns",
            case_health_degraded_and_gateway)
    rep.run("end --session ID (URL | --server NAME), --json; usage errors", case_end_session)
    rep.run("check --json and end: disabled is ok null and leaves the exit status alone",
            case_check_disabled)
    rep.finish()


if __name__ == "__main__":
    main()
