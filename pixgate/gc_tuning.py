"""The garbage collector's settings for the long-running processes (`serve`, `worker`).

CPython collects its youngest generation every 700 new container objects; a cash-out
allocates thousands (request, dependencies, pydantic models, records, coroutines), so the
collector ran several times per request and took about a tenth of the API process's CPU.
Objects alive at start-up (imports, the app, its routes) are frozen out of every collection,
and the young generation is collected every 20,000 allocations instead, which gives that
CPU back without changing memory use (docs/performance.md, "Garbage collector tuning").
Reference counting still frees everything that is not in a cycle at once; only cycles wait
a little longer.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 20_000
OLDER_THRESHOLDS = (20, 100)


def tune_for_serving() -> None:
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, *OLDER_THRESHOLDS)
