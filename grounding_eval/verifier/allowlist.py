"""Load the URL allowlist and classify each link an answer cites against it.

The allowlist is the set of pages a legal-aid team has checked and is happy for an answer to cite. A
link in it is fine; a link outside it is either a real page nobody vetted (REAL_NOT_IN_ALLOWLIST) or a
page that does not exist (HALLUCINATED_URL) — and when that cannot be established, the honest answer is
UNCHECKED, never a guess. One kind of hallucination needs no network at all: a host whose last label
is not a real top-level domain (``https://help.illinois-legal-aid/eviction``, ``http://legalaid/``)
cannot exist, so it is HALLUCINATED_URL offline and live alike, before any liveness lookup
(:func:`~grounding_eval.verifier.urls.suffix_problem` lists the cases that are not this rule:
IP addresses, ``localhost``). Lookups compare normalized URLs
(:func:`~grounding_eval.verifier.urls.normalize_url`), so ``http://www.lawhelp.org/?utm_source=x`` is the
allowlisted ``https://lawhelp.org``; matching is per page, not per site.

File formats, both UTF-8:

* text: one URL per line; ``#`` starts a comment on a line of its own, and `` # ...`` after a URL is a
  comment too (a ``#`` directly after URL characters is the URL's fragment); blank lines are ignored;
* ``.csv``: a header with a ``url`` column; other columns (provenance, notes) are ignored.

Bare domains (``lawhelp.org/find``) are accepted by the same rules as in answers.
"""

from __future__ import annotations

import csv
import enum
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from grounding_eval.errors import DataError, clip
from grounding_eval.files import read_text
from grounding_eval.verifier.liveness import Liveness, LivenessChecker
from grounding_eval.verifier.records import quick_init
from grounding_eval.verifier.urls import UrlMention, extract_urls, normalize_url, suffix_problem, url_host

if TYPE_CHECKING:
    from grounding_eval.data.records import IndexRecord

__all__ = [
    "Allowlist",
    "UrlFinding",
    "UrlStatus",
    "classify_url",
    "index_allowlist",
    "index_urls",
    "load_allowlist",
]

_TRAILING_COMMENT = re.compile(r"\s#.*$")
_USERINFO = re.compile(r"(://)[^/@\s]*@")


class UrlStatus(enum.Enum):
    """Where a cited URL stands."""

    IN_ALLOWLIST = "IN_ALLOWLIST"
    REAL_NOT_IN_ALLOWLIST = "REAL_NOT_IN_ALLOWLIST"
    HALLUCINATED_URL = "HALLUCINATED_URL"
    UNCHECKED = "UNCHECKED"


@dataclass(frozen=True)
class Allowlist:
    """A loaded allowlist.

    Attributes:
        path: The file it came from (for messages).
        urls: The normalized URLs.
    """

    path: str
    urls: frozenset[str]

    def __contains__(self, url: str) -> bool:
        """Return whether ``url``, once normalized, is in the allowlist."""
        return normalize_url(url) in self.urls

    def __len__(self) -> int:
        """Return the number of distinct normalized URLs."""
        return len(self.urls)


@quick_init  # (half the cost of the frozen __init__: see records)
@dataclass(frozen=True, slots=True)  # (no dict per instance: a hostile answer holds 10^5 of these)
class UrlFinding:
    """The verdict for one cited URL.

    Attributes:
        mention: The link as found in the answer.
        normalized: Its normalized form (the allowlist key).
        status: The verdict.
        detail: Why, e.g. ``"in allowlist"`` or ``"not in allowlist; HTTP 404"``.
    """

    mention: UrlMention
    normalized: str
    status: UrlStatus
    detail: str


def load_allowlist(path: str | Path) -> Allowlist:
    """Read an allowlist file (text or ``.csv``).

    Args:
        path: The file.

    Returns:
        The allowlist, URLs normalized.

    Raises:
        DataError: The file is missing or unreadable, a CSV has no ``url`` column, an entry is not an
            http(s) URL (the message names the line), or there are no URLs.
    """
    file = Path(path)
    urls, problems = _read(file)
    if problems:
        raise problems[0]
    return Allowlist(path=str(file), urls=frozenset(urls))


def allowlist_problems(path: str | Path) -> list[str]:
    """Every problem of an allowlist file, one line each (``data validate``): each line that is not an
    http(s) URL, or a file with none. Empty when :func:`load_allowlist` would load it."""
    try:
        return [problem.one_line() for problem in _read(Path(path))[1]]
    except DataError as exc:
        return [exc.one_line()]


def _read(file: Path) -> tuple[set[str], list[DataError]]:
    content = read_text(file)
    is_csv = file.suffix.lower() == ".csv"
    entries = _csv_entries(file, content) if is_csv else _text_entries(content)
    urls: set[str] = set()
    problems: list[DataError] = []
    for line, entry in entries:
        url = _entry_url(entry)
        if url is None:
            shown = _excerpt(entry, evident=is_csv or bool(urls))
            problems.append(DataError(file, f"line {line}: not an http(s) URL{shown}"))
        else:
            urls.add(normalize_url(url))
    if not urls and not problems:
        problems.append(DataError(file, "no URLs"))
    return urls, problems


def classify_url(mention: UrlMention, allowlist: Allowlist, liveness: LivenessChecker) -> UrlFinding:
    """Classify one cited URL: allowlist, then the public-suffix rule, then liveness.

    The order matters: an allowlisted page is fine whatever its host (a team may vet an intranet
    page), and a host that cannot exist is a hallucination in every mode, so neither asks the
    liveness checker — or its snapshot — anything.

    Args:
        mention: The link from :func:`~grounding_eval.verifier.urls.extract_urls`.
        allowlist: The vetted pages.
        liveness: Decides LIVE/DEAD/UNKNOWN for the rest.

    Returns:
        IN_ALLOWLIST; HALLUCINATED_URL for a host without a real public suffix; otherwise
        REAL_NOT_IN_ALLOWLIST (LIVE), HALLUCINATED_URL (DEAD: HTTP 404/410 or DNS NXDOMAIN) or
        UNCHECKED (UNKNOWN).
    """
    normalized = normalize_url(mention.url)
    if normalized in allowlist.urls:
        return UrlFinding(mention, normalized, UrlStatus.IN_ALLOWLIST, "in allowlist")
    host = url_host(mention.url)
    problem = suffix_problem(host) if host is not None else None
    if problem is not None:
        return UrlFinding(mention, normalized, UrlStatus.HALLUCINATED_URL, f"not in allowlist; {problem}")
    result = liveness.check(mention.url)
    if result.status is Liveness.LIVE:
        return UrlFinding(
            mention, normalized, UrlStatus.REAL_NOT_IN_ALLOWLIST, f"not in allowlist; live: {result.detail}"
        )
    if result.status is Liveness.DEAD:
        return UrlFinding(
            mention, normalized, UrlStatus.HALLUCINATED_URL, f"not in allowlist; {result.detail}"
        )
    return UrlFinding(
        mention, normalized, UrlStatus.UNCHECKED, f"not in allowlist; liveness unchecked: {result.detail}"
    )


def _text_entries(content: str) -> list[tuple[int, str]]:
    entries = []
    for number, line in enumerate(content.splitlines(), start=1):
        entry = _TRAILING_COMMENT.sub("", line).strip()
        if entry and not entry.startswith("#"):
            entries.append((number, entry))
    return entries


def _csv_entries(file: Path, content: str) -> list[tuple[int, str]]:
    try:
        reader = csv.DictReader(io.StringIO(content, newline=""))
        fields = [name.strip().lower() for name in reader.fieldnames or ()]
        if "url" not in fields:
            raise DataError(file, "CSV has no 'url' column")
        column = (reader.fieldnames or [])[fields.index("url")]
        return [(reader.line_num, (row.get(column) or "").strip()) for row in reader]
    except csv.Error as exc:
        raise DataError(file, f"not valid CSV: {exc}") from exc


def _excerpt(entry: str, *, evident: bool) -> str:
    """The entry, clipped, for the message — only when the file is evidently an allowlist.

    Evident means a CSV with a ``url`` column, a URL read before this line, or an entry that is itself
    a try at a link (``ftp://…``, ``mailto:…``, ``help@a.org``). A file that is not an allowlist at all
    (``--allowlist /etc/shadow``) gets the line number and no content; a password in a URL
    (``https://user:secret@host``) is never shown.
    """
    lowered = entry.lower()
    if evident or "://" in entry or "@" in entry or lowered.startswith(("mailto:", "www.")):
        return ": " + clip(_USERINFO.sub(r"\1…@", entry))
    return " (an allowlist has one URL per line: is this the right file?)"


def _entry_url(entry: str) -> str | None:
    """Return the absolute URL if ``entry`` is exactly one http(s) URL or bare domain, else ``None``."""
    mentions = extract_urls(entry)
    if len(mentions) == 1 and mentions[0].raw == entry and mentions[0].link_text is None:
        return mentions[0].url
    return None


def index_urls(index: dict[str, IndexRecord]) -> frozenset[str]:
    """Every record's URL, normalized: the one rule behind ``grounding-eval allowlist build`` and the
    allowlist of a dataset without an allowlist file (:func:`index_allowlist`)."""
    return frozenset(normalize_url(record.url) for record in index.values())


def index_allowlist(index_path: str | Path, *, inside: str | Path | None = None) -> Allowlist:
    """The URL allowlist derived from a content index (:func:`index_urls`)."""
    # Start-up: the verifier assertion imports this module on every row and reads an index only when a
    # dataset is named without an allowlist file (benchmarks/cold_start.py measures that path).
    from grounding_eval.data.load import load_index

    urls = index_urls(load_index(index_path, inside=inside))
    if not urls:
        raise DataError(index_path, "no URLs to build an allowlist from")
    return Allowlist(path=f"{index_path} (built from the index)", urls=urls)
