"""The factuality commands of the CLI. Imports only argparse until a command runs."""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["COMMANDS", "add_commands", "run"]

COMMANDS: frozenset[str] = frozenset()


def add_commands(sub: argparse._SubParsersAction[Any]) -> None:
    """Add this group's commands to the ``grounding-eval`` parser (none yet)."""


def run(args: argparse.Namespace) -> int:
    """Run one of :data:`COMMANDS`; returns the exit status."""
    raise AssertionError(f"not a {__name__} command: {args.command}")
