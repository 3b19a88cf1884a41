"""grounding_eval.files, the one gate for user files: what it reads, what it refuses, in one line."""

from __future__ import annotations

import ast
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from grounding_eval.errors import DataError, clip
from grounding_eval.files import (
    ARTICLE,
    DATA,
    JsonProblem,
    parse_json,
    read_json,
    read_text,
    read_yaml,
    write_text_atomic,
)


def _write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


class TestReadText:
    """read_text returns a regular file's UTF-8 text, or one DataError line."""

    def test_text_and_byte_order_mark(self, tmp_path: Path) -> None:
        assert read_text(_write(tmp_path, "a.txt", b"\xef\xbb\xbfhello\r\n")) == "hello\r\n"

    def test_missing(self, tmp_path: Path) -> None:
        with pytest.raises(DataError, match=r"a\.txt: file not found$"):
            read_text(tmp_path / "a.txt")

    def test_parent_is_a_file(self, tmp_path: Path) -> None:
        parent = _write(tmp_path, "a.txt", "x")
        with pytest.raises(DataError, match=r"file not found \(a parent is not a folder\)$"):
            read_text(parent / "b.txt")

    def test_directory(self, tmp_path: Path) -> None:
        with pytest.raises(DataError) as info:
            read_text(tmp_path)
        assert str(info.value) == f"{tmp_path}: is a directory, not a regular file"

    def test_not_utf8_names_the_byte(self, tmp_path: Path) -> None:
        path = _write(tmp_path, "a.txt", b"ok\n\xff")
        with pytest.raises(DataError) as info:
            read_text(path)
        assert str(info.value) == f"{path}: not UTF-8 text (byte 3)"

    def test_size_limit_per_kind(self, tmp_path: Path) -> None:
        path = _write(tmp_path, "a.txt", b"x" * (ARTICLE.max_bytes + 1))
        assert len(read_text(path, DATA)) == ARTICLE.max_bytes + 1
        with pytest.raises(DataError) as info:
            read_text(path, ARTICLE)
        assert str(info.value) == f"{path}: is 1,048,577 bytes; a cached article may be at most 1 MiB"

    def test_inside(self, tmp_path: Path) -> None:
        (tmp_path / "ds").mkdir()
        inner = _write(tmp_path / "ds", "a.txt", "in")
        outer = _write(tmp_path, "b.txt", "out")
        (tmp_path / "ds" / "link.txt").symlink_to(outer)
        assert read_text(inner, inside=tmp_path / "ds") == "in"
        with pytest.raises(DataError, match="resolves outside the dataset folder"):
            read_text(tmp_path / "ds" / "link.txt", inside=tmp_path / "ds")
        with pytest.raises(DataError, match="resolves outside the dataset folder"):
            read_text(tmp_path / "ds" / ".." / "b.txt", inside=tmp_path / "ds")

    def test_symlink_loop(self, tmp_path: Path) -> None:
        loop = tmp_path / "a.txt"
        loop.symlink_to(loop)
        with pytest.raises(DataError) as info:
            read_text(loop, inside=tmp_path)
        assert str(info.value).startswith(f"{loop}: cannot resolve the path")


def _problem(text: str) -> str:
    with pytest.raises(JsonProblem) as info:
        parse_json(text)
    return info.value.message()


class TestParseJson:
    """parse_json is json.loads minus its silent and traceback cases."""

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            pytest.param('{"a": 1, "a": 2}', "duplicate key 'a' in one object", id="duplicate"),
            pytest.param('{"a": {"b": 1, "b": 1}}', "duplicate key 'b' in one object", id="nested-duplicate"),
            pytest.param('[{"a": 1}, [{"b": {"c": 1, "c": 2}}]]', "record 2: duplicate key 'c' in one object", id="record"),
            pytest.param('{"' + "k" * 60 + '": 1, "' + "k" * 60 + '": 2}', f"duplicate key '{'k' * 40}…' in one object", id="key-clipped"),
            pytest.param("[NaN]", "NaN is not a JSON number", id="nan"),
            pytest.param("[-Infinity]", "-Infinity is not a JSON number", id="infinity"),
            pytest.param("[1e999]", "the number '1e999' is too large", id="overflow"),
            pytest.param("-" + "1" * 5000, "a number of 5,001 digits is too long", id="digits"),
            pytest.param("[" * 100_000 + "]" * 100_000, "not readable: nested too deeply", id="deep"),
            pytest.param('{"a": 1,}', "line 1: not valid JSON (Expecting property name enclosed in double quotes)", id="syntax"),
            pytest.param('[\n1,\n2\n', "line 4: not valid JSON (Expecting ',' delimiter)", id="syntax-line"),
        ],
    )  # fmt: skip
    def test_refused(self, text: str, message: str) -> None:
        assert _problem(text) == message

    @settings(max_examples=200, deadline=None)
    @given(
        st.recursive(
            st.none()
            | st.booleans()
            | st.integers()
            | st.floats(allow_nan=False, allow_infinity=False)
            | st.text(),
            lambda children: st.lists(children) | st.dictionaries(st.text(), children),
            max_leaves=20,
        )
    )
    def test_same_as_json_loads_on_valid_json(self, value: Any) -> None:
        """Whatever json.dumps writes (no duplicates, finite numbers) reads back unchanged."""
        text = json.dumps(value)
        assert parse_json(text) == json.loads(text)

    def test_read_json_names_the_file(self, tmp_path: Path) -> None:
        path = _write(tmp_path, "a.json", '[{"id": 1}, {"id": 1, "id": 2}]')
        with pytest.raises(DataError) as info:
            read_json(path)
        assert str(info.value) == f"{path}: record 2: duplicate key 'id' in one object"


class TestReadYaml:
    """read_yaml is the safe loader that refuses duplicate keys and reports bad values by line."""

    @pytest.mark.parametrize(
        ("text", "message"),
        [
            pytest.param("a: 1\nb: 2\na: 3\n", "line 3: duplicate key 'a' (first at line 1)", id="duplicate"),
            pytest.param("- x:\n    y: 1\n    y: 1\n", "line 3: duplicate key 'y' (first at line 2)", id="nested"),
            pytest.param("{a: 1, a: 2}", "line 1: duplicate key 'a' (first at line 1)", id="flow"),
            pytest.param("on: 1\ntrue: 2\n", "line 2: duplicate key 'True' (first at line 1)", id="same-value"),
            pytest.param("d: 2024-02-30\n", "malformed YAML at line 1: not a valid timestamp value", id="bad-date"),
            pytest.param("n: !!int twelve\n", "malformed YAML at line 1: not a valid int value", id="bad-int"),
            pytest.param("f: !!python/name:os.system\n", "malformed YAML at line 1: could not determine a constructor "
                         "for the tag 'tag:yaml.org,2002:python/name:os.system'", id="unsafe-tag"),
            pytest.param("a: !" + "T" * 300 + " x\n", "malformed YAML at line 1: could not determine a constructor "
                         f"for the tag '!{'T' * 39}…'", id="long-tag-clipped"),
        ],
    )  # fmt: skip
    def test_refused(self, tmp_path: Path, text: str, message: str) -> None:
        path = _write(tmp_path, "a.yaml", text)
        with pytest.raises(DataError) as info:
            read_yaml(path)
        assert str(info.value) == f"{path}: {message}"

    def test_merge_keys_may_be_overridden(self, tmp_path: Path) -> None:
        path = _write(tmp_path, "a.yaml", "base: &b {x: 1, y: 2}\nm:\n  <<: *b\n  x: 3\n")
        assert read_yaml(path) == {"base": {"x": 1, "y": 2}, "m": {"x": 3, "y": 2}}

    def test_same_key_in_different_mappings(self, tmp_path: Path) -> None:
        path = _write(tmp_path, "a.yaml", "- id: a\n- id: b\n")
        assert read_yaml(path) == [{"id": "a"}, {"id": "b"}]


class TestClip:
    """clip quotes at most 40 characters, escaped, on one line."""

    @pytest.mark.parametrize(
        ("value", "shown"),
        [
            ("abc", "'abc'"),
            ("x" * 40, f"'{'x' * 40}'"),
            ("x" * 41, f"'{'x' * 40}…'"),
            ("a\nb\x1b[2J\u202e", "'a\\nb\\x1b[2J\\u202e'"),
            (12, "'12'"),
        ],
    )
    def test_table(self, value: object, shown: str) -> None:
        assert clip(value) == shown

    @given(st.text())
    def test_one_short_line(self, text: str) -> None:
        shown = clip(text)
        assert "\n" not in shown and "\r" not in shown
        quoted = shown[:-2] + shown[-1] if len(text) > 40 else shown  # without the "…" of a clipped text
        assert ast.literal_eval(quoted) == text[:40]


class TestWriteTextAtomic:
    """An output is the old file or the whole new one, and a failed write leaves no temporary file."""

    def test_replaces_the_file_whole(self, tmp_path: Path) -> None:
        target = tmp_path / "sheet.csv"
        target.write_text("old\n", encoding="utf-8")
        write_text_atomic(target, "a,b\r\nc,d\r\n")
        assert target.read_bytes() == b"a,b\r\nc,d\r\n"  # newlines as given (a CSV keeps its CRLF)
        assert [p.name for p in tmp_path.iterdir()] == ["sheet.csv"]

    def test_a_failed_write_keeps_the_old_file(self, tmp_path: Path) -> None:
        target = tmp_path / "key.json"
        target.write_text("old\n", encoding="utf-8")
        with pytest.raises(UnicodeEncodeError):
            write_text_atomic(target, "half \ud83d")  # a lone surrogate cannot be written as UTF-8
        assert target.read_text(encoding="utf-8") == "old\n"
        assert [p.name for p in tmp_path.iterdir()] == ["key.json"]

    def test_permissions_follow_the_umask_or_the_old_file(self, tmp_path: Path) -> None:
        old_umask = os.umask(0o022)
        try:
            fresh = tmp_path / "allowlist.txt"
            write_text_atomic(fresh, "https://example.org\n")
            assert stat.S_IMODE(fresh.stat().st_mode) == 0o644  # not mkstemp's 0o600
            kept = tmp_path / "report.html"
            kept.write_text("old", encoding="utf-8")
            kept.chmod(0o640)
            write_text_atomic(kept, "new")
            assert stat.S_IMODE(kept.stat().st_mode) == 0o640
        finally:
            os.umask(old_umask)

    def test_a_missing_folder_is_one_line(self, tmp_path: Path) -> None:
        target = tmp_path / "no" / "such" / "report.html"
        with pytest.raises(DataError) as caught:
            write_text_atomic(target, "x")
        message = str(caught.value)
        assert "\n" not in message and str(target) in message and "does not exist" in message
