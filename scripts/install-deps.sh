#!/usr/bin/env bash
# Install what mcptop needs to build and test, and nothing when it is all there.
#
#   scripts/install-deps.sh
#
# 1. Debian packages (apt-get; `apt-get update` only when something is missing).
#    Runs as root (CI); as another user it uses sudo when it can, and otherwise
#    prints the command to run.
# 2. tests/node_modules from tests/package-lock.json (`npm ci`), skipped when
#    node_modules already matches the lock.
#
# Quiet when there is nothing to do; a failing step prints its full output.
set -euo pipefail

export DEBIAN_FRONTEND=noninteractive

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TESTS="$ROOT/tests"

APT_PACKAGES=(
  build-essential cmake pkg-config
  libcurl4-openssl-dev libcjson-dev libev-dev libncurses-dev libcmocka-dev
  libssl-dev libyaml-dev libtomlplusplus-dev
  libmicrohttpd-dev zlib1g-dev prometheus
  nodejs npm python3 tmux nginx-light openssl procps
  dpkg-dev groff-base man-db zsh fish
  clang libclang-rt-14-dev
)
NODE_MIN_MAJOR=20  # tests/package-lock.json: @hono/node-server (via the SDK) needs >= 20

say()  { printf 'install-deps: %s\n' "$*"; }
die()  { printf 'install-deps: error: %s\n' "$*" >&2; exit 1; }

# Run a command quietly; on failure show everything it printed, then fail.
quiet() {
  local log rc=0
  log="$(mktemp "${TMPDIR:-/tmp}/install-deps.XXXXXX")"
  "$@" >"$log" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then
    printf 'install-deps: command failed (exit %d): %s\n' "$rc" "$*" >&2
    cat "$log" >&2
    rm -f "$log"
    return "$rc"
  fi
  rm -f "$log"
}

pkg_installed() {
  [ "$(dpkg-query -W -f='${db:Status-Status}' "$1" 2>/dev/null || true)" = "installed" ]
}

node_major() {
  node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0
}

# ---------------------------------------------------------------- apt packages
missing=()
for p in "${APT_PACKAGES[@]}"; do
  case "$p" in
    nodejs|npm)
      # A Node.js that is already here (e.g. NodeSource's nodejs, which
      # bundles npm and conflicts with Debian's npm package) is kept as long
      # as it is new enough; Debian's packages are installed only when absent.
      if command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 \
         && [ "$(node_major)" -ge "$NODE_MIN_MAJOR" ]; then
        continue
      fi
      pkg_installed "$p" || missing+=("$p")
      ;;
    *)
      pkg_installed "$p" || missing+=("$p")
      ;;
  esac
done

if [ "${#missing[@]}" -gt 0 ]; then
  SUDO=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && { sudo -n true 2>/dev/null || [ -t 0 ]; }; then
      SUDO=(sudo env DEBIAN_FRONTEND=noninteractive)
      say "not root: using sudo to install ${missing[*]}"
    else
      die "missing Debian packages: ${missing[*]}
  Run this script as root, or install them first:
    sudo apt-get update && sudo apt-get install -y ${missing[*]}"
    fi
  fi
  APT_OPTS=(-y -q -o Dpkg::Use-Pty=0 -o DPkg::Lock::Timeout=300)
  say "installing Debian packages: ${missing[*]}"
  quiet "${SUDO[@]}" apt-get "${APT_OPTS[@]}" update
  quiet "${SUDO[@]}" apt-get "${APT_OPTS[@]}" install --no-install-recommends "${missing[@]}"
fi

command -v node >/dev/null 2>&1 || die "node is not on PATH after installing nodejs"
command -v npm  >/dev/null 2>&1 || die "npm is not on PATH after installing npm"
[ "$(node_major)" -ge "$NODE_MIN_MAJOR" ] \
  || die "Node.js $(node --version) is too old: need >= $NODE_MIN_MAJOR"

# ---------------------------------------------------------------- npm packages
[ -f "$TESTS/package-lock.json" ] || die "$TESTS/package-lock.json is missing"

# node_modules is up to date when the stamp written after the last successful
# `npm ci` names this lock file (by hash) and this Node.js major, and the
# packages the tests run are present.
stamp_file="$TESTS/node_modules/.mcptop-deps-stamp"
want_stamp="lock=$(sha256sum "$TESTS/package-lock.json" | cut -d' ' -f1) node=$(node_major)"
up_to_date=0
if [ -f "$stamp_file" ] && [ "$(cat "$stamp_file")" = "$want_stamp" ] \
   && [ -f "$TESTS/node_modules/@modelcontextprotocol/server-everything/dist/index.js" ] \
   && [ -f "$TESTS/node_modules/@modelcontextprotocol/server-memory/package.json" ] \
   && [ -f "$TESTS/node_modules/@modelcontextprotocol/sdk/package.json" ] \
   && [ -f "$TESTS/node_modules/supergateway/package.json" ] \
   && [ -f "$TESTS/node_modules/mcp-framework/package.json" ]; then
  up_to_date=1
fi

if [ "$up_to_date" -eq 0 ]; then
  say "npm ci in tests/ (from package-lock.json)"
  (cd "$TESTS" && quiet npm ci --no-audit --no-fund --loglevel=error)
  printf '%s\n' "$want_stamp" >"$stamp_file"
fi

say "dependencies are in place"
