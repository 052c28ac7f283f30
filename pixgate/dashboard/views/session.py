"""The dashboard's session cookie and CSRF tokens, signed with the gateway's dashboard key.

A session is `clientId.sid.expires.mac`: the credential that signed in, a random session id,
the end of its life (Unix seconds), and an HMAC-SHA256 of the three under
`Runtime.dashboard_key`. Nothing in it is secret, nothing in it can be changed, and the
account is not in it: every request re-reads the credential's account (`auth.signed_in`),
so a revoked credential's sessions end at once. Its life is measured on the time its callers
pass, the runtime's clock (`Runtime.clock`), so a test can move past the end of a session.

CSRF tokens are HMACs too, so nothing is stored: a signed-in form's token is bound to the
session id (a new sign-in makes new tokens), the sign-in form's to a random nonce kept in a
short-lived cookie of its own (double submit). Both cookies are HttpOnly and SameSite=Strict.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime

SESSION_COOKIE = "pixgate_session"
LOGIN_COOKIE = "pixgate_login"
PATH = "/dashboard"
LOGIN_NONCE_TTL_S = 3600


@dataclass(frozen=True, slots=True)
class Session:
    client_id: str
    sid: str
    expires_at: int


def _mac(key: bytes, purpose: str, value: str) -> str:
    digest = hmac.new(key, f"{purpose}|{value}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


def issue(key: bytes, client_id: str, *, now: datetime, ttl: int) -> tuple[str, Session]:
    """A new session (a new sid on every sign-in: no fixation) and its cookie value."""
    session = Session(client_id, secrets.token_urlsafe(16), int(now.timestamp()) + ttl)
    payload = f"{session.client_id}.{session.sid}.{session.expires_at}"
    return f"{payload}.{_mac(key, 'session', payload)}", session


def read(key: bytes, cookie: str | None, *, now: datetime) -> Session | None:
    """The session of a cookie whose MAC holds and whose life has not ended; else None."""
    if not cookie or len(cookie) > 256:
        return None
    parts = cookie.split(".")
    if len(parts) != 4 or not parts[2].isascii() or not parts[2].isdigit():
        return None
    payload = ".".join(parts[:3])
    if not hmac.compare_digest(parts[3], _mac(key, "session", payload)):
        return None
    session = Session(parts[0], parts[1], int(parts[2]))
    return session if session.expires_at > now.timestamp() else None


def csrf_token(key: bytes, session: Session) -> str:
    return _mac(key, "csrf", session.sid)


def new_login_nonce() -> str:
    return secrets.token_urlsafe(16)


def login_csrf_token(key: bytes, nonce: str) -> str:
    return _mac(key, "login", nonce)


def same(expected: str, given: str | None) -> bool:
    return given is not None and hmac.compare_digest(expected.encode(), given.encode())
