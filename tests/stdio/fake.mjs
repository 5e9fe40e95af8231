#!/usr/bin/env node
// A small stdio MCP server whose misbehaviour is chosen by --mode, for
// mcptop's stdio tests. It speaks just enough MCP (initialize, ping,
// tools/list, notifications) to look healthy until its fault starts.
//
// Modes: healthy, banner, hang-after-init, close-stdout, ignore-sigterm,
// ignore-stdin-eof, flood-stderr, big-line, exit-at-once, and for issues 12
// and 13:
//   exit-on-unknown  exits 0 at once on a request whose method it does not
//                    know (a server/discover probe), without answering
//   late-modern      a 2026-07-28-only server: server/discover answers a
//                    DiscoverResult, initialize gets -32022 naming only
//                    2026-07-28, tools/list (with _meta) answers 2 tools
//   fork-exit        forks a worker (a grandchild, same process group,
//                    stdio not inherited) and exits 0 at once
//   fork-stay        forks such a worker, then serves like healthy
//   worker           (the grandchild) idles; exits by itself after 60 s
//   no-ping          answers ping with -32601 (ping is optional in practice)
//   proxy            a stdio proxy in front of a remote server (mcp-remote,
//                    supergateway): while the file --fail-file names exists
//                    the remote is "dead" and every request after
//                    initialize gets -32001 "fetch failed"; it recovers when
//                    the file goes
//   tool-error       tools/call answers isError (a failing deep check)
//   crash-after-list serves initialize and tools/list, then exits 0
//                    --crash-ms (200) after the listing (a crash loop:
//                    issue 45, item 4)
//   die-idle         serves, then exits by itself (status 3) after
//                    --die-ms (an idle timer), saying why on stderr
//   cursor-loop      tools/list answers the same 8 tools and the same
//                    nextCursor on every page (a pagination loop)
//   init-first       refuses initialize (-32600 "Server already
//                    initialized") after any earlier request, as a stdio
//                    bridge does that connected upstream on the first
//                    request it forwarded (supergateway --streamableHttp
//                    given a server/discover probe); unknown methods get
//                    -32601
//   ask-client       after notifications/initialized, sends its client a
//                    request (--ask=METHOD, ping by default; id "srv-1")
//                    and holds every tools/list answer until the client
//                    answers it (a server that pings its client, as
//                    ruby-sdk#551 and csharp-sdk#1578 report); what came
//                    back is appended to --answers-log=PATH as a JSON line
// Options:
//   --fail-file=PATH     proxy: the remote is dead while PATH exists
//   --version=V          initialize answers protocolVersion V whatever was offered
//   --slow-ms=N          a slow start: stdin is read only N ms after start
//   --spawn-log=PATH     append this process's pid to PATH at start (counts spawns)
//   --worker-pids=PATH   fork-*: append the worker's pid to PATH
//   --worker-ignores-term  fork-*: the worker ignores SIGTERM
//   --worker-setsid      fork-*: the worker is a daemon in a session of its
//                        own (setsid: no group signal of mcptop's reaches it)
//   --tag=TEXT           ignored (a pgrep marker; handed on to the worker)
//   --string-id=METHOD   the answer to METHOD (initialize, ping) carries its
//                        id as a string ("3" for 3), as some gateways write it
import { argv, stdin, stdout, stderr, exit, execPath, pid } from 'node:process';
import { closeSync, appendFileSync, existsSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

function opt(name, dflt) {
  const a = argv.find((x) => x.startsWith(`--${name}=`));
  return a === undefined ? dflt : a.slice(name.length + 3);
}
const flag = (name) => argv.includes(`--${name}`);

const mode = opt('mode', 'healthy');
const fixedVersion = opt('version', null);
const slowMs = Number(opt('slow-ms', '0')) || 0;
const startedAt = Date.now();
let initialized = false;

if (opt('spawn-log', null)) appendFileSync(opt('spawn-log'), `${pid}\n`);

if (mode === 'worker') {
  // The grandchild: nothing to serve, only to be noticed when left behind.
  if (flag('ignore-term')) process.on('SIGTERM', () => {});
  setTimeout(() => exit(0), 60000);
  setInterval(() => {}, 1000);
}

if (mode === 'fork-exit' || mode === 'fork-stay') {
  const args = [fileURLToPath(import.meta.url), '--mode=worker', `--tag=${opt('tag', '')}`];
  if (flag('worker-ignores-term')) args.push('--ignore-term');
  // detached: false keeps the worker in this process's group; its stdio is
  // not the pipes, so only the group tells mcptop it exists.
  // --worker-setsid: a daemon's way out (detached: true calls setsid).
  const w = spawn(execPath, args, { stdio: 'ignore', detached: flag('worker-setsid') });
  if (opt('worker-pids', null)) appendFileSync(opt('worker-pids'), `${w.pid}\n`);
  w.unref();
  if (mode === 'fork-exit') exit(0);
}

const MODERN = '2026-07-28';
function modernAnswer(req) {
  const serverInfo = { 'io.modelcontextprotocol/serverInfo': { name: 'fake-late-modern', version: '1.0.0' } };
  if (req.method === 'server/discover') {
    return send({ jsonrpc: '2.0', id: req.id, result: { resultType: 'complete', supportedVersions: [MODERN],
      capabilities: { tools: {} }, ttlMs: 60000, cacheScope: 'private', _meta: serverInfo } });
  }
  if (req.method === 'initialize') {
    return send({ jsonrpc: '2.0', id: req.id, error: { code: -32022,
      message: `Unsupported protocol version: ${req.params?.protocolVersion}`,
      data: { supported: [MODERN], requested: req.params?.protocolVersion } } });
  }
  if (req.method === 'tools/list' && req.params?._meta) {
    return send({ jsonrpc: '2.0', id: req.id, result: { tools: [
      { name: 'echo', inputSchema: { type: 'object' } },
      { name: 'add', inputSchema: { type: 'object' } },
    ], resultType: 'complete', ttlMs: 60000, cacheScope: 'private', _meta: serverInfo } });
  }
  send({ jsonrpc: '2.0', id: req.id, error: { code: -32601, message: 'Method not found' } });
}

function send(msg) {
  stdout.write(JSON.stringify(msg) + '\n');
}

// ask-client: the request we sent our client, and the tools/list held.
let asked = false;
let clientAnswered = false;
const held = [];
function askClient() {
  if (asked) return;
  asked = true;
  const method = opt('ask', 'ping');
  send({ jsonrpc: '2.0', id: 'srv-1', method, params: method === 'ping' ? undefined : {} });
}
function onClientAnswer(msg) {
  if (opt('answers-log', null)) appendFileSync(opt('answers-log'), JSON.stringify(msg) + '\n');
  if (msg.id !== 'srv-1') return;
  clientAnswered = true;
  while (held.length > 0) answer(held.shift());
}

const KNOWN = new Set(['initialize', 'ping', 'tools/list']);

let requestsSeen = 0;

function answer(req) {
  const earlier = requestsSeen++;
  if (mode === 'late-modern') return modernAnswer(req);
  if (mode === 'init-first' && req.method === 'initialize' && earlier > 0) {
    return send({ jsonrpc: '2.0', id: req.id, error: { code: -32600,
      message: 'Invalid Request: Server already initialized' } });
  }
  if (mode === 'exit-on-unknown' && !KNOWN.has(req.method)) exit(0);
  if (req.method === 'initialize') {
    send({ jsonrpc: '2.0', id: req.id, result: {
      protocolVersion: fixedVersion ?? req.params?.protocolVersion ?? '2025-11-25',
      capabilities: { tools: {} },
      serverInfo: { name: 'fake-' + mode, version: '1.0.0' },
    } });
    initialized = true;
    return;
  }
  if (mode === 'hang-after-init') return;
  if (mode === 'ask-client' && req.method === 'tools/list' && !clientAnswered) {
    held.push(req);
    requestsSeen--;
    return;
  }
  if (mode === 'proxy' && opt('fail-file', null) && existsSync(opt('fail-file'))) {
    return send({ jsonrpc: '2.0', id: req.id, error: { code: -32001,
      message: 'fetch failed: connect ECONNREFUSED 127.0.0.1:9' } });
  }
  if (mode === 'no-ping' && req.method === 'ping') {
    return send({ jsonrpc: '2.0', id: req.id, error: { code: -32601, message: 'Method not found' } });
  }
  if (mode === 'cursor-loop' && req.method === 'tools/list') {
    return send({ jsonrpc: '2.0', id: req.id, result: {
      tools: Array.from({ length: 8 }, (_, i) => ({ name: `t${i}`, inputSchema: { type: 'object' } })),
      nextCursor: 'again' } });
  }
  if (mode === 'tool-error' && req.method === 'tools/call') {
    return send({ jsonrpc: '2.0', id: req.id, result: { isError: true,
      content: [{ type: 'text', text: 'the backend said no' }] } });
  }
  if (mode === 'close-stdout' && req.method === 'ping') {
    // stdout.end() alone leaves fd 1 open in Node (process.stdout is never
    // really closed), so close the descriptor itself once what was written
    // has been flushed: the reader then sees EOF while this process lives.
    stdout.write('', () => { try { closeSync(1); } catch { /* already closed */ } });
    stdout.end();
    return;
  }
  if (mode === 'big-line' && req.method === 'ping') {
    // One line of 20 MB, then a normal life afterwards.
    stdout.write('{"jsonrpc":"2.0","id":' + req.id + ',"result":{"pad":"' +
      'x'.repeat(20 * 1024 * 1024) + '"}}\n');
    return;
  }
  if (req.method === 'ping') return send({ jsonrpc: '2.0', id: req.id, result: {} });
  if (req.method === 'tools/list') {
    if (mode === 'crash-after-list')
      setTimeout(() => exit(0), Number(opt('crash-ms', '200')) || 200);
    return send({ jsonrpc: '2.0', id: req.id, result: { tools: [
      { name: 'echo', inputSchema: { type: 'object' } },
      { name: 'add', inputSchema: { type: 'object' } },
    ] } });
  }
  send({ jsonrpc: '2.0', id: req.id, error: { code: -32601, message: 'Method not found' } });
}

if (mode === 'exit-at-once') exit(3);
if (mode === 'die-idle') {
  setTimeout(() => { stderr.write('idle for too long: shutting down\n'); exit(3); },
    Number(opt('die-ms', '1500')) || 1500);
}
if (mode === 'banner') {
  stdout.write('fake server starting up\n');
  stdout.write('listening on stdio (this line is not JSON)\n');
}
if (mode === 'ignore-sigterm') process.on('SIGTERM', () => {});
if (mode === 'flood-stderr') {
  // 100 MB of stderr in 1 MB writes, then keep serving.
  const chunk = ('stderr flood line \u001b[31mred\u001b[0m ' + 'y'.repeat(60) + '\n').repeat(12000);
  let sent = 0;
  const pump = () => {
    while (sent < 100 * 1024 * 1024) {
      sent += chunk.length;
      if (!stderr.write(chunk)) { stderr.once('drain', pump); return; }
    }
  };
  pump();
}

let buf = '';
let ready = slowMs <= 0;
function drain() {
  if (!ready) return;
  let i;
  while ((i = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, i);
    buf = buf.slice(i + 1);
    if (!line.trim()) continue;
    let msg;
    try { msg = JSON.parse(line); } catch { continue; }
    if (mode === 'ask-client' && msg.method === 'notifications/initialized') askClient();
    if (mode === 'ask-client' && msg.id !== undefined && !msg.method) onClientAnswer(msg);
    if (msg.id !== undefined && msg.method) {
      answer(opt('string-id', null) === msg.method ? { ...msg, id: String(msg.id) } : msg);
    }
  }
}
if (!ready) {
  setTimeout(() => {
    ready = true;
    drain();
    if (stdinEnded) onStdinEnd();
  }, Math.max(0, slowMs - (Date.now() - startedAt)));
}
let stdinEnded = false;
if (mode !== 'worker') {
  stdin.setEncoding('utf8');
  stdin.on('data', (d) => {
    buf += d;
    drain();
  });
  stdin.on('end', () => {
    stdinEnded = true;
    if (ready) onStdinEnd();
  });
}
function onStdinEnd() {
  // The MCP shutdown sequence starts by closing stdin.
  if (mode === 'ignore-stdin-eof' || mode === 'ignore-sigterm' ||
      mode === 'close-stdout' || mode === 'hang-after-init') {
    setInterval(() => {}, 1000);
    return;
  }
  exit(0);
}
// Stay alive even if stdin closes early in the odd modes.
if (mode === 'close-stdout' || mode === 'hang-after-init') setInterval(() => {}, 1000);
