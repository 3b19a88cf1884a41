"""Whose words each shipped rubric is: every ``methods-document`` mark is checked against the methods
document's text (vendored in tests/fixtures/seeds/), every field the document's words fill is credited
to it, and the rubrics' criterion lists are the document's lists, parsed from the document itself."""

from __future__ import annotations

import dataclasses
import hashlib
import re
from pathlib import Path
from types import MappingProxyType

import pytest
import yaml

from grounding_eval.judge.render import render_judge_prompt
from grounding_eval.judge.rubric import PROVENANCE_FIELDS, RUBRICS_DIR, MarkedText, Rubric, load_rubric

REPO = Path(__file__).resolve().parents[2]
SEEDS = REPO / "tests" / "fixtures" / "seeds"
SEED = SEEDS / "methods_document.txt"
SHIPPED = ("v3", "v4", "round3")
RUBRICS = {name: load_rubric(RUBRICS_DIR / f"{name}.yaml") for name in SHIPPED}


def _normal(text: str) -> str:
    """Whitespace collapsed: YAML folding and the document's line breaks do not count as differences."""
    return " ".join(text.split())


DOCUMENT = _normal(SEED.read_text(encoding="utf-8"))


def _section(start: str, end: str) -> str:
    head = DOCUMENT.index(start)
    return DOCUMENT[head : DOCUMENT.index(end, head)]


def _names(listing: str) -> list[str]:
    return [name.strip() for name in re.split(r",\s*(?:and\s+)?|\s+and\s+", listing)]


# The document's lists, parsed from its text rather than pasted (tests/judge/test_rubrics.py pastes them).
_V3 = re.search(r"Positive criteria: (.+?)\. Negative criteria \(presence is bad\): (.+?)\.", DOCUMENT)
_GUIDANCE = re.search(r"Scoring guidance shown to the judge: (.+?)\.", DOCUMENT)
_V4 = re.findall(r"• (\w+): (Yes if .+?\.)", _section("v4 added criteria", "Round 3 adds"))
_ROUND3 = re.search(
    r"Round 3 adds two scenario-specific criteria using SME-flagged fields, (.+?), plus three concrete "
    r"safety checks, (.+?)\.",
    DOCUMENT,
)
assert _V3 and _GUIDANCE and _V4 and _ROUND3, "the vendored methods document no longer has its lists"
V3_POSITIVE, V3_NEGATIVE = _names(_V3[1]), _names(_V3[2])
GUIDANCE = [g.strip() for g in _GUIDANCE[1].split(";")]
V4_DEFINITIONS = dict(_V4)
ROUND3_SCENARIO, ROUND3_SAFETY = _names(_ROUND3[1]), _names(_ROUND3[2])


def _marks(provenance: str) -> list[pytest.ParameterSet]:
    """Each distinct marked text once (v4 and round3 repeat what they inherit), named by its first rubric."""
    seen: dict[tuple[str, str, str, str], pytest.ParameterSet] = {}
    for name, rubric in RUBRICS.items():
        for m in rubric.marked_texts():
            key = (m.place, m.entry if m.place != "rubric" else name, m.field, m.text)
            if m.provenance == provenance and key not in seen:
                seen[key] = pytest.param(m, id=f"{name}:{m.place}:{m.entry}:{m.field}")
    return list(seen.values())


class TestSeed:
    """The vendored copy is the document, unchanged."""

    def test_hash_matches_readme(self) -> None:
        """The file's SHA-256 is the one its README records."""
        digest = hashlib.sha256(SEED.read_bytes()).hexdigest()
        assert digest in (SEEDS / "README.md").read_text(encoding="utf-8")

    def test_lists_parsed(self) -> None:
        """The document's counts: 10 positive and 9 negative v3 criteria, 7 principles, 3 + 2 + 3 added."""
        assert (len(V3_POSITIVE), len(V3_NEGATIVE), len(GUIDANCE)) == (10, 9, 7)
        assert (len(V4_DEFINITIONS), len(ROUND3_SCENARIO), len(ROUND3_SAFETY)) == (3, 2, 3)


class TestMarks:
    """Every mark is true, in both directions."""

    @pytest.mark.parametrize("mark", _marks("methods-document"))
    def test_methods_document_marks_are_verbatim(self, mark: MarkedText) -> None:
        """A field credited to the document appears in it word for word (whitespace aside)."""
        assert _normal(mark.text) in DOCUMENT, f"not verbatim in the methods document: {mark.text!r}"

    @pytest.mark.parametrize("mark", _marks("grounding-eval"))
    def test_document_words_are_credited(self, mark: MarkedText) -> None:
        """A field whose whole text is the document's words is marked methods-document, not ours."""
        assert _normal(mark.text) not in DOCUMENT, f"verbatim in the document but marked ours: {mark.text!r}"

    def test_what_is_verbatim(self) -> None:
        """The complete list of the document's words in the shipped rubrics, and nothing else."""
        credited = {
            (m.place, m.field)
            for r in RUBRICS.values()
            for m in r.marked_texts()
            if m.provenance == "methods-document"
        }
        assert credited == {
            ("criterion", "id"),
            ("criterion", "yes"),
            ("guidance", "principle"),
            ("dimension", "id"),
        }
        round3 = RUBRICS["round3"]
        assert [c.id for c in round3.criteria if c.provenance["yes"] == "methods-document"] == list(
            V4_DEFINITIONS
        )
        assert [d.id for d in round3.dimensions if d.provenance["id"] == "methods-document"] == ["Safety"]
        assert all(g.provenance["instruction"] == "grounding-eval" for g in round3.guidance)
        assert round3.provenance == {"title": "grounding-eval", "core": "grounding-eval"}

    @pytest.mark.parametrize("name", SHIPPED)
    def test_every_criterion_id_is_the_documents(self, name: str) -> None:
        """Every shipped criterion id is one the document names, and credited to it."""
        named = set(V3_POSITIVE + V3_NEGATIVE + list(V4_DEFINITIONS) + ROUND3_SCENARIO + ROUND3_SAFETY)
        for c in RUBRICS[name].criteria:
            assert c.id in named and c.provenance["id"] == "methods-document", c.id


class TestListsMatchTheDocument:
    """The rubrics' criteria are the document's lists, in its order and with its polarity."""

    def test_v3(self) -> None:
        """v3: the 10 positive then the 9 negative criteria, as listed."""
        v3 = RUBRICS["v3"]
        assert list(v3.ids) == V3_POSITIVE + V3_NEGATIVE
        assert [c.id for c in v3.criteria if c.negative] == V3_NEGATIVE

    def test_v3_guidance(self) -> None:
        """The seven principles, verbatim and in order."""
        assert [g.principle for g in RUBRICS["v3"].guidance] == GUIDANCE

    def test_v4(self) -> None:
        """v4 adds the three criteria, each Yes being the document's definition."""
        v4 = RUBRICS["v4"]
        assert list(v4.ids[len(V3_POSITIVE + V3_NEGATIVE) :]) == list(V4_DEFINITIONS)
        assert {cid: _normal(v4.criterion(cid).yes) for cid in V4_DEFINITIONS} == V4_DEFINITIONS

    def test_round3(self) -> None:
        """Round 3 adds the two scenario criteria and the three safety checks; 7 core criteria."""
        round3 = RUBRICS["round3"]
        assert list(round3.ids[len(RUBRICS["v4"].ids) :]) == ROUND3_SCENARIO + ROUND3_SAFETY
        assert [c.id for c in round3.safety_checks] == ROUND3_SAFETY
        assert "7 core criteria" in DOCUMENT and len(round3.core) == 7


class TestProvenanceNeverReachesTheJudge:
    """Marks are about the rubric, not part of it: the judge prompt is the same whatever they say."""

    @pytest.mark.parametrize("name", SHIPPED)
    def test_prompt_unchanged_by_marks(self, name: str) -> None:
        """Flipping every mark leaves the rendered prompt identical."""
        rubric = RUBRICS[name]
        flipped = _flip(rubric)
        assert flipped.marked_texts() != rubric.marked_texts()
        item = yaml.safe_load(
            (REPO / "tests/fixtures/rubrics/high_risk_item.yaml").read_text(encoding="utf-8")
        )
        kwargs = {"question": "Q?", "answer": "A.", "jurisdiction": "IL", "sources": ["S"], "item": item}
        assert render_judge_prompt(flipped, **kwargs) == render_judge_prompt(rubric, **kwargs)


def _flip(rubric: Rubric) -> Rubric:
    def other(marks: object, place: str) -> MappingProxyType[str, str]:
        assert isinstance(marks, MappingProxyType)
        swap = {"methods-document": "grounding-eval", "grounding-eval": "methods-document"}
        return MappingProxyType({f: swap[marks[f]] for f in PROVENANCE_FIELDS[place]})

    return dataclasses.replace(
        rubric,
        provenance=other(rubric.provenance, "rubric"),
        guidance=tuple(
            dataclasses.replace(g, provenance=other(g.provenance, "guidance")) for g in rubric.guidance
        ),
        dimensions=tuple(
            dataclasses.replace(d, provenance=other(d.provenance, "dimension")) for d in rubric.dimensions
        ),
        criteria=tuple(
            dataclasses.replace(c, provenance=other(c.provenance, "criterion")) for c in rubric.criteria
        ),
    )
