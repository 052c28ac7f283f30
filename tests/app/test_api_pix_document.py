"""The conformance helper itself: it passes an answer the document allows and fails one it does
not, and each erratum it applies is where ERRATA.md says."""

from __future__ import annotations

import base64
import json
from typing import Any

import httpx
import pytest

from tests.app import api_pix_document as doc

TXID = "fc9a4366ff3d4964b5dbc6c91a8722d3"
PROBLEM = "application/problem+json"

GOOD_COB: dict[str, Any] = {
    "calendario": {"criacao": "2026-11-25T12:00:00.000Z", "expiracao": 3600},
    "txid": TXID,
    "revisao": 0,
    "loc": {
        "id": 789,
        "location": "pix.example.com/qr/v2/9d36b84fc70b478fb95c12729b90ca25",
        "tipoCob": "cob",
        "txid": TXID,
        "criacao": "2026-11-25T12:00:00.000Z",
    },
    "location": "pix.example.com/qr/v2/9d36b84fc70b478fb95c12729b90ca25",
    "status": "ATIVA",
    "devedor": {"cpf": "12345678909", "nome": "Francisco da Silva"},
    "valor": {"original": "123.45"},
    "chave": "7d9f0335-8dcc-4054-9bf9-0dbd61d36906",
    "solicitacaoPagador": "Cobrança dos serviços prestados.",
}


def answer(status: int, body: Any, media_type: str = "application/json") -> httpx.Response:
    return httpx.Response(status, content=json.dumps(body), headers={"content-type": media_type})


def test_a_cob_the_document_allows_passes_and_comes_back() -> None:
    assert doc.assert_conforms(answer(200, GOOD_COB), "GET", "/cob/{txid}") == GOOD_COB
    assert doc.assert_conforms(answer(201, GOOD_COB), "put", "/cob/{txid}")["txid"] == TXID


@pytest.mark.parametrize(
    ("change", "complaint"),
    [
        ({"valor": {"original": "123,45"}}, "valor/original"),
        ({"status": None}, "status"),
        ({"txid": "short"}, "txid"),
        ({"calendario": {"criacao": "yesterday", "expiracao": 3600}}, "calendario/criacao"),
        ({"devedor": {"cpf": "123.456.789-09", "nome": "Francisco"}}, "devedor"),
        ({"location": "not a location"}, "location"),
    ],
)
def test_a_cob_the_document_refuses_fails_naming_the_member(
    change: dict[str, Any], complaint: str
) -> None:
    body = {**GOOD_COB, **change}
    body = {key: value for key, value in body.items() if value is not None}
    with pytest.raises(AssertionError, match=complaint):
        doc.assert_conforms(answer(200, body), "GET", "/cob/{txid}")


def test_an_undeclared_status_or_media_type_fails() -> None:
    with pytest.raises(AssertionError, match="not one of"):
        doc.assert_conforms(answer(409, GOOD_COB), "PUT", "/cob/{txid}")
    with pytest.raises(AssertionError, match="application/problem\\+json"):
        doc.assert_conforms(answer(404, _problem(404)), "GET", "/cob/{txid}")
    with pytest.raises(AssertionError, match="text/plain"):
        doc.assert_conforms(answer(200, GOOD_COB, "text/plain"), "GET", "/cob/{txid}")


def test_a_problem_validates_and_a_problem_without_its_status_does_not() -> None:
    assert doc.assert_conforms(answer(404, _problem(404), PROBLEM), "GET", "/cob/{txid}")
    incomplete = {k: v for k, v in _problem(403).items() if k != "status"}
    with pytest.raises(AssertionError, match="status"):
        doc.assert_conforms(answer(403, incomplete, PROBLEM), "GET", "/cob/{txid}")


def test_the_public_payload_is_a_jws_whose_claims_validate() -> None:
    claims = {
        "txid": TXID,
        "revisao": 0,
        "calendario": {
            "criacao": "2026-11-25T12:00:00Z",
            "apresentacao": "2026-11-25T12:00:05Z",
            "expiracao": 3600,
        },
        "status": "ATIVA",
        "valor": {"original": "123.45"},
        "chave": "7d9f0335-8dcc-4054-9bf9-0dbd61d36906",
    }
    jws = ".".join(
        base64.urlsafe_b64encode(json.dumps(part).encode()).decode().rstrip("=")
        for part in ({"alg": "PS256"}, claims)
    )
    response = httpx.Response(
        200, content=jws + ".c2ln", headers={"content-type": "application/jose"}
    )
    assert doc.assert_conforms(response, "GET", "/{pixUrlAccessToken}") == claims


def test_the_document_has_its_51_operations_and_their_scopes() -> None:
    found = list(doc.operations())
    assert len(found) == 51
    assert ("PUT", "/cob/{txid}") in found
    assert doc.scopes("PUT", "/cob/{txid}") == ["cob.write"]
    assert doc.scopes("GET", "/{pixUrlAccessToken}") == []
    assert doc.declared_statuses("GET", "/cob/{txid}") == [200, 403, 404, 503]


def test_erratum_1_patterns_lose_their_slashes() -> None:
    cob_list = doc.operation("GET", "/cob")
    cpf = next(p for p in cob_list["parameters"] if p["name"] == "cpf")
    assert cpf["schema"]["pattern"] == r"^\d{11}$"


def test_erratum_2_a_pix_list_requires_pix() -> None:
    schema = doc.document()["components"]["schemas"]["PixConsultados"]
    assert schema["required"] == ["parametros", "pix"]
    listed = {"parametros": _parametros(), "pix": []}
    assert doc.assert_conforms(answer(200, listed), "GET", "/pix") == listed


def test_erratum_3_a_webhook_is_read_back_with_its_chave() -> None:
    webhook = {
        "webhookUrl": "https://pix.example.com/api/webhook/",
        "chave": "40a0932d-1918-4eee-845d-35a2da1690dc",
        "criacao": "2026-11-25T12:00:00Z",
    }
    assert doc.assert_conforms(answer(200, webhook), "GET", "/webhook/{chave}") == webhook
    by_cnpj = {
        "webhookUrl": webhook["webhookUrl"],
        "cnpj": "12345678000195",
        "criacao": webhook["criacao"],
    }
    with pytest.raises(AssertionError, match="chave"):
        doc.assert_conforms(answer(200, by_cnpj), "GET", "/webhook/{chave}")


def _parametros() -> dict[str, Any]:
    return {
        "inicio": "2026-11-01T00:00:00Z",
        "fim": "2026-11-30T00:00:00Z",
        "paginacao": {
            "paginaAtual": 0,
            "itensPorPagina": 100,
            "quantidadeDePaginas": 1,
            "quantidadeTotalDeItens": 0,
        },
    }


def _problem(status: int) -> dict[str, Any]:
    name = {403: "AcessoNegado", 404: "NaoEncontrado"}[status]
    return {"type": f"https://pix.bcb.gov.br/api/v2/error/{name}", "title": name, "status": status}


def test_a_general_error_is_allowed_where_the_operation_does_not_list_it() -> None:
    """The document's "Gerais" errors may come from any endpoint: GET /cob lists no 400, yet
    its query errors are `CobConsultaInvalida` 400."""
    assert doc.general_errors()[400] == "RequisicaoInvalida"
    assert doc.error_types()["CobConsultaInvalida"] == 400
    invalid = {**_problem(404), "type": doc.ERROR_TYPE_BASE + "CobConsultaInvalida", "status": 400}
    assert doc.assert_conforms(answer(400, invalid, PROBLEM), "GET", "/cob")
    unknown = {**invalid, "type": doc.ERROR_TYPE_BASE + "CobQueryInvalid"}
    with pytest.raises(AssertionError, match="type the document does not list"):
        doc.assert_conforms(answer(400, unknown, PROBLEM), "GET", "/cob")
    mismatched = {**invalid, "status": 404}
    with pytest.raises(AssertionError):
        doc.assert_conforms(answer(400, mismatched, PROBLEM), "GET", "/cob")


def test_an_error_type_must_be_one_the_document_gives_the_operation() -> None:
    """Each type names its endpoints; a general one may come from any."""
    other = {**_problem(404), "type": doc.ERROR_TYPE_BASE + "PixDevolucaoInvalida", "status": 400}
    with pytest.raises(AssertionError, match="gives other operations"):
        doc.assert_conforms(answer(400, other, PROBLEM), "PUT", "/cob/{txid}")
    assert "CobNaoEncontrado" in doc.types_for("GET", "/cob/{txid}")
    assert "CobNaoEncontrado" not in doc.types_for("GET", "/pix/{e2eid}")
    assert "NaoEncontrado" in doc.types_for("GET", "/pix/{e2eid}")


def test_erratum_5_post_cob_answers_cob_operacao_invalida() -> None:
    invalid = {**_problem(404), "type": doc.ERROR_TYPE_BASE + "CobOperacaoInvalida", "status": 400}
    assert doc.assert_conforms(answer(400, invalid, PROBLEM), "POST", "/cob")
