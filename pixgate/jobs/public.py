"""The public module of jobs: what other features use of it, and the only module they import."""

from pixgate.jobs import queue
from pixgate.jobs.queue import (
    DELIVER_WEBHOOK,
    SETTLE_PAYOUT,
    DeliverWebhook,
    ExpireCharge,
    JobKind,
    RunDueSplits,
    SettlePayout,
    wake_workers,
)
from pixgate.jobs.retry import Retry

__all__ = [
    "DELIVER_WEBHOOK",
    "SETTLE_PAYOUT",
    "DeliverWebhook",
    "ExpireCharge",
    "JobKind",
    "Retry",
    "RunDueSplits",
    "SettlePayout",
    "queue",
    "wake_workers",
]
