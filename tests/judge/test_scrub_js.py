"""The scrubber where a judge's provider lives (assertions/judges.cjs): every echoed form of a secret, the
golden table the Python scrubber is held to (tests/golden/key_echoes.yaml), and which values of a
provider count as secrets.

Run in Node, as the pack runs it: one ``node`` process for a whole table.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.judge._redact import REDACTED
from grounding_eval.judge.host import _node
from tests.judge.test_redact import FORMS, _echo_rows

REPO = Path(__file__).resolve().parents[2]
JUDGES = REPO / "assertions" / "judges.cjs"


def _node_eval(script: str, data: Any, env: dict[str, str] | None = None) -> Any:
    """Run ``script`` (with ``judges`` = assertions/judges.cjs and ``data`` from stdin) and read its JSON."""
    program = (
        f"const judges = require({json.dumps(str(JUDGES))});"
        "let raw = ''; process.stdin.on('data', (c) => { raw += c; });"
        "process.stdin.on('end', async () => { const data = JSON.parse(raw);"
        f"const out = await (async () => {{ {script} }})(); process.stdout.write(JSON.stringify(out)); }});"
    )
    done = subprocess.run(
        [_node(), "-e", program], input=json.dumps(data), capture_output=True, text=True, timeout=60,
        check=True, env=env,
    )  # fmt: skip
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def scrubbed() -> dict[tuple[str, str], str]:
    """Every (key, text) of the tables below, scrubbed by judges.cjs: alone and inside a sentence."""
    pairs = [(k, e) for _, k, e in FORMS] + [(p.values[0], p.values[1]) for p in _echo_rows()]
    texts = [[k, t] for k, e in pairs for t in (e, f"you sent <{e}> (rejected)")]
    out = _node_eval("return data.map(([k, t]) => judges.scrubber([k])(t));", texts)
    return {(k, t): s for (k, t), s in zip(texts, out, strict=True)}


@pytest.mark.parametrize(("key", "echoed"), [pytest.param(k, e, id=i) for i, k, e in FORMS])
def test_each_form_is_scrubbed_whole(scrubbed: dict[tuple[str, str], str], key: str, echoed: str) -> None:
    assert scrubbed[(key, echoed)] == REDACTED
    assert scrubbed[(key, f"you sent <{echoed}> (rejected)")] == f"you sent <{REDACTED}> (rejected)"


@pytest.mark.parametrize(("key", "echoed", "expect"), _echo_rows())
def test_the_golden_echoes(scrubbed: dict[tuple[str, str], str], key: str, echoed: str, expect: str) -> None:
    """The same table as the Python scrubber's: each echo replaced whole, each look-alike left alone."""
    assert scrubbed[(key, echoed)] == expect
    assert scrubbed[(key, f"you sent <{echoed}> (rejected)")] == f"you sent <{expect}> (rejected)"


def test_a_providers_secrets_whatever_their_names(tmp_path: Path) -> None:
    """Key-like config values, every header, a URL's userinfo and query values, values taken from any
    environment variable: all secrets; the model's name and the endpoint's host are not."""
    spec = {
        "id": "https://bob:pw-0123456789@judge.example/v1?access=qry-0123456789&mode=strict-mode-x",
        "config": {
            "apiKey": "cfg-key-0123456789",
            "headers": {"X-Partner": "hdr-0123456789", "Authorization": "Bearer tok-0123456789"},
            "url": "https://judge.example/v1?sig={{ env.PARTNER_SIG }}",
            "model": "judge-model-large",
            "note": "set from {{ env.PLAIN_SETTING }}",
        },
    }
    env = {"PATH": "/usr/bin:/bin", "PARTNER_SIG": "sig-0123456789", "PLAIN_SETTING": "plain-0123456789"}
    found = set(_node_eval("return judges.secretsOf(undefined, data);", spec, env))
    for secret in ("pw-0123456789", "qry-0123456789", "strict-mode-x", "cfg-key-0123456789", "hdr-0123456789",
                   "tok-0123456789", "sig-0123456789", "plain-0123456789"):  # fmt: skip
        assert secret in found, secret
    assert not {"judge-model-large", "judge.example", "bob"} & found


def test_a_label_has_no_userinfo_or_query() -> None:
    ids = ["https://bob:pw@judge.example:8443/v1/chat?key=abc#x", "openai:chat:gpt-4o-mini", "http"]
    assert _node_eval("return data.map(judges.label);", ids) == [
        "https://judge.example:8443/v1/chat",
        "openai:chat:gpt-4o-mini",
        "http",
    ]
