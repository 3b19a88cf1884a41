"""``grounding-eval report … --html FILE``: one self-contained HTML page a research team can show partners.

No script, no stylesheet or font from the network: the figures are inline SVG drawn with matplotlib
(:mod:`grounding_eval.analysis.figures`, the same figures ``report --figures DIR`` writes as SVG and PDF),
the tables are plain HTML, the style is one ``<style>`` block. Everything on the page is an aggregate
(examples are capped per finding type) but the unsafe answers, one line each (at most :data:`MAX_ROWS`),
so its size does not grow with the number of rows beyond those and a few listed examples; nor
quadratically with the number of conditions: at most :data:`MAX_PAIRS` condition pairs per model and
round are computed and listed, the figures draw the first :data:`MAX_CHARTED`
conditions, a table shows :data:`MAX_ROWS` rows, and each says visibly what it left out and which command
lists it all. Long labels are clipped with "…", the whole text (to :data:`TITLE_CHARS`) in a title; every
text is escaped (in the figures by matplotlib's SVG writer, mathtext off). Sections, in order:

1. every unsafe answer (item, condition, model) with the check that failed it and what was found, or
   "No unsafe answers" with how many rows were checked and how many were undecided;
2. pass rate and mean composite per round × condition × model (bars with 95 % intervals);
3. paired condition effects (forest plot, the headline table, every metric's table folded away);
4. per-criterion verdict shares per condition (good always green, No = good criteria too);
5. verifier findings by type (counts and examples);
6. judge versus verifier on the Round 3 safety checks;
7. docs-QA results by question type;
8. calibration against people (when a graded sheet is given);
9. provenance: files, eval ids, dates, config descriptions, prompts, providers, rubric versions and their
   provenance, datasets and record counts.
"""

from __future__ import annotations

import datetime as dt
import html
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from grounding_eval.analysis.effects import (
    LENGTH_METRICS,
    Effect,
    ci_text,
    condition_order,
    condition_pairs,
    decisions,
    declared_primary,
    interval_note,
    question_type_groups,
)
from grounding_eval.analysis.figures import MAX_CHARTED, MAX_EFFECTS, Chart, report_charts, verdict_kinds
from grounding_eval.analysis.grounding_records import grounding_records
from grounding_eval.analysis.reliability import answer_length_table, judge_reliability
from grounding_eval.analysis.report_data import MAX_PAIRS, ReportData
from grounding_eval.analysis.report_row import ReportRow
from grounding_eval.analysis.summary import (
    AGREEMENT_CELLS,
    JUDGE_CALL_COLUMNS,
    JUDGE_CALLS_NOTE,
    SPLIT_COLUMNS,
    PassRate,
    Results,
    findings_table,
    format_rate,
    judge_call_cells,
    judge_calls_table,
    listed_text,
    outage_note,
    safety_agreement,
    safety_split_table,
)
from grounding_eval.analysis.unsafe import unsafe_answers
from grounding_eval.encodable import utf8_encodable
from grounding_eval.errors import DataError, terminal_safe
from grounding_eval.files import write_text_atomic
from grounding_eval.judge.rubric import load_rubric, rubric_path

__all__ = ["MAX_CHARTED", "MAX_PAIRS", "render_html", "write_html"]

MAX_EXAMPLES = 3  # examples listed per (check, status) in the findings section
MAX_LISTED = 10  # rows listed per (safety check, disagreement cell)
MAX_ROWS = 1000  # rows per table; past it, a note says how many more and where they are
LABEL_CHARS = 60  # a label (model, condition, criterion, metric …) longer than this is clipped with "…"
CELL_CHARS = 1200  # any other table cell (a reason, a description) longer than this is clipped
TITLE_CHARS = 2000  # a clipped text's title attribute holds it whole up to this length
_STYLE = """

body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d1d1f;background:#fafafa}
main{max-width:1100px;margin:0 auto;padding:24px 32px 64px;background:#fff}
h1{font-size:26px;margin:8px 0 4px}
h2{font-size:20px;margin:36px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:16px;margin:20px 0 6px}p.lead{color:#555;margin-top:0}p.note{color:#555;font-size:13px}
table{border-collapse:collapse;margin:8px 0 16px;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f2f2f2}td.num{text-align:right;font-variant-numeric:tabular-nums}
nav a{margin-right:12px;font-size:13px}figure{margin:8px 0 16px}
figure svg{display:block;max-width:100%;height:auto}
details{margin:8px 0 16px}summary{cursor:pointer;font-weight:600}
code{font-size:12px;background:#f4f4f4;padding:0 3px}.warn{color:#b2182b;font-weight:600}
.nw{white-space:nowrap}.any{overflow-wrap:anywhere}
.grid{display:flex;flex-wrap:wrap;gap:0 20px}table.confusion{font-size:12px}
table.confusion th,table.confusion td{padding:1px 5px}table.confusion caption{text-align:left;font-weight:600}
"""


def write_html(loaded: Sequence[Results], path: Path, *, sheet: Path | None = None) -> None:
    """Write the report for ``loaded`` (one or more results files) to ``path``."""
    page = render_html(loaded, sheet=sheet)
    try:
        write_text_atomic(path, page)  # an existing report is replaced whole or kept, never emptied
    except OSError as exc:
        raise DataError(path, f"cannot write the HTML report ({exc.strerror or exc})") from None


def render_html(
    loaded: Sequence[Results],
    *,
    sheet: Path | None = None,
    charts: Sequence[Chart] | None = None,
    data: ReportData | None = None,
) -> str:
    """The whole page as a string, UTF-8 encodable (a lone surrogate in a label is shown as U+FFFD).

    ``charts`` are the figures to embed (:func:`~grounding_eval.analysis.figures.report_charts` of the
    same rows, when the caller drew them already); drawn here otherwise. ``data``: the same rows'
    :class:`ReportData` when the caller made it (with the study's primary endpoint).
    """
    rows = [row for results in loaded for row in results.rows]
    data = ReportData(rows, primary=declared_primary(rows)) if data is None else data
    drawn: dict[str, list[str]] = defaultdict(list)
    for index, chart in enumerate(report_charts(data) if charts is None else charts):
        drawn[chart.section].append(f"<figure>{chart.inline_svg(index)}</figure>")
    sections = [
        ("unsafe", "Unsafe answers", _unsafe_section(loaded)),
        ("rates", "Pass rate and composite", _rates_section(data, drawn["rates"])),
        ("effects", "Condition effects", _effects_section(data, drawn["effects"])),
        ("criteria", "Verdicts per criterion", _criteria_section(data, drawn["criteria"])),
        ("findings", "Verifier findings", _findings_section(rows)),
        ("safety", "Judge vs verifier on safety", _safety_section(rows)),
        ("docsqa", "Docs-QA by question type", _question_type_section(data, drawn["docsqa"])),
        ("records", "C1 and C1.5 records", _records_section(rows)),
        ("length", "Answer length", _length_section(data)),
        ("reliability", "Judge reliability", _reliability_section(data)),
        ("calibration", "Calibration against people", _calibration_section(loaded, sheet)),
        ("provenance", "Provenance", _provenance_section(loaded)),
    ]
    nav = "".join(f'<a href="#{sid}">{_e(title)}</a>' for sid, title, _ in sections)
    body = "".join(
        f'<section id="{sid}"><h2>{_e(title)}</h2>{content}</section>' for sid, title, content in sections
    )
    unscored = sum(r.unscored for r in rows)
    generated = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return utf8_encodable(
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>grounding-eval report</title><style>{_STYLE}</style></head><body><main>"
        "<h1>grounding-eval report</h1>"
        f'<p class="lead">{len(rows)} result rows from {len(loaded)} promptfoo results file(s); '
        f"{unscored} unscored (counted, never averaged in). Generated {generated} with no model calls.</p>"
        f"<nav>{nav}</nav>{body}</main></body></html>"
    )


def _e(value: Any) -> str:
    """``value`` escaped for HTML, its control and invisible characters shown as escapes (``\\x1b``), as
    the text output shows them (a kind or status name from a results file is not ours)."""
    return html.escape(terminal_safe(value, lines=True), quote=True)


class _Html(str):
    """Text already escaped (a clipped label with its title): :func:`_table` puts it in as it is."""


def _clip(value: Any, limit: int = LABEL_CHARS) -> str:
    """``value`` escaped, or, when longer than ``limit``, its start and "…" in a span whose title is
    the whole text (itself clipped past :data:`TITLE_CHARS`)."""
    text = str(value)
    if len(text) <= limit:
        return _e(text)
    return _Html(f'<span title="{_title(text)}">{_e(_cut(text, limit))}</span>')


def _title(text: str) -> str:
    """``text`` escaped for a title attribute, clipped past :data:`TITLE_CHARS`."""
    return _e(_cut(text, TITLE_CHARS))


def _cut(text: str, limit: int) -> str:
    """The first ``limit − 1`` characters and "…" (``text`` itself when it fits)."""
    if len(text) <= limit:
        return text
    return text[: limit - 1] + "…"


def _f(value: float | None, fmt: str = ".3f") -> str:
    return "–" if value is None else format(value, fmt)


def _table(
    head: Sequence[str],
    body: Sequence[Sequence[Any]],
    *,
    cls: str = "",
    labels: int = 0,
    whole: str = "report --json",
) -> str:
    """An HTML table; the first ``labels`` columns are labels (clipped at :data:`LABEL_CHARS`), other
    text at :data:`CELL_CHARS`; cells already rendered (:class:`_Html`) go in as they are. At most
    :data:`MAX_ROWS` rows, then a note naming the command (``whole``) that lists them all."""
    more = len(body) - MAX_ROWS
    body = body[:MAX_ROWS]
    th = "".join(f"<th>{_clip(h)}</th>" for h in head)
    trs = "".join(
        "<tr>"
        + "".join(
            f"<td>{c}</td>"
            if isinstance(c, _Html)
            else f'<td class="num">{_e(c)}</td>'
            if isinstance(c, int | float) or _numeric(c)
            else f"<td>{_clip(c, LABEL_CHARS if k < labels else CELL_CHARS)}</td>"
            for k, c in enumerate(row)
        )
        + "</tr>"
        for row in body
    )
    note = (
        f'<p class="warn">The first {MAX_ROWS:,} rows of {MAX_ROWS + more:,} are shown; the other '
        f"{more:,}: <code>{_e(whole)}</code>.</p>"
        if more > 0
        else ""
    )
    return f'<table class="{cls}"><thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>{note}'


def _numeric(text: Any) -> bool:
    return (
        isinstance(text, str)
        and bool(text)
        and text.lstrip("+-–").replace(".", "", 1).replace("%", "").isdigit()
    )


def _unsafe_section(loaded: Sequence[Results]) -> str:
    """Every answer judged unsafe and its deciding reason (:func:`~grounding_eval.analysis.unsafe.
    unsafe_answers`), first on the page: a legal-aid lead's first question. The findings quote the
    answer (a URL, an organisation's name, the judge's reason): escaped like every other text."""
    found = unsafe_answers([(r.path, r.rows) for r in loaded])
    several = len(loaded) > 1  # the same item, condition and model can be in two files: name the file

    def who(a: dict[str, Any]) -> list[Any]:
        # Unbroken (an item id cut at its hyphens reads as two), the round as a label, never right-aligned
        # as a number ("3" under "1a"); the file by its name, the path as given in its title.
        cells = [_Html(f'<span class="nw">{_clip(a[k])}</span>') for k in ("round", "query_id", "condition",
                                                                           "provider")]  # fmt: skip
        if several:
            cells.insert(0, _Html(f'<span title="{_title(a["file"])}">{_clip(Path(a["file"]).name)}</span>'))
        return cells

    ids = [*(["file"] if several else []), "round", "item", "condition", "model"]
    counts = (
        f"{found['rows']:,} rows: {found['checked']:,} checked, {found['undecided']:,} undecided "
        "(a safety check no side answered)"
    )
    if not found["answers"]:
        lead = f'<p class="lead"><strong>No unsafe answers.</strong> {_e(counts)}.</p>'
        table = ""
    else:
        n = found["unsafe"]
        lead = (
            f'<p class="lead"><strong class="warn">{n:,} unsafe answer{"s" if n != 1 else ""}</strong> of '
            f"{_e(counts)}.</p>"
        )
        body = [
            [
                *who(a),
                _Html("<br>".join(_e(c["check"]) for c in a["checks"])),
                _Html(  # a long URL breaks anywhere rather than push the table past the page
                    '<span class="any">'
                    + "<br>".join(
                        _clip("; ".join(c["findings"]) or "(no finding recorded)", CELL_CHARS)
                        for c in a["checks"]
                    )
                    + "</span>"
                ),
            ]
            for a in found["answers"]
        ]
        table = _table(
            [*ids, "check No", "deciding reason"],
            body,
            labels=len(ids),
            whole="report --json (its unsafe key)",
        )
    notes = (
        '<p class="note">Unsafe: a safety check found No by the rule that fails the row (Round 3: the side its '
        "<code>safety_source</code> names, the verifier by default; Rounds 1a–2b: any verifier hard "
        "failure), unless a person rated the row in the viewer. The reason is what the deciding side "
        "found.</p>"
    )
    if found["judge_no_not_counted"]:
        notes += (
            f'<p class="note">Not listed: {found["judge_no_not_counted"]:,} row(s) where the judge said No on a '
            'safety check its <code>safety_source</code> does not take from the judge (see <a href="#safety">'
            "Judge vs verifier on safety</a>).</p>"
        )
    undecided = found["undecided_rows"]
    if undecided:
        listed = [[*who(u), u["why"]] for u in undecided]
        notes += (
            f"<details><summary>The {len(undecided):,} undecided row(s) and why</summary>"
            + _table(
                [*ids, "why undecided"],
                listed,
                labels=len(ids),
                whole="report --json (its unsafe key)",
            )
            + "</details>"
        )
    return lead + table + notes


def _rates_section(data: ReportData, figures: Sequence[str]) -> str:
    rates = data.rates
    if not rates:
        return "<p>No rows.</p>"
    comp_ci = data.composite_ci
    body = [
        [
            r["round"],
            r["condition"],
            r["provider"],
            r["n"],
            r["passed"],
            format_rate(r["pass_rate"]),
            f"[{_f(r['ci_low'], '.2f')}, {_f(r['ci_high'], '.2f')}]",
            _f(r["mean_composite"]),
            "[{}, {}]".format(
                *(_f(v) for v in comp_ci.get((r["round"], r["condition"], r["provider"]), (None, None)))
            ),
            r["unscored"],
            r["unsafe_no_composite"],
        ]
        for r in rates
    ]
    selected = "".join(
        f'<p class="note">{_e(" ".join((r["round"], r["condition"], r["provider"])))}: '
        + _e(outage_note(PassRate(r["rows"], r["n"], r["passed"], r["unsafe_no_composite"])))
        + "</p>"
        for r in rates
        if r["selected_by_outage"]
    )
    return (
        _not_charted([r["condition"] for r in rates])
        + "".join(figures)
        + _table(
            [
                "round",
                "condition",
                "model",
                "scored rows",
                "passed",
                "pass rate",
                "95 % Wilson",
                "mean composite",
                "95 % interval",
                "unscored",
                "unsafe, no composite",
            ],
            body,
            labels=3,
            whole="report --rates --json",
        )
        + '<p class="note">Pass rate = passed ÷ scored rows (n/a: none scored); unscored rows (errors, '
        "unscorable judge replies) are counted apart, never as failures. The item is the unit: the Wilson "
        "interval counts an item once however many rows it has (--repeat), and the mean composite is the mean "
        "of the items' means, its interval the one the sign-flip test inverts. "
        "A row the verifier found unsafe is a failure even when the judge gave no verdict (it has no "
        "composite, so it is not in the mean composite; counted in its own column).</p>" + selected
    )


def _not_charted(conditions: Sequence[str], rest: str = "the table lists them") -> str:
    """A visible note of how many conditions the figures do not draw (empty when they draw every one)."""
    ordered = condition_order(conditions)
    if len(ordered) <= MAX_CHARTED:
        return ""
    return (
        f'<p class="warn">The charts draw the first {MAX_CHARTED} of {len(ordered):,} conditions (study '
        f"order, up to {_clip(ordered[MAX_CHARTED - 1])}); <strong>{len(ordered) - MAX_CHARTED:,} are not "
        f"drawn</strong>: {rest}.</p>"
    )


_EFFECT_HEAD = ["model", "round", "to − from", "metric", "n", "mean diff", "95 % CI", "p", "p Holm", "family",
                "missing", "unscored / no score"]  # fmt: skip


def _effect_rows(effects: Sequence[Effect]) -> list[list[Any]]:
    return [
        [
            e.provider,
            e.round,
            _Html(f"{_clip(e.to)} − {_clip(e.from_)}"),
            f"{e.metric} (primary)" if e.primary else e.metric,
            e.n,
            _f(e.mean_diff, "+.3f"),
            ci_text(e),
            _f(e.p_value, ".3g") + (" (exact McNemar)" if e.test != "sign-flip" else ""),
            _f(e.p_holm, ".3g"),
            e.family,
            e.n_missing,
            e.n_unscored,
        ]
        for e in effects
    ]


def _effects_section(data: ReportData, figures: Sequence[str]) -> str:
    effects = data.effects
    if not effects:
        return "<p>No model has rows under two conditions: nothing to compare.</p>"
    headline = data.headline_effects
    drawn = sum(e.mean_diff is not None and e.ci_low is not None for e in headline)
    more = (
        f'<p class="warn">The forest plot draws the first {MAX_EFFECTS} of {drawn:,} effects; the table '
        "below lists them all.</p>"
        if drawn > MAX_EFFECTS
        else ""
    )
    # The headline scores are what a reader decides on; the per-criterion and per-check effects (about
    # 70 rows for one model's Round 3 study) are there for whoever asks, folded away.
    return (
        '<p class="note">Mean per-item difference (later condition − earlier), paired by item, an item\'s '
        f"repeats averaged first; {_e(interval_note())} pass: the difference of the items' pass rates. "
        "Green, pointing up: the interval is above 0; vermillion, pointing down: below. Items missing a "
        "condition or unscored under one are left out and counted.</p>"
        + (
            f'<p class="lead">Primary endpoint: {_e(data.primary.text())}, every model (first in the tables, '
            "a Holm family of its own).</p>"
            if data.primary is not None
            else ""
        )
        + _pairs_left_out(data.rows)
        + "<h3>Composite, judge and verifier scores</h3>"
        + ("".join(figures) or "<p>No paired comparison has items scored under both conditions.</p>")
        + more
        + _table(_EFFECT_HEAD, _effect_rows(headline), labels=4)
        + f"<details><summary>Every metric: {len(effects):,} effects (each criterion and verifier check)"
        "</summary>"
        + _table(_EFFECT_HEAD, _effect_rows(effects), labels=4, whole="report --effects --json")
        + "</details>"
    )


def _length_section(data: ReportData) -> str:
    """The answers' length per condition and model, and the headline effects adjusted for it."""
    table = answer_length_table(data.rows)
    if not table:
        return "<p>No row has an answer.</p>"
    lengths = _table(
        ["round", "condition", "model", "answers", "mean characters", "mean words", "median words"],
        [
            [
                t["round"],
                t["condition"],
                t["provider"],
                t["rows"],
                f"{t['mean_chars']:.0f}",
                f"{t['mean_words']:.0f}",
                f"{t['median_words']:.0f}",
            ]
            for t in table
        ],
        labels=3,
    )
    shown = [
        e for e in data.effects
        if e.length is not None and (e.metric in LENGTH_METRICS or e.metric.endswith(".llm_judge_score"))
    ]  # fmt: skip
    adjusted = (
        _table(
            [
                "model",
                "round",
                "to − from",
                "metric",
                "n",
                "words diff",
                "mean diff",
                "at equal length",
                "95% t CI",
                "p (t)",
                "per 100 words",
            ],
            [
                [
                    e.provider,
                    e.round,
                    _Html(f"{_clip(e.to)} − {_clip(e.from_)}"),
                    e.metric,
                    e.length["n"],
                    f"{e.length['mean_words_diff']:+.1f}",
                    _f(e.mean_diff, "+.3f"),
                    f"{e.length['adjusted_diff']:+.3f}",
                    f"[{e.length['adjusted_ci_low']:+.3f}, {e.length['adjusted_ci_high']:+.3f}]",
                    f"{e.length['adjusted_p']:.3g}",
                    f"{e.length['slope_per_100_words']:+.3f}",
                ]
                for e in shown
                if e.length is not None
            ],
            labels=4,
            whole="report --effects --json",
        )
        if shown
        else "<p>No effect has 3 or more paired items with different length differences.</p>"
    )
    return (
        '<p class="note">Characters and words of each row\'s answer (<code>response.output</code>, the text '
        "the judge saw), every row with an answer.</p>"
        + lengths
        + "<h3>Effects adjusted for answer length</h3>"
        '<p class="note">Judges tend to favour longer answers. <em>At equal length</em>: the intercept of '
        "the items' differences regressed (least squares) on their differences in words, the effect the line "
        "predicts for answers of equal length, with its t interval; <em>per 100 words</em>: the slope. "
        "Shown beside the unadjusted effect, not instead of it; with few items, one item far from the others "
        "in length can decide the slope.</p>" + adjusted
    )


def _reliability_section(data: ReportData) -> str:
    """Test–retest and panel agreement per criterion, when ``rescore --retest`` / ``--panel`` wrote them."""
    found = judge_reliability(data.rows)
    if found is None:
        return (
            "<p>No row carries a second asking of the judge. <code>grounding-eval rescore RESULTS.json -o "
            "NEW.json --retest 0.2 --seed 1</code> asks the judge again for a fifth of the rows (its reply "
            "cache bypassed); <code>--panel ID[,ID...]</code> asks other judges on every row.</p>"
        )

    def ci(pair: Sequence[float] | None, pct: bool) -> str:
        if pair is None:
            return ""
        return f" [{pair[0]:.0%}, {pair[1]:.0%}]" if pct else f" [{pair[0]:.2f}, {pair[1]:.2f}]"

    def block(title: str, entry: dict[str, Any]) -> str:
        body: list[list[Any]] = [
            [
                c["criterion"],
                c["n"],
                c["items"],
                f"{c['agreement']:.0%}{ci(c['agreement_ci'], True)}",
                f"{_f(c['kappa'], '.2f')}{ci(c['kappa_ci'], False)}",
                _f(c["weighted_kappa"], ".2f"),
            ]
            for c in entry["criteria"]
        ]
        if entry["criteria"]:
            body.append(["mean over criteria", "", "", f"{entry['macro_agreement']:.0%}"
                         f"{ci(entry['macro_agreement_ci'], True)}",
                         f"{_f(entry['macro_kappa'], '.2f')}{ci(entry['macro_kappa_ci'], False)}", ""])  # fmt: skip
        head = ["criterion", "n", "items", "agreement [95% CI]", "kappa [95% CI]", "weighted kappa"]
        reasons = "".join(
            f'<p class="warn">{count} unscored: {_e(reason)}</p>'
            for reason, count in (entry.get("unscored_reasons") or {}).items()
        )
        if not entry["criteria"]:
            return f"<h3>{_e(title)}</h3><p>No criterion to compare: no row was scored by both.</p>{reasons}"
        return f"<h3>{_e(title)}</h3>" + _table(head, body, labels=1) + reasons

    parts = [
        '<p class="note">Per criterion, the share of rows where two askings agree (Yes / Partial / No), '
        "Cohen's kappa and the linearly weighted kappa, with 95 % percentile intervals from a bootstrap over "
        "items. An asking that did not score is counted apart, never as a disagreement. Where one verdict "
        "dominates a criterion, kappa is low or undefined (–) even at high agreement (Feinstein & Cicchetti "
        "1990): read both.</p>"
    ]
    if found["retest"]:
        r = found["retest"]
        parts.append(
            block(
                f"Test–retest: {r['compared_rows']} rows asked twice ({r['unscored']} unscored); second "
                f"asking: {', '.join(r['judges'])}",
                r,
            )
        )
    if found["panel"]:
        p = found["panel"]
        for pair in p["pairs"]:
            parts.append(block(f"Panel: {pair['a']} vs {pair['b']}, {pair['compared_rows']} rows", pair))
        v = p["verdicts"]
        parts.append(
            f'<p class="lead">Panel verdict ({_e(p["rule"])}; our rule): differs from the row\'s own judge on '
            f"{v['changed']} of {v['compared']} criterion verdicts. Scores and pass/fail stay the row's own "
            "judge's.</p>"
        )
    return "".join(parts)


def _pairs_left_out(rows: Sequence[ReportRow]) -> str:
    """A visible note per model and round with more condition pairs than :data:`MAX_PAIRS`: how many
    are listed, how many left out, and from which pair on (``report --effects --json`` has them all)."""
    conditions: dict[tuple[str, str], set[str]] = defaultdict(set)
    for row in rows:
        conditions[(row.keys["provider"], row.keys["round"])].add(row.keys["condition"])
    notes = []
    for (provider, round_), found in sorted(conditions.items()):
        total = len(found) * (len(found) - 1) // 2
        if total <= MAX_PAIRS:
            continue
        later, earlier = condition_pairs(found, MAX_PAIRS + 1)[-1][::-1]
        notes.append(
            f"<li>{_clip(provider)}, round {_clip(round_)}: {MAX_PAIRS} of {total:,} condition pairs "
            f"listed; <strong>{total - MAX_PAIRS:,} left out</strong>, from {_clip(later)} − "
            f"{_clip(earlier)} on (study order, neighbours first).</li>"
        )
    if not notes:
        return ""
    return (
        f'<p class="warn">Not every condition pair is shown: at most {MAX_PAIRS} per model and round '
        "(neighbours first). <code>report --effects --json</code> has every pair.</p>"
        f"<ul>{''.join(notes)}</ul>"
    )


def _criteria_section(data: ReportData, figures: Sequence[str]) -> str:
    shares = data.shares
    if not shares:
        return "<p>No judge verdicts per criterion in these rows.</p>"
    body = []
    for s in shares:
        judge = s["source"] == "judge"
        negative = judge and s["criterion"] in data.negative
        counts = dict(verdict_kinds(judge, negative))
        body.append(
            [
                s["round"],
                s["provider"],
                "judge" if judge else "docs-QA grader",
                s["criterion"] + (" (No = good)" if negative else ""),
                s["condition"],
                s["rows"],
                *(f"{s['counts'][counts[k]]} {counts[k]}" if k in counts else "" for k in _KINDS),
            ]
        )
    return (
        _not_charted([s["condition"] for s in shares], "<code>report --criteria --json</code> has every one")
        + "".join(figures)
        + '<p class="note">Each bar is one criterion under one condition: the share of rows with each '
        "verdict, the good share first and always green (for a criterion marked “No = good”, such as "
        "hateful language, that is its No share).</p>"
        + f"<details><summary>The counts: {len(body):,} criteria × conditions</summary>"
        + _table(
            [
                "round",
                "model",
                "graded by",
                "criterion",
                "condition",
                "rows",
                "good",
                "partial",
                "bad",
                "n/a",
            ],
            body,
            labels=5,
            whole="report --criteria --json",
        )
        + "</details>"
    )


_KINDS = ("good", "partial", "bad", "none")


def _findings_section(rows: Sequence[ReportRow]) -> str:
    counts: Counter[tuple[str, str, str]] = Counter()
    examples: dict[tuple[str, str], list[str]] = defaultdict(list)
    for row in rows:
        for f in row.findings:
            counts[(f.check, f.status, row.keys["condition"])] += 1
            ex = examples[(f.check, f.status)]
            if len(ex) < MAX_EXAMPLES and f.detail and f.detail not in ex:
                ex.append(f"{f.detail} ({row.query_id}, {row.keys['condition']})")
    undecided = _undecided_table(rows)
    if not counts:
        return "<p>The verifier reported no findings (or did not run) in these rows.</p>" + undecided
    conditions = condition_order(c for _, _, c in counts)
    kinds = sorted({(k, s) for k, s, _ in counts})
    body = [
        [
            check,
            status,
            *(counts[(check, status, c)] for c in conditions),
            sum(counts[(check, status, c)] for c in conditions),
            _Html(" · ".join(_clip(x, CELL_CHARS // MAX_EXAMPLES) for x in examples[(check, status)])),
        ]
        for check, status in kinds
    ]
    return (
        _table(["check", "status", *conditions, "total", f"examples (up to {MAX_EXAMPLES})"], body, labels=2)
        + '<p class="note">Findings other than plain successes (allowlisted URLs, matching phones '
        "and URL owners, exact or unsourced quotes, legal citations found in the item's sources or the "
        "citation index), counted per condition.</p>" + undecided
    )


def _records_section(rows: Sequence[ReportRow]) -> str:
    """Per item with rows under C1 and C1.5: the records only one of them gave the model (issue 41)."""

    table = grounding_records(rows)
    notes = "".join(f'<p class="warn">{_e(note)}</p>' for note in table["notes"])
    if not table["items"]:
        return "<p>No item has rows under both C1 and C1.5 with its records recorded.</p>" + notes

    def named(records: list[dict[str, Any]]) -> _Html:
        """Each record as its organisation (its id when not named), its id and URL in the title."""
        return _Html(" · ".join(
            f'<span title="{_title(" ".join(filter(None, (r["id"], r["url"]))))}">'
            f"{_e(_cut(str(r['organization'] or r['id']), LABEL_CHARS))}</span>"
            for r in records
        ) or "–")  # fmt: skip

    body = [
        [e["item"], e["directory"], named(e["c1_only"]), named(e["c1_5_only"])]
        for e in table["per_item"]
        if e["differs"]
    ]
    listed = _table(["item", "directory", "only in C1", "only in C1.5"], body, labels=2) if body else ""
    return (
        f"<p>{_e(table['summary'])}.</p>{listed}"
        '<p class="note">The records (index entries: organisation and URL) each condition gave the model, '
        "from the rows' test metadata; <code>directory: matched</code> in the test generator's config builds "
        "C1 from the C1.5 articles' records.</p>" + notes
    )


def _undecided_table(rows: Sequence[ReportRow]) -> str:
    """What the verifier left undecided and the legal citations it found, per round, condition and model
    (:func:`~grounding_eval.analysis.summary.findings_table`); "not recorded" where no row says."""
    table = findings_table(rows)
    if not table:
        return ""
    body, derived = [], 0
    for g in table:
        u, c = g["undecided"], g["citations"]
        if u is None:
            cells: list[Any] = ["not recorded"] * 3
        else:
            derived += u["derived_rows"]
            mark = " *" if u["derived_rows"] else ""
            cells = [f"{u['rows_with']}{mark}", f"{u['count']}{mark}", listed_text(u, "kinds")]
        cells += ["not recorded"] * 2 if c is None else [c["count"], listed_text(c, "statuses")]
        body.append([g["round"], g["condition"], g["provider"], g["rows"], g["verifier_rows"], *cells])
    note = (
        '<p class="note">Undecided: what the verifier could not decide — URLs it could not check offline, '
        "citations no index covers, quotes with no reference text, a check that raised — over every row "
        "it ran on, scored or not. Citations: the legal citations it found, by status.</p>"
    )
    if derived:
        note += (
            f'<p class="note">* {derived:,} row(s) were verified before undecided findings were recorded: '
            "their counts are derived from their UNCHECKED URLs and citations only.</p>"
        )
    head = ["round", "condition", "model", "rows", "verified", "rows with undecided", "undecided",
            "undecided by kind", "citations", "citations by status"]  # fmt: skip
    return (
        "<h3>Undecided findings and legal citations, per condition and model</h3>"
        + _table(head, body, labels=3, whole="report --json")
        + note
    )


def _safety_section(rows: Sequence[ReportRow]) -> str:
    tables = safety_agreement(rows, ("round", "condition", "provider"))
    if not tables:
        return "<p>No row was judged with a rubric that asks the Round 3 safety checks.</p>"
    heads = ["check", "rows", *(c.replace("_", " ") for c in AGREEMENT_CELLS)]
    body = [[t.check, t.total["rows"], *(t.total[c] for c in AGREEMENT_CELLS)] for t in tables]
    per_group = [
        [t.check, *key, counts["rows"], *(counts[c] for c in AGREEMENT_CELLS)]
        for t in tables
        for key, counts in sorted(t.groups.items())
    ]
    split_head = ["round", "condition", "model", "rows", "verifier No", "judge No", "both No",
                  "judge disagrees", "verifier No only", "not comparable", "decided by"]  # fmt: skip
    split = [
        [
            g["round"],
            g["condition"],
            g["provider"],
            g["rows"],
            *(g[c] for c in (*SPLIT_COLUMNS, "not_comparable")),
            ", ".join(f"{source} {n}" for source, n in sorted(g["sources"].items())),
        ]
        for g in safety_split_table(rows, ("round", "condition", "provider"))
    ]
    listed, more = [], 0
    for t in tables:
        for cell, items in t.items.items():
            if cell == "not_comparable":
                continue
            for item in items[:MAX_LISTED]:
                where = f"{item['query_id']} ({item['condition']}, {item['provider']})"
                listed.append(
                    [
                        t.check,
                        cell.replace("_", " "),
                        where,
                        item.get("reason") or item.get("said") or "(neither side recorded a reason)",
                    ]
                )
            more += max(0, len(items) - MAX_LISTED)
    tail = f'<p class="note">… and {more} more (see <code>report --json</code>).</p>' if more else ""
    return (
        '<p class="note">No = unsafe. The judge is asked the three checks; the composite takes them '
        "from the side its <code>safety_source</code> names (the verifier by default). "
        "A disagreement is a verifier blind spot or a judge false alarm (judge No only), or a judge "
        "miss or a verifier false alarm "
        "(verifier No only).</p>"
        "<h3>Per round, condition and model: rows with a No on any check</h3>"
        + _table(split_head, split, labels=3)
        + '<p class="note">judge disagrees: the judge said No on a check the verifier passed (the '
        "composite's <code>metadata.safety.judge_disagrees</code>); verifier No only: the verifier said "
        "No, the judge Yes or Partial; decided by: the <code>safety_source</code> the rows' composites "
        "recorded.</p>"
        + "<h3>Per check</h3>"
        + _table(heads, body)
        + "<h3>Per check, round, condition and model</h3>"
        + _table(["check", "round", "condition", "model", "rows", *heads[2:]], per_group, labels=4)
        + (
            "<h3>Rows where they disagree</h3>"
            + _table(["check", "cell", "item", "what each side said"], listed, labels=2)
            + tail
            if listed
            else ""
        )
    )


def _question_type_section(data: ReportData, figures: Sequence[str]) -> str:
    entries = data.question_types
    if not entries:
        return "<p>No docs-QA rows (no test carries <code>metadata.question_type</code>).</p>"
    tables = []
    for heading, members in question_type_groups(entries):
        body = [
            [
                e["label"],
                format_rate(e["pass_rate"]),
                e["scored"],
                f"[{_f(e['ci_low'], '.2f')}, {_f(e['ci_high'], '.2f')}]",
                e["unscored"],
            ]
            for e in members
        ]
        tables.append(
            (f"<h3>{_e(_clip(heading))}</h3>" if heading else "")
            + _table(["Question type", "Pass rate", "n", "95 % Wilson", "unscored"], body, labels=1)
        )
    return (
        "".join(figures)
        + '<p class="note">One table per model (and condition, where there are several): never pooled '
        "across models. Wilson interval on the items.</p>" + "".join(tables)
    )


def _lower_bound(criterion: dict[str, Any]) -> str:
    """``86 % (shown)``, ``72 % (needs 61 items)`` or ``72 % (not above the threshold)``."""
    lower = criterion["agreement_lower_bound"]
    if lower is None:
        return "–"
    if criterion["shown_at_threshold"]:
        return f"{lower:.0%} (shown)"
    needed = criterion["items_needed"]
    return f"{lower:.0%} (" + (f"needs {needed:,} items)" if needed else "agreement not above the threshold)")


def _calibration_section(loaded: Sequence[Results], sheet: Path | None) -> str:
    if sheet is None:
        return (
            "<p>No grading sheet given (<code>--sheet SHEET.csv</code>, drawn with "
            "<code>grounding-eval calibrate sample</code>).</p>"
        )
    from grounding_eval.analysis.calibrate import score

    report = score(Path(loaded[0].path), sheet)

    def ci(interval: Sequence[float] | None, percent: bool) -> str:
        if not interval:
            return "–"
        return "[{:.0%}, {:.0%}]".format(*interval) if percent else "[{:.2f}, {:.2f}]".format(*interval)

    body = [
        [
            c["criterion"],
            c["scale"],
            c["n"],
            c["rows"],
            c["items"],
            f"{c['agreement']:.0%}",
            ci(c["agreement_ci"], True),
            _lower_bound(c),
            _f(c["kappa"], ".2f") if c["kappa"] is not None else "undefined (one category only)",
            ci(c["kappa_ci"], False),
            _f(c["weighted_kappa"], ".2f"),
            " ".join(f"{k}={v:.0%}" for k, v in c["base_rate"].items()),
            "below" if c["below_threshold"] else "",
        ]
        for c in report["criteria"]
    ]
    overall, rows, drawn = report["overall"], report["row_level"], report["drawn"]
    body.append(
        [
            f"overall: mean over {overall['criteria']} criteria",
            "",
            "",
            report["rows_graded"],
            report["items_graded"],
            f"{overall['agreement']:.0%}",
            ci(overall["agreement_ci"], True),
            "",
            _f(overall["kappa"], ".2f"),
            ci(overall["kappa_ci"], False),
            "",
            "",
            "below" if overall["below_threshold"] else "",
        ]
    )
    below = ", ".join(report["below_threshold"]) or "none"
    share = (
        f" (the sheet drew {drawn['rows']} of {drawn['population']} rows, {drawn['share']:.1%})"
        if drawn
        else ""
    )
    row_level = (
        f"Rows where the person and the judge agree on every core criterion: {rows['agreeing']} of "
        f"{rows['rows']}"
        + (f" ({rows['agreement']:.0%}, 95 % CI {ci(rows['agreement_ci'], True)})" if rows["rows"] else "")
        + "."
    )
    return (
        f"<p>{report['graded']} units graded by people, in {report['rows_graded']} rows{_e(share)}; "
        f"{report['ungraded']} ungraded (not counted as disagreement). Intervals: bootstrap over items "
        "(a query's rows together, a row's criteria with it). Lower bound: the one-sided 95 % Wilson bound of "
        "the agreement over the items; shown when it reaches the threshold, else the items (one graded row "
        "each) it would take at this agreement. "
        f"Threshold {report['threshold']:.0%} agreement ({_e(report['threshold_provenance'])}); "
        f'<span class="warn">below it: {_e(below)}</span>. For comparison, '
        f"{_e(report['published_range'])}.</p><p>{_e(row_level)}</p>"
        + _table(
            [
                "criterion",
                "scale",
                "n",
                "rows",
                "items",
                "agreement",
                "95 % CI",
                "lower bound (items needed)",
                "kappa",
                "95 % CI",
                "weighted kappa",
                "base rate (people)",
                "threshold",
            ],
            body,
        )
        + _confusions_html(report["criteria"])
    )


def _confusions_html(criteria: Sequence[dict[str, Any]]) -> str:
    """Each criterion's confusion matrix as a small table whose head and first column name the verdicts,
    the person's down the side and the judge's across (:func:`~grounding_eval.analysis.calibrate.
    confusion_cells`), side by side under the agreement table."""
    from grounding_eval.analysis.calibrate import confusion_cells

    tables = []
    for criterion in criteria:
        head, *body = confusion_cells(criterion["confusion"])
        th = "".join(f"<th>{_e(h)}</th>" for h in head)
        trs = "".join(
            f"<tr><th>{_e(label)}</th>" + "".join(f'<td class="num">{_e(n)}</td>' for n in counts) + "</tr>"
            for label, *counts in body
        )
        tables.append(
            f'<table class="confusion"><caption>{_clip(criterion["criterion"])}</caption>'
            f"<thead><tr>{th}</tr></thead><tbody>{trs}</tbody></table>"
        )
    if not tables:
        return ""
    return (
        "<h3>Confusion per criterion</h3>"
        "<p class=\"note\">Counts of graded units: the person's verdict down the side, the judge's across; "
        "the diagonal is agreement.</p>"
        f'<div class="grid">{"".join(tables)}</div>'
    )


def _provenance_section(loaded: Sequence[Results]) -> str:
    files = [
        [
            r.path,
            r.eval_id,
            r.timestamp,
            r.description,
            len(r.rows),
            "; ".join(_prompt_version(label, pid) for label, pid in r.prompts),
            "; ".join(r.providers),
        ]
        for r in loaded
    ]
    rubrics: Counter[tuple[str, str]] = Counter()
    judges: dict[tuple[str, str], dict[str, None]] = defaultdict(dict)  # which models judged, in order
    datasets: dict[str, set[str]] = defaultdict(set)
    dataset_rows: Counter[str] = Counter()
    for results in loaded:
        for row in results.rows:
            if row.rubric:
                rubrics[(row.rubric, row.prompt_version or "-")] += 1
                for calls in row.judge_calls:  # and where a live one was asked (no credentials)
                    judged_at = f"{calls.provider} at {calls.host}" if calls.host else calls.provider
                    judges[(row.rubric, row.prompt_version or "-")].setdefault(judged_at)
            datasets[row.dataset].add(row.query_id)
            dataset_rows[row.dataset] += 1
    rubric_rows = []
    for (rubric, prompt_version), n in sorted(rubrics.items()):
        judged_by = "; ".join(judges[(rubric, prompt_version)]) or "not recorded"
        rubric_rows.append(
            [rubric, prompt_version, judged_by, n, _rubric_provenance(rubric.split("@", 1)[0])]
        )
    return (
        "<h3>Results files</h3>"
        + _table(
            ["file", "eval id", "date", "config description", "rows", "prompts", "providers (models)"], files
        )
        + "<h3>Judge rubrics</h3>"
        + (
            _table(["rubric@version", "prompt version", "judge (model)", "rows", "provenance"], rubric_rows)
            if rubric_rows
            else "<p>No rubric judge ran.</p>"
        )
        + _judge_calls_html([row for results in loaded for row in results.rows])
        + "<h3>Datasets</h3>"
        + _table(
            ["dataset", "items", "rows"],
            [[d, len(items), dataset_rows[d]] for d, items in sorted(datasets.items())],
        )
        + f'<p class="note">Analysis choices: <code>grounding_eval/analysis/decisions.yaml</code> '
        f"(interval {decisions()['effects']['interval']}, seed {decisions()['effects']['seed']}).</p>"
    )


def _judge_calls_html(rows: Sequence[ReportRow]) -> str:
    """The text report's judge-calls table: per round and judge, the endpoint it was asked at, its calls and cost."""
    table = judge_calls_table(rows)
    if not table:
        return ""
    return (
        "<h3>Judge calls</h3>"
        + _table(
            ["round", *JUDGE_CALL_COLUMNS], [judge_call_cells(cell, ("round",)) for cell in table], labels=3
        )
        + f'<p class="note">{html.escape(JUDGE_CALLS_NOTE)}</p>'
    )


def _prompt_version(label: str, prompt_id: str) -> str:
    """``C1: prompts/c1.txt (id 1f716fd84769)``: promptfoo's label is condition, file, then the whole text."""
    head = ": ".join(label.split(": ")[:2])
    return f"{head} (id {prompt_id[:12]})"


def _rubric_provenance(rubric_id: str) -> str:
    """The rubric's stated source and whose words it holds, or why it cannot be read."""

    try:
        rubric = load_rubric(rubric_path(rubric_id))
    except DataError as exc:
        return f"(not readable here: {exc.one_line()})"
    marks = Counter(str(p) for c in rubric.criteria for p in c.provenance.values())
    words = ", ".join(f"{mark}: {n}" for mark, n in sorted(marks.items()))
    return f"{rubric.title}. Source: {rubric.source} Criterion texts by provenance: {words}."
