"""An answer's JSON read with every number exact.

pydantic's JSON mode reads a number with a fraction through a binary float, so a balance of
92233720368547758.07 would reach a `Decimal` field as 92233720368547760. Read here, each
such number is the `Decimal` of the digits the gateway wrote (`2.50` stays `Decimal("2.50")`),
and the models validate the result in Python mode.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any


def loads(content: bytes) -> Any:
    """The JSON value of `content`; raises ValueError when it is not JSON."""
    return json.loads(content, parse_float=Decimal)
