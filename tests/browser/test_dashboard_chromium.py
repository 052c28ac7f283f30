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

import json
import os
import re
import shutil
import uuid
from collections.abc import AsyncIterator, Iterator
from decimal import Decimal
from pathlib import Path

import httpx
import pytest
from PIL import Image
from playwright.async_api import BrowserContext, Locator, Page, async_playwright, expect

from pixgate.accounts.service import accounts
from pixgate.charges.service import cash_in, charges
from pixgate.runtime import Runtime
from pixgate.webhooks import service as webhooks
from pixgate.webhooks.receiver import verify_signature
from tests.helpers import bearer, make_account
from tests.processes import PIXGATE, running
from tests.webhooks.receiver import Receiver

CHROMIUM = "/usr/bin/chromium"
LOADED_WIDTH = """image => image.complete ? image.naturalWidth : new Promise(done => {
    image.onload = image.onerror = () => done(image.naturalWidth);
})"""
"""An image's width once it has loaded (0 if it failed): visible is not yet loaded, and the QR
code is a request of its own, slower when the machine is busy."""
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
WIDER_THAN_PHONE = f"""() => [...document.querySelectorAll("body *")]
    .filter(e => e.getBoundingClientRect().right > {PHONE["width"]})
    .map(e => `${{e.tagName}}.${{e.className}}`).slice(0, 10)"""
"""The elements that stick out of a phone's screen, named in a failure."""

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


async def sign_in(page: Page, gateway: str, account: accounts.NewAccount) -> None:
    await page.goto(f"{gateway}/dashboard/login")
    await page.get_by_label("clientId").fill(account.client_id)
    await page.get_by_label("clientSecret").fill(account.client_secret)
    await page.get_by_role("button", name="Sign in").click()
    await expect(page).to_have_url(f"{gateway}/dashboard")


async def reload_until(page: Page, text: str, where: Locator) -> None:
    """Reload until `where` shows `text` (work of the gateway's worker lands a moment after)."""
    for _ in range(100):
        if text in await where.inner_text():
            return
        await page.wait_for_timeout(100)
        await page.reload()
    await expect(where).to_contain_text(text)


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

    # Settings > Webhooks: the rules are explained where they are broken, then two URLs are
    # added (the second one will fail), and a test event checks the first.
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
    receiver.plan("/down", *([500] * 20))
    await page.get_by_label("Event type").select_option("cash_out")
    await page.get_by_label("URL", exact=True).fill(receiver.url("/down"))
    await page.get_by_role("button", name="Save webhook").click()
    cash_out = page.get_by_role("region", name=re.compile("^cash_out"))
    await expect(cash_out).to_contain_text("2 of 3 active")
    await expect(cash_out).to_contain_text(receiver.url("/pix"))
    await expect(cash_out).to_contain_text("X-Token: ******")
    await expect(cash_out).to_contain_text("Ativo")
    assert "s3cr3t" not in await page.content()
    await cash_out.get_by_role(
        "button", name=f"Send test event to {receiver.url('/pix')} (cash_out)"
    ).click()
    await expect(page.get_by_role("status").first).to_have_text(
        f"Test event sent to {receiver.url('/pix')}: answered 200"
    )
    (test_event,) = receiver.at("/pix")
    assert json.loads(test_event.body)["type"] == "webhook.test"
    assert verify_signature(secret, test_event.headers, test_event.body)
    await shot(page, shots, "dashboard-webhooks")

    # A cash-out through the API; its webhook reaches both URLs and shows in the log.
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
    await receiver.wait_for(3)
    assert receiver.at("/pix")[1].headers["x-token"] == "s3cr3t"

    # The delivery log: one compact row per URL; Resend says what each URL answered.
    await page.get_by_role("link", name="Delivery log").click()
    log = page.get_by_role("table", name="Webhook deliveries")
    rows = log.locator("tbody tr")
    await reload_until(page, "200", rows.first)
    await reload_until(page, "500", rows.nth(1))
    await expect(rows).to_have_count(2)
    await expect(rows.first).to_contain_text("cash_out")
    await expect(rows.first).to_contain_text(receiver.url("/pix"))
    await expect(rows.first).to_contain_text("Entregue")
    await expect(rows.nth(1)).to_contain_text(receiver.url("/down"))
    await expect(rows.nth(1)).to_contain_text("500")
    await page.get_by_label("Status").select_option("delivered")
    await page.get_by_role("button", name="Filter").click()
    await expect(page.get_by_text("No events match these filters.")).to_be_visible()
    await page.get_by_label("Status").select_option("pending")
    await page.get_by_label("Event").select_option("cash_out")
    await page.get_by_role("button", name="Filter").click()
    await page.get_by_role("button", name=re.compile("^Resend evt_")).click()
    banner = page.get_by_role("status").first
    await expect(banner).to_contain_text("resent to 2 URLs")
    await expect(banner.locator("li.ok")).to_have_text(f"{receiver.url('/pix')} answered 200")
    await expect(banner.locator("li.failed")).to_have_text(
        f"{receiver.url('/down')} answered 500 (failed)"
    )
    resent = [r for r in receiver.at("/pix") if json.loads(r.body).get("type") != "webhook.test"]
    assert resent[1].headers["webhook-id"] == resent[0].headers["webhook-id"]
    await shot(page, shots, "dashboard-deliveries")

    # A delivery's page: the payload sent, each answer, and one more try to its URL alone.
    details = page.get_by_role("link", name=re.compile("^Details of the delivery of evt_"))
    await details.last.click()  # the second URL's
    await expect(page.get_by_role("heading", name=re.compile("^Delivery of evt_"))).to_be_visible()
    await expect(page.get_by_role("region", name="Delivery")).to_contain_text(receiver.url("/down"))
    await expect(page.locator("#payload")).to_contain_text(transaction_id)
    attempts = page.get_by_role("article")
    await expect(attempts.first).to_contain_text("HTTP 500")
    await expect(attempts.first).to_contain_text('{"received": true}')
    before = len(receiver.at("/down"))
    await page.get_by_role("button", name="Resend to this URL").click()
    await expect(page.get_by_role("status").first).to_have_text(
        f"Resent to {receiver.url('/down')}: answered 500 (failed)."
    )
    assert len(receiver.at("/down")) == before + 1
    await expect(page.get_by_role("article")).to_have_count(before + 1)
    await shot(page, shots, "dashboard-delivery")

    # Overview and transactions: balances and the statement, documents masked; a row opens
    # the transaction's page with its history and its webhook deliveries.
    await page.get_by_role("link", name="Overview").click()
    await expect(page.locator("#balance-available")).to_have_text("R$ 487,66")
    await expect(page.locator("#balance-total")).to_have_text("R$ 487,66")
    await expect(page.get_by_role("table")).to_contain_text("Confirmado")
    await shot(page, shots, "dashboard-overview")
    await page.get_by_role("link", name="Transactions", exact=True).click()
    await page.get_by_label("Type").select_option("WITHDRAW")
    await page.get_by_role("button", name="Filter").click()
    row = page.locator("tbody tr").first
    await expect(row).to_contain_text("R$ 12,34")
    await expect(row).to_contain_text("***.982.247-**")
    await expect(row).to_contain_text(re.compile(r"\d\d/\d\d/\d{4} \d\d:\d\d BRT"))
    assert CPF not in await page.content()
    await shot(page, shots, "dashboard-transactions")
    await row.get_by_role("link", name=f"Transaction {transaction_id}").click()
    await expect(page).to_have_url(f"{gateway}/dashboard/transactions/{transaction_id}")
    history = page.get_by_role("region", name="Status history").get_by_role("listitem")
    await expect(history).to_have_count(2)
    await expect(history.first).to_contain_text("Pendente")
    await expect(history.nth(1)).to_contain_text("Confirmado")
    deliveries = page.get_by_role("region", name="Webhook deliveries")
    await expect(deliveries).to_contain_text(receiver.url("/pix"))
    await expect(deliveries).to_contain_text(receiver.url("/down"))
    await shot(page, shots, "dashboard-transaction")

    # Charges: the list, then a charge from the form, its QR image (served by the gateway)
    # and code; paid from outside, its page shows it by itself.
    await page.get_by_role("link", name="Charges", exact=True).click()
    await expect(page.get_by_text("No charges yet.")).to_be_visible()
    await page.get_by_role("link", name="New charge").click()
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
    expiration = page.get_by_label("Expires after (seconds)")
    await expect(expiration).to_have_attribute("min", "60")  # the sandbox bank's minimum
    await expiration.fill("59")
    assert not await expiration.evaluate("field => field.checkValidity()")
    await expiration.fill("600")
    await page.get_by_label("Payer's CPF or CNPJ").fill(CPF)
    await page.get_by_role("button", name="Create charge").click()
    await expect(page.get_by_role("heading", name="Charge R$ 25,50")).to_be_visible()
    status = page.locator("#charge-status")
    await expect(status).to_have_text("Pendente")
    code = await page.get_by_label("Copy-and-paste code").input_value()
    assert code.startswith("000201") and "br.gov.bcb.pix" in code
    qr = page.get_by_role("img", name=re.compile("QR code"))
    await expect(qr).to_be_visible()
    assert await qr.evaluate(LOADED_WIDTH) > 100
    source = await qr.get_attribute("src")
    assert source is not None and source.startswith("/dashboard/charges/")
    await context.grant_permissions(["clipboard-read", "clipboard-write"], origin=gateway)
    await page.get_by_role("button", name="Copy code").click()
    await expect(page.locator(".copied")).to_have_text("Copied.")
    assert await page.evaluate("navigator.clipboard.readText()") == code
    await shot(page, shots, "dashboard-charge")
    async with httpx.AsyncClient(base_url=gateway, timeout=30) as api:
        paid = await api.post(
            "/sandbox/pix/pay",
            headers=await bearer(api, account),
            json={"pixCode": code, "payer": {"name": "Pagador", "document": CPF}},
        )
    assert paid.status_code == 201, paid.text
    await expect(status).to_have_text("Confirmado", timeout=15_000)  # no reload by the test
    await expect(page.get_by_role("button", name=re.compile("Simulate payment"))).to_have_count(0)

    # In the sandbox, a second charge is paid from its page.
    await page.get_by_role("link", name="New charge").click()
    await page.get_by_label("Amount (BRL)").fill("7")
    await page.get_by_label("Description").fill("Pedido 43")
    await page.get_by_label("Payer's name").fill("João Lima")
    await page.get_by_label("Payer's CPF or CNPJ").fill(CPF)
    await page.get_by_role("button", name="Create charge").click()
    await page.get_by_role("button", name="Simulate payment (sandbox)").click()
    await expect(page.get_by_role("status").first).to_contain_text("Payment simulated")
    await expect(page.locator("#charge-status")).to_have_text("Confirmado")
    await page.get_by_role("link", name="All charges").click()
    listed = page.locator("tbody tr")
    await expect(listed).to_have_count(2)
    await expect(listed.first).to_contain_text("R$ 7,00")
    await expect(listed.nth(1)).to_contain_text("R$ 25,50")
    await expect(listed.nth(1)).to_contain_text("Confirmado")
    await shot(page, shots, "dashboard-charges")

    # Sign out: the session is gone.
    await page.get_by_role("button", name="Sign out").click()
    await expect(page).to_have_url(f"{gateway}/dashboard/login")
    await page.goto(f"{gateway}/dashboard")
    await expect(page).to_have_url(f"{gateway}/dashboard/login")


async def test_every_page_fits_a_phone(
    rt: Runtime, gateway: str, receiver: Receiver, context: BrowserContext, shots: Path
) -> None:
    """At 390x844 no page scrolls sideways, the navigation is all on screen, and a table's
    link can be tapped."""
    rt.settings = rt.settings.model_copy(update={"allow_insecure_webhooks": True})
    account = await make_account(rt, name="Loja Celular")
    await webhooks.add(rt, account.account_id, event_type="cash_in", url=receiver.url("/in"))
    created = await cash_in.create(
        rt,
        account.account_id,
        cash_in.CashInOrder(
            value=Decimal("19.90"),
            description="Pedido celular com uma descrição bem longa para ver se quebra",
            external_id=f"phone-{uuid.uuid4().hex}",
            payer_name="Maria Souza",
            payer_document=CPF,
        ),
    )
    await charges.sandbox_pay(rt, created.pix_code, charges.Payer("Pagador", CPF))
    await receiver.wait_for(1)
    page = await context.new_page()
    await page.set_viewport_size(PHONE)
    await sign_in(page, gateway, account)
    tx = created.transaction_id
    log = await webhooks.delivery_log(rt, account.account_id)
    delivery_id = log.events[0].deliveries[0].id
    for path in (
        "/dashboard",
        "/dashboard/transactions",
        f"/dashboard/transactions/{tx}",
        "/dashboard/charges",
        "/dashboard/charges/new",
        f"/dashboard/charges/{tx}",
        "/dashboard/webhooks",
        "/dashboard/deliveries",
        f"/dashboard/deliveries/{delivery_id}",
    ):
        await page.goto(f"{gateway}{path}")
        width = await page.evaluate("document.documentElement.scrollWidth")
        assert width <= PHONE["width"], (path, width, await page.evaluate(WIDER_THAN_PHONE))
        for name in ("Overview", "Transactions", "Charges", "Webhooks", "Delivery log"):
            link = page.get_by_role("navigation").get_by_role("link", name=name, exact=True)
            await expect(link).to_be_in_viewport()
    await page.goto(f"{gateway}/dashboard/charges/{tx}")
    await expect(page.get_by_label("Copy-and-paste code")).to_be_visible()
    await shot(page, shots, "dashboard-phone")
    await page.goto(f"{gateway}/dashboard/transactions")
    link = page.get_by_role("link", name=f"Transaction {tx}")
    await link.scroll_into_view_if_needed()
    await expect(link).to_be_in_viewport(ratio=1)  # whole: not cut off at the right
    await link.click()
    await expect(page).to_have_url(f"{gateway}/dashboard/transactions/{tx}")
    await page.get_by_role("navigation").get_by_role("link", name="Delivery log").click()
    details = page.get_by_role("link", name=re.compile("^Details of the delivery"))
    await details.scroll_into_view_if_needed()
    await expect(details).to_be_in_viewport(ratio=1)
    await details.click()
    await expect(page.locator("#payload")).to_contain_text(str(tx))


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
