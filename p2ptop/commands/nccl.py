"""``p2ptop nccl``: what NCCL chooses between the host's GPUs (transport per channel and direction, busbw,
the variables it saw), or the same table from any job's ``NCCL_DEBUG=INFO`` log (``--log FILE|-``).

Exit status: 0 nothing wrong, 1 a problem found (a fallback to SHM/NET where P2P works, busbw far under the
link, an NCCL error, a failed run), 2 it cannot run here (one GPU, no CuPy/NCCL, not this machine).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import socket
import sys
import threading
from typing import TYPE_CHECKING, Any, Optional

from ..findings import Finding
from ..host.facts import clean
from ..model import Snapshot, SnapshotError, save_snapshot
from .common import EXIT_CANNOT_RUN, EXIT_OK, EXIT_PROBLEM, add_source_options, fail, read_input
from . import SUMMARIES

if TYPE_CHECKING:
    from ..nccl.log import NcclLog

LOG_LIMIT = 2 << 30  # bytes of a log read at most


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "nccl",
        help=SUMMARIES["nccl"],
        description="Run NCCL between GPUs, one process per GPU, with NCCL_DEBUG=INFO: the transport of every channel "
        "and direction (P2P/CUMEM, P2P/IPC, SHM, NET/...), send/recv and all-reduce bus bandwidth as nccl-tests computes "
        "it, the variables NCCL saw; judged against the fabric. With --log, read any job's NCCL log into the same table. "
        "Exit status: 0 nothing wrong, 1 a problem, 2 cannot run.",
    )
    add_source_options(p)
    p.add_argument("a", nargs="?", type=int, help="first GPU")
    p.add_argument("b", nargs="?", type=int, help="second GPU")
    p.add_argument("--all", action="store_true", help="every pair (pairs sharing no GPU at the same time), then all GPUs together")
    p.add_argument("--log", metavar="FILE", help="read an NCCL_DEBUG=INFO log instead of running NCCL (- reads stdin)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--save", metavar="FILE", help="write the snapshot with the NCCL results (open it with --replay FILE)")
    p.add_argument("--timeout", type=float, default=60.0, metavar="SECONDS", help="kill the ranks after this long without progress (default 60)")
    p.add_argument("--max-bytes", type=int, default=1 << 30, metavar="N", help="largest message (default 1 GiB)")
    p.add_argument("--min-bytes", type=int, default=8, metavar="N", help="smallest message (default 8)")
    p.add_argument("--factor", type=int, default=2, metavar="F", help="size step factor, like nccl-tests -f (default 2)")
    p.add_argument("--iters", type=int, default=20, metavar="N", help="timed operations per size (nccl-tests -n, default 20)")
    p.add_argument("--warmup", type=int, default=5, metavar="N", help="untimed operations per size (nccl-tests -w, default 5)")
    p.set_defaults(func=run)


# --- --log ------------------------------------------------------------------------------------


def _host_snapshot(args) -> tuple[Optional[Snapshot], str]:
    """The snapshot to judge a log against: --demo/--replay, else this host when NVML answers."""
    from ..sources import SourceUnavailable, open_snapshot

    try:
        snap = open_snapshot(demo=args.demo, replay=args.replay)
    except (SourceUnavailable, SnapshotError):
        return None, "a host without NVML"
    return snap, snap.source.label


def run_log(args) -> int:
    text, err = read_input(args.log, LOG_LIMIT)
    if text is None:
        return fail(err or "cannot read the log")
    from ..nccl.findings import table_findings
    from ..nccl.log import read_nccl_log
    from ..nccl.table import table_from_log

    log = read_nccl_log(text)
    if not log.is_nccl:
        return fail(f"{args.log}: no NCCL lines in it (run the job with NCCL_DEBUG=INFO; NCCL_DEBUG_SUBSYS=INIT,P2P,SHM,NET,ENV)")
    here = socket.gethostname()
    if args.save or args.demo or args.replay or not log.hosts or log.hosts == [here]:
        snap, label = _host_snapshot(args)
    else:  # the log is from other hosts: NVML and this host's facts would not be used (seconds on a GPU host)
        snap, label = None, f"{here} (NVML not read: not needed for another host's log)"
    ours = {snap.source.hostname} if snap is not None and snap.source.hostname else set()
    if snap is not None and snap.source.kind == "nvml":
        ours.add(here)
    same = snap is not None and (not log.hosts or (len(log.hosts) == 1 and (log.hosts[0] in ours or bool(args.replay or args.demo))))
    bus = {g.pci_bus_id: g.index for g in snap.gpus if g.pci_bus_id} if same else None
    table = table_from_log(log, bus_to_gpu=bus)
    findings = table_findings(table, snap, same_host=same, origin="log")
    judged = (f"judged against {label}" if same else
              f"not judged against NVML: the log is from {', '.join(log.hosts) or 'an unnamed host'}, this is {label}")
    if args.save:
        if snap is None:
            return fail("--save needs a snapshot to save into (NVML here, or --replay FILE)")
        snap.nccl = {"logs": [{"source": args.log, "table": table}]}
        status = _save(snap, args.save)
        if status:
            return status
    if args.json:
        print(json.dumps({"kind": "p2ptop-nccl-log", "source": args.log, "judged": judged, "table": table,
                          "findings": [dataclasses.asdict(f) for f in findings], "knowledge": _knowledge(findings, args, log, text)}, indent=1, default=str))
    else:
        out = [f"p2ptop nccl --log {args.log}: {log.lines_total} lines, {log.nccl_lines} NCCL lines; {judged}"]
        out += table_lines(table)
        out += finding_lines(findings)
        out += kb_lines(_knowledge(findings, args, log, text))
        print("\n".join(clean(x) for x in out))
    return EXIT_PROBLEM if any(f.is_problem for f in findings) else EXIT_OK


# --- running NCCL --------------------------------------------------------------------------------


def run(args) -> int:
    if args.log:
        if args.a is not None or args.all:
            return fail("--log reads a log: give no GPUs and no --all with it")
        return run_log(args)
    if args.all == (args.a is not None):
        return fail("give two GPUs (p2ptop nccl A B), one (p2ptop nccl A: a one-rank communicator), --all, or --log FILE")
    from ..nccl import busbw
    from ..nccl.runner import ONE_GPU, NcclOptions, nccl_available, plan_all, run_plan
    from .common import snapshot_from_args

    try:
        sizes = busbw.sizes(args.min_bytes, args.max_bytes, args.factor)
    except ValueError as e:
        return fail(str(e))
    options = NcclOptions(sizes=sizes, iters=args.iters, warmup=args.warmup, timeout_s=args.timeout)
    problem = options.check()
    if problem:
        return fail(problem)
    snap, status = snapshot_from_args(args)
    if snap is None:
        return status  # type: ignore[return-value]
    known = sorted(snap.gpu_indices)
    one_rank = args.a is not None and args.b is None
    if snap.source.kind == "nvml" and len(known) < 2 and not one_rank:
        print(f"p2ptop nccl: {ONE_GPU}", file=sys.stderr)
        if known:
            print(f"(p2ptop nccl {known[0]} runs a one-rank communicator on it: NCCL loads, initialises and runs there, "
                  "with no pair to choose a transport for)", file=sys.stderr)
        if known:
            return _one_gpu_ipc(snap, known[0], args)
        return EXIT_CANNOT_RUN
    ok, why = nccl_available(snap, options, nranks=1 if one_rank else 2)
    if not ok:
        return fail(why)
    if one_rank:
        if args.a not in known:
            return fail(f"no GPU{args.a} here (GPUs: {', '.join(map(str, known)) or 'none'})")
        rounds = [[[args.a]]]
    elif args.all:
        rounds = plan_all(known)
    else:
        for g in (args.a, args.b):
            if g not in known:
                return fail(f"no GPU{g} here (GPUs: {', '.join(map(str, known)) or 'none'})")
        if args.a == args.b:
            return fail("NCCL needs a distinct GPU per rank: give two different GPUs (p2ptop bench A A --ipc tests two processes on one GPU)")
        rounds = [[sorted((args.a, args.b))]]
    runs = _run_with_progress(snap, rounds, options, run_plan)
    from ..nccl.findings import run_findings

    findings = run_findings(runs, snap)
    if args.save:
        snap.nccl = {"runs": [r.to_dict() for r in runs]}
        st = _save(snap, args.save)
        if st:
            return st
    if args.json:
        print(json.dumps({"kind": "p2ptop-nccl", "source": snap.source.label, "runs": [r.to_dict() for r in runs],
                          "findings": [dataclasses.asdict(f) for f in findings], "knowledge": _knowledge(findings, args)}, indent=1, default=str))
    else:
        print("\n".join(clean(x) for x in run_lines(runs) + finding_lines(findings) + kb_lines(_knowledge(findings, args))))
        if args.save:
            print(f"saved: {args.save}")
    if any(r.status == "unavailable" for r in runs):
        return EXIT_CANNOT_RUN
    return EXIT_PROBLEM if any(f.is_problem for f in findings) or any(r.status != "ok" for r in runs) else EXIT_OK


def _one_gpu_ipc(snap: Snapshot, gpu: int, args) -> int:
    """A one-GPU host still gets something: two processes sharing the GPU through CUDA IPC."""
    from ..bench.ipc import IpcOptions, ipc_available, ipc_findings, report, run_ipc

    ok, why = ipc_available(snap)
    if not ok:
        print(f"p2ptop nccl: the cross-process IPC test cannot run either: {why}", file=sys.stderr)
        return EXIT_CANNOT_RUN
    print(f"Instead, the cross-process CUDA IPC test on GPU{gpu} (p2ptop bench {gpu} {gpu} --ipc):", file=sys.stderr)
    r = run_ipc(snap, gpu, gpu, IpcOptions(timeout_s=args.timeout))
    findings = ipc_findings(r)
    if args.json:
        print(json.dumps({"kind": "p2ptop-nccl", "source": snap.source.label, "runs": [], "error": "one GPU: NCCL needs a distinct GPU per rank",
                          "ipc": r.to_dict(), "findings": [dataclasses.asdict(f) for f in findings]}, indent=1, default=str))
    else:
        print(report(r) + "\n".join(finding_lines(findings)))
    return EXIT_CANNOT_RUN


def _run_with_progress(snap, rounds, options, run_plan):
    cancel = threading.Event()
    if not sys.stderr.isatty():
        return run_plan(snap, rounds, options, None, cancel)
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    total = sum(len(r) for r in rounds)
    with Progress(TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn(), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("starting NCCL", total=1.0)

        def on_event(ev: dict) -> None:
            if ev["type"] == "progress":
                bar.update(task, completed=ev["fraction"], description=f"NCCL on GPUs {ev['gpus']}: {ev['message']}")
            elif ev["type"] == "result":
                bar.update(task, description=f"{ev['done']}/{total} jobs done")

        try:
            return run_plan(snap, rounds, options, on_event, cancel)
        except KeyboardInterrupt:
            cancel.set()
            raise


def _save(snap: Snapshot, path: str) -> int:
    try:
        save_snapshot(snap, path)
    except OSError as e:
        return fail(f"{path}: cannot be written ({e.strerror or e})")
    except SnapshotError as e:
        return fail(str(e))
    return 0


def _knowledge(findings: list[Finding], args, log: Optional[NcclLog] = None, text: Optional[str] = None) -> dict[str, Any]:
    """The entries that match the problems found; with the log and the ``text`` it was read from, the log's lines
    (its digest) count as explain's do (the same reader), so `nccl --log` and `explain` of one log name the same entries."""
    from ..nccl.log import DIGEST_LIMIT
    from .doctor import _knowledge as kb

    wanted = [f for f in findings if f.severity in ("problem", "warning")]
    if not wanted:
        return {"available": None, "why": "nothing to match", "matches": []}
    try:
        out = kb(wanted, getattr(args, "kb", []) or [], text=log.digest(text) if log is not None and text else None)
        if log is not None and text and len(text) > DIGEST_LIMIT:
            out["note"] = (f"the log's lines were not read for the knowledge base (over {DIGEST_LIMIT >> 20} MB): "
                           "matched on the table's findings; `p2ptop explain` reads them all")
        return out
    except Exception as e:  # noqa: BLE001 - the knowledge base is a help here, never a reason to fail
        return {"available": False, "why": f"knowledge base: {type(e).__name__}: {e}", "matches": []}


# --- text ------------------------------------------------------------------------------------------


def _counts(d: dict) -> str:
    return ", ".join(f"{k} x{n}" for k, n in sorted(d.items())) or "-"


def table_lines(table: dict) -> list[str]:
    out = [f"NCCL {table.get('version') or '(version not in the log)'}"
           + (f" (also {', '.join(v for v in table['versions'] if v != table.get('version'))})" if len(table.get("versions") or []) > 1 else "")
           + (f", CUDA driver {table['cuda_driver']}" if table.get("cuda_driver") else "")
           + (f"; hosts: {', '.join(table['hosts'])}" if table.get("hosts") else "")
           + (f"; {table['communicators']} communicators (ranks as the first one numbers them)" if table.get("communicators", 0) > 1 else "")]
    if table.get("ranks"):
        out.append("  ranks: " + "; ".join(f"{r['rank']}=GPU{r['gpu']}" + (f"@{r['host']}" if r.get("host") and len(table.get("hosts") or []) > 1 else "")
                                           + (f" ({r['bus_id']})" if r.get("bus_id") else "") for r in table["ranks"]))
        hows = sorted({r["how"] for r in table["ranks"]})
        out.append(f"  ranks mapped to GPUs by: {', '.join(hows)}")
    if table.get("pairs"):
        paths = any(p.get("nccl_path") for p in table["pairs"])  # NCCL's own topology print was in the log
        out.append(f"  {'pair':<28} {'worst':<20} {'lower->higher':<26} {'higher->lower':<26} channels"
                   + ("  path (NCCL's)" if paths else ""))
        for p in table["pairs"]:
            out.append(f"  {p['label']:<28} {(p['worst'] or '-') + (' read' if p.get('read') else ''):<20} {_counts(p['forward']):<26} "
                       + (f"{_counts(p['reverse']):<26} {p['channels']:<8}  {p.get('nccl_path') or '-'}" if paths
                          else f"{_counts(p['reverse']):<26} {p['channels']}"))
    elif not table.get("self"):
        out.append("  no channel lines (NCCL prints them with NCCL_DEBUG=INFO once a communicator connects)")
    for me in table.get("self") or []:
        out.append(f"  rank {me['rank']}" + (f" (GPU{me['gpu']})" if me.get("gpu") is not None else "") + f" to itself: {_counts(me['transports'])}"
                   f", {me['channels']} channels (inside one GPU, not a pair)")
    env = table.get("env") or {}
    out.append("  set by environment: " + (", ".join(f"{k}={v}" for k, v in sorted(env.items())) or "nothing NCCL reported"))
    return out


def run_lines(runs) -> list[str]:
    from ..nccl.runner import ONE_RANK

    out = []
    for r in runs:
        beside = f" (beside {', '.join('+'.join(map(str, g)) for g in r.beside)})" if r.beside else ""
        out += ["", f"NCCL on GPUs {', '.join(map(str, r.gpus))}: {r.status}" + (f", NCCL {r.nccl_version}" if r.nccl_version else "")
                + (f", {r.duration_s:.1f} s" if r.duration_s is not None else "") + beside]
        if r.table:
            out += table_lines(r.table)
        if len(r.gpus) == 1:
            out.append(f"  {ONE_RANK}")
        if r.rows:
            out.append(f"  {'op':<10} {'size (B)':>12} {'count':>11} {'time (us)':>10} {'algbw':>8} {'busbw':>8}  (GB/s, nccl-tests' formulas)")
            for x in r.rows:
                out.append(f"  {x['op']:<10} {x['bytes']:>12} {x['count']:>11} {x['time_us']:>10.2f} {x['algbw']:>8.2f} {x['busbw']:>8.2f}")
        for e in r.errors:
            out.append(f"  error: {e}")
        if r.log_dropped:
            out.append(f"  ({r.log_dropped} bytes of NCCL output past the first {r.log_bytes} were not kept)")
    return out


def finding_lines(findings: list[Finding]) -> list[str]:
    order = {"problem": 0, "warning": 1, "info": 2, "ok": 3}
    shown = sorted(findings, key=lambda f: order.get(f.severity, 9))
    n = sum(f.is_problem for f in findings)
    out = ["", f"Findings ({n} problem{'' if n == 1 else 's'})"]
    for f in shown:
        out.append(f"  {f.severity.upper():<8} {f.subject:<10} {f.summary}   ({f.id})")
        for ev in f.evidence[:5]:
            out.append(f"  {'':<8} {'':<10}   - {ev}")
    return out if findings else out + ["  none"]


def kb_lines(kb: dict) -> list[str]:
    if not kb.get("matches"):
        return []
    out = ["", "Knowledge base"] + ([f"  ({kb['note']})"] if kb.get("note") else [])
    for m in kb["matches"][:5]:
        out.append(f"  {m['confidence']:<8} {m['id']} ({m['score']:.2f}): {m.get('signature', '')}")
    return out
