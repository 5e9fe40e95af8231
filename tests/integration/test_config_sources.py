#!/usr/bin/env python3
"""Where the fleet comes from (issue 15), through the real binary:

- repeated -c merges fleets; a name in two files is an error naming both;
- -c - reads the config (YAML here) from standard input;
- `check/watch/end -- CMD ARGS...` run a stdio server from the command line;
- --from CLIENT reads the clients' well-known files under a private HOME and
  project directory: sources tagged, a repeated name renamed, absent files
  skipped, nothing found is an error;
- -v lists each key read but not applied once; the log has them too;
- ${input:ID} from MCPTOP_INPUT_<ID>, and asked on the terminal by the TUI
  (tmux) with echo off; envFile; TOML read;
- a FIFO with no writer and a character device (/dev/zero) named as an
  envFile (a project's .cursor/mcp.json), an opencode {file:}, a -c file,
  a recording for `report`, and on a `serve` reload: each refused at once
  with its path and type, never waited on (issue 41);
- ${VAR} expansion capped per value, per entry and per config, in bounded
  time and memory (issue 41);
- secrets in a URL never printed: check (table and --json), watch, end, the
  log, errors and the TUI's detail pane show the redacted URL only.

Servers: tests/stdio/fake.mjs (stdio) and server-everything over HTTP on
127.0.0.1. Every wait is bounded.

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_config_sources.py
"""

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402
from mcptest import dig  # noqa: E402

rep = mcptest.Reporter("config sources: -c, -c -, --from, -- CMD, inputs, "
                       "redaction (issue 15)")

NODE = mcptest._NODE or "node"
FAKE_MJS = str(mcptest.TESTS_DIR / "stdio" / "fake.mjs")
CHECK_TIMEOUT = 30
PW = "Pw-s3cr3t-0ne"          # userinfo password in a URL
QS = "Qs-s3cr3t-tw0"          # a secret query value
SECRETS = (PW, QS)
BIG_SHOWN = "x" * 64      # a stretch of the expanded variable


def fake(**extra):
    d = {"command": NODE, "args": [FAKE_MJS, "--mode=healthy"]}
    d.update(extra)
    return d


# Absolute, so that cases can run in another directory.
MCPTOP = os.path.abspath(mcptest.MCPTOP_BIN)


def run(args, env=None, input=None, cwd=None, timeout=CHECK_TIMEOUT):
    mcptest.require_mcptop()
    return mcptest.run([MCPTOP] + list(args), timeout=timeout,
                       env=mcptest.mcptop_env(env), input=input, cwd=cwd)


def servers_by_name(doc):
    return {s.get("name"): s for s in (doc or {}).get("servers", [])}


def check_json(c, args, **kw):
    r = run(["check", "--json", "--timeout", "5000"] + list(args), **kw)
    c.no_crash(r)
    doc = r.json()
    if doc is None:
        c.attach(r.describe())
        c.fatal("check --json printed no JSON (%s)" % r.json_error)
    return r, doc


def no_secret(c, text, where):
    for s in SECRETS:
        c.check(s not in text, "%s shows a secret (%s...)" % (where, s[:4]))


# ---------------------------------------------------------------- cases

def case_merge(c):
    a = mcptest.write_config({"one": fake(), "two": fake()})
    b = mcptest.write_file("mcpServers:\n  three:\n    command: %s\n"
                           "    args: [%s]\n" % (json.dumps(NODE), json.dumps(FAKE_MJS)),
                           suffix=".yaml")
    r, doc = check_json(c, ["-c", a, "-c", b])
    by = servers_by_name(doc)
    c.eq(sorted(by), ["one", "three", "two"], "servers of both files")
    c.eq(r.rc, 0, "exit status with every server ok")
    for n, s in by.items():
        c.eq(dig(s, "liveness", "state"), "reachable", "%s liveness" % n)

    dup = mcptest.write_config({"two": fake()})
    r = run(["check", "-c", a, "-c", dup])
    c.no_crash(r)
    c.eq(r.rc, 2, "exit status for a name in two files")
    c.check('server "two" is declared in both %s and %s' % (a, dup) in r.stderr,
            "the error names the server and both files: %r" % r.stderr)


def case_stdin(c):
    text = "servers:\n  piped:\n    type: stdio\n    command: %s\n    args: [%s]\n" % (
        json.dumps(NODE), json.dumps(FAKE_MJS))
    r, doc = check_json(c, ["-c", "-"], input=text)
    c.eq(list(servers_by_name(doc)), ["piped"], "the server read from stdin")
    c.eq(r.rc, 0, "exit status")

    r = run(["check", "-c", "-", "-c", "-"], input="{}")
    c.eq(r.rc, 2, "-c - twice is a usage error")
    r = run(["check", "-c", "-"], input="")
    c.eq(r.rc, 2, "empty stdin is an error")
    c.check("stdin: empty file" in r.stderr, "names stdin: %r" % r.stderr)


def case_command(c):
    r, doc = check_json(c, ["--", NODE, FAKE_MJS, "--mode=healthy"])
    s = servers_by_name(doc).get("node")
    c.require(s is not None, "a server named after the command: %r" % doc)
    c.eq(s.get("transport"), "stdio", "transport")
    c.eq(dig(s, "liveness", "state"), "reachable", "liveness")
    c.eq(s.get("tools"), 2, "tools of the fake server")
    c.check(FAKE_MJS in s.get("target", ""), "target shows the arguments")
    c.eq(r.rc, 0, "exit status")

    # Options before "--" still apply; a URL and a command merge.
    r = run(["check", "--json", "--", NODE, FAKE_MJS, "--mode=exit-at-once"])
    c.eq(r.rc, 1, "a failing command's server is not ok")
    r = run(["check", "--"])
    c.check(r.rc == 1 and "empty command" in r.stdout,
            "-- with nothing after it: an invalid server (rc %s, %r)" % (r.rc, r.stdout))

    with mcptest.Watch(["watch", "--", NODE, FAKE_MJS]) as w:
        ev = w.wait_for(lambda e: e.get("event") == "liveness" and e.get("server") == "node"
                        and e.get("state") == "reachable", time.monotonic() + 15)
        if not c.check(ev is not None, "watch -- CMD: the server becomes reachable"):
            c.attach(w.describe())
        w.signal(signal.SIGTERM)
        c.eq(w.wait_exit(10), 0, "watch exit status after SIGTERM")

    r = run(["end", "--json", "--", NODE, FAKE_MJS])
    c.no_crash(r)
    lines = [json.loads(l) for l in r.stdout.splitlines() if l.startswith("{")]
    c.check(any(l.get("server") == "node" and l.get("outcome") == "exited" for l in lines),
            "end -- CMD ends the child: %r" % r.stdout)


def make_home(root):
    """A private HOME and project with files of three clients."""
    home = os.path.join(root, "home")
    proj = os.path.join(root, "proj")
    for d in (".cursor", ".codeium/windsurf", ".config/Code/User", ".config/zed"):
        os.makedirs(os.path.join(home, d), exist_ok=True)
    os.makedirs(os.path.join(proj, ".vscode"), exist_ok=True)
    # Each server dials a target of its own (its env says which), so that
    # none is folded into another (test_configs.py tests that).
    def own(name, **extra):
        return fake(env={"MCPTOP_TEST_WHO": name}, **extra)
    with open(os.path.join(home, ".cursor/mcp.json"), "w") as f:
        json.dump({"mcpServers": {"shared": own("c1", autoApprove=["echo"]),
                                  "cursor-only": own("c2", alwaysAllow=["add"])}}, f)
    with open(os.path.join(home, ".codeium/windsurf/mcp_config.json"), "w") as f:
        json.dump({"mcpServers": {"surf": own("w1", disabledTools=["echo"]),
                                  "off": own("w2", disabled=True)}}, f)
    # User settings without MCP servers: skipped quietly.
    with open(os.path.join(home, ".config/Code/User/settings.json"), "w") as f:
        f.write('{\n  // no MCP here\n  "editor.fontSize": 14,\n}\n')
    with open(os.path.join(home, ".config/zed/settings.json"), "w") as f:
        json.dump({"context_servers": {"zed-one": {"command": {"path": NODE,
                                                               "args": [FAKE_MJS, "--mode=healthy"]}}}}, f)
    with open(os.path.join(proj, ".vscode/mcp.json"), "w") as f:
        f.write('// project\n{"servers": {"shared": {"type": "stdio", "command": %s, '
                '"args": [%s], "autoApprove": ["x"]}}}\n' % (json.dumps(NODE), json.dumps(FAKE_MJS)))
    return home, proj


def case_from(c):
    root = str(mcptest.tmpdir() / "from")
    home, proj = make_home(root)
    env = {"HOME": home, "XDG_CONFIG_HOME": ""}
    r, doc = check_json(c, ["--from", "all", "-v"], env=env, cwd=proj)
    by = servers_by_name(doc)
    c.eq(sorted(by), ["cursor-only", "off", "shared", "shared@vscode:project", "surf", "zed-one"],
         "servers of every client, a repeated name renamed after its source")
    c.eq(dig(by, "shared", "source"), "cursor", "source of the user's server")
    c.eq(dig(by, "shared@vscode:project", "source"), "vscode:project", "source of the project's")
    c.eq(dig(by, "surf", "source"), "windsurf", "windsurf's source")
    c.eq(dig(by, "zed-one", "source"), "zed", "zed's source")
    c.eq(dig(by, "zed-one", "liveness", "state"), "reachable", "Zed's older command shape runs")
    # "listed once": one line per ignored key, naming its servers.
    lines = r.stderr.splitlines()
    aa = [l for l in lines if '"autoApprove" is ignored' in l]
    c.eq(len(aa), 2, "autoApprove noted once per file: %r" % aa)
    c.check(any("(server shared)" in l for l in aa), "the note names the server")
    c.eq(len([l for l in lines if '"disabledTools" is ignored' in l]), 1, "disabledTools once")
    c.check(any("/.claude.json is absent" in l for l in lines), "-v lists absent files")
    c.check(not any(l.startswith("mcptop: warning:") for l in lines),
            "no warning for absent files or settings without servers: %r" % r.stderr)

    r2 = run(["check", "--json", "--from", "all"], env=env, cwd=proj)
    c.check("note:" not in r2.stderr, "notes only with -v: %r" % r2.stderr)

    # One client only; its project file only.
    r, doc = check_json(c, ["--from", "vscode"], env=env, cwd=proj)
    c.eq(sorted(servers_by_name(doc)), ["shared"], "--from vscode")
    r = run(["check", "--from", "claude"], env=env, cwd=proj)
    c.eq(r.rc, 2, "--from with no file is a usage error")
    c.check("none of its config files exists" in r.stderr and "claude_desktop_config.json" in r.stderr,
            "the error lists where it looked: %r" % r.stderr)
    r = run(["check", "--from", "notepad"])
    c.eq(r.rc, 2, "an unknown client")
    c.check("claude-code, cursor, vscode" in r.stderr, "names the clients: %r" % r.stderr)

    h = run(["check", "--help"])
    c.check(".codeium/windsurf/mcp_config.json" in h.stdout and "./.vscode/mcp.json" in h.stdout,
            "--help lists the well-known paths")


def case_inputs_envfile(c):
    # The expected value comes through mcptop's environment, never argv.
    guard = ('test "$TOKEN" = "tok-$EXPECTED" && test "$FROM_FILE" = "file value" && exec %s %s'
             % (shlex.quote(NODE), shlex.quote(FAKE_MJS)))
    envf = mcptest.write_file("# env\nexport FROM_FILE='file value'\nTOKEN=overridden\n", suffix=".env")
    cfg = mcptest.write_file(json.dumps({
        "inputs": [{"type": "promptString", "id": "api-token", "description": "API token",
                    "password": True}],
        "servers": {"guarded": {"type": "stdio", "command": "sh", "args": ["-c", guard],
                                "env": {"TOKEN": "tok-${input:api-token}"}, "envFile": envf}}}))
    r, doc = check_json(c, ["-c", cfg], env={"MCPTOP_INPUT_API_TOKEN": PW, "EXPECTED": PW})
    c.eq(dig(servers_by_name(doc), "guarded", "liveness", "state"), "reachable",
         "the input and the envFile reached the server")
    no_secret(c, r.stdout + r.stderr, "check with an input")

    r = run(["check", "--json", "-c", cfg])
    doc = r.json() or {}
    detail = dig(servers_by_name(doc), "guarded", "last_failure", "detail")
    c.check(isinstance(detail, str) and "MCPTOP_INPUT_API_TOKEN" in detail,
            "without it: invalid, naming the variable to set: %r" % detail)

    missing = mcptest.write_config({"m": fake(envFile="/nonexistent/mcptop.env")})
    r, doc = check_json(c, ["-c", missing])
    detail = dig(servers_by_name(doc), "m", "last_failure", "detail")
    c.check(isinstance(detail, str) and 'envFile "/nonexistent/mcptop.env": No such file' in detail,
            "a missing envFile: invalid_config with the path: %r" % detail)
    c.eq(dig(servers_by_name(doc), "m", "last_failure", "kind"), "invalid_config", "its kind")

    toml = mcptest.write_file('[mcp_servers.docs]\ncommand = %s\nargs = [%s]\n'
                              % (json.dumps(NODE), json.dumps(FAKE_MJS)), suffix=".toml")
    r, doc = check_json(c, ["-c", toml])
    c.eq(dig(servers_by_name(doc), "docs", "liveness", "state"), "reachable",
         "Codex's TOML is read (toml++)")
    bad = mcptest.write_file('[mcp_servers.docs]\ncommand = = "x"\n', suffix=".toml")
    r = run(["check", "-c", bad])
    c.eq(r.rc, 2, "broken TOML is a config error")
    c.check("2:11: not valid TOML" in r.stderr, "names the line and column: %r" % r.stderr)


def case_not_regular(c):
    """A FIFO with no writer or a character device named by a config or an
    argument is refused with its path and type, never waited on (open(2)
    of a FIFO blocks until a writer comes; /dev/zero never ends)."""
    root = mcptest.tmpdir() / ("notreg-%d" % os.getpid())
    proj, home = root / "proj", root / "home"
    (proj / ".cursor").mkdir(parents=True)
    home.mkdir()
    fifo = str(root / "fifo")
    os.mkfifo(fifo)
    for path, kind in ((fifo, "a FIFO"), ("/dev/zero", "a character device")):
        said = "%s, not a regular file" % kind
        # The project's own files come with the directory mcptop runs in.
        (proj / ".cursor" / "mcp.json").write_text(json.dumps(
            {"mcpServers": {"e": fake(envFile=path)}}))
        (proj / "opencode.json").write_text(json.dumps(
            {"mcp": {"o": {"type": "remote", "url": "http://127.0.0.1:1/mcp",
                           "headers": {"X-Key": "{file:%s}" % path}}}}))
        r = run(["configs", "--json"], cwd=str(proj), env={"HOME": str(home)}, timeout=20)
        c.check(not r.timed_out, "configs with %s named: not waited on" % kind)
        c.no_crash(r)
        doc = r.json() or {}
        got = {s.get("name"): s for s in doc.get("servers", [])}
        c.eq(dig(got, "e", "state"), "invalid", "envFile %s: the entry is invalid" % kind)
        c.eq(dig(got, "e", "reason"), 'envFile "%s": %s' % (path, said),
             "envFile %s: the path and its type" % kind)
        o = [v for k, v in got.items() if k.startswith("o")]
        c.check(len(o) == 1 and o[0].get("state") == "invalid" and
                '"{file:%s}": %s' % (path, said) in (o[0].get("reason") or ""),
                "{file:} %s: invalid, with the path and its type: %r" % (kind, o))
        r = run(["check", "--json", "--timeout", "3000", "-c", str(proj / ".cursor" / "mcp.json")],
                timeout=20)
        c.check(not r.timed_out, "check with %s as envFile: not waited on" % kind)
        c.eq(dig(servers_by_name(r.json() or {}), "e", "last_failure", "detail"),
             'envFile "%s": %s' % (path, said), "check: the envFile %s refused" % kind)
        r = run(["check", "-c", path], timeout=20)
        c.check(not r.timed_out, "-c %s: not waited on" % kind)
        c.eq(r.rc, 2, "-c %s: a config error" % kind)
        c.check("%s: %s" % (path, said) in r.stderr, "-c %s: the path and its type: %r"
                % (kind, r.stderr[-300:]))
        r = run(["report", path], timeout=20)
        c.check(not r.timed_out, "report of %s: not waited on" % kind)
        c.eq(r.rc, 2, "report of %s: refused" % kind)
        c.check("cannot read %s: %s" % (path, said) in r.stderr,
                "report of %s: the path and its type: %r" % (kind, r.stderr[-300:]))

    # A reload (SIGHUP) must not stall the loop: serve still answers.
    cfg = root / "serve.json"
    cfg.write_text(json.dumps({"mcpServers": {"s": {"url": "http://127.0.0.1:1/mcp"}}}))
    err_path = root / "serve.log"
    with open(err_path, "wb") as err:
        p = mcptest.spawn([MCPTOP, "serve", "--listen", "127.0.0.1:0", "-c", str(cfg)],
                          env=mcptest.mcptop_env(), stdout=subprocess.DEVNULL, stderr=err)
    try:
        port = None
        deadline = time.monotonic() + 20
        while port is None and time.monotonic() < deadline and p.poll() is None:
            m = re.search(r"listening on http://127\.0\.0\.1:(\d+)/", err_path.read_text())
            port = int(m.group(1)) if m else None
            time.sleep(0.05)
        c.require(port is not None, "serve listens: %s" % err_path.read_text()[-400:])

        def metrics():
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % port, timeout=5) as u:
                    return u.read().decode()
            except OSError as e:
                return "(no answer: %s)" % e

        def after_hup(words):
            p.send_signal(signal.SIGHUP)
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and words not in err_path.read_text():
                time.sleep(0.05)
            return err_path.read_text()

        cfg.write_text(json.dumps({"mcpServers": {"s": {"url": "http://127.0.0.1:1/mcp"},
                                                  "e": fake(envFile=fifo)}}))
        text = after_hup("reload: 2 servers")
        c.check("reload: 2 servers" in text, "the reload with a FIFO envFile is done: %r"
                % text[-300:])
        c.check("mcptop_config_last_reload_successful 1" in metrics(),
                "serve answers after that reload")
        os.unlink(cfg)
        os.mkfifo(cfg)
        text = after_hup("the running config stays")
        c.check("%s: a FIFO, not a regular file" % cfg in text,
                "a config replaced by a FIFO: refused with its path: %r" % text[-300:])
        c.check("mcptop_config_last_reload_successful 0" in metrics(),
                "serve answers after that reload, the running config kept")
    finally:
        c.eq(mcptest.terminate(p), 0, "serve exits 0 on SIGTERM")


def case_expand_bomb(c):
    """${VAR} has a cap as {file:} has (issue 41, item 3): a 120 KB
    variable named 5,000 times in one value, 160 times across one entry's
    values, and 8 times in each of 20 entries (19 MiB in all) leaves the
    entries past a cap invalid with that cap named, in bounded time and
    memory; an entry within the caps is read as before."""
    root = mcptest.tmpdir() / ("bomb-%d" % os.getpid())
    (root / "proj" / ".cursor").mkdir(parents=True)
    (root / "home").mkdir(exist_ok=True)
    servers = {"one": fake(env={"A": "${BIG}" * 5000}),
               "entry": fake(env={"A%d" % i: "${BIG}" * 8 for i in range(20)}),
               "ok": fake(env={"A": "${BIG}", "B": "${env:BIG}"})}
    for i in range(20):
        servers["f%02d" % i] = fake(env={"A": "${BIG}" * 8})
    (root / "proj" / ".cursor" / "mcp.json").write_text(json.dumps({"mcpServers": servers}))
    mcptest.require_mcptop()
    env = mcptest.mcptop_env({"HOME": str(root / "home"), "BIG": "x" * 122880})
    out = root / "configs.json"
    start = time.monotonic()
    with open(out, "wb") as f:
        p = subprocess.Popen([MCPTOP, "configs", "--json"], cwd=str(root / "proj"), env=env,
                             stdout=f, stderr=subprocess.DEVNULL)
        deadline = start + 60
        # wait4, not poll(): its rusage is this child's own peak memory.
        pid, status, usage = 0, 0, None
        while pid == 0 and time.monotonic() < deadline:
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            time.sleep(0.02)
        if pid == 0:
            p.kill()
            pid, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    c.check(time.monotonic() < deadline, "configs is done within 60 s")
    c.eq(p.returncode, 0, "configs exits 0")
    # ru_maxrss is KiB on Linux. Unbounded, this fleet takes over 1 GB;
    # 1 MiB values (16 MiB in all) stay far under the bound, ASan's too.
    c.check(usage.ru_maxrss < 512 * 1024, "configs' peak memory is bounded: %d KiB"
            % usage.ru_maxrss)
    doc = json.loads(out.read_text() or "{}")
    got = {s.get("name"): s for s in doc.get("servers", [])}
    c.eq(dig(got, "one", "state"), "invalid", "5,000 references in one value: invalid")
    c.eq(dig(got, "one", "reason"), 'env "A": expands to more than 1 MiB (the cap of a value)',
         "the cap of a value named")
    c.eq(dig(got, "entry", "state"), "invalid", "160 references across one entry: invalid")
    c.check("the entry's values expand to more than 1 MiB in all (the cap of an entry)"
            in (dig(got, "entry", "reason") or ""), "the cap of an entry named: %r"
            % dig(got, "entry", "reason"))
    c.eq(dig(got, "ok", "state"), "ready", "an entry within the caps is read")
    fs = [got.get("f%02d" % i, {}) for i in range(20)]
    c.eq(fs[0].get("state"), "ready", "the first entries within the config's cap are read")
    over = [f for f in fs if f.get("state") == "invalid"]
    c.check(len(over) > 0 and all("(the cap of a config)" in (f.get("reason") or "")
                                  for f in over),
            "the entries past 16 MiB in all are invalid, the config's cap named: %r"
            % [(f.get("name"), f.get("state")) for f in fs])
    c.check(BIG_SHOWN not in out.read_text(), "no expanded value is quoted in a reason")


def secret_fleet(port):
    live = "http://user:%s@127.0.0.1:%d/mcp?api_key=%s&x=1" % (PW, port, QS)
    dead = "http://user:%s@127.0.0.1:%d/mcp?token=%s" % (PW, mcptest.free_port(), QS)
    bad = "http://user:%s@127.0.0.1:99999/mcp?token=%s" % (PW, QS)
    cfg = mcptest.write_config({"live": {"url": live}, "dead": {"url": dead}, "bad": {"url": bad}},
                               mcptop={"ping_interval_s": 1})
    return cfg, live


def case_redaction(c):
    mcptest.require_node_modules()
    with mcptest.everything_http() as ev:
        cfg, live = secret_fleet(ev.port)
        log = str(mcptest.tmpdir() / "redaction.log")

        r = run(["check", "-c", cfg, "--log", log])
        c.no_crash(r)
        no_secret(c, r.stdout + r.stderr, "check's table")
        c.check("live" in r.stdout, "the table lists the servers")

        r, doc = check_json(c, ["-c", cfg, "--log", log])
        no_secret(c, r.stdout + r.stderr, "check --json")
        by = servers_by_name(doc)
        c.eq(dig(by, "live", "target"),
             "http://***@127.0.0.1:%d/mcp?api_key=***&x=1" % ev.port, "the redacted target")
        c.eq(dig(by, "live", "liveness", "state"), "reachable",
             "the real URL (with its userinfo) is still what is dialed")
        c.check("bad port" in str(dig(by, "bad", "last_failure", "detail")),
                "the invalid URL's error, without its secrets")

        with mcptest.Watch(["watch", "-c", cfg, "--log", log]) as w:
            got = w.wait_for(lambda e: e.get("event") == "liveness" and e.get("server") == "dead",
                             time.monotonic() + 15)
            c.check(got is not None, "watch reports the dead server")
            w.signal(signal.SIGTERM)
            w.wait_exit(10)
            no_secret(c, "\n".join(json.dumps(e) for e in w.events) + w.stderr(), "watch")

        r = run(["end", "--json", "-c", cfg, "--log", log])
        c.no_crash(r)
        no_secret(c, r.stdout + r.stderr, "end")

        with open(log) as f:
            text = f.read()
        no_secret(c, text, "the log")
        c.check("http://***@127.0.0.1:%d/mcp?api_key=***&x=1" % ev.port in text,
                "the log shows the redacted URL")

        # Errors: a bad argument echoing a URL; a whole-file error.
        r = run(["check", live, "http://u:%s@h/?token=%s" % (PW, QS)])
        c.eq(r.rc, 2, "two URLs are a usage error")
        no_secret(c, r.stderr, "the usage error")
        c.check("http://***@h/?token=***" in r.stderr, "echoed redacted: %r" % r.stderr)
        r = run(["check", "--json", "http://u:%s@exa mple.com/?token=%s" % (PW, QS)])
        no_secret(c, r.stdout + r.stderr, "an invalid ad-hoc URL")

        tui_redaction(c, cfg, ev.port)


# ---------------------------------------------------------------- the TUI in tmux

class Tmux:
    """A command in a detached tmux session on a private socket."""

    seq = 0

    def __init__(self, argv, env=None, cols=120, rows=30):
        self.tmux_bin = shutil.which("tmux")
        if not self.tmux_bin:
            raise mcptest.SetupError("tmux is not installed")
        Tmux.seq += 1
        self.sock = "mcptop-cfg-%d-%d" % (os.getpid(), Tmux.seq)
        inner = "%s; echo __EXIT=$?__; sleep 60" % " ".join(shlex.quote(a) for a in argv)
        envargs = []
        for k, v in dict({"LANG": "C.UTF-8", "LC_ALL": "C.UTF-8"}, **(env or {})).items():
            envargs += ["-e", "%s=%s" % (k, v)]
        for k in ("ASAN_OPTIONS", "UBSAN_OPTIONS"):
            if k in os.environ:
                envargs += ["-e", "%s=%s" % (k, os.environ[k])]
        self.run("new-session", "-d", "-x", str(cols), "-y", str(rows), *envargs, "sh", "-c", inner)

    def run(self, *args, check=True):
        env = dict(os.environ, TERM="xterm-256color")
        env.pop("TMUX", None)
        r = subprocess.run([self.tmux_bin, "-L", self.sock, "-f", "/dev/null"] + list(args),
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10)
        if check and r.returncode != 0:
            raise mcptest.SetupError("tmux %s: %s" % (args[0], r.stderr.decode()))
        return r.stdout.decode(errors="replace")

    def screen(self):
        return self.run("capture-pane", "-p", check=False)

    def wait(self, pred, timeout=15.0):
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen()
            if pred(text):
                return text, True
            if time.monotonic() >= deadline:
                return text, False
            time.sleep(0.1)

    def keys(self, *k):
        self.run("send-keys", *k)

    def literal(self, text):
        self.run("send-keys", "-l", text)

    def close(self):
        if "__EXIT=" not in self.screen():
            self.keys("q")
            _, ok = self.wait(lambda s: "__EXIT=" in s, 8.0)
            if not ok:
                self.keys("q")
                self.wait(lambda s: "__EXIT=" in s, 3.0)
        self.run("kill-server", check=False)


def tui_redaction(c, cfg, port):
    t = Tmux([MCPTOP, "-c", cfg])
    try:
        text, ok = t.wait(lambda s: "live" in s and "dead" in s)
        c.check(ok, "the TUI shows the fleet")
        t.literal("/live")
        t.keys("Enter")
        t.keys("Enter")
        text, ok = t.wait(lambda s: "***@127.0.0.1:%d" % port in s)
        if not c.check(ok, "the detail pane shows the redacted URL"):
            c.attach(text)
        no_secret(c, text, "the TUI")
    finally:
        t.close()


def case_tui_input_prompt(c):
    guard = 'test "$TOKEN" = "$EXPECTED" && exec %s %s' % (shlex.quote(NODE), shlex.quote(FAKE_MJS))
    cfg = mcptest.write_file(json.dumps({
        "inputs": [{"type": "promptString", "id": "tok", "description": "Service token",
                    "password": True}],
        "servers": {"guarded": {"command": "sh", "args": ["-c", guard],
                                "env": {"TOKEN": "${input:tok}"}}}}))
    t = Tmux([MCPTOP, "-c", cfg], env={"EXPECTED": PW})
    try:
        text, ok = t.wait(lambda s: "Service token (input tok, not echoed):" in s)
        c.require(ok, "the TUI asks for the input with its description: %r" % text)
        t.literal(PW)
        text = t.screen()
        c.check(PW not in text, "the answer is not echoed")
        t.keys("Enter")
        text, ok = t.wait(lambda s: "guarded" in s and "reachable" in s and "● ok 1" in s)
        if not c.check(ok, "the answer reached the server (reachable)"):
            c.attach(text)
        no_secret(c, text, "the TUI after the prompt")
    finally:
        t.close()

    # With the variable set, nothing is asked.
    t = Tmux([MCPTOP, "-c", cfg], env={"MCPTOP_INPUT_TOK": PW, "EXPECTED": PW})
    try:
        text, ok = t.wait(lambda s: "● ok 1" in s)
        c.check(ok and "not echoed" not in text, "MCPTOP_INPUT_TOK answers without asking")
    finally:
        t.close()

    # The config on stdin: the TUI takes the terminal back.
    t = Tmux(["sh", "-c", "cat %s | %s -c -" % (shlex.quote(cfg), shlex.quote(MCPTOP))],
             env={"MCPTOP_INPUT_TOK": PW, "EXPECTED": PW})
    try:
        text, ok = t.wait(lambda s: "● ok 1" in s)
        c.check(ok, "-c - in the TUI: the fleet runs and the keys work: %r" % text[:300])
    finally:
        t.close()


if __name__ == "__main__":
    rep.run("repeated -c merges; a name in two files is an error", case_merge)
    rep.run("-c - reads standard input", case_stdin)
    rep.run("check, watch and end -- CMD ARGS", case_command)
    rep.run("--from CLIENT, -v notes once", case_from)
    rep.run("${input:ID}, envFile, TOML", case_inputs_envfile)
    rep.run("a FIFO or a device named: refused, never waited on", case_not_regular)
    rep.run("${VAR} expansion is capped (value, entry, config)", case_expand_bomb)
    rep.run("URL secrets never printed (check, --json, watch, end, log, errors, TUI)",
            case_redaction)
    rep.run("the TUI asks for an input before it starts", case_tui_input_prompt)
    rep.finish()
