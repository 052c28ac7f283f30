"""The settling bank as the gateway sees it: the SPI (payments) and the DICT (key directory).

One interface, so a real bank can replace the sandbox without touching services.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal, Protocol

from pixgate.domain.dict_keys import KeyHolder


@dataclass(frozen=True, slots=True)
class PaymentOrder:
    """An outgoing payment as the SPI receives it."""

    transaction_pk: int
    amount: int
    pix_key: str
    key_type: str
    document: str | None
    check_document: bool
    scenario: str | None
    at: datetime


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
    scenario: str | None
    at: datetime


@dataclass(frozen=True, slots=True)
class ChargeRegistration:
    """A dynamic charge announced to the settling bank (cash-in, cob)."""

    amount: int | None
    expires_in: int
    scenario: str | None
    extra: dict[str, str] = field(default_factory=dict)


class SettlingBank(Protocol):
    async def lookup_key(self, key: str, key_type: str) -> KeyHolder | None:
        """The DICT entry of a key, or None if the key is not registered."""

    async def pay(self, order: PaymentOrder) -> PaymentResult:
        """Settle an outgoing payment through the SPI."""

    async def refund(self, order: ReturnOrder) -> PaymentResult:
        """Settle a return of a received PIX through the SPI."""

    async def register_charge(self, charge: ChargeRegistration) -> None:
        """Announce a charge; raises ProviderUnavailable or ProviderExpirationBelowMinimum."""
