"""What the contention check and the GPU lock add to a copy test (issue 18's target: <= 0.2 s).

    python benchmarks/bench_contention.py [--live] [--runs N]

- Parts: NVML open, the reads before the test (processes, utilisation, link state) and the traffic
  window (``contention.WINDOW_S``), the reads after, closing; the lock's acquire and release.
- End to end: ``run_pair`` with the fake worker (tests/fake_workers, no GPU needed), with the check and
  the lock on and off, ``--runs`` times each; the median difference is what a test pays.

``--live`` reads this host's NVML (a GPU host); without it the capture fake answers (SIMULATED timing of
our own code only: NVML's own cost is not in it) and the snapshot is the h200x2-vm demo claiming to be live.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

from p2ptop.bench import contention  # noqa: E402
from p2ptop.bench.lock import GpuLocks  # noqa: E402
from p2ptop.bench.runner import BenchOptions, run_pair  # noqa: E402

FAKE_WORKER = os.path.join(HERE, "..", "tests", "fake_workers", "fake_worker.py")
CAPTURE = os.path.join(HERE, "..", "tests", "fixtures", "captures", "h200x2-nvswitch-vm")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--live", action="store_true", help="this host's NVML and GPUs")
    ap.add_argument("--runs", type=int, default=7)
    args = ap.parse_args()
    os.environ.setdefault("P2PTOP_LOCK_DIR", tempfile.mkdtemp(prefix="p2ptop-bench-locks-"))
    if args.live:
        from p2ptop.sources import open_snapshot

        snap = open_snapshot()
        make_nvml = lambda: None  # noqa: E731 - pynvml
        label = "LIVE NVML"
    else:
        from p2ptop.demos import load_demo
        from p2ptop.sources.capture import Capture, FakeNvml, scenario

        snap = load_demo("h200x2-vm")
        snap.source.kind = "nvml"
        cap = Capture.load(CAPTURE)
        make_nvml = lambda: FakeNvml(cap, activity=scenario("idle", (0, 1)))  # noqa: E731
        label = "SIMULATED NVML (capture fake): our code's cost only"
    gpus = snap.gpu_indices[:2]
    pair = (gpus[0], gpus[1]) if len(gpus) > 1 else (gpus[0], gpus[0])
    print(f"{label}; GPUs {gpus}; window {contention.WINDOW_S} s; {args.runs} runs each")

    parts: dict[str, list[float]] = {k: [] for k in ("open", "before (incl. window)", "after", "close", "lock", "total")}
    for _ in range(args.runs):
        t0 = time.perf_counter()
        locks = GpuLocks(snap, gpus)
        locks.acquire(0)
        t1 = time.perf_counter()
        w = contention.Watch(snap, gpus, nvml=make_nvml(), host_links=[pair[0]] if pair[0] == pair[1] else [])
        t2 = time.perf_counter()
        c = w.before()
        t3 = time.perf_counter()
        w.start()
        w.pair(pair)
        w.pair_done(*pair)
        t4 = time.perf_counter()
        w.close()
        locks.release()
        t5 = time.perf_counter()
        parts["lock"].append(t1 - t0)
        parts["open"].append(t2 - t1)
        parts["before (incl. window)"].append(t3 - t2)
        parts["after"].append(t4 - t3)
        parts["close"].append(t5 - t4)
        parts["total"].append(t5 - t0)
    if not c.checked:
        print(f"NVML not available: {c.na}")
    for k, v in parts.items():
        print(f"  {k:<24} median {statistics.median(v) * 1e3:7.1f} ms   min {min(v) * 1e3:7.1f}   max {max(v) * 1e3:7.1f}")

    walls: dict[bool, list[float]] = {True: [], False: []}
    for _ in range(args.runs):
        for on in (False, True):
            opts = BenchOptions(worker=[sys.executable, FAKE_WORKER, "ok"], check_contention=on, nvml=make_nvml())
            t0 = time.perf_counter()
            r = run_pair(snap, pair[0], pair[1], opts)
            walls[on].append(time.perf_counter() - t0)
            assert r.status in ("ok", "busy"), (r.status, r.errors)
    off, on = statistics.median(walls[False]), statistics.median(walls[True])
    print(f"end to end with the fake worker: check off {off:.3f} s, on {on:.3f} s (medians): the check adds {on - off:.3f} s "
          f"(target <= 0.2 s: {'met' if on - off <= 0.2 else 'NOT met'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
