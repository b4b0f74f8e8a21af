"""The HTTP protocol kenning runs uvicorn with: h11, with ``TCP_NODELAY`` on every connection
and a deadline on each request's head.

With ``--workers N`` uvicorn binds the listening socket itself, as ``socket(AF_INET)`` whose
protocol number is 0, and asyncio sets ``TCP_NODELAY`` only on sockets that say
``IPPROTO_TCP``. Nagle's algorithm then holds the body of a response written in two sends
until the client's delayed ACK: every request took ~40 ms more with two workers than with one
(measured: 44 ms against 2 ms for ``GET /healthz``).

uvicorn times out only idle keep-alive connections, between requests: a connection that opens
and sends nothing, or half a request head, was held for as long as the client liked (measured:
still open after 45 s), and a thousand of them are a thousand sockets. Here a head must be
complete within ``header_timeout_s`` of the connection opening or of its first byte; if not,
the connection gets a 408 and is closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from typing import ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

__all__ = ["NoDelayH11Protocol", "set_header_timeout"]

_TIMED_OUT = (
    b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain\r\n"
    b"content-length: 27\r\nconnection: close\r\n\r\nthe request head came late\n"
)


class NoDelayH11Protocol(H11Protocol):
    """uvicorn's h11 protocol without Nagle's algorithm, with a deadline on request heads."""

    #: Set at the edge (``set_header_timeout``): uvicorn makes the protocol from its own
    #: config, and a worker process imports this class afresh.
    header_timeout_s: ClassVar[float] = 10.0

    _head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        super().connection_made(transport)
        # A new connection owes its first head at once (uvicorn's keep-alive timer only
        # starts after a response).
        self._arm_head_timer()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        if self.conn.their_state is h11.IDLE and self.conn.trailing_data[0]:
            self._arm_head_timer()  # a head has begun: the rest of it is due
        elif self.conn.their_state is not h11.IDLE:
            self._disarm_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_head_timer()
        super().connection_lost(exc)

    def _arm_head_timer(self) -> None:
        if self._head_timer is None and not self.transport.is_closing():
            self._head_timer = self.loop.call_later(self.header_timeout_s, self._head_late)

    def _disarm_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_late(self) -> None:
        self._head_timer = None
        if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
            self.transport.write(_TIMED_OUT)
            self.transport.close()


def set_header_timeout(seconds: float) -> None:
    """How long every connection of this process may take to send a request's head."""
    NoDelayH11Protocol.header_timeout_s = seconds
