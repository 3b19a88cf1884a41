"""Deterministic verifier checks: pure functions from an answer and its evidence to typed reports.

The six checks (URL allowlist, phone–org, URL–org, jurisdiction leak, quotation accuracy, legal
citations) run in Python after generation and are never LLM-mediated. :func:`verify` runs them all;
:func:`load_resources` builds what they compare against; each check is also usable on its own from its
module.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from grounding_eval.verifier.allowlist import (
        Allowlist,
        UrlFinding,
        UrlStatus,
        classify_url,
        load_allowlist,
    )
    from grounding_eval.verifier.directory import Directory, Organization, load_directory
    from grounding_eval.verifier.jurisdiction import JurisdictionLeak, check_jurisdiction
    from grounding_eval.verifier.liveness import Liveness, LivenessChecker, LivenessResult
    from grounding_eval.verifier.phones import PhoneFinding, PhoneStatus, check_phones, find_phones
    from grounding_eval.verifier.quotes import (
        QuoteFinding,
        QuoteStatus,
        QuoteThresholds,
        check_quotes,
        quote_score,
    )
    from grounding_eval.verifier.setup import load_resources
    from grounding_eval.verifier.url_orgs import UrlOrgFinding, UrlOrgStatus, check_url_orgs
    from grounding_eval.verifier.urls import UrlMention, extract_urls, normalize_url
    from grounding_eval.verifier.verdict import HardFailure, VerifierReport, VerifierResources, verify

__all__ = [
    "Allowlist",
    "Directory",
    "HardFailure",
    "JurisdictionLeak",
    "Liveness",
    "LivenessChecker",
    "LivenessResult",
    "Organization",
    "PhoneFinding",
    "PhoneStatus",
    "QuoteFinding",
    "QuoteStatus",
    "QuoteThresholds",
    "UrlFinding",
    "UrlMention",
    "UrlOrgFinding",
    "UrlOrgStatus",
    "UrlStatus",
    "VerifierReport",
    "VerifierResources",
    "check_jurisdiction",
    "check_phones",
    "check_quotes",
    "check_url_orgs",
    "classify_url",
    "extract_urls",
    "find_phones",
    "load_allowlist",
    "load_directory",
    "load_resources",
    "normalize_url",
    "quote_score",
    "verify",
]


# Each name is imported from its module on first use (PEP 562): promptfoo starts a fresh process for
# every assertion call, and a call that needs three checks' modules should not import all of them
# (the phone matcher's phonenumbers, the quotation check's rapidfuzz, liveness's networking).
_MODULE_OF = {
    "Allowlist": "allowlist",
    "Directory": "directory",
    "HardFailure": "verdict",
    "JurisdictionLeak": "jurisdiction",
    "Liveness": "liveness",
    "LivenessChecker": "liveness",
    "LivenessResult": "liveness",
    "Organization": "directory",
    "PhoneFinding": "phones",
    "PhoneStatus": "phones",
    "QuoteFinding": "quotes",
    "QuoteStatus": "quotes",
    "QuoteThresholds": "quotes",
    "UrlFinding": "allowlist",
    "UrlMention": "urls",
    "UrlOrgFinding": "url_orgs",
    "UrlOrgStatus": "url_orgs",
    "UrlStatus": "allowlist",
    "VerifierReport": "verdict",
    "VerifierResources": "verdict",
    "check_jurisdiction": "jurisdiction",
    "check_phones": "phones",
    "check_quotes": "quotes",
    "check_url_orgs": "url_orgs",
    "classify_url": "allowlist",
    "extract_urls": "urls",
    "find_phones": "phones",
    "load_allowlist": "allowlist",
    "load_directory": "directory",
    "load_resources": "setup",
    "normalize_url": "urls",
    "quote_score": "quotes",
    "verify": "verdict",
}


def __getattr__(name: str) -> Any:
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # the next lookup is an ordinary attribute
    return value
