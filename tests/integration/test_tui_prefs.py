#!/usr/bin/env python3
"""Saved views and preferences (issue 34): tui.json under a temp
XDG_CONFIG_HOME per case; :view save NAME then --view NAME in a fresh run
(sort, filter, group and columns on screen), the default view, flags over a
view's fields, --view with an unknown name (a usage error listing the
views); a broken tui.json (a warning naming the file, the TUI works, the
file left alone); the column chooser (c: Space hides protocol, + moves
liveness before health, hidden at every width), :columns LIST and its
unknown-name error; the palette's history (Up/Down, kept in tui.json),
:end and :redial; Tab completion of a view name, a server after name: and a
tag after tag:; a hostile file (a column named 40 times in a view and in
:columns, the most views and :view save past them). At 80x24 and 200x60
where the case is about layout.

Fixture fleet, nothing to serve: two refused ports (alpha, beta: down,
connect_refused, tag edge), an invalid URL (gamma, tag core) and a healthy
stdio fake (delta, tag core). mcptop runs in tmux (mcptest.Tui). Every wait
is bounded.

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_tui_prefs.py
"""

import json
import os
import re
import stat
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402
import scenario as sc  # noqa: E402
from mcptest import table_row, selected_name  # noqa: E402

rep = mcptest.Reporter("saved views, tui.json, the column chooser, the palette's history (TUI in tmux)")

START_WAIT = 20.0
KEY_WAIT = 5.0
QUIT_BOUND = 3.0 + 1.0 + 4.0
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


def xdg():
    """A fresh XDG_CONFIG_HOME for one case."""
    return tempfile.mkdtemp(prefix="xdg-", dir=mcptest.tmpdir())


def prefs_file(home):
    return os.path.join(home, "mcptop", "tui.json")


def read_prefs(home):
    with open(prefs_file(home)) as f:
        return json.load(f)


def write_prefs(home, text):
    os.makedirs(os.path.join(home, "mcptop"), exist_ok=True)
    with open(prefs_file(home), "w") as f:
        f.write(text)


def status(s):
    lines = s.rstrip("\n").split("\n")
    return lines[-1] if lines else ""


def titles(s):
    """The column titles line, as a list of titles (LAST FAILURE and RTT ms
    kept whole)."""
    for line in s.split("\n"):
        if re.match(r"^\s+NAME", line):
            t = line.replace("LAST FAILURE", "LAST_FAILURE").replace("RTT ms", "RTT_ms")
            return [re.sub(r"[\u25be\u25b4]$", "", w) for w in t.split()]
    return []


def names_in_order(s):
    out = []
    for line in s.split("\n"):
        cells = line[3:].split()
        if cells and cells[0] in NAMES:
            out.append(cells[0])
    return out


def any_row(s):
    return any(table_row(s, n) for n in NAMES)


def start(c, args, home, cols, rows, pred=any_row, what="the table shows"):
    t = mcptest.Tui(["-c", fixture()] + args, cols=cols, rows=rows, env={"XDG_CONFIG_HOME": home})
    text, ok = t.wait(pred, START_WAIT)
    if not ok:
        c.attach("--- screen ---\n" + text)
        t.close(c, bound=QUIT_BOUND)
        c.fatal("%s within %.0fs at %dx%d" % (what, START_WAIT, cols, rows))
    return t


def command(t, line):
    t.keys(":")
    t.literal(line)
    t.keys("Enter")


def refused(s):
    return ("connect_refused" in (table_row(s, "alpha") or "")
            and "connect_refused" in (table_row(s, "beta") or ""))


def case_view_roundtrip(c, cols, rows):
    home = xdg()
    t = start(c, [], home, cols, rows, refused, "alpha and beta refused")
    try:
        command(t, "filter tag:edge")
        command(t, "sort name,desc")
        command(t, "group cause")
        command(t, "columns name,failure,health,liveness")
        t.expect(c, [("filter, sort, group and columns applied before the save",
                      lambda s: names_in_order(s) == ["beta", "alpha"]
                      and titles(s) == ["NAME", "LAST_FAILURE", "HEALTH", "LIVENESS"])], KEY_WAIT)
        command(t, "view save triage")
        t.expect(c, [(":view save triage says where", lambda s: "view triage saved" in status(s))],
                 KEY_WAIT)
    finally:
        t.close(c, bound=QUIT_BOUND)
    doc = read_prefs(home)
    c.eq(doc.get("views", {}).get("triage"),
         {"sort": "name,desc", "filter": "tag:edge", "group": "cause",
          "columns": ["name", "failure", "health", "liveness"]},
         "tui.json holds the view's sort, filter, group and columns")
    mode = stat.S_IMODE(os.stat(prefs_file(home)).st_mode)
    dmode = stat.S_IMODE(os.stat(os.path.dirname(prefs_file(home))).st_mode)
    c.check(mode == 0o600 and dmode == 0o700, "tui.json is 0600 in a 0700 directory: %o %o" % (mode, dmode))
    c.check(not [f for f in os.listdir(os.path.dirname(prefs_file(home))) if f != "tui.json"],
            "no temp file left beside it")

    # A fresh run with --view triage: everything back on screen.
    t = start(c, ["--view", "triage"], home, cols, rows, refused, "--view triage shows alpha and beta")
    try:
        t.expect(c, [
            ("--view triage: the filter keeps alpha and beta, sorted name,desc",
             lambda s: names_in_order(s) == ["beta", "alpha"]),
            ("the header names the reversed name sort (and the filter, when wide)",
             lambda s: "sort name \u25b4" in s.split("\n")[0]
             and (cols < 200 or 'filter "tag:edge": 2 shown' in s.split("\n")[0])),
            ("grouped by cause", lambda s: "\u25bc cause: connect_refused" in s),
            ("the columns are the view's, in its order",
             lambda s: titles(s) == ["NAME", "LAST_FAILURE", "HEALTH", "LIVENESS"]),
        ], KEY_WAIT)
        t.keys("/")
        t.expect(c, [("/ opens with the view's filter", lambda s: "tag:edge" in status(s))], KEY_WAIT)
        t.keys("Enter")
        command(t, "view default triage")
        t.expect(c, [(":view default triage", lambda s: "default view: triage" in status(s))], KEY_WAIT)
    finally:
        t.close(c, bound=QUIT_BOUND)
    c.eq(read_prefs(home).get("default_view"), "triage", "tui.json's default_view is triage")

    # No flags: the default view; --sort given: no default view.
    t = start(c, [], home, cols, rows, refused)
    try:
        t.expect(c, [("no flags: the default view applies (filter, columns)",
                      lambda s: names_in_order(s) == ["beta", "alpha"]
                      and titles(s) == ["NAME", "LAST_FAILURE", "HEALTH", "LIVENESS"])], KEY_WAIT)
    finally:
        t.close(c, bound=QUIT_BOUND)
    t = start(c, ["--view", "triage", "--sort", "name"], home, cols, rows, refused)
    try:
        t.expect(c, [("--view triage --sort name: the flag overrides the view's sort, its filter stays",
                      lambda s: names_in_order(s) == ["alpha", "beta"]
                      and "sort name \u25be" in s.split("\n")[0])], KEY_WAIT)
    finally:
        t.close(c, bound=QUIT_BOUND)
    t = start(c, ["--sort", "name"], home, cols, rows,
              lambda s: sorted(names_in_order(s)) == sorted(NAMES), "--sort name: all four rows")
    try:
        t.expect(c, [("--sort alone: the default view is not applied (no filter, the default columns)",
                      lambda s: "filter" not in s.split("\n")[0]
                      and sorted(names_in_order(s)) == sorted(NAMES)
                      and titles(s).index("HEALTH") < titles(s).index("LIVENESS")
                      and "HISTORY" in titles(s))], KEY_WAIT)
    finally:
        t.close(c, bound=QUIT_BOUND)


def case_view_usage(c):
    home = xdg()
    r = mcptest.run_mcptop(["tui", "-c", fixture(), "--view", "triage"], env={"XDG_CONFIG_HOME": home},
                           timeout=10)
    c.eq(r.rc, 2, "--view with no tui.json: exit 2")
    c.check('no view "triage"' in r.stderr and "has no views" in r.stderr,
            "it says there are no views: %r" % r.stderr)
    write_prefs(home, json.dumps({"views": {"calm": {"group": "none"}, "triage": {"sort": "rtt"}}}))
    r = mcptest.run_mcptop(["tui", "-c", fixture(), "--view", "nope"], env={"XDG_CONFIG_HOME": home},
                           timeout=10)
    c.eq(r.rc, 2, "--view nope: exit 2")
    c.check('no view "nope" in %s (views: calm triage)' % prefs_file(home) in r.stderr,
            "it lists the views there are: %r" % r.stderr)
    r = mcptest.run_mcptop(["tui", "--list-views"], env={"XDG_CONFIG_HOME": home}, timeout=10)
    c.check(r.rc == 0 and r.stdout.split() == ["calm", "triage"],
            "--list-views prints the views, one a line: %r" % r.stdout)
    r = mcptest.run_mcptop(["tui", "--help"], timeout=10)
    c.check("--view NAME" in r.stdout and "tui.json" in r.stdout, "tui --help names --view and tui.json")


def case_broken_file(c, cols, rows):
    home = xdg()
    broken = '{"views": {"triage": {"sort": "rtt"}},\n "theme": '
    write_prefs(home, broken)
    t = start(c, [], home, cols, rows, refused, "the TUI starts over a broken tui.json")
    try:
        t.expect(c, [
            ("the status line names the file, the line and column, and the problem",
             lambda s: prefs_file(home) + ":2:" in status(s) and "not valid JSON" in status(s)),
            ("the TUI works with its defaults: all four rows", lambda s: sorted(names_in_order(s)) == sorted(NAMES)),
        ], KEY_WAIT)
        t.keys("t")
        t.expect(c, [("t still changes the theme, but it is not saved over the broken file",
                      lambda s: "not saved" in status(s))], KEY_WAIT)
        t.keys("Down")
        t.expect(c, [("keys still work", lambda s: selected_name(s) == "beta")], KEY_WAIT)
    finally:
        t.close(c, bound=QUIT_BOUND)
    with open(prefs_file(home)) as f:
        c.eq(f.read(), broken, "the broken file is left as it was")
    write_prefs(home, json.dumps({"views": {"a": {"sort": 3}}, "mouse": True}))
    t = start(c, [], home, cols, rows)
    try:
        t.expect(c, [("a wrong type names the file and the key",
                      lambda s: "views.a.sort: a number, not a string" in status(s)
                      or (cols < 100 and "views.a.sort: a number" in status(s)))], KEY_WAIT)
    finally:
        t.close(c, bound=QUIT_BOUND)


def chooser_line(s, word):
    for line in s.split("\n"):
        if re.search(r"\[[x ]\] %s\b" % word, line):
            return line
    return None


def case_chooser(c, cols, rows):
    home = xdg()
    t = start(c, [], home, 200, 60, refused)
    try:
        c.check("PROTOCOL" in titles(t.screen()), "at 200 columns PROTOCOL is shown to begin with")
        if (cols, rows) != (200, 60):
            t.resize(cols, rows)
            t.wait(lambda s: len(s.split("\n")[0]) <= cols, KEY_WAIT)
        t.keys("c")
        t.expect(c, [("c opens the chooser listing every column",
                      lambda s: "COLUMNS" in s and all(chooser_line(s, w) for w in (
                          "name", "health", "protocol", "rtt", "history", "trend", "tags", "source")))], KEY_WAIT,
                 require=True)
        for _ in range(20):
            if "protocol" in (chooser_line(t.screen(), "protocol") or "") and \
                    chooser_line(t.screen(), "protocol").startswith("\u25b8"):
                break
            t.keys("Down")
            t.wait(lambda s: False, 0.1)
        t.keys("Space")
        t.expect(c, [("Space: [ ] protocol", lambda s: "[ ] protocol" in (chooser_line(s, "protocol") or ""))],
                 KEY_WAIT)
        t.keys("Home")
        t.keys("Space")
        t.expect(c, [("name cannot be hidden", lambda s: "name is always shown" in status(s)
                      and "[x] name" in chooser_line(s, "name"))], KEY_WAIT)
        for _ in range(20):
            if (chooser_line(t.screen(), "liveness") or "").startswith("\u25b8"):
                break
            t.keys("Down")
            t.wait(lambda s: False, 0.1)
        t.keys("+")
        t.keys("+")
        t.keys("+")
        t.keys("Enter")
        t.expect(c, [
            ("Enter applies: no PROTOCOL in the titles", lambda s: titles(s) and "PROTOCOL" not in titles(s)),
            ("liveness moved up past health and transport, name kept first",
             lambda s: titles(s)[:2] == ["NAME", "LIVENESS"]),
        ], KEY_WAIT)
        t.resize(200, 60)
        t.expect(c, [("hidden at every width: still no PROTOCOL at 200 columns",
                      lambda s: len(titles(s)) > 8 and "PROTOCOL" not in titles(s))], KEY_WAIT)
        t.keys("c")
        t.keys("Space")
        t.keys("Escape")
        t.expect(c, [("Esc cancels the chooser", lambda s: "COLUMNS" not in s
                      and titles(s)[:2] == ["NAME", "LIVENESS"])], KEY_WAIT)
        t.resize(cols, rows)
        command(t, "columns name,bogus")
        t.expect(c, [(":columns with an unknown name says what there is",
                      lambda s: ':columns: no column "bogus" (name transport health' in status(s))], KEY_WAIT)
        command(t, "columns rtt name tags")
        t.expect(c, [(":columns rtt name tags: NAME first, HEALTH always, TAGS shown",
                      lambda s: titles(s) == ["NAME", "HEALTH", "RTT_ms", "TAGS"]
                      and "edge" in (table_row(s, "alpha") or ""))], KEY_WAIT)
    finally:
        t.close(c, bound=QUIT_BOUND)


def case_history_and_completion(c):
    home = xdg()
    write_prefs(home, json.dumps({"views": {"triage": {"filter": "tag:edge"}, "calm": {}},
                                  "history": ["group host"]}))
    t = start(c, [], home, 80, 24, refused)
    try:
        command(t, "sort health")
        command(t, "group tag")
        t.expect(c, [(":group tag groups", lambda s: "\u25bc tag: edge" in s)], KEY_WAIT)
        t.keys(":")
        t.keys("Up")
        t.expect(c, [("Up recalls the previous command", lambda s: status(s).startswith(":group tag"))],
                 KEY_WAIT)
        t.keys("Up")
        t.expect(c, [("Up again: the one before", lambda s: status(s).startswith(":sort health"))], KEY_WAIT)
        t.keys("Up")
        t.expect(c, [("and the one kept in tui.json from before", lambda s: status(s).startswith(":group host"))],
                 KEY_WAIT)
        t.keys("Down")
        t.keys("Down")
        t.keys("Down")
        t.expect(c, [("Down back to the empty line", lambda s: re.match(r"^:\s+Tab complete", status(s)))], KEY_WAIT)
        t.literal("view tr")
        t.keys("Tab")
        t.expect(c, [("Tab completes a view name", lambda s: status(s).startswith(":view triage "))], KEY_WAIT)
        t.keys("Escape")
        t.keys(":")
        t.literal("filter name:ga")
        t.keys("Tab")
        t.expect(c, [("Tab completes a server after name:", lambda s: status(s).startswith(":filter name:gamma "))],
                 KEY_WAIT)
        t.literal("!tag:ed")
        t.keys("Tab")
        t.expect(c, [("and a tag after !tag:", lambda s: status(s).startswith(":filter name:gamma !tag:edge "))],
                 KEY_WAIT)
        t.keys("Enter")
        t.expect(c, [("the completed filter applies", lambda s: names_in_order(s) == ["gamma"])], KEY_WAIT)
        command(t, "filter name:delta")
        t.expect(c, [("delta alone", lambda s: names_in_order(s) == ["delta"])], KEY_WAIT)
        command(t, "end")
        t.expect(c, [(":end asks as x does", lambda s: "End the session of delta" in s)], KEY_WAIT)
        t.keys("n")
        t.expect(c, [("n: not ended", lambda s: "not ended" in status(s))], KEY_WAIT)
        command(t, "redial")
        t.expect(c, [(":redial acts as r", lambda s: "delta" in status(s) and ("dialing" in status(s)
                                                                            or "redial" in status(s)))], KEY_WAIT)
        command(t, "theme light")
        t.expect(c, [(":theme light", lambda s: "theme: light" in status(s))], KEY_WAIT)
        command(t, "theme nope")
        t.expect(c, [(":theme nope lists the themes", lambda s: ':theme: no theme "nope" (' in status(s))], KEY_WAIT)
    finally:
        t.close(c, bound=QUIT_BOUND)
    doc = read_prefs(home)
    c.eq(doc.get("theme"), "light", ":theme light is remembered in tui.json")
    hist = doc.get("history", [])
    c.check(hist[:1] == ["group host"] and "sort health" in hist and hist[-1] == "theme nope",
            "the history is kept in tui.json, oldest first: %r" % hist)
    c.check("triage" in doc.get("views", {}) and "calm" in doc.get("views", {}), "the views are kept")


def case_hostile_file(c):
    """A column named 40 times takes one place of the 32 (a later one is
    still shown), in a view and in :columns; a file holding the most views
    (256): :view save of a new one is refused, the views are not touched."""
    home = xdg()
    views = {"v%d" % i: {} for i in range(255)}
    views["dup"] = {"columns": ["name"] * 40 + ["rtt"]}
    write_prefs(home, json.dumps({"views": views}))
    t = start(c, ["--view", "dup"], home, 80, 24)
    try:
        t.expect(c, [("--view dup: name given 40 times, rtt after it still shown",
                      lambda s: titles(s) == ["NAME", "HEALTH", "RTT_ms"])], KEY_WAIT)
        command(t, "columns " + "age," * 33 + "tags")
        t.expect(c, [(":columns age x33 then tags: TAGS still shown",
                      lambda s: titles(s) == ["NAME", "HEALTH", "AGE", "TAGS"])], KEY_WAIT)
        command(t, "view save extra")
        t.expect(c, [(":view save past the most views is refused, saying why",
                      lambda s: "256 views already" in status(s))], KEY_WAIT)
    finally:
        t.close(c, bound=QUIT_BOUND)
    doc = read_prefs(home)
    c.check(doc.get("views") == views and "extra" not in doc.get("views", {}),
            "tui.json's views are left as they were (%d views)" % len(doc.get("views", {})))


def main():
    rep.run("--view: unknown names and no file are usage errors listing the views", case_view_usage)
    for cols, rows in ((80, 24), (200, 60)):
        rep.run(":view save, --view in a fresh run, the default view, flags over it, %dx%d" % (cols, rows),
                case_view_roundtrip, cols, rows)
        rep.run("the column chooser and :columns, %dx%d" % (cols, rows), case_chooser, cols, rows)
    rep.run("a broken tui.json: a warning naming it, the TUI works, the file left alone (80x24)",
            case_broken_file, 80, 24)
    rep.run("palette history, completion of views, names and tags, :end, :redial, :theme (80x24)",
            case_history_and_completion)
    rep.run("a hostile tui.json: a column 40 times, the most views (80x24)", case_hostile_file)
    rep.finish()


if __name__ == "__main__":
    main()
