"""What the shipped nginx front answers itself, over HTTP/1.1 and HTTP/2: pixgate's general
envelope (docs/errors.md), valid JSON whatever bytes the request held, for a body over the
limit (which matches PIXGATE_MAX_BODY_BYTES), pixgate down (503 with Retry-After), and the
requests nginx cannot read; and /metrics, served only to the addresses the file allows.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import httpx
import pytest

from tests.deploy.front import (
    CASH_OUT,
    ELSEWHERE,
    MAX_BODY_BYTES,
    OVER_THE_LIMIT,
    TOO_LARGE,
    Answer,
    Front,
    assert_nginx_answer,
    chunks,
    client,
    exchange,
    h1_exchange,
    needs_nginx,
    nginx_front,
    tls_context,
)
from tests.processes import free_port

pytestmark = needs_nginx


async def test_body_limit_matches_pixgate(front: Front, tmp_path: Path, protocol: str) -> None:
    """A body of the limit passes nginx (pixgate answers: no token); one byte more, declared
    or streamed without a length, is nginx's 413; pixgate itself refuses that byte more too.

    The declared one goes as its head alone: nginx answers from the Content-Length, and over
    HTTP/2 httpx would wait forever for flow-control credit to send the rest (nginx resets
    the stream after its answer, which httpcore does not notice)."""
    prefix = '{"padding": "'
    at_limit = (prefix + "x" * (MAX_BODY_BYTES - len(prefix) - 2) + '"}').encode()
    assert len(at_limit) == MAX_BODY_BYTES
    headers = {"Content-Type": "application/json"}
    async with client(front, None, tmp_path, protocol) as http:
        accepted = await http.post(CASH_OUT, content=at_limit, headers=headers)
        streamed = await http.post(CASH_OUT, content=chunks(at_limit + b" "), headers=headers)
    context = tls_context(front, None, tmp_path)
    declared = await exchange(front, context, protocol, b"POST", CASH_OUT.encode(), OVER_THE_LIMIT)
    async with httpx.AsyncClient(base_url=front.upstream, timeout=10) as pixgate:
        direct = await pixgate.post(CASH_OUT, content=at_limit + b" ", headers=headers)
    assert (accepted.status_code, accepted.json()["code"]) == (401, "UNAUTHORIZED")
    assert (direct.status_code, direct.json()["code"]) == (413, "PAYLOAD_TOO_LARGE")
    assert streamed.http_version == protocol
    for too_large in (declared, Answer.of(streamed)):
        assert_nginx_answer(too_large, 413, **TOO_LARGE, path=CASH_OUT, method="POST")


async def test_pixgate_down_is_a_json_503(tmp_path: Path, protocol: str) -> None:
    with nginx_front(f"http://127.0.0.1:{free_port()}") as down:
        async with client(down, None, tmp_path, protocol) as http:
            answers = [await http.get("/readyz"), await http.post("/api/pix/cash-out", json={})]
    for response in answers:
        assert response.http_version == protocol
        assert response.headers["retry-after"] == "2"
        assert_nginx_answer(
            Answer.of(response),
            503,
            code="SERVICE_UNAVAILABLE",
            message="the gateway is unavailable, try again",
            error="Service Unavailable",
            path=response.request.url.path,
            method=response.request.method,
        )


# --- what nginx refuses itself: pixgate's general envelope, valid JSON -----------------------


MALFORMED = "the request is malformed"
# The path as sent, and `path` in nginx's 413: the path as sent when JSON holds it unescaped,
# else empty (nginx has no JSON escaping), never the query string.
PATHS = {
    "percent-encoded": (b"/api/x%22%5C%01%C3%A9%FF", "/api/x%22%5C%01%C3%A9%FF"),
    "raw quote and backslash": (b'/api/x"y\\', ""),
    "raw UTF-8 and 0xFF": (b"/api/x\xc3\xa9\xff", ""),
    "quote and backslash in the query only": (b'/api/x?q="\\', "/api/x"),
}


@pytest.mark.parametrize(("sent", "path"), PATHS.values(), ids=PATHS.keys())
async def test_nginx_answers_json_whatever_the_path(
    front: Front, tmp_path: Path, protocol: str, sent: bytes, path: str
) -> None:
    context = tls_context(front, None, tmp_path)
    answer = await exchange(front, context, protocol, b"POST", sent, OVER_THE_LIMIT)
    assert_nginx_answer(answer, 413, **TOO_LARGE, path=path, method="POST")


@pytest.mark.parametrize(
    "sent", [b"/api/x\x01y", b"/api/x%00y", b"api/x"], ids=["control", "NUL", "relative"]
)
async def test_nginx_refuses_a_path_it_cannot_read_in_json(
    front: Front, tmp_path: Path, protocol: str, sent: bytes
) -> None:
    context = tls_context(front, None, tmp_path)
    answer = await exchange(front, context, protocol, b"GET", sent, [])
    assert_nginx_answer(answer, 400, code="HTTP_ERROR", message=MALFORMED, path="")


def malformed(path: str, method: str) -> dict[str, str]:
    """The fields of nginx's 400 to a request it cannot read."""
    return {"code": "HTTP_ERROR", "message": MALFORMED, "path": path, "method": method}


# Requests nginx refuses before pixgate sees them, over HTTP/1.1 (HTTP/2 frames cannot carry
# most of these mistakes): the bytes sent, the status and the envelope's fields.
HTTP1_REFUSED = {
    "header name with a space": (
        b"GET /x HTTP/1.1\r\nHost: p\r\nBad Name: 1\r\n\r\n",
        400,
        malformed("/x", "GET"),
    ),
    "no Host": (
        b"GET /x HTTP/1.1\r\n\r\n",
        400,
        malformed("/x", "GET"),
    ),
    "Content-Length and Transfer-Encoding": (
        b"POST /x HTTP/1.1\r\nHost: p\r\nContent-Length: 5\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        400,
        malformed("/x", "POST"),
    ),
    "two Content-Lengths": (
        b"POST /x HTTP/1.1\r\nHost: p\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
        400,
        malformed("/x", "POST"),
    ),
    "unknown Transfer-Encoding": (
        b"POST /x HTTP/1.1\r\nHost: p\r\nTransfer-Encoding: gzip\r\n\r\n",
        501,
        {
            "code": "HTTP_ERROR",
            "message": "the request's Transfer-Encoding is not supported",
            "error": "Not Implemented",
        },
    ),
    "request line over 8 KiB": (
        b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: p\r\n\r\n",
        414,
        {"code": "HTTP_ERROR", "message": "the request line is too long", "path": ""},
    ),
    "header over 8 KiB": (
        b"GET /x HTTP/1.1\r\nHost: p\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n",
        431,
        {
            "code": "HTTP_ERROR",
            "message": "the request header fields are too large",
            "error": "Request Header Fields Too Large",
            "path": "/x",
        },
    ),
    "HTTP/3.0 request line": (
        b"GET /x HTTP/3.0\r\nHost: p\r\n\r\n",
        505,
        {"code": "HTTP_ERROR", "message": "the HTTP version is not supported"},
    ),
    "not HTTP": (
        b"\x16\x03\x01 hello\r\n\r\n",
        400,
        malformed("", ""),
    ),
}


@pytest.mark.parametrize(("data", "status", "fields"), HTTP1_REFUSED.values(), ids=HTTP1_REFUSED)
async def test_nginx_refuses_a_malformed_request_in_json(
    front: Front, tmp_path: Path, data: bytes, status: int, fields: dict[str, str]
) -> None:
    answer = await asyncio.to_thread(h1_exchange, front, tls_context(front, None, tmp_path), data)
    assert_nginx_answer(answer, status, **fields)


@pytest.mark.parametrize(("data", "status", "fields"), HTTP1_REFUSED.values(), ids=HTTP1_REFUSED)
async def test_the_plain_http_port_refuses_a_malformed_request_in_json(
    front: Front, data: bytes, status: int, fields: dict[str, str]
) -> None:
    answer = await asyncio.to_thread(h1_exchange, front, None, data, port=front.http_port)
    assert_nginx_answer(answer, status, tls=False, **fields)


async def test_the_plain_http_port_hides_its_error_page(front: Front) -> None:
    data = b"GET /_pixgate/error/http HTTP/1.1\r\nHost: p\r\n\r\n"
    answer = await asyncio.to_thread(h1_exchange, front, None, data, port=front.http_port)
    assert_nginx_answer(
        answer, 404, tls=False, code="NOT_FOUND", path="/_pixgate/error/http", method="GET"
    )


async def test_plain_http_on_the_https_port_is_json(front: Front) -> None:
    answer = await asyncio.to_thread(
        h1_exchange, front, None, b"GET /x HTTP/1.1\r\nHost: p\r\n\r\n"
    )
    message = "a plain HTTP request was sent to the HTTPS port"
    assert_nginx_answer(answer, 400, code="HTTP_ERROR", message=message, path="/x", method="GET")


async def test_trace_is_refused_in_json(front: Front, tmp_path: Path, protocol: str) -> None:
    async with client(front, None, tmp_path, protocol) as http:
        response = await http.request("TRACE", "/api/transactions")
    assert response.http_version == protocol
    assert_nginx_answer(
        Answer.of(response),
        405,
        code="METHOD_NOT_ALLOWED",
        error="Method Not Allowed",
        path="/api/transactions",
        method="TRACE",
    )


async def test_the_access_log_keeps_the_method_and_drops_the_query(
    front: Front, tmp_path: Path, protocol: str
) -> None:
    """An error page turns $request_method into GET; the log line keeps the request line's."""
    context = tls_context(front, None, tmp_path)
    sent = b"/api/transactions?access_token=secret"
    answer = await exchange(front, context, protocol, b"TRACE", sent, [])
    assert answer.status == 405
    version = "HTTP/2.0" if protocol == "HTTP/2" else "HTTP/1.1"
    deadline = time.monotonic() + 10  # nginx writes the line once the request is freed
    while not (lines := _logged(front, answer.headers["x-request-id"])):
        assert time.monotonic() < deadline, "no access log line for the request"
        await asyncio.sleep(0.05)
    [line] = lines
    assert f'"TRACE /api/transactions {version}" 405 ' in line
    assert "secret" not in line


def _logged(front: Front, request_id: str) -> list[str]:
    log = (front.logs / "pixgate.access.log").read_text()
    return [line for line in log.splitlines() if f"rid={request_id}" in line]


async def test_an_oversized_header_over_http2_ends_the_connection(
    front: Front, tmp_path: Path
) -> None:
    """HTTP/2 has no answer for it: nginx sends GOAWAY (ENHANCE_YOUR_CALM), never a page."""
    async with client(front, None, tmp_path, "HTTP/2") as http:
        with pytest.raises(httpx.RemoteProtocolError, match="error_code:11"):
            await http.get("/x", headers={"x-big": "a" * 20_000})


# --- /metrics: only to the addresses the file allows ------------------------------------------


async def test_metrics_are_served_to_the_loopback(
    front: Front, tmp_path: Path, protocol: str
) -> None:
    async with client(front, None, tmp_path, protocol) as http:
        response = await http.get("/metrics")
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    assert "# HELP" in response.text


# Every spelling nginx normalizes to /metrics (pixgate would serve /metrics to it).
METRICS = [
    b"/metrics",
    b"//metrics",
    b"/%6Detrics",
    b"/./metrics",
    b"/x/../metrics",
    b"/metrics?a=1",
]


@pytest.mark.parametrize("sent", METRICS, ids=[m.decode() for m in METRICS])
async def test_metrics_are_not_served_to_other_addresses(
    front: Front, tmp_path: Path, protocol: str, sent: bytes
) -> None:
    context = tls_context(front, None, tmp_path)
    answer = await exchange(front, context, protocol, b"GET", sent, [], source=ELSEWHERE)
    assert b"# HELP" not in answer.body
    assert_nginx_answer(
        answer,
        403,
        code="FORBIDDEN",
        message="the metrics are served only to the addresses this configuration allows",
        error="Forbidden",
        path=sent.partition(b"?")[0].decode(),
        method="GET",
    )


async def test_metrics_with_a_trailing_slash_is_a_redirect(front: Front, tmp_path: Path) -> None:
    """pixgate's own redirect to /metrics, which the file then refuses; no metrics in it."""
    async with client(front, None, tmp_path, source=ELSEWHERE) as http:
        response = await http.get("/metrics/")
    assert response.status_code == 307
    assert response.headers["location"] == "https://127.0.0.1/metrics"
    assert "# HELP" not in response.text
