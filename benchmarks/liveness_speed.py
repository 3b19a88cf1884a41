"""Time live URL checks against a loopback HTTP server: what the checker itself costs per URL.

On the web a check costs its round trips (DNS, TCP, TLS, HEAD and sometimes GET); on 127.0.0.1 those are
near zero, so what is left is the checker's own work: the address check, building the request, urllib3's
connection and parsing the status line and headers. Three kinds of URL, each checked ``--runs`` times by
one checker (no cache, 127.0.0.1 allowed): a 200 (one HEAD), a redirect to it (two HEADs) and a 404
(HEAD, then the GET that confirms it). Also timed: the first live check of a fresh process, which
imports the HTTP stack (urllib3 with sockets, TLS and http.client).

Measured on the 2-core reference machine while other work ran (issue 24, medians of 200): the
hand-written client 1.2 / 2.3-3.2 / 1.9-2.7 ms, urllib3 2.1-2.6 / 4.3-6.0 / 3.5-4.6 ms.

Run from the repository root::

    .venv/bin/python benchmarks/liveness_speed.py [--runs 200]

These are measurements, not tests: nothing here asserts a threshold.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from grounding_eval.verifier.liveness import LivenessChecker

_FIRST_CHECK = """
import sys, time
from grounding_eval.verifier.liveness import LivenessChecker
started = time.perf_counter()
LivenessChecker(offline=False, cache_path=None, allow_hosts=["127.0.0.1"]).check(sys.argv[1])
print(time.perf_counter() - started)
"""


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_HEAD(self) -> None:
        code = {"/ok": 200, "/redirect": 302}.get(self.path, 404)
        self.send_response(code)
        if code == 302:
            self.send_header("Location", "/ok")
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_HEAD


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200, help="checks per kind of URL (default 200)")
    args = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    checker = LivenessChecker(offline=False, cache_path=None, allow_hosts=["127.0.0.1"])
    try:
        for path, what in (
            ("/ok", "200 (HEAD)"),
            ("/redirect", "302 then 200"),
            ("/missing", "404 (HEAD, GET)"),
        ):
            times = []
            for _ in range(args.runs):
                started = time.perf_counter()
                checker.check(base + path)
                times.append(time.perf_counter() - started)
            print(
                f"{what:18} median {statistics.median(times) * 1e3:6.2f} ms   min {min(times) * 1e3:6.2f} ms"
            )
        firsts = [
            float(subprocess.run([sys.executable, "-c", _FIRST_CHECK, base + "/ok"], capture_output=True,
                                 text=True, check=True).stdout)
            for _ in range(5)
        ]  # fmt: skip
        print(f"{'first check':18} median {statistics.median(firsts) * 1e3:6.2f} ms (imports the HTTP stack)")
    finally:
        server.shutdown()
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
