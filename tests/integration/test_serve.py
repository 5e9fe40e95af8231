#!/usr/bin/env python3
"""`mcptop serve` (issue 20) with the real parts around it: the fault lab's
endpoints as the fleet, two exporters splitting it with --shard 1/2 and 2/2,
and Debian's Prometheus scraping both every second with contrib's alert
rules loaded. Through Prometheus's HTTP query API: sum(mcp_up), the failure
counters and the shard sizes are what the fleet implies, every target
scrapes clean (OpenMetrics, which Prometheus asks for), the rules evaluate,
and every query of the Grafana dashboard runs. promtool checks the text
exposition and the rules (and runs the rules' unit tests). Then the
endpoints: auth, status codes, /fleet, /readyz, SIGHUP, SIGTERM ending the
sessions, bad arguments.

Everything on 127.0.0.1; every wait is bounded and waits for the state it
asserts.

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_serve.py
"""

import base64
import gzip
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402
from mcptest import LOOPBACK, SetupError  # noqa: E402
import faultlab  # noqa: E402

rep = mcptest.Reporter("serve: Prometheus exporter, shards, endpoints")

CONTRIB = mcptest.REPO_DIR / "contrib"
ALERTS = CONTRIB / "prometheus" / "alerts.yml"
ALERTS_TEST = CONTRIB / "prometheus" / "alerts_test.yml"
DASHBOARD = CONTRIB / "grafana" / "mcptop.json"
PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"
PROMTOOL = shutil.which("promtool") or "/usr/bin/promtool"

FAST = {"timeout_ms": 1500, "open_deadline_ms": 1500, "ping_interval_s": 1}
STATE_WAIT = 45.0   # seconds for Prometheus to see the fleet settle
EXIT_WAIT = 10.0

_LISTEN = re.compile(r"listening on http://([0-9.]+|\[[0-9a-f:]+\]):(\d+)/metrics")


def fnv1a64(data):
    """The shard hash, written again here from its definition."""
    h = 0xcbf29ce484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def shard_of(name, n):
    return fnv1a64(name.encode()) % n + 1


class Serve:
    """A running `mcptop serve ... --listen 127.0.0.1:0`."""

    def __init__(self, args, env=None, timeout=20.0):
        mcptest.require_mcptop()
        self.argv = [mcptest.MCPTOP_BIN, "serve", "--listen", "%s:0" % LOOPBACK] + [str(a) for a in args]
        self.err_path = mcptest.tmpdir() / ("serve-%d.log" % id(self))
        with open(self.err_path, "wb") as err:
            self.proc = mcptest.spawn(self.argv, env=mcptest.mcptop_env(env),
                                      stdout=subprocess.DEVNULL, stderr=err)
        deadline = time.monotonic() + timeout
        self.port = None
        while time.monotonic() < deadline:
            m = _LISTEN.search(self.stderr())
            if m:
                self.port = int(m.group(2))
                break
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        if self.port is None:
            self.close()
            raise SetupError("mcptop serve did not say where it listens:\n%s" % self.stderr())

    @property
    def target(self):
        return "%s:%d" % (LOOPBACK, self.port)

    def stderr(self):
        try:
            return self.err_path.read_text(errors="replace")
        except OSError:
            return ""

    def get(self, path, headers=None, method="GET", data=None, timeout=10.0):
        """(status, headers dict (lower-case names), body bytes)."""
        req = urllib.request.Request("http://%s%s" % (self.target, path), headers=headers or {},
                                     method=method, data=data)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
        except urllib.error.HTTPError as e:
            return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read()

    def metrics(self, headers=None):
        status, _, body = self.get("/metrics", headers)
        if status != 200:
            raise AssertionError("/metrics answered %d" % status)
        return body.decode()

    def wait_ready(self, timeout=20.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.get("/readyz")[0] == 200:
                return True
            time.sleep(0.1)
        return False

    def signal(self, sig):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, sig)

    def wait_exit(self, timeout):
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def close(self):
        return mcptest.terminate(self.proc, grace=5.0)


class Prometheus:
    """Debian's prometheus on 127.0.0.1, scraping targets every second."""

    def __init__(self, targets, rules=None, probe_sd=None):
        if not (os.path.isfile(PROMETHEUS) and os.access(PROMETHEUS, os.X_OK)):
            raise SetupError("prometheus is not installed: run scripts/install-deps.sh")
        self.port = mcptest.free_port()
        self.dir = mcptest.tmpdir() / ("prometheus-%d" % self.port)
        self.dir.mkdir()
        cfg = ["global:", "  scrape_interval: 1s", "  evaluation_interval: 1s"]
        if rules:
            cfg += ["rule_files:", "  - %s" % json.dumps(str(rules))]
        cfg += ["scrape_configs:", "  - job_name: mcptop", "    scrape_interval: 1s",
                "    scrape_timeout: 900ms", "    static_configs:",
                "      - targets: %s" % json.dumps(targets)]
        if probe_sd:
            # doc/serve.md's /probe job: targets from each exporter's /sd,
            # the name relabelled into ?target=, the exporter's address
            # from __meta_mcptop_address.
            cfg += ["  - job_name: mcptop-probe", "    metrics_path: /probe", "    scrape_interval: 2s",
                    "    scrape_timeout: 1900ms", "    http_sd_configs:"]
            cfg += ["      - url: %s\n        refresh_interval: 1s" % json.dumps(u) for u in probe_sd]
            cfg += ["    relabel_configs:",
                    "      - source_labels: [__address__]", "        target_label: __param_target",
                    "      - source_labels: [__param_target]", "        target_label: instance",
                    "      - source_labels: [__meta_mcptop_address]", "        target_label: __address__"]
        (self.dir / "prometheus.yml").write_text("\n".join(cfg) + "\n")
        self.log = self.dir / "prometheus.log"
        with open(self.log, "wb") as log:
            self.proc = mcptest.spawn([PROMETHEUS, "--config.file=%s" % (self.dir / "prometheus.yml"),
                                       "--storage.tsdb.path=%s" % (self.dir / "data"),
                                       "--web.listen-address=%s:%d" % (LOOPBACK, self.port),
                                       "--log.level=warn"],
                                      stdout=log, stderr=subprocess.STDOUT, cwd=str(self.dir))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen("http://%s:%d/-/ready" % (LOOPBACK, self.port), timeout=1) as r:
                    if r.status == 200:
                        return
            except (OSError, urllib.error.URLError):
                pass
            if self.proc.poll() is not None:
                break
            time.sleep(0.2)
        raise SetupError("prometheus did not become ready:\n%s" % self.output())

    def output(self):
        try:
            return self.log.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def api(self, path, **params):
        url = "http://%s:%d/api/v1/%s" % (LOOPBACK, self.port, path)
        if params:
            url += "?" + urllib.parse.urlencode(params)
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return json.loads(r.read())
        except urllib.error.HTTPError as e:
            return json.loads(e.read())

    def query(self, expr):
        """The instant vector of expr as {frozenset(labels): value}."""
        d = self.api("query", query=expr)
        if d.get("status") != "success":
            raise AssertionError("query %r failed: %s" % (expr, d))
        out = {}
        for s in d["data"]["result"]:
            out[frozenset(s["metric"].items())] = float(s["value"][1])
        return out

    def scalar(self, expr):
        """The single value of expr, or None when the vector is empty."""
        v = self.query(expr)
        return next(iter(v.values())) if len(v) == 1 else None

    def wait(self, what, fn, timeout=STATE_WAIT):
        """Poll fn() until it returns True; False at the deadline."""
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            try:
                if fn():
                    return True
            except AssertionError as e:
                last = e
            time.sleep(0.5)
        if last:
            mcptest.log("  (%s: last error %s)" % (what, last))
        return False

    def close(self):
        mcptest.terminate(self.proc, grace=5.0)


# --------------------------------------------------------------------------
# the fleet


def lab_fleet(lab):
    """Seven servers whose state is known ahead: four reachable (one of
    them answering pings with a JSON-RPC error, one whose first session
    expires), one 401 at the dial (unknown), one refused (unreachable),
    one that cannot be dialed (absent)."""
    refused = "http://%s:%d/mcp" % (LOOPBACK, mcptest.free_port())
    servers = {
        "healthy-a": {"url": lab.url("/healthy"), "tags": ["team=core"]},
        "healthy-b": {"url": lab.url("/healthy?tools=5")},
        "rpc-ping": {"url": lab.url("/rpcerror/ping")},
        "expire": {"url": lab.url("/expire?after=2&times=1")},
        "auth": {"url": lab.url("/auth401/dial")},
        "refused": {"url": refused},
        "broken": {"url": "notaurl"},
    }
    return servers, mcptest.write_config(servers, mcptop=FAST)


def by_label(vec, label):
    return {dict(k).get(label): v for k, v in vec.items()}


@mcptest.case(rep)
def prometheus_scrapes_two_shards(c):
    lab = faultlab.FaultLab().start()
    servers, cfg = lab_fleet(lab)
    shards = [Serve(["-c", cfg, "--shard", "%d/2" % k, "--label-from-tags", "team"]) for k in (1, 2)]
    prom = Prometheus([s.target for s in shards], rules=ALERTS,
                      probe_sd=["http://%s/sd" % s.target for s in shards])
    try:
        # Both targets up, scraped clean (Prometheus asks for OpenMetrics).
        c.require(prom.wait("targets up", lambda: prom.scalar('sum(up{job="mcptop"})') == 2),
                  "both exporters up in Prometheus; targets: %s\n%s"
                  % (json.dumps(prom.api("targets")), prom.output()))
        # Each shard holds exactly the servers the hash gives it.
        want = {k: sorted(n for n in servers if shard_of(n, 2) == k) for k in (1, 2)}
        for k, s in zip((1, 2), shards):
            v = prom.scalar('mcptop_servers{instance="%s"}' % s.target)
            c.eq(v, float(len(want[k])), "mcptop_servers of shard %d/2 (%s)" % (k, want[k]))
            info = prom.query('mcptop_shard_info{instance="%s"}' % s.target)
            c.eq(sorted(dict(x).get("shard") for x in info), ["%d/2" % k], "shard label of %s" % s.target)
        names = prom.query("count by (server, instance) (mcp_up)")
        c.eq(sorted(dict(k)["server"] for k in names), sorted(servers), "every server in exactly one shard")

        # The state the fleet implies, through the query API.
        def settled():
            return (prom.scalar("sum(mcp_up)") == 4.0 and
                    prom.scalar('count(mcp_health{state="down"})') == 1.0 and
                    prom.scalar('count(mcp_health{state="unknown"})') == 1.0 and
                    prom.scalar('count(mcp_health{state="invalid"})') == 1.0 and
                    prom.scalar('sum(mcp_client_session_duration_seconds_count{transport="http"})') is not None)
        ok = prom.wait("fleet settled", settled)
        c.check(ok, "sum(mcp_up) = 4 and one each of down/unknown/invalid, and the expired "
                "session measured (fleet-wide); up: %s; health: %s"
                % (by_label(prom.query("mcp_up"), "server"),
                   prom.query("mcp_health")))
        up = by_label(prom.query("mcp_up"), "server")
        for n in ("healthy-a", "healthy-b", "rpc-ping", "expire"):
            c.eq(up.get(n), 1.0, "mcp_up{server=%s}" % n)
        for n in ("auth", "refused", "broken"):
            c.eq(up.get(n), 0.0, "mcp_up{server=%s}" % n)
        # Health: one mcp_health series per server, its state's; the
        # probe success 1 exactly when ok (rpc-ping is up but degraded).
        want_health = {"healthy-a": "ok", "healthy-b": "ok", "rpc-ping": "degraded", "auth": "unknown",
                       "refused": "down", "broken": "invalid"}

        def health_now():
            return {dict(k)["server"]: dict(k)["state"] for k in prom.query("mcp_health == 1")}
        c.check(prom.wait("health settled", lambda: all(health_now().get(n) == w for n, w in want_health.items())),
                "mcp_health of the fleet: %s" % health_now())
        c.eq(prom.query("count by (server) (mcp_health) > 1"), {}, "one mcp_health series per server")
        probe = by_label(prom.query("mcp_probe_success"), "server")
        for n, w in want_health.items():
            c.eq(probe.get(n), 1.0 if w == "ok" else 0.0, "mcp_probe_success{server=%s}" % n)
        # Failure counters: which servers, which kind, delivered, reason.
        fails = prom.query("sum by (server, kind, delivered, reason) (mcp_failures_total)")
        got = {(dict(k)["server"], dict(k)["kind"], dict(k)["delivered"], dict(k).get("reason", "")): v
               for k, v in fails.items()}
        c.eq(got.get(("broken", "invalid_config", "no", "")), 1.0, "invalid_config counted once for broken")
        c.check(got.get(("refused", "connect_refused", "no", ""), 0) >= 1,
                "connect_refused/no counted for refused: %s" % got)
        c.check(got.get(("auth", "http_status", "unknown", "auth"), 0) >= 1,
                "http_status/unknown/auth counted for auth: %s" % got)
        c.check(got.get(("rpc-ping", "protocol", "yes", ""), 0) >= 1,
                "protocol/yes counted for rpc-ping: %s" % got)
        c.check(got.get(("expire", "http_status", "unknown", "not_found"), 0) >= 1,
                "the expired session's 404 counted for expire: %s" % got)
        c.eq(sorted({s for (s, _, _, _) in got}), ["auth", "broken", "expire", "refused", "rpc-ping"],
             "servers with failures")
        c.eq(prom.scalar('count(mcp_failures_total{kind="connect_refused"})'), 1.0,
             "one connect_refused series in the fleet")
        # The liveness histogram's error_type per the conventions: the
        # JSON-RPC code, the kind below it; the dial is fleet-wide.
        et = prom.query("sum by (server, mcp_method_name, error_type) (mcp_client_operation_duration_seconds_count)")
        keys = {(dict(k)["server"], dict(k)["mcp_method_name"], dict(k).get("error_type", "")) for k in et}
        c.check(("rpc-ping", "ping", "-32603") in keys, "rpc-ping's pings have error_type -32603: %s" % sorted(keys))
        c.check(("healthy-a", "ping", "") in keys, "healthy-a's pings have no error_type")
        c.check(not any(m == "dial" for _, m, _ in keys), "no per-server dial series: %s" % sorted(keys))
        c.check((prom.scalar('sum(mcp_dial_duration_seconds_count{transport="http",era="legacy"})') or 0) >= 4,
                "the fleet-wide dial histogram counts the completed dials")
        # The failure each server is in now, 1 only while failing.
        cur = {dict(k)["server"]: (dict(k)["kind"], dict(k)["delivered"], dict(k).get("reason", ""))
               for k in prom.query("mcp_last_failure_info == 1")}
        c.eq(cur.get("refused"), ("connect_refused", "no", ""), "refused's current failure: %s" % cur)
        c.eq(cur.get("auth"), ("http_status", "unknown", "auth"), "auth's current failure")
        c.eq(cur.get("broken"), ("invalid_config", "no", ""), "broken's current failure")
        c.check("healthy-a" not in cur and "healthy-b" not in cur, "no current failure on healthy servers")
        rtt = by_label(prom.query("mcp_last_rtt_seconds"), "server")
        c.check(0 < rtt.get("healthy-a", 0) < 2, "healthy-a's last round trip: %s" % rtt)
        c.check("refused" not in rtt, "no round trip for a failing server")
        last_ok = by_label(prom.query("time() - mcp_last_success_timestamp_seconds"), "server")
        c.check(-5 < last_ok.get("healthy-a", -99) < 30, "healthy-a succeeded lately: %s" % last_ok)
        c.check("refused" not in last_ok, "refused never succeeded")
        # Tags as labels; info; tools.
        c.eq(prom.scalar('count(mcp_up{team="core"})'), 1.0, "the team tag became a label on healthy-a")
        c.eq(by_label(prom.query("mcp_tools"), "server").get("healthy-b"), 5.0, "mcp_tools of healthy-b")
        info = prom.query('mcp_server_info{server="healthy-a"}')
        c.check(any(dict(k).get("era") == "legacy" and dict(k).get("server_name") == "faultlab"
                    and dict(k).get("protocol_version") for k in info),
                "mcp_server_info of healthy-a: %s" % info)
        # The liveness buckets, 1 ms to 10 s (Prometheus keeps le as written).
        les = {dict(k)["le"] for k in prom.query(
            'mcp_client_operation_duration_seconds_bucket{server="healthy-a",mcp_method_name="ping"}')}
        c.eq(len(les), 8, "8 buckets: %s" % sorted(les))
        c.check({"0.001", "10.0", "+Inf"} <= les or {"0.001", "10", "+Inf"} <= les,
                "buckets from 0.001 to 10 s: %s" % sorted(les))
        # /probe driven from /sd by relabelling: every server is a target
        # of the probe job, probed through the exporter that lists it, and
        # probe_success says which are ok (rpc-ping answers, degraded).
        want_probe = {"healthy-a": 1.0, "healthy-b": 1.0, "rpc-ping": 0.0, "auth": 0.0, "refused": 0.0,
                      "broken": 0.0}

        def probes_now():
            return by_label(prom.query('probe_success{job="mcptop-probe"}'), "instance")
        c.check(prom.wait("probes", lambda: all(probes_now().get(n) == w for n, w in want_probe.items())),
                "probe_success by /sd target: %s; targets: %s" % (
                    probes_now(), [(t["labels"], t.get("lastError")) for t in prom.api("targets")["data"]["activeTargets"]
                                   if t["labels"].get("job") == "mcptop-probe"]))
        # Wait for the state asserted: each target's first probe scrape
        # (a target found by /sd after the others is scraped later).
        def probe_targets():
            return sorted(by_label(prom.query('up{job="mcptop-probe"}'), "instance"))
        prom.wait("every probe target scraped", lambda: probe_targets() == sorted(servers))
        c.eq(probe_targets(), sorted(servers), "one probe target per server, from both shards' /sd")
        c.eq(by_label(prom.query('probe_success{job="mcptop-probe",team="core"}'), "server"), {"healthy-a": 1.0},
             "a tag became a label of the probe's series, with server")
        fi = {dict(k)["instance"]: dict(k)["kind"] for k in prom.query('mcp_probe_failure_info{job="mcptop-probe"}')}
        c.eq((fi.get("refused"), fi.get("auth"), fi.get("broken")), ("connect_refused", "http_status", "invalid_config"),
             "mcp_probe_failure_info of the failing targets: %s" % fi)
        # Scrapes clean, rules healthy, dashboard queries valid.
        for t in prom.api("targets")["data"]["activeTargets"]:
            c.eq(t.get("lastError"), "", "scrape error of %s" % t.get("scrapeUrl"))
        rules = [r for g in prom.api("rules")["data"]["groups"] for r in g["rules"]]
        c.eq(len(rules), 11, "alert rules loaded")
        c.check(prom.wait("rules evaluated", lambda: all(
            r.get("health") == "ok" for g in prom.api("rules")["data"]["groups"] for r in g["rules"])),
            "every rule evaluates: %s" % [(r["name"], r.get("health"), r.get("lastError"))
                                         for g in prom.api("rules")["data"]["groups"] for r in g["rules"]])
        dash = json.loads(DASHBOARD.read_text())
        exprs = [t["expr"] for p in dash["panels"] for t in p.get("targets", [])]
        c.check(len(exprs) >= 20, "dashboard has its queries (%d)" % len(exprs))
        for e in exprs:
            q = e.replace("$job", "mcptop").replace("$server", ".*").replace("$__rate_interval", "1m")
            d = prom.api("query", query=q)
            c.check(d.get("status") == "success", "dashboard query runs: %s -> %s" % (q, d.get("error")))
    finally:
        prom.close()
        rcs = []
        for s in shards:
            s.signal(signal.SIGTERM)
            rcs.append(s.wait_exit(EXIT_WAIT))
        for s, rc in zip(shards, rcs):
            if not c.check(rc == 0, "serve exits 0 after SIGTERM (got %s)" % rc):
                c.attach(s.stderr())
            s.close()
        lab.stop()


# What a healthy server has in a scrape (mcptop(1), METRICS, "Series"; the
# METRICS_SERIES_HEALTHY of include/export/metrics.h): issue 29's bound.
HEALTHY_SERIES = 18
# Series that only a failure brings: a failed liveness exchange's own
# histogram series (error_type), the counters and the current failure.
_FAILURE_ONLY = re.compile(r'error_type="|^mcp_failures_total|^mcp_last_failure_info|^mcp_endings_total')


def count_series(c, text, names):
    """Every sample of each server in names: exactly HEALTHY_SERIES that
    a healthy server always has, and at most 20 in all while nothing failed."""
    for n in names:
        lines = [ln for ln in text.splitlines()
                 if ln and not ln.startswith("#") and ('{server="%s"' % n) in ln]
        core = [ln for ln in lines if not _FAILURE_ONLY.search(ln)]
        c.attach("series of %s: %d (%d without failures)" % (n, len(lines), len(core)))
        if not c.eq(len(core), HEALTHY_SERIES, "series of the healthy server %s" % n):
            c.attach("\n".join(lines))
        if len(lines) == len(core):
            c.check(len(lines) <= 20, "at most 20 series for %s: %d" % (n, len(lines)))


@mcptest.case(rep)
def promtool_accepts_exposition_and_rules(c):
    if not (os.path.isfile(PROMTOOL) and os.access(PROMTOOL, os.X_OK)):
        raise SetupError("promtool is not installed: run scripts/install-deps.sh")
    r = mcptest.run([PROMTOOL, "check", "rules", ALERTS], timeout=30)
    c.check(r.rc == 0 and "SUCCESS" in r.stdout, "promtool check rules:\n%s" % r.describe())
    r = mcptest.run([PROMTOOL, "test", "rules", ALERTS_TEST], timeout=60)
    c.check(r.rc == 0 and "SUCCESS" in r.stdout, "promtool test rules:\n%s" % r.describe())
    lab = faultlab.FaultLab().start()
    servers, cfg = lab_fleet(lab)
    s = Serve(["-c", cfg])
    try:
        c.require(s.wait_ready(), "readyz 200 once every first dial settled:\n%s" % s.stderr())
        deadline = time.monotonic() + 20
        text = s.metrics()
        while time.monotonic() < deadline and not all(
                'mcp_client_operation_duration_seconds_count{server="%s"' % n in text for n in ("healthy-a", "healthy-b")):
            time.sleep(0.2)
            text = s.metrics()
        count_series(c, text, ("healthy-a", "healthy-b"))
        # What Prometheus gets: OpenMetrics, gzipped (it sends both headers).
        status, h, body = s.get("/metrics", {"Accept-Encoding": "gzip",
                                             "Accept": "application/openmetrics-text;version=1.0.0"})
        c.eq((status, h.get("content-encoding")), (200, "gzip"), "/metrics gzipped for Prometheus")
        om = gzip.decompress(body).decode()
        c.check(om.endswith("# EOF\n") and "# TYPE mcp_health gauge" in om, "the gzipped OpenMetrics exposition")
        for fam in ("mcp_up", "mcp_last_rtt_seconds", "mcp_last_success_timestamp_seconds", "mcp_last_failure_info",
                    "mcp_probe_success", "mcp_health", "mcp_failures_total",
                    "mcp_client_operation_duration_seconds", "mcp_dial_duration_seconds",
                    "mcp_server_info", "mcptop_build_info", "process_cpu_seconds_total"):
            c.check("# TYPE %s " % fam in text, "family %s in the exposition" % fam)
        status, h, body = s.get("/metrics", {"Accept-Encoding": "gzip"})
        c.eq(h.get("content-encoding"), "gzip", "text gzipped")
        for what, t in (("plain", text.encode()), ("gunzipped", gzip.decompress(body))):
            r = mcptest.run([PROMTOOL, "check", "metrics"], input=t, timeout=30)
            c.check(r.rc == 0 and r.stdout.strip() == "" and r.stderr.strip() == "",
                    "promtool check metrics accepts the %s exposition:\n%s" % (what, r.describe()))
    finally:
        s.signal(signal.SIGTERM)
        c.eq(s.wait_exit(EXIT_WAIT), 0, "exit status after SIGTERM")
        s.close()
        lab.stop()


@mcptest.case(rep)
def endpoints_and_bearer_token(c):
    lab = faultlab.FaultLab().start()
    cfg = mcptest.write_config({"one": {"url": lab.url("/healthy")}}, mcptop=FAST)
    token = "tok-" + base64.b32encode(os.urandom(10)).decode().rstrip("=")
    tfile = mcptest.write_file(token + "\n", suffix=".token")
    os.chmod(tfile, 0o600)
    s = Serve(["-c", cfg, "--bearer-token-file", tfile])
    try:
        c.require(s.wait_ready(), "readyz 200:\n%s" % s.stderr())
        status, h, _ = s.get("/metrics")
        c.eq(status, 401, "/metrics without credentials")
        c.check(h.get("www-authenticate", "").startswith("Bearer"), "401 names the scheme: %s" % h)
        c.eq(s.get("/metrics", {"Authorization": "Bearer " + token + "x"})[0], 401, "wrong token")
        c.eq(s.get("/metrics", {"Authorization": "Bearer " + token[:-1]})[0], 401, "short token")
        c.eq(s.get("/metrics", {"Authorization": "Basic " + base64.b64encode(token.encode()).decode()})[0],
             401, "a token in the wrong scheme")
        status, h, body = s.get("/metrics", {"Authorization": "Bearer " + token})
        c.eq(status, 200, "/metrics with the token")
        c.eq(h.get("content-type"), "text/plain; version=0.0.4; charset=utf-8", "text by default")
        c.check(b'mcp_up{server="one"} 1' in body, "the healthy server is up")
        status, h, body = s.get("/metrics", {"Authorization": "bearer " + token,
                                             "Accept": "application/openmetrics-text; version=1.0.0"})
        c.eq(status, 200, "scheme is case-insensitive")
        c.eq(h.get("content-type"), "application/openmetrics-text; version=1.0.0; charset=utf-8",
             "OpenMetrics when asked")
        c.check(body.endswith(b"# EOF\n"), "OpenMetrics ends with # EOF")
        # gzip when asked (Prometheus asks on every scrape), plain otherwise.
        status, h, body = s.get("/metrics", {"Authorization": "Bearer " + token, "Accept-Encoding": "gzip"})
        c.eq((status, h.get("content-encoding")), (200, "gzip"), "gzip when Accept-Encoding asks")
        c.check("accept-encoding" in h.get("vary", "").lower(), "Vary: Accept-Encoding: %s" % h)
        c.check(body[:2] == b"\x1f\x8b" and b'mcp_up{server="one"} 1' in gzip.decompress(body),
                "the answer is a gzip member of the exposition")
        for ae in ("gzip;q=0, identity", "identity", "br"):
            status, h, body = s.get("/metrics", {"Authorization": "Bearer " + token, "Accept-Encoding": ae})
            c.check(status == 200 and "content-encoding" not in h and b'mcp_up{server="one"} 1' in body,
                    "plain for Accept-Encoding %r: %s" % (ae, h))
        status, h, body = s.get("/fleet", {"Authorization": "Bearer " + token, "Accept-Encoding": "x-gzip, *;q=0"})
        c.check(h.get("content-encoding") == "gzip" and json.loads(gzip.decompress(body))["servers"],
                "/fleet gzipped too: %s" % h)
        # /fleet: the check --json document, live.
        c.eq(s.get("/fleet")[0], 401, "/fleet needs the token too")
        c.eq(s.get("/probe?target=one")[0], 401, "/probe needs the token too")
        c.eq(s.get("/sd")[0], 401, "/sd needs the token too")
        status, h, body = s.get("/fleet", {"Authorization": "Bearer " + token})
        c.eq(status, 200, "/fleet")
        c.eq(h.get("content-type"), "application/json", "/fleet content type")
        doc = json.loads(body)
        chk = mcptest.run_mcptop(["check", "--json", "-c", cfg], timeout=30)
        ref = json.loads(chk.stdout)
        c.eq(sorted(doc), sorted(k for k in ref if k != "stats"), "/fleet has check --json's top-level keys")
        c.eq(sorted(doc["servers"][0]), sorted(ref["servers"][0]), "a /fleet server has check --json's keys")
        c.eq(doc["summary"]["reachable"], 1, "/fleet summary")
        # Probes need no credentials; the rest of HTTP.
        c.eq(s.get("/livez")[:1], (200,), "/livez")
        c.eq(s.get("/readyz")[:1], (200,), "/readyz")
        status, h, _ = s.get("/metrics", method="POST", data=b"x=1")
        c.eq(status, 405, "POST /metrics")
        c.eq(h.get("allow"), "GET, HEAD", "405 says what is allowed")
        c.eq(s.get("/nothing")[0], 404, "unknown path")
        c.eq(s.get("/metrics", {"Authorization": "Bearer " + token}, method="HEAD")[0], 200, "HEAD /metrics")
        # The secret is never printed; the command line names a file only.
        c.check(token not in s.stderr(), "the token is not in stderr")
        c.check(token not in " ".join(s.argv), "the token is not on the command line")
        # SIGHUP: reload. "one" is unchanged and keeps its session; "two"
        # is new and dials.
        issued = lab.endpoint_counts("/healthy").get("sessions_issued", 0)
        with open(cfg, "w") as f:
            json.dump({"mcpServers": {"one": {"url": lab.url("/healthy")},
                                      "two": {"url": lab.url("/healthy?t=two")}},
                       "mcptop": FAST}, f)
        s.signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        text = ""
        while time.monotonic() < deadline:
            text = s.get("/metrics", {"Authorization": "Bearer " + token})[2].decode()
            if 'mcp_up{server="two"} 1' in text:
                break
            time.sleep(0.2)
        err = s.stderr()
        c.check(s.proc.poll() is None, "serve keeps running after SIGHUP")
        c.check("reload: 2 servers" in err, "reload said what it loaded: %s" % err)
        c.check("mcptop_config_last_reload_successful 1" in text, "reload reported as successful")
        c.check('mcp_up{server="two"} 1' in text, "the added server is up after the reload")
        c.check('mcp_up{server="one"} 1' in text, "the unchanged server is still up")
        c.eq(lab.endpoint_counts("/healthy").get("sessions_issued", 0) - issued, 0,
             "the unchanged server kept its session (no new one on /healthy)")
        # A config that no longer parses: the running fleet stays.
        with open(cfg, "w") as f:
            f.write("{ not json")
        s.signal(signal.SIGHUP)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and "the running config stays" not in s.stderr():
            time.sleep(0.1)
        text = s.get("/metrics", {"Authorization": "Bearer " + token})[2].decode()
        c.check("mcptop_config_last_reload_successful 0" in text, "a failed reload is reported")
        c.check('mcp_up{server="two"} 1' in text, "the running fleet goes on after a failed reload")
    finally:
        before = lab.endpoint_counts("/healthy").get("sessions_deleted", 0)
        s.signal(signal.SIGTERM)
        rc = s.wait_exit(EXIT_WAIT)
        c.eq(rc, 0, "exit status after SIGTERM")
        s.close()
    # SIGTERM ended serve's session, as watch does.
    after = lab.endpoint_counts("/healthy").get("sessions_deleted", 0)
    c.eq(after - before, 1, "serve ended its session with DELETE on SIGTERM")
    lab.stop()


# A stdio MCP server in a few lines of Python: initialize, the
# initialized notice, tools/list (one tool), ping; it exits when stdin
# closes (the stdio ending's first step).
STDIO_SERVER = r"""
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if "id" not in m:
        continue
    r = {}
    if m["method"] == "initialize":
        r = {"protocolVersion": m["params"]["protocolVersion"], "capabilities": {"tools": {}},
             "serverInfo": {"name": "py", "version": "1"}}
    elif m["method"] == "tools/list":
        r = {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}
    elif m["method"] == "server/discover":
        print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "error": {"code": -32601, "message": "no"}}), flush=True)
        continue
    print(json.dumps({"jsonrpc": "2.0", "id": m["id"], "result": r}), flush=True)
"""


def samples(text):
    """{(name, frozenset(labels)): value} of a text exposition."""
    out = {}
    for ln in text.splitlines():
        m = re.match(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$', ln)
        if m:
            labels = frozenset(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m.group(2) or ""))
            out[(m.group(1), labels)] = float(m.group(3))
    return out


def probe_value(smp, name, **labels):
    return smp.get((name, frozenset(labels.items())))


@mcptest.case(rep)
def probe_one_server_now(c):
    """/probe?target=NAME: one check of that server now, answered in
    blackbox_exporter's names, its session ended before the answer; unknown
    targets are 400s; at most 16 probes at once while /metrics goes on."""
    import threading
    lab = faultlab.FaultLab().start()
    refused = "http://%s:%d/mcp" % (LOOPBACK, mcptest.free_port())
    cfg = mcptest.write_config({
        "probed": {"url": lab.url("/healthy?probe=1"), "tags": ["team=core", "prod", "9bad=x"]},
        "refused": {"url": refused},
        "rpc": {"url": lab.url("/rpcerror/ping")},
        "hang": {"url": lab.url("/hang/any")},
        "off": {"url": lab.url("/healthy?off=1"), "disabled": True},
        "stdio": {"command": sys.executable, "args": ["-c", STDIO_SERVER]},
    }, mcptop=FAST)
    s = Serve(["-c", cfg])
    threads = []
    try:
        c.require(s.wait_ready(), "readyz 200:\n%s" % s.stderr())
        before = lab.endpoint_counts("/healthy?probe=1")
        status, h, body = s.get("/probe?target=probed")
        after = lab.endpoint_counts("/healthy?probe=1")
        c.eq(status, 200, "/probe of a healthy server")
        c.eq(h.get("content-type"), "text/plain; version=0.0.4; charset=utf-8", "/probe content type")
        smp = samples(body.decode())
        c.eq(probe_value(smp, "probe_success"), 1.0, "probe_success of the healthy server:\n%s" % body.decode())
        c.check(0 < (probe_value(smp, "probe_duration_seconds") or 0) < 10, "probe_duration_seconds")
        c.eq(probe_value(smp, "mcp_probe_tools"), 3.0, "mcp_probe_tools")
        c.eq(probe_value(smp, "mcp_probe_protocol_info", version="2025-11-25", era="legacy"), 1.0,
             "mcp_probe_protocol_info")
        c.eq(probe_value(smp, "mcp_probe_ending_info", outcome="terminated"), 1.0, "the probe's ending")
        c.check(not any(n == "mcp_probe_failure_info" for n, _ in smp), "no failure on success")
        # Its own session, ended (DELETE) before the answer came.
        c.eq(after.get("sessions_issued", 0) - before.get("sessions_issued", 0), 1, "the probe dialed its own session")
        c.eq(after.get("sessions_deleted", 0) - before.get("sessions_deleted", 0), 1,
             "the probe's session was ended before the answer")
        if os.path.isfile(PROMTOOL):
            r = mcptest.run([PROMTOOL, "check", "metrics"], input=body, timeout=30)
            c.check(r.rc == 0 and r.stdout.strip() == "" and r.stderr.strip() == "",
                    "promtool check metrics accepts /probe's answer:\n%s" % r.describe())
        for name, kind, delivered in (("refused", "connect_refused", "no"), ("rpc", "protocol", "yes")):
            status, _, body = s.get("/probe?target=" + name)
            smp = samples(body.decode())
            c.eq((status, probe_value(smp, "probe_success")), (200, 0.0), "probe_success of %s" % name)
            c.eq(probe_value(smp, "mcp_probe_failure_info", kind=kind, delivered=delivered, reason=""), 1.0,
                 "mcp_probe_failure_info of %s:\n%s" % (name, body.decode()))
        # A stdio server's probe is a child of its own, ended (and reaped)
        # before the answer; the monitored child goes on.
        pid = [x.get("pid") for x in json.loads(s.get("/fleet")[2])["servers"] if x["name"] == "stdio"]
        status, _, body = s.get("/probe?target=stdio")
        smp = samples(body.decode())
        c.check(status == 200 and probe_value(smp, "probe_success") == 1.0 and
                probe_value(smp, "mcp_probe_ending_info", outcome="exited") == 1.0,
                "a stdio server's probe: its own child, exited: %d %r" % (status, body))
        c.eq([x.get("pid") for x in json.loads(s.get("/fleet")[2])["servers"] if x["name"] == "stdio"], pid,
             "the monitored stdio child is the same after the probe")
        c.check(pid and pid[0] and os.path.exists("/proc/%d" % pid[0]), "... and still runs: %s" % pid)
        # /sd: one target group per server not disabled, its name the
        # target, where to probe it from the Host it was asked at.
        status, h, body = s.get("/sd")
        c.eq((status, h.get("content-type")), (200, "application/json"), "/sd")
        groups = json.loads(body)
        c.eq(sorted(g["targets"][0] for g in groups), ["hang", "probed", "refused", "rpc", "stdio"],
             "/sd lists the servers, not the disabled one")
        probed = [g["labels"] for g in groups if g["targets"] == ["probed"]]
        c.check(probed and probed[0].get("team") == "core" and "9bad" not in probed[0] and
                probed[0].get("__meta_mcptop_tags") == ",team=core,prod,9bad=x,",
                "a KEY=VALUE tag is a label, every tag in __meta_mcptop_tags: %s" % probed)
        c.check(all(len(g["targets"]) == 1 and g["labels"]["server"] == g["targets"][0] and
                    g["labels"]["__meta_mcptop_address"] == s.target and
                    g["labels"]["__meta_mcptop_transport"] == ("stdio" if g["targets"] == ["stdio"] else "http")
                    for g in groups),
                "each group: its name, server, transport, the exporter's address: %s" % groups)
        status, h, body = s.get("/sd", {"Accept-Encoding": "gzip"})
        c.check(h.get("content-encoding") == "gzip" and json.loads(gzip.decompress(body)) == groups,
                "/sd gzipped when asked")
        # Never a 200 for what cannot be probed: a 400 with one line.
        for q, want in (("nope", "unknown target \"nope\": not a configured server"),
                        ("", "target parameter is missing"),
                        ("off", "disabled in the config"),
                        (urllib.parse.quote(lab.url("/healthy"), safe=""), "ad-hoc URLs need --probe-urls")):
            status, _, body = s.get("/probe?target=" + q if q else "/probe")
            text = body.decode()
            c.check(status == 400 and want in text and text.count("\n") == 1,
                    "/probe?target=%s: 400 with one line (%r): %d %r" % (q, want, status, text))
        # At most 16 at once; the loop goes on meanwhile (a probe waits on
        # the loop, it does not block it).
        results = []
        base = lab.endpoint_counts("/hang/any").get("POST", 0)

        def hang_probe():
            results.append(s.get("/probe?target=hang", {"X-Prometheus-Scrape-Timeout-Seconds": "4"}, timeout=20))

        threads = [threading.Thread(target=hang_probe, daemon=True) for _ in range(16)]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 3.0
        while time.monotonic() < deadline and lab.endpoint_counts("/hang/any").get("POST", 0) < base + 16:
            time.sleep(0.05)
        if lab.endpoint_counts("/hang/any").get("POST", 0) >= base + 16:
            status, _, body = s.get("/probe?target=probed")
            c.check(status == 503 and b"in flight" in body, "a 17th probe is a 503: %d %r" % (status, body))
            c.eq(s.get("/metrics", timeout=10)[0], 200, "/metrics answers while 16 probes wait")
        else:
            c.attach("the 16 probes did not all reach the lab within 3 s: the 503 was not tried")
        for t in threads:
            t.join(timeout=20)
        c.eq(len(results), 16, "every hanging probe answered")
        for status, _, body in results:
            smp = samples(body.decode())
            if not c.check(status == 200 and probe_value(smp, "probe_success") == 0.0 and
                           probe_value(smp, "mcp_probe_failure_info", kind="timeout", delivered="no", reason="") == 1.0,
                           "a hanging server's probe is a timeout by the scrape's deadline: %d %r" % (status, body)):
                break
        # A client that goes away while its probe runs: the answer is
        # dropped, and the next probe gets its own.
        import socket
        k = socket.create_connection((LOOPBACK, s.port), timeout=5)
        k.sendall(b"GET /probe?target=hang HTTP/1.1\r\nHost: x\r\nX-Prometheus-Scrape-Timeout-Seconds: 1.5\r\n\r\n")
        time.sleep(0.2)
        k.close()
        time.sleep(1.5)
        status, _, body = s.get("/probe?target=probed")
        c.check(status == 200 and probe_value(samples(body.decode()), "probe_success") == 1.0,
                "a probe after a client left mid-probe: %d %r" % (status, body))
        # --probe-urls: an ad-hoc http(s) URL is probed too; nothing else.
        s2 = Serve(["-c", mcptest.write_config({"x": {"url": "notaurl"}}), "--probe-urls"])
        try:
            status, _, body = s2.get("/probe?target=" + urllib.parse.quote(lab.url("/healthy?adhoc=1"), safe=""))
            c.check(status == 200 and probe_value(samples(body.decode()), "probe_success") == 1.0,
                    "--probe-urls probes an ad-hoc URL: %d %r" % (status, body))
            c.eq(lab.endpoint_counts("/healthy?adhoc=1").get("sessions_deleted", 0), 1, "... and ends its session")
            status, _, body = s2.get("/probe?target=" + urllib.parse.quote("file:///etc/passwd", safe=""))
            c.check(status == 400 and b"http:// or https://" in body, "only http(s): %d %r" % (status, body))
        finally:
            s2.close()
    finally:
        for t in threads:
            t.join(timeout=20)
        s.signal(signal.SIGTERM)
        c.eq(s.wait_exit(EXIT_WAIT), 0, "exit status after SIGTERM")
        s.close()
        lab.stop()


@mcptest.case(rep)
def certificate_and_token_expiry(c):
    """The https server's certificate expiry (libcurl's certificate info)
    and a cached token's, with whether it can be refreshed; a healthy https
    server with a token has 20 series, at the bound."""
    cert = faultlab.make_cert(days=2)
    lab = faultlab.FaultLab(tls=cert).start()
    state = mcptest.tmpdir() / "serve-state"
    (state / "mcptop").mkdir(parents=True)
    secure_url, plain_url = lab.tls_url("/healthy?tls=1"), lab.url("/healthy?tok=1")
    expires = int(time.time()) + 1800
    tokens = {"version": 1, "tokens": [
        {"server": "secure", "resource": secure_url, "access_token": "at-1", "token_type": "Bearer",
         "expires_at": expires, "obtained_at": expires - 3600},
        {"server": "plain", "resource": plain_url, "access_token": "at-2", "token_type": "Bearer",
         "expires_at": expires + 60, "obtained_at": expires - 3600, "refresh_token": "rt-2",
         "token_endpoint": "http://127.0.0.1:9/token", "client_id": "c"}]}
    tfile = state / "mcptop" / "tokens.json"
    tfile.write_text(json.dumps(tokens))
    os.chmod(tfile, 0o600)
    os.chmod(state / "mcptop", 0o700)
    cfg = mcptest.write_config({"secure": {"url": secure_url, "ca_file": cert.cert},
                                "plain": {"url": plain_url}}, mcptop=FAST)
    s = Serve(["-c", cfg], env={"XDG_STATE_HOME": str(state)})
    try:
        c.require(s.wait_ready(), "readyz 200:\n%s" % s.stderr())
        deadline = time.monotonic() + 20
        text = s.metrics()
        while time.monotonic() < deadline and 'mcp_client_operation_duration_seconds_count{server="secure"' not in text:
            time.sleep(0.2)
            text = s.metrics()
        smp = samples(text)
        r = mcptest.run(["openssl", "x509", "-enddate", "-noout", "-in", cert.cert], timeout=10)
        m = re.search(r"notAfter=(.*)", r.stdout)
        want = int(time.mktime(time.strptime(m.group(1).strip(), "%b %d %H:%M:%S %Y GMT")) - time.timezone) if m else None
        c.eq(probe_value(smp, "mcp_tls_cert_not_after_timestamp_seconds", server="secure"), float(want or -1),
             "the certificate's notAfter (%s)" % (m.group(1) if m else r.describe()))
        c.check(("mcp_tls_cert_not_after_timestamp_seconds", frozenset({("server", "plain")})) not in smp,
                "no certificate for an http server")
        c.eq(probe_value(smp, "mcp_oauth_token_expiry_timestamp_seconds", server="secure", refreshable="false"),
             float(expires), "a token with no refresh token: refreshable false")
        c.eq(probe_value(smp, "mcp_oauth_token_expiry_timestamp_seconds", server="plain", refreshable="true"),
             float(expires + 60), "a token with a refresh token: refreshable true")
        lines = [ln for ln in text.splitlines() if ln.startswith(("mcp_", "probe_")) and '{server="secure"' in ln]
        if not _FAILURE_ONLY.search("\n".join(lines)):
            c.eq(len(lines), HEALTHY_SERIES + 2, "a healthy https server with a token: 20 series:\n%s" % "\n".join(lines))
        # A token file that changes is read again at the next scrape.
        tokens["tokens"][0]["expires_at"] = expires + 7
        tfile.write_text(json.dumps(tokens))
        os.utime(tfile, (time.time() + 2, time.time() + 2))
        smp = samples(s.metrics())
        c.eq(probe_value(smp, "mcp_oauth_token_expiry_timestamp_seconds", server="secure", refreshable="false"),
             float(expires + 7), "the token file read again when it changed")
        c.check("at-1" not in text and "rt-2" not in text and "at-1" not in s.stderr(), "no token in the exposition")
    finally:
        s.close()
        lab.stop()


@mcptest.case(rep)
def basic_auth_from_environment(c):
    cfg = mcptest.write_config({"x": {"url": "notaurl"}})
    s = Serve(["-c", cfg], env={"MCPTOP_SERVE_BASIC_AUTH": "prom:s3cr:et"})
    try:
        good = "Basic " + base64.b64encode(b"prom:s3cr:et").decode()
        bad = "Basic " + base64.b64encode(b"prom:s3cr:eT").decode()
        status, h, _ = s.get("/metrics")
        c.eq(status, 401, "no credentials")
        c.check(h.get("www-authenticate", "").lower().startswith("basic"), "basic challenge: %s" % h)
        c.eq(s.get("/metrics", {"Authorization": bad})[0], 401, "wrong password")
        c.eq(s.get("/metrics", {"Authorization": good})[0], 200, "right password (with a colon in it)")
        c.check("s3cr" not in s.stderr(), "the password is not in stderr")
    finally:
        s.signal(signal.SIGTERM)
        c.eq(s.wait_exit(EXIT_WAIT), 0, "exit status after SIGTERM")
        s.close()


@mcptest.case(rep)
def bad_arguments(c):
    cfg = mcptest.write_config({"x": {"url": "notaurl"}})
    busy = Serve(["-c", cfg])
    try:
        cases = [
            (["--listen", busy.target], r"cannot listen on"),
            (["--listen", ":9464"], r"give a host"),
            (["--listen", "127.0.0.1:99999"], r"is not HOST:PORT"),
            (["--listen", "nohost.invalid:9464"], r"--listen"),
            (["--shard", "3/2"], r"--shard"),
            (["--label-from-tags", "server"], r"cannot be a label"),
            (["--label-from-tags", "9x"], r"cannot be a label"),
            (["--bearer-token-file", "/nonexistent/token"], r"cannot read the bearer token file"),
            (["--basic-auth-file", mcptest.write_file("nocolon\n", ".txt")], r"USER:PASSWORD"),
            (["--bearer-token-file", mcptest.write_file("\n", ".txt")], r"nothing on its first line"),
        ]
        for args, want in cases:
            argv = ["serve"] + (["--listen", "127.0.0.1:0"] if args[0] != "--listen" else []) + args + ["-c", cfg]
            r = mcptest.run_mcptop(argv, timeout=15)
            c.no_crash(r, " ".join(args))
            c.eq(r.rc, 2, "exit status of serve %s" % " ".join(args))
            c.check(re.search(want, r.stderr), "serve %s says %r:\n%s" % (" ".join(args), want, r.stderr))
        r = mcptest.run_mcptop(["serve", "--help"], timeout=10)
        c.eq(r.rc, 0, "serve --help")
        c.check("--shard K/N" in r.stdout and "/readyz" in r.stdout, "serve --help documents it")
    finally:
        busy.signal(signal.SIGTERM)
        busy.wait_exit(EXIT_WAIT)
        busy.close()


@mcptest.case(rep)
def check_shards_partition(c):
    """check --shard: N shards together are the fleet, each server once,
    where the hash (computed again here) puts it."""
    names = ["srv-%02d" % i for i in range(20)] + ["ünïcode", "with space"]
    cfg = mcptest.write_config({n: {"url": "notaurl"} for n in names})
    for n in (1, 3):
        seen = []
        for k in range(1, n + 1):
            r = mcptest.run_mcptop(["check", "--json", "--shard", "%d/%d" % (k, n), "-c", cfg], timeout=30)
            c.no_crash(r, "check --shard")
            got = [s["name"] for s in r.json()["servers"]]
            c.eq(sorted(got), sorted(x for x in names if shard_of(x, n) == k), "shard %d/%d" % (k, n))
            seen += got
        c.eq(sorted(seen), sorted(names), "the %d shard(s) together" % n)
    r = mcptest.run_mcptop(["check", "--shard", "0/3", "-c", cfg], timeout=10)
    c.eq(r.rc, 2, "check --shard 0/3 is a usage error")
    r = mcptest.run_mcptop(["watch", "--shard", "4/3", "-c", cfg], timeout=10)
    c.eq(r.rc, 2, "watch --shard 4/3 is a usage error")


@mcptest.case(rep)
def burst_of_scrapes_from_one_host(c):
    """Twelve scrapes from one address connect together and send their
    requests a moment later (Prometheus probing many targets at once from
    one host, on a server whose loop has not read them yet): every one is
    answered. The slowloris guard shuts an address's oldest waiting
    connection only when it has waited a while, never a fresh one (CI saw
    16 simultaneous /probe scrapes lose two, closed with no answer)."""
    import socket
    lab = faultlab.FaultLab().start()
    cfg = mcptest.write_config({"one": {"url": lab.url("/healthy")}}, mcptop=FAST)
    s = Serve(["-c", cfg])
    socks = []
    try:
        c.require(s.wait_ready(), "readyz 200:\n%s" % s.stderr())
        socks = [socket.create_connection((LOOPBACK, s.port), timeout=10) for _ in range(12)]
        time.sleep(0.3)     # every one accepted, none has sent its head
        for k in socks:
            k.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        answered = 0
        for k in socks:
            try:
                head = k.recv(64)
            except OSError:
                head = b""
            if head.startswith(b"HTTP/1.1 200"):
                answered += 1
        c.eq(answered, 12, "every scrape of the burst answered 200")
    finally:
        for k in socks:
            k.close()
        s.close()
        lab.stop()


@mcptest.case(rep)
def slow_clients_do_not_shut_scrapes_out(c):
    """Slowloris: 16 connections from the scraper's own address trickle a
    header line every 2 s and never finish; scrapes from that address are
    answered all the while, each within a few seconds, and the trickling
    connections are closed within the head deadline."""
    import socket
    import threading
    lab = faultlab.FaultLab().start()
    cfg = mcptest.write_config({"one": {"url": lab.url("/healthy")}}, mcptop=FAST)
    s = Serve(["-c", cfg])
    stop = threading.Event()
    closed = []

    def trickle(i):
        try:
            k = socket.create_connection((LOOPBACK, s.port), timeout=30)
            k.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
            n = 0
            while not stop.is_set():
                k.sendall(b"X-Slow-%d: %d\r\n" % (i, n))
                n += 1
                stop.wait(2.0)
        except OSError:
            closed.append(i)

    threads = [threading.Thread(target=trickle, args=(i,), daemon=True) for i in range(16)]
    try:
        c.require(s.wait_ready(), "readyz 200:\n%s" % s.stderr())
        for t in threads:
            t.start()
        time.sleep(1.0)
        slow = []
        for _ in range(8):
            t0 = time.monotonic()
            try:
                status = s.get("/metrics", timeout=5.0)[0]
            except OSError as e:
                status = repr(e)
            slow.append((status, round(time.monotonic() - t0, 2)))
            time.sleep(0.5)
        c.attach("scrapes while trickled at: %r" % slow)
        c.check(all(st == 200 for st, _ in slow), "every scrape answered 200: %r" % slow)
        deadline = time.monotonic() + 12
        while time.monotonic() < deadline and len(closed) < 16:
            time.sleep(0.2)
        c.eq(len(closed), 16, "every trickling connection was closed")
    finally:
        stop.set()
        s.close()
        lab.stop()


@mcptest.case(rep)
def reloads_free_what_they_retire(c):
    """Every SIGHUP that changes every server retires them all; what a
    reload retired is freed once its endings settle, so what the fleet
    holds stays one reload's worth instead of growing with each reload
    (the debug log says what is held)."""
    lab = faultlab.FaultLab().start()
    n = 20
    path = mcptest.tmpdir() / ("reload-%d.json" % os.getpid())
    log = mcptest.tmpdir() / ("reload-%d.log" % os.getpid())

    def write(timeout_ms):
        path.write_text(json.dumps({"mcptop": FAST, "mcpServers": {
            "s%02d" % i: {"url": lab.url("/healthy?r=%d" % i), "timeout_ms": timeout_ms}
            for i in range(n)}}))

    write(3000)
    s = Serve(["-c", path, "--log", log])
    try:
        c.require(s.wait_ready(), "readyz 200:\n%s" % s.stderr())
        for k in range(6):
            write(3001 + k)
            s.signal(signal.SIGHUP)
            time.sleep(2.6)
        held = re.findall(r"held until their endings settle: (\d+) servers, (\d+) reload configs",
                          log.read_text(errors="replace"))
        c.attach("held after each reload: %r" % held)
        c.eq(len(held), 6, "six reloads logged")
        if held:
            servers, configs = map(int, held[-1])
            c.check(servers <= 2 * n, "servers held after 6 reloads: %d (at most %d)" % (servers, 2 * n))
            c.check(configs <= 3, "reload configs held after 6 reloads: %d (at most 3)" % configs)
        c.eq(s.get("/metrics")[0], 200, "/metrics answers after the reloads")
        c.eq(len(re.findall(r'mcp_up\{server="s\d\d"\} 1', s.metrics())), n,
             "every server up under the last config")
    finally:
        c.eq(s.close(), 0, "serve exits 0")
        lab.stop()


rep.finish()
