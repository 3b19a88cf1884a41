"""promptfoo's viewer for tests: served from a private database on a free 127.0.0.1 port, read in Chromium.

``served_viewer(env)`` runs ``promptfoo view -n`` with the test's ``PROMPTFOO_CONFIG_DIR`` and yields its
base URL once it answers; ``browse(script, url, shot, *args)`` runs a playwright-core script under
``tests/`` against it and returns the JSON the script prints last.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 60


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def require_chromium() -> None:
    if shutil.which("chromium") is None and not os.environ.get("CHROMIUM"):
        pytest.fail("chromium is not installed: run scripts/install --browser")


@contextmanager
def served_viewer(env: dict[str, str]) -> Iterator[str]:
    """``promptfoo view -n`` on a free port, stopped on exit; yields ``http://127.0.0.1:PORT``."""
    port = free_port()
    viewer = subprocess.Popen(
        ["npx", "promptfoo", "view", "-n", "--port", str(port)],
        cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            try:
                with urllib.request.urlopen(f"{base}/", timeout=2) as response:
                    if response.status == 200:
                        break
            except OSError:
                if time.monotonic() > deadline:
                    pytest.fail(f"promptfoo view did not start within {START_TIMEOUT_S} s")
                time.sleep(0.5)
        yield base
    finally:
        os.killpg(viewer.pid, 15)
        viewer.wait(timeout=30)


def browse(script: Path, url: str, shot: Path, *args: str, timeout: float = 180) -> Any:
    """Run the playwright-core ``script`` (``node script URL SHOT ARGS…``); its last stdout line, as JSON."""
    check = subprocess.run(
        ["node", str(script), url, str(shot), *args],
        cwd=REPO, capture_output=True, text=True, timeout=timeout, check=False,
    )  # fmt: skip
    assert check.returncode == 0, check.stderr[-3000:]
    return json.loads(check.stdout.strip().splitlines()[-1])
