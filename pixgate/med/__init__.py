"""MED: special return requests (fraud and operational failure) and their refunds."""
