"""The C1 / C1.5 blocks: the 200-character description cut (golden table tests/golden/description_cut.yaml),
empty blocks (refused by data validate, an ERROR row in an eval), the one-article warning, and the
documented sizes a dataset that claims the real set is checked against."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import event, given
from hypothesis import strategies as st

from grounding_eval.cli import main
from grounding_eval.data.conditions import DESCRIPTION_CHARS, condition_vars, cut_description, render_prompt
from grounding_eval.data.dataset import load_dataset
from grounding_eval.data_validate import check_dataset
from grounding_eval.errors import DataError
from grounding_eval.promptfoo.round_tests import generate_tests
from grounding_eval.promptfoo.verifier_assertion import verifier_assertion
from tests.promptfoo_runs import EvalRun, run_eval, shared_group
from tests.scores import query_id

REPO = Path(__file__).resolve().parents[2]
SAMPLE = REPO / "datasets" / "sample"
GAPS = REPO / "tests" / "fixtures" / "data" / "gaps"
GAPS_CONFIG = "tests/fixtures/data/gaps_round2.yaml"
GAPS_LIFTED_CONFIG = "tests/fixtures/data/gaps_round2_lifted.yaml"
CUTS = yaml.safe_load((REPO / "tests" / "golden" / "description_cut.yaml").read_text(encoding="utf-8"))[
    "cases"
]
WHY_OH = "item 'gap-oh-01': none of the 1 matching index records (gap-oh-furnace) has a cached article"
WHY_WV = "item 'gap-wv-01': no index record of WV or US matches its topic 'custody' or its question's words"


def _gaps_in_round_1a_only(tmp_path: Path) -> Path:
    """A copy of the gap fixture whose il-high-stakes queries are retagged il-eviction: only Round 1a
    (C0, C1) selects them, so no C1.5 round needs their cached article."""
    folder = tmp_path / "gaps"
    shutil.copytree(GAPS, folder)
    queries = (folder / "queries.jsonl").read_text(encoding="utf-8")
    (folder / "queries.jsonl").write_text(
        queries.replace('"il-high-stakes"', '"il-eviction"'), encoding="utf-8"
    )
    return folder


def _join(value: str | list[list[Any]]) -> str:
    return value if isinstance(value, str) else "".join(text * times for text, times in value)


class TestCutDescription:
    @pytest.mark.parametrize("case", CUTS, ids=[c["id"] for c in CUTS])
    def test_golden(self, case: dict[str, Any]) -> None:
        """Each hand-worked cut: input → expected."""
        assert cut_description(_join(case["input"])) == _join(case["expected"])

    @given(st.text(st.characters(codec="utf-8"), max_size=400))
    def test_at_most_200_and_a_prefix(self, text: str) -> None:
        """Never over 200 characters; unchanged when short; otherwise a prefix of the text plus "…"."""
        cut = cut_description(text)
        assert len(cut) <= DESCRIPTION_CHARS
        if len(text) <= DESCRIPTION_CHARS:
            assert cut == text
            event("short: unchanged")
        else:
            assert cut.endswith("…") and text.startswith(cut[:-1])
            event("long: cut")

    @given(st.lists(st.text("abcdefghij,;:", min_size=1, max_size=30), min_size=8, max_size=40))
    def test_long_text_with_spaces_is_cut_at_a_space(self, words: list[str]) -> None:
        """When a space leaves room for the "…", the cut ends a word: the next character was a space."""
        text = " ".join(words)
        cut = cut_description(text)
        if len(text) <= DESCRIPTION_CHARS or " " not in text[1:DESCRIPTION_CHARS]:
            event("no cut at a space")
            return
        kept = cut[:-1]
        rest = text[len(kept) :]
        assert rest[:1] in {" ", ",", ";", ":"}, (kept[-10:], rest[:10])
        assert not kept.endswith((",", ";", ":", " "))
        event("cut at a space")

    def test_block_is_cut_data_is_not(self) -> None:
        """or-discrim-01's C1 block shows the 227-character record cut to 196; the index keeps it whole."""
        dataset = load_dataset(SAMPLE)
        record = dataset.index["usagov-housing-discrimination-complaints"]
        assert len(record.description) == 227
        grounding = condition_vars(dataset.item("or-discrim-01"), dataset)
        assert grounding.directory_cut == ("usagov-housing-discrimination-complaints",)
        prompt = render_prompt("C1", dataset.item("or-discrim-01"), dataset)
        assert cut_description(record.description) in prompt
        assert record.description not in prompt
        assert len(cut_description(record.description)) == 196

    def test_every_sample_block_description_is_at_most_200(self) -> None:
        dataset = load_dataset(SAMPLE)
        longer = [r.id for r in dataset.index.values() if len(r.description) > DESCRIPTION_CHARS]
        assert len(longer) == 4  # measured before the cut: 4 of 63 records, up to 237 characters
        for item in (*dataset.queries, *dataset.high_risk):
            block = condition_vars(item, dataset).jkb_directory
            for line in block.splitlines():
                if line and not line.startswith(("### ", "http")):
                    assert len(line) <= DESCRIPTION_CHARS, (item.id, line)


class TestEmptyBlocks:
    def test_reasons(self) -> None:
        dataset = load_dataset(GAPS)
        oh = condition_vars(dataset.item("gap-oh-01"), dataset)
        wv = condition_vars(dataset.item("gap-wv-01"), dataset)
        ok = condition_vars(dataset.item("gap-il-01"), dataset)
        assert (oh.directory_gap, oh.full_content_gap) == (None, WHY_OH)
        assert (wv.directory_gap, wv.full_content_gap) == (WHY_WV, WHY_WV)
        assert (ok.directory_gap, ok.full_content_gap) == (None, None)

    def test_validate_refuses(self, capsys: pytest.CaptureFixture[str]) -> None:
        """Every empty block is one error line; the folder is not valid (exit 2)."""
        assert main(["data", "validate", str(GAPS)]) == 2
        captured = capsys.readouterr()
        assert captured.err.splitlines() == [
            f"grounding-eval: error: {GAPS}: no grounding for C1.5 (rounds 2, 2b): {WHY_OH}",
            f"grounding-eval: error: {GAPS}: no grounding for C1: {WHY_WV}",
            f"grounding-eval: error: {GAPS}: no grounding for C1.5 (rounds 2, 2b): {WHY_WV}",
        ]
        assert captured.out.endswith("— not valid (3 errors)\n")

    def test_one_article_is_a_warning(self, capsys: pytest.CaptureFixture[str]) -> None:
        """The sample's il-hs-02 gets one article under C1.5: valid, with one warning."""
        assert main(["data", "validate", str(SAMPLE)]) == 0
        captured = capsys.readouterr()
        assert captured.err == (
            f"warning: {SAMPLE}: item 'il-hs-02' (rounds 2, 2b): C1.5 content is 1 article (us-34usc12491); "
            "the methods document uses two or three\n"
        )
        assert captured.out.endswith("— valid\n")

    def test_c15_gap_ignored_for_items_no_c15_round_uses(self, tmp_path: Path) -> None:
        """A query only Round 1a selects (C0, C1) needs no cached article."""
        folder = _gaps_in_round_1a_only(tmp_path)
        findings = check_dataset(load_dataset(folder))
        assert findings.errors == (f"{folder}: no grounding for C1: {WHY_WV}",)

    def test_generator_marks_exactly_the_empty_vars(self) -> None:
        tests = {query_id(t): t for t in generate_tests({"dataset": str(GAPS), "round": "2"}, pack_root=REPO)}
        js = f"file://{(REPO / 'assertions' / 'missing_grounding.cjs').resolve().as_posix()}"
        assert "grounding_missing" not in tests["gap-il-01"]["vars"]
        assert tests["gap-oh-01"]["vars"]["jkb_full_content"] == js
        assert tests["gap-oh-01"]["vars"]["jkb_directory"].startswith("### Gap fixture: furnace")
        assert json.loads(tests["gap-oh-01"]["vars"]["grounding_missing"]) == {
            "jkb_full_content": f"no grounding for C1.5: {WHY_OH}"
        }
        assert (
            tests["gap-wv-01"]["vars"]["jkb_directory"]
            == js
            == tests["gap-wv-01"]["vars"]["jkb_full_content"]
        )
        assert tests["gap-wv-01"]["metadata"]["grounding_missing"] == {
            "jkb_directory": f"no grounding for C1: {WHY_WV}",
            "jkb_full_content": f"no grounding for C1.5: {WHY_WV}",
        }

    def test_round_without_c15_marks_only_c1(self, tmp_path: Path) -> None:
        folder = _gaps_in_round_1a_only(tmp_path)
        tests = {
            query_id(t): t for t in generate_tests({"dataset": str(folder), "round": "1a"}, pack_root=REPO)
        }
        assert "grounding_missing" not in tests["gap-oh-01"]["vars"]
        assert tests["gap-oh-01"]["vars"]["jkb_full_content"] == ""
        assert set(tests["gap-wv-01"]["metadata"]["grounding_missing"]) == {"jkb_directory"}


def _node(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["npx", "--no-install", "node", "-e", script],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


class TestMissingGroundingJs:
    """assertions/missing_grounding.cjs, called the way promptfoo calls a file:// var (name, raw prompt, vars)."""

    CALL = (
        "const f = require('./assertions/missing_grounding.cjs');"
        "const vars = {grounding_missing: JSON.stringify({jkb_full_content: 'no grounding for C1.5: why'})};"
        "const prompt = require('fs').readFileSync('prompts/%s', 'utf8');"
        "try { console.log(JSON.stringify(f('jkb_full_content', prompt, vars))); }"
        "catch (e) { console.log('THROWN ' + String(e) + ' | ' + e.stack); }"
    )

    def test_prompt_using_the_var_throws_the_reason(self) -> None:
        done = _node(self.CALL % "c1_5.txt")
        assert (
            done.stdout.strip()
            == "THROWN ERROR (no grounding for C1.5: why) | ERROR (no grounding for C1.5: why)"
        )

    @pytest.mark.parametrize("prompt", ["c0.txt", "c1.txt"])
    def test_other_prompts_get_a_placeholder(self, prompt: str) -> None:
        done = _node(self.CALL % prompt)
        assert json.loads(done.stdout) == {"output": "(no grounding for C1.5: why)"}


def test_placeholder_grades_like_an_empty_var() -> None:
    """The verifier gives a C0 answer the same result whether the item's C1.5 var is empty or holds the
    placeholder (with the generator's metadata.grounding_missing)."""
    answer = 'Custody orders often limit moves; "ask the court that issued it" before you go.'
    prompt = "You are a legal information assistant helping someone in WV.\nUser question:\nq"

    def grade(value: str, metadata: dict[str, Any]) -> dict[str, Any]:
        context = {
            "vars": {
                "query_id": "gap-wv-01",
                "jurisdiction": "WV",
                "question": "q",
                "jkb_full_content": value,
            },
            "test": {"metadata": {"dataset": str(GAPS), "quotation": "scored", **metadata}},
            "prompt": prompt,
            "config": {"liveness": "offline"},
        }
        result = verifier_assertion(answer, context, pack_root=REPO)
        result.get("metadata", {}).pop("provenance", None)
        return result

    missing = {"grounding_missing": {"jkb_full_content": "no grounding for C1.5: why"}}
    assert grade("(no grounding for C1.5: why)", missing) == grade("", {})


@pytest.mark.e2e
@pytest.mark.parametrize("config", [GAPS_CONFIG, GAPS_LIFTED_CONFIG], ids=["vars", "lifted"])
def test_eval_error_rows_exactly_where_a_block_is_empty(config: str, tmp_path: Path) -> None:
    """The pinned promptfoo: 9 cells, the 3 with an empty block are ERROR rows with the reason, the other 6
    are graded (the eval is not stopped) — with the source vars in the vars, or lifted by beforeAll."""
    done = run_eval(config, tmp_path)
    assert done.out.exists(), done.tail()
    rows = done.rows()
    errors = {
        (query_id(r), r["prompt"]["label"].split(":")[0]): r["error"] for r in rows if r["failureReason"] == 2
    }
    assert errors == {
        ("gap-oh-01", "C1.5"): f"ERROR (no grounding for C1.5: {WHY_OH})",
        ("gap-wv-01", "C1"): f"ERROR (no grounding for C1: {WHY_WV})",
        ("gap-wv-01", "C1.5"): f"ERROR (no grounding for C1.5: {WHY_WV})",
    }
    graded = [r for r in rows if r["failureReason"] != 2]
    assert len(graded) == 6 and all(r["gradingResult"]["componentResults"] for r in graded)
    assert "WARNING: grounding-eval:" in done.stdout + done.stderr
    lifted = config == GAPS_LIFTED_CONFIG
    assert all(("jkb_full_content" in r["vars"]) is not lifted for r in rows)
    # The item with no article: its quotes are NO_SOURCE under every condition either way, and the
    # stand-in its C0 and C1 cells were given is the placeholder, never the var's file:// path.
    oh = [r for r in graded if query_id(r) == "gap-oh-01"]
    assert len(oh) == 2 and not any("file://" in r["prompt"]["raw"] for r in rows)


class TestClaims:
    def _claiming(self, tmp_path: Path, text: str) -> Path:
        folder = tmp_path / "data"
        shutil.copytree(SAMPLE, folder)
        (folder / "dataset.yaml").write_text(text, encoding="utf-8")
        return folder

    def test_sample_claims_nothing(self) -> None:
        assert load_dataset(SAMPLE).manifest.claims == ()

    def test_claimed_sizes_are_warnings(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        folder = self._claiming(tmp_path, "name: not really\nclaims: [LHSQ-115, High-Risk-Challenge]\n")
        assert main(["data", "validate", str(folder)]) == 0
        where = folder / "dataset.yaml"
        warnings = [line for line in capsys.readouterr().err.splitlines() if "claims" in line]
        assert warnings == [
            f"warning: {where}: claims LHSQ-115 (115 queries), but has 30 queries",
            f"warning: {where}: claims LHSQ-115: round 1a uses 5 item(s), the methods document's round 1a used 22 (tag il-eviction)",
            f"warning: {where}: claims LHSQ-115: round 1b uses 12 item(s), the methods document's round 1b used 48 (tag six-state)",
            f"warning: {where}: claims LHSQ-115: round 2 uses 5 item(s), the methods document's round 2 used 10 (tag il-high-stakes)",
            f"warning: {where}: claims LHSQ-115: round 2b uses 5 item(s), the methods document's round 2b used 10 (tag il-high-stakes)",
            f"warning: {where}: claims High-Risk-Challenge (192 High-Risk items), but has 8 High-Risk items",
        ]

    def test_generator_warns_for_its_round(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        folder = self._claiming(tmp_path, "claims: [High-Risk-Challenge]\n")
        generate_tests({"dataset": str(folder), "round": "3", "sample": {"n": 4, "seed": 1}}, pack_root=REPO)
        where = folder / "dataset.yaml"
        assert capsys.readouterr().err.splitlines() == [
            f"WARNING: grounding-eval: {where}: claims High-Risk-Challenge (192 High-Risk items), but has 8 High-Risk items",
            f"WARNING: grounding-eval: {where}: claims High-Risk-Challenge: round 3 uses 4 item(s), the methods "
            "document's round 3 used 40 (a sample, n 40)",
        ]

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            (
                "claims: [LHSQ-116]\n",
                "field 'claims': 'LHSQ-116' is not one of LHSQ-115, High-Risk-Challenge",
            ),
            ("claim: [LHSQ-115]\n", "unknown field(s) claim (allowed: name, claims, rounds)"),
            ("- LHSQ-115\n", "expected a mapping (name, claims, rounds)"),
            ("claims: [LHSQ-115, LHSQ-115]\n", "field 'claims': names a set twice"),
        ],
    )
    def test_bad_manifest(self, tmp_path: Path, text: str, message: str) -> None:
        folder = self._claiming(tmp_path, text)
        with pytest.raises(DataError) as caught:
            load_dataset(folder)
        assert caught.value.one_line() == f"{folder / 'dataset.yaml'}: {message}"


@pytest.mark.parametrize(
    ("document", "valid"),
    [
        ({"name": "partner copy", "claims": ["LHSQ-115", "High-Risk-Challenge"]}, True),
        ({"claims": "LHSQ-115"}, True),
        ({}, True),
        ({"claims": ["LHSQ-116"]}, False),
        ({"claims": ["LHSQ-115", "LHSQ-115"]}, False),
        ({"claim": ["LHSQ-115"]}, False),
        ({"name": 3}, False),
    ],
)
def test_manifest_schema_agrees_with_the_loader(
    tmp_path: Path, document: dict[str, Any], valid: bool
) -> None:
    """datasets/schemas/dataset_manifest.schema.json accepts exactly what load_manifest accepts."""
    import jsonschema

    from grounding_eval.data.manifest import load_manifest

    schema = json.loads(
        (REPO / "datasets" / "schemas" / "dataset_manifest.schema.json").read_text(encoding="utf-8")
    )
    jsonschema.Draft202012Validator.check_schema(schema)
    (tmp_path / "dataset.yaml").write_text(yaml.safe_dump(document), encoding="utf-8")
    try:
        load_manifest(tmp_path)
        loaded = True
    except DataError:
        loaded = False
    assert jsonschema.Draft202012Validator(schema).is_valid(document) is valid is loaded


def test_var_source_path_survives_promptfoos_glob(tmp_path: Path) -> None:
    """promptfoo globs every file:// var (glob, windowsPathsNoEscape): a pack folder named with glob
    characters still matches exactly its one file."""
    from grounding_eval.promptfoo.round_tests import _var_source

    target = tmp_path / "pack [v1] (copy) {x}*?" / "missing_grounding.cjs"
    target.parent.mkdir()
    target.write_text("", encoding="utf-8")
    (tmp_path / "pack [v1] (copy) {x}*?" / "other.cjs").write_text("", encoding="utf-8")
    pattern = _var_source(target).removeprefix("file://")
    script = (
        "const {globSync} = require('glob');"
        "console.log(JSON.stringify(globSync(process.argv[1], {cwd: process.cwd(), windowsPathsNoEscape: true})));"
    )
    matched = subprocess.run(
        ["npx", "--no-install", "node", "-e", script, pattern],
        cwd=REPO, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert json.loads(matched.stdout) == [target.as_posix()]


@pytest.mark.parametrize(
    ("item", "condition", "why"), [("gap-oh-01", "C1.5", WHY_OH), ("gap-wv-01", "C1", WHY_WV)]
)
def test_conditions_show_refuses_an_empty_block(
    capsys: pytest.CaptureFixture[str], item: str, condition: str, why: str
) -> None:
    """`conditions show` never prints a prompt with an empty block; C0 of the same item still prints."""
    assert main(["conditions", "show", item, "--condition", condition, "--dataset", str(GAPS)]) == 2
    assert capsys.readouterr().err == f"grounding-eval: error: {GAPS}: no grounding for {condition}: {why}\n"
    assert main(["conditions", "show", item, "--condition", "C0", "--dataset", str(GAPS)]) == 0


def test_lifting_the_source_vars_changes_no_prompt_and_no_grade(tmp_path: Path) -> None:
    """The beforeAll hook takes the source vars out of the vars (no viewer columns, no copies in the results
    file): every cell's prompt, error and grade is the same as with them in the vars."""

    def cells(config: str, where: Path) -> dict[tuple[str, str], tuple[Any, ...]]:
        done = run_eval(config, where)
        return {
            (query_id(r), r["prompt"]["label"].split(":")[0]): (
                r["prompt"]["raw"], r.get("error"), r["success"], r["score"], r["namedScores"],
                (r.get("gradingResult") or {}).get("reason"),
            )
            for r in done.rows()
        }  # fmt: skip

    kept, lifted = cells(GAPS_CONFIG, tmp_path / "vars"), cells(GAPS_LIFTED_CONFIG, tmp_path / "lifted")
    assert len(kept) == 9 and lifted == kept


@pytest.mark.xdist_group(shared_group("promptfooconfig.yaml"))
def test_a_rerun_from_the_results_file_gets_its_source_vars_back(
    tmp_path: Path, shared_eval: Callable[[str], EvalRun]
) -> None:
    """``--filter-failing`` builds its tests from the results file's rows, which keep no source vars: the
    beforeAll hook rebuilds them from the dataset, so every re-run prompt and grade is the first run's
    (without it, C1 and C1.5 were rendered with empty blocks and graded so)."""
    first = shared_eval("promptfooconfig.yaml")
    again = run_eval("promptfooconfig.yaml", tmp_path, extra_args=["--filter-failing", str(first.out)])
    assert again.returncode in (0, 100), again.tail()

    def cells(run: EvalRun) -> dict[tuple[str, str], tuple[Any, ...]]:
        return {
            (query_id(r), r["prompt"]["label"].split(":")[0]): (
                r["prompt"]["raw"], r["success"], r["score"], r["namedScores"]
            )
            for r in run.rows()
        }  # fmt: skip

    before, rerun = cells(first), cells(again)
    failed_items = {item for (item, _), cell in before.items() if not cell[1]}
    assert rerun and {item for item, _ in rerun} == failed_items
    assert all(rerun[k] == before[k] for k in rerun)
    assert all("jkb_full_content" not in r["vars"] for r in again.rows())
