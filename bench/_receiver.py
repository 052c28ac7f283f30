"""A webhook receiver that only records when each message arrived.

    python bench/_receiver.py PORT OUTFILE [--bodies] [--status 500 | --hang]

A bare asyncio HTTP/1.1 server (keep-alive, Content-Length bodies): on each complete
request it takes `time.time()` and writes `{"id": <webhook-id>, "at": <epoch seconds>}`
(with `--bodies`, also `"path"` and the JSON `"body"`) to OUTFILE, then answers 204 (with
`--status N`, N instead; with `--hang`, nothing: it keeps the connection open until the
client closes it). It runs in its own process so that the load generator's event loop
cannot delay the timestamps. SIGTERM flushes and exits.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sys
import time
from typing import TextIO


def answer(status: int) -> bytes:
    return f"HTTP/1.1 {status} Answer\r\nContent-Length: 0\r\n\r\n".encode()


def handler(out: TextIO, *, bodies: bool = False, status: int = 204, hang: bool = False) -> object:
    response = answer(status)

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
                if hang:
                    await reader.read()  # until the client gives up and closes
                    return
                writer.write(response)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        except asyncio.CancelledError:
            # the receiver stopping with the connection open ends the handler: re-raised, it
            # is logged as an error once per connection (Python 3.11's stream server)
            return
        finally:
            writer.close()

    return handle


async def serve(
    port: int, path: str, *, bodies: bool = False, status: int = 204, hang: bool = False
) -> None:
    with open(path, "w", buffering=1 << 16) as out:  # noqa: ASYNC230 - local file, tiny writes
        handle = handler(out, bodies=bodies, status=status, hang=hang)
        server = await asyncio.start_server(handle, "127.0.0.1", port)  # type: ignore[arg-type]
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        loop.add_signal_handler(signal.SIGINT, stop.set)
        async with server:
            print("ready", flush=True)
            await stop.wait()


if __name__ == "__main__":
    options = sys.argv[3:]
    asyncio.run(
        serve(
            int(sys.argv[1]),
            sys.argv[2],
            bodies="--bodies" in options,
            status=int(options[options.index("--status") + 1]) if "--status" in options else 204,
            hang="--hang" in options,
        )
    )
