#!/usr/bin/env python3
"""Incidents on the record (issue 33): `--record FILE`, `mcptop report`,
`mcptop replay`.

One fault-lab incident is recorded with `watch --record`: a server that comes
up and goes down (a second lab, stopped mid-recording), a flapping one (the
lab's /flap), a 502 gateway (a real nginx in front of a dead port), a steady
one carrying secrets (bearer token from ${VAR}, an API key header, a URL
password) and a stdio one with a secret in its env. Then:
  - the recording: a fleet line first, every line stamped (ts, mono_ms), the
    exit line last, flushed while running, and no secret anywhere;
  - report --json: each changed server's timeline is the recording's health
    lines, with the failure kind and reason; minute buckets; endings;
  - report (Markdown) and --from;
  - replay in tmux at chosen times (rows ok, then down), keys (pause, g/G,
    Left/Right, speed), views (detail, endings, filter);
  - a recording cut mid-line still reports and replays;
  - the TUI's --record, rotation at --record-max, and bad arguments.
Bounded: about 40 s on an idle machine.
"""

import json
import os
import signal
import time

import faultlab
import mcptest

rep = mcptest.Reporter("record: --record, report, replay (issue 33)")

TOKEN = "TOKSECRET-1f2e3d"          # the bearer token, from ${MCPTOP_REC_TOKEN}
APIKEY = "HDRSECRET-9a8b7c"         # a header value
PASSWORD = "PWSECRET-5d4c3b"        # a URL password
ENVVAL = "ENVSECRET-7e6f5a"         # a stdio server's env value
SECRETS = (TOKEN, APIKEY, PASSWORD, ENVVAL)


class Env:
    lab = None
    lab_b = None     # the one that comes up and goes down
    gw = None
    rec = None       # the recording's path
    lines = []       # its lines, parsed
    raw = b""
    report = None    # report --json of it


def setup():
    Env.lab = faultlab.FaultLab().start()
    Env.lab_b = faultlab.FaultLab().start()
    dead = mcptest.free_port()
    Env.gw = faultlab.Nginx([("/dead/", "http://127.0.0.1:%d/" % dead, "1s")]).start()


def incident_config():
    fake = mcptest.TESTS_DIR / "stdio" / "fake.mjs"
    base = Env.lab.base
    return mcptest.write_config({
        "comes-and-goes": {"url": Env.lab_b.url("/healthy")},
        "flappy": {"url": Env.lab.url("/flap?up_ms=2500&down_ms=2500")},
        "gateway": {"url": Env.gw.url("/dead/mcp")},
        "steady": {"url": Env.lab.url("/healthy"), "tags": ["prod"],
                   "headers": {"Authorization": "Bearer ${MCPTOP_REC_TOKEN}",
                               "X-Api-Key": APIKEY}},
        "with-password": {"url": base.replace("http://", "http://alice:%s@" % PASSWORD)
                          + "/healthy?q=1"},
        "stdio-env": {"command": mcptest._NODE, "args": [str(fake), "--mode=healthy"],
                      "env": {"FAKE_SECRET": ENVVAL}},
    }, mcptop={"ping_interval_s": 0.5, "timeout_ms": 2000})


def health_of(ev, name, state):
    return ev.get("event") == "health" and ev.get("server") == name and ev.get("state") == state


def read_lines(path):
    out = []
    with open(path, "rb") as f:
        for raw in f:
            try:
                out.append(json.loads(raw))
            except ValueError:
                out.append(None)
    return out


def case_record(c):
    Env.rec = str(mcptest.tmpdir() / "incident.jsonl")
    cfg = incident_config()
    w = mcptest.Watch(["watch", "-c", cfg, "--record", Env.rec],
                      env={"MCPTOP_REC_TOKEN": TOKEN})
    try:
        dl = time.monotonic() + 20
        c.require(w.wait_for(lambda e: health_of(e, "comes-and-goes", "ok"), dl) is not None,
                  "comes-and-goes never became ok\n" + w.describe())
        # Flushed within about a second while it runs (the 1 s timer).
        seen = False
        for _ in range(40):
            try:
                with open(Env.rec, "rb") as f:
                    seen = b'"server":"comes-and-goes","state":"ok"' in f.read()
            except OSError:
                pass
            if seen:
                break
            time.sleep(0.1)
        c.check(seen, "the recording did not reach the file within 4 s of the event")
        c.require(w.wait_for(lambda e: health_of(e, "flappy", "down"), time.monotonic() + 20)
                  is not None, "flappy never went down\n" + w.describe())
        c.require(w.wait_for(lambda e: health_of(e, "flappy", "ok"), time.monotonic() + 20)
                  is not None, "flappy never came back\n" + w.describe())
        Env.lab_b.stop()
        c.require(w.wait_for(lambda e: health_of(e, "comes-and-goes", "down"),
                             time.monotonic() + 20) is not None,
                  "comes-and-goes never went down after its lab stopped\n" + w.describe())
        # The flapping endpoint resets every request in its down window,
        # the DELETE too: when SIGINT lands there (a slow machine takes
        # longer to see comes-and-goes down), flappy's session is honestly
        # "not ended" and the exit is 1. Any other server's is a failure.
        w.signal(signal.SIGINT)
        rc = w.wait_exit(20)
        w._reader.join(timeout=5)
        last = {}
        for e in w.events:
            if e.get("event") == "ending":
                last[e.get("server")] = e
        unended = sorted(n for n, e in last.items()
                         if e.get("outcome") in ("pending", "failed", "timed_out")
                         or (e.get("outcome") == "rejected" and e.get("http_status") != 400))
        c.check(set(unended) <= {"flappy"},
                "only flappy's session may be left not ended: %s\n%s" % (unended, w.stderr()))
        c.eq(rc, 1 if unended else 0, "watch's exit after SIGINT (not ended: %s)" % unended)
        # Recording changes nothing of the promises: every session the
        # steady endpoints issued was ended (the flapping one's sessions
        # may die with its down phase, the stopped lab's with the lab).
        eps = Env.lab.counts().get("endpoints", {})
        for k in ("/healthy", "/healthy?q=1"):
            cnt = eps.get(k, {})
            c.check(cnt.get("sessions_issued", 0) >= 1, "the lab issued a session on %s: %s" % (k, cnt))
            c.eq(cnt.get("sessions_ended", 0), cnt.get("sessions_issued", 0),
                 "sessions ended == sessions issued on %s" % k)
    finally:
        w.close()
    Env.raw = open(Env.rec, "rb").read()
    Env.lines = read_lines(Env.rec)
    c.require(len(Env.lines) > 10 and all(isinstance(l, dict) for l in Env.lines),
              "the recording is not JSON Lines of objects")
    first = Env.lines[0]
    c.eq(first.get("event"), "recording", "the first line's event")
    c.eq(first.get("mcptop"), mcptest.project_version(), "the first line's mcptop version")
    names = [s.get("name") for s in first.get("servers", [])]
    c.eq(sorted(names), sorted(["comes-and-goes", "flappy", "gateway", "steady", "with-password",
                                "stdio-env"]), "the fleet line's servers")
    byname = {s["name"]: s for s in first.get("servers", [])}
    c.eq(byname.get("steady", {}).get("tags"), ["prod"], "steady's tags")
    c.eq(byname.get("stdio-env", {}).get("transport"), "stdio", "stdio-env's transport")
    c.check("***" in byname.get("with-password", {}).get("target", ""),
            "the URL password is redacted in the target: %r" % byname.get("with-password"))
    c.eq(Env.lines[-1].get("event"), "exit", "the last line's event")
    stamped = all(isinstance(l.get("ts"), str) and isinstance(l.get("mono_ms"), int)
                  for l in Env.lines)
    c.check(stamped, "every line has ts (wall) and mono_ms (monotonic)")
    monos = [l["mono_ms"] for l in Env.lines if isinstance(l.get("mono_ms"), int)]
    c.check(monos == sorted(monos), "mono_ms never goes back")
    kinds = {l.get("event") for l in Env.lines}
    for k in ("state", "exchange", "health", "liveness", "ending", "settled", "stopping"):
        c.check(k in kinds, "the recording has %s lines" % k)
    for s in SECRETS:
        c.check(s.encode() not in Env.raw, "the secret %s is in the recording" % s)


def health_lines(name):
    return [(l["ts"], l["state"]) for l in Env.lines
            if l.get("event") == "health" and l.get("server") == name]


def first_health(name, state, after=None):
    for l in Env.lines:
        if l.get("event") == "health" and l.get("server") == name and l.get("state") == state \
                and (after is None or l["ts"] > after):
            return l["ts"]
    return None


def case_report_json(c):
    c.require(Env.lines, "no recording (the record case failed)")
    r = mcptest.run_mcptop(["report", "--json", Env.rec], timeout=30)
    c.no_crash(r, "report --json")
    c.eq(r.rc, 0, "report --json's exit")
    Env.report = doc = r.json()
    c.require(isinstance(doc, dict), "report --json is not a JSON object:\n" + r.describe())
    servers = {s["name"]: s for s in doc.get("servers", [])}
    for name in ("comes-and-goes", "flappy", "gateway"):
        c.require(name in servers, "%s is not among the changed servers: %r" % (name, list(servers)))
    # The timeline is the recording's health lines, in order.
    for name, s in servers.items():
        got = [(t["at"], t["health"]) for t in s["timeline"]]
        c.eq(got, health_lines(name), "%s's timeline against the recording" % name)
        ats = [t["at"] for t in s["timeline"]]
        c.check(ats == sorted(ats), "%s's timeline is in time order" % name)
    cg = [t for t in servers["comes-and-goes"]["timeline"]]
    seq = [t["health"] for t in cg]
    c.check("ok" in seq and "down" in seq[seq.index("ok"):],
            "comes-and-goes: ok, then down: %r" % seq)
    down = next((t for t in cg if t["health"] == "down"), {})
    c.is_in(down.get("kind"), ("connect_refused", "connection_failed", "connection_closed"),
            "comes-and-goes' kind when down")
    fl = [t["health"] for t in servers["flappy"]["timeline"]]
    c.check(fl.count("down") >= 1 and "ok" in fl[fl.index("down"):],
            "flappy went down and came back: %r" % fl)
    gw = [t for t in servers["gateway"]["timeline"] if t.get("kind")]
    c.require(gw, "the gateway's timeline has no failure: %r" % servers["gateway"])
    c.eq((gw[0].get("kind"), gw[0].get("http_status"), gw[0].get("reason")),
         ("http_status", 502, "bad_gateway"), "the gateway's failure (kind, status, reason)")
    c.check("steady" not in servers, "steady (never changed) is not listed")
    buckets = doc.get("buckets") or []
    c.check(buckets and all(isinstance(b.get("kinds"), dict) for b in buckets),
            "minute buckets: %r" % buckets[:3])
    c.check(any(b["kinds"].get("http_status", 0) >= 1 for b in buckets),
            "some minute counts the gateway's http_status")
    c.check(any(b["servers_failing"] >= 2 for b in buckets), "some minute has 2+ servers failing")
    c.check(isinstance(doc.get("first_failure"), dict), "first_failure: %r" % doc.get("first_failure"))
    lr = doc.get("last_recovery") or {}
    c.eq(lr.get("server"), "flappy", "the last recovery's server")
    c.check(len(doc.get("endings") or []) >= 5, "the endings are listed: %r" % doc.get("endings"))
    c.check(sum((doc.get("outcomes") or {}).values()) == len(doc.get("endings") or []),
            "outcomes count every ending")
    c.check(isinstance(doc.get("exit"), dict), "the exit line is reported")
    stop = doc.get("stopping_at")
    c.check(isinstance(stop, str), "stopping_at: %r" % stop)
    c.check(not (doc.get("last_recovery") or {}).get("at", "") >= (stop or "~"),
            "the last recovery is not one of mcptop's own exit endings")
    for s in SECRETS:
        c.check(s not in r.stdout, "the secret %s is in the report" % s)


def case_report_markdown(c):
    c.require(Env.lines, "no recording")
    r = mcptest.run_mcptop(["report", Env.rec], timeout=30)
    c.no_crash(r, "report")
    c.eq(r.rc, 0, "report's exit")
    for want in ("# Incident report", "## Health changes", "### comes-and-goes",
                 "| time (UTC) | from | to | kind | reason | detail |",
                 "## Servers failing, by kind, per minute", "## Endings", "First failure:",
                 "Last recovery:", "502 bad_gateway"):
        c.check(want in r.stdout, "the Markdown has %r" % want)
    # --from: only what came after; the state before still counts.
    t_down = first_health("comes-and-goes", "down")
    r2 = mcptest.run_mcptop(["report", "--json", "--from", t_down, Env.rec], timeout=30)
    doc = r2.json() or {}
    c.eq(doc.get("from"), t_down, "--from is the report's start")
    ats = [t["at"] for s in doc.get("servers", []) for t in s["timeline"]]
    c.check(all(a >= t_down for a in ats), "--from leaves out the changes before it")
    cg = next((s for s in doc.get("servers", []) if s["name"] == "comes-and-goes"), {})
    c.eq(cg.get("health_at_start"), "ok", "comes-and-goes' health at --from (from before it)")
    r3 = mcptest.run_mcptop(["report", "--from", "yesterday", Env.rec], timeout=10)
    c.eq(r3.rc, 2, "a --from that is no time")
    c.check("--from takes" in r3.stderr, "the error names --from: %r" % r3.stderr)
    r4 = mcptest.run_mcptop(["report", str(mcptest.tmpdir() / "nope.jsonl")], timeout=10)
    c.eq(r4.rc, 2, "report of a missing file")
    notrec = mcptest.write_file('{"a": 1}\n', suffix=".jsonl")
    r5 = mcptest.run_mcptop(["report", notrec], timeout=10)
    c.eq(r5.rc, 2, "report of a file that is no recording")


def ts_plus(ts, ms):
    """ts (RFC 3339 with ms, Z) plus ms."""
    import datetime
    d = datetime.datetime.strptime(ts, "%Y-%m-%dT%H:%M:%S.%fZ") + datetime.timedelta(milliseconds=ms)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + "%03dZ" % (d.microsecond // 1000)


def health_cell(text, name):
    return mcptest.table_cell(text, name, "HEALTH") or ""


def case_replay_moments(c):
    c.require(Env.lines, "no recording")
    t_ok = first_health("comes-and-goes", "ok")
    t_down = first_health("comes-and-goes", "down")
    t = mcptest.Tui(["replay", Env.rec, "--from", ts_plus(t_ok, 5), "--to", ts_plus(t_ok, 5)])
    t.expect(c, [
        ("the header says REPLAY", lambda s: "REPLAY" in s.split("\n")[0]),
        ("the header shows the recorded time", lambda s: t_ok[11:19] in s.split("\n")[0]),
        ("comes-and-goes is ok then", lambda s: "ok" in health_cell(s, "comes-and-goes")),
        ("the gateway is not ok then", lambda s: health_cell(s, "gateway") != "" and
         "ok" not in health_cell(s, "gateway")),
    ], timeout=10)
    t.close(c)
    t = mcptest.Tui(["replay", Env.rec, "--from", ts_plus(t_down, 5), "--to", ts_plus(t_down, 5)])
    t.expect(c, [
        ("comes-and-goes is down after its lab stopped",
         lambda s: "down" in health_cell(s, "comes-and-goes")),
        ("steady is ok", lambda s: "ok" in health_cell(s, "steady")),
        ("the gateway's 502 is on its row", lambda s: "502" in (mcptest.table_row(s, "gateway") or "")),
    ], timeout=10)
    # The live TUI's views: filter, detail, endings.
    t.keys("/")
    t.literal("health:down")
    t.keys("Enter")
    t.expect(c, [
        ("the filter keeps comes-and-goes", lambda s: mcptest.table_row(s, "comes-and-goes")),
        ("the filter hides steady", lambda s: mcptest.table_row(s, "steady") is None),
    ], timeout=5)
    t.keys("Escape")
    t.keys("H")
    t.expect(c, [("H sorts by health, worst first", lambda s: "sort health" in s.split("\n")[0]
                  and (mcptest.selected_name(s) or "") in ("comes-and-goes", "gateway", "flappy"))],
             timeout=5)
    t.keys("N")
    t.keys("Enter")
    t.expect(c, [("the detail pane opens", lambda s: "last fail" in s or "liveness" in s)], timeout=5)
    t.keys("Enter")
    t.keys("x")
    t.expect(c, [("x is refused in a replay", lambda s: "nothing is dialed or ended" in s)],
             timeout=5)
    t.close(c)


def case_replay_keys(c):
    c.require(Env.lines, "no recording")
    start = Env.lines[0]["ts"]
    t = mcptest.Tui(["replay", Env.rec, "--speed", "1024"])
    t.expect(c, [
        ("at the end the replay pauses", lambda s: "paused" in s.split("\n")[0]),
        ("at the end every server stopped (mcptop left)",
         lambda s: "stopped" in health_cell(s, "steady")),
        ("the timeline bar marks health changes", lambda s: "\u2502" in s.split("\n")[-2]
         or "\u2502" in s.strip().split("\n")[-1]),
    ], timeout=15)
    t.keys("g")
    t.expect(c, [
        ("g: the start", lambda s: start[11:19] in s.split("\n")[0]),
        ("at the start nothing is observed", lambda s: "ok" not in health_cell(s, "steady")),
    ], timeout=5)
    # The incident is shorter than 10 s: Right goes to its end, Left back.
    t.keys("Right")
    t.expect(c, [("Right: 10 s on, steady observed", lambda s: "pending" not in
                  health_cell(s, "steady") and health_cell(s, "steady") != "")], timeout=5)
    t.keys("Left")
    t.expect(c, [("Left: back to the start", lambda s: start[11:19] in s.split("\n")[0]),
                 ("Left: steady pending again", lambda s: "pending" in health_cell(s, "steady"))],
             timeout=5)
    t.keys("[")
    t.expect(c, [("[ halves the speed", lambda s: "x512" in s.split("\n")[0])], timeout=5)
    t.keys("]", "]")
    t.expect(c, [("] doubles it (at most 1024)", lambda s: "x1024" in s.split("\n")[0])],
             timeout=5)
    t.keys("G")
    t.expect(c, [("G: the end", lambda s: "stopped" in health_cell(s, "steady"))], timeout=5)
    t.keys("e")
    t.expect(c, [("the endings pane lists the recorded endings",
                  lambda s: "ENDINGS" in s and "terminated" in s)], timeout=5)
    t.close(c)


def case_cut(c):
    c.require(Env.raw, "no recording")
    # Inside a line: neither just after nor just before a newline.
    cut_at = int(len(Env.raw) * 0.7)
    while b"\n" in Env.raw[cut_at - 1:cut_at + 1]:
        cut_at -= 3
    path = mcptest.write_file(Env.raw[:cut_at], suffix=".jsonl")
    r = mcptest.run_mcptop(["report", "--json", path], timeout=30)
    c.no_crash(r, "report of a cut recording")
    c.eq(r.rc, 0, "report's exit on a cut recording")
    doc = r.json() or {}
    c.eq(dig_cut(doc), True, "the report says the recording was cut")
    c.check(len(doc.get("servers", [])) >= 1, "the cut recording still has timelines")
    c.eq(doc.get("exit"), None, "a cut recording has no exit")
    md = mcptest.run_mcptop(["report", path], timeout=30)
    c.check("cut line" in md.stdout, "the Markdown says the recording ends in a cut line")
    t = mcptest.Tui(["replay", path, "--speed", "1024"])
    t.expect(c, [
        ("a cut recording replays", lambda s: "REPLAY" in s.split("\n")[0]),
        ("it says the recording was cut", lambda s: "cut" in s),
        ("its rows are there", lambda s: mcptest.table_row(s, "comes-and-goes") is not None),
    ], timeout=10)
    t.close(c)


def dig_cut(doc):
    return (doc.get("recording") or {}).get("cut")


def case_tui_record(c):
    rec = str(mcptest.tmpdir() / "tui.jsonl")
    cfg = mcptest.write_config({"steady": {"url": Env.lab.url("/healthy"),
                                           "headers": {"X-Api-Key": APIKEY}}})
    t = mcptest.Tui(["-c", cfg, "--record", rec])
    t.expect(c, [("the TUI shows steady ok", lambda s: "ok" in health_cell(s, "steady"))],
             timeout=15)
    t.close(c)
    lines = read_lines(rec)
    c.require(lines and all(isinstance(l, dict) for l in lines), "the TUI's recording is not JSON")
    c.eq(lines[0].get("event"), "recording", "the TUI's recording starts with the fleet")
    c.eq(lines[-1].get("event"), "exit", "the TUI's recording ends with the exit")
    c.check(any(health_of(l, "steady", "ok") for l in lines), "the TUI recorded steady's ok")
    c.check(APIKEY.encode() not in open(rec, "rb").read(), "the header value is not recorded")


def case_snapshot_and_copy(c):
    state = mcptest.tmpdir() / "state"
    state.mkdir(exist_ok=True)
    fake = mcptest.TESTS_DIR / "stdio" / "fake.mjs"
    cfg = mcptest.write_config({
        "steady": {"url": Env.lab.url("/healthy"),
                   "headers": {"Authorization": "Bearer ${MCPTOP_REC_TOKEN}", "X-Api-Key": APIKEY}},
        "with-password": {"url": Env.lab.base.replace("http://", "http://alice:%s@" % PASSWORD)
                          + "/healthy"},
        "stdio-env": {"command": mcptest._NODE, "args": [str(fake), "--mode=healthy"],
                      "env": {"FAKE_SECRET": ENVVAL}},
    })
    t = mcptest.Tui(["-c", cfg], env={"XDG_STATE_HOME": str(state), "MCPTOP_REC_TOKEN": TOKEN})
    t.tmux("set", "-g", "set-clipboard", "on")
    t.expect(c, [("every server ok", lambda s: mcptest.header_counts(s).get("ok") == 3)],
             timeout=20)
    t.keys("Enter")
    t.keys("Y")
    text = t.expect(c, [("Y says where", lambda s: "snapshot written to" in s)], timeout=5)
    files = list((state / "mcptop").glob("snapshot-*.md"))
    c.require(len(files) == 1, "one snapshot in the state directory: %r" % files)
    md = files[0].read_text()
    for want in ("# mcptop snapshot", "ok 3", "incidents:", "| name | transport | health |",
                 "| steady | http | ok |", "| with-password |", "| stdio-env | stdio | ok |",
                 "## stdio-env", "exchanges"):
        c.check(want in md, "the snapshot has %r:\n%s" % (want, md))
    c.check(str(files[0]) in text.replace("\n", ""), "the message names the file")
    for sec in SECRETS:
        c.check(sec not in md, "the secret %s is in the snapshot" % sec)
    # y: the detail is open, so the detail goes; Enter closes it: the row.
    t.keys("y")
    t.expect(c, [("y says it copied", lambda s: "copied the selected detail" in s)], timeout=5)
    buf, ok = "", False
    for _ in range(30):
        buf = t.tmux("show-buffer", check=False)
        if "target" in buf:
            ok = True
            break
        time.sleep(0.1)
    c.check(ok, "tmux's buffer has the detail (OSC 52): %r" % buf[:200])
    t.keys("Enter", "Down")
    t.keys("y")
    t.expect(c, [("y copies the row", lambda s: "copied the selected row" in s)], timeout=5)
    for _ in range(30):
        buf = t.tmux("show-buffer", check=False)
        if buf.startswith("steady"):
            break
        time.sleep(0.1)
    c.check(buf.startswith("steady  http  ok"), "tmux's buffer has the row: %r" % buf[:200])
    for sec in SECRETS:
        c.check(sec not in buf, "the secret %s is in the copy" % sec)
    t.close(c)


def case_serve_record(c):
    import urllib.request
    rec = str(mcptest.tmpdir() / "serve.jsonl")
    port = mcptest.free_port()
    cfg = mcptest.write_config({"steady": {"url": Env.lab.url("/healthy"),
                                           "headers": {"X-Api-Key": APIKEY}}})
    err = open(mcptest.tmpdir() / "serve-stderr.log", "wb")
    p = mcptest.spawn([mcptest.MCPTOP_BIN, "serve", "-c", cfg, "--listen", str(port),
                       "--record", rec], env=mcptest.mcptop_env(), stderr=err)
    err.close()
    try:
        ready = False
        dl = time.monotonic() + 20
        while time.monotonic() < dl and not ready:
            try:
                with urllib.request.urlopen("http://127.0.0.1:%d/readyz" % port, timeout=2) as r:
                    ready = r.status == 200
            except Exception:
                time.sleep(0.2)
        c.require(ready, "serve's /readyz never said 200")
        p.send_signal(signal.SIGTERM)
        c.eq(p.wait(timeout=20), 0, "serve's exit after SIGTERM")
    finally:
        mcptest.terminate(p)
    lines = read_lines(rec)
    c.require(lines and all(isinstance(l, dict) for l in lines), "serve's recording is not JSON")
    c.eq(lines[0].get("event"), "recording", "serve's recording starts with the fleet")
    c.eq(lines[-1].get("event"), "exit", "serve's recording ends with the exit")
    c.check(any(health_of(l, "steady", "ok") for l in lines), "serve recorded steady's ok")
    c.check(APIKEY.encode() not in open(rec, "rb").read(), "the header value is not recorded")


def case_rotation(c):
    rec = str(mcptest.tmpdir() / "rot.jsonl")
    cfg = mcptest.write_config({"steady": {"url": Env.lab.url("/healthy")},
                                "steady2": {"url": Env.lab.url("/healthy?x=2")}},
                               mcptop={"ping_interval_s": 0.1})
    w = mcptest.Watch(["watch", "-c", cfg, "--record", rec, "--record-max", "0.005"])
    try:
        dl = time.monotonic() + 20
        while time.monotonic() < dl and not os.path.exists(rec + ".1"):
            time.sleep(0.2)
        time.sleep(0.5)
        w.signal(signal.SIGINT)
        c.eq(w.wait_exit(15), 0, "watch's exit")
    finally:
        w.close()
    c.require(os.path.exists(rec + ".1"), "no FILE.1 after the size was passed")
    c.check(not os.path.exists(rec + ".2"), "only one previous file is kept")
    for p in (rec, rec + ".1"):
        c.check(os.path.getsize(p) <= 5243 + 4096, "%s is about --record-max (%d bytes)"
                % (p, os.path.getsize(p)))
    lines = read_lines(rec)
    c.eq(lines[0].get("event") if lines else None, "recording", "the new file starts with the fleet")
    c.check(any(l.get("event") == "server" for l in lines if l),
            "the new file has each server's snapshot")
    r = mcptest.run_mcptop(["report", "--json", rec], timeout=30)
    c.eq(r.rc, 0, "a rotated file reports")


def case_bad_args(c):
    r = mcptest.run_mcptop(["watch", "--record", "/nonexistent-dir/x.jsonl",
                            Env.lab.url("/healthy")], timeout=10)
    c.eq(r.rc, 2, "watch --record into a missing directory")
    c.check("cannot write the recording" in r.stderr, "it says why: %r" % r.stderr)
    r = mcptest.run_mcptop(["watch", "--record-max", "0", Env.lab.url("/healthy")], timeout=10)
    c.eq(r.rc, 2, "--record-max 0")
    r = mcptop_replay_notty()
    c.eq(r.rc, 2, "replay without a terminal")
    r = mcptest.run_mcptop(["replay"], timeout=10)
    c.eq(r.rc, 2, "replay without FILE")
    r = mcptest.run_mcptop(["report", "--help"], timeout=10)
    c.check(r.rc == 0 and "--from" in r.stdout, "report --help")


def mcptop_replay_notty():
    return mcptest.run_mcptop(["replay", Env.rec or "x"], timeout=10)


def main():
    try:
        setup()
    except Exception as e:
        rep.run("setup: two fault labs and nginx", lambda c: c.fatal("%s" % e))
        rep.finish()
    rep.run("watch --record: a fault-lab incident, stamped, flushed, no secret", case_record)
    rep.run("report --json: timelines match the recording", case_report_json)
    rep.run("report: Markdown, --from, errors", case_report_markdown)
    rep.run("replay: rows at chosen times, filter, detail", case_replay_moments)
    rep.run("replay: pause, g/G, Left/Right, speed, endings", case_replay_keys)
    rep.run("a recording cut mid-line reports and replays", case_cut)
    rep.run("the TUI's --record", case_tui_record)
    rep.run("Y: a Markdown snapshot in the state directory; y: OSC 52", case_snapshot_and_copy)
    rep.run("serve --record", case_serve_record)
    rep.run("--record-max: rotation keeps one FILE.1", case_rotation)
    rep.run("bad arguments", case_bad_args)
    rep.finish()


if __name__ == "__main__":
    main()
