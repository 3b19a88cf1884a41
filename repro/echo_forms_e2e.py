"""End to end: a judge endpoint (the partner's own, named in options.provider with its key inline) whose normal
reply quotes the key in forms the scrubbers do not know (zero-width spaces, fullwidth, split over two fields,
spelled out with commas) leaves copies in the results file, the audit files and the reply cache (issue 39).
"""

from __future__ import annotations

import json
import sys
import unicodedata

import yaml

from common import REPO, Endpoint, eval_in, partner_env, tmpdir
from tests.test_judge_trust_e2e import V3

KEY = "sk-inline-INLINEKEY0123456789abcdef"


def quoting(prompt, request):
    k = request.headers.get("authorization", "").removeprefix("Bearer ")
    crit = {c: {"verdict": "Yes" if not V3.criterion(c).negative else "No",
                "reasoning": f"Judged {c}. Token seen: {chr(0x200b).join(k)}"} for c in V3.ids}
    crit[V3.ids[0]]["reasoning"] = "Token seen: " + "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in k)
    return json.dumps({"criteria": crit, "summary": f"first half {k[:20]}", "note": f"second half {k[20:]}",
                       "spelled": ",".join(k)})


def main() -> int:
    ep = Endpoint(quoting)
    tmp = tmpdir("echo-e2e")
    s = tmp / "study"
    s.mkdir()
    judge = {"type": "javascript", "value": "file://" + str(REPO / "assertions" / "grounding.cjs") + ":judge",
             "config": {"rubric": "v3", "audit_dir": "audit", "review_queue": "queue.jsonl", "cache_dir": "cache"}}
    with ep.running():
        config = {
            "prompts": ["{{question}}"], "providers": [{"id": "echo"}],
            "extensions": ["file://" + str(REPO / "assertions" / "grounding.cjs") + ":beforeAll"],
            "tests": [{"vars": {"question": "Call Legal Aid Chicago.", "query_id": "q1", "jurisdiction": "IL"},
                       "options": {"provider": {"id": "openai:chat:gpt-4o-mini",
                                                "config": {"apiKey": KEY, "apiBaseUrl": f"{ep.url}/v1"}}},
                       "assert": [judge]}],
        }
        (s / "promptfooconfig.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
        done = eval_in(s, partner_env(tmp))
    print("exit", done.returncode, "requests", len(ep.requests))
    found = 0
    for f in sorted(p for p in s.rglob("*") if p.is_file() and p.name != "promptfooconfig.yaml"):
        text = f.read_text(encoding="utf-8", errors="replace")
        try:
            text = json.dumps(json.loads(text), ensure_ascii=False)
        except ValueError:
            pass
        flat = unicodedata.normalize("NFKC", text).replace("\u200b", "")
        hits = flat.count(KEY) + flat.replace(",", "").count(KEY)
        split = "sk-inline-INLINEKEY0" in text and "123456789abcdef" in text
        if hits or split:
            found += 1
            print(f"{f.relative_to(s)}: {hits} recoverable copies (NFKC / zero-width removed / commas removed), halves present: {split}")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
