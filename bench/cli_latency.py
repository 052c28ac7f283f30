"""CLI latency: how long `pixgate` commands take, next to Python starting and doing nothing.

    python bench/cli_latency.py [--runs 5] [--account ID] [--source DIR] [--compare DIR]
                                [--no-bytecode-cache]

Run it in the directory of a running gateway (`pixgate serve` on the embedded default, or
with `PIXGATE_DATABASE_URL` set): the commands then meet a started server and a current
schema, as an operator's do. `pixgate accounts show` shows account `--account` (1 unless
told), which must exist. Each command runs `--runs` times in a new process; the table shows
the median wall-clock time and the median CPU time (user + system) the process and its
children used, and the same for `python -c pass`, the floor of any command in the same run.
CPU time is the steadier figure on a busy machine, where wall time also counts the waits for
a core. The last column is the median, over as many more runs under `python -X importtime`,
of the time spent importing modules (the sum of each module's own time), with the number of
modules imported.

The commands load their modules compiled, as an installed package does: they get a bytecode
cache of their own (`PYTHONPYCACHEPREFIX`, filled by a first run that is not counted) even
where `PYTHONDONTWRITEBYTECODE` is set. `--no-bytecode-cache` keeps the environment's
setting instead: with `PYTHONDONTWRITEBYTECODE` and an editable install, every run compiles
pixgate's modules from source.

`--source DIR` runs the `pixgate` package found in DIR instead (a checkout of another
revision, e.g. `git archive <rev> pixgate | tar -x -C DIR`). `--compare DIR` runs both, each
command's runs taking turns between them, and shows DIR's rows marked "(compared)": on a
busy machine, the fair way to compare before and after.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time

PIXGATE = ["-c", "from pixgate.cli import app; app(prog_name='pixgate')"]
"""The console script's body, so that `--source` decides which package runs."""
_IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|", re.MULTILINE)


def commands(account: int) -> dict[str, list[str]]:
    return {
        "python -c pass": ["-c", "pass"],
        "pixgate --help": [*PIXGATE, "--help"],
        "pixgate accounts list": [*PIXGATE, "accounts", "list"],
        f"pixgate accounts show {account}": [*PIXGATE, "accounts", "show", str(account)],
    }


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """One run: (wall seconds, CPU seconds)."""
    cpu = _children_cpu()
    started = time.perf_counter()
    subprocess.run([sys.executable, *argv], env=env, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started, _children_cpu() - cpu


def imports(argv: list[str], env: dict[str, str]) -> tuple[float, int]:
    """One run under `-X importtime`: (seconds spent importing, modules imported)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *argv],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    own_times = [int(us) for us in _IMPORT_LINE.findall(done.stderr)]
    return sum(own_times) / 1e6, len(own_times)


def environment(source: str | None, *, cache: str | None) -> dict[str, str]:
    """The commands' environment: the package in `source` (None: the one installed), the
    bytecode cache `cache` (None: the environment's own setting)."""
    env = dict(os.environ)
    if source:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [source, env.get("PYTHONPATH")]))
    if cache is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = cache
    return env


def medians(argv: list[str], envs: list[dict[str, str]], runs: int) -> list[str]:
    """The table's cells for `argv` in each environment, their runs taking turns so that a
    change in the machine's load reaches them all alike."""
    for env in envs:
        measure(argv, env)  # warm: compiled modules, the file cache
    timed = [[measure(argv, env) for env in envs] for _ in range(runs)]
    loaded = [[imports(argv, env) for env in envs] for _ in range(runs)]
    cells = []
    for i in range(len(envs)):
        wall = statistics.median(row[i][0] for row in timed)
        cpu = statistics.median(row[i][1] for row in timed)
        load = statistics.median(row[i][0] for row in loaded)
        modules = max(row[i][1] for row in loaded)
        cells.append(f"{wall:>12.2f} s {cpu:>11.2f} s {load:>8.2f} s, {modules:>4} modules")
    return cells


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each command")
    parser.add_argument("--account", type=int, default=1, help="the account `show` shows")
    parser.add_argument("--source", help="directory holding the pixgate package to run")
    parser.add_argument("--compare", help="directory holding a pixgate package to compare with")
    parser.add_argument(
        "--no-bytecode-cache",
        action="store_true",
        help="keep the environment's PYTHONDONTWRITEBYTECODE (compile from source each run)",
    )
    options = parser.parse_args()
    sources = {"": options.source, " (compared)": options.compare}
    with tempfile.TemporaryDirectory(prefix="pixgate-bytecode-") as cache:
        bytecode = None if options.no_bytecode_cache else cache
        labels = [label for label, source in sources.items() if source or not label]
        envs = [environment(sources[label], cache=bytecode) for label in labels]
        header = ("command", "wall (median)", "CPU (median)", "imports (median)")
        print("{:<37} {:>14} {:>13} {:>22}".format(*header))
        for name, argv in commands(options.account).items():
            for label, cells in zip(labels, medians(argv, envs, options.runs), strict=True):
                print(f"{name + label:<37} {cells}")


if __name__ == "__main__":
    main()
