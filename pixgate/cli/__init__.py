"""The `pixgate` command line (`pixgate.cli:app`, the console script)."""

from pixgate.cli.main import app

__all__ = ["app"]
