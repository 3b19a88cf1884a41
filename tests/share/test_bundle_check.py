"""``grounding-eval share`` and ``bundle check``: a bundle verifies, and any tampering is refused in one line."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

import pytest
import yaml

from grounding_eval.cli import main
from grounding_eval.errors import clip
from grounding_eval.share.bundle import make_bundle
from grounding_eval.share.check import check_bundle
from grounding_eval.share.scaffold import scaffold


@pytest.fixture
def bundle(tmp_path: Path) -> Path:
    study = tmp_path / "study"
    scaffold(study, "1a", None, force=False)
    out = tmp_path / "bundle.tar.gz"
    make_bundle(study, out, results=[], redact=False)
    return out


def _members(path: Path) -> list[tuple[tarfile.TarInfo, bytes | None]]:
    with tarfile.open(path, "r:gz") as tar:
        return [(info, tar.extractfile(info).read() if info.isfile() else None) for info in tar]  # type: ignore[union-attr]


def _rewrite(
    src: Path, dst: Path, extra: list[tuple[tarfile.TarInfo, bytes | None]], change: str = ""
) -> Path:
    """Copy ``src`` to ``dst`` with ``change`` appended to that member and ``extra`` members added."""
    with tarfile.open(dst, "w:gz") as tar:
        for info, data in [*_members(src), *extra]:
            if data is not None and info.name == change:
                data += b"\n# edited\n"
                info.size = len(data)
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return dst


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


class TestCheck:
    def test_a_fresh_bundle_verifies(self, bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """Every member's hash matches; no version warning against the environment that made it."""
        code, out, err = _run(capsys, "bundle", "check", str(bundle))
        assert (code, err) == (0, "")
        manifest = json.loads(dict((i.name, d) for i, d in _members(bundle))["manifest.json"])  # type: ignore[arg-type]
        assert out.splitlines()[0].startswith(
            f"{bundle}: OK, {len(manifest['files'])} files match the manifest"
        )
        assert "warning" not in out
        assert {
            "study/promptfooconfig.yaml",
            "pack/rubrics/v3.yaml",
            "pack/rubrics/templates/judge.j2",
            "pack/schemas/query.schema.json",
            "study/package.json",
        } <= set(manifest["files"])
        assert manifest["promptfoo_pinned"] == "0.123.1" and manifest["packages"]["rapidfuzz"]
        v3 = next(r for r in manifest["rubrics"] if r.get("id") == "v3")
        assert v3["sha256"] == manifest["files"]["pack/rubrics/v3.yaml"]["sha256"]

    def test_tampered_file_refused(
        self, bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        bad = _rewrite(bundle, tmp_path / "bad.tar.gz", [], change="study/promptfooconfig.yaml")
        code, _, err = _run(capsys, "bundle", "check", str(bad))
        assert code == 2
        assert err == (
            f"grounding-eval: error: {bad}: member 'study/promptfooconfig.yaml': SHA-256 "
            f"{err.split('SHA-256 ')[1].split('…')[0]}… differs from the manifest's (tampered)\n"
        )

    @pytest.mark.parametrize(
        ("name", "kind", "problem"),
        [
            ("../evil.txt", tarfile.REGTYPE, "member '../evil.txt': path leaves the bundle ('..')"),
            (
                "study/../../evil.txt",
                tarfile.REGTYPE,
                "member 'study/../../evil.txt': path leaves the bundle ('..')",
            ),
            ("/etc/evil.txt", tarfile.REGTYPE, "member '/etc/evil.txt': absolute path"),
            (
                "study/link",
                tarfile.SYMTYPE,
                "member 'study/link': a link (to '/etc/passwd'); bundles hold files only",
            ),
            (
                "study/hard",
                tarfile.LNKTYPE,
                "member 'study/hard': a link (to '/etc/passwd'); bundles hold files only",
            ),
            ("study/fifo", tarfile.FIFOTYPE, "member 'study/fifo': not a regular file"),
        ],
        ids=["dotdot", "nested-dotdot", "absolute", "symlink", "hardlink", "fifo"],
    )
    def test_unsafe_member_refused(
        self,
        bundle: Path,
        tmp_path: Path,
        capsys: pytest.CaptureFixture[str],
        name: str,
        kind: bytes,
        problem: str,
    ) -> None:
        """Refused before any content is read, with one line naming the member."""
        info = tarfile.TarInfo(name)
        info.type = kind
        data: bytes | None = None
        if kind == tarfile.REGTYPE:
            data = b"x"
            info.size = 1
        else:
            info.linkname = "/etc/passwd"
        bad = _rewrite(bundle, tmp_path / "bad.tar.gz", [(info, data)])
        code, out, err = _run(capsys, "bundle", "check", str(bad))
        assert (code, out) == (2, "")
        assert err == f"grounding-eval: error: {bad}: {problem}\n"

    def test_unlisted_member_refused(self, bundle: Path, tmp_path: Path) -> None:
        info = tarfile.TarInfo("study/extra.txt")
        info.size = 1
        bad = _rewrite(bundle, tmp_path / "bad.tar.gz", [(info, b"x")])
        with pytest.raises(Exception, match=r"member 'study/extra.txt': not in the manifest"):
            check_bundle(bad)

    def test_missing_member_refused(self, bundle: Path, tmp_path: Path) -> None:
        dst = tmp_path / "bad.tar.gz"
        with tarfile.open(dst, "w:gz") as tar:
            for info, data in _members(bundle):
                if info.name != "study/generate.py":
                    tar.addfile(info, io.BytesIO(data or b""))
        with pytest.raises(
            Exception, match=r"member 'study/generate.py': listed in the manifest but missing"
        ):
            check_bundle(dst)

    def test_not_a_bundle(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        junk = tmp_path / "junk.tar.gz"
        junk.write_bytes(b"not a tar")
        code, _, err = _run(capsys, "bundle", "check", str(junk))
        assert code == 2 and err.startswith(f"grounding-eval: error: {junk}: not a readable tar.gz bundle")
        assert err.count("\n") == 1


class TestVersionWarnings:
    def _with_manifest(self, bundle: Path, dst: Path, edit: dict[str, object]) -> Path:
        """A bundle whose manifest says other versions (its hashes still match: a consistent bundle)."""
        with tarfile.open(dst, "w:gz") as tar:
            for info, data in _members(bundle):
                if info.name == "manifest.json":
                    manifest = json.loads(data or b"{}")
                    manifest.update(edit)
                    data = json.dumps(manifest).encode()
                    info.size = len(data)
                tar.addfile(info, io.BytesIO(data or b""))
        return dst

    def test_score_changing_versions_are_warned(
        self, bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        manifest = json.loads(dict((i.name, d) for i, d in _members(bundle))["manifest.json"])  # type: ignore[arg-type]
        packages = {
            **manifest["packages"],
            "rapidfuzz": "0.0.1",
            "phonenumbers": "0.0.2",
            "tldextract": "0.0.3",
        }
        rubrics = [dict(r, sha256="0" * 64) if r.get("id") == "v3" else r for r in manifest["rubrics"]]
        edited = self._with_manifest(
            bundle,
            tmp_path / "old.tar.gz",
            {
                "grounding_eval": "0.0.9",
                "promptfoo": "0.100.0",
                "packages": packages,
                "rubrics": rubrics,
            },
        )
        code, out, _ = _run(capsys, "bundle", "check", str(edited))
        assert code == 0
        warnings = [line for line in out.splitlines() if line.startswith("warning: ")]
        assert any(w.startswith("warning: grounding-eval: bundle 0.0.9, here ") for w in warnings)
        assert any(w.startswith("warning: rapidfuzz: bundle 0.0.1, here ") for w in warnings)
        assert any(w.startswith("warning: phonenumbers: bundle 0.0.2") for w in warnings)
        assert any(w.startswith("warning: tldextract: bundle 0.0.3") for w in warnings)
        assert any(w.startswith("warning: rubric v3@") and "differs" in w for w in warnings)
        # promptfoo "here" is what the current folder's node_modules holds (the repository's when run from it)
        assert len(warnings) in (5, 6)


class TestShare:
    def test_results_and_hashes(self, tmp_path: Path) -> None:
        study = tmp_path / "s"
        scaffold(study, "3", None, force=False)
        results = tmp_path / "r.json"
        results.write_text(json.dumps({"results": {"results": []}}))
        out = tmp_path / "b.tar.gz"
        manifest = make_bundle(study, out, results=[results], redact=False)
        members = dict((i.name, d) for i, d in _members(out))
        assert members["results/r.json"] == results.read_bytes()
        for name, entry in manifest["files"].items():
            assert hashlib.sha256(members[name] or b"").hexdigest() == entry["sha256"]

    def test_not_a_study(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        code, _, err = _run(capsys, "share", str(tmp_path), "-o", str(tmp_path / "b.tar.gz"))
        assert code == 2
        assert (
            err
            == f"grounding-eval: error: {tmp_path}: not a study folder (no promptfooconfig.yaml; make one with grounding-eval init)\n"
        )

    def test_study_skips_installed_and_private_folders(self, tmp_path: Path) -> None:
        study = tmp_path / "s"
        scaffold(study, "3", None, force=False)
        for folder in ("node_modules/promptfoo", ".promptfoo", ".cache/grounding-eval", "results"):
            (study / folder).mkdir(parents=True)
            (study / folder / "x.json").write_text("{}")
        (study / "elsewhere").symlink_to("/etc")
        manifest = make_bundle(study, tmp_path / "b.tar.gz", results=[], redact=False)
        assert not [n for n in manifest["files"] if "x.json" in n or "elsewhere" in n]


class TestEnv:
    def test_keys_and_local_python_never_reach_the_bundle(self, tmp_path: Path) -> None:
        """Only the machine-independent promptfoo settings of .env are shared; the rest by name only."""
        study = tmp_path / "s"
        scaffold(study, "3", None, force=False)
        with (study / ".env").open("a") as env:
            env.write("OPENAI_API_KEY=sk-proj-abcdefghijklmnop1234\nexport ANTHROPIC_API_KEY=sk-ant-zyx987\n")
        out = tmp_path / "b.tar.gz"
        manifest = make_bundle(study, out, results=[], redact=False)
        shared = dict((i.name, d) for i, d in _members(out))["study/.env"] or b""
        assert b"sk-proj-abcdefghijklmnop1234" not in shared and b"sk-ant-zyx987" not in shared
        assert b"PROMPTFOO_DISABLE_TELEMETRY=1" in shared and b"PROMPTFOO_PYTHON" not in shared
        assert manifest["env_dropped"] == ["PROMPTFOO_PYTHON", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"]
        assert check_bundle(out).files == len(manifest["files"])  # the filtered file is what is hashed


def test_rubric_provenance_in_the_manifest(bundle: Path) -> None:
    manifest = json.loads(dict((i.name, d) for i, d in _members(bundle))["manifest.json"])  # type: ignore[arg-type]
    round3 = next(r for r in manifest["rubrics"] if r.get("id") == "round3")
    assert set(round3["provenance"]) <= {"methods-document", "grounding-eval"}
    assert round3["provenance"]["methods-document"] > 0 and round3["provenance"]["grounding-eval"] > 0
    assert round3["source"] and round3["version"] and round3["prompt_version"]


def test_a_bundle_inside_the_study_is_not_shared_again(tmp_path: Path) -> None:
    study = tmp_path / "s"
    scaffold(study, "3", None, force=False)
    out = study / "study.tar.gz"
    make_bundle(study, out, results=[], redact=False)
    manifest = make_bundle(study, out, results=[], redact=False)
    assert "study/study.tar.gz" not in manifest["files"]
    assert check_bundle(out).files == len(manifest["files"])


class TestData:
    def _dataset(self, tmp_path: Path) -> Path:
        import shutil

        from grounding_eval.resources import pack_root

        data = tmp_path / "my-data"
        shutil.copytree(pack_root() / "datasets" / "sample", data)
        return data

    def test_a_valid_dataset_is_shared_whole_or_by_hash(self, tmp_path: Path) -> None:
        study, data = tmp_path / "s", self._dataset(tmp_path)
        scaffold(study, "3", data, force=False)
        plain = make_bundle(study, tmp_path / "a.tar.gz", results=[], redact=False, dataset=data)
        assert (
            plain["files"]["data/my-data/high_risk.jsonl"]["sha256"]
            == hashlib.sha256((data / "high_risk.jsonl").read_bytes()).hexdigest()
        )
        redacted = make_bundle(study, tmp_path / "b.tar.gz", results=[], redact=True, dataset=data)
        assert not [n for n in redacted["files"] if n.startswith("data/")]
        assert (
            redacted["dataset_file_hashes"]["data/my-data/high_risk.jsonl"]
            == (plain["files"]["data/my-data/high_risk.jsonl"]["sha256"])
        )

    def test_an_invalid_dataset_is_refused(self, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        study, data = tmp_path / "s", self._dataset(tmp_path)
        scaffold(study, "3", None, force=False)
        line = len((data / "queries.jsonl").read_text().splitlines()) + 1
        with (data / "queries.jsonl").open("a") as queries:
            queries.write('{"id": ""}\n')
        code, _, err = _run(
            capsys, "share", str(study), "-o", str(tmp_path / "b.tar.gz"), "--data", str(data)
        )
        assert code == 2
        assert (
            err
            == f"grounding-eval: error: {data}/queries.jsonl: line {line}: field 'id': must be non-empty text\n"
        )
        assert not (tmp_path / "b.tar.gz").exists()


class TestSeveralResults:
    """``share --results A --results B`` shares both, each redacted, under distinct names; ``bundle check``
    verifies both."""

    FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "share" / "round3_outside_dataset.json"

    def _two(self, tmp_path: Path) -> tuple[Path, Path, Path]:
        study = tmp_path / "study"
        scaffold(study, "3", None, force=False)
        document = json.loads(self.FIXTURE.read_text(encoding="utf-8"))
        first, second = tmp_path / "a" / "results.json", tmp_path / "b" / "results.json"
        first.parent.mkdir()
        second.parent.mkdir()
        first.write_text(json.dumps(document), encoding="utf-8")
        document["results"]["results"] = document["results"]["results"][:2]  # a different run: 2 rows
        second.write_text(json.dumps(document), encoding="utf-8")
        return study, first, second

    @pytest.mark.parametrize("redact", [True, False], ids=["redacted", "plain"])
    def test_both_are_shared_and_checked(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str], redact: bool
    ) -> None:
        from grounding_eval.share.redact import redact_results

        study, first, second = self._two(tmp_path)
        out = tmp_path / "bundle.tar.gz"
        argv = ["share", str(study), "-o", str(out), "--results", str(first), "--results", str(second)]
        code, _, err = _run(capsys, *argv, *(["--redact"] if redact else []))
        assert (code, err) == (0, "" if redact else _verbatim(out, 5))
        members = {info.name: data for info, data in _members(out)}
        for name, source, rows in (("results/results.json", first, 3), ("results/results-2.json", second, 2)):
            shared = json.loads(members[name])  # type: ignore[arg-type]
            assert len(shared["results"]["results"]) == rows
            original = json.loads(source.read_text(encoding="utf-8"))
            assert [(r["testIdx"], r["promptIdx"], r["score"], r["namedScores"]) for r in shared["results"]["results"]] == [
                (r["testIdx"], r["promptIdx"], r["score"], r["namedScores"]) for r in original["results"]["results"]
            ]  # fmt: skip
            if redact:
                assert shared == redact_results(shared)[0] != original  # redacted, as bundle check requires
                question = original["results"]["results"][0]["vars"]["question"]
                assert question not in members[name].decode()  # type: ignore[union-attr]
            else:
                assert members[name] == source.read_bytes()
        manifest = json.loads(members["manifest.json"])  # type: ignore[arg-type]
        assert {"results/results.json", "results/results-2.json"} <= set(manifest["files"])
        code, checked, err = _run(capsys, "bundle", "check", str(out))
        assert (code, err) == (0, "")
        assert checked.startswith(f"{out}: OK, {len(manifest['files'])} files match the manifest")

    def test_the_same_file_twice_is_shared_once(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        study, first, _ = self._two(tmp_path)
        out = tmp_path / "bundle.tar.gz"
        code, _, err = _run(capsys, "share", str(study), "-o", str(out), "--results", str(first), str(first))
        assert (code, err) == (0, _verbatim(out, 3))  # its rows counted once too
        names = [info.name for info, _ in _members(out)]
        assert [n for n in names if n.startswith("results/")] == ["results/results.json"]


def _verbatim(bundle: Path, rows: int) -> str:
    """The warning a share without --redact gives when it packs High-Risk rows as they are."""
    return (f"grounding-eval: warning: {bundle} holds {rows} High-Risk rows verbatim (the person's question "
            "and the answer); share with --redact to replace them with hashes\n")  # fmt: skip


def _forged(src: Path, dst: Path, edits: dict[str, bytes | None]) -> Path:
    """``src`` as someone who rewrites the manifest would forge it: each named member replaced (``None``:
    removed) or added, and the manifest's hashes made to match, so only what a member *is* can refuse it."""
    members = {i.name: d for i, d in _members(src) if d is not None}
    members.update({k: v for k, v in edits.items() if v is not None})
    for name in [k for k, v in edits.items() if v is None]:
        members.pop(name, None)
    manifest = json.loads(members.pop("manifest.json"))
    manifest["files"] = {
        n: {"sha256": hashlib.sha256(d).hexdigest(), "size": len(d)} for n, d in members.items()
    }
    with tarfile.open(dst, "w:gz") as tar:
        for name, data in [("manifest.json", json.dumps(manifest).encode()), *sorted(members.items())]:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return dst


class TestReceivedStudy:
    """A bundle is someone else's study: what could decide a verdict or run code is refused or listed
    (issue 39). Each bundle here has a manifest that matches its members."""

    @pytest.mark.parametrize(
        "member",
        ["study/.cache/grounding-eval/allowlist-0123456789abcdef0123456789abcdef01234567.json",
         "study/node_modules/promptfoo/package.json", "study/.promptfoo/cache/cache.json",
         "study/.Cache/grounding-eval/secret", "study/.PROMPTFOO/promptfoo.db", "study/Node_Modules/x.json"],
    )  # fmt: skip
    def test_caches_packages_and_promptfoos_database_are_refused(
        self, bundle: Path, tmp_path: Path, member: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        bad = _forged(bundle, tmp_path / "bad.tar.gz", {member: b'{"format": 1, "key": "k", "value": []}'})
        code, out, err = _run(capsys, "bundle", "check", str(bad))
        folder = next(
            p for p in member.casefold().split("/") if p in (".cache", "node_modules", ".promptfoo")
        )
        assert (code, out) == (2, "")
        assert err.startswith(
            f"grounding-eval: error: {bad}: member {clip(member)}: under {folder}/, which share "
        )
        assert err.count("\n") == 1

    @pytest.mark.parametrize("entry", ["study/assertions/grounding.cjs", "study/assertions/verifier.py",
                                       "study/providers/replay.py"])  # fmt: skip
    def test_an_entry_file_that_differs_from_the_pack_is_refused(
        self, bundle: Path, tmp_path: Path, entry: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        original = dict((i.name, d) for i, d in _members(bundle))[entry]
        assert original is not None
        edited = original + b"\n// a verdict of the sender's\n"
        bad = _forged(bundle, tmp_path / "bad.tar.gz", {entry: edited})
        code, _, err = _run(capsys, "bundle", "check", str(bad))
        relative = entry.removeprefix("study/")
        assert (code, err) == (2, f"grounding-eval: error: {bad}: member '{entry}': differs from the installed "
                               f"grounding-eval's {relative} (edited, or written by another version): a study "
                               "runs the pack's entry code, never its own under the pack's name\n")  # fmt: skip

    def test_endpoints_and_code_the_configs_name_are_listed(
        self, bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """A config naming its own judge endpoint, an http provider, a Python grader, an exec: provider and
        an inline JavaScript check: each listed in one line; the pack's own entries, the official API hosts
        and data references (prompts) are not."""
        config = yaml.safe_load(
            dict((i.name, d) for i, d in _members(bundle))["study/promptfooconfig.yaml"] or b""
        )
        judge = next(a for a in config["defaultTest"]["assert"] if a["value"].endswith(":judge"))
        judge["config"]["base_url"] = "http://127.0.0.1:8765/v1"
        config["providers"] += [
            {
                "id": "https://models.sender.example/v1/chat",
                "config": {"url": "https://models.sender.example/x"},
            },
            {"id": "openai:chat:gpt-4o-mini", "config": {"apiBaseUrl": "https://api.openai.com/v1"}},
            "exec: ./answer.sh",
        ]
        config["defaultTest"]["assert"] += [
            {"type": "python", "value": "file://graders/mine.py:get_assert"},
            {"type": "javascript", "value": "output.length > 0"},
        ]
        forged = _forged(
            bundle, tmp_path / "f.tar.gz", {"study/promptfooconfig.yaml": yaml.safe_dump(config).encode()}
        )
        code, out, err = _run(capsys, "bundle", "check", str(forged))
        assert (code, err) == (0, "")
        listed = [line for line in out.splitlines() if line.startswith(("endpoint:", "code:"))]
        where = "study/promptfooconfig.yaml"
        n = len(config["defaultTest"]["assert"])
        judge_at = config["defaultTest"]["assert"].index(judge)
        providers = len(config["providers"])
        assert listed == [
            f"endpoint: {where}: defaultTest.assert[{judge_at}].config.base_url = 'http://127.0.0.1:8765/v1' (not a model provider's API host)",
            f"code: {where}: defaultTest.assert[{n - 2}].value = 'file://graders/mine.py:get_assert'",
            f"code: {where}: defaultTest.assert[{n - 1}].value: an inline javascript assertion",
            f"endpoint: {where}: providers[{providers - 3}].config.url = 'https://models.sender.example/x' (not a model provider's API host)",
            f"endpoint: {where}: providers[{providers - 3}].id = 'https://models.sender.example/v1/chat' (a URL as a provider, not a model provider's API host)",
            f"code: {where}: providers[{providers - 1}] = 'exec: ./answer.sh'",
        ]

    def test_a_fresh_bundle_lists_nothing(self, bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
        """init's study names the pack's entries, its generator and its prompts only."""
        code, out, err = _run(capsys, "bundle", "check", str(bundle))
        assert (code, err) == (0, "") and len(out.splitlines()) == 1, out

    def test_an_edited_generator_is_refused(
        self, bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        generator = dict((i.name, d) for i, d in _members(bundle))["study/generate.py"] or b""
        forged = _forged(bundle, tmp_path / "f.tar.gz", {"study/generate.py": generator + b"\nimport os\n"})
        code, out, err = _run(capsys, "bundle", "check", str(forged))
        assert (code, out) == (2, "")
        assert err == (f"grounding-eval: error: {forged}: member 'study/generate.py': differs from every "
                       "generate.py grounding-eval init writes (edited, or written by another version): "
                       "promptfoo would run it, with the study folder on sys.path\n")  # fmt: skip

    @pytest.mark.parametrize(
        "member",
        ["study/grounding_eval/__init__.py", "study/yaml.py", "study/sitecustomize.pyc", "study/x.pth",
         "study/lib/helper.mjs", "study/evil.py", "pack/rubrics/hook.js", "study/Generate.PY.js"],
    )  # fmt: skip
    def test_a_code_file_the_pack_does_not_write_is_refused(
        self, bundle: Path, tmp_path: Path, member: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """Unreferenced, it still runs: Python puts the study folder on sys.path for a generator and a
        ``type: python`` entry, so ``yaml.py`` or ``grounding_eval/`` there replaces the library or the pack."""
        forged = _forged(bundle, tmp_path / "f.tar.gz", {member: b"import os\n"})
        code, out, err = _run(capsys, "bundle", "check", str(forged))
        assert (code, out) == (2, "")
        assert err.startswith(f"grounding-eval: error: {forged}: member {clip(member)}: a code file the pack "
                              "does not write: ") and err.count("\n") == 1  # fmt: skip

    @pytest.mark.parametrize("member", ["study/assertions/yaml.py", "study/assertions/notes.txt",
                                        "study/providers/openai.py", "study/Providers/extra.txt"])  # fmt: skip
    def test_any_other_file_in_assertions_or_providers_is_refused(
        self, bundle: Path, tmp_path: Path, member: str, capsys: pytest.CaptureFixture[str]
    ) -> None:
        forged = _forged(bundle, tmp_path / "f.tar.gz", {member: b"x = 1\n"})
        code, out, err = _run(capsys, "bundle", "check", str(forged))
        assert (code, out) == (2, "")
        assert err.startswith(f"grounding-eval: error: {forged}: member {clip(member)}: not one of the pack's "
                              "entry files, yet in the study's ") and err.count("\n") == 1  # fmt: skip

    def test_share_refuses_a_study_holding_code_of_its_own(
        self, tmp_path: Path, capsys: pytest.CaptureFixture[str]
    ) -> None:
        """What bundle check would refuse, share does not write (the reviewer's planted package)."""
        study = tmp_path / "study"
        scaffold(study, "1a", None, force=False)
        (study / "grounding_eval").mkdir()
        (study / "grounding_eval" / "__init__.py").write_text("import os\n")
        code, _, err = _run(capsys, "share", str(study), "-o", str(tmp_path / "b.tar.gz"))
        assert code == 2 and not (tmp_path / "b.tar.gz").exists()
        assert err.startswith(
            f"grounding-eval: error: {study / 'grounding_eval' / '__init__.py'}: a code file "
        )


@pytest.mark.parametrize(
    "line",
    ["PROMPTFOO_CACHE_PATH=./planted", "PROMPTFOO_CONFIG_DIR=./results", "PROMPTFOO_DISABLE_TELEMETRY=0",
     "PROMPTFOO_DISABLE_SHARING=false"],
)  # fmt: skip
def test_a_shareable_setting_with_another_value_is_refused(
    bundle: Path, tmp_path: Path, line: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A received .env may only carry init's values: another would point promptfoo's database or response
    cache at a folder the sender planted, or turn telemetry on."""
    env = dict((i.name, d) for i, d in _members(bundle))["study/.env"] or b""
    forged = _forged(bundle, tmp_path / "f.tar.gz", {"study/.env": env + line.encode() + b"\n"})
    code, out, err = _run(capsys, "bundle", "check", str(forged))
    name, value = line.split("=")
    assert (code, out) == (2, "")
    assert "member 'study/.env': line " in err and f"sets {name} to {clip(value)}, not " in err


def test_share_keeps_only_inits_values(tmp_path: Path) -> None:
    study = tmp_path / "study"
    scaffold(study, "1a", None, force=False)
    env = (study / ".env").read_text().replace("./.promptfoo/cache", "./planted")
    (study / ".env").write_text(env + "PROMPTFOO_DISABLE_TELEMETRY=0\n")
    (study / ".Cache").mkdir()
    (study / ".Cache" / "entry.json").write_text("{}")
    manifest = make_bundle(study, tmp_path / "b.tar.gz", results=[], redact=False)
    shared = dict((i.name, d) for i, d in _members(tmp_path / "b.tar.gz"))
    assert b"PROMPTFOO_CACHE_PATH" not in (shared["study/.env"] or b"")
    assert b"PROMPTFOO_DISABLE_TELEMETRY=1" in (shared["study/.env"] or b"")
    assert {"PROMPTFOO_CACHE_PATH", "PROMPTFOO_DISABLE_TELEMETRY"} <= set(manifest["env_dropped"])
    assert not any(n.casefold().startswith("study/.cache/") for n in shared)
    assert check_bundle(tmp_path / "b.tar.gz").files == len(manifest["files"])


@pytest.mark.parametrize(
    ("where", "reference", "listed"),
    [
        ("assert", "file://evil.py:x/../assertions/grounding.cjs:verifier", True),  # promptfoo runs evil.py
        ("assert", "file://assertions/grounding.cjs:verifier", False),
        ("scoring", "file://evil.py:x/../assertions/grounding.cjs:round1", False),  # cut at the last ':'
        ("scoring", "file://assertions/grounding.cjs:round1", False),
    ],
)
def test_a_reference_is_cut_where_promptfoo_cuts_it(
    bundle: Path, tmp_path: Path, where: str, reference: str, listed: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    """An assertion's ``file://path:function`` is cut at the first ':' by promptfoo 0.123.1 (runAssertion),
    a scoring function's at the last (parseFileUrl): the reviewer's ``evil.py:x/../assertions/…`` ran
    ``evil.py`` in every row while bundle check read it as the pack's entry."""
    config = yaml.safe_load(
        dict((i.name, d) for i, d in _members(bundle))["study/promptfooconfig.yaml"] or b""
    )
    if where == "assert":
        config["defaultTest"]["assert"].append({"type": "python", "value": reference})
    else:
        config["defaultTest"]["assertScoringFunction"] = reference
    forged = _forged(
        bundle, tmp_path / "f.tar.gz", {"study/promptfooconfig.yaml": yaml.safe_dump(config).encode()}
    )
    code, out, err = _run(capsys, "bundle", "check", str(forged))
    assert (code, err) == (0, "")
    assert any(reference[:60] in line for line in out.splitlines() if line.startswith("code:")) == listed, out


@pytest.mark.parametrize(
    ("member", "edit"),
    [("study/package.json", b'{"devDependencies": {"promptfoo": "npm:promptfoo-evil-fork@0.123.1"}}\n'),
     ("study/.npmrc", b"node-options=--require=./x.cjs\n"), ("study/.NPMRC", b"ignore-scripts=false\n")],
)  # fmt: skip
def test_a_package_json_or_npmrc_that_init_did_not_write_is_refused(
    bundle: Path, tmp_path: Path, member: str, edit: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    """npm reads them: another promptfoo (the reviewer's fork), an install script, a Node preload."""
    forged = _forged(bundle, tmp_path / "f.tar.gz", {member: edit})
    code, out, err = _run(capsys, "bundle", "check", str(forged))
    assert (code, out) == (2, "")
    assert err == (f"grounding-eval: error: {forged}: member {clip(member)}: differs from the "
                   f"{member.casefold().removeprefix('study/')} grounding-eval init writes (edited, or written "
                   "by another version): npm and npx would read the sender's (another promptfoo, an install "
                   "script, a preload)\n")  # fmt: skip


# A lockfile whose `resolved` URL points promptfoo at the sender's host: `npm install --ignore-scripts`, the
# README's next step, fetches it from there (the review's reproduction saw npm ask 127.0.0.1 for it).
_LOCK = json.dumps({
    "name": "grounding-eval-study", "lockfileVersion": 3, "requires": True,
    "packages": {"node_modules/promptfoo": {"version": "0.123.1",
                                            "resolved": "http://127.0.0.1:9/promptfoo-0.123.1.tgz"}},
}).encode()  # fmt: skip


@pytest.mark.parametrize(
    ("member", "data"),
    [("study/package-lock.json", _LOCK), ("study/npm-shrinkwrap.json", _LOCK), ("study/Package-Lock.JSON", _LOCK),
     ("study/.yarnrc.yml", b"npmRegistryServer: http://127.0.0.1:9\n"), ("study/.yarnrc", b"registry x\n"),
     ("study/yarn.lock", b"# yarn lockfile v1\n"), ("study/pnpm-lock.yaml", b"lockfileVersion: '9.0'\n"),
     ("study/bun.lock", b"{}\n"), ("study/bun.lockb", b"\0"), ("study/.pnpmfile.cjs", b"module.exports = {}\n"),
     (".npmrc", b"registry=http://127.0.0.1:9/\n"), ("data/x/.npmrc", b"registry=http://127.0.0.1:9/\n"),
     ("study/prompts/.npmrc", b"registry=http://127.0.0.1:9/\n"), ("pack/package-lock.json", _LOCK)],
)  # fmt: skip
def test_a_lockfile_or_package_manager_setting_is_refused(
    bundle: Path, tmp_path: Path, member: str, data: bytes, capsys: pytest.CaptureFixture[str]
) -> None:
    """init writes no lockfile and one .npmrc (study/.npmrc, checked against its template): anything else
    a package manager reads would decide where promptfoo comes from. Refused before it is read, naming it."""
    forged = _forged(bundle, tmp_path / "f.tar.gz", {member: data})
    code, out, err = _run(capsys, "bundle", "check", str(forged))
    assert (code, out) == (2, "")
    assert err == (f"grounding-eval: error: {forged}: member {clip(member)}: a package manager's lockfile "
                   "or settings, which init does not write: npm, yarn or pnpm would read it and could fetch "
                   "promptfoo from the sender's host (share leaves such files out)\n")  # fmt: skip


def test_share_leaves_lockfiles_and_package_manager_settings_out(tmp_path: Path) -> None:
    """A study where `npm install` ran holds a package-lock.json: share leaves it out (and any other
    lockfile or package manager setting, in the study or the dataset), names it in the manifest, and the
    bundle verifies — share never writes what bundle check refuses."""
    from grounding_eval.resources import pack_root

    study = tmp_path / "study"
    scaffold(study, "1a", None, force=False)
    (study / "package-lock.json").write_bytes(_LOCK)
    (study / ".yarnrc.yml").write_bytes(b"npmRegistryServer: http://127.0.0.1:9\n")
    (study / "prompts" / ".npmrc").parent.mkdir(exist_ok=True)
    (study / "prompts" / ".npmrc").write_bytes(b"registry=http://127.0.0.1:9/\n")
    dataset = tmp_path / "sample"
    import shutil

    shutil.copytree(Path(pack_root()) / "datasets" / "sample", dataset)
    (dataset / ".npmrc").write_bytes(b"registry=http://127.0.0.1:9/\n")
    out = tmp_path / "b.tar.gz"
    manifest = make_bundle(study, out, results=[], redact=False, dataset=dataset)
    assert manifest["package_files_dropped"] == [
        "study/.yarnrc.yml", "study/package-lock.json", "study/prompts/.npmrc", "data/sample/.npmrc"
    ]  # fmt: skip
    names = {i.name for i, _ in _members(out)}
    assert "study/.npmrc" in names
    assert not names & set(manifest["package_files_dropped"])
    assert check_bundle(out).files == len(manifest["files"])


def test_init_writes_the_packs_npmrc_and_a_bundle_carries_it(bundle: Path) -> None:
    """The study's .npmrc is the pack's (the telemetry preload), byte for byte, and it verifies."""
    from grounding_eval.resources import pack_root

    shared = dict((i.name, d) for i, d in _members(bundle))
    template = Path(__file__).resolve().parents[2] / "grounding_eval" / "share" / "templates" / "npmrc"
    assert shared["study/.npmrc"] == template.read_bytes()
    assert b"r.promptfoo.app" in template.read_bytes()
    own = Path(pack_root()) / ".npmrc"
    if own.is_file():  # in a checkout: the repository's own .npmrc is the template
        assert own.read_bytes() == template.read_bytes()
    assert check_bundle(bundle).files == len(json.loads(shared["manifest.json"] or b"")["files"])


def test_endpoints_named_in_an_env_block_are_listed(
    bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """promptfoo's providers read OPENAI_BASE_URL and the like from a config's ``env:``: the reviewer's
    study sent the partner's key to 127.0.0.1 through it, and nothing was listed."""
    config = yaml.safe_load(
        dict((i.name, d) for i, d in _members(bundle))["study/promptfooconfig.yaml"] or b""
    )
    config["env"] = {"OPENAI_BASE_URL": "http://127.0.0.1:8765/v1", "ANTHROPIC_BASE_URL": "http://evil.example",
                     "AZURE_OPENAI_API_HOST": "proxy.sender.example", "OPENAI_API_BASE_URL": "https://api.openai.com/v1",
                     "MY_ENDPOINT": "https://x.sender.example", "OPENAI_API_KEY_NAME": "not an endpoint"}  # fmt: skip
    forged = _forged(
        bundle, tmp_path / "f.tar.gz", {"study/promptfooconfig.yaml": yaml.safe_dump(config).encode()}
    )
    code, out, err = _run(capsys, "bundle", "check", str(forged))
    assert (code, err) == (0, "")
    listed = sorted(line.split(" = ")[0] for line in out.splitlines() if line.startswith("endpoint:"))
    assert listed == [f"endpoint: study/promptfooconfig.yaml: env.{k}" for k in
                      ("ANTHROPIC_BASE_URL", "AZURE_OPENAI_API_HOST", "MY_ENDPOINT", "OPENAI_BASE_URL")]  # fmt: skip


def test_inline_javascript_a_config_runs_is_listed(
    bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """promptfoo runs a ``transform`` string as JavaScript: code of the sender's, so it is listed."""
    config = yaml.safe_load(
        dict((i.name, d) for i, d in _members(bundle))["study/promptfooconfig.yaml"] or b""
    )
    config["defaultTest"]["options"] = {"transform": "require('child_process').execSync('id') && output"}
    config["providers"][0]["transformResponse"] = "file://assertions/grounding.cjs:verifier"
    forged = _forged(
        bundle, tmp_path / "f.tar.gz", {"study/promptfooconfig.yaml": yaml.safe_dump(config).encode()}
    )
    code, out, err = _run(capsys, "bundle", "check", str(forged))
    assert (code, err) == (0, "")
    listed = [line for line in out.splitlines() if line.startswith("code:")]
    assert listed == ["code: study/promptfooconfig.yaml: defaultTest.options.transform: inline JavaScript "
                      f"({clip(config['defaultTest']['options']['transform'], 60)})"]  # fmt: skip


@pytest.mark.parametrize(
    ("line", "what"),
    [("OPENAI_BASE_URL=http://127.0.0.1:8765/v1", "an endpoint setting"),
     ("ANTHROPIC_BASE_URL=https://relay.sender.example", "an endpoint setting"),
     ("export HTTPS_PROXY=http://proxy.sender.example:3128", "an endpoint setting"),
     ("NODE_TLS_REJECT_UNAUTHORIZED=0", "an endpoint setting"),
     ("SENDER_API_KEY=placeholder", "a key")],
)  # fmt: skip
def test_a_studys_env_naming_an_endpoint_or_a_key_is_refused_by_name(
    bundle: Path, tmp_path: Path, line: str, what: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A received study/.env that would choose where the judge's key goes (or carries a key) is refused,
    the line saying which setting and why (issue 39: promptfoo reads the folder's .env)."""
    env = dict((i.name, d) for i, d in _members(bundle))["study/.env"] or b""
    forged = _forged(bundle, tmp_path / "f.tar.gz", {"study/.env": env + line.encode() + b"\n"})
    code, out, err = _run(capsys, "bundle", "check", str(forged))
    name = line.removeprefix("export ").split("=")[0]
    assert (code, out) == (2, "")
    number = len(env.decode().splitlines()) + 1
    assert f"member 'study/.env': line {number} sets {name}, {what}" in err, err
    assert err.count("\n") == 1


def test_another_env_file_is_refused(
    bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    forged = _forged(
        bundle, tmp_path / "f.tar.gz", {"study/.env.local": b"OPENAI_BASE_URL=http://127.0.0.1:1/v1\n"}
    )
    code, _, err = _run(capsys, "bundle", "check", str(forged))
    assert code == 2 and "member 'study/.env.local': a .env.local file: only the rebuilt study/.env" in err


def test_every_remote_call_a_config_makes_is_listed(
    bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """webhook: provider ids, URL provider ids (in providers, targets, a grader, an assertion's provider) and
    webhook assertions post prompts or outputs to a host: each listed whatever the host (issue 39)."""
    config = yaml.safe_load(
        dict((i.name, d) for i, d in _members(bundle))["study/promptfooconfig.yaml"] or b""
    )
    config["providers"] += ["webhook:https://hooks.sender.example/answer"]
    config["targets"] = ["wss://socket.sender.example/chat"]
    config["defaultTest"]["options"] = {"provider": "https://api.openai.com/v1/chat/completions"}
    config["defaultTest"]["assert"] += [
        {"type": "webhook", "value": "https://hooks.sender.example/grade"},
        {"type": "llm-rubric", "value": "is polite", "provider": "webhook:https://api.anthropic.com/x"},
    ]
    forged = _forged(
        bundle, tmp_path / "f.tar.gz", {"study/promptfooconfig.yaml": yaml.safe_dump(config).encode()}
    )
    code, out, err = _run(capsys, "bundle", "check", str(forged))
    assert (code, err) == (0, "")
    listed = sorted(line for line in out.splitlines() if line.startswith("endpoint:"))
    where = "endpoint: study/promptfooconfig.yaml"
    n, p = len(config["defaultTest"]["assert"]), len(config["providers"])
    assert listed == sorted([
        f"{where}: defaultTest.assert[{n - 2}].value = 'https://hooks.sender.example/grade' (a webhook assertion: "
        "promptfoo posts each output to it)",
        f"{where}: defaultTest.assert[{n - 1}].provider = 'webhook:https://api.anthropic.com/x' (a webhook "
        "provider: promptfoo posts to it)",
        f"{where}: defaultTest.options.provider = 'https://api.openai.com/v1/chat/completions' (a URL as a provider)",
        f"{where}: providers[{p - 1}] = 'webhook:https://hooks.sender.example/answer' (a webhook provider: promptfoo "
        "posts to it, not a model provider's API host)",
        f"{where}: targets[0] = 'wss://socket.sender.example/chat' (a URL as a provider, not a model provider's API "
        "host)",
    ])  # fmt: skip


def test_paths_a_config_has_the_pack_write_outside_the_study_are_listed(
    bundle: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """audit_dir, review_queue, cache_dir… absolute or climbing out with '..' are listed (refused when run,
    grounding_eval/promptfoo/written_paths.py); one inside the study is not."""
    config = yaml.safe_load(
        dict((i.name, d) for i, d in _members(bundle))["study/promptfooconfig.yaml"] or b""
    )
    judge = next(a for a in config["defaultTest"]["assert"] if a["value"].endswith(":judge"))
    judge["config"].update({"audit_dir": "/home/partner/.config/autostart", "review_queue": "../../q.jsonl",
                            "cache_dir": "results/judge-cache", "human_queue": "~/h.jsonl"})  # fmt: skip
    forged = _forged(
        bundle, tmp_path / "f.tar.gz", {"study/promptfooconfig.yaml": yaml.safe_dump(config).encode()}
    )
    code, out, err = _run(capsys, "bundle", "check", str(forged))
    assert (code, err) == (0, "")
    at = f"path: study/promptfooconfig.yaml: defaultTest.assert[{config['defaultTest']['assert'].index(judge)}].config"
    tail = (
        "(a file the pack writes, outside the study folder: refused when run, unless you list its folder in "
    )
    assert sorted(line for line in out.splitlines() if line.startswith("path:")) == [
        f"{at}.audit_dir = '/home/partner/.config/autostart' {tail}$GROUNDING_EVAL_WRITE_DIRS)",
        f"{at}.human_queue = '~/h.jsonl' {tail}$GROUNDING_EVAL_WRITE_DIRS)",
        f"{at}.review_queue = '../../q.jsonl' {tail}$GROUNDING_EVAL_WRITE_DIRS)",
    ]
