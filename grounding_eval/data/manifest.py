"""A dataset's own description (``dataset.yaml``, optional), and the sizes the methods document gives.

A dataset folder may say what it is::

    # dataset.yaml
    name: partner copy, March 2026          # free text (optional)
    claims: [LHSQ-115, High-Risk-Challenge]  # the methods document's real sets this folder holds
    rounds: ["3"]                            # the rounds it is for (optional): their item files are required

A folder without ``dataset.yaml``, or without ``claims``, claims nothing (the pack's sample claims
nothing). When it claims a set, the documented sizes are checked — ``LHSQ-115``: 115 queries, round
subsets 22 (1a), 48 (1b), 10 (2, 2b); ``High-Risk-Challenge``: 192 items, of which Round 3 used 40 — and
each difference is a one-line warning (``data validate``, ``data sample`` and the test generator print
them): a partner's copy that is not the real set says so instead of passing for it. A mismatch is not
an error: a partner may knowingly run a corrected or extended set.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from grounding_eval.data.methods import REAL_SETS, RealSet
from grounding_eval.errors import DataError
from grounding_eval.files import read_yaml

__all__ = ["MANIFEST_NAMES", "Manifest", "load_manifest"]

MANIFEST_NAMES = ("dataset.yaml", "dataset.yml")


@dataclass(frozen=True)
class Manifest:
    """What ``dataset.yaml`` says (all empty when the folder has none)."""

    path: str | None = None
    name: str | None = None
    claims: tuple[str, ...] = ()
    rounds: tuple[str, ...] = ()  # the rounds the dataset is for; () = not declared

    def claimed(self, source: str) -> RealSet | None:
        """The real set this dataset claims its ``source`` file (queries, high_risk) to be, if any."""
        return next((REAL_SETS[c] for c in self.claims if REAL_SETS[c].source == source), None)


def load_manifest(root: str | Path) -> Manifest:
    """Read ``<root>/dataset.yaml`` (or ``.yml``) if there is one.

    Raises:
        DataError: both names exist, the file is outside the folder, not a mapping, or breaks its model
            (:class:`~grounding_eval.data.models.ManifestFile`: an unknown key, a claim that is not one of
            :data:`~grounding_eval.data.methods.REAL_SETS`, a round that is not one of the five).
    """
    root = Path(root)
    found = [root / name for name in MANIFEST_NAMES if os.path.lexists(root / name)]
    if not found:
        return Manifest()
    if len(found) > 1:
        raise DataError(root, "both dataset.yaml and dataset.yml exist: keep one")
    path = found[0]
    data: Any = read_yaml(path, inside=root)
    if data is None:
        return Manifest(path=str(path))
    if not isinstance(data, dict):
        raise DataError(path, "expected a mapping (name, claims, rounds)")
    # Imported here for start-up speed, as in data/load.py: the dataset module, which imports this one, is on
    # the verifier assertion's cold path, and the models (pydantic) are built only when a manifest is read.
    from grounding_eval.data.models import ManifestFile, validate

    record, problems = validate(ManifestFile, data)
    if problems:
        raise DataError(path, problems[0])
    assert isinstance(record, ManifestFile)
    return Manifest(path=str(path), name=record.name, claims=record.claims, rounds=record.rounds)
