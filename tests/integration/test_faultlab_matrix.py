#!/usr/bin/env python3
"""The fault matrix (issue 4): every fault of tests/faultlab at every site it
can hit, through `mcptop check --json` (one config, one run) and, for what
needs time, one `mcptop watch`. ONE table below, one row per fault x site, with
the classification DESIGN.md sections 2-4 asks for.

Behind the lab: a real nginx (generated config, temp dir, 127.0.0.1 only) for
the gateway's own 502 and 504 pages, and a self-signed certificate (openssl)
for the TLS rows.

Standalone:
  MCPTOP_BIN=/tmp/build-lab/mcptop python3 tests/integration/test_faultlab_matrix.py
The last line is "N passed, N failed"; the exit status is 1 on any failure.
"""

import http.client
import json
import os
import re
import socket
import sys
import time
from collections import namedtuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402
from mcptest import MISSING, dig  # noqa: E402
import faultlab  # noqa: E402

# Per-server limits so that every hang resolves fast.
FAST = {"timeout_ms": 1500, "open_deadline_ms": 1500}
# Rows behind nginx: its proxy_read_timeout (1 s) must fire before ours.
SLOW = {"timeout_ms": 3000, "open_deadline_ms": 3000}
# The 20 MB rows: reading 16 MiB takes a moment; it must not be a timeout.
ROOMY = {"timeout_ms": 5000, "open_deadline_ms": 5000}
# watch rows
WATCH = {"timeout_ms": 1500, "open_deadline_ms": 1500, "ping_interval_s": 0.3}
# stdio rows: a node child's start may take a while on a loaded machine
STDIO = {"timeout_ms": 1500, "open_deadline_ms": 6000}

ENDINGS_SKIP = "covered by tests/integration/test_end.py, which runs `mcptop end` against these lab endpoints"

Row = namedtuple("Row", "name via target site kind delivered liveness status detail opts tools "
                        "saw ending skip reason extra warn sessions other")


def R(name, target, site, kind=None, delivered=None, liveness=None, status=None, detail=None,
      opts=None, tools=None, saw=None, via="check", ending=None, skip=None,
      reason=None, extra=None, warn=None, sessions=False, other=False):
    """kind None: the row must be ok (reachable, no last_failure).

    Columns added for issues 12 and 13 (None / False: not checked):
      reason    last_failure.reason
      extra     {dotted path in the server object: expected value, or a predicate}
      warn      a regex one of the row's `warnings` must match
      sessions  every session the lab issued on the row's endpoint got a DELETE
      other     nothing of the row reached the lab's other port (another origin)
    In detail and warn, {other} stands for the other port's base URL."""
    if kind is None and liveness is None:
        liveness = "reachable"
    return Row(name, via, target, site, kind, delivered, liveness, status, detail,
               opts if opts is not None else FAST, tools, saw, ending, skip,
               reason, extra, warn, sessions, other)


def after_start(seconds):
    """A predicate: an epoch-ms number at least `seconds` after the check run started."""
    def pred(v):
        return isinstance(v, (int, float)) and not isinstance(v, bool) and \
            v >= CHECK_RUN.get("started_ms", 0) + seconds * 1000
    pred.__doc__ = "epoch ms >= check start + %.0f s" % seconds
    return pred


# The detail of an answer whose id is none of ours (issue 26.8).
STRAY = r'answer id "\d+" \(string\) matches no request; ours was \d+ \(number\)'

# target: lab:PATH (the fault lab), tls:PATH (the lab over https), gw:PATH
# (nginx in front of the lab or of a dead port), refused, stdio:ARGS
# (tests/stdio/fake.mjs with those options, space-separated), or a literal URL.
# site: dial (the fault answers initialize) and list (it answers the dial's
# tools/list) -> last_failure {site connect, op dial}; ping (a healthy dial,
# then the fault answers check's ping) -> {site request, op ping}.
# columns: kind, delivered, liveness (None = absent), http_status (None = absent)
MATRIX = [
    # --- healthy and near-healthy -----------------------------------------
    R("healthy", "lab:/healthy", "dial", tools=3),
    R("healthy, answers as SSE, 2 pages", "lab:/healthy?sse=1&page=2&tools=5", "dial", tools=5),
    R("no Mcp-Session-Id at all", "lab:/nosession", "dial", tools=3),
    R("short delay at dial", "lab:/delay/dial?ms=300", "dial"),
    R("short delay at ping", "lab:/delay/ping?ms=300", "ping"),
    R("https with ca_file", "tls:/healthy?ca=1", "dial", opts="ca"),
    # --- the connection is never made ---------------------------------------
    R("refused port", "refused", "dial", "connect_refused", "no", "unreachable"),
    R("host under .invalid", "http://nohost.invalid/mcp", "dial", "connect_refused", "no", "unreachable"),
    # --- transport failures ---------------------------------------------------
    R("reset after reading the request @dial", "lab:/reset/dial", "dial",
      "connection_failed", "no", "unreachable"),
    R("reset after reading the request @ping", "lab:/reset/ping", "ping",
      "connection_failed", "unknown", "unreachable"),
    R("https without ca_file", "tls:/healthy?noca=1", "dial",
      "connection_failed", "no", "unreachable", detail=r"(?i)certificate|verif", saw={"initialize": 0}),
    # --- timers -------------------------------------------------------------
    R("never answers @dial", "lab:/hang/dial", "dial", "timeout", "no", "unreachable"),
    R("never answers @ping", "lab:/hang/ping", "ping", "timeout", "unknown", "unreachable"),
    R("never answers @list (the dial's tools/list)", "lab:/hang/list", "list", "timeout", "no", "unreachable"),
    R("answer after 3 s @dial", "lab:/delay/dial?ms=3000", "dial", "timeout", "no", "unreachable"),
    R("answer after 3 s @ping", "lab:/delay/ping?ms=3000", "ping", "timeout", "unknown", "unreachable"),
    R("silent SSE stream @dial", "lab:/ssesilent/dial", "dial", "timeout", "no", "unreachable"),
    R("silent SSE stream @ping", "lab:/ssesilent/ping", "ping", "timeout", "unknown", "unreachable"),
    R("dribbled at 1 B/s @dial", "lab:/dribble/dial", "dial", "timeout", "no", "unreachable"),
    R("dribbled at 1 B/s @ping", "lab:/dribble/ping", "ping", "timeout", "unknown", "unreachable"),
    # --- HTTP statuses --------------------------------------------------------
    R("502 with an HTML body @dial", "lab:/html502/dial", "dial", "http_status", "unknown", "unknown", 502),
    R("502 with an HTML body @ping", "lab:/html502/ping", "ping", "http_status", "unknown", "unknown", 502),
    R("401 Bearer challenge @dial", "lab:/auth401/dial", "dial", "http_status", "unknown", "unknown", 401,
      detail=r"(?i)auth"),
    R("401 Bearer challenge @ping", "lab:/auth401/ping", "ping", "http_status", "unknown", "unknown", 401,
      detail=r"(?i)auth"),
    R("503 with Retry-After @dial", "lab:/busy503/dial?s=7", "dial", "http_status", "unknown", "unknown", 503,
      detail=r"Retry-After 7"),
    R("503 with Retry-After @ping", "lab:/busy503/ping?s=7", "ping", "http_status", "unknown", "unknown", 503,
      detail=r"Retry-After 7"),
    R("JSON-RPC error, null id, behind 400 @dial", "lab:/nullid400/dial", "dial",
      "http_status", "unknown", "unknown", 400),
    R("JSON-RPC error, null id, behind 400 @ping", "lab:/nullid400/ping", "ping",
      "http_status", "unknown", "unknown", 400),
    R("plain 404 @dial", "lab:/gone404/dial", "dial", "http_status", "unknown", "unknown", 404),
    R("nginx 502: upstream port dead", "gw:/dead/mcp", "dial", "http_status", "unknown", "unknown", 502,
      opts="slow"),
    R("nginx 502: upstream resets @ping", "gw:/gw/reset/ping?gw=1", "ping",
      "http_status", "unknown", "unknown", 502, opts="slow"),
    R("nginx 504: upstream never answers @dial", "gw:/gw/hang/dial?gw=1", "dial",
      "http_status", "unknown", "unknown", 504, opts="slow"),
    R("nginx 504: upstream never answers @ping", "gw:/gw/hang/ping?gw=1", "ping",
      "http_status", "unknown", "unknown", 504, opts="slow"),
    # --- 2xx that is not MCP --------------------------------------------------
    R("200 with an HTML page @dial", "lab:/html200/dial", "dial", "not_mcp_response", "no", "unknown"),
    R("200 with an HTML page @ping", "lab:/html200/ping", "ping", "not_mcp_response", "unknown", "unknown"),
    R("200 JSON with the wrong id @dial", "lab:/wrongid/dial", "dial", "not_mcp_response", "no", "unknown"),
    R("200 JSON with the wrong id @ping", "lab:/wrongid/ping", "ping", "not_mcp_response", "unknown", "unknown"),
    R("event-stream body of raw JSON @dial", "lab:/sseraw/dial", "dial", "not_mcp_response", "no", "unknown"),
    R("event-stream body of raw JSON @ping", "lab:/sseraw/ping", "ping",
      "not_mcp_response", "unknown", "unknown"),
    R("20 MB answer, 16 MiB default limit @dial", "lab:/big/dial?mb=20", "dial",
      "not_mcp_response", "no", "unknown", detail=r"size limit", opts="roomy"),
    R("20 MB answer, 1 MiB limit @ping", "lab:/big/ping?mb=20", "ping",
      "not_mcp_response", "unknown", "unknown", detail=r"size limit", opts="1mib"),
    # --- the stream ends ------------------------------------------------------
    R("SSE ends before the answer @dial", "lab:/sseshort/dial", "dial",
      "connection_closed", "no", "unreachable"),
    # The stream was primed (an event with an id): the server had the
    # request, and the resumption SEP-1699 asks for was refused (issue 17).
    R("SSE ends before the answer @ping", "lab:/sseshort/ping", "ping",
      "connection_closed", "yes", "unreachable", detail=r"resumption"),
    # issue 45, item 3: an event stream closed before any byte is a stream
    # cut under the request, not an answer that is no MCP
    R("empty event stream @dial", "lab:/sseempty/dial", "dial",
      "connection_closed", "no", "unreachable", detail=r"closed before any event"),
    R("empty event stream @ping", "lab:/sseempty/ping", "ping",
      "connection_closed", "unknown", "unreachable", detail=r"closed before any event"),
    # --- the server answered with an error ------------------------------------
    R("JSON-RPC error with our id @dial", "lab:/rpcerror/dial", "dial", "protocol", "yes", "reachable"),
    R("JSON-RPC error with our id @ping", "lab:/rpcerror/ping", "ping", "protocol", "yes", "reachable"),
    R("JSON-RPC error with our id behind 400 @dial", "lab:/rpcerror/dial?status=400", "dial",
      "protocol", "yes", "reachable", 400),
    R("JSON-RPC error with our id behind 400 @ping", "lab:/rpcerror/ping?status=400", "ping",
      "protocol", "yes", "reachable", 400),
    R("unknown protocolVersion in initialize", "lab:/badversion/dial", "dial", "protocol", "yes", "reachable",
      detail=r"protocol version"),
    # --- over time (mcptop watch) ---------------------------------------------
    R("session expires (404 after 3 requests) -> re-dial", "lab:/expire?after=3", "ping",
      "http_status", "unknown", "reachable", 404, detail=r"session expired", via="watch", opts="watch",
      saw={"initialize": 2}),
    R("tools/list_changed on the GET stream -> 5 tools", "lab:/listchanged?after_ms=700&add=2", "stream",
      tools=5, via="watch", opts="watch"),
    R("flapping: resets 1.5 s of every 3 s", "lab:/flap?up_ms=1500&down_ms=1500", "ping",
      "connection_failed", "unknown", "reachable", via="watch", opts="watch"),
    # --- issue 12: hostile input (test_hostile.py has the rest) ----------------
    R("HTTP+SSE endpoint on another origin (12.1)", "lab:/legacysse?endpoint=other", "dial",
      "protocol", "yes", "reachable", detail=r"{other_hostport}", other=True),
    R("notifications/initialized answered 500, session issued (12.4) @dial", "lab:/error500/initialized",
      "dial", "http_status", "unknown", "unknown", 500, reason="server_error",
      detail=r"notifications/initialized", sessions=True),
    R("tools/list answered 500, session issued (12.4) @list", "lab:/error500/list", "list",
      "http_status", "unknown", "unknown", 500, reason="server_error", detail=r"tools/list", sessions=True),
    R("protocol version refused after a session was issued (12.4)", "lab:/badversion/dial?v=1999-01-01&s=1",
      "dial", "protocol", "yes", "reachable", sessions=True),
    R("a 100 KB Mcp-Session-Id (12.9)", "lab:/bigsession/dial?kb=100", "dial",
      "not_mcp_response", "no", "unknown", detail=r"(?i)limit"),
    R("Retry-After 99999999999999999999999 (12.9) @ping", "lab:/busy503/ping?s=99999999999999999999999",
      "ping", "http_status", "unknown", "unknown", 503, reason="unavailable",
      detail=r"^(?!.*9223372036854775807)(?i:.*clamp)", sessions=True),
    # --- issue 13.1: every legacy revision ----------------------------------
    R("initialize answered 2024-11-05 (13.1)", "lab:/badversion/dial?v=2024-11-05", "dial", tools=3,
      extra={"era": "legacy", "session.protocol_version": "2024-11-05"}, sessions=True),
    R("initialize answered 2025-03-26 (13.1)", "lab:/badversion/dial?v=2025-03-26", "dial", tools=3,
      extra={"era": "legacy", "session.protocol_version": "2025-03-26"}, sessions=True),
    R("initialize answered 2024-10-07, outside the set (13.1)", "lab:/badversion/dial?v=2024-10-07", "dial",
      "protocol", "yes", "reachable", detail=r"2024-10-07.*2025-11-25|2025-11-25.*2024-10-07", sessions=True),
    R("HTTP+SSE server answering 2024-11-05 (13.1)", "lab:/legacysse?v=2024-11-05", "dial", tools=3,
      extra={"era": "legacy_sse", "session.protocol_version": "2024-11-05"}),
    # --- issue 13.2: era evidence --------------------------------------------
    R("server/discover answered 500 with an exception body (13.2)", "lab:/probe/exc500", "dial", tools=3,
      extra={"era": "legacy"}, warn=r"server/discover.*500|500.*server/discover", sessions=True),
    R("... and initialize answered 502 (13.2)", "lab:/probe/exc500?init=html502", "dial",
      "http_status", "unknown", "unknown", 502, reason="bad_gateway", detail=r"initialize"),
    R("discover 404, then initialize -32022 naming only 2026-07-28 (13.2)", "lab:/probe/init32022", "dial",
      tools=3, extra={"era": "modern"}, saw={"initialize": 1, "ping": 0}),
    # --- issue 13.3: redirects -----------------------------------------------
    R("307 to the slashed path, mount moved (13.3) @dial", "lab:/redirect/any?code=307", "dial", tools=3,
      warn=r"/redirect/any/", sessions=True),
    R("308 to the slashed path, mount moved (13.3) @dial", "lab:/redirect/any?code=308", "dial", tools=3,
      warn=r"/redirect/any/", sessions=True),
    R("301 to the slashed path, mount moved (13.3) @dial", "lab:/redirect/any?code=301", "dial", tools=3,
      warn=r"/redirect/any/", sessions=True),
    R("302 to the slashed path, mount moved (13.3) @dial", "lab:/redirect/any?code=302", "dial", tools=3,
      warn=r"/redirect/any/", sessions=True),
    R("307 to the slashed path (13.3) @ping", "lab:/redirect/ping?code=307", "ping",
      warn=r"/redirect/ping/", sessions=True),
    R("307 to another origin (13.3) @dial", "lab:/redirect/dial?code=307&to=other", "dial",
      "http_status", "unknown", "unknown", 307, reason="redirect", detail=r"{other}/redirect/dial/", other=True),
    R("307 to another origin (13.3) @ping", "lab:/redirect/ping?code=307&to=other", "ping",
      "http_status", "unknown", "unknown", 307, reason="redirect", detail=r"{other}/redirect/ping/",
      other=True, sessions=True),
    # --- issue 13.4: the reason behind a status (dial and ping) ---------------
    R("403 cf-mitigated: challenge, HTML (13.4) @dial", "lab:/cfchallenge/dial", "dial",
      "http_status", "unknown", "unknown", 403, reason="challenge", detail=r"^(?!.*(?i:auth))"),
    R("403 cf-mitigated: challenge, HTML (13.4) @ping", "lab:/cfchallenge/ping", "ping",
      "http_status", "unknown", "unknown", 403, reason="challenge", detail=r"^(?!.*(?i:auth))", sessions=True),
    R("401 Bearer (13.4) @dial", "lab:/auth401/dial?r=1", "dial", "http_status", "unknown", "unknown", 401,
      reason="auth"),
    R("401 Bearer (13.4) @ping", "lab:/auth401/ping?r=1", "ping", "http_status", "unknown", "unknown", 401,
      reason="auth", sessions=True),
    R("403 with WWW-Authenticate (13.4) @dial", "lab:/auth403/dial", "dial", "http_status", "unknown",
      "unknown", 403, reason="auth"),
    R("403 with WWW-Authenticate (13.4) @ping", "lab:/auth403/ping", "ping", "http_status", "unknown",
      "unknown", 403, reason="auth", sessions=True),
    R("plain 403 (13.4) @dial", "lab:/forbidden403/dial", "dial", "http_status", "unknown", "unknown", 403,
      reason="forbidden"),
    R("plain 403 (13.4) @ping", "lab:/forbidden403/ping", "ping", "http_status", "unknown", "unknown", 403,
      reason="forbidden", sessions=True),
    R("429 (13.4) @dial", "lab:/ratelimit429/dial", "dial", "http_status", "unknown", "unknown", 429,
      reason="rate_limited"),
    R("429 (13.4) @ping", "lab:/ratelimit429/ping", "ping", "http_status", "unknown", "unknown", 429,
      reason="rate_limited", sessions=True),
    R("503 (13.4) @dial", "lab:/busy503/dial?s=1", "dial", "http_status", "unknown", "unknown", 503,
      reason="unavailable"),
    R("503 (13.4) @ping", "lab:/busy503/ping?s=1", "ping", "http_status", "unknown", "unknown", 503,
      reason="unavailable", sessions=True),
    R("502 HTML (13.4) @dial", "lab:/html502/dial?r=1", "dial", "http_status", "unknown", "unknown", 502,
      reason="bad_gateway"),
    R("502 HTML (13.4) @ping", "lab:/html502/ping?r=1", "ping", "http_status", "unknown", "unknown", 502,
      reason="bad_gateway", sessions=True),
    R("504 HTML (13.4) @dial", "lab:/gateway504/dial", "dial", "http_status", "unknown", "unknown", 504,
      reason="gateway_timeout"),
    R("504 HTML (13.4) @ping", "lab:/gateway504/ping", "ping", "http_status", "unknown", "unknown", 504,
      reason="gateway_timeout", sessions=True),
    R("302 without Location (13.4) @dial", "lab:/status/dial?code=302", "dial", "http_status", "unknown",
      "unknown", 302, reason="redirect"),
    R("302 without Location (13.4) @ping", "lab:/status/ping?code=302", "ping", "http_status", "unknown",
      "unknown", 302, reason="redirect", sessions=True),
    R("404 (13.4) @dial", "lab:/gone404/dial?r=1", "dial", "http_status", "unknown", "unknown", 404,
      reason="not_found"),
    R("404 (13.4) @ping", "lab:/gone404/ping", "ping", "http_status", "unknown", "unknown", 404,
      reason="not_found", sessions=True),
    R("405 (13.4) @dial", "lab:/status/dial?code=405", "dial", "http_status", "unknown", "unknown", 405,
      reason="method_not_allowed"),
    R("405 (13.4) @ping", "lab:/status/ping?code=405", "ping", "http_status", "unknown", "unknown", 405,
      reason="method_not_allowed", sessions=True),
    R("500 (13.4) @dial", "lab:/error500/dial", "dial", "http_status", "unknown", "unknown", 500,
      reason="server_error"),
    R("500 (13.4) @ping", "lab:/error500/ping", "ping", "http_status", "unknown", "unknown", 500,
      reason="server_error", sessions=True),
    R("418 (13.4) @dial", "lab:/status/dial?code=418", "dial", "http_status", "unknown", "unknown", 418,
      reason="client_error"),
    R("418 (13.4) @ping", "lab:/status/ping?code=418", "ping", "http_status", "unknown", "unknown", 418,
      reason="client_error", sessions=True),
    # --- issue 13.5: the wait a server asks for (test_fieldreports.py times it) ---
    R("503 + Retry-After 5 on every request (13.5) @dial", "lab:/maintenance?s=5", "dial",
      "http_status", "unknown", "unknown", 503, reason="unavailable", saw={"initialize": 0},
      extra={"next_attempt_at": after_start(4)}),
    R("503 + Retry-After 5 (13.5) @ping", "lab:/busy503/ping?s=5", "ping",
      "http_status", "unknown", "unknown", 503, reason="unavailable",
      extra={"next_attempt_at": after_start(4)}),
    # --- issue 13.7: the step named ------------------------------------------
    R("no session id; notifications/initialized answered 404 (13.7)", "lab:/gone404/initialized?nosession=1",
      "dial", "http_status", "unknown", "unknown", 404, reason="not_found",
      detail=r"notifications/initialized answered 404 after initialize succeeded"),
    R("initialize answered 502 (13.7)", "lab:/html502/dial?step=1", "dial", "http_status", "unknown",
      "unknown", 502, detail=r"^(?!.*notifications/initialized).*initialize"),
    R("server/discover answered 503 (13.7)", "lab:/probe/503", "dial", "http_status", "unknown",
      "unknown", 503, detail=r"server/discover", saw={"initialize": 0}),
    # --- issue 26.4: the server's own words (check, watch and the TUI show
    # the same detail: test_fieldreports.py's words case) --------------------
    R("404 \"Session not found\" labelled text/html, Express (26.4) @dial", "lab:/words/dial", "dial",
      "http_status", "unknown", "unknown", 404, reason="not_found",
      detail=r'; the server says "Session not found"'),
    R("404 \"Session not found\" labelled text/html, Express (26.4) @ping", "lab:/words/ping", "ping",
      "http_status", "unknown", "unknown", 404, reason="not_found",
      detail=r'; the server says "Session not found"', sessions=True),
    R("403 naming the fix, Playwright (26.4) @dial",
      "lab:/words/dial?code=403&type=none&text=Access%20is%20only%20allowed%20at%20localhost%3A7113", "dial",
      "http_status", "unknown", "unknown", 403, reason="forbidden",
      detail=r'^HTTP 403 to initialize; forbidden; the server says "Access is only allowed at localhost:7113"'),
    R("403 naming the fix, Playwright (26.4) @ping",
      "lab:/words/ping?code=403&type=none&text=Access%20is%20only%20allowed%20at%20localhost%3A7113", "ping",
      "http_status", "unknown", "unknown", 403, reason="forbidden",
      detail=r'^HTTP 403 to ping; forbidden; the server says "Access is only allowed at localhost:7113"$',
      sessions=True),
    R("a long sentence, cut at 200 characters (26.4) @ping",
      "lab:/words/ping?code=503&type=text/plain&text=overloaded%20&repeat=40", "ping",
      "http_status", "unknown", "unknown", 503, reason="unavailable",
      detail=r'the server says "(?=[^"]{100,203}"$)(overloaded )+overloaded\.\.\."$', sessions=True),
    R("escapes in the words are stripped (26.4) @dial",
      "lab:/words/dial?code=403&text=Invalid%20%1B%5B31msession%1B%5B0m%20ID%07", "dial",
      "http_status", "unknown", "unknown", 403, reason="forbidden",
      detail=r'^(?!.*[\x00-\x1f]).*the server says "Invalid session ID"'),
    R("a page's title, escapes stripped (26.4) @dial",
      "lab:/words/dial?code=502&text=%3Chtml%3E%3Ctitle%3EUpstream%20%1B%5B2Jdown%3C%2Ftitle%3E%3Cbody%3E%3C%2Fbody%3E",
      "dial", "http_status", "unknown", "unknown", 502, reason="bad_gateway",
      detail=r'^(?!.*[\x00-\x1f]).*an HTML page titled "Upstream down"$'),
    R("a gateway's 502 page gives its title (26.4) @ping", "lab:/html502/ping?t=words", "ping",
      "http_status", "unknown", "unknown", 502, reason="bad_gateway",
      detail=r'an HTML page titled "502 Bad Gateway"', sessions=True),
    R("200 with an HTML page gives its title (26.4) @dial", "lab:/html200/dial?t=words", "dial",
      "not_mcp_response", "no", "unknown", detail=r'not an MCP answer; an HTML page titled "Welcome"'),
    # --- issue 26.7: answers compressed without being asked ------------------
    R("every answer gzip, unasked (26.7)", "lab:/encoded/any?enc=gzip", "dial", tools=3),
    R("every answer deflate, unasked (26.7)", "lab:/encoded/any?enc=deflate", "dial", tools=3),
    R("every answer br, unasked (26.7)", "lab:/encoded/any?enc=br", "dial", tools=3),
    R("every SSE answer gzip, unasked (26.7)", "lab:/encoded/any?enc=gzip&sse=1", "dial", tools=3),
    R("an encoding libcurl cannot decode (26.7) @dial", "lab:/encoded/dial?enc=compress", "dial",
      "not_mcp_response", "no", "unknown", detail=r"content-encoding compress, which .*cannot decode"),
    R("an encoding libcurl cannot decode (26.7) @ping", "lab:/encoded/ping?enc=x-faultlab", "ping",
      "not_mcp_response", "unknown", "unknown", detail=r"content-encoding x-faultlab, which .*cannot decode",
      sessions=True),
    # --- issue 26.8: an answer whose id is none of ours, on every transport ---
    R("JSON body, the id written back as a string (26.8) @dial", "lab:/stringid/dial", "dial",
      "not_mcp_response", "no", "unknown", detail=STRAY, sessions=True),
    R("JSON body, the id written back as a string (26.8) @ping", "lab:/stringid/ping", "ping",
      "not_mcp_response", "unknown", "unknown", detail=STRAY, sessions=True),
    R("SSE event on the POST, id as a string, stream closed (26.8) @dial", "lab:/stringid/dial?sse=1", "dial",
      "not_mcp_response", "no", "unknown", detail=STRAY + "$", sessions=True),
    R("SSE event on the POST, id as a string, stream closed (26.8) @ping", "lab:/stringid/ping?sse=1", "ping",
      "not_mcp_response", "unknown", "unknown", detail=STRAY + "$", sessions=True),
    R("on the GET stream, id as a string (26.8) @ping", "lab:/stringid/ping?via=get", "ping",
      "not_mcp_response", "unknown", "unknown", detail=STRAY + "; no answer to ping within", via="watch",
      opts="watch"),
    R("2024-11-05 HTTP+SSE, id as a string (26.8) @dial", "lab:/legacysse?stringid=dial", "dial",
      "not_mcp_response", "no", "unknown", detail=STRAY + "; open deadline"),
    R("2024-11-05 HTTP+SSE, id as a string (26.8) @ping", "lab:/legacysse?stringid=ping", "ping",
      "not_mcp_response", "unknown", "unknown", detail=STRAY + "; no answer to ping within"),
    R("stdio, id as a string (26.8) @dial", "stdio:--string-id=initialize", "dial",
      "not_mcp_response", "no", "unknown", detail=STRAY + "; no answer to initialize within", opts=STDIO),
    R("stdio, id as a string (26.8) @ping", "stdio:--string-id=ping", "ping",
      "not_mcp_response", "unknown", "unknown", detail=STRAY + "; no answer to ping within", opts=STDIO),
    # --- endings (not yet in mcptop) ------------------------------------------
    # issue 17: the deep check (probe_tool, a tools/call) and SEP-1699
    R("deep check: the tool answers isError", "lab:/healthy?t=call-err", "call",
      "protocol", "yes", "reachable", detail=r"isError: the tool failed on purpose",
      reason="tool_error", opts=dict(FAST, probe_tool={"name": "fail"})),
    R("deep check: the expected text is missing", "lab:/healthy?t=call-text", "call",
      "protocol", "yes", "reachable", detail=r"expected text not found",
      reason="unexpected_result", opts=dict(FAST, probe_tool={"name": "echo", "expect_text": "nope"})),
    R("deep check: its answer stream resumes (GET, Last-Event-ID)",
      "lab:/healthy?resume=ok", "call",
      opts=dict(FAST, probe_tool={"name": "echo", "arguments": {"text": "r"},
                                  "expect_text": "echo: r"})),
    R("deep check: an answer stream with no event id cannot resume",
      "lab:/healthy?resume=noid", "call", "connection_closed", "unknown", "reachable",
      detail=r"ended before the answer", opts=dict(FAST, probe_tool={"name": "echo"})),
    R("deep check: its resumption is refused (GET 405)",
      "lab:/healthy?resume=refuse", "call", "connection_closed", "yes", "reachable",
      detail=r"resumption \(1\) failed", opts=dict(FAST, probe_tool={"name": "echo"})),
    R("DELETE answered 405", "lab:/delete405", "end", via="end", ending="not_allowed", skip=ENDINGS_SKIP),
    R("DELETE answered 404", "lab:/delete404", "end", via="end", ending="already_gone", skip=ENDINGS_SKIP),
    R("DELETE answered 500", "lab:/delete500", "end", via="end", ending="rejected 500", skip=ENDINGS_SKIP),
    R("DELETE never answered", "lab:/deletehang", "end", via="end", ending="timed_out", skip=ENDINGS_SKIP),
    R("DELETE answered after 3 s", "lab:/deletedelay?ms=3000", "end", via="end",
      ending="timed_out, settles later", skip=ENDINGS_SKIP),
    R("DELETE reset", "lab:/deletereset", "end", via="end", ending="failed connection_failed",
      skip=ENDINGS_SKIP),
    R("no session to end", "lab:/nosession", "end", via="end", ending="no_session", skip=ENDINGS_SKIP),
    R("initialize answered late with a session id", "lab:/lateinit?ms=2500", "end", via="end",
      ending="half-open: terminated", skip=ENDINGS_SKIP),
]

OPTS = {
    "ca": None,      # filled in with ca_file once the certificate exists
    "slow": SLOW,
    "roomy": ROOMY,
    "1mib": dict(FAST, max_message_bytes=1048576),
    "watch": WATCH,
}

rep = mcptest.Reporter("fault matrix: mcptop check / watch against tests/faultlab, nginx and TLS")


# --------------------------------------------------------------------------
# setup

class Env:
    lab = None
    gw = None
    cert = None
    refused_port = None
    dead_port = None


def setup():
    Env.cert = faultlab.make_cert()
    Env.lab = faultlab.FaultLab(tls=Env.cert).start()
    Env.refused_port = mcptest.free_port()
    Env.dead_port = mcptest.free_port()
    Env.gw = faultlab.Nginx([
        ("/dead/", "http://127.0.0.1:%d/" % Env.dead_port, "1s"),
        ("/gw/", "http://127.0.0.1:%d/" % Env.lab.port, "1s"),
    ]).start()
    OPTS["ca"] = dict(FAST, ca_file=Env.cert.cert)


def url_of(row):
    t = row.target
    if t.startswith("lab:"):
        return Env.lab.url(t[4:])
    if t.startswith("tls:"):
        return Env.lab.tls_url(t[4:])
    if t.startswith("gw:"):
        return Env.gw.url(t[3:])
    if t == "refused":
        return "http://127.0.0.1:%d/mcp" % Env.refused_port
    return t


def lab_key(row):
    """The lab's /_counts key for this row, or None when the lab is not behind it."""
    t = row.target
    if t.startswith("lab:") or t.startswith("tls:"):
        return t[4:]
    if t.startswith("gw:/gw/"):
        return t[len("gw:/gw"):]
    return None


def server_name(i):
    return "r%02d" % i


def declaration(row):
    if row.target.startswith("stdio:"):
        d = {"command": "node", "args": [str(mcptest.TESTS_DIR / "stdio" / "fake.mjs")] +
             row.target[len("stdio:"):].split()}
    else:
        d = {"url": url_of(row)}
    opts = OPTS[row.opts] if isinstance(row.opts, str) else row.opts
    d.update(opts)
    return d


# --------------------------------------------------------------------------
# judging one row

def expected_of(row):
    site = {"dial": "connect", "list": "connect", "ping": "request",
            "call": "request"}.get(row.site)
    op = {"dial": "dial", "list": "dial", "ping": "ping",
          "call": "tools/call"}.get(row.site)
    return {
        "ok": row.kind is None,
        "kind": row.kind,
        "delivered": row.delivered,
        "liveness": row.liveness,
        "http_status": row.status,
        "site": site if row.kind else None,
        "op": op if row.kind else None,
    }


def actual_of(s):
    f = s.get("last_failure") if isinstance(s, dict) else None
    f = f if isinstance(f, dict) else {}
    lv = s.get("liveness") if isinstance(s, dict) else None
    return {
        "ok": s.get("ok"),
        "kind": f.get("kind"),
        "delivered": f.get("delivered"),
        "liveness": lv.get("state") if isinstance(lv, dict) else None,
        "http_status": f.get("http_status"),
        "site": f.get("site"),
        "op": f.get("op"),
        "detail": f.get("detail"),
    }


def fmt(d, keys=("ok", "kind", "delivered", "liveness", "http_status", "site", "op")):
    return " ".join("%s=%s" % (k, "None" if d.get(k) is None else d.get(k)) for k in keys)


def check_saw(c, row, expect):
    """What the lab saw on this row's endpoint (the site is real, not assumed)."""
    key = lab_key(row)
    if key is None:
        return
    cnt = Env.lab.endpoint_counts(key)
    methods = cnt.get("methods", {})
    want = {}
    if row.site == "dial" and row.via == "check" and row.kind is not None:
        want = {"initialize": ">=1", "ping": 0}    # the dial failed: never pinged
    elif row.site == "dial" and row.via == "check":
        want = {"initialize": ">=1", "ping": ">=1"}  # a good dial, then check's one ping
    elif row.site == "list":
        want = {"tools/list": ">=1", "ping": 0}
    elif row.site == "ping":
        want = {"ping": ">=1"}
    if row.saw:
        want.update(row.saw)
    for m, w in want.items():
        got = methods.get(m, 0)
        ok = got >= int(w[2:]) if isinstance(w, str) else got == w
        c.check(ok, "the lab saw %s x%d on %s, expected %s" % (m, got, key, w))


def judge_check_row(c, row, s):
    exp = expected_of(row)
    act = actual_of(s)
    bad = [k for k in ("ok", "kind", "delivered", "liveness", "http_status", "site", "op")
           if exp[k] != act[k]]
    detail_re = placeholders(row.detail) if row.detail else None
    if detail_re and not re.search(detail_re, act.get("detail") or ""):
        bad.append("detail")
    if row.tools is not None and s.get("tools") != row.tools:
        bad.append("tools")
    if row.reason is not None and dig(s, "last_failure", "reason") != row.reason:
        bad.append("reason")
    if bad:
        c.failures.append("mismatch in %s\n  expected: %s%s%s%s\n  actual:   %s tools=%s reason=%s\n"
                          "  detail:   %r"
                          % (", ".join(bad), fmt(exp),
                             " detail~/%s/" % detail_re if detail_re else "",
                             " tools=%s" % row.tools if row.tools is not None else "",
                             " reason=%s" % row.reason if row.reason is not None else "",
                             fmt(act), s.get("tools"), dig(s, "last_failure", "reason"), act.get("detail")))
    for path, want in (row.extra or {}).items():
        got = dig(s, *path.split("."))
        if callable(want):
            c.check(want(got), "%s: %r does not hold (%s)" % (path, got, want.__doc__ or "predicate"))
        else:
            c.eq(got, want, path)
    if row.warn is not None:
        ws = s.get("warnings") if isinstance(s.get("warnings"), list) else []
        pat = placeholders(row.warn)
        c.check(any(isinstance(w, str) and re.search(pat, w) for w in ws),
                "a warning matching /%s/ (warnings %r)" % (pat, ws))
    check_saw(c, row, exp)
    check_lab_invariants(c, row)


def placeholders(pattern):
    """{other}: the lab's other port as a URL; {other_hostport}: 127.0.0.1:PORT of it."""
    if Env.lab is None or not Env.lab.other_base:
        return pattern
    return pattern.replace("{other}", re.escape(Env.lab.other_base)).replace(
        "{other_hostport}", re.escape(Env.lab.other_base.split("//", 1)[1]))


def check_lab_invariants(c, row):
    """The new rows' lab-side promises: sessions ended, nothing sent to another origin."""
    key = lab_key(row)
    if key is None:
        return
    if row.sessions:
        cnt = Env.lab.endpoint_counts(key)
        c.eq(cnt.get("sessions_ended", 0), cnt.get("sessions_issued", 0),
             "sessions ended (DELETE seen) == issued on %s" % key)
    if row.other:
        frm = (Env.lab.other_origin().get("by_from") or {}).get(key) or {}
        c.eq(frm.get("requests", 0), 0, "requests from %s that reached the other origin" % key)


# --------------------------------------------------------------------------
# the check run: every check row in one config

CHECK_RUN = {}


def run_check():
    rows = [(i, r) for i, r in enumerate(MATRIX) if r.via == "check" and not r.skip]
    cfg = mcptest.write_config({server_name(i): declaration(r) for i, r in rows})
    t0 = time.monotonic()
    CHECK_RUN["started_ms"] = time.time() * 1000
    res = mcptest.run_mcptop(["check", "--json", "-c", cfg], timeout=60)
    CHECK_RUN["elapsed"] = time.monotonic() - t0
    CHECK_RUN["result"] = res
    doc = res.json()
    by_name = {}
    if isinstance(doc, dict) and isinstance(doc.get("servers"), list):
        for s in doc["servers"]:
            if isinstance(s, dict):
                by_name[s.get("name")] = s
    CHECK_RUN["servers"] = by_name
    mcptest.log("(mcptop check over %d servers: exit %s in %.1fs)"
                % (len(rows), res.rc, CHECK_RUN["elapsed"]))


def check_row_case(i, row):
    def fn(c):
        res = CHECK_RUN["result"]
        if res.crashed():
            c.attach(res.describe())
            c.fatal("mcptop check crashed or hung: %s" % res.crashed())
        s = CHECK_RUN["servers"].get(server_name(i))
        if s is None:
            c.attach(res.describe())
            c.fatal("no server %s in the check output (%s)" % (server_name(i), res.json_error or "JSON ok"))
        judge_check_row(c, row, s)
        c.attach("url: %s" % url_of(row))
    return fn


# --------------------------------------------------------------------------
# the watch run: every watch row in one `mcptop watch`

class Track:
    """Per watch row: the events of its server, and a verdict function."""

    def __init__(self, i, row):
        self.i = i
        self.row = row
        self.name = server_name(i)
        self.events = []
        self.done = False


def expiry_verdict(t):
    """A ping answered 404 (session expired), then a dial that completes."""
    fail = None
    for ev in t.events:
        if fail is None and ev.get("event") == "exchange" and ev.get("op") == "ping" and \
                ev.get("outcome") != "completed":
            fail = ev
        elif fail is not None and ev.get("event") == "exchange" and ev.get("op") == "dial":
            return fail, ev
    return fail, None


def flap_verdict(t):
    """Liveness reachable, then unreachable, then reachable again; the failing exchange."""
    states = []
    fail = None
    for ev in t.events:
        if ev.get("event") == "liveness":
            st = ev.get("state")
            if not states or states[-1] != st:
                states.append(st)
        if fail is None and ev.get("event") == "exchange" and ev.get("outcome") != "completed":
            fail = ev
    seq = ["reachable", "unreachable", "reachable"]
    it = iter(states)
    return fail, states, all(any(s == want for s in it) for want in seq)


def stray_verdict(t):
    """The first failed ping (an answer with an id none of ours came instead)."""
    return next((ev for ev in t.events if ev.get("event") == "exchange" and ev.get("op") == "ping" and
                 ev.get("outcome") != "completed"), None)


def list_verdict(t):
    changed = [ev for ev in t.events if ev.get("event") == "tools_changed"]
    return changed


def watch_done(t):
    kind = scenario(t.row)
    if kind == "expiry":
        return expiry_verdict(t)[1] is not None
    if kind == "flap":
        return flap_verdict(t)[2]
    if kind == "listchanged":
        return any(ev.get("tools") == t.row.tools for ev in list_verdict(t))
    if kind == "stringid":
        return stray_verdict(t) is not None
    return True


def scenario(row):
    for k in ("expire", "flap", "listchanged", "stringid"):
        if row.target.startswith("lab:/" + k):
            return "expiry" if k == "expire" else k
    return None


WATCH_RUN = {}


def run_watch():
    rows = [(i, r) for i, r in enumerate(MATRIX) if r.via == "watch" and not r.skip]
    tracks = {server_name(i): Track(i, r) for i, r in rows}
    cfg = mcptest.write_config({server_name(i): declaration(r) for i, r in rows})
    deadline = time.monotonic() + 20.0
    t0 = time.monotonic()
    w = mcptest.Watch(["watch", "-c", cfg])
    try:
        while time.monotonic() < deadline and not all(t.done for t in tracks.values()):
            ev = w.wait_for(lambda e: True, min(deadline, time.monotonic() + 1.0))
            if ev is None:
                if w.proc.poll() is not None:
                    break
                continue
            t = tracks.get(ev.get("server"))
            if t is not None:
                t.events.append(ev)
                t.done = watch_done(t)
    finally:
        rc = w.close()
    WATCH_RUN.update(watch=w, tracks=tracks, rc=rc, elapsed=time.monotonic() - t0)
    mcptest.log("(mcptop watch over %d servers: %.1fs)" % (len(rows), WATCH_RUN["elapsed"]))


def watch_row_case(i, row):
    def fn(c):
        t = WATCH_RUN["tracks"][server_name(i)]
        w = WATCH_RUN["watch"]
        c.attach("url: %s\nevents of %s:\n%s" % (url_of(row), t.name,
                                                 "\n".join(json.dumps(e) for e in t.events[-30:])))
        c.check("Sanitizer" not in w.stderr() and "runtime error:" not in w.stderr(),
                "watch stderr is clean: %s" % w.stderr()[-2000:])
        kind = scenario(row)
        if kind == "expiry":
            fail, dial = expiry_verdict(t)
            c.require(fail is not None, "no failed ping seen (expected %s %s %s)"
                      % (row.kind, row.status, row.detail))
            exp = (row.kind, row.delivered, row.status, "request")
            act = (fail.get("outcome"), fail.get("delivered"), fail.get("http_status"), fail.get("site"))
            c.check(exp == act and re.search(row.detail, fail.get("detail") or ""),
                    "the failed ping\n  expected: outcome=%s delivered=%s http_status=%s site=%s detail~/%s/"
                    "\n  actual:   outcome=%s delivered=%s http_status=%s site=%s detail=%r"
                    % (exp + (row.detail,) + act + (fail.get("detail"),)))
            c.require(dial is not None, "no dial after the expired session within the bound")
            c.eq(dial.get("outcome"), "completed", "the re-dial's outcome")
            lv = [e for e in t.events if e.get("event") == "liveness"]
            c.eq(lv[-1].get("state") if lv else None, row.liveness, "liveness after the re-dial")
            check_saw(c, row, None)
            cnt = Env.lab.endpoint_counts(lab_key(row))
            c.eq(cnt.get("sessions_expired"), 1, "sessions the lab expired")
        elif kind == "listchanged":
            changed = list_verdict(t)
            c.check(any(e.get("tools") == row.tools for e in changed),
                    "tools_changed with tools=%s, got %r" % (row.tools, changed))
            c.check(any(e.get("event") == "exchange" and e.get("op") == "stream" and
                        e.get("outcome") == "completed" for e in t.events), "the GET stream opened")
            c.check(all(e.get("outcome") == "completed" for e in t.events if e.get("event") == "exchange"),
                    "every exchange completed")
            cnt = Env.lab.endpoint_counts(lab_key(row))
            c.eq(cnt.get("list_changed_sent"), 1, "list_changed notices the lab sent")
            c.check(cnt.get("methods", {}).get("tools/list", 0) >= 2,
                    "the lab was listed again: tools/list x%s" % cnt.get("methods", {}).get("tools/list"))
        elif kind == "stringid":
            fail = stray_verdict(t)
            c.require(fail is not None, "no failed ping seen (expected %s)" % row.kind)
            exp = (row.kind, row.delivered, "request")
            act = (fail.get("outcome"), fail.get("delivered"), fail.get("site"))
            c.check(exp == act and re.search(row.detail, fail.get("detail") or ""),
                    "the failed ping\n  expected: outcome=%s delivered=%s site=%s detail~/%s/"
                    "\n  actual:   outcome=%s delivered=%s site=%s detail=%r"
                    % (exp + (row.detail,) + act + (fail.get("detail"),)))
            cnt = Env.lab.endpoint_counts(lab_key(row))
            c.check(cnt.get("streams_opened", 0) >= 1, "the GET stream was open: %r" % cnt)
        elif kind == "flap":
            fail, states, ok = flap_verdict(t)
            c.check(ok, "liveness reachable -> unreachable -> reachable, got %r" % states)
            c.require(fail is not None, "no failed exchange while the endpoint was down")
            exp = (row.kind, row.delivered, "request", "ping")
            act = (fail.get("outcome"), fail.get("delivered"), fail.get("site"), fail.get("op"))
            c.check(exp == act, "the first failed exchange\n  expected: outcome=%s delivered=%s site=%s op=%s"
                    "\n  actual:   outcome=%s delivered=%s site=%s op=%s detail=%r"
                    % (exp + act + (fail.get("detail"),)))
            unr = [e for e in t.events if e.get("event") == "liveness" and e.get("state") == "unreachable"]
            c.check(unr and unr[0].get("error_code") == row.kind,
                    "unreachable carries error_code %s: %r" % (row.kind, unr[:1]))
        if c.failures:
            c.attach(w.describe(last=10))
    return fn


# --------------------------------------------------------------------------
# the lab itself: oracle and endings faults (so they are ready for `mcptop end`)

def lab_oracle(c):
    """The healthy endpoint is real MCP: the official SDK client lists its tools."""
    got = mcptest.count_tools(Env.lab.url("/healthy?oracle=1"), timeout=15)
    c.eq(got.get("tools"), 3, "tools seen by the SDK client")
    c.eq(got.get("server_name"), "faultlab", "serverInfo.name")
    got = mcptest.count_tools(Env.lab.url("/healthy?oracle=2&sse=1&page=2&tools=5"), timeout=15)
    c.eq(got.get("tools"), 5, "tools seen by the SDK client (SSE answers, 3 pages)")


def _post_initialize(port, path):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "faultlab-selfcheck", "version": "0"}}})
    conn.request("POST", path, body, {"Content-Type": "application/json",
                                      "Accept": "application/json, text/event-stream"})
    r = conn.getresponse()
    r.read()
    conn.close()
    return r.status, r.getheader("Mcp-Session-Id")


def _delete(port, path, sid, timeout):
    """(status or exception name, seconds)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    t0 = time.monotonic()
    try:
        conn.request("DELETE", path, headers={"Mcp-Session-Id": sid} if sid else {})
        r = conn.getresponse()
        r.read()
        return r.status, time.monotonic() - t0
    except socket.timeout:
        return "timeout", time.monotonic() - t0
    except (ConnectionResetError, http.client.RemoteDisconnected, BrokenPipeError) as e:
        return type(e).__name__, time.monotonic() - t0
    finally:
        conn.close()


def lab_endings(c):
    """The lab's DELETE and late-session faults behave as built (mcptop not involved)."""
    port = Env.lab.port
    cases = [
        ("/healthy?end=1", 200, 3.0),
        ("/delete405", 405, 3.0),
        ("/delete404", 404, 3.0),
        ("/delete500", 500, 3.0),
        ("/deletehang", "timeout", 0.8),
        ("/deletedelay?ms=400", 200, 3.0),
        ("/deletereset", ("ConnectionResetError", "RemoteDisconnected"), 3.0),
    ]
    for path, want, tmo in cases:
        st, sid = _post_initialize(port, path)
        c.eq((st, bool(sid)), (200, True), "%s: initialize answered with a session id" % path)
        got, secs = _delete(port, path, sid, tmo)
        c.check(got in want if isinstance(want, tuple) else got == want,
                "%s: DELETE gave %r, expected %r" % (path, got, want))
        if path.startswith("/deletedelay"):
            c.check(secs >= 0.35, "%s: answered after %.2fs, expected >= 0.4s" % (path, secs))
        c.check(Env.lab.endpoint_counts(path).get("DELETE") == 1, "%s: the lab counted the DELETE" % path)
    st, sid = _post_initialize(port, "/nosession?end=1")
    c.eq((st, sid), (200, None), "/nosession: initialize answered without Mcp-Session-Id")
    t0 = time.monotonic()
    st, sid = _post_initialize(port, "/lateinit?ms=400")
    secs = time.monotonic() - t0
    c.check(st == 200 and sid and secs >= 0.35,
            "/lateinit: answered %s after %.2fs with session id %r" % (st, secs, sid))
    got, _ = _delete(port, "/lateinit?ms=400", sid, 3.0)
    c.eq(got, 200, "/lateinit: DELETE of the late session")
    cnt = Env.lab.endpoint_counts("/lateinit?ms=400")
    c.eq((cnt.get("sessions_issued"), cnt.get("sessions_deleted")), (1, 1),
         "/lateinit: sessions issued, deleted")


# --------------------------------------------------------------------------

def main():
    try:
        setup()
    except Exception as e:  # SetupError or anything else: one failed case, not a crash
        rep.run("setup: fault lab, nginx, certificate", lambda c: c.fatal("%s" % e))
        if Env.lab is not None:
            mcptest.log(Env.lab.output()[-3000:])
        rep.finish()
    mcptest.log("(lab at %s and %s, nginx at %s)" % (Env.lab.base, Env.lab.tls_base, Env.gw.base))

    rep.run("lab: the healthy endpoint is real MCP (SDK client oracle)", lab_oracle)

    run_check()
    for i, row in enumerate(MATRIX):
        if row.via == "check" and not row.skip:
            rep.run("%s %s" % (row.site, row.name), check_row_case(i, row))

    run_watch()
    for i, row in enumerate(MATRIX):
        if row.via == "watch" and not row.skip:
            rep.run("watch %s" % row.name, watch_row_case(i, row))

    for row in MATRIX:
        if row.skip:
            mcptest.log("SKIP %s %s (expected ending %s): %s" % (row.site, row.name, row.ending, row.skip))

    rep.run("lab: DELETE and late-session faults answer as built", lab_endings)

    if rep.failed and (CHECK_RUN.get("result") is not None):
        mcptest.log("--- lab log tail ---\n%s" % Env.lab.output()[-1500:])
    rep.finish()


if __name__ == "__main__":
    main()
