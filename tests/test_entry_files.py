"""``assertions/grounding.py`` and the older entry files kept as its aliases give the same GradingResult,
loaded as promptfoo loads them (its own ``wrapper.py`` where it is installed)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.judge import clients
from grounding_eval.judge.calls import answer_sha256
from grounding_eval.judge.rubric import load_rubric
from tests.entry_points import load_entry_point
from tests.scores import row_scores

REPO = Path(__file__).resolve().parents[1]
WRAPPER = REPO / "node_modules" / "promptfoo" / "dist" / "src" / "python" / "wrapper.py"
ANSWER = "Call Legal Aid Chicago at (312) 341-1070 or visit https://www.legalaidchicago.org."
DIRECTORY = "### Legal Aid Chicago\nhttps://www.legalaidchicago.org\nFree civil legal help in Cook County."
VERIFIER_CONFIG = {
    "allowlist": str(REPO / "tests/fixtures/verifier/allowlist.txt"),
    "orgs": str(REPO / "tests/fixtures/verifier/orgs.yaml"),
    "liveness": "offline",
}
# (old file, its function, the function of grounding.py it is an alias of)
ALIASES = [
    ("verifier", "get_assert", "verifier"),
    ("judge", "get_assert", "judge"),
    ("factuality", "get_assert", "factuality"),
    ("docs_qa", "get_assert", "docs_qa"),
    ("composite", "round1", "round1"),
    ("composite", "round2b", "round2b"),
    ("composite", "round3", "round3"),
]


@pytest.fixture(autouse=True)
def _fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    clients.forget_clients()
    monkeypatch.delenv("GROUNDING_EVAL_JUDGE_PROVIDER", raising=False)
    monkeypatch.chdir(tmp_path)  # caches, audit log and review queues land here
    yield
    clients.forget_clients()


def _args(call: str, tmp_path: Path) -> list[Any]:
    """``[output, context]`` (or ``[named_scores, context]``) for ``call``: a row each entry really grades."""
    vars_ = {"query_id": "q1", "jurisdiction": "IL", "question": "Can my landlord evict me in 5 days?",
             "jkb_directory": DIRECTORY, "jkb_full_content": ""}  # fmt: skip
    prompt = f"Relevant authoritative resources:\n{DIRECTORY}\nUser question: ..."
    if call == "verifier":
        return [ANSWER, {"vars": vars_, "prompt": prompt, "config": VERIFIER_CONFIG}]
    if call == "judge":
        v3 = load_rubric(REPO / "rubrics" / "v3.yaml")
        criteria = {c: {"verdict": "No" if v3.criterion(c).negative else ("Partial" if i % 3 else "Yes"),
                        "reasoning": f"Judged {c}."} for i, c in enumerate(v3.ids)}  # fmt: skip
        replies = tmp_path / "replies.json"
        entry = {"key": "v3/q1/C1", "answer_sha256": answer_sha256(ANSWER),
                 "replies": [json.dumps({"criteria": criteria, "summary": "s"})]}  # fmt: skip
        replies.write_text(json.dumps([entry]), encoding="utf-8")
        return [ANSWER, {"vars": vars_, "prompt": prompt, "config": {"rubric": "v3", "provider": f"replay:{replies}"},
                         "test": {"metadata": {"directory_ids": ["il-org-legalaidchicago"]}}}]  # fmt: skip
    if call in ("factuality", "docs_qa"):  # no judge configured: each one's own explicit error
        return [ANSWER, {"vars": vars_, "prompt": prompt, "config": {}, "test": {"metadata": {}}}]
    if call == "round1":  # the composite of a real verifier and judge result
        graded = [load_entry_point("grounding", c)(*_args(c, tmp_path)) for c in ("verifier", "judge")]
        named = {k: v for g in graded for k, v in row_scores(g).items()}
        return [
            named,
            {"componentResults": [{k: v for k, v in g.items() if k != "componentResults"} for g in graded]},
        ]
    return [
        {"v4.llm_judge_score": 0.6, "quotation_score": 0.4},
        {"componentResults": []},
    ]  # unscored: no judge


def _without_timestamps(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_timestamps(v) for k, v in value.items() if k != "timestamp"}
    if isinstance(value, list):
        return [_without_timestamps(v) for v in value]
    return value


@pytest.mark.parametrize(("file", "function", "call"), ALIASES)
def test_an_old_entry_file_grades_as_grounding_py(
    file: str, function: str, call: str, tmp_path: Path
) -> None:
    args = _args(call, tmp_path)
    new = load_entry_point("grounding", call)(*args)
    old = load_entry_point(file, function)(*args)
    assert _without_timestamps(old) == _without_timestamps(new)
    if call in ("verifier", "judge", "round1"):  # graded, not an early error
        assert new["metadata"].get("outcome") != "unscored", new["reason"]


@pytest.mark.skipif(not WRAPPER.is_file(), reason="promptfoo is not installed (npm ci)")
@pytest.mark.parametrize(("file", "function", "call"), [ALIASES[0], ALIASES[4]])
def test_promptfoos_wrapper_loads_both_paths(file: str, function: str, call: str, tmp_path: Path) -> None:
    """promptfoo's own ``wrapper.py`` runs ``file://…/grounding.py:<call>`` and the old path alike."""
    (tmp_path / "args.json").write_text(json.dumps(_args(call, tmp_path)), encoding="utf-8")

    def run(path: Path, name: str) -> Any:
        out = tmp_path / f"{path.stem}-{name}.json"
        subprocess.run([sys.executable, str(WRAPPER), str(path), name, str(tmp_path / "args.json"), str(out)],
                       check=True, capture_output=True, cwd=tmp_path)  # fmt: skip
        return json.loads(out.read_text(encoding="utf-8"))["data"]

    new = run(REPO / "assertions" / "grounding.py", call)
    assert run(REPO / "assertions" / f"{file}.py", function) == new
    assert new["metadata"].get("outcome") != "unscored", new["reason"]


@pytest.mark.parametrize(
    ("value", "call"),
    [("file://assertions/grounding.py:verifier", "verifier"), ("file://assertions/verifier.py", "verifier"),
     ("file://assertions/grounding.py:judge", "judge"), ("file://assertions/judge.py:get_assert", "judge"),
     ("file://assertions/grounding.py:docs_qa", None)],
)  # fmt: skip
def test_rescore_regrades_either_path(value: str, call: str | None) -> None:
    """``rescore`` re-runs the verifier and the judge whichever Python path a row named."""
    from grounding_eval import rescore

    assert rescore._our_assertion({"type": "python", "value": value}) == call
    assert rescore._our_scoring("file://assertions/grounding.py:round3") == "round3"
    assert rescore._our_scoring("file://assertions/composite.py:round3") == "round3"
