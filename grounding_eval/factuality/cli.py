"""The factuality commands of the CLI. Imports only argparse until a command runs.

``grounding-eval factuality TARGET_FILE --evidence FILE... [--judge PROVIDER_ID] [--base-url URL]
[--risk-level high] [--review-queue FILE] [--json]`` judges any text against any evidence files.
Exit status: 0 a judgment was made (``scored`` or ``no_verifiable_claims``), 1 it needs human
verification or ended in an error (the judge failed, or replied invalidly twice), 2 bad input (one line
on stderr naming the file or option and the problem).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["COMMANDS", "add_commands", "run"]

COMMANDS: frozenset[str] = frozenset({"factuality"})

_EXIT_OK, _EXIT_FLAGGED, _EXIT_BAD_INPUT = 0, 1, 2


def add_commands(sub: argparse._SubParsersAction[Any]) -> None:
    """Add ``factuality`` to the ``grounding-eval`` parser."""
    p = sub.add_parser(
        "factuality",
        help="judge a text's factual accuracy claim by claim against evidence files (seed 000)",
        description="Judge TARGET_FILE claim by claim against the evidence; the score is computed in code.",
    )
    p.add_argument("target", metavar="TARGET_FILE", type=Path, nargs="?", help="the text to judge (UTF-8)")
    p.add_argument(
        "--evidence",
        metavar="FILE",
        type=Path,
        nargs="+",
        action="extend",
        default=[],
        help="evidence: text files (id = file name without extension) or .yaml/.json chunk lists "
        "[{source_document_id, chunk_id, text}]",
    )
    p.add_argument(
        "--judge",
        metavar="PROVIDER_ID",
        help="any provider id promptfoo knows (openai:chat:MODEL, anthropic:messages:MODEL, ollama:chat:MODEL, "
        "…) or replay:FILE (default $GROUNDING_EVAL_JUDGE_PROVIDER)",
    )
    p.add_argument(
        "--base-url", metavar="URL", help="the --judge provider's apiBaseUrl (an OpenAI-compatible server)"
    )
    p.add_argument("--cheap-judge", metavar="PROVIDER_ID", help="two-stage: a cheaper judge asked first")
    p.add_argument("--cheap-base-url", metavar="URL", help="base URL for the cheap judge")
    p.add_argument("--risk-level", choices=["standard", "high"], default="standard")
    p.add_argument("--constraint", metavar="TEXT", action="append", default=[], help="a domain constraint")
    p.add_argument(
        "--key",
        metavar="KEY",
        help="replay: the recording's key (default factual_accuracy/<target file name>)",
    )
    p.add_argument(
        "--review-queue", metavar="FILE", type=Path, default=Path("results/factuality_review_queue.jsonl")
    )
    p.add_argument(
        "--human-queue",
        metavar="FILE",
        type=Path,
        default=Path("results/factuality_human_verification.jsonl"),
    )
    p.add_argument("--rubric", metavar="FILE", type=Path, help="a factual-accuracy rubric YAML")
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        type=Path,
        help="the judge reply cache (default: ~/.cache/grounding-eval/judge)",
    )
    p.add_argument("--no-cache", action="store_true", help="do not read or write the judge reply cache")
    p.add_argument(
        "--print-rubric", action="store_true", help="print the rubric, marked [seed] / [grounding-eval]"
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def run(args: argparse.Namespace) -> int:
    """Run ``factuality``; returns the exit status (a DataError propagates to ``main``: exit 2)."""
    from grounding_eval.calls import JUDGE_MAX_RETRIES, JUDGE_TIMEOUT_S
    from grounding_eval.errors import DataError
    from grounding_eval.factuality.evidence import load_evidence_files
    from grounding_eval.factuality.judge import decide, judge_factuality
    from grounding_eval.factuality.rubric import DEFAULT_RUBRIC, format_rubric, load_rubric
    from grounding_eval.files import read_text
    from grounding_eval.judge.audit import DEFAULT_AUDIT_DIR
    from grounding_eval.judge.cache import default_cache_dir
    from grounding_eval.judge.calls import JudgeConfigError, JudgeError
    from grounding_eval.judge.clients import judge_client, judges_for
    from grounding_eval.judge.host import say_key_hosts

    if args.command != "factuality":
        raise AssertionError(f"not a {__name__} command: {args.command}")
    rubric = load_rubric(args.rubric or DEFAULT_RUBRIC)
    if args.print_rubric:
        sys.stdout.write(format_rubric(rubric))
        return _EXIT_OK
    if args.target is None:
        raise DataError("factuality", "TARGET_FILE is required (see --help)")
    if not args.evidence:
        raise DataError("factuality", "--evidence FILE is required (at least one evidence file)")
    target = read_text(args.target)
    if not target.strip():
        raise DataError(args.target, "the target text is empty")
    documents = load_evidence_files(args.evidence, max_chars=rubric.chunk_chars)
    judge = args.judge or os.environ.get("GROUNDING_EVAL_JUDGE_PROVIDER")
    if not judge:
        raise DataError("--judge", "no judge: give --judge PROVIDER_ID or set GROUNDING_EVAL_JUDGE_PROVIDER")
    cache = None if args.no_cache else str(args.cache_dir or default_cache_dir())
    # The judges are resolved as every judge's (assertions/judges.cjs, through promptfoo's providers):
    # --judge first, else the switch, which then decides the endpoint too (--base-url is --judge's own).
    override = {"provider": args.judge, "base_url": args.base_url, "cheap_provider": args.cheap_judge,
                "cheap_base_url": args.cheap_base_url}  # fmt: skip
    try:
        judges = judges_for("factuality", {}, override={k: v for k, v in override.items() if v}, check=True)
        say_key_hosts(judges)  # before the first call, as beforeAll does in an eval
        capable = judge_client(judges.judge, cache, timeout=JUDGE_TIMEOUT_S, max_retries=JUDGE_MAX_RETRIES)
        cheap = (
            judge_client(judges.cheap, cache, timeout=JUDGE_TIMEOUT_S, max_retries=JUDGE_MAX_RETRIES)
            if judges.cheap
            else None
        )
    except (JudgeConfigError, JudgeError, ValueError) as exc:
        raise DataError("--judge", str(exc)) from None
    result = judge_factuality(
        target,
        documents,
        rubric,
        capable=capable,
        cheap=cheap,
        fixture_key=args.key or f"{rubric.id}/{args.target.name}",
        risk_level=args.risk_level,
        domain_constraints=args.constraint,
        review_queue=args.review_queue,
        human_queue=args.human_queue,
        audit_dir=None if args.no_cache else DEFAULT_AUDIT_DIR,
        item={"target_file": str(args.target), "evidence_files": [str(p) for p in args.evidence]},
    )
    _, line = decide(
        result, pass_threshold=rubric.pass_threshold, no_claims_pass=rubric.no_verifiable_claims_passes
    )
    if args.json:
        print(json.dumps(result.to_json(), indent=2, ensure_ascii=False))
    else:
        from grounding_eval.errors import terminal_safe

        print(terminal_safe(line))
        for claim in result.claims_json(with_sources=True):
            flag = f" {claim['flag']}" if claim.get("flag") else ""
            sev = f" [{claim['severity']}]" if claim["severity"] else ""
            where = f" in {', '.join(claim['chunk_ids'])}" if claim["chunk_ids"] else ""
            # A claim's text and ids come from the judge's reply: escaped, as every printed model text is.
            print(terminal_safe(f"  {claim['claim_id']}: {claim['verification_result']}{sev} — "
                                f"{claim['claim_text']} (quote {claim['evidence_check']}{where}{flag})"))  # fmt: skip
    return _EXIT_OK if result.status in ("scored", "no_verifiable_claims") else _EXIT_FLAGGED
