"""Two gateway hosts on one database: each its own process group of `pixgate serve` and
`pixgate worker`, with settings of its own (public URL, worker concurrency), as two
machines would have. What they share (the database, Redis) makes them one gateway: a token
issued by one is accepted by the other, a rate limit counts on both, a revocation reaches
both, and each webhook is sent once though both hosts' workers run."""

from __future__ import annotations

import asyncio
import subprocess
import uuid
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import httpx
import redis

from pixgate.accounts.service import accounts
from pixgate.runtime import Runtime
from pixgate.webhooks import service as webhooks
from tests.helpers import cert_header, make_account
from tests.processes import PIXGATE, SERVE, running, server_env
from tests.reliability.load import order
from tests.webhooks.receiver import Receiver

REDIS_URL = "redis://127.0.0.1:6379"
CASH_OUTS = 40


@contextmanager
def host(name: str, database_url: str, shared: dict[str, str]) -> Iterator[str]:
    """One host: its API and its worker, in a process group of their own; yields its URL."""
    env = server_env(
        database_url,
        public_url=f"https://{name}.pix.example",
        job_concurrency="16",
        allow_insecure_webhooks="true",
        **shared,
    )
    worker = subprocess.Popen(
        [PIXGATE, "worker"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        with running(SERVE, env) as base:
            yield base
    finally:
        worker.terminate()
        worker.wait(timeout=30)


async def test_two_hosts_act_as_one_gateway(
    rt: Runtime, database_url: str, receiver: Receiver
) -> None:
    redis.Redis.from_url(REDIS_URL).ping()  # .ci/run starts it
    rt.settings = rt.settings.model_copy(update={"allow_insecure_webhooks": True})
    account = await make_account(rt, balance="1000.00")
    await webhooks.add(rt, account.account_id, event_type="cash_out", url=receiver.url())
    shared = {
        "rate_limit_storage": REDIS_URL,
        "rate_limit_prefix": f"pixgate-hosts-{uuid.uuid4().hex}",
        "token_rate_limit": "4/minute",
        "settlement_delay_ms": "0",
    }
    certificate = {"X-SSL-Client-Cert": cert_header(account.certificate_pem)}
    credentials = {"clientId": account.client_id, "clientSecret": account.client_secret}
    with ExitStack() as stack:
        a, b = (stack.enter_context(host(n, database_url, shared)) for n in ("a", "b"))
        async with httpx.AsyncClient(timeout=10, headers=certificate) as http:
            # A token from host a works on host b: the signing key is the database's.
            issued = await http.post(f"{a}/api/auth/token", json=credentials)
            assert issued.status_code == 201, issued.text
            token = {"Authorization": f"Bearer {issued.json()['access_token']}"}
            assert (await http.get(f"{b}/accounts/balances", headers=token)).status_code == 200

            # The token limit counts on both hosts (Redis): four tokens in all, then none.
            for base in (b, a, b):
                assert (await http.post(f"{base}/api/auth/token", json=credentials)).is_success
            for base in (a, b):
                limited = await http.post(f"{base}/api/auth/token", json=credentials)
                assert limited.status_code == 429, limited.text

            # Cash-outs through both hosts: settled by either worker, each notified once.
            answers = await asyncio.gather(
                *(
                    http.post(
                        f"{(a, b)[n % 2]}/api/pix/cash-out", json=order(f"hosts-{n}"), headers=token
                    )
                    for n in range(CASH_OUTS)
                )
            )
            assert [r.status_code for r in answers] == [201] * CASH_OUTS
            await receiver.wait_for(CASH_OUTS, deadline=60)
            await asyncio.sleep(2)  # a second delivery of any of them would arrive by now
            ids = Counter(r.headers["webhook-id"] for r in receiver.received)
            assert len(ids) == CASH_OUTS and set(ids.values()) == {1}, ids.most_common(3)

            # A revocation, written to the database, reaches both hosts.
            await accounts.revoke_credential(rt, account.client_id)
            for base in (a, b):
                for _ in range(50):
                    answer = await http.get(f"{base}/accounts/balances", headers=token)
                    if answer.status_code == 401:
                        break
                    await asyncio.sleep(0.1)
                assert answer.status_code == 401, f"{base} still accepts a revoked token"
