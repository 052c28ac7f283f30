"""Webhook URLs and custom headers that every way of registering one refuses (API, dashboard,
command line), one entry per class of character; the tests of each path share them."""

from __future__ import annotations

INVISIBLE = {
    "CR": "\r",
    "LF": "\n",
    "CRLF": "\r\n",
    "NUL": "\x00",
    "TAB": "\t",
    "ESC (C0 control)": "\x1b",
    "DEL": "\x7f",
    "NEL (C1 control)": "\x85",
    "LINE SEPARATOR": "\u2028",
    "NO-BREAK SPACE": "\u00a0",
    "ZERO WIDTH SPACE": "\u200b",
    "RIGHT-TO-LEFT OVERRIDE": "\u202e",
}
"""Characters that break a request line or a header, or hide in one."""

URLS = {
    "header injection": "https://hooks.example.com/h\r\nX-Evil: 1",
    "space": "https://hooks.example.com/a b",
    **{name: f"https://hooks.example.com/a{char}b" for name, char in INVISIBLE.items()},
}

HEADER_NAMES = {
    "space": "X Token",
    "colon": "X-Token:",
    "separator": "X(Token)",
    "slash": "X/Token",
    "non-ASCII": "X-Tökén",
    "too long": "X" * 257,
    **{name: f"X{char}Token" for name, char in INVISIBLE.items()},
}
"""Anything outside RFC 9110's token characters, or longer than 256."""

HEADER_VALUES = {
    "header injection": "abc\r\nX-Evil: 1",
    "leading space": " abc",
    "trailing space": "abc ",
    "non-ASCII": "São Paulo",
    "too long": "x" * 1025,
    **{name: f"a{char}b" for name, char in INVISIBLE.items()},
}
"""Anything but visible ASCII with spaces between characters, or longer than 1024."""

VALID_URL = "https://hooks.example.com/pix"
