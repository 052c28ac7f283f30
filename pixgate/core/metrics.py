"""What a scrape of one process reads: its own counters and histograms, and gauges read at
scrape time.

Counters and histograms live in prometheus_client's default registry, defined beside the
code that moves them (requests in `core.http.middleware`, settlements in
`payouts.service.metrics`, webhook attempts in `webhooks.service.metrics`, jobs in
`jobs.metrics`). A gauge whose value already exists somewhere (the pool's connections, the
jobs table) is not kept up to date on every change: it is read when Prometheus asks, so it
costs nothing between scrapes. `/metrics` serves both (`pixgate.ops`); `pixgate worker
--metrics-port` serves the same for a process without the API (`serve`).

Several API processes on one port (`pixgate serve --workers N`) answer scrapes in turn, so
each writes its counters and histograms to files in one directory, and whichever answers
sums them all (prometheus_client's multiprocess mode, `shared_by`).
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from prometheus_client import REGISTRY, start_http_server
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.metrics import MetricWrapperBase
from prometheus_client.metrics_core import Metric
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.registry import Collector

from pixgate.core.db.pool import Database

NETWORK_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30)
"""Histogram buckets (seconds) of a call over the network: the settling bank's answer, a
webhook POST, up to their timeouts."""


Labelled = TypeVar("Labelled", bound=MetricWrapperBase)


@functools.cache
def labelled(metric: Labelled, *values: str) -> Labelled:
    """`metric.labels(*values)`, found once: prometheus_client builds the key and takes a
    lock on every call, a microsecond each time on the path of every request and job. The
    label values of pixgate's metrics are few (routes, statuses, kinds, outcomes)."""
    return metric.labels(*values)


MULTIPROCESS_DIR = "PROMETHEUS_MULTIPROC_DIR"
"""Where every API process writes its counters when there are several (prometheus_client
reads it as it is imported, so it is set before they start)."""


@contextmanager
def shared_by(processes: int) -> Iterator[None]:
    """For `processes` API processes sharing one port: with more than one, a fresh directory
    for their counters while they run, removed after (counts of processes that ended stay in
    it until then, so totals never go back)."""
    if processes <= 1:
        yield
        return
    directory = tempfile.mkdtemp(prefix="pixgate-metrics-")
    os.environ[MULTIPROCESS_DIR] = directory
    try:
        yield
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _counted() -> Collector:
    """This process's counters and histograms, or every API process's summed when they share
    a directory."""
    if os.environ.get(MULTIPROCESS_DIR):
        return MultiProcessCollector(None)  # type: ignore[no-untyped-call]
    return REGISTRY


class PoolUsage:
    """This process's connections to PostgreSQL, as asyncpg's pool counts them now."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def collect(self) -> Iterator[Metric]:
        pool = self.db.pool
        size, idle = pool.get_size(), pool.get_idle_size()
        yield _gauge("pixgate_db_pool_size", "Connections the pool holds open", size)
        yield _gauge(
            "pixgate_db_pool_max_size", "Most connections the pool may open", pool.get_max_size()
        )
        yield _gauge("pixgate_db_pool_in_use", "Connections taken from the pool", size - idle)
        yield _gauge("pixgate_db_pool_idle", "Open connections waiting in the pool", idle)


def _gauge(name: str, documentation: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, value=value)


class Families:
    """Metric families already read (the jobs table's, by the scrape that serves them)."""

    def __init__(self, families: Iterable[Metric]) -> None:
        self.families = list(families)

    def collect(self) -> Iterator[Metric]:
        yield from self.families


class Scrape:
    """The process's metrics (the default registry) and those read at scrape time."""

    def __init__(self, *read_now: Collector) -> None:
        self.read_now = read_now

    def collect(self) -> Iterator[Metric]:
        yield from _counted().collect()
        for collector in self.read_now:
            yield from collector.collect()


def serve(db: Database, host: str, port: int) -> Callable[[], None]:
    """Serve this process's metrics and its pool's usage at http://host:port/metrics from a
    thread of its own (prometheus_client's server), for a process with no API; returns
    what stops it."""
    server, thread = start_http_server(port, host, registry=Scrape(PoolUsage(db)))

    def stop() -> None:
        server.shutdown()
        server.server_close()
        thread.join()

    return stop
