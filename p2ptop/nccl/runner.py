"""Run NCCL on the host's GPUs: one rank process per GPU (``python -m p2ptop.bench.worker_nccl``), as frameworks do.

For a group of GPUs (a pair, or all of them) the runner:

- starts one worker per GPU, each in its own session, with ``NCCL_DEBUG=INFO``,
  ``NCCL_DEBUG_SUBSYS=INIT,P2P,SHM,NET,ENV`` and ``NCCL_NVLS_ENABLE=0`` (unless the user set it:
  NVLink multicast is not wanted on shared machines), ``CUDA_DEVICE_ORDER=PCI_BUS_ID``; each rank is
  told its GPU by PCI bus id;
- passes the NCCL unique id that rank 0 makes to the other ranks through their stdin;
- restarts the clock at every event; past ``timeout_s`` without one, or on cancel, or when one rank
  fails (its peers would wait for it forever), kills every rank's process group and says which rank did what;
- reads the ranks' NCCL output with :func:`p2ptop.nccl.log.read_nccl_log` (the one NCCL log reader)
  into the transport of every channel and direction, and turns the ranks' timings into nccl-tests rows
  (:mod:`p2ptop.nccl.busbw`).

A group of one GPU is a one-rank communicator (NCCL allows nranks=1): no pair and no transport between
GPUs, but NCCL loads, initialises and runs on that GPU through the same worker, log reader and busbw code
(all-reduce busbw is 0 by nccl-tests' 2(n-1)/n for n=1; algbw is the figure). That is all NCCL can do on a
one-GPU host, and how the rank worker is checked for real there.

``plan_all`` lays out ``--all``: rounds of pairs that share no GPU (run at the same time), then all GPUs
together. Nothing here imports CuPy; demo and replay snapshots never start a worker.
"""

from __future__ import annotations

import importlib.util
import os
import queue
import sys
import threading
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Optional

from ..bench.children import Child, Listen, child_env, clean, error_text, exit_text, read_event
from ..model import Snapshot
from . import busbw

WORKER_ENV = "P2PTOP_NCCL_WORKER"  # a command (split on spaces) to run instead of the CuPy NCCL worker
INSTALL_HINT = 'pip install "p2ptop[nccl-cuda12]" (CUDA 12 driver) or pip install "p2ptop[nccl-cuda13]" (CUDA 13 driver)'
LOG_LIMIT = 32 << 20  # bytes of NCCL output kept per rank
ONE_RANK = ("one rank: NCCL ran on this GPU alone (a one-rank communicator), so there is no GPU pair and no transport "
            "between GPUs; all_reduce busbw is 0 by nccl-tests' formula 2(n-1)/n for n=1 (algbw is the figure), sendrecv "
            "sends to itself (busbw = algbw, a copy inside the GPU)")
ONE_GPU = ("NCCL needs a distinct GPU per rank (a communicator cannot have two ranks on one GPU), and this host "
           "shows one GPU: nothing to run NCCL between. `p2ptop bench 0 0 --ipc` tests two processes sharing it.")
DEBUG_ENV = {"NCCL_DEBUG": "INFO", "NCCL_DEBUG_SUBSYS": "INIT,P2P,SHM,NET,ENV"}

EventSink = Optional[Callable[[dict], None]]


@dataclass
class NcclOptions:
    sizes: list[int] = field(default_factory=busbw.sizes)
    ops: tuple[str, ...] = busbw.OPS
    warmup: int = 5  # nccl-tests' default -w
    iters: int = 20  # nccl-tests' default -n
    timeout_s: float = 60.0  # without any event from the ranks (init included)
    worker: Optional[list[str]] = None  # default: $P2PTOP_NCCL_WORKER or the CuPy NCCL worker
    wrap: dict[int, list[str]] = field(default_factory=dict)  # rank -> a command prefix (e.g. ["unshare", "-i"])
    same_gpu_probe: bool = False  # let two ranks share a GPU, to see NCCL's own refusal (device checks only)

    def check(self) -> Optional[str]:
        if not self.sizes or min(self.sizes) < busbw.TYPE_SIZE:
            return "sizes must be at least 4 bytes"
        if set(self.ops) - set(busbw.OPS) or not self.ops:
            return f"operations must be among {', '.join(busbw.OPS)}"
        if self.iters < 1 or self.warmup < 0 or self.timeout_s <= 0:
            return "iters >= 1, warmup >= 0 and a positive timeout, please"
        return None


@dataclass
class NcclRun:
    """What one NCCL run over a group of GPUs gave. JSON-safe through ``to_dict``."""

    gpus: list[int]
    status: str = "ok"  # ok | failed | timeout | crashed | cancelled | unavailable
    errors: list[str] = field(default_factory=list)
    nccl_version: Optional[str] = None
    rows: list[dict] = field(default_factory=list)  # nccl-tests rows: op, bytes, count, time_us, algbw, busbw
    table: dict = field(default_factory=dict)  # transports per pair and channel, env set, NCCL's errors (table.py)
    started_at: str = ""
    duration_s: Optional[float] = None
    beside: list[list[int]] = field(default_factory=list)  # groups that ran at the same time
    log_bytes: int = 0
    log_dropped: int = 0
    log_text: str = ""  # the ranks' NCCL output (bounded); not in to_dict unless asked

    def to_dict(self, with_log: bool = False) -> dict[str, Any]:
        d = asdict(self)
        if not with_log:
            d.pop("log_text")
        return d

    def best(self, op: str) -> Optional[dict]:
        rows = [r for r in self.rows if r["op"] == op]
        return max(rows, key=lambda r: r["bytes"]) if rows else None


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def worker_command(options: NcclOptions) -> list[str]:
    if options.worker:
        return list(options.worker)
    return os.environ.get(WORKER_ENV, "").split() or [sys.executable, "-m", "p2ptop.bench.worker_nccl"]


def nccl_available(snapshot: Snapshot, options: Optional[NcclOptions] = None, nranks: int = 2) -> tuple[bool, str]:
    """Whether NCCL can run here with ``nranks`` ranks (1: a one-rank communicator, possible on a one-GPU host)."""
    if snapshot.source.kind != "nvml":
        return False, f"NCCL runs on this machine's GPUs only; {snapshot.source.label} is not this machine (open an NCCL log with --log)"
    if not snapshot.gpus:
        return False, "no GPU on this host"
    if nranks >= 2 and len(snapshot.gpus) < 2:
        return False, ONE_GPU
    if (options and options.worker) or os.environ.get(WORKER_ENV):
        return True, ""
    if importlib.util.find_spec("cupy") is None:
        return False, f"NCCL runs need CuPy and the NCCL wheel, which are not installed: {INSTALL_HINT}"
    return True, ""


def plan_all(gpus: list[int]) -> list[list[list[int]]]:
    """Rounds of jobs: every pair once, pairs of a round sharing no GPU (the circle method: n-1 rounds
    of n/2 pairs), then all GPUs together when there are more than two."""
    idx = sorted(gpus)
    if len(idx) < 2:
        return []
    ring = idx + ([None] if len(idx) % 2 else [])
    n = len(ring)
    rounds = []
    for _ in range(n - 1):
        pairs = [sorted((ring[i], ring[n - 1 - i])) for i in range(n // 2) if ring[i] is not None and ring[n - 1 - i] is not None]
        rounds.append(sorted(pairs))
        ring = [ring[0], ring[-1]] + ring[1:-1]
    if len(idx) > 2:
        rounds.append([idx])
    return rounds


def run_plan(snapshot: Snapshot, rounds: list[list[list[int]]], options: Optional[NcclOptions] = None,
             on_event: EventSink = None, cancel: Optional[threading.Event] = None) -> list[NcclRun]:
    """Run the rounds one after another, the jobs of a round at the same time. Never raises."""
    options = options or NcclOptions()
    cancel = cancel or threading.Event()
    out: list[NcclRun] = []
    total = sum(len(r) for r in rounds)
    for jobs in rounds:
        if cancel.is_set():
            out += [NcclRun(gpus=list(g), status="cancelled", errors=["cancelled before it started"]) for g in jobs]
            continue
        results: dict[int, NcclRun] = {}

        def one(k: int, gpus: list[int]) -> None:
            results[k] = run_group(snapshot, gpus, options, on_event, cancel)

        threads = [threading.Thread(target=one, args=(k, g), daemon=True) for k, g in enumerate(jobs)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for k, g in enumerate(jobs):
            r = results.get(k) or NcclRun(gpus=list(g), status="failed", errors=["internal error: the job did not report"])
            r.beside = [list(o) for o in jobs if o is not g]
            out.append(r)
            if on_event:
                on_event({"type": "result", "gpus": r.gpus, "run": r, "done": len(out), "total": total})
    return out


def run_group(snapshot: Snapshot, gpus: list[int], options: Optional[NcclOptions] = None,
              on_event: EventSink = None, cancel: Optional[threading.Event] = None) -> NcclRun:
    """One communicator over ``gpus`` (NVML indices), one rank each (one GPU: a one-rank communicator).
    Blocking; never raises."""
    options = options or NcclOptions()
    cancel = cancel or threading.Event()
    run = NcclRun(gpus=list(gpus), started_at=_now())
    known = {g.index: g for g in snapshot.gpus}
    bad = [g for g in gpus if g not in known]
    if (len(set(gpus)) != len(gpus) and not options.same_gpu_probe) or not gpus or bad:
        run.status = "failed"
        run.errors.append(f"GPUs {gpus} are not distinct GPUs of this host (GPUs: {sorted(known)})" if bad or not gpus else ONE_GPU)
        return run
    ok, why = nccl_available(snapshot, options, nranks=len(set(gpus)) if not options.same_gpu_probe else 2)
    if not ok:
        run.status, run.errors = "unavailable", [why]
        return run
    try:
        _Job(run, [known[g] for g in gpus], options, on_event, cancel).go()
    except Exception as e:  # noqa: BLE001 - never raise into a UI thread
        run.status = "failed"
        run.errors.append(f"internal error in the NCCL runner: {type(e).__name__}: {e}")
    return run


class _Job:
    def __init__(self, run: NcclRun, gpus, options: NcclOptions, on_event: EventSink, cancel: threading.Event):
        self.run, self.gpus, self.options, self.on_event, self.cancel = run, gpus, options, on_event, cancel
        self.lines: "queue.Queue" = queue.Queue()
        self.children: list[Child] = []
        self.hello: dict[int, dict] = {}
        self.times: dict[tuple[str, int], dict[int, float]] = {}
        self.rank_errors: dict[int, list[str]] = {}
        self.fatal: dict[int, str] = {}
        self.garbage: dict[int, list[str]] = {}
        self.done: set[int] = set()
        self.progress: dict[int, float] = {}
        self._eof: set[int] = set()

    def env(self) -> tuple[dict[str, str], list[str]]:
        notes = []
        extra = dict(DEBUG_ENV)
        extra["CUDA_DEVICE_ORDER"] = "PCI_BUS_ID"
        if "NCCL_NVLS_ENABLE" not in os.environ:
            extra["NCCL_NVLS_ENABLE"] = "0"
        drop = []
        if os.environ.get("NCCL_DEBUG_FILE"):
            drop.append("NCCL_DEBUG_FILE")
            notes.append("NCCL_DEBUG_FILE was set; it was left out of the ranks' environment so their log could be read")
        for k in ("NCCL_DEBUG", "NCCL_DEBUG_SUBSYS"):
            if os.environ.get(k) and os.environ[k] != extra[k]:
                notes.append(f"{k}={os.environ[k]} was replaced by {extra[k]} for this run")
        return child_env(extra, drop), notes

    def go(self) -> None:
        run, n = self.run, len(self.gpus)
        env, notes = self.env()
        run.errors += notes
        t0 = time.monotonic()
        cmd = worker_command(self.options)
        for rank, g in enumerate(self.gpus):
            c = Child(rank, cmd, env, self.lines, stderr_limit=LOG_LIMIT, wrap=self.options.wrap.get(rank, ()))
            self.children.append(c)
            if not c.start():
                run.status = "unavailable"
                run.errors.append(c.start_error or "cannot start the NCCL worker")
                self._stop(kill=True)
                return
            c.send({"rank": rank, "nranks": n, "gpu": g.index, "bus_id": g.pci_bus_id, "ops": list(self.options.ops),
                    "sizes": list(self.options.sizes), "warmup": self.options.warmup, "iters": self.options.iters})
        eof: set[int] = set()
        self._eof = eof
        listen = Listen(self.lines, self.cancel, self.options.timeout_s)
        fail_at: list[float] = []  # one rank failed: its peers wait for it inside NCCL; a moment to say theirs

        def failed() -> Optional[str]:
            if self.rank_errors or self.fatal:
                if not fail_at:
                    fail_at.append(time.monotonic() + 2.0)
                elif time.monotonic() > fail_at[0]:
                    return "failed"
            return None

        def on_eof(rank: int) -> Optional[str]:
            eof.add(rank)
            if rank not in self.done and rank not in self.fatal and not self.rank_errors.get(rank):
                self.rank_errors.setdefault(rank, [])  # ended without a word: failed() gives the others 2 s
            return "eof" if len(eof) == n else None

        ended = listen.run(self._handle, on_eof, check=failed)
        self._stop(kill=ended != "eof")
        run.duration_s = round(time.monotonic() - t0, 3)
        self._finish(ended)

    def _stop(self, kill: bool) -> None:
        """Kill every rank's group (a failed rank's peers would wait for it), then reap them all."""
        if kill:
            for c in self.children:
                c.kill_group()
        for c in self.children:
            c.reap(self.cancel)

    def _handle(self, rank: int, raw: bytes) -> bool:
        ev, text = read_event(raw)
        try:
            if ev is None:
                if not text:
                    return False
                raise ValueError("")  # not an event: kept as garbage
            kind = ev["type"]
            if kind == "hello":
                self.hello[rank] = ev
                if isinstance(ev.get("nccl_version"), str):
                    self.run.nccl_version = clean(ev["nccl_version"], 40)
            elif kind == "unique_id" and rank == 0:
                uid = [int(x) for x in ev["id"]]
                if len(uid) != 128:
                    raise ValueError("unique id is not 128 bytes")
                for c in self.children[1:]:
                    c.send({"unique_id": uid})
            elif kind == "result":
                key = (str(ev["op"]), int(ev["bytes"]))
                sec = float(ev["seconds"])
                if not sec > 0:
                    raise ValueError("seconds must be positive")
                self.times.setdefault(key, {})[rank] = sec
            elif kind == "progress":
                self.progress[rank] = max(0.0, min(1.0, float(ev.get("fraction", 0.0))))
                if self.on_event:
                    self.on_event({"type": "progress", "gpus": self.run.gpus, "fraction": min(self.progress.get(r, 0.0) for r in range(len(self.gpus))),
                                   "message": clean(str(ev.get("message", "")), 60)})
            elif kind == "error":
                self.rank_errors.setdefault(rank, []).append(error_text(ev, 60, 600))
            elif kind == "fatal":
                self.fatal[rank] = clean(str(ev.get("message", "")), 600)
            elif kind == "done":
                self.done.add(rank)
            return True
        except (ValueError, KeyError, TypeError) as e:
            g = self.garbage.setdefault(rank, [])
            if len(g) < 3:
                g.append(clean(text, 120) + (f" ({e})" if str(e) else ""))
            return False

    def _finish(self, ended: Optional[str]) -> None:
        run, n = self.run, len(self.gpus)
        ranks = {r: self.gpus[r].index for r in range(n)}
        for rank, msg in sorted(self.fatal.items()):
            run.errors.append(f"rank {rank} (GPU{ranks[rank]}): {msg}")
        for rank, errs in sorted(self.rank_errors.items()):
            for e in errs:
                run.errors.append(f"rank {rank} (GPU{ranks[rank]}): {e}")
        for rank, g in sorted(self.garbage.items()):
            run.errors.append(f"rank {rank} printed unreadable output: " + " | ".join(g))
        codes = {c.name: c.code for c in self.children}
        if ended == "cancel":
            run.status = "cancelled"
            run.errors.append("cancelled: the ranks were killed")
        elif ended == "timeout":
            run.status = "timeout"
            waiting = [r for r in range(n) if r not in self.done]
            run.errors.append(f"no event from the ranks within {self.options.timeout_s:g} s: all ranks were killed "
                              f"(ranks {waiting} had not finished; NCCL waits for every rank, so one missing rank hangs the rest)")
        elif self.fatal and not self.done:
            run.status = "unavailable" if all(c == 2 for c in codes.values() if c is not None and c > 0) else "failed"
        elif len(self.done) == n and not self.rank_errors:
            run.status = "ok"
        else:
            said = [r for r in range(n) if self.rank_errors.get(r)]
            silent = [r for r in range(n) if r not in self.done and r not in self.fatal and not self.rank_errors.get(r)]
            # a rank that ended without a word crashed; the ones we killed because a peer failed did not
            exited = [r for r in silent if codes.get(r) is not None and not (ended == "failed" and codes[r] == -9 and r not in self._eof)]
            run.status = "failed" if said and not exited else "crashed"
            for r in silent:
                if r in exited:
                    tail = clean(self.children[r].stderr_text()[-600:], 600)
                    run.errors.append(f"rank {r} (GPU{ranks[r]}) {exit_text(codes.get(r))}" + (f"; stderr: {tail}" if tail else ""))
                else:
                    run.errors.append(f"rank {r} (GPU{ranks[r]}) was killed: NCCL waits for every rank, and rank "
                                      f"{(said or exited or ['?'])[0]} had ended")
        # the timings every rank reported become nccl-tests rows
        for (op, nbytes), per_rank in sorted(self.times.items(), key=lambda kv: (busbw.OPS.index(kv[0][0]) if kv[0][0] in busbw.OPS else 9, kv[0][1])):
            if len(per_rank) == n and op in busbw.OPS:
                run.rows.append(busbw.row(op, nbytes, per_rank.values(), n))
        log = "".join(c.stderr_text() for c in self.children)
        run.log_bytes = sum(len(c.stderr) for c in self.children)
        run.log_dropped = sum(c.stderr_dropped for c in self.children)
        run.log_text = log
        run.table = _table(log, {r: g for r, g in enumerate(self.gpus)})
        if not run.nccl_version:
            run.nccl_version = run.table.get("version")


def _table(log: str, gpus_by_rank: dict) -> dict:
    """The transport table of the ranks' log (table.py); an empty one where the log says nothing."""
    from .table import table_from_text

    bus = {g.pci_bus_id: g.index for g in gpus_by_rank.values() if g.pci_bus_id}
    return table_from_text(log, bus_to_gpu=bus, rank_to_gpu={r: g.index for r, g in gpus_by_rank.items()})
