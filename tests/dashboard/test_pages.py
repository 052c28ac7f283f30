"""The dashboard over HTTP (ASGI): sign-in, session cookie and its life on the runtime's
clock, CSRF (and the guard that every form route takes its dependency), rate limit, HTML
errors, the webhook rules explained inline, the signing secret, charges. The browser journey
is in tests/browser/."""

from __future__ import annotations

import ast
import dataclasses
import io
import re
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
import zxingcpp
from fastapi import FastAPI
from fastapi.routing import iter_route_contexts
from PIL import Image

from pixgate.accounts.service import accounts
from pixgate.core.http.intake.routing import dependency_calls
from pixgate.dashboard import routes as dashboard_routes
from pixgate.dashboard.views import session as sessions
from pixgate.dashboard.views.forms import sign_in_form, signed_in_form
from pixgate.dashboard.views.render import DashboardRoute
from pixgate.runtime import Runtime
from tests.dashboard.conftest import Browser, Opener, csrf_of
from tests.helpers import make_account
from tests.support import FixedClock
from tests.webhooks import refused_config as refused

PAGES = (
    "/dashboard",
    "/dashboard/transactions",
    "/dashboard/charges",
    "/dashboard/webhooks",
    "/dashboard/deliveries",
)
CPF = "52998224725"


class TestSignIn:
    @pytest.mark.parametrize("path", PAGES)
    async def test_signed_out_pages_lead_to_the_sign_in_form(
        self, browser: Browser, path: str
    ) -> None:
        response = await browser.get(path)
        assert response.status_code == 303
        assert response.headers["location"] == "/dashboard/login"

    async def test_the_session_cookie_is_httponly_strict_and_expires(
        self, rt: Runtime, browser: Browser
    ) -> None:
        account = await make_account(rt)
        response = await browser.sign_in(account)
        assert response.status_code == 303 and response.headers["location"] == "/dashboard"
        cookie = next(
            c for c in response.headers.get_list("set-cookie") if c.startswith("pixgate_session=")
        )
        flags = {part.strip().lower() for part in cookie.split(";")}
        assert {"httponly", "samesite=strict", "path=/dashboard", "max-age=3600"} <= flags
        assert "secure" not in flags  # plain http (tests, local development)
        assert (await browser.get("/dashboard")).status_code == 200

    async def test_behind_https_the_cookie_is_secure(self, rt: Runtime, app: FastAPI) -> None:
        account = await make_account(rt)
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="https://testserver") as http:
            response = await Browser(http).sign_in(account)
        assert response.status_code == 303
        cookie = next(
            c for c in response.headers.get_list("set-cookie") if c.startswith("pixgate_session=")
        )
        assert "secure" in {part.strip().lower() for part in cookie.split(";")}

    async def test_a_failure_does_not_say_which_half_was_wrong(
        self, rt: Runtime, open_browser: Opener
    ) -> None:
        account = await make_account(rt)
        unknown = dataclasses.replace(account, client_id=str(uuid.uuid4()))
        answers = []
        for who, secret in ((account, "wrong"), (unknown, account.client_secret)):
            async with open_browser() as browser:
                response = await browser.sign_in(who, secret)
            assert response.status_code == 401
            assert "pixgate_session=" not in response.headers.get("set-cookie", "")
            answers.append(response.text.split('role="alert">')[1].split("<")[0])
        assert answers == ["Invalid clientId or clientSecret."] * 2

    async def test_repeated_failures_are_rate_limited(self, rt: Runtime, browser: Browser) -> None:
        rt.settings = rt.settings.model_copy(update={"dashboard_login_rate_limit": "3/minute"})
        account = await make_account(rt)
        for _ in range(3):
            assert (await browser.sign_in(account, "wrong")).status_code == 401
        refused = await browser.sign_in(account)  # even the right secret, until it resets
        assert refused.status_code == 429
        assert int(refused.headers["retry-after"]) >= 1
        assert "Too many failed sign-ins" in refused.text

    async def test_a_revoked_credential_ends_its_sessions(
        self, rt: Runtime, browser: Browser
    ) -> None:
        account = await make_account(rt)
        await browser.sign_in(account)
        await accounts.revoke_credential(rt, account.client_id)
        assert (await browser.get("/dashboard")).status_code == 303

    async def test_sign_out_ends_the_session(self, rt: Runtime, browser: Browser) -> None:
        account = await make_account(rt)
        await browser.sign_in(account)
        response = await browser.post("/dashboard/logout")
        assert response.status_code == 303 and response.headers["location"] == "/dashboard/login"
        assert (await browser.get("/dashboard")).status_code == 303

    def test_a_cookie_that_was_changed_or_expired_is_no_session(self) -> None:
        key, now = b"k" * 32, datetime.now(UTC)
        cookie, session = sessions.issue(key, "client", now=now, ttl=60)
        assert sessions.read(key, cookie, now=now) == session
        assert sessions.read(key, cookie, now=now + timedelta(seconds=61)) is None
        assert sessions.read(b"x" * 32, cookie, now=now) is None
        client, sid, expires, mac = cookie.split(".")
        assert sessions.read(key, f"{client}.{sid}.{int(expires) + 999}.{mac}", now=now) is None
        assert sessions.read(key, f"other.{sid}.{expires}.{mac}", now=now) is None


class TestSessionLife:
    """A session's life is counted on the runtime's clock, at sign-in and on every page:
    the clock is set far from the wall clock, so a session judged on either end by
    `time.time()` would outlive the move or be over at once."""

    SIGNED_AT = datetime(2024, 1, 10, 12, 0, tzinfo=UTC)

    async def _signed_in(self, rt: Runtime, browser: Browser) -> FixedClock:
        clock = FixedClock(self.SIGNED_AT)
        rt.clock = clock
        response = await browser.sign_in(await make_account(rt))
        assert response.status_code == 303 and response.headers["location"] == "/dashboard"
        return clock

    async def test_a_second_before_its_end_the_session_still_works(
        self, rt: Runtime, browser: Browser
    ) -> None:
        clock = await self._signed_in(rt, browser)
        clock.advance(seconds=rt.settings.dashboard_session_ttl_s - 1)
        assert (await browser.get("/dashboard")).status_code == 200
        shown = await browser.post("/dashboard/webhooks/secret")
        assert shown.status_code == 200 and "whsec_" in shown.text

    async def test_past_its_end_every_page_leads_to_the_sign_in_form(
        self, rt: Runtime, browser: Browser
    ) -> None:
        clock = await self._signed_in(rt, browser)
        clock.advance(seconds=rt.settings.dashboard_session_ttl_s + 1)
        posted = await browser.post("/dashboard/webhooks/secret")  # its token is not judged
        page = await browser.get("/dashboard")
        for response in (posted, page):
            assert response.status_code == 303
            assert response.headers["location"] == "/dashboard/login"
            assert 'pixgate_session=""' in response.headers["set-cookie"]


FORBIDDEN_IN_ROUTES = frozenset(
    {"check_csrf", "csrf_token", "login_csrf_token", "same", "read_form"}
)
"""What a route would need to read a form or check its token by hand: the form reaches a
route only through `SignedInForm` or `SignInForm` (`pixgate/dashboard/views/forms.py`)."""
FORGED_TITLE = "This form has expired or did not come from this dashboard. Reload the page."


def _dashboard_posts(app: FastAPI) -> list[DashboardRoute]:
    routes = [context.original_route for context in iter_route_contexts(app.routes)]
    found = [
        route
        for route in routes
        if isinstance(route, DashboardRoute) and "POST" in (route.methods or ())
    ]
    assert len(found) >= 8, [route.path for route in found]  # the guard looks at something
    return found


def _hand_checks(source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and node.id in FORBIDDEN_IN_ROUTES:
            found.append(node.id)
        elif isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_IN_ROUTES:
            found.append(node.attr)
        elif isinstance(node, ast.alias) and node.name in FORBIDDEN_IN_ROUTES:
            found.append(f"import {node.name}")
        elif isinstance(node, ast.Constant) and node.value == "csrf":
            found.append('"csrf"')
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "form"
        ):
            found.append(".form()")
    return found


class TestCsrf:
    def test_no_route_reads_a_form_or_checks_a_token_by_hand(self) -> None:
        folder = Path(dashboard_routes.__file__).parent
        modules = sorted(folder.glob("*.py"))
        assert len(modules) >= 3
        found = {
            str(path.relative_to(folder)): checks
            for path in modules
            if (checks := _hand_checks(path.read_text()))
        }
        assert found == {}

    def test_the_guard_sees_a_hand_written_check(self) -> None:
        written = 'given = form.get("csrf")\ncheck_csrf(await read_form(request), signed)'
        assert _hand_checks(written) == ['"csrf"', "check_csrf", "read_form"]
        assert _hand_checks("form = await request.form()") == [".form()"]

    def test_every_post_route_takes_the_form_dependency(self, app: FastAPI) -> None:
        missing = []
        for route in _dashboard_posts(app):
            wanted = sign_in_form if route.path == "/dashboard/login" else signed_in_form
            if wanted not in dependency_calls(route.dependant):
                missing.append(f"{route.path} lacks {wanted.__name__}")
        assert missing == []

    @pytest.mark.parametrize("token", [{"csrf": "forged"}, {"csrf": ""}, {}])
    async def test_every_signed_in_form_refuses_a_forged_or_missing_token(
        self, rt: Runtime, app: FastAPI, browser: Browser, token: dict[str, str]
    ) -> None:
        await browser.sign_in(await make_account(rt))
        for route in _dashboard_posts(app):
            if route.path == "/dashboard/login":
                continue
            path = re.sub(r"\{[^}]+\}", "1", route.path)
            response = await browser.http.post(path, data=token)
            assert response.status_code == 403, (path, response.text)
            assert response.headers["content-type"].startswith("text/html"), path
            assert "default-src 'none'" in response.headers["content-security-policy"], path
            assert response.headers["cache-control"] == "no-store", path
            assert FORGED_TITLE in response.text, path
            assert "set-cookie" not in response.headers, path
        assert (await browser.get("/dashboard")).status_code == 200  # still signed in
        shown = await browser.post("/dashboard/webhooks/secret")  # neither shown nor rotated
        assert shown.status_code == 200 and "whsec_" in shown.text

    async def test_the_sign_in_form_needs_its_own_token(
        self, rt: Runtime, browser: Browser
    ) -> None:
        account = await make_account(rt)
        response = await browser.http.post(
            "/dashboard/login",
            data={"clientId": account.client_id, "clientSecret": account.client_secret},
        )
        assert response.status_code == 403
        assert "pixgate_session=" not in response.headers.get("set-cookie", "")
        # the form again, the clientId kept, with a fresh nonce cookie and its token
        assert "The sign-in form expired. Please sign in again." in response.text
        assert f'value="{account.client_id}"' in response.text
        assert "pixgate_login=" in response.headers["set-cookie"]
        assert "default-src 'none'" in response.headers["content-security-policy"]
        again = await browser.http.post(
            "/dashboard/login",
            data={
                "clientId": account.client_id,
                "clientSecret": account.client_secret,
                "csrf": csrf_of(response),
            },
        )
        assert again.status_code == 303 and again.headers["location"] == "/dashboard"


class TestPages:
    async def test_errors_are_html_pages_with_security_headers(
        self, rt: Runtime, browser: Browser
    ) -> None:
        await browser.sign_in(await make_account(rt))
        for path, status in (
            ("/dashboard/nowhere", 404),
            ("/dashboard/charges/not-a-uuid", 400),
            ("/dashboard/charges/00000000-0000-4000-8000-000000000000", 404),
            ("/dashboard/transactions?externalId=a%00b", 400),
            ("/dashboard/transactions?startDate=2026-01-01&endDate=2026-06-01", 400),
        ):
            response = await browser.get(path)
            assert response.status_code == status, (path, response.text)
            assert response.headers["content-type"].startswith("text/html"), path
            assert "default-src 'none'" in response.headers["content-security-policy"]
            assert response.headers["x-frame-options"] == "DENY"
            assert response.headers["cache-control"] == "no-store"

    async def test_the_api_keeps_its_json_errors(self, browser: Browser) -> None:
        response = await browser.get("/api/nowhere")
        assert response.status_code == 404 and response.json()["code"] == "NOT_FOUND"

    async def test_assets_are_the_gateways_own(self, browser: Browser) -> None:
        page = await browser.get("/dashboard/login")
        for asset in ("/dashboard/static/dashboard.css", "/dashboard/static/dashboard.js"):
            assert asset in page.text
            assert (await browser.get(asset)).status_code == 200
        assert "http" not in page.text.split("<body>")[0].replace("http-equiv", "")

    async def test_overview_shows_the_balances(self, rt: Runtime, browser: Browser) -> None:
        await browser.sign_in(await make_account(rt, name="Loja Saldo", balance="1234.5"))
        page = (await browser.get("/dashboard")).text
        assert "Loja Saldo" in page and page.count("R$ 1.234,50") == 2  # available and total
        assert 'id="balance-blocked">R$ 0,00' in page


class TestWebhooks:
    async def test_every_rule_is_explained_where_it_is_broken(
        self, rt: Runtime, browser: Browser
    ) -> None:
        rt.settings = rt.settings.model_copy(update={"allow_insecure_webhooks": False})
        await browser.sign_in(await make_account(rt))
        cases = (
            ({"url": "http://shop.example.com/pix"}, "URL: must use HTTPS"),
            ({"url": "https://127.0.0.1/pix"}, "loopback"),
            ({"eventType": "nope"}, "Event type: must be one of"),
            ({"eventType": "med_created", "version": "v2"}, "Payload version: v2 has no payload"),
            ({"headerName": "Content-Type", "headerValue": "x"}, "cannot be set"),
        )
        for change, message in cases:
            form = {"eventType": "cash_out", "url": "https://93.184.215.14/pix", **change}
            response = await browser.post("/dashboard/webhooks", form)
            assert response.status_code == 400, (change, response.text)
            assert message in response.text, (change, response.text)

    async def test_control_characters_and_bad_header_names_are_refused(
        self, rt: Runtime, browser: Browser
    ) -> None:
        """The form meets the API's rule (one rule, in the domain): a 400 page that says what
        is wrong, never echoes a header value, and stores nothing."""
        await browser.sign_in(await make_account(rt))
        header = {"headerName": "X-Token", "headerValue": "t0k3n"}
        forms = [
            *({"url": url, **header} for url in refused.URLS.values()),
            *(
                {"headerName": name, "headerValue": "t0k3n"}
                for name in refused.HEADER_NAMES.values()
            ),
            *({"headerName": "X-Token", "headerValue": v} for v in refused.HEADER_VALUES.values()),
        ]
        for form in forms:
            sent = {"eventType": "cash_out", "url": refused.VALID_URL, **form}
            response = await browser.post("/dashboard/webhooks", sent)
            assert response.status_code == 400, (form, response.text)
            assert 'class="problems" role="alert"' in response.text, form
            assert "t0k3n" not in response.text and form["headerValue"] not in response.text
        assert await _endpoints(rt, browser) == []

    async def test_add_update_deactivate_and_the_limit_of_three(
        self, rt: Runtime, browser: Browser
    ) -> None:
        rt.settings = rt.settings.model_copy(update={"allow_insecure_webhooks": True})
        await browser.sign_in(await make_account(rt))

        def form(n: int, **extra: str) -> dict[str, object]:
            return {"eventType": "cash_in", "url": f"http://127.0.0.1:9/hook{n}", **extra}

        first = await browser.post("/dashboard/webhooks", form(1))
        assert first.status_code == 200 and "whsec_" in first.text  # the secret, shown once
        for n in (2, 3):
            response = await browser.post("/dashboard/webhooks", form(n))
            assert response.headers["location"] == "/dashboard/webhooks?done=created"
        refused = await browser.post("/dashboard/webhooks", form(4))
        assert refused.status_code == 400 and "already has 3 active URLs" in refused.text
        updated = await browser.post(
            "/dashboard/webhooks",
            form(1, version="v2", headerName="X-Token", headerValue="t0k3n"),
        )
        assert updated.headers["location"] == "/dashboard/webhooks?done=updated"
        page = (await browser.get("/dashboard/webhooks")).text
        assert "3 of 3 active" in page and "X-Token: ******" in page and "t0k3n" not in page
        ids = [e.id for e in await _endpoints(rt, browser)]
        response = await browser.post(f"/dashboard/webhooks/{ids[0]}/deactivate")
        assert response.headers["location"] == "/dashboard/webhooks?done=deactivated"
        assert "2 of 3 active" in (await browser.get("/dashboard/webhooks")).text
        again = await browser.post(f"/dashboard/webhooks/{ids[0]}/deactivate")
        assert again.status_code == 404
        assert (await browser.post("/dashboard/webhooks", form(4))).status_code == 303
        assert (await browser.post("/dashboard/webhooks", form(1))).status_code == 400  # 3 again

    async def test_the_secret_is_shown_once_and_rotates(
        self, rt: Runtime, browser: Browser
    ) -> None:
        await browser.sign_in(await make_account(rt))
        shown = await browser.post("/dashboard/webhooks/secret")
        assert shown.status_code == 200 and "whsec_" in shown.text
        again = await browser.post("/dashboard/webhooks/secret")
        assert again.status_code == 409 and "whsec_" not in again.text
        rotated = await browser.post("/dashboard/webhooks/secret/rotate")
        assert rotated.status_code == 200 and "whsec_" in rotated.text
        assert "keeps signing for 24 h" in rotated.text


async def _endpoints(rt: Runtime, browser: Browser) -> list[object]:
    from pixgate.webhooks import service as webhooks

    page = await browser.get("/dashboard")
    account_id = int(page.text.split("Account ")[1].split("<")[0])
    return list(await webhooks.list_endpoints(rt, account_id))


class TestCharges:
    async def test_a_charge_from_the_form_and_its_qr_image(
        self, rt: Runtime, browser: Browser
    ) -> None:
        await browser.sign_in(await make_account(rt))
        created = await browser.post(
            "/dashboard/charges",
            {
                "value": "10,50",
                "description": "Pedido 7",
                "externalId": "pedido-7",
                "payerName": "Maria Souza",
                "payerDocument": CPF,
                "expiration": "600",
            },
        )
        assert created.status_code == 303
        page = await browser.get(created.headers["location"])
        assert "Charge R$ 10,50" in page.text and "pedido-7" in page.text
        code = page.text.split('<textarea id="pix-code" readonly rows="5">')[1].split("<")[0]
        assert code.startswith("000201")
        image = await browser.get(created.headers["location"] + "/qr.png")
        assert image.headers["content-type"] == "image/png"
        decoded = zxingcpp.read_barcodes(
            Image.open(io.BytesIO(image.content)), formats=zxingcpp.BarcodeFormat.QRCode
        )
        assert [d.text for d in decoded] == [code.replace("&amp;", "&")]
        duplicate = await browser.post(
            "/dashboard/charges",
            {
                "value": "1",
                "description": "x",
                "externalId": "pedido-7",
                "payerName": "M",
                "payerDocument": CPF,
            },
        )
        assert duplicate.status_code == 400 and "already" in duplicate.text.lower()

    async def test_form_errors_name_the_form_fields(self, rt: Runtime, browser: Browser) -> None:
        await browser.sign_in(await make_account(rt))
        response = await browser.post(
            "/dashboard/charges",
            {"value": "abc", "description": "", "payerName": "M", "payerDocument": "11111111111"},
        )
        assert response.status_code == 400
        assert "Amount: " in response.text and "Description: " in response.text


async def test_the_disabled_api_route_points_to_the_dashboard(
    rt: Runtime, browser: Browser
) -> None:
    from pixgate.webhooks.routes import DISABLED_MESSAGE

    assert "/dashboard/webhooks" in DISABLED_MESSAGE
    assert csrf_of  # the helpers stay importable for the browser tests
