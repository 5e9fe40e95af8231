#!/usr/bin/env python3
"""The soak (issue 12, "Also"): 200 servers at once for a bounded while,
flapping, storms of list_changed notices, sessions that expire (each
expiry ends the old session and dials again), stdio servers that fork
workers and exit, slow and refused endpoints; then SIGINT, and every
session is ended.

What it asserts, after the run:
  - the fault lab's sessions issued == sessions ended, on every endpoint;
  - no child, worker or process group of a child is left;
  - mcptop's open descriptors and resident memory were flat: sampled from
    /proc after a warm-up and at the end, the end is within a margin of the
    warm-up (a leak per redial or per storm grows them steadily);
  - watch printed only JSON lines, and stopped with exit 0 after SIGINT.

The length: MCPTOP_SOAK_S seconds of load (default 60; scripts/test.sh
sets 35 for the sanitizer build). The figures go to the case's output.

Standalone: MCPTOP_BIN=build/mcptop python3 tests/integration/test_soak.py
"""

import os
import signal
import sys
import time

sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mcptest  # noqa: E402
import scenario  # noqa: E402

SOAK_S = float(os.environ.get("MCPTOP_SOAK_S", "60"))
WARMUP_S = min(20.0, SOAK_S / 3)
FD_MARGIN = 40          # descriptors: a connection or a pipe more or less
RSS_FACTOR = 1.35       # resident memory: allocator noise, not a leak

rep = mcptest.Reporter("soak: 200 servers, flapping, storms, expiries, forks, endings")


def proc_fds(pid):
    try:
        return len(os.listdir("/proc/%d/fd" % pid))
    except OSError:
        return None


def proc_rss_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def fleet(marker):
    """200 declarations: which endpoint each gets, and the lab keys."""
    lab = scenario.lab()
    servers, keys = {}, []
    kinds = [
        ("healthy", "/healthy", 80),
        ("flap", "/flap?up_ms=1500&down_ms=1500", 30),
        ("storm", "/storm", 10),
        ("expire", "/expire?after=4&times=1000", 30),
        ("changes", "/listchanged?after_ms=1500&add=1", 20),
        ("slow", "/delay/ping?ms=900", 10),
        ("refused", None, 5),
    ]
    for name, path, n in kinds:
        for i in range(n):
            srv = "%s-%03d" % (name, i)
            if path is None:
                servers[srv] = {"url": "http://127.0.0.1:%d/mcp" % mcptest.free_port()}
                continue
            k = scenario.key(path)
            keys.append(k)
            servers[srv] = {"url": lab.url(k)}
    # stdio: healthy children, and ones that fork a worker and exit (each
    # redial spawns anew; the worker must not outlive its group)
    for i in range(10):
        servers["stdio-%02d" % i] = scenario.fake("healthy", marker)
    for i in range(5):
        servers["forks-%02d" % i] = scenario.fake("fork-exit", marker)
    return servers, keys


def case_soak(c):
    marker = scenario.new_marker("mcptest-soak")
    servers, keys = fleet(marker)
    c.eq(len(servers), 200, "the fleet's size")
    cfg = mcptest.write_config(servers, mcptop={
        "ping_interval_s": 0.5, "timeout_ms": 1200, "open_deadline_ms": 2000,
        "teardown_ms": 1500})
    sampler = scenario.GroupSampler(marker)
    # Under ASan, freed memory stays resident in its quarantine (256 MB by
    # default) until that is full, so the resident size grows with the
    # churn rather than with leaks: a small quarantine lets the check below
    # see mcptop (use-after-free within it is still caught; LSan still
    # checks leaks at exit). Without ASan the option is ignored.
    asan = os.environ.get("ASAN_OPTIONS", "detect_leaks=1")
    w = mcptest.Watch(["watch", "-c", cfg],
                      env={"ASAN_OPTIONS": asan + ":quarantine_size_mb=16"})
    pid = w.proc.pid
    try:
        t0 = time.monotonic()
        time.sleep(WARMUP_S)
        fds0, rss0 = proc_fds(pid), proc_rss_kib(pid)
        c.require(fds0 is not None and rss0 is not None,
                  "mcptop runs after the warm-up (fds %r, rss %r)" % (fds0, rss0))
        peak_fds, peak_rss = fds0, rss0
        while time.monotonic() - t0 < SOAK_S:
            time.sleep(1.0)
            f, r = proc_fds(pid), proc_rss_kib(pid)
            c.require(f is not None, "mcptop is still running at %.0f s"
                      % (time.monotonic() - t0))
            peak_fds, peak_rss = max(peak_fds, f), max(peak_rss, r or 0)
        fds1, rss1 = proc_fds(pid), proc_rss_kib(pid)
        figures = ("descriptors: %d after %.0f s of warm-up, %d at %.0f s (peak %d); "
                   "resident memory: %d KiB after the warm-up, %d KiB at the end "
                   "(peak %d KiB)" % (fds0, WARMUP_S, fds1, SOAK_S, peak_fds, rss0,
                                      rss1, peak_rss))
        print("  " + figures, flush=True)
        c.attach(figures)
        c.check(fds1 <= fds0 + FD_MARGIN, "descriptors flat: %d at the end vs %d "
                "after the warm-up (margin %d)" % (fds1, fds0, FD_MARGIN))
        c.check(rss1 <= rss0 * RSS_FACTOR, "resident memory flat: %d KiB at the end "
                "vs %d KiB after the warm-up (x%.2f allowed)" % (rss1, rss0, RSS_FACTOR))
        counts = scenario.lab().counts().get("endpoints", {})
        issued = sum(counts.get(k, {}).get("sessions_issued", 0) for k in keys)
        relists = sum(counts.get(k, {}).get("relistings", 0) for k in keys)
        print("  sessions issued during the soak: %d; re-listings: %d"
              % (issued, relists), flush=True)
        c.check(issued > len(keys), "sessions were issued again (expiries, flaps): %d "
                "for %d endpoints" % (issued, len(keys)))
        w.proc.send_signal(signal.SIGINT)
        try:
            rc = w.proc.wait(timeout=20)
        except Exception:
            rc = None
        c.eq(rc, 0, "watch exits 0 after SIGINT, its sessions ended")
        c.eq(w.bad_lines, [], "every line watch printed is JSON")
        ended = [e for e in w.events if e.get("event") == "ending"]
        c.check(len(ended) >= 100, "endings reported: %d" % len(ended))
    finally:
        if w.proc.poll() is None:
            mcptest.terminate(w.proc)
    scenario.balanced(c, keys, timeout=5.0)
    scenario.nothing_left(c, marker, sampler=sampler, timeout=5.0)


rep.run("soak", case_soak)
rep.finish()
