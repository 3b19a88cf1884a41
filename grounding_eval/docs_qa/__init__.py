"""The docs-QA evaluation (seed 003): four pass/fail criteria, question types, results by type."""
