"""Turn a verifier report into lines a person can act on: the findings of each check, counted and listed.

Used for the promptfoo reasons (the viewer's cell and details) and the CLI's human output. A line counts
every finding by status but lists only those a reviewer must look at — not an allowlisted URL, a number
or URL given for its own organization or for none, a URL no directory organization owns, or an exact
quote — at most :data:`~grounding_eval.verifier.limits.MAX_LISTED_FINDINGS` of them, in order of
appearance, then "… and N more (see metadata)": the report's JSON (the promptfoo metadata, the CLI's
``--json``) keeps them all. A listed finding longer than :data:`MAX_ITEM_CHARS` (a URL of a hundred
kilobytes) is cut with "…". So a reason stays a few tens of kilobytes whatever the answer holds.

The first line (:func:`summary_line`) is the verdict, and what was not decided when anything was:
"PASS deterministic verifier 1.00 — 2 not checked offline: 1 statute, 1 URL (42 U.S.C. § 3699;
https://example.org/x)"; a FAIL line says the same after its hard failures. "offline" is said only in
an offline run whose undecided findings a live run could all decide: URLs, and citations whose official
page names their section (not a case, a quote, a check, the places past the citation cap, nor a code
whose page is a chapter's, as ORS's). Under ``citation_check="information"`` the UNKNOWN citations and
another state's law are said on it as information ("; information only: 1 citation not in the index").
When every check that would score raised, it is "UNSCORED deterministic verifier: no check decided a
score: jurisdiction raised — …": never a PASS.

Budget: linear in the number of findings (each is counted once, only the listed ones are formatted).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import attrgetter
from typing import TypeVar

from grounding_eval.verifier.allowlist import UrlStatus
from grounding_eval.verifier.citations import MAX_CITATIONS, CitationStatus
from grounding_eval.verifier.limits import MAX_LISTED_FINDINGS
from grounding_eval.verifier.phones import PhoneStatus
from grounding_eval.verifier.quotes import QuoteFinding, QuoteStatus
from grounding_eval.verifier.url_orgs import UrlOrgStatus
from grounding_eval.verifier.verdict import CHECKS, VerifierReport, status_counts

__all__ = ["MAX_ITEM_CHARS", "check_lines", "summary_line", "unscored_reason"]

MAX_ITEM_CHARS = 500
"""Longest listed finding, in characters; a longer one is cut with "…"."""

_T = TypeVar("_T")


def summary_line(report: VerifierReport) -> str:
    """One line: the verdict, the score, the hard failures and what was not decided (at most
    ``MAX_LISTED_FINDINGS`` of each listed)."""
    failures = report.hard_failures
    undecided = _undecided(report)
    note = _information(report)
    if report.unscored:  # the checks applied, and raised
        return f"UNSCORED deterministic verifier: {unscored_reason(report)}{note}{undecided}"
    score = "n/a (no check applied)" if report.score is None else f"{report.score:.2f}"
    if not failures:
        return f"PASS deterministic verifier {score}" + (undecided or ": no hard safety failure") + note
    listed = _listed(failures, lambda f: f"[{f.check} → {f.safety_check} No] {f.detail}")
    return f"FAIL deterministic verifier {score}: {len(failures)} hard failure(s): {listed}{note}{undecided}"


def unscored_reason(report: VerifierReport) -> str:
    """Why no score: ``no check decided a score: phone_org, jurisdiction raised``."""
    return f"no check decided a score: {', '.join(report.failed_checks)} raised"


def _information(report: VerifierReport) -> str:
    """``; information only: 1 citation not in the index, 1 of another state's law`` under the
    information rule, or ``""``."""
    if report.citation_check == "hard":
        return ""
    unknown = sum(1 for c in report.citations if c.status is CitationStatus.UNKNOWN)
    other = sum(1 for c in report.citations if c.status is CitationStatus.WRONG_JURISDICTION)
    said = [f"{unknown} not in the index"] if unknown else []
    said += [f"{other} of another state's law"] if other else []
    if not said:
        return ""
    noun = "citations" if (unknown or other) > 1 else "citation"  # after the first count
    said[0] = said[0].replace(" ", f" {noun} ", 1)
    return "; information only: " + ", ".join(said)


# Kinds as the first line names them (the rest by their own name).
_KIND_NAMES = {"capped": ("citation-like place past the limit", "citation-like places past the limit")}


def _undecided(report: VerifierReport) -> str:
    """`` — 2 not checked offline: 1 statute, 1 URL (42 U.S.C. § 3699; https://example.org/x)``, or
    ``""``."""
    undecided = report.undecided
    if not undecided.count:
        return ""
    kinds = undecided.kinds
    offline = report.liveness_mode == "offline" and undecided.live_decidable
    counted = ", ".join(
        f"{n} {_KIND_NAMES.get(kind, (kind, kind + 's'))[n > 1]}" for kind, n in kinds.items()
    )
    listed = _listed(undecided.items, lambda i: f"{i.what}: {i.why}" if i.kind == "check" else i.what)
    return f" — {undecided.count} not checked{' offline' if offline else ''}: {counted} ({listed})"


def check_lines(report: VerifierReport) -> dict[str, str]:
    """One line per check: its score, its findings counted by status, and the first of them listed."""
    scores = report.check_scores

    def head(check: str) -> str:
        value = scores[check]
        return f"{check}: " + ("n/a" if value is None else f"{value:.2f}")

    urls_head = head("url_allowlist")
    if report.urls:  # how much was not checked, next to the score, so a reader can weigh it (distinct URLs)
        distinct = len({u.mention.url for u in report.urls})
        urls_head += f" ({report.unchecked_urls} of {distinct} URLs UNCHECKED, not scored)"
    quotes_head = head("quotation")
    if not report.quotation_scored:
        quotes_head = (
            "quotation: information only (the methods document checks quotes in Rounds 2b and 3; "
            "not scored, never a failure here)"
        )
    lines = {
        "url_allowlist": _with(
            urls_head,
            report.urls,
            lambda f: f"{f.status.value} {f.mention.raw} ({f.detail})",
            "no URLs",
            lambda f: f.status is not UrlStatus.IN_ALLOWLIST,
        ),
        "phone_org": _with(
            head("phone_org"),
            report.phones,
            lambda f: f"{f.status.value} {f.detail}",
            "no phone numbers",
            lambda f: f.status is not PhoneStatus.MATCH and f.status is not PhoneStatus.UNPAIRED,
        ),
        "url_org": _with(
            head("url_org"),
            report.url_orgs,
            lambda f: f"{f.status.value} {f.detail}",
            "no URLs",
            lambda f: f.status is UrlOrgStatus.MISATTRIBUTED,
        ),
        "jurisdiction": _jurisdiction(report, head("jurisdiction")),
        "quotation": _quotes(report, quotes_head),
        "citations": _citations(report),
    }
    for check, why in report.check_errors:  # a check that raised: nothing it found is a verdict
        if check == "jurisdiction" and report.citation_leaks:  # another state's law is decided all the same
            lines[check] += f"; organizations not checked: the check raised {why}"
        else:
            lines[check] = f"{check}: n/a (not checked: the check raised {why})"
    assert tuple(lines) == CHECKS
    return lines


_STATUS = attrgetter("status")


def _ANY(_finding: object) -> bool:
    return True


def _with(
    head: str,
    findings: Sequence[_T],
    item: Callable[[_T], str],
    empty: str,
    to_look_at: Callable[[_T], bool],
) -> str:
    """``head [counts] listed``: every finding counted by status, those ``to_look_at`` listed."""
    if not findings:
        return f"{head} ({empty})"
    counts = status_counts(list(map(_STATUS, findings)))  # (Counter's items, counted in C)
    tally = ", ".join(f"{n} {status.value}" for status, n in counts)
    listed = [f for f in findings if to_look_at(f)]
    return f"{head} [{tally}] " + _listed(listed, item) if listed else f"{head} [{tally}]"


def _listed(findings: Sequence[_T], item: Callable[[_T], str], sep: str = "; ") -> str:
    """The first ``MAX_LISTED_FINDINGS`` findings formatted and joined, and how many were left out."""
    shown = sep.join(_cut(item(f)) for f in findings[:MAX_LISTED_FINDINGS])
    rest = len(findings) - MAX_LISTED_FINDINGS
    return shown if rest <= 0 else f"{shown}; … and {rest} more (see metadata)"


def _cut(text: str) -> str:
    """``text`` on one line (a citation wrapped in the answer, ``section\n789.3``, must not break the
    reason's lines), cut to ``MAX_ITEM_CHARS``."""
    if len(text) > MAX_ITEM_CHARS:
        text = text[: MAX_ITEM_CHARS - 1] + "…"
    return " ".join(text.split()) if "\n" in text or "\r" in text else text


def _jurisdiction(report: VerifierReport, head: str) -> str:
    if report.jurisdiction is None:
        return f"{head} (user's state not given: not checked)"
    if not report.leaks and not report.citation_leaks:
        # Another state's law is a leak only under the hard rule (information otherwise: the citations line).
        what = (
            "organization or law" if report.citations and report.citation_check == "hard" else "organization"
        )
        return f"{head} (user in {report.jurisdiction}: no {what} from another state)"
    leaks = [leak.detail for leak in report.leaks]
    leaks += [f"{c.mention.raw} is {c.mention.jurisdiction} law" for c in report.citation_leaks]
    return f"{head} user in {report.jurisdiction}; LEAK " + _listed(leaks, str, "; LEAK ")


# Citations a reviewer must look at: every one but those found in the sources or the index.
_CITATION_SEEN = frozenset({CitationStatus.IN_SOURCES, CitationStatus.KNOWN})


def _citations(report: VerifierReport) -> str:
    """The citations counted and listed; never a score (citations are neutral): under the hard rule the
    share found among those decided, as information; otherwise information only."""
    if not report.citations and not report.citations_capped:
        return "citations: n/a (no legal citations)"
    if report.citation_check != "hard":
        head = (
            "citations: information only (the pack's own check, a safety check in Round 3 only: "
            "not scored, never a failure here)"
        )
    elif report.citation_score is None:
        head = "citations: n/a (none decided; never in the score)"
    else:
        head = (
            f"citations: {report.citation_score:.2f} of those decided found (information, never in the score)"
        )
    line = _with(
        head,
        report.citations,
        lambda c: f"{c.status.value} {c.detail}",
        "no legal citations",
        lambda c: c.status not in _CITATION_SEEN,
    )
    if report.citations_capped:
        line += (
            f"; citations past the limit of {MAX_CITATIONS} read: {report.citations_capped} places not read"
        )
    return line


def _quotes(report: VerifierReport, head: str) -> str:
    line = _source_quotes(report, head)
    if report.user_quotes:
        listed = _listed(report.user_quotes, lambda q: repr(_clip(q.span.text)))
        line += f" — not checked, quoting the user's question: {listed}"
    return line


def _source_quotes(report: VerifierReport, head: str) -> str:
    if not report.quotes:
        return f"{head} (no quotes of five or more words)"
    if not report.sources_given:
        listed = _with(head, report.quotes, lambda q: f"{q.status.value} {_clip(q.span.text)!r}", "", _ANY)
        return listed + " — no reference text to check them against, so not checked (not scored)"

    def item(q: QuoteFinding) -> str:
        sim = "" if q.similarity is None else f", similarity {q.similarity:.1f}"
        label = report.source_label(q.source_index)
        where = f", in {label}" if label and q.status.value != "NO_MATCH" else ""
        found = (
            f", closest source text {_clip(q.matched_text)!r}"
            if q.matched_text and q.status.value != "EXACT"
            else ""
        )
        if q.outside_source:  # found only outside the item's sources (in a dataset's other article)
            where = f", quoted from {q.outside_source}, not among this item's sources"
            found = "" if q.similarity == 100.0 else found
        status = q.status.value
        if q.meaning_changes:  # the changed words next to the status they cap (and, hard, fail)
            status += f" (meaning changed: {'; '.join(q.meaning_changes)})"
        return f"{status} {_clip(q.span.text)!r}{sim}{where}{found}"

    return _with(
        head, report.quotes, item, "", lambda q: q.status is not QuoteStatus.EXACT or bool(q.meaning_changes)
    )


def _clip(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
