"""The premise behind remembering plain NANP decisions: validity never reads a number's last four digits.

``phone_matcher._Window`` decides a plain all-digit NANP candidate once per (shape, neighbours, digits but the
last three). That is sound only if, in the pinned phonenumbers metadata, whether a ten-digit NANP number
is valid (and for which region) depends on its first seven digits alone. Checked here on the metadata
itself (every national-number pattern of every NANP region ends in a run of at least three free digits)
and by sampling, and the fast path is compared with libphonenumber's plain matcher on numbers that
share a prefix.
"""

from __future__ import annotations

import random
import re

import phonenumbers
from phonenumbers import PhoneMetadata

from grounding_eval.verifier.phone_matcher import _FREE_TAIL_DIGITS
from grounding_eval.verifier.phones import find_phones

NANP_REGIONS = phonenumbers.COUNTRY_CODE_TO_REGION_CODE[1]
_DESCS = ("fixed_line", "mobile", "toll_free", "premium_rate", "shared_cost", "personal_number", "voip",
          "pager", "uan", "voicemail", "general_desc")  # fmt: skip
# A pattern is "prefix, then free digits" when each top-level alternative ends in \d{n} with n >= 3.
_FREE_TAIL = re.compile(r"\\d\{(\d+)(?:,\d+)?\}$")


def _alternatives(pattern: str) -> list[str]:
    depth, start, out = 0, 0, []
    for i, c in enumerate(pattern):
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        elif c == "|" and depth == 0:
            out.append(pattern[start:i])
            start = i + 1
    return [*out, pattern[start:]]


def test_every_nanp_pattern_ends_in_three_free_digits() -> None:
    checked = 0
    for region in NANP_REGIONS:
        metadata = PhoneMetadata.metadata_for_region(region)
        assert metadata is not None, region
        for name in _DESCS:
            desc = getattr(metadata, name)
            if desc is None or not desc.national_number_pattern:
                continue
            for alternative in _alternatives(desc.national_number_pattern):
                tail = _FREE_TAIL.search(alternative)
                # general_desc's "3\d{6}" (seven-digit local numbers) is never valid for a 10-digit one.
                assert tail is not None and int(tail.group(1)) >= _FREE_TAIL_DIGITS, (
                    region,
                    name,
                    alternative,
                )
                checked += 1
    assert checked > 100


def test_validity_of_sampled_numbers_ignores_the_last_three_digits() -> None:
    rng = random.Random(20261130)
    for _ in range(4000):
        prefix = f"{rng.randrange(200, 1000)}{rng.randrange(200, 1000)}{rng.randrange(10)}"
        verdicts = set()
        for _ in range(3):
            number = phonenumbers.PhoneNumber(
                country_code=1, national_number=int(prefix + f"{rng.randrange(1000):03d}")
            )
            verdicts.add((phonenumbers.is_valid_number(number), phonenumbers.region_code_for_number(number)))
        assert len(verdicts) == 1, (prefix, verdicts)


def _plain_matcher(text: str) -> list[tuple[str, str, int, int]]:
    return [
        (
            m.raw_string,
            phonenumbers.format_number(m.number, phonenumbers.PhoneNumberFormat.E164),
            m.start,
            m.end,
        )
        for m in phonenumbers.PhoneNumberMatcher(
            text, "US", leniency=phonenumbers.Leniency.VALID, max_tries=10**9
        )
    ]


def test_numbers_sharing_a_prefix_are_found_like_libphonenumber_finds_them() -> None:
    rng = random.Random(7)
    shapes = ("({a}) {b}-{c}", "{a}-{b}-{c}", "{a}.{b}.{c}", "1 {a} {b} {c}", "{a}{b}{c}", "1-{a}-{b}-{c}")
    parts = []
    for _ in range(600):
        a, b = (
            rng.choice(("312", "415", "800", "900", "523", "211", "555")),
            rng.choice(("341", "555", "200", "911")),
        )
        shape = rng.choice(shapes)
        parts.append(shape.format(a=a, b=b, c=f"{rng.randrange(10_000):04d}"))
        parts.append(rng.choice((" ", ", ", " or ", "x", ";", "\n", " call ")))
    text = "".join(parts)
    found = [(p.raw, p.e164, p.start, p.end) for p in find_phones(text)]
    assert found == _plain_matcher(text)
    assert len(found) > 250


def test_long_plain_digit_runs_are_found_like_libphonenumber_finds_them() -> None:
    """Runs of digit groups longer than any national number (rejected without parsing) hide nothing."""
    rng = random.Random(11)
    parts = []
    for _ in range(300):
        run = " ".join(f"{rng.randrange(10**k):0{k}d}" for k in rng.choices((2, 3, 4), k=rng.randrange(1, 9)))
        parts.append(rng.choice((run, f"({run})", run.replace(" ", "-"), run.replace(" ", "."))))
        if rng.random() < 0.3:
            parts.append(rng.choice(("(312) 341-1070", "415.555.0134", "1-800-555-0199", "3123411070")))
        parts.append(rng.choice((" ", ", ", "; ", " and ", "\n")))
    text = "".join(parts)
    assert [(p.raw, p.e164, p.start, p.end) for p in find_phones(text)] == _plain_matcher(text)
