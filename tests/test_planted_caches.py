"""A study someone else wrote cannot decide a verdict with a cache it carries (issue 39, finding 2).

The sender runs the study once (fresh processes, as promptfoo's ``type: python`` entries run), so every
cache the pack keeps is written wherever the pack keeps it; then the sender edits every entry they can
reach — the allowlist gains an invented URL, the citation index an invented section, a row's source
texts a fabricated sentence, each entry's list of files read emptied — re-sealing with their own secret
where entries are sealed, and ships the entries inside the study folder (``.cache/grounding-eval``,
where the pack used to keep them) and, for the worst case, in the receiver's own cache folder too. The
receiver, with a home of their own, grades the same three answers in fresh processes: each must keep the
verdict a clean run gives (FAIL). On 006b177 the three plants turned all three into passes.

A control shows the plants are real: the same edited values sealed with the receiver's own secret do
decide, so what refuses them is who wrote them, not their shape.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.judge.cache import ReplyCache
from grounding_eval.promptfoo import round_tests
from grounding_eval.verifier.urls import normalize_url

REPO = Path(__file__).resolve().parents[1]
ITEM = "hr-mi-deposit-01"  # Michigan: the sample's citation index covers its deposit act completely
INVENTED_URL = "https://www.michigan-deposit.tenanthelp/form"  # no real public suffix: HALLUCINATED_URL
INVENTED_SECTION = ["Michigan Compiled Laws", "554", "613A"]  # inside the covered 554.601–554.616
FABRICATED = "every landlord owes each tenant a free parking space and a monthly bouquet of tulips"
ANSWERS = {
    "unknown citation": "Under Mich. Comp. Laws § 554.613a your landlord must return the deposit.",
    "fabricated quote": f'The law says "{FABRICATED}".',
    "unknown URL": f"See {INVENTED_URL} for the form.",
}
_CALL = """
import importlib.util, json, os, sys
sys.path.insert(0, os.path.dirname(sys.argv[1]))  # as promptfoo's wrapper.py: import the file, call it
spec = importlib.util.spec_from_file_location("entry", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
output, context = json.loads(sys.stdin.read())
print(json.dumps(module.get_assert(output, context)))
"""


def _plant(kind: str, holder: dict[str, Any], sealed: bool) -> bool:
    """Edit one entry's content (a resource entry's value is the body itself when sealed, else under
    ``value``; a built entry's is under ``value``); whether it is one of the kinds planted."""
    if kind in ("allowlist", "citations"):
        value = holder if sealed else holder["value"]
        if kind == "allowlist":
            value.append(normalize_url(INVENTED_URL))
        else:
            value["keys"].append(INVENTED_SECTION)
            value["entries"] += 1
        return True
    if kind == "source-vars":
        holder["value"]["jkb_full_content"] += f"\n\nSection 554.699. In this state {FABRICATED}.\n"
        holder["files"], holder["folders"] = {}, {}  # "never stale"
        return True
    return False


class Study:
    """A study folder holding the sample as ``data`` (relative: the entries' keys hold on any machine)."""

    def __init__(self, tmp: Path) -> None:
        self.root = tmp / "study"
        shutil.copytree(REPO / "datasets" / "sample", self.root / "data")
        self.sender = tmp / "sender-home"
        self.receiver = tmp / "receiver-home"
        cwd = Path.cwd()
        os.chdir(self.root)
        try:
            tests = round_tests.generate_tests({"dataset": "data", "round": "3"}, pack_root=REPO)
        finally:
            os.chdir(cwd)
        (test,) = [t for t in tests if t["metadata"]["query_id"] == ITEM]
        self.metadata = test["metadata"]
        # Graded as a type: python entry sees a row the beforeAll hook lifted: its source vars rebuilt.
        self.vars = {k: v for k, v in test["vars"].items() if k not in self.metadata["source_vars"]}

    def env(self, home: Path) -> dict[str, str]:
        return {**os.environ, "HOME": str(home), "XDG_CACHE_HOME": str(home / ".cache"),
                "PYTHONPATH": str(REPO)}  # fmt: skip

    def grade(self, answer: str, home: Path) -> dict[str, Any]:
        """The verifier entry on ``answer`` in a fresh process run from the study folder."""
        context = {"vars": self.vars, "test": {"vars": self.vars, "metadata": self.metadata},
                   "config": {"liveness": "offline"}, "prompt": "C0 prompt"}  # fmt: skip
        done = subprocess.run(
            [sys.executable, "-c", _CALL, str(REPO / "assertions" / "verifier.py")], cwd=self.root,
            env=self.env(home), input=json.dumps([answer, context]), capture_output=True, text=True,
            timeout=120, check=True,
        )  # fmt: skip
        result: dict[str, Any] = json.loads(done.stdout)
        return result

    def entries(self, home: Path) -> list[Path]:
        """Every cache entry a run left in the study folder or in ``home``'s cache folder."""
        folders = (self.root / ".cache" / "grounding-eval", home / ".cache" / "grounding-eval")
        return sorted(p for f in folders if f.is_dir() for p in f.glob("*.json"))

    def planted(self, monkeypatch: pytest.MonkeyPatch, sealer: Path) -> dict[str, str]:
        """Each entry the sender's run wrote, edited (``_plant``) and, where entries are sealed, sealed
        again with ``sealer``'s secret: ``{file name: text}``."""
        out: dict[str, str] = {}
        for entry in self.entries(self.sender):
            kind = entry.name.rsplit("-", 1)[0]
            stored = json.loads(entry.read_text(encoding="utf-8"))
            if "body" in stored:  # sealed (grounding_eval.user_cache): the sealer seals the edit
                from grounding_eval.user_cache import seal

                body = json.loads(stored["body"])
                if not _plant(kind, body, sealed=True):
                    continue
                monkeypatch.setenv("XDG_CACHE_HOME", str(sealer / ".cache"))
                text = seal(stored["kind"], stored["name"], body)
                monkeypatch.undo()
                assert text is not None
                out[entry.name] = text
            elif _plant(kind, stored, sealed=False):
                out[entry.name] = json.dumps(stored, ensure_ascii=False)
        return out


@pytest.fixture
def study(tmp_path: Path) -> Study:
    made = Study(tmp_path)
    clean = {what: made.grade(answer, made.sender) for what, answer in ANSWERS.items()}
    for what, result in clean.items():  # the verdicts a run nobody tampered with gives
        assert result["pass"] is False, (what, result["reason"])
    return made


def _place(entries: dict[str, str], *folders: Path) -> None:
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in entries.items():
            (folder / name).write_text(text, encoding="utf-8")


def test_caches_planted_in_a_study_decide_no_verdict(study: Study, monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries edited and re-sealed by the sender, in the study folder and even in the receiver's own
    cache folder: every verdict stays FAIL, in fresh processes."""
    planted = study.planted(monkeypatch, sealer=study.sender)
    kinds = {name.rsplit("-", 1)[0] for name in planted}
    assert kinds == {"allowlist", "citations", "source-vars"}, sorted(planted)
    _place(planted, study.root / ".cache" / "grounding-eval", study.receiver / ".cache" / "grounding-eval")
    verdicts = {what: study.grade(answer, study.receiver) for what, answer in ANSWERS.items()}
    flipped = {what: r["reason"][:160] for what, r in verdicts.items() if r["pass"] is not False}
    assert not flipped, f"a planted cache decided: {flipped}"
    assert "unknown citation" in verdicts["unknown citation"]["reason"]
    assert "HALLUCINATED_URL" in verdicts["unknown URL"]["reason"] or "hallucinated" in (
        verdicts["unknown URL"]["reason"].lower()
    )


def test_the_plants_are_real_sealed_by_the_receiver_they_would_decide(
    study: Study, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The control: the same edits sealed with the receiver's own secret turn all three into passes —
    only who wrote an entry keeps it out (nobody but the receiver's processes can write such a one)."""
    study.grade(ANSWERS["unknown URL"], study.receiver)  # the receiver's secret exists from now on
    planted = study.planted(monkeypatch, sealer=study.receiver)
    _place(planted, study.receiver / ".cache" / "grounding-eval")
    verdicts = {what: study.grade(answer, study.receiver) for what, answer in ANSWERS.items()}
    assert all(r["pass"] is True for r in verdicts.values()), {
        w: r["reason"][:160] for w, r in verdicts.items()
    }


def test_a_judge_reply_planted_in_the_cache_folder_is_never_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A reply entry for the exact request (its key is computable by anyone who can render the prompt),
    written by someone else into the folder the judge reads — the default one or one a config names — is
    a miss: the judge is asked. The receiver's own entry is a hit."""
    fields = {"transport": "promptfoo", "provider": "openai:chat:gpt-4o-mini", "config_sha256": "0" * 64,
              "system": "grade", "prompt": "the rendered prompt"}  # fmt: skip
    folder = tmp_path / "study" / ".cache" / "grounding-eval" / "judge"
    folder.mkdir(parents=True)
    planted: Callable[[str], None] = lambda text: ReplyCache(folder).put(  # noqa: E731
        fields, text=text, raw=None, request_id=None
    )
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "sender" / ".cache"))
    planted('{"verdicts": "all Yes"}')
    assert list(folder.glob("*.json")), "the sender wrote an entry"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "receiver" / ".cache"))
    assert ReplyCache(folder).get(fields) is None
    planted("the receiver's own reply")
    hit = ReplyCache(folder).get(fields)
    assert hit is not None and hit.text == "the receiver's own reply"


def test_a_live_url_result_planted_in_the_liveness_cache_is_never_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Live checks keep LIVE/DEAD by URL in one SQLite file (a config may name it): a row someone else
    wrote there — "LIVE" for a page nobody here reached — is a miss; the receiver's own row is a hit."""
    from grounding_eval.verifier.liveness.result import Liveness, LivenessResult
    from grounding_eval.verifier.liveness.store import Cache

    path = tmp_path / "study" / ".cache" / "grounding-eval" / "liveness.sqlite"
    url = normalize_url(INVENTED_URL)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "sender" / ".cache"))
    Cache(path).put(url, LivenessResult(Liveness.LIVE, "HTTP 200", 200))
    assert Cache(path).get(url) is not None  # the sender's own row: a hit for the sender
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "receiver" / ".cache"))
    assert Cache(path).get(url) is None
    Cache(path).put(url, LivenessResult(Liveness.DEAD, "HTTP 404", 404))
    mine = Cache(path).get(url)
    assert mine is not None and mine.status is Liveness.DEAD
