"""The results commands of the CLI: ``report`` and ``calibrate``. Imports only argparse until a command runs.

NumPy, SciPy and matplotlib (the ``analysis`` extra) are imported inside the commands that need them: the
parser is built on every ``grounding-eval`` call.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["COMMANDS", "add_commands", "run"]

COMMANDS = frozenset({"report", "calibrate", "plan"})


def add_commands(sub: argparse._SubParsersAction[Any]) -> None:
    """Add ``report`` and ``calibrate`` to the ``grounding-eval`` parser."""
    r = sub.add_parser(
        "report",
        help="summarize promptfoo results files: groups, paired condition effects, an HTML report, figures",
    )
    r.add_argument(
        "results",
        metavar="RESULTS_JSON",
        type=Path,
        nargs="+",
        help="written by promptfoo eval -o FILE.json (several allowed, e.g. one per model)",
    )
    r.add_argument(
        "--by",
        default="round,condition,provider",
        help="grouping keys, comma-separated: round, condition, provider, jurisdiction, topic, risk_tier, "
        "question_type (alone: the docs-QA table by question type)",
    )
    r.add_argument(
        "--effects",
        action="store_true",
        help="paired condition effects (C1 − C0, C1.5 − C1, C1.5 − C0) per model, the pass-rate difference "
        "among them, with intervals, raw and Holm-adjusted p-values, and pass rates with Wilson intervals",
    )
    r.add_argument(
        "--primary",
        metavar="METRIC:TO-FROM",
        help="the study's primary endpoint, e.g. composite:C1.5-C0 (every model): listed first, a Holm "
        "family of its own (default: the rows' test metadata primary_endpoint, if any)",
    )
    r.add_argument(
        "--rates",
        action="store_true",
        help="pass rate per round × condition × model over the scored rows, with 95 %% Wilson intervals",
    )
    r.add_argument(
        "--criteria",
        action="store_true",
        help="per criterion: the share of Yes / Partial / No (docs-QA: pass / fail / n/a) per condition",
    )
    r.add_argument(
        "--html",
        metavar="FILE",
        type=Path,
        help="write a self-contained HTML report here (prints one line naming it; the report itself only "
        "with --print)",
    )
    r.add_argument(
        "--figures",
        metavar="DIR",
        type=Path,
        help="write each figure of the HTML report as SVG and PDF into DIR (made when missing; prints "
        "one line per file)",
    )
    r.add_argument(
        "--print",
        action="store_true",
        help="with --html or --figures: print the report (text or --json) as well; after JSON, the lines "
        "naming the files written go to stderr",
    )
    r.add_argument(
        "--sheet",
        metavar="CSV",
        type=Path,
        help="a graded calibration sheet, for the HTML report's calibration section "
        "(scored against the first RESULTS_JSON)",
    )
    r.add_argument("--json", action="store_true", help="print JSON")
    r.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        type=Path,
        help="write what would be printed to FILE instead (replaced whole: never left half-written)",
    )

    p = sub.add_parser(
        "plan",
        help="the smallest effect a round's items can detect, and the items a target effect needs "
        "(from a pilot results file, or a stated SD)",
    )
    p.add_argument(
        "results", metavar="RESULTS_JSON", type=Path, nargs="*", help="a pilot's results (several allowed)"
    )
    p.add_argument("--sd", type=float, help="instead of a pilot: the SD of the items' paired differences")
    p.add_argument("--items", type=int, help="items per round (default: the pilot's; required with --sd)")
    p.add_argument("--metric", default="composite", help="the metric compared (default composite)")
    p.add_argument(
        "--target", type=float, help="a target effect (mean paired difference): the items it needs"
    )
    p.add_argument("--power", type=float, default=None, help="power to plan for (default 0.80)")
    p.add_argument(
        "--alpha", type=float, default=None, help="the study's α before multiplicity (default 0.05)"
    )
    p.add_argument(
        "--family", type=int,
        help="comparisons in the Holm family (default: as the report counts them in the pilot; 1 with --sd)",
    )  # fmt: skip
    p.add_argument(
        "--primary", metavar="METRIC:TO-FROM", help="the declared primary endpoint (its own family)"
    )
    p.add_argument("--json", action="store_true", help="print JSON")
    c = sub.add_parser("calibrate", help="calibrate the judge against people: draw a sample, score it")
    csub = c.add_subparsers(dest="action", required=True, parser_class=type(r))
    s = csub.add_parser("sample", help="draw a stratified random sample and write a grading sheet (CSV)")
    s.add_argument("results", metavar="RESULTS_JSON", type=Path)
    s.add_argument(
        "--fraction",
        type=float,
        default=0.15,
        help="share of rows to draw, 0.10–0.20 (0.15); the total is this share, spread over the strata",
    )
    s.add_argument("--by", default="round,condition", help="strata keys, comma-separated (round,condition)")
    s.add_argument("--seed", type=int, required=True, help="random seed (recorded in the key file)")
    s.add_argument(
        "-o",
        "--output",
        metavar="CSV",
        type=Path,
        required=True,
        help="the grading sheet; the judge's verdicts go to <name>.key.json beside it",
    )
    s.add_argument(
        "--force",
        action="store_true",
        help="overwrite an existing sheet and its key file (they may hold grades)",
    )
    sc = csub.add_parser("score", help="agreement, kappa and confusion of people versus the judge")
    sc.add_argument("results", metavar="RESULTS_JSON", type=Path)
    sc.add_argument(
        "sheet",
        metavar="SHEET_CSV",
        type=Path,
        nargs="?",
        help="the graded sheet (its key file, drawn from RESULTS_JSON, beside it)",
    )
    sc.add_argument(
        "--ratings",
        metavar="EXPORT_JSON",
        type=Path,
        help="instead of a sheet: 👍/👎 made in promptfoo's viewer (promptfoo export eval), compared with "
        "each row's final verdict in RESULTS_JSON; non-blind",
    )
    sc.add_argument("--threshold", type=float, default=None, help="agreement threshold (default 0.90)")
    sc.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    """Run a results command; returns the exit status."""
    if args.command == "calibrate":
        return _calibrate(args)
    if args.command == "plan":
        return _plan(args)
    from grounding_eval.analysis.summary import load_results
    from grounding_eval.files import write_text_atomic

    by = [k.strip() for k in str(args.by).split(",") if k.strip()]
    flags = (("--effects", args.effects), ("--rates", args.rates), ("--html", args.html is not None),
             ("--figures", args.figures is not None), ("--by question_type", by == ["question_type"]))  # fmt: skip
    needs = [flag for flag, on in flags if on]
    if needs:
        _need_analysis(f"report {needs[0]}", figures=args.html is not None or args.figures is not None)
    # Only the text report and the HTML page show what produced the rows.
    plain = not (args.json or args.effects or args.rates or args.criteria or by == ["question_type"])
    loaded = [load_results(path, provenance=plain or args.html is not None) for path in args.results]
    rows = [row for results in loaded for row in results.rows]
    wrote = _write_files(args, loaded, rows)
    # Writing files is what --html and --figures were asked for: the report itself is printed only with
    # --print (or written with -o).
    json_out = False
    if (args.html is None and args.figures is None) or args.print or args.output is not None:
        text = _report_text(args, by, loaded, rows)
        if args.output is not None:
            write_text_atomic(args.output, text + "\n")
        else:
            print(text)
            json_out = args.json
    from grounding_eval.errors import terminal_safe

    for line in wrote:  # after JSON on stdout they go to stderr: stdout stays one JSON document
        print(terminal_safe(line), file=sys.stderr if json_out else sys.stdout)
    return 0


def _write_files(args: argparse.Namespace, loaded: list[Any], rows: list[Any]) -> list[str]:
    """Write the figures (``--figures``) and the HTML page (``--html``), each file atomically; returns
    one line per file, saying what was written where."""
    if args.html is None and args.figures is None:
        return []
    from grounding_eval.analysis.effects import declared_primary
    from grounding_eval.analysis.figures import report_charts, write_figures
    from grounding_eval.analysis.html_report import render_html
    from grounding_eval.analysis.report_data import ReportData
    from grounding_eval.files import write_text_atomic

    data = ReportData(rows, primary=declared_primary(rows, args.primary))
    charts = report_charts(data)  # drawn once for both
    lines = []
    if args.figures is not None:
        written = write_figures(charts, args.figures)
        lines += [f"wrote figure {path}" for path in written] or [
            f"wrote no figure to {args.figures}: these results hold nothing to draw"
        ]
    if args.html is not None:
        write_text_atomic(args.html, render_html(loaded, sheet=args.sheet, charts=charts, data=data))
        lines.append(f"wrote report to {args.html}")
    return lines


def _report_text(args: argparse.Namespace, by: list[str], loaded: list[Any], rows: list[Any]) -> str:
    """What ``report`` prints. Text outputs escape every control character a results file brought
    (:func:`~grounding_eval.errors.terminal_safe`); JSON escapes them itself."""
    from grounding_eval.analysis.summary import format_report, report_json
    from grounding_eval.errors import terminal_safe

    if args.effects:
        from grounding_eval.analysis.effects import (
            declared_primary,
            format_effects,
            paired_effects,
            pass_rates,
        )
        from grounding_eval.analysis.summary import findings_lines, findings_table

        primary = declared_primary(rows, args.primary)
        effects = paired_effects(rows, primary=primary)
        if args.json:
            return json.dumps([e.as_dict() for e in effects], indent=2)
        # What the verifier found per condition stands beside the effects (report --json: "findings").
        found = findings_lines(findings_table(rows), ("round", "condition", "provider"))
        # The judge's own reliability stands beside them too, when rescore --retest / --panel measured it
        # (report --json: "judge_reliability"; --effects --json stays the list of effects), and whether C1 and
        # C1.5 gave the model the same records, beside a C1.5 − C1 effect (issue 41).
        from grounding_eval.analysis.grounding_records import grounding_records_lines
        from grounding_eval.analysis.reliability import format_reliability, judge_reliability

        measured = format_reliability(judge_reliability(rows))
        records = grounding_records_lines(rows)
        text = "\n".join([
            format_effects(effects, pass_rates(rows), primary),
            *(["", *found] if found else []),
            *(["", *records] if records else []),
            *(["", *measured] if measured else []),
        ])  # fmt: skip
        return terminal_safe(text, lines=True)
    if args.rates:
        from grounding_eval.analysis.effects import format_rates, pass_rates

        rates = pass_rates(rows)
        return json.dumps(rates, indent=2) if args.json else terminal_safe(format_rates(rates), lines=True)
    if args.criteria:
        from grounding_eval.analysis.effects import criterion_shares, format_shares

        shares = criterion_shares(rows)
        return json.dumps(shares, indent=2) if args.json else terminal_safe(format_shares(shares), lines=True)
    if by == ["question_type"]:
        from grounding_eval.analysis.effects import format_question_types, question_type_table

        entries = question_type_table(rows)
        if args.json:
            return json.dumps(entries, indent=2)
        return terminal_safe(format_question_types(entries), lines=True)
    from grounding_eval.analysis.reliability import answer_length_table, format_reliability, judge_reliability

    if any(row.opinions for row in rows):
        _need_analysis("report (judge test-retest and panel agreement)")
    reliability = judge_reliability(rows)
    if args.json:
        whole = report_json(rows, by, files=loaded)
        whole["answer_length"] = answer_length_table(rows)
        if reliability is not None:
            whole["judge_reliability"] = reliability
        whole["statistics"] = _statistics_json(rows, args.primary)
        return json.dumps(whole, indent=2)
    length = _length_lines(answer_length_table(rows))
    lines = [format_report(rows, by), *(["", *length] if length else [])]
    if reliability is not None:
        lines += ["", *format_reliability(reliability)]
    return terminal_safe("\n".join([*lines, *_provenance_lines(loaded)]), lines=True)


def _statistics_json(rows: list[Any], primary_spec: str | None) -> dict[str, Any]:
    """``report --json``'s ``statistics``: what ``--effects``, ``--rates`` and ``--by question_type`` print
    (paired effects with raw and Holm-adjusted p, the paired pass-rate tests among them; pass rates with
    their item-level intervals; the docs-QA table per model), or why they were not computed."""
    from grounding_eval.errors import DataError

    try:
        _need_analysis("report --json (statistics)")
    except DataError as exc:  # the plain report needs no NumPy: the JSON says what it left out, and why
        return {"status": "not computed", "reason": str(exc)}
    from grounding_eval.analysis.effects import declared_primary
    from grounding_eval.analysis.report_data import ReportData

    data = ReportData(rows, primary=declared_primary(rows, primary_spec))
    return {
        "status": "computed",
        "primary": (
            None
            if data.primary is None
            else {"metric": data.primary.metric, "from": data.primary.from_, "to": data.primary.to}
        ),
        "effects": [e.as_dict() for e in data.effects],
        "pass_rates": data.rates,
        "question_types": data.question_types,
    }


def _length_lines(table: list[dict[str, Any]]) -> list[str]:
    """The answers' mean length per round, condition and model (text report)."""
    from grounding_eval.analysis.summary import table_lines

    if not table:
        return []
    body = [["round", "condition", "provider", "answers", "mean chars", "mean words", "median words"]]
    body += [[t["round"], t["condition"], t["provider"], str(t["rows"]), f"{t['mean_chars']:.0f}",
              f"{t['mean_words']:.0f}", f"{t['median_words']:.0f}"] for t in table]  # fmt: skip
    return ["Answer length (from response.output; characters and words)", *table_lines(body)]


def _provenance_lines(loaded: list[Any]) -> list[str]:
    """What produced each results file: grounding-eval version, rubrics (id, version, SHA-256), prompt
    versions and datasets, as the rows' ``metadata.provenance`` records them."""
    from grounding_eval.provenance import format_provenance

    lines = []
    for results in loaded:
        if not results.provenance.get("rows_with_provenance"):
            continue  # made before rows recorded it (or by other assertions): nothing to print
        lines += [
            "",
            f"Provenance of {results.path}",
            *(f"  {line}" for line in format_provenance(results.provenance)),
        ]
    return lines


def _need_analysis(command: str, *, figures: bool = False) -> None:
    """NumPy, SciPy and (for ``figures``) matplotlib are the ``analysis`` extra: without them, one line
    saying how to install them."""
    from grounding_eval.errors import DataError

    try:
        import numpy  # noqa: F401
        import scipy  # type: ignore[import-untyped]  # noqa: F401

        if figures:
            import matplotlib  # noqa: F401
    except ImportError as exc:
        raise DataError(
            None,
            f"{command} needs the analysis extra ({exc.name or 'numpy/scipy'} is not installed): "
            "pip install 'grounding-eval[analysis]'",
        ) from None


def _plan(args: argparse.Namespace) -> int:
    """``grounding-eval plan``: :mod:`grounding_eval.analysis.planning` over a pilot, or a stated SD."""
    from grounding_eval.analysis.effects import decisions
    from grounding_eval.errors import DataError, terminal_safe

    _need_analysis("plan")
    from grounding_eval.analysis import planning

    setup = decisions()["planning"]
    alpha = float(setup["alpha"]) if args.alpha is None else args.alpha
    target_power = float(setup["power"]) if args.power is None else args.power
    for name, value, ok in (("--alpha", alpha, 0 < alpha < 1), ("--power", target_power, 0 < target_power < 1),
                            ("--family", args.family, args.family is None or args.family >= 1),
                            ("--items", args.items, args.items is None or args.items >= 2),
                            ("--target", args.target, args.target is None or args.target != 0)):  # fmt: skip
        if not ok:
            raise DataError(name, f"{value} is out of range")
    if args.sd is not None:
        if args.results:
            raise DataError("--sd", "give a pilot results file or --sd, not both")
        if args.sd <= 0 or args.items is None:
            raise DataError("--sd", "needs a positive SD and --items N")
        plans = [planning.plan("stated SD", args.metric, sd=args.sd, n=args.items, family=args.family or 1,
                               alpha=alpha, target_power=target_power, target=args.target)]  # fmt: skip
    else:
        if not args.results:
            raise DataError("plan", "give a pilot results file (RESULTS_JSON) or --sd SD --items N")
        from grounding_eval.analysis.effects import declared_primary
        from grounding_eval.analysis.summary import load_rows

        rows = [row for path in args.results for row in load_rows(path)]
        plans = planning.pilot_plans(rows, metric=args.metric, target=args.target, alpha=alpha,
                                     target_power=target_power, family=args.family, items=args.items,
                                     primary=declared_primary(rows, args.primary))  # fmt: skip
    if args.json:
        print(json.dumps([p.as_dict() for p in plans], indent=2))
    else:
        print(terminal_safe(planning.format_plans(plans), lines=True))
    return 0


def _calibrate(args: argparse.Namespace) -> int:
    from grounding_eval.analysis import calibrate

    if args.action == "sample":
        strata = [k.strip() for k in str(args.by).split(",") if k.strip()]
        drawn = calibrate.write_sample(
            args.results, args.output, fraction=args.fraction, by=strata, seed=args.seed, force=args.force
        )
        from grounding_eval.errors import terminal_safe

        print(terminal_safe("\n".join(drawn.summary()), lines=True))  # strata are labels from the results
        print(f"wrote {args.output}; the judge's verdicts to {drawn.key}")
        return 0
    _need_analysis("calibrate score")
    report = calibrate.score(args.results, args.sheet, ratings=args.ratings, threshold=args.threshold)
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        from grounding_eval.errors import terminal_safe

        print(terminal_safe(calibrate.format_score(report), lines=True))
    return 0
