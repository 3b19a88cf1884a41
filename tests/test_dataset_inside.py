"""Everything the verifier and the replay provider read from a dataset lies inside the dataset folder.

A shared dataset must not be able to point its allowlist, directory, index, articles or recordings at a
file elsewhere on the grader's machine (``allowlist.txt -> /etc/passwd``): each is refused in one line.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.promptfoo.replay_provider import call_replay
from grounding_eval.promptfoo.round_tests import generate_tests
from tests.entry_points import REPO, load_entry_point
from tests.outcomes import unscored_reason
from tests.scores import query_id

TINY = REPO / "tests" / "fixtures" / "data" / "tiny"
get_assert = load_entry_point("verifier")


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    data = tmp_path / "shared-with-me"
    shutil.copytree(TINY, data)
    return data


def _outside(tmp_path: Path, name: str, text: str) -> Path:
    target = tmp_path / "elsewhere" / name
    target.parent.mkdir(exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return target


def _test(dataset: Path) -> dict[str, Any]:
    tests = generate_tests({"dataset": str(dataset)}, pack_root=REPO)
    return next(t for t in tests if query_id(t) == "tiny-oh-01")


def _grade(dataset: Path, test: dict[str, Any] | None = None, **config: Any) -> dict[str, Any]:
    test = test or _test(dataset)
    context = {
        "vars": test["vars"],
        "test": {"metadata": test["metadata"]},
        "prompt": "",
        "config": {"liveness": "offline", **config},
    }
    return get_assert("Call 211.", context)


@pytest.mark.parametrize("name", ["allowlist.txt", "organizations.yaml"])
def test_verifier_file_symlinked_outside_is_refused(dataset: Path, tmp_path: Path, name: str) -> None:
    target = _outside(
        tmp_path, name, "https://example.org/\n" if name.endswith("txt") else "- name: X\n  states: [OH]\n"
    )
    (dataset / name).symlink_to(target)
    result = _grade(dataset)
    assert unscored_reason(result).startswith(
        f"{dataset / name}: resolves outside the dataset folder {dataset}"
    )
    assert result["pass"] is False and result["namedScores"] == {}


def test_article_cache_widening_reads_only_inside(dataset: Path, tmp_path: Path) -> None:
    test = _test(dataset)  # the generator itself refuses such a dataset (tested in tests/data): swap after
    article = dataset / "articles" / "tiny-notice.txt"
    article.unlink()
    article.symlink_to(_outside(tmp_path, "secret.txt", "a private note that must never be read"))
    result = _grade(dataset, test, quote_sources="article_cache")
    assert "resolves outside the dataset folder" in unscored_reason(result)


def test_recorded_answers_symlinked_outside_are_refused(dataset: Path, tmp_path: Path) -> None:
    recordings = dataset / "recorded_answers.yaml"
    target = _outside(tmp_path, "answers.yaml", recordings.read_text(encoding="utf-8"))
    recordings.unlink()
    recordings.symlink_to(target)
    context = {
        "vars": {"query_id": "tiny-oh-01"},
        "prompt": {"label": "C0: prompts/c0.txt"},
        "test": {"metadata": {"dataset": str(dataset)}},
    }
    response = call_replay("prompt", {"config": {}}, context)
    assert response == {
        "error": f"replay provider: {recordings}: resolves outside the dataset folder {dataset} (a symlink?): "
        "only files inside it are read; copy the file in instead"
    }


def test_recorded_judge_replies_symlinked_outside_are_refused(dataset: Path, tmp_path: Path) -> None:
    replies = dataset / "judge_replies" / "round3.yaml"
    target = _outside(tmp_path, "round3.yaml", replies.read_text(encoding="utf-8"))
    replies.unlink()
    replies.symlink_to(target)
    test = next(t for t in generate_tests({"dataset": str(dataset), "round": "3"}, pack_root=REPO))
    context = {
        "vars": test["vars"],
        "test": {"metadata": test["metadata"]},
        "prompt": "C0 prompt",
        "config": {"rubric": "round3", "provider": "replay:{dataset}/judge_replies/round3.yaml"},
        "metadata": {"recorded_fixture": "test"},
    }
    result = load_entry_point("judge")("An answer.", context)
    assert result["pass"] is False
    assert "resolves outside the dataset folder" in result["reason"], result["reason"]
    assert not any(k.startswith("round3.") for k in result.get("namedScores") or {})
