"""Finished jobs are deleted after a retention period: an index to find them by age.

Job rows are only the queue's bookkeeping (the payments, events and webhook attempts keep
the record), but every finished job stayed forever, so the table, its indexes and each
vacuum of it grew without bound. The workers now delete done jobs older than
`PIXGATE_JOB_RETENTION_S` a bounded chunk at a time (`jobs.queue.prune`); failed jobs stay for
an operator to read.

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-23
"""

from pixgate.core.db.migrate import execute_script

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None


def upgrade() -> None:
    execute_script(
        "CREATE INDEX ix_jobs_done_finished_at ON jobs (finished_at) WHERE status = 'done';"
    )


def downgrade() -> None:
    execute_script("DROP INDEX ix_jobs_done_finished_at;")
