#!/usr/bin/env python3
"""`mcptop check` against server-everything over Streamable HTTP on loopback.

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_check_http.py
"""

import os
import re
import sys

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402
from mcptest import MISSING, dig  # noqa: E402

rep = mcptest.Reporter("check over Streamable HTTP (server-everything)")

CHECK_TIMEOUT = 20.0  # seconds for one `mcptop check`; it should take well under 5


def check_json(c, args, expect_rc):
    """Run `mcptop check ...`, require JSON output with a servers array, return (result, doc)."""
    r = mcptest.run_mcptop(["check"] + args, timeout=CHECK_TIMEOUT)
    c.attach(r.describe())
    c.no_crash(r)
    c.eq(r.rc, expect_rc, "exit code")
    doc = r.json()
    c.require(isinstance(doc, dict), "JSON object on stdout: %s" % (r.json_error or "not an object"))
    c.require(isinstance(doc.get("servers"), list), "servers is an array")
    return r, doc


def row_named(c, doc, name):
    rows = [s for s in doc["servers"] if isinstance(s, dict) and s.get("name") == name]
    c.require(len(rows) == 1, "exactly one row named %r (rows: %r)"
              % (name, [dig(s, "name") for s in doc["servers"]]))
    return rows[0]


def check_summary(c, doc, **expected):
    want = {"reachable": 0, "unreachable": 0, "unknown": 0, "absent": 0}
    want.update(expected)
    for k, v in want.items():
        c.eq(dig(doc, "summary", k), v, "summary.%s" % k)


# (a) a live server
def a_live_server(c):
    with mcptest.everything_http() as srv:
        oracle = mcptest.count_tools(srv.url)
        c.attach("oracle (SDK client, no client capabilities): %s tools, protocol %s"
                 % (oracle["tools"], oracle["protocol_version"]))
        r, doc = check_json(c, ["--json", srv.url], 0)
        c.eq(len(doc["servers"]), 1, "number of servers")
        s = doc["servers"][0]
        c.eq(dig(s, "ok"), True, "ok")
        c.eq(dig(s, "transport"), "http", "transport")
        target = dig(s, "target")
        c.check(isinstance(target, str) and "127.0.0.1:%d" % srv.port in target,
                "target names 127.0.0.1:%d: %r" % (srv.port, target))
        c.eq(dig(s, "liveness", "state"), "reachable", "liveness.state")
        obs = dig(s, "liveness", "observed_at")
        c.check(isinstance(obs, (int, float)) and not isinstance(obs, bool) and obs > 1.5e12,
                "liveness.observed_at is epoch ms: %r" % (obs,))
        c.check(dig(s, "liveness", "error_code") in (MISSING, None),
                "no liveness.error_code when reachable: %r" % (dig(s, "liveness", "error_code"),))
        c.eq(dig(s, "session", "protocol_version"), oracle["protocol_version"], "session.protocol_version")
        c.eq(dig(s, "session", "protocol_version"), "2025-11-25", "session.protocol_version (offered newest)")
        c.eq(dig(s, "session", "server_name"), oracle["server_name"], "session.server_name")
        c.eq(dig(s, "session", "server_version"), oracle["server_version"], "session.server_version")
        idp = dig(s, "session", "id_prefix")
        c.check(isinstance(idp, str) and idp != "", "session.id_prefix is a non-empty string: %r" % (idp,))
        c.eq(dig(s, "tools"), oracle["tools"], "tools (real count from the SDK client)")
        c.eq(dig(s, "last_failure"), None, "last_failure")
        rtt = dig(s, "rtt_ms")
        c.check(isinstance(rtt, (int, float)) and not isinstance(rtt, bool) and rtt >= 0,
                "rtt_ms is a number >= 0: %r" % (rtt,))
        check_summary(c, doc, reachable=1)


# (b) the same server, killed
def b_killed_server(c):
    srv = mcptest.everything_http()
    url = srv.url
    srv.kill()
    c.require(not mcptest.port_open(srv.port), "port %d is closed after the kill" % srv.port)
    r, doc = check_json(c, ["--json", url], 1)
    c.eq(len(doc["servers"]), 1, "number of servers")
    s = doc["servers"][0]
    c.eq(dig(s, "ok"), False, "ok")
    c.eq(dig(s, "liveness", "state"), "unreachable", "liveness.state")
    c.eq(dig(s, "liveness", "error_code"), "connect_refused", "liveness.error_code")
    c.eq(dig(s, "last_failure", "kind"), "connect_refused", "last_failure.kind")
    c.eq(dig(s, "last_failure", "delivered"), "no", "last_failure.delivered")
    c.eq(dig(s, "last_failure", "site"), "connect", "last_failure.site (a failed dial)")
    c.eq(dig(s, "session"), None, "session")
    check_summary(c, doc, unreachable=1)


# (c) a malformed URL next to a live server
def c_malformed_url_beside_live(c):
    with mcptest.everything_http() as srv:
        cfg = mcptest.write_config({
            "bad": {"url": "http://bad host/mcp"},
            "everything": {"url": srv.url},
        })
        r, doc = check_json(c, ["--json", "-c", cfg], 1)
        c.eq(len(doc["servers"]), 2, "number of servers")
        bad = row_named(c, doc, "bad")
        c.eq(dig(bad, "ok"), False, "bad.ok")
        c.eq(dig(bad, "last_failure", "kind"), "invalid_config", "bad.last_failure.kind")
        c.eq(dig(bad, "last_failure", "delivered"), "no", "bad.last_failure.delivered")
        c.eq(dig(bad, "liveness"), None, "bad.liveness (absent, never dialed)")
        good = row_named(c, doc, "everything")
        c.eq(dig(good, "ok"), True, "everything.ok")
        c.eq(dig(good, "liveness", "state"), "reachable", "everything.liveness.state")
        check_summary(c, doc, reachable=1, absent=1)


# (d) bad input: never a crash
def d_empty_config(c):
    cfg = mcptest.write_file("")
    r = mcptest.run_mcptop(["check", "--json", "-c", cfg], timeout=CHECK_TIMEOUT)
    c.attach(r.describe())
    c.no_crash(r)
    c.eq(r.rc, 2, "exit code")
    c.check(r.stderr.strip() != "", "a message on stderr")


def d_non_json_config(c):
    cfg = mcptest.write_file("this is { not JSON\n")
    r = mcptest.run_mcptop(["check", "--json", "-c", cfg], timeout=CHECK_TIMEOUT)
    c.attach(r.describe())
    c.no_crash(r)
    c.eq(r.rc, 2, "exit code")
    c.check(r.stderr.strip() != "", "a message on stderr")


def d_missing_config(c):
    cfg = str(mcptest.tmpdir() / "no-such-config.json")
    r = mcptest.run_mcptop(["check", "--json", "-c", cfg], timeout=CHECK_TIMEOUT)
    c.attach(r.describe())
    c.no_crash(r)
    c.eq(r.rc, 2, "exit code")
    c.check(r.stderr.strip() != "", "a message on stderr")


def d_number_entry(c):
    cfg = mcptest.write_config({"n": 42})
    r, doc = check_json(c, ["--json", "-c", cfg], 1)
    row = row_named(c, doc, "n")
    c.eq(dig(row, "ok"), False, "n.ok")
    c.eq(dig(row, "last_failure", "kind"), "invalid_config", "n.last_failure.kind")
    c.eq(dig(row, "liveness"), None, "n.liveness")
    check_summary(c, doc, absent=1)


# (e) --help and --version
def e_help(c):
    r = mcptest.run_mcptop(["--help"], timeout=10)
    c.attach(r.describe())
    c.no_crash(r)
    c.eq(r.rc, 0, "exit code")
    text = r.stdout
    c.check(re.search(r"usage", text, re.I), "--help prints a usage line on stdout")
    c.check("check" in text and "watch" in text, "--help names the check and watch commands")


def e_version(c):
    r = mcptest.run_mcptop(["--version"], timeout=10)
    c.attach(r.describe())
    c.no_crash(r)
    c.eq(r.rc, 0, "exit code")
    c.check(re.search(r"\d+\.\d+\.\d+", r.stdout), "--version prints a version number on stdout")
    want = mcptest.project_version()
    if want:
        c.check(want in r.stdout, "--version prints the project version %s" % want)


def main():
    try:
        mcptest.require_mcptop()
        mcptest.require_node_modules()
    except mcptest.SetupError as e:
        print("setup: %s" % e)
        rep.failed += 1
        rep.finish()
    rep.run("a_live_server", a_live_server)
    rep.run("b_killed_server", b_killed_server)
    rep.run("c_malformed_url_beside_live", c_malformed_url_beside_live)
    rep.run("d_empty_config", d_empty_config)
    rep.run("d_non_json_config", d_non_json_config)
    rep.run("d_missing_config", d_missing_config)
    rep.run("d_number_entry", d_number_entry)
    rep.run("e_help", e_help)
    rep.run("e_version", e_version)
    rep.finish()


if __name__ == "__main__":
    main()
