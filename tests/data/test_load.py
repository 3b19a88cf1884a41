"""Dataset formats: golden valid files load; each invalid file fails with exactly one line."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from grounding_eval.data.dataset import load_dataset
from grounding_eval.data.load import iter_rows, load_high_risk, load_index, load_queries
from grounding_eval.data.records import HighRiskItem, IndexRecord, Query
from grounding_eval.errors import DataError

REPO = Path(__file__).resolve().parents[2]
TINY = REPO / "tests" / "fixtures" / "data" / "tiny"
SAMPLE = REPO / "datasets" / "sample"

QUERY = {
    "id": "q1",
    "jurisdiction": "IL",
    "topic": "eviction",
    "question": "Can they evict me?",
    "tags": ["a"],
}
HIGH_RISK = {**QUERY, "required_clarifying_questions": ["Is there a court order?"], "failure_modes": ["Says to break in"],
             "risk_tier": "critical", "sme_variables": ["court order"]}  # fmt: skip
RECORD = {
    "id": "r1",
    "state": "US",
    "title": "T",
    "url": "https://example.org/a",
    "description": "D",
    "organization": "O",
}


def _jsonl(tmp_path: Path, rows: list[Any], name: str = "data.jsonl") -> Path:
    path = tmp_path / name
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


class TestGoldenFiles:
    """The shipped sample and the tiny test dataset are valid, in every supported format."""

    def test_sample_dataset(self) -> None:
        dataset = load_dataset(SAMPLE)
        assert len(dataset.queries) >= 30 and len(dataset.high_risk) == 8
        assert len(dataset.index) >= 40 and len(dataset.articles) >= 6
        assert {q.jurisdiction for q in dataset.queries} == {"IL", "TX", "MI", "OH", "OR", "WV"}
        tags = {t for q in dataset.queries for t in q.tags}
        assert {"il-eviction", "six-state", "il-high-stakes"} <= tags
        assert {h.risk_tier for h in dataset.high_risk} == {"critical", "high", "moderate"}

    def test_tiny_dataset_csv_index(self) -> None:
        dataset = load_dataset(TINY)
        assert dataset.index["tiny-repairs"].topics == ("repairs", "heat")
        assert set(dataset.articles) == {"tiny-repairs", "tiny-notice"}
        assert dataset.articles["tiny-notice"].record.url == "https://example.org/tiny/notice"

    def test_same_records_from_yaml_csv_jsonl(self, tmp_path: Path) -> None:
        """The three formats of one file load to identical records."""
        (tmp_path / "q.yaml").write_text(yaml.safe_dump([QUERY]), encoding="utf-8")
        (tmp_path / "q.csv").write_text(
            "id,jurisdiction,topic,question,tags\nq1,IL,eviction,Can they evict me?,a\n", encoding="utf-8"
        )
        loaded = [
            load_queries(p)
            for p in (_jsonl(tmp_path, [QUERY], "q.jsonl"), tmp_path / "q.yaml", tmp_path / "q.csv")
        ]
        assert (
            loaded[0]
            == loaded[1]
            == loaded[2]
            == [Query("q1", "IL", "eviction", "Can they evict me?", ("a",))]
        )


def _case(kind: str, rows: list[Any], message: str, *, id: str) -> Any:
    return pytest.param(kind, rows, message, id=id)


INVALID = [
    _case("queries", [{k: v for k, v in QUERY.items() if k != "question"}], "line 1 (id 'q1'): field 'question' is missing", id="q-missing-field"),
    _case("queries", [{**QUERY, "jurisdiction": "ZZ"}], "line 1 (id 'q1'): field 'jurisdiction': unknown state code 'ZZ'", id="q-bad-state"),
    _case("queries", [{**QUERY, "jurisdiction": "US"}], "line 1 (id 'q1'): field 'jurisdiction': unknown state code 'US'", id="q-national-user"),
    _case("queries", [QUERY, QUERY], "line 2 (id 'q1'): field 'id' duplicates line 1", id="q-duplicate-id"),
    _case("queries", [{**QUERY, "tags": "a"}], None, id="q-tags-string-ok"),
    _case("queries", [{**QUERY, "tags": [1]}], "line 1 (id 'q1'): field 'tags': must be a list of non-empty text values", id="q-tags-numbers"),
    _case("queries", [{**QUERY, "id": "has space"}], "line 1 (id 'has space'): field 'id': 'has space' is not an id (no spaces or slashes)", id="q-bad-id"),
    _case("queries", [{**QUERY, "colour": "red"}], "line 1 (id 'q1'): unknown field(s) colour (allowed: id, jurisdiction, topic, question, tags, article_ids)", id="q-unknown-field"),
    _case("queries", [{**QUERY, "question": "  "}], "line 1 (id 'q1'): field 'question': must be non-empty text", id="q-blank"),
    _case("queries", [[1, 2]], "line 1: expected a JSON object", id="q-not-object"),
    _case("high_risk", [{**HIGH_RISK, "risk_tier": "extreme"}], "line 1 (id 'q1'): field 'risk_tier': 'extreme' is not one of critical, high, moderate", id="hr-bad-tier"),
    _case("high_risk", [{**HIGH_RISK, "failure_modes": []}], "line 1 (id 'q1'): field 'failure_modes': must list at least one value", id="hr-empty-list"),
    _case("high_risk", [{k: v for k, v in HIGH_RISK.items() if k != "sme_variables"}], "line 1 (id 'q1'): field 'sme_variables' is missing", id="hr-missing"),
    _case("index", [{**RECORD, "url": "example.org/a"}], "line 1 (id 'r1'): field 'url': 'example.org/a' is not an http(s) URL", id="ix-bad-url"),
    _case("index", [{**RECORD, "state": "Texas"}], None, id="ix-state-name-ok"),
    _case("index", [{**RECORD, "state": "XX"}], "line 1 (id 'r1'): field 'state': unknown state code 'XX'", id="ix-bad-state"),
    _case("index", [{**RECORD, "description": "x" * 401}], "line 1 (id 'r1'): field 'description': is 401 characters; a directory description is about 200 (at most 400)", id="ix-long-description"),
    _case("index", [{k: v for k, v in RECORD.items() if k != "organization"}], "line 1 (id 'r1'): field 'organization' is missing", id="ix-missing"),
]  # fmt: skip
LOADERS = {"queries": load_queries, "high_risk": load_high_risk, "index": load_index}


@pytest.mark.parametrize(("kind", "rows", "message"), INVALID)
def test_invalid_rows(tmp_path: Path, kind: str, rows: list[Any], message: str | None) -> None:
    """Each invalid file fails with ``<file>: <record>: <field>: <problem>``; valid variants load."""
    path = _jsonl(tmp_path, rows)
    if message is None:
        assert LOADERS[kind](path)
        return
    with pytest.raises(DataError) as info:
        LOADERS[kind](path)
    assert str(info.value) == f"{path}: {message}"


_Q = "id,jurisdiction,topic,question\n"
_LONG = "x" * 131_073  # one past the csv module's cell limit
_DEEP = "[" * 100_000 + "]" * 100_000


def _file(name: str, content: str, message: str, *, id: str) -> Any:
    return pytest.param(name, content, message, id=id)


# Ordinary mistakes and hostile files side by side: each is one line naming the file, the record and
# the problem. Before issue 8, the hostile rows (duplicates, deep nesting, long cells, bad quoting,
# NaN, long values) were accepted silently or raised a traceback.
INVALID_FILES = [
    _file("q.jsonl", '{"id": "q1",\n', "line 1: not valid JSON (Expecting property name enclosed in double quotes)", id="jsonl-truncated"),
    _file("q.txt", "x", "unknown format: use .jsonl, .csv, .yaml, .yml or .json", id="unknown-format"),
    _file("q.yaml", "id: q1\n", "expected a list of records", id="yaml-not-list"),
    _file("q.csv", "id,jurisdiction\nq1,IL,extra\n", "line 2: more cells than header columns", id="csv-extra-cell"),
    # Duplicate keys: JSON and YAML parsers keep the last value silently.
    _file("q.jsonl", '{"id": "q1", "jurisdiction": "IL", "jurisdiction": "TX", "topic": "t", "question": "q"}\n',
          "line 1: duplicate key 'jurisdiction' in one object", id="jsonl-duplicate-key"),
    _file("q.json", '[{"id": "q1", "jurisdiction": "IL", "topic": "t", "question": "q"}, {"id": "q2", "id": "q3"}]',
          "record 2: duplicate key 'id' in one object", id="json-duplicate-key"),
    _file("q.yaml", "- id: q1\n  jurisdiction: IL\n  topic: t\n  question: q\n  topic: u\n",
          "line 5: duplicate key 'topic' (first at line 3)", id="yaml-duplicate-key"),
    _file("q.csv", "id,jurisdiction,topic,question,topic\nq1,IL,t,q,u\n", "line 1: the header names column 'topic' twice",
          id="csv-duplicate-header"),
    # An unterminated quote swallows every later line into one cell unless refused.
    _file("q.csv", _Q + 'q1,IL,t,"Can they\nq2,IL,t,evict me?\n',
          'line 2: a quoted cell is never closed (its opening " has no closing " before the end of the file)',
          id="csv-unterminated-quote"),
    _file("q.csv", _Q + "q1,IL,t,q\nq2,IL,\"t\"x,q\n", "line 3: not valid CSV (',' expected after '\"')", id="csv-text-after-quote"),
    _file("q.csv", _Q + f"q1,IL,t,{_LONG}\n", "line 2: a cell is longer than 131,072 characters", id="csv-cell-too-long"),
    # Deep nesting: RecursionError before.
    _file("q.jsonl", _DEEP + "\n", "line 1: not readable: nested too deeply", id="jsonl-deep"),
    _file("q.json", _DEEP, "not readable: nested too deeply", id="json-deep"),
    _file("q.yaml", "[" * 5000 + "]" * 5000, "malformed YAML at line 1: exceeded maximum nesting depth", id="yaml-deep"),
    # What json/yaml accept but is not data, or raise ValueError for.
    _file("q.jsonl", '{"id": NaN}\n', "line 1: NaN is not a JSON number", id="jsonl-nan"),
    _file("q.jsonl", '{"id": ' + "9" * 5000 + "}\n", "line 1: a number of 5,000 digits is too long", id="jsonl-huge-int"),
    _file("q.yaml", "- id: q1\n  topic: 2024-13-45\n", "malformed YAML at line 2: not a valid timestamp value", id="yaml-bad-date"),
    # Values are quoted clipped to 40 characters, control characters escaped.
    _file("q.jsonl", json.dumps({"id": "a" * 100, "jurisdiction": "IL", "topic": "t", "question": "q", "x" * 50: 1}) + "\n",
          f"line 1 (id '{'a' * 40}…'): unknown field(s) '{'x' * 40}…' (allowed: id, jurisdiction, topic, question, tags, article_ids)", id="long-id-and-field-clipped"),
    _file("q.jsonl", json.dumps({"id": "a b\x1b[31m" + "c" * 60, "jurisdiction": "IL", "topic": "t", "question": "q"}) + "\n",
          "line 1 (id 'a b\\x1b[31mcccccccccccccccccccccccccccccccc…'): field 'id': 'a b\\x1b[31mcccccccccccccccccccccccccccccccc…' "
          "is not an id (no spaces or slashes)", id="control-chars-escaped"),
    _file("q.jsonl", json.dumps({"id": "q1", "jurisdiction": "Z" * 500, "topic": "t", "question": "q"}) + "\n",
          f"line 1 (id 'q1'): field 'jurisdiction': unknown state code '{'Z' * 40}…'", id="long-state-clipped"),
]  # fmt: skip


@pytest.mark.parametrize(("name", "content", "message"), INVALID_FILES)
def test_invalid_files(tmp_path: Path, name: str, content: str, message: str) -> None:
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataError) as info:
        load_queries(path)
    assert str(info.value) == f"{path}: {message}"


def test_yaml_merge_keys_may_be_overridden(tmp_path: Path) -> None:
    """``<<: *anchor`` then a key of its own is YAML's override, not a duplicate."""
    path = tmp_path / "q.yaml"
    path.write_text(
        "- &base {id: q1, jurisdiction: IL, topic: t, question: q}\n- <<: *base\n  id: q2\n", encoding="utf-8"
    )
    assert [q.id for q in load_queries(path)] == ["q1", "q2"]


def test_csv_quoted_newlines_and_trailing_empty_columns_still_load(tmp_path: Path) -> None:
    """Strict CSV refuses bad quoting only: a closed quoted cell may span lines; records start where they start."""
    path = tmp_path / "q.csv"
    path.write_text(
        _Q.replace("\n", ",,\n") + 'q1,IL,t,"line one\nline two",,\n\nq2,IL,t,x,,\n', encoding="utf-8"
    )
    assert [where for where, _ in iter_rows(path)] == ["line 2", "line 5"]
    assert load_queries(path)[0].question == "line one\nline two"


class TestDatasetCrossChecks:
    """A dataset folder is checked as a whole."""

    def _folder(self, tmp_path: Path, queries: list[Any], articles: dict[str, str]) -> Path:
        _jsonl(tmp_path, queries, "queries.jsonl")
        _jsonl(tmp_path, [RECORD], "jkb_index.jsonl")
        (tmp_path / "articles").mkdir()
        for name, text in articles.items():
            (tmp_path / "articles" / name).write_text(text, encoding="utf-8")
        return tmp_path

    def test_article_not_in_index(self, tmp_path: Path) -> None:
        root = self._folder(tmp_path, [QUERY], {"r2.txt": "text"})
        with pytest.raises(DataError) as info:
            load_dataset(root)
        assert (
            str(info.value)
            == f"{root / 'articles' / 'r2.txt'}: article id 'r2' is not in the index {root / 'jkb_index.jsonl'}"
        )

    def test_query_article_id_not_in_index(self, tmp_path: Path) -> None:
        root = self._folder(tmp_path, [{**QUERY, "article_ids": ["nope"]}], {})
        with pytest.raises(DataError) as info:
            load_dataset(root)
        assert str(info.value) == (f"{root / 'queries.jsonl'}: id 'q1': field 'article_ids': 'nope' is not in the index "
                                   f"{root / 'jkb_index.jsonl'}")  # fmt: skip

    def test_id_in_both_files(self, tmp_path: Path) -> None:
        root = self._folder(tmp_path, [QUERY], {})
        _jsonl(tmp_path, [HIGH_RISK], "high_risk.jsonl")
        with pytest.raises(DataError) as info:
            load_dataset(root)
        assert (
            str(info.value)
            == f"{root / 'high_risk.jsonl'}: id 'q1': field 'id': also used in {root / 'queries.jsonl'}"
        )

    def test_empty_article(self, tmp_path: Path) -> None:
        root = self._folder(tmp_path, [QUERY], {"r1.md": "  \n"})
        with pytest.raises(DataError, match=r"r1\.md: article text is empty$"):
            load_dataset(root)

    def test_two_index_files(self, tmp_path: Path) -> None:
        root = self._folder(tmp_path, [QUERY], {})
        (root / "jkb_index.csv").write_text("id\n", encoding="utf-8")
        with pytest.raises(DataError, match=r"both jkb_index\.jsonl and jkb_index\.csv exist"):
            load_dataset(root)

    def test_missing_folder(self, tmp_path: Path) -> None:
        with pytest.raises(DataError, match=r"dataset folder not found$"):
            load_dataset(tmp_path / "nope")


_TEXT = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=40
).filter(lambda s: s.strip() == s and s.strip() and ";" not in s)
_IDENT = st.from_regex(r"[a-z][a-z0-9-]{0,15}", fullmatch=True)
_STATES = st.sampled_from(["IL", "TX", "MI", "OH", "OR", "WV"])


@st.composite
def _queries(draw: st.DrawFn) -> list[Query]:
    ids = draw(st.lists(_IDENT, min_size=1, max_size=5, unique=True))
    return [
        Query(
            i,
            draw(_STATES),
            draw(_TEXT),
            " ".join(draw(_TEXT).split()),
            tuple(draw(st.lists(_TEXT, max_size=3))),
        )
        for i in ids
    ]


def _as_row(q: Query) -> dict[str, Any]:
    return {
        "id": q.id,
        "jurisdiction": q.jurisdiction,
        "topic": q.topic,
        "question": q.question,
        "tags": list(q.tags),
    }


class TestRoundTrips:
    """Writing records in any supported format and loading them gives the same records."""

    @settings(max_examples=60, deadline=None)
    @given(_queries(), st.sampled_from(["jsonl", "yaml", "json", "csv"]))
    def test_queries(self, queries: list[Query], fmt: str) -> None:
        import tempfile

        queries = [
            Query(q.id, q.jurisdiction, " ".join(q.topic.split()), q.question, q.tags) for q in queries
        ]
        rows = [_as_row(q) for q in queries]
        with tempfile.TemporaryDirectory() as tmp:
            path = Path(tmp) / f"q.{fmt}"
            if fmt == "jsonl":
                path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
            elif fmt == "csv":
                out = io.StringIO()
                writer = csv.DictWriter(out, fieldnames=list(rows[0]))
                writer.writeheader()
                writer.writerows({**r, "tags": "; ".join(r["tags"])} for r in rows)
                path.write_text(out.getvalue(), encoding="utf-8")
            else:
                path.write_text(
                    json.dumps(rows) if fmt == "json" else yaml.safe_dump(rows, allow_unicode=True),
                    encoding="utf-8",
                )
            assert load_queries(path) == queries

    @settings(max_examples=40, deadline=None)
    @given(
        st.lists(_IDENT, min_size=1, max_size=4, unique=True),
        st.sampled_from(["critical", "high", "moderate"]),
    )
    def test_high_risk_and_index(self, ids: list[str], tier: str) -> None:
        import tempfile

        items = [HighRiskItem(i, "OH", "t", "q?", ("x",), (), ("c?",), ("f",), tier, ("v",)) for i in ids]
        records = [IndexRecord(i, "US", "T", f"https://example.org/{i}", "D", "O", ("a", "b")) for i in ids]
        with tempfile.TemporaryDirectory() as tmp:
            hr = Path(tmp) / "h.jsonl"
            hr.write_text("".join(json.dumps({**_as_row(i), "required_clarifying_questions": ["c?"], "failure_modes": ["f"],
                                               "risk_tier": tier, "sme_variables": ["v"]}) + "\n" for i in items), encoding="utf-8")  # fmt: skip
            ix = Path(tmp) / "i.yaml"
            ix.write_text(yaml.safe_dump([{"id": r.id, "state": r.state, "title": r.title, "url": r.url, "description": r.description,
                                           "organization": r.organization, "topics": list(r.topics)} for r in records]), encoding="utf-8")  # fmt: skip
            assert load_high_risk(hr) == items
            assert list(load_index(ix).values()) == records
