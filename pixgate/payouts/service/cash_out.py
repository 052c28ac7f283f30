"""POST /api/pix/cash-out: a PIX sent to a key, settled later by the settling bank.

The order is checked here; `payouts.service.outgoing.create_pending` then writes the PENDING row,
holds amount + fee, checks the limits and queues the settlement, in one statement. A key
one of our accounts holds is paid in the house instead (`payouts.service.in_house`).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

from pixgate.core.errors import InvalidAmount, InvalidPixKey, ValidationFailed
from pixgate.core.labels import TransactionKind
from pixgate.core.money import amount_cents
from pixgate.core.pix.documents import document_kind, only_document_chars
from pixgate.core.pix.keys import KeyType, is_valid_cash_out_key, key_form_error, normalize_key
from pixgate.payouts.service import in_house, outgoing
from pixgate.payouts.service.outgoing import CashOut
from pixgate.provider.base import NO_INSTRUCTIONS, Instructions
from pixgate.runtime import Runtime


@dataclass(frozen=True, slots=True)
class CashOutOrder:
    value: Decimal
    external_id: str
    key: str
    key_type: KeyType
    name: str
    document: str
    check_document: bool = False
    description: str | None = None


def amount_of(value: Decimal) -> int:
    """Cents of a payment value (`money.amount_cents`), else PIX_INVALID_AMOUNT."""
    try:
        return amount_cents(value)
    except InvalidAmount as exc:  # the rule's reason, under this route's field name
        raise InvalidAmount(f"value: {exc}") from exc


async def create(
    rt: Runtime,
    account_id: int,
    order: CashOutOrder,
    *,
    instructions: Instructions = NO_INSTRUCTIONS,
) -> CashOut:
    """The provider's synchronous refusals answer once the request's own checks have
    passed (an invalid request answers its own error, whatever it told the provider), and
    before a payment to one of our accounts' keys too, though it never reaches the bank."""
    amount = amount_of(order.value)
    if not is_valid_cash_out_key(order.key, order.key_type):
        raise InvalidPixKey(key_form_error("details.key", order.key_type))
    document = only_document_chars(order.document)
    if document_kind(document) is None:
        raise ValidationFailed(
            ["details.document must be a CPF (11 digits) or a CNPJ (14 characters)"]
        )
    rt.provider.refuse_payment(instructions)
    payout = outgoing.PendingPayout(
        kind=TransactionKind.CASH_OUT,
        external_id=order.external_id,
        amount=amount,
        pix_key=normalize_key(order.key, order.key_type),
        pix_key_type=order.key_type.value,
        description=order.description,
        details={
            "name": order.name,
            "document": document,
            "checkPixKeyWithDocument": order.check_document,
        },
    )
    return await in_house.create(
        rt, account_id, payout, instructions=instructions, document=document
    )
