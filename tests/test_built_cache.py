"""A value built from files is used again only while every file it read, and the folders they lie in, are
unchanged (grounding_eval/built_cache.py); otherwise it is built again, and a bad entry is never a value."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.built_cache import cached_build
from grounding_eval.data.conditions import render_prompt
from grounding_eval.data.dataset import load_dataset
from grounding_eval.data.recorded_answers import load_recorded_answers
from grounding_eval.errors import DataError
from grounding_eval.files import read_text
from grounding_eval.promptfoo import round_tests
from grounding_eval.user_cache import seal

REPO = Path(__file__).resolve().parents[1]


class Folder:
    """A folder of two files and a build that reads both through grounding_eval.files, counting builds."""

    def __init__(self, tmp: Path) -> None:
        self.root = tmp / "data"
        (self.root / "parts").mkdir(parents=True)
        (self.root / "top.txt").write_text("top", encoding="utf-8")
        (self.root / "parts" / "a.txt").write_text("a", encoding="utf-8")
        self.rule = tmp / "rule.py"
        self.rule.write_text("RULE = 1\n", encoding="utf-8")
        self.cache = tmp / "cache"
        self.builds = 0

    def build(self) -> dict[str, Any]:
        self.builds += 1
        parts = sorted(p.name for p in (self.root / "parts").iterdir())
        return {
            "top": read_text(self.root / "top.txt"),
            "parts": [read_text(self.root / "parts" / p) for p in parts],
        }

    def get(self, accept: Callable[[Any], bool] = lambda v: isinstance(v, dict)) -> Any:
        return cached_build(
            "test", ("data",), self.root, self.build, [self.rule], accept=accept, cache_dir=self.cache
        )

    def entries(self) -> list[Path]:
        return sorted(self.cache.glob("test-*.json"))


@pytest.fixture
def folder(tmp_path: Path) -> Folder:
    return Folder(tmp_path)


def test_an_unchanged_folder_is_built_once(folder: Folder) -> None:
    first = folder.get()
    assert first == {"top": "top", "parts": ["a"]} and folder.builds == 1
    assert folder.get() == first and folder.builds == 1
    (entry,) = folder.entries()
    assert sorted(_body(entry)["files"]) == sorted(
        str(p) for p in (folder.root / "top.txt", folder.root / "parts" / "a.txt")
    )


def _body(entry: Path) -> Any:
    """A sealed entry's body (grounding_eval.user_cache)."""
    return json.loads(json.loads(entry.read_text())["body"])


def _edit_read_file(f: Folder) -> None:
    (f.root / "parts" / "a.txt").write_text("A, edited", encoding="utf-8")


def _add_file_beside_a_read_one(f: Folder) -> None:
    (f.root / "parts" / "b.txt").write_text("b", encoding="utf-8")  # the build would now read it too


def _add_file_to_the_folder(f: Folder) -> None:
    (f.root / "new.txt").write_text("new", encoding="utf-8")


def _edit_rule(f: Folder) -> None:
    f.rule.write_text("RULE = 2\n", encoding="utf-8")


def _corrupt_entry(f: Folder) -> None:
    for entry in f.entries():
        entry.write_text("{not json", encoding="utf-8")


def _entry_of_another_shape(f: Folder) -> None:
    for entry in f.entries():  # sealed by this user, so only the shape check can refuse it
        name = json.loads(entry.read_text())["name"]
        text = seal("built", name, {**_body(entry), "value": ["not", "a", "mapping"]})
        assert text is not None
        entry.write_text(text, encoding="utf-8")


def _entry_edited_by_someone_else(f: Folder) -> None:
    for entry in f.entries():  # a value of one's own, the list of files emptied: not sealed by this user
        stored = json.loads(entry.read_text())
        body = {**_body(entry), "files": {}, "folders": {}, "value": {"top": "planted", "parts": []}}
        entry.write_text(json.dumps({**stored, "body": json.dumps(body)}), encoding="utf-8")


@pytest.mark.parametrize(
    "change",
    [_edit_read_file, _add_file_beside_a_read_one, _add_file_to_the_folder, _edit_rule, _corrupt_entry,
     _entry_of_another_shape, _entry_edited_by_someone_else],
)  # fmt: skip
def test_any_change_builds_again(folder: Folder, change: Callable[[Folder], None]) -> None:
    folder.get()
    change(folder)
    again = folder.get()
    assert folder.builds == 2
    assert again == folder.build()  # what a build now gives, not what was kept


def test_a_file_gone_is_the_builds_error_never_the_kept_value(folder: Folder) -> None:
    folder.get()
    (folder.root / "top.txt").unlink()
    with pytest.raises(DataError, match="file not found"):
        folder.get()


def test_a_cache_that_cannot_be_written_is_not_used(folder: Folder) -> None:
    folder.cache.write_text("a file where the folder would be", encoding="utf-8")
    assert folder.get() == folder.get() == {"top": "top", "parts": ["a"]}
    assert folder.builds == 2


def test_a_value_that_is_not_json_is_not_kept(folder: Folder) -> None:
    value = cached_build(
        "test", ("x",), folder.root, lambda: {"s": {1, 2}}, [], accept=bool, cache_dir=folder.cache
    )
    assert value == {"s": {1, 2}} and not folder.entries()


def test_a_rows_source_vars_are_kept_until_its_articles_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The blocks a type: python entry rebuilds for a lifted row: from the cache while the dataset is
    unchanged, built again (and equal to a fresh generation) once an article it shows changes."""
    shutil.copytree(REPO / "datasets" / "sample", tmp_path / "study" / "sample")
    monkeypatch.chdir(tmp_path / "study")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))  # the user's, never the study's
    blocks = round_tests._blocks.__wrapped__  # (past the in-process memo: a fresh process per row)
    first = blocks("sample", "hr-mi-deposit-01")
    assert first["jkb_full_content"] and first["jkb_directory"]
    assert list((tmp_path / "user-cache" / "grounding-eval").glob("source-vars-*.json"))
    assert not (tmp_path / "study" / ".cache").exists()

    built = []
    original = round_tests._built_blocks
    monkeypatch.setattr(round_tests, "_built_blocks", lambda *a: built.append(a) or original(*a))
    assert blocks("sample", "hr-mi-deposit-01") == first and not built

    stored = _body(next((tmp_path / "user-cache" / "grounding-eval").glob("source-vars-*.json")))
    article = next(Path(p) for p in stored["files"] if "/articles/" in p)
    article.write_text(article.read_text(encoding="utf-8") + "\nAn added sentence.\n", encoding="utf-8")
    round_tests._dataset.cache_clear()
    again = blocks("sample", "hr-mi-deposit-01")
    assert built and "An added sentence." in again["jkb_full_content"]
    fresh = {
        t["metadata"]["query_id"]: t
        for t in round_tests.generate_tests({"dataset": "sample", "round": "3"}, pack_root=REPO)
    }
    assert again["jkb_full_content"] == fresh["hr-mi-deposit-01"]["vars"]["jkb_full_content"]


_ENTRY_CALL = """
import importlib.util, json, os, sys
sys.path.insert(0, os.path.dirname(sys.argv[1]))  # as promptfoo's wrapper.py: import the file, call it
spec = importlib.util.spec_from_file_location("entry", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
output, context = json.loads(sys.stdin.read())
result = module.get_assert(output, context)
print(json.dumps({"result": result, "pydantic": "pydantic" in sys.modules}))
"""


@pytest.mark.parametrize("entry", ["verifier.py", "judge.py"])
def test_a_lifted_row_graded_in_a_fresh_process_does_not_load_the_dataset_again(
    tmp_path: Path, entry: str
) -> None:
    """A type: python entry given a row whose source vars the beforeAll hook lifted grades it as the row
    with them; from the second process on it reads the kept blocks, and pydantic (the dataset's validation,
    ~100 ms) is not imported."""
    (test,) = [
        t
        for t in round_tests.generate_tests(
            {"dataset": str(REPO / "datasets" / "sample"), "round": "3"}, pack_root=REPO
        )
        if t["metadata"]["query_id"] == "hr-mi-deposit-01"
    ]
    names = test["metadata"]["source_vars"]
    config = {"liveness": "offline"} if entry == "verifier.py" else {
        "rubric": "round3", "provider": f"replay:{REPO}/datasets/sample/judge_replies/round3.yaml"}  # fmt: skip
    sample = load_dataset(REPO / "datasets" / "sample")
    output = load_recorded_answers(REPO / "datasets" / "sample" / "recorded_answers.yaml")[
        ("hr-mi-deposit-01", "C1.5")
    ].answer
    prompt = render_prompt("C1.5", sample.item("hr-mi-deposit-01"), sample)  # the judge reads C1.5 from it

    def graded(vars_: dict[str, Any]) -> dict[str, Any]:
        context = {"vars": vars_, "test": {"vars": vars_, "metadata": test["metadata"]}, "config": config,
                   "prompt": prompt}  # fmt: skip
        done = subprocess.run([sys.executable, "-c", _ENTRY_CALL, str(REPO / "assertions" / entry)], cwd=tmp_path,
                              input=json.dumps([output, context]), capture_output=True, text=True, check=True)  # fmt: skip
        return json.loads(done.stdout)

    lifted = {k: v for k, v in test["vars"].items() if k not in names}
    whole = graded(test["vars"])
    first, second = graded(lifted), graded(lifted)
    assert [first["result"].get(k) for k in ("pass", "score", "reason")] == [
        whole["result"].get(k) for k in ("pass", "score", "reason")
    ]
    assert first["result"]["metadata"]["outcome"] in ("pass", "fail"), first["result"]["reason"]  # graded
    verdict = ("pass", "score", "reason", "namedScores")  # (the judge's record holds its time)
    assert [second["result"].get(k) for k in verdict] == [first["result"].get(k) for k in verdict]
    assert not second["pydantic"]


def test_a_rows_blocks_are_keyed_on_the_validating_and_rendering_libraries_versions() -> None:
    """pydantic's version is in pydantic/version.py (its __init__ only imports it), jinja2's in __init__.py:
    an upgrade of either changes the key."""
    rules = round_tests._block_rules()
    assert all(path.is_file() for path in rules)
    assert {(p.parent.name, p.name) for p in rules} >= {
        ("pydantic", "version.py"), ("jinja2", "__init__.py"), ("data", "conditions.py"), ("prompts", "jkb_full_content.j2")
    }  # fmt: skip
