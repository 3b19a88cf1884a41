"""The factual-accuracy rubric as data: ``rubrics/factual_accuracy.yaml`` loaded and checked at load time.

The seed fixes the verification results and their scores and gives a three-level severity list it tells
users to adapt; everything else (thresholds, risk levels, the constraints text) is ours and labelled so in
the file. Every problem is one ``file: problem`` line (:class:`~grounding_eval.errors.DataError`) raised
before the first judge call.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, Final

from grounding_eval.errors import DataError
from grounding_eval.files import read_yaml
from grounding_eval.resources import pack_root

__all__ = [
    "DEFAULT_RUBRIC",
    "RISK_LEVELS",
    "SEED_RESULTS",
    "FactualityRubric",
    "Severity",
    "VerificationResult",
    "format_rubric",
    "load_rubric",
]

DEFAULT_RUBRIC: Final = pack_root() / "rubrics" / "factual_accuracy.yaml"

SEED_RESULTS: Final = MappingProxyType(
    {"Supported": 1.0, "Partially Supported": 0.5, "Contradicted": 0.0, "Unverifiable": None}
)
"""The seed's Step 3: verification result → score (``None`` is the seed's NULL). Not adaptable."""

RISK_LEVELS: Final = ("standard", "high")

_TOP = {
    "id", "version", "prompt_version", "title", "source", "template", "system", "verification_results",
    "severity_scale", "legal_risk_level", "risk_levels_from_tier", "risk_levels", "pass_threshold",
    "score_tolerance",
    "downgrade_ungrounded", "no_verifiable_claims_passes", "chunk_chars", "constraints", "decisions",
}  # fmt: skip
_PROVENANCES = ("seed", "grounding-eval")


@dataclass(frozen=True)
class VerificationResult:
    """One verification result: its name (the enum value), score and whether a quote is required."""

    name: str
    score: float | None
    quote_required: bool
    provenance: str


@dataclass(frozen=True)
class Severity:
    """One severity level and whether, at high risk, a finding of it needs a human."""

    level: str
    definition: str
    human_verification_at_high_risk: bool
    provenance: str


@dataclass(frozen=True)
class FactualityRubric:
    """The loaded rubric (see ``rubrics/factual_accuracy.yaml`` for each field's meaning)."""

    path: str
    id: str
    version: str
    prompt_version: str
    template: str
    system: str
    results: tuple[VerificationResult, ...]
    severities: tuple[Severity, ...]
    risk_levels_from_tier: Mapping[str, str]
    pass_threshold: float
    score_tolerance: float
    downgrade_ungrounded: bool
    no_verifiable_claims_passes: bool
    chunk_chars: int
    constraints: tuple[str, ...]
    decisions: tuple[tuple[str, str], ...]
    legal_risk_level: str = "high"
    """The risk level of a legal-aid item with none set explicitly (the seed: "For high-stakes domains like
    healthcare or legal review, set [RISK_LEVEL] to high")."""

    @property
    def result_names(self) -> tuple[str, ...]:
        """The verification results, in the schema's order."""
        return tuple(r.name for r in self.results)

    @property
    def severity_levels(self) -> tuple[str, ...]:
        """The severity levels, most severe first."""
        return tuple(s.level for s in self.severities)

    def result(self, name: str) -> VerificationResult:
        """The verification result called ``name`` (exact)."""
        return next(r for r in self.results if r.name == name)

    def needs_human(self, level: str | None) -> bool:
        """Whether a finding of severity ``level`` needs a human at high risk."""
        return any(s.level == level and s.human_verification_at_high_risk for s in self.severities)

    def risk_level(self, value: Any, *, tier: Any = None, legal: bool = False) -> str:
        """The risk level (:meth:`risk_choice`'s level)."""
        return self.risk_choice(value, tier=tier, legal=legal)[0]

    def risk_choice(self, value: Any, *, tier: Any = None, legal: bool = False) -> tuple[str, str]:
        """The risk level and where it came from: an explicit value (``standard`` / ``high``); else, for a
        legal-aid item (``legal``), :attr:`legal_risk_level` (the seed's high for legal review, whatever
        the item's risk tier); else the risk tier through ``risk_levels_from_tier``; else ``standard``.

        Raises:
            ValueError: an unknown level or tier (a tier is checked even when the legal default decides).
        """
        level = None
        if tier not in (None, ""):
            level = self.risk_levels_from_tier.get(str(tier).strip().lower())
            if level is None:
                raise ValueError(
                    f"risk tier {str(tier)!r} is not in {self.path}'s risk_levels_from_tier "
                    f"({', '.join(self.risk_levels_from_tier)})"
                )
        if value not in (None, ""):
            text = str(value).strip().lower()
            if text not in RISK_LEVELS:
                raise ValueError(f"risk_level must be one of {', '.join(RISK_LEVELS)}, got {str(value)!r}")
            return text, "set explicitly"
        if legal:
            return (
                self.legal_risk_level,
                "legal_risk_level (a legal-aid item; the seed: legal review is high)",
            )
        if level is not None:
            return level, f"risk tier {str(tier).strip().lower()}"
        return "standard", "default (not a legal-aid item, no risk tier)"


def load_rubric(path: str | Path = DEFAULT_RUBRIC) -> FactualityRubric:
    """Load and check a factual-accuracy rubric file.

    Raises:
        DataError: one line naming the file and the problem.
    """
    data = read_yaml(path)

    def bad(problem: str) -> DataError:
        return DataError(path, problem)

    if not isinstance(data, dict):
        raise bad("expected a mapping (see rubrics/factual_accuracy.yaml)")
    unknown = sorted(set(map(str, data)) - _TOP)
    if unknown:
        raise bad(f"unknown key(s) {', '.join(unknown)}")
    for key in ("id", "version", "prompt_version", "template", "system"):
        if not isinstance(data.get(key), str) or not data[key].strip():
            raise bad(f"field {key!r} is required and must be text")
    results = tuple(_result(r, bad) for r in _list(data, "verification_results", bad))
    if sorted(r.name for r in results) != sorted(SEED_RESULTS):
        raise bad(f"verification_results must name exactly {', '.join(SEED_RESULTS)} (the seed's Step 2)")
    severities = tuple(_severity(s, bad) for s in _list(data, "severity_scale", bad))
    levels = [s.level.casefold() for s in severities]
    if len(set(levels)) != len(levels):
        raise bad("severity_scale: a level is listed twice (levels are compared ignoring case)")
    tiers = data.get("risk_levels_from_tier") or {}
    if not isinstance(tiers, dict) or any(v not in RISK_LEVELS for v in tiers.values()):
        raise bad(f"risk_levels_from_tier must map risk tiers to {' or '.join(RISK_LEVELS)}")
    if data.get("risk_levels", list(RISK_LEVELS)) != list(RISK_LEVELS):
        raise bad(f"risk_levels must be {list(RISK_LEVELS)}")
    legal_level = data.get("legal_risk_level", "high")
    if legal_level not in RISK_LEVELS:
        raise bad(f"legal_risk_level must be {' or '.join(RISK_LEVELS)}")
    threshold = _number(data, "pass_threshold", 0.8, bad)
    tolerance = _number(data, "score_tolerance", 0.01, bad)
    chunk_chars = data.get("chunk_chars", 1200)
    if not isinstance(chunk_chars, int) or isinstance(chunk_chars, bool) or chunk_chars < 100:
        raise bad("chunk_chars must be a whole number of at least 100")
    constraints = data.get("constraints") or []
    if not isinstance(constraints, list) or not all(isinstance(c, str) and c.strip() for c in constraints):
        raise bad("constraints must be a list of text lines")
    decisions = []
    for i, d in enumerate(data.get("decisions") or [], 1):
        if not isinstance(d, dict) or set(d) != {"id", "text"}:
            raise bad(f"decisions entry {i}: expected {{id, text}}")
        decisions.append((str(d["id"]), " ".join(str(d["text"]).split())))
    flags = {}
    for key, default in (("downgrade_ungrounded", True), ("no_verifiable_claims_passes", False)):
        flags[key] = data.get(key, default)
        if not isinstance(flags[key], bool):
            raise bad(f"{key} must be true or false")
    return FactualityRubric(
        path=str(path),
        id=data["id"],
        version=data["version"],
        prompt_version=data["prompt_version"],
        template=data["template"],
        system=" ".join(data["system"].split()),
        results=results,
        severities=severities,
        risk_levels_from_tier=MappingProxyType({str(k).lower(): str(v) for k, v in tiers.items()}),
        pass_threshold=threshold,
        score_tolerance=tolerance,
        downgrade_ungrounded=flags["downgrade_ungrounded"],
        no_verifiable_claims_passes=flags["no_verifiable_claims_passes"],
        chunk_chars=chunk_chars,
        constraints=tuple(" ".join(c.split()) for c in constraints),
        decisions=tuple(decisions),
        legal_risk_level=legal_level,
    )


def _list(data: Mapping[str, Any], key: str, bad: Any) -> list[Any]:
    value = data.get(key)
    if not isinstance(value, list) or not value:
        raise bad(f"{key} must be a non-empty list")
    return value


def _number(data: Mapping[str, Any], key: str, default: float, bad: Any) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise bad(f"{key} must be a number between 0 and 1")
    return float(value)


def _provenance(entry: Mapping[str, Any], where: str, bad: Any) -> str:
    value = entry.get("provenance", "grounding-eval")
    if value not in _PROVENANCES:
        raise bad(f"{where}: provenance must be {' or '.join(_PROVENANCES)}")
    return str(value)


def _result(entry: Any, bad: Any) -> VerificationResult:
    if not isinstance(entry, dict) or set(entry) - {"name", "score", "quote_required", "provenance"}:
        raise bad("verification_results entries are {name, score, quote_required, provenance}")
    name = entry.get("name")
    if not isinstance(name, str) or name not in SEED_RESULTS:
        raise bad(f"verification result {name!r} is not one of the seed's {', '.join(SEED_RESULTS)}")
    score = entry.get("score")
    expected = SEED_RESULTS[name]
    if (score is None) != (expected is None) or (
        score is not None and not (isinstance(score, int | float) and math.isclose(score, expected or 0.0))
    ):
        raise bad(f"verification result {name!r}: score must be {expected} (the seed's Step 3)")
    if not isinstance(entry.get("quote_required", False), bool):
        raise bad(f"verification result {name!r}: quote_required must be true or false")
    where = f"verification result {name!r}"
    return VerificationResult(
        name, expected, bool(entry.get("quote_required")), _provenance(entry, where, bad)
    )


def _severity(entry: Any, bad: Any) -> Severity:
    keys = {"level", "definition", "human_verification_at_high_risk", "provenance"}
    if not isinstance(entry, dict) or set(entry) - keys:
        raise bad(f"severity_scale entries are {{{', '.join(sorted(keys))}}}")
    level, definition = entry.get("level"), entry.get("definition")
    if not isinstance(level, str) or not level.strip() or level != level.strip():
        raise bad("severity_scale: every level needs a name (text without surrounding spaces)")
    if not isinstance(definition, str) or not definition.strip():
        raise bad(f"severity level {level!r}: definition is required")
    human = entry.get("human_verification_at_high_risk", False)
    if not isinstance(human, bool):
        raise bad(f"severity level {level!r}: human_verification_at_high_risk must be true or false")
    where = f"severity level {level!r}"
    return Severity(level, " ".join(definition.split()), human, _provenance(entry, where, bad))


def format_rubric(rubric: FactualityRubric) -> str:
    """The rubric as text, each piece marked ``[seed]`` (verbatim) or ``[grounding-eval]`` (ours)."""
    lines = [f"{rubric.id} {rubric.version} (prompt {rubric.prompt_version}) — {rubric.path}", ""]
    lines.append("Verification results (score):")
    for r in rubric.results:
        score = "NULL" if r.score is None else f"{r.score:g}"
        quote = ", quote required" if r.quote_required else ""
        lines.append(f"  [{r.provenance}] {r.name}: {score}{quote}")
    lines.append("Severity scale:")
    for s in rubric.severities:
        human = " (human verification at high risk)" if s.human_verification_at_high_risk else ""
        lines.append(f"  [{s.provenance}] {s.level}: {s.definition}{human}")
    lines.append("Settings [grounding-eval]:")
    lines.append(
        f"  pass_threshold {rubric.pass_threshold:g}, score_tolerance {rubric.score_tolerance:g}, "
        f"downgrade_ungrounded {str(rubric.downgrade_ungrounded).lower()}, no_verifiable_claims_passes "
        f"{str(rubric.no_verifiable_claims_passes).lower()}, chunk_chars {rubric.chunk_chars}"
    )
    tiers = ", ".join(f"{k} -> {v}" for k, v in rubric.risk_levels_from_tier.items())
    lines.append(
        f"  legal-aid item -> risk level: {rubric.legal_risk_level} (the seed: legal review is high)"
    )
    lines.append(f"  otherwise, risk tier -> risk level: {tiers}")
    lines.append("Decisions [grounding-eval]:")
    lines.extend(f"  {key}: {text}" for key, text in rubric.decisions)
    return "\n".join(lines) + "\n"
