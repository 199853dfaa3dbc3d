"""The live path's cost, before (every refresh reads everything) and after (static and dynamic apart),
with the fake NVML replaying a real host's call latencies (spent as CPU, as the driver's ioctl is):

    python benchmarks/bench_live.py [--idle-seconds 20] [--interval 2] [--latency FILE]

For the 2 x H200 capture and the 8- and 72-GPU demos (turned into captures): NVML calls per refresh,
one refresh's time, one live snapshot (a full read; host facts left out: they are read once, not per
refresh), and the dashboard's CPU while idle with live refresh (headless 200x50, process CPU time over
the window: the app, its read worker and the fake's replayed latencies). Every figure says it is the fake.
The latency table says where its figures came from (default: benchmarks/data/nvml-latency-h200x2-derived.json).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))

from p2ptop.demos import load_demo  # noqa: E402
from p2ptop.live import LiveSource  # noqa: E402
from p2ptop.sources.capture import CallLatency, Capture, FakeNvml  # noqa: E402

CAPTURE = os.path.join(HERE, "..", "tests", "fixtures", "captures", "h200x2-nvswitch-vm")
DEFAULT_LATENCY = os.path.join(HERE, "data", "nvml-latency-h200x2-derived.json")
SYSFS = "/nonexistent"  # the fake has no sysfs: the PCIe path is N/A, as on a pass-through VM


def capture_of(name: str) -> Capture:
    return Capture.load(CAPTURE) if name == "h200x2 capture" else Capture.from_snapshot(load_demo(name))


def fake_for(name: str, latency: CallLatency, before: bool) -> FakeNvml:
    # before: the reader as it was (no field values: every counter of every link asked, every refresh)
    faults = {"nvmlDeviceGetFieldValues": "MISSING"} if before else {}
    return FakeNvml(capture_of(name), latency=latency, faults=faults)


def source(fake: FakeNvml, before: bool) -> LiveSource:
    # before: a full read every refresh (what p2ptop did); after: the live path's default
    return LiveSource(fake, SYSFS, host_facts=False, events=False, static_every=0.0 if before else 300.0)


def refresh_figures(name: str, latency: CallLatency, repeats: int) -> dict:
    out = {}
    for label, before in (("before", True), ("after", False)):
        fake = fake_for(name, latency, before)
        src = source(fake, before)
        src.poll()
        calls, times, cpu, kinds = [], [], [], collections.Counter()
        for _ in range(1 if before and len(fake.capture.probe["gpus"]) > 8 else repeats):
            n, c0 = len(fake.calls), time.thread_time()
            times.append(src.poll().seconds)
            cpu.append(time.thread_time() - c0)
            calls.append(len(fake.calls) - n)
            kinds = collections.Counter(fake.calls[n:])
        out[label] = {"calls": statistics.median(calls), "ms": statistics.median(times) * 1000,
                      "cpu_ms": statistics.median(cpu) * 1000, "kinds": kinds}
        src.close()
    fake = fake_for(name, latency, False)
    times, cpu = [], []
    for _ in range(repeats if len(fake.capture.probe["gpus"]) <= 8 else 1):
        src = source(fake, False)
        t0, c0 = time.perf_counter(), time.thread_time()
        src.read()
        times.append(time.perf_counter() - t0)
        cpu.append(time.thread_time() - c0)
        src.close()
    out["snapshot_ms"], out["snapshot_cpu_ms"] = statistics.median(times) * 1000, statistics.median(cpu) * 1000
    return out


async def idle_cpu(name: str, latency: CallLatency, before: bool, seconds: float, interval: float) -> tuple[float, int]:
    from p2ptop.ui.app import P2PTopApp
    from p2ptop.ui.poller import LiveReader

    fake = fake_for(name, latency, before)
    reader = LiveReader(nvml=fake, sysfs_root=SYSFS, host_facts=False, events=False,
                        static_every=0.0 if before else 300.0)
    polls = 0
    inner = reader.source.poll

    def counted():
        nonlocal polls
        polls += 1
        return inner()

    reader.source.poll = counted  # type: ignore[method-assign]
    app = P2PTopApp(reader=reader, interval=interval)
    async with app.run_test(size=(200, 50)) as pilot:
        t0 = time.perf_counter()
        while app.state is None and time.perf_counter() - t0 < 120:
            await pilot.pause(0.05)
        await asyncio.sleep(interval * 2 + 1.0)  # past the first refreshes and the knowledge base
        c0, w0, p0 = time.process_time(), time.perf_counter(), polls
        await asyncio.sleep(seconds)
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        return 100.0 * cpu / wall, polls - p0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--idle-seconds", type=float, default=20.0)
    p.add_argument("--interval", type=float, default=2.0)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--latency", default=DEFAULT_LATENCY, help="NVML latency table (JSON)")
    p.add_argument("--no-idle", action="store_true", help="skip the dashboard idle CPU rows")
    p.add_argument("--only", choices=["h200x2 capture", "dgx-h100", "nvl72"], action="append",
                   help="only this host (repeatable); default all three")
    args = p.parse_args()
    latency = CallLatency.load(args.latency)
    print(f"p2ptop live path benchmark: FAKE NVML replaying call latencies ({os.cpu_count()} CPUs, Python {sys.version.split()[0]})")
    print(f"latency table: {os.path.relpath(args.latency)}: {latency.default_s * 1000:.4f} ms per call by default"
          f" ({len(latency.per_call_s)} functions with their own figure)")
    print(f"  origin: {latency.origin}")
    names = tuple(args.only or ("h200x2 capture", "dgx-h100", "nvl72"))
    before_cpu_ms = {}
    for name in names:
        r = refresh_figures(name, latency, args.repeats)
        before_cpu_ms[name] = r["before"]["cpu_ms"]
        b, a = r["before"], r["after"]
        print(f"{name:<15} NVML calls per refresh: before {b['calls']:6.0f}   after {a['calls']:5.0f}"
              f"   ({', '.join(f'{k} {v}' for k, v in sorted(a['kinds'].items()))})")
        print(f"{name:<15} one refresh (fake), CPU: before {b['cpu_ms']:8.1f} ms  after {a['cpu_ms']:6.1f} ms"
              f"   (wall {b['ms']:.1f} / {a['ms']:.1f} ms on this machine)")
        print(f"{name:<15} live snapshot (a full read, host facts left out; fake), CPU {r['snapshot_cpu_ms']:.1f} ms"
              f" (wall {r['snapshot_ms']:.1f} ms){'   target <= 100 ms' if name == 'h200x2 capture' else ''}")
    print("(CPU: the replayed latencies are spent as CPU of the calling thread; wall times stretch when the")
    print(" machine's CPUs are shared. The NVML cost of a refresh is its call count times the table's latency.)")
    if not args.no_idle:
        targets = {"h200x2 capture": 1.5, "dgx-h100": None, "nvl72": 5.0}
        for name in names:
            for label, before in (("before", True), ("after", False)):
                if before and name == "nvl72":
                    print(f"{name:<15} dashboard idle, before: not run: one full read every refresh cost "
                          f"{before_cpu_ms[name] / 1000:.1f} s of CPU above (every refresh a full read), against the "
                          f"{args.interval:g} s interval")
                    continue
                pct, polls = asyncio.run(idle_cpu(name, latency, before, args.idle_seconds, args.interval))
                target = f"   (target <= {targets[name]:g} %)" if targets[name] and not before else ""
                print(f"{name:<15} dashboard idle, refresh every {args.interval:g} s, {label:<6}: {pct:5.2f} % of one CPU"
                      f" ({polls} polls in {args.idle_seconds:g} s; fake NVML){target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
