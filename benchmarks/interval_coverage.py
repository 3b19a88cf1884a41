"""How often a 95 % interval on a paired effect covers the true effect at the study's own sizes (issue 41).

Simulates studies with a known effect — ``n`` items, one paired difference per item (later − earlier
condition) — and counts, per interval method, the studies whose interval holds the true mean difference.
The methods:

* ``percentile``: the percentile bootstrap of the mean (what ``report --effects`` used before issue 41),
  the report's own code (:func:`~grounding_eval.analysis.stats.bootstrap_mean_intervals`, 4,000 resamples);
* ``bca``: bias-corrected and accelerated bootstrap (Efron 1987; Efron & Tibshirani 1993, ch. 14) on the
  same resamples, acceleration from the jackknife;
* ``studentized``: the bootstrap-t (Efron & Tibshirani 1993, ch. 12.5) on the same resamples;
* ``t``: Student's t interval, a textbook yardstick;
* ``sign-flip``: the interval inverted from the exact sign-flip test
  (:func:`~grounding_eval.analysis.stats.sign_flip_intervals`, the report's code since issue 41: every
  sign pattern at n ≤ 13, 9,999 seeded patterns above), whose p-value the report prints beside it.

The effect distributions (each difference is later − earlier for one item):

* ``normal``: N(0.1, 0.3²), symmetric, the easy case;
* ``skewed``: 0.1 + 0.15·(Gamma(4) − 4), skewness 1;
* ``very skewed``: 0.1 + 0.3·(Exp(1) − 1), skewness 2: a known limit, left out of ``--check`` (no
  method reaches 93 % at n = 8; see docs/explanation/methods.md);
* ``composite``: two scores per item on [0, 1], in steps of 1/14 (Round 3's composite grid), correlated
  through an item effect, with a ceiling: Φ(0.3 + z + 0.6ε) and Φ(0.8 + z + 0.6ε'), z, ε, ε' ~ N(0, 1);
  the true effect from 2,000,000 draws (seeded);
* ``pass/fail``: pass-or-fail outcomes, a difference of +1 (30 %), −1 (10 %) or 0 (60 %): effect 0.2;
* ``pass/fail null``: +1, −1 15 % each, 0 70 %: effect 0, many ties.

Every draw is seeded: the same command prints the same table. ``--check`` (1,000 studies or more) exits 1
unless the chosen method (sign-flip) covers at least 93 % at n = 8 and n = 10 on every distribution but
``very skewed`` (a pass/fail distribution is judged on its exact coverage, every outcome of n items weighed
by its probability).
``--figure FILE.svg`` draws coverage against n per method (docs/explanation/interval_coverage.svg, in
docs/explanation/methods.md); ``--png`` also writes a PNG beside it, to look at.

Run from the repository root::

    .venv/bin/python benchmarks/interval_coverage.py [--studies 1000] [--quick] [--check] [--figure F.svg]

About a minute at 1,000 studies on two busy cores; ``--quick`` (400 studies) about 20 s.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path

import numpy as np
from scipy import stats  # type: ignore[import-untyped]

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
from grounding_eval.analysis.stats import (  # noqa: E402
    bootstrap_mean_intervals,
    resample_counts,
    sign_flip_intervals,
)

SIZES = (8, 10, 20, 40)
CONFIDENCE = 0.95
RESAMPLES = 4000  # the report's (decisions.yaml effects.resamples)
PERMUTATIONS = 9999  # the report's (effects.permutations)
SEED = 13
CHOSEN = "sign-flip"
LIMITS = ("very skewed",)  # reported, not checked: no method reaches the goal there at n = 8
GOAL = 0.93  # at n = 8 and n = 10 (issue 41's acceptance)
METHODS = ("percentile", "bca", "studentized", "t", "sign-flip")
GRID = 14  # composite scores in steps of 1/14


def _composite(rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
    z = rng.normal(size=size)
    before = stats.norm.cdf(0.3 + z + 0.6 * rng.normal(size=size))
    after = stats.norm.cdf(0.8 + z + 0.6 * rng.normal(size=size))
    return (np.round(after * GRID) - np.round(before * GRID)) / GRID


def _pass_fail(plus: float, minus: float) -> Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]:
    def draw(rng: np.random.Generator, size: tuple[int, ...]) -> np.ndarray:
        u = rng.random(size)
        return np.where(u < plus, 1.0, np.where(u < plus + minus, -1.0, 0.0))

    draw.shares = (plus, minus)  # type: ignore[attr-defined]
    return draw


def exact_pass_fail_coverage(name: str, n: int) -> float | None:
    """The sign-flip interval's exact coverage on a pass/fail distribution at ``n`` items (every pattern
    counted, so the interval depends only on how many +1, −1 and 0 there are): the probability of each
    count, summed over the counts whose interval covers. None for a distribution that is not pass/fail
    or an ``n`` the test draws patterns for."""
    shares = getattr(DISTRIBUTIONS[name][0], "shares", None)
    if shares is None or 2**n > PERMUTATIONS:
        return None
    plus, minus = shares
    effect = plus - minus
    total = 0.0
    for up in range(n + 1):
        for down in range(n + 1 - up):
            d = np.array([1.0] * up + [-1.0] * down + [0.0] * (n - up - down))
            (ci,) = sign_flip_intervals(d[:, None], permutations=PERMUTATIONS, seed=SEED)
            if ci is None or ci[0] - 1e-9 <= effect <= ci[1] + 1e-9:
                total += stats.multinomial.pmf([up, down, n - up - down], n, [plus, minus, 1 - plus - minus])
    return float(total)


Draw = Callable[[np.random.Generator, tuple[int, ...]], np.ndarray]
DISTRIBUTIONS: dict[str, tuple[Draw, float | None]] = {
    "normal": (lambda rng, size: rng.normal(0.1, 0.3, size), 0.1),
    "skewed": (lambda rng, size: 0.1 + 0.15 * (rng.gamma(4.0, size=size) - 4.0), 0.1),
    "very skewed": (lambda rng, size: 0.1 + 0.3 * (rng.exponential(size=size) - 1), 0.1),
    "composite": (_composite, None),  # true effect computed below
    "pass/fail": (_pass_fail(0.3, 0.1), 0.2),
    "pass/fail null": (_pass_fail(0.15, 0.15), 0.0),
}


def true_effect(name: str) -> float:
    """The distribution's mean difference (for ``composite``, from 2,000,000 seeded draws)."""
    draw, effect = DISTRIBUTIONS[name]
    if effect is not None:
        return effect
    return float(draw(np.random.default_rng(2041), (2_000_000,)).mean())


def bootstrap_family(d: np.ndarray) -> dict[str, np.ndarray]:
    """Percentile, BCa and studentized intervals of each column's mean (columns are studies), from one
    draw of resampled items (the report's seed contract: :func:`resample_counts`). Returns (2, studies)
    arrays of low, high."""
    n, studies = d.shape
    counts = resample_counts(n, resamples=RESAMPLES, seed=SEED).astype(float)
    means = counts @ d / n  # (resamples, studies)
    observed = d.mean(axis=0)
    alpha = 1 - CONFIDENCE
    out = {}
    low, high = np.array(bootstrap_mean_intervals(d, resamples=RESAMPLES, seed=SEED)).T
    out["percentile"] = np.array([low, high])
    # BCa: z0 from the share of resamples below the estimate, acceleration from the jackknife (as SciPy).
    z0 = stats.norm.ppf((means < observed).mean(axis=0))
    jack = (d.sum(axis=0) - d) / (n - 1)
    dev = jack.mean(axis=0) - jack
    with np.errstate(invalid="ignore", divide="ignore"):
        a = (dev**3).sum(axis=0) / (6 * ((dev**2).sum(axis=0)) ** 1.5)
    a = np.nan_to_num(a)
    ordered = np.sort(means, axis=0)
    ends = []
    for z in stats.norm.ppf([alpha / 2, 1 - alpha / 2]):
        with np.errstate(invalid="ignore", divide="ignore"):
            level = stats.norm.cdf(z0 + (z0 + z) / (1 - a * (z0 + z)))
        level = np.where(np.isfinite(level), level, 0.5)  # z0 infinite: every resample on one side
        ends.append(np.array([np.quantile(ordered[:, j], level[j]) for j in range(studies)]))
    out["bca"] = np.array(ends)
    # Studentized: t* = (mean* − mean) / se*, se* from the resample's own standard deviation.
    second = counts @ (d**2) / n
    se_star = np.sqrt(np.maximum(second - means**2, 0) * n / (n - 1) / n)
    se = d.std(axis=0, ddof=1) / np.sqrt(n)
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # a study of all-equal items: no t* at all
        # A resample of one repeated value has se* = 0 and no t*: left out (as most implementations do).
        t_star = np.where(se_star > 1e-12, (means - observed) / se_star, np.nan)
        t_low, t_high = np.nanquantile(t_star, [alpha / 2, 1 - alpha / 2], axis=0)
    out["studentized"] = np.array([observed - t_high * se, observed - t_low * se])
    half = stats.t.ppf(1 - alpha / 2, n - 1) * se
    out["t"] = np.array([observed - half, observed + half])
    return out


def coverage(name: str, n: int, studies: int, effect: float) -> dict[str, tuple[float, float]]:
    """Per method: the share of ``studies`` simulated studies of ``n`` items whose interval covers
    ``effect``, and the median width (unbounded intervals cover, and are left out of the width)."""
    draw, _ = DISTRIBUTIONS[name]
    d = draw(np.random.default_rng([41, n, list(DISTRIBUTIONS).index(name)]), (n, studies))
    intervals = bootstrap_family(d)
    flips = sign_flip_intervals(d, permutations=PERMUTATIONS, seed=SEED, confidence=CONFIDENCE)
    intervals["sign-flip"] = np.array([[-np.inf, np.inf] if ci is None else ci for ci in flips]).T
    out = {}
    for method in METHODS:
        low, high = intervals[method]
        tolerance = 1e-9  # an end equal to the effect up to rounding covers it
        covered = (low <= effect + tolerance) & (effect - tolerance <= high)
        finite = np.isfinite(low) & np.isfinite(high)
        width = float(np.median((high - low)[finite])) if finite.any() else float("nan")
        out[method] = (float(covered.mean()), width)
    return out


def draw_figure(
    table: dict[str, dict[int, dict[str, tuple[float, float]]]],
    path: Path,
    studies: int,
    *,
    png: bool = False,
) -> None:
    """Coverage against n, one panel per distribution, one line per method; the 95 % and 93 % levels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams["svg.hashsalt"] = "interval-coverage"  # stable ids: the SVG diffs only when a number moves
    plt.rcParams["svg.fonttype"] = "none"
    names = list(table)
    columns = 3
    rows = -(-len(names) // columns)
    fig, grid = plt.subplots(rows, columns, figsize=(10, 3.2 * rows + 0.6), sharey=True, squeeze=False)
    axes = list(grid.ravel())
    for spare in axes[len(names) :]:
        spare.set_visible(False)
    axes = axes[: len(names)]
    at = range(len(SIZES))  # the sizes evenly spaced: 8 and 10 would touch on a linear axis
    styles = {"percentile": ("#888888", "o"), "bca": ("#e69f00", "s"), "studentized": ("#56b4e9", "^"),
              "t": ("#009e73", "v"), "sign-flip": ("#0b3d91", "D")}  # fmt: skip
    for ax, name in zip(axes, names, strict=True):
        ax.axhline(CONFIDENCE, color="black", linewidth=0.8)
        ax.axhline(GOAL, color="black", linewidth=0.8, linestyle=":")
        for method in METHODS:
            color, marker = styles[method]
            ys = [table[name][n][method][0] for n in SIZES]
            ax.plot(at, ys, marker=marker, color=color, linewidth=2.2 if method == CHOSEN else 1.2,
                    label=method, markersize=4)  # fmt: skip
        ax.set_title(name, fontsize=10)
        ax.set_xticks(at, [str(n) for n in SIZES])
        ax.set_xlabel("items (n)")
        ax.set_ylim(0.80, 1.0)
        ax.grid(alpha=0.3)
    for row in grid:
        row[0].set_ylabel("coverage of the true effect")
    axes[-1].legend(fontsize=8, loc="lower right")
    fig.suptitle(
        f"95 % intervals on a paired mean difference: coverage in {studies} simulated studies per point\n"
        "(solid line: 95 %; dotted: 93 %)",
        fontsize=10,
    )
    fig.tight_layout()
    fig.savefig(path, metadata={"Date": None})
    if png:
        fig.savefig(path.with_suffix(".png"), dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=1000, help="simulated studies per point (1000)")
    parser.add_argument("--quick", action="store_true", help="400 studies per point")
    parser.add_argument(
        "--check", action="store_true", help=f"exit 1 unless {CHOSEN} covers ≥ {GOAL:.0%} at n 8, 10"
    )
    parser.add_argument("--figure", type=Path, help="write coverage against n as SVG")
    parser.add_argument("--png", action="store_true", help="with --figure: a PNG beside it, to look at")
    args = parser.parse_args(argv)
    studies = 400 if args.quick else args.studies
    if args.check and studies < 1000:
        # At 400 studies a coverage of 95 % is measured within ± 2.1 points (95 %): a 93 % bar means nothing.
        parser.error(f"--check needs 1,000 studies or more (asked for {studies}): drop --quick")
    start = time.perf_counter()
    table: dict[str, dict[int, dict[str, tuple[float, float]]]] = {}
    print(
        f"Coverage of {CONFIDENCE:.0%} intervals, {studies} simulated studies per line (median width in brackets)"
    )
    print(f"{'distribution':<15} {'n':>3}  " + "  ".join(f"{m:>17}" for m in METHODS))
    for name in DISTRIBUTIONS:
        effect = true_effect(name)
        table[name] = {}
        for n in SIZES:
            found = coverage(name, n, studies, effect)
            table[name][n] = found
            cells = "  ".join(f"{c:>8.1%} [{w:6.3f}]" for c, w in found.values())  # median width
            exact = exact_pass_fail_coverage(name, n)
            if exact is not None:
                found[f"{CHOSEN} exact"] = (exact, float("nan"))
                cells += f"  (exact: {exact:.1%})"
            print(f"{name:<15} {n:>3}  {cells}")
    print(f"({time.perf_counter() - start:.0f} s)")
    if args.figure is not None:
        draw_figure(table, args.figure, studies, png=args.png)
        print(f"wrote {args.figure}")
    if args.check:
        # A pass/fail distribution is checked on its exact coverage where there is one (the simulated one
        # is that ± 0.7 points at 1,000 studies).
        found = {(name, n): table[name][n].get(f"{CHOSEN} exact", table[name][n][CHOSEN])[0]
                 for name in table if name not in LIMITS for n in (8, 10)}  # fmt: skip
        short = [(name, n, c) for (name, n), c in found.items() if c < GOAL]
        for name, n, c in short:
            print(f"FAIL {CHOSEN} covers {c:.1%} < {GOAL:.0%}: {name}, n = {n}")
        if short:
            return 1
        print(
            f"ok: {CHOSEN} covers ≥ {GOAL:.0%} at n = 8 and 10 on every distribution but {', '.join(LIMITS)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
