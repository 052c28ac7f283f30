"""Dashboard: page rendering, sessions and messages for people."""
