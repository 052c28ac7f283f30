"""Tests of the database core: pool faults, batches, row queues, SQL files, migrations."""
