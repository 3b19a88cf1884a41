"""Composite scores per round, exactly as the methods document states them."""
