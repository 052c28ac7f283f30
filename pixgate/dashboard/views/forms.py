"""What a dashboard route gets of a posted form: read once, its CSRF token checked, its fields.

Every POST route takes one of two dependencies and never reads the form itself, so no route
can forget the check or write its own (`tests/dashboard/test_pages.py` `TestCsrf` fails for
a route under `pixgate/dashboard/routes/` that reads a form or a token by hand, and for a
POST route of the app that takes neither dependency):

- `SignedInForm`, for every form of a signed-in page: the session (`Signed`) and the form,
  once the form's token matches the session's. A forged or missing token answers 403.
- `SignInForm`, for the sign-in form, which has no session yet: its token is bound to the
  nonce cookie the form was served with (double submit). A mismatch shows the form again
  with a fresh nonce (`render.SignInExpired`), 403.

The body's size was bounded before either runs: the screen of every route
(`core.http.intake.screen`) refuses a form larger than the route's `form_body_bytes` (413) before
anything decodes it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Request
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException as StarletteHTTPException

from pixgate.accounts.public import RuntimeDep
from pixgate.core.errors import ValidationFailed
from pixgate.core.http.intake.json_body import NUL_REASON
from pixgate.dashboard.views import session as sessions
from pixgate.dashboard.views.render import Signed, SignedIn, SignInExpired

CLIENT_ID_CHARS = 64
"""The sign-in form's clientId is cut here: it is shown back and keys the rate limit."""


async def read_form(request: Request) -> FormData:
    """The posted form; text no database can store (U+0000) is refused here, for every field."""
    form = await request.form()
    for name, value in form.multi_items():
        if (isinstance(value, str) and "\x00" in value) or "\x00" in name:
            raise ValidationFailed([f"{name.replace(chr(0), '')}: {NUL_REASON}"])
    return form


def field(form: FormData, name: str) -> str:
    """A text field, trimmed; a missing field or an uploaded file reads as empty."""
    value = form.get(name)
    return value.strip() if isinstance(value, str) else ""


def _token(form: FormData) -> str | None:
    given = form.get("csrf")
    return given if isinstance(given, str) else None


@dataclass(frozen=True, slots=True)
class SignedForm:
    """A signed-in form whose token held: who sent it, and what they sent."""

    signed: Signed
    form: FormData


async def signed_in_form(request: Request, signed: SignedIn) -> SignedForm:
    """Every signed-in form carries the session's token: a forged cross-site post has none.

    The session is resolved first, so a signed-out post still leads to the sign-in page."""
    form = await read_form(request)
    if not sessions.same(signed.csrf, _token(form)):
        raise StarletteHTTPException(
            403, "This form has expired or did not come from this dashboard. Reload the page."
        )
    return SignedForm(signed, form)


SignedInForm = Annotated[SignedForm, Depends(signed_in_form)]


@dataclass(frozen=True, slots=True)
class SignIn:
    """A sign-in form whose token matched its nonce cookie: the credential to check."""

    client_id: str
    secret: str


async def sign_in_form(request: Request, rt: RuntimeDep) -> SignIn:
    """The sign-in form's token is bound to the nonce cookie it was served with, since there
    is no session yet to bind it to: a post from another site has neither."""
    form = await read_form(request)
    client_id = field(form, "clientId")[:CLIENT_ID_CHARS]
    nonce = request.cookies.get(sessions.LOGIN_COOKIE) or ""
    expected = sessions.login_csrf_token(rt.dashboard_key, nonce)
    if not nonce or not sessions.same(expected, _token(form)):
        raise SignInExpired(client_id)
    secret = form.get("clientSecret")
    return SignIn(client_id, secret if isinstance(secret, str) else "")


SignInForm = Annotated[SignIn, Depends(sign_in_form)]
