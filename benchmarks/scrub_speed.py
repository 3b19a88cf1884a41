"""Time both key scrubbers (assertions/judges.cjs, grounding_eval/judge/_redact.py) on replies of 100 kB and 1 MB.

Run from the repository root after ``scripts/install``:

    .venv/bin/python benchmarks/scrub_speed.py [--sizes 100000,1000000]

Each family is a shape a judge reply (or a hostile one) can take cheaply: ordinary JSON with escapes, one
escape repeated (the decoded view's worst case), the key's own first characters over and over (every
attempt runs far into a form before failing), base64 soup and a whitespace run. A linear scrubber grows
about 10x per 10x of input. Node scrubs every judge reply and error; Python scans what ``share`` writes.
The goal: a 1 MB reply scrubbed in Node in under a second; tests/judge/test_scrub_js.py holds ten times that
(a scrubber that backtracks would take hours), so a loaded machine never fails it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

KEY = "sk-ant-api03-Zq7vL2xR9mN4tK8wB1cD6fH3jP5sY0uE"
FAMILIES: dict[str, Callable[[int], str]] = {
    "json-reply": lambda n: ('{"reasoning": "caf\\u00e9 \\n %20 &amp; \\/ https://x.org/?a=b"}, ' * n)[:n],
    "one-escape-repeated": lambda n: "%41" * (n // 3),
    "key-prefix-repeated": lambda n: ("sk-ant-api03-Zq7vL2xR9mN4 \n" * n)[:n],
    "base64-soup": lambda n: ("c2stYW50LWFwaTAzLV\n" * n)[:n],
    "whitespace-run": lambda n: "s" + " " * (n - 1),
}


def _python(text: str) -> float:
    from grounding_eval.judge._redact import redact, secret_pattern

    pattern = secret_pattern(KEY)
    start = time.perf_counter()
    redact(text, pattern)
    return time.perf_counter() - start


def _node(texts: list[str]) -> list[float]:
    from grounding_eval.judge.host import _node as node

    program = (
        f"const judges = require({json.dumps(str(REPO / 'assertions' / 'judges.cjs'))});"
        "let raw = ''; process.stdin.on('data', (c) => { raw += c; }); process.stdin.on('end', () => {"
        f"const scrub = judges.scrubber([{json.dumps(KEY)}]); const out = JSON.parse(raw).map((t) => {{"
        "const t0 = process.hrtime.bigint(); scrub(t); return Number(process.hrtime.bigint() - t0) / 1e9; });"
        "process.stdout.write(JSON.stringify(out)); });"
    )
    done = subprocess.run(
        [node(), "-e", program],
        input=json.dumps(texts),
        capture_output=True,
        text=True,
        check=True,
        timeout=600,
    )
    return list(json.loads(done.stdout))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100000,1000000")
    sizes = [int(s) for s in parser.parse_args().sizes.split(",")]
    texts = [(name, n, build(n)) for name, build in FAMILIES.items() for n in sizes]
    node = _node([t for _, _, t in texts])
    print(f"{'family':<22} {'size':>9} {'node s':>8} {'python s':>9}")
    for (name, n, text), node_s in zip(texts, node, strict=True):
        print(f"{name:<22} {n:>9} {node_s:>8.3f} {_python(text):>9.3f}")


if __name__ == "__main__":
    main()
