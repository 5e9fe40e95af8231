#!/usr/bin/env node
// mcptop fault lab: one loopback HTTP(S) server whose behaviour is chosen per
// endpoint by URL path. A healthy endpoint is a small, hand-written, correct
// MCP Streamable HTTP server (revisions 2025-03-26 .. 2025-11-25: initialize,
// notifications/initialized, ping, tools/list with cursors, sessions, the GET
// stream, DELETE). A fault endpoint is that same server with one fault armed
// for one site:
//
//   /<fault>/<site>?params
//
//   site  dial   the fault answers `initialize` (the default when omitted)
//         ping   the dial is healthy; the fault answers `ping`
//         list   the fault answers `tools/list`
//         any    the fault answers every JSON-RPC request
//
// Message faults (armed for a site):
//   reset       read the whole request, then reset the connection (RST)
//   hang        read the request, never answer (connection stays open)
//   delay       answer correctly after ?ms= (default 3000)
//   html502     502 with an HTML page (a gateway's)
//   auth401     401 with WWW-Authenticate: Bearer ...
//   busy503     503 with Retry-After: ?s= (default 7)
//   html200     200 with an HTML page
//   wrongid     200 JSON, a response whose id is not the request's
//   rpcerror    JSON-RPC error carrying the request's id, ?status= (200)
//   nullid400   400 with a JSON-RPC error whose id is null
//   badversion  initialize answered with protocolVersion ?v= (1999-01-01)
//   sseshort    text/event-stream: one well-formed event, then the end,
//               before the answer
//   sseempty    200 text/event-stream closed before any byte of body (a
//               dead child behind a gateway)
//   sseraw      text/event-stream whose body is raw JSON (no SSE lines)
//   ssesilent   text/event-stream that stays open and silent
//   big         200 JSON answer of ?mb= MB (default 20)
//   dribble     the whole HTTP answer written ?bps= bytes/s (default 1)
//   gone404     plain 404 Not Found
//   error500    plain 500                  status     ?code= (500), plain text
//   exception500  500 with a serialized exception as JSON (no JSON-RPC)
//   cfchallenge 403 + cf-mitigated: challenge and an HTML bot-check page
//   auth403     403 + WWW-Authenticate: Bearer error="insufficient_scope"
//   forbidden403  plain 403                ratelimit429  429 (?s= adds Retry-After)
//   gateway504  504 with an HTML page (a gateway's)
//   redirect    ?code= (307) with Location: the same path with a trailing
//               slash on this origin (served healthy there: the mount
//               point), after ?hops= (1) redirects in all; ?to=other: the
//               same path on the --other-port (another origin). Site `any`
//               redirects every request to the unslashed path, GET and
//               DELETE included. /redirect/X and /redirect/X/ share counts.
//   bigsession  initialize answered with a ?kb= (100) KB Mcp-Session-Id
//   words       the server's own words (issue 26.4): status ?code= (404),
//               Content-Type ?type= ("text/html; charset=utf-8", Express's
//               label for a plain sentence; none: no header), body ?text=
//               ("Session not found") ?repeat= (1) times
//   encoded     the healthy answer compressed unasked (issue 26.7):
//               Content-Encoding ?enc= gzip (default), deflate, br, or any
//               other name (the body then sent as is); ?sse=1 compresses
//               the SSE answer
//   stringid    the healthy answer with its id written back as a string
//               ("3" for 3, issue 26.8), as JSON, or with ?sse=1 as an
//               event on the POST's stream, which then closes; ?via=get:
//               the POST's SSE stream stays open and silent and the answer
//               goes down the endpoint's GET stream (the endpoint offers
//               tools.listChanged so that a client opens one)
//   busy503 and ratelimit429 take ?s=: digits are sent verbatim (a huge value
//   stays huge); ?date=1 sends an HTTP date at least s seconds ahead.
//
// Site `initialized` (besides dial, ping, list, any): the fault answers the
// notifications/initialized POST. ?nosession=1 on any endpoint: no
// Mcp-Session-Id is ever issued.
//
// Endpoint behaviours (no site):
//   /healthy            correct; ?tools=N (3) ?page=N (all on one page)
//                       ?sse=1 answers every request as an SSE stream
//                       ?sse=1&trail=1: each such answer is followed, in the
//                       same write, by a notifications/message, then the
//                       stream ends (an SDK server relaying a child's log
//                       line after the response: supergateway --stateful)
//   /nosession          correct, but never issues an Mcp-Session-Id
//   /lateinit?ms=N      initialize answered after N ms (2500), with a session id
//                       made (and counted) when the request arrived
//   /expire?after=N&times=K
//                       a session answers N requests that carry its id, then
//                       404s (session expired); K sessions expire (1)
//   /listchanged?after_ms=N&add=K
//                       offers tools.listChanged; N ms (700) after the GET
//                       stream opens, K tools (2) are added and
//                       notifications/tools/list_changed goes down the stream
//   /flap?up_ms=U&down_ms=D
//                       healthy for U ms (1200), then resets every request for
//                       D ms (1200), and so on, from the endpoint's first request
//   /legacysse?endpoint=same|other&v=V&stringid=SITE
//                       the 2024-11-05 HTTP+SSE transport: every POST to it
//                       405; GET opens the stream whose `endpoint` event names
//                       where to POST: same (default) a relative URL here,
//                       other an absolute URL on the --other-port (another
//                       origin; a client that follows it is counted there).
//                       Answers come down the stream; initialize answers ?v=
//                       (default: the offered version echoed); ?stringid=
//                       dial|ping: that answer's id written as a string
//   /retry0?retry=R&id=short|long|utf8|none
//                       offers tools.listChanged; the GET stream opens, says
//                       `retry: R` (0) and one event id (a 1000-byte one, a
//                       non-ASCII one, or none), and closes at once
//   /storm              offers tools.listChanged; a list_changed notice when
//                       the GET stream opens and after every tools/list answer
//   /sdkstream?first_byte_ms=F&keepalive_ms=K&close_ms=C&change_ms=T&add=N
//                       a GET stream like the official SDK's: 2xx headers at
//                       once, the first byte (a `: keepalive` comment) after F
//                       ms (15000; -1 never), then one every K ms (0 none); the
//                       server ends it after C ms (0 never); T ms (300000)
//                       after the endpoint's first request N tools (2) are
//                       added and list_changed goes to every open stream
//   /forget?after=N&times=K&mode=rpc200|400|404&stream=1
//                       a session answers N requests that carry its id (3),
//                       then is forgotten (K sessions, 1): a request with it
//                       gets 200 with a JSON-RPC error -32600 id null
//                       ("Bad Request: No valid session ID provided"), or that
//                       body behind 400 / 404; GET and DELETE with it 400
//   /maintenance?s=S&date=1
//                       every request, any method, 503 + Retry-After: S (7)
//                       (date=1: as an HTTP date)
//   ?get=N on /listchanged (any endpoint that offers the GET stream): the
//                       GET is answered N with "No sessionId" (Express);
//                       ?get=json: 200 with a JSON body; ?get=empty: 200
//                       with no body (no event stream either way)
//   DELETE behaviour, on any endpoint with ?delete=, or as the paths below:
//     /delete405 /delete404 /delete500 /deletehang /deletedelay?ms=N /deletereset
//     ?delete=200|405|404|500|hang|delay|reset   (200 ends the session)
//
// Session habits (`mcptop audit`, issue 32), on any session endpoint:
//   ?free=0             DELETE is answered 200 but the session lives on: a
//                       request with its id is still served
//   ?expired=404|400|rpc200|serve
//                       what a request with an id the endpoint does not hold
//                       (never issued, deleted, expired) gets: 404 -32001
//                       (the default, the spec's), 400 -32000 id null
//                       ("Bad Request: No valid session ID provided", as
//                       Express servers say), 200 with a JSON-RPC error
//                       -32600 id null, or served as if it were live
//   ?missing=serve      a request without Mcp-Session-Id is served (400
//                       otherwise)
//   ?mint=1             every refused request without a session id (GET,
//                       HEAD, OPTIONS, a malformed POST, a POST refused for
//                       want of an id) is answered with a fresh
//                       Mcp-Session-Id: a live session each (the Python
//                       SDK's habit), ended by a DELETE like any other
//   ?replicas=2&every=4 two replicas without affinity: the Nth POST carrying
//                       a session's id lands on the replica that does not
//                       hold it when N is a multiple of ?every= (4), and is
//                       answered 404 although the session lives
//                       (deterministic; a DELETE reaches the holder)
//   ?maxsessions=N      at most N sessions live at once: an initialize
//                       while N live is answered 400 -32600 "Invalid
//                       Request: Server already initialized" (counted:
//                       refused_initializes)
//   ?replicas=2&rr=1    strict round robin: the first request after
//                       initialize (notifications/initialized) and every
//                       other one after it land on the other replica: 404
//   ?sameid=1           every initialize is given the endpoint's one
//                       Mcp-Session-Id (a server with a fixed or global id):
//                       sessions_issued counts each, reused_ids the ones
//                       after the first, and sessions_ended a DELETE for
//                       each of them
//   ?ping=unsupported   ping answered -32601 (method not found)
//   ?era=dual           server/discover is answered a DiscoverResult too
//                       (a dual-era server; initialize works as ever)
//
// The server asks the client (issue 45), on any session endpoint:
//   ?ask=M1[,M2]&via=post|get
//                       the server sends its own requests (ids "lab-ask-N",
//                       params {}) for methods M1, M2 (ping, roots/list, ...):
//                       via=post (default): on the first tools/list of each
//                       session, down that POST's event stream, and the
//                       tools/list answer is held until the client has
//                       answered them all (as SDK servers that ping their
//                       client before serving); via=get: the endpoint offers
//                       tools.listChanged, and they go down the GET stream
//                       when it opens (each stream asks once)
//   On /legacysse, ?ask=M1[,M2] sends them down the HTTP+SSE stream on the
//   first tools/list and holds its answer likewise.
//   Counts: asks_sent, asks_answered, ask_answers (the first 50: {method,
//   id, answer (the client's JSON), session (its Mcp-Session-Id was the
//   session's), protocol_version, status (what its POST was answered)}).
// `/_counts` adds per endpoint sessions_live (sessions the endpoint holds
// now), deletes_kept (?free=0) and minted (?mint=1).
//
// Era probe endpoints (protocol revision 2026-07-28, "modern"):
//   /probe/<case>?params
//   The fault is armed for `server/discover` only (a POST whose body method or
//   Mcp-Method header is server/discover). Except where a case says otherwise,
//   everything else is the healthy 2025 endpoint above (initialize, sessions,
//   ping, tools/list, GET 405, DELETE), so a client that falls back to
//   initialize where it should not shows up as a dial that worked (era
//   legacy) and in the counts (methods.initialize).
//   discover      modern-only and correct: server/discover answers a
//                 DiscoverResult (resultType complete, supportedVersions
//                 ["2026-07-28"], capabilities {tools:{}}, ttlMs 60000,
//                 cacheScope private, _meta serverInfo); tools/list with _meta
//                 answers resultType complete + ttlMs + cacheScope (?tools=
//                 ?page= apply); subscriptions/listen acknowledges with an
//                 empty honored set and ends at once; tools/call answers a
//                 text "lab tool ok" (?call=input_required: an
//                 InputRequiredResult asking elicitation/create and
//                 sampling/createMessage, MRTR); other methods 404 -32601;
//                 initialize (or any request without the _meta envelope)
//                 400 -32022 {supported ["2026-07-28"]}; GET/DELETE 405.
//                 Modern requests are checked like the SDK does: version not
//                 served 400 -32022; a missing required _meta key 400 -32602;
//                 MCP-Protocol-Version / Mcp-Method missing or unlike the
//                 body 400 -32020.
//   e32022modern  the first ?times=K (1) discovers per endpoint get 400 -32022
//                 data {supported ["2026-07-28"], requested}; after that, as
//                 `discover`
//   e32022legacy  discover (any modern request) 400 -32022 data {supported
//                 ["2025-06-18","2025-11-25"]}; initialize works (healthy)
//   e32000        discover 400 -32000 "Bad Request: Server not initialized"
//                 with id null (a 2025 SDK server); initialize works
//   404           discover 404, empty body; initialize works
//   405           discover 405, empty body; initialize works
//   401           discover 401 + WWW-Authenticate; initialize works
//   503           discover 503 + Retry-After; initialize works
//   reset         discover: the connection is reset; initialize works
//   hang          discover is never answered; initialize works
//   exc500        discover 500 with a serialized exception (exception500);
//                 initialize works
//   e32603        discover 200 -32603 "MCP server process exited" (a
//                 gateway whose child died, then came back); initialize works
//   dead32603     every request 200 -32603 "MCP server process exited" (a
//                 gateway whose child is gone: no era evidence, cannot be
//                 initialized)
//   init32022     the first ?times= (1) discovers 404 (empty); otherwise the
//                 modern-only `discover` server, so initialize gets 400
//                 -32022 naming only 2026-07-28
//   ?init=<fault> on a probe endpoint that serves 2025: that message fault
//                 answers initialize (e.g. /probe/exc500?init=html502)
//   Counts: the usual per-method counts, plus with_mcp_method and
//   probe_rejections (modern requests refused by the checks above).
//
// Lab endpoints:
//   GET  /_counts   JSON: per endpoint (path + query), HTTP methods, JSON-RPC
//                   methods, faults fired, sessions issued/expired/deleted,
//                   DELETEs; sessions_live over all endpoints. Also, per
//                   endpoint:
//                     sessions_ended      session ids this endpoint issued that
//                                         got a DELETE, whatever it answered
//                                         (the invariant: == sessions_issued)
//                     sessions_forgotten  (/forget)
//                     log                 the first 300 requests: {t (epoch
//                                         ms), m (HTTP method), rpc (method),
//                                         slashed (arrived at /redirect/X/)};
//                                         log_dropped counts the rest
//                     protocol_versions   {rpc method: {MCP-Protocol-Version: n}}
//                     with_authorization  requests carrying Authorization
//                     streams_opened, streams_closed_by_client,
//                     streams_closed_by_server, stream_reconnects (GET
//                     streams opened again by a session that had one)
//                     last_event_ids, last_event_id_unsafe (Last-Event-ID
//                     longer than 128 or outside visible ASCII)
//                     relistings          first-page tools/list after the
//                                         first, per session
//                     list_changed_sent, list_changed_lost (no stream open)
//                     redirects_sent, redirected_arrivals (at the slashed path)
//                     sse_sessions_opened, sse_sessions_closed (/legacysse)
//                     conns, conns_closed_by_client, conns_closed_idle,
//                     ping_conns_closed_by_client, ping_conns_closed_idle
//                     (?keepalive_s=K on any endpoint: see keepAliveFor)
//                   and over the lab: other_origin {requests,
//                   with_authorization, methods, by_from {endpoint key:
//                   {requests, with_authorization}}} (what reached the
//                   --other-port), client_errors (requests Node refused)
//   POST /_reset    zero the counts and forget every session
//   GET  /          this text
//   (the same on the --other-port, which serves every endpoint too, counted
//   under "other:<key>")
//
// usage: node server.mjs --port PORT [--host 127.0.0.1] [--other-port PORT]
//        [--tls-port PORT --tls-cert FILE --tls-key FILE] [--parent-pid PID] [--verbose]
// PORT 0 picks a free port. --other-port: a second plain-HTTP port, another
// origin for the faults that point elsewhere. Prints one line when listening:
//   faultlab ready {"http":"http://127.0.0.1:PORT","https":...,"other":...,"pid":N}
// SIGTERM / SIGINT: every connection is destroyed and the process exits 0.
import http from "node:http";
import https from "node:https";
import fs from "node:fs";
import crypto from "node:crypto";
import zlib from "node:zlib";
import { fileURLToPath } from "node:url";

const SUPPORTED_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
const LATEST = SUPPORTED_VERSIONS[0];
const MAX_REQUEST_BYTES = 8 * 1024 * 1024;
const LOOPBACK_HOSTS = new Set(["127.0.0.1", "::1", "localhost"]);

// ---------------------------------------------------------------- arguments

function usage(msg) {
  if (msg) process.stderr.write(`faultlab: ${msg}\n`);
  process.stderr.write(
    "usage: node server.mjs --port PORT [--host 127.0.0.1] " +
      "[--other-port PORT] [--tls-port PORT --tls-cert FILE --tls-key FILE] [--parent-pid PID] [--verbose]\n");
  process.exit(2);
}

const opts = { host: "127.0.0.1", port: null, tlsPort: null, tlsCert: null, tlsKey: null,
  parentPid: 0, verbose: false, otherPort: null };
{
  const argv = process.argv.slice(2);
  const need = (i) => {
    if (i + 1 >= argv.length) usage(`${argv[i]} needs a value`);
    return argv[i + 1];
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--port") opts.port = Number(need(i++));
    else if (a === "--host") opts.host = need(i++);
    else if (a === "--tls-port") opts.tlsPort = Number(need(i++));
    else if (a === "--tls-cert") opts.tlsCert = need(i++);
    else if (a === "--tls-key") opts.tlsKey = need(i++);
    else if (a === "--parent-pid") opts.parentPid = Number(need(i++));
    else if (a === "--other-port") opts.otherPort = Number(need(i++));
    else if (a === "--verbose" || a === "-v") opts.verbose = true;
    else if (a === "--help" || a === "-h") {
      process.stdout.write(helpText());
      process.exit(0);
    } else usage(`unexpected argument ${a}`);
  }
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) usage("--port PORT is required");
  if (!LOOPBACK_HOSTS.has(opts.host)) usage(`--host must be a loopback address, not ${opts.host}`);
  if (opts.otherPort !== null && (!Number.isInteger(opts.otherPort) || opts.otherPort < 0 ||
      opts.otherPort > 65535)) usage("bad --other-port");
  if (opts.tlsPort !== null) {
    if (!Number.isInteger(opts.tlsPort) || opts.tlsPort < 0 || opts.tlsPort > 65535) usage("bad --tls-port");
    if (!opts.tlsCert || !opts.tlsKey) usage("--tls-port needs --tls-cert and --tls-key");
  }
}

function helpText() {
  const src = fs.readFileSync(fileURLToPath(import.meta.url), "utf8").split("\n");
  const out = [];
  for (const line of src.slice(1)) {
    if (!line.startsWith("//")) break;
    out.push(line.replace(/^\/\/ ?/, ""));
  }
  return out.join("\n") + "\n";
}

function log(msg) {
  if (opts.verbose) process.stderr.write(`faultlab: ${msg}\n`);
}

// ---------------------------------------------------------------- state

const sockets = new Set();   // every connection, destroyed at exit
let otherBase = null;        // http://HOST:OTHERPORT (--other-port), another origin
const timers = new Set();    // every pending timer, cleared at exit
const endpoints = new Map(); // key (path + query) -> endpoint state
let counts = new Map();      // key -> counts
let sessionSeq = 0;

function later(ms, fn) {
  const t = setTimeout(() => {
    timers.delete(t);
    fn();
  }, ms);
  timers.add(t);
  return t;
}

function every(ms, fn) {
  const t = setInterval(fn, ms);
  timers.add(t);
  return t;
}

function stopTimer(t) {
  clearTimeout(t);
  clearInterval(t);
  timers.delete(t);
}

function countsFor(key) {
  let c = counts.get(key);
  if (!c) {
    c = { POST: 0, GET: 0, DELETE: 0, other_http: 0, methods: {}, with_session: {},
      with_protocol_version: {}, faults: 0, sessions_issued: 0, sessions_expired: 0,
      session_404s: 0, delete_with_session: 0, sessions_deleted: 0, list_changed_sent: 0, late_answers: 0,
      resets: 0, with_mcp_method: {}, probe_rejections: 0,
      // issues 12 and 13
      sessions_ended: 0, sessions_forgotten: 0, with_authorization: 0, protocol_versions: {},
      streams_opened: 0, streams_closed_by_client: 0, streams_closed_by_server: 0, stream_reconnects: 0,
      last_event_ids: 0, last_event_id_unsafe: 0, relistings: 0, calls: 0, calls_primed: 0, resumed: 0, list_changed_lost: 0, redirects_sent: 0,
      redirected_arrivals: 0, sse_sessions_opened: 0, sse_sessions_closed: 0, log: [], log_dropped: 0,
      // issue 45
      asks_sent: 0, asks_answered: 0, ask_answers: [] };
    counts.set(key, c);
  }
  return c;
}

// ?keepalive_s=K (any endpoint): answers announce "Keep-Alive: timeout=K"
// and a connection idle K s after an answer is closed by the lab, as Node's
// own server does (its default: 5 s). A connection may serve several
// endpoints (a client pools by host and port): its end is counted for the
// endpoint of its last request. Per endpoint: conns (connections whose
// first request it was), conns_closed_by_client (the client's FIN),
// conns_closed_idle (by the lab), and of those two, the ones whose last
// request was a JSON-RPC ping (ping_conns_closed_by_client,
// ping_conns_closed_idle).
function keepAliveFor(req, res, c, keepS, entry) {
  const sock = req.socket;
  let st = sock.faultlabKeep;
  if (!st) {
    st = sock.faultlabKeep = { busy: false, timer: null, c, lastRpc: null, closedIdle: false };
    bump(c, "conns");
    sock.on("end", () => {
      if (st.closedIdle) return;
      bump(st.c, "conns_closed_by_client");
      if (st.lastRpc === "ping") bump(st.c, "ping_conns_closed_by_client");
    });
  }
  st.busy = true;
  st.c = c;
  if (st.timer) stopTimer(st.timer);
  st.timer = null;
  res.setHeader("Connection", "keep-alive");
  res.setHeader("Keep-Alive", `timeout=${keepS}`);
  res.on("finish", () => {
    st.busy = false;
    st.lastRpc = entry.rpc || null;
    st.timer = later(keepS * 1000, () => {
      st.timer = null;
      if (st.busy || sock.destroyed || sock.readableEnded) return;
      st.closedIdle = true;
      bump(st.c, "conns_closed_idle");
      if (st.lastRpc === "ping") bump(st.c, "ping_conns_closed_idle");
      sock.destroy();
    });
  });
}

function bump(obj, k, n = 1) {
  obj[k] = (obj[k] || 0) + n;
}

function endpointFor(key) {
  let e = endpoints.get(key);
  if (!e) {
    e = { sessions: new Map(), toolsAdded: 0, firstSeen: Date.now(), expiredSoFar: 0,
      listChangedArmed: false, discovers: 0,
      issued: new Set(),      // every session id this endpoint ever issued
      ended: new Set(),       // ... of which a DELETE arrived (whatever it was answered)
      forgotten: new Set(),   // /forget: ids the server no longer knows
      forgottenSoFar: 0,
      streams: new Set(),     // open GET streams (responses)
      streamSessions: new Set(), // session ids that opened a GET stream
      listedSessions: new Set(), // session ids that listed (first page) at least once
      asks: new Map(),        // ?ask=: id -> {method, sid, done (fn)}
      askedSessions: new Set(), // sessions asked on their first tools/list
      changeTimer: null };
    endpoints.set(key, e);
  }
  return e;
}

function newSessionId() {
  sessionSeq++;
  return `lab-${sessionSeq}-${crypto.randomBytes(8).toString("hex")}`;
}

// ---------------------------------------------------------------- writing

function sendJson(res, status, obj, headers = {}) {
  const body = JSON.stringify(obj);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body),
    ...headers });
  res.end(body);
}

function sendText(res, status, type, text, headers = {}) {
  res.writeHead(status, { "Content-Type": type, "Content-Length": Buffer.byteLength(text), ...headers });
  res.end(text);
}

function sseEvent(obj, id) {
  return (id !== undefined ? `id: ${id}\n` : "") + `event: message\ndata: ${JSON.stringify(obj)}\n\n`;
}

function sendSse(res, obj, headers = {}, trail = false) {
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", ...headers });
  res.write(`id: 0\ndata: \n\n`); // a priming event, as 2025-11-25 servers send
  res.end(sseEvent(obj, 1) + (trail ? sseEvent({ jsonrpc: "2.0", method: "notifications/message",
    params: { level: "info", data: "after the answer" } }, 2) : ""));
}

function rpcResult(id, result) {
  return { jsonrpc: "2.0", id, result };
}

function rpcError(id, code, message, data) {
  const error = { code, message };
  if (data !== undefined) error.data = data;
  return { jsonrpc: "2.0", id, error };
}

const HTML_502 = "<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n" +
  "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>faultlab</center>\r\n</body>\r\n</html>\r\n";
const HTML_200 = "<!DOCTYPE html>\n<html><head><title>Welcome</title></head>\n" +
  "<body><h1>It works!</h1><p>This is a web page, not an MCP endpoint.</p></body></html>\n";

// ---------------------------------------------------------------- the healthy server

function initializeResult(msg, p) {
  const asked = msg.params && msg.params.protocolVersion;
  const version = SUPPORTED_VERSIONS.includes(asked) ? asked : LATEST;
  return {
    protocolVersion: version,
    capabilities: { tools: { listChanged: !!p.listChanged } },
    serverInfo: { name: "faultlab", version: "0.1.0" },
    instructions: "mcptop fault lab endpoint " + p.key,
  };
}

function toolList(p, ep) {
  const n = p.tools + ep.toolsAdded;
  const tools = [];
  for (let i = 1; i <= n; i++) {
    tools.push({ name: `tool_${i}`, description: `faultlab tool ${i}`,
      inputSchema: { type: "object", properties: {} } });
  }
  return tools;
}

function listPage(msg, p, ep) {
  const all = toolList(p, ep);
  if (!p.page) return { tools: all };
  const start = Number((msg.params && msg.params.cursor) || 0) || 0;
  const page = all.slice(start, start + p.page);
  const out = { tools: page };
  if (start + p.page < all.length) out.nextCursor = String(start + p.page);
  return out;
}

// The correct answer to one JSON-RPC request (object to send), or null for
// a notification / response (202 with no body).
function healthyAnswer(msg, p, ep) {
  switch (msg.method) {
  case "initialize":
    return rpcResult(msg.id, initializeResult(msg, p));
  case "ping":
    if (p.str("ping", "") === "unsupported") return rpcError(msg.id, -32601, "Method not found: ping");
    return rpcResult(msg.id, {});
  case "tools/list":
    return rpcResult(msg.id, listPage(msg, p, ep));
  case "tools/call":
    return rpcResult(msg.id, toolResult(msg));
  default:
    return rpcError(msg.id, -32601, `Method not found: ${msg.method}`);
  }
}

// tools/call (a deep check): `echo` answers its arguments' text, `fail`
// answers isError, anything else is a tool error too.
function toolResult(msg) {
  const params = (msg && msg.params) || {};
  const args = params.arguments || {};
  if (params.name === "echo")
    return { content: [{ type: "text", text: `echo: ${args.text ?? "ok"}` }] };
  if (params.name === "fail")
    return { isError: true, content: [{ type: "text", text: "the tool failed on purpose" }] };
  return { isError: true, content: [{ type: "text", text: `no tool named ${params.name}` }] };
}

// ?resume=ok|noid|refuse on tools/call: the answer stream is primed (an
// event with an id and retry: 200, except noid) and closed before the
// answer, as SEP-1699 lets a 2025-11-25 server do; a GET with
// Last-Event-ID then gets the answer (ok), or 405 (refuse).
function resumableCall(ctx) {
  const { res, msg, p, ep, c } = ctx;
  const mode = p.str("resume", "ok");
  c.calls_primed++;
  ep.pendingCall = mode === "ok" ? rpcResult(msg.id, toolResult(msg)) : null;
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
  res.write(mode === "noid" ? "retry: 200\ndata: \n\n" : "id: call-1\nretry: 200\ndata: \n\n");
  later(50, () => res.end());
}

// The GET that resumes a primed answer stream.
function resumeGet(ctx) {
  const { res, p, ep, c } = ctx;
  c.resumed++;
  if (p.str("resume", "ok") !== "ok" || ep.pendingCall === null || ep.pendingCall === undefined)
    return sendText(res, 405, "text/plain", "Method Not Allowed\n", { Allow: "POST, DELETE" });
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
  res.write(sseEvent(ep.pendingCall, "call-2"));
  ep.pendingCall = null;
  later(100, () => res.end());
}

function isRequest(msg) {
  return msg && typeof msg === "object" && !Array.isArray(msg) && typeof msg.method === "string" &&
    msg.id !== undefined && msg.id !== null;
}

function answer(ctx, obj, headers = {}) {
  if (ctx.encode) sendEncoded(ctx, obj, headers);
  else if (ctx.p.sse) sendSse(ctx.res, obj, headers, ctx.p.trail);
  else sendJson(ctx.res, 200, obj, headers);
}

// The `encoded` fault: obj as JSON (or, with ?sse=1, as the SSE answer),
// compressed with ?enc= whatever the client asked for. A name zlib does
// not have is sent as is, under that name.
function sendEncoded(ctx, obj, headers = {}) {
  const enc = ctx.p.str("enc", "gzip");
  const plain = Buffer.from(ctx.p.sse ? "id: 0\ndata: \n\n" + sseEvent(obj, 1) : JSON.stringify(obj));
  const z = { gzip: zlib.gzipSync, deflate: zlib.deflateSync, br: zlib.brotliCompressSync }[enc];
  const body = z ? z(plain) : plain;
  ctx.res.writeHead(200, { "Content-Type": ctx.p.sse ? "text/event-stream" : "application/json",
    "Content-Encoding": enc, "Content-Length": body.length, ...headers });
  ctx.res.end(body);
}

// The `stringid` fault with ?via=get: the POST's stream opens and stays
// silent; the answer goes down the endpoint's GET stream once one is open
// (looked for every 50 ms, for at most 3 s).
function answerOnGetStream(ctx, obj) {
  ctx.res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
  ctx.res.flushHeaders();
  let tries = 0;
  const t = every(50, () => {
    if (ctx.res.destroyed || ++tries > 60) return stopTimer(t);
    if (ctx.ep.streams.size === 0) return;
    stopTimer(t);
    for (const r of ctx.ep.streams) r.write(sseEvent(obj));
  });
}

// ---------------------------------------------------------------- the server asks (issue 45)

let askSeq = 0;

// ?ask=M1,M2: the requests the server sends its client, as SSE events;
// each registered in ep.asks with the session it went to. done() runs once
// every one of them is answered.
function askEvents(ctx, sid, done) {
  const methods = ctx.p.str("ask", "").split(",").filter((m) => m !== "");
  const pending = new Set();
  let text = "";
  for (const method of methods) {
    const id = `lab-ask-${++askSeq}`;
    pending.add(id);
    ctx.ep.asks.set(id, { method, sid, pending, done });
    ctx.c.asks_sent++;
    text += sseEvent({ jsonrpc: "2.0", id, method, params: {} });
  }
  log(`${ctx.p.key}: asking the client ${methods.join(", ")}`);
  return text;
}

// A POST whose body answers one of the server's asks: recorded (with the
// headers it carried), and what waited for it is released.
function noteAskAnswer(ep, c, req, msg, status) {
  if (!msg || typeof msg !== "object" || msg.method !== undefined || !ep.asks.has(msg.id)) return;
  const a = ep.asks.get(msg.id);
  ep.asks.delete(msg.id);
  c.asks_answered++;
  if (c.ask_answers.length < 50) {
    c.ask_answers.push({ method: a.method, id: msg.id, answer: msg,
      session: a.sid !== null && req.headers["mcp-session-id"] === a.sid,
      protocol_version: req.headers["mcp-protocol-version"] ?? null, status });
  }
  log(`client answered ${a.method} (${msg.id}): ${JSON.stringify(msg)}`);
  a.pending.delete(msg.id);
  if (a.pending.size === 0 && a.done) a.done();
}

// via=post: the first tools/list of a session asks down its own event
// stream; the listing is answered once the client has answered.
function askOnPost(ctx) {
  const { req, res, msg, p, ep } = ctx;
  const sid = req.headers["mcp-session-id"] ?? null;
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
  res.write(askEvents(ctx, sid, () => {
    if (!res.destroyed) res.end(sseEvent(healthyAnswer(msg, p, ep)));
  }));
}

// Serve one POST correctly (after any session/expiry checks).
function healthyPost(ctx) {
  const { req, res, msg, p, ep, c } = ctx;
  if (!isRequest(msg)) {
    noteAskAnswer(ep, c, req, msg, 202);
    res.writeHead(202);
    res.end();
    return;
  }
  if (msg.method === "initialize") {
    const headers = {};
    const most = p.num("maxsessions", 0);
    if (p.sessions && most > 0 && ep.sessions.size >= most && !ctx.presetSid) {
      // ?maxsessions=N: a server that holds N sessions at a time refuses
      // another initialize while they live (as an SDK server with one
      // transport says it).
      c.refused_initializes = (c.refused_initializes || 0) + 1;
      sendJson(res, 400, rpcError(msg.id, -32600, "Invalid Request: Server already initialized"));
      return;
    }
    if (p.sessions) headers["Mcp-Session-Id"] = ctx.presetSid || issueSession(ctx);
    answer(ctx, healthyAnswer(msg, p, ep), headers);
    return;
  }
  if (msg.method === "tools/list" && !(msg.params && msg.params.cursor)) {
    // a listing from the first page: the first per session, or a re-listing
    const sid = req.headers["mcp-session-id"] ?? "(no session)";
    if (ep.listedSessions.has(sid)) c.relistings++;
    else ep.listedSessions.add(sid);
  }
  if (msg.method === "tools/list" && p.str("ask", null) !== null && p.str("via", "post") === "post" &&
      !(msg.params && msg.params.cursor)) {
    const sid = req.headers["mcp-session-id"] ?? "(no session)";
    if (!ep.askedSessions.has(sid)) {
      ep.askedSessions.add(sid);
      return askOnPost(ctx);
    }
  }
  if (msg.method === "tools/call") c.calls++;
  if (msg.method === "tools/call" && p.str("resume", null) !== null) return resumableCall(ctx);
  answer(ctx, healthyAnswer(msg, p, ep));
  // /storm: every listing is followed by a list_changed notice on the stream
  if (p.stream === "storm" && msg.method === "tools/list") broadcastListChanged(ctx);
}

// A new session on this endpoint: its id (sid: a given id, else a fresh one).
function issueSession(ctx, sid) {
  if (sid === undefined && ctx.p.str("sameid", "0") === "1") {
    // ?sameid=1: every session gets the endpoint's one id.
    ctx.ep.sameSid = ctx.ep.sameSid || newSessionId();
    sid = ctx.ep.sameSid;
    ctx.ep.sameOpen = (ctx.ep.sameOpen || 0) + 1;
    ctx.c.reused_ids = (ctx.c.reused_ids || 0) + (ctx.ep.issued.has(sid) ? 1 : 0);
  }
  if (sid === undefined) sid = newSessionId();
  ctx.ep.sessions.set(sid, { requests: 0, created: Date.now() });
  ctx.ep.issued.add(sid);
  ctx.c.sessions_issued++;
  return sid;
}

// ?mint=1: the headers of a refused answer to a request without a session
// id: a fresh session's id (a live session, as the Python SDK keeps one per
// rejected probe). Empty otherwise.
function mintHeaders(ctx) {
  const { req, p, c } = ctx;
  if (p.str("mint", "0") !== "1" || !p.sessions || req.headers["mcp-session-id"] !== undefined) return {};
  c.minted = (c.minted || 0) + 1;
  return { "Mcp-Session-Id": issueSession(ctx) };
}

// A request carrying an id this endpoint does not hold (never issued,
// deleted, expired), answered as ?expired= says. Returns true when it
// answered (false: serve it, ?expired=serve).
function unknownSessionAnswer(ctx) {
  const { res, c } = ctx;
  switch (ctx.p.str("expired", "404")) {
  case "serve":
    return false;
  case "400":
    sendJson(res, 400, rpcError(null, -32000, FORGOTTEN_MESSAGE));
    return true;
  case "rpc200":
    sendJson(res, 200, rpcError(null, -32600, FORGOTTEN_MESSAGE));
    return true;
  default:
    c.session_404s++;
    sendJson(res, 404, rpcError(null, -32001, "Session not found"));
    return true;
  }
}

// Session checks every non-initialize POST goes through on a session endpoint.
// Returns true when it answered (400/404).
function sessionGate(ctx) {
  const { req, res, msg, p, ep, c } = ctx;
  if (!p.sessions || (msg && msg.method === "initialize")) return false;
  const sid = req.headers["mcp-session-id"];
  if (sid === undefined) {
    if (p.str("missing", "400") === "serve") return false;
    sendJson(res, 400, rpcError(null, -32000, "Bad Request: Mcp-Session-Id header is required"),
      mintHeaders(ctx));
    return true;
  }
  if (ep.forgotten.has(sid)) {
    // /forget: a gateway that lost the session says so its own way.
    return forgottenAnswer(ctx, p.str("mode", "rpc200")), true;
  }
  const s = ep.sessions.get(sid);
  if (!s) return unknownSessionAnswer(ctx);
  s.requests++;
  // ?replicas=: every Nth request of a session reaches the replica that
  // does not hold it, which has never heard of the id.
  // ?rr=1: strict round robin over two replicas, the initialize on the
  // holder: the first request after it, and every other one, miss.
  const miss = p.num("rr", 0) ? s.requests % 2 === 1 :
    s.requests % Math.max(2, p.num("every", 4)) === 0;
  if (p.num("replicas", 1) > 1 && miss) {
    c.session_404s++;
    c.replica_misses = (c.replica_misses || 0) + 1;
    sendJson(res, 404, rpcError(null, -32001, "Session not found"));
    return true;
  }
  if (p.forgetAfter !== null && s.requests > p.forgetAfter && ep.forgottenSoFar < p.forgetTimes) {
    ep.sessions.delete(sid);
    ep.forgotten.add(sid);
    ep.forgottenSoFar++;
    c.sessions_forgotten++;
    log(`${p.key}: session ${sid} forgotten after ${p.forgetAfter} requests`);
    forgottenAnswer(ctx, p.str("mode", "rpc200"));
    return true;
  }
  if (p.expireAfter !== null && s.requests > p.expireAfter && ep.expiredSoFar < p.expireTimes) {
    ep.sessions.delete(sid);
    ep.expiredSoFar++;
    c.sessions_expired++;
    c.session_404s++;
    log(`${p.key}: session ${sid} expired after ${p.expireAfter} requests`);
    sendJson(res, 404, rpcError(null, -32001, "Session not found"));
    return true;
  }
  return false;
}

// ---------------------------------------------------------------- message faults

function resetConnection(ctx) {
  ctx.c.resets++;
  const sock = ctx.req.socket;
  if (typeof sock.resetAndDestroy === "function") sock.resetAndDestroy();
  else sock.destroy();
}

function holdOpen(ctx) {
  // Nothing is written; the connection stays until the client leaves or we exit.
  ctx.res.on("close", () => log(`${ctx.p.key}: client left a hanging request`));
}

function dribble(ctx, obj) {
  const body = JSON.stringify(obj);
  const raw = Buffer.from("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
  const sock = ctx.req.socket;
  const bps = Math.max(1, Math.min(1000, ctx.p.num("bps", 1)));
  let i = 0;
  const t = every(1000 / bps, () => {
    if (sock.destroyed || i >= raw.length) {
      stopTimer(t);
      if (!sock.destroyed) sock.end();
      return;
    }
    sock.write(raw.subarray(i, i + 1));
    i++;
  });
  sock.on("close", () => stopTimer(t));
}

function sendBig(ctx, id) {
  const { res } = ctx;
  const mb = Math.max(0.001, ctx.p.num("mb", 20));
  const total = Math.floor(mb * 1024 * 1024);
  const head = Buffer.from(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"pad":"`);
  const tail = Buffer.from(`"}}`);
  let left = Math.max(0, total - head.length - tail.length);
  const chunk = Buffer.alloc(64 * 1024, 0x78);
  res.writeHead(200, { "Content-Type": "application/json", "Content-Length": head.length + left + tail.length });
  res.write(head);
  let closed = false;
  res.on("close", () => { closed = true; });
  const pump = () => {
    while (!closed && left > 0) {
      const n = Math.min(left, chunk.length);
      left -= n;
      if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
        res.once("drain", pump);
        return;
      }
    }
    if (!closed) res.end(tail);
  };
  pump();
}

const HTML_504 = "<html>\r\n<head><title>504 Gateway Time-out</title></head>\r\n<body>\r\n" +
  "<center><h1>504 Gateway Time-out</h1></center>\r\n<hr><center>faultlab</center>\r\n</body>\r\n</html>\r\n";
// A CDN/WAF bot check's interstitial (what a browser would solve, a client cannot).
const HTML_CHALLENGE = "<!DOCTYPE html><html lang=\"en\"><head><title>Just a moment...</title>" +
  "<meta http-equiv=\"refresh\" content=\"360\"></head><body><noscript>Enable JavaScript and cookies " +
  "to continue</noscript><div id=\"challenge\">Checking your browser before accessing the site." +
  "</div></body></html>\n";
// What some SDK servers send when a handler throws: the exception object
// serialized as JSON, with no JSON-RPC envelope.
const EXCEPTION_BODY = {
  name: "TypeError",
  message: "Cannot read properties of undefined (reading 'protocolVersion')",
  stack: "TypeError: Cannot read properties of undefined (reading 'protocolVersion')\n" +
    "    at handlePost (file:///srv/app/dist/transport.js:412:37)\n" +
    "    at process.processTicksAndRejections (node:internal/process/task_queues:95:5)",
};
const FORGOTTEN_MESSAGE = "Bad Request: No valid session ID provided";

// /forget: the answer to a request carrying a forgotten session id.
function forgottenAnswer(ctx, mode) {
  const body = rpcError(null, -32600, FORGOTTEN_MESSAGE);
  if (mode === "404") return sendJson(ctx.res, 404, body);
  if (mode === "400") return sendJson(ctx.res, 400, body);
  return sendJson(ctx.res, 200, body);
}

// Retry-After as asked: ?s= seconds (digits kept verbatim, so a huge value
// reaches the client as written), or with ?date=1 an HTTP date at least s
// seconds ahead.
function retryAfterValue(p) {
  const raw = p.str("s", "7");
  if (p.str("date", "0") === "1") {
    const at = Math.ceil((Date.now() + p.num("s", 7) * 1000) / 1000) * 1000;
    return new Date(at).toUTCString();
  }
  return /^[0-9]+$/.test(raw) ? raw : String(p.num("s", 7));
}

// /redirect: a 3xx whose Location is the slashed path on this origin (after
// ?hops= redirects in all), or with ?to=other the same path on the lab's
// other port (another origin). Absolute Location, as Starlette sends.
function redirectAnswer(ctx) {
  const { p, req, res, c } = ctx;
  const code = p.num("code", 307);
  const u = new URL(req.url, "http://faultlab.invalid");
  const q = new URLSearchParams(u.search);
  const hop = p.num("hop", 0);
  const hops = Math.max(1, p.num("hops", 1));
  let loc;
  if (p.str("to", "slash") === "other") {
    if (!otherBase) return sendText(res, 500, "text/plain", "faultlab: started without --other-port\n");
    q.delete("hop");
    q.set("from", p.key);
    loc = `${otherBase}${u.pathname}/?${q}`;
  } else if (hop + 1 < hops) {
    q.set("hop", String(hop + 1));
    loc = `http://${req.headers.host}${u.pathname}?${q}`;
  } else {
    q.delete("hop");
    const qs = q.toString();
    loc = `http://${req.headers.host}${u.pathname}/${qs ? "?" + qs : ""}`;
  }
  c.redirects_sent++;
  log(`${p.key}: ${code} to ${loc}`);
  sendText(res, code, "text/html", `<html><body>Moved: <a href="${loc}">here</a></body></html>\n`,
    { Location: loc });
}

function statusText(ctx, code, headers = {}) {
  sendText(ctx.res, code, "text/plain", `${code} ${http.STATUS_CODES[code] || "Status"} (faultlab)\n`, headers);
}

const MESSAGE_FAULTS = {
  reset: (ctx) => resetConnection(ctx),
  hang: (ctx) => holdOpen(ctx),
  delay: (ctx) => {
    const ms = ctx.p.lateMs !== undefined ? ctx.p.lateMs : ctx.p.num("ms", 3000);
    // A slow server has made the session before it answers: the session
    // exists (and is counted) even when the client gives up before the answer.
    if (ctx.msg.method === "initialize" && ctx.p.sessions) ctx.presetSid = issueSession(ctx);
    later(ms, () => {
      if (ctx.res.destroyed || ctx.req.socket.destroyed) return;
      ctx.c.late_answers++;
      healthyPost(ctx);
    });
  },
  html502: (ctx) => sendText(ctx.res, 502, "text/html", HTML_502),
  auth401: (ctx) => sendJson(ctx.res, 401,
    { error: "invalid_token", error_description: "faultlab: authentication required" },
    { "WWW-Authenticate": `Bearer realm="faultlab", error="invalid_token", ` +
      `resource_metadata="http://${ctx.req.headers.host}/.well-known/oauth-protected-resource"` }),
  busy503: (ctx) => sendText(ctx.res, 503, "text/plain", "Service Unavailable\n",
    { "Retry-After": retryAfterValue(ctx.p) }),
  html200: (ctx) => sendText(ctx.res, 200, "text/html; charset=utf-8", HTML_200),
  wrongid: (ctx) => {
    const good = healthyAnswer(ctx.msg, ctx.p, ctx.ep);
    const id = typeof ctx.msg.id === "number" ? ctx.msg.id + 1000 : `${ctx.msg.id}-not-yours`;
    sendJson(ctx.res, 200, { ...good, id });
  },
  rpcerror: (ctx) => sendJson(ctx.res, ctx.p.num("status", 200),
    rpcError(ctx.msg.id, ctx.p.num("code", -32603), `faultlab: ${ctx.msg.method} failed on purpose`)),
  nullid400: (ctx) => sendJson(ctx.res, 400,
    rpcError(null, -32600, "Bad Request: faultlab rejects this request")),
  badversion: (ctx) => {
    if (ctx.msg.method !== "initialize") return healthyPost(ctx);
    const v = ctx.p.str("v", "1999-01-01");
    const headers = {};
    if (ctx.p.sessions) headers["Mcp-Session-Id"] = issueSession(ctx);
    const r = initializeResult(ctx.msg, ctx.p);
    r.protocolVersion = v;
    sendJson(ctx.res, 200, rpcResult(ctx.msg.id, r), headers);
  },
  sseshort: (ctx) => {
    ctx.res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
    ctx.res.write("id: 0\ndata: \n\n");
    ctx.res.write(sseEvent({ jsonrpc: "2.0", method: "notifications/message",
      params: { level: "info", data: "faultlab: this stream ends before the answer" } }, 1));
    ctx.res.end();
  },
  sseempty: (ctx) => {
    ctx.res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
    ctx.res.end();
  },
  sseraw: (ctx) => {
    const body = JSON.stringify(healthyAnswer(ctx.msg, ctx.p, ctx.ep));
    sendText(ctx.res, 200, "text/event-stream", body);
  },
  ssesilent: (ctx) => {
    ctx.res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
    ctx.res.flushHeaders();
  },
  big: (ctx) => sendBig(ctx, ctx.msg.id),
  dribble: (ctx) => dribble(ctx, healthyAnswer(ctx.msg, ctx.p, ctx.ep)),
  gone404: (ctx) => sendText(ctx.res, 404, "text/plain", "Not Found\n"),
  // issues 12 and 13
  error500: (ctx) => statusText(ctx, 500),
  status: (ctx) => statusText(ctx, ctx.p.num("code", 500)),
  exception500: (ctx) => sendJson(ctx.res, 500, EXCEPTION_BODY),
  cfchallenge: (ctx) => sendText(ctx.res, 403, "text/html; charset=UTF-8", HTML_CHALLENGE,
    { "cf-mitigated": "challenge", "Cache-Control": "private, max-age=0, no-store", Server: "cloudflare" }),
  auth403: (ctx) => sendJson(ctx.res, 403,
    { error: "insufficient_scope", error_description: "faultlab: the token lacks a scope" },
    { "WWW-Authenticate": 'Bearer realm="faultlab", error="insufficient_scope", scope="mcp:tools"' }),
  forbidden403: (ctx) => statusText(ctx, 403),
  ratelimit429: (ctx) => statusText(ctx, 429,
    ctx.p.str("s", null) !== null ? { "Retry-After": retryAfterValue(ctx.p) } : {}),
  gateway504: (ctx) => sendText(ctx.res, 504, "text/html", HTML_504),
  redirect: (ctx) => redirectAnswer(ctx),
  // issue 26
  words: (ctx) => {
    const type = ctx.p.str("type", "text/html; charset=utf-8");
    const text = ctx.p.str("text", "Session not found").repeat(Math.max(1, Math.min(1000, ctx.p.num("repeat", 1))));
    ctx.res.writeHead(ctx.p.num("code", 404), { "Content-Length": Buffer.byteLength(text),
      ...(type === "none" ? {} : { "Content-Type": type }) });
    ctx.res.end(text);
  },
  encoded: (ctx) => {
    ctx.encode = true;
    healthyPost(ctx);
  },
  stringid: (ctx) => {
    const good = healthyAnswer(ctx.msg, ctx.p, ctx.ep);
    const headers = {};
    if (ctx.msg.method === "initialize" && ctx.p.sessions) headers["Mcp-Session-Id"] = issueSession(ctx);
    const out = { ...good, id: String(ctx.msg.id) };
    if (ctx.p.str("via", null) === "get") return answerOnGetStream(ctx, out);
    answer(ctx, out, headers);
  },
  bigsession: (ctx) => {
    if (ctx.msg.method !== "initialize") return healthyPost(ctx);
    const kb = Math.max(1, Math.min(4096, ctx.p.num("kb", 100)));
    const sid = `lab-big-${crypto.randomBytes(8).toString("hex")}-`.padEnd(kb * 1024, "s");
    if (ctx.p.sessions) ctx.presetSid = issueSession(ctx, sid);
    healthyPost(ctx);
  },
};

const SITES = new Set(["dial", "initialized", "ping", "list", "any"]);

function faultArmed(site, msg) {
  if (site === "initialized") {
    return !!msg && typeof msg === "object" && msg.method === "notifications/initialized";
  }
  if (!isRequest(msg)) return false;
  switch (site) {
  case "dial": return msg.method === "initialize";
  case "ping": return msg.method === "ping";
  case "list": return msg.method === "tools/list";
  case "any": return true;
  default: return false;
  }
}

// ---------------------------------------------------------------- DELETE and GET

function handleDelete(ctx) {
  const { req, res, p, ep, c } = ctx;
  const sid = req.headers["mcp-session-id"];
  if (sid !== undefined) c.delete_with_session++;
  // A DELETE for a session this endpoint issued ends it from the client's
  // side, whatever the answer below (the invariant: issued == ended).
  if (sid !== undefined && sid === ep.sameSid) {
    // ?sameid=1: each session under the one id wants its DELETE.
    if (ep.sameOpen > 0) {
      ep.sameOpen--;
      c.sessions_ended++;
    }
  } else if (sid !== undefined && ep.issued.has(sid) && !ep.ended.has(sid)) {
    ep.ended.add(sid);
    c.sessions_ended++;
  }
  if (p.name === "legacysse") {
    return sendText(res, 405, "text/plain", "Method Not Allowed\n", { Allow: "GET, POST" });
  }
  if (sid !== undefined && ep.forgotten.has(sid)) {
    return sendJson(res, 400, rpcError(null, -32600, FORGOTTEN_MESSAGE));
  }
  const ok = () => {
    if (!p.sessions) return sendText(res, 405, "text/plain", "no sessions here\n", { Allow: "POST" });
    if (sid === undefined) return sendJson(res, 400, rpcError(null, -32000, "Bad Request: no Mcp-Session-Id"));
    if (p.str("free", "1") === "0" && ep.sessions.has(sid)) {
      // ?free=0: the DELETE is acknowledged and the session lives on.
      c.deletes_kept = (c.deletes_kept || 0) + 1;
      res.writeHead(200);
      res.end();
      return;
    }
    if (!ep.sessions.delete(sid)) return sendJson(res, 404, rpcError(null, -32001, "Session not found"));
    c.sessions_deleted++;
    res.writeHead(200);
    res.end();
  };
  switch (p.delete) {
  case "405": return sendText(res, 405, "text/plain", "Method Not Allowed\n", { Allow: "GET, POST" });
  case "404": return sendJson(res, 404, rpcError(null, -32001, "Session not found"));
  case "500": return sendText(res, 500, "text/plain", "Internal Server Error\n");
  case "hang": case "never": return holdOpen(ctx);
  case "reset": return resetConnection(ctx);
  case "delay":
    return later(p.num("ms", 3000), () => {
      if (!res.destroyed) {
        c.late_answers++;
        ok();
      }
    });
  default: return ok();
  }
}

// A GET stream answered 2xx: headers flushed at once; counted; tracked in
// ep.streams until it closes (by the client or by the server).
function openStream(ctx) {
  const { req, res, ep, c } = ctx;
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
  res.flushHeaders();
  c.streams_opened++;
  const sid = req.headers["mcp-session-id"] ?? "(no session)";
  if (ep.streamSessions.has(sid)) c.stream_reconnects++;
  else ep.streamSessions.add(sid);
  ep.streams.add(res);
  const own = new Set();  // this stream's timers
  res.on("close", () => {
    ep.streams.delete(res);
    for (const t of own) stopTimer(t);
    if (!res.writableEnded) c.streams_closed_by_client++;
  });
  return {
    timer(t) {
      own.add(t);
    },
    end() {
      if (res.writableEnded || res.destroyed) return;
      c.streams_closed_by_server++;
      res.end();
    },
  };
}

// Tell every open GET stream of the endpoint that the tools changed.
function broadcastListChanged(ctx) {
  const { ep, c } = ctx;
  if (ep.streams.size === 0) {
    c.list_changed_lost++;
    return;
  }
  for (const r of ep.streams) {
    c.list_changed_sent++;
    r.write(sseEvent({ jsonrpc: "2.0", method: "notifications/tools/list_changed" }));
  }
}

function lastEventIdSeen(ctx) {
  const v = ctx.req.headers["last-event-id"];
  if (v === undefined) return;
  ctx.c.last_event_ids++;
  // Node hands header bytes over as latin1: anything outside visible ASCII
  // (or a very long value) is a server-chosen id sent back unsafely.
  if (v.length > 128 || !/^[\x21-\x7e]*$/.test(v)) ctx.c.last_event_id_unsafe++;
}

let eventSeq = 0;
function eventIdFor(kind) {
  eventSeq++;
  switch (kind) {
  case "long": return `ev-${eventSeq}-` + "L".repeat(1000);
  case "utf8": return `\u00e9v\u00e8nement-${eventSeq}`;
  case "none": return null;
  default: return `ev-${eventSeq}`;
  }
}

// /retry0: the stream opens, names `retry: ?retry=` (0) and one event id
// (?id=short|long|utf8|none), and closes at once.
function retryStream(ctx) {
  const st = openStream(ctx);
  const id = eventIdFor(ctx.p.str("id", "short"));
  ctx.res.write(`retry: ${ctx.p.num("retry", 0)}\n` + (id !== null ? `id: ${id}\n` : "") + "data: \n\n");
  st.end();
}

// /sdkstream: like the official SDK's standalone GET stream: 2xx headers at
// once, the first body byte only after ?first_byte_ms= (15000; -1 never),
// then a keep-alive comment every ?keepalive_ms= (0: none); the server ends
// the stream after ?close_ms= (0: never).
function sdkStream(ctx) {
  const { p } = ctx;
  const st = openStream(ctx);
  const first = p.num("first_byte_ms", 15000);
  const every_ = p.num("keepalive_ms", 0);
  const close = p.num("close_ms", 0);
  const keep = () => ctx.res.write(": keepalive\n\n");
  if (first >= 0) {
    st.timer(later(first, () => {
      keep();
      if (every_ > 0) st.timer(every(every_, keep));
    }));
  }
  if (close > 0) st.timer(later(close, () => st.end()));
}

function handleGet(ctx) {
  const { req, res, p, ep, c } = ctx;
  lastEventIdSeen(ctx);
  if (p.name === "legacysse") return legacySseGet(ctx);
  if (p.str("resume", null) !== null && ctx.req.headers["last-event-id"] !== undefined)
    return resumeGet(ctx);
  if (!p.listChanged) {
    return sendText(res, 405, "text/plain", "Method Not Allowed\n", { Allow: "POST, DELETE",
      ...mintHeaders(ctx) });
  }
  const sid = req.headers["mcp-session-id"];
  if (sid !== undefined && ep.forgotten.has(sid)) {
    return sendJson(res, 400, rpcError(null, -32600, FORGOTTEN_MESSAGE));
  }
  // ?get=N: the optional GET is refused with N and a short text, as
  // Express servers answer it ("No sessionId"); POSTs are unaffected.
  if (p.num("get", 0) >= 400) {
    return sendText(res, p.num("get", 0), "text/html", "No sessionId\n");
  }
  if (p.str("get", "") === "json") {
    return sendJson(res, 200, { status: "ok", message: "no stream here" });
  }
  if (p.str("get", "") === "empty") {
    res.writeHead(200, { "Content-Length": 0 });
    return res.end();
  }
  if (p.sessions && sid !== undefined && !ep.sessions.has(sid) && p.str("expired", "404") !== "serve" &&
      p.str("expired", "404") !== "404") {
    return unknownSessionAnswer(ctx);
  }
  if (p.sessions && (sid === undefined || !ep.sessions.has(sid))) {
    return sendJson(res, sid === undefined ? 400 : 404, rpcError(null, -32001, "Session not found"),
      sid === undefined ? mintHeaders(ctx) : {});
  }
  if (p.stream === "retry") return retryStream(ctx);
  if (p.stream === "sdk") return sdkStream(ctx);
  if (p.stream === "storm") {
    // the storm starts as the stream opens: "the tools changed"; every
    // listing that follows is answered by another notice
    openStream(ctx);
    c.list_changed_sent++;
    res.write(sseEvent({ jsonrpc: "2.0", method: "notifications/tools/list_changed" }));
    return;
  }
  if (p.stream === "plain") {
    openStream(ctx);
    res.write(": faultlab GET stream\n\n");
    return;
  }
  if (p.stream === "ask") {
    openStream(ctx);
    res.write(": faultlab GET stream\n\n" + askEvents(ctx, sid ?? null, null));
    return;
  }
  openStream(ctx);
  res.write(": faultlab GET stream\n\n");
  if (!ep.listChangedArmed) {
    ep.listChangedArmed = true;
    const t = later(p.num("after_ms", 700), () => {
      if (res.destroyed) {
        ep.listChangedArmed = false; // try again on the next stream
        return;
      }
      ep.toolsAdded += p.num("add", 2);
      c.list_changed_sent++;
      log(`${p.key}: tools now ${p.tools + ep.toolsAdded}; sending list_changed`);
      res.write(sseEvent({ jsonrpc: "2.0", method: "notifications/tools/list_changed" }));
    });
    res.on("close", () => {
      if (ep.listChangedArmed && c.list_changed_sent === 0) {
        stopTimer(t);
        ep.listChangedArmed = false;
      }
    });
  }
}

// ---------------------------------------------------------------- 2024-11-05 HTTP+SSE

// sse_sid -> the GET stream's ctx (its endpoint, counts and response)
const sseSessions = new Map();

// /legacysse: the 2024-11-05 HTTP+SSE transport. The GET stream's first
// event, `endpoint`, names where to POST: ?endpoint=same (default) a
// relative URL on this origin; ?endpoint=other an absolute URL on the lab's
// other port (another origin). Answers go down the stream.
function legacySseGet(ctx) {
  const { req, res, p, c } = ctx;
  const sid = crypto.randomBytes(8).toString("hex");
  const u = new URL(req.url, "http://faultlab.invalid");
  const q = new URLSearchParams(u.search);
  q.set("sse_sid", sid);
  let endpoint;
  if (p.str("endpoint", "same") === "other") {
    if (!otherBase) return sendText(res, 500, "text/plain", "faultlab: started without --other-port\n");
    q.set("from", p.key);
    endpoint = `${otherBase}/steal?${q}`;
  } else {
    endpoint = `${u.pathname}/message?${q}`;
  }
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
  res.write(`event: endpoint\ndata: ${endpoint}\n\n`);
  sseSessions.set(sid, ctx);
  c.sse_sessions_opened++;
  log(`${p.key}: HTTP+SSE stream ${sid}, endpoint ${endpoint}`);
  res.on("close", () => {
    sseSessions.delete(sid);
    c.sse_sessions_closed++;
  });
}

// A POST to an HTTP+SSE endpoint URL (either port): 202, the answer on the stream.
function sseMessage(req, res, url) {
  const sctx = sseSessions.get(url.searchParams.get("sse_sid"));
  readBody(req, (body) => {
    if (!sctx) return sendText(res, 404, "text/plain", "Could not find session\n");
    const { c, p, ep } = sctx;
    c.POST++;
    let msg;
    try {
      msg = JSON.parse(body === null ? "" : body.toString("utf8"));
    } catch (e) {
      return sendText(res, 400, "text/plain", "Invalid message\n");
    }
    const method = msg && typeof msg.method === "string" ? msg.method : "(response)";
    bump(c.methods, method);
    if (req.headers.authorization !== undefined) c.with_authorization++;
    sendText(res, 202, "text/plain", "Accepted");
    if (!isRequest(msg)) return noteAskAnswer(ep, c, req, msg, 202);
    let out = healthyAnswer(msg, p, ep);
    // ?v= a fixed protocolVersion (a real 2024-11-05 server says 2024-11-05);
    // by default the offered one is echoed, as the SDK's SSE servers do.
    if (msg.method === "initialize" && p.str("v", null) !== null) out.result.protocolVersion = p.str("v", null);
    // ?stringid=SITE: that answer's id comes back as a string (issue 26.8)
    if (p.str("stringid", null) !== null && faultArmed(p.str("stringid", null), msg)) {
      c.faults++;
      out = { ...out, id: String(msg.id) };
    }
    if (msg.method === "tools/list" && p.str("ask", null) !== null && !sctx.asked) {
      // ?ask=: the server asks down the stream first, and holds the listing.
      sctx.asked = true;
      const asks = askEvents(sctx, null, () => {
        if (!sctx.res.destroyed) sctx.res.write(sseEvent(out));
      });
      if (!sctx.res.destroyed) sctx.res.write(asks);
      return;
    }
    if (!sctx.res.destroyed) sctx.res.write(sseEvent(out));
  });
}

// ---------------------------------------------------------------- era probes (2026-07-28)

const MODERN_VERSION = "2026-07-28";
const META_VERSION = "io.modelcontextprotocol/protocolVersion";
const META_CAPS = "io.modelcontextprotocol/clientCapabilities";
const META_SERVER_INFO = "io.modelcontextprotocol/serverInfo";
const LAB_SERVER_INFO = { name: "faultlab", version: "0.1.0" };

function isDiscover(req, msg) {
  return (msg && typeof msg === "object" && msg.method === "server/discover") ||
    req.headers["mcp-method"] === "server/discover";
}

// The request's _meta envelope, or undefined when it makes no modern claim.
function envelopeOf(msg) {
  const meta = msg && msg.params && typeof msg.params === "object" ? msg.params._meta : undefined;
  if (!meta || typeof meta !== "object" || !(META_VERSION in meta)) return undefined;
  return meta;
}

function discoverResult() {
  return { resultType: "complete", supportedVersions: [MODERN_VERSION], capabilities: { tools: {} },
    ttlMs: 60000, cacheScope: "private", _meta: { [META_SERVER_INFO]: LAB_SERVER_INFO } };
}

function probeReject(ctx, status, code, message, data) {
  ctx.c.probe_rejections++;
  const id = isRequest(ctx.msg) ? ctx.msg.id : null;
  sendJson(ctx.res, status, rpcError(id, code, message, data));
}

function unsupportedVersion(ctx, supported) {
  const meta = envelopeOf(ctx.msg);
  const requested = meta ? meta[META_VERSION] : ctx.req.headers["mcp-protocol-version"];
  const data = { supported };
  if (typeof requested === "string") data.requested = requested;
  probeReject(ctx, 400, -32022, typeof requested === "string"
    ? `Unsupported protocol version: ${requested}`
    : "Unsupported protocol version: the request did not name a protocol version", data);
}

// A correct modern-only server (what /probe/discover is, and what
// /probe/e32022modern becomes after its rejections).
function modernPost(ctx) {
  const { req, res, msg } = ctx;
  if (!isRequest(msg)) {
    // notifications: accepted and dropped (the core protocol defines none on HTTP)
    res.writeHead(202);
    res.end();
    return;
  }
  const meta = envelopeOf(msg);
  if (!meta) return unsupportedVersion(ctx, [MODERN_VERSION]);
  if (meta[META_VERSION] !== MODERN_VERSION) return unsupportedVersion(ctx, [MODERN_VERSION]);
  if (!(META_CAPS in meta) || typeof meta[META_CAPS] !== "object" || meta[META_CAPS] === null) {
    return probeReject(ctx, 400, -32602, `Invalid _meta envelope: ${META_CAPS}: missing`);
  }
  const hv = req.headers["mcp-protocol-version"];
  if (hv !== meta[META_VERSION]) {
    return probeReject(ctx, 400, -32020, hv === undefined
      ? "Bad Request: the required MCP-Protocol-Version header is absent"
      : `Bad Request: the MCP-Protocol-Version header names ${hv}, the body ${meta[META_VERSION]}`);
  }
  const hm = req.headers["mcp-method"];
  if (hm !== msg.method) {
    return probeReject(ctx, 400, -32020, hm === undefined
      ? "Bad Request: the required Mcp-Method header is absent"
      : `Bad Request: the Mcp-Method header names ${hm}, the body ${msg.method}`);
  }
  switch (msg.method) {
  case "server/discover":
    return sendJson(res, 200, rpcResult(msg.id, discoverResult()));
  case "tools/list": {
    const r = listPage(msg, ctx.p, ctx.ep);
    return sendJson(res, 200, rpcResult(msg.id, { ...r, resultType: "complete", ttlMs: 60000,
      cacheScope: "private", _meta: { [META_SERVER_INFO]: LAB_SERVER_INFO } }));
  }
  case "tools/call": {
    ctx.c.calls++;
    if (ctx.p.str("call", "complete") === "input_required") {
      // 2026-07-28 MRTR: the server asks its client (an elicitation and a
      // sampling) before it answers; the client retries with the answers.
      return sendJson(res, 200, rpcResult(msg.id, { resultType: "input_required",
        inputRequests: {
          confirm: { method: "elicitation/create",
            params: { message: "Proceed?", requestedSchema: { type: "object", properties: {} } } },
          summary: { method: "sampling/createMessage",
            params: { messages: [], maxTokens: 10 } },
        },
        requestState: "lab-state-1", _meta: { [META_SERVER_INFO]: LAB_SERVER_INFO } }));
    }
    return sendJson(res, 200, rpcResult(msg.id, { resultType: "complete",
      content: [{ type: "text", text: "lab tool ok" }],
      _meta: { [META_SERVER_INFO]: LAB_SERVER_INFO } }));
  }
  case "subscriptions/listen": {
    // Nothing to offer (no listChanged): ack the empty honored set, then end.
    const sub = { "io.modelcontextprotocol/subscriptionId": msg.id };
    res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
    res.write(sseEvent({ jsonrpc: "2.0", method: "notifications/subscriptions/acknowledged",
      params: { notifications: {}, _meta: sub } }));
    res.end(sseEvent(rpcResult(msg.id, { resultType: "complete",
      _meta: { ...sub, [META_SERVER_INFO]: LAB_SERVER_INFO } })));
    return;
  }
  default:
    return sendJson(res, 404, rpcError(msg.id, -32601, "Method not found"));
  }
}

// Each case: modernOnly (GET/DELETE 405, no 2025 serving) and what answers a
// discover (return true when it answered; false lets the request go on).
const PROBE_CASES = {
  discover: { modernOnly: true, discover: () => false },
  e32022modern: {
    modernOnly: true,
    discover: (ctx) => {
      if (ctx.ep.discovers > ctx.p.num("times", 1)) return false;
      ctx.c.faults++;
      unsupportedVersion(ctx, [MODERN_VERSION]);
      return true;
    },
  },
  e32022legacy: {
    modernOnly: false,
    discover: (ctx) => {
      ctx.c.faults++;
      unsupportedVersion(ctx, ["2025-06-18", "2025-11-25"]);
      return true;
    },
  },
  e32000: {
    modernOnly: false,
    discover: (ctx) => {
      ctx.c.faults++;
      sendJson(ctx.res, 400, rpcError(null, -32000, "Bad Request: Server not initialized"));
      return true;
    },
  },
  404: { modernOnly: false, discover: (ctx) => emptyStatus(ctx, 404) },
  405: { modernOnly: false, discover: (ctx) => emptyStatus(ctx, 405, { Allow: "GET, DELETE" }) },
  401: { modernOnly: false, discover: (ctx) => faultAnswers(ctx, "auth401") },
  503: { modernOnly: false, discover: (ctx) => faultAnswers(ctx, "busy503") },
  reset: { modernOnly: false, discover: (ctx) => faultAnswers(ctx, "reset") },
  hang: { modernOnly: false, discover: (ctx) => faultAnswers(ctx, "hang") },
  // issue 13.2: discover answered 500 with a serialized exception (no JSON-RPC)
  exc500: { modernOnly: false, discover: (ctx) => faultAnswers(ctx, "exception500") },
  // issue 45.2: a gateway's -32603 for its dead child is no era evidence
  e32603: { modernOnly: false, discover: (ctx) => gatewayDead(ctx) },
  dead32603: { modernOnly: false, dead: true, discover: (ctx) => gatewayDead(ctx) },
  // issue 13.2: the first ?times= (1) discovers 404 (taken for legacy); a
  // modern-only server otherwise, so initialize gets 400 -32022 naming only
  // 2026-07-28
  init32022: {
    modernOnly: true,
    discover: (ctx) => (ctx.ep.discovers > ctx.p.num("times", 1) ? false : emptyStatus(ctx, 404)),
  },
};

// What a gateway (supergateway, mcp-proxy) answers when its child died.
function gatewayDead(ctx) {
  ctx.c.faults++;
  sendJson(ctx.res, 200, rpcError(ctx.msg && ctx.msg.id !== undefined ? ctx.msg.id : null,
    -32603, "MCP server process exited"));
  return true;
}

function emptyStatus(ctx, status, headers = {}) {
  ctx.c.faults++;
  ctx.res.writeHead(status, { "Content-Length": 0, ...headers });
  ctx.res.end();
  return true;
}

function faultAnswers(ctx, fault) {
  ctx.c.faults++;
  MESSAGE_FAULTS[fault](ctx);
  return true;
}

function probePost(ctx) {
  const { req, msg, p, ep } = ctx;
  const pc = PROBE_CASES[p.probe];
  if (isDiscover(req, msg)) {
    ep.discovers++;
    if (pc.discover(ctx)) return;
  }
  if (pc.dead && ctx.msg && ctx.msg.id !== undefined) return gatewayDead(ctx);
  if (pc.modernOnly) return modernPost(ctx);
  // ?init=<fault>: that message fault answers initialize
  if (p.initFault && msg && msg.method === "initialize") {
    ctx.c.faults++;
    return MESSAGE_FAULTS[p.initFault](ctx);
  }
  // The 2025 healthy endpoint; a modern request other than discover gets what
  // a 2025 server would (the e32022legacy case refuses it by version).
  if (p.probe === "e32022legacy" && envelopeOf(msg) && msg.method !== "initialize") {
    return unsupportedVersion(ctx, ["2025-06-18", "2025-11-25"]);
  }
  if (sessionGate(ctx)) return;
  healthyPost(ctx);
}

// ---------------------------------------------------------------- routing

function params(url) {
  const q = url.searchParams;
  const parts = url.pathname.split("/").filter((s) => s !== "");
  let name = parts[0] || "";
  let site = parts[1] || "dial";
  const p = {
    key: url.pathname + url.search,
    name,
    site,
    slashed: url.pathname.length > 1 && url.pathname.endsWith("/"),
    tools: Number(q.get("tools") || 3),
    page: Number(q.get("page") || 0),
    sse: q.get("sse") === "1",
    trail: q.get("trail") === "1",
    sessions: q.get("nosession") !== "1",
    listChanged: false,
    stream: null,
    expireAfter: null,
    expireTimes: 1,
    forgetAfter: null,
    forgetTimes: 1,
    changeMs: null,
    initFault: q.get("init") || null,
    delete: q.get("delete") || "200",
    flap: null,
    num(k, d) {
      const v = q.get(k);
      return v === null || v === "" || !Number.isFinite(Number(v)) ? d : Number(v);
    },
    str(k, d) {
      const v = q.get(k);
      return v === null ? d : v;
    },
  };
  if (q.get("ask") !== null && q.get("via") === "get" && name !== "legacysse") {
    p.listChanged = true;
    p.stream = "ask";
  }
  const m = /^delete(405|404|500|hang|never|delay|reset)$/.exec(name);
  if (m) {
    p.delete = m[1];
    p.name = "healthy";
  }
  switch (p.name) {
  case "nosession":
    p.sessions = false;
    p.name = "healthy";
    break;
  case "lateinit":
    p.name = "delay";
    p.site = "dial";
    p.lateMs = p.num("ms", 2500);
    break;
  case "expire":
    p.expireAfter = p.num("after", 3);
    p.expireTimes = p.num("times", 1);
    p.name = "healthy";
    break;
  case "listchanged":
    p.listChanged = true;
    p.name = "healthy";
    break;
  case "flap":
    p.flap = { up: p.num("up_ms", 1200), down: p.num("down_ms", 1200) };
    p.name = "healthy";
    break;
  case "probe":
    p.probe = site;
    p.name = "healthy";
    p.site = "dial";
    break;
  // issues 12 and 13
  case "legacysse":
    p.site = "dial";
    break;
  case "retry0":
    p.listChanged = true;
    p.stream = "retry";
    p.name = "healthy";
    break;
  case "storm":
    p.listChanged = true;
    p.stream = "storm";
    p.name = "healthy";
    break;
  case "sdkstream":
    p.listChanged = true;
    p.stream = "sdk";
    p.changeMs = p.num("change_ms", 300000);
    p.name = "healthy";
    break;
  case "forget":
    p.forgetAfter = p.num("after", 3);
    p.forgetTimes = p.num("times", 1);
    if (q.get("stream") === "1") {
      p.listChanged = true;
      p.stream = "plain";
    }
    p.name = "healthy";
    break;
  case "maintenance":
    p.site = "any";
    break;
  case "stringid":
    // via=get: the answer goes down the GET stream, which a client opens
    // only for a server that offers tools.listChanged
    if (q.get("via") === "get") {
      p.listChanged = true;
      p.stream = "plain";
    }
    break;
  case "redirect": {
    // /redirect/<site> and /redirect/<site>/ (the mount point) are one endpoint
    const k = new URLSearchParams(q);
    k.delete("hop");
    const ks = k.toString();
    p.key = url.pathname.replace(/\/+$/, "") + (ks ? "?" + ks : "");
    break;
  }
  default:
    break;
  }
  return p;
}

function readBody(req, cb) {
  const chunks = [];
  let size = 0;
  let tooBig = false;
  req.on("data", (d) => {
    size += d.length;
    if (size > MAX_REQUEST_BYTES) tooBig = true;
    else chunks.push(d);
  });
  req.on("end", () => cb(tooBig ? null : Buffer.concat(chunks)));
  req.on("error", () => {});
}

function countsJson() {
  const out = {};
  for (const [k, v] of counts) {
    const e = endpoints.get(k);
    out[k] = { ...v, sessions_live: e ? e.sessions.size : 0 };
  }
  return { endpoints: out, sessions_live: [...endpoints.values()].reduce((n, e) => n + e.sessions.size, 0),
    other_origin: otherOrigin, client_errors: clientErrors };
}

// Requests that reached the other port (another origin than the main one).
let otherOrigin = freshOtherOrigin();
let clientErrors = 0;

function freshOtherOrigin() {
  return { requests: 0, with_authorization: 0, methods: {}, by_from: {} };
}

const LOG_CAP = 300;

function logRequest(c, entry) {
  if (c.log.length < LOG_CAP) c.log.push(entry);
  else c.log_dropped++;
  return entry;
}

// origin: "main" (the lab's port) or "other" (--other-port: another origin)
function handle(req, res, origin = "main") {
  const url = new URL(req.url, "http://faultlab.invalid");
  res.on("error", () => {});

  if (url.pathname === "/_counts" && req.method === "GET") {
    return sendJson(res, 200, countsJson());
  }
  if (url.pathname === "/_reset" && req.method === "POST") {
    counts = new Map();
    endpoints.clear();
    otherOrigin = freshOtherOrigin();
    clientErrors = 0;
    return sendJson(res, 200, { reset: true });
  }
  if (url.pathname === "/" && req.method === "GET") {
    return sendText(res, 200, "text/plain; charset=utf-8", helpText());
  }
  if (origin === "other") {
    const auth = req.headers.authorization !== undefined;
    const from = url.searchParams.get("from") || url.pathname + url.search;
    const b = otherOrigin.by_from[from] || (otherOrigin.by_from[from] = { requests: 0, with_authorization: 0 });
    otherOrigin.requests++;
    b.requests++;
    bump(otherOrigin.methods, req.method);
    if (auth) {
      otherOrigin.with_authorization++;
      b.with_authorization++;
    }
    log(`other origin: ${req.method} ${url.pathname}${url.search}${auth ? " (with Authorization)" : ""}`);
  }
  if (url.searchParams.has("sse_sid") && req.method === "POST") return sseMessage(req, res, url);

  const p = params(url);
  if (origin === "other") p.key = "other:" + p.key;
  const known = p.name === "healthy" || p.name === "legacysse" || p.name === "maintenance" ||
    Object.hasOwn(MESSAGE_FAULTS, p.name);
  if (!known || !SITES.has(p.site)) {
    return sendText(res, 404, "text/plain", `faultlab: no endpoint ${url.pathname}\n`);
  }
  if (p.probe !== undefined && !Object.hasOwn(PROBE_CASES, p.probe)) {
    return sendText(res, 404, "text/plain", `faultlab: no endpoint ${url.pathname}\n`);
  }
  if (p.initFault !== null && !Object.hasOwn(MESSAGE_FAULTS, p.initFault)) {
    return sendText(res, 404, "text/plain", `faultlab: no fault ${p.initFault} for ?init=\n`);
  }
  const c = countsFor(p.key);
  const ep = endpointFor(p.key);
  const ctx = { req, res, p, ep, c, msg: null };
  const entry = logRequest(c, { t: Date.now(), m: req.method });
  const keepS = p.num("keepalive_s", 0);
  if (keepS > 0) keepAliveFor(req, res, c, keepS, entry);
  if (req.headers.authorization !== undefined) c.with_authorization++;
  if (p.name === "redirect" && p.slashed) {
    c.redirected_arrivals++;
    entry.slashed = true;
  }
  // /sdkstream: the tools change ?change_ms= after the endpoint's first request
  if (p.changeMs !== null && ep.changeTimer === null) {
    ep.changeTimer = later(p.changeMs, () => {
      ep.toolsAdded += p.num("add", 2);
      log(`${p.key}: tools now ${p.tools + ep.toolsAdded}; telling ${ep.streams.size} stream(s)`);
      broadcastListChanged(ctx);
    });
  }

  // /maintenance: every request, whatever it is, is answered 503 + Retry-After.
  if (p.name === "maintenance") {
    if (req.method === "GET") c.GET++;
    else if (req.method === "DELETE") c.DELETE++;
    else if (req.method === "POST") c.POST++;
    else c.other_http++;
    readBody(req, (body) => {
      try {
        const msg = JSON.parse(body ? body.toString("utf8") : "");
        if (msg && typeof msg.method === "string") {
          bump(c.methods, msg.method);
          entry.rpc = msg.method;
        }
      } catch (e) {
        /* not JSON: counted by HTTP method only */
      }
      c.faults++;
      sendText(res, 503, "text/plain", "Down for maintenance\n", { "Retry-After": retryAfterValue(p) });
    });
    return;
  }
  // /redirect/any: the whole mount point moved, GET and DELETE included
  const mountMoved = p.name === "redirect" && p.site === "any" && !p.slashed;

  if (p.probe !== undefined && PROBE_CASES[p.probe].modernOnly && req.method !== "POST") {
    if (req.method === "GET") c.GET++;
    else if (req.method === "DELETE") c.DELETE++;
    else c.other_http++;
    readBody(req, () => sendJson(res, 405, rpcError(null, -32000, "Method not allowed."), { Allow: "POST" }));
    return;
  }
  if (req.method === "GET") {
    c.GET++;
    readBody(req, () => (mountMoved ? redirectAnswer(ctx) : handleGet(ctx)));
    return;
  }
  if (req.method === "DELETE") {
    c.DELETE++;
    readBody(req, () => (mountMoved ? redirectAnswer(ctx) : handleDelete(ctx)));
    return;
  }
  if (req.method !== "POST") {
    c.other_http++;
    readBody(req, () => sendText(res, 405, "text/plain", "Method Not Allowed\n",
      { Allow: "GET, POST, DELETE", ...mintHeaders(ctx) }));
    return;
  }
  c.POST++;
  readBody(req, (body) => {
    if (body === null) return sendJson(res, 413, rpcError(null, -32600, "request too large"));
    let msg;
    try {
      msg = JSON.parse(body.toString("utf8"));
    } catch (e) {
      return sendJson(res, 400, rpcError(null, -32700, "Parse error"), mintHeaders(ctx));
    }
    ctx.msg = msg;
    const method = msg && typeof msg === "object" && !Array.isArray(msg)
      ? (typeof msg.method === "string" ? msg.method : "(response)") : "(batch)";
    bump(c.methods, method);
    entry.rpc = method;
    if (req.headers["mcp-session-id"] !== undefined) bump(c.with_session, method);
    if (req.headers["mcp-protocol-version"] !== undefined) {
      bump(c.with_protocol_version, method);
      const pv = c.protocol_versions[method] || (c.protocol_versions[method] = {});
      bump(pv, String(req.headers["mcp-protocol-version"]));
    }
    if (req.headers["mcp-method"] !== undefined) bump(c.with_mcp_method, method);
    log(`${p.key}: POST ${method}${isRequest(msg) ? ` id=${JSON.stringify(msg.id)}` : ""}`);

    if (method === "(batch)") {
      return sendJson(res, 400, rpcError(null, -32600, "Batches are not supported"));
    }
    const ctype = String(req.headers["content-type"] || "");
    if (!ctype.toLowerCase().startsWith("application/json")) {
      return sendJson(res, 415, rpcError(null, -32000, "Content-Type must be application/json"));
    }
    const accept = String(req.headers.accept || "");
    if (!accept.includes("application/json") || !accept.includes("text/event-stream")) {
      return sendJson(res, 406, rpcError(null, -32000,
        "Not Acceptable: Accept must list application/json and text/event-stream"));
    }
    // /legacysse: a 2024-11-05 server has no POST on its stream URL.
    if (p.name === "legacysse") {
      return sendText(res, 405, "text/plain", "Method Not Allowed\n", { Allow: "GET" });
    }
    if (mountMoved) {
      c.faults++;
      return redirectAnswer(ctx);
    }

    if (p.probe !== undefined) return probePost(ctx);
    // ?era=dual: a 2026-07-28 discover is answered as well as initialize.
    if (p.str("era", "") === "dual" && isDiscover(req, msg) && isRequest(msg)) {
      return sendJson(res, 200, rpcResult(msg.id, discoverResult()));
    }
    // The flapping endpoint resets every request during its down window.
    if (p.flap) {
      const t = (Date.now() - ep.firstSeen) % (p.flap.up + p.flap.down);
      if (t >= p.flap.up) {
        c.faults++;
        return resetConnection(ctx);
      }
    }
    // A fault armed for this message fires before any session check, so that
    // it is what answers (a gateway or a broken server does not look at
    // sessions); everything else goes through the session gate. The
    // redirect fault's target (the slashed path) is served healthy.
    if (p.name !== "healthy" && faultArmed(p.site, msg) && !(p.name === "redirect" && p.slashed)) {
      c.faults++;
      return MESSAGE_FAULTS[p.name](ctx);
    }
    if (sessionGate(ctx)) return;
    healthyPost(ctx);
  });
}

// ---------------------------------------------------------------- start / stop

function track(server) {
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
    s.on("error", () => {});
  });
  server.on("clientError", (err, s) => {
    clientErrors++;
    if (!s.destroyed) s.destroy();
  });
  server.on("tlsClientError", () => {});
  server.keepAliveTimeout = 30000;
  server.headersTimeout = 60000;
  server.requestTimeout = 0;
  return server;
}

function listen(server, port) {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, opts.host, () => {
      server.removeListener("error", reject);
      resolve(server.address().port);
    });
  });
}

const servers = [];
let stopping = false;

function shutdown(code) {
  if (stopping) return;
  stopping = true;
  for (const t of timers) {
    clearTimeout(t);
    clearInterval(t);
  }
  timers.clear();
  for (const s of servers) s.close();
  for (const s of sockets) s.destroy();
  // Exit at once: nothing here needs flushing beyond stdio.
  setImmediate(() => process.exit(code));
}

process.on("SIGTERM", () => shutdown(0));
process.on("SIGINT", () => shutdown(0));
process.on("SIGHUP", () => shutdown(0));

if (opts.parentPid > 0) {
  setInterval(() => {
    try {
      process.kill(opts.parentPid, 0);
    } catch (e) {
      shutdown(1);
    }
  }, 1000).unref();
}

try {
  const plain = track(http.createServer(handle));
  servers.push(plain);
  const port = await listen(plain, opts.port);
  let otherUrl = null;
  if (opts.otherPort !== null) {
    const other = track(http.createServer((req, res) => handle(req, res, "other")));
    servers.push(other);
    const oport = await listen(other, opts.otherPort);
    otherUrl = `http://${opts.host.includes(":") ? `[${opts.host}]` : opts.host}:${oport}`;
    otherBase = otherUrl;
  }
  let tlsUrl = null;
  if (opts.tlsPort !== null) {
    const secure = track(https.createServer({
      cert: fs.readFileSync(opts.tlsCert),
      key: fs.readFileSync(opts.tlsKey),
    }, handle));
    servers.push(secure);
    const tport = await listen(secure, opts.tlsPort);
    tlsUrl = `https://${opts.host}:${tport}`;
  }
  const host = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
  process.stdout.write(`faultlab ready ${JSON.stringify({ http: `http://${host}:${port}`, https: tlsUrl,
    other: otherUrl, pid: process.pid })}\n`);
} catch (e) {
  process.stderr.write(`faultlab: cannot listen: ${e.message}\n`);
  process.exit(1);
}
