"""urllib3 connections pinned to one checked address and held to the URL's deadline.

Imported by a live check only (urllib3 brings sockets, TLS and http.client). urllib3 keeps the HTTP
parser, TLS and the certificate check; three gaps are closed here. It would look the address up again
(a second ``getaddrinfo``, which tests count), so ``_new_conn`` connects to the checked socket address
itself. A per-read timeout cannot stop a server that trickles its headers, so a timer shuts the socket
down at the deadline. And http.client skips only ``100 Continue`` and takes headers cut off by a closed
connection as complete (python/cpython#42550), so the response class reads past other 1xx answers and
notices the early close.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import threading
from typing import Any

from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool


class ConnectFailed(OSError):
    """The TCP connection to the checked address failed (the next checked address may be tried)."""

    def __init__(self, cause: OSError) -> None:
        super().__init__(str(cause))
        self.cause = cause


class HeadersCutShort(http.client.HTTPException):
    """The connection closed before the blank line that ends the response headers."""


class _EofWatch:
    """The response's file, noting whether a header line came back empty (the connection closed)."""

    def __init__(self, fp: Any) -> None:
        self._fp = fp
        self.closed_early = False

    def readline(self, limit: int = -1) -> bytes:
        line: bytes = self._fp.readline(limit)
        self.closed_early = not line
        return line

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fp, name)


class _Response(http.client.HTTPResponse):
    def __init__(self, sock: socket.socket, *args: Any, **kwargs: Any) -> None:
        super().__init__(sock, *args, **kwargs)
        self._watch = _EofWatch(self.fp)
        self.fp = self._watch  # type: ignore[assignment]

    def begin(self) -> None:
        while True:
            super().begin()
            if self._watch.closed_early:
                raise HeadersCutShort("closed before the response headers ended")
            if not (100 <= self.status < 200) or self.status == 101:
                return
            self.headers = self.msg = None  # type: ignore[assignment]  # 103 Early Hints: the answer follows


class _Pinned:
    """What both connection classes add: the checked address, and the cut at the deadline."""

    sock: socket.socket | None

    def __init__(self, *args: Any, address: tuple[int, tuple[Any, ...]], deadline: float, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self._address = address
        self._deadline = deadline  # seconds from now
        self._timer: threading.Timer | None = None

    def _new_conn(self) -> socket.socket:
        family, sockaddr = self._address
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.settimeout(self.timeout)  # type: ignore[attr-defined]
            sock.connect(sockaddr)
        except OSError as exc:
            sock.close()
            raise ConnectFailed(exc) from exc
        self._timer = threading.Timer(self._deadline, self._cut)
        self._timer.daemon = True
        self._timer.start()
        return sock

    def _cut(self) -> None:
        sock = self.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)  # a blocked read returns at once

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        super().close()  # type: ignore[misc]  # the connection class after this one


class PinnedHTTPConnection(_Pinned, HTTPConnection):
    response_class = _Response


class PinnedHTTPSConnection(_Pinned, HTTPSConnection):
    response_class = _Response


class PinnedHTTPConnectionPool(HTTPConnectionPool):
    ConnectionCls = PinnedHTTPConnection


class PinnedHTTPSConnectionPool(HTTPSConnectionPool):
    ConnectionCls = PinnedHTTPSConnection
