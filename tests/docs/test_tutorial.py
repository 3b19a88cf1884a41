"""The tutorial runs as written: every shell block of docs/tutorial.md, in order, in a copy of the repository.

The copy holds the working tree's files, with the project's ``.venv`` and ``node_modules`` linked in so that
nothing installs; the blocks run as ``tests/docs/blocks.py`` says (each exits 0 or as documented; the viewer's
block must answer with the demo's eval listed). Afterwards the files the tutorial's heredocs write
hold what the page shows, and the results are what the page says they are.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.docs import blocks as docs
from tests.docs.blocks import SERVER, Block
from tests.scores import query_id

REPO = Path(__file__).resolve().parents[2]
TUTORIAL = REPO / "docs" / "tutorial.md"

pytestmark = pytest.mark.e2e


class TestBlocks:
    """The parsing the run relies on, on the page itself."""

    def test_every_fence_of_the_page_is_a_block_or_not_shell(self) -> None:
        text = TUTORIAL.read_text(encoding="utf-8")
        opened = len(re.findall(r"^\s*```(?:bash|console|sh|shell)\s*$", text, re.MULTILINE))
        assert opened == len(docs.shell_blocks(text)) >= 10

    def test_the_page_writes_its_dataset_and_config_with_heredocs(self) -> None:
        written = docs.heredocs(docs.page_blocks("docs/tutorial.md"))
        assert set(written) >= {
            "my-data/queries.jsonl", "my-data/jkb_index.jsonl", "my-data/recorded_answers.yaml", "my-study.yaml",
        }  # fmt: skip

    def test_expected_status_and_server_marks(self) -> None:
        assert (
            Block("p", 1, "bash", "npx promptfoo eval -c x.yaml\n# exits 100: on purpose\n").expected_status
            == 100
        )
        assert Block("p", 1, "bash", "true\n").expected_status == 0
        assert Block("p", 1, "bash", SERVER + "; open http://localhost:1\nnpx promptfoo view -n\n").is_server


def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    docs.require_installed()
    blocks = docs.page_blocks("docs/tutorial.md")
    root = docs.copy_repository(tmp_path / "repo")
    env = docs.reader_env(tmp_path / "home")
    for block in blocks:
        assert block.not_run is None, f"{block.where}: every command of the tutorial runs"
        if block.is_server:
            listed = json.loads(docs.run_server(block, root, env, "/api/results"))
            assert listed["data"], "the viewer lists no eval: the demo's run is not in the copy's database"
        else:
            docs.run_block(block, root, env)
    for path, text in docs.heredocs(blocks).items():  # a later block may append (the sample's index record)
        assert (root / path).read_text(encoding="utf-8").startswith(text), path

    # What the page says the runs show.
    assert (root / "results" / "report.html").stat().st_size > 0
    rows = {
        query_id(row): row
        for row in json.loads((root / "results" / "my-study.json").read_text(encoding="utf-8"))["results"][
            "results"
        ]
    }
    assert sorted(rows) == ["my-lockout-01", "my-repairs-01"]
    good, bad = rows["my-lockout-01"], rows["my-repairs-01"]
    assert good["success"] is True
    good_reasons = "\n".join(c.get("reason", "") for c in good["gradingResult"]["componentResults"])
    assert "quotation: 1.00 [1 EXACT]" in good_reasons and "[1 MATCH]" in good_reasons
    assert bad["success"] is False
    assert (
        "[jurisdiction → jurisdiction_correct No] leak to another state: Legal Aid Chicago serves IL only"
        in (bad["gradingResult"]["reason"])
    )
