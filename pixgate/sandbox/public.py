"""The public module of sandbox: what other features use of it, and the only module they
import."""

from pixgate.sandbox import rules
from pixgate.sandbox.bank import SandboxBank, synthetic_holder

__all__ = ["SandboxBank", "rules", "synthetic_holder"]
