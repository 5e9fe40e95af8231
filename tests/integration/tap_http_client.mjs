#!/usr/bin/env node
// The agent of test_tap_http.py: the official SDK client over Streamable
// HTTP (StreamableHTTPClientTransport), pointed at a URL (server-everything
// directly, or mcptop tap --listen in front of it).
//
// usage: node tap_http_client.mjs MODE OUT.json URL
//   MODE script: tools/list, echo, a long-running tool with progress (2 s,
//                4 steps), then close; OUT gets {"tools", "echo", "long",
//                "progress": [{..., "at": ms}], "long_done_at": ms}
//   MODE long:   one long call (60 s, 60 steps); "STARTED" on stdout at
//                its first progress; OUT gets {"error": {code, message,
//                data} | null, "result", "after_started_ms"}
//   MODE ended:  initialize, then "READY" on stdout; waits for a line on
//                stdin, then one echo call; OUT gets {"error": {code,
//                message} | null, "result"}
//   MODE many N: N echo calls one after the other; OUT {"calls", "ms"}
// Exit 0 when the mode's steps ran, 1 otherwise, 3 on the overall timeout.
import { writeFileSync } from "node:fs";
import { createInterface } from "node:readline";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallToolResultSchema } from "@modelcontextprotocol/sdk/types.js";

const [mode, outPath, url, n] = process.argv.slice(2);
if (!url) {
  process.stderr.write("usage: node tap_http_client.mjs MODE OUT.json URL [N]\n");
  process.exit(1);
}
const killer = setTimeout(() => {
  process.stderr.write("tap_http_client: timed out\n");
  process.exit(3);
}, 90000);

const client = new Client({ name: "mcptop-tests-tap-http", version: "0.0.0" }, { capabilities: {} });
const transport = new StreamableHTTPClientTransport(new URL(url));
const errOf = (e) => ({ code: e.code ?? null, message: String(e.message ?? e), data: e.data ?? null });

try {
  await client.connect(transport);
  if (mode === "script") {
    const progress = [];
    const tools = await client.listTools();
    const echo = await client.callTool({ name: "echo", arguments: { message: "hello through the tap" } });
    const long = await client.callTool(
      { name: "trigger-long-running-operation", arguments: { duration: 2, steps: 4 } },
      CallToolResultSchema,
      { onprogress: (p) => progress.push({ ...p, at: Date.now() }) },
    );
    const longDoneAt = Date.now();
    await transport.terminateSession().catch(() => {});
    await client.close();
    writeFileSync(outPath, JSON.stringify({ tools: tools.tools, echo, long, progress, long_done_at: longDoneAt }));
  } else if (mode === "long") {
    let started = 0;
    const out = { error: null, result: null, after_started_ms: null };
    try {
      out.result = await client.callTool(
        { name: "trigger-long-running-operation", arguments: { duration: 60, steps: 60 } },
        CallToolResultSchema,
        {
          timeout: 85000,
          onprogress: () => {
            if (!started) {
              started = Date.now();
              process.stdout.write("STARTED\n");
            }
          },
        },
      );
    } catch (e) {
      out.error = errOf(e);
    }
    out.after_started_ms = started ? Date.now() - started : null;
    writeFileSync(outPath, JSON.stringify(out));
    await client.close().catch(() => {});
  } else if (mode === "ended") {
    process.stdout.write(`READY ${transport.sessionId ?? ""}\n`);
    const rl = createInterface({ input: process.stdin });
    await new Promise((resolve) => rl.once("line", resolve));
    const out = { error: null, result: null };
    try {
      out.result = await client.callTool({ name: "echo", arguments: { message: "after the end" } });
    } catch (e) {
      out.error = errOf(e);
    }
    writeFileSync(outPath, JSON.stringify(out));
    rl.close();
    await client.close().catch(() => {});
  } else if (mode === "many") {
    const t0 = Date.now();
    const lat = [];
    for (let i = 0; i < Number(n ?? 0); i++) {
      const t1 = process.hrtime.bigint();
      await client.callTool({ name: "echo", arguments: { message: `m${i}` } });
      lat.push(Number(process.hrtime.bigint() - t1) / 1e6);
    }
    const ms = Date.now() - t0;
    await transport.terminateSession().catch(() => {});
    await client.close();
    writeFileSync(outPath, JSON.stringify({ calls: Number(n), ms, lat }));
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  clearTimeout(killer);
  process.exit(0);
} catch (e) {
  process.stderr.write(`tap_http_client: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
}
