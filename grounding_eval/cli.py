"""``grounding-eval`` command line: verify one answer outside promptfoo.

Exit status: 0 the answer passes the verifier (also when something was not checked: the first line
says what), 1 it has a hard failure, 2 the input is bad (one line on stderr naming the file and the
problem), 3 no verdict: every check that would score raised (the first line, UNSCORED, names them).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NoReturn

from grounding_eval.errors import DataError, terminal_safe

__all__ = ["main"]

EXIT_PASS, EXIT_FAIL, EXIT_BAD_INPUT, EXIT_UNSCORED = 0, 1, 2, 3


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line, not argparse's usage block
        self.exit(EXIT_BAD_INPUT, f"{self.prog}: error: {message} (see --help)\n")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="grounding-eval", description="Grounding evaluation tools for promptfoo.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    v = sub.add_parser("verify", help="run the deterministic verifier on one answer file")
    v.add_argument("answer", metavar="ANSWER_FILE", type=Path, help="the model's answer (UTF-8 text)")
    v.add_argument("--jurisdiction", metavar="XX", help="the user's state (two-letter code)")
    v.add_argument(
        "--source",
        metavar="FILE",
        type=Path,
        action="append",
        default=[],
        help="the item's reference text (repeatable): quotes are checked against these, whichever "
        "condition the answer came from",
    )
    v.add_argument(
        "--dataset",
        metavar="DIR",
        type=Path,
        default=None,
        help="the dataset the answer's item comes from: a quote the --source texts do not hold is looked "
        "up in its other articles, and found there is OUTSIDE_SOURCES (named, not scored), not a fabricated "
        "quote (the allowlist, directory and citation index stay those of their own options)",
    )
    v.add_argument(
        "--meaning-change",
        choices=("hard", "soft"),
        default="hard",
        help="a quote that changes a number, negation or modal of its source: a hard failure scored 0 "
        "(hard, the default) or PARTIAL 0.5 (soft)",
    )
    v.add_argument(
        "--citation-check",
        choices=("hard", "information"),
        default="hard",
        help="an UNKNOWN citation or another state's law: a hard failure, as Round 3's safety checks decide "
        "(hard, the default), or listed only, as in Rounds 1a-2b (information); a citation never raises "
        "the score",
    )
    v.add_argument(
        "--allowlist",
        metavar="FILE",
        type=Path,
        default=None,
        help="URL allowlist: text (one URL per line) or CSV with a url column (default: the sample's)",
    )
    v.add_argument(
        "--orgs",
        metavar="FILE",
        type=Path,
        default=None,
        help="organization directory YAML (default: the pack's directory of every state, DC and the "
        "territories, datasets/directory/organizations.yaml)",
    )
    v.add_argument(
        "--citations",
        metavar="FILE",
        type=Path,
        default=None,
        help="citation index YAML (citations.yaml: the sections listed and the codes listed completely; "
        "default: the sample's); legal citations are also checked against the --source texts",
    )
    v.add_argument(
        "--offline",
        action="store_true",
        help="do not check liveness over the network: URLs outside the allowlist are UNCHECKED "
        "unless the liveness snapshot knows them",
    )
    v.add_argument(
        "--allow-host",
        metavar="HOST",
        action="append",
        default=[],
        help="exempt HOST from the private/loopback refusal of the liveness check (repeatable)",
    )
    v.add_argument(
        "--dns-server",
        metavar="IP[:PORT]",
        help="the nameserver a live check asks whether a URL's host exists (default: the system's)",
    )
    v.add_argument(
        "--url-deadline",
        metavar="SECONDS",
        type=float,
        default=None,
        help="live: seconds one URL may take in all",
    )
    v.add_argument(
        "--answer-budget",
        metavar="SECONDS",
        type=float,
        default=None,
        help="live: seconds of checks per answer",
    )
    v.add_argument(
        "--max-urls-checked", metavar="N", type=int, default=None, help="live: URLs checked per answer"
    )
    v.add_argument(
        "--liveness-snapshot",
        metavar="FILE",
        type=Path,
        help="recorded liveness results (CSV url,status,http_status,checked_at), consulted first",
    )
    v.add_argument(
        "--liveness-cache",
        metavar="FILE",
        type=Path,
        help="on-disk liveness cache (default: liveness.sqlite in the user's cache folder, "
        "~/.cache/grounding-eval)",
    )
    v.add_argument("--json", action="store_true", help="print the report as JSON")
    _add_data_commands(sub)
    return parser  # fmt: skip


def _add_data_commands(sub: argparse._SubParsersAction[_Parser]) -> None:
    c = sub.add_parser("conditions", help="the C1/C1.5 grounding variables filled from a dataset")
    csub = c.add_subparsers(dest="action", required=True, parser_class=_Parser)
    stats = csub.add_parser("stats", help="per item: chosen records and estimated tokens of C1 and C1.5")
    show = csub.add_parser("show", help="print the rendered prompt of one item under one condition")
    for p in (stats, show):
        p.add_argument(
            "--dataset",
            metavar="DIR",
            type=Path,
            default=None,
            help="dataset folder (default $GROUNDING_EVAL_DATASET, else datasets/sample)",
        )
        p.add_argument(
            "--matched-directory",
            action="store_true",
            help="build C1's directory from the C1.5 articles' own records (a matched comparison; the "
            "test generator's directory: matched), not the top-ranked index records",
        )
    stats.add_argument("--round", choices=["1a", "1b", "2", "2b", "3"], help="only this round's items")
    stats.add_argument("--json", action="store_true", help="print JSON lines")
    show.add_argument("item_id", metavar="ID")
    show.add_argument("--condition", choices=["C0", "C1", "C1.5"], default="C1.5")

    a = sub.add_parser("allowlist", help="URL allowlists")
    asub = a.add_subparsers(dest="action", required=True, parser_class=_Parser)
    build = asub.add_parser("build", help="write the URL allowlist derived from a content index")
    build.add_argument("index", metavar="INDEX", type=Path, help="content index (.jsonl, .csv, .yaml, .json)")
    build.add_argument("-o", "--output", metavar="FILE", type=Path, help="write here instead of stdout")
    build.add_argument("--force", action="store_true", help="overwrite FILE if it exists")

    o = sub.add_parser("orgs", help="the organization directory")
    osub = o.add_subparsers(dest="action", required=True, parser_class=_Parser)
    check = osub.add_parser("check", help="cross-check a directory against a content index")
    check.add_argument(
        "--orgs",
        metavar="FILE",
        type=Path,
        default=None,
        help="organization directory (default: the pack's directory of every state, "
        "datasets/directory/organizations.yaml)",
    )
    check.add_argument("--index", metavar="FILE", type=Path, required=True)

    j = sub.add_parser("judge", help="the rubric judge")
    jsub = j.add_subparsers(dest="action", required=True, parser_class=_Parser)
    jp = jsub.add_parser(
        "prompt", help="print the judge prompt for one recorded answer (what the judge sees)"
    )
    jp.add_argument("item_id", metavar="ID")
    jp.add_argument("condition", choices=["C0", "C1", "C1.5"])
    jp.add_argument("--round", required=True, choices=["1a", "1b", "2", "2b", "3"])
    jp.add_argument("--dataset", metavar="DIR", type=Path, default=None)
    jp.add_argument(
        "--answer", metavar="FILE", type=Path, help="answer text (default: the dataset's recording)"
    )

    rb = sub.add_parser("rubric", help="the judge rubrics")
    rbsub = rb.add_subparsers(dest="action", required=True, parser_class=_Parser)
    rs = rbsub.add_parser(
        "show",
        help="print a rubric, each text marked [methods-document] (verbatim) or [grounding-eval] (ours)",
    )
    rs.add_argument("rubric", metavar="RUBRIC_ID_OR_PATH", help="v3, v4, round3, or a rubric YAML file")

    d = sub.add_parser("data", help="datasets")
    dsub = d.add_subparsers(dest="action", required=True, parser_class=_Parser)
    validate = dsub.add_parser("validate", help="load and cross-check a dataset folder")
    validate.add_argument("dataset", metavar="DIR", type=Path)  # fmt: skip
    from grounding_eval.data_cli import add_sample_command  # argparse only: cheap

    add_sample_command(dsub)
    for module in _command_modules():
        module.add_commands(sub)


# Command groups that live beside the part they drive. Each module has ``COMMANDS`` (the top-level
# command names it owns), ``add_commands(sub)`` and ``run(args) -> int``; importing it must stay cheap
# (argparse only), because the parser is built on every call.
_COMMAND_MODULES = (
    "grounding_eval.analysis.cli",
    "grounding_eval.factuality.cli",
    "grounding_eval.docs_qa.cli",
    "grounding_eval.judge.audit_cli",
    "grounding_eval.rescore",
    "grounding_eval.share.cli",
    "grounding_eval.environment",
)


def _command_modules() -> list[Any]:
    return [importlib.import_module(name) for name in _COMMAND_MODULES]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = _build_parser().parse_args(argv)
    try:
        if args.command == "verify":
            return _verify(args)
        if args.command == "rubric":
            return _rubric_show(args)
        for module in _command_modules():
            if args.command in module.COMMANDS:
                return int(module.run(args))
        from grounding_eval import data_cli

        return data_cli.run(args)
    except DataError as exc:
        print(f"grounding-eval: error: {exc.one_line()}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except BrokenPipeError:  # the reader went away (`… | head`): stop quietly, as Unix tools do
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAIL


def _verify(args: argparse.Namespace) -> int:
    from grounding_eval.files import read_text
    from grounding_eval.resources import pack_directory
    from grounding_eval.states import parse_state
    from grounding_eval.user_cache import cache_root
    from grounding_eval.verifier.explain import check_lines, summary_line
    from grounding_eval.verifier.limits import answer_too_large
    from grounding_eval.verifier.setup import load_resources
    from grounding_eval.verifier.verdict import collector_paused, verify

    jurisdiction = None
    if args.jurisdiction is not None:
        try:
            jurisdiction = parse_state(args.jurisdiction)
        except ValueError as exc:
            raise DataError("--jurisdiction", str(exc)) from None
    answer = read_text(args.answer)
    too_large = answer_too_large(answer)
    if too_large is not None:
        raise DataError(args.answer, too_large)
    sources = [read_text(p) for p in args.source]
    resources = load_resources(
        allowlist=args.allowlist or _sample("allowlist.txt"),
        orgs=args.orgs or pack_directory(),
        citations=args.citations or _sample("citations.yaml"),
        liveness="offline" if args.offline else "live",
        snapshot=args.liveness_snapshot,
        cache_path=args.liveness_cache or cache_root() / "liveness.sqlite",
        allow_hosts=args.allow_host,
        dns_server=args.dns_server,
        dataset=args.dataset,
        **{
            key: value
            for key in ("url_deadline", "answer_budget", "max_urls_checked")
            if (value := getattr(args, key)) is not None
        },
    )
    with collector_paused():  # the report's findings, JSON and lines hold no cycles (collector_paused)
        report = verify(
            answer,
            jurisdiction=jurisdiction,
            sources=sources,
            resources=resources,
            source_labels=[str(p) for p in args.source],
            meaning_change=args.meaning_change,
            citation_check=args.citation_check,
        )
        if args.json:
            print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
        else:
            print(terminal_safe(summary_line(report)))  # the lines quote the answer: escaped for the terminal
            for line in check_lines(report).values():
                print("  " + terminal_safe(line))
    if report.unscored:  # the checks applied and raised: no verdict
        return EXIT_UNSCORED
    return EXIT_PASS if report.passed else EXIT_FAIL


def _sample(name: str) -> Path:
    """A file of the pack's sample dataset (the repository's, or the installed package's)."""
    from grounding_eval.resources import pack_root

    return pack_root() / "datasets" / "sample" / name


def _rubric_show(args: argparse.Namespace) -> int:
    from grounding_eval.judge.rubric import format_rubric, load_rubric, rubric_path

    path = rubric_path(args.rubric)
    # The docs-QA and factual-accuracy rubrics have formats of their own (pass/fail/n-a; claim verdicts).
    if path.stem == "docs_qa":
        from grounding_eval.docs_qa.rubric import format_docs_qa_rubric, load_docs_qa_rubric

        sys.stdout.write(format_docs_qa_rubric(load_docs_qa_rubric(path)))
    elif path.stem == "factual_accuracy":
        from grounding_eval.factuality.rubric import format_rubric as format_factuality
        from grounding_eval.factuality.rubric import load_rubric as load_factuality

        sys.stdout.write(format_factuality(load_factuality(path)))
    else:
        sys.stdout.write(format_rubric(load_rubric(path)))
    return EXIT_PASS


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
