"""The scrubber where a judge's provider lives (assertions/judges.cjs): every echoed form of a secret, the
golden table the Python scrubber is held to (tests/golden/key_echoes.yaml), and which values of a
provider count as secrets.

Run in Node, as the pack runs it: one ``node`` process for a whole table.
"""

from __future__ import annotations

import base64
import json
import random
import subprocess
from pathlib import Path
from typing import Any

import pytest

from grounding_eval.judge._redact import _ENTITIES, REDACTED, redact, secret_pattern
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


# --- issue 39: one table, two scrubbers that agree -------------------------------------------------------

PROJECT_KEY = "sk-proj-" + "Ab3dE5gH7jK9mN1pQ3sT5vW7yZ0bC2eF4hJ6kL8nP0rS2uV4xY6aD8fG0iK2lM4oQ6rT8uW0zB2cE"


def _escaped(rng: random.Random, text: str) -> str:
    """``text`` with each character left alone or escaped one of the ways a reply writes it."""
    out = []
    for ch in text:
        data = ch.encode()
        way = rng.randrange(9)
        out.append(
            ch if way < 3
            else "".join(f"%{b:02X}" for b in data) if way == 3
            else "".join(f"%25{b:02x}" for b in data) if way == 4
            else f"\\u{ord(ch):04{'x' if rng.random() < 0.5 else 'X'}}" if way == 5 and ord(ch) < 0x10000
            else "".join(f"\\x{b:02x}" for b in data) if way == 6
            else f"&#{ord(ch)};" if way == 7
            else f"&#x{ord(ch):X};"
        )  # fmt: skip
    return "".join(out)


def _spread(rng: random.Random, text: str) -> str:
    """``text`` with whitespace (a line break, an indent, JSON's \\n) put between a few of its characters."""
    cuts = sorted(rng.sample(range(1, len(text)), k=min(3, len(text) - 1)))
    pieces = [text[i:j] for i, j in zip([0, *cuts], [*cuts, len(text)], strict=True)]
    return rng.choice(["\n", "\r\n  ", " ", "\\n", "\t"]).join(pieces)


def _mixed_texts(seed: int, count: int) -> list[list[str]]:
    """[key, text] pairs: a key echoed in random mixes of the table's forms, inside noise, and noise alone."""
    rng = random.Random(seed)
    noise = ["ok ", "caf\\u00e9 ", "%20", "&amp; ", "\\n", "sk-", "c2st", "736b", " \n ", "Zq7v", "…", "..."]
    out = []
    for _ in range(count):
        key = rng.choice([KEY_A, ODD_A, PROJECT_KEY])
        form = key
        if rng.random() < 0.3:
            form = form[: rng.randrange(len(form) // 2, len(form))]  # truncated
        if rng.random() < 0.3:
            wrap = base64.encodebytes if rng.random() < 0.5 else base64.b64encode
            form = wrap(form.encode()).decode()
        elif rng.random() < 0.5:
            form = _escaped(rng, form)
        if rng.random() < 0.5:
            form = _spread(rng, form)
        around = "".join(rng.choice(noise) for _ in range(rng.randrange(4)))
        out.append([key, around + form + "".join(rng.choice(noise) for _ in range(rng.randrange(4)))])
        out.append([key, "".join(rng.choice(noise) for _ in range(rng.randrange(1, 12)))])
    return out


KEY_A = "sk-ant-api03-Zq7vL2xR9mN4tK8wB1cD6fH3jP5sY0uE"
ODD_A = "sk-odd+Test/KEY=0123456789:abc déf~XYZ"


def test_both_scrubbers_agree_on_mixed_encodings() -> None:
    """Random mixes of escapes, truncation, base64 (wrapped or not) and whitespace, in noise: the Node
    scrubber and the Python one leave the same text (one table, two implementations, no drift)."""
    pairs = _mixed_texts(39, 400)
    node = _node_eval("return data.map(([k, t]) => judges.scrubber([k])(t));", pairs)
    python = [redact(t, secret_pattern(k)) for k, t in pairs]
    differ = [(k, t, n, p) for (k, t), n, p in zip(pairs, node, python, strict=True) if n != p]
    assert not differ, differ[:3]
    assert sum(REDACTED in s for s in python) > 200  # the mixes are echoes, most of them found


def test_the_entity_tables_agree() -> None:
    """The named references judges.cjs decodes are html.entities' for U+0000–U+00FF, as _redact's are."""
    node = _node_eval("return Object.fromEntries(judges.ENTITIES);", None)
    assert node == _ENTITIES


def _reply_1mb() -> str:
    """A 1 MB judge reply: JSON-escaped prose, a base64 blob, a hex dump, URLs, and three echoes of the key."""
    unit = (
        '{"verdict": "Yes", "reasoning": "The answer cites \\u00a7 1983 and https://example.org/a?b=c%20d &amp; '
        'quotes \\"the rule\\".\\n"}, c2stYW50LWFwaTAz 736b2d616e74 Zq7vL2 sk-ant-api03-Zq7v … '
    )
    body = unit * (1_000_000 // len(unit))
    echoes = [KEY_A, base64.encodebytes(KEY_A.encode()).decode(), "\\u0073" + KEY_A[1:-4]]
    third = len(body) // 3
    return body[:third] + echoes[0] + body[third : 2 * third] + echoes[1] + body[2 * third :] + echoes[2]


def test_a_1mb_reply_is_scrubbed_without_backtracking() -> None:
    """Node scrubs a 1 MB reply for 20 secrets (a machine with many keys in its environment; its regular
    expressions built and run), echoes found, in seconds: a scrubber that backtracks takes hours on 1 MB, so
    the bound is ten times the goal and holds on a loaded machine. The goal itself (under a second) and the
    growth with size are benchmarks/scrub_speed.py's."""
    reply = _reply_1mb()
    rng = random.Random(39)
    others = ["sk-proj-" + "".join(rng.choice("ABCDEFGHJKMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789_-")
                                   for _ in range(80)) for _ in range(19)]  # fmt: skip
    out = _node_eval(
        "const t0 = process.hrtime.bigint(); const s = judges.scrubber(data[0])(data[1]);"
        "return [Number(process.hrtime.bigint() - t0) / 1e9, s.split('[REDACTED]').length - 1, s.length];",
        [[KEY_A, *others], reply],
    )
    seconds, found, _ = out
    assert found == 3
    assert seconds < 10.0, seconds


def test_endpoint_settings_are_one_rule() -> None:
    """The settings a .env may not set for a switched judge (judges.cjs) are the ones bundle check names
    (grounding_eval/share/received.py)."""
    from grounding_eval.share.received import ENV_ENDPOINT

    names = ["OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "OPENAI_API_BASE", "OPENAI_API_BASE_URL", "AZURE_OPENAI_API_HOST",
             "OLLAMA_HOST", "MY_ENDPOINT", "X_API_URL", "HTTPS_PROXY", "http_proxy", "ALL_PROXY", "OLLAMA_BASE_PATH",
             "NODE_TLS_REJECT_UNAUTHORIZED", "OPENAI_API_KEY", "PROMPTFOO_PYTHON", "NO_PROXY", "HOSTNAME",
             "PROMPTFOO_DISABLE_TELEMETRY"]  # fmt: skip
    node = _node_eval("return data.map((n) => judges.ENDPOINT_ENV.test(n));", names)
    assert node == [bool(ENV_ENDPOINT.search(n)) for n in names]
    assert sum(node) == 13


@pytest.mark.parametrize("entry", sorted(p.name for p in (REPO / "assertions").iterdir() if p.is_file()))
def test_the_entry_files_hold_nothing_share_would_rewrite(entry: str) -> None:
    """A redacted share rewrites local paths and refuses key shapes: an entry file holding a look-alike (a
    regular expression such as '\\\\s\\\\x01]' or '/-/g') would reach the partner changed, and bundle check
    would refuse it as code that differs from the pack's."""
    from grounding_eval.judge._redact import key_shape
    from grounding_eval.share.leaks import find_absolute_path

    text = (REPO / "assertions" / entry).read_text(encoding="utf-8")
    found = find_absolute_path(text)
    assert found is None, text[max(0, found.start() - 40) : found.end() + 10]
    assert key_shape(text) is None
