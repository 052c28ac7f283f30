"""The dashboard and the API reference in a real browser: Debian's Chromium, driven by
Playwright, against a real `pixgate serve` (with its worker) and a real webhook receiver.

One journey, as an operations person takes it: sign in with the keyboard, add a webhook
(the signing secret is shown once), see a cash-out's delivery in the log, press Resend,
read the transactions (documents masked), create a charge (its QR image and code, the copy
button), read a charge on a phone-width screen, sign out. Then /docs renders the OpenAPI 3.1
document and expands an operation. Each page is checked by its text and elements, then
screenshotted (into `PIXGATE_SCREENSHOT_DIR` when set, as docs/images/ was made:
`PIXGATE_SCREENSHOT_DIR=docs/images pytest tests/browser`; else a temporary directory).

Chromium is Debian's (`apt-get install chromium`, as .ci/run does); Playwright never
downloads a browser here.
"""

from __future__ import annotations

import os
import re
import shutil
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from PIL import Image
from playwright.async_api import BrowserContext, Page, async_playwright, expect

from pixgate.runtime import Runtime
from tests.helpers import bearer, make_account
from tests.processes import PIXGATE, running
from tests.webhooks.receiver import Receiver

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
CPF = "52998224725"
DESKTOP = {"width": 1280, "height": 900}
PHONE = {"width": 390, "height": 844}

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed (.ci/run installs it)"
)


@pytest.fixture
def shots(tmp_path: Path) -> Path:
    wanted = os.environ.get("PIXGATE_SCREENSHOT_DIR")
    folder = Path(wanted) if wanted else tmp_path / "screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def gateway(rt: Runtime, database_url: str) -> Iterator[str]:
    """`pixgate serve` with its in-process worker; loopback http webhooks allowed."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PIXGATE_")}
    env |= {
        "PIXGATE_DATABASE_URL": database_url,
        "PIXGATE_LOG_JSON": "true",
        "PIXGATE_SETTLEMENT_DELAY_MS": "0",
        "PIXGATE_ALLOW_INSECURE_WEBHOOKS": "true",
    }
    with running([PIXGATE, "serve"], env) as base:
        yield base


@pytest.fixture
async def context(tmp_path: Path) -> AsyncIterator[BrowserContext]:
    profile = tmp_path / "chromium-profile"  # a fresh user-data directory per test
    async with async_playwright() as playwright:
        opened = await playwright.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            headless=True,
            args=ARGS,
            viewport=DESKTOP,
        )
        try:
            yield opened
        finally:
            await opened.close()
    shutil.rmtree(profile, ignore_errors=True)


async def shot(page: Page, folder: Path, name: str, *, full_page: bool = True) -> None:
    """A screenshot; the page's content was asserted before."""
    path = folder / f"{name}.png"
    await page.screenshot(path=str(path), full_page=full_page)
    with Image.open(path) as image:
        assert image.format == "PNG" and image.width >= 320 and image.height >= 200


async def test_dashboard_journey(
    rt: Runtime, gateway: str, receiver: Receiver, context: BrowserContext, shots: Path
) -> None:
    account = await make_account(rt, name="Loja Navegador", balance="500")
    page = await context.new_page()

    # Signed out, every page leads to the sign-in form; signed in with the keyboard alone.
    await page.goto(f"{gateway}/dashboard/webhooks")
    await expect(page).to_have_url(f"{gateway}/dashboard/login")
    await expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    await page.get_by_label("clientId").fill(account.client_id)
    await page.get_by_label("clientSecret").fill("not-the-secret")
    await page.get_by_role("button", name="Sign in").click()
    await expect(page.get_by_role("alert")).to_have_text("Invalid clientId or clientSecret.")
    await shot(page, shots, "dashboard-login")
    await page.keyboard.press("Tab")
    await expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    await page.keyboard.press("Tab")
    await expect(page.get_by_label("clientId")).to_be_focused()
    await page.keyboard.press("Tab")
    await expect(page.get_by_label("clientSecret")).to_be_focused()
    await page.keyboard.type(account.client_secret)
    await page.keyboard.press("Enter")
    await expect(page).to_have_url(f"{gateway}/dashboard")
    await expect(page.locator("#balance-available")).to_have_text("R$ 500,00")

    # Settings > Webhooks: the rules are explained where they are broken, then a URL is added.
    await page.get_by_role("link", name="Webhooks", exact=True).click()
    await page.get_by_label("Event type").select_option("cash_out")
    await page.get_by_label("URL", exact=True).fill(receiver.url("/pix"))
    await page.get_by_label("Header 1 name").fill("Host")
    await page.get_by_label("Header 1 value").fill("x")
    await page.get_by_role("button", name="Save webhook").click()
    await expect(page.get_by_role("alert")).to_contain_text("header 'Host' cannot be set")
    await page.get_by_label("Header 1 name").fill("X-Token")
    await page.get_by_label("Header 1 value").fill("s3cr3t")
    await page.get_by_role("button", name="Save webhook").click()
    await expect(page.get_by_role("status").first).to_have_text("Webhook added.")
    secret = await page.get_by_label("Secret", exact=True).input_value()
    assert secret.startswith("whsec_")
    cash_out = page.get_by_role("region", name=re.compile("^cash_out"))
    await expect(cash_out).to_contain_text("1 of 3 active")
    await expect(cash_out).to_contain_text(receiver.url("/pix"))
    await expect(cash_out).to_contain_text("X-Token: ******")
    assert "s3cr3t" not in await page.content()
    await shot(page, shots, "dashboard-webhooks")

    # A cash-out through the API; its webhook reaches the receiver and shows in the log.
    async with httpx.AsyncClient(base_url=gateway, timeout=30) as api:
        headers = await bearer(api, account)
        created = await api.post(
            "/api/pix/cash-out",
            headers=headers,
            json={
                "value": "12.34",
                "externalId": f"browser-{uuid.uuid4().hex[:8]}",
                "description": "Pedido navegador",
                "details": {
                    "key": "123e4567-e12b-42d3-a456-426614174000",
                    "keyType": "RANDOM",
                    "name": "Fulano de Tal",
                    "document": CPF,
                },
            },
        )
    assert created.status_code == 201, created.text
    transaction_id = created.json()["transactionId"]
    await receiver.wait_for(1)
    assert receiver.received[0].headers["x-token"] == "s3cr3t"

    await page.get_by_role("link", name="Delivery log").click()
    event = page.get_by_role("article").first
    for _ in range(50):  # the attempt is logged right after the POST: at most a moment later
        if "200" in await event.inner_text():
            break
        await page.wait_for_timeout(100)
        await page.reload()
        event = page.get_by_role("article").first
    await expect(event).to_contain_text("cash_out")
    await expect(event).to_contain_text(transaction_id)
    await expect(event).to_contain_text("delivered")
    await expect(event.locator("tbody tr").first).to_contain_text(receiver.url("/pix"))
    await expect(event.locator("tbody tr").first).to_contain_text("200")
    await page.get_by_label("Status").select_option("failed")
    await page.get_by_role("button", name="Filter").click()
    await expect(page.get_by_text("No events match these filters.")).to_be_visible()
    await page.get_by_label("Status").select_option("delivered")
    await page.get_by_label("Event").select_option("cash_out")
    await page.get_by_role("button", name="Filter").click()
    await page.get_by_role("button", name=re.compile("^Resend evt_")).click()
    await expect(page.get_by_role("status").first).to_contain_text("the first URL answered 200")
    await receiver.wait_for(2)
    assert receiver.received[1].headers["webhook-id"] == receiver.received[0].headers["webhook-id"]
    resent = page.get_by_role("article").first.locator("tbody tr")
    await expect(resent).to_have_count(2)
    await expect(resent.nth(1)).to_contain_text("resend")
    await shot(page, shots, "dashboard-deliveries")

    # Overview and transactions: balances and the statement, documents masked.
    await page.get_by_role("link", name="Overview").click()
    await expect(page.locator("#balance-available")).to_have_text("R$ 487,66")
    await expect(page.locator("#balance-total")).to_have_text("R$ 487,66")
    await expect(page.get_by_role("table")).to_contain_text(transaction_id)
    await shot(page, shots, "dashboard-overview")
    await page.get_by_role("link", name="Transactions", exact=True).click()
    await page.get_by_label("Type").select_option("WITHDRAW")
    await page.get_by_role("button", name="Filter").click()
    row = page.locator("tbody tr").first
    await expect(row).to_contain_text("R$ 12,34")
    await expect(row).to_contain_text("***.982.247-**")
    assert CPF not in await page.content()
    await shot(page, shots, "dashboard-transactions")

    # Charges: a charge from the form, its QR image (served by the gateway) and code.
    await page.get_by_role("link", name="Charges", exact=True).click()
    # A mistake is said for people, by the field's label (never pydantic's wording).
    await page.get_by_label("Amount (BRL)").fill("10000000000")
    await page.get_by_label("Description").fill("Pedido 42")
    await page.get_by_label("Payer's name").fill("Maria Souza")
    await page.get_by_label("Payer's CPF or CNPJ").fill("123")
    await page.get_by_role("button", name="Create charge").click()
    alert = page.get_by_role("alert")
    await expect(alert).to_have_text("Amount: must be from 0.01 to 9999999999.99")
    await page.get_by_label("Amount (BRL)").fill("25,50")
    await page.get_by_role("button", name="Create charge").click()
    await expect(alert).to_have_text("Payer's CPF or CNPJ: must have at least 11 characters")
    await page.get_by_label("Payer's CPF or CNPJ").fill(CPF)
    await page.get_by_role("button", name="Create charge").click()
    await expect(page.get_by_role("heading", name="Charge R$ 25,50")).to_be_visible()
    code = await page.get_by_label("Copy-and-paste code").input_value()
    assert code.startswith("000201") and "br.gov.bcb.pix" in code
    qr = page.get_by_role("img", name=re.compile("QR code"))
    await expect(qr).to_be_visible()
    assert await qr.evaluate("image => image.complete && image.naturalWidth > 100")
    source = await qr.get_attribute("src")
    assert source is not None and source.startswith("/dashboard/charges/")
    await context.grant_permissions(["clipboard-read", "clipboard-write"], origin=gateway)
    await page.get_by_role("button", name="Copy code").click()
    await expect(page.locator(".copied")).to_have_text("Copied.")
    assert await page.evaluate("navigator.clipboard.readText()") == code
    await shot(page, shots, "dashboard-charge")

    # A phone-width screen: nothing wider than the screen, the code still there.
    await page.set_viewport_size(PHONE)
    await page.reload()
    assert await page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    await expect(page.get_by_label("Copy-and-paste code")).to_be_visible()
    await shot(page, shots, "dashboard-phone")
    await page.set_viewport_size(DESKTOP)

    # Sign out: the session is gone.
    await page.get_by_role("button", name="Sign out").click()
    await expect(page).to_have_url(f"{gateway}/dashboard/login")
    await page.goto(f"{gateway}/dashboard")
    await expect(page).to_have_url(f"{gateway}/dashboard/login")


async def test_api_reference_renders(gateway: str, context: BrowserContext, shots: Path) -> None:
    """Swagger UI 5 reads the OpenAPI 3.1 document: operations listed, one expanded."""
    page = await context.new_page()
    await page.goto(f"{gateway}/docs")
    operations = page.locator(".opblock")
    await expect(operations.first).to_be_visible(timeout=30_000)
    assert await operations.count() >= 20
    assert "Unable to render this definition" not in await page.content()
    token = page.locator(".opblock-post", has=page.locator('[data-path="/api/auth/token"]'))
    await token.first.locator(".opblock-summary").click()
    await expect(token.first.locator(".opblock-body")).to_contain_text("clientId")
    await expect(token.first.get_by_role("button", name="Try it out")).to_be_visible()
    await token.first.scroll_into_view_if_needed()
    await shot(page, shots, "api-docs", full_page=False)
