"""A real HTTP receiver on 127.0.0.1 (asyncio streams): records every request and answers
from a per-path script of statuses, or stalls (never answers) to simulate a hung server,
hangs up or resets the connection instead of answering, or plays a scripted answer (a byte
stream with pauses) to simulate a hostile one.

`TlsListener` is a TLS endpoint that only records connections and the SNI they present."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import ipaddress
import socket
import ssl
import struct
import tempfile
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

STALL = "stall"
HANG_UP = "hang-up"
"""Read the request, then close the connection without a byte of answer."""
RESET = "reset"
"""Send a 200's status line, headers and half its body, then reset the connection (RST)."""

Scripted = Callable[[], AsyncIterator[bytes]]
"""An answer written piece by piece (the receiver drains after each piece)."""


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    peer_certificate: dict[str, Any] | None = None
    """The client certificate the connection presented, when served over TLS."""


@dataclass
class Receiver:
    received: list[Received] = field(default_factory=list)
    plans: dict[str, list[int | str | Scripted]] = field(default_factory=dict)
    answer_headers: dict[str, dict[str, str]] = field(default_factory=dict)
    connections: int = 0
    """TCP connections accepted, requests or not."""
    sent: dict[str, int] = field(default_factory=dict)
    """Bytes of scripted answers that got out, per path (the client's socket took them)."""
    port: int = 0
    _server: asyncio.Server | None = None
    _handlers: set[asyncio.Task[Any]] = field(default_factory=set)

    async def start(self, port: int = 0, *, tls: ssl.SSLContext | None = None) -> None:
        """Listen on `port` (0: any free one), over TLS with `tls` (a server context)."""
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", port, ssl=tls)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        """Stop listening and close every connection before returning: a connection left to
        close later, or over TLS closed politely (waiting for the peer's close_notify), may
        still be open when the event loop closes after the last test, and its socket is
        then reported unclosed."""
        assert self._server is not None
        self._server.close()
        handlers = list(self._handlers)
        for task in handlers:
            task.cancel()
        await asyncio.gather(*handlers, return_exceptions=True)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 5)

    def url(self, path: str = "/hook", *, host: str = "127.0.0.1", scheme: str = "http") -> str:
        return f"{scheme}://{host}:{self.port}{path}"

    @property
    def open_connections(self) -> int:
        """Connections still being served (a hung-up client's is gone within a moment)."""
        return len(self._handlers)

    def plan(self, path: str, *answers: int | str | Scripted) -> None:
        self.plans[path] = list(answers)

    def at(self, path: str) -> list[Received]:
        return [r for r in self.received if r.path == path]

    async def wait_for(self, count: int, *, deadline: float = 30.0) -> None:
        """Until `count` requests arrived (a generous bound, not a timing assertion)."""
        async with asyncio.timeout(deadline):
            while len(self.received) < count:  # noqa: ASYNC110 - polling state we do not own
                await asyncio.sleep(0.02)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._handlers.add(task)
        self.connections += 1
        try:
            while line := await reader.readline():
                _method, path, _version = line.decode().split(" ", 2)
                headers: dict[str, str] = {}
                while (raw := await reader.readline()) not in (b"\r\n", b""):
                    name, _, value = raw.decode().partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                peer = writer.get_extra_info("peercert")
                self.received.append(Received(path, headers, body, peer or None))
                plan = self.plans.get(path)
                action = plan.pop(0) if plan else 200
                if action == STALL:
                    await asyncio.sleep(3600)
                if action == HANG_UP:
                    return
                if action == RESET:
                    writer.write(b'HTTP/1.1 200 OK\r\nContent-Length: 18\r\n\r\n{"recei')
                    await writer.drain()
                    await asyncio.sleep(0.1)  # read by the client before the reset drops it
                    sock = writer.get_extra_info("socket")
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    writer.transport.abort()
                    return
                if callable(action):
                    self.sent.setdefault(path, 0)
                    async for piece in action():
                        writer.write(piece)
                        await writer.drain()
                        self.sent[path] += len(piece)
                    return
                answer = self.answer_headers.get(path, {})
                extra = "".join(f"{k}: {v}\r\n" for k, v in answer.items())
                payload = b'{"received": true}'
                writer.write(
                    f"HTTP/1.1 {action} Answer\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(payload)}\r\n{extra}\r\n".encode()
                    + payload
                )
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except asyncio.CancelledError:  # `stop`
            writer.transport.abort()
            with contextlib.suppress(ConnectionError):
                await writer.wait_closed()
        finally:
            self._handlers.discard(task)
            writer.close()


# --- hostile answers (Scripted) -------------------------------------------------------------

_BLOCK = b"x" * 65536


def huge_body(size: int) -> Scripted:
    """200 with a Content-Length body of `size` bytes, sent at full speed."""

    async def answer() -> AsyncIterator[bytes]:
        yield f"HTTP/1.1 200 OK\r\nContent-Length: {size}\r\n\r\n".encode()
        left = size
        while left > 0:
            piece = _BLOCK[:left]
            left -= len(piece)
            yield piece

    return answer


def body_of(payload: bytes) -> Scripted:
    """200 with exactly `payload` as its body."""

    async def answer() -> AsyncIterator[bytes]:
        yield f"HTTP/1.1 200 OK\r\nContent-Length: {len(payload)}\r\n\r\n".encode() + payload

    return answer


def endless_chunks() -> Scripted:
    """200 with a chunked body that never ends, 64 KiB chunks at full speed."""

    async def answer() -> AsyncIterator[bytes]:
        yield b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        chunk = b"10000\r\n" + _BLOCK + b"\r\n"
        while True:
            yield chunk

    return answer


def endless_headers() -> Scripted:
    """A status line, then header lines at full speed that never end."""

    async def answer() -> AsyncIterator[bytes]:
        yield b"HTTP/1.1 200 OK\r\n"
        line = b"X-Flood: " + b"a" * 1000 + b"\r\n"
        while True:
            yield line * 64

    return answer


def trickled_headers(interval: float) -> Scripted:
    """A status line, then one byte of a header every `interval` s; the headers never end."""

    async def answer() -> AsyncIterator[bytes]:
        yield b"HTTP/1.1 200 OK\r\nX-Slow: "
        while True:
            await asyncio.sleep(interval)
            yield b"a"

    return answer


def trickled_body(interval: float) -> Scripted:
    """200 and its headers at once, then a one-byte chunk every `interval` s, forever."""

    async def answer() -> AsyncIterator[bytes]:
        yield b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        while True:
            await asyncio.sleep(interval)
            yield b"1\r\nx\r\n"

    return answer


def endless_continues(interval: float) -> Scripted:
    """`100 Continue` interim answers every `interval` s, never a final one."""

    async def answer() -> AsyncIterator[bytes]:
        while True:
            yield b"HTTP/1.1 100 Continue\r\n\r\n"
            await asyncio.sleep(interval)

    return answer


# --- TLS --------------------------------------------------------------------------------------


def _self_signed(hostname: str, directory: Path) -> tuple[Path, Path]:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hostname)])
    now = datetime.datetime.now(datetime.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName(
                [
                    x509.DNSName(hostname),
                    x509.IPAddress(ipaddress.ip_address("127.0.0.1")),
                ]
            ),
            critical=False,
        )
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@dataclass
class TlsListener:
    """A TLS server on 127.0.0.1 with a self-signed certificate for `hostname` (no client
    trusts it): records each TCP connection and the server name each ClientHello carries."""

    hostname: str
    connections: int = 0
    server_names: list[str | None] = field(default_factory=list)
    port: int = 0
    _server: asyncio.Server | None = None
    _context: ssl.SSLContext | None = None

    async def start(self) -> None:
        with tempfile.TemporaryDirectory() as directory:
            cert, key = _self_signed(self.hostname, Path(directory))
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(cert, key)

        def record(_sock: Any, server_name: str | None, _ctx: Any) -> None:
            self.server_names.append(server_name)

        context.sni_callback = record
        self._context = context
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 5)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        assert self._context is not None
        try:
            async with asyncio.timeout(5):
                await writer.start_tls(self._context)
                await reader.read(1)
        except (OSError, ssl.SSLError, TimeoutError):
            pass  # the client refuses our certificate: that is the expected end
        finally:
            writer.close()
