"""The benchmark answer: a ~600-word answer with several URLs, phone numbers and quotes, checked against two
public-domain statutes from the sample articles, with a paragraph of statute citations and a case citation
to add. Read by ``verifier_speed.py`` and ``cold_start.py`` (kept apart so neither imports the other's
measurements: issue 40).
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ARTICLES = REPO / "datasets" / "sample" / "articles"
SOURCE_FILES = [
    "mi-mcl554-601.txt",
    "us-34usc12491.txt",
]

PARAGRAPHS = [
    "In Michigan your landlord must either return your security deposit or mail you an itemized list of "
    "damages within 30 days after you move out, as long as you gave a forwarding address within 4 days. "
    'The Act says the landlord "shall mail to the tenant, within 30 days after the termination of '
    'occupancy, an itemized list of damages claimed". If that list never came, the law treats it as '
    '"agreement by the landlord that no damages are due".',
    "Call Legal Aid of Western Michigan at (616) 555-0142 or visit https://www.lawestmi.org for help "
    "writing a demand letter. Lakeshore Legal Aid ((888) 783-8190, https://www.lakeshorelegalaid.org) "
    "serves the Detroit area. You can also see [Michigan's law](https://www.legislature.mi.gov/Laws/MCL?"
    "objectName=mcl-Act-348-of-1972) and the federal finder at https://www.lsc.gov/about-lsc/what-legal-"
    "aid/get-legal-help.",
    'Survivors of domestic violence have extra protections: a tenant "may not be denied admission to, '
    "denied assistance under, terminated from participation in, or evicted from the housing on the basis "
    'that the applicant or tenant is or has been a victim of domestic violence". The statute also says '
    'the housing authority "must pay moving costs within five days of any request", which you should '
    "confirm with a lawyer before relying on it.",
    "Keep copies of your lease, your move-out photos, the forwarding-address letter and any reply. If "
    "the landlord sues, the court will look at whether the inventory checklists were done, whether the "
    "notice was mailed on time, and whether the damages claimed are more than normal wear and tear. "
    "Small claims court is an option for amounts within its limit, and you do not need a lawyer there, "
    "although free advice is available from Legal Services of Northern Michigan at (800) 872-8432.",
]


# The citation variants (issue 22's citations check): the plain answer with a paragraph citing a few
# statutes (one listed in the sample's citation index, one in a range it covers, one Id., one federal
# section, one of another state), and the same with a case citation as well (eyecite reads it).
STATUTES = (
    "The Security Deposits Act sets the rules: MCL 554.602 caps the deposit at one and a half months' "
    "rent, and Mich. Comp. Laws § 554.609 requires the itemized list. Id. § 554.610. Federal law adds "
    "protections for survivors (34 U.S.C. § 12491), and Texas's Tex. Prop. Code § 92.103 does not apply."
)
CASE = (
    " A Michigan court read the Act the same way in Stutelberg v. Practical Management Co., 245 N.W.2d 737."
)


def build_answer(target_words: int = 600, extra: str = "") -> str:
    """Repeat the paragraphs until the answer reaches about ``target_words`` words (``extra`` second)."""
    parts: list[str] = []
    while sum(len(p.split()) for p in parts) < target_words:
        parts.append(PARAGRAPHS[len(parts) % len(PARAGRAPHS)])
    if extra:
        parts.insert(1, extra)
    return "\n\n".join(parts)
