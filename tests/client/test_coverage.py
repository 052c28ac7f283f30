"""The client has a method for every operation of the gateway's root API, read from the
OpenAPI document a real gateway serves: an operation added to the gateway fails this test
until the client offers it (or this file says why it does not)."""

from __future__ import annotations

import httpx

from pixgate.client import AsyncClient, Client
from pixgate.client.api import Operations, SandboxOperations, WebhookOperations

METHODS: dict[tuple[str, str], str] = {
    ("GET", "/accounts/balances"): "balances",
    ("GET", "/api/balance"): "balance",
    ("POST", "/api/pix/cash-out"): "cash_out",
    ("POST", "/api/pix/cash-out-qrcode"): "qr_cash_out",
    ("POST", "/dict/pix"): "dict_transfer",
    ("POST", "/api/pix/cash-in"): "cash_in",
    ("PUT", "/cob/{txid}"): "create_cob",
    ("GET", "/cob/{txid}"): "cob",
    ("PATCH", "/cob/{txid}"): "revise_cob",
    ("POST", "/api/pix/refund-in/{id}"): "refund",
    ("PUT", "/pix/{e2eid}/devolucao/{id}"): "devolucao",
    ("GET", "/pix/{e2eid}/devolucao/{id}"): "get_devolucao",
    ("GET", "/api/transactions"): "transactions",
    ("GET", "/api/pix/transactions/pix-key/{pixKey}"): "transactions_by_pix_key",
    ("GET", "/api/med"): "med",
    ("GET", "/api/events"): "events",
    ("GET", "/api/webhooks"): "webhooks.list",
    ("POST", "/api/webhooks"): "webhooks.register",
    ("POST", "/api/resend-webhook/{transactionIdentifier}"): "webhooks.resend",
    ("POST", "/sandbox/pix/pay"): "sandbox.pay",
    ("POST", "/sandbox/pix/incoming"): "sandbox.incoming",
    ("POST", "/sandbox/pix/{transactionId}/refund-out"): "sandbox.refund_out",
    ("POST", "/sandbox/med"): "sandbox.open_med",
    ("POST", "/sandbox/med/{id}/analysis"): "sandbox.analyse_med",
}
NOT_METHODS: dict[tuple[str, str], str] = {
    ("POST", "/api/auth/token"): "the client obtains its tokens itself",
    ("POST", "/oauth/token"): "the token endpoint's alias, for API Pix clients",
    ("POST", "/sandbox/dict/keys"): "the sandbox's own DICT directory, set up by hand",
    ("GET", "/loc/{token}"): "a charge's location, read by the payer's bank",
    ("GET", "/qr/v2/{token}"): "a charge's payload, read by the payer's bank",
    ("GET", "/.well-known/pix-jwks.json"): "the payload signer's keys, for payers' banks",
    ("GET", "/.well-known/jwks.json"): "the token signer's keys, for resource servers",
    ("GET", "/healthz"): "operations",
    ("GET", "/readyz"): "operations",
    ("GET", "/metrics"): "operations",
}
"""Root-level operations that are no integrator's call, each with its reason."""
API_PIX = "/api/v2/"
"""The Central Bank's API Pix, which any API Pix client speaks (docs/api-pix.md)."""


def test_every_operation_of_the_root_api_is_a_method(gateway: str) -> None:
    document = httpx.get(f"{gateway}/openapi.json").json()
    served = {
        (method.upper(), path)
        for path, operations in document["paths"].items()
        for method in operations
        if not path.startswith(API_PIX)
    }
    assert served == set(METHODS) | set(NOT_METHODS)


def test_every_method_is_declared_once_for_both_clients() -> None:
    """`Client` and `AsyncClient` take their methods from the same declarations."""
    assert issubclass(Client, Operations) and issubclass(AsyncClient, Operations)
    namespaces = {"": Operations, "webhooks.": WebhookOperations, "sandbox.": SandboxOperations}
    declared = {
        prefix + name
        for prefix, namespace in namespaces.items()
        for name in vars(namespace)
        if not name.startswith("_")
    }
    assert declared == set(METHODS.values())
