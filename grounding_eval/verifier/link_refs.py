"""Markdown reference-style links: ``[text][label]``, ``[text][]`` and ``[label]``, and their definitions.

Chat models often write a resource list as ``[Legal Aid Chicago][1]`` in the prose and ``[1]: https://…``
at the bottom. The URL is written once, in the definition, but a reader meets it as the link whose
text names the organization, so the URL check reads the link text as the URL's attribution
(:func:`~grounding_eval.verifier.urls.extract_urls`) and the pairing reads the definition line as
the definition only (:class:`~grounding_eval.verifier.phones.Pairing`). Both read the same parse,
this module's: a definition is ``[label]: destination`` alone on its line, with an optional title;
a label is matched without regard to case or runs of white space (CommonMark's rule), and the first
definition of a label wins. A reference whose label is defined nowhere is plain text. Footnotes
(``[^1]``) are not links.

Budget: two passes of regexes with possessive quantifiers (no backtracking) over the text and one
dictionary lookup per bracketed span: linear. The parse of the last few texts is remembered, since
the URL extraction and the pairing of one answer both ask for it.
"""

from __future__ import annotations

import functools
import re
from typing import NamedTuple

__all__ = ["LinkDefinition", "LinkReference", "References", "normalize_label", "parse_references"]

_DEFINITION = re.compile(
    r"^[ ]{0,3}\[(?!\^)(?P<label>[^\[\]\n]{1,999}+)\]:[ \t]*+"
    r"(?:<(?P<angle>[^<>\n]*+)>|(?P<dest>[^\s<>]++))"
    r"(?:[ \t]++(?:\"[^\"\n]*+\"|'[^'\n]*+'|\([^()\n]*+\)))?+[ \t]*+$",
    re.MULTILINE,
)
# [text][label], [text][] or [text]; one level of brackets is not nested here (``![alt][1]`` is an image
# reference, and its alt text is its text).
# Not followed by ":" (a definition's own label) or "(" (an inline link, ``[text](url)``).
_REFERENCE = re.compile(r"\[(?P<text>[^\[\]\n^][^\[\]\n]*+)\](?:\[(?P<label>[^\[\]\n]*+)\])?+(?![:(])")


class LinkDefinition(NamedTuple):
    """``[label]: destination "title"`` on a line of its own (a tuple: a hostile answer holds 10^5).

    Attributes:
        label: The label as written.
        start: Offset of the line's first character.
        end: Offset just past the line's last character (before its line break).
        dest_start: Offset of the destination as written (inside angle brackets when it has them).
        dest_end: Offset just past the destination.
    """

    label: str
    start: int
    end: int
    dest_start: int
    dest_end: int


class LinkReference(NamedTuple):
    """A reference link in the text, ``[text][label]``, and the definition it uses."""

    text: str
    start: int  # the opening bracket
    end: int  # just past the last closing bracket
    text_start: int
    text_end: int
    definition: LinkDefinition


class References(NamedTuple):
    """Every definition (in order), every reference that uses one (in order), and the first
    reference to each definition, by the definition's ``dest_start``."""

    definitions: tuple[LinkDefinition, ...]
    references: tuple[LinkReference, ...]
    first_reference: dict[int, LinkReference]


_NONE = References((), (), {})


def normalize_label(label: str) -> str:
    """A label as Markdown compares it: case folded, runs of white space as one space."""
    if label.isalnum():
        return label.casefold()  # (most labels: "1", "lac")
    return " ".join(label.split()).casefold()


@functools.lru_cache(maxsize=4)
def parse_references(text: str) -> References:
    """Find the reference definitions of ``text`` and the reference links that use them."""
    if "]:" not in text:  # no definition, so no reference can be a link (the common case)
        return _NONE
    definitions: list[LinkDefinition] = []
    by_label: dict[str, LinkDefinition] = {}
    for m in _DEFINITION.finditer(text):
        label, angle = m.group("label", "angle")
        found = LinkDefinition(label, *m.span(), *m.span("dest" if angle is None else "angle"))
        definitions.append(found)
        by_label.setdefault(normalize_label(label), found)
    if not by_label:
        return _NONE
    references: list[LinkReference] = []
    first: dict[int, LinkReference] = {}
    for m in _REFERENCE.finditer(text):
        link_text, label = m.group("text", "label")
        definition = by_label.get(normalize_label(label or link_text))
        if definition is not None:
            start, end = m.span()
            reference = LinkReference(link_text, start, end, start + 1, m.end("text"), definition)
            references.append(reference)
            first.setdefault(definition.dest_start, reference)
    return References(tuple(definitions), tuple(references), first)
