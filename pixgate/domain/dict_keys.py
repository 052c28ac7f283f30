"""What the DICT (the Central Bank's directory of PIX keys) answers about a key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True, slots=True)
class KeyHolder:
    """What the DICT knows of a PIX key's owner and account."""

    key: str
    key_type: str
    name: str
    document: str
    ispb: str
    bank_name: str
    bank_code: str
    branch: str
    account_number: str
    status: Literal["ACTIVE", "BLOCKED", "CLOSED"] = "ACTIVE"

    def counterpart(self) -> dict[str, Any]:
        """The counterpart as every transaction stores it (document unmasked: lists and
        webhooks mask it on output)."""
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
