"""Read throughput: GET /accounts/balances and GET /api/transactions vs the same app's /healthz.

    python bench/read.py [--duration 20] [--connections 64] [--workers 1]

Creates a fresh database on the server, migrates it, creates an account (and, when the
cash-out endpoint exists, 100 cash-outs so that page 1 of the transaction list is full),
serves the gateway as a subprocess and measures each route with wrk after a warm-up.
The baseline is GET /healthz, a trivial JSON route of the same app behind the same
middleware, in the same process configuration, measured first and again last (the
baseline is their mean, so that the machine's drift over the run cancels): the ratio is
the cost of the route's own work (token verification, one query, the response model) over
the framework's. Target: balances >= 0.8 x healthz, 0 non-2xx.
"""

from __future__ import annotations

import argparse
import json
import sys
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    Credentials,
    Deployment,
    LoadResult,
    arguments,
    credentials,
    machine_summary,
    running,
    table,
    verdict,
    warmup_seconds,
    wrk,
    wrk_auth_env,
)

BALANCE_TARGET = 0.8


def has_route(base: str, path: str, creds: Credentials) -> bool:
    """A GET answers 404 only when no route matches (a POST-only route answers 405)."""
    request = urllib.request.Request(f"{base}{path}", headers=creds.headers())
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read()
    except urllib.error.HTTPError as exc:
        return exc.code != 404
    return True


def seed_cash_outs(base: str, creds: Credentials, count: int) -> None:
    """Page 1 of the list should hold 20 real rows, made the way a client makes them."""
    for _ in range(count):
        body = json.dumps(
            {
                "value": 0.01,
                "externalId": f"seed-{uuid.uuid4().hex}",
                "description": "seed",
                "details": {
                    "key": "123e4567-e89b-42d3-a456-426614174000",
                    "keyType": "RANDOM",
                    "name": "Fulano de Tal",
                    "document": "52998224725",
                },
            }
        ).encode()
        request = urllib.request.Request(
            f"{base}/api/pix/cash-out",
            data=body,
            method="POST",
            headers=creds.headers() | {"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            response.read()


def measure(base: str, path: str, auth: Credentials | None, args: argparse.Namespace) -> LoadResult:
    """One route after its warm-up."""
    env = wrk_auth_env([auth] if auth else [])
    for duration in (warmup_seconds(args), args.duration):
        result = wrk(
            base + path,
            "wrk.lua",
            duration=duration,
            connections=args.connections,
            threads=args.threads,
            env=env,
        )
    return result


def main() -> int:
    parser = arguments(__doc__ or "", duration=20, threads=True)
    parser.add_argument("--workers", type=int, default=1, help="API processes")
    args = parser.parse_args()
    print(machine_summary(args.server))
    deployment = Deployment.on_server(args.server)
    try:
        deployment.upgrade()
        account = deployment.account()
        with running(deployment, workers=args.workers) as gateway:
            creds = credentials(gateway.base, account)
            routes: list[tuple[str, str, Credentials | None]] = [
                ("GET /healthz (baseline)", "/healthz", None),
                ("GET /accounts/balances", "/accounts/balances", creds),
            ]
            if has_route(gateway.base, "/api/transactions", creds):
                if has_route(gateway.base, "/api/pix/cash-out", creds):
                    seed_cash_outs(gateway.base, creds, 100)
                routes.append(
                    (
                        "GET /api/transactions?page=1&size=20",
                        "/api/transactions?page=1&size=20",
                        creds,
                    )
                )
            else:
                print("note: GET /api/transactions is not served yet; skipped")
            routes.append(("GET /healthz (baseline, again)", "/healthz", None))
            results = [measure(gateway.base, path, auth, args) for _, path, auth in routes]
        # the baseline before and after the routes: the machine's drift over the run cancels
        baseline = (results[0].rps + results[-1].rps) / 2
        rows: list[list[Any]] = [
            [label, r.rps, r.p50_ms, r.p99_ms, r.non_2xx, r.rps / baseline]
            for (label, _, _), r in zip(routes, results, strict=True)
        ]
        print(
            f"\nreads, {args.workers} API process(es), {args.connections} connections, "
            f"{args.duration:g} s each (wrk -t{args.threads})"
        )
        print(table(["route", "req/s", "p50 ms", "p99 ms", "non-2xx", "x healthz"], rows))
        balance_ratio = float(rows[1][5])
        ok = balance_ratio >= BALANCE_TARGET and all(r[4] == 0 for r in rows)
        print(
            f"\ntarget: balances >= {BALANCE_TARGET} x healthz, 0 non-2xx: "
            f"{balance_ratio:.2f} -> {verdict(ok)}"
        )
    finally:
        deployment.cleanup(args.server, keep=args.keep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
