"""The API Pix problem rules: the document's statuses and types, and `violacoes`."""

from __future__ import annotations

import pytest

from pixgate.core.http import problems


@pytest.mark.parametrize(
    ("ours", "shown"),
    [(400, 400), (401, 403), (403, 403), (404, 404), (409, 400), (410, 400), (422, 400)],
)
def test_statuses_the_document_lacks_answer_as_its_own(ours: int, shown: int) -> None:
    assert problems.status_of(ours) == shown


def test_each_status_has_the_documents_type() -> None:
    invalid = problems.COB_INVALIDA
    assert problems.type_of(400, invalid) is invalid
    assert problems.type_of(403, invalid).uri == (
        "https://pix.bcb.gov.br/api/v2/error/AcessoNegado"
    )
    assert problems.type_of(404, invalid) is problems.NAO_ENCONTRADO
    assert problems.type_of(503, invalid) is problems.SERVICO_INDISPONIVEL
    assert problems.type_of(500, invalid) is problems.ERRO_INTERNO
    assert problems.type_of(415, invalid) is problems.REQUISICAO_INVALIDA


def test_violations_name_the_property_under_the_resource() -> None:
    found = problems.violations(
        ["valor.original: String should match pattern", "body: malformed JSON", "no field"],
        "cob",
    )
    assert found == [
        {"razao": "String should match pattern", "propriedade": "cob.valor.original"},
        {"razao": "malformed JSON", "propriedade": "cob"},
        {"razao": "no field", "propriedade": "cob"},
    ]
    assert problems.violations(["chave: required"], "") == [
        {"razao": "required", "propriedade": "chave"}
    ]
