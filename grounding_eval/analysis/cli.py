"""The results commands of the CLI: ``report``. Imports only argparse until a command runs."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

__all__ = ["COMMANDS", "add_commands", "run"]

COMMANDS = frozenset({"report"})


def add_commands(sub: argparse._SubParsersAction[Any]) -> None:
    """Add ``report`` to the ``grounding-eval`` parser."""
    r = sub.add_parser("report", help="summarize a promptfoo results file by round, condition and model")
    r.add_argument(
        "results", metavar="RESULTS_JSON", type=Path, help="written by promptfoo eval -o FILE.json"
    )
    r.add_argument(
        "--by",
        default="round,condition,provider",
        help="grouping keys, comma-separated: round, condition, provider, jurisdiction, topic, risk_tier",
    )
    r.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    """Run a results command; returns the exit status."""
    from grounding_eval.analysis.summary import format_report, load_rows, report_json

    by = [k.strip() for k in str(args.by).split(",") if k.strip()]
    rows = load_rows(args.results)
    print(json.dumps(report_json(rows, by), indent=2) if args.json else format_report(rows, by))
    return 0
