"""The docs site: it builds with ``properdocs build --strict``, offline, with the CLI and file-format reference
generated from the code; every relative link in README.md and docs/ resolves; the README stays short."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

from tests.entry_points import load_file

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
README_MAX_LINES = 150


HOOKS = load_file("docs_hooks", DOCS / "hooks.py")


def test_readme_is_at_most_150_lines() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move detail into docs/"


# --- links --------------------------------------------------------------------------------------------

_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
_FENCE = re.compile(r"^\s*```.*?^\s*```\s*$", re.MULTILINE | re.DOTALL)
_CODE = re.compile(r"`[^`\n]*`")


def _slugify(heading: str) -> str:
    """Python-Markdown's toc slug (what MkDocs uses, and GitHub's for plain words)."""
    text = unicodedata.normalize("NFKD", heading).encode("ascii", "ignore").decode()
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _anchors(path: Path) -> set[str]:
    text = path.read_text(encoding="utf-8")
    if path.parent.name == "reference" and path.name in ("cli.md", "formats.md"):
        text = text.replace(HOOKS.CLI_MARKER, HOOKS.render_cli()).replace(
            HOOKS.FORMATS_MARKER, HOOKS.render_schemas(HOOKS.SCHEMAS)
        )
    text = _FENCE.sub("", text)
    anchors = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*$", text, re.MULTILINE):
        explicit = re.search(r"\{#([\w-]+)\}\s*$", heading)
        anchors.add(explicit.group(1) if explicit else _slugify(heading.replace("`", "")))
    return anchors


def _links(path: Path) -> list[str]:
    text = _CODE.sub("", _FENCE.sub("", path.read_text(encoding="utf-8")))
    return _LINK.findall(text)


def _pages() -> list[Path]:
    return [REPO / "README.md", *sorted(DOCS.rglob("*.md"))]


@pytest.mark.parametrize("page", _pages(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_resolves(page: Path) -> None:
    broken = []
    for target in _links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: …
            continue
        file_part, _, anchor = target.partition("#")
        resolved = (page.parent / file_part).resolve() if file_part else page
        if not resolved.exists():
            broken.append(f"{target}: no such file")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{target}: no heading with that anchor")
    assert not broken, f"{page.relative_to(REPO)}: " + "; ".join(broken)


def test_the_link_checker_finds_broken_links(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text(
        "# Top\n\n## Two words\n\n[ok](#two-words) [bad](b.md) `[code](nowhere.md)`\n"
    )
    assert _links(tmp_path / "a.md") == ["#two-words", "b.md"]
    assert _anchors(tmp_path / "a.md") == {"top", "two-words"}


def test_readme_links_to_the_docs() -> None:
    targets = {t.partition("#")[0] for t in _links(REPO / "README.md")}
    for page in (
        "docs/tutorial.md",
        "docs/how-to/index.md",
        "docs/reference/index.md",
        "docs/explanation/index.md",
    ):
        assert page in targets, page


# --- the generated reference --------------------------------------------------------------------------


def _parsers(parser: argparse.ArgumentParser, name: str) -> list[tuple[str, argparse.ArgumentParser]]:
    found = [(name, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub_name, sub in action.choices.items():
                found += _parsers(sub, f"{name} {sub_name}")
    return found


def test_the_cli_page_has_every_command_and_option() -> None:
    from grounding_eval.cli import _build_parser

    page = HOOKS.render_cli()
    for name, parser in _parsers(_build_parser(), "grounding-eval")[1:]:
        assert re.search(rf"^#+ {re.escape(name)}$", page, re.MULTILINE), name
        for action in parser._actions:
            for option in action.option_strings:
                if option not in ("-h", "--help"):
                    assert f"`{option}" in page, f"{name} {option}"


def test_every_schema_file_is_rendered() -> None:
    page = HOOKS.render_schemas(HOOKS.SCHEMAS)
    schemas = sorted(HOOKS.SCHEMAS.glob("*.schema.json"))
    assert schemas
    for path in schemas:
        schema = json.loads(path.read_text(encoding="utf-8"))
        assert f"`datasets/schemas/{path.name}`" in page
        for field in schema.get("properties", {}):
            assert f"| `{field}` |" in page, f"{path.name}: {field}"


def test_a_schema_with_definitions_enums_and_optional_fields(tmp_path: Path) -> None:
    """The shapes a pydantic-generated schema has: $defs and $ref, anyOf with null, enums, defaults."""
    schema = {
        "title": "Thing",
        "description": "A thing file.",
        "type": "object",
        "properties": {
            "kind": {"enum": ["a", "b"], "description": "which kind"},
            "parts": {"type": "array", "items": {"$ref": "#/$defs/Part"}},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
        },
        "required": ["kind"],
        "additionalProperties": False,
        "$defs": {"Part": {"type": "object", "properties": {"n": {"type": "integer", "minimum": 1}}}},
    }
    (tmp_path / "thing.schema.json").write_text(json.dumps(schema))
    page = HOOKS.render_schemas(tmp_path)
    assert "### Thing {#schema-thing}" in page and "A thing file." in page
    assert "| `kind` | one of `a`, `b` | yes | which kind |" in page
    assert "| `parts` | list of [Part](#schema-thing-part) |  |" in page
    assert "| `note` | string **or** null |  | Default: `null`. |" in page
    assert "#### Part {#schema-thing-part}" in page and "| `n` | integer (≥ 1) |  |" in page
    assert "A field not listed here is refused." in page


def test_an_unreadable_schema_stops_the_build_in_one_line(tmp_path: Path) -> None:
    (tmp_path / "bad.schema.json").write_text("{not json")
    with pytest.raises(SystemExit, match=r"bad\.schema\.json: not a readable JSON Schema: "):
        HOOKS.render_schemas(tmp_path)
    with pytest.raises(SystemExit, match=r"no \*\.schema\.json file"):
        HOOKS.render_schemas(tmp_path / "empty")


def test_properdocs_build_strict_offline(tmp_path: Path) -> None:
    site = tmp_path / "site"
    build = subprocess.run(
        [sys.executable, "-m", "properdocs", "build", "--strict", "--quiet", "-d", str(site)],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr[-3000:]
    cli = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    assert "grounding-eval data validate" in cli and "--max-urls-checked" in cli
    # the builder ran docs/hooks.py (Zensical 0.1.2 ignores `hooks:` and leaves the marker): every command
    # is a heading of the built page, with the anchor the other pages link to
    assert HOOKS.CLI_MARKER not in cli
    from grounding_eval.cli import _build_parser

    for name, _ in _parsers(_build_parser(), "grounding-eval")[1:]:
        assert f'id="{_slugify(name)}"' in cli, name
    formats = (site / "reference" / "formats" / "index.html").read_text(encoding="utf-8")
    assert "datasets/schemas/query.schema.json" in formats
    for html in site.rglob("*.html"):
        text = html.read_text(encoding="utf-8")
        assert "fonts.googleapis.com" not in text and "fonts.gstatic.com" not in text, html
        external = re.findall(r"<(?:script|link)\b[^>]*(?:src|href)=\"https?://[^\"]+\"", text)
        assert not external, f"{html}: {external[:3]}"
