"""Sharing a study with partner researchers: `init`, `share`, `bundle check` (issue 10)."""
