#!/usr/bin/env node
// Independent oracle for the integration tests: dial an MCP server over
// Streamable HTTP (or, with --sse, the 2024-11-05 HTTP+SSE transport; with
// --stdio, a command's stdin and stdout) with the official SDK client, list
// every tool (following cursors), end the session, and print one JSON
// object on stdout:
//   {"tools":N,"names":[...],"protocol_version":"...","server_name":"...","server_version":"..."}
//
// usage: node count_tools.mjs URL [--sse] [--capabilities JSON] [--timeout MS]
//        node count_tools.mjs [--capabilities JSON] [--timeout MS] --stdio CMD [ARG]...
//
// The tool count of server-everything depends on the client capabilities
// offered at initialize (roots, sampling, elicitation, tasks each unlock
// tools). The default here is {} - no client capabilities - which is what a
// monitor like mcptop offers. Exit 0 on success, 1 on any failure, 3 when the
// overall timeout fires.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

function usage(msg) {
  if (msg) process.stderr.write(`count_tools: ${msg}\n`);
  process.stderr.write("usage: node count_tools.mjs URL [--sse] [--capabilities JSON] [--timeout MS]\n" +
    "       node count_tools.mjs [--capabilities JSON] [--timeout MS] --stdio CMD [ARG]...\n");
  process.exit(1);
}

const argv = process.argv.slice(2);
let url = null;
let capabilities = {};
let timeoutMs = 15000;
let sse = false;
let command = null;
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  if (a === "--stdio") {
    command = argv.slice(i + 1);
    if (command.length === 0) usage("--stdio needs a command");
    break;
  } else if (a === "--sse") {
    sse = true;
  } else if (a === "--capabilities") {
    if (i + 1 >= argv.length) usage("--capabilities needs a JSON value");
    try {
      capabilities = JSON.parse(argv[++i]);
    } catch (e) {
      usage(`bad --capabilities JSON: ${e.message}`);
    }
  } else if (a === "--timeout") {
    if (i + 1 >= argv.length) usage("--timeout needs a number of ms");
    timeoutMs = Number(argv[++i]);
    if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) usage("bad --timeout");
  } else if (!url) {
    url = a;
  } else {
    usage(`unexpected argument ${a}`);
  }
}
if (!url && !command) usage("missing URL");
if (url && command) usage("a URL or --stdio, not both");

const killer = setTimeout(() => {
  process.stderr.write(`count_tools: timed out after ${timeoutMs} ms\n`);
  process.exit(3);
}, timeoutMs);

const client = new Client({ name: "mcptop-tests-count-tools", version: "0.0.0" }, { capabilities });
const transport = command ?
  new StdioClientTransport({ command: command[0], args: command.slice(1), stderr: "ignore" }) :
  sse ? new SSEClientTransport(new URL(url)) : new StreamableHTTPClientTransport(new URL(url));

try {
  await client.connect(transport);
  const names = [];
  let cursor = undefined;
  let pages = 0;
  do {
    const res = await client.listTools(cursor ? { cursor } : {});
    for (const t of res.tools) names.push(t.name);
    cursor = res.nextCursor;
    if (++pages > 1000) throw new Error("more than 1000 pages of tools");
  } while (cursor);
  const info = client.getServerVersion() || {};
  const out = {
    tools: names.length,
    names,
    protocol_version: transport.protocolVersion ?? null,
    server_name: info.name ?? null,
    server_version: info.version ?? null,
  };
  try {
    if (typeof transport.terminateSession === "function") await transport.terminateSession();
  } catch {
    // a server may refuse DELETE (405); the count is still good
  }
  await client.close();
  clearTimeout(killer);
  process.stdout.write(JSON.stringify(out) + "\n");
  process.exit(0);
} catch (e) {
  process.stderr.write(`count_tools: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
}
