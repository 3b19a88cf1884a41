"""Write the pack's promptfoo configs (configs/*.yaml, promptfooconfig.yaml) from their one definition,
grounding_eval/promptfoo/configs.py; with --check, write nothing and exit 1 naming each file that differs.

    .venv/bin/python scripts/write_configs.py [--check] [--root DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from grounding_eval.files import write_text_atomic
from grounding_eval.promptfoo.configs import PACK, render_pack

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file differs")
    parser.add_argument("--root", type=Path, default=REPO, help="the checkout to write (default: this one)")
    args = parser.parse_args(argv)
    differ = []
    for name in PACK:
        path = args.root / name
        text = render_pack(name)
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == text:
            continue
        if args.check:
            differ.append(name)
            print(
                f"{name}: differs from its definition (grounding_eval/promptfoo/configs.py)", file=sys.stderr
            )
        else:
            write_text_atomic(path, text)
            print(f"wrote {name}")
    if differ:
        print("run: .venv/bin/python scripts/write_configs.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
