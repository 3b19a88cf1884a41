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
import json, runpy, sys
sys.modules["grounding_eval"] = None  # import grounding_eval now raises ImportError
entry = runpy.run_path(sys.argv[1])
print(json.dumps(entry["get_assert"]("an answer", {"vars": {}, "config": {}})))
"""


@pytest.mark.parametrize("entry", ["judge", "verifier", "factuality", "docs_qa"])
def test_an_import_failure_is_an_unscored_outcome(entry: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _RUN, str(ASSERTIONS / f"{entry}.py")],
        capture_output=True,
        text=True,
        check=True,
    )
    result = json.loads(done.stdout)
    assert result["pass"] is False
    assert result["metadata"]["outcome"] == "unscored"
    assert result["metadata"]["unscored_reason"].startswith("cannot import grounding_eval:")
