"""The public module of refunds: what other features use of it, and the only module they
import."""

from pixgate.refunds import service
from pixgate.refunds.queries.received import received_pix
from pixgate.refunds.rules import RETURN_KINDS, ReceivedPix, RefundKind, pix_body
from pixgate.refunds.schemas import Pix, RefundOutRequest, RefundOutResponse

__all__ = [
    "RETURN_KINDS",
    "Pix",
    "ReceivedPix",
    "RefundKind",
    "RefundOutRequest",
    "RefundOutResponse",
    "pix_body",
    "received_pix",
    "service",
]
