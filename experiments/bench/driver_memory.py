"""The tournament driver's peak memory against the length of its log (a benchmark, not a
test): `spades tournament` of fast agents (random against random) at each deal count,
with the driver's peak resident memory (`VmHWM` of /proc, Linux) read while it runs.

The driver writes the log and then summarises it; both stream (the rows are aggregated
one at a time, `experiments.tournament.summary.Summary`), so its peak should not grow
with the deals. The workers' memory is not counted (about 230 MB each, whatever the run).

    python -m experiments.bench.driver_memory --deals 3000 30000
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def peak_rss_mb(pid: int) -> float | None:
    """The peak resident memory of process `pid` so far, in MB (None once it is gone)."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return None


def measure(deals: int, workers: int = 2, chunk: int = 50) -> dict[str, float | int]:
    """Run one tournament of `deals` duplicate deals; its driver's peak RSS and wall time."""
    with tempfile.TemporaryDirectory(prefix="spades-driver-memory-") as tmp:
        out = Path(tmp) / "run"
        argv = [sys.executable, "-m", "experiments.cli", "tournament", "--agents",
                "random,random", "--deals", str(deals), "--chunk", str(chunk), "--workers",
                str(workers), "--no-progress", "--out", str(out)]  # fmt: skip
        start = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        peak = 0.0
        while proc.poll() is None:
            now = peak_rss_mb(proc.pid)
            if now is not None:
                peak = max(peak, now)
            time.sleep(0.1)
        err = proc.stderr.read().decode() if proc.stderr else ""
        if proc.returncode:
            raise SystemExit(f"the tournament of {deals} deals failed: {err.strip()}")
        log_mb = (out / "log.jsonl").stat().st_size / 2**20
        return {
            "deals": deals,
            "driver_peak_rss_mb": round(peak, 1),
            "log_mb": round(log_mb, 1),
            "seconds": round(time.perf_counter() - start, 1),
        }


def main(argv: list[str] | None = None) -> list[dict]:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--deals", type=int, nargs="+", default=[3000, 30000])
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args(argv)
    if not os.path.exists("/proc/self/status"):
        raise SystemExit("this benchmark reads /proc (Linux)")
    rows = []
    for deals in args.deals:
        rows.append(measure(deals, args.workers))
        print(json.dumps(rows[-1]), flush=True)
    return rows


if __name__ == "__main__":
    main()
