"""scripts/check_wheels.py: every pin and what it requires has a wheel for each CPython and platform
(issue 42). The pack's own pins are checked against PyPI (the registry CI reaches), the rules against a
real index on 127.0.0.1 that serves chosen files."""

from __future__ import annotations

import http.server
import json
import subprocess
import sys
from pathlib import Path

from tests.loopback import serving

REPO = Path(__file__).resolve().parents[1]
SCRIPT = REPO / "scripts" / "check_wheels.py"

# Each project's wheels on the test index. idna: pure Python. pyyaml: CPython 3.11 Linux x86_64 only.
# requests: pure Python; it requires charset-normalizer (installed here), whose only wheel is 3.12+ abi3
# for every platform but Linux aarch64.
_FILES = {
    "idna": ["idna-3.20-py3-none-any.whl"],
    "pyyaml": [
        "PyYAML-6.0.4-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl",
        "PyYAML-6.0.5-py3-none-any.whl",
    ],
    "requests": ["requests-2.34.2-py3-none-any.whl"],
    "charset-normalizer": [
        "charset_normalizer-3.4.9-cp312-abi3-manylinux_2_28_x86_64.whl",
        "charset_normalizer-3.4.9-cp312-abi3-macosx_11_0_arm64.whl",
        "charset_normalizer-3.4.9-cp312-abi3-win_amd64.whl",
    ],
    "urllib3": ["urllib3-2.8.0-py3-none-any.whl"],
    "certifi": ["certifi-2026.10.19.post1-py3-none-any.whl"],
    "setuptools": ["setuptools-80.0.0-py3-none-any.whl"],
}


class _Index(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        name = self.path.strip("/").split("/")[-1]
        if self.headers.get("Accept") != "application/vnd.pypi.simple.v1+json" or name not in _FILES:
            self.send_error(404)
            return
        files = [{"filename": f, "url": f"/files/{f}", "hashes": {}, "requires-python": ">=3.9"}
                 for f in _FILES[name]]  # fmt: skip
        body = json.dumps({"meta": {"api-version": "1.1"}, "name": name, "files": files}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/vnd.pypi.simple.v1+json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def _run(tmp_path: Path, pins: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[build-system]\nrequires = ["setuptools>=77"]\n[project]\nname = "x"\n'
        f"dependencies = {json.dumps(pins)}\n",
        encoding="utf-8",
    )
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Index)
    with serving(server):
        index = f"http://127.0.0.1:{server.server_address[1]}/simple"
        return subprocess.run(
            [sys.executable, str(SCRIPT), "--pyproject", str(pyproject), "--index-url", index, *args],
            capture_output=True, text=True, timeout=120, check=False,
        )  # fmt: skip


def test_a_pure_python_pin_installs_everywhere(tmp_path: Path) -> None:
    done = _run(tmp_path, ["idna==3.20"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("wheels only") == 16
    assert done.stdout.splitlines()[-1].startswith("16 of 16 CPython and platform combinations")


def test_a_pin_without_a_wheel_for_a_python_or_platform_is_named(tmp_path: Path) -> None:
    done = _run(tmp_path, ["pyyaml==6.0.4"], "--python", "3.11", "--python", "3.13")
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[:8] == [
        "CPython 3.11  linux-aarch64  BLOCKED: pyyaml==6.0.4 (required by pyproject.toml)",
        "CPython 3.11  linux-x86_64   wheels only",
        *(f"CPython 3.11  {p} BLOCKED: pyyaml==6.0.4 (required by pyproject.toml)"
          for p in ("macos-arm64   ", "windows-amd64 ")),
        *(f"CPython 3.13  {p} BLOCKED: pyyaml==6.0.4 (required by pyproject.toml)"
          for p in ("linux-aarch64 ", "linux-x86_64  ", "macos-arm64   ", "windows-amd64 ")),
    ]  # fmt: skip
    assert lines[-1].startswith("1 of 8 ")


def test_an_unpinned_requirement_is_met_by_any_release_it_allows(tmp_path: Path) -> None:
    """pyyaml>=6 has a pure-Python release (6.0.5): pip would take it where 6.0.4 has no wheel."""
    done = _run(tmp_path, ["pyyaml>=6"], "--python", "3.14")
    assert done.returncode == 0, done.stdout


def test_a_blocker_further_down_is_named_with_what_requires_it(tmp_path: Path) -> None:
    done = _run(tmp_path, ["requests==2.34.2"], "--platform", "linux-aarch64", "--platform", "windows-amd64")
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    for python in ("3.11", "3.12", "3.13", "3.14"):
        aarch64 = next(x for x in lines if x.startswith(f"CPython {python}  linux-aarch64"))
        windows = next(x for x in lines if x.startswith(f"CPython {python}  windows-amd64"))
        assert aarch64.endswith("BLOCKED: charset_normalizer<4,>=2 (required by requests)")
        assert ("charset_normalizer" in windows) == (python == "3.11"), windows  # abi3 from 3.12 on


def test_an_index_that_does_not_answer_is_one_line(tmp_path: Path) -> None:
    done = _run(tmp_path, ["no-such-project==1.0"])
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("check_wheels: error: http://127.0.0.1:")


def test_every_pin_of_the_pack_installs_from_wheels_on_every_supported_python_and_platform() -> None:
    """Against PyPI itself: CPython 3.11-3.14 on Linux x86_64 and aarch64, macOS arm64 and Windows."""
    done = subprocess.run(
        [sys.executable, str(SCRIPT)], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "16 of 16 CPython and platform combinations install from wheels alone" in done.stdout
