"""Sending payments: cash-out to a key, QR cash-out, DICT transfer, limits, acceptance and
settlement."""
