#!/usr/bin/env python3
"""The console's views (issue 34, first slice): --filter EXPR and --sort
COL[,desc] on the command line (their usage errors too); groups: --group
cause|tag|host|transport|none, the b key cycling them, a header row per group
with its count and worst health, Enter on a header folding it; the event log
pane l (health and liveness changes and endings, newest first, with time,
from -> to, kind; filtered with /; following as it grows); the command
palette : (sort, group, filter, help; Tab completion); at 80x24 and 200x60.

Fixture fleet, nothing to serve: two refused ports (down, connect_refused,
tag edge), an invalid URL (invalid, tag core) and a healthy stdio fake (ok,
tag core), ping_interval_s 1. mcptop runs in tmux (mcptest.Tui). Every wait
is bounded.

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_tui_views.py
"""

import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402
import scenario as sc  # noqa: E402
from mcptest import table_row, selected_name  # noqa: E402

rep = mcptest.Reporter("the console's views: --filter, --sort, groups (TUI in tmux)")

START_WAIT = 20.0       # every row settled
KEY_WAIT = 5.0          # a key's effect on the screen
QUIT_BOUND = 3.0 + 1.0 + 4.0
SIZES = ((80, 24), (200, 60))
NAMES = ("alpha", "beta", "gamma", "delta")

_fixture = None


def fixture():
    global _fixture
    if _fixture is None:
        _fixture = mcptest.write_config({
            "alpha": {"url": "http://127.0.0.1:%d/mcp" % mcptest.free_port(), "tags": ["edge"]},
            "beta": {"url": "http://127.0.0.1:%d/mcp" % mcptest.free_port(), "tags": ["edge"]},
            "gamma": {"url": "not a url", "tags": ["core"]},
            "delta": sc.fake("healthy", sc.tag(), tags=["core"]),
        }, mcptop={"ping_interval_s": 1})
    return _fixture


def settled(s):
    return ("connect_refused" in (table_row(s, "alpha") or "")
            and "connect_refused" in (table_row(s, "beta") or "")
            and "invalid_config" in (table_row(s, "gamma") or "")
            and "reachable" in (table_row(s, "delta") or ""))


def names_in_order(s):
    """The server rows' names, top to bottom (group headers left out)."""
    out = []
    for line in s.split("\n"):
        cells = line[3:].split()
        if cells and cells[0] in NAMES:
            out.append(cells[0])
    return out


def header_line(s, group, name):
    """The header row of group `name` under grouping `group`, or None."""
    for line in s.split("\n"):
        if re.search(r"[\u25bc\u25b6] %s: %s  " % (group, re.escape(name)), line):
            return line
    return None


def start(c, args, cols, rows, pred=None, what="every row settles"):
    t = mcptest.Tui(["-c", fixture()] + args, cols=cols, rows=rows)
    text, ok = t.wait(pred or settled, START_WAIT)
    if not ok:
        c.attach("--- screen ---\n" + text)
        t.close(c, bound=QUIT_BOUND)
        c.fatal("%s within %.0fs at %dx%d" % (what, START_WAIT, cols, rows))
    return t


def case_filter_sort_start(c, cols, rows):
    def two(s):
        return (names_in_order(s) == ["beta", "alpha"]
                and "connect_refused" in (table_row(s, "alpha") or ""))
    t = start(c, ["--filter", "kind:connect", "--sort", "name,desc"], cols, rows, two,
              "--filter kind:connect shows alpha and beta")
    try:
        t.expect(c, [
            ("--filter kind:connect keeps alpha and beta, --sort name,desc puts beta first",
             lambda s: names_in_order(s) == ["beta", "alpha"]),
            ("the header names the filter and counts 2 shown",
             lambda s: 'filter "kind:connec' in s.split("\n")[0]
             and (cols < 200 or 'filter "kind:connect": 2 shown' in s.split("\n")[0])),
            ("the header says sort name, reversed (\u25b4)",
             lambda s: "sort name \u25b4" in s.split("\n")[0]),
        ], KEY_WAIT)
        # The filter is the / prompt's: it opens with it, Esc clears it.
        t.keys("Escape")
        t.expect(c, [("Esc clears the command line's filter: all four rows",
                      lambda s: sorted(names_in_order(s)) == sorted(NAMES))], START_WAIT)
        t.keys("I")
        t.expect(c, [("I reverses --sort name,desc back to A to Z",
                      lambda s: names_in_order(s) == sorted(NAMES))], KEY_WAIT)
    finally:
        t.close(c, bound=QUIT_BOUND)
    t = start(c, ["--sort", "HEALTH"], cols, rows)
    try:
        t.expect(c, [("--sort HEALTH (any case): down rows first, ok last",
                      lambda s: names_in_order(s)[:2] == ["alpha", "beta"]
                      and names_in_order(s)[-1] == "delta"
                      and "sort health \u25be" in s.split("\n")[0])], START_WAIT)
    finally:
        t.close(c, bound=QUIT_BOUND)


def case_usage_errors(c):
    for args, want in ((["--sort", "bogus"], 'no column "bogus" (name transport health'),
                       (["--sort", "rtt,sideways"], '"sideways" after the comma'),
                       (["--filter", "bogus:x"], 'no field "bogus"'),
                       (["--group", "colour"], 'no grouping "colour" (cause tag host transport none)')):
        r = mcptest.run_mcptop(["tui", "-c", fixture()] + args, timeout=10)
        c.eq(r.rc, 2, "%s: exit 2" % " ".join(args))
        c.check(want in r.stderr, "%s: stderr says %r: %r" % (" ".join(args), want, r.stderr))
    r = mcptest.run_mcptop(["tui", "--help"], timeout=10)
    c.check("--filter EXPR" in r.stdout and "--sort COL[,desc]" in r.stdout
            and "--group cause|tag|host|transport|none" in r.stdout,
            "tui --help names --filter, --sort and --group")


def case_group_cause(c, cols, rows):
    def grouped(s):
        return (header_line(s, "cause", "connect_refused") is not None
                and header_line(s, "cause", "invalid_config") is not None
                and header_line(s, "cause", "no current failure") is not None
                and settled(s))
    t = start(c, ["--group", "cause"], cols, rows, grouped, "--group cause shows three headers")
    try:
        s = t.expect(c, [
            ("connect_refused: 2 servers, worst down",
             lambda s: re.search(r"2 servers . worst \S+ down", header_line(s, "cause", "connect_refused"))),
            ("invalid_config: 1 server, worst invalid",
             lambda s: re.search(r"1 server . worst \S+ invalid", header_line(s, "cause", "invalid_config"))),
            ("no current failure: 1 server, worst ok",
             lambda s: re.search(r"1 server . worst \S+ ok", header_line(s, "cause", "no current failure"))),
            ("the header says group cause: 3",
             lambda s: "group cause: 3" in s.split("\n")[0]),
        ], KEY_WAIT)
        lines = s.split("\n")
        idx = {n: next(i for i, l in enumerate(lines) if (table_row(l, n) or "")) for n in NAMES}
        hdr = {g: next(i for i, l in enumerate(lines) if header_line(l, "cause", g))
               for g in ("connect_refused", "invalid_config", "no current failure")}
        c.check(hdr["connect_refused"] < idx["alpha"] < idx["beta"] < hdr["invalid_config"]
                < idx["gamma"] < hdr["no current failure"] < idx["delta"],
                "worst group first, each header above its rows: %r %r" % (hdr, idx))
        # The first row is the connect_refused header: Enter folds it.
        t.keys("Home")
        t.keys("Enter")
        t.expect(c, [
            ("Enter on the header folds it: alpha and beta hidden, gamma and delta shown",
             lambda s: table_row(s, "alpha") is None and table_row(s, "beta") is None
             and table_row(s, "gamma") and table_row(s, "delta")),
            ("the folded header shows \u25b6 and still counts 2",
             lambda s: "\u25b6 cause: connect_refused" in s and "2 servers" in
             header_line(s, "cause", "connect_refused")),
            ("no detail pane opened on a header", lambda s: "\u2500\u2500 alpha" not in s),
        ], KEY_WAIT)
        t.keys("Down")
        t.expect(c, [("Down from a folded header goes to the next header",
                      lambda s: selected_name(s) == "\u25bc")], KEY_WAIT)
        t.keys("Down")
        t.expect(c, [("and then to gamma", lambda s: selected_name(s) == "gamma")], KEY_WAIT)
        t.keys("Home")
        t.keys("Enter")
        t.expect(c, [("Enter again unfolds it", lambda s: table_row(s, "alpha") and table_row(s, "beta")
                      and "\u25bc cause: connect_refused" in s)], KEY_WAIT)
        t.keys("x")
        s = t.screen()
        c.check("End the session of" not in s, "x on a header asks nothing")
    finally:
        t.close(c, bound=QUIT_BOUND)


def case_group_cycle(c, cols, rows):
    t = start(c, [], cols, rows)
    try:
        c.check(header_line(t.screen(), "cause", "connect_refused") is None,
                "no grouping by default")
        t.keys("b")
        t.expect(c, [("b groups by cause", lambda s: header_line(s, "cause", "connect_refused"))], KEY_WAIT)
        t.keys("b")
        t.expect(c, [
            ("b again groups by (first) tag: edge 2, core 2",
             lambda s: "2 servers" in header_line(s, "tag", "edge")
             and "2 servers" in header_line(s, "tag", "core")),
        ], KEY_WAIT)
        t.keys("b")
        t.expect(c, [
            ("then by host: 127.0.0.1 holds the two refused ports, the stdio fake under its command",
             lambda s: "2 servers" in header_line(s, "host", "127.0.0.1")
             and header_line(s, "host", os.path.basename(sc.NODE)) is not None),
        ], KEY_WAIT)
        t.keys("b")
        t.expect(c, [
            ("then by transport: http 3, stdio 1",
             lambda s: "3 servers" in header_line(s, "transport", "http")
             and "1 server" in header_line(s, "transport", "stdio")),
        ], KEY_WAIT)
        t.keys("b")
        t.expect(c, [("then none again: no headers, four rows",
                      lambda s: "\u25bc" not in s and sorted(names_in_order(s)) == sorted(NAMES)
                      and "group " not in s.split("\n")[0])], KEY_WAIT)
        t.keys("?")
        t.expect(c, [("the help opens", lambda s: "mcptop help" in s)], KEY_WAIT)
        found = False
        for _ in range(12):
            if re.search(r"\bb\s+group by cause", t.screen()):
                found = True
                break
            t.keys("PgDn")
            t.wait(lambda s: False, 0.3)
        c.check(found, "the help lists b (group by cause, ...)")
    finally:
        t.close(c, bound=QUIT_BOUND)


LOG_LINE = re.compile(r"^(\d\d:\d\d:\d\d)  (\S+)\s+(health|liveness|ending)\s+(.*)$")


def log_lines(s):
    """The event log's entries on screen: (time, server, what, rest)."""
    return [m.groups() for m in (LOG_LINE.match(l) for l in s.split("\n")) if m]


def case_event_log(c, cols, rows):
    t = start(c, [], cols, rows)
    try:
        t.keys("l")
        t.expect(c, [
            ("l opens the event log", lambda s: "EVENT LOG" in s and "following" in s),
            ("alpha's liveness change with its time, from -> to, kind",
             lambda s: any(e[1] == "alpha" and e[2] == "liveness" and
                           e[3].startswith("absent \u2192 unreachable  connect_refused")
                           for e in log_lines(s))),
            ("alpha's health change: pending -> down",
             lambda s: any(e[1] == "alpha" and e[2] == "health" and
                           e[3].startswith("pending \u2192 down") for e in log_lines(s))),
            ("delta's health change: pending -> ok",
             lambda s: any(e[1] == "delta" and e[2] == "health" and
                           e[3].startswith("pending \u2192 ok") for e in log_lines(s))),
        ], START_WAIT)
        t.keys("/")
        t.literal("live:unreach")
        t.keys("Enter")
        t.expect(c, [
            ("/live:unreach keeps the two liveness changes to unreachable",
             lambda s: sorted((e[1], e[2]) for e in log_lines(s)) ==
             [("alpha", "liveness"), ("beta", "liveness")]),
            ("the pane names its filter", lambda s: 'filter "live:unreach": 2 shown' in s),
        ], KEY_WAIT)
        t.keys("Escape")
        t.expect(c, [("Esc clears the log's filter",
                      lambda s: len(log_lines(s)) >= 5 and "filter \"" not in s)], KEY_WAIT)
        t.keys(":")
        t.literal("filter name:alpha")
        t.keys("Enter")
        t.expect(c, [(":filter in the log filters the log",
                      lambda s: "EVENT LOG" in s and log_lines(s)
                      and all(e[1] == "alpha" for e in log_lines(s)))], KEY_WAIT)
        t.keys("Escape")
        t.expect(c, [("Esc clears it again",
                      lambda s: len(log_lines(s)) >= 5 and "filter \"" not in s)], KEY_WAIT)
        t.keys("l")
        t.keys("Home")
        t.keys("Down")
        t.keys("Down")
        t.expect(c, [("delta selected in the table", lambda s: selected_name(s) == "delta")],
                 KEY_WAIT, require=True)
        t.keys("x")
        t.expect(c, [("x asks", lambda s: "End the session of delta" in s)], KEY_WAIT, require=True)
        t.keys("y")
        t.keys("l")
        t.expect(c, [
            ("the open log follows: delta's ending comes in on top, newest first",
             lambda s: log_lines(s) and log_lines(s)[0][1] == "delta"
             and any(e[1] == "delta" and e[2] == "ending" for e in log_lines(s))),
        ], START_WAIT)
        t.keys("Escape")
        t.expect(c, [("Esc (no filter) goes back to the table", lambda s: "EVENT LOG" not in s
                      and table_row(s, "delta"))], KEY_WAIT)
    finally:
        t.close(c, bound=QUIT_BOUND)


def status(s):
    lines = s.rstrip("\n").split("\n")
    return lines[-1] if lines else ""


def case_palette(c, cols, rows):
    t = start(c, [], cols, rows)
    try:
        t.keys(":")
        t.expect(c, [("':' opens the palette's line", lambda s: status(s).startswith(":"))], KEY_WAIT)
        t.literal("so")
        t.keys("Tab")
        t.expect(c, [("Tab completes the command: ':sort '", lambda s: status(s).startswith(":sort  "))],
                 KEY_WAIT)
        t.literal("he")
        t.keys("Tab")
        t.expect(c, [("Tab completes the column: ':sort health '",
                      lambda s: status(s).startswith(":sort health  "))], KEY_WAIT)
        t.keys("Enter")
        t.expect(c, [(":sort health sorts by health, down first",
                      lambda s: "sort health" in s.split("\n")[0]
                      and names_in_order(s)[:2] == ["alpha", "beta"])], KEY_WAIT)
        t.keys(":")
        t.literal("gr")
        t.keys("Tab")
        t.literal("t")
        t.keys("Tab")
        t.expect(c, [("':gr' Tab 't' Tab stops at the common prefix of tag and transport",
                      lambda s: status(s).startswith(":group t "))], KEY_WAIT)
        t.literal("ag")
        t.keys("Enter")
        t.expect(c, [(":group tag shows the tag headers",
                      lambda s: header_line(s, "tag", "edge") and header_line(s, "tag", "core"))], KEY_WAIT)
        t.keys(":")
        t.literal("filter kind:connect")
        t.keys("Enter")
        t.expect(c, [(":filter kind:connect keeps alpha and beta",
                      lambda s: sorted(names_in_order(s)) == ["alpha", "beta"])], KEY_WAIT)
        t.keys(":")
        t.literal("filter")
        t.keys("Enter")
        t.expect(c, [(":filter alone clears it", lambda s: sorted(names_in_order(s)) == sorted(NAMES))],
                 KEY_WAIT)
        t.keys(":")
        t.literal("sort colour")
        t.keys("Enter")
        t.expect(c, [(":sort colour says there is no such column",
                      lambda s: ':sort: no column "colour"' in status(s))], KEY_WAIT)
        t.keys(":")
        t.literal("bogus")
        t.keys("Enter")
        t.expect(c, [("an unknown command is named", lambda s: 'no command "bogus"' in status(s))],
                 KEY_WAIT)
        t.keys(":")
        t.literal("help")
        t.keys("Enter")
        t.expect(c, [(":help opens the help", lambda s: "mcptop help" in s)], KEY_WAIT)
        t.keys("Escape")
    finally:
        t.close(c, bound=QUIT_BOUND)


def main():
    rep.run("usage: a bad --sort column, suffix, --filter field, --group word", case_usage_errors)
    for cols, rows in SIZES:
        rep.run("--filter and --sort at start, %dx%d" % (cols, rows), case_filter_sort_start, cols, rows)
        rep.run("--group cause: headers, counts, worst health, Enter folds, %dx%d" % (cols, rows),
                case_group_cause, cols, rows)
    for cols, rows in SIZES:
        rep.run("the event log l: changes with time, from -> to, kind; / filters; follows, %dx%d"
                % (cols, rows), case_event_log, cols, rows)
    for cols, rows in SIZES:
        rep.run("the palette : with Tab completion: sort, group, filter, help, errors, %dx%d"
                % (cols, rows), case_palette, cols, rows)
    rep.run("b cycles cause, tag, host, transport, none; ? lists it (80x24)", case_group_cycle, 80, 24)
    rep.finish()


if __name__ == "__main__":
    main()
