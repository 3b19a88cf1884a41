"""``grounding-eval report … --html FILE``: one self-contained HTML page a research team can show partners.

No script, no stylesheet or font from the network: the charts are inline SVG drawn here (bars, interval
whiskers, a forest plot, stacked shares), the tables are plain HTML, the style is one ``<style>`` block.
Everything on the page is an aggregate (examples are capped per finding type), so its size does not grow
with the number of rows beyond a few listed examples; nor quadratically with the number of conditions: at
most :data:`MAX_PAIRS` condition pairs per model and round are computed and listed, the charts draw the
first :data:`MAX_CHARTED` conditions, a table shows :data:`MAX_ROWS` rows, and each says visibly what it
left out and which command lists it all. Long labels are clipped with "…", the whole text (to
:data:`TITLE_CHARS`) in a title; every text is escaped. Sections, in order:

1. pass rate and mean composite per round × condition × model (bars with 95 % intervals);
2. paired condition effects (forest plot and table);
3. per-criterion verdict shares per condition;
4. verifier findings by type (counts and examples);
5. judge versus verifier on the Round 3 safety checks;
6. docs-QA results by question type;
7. calibration against people (when a graded sheet is given);
8. provenance: files, eval ids, dates, config descriptions, prompts, providers, rubric versions and their
   provenance, datasets and record counts.
"""

from __future__ import annotations

import datetime as dt
import html
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from grounding_eval.analysis.effects import (
    Effect,
    condition_order,
    condition_pairs,
    criterion_shares,
    decisions,
    paired_effects,
    pass_rates,
    question_type_table,
)
from grounding_eval.analysis.summary import (
    AGREEMENT_CELLS,
    SPLIT_COLUMNS,
    ReportRow,
    Results,
    format_rate,
    safety_agreement,
    safety_split_table,
)
from grounding_eval.encodable import utf8_encodable
from grounding_eval.errors import DataError
from grounding_eval.files import write_text_atomic

__all__ = ["render_html", "write_html"]

MAX_EXAMPLES = 3  # examples listed per (check, status) in the findings section
MAX_LISTED = 10  # rows listed per (safety check, disagreement cell)
MAX_PAIRS = 15  # condition pairs listed per model and round (six conditions' worth), neighbours first
MAX_CHARTED = 12  # conditions drawn in the charts (study order); the tables list every one
MAX_ROWS = 1000  # rows per table; past it, a note says how many more and where they are
LABEL_CHARS = 60  # a label (model, condition, criterion, metric …) longer than this is clipped with "…"
CELL_CHARS = 1200  # any other table cell (a reason, a description) longer than this is clipped
TITLE_CHARS = 2000  # a clipped text's title attribute holds it whole up to this length
_COLORS = {
    "Yes": "#1b7837",
    "Partial": "#e0a526",
    "No": "#b2182b",
    "pass": "#1b7837",
    "fail": "#b2182b",
    "n/a": "#9e9e9e",
}
_CONDITION_COLORS = ("#4575b4", "#91bfdb", "#fc8d59", "#d73027", "#7b3294")
_STYLE = """

body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#1d1d1f;background:#fafafa}
main{max-width:1100px;margin:0 auto;padding:24px 32px 64px;background:#fff}
h1{font-size:26px;margin:8px 0 4px}
h2{font-size:20px;margin:36px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:16px;margin:20px 0 6px}p.lead{color:#555;margin-top:0}p.note{color:#555;font-size:13px}
table{border-collapse:collapse;margin:8px 0 16px;font-size:13px}
th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f2f2f2}td.num{text-align:right;font-variant-numeric:tabular-nums}
nav a{margin-right:12px;font-size:13px}svg{display:block;margin:6px 0 12px;max-width:100%;height:auto}
svg text{font:12px system-ui,sans-serif;fill:#1d1d1f}
.legend span{display:inline-block;width:11px;height:11px;margin:0 4px 0 12px;vertical-align:middle}
code{font-size:12px;background:#f4f4f4;padding:0 3px}.warn{color:#b2182b;font-weight:600}
"""


def write_html(loaded: Sequence[Results], path: Path, *, sheet: Path | None = None) -> None:
    """Write the report for ``loaded`` (one or more results files) to ``path``."""
    page = render_html(loaded, sheet=sheet)
    try:
        write_text_atomic(path, page)  # an existing report is replaced whole or kept, never emptied
    except OSError as exc:
        raise DataError(path, f"cannot write the HTML report ({exc.strerror or exc})") from None


def render_html(loaded: Sequence[Results], *, sheet: Path | None = None) -> str:
    """The whole page as a string, UTF-8 encodable (a lone surrogate in a label is shown as U+FFFD)."""
    rows = [row for results in loaded for row in results.rows]
    sections = [
        ("rates", "Pass rate and composite", _rates_section(rows)),
        ("effects", "Condition effects", _effects_section(rows)),
        ("criteria", "Verdicts per criterion", _criteria_section(rows)),
        ("findings", "Verifier findings", _findings_section(rows)),
        ("safety", "Judge vs verifier on safety", _safety_section(rows)),
        ("docsqa", "Docs-QA by question type", _question_type_section(rows)),
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
    return html.escape(str(value), quote=True)


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
    """``text`` escaped for a title (attribute or SVG ``<title>``), clipped past :data:`TITLE_CHARS`."""
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


def _condition_colors(conditions: Sequence[str]) -> dict[str, str]:
    return {
        c: _CONDITION_COLORS[i % len(_CONDITION_COLORS)] for i, c in enumerate(condition_order(conditions))
    }


def _svg_label(text: str, limit: int) -> str:
    """SVG text content: ``text`` escaped, or clipped with "…" and the whole (to :data:`TITLE_CHARS`) as
    the element's ``<title>``."""
    if len(text) <= limit:
        return _e(text)
    return f"<title>{_title(text)}</title>{_e(_cut(text, limit))}"


def _bar_chart(
    title: str,
    groups: Sequence[tuple[str, Sequence[tuple[str, float | None, float | None, float | None]]]],
    colors: Mapping[str, str],
) -> str:
    """Grouped vertical bars on a 0–1 axis with interval whiskers: groups of (series, value, low, high)."""
    bar, gap, group_gap, height, top, left = 26, 4, 28, 180, 24, 40
    width = left + sum(len(series) * (bar + gap) + group_gap for _, series in groups) + 10
    parts = [
        f'<svg role="img" aria-label="{_e(title)}" class="chart bars" width="{width}" '
        f'height="{height + top + 64}" '
        f'viewBox="0 0 {width} {height + top + 64}" '
        f'xmlns="http://www.w3.org/2000/svg"><title>{_e(title)}</title>'
    ]
    for tick in (0, 0.25, 0.5, 0.75, 1):
        y = top + height * (1 - tick)
        parts.append(
            f'<line x1="{left}" x2="{width}" y1="{y:.1f}" y2="{y:.1f}" stroke="#e5e5e5"/>'
            f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick:g}</text>'
        )
    x = left + 8
    for label, series in groups:
        start = x
        for name, value, low, high in series:
            if value is not None:
                h = height * max(0.0, min(1.0, value))
                parts.append(
                    f'<rect x="{x}" y="{top + height - h:.1f}" width="{bar}" height="{h:.1f}" '
                    f'fill="{colors.get(name, "#777")}">'
                    f"<title>{_title(label)} {_title(name)}: {value:.3f}"
                    + (f" [{low:.3f}, {high:.3f}]" if low is not None and high is not None else "")
                    + "</title></rect>"
                )
                if low is not None and high is not None:
                    cx, y1, y2 = x + bar / 2, top + height * (1 - low), top + height * (1 - high)
                    parts.append(
                        f'<path d="M{cx} {y1:.1f}V{y2:.1f}M{cx - 5} {y1:.1f}h10M{cx - 5} '
                        f'{y2:.1f}h10" stroke="#222" fill="none"/>'
                    )
            parts.append(
                f'<text x="{x + bar / 2}" y="{top + height + 14}" text-anchor="middle">'
                f"{_svg_label(name, 8)}</text>"
            )
            x += bar + gap
        room = max(6, int((x - start) / 6.5))  # characters that fit under the group's bars
        for line_no, line in enumerate(label.split(" · ")[:4]):
            parts.append(
                f'<text x="{(start + x) / 2:.1f}" y="{top + height + 30 + 14 * line_no}" '
                f'text-anchor="middle"><title>{_title(label)}</title>{_e(_cut(line, room))}</text>'
            )
        x += group_gap
    parts.append("</svg>")
    return "".join(parts)


def _rates_section(rows: Sequence[ReportRow]) -> str:
    if not rows:
        return "<p>No rows.</p>"
    rates = pass_rates(rows)
    colors = _condition_colors([r["condition"] for r in rates])
    cells: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in rates:
        cells[(r["round"], r["provider"])].append(r)
    comp_ci = _composite_intervals(rows)
    charted, not_charted = _charted([r["condition"] for r in rates])
    cells = {key: [r for r in group if r["condition"] in charted] for key, group in cells.items()}
    colors = {c: colors[c] for c in charted}
    pass_groups = [
        (f"Round {rd} · {prov}", [(r["condition"], r["pass_rate"], r["ci_low"], r["ci_high"]) for r in group])
        for (rd, prov), group in sorted(cells.items())
    ]
    comp_groups = [
        (
            f"Round {rd} · {prov}",
            [
                (r["condition"], r["mean_composite"], *comp_ci.get((rd, r["condition"], prov), (None, None)))
                for r in group
            ],
        )
        for (rd, prov), group in sorted(cells.items())
    ]
    legend = (
        '<p class="legend">'
        + "".join(f'<span style="background:{c}"></span>{_clip(k)}' for k, c in colors.items())
        + "</p>"
    )
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
        ]
        for r in rates
    ]
    return (
        legend
        + not_charted
        + "<h3>Pass rate (95 % Wilson interval)</h3>"
        + _bar_chart("Pass rate by round, condition and model", pass_groups, colors)
        + "<h3>Mean composite (95 % bootstrap interval)</h3>"
        + _bar_chart("Mean composite by round, condition and model", comp_groups, colors)
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
                "95 % bootstrap",
                "unscored",
            ],
            body,
            labels=3,
            whole="report --rates --json",
        )
        + '<p class="note">Pass rate = passed ÷ scored rows (n/a: none scored); unscored rows (errors, '
        "unscorable judge replies) are counted apart, never as failures; means are over the scored rows.</p>"
    )


def _charted(conditions: Sequence[str], rest: str = "the table lists them") -> tuple[list[str], str]:
    """The conditions the charts draw (the first :data:`MAX_CHARTED` in study order), and a visible note
    of how many are not drawn (empty when every one is)."""
    ordered = condition_order(conditions)
    if len(ordered) <= MAX_CHARTED:
        return ordered, ""
    note = (
        f'<p class="warn">The charts draw the first {MAX_CHARTED} of {len(ordered):,} conditions (study '
        f"order, up to {_clip(ordered[MAX_CHARTED - 1])}); <strong>{len(ordered) - MAX_CHARTED:,} are not "
        f"drawn</strong>: {rest}.</p>"
    )
    return ordered[:MAX_CHARTED], note


def _composite_intervals(rows: Sequence[ReportRow]) -> dict[tuple[str, str, str], tuple[float, float]]:
    """Per (round, condition, model): the bootstrap interval of the mean composite over its scored rows.

    The groups are read in one pass, and groups of equally many rows share one draw (the seed gives
    them the same draw anyway): one call of :func:`~grounding_eval.analysis.stats.bootstrap_mean_intervals`
    per group size, whatever the number of conditions.
    """
    import numpy as np

    from grounding_eval.analysis.stats import bootstrap_mean_intervals

    setup = decisions()["effects"]
    values: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    for x in rows:
        if not x.unscored and "composite" in x.scores:
            values[(x.keys["round"], x.keys["condition"], x.keys["provider"])].append(x.scores["composite"])
    by_size: dict[int, list[tuple[str, str, str]]] = defaultdict(list)
    for key, found in values.items():
        by_size[len(found)].append(key)
    out: dict[tuple[str, str, str], tuple[float, float]] = {}
    for keys in by_size.values():
        intervals = bootstrap_mean_intervals(
            np.array([values[k] for k in keys]).T, resamples=int(setup["resamples"]), seed=int(setup["seed"])
        )
        out.update((k, ci) for k, ci in zip(keys, intervals, strict=True) if ci is not None)
    return out


def _forest(effects: Sequence[Effect]) -> str:
    shown = [e for e in effects if e.mean_diff is not None and e.ci_low is not None and e.ci_high is not None]
    if not shown:
        return "<p>No paired comparison has items scored under both conditions.</p>"
    lo = min(min(e.ci_low for e in shown if e.ci_low is not None), 0.0)
    hi = max(max(e.ci_high for e in shown if e.ci_high is not None), 0.0)
    span = (hi - lo) or 1.0
    label_w, plot_w, row_h, top = 480, 400, 20, 26
    height = top + row_h * len(shown) + 30
    width = label_w + plot_w + 90

    def sx(v: float) -> float:
        return label_w + (v - lo) / span * plot_w

    parts = [
        '<svg role="img" aria-label="Forest plot of paired condition effects" class="chart forest" '
        f'width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg"><title>Paired condition '
        "effects</title>",
        f'<line x1="{sx(0):.1f}" x2="{sx(0):.1f}" y1="{top - 6}" y2="{height - 24}" stroke="#888" '
        'stroke-dasharray="4 3"/>',
        f'<text x="{sx(0):.1f}" y="{top - 10}" text-anchor="middle">0</text>',
        f'<text x="{label_w}" y="{height - 6}">{lo:+.2f}</text><text x="{label_w + plot_w}" '
        f'y="{height - 6}" text-anchor="end">{hi:+.2f}</text>',
        f'<text x="{width - 4}" y="{top - 10}" text-anchor="end">mean diff [95 % CI]</text>',
    ]
    for i, e in enumerate(shown):
        y = top + i * row_h + row_h / 2
        assert e.ci_low is not None and e.ci_high is not None and e.mean_diff is not None
        color = "#1b7837" if e.ci_low > 0 else "#b2182b" if e.ci_high < 0 else "#555"
        label = f"{_cut(e.provider, 28)} · R{_cut(e.round, 8)} · {_cut(e.to, 16)} − {_cut(e.from_, 16)} · {e.metric}"
        whole = f"{e.provider} · R{e.round} · {e.to} − {e.from_} · {e.metric}"
        parts.append(
            f'<text x="4" y="{y + 4:.1f}">{_svg_label(whole if label == whole else label, 72)}</text>'
            f'<line x1="{sx(e.ci_low):.1f}" x2="{sx(e.ci_high):.1f}" y1="{y:.1f}" y2="{y:.1f}" '
            f'stroke="{color}" stroke-width="2"/>'
            f'<circle cx="{sx(e.mean_diff):.1f}" cy="{y:.1f}" r="4" '
            f'fill="{color}"><title>{_title(whole)}: {e.mean_diff:+.3f} '
            f"[{e.ci_low:+.3f}, {e.ci_high:+.3f}], n={e.n}, p={e.p_value}</title></circle>"
            f'<text x="{width - 4}" y="{y + 4:.1f}" text-anchor="end">{e.mean_diff:+.2f} (n={e.n})</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _effects_section(rows: Sequence[ReportRow]) -> str:
    effects = paired_effects(rows, max_pairs=MAX_PAIRS)
    if not effects:
        return "<p>No model has rows under two conditions: nothing to compare.</p>"
    left_out = _pairs_left_out(rows)
    setup = decisions()["effects"]
    headline = [
        e
        for e in effects
        if e.metric == "composite"
        or e.metric.endswith(".llm_judge_score")
        or e.metric == "deterministic_verifier_score"
    ]
    body = [
        [
            e.provider,
            e.round,
            _Html(f"{_clip(e.to)} − {_clip(e.from_)}"),
            e.metric,
            e.n,
            _f(e.mean_diff, "+.3f"),
            f"[{_f(e.ci_low, '+.3f')}, {_f(e.ci_high, '+.3f')}]",
            _f(e.p_value, ".3g"),
            e.n_missing,
            e.n_unscored,
        ]
        for e in effects
    ]
    return (
        '<p class="note">Mean per-item difference (later condition − earlier), paired by item; '
        f"{setup['confidence']:.0%} percentile "
        f"bootstrap interval ({setup['resamples']} resamples, seed {setup['seed']}); two-sided "
        "paired sign-flip permutation p. "
        "Green: the interval is above 0; red: below. Items missing a condition or unscored under "
        "one are left out and counted.</p>"
        + left_out
        + "<h3>Composite, judge and verifier scores</h3>"
        + _forest(headline)
        + "<h3>Every metric</h3>"
        + _table(
            [
                "model",
                "round",
                "to − from",
                "metric",
                "n",
                "mean diff",
                "95 % CI",
                "p",
                "missing",
                "unscored / no score",
            ],
            body,
            labels=4,
        )
    )


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


def _criteria_section(rows: Sequence[ReportRow]) -> str:
    shares = criterion_shares(rows)
    if not shares:
        return "<p>No judge verdicts per criterion in these rows.</p>"
    charted, not_charted = _charted(
        [s["condition"] for s in shares], "<code>report --criteria --json</code> has every one"
    )
    blocks: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for s in shares:
        if s["condition"] in charted:
            blocks[(s["round"], s["provider"], s["source"])].append(s)
    negative = _negative_criteria({r.rubric.split("@", 1)[0] for r in rows if r.rubric})
    out = []
    for (round_, provider, source), entries in sorted(blocks.items()):
        scale = list(entries[0]["counts"])
        row_h, label_w, bar_w, top = 16, 300, 360, 8
        height = top + row_h * len(entries) + 8
        parts = [
            f'<svg role="img" aria-label="Verdict shares, round {_e(round_)}" class="chart shares" '
            f'width="{label_w + bar_w + 60}" '
            f'height="{height}" viewBox="0 0 {label_w + bar_w + 60} {height}" '
            'xmlns="http://www.w3.org/2000/svg">'
        ]
        previous = None
        for i, s in enumerate(entries):
            y = top + i * row_h
            name = s["criterion"] if s["criterion"] != previous else ""
            if name and source == "judge" and name in negative:
                name += " (No = good)"
            previous = s["criterion"]
            parts.append(
                f'<text x="4" y="{y + 11}">{_svg_label(name, 44)}</text><text x="{label_w - 6}" '
                f'y="{y + 11}" text-anchor="end">{_svg_label(s["condition"], 16)}</text>'
            )
            x = float(label_w)
            for verdict in scale:
                w = bar_w * s["shares"][verdict]
                if w > 0:
                    parts.append(
                        f'<rect x="{x:.1f}" y="{y + 2}" width="{w:.1f}" height="{row_h - 4}" '
                        f'fill="{_COLORS[verdict]}">'
                        f"<title>{_title(s['criterion'])} {_title(s['condition'])}: {verdict} "
                        f"{s['counts'][verdict]}/{s['rows']}</title></rect>"
                    )
                x += w
            parts.append(f'<text x="{label_w + bar_w + 6}" y="{y + 11}">n={s["rows"]}</text>')
        parts.append("</svg>")
        legend = (
            '<p class="legend">'
            + "".join(f'<span style="background:{_COLORS[v]}"></span>{v}' for v in scale)
            + "</p>"
        )
        out.append(
            f"<h3>Round {_clip(round_)} · {_clip(provider)} · {_e(source)}</h3>{legend}{''.join(parts)}"
        )
    return (
        not_charted
        + "".join(out)
        + '<p class="note">Each bar is one criterion under one condition: the share of rows with '
        "each verdict.</p>"
    )


def _negative_criteria(rubric_ids: set[str]) -> set[str]:
    """The criteria of these rubrics whose polarity is negative (a Yes is bad), when the rubric is readable."""
    from grounding_eval.judge.rubric import load_rubric, rubric_path

    out = set()
    for rubric_id in rubric_ids:
        try:
            rubric = load_rubric(rubric_path(rubric_id))
        except DataError:
            continue  # a rubric not shipped here: its criteria are shown without the mark
        out |= {c.id for c in rubric.criteria if c.polarity == "negative"}
    return out


def _findings_section(rows: Sequence[ReportRow]) -> str:
    counts: Counter[tuple[str, str, str]] = Counter()
    examples: dict[tuple[str, str], list[str]] = defaultdict(list)
    for row in rows:
        for f in row.findings:
            counts[(f.check, f.status, row.keys["condition"])] += 1
            ex = examples[(f.check, f.status)]
            if len(ex) < MAX_EXAMPLES and f.detail and f.detail not in ex:
                ex.append(f"{f.detail} ({row.query_id}, {row.keys['condition']})")
    if not counts:
        return "<p>The verifier reported no findings (or did not run) in these rows.</p>"
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
        "citation index), counted per condition.</p>"
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
                    [t.check, cell.replace("_", " "), where, item.get("reason") or item.get("said", "")]
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


def _question_type_section(rows: Sequence[ReportRow]) -> str:
    entries = question_type_table(rows)
    if not entries:
        return "<p>No docs-QA rows (no test carries <code>metadata.question_type</code>).</p>"
    colors = {e["label"]: "#4575b4" for e in entries}
    chart = _bar_chart(
        "Docs-QA pass rate by question type",
        [("", [(e["label"], e["pass_rate"], e["ci_low"], e["ci_high"]) for e in entries])],
        colors,
    )
    body = [
        [
            e["label"],
            format_rate(e["pass_rate"]),
            e["scored"],
            f"[{_f(e['ci_low'], '.2f')}, {_f(e['ci_high'], '.2f')}]",
            e["unscored"],
        ]
        for e in entries
    ]
    return chart + _table(["Question type", "Pass rate", "n", "95 % Wilson", "unscored"], body, labels=1)


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
            f"{c['agreement']:.0%}",
            ci(c["agreement_ci"], True),
            _f(c["kappa"], ".2f") if c["kappa"] is not None else "undefined (one category only)",
            ci(c["kappa_ci"], False),
            _f(c["weighted_kappa"], ".2f"),
            " ".join(f"{k}={v:.0%}" for k, v in c["base_rate"].items()),
            " | ".join(" ".join(str(x) for x in r) for r in c["confusion"]["matrix"]),
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
            f"{overall['agreement']:.0%}",
            ci(overall["agreement_ci"], True),
            _f(overall["kappa"], ".2f"),
            ci(overall["kappa_ci"], False),
            "",
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
        f"{report['ungraded']} ungraded (not counted as disagreement). Intervals: bootstrap over rows, "
        "a row's criteria together. "
        f"Threshold {report['threshold']:.0%} agreement ({_e(report['threshold_provenance'])}); "
        f'<span class="warn">below it: {_e(below)}</span>. For comparison, '
        f"{_e(report['published_range'])}.</p><p>{_e(row_level)}</p>"
        + _table(
            [
                "criterion",
                "scale",
                "n",
                "rows",
                "agreement",
                "95 % CI",
                "kappa",
                "95 % CI",
                "weighted kappa",
                "base rate (people)",
                "confusion (rows people, columns judge)",
                "threshold",
            ],
            body,
        )
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
                for calls in row.judge_calls:
                    judges[(row.rubric, row.prompt_version or "-")].setdefault(calls.provider)
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
        + "<h3>Datasets</h3>"
        + _table(
            ["dataset", "items", "rows"],
            [[d, len(items), dataset_rows[d]] for d, items in sorted(datasets.items())],
        )
        + f'<p class="note">Analysis choices: <code>grounding_eval/analysis/decisions.yaml</code> '
        f"(bootstrap {decisions()['effects']['resamples']} resamples, seed "
        f"{decisions()['effects']['seed']}).</p>"
    )


def _prompt_version(label: str, prompt_id: str) -> str:
    """``C1: prompts/c1.txt (id 1f716fd84769)``: promptfoo's label is condition, file, then the whole text."""
    head = ": ".join(label.split(": ")[:2])
    return f"{head} (id {prompt_id[:12]})"


def _rubric_provenance(rubric_id: str) -> str:
    """The rubric's stated source and whose words it holds, or why it cannot be read."""
    from grounding_eval.judge.rubric import load_rubric, rubric_path

    try:
        rubric = load_rubric(rubric_path(rubric_id))
    except DataError as exc:
        return f"(not readable here: {exc.one_line()})"
    marks = Counter(str(p) for c in rubric.criteria for p in c.provenance.values())
    words = ", ".join(f"{mark}: {n}" for mark, n in sorted(marks.items()))
    return f"{rubric.title}. Source: {rubric.source} Criterion texts by provenance: {words}."
