"""The other side of a transaction: who paid us, or whom we paid.

A transaction stores its counterpart twice: as the JSON document the wire shows (name,
document, bank) and as typed columns that say where the money came from or went
(`counterpart_ispb`, and `counterpart_account_id` when the other side is one of our own
accounts). Every path that writes a counterpart builds a `Counterpart`, so the two never
disagree; an internal transfer is recognised by the account id alone, never by reading
the document's text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pixgate.provider.dict_keys import KeyHolder

BRANCH = "0001"
"""The branch our own accounts show as theirs."""
BANK_NAME = "Pixgate"
"""The bank name our own accounts show as theirs."""


def house_holder(
    key: str, key_type: str, *, account_id: int, name: str, document: str | None, ispb: str
) -> KeyHolder:
    """One of our accounts' keys as the DICT answers it: the account's holder at this
    gateway's ISPB (`ispb`), in the words `Counterpart.our_account` uses for the account."""
    return KeyHolder(
        key=key,
        key_type=key_type,
        name=name,
        document=document or "",
        ispb=ispb,
        bank_name=BANK_NAME,
        bank_code="",
        branch=BRANCH,
        account_number=str(account_id),
    )


@dataclass(frozen=True, slots=True)
class Counterpart:
    """A counterpart's name, document and bank account; `account_id` is our account's id
    when the other side banks with this gateway (an internal transfer), else None."""

    name: str
    document: str
    ispb: str
    bank_name: str
    bank_code: str
    branch: str
    account_number: str
    account_id: int | None = None

    @classmethod
    def at_another_bank(cls, holder: KeyHolder, *, name: str | None = None) -> Counterpart:
        """The owner of a key the DICT answered for (`name` replaces the holder's): the
        money leaves or enters the house through the settling bank."""
        return cls(
            name=holder.name if name is None else name,
            document=holder.document,
            ispb=holder.ispb,
            bank_name=holder.bank_name,
            bank_code=holder.bank_code,
            branch=holder.branch,
            account_number=holder.account_number,
        )

    @classmethod
    def our_account(
        cls, account_id: int, *, name: str, document: str, ispb: str, bank_name: str
    ) -> Counterpart:
        """One of our accounts (`ispb` and `bank_name` are this gateway's): the other side
        of an internal transfer, whose account number is its id."""
        return cls(
            name=name,
            document=document,
            ispb=ispb,
            bank_name=bank_name,
            bank_code="",
            branch=BRANCH,
            account_number=str(account_id),
            account_id=account_id,
        )

    def document_json(self) -> dict[str, Any]:
        """The counterpart as the `counterpart` column stores it (document unmasked: lists
        and webhooks mask it on output)."""
        return {
            "name": self.name,
            "document": self.document,
            "bank": {
                "bankISPB": self.ispb,
                "bankName": self.bank_name,
                "bankCode": self.bank_code,
                "accountBranch": self.branch,
                "accountNumber": self.account_number,
            },
        }
