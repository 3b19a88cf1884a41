"""The promptfoo assertion (``assertions/factuality.py``), called as promptfoo calls it, with plain dicts."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.judge.calls import answer_sha256
from grounding_eval.promptfoo.factuality_assertion import CHEAP_PROVIDER_ENV
from grounding_eval.promptfoo.judge_assertion import JUDGE_PROVIDER_ENV
from tests.entry_points import load_entry_point
from tests.outcomes import unscored_reason
from tests.scores import row_scores

from .conftest import CONTRADICTED, EVIDENCE_FILES, SUPPORTED, JudgeServer, Scripted, reply, wire_cases

get_assert = load_entry_point("factuality")
ANSWER = (
    "A landlord may not evict a servicemember's family without a court order. Everyone gets free legal aid."
)
METADATA_KEYS = {"status", "score", "judge_reported_score", "claims", "ungrounded_verdicts", "model_id",
                 "prompt_version", "stage", "attempts"}  # fmt: skip
CLAIM_KEYS = {"claim_id", "claim_text", "verification_result", "score", "severity", "evidence_quote",
              "evidence_check", "source_document_ids"}  # fmt: skip


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    monkeypatch.delenv(JUDGE_PROVIDER_ENV, raising=False)
    monkeypatch.delenv(CHEAP_PROVIDER_ENV, raising=False)
    monkeypatch.chdir(tmp_path)  # default queues, cache and audit land here
    yield


def _record(path: Path, key: str, answer: str, *replies: str) -> str:
    path.write_text(
        json.dumps([{"key": key, "answer_sha256": answer_sha256(answer), "replies": list(replies)}])
    )
    return f"replay:{path}"


def _context(provider: str, *, metadata: dict[str, Any] | None = None, **config: Any) -> dict[str, Any]:
    config = {"provider": provider, "evidence_files": [str(p) for p in EVIDENCE_FILES], **config}
    return {
        "vars": {"query_id": "q1"},
        "test": {"description": "a test", "metadata": metadata or {}},
        "config": config,
        "prompt": "the prompt",
    }


class TestResult:
    """namedScores, one componentResult per claim, metadata.factuality in the shared shape."""

    def test_a_sampled_rows_provenance_names_its_sample(self, tmp_path: Path) -> None:
        """The generator's ``metadata.sample`` reaches this row's provenance (without the id list), as it
        does the verifier's and the judge's, so every row of a sampled study says how it was drawn."""
        provider = _record(tmp_path / "r.json", "factual_accuracy/q1/C0", ANSWER, reply(SUPPORTED))
        sample = {"n": 2, "seed": 7, "stratify": ["jurisdiction"], "method": "m", "pool": 5,
                  "ids": ["q1", "q2"], "ids_sha256": "ab"}  # fmt: skip
        result = get_assert(ANSWER, _context(provider, metadata={"sample": sample}))
        kept = {k: v for k, v in sample.items() if k != "ids"}
        assert result["metadata"]["provenance"]["sample"] == kept
        unsampled = get_assert(ANSWER, _context(provider))
        assert "sample" not in unsampled["metadata"]["provenance"]

    def test_scored_row(self, tmp_path: Path) -> None:
        provider = _record(
            tmp_path / "r.json", "factual_accuracy/q1/C0", ANSWER, reply(SUPPORTED, CONTRADICTED)
        )
        result = get_assert(ANSWER, _context(provider))
        assert result["pass"] is False  # 0.5 is under the 0.8 threshold
        assert result["score"] == 0.5
        assert result["reason"].startswith(
            "FAIL factual accuracy 0.50 over 2 verifiable claim(s), threshold 0.8"
        )
        every = {
            "factual_accuracy": 0.5, "factuality.supported": 1, "factuality.contradicted": 1,
            "factuality.partially_supported": 0, "factuality.unverifiable": 0, "factuality.severity.critical": 0,
            "factuality.severity.major": 1, "factuality.severity.minor": 0, "factuality.ungrounded_verdicts": 0,
        }  # fmt: skip
        assert result["metadata"]["factuality"]["scores"] == every
        # The chips: what a reviewer acts on.
        assert result["namedScores"] == {k: every[k] for k in (
            "factual_accuracy", "factuality.contradicted", "factuality.severity.critical", "factuality.severity.major",
            "factuality.ungrounded_verdicts")}  # fmt: skip
        components = result["componentResults"]
        assert [c["pass"] for c in components] == [True, False]
        assert components[1]["reason"].startswith("claim c2: Contradicted [Major] (score 0)")
        assert "(FOUND in avoid#1)" in components[1]["reason"]
        meta = result["metadata"]["factuality"]
        assert set(meta) >= METADATA_KEYS
        assert all(set(c) >= CLAIM_KEYS for c in meta["claims"])
        assert meta["claims"][0]["source_document_ids"] == ["scra"]
        assert meta["source_document_ids"] == ["scra", "avoid"]
        assert meta["timestamp"] and meta["raw_reply"] and meta["prompt_version"] == "factual-accuracy-p1"
        assert len(json.dumps(result["metadata"])) < 5000
        audit = json.loads(Path(meta["audit_file"]).read_text(encoding="utf-8"))
        assert "<TARGET_TEXT>" in audit["rendered_prompt"]["user"]

    def test_ungrounded_verdict_chip_and_downgrade(self, tmp_path: Path) -> None:
        invented = {
            **SUPPORTED,
            "claim_id": "c3",
            "evidence_quote": "landlords must give ninety days of notice before any eviction",
        }
        provider = _record(tmp_path / "r.json", "factual_accuracy/q1/C0", ANSWER, reply(SUPPORTED, invented))
        result = get_assert(ANSWER, _context(provider))
        assert row_scores(result)["factuality.ungrounded_verdicts"] == 1
        assert row_scores(result)["factual_accuracy"] == 1.0  # c3 scored as Unverifiable
        assert (
            "1 UNGROUNDED_VERDICT (c3 scored as Unverifiable; 1.00 by the judge's verdicts)"
            in result["reason"]
        )
        assert "MISMATCH" not in result["reason"]  # the judge's 1 over 2 is right for its own verdicts
        assert "UNGROUNDED_VERDICT: scored as Unverifiable" in result["componentResults"][1]["reason"]
        assert result["metadata"]["factuality"]["verdict_score"] == 1.0
        result = get_assert(ANSWER, _context(provider, downgrade_ungrounded=False))
        assert (
            row_scores(result)["factual_accuracy"] == 1.0
            and row_scores(result)["factuality.ungrounded_verdicts"] == 1
        )

    def test_ungrounded_critical_contradiction_keeps_its_zero(self, tmp_path: Path) -> None:
        """Issue 18 §2, as measured: three Supported and one Contradicted (Critical) claim whose quote is not
        in the evidence scored 1.00 and passed; Step 5 over the judge's verdicts is 3 / 4 = 0.75."""
        found = [
            SUPPORTED,
            {**SUPPORTED, "claim_id": "c2", "evidence_quote": "for which the monthly rent does not exceed $2,400"},
            {**SUPPORTED, "claim_id": "c3", "evidence_quote": "You may qualify for free legal aid based on your income."},
        ]  # fmt: skip
        invented = {**CONTRADICTED, "claim_id": "c4", "severity": "Critical",
                    "evidence_quote": "servicemembers are protected from every eviction in every state forever"}  # fmt: skip
        provider = _record(tmp_path / "r.json", "factual_accuracy/q1/C0", ANSWER, reply(*found, invented))
        for downgrade in (True, False):  # no setting lets the ungrounded 0 drop out
            result = get_assert(ANSWER, _context(provider, downgrade_ungrounded=downgrade))
            assert (result["pass"], result["score"]) == (False, 0.75)
            assert row_scores(result)["factual_accuracy"] == 0.75
            assert result["reason"].startswith("FAIL factual accuracy 0.75 over 4 verifiable claim(s)")
            assert result["reason"].endswith("; 1 UNGROUNDED_VERDICT")
            assert result["componentResults"][3]["reason"].startswith(
                "claim c4: Contradicted [Critical] (score 0)"
            )
            assert "NOT_FOUND, UNGROUNDED_VERDICT)" in result["componentResults"][3]["reason"]

    def test_no_verifiable_claims_has_no_score_chip(self, tmp_path: Path) -> None:
        unverifiable = {
            **SUPPORTED,
            "verification_result": "Unverifiable",
            "score": None,
            "evidence_quote": None,
        }
        provider = _record(tmp_path / "r.json", "factual_accuracy/q1/C0", ANSWER, reply(unverifiable))
        result = get_assert(ANSWER, _context(provider))
        assert "factual_accuracy" not in row_scores(result)
        assert result["reason"].startswith("FAIL NO VERIFIABLE CLAIMS: no score")
        assert result["metadata"]["factuality"]["status"] == "no_verifiable_claims"
        assert result["metadata"]["factuality"]["score"] is None

    def test_invalid_twice_is_an_error_with_no_scores(self, tmp_path: Path) -> None:
        provider = _record(tmp_path / "r.json", "factual_accuracy/q1/C0", ANSWER, "nope", "still nope")
        result = get_assert(ANSWER, _context(provider, review_queue=str(tmp_path / "q.jsonl")))
        assert result["pass"] is False and result["namedScores"] == {}
        assert unscored_reason(result).startswith(
            "the judge reply was invalid twice; sent to the review queue"
        )
        assert (tmp_path / "q.jsonl").exists()
        again = get_assert(ANSWER, _context(provider, review_queue=str(tmp_path / "q.jsonl")))
        assert "already in the review queue" in again["reason"]
        assert len((tmp_path / "q.jsonl").read_text(encoding="utf-8").splitlines()) == 1

    def test_failed_call_after_an_invalid_reply_says_the_call_failed(self, tmp_path: Path) -> None:
        """One recorded reply, invalid: the retry's call fails (no reply 2). The reason names the failed
        call and its provider (was: 'invalid twice'), and the invalid reply is queued."""
        provider = _record(tmp_path / "r.json", "factual_accuracy/q1/C0", ANSWER, "nope")
        result = get_assert(ANSWER, _context(provider, review_queue=str(tmp_path / "q.jsonl")))
        assert unscored_reason(result).startswith(f"judge call failed ({provider}): ")
        assert result["reason"].endswith(
            f"; the earlier invalid reply was sent to the review queue {tmp_path / 'q.jsonl'}"
        )
        (entry,) = [
            json.loads(line) for line in (tmp_path / "q.jsonl").read_text(encoding="utf-8").splitlines()
        ]
        meta = result["metadata"]["factuality"]
        assert entry["raw_replies"] == ["nope"] and meta["review_entry_id"] == entry["entry_id"]
        assert [a["outcome"].split(":")[0] for a in meta["attempts"]] == ["invalid reply", "call failed"]


class TestLegalAidRows:
    """A C1.5 row's evidence is the articles it was shown; its risk tier sets the risk level."""

    def _dataset(self, tmp_path: Path) -> Path:
        root = tmp_path / "data"
        (root / "articles").mkdir(parents=True)
        (root / "articles" / "scra.txt").write_text(
            EVIDENCE_FILES[0].read_text(encoding="utf-8"), encoding="utf-8"
        )
        (root / "articles" / "avoid.txt").write_text(
            EVIDENCE_FILES[1].read_text(encoding="utf-8"), encoding="utf-8"
        )
        return root

    def test_critical_item_with_major_finding_needs_a_human(self, tmp_path: Path) -> None:
        root = self._dataset(tmp_path)
        provider = _record(
            root / "fa.json", "factual_accuracy/q1/C1.5", ANSWER, reply(SUPPORTED, CONTRADICTED)
        )
        context = _context("replay:{dataset}/fa.json", metadata={"dataset": str(root), "full_content_ids": ["scra", "avoid"], "risk_tier": "critical"},
                           human_queue=str(tmp_path / "human.jsonl"))  # fmt: skip
        del context["config"]["evidence_files"]
        context["vars"]["jkb_full_content"] = "the articles"
        context["prompt"] = "Sources: the articles. Question?"
        assert provider
        result = get_assert(ANSWER, context)
        assert result["pass"] is False
        assert result["reason"].startswith("NEEDS_HUMAN_VERIFICATION: risk level high and c2 (Major)")
        assert result["metadata"]["factuality"]["risk_level"] == "high"
        entry = json.loads((tmp_path / "human.jsonl").read_text(encoding="utf-8"))
        assert entry["item"]["query_id"] == "q1" and entry["findings"][0]["evidence_chunks"]

    @pytest.mark.parametrize(
        ("metadata", "config", "level", "source"),
        [
            ({"jurisdiction": "OR", "risk_tier": "moderate"}, {}, "high", "legal_risk_level"),
            ({"jurisdiction": "OR"}, {}, "high", "legal_risk_level"),
            ({"jurisdiction": "OR", "risk_tier": "moderate"}, {"risk_level": "standard"}, "standard", "set"),
            ({"risk_tier": "moderate"}, {}, "standard", "risk tier moderate"),
            ({}, {}, "standard", "default"),
        ],
        ids=["legal-moderate", "legal-no-tier", "legal-set-standard", "not-legal-moderate", "nothing"],
    )
    def test_legal_aid_items_default_to_high(
        self, tmp_path: Path, metadata: dict[str, Any], config: dict[str, Any], level: str, source: str
    ) -> None:
        """The seed: legal review sets [RISK_LEVEL] high. A legal-aid item (its test names a jurisdiction) with
        a Major finding needs a human whatever its risk tier, unless a level is set (issue 41)."""
        root = self._dataset(tmp_path)
        _record(root / "fa.json", "factual_accuracy/q1/C1.5", ANSWER, reply(SUPPORTED, CONTRADICTED))
        meta = {"dataset": str(root), "full_content_ids": ["scra", "avoid"], **metadata}
        context = _context("replay:{dataset}/fa.json", metadata=meta, human_queue=str(tmp_path / "human.jsonl"),
                           **config)  # fmt: skip
        del context["config"]["evidence_files"]
        context["vars"]["jkb_full_content"] = "the articles"
        context["prompt"] = "Sources: the articles. Question?"
        result = get_assert(ANSWER, context)
        factuality = result["metadata"]["factuality"]
        assert (factuality["risk_level"], factuality["risk_level_from"].split()[0]) == (
            level,
            source.split()[0],
        )
        assert factuality["risk_level_from"].startswith(source)
        # c2 is Contradicted and Major: at high a human must verify it; at standard it is a scored failure
        needs_human = result["reason"].startswith("NEEDS_HUMAN_VERIFICATION")
        assert needs_human == (level == "high")
        assert (tmp_path / "human.jsonl").exists() == (level == "high")

    def test_articles_not_in_the_prompt_are_not_evidence(self, tmp_path: Path) -> None:
        root = self._dataset(tmp_path)
        context = _context("replay:x", metadata={"dataset": str(root), "full_content_ids": ["scra"]})
        del context["config"]["evidence_files"]
        context["vars"]["jkb_full_content"] = "the articles"  # but the prompt (C0) does not contain them
        result = get_assert(ANSWER, context)
        assert "no evidence:" in unscored_reason(result)


class TestNeverRaises:
    """Whatever promptfoo passes, a GradingResult with a reason comes back."""

    @pytest.mark.parametrize("output", [None, "", {"a": 1}, ["x"], 3, "\ud83d half an emoji"])
    def test_odd_outputs(self, output: Any, tmp_path: Path) -> None:
        result = get_assert(output, _context(f"replay:{tmp_path / 'missing.yaml'}"))
        assert result["pass"] is False and result["reason"]

    @pytest.mark.parametrize("context", [None, {}, {"config": "x"}, {"vars": []}])
    def test_odd_contexts(self, context: Any) -> None:
        result = get_assert(ANSWER, context)
        assert unscored_reason(result)

    def test_no_judge_names_the_variable(self) -> None:
        context = _context("")
        del context["config"]["provider"]
        assert JUDGE_PROVIDER_ENV in get_assert(ANSWER, context)["reason"]

    def test_missing_key_is_an_error(self, monkeypatch: pytest.MonkeyPatch) -> None:
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        result = get_assert(ANSWER, _context("openai:chat:gpt-4o"))
        why = unscored_reason(result)  # the deciding finding: which variable, for which provider
        assert "API key is not set" in why and "openai:chat:gpt-4o" in why

    @pytest.mark.parametrize("response", [{"isPartial": True}, {"finishReason": "length"}])
    def test_partial_output_is_refused(self, response: dict[str, Any], tmp_path: Path) -> None:
        provider = _record(tmp_path / "r.json", "factual_accuracy/q1/C0", ANSWER, reply(SUPPORTED))
        context = {**_context(provider), "providerResponse": {"output": ANSWER, **response}}
        result = get_assert(ANSWER, context)
        assert "refused a partial output" in unscored_reason(result)

    def test_recording_for_another_answer_is_refused(self, tmp_path: Path) -> None:
        provider = _record(tmp_path / "r.json", "factual_accuracy/q1/C0", "another answer", reply(SUPPORTED))
        result = get_assert(ANSWER, _context(provider))
        assert unscored_reason(result).startswith(
            "recorded judge reply factual_accuracy/q1/C0 was recorded for answer sha256"
        )
        assert result["namedScores"] == {}


class TestLiveSwitch:
    """$GROUNDING_EVAL_JUDGE_PROVIDER makes the whole judgment live: the recorded cheap stage is off."""

    def test_env_judge_turns_the_recorded_cheap_stage_off(
        self, monkeypatch: pytest.MonkeyPatch, judge_server: JudgeServer, tmp_path: Path
    ) -> None:
        case = wire_cases(judge_server.url)["openai"]
        for name, value in case.env.items():
            monkeypatch.setenv(name, value)
        monkeypatch.setenv(JUDGE_PROVIDER_ENV, case.provider_id)
        # The switch decides the endpoint too: promptfoo's own setting for it, never the config's base_url.
        monkeypatch.setenv("OPENAI_BASE_URL", case.base_url)
        judge_server.script(Scripted(body=case.ok(reply(SUPPORTED))))
        cheap = _record(tmp_path / "cheap.json", "factual_accuracy/q1/C0", ANSWER, reply(SUPPORTED))
        config = {"cheap_provider": cheap, "max_retries": 0, "cache_dir": str(tmp_path / "replies")}
        result = get_assert(ANSWER, _context("replay:unused", **config))
        meta = result["metadata"]["factuality"]
        assert (meta["stage"], meta["model_id"], meta["cheap_model_id"]) == (
            "capable",
            case.provider_id,
            None,
        )
        assert judge_server.count == 1 and result["pass"] is True

    def test_a_reply_from_one_endpoint_never_answers_for_another(
        self, monkeypatch: pytest.MonkeyPatch, judge_server: JudgeServer, tmp_path: Path
    ) -> None:
        """The reply cache's key holds the endpoint asked, wherever it was set (here promptfoo's own
        OPENAI_BASE_URL): the same judgment asked of a second host is asked of it, never read from a reply
        the first host gave (a received study's .env could otherwise seed the user's cache)."""
        other = JudgeServer()
        other.start()
        try:
            config = {"max_retries": 0, "cache_dir": str(tmp_path / "replies")}
            for server in (judge_server, other):
                case = wire_cases(server.url)["openai"]
                for name, value in case.env.items():
                    monkeypatch.setenv(name, value)
                monkeypatch.setenv(JUDGE_PROVIDER_ENV, case.provider_id)
                monkeypatch.setenv("OPENAI_BASE_URL", case.base_url)
                server.script(Scripted(body=case.ok(reply(SUPPORTED))))
                assert get_assert(ANSWER, _context("replay:unused", **config))["pass"] is True
            assert (judge_server.count, other.count) == (1, 1)
        finally:
            other.stop()


def test_repeated_calls_in_one_process_give_the_same_result(tmp_path: Path) -> None:
    """A persistent worker may call the assertion many times: nothing is used up between calls."""
    provider = _record(tmp_path / "r.json", "factual_accuracy/q1/C0", ANSWER, reply(SUPPORTED, CONTRADICTED))
    first, second = (get_assert(ANSWER, _context(provider)) for _ in range(2))
    assert (
        (first["score"], first["namedScores"])
        == (second["score"], second["namedScores"])
        == (0.5, first["namedScores"])
    )
    assert [c["reason"] for c in first["componentResults"]] == [
        c["reason"] for c in second["componentResults"]
    ]


def test_output_marked_partial_in_metadata_is_refused(tmp_path: Path) -> None:
    provider = _record(tmp_path / "r.json", "factual_accuracy/q1/C0", ANSWER, reply(SUPPORTED))
    result = get_assert(ANSWER, {**_context(provider), "metadata": {"partial": True}})
    assert "refused a partial output (marked partial)" in unscored_reason(result)
