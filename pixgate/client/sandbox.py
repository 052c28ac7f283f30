"""The sandbox's own operations (mounted only while `PIXGATE_SANDBOX` is on): the payer's
side of a PIX and the bank's side of a MED, acting on the caller's account, to try an
integration end to end. Never retried: each call is a payment or a case."""

from __future__ import annotations

from urllib.parse import quote

from pixgate.client.calls import Call, reader
from pixgate.med.schemas import MedItem, SandboxMedAnalysis, SandboxMedRequest
from pixgate.refunds.schemas import RefundOutRequest, RefundOutResponse
from pixgate.sandbox.schemas import Received, SandboxIncomingRequest, SandboxPayRequest


def pay(payment: SandboxPayRequest) -> Call[Received]:
    """`POST /sandbox/pix/pay`: a payer pays the charge or cob a copy-and-paste code names."""
    return Call("POST", "/sandbox/pix/pay", reader(Received), body=payment)


def incoming(payment: SandboxIncomingRequest) -> Call[Received]:
    """`POST /sandbox/pix/incoming`: a PIX received without a charge."""
    return Call("POST", "/sandbox/pix/incoming", reader(Received), body=payment)


def refund_out(transaction_id: str, request: RefundOutRequest) -> Call[RefundOutResponse]:
    """`POST /sandbox/pix/{transactionId}/refund-out`: the receiver of a cash-out returns
    (part of) it."""
    path = f"/sandbox/pix/{quote(transaction_id, safe='')}/refund-out"
    return Call("POST", path, reader(RefundOutResponse), body=request)


def open_med(case: SandboxMedRequest) -> Call[MedItem]:
    """`POST /sandbox/med`: the payer's bank opens a MED case on a PIX received."""
    return Call("POST", "/sandbox/med", reader(MedItem), body=case)


def analyse_med(case_id: int, analysis: SandboxMedAnalysis) -> Call[MedItem]:
    """`POST /sandbox/med/{id}/analysis`: the case's outcome."""
    return Call("POST", f"/sandbox/med/{case_id}/analysis", reader(MedItem), body=analysis)
