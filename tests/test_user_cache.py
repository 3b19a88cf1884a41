"""The user's cache folder and sealed entries (grounding_eval/user_cache.py): only this user's processes
can have written an entry that is read back."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from grounding_eval import user_cache


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    return tmp_path / "xdg" / "grounding-eval"


class TestCacheRoot:
    def test_an_absolute_xdg_cache_home(self, home: Path) -> None:
        assert user_cache.cache_root() == home

    def test_a_relative_one_is_not_the_study_folder(self, monkeypatch: pytest.MonkeyPatch) -> None:
        """The XDG specification ignores a relative value; so does the pack (a study's .env cannot point
        the cache into the study)."""
        monkeypatch.setenv("XDG_CACHE_HOME", ".cache")
        assert user_cache.cache_root() == Path.home() / ".cache" / "grounding-eval"


class TestSeal:
    def test_round_trip_and_every_other_reading_is_a_miss(self, home: Path) -> None:
        text = user_cache.seal("kind", "name", {"a": [1, "ü", "\ud83d"]})
        assert text is not None and text.isascii()  # (a lone surrogate is written as its escape)
        assert user_cache.unseal("kind", "name", text) == {"a": [1, "ü", "\ud83d"]}
        assert user_cache.unseal("kind", "other name", text) is None
        assert user_cache.unseal("other kind", "name", text) is None
        envelope = json.loads(text)
        edited = json.dumps({**envelope, "body": json.dumps({"a": [2]})})
        assert user_cache.unseal("kind", "name", edited) is None
        for junk in ("", "[]", "{}", '{"body": 1, "mac": "x"}', b"\xff"):
            assert user_cache.unseal("kind", "name", junk) is None

    def test_another_users_secret_is_a_miss(
        self, home: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
    ) -> None:
        text = user_cache.seal("kind", "name", [1])
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "someone-else"))
        assert text is not None and user_cache.unseal("kind", "name", text) is None

    def test_the_secret_is_the_users_alone(self, home: Path) -> None:
        assert user_cache.secret() is not None
        assert (home / "secret").stat().st_mode & 0o777 == 0o600

    def test_a_secret_others_can_read_seals_nothing(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        folder = tmp_path / "shared" / "grounding-eval"
        folder.mkdir(parents=True)
        (folder / "secret").write_bytes(b"k" * 32)
        os.chmod(folder / "secret", 0o644)
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "shared"))
        assert user_cache.secret() is None and user_cache.seal("kind", "name", 1) is None

    def test_no_cache_folder_keeps_nothing_and_raises_nothing(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        (tmp_path / "file").write_text("a file where the folder would be")
        monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))
        assert user_cache.secret() is None
        assert not user_cache.write_sealed(tmp_path / "x.json", "kind", "name", 1)
        assert user_cache.read_sealed(tmp_path / "x.json", "kind", "name") is None


_SEAL = (
    "from grounding_eval.user_cache import seal, unseal\n"
    "t = seal('allowlist', 'k', ['https://evil.example/'])\n"
    "print(t is not None and unseal('allowlist', 'k', t) == ['https://evil.example/'])\n"
)


@pytest.mark.parametrize("xdg", ["/proc/self/cwd/.x", "{study}/.x", "{link}/.x"])
def test_a_cache_folder_inside_the_study_is_refused_not_used(tmp_path: Path, xdg: str) -> None:
    """The reviewer's ``XDG_CACHE_HOME=/proc/self/cwd/.x`` in a study's .env put the secret, and entries
    sealed with it, inside the study: a sender could ship both. Resolved, it is the study folder: nothing
    is cached, nothing written there, and stderr says so in one line."""
    import subprocess
    import sys

    study = tmp_path / "study"
    study.mkdir()
    (tmp_path / "link").symlink_to(study)
    env = {**os.environ, "XDG_CACHE_HOME": xdg.format(study=study, link=tmp_path / "link")}
    done = subprocess.run([sys.executable, "-c", _SEAL], cwd=study, env=env, capture_output=True, text=True,
                          timeout=60, check=True)  # fmt: skip
    assert done.stdout == "False\n"
    assert not (study / ".x").exists()
    (line,) = done.stderr.splitlines()
    assert line.startswith("grounding-eval: cache folder ") and "is inside the current folder" in line


def test_a_cache_folder_outside_the_study_is_used(tmp_path: Path) -> None:
    import subprocess
    import sys

    (tmp_path / "study").mkdir()
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", _SEAL], cwd=tmp_path / "study", env=env, capture_output=True,
                          text=True, timeout=60, check=True)  # fmt: skip
    assert (done.stdout, done.stderr) == ("True\n", "")
    assert (tmp_path / "cache" / "grounding-eval" / "secret").is_file()
