"""Every docs-QA test starts with a new process's judge clients."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _fresh_clients() -> Iterator[None]:
    """The adapters build each judge client once per process, with the API key and base URL the
    environment holds then; tests change the environment and rewrite recordings."""
    from grounding_eval.judge import clients

    clients.forget_clients()
    yield
    clients.forget_clients()
