#!/usr/bin/env node
// A small mcp-framework server (npm mcp-framework, pinned in
// tests/package.json) for the zoo (integration/test_zoo.py). The framework
// finds its tools by directory: each file in tools/ here is one tool (a
// class extending MCPTool, default-exported), as `mcp create` lays a
// project out.
//
// usage: node zoo/mcp-framework/server.mjs stdio
//        node zoo/mcp-framework/server.mjs http PORT
//
// http: the framework's own "http-stream" transport on 127.0.0.1:PORT,
// endpoint /mcp, with sessions, JSON answers ("batch" response mode).
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { MCPServer } from "mcp-framework";

const [mode, port] = process.argv.slice(2);
if (mode !== "stdio" && !(mode === "http" && Number(port) > 0)) {
  process.stderr.write("usage: server.mjs stdio | http PORT\n");
  process.exit(2);
}

const server = new MCPServer({
  name: "zoo-mcp-framework",
  version: "1.0.0",
  basePath: dirname(fileURLToPath(import.meta.url)),
  transport: mode === "stdio" ? { type: "stdio" } : {
    type: "http-stream",
    options: { host: "127.0.0.1", port: Number(port), endpoint: "/mcp" },
  },
});
await server.start();
