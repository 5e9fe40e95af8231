#!/usr/bin/env python3
"""The shell completions (completions/: bash, zsh, fish) run in the real
shells: commands, every option each command's --help lists, theme names
(from `mcptop tui --list-themes`), view names (`--list-views`, from
tui.json) and, for --server, the names in the config given on the command
line (from `mcptop end --list-servers`).

bash: the function is called with COMP_WORDS set. zsh: an interactive
`zsh -f` in a zpty (zsh_complete.zsh) records what reaches compadd. fish:
`complete -C`.

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_completions.py
"""

import json
import os
import re
import shutil
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402

rep = mcptest.Reporter("shell completions: bash, zsh, fish")

COMPLETIONS = mcptest.REPO_DIR / "completions"
ZSH_DRIVER = Path(__file__).resolve().parent / "zsh_complete.zsh"
COMMANDS = ["tui", "check", "watch", "end", "audit", "login", "logout", "serve", "configs",
            "tap", "cancel", "replay", "report"]
SERVERS = ["alpha", "beta-two", "with space"]
OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z-]*[a-z]|-[a-zA-Z])(?![\w-])")

_ctx = {}


def ctx():
    """A bin dir with `mcptop` on PATH, a config, the options per command."""
    if _ctx:
        return _ctx
    bindir = mcptest.tmpdir() / "compbin"
    bindir.mkdir(exist_ok=True)
    link = bindir / "mcptop"
    if not link.exists():
        os.symlink(os.path.abspath(mcptest.MCPTOP_BIN), link)
    # Saved views in tui.json, for --view.
    xdg = mcptest.tmpdir() / "xdg"
    (xdg / "mcptop").mkdir(parents=True, exist_ok=True)
    (xdg / "mcptop" / "tui.json").write_text(json.dumps({"views": {"triage": {}, "calm": {}}}))
    _ctx["env"] = mcptest.mcptop_env({"PATH": "%s:%s" % (bindir, os.environ.get("PATH", "")),
                                      "MCPTOP_THEMES": "", "HOME": str(mcptest.tmpdir()),
                                      "XDG_CONFIG_HOME": str(xdg), "LC_ALL": "C.UTF-8"})
    _ctx["config"] = str(mcptest.write_config({n: {"url": "http://127.0.0.1:9/mcp"} for n in SERVERS}))
    # A client's file in HOME: with no -c, the names come from it (bare
    # mcptop reads --from all when it has no config of its own).
    cursor = mcptest.tmpdir() / ".cursor"
    cursor.mkdir(exist_ok=True)
    (cursor / "mcp.json").write_text(json.dumps(
        {"mcpServers": {"gamma-cursor": {"url": "http://127.0.0.1:9/mcp"}}}))
    opts = {}
    for cmd in [None] + COMMANDS:
        r = mcptest.run_mcptop(["--help"] if cmd is None else [cmd, "--help"], timeout=10)
        if r.rc != 0:
            raise mcptest.SetupError(r.describe())
        opts[cmd] = sorted(set(OPTION.findall(r.stdout)))
    # The top level is the TUI's options plus --version.
    opts[None] = sorted(set(opts["tui"]) | {"-V", "--version", "-h", "--help"})
    _ctx["opts"] = opts
    r = mcptest.run_mcptop(["tui", "--list-themes"], timeout=10, env={"MCPTOP_THEMES": ""})
    _ctx["themes"] = r.stdout.splitlines()
    return _ctx


BASH_DRIVER = r'''
source "$1"; shift
COMP_WORDS=("$@")
COMP_CWORD=$(( $# - 1 ))
_mcptop
printf '%s\n' "${COMPREPLY[@]}"
'''


def bash_complete(words):
    r = mcptest.run(["bash", "--norc", "--noprofile", "-c", BASH_DRIVER, "bash",
                     COMPLETIONS / "mcptop.bash"] + words, timeout=20, env=ctx()["env"],
                    cwd=str(mcptest.tmpdir()))
    return r, [l for l in r.stdout.splitlines() if l]


def zsh_complete_many(lines):
    """Each line's matches, from one zsh session (starting zsh costs most)."""
    r = mcptest.run(["zsh", "-f", ZSH_DRIVER, COMPLETIONS] + lines, timeout=60,
                    env=ctx()["env"], cwd=str(mcptest.tmpdir()))
    parts = r.stdout.split("<LINE>\n")[1:]
    if r.rc != 0 or len(parts) != len(lines):
        raise mcptest.SetupError("zsh_complete.zsh: %s" % r.describe())
    return r, [[l for l in p.splitlines() if l] for p in parts]


class ZshBatch:
    """Collects the lines run_shell asks for, then answers them from one zsh.
    First pass records; second pass replays the answers in order."""

    def __init__(self):
        self.lines = []
        self.answers = None
        self.i = 0
        self.r = None

    def __call__(self, line):
        if self.answers is None:
            self.lines.append(line)
            return mcptest.Result([], 0, "", "", False, 0), []
        got = self.answers[self.i]
        self.i += 1
        return self.r, got

    def resolve(self):
        self.r, self.answers = zsh_complete_many(self.lines)


def fish_complete(line):
    script = "source %s; complete -C %s" % (COMPLETIONS / "mcptop.fish", fish_quote(line))
    r = mcptest.run(["fish", "--no-config", "-c", script], timeout=20, env=ctx()["env"],
                    cwd=str(mcptest.tmpdir()))
    return r, [l.split("\t", 1)[0] for l in r.stdout.splitlines() if l]


def fish_quote(s):
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def expect_all(c, shell, got, want, what, r):
    missing = [w for w in want if w not in got]
    if not c.check(not missing, "%s: %s offers %r (missing %r)" % (shell, what, want, missing)):
        c.attach(r.describe())


def run_shell(c, shell, complete, words_of, unescape=lambda s: s):
    o = ctx()
    # Commands at the first word.
    r, got = complete(words_of(["mcptop", ""]))
    expect_all(c, shell, got, COMMANDS, "the commands", r)
    r, got = complete(words_of(["mcptop", "ch"]))
    c.check(got == ["check"], "%s: 'mcptop ch' completes to check: %r" % (shell, got))
    # Each command's options, as its --help lists them.
    for cmd in [None] + COMMANDS:
        prefix = ["mcptop"] + ([cmd] if cmd else [])
        r, got = complete(words_of(prefix + ["-"]))
        expect_all(c, shell, got, o["opts"][cmd], "the options of %s" % (cmd or "mcptop"), r)
    r, got = complete(words_of(["mcptop", "check", "--"]))
    c.check("--server" not in got and "--theme" not in got,
            "%s: check offers no option of another command: %r" % (shell, got))
    # Theme names.
    for prefix in (["mcptop", "--theme"], ["mcptop", "tui", "--theme"]):
        r, got = complete(words_of(prefix + [""]))
        expect_all(c, shell, got, o["themes"], "theme names after %s" % " ".join(prefix), r)
    r, got = complete(words_of(["mcptop", "--theme", "hi"]))
    c.check("high-contrast" in got, "%s: --theme hi -> high-contrast: %r" % (shell, got))
    # View names, from tui.json (mcptop tui --list-views).
    for prefix in (["mcptop", "--view"], ["mcptop", "tui", "--view"]):
        r, got = complete(words_of(prefix + [""]))
        expect_all(c, shell, got, ["calm", "triage"], "view names after %s" % " ".join(prefix), r)
    r, got = complete(words_of(["mcptop", "--view", "tr"]))
    c.check(got == ["triage"], "%s: --view tr -> triage: %r" % (shell, got))
    # Server names from the config on the line.
    for opts in (["-c", o["config"]], ["--config", o["config"]]):
        for flag in ("--server", "-s"):
            r, got = complete(words_of(["mcptop", "end"] + opts + [flag, ""]))
            got = [unescape(g) for g in got]
            expect_all(c, shell, got, SERVERS, "server names after %s %s" % (opts[0], flag), r)
    r, got = complete(words_of(["mcptop", "end", "-c", o["config"], "--server", "be"]))
    got = [unescape(g) for g in got]
    c.check(got == ["beta-two"], "%s: --server be -> beta-two: %r" % (shell, got))
    # --from's client names; login's server name.
    r, got = complete(words_of(["mcptop", "check", "--from", "cl"]))
    c.check(sorted(got) == ["claude", "claude-code", "cline"],
            "%s: --from cl -> claude, claude-code, cline: %r" % (shell, got))
    r, got = complete(words_of(["mcptop", "login", "-c", o["config"], "al"]))
    c.check([unescape(g) for g in got] == ["alpha"], "%s: login -c FILE al -> alpha: %r" % (shell, got))
    r, got = complete(words_of(["mcptop", "login", "ga"]))
    c.check([unescape(g) for g in got] == ["gamma-cursor"],
            "%s: login <TAB> with no -c: the names of the clients' files: %r" % (shell, got))
    # A config that is not there: nothing, and no error text among the matches.
    r, got = complete(words_of(["mcptop", "end", "-c", "/nonexistent/x.json", "--server", ""]))
    c.check(not any("mcptop" in g or "config" in g for g in got),
            "%s: no server names from a missing config: %r" % (shell, got))


class RecordingCase(mcptest.Case):
    """A case whose checks go nowhere: for the recording pass."""

    def __init__(self):
        super().__init__("recording")


def a_bash(c):
    c.require(shutil.which("bash"), "bash on PATH")
    r = mcptest.run(["bash", "-n", COMPLETIONS / "mcptop.bash"], timeout=10)
    c.eq(r.rc, 0, "bash -n: %s" % r.stderr)

    def words_of(words):
        return words

    def unescape(s):
        return re.sub(r"\\(.)", r"\1", s)

    run_shell(c, "bash", bash_complete, words_of, unescape)
    r, got = bash_complete(["mcptop", "end", "-c", ctx()["config"], "--server", "with"])
    c.eq(got, ["with\\ space"], "bash: a name with a space comes quoted")


def a_zsh(c):
    c.require(shutil.which("zsh"), "zsh on PATH (scripts/install-deps.sh installs it)")
    r = mcptest.run(["zsh", "-n", COMPLETIONS / "_mcptop"], timeout=10)
    c.eq(r.rc, 0, "zsh -n: %s" % r.stderr)
    c.check((COMPLETIONS / "_mcptop").read_text().startswith("#compdef mcptop"), "#compdef line")

    def words_of(words):
        return " ".join(w if " " not in w else "'%s'" % w for w in words)

    batch = ZshBatch()
    run_shell(RecordingCase(), "zsh", batch, words_of)   # record the lines
    batch.resolve()
    run_shell(c, "zsh", batch, words_of)                  # check the answers


def a_fish(c):
    c.require(shutil.which("fish"), "fish on PATH (scripts/install-deps.sh installs it)")
    r = mcptest.run(["fish", "--no-execute", COMPLETIONS / "mcptop.fish"], timeout=10)
    c.eq(r.rc, 0, "fish --no-execute: %s" % r.stderr)

    def words_of(words):
        return " ".join(words)

    run_shell(c, "fish", fish_complete, words_of)


def main():
    try:
        mcptest.require_mcptop()
    except mcptest.SetupError as e:
        print("setup: %s" % e)
        rep.failed += 1
        rep.finish()
    rep.run("a_bash", a_bash)
    rep.run("a_zsh", a_zsh)
    rep.run("a_fish", a_fish)
    rep.finish()


if __name__ == "__main__":
    main()
