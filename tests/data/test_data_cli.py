"""The dataset commands: conditions stats/show, allowlist build, orgs check, data validate."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from grounding_eval import data_cli
from grounding_eval.cli import main
from grounding_eval.verifier.allowlist import load_allowlist

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "sample"
TINY = REPO / "tests" / "fixtures" / "data" / "tiny"


def test_stats_prints_tokens_per_item(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conditions", "stats", "--dataset", str(SAMPLE)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["id", "st", "C1", "tok", "C1.5", "tok", "C1.5", "articles"]
    assert len(lines) == 1 + 38 + 1
    assert lines[-1].startswith("38 items · C1 tokens median ")
    assert "document ≈150–200" in lines[-1] and "document ≈2,800–8,700" in lines[-1]


def test_stats_json_for_one_round(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conditions", "stats", "--dataset", str(SAMPLE), "--round", "1a", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r["id"] for r in rows] == [
        "il-evict-01",
        "il-evict-02",
        "il-evict-03",
        "il-evict-04",
        "il-evict-05",
    ]
    assert rows[0]["c15_articles"] == ["us-15usc9058", "usagov-avoid-eviction"]
    assert all(r["c1_tokens"] > 0 and r["c15_tokens"] > 0 for r in rows)


def test_dataset_from_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """$GROUNDING_EVAL_DATASET swaps the dataset with no other change."""
    monkeypatch.setenv("GROUNDING_EVAL_DATASET", str(TINY))
    assert main(["conditions", "stats", "--json"]) == 0
    assert [json.loads(line)["id"] for line in capsys.readouterr().out.splitlines()] == [
        "tiny-oh-01",
        "tiny-wv-01",
        "tiny-hr-wv-01",
    ]


def test_a_typed_dataset_flag_beats_the_environment(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The usual rule: what the user typed on the command line wins over a variable set long ago."""
    monkeypatch.setenv("GROUNDING_EVAL_DATASET", str(SAMPLE))
    assert main(["conditions", "stats", "--dataset", str(TINY), "--json"]) == 0
    assert [json.loads(line)["id"] for line in capsys.readouterr().out.splitlines()] == [
        "tiny-oh-01",
        "tiny-wv-01",
        "tiny-hr-wv-01",
    ]


def test_show_renders_the_prompt(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conditions", "show", "tiny-oh-01", "--condition", "C1", "--dataset", str(TINY)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "You are a legal information assistant helping someone in OH.\nRelevant authoritative resources"
    )
    assert "### Tiny Handbook: getting repairs made\nhttps://example.org/tiny/repairs\n" in out


def test_show_unknown_id(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["conditions", "show", "nope", "--dataset", str(TINY)]) == 2
    assert capsys.readouterr().err == f"grounding-eval: error: {TINY}: no item with id 'nope'\n"


def test_allowlist_build(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The allowlist is derived from the index: normalized, de-duplicated, sorted, counted."""
    out = tmp_path / "allow.txt"
    assert main(["allowlist", "build", str(SAMPLE / "jkb_index.jsonl"), "-o", str(out)]) == 0
    lines = out.read_text(encoding="utf-8").splitlines()
    urls = [line for line in lines if not line.startswith("#")]
    assert lines[1] == f"# {len(urls)} unique URLs (normalized) from 63 index records"
    assert urls == sorted(set(urls))
    built = load_allowlist(out)
    assert len(built) == len(urls)
    # Every index URL is in the shipped sample allowlist (which adds two documented extras).
    assert built.urls <= load_allowlist(REPO / "datasets" / "sample" / "allowlist.txt").urls


class TestAllowlistBuildOutput:
    """allowlist build -o never destroys what is there: an existing file is refused (an allowlist may be
    edited by hand, as the sample's is) unless --force, and the file is written whole or not at all."""

    INDEX = SAMPLE / "jkb_index.jsonl"

    def test_an_existing_file_is_refused(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        out = tmp_path / "allow.txt"
        out.write_text("https://kept.test/  # added by hand\n", encoding="utf-8")
        assert main(["allowlist", "build", str(self.INDEX), "-o", str(out)]) == 2
        assert capsys.readouterr().err == f"grounding-eval: error: {out}: exists: use --force to overwrite\n"
        assert out.read_text(encoding="utf-8") == "https://kept.test/  # added by hand\n"

    def test_force_replaces_it(self, tmp_path: Path) -> None:
        out = tmp_path / "allow.txt"
        out.write_text("old\n", encoding="utf-8")
        assert main(["allowlist", "build", str(self.INDEX), "-o", str(out), "--force"]) == 0
        assert out.read_text(encoding="utf-8").startswith("# URL allowlist derived from ")
        assert [p.name for p in tmp_path.iterdir()] == ["allow.txt"]  # no temporary file left

    @staticmethod
    def _index(tmp_path: Path, url: str) -> Path:
        """A one-record JSON index (the sample's first record) with ``url``, written as promptfoo-style
        JSON: a lone surrogate as the escape ``\\ud83d``."""
        record = json.loads((SAMPLE / "jkb_index.jsonl").read_text(encoding="utf-8").splitlines()[0])
        index = tmp_path / "index.jsonl"
        index.write_text(json.dumps({**record, "url": url}) + "\n", encoding="utf-8")
        return index

    def test_a_failing_run_keeps_the_old_file(self, tmp_path: Path) -> None:
        """A lone surrogate in an index URL's host: before, a UnicodeEncodeError traceback and a 0-byte
        allowlist; now one line naming the index, and the old file as it was (even with --force)."""
        index = self._index(tmp_path, "https://x\ud83d.example.org/a")
        out = tmp_path / "allow.txt"
        out.write_text("old\n", encoding="utf-8")
        args = argparse.Namespace(command="allowlist", action="build", index=index, output=out, force=True)
        with pytest.raises(data_cli.DataError) as raised:
            data_cli.run(args)
        assert raised.value.one_line() == (
            f"{index}: URL 'https://x\\ud83d.example.org/a' holds a lone surrogate: not a URL"
        )
        assert out.read_text(encoding="utf-8") == "old\n"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["allow.txt", "index.jsonl"]

    def test_a_surrogate_in_a_path_is_percent_encoded(self, tmp_path: Path) -> None:
        """Control: in a path the normalizer percent-encodes it (as a browser would), so it is written."""
        out = tmp_path / "allow.txt"
        assert (
            main(
                [
                    "allowlist",
                    "build",
                    str(self._index(tmp_path, "https://example.org/\udc00")),
                    "-o",
                    str(out),
                ]
            )
            == 0
        )
        assert out.read_text(encoding="utf-8").splitlines()[-1] == "https://example.org/%ED%B0%80"

    def test_a_missing_folder_is_one_line(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        out = tmp_path / "no" / "allow.txt"
        assert main(["allowlist", "build", str(self.INDEX), "-o", str(out)]) == 2
        assert (
            capsys.readouterr().err
            == f"grounding-eval: error: {out}: cannot write: the folder {out.parent} does not exist\n"
        )


def test_orgs_check_lists_unowned_domains(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["orgs", "check", "--orgs", str(REPO / "datasets" / "sample" / "organizations.yaml"),
                 "--index", str(SAMPLE / "jkb_index.jsonl")])  # fmt: skip
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert out[0] == f"56 of 63 index URLs belong to an organization in {SAMPLE / 'organizations.yaml'}"
    assert out[1:] == [
        "  no organization owns uscode.house.gov: 5 record(s), e.g. us-15usc9058, us-15usc9057, us-34usc12491",
        "  no organization owns www.legislature.mi.gov: 2 record(s), e.g. mi-mcl554-601, mi-mcl554-631",
    ]


def test_validate(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["data", "validate", str(TINY)]) == 0
    assert capsys.readouterr().out.endswith(
        "2 queries, 1 High-Risk item, 3 index records, 2 cached articles — valid\n"
    )
    assert main(["data", "validate", str(tmp_path)]) == 2
    assert (
        capsys.readouterr().err
        == f"grounding-eval: error: {tmp_path}: no index file (jkb_index.jsonl, .csv, .yaml or .json)\n"
        f"grounding-eval: error: {tmp_path}: no item file: queries.jsonl or high_risk.jsonl (or .csv, .yaml, .json)\n"
    )
