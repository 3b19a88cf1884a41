"""What ``grounding-eval data validate`` checks: every file a dataset can hold (:func:`check_folder`).

Every problem is one line naming the file, the line or entry, and what is wrong; all are collected (a
broken item file does not hide a broken allowlist), and a problem that only follows from another (the
recordings of the items of a file that did not load) is not reported again.

* **Files**: items, index and articles as :func:`~grounding_eval.data.dataset.load_dataset` reads them;
  the allowlist, line by line; the organization directory, entry by entry; the recorded answers (fields,
  conditions, items of the dataset); every recorded judge reply (``judge_replies/<rubric>[.<label>].yaml``,
  ``factuality/*_replies.yaml``; docs-QA: ``grader_replies.yaml``) — its key's rubric and item, its
  ``answer_sha256`` against its recorded answer, its replies as its judge asks for them and the last one
  read by that judge's own parser (a missing criterion named by its id); the citation index against its
  JSON Schema (``datasets/schemas/citations.schema.json``) and as the verifier reads it.
* **Errors** (the folder is refused), too: an item whose C1 directory comes out empty (no matching index
  record), or — for an item a C1.5 round selects (2, 2b, 3) — whose C1.5 content comes out empty (no
  cached article among its records). An eval would otherwise send an empty block; the test generator
  makes such a cell an ``ERROR (no grounding for …)`` row instead.
* **Warnings**: an item whose articles are all another state's law (the index's ``state`` of each; national
  ``US`` ones aside): a WA item grounded on Oregon's statutes;
  C1.5 content of one article (the methods document: "two or three relevant articles");
  a documented size that differs when ``dataset.yaml`` claims the real set
  (:func:`~grounding_eval.data.rounds.size_warnings`); a citation index range cover that holds unlisted
  sections between listed ones, or may (:func:`~grounding_eval.verifier.citations.cover_gaps`: each would be an
  UNKNOWN citation, a hard failure).
* **Design facts** (:attr:`Findings.records`): per item, where the records its C1 directory and its C1.5
  articles give differ (:func:`~grounding_eval.data.design.record_difference`); ``data validate`` prints
  them as ``note:`` lines, since C1.5 − C1 then compares content as well as format.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from grounding_eval.data.conditions import condition_vars
from grounding_eval.data.dataset import (
    Dataset,
    find_allowlist,
    find_citation_index,
    find_directory,
    load_dataset,
)
from grounding_eval.data.design import RecordDifference, record_difference
from grounding_eval.data.methods import ROUNDS
from grounding_eval.data.models import RecordedReplyEntry, validate
from grounding_eval.data.recorded_answers import load_recorded_answers
from grounding_eval.data.records import Query
from grounding_eval.data.rounds import select_items, size_warnings
from grounding_eval.data.select import Selection
from grounding_eval.errors import DataError, clip
from grounding_eval.factuality.parse import parse_scorecard
from grounding_eval.factuality.rubric import load_rubric as load_factuality_rubric
from grounding_eval.files import read_json, read_text, read_yaml
from grounding_eval.judge.calls import answer_sha256
from grounding_eval.judge.extract import ParseFailure
from grounding_eval.judge.parse import parse_reply
from grounding_eval.judge.rubric import load_rubric
from grounding_eval.resources import pack_root
from grounding_eval.states import NATIONAL
from grounding_eval.verifier.allowlist import allowlist_problems
from grounding_eval.verifier.citations import cover_gaps, load_citation_index
from grounding_eval.verifier.directory import directory_problems

__all__ = [
    "MIN_ARTICLES",
    "Findings",
    "check_citation_index",
    "check_dataset",
    "check_folder",
    "check_replies",
]

MIN_ARTICLES = 2
"""C1.5 content is "two or three relevant articles" (methods document): fewer is a warning."""


@dataclass(frozen=True)
class Findings:
    """One line per problem, in item order, and the design facts of the items' grounding."""

    errors: tuple[str, ...]
    warnings: tuple[str, ...]
    records: tuple[RecordDifference, ...] = ()
    """Per item whose C1 and C1.5 blocks both came out: the records C1 and C1.5 give, and where they
    differ (:func:`~grounding_eval.data.design.record_difference`)."""


def check_dataset(dataset: Dataset) -> Findings:
    """Check every item's C1 directory and (for C1.5 rounds' items) C1.5 content, and the claimed sizes."""
    full_content_rounds: dict[str, list[str]] = {}
    for round_id, spec in ROUNDS.items():
        if "C1.5" in spec.conditions:
            for item in select_items(dataset, round_id=round_id):
                full_content_rounds.setdefault(item.id, []).append(round_id)
    errors: list[str] = []
    warnings: list[str] = []
    records: list[RecordDifference] = []
    for item in (*dataset.queries, *dataset.high_risk):
        grounding = condition_vars(item, dataset)
        if grounding.directory and grounding.full_content:
            records.append(
                record_difference(
                    item.id,
                    (s.record.id for s in grounding.directory),
                    (s.record.id for s in grounding.full_content),
                    dataset.index,
                )
            )
        if grounding.directory_gap:
            errors.append(f"{dataset.root}: no grounding for C1: {grounding.directory_gap}")
        other_state = _other_states_grounding(item, (*grounding.directory, *grounding.full_content))
        if other_state:
            warnings.append(f"{dataset.root}: {other_state}")
        rounds = full_content_rounds.get(item.id)
        if not rounds:
            continue
        used = f"round{'s' if len(rounds) > 1 else ''} {', '.join(rounds)}"
        if grounding.full_content_gap:
            errors.append(f"{dataset.root}: no grounding for C1.5 ({used}): {grounding.full_content_gap}")
        elif len(grounding.full_content) < MIN_ARTICLES:
            ids = ", ".join(s.record.id for s in grounding.full_content)
            warnings.append(
                f"{dataset.root}: item {item.id!r} ({used}): C1.5 content is {len(grounding.full_content)} "
                f"article ({ids}); the methods document uses two or three"
            )
    texts = [article.text for article in dataset.articles.values()]
    errors += check_citation_index(Path(dataset.root), warnings, texts)
    return Findings(tuple(errors), (*warnings, *size_warnings(dataset)), tuple(records))


def _other_states_grounding(item: Query, chosen: Sequence[Selection]) -> str | None:
    """Why ``item``'s grounding is another state's law, or None: every article chosen for it (its
    ``article_ids``, or those ranked for it) that is not national (``US`` in the index) is of a state
    other than the item's jurisdiction. The index's ``state`` says whose an article is."""

    records = {s.record.id: s.record for s in chosen}
    local = [r for r in records.values() if r.state != NATIONAL]
    if not local or any(r.state == item.jurisdiction for r in local):
        return None
    states = ", ".join(sorted({r.state for r in local}))
    national = len(records) - len(local)
    besides = f"; {national} national" if national else ""
    return (
        f"item {item.id!r} is {item.jurisdiction} but its articles are {states} law "
        f"({', '.join(r.id for r in local)}{besides}): none is {item.jurisdiction}'s"
    )


_CITATION_SCHEMA = "datasets/schemas/citations.schema.json"


def check_citation_index(
    root: Path, warnings: list[str] | None = None, articles: Sequence[str] = ()
) -> list[str]:
    """The dataset's citation index against its JSON Schema, then read as the verifier reads it: one
    line per problem (none when the dataset has no ``citations.yaml``); advice on covers that may not be
    complete as listed (read with the dataset's ``articles``) is added to ``warnings``, when given."""

    path = find_citation_index(root)
    if path is None:
        return []
    import jsonschema  # type: ignore[import-untyped]

    schema = read_json(pack_root() / _CITATION_SCHEMA)
    try:
        data = read_yaml(path, inside=root)
    except DataError as exc:
        return [exc.one_line()]
    problems = sorted(jsonschema.Draft202012Validator(schema).iter_errors(data), key=lambda e: list(e.path))
    if problems:
        return [
            f"{path}: {'/'.join(map(str, e.absolute_path)) or 'the file'}: {' '.join(e.message.split())[:200]} "
            f"({_CITATION_SCHEMA})"
            for e in problems
        ]

    try:
        index = load_citation_index(path, inside=root)
    except DataError as exc:
        return [exc.one_line()]
    if warnings is not None:
        warnings += cover_gaps(index, articles)
    return []


# ---- every other file a dataset can hold (data validate) ----

ReplyCheck = Callable[[str, str, str], list[str]]
"""``(reply text, answer text or "", item id) -> problems``: a reply read as its judge reads it."""


def check_folder(root: str | Path) -> tuple[Dataset, Findings]:
    """Every file of a dataset folder, each problem one line naming the file, the line or entry, and what
    is wrong: items, index and articles (:func:`~grounding_eval.data.dataset.load_dataset` collecting),
    grounding blocks, the allowlist, the organization directory, the recorded answers, every recorded judge
    reply (rubric judge, factual accuracy) and the citation index."""

    root = Path(root)
    errors: list[str] = []
    dataset = load_dataset(root, problems=errors)
    loaded = not errors

    def attempt(step: Callable[[], list[str]]) -> None:
        try:
            errors.extend(step())
        except DataError as exc:
            errors.append(exc.one_line())

    warnings: tuple[str, ...] = ()
    records: tuple[RecordDifference, ...] = ()
    if loaded:  # grounding blocks of items that loaded from a consistent folder
        findings = check_dataset(dataset)
        errors += findings.errors
        warnings = findings.warnings
        records = findings.records
    else:
        gaps: list[str] = []
        errors += check_citation_index(root, gaps)
        warnings = tuple(gaps)
    attempt(lambda: _allowlist(find_allowlist(root)))
    attempt(lambda: _directory(find_directory(root)))
    # Which items exist is known only when the item files loaded: otherwise every recording for an item of a
    # broken file would be reported too.
    items = {item.id for item in (*dataset.queries, *dataset.high_risk)} if loaded else None
    answers = recorded_answers(root / "recorded_answers.yaml", items, errors)
    for path in sorted((root / "judge_replies").glob("*.y*ml")) if (root / "judge_replies").is_dir() else []:
        attempt(partial(_rubric_replies, path, items, answers))
    for name in ("judge_replies.yaml", "cheap_replies.yaml", "standalone_replies.yaml"):
        path = root / "factuality" / name
        # An invalid cheap-stage reply is escalated to the capable stage, by design: only its key and hash
        # are checked.
        check = _factuality_check() if name != "cheap_replies.yaml" else _no_check
        if path.exists():
            most = 1 if name == "cheap_replies.yaml" else 2
            attempt(partial(check_replies, path, items, answers, check, rubric="factual_accuracy", most=most))
    return dataset, Findings(tuple(errors), warnings, records)


def _reply_problems(
    replies: tuple[str, ...], check: ReplyCheck, answer: str, item: str, most: int
) -> list[str]:
    """The judge reads reply 1 and, only when it is invalid, asks once more (reply 2): so the last reply
    must be valid, an earlier one invalid, and there is no third (the factual-accuracy judge's cheap stage
    asks once: an invalid reply escalates to the capable stage)."""
    if len(replies) > most:
        asks = "once" if most == 1 else "at most twice (a reply, and one retry after an invalid one)"
        return [f"{len(replies)} replies: the judge asks {asks}"]
    problems = [f"reply {len(replies)}: {p}" for p in check(replies[-1], answer, item)]
    if len(replies) == 2 and check is not _no_check and not check(replies[0], answer, item):
        problems.append("reply 1 is valid, so the judge never asks for reply 2")
    return problems


def _rubric_replies(path: Path, items: set[str] | None, answers: dict[tuple[str, str], str]) -> list[str]:
    return check_replies(path, items, answers, _rubric_check(path))


def _no_check(reply: str, answer: str, item: str) -> list[str]:
    return []


def _allowlist(path: Path | None) -> list[str]:

    return allowlist_problems(path) if path else []


def _directory(path: Path | None) -> list[str]:

    return directory_problems(path) if path else []


def recorded_answers(path: Path, items: set[str] | None, errors: list[str]) -> dict[tuple[str, str], str]:
    """The recorded answers by (item, condition), each problem added to ``errors`` (``items``: the
    dataset's item ids, when known)."""

    if not path.exists():
        return {}
    try:
        answers = load_recorded_answers(path, problems=errors)
    except DataError as exc:
        errors.append(exc.one_line())
        return {}
    entries = read_yaml(path)
    number = {
        (e.get("query_id"), e.get("condition")): i for i, e in enumerate(entries, 1) if isinstance(e, dict)
    }
    for item, condition in answers:
        if items is not None and item not in items:
            where = f"entry {number[(item, condition)]} ({item})"
            errors.append(
                DataError(
                    path, f"{where}: field 'query_id': {clip(item)} is not an item of the dataset"
                ).one_line()
            )
    return {key: recorded.answer for key, recorded in answers.items()}


def check_replies(
    path: Path,
    items: set[str] | None,
    answers: dict[tuple[str, str], str],
    check: ReplyCheck,
    *,
    rubric: str | None = None,
    most: int = 2,
) -> list[str]:
    """A file of recorded judge replies: each entry a
    :class:`~grounding_eval.data.models.RecordedReplyEntry` whose key is ``<rubric>/<item>/<condition>``
    (``rubric``: the one it must name; default the file's name up to its first dot) for an item of the dataset, whose
    ``answer_sha256`` is its recorded answer's, and whose replies are the ones its judge asks for
    (``most``: its calls at most) with the last one valid."""

    rubric = rubric or _rubric_name(path)
    data = read_yaml(path)
    if not isinstance(data, list) or not data:
        return [
            DataError(
                path, "expected a non-empty YAML list of {key, answer_sha256, replies, note}"
            ).one_line()
        ]
    out: list[str] = []
    seen: set[str] = set()
    for i, entry in enumerate(data, 1):
        key = entry.get("key") if isinstance(entry, dict) else None
        where = f"entry {i} ({key})" if isinstance(key, str) else f"entry {i}"
        record, found = (
            validate(RecordedReplyEntry, entry) if isinstance(entry, dict) else (None, ["expected a mapping"])
        )
        problems = list(found)
        if isinstance(record, RecordedReplyEntry):
            if record.key in seen:
                problems.append(f"a second entry for key {record.key!r}")
            seen.add(record.key)
            parts = record.key.split("/")
            answer: str | None = None
            item = ""
            if parts[0] != rubric:
                problems.append(
                    f"key {clip(record.key)} is not for rubric {rubric} (this file holds {rubric}'s replies)"
                )
            elif len(parts) == 2 and "." in parts[1]:  # a standalone example: factual_accuracy/<file name>
                example = path.parent / parts[1]  # checked when it lies beside this file
                try:
                    answer = read_text(example, inside=path.parent) if example.is_file() else None
                except DataError as exc:
                    problems.append(exc.one_line())
            elif len(parts) != 3 and not (len(parts) == 2 and rubric == "docs_qa"):
                problems.append(f"key {clip(record.key)} is not {rubric}/<item id>/<condition>")
            else:
                item, condition = parts[1], parts[2] if len(parts) == 3 else "docs-qa"
                if items is not None and item not in items:
                    problems.append(f"{clip(item)} is not an item of the dataset")
                answer = answers.get((item, condition))
            if answer is not None and record.answer_sha256 not in (None, answer_sha256(answer)):
                problems.append(
                    f"field 'answer_sha256' does not match its recorded answer (sha256 {answer_sha256(answer)}): "
                    "re-record the reply for the edited answer, then run scripts/hash_judge_replies.py"
                )
            problems += _reply_problems(record.replies, check, answer or "", item, most)
        out += [DataError(path, f"{where}: {problem}").one_line() for problem in problems]
    return out


def _rubric_name(path: Path) -> str:
    """``judge_replies/<rubric>.yaml``, or ``<rubric>.<label>.yaml`` for another recording of the same rubric
    (a retest, a panel judge)."""
    return path.name.split(".", 1)[0]


def _rubric_check(path: Path) -> ReplyCheck:

    name = _rubric_name(path)
    rubric_path = pack_root() / "rubrics" / f"{name}.yaml"
    if not rubric_path.is_file():
        raise DataError(
            path,
            f"no rubric {name!r} (rubrics/{name}.yaml): name the file after its rubric "
            "(<rubric>.yaml, or <rubric>.<label>.yaml)",
        )
    rubric = load_rubric(rubric_path)

    def check(reply: str, answer: str, item: str) -> list[str]:
        parsed = parse_reply(reply, rubric, judged_text=answer or None)
        return list(parsed.problems) if isinstance(parsed, ParseFailure) else []

    return check


def _factuality_check() -> ReplyCheck:

    rubric = load_factuality_rubric()

    def check(reply: str, answer: str, item: str) -> list[str]:
        parsed = parse_scorecard(reply, rubric, judged_text=answer or None)
        return list(parsed.problems) if isinstance(parsed, ParseFailure) else []

    return check
