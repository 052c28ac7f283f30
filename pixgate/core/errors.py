"""Every error the gateway can answer, one class per spec code.

Services raise these; `pixgate.core.http.errors` renders them in the envelope of the
route's family. `code` is the machine-readable value integrators branch on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar


class PixgateError(Exception):
    code: ClassVar[str] = "INTERNAL_ERROR"
    status: ClassVar[int] = 500
    user_message: ClassVar[str] = "Something went wrong. Please try again."
    business: ClassVar[bool] = True
    """Business errors carry `errorCode` (equal to `code`) in the general envelope."""

    def __init__(
        self,
        message: str | Sequence[str] | None = None,
        *,
        details: dict[str, Any] | None = None,
    ) -> None:
        self.per_field = message is not None and not isinstance(message, str)
        """Built from per-field lines (`field: reason`): the answer lists them."""
        self.messages: list[str] = (
            [self.user_message]
            if message is None
            else [message]
            if isinstance(message, str)
            else list(message)
        )
        """What went wrong, always a list: one sentence, or one line per field."""
        self.details = details
        super().__init__(self.text)

    @property
    def text(self) -> str:
        """The messages as one line, for logs and plain-text answers."""
        return "; ".join(self.messages)

    def headers(self) -> dict[str, str] | None:
        """HTTP headers the answer must carry (RFC 6750's challenge, RFC 9110's Retry-After)."""
        return None


class FamilyAnswer(PixgateError):
    """A route family's own code for a domain error a service raises: the route answers it
    (`core.http.errors.answering`), services never raise it."""


# --- generic -----------------------------------------------------------------------------


class ValidationFailed(PixgateError):
    code, status = "HTTP_ERROR", 400
    user_message = "Some fields are invalid."
    business = False


class NotFound(PixgateError):
    code, status = "NOT_FOUND", 404
    user_message = "Resource not found."
    business = False


class Conflict(PixgateError):
    code, status = "CONFLICT", 409
    user_message = "The resource already exists."
    business = False


class Gone(PixgateError):
    code, status = "GONE", 410
    user_message = "This resource is no longer available."
    business = False


class Unauthorized(PixgateError):
    code, status = "UNAUTHORIZED", 401
    user_message = "Authentication required."
    business = False

    def headers(self) -> dict[str, str] | None:
        return {"WWW-Authenticate": "Bearer"}


class Forbidden(PixgateError):
    """An authenticated caller without the right to the operation (a token's scopes)."""

    code, status = "FORBIDDEN", 403
    user_message = "This credential may not do that."
    business = False


class RateLimited(PixgateError):
    """Always says when to come back: clients and proxies honour `Retry-After`."""

    code, status = "RATE_LIMITED", 429
    user_message = "Too many requests. Try again later."
    business = False

    def __init__(self, message: str, *, retry_after: int) -> None:
        super().__init__(message, details={"retryAfter": retry_after})
        self.retry_after = max(1, retry_after)

    def headers(self) -> dict[str, str] | None:
        return {"Retry-After": str(self.retry_after)}


class TryAgain(PixgateError):
    """A transient race lost (the account changed while the request was priced): nothing was
    written, and the same request sent again will go through."""

    code, status = "TRY_AGAIN", 503
    user_message = "The request met a concurrent change. Please send it again."
    business = False

    def headers(self) -> dict[str, str] | None:
        return {"Retry-After": "1"}


class DatabaseUnavailable(PixgateError):
    """The database cannot be reached (stopped, restarting, out of connections). Whether a
    write that met it was committed is unknown, so the answer says to send the same request
    again: every write is idempotent by its key (an externalId, an idempotency key, a txid)."""

    code, status = "SERVICE_UNAVAILABLE", 503
    user_message = "The service is temporarily unavailable. Please send the request again."
    business = False
    retry_after: ClassVar[int] = 2
    """Seconds a client waits before sending the request again (RFC 9110's Retry-After)."""

    def headers(self) -> dict[str, str] | None:
        return {"Retry-After": str(self.retry_after)}


class UnsupportedMediaType(PixgateError):
    code, status = "UNSUPPORTED_MEDIA_TYPE", 415
    user_message = "Send the body as application/json."
    business = False


class ProviderUnavailable(PixgateError):
    code, status = "PROVIDER_UNAVAILABLE", 500
    user_message = "The payment provider could not be reached. Please retry."


class ProviderExpirationBelowMinimum(PixgateError):
    code, status = "PROVIDER_EXPIRATION_BELOW_MINIMUM", 400
    user_message = "The expiration time is below the provider's minimum."


class SandboxScenarioUnknown(PixgateError):
    code, status = "SANDBOX_SCENARIO_UNKNOWN", 400
    user_message = "Unknown X-Sandbox-Scenario value."


# --- token endpoint ----------------------------------------------------------------------


class CertHeaderMissing(PixgateError):
    code, status = "PUB_CERT_HEADER_MISSING", 400
    user_message = "The client certificate was not presented."


class CertMalformedPem(PixgateError):
    code, status = "PUB_CERT_MALFORMED_PEM", 400
    user_message = "The client certificate could not be read."


class RequestBodyInvalid(PixgateError):
    code, status = "PUB_REQUEST_BODY_INVALID", 400
    user_message = "The request body is invalid."


class CertNotYetValid(PixgateError):
    code, status = "PUB_CERT_NOT_YET_VALID", 401
    user_message = "The client certificate is not valid yet."


class CertExpired(PixgateError):
    code, status = "PUB_CERT_EXPIRED", 401
    user_message = "The client certificate has expired."


class CertNotRegistered(PixgateError):
    code, status = "PUB_CERT_NOT_REGISTERED", 401
    user_message = "The client certificate is not registered."


class InvalidCredentials(PixgateError):
    code, status = "PUB_INVALID_CREDENTIALS", 401
    user_message = "Invalid client credentials."


class CertNotAuthorizedForAccount(PixgateError):
    code, status = "PUB_CERT_NOT_AUTHORIZED_FOR_ACCOUNT", 403
    user_message = "The client certificate does not belong to this account."


class AuthUpstreamUnavailable(PixgateError):
    """What the token endpoint answers when the credentials cannot be checked (the database
    cannot be reached)."""

    code, status = "PUB_AUTH_UPSTREAM_UNAVAILABLE", 503
    user_message = "Authentication is temporarily unavailable. Retry with backoff."

    def headers(self) -> dict[str, str] | None:
        return {"Retry-After": str(DatabaseUnavailable.retry_after)}


# --- cash-out ----------------------------------------------------------------------------


class InsufficientBalance(PixgateError):
    code, status = "PIX_INSUFFICIENT_BALANCE", 400
    user_message = "Insufficient balance for this operation."


class TransactionLimitExceeded(PixgateError):
    code, status = "PIX_TRANSACTION_LIMIT_EXCEEDED", 400
    user_message = "The amount is above the per-transaction limit."


class DailyLimitExceeded(PixgateError):
    code, status = "PIX_DAILY_LIMIT_EXCEEDED", 400
    user_message = "The daily limit has been reached."


class NightLimitExceeded(PixgateError):
    code, status = "PIX_NIGHT_LIMIT_EXCEEDED", 400
    user_message = "The nighttime limit (20:00 to 06:00) has been reached."


class InvalidAmount(PixgateError, ValueError):
    """Not a finite amount with at most two decimal places, or shares that do not fit.

    `core.money` raises it with the reason (`str(exc)`); callers that answer with another
    code or a field error (`ValidationFailed`) catch it, and a pydantic validator turns it
    into a validation error like any `ValueError`. Uncaught, it answers PIX_INVALID_AMOUNT.
    """

    code, status = "PIX_INVALID_AMOUNT", 400
    user_message = "The amount must be at least 0.01 with at most 2 decimal places."


class TotalOutOfRange(PixgateError):
    """A sum the gateway keeps (a balance, a day's outgoing total) would pass 92233720368547758.07,
    the most its database can store: the operation is refused and nothing is written."""

    code, status = "TOTAL_OUT_OF_RANGE", 400
    user_message = "This operation would take a balance or a total past what can be kept."


class InvalidPixKey(PixgateError):
    code, status = "PIX_INVALID_PIX_KEY", 400
    user_message = "The PIX key does not match its key type."


class DuplicateExternalId(PixgateError):
    code, status = "PIX_DUPLICATE_EXTERNAL_ID", 400
    user_message = "This externalId was already used."


# --- webhooks ----------------------------------------------------------------------------


class InvalidWebhookConfig(PixgateError):
    code, status = "WEBHOOK_INVALID_CONFIGURATION", 400
    user_message = "The webhook configuration is invalid."
    business = False


class UnsafeWebhookDestination(PixgateError):
    code, status = "WEBHOOK_UNSAFE_DESTINATION", 400
    user_message = "Webhook URLs must be public HTTPS addresses."
    business = False


class WebhookLimitReached(PixgateError):
    code, status = "WEBHOOK_LIMIT_REACHED", 400
    user_message = "An event type holds at most 3 active webhook URLs."
    business = False


class NoWebhookDestination(PixgateError):
    code, status = "WEBHOOK_NO_DESTINATION", 400
    user_message = "No URL was given and no webhook is configured for this event type."
    business = False


# --- DICT transfer (simple body; refusals of the request's content are 422) --------------


class DictKeyNotFound(PixgateError):
    code, status = "DICT_KEY_NOT_FOUND", 422
    user_message = "The PIX key is not registered in the DICT."
    business = False


class IspbDenied(PixgateError):
    code, status = "DICT_ISPB_DENIED", 422
    user_message = "The key's institution is in ispbDeny."
    business = False


class DictTransferInsufficientBalance(FamilyAnswer):
    """The DICT transfer route's answer to InsufficientBalance."""

    code, status = "DICT_INSUFFICIENT_BALANCE", 422
    user_message = "Insufficient balance for this transfer."
    business = False


class IdempotencyKeyReused(PixgateError):
    """The IETF Idempotency-Key draft's answer to a key reused with another payload."""

    code, status = "IDEMPOTENCY_KEY_REUSED", 422
    user_message = "This idempotency key was already used with a different request."
    business = False


# --- cash-in, charges, QR cash-out and the sandbox ---------------------------------------


class ChargeNotPayable(PixgateError):
    """The charge was paid, cancelled or expired already; nothing moved."""

    code, status = "PIX_CHARGE_NOT_PAYABLE", 409
    user_message = "This charge can no longer be paid."


class ChargePayloadGone(FamilyAnswer):
    """The API Pix's payload path answers a charge no longer payable as one it does not
    serve (its `CobPayloadNaoEncontrado`, a 404: the only one its operation declares)."""

    code, status = "COB_PAYLOAD_NOT_FOUND", 404
    user_message = "The charge is no longer served at this location."
    business = False


class ChargeNotFound(PixgateError):
    code, status = "PIX_CHARGE_NOT_FOUND", 422
    user_message = "This code does not point to a charge of this gateway."
    business = False


class InvalidQrCode(PixgateError):
    code, status = "PIX_INVALID_QR_CODE", 400
    user_message = "The QR code is invalid."


class QrCodeAmountMismatch(PixgateError):
    code, status = "PIX_QR_CODE_AMOUNT_MISMATCH", 400
    user_message = "The value differs from the amount in the QR code."


class OwnChargePayment(PixgateError):
    code, status = "PIX_OWN_CHARGE", 400
    user_message = "An account cannot pay its own charge."


class OwnKeyPayment(PixgateError):
    code, status = "PIX_OWN_KEY", 400
    user_message = "An account cannot pay its own PIX key."


class ExternalIdConflict(FamilyAnswer, DuplicateExternalId):
    """The QR cash-out route's answer to DuplicateExternalId: 409 (cash-out answers 400)."""

    status = 409


# --- refunds -----------------------------------------------------------------------------


class RefundAmountExceeded(PixgateError):
    """The refunds of the PIX (PENDING and CONFIRMED, this one included) would pass its amount."""

    code, status = "REFUND_AMOUNT_EXCEEDED", 400
    user_message = "The amount is above what is left to refund of this transaction."


class RefundDeadlineExceeded(PixgateError):
    code, status = "REFUND_DEADLINE_EXCEEDED", 400
    user_message = "The refund window of this transaction has closed."


class DevolucaoDeadlineExceeded(RefundDeadlineExceeded):
    """The Central-Bank-style refund answers a closed window with 422, refund-in 400."""

    status = 422


class DevolucaoInsufficientBalance(InsufficientBalance):
    """The Central-Bank-style refund answers a short balance with 422, as POST /dict/pix does;
    refund-in answers 400, as cash-out does."""

    status = 422


class RefundIdReused(PixgateError):
    """A devolucao `id` repeated for the same PIX with another valor, natureza or descricao."""

    code, status = "REFUND_ID_REUSED", 400
    user_message = "This refund id was already used with a different request."
    business = False
