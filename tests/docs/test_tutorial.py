"""The tutorial runs as written: every shell block of docs/tutorial.md, in order, in a copy of the repository.

The copy holds the working tree's files (``git ls-files``: committed and new, not ignored), with the
project's ``.venv`` and ``node_modules`` linked in so that nothing installs. Each ```` ```bash ```` block
runs in one ``bash -e`` from the copy's root and must exit 0, or the status its ``# exits N`` comment
documents. A block whose first line is ``# runs until you press Ctrl+C`` starts a server: it must answer
at the address the comment names, and is then stopped. Afterwards the files the tutorial's heredocs write
hold what the page shows, and the results are what the page says they are.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.scores import query_id

REPO = Path(__file__).resolve().parents[2]
TUTORIAL = REPO / "docs" / "tutorial.md"
SERVER = "# runs until you press Ctrl+C"
BLOCK_TIMEOUT_S = 900
SERVER_START_S = 90

pytestmark = pytest.mark.e2e


@dataclass(frozen=True)
class Block:
    line: int  # where the fence opens in the page, 1-based
    text: str

    @property
    def expected_status(self) -> int:
        match = re.search(r"^# exits (\d+)\b", self.text, re.MULTILINE)
        return int(match.group(1)) if match else 0

    @property
    def is_server(self) -> bool:
        return self.text.startswith(SERVER)


def shell_blocks(markdown: str) -> list[Block]:
    """The page's ```bash and ```console blocks, in order."""
    blocks: list[Block] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        fence = re.match(r"^(\s*)```(\w+)", lines[i])
        if fence:
            body: list[str] = []
            start = i + 1
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i][len(fence.group(1)) :])
                i += 1
            if fence.group(2) in ("bash", "console", "sh", "shell"):
                blocks.append(Block(start, "\n".join(body) + "\n"))
        i += 1
    return blocks


def heredocs(blocks: list[Block]) -> dict[str, str]:
    """``cat > PATH <<'EOF'`` … ``EOF`` in the blocks: the text each writes, by path."""
    written: dict[str, str] = {}
    for block in blocks:
        for match in re.finditer(r"^cat > (\S+) <<'EOF'\n(.*?)^EOF$", block.text, re.MULTILINE | re.DOTALL):
            written[match.group(1)] = match.group(2)
    return written


class TestBlocks:
    """The parsing the run relies on, on the page itself."""

    def test_every_fence_of_the_page_is_a_block_or_not_shell(self) -> None:
        text = TUTORIAL.read_text(encoding="utf-8")
        opened = len(re.findall(r"^\s*```(?:bash|console|sh|shell)\s*$", text, re.MULTILINE))
        assert opened == len(shell_blocks(text)) >= 10

    def test_the_page_writes_its_dataset_and_config_with_heredocs(self) -> None:
        written = heredocs(shell_blocks(TUTORIAL.read_text(encoding="utf-8")))
        assert set(written) >= {
            "my-data/queries.jsonl", "my-data/jkb_index.jsonl", "my-data/recorded_answers.yaml", "my-study.yaml",
        }  # fmt: skip

    def test_expected_status_and_server_marks(self) -> None:
        assert Block(1, "npx promptfoo eval -c x.yaml\n# exits 100: on purpose\n").expected_status == 100
        assert Block(1, "true\n").expected_status == 0
        assert Block(1, SERVER + "; open http://localhost:1\nnpx promptfoo view -n\n").is_server


def _copy_repository(target: Path) -> None:
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    for name in filter(None, listed):
        source = REPO / name
        if not source.is_file():  # deleted in the working tree, or a folder-like entry
            continue
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target / name, follow_symlinks=False)
    for linked in (".venv", "node_modules"):
        (target / linked).symlink_to(REPO / linked)


def _require_installed() -> None:
    """scripts/install in the copy must find everything installed: it would otherwise install into the
    shared .venv from the copy (an editable install pointing at a folder about to be deleted)."""
    for folder, source in ((".venv", "pyproject.toml"), ("node_modules", "package-lock.json")):
        checksum = subprocess.run(
            ["cksum"], input=(REPO / source).read_bytes(), capture_output=True, check=True
        )
        if not (REPO / folder / f".installed-{checksum.stdout.split()[0].decode()}").exists():
            pytest.fail(f"{source} changed since {folder} was installed: run bash scripts/install first")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GROUNDING_EVAL_")}
    env.pop("PROMPTFOO_CONFIG_DIR", None)  # the copy's .env sets its own
    return env


def _run_server(block: Block, cwd: Path, env: dict[str, str]) -> None:
    address = re.search(r"https?://[\w.:-]+", block.text.splitlines()[0])
    assert address, f"docs/tutorial.md line {block.line}: a server block names no address to open"
    server = subprocess.Popen(
        ["bash", "-e", "-c", block.text], cwd=cwd, env=env,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            assert server.poll() is None, (
                f"docs/tutorial.md line {block.line}: the server exited ({server.returncode})"
            )
            try:
                with urllib.request.urlopen(f"{address.group(0)}/api/results", timeout=2) as response:
                    listed = json.load(response)
                    break
            except OSError:
                assert time.monotonic() < deadline, (
                    f"line {block.line}: nothing answered at {address.group(0)}"
                )
                time.sleep(0.5)
        assert listed["data"], "the viewer lists no eval: the demo's run is not in the copy's database"
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    _require_installed()
    blocks = shell_blocks(TUTORIAL.read_text(encoding="utf-8"))
    root = tmp_path / "repo"
    _copy_repository(root)
    env = _env()
    for block in blocks:
        if block.is_server:
            _run_server(block, root, env)
            continue
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", block.text], cwd=root, env=env,
            capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S, check=False,
        )  # fmt: skip
        assert done.returncode == block.expected_status, (
            f"docs/tutorial.md line {block.line}: exit {done.returncode}, documented {block.expected_status}\n"
            f"{block.text}\n--- stdout (end)\n{done.stdout[-2500:]}\n--- stderr (end)\n{done.stderr[-2500:]}"
        )
    for path, text in heredocs(blocks).items():  # a later block may append (the sample's index record)
        assert (root / path).read_text(encoding="utf-8").startswith(text), path

    # What the page says the runs show.
    assert (root / "results" / "report.html").stat().st_size > 0
    rows = {
        query_id(row): row
        for row in json.loads((root / "results" / "my-study.json").read_text(encoding="utf-8"))["results"][
            "results"
        ]
    }
    assert sorted(rows) == ["my-lockout-01", "my-repairs-01"]
    good, bad = rows["my-lockout-01"], rows["my-repairs-01"]
    assert good["success"] is True
    good_reasons = "\n".join(c.get("reason", "") for c in good["gradingResult"]["componentResults"])
    assert "quotation: 1.00 [1 EXACT]" in good_reasons and "[1 MATCH]" in good_reasons
    assert bad["success"] is False
    assert (
        "[jurisdiction → jurisdiction_correct No] leak to another state: Legal Aid Chicago serves IL only"
        in (bad["gradingResult"]["reason"])
    )
