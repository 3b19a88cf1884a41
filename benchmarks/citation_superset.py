"""The whole generated citation corpus: how much of what eyecite and citeurl find the pack finds (issue 38).

Run from the repository root::

    .venv/bin/python benchmarks/citation_superset.py [--every 1]

Every sentence of tests/verifier/citation_corpus.py (every reporter edition and variation of reporters-db,
its examples of reporters, laws and journals, one instance of every pattern of every template the pack
loads), alone and between two neighbour sentences; prints the share of the libraries' citations the pack
finds with the same normalized form, and the first misses of each kind. The unit suite runs a sample
(tests/verifier/test_citation_superset.py); this is the full count. A measurement, not a test.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from grounding_eval.verifier.citations import find_citations
from tests.verifier.citation_corpus import NEIGHBOURS, citeurl_finds, corpus, eyecite_finds, missing


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--every", type=int, default=1, help="read every n-th citation of the corpus")
    args = parser.parse_args()
    started = time.perf_counter()
    sentences = corpus(args.every)
    total = lost = 0
    misses: dict[str, list[str]] = {}
    for n, sentence in enumerate(sentences):
        joined = f"{NEIGHBOURS[n % len(NEIGHBOURS)]} {sentence} {NEIGHBOURS[(n + 1) % len(NEIGHBOURS)]}"
        for text in (sentence, joined):
            mentions = find_citations(text).mentions
            found = eyecite_finds(text) + citeurl_finds(text)
            total += len(found)
            for f in missing(text, mentions, found):
                lost += 1
                misses.setdefault(f.kind, []).append(f"{text[f.start : f.end]!r} -> {f.normalized}")
    share = 100 * (total - lost) / max(total, 1)
    print(f"{len(sentences)} sentences, alone and among neighbours: the libraries find {total} citations, "
          f"the pack {total - lost} of them ({share:.2f} %), in {time.perf_counter() - started:.0f} s")  # fmt: skip
    for kind, lines in misses.items():
        print(f"missed ({kind}): {len(lines)}")
        for line in lines[:15]:
            print(f"    {line}")


if __name__ == "__main__":
    main()
