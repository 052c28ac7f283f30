"""The worst JSON bodies of a given size: shapes that make a parser, a screen or a validator
do more work, or keep more memory, per byte than an ordinary body.

Shared by `bench/hostile_input.py` (prints what each costs a real `pixgate serve`) and
`tests/app/test_hostile_bodies.py` (holds the bounds). Every body is built to `size` bytes or
just under, so the gateway's body limit is what decides whether it is read.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx


def _filled(head: str, item: str, tail: str, size: int, *, sep: str = ",") -> bytes:
    """`head` + as many `item`s as fit + `tail`, at most `size` bytes."""
    room = size - len(head) - len(tail)
    count = max(0, (room + len(sep)) // (len(item) + len(sep)))
    return (head + sep.join([item] * count) + tail).encode()


def _distinct_keys(size: int, value: str) -> bytes:
    """`{"k0":v,"k1":v,...}`: every member a different unknown key."""
    parts: list[str] = []
    used = 2
    i = 0
    while True:
        part = f'"k{i}":{value}'
        if used + len(part) + 1 > size:
            break
        parts.append(part)
        used += len(part) + 1
        i += 1
    return ("{" + ",".join(parts) + "}").encode()


def long_key_many_children(size: int) -> bytes:
    """Half the body is one key; the other half, the short children it holds, then a NUL."""
    key = "k" * (size // 2)
    return _filled('{"' + key + '":[', '""', '],"z":"\\u0000"}', size)


def deep_arrays(size: int) -> bytes:
    half = size // 2
    return ("[" * half + "]" * half).encode()


def deep_objects(size: int) -> bytes:
    depth = size // 7
    return ('{"a":' * depth + "1" + "}" * depth).encode()


def many_keys(size: int) -> bytes:
    return _distinct_keys(size, "0")


def many_keys_of_objects(size: int) -> bytes:
    return _distinct_keys(size, "{}")


def many_empty_objects(size: int) -> bytes:
    return _filled("[", "{}", "]", size)


def many_empty_arrays(size: int) -> bytes:
    return _filled("[", "[]", "]", size)


def many_decimals(size: int) -> bytes:
    return _filled("[", "1.5", "]", size)


def many_exponents(size: int) -> bytes:
    return _filled("[", "1e9", "]", size)


def many_short_strings(size: int) -> bytes:
    return _filled("[", '"ab"', "]", size)


def many_nuls(size: int) -> bytes:
    return _filled('["', "\\u0000", '"]', size, sep="")


def nul_keys(size: int) -> bytes:
    return _filled("{", '"\\u0000":0', "}", size)


def long_string(size: int) -> bytes:
    return _filled('{"value":"', "9", '"}', size, sep="")


def long_escaped_string(size: int) -> bytes:
    return _filled('{"externalId":"', "\\u00e9", '"}', size, sep="")


SHAPES: dict[str, Callable[[int], bytes]] = {
    "long key x many children": long_key_many_children,
    "deep arrays": deep_arrays,
    "deep objects": deep_objects,
    "many keys": many_keys,
    "many keys of objects": many_keys_of_objects,
    "many empty objects": many_empty_objects,
    "many empty arrays": many_empty_arrays,
    "many decimals": many_decimals,
    "many exponents": many_exponents,
    "many short strings": many_short_strings,
    "many NULs": many_nuls,
    "NUL keys": nul_keys,
    "long string": long_string,
    "long escaped string": long_escaped_string,
}


def all_shapes(size: int) -> dict[str, bytes]:
    """Every shape at `size` bytes; each is JSON except the parser-breaking deep ones."""
    return {name: build(size) for name, build in SHAPES.items()}


@dataclass(frozen=True)
class Cost:
    status: int
    answer_bytes: int
    peak_mib: float
    """How far the process's peak resident memory rose above where it stood before."""
    ms: float
    answer: bytes


def _kib(pid: int, field: str) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise LookupError(field)


def cost_of(
    client: httpx.Client, pid: int, method: str, path: str, body: bytes, headers: dict[str, str]
) -> Cost:
    """One request with `body` to the server process `pid`, its peak memory reset first
    (Linux: writing 5 to clear_refs sets VmHWM back to the current resident size)."""
    Path(f"/proc/{pid}/clear_refs").write_text("5")
    before = _kib(pid, "VmRSS")
    started = time.perf_counter()
    response = client.request(method, path, content=body, headers=headers)
    elapsed = time.perf_counter() - started
    peak = _kib(pid, "VmHWM")
    return Cost(
        status=response.status_code,
        answer_bytes=len(response.content),
        peak_mib=max(0, peak - before) / 1024,
        ms=elapsed * 1000,
        answer=response.content,
    )


if __name__ == "__main__":
    for name, body in all_shapes(1 << 20).items():
        try:
            json.loads(body)
            kind = "json"
        except (ValueError, RecursionError):
            kind = "not parsed"
        print(f"{name:28} {len(body):>9} bytes  {kind}")
