"""Hostile bodies: what each worst shape of the largest readable size costs a `pixgate serve`.

    python bench/hostile_input.py [--repeat 5]

Serves the gateway on a fresh server database and sends each shape of bench/hostile_shapes.py
(at `PIXGATE_MAX_BODY_BYTES`, 1 MiB) to POST /api/pix/cash-out, each shape to a gateway of
its own, without a token (the work done before authentication) and with one (validation too),
`--repeat` times each. Prints the
answer's status and size, the rise of the API process's peak resident memory, and the
median time, beside an ordinary cash-out measured in the same run. Targets: every shape under
50 MiB and 200 ms, every answer under 4 KiB.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    Deployment,
    arguments,
    cash_out_body,
    credentials,
    machine_summary,
    running,
    table,
    verdict,
)
from hostile_shapes import Cost, all_shapes, cost_of

PEAK_MIB, MS, ANSWER_BYTES = 50.0, 200.0, 4096
PATH = "/api/pix/cash-out"
JSON_TYPE = {"Content-Type": "application/json"}
BODY_BYTES = 1 << 20


def measure(
    client: httpx.Client, pid: int, bodies: list[bytes], headers: dict[str, str]
) -> tuple[Cost, float, float]:
    """The last answer, the highest peak and the median time of one request per body."""
    costs = [cost_of(client, pid, "POST", PATH, body, headers) for body in bodies]
    return costs[-1], max(c.peak_mib for c in costs), statistics.median(c.ms for c in costs)


def main() -> int:
    parser = arguments(__doc__ or "", duration=0)
    parser.add_argument("--repeat", type=int, default=5, help="requests per shape and mode")
    args = parser.parse_args()
    print(machine_summary(args.server))
    deployment = Deployment.on_server(args.server)
    ok = True
    try:
        deployment.upgrade()
        account = deployment.account()
        with running(deployment) as gateway, httpx.Client(base_url=gateway.base) as client:
            creds = credentials(gateway.base, account)
            signed_in = JSON_TYPE | {
                "Authorization": f"Bearer {creds.access_token}",
                "X-SSL-Client-Cert": creds.certificate,
            }
            ordinary = [json.dumps(cash_out_body("hostile")).encode() for _ in range(args.repeat)]
            _, base_peak, base_ms = measure(client, gateway.process.pid, ordinary, signed_in)
        rows: list[list[object]] = [
            ["ordinary cash-out", "token", 201, "-", f"{base_peak:.1f}", f"{base_ms:.1f}", 1.0]
        ]
        for name, body in all_shapes(BODY_BYTES).items():
            # a gateway of its own: memory a shape before it left to the allocator would hide
            # what this one costs
            with running(deployment) as gateway, httpx.Client(base_url=gateway.base) as client:
                for mode, headers in (("none", JSON_TYPE), ("token", signed_in)):
                    last, peak, ms = measure(
                        client, gateway.process.pid, [body] * args.repeat, headers
                    )
                    ok &= peak < PEAK_MIB and ms < MS and last.answer_bytes < ANSWER_BYTES
                    ok &= last.status < 500
                    rows.append(
                        [
                            name,
                            mode,
                            last.status,
                            last.answer_bytes,
                            f"{peak:.1f}",
                            f"{ms:.1f}",
                            f"{ms / base_ms:.1f}",
                        ]
                    )
        print(f"\n{BODY_BYTES:,}-byte bodies to POST {PATH}, {args.repeat} requests each")
        print(
            table(
                ["shape", "token", "status", "answer bytes", "peak MiB", "median ms", "x ordinary"],
                rows,
            )
        )
        print(
            f"\ntarget: every shape < {PEAK_MIB:.0f} MiB, < {MS:.0f} ms, answer < "
            f"{ANSWER_BYTES} bytes, no 5xx -> {verdict(ok)}"
        )
    finally:
        deployment.cleanup(args.server, keep=args.keep)
    return 0


if __name__ == "__main__":
    sys.exit(main())
