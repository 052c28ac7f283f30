"""Payouts: use cases: each public function is one transaction."""
