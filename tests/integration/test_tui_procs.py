#!/usr/bin/env python3
"""The process view (issue 34): `o` lists the stdio child mcptop spawned
(its pid, the one /proc says is mcptop's child running the configured
command line, with an RSS), and an orphan: a process started here, outside
mcptop, with the same command line, in a session of its own. It is listed
in the ORPHANS section with its pid and the server's name, mcptop's own
child is not; `K` then `n` leaves it running, `K` then `y` ends it (TERM)
and the status line says so. Once at 80x24 and once at 200x60; `r` then
shows the respawn count and the new child. The selection follows its
process: with three orphans, the middle one selected, the first ending
outside mcptop leaves K asking about the middle one.

mcptop runs in tmux (mcptest.Tui); every process started here is
registered with mcptest (killed at exit) and waited for with a bound.

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_tui_procs.py
"""

import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402
import scenario as sc  # noqa: E402
from mcptest import table_cell  # noqa: E402

rep = mcptest.Reporter("the process view: o, the stdio child's pid and RSS, an orphan "
                       "listed and ended by K y, K n leaves it (TUI in tmux, stdio fakes)")

START_WAIT = 20.0
KEY_WAIT = 8.0
RSS = re.compile(r"^\d+(\.\d)?[KMG]$")
# A server that ignores SIGTERM (SIG_IGN is inherited by what sh runs):
# its orphan is ended by KILL at its teardown deadline.
STUBBORN = {"command": "sh", "args": ["-c", "trap '' TERM; while :; do sleep 1; done"],
            "teardown_ms": 1000}


def pid_of(text, name):
    m = re.fullmatch(r"pid (\d+)", table_cell(text, name, "SESSION") or "")
    return int(m.group(1)) if m else None


def children_of(pid):
    try:
        with open("/proc/%d/task/%d/children" % (pid, pid)) as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def proc_argv(pid):
    try:
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0")[:-1]]
    except OSError:
        return None


def proc_ppid(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def sections(text):
    """(children rows, orphan rows) of the process view: each row's cells
    split on blanks (pid, pgid, state, rss, cpu, uptime, resp|ppid, ...)."""
    kids, orphans, cur = [], [], None
    for line in text.split("\n"):
        s = line.strip()
        if s.startswith("PROCESSES"):
            cur = kids
            continue
        if s.startswith("ORPHANS"):
            cur = orphans
            continue
        if cur is None or not s or s.startswith("PID"):
            continue
        cells = s.split()
        if cells[0].isdigit() and len(cells) >= 7:
            cur.append(cells)
    return kids, orphans


def row_of(rows, pid):
    for r in rows:
        if r[0] == str(pid):
            return r
    return None


def status_line(text):
    lines = text.rstrip("\n").split("\n")
    return lines[-1] if lines else ""


def gone(p, bound):
    """p (a Popen) has exited within bound seconds (reaped here)."""
    try:
        p.wait(timeout=bound)
        return True
    except subprocess.TimeoutExpired:
        return False


def select_orphan(c, t, pid):
    """K on the rows from the last one up until K asks about pid; True
    when it does (the question is left open)."""
    t.keys("End")
    for _ in range(6):
        t.keys("K")
        text, ok = t.wait(lambda s: "y/n" in status_line(s), KEY_WAIT)
        if not ok:
            return False
        if ("orphan pid %d " % pid) in status_line(text):
            return True
        t.keys("n")
        t.keys("Up")
    return False


def case_kill(c, t):
    """An orphan that ignores TERM: K y ends it by KILL after the
    deadline."""
    argv = [STUBBORN["command"]] + STUBBORN["args"]
    o = mcptest.spawn(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        t.expect(c, [("the TERM-proof orphan is listed",
                      lambda s: row_of(sections(s)[1], o.pid))], KEY_WAIT, require=True)
        c.require(select_orphan(c, t, o.pid), "K asks about pid %d" % o.pid)
        t.keys("y")
        c.check(gone(o, 10.0), "after K y the TERM-proof orphan is gone")
        t.expect(c, [("the status line says it ended by KILL",
                      lambda s: re.search(r"pid %d ended by KILL after \d+ ms" % o.pid,
                                          status_line(s)))], KEY_WAIT)
        c.check(o.returncode == -9, "it was killed by SIGKILL: %r" % o.returncode)
    finally:
        mcptest.terminate(o, grace=1.0)


def case_procs(c, cols, rows):
    marker = "procs-%d-%d" % (cols, os.getpid())
    decl = sc.fake("healthy", marker)
    argv = [decl["command"]] + decl["args"]
    servers = {"fakeA": decl}
    if cols >= 200:
        servers["stubborn"] = STUBBORN
    cfg = mcptest.write_config(servers, mcptop={"ping_interval_s": 1})
    # The orphan: the same command line, started outside mcptop, its stdin
    # held open (the fake ends at EOF).
    orphan = mcptest.spawn(argv, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    t = mcptest.Tui(["-c", cfg], cols=cols, rows=rows)
    try:
        t.expect(c, [("fakeA is reachable", lambda s: table_cell(s, "fakeA", "LIVENESS")
                      == "\u25cf reachable")], START_WAIT, require=True)
        me = t.mcptop_pids()
        c.require(len(me) == 1, "one mcptop process: %r" % me)
        # The child, as /proc says: mcptop's child running the command line.
        kids = [k for k in children_of(me[0]) if proc_argv(k) == argv]
        c.require(len(kids) == 1, "mcptop has one child running the configured command "
                  "line: %r" % kids)
        child = kids[0]
        if cols >= 200:
            c.check(pid_of(t.screen(), "fakeA") == child, "the table's pid is that child")
        c.check(proc_argv(orphan.pid) == argv, "the orphan runs the same command line")
        if cols >= 200:
            t.keys("?")
            t.expect(c, [("? lists o", lambda s: re.search(r"\n +o +the process view", s)),
                         ("? says what K does there",
                          lambda s: "in the process view: end the selected orphan" in s)],
                     KEY_WAIT)
            t.keys("Escape")
            t.expect(c, [("back from the help", lambda s: "mcptop help" not in s)], KEY_WAIT)
        t.keys("o")
        text = t.expect(c, [
            ("the process view is shown", lambda s: "PROCESSES" in s),
            ("the child's row shows its pid", lambda s: row_of(sections(s)[0], child)),
            ("the child's row shows an RSS",
             lambda s: RSS.match(row_of(sections(s)[0], child)[3])),
            ("the orphan is listed in ORPHANS with its pid",
             lambda s: row_of(sections(s)[1], orphan.pid)),
        ], KEY_WAIT, require=True)
        kids, orphans = sections(text)
        c.check(row_of(orphans, child) is None, "mcptop's own child is not an orphan")
        c.check(row_of(kids, orphan.pid) is None, "the orphan is not among the children")
        c.check(len([r for r in orphans if "fakeA" in r]) == 1, "one fakeA orphan: %r"
                % orphans)
        o = row_of(orphans, orphan.pid)
        c.check(o is not None and "fakeA" in o, "the orphan names the server: %r" % o)
        c.check(o is not None and RSS.match(o[3]), "the orphan shows an RSS: %r" % o)
        k = row_of(kids, child)
        c.check(k is not None and k[6] == "0", "no respawn yet: %r" % k)
        if cols >= 200:
            # The tree: stubborn's sh runs a sleep, drawn under it.
            t.expect(c, [("a child's descendant is drawn under it",
                          lambda s: re.search(r"stubborn +sh -c .*\n.*\u2514\u2500sleep 1", s))],
                     KEY_WAIT)
        # K n: asked, not ended.
        t.keys("End")
        t.keys("K")
        t.expect(c, [("K asks first", lambda s: ("orphan pid %d" % orphan.pid) in
                      status_line(s) and "y/n" in status_line(s))], KEY_WAIT, require=True)
        t.keys("n")
        t.expect(c, [("n: not ended", lambda s: "not ended" in status_line(s))], KEY_WAIT)
        time.sleep(0.5)
        c.check(orphan.poll() is None, "after K n the orphan still runs")
        t.expect(c, [("still listed after K n",
                      lambda s: row_of(sections(s)[1], orphan.pid))], KEY_WAIT)
        # K on mcptop's own child: refused.
        t.keys("Home")
        t.keys("K")
        t.expect(c, [("K on a child's row is refused",
                      lambda s: "select one" in status_line(s))], KEY_WAIT)
        c.check(proc_ppid(child) == me[0], "the child still runs")
        # K y: ended by TERM.
        t.keys("End")
        t.keys("K")
        t.expect(c, [("K asks again", lambda s: "y/n" in status_line(s))], KEY_WAIT,
                 require=True)
        t.keys("y")
        c.check(gone(orphan, 10.0), "after K y the orphan is gone")
        t.expect(c, [
            ("the status line says it ended by TERM",
             lambda s: re.search(r"pid %d ended by TERM after \d+ ms" % orphan.pid,
                                 status_line(s))),
            ("no orphan is listed any more", lambda s: not sections(s)[1]),
        ], KEY_WAIT)
        c.check(proc_ppid(child) == me[0], "mcptop's child was left alone")
        if cols >= 200:
            case_kill(c, t)
        if cols >= 200:
            # r: a respawn; the view shows the new child and the count.
            t.keys("o")
            t.expect(c, [("back to the table", lambda s: "PROCESSES" not in s)], KEY_WAIT)
            t.keys("r")
            t.expect(c, [("a new child after r", lambda s: pid_of(s, "fakeA") not in
                          (None, child))], START_WAIT, require=True)
            fresh = [k for k in children_of(me[0]) if proc_argv(k) == argv]
            c.require(len(fresh) == 1 and fresh[0] != child, "one new child: %r" % fresh)
            fresh = fresh[0]
            t.keys("o")
            t.expect(c, [("the new child with one respawn",
                          lambda s: (row_of(sections(s)[0], fresh) or [""] * 7)[6] == "1")],
                     KEY_WAIT)
    finally:
        t.close(c)
        mcptest.terminate(orphan, grace=2.0)


def case_selection_follows(c):
    """Three orphans A < B < D by pid, B selected; A ends outside mcptop:
    the selection stays on B (it used to stay on the row number, so the
    highlight and K moved onto D). The command line has an e-acute at the
    prompt's 40-column cut: the question is cut between characters and
    still ends in y/n (half a UTF-8 sequence lost it)."""
    marker = "xx" + "\u00e9" * 9 + "-%d" % os.getpid()
    # sleep 1000: each orphan's one descendant stays (no rows that come and
    # go every second).
    decl = {"command": "sh", "args": ["-c", "while :; do sleep 1000; done", marker]}
    argv = [decl["command"]] + decl["args"]
    cfg = mcptest.write_config({"loop": decl}, mcptop={"ping_interval_s": 1})
    spawned = [mcptest.spawn(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
               for _ in range(3)]
    a, b, d = sorted(spawned, key=lambda p: p.pid)
    t = mcptest.Tui(["-c", cfg], cols=80, rows=24)
    try:
        t.expect(c, [("the table shows loop", lambda s: table_cell(s, "loop", "HEALTH"))],
                 START_WAIT, require=True)
        t.keys("o")
        t.expect(c, [("the three orphans are listed",
                      lambda s: all(row_of(sections(s)[1], p.pid) for p in (a, b, d)))],
                 KEY_WAIT, require=True)
        c.require(select_orphan(c, t, b.pid), "K asks about the middle orphan, pid %d" % b.pid)
        t.keys("n")
        mcptest.terminate(a, grace=2.0)
        t.expect(c, [("the first orphan's row is gone",
                      lambda s: row_of(sections(s)[1], a.pid) is None
                      and row_of(sections(s)[1], b.pid))], KEY_WAIT, require=True)
        t.keys("K")
        text, ok = t.wait(lambda s: "y/n" in status_line(s), KEY_WAIT)
        c.check(ok and ("orphan pid %d " % b.pid) in status_line(text),
                "K after a row above went away still asks about pid %d: %r"
                % (b.pid, status_line(text)))
        c.check(re.search(r"\(sh -c while :; do sleep 1000; done xx\u00e9{3}\u2026\)\? y/n\s*$",
                          status_line(text)),
                "the command is cut between characters, then the ellipsis and y/n: %r"
                % status_line(text))
        t.keys("n")
        time.sleep(0.3)
        c.check(b.poll() is None and d.poll() is None, "both remaining orphans still run")
    finally:
        t.close(c)
        for p in spawned:
            mcptest.terminate(p, grace=2.0)


def main():
    try:
        mcptest.tmux_bin()
        mcptest.require_mcptop()
    except mcptest.SetupError as e:
        print("setup: %s" % e)
        print("0 passed, 1 failed")
        sys.exit(1)
    rep.run("o at 80x24: the child's pid and RSS; an orphan listed, K n keeps it, K y ends it",
            case_procs, 80, 24)
    rep.run("o at 200x60: the same, and r shows a respawn", case_procs, 200, 60)
    rep.run("o: the selection follows its process when a row above it goes (80x24)",
            case_selection_follows)
    rep.finish()


if __name__ == "__main__":
    main()
