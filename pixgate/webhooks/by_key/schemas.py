"""The wire shapes of the API Pix's webhooks by key: `WebhookSolicitado`, `WebhookCompleto`,
`WebhooksConsultados` and its `ParametrosConsultaWebhooks`, in the document's own names."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from pixgate.core.http.schemas import ApiModel, Paginacao, example
from pixgate.core.timestamps import iso
from pixgate.refunds.public import Pix
from pixgate.webhooks.queries.by_key import KeyWebhook
from pixgate.webhooks.rules.webhooks import MAX_URL_LENGTH, PIX_CALLBACK_PATH


class WebhookSolicitado(BaseModel):
    """The body of PUT /webhook/{chave}."""

    model_config = ConfigDict(
        json_schema_extra=example({"webhookUrl": "https://pix.example.com/api/webhook/"})
    )

    webhookUrl: str = Field(
        min_length=1,
        max_length=MAX_URL_LENGTH - len(PIX_CALLBACK_PATH),
        description="HTTPS URL of a public host; each notification is POSTed to it + `/pix`",
        json_schema_extra={"format": "uri"},
    )


class WebhookCompleto(ApiModel):
    webhook_url: str = Field(json_schema_extra={"format": "uri"})
    chave: str = Field(description="the key, in the DICT's spelling")
    criacao: str = Field(
        description="when the webhook was registered (RFC 3339)",
        json_schema_extra={"format": "date-time"},
    )

    @classmethod
    def of(cls, webhook: KeyWebhook) -> WebhookCompleto:
        return cls(webhook_url=webhook.url, chave=webhook.pix_key, criacao=iso(webhook.created_at))


class ParametrosConsultaWebhooks(ApiModel):
    inicio: str | None = Field(default=None, json_schema_extra={"format": "date-time"})
    fim: str | None = Field(default=None, json_schema_extra={"format": "date-time"})
    paginacao: Paginacao

    @classmethod
    def of(
        cls, start: datetime | None, end: datetime | None, paginacao: Paginacao
    ) -> ParametrosConsultaWebhooks:
        return cls(inicio=iso(start), fim=iso(end), paginacao=paginacao)


class WebhooksConsultados(ApiModel):
    parametros: ParametrosConsultaWebhooks
    webhooks: list[WebhookCompleto]


class PixNotificados(BaseModel):
    """The callback's body, POSTed to `{webhookUrl}/pix`: the Pix as GET /pix/{e2eid} answers
    it (the document allows several per call; pixgate sends one)."""

    pix: list[Pix]
