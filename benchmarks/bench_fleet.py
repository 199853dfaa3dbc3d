#!/usr/bin/env python3
"""Fleet and exporter figures: prints them, asserts nothing.

    python benchmarks/bench_fleet.py [--hosts 1000] [--big 10000] [--workers N] [--keep DIR]

- ``p2ptop fleet`` on N eight-GPU snapshots (scripts/make_fleet.py, dgx-h100 demo with copy tests of
  every pair, faults planted on 5 hosts): the time from start to the fleet screen's first paint (loading
  in parallel, summarising, comparing, ranking, and the screen drawn headless at 200x50), the RSS of the
  main process and of the largest worker, and whether the planted faults are ranked first.
- ``--big``: load time for that many snapshots (the progress callback's last call), no screen.
- the exporter: the time of one scrape over HTTP (mean, p95 of 50) at 8 GPUs (dgx-h100) and 72 (nvl72), with
  copy-test figures of every pair, and its size.

Targets (issue 19): first screen <= 3 s and RSS <= 500 MB at 1,000 hosts; 10,000 loaded <= 20 s;
a scrape <= 50 ms at 8 GPUs and <= 200 ms at 72.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)


def _make_fleet():
    sys.path.insert(0, os.path.join(ROOT, "scripts"))  # importable by name: its writer runs in worker processes
    import make_fleet

    return make_fleet


def rss_mb(who=resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


async def progressive_screen(sources: list[str], workers: int | None) -> tuple[float, float, float, list[str]]:
    """The fleet screen loading the files itself: (first paint, first hosts in the table, all ranked) seconds."""
    from p2ptop.ui.fleet_screen import FleetApp

    t0 = time.perf_counter()
    app = FleetApp(sources=sources, load_options={"workers": workers})
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        t_paint = time.perf_counter() - t0
        t_rows = None
        while app.loading:
            await asyncio.sleep(0.05)
            if t_rows is None and app.shown:
                t_rows = time.perf_counter() - t0
        await pilot.pause()
        t_all = time.perf_counter() - t0
        top = [h["host"] for h in app.shown[:5]]
    return t_paint, t_rows if t_rows is not None else t_all, t_all, top


async def first_screen(sources: list[str], workers: int | None) -> tuple[float, float, list[str], int]:
    from p2ptop.fleet import load_fleet
    from p2ptop.ui.fleet_screen import FleetApp

    t0 = time.perf_counter()
    fleet = load_fleet(sources, workers=workers)
    t_load = time.perf_counter() - t0
    app = FleetApp(fleet)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.pause()
        t_screen = time.perf_counter() - t0
        top = [h["host"] for h in app.shown[:5]]
    return t_load, t_screen, top, len(fleet.hosts)


def bench_fleet(n: int, workers: int | None, keep: str | None) -> None:
    mk = _make_fleet()
    d = keep or tempfile.mkdtemp(prefix="p2ptop-fleet-")
    t = time.perf_counter()
    if not os.path.exists(os.path.join(d, "planted.txt")):
        mk.make(d, n, "dgx-h100", faults=5, seed=1, workers=workers or os.cpu_count() or 1)
    planted = {p["host"] for p in json.load(open(os.path.join(d, "planted.txt")))["planted"]}
    print(f"fleet: {n} snapshots of 8 GPUs in {d} (generated in {time.perf_counter() - t:.1f} s; "
          f"{sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d)) / 2**20:.0f} MB)")
    t_load, t_screen, top, loaded = asyncio.run(first_screen([d], workers))
    print(f"  loaded {loaded} hosts in {t_load:.2f} s with {workers or os.cpu_count()} workers; first screen at {t_screen:.2f} s")
    print(f"  RSS: main process {rss_mb():.0f} MB, largest worker {rss_mb(resource.RUSAGE_CHILDREN):.0f} MB")
    print(f"  planted faults ranked first: {set(top) == planted} (top 5: {', '.join(top)})")
    from p2ptop.fleet import load_fleet
    from p2ptop.fleet.cache import SummaryCache

    cache = SummaryCache(os.path.join(tempfile.mkdtemp(prefix="p2ptop-cache-"), "fleet.sqlite"))
    t = time.perf_counter()
    load_fleet([d], workers=workers, cache=cache)
    t_fill = time.perf_counter() - t
    t = time.perf_counter()
    warm = load_fleet([d], workers=workers, cache=cache)
    print(f"  with the summary cache: first open (filling it) {t_fill:.2f} s, next open of the unchanged files {time.perf_counter() - t:.2f} s "
          f"({len(warm.hosts)} hosts, compared again)")
    t_paint, t_rows, t_all, top = asyncio.run(progressive_screen([d], workers))
    print(f"  fleet screen loading itself: first paint (progress bar) {t_paint:.2f} s, first hosts in the table {t_rows:.2f} s, "
          f"all {n} ranked with the sibling comparison {t_all:.2f} s; planted first: {set(top) == planted}")


def bench_big(n: int, workers: int | None, keep: str | None) -> None:
    from p2ptop.fleet import load_fleet

    mk = _make_fleet()
    d = keep or tempfile.mkdtemp(prefix="p2ptop-fleet-big-")
    if not os.path.exists(os.path.join(d, "planted.txt")):
        t = time.perf_counter()
        mk.make(d, n, "dgx-h100", faults=20, seed=2, workers=workers or os.cpu_count() or 1)
        print(f"big fleet: {n} snapshots generated in {time.perf_counter() - t:.1f} s")
    last = [0.0]
    t0 = time.perf_counter()

    def progress(done: int, total: int) -> None:
        last[0] = time.perf_counter() - t0

    fleet = load_fleet([d], workers=workers, progress=progress)
    print(f"  {len(fleet.hosts)} loaded in {time.perf_counter() - t0:.2f} s ({len(fleet.problems)} not loaded); RSS main {rss_mb():.0f} MB")


def bench_exporter() -> None:
    from p2ptop.exporter import Exporter, make_reader, make_server, serve_in_thread

    for demo in ("dgx-h100", "nvl72"):
        e = Exporter(make_reader(demo=demo))
        t = time.perf_counter()
        e.read_once()
        read_s = time.perf_counter() - t
        t = time.perf_counter()
        e.bench_if_idle()
        e.read_once()
        bench_read_s = time.perf_counter() - t
        server = make_server(e, "127.0.0.1", 0)
        serve_in_thread(server)
        url = f"http://127.0.0.1:{server.server_address[1]}/metrics"
        times, size = [], 0
        for _ in range(50):
            t = time.perf_counter()
            with urllib.request.urlopen(url, timeout=30) as r:
                size = len(r.read())
            times.append(time.perf_counter() - t)
        server.shutdown()
        times.sort()
        print(f"exporter {demo}: {len(e.state.snapshot.gpus)} GPUs; scrape over HTTP mean {statistics.mean(times) * 1e3:.1f} ms, "
              f"p95 {times[int(len(times) * 0.95) - 1] * 1e3:.1f} ms, {size / 1024:.0f} KB with copy tests of every pair; "
              f"a read + diagnosis {read_s:.2f} s ({bench_read_s:.2f} s with the simulated copy tests), in the reader thread")


def bench_soak(seconds: float, demo: str = "dgx-h100") -> None:
    """The exporter reading every second and scraped every second: its memory at the start and the end."""
    from p2ptop.exporter import Exporter, make_reader, make_server, serve_in_thread

    def rss_now() -> float:
        with open("/proc/self/status") as f:
            return next(int(l.split()[1]) for l in f if l.startswith("VmRSS")) / 1024

    e = Exporter(make_reader(demo=demo), interval=1.0, bench_every=600)
    server = make_server(e, "127.0.0.1", 0)
    serve_in_thread(server)
    e.start()
    e.wait_first_read(30)
    url = f"http://127.0.0.1:{server.server_address[1]}/metrics"
    t0 = time.time()
    marks = []
    n = 0
    while time.time() - t0 < seconds:
        urllib.request.urlopen(url, timeout=30).read()
        n += 1
        if n in (10, 60) or n % 600 == 0:
            marks.append((round(time.time() - t0), round(rss_now(), 1)))
        time.sleep(1)
    marks.append((round(time.time() - t0), round(rss_now(), 1)))
    e.stop()
    server.shutdown()
    print(f"exporter soak ({demo}, reads and scrapes every second, {n} scrapes, {e.state.reads} reads): "
          "RSS MB at seconds " + ", ".join(f"{t} s: {m}" for t, m in marks))


def main() -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--hosts", type=int, default=1000)
    p.add_argument("--big", type=int, default=0)
    p.add_argument("--workers", type=int)
    p.add_argument("--keep", help="generate into (or reuse) this directory")
    p.add_argument("--keep-big")
    p.add_argument("--no-exporter", action="store_true")
    p.add_argument("--soak", type=float, default=0, metavar="SECONDS", help="also scrape the exporter every second this long")
    args = p.parse_args()
    print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    if args.hosts:
        bench_fleet(args.hosts, args.workers, args.keep)
    if args.big:
        bench_big(args.big, args.workers, args.keep_big)
    if not args.no_exporter:
        bench_exporter()
    if args.soak:
        bench_soak(args.soak)
    return 0


if __name__ == "__main__":
    sys.exit(main())
