#!/usr/bin/env node
// mcptop bench: ONE Node process holding N minimal-but-correct MCP Streamable
// HTTP servers, one per 127.0.0.1 port, ports BASE .. BASE+N-1 (keep the
// range below the kernel's ephemeral range, /proc/sys/net/ipv4/
// ip_local_port_range).
//
// Each server (revisions 2025-03-26 .. 2025-11-25, plain JSON answers, no SSE):
//   POST initialize            200 JSON, issues a fresh Mcp-Session-Id
//   POST notifications/*       202, no body
//   POST a JSON-RPC response   202, no body
//   POST tools/list            200 JSON, three tools
//   POST ping                  200 JSON, result {}
//   POST other methods         200 JSON, JSON-RPC error -32601
//   POST batches (arrays)      200 JSON array (or 202 when nothing to answer)
//   GET                        405 (no server-initiated stream), Allow header
//   DELETE                     200 and the session ends; 404 unknown session
//   a request other than initialize without Mcp-Session-Id: 400;
//   with an unknown (or another port's) session id: 404.
//
// Idle kept-alive connections are never closed by the server
// (keepAliveTimeout 0 = no timeout, headersTimeout / requestTimeout off).
//
// All N listeners feed one http.Server (each net.Server hands its
// connections over with 'connection'), so the per-port cost is one listening
// socket. Node cannot raise its own RLIMIT_NOFILE: bench/run raises the soft
// limit before starting this process (N listeners + the clients'
// connections must fit).
//
// With --one-port, every server shares port BASE and server i answers at
// path /mcp/i (any other path: 404); sessions are per server as above.
//
// usage: node fleetserver.mjs --base-port 20000 --count N [--first K]
//          [--one-port]
//   --first K   this process holds ports BASE+K .. BASE+K+N-1 (sharding)
// Prints one line when every port listens:
//   fleetserver ready {"pid":..,"base_port":..,"first":..,"count":..}
// SIGUSR2 prints a stats line (CPU of this process, RSS, counters):
//   fleetserver stats {"cpu_user_us":..,"cpu_system_us":..,...}
// SIGTERM / SIGINT: prints the stats line and exits 0.
import http from "node:http";
import net from "node:net";
import crypto from "node:crypto";

const SUPPORTED = new Set(["2025-11-25", "2025-06-18", "2025-03-26"]);
const LATEST = "2025-11-25";
const MAX_BODY = 4 * 1024 * 1024;

const opts = { basePort: 20000, count: 0, first: 0, host: "127.0.0.1", onePort: false };
{
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => {
      if (i + 1 >= argv.length) die(`${a} needs a value`);
      return argv[++i];
    };
    if (a === "--base-port") opts.basePort = Number(v());
    else if (a === "--count") opts.count = Number(v());
    else if (a === "--first") opts.first = Number(v());
    else if (a === "--one-port") opts.onePort = true;
    else die(`unexpected argument ${a}`);
  }
  if (!Number.isInteger(opts.count) || opts.count < 1) die("--count N is required");
  if (!Number.isInteger(opts.basePort) || opts.basePort < 1024 ||
      opts.basePort + (opts.onePort ? 0 : opts.first + opts.count) > 65535)
    die("bad --base-port");
  if (opts.onePort && opts.first !== 0) die("--one-port holds every server: no --first");
}

function die(msg) {
  process.stderr.write(`fleetserver: ${msg}\n` +
    "usage: node fleetserver.mjs --base-port 20000 --count N [--first K] [--one-port]\n");
  process.exit(2);
}

// ---------------------------------------------------------------- state

const sessions = new Map();   // session id -> the server (port or path) it was issued on
const stats = { requests: 0, initialize: 0, ping: 0, tools_list: 0, notifications: 0,
  deletes: 0, delete_unknown: 0, gets: 0, bad: 0, connections: 0, sessions_issued: 0 };
const sidPrefix = crypto.randomBytes(6).toString("hex");
let sidSeq = 0;

const TOOLS = JSON.stringify([
  { name: "echo", description: "Echo the given text back.",
    inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] } },
  { name: "add", description: "Add two numbers.",
    inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } },
      required: ["a", "b"] } },
  { name: "time", description: "The server's current time.",
    inputSchema: { type: "object", properties: {} } },
]);

// ---------------------------------------------------------------- answers

function rpcResult(id, resultJson) {
  return `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${resultJson}}`;
}

function rpcError(id, code, message) {
  return JSON.stringify({ jsonrpc: "2.0", id: id === undefined ? null : id,
    error: { code, message } });
}

function send(res, status, body, headers) {
  const h = headers || {};
  if (body !== null) {
    h["Content-Type"] = "application/json";
    h["Content-Length"] = Buffer.byteLength(body);
    res.writeHead(status, h);
    res.end(body);
  } else {
    h["Content-Length"] = 0;
    res.writeHead(status, h);
    res.end();
  }
}

// One JSON-RPC message: its answer text, or null (nothing to answer).
// ctx.sid is set when initialize issued a session.
function answer(msg, port, ctx) {
  if (msg === null || typeof msg !== "object" || msg.jsonrpc !== "2.0")
    return rpcError(null, -32600, "Invalid Request");
  if (typeof msg.method !== "string") {
    if ("result" in msg || "error" in msg) return null;        // a response to us
    return rpcError(msg.id, -32600, "Invalid Request");
  }
  const isRequest = "id" in msg && msg.id !== null;
  if (!isRequest) {
    stats.notifications++;
    return null;
  }
  switch (msg.method) {
  case "initialize": {
    stats.initialize++;
    const asked = msg.params && msg.params.protocolVersion;
    const v = SUPPORTED.has(asked) ? asked : LATEST;
    const sid = `${sidPrefix}-${port}-${++sidSeq}`;
    sessions.set(sid, port);
    stats.sessions_issued++;
    ctx.sid = sid;
    return rpcResult(msg.id, `{"protocolVersion":${JSON.stringify(v)},` +
      `"capabilities":{"tools":{"listChanged":false}},` +
      `"serverInfo":{"name":"fleet-${port}","version":"1.0.0"}}`);
  }
  case "ping":
    stats.ping++;
    return rpcResult(msg.id, "{}");
  case "tools/list":
    stats.tools_list++;
    return rpcResult(msg.id, `{"tools":${TOOLS}}`);
  default:
    return rpcError(msg.id, -32601, `Method not found: ${msg.method}`);
  }
}

function isInitialize(msg) {
  if (Array.isArray(msg)) return msg.some((m) => m && m.method === "initialize");
  return msg !== null && typeof msg === "object" && msg.method === "initialize";
}

function onPost(req, res, port, body) {
  let msg;
  try {
    msg = JSON.parse(body);
  } catch {
    stats.bad++;
    send(res, 400, rpcError(null, -32700, "Parse error"));
    return;
  }
  const sidIn = req.headers["mcp-session-id"];
  if (!isInitialize(msg)) {
    if (sidIn === undefined) {
      stats.bad++;
      send(res, 400, rpcError(null, -32000, "Bad Request: Mcp-Session-Id header is required"));
      return;
    }
    if (sessions.get(sidIn) !== port) {
      stats.bad++;
      send(res, 404, rpcError(null, -32001, "Session not found"));
      return;
    }
  }
  const ctx = { sid: null };
  let out;
  if (Array.isArray(msg)) {
    const parts = [];
    for (const m of msg) {
      const a = answer(m, port, ctx);
      if (a !== null) parts.push(a);
    }
    out = parts.length ? `[${parts.join(",")}]` : null;
  } else {
    out = answer(msg, port, ctx);
  }
  const headers = ctx.sid !== null ? { "Mcp-Session-Id": ctx.sid } : {};
  if (out === null) send(res, 202, null, headers);
  else send(res, 200, out, headers);
}

function onRequest(req, res) {
  stats.requests++;
  // The server: its port, or with --one-port its path /mcp/i.
  let port = req.socket.localPort;
  if (opts.onePort) {
    const m = /^\/mcp\/(\d+)$/.exec(req.url);
    if (m === null || Number(m[1]) >= opts.count) {
      req.resume();
      stats.bad++;
      send(res, 404, rpcError(null, -32001, "No such server"));
      return;
    }
    port = `${opts.basePort}-${m[1]}`;
  }
  if (req.method === "POST") {
    const chunks = [];
    let size = 0;
    req.on("data", (c) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on("end", () => {
      if (size > MAX_BODY) {
        stats.bad++;
        send(res, 413, rpcError(null, -32600, "Request too large"));
        return;
      }
      onPost(req, res, port, chunks.length === 1 ? chunks[0].toString("utf8") :
        Buffer.concat(chunks).toString("utf8"));
    });
    return;
  }
  // GET / DELETE / others: drain any body first.
  req.resume();
  req.on("end", () => {
    if (req.method === "DELETE") {
      const sid = req.headers["mcp-session-id"];
      stats.deletes++;
      if (sid === undefined) {
        send(res, 400, rpcError(null, -32000, "Bad Request: Mcp-Session-Id header is required"));
      } else if (sessions.get(sid) !== port) {
        stats.delete_unknown++;
        send(res, 404, rpcError(null, -32001, "Session not found"));
      } else {
        sessions.delete(sid);
        send(res, 200, null);
      }
    } else if (req.method === "GET") {
      stats.gets++;
      send(res, 405, null, { Allow: "POST, DELETE" });
    } else {
      send(res, 405, null, { Allow: "GET, POST, DELETE" });
    }
  });
}

// ---------------------------------------------------------------- servers

const httpServer = http.createServer({ keepAlive: true }, onRequest);
httpServer.keepAliveTimeout = 0;      // never close an idle kept-alive connection
httpServer.headersTimeout = 0;        // no header deadline
httpServer.requestTimeout = 0;        // no request deadline
httpServer.timeout = 0;               // no socket inactivity timeout
httpServer.maxHeadersCount = 0;
httpServer.maxRequestsPerSocket = 0;  // unlimited requests per connection

const sockets = new Set();
const listeners = [];

function onConnection(sock) {
  stats.connections++;
  sockets.add(sock);
  sock.on("close", () => sockets.delete(sock));
  sock.setNoDelay(true);
  httpServer.emit("connection", sock);
}

function listenAll() {
  const ports = [];
  if (opts.onePort) ports.push(opts.basePort);
  else for (let k = 0; k < opts.count; k++) ports.push(opts.basePort + opts.first + k);
  let pending = ports.length;
  return new Promise((resolve, reject) => {
    for (const port of ports) {
      const srv = net.createServer({ noDelay: true }, onConnection);
      srv.on("error", (err) => reject(new Error(`port ${port}: ${err.message}`)));
      srv.listen({ port, host: opts.host, backlog: 511 }, () => {
        pending--;
        if (pending === 0) resolve();
      });
      listeners.push(srv);
    }
  });
}

function statsLine() {
  const cpu = process.cpuUsage();
  const ru = process.resourceUsage();
  return "fleetserver stats " + JSON.stringify({
    pid: process.pid, cpu_user_us: cpu.user, cpu_system_us: cpu.system,
    cpu_us: cpu.user + cpu.system, rss_kib: Math.round(process.memoryUsage.rss() / 1024),
    max_rss_kib: ru.maxRSS, sessions_live: sessions.size, streams_open: 0, open_connections: sockets.size,
    ...stats }) + "\n";
}

process.on("SIGUSR2", () => process.stdout.write(statsLine()));
function quit() {
  process.stdout.write(statsLine());
  for (const s of sockets) s.destroy();
  for (const l of listeners) l.close();
  process.exit(0);
}
process.on("SIGTERM", quit);
process.on("SIGINT", quit);
// The driver's pipe closing means the driver is gone: do not outlive it.
process.stdout.on("error", () => process.exit(0));

listenAll().then(() => {
  process.stdout.write("fleetserver ready " + JSON.stringify({ pid: process.pid,
    kind: "json", base_port: opts.basePort, first: opts.first, count: opts.count,
    one_port: opts.onePort, node: process.version }) + "\n");
}, (err) => {
  process.stderr.write(`fleetserver: ${err.message}\n`);
  process.exit(1);
});
