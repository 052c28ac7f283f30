"""Tests of the provider boundary: the sandbox's instructions and the bank's choice."""
