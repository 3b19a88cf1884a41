"""The one reader of promptfoo results files (issue 19): every consumer refuses a hostile file the same way.

The golden table ``tests/golden/results_hostile.yaml`` holds the hostile files (a duplicated ``results``
key, NaN, 1e308, 10**400, deep nesting, wrong types); each is run against every consumer — ``report``
(text and ``--json``), ``rescore``, ``audit --results``, ``calibrate``'s reader (``load_results``) and the
whole-document reader ``share`` uses (``read_results``) — and must be refused in one line naming the file,
or accepted, as the table says. The streaming reader is checked against ``json.loads`` on documents cut
at every chunk boundary.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import event, given, settings
from hypothesis import strategies as st

import grounding_eval.results_file as results_file
from grounding_eval.analysis.summary import load_results
from grounding_eval.cli import main
from grounding_eval.errors import DataError
from grounding_eval.files import FileKind
from grounding_eval.results_file import MAX_DEPTH, read_results, stream_results

GOLDEN = Path(__file__).resolve().parent / "golden" / "results_hostile.yaml"
CASES: list[dict[str, Any]] = yaml.safe_load(GOLDEN.read_text(encoding="utf-8"))["cases"]
CONSUMERS = ("report", "report --json", "rescore", "audit", "calibrate", "share", "provenance")


def base_row(number: int) -> dict[str, Any]:
    """A valid Round 3 row as promptfoo writes it (a verifier and a judge component; no assertion of this
    pack to grade again, so ``rescore`` keeps it as its assertions make it)."""
    return {
        "id": f"r{number}",
        "testIdx": number - 1,
        "promptIdx": 0,
        "success": True,
        "score": 0.8,
        "failureReason": 0,
        "namedScores": {"composite": 0.8, "deterministic_verifier_score": 1, "round3.llm_judge_score": 0.8},
        "prompt": {"raw": "Q", "label": "C0: prompts/c0.txt"},
        "provider": {"id": "file://providers/replay.py:call_api", "label": "recorded"},
        "vars": {"query_id": f"q{number}", "question": "Can my landlord lock me out?"},
        "response": {"output": "No. Call Legal Aid Chicago at (312) 341-1070."},
        "testCase": {"metadata": {"round": "3", "rubric": "round3"}},
        "gradingResult": {
            "pass": True,
            "score": 0.8,
            "reason": "ok",
            "componentResults": [
                {"pass": True, "score": 1, "reason": "PASS verifier",
                 "assertion": {"type": "javascript", "value": "file://assertions/grounding.cjs:verifier"},
                 "metadata": {"verifier": {"urls": [], "hard_failures": []}}},
                {"pass": True, "score": 0.8, "reason": "PASS judge",
                 "assertion": {"type": "javascript", "value": "file://assertions/grounding.cjs:judge"},
                 "metadata": {"judge": {"rubric_id": "round3", "status": "scored", "verdicts": {}}}},
            ],
        },
    }  # fmt: skip


def _expand(text: str) -> str:
    """``{c*N}`` is the character c written N times."""
    return re.sub(r"\{(.)\*(\d+)\}", lambda m: m.group(1) * int(m.group(2)), text)


def _patched(number: int, patch: dict[str, str]) -> str:
    """The base row as JSON text, each dotted path's value replaced by the raw JSON text given."""
    row = base_row(number)
    for n, path in enumerate(patch):
        *parents, last = path.split(".")
        target: Any = row
        for key in parents:
            target = target[int(key)] if isinstance(target, list) else target[key]
        target[int(last) if isinstance(target, list) else last] = f"@@{n}@@"
    text = json.dumps(row, ensure_ascii=False)
    for n, value in enumerate(patch.values()):
        text = text.replace(f'"@@{n}@@"', _expand(str(value)))
    return text


def build(case: dict[str, Any], path: Path) -> Path:
    """The case's results file at ``path``."""
    if "document" in case:
        text = _expand(case["document"]).replace("{ROW}", json.dumps(base_row(1)))
    else:
        rows = ", ".join(_patched(n, patch) for n, patch in enumerate(case["rows"], 1))
        text = '{"evalId": "eval-1", "results": {"version": 3, "results": [' + rows + "]}}"
    path.write_text(text, encoding="utf-8")
    return path


def consume(consumer: str, path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str | None:
    """Run ``consumer`` on ``path``: None when it accepted the file, else its one-line problem."""
    if consumer in ("calibrate", "share"):
        try:
            (load_results if consumer == "calibrate" else read_results)(path)
        except DataError as exc:
            return exc.one_line()
        return None
    argv = {
        "report": ["report", str(path)],
        "report --json": ["report", str(path), "--json"],
        "rescore": ["rescore", str(path), "-o", str(tmp_path / "rescored.json"), "-j", "1"],
        "audit": ["audit", "--results", str(path), "r1"],
        "provenance": ["provenance", str(path)],
    }[consumer]
    status = main(argv)
    err = capsys.readouterr().err
    if consumer == "audit" and "names no audit record" in err:
        return None  # the file was read and the row found: it just has no judge audit to show
    if status == 0:
        return None
    assert status == 2 and err.count("\n") == 1, (status, err)
    prefix = "grounding-eval: error: "
    assert err.startswith(prefix), err
    return err[len(prefix) :].rstrip("\n")


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
@pytest.mark.parametrize("consumer", CONSUMERS)
def test_every_consumer_refuses_a_hostile_file_in_one_line(
    case: dict[str, Any], consumer: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = build(case, tmp_path / "results.json")
    refused_by = case.get("refused_by") or ["report", "rescore", "audit", "calibrate", "share", "provenance"]
    problem = consume(consumer, path, tmp_path, capsys)
    if consumer.split()[0] in refused_by:
        assert problem == f"{path}: {case['error']}"
        assert not (tmp_path / "rescored.json").exists()
    else:
        assert problem is None


class TestReadResults:
    def test_the_base_row_is_read_by_every_consumer(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """The control: the hostile cases' base row is an ordinary row."""
        path = build({"rows": [{}, {}]}, tmp_path / "results.json")
        assert [consume(c, path, tmp_path, capsys) for c in CONSUMERS] == [None] * len(CONSUMERS)
        assert len(read_results(path)["results"]["results"]) == 2

    def test_nesting_at_the_limit_is_read(self, tmp_path: Path) -> None:
        # The row is level 1, vars level 2, so MAX_DEPTH - 2 lists inside it reach the limit exactly.
        deep = "[" * (MAX_DEPTH - 2) + "]" * (MAX_DEPTH - 2)
        path = build({"rows": [{"vars.deep": deep}]}, tmp_path / "results.json")
        assert read_results(path)["results"]["results"][0]["vars"]["deep"] is not None
        path = build({"rows": [{"vars.deep": "[" + deep + "]"}]}, tmp_path / "results.json")
        with pytest.raises(DataError, match=f"nested deeper than {MAX_DEPTH} levels"):
            read_results(path)

    def test_lone_surrogates_become_replacement_characters(self, tmp_path: Path) -> None:
        """promptfoo writes ``\\ud83d`` (half an emoji cut by a token limit) into results; a whole pair stays."""
        path = build({"rows": [{"response.output": r'"cut \ud83d here, whole \ud83d\ude00"',
                                "provider.label": r'"m\udc00"'}]}, tmp_path / "results.json")  # fmt: skip
        row = read_results(path)["results"]["results"][0]
        assert row["response"]["output"] == "cut \ufffd here, whole 😀"
        assert row["provider"]["label"] == "m\ufffd"
        json.dumps(row, ensure_ascii=False).encode("utf-8")

    def test_the_whole_document_keeps_every_field_in_order(self, tmp_path: Path) -> None:
        doc = {"evalId": "e", "results": {"version": 3, "results": [base_row(1)], "stats": {"successes": 1}},
               "config": {"description": "d"}, "shareableUrl": None}  # fmt: skip
        path = tmp_path / "results.json"
        path.write_text(json.dumps(doc), encoding="utf-8")
        assert json.dumps(read_results(path)) == json.dumps(doc)

    def test_streaming_keeps_only_what_the_row_function_returns(self, tmp_path: Path) -> None:
        path = build({"rows": [{}, {}, {}]}, tmp_path / "results.json")
        kept, document = stream_results(path, lambda raw, number: (number, raw["id"]))
        assert kept == [(1, "r1"), (2, "r2"), (3, "r3")]
        assert document == {"evalId": "eval-1", "results": {"version": 3, "results": []}}

    def test_the_size_limit_is_checked_before_reading(self, tmp_path: Path) -> None:
        path = build({"rows": [{}]}, tmp_path / "results.json")
        small = FileKind("promptfoo results file", 100)
        with pytest.raises(DataError, match="a promptfoo results file may be at most 100 bytes"):
            stream_results(path, lambda raw, number: None, kind=small)

    def test_a_syntax_error_is_reported_where_it_is_without_reading_on(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Only a value cut by a chunk's end makes the reader read more: the error at the file's start is
        reported as such (reading on would have reached the byte that is not UTF-8, megabytes later)."""
        monkeypatch.setattr(results_file, "_CHUNK", 4096)
        path = tmp_path / "results.json"
        path.write_bytes(b'{"results": {"results": [{"a": 1 x}, ' + b'{"b": 2}, ' * 100_000 + b'"\xff"]}}')
        with pytest.raises(
            DataError, match=r"line 1: row 1 of results.results: not valid JSON \(Expecting ',' delimiter\)"
        ):
            read_results(path)

    def test_a_fifo_is_refused_without_blocking(self, tmp_path: Path) -> None:
        fifo = tmp_path / "results.json"
        import os

        os.mkfifo(fifo)
        with pytest.raises(DataError, match="is a named pipe"):
            read_results(fifo)


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(10**20), 10**20) | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)  # fmt: skip


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(  # each row's success a boolean, as the reader requires
        st.tuples(st.dictionaries(st.text(max_size=8), _JSON, max_size=5), st.booleans()).map(
            lambda pair: {**pair[0], "success": pair[1]}
        ),
        max_size=6,
    ),
    head=st.dictionaries(st.sampled_from(["evalId", "config", "metadata"]), _JSON, max_size=3),
    chunk=st.integers(1, 64),
    indent=st.sampled_from([None, 1, 2]),
)
def test_streaming_in_any_chunk_size_reads_what_json_reads(
    rows: list[dict[str, Any]], head: dict[str, Any], chunk: int, indent: int | None, tmp_path_factory: Any
) -> None:
    """Cut anywhere (a chunk of 1 character splits every number, string and escape), the reader returns
    exactly what ``json.loads`` does."""
    document = {**head, "results": {"version": 3, "results": rows}}
    text = json.dumps(document, indent=indent, ensure_ascii=bool(chunk % 2))
    path = tmp_path_factory.mktemp("stream") / "results.json"
    path.write_text(text, encoding="utf-8")
    saved = results_file._CHUNK
    results_file._CHUNK = chunk
    try:
        read = read_results(path)
    finally:
        results_file._CHUNK = saved
    event(f"chunks: {'one' if chunk >= len(text) else 'several'}")
    event(f"rows: {min(len(rows), 3)}")
    assert read == json.loads(text)
