"""Memory: RSS of each API process after 50k and after 100k requests.

    python bench/memory.py [--requests 50000] [--route balances|cash-out] [--workers 1]

Serves the gateway on a fresh server database, sends `--requests` requests (wrk stops
each thread at its share), reads the RSS of every API process with psutil, sends as many
again and reads it again. Targets: <= 200 MiB per process, < 5 % growth between the two
readings (a leak per request shows as growth; the first phase absorbs warm-up: imports,
prepared statements, pools). `--duration` caps each phase (2 s for the smoke test).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    Deployment,
    arguments,
    credentials,
    machine_summary,
    running,
    table,
    verdict,
    wrk,
    wrk_auth_env,
)

RSS_LIMIT_MIB = 200.0
GROWTH_LIMIT = 0.05
ROUTES = {"balances": ("/accounts/balances", "get"), "cash-out": ("/api/pix/cash-out", "cash-out")}


def main() -> int:
    parser = arguments(__doc__ or "", duration=600, threads=True)
    parser.add_argument("--requests", type=int, default=50_000, help="requests per phase")
    parser.add_argument("--route", choices=sorted(ROUTES), default="balances")
    parser.add_argument("--workers", type=int, default=1, help="API processes")
    args = parser.parse_args()
    print(machine_summary(args.server))
    path, mode = ROUTES[args.route]
    deployment = Deployment.on_server(args.server)
    try:
        deployment.upgrade()
        account = deployment.account()
        with running(deployment, workers=args.workers) as gateway:
            env = wrk_auth_env([credentials(gateway.base, account)]) | {
                "BENCH_MODE": mode,
                "BENCH_MAX_REQUESTS": str(max(1, args.requests // args.threads)),
                "BENCH_DONE_FILE": str(deployment.workdir / "phase-done"),
            }
            readings: list[tuple[int, list[float]]] = [(0, gateway.rss_mib())]
            sent = 0
            for phase in (1, 2):
                env["BENCH_RUN"] = f"mem{phase}"
                result = wrk(
                    gateway.base + path,
                    "wrk.lua",
                    duration=args.duration,
                    connections=args.connections,
                    threads=args.threads,
                    env=env,
                )
                sent += result.requests
                readings.append((sent, gateway.rss_mib()))
                if result.non_2xx or result.socket_errors:
                    print(
                        f"phase {phase}: {result.non_2xx} non-2xx, "
                        f"{result.socket_errors} socket errors"
                    )
        rows = [
            [f"after {count:,} requests", *(f"{mib:.1f}" for mib in rss)] for count, rss in readings
        ]
        processes = len(readings[0][1])
        print(f"\nRSS (MiB) per API process, {args.route}, {args.connections} connections")
        print(table(["", *(f"process {i + 1}" for i in range(processes))], rows))
        first, second = readings[1][1], readings[2][1]
        growth = max((b - a) / a for a, b in zip(first, second, strict=True))
        peak = max(second)
        ok = peak <= RSS_LIMIT_MIB and growth < GROWTH_LIMIT
        print(
            f"\ntarget: <= {RSS_LIMIT_MIB:.0f} MiB per process ({peak:.1f}), growth "
            f"< {GROWTH_LIMIT:.0%} between the readings ({growth:+.1%}) -> {verdict(ok)}"
        )
    finally:
        deployment.cleanup(args.server, keep=args.keep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
