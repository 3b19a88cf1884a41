"""Time extract_urls on hostile text: the shapes of tests/verifier/test_urls.py's test_hostile_input_is_fast.

Run from the repository root after ``scripts/install``:

    .venv/bin/python benchmarks/url_extract.py [--sizes 20000,200000,2000000]

Each case repeats one unit up to about N characters and times one call (after one warm-up call that loads
the public suffix list). The growth ratio from one size to the next is about 10x per 10x of input for a
linear scan, about 100x for a quadratic one. These are measurements; the test holds a bound that fails
only on a scan that is no longer linear.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

CASES: dict[str, Callable[[int], str]] = {
    "unclosed-markdown-links": lambda n: "[a](" * (n // 4),
    "endless-destination": lambda n: "[a](" + "x" * n,
    "closing-parens": lambda n: "https://x.org/" + ")" * n,
    "trailing-dots": lambda n: "https://x.org" + "." * n,
    "many-labels": lambda n: "a." * (n // 2) + "org",
    "many-emails": lambda n: "a@b.org " * (n // 8),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="20000,200000,2000000", help="input sizes in characters")
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    from grounding_eval.verifier.urls import extract_urls

    extract_urls("See https://lawhelp.org/x today.")
    print(f"{'case':<26}" + "".join(f"{s:>12,}" for s in sizes) + "   growth")
    for name, build in CASES.items():
        seconds = []
        for size in sizes:
            text = build(size)
            started = time.perf_counter()
            extract_urls(text)
            seconds.append(time.perf_counter() - started)
        growth = " ".join(f"{b / a:.0f}x" for a, b in itertools.pairwise(seconds) if a > 0)
        print(f"{name:<26}" + "".join(f"{s:>11.3f}s" for s in seconds) + f"   {growth}")


if __name__ == "__main__":
    main()
