"""``grounding-eval audit``: the judge's prompt and replies behind a results row.

``grounding-eval audit AUDIT_ID`` prints one record of the audit log; ``grounding-eval audit --results
RESULTS.json ROW`` finds the row (its promptfoo result ``id``, or ``TEST_INDEX:PROMPT_INDEX``) and prints
every record its judges name. Imports only argparse until a command runs.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

__all__ = ["COMMANDS", "add_commands", "run"]

COMMANDS = frozenset({"audit"})


def add_commands(sub: argparse._SubParsersAction[Any]) -> None:
    """Add ``audit`` to the ``grounding-eval`` parser."""
    a = sub.add_parser("audit", help="print the judge's rendered prompt and raw replies behind a verdict")
    a.add_argument(
        "ref", metavar="AUDIT_ID_OR_ROW", help="an audit id, or with --results a row id or TEST:PROMPT"
    )
    a.add_argument("--results", metavar="RESULTS_JSON", type=Path, help="find the row in this results file")
    a.add_argument("--dir", metavar="DIR", type=Path, help="the audit log (default: the one the row names)")
    a.add_argument("--json", action="store_true", help="print the records as JSON")


def run(args: argparse.Namespace) -> int:
    """Print the audit records asked for; returns the exit status."""
    from grounding_eval.errors import DataError
    from grounding_eval.judge.audit import DEFAULT_AUDIT_DIR, read_audit

    if args.results is None:
        records = [read_audit(args.dir or DEFAULT_AUDIT_DIR, args.ref)]
    else:
        refs = _row_audits(args.results, args.ref)
        if not refs:
            raise DataError(
                args.results, f"row {args.ref} names no audit record (no judge ran, or it predates the log)"
            )
        records = [read_audit(args.dir or Path(directory), rid) for directory, rid in refs]
    if args.json:
        print(json.dumps(records, indent=2, ensure_ascii=False))
        return 0
    for record in records:
        print(_text(record))
    return 0


def _row_audits(results: Path, ref: str) -> list[tuple[str, str]]:
    """``(audit_dir, audit_id)`` of every judge result in the row ``ref`` of ``results``."""
    from grounding_eval.errors import DataError
    from grounding_eval.judge.audit import DEFAULT_AUDIT_DIR
    from grounding_eval.result_rows import result_row
    from grounding_eval.results_file import RowProblem, read_results

    rows = read_results(results)["results"]["results"]  # strict, shape-checked, text made encodable
    if ":" in ref:
        test, _, prompt = ref.partition(":")
        found = [
            (n, r)
            for n, r in enumerate(rows, 1)
            if f"{r.get('testIdx')}" == test.strip() and f"{r.get('promptIdx')}" == prompt.strip()
        ]
    else:
        found = [(n, r) for n, r in enumerate(rows, 1) if r.get("id") == ref]
    if not found:
        raise DataError(results, f"no row {ref} (give a row id, or TEST_INDEX:PROMPT_INDEX)")
    number, row = found[0]
    try:
        return result_row(row).audits(str(DEFAULT_AUDIT_DIR))
    except RowProblem as exc:
        raise DataError(results, f"row {number} of results.results: {exc}") from None


def _text(record: dict[str, Any]) -> str:
    """The record as text; every value escaped for the terminal (the replies and the prompt hold a model's
    and a dataset's text: :func:`~grounding_eval.errors.terminal_safe`, line breaks kept in the blocks)."""
    from grounding_eval.errors import terminal_safe

    prompt = record.get("rendered_prompt") or {}
    lines = [f"===== audit {terminal_safe(record['audit_id'])} ====="]
    for key in ("fixture_key", "rubric_id", "rubric_version", "prompt_version", "provider", "model", "timestamp",
                "answer_sha256"):  # fmt: skip
        if record.get(key) is not None:
            lines.append(f"{key}: {terminal_safe(record[key])}")
    lines += [
        "----- SYSTEM -----",
        terminal_safe(prompt.get("system") or "", lines=True),
        "----- USER -----",
        terminal_safe(prompt.get("user") or "", lines=True),
    ]
    for n, reply in enumerate(record.get("raw_replies") or (), 1):
        lines += [f"----- REPLY {n} -----", terminal_safe(reply, lines=True)]
    for error in record.get("errors") or ():
        lines.append(f"error: {terminal_safe(error)}")
    return "\n".join(lines)
