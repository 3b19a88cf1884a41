"""A description cut inside a word ends where the regex package's ``\\X`` (Unicode extended grapheme
clusters) ends a cluster, and as late as it can (issue 42: the cut used hand-coded rules before)."""

from __future__ import annotations

import pytest
import regex

from grounding_eval.data.conditions import DESCRIPTION_CHARS, cut_description

CLUSTERS = {
    "emoji ZWJ family": "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466",
    "ZWJ profession with skin tone": "\U0001f469\U0001f3fd\u200d\U0001f52c",
    "country flag": "\U0001f1fa\U0001f1f8",
    "subdivision flag": "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",
    "keycap": "1\ufe0f\u20e3",
    "combining marks": "e\u0301\u0323",
    "Hangul conjoining jamo (L V T)": "\u1100\u1161\u11a8",
    "Hangul LV syllable and a T jamo": "\uac00\u11a8",
    "Thai spacing vowel (SARA AM)": "\u0e01\u0e33",
    "Devanagari conjunct": "\u0915\u094d\u0937\u093f",
}


def _last_boundary(text: str, at_most: int) -> int:
    """The last end of a ``\\X`` match of ``text`` at or before ``at_most`` (the oracle)."""
    ends = [m.end() for m in regex.finditer(r"\X", text)]
    return max([0, *(e for e in ends if e <= at_most)])


@pytest.mark.parametrize("name", CLUSTERS)
def test_a_cut_inside_a_word_never_splits_a_cluster(name: str) -> None:
    cluster = CLUSTERS[name]
    room = DESCRIPTION_CHARS - 1  # the "…" takes one
    for pad in range(len(cluster) + 1):  # the limit falls at every place inside the cluster
        text = "x" * pad + cluster * (DESCRIPTION_CHARS // len(cluster) + 2)
        cut = cut_description(text)
        assert cut.endswith("\u2026")
        assert cut[:-1] == text[: _last_boundary(text, room)], (name, pad)
        assert len(cut) <= DESCRIPTION_CHARS


def test_clusters_among_words_still_cut_at_a_space() -> None:
    words = " ".join(CLUSTERS.values())
    text = (words + " ") * 20
    cut = cut_description(text)
    assert text.startswith(cut[:-1]) and text[len(cut) - 1] == " "
