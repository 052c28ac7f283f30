"""The log set-up's redaction (pixgate.core.logging.redact): the defence in depth behind code that
logs ids, never credentials. tests/test_secrets_in_logs.py checks a whole running server."""

from __future__ import annotations

import json
import logging
import logging.config
import warnings
from collections.abc import Iterator
from datetime import UTC, datetime
from itertools import count
from typing import Any
from urllib.parse import quote, quote_plus
from uuid import uuid4

import pytest
import structlog

from pixgate.accounts.rules.certificates import issue_client_certificate
from pixgate.core.logging import REDACTED, configure, redact, redact_text

ISSUED = issue_client_certificate("logs")
CERT = ISSUED.certificate_pem
KEY = ISSUED.private_key_pem
CERT_LINE = CERT.splitlines()[1]
KEY_LINE = KEY.splitlines()[1]
JWT = (
    "eyJhbGciOiJFZERTQSIsImtpZCI6ImsxIiwidHlwIjoiSldUIn0."
    "eyJzdWIiOiI3ZDFmM2MxZSIsImFjYyI6MX0."
    "c2lnbmF0dXJlLXBhcnQtb2YtdGhlLXRva2VuLXRoYXQtbXVzdC1ub3QtbGVhaw"
)
WHSEC = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw+fgfYO3TCbw="
SECRET = "Phvn6vzCEhIZktCLy5VZMYtkzfLxutnPEjUg856YqLM"


def event(**values: Any) -> dict[str, Any]:
    return dict(redact(None, "info", {"event": "test.event", **values}))


class TestText:
    @pytest.mark.parametrize(
        ("text", "secret"),
        [
            (f"token {JWT} refused", JWT.rsplit(".", 1)[1]),
            ("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", "eyJzdWIiOiJ4In0"),  # alg none: no signature
            (f"got {CERT} from the proxy", CERT_LINE),
            (f"key {KEY}", KEY_LINE),
            (f"cut {CERT[:200]}", CERT.splitlines()[2]),
            (f"repr {KEY!r}", KEY_LINE),
            (f"header {quote(CERT, safe='')}", quote(CERT_LINE, safe="")),
            (quote(CERT, safe="").lower(), quote(CERT_LINE, safe="").lower()),
            (quote(CERT, safe="").replace("-", "%2D"), quote(CERT_LINE, safe="")),
            (f"form {quote_plus(CERT)}", quote_plus(CERT_LINE)),
            (f"signing with {WHSEC}", WHSEC.removeprefix("whsec_")),
            ("Authorization: Bearer receiver-secret-XYZ", "receiver-secret-XYZ"),
            ("authorization: bearer receiver-secret-XYZ", "receiver-secret-XYZ"),
            (f"Basic {SECRET}", SECRET),
            (f"Basic !{SECRET}", SECRET),
            (f"grant_type=client_credentials&client_secret={SECRET}", SECRET),
            (f"GET /hook?access_token={SECRET}&x=1", SECRET),
            (f'{{"clientId": "x", "clientSecret": "{SECRET}"}}', SECRET),
            (f"{{'client_secret': '{SECRET}'}}", SECRET),
            (f"password={SECRET}", SECRET),
            (f"[type=string_too_long, input_value='{SECRET}', input_type=str]", SECRET),
            (f"postgresql://pixgate:{SECRET}@db:5432/pixgate", SECRET),
            (f"http://user:{SECRET}@127.0.0.1:9/hook", SECRET),
        ],
        ids=count(),  # the certificate is issued anew each run: its text is no stable id
    )
    def test_secret_is_replaced(self, text: str, secret: str) -> None:
        assert secret in text
        cleaned = redact_text(text)
        assert secret not in cleaned
        assert REDACTED in cleaned

    @pytest.mark.parametrize(
        ("text", "kept"),
        [
            ("Authorization: Bearer receiver-secret-XYZ", "Authorization: Bearer "),
            (f"GET /hook?access_token={SECRET}&x=1", "GET /hook?access_token="),
            (f"postgresql://pixgate:{SECRET}@db:5432/pixgate", "postgresql://pixgate:"),
            (f"[input_value='{SECRET}', input_type=str]", "[input_value="),
            (f"x {JWT} y", "x "),
        ],
    )
    def test_the_context_stays(self, text: str, kept: str) -> None:
        assert redact_text(text).startswith(kept + REDACTED)

    @pytest.mark.parametrize(
        "text",
        [
            "http.request",
            "/api/pix/cash-out",
            "/loc/4f1c2b",
            "6f1c2b0a-3d4e-4f5a-8b9c-0d1e2f3a4b5c",
            "maria@example.com",
            "2026-11-28T07:09:10.109957+00:00",
            "a" * 64,
            "E12345678202611221403AbCdEf12345",
            '    if b"-----BEGIN CERTIFICATE-----" not in data:',  # a traceback's source line
            "token is bound to another certificate",
            "invalid clientId or clientSecret",
            "whsec_",
            "https://example.com/p@x",
        ],
    )
    def test_ordinary_text_is_the_same_object(self, text: str) -> None:
        assert redact_text(text) is text


class TestEventDict:
    @pytest.mark.parametrize(
        "key",
        [
            "authorization",
            "Authorization",
            "clientSecret",
            "client_secret",
            "secret",
            "access_token",
            "token",
            "password",
            "x-ssl-client-cert",
            "x_ssl_client_cert",
            "cookie",
            "set-cookie",
            "private_key",
            "privateKeyPem",
            "api_key",
            "signature",
        ],
    )
    def test_secret_keys_are_blanked_whatever_they_hold(self, key: str) -> None:
        assert event(**{key: "plain words"})[key] == REDACTED
        assert event(**{key: 12345})[key] == REDACTED
        assert event(**{key: None})[key] is None

    def test_header_maps_keep_names_only(self) -> None:
        logged = event(headers={"X-Receiver-Key": "opaque-credential", "Accept": "*/*"})
        assert logged["headers"] == {"X-Receiver-Key": REDACTED, "Accept": REDACTED}
        assert event(request_headers=[("x-key", "opaque")])["request_headers"] == REDACTED

    def test_nested_values_are_cleaned(self) -> None:
        logged = event(
            details={
                "client": {"clientSecret": SECRET, "id": 7},
                "seen": [JWT, "fine", {"password": "p"}],
            }
        )
        assert logged["details"] == {
            "client": {"clientSecret": REDACTED, "id": 7},
            "seen": [REDACTED, "fine", {"password": REDACTED}],
        }

    def test_the_event_and_the_traceback_are_cleaned(self) -> None:
        logged = event(exception=f"Traceback ...\nValueError: bad header {quote(CERT, safe='')}")
        assert CERT_LINE not in logged["exception"]
        assert logged["exception"].startswith("Traceback ...\nValueError: bad header ")
        assert JWT not in redact(None, "info", {"event": f"got {JWT}"})["event"]

    def test_bytes_and_other_objects(self) -> None:
        class Holder:
            def __repr__(self) -> str:
                return f"Holder({WHSEC})"

        logged = event(
            raw=f"Bearer {SECRET}".encode(),
            holder=Holder(),
            when=datetime.now(UTC),
            fine=b"plain",
            count=3,
            ratio=0.5,
            ok=True,
        )
        assert logged["raw"] == REDACTED
        assert logged["holder"] == f"Holder({REDACTED})"
        assert isinstance(logged["when"], datetime)
        assert (logged["fine"], logged["count"], logged["ratio"], logged["ok"]) == (
            b"plain",
            3,
            0.5,
            True,
        )

    def test_deep_or_huge_structures_are_not_walked(self) -> None:
        deep: Any = SECRET
        for _ in range(10):
            deep = [deep]
        assert SECRET not in json.dumps(event(deep=deep))
        assert event(many=list(range(10_000)))["many"] == "[REDACTED: too large to check]"

    def test_clean_lines_are_left_as_they_are(self) -> None:
        line = {
            "event": "http.request",
            "method": "GET",
            "path": "/api/balance",
            "status": 200,
            "duration_ms": 1.5,
            "request_id": str(uuid4()),
        }
        assert redact(None, "debug", dict(line)) == line


# --- configure(): our lines and the standard library's, rendered and cleaned alike ---------


@pytest.fixture
def restored_logging() -> Iterator[None]:
    names = ["", "uvicorn", "uvicorn.error", "uvicorn.access", "py.warnings"]
    saved = {
        n: (
            logging.getLogger(n).handlers[:],
            logging.getLogger(n).level,
            logging.getLogger(n).propagate,
        )
        for n in names
    }
    logging.captureWarnings(False)  # pytest restores `showwarning` after each test behind
    yield  # logging's back: start from a known state
    structlog.reset_defaults()
    logging.captureWarnings(False)
    for name, (handlers, level, propagate) in saved.items():
        logger = logging.getLogger(name)
        logger.handlers[:] = handlers
        logger.setLevel(level)
        logger.propagate = propagate


def lines(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


@pytest.mark.filterwarnings("default::UserWarning")  # it emits one, to see how it is logged
def test_configure_cleans_structlog_and_stdlib_lines(
    restored_logging: None, capsys: pytest.CaptureFixture[str]
) -> None:
    import uvicorn.config

    logging.config.dictConfig(uvicorn.config.LOGGING_CONFIG)  # what `uvicorn.run` does first
    configure(json=True, level="DEBUG")
    configure(json=True, level="DEBUG")  # twice (a reload): still one handler
    structlog.get_logger("test").debug(
        "token.seen", authorization=f"Bearer {SECRET}", note=f"client_secret={SECRET}"
    )
    try:
        raise ValueError(f"bad X-SSL-Client-Cert {quote(CERT, safe='')}")
    except ValueError as exc:
        logging.getLogger("uvicorn.error").error("Exception in ASGI application\n", exc_info=exc)
        structlog.get_logger("test").exception("request.crashed")
    logging.getLogger("httpx").info(f"HTTP Request: POST https://h/hook?token={SECRET}")
    logging.getLogger("asyncpg").warning(f"connection to postgresql://u:{SECRET}@db lost")
    warnings.warn(f"deprecated: pass the key, not Bearer {SECRET}", UserWarning, stacklevel=1)

    captured = capsys.readouterr()
    assert SECRET not in captured.err and CERT_LINE not in captured.err
    assert quote(CERT_LINE, safe="") not in captured.err
    logged = {line["event"]: line for line in lines(captured.err)}  # every line is JSON
    assert logged["token.seen"]["level"] == "debug"
    assert logged["token.seen"]["authorization"] == REDACTED
    crash = logged["Exception in ASGI application\n"]
    assert crash["logger"] == "uvicorn.error" and crash["level"] == "error"
    assert "ValueError: bad X-SSL-Client-Cert " + REDACTED in crash["exception"]
    assert "ValueError: bad X-SSL-Client-Cert " + REDACTED in logged["request.crashed"]["exception"]
    assert logged[f"connection to postgresql://u:{REDACTED}@db lost"]["logger"] == "asyncpg"
    assert not any(e.startswith("HTTP Request") for e in logged), "INFO of libraries is off"
    assert any(line.get("logger") == "py.warnings" for line in logged.values())
    assert [h.get_name() for h in logging.getLogger().handlers].count("pixgate") == 1
    assert logging.getLogger("uvicorn").handlers == []


def test_levels(restored_logging: None, capsys: pytest.CaptureFixture[str]) -> None:
    configure(json=True, level="ERROR")
    structlog.get_logger("test").warning("quiet")
    logging.getLogger("asyncpg").warning("quiet too")
    logging.getLogger("asyncpg").error("loud")
    assert [line["event"] for line in lines(capsys.readouterr().err)] == ["loud"]
