"""A reproducible, stratified sample of a round's items ("Round 3 used 40 of the 192 High-Risk items").

``sample: {n: 40, seed: 7, stratify: [risk_tier, jurisdiction]}`` in the test generator's config (and
``grounding-eval data sample``) draws with this one function, :func:`draw_sample`:

1. **Pool.** The round's items (after ``tags`` / ``ids``), in id order (code points), so the file's order
   never matters. ``n`` must be between 1 and the pool's size: a sample larger than the pool is refused,
   never silently the whole pool.
2. **Strata.** Items grouped by the values of the ``stratify`` fields (``risk_tier``, ``jurisdiction``,
   ``topic``); no ``stratify``: one stratum.
3. **Allocation: proportional, largest remainder** (Hamilton). Stratum *s* of *N_s* items out of *N* gets
   ``floor(n × N_s / N)`` seats; the seats left go one each to the strata with the largest remainders
   ``(n × N_s) mod N``, ties broken by the larger stratum, then by the stratum's seeded rank
   ``sha256("<seed>:<value>|<value>…")`` (not by name: many one-item strata would otherwise always favour
   the alphabetically first states). Integer arithmetic only. A stratum too small for a whole seat can
   get none (proportional means proportional); the per-stratum counts are printed, so that is visible.
4. **Draw within a stratum.** Its items ranked by ``sha256("<seed>:<id>")`` (hex, UTF-8), smallest
   first; the first *quota* are chosen. A hash rank, not :mod:`random`: the selection is the same on every
   machine, Python version and language (``printf '7:hr-il-01' | sha256sum`` reproduces a rank), and an
   item's rank does not depend on which other items are in the file.

The chosen items keep the dataset's order. :meth:`Sample.metadata` (each test's ``metadata.sample``) holds
the spec, the pool size, the chosen ids and their digest; :meth:`Sample.provenance` (every graded row's
``metadata.provenance.sample``) the spec, the pool size and the digest.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from grounding_eval.data.records import Query
from grounding_eval.errors import DataError

__all__ = [
    "METHOD",
    "STRATIFY_KEYS",
    "Sample",
    "SampleSpec",
    "Stratum",
    "allocate",
    "draw_sample",
    "ids_digest",
    "rank_key",
]

METHOD = "sha256-rank, largest-remainder allocation (v1)"
"""Named in every recorded sample, so a later change of rule cannot pass for the same sample."""

STRATIFY_KEYS = ("risk_tier", "jurisdiction", "topic")
"""Fields a sample may be stratified by (``risk_tier``: High-Risk items only)."""

_SPEC_KEYS = frozenset({"n", "seed", "stratify"})


@dataclass(frozen=True)
class SampleSpec:
    """What to draw: ``n`` items, with ``seed``, proportionally within the ``stratify`` strata."""

    n: int
    seed: int
    stratify: tuple[str, ...] = ()

    @classmethod
    def from_config(cls, value: Any, where: str = "test generator config") -> SampleSpec:
        """Read a ``sample:`` mapping (``n``, ``seed``, optional ``stratify``).

        Raises:
            DataError: one line naming the key and the problem.
        """
        if not isinstance(value, Mapping):
            raise DataError(where, "'sample' must be a mapping {n, seed, stratify}")
        unknown = set(map(str, value)) - _SPEC_KEYS
        if unknown:
            raise DataError(
                where, f"'sample': unknown key(s) {', '.join(sorted(unknown))} (n, seed, stratify)"
            )
        for key in ("n", "seed"):
            if key not in value:
                raise DataError(where, f"'sample': {key!r} is required")
            if not isinstance(value[key], int) or isinstance(value[key], bool):
                raise DataError(where, f"'sample': {key!r} must be a whole number, not {value[key]!r}")
        if value["n"] < 1:
            raise DataError(where, f"'sample': 'n' must be at least 1, not {value['n']}")
        if value["seed"] < 0:
            raise DataError(where, f"'sample': 'seed' must be 0 or more, not {value['seed']}")
        # Only an absent or null ``stratify`` (or []) means one stratum: a 0, false, '' or {} is a typo,
        # never a quietly unstratified sample.
        stratify = value.get("stratify")
        if stratify is None:
            stratify = []
        if isinstance(stratify, str):
            stratify = [stratify]
        if not isinstance(stratify, list | tuple) or not all(isinstance(k, str) for k in stratify):
            raise DataError(where, "'sample': 'stratify' must be a list of field names")
        bad = [k for k in stratify if k not in STRATIFY_KEYS]
        if bad:
            raise DataError(
                where,
                f"'sample': cannot stratify by {', '.join(map(repr, bad))} (one of {', '.join(STRATIFY_KEYS)})",
            )
        if len(set(stratify)) != len(stratify):
            raise DataError(where, "'sample': 'stratify' names a field twice")
        return cls(n=value["n"], seed=value["seed"], stratify=tuple(stratify))

    def as_dict(self) -> dict[str, Any]:
        """The spec as written in a config."""
        return {"n": self.n, "seed": self.seed, "stratify": list(self.stratify)}


@dataclass(frozen=True)
class Stratum:
    """One stratum: its field values, its size in the pool, its seats and the ids chosen (rank order)."""

    key: tuple[str, ...]
    size: int
    quota: int
    chosen: tuple[str, ...]


@dataclass(frozen=True)
class Sample:
    """A drawn sample: the items (dataset order), the strata (code-point order of their values)."""

    spec: SampleSpec
    pool_size: int
    items: tuple[Query, ...]
    strata: tuple[Stratum, ...]

    @property
    def ids(self) -> list[str]:
        """The chosen ids, in the dataset's order."""
        return [item.id for item in self.items]

    def provenance(self) -> dict[str, Any]:
        """What a graded row records of its sample (small: no id list)."""
        return {
            **self.spec.as_dict(),
            "method": METHOD,
            "pool": self.pool_size,
            "ids_sha256": ids_digest(self.ids),
        }

    def metadata(self) -> dict[str, Any]:
        """What each generated test records: the provenance plus the chosen ids."""
        return {**self.provenance(), "ids": self.ids}


def rank_key(seed: int, item_id: str) -> str:
    """An item's rank within its stratum: the SHA-256 (hex) of ``"<seed>:<id>"`` in UTF-8."""
    return hashlib.sha256(f"{seed}:{item_id}".encode()).hexdigest()


def ids_digest(ids: Sequence[str]) -> str:
    """SHA-256 (hex) of the ids sorted by code point, one per line (``\\n``-joined, no final newline)."""
    return hashlib.sha256("\n".join(sorted(ids)).encode()).hexdigest()


def allocate(sizes: Mapping[tuple[str, ...], int], n: int, seed: int = 0) -> dict[tuple[str, ...], int]:
    """Seats per stratum: proportional to its size, largest remainder, ties broken by size then by the
    seeded rank of the stratum's values (see the module docstring).

    Raises:
        ValueError: ``n`` is below 0 or above the total size, or a size is below 1.
    """
    total = sum(sizes.values())
    if any(size < 1 for size in sizes.values()):
        raise ValueError("every stratum has at least one item")
    if not 0 <= n <= total:
        raise ValueError(f"cannot allocate {n} seats over {total} items")
    seats = {key: n * size // total for key, size in sizes.items()}
    left = n - sum(seats.values())
    order = sorted(
        sizes, key=lambda key: (-(n * sizes[key] % total), -sizes[key], rank_key(seed, "|".join(key)), key)
    )
    for key in order[:left]:
        seats[key] += 1
    return seats


def _stratum_key(item: Query, stratify: tuple[str, ...], round_label: str, where: str) -> tuple[str, ...]:
    values = []
    for name in stratify:
        value = getattr(item, name, None)
        if not isinstance(value, str):
            raise DataError(
                where,
                f"'sample': cannot stratify {round_label} by {name!r}: item {item.id!r} has no such field "
                "(risk_tier is a High-Risk field)",
            )
        values.append(value)
    return tuple(values)


def draw_sample(
    items: Sequence[Query],
    spec: SampleSpec,
    *,
    round_label: str = "the items",
    where: str = "test generator config",
) -> Sample:
    """Draw ``spec`` from ``items`` (the round's pool).

    Raises:
        DataError: ``n`` exceeds the pool, or an item lacks a ``stratify`` field.
    """
    if spec.n > len(items):
        raise DataError(
            where,
            f"'sample': n is {spec.n} but {round_label} are only {len(items)}; "
            "a sample is never silently the whole pool",
        )
    pool = sorted(items, key=lambda item: item.id)
    members: dict[tuple[str, ...], list[Query]] = {}
    for item in pool:
        members.setdefault(_stratum_key(item, spec.stratify, round_label, where), []).append(item)
    seats = allocate({key: len(group) for key, group in members.items()}, spec.n, spec.seed)
    strata = []
    chosen_ids: set[str] = set()
    for key in sorted(members):
        ranked = sorted(members[key], key=lambda item: (rank_key(spec.seed, item.id), item.id))
        chosen = tuple(item.id for item in ranked[: seats[key]])
        chosen_ids.update(chosen)
        strata.append(Stratum(key, len(members[key]), seats[key], chosen))
    picked = tuple(item for item in items if item.id in chosen_ids)
    return Sample(spec=spec, pool_size=len(items), items=picked, strata=tuple(strata))
