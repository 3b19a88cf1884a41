"""The JSON Schemas in ``datasets/schemas/``, generated from the models of :mod:`grounding_eval.data.models`.

The models are the one definition of each file format; the schemas are for other tools (an editor, a
partner's pipeline, the docs site's reference) and for the citation index's check in ``data validate``.
The docs-QA loader (:mod:`grounding_eval.docs_qa.testset`) validates each question against its generated
schema with ``jsonschema``, so a docs-QA assertion never imports pydantic.

    .venv/bin/python -m grounding_eval.data.schemas --write   # regenerate after changing a model
    .venv/bin/python -m grounding_eval.data.schemas --check   # exit 1 when a committed file is stale
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from grounding_eval.data import models
from grounding_eval.files import write_text_atomic
from grounding_eval.resources import pack_root

__all__ = ["GENERATED", "generated_schemas", "main"]

GENERATED: dict[str, type[BaseModel]] = {
    "query": models.QueryRecord,
    "high_risk_item": models.HighRiskRecord,
    "index_record": models.IndexRow,
    "dataset_manifest": models.ManifestFile,
    "recorded_answer": models.RecordedAnswerEntry,
    "recorded_judge_reply": models.RecordedReplyEntry,
    "organization": models.OrganizationEntry,
    "citations": models.CitationIndexFile,
    "docs_qa_question": models.DocsQaQuestionRecord,
}
"""Schema file stem -> the model it is generated from."""


def _schema(stem: str, model: type[BaseModel]) -> dict[str, Any]:
    body = model.model_json_schema()
    title = body.pop("title", stem)
    description = " ".join((model.__doc__ or "").split())
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": f"https://grounding-eval.local/schemas/{stem}.schema.json",
        "title": title,
        "description": f"{description} Generated from grounding_eval/data/models.py ({model.__name__}): "
        "do not edit; run python -m grounding_eval.data.schemas --write.",
        **{k: v for k, v in body.items() if k != "description"},
    }


def generated_schemas() -> dict[str, str]:
    """File name -> the text it must hold."""
    return {
        f"{stem}.schema.json": json.dumps(_schema(stem, model), indent=2, ensure_ascii=False) + "\n"
        for stem, model in GENERATED.items()
    }


def main(argv: list[str] | None = None) -> int:
    """``--write`` the schemas, or ``--check`` that the committed ones are current."""
    parser = argparse.ArgumentParser(prog="python -m grounding_eval.data.schemas", description=__doc__)
    group = parser.add_mutually_exclusive_group(required=True)
    group.add_argument("--write", action="store_true", help="write datasets/schemas/*.json")
    group.add_argument("--check", action="store_true", help="exit 1 when a committed schema is stale")
    args = parser.parse_args(argv)
    folder = pack_root() / "datasets" / "schemas"
    stale = []
    for name, text in generated_schemas().items():
        path = Path(folder, name)
        current = path.read_text(encoding="utf-8") if path.exists() else None
        if current == text:
            continue
        if args.write:
            write_text_atomic(path, text)
            print(f"wrote {path}")
        else:
            stale.append(name)
    for name in stale:
        print(f"{folder / name}: stale: run python -m grounding_eval.data.schemas --write", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
