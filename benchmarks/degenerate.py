"""Time the deterministic verifier on degenerate answers: does its cost stay linear in the answer?

A model's answer is hostile input. Repeated "organization + phone number" lists, runs of full stops,
of abbreviations, of brackets, of quote marks or of URL-like fragments once made the verifier
quadratic (17 kB of "Legal Aid Chicago (312) 341-1070, " took 43 s). This benchmark builds each family
at 10 kB, 100 kB and 1 MB (UTF-8 bytes) and times, in process, what the promptfoo adapter does with an
answer: :func:`grounding_eval.verifier.verdict.verify` (a Texas user, two sample statutes as the source
text shown in full, a question), the JSON report and the reason lines of
:mod:`grounding_eval.verifier.explain`, with the cyclic collector paused around the three as the adapter
pauses it (:func:`~grounding_eval.verifier.verdict.collector_paused`). Resources are the sample
dataset's allowlist and directory, offline, with its recorded liveness snapshot.

Each case runs in a child process with a time limit, so a quadratic case cannot run for hours: a case
over the limit prints ``>T s (timeout)`` and the family's bigger sizes are skipped. A case's time is the
child's CPU time (``time.process_time``: the verifier runs on one thread), so other work on a busy machine
does not count against the budget; the time limit is on the wall clock.

The budget: every answer up to 1 MB verifies in under 2 s on the 2-core reference machine, and time
grows about tenfold from 100 kB to 1 MB. (The promptfoo adapter and the CLI refuse answers above
:data:`grounding_eval.verifier.limits.MAX_ANSWER_BYTES`; this measures ``verify`` directly, beyond
that limit, so the limit is a policy and not what keeps the verifier fast.)

Run from the repository root::

    .venv/bin/python benchmarks/degenerate.py                # all families, all sizes
    .venv/bin/python benchmarks/degenerate.py --check        # exit 1 if the 1 MB worst is over budget
    .venv/bin/python benchmarks/degenerate.py --family org_phone --sizes 10000,100000
    .venv/bin/python benchmarks/degenerate.py --list         # the families and their repeated unit
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
import time
from collections.abc import Callable
from itertools import pairwise
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SAMPLE = REPO / "datasets" / "sample"
SOURCE_FILES = ("mi-mcl554-601.txt", "us-34usc12491.txt")
QUESTION = "My landlord in Texas kept my deposit. Who can help me?"
SIZES = (10_000, 100_000, 1_000_000)
BUDGET_S = 2.0

# A realistic answer: prose with organizations, phones, URLs, Markdown links, quotes and a block quote.
_REALISTIC = (
    "In Texas your landlord must return your security deposit within 30 days after you move out. "
    'The law says the landlord "shall mail to the tenant, within 30 days after the termination of '
    'occupancy, an itemized list of damages claimed". Call Lone Star Legal Aid at (800) 733-8394 or '
    "visit https://www.lonestarlegal.org/get-help for free help; Texas RioGrande Legal Aid (TRLA, "
    "(956) 996-8752, [trla.org](https://trla.org)) serves the border counties, e.g. Hidalgo and "
    "Cameron. See also 42 U.S.C. § 3604 and lawhelp.org/texas.\n\n"
    "> The landlord may not retain any portion of a security deposit to cover normal wear and tear.\n\n"
    "1. Write a demand letter.\n2. Keep copies (photos, the lease, receipts).\n"
    "3. If nothing happens, file in justice court — you do not need a lawyer there.\n\n"
)


def _phone(n: int) -> str:
    """The ``n``-th of a run of valid, all different US numbers."""
    areas = (312, 415, 617, 713, 503, 304, 616, 216)
    return f"({areas[n % len(areas)]}) {200 + (n // 10_000) % 800}-{n % 10_000:04d}"


def _distinct_phones(size: int) -> str:
    """Valid, all different US numbers: nothing can be remembered from one to the next."""
    return " ".join(_phone(n) for n in range(size // 15 + 1))


def _distinct_digit_groups(size: int) -> str:
    """Two-digit groups in a fixed pseudo-random order: every phone-number candidate is new."""
    rng = random.Random(8)
    return " ".join(f"{rng.randrange(100):02d}" for _ in range(size // 3 + 1))


def _distinct_org_phones(size: int) -> str:
    """Organization + a different valid number each time (phone–org pairing on new numbers)."""
    names = ("Legal Aid Chicago", "Lone Star Legal Aid", "Prairie State Legal Services", "LANWT")
    return "".join(f"{names[n % len(names)]} {_phone(n)}, " for n in range(size // 30 + 1))


# Each family: a unit repeated to the size, or a function building text of (at least) the size. Units
# use names, numbers and domains listed both in the sample directory and in the tests' fixture
# directory (tests/verifier/test_degenerate.py runs these families at 100 kB).
FAMILIES: dict[str, str | Callable[[int], str]] = {
    "org_phone": "Legal Aid Chicago (312) 341-1070, ",
    "org_phone_lines": "Lone Star Legal Aid: (800) 733-8394\n",
    "org_url": "Legal Aid Chicago https://www.legalaidchicago.org/help, ",
    "org_md_link": "[Legal Aid Chicago](https://www.pslegal.org) and ",
    "org_bare_domain": "Lone Star Legal Aid lonestarlegal.org, ",
    "org_only": "Legal Aid Chicago ",
    "acronym_only": "LANWT LSC ",
    "phone_only": "(312) 341-1070 ",
    "phones_distinct": _distinct_phones,
    "org_phones_distinct": _distinct_org_phones,
    "digit_groups": "12 ",
    "digit_groups_distinct": _distinct_digit_groups,
    "timestamps": "2020-01-01 12 ",
    "digits": "3",
    "periods": ".",
    "sentences": "Go. ",
    "abbrev_eg": "e.g. ",
    "abbrev_usc": "U.S.C. ",
    "initials": "A. ",
    "open_brackets": "[",
    "open_parens": "(",
    "md_link_open": "[a](",
    "bracket_pairs": "[a]",
    "straight_quotes": '"',
    "curly_quotes": "\u201c",
    "quote_words": '"the landlord shall return the deposit" ',
    "quote_open_words": '"the landlord shall return it ',
    "blockquote_lines": "> the landlord shall return the deposit\n",
    "blockquote_markers": ">",
    "newlines": "\n",
    "list_items": "- a\n",
    "url_scheme_runs": "http://a.b/",
    "url_https_runs": "https://www.",
    "www_runs": "www.",
    "bare_domains": "a.org ",
    "dotted_labels": "a.",
    "hyphen_labels": "a-",
    "email_like": "a@b.org ",
    "spaces": " ",
    "letters": "a",
    "realistic": _REALISTIC,
}


# --- Layout families (issue 22): tables, cards, bold-name bullets, reference links, footnotes -----------
# The pairing reads an answer's layout (grounding_eval/verifier/layouts.py, link_refs.py); these are the
# shapes that could make that reading super-linear: 10^5 table rows or reference definitions, one table
# row of 10^5 cells, lists nested thousands deep, and runs of the markers each rule looks for.


def _table_rows(size: int) -> str:
    """A header, a delimiter row and then one row per organization (10^5 rows at 1 MB)."""
    row = "| Legal Aid Chicago | (312) 341-1070 | https://www.legalaidchicago.org |\n"
    return "| Organization | Phone | Website |\n|---|---|---|\n" + row * (size // len(row) + 1)


def _table_wide(size: int) -> str:
    """One table whose header and one row have 10^4 cells each (the organization column last)."""
    cells = size // 60 + 1
    header = "| Phone " * cells + "| Organization |\n" + "|---" * (cells + 1) + "|\n"
    return header + "| (815) 965-2134 " * cells + "| Prairie State Legal Services |\n"


def _letters(n: int) -> str:
    """``n`` written in base 26 with the letters a-z."""
    out = ""
    while True:
        n, digit = divmod(n, 26)
        out = chr(97 + digit) + out
        if not n:
            return out


def _reference_definitions(size: int) -> str:
    """Numbered definitions (about 50,000 at 1 MB), then links to half of them far below."""
    count = size // 24 + 1
    labels = [_letters(n) for n in range(count)]  # (letters: numbered labels would time the phone matcher)
    definitions = "\n".join(f"[{label}]: lsc.gov" for label in labels)
    uses = " ".join(f"[LSC][{label}]" for label in labels[::2])
    return definitions + "\n\n" + uses  # (the definitions first, so that cutting to size keeps them)


def _reference_uses(size: int) -> str:
    """One definition used by every link after it."""
    return "[lac]: https://www.pslegal.org\n\n" + "[Legal Aid Chicago][lac] " * (size // 24 + 1)


def _nested_items(size: int) -> str:
    """Bold-name bullets, each nested one level deeper than the last (about 1,400 deep at 1 MB)."""
    lines, total, depth = [], 0, 0
    while total < size:
        line = "  " * depth + "- **Legal Aid Chicago** (312) 341-1070\n"
        lines.append(line)
        total += len(line)
        depth += 1
    return "".join(lines)


def _footnotes(size: int) -> str:
    """A footnote marker per sentence and one footnote definition per source, 10^4 of each."""
    count = size // 120 + 1
    body = " ".join(f"Get help.[^{n}]" for n in range(count))
    notes = "\n".join(
        f"[^{n}]: Lone Star Legal Aid, (800) 733-8394, https://www.lonestarlegal.org" for n in range(count)
    )
    return notes + "\n\n" + body


def _long_heading(size: int) -> str:
    """One heading line naming an organization and its number 30,000 times."""
    return "### " + "Legal Aid Chicago (312) 341-1070, " * (size // 34 + 1)


def _long_bullet(size: int) -> str:
    """One bold-name bullet followed by 60,000 numbers, each far from the name."""
    return "- **Lone Star Legal Aid** " + "(800) 733-8394, " * (size // 16 + 1)


def _table_rows_short(size: int) -> str:
    """A table of about 125,000 short rows, one number in the first."""
    head = "| Name | Phone |\n|-|-|\n| LSC | 1-202-295-1500 |\n"
    return head + "|LSC|x|\n" * (size // 8 + 1)


def _definitions_short(size: int) -> str:
    """One link, then about 80,000 short definitions of one label (the first wins)."""
    return "[LSC][a]\n\n" + "[a]:lsc.gov\n" * (size // 12 + 1)


FAMILIES.update(
    {
        "layout_table_rows": _table_rows,
        "layout_table_rows_short": _table_rows_short,
        "layout_long_heading": _long_heading,
        "layout_long_bullet": _long_bullet,
        "layout_definitions_short": _definitions_short,
        "layout_table_wide": _table_wide,
        "layout_reference_definitions": _reference_definitions,
        "layout_reference_uses": _reference_uses,
        "layout_nested_items": _nested_items,
        "layout_footnotes": _footnotes,
        "layout_cards": "### Legal Aid Chicago\n- Phone: (312) 341-1070\n- Web: https://www.legalaidchicago.org\n",
        "layout_bold_cards": "**Lone Star Legal Aid**\nPhone: (800) 733-8394\n\n",
        "layout_bold_bullets": "- **LANWT** — (815) 965-2134, https://www.lsc.gov\n",
        "layout_repeated_link_text": "LSC: [https://www.lsc.gov](https://www.lsc.gov) ",
        "layout_delimiter_run": "Legal Aid Chicago | (312) 341-1070\n" + "|-" * 200 + "\n",
        "layout_bold_markers": "**",
        "layout_definition_like": "[a]: ",
        "layout_pipes": "|",
        "layout_setext": "Legal Aid Chicago\n---\n(312) 341-1070\n",
        "layout_name_lines": "Lone Star Legal Aid:\n- (800) 733-8394\n",
        "layout_sub_headings": "## Legal Aid Chicago\n### Contact\n- (312) 341-1070\n",
    }
)


# --- Citation families (issue 22): statutes, short cites and reporter-shaped text ----------------------
# The citations check (grounding_eval/verifier/citations.py) pre-scans the answer for places a citation
# can be (citation_scan.py: the libraries' own strings and factors) and reads the sentences holding them
# with citeurl's templates and eyecite; at most MAX_CITATIONS (200) are read. These are the shapes that
# could make the pre-scan, the sentences or the short-cite pass super-linear: full citations, section
# signs, Id.s and code names back to back (one sentence the size of the text), reporter-shaped "volume
# name page" runs, 10^5 short cites after two codes, a long answer whose only citation is at its end, and
# (issue 38) public-domain and Westlaw forms, court rules, ranges, reversed forms, Ibid.s, reporter
# abbreviations without a number, and the Delaware form that once raised.


def _short_cites_after_codes(size: int) -> str:
    """Two codes with a section in chapter 24, then about 10^5 bare sections of that chapter."""
    head = "Tex. Prop. Code § 24.005 and Mich. Comp. Laws § 554.601 apply. "
    return head + "See § 24.006. " * (size // 14 + 1)


def _one_citation_at_end(size: int) -> str:
    """Plain prose of the size, then one citation and an Id."""
    prose = "The landlord must give written notice before filing. "
    tail = "\n\nSee Tex. Prop. Code § 24.005(a). Id. § 24.006."
    room = max(0, size - len(tail.encode("utf-8")))
    return (prose * (room // len(prose) + 1))[:room] + tail  # (the tail within the size build cuts to)


def _dotted_section(size: int) -> str:
    """One section sign and then one number of the size, dotted: 1.1.1.1…"""
    return "§ " + "1." * (size // 2 + 1)


FAMILIES.update(
    {
        "cite_usc": "42 U.S.C. § 3604 ",
        "cite_section_signs": "§ 1 ",
        "cite_id": "Id. ",
        "cite_id_sections": "Id. § 24.006. ",
        "cite_tex": "Tex. ",
        "cite_code_names": "Tex. Prop. Code Mich. Comp. Laws ILCS ORS R.C. ",
        "cite_digit_dots": "1.2.",
        "cite_dotted_section": _dotted_section,
        "cite_reporter": "1 A. 1 ",
        "cite_reporters_mixed": "50 Ill. 2d 351, 678 F. Supp. 3d 443, ",
        "cite_ilcs": "735 ILCS 5/9-209 ",
        "cite_short_after_codes": _short_cites_after_codes,
        "cite_one_at_end": _one_citation_at_end,
        "cite_public_domain": "2011 IL 111127, 2017 IL App (1st) 143684, 2006-Ohio-2095, 2015 WL 2375225; ",
        "cite_rules": "Fed. R. Civ. P. 12(b)(6), Tex. R. Civ. P. 510.4, MCR 4.201, Civ.R. 60(B) ",
        "cite_ranges": "42 U.S.C. §§ 3601-3619 and §§ 92.051 to 92.0563, ",
        "cite_reversed": "Section 92.056 of the Texas Property Code ",
        "cite_ibid": "Ibid. ",
        "cite_abbreviations": "Supp. App. Prop. Civ. ",
        "cite_delaware": "8 Del. C. § 102(b)(7) Del. Gen. Corp. Law § 102 ",
    }
)


def build(unit: str | Callable[[int], str], size: int) -> str:
    """``unit`` repeated (or built) to exactly ``size`` UTF-8 bytes, never splitting a character."""
    text = unit(size) if callable(unit) else unit * (size // len(unit.encode("utf-8")) + 1)
    data = text.encode("utf-8")[:size]
    return data.decode("utf-8", errors="ignore")


def _load() -> tuple[Callable[[str], object], list[str]]:
    sys.path.insert(0, str(REPO))
    from grounding_eval.verifier.explain import check_lines, summary_line
    from grounding_eval.verifier.setup import load_resources
    from grounding_eval.verifier.verdict import collector_paused, verify

    resources = load_resources(
        allowlist=SAMPLE / "allowlist.txt",
        orgs=SAMPLE / "organizations.yaml",
        liveness="offline",
        snapshot=SAMPLE / "liveness_snapshot.fixture.csv",
    )
    sources = [(SAMPLE / "articles" / name).read_text(encoding="utf-8") for name in SOURCE_FILES]

    def run(answer: str) -> object:
        with collector_paused():  # as the adapter reads a report: its JSON and lines hold no cycles
            report = verify(
                answer, jurisdiction="TX", sources=sources, resources=resources, question=QUESTION
            )
            report.to_json()
            reason = "\n".join([summary_line(report), *check_lines(report).values()])
        return {
            "urls": len(report.urls),
            "phones": len(report.phones),
            "quotes": len(report.quotes),
            "leaks": len(report.leaks),
            "reason_chars": len(reason),
        }

    return run, sources


def _child(family: str, size: int) -> None:
    """Time one case in this process and print one JSON line."""
    run, _ = _load()
    run(_REALISTIC)  # warm up: lazy imports, regex compilation, the suffix list, the prepared sources
    answer = build(FAMILIES[family], size)
    t0, c0 = time.perf_counter(), time.process_time()
    counts = run(answer)
    seconds, wall = time.process_time() - c0, time.perf_counter() - t0
    print(json.dumps({"family": family, "size": size, "seconds": seconds, "wall": wall, "counts": counts}))


def _measure(family: str, size: int, timeout: float) -> float | None:
    """Seconds for one case, or ``None`` when it ran past ``timeout``."""
    cmd = [sys.executable, __file__, "--child", family, str(size)]
    try:
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 10, check=False)
    except subprocess.TimeoutExpired:
        return None
    if done.returncode != 0:
        raise SystemExit(f"{family} @ {size}: child failed\n{done.stderr[-3000:]}")
    seconds = float(json.loads(done.stdout.strip().splitlines()[-1])["seconds"])
    return None if seconds > timeout else seconds


def _fmt(value: float | None, timeout: float, skipped: bool = False) -> str:
    if skipped:
        return "skipped"
    return f">{timeout:.0f} s (timeout)" if value is None else f"{value:.3f} s"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", action="append", help="only these families (repeatable)")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="comma-separated byte sizes")
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per case before giving up")
    parser.add_argument("--check", action="store_true", help=f"exit 1 if a 1 MB case takes over {BUDGET_S} s")
    parser.add_argument("--list", action="store_true", help="print the families and exit")
    parser.add_argument("--child", nargs=2, metavar=("FAMILY", "SIZE"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(args.child[0], int(args.child[1]))
        return 0
    if args.list:
        for name, unit in FAMILIES.items():
            print(f"{name:22} {(unit.__doc__ or '').strip() if callable(unit) else repr(unit[:60])}")
        return 0
    families = args.family or list(FAMILIES)
    unknown = set(families) - set(FAMILIES)
    if unknown:
        parser.error(f"unknown families: {', '.join(sorted(unknown))}")
    sizes = [int(s) for s in args.sizes.split(",")]
    results: dict[str, dict[int, float | None]] = {}
    print(f"{'family':20}" + "".join(f"{size:>20,}" for size in sizes) + "   growth (last/previous)")
    for family in families:
        row: dict[int, float | None] = {}
        cells = []
        timed_out = False
        for size in sizes:
            if timed_out:
                cells.append(_fmt(None, args.timeout, skipped=True))
                continue
            row[size] = _measure(family, size, args.timeout)
            timed_out = row[size] is None
            cells.append(_fmt(row[size], args.timeout))
        results[family] = row
        growth = _growth(row, sizes)
        print(f"{family:20}" + "".join(f"{c:>20}" for c in cells) + f"   {growth}", flush=True)
    print()
    over = False
    for size in sizes:
        times = {f: r.get(size, "skipped") for f, r in results.items()}
        measured = {f: t for f, t in times.items() if isinstance(t, float)}
        lost = sorted(f for f, t in times.items() if not isinstance(t, float))
        if measured:
            worst = max(measured, key=lambda f: measured[f])
            line = f"worst at {size:>9,} bytes: {measured[worst]:.3f} s ({worst})"
        else:
            line = f"worst at {size:>9,} bytes: n/a"
        if lost:
            line += f"; timed out or skipped: {', '.join(lost)}"
        print(line)
        if (
            size == max(sizes)
            and size >= 1_000_000
            and (lost or any(t > BUDGET_S for t in measured.values()))
        ):
            over = True
    if len(sizes) >= 2:
        a, b = sizes[-2], sizes[-1]
        ta = [r[a] for r in results.values() if isinstance(r.get(a), float)]
        tb = [r[b] for r in results.values() if isinstance(r.get(b), float)]
        if ta and tb and len(tb) == len(results) and max(ta) > 0:
            print(
                f"growth of the worst case, {b:,} / {a:,} bytes: {max(tb) / max(ta):.1f}x (linear: {b / a:.0f}x)"
            )
    if args.check and max(sizes) >= 1_000_000:
        print(f"budget: every 1 MB case under {BUDGET_S} s: {'OVER BUDGET' if over else 'ok'}")
        return 1 if over else 0
    return 0


def _growth(row: dict[int, float | None], sizes: list[int]) -> str:
    measured = [(s, row.get(s)) for s in sizes]
    pairs = [
        f"{b / a:.0f}x size: {tb / ta:.1f}x"
        for (a, ta), (b, tb) in pairwise(measured)
        if isinstance(ta, float) and isinstance(tb, float) and ta > 0
    ]
    return "; ".join(pairs[-1:]) if pairs else "-"


if __name__ == "__main__":
    raise SystemExit(main())
