"""Pairing in the layouts chat models write: tables, bold-name bullets, cards, reference links, footnotes.

The golden table (tests/golden/layouts.yaml, written before the rules) is checked row by row against the
sample directory; the properties build each layout from directory entries and check that every contact
pairs with the organization of its own row, card or link, whatever the order of rows and columns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import event, given, settings
from hypothesis import strategies as st

from grounding_eval.verifier.directory import Organization
from grounding_eval.verifier.setup import load_resources
from grounding_eval.verifier.urls import extract_urls
from grounding_eval.verifier.verdict import VerifierResources, verify

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "sample"
GOLDEN = REPO / "tests" / "golden" / "layouts.yaml"
RESOURCES: VerifierResources = load_resources(
    allowlist=SAMPLE / "allowlist.txt",
    orgs=SAMPLE / "organizations.yaml",
    liveness="offline",
    snapshot=SAMPLE / "liveness_snapshot.fixture.csv",
    cache_path=None,
)
# Organizations with a phone and a domain, named by a name that names no other one ("Legal Aid of West
# Virginia" must not be read inside a longer name).
ORGS: list[Organization] = [o for o in RESOURCES.directory.organizations if o.phones and o.domains]
SETTINGS = settings(max_examples=60, deadline=None)


def _report(text: str) -> dict[str, Any]:
    return verify(text, jurisdiction=None, sources=[], resources=RESOURCES).to_json()


def _rows() -> list[Any]:
    rows = yaml.safe_load(GOLDEN.read_text(encoding="utf-8"))
    return [pytest.param(r, id=r["id"]) for r in rows]


class TestGoldenLayouts:
    """Every row of the layout golden table holds."""

    @pytest.mark.parametrize("row", _rows())
    def test_row(self, row: dict[str, Any]) -> None:
        """Each number and URL pairs with the organization a careful reader pairs it with."""
        report = _report(row["text"])
        phones = [{k: p[k] for k in ("raw", "paired_org", "owner", "status")} for p in report["phones"]]
        assert phones == row["phones"], row["note"]
        assert report["url_orgs"] == row["url_orgs"], row["note"]

    def test_table_is_large_enough(self) -> None:
        """The acceptance asks for at least 30 rows, correct and wrong pairings among them."""
        rows = yaml.safe_load(GOLDEN.read_text(encoding="utf-8"))
        statuses = {f["status"] for r in rows for f in r["phones"] + r["url_orgs"]}
        assert len(rows) >= 30
        assert {"MATCH", "MISMATCH", "MISATTRIBUTED", "UNPAIRED"} <= statuses


def _expected(org: Organization, contact_owner: Organization) -> str:
    return "MATCH" if org is contact_owner else "MISMATCH"


pairs = st.lists(st.tuples(st.sampled_from(ORGS), st.sampled_from(ORGS)), min_size=1, max_size=6)
distinct_pairs = st.lists(st.sampled_from(ORGS), min_size=1, max_size=6, unique=True).flatmap(
    lambda orgs: st.tuples(*[st.tuples(st.just(o), st.sampled_from(ORGS)) for o in orgs]).map(list)
)


class TestTableProperty:
    """A table row's number is given for the row's organization, wherever its column is."""

    @SETTINGS
    @given(rows=pairs, order=st.permutations(["org", "phone", "site"]), pipes=st.booleans())
    def test_rows(self, rows: list[tuple[Organization, Organization]], order: list[str], pipes: bool) -> None:
        """Each row pairs its number with its own name cell (MATCH or MISMATCH by the number's owner)."""
        header = {"org": "Organization", "phone": "Phone", "site": "Website"}
        lines = [[header[c] for c in order], ["---"] * 3]
        for org, other in rows:
            cells = {"org": org.name, "phone": other.phones[0], "site": f"https://www.{org.domains[0]}"}
            lines.append([cells[c] for c in order])
        edge = "|" if pipes else ""
        text = "\n".join(f"{edge} {' | '.join(cells)} {edge}".strip() for cells in lines) + "\n"
        report = _report(text)
        event(f"organization column {order.index('org') + 1}")
        assert [p["paired_org"] for p in report["phones"]] == [org.name for org, _ in rows]
        assert [p["status"] for p in report["phones"]] == [_expected(org, other) for org, other in rows]
        assert [u["status"] for u in report["url_orgs"]] == ["MATCH"] * len(rows)


class TestCardProperty:
    """A card's name owns the contact lines under it, and a next card never inherits it."""

    @SETTINGS
    @given(
        cards=pairs,
        style=st.sampled_from(["### {}", "**{}**", "1. **{}**", "## {}\n"]),
        filler=st.booleans(),
    )
    def test_cards(self, cards: list[tuple[Organization, Organization]], style: str, filler: bool) -> None:
        """Each card's phone (one or two lines under its name) is given for that card's organization."""
        indent = "   " if style.startswith("1.") else ""
        blocks = []
        for org, other in cards:
            lines = [style.format(org.name)]
            if filler:
                lines.append(f"{indent}- Free civil legal help")
            lines.append(f"{indent}- Phone: {other.phones[0]}")
            blocks.append("\n".join(lines))
        text = ("\n\n" if style.startswith("**") else "\n").join(blocks) + "\n"
        report = _report(text)
        event(f"style {style!r}, filler line {filler}")
        assert [p["paired_org"] for p in report["phones"]] == [org.name for org, _ in cards]
        assert [p["status"] for p in report["phones"]] == [_expected(org, other) for org, other in cards]


class TestReferenceProperty:
    """A reference definition's URL is credited to the text of the link that uses it."""

    @SETTINGS
    @given(
        links=distinct_pairs,
        order=st.randoms(use_true_random=False),
        style=st.sampled_from(["[{}][{}]", "[{}]"]),
    )
    def test_definitions_in_any_order(
        self, links: list[tuple[Organization, Organization]], order: Any, style: str
    ) -> None:
        """Definitions listed in any order below the text: each URL takes its own link's text."""
        labels = [str(n + 1) if "][" in style else org.name for n, (org, _) in enumerate(links)]
        unique = len({label.casefold() for label in labels}) == len(labels)
        uses = [style.format(org.name, label) for (org, _), label in zip(links, labels, strict=True)]
        definitions = [
            f"[{label}]: https://www.{other.domains[0]}"
            for (_, other), label in zip(links, labels, strict=True)
        ]
        shuffled = list(zip(definitions, links, strict=True))
        order.shuffle(shuffled)
        text = "See " + ", ".join(uses) + ".\n\n" + "\n".join(d for d, _ in shuffled) + "\n"
        report = _report(text)
        event(f"{'numbered' if '][' in style else 'shortcut'} references")
        assert unique  # (distinct organizations, so distinct shortcut labels)
        expected = [("MATCH" if org is other else "MISATTRIBUTED", org.name) for _, (org, other) in shuffled]
        assert [(u["status"], u["paired_org"]) for u in report["url_orgs"]] == expected


class TestBulletAndFootnoteProperty:
    """A bold-name bullet and a footnote give their number for the organization they name first."""

    @SETTINGS
    @given(
        entries=pairs,
        style=st.sampled_from(["- **{org}** — free help; call {phone}", "[^{n}]: {org}. Phone: {phone}"]),
    )
    def test_entries(self, entries: list[tuple[Organization, Organization]], style: str) -> None:
        """Each line's number pairs with that line's organization, never the line above's."""
        lines = [
            style.format(org=org.name, phone=other.phones[0], n=n) for n, (org, other) in enumerate(entries)
        ]
        prefix = (
            "Sources." + "".join(f"[^{n}]" for n in range(len(entries))) + "\n\n" if "[^" in style else ""
        )
        report = _report(prefix + "\n".join(lines) + "\n")
        event("footnotes" if prefix else "bullets")
        assert [p["paired_org"] for p in report["phones"]] == [org.name for org, _ in entries]
        assert [p["status"] for p in report["phones"]] == [_expected(org, other) for org, other in entries]


class TestRepeatedLinkText:
    """A link whose text is its own URL is one URL."""

    @SETTINGS
    @given(
        org=st.sampled_from(ORGS),
        shown=st.sampled_from(
            ["https://www.{}", "http://{}", "{}", "www.{}/", "<https://{}>", "`https://{}`"]
        ),
        dest=st.sampled_from(["https://www.{}", "https://{}/", "http://www.{}"]),
    )
    def test_one_mention(self, org: Organization, shown: str, dest: str) -> None:
        """Inline and reference links alike: the destination, once, with the text as its link text."""
        domain = org.domains[0]
        for text in (
            f"[{shown.format(domain)}]({dest.format(domain)})",
            f"[{shown.format(domain)}][1]\n\n[1]: {dest.format(domain)}",
        ):
            mentions = extract_urls(text)
            event("reference" if "[1]:" in text else "inline")
            assert [m.raw for m in mentions] == [dest.format(domain)], text


_SOUP = [
    " Legal Aid Chicago ", " Lone Star Legal Aid ", " LANWT ", " (312) 341-1070 ", " (888) 529-5277 ", " lsc.gov ",
    " https://www.pslegal.org ", "\n", "\n\n", "\n- ", "\n  - ", "\n1. ", "\n### ", "\n---\n", "\n===\n", "**", "*",
    "_", "|", "\n|---|---|\n", " | ", "[", "]", "[1]", "[1]: ", "\n[1]: https://www.lsc.gov", "[^1]", "\n[^1]: ",
    "](", ")", "(", ":", " ", "; ", ". ", "<", ">", "`", "\\", "#", "Phone:", "Contact",
]  # fmt: skip


class TestMarkdownSoup:
    """Any mix of layout markers verifies without error, and pairs only with organizations it names."""

    @settings(max_examples=300, deadline=None)
    @given(
        pieces=st.lists(
            st.one_of(st.sampled_from(_SOUP), st.sampled_from(_SOUP[:7])),  # names and contacts half the time
            max_size=60,
        )
    )
    def test_soup(self, pieces: list[str]) -> None:
        """Every paired organization is one the text names by name (no pairing out of thin air)."""
        text = "".join(pieces)
        report = _report(text)
        named = {m.org.name for m in RESOURCES.directory.find_mentions(text)}
        paired = {f["paired_org"] for f in report["phones"] + report["url_orgs"]} - {None}
        event("something paired" if paired else "nothing paired")
        assert paired <= named, text
