"""What the dashboard shows for the gateway's stored codes: every status in pt-BR, in one
table, and every time as `dd/mm/aaaa HH:MM` with its time zone named.

The database and the API keep their codes (`CONFIRMED`, `ATIVA`, `delivered`); a person
reads one language on every page, the spec's statement labels (`Pendente`, `Confirmado`)
extended to every status a page can meet. A code missing here is shown as it is stored, and
`tests/dashboard/test_labels.py` fails for any stored code the table does not name.
"""

from __future__ import annotations

from datetime import datetime
from typing import Final
from zoneinfo import ZoneInfo

STATUS_LABELS: Final[dict[str, str]] = {
    # transactions
    "PENDING": "Pendente",
    "CONFIRMED": "Confirmado",
    "ERROR": "Erro",
    # charges (cash-in in English codes, cob in the spec's)
    "EXPIRED": "Expirada",
    "ATIVA": "Ativa",
    "CONCLUIDA": "Concluída",
    "REMOVIDA_PELO_USUARIO_RECEBEDOR": "Removida pelo recebedor",
    "REMOVIDA_PELO_PSP": "Removida pelo PSP",
    # webhook deliveries and events
    "pending": "Pendente",
    "delivered": "Entregue",
    "failed": "Falhou",
    "none": "Sem URL",
    # webhook URLs
    "active": "Ativo",
    "inactive": "Inativo",
}
"""Every status a dashboard page shows, by its stored code."""

BADGES: Final[dict[str, str]] = {
    "Pendente": "pending",
    "Ativa": "pending",
    "Confirmado": "confirmed",
    "Concluída": "confirmed",
    "Entregue": "confirmed",
    "Ativo": "confirmed",
    "Erro": "error",
    "Expirada": "error",
    "Falhou": "error",
}
"""The badge colour of a label: waiting, done, or gone wrong (others are grey)."""

ZONE_NAMES: Final[dict[str, str]] = {
    "America/Sao_Paulo": "BRT",
    "America/Bahia": "BRT",
    "America/Fortaleza": "BRT",
    "America/Recife": "BRT",
    "America/Belem": "BRT",
    "America/Maceio": "BRT",
    "America/Araguaina": "BRT",
    "America/Santarem": "BRT",
    "America/Manaus": "AMT",
    "America/Cuiaba": "AMT",
    "America/Campo_Grande": "AMT",
    "America/Porto_Velho": "AMT",
    "America/Boa_Vista": "AMT",
    "America/Rio_Branco": "ACT",
    "America/Eirunepe": "ACT",
    "America/Noronha": "FNT",
    "UTC": "UTC",
    "Etc/UTC": "UTC",
}
"""Brazil's zones by their usual names: the time zone database writes them as offsets
(`-03`) since Brazil dropped daylight saving time."""


def status_label(code: str) -> str:
    return STATUS_LABELS.get(code, code)


def badge(code: str) -> str:
    """The CSS class of a status's badge."""
    return BADGES.get(status_label(code), "")


def zone_name(zone: ZoneInfo, at: datetime) -> str:
    """`BRT` for America/Sao_Paulo; a zone the table does not name shows its abbreviation
    when it has one (`CET`), else its key."""
    named = ZONE_NAMES.get(zone.key)
    if named:
        return named
    abbreviation = at.astimezone(zone).tzname() or ""
    return abbreviation if abbreviation.isalpha() else zone.key


def local_time(value: datetime | str | None, zone: ZoneInfo) -> str:
    """`25/11/2026 14:05 BRT`: the day first, as Brazil writes it, and the zone named."""
    if value is None:
        return ""
    at = datetime.fromisoformat(value) if isinstance(value, str) else value
    local = at.astimezone(zone)
    return f"{local:%d/%m/%Y %H:%M} {zone_name(zone, at)}"


def answer(status_code: int | None, error: str | None, *, ok: bool) -> str:
    """What a URL did with one POST, for a banner: `answered 200`, `answered 500 (failed)`,
    `did not answer (ConnectError: ...)`."""
    if status_code is None:
        return f"did not answer ({error or 'no answer'})"
    if ok:
        return f"answered {status_code}"
    return f"answered {status_code} (failed{': ' + error if error else ''})"
