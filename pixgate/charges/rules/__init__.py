"""Charges: pure rules: no I/O."""
