"""Real servers on 127.0.0.1 for the verifier's network tests, and the guard that keeps them off the internet."""

from __future__ import annotations

import socketserver
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from grounding_eval.verifier import liveness
from grounding_eval.verifier.liveness import DnsOutcome


@contextmanager
def serving(server: socketserver.BaseServer) -> Iterator[None]:
    """Serve ``server`` from a daemon thread while the block runs; shut it down and close it after."""
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()


def refuse_system_dns(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail the test that asks the system's DNS resolver: it would be asking the internet."""

    def refuse(self: object, host: str, **kwargs: object) -> DnsOutcome:
        raise AssertionError(f"the system DNS resolver was asked about {host}")

    monkeypatch.setattr(liveness.DnspythonResolver, "resolve", refuse)
