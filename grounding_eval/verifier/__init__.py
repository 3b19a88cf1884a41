"""Deterministic verifier checks: pure functions from an answer and its evidence to typed reports.

The five checks (URL allowlist, phone–org, URL–org, jurisdiction leak, quotation accuracy) run in
Python after generation and are never LLM-mediated. :func:`verify` runs them all; :func:`load_resources`
builds what they compare against; each check is also usable on its own from its module.
"""

from grounding_eval.verifier.allowlist import Allowlist, UrlFinding, UrlStatus, classify_url, load_allowlist
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
