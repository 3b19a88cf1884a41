"""``grounding-eval init``, ``share`` and ``bundle check``: the partner researchers' commands (issue 10).

Exit status: 0 done (``bundle check``: verified, warnings allowed); 2 a refused input or bundle, one
line on stderr naming the file (or bundle member) and the problem.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["COMMANDS", "add_commands", "run"]

COMMANDS = frozenset({"init", "share", "bundle", "provenance"})
STUDY_IDS = ("1a", "1b", "2", "2b", "3", "factuality", "docs-qa")


def add_commands(sub: argparse._SubParsersAction[Any]) -> None:
    """Register ``init``, ``share`` and ``bundle check``."""
    init = sub.add_parser("init", help="scaffold a study folder that runs on the installed pack")
    init.add_argument("directory", metavar="DIR", type=Path)
    init.add_argument("--round", choices=STUDY_IDS, default="3", help="the evaluation (default 3)")
    init.add_argument(
        "--dataset", metavar="PATH", type=Path, help="your dataset folder (default: the sample)"
    )
    init.add_argument("--force", action="store_true", help="overwrite the study's files if they exist")

    share = sub.add_parser("share", help="pack a study into a bundle a partner can verify and reproduce")
    share.add_argument("study", metavar="STUDY_DIR", type=Path)
    share.add_argument("-o", "--output", metavar="BUNDLE", type=Path, required=True, help="bundle.tar.gz")
    share.add_argument(
        "--results",
        metavar="FILE",
        type=Path,
        nargs="+",
        action="extend",  # --results A --results B keeps both, as --results A B does
        default=[],
        help="results JSON (repeat the option, or list several)",
    )
    share.add_argument(
        "--redact",
        action="store_true",
        help="drop High-Risk items' question text, answers and sources; keep ids, scores, verdicts, finding types",
    )
    share.add_argument(
        "--data",
        metavar="DIR",
        type=Path,
        help="include this dataset's files (must validate; hashes only with --redact)",
    )

    prov = sub.add_parser(
        "provenance", help="which grounding-eval, rubrics, prompts and datasets produced results"
    )
    prov.add_argument("results", metavar="RESULTS", type=Path, nargs="+", help="promptfoo results JSON")

    bundle = sub.add_parser("bundle", help="shared study bundles")
    bsub = bundle.add_subparsers(dest="action", required=True, parser_class=type(bundle))
    check = bsub.add_parser(
        "check", help="verify a bundle's manifest; warn on versions that can change scores"
    )
    check.add_argument("bundle", metavar="BUNDLE", type=Path)


def run(args: argparse.Namespace) -> int:
    """Run one of this module's commands; a refusal raises :class:`~grounding_eval.errors.DataError`."""
    if args.command == "init":
        return _init(args)
    if args.command == "share":
        return _share(args)
    if args.command == "provenance":
        return _provenance(args)
    return _check(args)


def _init(args: argparse.Namespace) -> int:
    from grounding_eval.share.scaffold import describe, scaffold

    written = scaffold(args.directory, args.round, args.dataset, force=args.force)
    for line in describe(args.directory, args.round, args.dataset, written):
        print(line)
    return 0


def _share(args: argparse.Namespace) -> int:
    from grounding_eval.share.bundle import make_bundle

    manifest = make_bundle(
        args.study, args.output, results=args.results, redact=args.redact, dataset=args.data
    )
    note = f", {manifest['redacted_rows']} High-Risk rows redacted" if args.redact else ""
    print(f"wrote {args.output}: {len(manifest['files'])} files{note}")
    verbatim = 0 if args.redact else manifest["high_risk_rows"]
    if verbatim:
        print(
            f"grounding-eval: warning: {args.output} holds {verbatim} High-Risk "
            f"row{'' if verbatim == 1 else 's'} verbatim (the person's question and the answer); "
            "share with --redact to replace them with hashes",
            file=sys.stderr,
        )
    return 0


def _provenance(args: argparse.Namespace) -> int:
    from grounding_eval.errors import DataError, terminal_safe
    from grounding_eval.provenance import format_provenance, results_provenance
    from grounding_eval.results_file import RowProblem, read_results

    for number, path in enumerate(args.results):
        try:
            counted = results_provenance(read_results(path))
        except RowProblem as exc:
            raise DataError(path, str(exc)) from None
        print(("\n" if number else "") + f"Provenance of {path}")
        for line in format_provenance(counted):
            print(f"  {terminal_safe(line)}")  # the values come from the results file
    return 0


def _check(args: argparse.Namespace) -> int:
    from grounding_eval.errors import terminal_safe
    from grounding_eval.share.check import check_bundle

    report = check_bundle(args.bundle)
    m = report.manifest
    print(
        terminal_safe(
            f"{args.bundle}: OK, {report.files} files match the manifest (grounding-eval "
            f"{m.get('grounding_eval')}, promptfoo {m.get('promptfoo')}{', redacted' if m.get('redacted') else ''})"
        )
    )
    for warning in report.warnings:
        print(f"warning: {terminal_safe(warning)}")  # names and versions come from the bundle
    for line in report.listed:  # what the study would reach or run beyond the pack: read it before running
        print(terminal_safe(line))
    return 0
