"""uvicorn's h11 protocol with a deadline for request heads.

uvicorn closes a kept-alive connection that stays silent (``timeout_keep_alive``), but a connection
that never sends anything, or sends part of a request head and then trickles or stops, stays open
for ever: 300 such sockets were all still open after a minute (slowloris).  Here a request head must
be complete within ``head_timeout_s``, counted from the connection's start, or from the first byte
of a later request on a kept-alive connection; otherwise the connection is closed (with a 408 when
part of a head had come).  Bodies are not concerned: a slow upload is bounded by its size limit.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)

_TIMEOUT_BODY = b"the request head did not arrive in time; send it whole\n"
_TIMEOUT_RESPONSE = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: text/plain; charset=utf-8\r\n"
                     b"connection: close\r\ncontent-length: " + str(len(_TIMEOUT_BODY)).encode() + b"\r\n\r\n"
                     + _TIMEOUT_BODY)


class HeadTimeoutH11Protocol(H11Protocol):
    """:class:`H11Protocol` that closes a connection whose request head is not complete in time."""

    head_timeout_s: float = 10.0

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._head_timer: asyncio.TimerHandle | None = None
        self._head_bytes = 0

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm_head_timer()  # a connection that sends nothing is closed too

    def data_received(self, data: bytes) -> None:
        if self._head_timer is None and self.conn.their_state is h11.IDLE:
            self._arm_head_timer()  # the first bytes of a later request on a kept-alive connection
        if self.conn.their_state is h11.IDLE:
            self._head_bytes += len(data)
        super().data_received(data)
        if self.conn.their_state is not h11.IDLE:  # the head is complete (or the connection is done)
            self._cancel_head_timer()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel_head_timer()
        super().connection_lost(exc)

    def _arm_head_timer(self) -> None:
        self._cancel_head_timer()
        self._head_bytes = 0
        self._head_timer = self.loop.call_later(self.head_timeout_s, self._head_timed_out)

    def _cancel_head_timer(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
            return
        if self._head_bytes:
            log.info("closing a connection whose request head was not complete within %g s",
                     self.head_timeout_s, extra={"client": self.client, "bytes": self._head_bytes})
            self.transport.write(_TIMEOUT_RESPONSE)
        self.transport.close()


def head_timeout_protocol(head_timeout_s: float) -> type[HeadTimeoutH11Protocol]:
    """The protocol class to give ``uvicorn.Config(http=...)``, with its deadline."""
    return type("HeadTimeoutH11Protocol", (HeadTimeoutH11Protocol,), {"head_timeout_s": head_timeout_s})
