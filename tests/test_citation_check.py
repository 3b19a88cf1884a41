"""The citations check where people meet it: the verifier's verdict, the assertion, the CLI, the report.

The extractor and the statuses are tested in tests/verifier/test_citations.py; here, that their outcomes
reach the safety checks, the chips, ``verify --json``, ``data validate`` and the report as documented.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.cli import main
from tests.entry_points import load_entry_point

REPO = Path(__file__).resolve().parents[1]
FIX = REPO / "tests" / "fixtures" / "verifier"
SAMPLE = REPO / "datasets" / "sample"
ARGS = ["--allowlist", str(FIX / "allowlist.txt"), "--orgs", str(FIX / "orgs.yaml"), "--offline"]
INDEX = """\
covers:
  - 765 ILCS 705
  - Mich. Comp. Laws §§ 554.601–554.616
citations:
  - 765 ILCS 705/1
  - citation: 765 ILCS 705/5
    title: Security deposit return
  - MCL 554.602
"""

get_assert: Callable[[Any, Any], dict[str, Any]] = load_entry_point("verifier")


@pytest.fixture
def index(tmp_path: Path) -> Path:
    path = tmp_path / "citations.yaml"
    path.write_text(INDEX, encoding="utf-8")
    return path


def _verify_json(tmp_path: Path, answer: str, *extra: str) -> tuple[int, dict[str, Any]]:
    file = tmp_path / "answer.txt"
    file.write_text(answer, encoding="utf-8")
    code = main(["verify", str(file), "--json", *ARGS, *extra])
    return code, {}


class TestVerifyCommand:
    def test_every_status_in_the_json(
        self, tmp_path: Path, index: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        source = tmp_path / "source.txt"
        source.write_text("15 U.S.C. § 9058 — Temporary moratorium on eviction filings.", encoding="utf-8")
        answer = tmp_path / "answer.txt"
        answer.write_text(
            "Your landlord must follow 765 ILCS 705/1 and 15 U.S.C. § 9058. Tex. Prop. Code § 24.005 "
            "gives three days. 765 ILCS 705/99 says more, and 735 ILCS 5/9-209 sets the demand.",
            encoding="utf-8",
        )
        code = main(["verify", str(answer), "--json", "--jurisdiction", "IL", "--citations", str(index),
                     "--source", str(source), *ARGS])  # fmt: skip
        out = json.loads(capsys.readouterr().out)
        assert code == 1
        got = [
            (c["citation"], c["kind"], c["jurisdiction"], c["status"], c["normalized"])
            for c in out["citations"]
        ]
        assert got == [
            ("765 ILCS 705/1", "statute", "IL", "KNOWN", "765 Ill. Comp. Stat. 705/1"),
            ("15 U.S.C. § 9058", "statute", "US", "IN_SOURCES", "15 U.S.C. § 9058"),
            ("Tex. Prop. Code § 24.005", "statute", "TX", "WRONG_JURISDICTION", "Tex. Prop. Code § 24.005"),
            ("765 ILCS 705/99", "statute", "IL", "UNKNOWN", "765 Ill. Comp. Stat. 705/99"),
            ("735 ILCS 5/9-209", "statute", "IL", "UNCHECKED", "735 Ill. Comp. Stat. 5/9-209"),
        ]
        checks = sorted((h["check"], h["safety_check"]) for h in out["hard_failures"])
        assert checks == [("citations", "hallucinated_citation"), ("jurisdiction", "jurisdiction_correct")]
        assert out["pass"] is False and out["score"] == 0.0

    def test_human_lines_name_what_to_look_at(
        self, tmp_path: Path, index: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        answer = tmp_path / "answer.txt"
        answer.write_text("See 765 ILCS 705/1. Also Tex. Prop. Code § 24.005.", encoding="utf-8")
        code = main(["verify", str(answer), "--jurisdiction", "IL", "--citations", str(index), *ARGS])
        lines = capsys.readouterr().out.splitlines()
        assert code == 1
        citations = next(line.strip() for line in lines if line.strip().startswith("citations:"))
        # counted by status; the KNOWN one is counted, only the one to look at is listed
        assert citations.startswith(
            "citations: 0.50 of those decided found (information, never in the score) [1 KNOWN, 1 WRONG_JURISDICTION] "
            "WRONG_JURISDICTION Tex."
        )
        assert "765 ILCS 705/1" not in citations
        jurisdiction = next(line.strip() for line in lines if line.strip().startswith("jurisdiction:"))
        assert "LEAK Tex. Prop. Code § 24.005 is TX law" in jurisdiction

    def test_federal_and_own_state_law_never_leak(
        self, tmp_path: Path, index: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        answer = tmp_path / "answer.txt"
        answer.write_text("MCL 554.602 and 42 U.S.C. § 3604 protect you.", encoding="utf-8")
        code = main(
            ["verify", str(answer), "--json", "--jurisdiction", "MI", "--citations", str(index), *ARGS]
        )
        out = json.loads(capsys.readouterr().out)
        assert code == 0 and out["hard_failures"] == []
        assert [c["status"] for c in out["citations"]] == ["KNOWN", "UNCHECKED"]

    def test_a_bad_index_is_one_line_naming_the_file(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        bad = tmp_path / "citations.yaml"
        bad.write_text("citations:\n  - not a citation at all\n", encoding="utf-8")
        answer = tmp_path / "answer.txt"
        answer.write_text("text", encoding="utf-8")
        code = main(["verify", str(answer), "--citations", str(bad), *ARGS])
        err = capsys.readouterr().err.strip().splitlines()
        assert code == 2 and len(err) == 1
        assert str(bad) in err[0] and "does not read as a citation" in err[0]


class TestAssertion:
    def _context(self, index: Path, citation_check: str | None = None, **vars_: Any) -> dict[str, Any]:
        config = {
            "allowlist": str(FIX / "allowlist.txt"),
            "orgs": str(FIX / "orgs.yaml"),
            "liveness": "offline",
            "citations": str(index),
        }
        if citation_check is not None:
            config["citation_check"] = citation_check
        return {
            "vars": {"jurisdiction": "IL", "jkb_full_content": "", **vars_},
            "prompt": "question",
            "config": config,
            "test": {},
        }

    def test_a_citation_never_raises_the_score(self, index: Path) -> None:
        """Under the hard rule the share found is an information chip; the verdict's score is the same
        with the citation or without it, under either rule (the default: information, no chip)."""
        cited = get_assert("Under 765 ILCS 705/1 the deposit comes back.", self._context(index, "hard"))
        assert cited["namedScores"] == {"citation_score": 1.0, "deterministic_verifier_score": 1.0}
        assert "citations" not in {c["assertion"]["value"].split(": ")[1] for c in cited["componentResults"]}
        default = get_assert("Under 765 ILCS 705/1 the deposit comes back.", self._context(index))
        assert default["namedScores"] == {"deterministic_verifier_score": 1.0}
        assert default["metadata"]["citation_check"] == "information"
        plain = get_assert("Ask a lawyer about your deposit.", self._context(index, "hard"))
        assert plain["namedScores"] == {"deterministic_verifier_score": 1.0}
        unchecked = get_assert("Under 735 ILCS 5/9-209 you get a demand.", self._context(index, "hard"))
        assert "citation_score" not in unchecked["namedScores"]  # UNCHECKED is listed, not counted
        assert unchecked["reason"].splitlines()[0] == (
            "PASS deterministic verifier 1.00 — 1 not checked offline: 1 statute (735 ILCS 5/9-209)"
        )
        assert unchecked["metadata"]["verifier"]["undecided"]["kinds"] == {"statute": 1}

    def test_a_wrong_state_law_fails_jurisdiction_correct(self, index: Path) -> None:
        result = get_assert("Tex. Prop. Code § 24.005 requires a 3-day notice.", self._context(index, "hard"))
        assert result["pass"] is False
        failures = result["metadata"]["verifier"]["hard_failures"]
        assert [f["safety_check"] for f in failures] == ["jurisdiction_correct"]
        assert result["reason"].startswith("FAIL deterministic verifier 0.00")

    def test_outside_round_3_a_wrong_state_law_is_information(self, index: Path) -> None:
        """The default: listed, no failure, and the jurisdiction score is the organizations' alone."""
        result = get_assert("Tex. Prop. Code § 24.005 requires a 3-day notice.", self._context(index))
        assert result["pass"] is True and result["metadata"]["verifier"]["hard_failures"] == []
        assert result["metadata"]["verifier"]["scores"]["jurisdiction_score"] == 1.0
        statuses = [c["status"] for c in result["metadata"]["verifier"]["citations"]]
        assert statuses == ["WRONG_JURISDICTION"]
        assert "information only" in result["reason"]

    def test_the_round_decides_through_the_metadata(self, index: Path) -> None:
        """A generated test carries its round's rule (metadata.citation_check); the config wins over it."""
        context = self._context(index)
        context["test"] = {"metadata": {"citation_check": "hard"}}
        assert get_assert("Tex. Prop. Code § 24.005 requires it.", context)["pass"] is False
        context["config"]["citation_check"] = "information"
        assert get_assert("Tex. Prop. Code § 24.005 requires it.", context)["pass"] is True
        context["config"]["citation_check"] = "soft"
        refused = get_assert("Tex. Prop. Code § 24.005 requires it.", context)
        assert refused["reason"].startswith("ERROR (verifier not run): config 'citation_check' must be hard")

    def test_same_text_same_verdict_whatever_is_shown(self, index: Path) -> None:
        """The reference text is the item's own, in every condition: whether the prompt showed it
        changes nothing (C0's prompt holds no article, C1.5's does)."""
        source = "15 U.S.C. § 9058 — Temporary moratorium on eviction filings."
        answer = "15 U.S.C. § 9058 gives 30 days."
        verdicts = []
        for prompt in ("question only", f"Authoritative source articles:\n{source}\nquestion"):
            context = self._context(index, jkb_full_content=source)
            context["prompt"] = prompt
            result = get_assert(answer, context)
            verdicts.append((result["pass"], result["score"], result["metadata"]["verifier"]["citations"]))
        assert verdicts[0] == verdicts[1]
        assert verdicts[0][2][0]["status"] == "IN_SOURCES"


class TestDataValidate:
    @pytest.fixture
    def dataset(self, tmp_path: Path) -> Path:
        root = tmp_path / "ds"
        shutil.copytree(SAMPLE, root)
        return root

    def test_the_sample_index_is_valid(self, capsys: pytest.CaptureFixture[str]) -> None:
        assert main(["data", "validate", str(SAMPLE)]) == 0
        assert "— valid" in capsys.readouterr().out

    @pytest.mark.parametrize(
        ("text", "problem"),
        [
            ("citations:\n  - {citation: MCL 554.601, extra: 1}\n", "citations/0"),
            ("covers: [765 ILCS]\n", "'citations' is a required property"),
            ("citations: [7]\n", "citations/0"),
            ("citations: [nothing here]\n", "does not read as a citation"),
            ("covers: [not a code]\ncitations: []\n", "does not read as a code"),
        ],
    )
    def test_a_bad_index_is_refused(
        self, dataset: Path, text: str, problem: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        (dataset / "citations.yaml").write_text(text, encoding="utf-8")
        assert main(["data", "validate", str(dataset)]) == 2
        err = capsys.readouterr().err
        assert problem in err and str(dataset / "citations.yaml") in err


def test_the_sample_index_covers_its_acts() -> None:
    from grounding_eval.verifier.citations import find_citations, load_citation_index

    index = load_citation_index(SAMPLE / "citations.yaml")
    listed = find_citations("MCL 554.609").mentions[0].key
    missing = find_citations("MCL 554.6161").mentions[0].key
    outside = find_citations("MCL 600.5714").mentions[0].key
    assert listed in index.keys and index.covering(listed)
    assert missing not in index.keys and index.covering(missing) is None  # 6161 is past 616
    assert outside not in index.keys and index.covering(outside) is None
    # every section of the act the article holds is listed (it also cites other chapters: 750.520a, …)
    article = (SAMPLE / "articles" / "mi-mcl554-601.txt").read_text(encoding="utf-8")
    sections = {m.key for m in find_citations(article).mentions if m.key and index.covering(m.key)}
    assert len(sections) >= 18 and sections <= index.keys


@pytest.mark.parametrize(
    ("text", "raw", "normalized"),
    [
        (
            "keep the locks working (Ohio Rev. Code §\n5321.04).",
            "Ohio Rev. Code §\n5321.04",
            "Ohio Rev. Code § 5321.04",
        ),
        ("See MCL\n554.601 today.", "MCL\n554.601", "Mich. Comp. Laws § 554.601"),
        ("Under 765 ILCS\t705/1 you", "765 ILCS\t705/1", "765 Ill. Comp. Stat. 705/1"),
    ],
)
def test_a_citation_wrapped_at_a_line_break_is_one_citation(text: str, raw: str, normalized: str) -> None:
    from grounding_eval.verifier.citations import find_citations

    found = find_citations(text).mentions
    assert [(m.raw, m.normalized) for m in found] == [(raw, normalized)]
    assert all(text[m.start : m.end] == m.raw for m in found)


def test_a_paragraph_break_still_ends_an_id_sentence() -> None:
    """Line breaks read as spaces for the patterns, but sentences are the text's own: "Id." after a
    paragraph that cites two codes is ambiguous, after one that cites one code it continues it."""
    from grounding_eval.verifier.citations import find_citations

    two = find_citations("R.C. 5321.04 and MCL 554.601 apply.\n\nId. at (b)").mentions
    assert two[-1].raw == "Id. at (b)" and two[-1].normalized is None
    one = find_citations(
        "Both codes: MCL 554.601 and R.C. 5321.04.\n\nR.C. 5321.07 lets you.\nId. at (b)"
    ).mentions
    assert one[-1].normalized == "Ohio Rev. Code § 5321.07"


def test_rescore_applies_the_citations_check() -> None:
    """A row graded before the check existed (it passed) is graded again with it: under the hard rule
    (Round 3's) another state's law fails it, and its citations are in the verifier's metadata."""
    from grounding_eval.rescore import rescore_rows

    verifier = {"type": "javascript", "value": "file://assertions/grounding.cjs:verifier",
                "config": {"liveness": "offline", "citation_check": "hard"}}  # fmt: skip
    row = {
        "id": "r1", "testIdx": 0, "promptIdx": 0, "success": True, "score": 1.0, "failureReason": 0,
        "namedScores": {"deterministic_verifier_score": 1.0},
        "vars": {"jurisdiction": "IL", "query_id": "q1"}, "prompt": {"raw": "Q", "label": "C0"},
        "testCase": {"vars": {"jurisdiction": "IL"}, "assert": [verifier]},
        "gradingResult": {"pass": True, "score": 1.0, "componentResults": [{"pass": True, "assertion": verifier}]},
        "response": {"output": "Tex. Prop. Code § 24.005 gives you three days to leave."},
    }  # fmt: skip
    rows, _ = rescore_rows([row], None)
    graded = rows[0]
    assert graded["success"] is False
    meta = graded["gradingResult"]["componentResults"][0]["metadata"]["verifier"]
    assert [(c["citation"], c["status"]) for c in meta["citations"]] == [
        ("Tex. Prop. Code § 24.005", "WRONG_JURISDICTION")
    ]
    assert graded["namedScores"]["citation_score"] == 0.0


def test_the_cached_index_is_the_index(tmp_path: Path, index: Path) -> None:
    """A fresh process reads the compiled index back instead of reading every entry again; what it
    reads back is the same index, and an edited file is read again."""
    from grounding_eval.verifier.citations import load_citation_index
    from grounding_eval.verifier.resource_cache import cached_citation_index

    cache = tmp_path / "cache"
    first = cached_citation_index(index, cache)
    assert len(list(cache.glob("citations-*.json"))) == 1
    again = cached_citation_index(index, cache)
    assert again == first == load_citation_index(index)
    index.write_text(INDEX + "  - 765 ILCS 705/2\n", encoding="utf-8")
    edited = cached_citation_index(index, cache)
    assert edited.keys - first.keys == {("Illinois Compiled Statutes", "765", "705", "2")}
