#!/usr/bin/env python3
"""Health (DESIGN.md section 4b) is one word everywhere: `mcptop check
--json`, `mcptop watch` and `mcptop serve` run on the same mixed fleet from
the fault lab and must give every server the same health, and the word the
table of section 4b gives it:

  healthy   /healthy                     ok        the exchange completed
  rpc-ping  /rpcerror/ping               degraded  pings answered -32603
  rpc-all   /rpcerror/any                down      every request answered
                                                   with a JSON-RPC error,
                                                   initialize too: "cannot
                                                   be initialized"
  refused   a closed loopback port       down      connect_refused
  gateway   /html502/dial                unknown   a gateway's 502 page
  broken    "notaurl"                    invalid   cannot be dialed
  off       /healthy, "disabled": true   disabled  not monitored

check: each server's "health" (and "ok": true exactly for ok, null for
disabled). watch: each server's last {"event":"health"} line once the
fleet has settled and before it is interrupted (quitting stops every
server, which publishes "stopped"). serve: the state label of each
server's one mcp_health series (and mcp_probe_success: 1 for ok, 0 for
the other monitored states, no sample for disabled).

Everything on 127.0.0.1; every wait is bounded.

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_health_agree.py
"""

import os
import signal
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402
from mcptest import LOOPBACK  # noqa: E402
import faultlab  # noqa: E402

rep = mcptest.Reporter("health: check, watch and serve agree")

FAST = {"timeout_ms": 1500, "open_deadline_ms": 1500, "ping_interval_s": 1}
SETTLE_WAIT = 30.0  # seconds for a front end's health to settle
STABLE_FOR = 3.0    # seconds without a change: settled (three pings)
EXIT_WAIT = 10.0

# DESIGN.md section 4b, row by row.
EXPECTED = {
    "healthy": "ok",
    "rpc-ping": "degraded",
    "rpc-all": "down",
    "refused": "down",
    "gateway": "unknown",
    "broken": "invalid",
    "off": "disabled",
}
MONITORED = {n for n, h in EXPECTED.items() if h not in ("paused", "stopped", "disabled")}



def lab_fleet(lab):
    servers = {
        "healthy": {"url": lab.url("/healthy")},
        "rpc-ping": {"url": lab.url("/rpcerror/ping")},
        "rpc-all": {"url": lab.url("/rpcerror/any")},
        "refused": {"url": "http://%s:%d/mcp" % (LOOPBACK, mcptest.free_port())},
        "gateway": {"url": lab.url("/html502/dial")},
        "broken": {"url": "notaurl"},
        "off": {"url": lab.url("/healthy"), "disabled": True},
    }
    return mcptest.write_config(servers, mcptop=FAST)


def wait_stable(read, timeout=SETTLE_WAIT, stable_for=STABLE_FOR, ready=None):
    """Poll read() until it has covered every server of EXPECTED (and
    ready(value) holds, if given) and not changed for stable_for seconds;
    the last value at the deadline otherwise."""
    deadline = time.monotonic() + timeout
    last, since = None, time.monotonic()
    while time.monotonic() < deadline:
        cur = read()
        if cur != last:
            last, since = cur, time.monotonic()
        elif (set(EXPECTED) <= set(cur or {}) and (ready is None or ready(cur))
              and time.monotonic() - since >= stable_for):
            return cur, True
        time.sleep(0.25)
    return last, False


def table(check, watch, serve):
    rows = ["%-9s %-9s %-9s %-9s %-9s" % ("server", "DESIGN", "check", "watch", "serve")]
    for n in EXPECTED:
        rows.append("%-9s %-9s %-9s %-9s %-9s" % (n, EXPECTED[n], check.get(n), watch.get(n), serve.get(n)))
    return "\n".join(rows)


@mcptest.case(rep)
def check_watch_serve_agree(c):
    mcptest.require_mcptop()
    lab = faultlab.FaultLab().start()
    cfg = lab_fleet(lab)
    w = mcptest.Watch(["watch", "-c", cfg])
    s = mcptest.ServeMetrics(cfg, exit_wait=EXIT_WAIT)
    try:
        # check: one run.
        r = mcptest.run_mcptop(["check", "--json", "-c", cfg], timeout=30)
        c.no_crash(r, "check")
        doc = r.json() if r.stdout.strip() else None
        c.require(isinstance(doc, dict) and isinstance(doc.get("servers"), list),
                  "check --json gives a servers array:\n%s" % r.describe())
        check = {x.get("name"): x.get("health") for x in doc["servers"]}
        check_ok = {x.get("name"): x.get("ok", "(absent)") for x in doc["servers"]}
        c.eq(sorted(check), sorted(EXPECTED), "check lists every server")
        c.eq(r.rc, 1, "check exits 1: some monitored server is not ok")

        # watch: the last health event of each server, once settled.
        def watch_last():
            last = {}
            for ev in list(w.events):
                if ev.get("event") == "health":
                    last[ev.get("server")] = ev.get("state")
            return last
        watch, ok = wait_stable(watch_last, ready=lambda m: "pending" not in m.values())
        c.check(ok, "watch's health settled: %s" % watch)

        # serve: the state of each server's one mcp_health series.
        def serve_states():
            return {n: tuple(st for st, v in v_ if v == 1) for n, v_ in s.health()[0].items()}
        serve_raw, ok = wait_stable(serve_states, ready=lambda m: ("pending",) not in m.values())
        c.check(ok, "serve's health settled: %s" % serve_raw)
        states, probe = s.health()
        for n, samples in states.items():
            c.check(len(samples) == 1 and samples[0][1] == 1.0,
                    "one mcp_health series valued 1 for %s: %s" % (n, samples))
        serve = {n: (v[0] if len(v) == 1 else v) for n, v in (serve_raw or {}).items()}

        # The three agree, and say what DESIGN 4b says.
        mcptest.log("  health per front end:\n  " + table(check, watch or {}, serve).replace("\n", "\n  "))
        for n, want in EXPECTED.items():
            got = (check.get(n), (watch or {}).get(n), serve.get(n))
            c.check(got[0] == got[1] == got[2], "%s: check %r, watch %r, serve %r disagree" % ((n,) + got))
            c.eq(check.get(n), want, "check's health of %s (DESIGN 4b)" % n)
            c.eq((watch or {}).get(n), want, "watch's health of %s (DESIGN 4b)" % n)
            c.eq(serve.get(n), want, "serve's mcp_health of %s (DESIGN 4b)" % n)
            # ok and mcp_probe_success follow health: exactly ok is ok,
            # the operator's states are neither.
            if n in MONITORED:
                c.eq(check_ok.get(n), want == "ok", "check's ok of %s" % n)
                c.eq(probe.get(n), 1.0 if want == "ok" else 0.0, "mcp_probe_success of %s" % n)
            else:
                c.eq(check_ok.get(n), None, "check's ok of %s (not monitored)" % n)
                c.check(n not in probe, "no mcp_probe_success sample for %s (%s)" % (n, want))
    finally:
        w.signal(signal.SIGINT)
        rc = w.wait_exit(EXIT_WAIT)
        if not c.check(rc == 0, "watch exits 0 after SIGINT (got %s)" % rc):
            c.attach(w.describe())
        w.close()
        rc = s.close()
        if not c.check(rc == 0, "serve exits 0 after SIGTERM (got %s)" % rc):
            c.attach(s.stderr())
        lab.stop()


rep.finish()
