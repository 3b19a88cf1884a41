"""Deterministic verifier checks: pure functions from an answer and its evidence to typed reports."""
