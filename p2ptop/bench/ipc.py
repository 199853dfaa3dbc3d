"""The cross-process CUDA IPC copy test (``p2ptop bench A B --ipc``): two worker processes, one GPU each.

``run_ipc(snapshot, a, b)`` starts the export side on GPU A and the import side on GPU B (A may equal B:
two processes on one GPU, all a one-GPU host can do) with ``python -m p2ptop.bench.worker_ipc``, relays
the legacy handle and the cuMem socket path between them, and returns an :class:`IpcResult`: bandwidth
of each handle type, the same copy inside one process, their ratio, an integrity check, and, where it
failed, CUDA's exact error with the two processes' IPC and PID namespaces.

Either side can be started through a wrapper (``IpcOptions.wrap`` or ``$P2PTOP_IPC_WRAP_EXPORT`` /
``$P2PTOP_IPC_WRAP_IMPORT``, split on spaces), e.g. ``unshare -i`` to put one side in its own IPC
namespace as a container would. ``ipc_findings`` turns failures into findings for the knowledge base
(facts ``bench.error``, ``error.cuda``). Nothing here imports CuPy.
"""

from __future__ import annotations

import importlib.util
import os
import queue
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any, Callable, Optional

from ..findings import Finding, gpu_subject, pair_subject
from ..model import Snapshot
from .children import Child, Listen, child_env, clean, exit_text, read_event

KINDS = ("legacy", "cumem")
KIND_NAMES = {"legacy": "legacy cudaIpcGetMemHandle/cudaIpcOpenMemHandle",
              "cumem": "cuMem POSIX file descriptor (cuMemExportToShareableHandle, SCM_RIGHTS, cuMemImportFromShareableHandle)",
              "in_process": "the same copy inside one process"}
WORKER_ENV = "P2PTOP_IPC_WORKER"
WRAP_ENV = {"export": "P2PTOP_IPC_WRAP_EXPORT", "import": "P2PTOP_IPC_WRAP_IMPORT"}
TARGET_SHARE = 0.9  # two processes should reach this share of the in-process copy
#: driver-API error names whose runtime name is not the camel-cased one
DRIVER_TO_RUNTIME = {"CUDA_ERROR_OUT_OF_MEMORY": "cudaErrorMemoryAllocation", "CUDA_ERROR_INVALID_HANDLE": "cudaErrorInvalidResourceHandle",
                     "CUDA_ERROR_MAP_FAILED": "cudaErrorMapBufferObjectFailed", "CUDA_ERROR_INVALID_CONTEXT": "cudaErrorDeviceUninitialized"}

EventSink = Optional[Callable[[dict], None]]


@dataclass
class IpcOptions:
    size_mib: int = 256
    copies: int = 8
    repeats: int = 3
    warmup: int = 2
    timeout_s: float = 30.0  # without an event from either side
    kinds: tuple[str, ...] = KINDS
    worker: Optional[list[str]] = None
    wrap: dict[str, list[str]] = field(default_factory=dict)  # "export"/"import" -> command prefix


@dataclass
class IpcResult:
    a: int
    b: int
    status: str = "ok"  # ok | failed | timeout | crashed | cancelled | unavailable
    measurements: dict[str, dict] = field(default_factory=dict)  # in_process, ipc_legacy, ipc_cumem -> value/min/max GB/s
    shares: dict[str, float] = field(default_factory=dict)  # kind -> ipc / in_process
    integrity: dict[str, dict] = field(default_factory=dict)  # kind -> status, bad_bytes, first_bad_offset
    errors: list[dict] = field(default_factory=list)  # side, step, kind, name, code, text
    problems: list[str] = field(default_factory=list)  # the runner's own (timeout, crash, garbage)
    notes: list[str] = field(default_factory=list)  # what followed a failure already reported (a side's exit after its error,
    #                                                 a side p2ptop stopped when the other ended): shown, never findings
    sides: dict[str, dict] = field(default_factory=dict)  # export/import -> pid, ipc_ns, pid_ns, wrap
    params: dict[str, Any] = field(default_factory=dict)
    started_at: str = ""
    duration_s: Optional[float] = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def kind_ok(self, kind: str) -> bool:
        return f"ipc_{kind}" in self.measurements and self.integrity.get(kind, {}).get("status") == "ok"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def ipc_available(snapshot: Snapshot, options: Optional[IpcOptions] = None) -> tuple[bool, str]:
    if snapshot.source.kind != "nvml":
        return False, f"the IPC test runs on this machine's GPUs only; {snapshot.source.label} is not this machine"
    if not snapshot.gpus:
        return False, "no GPU on this host"
    if (options and options.worker) or os.environ.get(WORKER_ENV):
        return True, ""
    if importlib.util.find_spec("cupy") is None:
        return False, 'the IPC test needs CuPy: pip install "p2ptop[cuda12]" or pip install "p2ptop[cuda13]"'
    return True, ""


def run_ipc(snapshot: Snapshot, a: int, b: int, options: Optional[IpcOptions] = None,
            on_event: EventSink = None, cancel: Optional[threading.Event] = None) -> IpcResult:
    """Blocking; never raises."""
    options = options or IpcOptions()
    cancel = cancel or threading.Event()
    r = IpcResult(a=a, b=b, started_at=_now(), params={"size_mib": options.size_mib, "copies": options.copies,
                                                         "repeats": options.repeats, "warmup": options.warmup})
    ga, gb = snapshot.gpu(a), snapshot.gpu(b)
    if ga is None or gb is None:
        r.status = "failed"
        r.problems.append(f"no GPU{a if ga is None else b} here (GPUs: {snapshot.gpu_indices})")
        return r
    ok, why = ipc_available(snapshot, options)
    if not ok:
        r.status = "unavailable"
        r.problems.append(why)
        return r
    sockdir = tempfile.mkdtemp(prefix="p2ptop-ipc-")
    try:
        os.chmod(sockdir, 0o700)
        _Run(r, ga.pci_bus_id, gb.pci_bus_id, options, on_event, cancel, sockdir).go()
    except Exception as e:  # noqa: BLE001
        r.status = "failed"
        r.problems.append(f"internal error in the IPC runner: {type(e).__name__}: {e}")
    finally:
        shutil.rmtree(sockdir, ignore_errors=True)
    return r


class _Run:
    def __init__(self, r: IpcResult, bus_a, bus_b, options: IpcOptions, on_event, cancel, sockdir):
        self.r, self.bus_a, self.bus_b, self.o, self.on_event, self.cancel, self.sockdir = r, bus_a, bus_b, options, on_event, cancel, sockdir
        self.lines: "queue.Queue" = queue.Queue()
        self.kids: dict[str, Child] = {}
        self.garbage: list[str] = []
        self.done: set[str] = set()
        self.fatal: list[str] = []
        self.eof: set[str] = set()
        self.killed: set[str] = set()  # sides still running when p2ptop killed them

    def go(self) -> None:
        cmd = list(self.o.worker) if self.o.worker else (os.environ.get(WORKER_ENV, "").split() or [sys.executable, "-m", "p2ptop.bench.worker_ipc"])
        env = child_env({"CUDA_DEVICE_ORDER": "PCI_BUS_ID"})
        t0 = time.monotonic()
        for side in ("export", "import"):
            wrap = self.o.wrap.get(side) or os.environ.get(WRAP_ENV[side], "").split()
            c = self.kids[side] = Child(side, cmd, env, self.lines, wrap=wrap)
            self.r.sides[side] = {"wrap": " ".join(wrap)}
            if not c.start():
                self.r.status = "unavailable"
                self.r.problems.append(c.start_error or "cannot start the IPC worker")
                self._stop(True)
                return
            c.send({"side": side, "bus_a": self.bus_a, "bus_b": self.bus_b, "kinds": list(self.o.kinds), "size_mib": self.o.size_mib,
                    "copies": self.o.copies, "repeats": self.o.repeats, "warmup": self.o.warmup, "socket_dir": self.sockdir,
                    "timeout_s": self.o.timeout_s})
        eof = self.eof
        listen = Listen(self.lines, self.cancel, self.o.timeout_s)

        def on_eof(side: str) -> Optional[str]:
            eof.add(side)
            if len(eof) == 2:
                return "eof"
            if side not in self.done:  # one side died: the other would wait for it
                listen.shorten(2.0)
            return None

        ended = listen.run(lambda side, line: self._handle(side, line) and not eof, on_eof,
                           on_timeout=lambda: "died" if len(eof) == 1 else "timeout")
        self._stop(ended != "eof")
        self.r.duration_s = round(time.monotonic() - t0, 3)
        self._finish(ended)

    def _stop(self, kill: bool) -> None:
        if kill:
            self.killed = {side for side in self.kids if side not in self.eof}
            for c in self.kids.values():
                c.kill_group()
        for c in self.kids.values():
            c.reap(self.cancel)

    def _handle(self, side: str, raw: bytes) -> bool:
        ev, text = read_event(raw)
        if ev is None:
            if text and len(self.garbage) < 3:
                self.garbage.append(f"{side}: {clean(text, 120)}")
            return False
        kind = ev["type"]
        if kind == "hello":
            self.r.sides[side].update({k: clean(str(ev.get(k)), 80) for k in ("pid", "ipc_ns", "pid_ns", "cupy")})
        elif kind == "handle" and side == "export":
            self.kids["import"].send({"handle": {k: v for k, v in ev.items() if k != "type"}})
            if ev.get("failed"):
                self.kids["export"].send({"release": ev.get("kind")})
        elif kind in ("finished",) and side == "import":
            self.kids["export"].send({"release": ev.get("kind")})
        elif kind == "measurement":
            try:
                self.r.measurements[clean(str(ev["name"]), 40)] = {k: float(ev[k]) for k in ("value", "min", "max")}
            except (KeyError, TypeError, ValueError):
                self.garbage.append(f"{side}: {clean(text, 120)}")
        elif kind == "integrity":
            self.r.integrity[clean(str(ev.get("kind")), 20)] = {"status": "corrupt" if ev.get("status") == "corrupt" else "ok",
                                                               "bad_bytes": ev.get("bad_bytes"), "first_bad_offset": ev.get("first_bad_offset"),
                                                               "checked_bytes": ev.get("checked_bytes")}
        elif kind == "error":
            self.r.errors.append({"side": side, "step": clean(str(ev.get("step")), 30), "kind": ev.get("kind") if ev.get("kind") in (*KINDS, "in_process") else None,
                                  "name": clean(str(ev.get("name")), 80), "code": ev.get("code") if isinstance(ev.get("code"), int) else None,
                                  "text": clean(str(ev.get("text")), 600)})
        elif kind == "fatal":
            self.fatal.append(f"{side}: {clean(str(ev.get('message')), 600)}")
        elif kind == "done":
            self.done.add(side)
        if self.on_event and kind in ("measurement", "imported", "handle"):
            self.on_event({"type": "progress", "a": self.r.a, "b": self.r.b, "step": kind, "message": clean(text, 120)})
        return True

    def _finish(self, ended: Optional[str]) -> None:
        r = self.r
        r.problems += self.fatal
        if self.garbage:
            r.problems.append("unreadable output: " + " | ".join(self.garbage))
        if ended == "cancel":
            r.status = "cancelled"
        elif ended == "timeout":
            r.status = "timeout"
            r.problems.append(f"no event within {self.o.timeout_s:g} s: both sides were killed")
        elif self.fatal and len(self.done) < 2:
            r.status = "unavailable"
        elif len(self.done) < 2:
            # one failure, one finding: a side that said its error and exited, and the side p2ptop then
            # stopped, are consequences (notes); only a side that died without a word is a crash
            said = {e["side"] for e in r.errors}
            crashed = []
            for side, c in self.kids.items():
                if side in self.done:
                    continue
                other = "import" if side == "export" else "export"
                if side in self.killed:
                    r.notes.append(f"the {side} side was stopped by p2ptop ({exit_text(c.code).removeprefix('was killed by ')}) "
                                   f"after the {other} side ended")
                elif side in said:
                    r.notes.append(f"the {side} side {exit_text(c.code)} after its error")
                else:
                    tail = clean(c.stderr_text()[-600:], 600)
                    crashed.append(f"the {side} side {exit_text(c.code)}" + (f"; stderr: {tail}" if tail else ""))
            r.problems += crashed
            r.status = "crashed" if crashed or not said else "failed"
        else:
            r.status = "ok" if all(r.kind_ok(k) for k in self.o.kinds) else "failed"
        base = r.measurements.get("in_process", {}).get("value")
        for k in self.o.kinds:
            v = r.measurements.get(f"ipc_{k}", {}).get("value")
            if v and base:
                r.shares[k] = round(v / base, 3)


def runtime_error_name(name: str) -> Optional[str]:
    """CUDA's error name as the runtime spells it: 'CUDA_ERROR_INVALID_VALUE' -> 'cudaErrorInvalidValue'."""
    if name.startswith("cudaError"):
        return name
    if name.startswith("CUDA_ERROR_"):
        return DRIVER_TO_RUNTIME.get(name) or "cudaError" + "".join(w.capitalize() for w in name[11:].split("_"))
    return None


def crossed_namespaces(r: IpcResult) -> list[str]:
    """'IPC' and/or 'PID' where the two sides ran in different namespaces of that kind."""
    return [name for name, key in (("IPC", "ipc_ns"), ("PID", "pid_ns"))
            if len({s.get(key) for s in r.sides.values() if s.get(key)}) > 1]


def namespace_verdict(r: IpcResult) -> Optional[str]:
    """Said plainly where the sides were in separate namespaces: did CUDA IPC still work across them?"""
    kinds = crossed_namespaces(r)
    if not kinds:
        return None
    ns = " and ".join(kinds)
    where = "; ".join(f"{side} {', '.join(str(s.get(k)) for k in ('ipc_ns', 'pid_ns'))}" for side, s in r.sides.items())
    worked = [k for k in KINDS if r.kind_ok(k)]
    if worked:
        return (f"the two processes were in separate {ns} namespaces ({where}) and CUDA IPC still worked "
                f"({', '.join(worked)}): separate {ns} namespaces did not stop CUDA IPC on this host")
    return f"the two processes were in separate {ns} namespaces ({where}) and CUDA IPC did not work across them"


def ipc_findings(r: IpcResult) -> list[Finding]:
    subject = gpu_subject(r.a) if r.a == r.b else pair_subject(r.a, r.b)
    where = f"GPU{r.a} and GPU{r.b}" if r.a != r.b else f"two processes on GPU{r.a}"
    ns = [f"{side} side: IPC namespace {s.get('ipc_ns')}, PID namespace {s.get('pid_ns')}" + (f" (started through `{s['wrap']}`)" if s.get("wrap") else "")
          for side, s in r.sides.items() if s.get("ipc_ns")]
    differs = len({s.get("ipc_ns") for s in r.sides.values() if s.get("ipc_ns")}) > 1
    pid_differs = len({s.get("pid_ns") for s in r.sides.values() if s.get("pid_ns")}) > 1
    out = []
    for e in r.errors:
        kind = e.get("kind") or "setup"
        text = f"{e['step']}: {e['name']}" + (f" ({e['code']})" if e.get("code") is not None else "") + f": {e['text']}"
        facts: dict[str, Any] = {"bench.status": "failed", "bench.error": text[:300], "error.text": text[:200], "ipc.kind": kind,
                                 "ipc.namespace_differs": differs, "ipc.pid_namespace_differs": pid_differs}
        rt = runtime_error_name(e["name"])
        if rt:
            facts["error.cuda"] = rt
            if e["name"].startswith("cudaError") and e.get("code") is not None:
                facts["error.cuda_code"] = e["code"]
        out.append(Finding("bench.ipc_failed", subject, "problem",
                           f"CUDA IPC between {where} failed ({KIND_NAMES.get(kind, kind)}): {e['name']}",
                           [f"{e['side']} side, {text}"] + ns, facts))
    for p in r.problems:
        out.append(Finding("bench.ipc_failed", subject, "problem", f"The IPC test between {where} did not finish: {r.status}",
                           [p] + ns, {"bench.status": r.status, "bench.error": p[:300]}))
    verdict = namespace_verdict(r)
    worked = [k for k in KINDS if r.kind_ok(k)]
    if verdict and worked and r.status == "ok":  # a partial failure already has its finding; the report says the rest
        crossed = crossed_namespaces(r)
        out.append(Finding("bench.ipc_across_namespaces", subject, "info", verdict[0].upper() + verdict[1:], ns,
                           {"bench.status": r.status, "ipc.namespace_differs": "IPC" in crossed,
                            "ipc.pid_namespace_differs": "PID" in crossed, "ipc.kind": ",".join(worked)}))
    for k, share in r.shares.items():
        if share < TARGET_SHARE:
            out.append(Finding("bench.ipc_slow", subject, "warning",
                               f"CUDA IPC ({k}) between {where} reaches {share:.0%} of the same copy inside one process",
                               [f"ipc_{k} {r.measurements[f'ipc_{k}']['value']:.1f} GB/s, in-process {r.measurements['in_process']['value']:.1f} GB/s"],
                               {"bench.share": share, "ipc.kind": k}))
    for k, integ in r.integrity.items():
        if integ.get("status") == "corrupt":
            out.append(Finding("bench.ipc_corrupt", subject, "problem", f"Data copied through CUDA IPC ({k}) between {where} is corrupt",
                               [f"{integ.get('bad_bytes')} bad bytes, the first at offset {integ.get('first_bad_offset')}"],
                               {"bench.integrity": "corrupt", "ipc.kind": k}))
    return out


def report(r: IpcResult) -> str:
    lines = [f"CUDA IPC copy test: GPU{r.a} (export side) -> GPU{r.b} (import side), two processes, "
             f"{r.params.get('size_mib')} MiB x {r.params.get('copies')} copies, median of {r.params.get('repeats')}: status {r.status}"]
    for side, s in r.sides.items():
        if s:
            lines.append(f"  {side:<6} side: pid {s.get('pid', '-')}, IPC ns {s.get('ipc_ns', '-')}, PID ns {s.get('pid_ns', '-')}"
                         + (f", started through `{s['wrap']}`" if s.get("wrap") else ""))
    for name in ("in_process", "ipc_legacy", "ipc_cumem"):
        m = r.measurements.get(name)
        kind = name.removeprefix("ipc_")
        if m:
            share = f"  {r.shares[kind]:.0%} of in-process" if kind in r.shares else ""
            integ = r.integrity.get(kind, {}).get("status")
            lines.append(f"  {name:<11} {m['value']:>8.1f} GB/s (min {m['min']:.1f}, max {m['max']:.1f}){share}"
                         + (f", integrity {integ}" if integ else "") + f"   [{KIND_NAMES.get(kind, kind)}]")
    for e in r.errors:
        lines.append(f"  error ({e['side']} side, {e.get('kind') or 'setup'}, {e['step']}): {e['name']}"
                     + (f" ({e['code']})" if e.get("code") is not None else "") + f": {e['text']}")
    for p in r.problems:
        lines.append(f"  problem: {p}")
    for n in r.notes:
        lines.append(f"  note: {n}")
    verdict = namespace_verdict(r)
    if verdict:
        lines.append(f"  namespaces: {verdict}")
    return "\n".join(clean(x, 2000) for x in lines) + "\n"
