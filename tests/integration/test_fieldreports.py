#!/usr/bin/env python3
"""Field reports (issue 13): what real fleets do, replayed small, and what
mcptop must say. One case per kind 1-9 of the issue, each with the issue's
example input built in tests/faultlab/server.mjs and tests/stdio/fake.mjs:

  1 versions           every legacy revision (2024-11-05 .. 2025-11-25) accepted
                       on stdio, Streamable HTTP and HTTP+SSE, spoken back; one
                       outside the set is a protocol failure naming both sides
  2 era_evidence       server/discover answered 500 with an exception body ->
                       initialize in the same dial, legacy, a warning naming it;
                       a stdio child that exits on the probe after a slow start;
                       a late DiscoverResult / a -32022 naming only 2026-07-28
                       -> modern
  3 redirects          307/308/301/302 to the slashed path followed (method and
                       body kept, <= 5 hops, warned with the final URL); another
                       origin never followed, the Location named
  4 reasons            last_failure.reason for every status family, and the TUI's
                       incident line and rows use it ("502 bad gateway ×2")
  5 retry_after        503 + Retry-After 5 on every request (seconds and HTTP
                       date), and on pings only: no request before the wait is
                       over; check --json says when the next attempt is due
  6 lost_session       a forgotten session signalled by 200 + -32600 id null, 400
                       or 404: failure recorded with the server's message, the
                       session DELETEd, one re-dial
  7 step_named         each dial step's failure names the step
  8 stdio_cleanup      `end` after a failed stdio dial: no_session; an exited
                       outcome never carries a signal
  9 get_stream         the GET stream is open at its 2xx headers; keep-alive
                       comments keep it; a stream the server closes is reopened
                       and a later tools change is seen
 10 keep_alive         a server that closes idle connections sooner than the
                       next ping (Keep-Alive: timeout=1): mcptop closes each
                       scheduled ping's connection itself (issue 19); one
                       that keeps them longer keeps its connection
 11 words              issue 26, item 4: the server's own words (Playwright's
                       403 "Access is only allowed at localhost:7113", an
                       escape in it stripped) in check's text report, check
                       --json, watch's events and the TUI's detail pane, at
                       the dial and at a ping

The issue's "tools change 5 minutes in" (against the SDK's 15 s first byte
and mcptop's 75 s idle watchdog) runs here in about 12 s with the same logic
scaled down: the first byte after 1 s (or never), the server closing the
stream after 4 s, the change at 8-9 s, and mcptop's idle watchdog shortened
to 2 s by the config key stream_idle_ms (a setting like any other, no test
hook), with keep-alive comments every 0.5 s.

After every scenario: sessions issued == sessions ended on its lab endpoints,
and no child or grandchild left.

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_fieldreports.py
The last line is "N passed, N failed"; the exit status is 1 on any failure.
"""

import calendar
import json
import os
import re
import signal
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402
from mcptest import dig  # noqa: E402
import scenario as sc  # noqa: E402
from scenario import fake, key, lab  # noqa: E402

rep = mcptest.Reporter("field reports (issue 13): versions, eras, redirects, reasons, waits, lost sessions")

FAST = {"timeout_ms": 1500, "open_deadline_ms": 1500}
LEGACY_SET = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
FORGOTTEN = "No valid session ID provided"


def judge_fail(c, s, name, kind, status=None, reason=None, site=None, delivered=None, liveness=None,
               detail=()):
    c.eq(s.get("ok"), False, "%s: ok" % name)
    c.eq(dig(s, "last_failure", "kind"), kind, "%s: last_failure.kind" % name)
    if status is not None:
        c.eq(dig(s, "last_failure", "http_status"), status, "%s: last_failure.http_status" % name)
    if reason is not None:
        c.eq(dig(s, "last_failure", "reason"), reason, "%s: last_failure.reason" % name)
    if site is not None:
        c.eq(dig(s, "last_failure", "site"), site, "%s: last_failure.site" % name)
    if delivered is not None:
        c.eq(dig(s, "last_failure", "delivered"), delivered, "%s: last_failure.delivered" % name)
    if liveness is not None:
        c.eq(dig(s, "liveness", "state"), liveness, "%s: liveness.state" % name)
    d = dig(s, "last_failure", "detail")
    for sub in detail:
        c.check(isinstance(d, str) and sub in d, "%s: %r in the detail %r" % (name, sub, d))


def judge_ok(c, s, name, era=None, version=None, tools=None):
    c.eq(s.get("ok"), True, "%s: ok (last_failure %s)" % (name, json.dumps(s.get("last_failure"))))
    c.eq(dig(s, "liveness", "state"), "reachable", "%s: liveness.state" % name)
    if era is not None:
        c.eq(s.get("era"), era, "%s: era" % name)
    if version is not None:
        c.eq(dig(s, "session", "protocol_version"), version, "%s: session.protocol_version" % name)
    if tools is not None:
        c.eq(s.get("tools"), tools, "%s: tools" % name)


def attach_lab_counts(c, keys, fields):
    """Attach to c the lab's counts of each endpoint in keys {name: key},
    the named fields only."""
    c.attach("lab counts: %s" % json.dumps({n: {x: sc.counts_of(k).get(x) for x in fields}
                                            for n, k in keys.items()}))


def warnings_of(s):
    w = s.get("warnings") if isinstance(s, dict) else None
    return [x for x in w if isinstance(x, str)] if isinstance(w, list) else []


def warned(c, s, name, *subs):
    ws = warnings_of(s)
    c.check(any(all(sub in w for sub in subs) for w in ws),
            "%s: a warning naming %r (warnings %r)" % (name, subs, ws))


# --------------------------------------------------------------------------
# 1. every revision a 2025 client speaks


def versions(c):
    """Servers that answer initialize with a fixed protocolVersion V,
    whatever was offered: stdio (fake.mjs --version=V), Streamable HTTP
    (/badversion/dial?v=V) and HTTP+SSE (/legacysse?v=2024-11-05). Expected
    for V in the legacy set: ok, era legacy (legacy_sse), protocol_version V,
    and every later HTTP request carries MCP-Protocol-Version V. Outside the
    set (2024-10-07, 1999-01-01): protocol at the dial, the detail naming the
    server's choice and what mcptop offered (2025-11-25)."""
    L = lab()
    marker = sc.new_marker("mcptest-field")
    servers, keys = {}, {}
    for v in LEGACY_SET:
        n = v.replace("-", "")
        servers["stdio" + n] = fake("healthy", marker, "--version=%s" % v)
        keys["http" + n] = key("/badversion/dial?v=%s" % v)
    keys["sse20241105"] = key("/legacysse?v=2024-11-05")
    keys["http_outside"] = key("/badversion/dial?v=2024-10-07")
    servers["stdio_outside"] = fake("healthy", marker, "--version=1999-01-01")
    for n, k in keys.items():
        servers[n] = dict(FAST, url=L.url(k))
    sampler = sc.GroupSampler(marker)
    r, by = sc.check_json(c, servers, mcptop={"timeout_ms": 3000, "open_deadline_ms": 5000})
    for v in LEGACY_SET:
        n = v.replace("-", "")
        judge_ok(c, by.get("stdio" + n, {}), "stdio" + n, era="legacy", version=v, tools=2)
        judge_ok(c, by.get("http" + n, {}), "http" + n, era="legacy", version=v, tools=3)
        cnt = sc.counts_of(keys["http" + n])
        pv = {m: vs for m, vs in cnt.get("protocol_versions", {}).items() if m != "server/discover"}
        c.check(pv and all(set(vs) == {v} for vs in pv.values()),
                "http%s: requests after initialize carried MCP-Protocol-Version %s (by method: %r)" % (n, v, pv))
    judge_ok(c, by.get("sse20241105", {}), "sse20241105", era="legacy_sse", version="2024-11-05", tools=3)
    judge_fail(c, by.get("http_outside", {}), "http_outside", "protocol", site="connect", delivered="yes",
               liveness="reachable", detail=("2024-10-07", "2025-11-25"))
    judge_fail(c, by.get("stdio_outside", {}), "stdio_outside", "protocol", site="connect", delivered="yes",
               liveness="reachable", detail=("1999-01-01", "2025-11-25"))
    sc.balanced(c, list(keys.values()))
    sc.nothing_left(c, marker, sampler)


# --------------------------------------------------------------------------
# 2. an era verdict is evidence


def era_evidence(c):
    """- /probe/exc500: server/discover answered HTTP 500 with a serialized
      exception (no JSON-RPC): initialize in the same dial; ok, era legacy,
      a warning naming server/discover and 500.
    - /probe/exc500?init=html502: the same, and initialize answered 502: the
      dial's failure names initialize (http_status 502, bad_gateway).
    - /probe/init32022: the first discover 404 (taken for legacy), initialize
      answered 400 -32022 naming only 2026-07-28: modern at once; ok, 3 tools,
      one initialize.
    - stdio exit-on-unknown, slow start 1.5 s (probe window 1 s: timeout
      2000 ms): exits 0 on the unanswered probe; respawned once for
      initialize: ok, legacy, 2 tools, exactly 2 spawns.
    - stdio late-modern, slow start 1.5 s: its DiscoverResult arrives after
      the probe window (and -32022 to the initialize sent meanwhile): ok,
      era modern, 2 tools, one spawn."""
    L = lab()
    marker = sc.new_marker("mcptest-field")
    k_exc = key("/probe/exc500")
    k_exc502 = key("/probe/exc500?init=html502")
    k_32022 = key("/probe/init32022")
    spawns_exit = mcptest.write_file("", suffix=".spawns")
    spawns_late = mcptest.write_file("", suffix=".spawns")
    servers = {
        "exc500": dict(FAST, url=L.url(k_exc)),
        "exc500_init502": dict(FAST, url=L.url(k_exc502)),
        "init32022": dict(FAST, url=L.url(k_32022)),
        "stdio_exits_on_probe": fake("exit-on-unknown", marker, "--slow-ms=1500",
                                     "--spawn-log=%s" % spawns_exit, timeout_ms=2000, open_deadline_ms=8000),
        "stdio_late_modern": fake("late-modern", marker, "--slow-ms=1500", "--spawn-log=%s" % spawns_late,
                                  timeout_ms=2000, open_deadline_ms=8000),
    }
    sampler = sc.GroupSampler(marker)
    r, by = sc.check_json(c, servers)
    s = by.get("exc500", {})
    judge_ok(c, s, "exc500", era="legacy", tools=3)
    warned(c, s, "exc500", "server/discover", "500")
    m = sc.counts_of(k_exc).get("methods", {})
    c.eq((m.get("server/discover", 0), m.get("initialize", 0)), (1, 1),
         "exc500: server/discover, initialize requests (one dial)")
    judge_fail(c, by.get("exc500_init502", {}), "exc500_init502", "http_status", status=502,
               reason="bad_gateway", site="connect", detail=("initialize", "502"))
    c.eq(sc.counts_of(k_exc502).get("methods", {}).get("initialize", 0), 1, "exc500_init502: initialize tried")
    s = by.get("init32022", {})
    judge_ok(c, s, "init32022", era="modern", tools=3)
    m = sc.counts_of(k_32022).get("methods", {})
    c.eq(m.get("initialize", 0), 1, "init32022: initialize requests")
    c.check(m.get("server/discover", 0) >= 2, "init32022: probed again after the -32022 (%r)" % m)
    judge_ok(c, by.get("stdio_exits_on_probe", {}), "stdio_exits_on_probe", era="legacy", tools=2)
    c.eq(len(sc.pids_in(spawns_exit)), 2, "stdio_exits_on_probe: spawns (the probe's child, one for initialize)")
    judge_ok(c, by.get("stdio_late_modern", {}), "stdio_late_modern", era="modern", tools=2)
    c.eq(len(sc.pids_in(spawns_late)), 1, "stdio_late_modern: spawns")
    sc.balanced(c, [k_exc, k_exc502, k_32022])
    sc.nothing_left(c, marker, sampler)


# --------------------------------------------------------------------------
# 3. redirects


def redirects(c):
    """A server mounted at /redirect/any/ answers /redirect/any with 307, 308,
    301 or 302 to the slashed path (every request, GET and DELETE too);
    /redirect/dial and /redirect/ping redirect only initialize / ping; a
    chain of 3 hops. Expected: ok, 3 tools, the POSTs arrive at the slashed
    path with their body (initialize counted there), a warning naming the
    final URL. To another origin (the lab's other port): not followed, no
    request there, http_status 3xx reason redirect, the Location in the
    detail; 7 hops: not followed past 5, reason redirect."""
    L = lab()
    same = {
        "any307": key("/redirect/any?code=307"),
        "any308": key("/redirect/any?code=308"),
        "any301": key("/redirect/any?code=301"),
        "any302": key("/redirect/any?code=302"),
        "dial307": key("/redirect/dial?code=307"),
        "ping307": key("/redirect/ping?code=307"),
        "hops3": key("/redirect/any?code=307&hops=3"),
    }
    other = {
        "other_dial": key("/redirect/dial?code=307&to=other"),
        "other_ping": key("/redirect/ping?code=307&to=other"),
    }
    k_hops7 = key("/redirect/any?code=307&hops=7")
    allk = dict(same, **other, hops7=k_hops7)
    before = L.other_origin()
    r, by = sc.check_json(c, {n: dict(FAST, url=L.url(k)) for n, k in allk.items()})
    for n, k in same.items():
        s = by.get(n, {})
        judge_ok(c, s, n, tools=3)
        cnt = sc.counts_of(k)
        c.check(cnt.get("redirects_sent", 0) >= 1, "%s: the lab redirected (%r)" % (n, cnt.get("redirects_sent")))
        c.check(cnt.get("redirected_arrivals", 0) >= 1,
                "%s: requests arrived at the slashed path (%r)" % (n, cnt.get("redirected_arrivals")))
        path = k.split("?")[0] + "/"
        warned(c, s, n, path)
        if n.startswith("any") or n.startswith("dial") or n == "hops3":
            c.check(any(e.get("slashed") and e.get("m") == "POST" and e.get("rpc") == "initialize"
                        for e in cnt.get("log", [])),
                    "%s: initialize reached the slashed path as a POST with its body (log %r)"
                    % (n, [(e.get("m"), e.get("rpc"), bool(e.get("slashed"))) for e in cnt.get("log", [])][:12]))
    for n, k in other.items():
        s = by.get(n, {})
        site = "request" if "ping" in n else "connect"
        loc = "%s%s/" % (L.other_base, k.split("?")[0])
        judge_fail(c, s, n, "http_status", status=307, reason="redirect", site=site, delivered="unknown",
                   liveness="unknown", detail=(loc,))
        frm = (L.other_origin().get("by_from") or {}).get(k) or {}
        c.eq(frm.get("requests", 0), 0, "%s: requests that reached the other origin" % n)
    judge_fail(c, by.get("hops7", {}), "hops7", "http_status", status=307, reason="redirect", site="connect")
    c.check(sc.counts_of(k_hops7).get("redirects_sent", 0) <= 6,
            "hops7: at most 5 redirects followed (%r sent)" % sc.counts_of(k_hops7).get("redirects_sent"))
    after = L.other_origin()
    c.eq(after.get("with_authorization", 0) - before.get("with_authorization", 0), 0,
         "requests with Authorization at the other origin")
    sc.balanced(c, list(allk.values()))


# --------------------------------------------------------------------------
# 4. the reason behind an HTTP status


REASONS = [
    # name, fault path, status, reason
    ("challenge", "/cfchallenge/%s", 403, "challenge"),
    ("auth401", "/auth401/%s", 401, "auth"),
    ("auth403", "/auth403/%s", 403, "auth"),
    ("forbidden", "/forbidden403/%s", 403, "forbidden"),
    ("rate429", "/ratelimit429/%s", 429, "rate_limited"),
    ("busy503", "/busy503/%s?s=1", 503, "unavailable"),
    ("gw502", "/html502/%s", 502, "bad_gateway"),
    ("gw504", "/gateway504/%s", 504, "gateway_timeout"),
    ("redir", "/redirect/%s?code=307&to=other", 307, "redirect"),
    ("nolocation302", "/status/%s?code=302", 302, "redirect"),
    ("notfound", "/gone404/%s", 404, "not_found"),
    ("method405", "/status/%s?code=405", 405, "method_not_allowed"),
    ("server500", "/error500/%s", 500, "server_error"),
    ("teapot418", "/status/%s?code=418", 418, "client_error"),
]


def reasons(c):
    """Each status family at the dial (initialize) and at a ping: kind
    http_status, the status, the closed reason; delivered unknown, liveness
    unknown; a CDN challenge is not called auth."""
    L = lab()
    keys = {}
    for name, path, status, reason in REASONS:
        for site in ("dial", "ping"):
            keys["%s_%s" % (name, site)] = key(path % site)
    r, by = sc.check_json(c, {n: dict(FAST, url=L.url(k)) for n, k in keys.items()})
    for name, path, status, reason in REASONS:
        for site in ("dial", "ping"):
            n = "%s_%s" % (name, site)
            judge_fail(c, by.get(n, {}), n, "http_status", status=status, reason=reason,
                       site="connect" if site == "dial" else "request", delivered="unknown", liveness="unknown")
    for site in ("dial", "ping"):
        d = str(dig(by, "challenge_%s" % site, "last_failure", "detail"))
        c.check("auth" not in d.lower(), "challenge_%s: a bot check is not called auth: %r" % (site, d))
    sc.balanced(c, list(keys.values()))


def reasons_tui(c):
    """The TUI: two 502 gateways and three CDN challenges. The incident line
    says "502 bad gateway ×2" and "403 challenge ×3"; the rows name the reason."""
    L = lab()
    keys = {}
    for i in range(2):
        keys["gw%d" % i] = key("/html502/dial")
    for i in range(3):
        keys["cf%d" % i] = key("/cfchallenge/dial")
    cfg = mcptest.write_config({n: dict(FAST, url=L.url(k), ping_interval_s=1) for n, k in keys.items()})
    t = sc.Tmux(["-c", cfg], cols=140, rows=20)
    try:
        want = ("502 bad gateway ×2", "403 challenge ×3")
        text, ok = t.wait(lambda s: all(w in s for w in want), 10)
        c.check(ok, "the incident line says %r within 10 s:\n%s" % (want, text))
        rows = {n: next((ln for ln in text.splitlines() if re.search(r"\b%s\b" % n, ln)), "") for n in keys}
        for n, ln in rows.items():
            word = "challenge" if n.startswith("cf") else "bad gateway"
            c.check(word in ln, "row %s names the reason %r: %r" % (n, word, ln))
        t.keys("q")
        t.wait(lambda s: "__EXIT=" in s, 8)
    finally:
        t.kill()
    sc.balanced(c, list(keys.values()))


# --------------------------------------------------------------------------
# 5. waits the server asks for


RA_S = 5.0
RA_SLACK = 0.2


def _times(cnt, pred=lambda e: True):
    return [e["t"] / 1000.0 for e in cnt.get("log", []) if pred(e)]


def retry_after(c):
    """503 + Retry-After: 5 on every request (seconds; an HTTP date), and a
    healthy dial whose pings get 503 + Retry-After: 5 (ping interval 0.3 s).
    Expected, over three attempts each: no request to the server before the
    wait it asked for is over (gaps >= 4.8 s); the failing exchanges say when
    the next attempt is due (watch: next_attempt_at, epoch ms, >= 4.5 s
    after the event); check --json: next_attempt_at on the row."""
    L = lab()
    keys = {"maint": key("/maintenance?s=5"), "maintdate": key("/maintenance?s=5&date=1"),
            "pings": key("/busy503/ping?s=5")}
    cfg = mcptest.write_config({
        "maint": {"url": L.url(keys["maint"]), "timeout_ms": 2000, "open_deadline_ms": 2000,
                  "ping_interval_s": 0.3},
        "maintdate": {"url": L.url(keys["maintdate"]), "timeout_ms": 2000, "open_deadline_ms": 2000,
                      "ping_interval_s": 0.3},
        "pings": {"url": L.url(keys["pings"]), "timeout_ms": 2000, "open_deadline_ms": 2000,
                  "ping_interval_s": 0.3, "teardown_ms": 7000},
    })
    w = sc.TimedWatch(["watch", "-c", cfg])
    try:
        def enough():
            cm, cd, cp = (sc.counts_of(keys[n]) for n in ("maint", "maintdate", "pings"))
            return len(_times(cm)) >= 3 and len(_times(cd)) >= 3 and \
                len(_times(cp, lambda e: e.get("rpc") == "ping")) >= 3
        # three attempts each, at 5 s apart, take ~10 s; a client that does
        # not wait gets there much sooner
        sc.wait_until(enough, timeout=16)
        counts = {n: sc.counts_of(k) for n, k in keys.items()}
        w.signal(signal.SIGINT)
        c.check(w.wait_exit(12) is not None, "watch exits within 12 s of SIGINT")
        for n in ("maint", "maintdate"):
            ts = _times(counts[n])
            gaps = [b - a for a, b in zip(ts, ts[1:])]
            c.attach("%s: %d requests, gaps %s" % (n, len(ts), ["%.2f" % g for g in gaps]))
            c.check(len(ts) >= 2, "%s: the dial was retried (%d requests)" % (n, len(ts)))
            c.check(not gaps or min(gaps) >= RA_S - RA_SLACK,
                    "%s: no request within %.1f s of a 503 + Retry-After %.0f (shortest gap %.2f s)"
                    % (n, RA_S - RA_SLACK, RA_S, min(gaps) if gaps else -1))
        ts = _times(counts["pings"], lambda e: e.get("rpc") == "ping")
        gaps = [b - a for a, b in zip(ts, ts[1:])]
        c.attach("pings: %d pings, gaps %s" % (len(ts), ["%.2f" % g for g in gaps]))
        c.check(len(ts) >= 2, "pings: pinged more than once (%d)" % len(ts))
        c.check(not gaps or min(gaps) >= RA_S - RA_SLACK,
                "pings: no ping within %.1f s of a 503 + Retry-After %.0f (shortest gap %.2f s)"
                % (RA_S - RA_SLACK, RA_S, min(gaps) if gaps else -1))
        for n in ("maint", "pings"):
            fails = [e for e in w.events if e.get("server") == n and e.get("event") == "exchange"
                     and e.get("http_status") == 503]
            c.require(fails, "%s: a failed exchange with 503 in the watch stream" % n)
            e = fails[0]
            ts_ms = calendar.timegm(time.strptime(e["ts"][:19], "%Y-%m-%dT%H:%M:%S")) * 1000 + \
                int(e["ts"][20:23] or 0)
            nxt = e.get("next_attempt_at")
            c.check(isinstance(nxt, (int, float)) and nxt >= ts_ms + (RA_S - 0.5) * 1000,
                    "%s: the failed exchange says when the next attempt is due: next_attempt_at %r, "
                    "event at %d" % (n, nxt, ts_ms))
        sc.balanced(c, list(keys.values()))
    finally:
        if c.failures:
            c.attach(w.describe(last=12))
        w.close()
    # check --json: the row says when the next attempt is due
    k = key("/maintenance?s=5")
    now_ms = time.time() * 1000
    r, by = sc.check_json(c, {"maint": dict(FAST, url=L.url(k))})
    s = by.get("maint", {})
    judge_fail(c, s, "maint(check)", "http_status", status=503, reason="unavailable", site="connect")
    nxt = s.get("next_attempt_at")
    c.check(isinstance(nxt, (int, float)) and nxt >= now_ms + (RA_S - 1.0) * 1000,
            "check --json: next_attempt_at %r is at least %.0f s after the run started (%d)"
            % (nxt, RA_S - 1.0, now_ms))


# --------------------------------------------------------------------------
# 6. a lost session


def lost_session(c):
    """A session the server forgets after 2 requests, signalled as 200 with a
    JSON-RPC error -32600 and id null (some gateways), as 400, or as 404.
    Expected: the ping's failure recorded (200: not_mcp_response; 400 / 404:
    http_status) with the server's own message in the detail; the lost
    session DELETEd (the lab answers 400); one re-dial (initialize x2),
    reachable again."""
    L = lab()
    rows = {"rpc200": ("not_mcp_response", None), "m400": ("http_status", 400), "m404": ("http_status", 404)}
    modes = {"rpc200": "rpc200", "m400": "400", "m404": "404"}
    keys = {n: key("/forget?after=2&mode=%s" % modes[n]) for n in rows}
    cfg = mcptest.write_config({n: dict(FAST, url=L.url(k), ping_interval_s=0.3) for n, k in keys.items()})
    w = sc.TimedWatch(["watch", "-c", cfg])
    try:
        def redialed():
            return all(len([e for e in w.events if e.get("server") == n and e.get("event") == "exchange"
                            and e.get("op") == "dial" and e.get("outcome") == "completed"]) >= 2 for n in rows)
        sc.wait_until(redialed, timeout=10)
        # a little more: a second re-dial would show as initialize x3
        sc.wait_until(lambda: False, timeout=1.0)
        w.signal(signal.SIGINT)
        c.check(w.wait_exit(8) is not None, "watch exits within 8 s of SIGINT")
        for n, (kind, status) in rows.items():
            cnt = sc.counts_of(keys[n])
            c.eq(cnt.get("sessions_forgotten"), 1, "%s: sessions the lab forgot" % n)
            c.eq(cnt.get("methods", {}).get("initialize", 0), 2, "%s: initialize (the dial, one re-dial)" % n)
            fail = next((e for e in w.events if e.get("server") == n and e.get("event") == "exchange"
                         and e.get("outcome") not in (None, "completed")), None)
            c.require(fail is not None, "%s: a failed exchange was recorded" % n)
            c.eq((fail.get("op"), fail.get("outcome"), fail.get("http_status"), fail.get("site")),
                 ("ping", kind, status, "request"), "%s: the failure (op, outcome, http_status, site)" % n)
            c.check(FORGOTTEN in str(fail.get("detail")),
                    "%s: the server's own message in the detail: %r" % (n, fail.get("detail")))
            lv = [e for e in w.events if e.get("server") == n and e.get("event") == "liveness"]
            c.eq(lv[-1].get("state") if lv else None, "reachable", "%s: liveness after the re-dial" % n)
        sc.balanced(c, list(keys.values()))
    finally:
        if c.failures:
            c.attach(w.describe(last=12))
        w.close()


# --------------------------------------------------------------------------
# 7. say which step failed


STEPS = [
    # name, path, kind, status, substrings of the detail
    ("initialized404", "/gone404/initialized?nosession=1", "http_status", 404,
     ("notifications/initialized answered 404 after initialize succeeded",)),
    ("initialized500", "/error500/initialized", "http_status", 500, ("notifications/initialized", "500")),
    ("list500", "/error500/list", "http_status", 500, ("tools/list", "500")),
    ("listhang", "/hang/list", "timeout", None, ("tools/list",)),
    ("init502", "/html502/dial", "http_status", 502, ("initialize", "502")),
    ("discover503", "/probe/503", "http_status", 503, ("server/discover", "503")),
]


def step_named(c):
    """Every dial failure's detail names the step that failed; the 13.7
    example word for word."""
    L = lab()
    keys = {n: key(p) for n, p, _, _, _ in STEPS}
    r, by = sc.check_json(c, {n: dict(FAST, url=L.url(k)) for n, k in keys.items()})
    for n, _, kind, status, subs in STEPS:
        judge_fail(c, by.get(n, {}), n, kind, status=status, site="connect", detail=subs)
        c.eq(dig(by, n, "last_failure", "op"), "dial", "%s: last_failure.op" % n)
    d = str(dig(by, "init502", "last_failure", "detail"))
    c.check("notifications/initialized" not in d, "init502: the step is initialize itself: %r" % d)
    sc.balanced(c, list(keys.values()))


# --------------------------------------------------------------------------
# 8. stdio dial-failure cleanup is not an ending


def stdio_cleanup(c):
    """`end` on stdio servers whose dial failed (initialize answered, then
    silence: open deadline 1 s; a child that exits 3 at once) next to a
    healthy one. Expected, over two runs: the failed dials end as no_session;
    the healthy one exited; no exited outcome carries a signal."""
    marker = sc.new_marker("mcptest-field")
    servers = {
        "hang": fake("hang-after-init", marker, timeout_ms=1000, open_deadline_ms=1000),
        "exit3": fake("exit-at-once", marker, timeout_ms=1000, open_deadline_ms=1000),
        "healthy": fake("healthy", marker),
    }
    cfg = mcptest.write_config(servers)
    for run in (1, 2):
        sampler = sc.GroupSampler(marker)
        r = mcptest.run_mcptop(["end", "--json", "--teardown", "1500", "-c", cfg], timeout=30)
        c.attach(r.describe())
        c.no_crash(r)
        ends = {e.get("server"): e for e in sc.endings_of(r.stdout)}
        for n in ("hang", "exit3"):
            e = ends.get(n, {})
            c.eq(e.get("outcome"), "no_session", "run %d: %s: outcome (the dial failed: nothing to end)" % (run, n))
        c.eq(dig(ends, "healthy", "outcome"), "exited", "run %d: healthy: outcome" % run)
        for n, e in ends.items():
            if e.get("outcome") == "exited":
                c.check("signal" not in e, "run %d: %s: an exited outcome carries no signal (%r)"
                        % (run, n, e.get("signal")))
        sc.nothing_left(c, marker, sampler, what="after end (run %d)" % run)


# --------------------------------------------------------------------------
# 9. the GET stream stays open while the server keeps it open


IDLE_MS = 2000


def get_stream(c):
    """Three SDK-like GET streams (2xx headers at once), ping interval 1 s:
    - headers_only: no byte ever. Reported open (a `stream` exchange
      completed) within 3 s of the dial; with the idle watchdog at 2 s it is
      closed by mcptop (no bytes) and reopened under the reconnect caps.
    - server_closes: first byte after 1 s, keep-alives every 1 s, the server
      ends it after 4 s; the tools change 8 s after the first request:
      reopened (>= 2 GETs), tools_changed to 5 seen.
    - keepalive: keep-alives every 0.5 s, watchdog 2 s: never closed by
      mcptop (one GET, no client close) until the tools change at 9 s, and
      tools_changed to 5 seen."""
    L = lab()
    keys = {
        "headers_only": key("/sdkstream?first_byte_ms=-1"),
        "server_closes": key("/sdkstream?first_byte_ms=1000&keepalive_ms=1000&close_ms=4000&change_ms=8000"),
        "keepalive": key("/sdkstream?first_byte_ms=0&keepalive_ms=500&change_ms=9000"),
    }
    cfg = mcptest.write_config({n: dict(FAST, url=L.url(k), ping_interval_s=1, stream_idle_ms=IDLE_MS)
                                for n, k in keys.items()})
    w = sc.TimedWatch(["watch", "-c", cfg])
    try:
        dial = w.until(lambda e: e.get("server") == "headers_only" and e.get("op") == "dial"
                       and e.get("outcome") == "completed", time.monotonic() + 10)
        c.require(dial is not None, "headers_only: dialed within 10 s")
        t_dial = next(t[0] for t in w.timed if t[2] is dial)
        st = w.until(lambda e: e.get("server") == "headers_only" and e.get("op") == "stream"
                     and e.get("outcome") == "completed", t_dial + 3)
        c.check(st is not None, "headers_only: the stream is reported open at its headers (within 3 s; "
                "the first byte never comes)")
        # before the changes: the keep-alive stream was never closed by mcptop
        def before_change():
            log = sc.counts_of(keys["keepalive"]).get("log", [])
            return bool(log) and time.time() * 1000 >= log[0]["t"] + 8700
        c.require(sc.wait_until(before_change, timeout=12), "keepalive: 8.7 s after its first request")
        ka = sc.counts_of(keys["keepalive"])
        c.eq((ka.get("GET"), ka.get("streams_closed_by_client")), (1, 0),
             "keepalive: GETs, streams closed by mcptop before the change (comments reset the idle watchdog)")
        for n in ("server_closes", "keepalive"):
            ev = w.until(lambda e, n=n: e.get("server") == n and e.get("event") == "tools_changed"
                         and e.get("tools") == 5, time.monotonic() + 6)
            c.check(ev is not None, "%s: tools_changed to 5 after the change (8-9 s in)" % n)
        cl = sc.counts_of(keys["server_closes"])
        c.check(cl.get("stream_reconnects", 0) >= 1,
                "server_closes: the stream the server closed was reopened (%r reopens, %r closes by the server)"
                % (cl.get("stream_reconnects"), cl.get("streams_closed_by_server")))
        c.eq(cl.get("list_changed_lost", 0), 0, "server_closes: a stream was open when the tools changed")
        ho = sc.counts_of(keys["headers_only"])
        c.check(ho.get("streams_closed_by_client", 0) >= 1,
                "headers_only: a stream with no bytes at all is closed by the %d ms idle watchdog (%r)"
                % (IDLE_MS, ho.get("streams_closed_by_client")))
        c.check(ho.get("stream_reconnects", 0) >= 1,
                "headers_only: the stream mcptop's watchdog closed is reopened (%r reopens)"
                % ho.get("stream_reconnects"))
        w.signal(signal.SIGINT)
        c.check(w.wait_exit(8) is not None, "watch exits within 8 s of SIGINT")
        sc.balanced(c, list(keys.values()))
    finally:
        if c.failures:
            c.attach(w.describe(last=12))
            attach_lab_counts(c, keys, ("GET", "streams_opened", "streams_closed_by_client",
                                        "streams_closed_by_server", "stream_reconnects",
                                        "list_changed_sent", "list_changed_lost"))
        w.close()


# --------------------------------------------------------------------------
# 10. a server that drops idle connections sooner than the next ping


def keep_alive(c):
    """Two healthy servers, pinged every 2 s, that close a connection left
    idle for K s and say so (Keep-Alive: timeout=K, as Node's own server
    does with K = 5): short (K = 1) and long (K = 5). short: mcptop closes
    the connection of each scheduled ping itself, so none dies idle in its
    pool (before: every ping's connection was closed by the server, and
    each dead one cost libcurl a walk of its pool). long: the connection is
    kept from ping to ping (none closed after a ping, by mcptop or idle).
    Both servers share the lab's port, so libcurl pools their connections
    together: the lab counts a connection's end for its last request."""
    L = lab()
    keys = {"short": key("/healthy?keepalive_s=1"), "long": key("/healthy?keepalive_s=5")}
    cfg = mcptest.write_config({n: dict(FAST, url=L.url(k), ping_interval_s=2) for n, k in keys.items()})
    w = sc.TimedWatch(["watch", "-c", cfg])
    try:
        def pings(k):
            return sum(1 for e in sc.counts_of(k).get("log", []) if e.get("rpc") == "ping")
        c.require(sc.wait_until(lambda: all(pings(k) >= 4 for k in keys.values()), timeout=15),
                  "4 pings to each server within 15 s")
        # the last ping's connection: closed by mcptop at once, or idle
        # past the short timeout
        sc.wait_until(lambda: False, timeout=1.5)
        sh, lg = sc.counts_of(keys["short"]), sc.counts_of(keys["long"])
        c.eq(sh.get("ping_conns_closed_idle", 0), 0,
             "short: connections the server closed idle after a ping (a dead one left in mcptop's pool)")
        c.check(sh.get("ping_conns_closed_by_client", 0) >= 3,
                "short: mcptop closed each ping's connection itself (%r of %d pings)"
                % (sh.get("ping_conns_closed_by_client"), pings(keys["short"])))
        c.eq((lg.get("ping_conns_closed_by_client", 0), lg.get("ping_conns_closed_idle", 0)), (0, 0),
             "long: connections closed after a ping, by mcptop and idle (kept from ping to ping)")
        w.signal(signal.SIGINT)
        c.check(w.wait_exit(8) is not None, "watch exits within 8 s of SIGINT")
        sc.balanced(c, list(keys.values()))
    finally:
        if c.failures:
            c.attach(w.describe(last=12))
            attach_lab_counts(c, keys, ("conns", "conns_closed_by_client", "conns_closed_idle",
                                        "ping_conns_closed_by_client", "ping_conns_closed_idle"))
        w.close()


# --------------------------------------------------------------------------


# --------------------------------------------------------------------------
# 11. the server's own words, everywhere the detail shows (issue 26, item 4)


WORDS_403 = ("/words/%s?code=403&type=none&text=Access%%20is%%20only%%20%%1B%%5B1mallowed%%1B%%5B0m"
             "%%20at%%20localhost%%3A7113")
SAID = 'the server says "Access is only allowed at localhost:7113"'


def words(c):
    """Playwright's 403 names the fix: a short body that is not markup is the
    server speaking. Its sentence (an escape sequence in it stripped) is in
    the failure's detail at the dial and at a ping, in `check`'s text
    report, `check --json`, `watch`'s exchange events and the TUI's detail
    pane (Enter)."""
    L = lab()
    keys = {"pw_dial": key(WORDS_403 % "dial"), "pw_ping": key(WORDS_403 % "ping")}
    servers = {n: dict(FAST, url=L.url(k), ping_interval_s=0.3) for n, k in keys.items()}
    cfg = mcptest.write_config(servers)
    r = mcptest.run_mcptop(["check", "-c", cfg], timeout=60)
    c.attach(r.describe())
    c.no_crash(r)
    c.eq(r.stdout.count(SAID), 2, "check's text report shows the server's words for both servers")
    c.check("\x1b" not in r.stdout, "no escape sequence in check's report")
    r, by = sc.check_json(c, servers)
    for n in keys:
        d = str(dig(by, n, "last_failure", "detail"))
        c.check(SAID in d and "\x1b" not in d, "%s: check --json detail has the words: %r" % (n, d))
    c.eq(dig(by, "pw_dial", "last_failure", "site"), "connect", "pw_dial: at the dial")
    c.eq(dig(by, "pw_ping", "last_failure", "site"), "request", "pw_ping: at a ping")
    w = sc.TimedWatch(["watch", "-c", cfg])
    try:
        def said():
            return all(any(e.get("server") == n and e.get("event") == "exchange" and
                           SAID in str(e.get("detail")) for e in w.events) for n in keys)
        c.check(sc.wait_until(said, timeout=10), "watch's exchange events carry the words for both servers")
        c.check(not any("\x1b" in json.dumps(e, ensure_ascii=False) for e in w.events),
                "no escape sequence in watch's events")
        w.signal(signal.SIGINT)
        c.check(w.wait_exit(8) is not None, "watch exits within 8 s of SIGINT")
    finally:
        if c.failures:
            c.attach(w.describe(last=8))
        w.close()
    one = mcptest.write_config({"pw_dial": servers["pw_dial"]})
    t = sc.Tmux(["-c", one], cols=220, rows=40)
    try:
        text, ok = t.wait(lambda s: "403" in s, 10)
        c.check(ok, "the TUI shows the 403 within 10 s:\n%s" % text)
        t.keys("Enter")
        text, ok = t.wait(lambda s: SAID in s, 8)
        c.check(ok, "the TUI's detail pane shows the words:\n%s" % text)
        t.keys("q")
        t.wait(lambda s: "__EXIT=" in s, 8)
    finally:
        t.kill()
    sc.balanced(c, list(keys.values()))


CASES = [
    ("1 versions", versions),
    ("2 era_evidence", era_evidence),
    ("3 redirects", redirects),
    ("4 reasons", reasons),
    ("4 reasons_tui", reasons_tui),
    ("5 retry_after", retry_after),
    ("6 lost_session", lost_session),
    ("7 step_named", step_named),
    ("8 stdio_cleanup", stdio_cleanup),
    ("9 get_stream", get_stream),
    ("10 keep_alive", keep_alive),
    ("11 words", words),
]


def main():
    sc.run_cases(rep, CASES)


if __name__ == "__main__":
    main()
