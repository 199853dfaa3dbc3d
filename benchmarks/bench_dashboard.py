"""Prints the dashboard's figures: time to first screen, memory in use, CPU used while idle with live
refresh, and the time of one full refresh at 8 and 72 GPUs.

    python benchmarks/bench_dashboard.py [--idle-seconds 20] [--interval 2] [--repeats 5]

The app runs headless (Textual's test driver, 200x50): the figures include building the views and
rendering every line, not the terminal's own drawing. Live refresh uses NVML when this host has a
driver; elsewhere it uses a fake live source (a demo snapshot copied afresh at each poll, which leaves
out NVML's own cost), and the output says which.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import datetime as dt
import os
import resource
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from textual.worker import WorkerCancelled  # noqa: E402

from p2ptop.demos import load_demo  # noqa: E402
from p2ptop.ui.app import P2PTopApp  # noqa: E402

SIZE = (200, 50)


def rss_mib() -> float:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def settle(app, pilot) -> None:
    for _ in range(3):
        try:
            await app.workers.wait_for_complete()
        except WorkerCancelled:
            pass
        await pilot.pause()


async def until(pilot, cond, timeout=60.0) -> float:
    t0 = time.perf_counter()
    while not cond():
        if time.perf_counter() - t0 > timeout:
            raise TimeoutError("the dashboard did not get there in time")
        await pilot.pause(0.005)
    return time.perf_counter() - t0


async def first_screen(demo: str) -> tuple[float, float, float]:
    """Seconds from starting the app to its first frame (header and empty panes), to the frame with the
    demo's snapshot drawn, and MiB of memory in use then."""
    t0 = time.perf_counter()
    app = P2PTopApp(demo=demo)
    async with app.run_test(size=SIZE) as pilot:
        first = time.perf_counter() - t0
        await until(pilot, lambda: app.state is not None)
        await pilot.pause()  # the frame with the snapshot in it
        elapsed = time.perf_counter() - t0
        await settle(app, pilot)
        return first, elapsed, rss_mib()


def live_reader(demo: str):
    """(reader, what): NVML when this host has it, else a fake live source."""
    try:
        from p2ptop.sources import read_live
        from p2ptop.ui.poller import LiveReader

        read_live(host_facts=False)
        return LiveReader(), "live NVML through the live path (only what moves is read each refresh)"
    except Exception as e:  # noqa: BLE001 - no driver here: say so and use the fake
        base = load_demo(demo)

        def fake():
            snap = copy.deepcopy(base)
            snap.source.kind = "nvml"
            snap.source.simulated = True
            snap.source.taken_at = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
            return snap

        return fake, f"FAKE live source: the {demo} demo copied at each poll (no NVML here: {str(e)[:50]})"


async def idle_cpu(demo: str, seconds: float, interval: float) -> tuple[float, float, int, str]:
    """Percent of one CPU used by the process while the dashboard idles on live refresh: in all, and
    without the source's own reads (NVML's cost, or the fake's copying)."""
    reader, what = live_reader(demo)
    calls, read_cpu = 0, 0.0

    def measured():
        nonlocal calls, read_cpu
        t = time.thread_time()
        try:
            return reader()
        finally:
            read_cpu += time.thread_time() - t
            calls += 1

    app = P2PTopApp(reader=measured, interval=interval)
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.state is not None)
        await settle(app, pilot)
        await asyncio.sleep(interval + 1.0)  # past the first refresh and the knowledge base
        c0, w0, n0, r0 = time.process_time(), time.perf_counter(), calls, read_cpu
        await asyncio.sleep(seconds)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
    getattr(reader, "close", lambda: None)()
    return 100.0 * cpu / wall, 100.0 * (cpu - (read_cpu - r0)) / wall, calls - n0, what


async def refresh_times(demo: str, repeats: int) -> tuple[list[float], list[float]]:
    """Seconds from a poll's start to the new picture drawn, less the read itself (the fake source's copying):
    with a change (full analysis and redraw) and without (the idle case)."""
    healthy = load_demo(demo)
    healthy.source.kind = "nvml"
    broken = copy.deepcopy(healthy)
    gpu = next(g for g in broken.gpus if g.nvlinks)
    gpu.nvlinks[0].state = "inactive"
    shown = {"snap": healthy}
    read_s: list[float] = []

    def reader():
        t = time.perf_counter()
        snap = copy.deepcopy(shown["snap"])  # stands in for NVML's read, and costs about as much as building one
        read_s.append(time.perf_counter() - t)
        return snap

    app = P2PTopApp(reader=reader, interval=3600)  # polls only when asked below
    full, idle = [], []
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.state is not None)
        await settle(app, pilot)
        for i in range(repeats):
            for bucket, snap in ((full, broken if i % 2 == 0 else healthy), (idle, None)):
                if snap is not None:
                    shown["snap"] = snap  # a link goes down (or comes back): a change
                before = app.state
                t0 = time.perf_counter()
                app._read(app._reader, first=False)
                await until(pilot, lambda: app.state is not before)
                await pilot.pause()
                bucket.append(time.perf_counter() - t0 - read_s[-1])
                await settle(app, pilot)
    return full, idle


async def cursor_moves(demo: str, moves: int) -> tuple[list[float], list[float]]:
    """Seconds from an arrow key in the pair matrix to the frame drawn (highlight, pair panel, fabric marks),
    and for a key bound to nothing: the test driver's own round trip, included in the first figure."""
    app = P2PTopApp(demo=demo)
    out, idle = [], []
    async with app.run_test(size=SIZE) as pilot:
        await until(pilot, lambda: app.state is not None)
        await settle(app, pilot)
        app.matrix.focus()
        for i in range(moves):
            for bucket, key in ((out, "right" if (i // 20) % 2 == 0 else "left"), (idle, "f12")):
                t0 = time.perf_counter()
                await pilot.press(key)
                await pilot.pause()
                bucket.append(time.perf_counter() - t0)
    return out, idle


def fmt(times: list[float]) -> str:
    return f"median {statistics.median(times) * 1000:7.1f} ms  (min {min(times) * 1000:.1f}, max {max(times) * 1000:.1f}, n={len(times)})"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--idle-seconds", type=float, default=20.0)
    p.add_argument("--interval", type=float, default=2.0)
    p.add_argument("--repeats", type=int, default=5)
    args = p.parse_args()

    print(f"p2ptop dashboard benchmark (headless {SIZE[0]}x{SIZE[1]}, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs)")
    for demo in ("dgx-h100", "nvl72"):
        first, t, mem = asyncio.run(first_screen(demo))
        print(f"time to first screen, demo {demo:<9}      {t * 1000:7.0f} ms with the snapshot drawn "
              f"(first frame {first * 1000:.0f} ms); memory in use {mem:.0f} MiB (RSS)")
    for demo in ("dgx-h100", "nvl72"):
        total, own, polls, what = asyncio.run(idle_cpu(demo, args.idle_seconds, args.interval))
        print(f"CPU while idle, live every {args.interval:g} s, {demo:<9} {total:5.1f} % of one CPU in all, {own:5.1f} % without "
              f"the reads ({polls} polls in {args.idle_seconds:g} s); {what}")
    for demo in ("dgx-h100", "nvl72"):
        full, idle = asyncio.run(refresh_times(demo, args.repeats))
        n = len(load_demo(demo).gpus)
        print(f"one refresh, {n:>2} GPUs, with a change (full)   {fmt(full)}  (after the read)")
        print(f"one refresh, {n:>2} GPUs, nothing changed        {fmt(idle)}  (after the read)")
    for demo in ("dgx-h100", "nvl72"):
        n = len(load_demo(demo).gpus)
        moves, idle = asyncio.run(cursor_moves(demo, 40))
        print(f"matrix cursor move, {n:>2} GPUs               {fmt(moves)}")
        print(f"  the test driver's round trip alone         {fmt(idle)}  (included above)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
