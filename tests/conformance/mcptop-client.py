#!/usr/bin/env python3
"""The MCP conformance suite's client, played by mcptop.

@modelcontextprotocol/conformance (client mode) starts a scenario's servers
and runs `<this script> SERVER_URL` with MCP_CONFORMANCE_SCENARIO and, for
some scenarios, MCP_CONFORMANCE_CONTEXT (JSON: client_id, client_secret,
private_key_pem, signing_algorithm). This script turns them into an mcptop
config with an "oauth" object, then runs what a person would:

    mcptop login conformance -c CONFIG     (BROWSER follows redirects headlessly)
    mcptop check -c CONFIG --json

in a private XDG_STATE_HOME, so the token cache starts empty. Its exit
status is check's (login's when login could not run at all).

Environment: MCPTOP_BIN (default: build/mcptop of this checkout),
MCPTOP_CONFORMANCE_WAIT_MS (login --wait, default 15000).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MCPTOP = os.environ.get("MCPTOP_BIN") or str(REPO / "build" / "mcptop")
# The URL the suite's CIMD scenario expects as the client id; mcptop uses
# it only when the authorization server says it supports such documents.
CIMD_URL = "https://conformance-test.local/client-metadata.json"


def main():
    if len(sys.argv) < 2:
        print("usage: mcptop-client.py SERVER_URL", file=sys.stderr)
        return 2
    url = sys.argv[-1]
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    ctx = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    work = Path(tempfile.mkdtemp(prefix="mcptop-conformance."))
    env = dict(os.environ)
    env["XDG_STATE_HOME"] = str(work / "state")
    env["BROWSER"] = "curl -sL --max-time 10 -o /dev/null"
    env.pop("MCPTOP_CONFIG", None)

    # The deep check (probe_tool) of the scenarios that need a tools/call.
    probe = {
        "tools_call": {"name": "add_numbers", "arguments": {"a": 2, "b": 3},
                       "expect_text": "is 5"},
        "sse-retry": {"name": "test_reconnection", "arguments": {},
                      "expect_text": "Reconnection test completed"},
        "auth/scope-step-up": {"name": "test-tool", "arguments": {}},
    }.get(scenario)
    oauth = {"client_metadata_url": CIMD_URL}
    if ctx.get("client_id"):
        oauth["client_id"] = ctx["client_id"]
    if ctx.get("client_secret"):
        # Through the environment, the way a user keeps a secret out of
        # the file.
        env["CONFORMANCE_CLIENT_SECRET"] = ctx["client_secret"]
        oauth["client_secret"] = "${CONFORMANCE_CLIENT_SECRET}"
    if ctx.get("private_key_pem"):
        key = work / "key.pem"
        key.write_text(ctx["private_key_pem"])
        key.chmod(0o600)
        oauth["private_key_file"] = str(key)
        if ctx.get("signing_algorithm"):
            oauth["signing_algorithm"] = ctx["signing_algorithm"]
    if "client-credentials" in scenario:
        oauth["grant"] = "client_credentials"
    entry = {"url": url}
    if scenario.startswith("auth/"):
        entry["oauth"] = oauth
    if probe is not None:
        entry["probe_tool"] = probe
    config = work / "mcptop.json"
    config.write_text(json.dumps({"mcpServers": {"conformance": entry}},
                                 indent=2))

    wait = os.environ.get("MCPTOP_CONFORMANCE_WAIT_MS", "15000")
    try:
        if scenario.startswith("auth/"):
            login = subprocess.run([MCPTOP, "login", "conformance", "-c",
                                    str(config), "--wait", wait], env=env,
                                   timeout=60)
            if login.returncode == 2:
                return 2
        check = subprocess.run([MCPTOP, "check", "-c", str(config), "--json"],
                               env=env, timeout=60)
        return check.returncode
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
