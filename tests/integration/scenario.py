"""scenario: what every hostile-input / field-report scenario (issues 12 and
13) checks after it ran, and the small runners they share.

Built on mcptest and faultlab. A test file makes one lab (`lab()`), gives
each scenario its own endpoint keys (`key("/healthy")` adds a unique ?t=),
and after the scenario calls:

  balanced(c, keys)          every lab session issued on those endpoints got
                             a DELETE (sessions_issued == sessions_ended)
  nothing_left(c, marker, sampler, pidfiles)
                             no process carrying the marker, no pid listed
                             in the pid files, and no process in any process
                             group the sampler saw while mcptop ran

Children: `fake(mode, marker, **opts)` declares tests/stdio/fake.mjs with a
marker on its command line (workers it forks carry it too). `GroupSampler`
records, while mcptop runs, the process groups of every process carrying
the marker (mcptop puts each stdio child in a group of its own). Every
marker is killed at exit whatever happened (a leak found by a test must not
outlive the test run).
"""

import atexit
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import threading
import time
import uuid

import mcptest
import faultlab

FAKE_MJS = mcptest.TESTS_DIR / "stdio" / "fake.mjs"
NODE = mcptest._NODE

# --------------------------------------------------------------------------
# markers and processes

_markers = []


def new_marker(prefix="mcptest-hostile"):
    m = "%s-%s" % (prefix, uuid.uuid4().hex[:12])
    _markers.append(m)
    return m


def _cmdline(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _stat(pid):
    """(state letter, pgid) of /proc/PID/stat, or None when gone."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            text = f.read()
    except OSError:
        return None
    rest = text[text.rindex(")") + 2:].split()
    return rest[0], int(rest[2])


def _all_pids():
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            out.append(int(name))
    return out


def marked(marker):
    """Live (non-zombie) pids whose command line carries marker (never ours)."""
    me = os.getpid()
    out = []
    for pid in _all_pids():
        if pid == me:
            continue
        if marker in _cmdline(pid):
            st = _stat(pid)
            if st is not None and st[0] != "Z":
                out.append(pid)
    return out


def in_groups(pgids):
    """Live (non-zombie) pids whose process group is one of pgids."""
    if not pgids:
        return []
    out = []
    for pid in _all_pids():
        st = _stat(pid)
        if st is not None and st[0] != "Z" and st[1] in pgids:
            out.append(pid)
    return out


def alive(pid):
    st = _stat(pid)
    return st is not None and st[0] != "Z"


def pids_in(path):
    try:
        with open(path) as f:
            return [int(x) for x in f.read().split() if x.strip().isdigit()]
    except OSError:
        return []


def ps_lines(pids):
    if not pids:
        return ""
    r = subprocess.run(["ps", "-o", "pid,ppid,pgid,stat,args", "-p", ",".join(map(str, pids))],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=10)
    return r.stdout.decode(errors="replace")


def kill_marked():
    for m in _markers:
        for pid in marked(m):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


def _on_signal(signum, frame):
    kill_marked()
    mcptest._on_signal(signum, frame)


atexit.register(kill_marked)
for _sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(_sig, _on_signal)


class GroupSampler:
    """While it runs: every 30 ms, the process groups of processes carrying the marker."""

    def __init__(self, marker):
        self.marker = marker
        self.pgids = set()
        self.pids = set()
        self._stop = threading.Event()
        self._t = threading.Thread(target=self._run, daemon=True)
        self._t.start()

    def _run(self):
        while not self._stop.is_set():
            for pid in marked(self.marker):
                st = _stat(pid)
                if st is not None:
                    self.pids.add(pid)
                    self.pgids.add(st[1])
            self._stop.wait(0.03)

    def stop(self):
        self._stop.set()
        self._t.join(timeout=5)
        return self


def nothing_left(c, marker, sampler=None, pidfiles=(), timeout=3.0, what="after mcptop exited"):
    """No marked process, no listed pid, no process in a sampled group (waits up to timeout)."""
    if sampler is not None:
        sampler.stop()
    own_group = os.getpgid(0)
    groups = set(sampler.pgids) - {own_group} if sampler is not None else set()
    listed = [p for f in pidfiles for p in pids_in(f)]
    deadline = time.monotonic() + timeout
    while True:
        left_m = marked(marker)
        left_l = [p for p in listed if alive(p)]
        left_g = in_groups(groups)
        if not (left_m or left_l or left_g) or time.monotonic() >= deadline:
            break
        time.sleep(0.1)
    c.check(not left_m, "no process carrying the marker %s: %s" % (what, ps_lines(left_m)))
    c.check(not left_l, "no worker (pid files) %s: %s" % (what, ps_lines(left_l)))
    c.check(not left_g, "no process in a child's process group %r %s: %s"
            % (sorted(groups), what, ps_lines(left_g)))
    return not (left_m or left_l or left_g)


def fake(mode, marker, *extra_args, **decl):
    """A tests/stdio/fake.mjs declaration; extra_args are fake.mjs options."""
    d = {"command": NODE, "args": [str(FAKE_MJS), "--mode=%s" % mode, "--tag=%s" % marker]
         + [str(a) for a in extra_args]}
    d.update(decl)
    return d


# --------------------------------------------------------------------------
# the lab, endpoint keys and the sessions invariant

_lab = None


def lab():
    global _lab
    if _lab is None:
        _lab = faultlab.FaultLab().start()
    return _lab


def tag():
    return uuid.uuid4().hex[:10]


def key(path):
    """path with a unique ?t= (or &t=): an endpoint of its own, counts of its own."""
    return "%s%st=%s" % (path, "&" if "?" in path else "?", tag())


def counts_of(k):
    return lab().endpoint_counts(k)


def balanced(c, keys, timeout=2.0, exclude=()):
    """Every session the lab issued on these endpoints got a DELETE: issued == ended."""
    keys = [k for k in keys if k not in exclude]
    deadline = time.monotonic() + timeout
    while True:
        all_counts = lab().counts().get("endpoints", {})
        bad = []
        for k in keys:
            cnt = all_counts.get(k, {})
            iss, end = cnt.get("sessions_issued", 0), cnt.get("sessions_ended", 0)
            if iss != end:
                bad.append((k, iss, end))
        if not bad or time.monotonic() >= deadline:
            break
        time.sleep(0.1)
    if len(bad) == 1:
        k, iss, end = bad[0]
        c.check(False, "sessions issued == sessions ended on %s: issued %d, ended (DELETE seen) %d"
                % (k, iss, end))
    elif bad:
        c.check(False, "sessions issued == sessions ended on %d of %d endpoints: not on %d (issued %d, "
                "ended %d in all), e.g. %s"
                % (len(keys) - len(bad), len(keys), len(bad), sum(b[1] for b in bad), sum(b[2] for b in bad),
                   ", ".join("%s %d/%d" % b for b in bad[:3])))
    return not bad


# --------------------------------------------------------------------------
# runners


def check_json(c, servers, mcptop=None, args=(), timeout=60.0, env=None, argv_prefix=None, attach=True):
    """`mcptop check --json -c CFG [args]` -> (Result, {name: server object}).
    attach False: only the exit code and stderr go to the case's context."""
    cfg = mcptest.write_config(servers, mcptop=mcptop)
    argv = ["check", "--json", "-c", cfg] + list(args)
    if argv_prefix:
        mcptest.require_mcptop()
        r = mcptest.run(list(argv_prefix) + [mcptest.MCPTOP_BIN] + argv, timeout=timeout,
                        env=mcptest.mcptop_env(env))
    else:
        r = mcptest.run_mcptop(argv, timeout=timeout, env=env)
    if attach:
        c.attach(r.describe())
    else:
        c.attach("exit code %s (%.1f s); stderr:\n%s" % (r.rc, r.elapsed, r.stderr[-2000:]))
    c.no_crash(r)
    doc = r.json()
    c.require(isinstance(doc, dict) and isinstance(doc.get("servers"), list),
              "check --json printed a servers array (%s)" % (r.json_error,))
    by = {s.get("name"): s for s in doc["servers"] if isinstance(s, dict)}
    return r, by


def endings_of(text):
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line:
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            if isinstance(obj, dict):
                out.append(obj)
    return out


class TimedWatch(mcptest.Watch):
    """mcptest.Watch that also keeps each event's arrival: .timed = [(monotonic, wall, ev)]."""

    def __init__(self, args, env=None):
        self.timed = []
        super().__init__(args, env=env)

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
            self.timed.append((time.monotonic(), time.time(), ev))
            self.events.append(ev)
            self._q.put(ev)
        self._q.put(None)

    def seen(self, pred):
        """The first event already read (or read from now on, not waiting) for which pred holds."""
        for ev in list(self.events):
            try:
                if pred(ev):
                    return ev
            except Exception:
                pass
        return None

    def until(self, pred, deadline):
        """An event (already read or coming) for which pred holds, or None at the deadline."""
        ev = self.seen(pred)
        if ev is not None:
            return ev
        return self.wait_for(pred, deadline)


def wait_until(fn, timeout, step=0.1):
    """Poll fn() until it returns something truthy; that value, or the last falsy one."""
    deadline = time.monotonic() + timeout
    while True:
        v = fn()
        if v or time.monotonic() >= deadline:
            return v
        time.sleep(step)


def of(server, event=None, op=None):
    """A predicate over watch events of one server (and event type, and op)."""
    def pred(e):
        return e.get("server") == server and (event is None or e.get("event") == event) and \
            (op is None or e.get("op") == op)
    return pred


def no_sanitizer(c, text, what="mcptop"):
    for m in ("Sanitizer", "runtime error:"):
        c.check(m not in text, "%s: no %r in stderr" % (what, m))


# --------------------------------------------------------------------------
# the TUI in tmux


def _tmux():
    t = shutil.which("tmux")
    if not t:
        raise mcptest.SetupError("tmux is not installed")
    return t


class Tmux:
    """mcptop in a detached tmux session on a private socket (see test_tui.py)."""

    def __init__(self, args, cols=120, rows=30):
        self.sock = "mcptop-scenario-%d-%s" % (os.getpid(), tag())
        self.env = dict(os.environ)
        self.env.pop("TMUX", None)
        self.env.update({"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "TERM": "xterm-256color"})
        inner = "%s; echo __EXIT=$?__; sleep 60" % " ".join(
            shlex.quote(a) for a in [mcptest.MCPTOP_BIN] + [str(x) for x in args])
        envargs = []
        for k in ("LANG", "LC_ALL", "ASAN_OPTIONS", "UBSAN_OPTIONS"):
            if k in self.env:
                envargs += ["-e", "%s=%s" % (k, self.env[k])]
        self.tmux("new-session", "-d", "-x", str(cols), "-y", str(rows), *envargs, "sh", "-c", inner)

    def tmux(self, *args, check=True):
        r = subprocess.run([_tmux(), "-L", self.sock, "-f", "/dev/null"] + list(args), env=self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10)
        if check and r.returncode != 0:
            raise mcptest.SetupError("tmux %s failed: %s" % (" ".join(args), r.stderr.decode()))
        return r.stdout.decode(errors="replace")

    def screen(self):
        return self.tmux("capture-pane", "-p", check=False)

    def keys(self, *k):
        self.tmux("send-keys", *k)

    def wait(self, pred, timeout):
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen()
            if pred(text) or time.monotonic() >= deadline:
                return text, pred(text)
            time.sleep(0.1)

    def kill(self):
        self.tmux("kill-server", check=False)


def run_cases(rep, cases):
    """Run each (name, fn) of cases under rep, after checking mcptop and the
    lab can start; MCPTEST_ONLY=REGEX runs the matching names only. Exits
    with rep's verdict."""
    try:
        mcptest.require_mcptop()
        lab()
    except mcptest.SetupError as e:
        print("setup: %s" % e)
        rep.failed += 1
        rep.finish()
    only = os.environ.get("MCPTEST_ONLY")
    for name, fn in cases:
        if only and not re.search(only, name):
            continue
        rep.run(name, fn)
    rep.finish()
