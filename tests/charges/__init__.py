"""Tests of charges: cash-in, cob, splits."""
