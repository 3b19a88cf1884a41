"""The compiled-resource cache: the same allowlist and directory as parsing the files, never a stale one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from grounding_eval.errors import DataError
from grounding_eval.user_cache import seal
from grounding_eval.verifier import resource_cache
from grounding_eval.verifier.allowlist import load_allowlist
from grounding_eval.verifier.directory import Directory, load_directory
from grounding_eval.verifier.setup import load_resources

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "verifier"
TEXT = "Call Legal Aid Chicago at (312) 341-1070 or https://www.legalaidchicago.org; LANWT serves Texas."


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    """Copies of the fixture allowlist and directory, free to edit."""
    allowlist = tmp_path / "allowlist.txt"
    orgs = tmp_path / "orgs.yaml"
    allowlist.write_bytes((FIXTURES / "allowlist.txt").read_bytes())
    orgs.write_bytes((FIXTURES / "orgs.yaml").read_bytes())
    return allowlist, orgs


def _same_directory(a: Directory, b: Directory) -> None:
    assert a.path == b.path
    assert a.organizations == b.organizations
    assert a._by_phone == b._by_phone
    assert a._by_domain == b._by_domain
    assert a.find_mentions(TEXT) == b.find_mentions(TEXT)


def _loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Record every real parse of a file the cache does."""
    calls: list[str] = []
    real_directory, real_allowlist = resource_cache.load_directory, resource_cache.load_allowlist

    def directory(path: Path) -> Directory:
        calls.append("directory")
        return real_directory(path)

    def allowlist(path: Path) -> object:
        calls.append("allowlist")
        return real_allowlist(path)

    monkeypatch.setattr(resource_cache, "load_directory", directory)
    monkeypatch.setattr(resource_cache, "load_allowlist", allowlist)
    return calls


class TestCachedResources:
    """A cached load equals a parse of the file, and is used only for the same file and rules."""

    def test_same_as_parsing(self, files: tuple[Path, Path], tmp_path: Path) -> None:
        """First load (a parse) and second load (from the cache) both equal the plain loaders."""
        allowlist, orgs = files
        for _ in range(2):
            _same_directory(resource_cache.cached_directory(orgs, tmp_path / "cache"), load_directory(orgs))
            assert resource_cache.cached_allowlist(allowlist, tmp_path / "cache") == load_allowlist(allowlist)

    def test_second_load_reads_the_cache(
        self, files: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """The files are parsed once; the next loads come from the cache."""
        calls = _loads(monkeypatch)
        allowlist, orgs = files
        for _ in range(3):
            load_resources(allowlist=allowlist, orgs=orgs, cache_dir=tmp_path / "cache")
        assert calls == ["allowlist", "directory"]

    def test_edited_directory_is_parsed_again(
        self, files: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Editing the directory file changes the key: the cache is not used, the edit is seen."""
        calls = _loads(monkeypatch)
        _, orgs = files
        cache = tmp_path / "cache"
        before = resource_cache.cached_directory(orgs, cache)
        orgs.write_text(
            orgs.read_text(encoding="utf-8") + "\n- name: Brand New Legal Aid\n  states: [TX]\n",
            encoding="utf-8",
        )
        after = resource_cache.cached_directory(orgs, cache)
        assert calls == ["directory", "directory"]
        assert after.by_name("Brand New Legal Aid") is not None
        assert before.by_name("Brand New Legal Aid") is None
        _same_directory(after, load_directory(orgs))

    def test_edited_allowlist_is_parsed_again(self, files: tuple[Path, Path], tmp_path: Path) -> None:
        """The same for the allowlist."""
        allowlist, _ = files
        cache = tmp_path / "cache"
        resource_cache.cached_allowlist(allowlist, cache)
        allowlist.write_text("https://only.example.org/page\n", encoding="utf-8")
        assert resource_cache.cached_allowlist(allowlist, cache).urls == frozenset(
            {"https://only.example.org/page"}
        )

    def test_same_content_elsewhere_names_its_own_path(
        self, files: tuple[Path, Path], tmp_path: Path
    ) -> None:
        """The path is part of the key: a copy of the file is reported under its own name."""
        _, orgs = files
        copy = tmp_path / "copy.yaml"
        copy.write_bytes(orgs.read_bytes())
        resource_cache.cached_directory(orgs, tmp_path / "cache")
        assert resource_cache.cached_directory(copy, tmp_path / "cache").path == str(copy)

    @pytest.mark.parametrize(
        "content",
        [b"", b"not json", b"[]", b'{"format": 1}', b"\xff\xfe", "WRONG-KEY", "WRONG-SHAPE", "NAME-NOT-TEXT",
         "NOT-SEALED-BY-THIS-USER"],
    )  # fmt: skip
    def test_bad_entry_is_rebuilt(
        self, files: tuple[Path, Path], tmp_path: Path, content: bytes | str
    ) -> None:
        """A truncated, malformed, mislabelled, misshapen or unsealed entry is ignored and rebuilt correctly."""
        allowlist, orgs = files
        cache = tmp_path / "cache"
        resource_cache.cached_directory(orgs, cache)
        resource_cache.cached_allowlist(allowlist, cache)
        for entry in cache.iterdir():
            envelope = json.loads(entry.read_bytes())
            kind, key, value = envelope["kind"], envelope["name"], json.loads(envelope["body"])
            if content == "WRONG-KEY":  # sealed by this user, for another key
                data = str(seal(kind, "0" * 64, value)).encode()
            elif content == "WRONG-SHAPE":  # sealed by this user, another shape
                data = str(seal(kind, key, {"urls": 3})).encode()
            elif content == "NAME-NOT-TEXT":
                if entry.name.startswith("directory"):
                    value[0]["name"] = ["Legal Aid Chicago"]
                data = str(seal(kind, key, value)).encode()
            elif content == "NOT-SEALED-BY-THIS-USER":  # a value of one's own under the old MAC
                value = [] if entry.name.startswith("allowlist") else value[:1]
                data = json.dumps({**envelope, "body": json.dumps(value)}).encode()
            else:
                assert isinstance(content, bytes)
                data = content
            entry.write_bytes(data)
        _same_directory(resource_cache.cached_directory(orgs, cache), load_directory(orgs))
        assert resource_cache.cached_allowlist(allowlist, cache) == load_allowlist(allowlist)

    def test_unwritable_cache_still_loads(self, files: tuple[Path, Path], tmp_path: Path) -> None:
        """A cache folder that cannot be created (a file is in the way) is not used; loading works."""
        allowlist, orgs = files
        blocked = tmp_path / "blocked"
        blocked.write_text("a file, not a folder", encoding="utf-8")
        resources = load_resources(allowlist=allowlist, orgs=orgs, cache_dir=blocked / "cache")
        _same_directory(resources.directory, load_directory(orgs))

    def test_invalid_directory_fails_as_before(self, tmp_path: Path) -> None:
        """A directory that does not load raises the same one-line DataError, and nothing is cached."""
        orgs = tmp_path / "orgs.yaml"
        orgs.write_text("- name: No States\n", encoding="utf-8")
        with pytest.raises(DataError, match="states"):
            resource_cache.cached_directory(orgs, tmp_path / "cache")
        assert not (tmp_path / "cache").exists()
