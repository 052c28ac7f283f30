"""The HTTP protocol `pixgate serve` runs: uvicorn's httptools protocol, its writes held until
the end of the event-loop step so that a response leaves in one write.

uvicorn writes a response in two: its head on `http.response.start`, its body on
`http.response.body`, and on uvloop each write is a system call. Over loopback, the path of
nginx or a load generator on the same host, a TCP send also runs the receiver's side of the
stack in the sender's process, so the second write cost `GET /healthz` a fifth of its CPU
(docs/performance.md, "A response in one write"). `CoalescedWrites` joins what is written
within one step of the loop and writes it when the step ends. A response's head and body fall
in the same step whenever nothing between them waits: Starlette sends them in a row, and
uvicorn waits only while the socket's buffer is full, when one write more matters little.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

HELD_BYTES = 64 * 1024
"""Written at once when this much is held: a body streamed in chunks that never wait (an
async generator that does not suspend) is not gathered whole in memory."""


class CoalescedWrites(asyncio.Transport):
    """A transport whose writes within one event-loop step reach the socket as one."""

    def __init__(self, transport: asyncio.Transport) -> None:
        super().__init__()
        self._transport = transport
        self._loop = asyncio.get_running_loop()
        self._held: list[bytes] = []
        self._held_bytes = 0

    def write(self, data: bytes | bytearray | memoryview) -> None:
        if not self._held:
            self._loop.call_soon(self.flush)
        self._held.append(bytes(data))
        self._held_bytes += len(data)
        if self._held_bytes >= HELD_BYTES:
            self.flush()

    def writelines(self, list_of_data: Any) -> None:
        self.write(b"".join(list_of_data))

    def flush(self) -> None:
        """Write what is held, in one write; dropped if the connection is closing already (its
        peer gone), where uvloop would raise from the loop's callback instead."""
        if not self._held:
            return
        data = self._held[0] if len(self._held) == 1 else b"".join(self._held)
        self._held.clear()
        self._held_bytes = 0
        if not self._transport.is_closing():
            self._transport.write(data)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def write_eof(self) -> None:
        self.flush()
        self._transport.write_eof()

    def abort(self) -> None:
        self._held.clear()
        self._held_bytes = 0
        self._transport.abort()

    def get_write_buffer_size(self) -> int:
        return self._held_bytes + self._transport.get_write_buffer_size()

    def can_write_eof(self) -> bool:
        return self._transport.can_write_eof()

    def is_closing(self) -> bool:
        return self._transport.is_closing()

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return self._transport.get_extra_info(name, default)

    def set_protocol(self, protocol: asyncio.BaseProtocol) -> None:
        self._transport.set_protocol(protocol)

    def get_protocol(self) -> asyncio.BaseProtocol:
        return self._transport.get_protocol()

    def is_reading(self) -> bool:
        return self._transport.is_reading()

    def pause_reading(self) -> None:
        self._transport.pause_reading()

    def resume_reading(self) -> None:
        self._transport.resume_reading()

    def set_write_buffer_limits(self, high: int | None = None, low: int | None = None) -> None:
        self._transport.set_write_buffer_limits(high, low)

    def get_write_buffer_limits(self) -> tuple[int, int]:
        return self._transport.get_write_buffer_limits()


class HttpProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol on a `CoalescedWrites` transport."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(CoalescedWrites(transport))
