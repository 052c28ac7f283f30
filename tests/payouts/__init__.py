"""Tests of payouts: cash-out, QR cash-out, DICT transfer, acceptance, settlement."""
