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
//   sseraw      text/event-stream whose body is raw JSON (no SSE lines)
//   ssesilent   text/event-stream that stays open and silent
//   big         200 JSON answer of ?mb= MB (default 20)
//   dribble     the whole HTTP answer written ?bps= bytes/s (default 1)
//   gone404     plain 404 Not Found
//
// Endpoint behaviours (no site):
//   /healthy            correct; ?tools=N (3) ?page=N (all on one page)
//                       ?sse=1 answers every request as an SSE stream
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
//   DELETE behaviour, on any endpoint with ?delete=, or as the paths below:
//     /delete405 /delete404 /delete500 /deletehang /deletedelay?ms=N /deletereset
//     ?delete=200|405|404|500|hang|delay|reset   (200 ends the session)
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
//                 empty honored set and ends at once; other methods 404 -32601;
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
//   Counts: the usual per-method counts, plus with_mcp_method and
//   probe_rejections (modern requests refused by the checks above).
//
// Lab endpoints:
//   GET  /_counts   JSON: per endpoint (path + query), HTTP methods, JSON-RPC
//                   methods, faults fired, sessions issued/expired/deleted,
//                   DELETEs; sessions_live over all endpoints
//   POST /_reset    zero the counts and forget every session
//   GET  /          this text
//
// usage: node server.mjs --port PORT [--host 127.0.0.1] [--tls-port PORT
//        --tls-cert FILE --tls-key FILE] [--parent-pid PID] [--verbose]
// PORT 0 picks a free port. Prints one line when listening:
//   faultlab ready {"http":"http://127.0.0.1:PORT","https":...,"pid":N}
// SIGTERM / SIGINT: every connection is destroyed and the process exits 0.
import http from "node:http";
import https from "node:https";
import fs from "node:fs";
import crypto from "node:crypto";
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
      "[--tls-port PORT --tls-cert FILE --tls-key FILE] [--parent-pid PID] [--verbose]\n");
  process.exit(2);
}

const opts = { host: "127.0.0.1", port: null, tlsPort: null, tlsCert: null, tlsKey: null,
  parentPid: 0, verbose: false };
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
    else if (a === "--verbose" || a === "-v") opts.verbose = true;
    else if (a === "--help" || a === "-h") {
      process.stdout.write(helpText());
      process.exit(0);
    } else usage(`unexpected argument ${a}`);
  }
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) usage("--port PORT is required");
  if (!LOOPBACK_HOSTS.has(opts.host)) usage(`--host must be a loopback address, not ${opts.host}`);
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
      resets: 0, with_mcp_method: {}, probe_rejections: 0 };
    counts.set(key, c);
  }
  return c;
}

function bump(obj, k, n = 1) {
  obj[k] = (obj[k] || 0) + n;
}

function endpointFor(key) {
  let e = endpoints.get(key);
  if (!e) {
    e = { sessions: new Map(), toolsAdded: 0, firstSeen: Date.now(), expiredSoFar: 0,
      listChangedArmed: false, discovers: 0 };
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

function sendSse(res, obj, headers = {}) {
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", ...headers });
  res.write(`id: 0\ndata: \n\n`); // a priming event, as 2025-11-25 servers send
  res.end(sseEvent(obj, 1));
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
    return rpcResult(msg.id, {});
  case "tools/list":
    return rpcResult(msg.id, listPage(msg, p, ep));
  default:
    return rpcError(msg.id, -32601, `Method not found: ${msg.method}`);
  }
}

function isRequest(msg) {
  return msg && typeof msg === "object" && !Array.isArray(msg) && typeof msg.method === "string" &&
    msg.id !== undefined && msg.id !== null;
}

function answer(ctx, obj, headers = {}) {
  if (ctx.p.sse) sendSse(ctx.res, obj, headers);
  else sendJson(ctx.res, 200, obj, headers);
}

// Serve one POST correctly (after any session/expiry checks).
function healthyPost(ctx) {
  const { req, res, msg, p, ep, c } = ctx;
  if (!isRequest(msg)) {
    res.writeHead(202);
    res.end();
    return;
  }
  if (msg.method === "initialize") {
    const headers = {};
    if (p.sessions) headers["Mcp-Session-Id"] = ctx.presetSid || issueSession(ctx);
    answer(ctx, healthyAnswer(msg, p, ep), headers);
    return;
  }
  answer(ctx, healthyAnswer(msg, p, ep));
  void req;
}

// A new session on this endpoint: its id.
function issueSession(ctx) {
  const sid = newSessionId();
  ctx.ep.sessions.set(sid, { requests: 0, created: Date.now() });
  ctx.c.sessions_issued++;
  return sid;
}

// Session checks every non-initialize POST goes through on a session endpoint.
// Returns true when it answered (400/404).
function sessionGate(ctx) {
  const { req, res, msg, p, ep, c } = ctx;
  if (!p.sessions || (msg && msg.method === "initialize")) return false;
  const sid = req.headers["mcp-session-id"];
  if (sid === undefined) {
    sendJson(res, 400, rpcError(null, -32000, "Bad Request: Mcp-Session-Id header is required"));
    return true;
  }
  const s = ep.sessions.get(sid);
  if (!s) {
    c.session_404s++;
    sendJson(res, 404, rpcError(null, -32001, "Session not found"));
    return true;
  }
  s.requests++;
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
    { "Retry-After": String(ctx.p.num("s", 7)) }),
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
};

const SITES = new Set(["dial", "ping", "list", "any"]);

function faultArmed(site, msg) {
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
  const ok = () => {
    if (!p.sessions) return sendText(res, 405, "text/plain", "no sessions here\n", { Allow: "POST" });
    if (sid === undefined) return sendJson(res, 400, rpcError(null, -32000, "Bad Request: no Mcp-Session-Id"));
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

function handleGet(ctx) {
  const { req, res, p, ep, c } = ctx;
  if (!p.listChanged) {
    return sendText(res, 405, "text/plain", "Method Not Allowed\n", { Allow: "POST, DELETE" });
  }
  const sid = req.headers["mcp-session-id"];
  if (p.sessions && (sid === undefined || !ep.sessions.has(sid))) {
    return sendJson(res, sid === undefined ? 400 : 404, rpcError(null, -32001, "Session not found"));
  }
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
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
};

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
  if (pc.modernOnly) return modernPost(ctx);
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
    tools: Number(q.get("tools") || 3),
    page: Number(q.get("page") || 0),
    sse: q.get("sse") === "1",
    sessions: true,
    listChanged: false,
    expireAfter: null,
    expireTimes: 1,
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
  for (const [k, v] of counts) out[k] = v;
  return { endpoints: out, sessions_live: [...endpoints.values()].reduce((n, e) => n + e.sessions.size, 0) };
}

function handle(req, res) {
  const url = new URL(req.url, "http://faultlab.invalid");
  res.on("error", () => {});

  if (url.pathname === "/_counts" && req.method === "GET") {
    return sendJson(res, 200, countsJson());
  }
  if (url.pathname === "/_reset" && req.method === "POST") {
    counts = new Map();
    endpoints.clear();
    return sendJson(res, 200, { reset: true });
  }
  if (url.pathname === "/" && req.method === "GET") {
    return sendText(res, 200, "text/plain; charset=utf-8", helpText());
  }

  const p = params(url);
  const known = p.name === "healthy" || Object.hasOwn(MESSAGE_FAULTS, p.name);
  if (!known || !SITES.has(p.site)) {
    return sendText(res, 404, "text/plain", `faultlab: no endpoint ${url.pathname}\n`);
  }
  if (p.probe !== undefined && !Object.hasOwn(PROBE_CASES, p.probe)) {
    return sendText(res, 404, "text/plain", `faultlab: no endpoint ${url.pathname}\n`);
  }
  const c = countsFor(p.key);
  const ep = endpointFor(p.key);
  const ctx = { req, res, p, ep, c, msg: null };

  if (p.probe !== undefined && PROBE_CASES[p.probe].modernOnly && req.method !== "POST") {
    if (req.method === "GET") c.GET++;
    else if (req.method === "DELETE") c.DELETE++;
    else c.other_http++;
    readBody(req, () => sendJson(res, 405, rpcError(null, -32000, "Method not allowed."), { Allow: "POST" }));
    return;
  }
  if (req.method === "GET") {
    c.GET++;
    readBody(req, () => handleGet(ctx));
    return;
  }
  if (req.method === "DELETE") {
    c.DELETE++;
    readBody(req, () => handleDelete(ctx));
    return;
  }
  if (req.method !== "POST") {
    c.other_http++;
    readBody(req, () => sendText(res, 405, "text/plain", "Method Not Allowed\n", { Allow: "GET, POST, DELETE" }));
    return;
  }
  c.POST++;
  readBody(req, (body) => {
    if (body === null) return sendJson(res, 413, rpcError(null, -32600, "request too large"));
    let msg;
    try {
      msg = JSON.parse(body.toString("utf8"));
    } catch (e) {
      return sendJson(res, 400, rpcError(null, -32700, "Parse error"));
    }
    ctx.msg = msg;
    const method = msg && typeof msg === "object" && !Array.isArray(msg)
      ? (typeof msg.method === "string" ? msg.method : "(response)") : "(batch)";
    bump(c.methods, method);
    if (req.headers["mcp-session-id"] !== undefined) bump(c.with_session, method);
    if (req.headers["mcp-protocol-version"] !== undefined) bump(c.with_protocol_version, method);
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

    if (p.probe !== undefined) return probePost(ctx);
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
    // sessions); everything else goes through the session gate.
    if (p.name !== "healthy" && faultArmed(p.site, msg)) {
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
    pid: process.pid })}\n`);
} catch (e) {
  process.stderr.write(`faultlab: cannot listen: ${e.message}\n`);
  process.exit(1);
}
