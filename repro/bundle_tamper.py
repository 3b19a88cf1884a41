"""bundle check against bundles an attacker re-packs (manifest hashes recomputed: the attacker writes the manifest).

Makes a clean bundle (grounding-eval init + share --data datasets/sample), then for each case re-packs it with
one change and runs `grounding-eval bundle check`. Prints ACCEPTED / refused per case, and whether anything
was listed.
"""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import sys
import tarfile

import yaml

from common import REPO, tmpdir

PY = str(REPO / ".venv" / "bin" / "python")
LOCK = {
    "name": "grounding-eval-study", "version": "0.0.0", "lockfileVersion": 3, "requires": True,
    "packages": {
        "": {"name": "grounding-eval-study", "version": "0.0.0", "devDependencies": {"node": "24.21.0", "promptfoo": "0.123.1"}},
        "node_modules/promptfoo": {"version": "0.123.1", "resolved": "http://127.0.0.1:9/promptfoo-0.123.1.tgz",
                                   "integrity": "sha512-" + "A" * 86 + "==", "dev": True, "hasInstallScript": True},
    },
}
GRADER = {"id": "openai:chat:gpt-4o-mini", "config": {"apiBaseUrl": "http://127.0.0.1:9/v1"}}


def repack(src, dest, change):
    with tarfile.open(src) as t:
        members = {m.name: t.extractfile(m).read() for m in t if m.isfile()}
    manifest = json.loads(members.pop("manifest.json"))
    change(members)
    manifest["files"] = {n: {"sha256": hashlib.sha256(b).hexdigest(), "size": len(b)} for n, b in sorted(members.items())}
    with tarfile.open(dest, "w:gz") as t:
        for n, b in [("manifest.json", json.dumps(manifest).encode()), *sorted(members.items())]:
            info = tarfile.TarInfo(n)
            info.size = len(b)
            t.addfile(info, io.BytesIO(b))


def edit_config(m, fn):
    c = yaml.safe_load(m["study/promptfooconfig.yaml"])
    fn(c)
    m["study/promptfooconfig.yaml"] = yaml.safe_dump(c, sort_keys=False).encode()


def grader_file(m, path, ref):
    m[path] = yaml.safe_dump(GRADER).encode()
    edit_config(m, lambda c: c["defaultTest"].setdefault("options", {}).update(provider=ref))


CASES = {
    "modified study/assertions/grounding.cjs": lambda m: m.__setitem__("study/assertions/grounding.cjs", m["study/assertions/grounding.cjs"] + b"\n//x\n"),
    "added study/.cache/grounding-eval/x.json": lambda m: m.__setitem__("study/.cache/grounding-eval/x.json", b"{}"),
    "added study/node_modules/promptfoo/package.json": lambda m: m.__setitem__("study/node_modules/promptfoo/package.json", b"{}"),
    "modified study/package.json": lambda m: m.__setitem__("study/package.json", m["study/package.json"].replace(b"0.123.1", b"0.123.0")),
    "modified study/.npmrc": lambda m: m.__setitem__("study/.npmrc", m["study/.npmrc"] + b"\nregistry=http://127.0.0.1:9/\n"),
    "added study/package-lock.json (promptfoo resolved from 127.0.0.1)": lambda m: m.__setitem__("study/package-lock.json", json.dumps(LOCK).encode()),
    "added study/npm-shrinkwrap.json (same)": lambda m: m.__setitem__("study/npm-shrinkwrap.json", json.dumps(LOCK).encode()),
    "added study/.yarnrc.yml (npmRegistryServer 127.0.0.1)": lambda m: m.__setitem__("study/.yarnrc.yml", b"npmRegistryServer: http://127.0.0.1:9\n"),
    "added .npmrc at the bundle root": lambda m: m.__setitem__(".npmrc", b"registry=http://127.0.0.1:9/\n"),
    "grader as file://grader.yaml (study/grader.yaml names apiBaseUrl 127.0.0.1)": lambda m: grader_file(m, "study/grader.yaml", "file://grader.yaml"),
    "grader as file://providers/grader.yaml": lambda m: grader_file(m, "study/providers/grader.yaml", "file://providers/grader.yaml"),
    "grader with provider-level env: {OPENAI_BASE_URL: 127.0.0.1}": lambda m: edit_config(m, lambda c: c["defaultTest"].setdefault("options", {}).update(provider={"id": "openai:chat:gpt-4o-mini", "env": {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}})),
    "config top-level env: {OPENAI_BASE_URL: 127.0.0.1}": lambda m: edit_config(m, lambda c: c.update(env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1"})),
    "edited judge recording data/sample/judge_replies/round3.yaml": lambda m: m.__setitem__("data/sample/judge_replies/round3.yaml", m["data/sample/judge_replies/round3.yaml"].replace(b"verdict: 'No'", b"verdict: 'Yes'")),
    "edited pack/rubrics/round3.yaml": lambda m: m.__setitem__("pack/rubrics/round3.yaml", m["pack/rubrics/round3.yaml"] + b"\n# edited\n"),
}


def main() -> int:
    tmp = tmpdir("bundle")
    subprocess.run([PY, "-m", "grounding_eval", "init", str(tmp / "study")], check=True, capture_output=True, cwd=REPO)
    subprocess.run([PY, "-m", "grounding_eval", "share", str(tmp / "study"), "-o", str(tmp / "clean.tar.gz"),
                    "--data", str(REPO / "datasets" / "sample")], check=True, capture_output=True, cwd=REPO)
    accepted = 0
    for i, (name, change) in enumerate(CASES.items()):
        dest = tmp / f"case{i}.tar.gz"
        repack(tmp / "clean.tar.gz", dest, change)
        done = subprocess.run([PY, "-m", "grounding_eval", "bundle", "check", str(dest)], capture_output=True, text=True, cwd=REPO)
        out = (done.stdout + done.stderr).strip().splitlines()
        verdict = "ACCEPTED" if done.returncode == 0 else "refused "
        listed = [ln for ln in out[1:] if ln.strip()]
        accepted += done.returncode == 0
        print(f"{verdict} {name}\n          {out[0][:230] if out else ''}")
        for ln in listed[:4]:
            print(f"          | {ln[:200]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
