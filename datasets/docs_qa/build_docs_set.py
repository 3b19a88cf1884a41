"""Build the sample docs set (``datasets/docs_qa/docs/``) from the public-domain texts it was made from.

Run once, by hand, where the shared source texts are (they are not part of the repository):

    .venv/bin/python datasets/docs_qa/build_docs_set.py /work/shared/data/sources

The output is committed; nothing runs this at test or evaluation time. What it changes, and why, is in
``datasets/docs_qa/SOURCES.md``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent / "docs"

# usa.gov pages kept (page URL path → file name). Two pages that are only lists of links to other pages
# (eviction-and-foreclosure, rental-housing-programs) and the housing-help hub are left out.
PAGES = {
    "tenant-rights": "tenant-rights.md",
    "avoid-eviction": "avoid-eviction.md",
    "emergency-pay-rent": "emergency-pay-rent.md",
    "rent-help-groups": "rent-help-groups.md",
    "subsidized-rental-housing": "subsidized-rental-housing.md",
    "housing-discrimination-complaints": "housing-discrimination-complaints.md",
    "legal-aid": "legal-aid.md",
    "agencies/legal-services-corporation": "legal-services-corporation.md",
}
STATUTES = {
    "us_15usc9058_cares_act_eviction_notice.txt": "cares-act-eviction-moratorium.md",
    "us_50usc3951_scra_evictions.txt": "scra-evictions.md",
}
_PAGE = re.compile(r"^----- PAGE: https://www\.usa\.gov/(\S+) ")
_BANNER = re.compile(r"\n\* Image\n.*?\[Facing financial hardship\]\(/financial-hardship\)\n +-+\n", re.S)


def _atx(text: str) -> str:
    """Setext headings to ATX (``#`` / ``##``), bold markers dropped from heading text."""
    lines = text.split("\n")
    out: list[str] = []
    for line in lines:
        if (
            out
            and out[-1].strip()
            and not out[-1].startswith(("#", " ", "*", "["))
            and re.fullmatch(r"(=+|-+)", line)
        ):
            out[-1] = ("# " if line[0] == "=" else "## ") + out[-1].strip().strip("*")
            continue
        out.append(line)
    return "\n".join(out)


def _statute(text: str) -> str:
    lines = text.split("\n")
    out = []
    for line in lines:
        if line.startswith("§ "):
            out.append("# " + line)
        elif re.fullmatch(r"\([a-z]\) [A-Z][^.;:]{2,60}", line):
            out.append("## " + line)
        elif re.fullmatch(r"\(\d+\) [A-Z][^.;:]{2,60}", line) and not line.endswith((" and", " or")):
            out.append("### " + line)
        else:
            out.append(line)
    return "\n".join(out)


def main(sources: Path) -> None:
    OUT.mkdir(exist_ok=True)
    pages = (sources / "us_usagov_tenant_eviction_legal_aid_pages.txt").read_text(encoding="utf-8")
    chunks = re.split(r"\n(?=----- PAGE: )", pages)
    for chunk in chunks[1:]:
        head, _, body = chunk.partition("\n")
        match = _PAGE.match(head)
        if not match or match.group(1) not in PAGES:
            continue
        body = _BANNER.sub("\n", body).strip()
        url = f"https://www.usa.gov/{match.group(1)}"
        text = f"<!-- {url} (U.S. government work, public domain); see ../SOURCES.md -->\n\n{_atx(body)}\n"
        (OUT / PAGES[match.group(1)]).write_text(text, encoding="utf-8")
    for source, name in STATUTES.items():
        header, _, body = (sources / source).read_text(encoding="utf-8").partition("\n\n")
        origin = header.split("| Origin: ")[1].split(" |")[0]
        text = f"<!-- {origin} (public domain, 17 U.S.C. 105); see ../SOURCES.md -->\n\n{_statute(body.strip())}\n"
        (OUT / name).write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
