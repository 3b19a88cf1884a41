"""The dataset commands of the CLI: ``conditions stats|show``, ``allowlist build``, ``orgs check``,
``data validate``, ``data sample``. Kept apart from :mod:`grounding_eval.cli` so ``verify`` never imports
Jinja2."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from grounding_eval.errors import DataError, clip, terminal_safe
from grounding_eval.resources import pack_directory, pack_root

if TYPE_CHECKING:
    from grounding_eval.data.dataset import Dataset
    from grounding_eval.data.design import RecordDifference

__all__ = ["add_sample_command", "run"]

_ROUND_IDS = ("1a", "1b", "2", "2b", "3")


def add_sample_command(dsub: Any) -> None:
    """``data sample``: print the items a generator config's ``sample:`` selects (the same code)."""
    p = dsub.add_parser(
        "sample",
        help="print the reproducible stratified sample a config's sample: {n, seed, stratify} selects",
    )
    p.add_argument("--dataset", metavar="DIR", type=Path, default=None, help="default datasets/sample")
    p.add_argument("--round", choices=_ROUND_IDS, help="the round whose items are sampled")
    p.add_argument("--tags", metavar="TAG", action="append", help="override the round's tags (repeatable)")
    p.add_argument("--ids", metavar="ID", action="append", help="keep only these item ids (repeatable)")
    p.add_argument("--n", type=int, required=True, help="items to draw")
    p.add_argument("--seed", type=int, required=True, help="the sample's seed (0 or more)")
    p.add_argument(
        "--stratify",
        metavar="FIELD",
        action="append",
        default=[],
        help="stratify by risk_tier, jurisdiction or topic (repeatable, in order)",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")


def run(args: argparse.Namespace) -> int:
    """Dispatch a dataset command; returns the exit status."""
    handler = {
        ("conditions", "stats"): _stats,
        ("conditions", "show"): _show,
        ("allowlist", "build"): _allowlist_build,
        ("orgs", "check"): _orgs_check,
        ("data", "validate"): _validate,
        ("data", "sample"): _sample,
        ("judge", "prompt"): _judge_prompt,
    }[(args.command, args.action)]
    return handler(args)


def _dataset(args: argparse.Namespace) -> Dataset:
    from grounding_eval.data.dataset import load_dataset, resolve_dataset_dir

    # A flag the user typed beats the environment; without one, $GROUNDING_EVAL_DATASET, then the sample.
    return load_dataset(args.dataset or resolve_dataset_dir(None, pack_root() / "datasets" / "sample"))


def _stats(args: argparse.Namespace) -> int:
    from grounding_eval.data.conditions import condition_vars
    from grounding_eval.data.rounds import select_items

    dataset = _dataset(args)
    items = select_items(dataset, round_id=args.round)
    rows: list[dict[str, Any]] = []
    for item in items:
        cv = condition_vars(item, dataset, directory_mode=_directory_mode(args))
        rows.append({
            "id": item.id, "jurisdiction": item.jurisdiction,
            "c1_tokens": cv.directory_tokens, "c1_records": [s.record.id for s in cv.directory],
            "c15_tokens": cv.full_content_tokens, "c15_articles": [s.record.id for s in cv.full_content],
        })  # fmt: skip
    if args.json:
        for row in rows:
            print(json.dumps(row))
        return 0
    print(f"{'id':24} {'st':2} {'C1 tok':>6} {'C1.5 tok':>8}  C1.5 articles")
    for r in rows:
        articles = ", ".join(r["c15_articles"])
        print(f"{r['id']:24} {r['jurisdiction']:2} {r['c1_tokens']:>6} {r['c15_tokens']:>8}  {articles}")
    if rows:
        c1 = sorted(r["c1_tokens"] for r in rows)
        c15 = sorted(r["c15_tokens"] for r in rows)
        print(f"{len(rows)} items · C1 tokens median {c1[len(c1) // 2]} "
              f"(range {c1[0]}–{c1[-1]}; document ≈150–200) · "
              f"C1.5 tokens median {c15[len(c15) // 2]} (range {c15[0]}–{c15[-1]}; document ≈2,800–8,700) · "
              "tokens estimated as characters / 4")  # fmt: skip
    return 0


def _show(args: argparse.Namespace) -> int:
    from grounding_eval.data.conditions import render_prompt

    dataset = _dataset(args)
    try:
        item = dataset.item(args.item_id)
    except KeyError:
        raise DataError(dataset.root, f"no item with id {args.item_id!r}") from None
    sys.stdout.write(render_prompt(args.condition, item, dataset, directory_mode=_directory_mode(args)))
    return 0


def _directory_mode(args: argparse.Namespace) -> str:
    """``matched`` with ``--matched-directory`` (C1's directory from the C1.5 articles' records), else the
    methods document's construction."""
    return "matched" if getattr(args, "matched_directory", False) else "seed"


def _allowlist_build(args: argparse.Namespace) -> int:
    from grounding_eval.data.load import load_index
    from grounding_eval.files import write_text_atomic
    from grounding_eval.verifier.allowlist import index_urls

    if args.output:  # refused before any work: an allowlist may have been edited by hand since
        _refuse_existing(args.output, force=args.force)
    index = load_index(args.index)
    urls = sorted(index_urls(index))
    for url in urls:
        try:
            url.encode("utf-8")
        except UnicodeEncodeError:  # "\ud83d" in a JSON index: not text a file can hold, nor a URL
            raise DataError(args.index, f"URL {clip(url)} holds a lone surrogate: not a URL") from None
    lines = [
        f"# URL allowlist derived from {args.index} by `grounding-eval allowlist build`",
        f"# {len(urls)} unique URLs (normalized) from {len(index)} index records",
        *urls,
    ]
    text = "\n".join(lines) + "\n"
    if args.output:
        write_text_atomic(args.output, text)  # a failing run leaves the old file as it was
        print(f"wrote {len(urls)} URLs to {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(text)
    return 0


def _refuse_existing(path: Path, *, force: bool) -> None:
    """Refuse to overwrite ``path`` (or a link there) unless ``force``, as ``init`` and ``calibrate sample``
    do."""
    if not force and (path.exists() or path.is_symlink()):
        raise DataError(path, "exists: use --force to overwrite")


def _orgs_check(args: argparse.Namespace) -> int:
    from grounding_eval.data.load import load_index
    from grounding_eval.verifier.directory import load_directory
    from grounding_eval.verifier.urls import url_host

    orgs = args.orgs or pack_directory()
    directory = load_directory(orgs)
    index = load_index(args.index)
    unowned: dict[str, list[str]] = {}
    for record in index.values():
        host = url_host(record.url)
        if host is None or directory.owner_of_host(host) is None:
            unowned.setdefault(host or record.url, []).append(record.id)
    owned = len(index) - sum(len(v) for v in unowned.values())
    print(f"{owned} of {len(index)} index URLs belong to an organization in {orgs}")
    for host, ids in sorted(unowned.items()):
        print(f"  no organization owns {host}: {len(ids)} record(s), e.g. {', '.join(ids[:3])}")
    return 0 if not unowned else 1


def _validate(args: argparse.Namespace) -> int:
    from grounding_eval.data_validate import check_folder
    from grounding_eval.docs_qa.testset import is_docs_qa_dataset

    if is_docs_qa_dataset(args.dataset):
        return _validate_docs_qa(args.dataset)
    dataset, findings = check_folder(args.dataset)
    for line in findings.warnings:
        print(f"warning: {line}", file=sys.stderr)
    counts = [
        _count(len(dataset.queries), "query", "queries"),
        _count(len(dataset.high_risk), "High-Risk item", "High-Risk items"),
        _count(len(dataset.index), "index record", "index records"),
        _count(len(dataset.articles), "cached article", "cached articles"),
    ]
    if findings.errors:
        for line in findings.errors:
            print(f"grounding-eval: error: {line}", file=sys.stderr)
        print(
            f"{args.dataset}: {', '.join(counts)} — not valid ({_count(len(findings.errors), 'error', 'errors')})"
        )
        return 2
    # A design fact of a valid folder, not a problem: on stdout, before the verdict line.
    for line in _record_notes(findings.records):
        print(line if line.startswith(" ") else f"{args.dataset}: {line}")
    print(f"{args.dataset}: {', '.join(counts)} — valid")
    return 0


def _record_notes(records: Sequence[RecordDifference]) -> list[str]:
    """The design fact ``data validate`` states (not a problem: the methods document builds C1 and C1.5 so):
    how many items give different records under C1 and C1.5, then one line per such item."""
    from grounding_eval.data.design import differences_summary

    if not records:
        return []
    return [differences_summary(records), *(f"  {terminal_safe(r.text())}" for r in records if r.differs)]


def _sample(args: argparse.Namespace) -> int:
    from grounding_eval.data.rounds import round_items, size_warnings
    from grounding_eval.data.sample import METHOD, SampleSpec

    dataset = _dataset(args)
    spec = SampleSpec.from_config(
        {"n": args.n, "seed": args.seed, "stratify": args.stratify}, where="grounding-eval data sample"
    )
    try:
        _, sample = round_items(
            dataset,
            round_id=args.round,
            tags=args.tags,
            ids=args.ids,
            sample=spec,
            where="grounding-eval data sample",
        )
    except KeyError as exc:
        raise DataError("--round", str(exc.args[0])) from None
    assert sample is not None
    if args.round:
        for line in size_warnings(dataset, args.round, len(sample.items)):
            print(f"warning: {line}", file=sys.stderr)
    if args.json:
        print(json.dumps({
            **sample.metadata(),
            "strata": [
                {"key": dict(zip(spec.stratify, s.key, strict=True)), "items": s.size, "seats": s.quota,
                 "chosen": list(s.chosen)}
                for s in sample.strata
            ],
        }, ensure_ascii=False))  # fmt: skip
        return 0
    where = f"round {args.round}" if args.round else "all items"
    by = ", ".join(spec.stratify) or "nothing (one stratum)"
    print(f"{dataset.root}: {where}: {sample.pool_size} items in the pool; n {spec.n}, seed {spec.seed}, "
          f"stratified by {by}; {METHOD}")  # fmt: skip
    width = max([len(" · ".join(s.key) or "(all)") for s in sample.strata] + [7])
    print(f"{'stratum':{width}}  items  seats  chosen")
    for s in sample.strata:
        print(
            f"{' · '.join(s.key) or '(all)':{width}}  {s.size:>5}  {s.quota:>5}  {', '.join(s.chosen) or '-'}"
        )
    print(f"chosen ({len(sample.items)}, dataset order): {', '.join(sample.ids)}")
    print(f"ids sha256: {sample.provenance()['ids_sha256']}")
    # The generator config that draws this sample: tags / ids narrow the pool, so they belong to it too.
    for key, values in (("tags", args.tags), ("ids", args.ids)):
        if values:
            print(f"config: {key}: [{', '.join(values)}]")
    stratify = f", stratify: [{', '.join(spec.stratify)}]" if spec.stratify else ""
    print(f"config: sample: {{n: {spec.n}, seed: {spec.seed}{stratify}}}")
    return 0


def _validate_docs_qa(root: Path) -> int:
    """A docs-QA dataset: docs set, test set (schema + sections), fixtures; the type mix against the seed's."""
    from grounding_eval.data.recorded_answers import load_recorded_answers
    from grounding_eval.data_validate import check_replies, recorded_answers
    from grounding_eval.docs_qa.docs_set import load_docs_set
    from grounding_eval.docs_qa.reply import parse_grading
    from grounding_eval.docs_qa.rubric import load_docs_qa_rubric
    from grounding_eval.docs_qa.testset import DOCS_DIR, find_questions, load_questions, type_mix
    from grounding_eval.judge.calls import load_replay_fixtures
    from grounding_eval.judge.extract import ParseFailure

    docs = load_docs_set(root / DOCS_DIR)
    questions = load_questions(find_questions(root), docs)
    rubric = load_docs_qa_rubric()
    errors: list[str] = []
    answers = recorded_answers(root / "recorded_answers.yaml", {q.id for q in questions}, errors)
    out_of_scope = {q.id: q.out_of_scope for q in questions}

    def check(reply: str, answer: str, qid: str) -> list[str]:
        parsed = parse_grading(
            reply, rubric, out_of_scope=out_of_scope.get(qid, False), judged_text=answer or None
        )
        return list(parsed.problems) if isinstance(parsed, ParseFailure) else []

    grader = root / "grader_replies.yaml"
    if grader.exists():
        errors += check_replies(grader, set(out_of_scope), answers, check, rubric="docs_qa")
    if errors:
        for line in errors:
            print(f"grounding-eval: error: {line}", file=sys.stderr)
        print(f"{root}: docs-QA test set — not valid ({_count(len(errors), 'error', 'errors')})")
        return 2
    fixtures = (
        ("recorded_answers.yaml", load_recorded_answers, "recorded answer", "recorded answers"),
        ("grader_replies.yaml", load_replay_fixtures, "recorded grader reply", "recorded grader replies"),
    )
    extras = [
        _count(len(load(root / name)), one, many)
        for name, load, one, many in fixtures
        if (root / name).exists()
    ]
    counts = [
        _count(len(questions), "question", "questions"),
        _count(len(docs.documents), "document", "documents"),
        _count(sum(1 for s in docs.sections.values() if s.anchor), "section", "sections"),
        *extras,
    ]
    print(f"{root}: docs-QA test set, {', '.join(counts)} — valid")
    print("question type    n   share  seed's share")
    for share in type_mix(questions, rubric):
        print(f"{share.type:14} {share.n:>3} {share.share:>6.1f} %  {share.target:>5.0f} %")
    for share in type_mix(questions, rubric):
        if share.warn:
            print(
                f"warning: {root}: {share.type} is {share.share:.1f} % of the questions, {abs(share.off_by):.1f} "
                f"points from the seed's {share.target:.0f} % (tolerance {rubric.type_mix_tolerance_points:g})",
                file=sys.stderr,
            )
    return 0


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _judge_prompt(args: argparse.Namespace) -> int:
    from dataclasses import asdict

    from grounding_eval.data.conditions import condition_vars
    from grounding_eval.data.methods import ROUNDS
    from grounding_eval.data.recorded_answers import load_recorded_answers
    from grounding_eval.data.records import HighRiskItem
    from grounding_eval.files import read_text
    from grounding_eval.judge.render import render_judge_prompt
    from grounding_eval.judge.rubric import load_rubric

    dataset = _dataset(args)
    try:
        item = dataset.item(args.item_id)
    except KeyError:
        raise DataError(dataset.root, f"no item with id {args.item_id!r}") from None
    if args.answer:
        answer = read_text(args.answer)
    else:
        recordings = Path(dataset.root) / "recorded_answers.yaml"
        recorded = load_recorded_answers(recordings).get((item.id, args.condition))
        if recorded is None:
            raise DataError(recordings, f"no recorded answer for {item.id!r} under {args.condition}")
        answer = recorded.answer
    rubric = load_rubric(pack_root() / "rubrics" / f"{ROUNDS[args.round].rubric}.yaml")
    grounding = condition_vars(item, dataset)
    gap = {"C1": grounding.directory_gap, "C1.5": grounding.full_content_gap}.get(args.condition)
    if gap:  # as in an eval, where this cell is an ERROR row and no judge runs
        raise DataError(dataset.root, f"no grounding for {args.condition}: {gap}")
    sources = {"C0": [], "C1": [grounding.jkb_directory], "C1.5": [grounding.jkb_full_content]}[
        args.condition
    ]
    rendered = render_judge_prompt(
        rubric,
        question=item.question,
        answer=answer,
        jurisdiction=item.jurisdiction,
        sources=sources,
        item=asdict(item) if isinstance(item, HighRiskItem) else None,
    )
    print(f"===== SYSTEM (fixture key {rubric.id}/{item.id}/{args.condition}) =====")
    print(rendered.system)
    print("===== USER =====")
    print(rendered.user)
    return 0
