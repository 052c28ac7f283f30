"""The settling bank as the gateway sees it: the SPI (payments) and the DICT (key directory).

One interface, so a real bank can replace the sandbox without touching services.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal, Protocol

from pixgate.provider.dict_keys import KeyHolder


@dataclass(frozen=True, slots=True)
class Instructions:
    """What one request asks of the provider beyond the operation itself (the sandbox's
    `X-Sandbox-Scenario`). Opaque to everything but the provider: services hand it to the
    provider where they call it, and keep `value` with a payout the provider settles later
    (`provider.instructions`, which only the provider reads back), so that no service,
    query or job depends on what a provider can be told."""

    value: str | None = None


NO_INSTRUCTIONS = Instructions()


@dataclass(frozen=True, slots=True)
class PaymentOrder:
    """An outgoing payment as the SPI receives it."""

    transaction_pk: int
    amount: int
    pix_key: str
    key_type: str
    document: str | None
    check_document: bool
    at: datetime
    name: str | None = None
    """The holder's name as the payer gave it (a cash-out's `details.name`): a bank that
    names no holder for the key (the sandbox's unregistered keys) shows this one."""


@dataclass(frozen=True, slots=True)
class PaymentResult:
    status: Literal["CONFIRMED", "ERROR"]
    end_to_end_id: str
    counterpart: KeyHolder | None
    error_code: str | None = None
    error_message: str | None = None


@dataclass(frozen=True, slots=True)
class ReturnOrder:
    """A received PIX returned to its payer (the SPI's pacs.004), in part or in full."""

    transaction_pk: int
    amount: int
    original_end_to_end_id: str
    return_id: str
    """The refund's own end-to-end id (`rtrId`, `D...`), chosen when it was requested."""
    natureza: str
    at: datetime


@dataclass(frozen=True, slots=True)
class ChargeRegistration:
    """A dynamic charge announced to the settling bank (cash-in, cob)."""

    amount: int | None
    expires_in: int
    instructions: Instructions
    extra: dict[str, str] = field(default_factory=dict)


class SettlingBank(Protocol):
    async def lookup_key(self, key: str, key_type: str) -> KeyHolder | None:
        """The DICT entry of a key, or None if the key is not registered."""

    def refuse_payment(self, instructions: Instructions) -> None:
        """Raise what the bank answers at once to a payment so instructed, if anything.
        Called once the request's own checks have passed, maybe inside the transaction
        that would accept the payment (which then writes nothing): never does I/O."""

    def refuse_return(self, instructions: Instructions) -> None:
        """`refuse_payment` for a return of a received PIX (a refund)."""

    def settlement_delay(self, instructions: Instructions) -> timedelta:
        """How long after acceptance a payment or return so instructed is settled."""

    async def pay(self, order: PaymentOrder) -> PaymentResult:
        """Settle an outgoing payment through the SPI, as the instructions kept with it
        (`order.transaction_pk`) ask."""

    async def refund(self, order: ReturnOrder) -> PaymentResult:
        """Settle a return of a received PIX through the SPI, as the instructions kept with
        it ask."""

    async def register_charge(self, charge: ChargeRegistration) -> None:
        """Announce a charge; raises ProviderUnavailable or ProviderExpirationBelowMinimum."""
