"""Med: sql."""
