"""`X-Sandbox-Scenario`: how the sandbox settling bank should behave for one request.

Synchronous scenarios answer as the real error would, before anything is written;
asynchronous ones end the transaction in ERROR with that errorCode at settlement.
`WEBHOOK_DELAY` holds the final state (and so its webhook) back by five seconds;
`DELAY_<n>MS` sets the settlement delay of that one operation.
"""

from __future__ import annotations

import re

from pixgate.core.errors import SandboxScenarioUnknown

SYNCHRONOUS = frozenset({"INSUFFICIENT_FUNDS", "INVALID_PIX_KEY", "PROVIDER_UNAVAILABLE"})
SETTLEMENT_ERRORS: dict[str, str] = {
    "TAX_ID_MISMATCH": "details.document differs from the PIX key holder's",
    "INVALID_TAX_ID": "the document fails the CPF/CNPJ check",
    "BLOCKED_ACCOUNT": "the destination account is judicially blocked",
    "ACCOUNT_CLOSED": "the destination account is closed",
    "ORDER_REJECTED": "the destination bank rejected the order",
    "PAYMENT_EXPIRED": "the payment expired before processing",
    "SETTLEMENT_TIMEOUT": "the destination bank did not answer in time",
}
WEBHOOK_DELAY_MS = 5000
MAX_DELAY_MS = 600_000
_DELAY = re.compile(r"^DELAY_(\d{1,6})MS$")
NAMED = (*sorted(SYNCHRONOUS), *SETTLEMENT_ERRORS, "WEBHOOK_DELAY")
ALLOWED = (*NAMED, "DELAY_<n>MS")
DELAY_PATTERN = r"^DELAY_([0-9]{1,5}|[0-5][0-9]{5}|600000)MS$"
"""`DELAY_<n>MS` for n up to MAX_DELAY_MS, as a JSON Schema (ECMA 262) pattern."""


def parse(value: str | None) -> str | None:
    """The canonical (upper-case) scenario, None without the header, or SandboxScenarioUnknown
    listing the allowed ones. An empty header is refused like any other unknown value: read
    as absent, it would settle normally a request that asked for a scenario."""
    if value is None:
        return None
    scenario = value.strip().upper()
    if scenario in SYNCHRONOUS or scenario in SETTLEMENT_ERRORS or scenario == "WEBHOOK_DELAY":
        return scenario
    match = _DELAY.match(scenario)
    if match and int(match.group(1)) <= MAX_DELAY_MS:
        return scenario
    given = f"unknown X-Sandbox-Scenario {value!r}" if scenario else "X-Sandbox-Scenario is empty"
    raise SandboxScenarioUnknown(
        f"{given}; allowed: {', '.join(ALLOWED)}", details={"allowed": list(ALLOWED)}
    )


def settlement_delay_ms(scenario: str | None, default_ms: int) -> int:
    """How long the settling bank takes for this operation."""
    if scenario == "WEBHOOK_DELAY":
        return WEBHOOK_DELAY_MS
    match = _DELAY.match(scenario or "")
    return int(match.group(1)) if match else default_ms
