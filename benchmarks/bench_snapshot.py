"""Prints how long a live snapshot takes against `nvidia-smi topo -m`, and `p2ptop topo --demo nvl72`.

Usage: python benchmarks/bench_snapshot.py [--repeats N]
On a host without NVIDIA GPUs the live rows say N/A; the demo rows still run.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time


def timed(fn, repeats):
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times), max(times)


def row(name, result):
    if isinstance(result, str):
        print(f"{name:<44} {result}")
    else:
        med, lo, hi = result
        print(f"{name:<44} median {med * 1000:8.1f} ms   (min {lo * 1000:.1f}, max {hi * 1000:.1f})")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    from p2ptop.demos import load_demo
    from p2ptop.fabric import Fabric
    from p2ptop.sources import SourceUnavailable, read_live
    from p2ptop.topo_text import topo_report

    print(f"p2ptop snapshot benchmark, {args.repeats} repeats each")
    try:
        snap = read_live()
        row(f"live snapshot ({len(snap.gpus)} GPUs, NVML + sysfs)", timed(read_live, args.repeats))
        row("live snapshot + fabric + topo text", timed(lambda: topo_report(read_live()), args.repeats))
        from p2ptop.sources.nvml import LiveSession

        session = LiveSession()
        session.read()
        row("dashboard refresh (NVML kept open)", timed(session.read, args.repeats))
        session.close()
    except SourceUnavailable as e:
        row("live snapshot", f"N/A ({e})")
    smi = shutil.which("nvidia-smi")
    if smi:
        row("nvidia-smi topo -m (process)", timed(lambda: subprocess.run([smi, "topo", "-m"], capture_output=True), args.repeats))
    else:
        row("nvidia-smi topo -m (process)", "N/A (nvidia-smi not found)")
    row("p2ptop topo --demo nvl72 (process)",
        timed(lambda: subprocess.run([sys.executable, "-m", "p2ptop", "topo", "--demo", "nvl72"], capture_output=True, check=True), args.repeats))
    nvl = load_demo("nvl72")
    row("  in process: load nvl72 demo", timed(lambda: load_demo("nvl72"), args.repeats))
    row("  in process: fabric + topo text, nvl72", timed(lambda: topo_report(nvl, Fabric(nvl)), args.repeats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
