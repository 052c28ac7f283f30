"""Account names in any script: every charge and cob of an account whose name has no printable
Latin character answered 500 (the BR Code's merchant name). Names are transliterated for the
BR Code, with a fallback when nothing is left; the codes decode, and they are paid."""

from __future__ import annotations

import httpx
import pytest

from pixgate.core.pix import brcode
from pixgate.runtime import Runtime
from tests.helpers import bearer, make_account

CPF = "52998224725"
TXID = "names" + "0" * 25
NOTHING_LATIN = ["東京商店", "مطعم الشام", "Ωμέγα Ψ", "😀🎉", "\u0301\u0301", "ㅤ"]
"""Names of which nothing has a printable ASCII form (Greek letters have none in NFKD)."""
PARTLY_LATIN = {
    "Café 東京 Ltda": "Cafe Ltda",
    "Ｌｏｊａ Ｆｕｌｌ": "Loja Full",
    "Açougue\u00a0São\u2003João": "Acougue Sao Joao",
    "Loja 👩\u200d👩\u200d👧 Família Comércio de Alimentos": "Loja Familia Comercio de A",
}


async def pay(client: httpx.AsyncClient, headers: dict[str, str], code: str) -> None:
    paid = await client.post(
        "/sandbox/pix/pay",
        headers=headers,
        json={"pixCode": code, "payer": {"name": "Pagador", "document": CPF}},
    )
    assert paid.status_code == 201, paid.text


async def charge_and_cob_codes(
    client: httpx.AsyncClient, headers: dict[str, str]
) -> list[brcode.BrCode]:
    """A cash-in and a cob of the account, each paid; their BR Codes, decoded."""
    charge = await client.post(
        "/api/pix/cash-in",
        headers=headers,
        json={
            "transaction": {"value": "10.00", "description": "Pedido", "externalId": "n-1"},
            "payer": {"fullName": "Maria", "document": CPF},
        },
    )
    assert charge.status_code == 201, charge.text
    cob = await client.put(
        f"/cob/{TXID}",
        headers=headers,
        json={"calendario": {"expiracao": 3600}, "valor": {"original": "12.34"}},
    )
    assert cob.status_code == 201, cob.text
    codes = [charge.json()["pixCode"], cob.json()["pixCopiaECola"]]
    for code in codes:
        await pay(client, headers, code)
    return [brcode.decode(code) for code in codes]


@pytest.mark.parametrize("name", NOTHING_LATIN)
async def test_a_name_with_nothing_latin_gets_the_fallback(
    rt: Runtime, client: httpx.AsyncClient, name: str
) -> None:
    headers = await bearer(client, await make_account(rt, name=name))
    codes = await charge_and_cob_codes(client, headers)
    assert [code.merchant_name for code in codes] == [brcode.NAME_FALLBACK] * 2
    assert [code.amount_cents for code in codes] == [1000, 1234]


@pytest.mark.parametrize(("name", "merchant"), PARTLY_LATIN.items())
async def test_a_name_keeps_what_has_a_latin_form(
    rt: Runtime, client: httpx.AsyncClient, name: str, merchant: str
) -> None:
    headers = await bearer(client, await make_account(rt, name=name))
    codes = await charge_and_cob_codes(client, headers)
    assert [code.merchant_name for code in codes] == [merchant[: brcode.NAME_MAX].rstrip()] * 2
