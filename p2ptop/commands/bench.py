"""``p2ptop bench``: copy tests of one ordered pair, or of every pair (--all), judged against the link."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import threading

from ..bench.catalog import MEASUREMENTS, TESTS
from ..bench.runner import BenchOptions, all_pairs, bench_available, run_all
from ..fabric import Fabric
from ..model import BenchResult, SnapshotError, save_snapshot
from .common import EXIT_CANNOT_RUN, EXIT_OK, EXIT_PROBLEM, add_source_options, fail, snapshot_from_args


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help="copy tests: bandwidth, latency and data integrity of GPU pairs (needs CuPy; simulated with --demo/--replay)",
        description="Measure GPU pairs in a child process: copy-engine and SM copies with peer access, both "
        "directions at once, latency, the same copy staged through host memory, and a data-integrity check. "
        "Each figure is judged against what the link should give. Exit status: 0 all healthy, 1 a pair is "
        "slow or failing, 2 the tests cannot run.",
    )
    add_source_options(p)
    p.add_argument("a", nargs="?", type=int, help="GPU the data comes from")
    p.add_argument("b", nargs="?", type=int, help="GPU the data goes to")
    p.add_argument("--all", action="store_true", help="test every ordered pair")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--save", metavar="FILE", help="write the snapshot with the results (replay it with --replay FILE)")
    d = BenchOptions()
    p.add_argument("--size", type=int, default=d.size_mib, metavar="MIB", help=f"buffer size of the bandwidth tests (default {d.size_mib})")
    p.add_argument("--copies", type=int, default=d.copies, metavar="N", help=f"copies per timed sample (default {d.copies})")
    p.add_argument("--repeats", type=int, default=d.repeats, metavar="N", help=f"timed samples: median, min, max (default {d.repeats})")
    p.add_argument("--warmup", type=int, default=d.warmup, metavar="N", help=f"untimed copies before each sample (default {d.warmup})")
    p.add_argument("--timeout", type=float, default=d.timeout_s, metavar="SECONDS", help=f"per pair, worker start included (default {d.timeout_s:g})")
    p.add_argument("--tests", metavar="LIST", help=f"comma-separated subset of: {', '.join(TESTS)} (default all)")
    p.add_argument("--budget", type=float, metavar="SECONDS", help="stop after this long (a node health check's time limit): "
                   "the pair under test is cancelled, pairs not reached are listed, the exit status judges the pairs tested")
    p.set_defaults(func=run)


def options_from_args(args: argparse.Namespace) -> BenchOptions:
    tests = set(TESTS) if not args.tests else {t.strip() for t in args.tests.split(",") if t.strip()}
    return BenchOptions(size_mib=args.size, copies=args.copies, repeats=args.repeats, warmup=args.warmup,
                        timeout_s=args.timeout, tests=tests)


def run(args: argparse.Namespace) -> int:
    if args.all == (args.a is not None):
        return fail("give two GPUs (p2ptop bench A B) or --all")
    if args.a is not None and args.b is None:
        return fail("give the second GPU too: p2ptop bench A B")
    options = options_from_args(args)
    problem = options.check()
    if problem:
        return fail(problem)
    budget = getattr(args, "budget", None)
    if budget is not None and budget <= 0:
        return fail("--budget must be a positive number of seconds")
    snap, status = snapshot_from_args(args)
    if snap is None:
        return status  # type: ignore[return-value]
    ok, why = bench_available(snap)
    if not ok:
        return fail(why)
    known = set(snap.gpu_indices)
    if args.all:
        pairs = all_pairs(snap)
        if not pairs:
            return fail(f"--all needs two GPUs; this host shows {len(known)}")
    else:
        for g in (args.a, args.b):
            if g not in known:
                return fail(f"no GPU{g} here (GPUs: {', '.join(map(str, sorted(known))) or 'none'})")
        if args.a == args.b:
            return fail("give two different GPUs")
        pairs = [(args.a, args.b)]
    results = _run_with_progress(snap, pairs, options, budget)
    untested = [r for r in results if r.status == "cancelled"] if budget else []
    results = [r for r in results if not (budget and r.status == "cancelled")]
    if args.save:
        snap.bench.extend(results)
        try:
            save_snapshot(snap, args.save)
        except OSError as e:
            return fail(f"{args.save}: cannot be written ({e.strerror or e})")
        except SnapshotError as e:
            return fail(str(e))
    fabric = Fabric(snap)
    if args.json:
        print(json.dumps({"source": snap.source.label, "results": [dataclasses.asdict(r) for r in results]}, indent=1))
    else:
        print(report(results, fabric, snap.source.label), end="")
        if args.save:
            print(f"saved: {args.save}")
    if untested:
        print(f"not tested within the {budget:g} s budget: " + ", ".join(f"GPU{r.a}->GPU{r.b}" for r in untested),
              file=sys.stderr if args.json else sys.stdout)
    if any(r.status == "unavailable" for r in results) or not results:
        return EXIT_CANNOT_RUN
    return EXIT_OK if all(r.verdict == "healthy" for r in results) else EXIT_PROBLEM


def _run_with_progress(snap, pairs, options: BenchOptions, budget: float | None = None) -> list[BenchResult]:
    """Run the pairs; a progress bar on stderr when it is a terminal; cancelled when the budget is spent."""
    cancel = threading.Event()
    timer = threading.Timer(budget, cancel.set) if budget else None
    if timer:
        timer.daemon = True
        timer.start()
    try:
        return _run(snap, pairs, options, cancel)
    finally:
        if timer:
            timer.cancel()


def _run(snap, pairs, options: BenchOptions, cancel: threading.Event) -> list[BenchResult]:
    if not sys.stderr.isatty():
        return run_all(snap, pairs, options, cancel=cancel)
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.percentage:>3.0f}%"),
                  TimeElapsedColumn(), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("starting", total=1.0)

        def on_event(ev: dict) -> None:
            if ev["type"] == "progress":
                bar.update(task, completed=ev["overall"],
                           description=f"GPU{ev['a']}->GPU{ev['b']} {ev['step']} ({ev['pairs_done']}/{ev['pairs']} pairs)")

        try:
            return run_all(snap, pairs, options, on_event, cancel)
        except KeyboardInterrupt:
            cancel.set()
            raise


def _num(v) -> str:
    return "-" if v is None else f"{v:.3g}" if abs(v) < 10 else f"{v:.1f}"


def report(results: list[BenchResult], fabric: Fabric, source_label: str) -> str:
    """Plain text, one block per pair. Error texts were cleaned of control characters by the runner."""
    lines = []
    if any(r.simulated for r in results):
        lines.append(f"SIMULATED results ({source_label}): derived from the expected figures, nothing was measured.")
    for r in results:
        path = fabric.path_class(r.a, r.b) or "?"
        sim = "  [simulated]" if r.simulated else ""
        verdict = r.verdict or "-"
        took = f", {r.duration_s:.2f} s" if r.duration_s is not None else ""
        lines.append(f"GPU{r.a} -> GPU{r.b}  {path} ({r.params.get('expected_basis', '')})  status {r.status}, verdict {verdict}{took}{sim}")
        if r.measurements:
            lines.append(f"  {'figure':<10} {'median':>9} {'min':>9} {'max':>9} {'unit':<5} {'expected':>9} {'share':>6}  verdict")
        for m in r.measurements:
            label = MEASUREMENTS.get(m.name, ("", m.name))[1]
            if m.error:
                lines.append(f"  {label:<10} {'failed':>9}  {m.error}")
                continue
            share = f"{m.value / m.expected:.0%}" if m.value is not None and m.expected else "-"
            lines.append(f"  {label:<10} {_num(m.value):>9} {_num(m.min):>9} {_num(m.max):>9} {m.unit:<5} "
                         f"{_num(m.expected):>9} {share:>6}  {m.verdict or '-'}")
        if r.integrity == "corrupt":
            lines.append(f"  integrity: CORRUPT, first bad byte at offset {r.first_bad_offset}")
        elif r.integrity:
            lines.append(f"  integrity: {r.integrity}")
        for e in r.errors:
            lines.append(f"  error: {e}")
    return "\n".join(lines) + "\n"
