"""A real HTTP receiver on 127.0.0.1 (asyncio streams): records every request and answers
from a per-path script of statuses, or stalls (never answers) to simulate a hung server."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass, field
from typing import Any

STALL = "stall"


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    received: list[Received] = field(default_factory=list)
    plans: dict[str, list[int | str]] = field(default_factory=dict)
    answer_headers: dict[str, dict[str, str]] = field(default_factory=dict)
    port: int = 0
    _server: asyncio.Server | None = None
    _handlers: set[asyncio.Task[Any]] = field(default_factory=set)

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]

    async def stop(self) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._handlers):
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self._server.wait_closed(), 5)

    def url(self, path: str = "/hook") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def plan(self, path: str, *answers: int | str) -> None:
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
        try:
            while line := await reader.readline():
                _method, path, _version = line.decode().split(" ", 2)
                headers: dict[str, str] = {}
                while (raw := await reader.readline()) not in (b"\r\n", b""):
                    name, _, value = raw.decode().partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                self.received.append(Received(path, headers, body))
                plan = self.plans.get(path)
                action = plan.pop(0) if plan else 200
                if action == STALL:
                    await asyncio.sleep(3600)
                answer = self.answer_headers.get(path, {})
                extra = "".join(f"{k}: {v}\r\n" for k, v in answer.items())
                payload = b'{"received": true}'
                writer.write(
                    f"HTTP/1.1 {action} Answer\r\nContent-Type: application/json\r\n"
                    f"Content-Length: {len(payload)}\r\n{extra}\r\n".encode() + payload
                )
                await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self._handlers.discard(task)
            writer.close()
