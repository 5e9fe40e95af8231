#!/usr/bin/env python3
"""Every common client's config as that client reads it (issue 28), through
the real binary, on a fixture home written from each client's documentation:

- `--from all` reads the 14 clients' files, user and project scope, with
  HOME, XDG_CONFIG_HOME and the current directory pointed at the fixture;
- each client's variables as it expands them: Claude Code ${VAR} and
  ${VAR:-default} (in url too), VS Code ${input:ID}, Cursor/Windsurf/Roo
  ${env:VAR}, Gemini CLI $VAR, opencode {env:VAR} and {file:PATH}, Continue
  ${{ secrets.NAME }}, Codex bearer_token_env_var; the HTTP fixture accepts
  only the expanded secret, so a literal sent fails the test;
- an unset variable or a VS Code command variable: invalid, naming it and
  the file; the secret is never printed;
- switches: "disabled", "enabled": false, Codex's enabled, Claude Code's
  enabledMcpjsonServers / disabledMcpjsonServers: disabled, with the reason,
  not dialed;
- the same URL in two clients' files is one server with both sources;
- `mcptop configs [--json]` lists it all, dialing nothing; -v names the keys
  read and not applied;
- bare `mcptop` with no config of its own reads --from all and says so;
  with none, the error names the files and the flag.

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_configs.py
"""

import http.server
import json
import os
import shlex
import sys
import threading

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402
from mcptest import dig  # noqa: E402

rep = mcptest.Reporter("every client's config as that client reads it (issue 28)")

NODE = mcptest._NODE or "node"
FAKE_MJS = str(mcptest.TESTS_DIR / "stdio" / "fake.mjs")
MCPTOP = os.path.abspath(mcptest.MCPTOP_BIN)
SECRET = "Zq9-expanded-s3cr3t"
FILE_SECRET = "Fx7-file-s3cr3t"
TIMEOUT = 60


# ---------------------------------------------------------------- HTTP fixture

class Lab:
    """A minimal Streamable HTTP MCP server on 127.0.0.1 that answers only a
    request carrying the expected credential for its path; every
    Authorization value it is sent is recorded."""

    def __init__(self):
        self.seen = {}          # path -> set of Authorization values
        self.lock = threading.Lock()
        lab = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *a):
                pass

            def _send(self, code, body=None, headers=()):
                data = json.dumps(body).encode() if body is not None else b""
                self.send_response(code)
                if body is not None:
                    self.send_header("Content-Type", "application/json")
                for k, v in headers:
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def _authorized(self):
                path = self.path.split("?")[0]
                auth = self.headers.get("Authorization", "")
                with lab.lock:
                    lab.seen.setdefault(path, set()).add(auth)
                want = FILE_SECRET if path.startswith("/opencode-file/") else SECRET
                return auth == "Bearer " + want

            def do_GET(self):
                self._send(405)

            def do_DELETE(self):
                self._send(200 if self._authorized() else 401)

            def do_POST(self):
                n = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(n)
                if not self._authorized():
                    self._send(401, {"error": "unauthorized"})
                    return
                try:
                    msg = json.loads(raw)
                except ValueError:
                    self._send(400)
                    return
                if "id" not in msg:
                    self._send(202)
                    return
                method = msg.get("method")
                if method == "initialize":
                    result = {"protocolVersion": "2025-06-18",
                              "capabilities": {"tools": {}},
                              "serverInfo": {"name": "lab", "version": "1"}}
                    self._send(200, {"jsonrpc": "2.0", "id": msg["id"], "result": result},
                               [("Mcp-Session-Id", "lab-session-1")])
                elif method == "tools/list":
                    self._send(200, {"jsonrpc": "2.0", "id": msg["id"],
                                     "result": {"tools": []}})
                else:
                    self._send(200, {"jsonrpc": "2.0", "id": msg["id"], "result": {}})

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *a):
        self.httpd.shutdown()
        self.httpd.server_close()


# ---------------------------------------------------------------- the fixture home

def fake(who, **extra):
    """A stdio entry of the fake server with a target of its own."""
    d = {"command": NODE, "args": [FAKE_MJS, "--mode=healthy"],
         "env": {"MCPTOP_TEST_WHO": who}}
    d.update(extra)
    return d


def put(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text if isinstance(text, str) else json.dumps(text, indent=1))
    return path


def make_home(root, lab):
    home = os.path.join(root, "home")
    proj = os.path.join(root, "proj")
    os.makedirs(home)
    os.makedirs(proj)
    u = lab.url
    port = str(lab.port)

    # Claude Desktop: no variables at all.
    put(home, ".config/Claude/claude_desktop_config.json",
        {"mcpServers": {"desk": fake("desk", env={"MCPTOP_TEST_WHO": "desk",
                                                  "LITERAL": "${NOT_EXPANDED}"})}})
    # Claude Code: ${VAR} and ${VAR:-default}, url included; the project's
    # approvals in ~/.claude.json.
    put(home, ".claude.json", {
        "numStartups": 3,
        "mcpServers": {
            "cc-user": {"type": "http",
                        "url": "http://127.0.0.1:${MCPTOP_T_PORT}/claude-code/mcp",
                        "headers": {"Authorization": "Bearer ${MCPTOP_T_SECRET}",
                                    "X-Dflt": "${MCPTOP_T_UNSET:-fallback}"}},
            "shared": {"type": "http", "url": u("/shared/mcp"),
                       "headers": {"Authorization": "Bearer ${MCPTOP_T_SECRET}"}}},
        "projects": {proj: {"allowedTools": [],
                            "enabledMcpjsonServers": ["approved", "refused"],
                            "disabledMcpjsonServers": ["refused"]}}})
    put(proj, ".mcp.json", {"mcpServers": {
        "approved": fake("approved"), "refused": fake("refused"),
        "pending": fake("pending")}})
    # Cursor: ${env:VAR}; the same URL as Claude Code's "shared".
    put(home, ".cursor/mcp.json", {"mcpServers": {
        "shared-cursor": {"url": u("/shared/mcp"),
                          "headers": {"Authorization": "Bearer ${env:MCPTOP_T_SECRET}"}}}})
    put(proj, ".cursor/mcp.json", {"mcpServers": {"cursor-proj": fake("cursor-proj")}})
    # VS Code: ${input:ID} (from MCPTOP_INPUT_TOK), a command variable.
    put(home, ".config/Code/User/mcp.json", {
        "inputs": [{"type": "promptString", "id": "tok", "password": True}],
        "servers": {
            "vs": {"type": "http", "url": u("/vscode/mcp"),
                   "headers": {"Authorization": "Bearer ${input:tok}"}},
            "vs-cmd": {"type": "http", "url": u("/vscode-cmd/mcp"),
                       "headers": {"Authorization": "${command:github.token}"}}}})
    put(proj, ".vscode/mcp.json", {"servers": {"vs-proj": dict(fake("vs-proj"), type="stdio")}})
    # Windsurf: serverUrl, ${env:VAR}, "disabled".
    put(home, ".codeium/windsurf/mcp_config.json", {"mcpServers": {
        "surf": {"serverUrl": u("/windsurf/mcp"),
                 "headers": {"Authorization": "Bearer ${env:MCPTOP_T_SECRET}"}},
        "surf-off": fake("surf-off", disabled=True)}})
    # Zed: context_servers, user and project.
    put(home, ".config/zed/settings.json", {"theme": "One Dark", "context_servers": {
        "zed-one": {"command": {"path": NODE, "args": [FAKE_MJS, "--tag=zed"]}}}})
    put(proj, ".zed/settings.json", {"context_servers": {"zed-proj": fake("zed-proj")}})
    # Gemini CLI: $VAR and ${VAR}; httpUrl; trust and includeTools noted.
    put(home, ".gemini/settings.json", {"theme": "GitHub", "mcpServers": {
        "gem": {"httpUrl": u("/gemini/mcp"),
                "headers": {"Authorization": "Bearer $MCPTOP_T_SECRET"},
                "timeout": 15000, "trust": True, "includeTools": ["x"]},
        "gem-unset": {"httpUrl": u("/gemini-unset/mcp"),
                      "headers": {"Authorization": "Bearer ${MCPTOP_T_UNSET}"}}}})
    put(proj, ".gemini/settings.json", {"mcpServers": {"gem-proj": fake("gem-proj")}})
    # Codex: TOML, bearer_token_env_var, enabled = false.
    put(home, ".codex/config.toml",
        'model = "o4-mini"\n\n[mcp_servers.cx]\nurl = "%s"\n'
        'bearer_token_env_var = "MCPTOP_T_SECRET"\nstartup_timeout_sec = 20\n'
        'tool_timeout_sec = 30\n\n[mcp_servers.cx-off]\ncommand = %s\nargs = [%s]\n'
        'enabled = false\n' % (u("/codex/mcp"), json.dumps(NODE), json.dumps(FAKE_MJS)))
    put(proj, ".codex/config.toml", '[mcp_servers.cx-proj]\ncommand = %s\n'
        'args = [%s, "--tag=cx-proj"]\n' % (json.dumps(NODE), json.dumps(FAKE_MJS)))
    # opencode: {env:VAR}, {file:PATH}, command arrays, enabled; JSONC.
    put(home, ".config/opencode/token.txt", FILE_SECRET + "\n")
    put(home, ".config/opencode/opencode.json", {"$schema": "https://opencode.ai/config.json",
        "mcp": {
            "oc": {"type": "remote", "url": u("/opencode/mcp"),
                   "headers": {"Authorization": "Bearer {env:MCPTOP_T_SECRET}"}},
            "oc-file": {"type": "remote", "url": u("/opencode-file/mcp"),
                        "headers": {"Authorization": "Bearer {file:token.txt}"}},
            "oc-off": {"type": "local", "command": [NODE, FAKE_MJS, "--tag=oc-off"],
                       "enabled": False}}})
    put(proj, "opencode.jsonc", '{\n  // the project\'s\n  "mcp": {"oc-proj": {"type": "local", '
        '"command": [%s, %s, "--tag=oc-proj"], "environment": {"K": "v"},}}\n}\n'
        % (json.dumps(NODE), json.dumps(FAKE_MJS)))
    # Goose: extensions (a built-in skipped), envs, enabled, uri.
    put(home, ".config/goose/config.yaml",
        "GOOSE_PROVIDER: anthropic\nextensions:\n"
        "  developer:\n    bundled: true\n    enabled: true\n    name: developer\n"
        "    type: builtin\n    timeout: 300\n"
        "  goose-one:\n    cmd: %s\n    args: [%s, --tag=goose]\n    enabled: true\n"
        "    envs: {}\n    name: goose-one\n    type: stdio\n    timeout: 300\n"
        "  goose-http:\n    enabled: true\n    name: goose-http\n    type: streamable_http\n"
        "    uri: %s\n    headers:\n      Authorization: Bearer %s\n    timeout: 60\n"
        "  goose-off:\n    cmd: %s\n    args: [%s, --tag=goose-off]\n    enabled: false\n"
        "    name: goose-off\n    type: stdio\n"
        % (NODE, FAKE_MJS, u("/goose/mcp"), SECRET, NODE, FAKE_MJS))
    # Continue: config.yaml, a block in ~/.continue/mcpServers/ and a JSON
    # block in the project's, ${{ secrets.NAME }}.
    put(home, ".continue/config.yaml",
        "name: Mine\nversion: 0.0.1\nschema: v1\nmcpServers:\n"
        "  - name: cont\n    type: streamable-http\n    url: %s\n"
        "    requestOptions:\n      headers:\n"
        "        Authorization: Bearer ${{ secrets.MCPTOP_T_SECRET }}\n" % u("/continue/mcp"))
    put(home, ".continue/mcpServers/block.yaml",
        "name: Block\nversion: 0.0.1\nschema: v1\nmcpServers:\n"
        "  - name: cont-block\n    command: %s\n    args: [%s, --tag=cont-block]\n"
        % (NODE, FAKE_MJS))
    put(proj, ".continue/mcpServers/proj.json",
        {"mcpServers": {"cont-proj": fake("cont-proj")}})
    # Cline and Roo Code: VS Code's globalStorage; Roo's .roo/mcp.json.
    store = ".config/Code/User/globalStorage/"
    put(home, store + "saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
        {"mcpServers": {"cline-one": fake("cline-one", autoApprove=["echo"], timeout=60),
                        "cline-off": fake("cline-off", disabled=True)}})
    put(home, store + "rooveterinaryinc.roo-cline/settings/mcp_settings.json",
        {"mcpServers": {"roo-http": {"type": "streamable-http", "url": u("/roo/mcp"),
                                     "headers": {"Authorization": "Bearer ${env:MCPTOP_T_SECRET}"},
                                     "alwaysAllow": ["x"]}}})
    put(proj, ".roo/mcp.json", {"mcpServers": {"roo-proj": fake("roo-proj")}})
    # LM Studio: Cursor's notation.
    put(home, ".lmstudio/mcp.json", {"mcpServers": {
        "lms": {"url": u("/lmstudio/mcp"), "headers": {"Authorization": "Bearer " + SECRET}}}})
    env = {"HOME": home, "XDG_CONFIG_HOME": os.path.join(home, ".config"),
           "CODEX_HOME": "", "MCPTOP_CONFIG": "",
           "MCPTOP_T_SECRET": SECRET, "MCPTOP_T_PORT": port, "MCPTOP_INPUT_TOK": SECRET}
    os.environ.pop("MCPTOP_T_UNSET", None)
    return home, proj, env


# What --from all must make of it: name -> (source, transport, health).
# ok: dialed and answered; disabled: not dialed; invalid: cannot be.
EXPECTED = {
    "desk": ("claude", "stdio", "ok"),
    "cc-user": ("claude-code", "http", "ok"),
    "shared": ("claude-code", "http", "ok"),
    "approved": ("claude-code:project", "stdio", "ok"),
    "refused": ("claude-code:project", "stdio", "disabled"),
    "pending": ("claude-code:project", "stdio", "disabled"),
    "cursor-proj": ("cursor:project", "stdio", "ok"),
    "vs": ("vscode", "http", "ok"),
    "vs-cmd": ("vscode", "http", "invalid"),
    "vs-proj": ("vscode:project", "stdio", "ok"),
    "surf": ("windsurf", "http", "ok"),
    "surf-off": ("windsurf", "stdio", "disabled"),
    "zed-one": ("zed", "stdio", "ok"),
    "zed-proj": ("zed:project", "stdio", "ok"),
    "gem": ("gemini", "http", "ok"),
    "gem-unset": ("gemini", "http", "invalid"),
    "gem-proj": ("gemini:project", "stdio", "ok"),
    "cx": ("codex", "http", "ok"),
    "cx-off": ("codex", "stdio", "disabled"),
    "cx-proj": ("codex:project", "stdio", "ok"),
    "oc": ("opencode", "http", "ok"),
    "oc-file": ("opencode", "http", "ok"),
    "oc-off": ("opencode", "stdio", "disabled"),
    "oc-proj": ("opencode:project", "stdio", "ok"),
    "goose-one": ("goose", "stdio", "ok"),
    "goose-http": ("goose", "http", "ok"),
    "goose-off": ("goose", "stdio", "disabled"),
    "cont": ("continue", "http", "ok"),
    "cont-block": ("continue", "stdio", "ok"),
    "cont-proj": ("continue:project", "stdio", "ok"),
    "cline-one": ("cline", "stdio", "ok"),
    "cline-off": ("cline", "stdio", "disabled"),
    "roo-http": ("roo", "http", "ok"),
    "roo-proj": ("roo:project", "stdio", "ok"),
    "lms": ("lmstudio", "http", "ok"),
}
CLIENTS = {"claude", "claude-code", "cursor", "vscode", "windsurf", "zed", "gemini",
           "codex", "opencode", "goose", "continue", "cline", "roo", "lmstudio"}


def run(args, env, cwd, timeout=TIMEOUT):
    mcptest.require_mcptop()
    return mcptest.run([MCPTOP] + list(args), timeout=timeout,
                       env=mcptest.mcptop_env(env), cwd=cwd)


def no_secret(c, text, where):
    for s in (SECRET, FILE_SECRET):
        c.check(s not in text, "%s shows a secret (%s...)" % (where, s[:4]))


# ---------------------------------------------------------------- cases

def case_configs(c, lab, home, proj, env):
    r = run(["configs", "--json", "--from", "all"], env, proj)
    c.no_crash(r)
    c.eq(r.rc, 0, "configs exit status")
    doc = r.json()
    c.require(doc is not None, "configs --json printed JSON: %r" % r.stdout[:300])
    no_secret(c, r.stdout + r.stderr, "configs --json")
    by = {s["name"]: s for s in doc["servers"]}
    c.eq(sorted(by), sorted(EXPECTED), "every server of the 14 clients, once")
    c.eq({v[0].split(":")[0] for v in EXPECTED.values()}, CLIENTS, "the fixture covers 14 clients")
    for name, (source, transport, health) in EXPECTED.items():
        s = by.get(name, {})
        c.eq(s.get("client"), source, "%s: client" % name)
        c.eq(s.get("transport"), transport, "%s: transport" % name)
        want = {"ok": "ready"}.get(health, health)
        c.eq(s.get("state"), want, "%s: state" % name)
        c.check(s.get("file", "").startswith(home) or s.get("file", "").startswith(proj),
                "%s: the file is named: %r" % (name, s.get("file")))
    # The variables expanded, names only.
    c.eq(by["cc-user"]["variables"], ["MCPTOP_T_PORT", "MCPTOP_T_SECRET", "MCPTOP_T_UNSET"],
         "Claude Code: ${VAR} in url and headers, ${VAR:-default}")
    c.eq(by["vs"]["variables"], ["input:tok"], "VS Code: ${input:ID}")
    c.eq(by["gem"]["variables"], ["MCPTOP_T_SECRET"], "Gemini CLI: $VAR")
    c.eq(by["oc-file"]["variables"], ["file:token.txt"], "opencode: {file:PATH}")
    c.eq(by["cont"]["variables"], ["MCPTOP_T_SECRET"], "Continue: ${{ secrets.NAME }}")
    c.eq(by["cx"]["variables"], ["MCPTOP_T_SECRET"], "Codex: bearer_token_env_var")
    c.eq(by["desk"]["variables"], [], "Claude Desktop expands nothing")
    c.check("http://127.0.0.1:${MCPTOP_T_PORT}/claude-code/mcp" == by["cc-user"]["target"],
            "the URL is shown as written: %r" % by["cc-user"]["target"])
    # Why not dialed.
    c.check("MCPTOP_T_UNSET" in (by["gem-unset"]["reason"] or "") and
            ".gemini/settings.json" in by["gem-unset"]["reason"],
            "an unset variable names itself and the file: %r" % by["gem-unset"]["reason"])
    c.check("VS Code command variable" in (by["vs-cmd"]["reason"] or ""),
            "a command variable: %r" % by["vs-cmd"]["reason"])
    c.check("not approved in Claude Code" in (by["pending"]["reason"] or ""),
            "an unapproved .mcp.json server: %r" % by["pending"]["reason"])
    c.check("disabledMcpjsonServers" in (by["refused"]["reason"] or ""),
            "a refused one: %r" % by["refused"]["reason"])
    c.eq(by["cx-off"]["reason"], 'disabled in the config ("enabled": false)', "Codex's switch")
    c.eq(by["cline-off"]["reason"], 'disabled in the config ("disabled": true)', "Cline's switch")
    # Keys read, not applied.
    c.check("trust" in by["gem"]["not_applied"] and "includeTools" in by["gem"]["not_applied"],
            "Gemini's trust and includeTools: %r" % by["gem"]["not_applied"])
    c.check("tool_timeout_sec" in by["cx"]["not_applied"], "Codex's tool_timeout_sec")
    # One server for one URL in two files, named as the first names it.
    srcs = [(x["client"], os.path.basename(x["file"])) for x in by["shared"]["sources"]]
    c.eq(srcs, [("claude-code", ".claude.json"), ("cursor", "mcp.json")], "shared: both sources")
    c.check(any("shared-cursor" in m and '"shared"' in m for m in doc["merged"]),
            "the merge is said: %r" % doc["merged"])
    skipped = {s["name"]: s["why"] for s in doc["skipped"]}
    c.check("developer" in skipped and "Goose" in skipped["developer"],
            "Goose's built-in skipped with a reason: %r" % skipped)
    c.eq(lab.seen, {}, "configs dials nothing")

    # The table.
    r = run(["configs", "--from", "all"], env, proj)
    c.eq(r.rc, 0, "configs (table)")
    no_secret(c, r.stdout + r.stderr, "configs")
    c.check("also cursor" in r.stdout and "[disabled]" in r.stdout and
            "variables: MCPTOP_T_SECRET" in r.stdout, "the table says it: %r" % r.stdout[:400])


def case_check(c, lab, home, proj, env):
    r = run(["check", "--json", "--from", "all", "-v", "--timeout", "20000"], env, proj,
            timeout=120)
    c.no_crash(r)
    doc = r.json()
    if doc is None:
        c.attach(r.describe())
        c.fatal("check --json printed no JSON")
    no_secret(c, r.stdout + r.stderr, "check --json -v")
    by = {s["name"]: s for s in doc["servers"]}
    c.eq(sorted(by), sorted(EXPECTED), "check's fleet")
    for name, (source, transport, health) in EXPECTED.items():
        s = by.get(name, {})
        if not c.eq(s.get("health"), health, "%s: health" % name):
            c.attach(json.dumps(s)[:600])
        c.eq(s.get("source"), source, "%s: source" % name)
    c.eq(len(by["shared"].get("sources", [])), 2, "check --json lists both sources of shared")
    # The fixture answered only the expanded secret; no literal reached it.
    for path, seen in sorted(lab.seen.items()):
        for auth in seen:
            c.check("$" not in auth and "{" not in auth,
                    "%s was sent a literal reference: %r" % (path, auth))
    for path in ("/claude-code/mcp", "/shared/mcp", "/vscode/mcp", "/windsurf/mcp",
                 "/gemini/mcp", "/codex/mcp", "/opencode/mcp", "/opencode-file/mcp",
                 "/goose/mcp", "/continue/mcp", "/roo/mcp", "/lmstudio/mcp"):
        c.check(path in lab.seen, "%s was dialed" % path)
    for path in ("/gemini-unset/mcp", "/vscode-cmd/mcp"):
        c.check(path not in lab.seen, "%s (invalid) was not dialed" % path)
    # -v: keys read and not applied, the merge.
    err = r.stderr
    c.check('"trust" is ignored' in err and '"tool_timeout_sec" is ignored' in err,
            "-v lists keys read and not applied: %r" % err[-800:])
    c.check("merged:" in err and "shared-cursor" in err, "-v says what was merged")
    c.eq(doc["summary"]["health"]["disabled"], 7, "the disabled are counted as such")


def case_bare(c, lab, home, proj, env):
    r = run(["configs", "--json"], env, proj)
    c.eq(r.rc, 0, "bare configs")
    doc = r.json() or {}
    c.eq(doc.get("from_fallback"), True, "no config of its own: --from all")
    c.eq(len(doc.get("servers", [])), len(EXPECTED), "the same fleet")
    r = run(["check", "--json", "-v", "--timeout", "20000"], env, proj, timeout=120)
    c.check("no config of mcptop's own" in r.stderr, "-v says why: %r" % r.stderr[-300:])

    empty = str(mcptest.tmpdir() / "empty-home")
    os.makedirs(empty, exist_ok=True)
    e2 = dict(env, HOME=empty, XDG_CONFIG_HOME=os.path.join(empty, ".config"))
    r = run(["check"], e2, empty)
    c.eq(r.rc, 2, "no config anywhere: a usage error")
    c.check(".gemini/settings.json" in r.stderr and "--from" in r.stderr and
            ".codex/config.toml" in r.stderr,
            "the message names the files and the flag: %r" % r.stderr[:300])


if __name__ == "__main__":
    root = str(mcptest.tmpdir() / "configs")
    with Lab() as lab:
        home, proj, env = make_home(root, lab)
        rep.run("configs --json and the table: every client, dialing nothing",
                case_configs, lab, home, proj, env)
        rep.run("check --from all: each client's secret expanded, switches, one row per server",
                case_check, lab, home, proj, env)
        rep.run("bare mcptop: --from all when a client's file exists", case_bare,
                lab, home, proj, env)
    rep.finish()
