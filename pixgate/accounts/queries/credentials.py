"""Client credentials (clientId + keyed hash of clientSecret) and client certificates."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from uuid import UUID

from pixgate.accounts.rules.clients import AuthMethod
from pixgate.core.db.pool import Connection


@dataclass(frozen=True, slots=True)
class Credential:
    """An active client credential: how it authenticates, the keyed hash of its secret (None
    for `tls_client_auth`) and its account."""

    client_id: UUID
    account_id: int
    secret_hash: bytes | None
    auth_method: AuthMethod


@dataclass(frozen=True, slots=True)
class Certificate:
    """An active client certificate, by its SHA-256 fingerprint, and its account."""

    fingerprint: str
    account_id: int


async def insert_credential(
    conn: Connection,
    *,
    client_id: UUID,
    account_id: int,
    secret_hash: bytes | None,
    auth_method: AuthMethod = AuthMethod.CLIENT_SECRET,
) -> None:
    await conn.execute(
        "INSERT INTO credentials (client_id, account_id, secret_hash, auth_method) "
        "VALUES ($1, $2, $3, $4)",
        client_id,
        account_id,
        secret_hash,
        auth_method.value,
    )


async def active_credential(conn: Connection, client_id: UUID) -> Credential | None:
    row = await conn.fetchrow(
        "SELECT client_id, account_id, secret_hash, auth_method FROM credentials "
        "WHERE client_id = $1 AND revoked_at IS NULL",
        client_id,
    )
    if row is None:
        return None
    return Credential(
        client_id=row["client_id"],
        account_id=row["account_id"],
        secret_hash=row["secret_hash"],
        auth_method=AuthMethod(row["auth_method"]),
    )


async def revoke_credential(conn: Connection, client_id: UUID) -> bool:
    status = await conn.execute(
        "UPDATE credentials SET revoked_at = now() WHERE client_id = $1 AND revoked_at IS NULL",
        client_id,
    )
    return bool(status == "UPDATE 1")


async def insert_certificate(
    conn: Connection,
    *,
    fingerprint: str,
    account_id: int,
    pem: str,
    subject: str,
    not_before: datetime,
    not_after: datetime,
) -> bool:
    """Register a certificate; False if that fingerprint is already registered."""
    row = await conn.fetchval(
        """
        INSERT INTO certificates (fingerprint, account_id, pem, subject, not_before, not_after)
        VALUES ($1, $2, $3, $4, $5, $6)
        ON CONFLICT (fingerprint) DO NOTHING
        RETURNING fingerprint
        """,
        fingerprint,
        account_id,
        pem,
        subject,
        not_before,
        not_after,
    )
    return row is not None


async def active_certificate(conn: Connection, fingerprint: str) -> Certificate | None:
    row = await conn.fetchrow(
        "SELECT fingerprint, account_id FROM certificates "
        "WHERE fingerprint = $1 AND revoked_at IS NULL",
        fingerprint,
    )
    return None if row is None else Certificate(**row)


async def revoke_certificate(conn: Connection, fingerprint: str) -> bool:
    status = await conn.execute(
        "UPDATE certificates SET revoked_at = now() WHERE fingerprint = $1 AND revoked_at IS NULL",
        fingerprint,
    )
    return bool(status == "UPDATE 1")


async def revoked_since(conn: Connection, seconds: float) -> tuple[list[str], list[str]]:
    """clientIds and certificate fingerprints revoked in the last `seconds`."""
    rows = await conn.fetch(
        """
        SELECT 'credential' AS kind, client_id::text AS id FROM credentials
        WHERE revoked_at > now() - make_interval(secs => $1)
        UNION ALL
        SELECT 'certificate', fingerprint FROM certificates
        WHERE revoked_at > now() - make_interval(secs => $1)
        """,
        seconds,
    )
    clients = [r["id"] for r in rows if r["kind"] == "credential"]
    fingerprints = [r["id"] for r in rows if r["kind"] == "certificate"]
    return clients, fingerprints


async def account_exists(conn: Connection, account_id: int) -> bool:
    return bool(await conn.fetchval("SELECT 1 FROM accounts WHERE id = $1", account_id))
