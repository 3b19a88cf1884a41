"""Installing the pack adds no top-level ``tests`` package to the user's environment (issue 39, finding 8).

citeurl ships one (and fast-diff-match-patch, in an environment that holds it); ``grounding-eval doctor --fix`` (run by ``scripts/install``)
removes exactly the files their ``RECORD`` lists. Read through :mod:`importlib.metadata`, as pip does.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from grounding_eval.environment import foreign_packages, remove_foreign


def test_no_dependency_owns_a_top_level_tests_package() -> None:
    """The environment this suite runs in, as installed (scripts/install): every distribution's RECORD."""
    owners = [f"{p.distribution} {p.version} ({len(p.files)} files)" for p in foreign_packages()]
    assert not owners, (
        f"a dependency installed a top-level 'tests' package: {owners}; run grounding-eval doctor --fix"
    )


def _site(tmp_path: Path) -> Path:
    """A site-packages with two distributions: one shipping ``tests/`` beside its own package, one not."""
    site = tmp_path / "site"
    for name, files in (
        ("libwithtests", ["libwithtests/__init__.py", "tests/__init__.py", "tests/test_a.py",
                          "tests/__pycache__/test_a.cpython-311.pyc"]),
        ("clean", ["clean/__init__.py"]),
    ):  # fmt: skip
        info = site / f"{name}-1.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
        (info / "RECORD").write_text("".join(f"{f},,\n" for f in [*files, f"{info.name}/RECORD"]))
        for file in files:
            (site / file).parent.mkdir(parents=True, exist_ok=True)
            (site / file).write_text("")
    (site / "tests" / "mine.py").write_text("# a file no RECORD lists: never removed")
    return site


def test_the_fix_removes_only_what_the_record_lists(tmp_path: Path) -> None:
    site = _site(tmp_path)
    (found,) = foreign_packages(path=[str(site)])
    assert (found.distribution, found.package, len(found.files)) == ("libwithtests", "tests", 3)
    assert remove_foreign([found]) == ["removed 3 files of libwithtests 1.0's top-level 'tests' package"]
    assert sorted(p.relative_to(site).as_posix() for p in (site / "tests").rglob("*")) == ["tests/mine.py"]
    assert (site / "libwithtests" / "__init__.py").exists() and not foreign_packages(path=[str(site)])


def test_doctor_says_what_it_finds() -> None:
    done = subprocess.run([sys.executable, "-m", "grounding_eval", "doctor"], capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    clean = not foreign_packages()
    assert done.returncode == (0 if clean else 1), done.stderr
    assert ("OK: no dependency" in done.stdout) == clean


def _user_project(root: Path) -> Path:
    """A user's own project, as ``pip install -e .`` with setuptools leaves it: ``myproj.egg-info`` whose
    ``SOURCES.txt`` lists the project's ``tests/`` (the reviewer's reproducer)."""
    info = root / "myproj.egg-info"
    info.mkdir(parents=True)
    (info / "PKG-INFO").write_text("Metadata-Version: 2.1\nName: myproj\nVersion: 0.1\n")
    (info / "SOURCES.txt").write_text("setup.py\nmyproj/__init__.py\ntests/test_a.py\ntests/helpers.py\n")
    (root / "tests").mkdir(exist_ok=True)
    for name in ("test_a.py", "helpers.py"):
        (root / "tests" / name).write_text("# the user's own test\n")
    return root


def test_the_fix_never_touches_a_project_in_the_current_folder(tmp_path: Path) -> None:
    """``doctor --fix`` run in a user's project reads this environment's site-packages only: the project's
    ``.egg-info`` (which lists its ``tests/``) is not a distribution the fix may clean."""
    project = _user_project(tmp_path / "userproj")
    done = subprocess.run([sys.executable, "-m", "grounding_eval", "doctor", "--fix"], cwd=project,
                          capture_output=True, text=True, timeout=60, check=False)  # fmt: skip
    assert "myproj" not in done.stdout, done.stdout
    assert sorted(p.name for p in (project / "tests").iterdir()) == ["helpers.py", "test_a.py"]


def test_only_wheels_inside_the_site_folder_count(tmp_path: Path) -> None:
    """An ``.egg-info`` even in site-packages, and a ``RECORD`` entry that leads out of it, are never acted on."""
    site = _site(tmp_path)
    _user_project(site)  # an egg-info beside the wheels, listing tests/ files that exist
    outside = tmp_path / "elsewhere" / "tests"
    outside.mkdir(parents=True)
    (outside / "x.py").write_text("")
    record = site / "libwithtests-1.0.dist-info" / "RECORD"
    record.write_text(record.read_text() + "tests/../../elsewhere/tests/x.py,,\n")
    (found,) = foreign_packages(path=[str(site)])
    assert found.distribution == "libwithtests" and len(found.files) == 3
    assert all(f.is_relative_to(site / "tests") for f in found.files)
    remove_foreign([found])
    assert (outside / "x.py").exists() and (site / "tests" / "helpers.py").exists()
