"""PUT, GET and PATCH /cob/{txid} (Central-Bank status codes; simple error body)."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path

from pixgate.accounts.public import Caller, Scope, granted
from pixgate.charges.schemas.cob import CobPatch, CobRequest, CobResponse
from pixgate.charges.service import cob
from pixgate.core.http.error_schemas import SimpleError
from pixgate.core.http.errors import CentralBankRoute

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
Writer = Annotated[Caller, granted(Scope.COB_WRITE)]
ScenarioWriter = Annotated[Caller, granted(Scope.COB_WRITE, scenario=True)]
Reader = Annotated[Caller, granted(Scope.COB_READ)]


@router.put(
    "/cob/{txid}",
    status_code=201,
    response_model=CobResponse,
    response_model_exclude_none=True,
    summary="Create an immediate charge",
)
async def create_cob(
    txid: Txid,
    body: CobRequest,
    caller: ScenarioWriter,
) -> CobResponse:
    created = await cob.create(
        caller.rt, caller.account_id, txid, _input(body), instructions=caller.instructions
    )
    return CobResponse.of(created)


@router.get(
    "/cob/{txid}",
    response_model=CobResponse,
    response_model_exclude_none=True,
    summary="Read an immediate charge",
)
async def read_cob(txid: Txid, caller: Reader) -> CobResponse:
    return CobResponse.of(await cob.get(caller.rt, caller.account_id, txid))


@router.patch(
    "/cob/{txid}",
    response_model=CobResponse,
    response_model_exclude_none=True,
    summary="Revise or cancel an immediate charge",
)
async def revise_cob(txid: Txid, body: CobPatch, caller: Writer) -> CobResponse:
    revised = await cob.revise(
        caller.rt, caller.account_id, txid, _input(body), cancel=body.status is not None
    )
    return CobResponse.of(revised)


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
