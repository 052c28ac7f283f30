"""Jobs: sql."""
