"""Soak: thousands of mixed operations, with processes killed under them; nothing acknowledged
is lost, nothing is paid twice, every final state is notified exactly once.

    python bench/soak.py [--duration 60] [--clients 16] [--faults api,workers] [--kill-every 5]
                         [--signal KILL,TERM] [--ha --faults primary]

Runs `pixgate serve --workers 2 --no-worker` and two `pixgate worker` processes on a fresh
database of the PostgreSQL server, with a webhook receiver (bench/_receiver.py) for every
account and event. Clients fire a random mix: cash-outs with every sandbox scenario, charges
paid by the sandbox payer, charges of one account paid by another by QR code, DICT transfers,
refunds of received payments, and repeats of the same `externalId` / idempotency key. A client
whose request goes unanswered (connection lost, 502-504) sends the same request again until it
is answered, as an integrator's client would; an answer that the `externalId` was used already
(400 PIX_DUPLICATE_EXTERNAL_ID) acknowledges the earlier request's transaction.

With `--ha` the database is a primary and a synchronous standby run by Debian's Patroni over
etcd (tests/patroni.py), started here, and the gateway reaches them through their multi-host
URL (`target_session_attrs=read-write`). `--faults primary` then SIGKILLs the primary's
postmaster (Patroni starts it again in place), and the next time every process of the
primary's node (Patroni promotes the standby; the dead node is started again once it has,
and rejoins as the standby), in turns, each once the standby streams again.

`--faults api` SIGKILLs the whole API (supervisor and both processes) every `--kill-every`
seconds, at a random moment, and starts it again; `--faults api-process` SIGKILLs one of the
API's two processes, which uvicorn's supervisor replaces; `--faults workers` SIGKILLs one of
the two job workers and starts another. Job leases are short (`--lease`) so that jobs a killed
worker held come back within the run. With `--signal TERM` the processes are stopped as a
supervisor stops them instead (SIGTERM to the process group), and the time each takes to exit
is reported: in-flight requests and running jobs get `PIXGATE_SHUTDOWN_GRACE_S` (5 s here), and
a process still running after twice that is counted as overrunning, then killed. Several
signals (`--signal KILL,TERM`) and several faults take turns: the faults go through every
(fault, signal) pair in a shuffled order before any pair comes again, so a run with as many
faults as pairs has tried each one.

At the end, with the processes up and the load stopped, it waits for the queue to drain, then
checks: every acknowledged operation reached a final state (lost otherwise); no `externalId`
has two transactions; every final state of an acknowledged operation arrived at the receiver,
and no state change arrived under two webhook-ids (after de-duplication by webhook-id); every
delivery the database holds arrived; `pixgate ledger verify` passes. Exit status 1 when any
check fails.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psutil

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests.patroni

from _common import (
    PIXGATE,
    Credentials,
    Deployment,
    arguments,
    cash_out_body,
    credentials,
    free_port,
    machine_summary,
    query,
    start_receiver,
    table,
    verdict,
)

from pixgate.sandbox import rules as scenarios
from pixgate.webhooks.rules.webhooks import EventType
from tests import patroni

PAYER = {"name": "Joao Pagador", "document": "52998224725"}
HOLDER_CPF = "11144477735"
MED_EVENTS = (EventType.MED_CREATED, EventType.MED_ACCEPTED, EventType.MED_REJECTED)
SCENARIOS: list[str | None] = [
    *[None] * 12,
    *sorted(scenarios.SYNCHRONOUS),
    *scenarios.SETTLEMENT_ERRORS,
    "WEBHOOK_DELAY",
    "DELAY_500MS",
]
"""Every sandbox scenario; most cash-outs have none (they settle)."""
OPERATIONS = ("cash_out", "charge_paid", "qr_internal", "dict_transfer", "refund_in", "med")
FINAL = ("CONFIRMED", "ERROR")
RETRY_FOR_S = 120.0
EVENTS = ("cash_out", "cash_in", "refund_in", "refund_out", *MED_EVENTS)
SHUTDOWN_GRACE_S = 5.0


@dataclass
class Acknowledged:
    """An operation the gateway answered as accepted: it owes a final state and a webhook."""

    operation: str
    transaction_id: str  # the public transactionId; a DICT transfer's numeric id
    account: int
    event: str  # the v1 event of its final state: CashOut, CashIn, RefundIn


@dataclass
class Tally:
    sent: Counter[str] = field(default_factory=Counter)
    answers: Counter[str] = field(default_factory=Counter)
    retries: int = 0
    unanswered: int = 0
    repeats: int = 0
    repeat_mismatches: list[str] = field(default_factory=list)
    acknowledged: list[Acknowledged] = field(default_factory=list)
    received: dict[int, list[str]] = field(default_factory=lambda: defaultdict(list))
    """Confirmed incoming payments per account (transaction ids), candidates for refunds."""
    disputable: dict[int, list[str]] = field(default_factory=lambda: defaultdict(list))
    """End-to-end ids of payments from outside (the sandbox payer), candidates for MED."""


# --- the processes ---------------------------------------------------------------------------


class Fleet:
    """The API (one `pixgate serve --workers 2`, its own process group) and the job workers,
    each restartable after a kill."""

    def __init__(
        self,
        deployment: Deployment,
        *,
        api_workers: int,
        job_workers: int,
        cluster: patroni.Cluster | None = None,
    ) -> None:
        self.deployment = deployment
        self.cluster = cluster
        self.exit_seconds: list[float] = []
        self.overran = 0
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.api_workers = api_workers
        self.log = (deployment.workdir / "soak.log").open("ab")
        self.api = self._start_api()
        self.workers = [self._start_worker() for _ in range(job_workers)]
        self.kills: Counter[tuple[str, signal.Signals]] = Counter()

    def _spawn(self, *args: str) -> subprocess.Popen[bytes]:
        # Temporary files in the deployment's directory, removed with it: a SIGKILLed `serve
        # --workers 2` cannot remove the directory its processes count their metrics in.
        return subprocess.Popen(
            [PIXGATE, *args],
            env=self.deployment.env | {"TMPDIR": str(self.deployment.workdir)},
            stdout=self.log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def _start_api(self) -> subprocess.Popen[bytes]:
        return self._spawn(
            "serve", "--port", str(self.port), "--workers", str(self.api_workers), "--no-worker"
        )

    def _start_worker(self) -> subprocess.Popen[bytes]:
        return self._spawn("worker")

    def wait_ready(self, timeout: float = 120.0) -> float:
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            if self.api.poll() is not None:
                raise RuntimeError("pixgate serve exited; see soak.log")
            with contextlib.suppress(httpx.TransportError):
                if httpx.get(f"{self.base}/readyz", timeout=2).status_code == 200:
                    return time.monotonic() - started
            time.sleep(0.1)
        raise RuntimeError(f"pixgate serve not ready after {timeout} s")

    def kill_api(self, how: signal.Signals) -> None:
        self._end(self.api, how)
        self.kills["api", how] += 1
        self.api = self._start_api()

    def kill_api_process(self, rng: random.Random, how: signal.Signals) -> bool:
        """One of the API's processes, which uvicorn's supervisor replaces by itself; False
        when none could be stopped. Right after the API was started again, or while the
        supervisor replaces a process that just ended, there may be none yet (on a loaded
        host, seconds): wait for one rather than skip the fault."""
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            with contextlib.suppress(psutil.NoSuchProcess):  # a zombie included
                serving = [
                    child
                    for child in psutil.Process(self.api.pid).children()
                    if child.status() != psutil.STATUS_ZOMBIE
                    and "resource_tracker" not in " ".join(child.cmdline())
                ]
                if serving:
                    rng.choice(serving).send_signal(how)
                    self.kills["api-process", how] += 1
                    return True
            time.sleep(0.1)
        return False

    def kill_worker(self, rng: random.Random, how: signal.Signals) -> None:
        index = rng.randrange(len(self.workers))
        self._end(self.workers[index], how)
        self.kills["worker", how] += 1
        self.workers[index] = self._start_worker()

    def kill_primary(self, how: signal.Signals) -> None:
        """The primary's postmaster, then the next time its whole node, by SIGKILL whatever
        `how` says (a database server dies; it is not stopped); first waits for the standby
        to stream, so that each kill has a standby to fail over to."""
        assert self.cluster is not None, "--faults primary needs --ha"
        leader = self.cluster.wait("standby", timeout=120)
        if self.killed("primary") % 2 == 0:
            leader.kill_postmaster()
        else:
            leader.kill()
            threading.Thread(target=self._rejoin, args=(leader,), daemon=True).start()
        self.kills["primary", how] += 1

    def _rejoin(self, node: patroni.Node) -> None:
        """Start the killed node's Patroni again once another node leads."""
        assert self.cluster is not None
        deadline = time.monotonic() + 120
        while self.cluster.leader() in (None, node) and time.monotonic() < deadline:
            time.sleep(0.2)
        node.restart()

    def killed(self, kind: str) -> int:
        return sum(n for (k, _), n in self.kills.items() if k == kind)

    def _end(self, process: subprocess.Popen[bytes], how: signal.Signals) -> None:
        if how == signal.SIGKILL:
            _kill_group(process)
            return
        started = time.monotonic()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, how)
        try:
            process.wait(timeout=2 * SHUTDOWN_GRACE_S)
        except subprocess.TimeoutExpired:
            self.overran += 1
            _kill_group(process)
        self.exit_seconds.append(time.monotonic() - started)

    def stop(self) -> None:
        for process in [self.api, *self.workers]:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in [self.api, *self.workers]:
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                _kill_group(process)
        self.log.close()


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def inject_faults(
    fleet: Fleet,
    kinds: list[str],
    signals: list[signal.Signals],
    every: float,
    stop: threading.Event,
    seed: int,
) -> None:
    """At a random moment of every `every` seconds, stop one of `kinds` with one of `signals`
    (and restart it), taking every pair once in a shuffled round before the next round. A
    pair that found nothing to stop stays first in line, so a round is never cut short."""
    rng = random.Random(seed)
    turns: list[tuple[str, signal.Signals]] = []
    while not stop.wait(rng.uniform(0.5, 1.5) * every):
        if not turns:
            turns = [(kind, how) for kind in kinds for how in signals]
            rng.shuffle(turns)
        kind, how = turns[-1]
        if kind == "api":
            fleet.kill_api(how)
        elif kind == "api-process":
            if not fleet.kill_api_process(rng, how):
                continue
        elif kind == "primary":
            fleet.kill_primary(how)
        else:
            fleet.kill_worker(rng, how)
        turns.pop()


# --- the clients -----------------------------------------------------------------------------


class Client:
    """One integrator: its own account, token and certificate; retries unanswered requests."""

    def __init__(
        self,
        http: httpx.AsyncClient,
        creds: Credentials,
        account: int,
        tally: Tally,
        rng: random.Random,
    ) -> None:
        self.http = http
        self.headers = creds.headers()
        self.account = account
        self.tally = tally
        self.rng = rng

    async def send(
        self, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None
    ) -> httpx.Response | None:
        """The answer, sending the same request again while none comes (None: gave up)."""
        deadline = time.monotonic() + RETRY_FOR_S
        while time.monotonic() < deadline:
            try:
                response = await self.http.request(
                    method, path, json=body, headers={**self.headers, **(headers or {})}
                )
            except httpx.TransportError:
                self.tally.retries += 1
                await asyncio.sleep(0.2)
                continue
            if response.status_code in (502, 503, 504):
                self.tally.retries += 1
                await asyncio.sleep(min(float(response.headers.get("retry-after", "0.2")), 2.0))
                continue
            code = response.json().get("code", "") if response.is_error else ""
            self.tally.answers[f"{response.status_code} {code}".strip()] += 1
            return response
        self.tally.unanswered += 1
        return None

    def acknowledge(self, operation: str, transaction_id: str, account: int, event: str) -> None:
        self.tally.acknowledged.append(Acknowledged(operation, transaction_id, account, event))

    async def accepted_id(self, response: httpx.Response | None, field: str) -> str | None:
        """The transaction a 2xx answer created, or the one a duplicate-externalId answer
        names."""
        if response is None:
            return None
        body = response.json()
        if response.is_success:
            return str(body[field])
        if body.get("code") == "PIX_DUPLICATE_EXTERNAL_ID":  # 400, or 409 for refunds
            return str(body["details"]["existingTransactionId"])
        return None

    async def cash_out(self) -> None:
        scenario = self.rng.choice(SCENARIOS)
        body = cash_out_body("soak-co", round(self.rng.uniform(0.01, 5.0), 2))
        headers = {"X-Sandbox-Scenario": scenario} if scenario else {}
        response = await self.send("POST", "/api/pix/cash-out", body, headers)
        tx = await self.accepted_id(response, "transactionId")
        if tx is None:
            return
        self.acknowledge("cash_out", tx, self.account, "CashOut")
        if self.rng.random() < 0.15:
            self.tally.repeats += 1
            again = await self.send("POST", "/api/pix/cash-out", body, headers)
            if again is not None and await self.accepted_id(again, "transactionId") != tx:
                self.tally.repeat_mismatches.append(f"cash-out: {again.text[:200]}")

    async def charge(self, value: float) -> tuple[str, str] | None:
        body = {
            "transaction": {
                "value": value,
                "description": "soak",
                "externalId": f"soak-ch-{uuid.uuid4().hex}",
            },
            "payer": {"fullName": "Maria da Silva", "document": HOLDER_CPF},
        }
        response = await self.send("POST", "/api/pix/cash-in", body)
        if response is None or not response.is_success:
            return None  # a charge created but unanswered is simply never paid
        created = response.json()
        return str(created["transactionId"]), str(created["pixCode"])

    async def charge_paid(self) -> None:
        created = await self.charge(round(self.rng.uniform(1.0, 50.0), 2))
        if created is None:
            return
        tx, code = created
        pay = {"pixCode": code, "payer": PAYER}
        response = await self.send("POST", "/sandbox/pix/pay", pay)
        # 409 "already paid": an earlier, unanswered attempt of this same request paid it.
        if response is not None and (response.is_success or response.status_code == 409):
            self.acknowledge("charge_paid", tx, self.account, "CashIn")
            self.tally.received[self.account].append(tx)
            if response.is_success:
                self.tally.disputable[self.account].append(response.json()["endToEndId"])
            if self.rng.random() < 0.15:
                self.tally.repeats += 1
                again = await self.send("POST", "/sandbox/pix/pay", pay)
                if again is None or again.status_code != 409:
                    self.tally.repeat_mismatches.append(f"pay: {again and again.text[:200]}")

    async def qr_internal(self, payee: Client) -> None:
        value = round(self.rng.uniform(0.5, 5.0), 2)
        created = await payee.charge(value)
        if created is None:
            return
        charge_tx, code = created
        body = {"qrCode": code, "value": value, "externalId": f"soak-qr-{uuid.uuid4().hex}"}
        response = await self.send("POST", "/api/pix/cash-out-qrcode", body)
        tx = await self.accepted_id(response, "transactionId")
        if tx is None:
            return
        self.acknowledge("qr_internal", tx, self.account, "CashOut")
        self.acknowledge("qr_internal", charge_tx, payee.account, "CashIn")
        self.tally.received[payee.account].append(charge_tx)

    async def dict_transfer(self) -> None:
        body = {
            "pixKey": f"soak{self.account}@example.com",
            "creditorDocument": HOLDER_CPF,
            "priority": "HIGH",
            "payment": {"currency": "BRL", "amount": round(self.rng.uniform(0.01, 5.0), 2)},
        }
        key = {"x-idempotency-key": str(uuid.uuid4())}
        response = await self.send("POST", "/dict/pix", body, key)
        if response is None or not response.is_success:
            return
        tx = str(response.json()["id"])
        self.acknowledge("dict_transfer", tx, self.account, "CashOut")
        if self.rng.random() < 0.15:
            self.tally.repeats += 1
            again = await self.send("POST", "/dict/pix", body, key)
            if again is None or not again.is_success or str(again.json()["id"]) != tx:
                self.tally.repeat_mismatches.append(f"dict: {again and again.text[:200]}")

    async def refund_in(self) -> None:
        received = self.tally.received[self.account]
        if not received:
            await self.charge_paid()
            return
        original = self.rng.choice(received)
        value = round(self.rng.uniform(0.01, 20.0), 2)
        body = {"refundValue": value, "externalId": f"soakrf{uuid.uuid4().hex[:29]}"}
        response = await self.send("POST", f"/api/pix/refund-in/{original}", body)
        tx = await self.accepted_id(response, "transactionId")
        if tx is not None:
            self.acknowledge("refund_in", tx, self.account, "RefundIn")

    async def med(self) -> None:
        """The payer's bank disputes a payment (part of it may be refunded already, or spent):
        the case blocks what it can, and its analysis returns or releases it."""
        disputable = self.tally.disputable[self.account]
        if not disputable:
            await self.charge_paid()
            return
        e2e = disputable.pop(self.rng.randrange(len(disputable)))
        body = {"endToEndId": e2e, "cause": "SOCIAL_ENGINEERING"}
        response = await self.send("POST", "/sandbox/med", body)
        if response is None:
            return
        if response.is_success:
            case = int(response.json()["id"])
        elif response.status_code == 409:  # an earlier, unanswered attempt opened it
            found = await self.open_case(e2e)
            if found is None:
                return
            case = found
        else:
            return
        self.acknowledge("med", f"med:{case}", self.account, "MedCreated")
        result = self.rng.choice(["APPROVED", "REJECTED"])
        analysis = await self.send("POST", f"/sandbox/med/{case}/analysis", {"result": result})
        if analysis is not None and (analysis.is_success or analysis.status_code == 409):
            event = "MedAccepted" if result == "APPROVED" else "MedRejected"
            if analysis.is_success:
                self.acknowledge("med", f"med:{case}", self.account, event)

    async def open_case(self, e2e: str) -> int | None:
        response = await self.send("GET", "/api/med?pageSize=100&status=RECEIVED")
        if response is None or not response.is_success:
            return None
        cases = [c for c in response.json()["data"] if c["endToEnd"] == e2e]
        return int(cases[0]["id"]) if cases else None

    async def run(self, others: list[Client], until: float) -> None:
        while time.monotonic() < until:
            operation = self.rng.choice(OPERATIONS)
            self.tally.sent[operation] += 1
            if operation == "cash_out":
                await self.cash_out()
            elif operation == "charge_paid":
                await self.charge_paid()
            elif operation == "qr_internal":
                await self.qr_internal(self.rng.choice(others))
            elif operation == "dict_transfer":
                await self.dict_transfer()
            elif operation == "refund_in":
                await self.refund_in()
            else:
                await self.med()


async def register_dict_key(http: httpx.AsyncClient, creds: Credentials, account: int) -> None:
    response = await http.post(
        "/sandbox/dict/keys",
        json={
            "key": f"soak{account}@example.com",
            "keyType": "EMAIL",
            "name": "Maria Silva",
            "document": HOLDER_CPF,
            "ispb": "60701190",
            "bankName": "Banco Destino",
            "branch": "0001",
            "accountNumber": "123456-7",
            "status": "ACTIVE",
        },
        headers=creds.headers(),
    )
    response.raise_for_status()


async def load(
    base: str, accounts: list[tuple[int, Credentials]], clients: int, duration: float, seed: int
) -> tuple[Tally, float]:
    tally = Tally()
    limits = httpx.Limits(max_connections=clients * 2, max_keepalive_connections=clients)
    async with httpx.AsyncClient(base_url=base, timeout=60, limits=limits) as http:
        for account, creds in accounts:
            await register_dict_key(http, creds, account)
        team = [
            Client(http, creds, account, tally, random.Random(seed + n))
            for n, (account, creds) in enumerate(
                accounts[i % len(accounts)] for i in range(clients)
            )
        ]
        started = time.monotonic()
        until = started + duration
        await asyncio.gather(
            *(c.run([o for o in team if o.account != c.account], until) for c in team)
        )
        return tally, time.monotonic() - started


# --- the checks ------------------------------------------------------------------------------


def wait_quiet(url: str, timeout: float) -> tuple[int, int]:
    """Wait until no job is queued or running and no delivery is pending; what is left."""
    deadline = time.monotonic() + timeout
    left = (-1, -1)
    while time.monotonic() < deadline:
        rows = asyncio.run(
            query(
                url,
                "SELECT (SELECT count(*) FROM jobs WHERE status IN ('queued', 'running') "
                "        AND run_at < now() + interval '10 minutes'),"
                "       (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending')",
            )
        )
        left = (int(rows[0][0]), int(rows[0][1]))
        if left == (0, 0):
            break
        time.sleep(0.5)
    return left


def check(url: str, tally: Tally, arrivals: list[dict[str, Any]]) -> dict[str, int]:
    """Each problem kind and how many times it was found (all 0: the run passed)."""
    refs = [a.transaction_id for a in tally.acknowledged]
    found: dict[str, tuple[str, str]] = {}  # the client's reference -> (public id, status)
    for row in asyncio.run(
        query(
            url,
            "SELECT id::text AS id, transaction_id::text AS public, status FROM transactions "
            "WHERE transaction_id::text = ANY($1::text[]) OR id::text = ANY($1::text[])",
            refs,
        )
    ):
        found[row["id"]] = found[row["public"]] = (row["public"], row["status"])
    final = {ref: found[ref] for ref in refs if ref in found and found[ref][1] in FINAL}
    for row in asyncio.run(query(url, "SELECT id, status FROM med_cases")):
        if row["status"] == "ANALYZED":  # every case the clients opened, they analysed
            final[f"med:{row['id']}"] = (f"med:{row['id']}", "")
    lost = [a for a in tally.acknowledged if a.transaction_id not in final]
    paid_twice = asyncio.run(
        query(
            url,
            "SELECT account_id, external_id FROM transactions WHERE external_id IS NOT NULL "
            "GROUP BY 1, 2 HAVING count(*) > 1",
        )
    )
    by_message: dict[str, dict[str, Any]] = {}
    for arrival in arrivals:
        by_message.setdefault(arrival["id"], arrival["body"])
    messages_per_state: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for message_id, body in by_message.items():
        if body.get("med"):
            state = (str(body["event"]), f"med:{body['med']['id']}", "")
        else:
            state = (str(body["event"]), str(body["transactionId"]), str(body["status"]))
        messages_per_state[state].add(message_id)
    unnotified = [
        a
        for a in tally.acknowledged
        if a.transaction_id in final
        and (a.event, *final[a.transaction_id]) not in messages_per_state
    ]
    notified_twice = [s for s, messages in messages_per_state.items() if len(messages) > 1]
    deliveries = asyncio.run(query(url, "SELECT message_id, status FROM webhook_deliveries"))
    undelivered = [d for d in deliveries if d["status"] != "delivered"]
    never_arrived = [d for d in deliveries if d["message_id"] not in by_message]
    stuck_holds = asyncio.run(query(url, "SELECT id FROM accounts WHERE blocked <> 0"))
    over_refunded = asyncio.run(
        query(
            url,
            "SELECT o.id FROM transactions o JOIN transactions r ON r.parent_id = o.id "
            "WHERE r.operation = 'REFUND_IN' AND r.status <> 'ERROR' "
            "GROUP BY o.id, o.amount HAVING sum(r.amount) > o.amount",
        )
    )
    return {
        "acknowledged, not final (lost)": len(lost),
        "account with money still blocked": len(stuck_holds),
        "refunded beyond the original": len(over_refunded),
        "externalId with two transactions": len(paid_twice),
        "repeat answered another transaction": len(tally.repeat_mismatches),
        "500 INTERNAL_ERROR answered": tally.answers["500 INTERNAL_ERROR"],
        "final state never notified": len(unnotified),
        "state notified under two webhook-ids": len(notified_twice),
        "delivery not delivered": len(undelivered),
        "delivered, never arrived": len(never_arrived),
    }


def main() -> int:
    parser = arguments(__doc__ or "", duration=60)
    parser.add_argument("--clients", type=int, default=16, help="concurrent clients")
    parser.add_argument("--accounts", type=int, default=4)
    parser.add_argument(
        "--faults",
        default="",
        help="comma-separated: api (the whole API), api-process (one of its processes), "
        "workers (a job worker), primary (the database's primary; with --ha); empty: none",
    )
    parser.add_argument(
        "--ha",
        action="store_true",
        help="the database: a primary and a synchronous standby run by Patroni, started here",
    )
    parser.add_argument("--kill-every", type=float, default=5.0, help="seconds between kills")
    parser.add_argument(
        "--signal",
        default="KILL",
        help="how the faults stop a process: KILL, TERM or both (KILL,TERM), taking turns",
    )
    parser.add_argument("--lease", type=float, default=5.0, help="job lease, seconds")
    parser.add_argument("--seed", type=int, default=int(time.time()))
    args = parser.parse_args()
    faults = [f for f in args.faults.split(",") if f]
    if set(faults) - {"api", "api-process", "workers", "primary"}:
        parser.error("--faults takes api, api-process, workers and/or primary")
    if "primary" in faults and not args.ha:
        parser.error("--faults primary needs --ha")
    names = [n for n in args.signal.split(",") if n]
    if not names or set(names) - {"KILL", "TERM"}:
        parser.error("--signal takes KILL, TERM or KILL,TERM")
    signals = [signal.Signals[f"SIG{name}"] for name in names]
    with contextlib.ExitStack() as stack:
        cluster = None
        if args.ha:
            if not patroni.installed():
                parser.error(patroni.MISSING)
            cluster = stack.enter_context(patroni.cluster(synchronous=True))
            args.server = cluster.url()
        return soak(args, faults, signals, cluster)


def soak(
    args: argparse.Namespace,
    faults: list[str],
    signals: list[signal.Signals],
    cluster: patroni.Cluster | None,
) -> int:
    print(machine_summary(args.server))
    print(f"seed {args.seed}; faults: {', '.join(faults) or 'none'} by SIG{args.signal}")

    deployment = Deployment.on_server(
        args.server,
        allow_insecure_webhooks="true",
        settlement_delay_ms="50",
        job_lease_seconds=str(args.lease),
        db_pool_max="6",
        shutdown_grace_s=str(SHUTDOWN_GRACE_S),
    )
    receiver_port = free_port()
    arrivals_path = deployment.workdir / "arrivals.jsonl"
    receiver = start_receiver(receiver_port, arrivals_path, ["--bodies"])
    fleet: Fleet | None = None
    try:
        deployment.upgrade()
        accounts = deployment.accounts(args.accounts)
        for account in accounts:
            for event in EVENTS:
                deployment.cli(
                    "webhooks",
                    "add",
                    "--account",
                    str(account["accountId"]),
                    "--event",
                    event,
                    "--url",
                    f"http://127.0.0.1:{receiver_port}/hook/{account['accountId']}",
                )
        fleet = Fleet(deployment, api_workers=2, job_workers=2, cluster=cluster)
        fleet.wait_ready()
        team = [(int(a["accountId"]), credentials(fleet.base, a)) for a in accounts]
        stop = threading.Event()
        killer = threading.Thread(
            target=inject_faults,
            args=(fleet, faults, signals, args.kill_every, stop, args.seed),
        )
        if faults:
            killer.start()
        try:
            tally, seconds = asyncio.run(
                load(fleet.base, team, args.clients, args.duration, args.seed)
            )
        finally:
            stop.set()
            if faults:
                killer.join()
        fleet.wait_ready()
        url = deployment.database_url or ""
        left = wait_quiet(url, timeout=60 + 2 * args.lease)
        fleet.stop()
        time.sleep(0.5)
    finally:
        if fleet is not None and fleet.api.poll() is None:
            fleet.stop()
        receiver.terminate()
        receiver.wait(timeout=10)
    try:
        arrivals = [json.loads(line) for line in arrivals_path.read_text().splitlines()]
        problems = check(url, tally, arrivals)
        verified = subprocess.run(
            [PIXGATE, "ledger", "verify"], env=deployment.env, capture_output=True, text=True
        )
        problems["ledger verify failed"] = int(verified.returncode != 0)
        if signal.SIGTERM in signals:
            problems["exit after SIGTERM overran 2 x grace"] = fleet.overran
        if verified.returncode != 0:
            print(verified.stdout, verified.stderr)
    finally:
        deployment.cleanup(args.server, keep=args.keep)

    operations = sum(tally.sent.values())
    print(
        f"\n{operations} operations ({dict(tally.sent)}) by {args.clients} clients in "
        f"{seconds:.1f} s: {operations / seconds:.0f}/s; {len(tally.acknowledged)} acknowledged "
        f"transactions; answers {dict(sorted(tally.answers.items()))}; {tally.repeats} repeats "
        f"of an externalId or idempotency key; {tally.retries} resends of unanswered requests, "
        f"{tally.unanswered} given up"
    )
    print(
        f"faults: {fleet.killed('api') if fleet else 0} API kills, "
        f"{fleet.killed('api-process') if fleet else 0} API process kills, "
        f"{fleet.killed('worker') if fleet else 0} worker kills, "
        f"{fleet.killed('primary') if fleet else 0} primary kills; "
        f"{len(arrivals)} webhook arrivals, {len({a['id'] for a in arrivals})} distinct "
        f"webhook-ids; "
        f"left after drain: {left[0]} jobs, {left[1]} pending deliveries"
    )
    if fleet is not None and len(signals) > 1:
        pairs = ", ".join(
            f"{kind} by {how.name}: {n}" for (kind, how), n in sorted(fleet.kills.items())
        )
        print(f"faults by signal: {pairs}")
    if fleet is not None and fleet.exit_seconds:
        print(
            f"exits after SIGTERM: {len(fleet.exit_seconds)}, "
            f"slowest {max(fleet.exit_seconds):.1f} s (grace {SHUTDOWN_GRACE_S:g} s)"
        )
    print(table(["check", "found"], list(problems.items())))
    for mismatch in tally.repeat_mismatches[:5]:
        print("  repeat:", mismatch)
    lost = problems["acknowledged, not final (lost)"]
    ok = not any(problems.values()) and tally.unanswered == 0
    print(f"\nlost: {lost} -> {verdict(ok)}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
