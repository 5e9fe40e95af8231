#!/usr/bin/env node
// mcptop bench: N MCP servers built the way the official TypeScript SDK's
// own examples build them, in ONE Node process: @modelcontextprotocol/sdk
// (resolved from tests/node_modules next to this file) McpServer +
// StreamableHTTPServerTransport behind the SDK's createMcpExpressApp()
// (Express, express.json(), localhost Host checks), stateful sessions (one
// transport and one McpServer per session, a random UUID as session id),
// no event store. So, as users run it:
//   POST answers are text/event-stream (the transport's default; the
//     stream ends once the request's answer is written);
//   initialize offers tools.listChanged (McpServer with registered tools),
//     so a client that honours it opens the GET stream, which stays open
//     and gets the SDK's keep-alive comment every 15 s;
//   notifications 202; DELETE ends the session (200);
//   a request without a session id that is not initialize: 400; an unknown
//     session id: 404;
//   Node's own HTTP defaults (keep-alive timeout 5 s: an idle kept-alive
//     connection is closed after 5 s) unless --keep-alive-timeout is given.
// Three tools per server (echo, add, time), as bench/fleetserver.mjs.
//
// Servers:
//   distinct ports (default)  server i at http://127.0.0.1:BASE+i/mcp
//   --one-port                server i at http://127.0.0.1:BASE/mcp/i
//
// usage: node sdkfleet.mjs --base-port 20000 --count N [--first K]
//          [--one-port] [--keep-alive-timeout MS]
//   --first K   this process holds servers K .. K+N-1 (sharding)
// Prints one line when every port listens:
//   fleetserver ready {"kind":"sdk","pid":..,...}
// SIGUSR2 prints a stats line (this process's CPU, RSS, counters):
//   fleetserver stats {"cpu_us":..,"connections":..,"streams_open":..,...}
// SIGTERM / SIGINT: prints the stats line and exits 0.
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { randomUUID } from "node:crypto";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const modules = path.join(here, "..", "tests", "node_modules");

// The ESM entry of a package in tests/node_modules (its "exports" "."
// import condition, else "module", else "main").
function esmEntry(pkg) {
  const dir = path.join(modules, pkg);
  const meta = JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8"));
  let e = meta.exports && (meta.exports["."] ?? meta.exports);
  if (e && typeof e === "object") e = e.import ?? e.default;
  if (e && typeof e === "object") e = e.default;
  return pathToFileURL(path.join(dir, typeof e === "string" ? e : meta.module || meta.main)).href;
}
const sdkDir = path.join(modules, "@modelcontextprotocol", "sdk");
if (!fs.existsSync(sdkDir)) {
  process.stderr.write(`sdkfleet: no ${sdkDir} (cd tests && npm ci)\n`);
  process.exit(2);
}
const sdk = (rel) => pathToFileURL(path.join(sdkDir, "dist", "esm", rel)).href;
const { McpServer } = await import(sdk("server/mcp.js"));
const { StreamableHTTPServerTransport } = await import(sdk("server/streamableHttp.js"));
const { createMcpExpressApp } = await import(sdk("server/express.js"));
const { isInitializeRequest } = await import(sdk("types.js"));
const { z } = await import(esmEntry("zod"));
const sdkVersion = JSON.parse(fs.readFileSync(path.join(sdkDir, "package.json"), "utf8")).version;

const opts = { basePort: 0, count: 0, first: 0, host: "127.0.0.1", onePort: false,
  keepAliveTimeout: null };
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
    else if (a === "--keep-alive-timeout") opts.keepAliveTimeout = Number(v());
    else die(`unexpected argument ${a}`);
  }
  if (!Number.isInteger(opts.count) || opts.count < 1) die("--count N is required");
  if (!Number.isInteger(opts.basePort) || opts.basePort < 1024 ||
      opts.basePort + (opts.onePort ? 0 : opts.first + opts.count) > 65535)
    die("bad --base-port");
  if (opts.onePort && opts.first !== 0) die("--one-port holds every server: no --first");
}

function die(msg) {
  process.stderr.write(`sdkfleet: ${msg}\n` +
    "usage: node sdkfleet.mjs --base-port 20000 --count N [--first K] [--one-port]\n" +
    "         [--keep-alive-timeout MS]\n");
  process.exit(2);
}

// ---------------------------------------------------------------- state

const stats = { requests: 0, posts: 0, gets: 0, deletes: 0, initialize: 0,
  connections: 0, sessions_issued: 0, sessions_closed: 0, streams_opened: 0,
  not_found: 0, bad: 0, errors: 0 };
let streamsOpen = 0;
const servers = [];           // index - first -> { sessions: Map(sid -> transport) }
for (let k = 0; k < opts.count; k++) servers.push({ index: opts.first + k, sessions: new Map() });
let sessionsLive = 0;

// A fresh McpServer for a session, as the SDK's examples do per session.
function newMcpServer(index) {
  const s = new McpServer({ name: `sdkfleet-${index}`, version: "1.0.0" });
  s.registerTool("echo", { description: "Echo the given text back.",
    inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: "text", text }] }));
  s.registerTool("add", { description: "Add two numbers.",
    inputSchema: { a: z.number(), b: z.number() } },
    async ({ a, b }) => ({ content: [{ type: "text", text: String(a + b) }] }));
  s.registerTool("time", { description: "The server's current time." },
    async () => ({ content: [{ type: "text", text: new Date().toISOString() }] }));
  return s;
}

// The server a request is for, or null.
function serverOf(req) {
  let i;
  if (opts.onePort) i = Number(req.params.i);
  else i = req.socket.localPort - opts.basePort - opts.first;
  if (!Number.isInteger(i) || i < 0 || i >= servers.length) return null;
  return servers[i];
}

function rpcError(res, status, code, message) {
  res.status(status).json({ jsonrpc: "2.0", error: { code, message }, id: null });
}

async function onPost(req, res) {
  const srv = serverOf(req);
  if (srv === null) return rpcError(res, 404, -32001, "No such server");
  const sid = req.headers["mcp-session-id"];
  if (sid !== undefined) {
    const t = srv.sessions.get(sid);
    if (t === undefined) {
      stats.not_found++;
      return rpcError(res, 404, -32001, "Session not found");
    }
    await t.handleRequest(req, res, req.body);
    return;
  }
  if (!isInitializeRequest(req.body)) {
    stats.bad++;
    return rpcError(res, 400, -32000, "Bad Request: No valid session ID provided");
  }
  stats.initialize++;
  const t = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (id) => {
      srv.sessions.set(id, t);
      sessionsLive++;
      stats.sessions_issued++;
    },
  });
  t.onclose = () => {
    if (t.sessionId !== undefined && srv.sessions.delete(t.sessionId)) {
      sessionsLive--;
      stats.sessions_closed++;
    }
  };
  await newMcpServer(srv.index).connect(t);
  await t.handleRequest(req, res, req.body);
}

async function onSessionRequest(req, res) {
  const srv = serverOf(req);
  if (srv === null) return rpcError(res, 404, -32001, "No such server");
  const sid = req.headers["mcp-session-id"];
  if (sid === undefined) {
    stats.bad++;
    return rpcError(res, 400, -32000, "Bad Request: Mcp-Session-Id header is required");
  }
  const t = srv.sessions.get(sid);
  if (t === undefined) {
    stats.not_found++;
    return rpcError(res, 404, -32001, "Session not found");
  }
  if (req.method === "GET") {
    res.on("close", () => { streamsOpen--; });
    streamsOpen++;
    stats.streams_opened++;
  }
  await t.handleRequest(req, res);
}

// Express 5 passes a rejected promise to its error handler; count it.
const guard = (fn) => (req, res, next) => fn(req, res).catch((err) => {
  stats.errors++;
  next(err);
});

const app = createMcpExpressApp();
app.use((req, res, next) => {
  stats.requests++;
  if (req.method === "POST") stats.posts++;
  else if (req.method === "GET") stats.gets++;
  else if (req.method === "DELETE") stats.deletes++;
  next();
});
const route = opts.onePort ? "/mcp/:i" : "/mcp";
app.post(route, guard(onPost));
app.get(route, guard(onSessionRequest));
app.delete(route, guard(onSessionRequest));

// ---------------------------------------------------------------- listen

// One http.Server (Node's defaults, as app.listen() would make it); the
// listening sockets hand it their connections so that they can be counted.
const httpServer = http.createServer(app);
if (opts.keepAliveTimeout !== null) httpServer.keepAliveTimeout = opts.keepAliveTimeout;
const sockets = new Set();
const listeners = [];

function onConnection(sock) {
  stats.connections++;
  sockets.add(sock);
  sock.on("close", () => sockets.delete(sock));
  httpServer.emit("connection", sock);
}

function listenAll() {
  const ports = [];
  if (opts.onePort) ports.push(opts.basePort);
  else for (let k = 0; k < opts.count; k++) ports.push(opts.basePort + opts.first + k);
  let pending = ports.length;
  return new Promise((resolve, reject) => {
    for (const port of ports) {
      const l = net.createServer(onConnection);
      l.on("error", (err) => reject(new Error(`port ${port}: ${err.message}`)));
      l.listen({ port, host: opts.host, backlog: 511 }, () => {
        if (--pending === 0) resolve();
      });
      listeners.push(l);
    }
  });
}

function statsLine() {
  const cpu = process.cpuUsage();
  const ru = process.resourceUsage();
  return "fleetserver stats " + JSON.stringify({
    kind: "sdk", pid: process.pid, cpu_user_us: cpu.user, cpu_system_us: cpu.system,
    cpu_us: cpu.user + cpu.system, rss_kib: Math.round(process.memoryUsage.rss() / 1024),
    max_rss_kib: ru.maxRSS, sessions_live: sessionsLive, streams_open: streamsOpen,
    open_connections: sockets.size, ...stats }) + "\n";
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
  process.stdout.write("fleetserver ready " + JSON.stringify({ kind: "sdk", pid: process.pid,
    sdk: sdkVersion, node: process.version, base_port: opts.basePort, first: opts.first,
    count: opts.count, one_port: opts.onePort,
    keep_alive_timeout_ms: httpServer.keepAliveTimeout }) + "\n");
}, (err) => {
  process.stderr.write(`sdkfleet: ${err.message}\n`);
  process.exit(1);
});
