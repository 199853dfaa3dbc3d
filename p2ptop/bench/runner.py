"""Run copy tests in a child process and turn whatever happens into judged :class:`BenchResult` objects.

The worker (``python -m p2ptop.bench.worker``, or the command in ``BenchOptions.worker`` /
``$P2PTOP_BENCH_WORKER``) reads one JSON job on stdin and writes JSON lines on stdout (protocol in
worker.py). The runner:

- starts it through ``children.Child``: its own session (process group), so a kill reaches anything it started;
- gives each pair ``timeout_s`` (counted from the worker's start for the first pair, from the
  ``pair_start`` line for the others); past it, or when ``cancel`` is set, it kills the whole
  group with SIGKILL, which also releases the GPU memory the worker held;
- turns a hang into status ``timeout``, an exit without a result into ``crashed`` (with the exit
  code or signal, the end of stderr and any unreadable output as evidence), a CUDA error reported by
  the worker into ``failed`` (with the exact CUDA error text and code);
- turns a worker ended by a signal from outside (SIGKILL as the OOM killer sends it, SIGTERM, SIGINT,
  ...: ``EXTERNAL_SIGNALS``, as a negative return code or a shell's 128+n) into ``interrupted``, keeping
  what was measured before it; the remaining pairs are not run (``interrupted`` too);
- after a timeout or crash, runs the remaining pairs in a fresh worker;
- holds a host-wide lock on every GPU of the run (``lock.py``) so p2ptop's tests never overlap, waiting
  ``wait_s`` (None: for ever) and saying who holds it; a lock not had in time gives status ``locked``;
- checks for contention (``contention.py``) before, during and after: GPUs busy before the test give
  status ``busy`` (not measured) unless ``allow_busy``; any sign of other use gives verdict ``contended``.
  The check before the test runs while the first worker starts (``_Gate``): the worker imports, then
  waits for a go line naming the pairs to run before its first CUDA call, and says how long it waited
  (the check's cost to the test, ``Contention.added_s``).

A pair (a, a) is GPU a's host link (pinned host memory <-> GPU), measured by the same worker.

Demo and replay snapshots never start a worker: their results come from ``simulate.py`` and are
marked simulated. Every result is judged (``judge.py``) before it is returned.
"""

from __future__ import annotations

import importlib.util
import os
import queue
import signal
import sys
import threading
import time
from dataclasses import asdict, dataclass, field, fields
from datetime import datetime, timezone
from typing import Any, Callable, Iterable, Optional

from ..fabric import Fabric
from ..model import BenchResult, Measurement, Snapshot
from .catalog import HOST_TESTS, TESTS
from .children import Child, Listen, child_env, clean, error_text, read_event
from .judge import judge

WORKER_ENV = "P2PTOP_BENCH_WORKER"  # a command (split on spaces) to run instead of the CuPy worker
INSTALL_HINT = 'pip install "p2ptop[cuda12]" (CUDA 12 driver) or pip install "p2ptop[cuda13]" (CUDA 13 driver)'
STDERR_TAIL = 2000  # characters of the worker's stderr kept as evidence
GARBAGE_KEPT = 3  # unreadable stdout lines kept as evidence
#: Signals another process (a user, a job scheduler, the OOM killer) sends: a worker ended by one of them was
#: interrupted, not failing. SIGSEGV, SIGBUS, SIGABRT, SIGILL, SIGFPE come from the worker itself: crashed.
EXTERNAL_SIGNALS = {signal.SIGKILL, signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGPIPE,
                    signal.SIGUSR1, signal.SIGUSR2, signal.SIGALRM, signal.SIGXCPU}

EventSink = Optional[Callable[[dict], None]]


@dataclass
class BenchOptions:
    """What to run and how long to wait. The defaults match nvbandwidth's method (see worker.py)."""

    size_mib: int = 512  # buffer of the bandwidth tests (nvbandwidth's default buffer size)
    copies: int = 16  # copies per timed sample (nvbandwidth's loop count)
    repeats: int = 3  # timed samples; the figure is their median, with min and max (nvbandwidth: 3)
    warmup: int = 4  # untimed copies queued before each timed sample (nvbandwidth: 4)
    timeout_s: float = 30.0  # per pair; the first pair's time includes the worker's start
    tests: set[str] = field(default_factory=lambda: set(TESTS) | set(HOST_TESTS))
    latency_bytes: int = 4  # size of one latency copy (p2pBandwidthLatencyTest: 1 int)
    latency_copies: int = 100  # copies queued per latency sample (p2pBandwidthLatencyTest: 100)
    latency_hops: int = 10000  # dependent remote reads per pointer-chase sample
    staged_copies: int = 2  # copies per sample of the host-staged test (it is ~10x slower)
    integrity_mib: int = 64  # bytes checked by the integrity test
    worker: Optional[list[str]] = None  # the worker command; default: $P2PTOP_BENCH_WORKER or the CuPy worker
    simulated_pair_s: float = 0.2  # how long a simulated pair takes, so progress can be seen
    wait_s: Optional[float] = None  # how long to wait for another test's GPU lock (None: for ever, 0: not at all)
    allow_busy: bool = False  # measure GPUs in use by others anyway (verdict contended)
    check_contention: bool = True  # read NVML before, during and after (contention.py)
    nvml: Any = None  # the NVML module for the contention check (tests pass a FakeNvml); None: pynvml
    lock_dir: Optional[str] = None  # where the GPU locks live (default: lock.lock_dir())

    def job(self) -> dict[str, Any]:
        """The options as the worker reads them."""
        # not asdict(): it deep-copies every field, the NVML module (or a fake holding locks) included
        d = {f.name: getattr(self, f.name) for f in fields(self) if f.name not in _NOT_FOR_WORKER}  # plain values only
        d["tests"] = [t for t in TESTS if t in self.tests]
        d["host_tests"] = [t for t in HOST_TESTS if t in self.tests] or list(HOST_TESTS)
        return d

    def check(self) -> Optional[str]:
        """None, or what is wrong with the options (for the command line)."""
        unknown = sorted(set(self.tests) - set(TESTS) - set(HOST_TESTS))
        if unknown:
            return f"unknown test(s) {', '.join(unknown)}; choose from {', '.join(TESTS)} (pairs), {', '.join(HOST_TESTS)} (host links)"
        if self.wait_s is not None and self.wait_s < 0:
            return "--wait must not be negative"
        for name in ("size_mib", "copies", "repeats", "latency_bytes", "latency_copies", "latency_hops", "staged_copies", "integrity_mib"):
            if getattr(self, name) < 1:
                return f"{name} must be at least 1"
        if self.warmup < 0:
            return "warmup must not be negative"
        if self.timeout_s <= 0:
            return "timeout must be a positive number of seconds"
        return None


_NOT_FOR_WORKER = {"worker", "timeout_s", "simulated_pair_s", "wait_s", "allow_busy", "check_contention", "nvml", "lock_dir", "tests"}


def simulated_source(snapshot: Snapshot) -> bool:
    """Demo and replay snapshots are not the machine we run on: their tests are simulated."""
    return snapshot.source.kind != "nvml"


def worker_command(options: BenchOptions) -> list[str]:
    if options.worker:
        return list(options.worker)
    env = os.environ.get(WORKER_ENV, "").split()
    return env or [sys.executable, "-m", "p2ptop.bench.worker"]


def bench_available(snapshot: Snapshot, options: Optional[BenchOptions] = None) -> tuple[bool, str]:
    """(True, '') when copy tests can run for this snapshot, else (False, why and what to install)."""
    if simulated_source(snapshot):
        return True, ""
    if not snapshot.gpus:
        return False, "copy tests need a GPU; this host shows none"
    if (options and options.worker) or os.environ.get(WORKER_ENV):
        return True, ""  # another worker than the CuPy one: it says itself what it lacks
    if importlib.util.find_spec("cupy") is None:
        return False, f"copy tests need CuPy, which is not installed: {INSTALL_HINT}"
    return True, ""


def all_pairs(snapshot: Snapshot, host_links: bool = False) -> list[tuple[int, int]]:
    """Every unordered pair once, as (lower, higher): a pair's job measures both directions
    (ce_one_way A->B, ce_reverse B->A, both at once), so testing B->A again would repeat it.
    With ``host_links``, each GPU's host link (a, a) first."""
    idx = sorted(snapshot.gpu_indices)
    return ([(a, a) for a in idx] if host_links else []) + [(a, b) for i, a in enumerate(idx) for b in idx[i + 1:]]


def run_pair(
    snapshot: Snapshot,
    a: int,
    b: int,
    options: Optional[BenchOptions] = None,
    on_event: EventSink = None,
    cancel: Optional[threading.Event] = None,
) -> BenchResult:
    """Test one ordered pair (a == b: GPU a's host link). Blocking; never raises; call it from a thread.

    ``on_event(dict)`` gets ``{"type": "progress", "a", "b", "step", "fraction", "message"}`` as the
    test goes, and ``{"type": "result", "a", "b", "result"}`` when it is done. Setting ``cancel``
    kills the worker and returns a result with status ``cancelled``. Demo and replay snapshots give
    simulated results (``simulated=True``).
    """
    return run_all(snapshot, [(a, b)], options, on_event, cancel)[0]


def run_all(
    snapshot: Snapshot,
    pairs: Optional[Iterable[tuple[int, int]]] = None,
    options: Optional[BenchOptions] = None,
    on_event: EventSink = None,
    cancel: Optional[threading.Event] = None,
) -> list[BenchResult]:
    """Test every unordered pair (or the given ones) in one worker process; results in the pairs' order."""
    options = options or BenchOptions()
    cancel = cancel or threading.Event()
    wanted = list(pairs) if pairs is not None else all_pairs(snapshot)
    fabric = Fabric(snapshot)
    emit = _Emitter(on_event, fabric, len(wanted))
    known = set(snapshot.gpu_indices)
    results: dict[tuple[int, int], BenchResult] = {}
    for a, b in wanted:
        if a not in known or b not in known:
            results[(a, b)] = _ended(a, b, "failed", f"GPU{a}->GPU{b}: no such GPU on this host (GPUs: {sorted(known)})")
    todo = [p for p in wanted if p not in results]
    try:
        if todo and simulated_source(snapshot):
            from .simulate import simulate_pairs

            for r in simulate_pairs(snapshot, fabric, todo, options, emit, cancel):
                results[(r.a, r.b)] = r
        elif todo:
            ok, why = bench_available(snapshot, options)
            if not ok:
                for a, b in todo:
                    results[(a, b)] = emit.result(_ended(a, b, "unavailable", why))
            else:
                _run_in_workers(snapshot, todo, options, emit, cancel, results)
    except Exception as e:  # never raise into a UI thread: say what went wrong instead
        for a, b in wanted:
            results.setdefault((a, b), _ended(a, b, "failed", f"internal error in the copy-test runner: {type(e).__name__}: {e}"))
    return [judge(results[p], fabric) for p in wanted]


# --- the worker process ---------------------------------------------------------------------


class _Emitter:
    """Forwards events to the caller, numbering pairs for an overall fraction; judges results once."""

    def __init__(self, sink: EventSink, fabric: Fabric, total: int):
        self.sink, self.fabric, self.total, self.done = sink, fabric, total, 0

    def progress(self, a: int, b: int, step: str, fraction: float, message: str) -> None:
        if self.sink:
            overall = (self.done + max(0.0, min(1.0, fraction))) / max(1, self.total)
            self.sink({"type": "progress", "a": a, "b": b, "step": step, "fraction": max(0.0, min(1.0, fraction)),
                       "message": message, "overall": overall, "pairs_done": self.done, "pairs": self.total})

    def result(self, r: BenchResult) -> BenchResult:
        judge(r, self.fabric)
        self.done += 1
        if self.sink:
            self.sink({"type": "result", "a": r.a, "b": r.b, "result": r, "pairs_done": self.done, "pairs": self.total})
        return r


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _ended(a: int, b: int, status: str, why: str) -> BenchResult:
    return BenchResult(a=a, b=b, status=status, started_at=_now(), integrity="not run", errors=[why])


def _run_in_workers(snapshot, todo, options, emit, cancel, results) -> None:
    """Take the GPUs' locks, check contention, run the worker(s), release."""
    from . import contention, lock

    gpus = sorted({g for p in todo for g in p})
    why = None
    try:
        locks = lock.GpuLocks(snapshot, gpus, options.lock_dir)
    except (lock.LockUnavailable, OSError) as e:
        locks = None
        why = f"GPU locks not used: {e}"
    if locks is not None:
        first = todo[0]

        def waiting(gpu: int, holder: dict) -> None:
            emit.progress(first[0], first[1], "waiting", 0.0,
                          f"waiting for GPU{gpu}: another copy test holds it, {lock.describe(holder)}")

        try:
            held = locks.acquire(options.wait_s, waiting, cancel)
        except (lock.LockUnavailable, OSError) as e:
            held, locks, why = None, None, f"GPU locks not used: {e}"
        if held is not None:
            gpu, holder = held
            if cancel.is_set():
                text, status = "cancelled while waiting for another copy test to end", "cancelled"
            else:
                text, status = (f"not run: GPU{gpu} is being tested by {lock.describe(holder)}"
                                + (f" (waited {options.wait_s:g} s)" if options.wait_s else " (--no-wait)")), "locked"
            for a, b in todo:
                results[(a, b)] = emit.result(_ended(a, b, status, text))
            return
    t_check = time.monotonic()
    watch = contention.Watch(snapshot, gpus, nvml=options.nvml, host_links=[a for a, b in todo if a == b]) if options.check_contention else None
    gate = _Gate(t_check, watch, options, emit, results) if watch is not None else None
    try:
        _run_workers(snapshot, todo, options, emit, cancel, results, watch, locks, gate)
    finally:
        if watch is not None:
            watch.close()
        if locks is not None:
            if locks.waited_s > 0.05:
                for r in results.values():
                    r.params.setdefault("lock_waited_s", round(locks.waited_s, 2))
            locks.release()
        else:
            for r in results.values():
                r.params.setdefault("lock", why)


class _Gate:
    """The contention check before the test, run while the first worker starts (it waits for the go)."""

    def __init__(self, t0: float, watch: Any, options: BenchOptions, emit: _Emitter, results: dict):
        self.t0, self.watch, self.options, self.emit, self.results = t0, watch, options, emit, results

    def __call__(self, pairs: list) -> list:
        """Read the idle GPUs; return the pairs that may run: busy ones are not run unless allow_busy."""
        before = self.watch.before()
        if before.busy and not self.options.allow_busy:
            for a, b in pairs:
                c = self.watch.judged({a, b}, "before")
                if c.busy:
                    r = _ended(a, b, "busy", "not run: the GPUs are in use (p2ptop bench --allow-busy measures anyway, "
                                             "labelled contended)")
                    r.contention = c
                    self.results[(a, b)] = self.emit.result(r)
        run = [p for p in pairs if p not in self.results]
        if run:
            self.watch.start()
        return run


def _run_workers(snapshot, todo, options, emit, cancel, results, watch, locks, gate=None) -> None:
    remaining = list(todo)
    while remaining:
        run = _WorkerRun(snapshot, remaining, options, emit, cancel, watch, locks, gate)
        gate = None  # the check before the test runs once, beside the first worker's start
        run.go()
        for r in run.finished:
            results[(r.a, r.b)] = r
        remaining = [p for p in remaining if p not in results]
        if run.interrupted and remaining:  # a signal from outside: whoever sent it wants the tests to stop
            for a, b in remaining:
                results[(a, b)] = emit.result(_ended(a, b, "interrupted", f"not run: {run.interrupted}"))
            return
        if cancel.is_set():
            for a, b in remaining:
                results[(a, b)] = emit.result(_ended(a, b, "cancelled", "cancelled before it started"))
            return
        if run.startup_failure is not None:  # the worker cannot start at all: the same for every pair
            for a, b in remaining:
                results[(a, b)] = emit.result(_ended(a, b, run.startup_failure[0], run.startup_failure[1]))
            return


class _WorkerRun:
    """One worker process over a list of pairs."""

    def __init__(self, snapshot: Snapshot, pairs, options: BenchOptions, emit: _Emitter, cancel: threading.Event,
                 watch: Any = None, locks: Any = None, gate: Optional[_Gate] = None):
        self.snapshot, self.pairs, self.options, self.emit, self.cancel = snapshot, pairs, options, emit, cancel
        self.watch, self.locks, self.gate = watch, locks, gate
        self.pre_gate_s: Optional[float] = None  # the check's time before the worker was started
        self.interrupted: Optional[str] = None  # the signal that ended the worker from outside
        self.finished: list[BenchResult] = []
        self.startup_failure: Optional[tuple[str, str]] = None
        self.current: Optional[BenchResult] = None
        self.current_t0 = 0.0
        self.garbage: list[str] = []
        self.worker_info: dict[str, Any] = {}
        self.fatal: Optional[str] = None
        self.lines: "queue.Queue[tuple[str, Optional[bytes]]]" = queue.Queue()
        self.child: Optional[Child] = None

    def job(self) -> dict[str, Any]:
        bus = {g.index: g.pci_bus_id for g in self.snapshot.gpus}
        job = {"pairs": [[a, b] for a, b in self.pairs], "pci_bus_ids": {str(k): v for k, v in bus.items() if v},
               "cpu_affinity": {str(g.index): g.cpu_affinity for g in self.snapshot.gpus if g.cpu_affinity},
               "options": self.options.job()}
        if self.gate is not None:
            job["gate"] = True
        return job

    def go(self) -> None:
        # the worker holds the GPU locks too: if we die first, they stay held until it has exited
        child = self.child = Child("worker", worker_command(self.options), child_env({"CUDA_DEVICE_ORDER": "PCI_BUS_ID"}),
                                   self.lines, stderr_limit=4 * STDERR_TAIL, stderr_tail=True,
                                   pass_fds=tuple(self.locks.fds) if self.locks else ())
        t_start = time.monotonic()
        if not child.start():
            self.startup_failure = ("unavailable", child.start_error or "cannot start the copy-test worker")
            return
        if self.watch is not None:
            self.watch.add_own_pid(child.proc.pid)
        child.send(self.job())  # its stdin stays open while we live: the worker exits at its EOF, never outliving us
        if self.gate is not None:  # the contention check, while the worker imports (it waits for this go)
            self.pre_gate_s = max(0.0, t_start - self.gate.t0)
            try:
                self.pairs = self.gate(list(self.pairs))
            except BaseException:  # the check never leaves a worker behind (run_all turns the error into results)
                child.kill_group()
                child.reap(self.cancel)
                raise
            if not self.pairs:  # nothing to run (busy): the worker has made no CUDA call yet
                child.kill_group()
                child.reap(self.cancel)
                return
            child.send({"pairs": [[a, b] for a, b in self.pairs]})
        listen = Listen(self.lines, self.cancel, self.options.timeout_s, start=t_start)
        ended = listen.run(lambda _, line: self._handle(line), lambda _: "eof")  # "eof" | "timeout" | "cancel"
        if ended != "eof":
            child.kill_group()
        code = child.reap(self.cancel)
        self._finish(ended, code, time.monotonic() - t_start)

    def _handle(self, raw: bytes) -> bool:
        """Apply one line; True when a pair started (the timeout restarts)."""
        ev, text = read_event(raw)
        if ev is None:
            if text and len(self.garbage) < GARBAGE_KEPT:
                self.garbage.append(clean(text, 120))
            return False
        try:
            return self._apply(ev)
        except (KeyError, TypeError, ValueError) as e:
            if len(self.garbage) < GARBAGE_KEPT:
                self.garbage.append(clean(f"{text} ({type(e).__name__}: {e})", 160))
            return False

    def _apply(self, ev: dict) -> bool:
        kind = ev["type"]
        if kind == "hello":
            self.worker_info = {k: v for k, v in ev.items() if k != "type" and isinstance(v, (str, int, float, bool))}
            if self.watch is not None and isinstance(ev.get("pid"), int):
                self.watch.add_own_pid(ev["pid"])
            wait = ev.get("gate_wait_s")
            if self.watch is not None and self.pre_gate_s is not None and isinstance(wait, (int, float)) and not isinstance(wait, bool):
                self.watch.added(self.pre_gate_s + max(0.0, float(wait)))
        elif kind == "fatal":
            self.fatal = clean(str(ev.get("message", "")), 600)
        elif kind == "pair_start":
            self._close_current("crashed", "the worker started another pair before finishing this one")
            a, b = int(ev["a"]), int(ev["b"])
            self.current = BenchResult(a=a, b=b, started_at=_now(), integrity="not run",
                                       params={"worker": dict(self.worker_info), **_plain(ev.get("params"))})
            self.current_t0 = time.monotonic()
            if self.watch is not None:
                self.watch.pair((a, b))
            return True
        elif kind == "progress" and self.current is not None:
            if self.watch is not None:
                self.watch.step(str(ev.get("step", "")))
            self.emit.progress(self.current.a, self.current.b, clean(str(ev.get("step", "")), 40),
                               float(ev.get("fraction", 0.0)), clean(str(ev.get("message", ""))))
        elif kind == "params" and self.current is not None:
            self.current.params.update({k: v for k, v in _plain(ev.get("params")).items() if k not in self.current.params})
        elif kind == "measurement" and self.current is not None:
            self.current.measurements.append(_measurement(ev))
        elif kind == "error" and self.current is not None:
            self.current.errors.append(error_text(ev))
            if ev.get("step") == "peer_access":
                self.current.params["peer_access"] = clean(str(ev.get("name") or ev.get("text") or "error"), 80)
        elif kind == "integrity" and self.current is not None:
            status = str(ev["status"])
            self.current.integrity = status if status in ("ok", "corrupt", "not run") else "not run"
            off = ev.get("first_bad_offset")
            self.current.first_bad_offset = int(off) if off is not None else None
            self.current.params.update(_plain({k: ev.get(k) for k in ("checked_bytes", "bad_bytes")}))
        elif kind == "pair_end" and self.current is not None:
            status = str(ev.get("status", "ok"))
            self._close_current(status if status in ("ok", "failed") else "failed", None)
        return False

    # -- ending --
    def _close_current(self, status: str, why: Optional[str]) -> None:
        r = self.current
        if r is None:
            return
        r.status = status
        if why:
            r.errors.append(why)
        if self.garbage:
            r.errors.append("the worker printed unreadable output: " + " | ".join(self.garbage))
            self.garbage = []
        r.duration_s = round(time.monotonic() - self.current_t0, 3)
        self.current = None
        if self.watch is not None:
            self.watch.pair_done(r.a, r.b)
            self.watch.pair(None)
            r.contention = self.watch.judged({r.a, r.b}, pair=(r.a, r.b))
            xids = self.watch.pair_xids(r.a, r.b)
            if xids:
                r.params["xids"] = ", ".join(xids)
            if r.a == r.b:
                r.params["link"] = self.watch.link_report(r.a)
        self.finished.append(self.emit.result(r))

    def _finish(self, ended: Optional[str], code: Optional[int], elapsed: float) -> None:
        if ended == "eof" and self.current is None and not self.garbage and code == 0 and self.fatal is None:
            return  # a clean end; pairs it never reached (there should be none) run in a fresh worker
        why = self._why(ended, code)
        sig = _external_signal(code) if ended == "eof" else None
        if sig is not None:
            self.interrupted = f"the worker was ended by {sig} from outside"
        if self.current is not None:
            status = {"cancel": "cancelled", "timeout": "timeout"}.get(ended or "", "interrupted" if sig else "crashed")
            if sig:
                self.current.params["signal"] = sig
            self._close_current(status, why)
            return
        if ended == "cancel":
            return
        if not self.finished:  # it never got to a pair: every pair would meet the same end
            status = "timeout" if ended == "timeout" else ("interrupted" if sig else "unavailable" if self.fatal else "crashed")
            self.startup_failure = (status, why)
            return
        # it finished some pairs, then ended badly between pairs: blame the next one
        nxt = next((p for p in self.pairs if p not in {(r.a, r.b) for r in self.finished}), None)
        if nxt is not None:
            self.current = BenchResult(a=nxt[0], b=nxt[1], started_at=_now(), integrity="not run")
            self.current_t0 = time.monotonic()
            if sig:
                self.current.params["signal"] = sig
            self._close_current("timeout" if ended == "timeout" else ("interrupted" if sig else "crashed"), why)

    def _why(self, ended: Optional[str], code: Optional[int]) -> str:
        parts = []
        if self.fatal:
            parts.append(self.fatal)
        if ended == "timeout":
            parts.append(f"no result within {self.options.timeout_s:g} s: the worker was killed (a P2P copy may hang)")
        elif ended == "cancel":
            parts.append("cancelled: the worker was killed")
        elif code is not None and code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            parts.append(f"the worker was killed by {name}" + (" from outside (a user, a job scheduler, or the kernel's OOM "
                                                                "killer when host memory ran out)" if -code == signal.SIGKILL else ""))
        elif code is not None and _external_signal(code):
            parts.append(f"the worker exited with status {code}: ended by {_external_signal(code)}")
        elif code:
            parts.append(f"the worker exited with status {code} before finishing")
        else:
            parts.append("the worker ended before finishing")
        if self.garbage:
            parts.append("it printed unreadable output: " + " | ".join(self.garbage))
            self.garbage = []
        tail = clean(self.child.stderr_text()[-STDERR_TAIL:], STDERR_TAIL) if self.child else ""
        if tail and ended != "cancel":
            parts.append(f"stderr: {tail}")
        return "; ".join(parts)


def _external_signal(code: Optional[int]) -> Optional[str]:
    """The name of the outside signal that ended a process (return code -n, or 128+n from a shell), else None."""
    if code is None:
        return None
    n = -code if code < 0 else code - 128 if 128 < code < 160 else None
    if n is None:
        return None
    try:
        sig = signal.Signals(n)
    except ValueError:
        return None
    return sig.name if sig in EXTERNAL_SIGNALS else None


def _plain(d: Any) -> dict[str, Any]:
    """The JSON-safe scalars of a mapping from the worker (numbers, booleans, short strings)."""
    if not isinstance(d, dict):
        return {}
    out: dict[str, Any] = {}
    for k, v in d.items():
        if isinstance(v, (bool, int, float)) or (isinstance(v, str) and len(v) < 200):
            out[str(k)] = v
    return out


def _float(v: Any) -> Optional[float]:
    if v is None:
        return None
    f = float(v)
    if f != f or f in (float("inf"), float("-inf")):
        raise ValueError("not a finite number")
    return round(f, 4)


def _measurement(ev: dict) -> Measurement:
    from .catalog import MEASUREMENTS

    name = str(ev["name"])
    unit = MEASUREMENTS.get(name, (str(ev.get("unit", "")),))[0]
    err = ev.get("error")
    return Measurement(name=clean(name, 40), value=_float(ev.get("value")), unit=unit, min=_float(ev.get("min")),
                       max=_float(ev.get("max")), error=clean(str(err), 400) if err else None)
