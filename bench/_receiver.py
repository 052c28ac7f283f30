"""A webhook receiver that only records when each message arrived.

    python bench/_receiver.py PORT OUTFILE [--bodies]

A bare asyncio HTTP/1.1 server (keep-alive, Content-Length bodies): on each complete
request it takes `time.time()` and writes `{"id": <webhook-id>, "at": <epoch seconds>}`
(with `--bodies`, also `"path"` and the JSON `"body"`) to OUTFILE, then answers 204. It runs in its own process so that the load generator's
event loop cannot delay the timestamps. SIGTERM flushes and exits.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from typing import TextIO

RESPONSE = b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n"


def handler(out: TextIO, *, bodies: bool = False) -> object:
    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                headers = {}
                for line in head.decode("latin-1").split("\r\n")[1:]:
                    name, _, value = line.partition(":")
                    headers[name.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                record = {"id": headers.get("webhook-id"), "at": time.time()}
                if bodies:
                    record |= {"path": head.split(b" ", 2)[1].decode(), "body": json.loads(body)}
                out.write(json.dumps(record) + "\n")
                writer.write(RESPONSE)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()

    return handle


async def serve(port: int, path: str, *, bodies: bool = False) -> None:
    with open(path, "w", buffering=1 << 16) as out:  # noqa: ASYNC230 - local file, tiny writes
        server = await asyncio.start_server(handler(out, bodies=bodies), "127.0.0.1", port)  # type: ignore[arg-type]
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        loop.add_signal_handler(signal.SIGINT, stop.set)
        async with server:
            print("ready", flush=True)
            await stop.wait()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1]), sys.argv[2], bodies="--bodies" in sys.argv[3:]))
