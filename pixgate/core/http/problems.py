"""The Central Bank's API Pix errors: RFC 7807 problems with its `type` URIs.

Every answer of the family that is not a success is `application/problem+json` with `type`,
`title`, `status`, `detail` and, for a request whose fields fail, `violacoes`
(`{razao, propriedade}`). The types and titles are the document's own (its examples); the
status is the document's, which has no 401, 409 or 422: an unauthenticated call is its 403
`AcessoNegado`, and a conflict or a refused rule is its 400 "operação inválida" of the
resource.
"""

from __future__ import annotations

from dataclasses import dataclass

TYPE_BASE = "https://pix.bcb.gov.br/api/v2/error/"
MEDIA_TYPE = "application/problem+json"


@dataclass(frozen=True, slots=True)
class ProblemType:
    name: str
    title: str

    @property
    def uri(self) -> str:
        return TYPE_BASE + self.name


ACESSO_NEGADO = ProblemType("AcessoNegado", "Acesso Negado")
NAO_ENCONTRADO = ProblemType("NaoEncontrado", "Não Encontrado")
SERVICO_INDISPONIVEL = ProblemType("ServicoIndisponivel", "Serviço Indisponível")
ERRO_INTERNO = ProblemType("ErroInternoDoServidor", "Erro Interno do Servidor")
REQUISICAO_INVALIDA = ProblemType("RequisicaoInvalida", "Requisição inválida.")
LIMITE_EXCEDIDO = ProblemType("LimiteDeRequisicoesExcedido", "Limite de requisições excedido.")

COB_INVALIDA = ProblemType("CobOperacaoInvalida", "Cobrança inválida.")
DEVOLUCAO_INVALIDA = ProblemType("PixDevolucaoInvalida", "Devolução inválida.")
WEBHOOK_INVALIDO = ProblemType("WebhookOperacaoInvalida", "Webhook inválido.")
WEBHOOK_CONSULTA_INVALIDA = ProblemType("WebhookConsultaInvalida", "Consulta de webhooks inválida.")
LOCATION_INVALIDA = ProblemType("PayloadLocationOperacaoInvalida", "PayloadLocation inválido.")
PIX_CONSULTA_INVALIDA = ProblemType("PixConsultaInvalida", "Consulta de Pix inválida.")
COB_PAYLOAD_NAO_ENCONTRADO = ProblemType("CobPayloadNaoEncontrado", "Cobrança não encontrada.")
COB_CONSULTA_INVALIDA = ProblemType("CobConsultaInvalida", "Consulta de cobranças inválida.")
LOCATION_CONSULTA_INVALIDA = ProblemType(
    "PayloadLocationConsultaInvalida", "Consulta de locations inválida."
)

REFUSED_AS_INVALID = frozenset({400, 409, 410, 422})
"""Statuses the document does not use for its operations, answered as the resource's 400."""


def status_of(status: int) -> int:
    """The document's status for one of ours."""
    if status == 401:
        return 403
    if status in REFUSED_AS_INVALID:
        return 400
    return status


def type_of(status: int, invalid: ProblemType) -> ProblemType:
    """The problem type of a status of the document (`status_of`), `invalid` being the
    resource's own 400."""
    if status == 400:
        return invalid
    if status == 403:
        return ACESSO_NEGADO
    if status == 404:
        return NAO_ENCONTRADO
    if status == 429:
        return LIMITE_EXCEDIDO
    if status == 503:
        return SERVICO_INDISPONIVEL
    if status >= 500:
        return ERRO_INTERNO
    return REQUISICAO_INVALIDA


def violations(messages: list[str], resource: str) -> list[dict[str, str]]:
    """`field: reason` lines as the document's `violacoes`, the property named from the
    resource (`cob.valor.original`)."""
    found = []
    for line in messages:
        field, sep, reason = line.partition(": ")
        if not sep:
            field, reason = "", line
        prop = ".".join(part for part in (resource, "" if field == "body" else field) if part)
        found.append({"razao": reason, "propriedade": prop})
    return found
