"""Tests of the shared core: money, ids, documents, keys, BR Code, errors, logging."""
