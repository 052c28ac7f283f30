"""The public module of payouts: what other features use of it, and the only module they
import."""

from pixgate.payouts.queries import payments
from pixgate.payouts.rules import AcceptMode
from pixgate.payouts.schemas.cash_out_qrcode import EXAMPLE_CODE
from pixgate.payouts.service import external_ids, outgoing

__all__ = ["EXAMPLE_CODE", "AcceptMode", "external_ids", "outgoing", "payments"]
