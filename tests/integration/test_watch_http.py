#!/usr/bin/env python3
"""`mcptop watch` follows one server-everything through death and rebirth.

reachable -> (server killed) -> unreachable/connect_refused -> (restarted on
the same port) -> reachable -> SIGINT -> exit 0.

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_watch_http.py
"""

import json
import os
import signal
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402

rep = mcptest.Reporter("watch over Streamable HTTP (server-everything)")

TOTAL_WAIT = 40.0   # seconds for the whole reachable -> unreachable -> reachable story
EXIT_WAIT = 5.0     # seconds for mcptop to exit after SIGINT
NAME = "everything"


def liveness(state, error_code=None):
    def pred(ev):
        if ev.get("event") != "liveness" or ev.get("server") != NAME or ev.get("state") != state:
            return False
        return error_code is None or ev.get("error_code") == error_code
    return pred


def well_formed(c, w):
    """Every line is a JSON object with ts and a known event; the fields the contract names."""
    c.check(not w.bad_lines, "every stdout line is a JSON object (%d are not)" % len(w.bad_lines))
    for ev in w.events:
        kind = ev.get("event")
        if not c.check(kind in ("exchange", "liveness", "tools_changed", "ending", "settled",
                                "server_request",
                                "health", "exit"),
                       "known event kind: %s" % json.dumps(ev)):
            break
        if kind == "exit":
            c.check(ev is w.events[-1], "the exit event is the last line")
            c.check(isinstance(ev.get("sessions_ended"), int) and
                    isinstance(ev.get("sessions_not_ended"), int), "exit counts: %s" % json.dumps(ev))
            continue
        if not c.check("ts" in ev and "server" in ev, "ts and server in %s" % json.dumps(ev)):
            break
        if kind == "health":
            if not c.check(ev.get("state") in ("ok", "degraded", "down", "unknown", "pending",
                                               "invalid", "paused", "stopped", "disabled")
                           and "was" in ev and "reason" in ev, "health event: %s" % json.dumps(ev)):
                break
        if kind == "liveness":
            if not c.check(ev.get("state") in ("reachable", "unreachable", "unknown"),
                           "liveness state: %s" % json.dumps(ev)):
                break
            if ev.get("state") != "unreachable" and ev.get("error_code") is not None:
                c.check(False, "error_code only on unreachable: %s" % json.dumps(ev))
                break
        if kind == "exchange":
            if not c.check("op" in ev and "outcome" in ev, "op and outcome in %s" % json.dumps(ev)):
                break


def watch_story(c, config_style):
    srv = mcptest.everything_http()
    if config_style == "fleet":
        cfg = mcptest.write_config({NAME: {"url": srv.url}}, mcptop={"ping_interval_s": 1})
    else:
        # per server, mcptop's keys sit at the top level of the entry (engine/config.h)
        cfg = mcptest.write_config({NAME: {"url": srv.url, "ping_interval_s": 1}})
    deadline = time.monotonic() + TOTAL_WAIT
    w = mcptest.Watch(["watch", "-c", cfg])
    try:
        ev = w.wait_for(liveness("reachable"), deadline)
        c.require(ev is not None, "a liveness event with state reachable")

        srv.kill()
        ev = w.wait_for(liveness("unreachable", "connect_refused"), deadline)
        c.require(ev is not None, "after the kill, liveness unreachable with error_code connect_refused")

        n_before_restart = len(w.events)
        srv.start()
        ev = w.wait_for(liveness("reachable"), deadline)
        if ev is None and any(e.get("http_status") == 400 for e in w.events[n_before_restart:]):
            c.attach("hint: server-everything answers 400 (not 404) to a request carrying an "
                     "Mcp-Session-Id it does not know, as after a restart; mcptop has to dial "
                     "again once the server was lost, not keep pinging with the old session id")
        c.require(ev is not None, "after the restart on port %d, liveness reachable again" % srv.port)

        c.require(w.proc.poll() is None, "mcptop watch is still running before SIGINT")
        w.signal(signal.SIGINT)
        rc = w.wait_exit(EXIT_WAIT)
        c.check(rc is not None, "mcptop exits within %.0fs of SIGINT" % EXIT_WAIT)
        c.eq(rc, 0, "exit code after SIGINT")
        err = w.stderr()
        for marker in ("Sanitizer", "runtime error:"):
            c.check(marker not in err, "no %r in stderr" % marker)
        w.close()  # joins the reader: every line is in w.events now
        well_formed(c, w)
    finally:
        if c.failures:
            c.attach(w.describe())
            c.attach("server log:\n" + srv.output()[-3000:])
        w.close()
        srv.stop()


def watch_fleet_ping_interval(c):
    watch_story(c, "fleet")


def watch_per_server_ping_interval(c):
    watch_story(c, "per_server")


def sse_server_restarts_and_recovers(c):
    """A 2024-11-05 HTTP+SSE server (server-everything in sse mode) killed
    and started again on its port: during the outage the failure is what
    happened (a refused connection, not the first dial's stale "HTTP 404 to
    initialize"), and once it is back the server is reachable again by
    itself (it used to stay unknown until mcptop was restarted)."""
    srv = mcptest.everything_sse()
    cfg = mcptest.write_config({NAME: {"url": srv.url}}, mcptop={"ping_interval_s": 1})
    w = mcptest.Watch(["watch", "-c", cfg])
    try:
        c.require(w.wait_for(liveness("reachable"), time.monotonic() + 20) is not None,
                  "reachable over HTTP+SSE")
        srv.kill()
        # A redial during the outage: what it meets is a closed port.
        down = w.wait_for(lambda e: e.get("event") == "exchange" and e.get("server") == NAME
                          and e.get("op") == "dial" and e.get("outcome") != "completed",
                          time.monotonic() + 15)
        c.require(down is not None, "a redial failed during the outage")
        c.check(down.get("http_status") is None and down.get("outcome") == "connect_refused",
                "the outage is a refused connection, not an HTTP answer: %s" % json.dumps(down))
        srv.start()
        back = w.wait_for(liveness("reachable"), time.monotonic() + 30)
        c.check(back is not None, "reachable again once the server is back")
        stale = [e for e in w.events if e.get("event") == "exchange" and
                 e.get("http_status") == 404 and e.get("op") == "dial"]
        c.check(not stale, "no dial reported a 404 it did not get: %s" %
                [json.dumps(e) for e in stale[:2]])
    finally:
        w.close()
        if c.failures:
            c.attach(w.describe(last=30))
        srv.stop()


def type_sse_selects_http_sse(c):
    """"type": "sse" (as Claude Code, Cursor and VS Code write it) dials the
    2024-11-05 HTTP+SSE transport at once: no server/discover, no POST
    initialize first; TRANS and JSON say sse. Found by the fallback, the
    same server says sse too."""
    srv = mcptest.everything_sse()
    try:
        log = mcptest.tmpdir() / ("type-sse-%d.log" % os.getpid())
        cfg = mcptest.write_config({"said": {"url": srv.url, "type": "sse"},
                                    "found": {"url": srv.url}})
        r = mcptest.run_mcptop(["check", "--json", "--log", str(log), "-c", cfg], timeout=30)
        c.attach(r.describe())
        c.eq(r.rc, 0, "check exit status")
        s = {x["name"]: x for x in r.json()["servers"]}
        for name in ("said", "found"):
            c.eq(s[name].get("transport"), "sse", "%s: transport" % name)
            c.eq(s[name].get("era"), "legacy_sse", "%s: era" % name)
            c.eq(s[name].get("health"), "ok", "%s: health" % name)
        said = [l for l in log.read_text(errors="replace").splitlines() if " said" in l or
                l.startswith("said") or "[said]" in l]
        c.attach("the said server's log lines:\n" + "\n".join(said[:20]))
        c.check(said and not any("server/discover" in l or "HTTP 40" in l for l in said),
                "no probe and no refused POST before the stream for \"type\": \"sse\"")
        c.check(any("config server said: sse" in l for l in said), "the log names it sse")
    finally:
        srv.stop()


def main():
    try:
        mcptest.require_mcptop()
        mcptest.require_node_modules()
    except mcptest.SetupError as e:
        print("setup: %s" % e)
        rep.failed += 1
        rep.finish()
    rep.run("watch_fleet_ping_interval", watch_fleet_ping_interval)
    rep.run("watch_per_server_ping_interval", watch_per_server_ping_interval)
    rep.run("sse_server_restarts_and_recovers", sse_server_restarts_and_recovers)
    rep.run("type_sse_selects_http_sse", type_sse_selects_http_sse)
    rep.finish()


if __name__ == "__main__":
    main()
