"""Taking payments: cash-in charges, cob (Central Bank charges), payload locations, expiry and
splits."""
