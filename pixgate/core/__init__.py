"""The shared core: money, ids, documents, errors, settings, clock, logging, the database pool
and the HTTP plumbing every feature's routes use."""
