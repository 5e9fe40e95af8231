#!/usr/bin/env python3
"""Answering the server (DESIGN.md, answering the server; issue 45, item 1):
a server may send its client requests of its own at any time, and mcptop
answers each at once: `ping` with an empty result, any method it declared
no capability for (roots/list, sampling/createMessage, ...) with -32601.

Servers: tests/stdio/fake.mjs --mode=ask-client, which after
notifications/initialized asks its client (ping, or --ask=METHOD) and holds
every tools/list answer until it is answered: a client that drops the
request times its own dial out (ruby-sdk#551, csharp-sdk#1578).

Checked: the dial completes well inside the open deadline with the tools
listed; the server got the answer it should (its own log); check --json
counts server_requests by method; watch says a server_request line; no
child left.

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_answer.py
"""

import json
import os
import sys
import tempfile
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402
import scenario as sc  # noqa: E402
from mcptest import dig  # noqa: E402

rep = mcptest.Reporter("answering the server: ping and the methods mcptop does not take")
# The open deadline is long enough that only a dropped request fails it.
OPTS = {"timeout_ms": 3000, "open_deadline_ms": 3000}


def answers_of(path):
    try:
        with open(path) as f:
            return [json.loads(line) for line in f if line.strip()]
    except OSError:
        return []


def stdio_asks(c, method, want):
    """One stdio server that asks `method`: mcptop answers `want` ("result"
    or "-32601") and the dial completes."""
    marker = sc.new_marker()
    log = tempfile.NamedTemporaryFile(prefix="mcptest-answers-", suffix=".jsonl", delete=False)
    log.close()
    try:
        cfg = mcptest.write_config({"asker": sc.fake("ask-client", marker, "--ask=%s" % method,
                                                     "--answers-log=%s" % log.name)}, mcptop=OPTS)
        t0 = time.monotonic()
        r = mcptest.run_mcptop(["check", "--json", "-c", cfg], timeout=20)
        took = time.monotonic() - t0
        c.attach(r.describe())
        c.no_crash(r)
        doc = r.json()
        c.require(isinstance(doc, dict) and doc.get("servers"), "check --json printed servers")
        row = doc["servers"][0]
        c.eq(dig(row, "ok"), True, "ok (the dial did not wait out its deadline)")
        c.eq(dig(row, "tools"), 2, "tools (tools/list was held until the answer)")
        c.eq(dig(row, "server_requests", method if method in ("ping", "roots/list",
             "sampling/createMessage", "elicitation/create") else "other"), 1, "server_requests")
        c.check(took < 2.5, "check took %.1f s (under the open deadline)" % took)
        got = answers_of(log.name)
        c.require(len(got) == 1, "the server got one answer: %r" % got)
        a = got[0]
        c.eq(a.get("id"), "srv-1", "the answer's id is the server's, as it came (a string)")
        c.eq(a.get("jsonrpc"), "2.0", "jsonrpc")
        if want == "result":
            c.eq(a.get("result"), {}, "ping answered with an empty result")
            c.check("error" not in a, "no error")
        else:
            c.eq(dig(a, "error", "code"), -32601, "error.code")
            c.check("result" not in a, "no result")
    finally:
        os.unlink(log.name)
    sc.nothing_left(c, marker)


@mcptest.case(rep)
def stdio_ping_answered(c):
    stdio_asks(c, "ping", "result")


@mcptest.case(rep)
def stdio_roots_refused(c):
    stdio_asks(c, "roots/list", "-32601")


@mcptest.case(rep)
def stdio_unknown_method_refused(c):
    stdio_asks(c, "x-vendor/whatever", "-32601")


@mcptest.case(rep)
def watch_says_server_request(c):
    """watch: a server_request line with the method, the id and what was
    answered, and the exchanges go on (pings complete)."""
    marker = sc.new_marker()
    cfg = mcptest.write_config({"asker": sc.fake("ask-client", marker, "--ask=sampling/createMessage")},
                               mcptop=dict(OPTS, ping_interval_s=1))
    w = mcptest.Watch(["watch", "-c", cfg])
    try:
        deadline = time.monotonic() + 10
        ev = w.wait_for(lambda e: e.get("event") == "server_request", deadline)
        c.require(ev is not None, "a server_request line")
        c.eq(ev.get("server"), "asker", "server")
        c.eq(ev.get("method"), "sampling/createMessage", "method")
        c.check("srv-1" in str(ev.get("id")), "id names the server's: %r" % ev.get("id"))
        c.eq(ev.get("answered"), "-32601", "answered")
        ping = w.wait_for(lambda e: e.get("event") == "exchange" and e.get("op") == "ping"
                          and e.get("outcome") == "completed", deadline)
        c.check(ping is not None, "a ping completed after it")
        bad = [e for e in w.events if e.get("event") == "exchange" and
               e.get("outcome") not in (None, "completed")]
        c.eq(bad, [], "no failed exchange")
    finally:
        w.close()
        if c.failures:
            c.attach(w.describe(last=20))
    sc.nothing_left(c, marker)


rep.finish()
