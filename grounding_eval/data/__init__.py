"""Datasets: the file formats, their loaders, and each round's selection of items.

A package (not a namespace folder) so the import contracts in pyproject.toml see it as one layer: it
imports only the core vocabulary, and the verifier, the judges and everything above import it (issue 40).
"""
