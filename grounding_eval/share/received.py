"""What a received study's files can do beyond the pack: its entry code, model endpoints and code references.

``bundle check`` (:mod:`grounding_eval.share.check`) reads a bundle written by someone else. The pack's own
entry files (``assertions/*``, ``providers/replay.py``) are copied into a study byte for byte by ``init``,
so a copy that differs is refused (:func:`entry_problem`): it would run the sender's code under the pack's
name. The rest of what a config can do is listed, not refused — a study may well name its own endpoint or
grader — so the receiver reads it before running anything (:func:`config_findings`):

* every **model endpoint** a config names (``base_url``, ``cheap_base_url``, ``apiBaseUrl``, ``apiHost``,
  a provider's ``url``, an ``env:`` variable such as ``OPENAI_BASE_URL``, ``*_API_BASE*``, ``*_HOST``,
  ``*_ENDPOINT`` or a proxy) whose host is not a model provider's official API host (``policy.yaml``
  ``bundle.official_api_hosts``): it would receive the prompts, and whatever key the provider sends it;
* every **remote call** whatever its host: a ``webhook:``, ``http(s)://`` or ``ws(s)://`` provider id (in
  ``providers``, ``targets``, a grader or an assertion's ``provider``) and a ``webhook`` assertion, which
  promptfoo posts each output to;
* every **path a config has the pack write** (``audit_dir``, ``review_queue``, ``cache_dir``…) that is
  absolute or climbs out with ``..``: refused when it runs (:mod:`grounding_eval.promptfoo.written_paths`);
* every **code reference** outside the pack's entries: ``file://`` to anything but data (prompts, tables,
  YAML), ``exec:``, ``python:``, ``package:``, an inline ``javascript`` or ``python`` assertion, and an
  inline ``transform`` (or another key promptfoo runs as JavaScript, ``_INLINE_CODE_KEYS``) — code
  that promptfoo runs with the receiver's environment and keys.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator
from pathlib import PurePosixPath
from typing import Any, Final
from urllib.parse import urlsplit

from grounding_eval.errors import clip
from grounding_eval.promptfoo.written_paths import WRITTEN_KEYS

__all__ = [
    "ENV_ENDPOINT",
    "config_findings",
    "entry_problem",
    "is_config_member",
    "is_package_manager_file",
    "name_problem",
]

_ENDPOINT_KEYS: Final = frozenset({"base_url", "cheap_base_url", "apiBaseUrl", "apiHost", "baseUrl", "api_base",
                                   "apiBase", "endpoint", "url"})  # fmt: skip
# An environment variable naming an endpoint (a config's `env:` block: OPENAI_BASE_URL, ANTHROPIC_BASE_URL,
# OPENAI_API_BASE_URL, AZURE_OPENAI_API_HOST, OLLAMA_HOST, an ..._ENDPOINT), which promptfoo's providers read.
# The same rule as assertions/judges.cjs ENDPOINT_ENV (where a study's .env may not point a switched judge):
# also a proxy, and whether TLS is checked.
ENV_ENDPOINT: Final = re.compile(
    r"(?:_BASE_URL|_API_BASE\w*|_API_HOST|_API_URL|_HOST|_ENDPOINT|_BASE_PATH|^(?:HTTPS?|ALL)_PROXY"
    r"|^NODE_TLS_REJECT_UNAUTHORIZED)$",
    re.IGNORECASE,
)
_PROVIDER_KEYS: Final = frozenset({"id", "provider", "providers", "targets", "cheap_provider"})
# A provider id that calls a remote service itself: promptfoo posts the prompt (a webhook: the prompt and
# its variables) there. Listed whatever the host.
_REMOTE_IDS: Final = ("webhook:", "http://", "https://", "ws://", "wss://")
# Keys whose string promptfoo runs as JavaScript unless it is a file:// reference (an output or vars
# transform, an http provider's request and response functions, a derived metric's expression).
_INLINE_CODE_KEYS: Final = frozenset({"transform", "transformVars", "postprocess", "contextTransform",
                                      "transformResponse", "transformRequest", "responseParser",
                                      "sessionParser", "validateStatus"})  # fmt: skip
_CODE_PREFIXES: Final = ("exec:", "python:", "package:")
_DATA_SUFFIXES: Final = frozenset({".txt", ".md", ".j2", ".csv", ".tsv", ".yaml", ".yml", ".json", ".jsonl"})
_CONFIG_SUFFIXES: Final = (".yaml", ".yml", ".json")
# What promptfoo's parseFileUrl and parsePathOrGlob take as code before a ':function' (isJavascriptFile, .py…)
_RUNNABLE: Final = frozenset({".js", ".cjs", ".mjs", ".ts", ".cts", ".mts", ".py", ".go", ".rb"})
# Files Python or Node would run or import: in a study folder (on sys.path for a `type: python` entry or
# a generator promptfoo starts there) a `yaml.py` or a `grounding_eval/` shadows a library or the pack.
_CODE_SUFFIXES: Final = frozenset({".py", ".pyc", ".pyo", ".pyw", ".pyd", ".so", ".pth", ".cjs", ".js", ".mjs",
                                   ".cts", ".mts", ".ts", ".node"})  # fmt: skip
_PACK_FOLDERS: Final = ("assertions/", "providers/")  # a study's copies of the pack's entry files, only
# What a package manager reads beside package.json: a lockfile's `resolved` URL, a registry setting or a
# pnpm hook decides where `npm install` (the README's next step) fetches promptfoo from, whatever
# package.json pins. init writes none of them but the study's .npmrc (its template, checked byte for byte),
# so share leaves them out and bundle check refuses them; the receiver's own install resolves package.json.
_PACKAGE_MANAGER_FILES: Final = frozenset({"package-lock.json", "npm-shrinkwrap.json", "yarn.lock", ".yarnrc",
                                           ".yarnrc.yml", "pnpm-lock.yaml", "bun.lock", "bun.lockb",
                                           ".pnpmfile.cjs", ".npmrc"})  # fmt: skip


def is_config_member(name: str) -> bool:
    """Whether a bundle member is one of the study's configs (YAML or JSON under ``study/``)."""
    return name.startswith("study/") and PurePosixPath(name).suffix.lower() in _CONFIG_SUFFIXES


def name_problem(name: str) -> str | None:
    """Why the member ``name`` must not be in a bundle whatever it holds, or ``None``: a code file that is
    not one of the pack's entry files or the generator ``init`` writes (checked byte for byte once read,
    :func:`entry_problem`), or any other file in the study's ``assertions/`` or ``providers/`` but a
    providers YAML or JSON file (``-r file://providers/live.yaml``, data whose endpoints are listed), or a
    package manager's lockfile or settings (:func:`is_package_manager_file`). Names are compared case-folded:
    on a file system that ignores case ``Assertions/x.py`` is ``assertions/x.py``."""
    from grounding_eval.share.scaffold import ENTRY_FILES

    folded = name.casefold()
    relative = folded.removeprefix("study/") if folded.startswith("study/") else None
    if is_package_manager_file(name):
        return (
            "a package manager's lockfile or settings, which init does not write: npm, yarn or pnpm would "
            "read it and could fetch promptfoo from the sender's host (share leaves such files out)"
        )
    if relative in ENTRY_FILES or relative == "generate.py":
        return None
    providers_config = (
        relative is not None and relative.startswith("providers/") and relative.endswith(_CONFIG_SUFFIXES)
    )
    if relative is not None and relative.startswith(_PACK_FOLDERS) and not providers_config:
        return (
            f"not one of the pack's entry files, yet in the study's {relative.split('/')[0]}/ (promptfoo puts "
            "that folder on sys.path, so any file there can stand in for a module the pack imports)"
        )
    if PurePosixPath(folded).suffix in _CODE_SUFFIXES:
        return (
            "a code file the pack does not write: a study runs the pack's own code only (Python puts the "
            "study folder on sys.path, so even an unreferenced module can shadow the pack or a library)"
        )
    return None


def is_package_manager_file(name: str) -> bool:
    """Whether the bundle member ``name`` is a package manager's lockfile or settings (case-folded, in any
    folder) other than the study's own ``.npmrc``, which init writes from the pack's template."""
    folded = name.casefold()
    return PurePosixPath(folded).name in _PACKAGE_MANAGER_FILES and folded != "study/.npmrc"


def entry_problem(name: str, sha256: str) -> str | None:
    """Why the study member ``name`` (hashed ``sha256``) must not be run, or ``None``: a copy of one of the
    pack's entry files that differs from the installed grounding-eval's."""
    from grounding_eval.resources import pack_file, sha256_file
    from grounding_eval.share.scaffold import ENTRY_FILES, TEMPLATE_FILES, generator_sha256s, template_sha256

    if not name.casefold().startswith("study/"):
        return None
    relative = name.casefold().removeprefix("study/")
    if relative == "generate.py":
        if sha256 in generator_sha256s():
            return None
        return (
            "differs from every generate.py grounding-eval init writes (edited, or written by another "
            "version): promptfoo would run it, with the study folder on sys.path"
        )
    if relative in TEMPLATE_FILES:
        if sha256 == template_sha256(relative):
            return None
        return (
            f"differs from the {relative} grounding-eval init writes (edited, or written by another version): "
            "npm and npx would read the sender's (another promptfoo, an install script, a preload)"
        )
    if relative not in ENTRY_FILES:
        return None
    if sha256_file(pack_file(*relative.split("/"))) == sha256:
        return None
    return (
        f"differs from the installed grounding-eval's {relative} (edited, or written by another version): "
        "a study runs the pack's entry code, never its own under the pack's name"
    )


def config_findings(name: str, document: Any, members: dict[str, str]) -> list[str]:
    """One line per endpoint and code reference the config ``name`` (parsed: ``document``) makes, as
    ``bundle check`` prints them; ``members`` maps each study member to its SHA-256 (to tell the pack's
    generator from one edited)."""
    folder = posixpath.dirname(name.removeprefix("study/"))
    out: list[str] = []
    for where, kind, value in _walk(document, ""):
        if kind == "endpoint":
            host = _host(value)
            if host is not None and not _official(host):
                out.append(f"endpoint: {name}: {where} = {clip(value, 80)} (not a model provider's API host)")
        elif kind == "remote":
            host = _host(value.removeprefix("webhook:"))
            webhook = value.startswith("webhook:")
            what = "a webhook provider: promptfoo posts to it" if webhook else "a URL as a provider"
            if host is None or not _official(host):
                what += ", not a model provider's API host"
            out.append(f"endpoint: {name}: {where} = {clip(value, 80)} ({what})")
        elif kind == "written":
            out.append(
                f"path: {name}: {where} = {clip(value, 80)} (a file the pack writes, outside the study folder: "
                "refused when run, unless you list its folder in $GROUNDING_EVAL_WRITE_DIRS)"
            )
        elif kind == "webhook":
            out.append(f"endpoint: {name}: {where} = {clip(value, 80)} (a webhook assertion: promptfoo posts "
                       "each output to it)")  # fmt: skip
        elif kind == "inline":
            out.append(f"code: {name}: {where}: an inline {value} assertion")
        elif kind == "inline-js":
            out.append(f"code: {name}: {where}: inline JavaScript ({clip(value, 60)})")
        elif not _own(value, folder, members, first_colon=kind == "code-first-colon"):
            out.append(f"code: {name}: {where} = {clip(value, 80)}")
    return out


def _walk(value: Any, where: str, key: str = "") -> Iterator[tuple[str, str, str]]:
    """``(where, kind, value)`` for each endpoint (``endpoint``), code reference (``code``) and inline code
    (``inline``: the language) in a parsed config; a test's ``vars`` are data, never walked."""
    if isinstance(value, dict):
        kind, code = value.get("type"), value.get("value")
        if (
            kind in ("javascript", "python")
            and isinstance(code, str)
            and not code.lstrip().startswith("file://")
        ):
            yield f"{where}.value".lstrip("."), "inline", str(kind)
        if kind == "webhook" and isinstance(code, str):
            yield f"{where}.value".lstrip("."), "webhook", code.strip()
            value = {k: v for k, v in value.items() if k != "value"}
        for k, v in value.items():
            if str(k) != "vars":
                # An assertion's value is split at its first ':' by promptfoo, every other reference at its last
                first = str(k) == "value" and isinstance(kind, str)
                yield from _walk(v, f"{where}.{k}".lstrip("."), "value:first-colon" if first else str(k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk(v, f"{where}[{i}]", key)
    elif isinstance(value, str):
        text = value.strip()
        if key in WRITTEN_KEYS:
            if (
                text.startswith(("/", "~", "\\"))
                or re.match(r"[A-Za-z]:", text)
                or ".." in re.split(r"[\\/]", text)
            ):
                yield where, "written", text
        elif key in _PROVIDER_KEYS and text.lower().startswith(_REMOTE_IDS):
            yield where, "remote", text
        elif key in _ENDPOINT_KEYS or ENV_ENDPOINT.search(key):
            yield where, "endpoint", text
        elif key in _INLINE_CODE_KEYS and text and not text.startswith(("file://", "package:")):
            yield where, "inline-js", text
        elif text.startswith("file://") or text.startswith(_CODE_PREFIXES):
            yield where, "code-first-colon" if key == "value:first-colon" else "code", text


def _host(value: str) -> str | None:
    split = urlsplit(value if "://" in value else f"https://{value}")
    return split.hostname or None


def _official(host: str) -> bool:
    from grounding_eval.share.redact import policy

    for entry in policy()["bundle"]["official_api_hosts"]:
        entry = str(entry).lower()
        if host == entry or (entry.startswith(".") and host.endswith(entry)):
            return True
    return False


def _own(reference: str, folder: str, members: dict[str, str], *, first_colon: bool) -> bool:
    """Whether a code reference is the pack's own: a data file, a pack entry file (checked byte for byte
    by :func:`entry_problem`), or the generator ``init`` writes, unedited.

    The file is found as promptfoo 0.123.1 finds it: an assertion's ``file://path:function`` is cut at the
    *first* ':' (``runAssertion``), every other reference (a provider, a generator, a scoring function) at
    the last, and only when what precedes it is a code file (``parseFileUrl``, ``parsePathOrGlob``) — so
    ``file://evil.py:x/../assertions/grounding.cjs:verifier`` is ``evil.py`` in an assertion."""
    from grounding_eval.share.scaffold import ENTRY_FILES

    if not reference.startswith("file://"):
        return False
    path = reference.removeprefix("file://")
    if first_colon:
        path = path.split(":", 1)[0]
    elif ":" in path and PurePosixPath(path.rsplit(":", 1)[0]).suffix.lower() in _RUNNABLE:
        path = path.rsplit(":", 1)[0]
    if PurePosixPath(path).suffix.lower() in _DATA_SUFFIXES and ":" not in path:
        return True  # a prompt, a table, a YAML file: data, not code
    relative = posixpath.normpath(posixpath.join(folder, path)).casefold()
    if relative in ENTRY_FILES:
        return f"study/{relative}" in {m.casefold() for m in members}
    return relative == "generate.py" and any(m.casefold() == "study/generate.py" for m in members)
