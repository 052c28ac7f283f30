"""The cash-out's and the QR cash-out's 201 are written straight from the payout, without
their models: each is, byte for byte, what FastAPI would render from its declared model, for
every payout a cash-out answers."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from pixgate.client.calls import reader
from pixgate.core.http.responses import JSONResponse
from pixgate.core.http.schemas import iso
from pixgate.core.labels import TransactionStatus
from pixgate.payouts.schemas.cash_out import CashOutResponse
from pixgate.payouts.schemas.cash_out_qrcode import QrCashOutResponse
from pixgate.payouts.service.outgoing import CashOut

payouts = st.builds(
    CashOut,
    transaction_id=st.uuids(),
    external_id=st.text(min_size=1, max_size=255),
    status=st.sampled_from(TransactionStatus),
    created_at=st.datetimes(
        min_value=datetime(2000, 1, 1),
        max_value=datetime(2100, 1, 1),
        timezones=st.sampled_from([UTC, timezone(timedelta(hours=-3))]),
    ),
)


@pytest.mark.parametrize("declared", [CashOutResponse, QrCashOutResponse])
@given(created=payouts)
def test_the_answer_is_its_model_rendered(
    declared: type[CashOutResponse], created: CashOut
) -> None:
    model = declared.model_validate(
        {
            "transaction_id": str(created.transaction_id),
            "external_id": created.external_id,
            "status": created.status,
            "generate_time": iso(created.created_at),
        }
    )
    answer = declared.answer(created)
    # FastAPI renders a response model in JSON mode, by alias, through the app's JSONResponse
    assert answer.body == JSONResponse(model.model_dump(mode="json", by_alias=True)).body
    assert answer.status_code == 201
    assert reader(declared)(bytes(answer.body)) == model
