"""urllib3 connections pinned to one checked address and held to the URL's deadline.

Imported by a live check only (urllib3 brings sockets, TLS and http.client). urllib3 keeps the HTTP
parser, TLS and the certificate check; three gaps are closed here. It would look the address up again
(a second ``getaddrinfo``, which tests count), so ``_new_conn`` connects to the checked socket address
itself. A fixed per-read timeout cannot stop a server that trickles its headers, so the response reads
through a file whose every read waits at most what is left of the deadline. And http.client skips only
``100 Continue`` and takes headers cut off by a closed connection as complete (python/cpython#42550), so
the response class reads past other 1xx answers and notices the early close.
"""

from __future__ import annotations

import functools
import http.client
import io
import socket
import time
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


class _DeadlineReader(io.RawIOBase):
    """The socket as a file whose every read waits at most the timeout, or what is left of the deadline.

    It reads through the socket's own file (``makefile``), which holds the socket open as http.client's
    file did: http.client closes the connection's socket once the headers say the server will close
    (an HTTP/1.0 answer), and a body read later (a citation's page) must still find it open.
    """

    def __init__(self, sock: socket.socket, end: float, timeout: float) -> None:
        self._sock, self._end, self._timeout = sock, end, timeout
        self._raw = sock.makefile("rb", buffering=0)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self._end - time.monotonic()
        if left <= 0:
            raise TimeoutError("the URL's deadline passed")
        self._sock.settimeout(min(self._timeout, left))
        read: int | None = self._raw.readinto(buffer)
        return read or 0

    def close(self) -> None:
        if not self.closed:
            self._raw.close()
        super().close()


class _Response(http.client.HTTPResponse):
    def __init__(self, sock: socket.socket, *args: Any, end: float, timeout: float, **kwargs: Any) -> None:
        super().__init__(sock, *args, **kwargs)
        self.fp.close()  # http.client's own file on the socket, replaced by one held to the deadline
        self._watch = _EofWatch(io.BufferedReader(_DeadlineReader(sock, end, timeout)))
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
    """What both connection classes add: the checked address, and reads held to the deadline."""

    def __init__(
        self, *args: Any, address: tuple[int, tuple[Any, ...]], end: float, read_timeout: float, **kw: Any
    ) -> None:
        super().__init__(*args, **kw)
        self._address = address
        self.response_class = functools.partial(_Response, end=end, timeout=read_timeout)

    def _new_conn(self) -> socket.socket:
        family, sockaddr = self._address
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.settimeout(self.timeout)  # type: ignore[attr-defined]
            sock.connect(sockaddr)
        except OSError as exc:
            sock.close()
            raise ConnectFailed(exc) from exc
        return sock


class PinnedHTTPConnection(_Pinned, HTTPConnection):  # type: ignore[misc]  # a partial of _Response
    pass


class PinnedHTTPSConnection(_Pinned, HTTPSConnection):  # type: ignore[misc]
    pass


class PinnedHTTPConnectionPool(HTTPConnectionPool):
    ConnectionCls = PinnedHTTPConnection


class PinnedHTTPSConnectionPool(HTTPSConnectionPool):
    ConnectionCls = PinnedHTTPSConnection
