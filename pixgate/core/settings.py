"""Runtime configuration, read once from `PIXGATE_*` environment variables (and a `.env` file
in the working directory) and passed down."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from pixgate.core.pix import brcode


class Settings(BaseSettings):
    """Every knob of the gateway; the README's settings table mirrors this class."""

    # `.env` in the working directory too (environment variables win): the CLI and the
    # server started from one directory then share one configuration (`.env.example`).
    model_config = SettingsConfigDict(env_prefix="PIXGATE_", extra="ignore", env_file=".env")

    database_url: str | None = Field(
        default=None,
        description="postgresql:// URL; unset: an embedded PostgreSQL in data_dir",
    )
    data_dir: Path = Field(default=Path("./pixgate-data"), description="embedded default's home")
    db_pool_min: int = Field(default=2, ge=1)
    db_pool_max: int = Field(default=20, ge=1)
    db_write_lanes: int = Field(
        default=2,
        ge=1,
        description="statements writing accounts' rows that each process keeps in flight at "
        "once; the accounts are spread over them by id",
    )
    db_pooler: Literal["none", "transaction"] = Field(
        default="none",
        description="'transaction': database_url is a pooler in transaction mode (PgBouncer), "
        "so no prepared statement is kept past its transaction",
    )
    direct_database_url: str | None = Field(
        default=None,
        description="PostgreSQL itself, not through the pooler: the workers' LISTEN and "
        "`pixgate db upgrade`; unset behind a transaction pooler: workers poll each second",
    )
    read_database_url: str | None = Field(
        default=None,
        description="a streaming standby that the statement, the transaction lists and the "
        "event list may read from; everything else reads the primary",
    )
    read_max_lag_s: float = Field(
        default=5.0,
        gt=0,
        description="a standby further behind than this is not read: the primary answers",
    )
    db_connect_timeout_s: float = Field(
        default=5.0,
        gt=0,
        description="a new database connection not made within this is a 503 (readyz: unavailable)",
    )

    sandbox: bool = Field(default=True, description="simulated settling bank and /sandbox routes")
    provider: Literal["sandbox"] = Field(
        default="sandbox", description="the settling bank behind the provider interface"
    )
    settlement_delay_ms: int = Field(default=200, ge=0)
    provider_min_expiration: int = Field(default=60, ge=1)
    ispb: str = Field(default="12345678", pattern=r"^\d{8}$")
    bank_name: str = Field(
        default="pixgate", description="our institution's name, as MED cases show it"
    )
    public_url: str = Field(default="http://127.0.0.1:8080")
    merchant_city: str = Field(default="SAO PAULO", description="city (60) of our BR Codes")
    api_pix_base_path: str = Field(
        default="/api/v2",
        pattern=r"^(/[A-Za-z0-9._~-]+)+$",
        description="where the Central Bank's API Pix is served (its operations' prefix)",
    )

    token_ttl: int = Field(default=1800, ge=60)
    jwt_private_key: SecretStr | None = Field(
        default=None, description="PEM of an Ed25519 key; unset: generated and kept in the database"
    )
    revocation_poll_s: float = Field(
        default=1.0, gt=0, le=4, description="how often each API process re-reads revocations"
    )
    jwt_issuer: str = "pixgate"
    jwt_audience: str = "pixgate-api"
    secret_hash_key: SecretStr | None = Field(
        default=None, description="HMAC key for client secrets; unset: generated and kept"
    )
    dashboard_session_key: SecretStr | None = Field(
        default=None, description="HMAC key of dashboard sessions; unset: generated and kept"
    )
    dashboard_session_ttl_s: int = Field(
        default=3600, ge=60, le=86400, description="a dashboard sign-in lasts this long"
    )
    dashboard_login_rate_limit: str = Field(
        default="10/minute", description="failed dashboard sign-ins per clientId and per address"
    )

    timezone: str = Field(default="America/Sao_Paulo", description="clock of the limits")
    refund_window_days: int = Field(
        default=89,
        ge=0,
        le=3650,
        description="days after a PIX was received (credited) in which it can be refunded",
    )
    default_transaction_limit: Decimal = Decimal("100000.00")
    default_daily_limit: Decimal = Decimal("500000.00")
    default_night_limit: Decimal = Decimal("1000.00")
    default_fee_fixed: Decimal = Decimal("0.00")
    default_fee_percent: Decimal = Decimal("0")

    webhook_api_enabled: bool = False
    allow_insecure_webhooks: bool = False
    webhook_client_cert: str | None = Field(
        default=None,
        description="PEM file of the client certificate presented to webhook receivers (mTLS)",
    )
    webhook_client_key: str | None = Field(
        default=None, description="PEM file of that certificate's private key"
    )
    webhook_ca_file: str | None = Field(
        default=None,
        description="PEM file of CAs trusted for webhook receivers' server certificates, "
        "besides the default ones",
    )
    webhook_timeout_s: float = Field(default=10.0, gt=0, description="total time of one attempt")
    webhook_concurrency_per_destination: int = Field(
        default=64, ge=1, description="webhook POSTs in flight to one host and port, per process"
    )
    rate_limit_storage: str = "memory://"
    rate_limit_prefix: str = Field(
        default="pixgate", description="namespace of the counters in a shared storage"
    )
    token_rate_limit: str = Field(
        default="60/minute", description="token requests per client certificate"
    )
    med_rate_limit: str = Field(
        default="60/minute", description="GET /api/med requests per account"
    )
    webhook_secret_overlap_s: float = Field(
        default=86400.0, ge=0, description="a rotated-out webhook secret keeps signing this long"
    )
    job_retention_s: float = Field(
        default=86400.0, ge=0, description="done jobs are deleted this long after they finished"
    )
    job_lease_seconds: float = Field(
        default=60.0, gt=0, description="a running job is retaken when its worker is this late"
    )
    # Most jobs wait (for the database, for a webhook receiver): a settlement spends its time
    # queued for its account's row, where the more of them wait, the more go in one statement
    # (docs/performance.md, "Worker concurrency and uvloop").
    job_concurrency: int = Field(default=256, ge=1, description="jobs each worker runs at once")
    # Jobs due later (settlements the bank answers after a delay) fall due one by one; a
    # worker that waits this much longer claims, runs and settles those due meanwhile
    # together (docs/performance.md, "Jobs due later, claimed together").
    job_window_ms: float = Field(
        default=10.0,
        ge=0,
        le=1000,
        description="a worker woken for a job due later claims this much after it is due",
    )

    shutdown_grace_s: float = Field(
        default=20.0,
        gt=0,
        description="on SIGTERM, in-flight requests and running jobs get this long to finish",
    )

    serve_with_worker: bool = Field(
        default=True, description="`pixgate serve` runs the job worker in-process"
    )

    max_body_bytes: int = Field(default=1_048_576, ge=1024)
    log_json: bool | None = Field(default=None, description="unset: JSON when not on a terminal")
    log_level: str = "INFO"

    @field_validator("ispb")
    @classmethod
    def _not_placeholder_ispb(cls, value: str) -> str:
        if value == "00000000":
            raise ValueError("ISPB 00000000 is a placeholder, not an institution: set the real one")
        return value

    @field_validator("merchant_city")
    @classmethod
    def _city_fits_a_br_code(cls, value: str) -> str:
        """Every charge's BR Code carries the city: one with nothing printable in ASCII would
        make every charge fail."""
        if not brcode.fit(value, brcode.CITY_MAX):
            raise ValueError("needs a character of printable ASCII once accents are removed")
        return value
