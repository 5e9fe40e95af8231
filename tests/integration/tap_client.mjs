#!/usr/bin/env node
// The agent of test_tap.py: the official SDK client over stdio, started on
// a server command (server-everything directly, or mcptop tap in front of
// it). Every byte the client receives on the server's stdout is recorded.
//
// usage: node tap_client.mjs MODE OUT.json -- CMD [ARG]...
//   MODE script: tools/list, echo, a long-running tool with progress (2 s,
//                4 steps), then close; OUT gets {"raw": base64 of every
//                byte received, "messages": [...], "progress": [...]}
//   MODE long:   one long call (60 s, 60 steps); "STARTED <id>" on stdout
//                at its first progress; OUT gets {"error": {code, message,
//                data} | null, "result": ... | null, "after_started_ms"}
//   MODE many N: N echo calls one after the other; OUT gets {"calls": N,
//                "ms": total}
//   MODE sample [RELEASE]: the client declares sampling and calls
//                trigger-sampling-request; at the server's
//                sampling/createMessage "SAMPLING" on stdout, then the
//                answer waits until the file RELEASE (default OUT.json +
//                ".release") exists; OUT gets {"result": the tool's result
//                | null, "error": {code, message} | null, "sampling": the
//                request's params | null}
// Exit 0 when the mode's steps ran (an error answer to the long call is
// its expected end), 1 otherwise, 3 on the overall timeout (90 s).
import { existsSync, writeFileSync } from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { CallToolResultSchema, CreateMessageRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const argv = process.argv.slice(2);
const dash = argv.indexOf("--");
if (dash < 2) {
  process.stderr.write("usage: node tap_client.mjs MODE OUT.json [N | RELEASE] -- CMD [ARG]...\n");
  process.exit(1);
}
const mode = argv[0];
const outPath = argv[1];
const extra = dash > 2 ? argv[2] : undefined;
const count = Number(extra ?? 0);
const [command, ...args] = argv.slice(dash + 1);

const killer = setTimeout(() => {
  process.stderr.write("tap_client: timed out\n");
  process.exit(3);
}, 90000);

const client = new Client({ name: "mcptop-tests-tap", version: "0.0.0" },
  { capabilities: mode === "sample" ? { sampling: {} } : {} });
let sampling = null;
if (mode === "sample") {
  const release = extra ?? `${outPath}.release`;
  // The agent's answer to the server's own request, held until the test
  // releases it (the overall timeout bounds the wait).
  client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
    sampling = req.params;
    process.stdout.write("SAMPLING\n");
    while (!existsSync(release)) await new Promise((r) => setTimeout(r, 50));
    return {
      role: "assistant",
      content: { type: "text", text: "sampled by the test" },
      model: "test-model",
    };
  });
}
const transport = new StdioClientTransport({ command, args, stderr: "pipe" });
const raw = [];
const messages = [];
// Every byte of the server's stdout, from the spawn on (the handshake's
// too): a listener beside the SDK's own.
const start = transport.start.bind(transport);
transport.start = async () => {
  await start();
  transport._process.stdout.prependListener("data", (chunk) => raw.push(Buffer.from(chunk)));
};

try {
  await client.connect(transport);
  const inner = transport.onmessage;
  transport.onmessage = (m) => {
    messages.push(m);
    inner(m);
  };
  if (mode === "script") {
    const progress = [];
    const tools = await client.listTools();
    const echo = await client.callTool({ name: "echo", arguments: { message: "hello through the tap" } });
    const long = await client.callTool(
      { name: "trigger-long-running-operation", arguments: { duration: 2, steps: 4 } },
      CallToolResultSchema,
      { onprogress: (p) => progress.push(p) },
    );
    await client.close();
    writeFileSync(outPath, JSON.stringify({
      raw: Buffer.concat(raw).toString("base64"),
      messages,
      tools: tools.tools.length,
      echo,
      long,
      progress,
    }));
  } else if (mode === "long") {
    let started = 0;
    let out = { error: null, result: null, after_started_ms: null };
    try {
      out.result = await client.callTool(
        { name: "trigger-long-running-operation", arguments: { duration: 60, steps: 60 } },
        CallToolResultSchema,
        {
          timeout: 85000,
          onprogress: () => {
            if (!started) {
              started = Date.now();
              // The id the SDK gave this request: the last it sent.
              process.stdout.write(`STARTED\n`);
            }
          },
        },
      );
    } catch (e) {
      out.error = { code: e.code ?? null, message: String(e.message ?? e), data: e.data ?? null };
    }
    out.after_started_ms = started ? Date.now() - started : null;
    writeFileSync(outPath, JSON.stringify(out));
    try {
      await client.close();
    } catch {
      // the server may be gone already
    }
  } else if (mode === "many") {
    const t0 = Date.now();
    for (let i = 0; i < count; i++) {
      await client.callTool({ name: "echo", arguments: { message: `m${i}` } });
    }
    const ms = Date.now() - t0;
    await client.close();
    writeFileSync(outPath, JSON.stringify({ calls: count, ms }));
  } else if (mode === "sample") {
    const out = { result: null, error: null, sampling: null };
    try {
      out.result = await client.callTool(
        { name: "trigger-sampling-request", arguments: { prompt: "a tap test", maxTokens: 10 } },
        CallToolResultSchema,
        { timeout: 85000 },
      );
    } catch (e) {
      out.error = { code: e.code ?? null, message: String(e.message ?? e) };
    }
    out.sampling = sampling;
    writeFileSync(outPath, JSON.stringify(out));
    await client.close();
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  clearTimeout(killer);
  process.exit(0);
} catch (e) {
  process.stderr.write(`tap_client: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
}
