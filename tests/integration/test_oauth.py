#!/usr/bin/env python3
"""MCP authorization against oauthlab (an MCP server behind OAuth and its
authorization server on 127.0.0.1): what the conformance suite does not
reach. check never asks for consent and says so; login caches a token
that check uses; refresh on 401 and ahead of expiry; a refused refresh;
step-up on 403 insufficient_scope (in login, and recorded for the next
login when check meets it); client credentials with no login; logout; a
missing metadata document named; a login whose token cannot be saved is an
error naming the path; two monitors sharing the cache while the server
rotates refresh tokens both keep working; a token answer as a form, an
HTML page from the token endpoint named with its title, a step-up that
gives up saying so, the resource parameter as the metadata names it
(issue 26, item 12); and no token or secret in any output, log or detail.

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_oauth.py
"""

import json
import os
import stat
import sys
import time
import urllib.parse

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402
from mcptest import dig  # noqa: E402
import oauthlab  # noqa: E402
import faultlab  # noqa: E402

rep = mcptest.Reporter("MCP authorization (oauthlab)")
BROWSER = "curl -sL --max-time 10 -o /dev/null"


class Env:
    """A private token cache and a config naming the lab as server `lab`."""

    made = 0

    def __init__(self, lab, oauth=None):
        Env.made += 1
        self.dir = mcptest.tmpdir() / ("oauth-%d" % Env.made)
        self.dir.mkdir()
        self.state = self.dir / "state"
        self.tokens = self.state / "mcptop" / "tokens.json"
        entry = {"url": lab.url, "era": "legacy", "timeout_ms": 5000}
        if oauth is not None:
            entry["oauth"] = oauth
        self.config = self.dir / "mcptop.json"
        self.config.write_text(json.dumps({"mcpServers": {"lab": entry}}))
        self.log = self.dir / "debug.log"
        self.env = mcptest.mcptop_env({"XDG_STATE_HOME": str(self.state),
                                       "BROWSER": BROWSER,
                                       "LAB_SECRET": oauthlab.CLIENT_SECRET})
        self.env.pop("MCPTOP_CONFIG", None)
        self.outputs = []

    def run(self, c, *args, timeout=30.0):
        r = mcptest.run_mcptop(list(args) + ["-c", str(self.config), "--log",
                                             str(self.log)] if args[0] != "logout"
                               else list(args) + ["-c", str(self.config)],
                               timeout=timeout, env=self.env)
        c.attach(r.describe())
        c.no_crash(r)
        self.outputs.append(r.stdout + r.stderr)
        return r

    def check(self, c):
        r = self.run(c, "check", "--json")
        doc = r.json()
        c.require(isinstance(doc, dict), "check printed a JSON object")
        return r, doc["servers"][0]

    def entry(self):
        if not self.tokens.exists():
            return None
        doc = json.loads(self.tokens.read_text())
        rows = [t for t in doc["tokens"] if t["server"] == "lab"]
        return rows[0] if rows else None

    def no_secret_shown(self, c, lab):
        """No token or client secret in any output or the debug log."""
        secrets = set(lab.access) | set(lab.refresh) | {oauthlab.CLIENT_SECRET}
        text = "\n".join(self.outputs)
        if self.log.exists():
            text += self.log.read_text()
        for s in secrets:
            c.check(s not in text, "a token or secret (%s...) was shown" % s[:10])


def a_check_without_login_says_consent_needed(c):
    with oauthlab.Lab() as lab:
        e = Env(lab)
        r, s = e.check(c)
        c.eq(r.rc, 1, "exit status")
        c.eq(dig(s, "last_failure", "kind"), "http_status", "kind")
        c.eq(dig(s, "last_failure", "http_status"), 401, "status")
        c.eq(dig(s, "last_failure", "reason"), "auth", "reason")
        detail = dig(s, "last_failure", "detail") or ""
        c.check("consent needed: run mcptop login lab" in detail,
                "detail says consent is needed: %r" % detail)
        c.check(("mcptop login lab -c %s" % e.config) in detail,
                "the hint is the exact command, with the config: %r" % detail)
        c.eq(dig(s, "liveness", "state"), "unknown", "a 401 answered: liveness")
        for kind in ("prm", "as_metadata", "register", "authorize", "token"):
            c.eq(len(lab.seen(kind)), 0, "check sent no %s request" % kind)


def b_login_then_check(c):
    with oauthlab.Lab() as lab:
        e = Env(lab)
        r = e.run(c, "login", "lab", "--wait", "15000")
        c.eq(r.rc, 0, "login exit status")
        c.check("authorized" in r.stdout, "login says authorized: %r" % r.stdout)
        c.check("http://127.0.0.1:%d/as/authorize?" % lab.port in r.stderr,
                "login printed the authorization URL")
        auth = lab.seen("authorize")
        c.require(len(auth) == 1, "one authorization request (%d)" % len(auth))
        q = auth[0]["query"]
        c.eq(q.get("scope"), "mcp:read", "scope from the challenge")
        c.eq(q.get("resource"), lab.url, "resource parameter")
        c.eq(q.get("code_challenge_method"), "S256", "PKCE method")
        c.eq(q.get("client_id"), oauthlab.CLIENT_ID, "registered client id")
        redirect = urllib.parse.urlsplit(q.get("redirect_uri", ""))
        c.eq(redirect.hostname, "127.0.0.1", "loopback redirect")
        tok = [t for t in lab.seen("token") if t["form"].get("grant_type") ==
               "authorization_code"]
        c.require(len(tok) == 1, "one code exchange")
        c.eq(tok[0]["form"].get("resource"), lab.url, "resource in the token request")
        c.check(tok[0]["authorization"] or "", "client_secret_basic at the token endpoint")
        c.require(e.tokens.exists(), "tokens.json written")
        c.eq(stat.S_IMODE(e.tokens.stat().st_mode), 0o600, "tokens.json mode")
        c.eq(stat.S_IMODE(e.tokens.parent.stat().st_mode), 0o700, "its directory's mode")
        before = len(lab.seen("authorize"))
        r, s = e.check(c)
        c.eq(r.rc, 0, "check exit status with the cached token")
        c.eq(dig(s, "ok"), True, "ok")
        c.eq(len(lab.seen("authorize")), before, "check asked for no consent")
        valid = lab.seen("mcp", valid=True)
        c.check(len(valid) >= 4, "MCP requests carried the token (%d)" % len(valid))
        e.no_secret_shown(c, lab)


def c_refresh_on_401(c):
    with oauthlab.Lab() as lab:
        e = Env(lab)
        c.require(e.run(c, "login", "lab").rc == 0, "login")
        old = e.entry()["access_token"]
        lab.revoke_access()
        r, s = e.check(c)
        c.eq(r.rc, 0, "check after the server forgot the token")
        refresh = [t for t in lab.seen("token") if t["form"].get("grant_type") ==
                   "refresh_token"]
        c.eq(len(refresh), 1, "one refresh grant")
        c.eq(refresh[0]["form"].get("resource"), lab.url, "resource on refresh")
        new = e.entry()["access_token"]
        c.check(new != old, "the new token was cached")
        c.eq(len(lab.seen("authorize")), 1, "no new consent")
        e.no_secret_shown(c, lab)


def d_refresh_ahead_of_expiry(c):
    with oauthlab.Lab() as lab:
        lab.opts["expires_in"] = 30          # within the 60 s refresh margin
        e = Env(lab)
        c.require(e.run(c, "login", "lab").rc == 0, "login")
        old = e.entry()["access_token"]
        refused = len(lab.seen("mcp", valid=False))   # login's first request
        refreshes = len([t for t in lab.seen("token")
                         if t["form"].get("grant_type") == "refresh_token"])
        r, s = e.check(c)
        c.eq(r.rc, 0, "check exit status")
        refresh = [t for t in lab.seen("token") if t["form"].get("grant_type") ==
                   "refresh_token"]
        c.check(len(refresh) > refreshes, "check refreshed before expiry "
                "(%d, %d during login)" % (len(refresh), refreshes))
        c.check(e.entry()["access_token"] != old, "the refreshed token was cached")
        c.eq(len(lab.seen("mcp", valid=False)), refused,
             "check sent no request the server refused")


def d2_late_refresh_answer_is_kept(c):
    """The lab rotates refresh tokens: an answer lost at exit would spend
    the cached one. check ends its work before the refresh answers; it
    waits for it, caches the new pair, and the next check refreshes with
    it."""
    with oauthlab.Lab() as lab:
        lab.opts["expires_in"] = 30          # within the 60 s refresh margin
        e = Env(lab)
        c.require(e.run(c, "login", "lab").rc == 0, "login")
        old = e.entry()
        lab.opts["refresh_delay_s"] = 1.5
        r, s = e.check(c)
        c.eq(r.rc, 0, "check exit status")
        new = e.entry()
        c.check(new["access_token"] != old["access_token"], "the late refreshed token was cached")
        c.check(new.get("refresh_token") != old.get("refresh_token"),
                "the rotated refresh token was cached")
        lab.opts["refresh_delay_s"] = 0
        r, s = e.check(c)
        c.eq(r.rc, 0, "the next check refreshes with the cached refresh token")
        c.check(e.entry()["access_token"] != new["access_token"], "and caches the next pair")


def e_refresh_refused(c):
    with oauthlab.Lab() as lab:
        e = Env(lab)
        c.require(e.run(c, "login", "lab").rc == 0, "login")
        lab.revoke_access()
        lab.opts["refresh_error"] = "invalid_grant"
        r, s = e.check(c)
        c.eq(r.rc, 1, "check exit status")
        c.eq(dig(s, "last_failure", "reason"), "auth", "reason")
        detail = dig(s, "last_failure", "detail") or ""
        c.check("token endpoint 400 invalid_grant" in detail,
                "detail names the step: %r" % detail)
        c.check("consent needed: run mcptop login lab" in detail,
                "detail says what to do: %r" % detail)
        e.no_secret_shown(c, lab)


def f_step_up_in_login(c):
    with oauthlab.Lab() as lab:
        lab.opts["list_scope"] = "mcp:write"
        e = Env(lab)
        r = e.run(c, "login", "lab")
        c.eq(r.rc, 0, "login exit status")
        auth = lab.seen("authorize")
        c.require(len(auth) == 2, "two authorization requests (%d)" % len(auth))
        c.eq(auth[0]["query"].get("scope"), "mcp:read", "first: the challenge's scope")
        c.eq(set((auth[1]["query"].get("scope") or "").split()),
             {"mcp:read", "mcp:write"}, "second: stepped up")
        r, s = e.check(c)
        c.eq(r.rc, 0, "check with the stepped-up token")
        c.eq(len(lab.seen("authorize")), 2, "check asked for no consent")


def g_step_up_seen_by_check(c):
    with oauthlab.Lab() as lab:
        e = Env(lab)
        c.require(e.run(c, "login", "lab").rc == 0, "login")
        lab.opts["list_scope"] = "mcp:admin"
        r, s = e.check(c)
        c.eq(r.rc, 1, "check exit status")
        detail = dig(s, "last_failure", "detail") or ""
        c.eq(dig(s, "last_failure", "http_status"), 403, "status")
        c.check('consent needed for scope "mcp:read mcp:admin": run mcptop login lab'
                in detail, "detail: %r" % detail)
        c.eq(e.entry().get("step_up_scope"), "mcp:read mcp:admin",
             "the scope is kept for the next login")
        r = e.run(c, "login", "lab")
        c.eq(r.rc, 0, "the next login")
        auth = lab.seen("authorize")
        c.require(len(auth) == 2, "one more authorization (%d)" % len(auth))
        c.check("mcp:admin" in (auth[1]["query"].get("scope") or "").split(),
                "it asked for the pending scope at once: %r" % auth[1]["query"].get("scope"))
        c.eq(e.entry().get("step_up_scope"), None, "nothing pending any more")


def h_client_credentials_without_login(c):
    with oauthlab.Lab() as lab:
        e = Env(lab, {"grant": "client_credentials", "client_id": oauthlab.CLIENT_ID,
                      "client_secret": "${LAB_SECRET}", "scope": "mcp:read"})
        r, s = e.check(c)
        c.eq(r.rc, 0, "check exit status")
        cc = [t for t in lab.seen("token") if t["form"].get("grant_type") ==
              "client_credentials"]
        c.eq(len(cc), 1, "one client credentials grant")
        c.eq(cc[0]["form"].get("scope"), "mcp:read", "scope")
        c.eq(len(lab.seen("authorize")), 0, "no browser")
        c.eq(len(lab.seen("register")), 0, "no registration for a configured client")
        e.no_secret_shown(c, lab)


def i_logout(c):
    with oauthlab.Lab() as lab:
        e = Env(lab)
        c.require(e.run(c, "login", "lab").rc == 0, "login")
        r = e.run(c, "logout", "lab")
        c.eq(r.rc, 0, "logout exit status")
        c.check("forgot 1 cached token" in r.stdout, "logout says so: %r" % r.stdout)
        c.eq(e.entry(), None, "no entry left")
        r, s = e.check(c)
        c.eq(r.rc, 1, "check after logout")
        c.check("consent needed" in (dig(s, "last_failure", "detail") or ""),
                "consent needed again")


def j_missing_metadata_named(c):
    with oauthlab.Lab() as lab:
        lab.opts["no_as_metadata"] = True
        e = Env(lab)
        r = e.run(c, "login", "lab")
        c.eq(r.rc, 1, "login exit status")
        c.check("authorization server metadata not found" in r.stderr,
                "login names the step: %r" % r.stderr)
        c.check("401 auth" in r.stderr or "http_status auth" in r.stderr,
                "an auth failure: %r" % r.stderr)
        c.eq(len(lab.seen("authorize")), 0, "no authorization without metadata")


def k_usage(c):
    with oauthlab.Lab() as lab:
        e = Env(lab)
        r = e.run(c, "login", "nosuch")
        c.eq(r.rc, 2, "unknown server")
        c.check('no server named "nosuch"' in r.stderr, "named: %r" % r.stderr)


def l_login_cannot_save(c):
    """A token obtained and not saved is an error that names the path and
    the reason: a corrupt cache, a symbolic link, a directory at its path."""
    cases = (("corrupt", lambda p: p.write_text("{not json")),
             ("symlink", lambda p: os.symlink(p.name, str(p))),
             ("directory", lambda p: p.mkdir()))
    for what, make in cases:
        with oauthlab.Lab() as lab:
            e = Env(lab)
            e.tokens.parent.mkdir(parents=True, mode=0o700)
            make(e.tokens)
            r = e.run(c, "login", "lab", "--wait", "15000")
            c.eq(r.rc, 1, "%s: login exit status" % what)
            c.check("could not be saved" in r.stderr and str(e.tokens) in r.stderr,
                    "%s: the error names the path: %r" % (what, r.stderr))
            c.check("no token needed" not in r.stdout,
                    "%s: not 'no token needed': %r" % (what, r.stdout))
            e.no_secret_shown(c, lab)


def m_shared_cache_rotating_refresh(c):
    """Two watches share one token cache; the server rotates refresh tokens
    (each works once) and forgets the access token: both refresh at once,
    one finds its refresh token spent, takes the other's new pair from the
    cache, and neither says consent is needed."""
    with oauthlab.Lab() as lab:
        lab.opts["refresh_delay_s"] = 2.0       # both refreshes in flight
        e = Env(lab)
        doc = json.loads(e.config.read_text())
        doc["mcpServers"]["lab"]["ping_interval_s"] = 1
        e.config.write_text(json.dumps(doc))
        c.require(e.run(c, "login", "lab").rc == 0, "login")
        watches = [mcptest.Watch(["watch", "-c", str(e.config)], env=e.env)
                   for _ in range(2)]
        try:
            for i, w in enumerate(watches):
                ok = w.wait_for(lambda ev: ev.get("event") == "exchange" and
                                ev.get("op") == "ping" and
                                ev.get("outcome") == "completed",
                                time.monotonic() + 15)
                c.require(ok is not None, "watch %d: a ping completed" % i)
            lab.revoke_access()
            for i, w in enumerate(watches):
                ok = w.wait_for(lambda ev: ev.get("event") == "exchange" and
                                ev.get("op") == "ping" and
                                ev.get("outcome") == "completed",
                                time.monotonic() + 15)
                c.check(ok is not None, "watch %d: pings complete again after "
                        "the revocation" % i)
            refresh = [t for t in lab.seen("token")
                       if t["form"].get("grant_type") == "refresh_token"]
            c.check(len(refresh) >= 2, "both refreshed (%d)" % len(refresh))
            for i, w in enumerate(watches):
                said = [ev.get("detail", "") for ev in w.events
                        if "consent needed" in (ev.get("detail") or "")]
                c.check(not said, "watch %d never said consent is needed: %r"
                        % (i, said[:2]))
        finally:
            for i, w in enumerate(watches):
                w.close()
                c.attach("watch %d:\n%s" % (i, w.describe()))
                e.outputs.append(w.stderr() + "\n".join(json.dumps(ev) for ev in w.events))
        e.no_secret_shown(c, lab)


def n_configured_secret_stays_with_its_issuer(c):
    """A client secret from the config goes only to the authorization
    server it belongs to: with no oauth.issuer, one on the MCP server's own
    host; a protected resource metadata naming another host gets nothing,
    and the detail names both origins. With oauth.issuer set, that issuer
    and no other."""
    cc = {"grant": "client_credentials", "client_id": oauthlab.CLIENT_ID,
          "client_secret": "${LAB_SECRET}", "scope": "mcp:read"}
    with oauthlab.Lab() as lab, oauthlab.Lab(host="127.0.0.2") as other:
        lab.opts["as_base"] = other.base
        e = Env(lab, dict(cc))
        r, s = e.check(c)
        c.eq(r.rc, 1, "check exit status")
        c.eq(dig(s, "last_failure", "reason"), "auth", "reason")
        detail = dig(s, "last_failure", "detail") or ""
        c.check("not sent" in detail and lab.base in detail and other.base in detail,
                "the detail names both origins: %r" % detail)
        c.eq(len(other.seen("token")), 0, "the other server got no token request")
        c.check(all(not (t.get("authorization") or "") for t in other.log),
                "nothing carried the secret there")
        e.no_secret_shown(c, lab)
        # oauth.issuer names the real authorization server: the metadata
        # naming another is refused alike.
        e2 = Env(lab, dict(cc, issuer=lab.base + "/as"))
        r, s = e2.check(c)
        c.eq(r.rc, 1, "issuer set, another named: exit status")
        detail = dig(s, "last_failure", "detail") or ""
        c.check("issuer " + lab.base in detail, "names the issuer: %r" % detail)
        c.eq(len(other.seen("token")), 0, "still no token request there")
    with oauthlab.Lab() as lab:
        e = Env(lab, dict(cc, issuer=lab.base + "/as/"))
        r, s = e.check(c)
        c.eq(r.rc, 0, "issuer set and named (trailing slash aside): exit status")
        c.eq(len([t for t in lab.seen("token") if t["authorization"]]), 1,
             "the secret went to its own issuer")


def o_redirect_listener_holds_against_neighbours(c):
    """Any local process can reach the redirect listener: 40 connections
    that send nothing and 3 callbacks with a wrong state come first, and
    the login still takes the real redirect; the forged codes never reach
    the token endpoint."""
    with oauthlab.Lab() as lab:
        e = Env(lab)
        hostile = e.dir / "hostile.json"
        e.env["BROWSER"] = "%s %s" % (sys.executable, os.path.join(
            os.path.dirname(os.path.abspath(__file__)), "hostile_browser.py"))
        e.env["HOSTILE_LOG"] = str(hostile)
        r = e.run(c, "login", "lab", "--wait", "20000")
        c.eq(r.rc, 0, "login exit status")
        c.check("authorized" in r.stdout, "authorized: %r" % r.stdout)
        seen = json.loads(hostile.read_text()) if hostile.exists() else {}
        c.attach("browser: %r" % seen)
        c.eq(seen.get("forged"), ["HTTP/1.1 400 Bad Request"] * 3,
             "each forged callback was answered 400")
        codes = [t["form"].get("code") for t in lab.seen("token")
                 if t["form"].get("grant_type") == "authorization_code"]
        c.eq(len(codes), 1, "one code exchange")
        c.check(all(not (x or "").startswith("forged") for x in codes),
                "no forged code was exchanged: %r" % codes)
        e.no_secret_shown(c, lab)


def p_401_without_oauth_says_headers(c):
    """A 401 with no Bearer challenge: nothing says OAuth would help, so
    the detail says to put credentials in the config, and does not send the
    operator to mcptop login."""
    lab = faultlab.FaultLab().start()
    try:
        cfg = mcptest.write_config({"plain": {"url": lab.url("/status?code=401"),
                                              "era": "legacy"}})
        r = mcptest.run_mcptop(["check", "--json", "-c", cfg], timeout=30)
        c.attach(r.describe())
        s = r.json()["servers"][0]
        detail = dig(s, "last_failure", "detail") or ""
        c.eq(dig(s, "last_failure", "http_status"), 401, "401")
        c.check("advertises no OAuth" in detail and '"headers"' in detail,
                "the detail names the fix: %r" % detail)
        c.check("mcptop login" not in detail, "no login hint: %r" % detail)
    finally:
        lab.stop()


CC = {"grant": "client_credentials", "client_id": oauthlab.CLIENT_ID,
      "client_secret": "${LAB_SECRET}", "scope": "mcp:read"}


def q_token_answer_as_a_form(c):
    """A token endpoint that answers application/x-www-form-urlencoded (GitHub
    does, when Accept is not honoured) is read like JSON: access_token,
    token_type, expires_in, refresh_token and scope, for a login's code
    exchange and for a client credentials grant (issue 26, item 12)."""
    with oauthlab.Lab() as lab:
        lab.opts["token_form"] = True
        e = Env(lab)
        r = e.run(c, "login", "lab", "--wait", "15000")
        c.eq(r.rc, 0, "login exit status")
        t = e.entry()
        c.require(t is not None, "a token was cached")
        c.check(t.get("access_token", "").startswith("lab-at-"), "the form's access_token")
        c.check((t.get("refresh_token") or "").startswith("lab-rt-"), "the form's refresh_token")
        c.eq(t.get("scope"), "mcp:read", "the form's scope (decoded)")
        c.check(isinstance(t.get("expires_at"), (int, float)) and
                abs(t["expires_at"] - (time.time() + 3600)) < 120,
                "expires_in read as a number: expires_at %r" % t.get("expires_at"))
        r, s = e.check(c)
        c.eq(r.rc, 0, "check with the token the form gave")
        e.no_secret_shown(c, lab)
    with oauthlab.Lab() as lab:
        lab.opts["token_form"] = True
        e = Env(lab, dict(CC))
        r, s = e.check(c)
        c.eq(r.rc, 0, "client credentials answered as a form: check exit status")
        e.no_secret_shown(c, lab)


def r_token_endpoint_html_named(c):
    """A token endpoint that answers 200 with an HTML page (a login form, a
    proxy) is named as such, with its title, not as "token endpoint 200"."""
    with oauthlab.Lab() as lab:
        lab.opts["token_html"] = True
        e = Env(lab, dict(CC))
        r, s = e.check(c)
        c.eq(r.rc, 1, "check exit status")
        detail = dig(s, "last_failure", "detail") or ""
        c.check('token endpoint 200, an HTML page titled "Sign in to Lab" (not a token answer)' in detail,
                "the detail names the page: %r" % detail)
        e.no_secret_shown(c, lab)


def s_step_up_gives_up_says_so(c):
    """A step-up that cannot succeed (the authorization server never grants
    the scope tools/list asks for): the request is given up after its rounds,
    and the record says the step-up gave up and why, in check's detail and in
    watch's exchange event."""
    with oauthlab.Lab() as lab:
        lab.opts["list_scope"] = "mcp:write"
        lab.opts["withhold"] = "mcp:write"
        e = Env(lab, dict(CC))
        r, s = e.check(c)
        c.eq(r.rc, 1, "check exit status")
        c.eq(dig(s, "last_failure", "http_status"), 403, "status")
        detail = dig(s, "last_failure", "detail") or ""
        c.check("the step-up gave up after 2 rounds" in detail and
                "which the authorization server did not grant" in detail,
                "the detail says the step-up gave up: %r" % detail)
        grants = [t for t in lab.seen("token") if t["form"].get("grant_type") == "client_credentials"]
        c.check(2 <= len(grants) <= 4, "a bounded number of grants (%d)" % len(grants))
        w = mcptest.Watch(["watch", "-c", str(e.config)], env=e.env)
        try:
            ev = w.wait_for(lambda ev: ev.get("event") == "exchange" and
                            "step-up gave up" in (ev.get("detail") or ""), time.monotonic() + 15)
            c.check(ev is not None, "watch's exchange event says the step-up gave up")
        finally:
            w.close()
            e.outputs.append(w.stderr() + "\n".join(json.dumps(x) for x in w.events))
        e.no_secret_shown(c, lab)


def t_resource_exactly_as_named(c):
    """The resource parameter is the protected resource metadata's own string
    (RFC 8707), a trailing slash kept, when it covers the server: in the
    authorization request, the code exchange and a later refresh."""
    with oauthlab.Lab() as lab:
        named = lab.base + "/"
        lab.opts["prm_resource"] = named
        e = Env(lab)
        r = e.run(c, "login", "lab", "--wait", "15000")
        c.eq(r.rc, 0, "login exit status")
        auth = lab.seen("authorize")
        c.require(len(auth) == 1, "one authorization request (%d)" % len(auth))
        c.eq(auth[0]["query"].get("resource"), named, "resource in the authorization request")
        tok = [t for t in lab.seen("token") if t["form"].get("grant_type") == "authorization_code"]
        c.require(len(tok) == 1, "one code exchange")
        c.eq(tok[0]["form"].get("resource"), named, "resource in the code exchange")
        lab.revoke_access()
        r, s = e.check(c)
        c.eq(r.rc, 0, "check after the server forgot the token")
        refresh = [t for t in lab.seen("token") if t["form"].get("grant_type") == "refresh_token"]
        c.require(len(refresh) == 1, "one refresh grant")
        c.eq(refresh[0]["form"].get("resource"), named, "resource on refresh")


for fn in (a_check_without_login_says_consent_needed, b_login_then_check,
           c_refresh_on_401, d_refresh_ahead_of_expiry,
           d2_late_refresh_answer_is_kept, e_refresh_refused,
           f_step_up_in_login, g_step_up_seen_by_check,
           h_client_credentials_without_login, i_logout,
           j_missing_metadata_named, k_usage, l_login_cannot_save,
           m_shared_cache_rotating_refresh,
           n_configured_secret_stays_with_its_issuer,
           o_redirect_listener_holds_against_neighbours,
           p_401_without_oauth_says_headers, q_token_answer_as_a_form,
           r_token_endpoint_html_named, s_step_up_gives_up_says_so,
           t_resource_exactly_as_named):
    rep.run(fn.__name__, fn)
rep.finish()
