"""NCCL in the dashboard: runs NCCL on every pair in the background (key N), or opens a job's
NCCL_DEBUG=INFO log (command palette), and shows NCCL's transport per pair as a matrix cell mode
("nccl") and in the pair panel, with its findings (fallback to SHM/NET where NVML says P2P works).

It only shows: the runs come from p2ptop.nccl.runner (child processes), the table from
p2ptop.nccl.table over the shared log reader, the findings from p2ptop.nccl.findings. Work happens in
thread workers; results come back through ``call_from_thread``. Text from logs is data (rich Text).
"""

from __future__ import annotations

import threading
from functools import partial
from typing import Any, Iterable, Optional

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import SystemCommand

from .look import clean

#: short cell text per transport (cells are five characters)
SHORT = {"P2P/CUMEM": "CUMEM", "P2P/IPC": "IPC", "P2P/direct pointer": "PTR", "SHM": "SHM"}


def short(transport: str) -> str:
    if transport in SHORT:
        return SHORT[transport]
    if transport.startswith("NET/"):
        return ("NET" + transport[4:6].lower())[:5]
    return transport[:5]


def _size(n: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if n >= 1 << shift:
            return f"{n / (1 << shift):g} {unit}"
    return f"{n} B"


class NcclView:
    """The app's NCCL state and actions. The app holds one (``app.nccl``)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.tables: list[tuple[str, dict]] = []  # (where from, table)
        self.findings_all: list = []
        self.rows: dict[tuple[int, int], dict] = {}  # (low, high) -> table row
        self.where: dict[tuple[int, int], str] = {}
        self.runs: list = []
        self._cancel: Optional[threading.Event] = None
        self._log_prepared: Any = None  # the opened log's digest, prepared for the matcher (explain's reading)

    # -- what the widgets ask --
    def transport(self, a: int, b: int) -> Optional[str]:
        row = self.rows.get((min(a, b), max(a, b)))
        return row.get("worst") if row else None

    def cell(self, a: int, b: int) -> tuple[str, str]:
        """(text, style) of a matrix cell in the "nccl" mode."""
        t = self.transport(a, b)
        if t is None:
            return "  ·", "dim"
        head = t.split("/")[0]
        if head == "P2P":
            return short(t), "green"
        bad = any(f.id == "nccl.transport_fallback" and f.pair in ((a, b), (b, a)) and f.is_problem for f in self.findings_all)
        return short(t), "bold red" if bad else "yellow"

    def findings(self, a: int, b: int) -> list:
        return [f for f in self.findings_all if f.pair in ((a, b), (b, a))]

    def log_for_matching(self, a: int, b: int) -> Any:
        """The opened log as the matcher reads text (its digest, prepared once when the log was read), for a
        pair NCCL's table has from that log; None otherwise. So the pair panel names the entries that
        `explain` and `nccl --log` name for the same log."""
        return self._log_prepared if (min(a, b), max(a, b)) in self.rows else None

    def with_pair(self, body: RenderableType, a: int, b: int) -> RenderableType:
        """The pair panel's text with NCCL's view of the pair under it, when there is one."""
        lo, hi = min(a, b), max(a, b)
        row = self.rows.get((lo, hi))
        if row is None:
            return body
        t = Text()
        t.append("\nNCCL", style="bold")
        t.append(f"  ({clean(self.where.get((lo, hi), ''))})\n", style="dim")
        t.append("  transport ")
        t.append(clean(row.get("worst") or "?") + (" (read)" if row.get("read") else ""), style=self.cell(a, b)[1])
        t.append(f", {row.get('channels', 0)} channels\n")
        for side, label in (("forward", f"GPU{lo}→GPU{hi}"), ("reverse", f"GPU{hi}→GPU{lo}")):
            counts = ", ".join(f"{clean(k)} ×{n}" for k, n in sorted(row.get(side, {}).items())) or "-"
            t.append(f"  {label}: {counts}\n")
        for run in self.runs:
            if sorted(run.gpus) == [lo, hi]:
                for op in ("sendrecv", "all_reduce"):
                    best = run.best(op)
                    if best:
                        t.append(f"  {op} busbw {best['busbw']:.1f} GB/s at {_size(best['bytes'])}\n")
        env = {}
        for _, table in self.tables:
            env.update(table.get("env") or {})
        if env:
            t.append("  set by environment: " + clean(", ".join(f"{k}={v}" for k, v in sorted(env.items()))) + "\n", style="dim")
        # its findings (fallback and the reason) are in the panel's Findings with the others
        return Group(body, t)

    # -- actions --
    def commands(self) -> Iterable[SystemCommand]:
        yield SystemCommand("NCCL: run on every pair", "NCCL between every pair in child processes, in the background (N)", self.run)
        yield SystemCommand("NCCL: open a job's log…", "Read an NCCL_DEBUG=INFO log into the matrix's nccl cells", self.ask_log)
        yield SystemCommand("NCCL: cancel", "Stop the running NCCL job (Esc)", self.cancel)
        from .process_view import ask_pid

        yield SystemCommand("Host: a process's environment…", "A running job's NCCL/CUDA variables, container, /dev/shm and "
                            "namespaces (doctor --pid)", partial(ask_pid, self.app))

    def cancel(self) -> None:
        if self._cancel is not None and not self._cancel.is_set():
            self._cancel.set()
            self.app.notify("Cancelling NCCL…", timeout=3)

    def run(self) -> None:
        app = self.app
        if app.state is None:
            return
        if self._cancel is not None:
            app.notify("NCCL is running: Esc cancels it.", severity="warning", timeout=4)
            return
        try:
            from ..nccl.runner import NcclOptions, nccl_available, plan_all
        except ImportError as e:
            app.notify(f"NCCL is not available in this p2ptop ({e})", severity="error", timeout=8)
            return
        snap = app.state.snapshot
        ok, why = nccl_available(snap)
        if not ok:
            app.notify(clean(why), title="NCCL cannot run", severity="error", timeout=12)
            app.events.add(f"NCCL cannot run: {why}", "warning")
            return
        self._cancel = threading.Event()
        rounds = plan_all(snap.gpu_indices)
        app.events.add(f"NCCL started: {sum(len(r) for r in rounds)} jobs", "info")
        app.run_worker(partial(self._work, snap, rounds, NcclOptions(), self._cancel), thread=True, group="nccl", name="nccl")

    def _work(self, snap, rounds, options, cancel) -> None:
        from ..nccl.findings import run_findings
        from ..nccl.runner import run_plan

        try:
            runs = run_plan(snap, rounds, options, lambda ev: self.app.call_from_thread(self._progress, ev), cancel)
            findings = run_findings(runs, snap)
        except Exception as e:  # noqa: BLE001 - the runner should not raise; if it does, say so
            self.app.call_from_thread(self._failed, f"{type(e).__name__}: {e}")
            return
        self.app.call_from_thread(self._runs_done, runs, findings)

    def _progress(self, ev: dict) -> None:
        if ev.get("type") == "progress":
            self.app.matrix.border_subtitle = clean(f"NCCL GPUs {ev['gpus']}: {ev.get('message', '')} (Esc cancels)")[:80]

    def _failed(self, why: str) -> None:
        self._cancel = None
        self.app.matrix.border_subtitle = ""
        self.app.notify(clean(why), title="NCCL failed", severity="error", timeout=10)
        self.app.events.add(f"NCCL failed: {why}", "problem")

    def _runs_done(self, runs: list, findings: list) -> None:
        self._cancel = None
        self._log_prepared = None
        self.app.matrix.border_subtitle = ""
        self.runs = runs
        self._set([(f"NCCL run on GPUs {','.join(map(str, r.gpus))}: {r.status}", r.table) for r in runs if r.table], findings)
        bad = [r for r in runs if r.status != "ok"]
        text = f"NCCL: {len(runs)} jobs, {len(bad)} not ok, {sum(f.is_problem for f in findings)} problems"
        self.app.notify(text, timeout=6)
        self.app.events.add(text + "".join(f"; GPUs {r.gpus}: {r.status} {r.errors[-1] if r.errors else ''}" for r in bad),
                            "problem" if bad or any(f.is_problem for f in findings) else "info")

    def ask_log(self) -> None:
        from .screens.open_file import OpenFileScreen

        def opened(path: Optional[str]) -> None:
            if path:
                self.open_log(path)

        self.app.push_screen(OpenFileScreen("Open a job's NCCL_DEBUG=INFO log (Enter opens, Esc cancels):", "path/to/job.log"), opened)

    def open_log(self, path: str) -> None:
        app = self.app
        if app.state is None:
            return
        app.run_worker(partial(self._read_log, app.state.snapshot, path), thread=True, group="nccl-log", name="nccl log")

    def _read_log(self, snap, path: str) -> None:
        import socket

        from ..knowledge.matcher import prepare
        from ..nccl.findings import table_findings
        from ..nccl.log import read_nccl_log
        from ..nccl.table import table_from_log

        try:
            with open(path, "rb") as f:
                text = f.read(2 << 30).decode("utf-8", errors="replace")
        except OSError as e:
            self.app.call_from_thread(self._failed, f"{path}: cannot be read ({e.strerror or e})")
            return
        log = read_nccl_log(text)
        if not log.is_nccl:
            self.app.call_from_thread(self._failed, f"{path}: no NCCL lines in it (run the job with NCCL_DEBUG=INFO)")
            return
        ours = {snap.source.hostname, socket.gethostname() if snap.source.kind == "nvml" else None} - {None}
        same = not log.hosts or (len(log.hosts) == 1 and (log.hosts[0] in ours or snap.source.kind != "nvml"))
        bus = {g.pci_bus_id: g.index for g in snap.gpus if g.pci_bus_id} if same else None
        table = table_from_log(log, bus_to_gpu=bus)
        findings = table_findings(table, snap, same_host=same, origin="log")
        where = f"log {path}" + (f" from {', '.join(log.hosts)}" if log.hosts else "") + ("" if same else ", not this host: not judged against NVML")
        digest = log.digest(text)  # None over DIGEST_LIMIT: the pair panel then matches the table's findings only
        prepared = prepare(digest) if digest is not None else None  # in this worker, not at every pair shown
        self.app.call_from_thread(self._log_done, where, table, findings, prepared)

    def _log_done(self, where: str, table: dict, findings: list, prepared: Any = None) -> None:
        self.runs = []
        self._log_prepared = prepared
        self._set([(where, table)], findings)
        n = len(table.get("pairs") or [])
        self.app.notify(clean(f"NCCL log: {n} pairs, NCCL {table.get('version') or '?'} (cells: c → nccl)"), timeout=6)
        self.app.events.add(f"NCCL {where}: {n} pairs", "info")

    def _set(self, tables: list[tuple[str, dict]], findings: list) -> None:
        self.tables, self.findings_all = tables, findings
        self.rows, self.where = {}, {}
        for where, table in tables:
            for row in table.get("pairs") or []:
                if row.get("gpus") and not row.get("cross_node"):
                    key = (row["gpus"][0], row["gpus"][1])
                    self.rows[key] = row
                    self.where[key] = where
        self.app.matrix.refresh_cells()
        if self.app.pair:
            self.app._show_pair(*self.app.pair)
