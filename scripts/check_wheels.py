"""Check that the pack installs from wheels alone on every supported CPython and platform (issue 42).

For each CPython (3.11 to 3.14) and platform (Linux x86_64 and aarch64, macOS arm64, Windows x86_64), every
requirement the pack brings in — the pins of pyproject.toml (run-time, every extra, the build system) and
what they require in turn, with each requirement's environment markers read for that Python on that
platform — must have a release that the requirement allows, whose requires-python admits that Python and
whose wheel tags that Python and platform accept (``pip install --only-binary=:all:`` would install it).

Only the package index's JSON page of each project is read (PEP 691), once for every combination: the
check takes seconds. pip itself, asked the same question for each combination (``pip install --dry-run
--only-binary=:all: --python-version ... --platform ...``), took 8.5 minutes here: the index this machine
reaches serves no wheel metadata of its own (PEP 658) and no cache headers, so pip downloads each
platform's wheels whole to read their dependencies, every time. What a requirement requires is read from
the distributions installed in the running environment (the project's venv, which holds every extra), so
run it with the venv's Python after ``scripts/install``. A requirement that only applies elsewhere (a
Windows-only library, say) is checked for a wheel too; its own requirements are not followed, which
the output says.

pip's configuration is not read: this machine's pip also looks in local folders that a user's pip does not
have, so the check asks PyPI, as a user's pip does (``--index-url`` to ask another index).

Usage::

    .venv/bin/python scripts/check_wheels.py [--python 3.13 ...] [--platform linux-aarch64 ...]

Exit status: 0 every combination installs from wheels; 1 a blocker (one line per combination, naming
each and what requires it); 2 the index could not be read, one line naming the problem.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import ssl
import sys
import tomllib
import urllib.error
import urllib.request
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.tags import Tag, compatible_tags, cpython_tags, mac_platforms
from packaging.utils import (
    InvalidWheelFilename,
    NormalizedName,
    canonicalize_name,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

REPO = Path(__file__).resolve().parents[1]
PYPI = "https://pypi.org/simple"
DEADLINE = 60.0  # seconds for one index page

PYTHONS = ("3.11", "3.12", "3.13", "3.14")
# Linux: glibc 2.28 and later (RHEL 8, Debian 10, Ubuntu 20.04 and every later distribution) — a
# manylinux wheel for an older glibc runs there too. macOS: 14 (Sonoma) and every older version's wheels.
_GLIBC = [f"manylinux_2_{minor}" for minor in range(28, 4, -1)]
PLATFORMS: dict[str, tuple[list[str], dict[str, str]]] = {
    "linux-x86_64": (
        [f"{p}_x86_64" for p in _GLIBC]
        + ["manylinux2014_x86_64", "manylinux2010_x86_64", "manylinux1_x86_64"],
        {
            "sys_platform": "linux",
            "platform_system": "Linux",
            "platform_machine": "x86_64",
            "os_name": "posix",
        },
    ),
    "linux-aarch64": (
        [f"{p}_aarch64" for p in _GLIBC[:12]] + ["manylinux2014_aarch64"],
        {
            "sys_platform": "linux",
            "platform_system": "Linux",
            "platform_machine": "aarch64",
            "os_name": "posix",
        },
    ),
    "macos-arm64": (
        list(mac_platforms((14, 0), "arm64")),
        {
            "sys_platform": "darwin",
            "platform_system": "Darwin",
            "platform_machine": "arm64",
            "os_name": "posix",
        },
    ),
    "windows-amd64": (
        ["win_amd64"],
        {"sys_platform": "win32", "platform_system": "Windows", "platform_machine": "AMD64", "os_name": "nt"},
    ),
}


class CheckError(Exception):
    """The index could not be read, or pyproject.toml names what is not a requirement."""


@dataclass(frozen=True)
class Target:
    """One CPython on one platform: the wheel tags it accepts and its environment markers."""

    python: str  # "3.13"
    platform: str  # a key of PLATFORMS

    @property
    def version(self) -> tuple[int, int]:
        major, minor = self.python.split(".")
        return int(major), int(minor)

    def tags(self) -> frozenset[Tag]:
        platforms = PLATFORMS[self.platform][0]
        abi = "cp{}{}".format(*self.version)
        return frozenset(
            [
                *cpython_tags(self.version, abis=[abi, "abi3", "none"], platforms=platforms),
                *compatible_tags(self.version, abi, platforms=platforms),
            ]
        )

    def markers(self, extra: str = "") -> dict[str, str]:
        return {
            **PLATFORMS[self.platform][1],
            "python_version": self.python,
            "python_full_version": f"{self.python}.0",
            "implementation_name": "cpython",
            "platform_python_implementation": "CPython",
            "extra": extra,
        }


@dataclass
class Need:
    """A requirement a target needs, and who asked for it."""

    requirement: Requirement
    parents: list[str]  # the projects that require it; "pyproject.toml" for a pin
    followed: bool = True  # False: not installed here, so what it requires in turn was not read


@dataclass
class Outcome:
    target: Target
    blockers: list[str] = field(default_factory=list)
    unfollowed: list[str] = field(default_factory=list)


def pinned_requirements(pyproject: Path) -> list[Requirement]:
    """Every requirement pyproject.toml names: the build system's, the dependencies and each extra's."""
    data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    project = data["project"]
    names = [*data["build-system"]["requires"], *project["dependencies"]]
    for extra in project.get("optional-dependencies", {}).values():
        names.extend(extra)
    try:
        return [Requirement(r) for r in dict.fromkeys(names)]
    except InvalidRequirement as error:
        raise CheckError(f"{pyproject}: {error}") from None


def _applies(requirement: Requirement, target: Target, extras: Iterable[str]) -> bool:
    if requirement.marker is None:
        return True
    return any(requirement.marker.evaluate(target.markers(e)) for e in ["", *extras])


def needs(target: Target, pins: list[Requirement]) -> list[Need]:
    """Every requirement ``target`` needs: ``pins`` whose markers hold there, and what they require in
    turn as the installed distributions say (each project once, with the extras asked of it)."""
    found: dict[NormalizedName, Need] = {}
    extras: dict[NormalizedName, set[str]] = {}
    queue = [Need(r, ["pyproject.toml"]) for r in pins if _applies(r, target, ())]
    while queue:
        need = queue.pop(0)
        name = canonicalize_name(need.requirement.name)
        asked = set(need.requirement.extras)
        if name in found:
            found[name].parents.extend(p for p in need.parents if p not in found[name].parents)
            if asked <= extras[name]:
                continue
        extras.setdefault(name, set()).update(asked)
        found.setdefault(name, need)
        try:
            requires = metadata.distribution(name).requires or []
        except metadata.PackageNotFoundError:
            found[name].followed = False
            continue
        for line in requires:
            requirement = Requirement(line)
            if _applies(requirement, target, extras[name]):
                queue.append(Need(requirement, [need.requirement.name]))
    return list(found.values())


@dataclass(frozen=True)
class Wheel:
    requires_python: SpecifierSet | None
    tags: frozenset[Tag]


def read_index(name: str, index: str, context: ssl.SSLContext | None) -> dict[Version, list[Wheel]]:
    """A project's files on the index (its PEP 691 JSON page), its wheels grouped by version; yanked
    files left out."""
    url = f"{index.rstrip('/')}/{canonicalize_name(name)}/"
    request = urllib.request.Request(url, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    try:
        with urllib.request.urlopen(request, timeout=DEADLINE, context=context) as response:
            page = json.load(response)
    except (OSError, urllib.error.URLError, ValueError) as error:
        raise CheckError(f"{url}: {error}") from None
    releases: dict[Version, list[Wheel]] = {}
    for entry in page.get("files", []):
        if entry.get("yanked") or not entry["filename"].endswith(".whl"):
            continue
        try:
            _, version, _, tags = parse_wheel_filename(entry["filename"])
        except (InvalidWheelFilename, InvalidVersion):
            continue
        spec = entry.get("requires-python")
        try:
            requires_python = SpecifierSet(spec) if spec else None
        except ValueError:
            requires_python = None
        releases.setdefault(version, []).append(Wheel(requires_python, tags))
    return releases


def has_wheel(requirement: Requirement, releases: dict[Version, list[Wheel]], target: Target) -> bool:
    """Whether a release ``requirement`` allows has a wheel ``target`` installs (its tags and its
    requires-python)."""
    accepted = target.tags()
    python = Version(f"{target.python}.0")
    for version, files in releases.items():
        if version.is_prerelease and not requirement.specifier.prereleases:
            continue  # as pip: a pre-release only where the requirement names one
        if not requirement.specifier.contains(version, prereleases=True):
            continue
        for wheel in files:
            if wheel.requires_python is not None and python not in wheel.requires_python:
                continue
            if wheel.tags & accepted:
                return True
    return False


def check(targets: list[Target], pins: list[Requirement], index: str, workers: int = 8) -> list[Outcome]:
    """Each target's blockers: the requirements it needs that no wheel on ``index`` meets."""
    wanted = {t: needs(t, pins) for t in targets}
    names = sorted({canonicalize_name(n.requirement.name) for ns in wanted.values() for n in ns})
    cafile = os.environ.get("PIP_CERT") or os.environ.get("SSL_CERT_FILE")
    context = ssl.create_default_context(cafile=cafile) if index.startswith("https:") else None
    with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as pool:
        pages = dict(zip(names, pool.map(lambda n: read_index(n, index, context), names), strict=True))
    outcomes = []
    for target, target_needs in wanted.items():
        outcome = Outcome(target)
        for need in target_needs:
            if not has_wheel(need.requirement, pages[canonicalize_name(need.requirement.name)], target):
                outcome.blockers.append(f"{need.requirement} (required by {', '.join(need.parents)})")
            if not need.followed:
                outcome.unfollowed.append(str(need.requirement))
        outcomes.append(outcome)
    return outcomes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--python", action="append", choices=PYTHONS, help="a CPython (default: every one)")
    parser.add_argument("--platform", action="append", choices=sorted(PLATFORMS), help="default: every one")
    parser.add_argument("--pyproject", type=Path, default=REPO / "pyproject.toml")
    parser.add_argument("--index-url", default=PYPI, help=f"the package index to read (default: {PYPI})")
    args = parser.parse_args(argv)
    targets = [Target(p, q) for p in (args.python or PYTHONS) for q in (args.platform or sorted(PLATFORMS))]
    try:
        pins = pinned_requirements(args.pyproject)
        outcomes = check(targets, pins, args.index_url)
    except (OSError, KeyError, tomllib.TOMLDecodeError, CheckError) as error:
        print(f"check_wheels: error: {error}", file=sys.stderr)
        return 2
    for outcome in outcomes:
        t = outcome.target
        verdict = "wheels only" if not outcome.blockers else "BLOCKED: " + "; ".join(outcome.blockers)
        print(f"CPython {t.python}  {t.platform:<14} {verdict}")
    unfollowed = sorted({u for o in outcomes for u in o.unfollowed})
    if unfollowed:
        print(f"not installed here, so their own requirements were not read: {', '.join(unfollowed)}")
    blocked = sum(1 for o in outcomes if o.blockers)
    print(
        f"{len(outcomes) - blocked} of {len(outcomes)} CPython and platform combinations install from wheels "
        f"alone ({len(pins)} pins of {args.pyproject.name} and what they require)"
    )
    return 1 if blocked else 0


if __name__ == "__main__":
    sys.exit(main())
