"""Tests of the sandbox's test routes and scenarios."""
