"""promptfoo test generator for docs-QA: ``file://datasets/docs_qa/generate.py:generate_tests``.

See :mod:`grounding_eval.promptfoo.docs_qa_tests` for the config keys (dataset, docs, types, ids).
"""

from pathlib import Path
from typing import Any

PACK_ROOT = Path(__file__).resolve().parents[2]


def generate_tests(config: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """One promptfoo test per docs-QA question, with the question's record in its metadata."""
    from grounding_eval.promptfoo.docs_qa_tests import generate_tests as generate

    return generate(config, pack_root=PACK_ROOT)
