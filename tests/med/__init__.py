"""Tests of MED."""
