"""Echoed forms of a key the scrubbers miss (issue 39: "no secret is ever written").

Feeds each form to the Node scrubber (assertions/judges.cjs scrubber, where a judge's reply is scrubbed before it
crosses to Python) and the Python one (grounding_eval/judge/_redact.py, used by share --redact), and prints the
forms that come back unchanged: a reader recovers the key from each with one obvious step.
"""

from __future__ import annotations

import base64
import codecs
import gzip
import json
import subprocess
import sys

from common import REPO

KEY = "sk-partner-PARTNERKEY0123456789abcdef"
ODD = "sk-odd+Test/KEY=0123456789:abc d\u00e9f~XYZ"


def forms(key: str) -> dict[str, str]:
    b = key.encode()
    return {
        "reversed": key[::-1],
        "rot13": codecs.encode(key, "rot13"),
        "base32": base64.b32encode(b).decode(),
        "zero-width-space-between-chars": "\u200b".join(key),
        "soft-hyphen-between-chars": "\u00ad".join(key),
        "fullwidth (NFKC gives the key)": "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in key),
        "markdown-escaped-hyphens": key.replace("-", "\\-"),
        "html-tags-between-parts": key.replace("-", "<wbr>-"),
        "ansi-colour-around-each-char": "".join(f"\x1b[1m{c}\x1b[0m" for c in key),
        "json-array-of-chars": json.dumps(list(key)),
        "comma-separated-chars": ",".join(key),
        "dot-separated-chars": ".".join(key),
        "octal-escapes": "".join(f"\\{ord(c):03o}" for c in key),
        "css-escapes": "".join(f"\\{ord(c):x} " for c in key),
        "js-escape()-%u": "".join(f"%u{ord(c):04X}" for c in key),
        "utf16le-hex": b.decode().encode("utf-16-le").hex(),
        "utf16le-base64": base64.b64encode(key.encode("utf-16-le")).decode(),
        "base64-of-base64": base64.b64encode(base64.b64encode(b)).decode(),
        "gzip-base64": base64.b64encode(gzip.compress(b, mtime=0)).decode(),
        "split-across-two-json-strings": json.dumps({"a": key[:20], "b": key[20:]}),
        "decimal-byte-list": " ".join(str(x) for x in b),
        "php-json-escaped-slash": json.dumps(key).strip('"').replace("/", "\\/"),
        "quoted-printable": key.replace("=", "=3D").replace("\u00e9", "=C3=A9"),
        "backslash-every-char": "".join("\\" + c for c in key),
    }


NODE = r"""
const j = require(process.argv[1]);
const [key, texts] = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const scrub = j.scrubber([key]);
process.stdout.write(JSON.stringify(Object.fromEntries(Object.entries(texts).map(([k, v]) => [k, scrub(v)]))));
"""


def main() -> int:
    from grounding_eval.judge import _redact

    missed = 0
    for key in (KEY, ODD):
        fs = forms(key)
        node = subprocess.run([str(REPO / "node_modules" / ".bin" / "node"), "-e", NODE, str(REPO / "assertions" / "judges.cjs")],
                              input=json.dumps([key, fs]), capture_output=True, text=True, check=True)
        by_node = json.loads(node.stdout)
        pattern = _redact.secret_pattern(key)
        for name, text in fs.items():
            n_kept = by_node[name] == text
            p_kept = _redact.redact(text, pattern) == text
            if n_kept or p_kept:
                missed += 1
                print(f"{key[:9]}… {name:38s} node {'KEPT' if n_kept else 'scrubbed'}  python {'KEPT' if p_kept else 'scrubbed'}  e.g. {text[:60]!r}")
    print(f"{missed} form(s) kept by at least one scrubber")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
