#!/usr/bin/env python3
"""Trends and the selectable incident line (issue 34): the TREND column (each
row's newest round trips as bars on one scale, the scale in its title, a
failed exchange a gap mark, never a short bar; ASCII in a non-UTF-8 locale),
the header's graph of the fleet's ok count (shown at 200x60, dropped at 80x24
without breaking the counts), and the incident line: Tab focuses it, Left /
Right move, Enter filters the table to exactly the servers of that entry, a
click does the same, "+N more" groups by cause; at 80x24 and 200x60.

The fleet, on the fault lab (tests/faultlab, 127.0.0.1 only): fast (healthy),
slow (every ping answered after 400 ms), gw1 and gw2 (a healthy dial, then
502 on every ping), html (200 text/html on pings: not_mcp_response), rpcerr
(a JSON-RPC error on pings: protocol) and refused (a closed port); ping_interval_s
1. mcptop runs in tmux (mcptest.Tui). Every wait is bounded.

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_tui_trends.py
"""

import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402
import scenario as sc  # noqa: E402
from mcptest import table_cell, table_row  # noqa: E402

rep = mcptest.Reporter("trends: TREND, the header's ok graph, the selectable incident line "
                       "(TUI in tmux, fault lab)")

START_WAIT = 25.0       # every row settled, a few pings each
KEY_WAIT = 5.0          # a key's effect on the screen
SLOW_MS = 400
NAMES = ("fast", "slow", "gw1", "gw2", "html", "rpcerr", "refused")
BARS = "\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588"     # ▁..█
ASCII_BARS = "_.-=+*#@"
GAP, ASCII_GAP = "\u00b7", "x"

_fixture = None
KEYS = []


def fixture():
    global _fixture
    if _fixture is None:
        L = sc.lab()
        paths = {"fast": "/healthy", "slow": "/delay/ping?ms=%d" % SLOW_MS,
                 "gw1": "/html502/ping", "gw2": "/html502/ping", "html": "/html200/ping",
                 "rpcerr": "/rpcerror/ping"}
        servers = {}
        for name, path in paths.items():
            KEYS.append(sc.key(path))
            servers[name] = {"url": L.url(KEYS[-1])}
        servers["refused"] = {"url": "http://127.0.0.1:%d/mcp" % mcptest.free_port()}
        _fixture = mcptest.write_config(servers, mcptop={"ping_interval_s": 1})
    return _fixture


def case_sessions_ended(c):
    c.check(sc.balanced(c, KEYS, timeout=5.0), "every session the lab issued got its DELETE")


def names_in(s):
    """The server rows' names on screen."""
    out = []
    for line in s.split("\n"):
        cells = line[3:].split()
        if cells and cells[0] in NAMES:
            out.append(cells[0])
    return sorted(out)


def lines(s):
    return s.split("\n")


def status(s):
    ls = s.rstrip("\n").split("\n")
    return ls[-1] if ls else ""


def titles(s):
    return next((l for l in lines(s) if " NAME" in l and "HEALTH" in l), "")


def scale_ms(s):
    """TREND's scale from its title ("TREND ≤500ms", "TREND <=2s"), or None."""
    m = re.search(r"TREND ?(?:\u2264|<=)([\d.]+)(ms|s)\b", titles(s))
    if not m:
        return None
    return float(m.group(1)) * (1000 if m.group(2) == "s" else 1)


def trend(s, name):
    return table_cell(s, name, "TREND") or ""


def levels(cell, bars=BARS):
    return [bars.index(ch) for ch in cell if ch in bars]


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if v else -1


def settled(s):
    return (re.search(r"(\u25cf|\+) ok", table_row(s, "fast") or "")
            and re.search(r"(\u25cf|\+) ok", table_row(s, "slow") or "")
            and "protocol" in (table_row(s, "rpcerr") or "")
            and "502" in (table_row(s, "gw1") or "") and "502" in (table_row(s, "gw2") or "")
            and "connect_refused" in (table_row(s, "refused") or "")
            and ("not_mcp_response" in s.split("\n")[2] or " more" in s.split("\n")[2]))


def start(c, cols, rows, env=None, pred=None):
    t = mcptest.Tui(["-c", fixture()], cols=cols, rows=rows, env=env,
                    term="xterm-256color")
    text, ok = t.wait(pred or settled, START_WAIT)
    if not ok:
        c.attach("--- screen ---\n" + text)
        t.close(c)
        c.fatal("every row settles within %.0fs at %dx%d" % (START_WAIT, cols, rows))
    return t


def mouse_click(t, x, y):
    """A left click (press, then the release) at the 0-based cell, SGR 1006
    as xterm-256color's kmous says."""
    for rel in (False, True):
        data = ("\x1b[<0;%d;%d%s" % (x + 1, y + 1, "m" if rel else "M")).encode()
        t.tmux("send-keys", "-H", *["%02x" % b for b in data])
        time.sleep(0.1)


def slow_taller(s, bars=BARS):
    fast, slow = levels(trend(s, "fast"), bars), levels(trend(s, "slow"), bars)
    return len(slow) >= 3 and len(fast) >= 3 and median(slow) > median(fast)


def case_trend(c, cols, rows):
    t = start(c, cols, rows)
    try:
        if cols >= 200:
            def pings(s):
                return len(levels(trend(s, "slow"))) >= 4 and len(levels(trend(s, "fast"))) >= 4
            text = t.expect(c, [
                ("TREND's title carries the scale, at least the slow server's %d ms" % SLOW_MS,
                 lambda s: (scale_ms(s) or 0) >= SLOW_MS),
                ("fast and slow show a bar per round trip (4 or more)", pings),
                ("slow's bars are taller than fast's (median level)", slow_taller),
                ("a failed exchange is the gap mark, not a bar: gw1's newest is %s" % GAP,
                 lambda s: trend(s, "gw1").endswith(GAP) and GAP * 3 in trend(s, "gw1")),
                ("refused (no round trip ever) has gap marks only",
                 lambda s: set(trend(s, "refused")) == {GAP}),
                ("the header graph of the ok count: 'ok N/7 ... last Ns'",
                 lambda s: re.search(r"ok [0-7]/7 [%s%s]+ last \d+[sm]\b" % (BARS, GAP),
                                     lines(s)[1]) is not None),
                ("the counts stay before it", lambda s: lines(s)[1].startswith("\u25cf ok ")
                 and "endings under way" in lines(s)[1]),
            ], START_WAIT)
            c.attach("--- screen ---\n" + "\n".join(lines(text)[:12]))
            c.check("TREND" in titles(text), "the TREND title is shown whole at %d columns" % cols)
            t.keys("?")
            t.keys("G")
            t.expect(c, [("help says what TREND's scale is",
                          lambda s: "TREND" in s and "scale" in s)], KEY_WAIT)
            t.keys("Escape")
        else:
            text = t.expect(c, [
                ("TREND gives way at %d columns (no TREND title, no scale)" % cols,
                 lambda s: "TREND" not in titles(s) and "\u2264" not in titles(s)),
                ("HISTORY is still shown", lambda s: "HISTORY" in titles(s)),
                ("the header graph is dropped", lambda s: " last " not in lines(s)[1]),
                ("the counts line is whole", lambda s: lines(s)[1].startswith("\u25cf ok ")
                 and "endings under way" in lines(s)[1]),
                ("no line is wider than the terminal",
                 lambda s: max(len(l) for l in lines(s)) <= cols),
            ], START_WAIT)
            c.attach("--- screen ---\n" + "\n".join(lines(text)[:12]))
    finally:
        t.close(c)


def case_ascii(c):
    t = start(c, 200, 60, env={"LANG": "C", "LC_ALL": "C"})
    try:
        t.expect(c, [
            ("ASCII: the title says TREND <=N", lambda s: "TREND<=" in titles(s)),
            ("ASCII: slow's bars are taller than fast's (%s)" % ASCII_BARS,
             lambda s: slow_taller(s, ASCII_BARS)),
            ("ASCII: gw1's failed pings are %s" % ASCII_GAP,
             lambda s: ASCII_GAP * 3 in trend(s, "gw1")),
        ], START_WAIT)
    finally:
        t.close(c)


def incident_line(s):
    return lines(s)[2]


def case_incidents(c, cols, rows):
    t = start(c, cols, rows)
    try:
        t.keys("Tab")
        t.expect(c, [
            ("Tab focuses the incident line: its first entry bracketed",
             lambda s: incident_line(s).startswith("incidents: [connect_refused 1]")),
            ("the status line says the keys", lambda s: "Enter filter on it" in status(s)),
        ], KEY_WAIT)
        t.keys("Enter")
        t.expect(c, [
            ("Enter on connect_refused keeps exactly refused", lambda s: names_in(s) == ["refused"]),
            ("the filter is said: kind:connect_refused",
             lambda s: "kind:connect_refused" in status(s) or "kind:connect_refused" in lines(s)[0]),
            ("the focus is back on the table (no bracket)", lambda s: "[" not in incident_line(s)),
        ], KEY_WAIT)
        t.keys("Escape")
        t.expect(c, [("Esc clears the filter: every row", lambda s: names_in(s) == sorted(NAMES))],
                 KEY_WAIT)
        t.keys("Tab")
        t.keys("Right")
        t.expect(c, [("Right moves to the 502 entry",
                      lambda s: "[http_status 502 bad gateway \u00d72]" in incident_line(s))], KEY_WAIT)
        t.keys("Enter")
        text = t.expect(c, [
            ("Enter on 502 bad gateway keeps exactly gw1 and gw2",
             lambda s: names_in(s) == ["gw1", "gw2"]),
            ("the filter names status and reason",
             lambda s: "kind:http_status http:502 reason:bad_gateway" in status(s)
             or "kind:http_status http:502 reason:bad_gateway" in lines(s)[0]),
        ], KEY_WAIT)
        t.keys("Escape")
        t.expect(c, [("Esc: every row again", lambda s: names_in(s) == sorted(NAMES))], KEY_WAIT)
        # Tab, Shift-Tab wraps to the last entry; Esc leaves the line alone.
        t.keys("Tab")
        t.keys("BTab")
        text = t.expect(c, [("Shift-Tab from the first entry goes to the last",
                             lambda s: re.search(r"\[[^\]]+\]\s*$", incident_line(s)) is not None)],
                        KEY_WAIT)
        last = re.search(r"\[([^\]]+)\]\s*$", incident_line(text))
        if cols < 120:
            c.check(last is not None and re.match(r"\+\d+ more$", last.group(1)) is not None,
                    "at %d columns the last entry is '+N more': %r" % (cols, last and last.group(1)))
            t.keys("Enter")
            t.expect(c, [
                ("Enter on +N more groups by cause: a header per cause",
                 lambda s: re.search(r"\u25bc cause: ", s) is not None
                 and "group cause" in lines(s)[0]),
                ("every server is still listed", lambda s: names_in(s) == sorted(NAMES)),
            ], KEY_WAIT)
            t.keys("b")     # cause -> tag: leave the grouping
        else:
            t.keys("Escape")
            t.expect(c, [("Esc returns focus to the table, no filter set",
                          lambda s: "[" not in incident_line(s) and names_in(s) == sorted(NAMES))],
                     KEY_WAIT)
            # A click on an entry does what Enter does.
            text = t.screen()
            x = incident_line(text).find("not_mcp_response")
            c.require(x >= 0, "the not_mcp_response entry is on the incident line")
            mouse_click(t, x + 2, 2)
            t.expect(c, [("a click on not_mcp_response keeps exactly html",
                          lambda s: names_in(s) == ["html"])], KEY_WAIT)
            t.keys("Escape")
    finally:
        t.close(c)


def main():
    for cols, rows in ((200, 60), (80, 24)):
        rep.run("TREND and the header graph, %dx%d" % (cols, rows), case_trend, cols, rows)
    rep.run("TREND in ASCII (LANG=C), 200x60", case_ascii)
    for cols, rows in ((200, 60), (80, 24)):
        rep.run("the incident line: Tab, Left/Right, Enter, click, +N more, %dx%d" % (cols, rows),
                case_incidents, cols, rows)
    rep.run("every session issued was ended", case_sessions_ended)
    rep.finish()


if __name__ == "__main__":
    main()
