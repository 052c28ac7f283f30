"""The sandbox settling bank: a deterministic SPI and DICT, steered by `X-Sandbox-Scenario`.

The scenario reaches it as the request's provider instructions (`Instructions.value`, the
canonical scenario of `sandbox.rules`): given at once where the request calls the
provider (the synchronous refusals, a charge's registration, the settlement delay), and
read back from `provider.instructions` when a payout or refund is settled. This is the
only module that acts on a scenario.

Our accounts' keys (`account_keys`) resolve to their account's holder at our ISPB; other
registered keys come from `sandbox_dict_keys`. For cash-out, a key nobody registered
resolves to a synthetic holder: its bank, branch and account derived from a hash of the
key, so the same key always reaches the same account; its name and document are the ones
the payer states (`details.name`, `details.document`), so plain sandbox payments confirm
and the statement shows whom the integrator meant to pay (register the key to exercise
TAX_ID_MISMATCH without the scenario header).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from datetime import timedelta

from pixgate.core.counterparts import house_holder
from pixgate.core.db.pool import Database
from pixgate.core.errors import (
    InsufficientBalance,
    InvalidPixKey,
    PixgateError,
    ProviderExpirationBelowMinimum,
    ProviderUnavailable,
    ValidationFailed,
)
from pixgate.core.ids import new_end_to_end_id
from pixgate.core.pix.documents import is_valid_document, make_cpf, only_document_chars
from pixgate.core.settings import Settings
from pixgate.provider import instructions as provider_instructions
from pixgate.provider.base import (
    ChargeRegistration,
    Instructions,
    PaymentOrder,
    PaymentResult,
    ReturnOrder,
)
from pixgate.provider.dict_keys import KeyHolder
from pixgate.sandbox import queries as sandbox_dict
from pixgate.sandbox import rules as scenarios

_BANKS = (
    ("60701190", "Banco Sandbox Itaperuna S.A.", "341"),
    ("00360305", "Caixa Sandbox S.A.", "104"),
    ("90400888", "Banco Sandbox Santista S.A.", "033"),
    ("18236120", "Sandbox Pagamentos S.A.", "260"),
)
_NAMES = ("Ana Souza", "Bruno Lima", "Carla Dias", "Diego Alves", "Elisa Rocha", "Fabio Nunes")


class SandboxBank:
    def __init__(self, settings: Settings, db: Database) -> None:
        self.settings = settings
        self.db = db

    async def lookup_key(self, key: str, key_type: str) -> KeyHolder | None:
        entry = await sandbox_dict.get(self.db, key)
        return None if entry is None else self._resolve(entry)

    def _resolve(self, entry: sandbox_dict.DictEntry) -> KeyHolder | None:
        """The holder the DICT names: our account's for one of our keys, else the
        registered one (None: nobody registered the key)."""
        house = entry.house
        if house is None:
            return entry.holder
        return house_holder(
            house.key,
            house.key_type,
            account_id=house.account_id,
            name=house.name,
            document=house.document,
            ispb=self.settings.ispb,
        )

    def refuse_payment(self, instructions: Instructions) -> None:
        """The synchronous scenarios answer as the real error would."""
        _refuse(_PAYMENT_REFUSALS, instructions)

    def refuse_return(self, instructions: Instructions) -> None:
        """As `refuse_payment`, in a refund's words; a refund has no PIX key to refuse."""
        _refuse(_RETURN_REFUSALS, instructions)

    def settlement_delay(self, instructions: Instructions) -> timedelta:
        """`PIXGATE_SETTLEMENT_DELAY_MS`, unless the scenario sets another."""
        return timedelta(
            milliseconds=scenarios.settlement_delay_ms(
                instructions.value, self.settings.settlement_delay_ms
            )
        )

    async def pay(self, order: PaymentOrder) -> PaymentResult:
        view = await sandbox_dict.payment_view(self.db, order.pix_key, order.transaction_pk)
        holder = self._resolve(view.entry) or synthetic_holder(
            order.pix_key, order.key_type, order.document, name=order.name
        )
        e2e = new_end_to_end_id(self.settings.ispb, order.at)
        error = _settlement_error(order, holder, view.instructions)
        if error is not None:
            return PaymentResult(
                status="ERROR",
                end_to_end_id=e2e,
                counterpart=holder,
                error_code=error,
                error_message=scenarios.SETTLEMENT_ERRORS[error],
            )
        return PaymentResult(status="CONFIRMED", end_to_end_id=e2e, counterpart=holder)

    async def refund(self, order: ReturnOrder) -> PaymentResult:
        """A return settles unless its request asked for a settlement error (the scenario
        kept with it); the payer it reaches is the original's, already recorded."""
        scenario = await provider_instructions.get(self.db, order.transaction_pk)
        if scenario in scenarios.SETTLEMENT_ERRORS:
            return PaymentResult(
                status="ERROR",
                end_to_end_id=order.return_id,
                counterpart=None,
                error_code=scenario,
                error_message=scenarios.SETTLEMENT_ERRORS[scenario],
            )
        return PaymentResult(status="CONFIRMED", end_to_end_id=order.return_id, counterpart=None)

    async def register_charge(self, charge: ChargeRegistration) -> None:
        """The minimum expiration is a rule of the request: a charge it refuses is refused
        whatever the scenario, which answers only for a charge the bank would take."""
        minimum = self.settings.provider_min_expiration
        if charge.expires_in < minimum:
            raise ProviderExpirationBelowMinimum(
                [f"transaction.expirationTime must be at least {minimum} seconds for this provider"]
            )
        if charge.instructions.value == "PROVIDER_UNAVAILABLE":
            raise ProviderUnavailable("the payment provider could not be reached")


_PAYMENT_REFUSALS: dict[str, Callable[[], PixgateError]] = {
    "INSUFFICIENT_FUNDS": lambda: InsufficientBalance(
        "available balance is less than amount + fee (sandbox)"
    ),
    "INVALID_PIX_KEY": lambda: InvalidPixKey(
        "the PIX key was refused by the settling bank (sandbox)"
    ),
    "PROVIDER_UNAVAILABLE": lambda: ProviderUnavailable(
        "the settling bank could not be reached (sandbox)"
    ),
}
_RETURN_REFUSALS: dict[str, Callable[[], PixgateError]] = {
    "INSUFFICIENT_FUNDS": lambda: InsufficientBalance(
        "available balance is less than the refund (sandbox)"
    ),
    "INVALID_PIX_KEY": lambda: ValidationFailed(
        ["X-Sandbox-Scenario: INVALID_PIX_KEY does not apply to a refund"]
    ),
    "PROVIDER_UNAVAILABLE": _PAYMENT_REFUSALS["PROVIDER_UNAVAILABLE"],
}
"""The synchronous scenarios, by the operation they answer."""


def _refuse(refusals: dict[str, Callable[[], PixgateError]], instructions: Instructions) -> None:
    make = refusals.get(instructions.value or "")
    if make is not None:
        raise make()


def _settlement_error(order: PaymentOrder, holder: KeyHolder, scenario: str | None) -> str | None:
    """What the SPI answers: the scenario first, then the destination, then the document."""
    if scenario in scenarios.SETTLEMENT_ERRORS:
        return scenario
    if holder.status == "BLOCKED":
        return "BLOCKED_ACCOUNT"
    if holder.status == "CLOSED":
        return "ACCOUNT_CLOSED"
    if order.document is None:
        return None
    document = only_document_chars(order.document)
    if not is_valid_document(document):
        return "INVALID_TAX_ID"
    if document != only_document_chars(holder.document):
        return "TAX_ID_MISMATCH"
    return None


def synthetic_holder(
    key: str, key_type: str, document: str | None = None, *, name: str | None = None
) -> KeyHolder:
    """The same key always resolves to the same bank and account (and, when the payer
    states no name or document, the same holder): the first byte of the key's SHA-256
    picks the bank, the next eight make the branch, the account number and the CPF, the
    tenth picks the name."""
    digest = hashlib.sha256(key.encode()).digest()
    ispb, bank_name, bank_code = _BANKS[digest[0] % len(_BANKS)]
    number = int.from_bytes(digest[1:9], "big")
    return KeyHolder(
        key=key,
        key_type=key_type,
        name=name or _NAMES[digest[9] % len(_NAMES)],
        document=only_document_chars(document) if document else make_cpf(f"{number % 10**9:09d}"),
        ispb=ispb,
        bank_name=bank_name,
        bank_code=bank_code,
        branch=f"{number % 10000:04d}",
        account_number=f"{number % 10**8:08d}-{number % 10}",
    )
