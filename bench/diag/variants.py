#!/usr/bin/env python3
"""Diagnostic variants (bench/diag): what one engine change would buy,
measured on the bench fleet without touching src/. Needs a running fleet
(bench/fleetserver.mjs or bench/sdkfleet.mjs, with --one-port if given
here) on --base-port and the binaries built by bench/run.

usage: diag/variants.py --n 1000 --base-port P [--one-port] [--runs 3]
       [--build BUILD (default: build-bench in this checkout)]
"""
import argparse, json, os, statistics, subprocess, sys, tempfile

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

ap = argparse.ArgumentParser()
ap.add_argument("--n", type=int, required=True)
ap.add_argument("--runs", type=int, default=3)
ap.add_argument("--pings", type=int, default=5)
ap.add_argument("--base-port", type=int, required=True)
ap.add_argument("--one-port", action="store_true")
ap.add_argument("--build", default=os.path.join(REPO, "build-bench"))
ap.add_argument("--only", default="")
a = ap.parse_args()
b = a.build
n = a.n
WORK = tempfile.mkdtemp(prefix="mcptop-diag-")

def cfg(legacy):
    path = os.path.join(WORK, f"diag-{n}{'-legacy' if legacy else ''}.json")
    url = ((lambda i: f"http://127.0.0.1:{a.base_port}/mcp/{i}") if a.one_port
           else (lambda i: f"http://127.0.0.1:{a.base_port + i}/mcp"))
    d = {"mcpServers": {f"s{i:05d}": {"url": url(i)} for i in range(n)}}
    if legacy:
        d["mcptop"] = {"era": "legacy"}
    with open(path, "w") as f:
        json.dump(d, f)
    return path

m = [f"{b}/mcptop", "check", "--json", "--pings", str(a.pings), "--stats", "-c"]
fl = [f"{b}/floor", "--base-port", str(a.base_port), "--count", str(n), "--pings", str(a.pings)]
if a.one_port:
    fl.append("--one-port")
pre = {"LD_PRELOAD": f"{b}/dns_forever.so"}
variants = [
    ("mcptop", m + [cfg(False)], {}),
    ("mcptop + DNS_CACHE_TIMEOUT -1 on every transfer (LD_PRELOAD)", m + [cfg(False)], pre),
    ("mcptop era legacy (no probe)", m + [cfg(True)], {}),
    ("floor (as mcptop: DNS -1 but a prune a minute, a multi per 256)", fl, {}),
    ("floor, DNS timeout 60 (libcurl's default)", fl + ["--dns-cache-timeout", "60"], {}),
    ("floor, no probe", fl + ["--no-probe"], {}),
    ("floor, one multi, DNS -1 (the floor before issue 19)",
     fl + ["--servers-per-multi", "0", "--dns-cache-timeout", "-1"], {}),
]
if a.only:
    keep = a.only.split(",")
    variants = [v for i, v in enumerate(variants) if str(i) in keep]
res = {v[0]: [] for v in variants}
for run in range(a.runs):
    for name, cmd, env in variants:
        e = dict(os.environ, **env)
        p = subprocess.run(["/bin/sh", "-c", '"$@"; exit $?', "sh"] + cmd,
                           capture_output=True, text=True, env=e)
        d = json.loads(p.stdout.strip().splitlines()[-1])
        st = d["stats"]
        r = {"dial": st["dial"]["cpu_us"] / n,
             "ping": st["pings"]["cpu_us"] / (n * a.pings),
             "end": st["endings"]["cpu_us"] / n,
             "end_wall": st["endings"]["wall_ms"],
             "round": statistics.median(st["ping_round_ms"]),
             "rss": st["dial"]["max_rss_kib"]}
        res[name].append(r)
        print(f"run {run + 1} {name}: " + ", ".join(f"{k} {v:.1f}" for k, v in r.items()),
              file=sys.stderr, flush=True)
print(f"\nN = {n}, {a.runs} runs, medians (µs CPU per dial / ping / ending, "
      "ms ending-phase wall, ms ping round, KiB peak RSS after dials)")
print("| variant | CPU/dial µs | CPU/ping µs | CPU/ending µs | endings wall ms | ping round ms | RSS after dials KiB |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for name, rs in res.items():
    med = {k: statistics.median(r[k] for r in rs) for k in rs[0]}
    print(f"| {name} | {med['dial']:.0f} | {med['ping']:.0f} | {med['end']:.0f} | "
          f"{med['end_wall']:.0f} | {med['round']:.0f} | {med['rss']:.0f} |")
# Paired ratios: each variant against the floor of the same run (the runs
# alternate, so a pair shares the machine's state of the moment).
fk = next((k for k in res if k.startswith("floor (as mcptop")), None)
if fk:
    print(f"\nPaired ratios against '{fk}' (median [min-max] over runs):")
    for name, rs in res.items():
        if name == fk:
            continue
        for k in ("dial", "ping"):
            rr = [r[k] / f[k] for r, f in zip(rs, res[fk])]
            print(f"  {name}: {k} {statistics.median(rr):.2f}x "
                  f"[{min(rr):.2f}-{max(rr):.2f}]")
