"""``grounding-eval init DIR``: a study folder that runs on the installed pack, not on a checkout.

The folder gets what promptfoo must read as files (its config, the generation prompts, the entry files
it loads by path, ``package.json``, ``.npmrc`` and ``.env``) and nothing else: rubrics, templates, schemas and the
sample data are read from the installed package through :func:`grounding_eval.resources.pack_root`.
The entry files are the pack's own (``assertions/*.py``, ``assertions/grounding.cjs``,
``providers/replay.py``), copied byte for byte, so a study grades with exactly the code the pack's
configs use; the test generator is three lines written here (the pack's own finds the pack by its path).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Final

from grounding_eval.calls import CALLS
from grounding_eval.data.methods import ROUNDS
from grounding_eval.errors import DataError
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


@dataclass(frozen=True)
class Study:
    """One evaluation ``init`` can scaffold: its prompts, graders and test generator."""

    description: str
    prompts: tuple[tuple[str, str], ...]  # (pack file, label)
    asserts: str  # the defaultTest block's YAML
    generator: str  # the generator module in grounding_eval
    generator_config: str  # YAML lines under the test's config
    sample: str  # the pack's sample dataset folder (under datasets/)


# The composite of each judge rubric (the methods document's round formulas, grounding_eval.scoring).
_SCORING: Final = {c.rubric: c.name for c in CALLS.values() if c.kind == "scoring"}
_PROMPTS: Final = {"C0": "prompts/c0.txt", "C1": "prompts/c1.txt", "C1.5": "prompts/c1_5.txt"}


def _round(round_id: str) -> Study:
    """A round as the pack's configs/round*.yaml run it: its conditions, rubric and composite."""
    spec = ROUNDS[round_id]
    citations = (  # Round 3's safety checks cover citations; elsewhere the default, information, holds
        "\n        citation_check: hard   # an invented section or another state's law is a safety No"
        if spec.citation_check == "hard"
        else ""
    )
    return Study(
        description=spec.description,
        prompts=tuple((_PROMPTS[c], c) for c in spec.conditions),
        asserts=f"""  assert:
    - type: javascript
      value: file://assertions/grounding.cjs:verifier
      config:
        liveness: offline   # GROUNDING_EVAL_LIVENESS=live switches to live URL checks
        __SNAPSHOT__{citations}
    - type: javascript
      value: file://assertions/grounding.cjs:judge
      config:
        rubric: {spec.rubric}
        provider: "replay:{{dataset}}/judge_replies/{spec.rubric}.yaml"   # GROUNDING_EVAL_JUDGE_PROVIDER: a live judge
  assertScoringFunction: file://assertions/grounding.cjs:{_SCORING[spec.rubric]}
""",
        generator="grounding_eval.promptfoo.round_tests",
        generator_config=f'round: "{round_id}"',
        sample="sample",
    )


def _worker_assert(call: str, config: dict[str, str]) -> str:
    """One assertion graded by the warm workers of assertions/grounding.cjs, as the pack's configs do."""
    lines = "".join(f"        {key}: {value}\n" for key, value in config.items())
    head = f"  assert:\n    - type: javascript\n      value: file://assertions/grounding.cjs:{call}\n"
    return f"{head}      config:\n{lines}"


STUDIES: Final = MappingProxyType(
    {
        **{round_id: _round(round_id) for round_id in ROUNDS},
        "factuality": Study(
            description="Factual accuracy: C1.5 answers judged claim by claim against the articles shown",
            prompts=(("prompts/c1_5.txt", "C1.5"),),
            asserts=_worker_assert("factuality", {
                "provider": '"replay:{dataset}/factuality/judge_replies.yaml"',
                "cheap_provider": '"replay:{dataset}/factuality/cheap_replies.yaml"',
                "review_queue": "results/factuality_review_queue.jsonl",
                "human_queue": "results/factuality_human_verification.jsonl",
            }),
            generator="grounding_eval.promptfoo.round_tests",
            generator_config='round: "3"\n      ids: [hr-or-retaliation-01, hr-wv-military-01, hr-il-lockout-01, '
            "hr-oh-evict-01, hr-mi-deposit-01]",
            sample="sample",
        ),
        "docs-qa": Study(
            description="Docs-QA: Correct, Grounded, Complete, Honest about gaps; pass iff Correct and Grounded",
            prompts=(("datasets/docs_qa/prompt.txt", "docs-qa"),),
            asserts=_worker_assert("docs_qa", {
                "provider": '"replay:{dataset}/grader_replies.yaml"   # GROUNDING_EVAL_JUDGE_PROVIDER: a live grader'
            }),
            generator="grounding_eval.promptfoo.docs_qa_tests",
            generator_config="",  # the docs-QA generator needs a dataset: the pack's sample below
            sample="docs_qa",
        ),
    }
)  # fmt: skip


def _config(study_id: str, study: Study, dataset: Path | None) -> str:
    prompts = "".join(
        f"  - id: file://prompts/{Path(p).name}\n    label: {label}\n" for p, label in study.prompts
    )
    if dataset is None and study.sample == "docs_qa":  # a relative folder is the installed pack's
        data_line = "dataset: datasets/docs_qa   # the pack's sample; your data: /path/to/your/docs-qa-data"
        snapshot = ""
    elif dataset is None:
        data_line = f"# dataset: /path/to/your/data   # default: the pack's sample ({study.sample}), installed with it"
        snapshot = (
            "liveness_snapshot: liveness_snapshot.fixture.csv   # recorded results for the sample's URLs"
        )
    else:
        data_line = f"dataset: {json.dumps(str(dataset))}"
        snapshot = "# liveness_snapshot: my_snapshot.csv   # optional recorded liveness results"
    config_lines = "\n      ".join(line for line in (data_line, study.generator_config) if line)
    return f"""# grounding-eval study ({study_id}), written by `grounding-eval init`. Runs on the installed
# grounding-eval: rubrics, judge templates and the sample data come from the package, not from files here.
# Offline on the sample until `dataset:` below (or $GROUNDING_EVAL_DATASET) names your data.
description: {json.dumps(f"grounding-eval study: {study.description}")}

prompts:
{prompts}
providers:
  - id: file://providers/replay.py:call_api
    label: recorded-answers
    # Recorded answers (fixtures) from the dataset's recorded_answers.yaml. Live models: add
    # -r with a providers file of your own (the pack's docs: docs/how-to/run-live.md).

# Checks every grounding-eval assertion (judge provider and key, rubric, directory, allowlist,
# recorded judge files) before any model is called: a problem stops the eval there.
extensions:
  - file://assertions/grounding.cjs:beforeAll

defaultTest:
{study.asserts.replace("__SNAPSHOT__", snapshot)}
tests:
  - path: file://generate.py:generate_tests
    config:
      {config_lines}

evaluateOptions:
  maxConcurrency: 4
"""


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
