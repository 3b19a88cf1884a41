"""The HTML report at scale (issue 19): page size bounded and linear in the number of conditions, the
condition pairs capped with a visible note, long and hostile labels clipped and escaped
(``tests/golden/html_labels.yaml``)."""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from grounding_eval.analysis import html_report
from grounding_eval.cli import main
from tests.analysis.rows import REPO, row, write

GOLDEN = yaml.safe_load((REPO / "tests" / "golden" / "html_labels.yaml").read_text(encoding="utf-8"))["cases"]


def _page(tmp_path: Path, rows: list[dict[str, Any]], name: str = "report") -> bytes:
    results = write(tmp_path / f"{name}.json", rows)
    out = tmp_path / f"{name}.html"
    assert main(["report", str(results), "--html", str(out), "-o", str(tmp_path / f"{name}.txt")]) == 0
    return out.read_bytes()


def _study(conditions: int, items: int = 2) -> list[dict[str, Any]]:
    """``items`` items under each of ``conditions`` conditions (K0000, K0001, …), one model, with a
    composite, a verifier score and three judge verdicts per row."""
    verdicts = {"clear_next_steps": "Yes", "cites_sources": "Partial", "harmful_advice": "No"}
    return [
        row(f"i{i}", f"K{c:04d}", composite=((i + c) % 5) / 4, scores={"deterministic_verifier_score": 1.0},
            verdicts=verdicts, success=(i + c) % 2 == 0)
        for c in range(conditions)
        for i in range(items)
    ]  # fmt: skip


class TestManyConditions:
    """1,000 conditions made a 323 MB page (every pair of conditions listed, quadratic)."""

    def test_a_thousand_conditions_make_a_small_page_that_grows_linearly(self, tmp_path: Path) -> None:
        small = _page(tmp_path, _study(500), "small")
        big = _page(tmp_path, _study(1000), "big")
        assert len(big) < 5_000_000, len(big)
        # The figures draw the first 12 conditions either way: the same size; the rest is linear.
        figures = [re.findall(rb"<figure>.*?</figure>", page, re.S) for page in (small, big)]
        assert [len(f) for f in figures] == [4, 4]  # pass rate, mean composite, effects, verdicts
        assert abs(sum(map(len, figures[1])) - sum(map(len, figures[0]))) < 0.02 * sum(map(len, figures[0]))
        assert len(big) / len(small) < 2.4, (len(small), len(big))  # never more than linear
        # A table with a row per condition grows linearly (the criteria counts, 3 per condition, are capped).
        rates = [
            len(page.split(b'<section id="rates">', 1)[1].split(b"</section>", 1)[0]) for page in (small, big)
        ]
        assert 1.6 < rates[1] / rates[0] < 2.4, rates  # linear: twice the conditions
        page = big.decode("utf-8")
        # Pairs: 1000·999/2 = 499,500, of which the first 15 (neighbours first: K0001 − K0000 … K0015 −
        # K0014) are listed.
        assert f"{html_report.MAX_PAIRS} of 499,500 condition pairs listed" in page
        assert "499,485 left out</strong>, from K0016 − K0015 on" in page
        effects = page.split('<section id="effects">', 1)[1].split("</section>", 1)[0]
        listed = re.findall(r"<td>(K\d{4}) − (K\d{4})</td>", effects)
        assert len(set(listed)) == html_report.MAX_PAIRS
        assert ("K0001", "K0000") in listed and ("K0015", "K0014") in listed
        assert ("K0016", "K0015") not in listed and ("K0002", "K0000") not in listed
        # Charts draw 12 conditions and say so; the rates table lists its first 1,000 rows and names the rest.
        assert f"The charts draw the first {html_report.MAX_CHARTED} of 1,000 conditions" in page
        assert "<strong>988 are not drawn</strong>" in page
        rates = page.split('<section id="rates">', 1)[1].split("</section>", 1)[0]
        assert rates.count('<td class="num">') >= 1000 * 4 and "K0999" in rates

    def test_tables_past_the_row_cap_say_how_many_more(self, tmp_path: Path) -> None:
        page = _page(tmp_path, _study(1100, items=1)).decode("utf-8")
        rates = page.split('<section id="rates">', 1)[1].split("</section>", 1)[0]
        assert (
            "The first 1,000 rows of 1,100 are shown; the other 100: <code>report --rates --json</code>"
            in rates
        )
        assert "K0999" in rates and "K1000" not in rates


def _hostile_rows(case: dict[str, Any]) -> list[dict[str, Any]]:
    label = case["label"] * case.get("repeat", 1)
    other = "C1"
    if case["field"] == "condition":
        other = label
    provider = label if case["field"] == "provider" else "model-a"
    criterion = label if case["field"] == "criterion" else "clear_next_steps"
    return [
        row(item, condition, composite=value, provider=provider, verdicts={criterion: "Yes"})
        for item, condition, value in (("i1", "C0", 0.25), ("i1", other, 0.75), ("i2", "C0", 0.5), ("i2", other, 1.0))
    ]  # fmt: skip


@pytest.mark.parametrize("case", GOLDEN, ids=lambda c: c["id"])
def test_hostile_labels(tmp_path: Path, case: dict[str, Any]) -> None:
    raw = _page(tmp_path, _hostile_rows(case))
    page = raw.decode("utf-8")  # strict: the page is valid UTF-8
    assert "<script" not in page
    for text in case["present"]:
        assert text in page, text
    for text in case["absent"]:
        assert text not in page, text
    if "max_bytes" in case:
        assert len(raw) < case["max_bytes"], len(raw)
    label = case["label"] * case.get("repeat", 1)
    label = label.replace("\ud83d", "\ufffd")
    spans = [
        (html.unescape(title), html.unescape(shown))
        for title, shown in re.findall(r'<span title="([^"]*)">([^<]*)</span>', page)
        if html.unescape(title).startswith(label[:20])
    ]
    titles = [
        html.unescape(t)
        for t in re.findall(r"<title>([^<]*)</title>", page)
        if html.unescape(t).startswith(label[:20])
    ]
    if case["clipped"]:
        assert spans or titles, "a clipped label carries its whole text in a title"
        for title, shown in spans:
            assert len(shown) <= html_report.LABEL_CHARS and shown.endswith("…"), shown
            assert label.startswith(shown[:-1])
            assert title == (
                label if len(label) <= html_report.TITLE_CHARS else label[: html_report.TITLE_CHARS - 1] + "…"
            )
        for title in titles:
            assert len(title) <= html_report.TITLE_CHARS + 200, len(title)
    else:
        assert not spans, "a short label is shown whole"
