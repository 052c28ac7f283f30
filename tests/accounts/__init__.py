"""Tests of accounts: sign-in, tokens and their certificates, revocation, names."""
