#!/usr/bin/env bash
# Every bench for 2 seconds: a crash test, not a measurement (the targets print but do not fail).
# Exits non-zero when a bench crashes, the cash-out exactly-once check fails or a webhook
# delivery is lost.
# Needs wrk, pgbench and the PostgreSQL server of PIXGATE_BENCH_SERVER (default 127.0.0.1:5432);
# bench/reads_standby.py also Debian's patroni and etcd-server (it runs its own cluster).
set -uo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python}
failed=()
run() {
    echo "=== $*"
    local started=$SECONDS
    if ! "$PYTHON" "$@"; then
        failed+=("$1")
    fi
    echo "=== $1: $((SECONDS - started)) s"
}
run bench/read.py --duration 2 --warmup 1
run bench/memory.py --requests 2000 --duration 2
run bench/statements.py
run bench/cost.py --count 20 --rounds 1 --quiet 1
run bench/cpu_split.py --duration 2 --warmup 1 --requests 640
run bench/cash_out.py --duration 2 --warmup 1 --repeats 1 --rounds 1
if [ -w /sys/fs/cgroup/cpu/cgroup.procs ] || [ -w /sys/fs/cgroup/cgroup.subtree_control ]; then
    run bench/cash_out.py --duration 2 --warmup 1 --repeats 1 --rounds 0 --cpus 1 \
        --skip-embedded --max-workers 1 --job-workers 0
else
    echo "bench/cash_out.py --cpus skipped: no writable cgroup file system (root, cgroup v1 or v2)"
fi
run bench/webhook_latency.py --duration 2 --accounts 2
run bench/webhook_receivers.py --duration 2 --warmup 1
run bench/hostile_input.py --repeat 1
if command -v valgrind >/dev/null; then
    run bench/instructions.py --requests 5 --warmup 5 \
        --operation "POST /api/pix/cash-out + its settlement job"
else
    echo "bench/instructions.py skipped: valgrind is not installed"
fi
if [ -x /usr/bin/patroni ] && [ -x /usr/bin/etcd ]; then
    run bench/reads_standby.py --duration 2 --warmup 1 --rounds 1
else
    echo "bench/reads_standby.py skipped: patroni or etcd-server is not installed"
fi
if ((${#failed[@]})); then
    echo "failed: ${failed[*]}" >&2
    exit 1
fi
echo "all benches ran"
