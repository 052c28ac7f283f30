"""OAuth 2.0 scopes: the Central Bank's names (API Pix 2.9.0, `securitySchemes.OAuth2`).

A token carries the scopes it was granted (RFC 6749 section 3.3): the ones its request asked
for, or every scope when it asked for none, as the spec's JSON token requests do. Each
operation names the one scope it needs; a token without it is answered 403.
"""

from __future__ import annotations

from enum import StrEnum


class Scope(StrEnum):
    COB_WRITE = "cob.write"
    COB_READ = "cob.read"
    COBR_WRITE = "cobr.write"
    COBR_READ = "cobr.read"
    REC_WRITE = "rec.write"
    REC_READ = "rec.read"
    SOLICREC_WRITE = "solicrec.write"
    SOLICREC_READ = "solicrec.read"
    COBV_WRITE = "cobv.write"
    COBV_READ = "cobv.read"
    LOTECOBV_WRITE = "lotecobv.write"
    LOTECOBV_READ = "lotecobv.read"
    PIX_WRITE = "pix.write"
    PIX_READ = "pix.read"
    WEBHOOK_READ = "webhook.read"
    WEBHOOK_WRITE = "webhook.write"
    WEBHOOKREC_READ = "webhookrec.read"
    WEBHOOKREC_WRITE = "webhookrec.write"
    WEBHOOKCOBR_READ = "webhookcobr.read"
    WEBHOOKCOBR_WRITE = "webhookcobr.write"
    PAYLOADLOCATION_WRITE = "payloadlocation.write"
    PAYLOADLOCATION_READ = "payloadlocation.read"
    PAYLOADLOCATIONREC_WRITE = "payloadlocationrec.write"
    PAYLOADLOCATIONREC_READ = "payloadlocationrec.read"


ALL_SCOPES = frozenset(Scope)


class UnknownScope(ValueError):
    """A requested scope this gateway does not define (RFC 6749: `invalid_scope`)."""


def granted(requested: str | None) -> frozenset[Scope]:
    """The scopes a token request gets: what it asked for (space-separated, RFC 6749 section
    3.3), or every scope when it asked for none; an unknown name refuses the whole request."""
    if requested is None or not requested.strip():
        return ALL_SCOPES
    asked = requested.split()
    unknown = [name for name in asked if name not in ALL_SCOPES]
    if unknown:
        raise UnknownScope(f"unknown scope: {' '.join(unknown)}")
    return frozenset(Scope(name) for name in asked)


def as_text(scopes: frozenset[Scope]) -> str:
    """The `scope` member of a token answer and claim: sorted, so equal grants read alike."""
    return " ".join(sorted(scopes))


def of_claim(claim: object) -> frozenset[Scope]:
    """The scopes of a verified token's `scope` claim; a token issued without one holds every
    scope (such a token could do everything when it was issued)."""
    if claim is None:
        return ALL_SCOPES
    if not isinstance(claim, str):
        raise ValueError("scope claim is not a string")
    return frozenset(Scope(name) for name in claim.split() if name in ALL_SCOPES)
