"""Fill or check the ``answer_sha256`` of a dataset's recorded judge replies from its recorded answers.

A recorded judge reply is a verdict on one answer text, and the judge replays it only for an answer with
the same SHA-256 (:func:`grounding_eval.judge.calls.answer_sha256`). The reply under key
``<rubric>/<item id>/<condition>`` in ``<dataset>/judge_replies/*.yaml`` judged the recorded answer for
(item id, condition) in ``<dataset>/recorded_answers.yaml``; this script writes that answer's hash into
the entry, or checks that it is there.

Usage::

    .venv/bin/python scripts/hash_judge_replies.py [--check] [DATASET ...]   # default: datasets/sample

Write mode edits the files line by line — the ``answer_sha256:`` line goes right after the entry's
``- key:`` line, or replaces the one already there — so comments and layout survive; each file is
re-loaded before it replaces the original. Re-hash only after re-recording the judge reply for an edited
answer: a new hash on an old verdict claims the judge read text it never saw.

Exit status: 0 all hashes present and matching (``--check``) or written; 1 a hash missing or wrong
(``--check``, one line each) or a reply with no recorded answer to hash; 2 a file that cannot be read,
or an entry that does not begin with ``- key:`` (write mode).
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from grounding_eval.data.recorded_answers import RecordedAnswer, load_recorded_answers
from grounding_eval.errors import DataError
from grounding_eval.judge.calls import answer_sha256, load_replay_fixtures

_FIELD = "answer_sha256"


class LayoutError(Exception):
    """A file write mode cannot edit line by line (the message says which and why)."""


@dataclass(frozen=True)
class Expected:
    """What one entry's hash should be, or why it cannot have one."""

    key: str
    sha256: str | None
    problem: str | None  # set when there is no recorded answer to hash


def _expected(
    keys: list[str], answers: dict[tuple[str, str], RecordedAnswer], source: Path
) -> list[Expected]:
    out = []
    for key in keys:
        parts = key.split("/")
        if len(parts) != 3:
            out.append(Expected(key, None, "key is not <rubric>/<item id>/<condition>"))
            continue
        _, item, condition = parts
        recorded = answers.get((item, condition))
        if recorded is None:
            out.append(Expected(key, None, f"no recorded answer for {item!r} under {condition} in {source}"))
        else:
            out.append(Expected(key, answer_sha256(recorded.answer), None))
    return out


def _check(path: Path, answers: dict[tuple[str, str], RecordedAnswer], source: Path) -> list[str]:
    fixtures = load_replay_fixtures(path)
    problems = []
    for want in _expected(list(fixtures), answers, source):
        have = fixtures[want.key].answer_sha256
        if want.problem:
            problems.append(f"{path}: {want.key}: {want.problem}")
        elif have is None:
            problems.append(f"{path}: {want.key}: no {_FIELD} (its recorded answer is sha256 {want.sha256})")
        elif have != want.sha256:
            problems.append(
                f"{path}: {want.key}: {_FIELD} {have} does not match its recorded answer, sha256 {want.sha256}"
            )
    return problems


def _entry_key(line: str) -> str | None:
    """The key of a ``- key: ...`` line (quoted or not, comment or not), else ``None``."""
    if not line.startswith("- key:"):
        return None
    try:
        parsed = yaml.safe_load(line[2:])
    except yaml.YAMLError:
        return None
    key = parsed.get("key") if isinstance(parsed, dict) else None
    return key if isinstance(key, str) else None


def _rewrite(text: str, hashes: dict[str, str]) -> tuple[str, int, list[str]]:
    """Return ``text`` with each entry's hash line set, the number of lines changed, and the keys seen."""
    lines = text.splitlines(keepends=True)
    starts = [(i, key) for i, line in enumerate(lines) if (key := _entry_key(line)) is not None]
    changed = 0
    for n, (start, key) in reversed(list(enumerate(starts))):  # from the end: indices before stay valid
        end = starts[n + 1][0] if n + 1 < len(starts) else len(lines)
        if key not in hashes:
            continue
        eol = "\r\n" if lines[start].endswith("\r\n") else "\n"
        new_line = f"  {_FIELD}: {hashes[key]}{eol}"
        existing = next((i for i in range(start + 1, end) if lines[i].startswith(f"  {_FIELD}:")), None)
        if existing is None:
            if not lines[start].endswith(("\n", "\r")):
                lines[start] += eol  # a last line without a newline
            lines.insert(start + 1, new_line)
            changed += 1
        elif lines[existing] != new_line:
            lines[existing] = new_line
            changed += 1
    return "".join(lines), changed, [key for _, key in starts]


def _write(path: Path, answers: dict[tuple[str, str], RecordedAnswer], source: Path) -> tuple[int, list[str]]:
    """Fill ``path``'s hashes; return (entries changed, problems such as a reply with no recorded answer).

    Raises:
        LayoutError: An entry not introduced by a ``- key:`` line, or an edit that does not read back.
    """
    fixtures = load_replay_fixtures(path)
    expected = _expected(list(fixtures), answers, source)
    problems = [f"{path}: {e.key}: {e.problem}" for e in expected if e.problem]
    hashes = {e.key: e.sha256 for e in expected if e.sha256}
    text = path.read_bytes().decode("utf-8")  # keeps the line endings as they are
    new_text, changed, seen = _rewrite(text, hashes)
    if sorted(seen) != sorted(fixtures):
        raise LayoutError(
            f"{path}: write mode needs every entry to begin with a '- key: ...' line "
            f"({len(seen)} such lines for {len(fixtures)} entries); add {_FIELD} to the others by hand"
        )
    if changed:
        scratch = path.with_name(f".{path.name}.hashing")
        scratch.write_text(new_text, encoding="utf-8", newline="")
        try:
            reloaded = load_replay_fixtures(scratch)
            wrong = [k for k, h in hashes.items() if reloaded[k].answer_sha256 != h]
            if wrong or reloaded.keys() != fixtures.keys():
                raise LayoutError(
                    f"{path}: the edited file does not read back as intended ({wrong[:3]}); unchanged"
                )
            os.replace(scratch, path)
        finally:
            scratch.unlink(missing_ok=True)
    return changed, problems


def main(argv: list[str] | None = None) -> int:
    """Run the command line; return the exit status."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="verify the hashes, change nothing")
    parser.add_argument("datasets", nargs="*", default=["datasets/sample"], metavar="DATASET")
    args = parser.parse_args(argv)
    problems: list[str] = []
    entries = files = 0
    try:
        for dataset in map(Path, args.datasets):
            source = dataset / "recorded_answers.yaml"
            answers = load_recorded_answers(source)
            replies = sorted((dataset / "judge_replies").glob("*.yaml"))
            if not replies:
                raise DataError(dataset / "judge_replies", "no recorded judge replies (*.yaml) here")
            for path in replies:
                files += 1
                entries += len(load_replay_fixtures(path))
                if args.check:
                    problems += _check(path, answers, source)
                else:
                    changed, found = _write(path, answers, source)
                    problems += found
                    print(f"{path}: {changed} {_FIELD} line{'s' if changed != 1 else ''} written or updated")
    except DataError as exc:
        print(exc.one_line(), file=sys.stderr)
        return 2
    except LayoutError as exc:
        print(exc, file=sys.stderr)
        return 2
    for line in problems:
        print(line)
    if problems:
        return 1
    if args.check:
        replies_n = f"{entries} repl{'y' if entries == 1 else 'ies'}"
        files_n = f"{files} file{'' if files == 1 else 's'}"
        print(f"ok: every {_FIELD} matches its recorded answer ({replies_n} in {files_n})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
