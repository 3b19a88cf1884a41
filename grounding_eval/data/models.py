"""One model per dataset file kind: the one definition of each format, its checks and its JSON Schema.

Each model is a pydantic v2 model of one record (a line of ``queries.jsonl``, an entry of
``recorded_answers.yaml``, the whole of ``dataset.yaml`` …). The loaders validate every record with it,
``grounding-eval data validate`` reports every problem it finds, and ``datasets/schemas/*.json`` are
generated from it (:mod:`grounding_eval.data.schemas`; a test keeps the committed files current).

A field's check is a plain function (:mod:`grounding_eval.data.fields`) raising :class:`FieldProblem`
with the text a user reads (``unknown state code 'ZZ'``); :func:`problems` turns pydantic's errors into
the project's one-line form, ``field 'jurisdiction': unknown state code 'ZZ'``, so every message still
goes out as one :class:`~grounding_eval.errors.DataError` line naming the file and the record.

Why pydantic and not attrs + cattrs (measured on this machine, issue 23): JSON Schema generation is
built in, and validation collects every error of a record with its field. Importing this module costs
about 0.15 s (attrs + cattrs: about 0.05 s for the same four models), so it is imported only where files
are loaded (the test generator, the replay provider, the CLI), never by an assertion: the judge's loader
of recorded replies calls the field checks directly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, WithJsonSchema

from grounding_eval.data.fields import (
    CONDITIONS,
    MAX_DESCRIPTION_CHARS,
    FieldProblem,
    answer_hash,
    check_description,
    check_id_list,
    check_ident,
    check_list_or_one,
    check_nonempty_list,
    check_one_of,
    check_raw_text,
    check_state,
    check_state_or_us,
    check_text,
    check_text_list,
    check_url,
    optional_text,
    reply_texts,
)
from grounding_eval.data.methods import REAL_SETS, ROUNDS
from grounding_eval.data.records import RISK_TIERS
from grounding_eval.errors import clip

ROUND_IDS = tuple(ROUNDS)
REAL_SET_NAMES = tuple(REAL_SETS)


def check_claims(value: Any) -> tuple[str, ...]:
    claims = [value] if isinstance(value, str) else (value or [])
    if not isinstance(claims, list) or not all(isinstance(c, str) for c in claims):
        raise FieldProblem("must be a list of set names")
    bad = [c for c in claims if c not in REAL_SET_NAMES]
    if bad:
        raise FieldProblem(f"{clip(bad[0])} is not one of {', '.join(REAL_SET_NAMES)}")
    if len(set(claims)) != len(claims):
        raise FieldProblem("names a set twice")
    return tuple(claims)


def check_rounds(value: Any) -> tuple[str, ...]:
    rounds = [value] if isinstance(value, str | int) else value
    if not isinstance(rounds, list):
        raise FieldProblem(f"must be a list of round ids ({', '.join(ROUND_IDS)})")
    out = []
    for r in rounds:
        text = str(r).strip() if isinstance(r, str | int) and not isinstance(r, bool) else None
        if text not in ROUND_IDS:
            raise FieldProblem(f"{clip(r)} is not a round: use {', '.join(ROUND_IDS)}")
        out.append(text)
    if len(set(out)) != len(out):
        raise FieldProblem("names a round twice")
    return tuple(out)


__all__ = [
    "CONDITIONS",
    "MAX_DESCRIPTION_CHARS",
    "RISK_TIERS",
    "ROUND_IDS",
    "CitationIndexFile",
    "DocsQaQuestionRecord",
    "FieldProblem",
    "HighRiskRecord",
    "IndexRow",
    "ManifestFile",
    "OrganizationEntry",
    "QueryRecord",
    "RecordedAnswerEntry",
    "RecordedReplyEntry",
    "field_names",
    "problems",
]


def _checked(check: Any, schema: dict[str, Any]) -> Any:
    """A field type: ``check`` validates (and cleans) the raw value; ``schema`` is its JSON Schema."""
    return (BeforeValidator(check), WithJsonSchema(schema))


_NONBLANK = {"type": "string", "pattern": "\\S"}
_ID = {"type": "string", "pattern": "^[^\\s/]+$"}
_STATE = {"type": "string", "pattern": "^[A-Za-z]{2}$|^[A-Z][a-zA-Z .]+$"}


def _list_schema(items: dict[str, Any], *, min_items: int = 0) -> dict[str, Any]:
    array: dict[str, Any] = {"type": "array", "items": items}
    if min_items:
        array["minItems"] = min_items
    return {"oneOf": [array, {"type": "string"}]}  # CSV: one cell, ';'-separated


Text = Annotated[str, *_checked(check_text, _NONBLANK)]
Ident = Annotated[str, *_checked(check_ident, _ID)]
State = Annotated[str, *_checked(check_state, _STATE)]
StateOrUS = Annotated[str, *_checked(check_state_or_us, _STATE)]
TextList = Annotated[tuple[str, ...], *_checked(check_text_list, _list_schema(_NONBLANK))]
IdList = Annotated[tuple[str, ...], *_checked(check_id_list, _list_schema(_ID))]
NonEmptyList = Annotated[
    tuple[str, ...], *_checked(check_nonempty_list, _list_schema(_NONBLANK, min_items=1))
]


class _Record(BaseModel):
    # defer_build: a model is compiled on its first use, so a process pays only for the files it reads.
    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True, defer_build=True)


# ---- the item files and the content index ----


class QueryRecord(_Record):
    """One LHSQ-style query: a line of queries.jsonl, a row of queries.csv, or an item of queries.yaml."""

    model_config = ConfigDict(title="query")

    id: Ident = Field(description="unique item id (no spaces or slashes)")
    jurisdiction: State = Field(
        description="the user's state: two-letter code (IL, TX, MI, OH, OR, WV, …), not US"
    )
    topic: Text = Field(description="topic slug, e.g. eviction, security-deposit")
    question: Text = Field(description="the question in the user's own voice")
    tags: TextList = Field(
        (),
        description="round-selection tags: il-eviction (1a), six-state (1b), il-high-stakes (2, 2b); "
        "CSV: ';'-separated",
    )
    article_ids: IdList = Field(
        (), description="index ids of the articles that ground it (C1.5); CSV: ';'-separated"
    )


class HighRiskRecord(QueryRecord):
    """One High-Risk Challenge item (a line of high_risk.jsonl): a query plus the SME-flagged fields Round 3
    grades."""

    model_config = ConfigDict(title="high_risk_item")

    required_clarifying_questions: NonEmptyList = Field(description="what a good answer asks before advising")
    failure_modes: NonEmptyList = Field(
        description="what a harmful answer does (the Round 3 judge checks each)"
    )
    risk_tier: Annotated[
        str, *_checked(check_one_of(RISK_TIERS, lower=True), {"type": "string", "enum": list(RISK_TIERS)})
    ] = Field(description="critical, high or moderate")
    sme_variables: NonEmptyList = Field(description="the facts an expert would need to know")


class IndexRow(_Record):
    """One JKB-style content index record (a line of jkb_index.jsonl): the C1 directory is built from these,
    and articles/<id>.txt holds its C1.5 text."""

    model_config = ConfigDict(title="index_record")

    id: Ident = Field(description="unique record id; articles/<id>.txt or .md is its cached text")
    state: StateOrUS = Field(description="two-letter state code, or US for national")
    title: Text = Field(description="the page's title")
    url: Annotated[
        str, *_checked(check_url, {"type": "string", "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://\\S+$"})
    ] = Field(description="the page's http(s) URL")
    description: Annotated[
        str,
        *_checked(
            check_description, {"type": "string", "pattern": "\\S", "maxLength": MAX_DESCRIPTION_CHARS}
        ),
    ] = Field(description="about 200 characters, at most 400 (the C1 block shows at most 200)")
    organization: Text = Field(description="who publishes the page")
    topics: TextList = Field((), description="topic slugs; CSV: ';'-separated")
    source: Annotated[str | None, *_checked(check_text, _NONBLANK)] = Field(
        None, description="where the record came from"
    )


# ---- dataset.yaml ----


class ManifestFile(_Record):
    """A dataset folder's own description (dataset.yaml, optional): its name, the methods document's real
    sets it claims to hold (their documented sizes are checked, each difference a warning), and the rounds
    it is used for (the item files those rounds read are then required)."""

    model_config = ConfigDict(title="dataset_manifest")

    name: Annotated[str | None, *_checked(optional_text, {"type": "string"})] = Field(
        None, description="free text naming the dataset"
    )
    claims: Annotated[
        tuple[str, ...],
        *_checked(
            check_claims,
            {
                "oneOf": [
                    {"type": "array", "items": {"enum": list(REAL_SET_NAMES)}, "uniqueItems": True},
                    {"enum": list(REAL_SET_NAMES)},
                ]
            },
        ),
    ] = Field((), description="the methods document's real sets this folder holds")
    rounds: Annotated[
        tuple[str, ...],
        *_checked(
            check_rounds,
            {"type": "array", "items": {"enum": list(ROUND_IDS)}, "uniqueItems": True},
        ),
    ] = Field(
        (),
        description="the rounds this dataset is for (1a, 1b, 2, 2b use queries.jsonl; 3 uses high_risk.jsonl); "
        "when absent, the item files present are the rounds' items",
    )


# ---- recordings ----


class RecordedAnswerEntry(_Record):
    """One recorded model answer (an entry of recorded_answers.yaml): the answer the replay provider serves
    for one item under one condition, so an eval runs with no API key."""

    model_config = ConfigDict(title="recorded_answer")

    query_id: Text = Field(description="the item's id (a query, a High-Risk item or a docs-QA question)")
    condition: Annotated[
        str, *_checked(check_one_of(CONDITIONS), {"type": "string", "enum": list(CONDITIONS)})
    ] = Field(description="the generation condition: C0, C1, C1.5 (docs-QA: docs-qa)")
    answer: Annotated[str, *_checked(check_raw_text, _NONBLANK)] = Field(
        description="the answer text, exactly as the model under test gives it"
    )
    model: Text = Field(description="who wrote it: a model id, or 'fixture (hand-written)'")
    covers: Annotated[
        tuple[str, ...], *_checked(check_list_or_one(str), {"type": "array", "items": {"type": "string"}})
    ] = Field((), description="the verifier outcomes this answer shows (information)")
    note: Annotated[str | None, *_checked(optional_text, {"type": "string"})] = Field(
        None, description="free text"
    )


class RecordedReplyEntry(_Record):
    """One recorded judge reply (an entry of judge_replies/<rubric>.yaml, factuality/*_replies.yaml or
    grader_replies.yaml): the replies a judge replays, in order, for one key."""

    model_config = ConfigDict(title="recorded_judge_reply")

    key: Text = Field(
        description="<rubric>/<item id>/<condition> (docs-QA: docs_qa/<question id>; a standalone factuality "
        "example: factual_accuracy/<file name>)"
    )
    answer_sha256: Annotated[
        str | None, *_checked(answer_hash, {"type": "string", "pattern": "^[0-9a-f]{64}$"})
    ] = Field(
        None, description="SHA-256 of the recorded answer the replies judged (scripts/hash_judge_replies.py)"
    )
    replies: Annotated[
        tuple[str, ...], *_checked(reply_texts, {"type": "array", "items": {"type": "string"}, "minItems": 1})
    ] = Field(
        description="the judge's replies, in order: the last must be valid for every criterion of the rubric; "
        "an earlier one is answered by the one retry"
    )
    note: Annotated[str | None, *_checked(optional_text, {"type": "string"})] = Field(
        None, description="free text"
    )


# ---- the verifier's data ----


class OrganizationEntry(_Record):
    """One organization of the directory (an entry of organizations.yaml), for the phone–org, URL–org and
    jurisdiction checks. The verifier's loader (grounding_eval/verifier/directory.py) reads each entry;
    this model names its fields for the schema."""

    model_config = ConfigDict(title="organization")

    name: str = Field(pattern="\\S", description="the organization's name as answers write it")
    states: list[str] | str = Field(description="two-letter codes of the states it serves; US for national")
    aliases: list[str | int] | str = Field(
        [], description="other names (an all-caps alias matches case-sensitively)"
    )
    domains: list[str] | str = Field([], description="bare domains it owns, like example.org")
    phones: list[str | int] | str = Field([], description="US phone numbers")
    unverified: list[str] | str = Field(
        [], description="the fields whose facts were not checked (e.g. phones)"
    )
    source: str | None = Field(None, description="where the facts come from")
    note: str | None = Field(None, description="free text")


class _CitationEntry(_Record):
    citation: str = Field(pattern="\\S", description="the section, as above")
    title: str | None = Field(None, description="what the section is (information only)")
    url: str | None = Field(None, description="where its text was read (information only)")


class CitationIndexFile(_Record):
    """A dataset's citation index (citations.yaml): the legal sections the verifier's citations check knows
    exist offline, and the codes it lists completely. A citation of a section inside a covered code that is
    not listed is UNKNOWN, a hard failure (hallucinated_citation); a citation nothing covers is UNCHECKED
    offline."""

    model_config = ConfigDict(title="citations")

    covers: list[Annotated[str, Field(pattern="\\S")]] = Field(
        [],
        description="the codes, titles or chapters, or section ranges, this file lists completely, each written "
        "as a citation without its section: '765 ILCS', 'Tex. Prop. Code', '15 U.S.C.', 'W. Va. Code § 37-6', or "
        "a range 'Mich. Comp. Laws §§ 554.601–554.616'",
    )
    citations: list[Annotated[str, Field(pattern="\\S")] | _CitationEntry] = Field(
        description="sections, in any form the verifier reads ('765 ILCS 705/1', 'MCL 554.601', "
        "'Tex. Prop. Code § 24.005'); a pin subsection is ignored"
    )


# ---- docs-QA ----


_QUESTION_TYPES = ("direct-lookup", "multi-section", "reworded", "out-of-scope")


class DocsQaQuestionRecord(_Record):
    """One record of a docs-QA test set (a line of questions.jsonl or an item of questions.yaml), after the
    seed's 'For each question, record'. grounding_eval/docs_qa/testset.py validates every record against
    this schema, then checks what a schema cannot: unique ids, source_sections that resolve to sections of
    the docs set, and none for out-of-scope questions."""

    model_config = ConfigDict(
        title="docs-QA question",
        json_schema_extra={
            "if": {"properties": {"type": {"const": "out-of-scope"}}},
            "then": {"properties": {"source_sections": {"maxItems": 0}}},
            "else": {"properties": {"source_sections": {"minItems": 1}, "must_include": {"minItems": 1}}},
        },
    )

    id: str = Field(
        pattern="^[A-Za-z0-9][A-Za-z0-9_.-]*$", max_length=64, description="unique question id, e.g. Q07"
    )
    type: Annotated[str, WithJsonSchema({"enum": list(_QUESTION_TYPES)})] = Field(
        description="question type (the seed's four)"
    )
    question: str = Field(pattern="\\S", max_length=2000, description="the question as a user asks it")
    reference_answer: str = Field(
        pattern="\\S", max_length=10000, description="written before any assistant answer was read"
    )
    must_include: list[Annotated[str, Field(pattern="\\S", max_length=500)]] = Field(
        max_length=50, description="the points a correct answer states"
    )
    source_sections: Annotated[
        list[str],
        WithJsonSchema(
            {
                "type": "array",
                "items": {"type": "string", "pattern": "^[^#\\s]+(#[^#\\s]+)?$"},
                "maxItems": 50,
                "uniqueItems": True,
            }
        ),
    ] = Field(
        description="file.md#anchor (or a whole file) of the docs set; empty for out-of-scope questions"
    )
    note: Annotated[str | None, WithJsonSchema({"type": "string"})] = Field(None, description="free text")


# ---- errors ----


def field_names(model: type[BaseModel]) -> tuple[str, ...]:
    """The fields a record of ``model`` may have, in definition order."""
    return tuple(model.model_fields)


def _names(names: Iterable[Any], most: int = 5) -> str:
    """Field names for a message: plain when short and printable, else clipped; at most ``most``."""
    shown = [n if len(n) <= 40 and n.isprintable() else clip(n) for n in sorted(map(str, names))]
    more = f" and {len(shown) - most} more" if len(shown) > most else ""
    return ", ".join(shown[:most]) + more


def problems(model: type[BaseModel], exc: ValidationError) -> list[str]:
    """One message per problem of one record, fields in the model's order (unknown fields first).

    ``unknown field(s) colour (allowed: id, …)``, ``field 'question' is missing``, ``field 'jurisdiction':
    unknown state code 'ZZ'``; a nested place is written ``field 'citations' item 3: …``.
    """
    unknown: list[str] = []
    by_field: dict[str, str] = {}
    for error in exc.errors(include_url=False):
        loc = error["loc"]
        name = str(loc[0]) if loc else ""
        if error["type"] == "extra_forbidden" and len(loc) == 1:
            unknown.append(name)
            continue
        if name in by_field:
            continue
        if error["type"] == "missing" and len(loc) == 1:
            by_field[name] = f"field {name!r} is missing"
            continue
        ctx = error.get("ctx") or {}
        cause = ctx.get("error")
        message = str(cause) if isinstance(cause, FieldProblem) else error["msg"]
        inner = "".join(f" item {p + 1}" if isinstance(p, int) else f" {p!r}" for p in loc[1:])
        by_field[name] = f"field {name!r}{inner}: {message}"
    out = []
    if unknown:
        out.append(f"unknown field(s) {_names(unknown)} (allowed: {', '.join(model.model_fields)})")
    order = {name: i for i, name in enumerate(model.model_fields)}
    out += [by_field[n] for n in sorted(by_field, key=lambda n: order.get(n, len(order)))]
    return out


def validate(model: type[_Record], data: Mapping[str, Any]) -> tuple[_Record | None, list[str]]:
    """``(record, [])`` when ``data`` is a valid ``model``; ``(None, problems)`` when not. A field given as
    null counts as absent (YAML writes an empty value as null)."""
    try:
        if None in data.values():
            data = {k: v for k, v in data.items() if v is not None}
        return model.model_validate(data), []
    except ValidationError as exc:
        return None, problems(model, exc)
