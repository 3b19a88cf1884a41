"""Time reading a section's official page in live citation mode: the hostile shapes a page can take.

A page read by live mode is at most ``PAGE_BYTES`` (64 kB); what it says is read in one pass (tags,
headings, not-found words). Each family below is a page of that size built to make a careless reader
quadratic (an opening tag repeated, ``<`` repeated, a heading never closed); a realistic page is the
baseline. The read is counted inside the answer's liveness budget, so it must stay small.

Run from the repository root::

    .venv/bin/python benchmarks/page_reading.py [--check]

``--check`` exits 1 when any family takes over ``BUDGET_S`` seconds (on 006b177's reader: ``<h1>``
repeated 31 s, ``<`` repeated 12.8 s, ``<title>`` repeated 11.4 s).
"""

from __future__ import annotations

import argparse
import sys
import time

from grounding_eval.verifier.citation_pages import PAGE_BYTES, _judged
from grounding_eval.verifier.citations import find_citations
from grounding_eval.verifier.liveness import Liveness, LivenessResult, Page

BUDGET_S = 0.25
_REALISTIC = (
    b"<html><head><title>MCL - Section 554.601</title><style>p{}</style></head><body><nav>Home</nav>"
    b"<h1>Section 554.601</h1>"
    + b"<p>Sec. 1. As used in this act: (a) a deposit.</p>" * 1200
    + b"</body></html>"
)
FAMILIES = {
    "realistic": _REALISTIC,
    "<h1> repeated": b"<h1>" * (PAGE_BYTES // 4),
    "< repeated": b"<" * PAGE_BYTES,
    "<title> repeated": b"<title>" * (PAGE_BYTES // 7),
    "<a  repeated": b"<a " * (PAGE_BYTES // 3),
    "unclosed tag name": b"<" + b"a" * (PAGE_BYTES - 1),
    "<h2>not repeated": b"<h2>not " * (PAGE_BYTES // 8),
    "<script> repeated": b"<script>" * (PAGE_BYTES // 8),
    "&amp; repeated": b"&amp" * (PAGE_BYTES // 4),
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help=f"exit 1 if a family takes over {BUDGET_S} s")
    args = parser.parse_args()
    (mention,) = find_citations("MCL 554.601").mentions
    worst = 0.0
    for name, body in FAMILIES.items():
        page = Page(
            LivenessResult(Liveness.LIVE, "HTTP 200", 200), str(mention.url), body[:PAGE_BYTES], "text/html"
        )
        started = time.perf_counter()
        status, _ = _judged(mention, str(mention.url), page)
        took = time.perf_counter() - started
        worst = max(worst, took)
        print(f"{name:<20} {took * 1000:8.1f} ms  {status.value}")
    if args.check and worst > BUDGET_S:
        print(f"over budget: {worst:.2f} s > {BUDGET_S} s", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
