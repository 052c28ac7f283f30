"""Accounts: pure rules: no I/O."""
