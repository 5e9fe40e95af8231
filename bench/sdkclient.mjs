#!/usr/bin/env node
// mcptop bench: the `mcptop check --pings R --stats` workload done with the
// official TypeScript SDK (@modelcontextprotocol/sdk, resolved from
// tests/node_modules next to this file): Client +
// StreamableHTTPClientTransport.
//
//   dial     open N sessions, at most --concurrency (50) in flight:
//            client.connect(transport) (initialize + notifications/initialized;
//            the SDK also opens its optional GET stream, which the bench
//            fleet answers 405) then client.listTools()
//   pings    R rounds; in each round every session pings at once and the
//            round ends when every ping settled
//   endings  transport.terminateSession() (DELETE) on every session at once
//
// Prints one JSON object on stdout with the same "stats" shape as
// `mcptop check --json --stats`: {"dial","pings","endings"} each
// {"cpu_us","wall_ms","max_rss_kib"} (process.cpuUsage covers every thread
// of the process; maxRSS is the process's peak), "ping_round_ms", and the
// fleet summary of ping round trips.  With node --expose-gc, the RSS after a
// full GC once every session is open is reported apart as
// "rss_after_dial_gc_kib" (that GC is outside every phase).
//
// usage: node sdkclient.mjs --base-port 20000 --count N [--pings 5]
//        [--concurrency 50] [--path /mcp] [--one-port]
//   --one-port   server i at http://127.0.0.1:BASE/mcp/i (as the fleets'
//                --one-port), else at http://127.0.0.1:BASE+i/mcp
import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";

// The ESM build, as the tests' own `import` would load it.
const SDK_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "..",
  "tests", "node_modules", "@modelcontextprotocol", "sdk");
const sdkFile = (rel) => pathToFileURL(path.join(SDK_DIR, rel)).href;
const { Client } = await import(sdkFile("dist/esm/client/index.js"));
const { StreamableHTTPClientTransport } = await import(
  sdkFile("dist/esm/client/streamableHttp.js"));
const sdkVersion = JSON.parse(fs.readFileSync(`${SDK_DIR}/package.json`, "utf8")).version;

const opts = { basePort: 20000, count: 0, pings: 5, concurrency: 50, path: "/mcp",
  onePort: false };
{
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i];
    if (a === "--base-port") opts.basePort = Number(v());
    else if (a === "--count") opts.count = Number(v());
    else if (a === "--pings") opts.pings = Number(v());
    else if (a === "--concurrency") opts.concurrency = Number(v());
    else if (a === "--path") opts.path = v();
    else if (a === "--one-port") opts.onePort = true;
    else {
      process.stderr.write(`sdkclient: unexpected argument ${a}\n`);
      process.exit(2);
    }
  }
  if (!(opts.count >= 1)) {
    process.stderr.write("usage: node sdkclient.mjs --base-port P --count N [--pings R] [--one-port]\n");
    process.exit(2);
  }
}

let mark = { cpu: process.cpuUsage(), t: performance.now() };
function phase() {
  const cpu = process.cpuUsage();
  const t = performance.now();
  const p = {
    cpu_us: (cpu.user - mark.cpu.user) + (cpu.system - mark.cpu.system),
    wall_ms: Math.round((t - mark.t) * 10) / 10,
    max_rss_kib: process.resourceUsage().maxRSS,
  };
  mark = { cpu, t };
  return p;
}
function remark() {
  mark = { cpu: process.cpuUsage(), t: performance.now() };
}

const errors = { dial: 0, ping: 0, ending: 0 };
const firstError = {};
function noteError(kind, err) {
  errors[kind]++;
  if (!(kind in firstError)) firstError[kind] = String(err && err.message || err);
}

// ---------------------------------------------------------------- dial
const sessions = new Array(opts.count).fill(null);
let tools = 0;

async function dialOne(i) {
  const url = new URL(opts.onePort ? `http://127.0.0.1:${opts.basePort}${opts.path}/${i}` :
    `http://127.0.0.1:${opts.basePort + i}${opts.path}`);
  const transport = new StreamableHTTPClientTransport(url);
  const client = new Client({ name: "mcptop-bench-sdk", version: "1.0.0" }, { capabilities: {} });
  client.onerror = () => {};
  try {
    await client.connect(transport);
    const r = await client.listTools();
    tools += r.tools.length;
    sessions[i] = { client, transport };
  } catch (err) {
    noteError("dial", err);
    try { await transport.close(); } catch { /* ignore */ }
  }
}

remark();
{
  let next = 0;
  const worker = async () => {
    while (next < opts.count) {
      const i = next++;
      await dialOne(i);
    }
  };
  const workers = [];
  for (let w = 0; w < Math.min(opts.concurrency, opts.count); w++) workers.push(worker());
  await Promise.all(workers);
}
const dial = phase();
dial.rss_now_kib = Math.round(process.memoryUsage.rss() / 1024);

let rssAfterGc = null;
if (typeof globalThis.gc === "function") {
  globalThis.gc();
  rssAfterGc = Math.round(process.memoryUsage.rss() / 1024);
}

// ---------------------------------------------------------------- pings
const open = sessions.filter((s) => s !== null);
const rtts = [];
const roundMs = [];
remark();
for (let r = 0; r < opts.pings; r++) {
  const t0 = performance.now();
  await Promise.all(open.map(async (s) => {
    const t = performance.now();
    try {
      await s.client.ping();
      rtts.push(performance.now() - t);
    } catch (err) {
      noteError("ping", err);
    }
  }));
  roundMs.push(Math.round((performance.now() - t0) * 10) / 10);
}
const pings = phase();

// ---------------------------------------------------------------- endings
let ended = 0;
await Promise.all(open.map(async (s) => {
  try {
    await s.transport.terminateSession();
    ended++;
  } catch (err) {
    noteError("ending", err);
  }
}));
const endings = phase();

// Not measured: let the transports go.
await Promise.all(open.map((s) => s.client.close().catch(() => {})));

function pct(sorted, q) {
  if (sorted.length === 0) return null;
  const k = Math.ceil(q * sorted.length);
  return sorted[Math.max(0, k - 1)];
}
rtts.sort((a, b) => a - b);
const med = rtts.length === 0 ? null : (rtts.length % 2 ? rtts[(rtts.length - 1) / 2] :
  (rtts[rtts.length / 2 - 1] + rtts[rtts.length / 2]) / 2);
const r1 = (v) => (v === null ? null : Math.round(v * 10) / 10);

process.stdout.write(JSON.stringify({
  client: "sdk",
  sdk_version: sdkVersion,
  node_version: process.version,
  summary: {
    sessions_open: open.length, tools, ended,
    pings: { count: rtts.length, asked: opts.pings * opts.count,
      min_ms: r1(rtts[0] ?? null), median_ms: r1(med), p99_ms: r1(pct(rtts, 0.99)) },
  },
  errors, first_error: firstError,
  stats: {
    servers: opts.count, dial, pings, endings, ping_round_ms: roundMs,
    rss_after_dial_gc_kib: rssAfterGc,
  },
}) + "\n");
process.exit(0);
