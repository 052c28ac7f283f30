"""`--help` without a type on flags: `--json` takes no value, so it shows none.

Typer's Rich help (0.29) prints the type of every option, `<bool>` on a flag included, while
its plain help leaves flags bare (`TyperOption.get_help_record`). `install` makes the Rich
help do as the plain one: a flag, or a counter, shows no type.
"""

from __future__ import annotations

from typing import Any

from typer.core import TyperOption

_typed = TyperOption.display_type_rich


def _display_type_rich(self: TyperOption, ctx: Any) -> str | None:
    if self.is_flag or self.count:
        return None
    return _typed(self, ctx)


def install() -> None:
    """Once, before any help is printed (idempotent)."""
    TyperOption.display_type_rich = _display_type_rich  # type: ignore[method-assign]
