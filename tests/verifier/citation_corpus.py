"""A corpus of citation sentences generated from the libraries' own data, and what the libraries find in it.

Used by tests/verifier/test_citation_superset.py (a deterministic sample) and by
benchmarks/citation_superset.py (all of it). Nothing here is written by hand but the sentence frames:

* every edition and variation of every reporter in reporters-db written "volume reporter page", and every
  example reporters-db gives for its reporters, laws and journals (public-domain forms, Westlaw, Lexis…);
* one instance of every pattern of every template the pack loads (citeurl's and ours), generated from the
  pattern itself: the shortest string it matches, digits as ``1``, letters as ``a``, then checked to match.

The libraries' findings are eyecite's ``get_citations`` (its full citations) and citeurl's own driver
(``Citator.list_cites``, its full citations) over the pack's templates, on the same sentence.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

FRAMES = (
    "The court explained the rule in Doe v. Roe, {cite}, and the tenant may rely on it.",
    "See {cite}.",
    "Under {cite} the landlord must act within a reasonable time; ask a lawyer.",
)
NEIGHBOURS = (
    "Call Legal Aid Chicago at (312) 341-1070 for help.",
    "Tex. Prop. Code § 92.056 lists the steps.",
    "In Michigan, see 245 N.W.2d 737 (Mich. Ct. App. 1976).",
    "The notice must be in writing, 30 days before the end of the month.",
)


@dataclass(frozen=True)
class Found:
    """One citation a library finds: its span in the sentence, its kind and normalized form."""

    start: int
    end: int
    kind: str  # case | journal | law (eyecite) | template (citeurl)
    normalized: str


def reporter_cites() -> Iterator[str]:
    """Every reporter edition and variation "volume reporter page", and reporters-db's examples."""
    import reporters_db

    for entries in reporters_db.REPORTERS.values():
        for entry in entries:
            names = list(entry["editions"]) + list(entry.get("variations", {}))
            regexes = any(e.get("regexes") for e in entry["editions"].values())
            if not regexes:
                yield from (f"123 {name} 456" for name in names)
            yield from entry.get("examples", [])
    for table in (reporters_db.LAWS, reporters_db.JOURNALS):
        for entries in table.values():
            for entry in entries:
                yield from entry.get("examples", [])


def template_cites() -> Iterator[tuple[str, str]]:
    """(template name, an instance of one of its patterns) for every pattern of every template the pack
    loads, each checked to be matched by its pattern."""
    from grounding_eval.verifier.citations import _library

    library = _library()
    for name in library.names():
        template = library.template(name)
        for regex in template.regexes if template is not None else ():
            instance = shortest(regex.pattern)
            if instance is not None and regex.search(instance):
                yield name, instance


def shortest(pattern: str) -> str | None:
    """The shortest string ``pattern`` matches, reading digits as ``1`` and letters as ``a`` (None: a part
    it cannot write, such as a back reference)."""
    parser: Any = importlib.import_module("re._parser")
    try:
        return _write(list(parser.parse(pattern)), {})
    except ValueError:
        return None


def _write(items: list[Any], groups: dict[int, str]) -> str:
    c: Any = importlib.import_module("re._constants")
    out = []
    for op, av in items:
        if op is c.LITERAL:
            out.append(chr(av))
        elif op is c.IN:
            out.append(_one_of(av, c))
        elif op is c.ANY:
            out.append("a")
        elif op is c.BRANCH:
            out.append(min((_write(list(p), groups) for p in av[1]), key=len))
        elif op is c.SUBPATTERN:
            text = _write(list(av[3]), groups)
            if av[0] is not None:
                groups[av[0]] = text
            out.append(text)
        elif op is c.ATOMIC_GROUP:
            out.append(_write(list(av), groups))
        elif op in (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT):
            out.append(_write(list(av[2]), groups) * av[0])
        elif op in (c.AT, c.ASSERT, c.ASSERT_NOT):
            continue
        elif op is c.GROUPREF:
            out.append(groups.get(av, ""))
        elif op is c.NOT_LITERAL:
            out.append("a" if chr(av) != "a" else "b")
        else:
            raise ValueError(f"cannot write {op}")
    return "".join(out)


def _one_of(items: list[Any], c: Any) -> str:
    if items and items[0][0] is c.NEGATE:
        return " " if not any(k is c.LITERAL and v == 32 for k, v in items) else "a"
    for kind, value in items:
        if kind is c.LITERAL:
            return chr(value)
        if kind is c.RANGE:
            return chr(value[0])
        if kind is c.CATEGORY:
            return {c.CATEGORY_DIGIT: "1", c.CATEGORY_SPACE: " "}.get(value, "a")
    raise ValueError("an empty class")


def corpus(every: int = 1) -> list[str]:
    """The sentences: each citation in each frame (every ``every``-th citation, for a sample)."""
    cites = list(dict.fromkeys(reporter_cites())) + [i for _, i in dict.fromkeys(template_cites())]
    return [
        frame.format(cite=cite)
        for n, cite in enumerate(cites[::every])
        for frame in FRAMES[n % len(FRAMES) :][:1]
    ]


def eyecite_finds(text: str) -> list[Found]:
    """eyecite's full citations in ``text``."""
    from grounding_eval._vendor.eyecite import get_citations
    from grounding_eval._vendor.eyecite.models import FullCaseCitation, FullJournalCitation, FullLawCitation

    kinds = ((FullCaseCitation, "case"), (FullJournalCitation, "journal"), (FullLawCitation, "law"))
    out = []
    for cite in get_citations(text):
        for model, kind in kinds:
            if isinstance(cite, model):
                start, end = cite.span()
                out.append(Found(start, end, kind, str(cite.corrected_citation())))
    return out


_CITATOR: list[Any] = []


def citeurl_finds(text: str) -> list[Found]:
    """citeurl's full citations in ``text``, its own driver over the pack's templates."""
    if not _CITATOR:
        from citeurl import Citator

        from grounding_eval.verifier.citations import _library

        library = _library()
        templates = {n: t for n in library.names() if (t := library.template(n)) is not None}
        _CITATOR.append(Citator(defaults=[], templates=templates))
    out = []
    for cite in _CITATOR[0].list_cites(text):
        if getattr(cite, "parent", None) is None:
            out.append(Found(cite.span[0], cite.span[1], "template", str(cite.name or "")))
    return out


def _section(normalized: str) -> str:
    """The last number of a law's normal form (its section), dashes as hyphens."""
    numbers = re.findall(r"\d[\w.,\-‑–:]*\w|\d", normalized)
    return re.sub(r"[‑–—]", "-", numbers[-1] if numbers else normalized).replace(",", "")


def missing(text: str, mentions: Any, found: list[Found]) -> list[Found]:
    """The library findings the pack's ``mentions`` do not hold: a case or journal needs a mention at
    its span with the same normalized form; a law (eyecite names it with its own, subject-less form,
    "Tex. Code Ann. § 24.005") a mention overlapping it with the same section; a template's citation a
    mention starting where it starts with the same normalized form (or, for a range citeurl reads as one
    section, its first end)."""
    out = []
    for f in found:
        overlapping = [m for m in mentions if m.start < f.end and f.start < m.end]
        if f.kind in ("case", "journal"):
            ok = any(m.normalized == f.normalized for m in overlapping)
        elif f.kind == "law":
            ok = any(
                m.kind in ("statute", "regulation", "rule")
                and _section(f.normalized).lower().startswith(_section(m.normalized or "").lower())
                for m in overlapping
            )  # fmt: skip (a range: its first end)
        else:
            ok = any(m.start == f.start and ((m.normalized or "") == f.normalized or f.normalized.startswith(
                (m.normalized or "\0").rsplit(" ", 1)[0])) for m in overlapping)  # fmt: skip
        if not ok:
            out.append(f)
    return out
