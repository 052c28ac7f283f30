"""CLI latency: how long `pixgate` commands take, next to Python starting and doing nothing.

    python bench/cli_latency.py [--runs 5] [--source DIR]

Run it in the directory of a running gateway (`pixgate serve` on the embedded default, or
with `PIXGATE_DATABASE_URL` set): the commands then meet a started server and a current
schema, as an operator's do. Each command runs `--runs` times in a new process; the table
shows the median wall-clock time and the median CPU time (user + system) the process and its
children used, and the same for `python -c pass`, the floor of any command in the same run.
CPU time is the steadier figure on a busy machine, where wall time also counts the waits for
a core.

`--source DIR` runs the `pixgate` package found in DIR instead (a checkout of another
revision, e.g. `git archive <rev> | tar -x -C DIR`), to compare before and after.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

PIXGATE = ["-c", "from pixgate.cli import app; app(prog_name='pixgate')"]
"""The console script's body, so that `--source` decides which package runs."""
COMMANDS = {
    "python -c pass": ["-c", "pass"],
    "pixgate --help": [*PIXGATE, "--help"],
    "pixgate accounts list": [*PIXGATE, "accounts", "list"],
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each command")
    parser.add_argument("--source", help="directory holding the pixgate package to run")
    options = parser.parse_args()
    env = dict(os.environ)
    if options.source:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [options.source, env.get("PYTHONPATH")]))
    print(f"{'command':<24} {'wall (median)':>14} {'CPU (median)':>13}")
    for name, argv in COMMANDS.items():
        measure(argv, env)  # warm: compiled modules, the file cache
        runs = [measure(argv, env) for _ in range(options.runs)]
        wall = statistics.median(w for w, _ in runs)
        cpu = statistics.median(c for _, c in runs)
        print(f"{name:<24} {wall:>12.2f} s {cpu:>11.2f} s")


if __name__ == "__main__":
    main()
