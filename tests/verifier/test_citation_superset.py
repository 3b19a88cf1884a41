"""The pack finds every citation its libraries find (issue 38), on a corpus generated from their own data.

The corpus (tests/verifier/citation_corpus.py) writes every reporter edition and variation of reporters-db,
its examples of reporters, laws and journals, and one instance of every pattern of every template the pack
loads, into sentences. eyecite's ``get_citations`` and citeurl's own driver are run on each sentence, alone
and between neighbour sentences; each citation they find must be among the pack's, with the same
normalized form. Here a deterministic sample (every 23rd citation); ``benchmarks/citation_superset.py``
runs the whole corpus.
"""

from __future__ import annotations

import pytest

from grounding_eval.verifier.citations import _library, find_citations
from tests.verifier.citation_corpus import NEIGHBOURS, citeurl_finds, corpus, eyecite_finds, missing

SAMPLE = corpus(every=23)


def _missing(text: str) -> tuple[int, list[str]]:
    mentions = find_citations(text).mentions
    found = eyecite_finds(text) + citeurl_finds(text)
    return len(found), [
        f"{text[f.start : f.end]!r} ({f.kind}: {f.normalized})" for f in missing(text, mentions, found)
    ]


class TestSuperset:
    """pack ⊇ eyecite ∪ citeurl, with the same normalized form."""

    def test_the_sample_is_not_empty(self) -> None:
        """The sample holds hundreds of sentences the libraries find citations in."""
        assert len(SAMPLE) >= 150
        assert sum(_missing(text)[0] > 0 for text in SAMPLE[:40]) >= 30

    @pytest.mark.parametrize("text", SAMPLE)
    def test_alone(self, text: str) -> None:
        """Every citation the libraries find in the sentence, the pack finds."""
        _, lost = _missing(text)
        assert lost == []

    @pytest.mark.parametrize("n", range(0, len(SAMPLE), 7))
    def test_among_neighbours(self, n: int) -> None:
        """The same between neighbour sentences (a citation, a phone number, a case with its court)."""
        text = f"{NEIGHBOURS[n % len(NEIGHBOURS)]} {SAMPLE[n]} {NEIGHBOURS[(n + 1) % len(NEIGHBOURS)]}"
        _, lost = _missing(text)
        assert lost == []


class TestTemplatesLoaded:
    """What the loader does with citeurl's files."""

    def test_duplicate_keys_are_kept_first_and_listed(self) -> None:
        """citeurl's state file names two templates "Washington Constitution": the first (Washington's)
        is kept, the duplicate listed; ours adds West Virginia's."""
        library = _library()
        assert library.duplicates == ["Washington Constitution"]
        assert {"Washington Constitution", "West Virginia Constitution"} <= set(library.names())

    def test_every_template_is_built_and_checked(self) -> None:
        """Every template the pack loads builds and passes its checks (none rejected)."""
        library = _library()
        assert all(library.template(name) is not None for name in library.names())
        assert library.rejected == {}

    @pytest.mark.parametrize(
        ("text", "jurisdiction"),
        [("W. Va. Const. art. III, § 10", "WV"), ("Wash. Const. art. I, § 7", "WA")],
    )
    def test_constitutions(self, text: str, jurisdiction: str) -> None:
        (mention,) = find_citations(text).mentions
        assert mention.jurisdiction == jurisdiction
