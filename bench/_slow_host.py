"""A host slower for its disk, made from this one: the bench and the PostgreSQL server share a
CPU quota (a Linux control group), while the disk flushes as fast as ever.

Two targets of bench/cash_out.py depend on how fast the CPU is beside the disk's flush (the
one-row ceiling is one flushed commit at a time, the gateway is bound by its cores), and the
hosts a bench lands on differ in exactly that. `--cpus` lets one host show both sides.

The quota covers this process and everything it starts (the gateway, wrk, pgbench, an
embedded server), and the server's processes that exist when the block opens (a backend
forked later by the postmaster joins its group). When the block closes, every process still
in the group goes back to where it came from. Needs root and a writable cgroup file system,
v1 (`cpu` controller) or v2.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import psutil
from _common import POSTGRES_NAMES

CGROUP_ROOT = Path("/sys/fs/cgroup")
PERIOD_US = 10_000
"""The quota's period: short, so that a throttled lock holder waits milliseconds, not a tenth
of a second (cgroup v1 refuses a quota under 1 ms, so 0.1 CPU is the least this allows)."""

GROUP = "pixgate-bench-slow-host"


class Hierarchy:
    """Where the CPU controller lives: cgroup v2's unified tree, or v1's `cpu` tree."""

    def __init__(self) -> None:
        if (CGROUP_ROOT / "cgroup.controllers").exists():
            self.root, self.version = CGROUP_ROOT, 2
        elif (CGROUP_ROOT / "cpu" / "cpu.cfs_quota_us").exists():
            self.root, self.version = CGROUP_ROOT / "cpu", 1
        else:
            raise SystemExit(f"--cpus: no CPU controller under {CGROUP_ROOT}")

    def group_of(self, pid: int) -> Path:
        """The group `pid` is in now, read from /proc (v1: the line naming `cpu`)."""
        for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if (self.version == 2 and controllers == "") or (
                self.version == 1 and "cpu" in controllers.split(",")
            ):
                return self.root / path.lstrip("/")
        return self.root

    def limit(self, group: Path, cpus: float) -> None:
        quota = max(int(cpus * PERIOD_US), 1_000)
        if self.version == 2:
            (self.root / "cgroup.subtree_control").write_text("+cpu")
            (group / "cpu.max").write_text(f"{quota} {PERIOD_US}")
        else:
            (group / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (group / "cpu.cfs_quota_us").write_text(str(quota))


def server_processes() -> list[psutil.Process]:
    """The local PostgreSQL server's processes, as bench/_common.py's CPU meter finds them."""
    return [p for p in psutil.process_iter(["name"]) if p.info["name"] in POSTGRES_NAMES]


def move(pid: int, group: Path) -> None:
    with contextlib.suppress(ProcessLookupError, FileNotFoundError):
        (group / "cgroup.procs").write_text(str(pid))


@contextlib.contextmanager
def cpu_limit(cpus: float | None) -> Iterator[None]:
    """For the block, this process, its children and the server's processes share `cpus` CPUs
    (None: no limit, nothing is touched)."""
    if cpus is None:
        yield
        return
    hierarchy = Hierarchy()
    group = hierarchy.root / GROUP
    group.mkdir(exist_ok=True)
    hierarchy.limit(group, cpus)
    bench = psutil.Process()
    servers = server_processes()
    origins = {p.pid: hierarchy.group_of(p.pid) for p in [bench, *servers]}
    # a backend forked meanwhile goes back where its postmaster came from
    newcomers = origins[servers[0].pid] if servers else origins[bench.pid]
    try:
        for pid in origins:
            move(pid, group)
        yield
    finally:
        for pid in (group / "cgroup.procs").read_text().split():
            move(int(pid), origins.get(int(pid), newcomers))
        try:
            group.rmdir()
        except OSError as exc:
            print(f"warning: {group} stays ({exc}); its processes keep the quota")
