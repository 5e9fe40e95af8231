#!/usr/bin/env node
// A small stdio MCP server whose misbehaviour is chosen by --mode, for
// mcptop's stdio tests. It speaks just enough MCP (initialize, ping,
// tools/list, notifications) to look healthy until its fault starts.
//
// Modes: healthy, banner, hang-after-init, close-stdout, ignore-sigterm,
// ignore-stdin-eof, flood-stderr, big-line, exit-at-once.
import { argv, stdin, stdout, stderr, exit } from 'node:process';
import { closeSync } from 'node:fs';

const mode = (argv.find((a) => a.startsWith('--mode=')) || '--mode=healthy').slice(7);
let initialized = false;

function send(msg) {
  stdout.write(JSON.stringify(msg) + '\n');
}

function answer(req) {
  if (req.method === 'initialize') {
    send({ jsonrpc: '2.0', id: req.id, result: {
      protocolVersion: req.params?.protocolVersion ?? '2025-11-25',
      capabilities: { tools: {} },
      serverInfo: { name: 'fake-' + mode, version: '1.0.0' },
    } });
    initialized = true;
    return;
  }
  if (mode === 'hang-after-init') return;
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
    return send({ jsonrpc: '2.0', id: req.id, result: { tools: [
      { name: 'echo', inputSchema: { type: 'object' } },
      { name: 'add', inputSchema: { type: 'object' } },
    ] } });
  }
  send({ jsonrpc: '2.0', id: req.id, error: { code: -32601, message: 'Method not found' } });
}

if (mode === 'exit-at-once') exit(3);
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
stdin.setEncoding('utf8');
stdin.on('data', (d) => {
  buf += d;
  let i;
  while ((i = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, i);
    buf = buf.slice(i + 1);
    if (!line.trim()) continue;
    let msg;
    try { msg = JSON.parse(line); } catch { continue; }
    if (msg.id !== undefined && msg.method) answer(msg);
  }
});
stdin.on('end', () => {
  // The MCP shutdown sequence starts by closing stdin.
  if (mode === 'ignore-stdin-eof' || mode === 'ignore-sigterm' ||
      mode === 'close-stdout' || mode === 'hang-after-init') {
    setInterval(() => {}, 1000);
    return;
  }
  exit(0);
});
// Stay alive even if stdin closes early in the odd modes.
if (mode === 'close-stdout' || mode === 'hang-after-init') setInterval(() => {}, 1000);
