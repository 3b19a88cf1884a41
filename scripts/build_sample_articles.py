"""Rebuild datasets/sample/articles/ from the public-domain texts in ../shared/data/sources/.

Kept so the sample article cache is reproducible: each statute file becomes one article, and the
usa.gov file (11 pages) becomes one article per page. Every article keeps an origin line first.
Run from the repository root: .venv/bin/python scripts/build_sample_articles.py
"""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCES = REPO.parent / "shared" / "data" / "sources"
OUT = REPO / "datasets" / "sample" / "articles"

STATUTES = {
    "us-15usc9057": "us_15usc9057_cares_act_multifamily_forbearance_tenant_protections.txt",
    "us-15usc9058": "us_15usc9058_cares_act_eviction_notice.txt",
    "us-34usc12491": "us_34usc12491_vawa_housing_protections.txt",
    "us-42usc3604": "us_42usc3604_fair_housing_act_discrimination.txt",
    "us-50usc3951": "us_50usc3951_scra_evictions.txt",
    "mi-mcl554-601": "mi_mcl554_601_landlord_tenant_relationships_act_security_deposits.txt",
    "mi-mcl554-631": "mi_mcl554_631_truth_in_renting_act.txt",
}
USAGOV = "us_usagov_tenant_eviction_legal_aid_pages.txt"
PAGE = re.compile(r"^----- PAGE: (\S+) \(source file: (\S+)\) -----$", re.MULTILINE)


def main() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for article_id, name in STATUTES.items():
        (OUT / f"{article_id}.txt").write_text((SOURCES / name).read_text(encoding="utf-8"), encoding="utf-8")
    text = (SOURCES / USAGOV).read_text(encoding="utf-8")
    pages = list(PAGE.finditer(text))
    for i, page in enumerate(pages):
        url, source_file = page.group(1), page.group(2)
        body = text[page.end() : pages[i + 1].start() if i + 1 < len(pages) else len(text)].strip()
        slug = url.removeprefix("https://www.usa.gov/").replace("/", "-")
        title = next(line for line in body.splitlines() if line.strip())
        header = (
            f"USAGov: {title} | Origin: {url} | Via: github.com/GSA-TTS/10x-usagov-wrangler@b9b502103a06 "
            f"{source_file} | U.S. government work, public domain"
        )
        (OUT / f"usagov-{slug}.txt").write_text(f"{header}\n\n{body}\n", encoding="utf-8")


if __name__ == "__main__":
    main()
