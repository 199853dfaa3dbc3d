"""The exporter: reads in its own thread, serves the last read to every scrape without waiting.

A read (NVML, a demo, a replayed file) and its diagnosis run in the reader thread every ``interval``
seconds and leave the exposition text of everything that changes only with a read (``_cached``).
A scrape joins that text with a few families computed at scrape time (the data's age, read health,
copy-test ages) and never takes the reader's lock for longer than copying two references. A failing
read is a value (``p2ptop_read_ok 0`` with the error as a label), never a crash: the last good read
keeps being served, with its age.

Copy tests come from the snapshot itself (a replay of ``bench --save``), from ``bench --save`` files
the exporter watches (``bench_files``), or from a schedule (``bench_every``) that runs only while every
GPU is idle.
"""

from __future__ import annotations

import datetime as _dt
import glob as _glob
import os
import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from prometheus_client import CollectorRegistry, generate_latest

from ..model import BenchResult, Snapshot, load_snapshot
from .metrics import Families, hostname_of, snapshot_families
from .source import Reader

IDLE_PERCENT = 5  # every GPU at or below this utilisation counts as idle for a scheduled copy test
ERROR_LABEL_MAX = 200


class _Static:
    """A registry collector that yields families built elsewhere."""

    def __init__(self, fams: list) -> None:
        self.fams = fams

    def collect(self):
        return iter(self.fams)


def render(fams: Families) -> bytes:
    reg = CollectorRegistry(auto_describe=False)
    reg.register(_Static(fams.ordered()))
    return generate_latest(reg)


@dataclass
class ReadState:
    snapshot: Optional[Snapshot] = None
    read_at: Optional[float] = None  # wall clock of the last good read
    attempt_at: Optional[float] = None
    error: Optional[str] = None
    reads: int = 0
    failures: int = 0
    duration_s: Optional[float] = None
    cached: bytes = b""
    bench_ts: tuple = (b"", [])  # copy-test ages: (HELP/TYPE lines, [(sample line up to its value, started_at)])
    skipped: dict[str, int] = field(default_factory=dict)


class Exporter:
    def __init__(self, read: Reader, interval: float = 15.0, *, kb_dirs: tuple[str, ...] = (),
                 bench_every: Optional[float] = None, bench_files: Optional[str] = None,
                 bench_options: Any = None, clock: Callable[[], float] = time.time) -> None:
        self._read = read
        self.interval = interval
        self.kb_dirs = kb_dirs
        self.bench_every = bench_every
        self.bench_files = bench_files
        self.bench_options = bench_options
        self.clock = clock
        self.fallback_host = socket.gethostname()
        self.state = ReadState()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._kb = None
        self._bench: dict[tuple[str, int, int], BenchResult] = {}  # (UUID or index, a, b) -> latest result
        self._bench_file_mtimes: dict[str, float] = {}
        self._next_bench = clock()  # the first scheduled copy tests run after the first read (if idle)
        self._first_read = threading.Event()

    # -- the reader thread -------------------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="p2ptop-exporter-read", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread:
            self._thread.join(timeout=5)

    def wait_first_read(self, timeout: float) -> bool:
        return self._first_read.wait(timeout)

    def _loop(self) -> None:
        while not self._stop.is_set():
            started = time.monotonic()
            self.read_once()
            if self.bench_every and self.clock() >= self._next_bench and self.bench_if_idle():
                self._next_bench = self.clock() + self.bench_every  # while a GPU is busy: tried again at the next read
            self._stop.wait(max(0.05, self.interval - (time.monotonic() - started)))

    def read_once(self) -> None:
        """One read and diagnosis; never raises."""
        t0 = time.monotonic()
        now = self.clock()
        snap = None
        error = None
        try:
            snap = self._read()
            cached = self._render(snap)
        except Exception as e:  # NVML failing, a file gone or broken: a value, not a crash
            error = f"{type(e).__name__}: {e}"[:ERROR_LABEL_MAX]
        with self._lock:
            st = self.state
            st.reads += 1
            st.attempt_at = now
            st.duration_s = time.monotonic() - t0
            if error is None:
                st.snapshot, st.read_at, st.error = snap, now, None
                st.cached, st.bench_ts = cached
            else:
                st.failures += 1
                st.error = error
        self._first_read.set()

    def _knowledge(self, findings) -> list[dict[str, Any]]:
        try:
            from ..knowledge import load_kb, match
        except ImportError:
            return []
        if self._kb is None:
            self._kb = load_kb(list(self.kb_dirs))
        return [m.to_dict() for m in match(self._kb, findings=findings, top=5)]

    def _render(self, snap: Snapshot) -> tuple[bytes, list]:
        from ..diagnose import findings_for
        from ..fabric import Fabric

        self._watch_bench_files(snap)
        bench = self._bench_for(snap)
        if bench:
            snap.bench = list(snap.bench) + bench  # the latest result of each pair is the one exported
        fabric = Fabric(snap)
        findings = findings_for(snap, fabric)
        matches = self._knowledge(findings) if any(f.severity in ("warning", "problem") for f in findings) else []
        host = hostname_of(snap, self.fallback_host)
        latest = _latest_per_pair(snap.bench)
        fams = snapshot_families(snap, findings, matches, latest, host, fabric)
        return render(fams), _age_template(fams)

    # -- copy tests --------------------------------------------------------------------------
    def _key(self, snap: Snapshot, a: int, b: int) -> tuple:
        g = snap.gpu(a)
        return ((g.uuid if g and g.uuid else f"index{a}"), a, b)

    def _bench_for(self, snap: Snapshot) -> list[BenchResult]:
        """Results kept from the schedule or watched files that belong to this snapshot's GPUs."""
        by_uuid = {g.uuid: g.index for g in snap.gpus if g.uuid}
        out = []
        with self._lock:
            items = list(self._bench.items())
        for (ident, a, b), r in items:
            if ident.startswith("index") or ident in by_uuid:
                out.append(r)
        return out

    def _watch_bench_files(self, snap: Snapshot) -> None:
        if not self.bench_files:
            return
        uuids = {g.uuid for g in snap.gpus if g.uuid}
        for path in sorted(_glob.glob(self.bench_files)):
            try:
                mtime = os.stat(path).st_mtime
            except OSError:
                continue
            if self._bench_file_mtimes.get(path) == mtime:
                continue
            self._bench_file_mtimes[path] = mtime
            try:
                saved = load_snapshot(path)
            except Exception:
                continue  # a file being written or not a snapshot: looked at again when it changes
            same_gpus = {g.uuid for g in saved.gpus if g.uuid} <= uuids if uuids else True
            if not same_gpus:
                continue  # another host's file
            for r in saved.bench:
                self._store(saved, r)

    def _store(self, snap: Snapshot, r: BenchResult) -> None:
        key = self._key(snap, r.a, r.b)
        with self._lock:
            old = self._bench.get(key)
            if old is None or (r.started_at or "") >= (old.started_at or ""):
                self._bench[key] = r

    def bench_if_idle(self) -> bool:
        """Run the scheduled copy tests if every GPU is idle; True when they ran (or cannot run: fewer than two GPUs)."""
        from ..bench.runner import BenchOptions, all_pairs, run_all

        with self._lock:
            snap = self.state.snapshot
        if snap is None:
            return False
        if len(snap.gpus) < 2:
            return True  # nothing to test: not a reason to try again at every read
        busy = [g.index for g in snap.gpus if g.utilization_gpu is None or g.utilization_gpu > IDLE_PERCENT]
        if busy and snap.source.kind == "nvml":
            with self._lock:
                self.state.skipped["busy"] = self.state.skipped.get("busy", 0) + 1
            return False
        options = self.bench_options or BenchOptions(size_mib=64, copies=4, repeats=3, warmup=1, tests={"ce"}, simulated_pair_s=0.0)
        started = _dt.datetime.fromtimestamp(self.clock(), _dt.timezone.utc).isoformat(timespec="seconds")
        for r in run_all(snap, all_pairs(snap), options):
            r.started_at = r.started_at or started
            self._store(snap, r)
        return True

    # -- the scrape ---------------------------------------------------------------------------
    def scrape(self) -> bytes:
        """The metrics: the last read's text and what is computed now. Never waits for a read."""
        with self._lock:
            st = self.state
            snap, cached, read_at, error = st.snapshot, st.cached, st.read_at, st.error
            reads, failures, duration, bench_ts, skipped = st.reads, st.failures, st.duration_s, st.bench_ts, dict(st.skipped)
        now = self.clock()
        host = hostname_of(snap, self.fallback_host)
        f = Families()
        h = ("Hostname",)
        f.add("p2ptop_read_ok", h, (host,), 0 if (error or reads == 0) else 1)
        if error:
            f.add("p2ptop_read_error_info", h + ("error",), (host, error), 1)
        f.add("p2ptop_reads_total", h, (host,), reads)
        f.add("p2ptop_read_failures_total", h, (host,), failures)
        if duration is not None:
            f.add("p2ptop_read_duration_seconds", h, (host,), round(duration, 6))
        f.add("p2ptop_data_age_seconds", h, (host,), round(now - read_at, 3) if read_at is not None else float("nan"))
        for reason in ("busy",):
            f.add("p2ptop_copy_tests_skipped_total", h + ("reason",), (host, reason), skipped.get(reason, 0))
        return cached + render(f) + _ages(bench_ts, now)


def _age_template(fams: Families) -> tuple[bytes, list[tuple[bytes, float]]]:
    """The copy-test age family rendered once per read by prometheus-client (names and label values
    escaped there), split into each sample's text up to its value and the time it counts from; a scrape
    only appends the ages (thousands of pairs on a 72-GPU host cost no per-scrape formatting)."""
    stamps = fams.fams.get("p2ptop_copy_test_timestamp_seconds")
    if stamps is None:
        return b"", []
    ages = Families()
    for smp in stamps.samples:
        ages.add("p2ptop_copy_test_age_seconds", tuple(smp.labels), tuple(smp.labels.values()), 0)
    head, samples = [], []
    lines = render(ages).splitlines(keepends=True)
    for line, smp in zip([l for l in lines if not l.startswith(b"#")], stamps.samples):
        samples.append((line.rsplit(b" ", 1)[0], smp.value))
    head = [l for l in lines if l.startswith(b"#")]
    return b"".join(head), samples


def _ages(template: tuple[bytes, list[tuple[bytes, float]]], now: float) -> bytes:
    head, samples = template
    if not samples:
        return b""
    return head + b"".join(b"%s %.3f\n" % (prefix, max(0.0, now - t)) for prefix, t in samples)


def _latest_per_pair(results: list[BenchResult]) -> list[BenchResult]:
    latest: dict[tuple[int, int], BenchResult] = {}
    for r in results:
        old = latest.get((r.a, r.b))
        if old is None or (r.started_at or "") >= (old.started_at or ""):
            latest[(r.a, r.b)] = r
    return list(latest.values())
