"""What both clients are built with, checked once, and the httpx options it makes."""

from __future__ import annotations

import ssl
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypedDict

from pixgate.client.auth import CERT_HEADER, RENEW_BEFORE, escaped_cert, tls_context
from pixgate.client.retry import RetryPolicy

USER_AGENT = "pixgate-client/0.1.0"


@dataclass(frozen=True)
class Connection:
    """`cert` (certificate file, key file) presents the client certificate in the TLS
    handshake (the gateway's TLS front passes it on); `cert_header_pem` sends the PEM in
    `X-SSL-Client-Cert` as that front would, where none stands (local development)."""

    base_url: str
    client_id: str
    client_secret: str
    cert: tuple[str, str] | None = None
    cert_header_pem: str | None = None
    verify: bool | str | ssl.SSLContext = True
    timeout: float = 30.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    renew_before: float = RENEW_BEFORE
    event_hooks: Mapping[str, Sequence[Callable[..., Any]]] | None = None

    def __post_init__(self) -> None:
        if (self.cert is None) == (self.cert_header_pem is None):
            raise ValueError("give one of cert=(cert_file, key_file) or cert_header_pem=")

    def httpx_options(self) -> dict[str, Any]:
        headers = {"User-Agent": USER_AGENT}
        if self.cert_header_pem is not None:
            headers[CERT_HEADER] = escaped_cert(self.cert_header_pem)
        verify = self.verify if self.cert is None else tls_context(self.cert, self.verify)
        return {
            "base_url": self.base_url,
            "headers": headers,
            "verify": verify,
            "timeout": self.timeout,
            "event_hooks": dict(self.event_hooks or {}),
        }


class Options(TypedDict, total=False):
    """The keyword arguments of `Client` and `AsyncClient`, as `Connection` names them."""

    cert: tuple[str, str]
    cert_header_pem: str
    verify: bool | str | ssl.SSLContext
    timeout: float
    retry: RetryPolicy
    renew_before: float
    event_hooks: Mapping[str, Sequence[Callable[..., Any]]]
