"""Webhook latency: from the commit of a final state to the webhook's arrival at a receiver.

    python bench/webhook_latency.py [--rate 200] [--duration 20]

Serves the gateway (PIXGATE_ALLOW_INSECURE_WEBHOOKS=true, PIXGATE_SETTLEMENT_DELAY_MS=0)
on a fresh server database, registers a local receiver with `pixgate webhooks add`, and
creates cash-outs at a fixed rate (open loop: the schedule does not wait for answers).
The sandbox settles each one in a `payouts.settle` job; the settlement's transaction
writes the final state, the event and the delivery row; the `webhook.deliver` job POSTs it.

Per webhook: arrival (receiver's clock) minus the delivery row's created_at, the settling
transaction's now(), i.e. the start of the statement that settles a batch: the figure is an
upper bound of commit-to-arrival by that statement's own duration. (The transaction's
processed_at is earlier still: the settle job takes it before it waits for the account's
row.) Also shown: creation-to-settlement (how long the settle job waited) and, as the
baseline of the same run, a direct POST from an httpx client to the same receiver: the
floor of any webhook delivery on this machine.

With `--job-workers N` the jobs run in N `pixgate worker` processes beside the API process
(the production layout) instead of inside it (the embedded default's).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import (
    Credentials,
    Deployment,
    arguments,
    cash_out_body,
    credentials,
    free_port,
    machine_summary,
    query,
    running,
    start_receiver,
    table,
    verdict,
)

P50_TARGET_MS = 30.0

JOIN = """
    SELECT d.message_id,
           extract(epoch FROM d.created_at)::float8 AS committed,
           extract(epoch FROM t.created_at)::float8 AS created
    FROM webhook_deliveries d
    JOIN events e ON e.id = d.event_id
    LEFT JOIN transactions t ON t.id = e.transaction_id
    WHERE e.type = 'cash_out'
"""


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def open_loop(
    base: str, creds: list[Credentials], rate: float, duration: float
) -> dict[int, int]:
    """POST at fixed times t0 + i/rate, never waiting for answers before the next; the
    accounts' tokens (each with its certificate) are used in turn."""
    statuses: dict[int, int] = {}
    limits = httpx.Limits(max_connections=256, max_keepalive_connections=256)
    async with httpx.AsyncClient(base_url=base, limits=limits, timeout=30) as client:

        async def one(cred: Credentials) -> None:
            try:
                response = await client.post(
                    "/api/pix/cash-out",
                    json=cash_out_body("wh"),
                    headers=cred.headers(),
                )
                statuses[response.status_code] = statuses.get(response.status_code, 0) + 1
            except httpx.HTTPError:
                statuses[0] = statuses.get(0, 0) + 1

        tasks = []
        start = time.monotonic()
        for i in range(int(rate * duration)):
            delay = start + i / rate - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            tasks.append(asyncio.create_task(one(creds[i % len(creds)])))
        await asyncio.gather(*tasks)
    return statuses


async def direct_posts(url: str, count: int, rate: float) -> list[float]:
    """The baseline: the same receiver, POSTed straight from a pooled httpx client."""
    latencies: list[float] = []
    async with httpx.AsyncClient(timeout=10) as client:
        for _ in range(count):
            started = time.perf_counter()
            await client.post(url, content=b"{}", headers={"webhook-id": "baseline"})
            latencies.append((time.perf_counter() - started) * 1000)
            await asyncio.sleep(1 / rate)
    return latencies


def wait_delivered(url: str, expected: int, timeout: float = 60.0) -> int:
    deadline = time.monotonic() + timeout
    delivered = 0
    while time.monotonic() < deadline:
        delivered = asyncio.run(
            query(url, "SELECT count(*) FROM webhook_deliveries WHERE status = 'delivered'")
        )[0][0]
        if delivered >= expected:
            break
        time.sleep(0.5)
    return delivered


def main() -> int:
    parser = arguments(__doc__ or "", duration=20)
    parser.add_argument("--rate", type=float, default=200.0, help="cash-outs per second")
    parser.add_argument(
        "--accounts",
        type=int,
        default=10,
        help="accounts the cash-outs are spread over (1: every settlement queues on one row)",
    )
    parser.add_argument(
        "--job-workers",
        type=int,
        default=0,
        help="`pixgate worker` processes for the jobs (0: the API process runs them)",
    )
    args = parser.parse_args()
    print(machine_summary(args.server))
    deployment = Deployment.on_server(args.server, allow_insecure_webhooks="true")
    receiver_port = free_port()
    arrivals_path = deployment.workdir / "arrivals.jsonl"
    receiver = start_receiver(receiver_port, arrivals_path)
    try:
        hook = f"http://127.0.0.1:{receiver_port}/hook"
        deployment.upgrade()
        accounts = deployment.accounts(args.accounts)
        for account in accounts:
            deployment.cli(
                "webhooks",
                "add",
                "--account",
                str(account["accountId"]),
                "--event",
                "cash_out",
                "--url",
                hook,
            )
        with running(deployment, job_workers=args.job_workers) as gateway:
            creds = [credentials(gateway.base, account) for account in accounts]
            baseline = asyncio.run(direct_posts(hook, 200, args.rate))
            asyncio.run(
                open_loop(gateway.base, creds, args.rate, min(2.0, args.duration))
            )  # warm-up
            measured_from = time.time()
            statuses = asyncio.run(open_loop(gateway.base, creds, args.rate, args.duration))
            sent = sum(statuses.values())
            expected = asyncio.run(
                query(deployment.database_url or "", "SELECT count(*) FROM webhook_deliveries")
            )[0][0]
            delivered = wait_delivered(deployment.database_url or "", expected)
            rows = asyncio.run(query(deployment.database_url or "", JOIN))
    finally:
        receiver.terminate()
        receiver.wait(timeout=10)
    try:
        arrivals: dict[str, list[float]] = {}
        for line in arrivals_path.read_text().splitlines():
            record = json.loads(line)
            if record["id"] != "baseline":
                arrivals.setdefault(record["id"], []).append(record["at"])
        commit_to_arrival, create_to_commit = [], []
        for row in rows:
            times = arrivals.get(row["message_id"])
            if times and row["created"] >= measured_from:  # the warm-up's are not measured
                commit_to_arrival.append((min(times) - row["committed"]) * 1000)
                create_to_commit.append((row["committed"] - row["created"]) * 1000)
        duplicates = sum(len(t) - 1 for t in arrivals.values())
    finally:
        deployment.cleanup(args.server, keep=args.keep)

    print(
        f"\ncash-outs at {args.rate:g}/s over {args.accounts} account(s) for {args.duration:g} s: "
        f"{sent} sent, "
        f"statuses {statuses}; {delivered}/{expected} deliveries delivered, "
        f"{duplicates} duplicate arrivals"
    )
    print(
        table(
            ["interval", "count", "p50 ms", "p99 ms", "mean ms"],
            [
                [
                    "settlement commit -> webhook arrival",
                    len(commit_to_arrival),
                    percentile(commit_to_arrival, 0.5),
                    percentile(commit_to_arrival, 0.99),
                    statistics.fmean(commit_to_arrival) if commit_to_arrival else float("nan"),
                ],
                [
                    "cash-out created -> settlement commit",
                    len(create_to_commit),
                    percentile(create_to_commit, 0.5),
                    percentile(create_to_commit, 0.99),
                    statistics.fmean(create_to_commit) if create_to_commit else float("nan"),
                ],
                [
                    "baseline: direct POST to the receiver",
                    len(baseline),
                    percentile(baseline, 0.5),
                    percentile(baseline, 0.99),
                    statistics.fmean(baseline),
                ],
            ],
        )
    )
    p50 = percentile(commit_to_arrival, 0.5)
    ok = p50 <= P50_TARGET_MS and len(commit_to_arrival) > 0
    print(
        f"\ntarget: commit -> arrival p50 <= {P50_TARGET_MS:g} ms: {p50:.1f} ms "
        f"({p50 / max(percentile(baseline, 0.5), 1e-9):.0f} x the direct POST) -> {verdict(ok)}"
    )
    return 0 if len(commit_to_arrival) > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
