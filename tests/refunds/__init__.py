"""Tests of refunds of received and sent PIX."""
