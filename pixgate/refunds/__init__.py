"""Refunds (devoluções) of received and sent PIX."""
