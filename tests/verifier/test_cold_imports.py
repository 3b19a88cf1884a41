"""What a cold verifier call imports: promptfoo starts a fresh Python for every row, so every import is paid per row.

An offline call on an answer with no phone number and no quotation needs none of the network modules
(live checks only), neither library of the checks it does not run (``phonenumbers``, ``rapidfuzz``), nor
:mod:`importlib.resources` (the pack's data is found beside the package); once the compiled allowlist and
directory are cached, nothing is written, so :mod:`tempfile` is not imported either.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

# As promptfoo's wrapper does: import the assertion file, call it; then report what was imported.
_CALL = """
import importlib.util, json, os, sys
sys.path.insert(0, os.path.dirname(sys.argv[1]))
spec = importlib.util.spec_from_file_location("verifier_entry", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
context = {"vars": {"jurisdiction": "MI"}, "config": {"liveness": "offline"}, "prompt": "Where can I get help?"}
result = module.get_assert("Start at https://help.invented-site.org/eviction for Michigan.", context)
print(json.dumps({"reason": result["reason"], "modules": sorted(sys.modules)}))
"""

NOT_IMPORTED = (
    "socket", "ssl", "threading", "sqlite3", "http.client", "dns", "datetime",  # live checks only
    "phonenumbers", "rapidfuzz", "tldextract",  # checks this answer does not need
    "importlib.resources", "tempfile",  # finding the pack's data; writing a cache entry
)  # fmt: skip


def _cold_call(work: Path) -> tuple[str, set[str]]:
    result = subprocess.run(
        [sys.executable, "-c", _CALL, str(REPO / "assertions" / "verifier.py")],
        cwd=work,  # the resource cache (.cache/grounding-eval) is written here
        capture_output=True,
        text=True,
        check=True,
    )
    out = json.loads(result.stdout)
    return out["reason"], set(out["modules"])


def test_offline_call_without_phones_or_quotes_imports_only_what_it_needs(tmp_path: Path) -> None:
    """A fresh process grading an offline answer imports no network module, no unneeded library."""
    _cold_call(tmp_path)  # the first call writes the compiled allowlist and directory
    reason, modules = _cold_call(tmp_path)
    assert reason.startswith("PASS deterministic verifier")
    assert "UNCHECKED https://help.invented-site.org/eviction" in reason
    assert "liveness unchecked: offline mode" in reason
    imported = sorted(name for name in NOT_IMPORTED if name in modules)
    assert imported == []
    assert "grounding_eval.verifier.liveness" in modules  # still validates the liveness options offline
