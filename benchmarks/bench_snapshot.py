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
        row(f"live snapshot ({len(snap.gpus)} GPUs, NVML + sysfs + host facts)", timed(read_live, args.repeats))
        row("live snapshot, no host facts (as topo reads)", timed(lambda: read_live(host_facts=False), args.repeats))
        row("live snapshot + topo text", timed(lambda: topo_report(read_live(host_facts=False)), args.repeats))
        from p2ptop.live import LiveSource

        source = LiveSource(events=False)
        first = source.poll()
        polls = []
        row("dashboard refresh (NVML kept open)", timed(lambda: polls.append(source.poll()), args.repeats))
        print(f"NVML calls per refresh: {polls[-1].calls} (only what moves); a full read: {first.calls} (what every"
              f" refresh read before the live path)")
        source.static_every = 0.0  # every refresh a full read: the cost before
        row("dashboard refresh, full read each time (before)", timed(source.poll, args.repeats))
        source.close()
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
