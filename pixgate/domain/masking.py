"""Document masking, the one rule used in lists, webhooks and the dashboard.

- CPF `12345678909` -> `***.456.789-**` (the middle six digits shown).
- CNPJ `12345678000195` -> `**.345.678/0001-**` (characters 3 to 12 shown; alphanumeric too).
- Anything else: every character but the last two replaced by `*`.
"""

from __future__ import annotations

from pixgate.domain.documents import is_cnpj_form, is_cpf_form, only_document_chars


def mask_document(document: str | None) -> str | None:
    if document is None:
        return None
    value = only_document_chars(document)
    if is_cpf_form(value):
        return f"***.{value[3:6]}.{value[6:9]}-**"
    if is_cnpj_form(value):
        return f"**.{value[2:5]}.{value[5:8]}/{value[8:12]}-**"
    return "*" * max(len(value) - 2, 0) + value[-2:]
