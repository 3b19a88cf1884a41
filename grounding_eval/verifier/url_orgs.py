"""URL–org cross-check: is each URL credited to the organization that owns its domain?

"Legal Aid Chicago: https://www.lollaf.org" sends a reader to Land of Lincoln while telling them it is
Legal Aid Chicago — the misattribution the methods document calls especially dangerous. A URL is
credited to the organization named in its Markdown link text (for a reference definition ``[1]:
https://…``, the text of the first link ``[Name][1]`` using it; a URL written in the link text is no
name), or else to the one the pairing gives it (:class:`~grounding_eval.verifier.phones.Pairing`: the
nearest name in its sentence within its table cell, card or footnote, else that block's organization; a
definition's URL pairs within its own line, else where its first link is). A link whose text is its own
URL is one URL (:func:`~grounding_eval.verifier.urls.extract_urls`). Ownership comes from the
directory's domains, matched on whole host labels (so the userinfo trick
``https://trusted.org@evil.test/`` and look-alikes such as ``trusted.org.evil.test`` are never credited
to ``trusted.org``'s owner).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass

from grounding_eval.verifier.directory import Directory, Organization, OrgMention
from grounding_eval.verifier.phones import Pairing
from grounding_eval.verifier.records import quick_init
from grounding_eval.verifier.urls import UrlMention, extract_urls, url_host

__all__ = ["UrlOrgFinding", "UrlOrgStatus", "check_url_orgs"]


class UrlOrgStatus(enum.Enum):
    """Outcome of the URL–org check for one URL."""

    MATCH = "MATCH"  # credited to the organization that owns its domain
    MISATTRIBUTED = "MISATTRIBUTED"  # credited to a different organization than the owner
    UNPAIRED = "UNPAIRED"  # no organization is named with it: nothing to cross-check
    UNOWNED = "UNOWNED"  # its domain belongs to no directory organization: nothing to cross-check


@quick_init  # (half the cost of the frozen __init__: see records)
@dataclass(frozen=True, slots=True)  # (no dict per instance: a hostile answer holds 10^5 of these)
class UrlOrgFinding:
    """One URL, the organization it is credited to, and the organization owning its domain."""

    mention: UrlMention
    paired_org: Organization | None
    owner: Organization | None
    status: UrlOrgStatus

    @property
    def detail(self) -> str:
        """A sentence a person can act on."""
        url = self.mention.raw
        if self.status is UrlOrgStatus.MISATTRIBUTED:
            assert self.paired_org is not None and self.owner is not None
            return f"{url} is credited to {self.paired_org.name} but belongs to {self.owner.name}"
        if self.status is UrlOrgStatus.MATCH:
            assert self.owner is not None
            return f"{url} is {self.owner.name}'s"
        if self.status is UrlOrgStatus.UNOWNED:
            return f"{url}: its domain belongs to no directory organization"
        return f"{url}: no organization is named with it"


def check_url_orgs(
    text: str,
    directory: Directory,
    urls: Sequence[UrlMention],
    mentions: Sequence[OrgMention],
    sentences: list[tuple[int, int]],
    contacts: Sequence[tuple[int, int]] = (),
    pairing: Pairing | None = None,
) -> list[UrlOrgFinding]:
    """Cross-check every URL's attribution against its domain's owner (``contacts``: phone/URL spans).

    Budget: O((m + c) log(m + c)) to index the m mentions and c contacts, then per URL one host lookup
    (remembered per distinct URL), one Markdown link text search and one :meth:`Pairing.nearest`.
    """
    pairing = pairing or Pairing(text, mentions, sentences, contacts)  # (verify() shares one)
    owners: dict[str, Organization | None] = {}  # a URL repeated a thousand times is looked up once
    named_by: dict[str, Organization | None] = {}  # and a link text read once
    named = pairing.mentions > 0  # with no organization named anywhere, only link text can credit one
    findings = []
    for url in urls:
        if url.url not in owners:
            host = url_host(url.url)
            owners[url.url] = directory.owner_of_host(host) if host else None
        owner = owners[url.url]
        paired_org = _attributed_org(directory, url, pairing, named_by) if url.link_text or named else None
        if owner is None:
            status = UrlOrgStatus.UNOWNED
        elif paired_org is None:
            status = UrlOrgStatus.UNPAIRED
        elif paired_org is owner:
            status = UrlOrgStatus.MATCH
        else:
            status = UrlOrgStatus.MISATTRIBUTED
        findings.append(UrlOrgFinding(url, paired_org, owner, status))
    return findings


def _attributed_org(
    directory: Directory, url: UrlMention, pairing: Pairing, named_by: dict[str, Organization | None]
) -> Organization | None:
    if url.link_text:
        if url.link_text not in named_by:
            named_by[url.link_text] = _named_in_link_text(directory, url.link_text)
        if named_by[url.link_text] is not None:
            return named_by[url.link_text]
    # Mentions inside a Markdown link's own text were handled above; everywhere else, the nearest wins.
    paired = pairing.nearest(url.start, url.end)
    return paired.org if paired else None


def _named_in_link_text(directory: Directory, link_text: str) -> Organization | None:
    """The first organization a link text names; a URL written in it is no name ("lawhelp.org")."""
    inside = [(u.start, u.end) for u in extract_urls(link_text)] if "." in link_text else []
    named = directory.find_mentions(link_text, masked=inside)
    return named[0].org if named else None
