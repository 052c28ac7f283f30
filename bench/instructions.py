"""CPU instructions per request in the API process, counted by valgrind: a figure that does not
move with the host's load, for changes too small for a wrk run to see.

    python bench/instructions.py [--requests 1000] [--against DIR] [--server URL]

On this host a wrk run's throughput moves by a tenth or more from one minute to the next, so a
change that saves 3 % of a request's CPU cannot be told from noise by timing it. valgrind's
callgrind counts the instructions the process runs instead: the same code on the same inputs
counts the same, however busy the machine is.

Each operation runs in-process on the real application and a fresh migrated server database
(the worker off, no HTTP server: the ASGI app is called directly, so uvicorn's parsing is not
counted), one request at a time, so no batch is shared and every request does the same work.
"POST /api/pix/cash-out + its settlement job" is a cash-out, then its settlement job run by
`jobs.worker.run_once` (a claim, the job, the statement that marks it done), with the
settlement delay at 0 so that the job is due at once: the work of the job worker, for
changes on that side. The process runs twice under callgrind, with `--warmup` requests and
then N in one run, 4 x N in the other; the difference of the two counts divided by 3 x N is
one request's instructions, without the exit they share. callgrind counts only from the end
of the warm-up (`--instr-atstart=no`, then `callgrind_control -i on` when the process says it
is warm): the start-up, the imports and the warm-up run uninstrumented, several times faster
than counted, and are not in either count. With
`--against DIR` (a checkout of another revision, e.g. `git worktree add /tmp/base HEAD~1`),
the same is counted on that code in the same run, and the ratio printed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import quote

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import DEFAULT_SERVER, cash_out_body, create_database, drop_database, table

SETTLED_CASH_OUT = "POST /api/pix/cash-out + its settlement job"
OPERATIONS = (
    "POST /api/pix/cash-out",
    SETTLED_CASH_OUT,
    "GET /accounts/balances",
    "GET /healthz",
)

Call = Callable[[], Awaitable[None]]
WARM = "warmed up"
"""What the counted process prints once warm, then waits for a line on its standard input."""


async def _asgi(
    app: Any, method: str, path: str, headers: list[tuple[bytes, bytes]], body: bytes = b""
) -> tuple[int, bytes]:
    """One request straight into the ASGI app: nothing of a client or a server is counted."""
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if delivered:
            await asyncio.Event().wait()  # the app never reads past the body
        delivered = True
        return {"type": "http.request", "body": body, "more_body": False}

    status, chunks = 0, []

    async def send(message: dict[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = message["status"]
        else:
            chunks.append(message.get("body", b""))

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": method,
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "query_string": b"",
        "root_path": "",
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 80),
        "headers": [(b"host", b"bench"), (b"content-length", str(len(body)).encode()), *headers],
    }
    await app(scope, receive, send)
    return status, b"".join(chunks)


async def bench_account(url: str) -> dict[str, str]:
    """An account with its limits out of the way. Made once, before the counted runs: its
    certificate's key generation takes a different number of instructions every time."""
    from pixgate.accounts.service import accounts
    from pixgate.core.settings import Settings
    from pixgate.runtime import build_runtime

    settings = Settings(database_url=url)
    async with build_runtime(settings, url) as rt:
        account = await accounts.create(rt, name="Bench", balance="100000000")
        await accounts.update(
            rt,
            account.account_id,
            {"night_limit": 10**12, "daily_limit": 10**12, "transaction_limit": 10**12},
        )
    return {
        "certificate_pem": account.certificate_pem,
        "client_id": account.client_id,
        "client_secret": account.client_secret,
    }


async def operation_call(app: Any, rt: Any, account: dict[str, str], operation: str) -> Call:
    """The operation as a call that asserts its answer."""
    from pixgate.jobs.worker import run_once

    certificate = quote(account["certificate_pem"], safe="").encode()
    credentials = json.dumps(
        {"clientId": account["client_id"], "clientSecret": account["client_secret"]}
    ).encode()
    json_type = (b"content-type", b"application/json")
    status, answer = await _asgi(
        app,
        "POST",
        "/api/auth/token",
        [json_type, (b"x-ssl-client-cert", certificate)],
        credentials,
    )
    assert status == 201, answer
    token = json.loads(answer)["access_token"]
    auth = [(b"authorization", f"Bearer {token}".encode()), (b"x-ssl-client-cert", certificate)]
    sent = 0

    async def cash_out() -> None:
        nonlocal sent
        sent += 1
        body = json.dumps(cash_out_body(f"{os.getpid()}-{sent}")).encode()
        status, answer = await _asgi(app, "POST", "/api/pix/cash-out", [*auth, json_type], body)
        assert status == 201, answer

    async def settled_cash_out() -> None:
        await cash_out()
        assert await run_once(rt, limit=1) == 1

    async def balances() -> None:
        status, answer = await _asgi(app, "GET", "/accounts/balances", auth)
        assert status == 200, answer

    async def healthz() -> None:
        status, answer = await _asgi(app, "GET", "/healthz", [])
        assert status == 200, answer

    calls = (cash_out, settled_cash_out, balances, healthz)
    return dict(zip(OPERATIONS, calls, strict=True))[operation]


async def _child(
    url: str, account: dict[str, str], operation: str, warmup: int, requests: int
) -> None:
    from pixgate.app import create_app
    from pixgate.core.logging import configure
    from pixgate.core.settings import Settings
    from pixgate.gc_tuning import tune_for_serving
    from pixgate.runtime import build_runtime

    # a settlement due at once: the request's own job is the one `run_once` settles
    due_now = {"settlement_delay_ms": 0} if operation == SETTLED_CASH_OUT else {}
    settings = Settings(database_url=url, **due_now)
    configure(json=True, level="WARNING")
    async with build_runtime(settings, url) as rt:
        # Without the app's lifespan: its revocation poll runs once a second, so its share
        # would follow the run's duration, which valgrind stretches, not the requests.
        app = create_app(settings, runtime=rt)
        tune_for_serving()  # as `pixgate serve` does once the app is built
        call = await operation_call(app, rt, account, operation)
        for _ in range(warmup):
            await call()
        print(WARM, flush=True)
        sys.stdin.readline()  # until the parent has turned callgrind's instrumentation on
        for _ in range(requests):
            await call()


def child(args: argparse.Namespace) -> int:
    """Runs under callgrind: the app of `--against` (or this checkout) doing the operation."""
    expected = Path(args.against or Path(__file__).resolve().parents[1]).resolve()
    sys.path.insert(0, str(expected))
    import pixgate

    origin = Path(pixgate.__file__).resolve().parents[1]
    if origin != expected:
        raise SystemExit(f"pixgate imported from {origin}, not {expected}")
    if args.prepare:  # with the code measured: another revision may have other functions
        import pixgate.app  # compiled once here, not in a counted run
        from pixgate.core.db import migrate

        migrate.upgrade(args.url)
        print(json.dumps(asyncio.run(bench_account(args.url))))
        return 0
    import uvloop

    uvloop.install()
    account = json.loads(os.environ["BENCH_ACCOUNT"])
    asyncio.run(_child(args.url, account, args.child_operation, args.warmup, args.child_requests))
    return 0


def _instructions(
    url: str,
    account: str,
    operation: str,
    warmup: int,
    requests: int,
    against: str | None,
    workdir: Path,
) -> int:
    out = workdir / f"callgrind.{os.getpid()}.{abs(hash((operation, requests, against)))}"
    command = [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        f"--callgrind-out-file={out}",
        sys.executable,
        __file__,
        "--child",
        "--url",
        url,
        "--child-operation",
        operation,
        "--warmup",
        str(warmup),
        "--child-requests",
        str(requests),
    ]
    if against:
        command += ["--against", against]
    report = out.parent / f"{out.name}.stderr"  # a file, not a pipe: read once it has ended
    with (
        report.open("w") as stderr,
        subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=stderr,
            text=True,
            env=os.environ
            | {"PYTHONMALLOC": "malloc", "PYTHONHASHSEED": "0", "BENCH_ACCOUNT": account},
        ) as child,
    ):
        assert child.stdin is not None and child.stdout is not None
        for line in child.stdout:  # after whatever the start-up logged
            if line.strip() == WARM:
                subprocess.run(
                    ["callgrind_control", "-i", "on", str(child.pid)],
                    check=True,
                    capture_output=True,
                )
                break
        child.communicate("\n", timeout=3600)
    errors = report.read_text()
    found = re.search(r"Collected : (\d+)", errors)
    if child.returncode != 0 or found is None:
        raise RuntimeError(f"{operation} under callgrind failed:\n{errors[-3000:]}")
    return int(found.group(1))


def per_request(
    args: argparse.Namespace, url: str, operation: str, against: str | None, workdir: Path
) -> float:
    """(count with 4 x N requests - count with N) / 3N: the exit they share cancels out."""
    prepare = [sys.executable, __file__, "--child", "--prepare", "--url", url]
    if against:
        prepare += ["--against", against]
    prepared = subprocess.run(prepare, check=True, capture_output=True, text=True).stdout
    account = prepared.strip().splitlines()[-1]  # after whatever the start-up logged
    n = args.requests
    with ThreadPoolExecutor(2) as pool:
        short, long = pool.map(
            lambda k: _instructions(url, account, operation, args.warmup, k, against, workdir),
            (n, 4 * n),
        )
    return (long - short) / (3 * n)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--server", default=DEFAULT_SERVER)
    parser.add_argument("--requests", type=int, default=300, help="N (see above)")
    parser.add_argument("--warmup", type=int, default=300)
    parser.add_argument("--against", help="a checkout of another revision to compare with")
    parser.add_argument("--operation", choices=OPERATIONS, action="append")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--url", help=argparse.SUPPRESS)
    parser.add_argument("--child-requests", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--prepare", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--child-operation", choices=OPERATIONS, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        return child(args)
    rows = []
    for operation in args.operation or OPERATIONS:
        counts = []
        for code in (None, args.against) if args.against else (None,):
            url = create_database(args.server)
            try:
                with tempfile.TemporaryDirectory() as workdir:
                    counts.append(per_request(args, url, operation, code, Path(workdir)))
            finally:
                drop_database(args.server, url)
        rows.append([operation, *counts, *([counts[0] / counts[1]] if args.against else [])])
    headers = ["operation", "instructions/request"]
    if args.against:
        headers = ["operation", "this checkout", f"{args.against}", "ratio"]
    print(table(headers, rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
