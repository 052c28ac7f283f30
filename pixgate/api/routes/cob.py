"""PUT, GET and PATCH /cob/{txid} (4.14, 2.9; Central-Bank status codes; simple error body)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path

from pixgate.api.deps import CurrentAccount, RuntimeDep, SandboxScenario
from pixgate.api.errors import CentralBankRoute
from pixgate.api.schemas.cob import CobPatch, CobRequest
from pixgate.api.schemas.errors import SimpleError
from pixgate.domain.money import format_amount
from pixgate.services import cob
from pixgate.timestamps import iso

router = APIRouter(
    route_class=CentralBankRoute,
    tags=["cob"],
    responses={
        400: {"model": SimpleError},
        401: {"model": SimpleError},
        404: {"model": SimpleError},
        409: {"model": SimpleError},
    },
)
Txid = Annotated[str, Path(pattern=r"^[a-zA-Z0-9]{26,35}$")]


@router.put("/cob/{txid}", status_code=201, summary="Create an immediate charge")
async def create_cob(
    txid: Txid,
    body: CobRequest,
    rt: RuntimeDep,
    who: CurrentAccount,
    scenario: SandboxScenario,
) -> dict[str, Any]:
    created = await cob.create(rt, who.account_id, txid, _input(body), scenario=scenario)
    return shape(created)


@router.get("/cob/{txid}", summary="Read an immediate charge")
async def read_cob(txid: Txid, rt: RuntimeDep, who: CurrentAccount) -> dict[str, Any]:
    return shape(await cob.get(rt, who.account_id, txid))


@router.patch("/cob/{txid}", summary="Revise or cancel an immediate charge")
async def revise_cob(
    txid: Txid, body: CobPatch, rt: RuntimeDep, who: CurrentAccount
) -> dict[str, Any]:
    revised = await cob.revise(
        rt, who.account_id, txid, _input(body), cancel=body.status is not None
    )
    return shape(revised)


def _input(body: CobRequest | CobPatch) -> cob.CobInput:
    return cob.CobInput(
        expiracao=body.calendario.expiracao if body.calendario else None,
        devedor=body.devedor.model_dump(exclude_none=True) if body.devedor else None,
        original=body.valor.original if body.valor else None,
        modalidade_alteracao=body.valor.modalidadeAlteracao if body.valor else None,
        chave=body.chave,
        solicitacao_pagador=body.solicitacaoPagador,
        info_adicionais=[i.model_dump() for i in body.infoAdicionais]
        if body.infoAdicionais is not None
        else None,
    )


def shape(found: cob.Cob) -> dict[str, Any]:
    """2.9, plus `pixCopiaECola` for clients of the Central Bank's API, and `pix` once paid."""
    charge, body = found.charge, found.charge.body
    code = charge.pix_code
    out: dict[str, Any] = {
        "calendario": {
            "criacao": iso(charge.created_at),
            "expiracao": int((charge.expires_at - charge.created_at).total_seconds()),
        },
        "txid": charge.txid,
        "revisao": charge.revision,
        "loc": {"id": charge.id, "location": code, "tipoCob": "cob"},
        "location": code,
        "status": found.status,
        "valor": {
            "original": format_amount(charge.amount),
            "modalidadeAlteracao": body.get("modalidadeAlteracao", 0),
        },
        "pixCopiaECola": code,
    }
    for field in ("devedor", "chave", "solicitacaoPagador", "infoAdicionais"):
        if body.get(field) is not None:
            out[field] = body[field]
    payment = found.payment
    if payment is not None and payment.status == "CONFIRMED":
        out["pix"] = [
            {
                "endToEndId": payment.end_to_end_id,
                "txid": charge.txid,
                "valor": format_amount(payment.amount),
                "horario": iso(payment.processed_at),
            }
        ]
    return out
