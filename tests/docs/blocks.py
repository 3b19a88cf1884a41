"""The shell blocks of the documentation, and how a test runs them as written.

A page's ```` ```bash ```` (or ``sh``/``shell``) block runs in one ``bash -e -o pipefail`` from the root of
a copy of the repository and must exit 0, or the status its ``# exits N`` comment documents. A block whose
first line is ``# runs until you press Ctrl+C; then open URL`` starts a server: it must answer at URL, and
is then stopped. A ```` ```console ```` block is a transcript: each ``$ `` line runs, and must print exactly
the lines shown under it (up to the next ``$ `` line) and exit 0 (the last one: the status a
``<!-- exits N -->`` comment right above the fence documents).

An HTML comment right above the fence, ``<!-- not run: REASON -->``, says a block is not run by any test
and why; nothing else is skipped. ``tests/docs/test_pages.py`` checks that every shell block of README.md
and docs/ either runs in a page's test or carries that mark.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SERVER = "# runs until you press Ctrl+C"
SHELLS = ("bash", "console", "sh", "shell")
BLOCK_TIMEOUT_S = 900
SERVER_START_S = 90

_MARK = re.compile(r"^\s*<!--\s*(.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    page: str  # the page's path, relative to the repository root
    line: int  # where the fence opens in the page, 1-based
    lang: str
    text: str
    mark: str = ""  # the HTML comment on the line right above the fence, if any

    @property
    def where(self) -> str:
        return f"{self.page} line {self.line}"

    @property
    def expected_status(self) -> int:
        match = re.search(r"^# exits (\d+)\b", self.text, re.MULTILINE) or re.match(
            r"exits (\d+)\b", self.mark
        )
        return int(match.group(1)) if match else 0

    @property
    def script(self) -> str:
        """The text bash runs: a command line that ends in ``# exits N`` must exit N (with ``bash -e``, any
        other status stops the block, 0 included), as a reader who pastes the block sees it."""
        return re.sub(
            r"^(?!#)(.*?\S)([ \t]+# exits (\d+)\b.*)$",
            r"\1 && false || test $? -eq \3\2",
            self.text,
            flags=re.MULTILINE,
        )

    @property
    def is_server(self) -> bool:
        return self.text.startswith(SERVER)

    @property
    def not_run(self) -> str | None:
        """The reason the page gives for not running the block, or None when it runs."""
        match = re.match(r"not run:\s*(.*)", self.mark, re.DOTALL)
        return match.group(1).strip() if match else None

    def transcript(self) -> list[tuple[str, list[str]]]:
        """A console block's commands, each with the lines it is shown to print."""
        steps: list[tuple[str, list[str]]] = []
        for line in self.text.splitlines():
            if line.startswith("$ "):
                steps.append((line[2:], []))
            elif steps:
                steps[-1][1].append(line)
            else:
                raise AssertionError(f"{self.where}: a console block's first line is not a $ command")
        return steps


def shell_blocks(markdown: str, page: str = "") -> list[Block]:
    """The page's shell and console blocks, in order."""
    blocks: list[Block] = []
    lines = markdown.splitlines()
    i = 0
    while i < len(lines):
        fence = re.match(r"^(\s*)```(\w*)", lines[i])
        if fence:
            body: list[str] = []
            start = i + 1
            mark = _MARK.match(lines[i - 1]) if i else None
            i += 1
            while i < len(lines) and lines[i].strip() != "```":
                body.append(lines[i][len(fence.group(1)) :])
                i += 1
            if fence.group(2) in SHELLS:
                blocks.append(
                    Block(page, start, fence.group(2), "\n".join(body) + "\n", mark.group(1) if mark else "")
                )
        i += 1
    return blocks


def page_blocks(page: str) -> list[Block]:
    """The shell blocks of ``page`` (relative to the repository root)."""
    return shell_blocks((REPO / page).read_text(encoding="utf-8"), page)


def heredocs(blocks: list[Block]) -> dict[str, str]:
    """``cat > PATH <<'EOF'`` … ``EOF`` in the blocks: the text each writes, by path."""
    written: dict[str, str] = {}
    for block in blocks:
        for match in re.finditer(r"^cat > (\S+) <<'EOF'\n(.*?)^EOF$", block.text, re.MULTILINE | re.DOTALL):
            written[match.group(1)] = match.group(2)
    return written


def copy_repository(target: Path) -> Path:
    """The working tree's files (``git ls-files``: committed and new, not ignored) copied to ``target``, with
    the project's ``.venv`` and ``node_modules`` linked in so that nothing installs."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, capture_output=True, check=True,
    ).stdout.decode().split("\0")  # fmt: skip
    for name in filter(None, listed):
        source = REPO / name
        if not (source.is_file() or source.is_symlink()):  # deleted in the working tree
            continue
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target / name, follow_symlinks=False)  # a link stays a link (configs/providers)
    for linked in (".venv", "node_modules"):
        (target / linked).symlink_to(REPO / linked)
    return target


def require_installed() -> None:
    """scripts/install in a copy must find everything installed: it would otherwise install into the
    shared .venv from the copy (an editable install pointing at a folder about to be deleted)."""
    for folder, source in ((".venv", "pyproject.toml"), ("node_modules", "package-lock.json")):
        checksum = subprocess.run(
            ["cksum"], input=(REPO / source).read_bytes(), capture_output=True, check=True
        )
        if not (REPO / folder / f".installed-{checksum.stdout.split()[0].decode()}").exists():
            pytest.fail(f"{source} changed since {folder} was installed: run bash scripts/install first")


def reader_env(home: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """A reader's environment: none of the session's ``GROUNDING_EVAL_*`` variables or promptfoo database
    (the copy's ``.env`` names its own), a fresh home and user cache under ``home`` (npm's update check off:
    it would ask the registry), and ``extra``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GROUNDING_EVAL_")}
    env.pop("PROMPTFOO_CONFIG_DIR", None)
    (home / ".cache").mkdir(parents=True, exist_ok=True)
    return {
        **env,
        "HOME": str(home),
        "npm_config_update_notifier": "false",
        "XDG_CACHE_HOME": str(home / ".cache"),
        "NO_COLOR": "1",
        **(extra or {}),
    }


def _tail(done: subprocess.CompletedProcess[str]) -> str:
    return f"--- stdout (end)\n{done.stdout[-2500:]}\n--- stderr (end)\n{done.stderr[-2500:]}"


def run_block(block: Block, cwd: Path, env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """Run a bash block; it must exit with its documented status."""
    assert block.lang != "console" and not block.is_server and block.not_run is None, block.where
    done = subprocess.run(
        ["bash", "-e", "-o", "pipefail", "-c", block.script], cwd=cwd, env=dict(env),
        capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S, check=False,
    )  # fmt: skip
    assert done.returncode == block.expected_status, (
        f"{block.where}: exit {done.returncode}, documented {block.expected_status}\n{block.text}\n{_tail(done)}"
    )
    return done


def run_console(block: Block, cwd: Path, env: Mapping[str, str]) -> None:
    """Run a console block's commands; each prints exactly the lines shown and exits as documented."""
    steps = block.transcript()
    for n, (command, shown) in enumerate(steps):
        done = subprocess.run(
            ["bash", "-o", "pipefail", "-c", command], cwd=cwd, env=dict(env),
            capture_output=True, text=True, timeout=BLOCK_TIMEOUT_S, check=False,
        )  # fmt: skip
        status = block.expected_status if n == len(steps) - 1 else 0
        assert done.returncode == status, (
            f"{block.where}: `{command}` exit {done.returncode}, documented {status}\n{_tail(done)}"
        )
        assert done.stdout.splitlines() == shown, (
            f"{block.where}: `{command}` printed otherwise\n{_tail(done)}"
        )


def run_server(block: Block, cwd: Path, env: Mapping[str, str], path: str = "/") -> bytes:
    """Start a server block, wait until the address its first line names answers ``path``, stop it; the body."""
    address = re.search(r"https?://[\w.:-]+", block.text.splitlines()[0])
    assert address, f"{block.where}: a server block names no address to open"
    url = address.group(0) + path
    server = subprocess.Popen(
        ["bash", "-e", "-c", block.text], cwd=cwd, env=dict(env),
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + SERVER_START_S
        while True:
            assert server.poll() is None, f"{block.where}: the server exited ({server.returncode})"
            try:
                with urllib.request.urlopen(url, timeout=2) as response:
                    body: bytes = response.read()
                    return body
            except OSError:
                assert time.monotonic() < deadline, f"{block.where}: nothing answered at {url}"
                time.sleep(0.5)
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        server.wait(timeout=30)


def run_page(
    page: str,
    cwd: Path,
    env: Mapping[str, str],
    server_path: str = "/",
    reader: Mapping[int, Callable[[Path], None]] | None = None,
) -> list[Block]:
    """Every block of ``page`` in order, as written, except those marked not run; the blocks that ran.
    ``reader[n]`` does, before the n-th block that runs (from 0), what the page asks the reader to do by hand."""
    ran: list[Block] = []
    for block in page_blocks(page):
        if block.not_run is not None:
            continue
        if reader and len(ran) in reader:
            reader[len(ran)](cwd)
        if block.is_server:
            run_server(block, cwd, env, server_path)
        elif block.lang == "console":
            run_console(block, cwd, env)
        else:
            run_block(block, cwd, env)
        ran.append(block)
    return ran
