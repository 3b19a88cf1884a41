"""The report's figures, drawn with matplotlib: embedded in the HTML report, written by
``grounding-eval report … --figures DIR`` as SVG and PDF for a paper or a board memo.

* **What is drawn** (:func:`report_charts`): pass rate and mean composite per round × model × condition
  with 95 % intervals, the paired condition effects as a forest plot, the verdict shares per criterion
  (one figure per round, model and judge), the docs-QA pass rate per question type.
* **Good is one colour everywhere.** The Okabe–Ito palette (colour-blind safe): bluish green for a good
  verdict, orange for Partial, vermillion for a bad one. A criterion whose good answer is No (negative
  polarity in its rubric, e.g. ``hateful_language``) draws its No share green; its label says "No =
  good". Nothing relies on colour alone: the verdict shares are hatched, the legend says good / bad, each
  bar names its condition and a forest plot's marker points up (better) or down (worse).
* **Text stays text.** SVG text is written as ``<text>`` (``svg.fonttype: none``), escaped by matplotlib's
  XML writer; TeX and mathtext are off (``text.usetex: False``, ``text.parse_math: False``), so a label
  ``$x$`` is drawn as written. Labels are clipped to :data:`LABEL_CHARS` and wrapped, never cut off.
* **Reproducible.** The same data give the same bytes: a fixed ``svg.hashsalt``, no dates in the SVG or
  PDF metadata, the DejaVu Sans font matplotlib ships (not whatever the machine has), and no pyplot (no
  GUI backend, no global figure state): each figure is a :class:`matplotlib.figure.Figure` saved with
  the SVG or PDF backend.

matplotlib is part of the ``analysis`` extra and imported only here (the assertion path never imports
this module).
"""

from __future__ import annotations

import functools
import io
import logging
import re
import textwrap
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grounding_eval.analysis.effects import condition_order, question_type_groups
from grounding_eval.analysis.report_data import ReportData
from grounding_eval.errors import DataError
from grounding_eval.files import write_bytes_atomic

if TYPE_CHECKING:
    from matplotlib.figure import Figure

__all__ = [
    "BAD",
    "GOOD",
    "MAX_CHARTED",
    "MAX_EFFECTS",
    "PARTIAL",
    "Chart",
    "charted_conditions",
    "report_charts",
    "verdict_kinds",
    "write_figures",
]

MAX_CHARTED = 12  # conditions drawn in the charts (study order); the tables list every one
MAX_EFFECTS = 60  # effects drawn in the forest plot; the table lists every one
LABEL_CHARS = 40  # a label drawn in a figure is clipped to this many characters with "…"
WRAP_CHARS = 18  # and wrapped at this width under a bar

# Okabe & Ito (2008), "Color Universal Design": distinguishable with every common colour-vision deficiency.
GOOD = "#009e73"  # bluish green
PARTIAL = "#e69f00"  # orange
BAD = "#d55e00"  # vermillion
NEUTRAL = "#999999"  # grey: n/a, an interval that includes 0
# Conditions are not good or bad: the palette's other colours, then the same again hatched.
CONDITION_COLORS = ("#0072b2", "#56b4e9", "#cc79a7", "#f0e442", "#555555", "#bbbbbb")
CONDITION_HATCHES = ("", "//", "..")
# Verdict shares: the hatch tells good from bad in grey print too.
_KIND_STYLE = {"good": (GOOD, ""), "partial": (PARTIAL, ".."), "bad": (BAD, "///"), "none": (NEUTRAL, "")}

_RC: dict[str, Any] = {
    "svg.hashsalt": "grounding-eval",  # clip-path and marker ids hashed with a fixed salt: stable bytes
    "svg.fonttype": "none",  # text as <text>, escaped; the reader's browser draws it
    "svg.id": None,
    "pdf.fonttype": 42,  # TrueType embedded: a journal's PDF checker accepts it, text stays selectable
    "pdf.compression": 6,
    "text.usetex": False,
    "text.parse_math": False,  # "$5 or $10" in a label is money, not mathtext
    "font.family": "DejaVu Sans",  # shipped with matplotlib: the same metrics on every machine
    "font.size": 10,
    "axes.titlesize": 12,
    "axes.titleweight": "bold",
    "axes.labelsize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.axisbelow": True,
    "axes.grid": False,
    "grid.color": "#dddddd",
    "hatch.linewidth": 0.8,
    "legend.frameon": False,
    "figure.dpi": 100,
    "savefig.dpi": 100,
    "path.simplify": False,
}
_SVG_METADATA = {"Date": None}
_PDF_METADATA = {"CreationDate": None, "ModDate": None}


@dataclass(frozen=True)
class Chart:
    """One figure of the report.

    Attributes:
        section: the HTML report's section it belongs to (``rates``, ``effects``, ``criteria``, ``docsqa``).
        name: its file name without the suffix, stable and descriptive (``pass-rate``,
            ``verdicts-round-3-model-a-judge``).
        title: what it shows, as its heading says.
        figure: the matplotlib figure.
    """

    section: str
    name: str
    title: str
    figure: Figure

    def svg(self) -> str:
        """The figure as a standalone SVG document (drawn once: the page and the file are the same)."""
        return self._svg

    @cached_property
    def _svg(self) -> str:
        out = io.StringIO()
        with _style():
            self.figure.savefig(out, format="svg", metadata=_SVG_METADATA)
        return out.getvalue()

    def pdf(self) -> bytes:
        """The figure as a PDF document."""
        out = io.BytesIO()
        with _style():
            self.figure.savefig(out, format="pdf", metadata=_PDF_METADATA)
        return out.getvalue()

    def inline_svg(self, index: int) -> str:
        """The SVG element to put in an HTML page: no XML prolog, ``role="img"`` with the title as its
        label, and every ``id`` (and reference to one) prefixed with ``fig<index>-`` so that figures on
        one page never share an id. Only inside tags: text content is left as drawn."""
        svg = self.svg()
        prefix = f"fig{index}-"
        parts = _TAG.split(svg[svg.index("<svg") :])
        # Tags (odd parts): ids prefixed. Text (even parts): matplotlib escapes &, < and >; quotes too
        # here, as everywhere on the page, so no label's quote can look like an attribute's end.
        svg = "".join(
            _ID_REF.sub(lambda m: m.group(1) + prefix, part)
            if k % 2
            else part.replace('"', "&quot;").replace("'", "&#x27;")
            for k, part in enumerate(parts)
        )
        return svg.replace("<svg ", f'<svg role="img" class="chart" aria-label="{_attr(self.title)}" ', 1)


_TAG = re.compile(r"(<[^>]+>)")  # text and attribute values are escaped: a "<" or ">" is always markup
_ID_REF = re.compile(r'(\bid="|url\(#|href="#)')


def _attr(text: str) -> str:
    import html

    return html.escape(text, quote=True)


@contextmanager
def _style() -> Iterator[None]:
    import matplotlib

    with matplotlib.rc_context(_RC):  # type: ignore[arg-type]  # keys typed as a Literal of every rcParam
        yield


def _new_figure(width: float, height: float) -> Figure:
    """A figure of ``width`` × ``height`` inches with constrained layout (labels never cut off)."""
    figure_class = _figure_class()
    with _style():
        return figure_class(figsize=(width, height), layout="constrained")


@functools.cache
def _figure_class() -> type[Figure]:
    """matplotlib's Figure, imported quietly, once the font the figures use is known to be there.

    Importing it builds matplotlib's font cache on first use and reports that (and a failure to save the
    cache, e.g. on a full disk) through logging, which with no handler set Python prints to stderr, where
    the report keeps its own errors; the cache only makes the next start faster. Those messages are
    silenced for the import only. A missing font is not silenced: it would change every figure.
    """
    logger = logging.getLogger("matplotlib.font_manager")
    quiet = logging.NullHandler()
    logger.addHandler(quiet)
    logger.propagate = False
    try:
        from matplotlib import font_manager
        from matplotlib.figure import Figure
    finally:
        logger.removeHandler(quiet)
        logger.propagate = True
    try:
        font_manager.findfont(
            font_manager.FontProperties(family=_RC["font.family"]), fallback_to_default=False
        )
    except ValueError:
        raise DataError(
            None,
            f"the figures need the font {_RC['font.family']}, which matplotlib ships: reinstall matplotlib",
        ) from None
    return Figure


def _label(text: str, width: int = WRAP_CHARS) -> str:
    """``text`` clipped to :data:`LABEL_CHARS` with "…" and wrapped at ``width`` characters."""
    text = " ".join(str(text).split())  # a newline or tab in a label is a space
    if len(text) > LABEL_CHARS:
        text = text[: LABEL_CHARS - 1] + "…"
    return "\n".join(textwrap.wrap(text, width, break_on_hyphens=True)) or " "


def charted_conditions(conditions: Sequence[str]) -> list[str]:
    """The conditions the charts draw: the first :data:`MAX_CHARTED` in study order."""
    return condition_order(conditions)[:MAX_CHARTED]


def report_charts(data: ReportData) -> list[Chart]:
    """Every figure of the report, in the page's order (sections without data draw nothing)."""
    return [*_rate_charts(data), *_effect_charts(data), *_share_charts(data), *_question_type_charts(data)]


def write_figures(charts: Sequence[Chart], folder: Path) -> list[Path]:
    """Write each chart as ``<name>.svg`` and ``<name>.pdf`` into ``folder`` (made when missing), each
    file atomically; returns the files written, in order."""

    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(folder, f"cannot make the figures folder ({exc.strerror or exc})") from None
    written = []
    for chart in charts:
        for suffix, content in ((".svg", chart.svg().encode("utf-8")), (".pdf", chart.pdf())):
            path = folder / f"{chart.name}{suffix}"
            write_bytes_atomic(path, content)
            written.append(path)
    return written


# --- the figures ---------------------------------------------------------------------------------------


def _rate_charts(data: ReportData) -> list[Chart]:
    if not data.rates:
        return []
    charted = charted_conditions([r["condition"] for r in data.rates])
    colors = {c: i for i, c in enumerate(charted)}
    cells: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for r in data.rates:
        if r["condition"] in colors:
            cells[(r["round"], r["provider"])].append(r)
    groups = sorted(cells.items())
    pass_groups = [
        (f"Round {rd}\n{prov}", [(r["condition"], r["pass_rate"], r["ci_low"], r["ci_high"])
                                             for r in group])
        for (rd, prov), group in groups
    ]  # fmt: skip
    comp_groups = [
        (
            f"Round {rd}\n{prov}",
            [
                (r["condition"], r["mean_composite"], *data.composite_ci.get((rd, r["condition"], prov), (None, None)))
                for r in group
            ],
        )
        for (rd, prov), group in groups
    ]  # fmt: skip
    out = [
        _bars(
            "rates",
            "pass-rate",
            "Pass rate by round, model and condition",
            "Pass rate (share of scored rows)",
            "Condition, grouped by round and model",
            pass_groups,
            colors,
            percent=True,
            note="Bars: pass rate over the scored rows; whiskers: 95 % Wilson interval on the items.",
        )
    ]
    if any(value is not None for _, series in comp_groups for _, value, _, _ in series):
        out.append(
            _bars(
                "rates",
                "mean-composite",
                "Mean composite score by round, model and condition",
                "Mean composite (0–1)",
                "Condition, grouped by round and model",
                comp_groups,
                colors,
                percent=False,
                note="Bars: mean composite over the items; whiskers: 95 % sign-flip interval.",
            )
        )
    return out


def _question_type_charts(data: ReportData) -> list[Chart]:

    groups = question_type_groups(data.question_types)
    charts = []
    for k, (heading, members) in enumerate(groups[:MAX_CHARTED]):
        series = [(e["label"], e["pass_rate"], e["ci_low"], e["ci_high"]) for e in members]
        suffix = f": {heading}" if heading else ""
        charts.append(
            _bars(
                "docsqa",
                "docs-qa-pass-rate-by-question-type" + (f"-{k + 1}" if heading else ""),
                _clip("Docs-QA pass rate by question type" + suffix, 120),
                "Pass rate (share of scored rows)",
                "Question type",
                [("", series)],
                {s[0]: 4 if i == len(series) - 1 else 0 for i, s in enumerate(series)},  # Overall in grey
                percent=True,
                note="Bars: pass rate over the scored rows; whiskers: 95 % Wilson interval on the items.",
            )
        )
    return charts


def _bars(
    section: str,
    name: str,
    title: str,
    ylabel: str,
    xlabel: str,
    groups: Sequence[tuple[str, Sequence[tuple[str, float | None, float | None, float | None]]]],
    colors: dict[str, int],
    *,
    percent: bool,
    note: str,
) -> Chart:
    """Grouped vertical bars on a 0–1 axis with interval whiskers: groups of (series, value, low, high),
    each bar labelled with its series, each group with its label below."""
    bars = sum(len(series) for _, series in groups)
    width = min(max(6.4, 1.4 + 0.75 * bars + 0.3 * len(groups)), 30.0)
    fig = _new_figure(width, 4.6)
    with _style():
        ax = fig.add_subplot()
        positions, labels, x = [], [], 0.0
        centres = []
        k = 0
        for group_label, series in groups:
            start = x
            for series_name, value, low, high in series:
                index = colors.get(series_name, 0)
                color = CONDITION_COLORS[index % len(CONDITION_COLORS)]
                hatch = CONDITION_HATCHES[(index // len(CONDITION_COLORS)) % len(CONDITION_HATCHES)]
                positions.append(x)
                labels.append(_label(series_name, 10))
                if value is not None:
                    (bar,) = ax.bar(
                        x, max(0.0, min(1.0, value)), width=0.8, color=color, hatch=hatch,
                        edgecolor="#333333", linewidth=0.6,
                    )  # fmt: skip
                    bar.set_gid(f"mark-bar-{k}")
                    if low is not None and high is not None:
                        ax.errorbar(
                            x, value, yerr=[[value - low], [high - value]], fmt="none", ecolor="#000000",
                            elinewidth=1.2, capsize=4,
                        )  # fmt: skip
                    _value_label(ax, x, value, f"{value:.0%}" if percent else f"{value:.2f}",
                                 whisker=low is not None and high is not None)  # fmt: skip
                else:
                    ax.annotate("n/a", (x, 0), xytext=(0, 3), textcoords="offset points", ha="center",
                                fontsize=8, color="#555555")  # fmt: skip
                x += 1.0
                k += 1
            # Each line of the group's label wrapped to the group's width (about 7 characters a bar).
            wrap = max(12, 7 * len(series))
            centres.append(
                (
                    (start + x - 1) / 2,
                    "\n".join(_label(part, wrap) for part in group_label.split("\n")) if group_label else "",
                )
            )
            x += 0.7
        ax.set_xticks(positions, labels, fontsize=9)
        ax.set_xlim(-0.6, x - 1.1)  # 0.6 of a bar beside the first and the last
        ax.set_ylim(0, 1.12)
        ax.set_yticks([0, 0.25, 0.5, 0.75, 1.0])
        if percent:
            ax.yaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
        ax.yaxis.grid(True)
        ax.set_ylabel(ylabel)
        fig.suptitle(title, x=0.01, ha="left", fontsize=12, fontweight="bold")
        # Below the group labels (drawn from the axes' bottom edge, clear of the tick labels).
        group_lines = max((g.count("\n") + 1 for _, g in centres if g), default=0)
        ax.set_xlabel(xlabel, labelpad=14 + 12.5 * group_lines if group_lines else 4)
        lines = max((label.count("\n") + 1 for label in labels), default=1)
        for centre, group_label in centres:
            if group_label:
                ax.annotate(
                    group_label, (centre, 0), xycoords=("data", "axes fraction"),
                    xytext=(0, -16 - 11 * lines), textcoords="offset points", ha="center", va="top",
                    fontsize=10, fontweight="bold",
                )  # fmt: skip
        fig.supxlabel(note, fontsize=8, color="#444444", x=0.01, ha="left")
    return Chart(section, name, title, fig)


def _value_label(ax: Any, x: float, value: float, text: str, *, whisker: bool) -> None:
    """The bar's value, written where the bar ends (the point estimate), never at an interval's end.

    With a whisker through the bar's middle the label sits beside it, on the bar's top to the left of the
    whisker, on a white ground (a grid line stays clear of the text); with none, just above the top.
    """
    top = max(0.0, min(1.0, value))  # where the bar is drawn
    if whisker:
        ax.annotate(
            text, (x, top), xytext=(-3, 2), textcoords="offset points", ha="right", va="bottom", fontsize=8,
            bbox={"boxstyle": "square,pad=0.15", "facecolor": "white", "edgecolor": "none", "alpha": 0.9},
        )  # fmt: skip
    else:
        ax.annotate(text, (x, top), xytext=(0, 3), textcoords="offset points", ha="center", va="bottom",
                    fontsize=8)  # fmt: skip


def _effect_charts(data: ReportData) -> list[Chart]:
    shown = [
        e
        for e in data.headline_effects
        if e.mean_diff is not None and e.ci_low is not None and e.ci_high is not None
    ][:MAX_EFFECTS]
    if not shown:
        return []
    title = "Paired condition effects"
    fig = _new_figure(8.0, 2.4 + 0.42 * len(shown))
    with _style():
        ax = fig.add_subplot()
        ys = list(range(len(shown)))[::-1]  # the first effect at the top
        seen: dict[str, Any] = {}
        for k, (e, y) in enumerate(zip(shown, ys, strict=True)):
            assert e.ci_low is not None and e.ci_high is not None and e.mean_diff is not None
            if e.ci_low > 0:
                kind, color, marker = "interval above 0: better", GOOD, "^"
            elif e.ci_high < 0:
                kind, color, marker = "interval below 0: worse", BAD, "v"
            else:
                kind, color, marker = "interval includes 0", NEUTRAL, "o"
            ax.plot([e.ci_low, e.ci_high], [y, y], color=color, linewidth=2.2, solid_capstyle="butt")
            (point,) = ax.plot([e.mean_diff], [y], marker=marker, markersize=8, color=color,
                               markeredgecolor="#222222", linestyle="none", label=kind)  # fmt: skip
            point.set_gid(f"mark-effect-{k}")
            seen.setdefault(kind, point)
        ax.axvline(0, color="#666666", linestyle="--", linewidth=1)
        ax.set_yticks(
            ys,
            [f"{_label(e.to, 30)} − {_label(e.from_, 30)} · {_label(e.metric, 60)}\n"
             f"{_label(e.provider, 60)}, round {_label(e.round, 30)}" for e in shown],
            fontsize=9,
        )  # fmt: skip
        ax.set_ylim(-0.7, len(shown) - 0.3)
        right = ax.secondary_yaxis("right")
        right.set_yticks(
            ys,
            [f"{e.mean_diff:+.3f} [{e.ci_low:+.3f}, {e.ci_high:+.3f}], n={e.n}" for e in shown],
            fontsize=9,
        )
        right.spines["right"].set_visible(False)
        right.tick_params(length=0)
        ax.xaxis.grid(True)
        ax.set_xlabel("Mean paired difference per item (later − earlier condition), 95 % sign-flip interval")
        right.set_ylabel("difference [95 % interval], items paired", fontsize=9)
        fig.suptitle(f"{title}: composite, judge and verifier scores", x=0.01, ha="left",
                     fontsize=12, fontweight="bold")  # fmt: skip
        kinds = [
            k for k in _EFFECT_KINDS if k in seen
        ]  # better, unclear, worse: the same order in every figure
        fig.legend([seen[k] for k in kinds], kinds, loc="outside lower center", ncols=3, fontsize=9)
    return [Chart("effects", "condition-effects", title, fig)]


_EFFECT_KINDS = ("interval above 0: better", "interval includes 0", "interval below 0: worse")


def _share_charts(data: ReportData) -> list[Chart]:
    shares = data.shares
    if not shares:
        return []
    charted = set(charted_conditions([s["condition"] for s in shares]))
    blocks: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    for s in shares:
        if s["condition"] in charted:
            blocks[(s["round"], s["provider"], s["source"])].append(s)
    names: set[str] = set()
    out = []
    for (round_, provider, source), entries in sorted(blocks.items()):
        judge = source == "judge"
        grader = "judge" if judge else "docs-QA grader"
        title = f"Verdicts per criterion: round {_clip(round_, 20)}, {_clip(provider, 60)}, {grader}"
        name = _unique(names, _slug(f"verdicts-round-{round_}-{provider}-{source.replace('_', '-')}"))
        out.append(
            Chart("criteria", name, _clip(title, 200), _shares_figure(title, entries, judge, data.negative))
        )
    return out


def _shares_figure(title: str, entries: list[dict[str, Any]], judge: bool, negative: set[str]) -> Figure:
    """One panel per condition (four to a row), one stacked bar per criterion: good, partial, bad."""
    conditions = condition_order({s["condition"] for s in entries})
    criteria = sorted({s["criterion"] for s in entries})
    found = {(s["criterion"], s["condition"]): s for s in entries}
    columns = min(len(conditions), 4)
    grid_rows = -(-len(conditions) // columns)
    label_width = max(len(_label(c, 44).split("\n")[0]) for c in criteria)
    width = min(max(6.4, 1.0 + 0.075 * label_width + 1.8 * columns), 30.0)
    fig = _new_figure(width, 2.4 + grid_rows * (0.7 + 0.27 * len(criteria)))
    with _style():
        axes = fig.subplots(grid_rows, columns, sharey=True, squeeze=False)
        ticks = [_label(c + (" (No = good)" if judge and c in negative else ""), 44) for c in criteria]
        ys = list(range(len(criteria)))[::-1]
        for panel, ax in enumerate(axes.flat):
            if panel >= len(conditions):
                ax.set_visible(False)
                continue
            condition = conditions[panel]
            totals = []
            for i, (criterion, y) in enumerate(zip(criteria, ys, strict=True)):
                s = found.get((criterion, condition))
                if s is None:
                    ax.text(0.01, y, "no verdicts", va="center", fontsize=8, color="#555555")
                    continue
                totals.append(s["rows"])
                left = 0.0
                for kind, share in _ordered_shares(s, judge, criterion in negative):
                    color, hatch = _KIND_STYLE[kind]
                    if share > 0:
                        (bar,) = ax.barh(y, share, left=left, height=0.72, color=color, hatch=hatch,
                                         edgecolor="white", linewidth=0.6)  # fmt: skip
                        bar.set_gid(f"mark-share-{i}-{panel}-{kind}")
                    left += share
            ax.set_xlim(0, 1)
            ax.set_xticks([0, 0.5, 1.0])
            ax.xaxis.set_major_formatter(lambda v, _: f"{v:.0%}")
            ax.set_yticks(ys, ticks, fontsize=9)
            ax.set_ylim(-0.6, len(criteria) - 0.4)
            ax.tick_params(axis="y", length=0)
            n = sorted(set(totals))
            rows = "" if not n else f"n = {n[0]}" if len(n) == 1 else f"n = {n[0]}–{n[-1]}"
            ax.set_title(_label(condition, 30).replace("\n", " "), loc="left", fontsize=10)
            ax.set_xlabel(f"share of rows ({rows})" if rows else "share of rows", fontsize=9)
        handles = _share_legend(fig, judge)
        fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), fontsize=9)
        fig.suptitle(
            _wrapped_title(title, int(width * 11)), x=0.01, ha="left", fontsize=12, fontweight="bold"
        )
        fig.get_layout_engine().set(wspace=0.08)  # type: ignore[union-attr,call-arg]  # "100%" and the next "0%" apart
    return fig


def _ordered_shares(entry: dict[str, Any], judge: bool, negative: bool) -> list[tuple[str, float]]:
    """A bar's segments left to right, good first: (kind, share)."""
    return [(kind, entry["shares"][verdict]) for kind, verdict in verdict_kinds(judge, negative)]


def verdict_kinds(judge: bool, negative: bool) -> list[tuple[str, str]]:
    """(kind, verdict) from good to bad: ``good``, ``partial``, ``bad``, ``none`` (n/a) for a judge's
    criterion (``negative``: its good answer is No) or a docs-QA grader's (``judge`` False)."""
    if not judge:
        return [("good", "pass"), ("bad", "fail"), ("none", "n/a")]
    good, bad = ("No", "Yes") if negative else ("Yes", "No")
    return [("good", good), ("partial", "Partial"), ("bad", bad)]


def _share_legend(fig: Figure, judge: bool) -> list[Any]:
    from matplotlib.patches import Patch

    labels = (
        [("good", "good (Yes; No where “No = good”)"), ("partial", "Partial"),
         ("bad", "bad (No; Yes where “No = good”)")]
        if judge
        else [("good", "pass (good)"), ("bad", "fail (bad)"), ("none", "n/a")]
    )  # fmt: skip
    return [
        Patch(facecolor=_KIND_STYLE[kind][0], hatch=_KIND_STYLE[kind][1], edgecolor="white", label=text)
        for kind, text in labels
    ]


def _wrapped_title(text: str, width: int) -> str:
    """A figure title: whitespace as spaces, clipped at 200 characters, wrapped at ``width``."""
    return "\n".join(textwrap.wrap(_clip(" ".join(text.split()), 200), width)) or " "


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _slug(text: str) -> str:
    """A file name from labels: lower-case letters, digits, dots and dashes, at most 80 characters."""
    slug = re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-.")
    return re.sub(r"-{2,}", "-", slug)[:80].strip("-.") or "figure"


def _unique(taken: set[str], name: str) -> str:
    """``name``, or ``name-2``, ``name-3`` … when two labels slug to the same name (first come, first)."""
    candidate, k = name, 1
    while candidate in taken:
        k += 1
        candidate = f"{name}-{k}"
    taken.add(candidate)
    return candidate
