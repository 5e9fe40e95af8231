#!/usr/bin/env python3
"""mcptop answers the server (issue 45, item 1): a request the server sends
its client is answered at once on every transport, ping with an empty
result, every other method with -32601, and counted.

- stdio is test_answer.py's;
- Streamable HTTP (the fault lab's ?ask=): on the tools/list POST's event
  stream (the listing held until answered), and on the GET stream (under
  `watch`, its server_request lines); each answer is POSTed in the session
  (Mcp-Session-Id and MCP-Protocol-Version, answered 202);
- 2024-11-05 HTTP+SSE (/legacysse?ask=): the answers are POSTed to the
  endpoint the stream named;
- `mcp_server_requests_total{server,method}` in serve's /metrics;
- no answer is an exchange: no exchange line names it, liveness stays
  reachable.

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_server_requests.py
"""

import json
import os
import sys
import time
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import faultlab  # noqa: E402
import mcptest  # noqa: E402
from mcptest import dig  # noqa: E402

rep = mcptest.Reporter("answering the server (issue 45, item 1)")

OPEN_DEADLINE_MS = 3000
QUICK_S = 2.5       # well inside the open deadline: answered, not waited out
METHODS = ("ping", "roots/list", "sampling/createMessage", "elicitation/create", "other")


def want_answer(method, ident):
    if method == "ping":
        return {"jsonrpc": "2.0", "id": ident, "result": {}}
    return {"jsonrpc": "2.0", "id": ident, "error": {"code": -32601}}


def answer_shape(a):
    """An answer with its error message left out (its words are ours)."""
    if isinstance(a, dict) and isinstance(a.get("error"), dict):
        a = dict(a, error={k: v for k, v in a["error"].items() if k != "message"})
    return a


def want_counts(**asked):
    """server_requests names only the methods that were asked."""
    return {k.replace("_", "/"): v for k, v in asked.items() if v}


def check_json(c, servers):
    """check --json on servers (name -> declaration); the records by name."""
    cfg = mcptest.write_config(servers, mcptop={"open_deadline_ms": OPEN_DEADLINE_MS,
                                                "timeout_ms": OPEN_DEADLINE_MS})
    t0 = time.monotonic()
    r = mcptest.run_mcptop(["check", "--json", "-c", cfg], timeout=20)
    took = time.monotonic() - t0
    c.attach(r.describe())
    c.no_crash(r)
    doc = r.json()
    c.require(doc is not None, "check --json prints JSON (%s)" % r.json_error)
    return {s.get("name"): s for s in dig(doc, "servers") or []}, took, r


def ok_quickly(c, s, name, took):
    c.eq(s.get("ok"), True, "%s: ok" % name)
    c.eq(s.get("last_failure"), None, "%s: last_failure" % name)
    c.eq(dig(s, "liveness", "state"), "reachable", "%s: liveness" % name)
    c.check(took < QUICK_S, "%s: check took %.1f s (< %.1f s: answered, not a timeout)"
            % (name, took, QUICK_S))


def lab_counts(lab, key):
    return dig(lab.counts(), "endpoints", key)


def wait_lab(lab, key, answered, timeout=10.0):
    """The endpoint's counts once asks_answered >= answered, or the last read."""
    deadline = time.monotonic() + timeout
    while True:
        cnt = lab_counts(lab, key)
        if isinstance(cnt, dict) and cnt.get("asks_answered", 0) >= answered:
            return cnt
        if time.monotonic() >= deadline:
            return cnt
        time.sleep(0.1)


def answers_in_session(c, cnt, methods, in_session=True):
    """The lab saw one answer per method, each the one wanted, each POST
    answered 202 and carrying the session's id and its protocol version."""
    c.require(isinstance(cnt, dict), "the lab counted the endpoint (%r)" % (cnt,))
    c.attach("lab counts: %s" % json.dumps({k: cnt.get(k) for k in
                                             ("asks_sent", "asks_answered", "ask_answers")}))
    c.eq(cnt.get("asks_sent"), len(methods), "asks sent")
    c.eq(cnt.get("asks_answered"), len(methods), "asks answered")
    got = {a.get("method"): a for a in cnt.get("ask_answers") or []}
    for m in methods:
        a = got.get(m)
        if not c.check(a is not None, "%s was answered" % m):
            continue
        c.eq(answer_shape(a.get("answer")), want_answer(m, a.get("id")), "%s: the answer" % m)
        err = (a.get("answer") or {}).get("error")
        if err is not None:
            c.check(isinstance(err.get("message"), str) and err["message"],
                    "%s: the error has a message" % m)
        c.eq(a.get("status"), 202, "%s: the answer's POST was taken (202)" % m)
        c.eq(a.get("protocol_version"), "2025-11-25", "%s: MCP-Protocol-Version" % m)
        if in_session:
            c.eq(a.get("session"), True, "%s: the answer carried the session's id" % m)


# --------------------------------------------------------------------------
# Streamable HTTP and 2024-11-05 HTTP+SSE (the fault lab)

LAB = None


def lab():
    global LAB
    if LAB is None:
        LAB = faultlab.FaultLab().start()
    return LAB


@mcptest.case(rep)
def http_post_stream(c):
    """The server asks on the tools/list POST's event stream and holds the
    listing until both are answered: each answer POSTed in the session."""
    key = "/healthy?ask=ping,roots/list"
    by, took, _ = check_json(c, {"post": {"url": lab().url(key)}})
    s = by.get("post")
    c.require(s is not None, "a record for the server")
    ok_quickly(c, s, "post", took)
    c.eq(s.get("tools"), 3, "the held listing came")
    c.eq(s.get("server_requests"), want_counts(ping=1, roots_list=1), "server_requests")
    answers_in_session(c, wait_lab(lab(), key, 2), ("ping", "roots/list"))


@mcptest.case(rep)
def legacy_sse(c):
    """2024-11-05 HTTP+SSE: the asks come down the stream, the answers go
    to the endpoint the stream named (the lab holds tools/list till then)."""
    key = "/legacysse?ask=ping,elicitation/create"
    by, took, _ = check_json(c, {"sse": {"url": lab().url(key)}})
    s = by.get("sse")
    c.require(s is not None, "a record for the server")
    ok_quickly(c, s, "sse", took)
    c.eq(s.get("era"), "legacy_sse", "era")
    c.eq(s.get("server_requests"), want_counts(ping=1, elicitation_create=1),
         "server_requests")
    answers_in_session(c, wait_lab(lab(), key, 2), ("ping", "elicitation/create"),
                       in_session=False)


@mcptest.case(rep)
def http_get_stream_watch(c):
    """Under watch, asks down the GET stream are answered by POSTs in the
    session; one server_request line each; none is an exchange; the
    liveness stays reachable."""
    key = "/healthy?ask=ping,sampling/createMessage&via=get"
    name = "getstream"
    cfg = mcptest.write_config({name: {"url": lab().url(key)}},
                               mcptop={"ping_interval_s": 0.5})
    w = mcptest.Watch(["watch", "-c", cfg])
    try:
        seen = []
        deadline = time.monotonic() + 10
        while len(seen) < 2:
            ev = w.wait_for(lambda e: e.get("event") == "server_request", deadline)
            if ev is None:
                break
            seen.append(ev)
        cnt = wait_lab(lab(), key, 2)
        # A few pings after the answers: still reachable, nothing failed.
        pings = 0
        deadline = time.monotonic() + 5
        while pings < 2:
            ev = w.wait_for(lambda e: e.get("event") == "exchange" and e.get("op") == "ping",
                            deadline)
            if ev is None:
                break
            pings += 1
    finally:
        w.close()
    c.attach(w.describe())
    c.require(len(seen) == 2, "two server_request lines (got %d)" % len(seen))
    by = {e.get("method"): e for e in seen}
    for m, answered in (("ping", "result"), ("sampling/createMessage", "-32601")):
        e = by.get(m)
        if not c.check(e is not None, "a server_request line for %s" % m):
            continue
        c.eq(e.get("server"), name, "%s: server" % m)
        # The id as the log shows it: its JSON text and its type.
        c.check(isinstance(e.get("id"), str) and e["id"].startswith('"lab-ask-')
                and e["id"].endswith("(string)"),
                "%s: the request's id (%r)" % (m, e.get("id")))
        c.eq(e.get("answered"), answered, "%s: answered" % m)
    answers_in_session(c, cnt, ("ping", "sampling/createMessage"))
    c.check(pings >= 2, "pings went on after the answers (%d)" % pings)
    ex = [e for e in w.events if e.get("event") == "exchange"]
    c.check(all(e.get("op") != "answer" for e in ex), "no exchange line for an answer")
    c.check(all(e.get("outcome") == "completed" for e in ex),
            "every exchange completed: %s" % [e for e in ex if e.get("outcome") != "completed"])
    live = [e.get("state") for e in w.events if e.get("event") == "liveness"]
    c.check(live and all(s == "reachable" for s in live), "liveness only reachable (%s)" % live)


@mcptest.case(rep)
def metrics_counter(c):
    """serve's /metrics: mcp_server_requests_total by server and method."""
    key = "/healthy?ask=ping,roots/list,x/unknown"
    cfg = mcptest.write_config({"asker": {"url": lab().url(key)}})
    m = mcptest.ServeMetrics(cfg)
    try:
        want = ['mcp_server_requests_total{server="asker",method="ping"} 1',
                'mcp_server_requests_total{server="asker",method="roots/list"} 1',
                'mcp_server_requests_total{server="asker",method="other"} 1']
        text = ""
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            text = m.metrics()
            if all(x in text.splitlines() for x in want):
                break
            time.sleep(0.2)
    finally:
        m.close()
    lines = [x for x in text.splitlines() if "server_requests" in x]
    c.attach("/metrics, its server_requests lines:\n" + "\n".join(lines))
    for x in want:
        c.check(x in text.splitlines(), "/metrics has %s" % x)
    c.check("# TYPE mcp_server_requests_total counter" in text, "the family is a counter")
    c.check(not any("x/unknown" in x for x in lines), "the method label is bounded")


rep.finish()
