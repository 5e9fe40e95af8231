#!/usr/bin/env python3
"""A browser for `mcptop login` with a hostile neighbour: before following
the authorization URL it does what any local process could do to the
loopback redirect listener: it opens IDLE idle connections (they send
nothing and stay open) and sends FORGED callbacks with a wrong state and
a code of its own. Then it follows the URL as a browser would (the lab's
authorization endpoint redirects to the listener with the real state).

  hostile_browser.py URL      (IDLE and FORGED from the environment)

Writes what it did to $HOSTILE_LOG (JSON) for the test to read.
"""
import json
import os
import socket
import sys
import time
import urllib.parse
import urllib.request

url = sys.argv[1]
q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
redirect = urllib.parse.urlsplit(q["redirect_uri"])
host, port = redirect.hostname, redirect.port
idle = [socket.create_connection((host, port), timeout=5)
        for _ in range(int(os.environ.get("IDLE", "40")))]
forged = []
for i in range(int(os.environ.get("FORGED", "3"))):
    s = socket.create_connection((host, port), timeout=5)
    s.sendall(("GET %s?code=forged-%d&state=wrong-%d HTTP/1.1\r\nHost: x\r\n\r\n"
               % (redirect.path, i, i)).encode())
    forged.append(s.recv(200).decode(errors="replace").split("\r\n")[0])
    s.close()
status = None
try:
    # The lab redirects to the listener; urllib follows it.
    with urllib.request.urlopen(url, timeout=10) as r:
        status = r.status
except Exception as e:  # noqa: BLE001 - recorded for the test
    status = repr(e)
with open(os.environ["HOSTILE_LOG"], "w") as f:
    json.dump({"forged": forged, "final": status}, f)
time.sleep(0.5)
for s in idle:
    s.close()
