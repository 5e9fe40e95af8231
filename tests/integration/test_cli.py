#!/usr/bin/env python3
"""The command line itself: usage errors, the help (each command's usage
listed by mcptop --help as its own --help gives it), --version, the lists
the shell completions read (end --list-servers, tui --list-themes) and
check's text table, padded by display width.

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_cli.py
"""

import os
import re
import shutil
import subprocess
import sys
import unicodedata

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402

rep = mcptest.Reporter("the command line: usage errors, --version, lists, check's table")

# (argv, the command word the messages must name or None, what the first line says)
BAD_USAGE = [
    (["--bogus"], None, "unknown option '--bogus'"),
    (["frobnicate"], None, "unknown command 'frobnicate'"),
    (["tui", "--bogus"], "tui", "unknown option '--bogus'"),
    (["tui", "--theme"], "tui", "option '--theme' needs a value"),
    (["tui", "http://127.0.0.1:9/mcp", "extra"], "tui", "unexpected argument"),
    (["check", "--bogus=1"], "check", "unknown option '--bogus'"),
    (["check", "-x"], "check", "unknown option '-x'"),
    (["check", "--json", "-xh"], "check", "unknown option '-x'"),
    (["check", "--timeout"], "check", "option '--timeout' needs a value"),
    (["check", "-c"], "check", "option '-c' needs a value"),
    (["check", "--json=yes"], "check", "option '--json' takes no value"),
    (["check", "--timeout", "soon"], "check", "--timeout takes a positive number"),
    (["check", "--pings", "0"], "check", "--pings takes a count"),
    (["check", "not-a-url"], "check", "unexpected argument 'not-a-url'"),
    (["watch", "--json"], "watch", "unknown option '--json'"),
    (["watch", "--config"], "watch", "option '--config' needs a value"),
    (["end", "--teardown", "-5"], "end", "--teardown takes a positive number"),
    (["end", "--l", "x"], "end", "ambiguous option '--l'"),
    (["end", "--server"], "end", "option '--server' needs a value"),
    (["audit", "--parallel", "0"], "audit", "--parallel takes a count"),
    (["audit", "--timeout", "x"], "audit", "--timeout takes a positive number"),
    (["audit", "--server"], "audit", "option '--server' needs a value"),
]


def a_usage_errors(c):
    # A link with a distinctive path: the messages must not name the binary's path.
    link = mcptest.tmpdir() / "distinctive-dir-name" / "mcptop"
    link.parent.mkdir(exist_ok=True)
    if not link.exists():
        os.symlink(os.path.abspath(mcptest.MCPTOP_BIN), link)
    for argv, cmd, what in BAD_USAGE:
        r = mcptest.run([str(link)] + argv, timeout=10, env=mcptest.mcptop_env())
        label = " ".join(argv)
        c.no_crash(r, label)
        c.eq(r.rc, 2, "%s: exit code" % label)
        c.eq(r.stdout, "", "%s: nothing on stdout" % label)
        lines = r.stderr.splitlines()
        prefix = "mcptop %s: " % cmd if cmd else "mcptop: "
        helpcmd = "mcptop %s --help" % cmd if cmd else "mcptop --help"
        if not c.eq(len(lines), 2, "%s: two lines on stderr (%r)" % (label, r.stderr)):
            continue
        c.check(lines[0].startswith(prefix), "%s: first line starts %r: %r" % (label, prefix, lines[0]))
        c.check(what in lines[0], "%s: first line says %r: %r" % (label, what, lines[0]))
        c.eq(lines[1], "Try '%s' for more information." % helpcmd, "%s: second line" % label)
        c.check("distinctive-dir-name" not in r.stderr, "%s: the binary's path is not named" % label)
        c.check("Usage" not in r.stderr, "%s: no help text on stderr" % label)


def a_no_server_named(c):
    cfg = mcptest.write_config({"alpha": {"url": "http://127.0.0.1:9/mcp"}})
    r = mcptest.run_mcptop(["end", "-c", cfg, "--server", "beta"], timeout=10)
    c.attach(r.describe())
    c.eq(r.rc, 2, "exit code")
    lines = r.stderr.splitlines()
    c.check(len(lines) == 2 and lines[0].startswith("mcptop end: no server named 'beta'"),
            "one line naming the server: %r" % r.stderr)
    c.check(len(lines) == 2 and lines[1] == "Try 'mcptop end --help' for more information.",
            "then where the help is: %r" % r.stderr)


def b_help_on_stdout(c):
    for argv in (["--help"], ["tui", "--help"], ["check", "--help"], ["watch", "--help"],
                 ["end", "--help"], ["audit", "--help"]):
        r = mcptest.run_mcptop(argv, timeout=10)
        c.no_crash(r)
        c.eq(r.rc, 0, "%s: exit code" % " ".join(argv))
        c.check(r.stdout.startswith("Usage: mcptop"), "%s: usage on stdout" % " ".join(argv))
        c.eq(r.stderr, "", "%s: stderr" % " ".join(argv))


COMMANDS = ["tui", "check", "watch", "end", "audit", "login", "logout", "serve", "tap", "cancel",
            "configs", "replay", "report"]
SOURCES = "[-c FILE]... [--from CLIENT] [URL] [-v] [--log FILE] [--shard K/N]"


def _forms(lines):
    """Synopsis lines as forms, each on one line: a form opens at a line
    "       mcptop ..." or "  CMD ...", the more indented lines after it
    continue it."""
    forms = []
    for line in lines:
        if forms and not line.startswith("       mcptop ") and line[:1] == " " and \
                not re.match(r"^  \S", line):
            forms[-1] += " " + line.strip()
        else:
            forms.append(line.strip())
    return [re.sub(r"\s+", " ", f).strip() for f in forms]


def b_help_usage_once(c):
    """Each command's usage is written once (its cli_entry): mcptop --help
    lists every form of it exactly as `mcptop CMD --help` gives it, the
    sources shown as [SOURCES]."""
    top = mcptest.run_mcptop(["--help"], timeout=10).stdout
    listed = top.split("Commands:\n", 1)[1].split("\n\n", 1)[0].split("\n")
    listed = [l for l in listed if not l.startswith(" " * 22)]     # the summaries
    listed = _forms(listed)
    for cmd in COMMANDS:
        r = mcptest.run_mcptop([cmd, "--help"], timeout=10)
        c.eq(r.rc, 0, "%s --help: exit code" % cmd)
        synopsis = r.stdout.split("\n\n", 1)[0].split("\n")
        c.require(synopsis[0].startswith("Usage: mcptop "), "%s --help: a usage first" % cmd)
        synopsis[0] = "       " + synopsis[0][len("Usage: "):].replace("mcptop [tui]", "mcptop tui")
        own = []
        for f in _forms(synopsis):
            f = f[len("mcptop "):].replace(SOURCES, "[SOURCES]").replace(" [-- CMD [ARG]...]", "")
            if f.split(" ", 1)[0] == cmd:
                own.append(f)
        shown = [f for f in listed if f.split(" ", 1)[0] == cmd]
        c.check(own, "%s --help: its synopsis read: %r" % (cmd, synopsis))
        c.eq(shown, own, "mcptop --help lists %s's usage as %s --help gives it" % (cmd, cmd))


def _tool_version(argv):
    try:
        out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             timeout=10, check=True).stdout.decode().strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return out or None


def c_version(c):
    r = mcptest.run_mcptop(["--version"], timeout=10)
    c.attach(r.describe())
    c.no_crash(r)
    c.eq(r.rc, 0, "exit code")
    lines = r.stdout.splitlines()
    c.require(len(lines) == 5, "five lines: %r" % lines)
    m = re.fullmatch(r"mcptop (\d+\.\d+\.\d+) \(commit ([0-9a-f]{7,40}|unknown)\)", lines[0])
    c.require(m, "first line: mcptop VERSION (commit HASH): %r" % lines[0])
    c.eq(m.group(1), mcptest.project_version(), "the version is CMake's PROJECT_VERSION")
    git = shutil.which("git")
    if git and (mcptest.REPO_DIR / ".git").exists():
        # Configured from a git tree: a commit of this repository.
        c.check(m.group(2) != "unknown", "a commit, not 'unknown', in a git tree")
        ok = subprocess.run([git, "-C", str(mcptest.REPO_DIR), "cat-file", "-e",
                             m.group(2) + "^{commit}"], stderr=subprocess.DEVNULL).returncode == 0
        c.check(ok, "commit %s is a commit of this repository" % m.group(2))
    # Each library as linked; the -dev packages' versions are the runtime's on Debian.
    m = re.fullmatch(r"libcurl (\S+) \(TLS: (\S+)\)", lines[1])
    c.check(m, "libcurl line with its TLS backend: %r" % lines[1])
    want = _tool_version(["pkg-config", "--modversion", "libcurl"])
    if m and want:
        c.eq(m.group(1), want, "libcurl version (pkg-config libcurl)")
    if m:
        c.check(re.match(r"(OpenSSL|GnuTLS|mbedTLS|wolfSSL|rustls|BoringSSL|LibreSSL)/", m.group(2)),
                "a TLS backend with its version: %r" % m.group(2))
    want = _tool_version(["pkg-config", "--modversion", "ncursesw"])
    c.check(re.fullmatch(r"ncurses \d+\.\d+\.\d+", lines[2]), "ncurses line: %r" % lines[2])
    if want:
        c.eq(lines[2], "ncurses " + want, "ncurses version (pkg-config ncursesw)")
    want = _tool_version(["dpkg-query", "-W", "-f", "${Version}", "libev4"])
    c.check(re.fullmatch(r"libev \d+\.\d+", lines[3]), "libev line: %r" % lines[3])
    if want:
        upstream = re.sub(r"^\d+:", "", want).split("-")[0]
        c.eq(lines[3], "libev " + upstream, "libev version (dpkg libev4)")
    want = _tool_version(["pkg-config", "--modversion", "libcjson"])
    c.check(re.fullmatch(r"cJSON \d+\.\d+\.\d+", lines[4]), "cJSON line: %r" % lines[4])
    if want:
        c.eq(lines[4], "cJSON " + want, "cJSON version (pkg-config libcjson)")


def d_lists(c):
    names = ["alpha", "with space", "日本語", "z-last"]
    cfg = mcptest.write_config({n: {"url": "http://127.0.0.1:9/mcp"} for n in names})
    r = mcptest.run_mcptop(["end", "-c", cfg, "--list-servers"], timeout=10)
    c.attach(r.describe())
    c.eq(r.rc, 0, "end --list-servers: exit code")
    c.eq(r.stdout.splitlines(), names, "end --list-servers: the names, in config order")
    r = mcptest.run_mcptop(["end", "--list-servers", "http://127.0.0.1:9/mcp"], timeout=10)
    c.eq(r.rc, 0, "end --list-servers URL: exit code")
    c.eq(len(r.stdout.splitlines()), 1, "end --list-servers URL: one name")
    r = mcptest.run_mcptop(["tui", "--list-themes"], timeout=10)
    c.attach(r.describe())
    c.eq(r.rc, 0, "tui --list-themes: exit code")
    themes = r.stdout.splitlines()
    c.eq(themes[:3], ["dark", "light", "high-contrast"], "the shipped themes first")
    extra = mcptest.tmpdir() / "more-themes"
    extra.mkdir(exist_ok=True)
    (extra / "solarized-test.json").write_text('{"roles": {}}')
    r = mcptest.run_mcptop(["tui", "--list-themes"], timeout=10,
                           env={"MCPTOP_THEMES": str(extra)})
    c.check("solarized-test" in r.stdout.splitlines(), "a theme in $MCPTOP_THEMES is listed: %r" % r.stdout)


def cols(s):
    """Display columns of s, as a terminal shows it (East Asian wide = 2, combining = 0)."""
    n = 0
    for ch in s:
        if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
            continue
        n += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return n


def e_check_table_widths(c):
    port = mcptest.free_port()  # nothing listens: connect_refused, fast
    url = "http://127.0.0.1:%d/mcp" % port
    names = {
        "ascii": "ascii",
        "日本語のサーバー名前がとても長い": None,      # wide, cut
        "café-naïve": "café-naïve",
        "e\u0301-combining": "e\u0301-combining",     # a combining accent: no column
        "emoji-\U0001F680\U0001F680-x": "emoji-\U0001F680\U0001F680-x",
        "abcdefghijklmnopqrstuvwxyz": "abcdefghijklmnopqrs\u2026",
        "exactly-twenty-chars": "exactly-twenty-chars",
        "中文二十列正好十个字": "中文二十列正好十个字",  # 10 wide = 20 columns: fits
        "中文二十一列正好十个字x": None,               # 21 columns: cut
    }
    cfg = mcptest.write_config({n: {"url": url} for n in names})
    for locale in ("C.UTF-8", "C"):
        r = mcptest.run_mcptop(["check", "-c", cfg, "--timeout", "3000", "--pings", "1"],
                               timeout=30, env={"LC_ALL": locale, "LANG": locale})
        c.attach(r.describe())
        c.no_crash(r)
        c.eq(r.rc, 1, "exit code (every server refused)")
        lines = r.stdout.splitlines()
        rows = [l for l in lines if l and not l.startswith("  ")]
        c.require(len(rows) >= 2 + 2 * len(names), "a table and a pings table: %r" % lines)
        table, pings = rows[:1 + len(names)], rows[1 + len(names):]
        c.require(pings[0].startswith("PINGS"), "the pings table follows: %r" % pings[0])
        for row in table[1:] + pings[1:]:
            # The name cell is 20 columns, then one space, then the next column.
            i = row.find(" http ") if row in table else row.find("      0 ")
            c.require(i > 0, "row has its second column: %r" % row)
            name_cell = row[:i]
            c.eq(cols(name_cell), 20, "%s: the name cell is 20 columns wide: %r" % (locale, row))
        shown = [row[:row.find(" http ")].rstrip() for row in table[1:]]
        for full, want in names.items():
            hits = [s for s in shown if s == want] if want else \
                [s for s in shown if s.endswith("\u2026") and full.startswith(s[:-1])]
            c.check(len(hits) == 1, "%s: %r shown as %r: %r" % (locale, full, want or "cut + …", shown))
        for s in shown:
            if s.endswith("\u2026"):
                c.check(cols(s) in (19, 20), "%s: a cut name fills the cell: %r" % (locale, s))


def main():
    try:
        mcptest.require_mcptop()
    except mcptest.SetupError as e:
        print("setup: %s" % e)
        rep.failed += 1
        rep.finish()
    rep.run("a_usage_errors", a_usage_errors)
    rep.run("a_no_server_named", a_no_server_named)
    rep.run("b_help_on_stdout", b_help_on_stdout)
    rep.run("b_help_usage_once", b_help_usage_once)
    rep.run("c_version", c_version)
    rep.run("d_lists", d_lists)
    rep.run("e_check_table_widths", e_check_table_widths)
    rep.finish()


if __name__ == "__main__":
    main()
