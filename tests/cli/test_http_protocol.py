"""The protocol `pixgate serve` runs: a response leaves in one write, and what is written still
arrives whole and in order (a large body, HEAD, a keep-alive connection, a closing one)."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import httpx

from pixgate.cli.http_protocol import HELD_BYTES, CoalescedWrites
from tests.processes import serving_process


class Recorded(asyncio.Transport):
    """A transport that records what is done to it, in order."""

    def __init__(self, *, closing: bool = False) -> None:
        super().__init__()
        self.calls: list[tuple[str, bytes]] = []
        self.closing = closing

    def is_closing(self) -> bool:
        return self.closing

    def write(self, data: Any) -> None:
        self.calls.append(("write", bytes(data)))

    def close(self) -> None:
        self.calls.append(("close", b""))

    def abort(self) -> None:
        self.calls.append(("abort", b""))

    def get_write_buffer_size(self) -> int:
        return 7


async def test_writes_of_one_step_leave_together_when_it_ends() -> None:
    inner = Recorded()
    transport = CoalescedWrites(inner)
    transport.write(b"HTTP/1.1 200 OK\r\n\r\n")
    transport.write(memoryview(b"body"))
    assert inner.calls == []
    assert transport.get_write_buffer_size() == 19 + 4 + 7
    await asyncio.sleep(0)
    assert inner.calls == [("write", b"HTTP/1.1 200 OK\r\n\r\nbody")]
    transport.write(b"next")
    await asyncio.sleep(0)
    assert inner.calls[1:] == [("write", b"next")]


async def test_close_writes_what_is_held_first_and_abort_drops_it() -> None:
    inner = Recorded()
    transport = CoalescedWrites(inner)
    transport.writelines([b"head", b"body"])
    transport.close()
    assert inner.calls == [("write", b"headbody"), ("close", b"")]
    await asyncio.sleep(0)
    assert len(inner.calls) == 2  # the step's end finds nothing left to write

    aborted = Recorded()
    transport = CoalescedWrites(aborted)
    transport.write(b"never sent")
    transport.abort()
    await asyncio.sleep(0)
    assert aborted.calls == [("abort", b"")]


async def test_a_large_body_is_written_without_waiting_for_the_step_to_end() -> None:
    inner = Recorded()
    transport = CoalescedWrites(inner)
    transport.write(b"h")
    transport.write(b"x" * HELD_BYTES)
    assert inner.calls == [("write", b"h" + b"x" * HELD_BYTES)]
    assert transport.get_write_buffer_size() == 7


async def test_what_is_held_for_a_connection_already_closing_is_dropped() -> None:
    inner = Recorded()
    transport = CoalescedWrites(inner)
    transport.write(b"HTTP/1.1 200 OK\r\n\r\n")
    inner.closing = True  # the peer went away within the step
    await asyncio.sleep(0)
    assert inner.calls == []
    assert transport.get_write_buffer_size() == 7


def _write_calls(pid: int) -> int:
    """The write system calls the process has made (`syscw` of /proc/PID/io)."""
    for line in Path(f"/proc/{pid}/io").read_text().splitlines():
        name, _, value = line.partition(":")
        if name == "syscw":
            return int(value)
    raise AssertionError(f"no syscw in /proc/{pid}/io")


def _exchange(base: str, requests: list[bytes]) -> bytes:
    """Send `requests` together on one connection (pipelined); everything received until
    the server closes it."""
    host, port = base.removeprefix("http://").split(":")
    received = b""
    with socket.create_connection((host, int(port)), timeout=10) as conn:
        conn.sendall(b"".join(requests))
        while chunk := conn.recv(1 << 20):
            received += chunk
    return received


def test_serve_answers_in_one_write_each_whole_and_in_order(database_url: str) -> None:
    with serving_process(database_url) as (base, pid), httpx.Client(base_url=base) as http:
        openapi = http.get("/openapi.json").content
        assert len(openapi) > HELD_BYTES
        http.get("/healthz")  # the connection is open: what follows is the requests' own
        before = _write_calls(pid)
        for _ in range(200):
            assert http.get("/healthz").status_code == 200
        writes = _write_calls(pid) - before
        assert writes < 1.5 * 200, f"{writes} write calls for 200 responses"

        large = http.get("/openapi.json")
        assert large.status_code == 200 and large.content == openapi
        head = http.head("/healthz")
        assert head.status_code == 200 and head.content == b""
        assert head.headers["content-length"] == http.get("/healthz").headers["content-length"]

    with serving_process(database_url) as (base, _):
        received = _exchange(
            base,
            [
                b"GET /healthz HTTP/1.1\r\nhost: t\r\n\r\n",
                b"HEAD /healthz HTTP/1.1\r\nhost: t\r\n\r\n",
                b"GET /healthz HTTP/1.1\r\nhost: t\r\nconnection: close\r\n\r\n",
            ],
        )
    answers = received.split(b"HTTP/1.1 200 OK\r\n")
    assert answers[0] == b"" and len(answers) == 4
    assert answers[1].endswith(b'\r\n\r\n{"status":"ok"}')
    assert answers[2].endswith(b"\r\n\r\n")
    assert answers[3].endswith(b'\r\n\r\n{"status":"ok"}') and b"connection: close" in answers[3]
