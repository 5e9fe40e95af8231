#!/usr/bin/env node
// mcptop era test server: a real MCP server built on the official TypeScript
// server package for protocol revision 2026-07-28 (@modelcontextprotocol/server,
// pinned in tests/package.json), in one of two eras:
//
//   --era modern   modern-only: serves 2026-07-28 only. HTTP: createMcpHandler
//                  with legacy: 'reject' (initialize -> 400 -32022 naming the
//                  supported versions; GET/DELETE -> 405). stdio: serveStdio
//                  with legacy: 'reject' (initialize -> a -32022 error line).
//   --era dual     dual-era: 2026-07-28 for requests carrying the per-request
//                  _meta envelope, and 2025 (initialize-based) for the rest.
//                  HTTP: createMcpHandler's default legacy: 'stateless' (each
//                  2025 request is served by a fresh instance; no
//                  Mcp-Session-Id is ever issued; GET/DELETE -> 405). stdio:
//                  serveStdio's default legacy: 'serve' (the first message
//                  pins the connection's era).
//
// Tools: tool-1 .. tool-N (--tools N, default 3), each echoing its name. The
// tool set can grow while the server runs; each added tool is named
// added-1, added-2, ... and a notifications/tools/list_changed goes to every
// open subscriptions/listen that asked for toolsListChanged (HTTP: via the
// handler's notify.toolsChanged(); stdio: the pinned instance's own
// registerTool(), which the package routes onto the active subscriptions):
//   --add-tool-after-ms MS  add one tool MS ms after the anchor
//   --add-tool-anchor A     listen (default): the first subscriptions/listen
//                           that asked for toolsListChanged; start: when ready
//   SIGUSR1                 add one tool now (either transport)
//   HTTP only: POST /_control/add-tool adds one tool now and answers
//              {"tools": N}; GET /_control/state answers the counters.
//
// Counters (GET /_control/state, and --state-file PATH rewritten after every
// message, for stdio; "%p" in PATH is replaced by the pid): tools, names, instances per era, listens, added,
// http (POST/GET/DELETE/other), methods (JSON-RPC method -> count; "(none)"
// for a body without one), modern_requests (requests carrying the _meta
// envelope) and missing_headers (HTTP: modern requests lacking
// MCP-Protocol-Version or Mcp-Method).
//
// Cache hints (2026-07-28 results only): tools/list and server/discover carry
// ttlMs --ttl-ms (default 60000) and cacheScope "private".
//
// usage: node tests/era/server.mjs --transport http|stdio [--port P]
//        [--host 127.0.0.1] [--era modern|dual] [--tools N]
//        [--add-tool-after-ms MS] [--add-tool-anchor listen|start]
//        [--ttl-ms MS] [--name NAME] [--state-file PATH] [--parent-pid PID]
//        [--tag TEXT] [--verbose]
// HTTP: endpoint http://HOST:PORT/mcp (PORT 0 picks a free port); prints
//   era-server ready {"url":"http://127.0.0.1:PORT/mcp","port":PORT,"era":...,"pid":N}
// on stdout when listening. stdio: the same line goes to stderr (stdout is the
// protocol); it exits when stdin reaches EOF. SIGTERM/SIGINT: exit 0.
// --tag is ignored (a marker for pgrep).
import fs from "node:fs";
import http from "node:http";
import { Readable } from "node:stream";
import { McpServer, createMcpHandler } from "@modelcontextprotocol/server";
import { serveStdio } from "@modelcontextprotocol/server/stdio";

function usage(msg) {
  if (msg) process.stderr.write(`era-server: ${msg}\n`);
  process.stderr.write(
    "usage: node server.mjs --transport http|stdio [--port P] [--era modern|dual] [--tools N]\n" +
      "       [--add-tool-after-ms MS] [--add-tool-anchor listen|start] [--ttl-ms MS]\n" +
      "       [--name NAME] [--host 127.0.0.1] [--state-file PATH] [--parent-pid PID] [--tag TEXT]\n");
  process.exit(2);
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);
const opts = { transport: null, port: 0, host: "127.0.0.1", era: "modern", tools: 3,
  addAfterMs: null, anchor: "listen", ttlMs: 60000, name: null, stateFile: null, parentPid: 0,
  verbose: false };
{
  const argv = process.argv.slice(2);
  const need = (i) => {
    if (i + 1 >= argv.length) usage(`${argv[i]} needs a value`);
    return argv[i + 1];
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--transport") opts.transport = need(i++);
    else if (a === "--port") opts.port = Number(need(i++));
    else if (a === "--host") opts.host = need(i++);
    else if (a === "--era") opts.era = need(i++);
    else if (a === "--tools") opts.tools = Number(need(i++));
    else if (a === "--add-tool-after-ms") opts.addAfterMs = Number(need(i++));
    else if (a === "--add-tool-anchor") opts.anchor = need(i++);
    else if (a === "--ttl-ms") opts.ttlMs = Number(need(i++));
    else if (a === "--name") opts.name = need(i++);
    else if (a === "--state-file") opts.stateFile = need(i++);
    else if (a === "--parent-pid") opts.parentPid = Number(need(i++));
    else if (a === "--tag") need(i++);
    else if (a === "--verbose" || a === "-v") opts.verbose = true;
    else usage(`unexpected argument ${a}`);
  }
  if (opts.transport !== "http" && opts.transport !== "stdio") usage("--transport http|stdio is required");
  if (opts.era !== "modern" && opts.era !== "dual") usage("--era must be modern or dual");
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) usage("bad --port");
  if (!LOOPBACK.has(opts.host)) usage(`--host must be a loopback address, not ${opts.host}`);
  if (!Number.isInteger(opts.tools) || opts.tools < 0 || opts.tools > 10000) usage("bad --tools");
  if (opts.addAfterMs !== null && !(Number.isFinite(opts.addAfterMs) && opts.addAfterMs >= 0)) usage("bad --add-tool-after-ms");
  if (opts.anchor !== "listen" && opts.anchor !== "start") usage("--add-tool-anchor must be listen or start");
  if (!Number.isInteger(opts.ttlMs) || opts.ttlMs < 0) usage("bad --ttl-ms");
}

const SERVER_NAME = opts.name ?? `mcptop-era-${opts.era}-${opts.transport}`;
const SERVER_VERSION = "1.0.0";

function log(msg) {
  if (opts.verbose) process.stderr.write(`era-server: ${msg}\n`);
}

// ---------------------------------------------------------------- the tool set

let added = 0;                 // tools added since start
const counters = { instances: { modern: 0, legacy: 0 }, listens: 0, added: 0,
  http: { POST: 0, GET: 0, DELETE: 0, other: 0 }, methods: {}, modern_requests: 0, missing_headers: 0 };

function stateJson() {
  return { tools: toolNames().length, names: toolNames(), era: opts.era, transport: opts.transport,
    pid: process.pid, ...counters };
}

// "%p" in --state-file stands for the pid (a client that spawns a stdio
// server more than once gets one file per process).
const statePath = opts.stateFile ? opts.stateFile.replaceAll("%p", String(process.pid)) : null;

function saveState() {
  if (!statePath) return;
  try {
    fs.writeFileSync(`${statePath}.tmp`, JSON.stringify(stateJson()));
    fs.renameSync(`${statePath}.tmp`, statePath);
  } catch (e) {
    log(`cannot write ${statePath}: ${e.message}`);
  }
}

// Count one inbound JSON-RPC message (HTTP headers when given).
function countMessage(msg, headers) {
  const one = (m) => {
    if (!m || typeof m !== "object") return;
    const method = typeof m.method === "string" ? m.method : "(none)";
    counters.methods[method] = (counters.methods[method] || 0) + 1;
    const meta = m.params && typeof m.params === "object" ? m.params._meta : undefined;
    const modern = !!(meta && typeof meta === "object" && "io.modelcontextprotocol/protocolVersion" in meta);
    if (modern && m.id !== undefined) {
      counters.modern_requests++;
      if (headers && (headers["mcp-protocol-version"] === undefined || headers["mcp-method"] === undefined)) {
        counters.missing_headers++;
      }
    }
    if (method === "subscriptions/listen") counters.listens++;
    if (wantsToolsListChanged(m) && opts.anchor === "listen") armAddTimer();
  };
  if (Array.isArray(msg)) msg.forEach(one);
  else one(msg);
  saveState();
}

function toolNames() {
  const names = [];
  for (let i = 1; i <= opts.tools; i++) names.push(`tool-${i}`);
  for (let i = 1; i <= added; i++) names.push(`added-${i}`);
  return names;
}

function registerEcho(server, name) {
  return server.registerTool(name, { description: `echoes its name (${name})` },
    async () => ({ content: [{ type: "text", text: name }] }));
}

// One factory for both eras (the package calls it per HTTP request, and per
// stdio connection plus once per server/discover probe).
const liveInstances = new Set(); // stdio: instances still connected
function factory(ctx) {
  counters.instances[ctx?.era === "legacy" ? "legacy" : "modern"]++;
  const server = new McpServer({ name: SERVER_NAME, version: SERVER_VERSION }, {
    capabilities: { tools: { listChanged: true } },
    cacheHints: {
      "tools/list": { ttlMs: opts.ttlMs, cacheScope: "private" },
      "server/discover": { ttlMs: opts.ttlMs, cacheScope: "private" },
    },
  });
  const names = toolNames();
  if (names.length === 0) registerEcho(server, "placeholder").remove(); // keeps tools/list served
  for (const n of names) registerEcho(server, n);
  if (opts.transport === "stdio") {
    liveInstances.add(server);
    const prev = server.server.onclose;
    server.server.onclose = () => {
      liveInstances.delete(server);
      prev?.();
    };
  }
  return server;
}

let notifyHttp = null; // set when the HTTP handler exists

function addTool(why) {
  added++;
  counters.added = added;
  const name = `added-${added}`;
  log(`adding tool ${name} (${why}); ${toolNames().length} tools now`);
  saveState();
  if (notifyHttp) notifyHttp.toolsChanged();
  for (const s of liveInstances) {
    if (s.isConnected()) {
      try {
        registerEcho(s, name); // sends notifications/tools/list_changed
      } catch (e) {
        log(`register on a live instance failed: ${e.message}`);
      }
    }
  }
  return toolNames().length;
}

let addTimerArmed = false;
function armAddTimer() {
  if (opts.addAfterMs === null || addTimerArmed) return;
  addTimerArmed = true;
  setTimeout(() => addTool(`--add-tool-after-ms ${opts.addAfterMs}`), opts.addAfterMs);
}

process.on("SIGUSR1", () => addTool("SIGUSR1"));

function wantsToolsListChanged(msg) {
  return msg && msg.method === "subscriptions/listen" &&
    msg.params?.notifications?.toolsListChanged === true;
}

// ---------------------------------------------------------------- lifetime

function exitSoon(code) {
  setTimeout(() => process.exit(code), 50).unref();
}
process.on("SIGTERM", () => process.exit(0));
process.on("SIGINT", () => process.exit(0));
if (opts.parentPid > 0) {
  setInterval(() => {
    try {
      process.kill(opts.parentPid, 0);
    } catch {
      process.exit(1);
    }
  }, 1000).unref();
}

// ---------------------------------------------------------------- stdio

function startStdio() {
  const handle = serveStdio(factory, {
    legacy: opts.era === "modern" ? "reject" : "serve",
    onerror: (e) => log(`onerror: ${e.message}`),
  });
  // Watch the inbound lines for a listen that asks for toolsListChanged (the
  // add-tool anchor). serveStdio reads stdin itself; this only peeks.
  let buf = "";
  process.stdin.on("data", (chunk) => {
    buf += chunk.toString("utf8");
    let nl;
    while ((nl = buf.indexOf("\n")) >= 0) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      try {
        countMessage(JSON.parse(line), null);
      } catch {
        /* not ours to judge */
      }
    }
  });
  process.stdin.on("end", () => {
    handle.close().finally(() => exitSoon(0));
  });
  if (opts.anchor === "start") armAddTimer();
  saveState();
  process.stderr.write(`era-server ready ${JSON.stringify({ transport: "stdio", era: opts.era,
    tools: opts.tools, pid: process.pid })}\n`);
}

// ---------------------------------------------------------------- HTTP

// node:http <-> web Request/Response (the package's handler is fetch-shaped;
// @modelcontextprotocol/node's toNodeHandler is not a dependency here).
function toWebRequest(req, body, signal) {
  const headers = new Headers();
  for (let i = 0; i < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i], req.rawHeaders[i + 1]);
  const url = `http://${req.headers.host ?? `${opts.host}`}${req.url}`;
  const init = { method: req.method, headers, signal };
  if (body !== null && req.method !== "GET" && req.method !== "HEAD") init.body = body;
  return new Request(url, init);
}

async function writeWebResponse(res, response) {
  const headers = {};
  response.headers.forEach((v, k) => {
    headers[k] = v;
  });
  res.writeHead(response.status, headers);
  if (typeof res.flushHeaders === "function") res.flushHeaders();
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  res.on("close", () => {
    reader.cancel().catch(() => {});
  });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) await new Promise((r) => res.once("drain", r));
    }
  } catch {
    /* the client went away */
  }
  res.end();
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (c) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("error", reject);
  });
}

function startHttp() {
  const handler = createMcpHandler(factory, {
    legacy: opts.era === "modern" ? "reject" : "stateless",
    onerror: (e) => log(`onerror: ${e.message}`),
  });
  notifyHttp = handler.notify;
  if (opts.anchor === "start") armAddTimer();

  const sockets = new Set();
  const server = http.createServer(async (req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    try {
      if (path === "/_control/add-tool" && req.method === "POST") {
        await readBody(req);
        const n = addTool("POST /_control/add-tool");
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ tools: n }));
        return;
      }
      if (path === "/_control/state" && req.method === "GET") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify(stateJson()));
        return;
      }
      if (path !== "/mcp") {
        res.writeHead(404, { "content-type": "text/plain" });
        res.end("not found\n");
        return;
      }
      const hm = req.method === "POST" || req.method === "GET" || req.method === "DELETE" ? req.method : "other";
      counters.http[hm]++;
      const body = req.method === "POST" ? await readBody(req) : null;
      if (body === null) saveState();
      else {
        try {
          countMessage(JSON.parse(body.toString("utf8")), req.headers);
        } catch {
          /* the handler answers it */
        }
      }
      const ac = new AbortController();
      res.on("close", () => {
        if (!res.writableFinished) ac.abort();
      });
      req.on("aborted", () => ac.abort());
      log(`${req.method} ${req.url} mcp-method=${req.headers["mcp-method"] ?? "-"}`);
      const response = await handler.fetch(toWebRequest(req, body, ac.signal));
      await writeWebResponse(res, response);
    } catch (e) {
      log(`request failed: ${e?.stack ?? e}`);
      if (!res.headersSent) {
        res.writeHead(500, { "content-type": "text/plain" });
        res.end("internal error\n");
      } else {
        res.destroy();
      }
    }
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  const shutdown = () => {
    handler.close().catch(() => {});
    for (const s of sockets) s.destroy();
    server.close(() => process.exit(0));
    exitSoon(0);
  };
  process.removeAllListeners("SIGTERM");
  process.removeAllListeners("SIGINT");
  process.on("SIGTERM", shutdown);
  process.on("SIGINT", shutdown);
  server.listen(opts.port, opts.host, () => {
    const port = server.address().port;
    saveState();
    const host = opts.host.includes(":") ? `[${opts.host}]` : opts.host;
    process.stdout.write(`era-server ready ${JSON.stringify({ url: `http://${host}:${port}/mcp`, port,
      era: opts.era, tools: opts.tools, pid: process.pid })}\n`);
  });
}

if (opts.transport === "stdio") startStdio();
else startHttp();
