"""The public module of refunds: what other features use of it, and the only module they
import."""

from pixgate.refunds import service
from pixgate.refunds.rules import RETURN_KINDS, RefundKind
from pixgate.refunds.schemas import RefundOutRequest, RefundOutResponse

__all__ = ["RETURN_KINDS", "RefundKind", "RefundOutRequest", "RefundOutResponse", "service"]
