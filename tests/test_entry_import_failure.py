"""The thin Python entry files when grounding_eval cannot be imported: an unscored result as a value
(``metadata.outcome``), not only a reason prefix, so the report counts the row apart."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ASSERTIONS = Path(__file__).resolve().parents[1] / "assertions"
# A fresh interpreter where importing grounding_eval fails, as on a machine without the pack installed.
_RUN = """
import json, os, runpy, sys
sys.modules["grounding_eval"] = None  # import grounding_eval now raises ImportError
sys.path.insert(0, os.path.dirname(sys.argv[1]))  # as promptfoo's wrapper.py does
entry = runpy.run_path(sys.argv[1])
print(json.dumps(entry[sys.argv[2]]("an answer", {"vars": {}, "config": {}})))
"""


def _run(file: str, function: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(ASSERTIONS / file), function],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout)
    return result


# Each old entry file, and the function of assertions/grounding.py it is an alias of.
@pytest.mark.parametrize(
    ("file", "function"),
    [("judge.py", "get_assert"), ("verifier.py", "get_assert"), ("factuality.py", "get_assert"),
     ("docs_qa.py", "get_assert"), ("grounding.py", "judge"), ("grounding.py", "verifier"),
     ("grounding.py", "factuality"), ("grounding.py", "docs_qa")],
)  # fmt: skip
def test_an_import_failure_is_an_unscored_outcome(file: str, function: str) -> None:
    result = _run(file, function)
    assert result["pass"] is False
    assert result["metadata"]["outcome"] == "unscored"
    assert result["metadata"]["unscored_reason"].startswith("cannot import grounding_eval:")


@pytest.mark.parametrize(("file", "function"), [("composite.py", "round3"), ("grounding.py", "round3")])
def test_a_composite_that_cannot_import_is_unscored(file: str, function: str) -> None:
    result = _run(file, function)
    metadata = result["metadata"]
    assert result["pass"] is False and isinstance(metadata, dict)
    assert metadata["outcome"] == "unscored" and metadata["composite"] == {"status": "unscored"}
    assert "grounding_eval" in metadata["unscored_reason"]
