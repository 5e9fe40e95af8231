"""mcptest: a small stdlib-only helper for mcptop's integration tests.

What it gives a test file:
  - free_port(), wait_port(), wait_port_closed(): loopback ports, bounded waits
  - Everything / everything_http(): server-everything in Streamable HTTP mode on
    127.0.0.1:PORT, endpoint /mcp, in its own process group; stop() / kill();
    everything_sse(): the same in `sse` mode (2024-11-05 HTTP+SSE, /sse)
  - run_mcptop(args, timeout): run the binary ($MCPTOP_BIN), bounded
  - Watch: a running `mcptop watch`, its JSON Lines read on a thread
  - write_config() / write_file(): temp files, removed at exit
  - count_tools(url): the independent tool count, via count_tools.mjs and the
    official SDK client (Streamable HTTP; sse=True, or command=[...] for stdio)
  - Tui: mcptop in tmux (keys in with send-keys, the screen out with
    capture-pane, bounded waits); table_row / table_cell / selected_name /
    header_counts read the table
  - TapReader: a reader of a tap's Unix socket, its JSON lines collected on
    a thread (wait_for, events)
  - ServeMetrics: a running `mcptop serve` on a loopback port, its /metrics
    and health samples read
  - Reporter: cases, checks, and the closing "N passed, N failed" line

Environment:
  MCPTOP_BIN        path of the mcptop binary (default: <repo>/build/mcptop)
  MCPTOP_TESTS_DIR  the tests/ directory (default: the parent of this file's dir)
  MCPTEST_VERBOSE   1 to echo every command run

Every wait is bounded. Every process started here runs in its own process
group, is killed at exit (atexit and SIGINT/SIGTERM/SIGHUP handlers), and, where
util-linux's setpriv exists, gets SIGKILL if this Python process dies (so even
a ctest timeout leaves nothing behind). Servers bind 127.0.0.1 only.
"""

import atexit
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import queue
import re
import traceback
from pathlib import Path

LOOPBACK = "127.0.0.1"

_HERE = Path(__file__).resolve().parent
TESTS_DIR = Path(os.environ.get("MCPTOP_TESTS_DIR") or _HERE.parent).resolve()
REPO_DIR = TESTS_DIR.parent
MCPTOP_BIN = os.environ.get("MCPTOP_BIN") or str(REPO_DIR / "build" / "mcptop")
NODE_MODULES = TESTS_DIR / "node_modules"
EVERYTHING_JS = NODE_MODULES / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
COUNT_TOOLS_MJS = TESTS_DIR / "integration" / "count_tools.mjs"
VERBOSE = os.environ.get("MCPTEST_VERBOSE") == "1"

_SETPRIV = shutil.which("setpriv")
_NODE = shutil.which("node")


class SetupError(RuntimeError):
    """The test environment is not usable (missing binary, server will not start)."""


def log(msg):
    print(msg, flush=True)


# --------------------------------------------------------------------------
# process bookkeeping and cleanup

_procs = set()  # live subprocess.Popen objects we started
_procs_lock = threading.Lock()
_tmpdir = None
_cleaned = False


def _register(p):
    with _procs_lock:
        _procs.add(p)


def _unregister(p):
    with _procs_lock:
        _procs.discard(p)


def _signal_group(p, sig):
    """Send sig to p's process group (p leads its own group); ignore if gone."""
    try:
        os.killpg(p.pid, sig)
    except (ProcessLookupError, PermissionError):
        try:
            p.send_signal(sig)
        except (ProcessLookupError, OSError):
            pass


def terminate(p, grace=5.0):
    """SIGTERM p's group, wait at most grace seconds, then SIGKILL. Returns rc."""
    if p.poll() is None:
        _signal_group(p, signal.SIGTERM)
        try:
            p.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
    # whatever is left in the group (grandchildren) goes too
    _signal_group(p, signal.SIGKILL)
    try:
        p.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass
    _unregister(p)
    return p.returncode


def cleanup_all():
    """Kill every process started here and remove the temp dir. Idempotent."""
    global _cleaned
    if _cleaned:
        return
    _cleaned = True
    with _procs_lock:
        procs = list(_procs)
    for p in procs:
        _signal_group(p, signal.SIGTERM)
    deadline = time.monotonic() + 3
    for p in procs:
        try:
            p.wait(timeout=max(0.05, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            pass
    for p in procs:
        _signal_group(p, signal.SIGKILL)
        try:
            p.wait(timeout=2)
        except subprocess.TimeoutExpired:
            pass
    try:
        _kill_tmux_servers()
    except Exception:
        pass
    if _tmpdir is not None:
        shutil.rmtree(_tmpdir, ignore_errors=True)


def _on_signal(signum, frame):
    try:
        sys.stderr.write("mcptest: got signal %d, cleaning up\n" % signum)
    except Exception:
        pass
    cleanup_all()
    os._exit(128 + signum)


atexit.register(cleanup_all)
if threading.current_thread() is threading.main_thread():
    for _sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(_sig, _on_signal)


def tmpdir():
    """This run's private temp directory (removed at exit)."""
    global _tmpdir
    if _tmpdir is None:
        _tmpdir = Path(tempfile.mkdtemp(prefix="mcptest-"))
    return _tmpdir


def spawn(argv, env=None, stdout=None, stderr=None, stdin=subprocess.DEVNULL, cwd=None):
    """Start argv in a new session/process group, tied to our life, registered for cleanup."""
    argv = [str(a) for a in argv]
    full = argv
    if _SETPRIV:
        # SIGKILL the child if this process dies without running its cleanup
        full = [_SETPRIV, "--pdeathsig", "KILL", "--"] + argv
    if VERBOSE:
        log("mcptest: spawn %s" % " ".join(argv))
    p = subprocess.Popen(full, env=env, stdout=stdout, stderr=stderr, stdin=stdin,
                         cwd=cwd, start_new_session=True)
    _register(p)
    return p


# --------------------------------------------------------------------------
# ports


def free_port():
    """A TCP port on 127.0.0.1 that was free a moment ago (bind to port 0)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def port_open(port, host=LOOPBACK):
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def wait_port(port, timeout=20.0, proc=None, host=LOOPBACK):
    """Wait until host:port accepts TCP connections. False on timeout or if proc exits."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if port_open(port, host):
            return True
        if proc is not None and proc.poll() is not None:
            return False
        time.sleep(0.1)
    return False


def wait_port_closed(port, timeout=10.0, host=LOOPBACK):
    """Wait until host:port refuses connections. False on timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not port_open(port, host):
            return True
        time.sleep(0.1)
    return False


# --------------------------------------------------------------------------
# server-everything

# Preloaded into node: (1) a listen() given a port but no host binds 127.0.0.1
# (server-everything calls app.listen(PORT), which would bind every interface);
# (2) a watchdog that exits when the parent that started it is gone.
_PRELOAD_JS = r"""
"use strict";
const net = require("node:net");
const HOST = process.env.MCPTEST_LISTEN_HOST || "127.0.0.1";
const origListen = net.Server.prototype.listen;
net.Server.prototype.listen = function listen(...args) {
  const a0 = args[0];
  if (typeof a0 === "number" || (typeof a0 === "string" && /^\d+$/.test(a0))) {
    if (args.length === 1 || typeof args[1] === "function") args.splice(1, 0, HOST);
  } else if (a0 && typeof a0 === "object" && !Array.isArray(a0) &&
             a0.port !== undefined && a0.host === undefined && a0.path === undefined) {
    args[0] = Object.assign({}, a0, { host: HOST });
  }
  return origListen.apply(this, args);
};
const parent = Number(process.env.MCPTEST_PARENT_PID || 0);
if (parent > 0) {
  setInterval(() => {
    try { process.kill(parent, 0); } catch (e) { process.exit(1); }
  }, 1000).unref();
}
"""


def _preload_path():
    p = tmpdir() / "mcptest-preload.cjs"
    if not p.exists():
        p.write_text(_PRELOAD_JS)
    return p


def require_node_modules():
    if not _NODE:
        raise SetupError("node is not on PATH: run scripts/install-deps.sh")
    if not EVERYTHING_JS.exists():
        raise SetupError("%s is missing: run scripts/install-deps.sh (npm ci in tests/)" % EVERYTHING_JS)


def everything_stdio_argv():
    """[command, args...] that runs server-everything over stdio (for a config's command/args)."""
    require_node_modules()
    return [_NODE, str(EVERYTHING_JS), "stdio"]


class Everything:
    """server-everything over Streamable HTTP on 127.0.0.1:port, endpoint /mcp;
    with mode="sse", the 2024-11-05 HTTP+SSE transport instead (GET /sse gives
    the stream, whose first event `endpoint` names /message?sessionId=...)."""

    def __init__(self, port=None, mode="streamableHttp"):
        if mode not in ("streamableHttp", "sse"):
            raise ValueError("mode must be streamableHttp or sse, not %r" % (mode,))
        self.mode = mode
        self.port = port or free_port()
        self.proc = None
        self.log_path = None
        self._starts = 0

    @property
    def url(self):
        return "http://%s:%d/%s" % (LOOPBACK, self.port, "sse" if self.mode == "sse" else "mcp")

    def output(self):
        """Everything the server printed (stdout and stderr, all starts)."""
        if self.log_path and self.log_path.exists():
            return self.log_path.read_text(errors="replace")
        return ""

    def start(self, timeout=20.0):
        require_node_modules()
        if self.proc is not None and self.proc.poll() is None:
            raise SetupError("server-everything already running on port %d" % self.port)
        self._starts += 1
        self.log_path = tmpdir() / ("everything-%d.log" % self.port)
        env = dict(os.environ)
        env["PORT"] = str(self.port)
        env["MCPTEST_PARENT_PID"] = str(os.getpid())
        env.pop("NODE_OPTIONS", None)
        with open(self.log_path, "ab") as out:
            out.write(b"--- start %d on port %d (%s) ---\n" % (self._starts, self.port, self.mode.encode()))
            out.flush()
            self.proc = spawn([_NODE, "--require", _preload_path(), EVERYTHING_JS, self.mode],
                              env=env, stdout=out, stderr=subprocess.STDOUT, cwd=str(TESTS_DIR))
        if not wait_port(self.port, timeout=timeout, proc=self.proc):
            rc = self.proc.poll()
            terminate(self.proc)
            raise SetupError("server-everything did not accept connections on %s:%d within %.0fs "
                             "(exit code %s); its output:\n%s"
                             % (LOOPBACK, self.port, timeout, rc, self.output()))
        return self

    def stop(self, grace=5.0):
        """SIGTERM the group, wait at most grace seconds, SIGKILL; wait until the port refuses."""
        if self.proc is not None:
            terminate(self.proc, grace=grace)
            self.proc = None
        wait_port_closed(self.port, timeout=10.0)

    def kill(self):
        """Abrupt death: SIGKILL, no chance to close anything."""
        if self.proc is not None:
            _signal_group(self.proc, signal.SIGKILL)
            terminate(self.proc, grace=0.1)
            self.proc = None
        wait_port_closed(self.port, timeout=10.0)

    def restart(self, timeout=20.0):
        self.stop()
        return self.start(timeout=timeout)

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def __enter__(self):
        if not self.running():
            self.start()
        return self

    def __exit__(self, *exc):
        self.stop()
        return False


def everything_http(port=None, timeout=20.0):
    """Start server-everything (Streamable HTTP) and return it; use as a context manager."""
    return Everything(port).start(timeout=timeout)


def everything_sse(port=None, timeout=20.0):
    """Start server-everything in `sse` mode (2024-11-05 HTTP+SSE, GET /sse) and return it."""
    return Everything(port, mode="sse").start(timeout=timeout)


def count_tools(url, capabilities=None, timeout=20.0, sse=False, command=None):
    """The oracle: {"tools","names","protocol_version","server_name","server_version"} from the SDK client.
    url over Streamable HTTP; sse=True: url is a 2024-11-05 HTTP+SSE endpoint; url None and
    command [argv]: a stdio server the SDK client starts (protocol_version is null for both)."""
    require_node_modules()
    argv = [_NODE, COUNT_TOOLS_MJS] + ([url] if url is not None else [])
    argv += ["--timeout", str(int(timeout * 1000))]
    if sse:
        argv.append("--sse")
    if capabilities is not None:
        argv += ["--capabilities", json.dumps(capabilities)]
    if command is not None:
        argv += ["--stdio"] + [str(a) for a in command]
    r = run(argv, timeout=timeout + 5, cwd=str(TESTS_DIR))
    if r.rc != 0:
        raise SetupError("count_tools.mjs failed (rc %s):\n%s\n%s" % (r.rc, r.stdout, r.stderr))
    return json.loads(r.stdout)


# --------------------------------------------------------------------------
# running mcptop


class Result:
    def __init__(self, argv, rc, stdout, stderr, timed_out, elapsed):
        self.argv = argv
        self.rc = rc  # None when it timed out; negative -N when killed by signal N
        self.stdout = stdout
        self.stderr = stderr
        self.timed_out = timed_out
        self.elapsed = elapsed
        self._json = None
        self.json_error = None

    def json(self):
        """stdout parsed as one JSON document, or None (json_error says why)."""
        if self._json is None and self.json_error is None:
            try:
                self._json = json.loads(self.stdout)
            except ValueError as e:
                self.json_error = "stdout is not JSON (%s)" % e
        return self._json

    def crashed(self):
        """A reason string if this run crashed or hung, else None."""
        if self.timed_out:
            return "timed out after %.1fs" % self.elapsed
        if self.rc is None or self.rc < 0 or self.rc >= 128:
            return "died: exit code %s" % self.rc
        for marker in ("Sanitizer", "runtime error:", "Segmentation fault", "core dumped"):
            if marker in self.stderr:
                return "stderr contains %r" % marker
        return None

    def describe(self):
        return ("$ %s\nexit code: %s%s (%.2fs)\n--- stdout ---\n%s\n--- stderr ---\n%s"
                % (" ".join(self.argv), self.rc, " (TIMED OUT)" if self.timed_out else "",
                   self.elapsed, _clip(self.stdout), _clip(self.stderr)))


def _clip(s, n=4000):
    return s if len(s) <= n else s[:n] + "\n... (%d more characters)" % (len(s) - n)


def run(argv, timeout=30.0, env=None, input=None, cwd=None):
    """Run argv to completion within timeout; on timeout kill its group. Returns Result."""
    argv = [str(a) for a in argv]
    start = time.monotonic()
    p = spawn(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
              stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL, cwd=cwd)
    timed_out = False
    try:
        out, err = p.communicate(input=input.encode() if isinstance(input, str) else input,
                                 timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _signal_group(p, signal.SIGKILL)
        try:
            out, err = p.communicate(timeout=5)
        except subprocess.TimeoutExpired:
            out, err = b"", b""
    _unregister(p)
    rc = None if timed_out else p.returncode
    return Result(argv, rc, out.decode(errors="replace"), err.decode(errors="replace"),
                  timed_out, time.monotonic() - start)


def mcptop_env(extra=None):
    env = dict(os.environ)
    env.setdefault("ASAN_OPTIONS", "detect_leaks=1")
    env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1")
    env.setdefault("TERM", "dumb")
    if extra:
        env.update(extra)
    return env


def require_mcptop():
    if not os.path.isfile(MCPTOP_BIN) or not os.access(MCPTOP_BIN, os.X_OK):
        raise SetupError("mcptop binary not found or not executable: %s (set MCPTOP_BIN)" % MCPTOP_BIN)


def run_mcptop(args, timeout=30.0, env=None, input=None):
    """Run `mcptop ARGS...` bounded by timeout (seconds). Returns Result."""
    require_mcptop()
    return run([MCPTOP_BIN] + list(args), timeout=timeout, env=mcptop_env(env), input=input)


class Watch:
    """A running `mcptop watch ...`: stdout read line by line on a thread, as JSON."""

    def __init__(self, args, env=None):
        require_mcptop()
        self.argv = [MCPTOP_BIN] + [str(a) for a in args]
        self.err_path = tmpdir() / ("watch-stderr-%d-%d.log" % (os.getpid(), id(self)))
        self.events = []      # every parsed JSON line, in order
        self.bad_lines = []   # lines that were not JSON objects
        self._q = queue.Queue()
        with open(self.err_path, "wb") as err:
            self.proc = spawn(self.argv, env=mcptop_env(env), stdout=subprocess.PIPE, stderr=err)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for raw in iter(self.proc.stdout.readline, b""):
            line = raw.decode(errors="replace").strip()
            if not line:
                continue
            try:
                ev = json.loads(line)
            except ValueError:
                ev = None
            if not isinstance(ev, dict):
                self.bad_lines.append(line)
                continue
            self.events.append(ev)
            self._q.put(ev)
        self._q.put(None)  # EOF

    def wait_for(self, pred, deadline):
        """Next event (from now on) for which pred(ev) is true, or None at the
        monotonic deadline or at EOF. Events not matching are skipped (but kept in .events)."""
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return None
            try:
                ev = self._q.get(timeout=min(remaining, 0.5))
            except queue.Empty:
                continue
            if ev is None:
                self._q.put(None)  # stay at EOF for later callers
                return None
            try:
                if pred(ev):
                    return ev
            except Exception:
                pass

    def stderr(self):
        try:
            return self.err_path.read_text(errors="replace")
        except OSError:
            return ""

    def signal(self, sig):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, sig)

    def wait_exit(self, timeout):
        """Exit code, or None if it did not exit within timeout. On exit the
        reader has taken every line the process wrote before .events is read:
        a process that exits is not done talking until its pipe is drained."""
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None
        self._reader.join(timeout=5)
        return rc

    def close(self):
        rc = terminate(self.proc, grace=2.0)
        self._reader.join(timeout=5)
        return rc

    def describe(self, first=15, last=25):
        if self.proc.poll() is None:
            try:
                self.proc.wait(timeout=0.5)  # stdout at EOF: let the exit be reaped
            except subprocess.TimeoutExpired:
                pass
        n = len(self.events)
        if n <= first + last:
            shown = self.events
            head = "all %d events" % n
        else:
            shown = self.events[:first] + [{"...": "%d events left out" % (n - first - last)}] + self.events[-last:]
            head = "first %d and last %d of %d events" % (first, last, n)
        evs = "\n".join(json.dumps(e) for e in shown)
        return ("$ %s\nexit code: %s\n--- %s ---\n%s\n--- non-JSON lines: %d ---\n%s"
                "\n--- stderr ---\n%s"
                % (" ".join(self.argv), self.proc.poll(), head, evs, len(self.bad_lines),
                   _clip("\n".join(self.bad_lines[:20])), _clip(self.stderr())))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False


# --------------------------------------------------------------------------
# the TUI in tmux (as test_tui.py drives it; shared by the TUI test files)

_tmux_socks = []
_tmux_seq = 0
SEL_GLYPH = "\u25b8"    # the selection mark in a UTF-8 locale


def tmux_bin():
    t = shutil.which("tmux")
    if not t:
        raise SetupError("tmux is not installed")
    return t


def _kill_tmux_servers():
    t = shutil.which("tmux")
    sockdir = os.path.join(os.environ.get("TMUX_TMPDIR") or "/tmp", "tmux-%d" % os.getuid())
    for s in _tmux_socks:
        if t:
            subprocess.run([t, "-L", s, "-f", "/dev/null", "kill-server"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10)
        try:
            os.unlink(os.path.join(sockdir, s))
        except OSError:
            pass
    del _tmux_socks[:]


def _proc_state(pid):
    """The state letter of /proc/PID/stat (R, S, T...), None when gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def pid_alive(pid):
    """True while PID is a live process (not gone, not a zombie)."""
    return _proc_state(pid) not in (None, "Z", "X")


class Tui:
    """mcptop running in a detached tmux session on a private socket (-L, -f
    /dev/null): keys go in with send-keys, the screen comes out with
    capture-pane. After mcptop the pane prints __EXIT=<code>__ and lingers.
    Every tmux server is killed at exit (cleanup_all)."""

    def __init__(self, args, cols=140, rows=30, env=None, term=None):
        global _tmux_seq
        require_mcptop()
        _tmux_seq += 1
        self.sock = "mcptest-tui-%d-%d" % (os.getpid(), _tmux_seq)
        _tmux_socks.append(self.sock)
        self.env = dict(os.environ)
        self.env.pop("TMUX", None)
        self.env.pop("NO_COLOR", None)
        self.env.update({"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "xterm-256color"})
        # The TUI keeps its preferences in $XDG_CONFIG_HOME/mcptop/tui.json
        # and writes them when a key changes one (t, m): each run gets an
        # empty directory of its own unless the test names one, so that no
        # run reads another's theme or the developer's own file.
        if "XDG_CONFIG_HOME" not in (env or {}):
            self.env["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="xdg-", dir=tmpdir())
        self.env.update(env or {})
        argv = [MCPTOP_BIN] + [str(a) for a in args]
        inner = "%s; echo __EXIT=$?__; sleep 120" % " ".join(shlex.quote(a) for a in argv)
        if term is not None:
            # The pane's TERM (else tmux's default-terminal); tmux sets
            # TERM in the pane after -e, so the shell sets it.
            inner = "TERM=%s %s" % (shlex.quote(term), inner)
        envargs = []
        for k in ("LANG", "LC_ALL", "NO_COLOR", "MCPTOP_THEMES",
                  "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"):
            if k in self.env:
                envargs += ["-e", "%s=%s" % (k, self.env[k])]
        self.tmux("new-session", "-d", "-x", str(cols), "-y", str(rows), *envargs,
                  "sh", "-c", inner)
        self.shell_pid = int(self.tmux("display-message", "-p", "#{pane_pid}").strip())

    def tmux(self, *args, check=True):
        r = subprocess.run([tmux_bin(), "-L", self.sock, "-f", "/dev/null"] + list(args),
                           env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=10)
        if check and r.returncode != 0:
            raise SetupError("tmux %s failed: %s" % (" ".join(args), r.stderr.decode()))
        return r.stdout.decode(errors="replace")

    def screen(self, escapes=False):
        """The pane's text (with escapes: its colours and attributes too)."""
        return self.tmux("capture-pane", "-p", *(["-e"] if escapes else []), check=False)

    def lines(self):
        return self.screen().split("\n")

    def keys(self, *keys):
        """Keys as a terminal sends them (tmux send-keys names: r, Down, Home...)."""
        self.tmux("send-keys", *keys)

    def literal(self, text):
        """Text typed as it is (send-keys -l)."""
        self.tmux("send-keys", "-l", text)

    def resize(self, cols, rows):
        self.tmux("resize-window", "-x", str(cols), "-y", str(rows))

    def fmt(self, f):
        """A tmux format expanded for the pane (display-message -p)."""
        return self.tmux("display-message", "-p", f, check=False).strip()

    def wait(self, pred, timeout=5.0):
        """Poll the screen until pred(text) holds: (last text, whether it held)."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen()
            try:
                if pred(text):
                    return text, True
            except Exception:
                pass
            if time.monotonic() >= deadline:
                return text, False
            time.sleep(0.1)

    def expect(self, c, checks, timeout=5.0, require=False):
        """Wait (bounded) for one screen on which every (description,
        predicate) holds, then record each as a check of case c, made on that
        screen (or the last one read). require: a failing one ends the case."""
        def holds(p, s):
            try:
                return bool(p(s))
            except Exception:
                return False
        text, _ = self.wait(lambda s: all(holds(p, s) for _, p in checks), timeout)
        shown = False
        for desc, p in checks:
            good = holds(p, text)
            if not good and not shown:
                c.attach("--- screen (%s) ---\n%s" % (desc, text))
                shown = True
            if require:
                c.require(good, desc)
            else:
                c.check(good, desc)
        return text

    def mcptop_pids(self):
        """The mcptop process(es) under the pane's shell."""
        pids = []
        try:
            with open("/proc/%d/task/%d/children" % (self.shell_pid, self.shell_pid)) as f:
                kids = [int(p) for p in f.read().split()]
        except OSError:
            return pids
        for p in kids:
            try:
                with open("/proc/%d/cmdline" % p, "rb") as f:
                    cmd = f.read().split(b"\0")[0].decode(errors="replace")
            except OSError:
                continue
            if os.path.basename(cmd) == "mcptop":
                pids.append(p)
        return pids

    def stall(self, seconds, during=None):
        """Block mcptop's loop for `seconds` the way the outside sees a loop
        that does not turn: SIGSTOP, then SIGCONT. It is stopped at a moment
        its loop waits in its poll (never in the middle of a frame); during()
        runs while it is stopped (keys typed then wait unread in the
        terminal, as behind a stuck call). Its watchdog's SIGALRM, due
        meanwhile, is handled first on SIGCONT, before the loop turns: the
        STALE marker is written then (pipe() keeps the raw bytes). False
        when no mcptop runs under the pane."""
        pids = self.mcptop_pids()
        if not pids:
            return False
        pid = pids[0]
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline:
            try:
                with open("/proc/%d/wchan" % pid) as f:
                    wchan = f.read().strip()
            except OSError:
                wchan = ""
            # In its poll: the kernel's wait (epoll, poll, select); "" or
            # "0" when this kernel does not say.
            if wchan in ("", "0") or re.search(r"poll|select", wchan):
                break
            time.sleep(0.01)
        os.kill(pid, signal.SIGSTOP)
        try:
            stop_by = time.monotonic() + 2.0
            while _proc_state(pid) not in ("T", None) and time.monotonic() < stop_by:
                time.sleep(0.01)
            if during is not None:
                during()
            time.sleep(seconds)
        finally:
            os.kill(pid, signal.SIGCONT)
        return True

    def pipe(self, path):
        """Append every byte the pane's program writes to path from now on
        (tmux pipe-pane -O): what reached the terminal, even when drawn
        over before a screen is read."""
        self.tmux("pipe-pane", "-O", "cat >> %s" % shlex.quote(str(path)))

    def close(self, c=None, bound=8.0):
        """q (a second q if it lingers past bound); with c, check it exited 0
        (a sanitizer report makes it non-zero) and left no mcptop process.
        Then the tmux server goes. Returns the last screen."""
        text = self.screen()
        if self.mcptop_pids():
            self.keys("q")
            text, ok = self.wait(lambda s: "__EXIT=" in s, bound)
            if not ok:
                self.keys("q")
                text, ok = self.wait(lambda s: "__EXIT=" in s, 2.0)
            if c is not None and not c.check(ok and "__EXIT=0__" in text,
                                             "mcptop quits on q with exit code 0"):
                c.attach("--- screen at quit ---\n" + text)
        left = self.mcptop_pids()
        if c is not None:
            c.check(not left, "no mcptop process left after quitting: %r" % left)
        for p in left:
            try:
                os.kill(p, signal.SIGKILL)
            except OSError:
                pass
        self.tmux("kill-server", check=False)
        return text


def screen_rows(text):
    return text.split("\n")


def table_row(text, name):
    """The table line of server `name` (its NAME cell, after the 3-column mark), or None."""
    for line in text.split("\n"):
        cells = line[3:].split()
        if cells and cells[0] == name:
            return line
    return None


def selected_name(text):
    for line in text.split("\n"):
        if line.startswith(SEL_GLYPH):
            cells = line[len(SEL_GLYPH):].split()
            return cells[0] if cells else None
    return None


TABLE_COLUMNS = ("NAME", "TRANS", "HEALTH", "LIVENESS", "AGE", "STRK", "SESSION", "PROTOCOL", "TOOLS",
                 "RTT ms", "LAST FAILURE", "DELIV", "HTTP", "HISTORY", "TREND")


def table_cell(text, name, column):
    """The text of one cell of server `name`'s row, stripped, cut at the
    titles of the table header (the left-aligned columns: SESSION, LAST
    FAILURE, HISTORY...). None when the row or the column is not shown."""
    lines = text.split("\n")
    head = next((l for l in lines if " NAME" in l and "HEALTH" in l), None)
    line = table_row(text, name)
    if head is None or line is None:
        return None
    starts = []
    for t in TABLE_COLUMNS:
        i = head.find(t)
        if i < 0 and t == "TREND":
            import re
            # Narrow, TREND's title is its scale alone: "\u2264500ms" ("<=500ms").
            m = re.search(r"(?<=\s)(\u2264|<=)[\d.]+m?s\b", head)
            i = m.start() if m else -1
        if i >= 0:
            starts.append((i, t))
    starts.sort()
    for k, (i, t) in enumerate(starts):
        if t == column:
            end = starts[k + 1][0] if k + 1 < len(starts) else len(line)
            return line[i:end].strip()
    return None


HEALTH_WORDS = ("ok", "degraded", "down", "unknown", "pending", "invalid", "paused",
                "stopped", "disabled")


def header_counts(text):
    """{"ok": n, "degraded": n, "down": n, ...} from the header's second line:
    the counts by health, every word of HEALTH_WORDS (0 when the header leaves
    it out: it shows ok, degraded and down always, the rest when not 0); {}
    before the counts are drawn."""
    import re
    lines = text.split("\n")
    out = {}
    if len(lines) < 2 or re.search(r"(?:^|\s)\S* ?ok \d+", lines[1]) is None:
        return out
    for word in HEALTH_WORDS:
        m = re.search(r"(?:^|\s)\S* ?%s (\d+)" % word, lines[1])
        out[word] = int(m.group(1)) if m else 0
    return out


# --------------------------------------------------------------------------
# files


_file_seq = 0


def write_file(text, suffix=".json"):
    """Write text (str or bytes) to a new temp file; return its path (str)."""
    global _file_seq
    _file_seq += 1
    path = tmpdir() / ("file-%d%s" % (_file_seq, suffix))
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return str(path)


def write_config(servers, mcptop=None, key="mcpServers"):
    """A config file {"mcpServers": servers, "mcptop": mcptop}; return its path.
    servers maps name -> declaration (any JSON value, to test bad entries)."""
    doc = {key: servers}
    if mcptop is not None:
        doc["mcptop"] = mcptop
    return write_file(json.dumps(doc, indent=2))


def project_version():
    """The VERSION in the top-level CMakeLists.txt project() call, or None."""
    import re
    try:
        text = (REPO_DIR / "CMakeLists.txt").read_text()
    except OSError:
        return None
    m = re.search(r"project\s*\(\s*\w+\s+VERSION\s+([0-9][0-9.]*)", text)
    return m.group(1) if m else None


# --------------------------------------------------------------------------
# assertions and reporting


_SERVE_LISTEN = None
_HEALTH_SAMPLE = None


class ServeMetrics:
    """`mcptop serve -c CFG --listen 127.0.0.1:0`, its port read from its
    stderr; metrics() and health() read /metrics (bounded), close() sends
    SIGTERM and returns the exit code."""

    def __init__(self, cfg, timeout=20.0, exit_wait=10.0):
        import re
        global _SERVE_LISTEN, _HEALTH_SAMPLE
        _SERVE_LISTEN = _SERVE_LISTEN or re.compile(r"listening on http://([0-9.]+):(\d+)/metrics")
        _HEALTH_SAMPLE = _HEALTH_SAMPLE or re.compile(
            r'^(mcp_health|mcp_probe_success)\{server="([^"]*)"(?:,state="([^"]*)")?\} (\S+)$')
        self.exit_wait = exit_wait
        self.err_path = tmpdir() / ("serve-%d.log" % id(self))
        with open(self.err_path, "wb") as err:
            self.proc = spawn([MCPTOP_BIN, "serve", "-c", cfg, "--listen", "%s:0" % LOOPBACK],
                              env=mcptop_env(), stdout=subprocess.DEVNULL, stderr=err)
        self.port = None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and self.proc.poll() is None:
            m = _SERVE_LISTEN.search(self.stderr())
            if m:
                self.port = int(m.group(2))
                return
            time.sleep(0.05)
        self.close()
        raise SetupError("mcptop serve did not say where it listens:\n%s" % self.stderr())

    def stderr(self):
        try:
            return self.err_path.read_text(errors="replace")
        except OSError:
            return ""

    def metrics(self):
        import urllib.error
        import urllib.request
        url = "http://%s:%d/metrics" % (LOOPBACK, self.port)
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return r.read().decode()
        except (OSError, urllib.error.URLError):
            return ""

    def health(self):
        """({server: [(state, value) of its mcp_health samples]}, {server: mcp_probe_success})."""
        states, probe = {}, {}
        for line in self.metrics().splitlines():
            m = _HEALTH_SAMPLE.match(line)
            if not m:
                continue
            fam, server, state, value = m.groups()
            if fam == "mcp_health":
                states.setdefault(server, []).append((state, float(value)))
            else:
                probe[server] = float(value)
        return states, probe

    def close(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
        try:
            return self.proc.wait(timeout=self.exit_wait)
        except subprocess.TimeoutExpired:
            return terminate(self.proc)


class TapReader:
    """A reader of a tap's socket: its JSON lines collected on a thread."""

    def __init__(self, path, timeout=10.0):
        self.lines = []
        self.lock = threading.Lock()
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.sock.connect(path)
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise SetupError("no tap socket at %s" % path)
                time.sleep(0.05)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self):
        buf = b""
        while True:
            try:
                chunk = self.sock.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                try:
                    obj = json.loads(line)
                except ValueError:
                    obj = {"unparsable": line[:200].decode(errors="replace")}
                with self.lock:
                    self.lines.append(obj)

    def wait_for(self, pred, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.lock:
                for o in self.lines:
                    if pred(o):
                        return o
            time.sleep(0.05)
        return None

    def events(self, name):
        with self.lock:
            return [o for o in self.lines if o.get("event") == name]

    def close(self):
        try:
            self.sock.close()
        except OSError:
            pass


class CaseFailed(AssertionError):
    pass


def dig(obj, *path):
    """obj[path[0]][path[1]]... or the sentinel MISSING where a step is absent."""
    for k in path:
        if isinstance(obj, dict) and isinstance(k, str) and k in obj:
            obj = obj[k]
        elif isinstance(obj, list) and isinstance(k, int) and -len(obj) <= k < len(obj):
            obj = obj[k]
        else:
            return MISSING
    return obj


class _Missing:
    def __repr__(self):
        return "<missing>"


MISSING = _Missing()


class Case:
    """Checks inside one test case. A failed check is recorded and the case goes on;
    fatal() / require() stop the case."""

    def __init__(self, name):
        self.name = name
        self.failures = []
        self.context = []  # extra text printed when the case fails

    def check(self, cond, msg):
        if not cond:
            self.failures.append(msg)
        return bool(cond)

    def eq(self, actual, expected, what):
        return self.check(actual == expected, "%s: expected %r, got %r" % (what, expected, actual))

    def is_in(self, actual, allowed, what):
        return self.check(actual in allowed, "%s: expected one of %r, got %r" % (what, allowed, actual))

    def require(self, cond, msg):
        if not cond:
            self.failures.append(msg)
            raise CaseFailed(msg)

    def fatal(self, msg):
        self.require(False, msg)

    def no_crash(self, result, what="mcptop"):
        why = result.crashed()
        return self.check(why is None, "%s crashed or hung: %s" % (what, why))

    def attach(self, text):
        self.context.append(text)


class Reporter:
    """Runs cases; the last line printed by finish() is 'N passed, N failed'."""

    def __init__(self, title):
        self.title = title
        self.passed = 0
        self.failed = 0
        log("== %s" % title)

    def run(self, name, fn, *args, **kw):
        c = Case(name)
        start = time.monotonic()
        try:
            fn(c, *args, **kw)
        except CaseFailed:
            pass
        except SetupError as e:
            c.failures.append("setup: %s" % e)
        except Exception:
            c.failures.append("exception:\n" + traceback.format_exc())
        elapsed = time.monotonic() - start
        if c.failures:
            self.failed += 1
            log("FAIL %s (%.1fs)" % (name, elapsed))
            for f in c.failures:
                log("  - " + f.replace("\n", "\n    "))
            for t in c.context:
                log("  " + t.replace("\n", "\n  "))
        else:
            self.passed += 1
            log("PASS %s (%.1fs)" % (name, elapsed))
        return not c.failures

    def finish(self):
        """Clean up, print the closing line and exit (1 on any failure)."""
        cleanup_all()
        sys.stdout.flush()
        print("%d passed, %d failed" % (self.passed, self.failed), flush=True)
        sys.exit(1 if self.failed or not self.passed else 0)


def case(reporter):
    """Decorator: @case(rep) def name(c): ... runs the case at once."""
    def deco(fn):
        reporter.run(fn.__name__, fn)
        return fn
    return deco
