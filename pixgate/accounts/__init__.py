"""Accounts, their credentials and certificates, sign-in (OAuth2 tokens), terms (fees) and
balances."""
