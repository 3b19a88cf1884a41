"""``grounding-eval init DIR``: a study folder that runs on the installed pack, not on a checkout.

The folder gets what promptfoo must read as files (its config, the generation prompts, the entry files
it loads by path, ``package.json``, ``.npmrc`` and ``.env``) and nothing else: rubrics, templates, schemas and the
sample data are read from the installed package through :func:`grounding_eval.resources.pack_root`.
The entry files are the pack's own (``assertions/*.py``, ``assertions/grounding.cjs``,
``providers/replay.py``), copied byte for byte, so a study grades with exactly the code the pack's
configs use; the test generator is three lines written here (the pack's own finds the pack by its path).
The config comes from the definition every shipped config is written from (:mod:`grounding_eval.promptfoo.configs`).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from types import MappingProxyType
from typing import Final

from grounding_eval.errors import DataError
from grounding_eval.promptfoo.configs import EVALUATIONS, Evaluation, render_study
from grounding_eval.resources import pack_file

__all__ = [
    "ENTRY_FILES",
    "STUDIES",
    "TEMPLATE_FILES",
    "Study",
    "describe",
    "generator_sha256s",
    "grounding_eval_command",
    "scaffold",
    "template_sha256",
]

_TEMPLATES: Final = Path(__file__).with_name("templates")
ENTRY_FILES: Final = (
    "assertions/grounding.cjs",
    "assertions/judges.cjs",
    "assertions/calls.json",
    "assertions/grounding.py",
    "assertions/verifier.py",
    "assertions/judge.py",
    "assertions/composite.py",
    "assertions/factuality.py",
    "assertions/docs_qa.py",
    "providers/replay.py",
)


Study = Evaluation  # one evaluation ``init`` can scaffold: its prompts, graders and test generator
STUDIES: Final = MappingProxyType({study_id: e for study_id, e in EVALUATIONS.items() if e.study})


def _config(study_id: str, study: Study, dataset: Path | None) -> str:
    """The study's promptfooconfig.yaml: the pack's one config template, study flavour."""
    assert STUDIES[study_id] is study
    return render_study(study_id, dataset)


def _generator(study: Study) -> str:
    return f'''"""promptfoo test generator of this study (written by `grounding-eval init`): the installed pack's."""

from typing import Any


def generate_tests(config: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """One promptfoo test per selected item of the study's dataset (the pack's sample by default)."""
    from {study.generator} import generate_tests as generate
    from grounding_eval.resources import pack_root

    return generate(config, pack_root=pack_root())
'''


# Study files init writes from a template unchanged, so a received study's must be byte for byte these
# (``bundle check``): a package.json could pin another promptfoo or add an install script, an .npmrc give
# every Node npx starts a preload of the sender's.
TEMPLATE_FILES: Final = MappingProxyType({"package.json": "package.json", ".npmrc": "npmrc"})


def template_sha256(name: str) -> str:
    """The SHA-256 of the study file ``name`` (a key of :data:`TEMPLATE_FILES`) as ``init`` writes it."""
    import hashlib

    return hashlib.sha256(_template(TEMPLATE_FILES[name]).encode()).hexdigest()


def generator_sha256s() -> frozenset[str]:
    """The SHA-256 of each test generator ``init`` writes (``generate.py``): ``bundle check`` tells the
    pack's from one a sender edited."""
    import hashlib

    return frozenset(hashlib.sha256(_generator(study).encode()).hexdigest() for study in STUDIES.values())


def _template(name: str) -> str:
    return (_TEMPLATES / name).read_text(encoding="utf-8")


def grounding_eval_command(study: Path) -> str:
    """How the study's README calls grounding-eval, so that each command works as written from the study
    folder: the ``grounding-eval`` script beside the Python that runs ``init`` (the one ``.env`` names),
    relative to the folder; or that Python's ``-m grounding_eval`` where it has no such script."""
    script = Path(sys.executable).parent / "grounding-eval"
    if not script.is_file():
        return f"{sys.executable} -m grounding_eval"
    relative = os.path.relpath(script, study.resolve())
    return relative if "/" in relative else f"./{relative}"


def describe(directory: Path, study_id: str, dataset: Path | None, written: list[Path]) -> list[str]:
    """What ``init`` made, in plain words: the folder, what its files are for, and what to run next."""
    study = STUDIES[study_id]
    pins = json.loads(_template("package.json"))["devDependencies"]
    data = (
        f"your dataset {dataset}" if dataset is not None else "the pack's sample data until you set dataset:"
    )
    lines = [
        f"Made a study in {directory} ({len(written)} files): {study.description}.",
        f"  promptfooconfig.yaml     promptfoo's config: the prompts, the graders and the tests ({data})",
        f"  prompts/                 the generation prompts ({', '.join(label for _, label in study.prompts)})",
        "  generate.py              the test generator: one test per dataset item, read by the installed pack",
        "  assertions/, providers/  the pack's graders and recorded-answer provider, as promptfoo loads them",
        f"  package.json             promptfoo {pins['promptfoo']} and Node {pins['node']}, as the pack pins them",
        "  .env                     promptfoo's settings (no telemetry, a local database) and this Python",
        "  .npmrc                   keeps promptfoo's one telemetry request from leaving (npx, npm run)",
        "  README.md                the commands that run, report on and share the study",
    ]
    if any(path.name == "liveness_snapshot.fixture.csv" for path in written):
        lines.append("  liveness_snapshot.fixture.csv  recorded URL checks of the sample's answers")
    return [
        *lines,
        "Next:",
        f"  cd {shlex.quote(str(directory))}",
        "  npm install",
        "  npx promptfoo eval -c promptfooconfig.yaml -o results/results.json",
    ]


def scaffold(directory: Path, study_id: str, dataset: Path | None, *, force: bool) -> list[Path]:
    """Write the study folder; returns the files written.

    Raises:
        DataError: an unknown study, a dataset that is not a folder, or a file that exists (without
            ``force``): nothing is written then.
    """
    if study_id not in STUDIES:
        raise DataError("--round", f"unknown study {study_id!r} (one of {', '.join(STUDIES)})")
    study = STUDIES[study_id]
    if dataset is not None and not dataset.is_dir():
        raise DataError(dataset, "not a dataset folder")
    files: dict[str, bytes] = {
        "promptfooconfig.yaml": _config(study_id, study, dataset.resolve() if dataset else None).encode(),
        "generate.py": _generator(study).encode(),
        ".env": _template("env").replace("__PYTHON__", sys.executable).encode(),
        "package.json": _template("package.json").encode(),
        ".npmrc": _template("npmrc").encode(),
        "README.md": _template("README.md")
        .replace("__STUDY__", study_id)
        .replace("__GROUNDING_EVAL__", grounding_eval_command(directory))
        .replace("__STUDY_NAME__", directory.resolve().name)
        .encode(),
        ".gitignore": b"node_modules/\n.promptfoo/\n.cache/\nresults/\n",
    }
    for pack_path, _label in study.prompts:
        files[f"prompts/{Path(pack_path).name}"] = pack_file(*pack_path.split("/")).read_bytes()
    for entry in ENTRY_FILES:
        files[entry] = pack_file(*entry.split("/")).read_bytes()
    if dataset is None and study.sample == "sample":
        files["liveness_snapshot.fixture.csv"] = pack_file(
            "datasets", "sample", "liveness_snapshot.fixture.csv"
        ).read_bytes()
    existing = [name for name in files if (directory / name).exists() or (directory / name).is_symlink()]
    if existing and not force:
        raise DataError(
            directory / existing[0],
            f"exists ({len(existing)} of the study's files do): use --force to overwrite",
        )
    written = []
    for name, content in files.items():
        path = directory / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_symlink():
            path.unlink()  # --force replaces a link itself, never the file it points to
        path.write_bytes(content)
        written.append(path)
    return written
