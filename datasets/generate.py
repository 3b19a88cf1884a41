"""promptfoo test generator entry point: ``file://datasets/generate.py:generate_tests``.

See :mod:`grounding_eval.promptfoo.round_tests` for the config keys (dataset, round, tags, ids).
"""

from pathlib import Path
from typing import Any

PACK_ROOT = Path(__file__).resolve().parent.parent


def generate_tests(config: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """One promptfoo test per selected dataset item, with C1/C1.5 variables filled from the data."""
    from grounding_eval.promptfoo.round_tests import generate_tests as generate

    return generate(config, pack_root=PACK_ROOT)
