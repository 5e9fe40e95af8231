#!/usr/bin/env python3
"""The MCP conformance suite's authorization client scenarios, with mcptop
as the client (issue 16).

Each scenario runs `conformance client --scenario S --verbose` from the
pinned @modelcontextprotocol/conformance (tests/package.json) on the
pinned Node.js 22 (the `node` package), with tests/conformance/
mcptop-client.py as the client command: it writes a config from
MCP_CONFORMANCE_CONTEXT, runs `mcptop login` (BROWSER follows redirects
headlessly with curl) and then `mcptop check`. The suite's checks come
back as JSON; a case passes when none is FAILURE or WARNING.

auth/scope-step-up cannot pass yet: the scenario's server asks for more
scope (403 insufficient_scope) only on tools/call, and mcptop calls no
tool until issue 17 ("Deep checks", probe_tool) lands. Its case asserts
exactly that: every check passes but the escalation one, which fails for
want of a second authorization request. The step-up itself is tested on
tools/list by test_oauth.py. When issue 17 lands, configure probe_tool in
the adapter and move the scenario to SCENARIOS.

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_conformance_auth.py
"""

import concurrent.futures
import json
import os
import subprocess
import sys

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402

rep = mcptest.Reporter("MCP conformance suite: client scenarios (authorization, tools/call, SSE resumption)")

NODE = mcptest.NODE_MODULES / ".bin" / "node"
CONFORMANCE = (mcptest.NODE_MODULES / "@modelcontextprotocol" / "conformance"
               / "dist" / "index.js")
ADAPTER = mcptest.TESTS_DIR / "conformance" / "mcptop-client.py"
SCENARIO_TIMEOUT = 90.0  # seconds; one scenario takes about 2 s

SCENARIOS = [
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
    # The escalation happens on the deep check's tools/call (probe_tool),
    # which login makes too, where consent can be given.
    "auth/scope-step-up",
    # Issue 17: the deep check (a tools/call) and SEP-1699 resumption.
    "tools_call",
    "sse-retry",
]


def run_scenario(name):
    """Run one scenario; (returncode, checks or None, stderr tail)."""
    env = mcptest.mcptop_env()
    env["MCPTOP_BIN"] = mcptest.MCPTOP_BIN
    argv = [str(NODE), str(CONFORMANCE), "client", "--command",
            "%s %s" % (sys.executable, ADAPTER), "--scenario", name,
            "--verbose", "--timeout", "60000"]
    for p in (sys.executable, str(ADAPTER)):
        if " " in p:
            raise mcptest.SetupError("the suite splits --command on spaces: %r" % p)
    try:
        p = subprocess.run(argv, env=env, cwd=str(mcptest.tmpdir()),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=SCENARIO_TIMEOUT, start_new_session=True)
    except subprocess.TimeoutExpired as e:
        return None, None, "timed out after %.0f s\n%s" % (
            SCENARIO_TIMEOUT, (e.stderr or b"").decode(errors="replace")[-3000:])
    try:
        checks = json.loads(p.stdout.decode(errors="replace"))
    except ValueError:
        checks = None
    return p.returncode, checks, p.stderr.decode(errors="replace")[-3000:]


def judge(c, name, result):
    rc, checks, err = result
    c.attach(err)
    c.require(checks is not None and isinstance(checks, list),
              "%s: the suite printed its checks as JSON (exit %r)" % (name, rc))
    bad = [(x.get("id"), x.get("status"), x.get("description"))
           for x in checks if x.get("status") in ("FAILURE", "WARNING")]
    good = [x.get("id") for x in checks if x.get("status") == "SUCCESS"]
    c.check(len(good) >= (1 if name == "tools_call" else 3),
            "%s: its checks passed (%d)" % (name, len(good)))
    c.eq(bad, [], "%s: failed or warning checks" % name)
    c.eq(rc, 0, "%s: the suite's exit status" % name)
    if name == "auth/scope-step-up":
        c.check("scope-step-up-escalation" in good, "%s: the scope was "
                "escalated on the tool's 403" % name)
    if name == "sse-retry":
        c.check("client-sse-retry-timing" in good and
                "client-sse-last-event-id" in good, "%s: resumed after the "
                "server's retry, with Last-Event-ID" % name)
    if name == "tools_call":
        c.check("tool-add-numbers" in good, "%s: the tool was called" % name)
    if name == "auth/scope-retry-limit":
        c.check("scope-retry-limit" in good, "%s: retries stayed within the "
                "limit" % name)


def main():
    for what, path in (("mcptop", mcptest.MCPTOP_BIN), ("node 22", NODE),
                       ("the conformance suite", CONFORMANCE)):
        if not os.path.exists(str(path)):
            def missing(c, what=what, path=path):
                c.fatal("%s not found at %s (run scripts/install-deps.sh)"
                        % (what, path))
            rep.run("setup", missing)
            rep.finish()
    # Two at a time: each scenario is mostly waiting on loopback.
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        futures = {name: pool.submit(run_scenario, name)
                   for name in SCENARIOS}
        for name in SCENARIOS:
            rep.run(name, lambda c, n=name: judge(c, n, futures[n].result()))
    rep.finish()


main()
