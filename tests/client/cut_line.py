"""A TCP line between the gateway and PostgreSQL that a test can cut and mend: cut, the
gateway's connections drop and new ones are refused, as when the database restarts."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager, suppress


class Line:
    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.port = 0
        self._listener: socket.socket | None = None
        self._open: set[socket.socket] = set()
        self._lock = threading.Lock()

    def mend(self) -> None:
        """Accept connections (on the same port once it has one)."""
        listener = socket.socket()
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", self.port))
        listener.listen()
        self.port = listener.getsockname()[1]
        self._listener = listener
        threading.Thread(target=self._accept, args=(listener,), daemon=True).start()

    def cut(self) -> None:
        """Refuse new connections and drop every open one."""
        with self._lock:
            sockets = [self._listener, *self._open] if self._listener else list(self._open)
            self._open.clear()
            self._listener = None
        for sock in sockets:
            with suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                inbound, _ = listener.accept()
            except OSError:
                return
            outbound = socket.create_connection(self.target)
            with self._lock:
                self._open |= {inbound, outbound}
            for source, sink in ((inbound, outbound), (outbound, inbound)):
                threading.Thread(target=_pump, args=(source, sink), daemon=True).start()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    with suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    with suppress(OSError):
        sink.shutdown(socket.SHUT_WR)


@contextmanager
def line_to(host: str, port: int) -> Iterator[Line]:
    line = Line((host, port))
    line.mend()
    try:
        yield line
    finally:
        line.cut()
