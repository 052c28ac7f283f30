"""orjson-encoded responses: the encoder is a measurable share of a fast endpoint."""

from __future__ import annotations

from typing import Any

import orjson
from fastapi import Response
from fastapi.responses import JSONResponse as _JSONResponse
from pydantic import BaseModel

from pixgate.core.db.replica import Read
from pixgate.core.money import json_number

READ_SOURCE = "X-Read-Source"
READ_LAG = "X-Read-Lag"


class JSONResponse(_JSONResponse):
    """Amounts (`Decimal`s) are written as the exact JSON numbers they are."""

    def render(self, content: Any) -> bytes:
        return orjson.dumps(content, default=json_number)


def exact(model: BaseModel, *, status_code: int = 200) -> JSONResponse:
    """The answer of a route whose model carries amounts (`schemas.common.Money`).

    FastAPI renders a response model through pydantic's JSON mode, which writes a `Decimal`
    as a string; the model's Python dump keeps the Decimals, which `render` writes as
    numbers. The route still declares its `response_model`, for the OpenAPI document.
    """
    return JSONResponse(model.model_dump(by_alias=True), status_code=status_code)


def show_read(response: Response, read: Read) -> None:
    """Tell the client where a read that may lag came from: `primary` or `standby`, and how
    many seconds behind the primary that was."""
    response.headers[READ_SOURCE] = read.source
    response.headers[READ_LAG] = f"{read.lag_s:.3f}"
