"""Check a recorded judge-reply file: every expected key present, every final reply parses under its rubric.

Usage: .venv/bin/python scripts/check_judge_replies.py FILE [EXPECTED_KEY ...]
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from grounding_eval.judge.calls import load_replay_fixtures
from grounding_eval.judge.parse import ParseFailure, parse_reply
from grounding_eval.judge.rubric import load_rubric

path, expected = sys.argv[1], sys.argv[2:]
fixtures = load_replay_fixtures(path)
rubrics = {}
bad = 0
for key, fx in fixtures.items():
    rid = key.split("/")[0]
    rubric = rubrics.setdefault(
        rid, load_rubric(Path(__file__).resolve().parents[1] / "rubrics" / f"{rid}.yaml")
    )
    last = parse_reply(fx.replies[-1], rubric)
    if isinstance(last, ParseFailure):
        bad += 1
        print("INVALID", key, last.error[:300])
missing = sorted(set(expected) - set(fixtures))
extra = sorted(set(fixtures) - set(expected))
print(f"{len(fixtures)} keys, {bad} invalid, missing {missing}, unexpected {extra}")
