"""faultlab: start the fault lab (tests/faultlab/server.mjs), a self-signed TLS
certificate and a real nginx gateway in front of it, for the matrix test.

Built on mcptest (process groups, cleanup at exit, bounded waits, temp dir).
Everything listens on 127.0.0.1 only and every wait is bounded.

  lab = FaultLab(tls=make_cert()).start()
  lab.url("/reset/ping")        -> "http://127.0.0.1:P/reset/ping"
  lab.tls_url("/healthy")       -> "https://127.0.0.1:Q/healthy"
  lab.counts()                  -> the lab's GET /_counts JSON
  lab.other_base                -> "http://127.0.0.1:R", the lab's second port (another origin)
  gw = Nginx({"/dead/": "http://127.0.0.1:DEAD/", ...}).start()
"""

import json
import os
import queue
import re
import shutil
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

import mcptest
from mcptest import LOOPBACK, SetupError

SERVER_MJS = mcptest.TESTS_DIR / "faultlab" / "server.mjs"
NGINX = os.environ.get("MCPTOP_NGINX") or shutil.which("nginx") or "/usr/sbin/nginx"
OPENSSL = shutil.which("openssl")

_READY = re.compile(r"^faultlab ready (\{.*\})\s*$")


class Cert:
    """A self-signed certificate for 127.0.0.1 and localhost, in a temp dir."""

    def __init__(self, cert, key):
        self.cert = cert
        self.key = key


def make_cert(days=2):
    if not OPENSSL:
        raise SetupError("openssl is not on PATH")
    d = mcptest.tmpdir() / "tls"
    d.mkdir(exist_ok=True)
    cert, key = d / "cert.pem", d / "key.pem"
    r = mcptest.run([OPENSSL, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256",
                     "-days", str(days), "-keyout", key, "-out", cert,
                     "-subj", "/CN=127.0.0.1",
                     "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                     "-addext", "basicConstraints=critical,CA:TRUE"],
                    timeout=30)
    if r.rc != 0 or not cert.exists():
        raise SetupError("openssl could not make a certificate:\n%s" % r.describe())
    return Cert(str(cert), str(key))


class FaultLab:
    """tests/faultlab/server.mjs on 127.0.0.1, ports chosen by the server."""

    def __init__(self, tls=None, verbose=False):
        self.tls = tls
        self.verbose = verbose
        self.proc = None
        self.base = None
        self.tls_base = None
        self.other_base = None    # the lab's second port: another origin
        self.port = None
        self.other_port = None
        self.log_path = mcptest.tmpdir() / "faultlab.log"
        self._lines = queue.Queue()

    def start(self, timeout=20.0):
        node = shutil.which("node")
        if not node:
            raise SetupError("node is not on PATH")
        if not SERVER_MJS.exists():
            raise SetupError("%s is missing" % SERVER_MJS)
        argv = [node, SERVER_MJS, "--port", "0", "--other-port", "0", "--parent-pid", str(os.getpid())]
        if self.tls is not None:
            argv += ["--tls-port", "0", "--tls-cert", self.tls.cert, "--tls-key", self.tls.key]
        if self.verbose:
            argv.append("--verbose")
        err = open(self.log_path, "ab")
        self.proc = mcptest.spawn(argv, stdout=subprocess.PIPE, stderr=err, cwd=str(mcptest.TESTS_DIR))
        err.close()
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = self._lines.get(timeout=0.2)
            except queue.Empty:
                if self.proc.poll() is not None:
                    break
                continue
            if line is None:
                break
            m = _READY.match(line)
            if m:
                info = json.loads(m.group(1))
                self.base = info["http"]
                self.tls_base = info.get("https")
                self.other_base = info.get("other")
                self.port = int(self.base.rsplit(":", 1)[1])
                self.other_port = int(self.other_base.rsplit(":", 1)[1]) if self.other_base else None
                return self
        rc = self.proc.poll()
        mcptest.terminate(self.proc)
        raise SetupError("the fault lab did not print its ready line within %.0fs (exit %s):\n%s"
                         % (timeout, rc, self.output()))

    def _read(self):
        for raw in iter(self.proc.stdout.readline, b""):
            self._lines.put(raw.decode(errors="replace").rstrip("\n"))
        self._lines.put(None)

    def output(self):
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def url(self, path):
        return self.base + path

    def tls_url(self, path):
        if not self.tls_base:
            raise SetupError("the lab was started without TLS")
        return self.tls_base + path

    def counts(self, timeout=5.0):
        with urllib.request.urlopen(self.base + "/_counts", timeout=timeout) as r:
            return json.loads(r.read())

    def endpoint_counts(self, path, timeout=5.0):
        return self.counts(timeout).get("endpoints", {}).get(path, {})

    def other_origin(self, timeout=5.0):
        """What reached the other port: {requests, with_authorization, methods, by_from}."""
        return self.counts(timeout).get("other_origin", {})

    def stop(self):
        if self.proc is not None:
            mcptest.terminate(self.proc, grace=3.0)
            self.proc = None


_NGINX_CONF = """\
# generated by tests/integration/faultlab.py
{user}
worker_processes 1;
daemon off;
master_process on;
pid {dir}/nginx.pid;
error_log {dir}/error.log info;
events {{
    worker_connections 64;
}}
http {{
    access_log {dir}/access.log;
    client_body_temp_path {dir}/client_body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    server {{
        listen 127.0.0.1:{port};
        server_name faultlab-gateway;
{locations}
    }}
}}
"""

_NGINX_LOCATION = """\
        location {prefix} {{
            proxy_pass {upstream};
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_connect_timeout 2s;
            proxy_read_timeout {read_timeout};
            proxy_send_timeout 5s;
        }}
"""


class Nginx:
    """A real nginx (daemon off, everything in a temp dir) on 127.0.0.1.

    routes: [(location prefix, upstream URL, proxy_read_timeout)]"""

    def __init__(self, routes, port=None):
        self.routes = routes
        self.port = port or mcptest.free_port()
        self.dir = mcptest.tmpdir() / ("nginx-%d" % self.port)
        self.proc = None

    @property
    def base(self):
        return "http://%s:%d" % (LOOPBACK, self.port)

    def url(self, path):
        return self.base + path

    def start(self, timeout=15.0):
        if not (os.path.isfile(NGINX) and os.access(NGINX, os.X_OK)):
            raise SetupError("nginx not found (%s); install nginx-light" % NGINX)
        self.dir.mkdir(parents=True, exist_ok=True)
        locs = "".join(_NGINX_LOCATION.format(prefix=p, upstream=u, read_timeout=t)
                       for p, u, t in self.routes)
        # As root the workers would run as "nobody"; keep them as we are so
        # they can use the temp dir.
        user = "user root;" if os.geteuid() == 0 else ""
        conf = self.dir / "nginx.conf"
        conf.write_text(_NGINX_CONF.format(user=user, dir=self.dir, port=self.port, locations=locs))
        out = open(self.dir / "stderr.log", "ab")
        self.proc = mcptest.spawn([NGINX, "-p", str(self.dir), "-c", str(conf), "-e",
                                   str(self.dir / "error.log")], stdout=out, stderr=subprocess.STDOUT)
        out.close()
        if not mcptest.wait_port(self.port, timeout=timeout, proc=self.proc):
            rc = self.proc.poll()
            mcptest.terminate(self.proc)
            raise SetupError("nginx did not listen on %s:%d within %.0fs (exit %s):\n%s"
                             % (LOOPBACK, self.port, timeout, rc, self.output()))
        return self

    def output(self):
        text = []
        for name in ("stderr.log", "error.log"):
            try:
                text.append((self.dir / name).read_text(errors="replace"))
            except OSError:
                pass
        return "\n".join(text)

    def stop(self):
        if self.proc is not None:
            mcptest.terminate(self.proc, grace=3.0)
            self.proc = None
