"""``p2ptop bench``: copy tests of one ordered pair, one GPU's host link, or everything (--all), judged against the link."""

from __future__ import annotations

from typing import Optional

import argparse
import dataclasses
import json
import sys
import threading

from ..bench.catalog import HOST_TESTS, MEASUREMENTS, TESTS
from ..bench.runner import BenchOptions, all_pairs, bench_available, run_all
from ..fabric import Fabric
from ..model import BenchResult, SnapshotError, save_snapshot
from .common import EXIT_CANNOT_RUN, EXIT_OK, EXIT_PROBLEM, add_source_options, fail, snapshot_from_args
from . import SUMMARIES

#: Exit statuses of ``p2ptop bench`` beyond 0 (all healthy), 1 (slow or failing: the GPUs or the link) and
#: 2 (cannot run). The first that applies, in this order: 2, 1, 5, 4, 3.
EXIT_CONTENDED = 3  # measured while others used the GPUs or the path, or not measured because they did
EXIT_INTERRUPTED = 4  # the worker was ended by a signal from outside, or the test was cancelled (Ctrl-C)
EXIT_LOCKED = 5  # another copy test held a GPU (--no-wait, or --wait ran out)

EXIT_TEXT = (
    "Exit status: 0 every result healthy; 1 a pair or host link is slow or failing (the GPUs or the link: a slow "
    "figure, a CUDA error, corrupt data, a hang past --timeout, a link trained low under load); 2 the tests cannot "
    "run; 3 contended: other processes, utilisation or link traffic on the GPUs (figures kept, not judged); 4 "
    "interrupted: the worker was ended by a signal from outside (SIGKILL, e.g. the OOM killer; SIGTERM; SIGINT) or "
    "cancelled; 5 another p2ptop test holds a GPU (--no-wait, or --wait ran out). When several apply: 2, 1, 5, 4, 3."
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help=SUMMARIES["bench"],
        description="Measure GPU pairs in a child process: copy-engine and SM copies with peer access, both "
        "directions at once, latency, the same copy staged through host memory, and a data-integrity check; "
        "or, with one GPU, its link to the host (pinned memory to the GPU, back, both at once, latency, "
        "integrity), judged against its PCIe generation and width read during the copies. Each figure is "
        "judged against what the link should give. One test at a time per GPU (a host-wide lock); the GPUs "
        "are checked for other users before, during and after. " + EXIT_TEXT,
    )
    add_source_options(p)
    p.add_argument("a", nargs="?", type=int, help="GPU the data comes from (alone: that GPU's host link)")
    p.add_argument("b", nargs="?", type=int, help="GPU the data goes to")
    p.add_argument("--all", action="store_true", help="test every GPU's host link and every pair once (each job measures both directions)")
    p.add_argument("--allow-busy", action="store_true", help="measure even when other processes use the GPUs (verdict contended)")
    w = p.add_mutually_exclusive_group()
    w.add_argument("--wait", type=float, metavar="SECONDS", help="wait at most this long for another copy test's GPU lock (default: for ever)")
    w.add_argument("--no-wait", action="store_true", help="when another copy test holds a GPU, say so and exit 5 at once")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--save", metavar="FILE", help="write the snapshot with the results (replay it with --replay FILE)")
    d = BenchOptions()
    p.add_argument("--size", type=int, default=d.size_mib, metavar="MIB", help=f"buffer size of the bandwidth tests (default {d.size_mib})")
    p.add_argument("--copies", type=int, default=d.copies, metavar="N", help=f"copies per timed sample (default {d.copies})")
    p.add_argument("--repeats", type=int, default=d.repeats, metavar="N", help=f"timed samples: median, min, max (default {d.repeats})")
    p.add_argument("--warmup", type=int, default=d.warmup, metavar="N", help=f"untimed copies before each sample (default {d.warmup})")
    p.add_argument("--timeout", type=float, default=d.timeout_s, metavar="SECONDS", help=f"per pair, worker start included (default {d.timeout_s:g})")
    p.add_argument("--tests", metavar="LIST", help=f"comma-separated subset of: {', '.join(TESTS)} (pairs); {', '.join(HOST_TESTS)} (host links) (default all)")
    p.add_argument("--ipc", action="store_true", help="cross-process test: two processes share A's memory through CUDA IPC "
                   "(legacy handle and cuMem file descriptor), B copies it; A may equal B")
    p.add_argument("--budget", type=float, metavar="SECONDS", help="stop after this long (a node health check's time limit): "
                   "the pair under test is cancelled, pairs not reached are listed, the exit status judges the pairs tested")
    p.set_defaults(func=run)


def options_from_args(args: argparse.Namespace) -> BenchOptions:
    tests = set(TESTS) | set(HOST_TESTS) if not args.tests else {t.strip() for t in args.tests.split(",") if t.strip()}
    return BenchOptions(size_mib=args.size, copies=args.copies, repeats=args.repeats, warmup=args.warmup,
                        timeout_s=args.timeout, tests=tests, allow_busy=args.allow_busy,
                        wait_s=0.0 if args.no_wait else args.wait)


def run(args: argparse.Namespace) -> int:
    if getattr(args, "ipc", False):
        return run_ipc_command(args)
    if args.all == (args.a is not None):
        return fail("give two GPUs (p2ptop bench A B), one GPU for its host link (p2ptop bench A), or --all")
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
        named = set(options.tests) if args.tests else set(TESTS) | set(HOST_TESTS)
        pairs = all_pairs(snap, host_links=bool(named & set(HOST_TESTS)))  # --tests of pairs only: no host links
        if not named & set(TESTS):
            pairs = [p for p in pairs if p[0] == p[1]]
        if not pairs:
            return fail("--all needs a GPU; this host shows none")
    else:
        b = args.a if args.b is None else args.b
        for g in (args.a, b):
            if g not in known:
                return fail(f"no GPU{g} here (GPUs: {', '.join(map(str, sorted(known))) or 'none'})")
        if args.b is not None and args.a == args.b:
            return fail("give two different GPUs, or one GPU alone for its host link (p2ptop bench A)")
        pairs = [(args.a, b)]
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
        what = ", ".join(f"GPU{r.a} host link" if r.a == r.b else f"GPU{r.a}->GPU{r.b}" for r in untested)
        print(f"not tested within the {budget:g} s budget: {what}", file=sys.stderr if args.json else sys.stdout)
    if not results:
        return EXIT_CANNOT_RUN
    return exit_status(results)


def exit_status(results: list[BenchResult]) -> int:
    """The documented exit status (EXIT_TEXT) of a run's results."""
    if any(r.status == "unavailable" for r in results):
        return EXIT_CANNOT_RUN
    if any(r.verdict in ("slow", "failing") for r in results):
        return EXIT_PROBLEM
    if any(r.status == "locked" for r in results):
        return EXIT_LOCKED
    if any(r.verdict == "interrupted" for r in results):
        return EXIT_INTERRUPTED
    if any(r.verdict == "contended" for r in results):
        return EXIT_CONTENDED
    return EXIT_OK if all(r.verdict == "healthy" for r in results) else EXIT_PROBLEM


def run_ipc_command(args: argparse.Namespace) -> int:
    """``bench A B --ipc``: the cross-process CUDA IPC test (bench/ipc.py)."""
    from ..bench.ipc import IpcOptions, ipc_available, ipc_findings, report as ipc_report, run_ipc

    if args.all or args.a is None or args.b is None:
        return fail("--ipc tests one pair: p2ptop bench A B --ipc (A may equal B: two processes on one GPU)")
    snap, status = snapshot_from_args(args)
    if snap is None:
        return status  # type: ignore[return-value]
    for g in (args.a, args.b):
        if snap.gpu(g) is None:
            return fail(f"no GPU{g} here (GPUs: {', '.join(map(str, snap.gpu_indices)) or 'none'})")
    options = IpcOptions(size_mib=args.size, copies=args.copies, repeats=args.repeats, warmup=args.warmup, timeout_s=args.timeout)
    ok, why = ipc_available(snap, options)
    if not ok:
        return fail(why)
    r = run_ipc(snap, args.a, args.b, options)
    findings = ipc_findings(r)
    if args.json:
        print(json.dumps({"source": snap.source.label, "ipc": r.to_dict(), "findings": [dataclasses.asdict(f) for f in findings]}, indent=1))
    else:
        print(ipc_report(r), end="")
        for f in findings:
            print(f"  {f.severity.upper()} {f.summary} ({f.id}; facts: {', '.join(f'{k}={v}' for k, v in f.facts.items())})")
    if r.status == "unavailable":
        return EXIT_CANNOT_RUN
    return EXIT_PROBLEM if any(f.is_problem for f in findings) or r.status != "ok" else EXIT_OK


def _run_with_progress(snap, pairs, options: BenchOptions, budget: Optional[float] = None) -> list[BenchResult]:
    """Run the pairs in a thread (Ctrl-C cancels: the results say interrupted; so does a spent ``budget``); a
    progress bar on stderr when it is a terminal; a wait for another test's GPU lock is said on stderr either way."""
    cancel = threading.Event()
    if budget:
        timer = threading.Timer(budget, cancel.set)
        timer.daemon = True
        timer.start()
    told: set[str] = set()
    out: list[list[BenchResult]] = []
    bar = task = None

    def on_event(ev: dict) -> None:
        if ev["type"] != "progress":
            return
        if ev.get("step") == "waiting" and ev.get("message") not in told:
            told.add(ev["message"])
            text = f"p2ptop: {ev['message']} (Ctrl-C stops)"
            if bar is not None:
                from rich.text import Text

                bar.console.print(Text(text))  # holder text is data, never markup
            else:
                print(text, file=sys.stderr, flush=True)
        if bar is not None:
            what = f"GPU{ev['a']} host link" if ev["a"] == ev["b"] else f"GPU{ev['a']}->GPU{ev['b']}"
            bar.update(task, completed=ev["overall"], description=f"{what} {ev['step']} ({ev['pairs_done']}/{ev['pairs']})")

    done = threading.Event()

    def work() -> None:
        try:
            out.append(run_all(snap, pairs, options, on_event, cancel))
        finally:
            done.set()

    def wait_for(thread: threading.Thread) -> None:
        # an Event, not Thread.join: a KeyboardInterrupt inside join can leave the thread looking finished
        try:
            while not done.wait(0.1):
                pass
        except KeyboardInterrupt:
            cancel.set()  # the runner kills its worker; the results say cancelled (verdict interrupted)
            while not done.wait(0.1):
                pass

    thread = threading.Thread(target=work, name="p2ptop-bench", daemon=True)
    if not sys.stderr.isatty():
        thread.start()
        wait_for(thread)
        return out[0] if out else []
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.percentage:>3.0f}%"),
                  TimeElapsedColumn(), console=Console(stderr=True), transient=True) as progress:
        bar, task = progress, progress.add_task("starting", total=1.0)
        thread.start()
        wait_for(thread)
    return out[0] if out else []


def _num(v) -> str:
    return "-" if v is None else f"{v:.3g}" if abs(v) < 10 else f"{v:.1f}"


def report(results: list[BenchResult], fabric: Fabric, source_label: str) -> str:
    """Plain text, one block per pair. Error texts were cleaned of control characters by the runner."""
    lines = []
    if any(r.simulated for r in results):
        lines.append(f"SIMULATED results ({source_label}): derived from the expected figures, nothing was measured.")
    for r in results:
        path = "host link" if r.host_link else (fabric.path_class(r.a, r.b) or "?")
        sim = "  [simulated]" if r.simulated else ""
        verdict = r.verdict or "-"
        took = f", {r.duration_s:.2f} s" if r.duration_s is not None else ""
        head = f"GPU{r.a} <-> host" if r.host_link else f"GPU{r.a} -> GPU{r.b}"
        lines.append(f"{head}  {path} ({r.params.get('expected_basis', '')})  status {r.status}, verdict {verdict}{took}{sim}")
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
        lines.extend(detail_lines(r))
    return "\n".join(lines) + "\n"


def detail_lines(r: BenchResult) -> list[str]:
    """Host-link readings, contention evidence and the signal of an interrupted test (text from /proc and
    NVML is cleaned by the contention check)."""
    from ..bench.judge import link_faults, link_notes

    out = []
    link = r.params.get("link")
    if r.host_link and isinstance(link, dict):
        def gw(g, w):
            return f"Gen{g} x{w}" if g is not None and w is not None else "N/A"
        rep = f"  PCIe link: idle {gw(link.get('idle_gen'), link.get('idle_width'))}, under load {gw(link.get('load_gen'), link.get('load_width'))}"
        rep += f" ({link.get('load_samples', 0)} readings), max {gw(link.get('gen_max'), link.get('width_max'))}"
        if link.get("replay_before") is not None:
            rep += f"; replays {link.get('replay_before')} -> {link.get('replay_after', '?')}"
        aer = [f"{k} {link.get(f'aer_{k}_before')} -> {link.get(f'aer_{k}_after', '?')}" for k in ("correctable", "nonfatal", "fatal")
               if link.get(f"aer_{k}_before") is not None]
        rep += f"; AER {', '.join(aer)}" if aer else "; AER not read"
        out.append(rep)
        out += [f"  link fault: {text}" for _, text in link_faults(r)]
        out += [f"  link: {text}" for text in link_notes(r)]
        if link.get("na"):
            out.append(f"  not read: {link['na']}")
    if r.host_link:
        warm = [f"{label} {r.params[key]}" for key, label in (("warm_h2d_gbps", "H->D"), ("warm_d2h_gbps", "D->H")) if r.params.get(key)]
        if warm or r.params.get("cpu_affinity"):
            out.append(f"  method: CPUs {r.params.get('cpu_affinity', 'not bound')}"
                       + (f"; untimed warm-up batches until steady: {'; '.join(warm)} GB/s" if warm else ""))
        if any(r.measurement(n) for n in ("h2d_bidir", "d2h_bidir", "host_bidirectional")):
            out.append("  bidir: each direction timed while the other runs (nvbandwidth's *_bidirectional_memcpy_ce): "
                       "host memory and the root complex bound it, not the link; shown, not judged")
    if r.params.get("signal"):
        out.append(f"  interrupted by {r.params['signal']}: the figures above were measured before it")
    c = r.contention
    if c is not None:
        if not c.checked:
            out.append(f"  contention: not checked ({'; '.join(c.na.values()) or 'NVML not available'})")
        elif c.busy:
            out.append("  CONTENDED: these figures say nothing about the link; run again when the GPUs are idle")
            out += [f"    {reason}" for reason in c.reasons]
        else:
            util = ", ".join(f"GPU{g} {u}%" for g, u in c.utilization.items() if u is not None)
            took = f"check took {c.check_s or 0:.2f} s"
            if c.added_s is not None:
                took += f" beside the worker's start, the test waited {c.added_s:.2f} s for it"
            out.append(f"  contention: none seen (no other compute process{'; utilisation ' + util if util else ''}; {took})")
    if r.params.get("lock_waited_s"):
        out.append(f"  waited {r.params['lock_waited_s']:g} s for another copy test's GPU lock")
    return out
