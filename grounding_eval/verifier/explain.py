"""Turn a verifier report into lines a person can act on: every finding listed, worst first.

Used for the promptfoo reason (shown under "details" in the viewer) and the CLI's human output.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from grounding_eval.verifier.report import CHECKS, VerifierReport

__all__ = ["check_lines", "summary_line"]


def summary_line(report: VerifierReport) -> str:
    """One line: the verdict, the score and the hard failures."""
    score = "n/a (no check applied)" if report.score is None else f"{report.score:.2f}"
    failures = report.hard_failures
    if not failures:
        return f"PASS deterministic verifier {score}: no hard safety failure"
    listed = "; ".join(f"[{f.check} → {f.safety_check} No] {f.detail}" for f in failures)
    return f"FAIL deterministic verifier {score}: {len(failures)} hard failure(s): {listed}"


def check_lines(report: VerifierReport) -> dict[str, str]:
    """One line per check: its score and every finding."""
    scores = report.check_scores

    def head(check: str) -> str:
        value = scores[check]
        return f"{check}: " + ("n/a" if value is None else f"{value:.2f}")

    urls_head = head("url_allowlist")
    if report.urls:  # how much was not checked, next to the score, so a reader can weigh it
        urls_head += f" ({report.unchecked_urls} of {len(report.urls)} URLs UNCHECKED, not scored)"
    quotes_head = head("quotation")
    if not report.quotation_scored:
        quotes_head = (
            "quotation: information only (the methods document checks quotes in Rounds 2b and 3; "
            "not scored, never a failure here)"
        )

    urls = [f"{f.status.value} {f.mention.raw} ({f.detail})" for f in report.urls]
    phones = [f"{f.status.value} {f.detail}" for f in report.phones]
    url_orgs = [f"{f.status.value} {f.detail}" for f in report.url_orgs]
    lines = {
        "url_allowlist": _with(urls_head, urls, "no URLs"),
        "phone_org": _with(head("phone_org"), phones, "no phone numbers"),
        "url_org": _with(head("url_org"), url_orgs, "no URLs"),
        "jurisdiction": _jurisdiction(report, head("jurisdiction")),
        "quotation": _quotes(report, quotes_head),
    }
    assert tuple(lines) == CHECKS
    return lines


def _with(head: str, items: Sequence[str], empty: str) -> str:
    if not items:
        return f"{head} ({empty})"
    counts = Counter(item.split(" ", 1)[0] for item in items)
    tally = ", ".join(f"{n} {status}" for status, n in counts.items())
    return f"{head} [{tally}] " + "; ".join(items)


def _jurisdiction(report: VerifierReport, head: str) -> str:
    if report.jurisdiction is None:
        return f"{head} (user's state not given: not checked)"
    if not report.leaks:
        return f"{head} (user in {report.jurisdiction}: no organization from another state)"
    return f"{head} user in {report.jurisdiction}; LEAK " + "; LEAK ".join(
        leak.detail for leak in report.leaks
    )


def _quotes(report: VerifierReport, head: str) -> str:
    line = _source_quotes(report, head)
    if report.user_quotes:
        listed = "; ".join(repr(_clip(q.span.text)) for q in report.user_quotes)
        line += f" — not checked, quoting the user's question: {listed}"
    return line


def _source_quotes(report: VerifierReport, head: str) -> str:
    if not report.quotes:
        return f"{head} (no quotes of five or more words)"
    if not report.sources_given:
        return _with(head, [f"{q.status.value} {_clip(q.span.text)!r}" for q in report.quotes], "") + (
            " — the model was shown no source text in full (only C1.5 shows full articles), "
            "so quotes are not checked"
        )
    items = []
    for q in report.quotes:
        sim = "" if q.similarity is None else f", similarity {q.similarity:.1f}"
        label = report.source_label(q.source_index)
        where = f", in {label}" if label and q.status.value != "NO_MATCH" else ""
        found = (
            f", closest source text {_clip(q.matched_text)!r}"
            if q.matched_text and q.status.value != "EXACT"
            else ""
        )
        changes = q.meaning_changes
        changed = f", meaning changed: {'; '.join(changes)}" if changes else ""
        items.append(f"{q.status.value} {_clip(q.span.text)!r}{sim}{where}{found}{changed}")
    return _with(head, items, "")


def _clip(text: str, limit: int = 90) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
