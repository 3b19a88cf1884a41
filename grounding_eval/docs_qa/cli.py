"""The docs_qa commands of the CLI. Imports only argparse until a command runs.

* ``grounding-eval docs-qa rubric [FILE]`` prints the docs-QA rubric, each text marked ``[seed]``
  (the seed's words, verbatim) or ``[grounding-eval]`` (ours), with the decisions taken.
* ``grounding-eval docs-qa prompt DATASET QUESTION_ID [--answer FILE]`` prints the grader prompt for a
  question and an answer (by default the dataset's recorded answer), with the fixture key and the
  answer's SHA-256 a recorded grader reply for it must carry.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

__all__ = ["COMMANDS", "add_commands", "run"]

COMMANDS: frozenset[str] = frozenset({"docs-qa"})


def add_commands(sub: argparse._SubParsersAction[Any]) -> None:
    """Add ``docs-qa rubric`` and ``docs-qa prompt`` to the ``grounding-eval`` parser."""
    p = sub.add_parser("docs-qa", help="the docs-QA rubric (seed 003): show it, render its grader prompt")
    actions = p.add_subparsers(dest="action", required=True, parser_class=type(p))
    r = actions.add_parser(
        "rubric", help="print the docs-QA rubric, each text marked [seed] or [grounding-eval]"
    )
    r.add_argument(
        "file", metavar="FILE", type=Path, nargs="?", help="a docs-QA rubric YAML (default: the shipped one)"
    )
    pr = actions.add_parser("prompt", help="print the grader prompt for one question and answer")
    pr.add_argument(
        "dataset", metavar="DATASET", type=Path, help="a docs-QA dataset folder (questions.jsonl + docs/)"
    )
    pr.add_argument("question_id", metavar="QUESTION_ID")
    pr.add_argument("--answer", metavar="FILE", type=Path, help="the answer (default: the recorded answer)")


def run(args: argparse.Namespace) -> int:
    """Run one of :data:`COMMANDS`; returns the exit status."""
    if args.command != "docs-qa":
        raise AssertionError(f"not a {__name__} command: {args.command}")
    return _rubric(args) if args.action == "rubric" else _prompt(args)


def _rubric(args: argparse.Namespace) -> int:
    from grounding_eval.docs_qa.rubric import RUBRIC_PATH, format_docs_qa_rubric, load_docs_qa_rubric

    sys.stdout.write(format_docs_qa_rubric(load_docs_qa_rubric(args.file or RUBRIC_PATH)))
    return 0


def _prompt(args: argparse.Namespace) -> int:
    from grounding_eval.data.recorded_answers import load_recorded_answers
    from grounding_eval.docs_qa.docs_set import load_docs_set
    from grounding_eval.docs_qa.render import render_grader_prompt
    from grounding_eval.docs_qa.rubric import load_docs_qa_rubric
    from grounding_eval.docs_qa.testset import DOCS_DIR, find_questions, load_questions
    from grounding_eval.errors import DataError
    from grounding_eval.files import read_text
    from grounding_eval.judge.calls import answer_sha256

    docs = load_docs_set(args.dataset / DOCS_DIR)
    path = find_questions(args.dataset)
    question = next((q for q in load_questions(path, docs) if q.id == args.question_id), None)
    if question is None:
        raise DataError(path, f"no question with id {args.question_id!r}")
    if args.answer:
        answer = read_text(args.answer)
    else:
        recordings = args.dataset / "recorded_answers.yaml"
        recorded = next(
            (a for (qid, _), a in load_recorded_answers(recordings).items() if qid == question.id), None
        )
        if recorded is None:
            raise DataError(recordings, f"no recorded answer for {question.id!r}")
        answer = recorded.answer
    rubric = load_docs_qa_rubric()
    sources = [(sid, docs.section(sid).text) for sid in question.source_sections]
    rendered = render_grader_prompt(rubric, question, answer, sources)
    print(
        f"===== SYSTEM (fixture key {rubric.id}/{question.id}, answer_sha256 {answer_sha256(answer)}) ====="
    )
    print(rendered.system)
    print("===== USER =====")
    print(rendered.user)
    return 0
