#!/usr/bin/env node
// A small FastMCP server (npm fastmcp, pinned in tests/package.json) for
// the zoo (integration/test_zoo.py): three tools, served the ways FastMCP's
// users run it.
//
// usage: node zoo/fastmcp.mjs stdio
//        node zoo/fastmcp.mjs http PORT [--stateless]
//
// http: FastMCP's httpStream transport on 127.0.0.1:PORT, endpoint /mcp
// (sessions, unless --stateless), with its SSE endpoint /sse beside it.
import { FastMCP } from "fastmcp";
import { z } from "zod";

const [mode, port, ...rest] = process.argv.slice(2);
if (mode !== "stdio" && !(mode === "http" && Number(port) > 0)) {
  process.stderr.write("usage: fastmcp.mjs stdio | http PORT [--stateless]\n");
  process.exit(2);
}

const server = new FastMCP({ name: "zoo-fastmcp", version: "1.0.0" });

server.addTool({
  name: "add",
  description: "Add two numbers",
  parameters: z.object({ a: z.number(), b: z.number() }),
  execute: async (args) => String(args.a + args.b),
});
server.addTool({
  name: "echo",
  description: "Say the text back",
  parameters: z.object({ text: z.string() }),
  execute: async (args) => args.text,
});
server.addTool({
  name: "now",
  description: "The server's clock, in ms since the epoch",
  parameters: z.object({}),
  execute: async () => String(Date.now()),
});

if (mode === "stdio") {
  await server.start({ transportType: "stdio" });
} else {
  await server.start({
    transportType: "httpStream",
    httpStream: { host: "127.0.0.1", port: Number(port), stateless: rest.includes("--stateless") },
  });
}
