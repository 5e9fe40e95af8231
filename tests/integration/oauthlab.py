"""oauthlab: an MCP server behind OAuth and its authorization server, on one
127.0.0.1 port, in a thread of the test (stdlib only).

  /mcp                                       MCP (JSON answers; stateless)
  /.well-known/oauth-protected-resource/mcp  RFC 9728 metadata
  /.well-known/oauth-authorization-server/as RFC 8414 metadata
  /as/authorize  /as/token  /as/register     the authorization server

Everything it saw is kept in `lab.log` (a list of dicts) for assertions;
`lab.opts` changes its behaviour between runs:
  expires_in        seconds in token answers (default 3600)
  list_scope        a scope tools/list needs beyond the token's: answered
                    403 insufficient_scope asking for it (default None)
  challenge_scope   the scope in the 401 challenge (default "mcp:read")
  refresh_error     an error code the token endpoint answers refresh
                    grants with (default None)
  no_as_metadata    answer 404 for the authorization server metadata
  as_base           the base URL of the authorization server the protected
                    resource metadata names (default: this lab's own)
  prm_resource      the `resource` the protected resource metadata names
                    (default: the MCP endpoint's URL)
  token_form        token answers as application/x-www-form-urlencoded
                    (GitHub's, when Accept is not honoured)
  token_html        the token endpoint answers 200 with an HTML page (a
                    login form's) instead of a token
  withhold          a scope the token endpoint never grants, whatever is
                    asked (a step-up that cannot succeed)

The authorization endpoint redirects at once (no person), as the
conformance suite's does; PKCE S256 is verified at the token endpoint.
"""

import base64
import hashlib
import json
import secrets
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

CLIENT_ID = "lab-client"
CLIENT_SECRET = "lab-secret-do-not-show"


class Lab:
    def __init__(self, host="127.0.0.1"):
        self.log = []
        self.opts = {"expires_in": 3600, "list_scope": None,
                     "challenge_scope": "mcp:read", "refresh_error": None,
                     "no_as_metadata": False, "refresh_delay_s": 0,
                     "as_base": None, "prm_resource": None,
                     "token_form": False, "token_html": False,
                     "withhold": None}
        self.codes = {}       # code -> (challenge, scope)
        self.access = {}      # token -> scope
        self.refresh = {}     # token -> scope
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer((host, 0), self._handler())
        self.port = self.httpd.server_address[1]
        self.base = "http://%s:%d" % (host, self.port)
        self.url = self.base + "/mcp"
        self.thread = threading.Thread(target=self.httpd.serve_forever,
                                       daemon=True)

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()

    def seen(self, kind, **match):
        with self.lock:
            return [e for e in self.log if e["kind"] == kind and
                    all(e.get(k) == v for k, v in match.items())]

    def revoke_access(self):
        with self.lock:
            self.access.clear()

    def issue(self, scope):
        if self.opts["withhold"]:
            scope = " ".join(x for x in (scope or "").split() if x != self.opts["withhold"])
        at = "lab-at-" + secrets.token_urlsafe(16)
        rt = "lab-rt-" + secrets.token_urlsafe(16)
        self.access[at] = scope
        self.refresh[rt] = scope
        body = {"access_token": at, "token_type": "Bearer",
                "expires_in": self.opts["expires_in"], "refresh_token": rt}
        if scope:
            body["scope"] = scope
        return body

    def _handler(self):
        lab = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def send(self, status, body=None, headers=None, ctype="application/json"):
                if (lab.opts["token_form"] and isinstance(body, dict) and
                        urllib.parse.urlsplit(self.path).path == "/as/token"):
                    # GitHub's form answer, as when Accept is not honoured
                    body = urllib.parse.urlencode(body).encode()
                    ctype = "application/x-www-form-urlencoded; charset=utf-8"
                data = b"" if body is None else (body if isinstance(body, bytes)
                                                  else json.dumps(body).encode())
                self.send_response(status)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                if data:
                    self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def record(self, kind, **kw):
                with lab.lock:
                    lab.log.append(dict(kind=kind, path=self.path,
                                        authorization=self.headers.get("Authorization"), **kw))

            def do_GET(self):
                u = urllib.parse.urlsplit(self.path)
                q = dict(urllib.parse.parse_qsl(u.query))
                if u.path == "/.well-known/oauth-protected-resource/mcp":
                    self.record("prm")
                    return self.send(200, {"resource": lab.opts["prm_resource"] or lab.url,
                                           "authorization_servers": [
                                               (lab.opts["as_base"] or lab.base) + "/as"],
                                           "scopes_supported": ["mcp:read", "mcp:write"]})
                if u.path == "/.well-known/oauth-authorization-server/as":
                    self.record("as_metadata")
                    if lab.opts["no_as_metadata"]:
                        return self.send(404, {"error": "not_found"})
                    b = lab.base + "/as"
                    return self.send(200, {
                        "issuer": b, "authorization_endpoint": b + "/authorize",
                        "token_endpoint": b + "/token",
                        "registration_endpoint": b + "/register",
                        "code_challenge_methods_supported": ["S256"],
                        "token_endpoint_auth_methods_supported": ["client_secret_basic"],
                        "response_types_supported": ["code"]})
                if u.path == "/as/authorize":
                    self.record("authorize", query=q)
                    code = secrets.token_urlsafe(8)
                    with lab.lock:
                        lab.codes[code] = (q.get("code_challenge"), q.get("scope", ""))
                    loc = q["redirect_uri"] + "?" + urllib.parse.urlencode(
                        {"code": code, "state": q.get("state", "")})
                    return self.send(302, headers={"Location": loc})
                self.record("get_other")
                return self.send(404, {"error": "not_found"})

            def body(self):
                n = int(self.headers.get("Content-Length") or 0)
                return self.rfile.read(n).decode()

            def client_ok(self, form):
                auth = self.headers.get("Authorization", "")
                if auth.startswith("Basic "):
                    pair = base64.b64decode(auth[6:]).decode()
                    cid, _, sec = pair.partition(":")
                    return (urllib.parse.unquote(cid) == CLIENT_ID and
                            urllib.parse.unquote(sec) == CLIENT_SECRET)
                return False

            def do_POST(self):
                u = urllib.parse.urlsplit(self.path)
                text = self.body()
                if u.path == "/as/register":
                    self.record("register", body=json.loads(text))
                    return self.send(201, {"client_id": CLIENT_ID,
                                           "client_secret": CLIENT_SECRET,
                                           "token_endpoint_auth_method": "client_secret_basic"})
                if u.path == "/as/token":
                    form = dict(urllib.parse.parse_qsl(text))
                    self.record("token", form=form)
                    if lab.opts["token_html"]:
                        return self.send(200, b"<!DOCTYPE html><html><head><title>Sign in to "
                                         b"Lab</title></head><body><form></form></body></html>",
                                         ctype="text/html; charset=utf-8")
                    if not self.client_ok(form):
                        return self.send(401, {"error": "invalid_client"})
                    g = form.get("grant_type")
                    if g == "refresh_token" and lab.opts["refresh_delay_s"]:
                        time.sleep(lab.opts["refresh_delay_s"])
                    with lab.lock:
                        if g == "authorization_code":
                            ch, scope = lab.codes.pop(form.get("code"), (None, None))
                            v = form.get("code_verifier", "")
                            want = base64.urlsafe_b64encode(
                                hashlib.sha256(v.encode()).digest()).decode().rstrip("=")
                            if ch is None or ch != want:
                                return self.send(400, {"error": "invalid_grant"})
                            return self.send(200, lab.issue(scope))
                        if g == "refresh_token":
                            if lab.opts["refresh_error"]:
                                return self.send(400, {"error": lab.opts["refresh_error"]})
                            scope = lab.refresh.pop(form.get("refresh_token"), None)
                            if scope is None:
                                return self.send(400, {"error": "invalid_grant"})
                            return self.send(200, lab.issue(scope))
                        if g == "client_credentials":
                            return self.send(200, lab.issue(form.get("scope", "")))
                    return self.send(400, {"error": "unsupported_grant_type"})
                if u.path == "/mcp":
                    return self.mcp(text)
                return self.send(404, {"error": "not_found"})

            def do_DELETE(self):
                self.send(405)

            def mcp(self, text):
                msg = json.loads(text)
                method = msg.get("method")
                auth = self.headers.get("Authorization", "")
                tok = auth[7:] if auth.startswith("Bearer ") else None
                with lab.lock:
                    scope = lab.access.get(tok) if tok else None
                self.record("mcp", method=method, valid=scope is not None)
                rm = lab.base + "/.well-known/oauth-protected-resource/mcp"
                if scope is None:
                    return self.send(401, {"error": "invalid_token"}, headers={
                        "WWW-Authenticate": 'Bearer error="invalid_token", scope="%s", '
                        'resource_metadata="%s"' % (lab.opts["challenge_scope"], rm)})
                need = lab.opts["list_scope"]
                if method == "tools/list" and need and need not in scope.split():
                    want = (scope + " " + need).strip()
                    return self.send(403, {"error": "insufficient_scope"}, headers={
                        "WWW-Authenticate": 'Bearer error="insufficient_scope", '
                        'scope="%s", resource_metadata="%s"' % (want, rm)})
                if "id" not in msg:
                    return self.send(202)
                if method == "initialize":
                    res = {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                           "serverInfo": {"name": "oauthlab", "version": "1"}}
                elif method == "tools/list":
                    res = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
                elif method == "ping":
                    res = {}
                else:
                    return self.send(200, {"jsonrpc": "2.0", "id": msg["id"], "error": {
                        "code": -32601, "message": "Method not found"}})
                return self.send(200, {"jsonrpc": "2.0", "id": msg["id"], "result": res})

        return H
