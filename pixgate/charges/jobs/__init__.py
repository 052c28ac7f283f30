"""Charges: job handlers: reload by id, call a service."""
