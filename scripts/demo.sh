#!/usr/bin/env bash
# The README's first command: build mcptop and open the TUI on a real demo
# fleet on loopback, then stop everything it started when the TUI exits.
#
#   scripts/demo.sh            install deps, build into build/, run the demo
#   scripts/demo.sh --no-deps  skip the install step
#   scripts/demo.sh --print-config
#                              start the fleet, print the config path and wait
#                              (for watch/check by hand; Ctrl-C stops it)
#
# The fleet: server-everything over Streamable HTTP, server-everything and
# server-memory over stdio, and fault-lab endpoints (a refused port, a 502
# gateway page, a server answering JSON-RPC errors, a hanging server, a
# flapping one that goes down and up every 20 s, one that needs auth, one that
# changes its tools), plus an invalid declaration and a missing command.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

deps=1
print_only=0
for arg in "$@"; do
  case "$arg" in
    --no-deps) deps=0 ;;
    --print-config) print_only=1 ;;
    -h|--help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "demo.sh: unknown argument: $arg (try --help)" >&2; exit 2 ;;
  esac
done

if [ "$deps" -eq 1 ]; then
  scripts/install-deps.sh
fi
# The build says how far it is (a first build takes a minute or so): one
# line redrawn on a terminal, a line per tenth otherwise; the whole output
# is kept in build/demo-build.log and shown when the build fails.
demo_progress() {
  local line pct last=-10 tty=0
  [ -t 1 ] && tty=1
  while IFS= read -r line; do
    printf '%s\n' "$line" >>build/demo-build.log
    [[ $line =~ ^\[\ *([0-9]+)%\] ]] || continue
    pct=${BASH_REMATCH[1]}
    if [ "$tty" -eq 1 ]; then
      printf '\r    %3d%% %-60.60s' "$pct" "${line#*] }"
    elif [ $((pct / 10)) -ne $((last / 10)) ]; then
      printf '    %3d%%\n' "$pct"
    fi
    last=$pct
  done
  [ "$tty" -eq 1 ] && printf '\r    done%-64s\n' ""
  return 0
}

echo "==> configuring build/ (cmake)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo --log-level=WARNING >/dev/null
echo "==> building mcptop into build/ (a minute or so the first time)"
: >build/demo-build.log
if ! cmake --build build --parallel "$(nproc 2>/dev/null || echo 2)" \
    --target mcptop 2>&1 | demo_progress; then
  echo "demo.sh: the build failed; its last lines (build/demo-build.log):" >&2
  tail -n 30 build/demo-build.log >&2
  exit 1
fi

work=$(mktemp -d /tmp/mcptop-demo.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]:-}"; do
    [ -n "$p" ] && kill -TERM -- "-$p" 2>/dev/null || true
  done
  sleep 0.3
  for p in "${pids[@]:-}"; do
    [ -n "$p" ] && kill -KILL -- "-$p" 2>/dev/null || true
  done
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

wait_port() {
  local port=$1 i
  for i in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then return 0; fi
    sleep 0.1
  done
  echo "demo.sh: nothing listens on 127.0.0.1:$port after 10 s" >&2
  return 1
}

nm="$ROOT/tests/node_modules"
everything="$nm/@modelcontextprotocol/server-everything/dist/index.js"
memory="$nm/@modelcontextprotocol/server-memory/dist/index.js"
[ -f "$everything" ] || { echo "demo.sh: $everything missing: run scripts/install-deps.sh" >&2; exit 1; }

http_port=$(free_port)
lab_port=$(free_port)
refused_port=$(free_port)

# Each in its own process group (setsid), so cleanup reaches its children.
PORT=$http_port setsid node "$everything" streamableHttp >"$work/everything.log" 2>&1 &
pids+=($!)
setsid node "$ROOT/tests/faultlab/server.mjs" --port "$lab_port" >"$work/faultlab.log" 2>&1 &
pids+=($!)
wait_port "$http_port"
wait_port "$lab_port"

lab="http://127.0.0.1:$lab_port"
cat >"$work/demo.json" <<JSON
{
  "mcptop": { "ping_interval_s": 5, "timeout_ms": 4000, "open_deadline_ms": 6000 },
  "mcpServers": {
    "everything-http":  { "url": "http://127.0.0.1:$http_port/mcp", "tags": ["reference"] },
    "everything-stdio": { "command": "node", "args": ["$everything", "stdio"], "tags": ["reference"] },
    "memory-stdio":     { "command": "node", "args": ["$memory"], "tags": ["reference"] },
    "refused-port":     { "url": "http://127.0.0.1:$refused_port/mcp", "tags": ["fault"] },
    "gateway-502":      { "url": "$lab/html502/dial", "tags": ["fault"] },
    "rpc-errors":       { "url": "$lab/rpcerror/ping", "tags": ["fault"] },
    "hanging":          { "url": "$lab/hang/ping", "tags": ["fault"] },
    "flapping":         { "url": "$lab/flap?up_ms=20000&down_ms=20000", "tags": ["fault"] },
    "needs-auth":       { "url": "$lab/auth401/dial", "tags": ["fault"] },
    "tools-change":     { "url": "$lab/listchanged?after_ms=8000", "tags": ["fault"] },
    "not-a-url":        { "url": "http://bad host/mcp", "tags": ["fault"] },
    "missing-command":  { "command": "mcp-server-that-does-not-exist", "tags": ["fault"] }
  }
}
JSON

if [ "$print_only" -eq 1 ]; then
  echo "demo fleet config: $work/demo.json (Ctrl-C stops the fleet)"
  while :; do sleep 3600; done
fi
build/mcptop -c "$work/demo.json"
