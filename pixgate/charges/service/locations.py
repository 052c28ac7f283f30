"""Payload locations: where a dynamic BR Code points, and the API Pix's `/loc` resource.

A location's public URL is `{public_url}/qr/v2/{token}` (the document's
`GET /{pixUrlAccessToken}`); codes issued before under `{public_url}/loc/{token}` keep
working (`LEGACY_PATH`). A location serves at most one cob at a time: `POST /loc` makes an
empty one, a cob created with `loc.id` takes it, `DELETE /loc/{id}/txid` frees it again
and the cob keeps its status.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass

from pixgate.charges.queries import charges as charge_rows
from pixgate.charges.queries import locations as location_rows
from pixgate.charges.queries.locations import Location, LocationFilter
from pixgate.charges.rules.pages import PageRequest, Paging, Window
from pixgate.core.errors import NotFound
from pixgate.core.settings import Settings
from pixgate.runtime import Runtime

PAYLOAD_PATH = "/qr/v2/"
LEGACY_PATH = "/loc/"
"""Where BR Codes pointed before the API Pix's payload path: still answered, since printed
QR codes outlive any change of ours."""


def new_location_token() -> str:
    """An unguessable token: knowing one location must not reveal any other charge."""
    return secrets.token_hex(16)


def location_url(settings: Settings, token: str) -> str:
    """The charge's location, served by this gateway under `/qr/v2/{token}`."""
    return f"{settings.public_url.rstrip('/')}{PAYLOAD_PATH}{token}"


def location_text(settings: Settings, token: str) -> str:
    """The location as a BR Code and the API Pix's `location` carry it: without a scheme."""
    return without_scheme(location_url(settings, token))


def location_prefixes(settings: Settings) -> tuple[str, ...]:
    """The prefixes (without scheme) of this gateway's locations, current and legacy."""
    base = without_scheme(settings.public_url.rstrip("/"))
    return (base + PAYLOAD_PATH, base + LEGACY_PATH)


def without_scheme(url: str) -> str:
    return url.split("://", 1)[-1]


def jwks_url(settings: Settings) -> str:
    """Where the keys that sign location payloads are published (the JWS `jku`)."""
    return f"{settings.public_url.rstrip('/')}/.well-known/pix-jwks.json"


async def create(rt: Runtime, account_id: int, tipo_cob: str) -> Location:
    """`POST /loc`: an empty location of the account, for a cob created later."""
    async with rt.db.begin() as conn:
        return await location_rows.insert(
            conn,
            account_id=account_id,
            token=new_location_token(),
            tipo_cob=tipo_cob,
            charge_id=None,
            created_at=rt.clock.now(),
        )


async def get(rt: Runtime, account_id: int, location_id: int) -> Location:
    async with rt.db.connection() as conn:
        found = await location_rows.get(conn, account_id, location_id)
    if found is None:
        raise NotFound(f"location {location_id} not found")
    return found


async def unlink(rt: Runtime, account_id: int, location_id: int) -> Location:
    """`DELETE /loc/{id}/txid`: the location serves no cob any more; the cob keeps its
    status, and its code no longer leads to it. A location already free stays so."""
    async with rt.db.begin() as conn:
        found = await location_rows.get(conn, account_id, location_id, lock=True)
        if found is None:
            raise NotFound(f"location {location_id} not found")
        await location_rows.unlink(conn, location_id)
    return Location(
        id=found.id,
        account_id=found.account_id,
        token=found.token,
        tipo_cob=found.tipo_cob,
        charge_id=None,
        created_at=found.created_at,
        txid=None,
    )


async def qr_code(rt: Runtime, account_id: int, location_id: int) -> str:
    """The copy-and-paste code of the cob the location serves; NotFound when it serves none."""
    async with rt.db.connection() as conn:
        found = await location_rows.get(conn, account_id, location_id)
        if found is None:
            raise NotFound(f"location {location_id} not found")
        if found.charge_id is None:
            raise NotFound(f"location {location_id} serves no cob")
        charge = await charge_rows.get(conn, found.charge_id)
    assert charge is not None
    return charge.pix_code


@dataclass(frozen=True, slots=True)
class LocationQuery:
    window: Window
    linked: bool | None
    tipo_cob: str | None
    page: PageRequest


@dataclass(frozen=True, slots=True)
class LocationPage:
    locations: list[Location]
    paging: Paging


async def page(rt: Runtime, account_id: int, query: LocationQuery) -> LocationPage:
    """`GET /loc`: the account's locations created in the window, oldest first."""
    where = LocationFilter(
        account_id=account_id,
        start=query.window.start,
        end=query.window.end,
        linked=query.linked,
        tipo_cob=query.tipo_cob,
        offset=query.page.offset,
        limit=query.page.size,
    )
    async with rt.db.connection() as conn:
        found, total = await location_rows.page(conn, where)
    return LocationPage(found, Paging.of(query.page, total))
