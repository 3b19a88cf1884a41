"""A study folder's own Python files never run in the pack's processes (issue 39 review: a planted package).

``assertions/grounding.cjs`` starts its workers from the study folder; without ``-P`` Python puts that
folder first on ``sys.path``, so a ``grounding_eval/`` (or ``yaml.py``) planted there replaced the
installed pack in every worker and flipped every verdict. Real processes: a study written by ``init``,
Node running the study's own copy of the entry, the project's Python for the workers.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from grounding_eval.share.scaffold import scaffold
from tests.test_worker import ANSWER, CONTEXT, REPO

_PLANT = """
import os
with open({marker!r}, "a") as f:
    f.write(f"{{__name__}} planted module loaded in pid {{os.getpid()}}\\n")
"""


def test_a_module_planted_in_the_study_folder_is_never_imported(tmp_path: Path) -> None:
    study = tmp_path / "study"
    scaffold(study, "1a", None, force=False)
    marker = tmp_path / "PWNED"
    for planted in ("grounding_eval/__init__.py", "yaml.py", "regex.py"):
        (study / planted).parent.mkdir(parents=True, exist_ok=True)
        (study / planted).write_text(_PLANT.format(marker=str(marker)), encoding="utf-8")
    context = json.loads(json.dumps(CONTEXT))
    context["test"]["metadata"]["dataset"] = str(REPO / "datasets" / "sample")
    node = shutil.which("node")
    assert node is not None, "node is not on PATH"
    entry = study / "assertions" / "grounding.cjs"
    script = (
        f"const g = require({json.dumps(str(entry))});\n"
        f"(async () => {{ const r = await g.verifier({json.dumps(ANSWER)}, {json.dumps(context)});\n"
        "process.stdout.write(JSON.stringify(r)); })();"
    )
    env = {**os.environ, "PROMPTFOO_PYTHON": sys.executable, "PYTHONPATH": str(REPO)}
    done = subprocess.run([node, "-e", script], cwd=study, env=env, capture_output=True, text=True,
                          timeout=120, check=False)  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout)
    assert not marker.exists(), marker.read_text()
    assert result["pass"] is True and result["reason"].startswith("PASS"), result["reason"]
