"""Pure webhook rules: signatures, destinations, headers, retry schedule, payload shapes."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest

from pixgate.core.errors import InvalidWebhookConfig, UnsafeWebhookDestination
from pixgate.webhooks import schemas, verify_signature
from pixgate.webhooks.rules import webhooks as rules
from tests.webhooks import refused_config as refused

# The Standard Webhooks reference vector (standard-webhooks spec test suite).
VECTOR_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
VECTOR_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
VECTOR_TS = 1614265330
VECTOR_BODY = b'{"test": 2432232314}'
VECTOR_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="


def _headers(signature: str, ts: int = VECTOR_TS) -> dict[str, str]:
    return {"webhook-id": VECTOR_ID, "webhook-timestamp": str(ts), "webhook-signature": signature}


class TestSigning:
    def test_matches_the_standard_webhooks_vector(self) -> None:
        assert rules.sign(VECTOR_SECRET, VECTOR_ID, VECTOR_TS, VECTOR_BODY) == VECTOR_SIGNATURE

    def test_verify_accepts_the_vector_within_tolerance(self) -> None:
        assert verify_signature(
            VECTOR_SECRET, _headers(VECTOR_SIGNATURE), VECTOR_BODY, now=VECTOR_TS + 10
        )

    def test_verify_refuses_tampering_old_messages_and_other_secrets(self) -> None:
        good = _headers(VECTOR_SIGNATURE)
        assert not verify_signature(VECTOR_SECRET, good, VECTOR_BODY + b" ", now=VECTOR_TS)
        assert not verify_signature(VECTOR_SECRET, good, VECTOR_BODY, now=VECTOR_TS + 301)
        assert not verify_signature(rules.new_secret(), good, VECTOR_BODY, now=VECTOR_TS)
        assert not verify_signature(VECTOR_SECRET, {}, VECTOR_BODY, now=VECTOR_TS)
        assert not verify_signature("whsec_%%%", good, VECTOR_BODY, now=VECTOR_TS)

    def test_any_of_several_signatures_verifies_during_rotation(self) -> None:
        other = rules.new_secret()
        header = rules.signature_header([other, VECTOR_SECRET], VECTOR_ID, VECTOR_TS, VECTOR_BODY)
        assert len(header.split(" ")) == 2
        assert verify_signature(VECTOR_SECRET, _headers(header), VECTOR_BODY, now=VECTOR_TS)
        assert verify_signature(other, _headers(header), VECTOR_BODY, now=VECTOR_TS)

    def test_new_secret_format(self) -> None:
        secret = rules.new_secret()
        assert secret.startswith("whsec_")
        assert len(rules.secret_key(secret)) >= 24


class TestConfiguration:
    def test_headers_rules(self) -> None:
        assert rules.check_headers([("X-Token", "abc")]) == {"X-Token": "abc"}
        with pytest.raises(InvalidWebhookConfig, match="at most 5"):
            rules.check_headers([(f"X-{i}", "v") for i in range(6)])
        for blocked in (
            "Host",
            "content-length",
            "Connection",
            "Transfer-Encoding",
            "Content-Type",
            "User-Agent",
            "webhook-signature",
        ):
            with pytest.raises(InvalidWebhookConfig, match="cannot be set"):
                rules.check_headers([(blocked, "x")])
        with pytest.raises(InvalidWebhookConfig):
            rules.check_headers([("X-A", "line\r\nInjected: 1")])
        with pytest.raises(InvalidWebhookConfig, match="header name"):
            rules.check_headers([("X-A\n", "1")])  # `$` of a plain match took the newline
        for name, value in refused.HEADER_NAMES.items():
            with pytest.raises(InvalidWebhookConfig, match="header name"):
                rules.check_headers([(value, "1")])
            assert not rules.is_header_name(value), name
        for value in refused.HEADER_VALUES.values():
            with pytest.raises(InvalidWebhookConfig, match="printable ASCII"):
                rules.check_headers([("X-A", value)])
        allowed = {
            "X-A": "Bearer a.b-c_d~e+f/g=",
            "X-B": "",
            "X-C": "x" * 1024,
            "!#$%&'*+.^_`|~": "1",
        }
        assert rules.check_headers(list(allowed.items())) == allowed
        with pytest.raises(InvalidWebhookConfig, match="twice"):
            rules.check_headers([("X-A", "1"), ("x-a", "2")])

    def test_event_type_and_version(self) -> None:
        with pytest.raises(InvalidWebhookConfig):
            rules.check_event_type("cash_out_done")
        with pytest.raises(InvalidWebhookConfig):
            rules.check_version("v3", "cash_out")
        with pytest.raises(InvalidWebhookConfig, match="no payload"):
            rules.check_version("v2", "med_created")
        assert rules.check_version("v2", "cash_in") == "v2"


class TestDestinations:
    def test_https_only_unless_insecure(self) -> None:
        with pytest.raises(UnsafeWebhookDestination, match="HTTPS"):
            rules.parse_destination("http://example.com/h", allow_insecure=False)
        assert rules.parse_destination("http://example.com/h", allow_insecure=True).port == 80
        assert rules.parse_destination("https://example.com/h", allow_insecure=False).port == 443
        with pytest.raises(UnsafeWebhookDestination):
            rules.parse_destination("ftp://example.com", allow_insecure=True)
        with pytest.raises(InvalidWebhookConfig, match="credentials"):
            rules.parse_destination("https://u:p@example.com", allow_insecure=False)

    def test_spaces_and_invisible_characters_refused_before_parsing(self) -> None:
        """`urlsplit` drops tabs and line breaks silently; the rule sees them first."""
        for url in refused.URLS.values():
            with pytest.raises(InvalidWebhookConfig, match="control or invisible"):
                rules.parse_destination(url, allow_insecure=True)
        international = "https://exemplo.com.br/notificação?q=%20"
        assert rules.parse_destination(international, allow_insecure=False).host == "exemplo.com.br"

    @pytest.mark.parametrize(
        "address",
        [
            "10.0.0.1",
            "172.16.5.4",
            "192.168.1.1",
            "127.0.0.1",
            "169.254.169.254",
            "0.0.0.0",
            "100.64.0.1",
            "224.0.0.1",
            "::1",
            "fe80::1",
            "fc00::1",
            "::ffff:10.0.0.1",
            "240.0.0.1",
            # IPv6 that Python 3.11 calls global: NAT64 and 6to4 of private IPv4, IPv4-compatible,
            # local-use NAT64, site-local
            "64:ff9b::a00:1",
            "64:ff9b::7f00:1",
            "2002:a00:1::",
            "2002:a9fe:a9fe::1",
            "::a00:1",
            "64:ff9b:1::a00:1",
            "fec0::1",
        ],
    )
    def test_private_and_special_addresses_refused(self, address: str) -> None:
        with pytest.raises(UnsafeWebhookDestination):
            rules.check_addresses("h", [address], allow_insecure=False)

    def test_loopback_only_with_insecure_and_never_private(self) -> None:
        rules.check_addresses("h", ["127.0.0.1", "::1"], allow_insecure=True)
        with pytest.raises(UnsafeWebhookDestination):
            rules.check_addresses("h", ["127.0.0.1", "10.1.1.1"], allow_insecure=True)
        rules.check_addresses("h", ["8.8.8.8", "2001:4860:4860::8888"], allow_insecure=False)

    def test_nat64_and_6to4_of_a_public_ipv4_pass(self) -> None:
        """A DNS64 network hands out 64:ff9b::/96 for IPv4-only receivers: still deliverable."""
        rules.check_addresses("h", ["64:ff9b::808:808", "2002:808:808::1"], allow_insecure=False)
        with pytest.raises(UnsafeWebhookDestination, match=r"resolves to 10\.0\.0\.1,"):
            rules.check_addresses("h", ["64:ff9b::a00:1"], allow_insecure=False)


class TestRetries:
    @pytest.mark.parametrize("jitter", [0.0, 0.5, 0.9999])
    def test_first_retry_within_10s_growing_for_at_least_3_days(self, jitter: float) -> None:
        offsets = rules.retry_schedule(jitter)
        assert offsets[0] < 10
        delays = [b - a for a, b in zip([0.0, *offsets], offsets, strict=False)]
        assert all(later >= earlier - 1e-6 for earlier, later in itertools.pairwise(delays))
        assert max(delays) <= rules.MAX_RETRY_SECONDS * 1.2
        assert offsets[-1] >= timedelta(days=3).total_seconds()

    def test_retry_after_honoured_on_429_and_503_only(self) -> None:
        now = datetime(2026, 1, 1, tzinfo=UTC)
        assert rules.parse_retry_after("120", now) == 120
        assert rules.parse_retry_after("Thu, 01 Jan 2026 00:10:00 GMT", now) == 600
        assert rules.parse_retry_after("soon", now) is None
        assert rules.next_delay(1, 0.5, status_code=429, retry_after=120) == 120
        assert rules.next_delay(1, 0.5, status_code=503, retry_after=10**9) == 86400
        assert rules.next_delay(1, 0.5, status_code=500, retry_after=120) < 10

    def test_gives_up_only_after_the_window(self) -> None:
        start = datetime(2026, 1, 1, tzinfo=UTC)
        assert not rules.gives_up(start, start + timedelta(days=2, hours=23))
        assert rules.gives_up(start, start + timedelta(days=3))


V1_FIELDS = {
    "event",
    "status",
    "transactionType",
    "movementType",
    "transactionId",
    "externalId",
    "endToEndId",
    "pixKey",
    "feeAmount",
    "originalAmount",
    "finalAmount",
    "processingDate",
    "errorCode",
    "errorMessage",
    "counterpart",
    "metadata",
}


class TestPayloads:
    def test_v1_cash_out_is_exactly_6_3(self) -> None:
        body = schemas.example("cash_out", "v1")
        assert set(body) == V1_FIELDS
        assert body["event"] == "CashOut" and body["movementType"] == "DEBIT"
        assert body["transactionType"] == "PIX"
        assert (body["originalAmount"], body["feeAmount"], body["finalAmount"]) == (
            Decimal("123.45"),
            Decimal("0.50"),
            Decimal("123.95"),
        )
        assert body["errorCode"] is None and body["errorMessage"] is None
        assert body["counterpart"]["document"] != "12345678909"
        assert set(body["counterpart"]["bank"]) == {
            "bankISPB",
            "bankName",
            "bankCode",
            "accountBranch",
            "accountNumber",
        }
        assert body["processingDate"].endswith("Z")

    def test_v1_error_carries_the_reason(self) -> None:
        body = schemas.example("cash_out", "v1", status="ERROR")
        assert body["status"] == "ERROR" and body["errorCode"] == "ORDER_REJECTED"

    def test_v2_transfer_receive_refund(self) -> None:
        transfer = schemas.example("cash_out", "v2")
        assert transfer["type"] == "TRANSFER"
        assert transfer["data"]["status"] == "LIQUIDATED"
        assert transfer["data"]["payment"] == {"amount": "123.45", "currency": "BRL"}
        assert transfer["data"]["idempotencyKey"] and transfer["data"]["id"] == 1042
        failed = schemas.example("cash_out", "v2", status="ERROR")["data"]
        assert failed["status"] == "ERROR"
        assert failed["error"] == {
            "code": "ORDER_REJECTED",
            "message": "destination bank rejected the payment",
        }
        receive = schemas.example("cash_in", "v2")
        assert receive["type"] == "RECEIVE" and receive["data"]["txId"]
        refund = schemas.example("refund_in", "v2")["data"]
        assert refund["status"] == "REFUNDED" and refund["creditDebitType"] == "DEBIT"
        assert refund["endToEndId"].startswith("E") and refund["refunds"][0]["endToEndId"][0] == "D"
        assert refund["refunds"][0]["payment"] == {"amount": 20.0, "currency": "BRL"}
        assert refund["payment"]["amount"] == "50.00"

    def test_v1_and_v2_carry_the_same_facts(self) -> None:
        v1 = schemas.example("cash_out", "v1")
        v2 = schemas.example("cash_out", "v2")["data"]
        assert v1["endToEndId"] == v2["endToEndId"]
        assert v1["pixKey"] == v2["pixKey"]
        assert f"{v1['originalAmount']:.2f}" == v2["payment"]["amount"]
        assert v1["counterpart"]["document"] == v2["creditorAccount"]["document"]

    @pytest.mark.parametrize("event_type", rules.EVENT_TYPES)
    def test_every_render_validates_against_its_documented_model(self, event_type: str) -> None:
        for status in ("CONFIRMED", "ERROR"):
            schemas.V1Payload.model_validate(schemas.example(event_type, "v1", status=status))
            if event_type in rules.V2_EVENT_TYPES:
                body = schemas.example(event_type, "v2", status=status)
                schemas.PAYLOAD_MODELS[body["type"]].model_validate(body)
