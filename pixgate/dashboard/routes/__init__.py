"""Dashboard: HTTP routes: parse, call a service, shape the answer."""
