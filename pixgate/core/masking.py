"""Masking: documents and webhook custom header values, the one rule each for every answer
(API, dashboard, command line) and every webhook.

- CPF `12345678909` -> `***.456.789-**`: digits 4 to 9 shown, formatted.
- CNPJ `12345678000195` -> `**.345.678/0001-**`: characters 3 to 12 shown, formatted; an
  alphanumeric CNPJ the same way (`12ABC34501DE35` -> `**.ABC.345/01DE-**`).
- Punctuated input (`123.456.789-09`) is recognised after removing `.`, `-`, `/` and spaces.
- Anything else: every character but the last two replaced by `*` (`ABC123` -> `****23`).
- No document (`None`) stays `None`.

Enough is shown for a holder to recognise their document (the CPF pattern is the one
Brazilian payment receipts commonly print), while no answer or payload carries a complete one.

A webhook's custom header value is usually the credential its receiver checks: every
answer shows the header's name and `HIDDEN_HEADER_VALUE` in place of any value, so not even
its length shows. The value is written only when registering it.
"""

from __future__ import annotations

from collections.abc import Mapping

from pixgate.core.pix.documents import is_cnpj_form, is_cpf_form, only_document_chars


def mask_document(document: str | None) -> str | None:
    """The masked form of a stored (unmasked) document, by the rule above."""
    if document is None:
        return None
    value = only_document_chars(document)
    if is_cpf_form(value):
        return f"***.{value[3:6]}.{value[6:9]}-**"
    if is_cnpj_form(value):
        return f"**.{value[2:5]}.{value[5:8]}/{value[8:12]}-**"
    return "*" * max(len(document) - 2, 0) + document[-2:]


HIDDEN_HEADER_VALUE = "******"


def mask_header_values(headers: Mapping[str, str]) -> dict[str, str]:
    """Custom headers as answers show them: the names, each value hidden whole."""
    return dict.fromkeys(headers, HIDDEN_HEADER_VALUE)
