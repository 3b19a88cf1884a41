"""Hostile files in a dataset folder: each is refused with one line naming the file (issue 8).

A FIFO must not hang ``data validate``, ``/dev/zero`` must not be read until memory runs out, and a
symlink out of the dataset must not carry another file's text into a model prompt. File-content
mistakes (duplicate keys, bad CSV quoting, deep nesting) are in ``test_load.py``'s table.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from grounding_eval.cli import main
from grounding_eval.data.dataset import load_dataset
from grounding_eval.errors import DataError

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "tests" / "fixtures" / "data" / "tiny"
SECRET = "hunter2-do-not-print"

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes on this platform")
needs_dev_zero = pytest.mark.skipif(not Path("/dev/zero").exists(), reason="no /dev/zero")


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    """A writable copy of the tiny dataset (2 queries, 1 High-Risk item, 3 index records, 2 articles)."""
    root = tmp_path / "ds"
    shutil.copytree(TINY, root)
    return root


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file outside the dataset folder holding text that must never be shown or used."""
    path = tmp_path / "private" / "secret.txt"
    path.parent.mkdir()
    path.write_text(f"{SECRET}\n", encoding="utf-8")
    return path


def _validate(root: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(["data", "validate", str(root)])
    captured = capsys.readouterr()
    assert captured.out == "" or captured.out.endswith(" — not valid (1 error)\n"), captured.out
    return code, captured.err


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    # A subprocess with a timeout: a reader that blocks on a FIFO fails the test instead of the suite.
    return subprocess.run(
        [sys.executable, "-m", "grounding_eval", *argv],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=60,
        check=False,
    )


class TestSpecialFiles:
    """Only regular files are read: a FIFO, a device or a folder by an article's name is one line."""

    @needs_fifo
    def test_fifo_article_does_not_hang_validate(self, dataset: Path) -> None:
        fifo = dataset / "articles" / "tiny-org.txt"
        os.mkfifo(fifo)
        result = _run("data", "validate", str(dataset))
        assert (result.returncode, result.stdout.endswith("— not valid (1 error)\n")) == (2, True)
        assert result.stderr == f"grounding-eval: error: {fifo}: is a named pipe (FIFO), not a regular file\n"

    @needs_fifo
    def test_fifo_index_does_not_hang_validate(self, dataset: Path) -> None:
        index = dataset / "jkb_index.csv"
        index.unlink()
        os.mkfifo(index)
        result = _run("data", "validate", str(dataset))
        assert result.returncode == 2
        assert (
            result.stderr == f"grounding-eval: error: {index}: is a named pipe (FIFO), not a regular file\n"
        )

    @needs_dev_zero
    def test_article_symlinked_to_dev_zero(self, dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """Before: MemoryError after reading /dev/zero until memory ran out."""
        link = dataset / "articles" / "tiny-org.txt"
        link.symlink_to("/dev/zero")
        code, err = _validate(dataset, capsys)
        assert code == 2
        assert err.startswith(f"grounding-eval: error: {link}: resolves outside the dataset folder {dataset}")
        assert err.count("\n") == 1

    @needs_dev_zero
    def test_device_inside_the_dataset(self, dataset: Path) -> None:
        """A device node is refused for what it is even when the folder check does not apply."""
        from grounding_eval.files import read_text

        with pytest.raises(DataError) as info:
            read_text("/dev/zero", inside="/dev")
        assert str(info.value) == "/dev/zero: is a device, not a regular file"

    def test_folder_named_like_an_article(self, dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
        folder = dataset / "articles" / "tiny-org.md"
        folder.mkdir()
        assert _validate(dataset, capsys) == (
            2,
            f"grounding-eval: error: {folder}: is a directory, not a regular file\n",
        )

    def test_broken_symlink_article(self, dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
        link = dataset / "articles" / "tiny-org.txt"
        link.symlink_to(dataset / "nowhere.txt")
        assert _validate(dataset, capsys) == (
            2,
            f"grounding-eval: error: {link}: file not found (or a broken symlink)\n",
        )


class TestInsideTheDataset:
    """A dataset reads only files that, symlinks resolved, are inside its folder."""

    def test_article_symlinked_outside(
        self, dataset: Path, outside: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Before: it validated, and its text went into the C1.5 prompt."""
        link = dataset / "articles" / "tiny-org.txt"
        link.symlink_to(outside)
        code, err = _validate(dataset, capsys)
        assert code == 2
        assert err == (
            f"grounding-eval: error: {link}: resolves outside the dataset folder {dataset} (a symlink?): "
            "only files inside it are read; copy the file in instead\n"
        )
        assert SECRET not in err

    def test_outside_article_never_reaches_a_prompt(self, dataset: Path, outside: Path) -> None:
        """The C1.5 prompt is built from load_dataset's articles: the load itself refuses."""
        (dataset / "articles" / "tiny-org.txt").symlink_to(outside)
        with pytest.raises(DataError, match="resolves outside the dataset folder"):
            load_dataset(dataset)

    def test_articles_folder_symlinked_outside(self, dataset: Path, tmp_path: Path) -> None:
        elsewhere = tmp_path / "elsewhere"
        shutil.move(dataset / "articles", elsewhere)
        (dataset / "articles").symlink_to(elsewhere, target_is_directory=True)
        with pytest.raises(DataError, match=r"tiny-notice\.txt: resolves outside the dataset folder"):
            load_dataset(dataset)

    def test_index_symlinked_outside(self, dataset: Path, tmp_path: Path) -> None:
        index = dataset / "jkb_index.csv"
        moved = shutil.move(index, tmp_path / "shared_index.csv")
        index.symlink_to(moved)
        with pytest.raises(DataError) as info:
            load_dataset(dataset)
        assert str(info.value).startswith(f"{index}: resolves outside the dataset folder {dataset}")

    def test_symlink_within_the_dataset_is_fine(self, dataset: Path) -> None:
        """A link to another file of the same dataset stays inside it."""
        (dataset / "sources").mkdir()
        shutil.move(dataset / "articles" / "tiny-notice.txt", dataset / "sources" / "notice.txt")
        (dataset / "articles" / "tiny-notice.txt").symlink_to(Path("..") / "sources" / "notice.txt")
        assert "tiny-notice" in load_dataset(dataset).articles

    def test_dataset_folder_itself_a_symlink(self, dataset: Path, tmp_path: Path) -> None:
        """Reaching the dataset through a link to it is fine: the check compares resolved paths."""
        link = tmp_path / "linked"
        link.symlink_to(dataset, target_is_directory=True)
        assert set(load_dataset(link).articles) == {"tiny-repairs", "tiny-notice"}


class TestSizeLimits:
    """Sizes are checked before reading: 1 MiB for an article, 64 MiB for other data files."""

    def test_article_over_one_mib(self, dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
        article = dataset / "articles" / "tiny-org.txt"
        article.write_bytes(b"x" * (1024 * 1024 + 1))
        assert _validate(dataset, capsys) == (
            2,
            f"grounding-eval: error: {article}: is 1,048,577 bytes; a cached article may be at most 1 MiB\n",
        )

    def test_article_of_exactly_one_mib_loads(self, dataset: Path) -> None:
        (dataset / "articles" / "tiny-org.txt").write_bytes(b"x" * (1024 * 1024))
        assert len(load_dataset(dataset).articles["tiny-org"].text) == 1024 * 1024 + 1  # plus a newline

    def test_data_file_over_64_mib(self, dataset: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """A sparse file: nothing is written or read, the size alone refuses it."""
        queries = dataset / "queries.jsonl"
        os.truncate(queries, 64 * 1024 * 1024 + 1)
        assert _validate(dataset, capsys) == (
            2,
            f"grounding-eval: error: {queries}: is 67,108,865 bytes; a data file may be at most 64 MiB\n",
        )


Mutation = Callable[[Path], Path]


def _dup_json_key(root: Path) -> Path:
    path = root / "queries.jsonl"
    path.write_text(
        '{"id": "q1", "jurisdiction": "OH", "topic": "t", "question": "q", "question": "r"}\n',
        encoding="utf-8",
    )
    return path


def _dup_csv_header(root: Path) -> Path:
    path = root / "jkb_index.csv"
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([lines[0] + ",title", *lines[1:]]) + "\n", encoding="utf-8")
    return path


def _unterminated_quote(root: Path) -> Path:
    path = root / "jkb_index.csv"
    with path.open("a", encoding="utf-8") as handle:
        handle.write('tiny-x,OH,"Unclosed title,https://example.org/x,D,O,\n')
    return path


def _deep_jsonl(root: Path) -> Path:
    path = root / "high_risk.jsonl"
    path.write_text("[" * 50_000 + "]" * 50_000 + "\n", encoding="utf-8")
    return path


def _long_csv_cell(root: Path) -> Path:
    path = root / "jkb_index.csv"
    with path.open("a", encoding="utf-8") as handle:
        handle.write(f"tiny-x,OH,T,https://example.org/x,{'d' * 200_000},O,\n")
    return path


@pytest.mark.parametrize(
    ("mutate", "problem"),
    [
        pytest.param(
            _dup_json_key, "line 1: duplicate key 'question' in one object", id="duplicate-json-key"
        ),
        pytest.param(
            _dup_csv_header, "line 1: the header names column 'title' twice", id="duplicate-csv-header"
        ),
        pytest.param(
            _unterminated_quote, "line 5: a quoted cell is never closed", id="unterminated-csv-quote"
        ),
        pytest.param(_deep_jsonl, "line 1: not readable: nested too deeply", id="deep-jsonl"),
        pytest.param(_long_csv_cell, "line 5: a cell is longer than 131,072 characters", id="long-csv-cell"),
    ],
)
def test_validate_prints_one_line(
    dataset: Path, capsys: pytest.CaptureFixture[str], mutate: Mutation, problem: str
) -> None:
    """``data validate`` exits 2 with one line naming the file, the record and the problem."""
    path = mutate(dataset)
    code, err = _validate(dataset, capsys)
    assert code == 2
    assert err.startswith(f"grounding-eval: error: {path}: {problem}")
    assert err.count("\n") == 1
