"""ProperDocs (MkDocs 1.6) hooks: the CLI and file-format reference pages are generated when the site is built.

``reference/cli.md`` and ``reference/formats.md`` each hold one marker comment; the hook replaces it with
Markdown rendered from the argument parsers that ``grounding-eval`` itself uses
(:mod:`grounding_eval.cli`) and from every JSON Schema in ``datasets/schemas/``. Nothing is copied by
hand, so the reference cannot drift from the code: a new subcommand, option or schema file appears on the
next build. A marker that is missing, or a schema that cannot be read, stops the build with one line.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
SCHEMAS = ROOT / "datasets" / "schemas"
CLI_MARKER = "<!-- generated: cli -->"
FORMATS_MARKER = "<!-- generated: formats -->"
USAGE_WIDTH = "100"  # argparse wraps usage lines at $COLUMNS: fixed, so every build renders the same


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Fill the generated reference pages; every other page is returned unchanged."""
    path = page.file.src_uri
    if path == "reference/cli.md":
        return _fill(markdown, CLI_MARKER, render_cli(), path)
    if path == "reference/formats.md":
        return _fill(markdown, FORMATS_MARKER, render_schemas(SCHEMAS), path)
    return markdown


def _fill(markdown: str, marker: str, generated: str, path: str) -> str:
    if marker not in markdown:
        raise SystemExit(f"docs/{path}: the marker {marker} is missing: the generated reference has no place")
    return markdown.replace(marker, generated)


# --- the command line ---------------------------------------------------------------------------------


def render_cli() -> str:
    """Every command and subcommand of ``grounding-eval``: usage, description, arguments."""
    from grounding_eval.cli import _build_parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = USAGE_WIDTH
    try:
        parser = _build_parser()
        return "\n".join(_render_parser(parser, "grounding-eval", None, level=2, top=True))
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old


def _subcommands(
    parser: argparse.ArgumentParser,
) -> Iterator[tuple[str, argparse.ArgumentParser, str | None]]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            for name, sub in action.choices.items():
                yield name, sub, helps.get(name)


def _render_parser(
    parser: argparse.ArgumentParser, name: str, summary: str | None, *, level: int, top: bool = False
) -> Iterator[str]:
    subs = list(_subcommands(parser))
    if top and subs:
        yield "| command | what it does |"
        yield "|---|---|"
        for sub_name, _sub, sub_help in subs:
            yield f"| [`{sub_name}`](#{_slug(f'{name} {sub_name}')}) | {_cell(_sentence(sub_help or ''))} |"
        yield ""
    if not top:
        yield f"{'#' * min(level, 6)} {name}\n"
        if summary:
            yield f"{_sentence(summary)}\n"
    if parser.description and (not top or not subs):
        yield f"{parser.description}\n"
    if not subs or not top:
        yield "```text"
        yield parser.format_usage().strip()
        yield "```\n"
    rows = [_argument_row(action) for action in parser._actions if _documented(action)]
    if rows:
        yield "| argument | meaning |"
        yield "|---|---|"
        yield from rows
        yield ""
    if subs:
        if not top:
            yield "| subcommand | what it does |"
            yield "|---|---|"
            for sub_name, _sub, sub_help in subs:
                yield f"| [`{sub_name}`](#{_slug(f'{name} {sub_name}')}) | {_cell(_sentence(sub_help or ''))} |"
            yield ""
        for sub_name, sub, sub_help in subs:
            yield from _render_parser(sub, f"{name} {sub_name}", sub_help, level=level if top else level + 1)


def _documented(action: argparse.Action) -> bool:
    return not isinstance(action, argparse._HelpAction | argparse._SubParsersAction) and (
        action.help != argparse.SUPPRESS
    )


def _argument_row(action: argparse.Action) -> str:
    if action.option_strings:
        takes_value = action.nargs != 0
        metavar = _metavar(action) if takes_value else ""
        names = ", ".join(f"`{opt}{' ' + metavar if metavar else ''}`" for opt in action.option_strings)
    else:
        names = f"`{_metavar(action)}`"
    parts = [_sentence(action.help) if action.help else ""]
    if action.choices is not None and not isinstance(action.choices, dict):
        parts.append("One of " + ", ".join(f"`{c}`" for c in action.choices) + ".")
    repeat = isinstance(action, argparse._AppendAction)
    if (repeat or action.nargs in ("*", "+")) and "repeatable" not in (action.help or "").lower():
        parts.append("Repeatable." if repeat else "One or more.")
    if action.required and action.option_strings:
        parts.append("Required.")
    default = action.default
    if default not in (None, False, [], (), argparse.SUPPRESS) and action.nargs != 0:
        parts.append(f"Default: `{default}`.")
    return f"| {names} | {_cell(' '.join(p for p in parts if p))} |"


def _metavar(action: argparse.Action) -> str:
    if action.metavar is not None:
        return action.metavar if isinstance(action.metavar, str) else " ".join(action.metavar)
    if action.choices is not None:
        return "{" + ",".join(map(str, action.choices)) + "}"
    return action.dest.upper() if action.option_strings else action.dest


def _sentence(text: str) -> str:
    text = text.strip().replace("%%", "%")
    return text[:1].upper() + text[1:] + ("" if text.endswith((".", "!", "?", ":")) else ".")


def _slug(heading: str) -> str:
    """The anchor MkDocs' toc extension gives a heading of words, hyphens and spaces."""
    return "-".join(heading.lower().split())


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell: no pipes, no raw HTML, one line."""
    return " ".join(text.replace("|", "\\|").replace("<", "&lt;").replace(">", "&gt;").split())


# --- the file formats ---------------------------------------------------------------------------------


def render_schemas(folder: Path) -> str:
    """One section per ``*.schema.json`` in ``folder``, in file-name order."""
    paths = sorted(folder.glob("*.schema.json"))
    if not paths:
        raise SystemExit(f"{folder}: no *.schema.json file: the format reference would be empty")
    return "\n".join(_render_schema(path) for path in paths)


def _load(path: Path) -> dict[str, Any]:
    try:
        schema = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise SystemExit(f"{path}: not a readable JSON Schema: {exc}") from None
    if not isinstance(schema, dict):
        raise SystemExit(f"{path}: not a readable JSON Schema: the top level is not an object")
    return schema


def _render_schema(path: Path) -> str:
    schema = _load(path)
    stem = path.name.removesuffix(".schema.json")
    anchor = f"schema-{stem.replace('_', '-')}"
    defs: dict[str, Any] = {**schema.get("definitions", {}), **schema.get("$defs", {})}
    refs = {name: f"{anchor}-{name.lower()}" for name in defs}
    lines = [
        f"### {schema.get('title') or stem} {{#{anchor}}}\n",
        f"Schema file: `datasets/schemas/{path.name}`.\n",
    ]
    if schema.get("description"):
        lines.append(f"{schema['description']}\n")
    lines.extend(_object_lines(schema, refs))
    for name, sub in defs.items():
        lines.append(f"#### {sub.get('title') or name} {{#{refs[name]}}}\n")
        if sub.get("description"):
            lines.append(f"{sub['description']}\n")
        lines.extend(_object_lines(sub, refs))
    return "\n".join(lines)


def _object_lines(schema: dict[str, Any], refs: dict[str, str]) -> list[str]:
    lines: list[str] = []
    if schema.get("type") == "array" and "properties" not in schema:
        lines.append(f"The file holds a list; each entry is {_type(schema.get('items', {}), refs)}.\n")
        item = schema.get("items", {})
        if isinstance(item, dict) and "properties" in item:
            schema = item
        else:
            return lines
    rows = list(_property_rows(schema, refs, prefix=""))
    if rows:
        lines += ["| field | type | required | description |", "|---|---|---|---|", *rows, ""]
    elif "properties" not in schema and "$ref" not in schema and schema.get("type") != "object":
        lines.append(f"Each value is {_type(schema, refs)}.\n")
    if schema.get("additionalProperties") is False:
        lines.append("A field not listed here is refused.\n")
    if any(key in schema for key in ("if", "allOf", "dependentRequired", "dependentSchemas")):
        lines.append("Further rules tie fields together: see the schema file.\n")
    return lines


def _property_rows(schema: dict[str, Any], refs: dict[str, str], prefix: str) -> Iterator[str]:
    required = set(schema.get("required", []))
    for name, prop in schema.get("properties", {}).items():
        if not isinstance(prop, dict):
            continue
        field = f"{prefix}{name}"
        description = prop.get("description", "")
        if "default" in prop:
            if description and not description.endswith((".", ":")):
                description += "."
            description = (
                f"{description} Default: `{json.dumps(prop['default'], ensure_ascii=False)}`.".strip()
            )
        yield (
            f"| `{field}` | {_cell(_type(prop, refs))} | {'yes' if name in required else ''} | "
            f"{_cell(description)} |"
        )
        for nested, suffix in _inline_objects(prop):
            yield from _property_rows(nested, refs, prefix=f"{field}{suffix}.")


def _inline_objects(prop: dict[str, Any]) -> Iterator[tuple[dict[str, Any], str]]:
    """Objects written inside a property (not by reference), with the suffix that names their fields."""
    if "properties" in prop:
        yield prop, ""
    items = prop.get("items")
    if isinstance(items, dict):
        for nested, suffix in _inline_objects(items):
            yield nested, "[]" + suffix
    for key in ("oneOf", "anyOf"):
        for branch in prop.get(key, []):
            if isinstance(branch, dict):
                yield from _inline_objects(branch)


def _type(schema: Any, refs: dict[str, str]) -> str:
    if not isinstance(schema, dict) or not schema:
        return "any value"
    if "$ref" in schema:
        name = str(schema["$ref"]).rsplit("/", 1)[-1]
        return f"[{name}](#{refs[name]})" if name in refs else f"`{schema['$ref']}`"
    if "const" in schema:
        return f"`{json.dumps(schema['const'])}`"
    if "enum" in schema:
        return "one of " + ", ".join(
            f"`{json.dumps(v) if not isinstance(v, str) else v}`" for v in schema["enum"]
        )
    for key in ("oneOf", "anyOf"):
        if key in schema:
            return " **or** ".join(dict.fromkeys(_type(branch, refs) for branch in schema[key]))
    kind = schema.get("type")
    if isinstance(kind, list):
        return " or ".join(_type({**schema, "type": k}, refs) for k in kind)
    if kind == "array":
        inner = _type(schema.get("items", {}), refs)
        text = f"list of ({inner})" if " " in inner and not inner.startswith("[") else f"list of {inner}"
        if schema.get("minItems"):
            text += f" (at least {schema['minItems']})"
        return text
    if kind == "object":
        if "properties" in schema:
            return "object (fields below)"
        extra = schema.get("additionalProperties")
        return f"map of {_type(extra, refs)}" if isinstance(extra, dict) else "object"
    if kind in ("integer", "number"):
        bounds = [f"≥ {schema['minimum']}" for _ in [0] if "minimum" in schema]
        bounds += [f"≤ {schema['maximum']}" for _ in [0] if "maximum" in schema]
        return kind + (f" ({', '.join(bounds)})" if bounds else "")
    if kind == "string":
        limits = []
        if "maxLength" in schema:
            limits.append(f"at most {schema['maxLength']} characters")
        if "format" in schema:
            limits.append(str(schema["format"]))
        return "string" + (f" ({', '.join(limits)})" if limits else "")
    return str(kind) if kind else "any value"
