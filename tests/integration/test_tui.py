#!/usr/bin/env python3
"""The TUI, driven in tmux at a fixed size (after tmux's own regress/ tests).

Fixture fleet: server-everything live, a refused port, an invalid URL, with
ping_interval_s 1. Each case runs mcptop in its own tmux server on a private
socket (-L, -f /dev/null) and reads the screen with capture-pane. Every wait
polls the pane with a deadline.

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_tui.py
"""

import os
import re
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402

rep = mcptest.Reporter("TUI in tmux (server-everything, a refused port, an invalid URL)")

COLS, ROWS = 120, 30
START_WAIT = 20.0       # first screen with all three rows settled
KEY_WAIT = 5.0          # a key's effect on the screen
PING_INTERVAL_S = 1
KILL_BOUND = PING_INTERVAL_S + 5.0   # kill -> row unreachable
QUIT_BOUND = 3.0 + 1.0 + 4.0         # teardown + grace + slack


class Tui(mcptest.Tui):
    """mcptest.Tui at this file's size (COLS x ROWS) by default."""

    def __init__(self, args, env=None, cols=COLS, rows=ROWS, term=None):
        super().__init__(args, cols=cols, rows=rows, env=env, term=term)

    def close(self, c=None):
        return super().close(c, bound=QUIT_BOUND)


row = mcptest.table_row
selected_name = mcptest.selected_name


header_counts = mcptest.header_counts


def settled(text):
    c = header_counts(text)
    r_ev, r_ref, r_bad = row(text, "everything"), row(text, "refused"), row(text, "broken")
    return (c.get("ok") == 1 and c.get("down") == 1 and c.get("invalid") == 1
            and r_ev is not None and r_ref is not None and r_bad is not None
            and "connect_refused" in r_ref and "reachable" in r_ev)


def fixture(srv):
    return mcptest.write_config({
        "everything": {"url": srv.url, "tags": ["demo-tag"]},
        "refused": {"url": "http://127.0.0.1:%d/mcp" % mcptest.free_port()},
        "broken": {"url": "not a url"},
    }, mcptop={"ping_interval_s": PING_INTERVAL_S})


def start(c, srv, env=None):
    t = Tui(["-c", fixture(srv)], env=env)
    text, ok = t.wait(settled, START_WAIT)
    if not ok:
        c.attach("--- screen ---\n" + text)
        t.close(c)
        c.fatal("the three rows settle within %.0fs: everything ok, refused "
                "down/connect_refused, broken invalid" % START_WAIT)
    return t, text


SERVER = None


def shared_server():
    global SERVER
    if SERVER is None or not SERVER.running():
        SERVER = mcptest.everything_http()
    return SERVER


def case_rows_and_header(c):
    t, text = start(c, shared_server())
    try:
        line = lambda s, i: s.split("\n")[i]
        text = t.expect(c, [
            ("header counts by health: ok 1, down 1, invalid 1, none else",
             lambda s: header_counts(s) == dict(dict.fromkeys(mcptest.HEALTH_WORDS, 0),
                                                ok=1, down=1, invalid=1)),
            ("endings under way 0 in the header", lambda s: "endings under way 0" in line(s, 1)),
            ("incident line counts connect_refused 1 and invalid_config 1",
             lambda s: "connect_refused 1" in line(s, 2) and "invalid_config 1" in line(s, 2)),
            ("everything: http, reachable, 13 tools",
             lambda s: " http " in row(s, "everything") and "reachable" in row(s, "everything")
             and re.search(r"\b13\b", row(s, "everything")) is not None),
            ("refused: unreachable, connect_refused, delivered no",
             lambda s: "unreachable" in row(s, "refused") and "connect_refused" in row(s, "refused")
             and " no " in row(s, "refused")),
            ("broken: absent (an em dash), invalid_config",
             lambda s: "\u2014" in row(s, "broken") and "invalid_config" in row(s, "broken")
             and "reachable" not in row(s, "broken")),
            ("the header says which rows are shown: rows 1-3 of 3", lambda s: "rows 1-3 of 3" in line(s, 0)),
            ("the header clock is shown", lambda s: header_clock(s) is not None),
            ("the status line names the keys", lambda s: "quit" in s.rstrip("\n").split("\n")[-1]),
        ], START_WAIT)
        c.attach("--- screen ---\n" + text)
        esc = t.screen(escapes=True)
        c.check(re.search(r"\x1b\[[0-9;]*3[0-7](;|m)", esc) is not None,
                "colour escapes are used when NO_COLOR is unset (sanity for the NO_COLOR case)")
        # The protocol column gives way at 120 columns; the detail pane has it.
        t.keys("Home")
        t.keys("Down")
        t.expect(c, [("everything selected", lambda s: selected_name(s) == "everything")],
                 require=True)
        t.keys("Enter")
        t.expect(c, [("the detail pane shows the protocol version 2025-",
                      lambda s: re.search(r"protocol 2025-\d\d-\d\d", s) is not None)])
    finally:
        t.close(c)


def case_help(c):
    # Tall enough for the whole help at once; then the scroll at 30 rows.
    t = Tui(["-c", fixture(shared_server())], rows=110)
    try:
        t.expect(c, [("the three rows settle", settled)], START_WAIT, require=True)
        t.keys("?")
        t.expect(c, [
            ("? shows the help with the key table", lambda s: "mcptop help" in s),
            ("help: sort keys", lambda s: "reverse the sort" in s and "I " in s),
            ("help: end", lambda s: "end the selected" in s),
            ("help: the mouse key", lambda s: "mouse capture on / off" in s),
            ("help: the filter syntax", lambda s: "tag:prod" in s and "!tag:staging" in s),
            ("legend: DELIV", lambda s: "DELIV" in s and "reach the server" in s),
            ("legend: STRK", lambda s: "STRK" in s and "observations in a row" in s),
            ("legend: AGE", lambda s: "AGE" in s and "how long ago" in s),
            ("legend: unknown vs absent", lambda s: "never the same as unknown" in s),
            ("legend: the history strip", lambda s: "answered with an error" in s),
            ("legend: STALE", lambda s: "STALE Ns" in s),
        ])
        t.resize(COLS, ROWS)
        t.expect(c, [("at 30 rows the legend is below the fold",
                      lambda s: "mcptop help" in s and "never the same as unknown" not in s)])
        t.keys("End")
        t.expect(c, [("End scrolls to the legend",
                      lambda s: "never the same as unknown" in s and "mcptop help" not in s)])
        t.keys("Home")
        t.expect(c, [("Home scrolls the help back to the top", lambda s: "mcptop help" in s)])
        t.keys("Escape")
        t.expect(c, [("a key closes the help",
                      lambda s: "mcptop help" not in s and row(s, "refused") is not None)])
    finally:
        t.close(c)


NAMES = ("everything", "refused", "broken")


def only(*names):
    """Exactly these rows of the fixture are shown (and the table is drawn)."""
    def pred(s):
        return ("NAME" in s and
                {n for n in NAMES if row(s, n) is not None} == set(names))
    return pred


def case_filter(c):
    t, _ = start(c, shared_server())
    try:
        for query, want in (("ref", ["refused"]), ("connect_", ["refused"]),
                            ("demo-tag", ["everything"]), ("invalid_config", ["broken"]),
                            ("tag:demo-tag", ["everything"]), ("tag:demo", []),
                            ("!tag:demo-tag", ["broken", "refused"]),
                            ("kind:connect", ["refused"]), ("kind:timeout", []),
                            ("live:absent", ["broken"]), ("!live:reachable !live:absent", ["refused"]),
                            ("trans:http !ref", ["broken", "everything"])):
            t.keys("/")
            t.literal(query)
            t.expect(c, [("/%s shows %s" % (query, want or "no row"), only(*want))])
            t.keys("Enter")
            t.keys("Escape")
            t.expect(c, [("Esc clears the filter after /%s" % query,
                          lambda s: all(row(s, n) for n in NAMES))])
        t.keys("/")
        t.literal("http")
        t.expect(c, [("/http (a transport) keeps every row", lambda s: all(row(s, n) for n in NAMES))])
        t.literal(" ref")
        t.expect(c, [("/http ref: both terms must match", only("refused"))])
        t.keys("C-u")
        t.expect(c, [("Ctrl-U clears the line: every row again",
                      lambda s: all(row(s, n) for n in NAMES) and 'filter "' not in s.split("\n")[0])])
        t.literal("bogus:x")
        t.expect(c, [("an unknown field is named in the header",
                      lambda s: 'no field "bogus"' in s.split("\n")[0] and only()(s))])
        t.keys("Escape")
        t.expect(c, [("Esc clears it", lambda s: all(row(s, n) for n in NAMES))])
    finally:
        t.close(c)


def case_resize_keeps_selection(c):
    t, text = start(c, shared_server())
    try:
        # Rows sort by name: broken, everything, refused. Select refused.
        t.keys("End")
        text, ok = t.wait(lambda s: selected_name(s) == "refused")
        c.require(ok, "End selects the last row (refused); selected: %r" % selected_name(text))
        t.keys("Up")
        text, ok = t.wait(lambda s: selected_name(s) == "everything")
        c.require(ok, "Up selects everything")
        t.resize(50, 12)
        text, ok = t.wait(lambda s: len(s.split("\n")[0]) <= 50 and selected_name(s) == "everything")
        if not c.check(ok, "at 50x12 the selection is still everything"):
            c.attach("--- 50x12 ---\n" + text)
        t.resize(30, 8)
        text, ok = t.wait(lambda s: "needs 40x10" in s)
        c.check(ok, "below 40x10 a one-line notice")
        t.resize(COLS, ROWS)
        text, ok = t.wait(lambda s: row(s, "refused") is not None and selected_name(s) == "everything")
        if not c.check(ok, "back at %dx%d the selection is still everything" % (COLS, ROWS)):
            c.attach("--- back ---\n" + text)
        c.check(t.mcptop_pids() != [], "mcptop still runs after the resizes")
    finally:
        t.close(c)


def pane_term(t):
    """The TERM mcptop runs under in the pane (from its environment)."""
    for p in t.mcptop_pids():
        try:
            with open("/proc/%d/environ" % p, "rb") as f:
                for kv in f.read().split(b"\0"):
                    if kv.startswith(b"TERM="):
                        return kv[5:].decode()
        except OSError:
            pass
    return None


def mouse_encoding(term):
    """"sgr" when the terminal's kmous is the SGR 1006 prefix (ESC [ <), else
    "x10" (ESC [ M): what ncurses expects, so what a real terminal sends."""
    r = subprocess.run(["infocmp", "-1", term], stdout=subprocess.PIPE,
                       stderr=subprocess.DEVNULL, timeout=10)
    for line in r.stdout.decode(errors="replace").split("\n"):
        line = line.strip()
        if line.startswith("kmous="):
            return "sgr" if line.startswith("kmous=\\E[<") else "x10"
    return "x10"


def mouse_report(enc, x, y, release=False, button=0):
    """One mouse report as bytes, for a 0-based cell (x, y)."""
    if enc == "sgr":
        return ("\x1b[<%d;%d;%d%s" % (button, x + 1, y + 1, "m" if release else "M")).encode()
    # X10: ESC [ M, then button+32 (3 = release), column+33, row+33.
    return bytes([0x1b, 0x5b, 0x4d, 32 + (3 if release else button), 33 + x, 33 + y])


def send_bytes(t, data):
    """One write of raw bytes into the pane, as a terminal would send them."""
    t.tmux("send-keys", "-H", *["%02x" % b for b in data])


CLOCK_RE = re.compile(r"\b(\d\d:\d\d:\d\d)\b")


def header_clock(text):
    lines = text.split("\n")
    m = CLOCK_RE.search(lines[0]) if lines else None
    return m.group(1) if m else None


def wait_ticking(t, ticks=2, timeout=6.0):
    """With no input at all: the header clock moves `ticks` times (the loop
    turns, pings run, the screen is redrawn). The distinct clocks seen."""
    seen = []

    def pred(s):
        ck = header_clock(s)
        if ck is not None and (not seen or seen[-1] != ck):
            seen.append(ck)
        return len(seen) > ticks
    t.wait(pred, timeout)
    return seen


# tmux's default pane TERM (screen upstream, tmux-256color on Debian), then the
# TERM values users set: each with the mouse encoding its kmous names.
MOUSE_TERMS = (None, "screen", "screen-256color", "xterm-256color")


def case_mouse_click(c, term):
    t = Tui(["-c", fixture(shared_server())], term=term)
    try:
        text, ok = t.wait(settled, START_WAIT)
        c.require(ok, "the three rows settle")
        real = pane_term(t)
        enc = mouse_encoding(real)
        c.attach("pane TERM=%s, mouse reports: %s" % (real, enc))
        lines = text.split("\n")
        y = next((i for i, l in enumerate(lines) if row(l, "refused") == l), None)
        c.require(y is not None, "the refused row is on screen")
        # Press, then ~100 ms later the release, in a separate write: what a
        # real click looks like to the program.
        send_bytes(t, mouse_report(enc, 10, y))
        time.sleep(0.1)
        send_bytes(t, mouse_report(enc, 10, y, release=True))
        text, ok = t.wait(lambda s: selected_name(s) == "refused")
        c.check(ok, "a click (press, release 100 ms later) selects the refused row "
                "(selected: %r)" % selected_name(text))
        seen = wait_ticking(t)
        if not c.check(len(seen) > 2, "after the click the screen keeps updating with no key "
                       "(header clocks seen: %r)" % seen):
            c.attach("--- screen ---\n" + t.screen())
        # A right click, a wheel turn and a release with no press: events a
        # terminal sends that select nothing; none may stop the loop.
        up = next((i for i, l in enumerate(t.lines()) if row(l, "everything") == l), y)
        send_bytes(t, mouse_report(enc, 10, up, button=2))
        time.sleep(0.1)
        send_bytes(t, mouse_report(enc, 10, up, release=True, button=2))
        send_bytes(t, mouse_report(enc, 10, up, button=64))
        send_bytes(t, mouse_report(enc, 10, up, release=True))
        seen = wait_ticking(t, 1)
        c.check(len(seen) > 1, "after a right click, a wheel turn and a lone release the "
                "screen keeps updating (clocks seen: %r)" % seen)
        # A report cut short (its start, and nothing after it for good).
        send_bytes(t, b"\x1b[M" if enc == "x10" else b"\x1b[<0;5")
        seen = wait_ticking(t, 1)
        c.check(len(seen) > 1, "after a truncated mouse report the screen keeps updating "
                "(clocks seen: %r)" % seen)
        t.keys("?")
        text, ok = t.wait(lambda s: "mcptop help" in s)
        c.check(ok, "keys still work afterwards (? opens the help)")
        t.keys("Escape")
        t.wait(lambda s: "mcptop help" not in s)
    finally:
        t.close(c)


def case_mouse_toggle(c):
    t = Tui(["-c", fixture(shared_server()), "--no-mouse"])
    try:
        text, ok = t.wait(settled, START_WAIT)
        c.require(ok, "the three rows settle")
        flags = lambda: t.fmt("#{mouse_standard_flag}#{mouse_button_flag}#{mouse_any_flag}")
        c.eq(flags(), "000", "--no-mouse: the terminal keeps the mouse (no reporting mode on)")
        t.keys("m")
        text, ok = t.wait(lambda s: "mouse capture on" in s)
        c.check(ok, "m: the status line says mouse capture is on")
        deadline = time.monotonic() + KEY_WAIT
        while flags() == "000" and time.monotonic() < deadline:
            time.sleep(0.1)
        c.check(flags() != "000", "m: mouse reporting is on in the terminal (%s)" % flags())
        t.keys("m")
        text, ok = t.wait(lambda s: "mouse capture off" in s and "select" in s)
        c.check(ok, "m again: mouse capture off, text can be selected")
        deadline = time.monotonic() + KEY_WAIT
        while flags() != "000" and time.monotonic() < deadline:
            time.sleep(0.1)
        c.eq(flags(), "000", "m again: mouse reporting off in the terminal")
    finally:
        t.close(c)


def case_stale_marker(c):
    # A loop that does not turn, as the outside sees one: mcptop stopped
    # (SIGSTOP) for 4.5 s, then SIGCONT (Tui.stall). Its watchdog's SIGALRM,
    # due while it was stopped, runs before the loop's first turn and writes
    # STALE over the header; the loop's next frame paints it over, so the
    # marker is read from the pane's raw output (pipe-pane).
    t = Tui(["-c", fixture(shared_server())])
    try:
        text, ok = t.wait(settled, START_WAIT)
        c.require(ok, "the three rows settle")
        raw = mcptest.tmpdir() / ("stale-%s.out" % t.sock)
        t.pipe(raw)
        time.sleep(0.3)
        c.require(t.stall(4.5), "mcptop runs under the pane")
        stale = lambda: re.findall(rb"\x1b\[0;1;7m STALE (\d+)s \x1b\[0m",
                                   raw.read_bytes() if raw.exists() else b"")
        deadline = time.monotonic() + 4.0
        while not stale() and time.monotonic() < deadline:
            time.sleep(0.1)
        seen = [int(n) for n in stale()]
        c.check(seen and max(seen) >= 4,
                "the watchdog wrote STALE Ns (N >= 4) before the loop turned again: %r" % seen)
        text, ok = t.wait(lambda s: "STALE" not in s and
                          re.search(r"not updated for ([4-9]|\d\d+) s", s) is not None, 6.0)
        if not c.check(ok, "once the loop runs again the marker is gone and the status line "
                       "says how long the screen was not updated (4 s or more)"):
            c.attach("--- screen ---\n" + text)
        # Keys typed while the loop is blocked wait in the terminal; they are
        # all read, in order, when it runs again: Down, then j, moves two rows.
        first = selected_name(text)
        names = [l[3:].split()[0] for l in text.split("\n")
                 if l[3:].split() and l[3:].split()[0] in ("everything", "refused", "broken")]
        c.require(first in names and names.index(first) == 0, "the first row selected: %r" % names)
        t.stall(2.5, during=lambda: t.keys("Down", "j"))
        text = t.expect(c, [("Down and j typed during the stall both moved the selection: %s"
                             % names[2], lambda s: selected_name(s) == names[2])])
    finally:
        t.close(c)


def case_no_color(c):
    t, text = start(c, shared_server(), env={"NO_COLOR": "1"})
    try:
        t.keys("Enter")     # the detail pane too
        t.wait(lambda s: "exchanges" in s)
        esc = t.screen(escapes=True)
        bad = []
        for m in re.finditer(r"\x1b\[([0-9;:]*)m", esc):
            params = [p for p in re.split(r"[;:]", m.group(1)) if p != ""]
            for p in params:
                n = int(p)
                if 30 <= n <= 49 or 90 <= n <= 107:
                    if n not in (39, 49):   # "default colour" resets are not colour
                        bad.append(m.group(0))
        c.check(not bad, "no SGR colour codes under NO_COLOR (found %r)" % sorted(set(bad))[:5])
        t.expect(c, [("the selection shows as a glyph", lambda s: selected_name(s) is not None)])
    finally:
        t.close(c)


def case_kill_turns_unreachable(c):
    srv = mcptest.everything_http()
    t, text = start(c, srv)
    try:
        t0 = time.monotonic()
        srv.kill()
        ev = lambda s: row(s, "everything") or ""
        text = t.expect(c, [
            ("after the kill, everything shows unreachable / connect_refused / no",
             lambda s: "unreachable" in ev(s) and "connect_refused" in ev(s) and " no " in ev(s)),
            ("header: down 2", lambda s: header_counts(s).get("down") == 2),
            ("incident line: connect_refused 2", lambda s: "connect_refused 2" in s.split("\n")[2]),
            ("its round trip is blank, not the last good one (tools, then the failure)",
             lambda s: re.search(r"\s13\s+connect_refused", ev(s)) is not None),
        ], KILL_BOUND)
        c.attach("turned unreachable after %.1fs" % (time.monotonic() - t0))
    finally:
        t.close(c)
        srv.stop()


def case_end_selected(c):
    t, text = start(c, shared_server())
    try:
        t.keys("Home")
        t.keys("Down")
        text, ok = t.wait(lambda s: selected_name(s) == "everything")
        c.require(ok, "everything selected")
        t.keys("x")
        text, ok = t.wait(lambda s: "y: end and reconnect" in s and "s: end and stop" in s)
        c.require(ok, "x asks: y reconnects, s stops, n no")
        t.keys("y")
        text, ok = t.wait(lambda s: "ending not available yet" in s or "ending the session" in s)
        c.require(ok, "x y answers on the status line")
        if "ending not available yet" in text:
            mcptest.log("SKIP end_selected: server_end returned NULL (endings not available in "
                       "this engine)")
            return
        t.keys("e")
        text, ok = t.wait(lambda s: "ENDINGS" in s and "terminated" in s and "settled" in s, 10.0)
        if not c.check(ok, "the endings pane lists everything: terminated, settled"):
            c.attach("--- screen ---\n" + text)
        t.keys("e")
        text, ok = t.wait(lambda s: row(s, "everything") is not None and
                          "reachable" in row(s, "everything"), 10.0)
        c.check(ok, "everything is dialed again after its ending (x redials)")
    finally:
        t.close(c)


class SlowDelete:
    """A minimal MCP endpoint (in this process, on a thread) whose DELETE
    answers only after `delay` seconds: an ending that takes its time."""

    def __init__(self, delay):
        import json
        import threading
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def _send(self, code, body=b"", ctype=None):
                self.send_response(code)
                if ctype:
                    self.send_header("Content-Type", ctype)
                self.send_header("Mcp-Session-Id", "slowsession0123456789")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                n = int(self.headers.get("Content-Length", 0))
                msg = json.loads(self.rfile.read(n) or b"{}")
                if "id" not in msg:
                    return self._send(202)
                m = msg.get("method")
                if m == "initialize":
                    res = {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}},
                           "serverInfo": {"name": "slow", "version": "1"}}
                elif m == "tools/list":
                    res = {"tools": [{"name": "t1", "inputSchema": {"type": "object"}}]}
                else:
                    res = {}
                body = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": res}).encode()
                self._send(200, body, "application/json")

            def do_GET(self):
                self._send(405)

            def do_DELETE(self):
                time.sleep(delay)
                self._send(204)

        self.httpd = ThreadingHTTPServer((mcptest.LOOPBACK, 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.url = "http://%s:%d/mcp" % (mcptest.LOOPBACK, self.port)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


def case_quit_progress_and_second_q(c):
    slow = SlowDelete(delay=30)
    cfg = mcptest.write_config({"slow": {"url": slow.url, "teardown_ms": 5000}},
                               mcptop={"ping_interval_s": PING_INTERVAL_S})
    t = Tui(["-c", cfg])
    try:
        text, ok = t.wait(lambda s: row(s, "slow") is not None and "reachable" in row(s, "slow"),
                          START_WAIT)
        c.require(ok, "the slow server is reachable")
        t.keys("q")
        t.expect(c, [
            ("q shows the progress line while the DELETE runs",
             lambda s: "quitting: ending 1 sessions" in s and "q again" in s),
            ("the row shows it is ending", lambda s: "ending" in row(s, "slow")),
        ])
        t0 = time.monotonic()
        t.keys("q")
        text, ok = t.wait(lambda s: "__EXIT=" in s, 2.0)
        c.check(ok and "__EXIT=0__" in text, "a second q quits at once (exit 0)")
        c.check("not answered yet when mcptop left" in text,
                "the summary says the ending was left unanswered: %r"
                % [l for l in text.split("\n") if "mcptop:" in l])
        c.attach("second q took %.2fs" % (time.monotonic() - t0))
    finally:
        t.close(c)
        slow.close()


def case_sigterm_restores_terminal(c):
    t, text = start(c, shared_server())
    try:
        pids = t.mcptop_pids()
        c.require(pids, "mcptop runs under the pane")
        os.kill(pids[0], signal.SIGTERM)
        text, ok = t.wait(lambda s: "__EXIT=" in s, QUIT_BOUND)
        c.check(ok and "__EXIT=0__" in text, "SIGTERM: mcptop ends its sessions and exits 0 "
                "within %.0fs" % QUIT_BOUND)
        c.eq(t.fmt("#{alternate_on}"), "0", "alternate screen left after SIGTERM")
        c.eq(t.fmt("#{cursor_flag}"), "1", "cursor visible again after SIGTERM")
    finally:
        t.close(c)


def case_quit_restores_terminal(c):
    t, text = start(c, shared_server())
    try:
        pids = t.mcptop_pids()
        c.require(pids, "mcptop runs under the pane")
        c.eq(t.fmt("#{alternate_on}"), "1", "the TUI uses the alternate screen")
        t0 = time.monotonic()
        t.keys("q")
        text, ok = t.wait(lambda s: "__EXIT=" in s, QUIT_BOUND)
        if not c.check(ok, "q exits within %.0fs" % QUIT_BOUND):
            c.attach("--- screen ---\n" + text)
            return
        c.attach("q took %.1fs" % (time.monotonic() - t0))
        c.check("__EXIT=0__" in text, "exit code 0: %r" % re.findall(r"__EXIT=\d+__", text))
        c.check("NAME" not in text and "incidents" not in text, "the table is gone from the terminal")
        summary = [l for l in text.split("\n") if l.startswith("mcptop: ended")]
        c.check(summary and summary[0].startswith("mcptop: ended 1 session: 1 terminated")
                and "1 server had no session to end" in summary[0],
                "one summary line on the restored terminal: %r" % summary)
        c.eq(t.fmt("#{alternate_on}"), "0", "alternate screen left")
        c.eq(t.fmt("#{cursor_flag}"), "1", "cursor visible again")
        c.eq(t.fmt("#{keypad_cursor_flag}"), "0", "cursor keys back in normal mode")
        c.eq(t.fmt("#{mouse_any_flag}") + t.fmt("#{mouse_standard_flag}"), "00", "mouse reporting off")
        alive = [p for p in pids if os.path.exists("/proc/%d" % p)]
        c.check(not alive, "no mcptop process left (%r)" % alive)
    finally:
        t.close(c)


def case_bad_theme(c):
    bad = mcptest.write_file('{"roles": {"reachable": {"fg": "grean"}}}')
    t = Tui(["-c", fixture(shared_server()), "--theme", bad])
    try:
        t.expect(c, [
            ("the rows are drawn", lambda s: "reachable" in (row(s, "everything") or "")),
            ("a broken theme names the role and the problem on the status line",
             lambda s: "grean" in s.rstrip("\n").split("\n")[-1]),
            ("falls back to the dark theme", lambda s: "theme dark" in s.split("\n")[0]),
        ], START_WAIT)
    finally:
        t.close(c)

# --------------------------------------------------------------------------
# The fault lab (tests/faultlab): servers that answer with an error, a 502,
# a changed tool list.

_lab = None


def lab():
    global _lab
    if _lab is None:
        import faultlab
        _lab = faultlab.FaultLab().start()
    return _lab


def cell_role_sgr(t, name, word):
    """The SGR parameters in force where `word` is drawn in the row of
    server `name` (from capture-pane -e), or None."""
    for line in t.screen(escapes=True).split("\n"):
        plain = re.sub(r"\x1b\[[0-9;:]*m", "", line)
        if row(plain, name) != plain:
            continue
        sgr = ""
        i = 0
        while i < len(line):
            m = re.match(r"\x1b\[([0-9;:]*)m", line[i:])
            if m:
                sgr = "0" if m.group(1) in ("", "0") else sgr + ";" + m.group(1)
                i += m.end()
                continue
            if line.startswith(word, i):
                return sgr
            i += 1
    return None


def case_failing_server(c):
    """A server that answers every ping with a JSON-RPC error: reachable (an
    answer proves reach), and visibly failing."""
    L = lab()
    cfg = mcptest.write_config({
        "healthy": {"url": L.url("/healthy")},
        "rpc-errors": {"url": L.url("/rpcerror/ping")},
        "gateway-502": {"url": L.url("/html502/ping")},
    }, mcptop={"ping_interval_s": PING_INTERVAL_S})
    t = Tui(["-c", cfg])
    try:
        rpc = lambda s: row(s, "rpc-errors") or ""
        gw = lambda s: row(s, "gateway-502") or ""
        text = t.expect(c, [
            ("rpc-errors stays reachable", lambda s: "\u25cf reachable" in rpc(s)),
            ("its current failure shows with its streak: protocol x3 or more",
             lambda s: re.search(r"protocol \u00d7([3-9]|\d\d)", rpc(s)) is not None),
            ("its history strip marks the answers with an error",
             lambda s: "\u2580\u2580" in rpc(s)),
            ("its round trip is blank (tools, then the failure)",
             lambda s: re.search(r"\s3\s+protocol", rpc(s)) is not None),
            ("its session id is marked stale (~)", lambda s: re.search(r"\s~\S{4,}", rpc(s))),
            ("gateway-502: the status and its reason in the row",
             lambda s: "502 bad gateway" in gw(s) and "http_status" in gw(s)),
            ("the incident line splits http_status by status and reason",
             lambda s: re.search(r"http_status 502 bad gateway \u00d71", s.split("\n")[2])),
            ("healthy shows a round trip and no failure",
             lambda s: re.search(r"\s3\s+\d+(\.\d)?\s*$", (row(s, "healthy") or "").split("\u2588")[0]
                                 .rstrip()) is not None),
        ], START_WAIT)
        c.attach("--- screen ---\n" + text)
        sgr = cell_role_sgr(t, "rpc-errors", "protocol")
        c.check(sgr is not None and "33" in sgr.split(";") and "2" not in sgr.split(";"),
                "the current failure is drawn in the warning role (yellow, not dim): %r" % sgr)
        # Sort by round trip: the slowest first, and a server whose last
        # exchange failed is never "the slowest".
        t.keys("R")
        t.expect(c, [
            ("R sorts by round trip", lambda s: "sort round trip" in s.split("\n")[0]),
            ("the healthy server is on top", lambda s: first_row(s) == "healthy"),
        ])
        t.keys("I")
        t.expect(c, [
            ("I reverses the sort", lambda s: "\u25b4" in s.split("\n")[0]),
            ("reversed, the failing servers still come last",
             lambda s: first_row(s) == "healthy"),
        ])
        t.keys("Home")
        t.keys("Down")
        t.expect(c, [("rpc-errors selected", lambda s: selected_name(s) in ("rpc-errors", "gateway-502"))])
        t.keys("N")
        t.keys("Home")
        t.keys("End")
        t.expect(c, [("N sorts by name: rpc-errors last", lambda s: selected_name(s) == "rpc-errors")],
                 require=True)
        t.keys("Enter")
        t.expect(c, [("the detail pane says failing xN: protocol",
                      lambda s: re.search(r"failing \u00d7\d+: protocol", s) is not None)])
    finally:
        t.close(c)


def first_row(text):
    """The name in the first table row."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if "NAME" in line and "HEALTH" in line and i + 1 < len(lines):
            cells = lines[i + 1][3:].split()
            return cells[0] if cells else None
    return None


def case_tools_change(c):
    L = lab()
    cfg = mcptest.write_config({
        "tools-change": {"url": L.url("/listchanged?after_ms=700&add=2")},
    }, mcptop={"ping_interval_s": PING_INTERVAL_S})
    t = Tui(["-c", cfg])
    try:
        tc = lambda s: row(s, "tools-change") or ""
        t.expect(c, [
            ("the row shows 5 tools, changed once (\u03941)", lambda s: "5 \u03941" in tc(s)),
            ("the incident line counts it", lambda s: "tools changed" in s.split("\n")[2]),
        ], START_WAIT)
        t.keys("Enter")
        t.expect(c, [
            ("the detail pane says what changed",
             lambda s: "the tool list changed 1 time" in s and "2 added, 0 removed" in s),
            ("and names the new tools", lambda s: re.search(r"added\s+\+\S+, \+\S+", s) is not None),
        ])
    finally:
        t.close(c)


LONG = "a-server-name-of-forty-characters-long-x"


def case_columns(c):
    """Names are not cut at ordinary widths; the rest gives way in order; a
    line that does not fit ends with an ellipsis."""
    cfg = mcptest.write_config({
        "everything-http": {"url": shared_server().url},
        "everything-stdio": {"url": "http://127.0.0.1:%d/mcp" % mcptest.free_port()},
        LONG: {"url": "http://127.0.0.1:%d/mcp" % mcptest.free_port()},
    }, mcptop={"ping_interval_s": PING_INTERVAL_S})
    t = Tui(["-c", cfg], cols=100)
    try:
        for cols in (100, 80, 60):
            if cols != 100:
                t.resize(cols, ROWS)
            third = cols // 3
            cut = LONG[:third - 1] + "\u2026"
            t.expect(c, [
                ("%d cols: everything-http shown whole" % cols,
                 lambda s: row(s, "everything-http") is not None),
                ("%d cols: everything-stdio shown whole" % cols,
                 lambda s: row(s, "everything-stdio") is not None),
                ("%d cols: the 40-character name takes a third (%d) and ends in an ellipsis" % (cols, third),
                 lambda s, cut=cut: row(s, cut) is not None),
                ("%d cols: no line is wider than the screen" % cols,
                 lambda s, cols=cols: max(len(l) for l in s.split("\n")) <= cols),
                ("%d cols: the title line, too long, ends with an ellipsis" % cols,
                 lambda s, cols=cols: s.split("\n")[0].rstrip().endswith("\u2026")),
                ("%d cols: HEALTH and LAST FAILURE stay" % cols,
                 lambda s: "HEALTH" in s and "LAST FAILURE" in s),
            ], START_WAIT if cols == 100 else KEY_WAIT)
        text = t.screen()
        c.check("PROTOCOL" not in text and "STRK" not in text,
                "at 60 columns PROTOCOL and STRK gave way")
    finally:
        t.close(c)


def case_rows_of_n_and_messages(c):
    servers = {"s%02d" % i: {"url": "http://127.0.0.1:%d/mcp" % mcptest.free_port()} for i in range(40)}
    cfg = mcptest.write_config(servers, mcptop={"ping_interval_s": 5})
    t = Tui(["-c", cfg])
    rows = ROWS - 3 - 1 - 1     # header, column titles, status line
    try:
        t.expect(c, [("rows 1-%d of 40" % rows, lambda s: "rows 1-%d of 40" % rows in s.split("\n")[0])],
                 START_WAIT)
        t.keys("End")
        t.expect(c, [("End: rows %d-40 of 40" % (41 - rows),
                      lambda s: "rows %d-40 of 40" % (41 - rows) in s.split("\n")[0])])
        t.keys("/")
        t.literal("s1")
        t.expect(c, [("a filter: rows 1-10 of 10", lambda s: "rows 1-10 of 10" in s.split("\n")[0])])
        t.keys("Escape")
        t.keys("s")
        t.expect(c, [("s: the sort message", lambda s: "sort: transport" in s)])
        t0 = time.monotonic()
        t.expect(c, [("the message expires by itself (no key)",
                      lambda s: "sort: transport" not in s and "q quit" in s)],
                 UI_MESSAGE_S + 3.0)
        c.attach("message gone after %.1fs" % (time.monotonic() - t0))
    finally:
        t.close(c)


UI_MESSAGE_S = 5.0


def case_invalid_entry(c):
    t, _ = start(c, shared_server())
    try:
        t.keys("Home")
        t.expect(c, [("broken selected", lambda s: selected_name(s) == "broken")], require=True)
        t.keys("x")
        t.expect(c, [("x on an invalid entry says why nothing happens, without asking",
                      lambda s: "broken: no session to end" in s and "invalid_config" in
                      s.rstrip("\n").split("\n")[-1] and "(y/n)" not in s)])
        t.keys("r")
        t.expect(c, [("r on an invalid entry says why it cannot redial",
                      lambda s: "broken: cannot redial" in s and "fix it" in s)])
        t.keys("e")
        t.expect(c, [("nothing was ended", lambda s: "ENDINGS 0" in s)])
    finally:
        t.close(c)


def sgr_runs(esc):
    """(params in force, text) for each run of text in a capture-pane -e screen."""
    out = []
    sgr = []
    for part in re.split(r"(\x1b\[[0-9;:]*m)", esc):
        m = re.match(r"\x1b\[([0-9;:]*)m", part)
        if m:
            ps = [p for p in re.split(r"[;:]", m.group(1)) if p != ""]
            if not ps or ps == ["0"]:
                sgr = []
            else:
                sgr = sgr + ps
            continue
        if part:
            out.append((list(sgr), part))
    return out


def has_bg(params):
    """Whether SGR params (accumulated) leave a non-default background."""
    bg = False
    i = 0
    while i < len(params):
        p = int(params[i])
        if p == 0 or p == 49:
            bg = False
        elif 40 <= p <= 47 or 100 <= p <= 107:
            bg = True
        elif p in (38, 48) and i + 1 < len(params):
            if p == 48:
                bg = True
            i += 2 if params[i + 1] == "5" else 4
        i += 1
    return bg


def case_light_theme(c):
    t = Tui(["-c", fixture(shared_server()), "--theme", "light"])
    try:
        t.expect(c, [("the rows settle under the light theme", settled),
                     ("theme light", lambda s: "theme light" in s.split("\n")[0])], START_WAIT,
                 require=True)
        runs = sgr_runs(t.screen(escapes=True))
        naked = [txt for params, txt in runs if txt.strip() and not has_bg(params)]
        c.check(not naked, "every piece of text has the theme's background, so none "
                "vanishes on a dark terminal (without: %r)" % naked[:5])
    finally:
        t.close(c)


def main():
    try:
        mcptest.tmux_bin()
        mcptest.require_mcptop()
    except mcptest.SetupError as e:
        print("setup: %s" % e)
        print("0 passed, 1 failed")
        sys.exit(1)
    rep.run("rows and header counts", case_rows_and_header)
    rep.run("? shows help", case_help)
    rep.run("/ filters by name, failure kind, tag", case_filter)
    rep.run("resize to 50x12 and back keeps the selection", case_resize_keeps_selection)
    for term in MOUSE_TERMS:
        rep.run("TERM=%s: a click with the release in a separate write selects a row and "
                "never stops the loop" % (term or "(tmux default)"),
                lambda c, term=term: case_mouse_click(c, term))
    rep.run("--no-mouse, and m switches mouse capture", case_mouse_toggle)
    rep.run("a blocked loop shows STALE, then says for how long", case_stale_marker)
    rep.run("answered with an error: failing xN, marks, no stale RTT; 502 bad gateway; R and I",
            case_failing_server)
    rep.run("a changed tool list: a marker, a counter, the diff", case_tools_change)
    rep.run("columns: names whole, a third at most, ellipsis at the edge", case_columns)
    rep.run("rows x-y of N; a message expires", case_rows_of_n_and_messages)
    rep.run("x and r on an invalid entry say why", case_invalid_entry)
    rep.run("the light theme paints its background", case_light_theme)
    rep.run("NO_COLOR: no colour escapes", case_no_color)
    rep.run("killed server turns unreachable (connect_refused, no)", case_kill_turns_unreachable)
    rep.run("x ends the selected session", case_end_selected)
    rep.run("broken theme: clear error, dark fallback", case_bad_theme)
    rep.run("q with a slow ending: progress line; a second q quits at once",
            case_quit_progress_and_second_q)
    rep.run("SIGTERM restores the terminal", case_sigterm_restores_terminal)
    rep.run("q restores the terminal and exits 0", case_quit_restores_terminal)
    mcptest._kill_tmux_servers()
    rep.finish()


if __name__ == "__main__":
    main()
