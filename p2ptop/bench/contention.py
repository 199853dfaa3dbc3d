"""Is anything else using the GPUs or their links? Read before, during and after a copy test.

One face: :class:`Watch` (the runner's) and :func:`busy_now` (``doctor``'s). Everything is read through
:class:`p2ptop.sources.nvml.ActivityReader`; nothing here imports pynvml.

- **Before** the test (no test of ours running, the GPU lock held): the compute processes on each GPU
  (pid, name from /proc, memory), the GPU utilisation, and the link traffic over a short window
  (``WINDOW_S``): NVLink data counters (all links, KiB) read at both ends of the window, and NVML's
  PCIe TX/RX throughput (its own ~20 ms window) read at both ends, the larger kept. The runner does
  this while the worker process starts (``begin``, ``end_window``; the worker waits for the runner's
  go before its first CUDA call), so the test waits only for what is left of it (``added_s``).
- **During** the test: a thread lists the compute processes every ``POLL_S`` (the worker's own pid
  left out) and, for host-link tests, reads the PCIe link's generation and width, tagged with the step
  the worker is in, so a link that trains up under load is told from one that stays low.
- **After** each pair: the process list again; for a host link, the PCIe replay counter and the AER
  counters (sysfs) again; the Xid errors NVML reported since the test began (an event set registered for
  Xid errors before it): an Xid during a test makes it failing whatever else used the GPUs.

A test is **contended** when, on its GPUs, another compute process was seen (before, during or after),
or the utilisation before it was at least ``BUSY_UTIL_PERCENT``, or the traffic before it reached
``BUSY_GBPS`` on PCIe or NVLink. Traffic and utilisation are only judged before the test: during it,
the test's own copies fill the links and the GPU, and NVML cannot say whose bytes they are.

NVML may list pids of another PID namespace (p2ptop in a container): exactly one such pid that appears
with a test, not seen before it, is taken for the test's own worker, and said so in ``na``; two or more are
contention.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any, Callable, Iterable, Optional

from ..model import BusyProcess, Contention, Snapshot

WINDOW_S = 0.1  # traffic window before a test (the check's cost; benchmarks/contention_overhead.py prints it)
POLL_S = 0.05  # during a test: process list and PCIe link state
BUSY_UTIL_PERCENT = 10  # NVML utilisation before a test at or above this: the GPU is in use
BUSY_GBPS = 1.0  # PCIe or NVLink traffic (either direction) at or above this before a test: the path is in use
NAME_CHARS = 60
#: NVML's utilisation covers its last sample period (up to 1 s): right after another test it still shows that
#: test. High utilisation with no other compute process listed is read again for up to this long.
SETTLE_S = 1.2


def process_name(pid: int, proc: str = "/proc") -> Optional[str]:
    """'python3 train.py': the process's comm and the file name of its first argument that is not an option
    (never the rest of the command line, which can hold secrets); None when the pid is not visible here."""
    try:
        with open(f"{proc}/{pid}/comm", encoding="utf-8", errors="replace") as f:
            text = f.read().strip()
    except OSError:
        return None
    try:
        with open(f"{proc}/{pid}/cmdline", "rb") as f:
            args = [a.decode("utf-8", "replace") for a in f.read().split(b"\0") if a]
        first = next((a for a in args[1:] if not a.startswith("-")), None)
        if first:
            text += " " + os.path.basename(first.rstrip("/"))
    except OSError:
        pass
    text = "".join(ch if ch.isprintable() else " " for ch in text).strip()
    return text if len(text) <= NAME_CHARS else text[: NAME_CHARS - 3] + "..."


def _open(nvml: Any) -> tuple[Any, Optional[str]]:
    try:
        from ..sources.nvml import ActivityReader, NvmlUnavailable
    except ImportError as e:  # pragma: no cover - nvml.py is ours
        return None, str(e)
    try:
        reader = ActivityReader(nvml)
        reader.open()
        return reader, None
    except NvmlUnavailable as e:
        return None, str(e)
    except Exception as e:  # noqa: BLE001 - the check never stops a test
        return None, f"{type(e).__name__}: {e}"


class Watch:
    """The contention check and the host-link readings of one copy-test run (several pairs possible)."""

    def __init__(self, snapshot: Snapshot, gpus: Iterable[int], nvml: Any = None, host_links: Iterable[int] = (),
                 window_s: float = WINDOW_S, poll_s: float = POLL_S, sysfs_root: str = "/"):
        self.snapshot, self.gpus = snapshot, sorted(set(gpus))
        self.host_links = sorted(set(host_links))
        self.window_s, self.poll_s, self.sysfs_root = window_s, poll_s, sysfs_root
        self.reader, self.why = _open(nvml)
        self.own_pids: set[int] = {os.getpid()}
        self.base = Contention(checked=self.reader is not None)
        if self.reader is None:
            self.base.na["nvml"] = self.why or "NVML not available"
        self.seen: list[tuple[BusyProcess, Optional[tuple[int, int]]]] = []  # (process, pair it ran beside)
        self.link_samples: dict[int, list[tuple[str, Optional[int], Optional[int]]]] = {g: [] for g in self.host_links}
        self.link_before: dict[int, dict[str, Any]] = {}
        self.link_after: dict[int, dict[str, Any]] = {}
        self.xids: list[tuple[Optional[int], int, Optional[tuple[int, int]]]] = []  # (GPU, Xid, pair it happened in)
        self._xid_set: Any = None
        self._pair: Optional[tuple[int, int]] = None
        self._step = "idle"
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._lock = threading.Lock()
        self._t0 = self._t_start = time.monotonic()
        self._start: dict[int, Any] = {}
        self.watch_xids = True  # an Xid event set around the test (busy_now, a look and no test, needs none)

    # -- before ------------------------------------------------------------------------------
    def before(self) -> Contention:
        """Read everything before the test; the returned Contention says whether the GPUs are busy."""
        self.begin()
        return self.end_window()

    def begin(self) -> None:
        """The first half of ``before``: the traffic counters at the window's start, then processes, utilisation,
        link state and the Xid event set (their time counts in the window). The runner calls it while the
        worker starts (the worker makes no CUDA call before the runner's go), then ``end_window``."""
        self._t0 = time.monotonic()
        c = self.base
        r = self.reader
        if r is None:
            return
        self._start = {g: (r.nvlink_kib(g), r.pcie_throughput(g)) for g in self.gpus}
        self._t_start = time.monotonic()
        for g in self.gpus:
            self._processes(g, "before")
            u, why = r.utilization(g)
            c.utilization[str(g)] = u
            if why:
                c.na[f"utilization.{g}"] = why
        self._settle_utilization(c)
        for g in self.host_links:
            self.link_before[g] = self._link_state(g)
        if self.watch_xids:
            self._xid_set, why = r.xid_watch(self.gpus)
            if why:
                c.na["xid_events"] = why

    def end_window(self) -> Contention:
        """The second half: wait out the rest of the window, read the counters again, judge."""
        c = self.base
        r = self.reader
        if r is None:
            c.check_s = round(time.monotonic() - self._t0, 4)
            return c
        rest = self.window_s - (time.monotonic() - self._t_start)
        if rest > 0:
            time.sleep(rest)
        dt = time.monotonic() - self._t_start
        c.window_s = round(dt, 3)
        for g in self.gpus:
            (nv0, why0), (pc0, whyp0) = self._start[g]
            nv1, why1 = r.nvlink_kib(g)
            pc1, whyp1 = r.pcie_throughput(g)
            t: dict[str, Optional[float]] = {}
            if nv0 is not None and nv1 is not None and dt > 0:
                t["nvlink_tx_gbps"] = round(max(0, nv1[0] - nv0[0]) * 1024 / dt / 1e9, 3)
                t["nvlink_rx_gbps"] = round(max(0, nv1[1] - nv0[1]) * 1024 / dt / 1e9, 3)
            else:
                c.na[f"nvlink_traffic.{g}"] = why0 or why1 or "not read"
            if pc0 is not None or pc1 is not None:
                got = [p for p in (pc0, pc1) if p is not None]
                t["pcie_tx_gbps"] = round(max(p["tx"] for p in got) * 1e3 / 1e9, 3)
                t["pcie_rx_gbps"] = round(max(p["rx"] for p in got) * 1e3 / 1e9, 3)
            else:
                c.na[f"pcie_traffic.{g}"] = whyp0 or whyp1 or "not read"
            c.traffic[str(g)] = t
        c.check_s = round(time.monotonic() - self._t0, 4)
        self.base = c
        return self.judged(self.gpus, "before")

    def added(self, seconds: Optional[float]) -> None:
        """What the check kept the test waiting (its reads overlap the worker's start): shown with each result."""
        self.base.added_s = round(seconds, 4) if seconds is not None else None

    def _settle_utilization(self, c: Contention) -> None:
        """High utilisation but no other process on the GPU: read it again until it falls (a test that just ended,
        e.g. the one we waited for) or SETTLE_S passes (then it is load: a process NVML does not list to us)."""
        with self._lock:
            busy_gpus = {p.gpu for p, _ in self.seen}
        first = {g: c.utilization.get(str(g)) for g in self.gpus}
        stale = [g for g in self.gpus if (first[g] or 0) >= BUSY_UTIL_PERCENT and g not in busy_gpus]
        t0 = time.monotonic()
        while stale and time.monotonic() - t0 < SETTLE_S:
            time.sleep(0.2)
            for g in list(stale):
                u, why = self.reader.utilization(g)
                if why is None:
                    c.utilization[str(g)] = u
                if u is not None and u < BUSY_UTIL_PERCENT:
                    stale.remove(g)
                    c.na[f"utilization.{g}"] = (f"{first[g]}% with no other process, {u}% {time.monotonic() - t0:.1f} s later: "
                                                "the end of work that had just finished (another test?), not load")

    def _processes(self, g: int, seen: str) -> list[BusyProcess]:
        procs, why = self.reader.processes(g)
        if why is not None:
            self.base.na[f"processes.{g}"] = why
            return []
        out = []
        with self._lock:
            own = set(self.own_pids)
        for pid, used in procs:
            if pid in own:
                continue
            p = BusyProcess(gpu=g, pid=pid, name=process_name(pid), used_mib=(used >> 20) if used is not None else None, seen=seen)
            out.append(p)
            with self._lock:
                if not any(q.gpu == g and q.pid == pid and q.seen == seen and pair == self._pair for q, pair in self.seen):
                    self.seen.append((p, self._pair))
        return out

    def _link_state(self, g: int) -> dict[str, Any]:
        link = self.reader.pcie_link(g) if self.reader else {}
        out: dict[str, Any] = {k: v for k, (v, _) in link.items()}
        out["na"] = {k: why for k, (_, why) in link.items() if why}
        gpu = self.snapshot.gpu(g)
        if gpu is not None and gpu.pci_bus_id:
            from ..sources.sysfs import read_aer

            aer, why = read_aer(gpu.pci_bus_id, self.sysfs_root)
            out["aer"] = aer
            out["na"].update({f"aer.{k}": v for k, v in why.items()})
        else:
            out["na"]["aer"] = "the GPU's PCI bus id is not known"
        return out

    # -- during ------------------------------------------------------------------------------
    def add_own_pid(self, pid: Optional[int]) -> None:
        if pid:
            with self._lock:
                self.own_pids.add(int(pid))

    def start(self) -> None:
        if self.reader is None or self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._poll, name="p2ptop-contention", daemon=True)
        self._thread.start()

    def pair(self, pair: Optional[tuple[int, int]]) -> None:
        with self._lock:
            self._pair = pair
            self._step = "setup"

    def step(self, name: str) -> None:
        with self._lock:
            self._step = name

    def _poll(self) -> None:
        k = 0
        while not self._stop.is_set():
            with self._lock:
                pair, step = self._pair, self._step
            try:
                if pair is not None:
                    if pair[0] == pair[1] and pair[0] in self.link_samples:
                        link = self.reader.pcie_link(pair[0])
                        self.link_samples[pair[0]].append((step, link["gen_cur"][0], link["width_cur"][0]))
                    if k % 4 == 0:  # the process list every 4th poll (0.2 s): it costs more than the link state
                        for g in sorted(set(pair)):
                            self._processes(g, "during")
            except Exception:  # noqa: BLE001 - a failing poll loses one sample, never the test
                pass
            k += 1
            self._stop.wait(self.poll_s)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
            self._thread = None

    # -- after -------------------------------------------------------------------------------
    def pair_done(self, a: int, b: int) -> None:
        """Right after a pair's result: the process list again, and a host link's error counters."""
        if self.reader is None:
            return
        try:
            for g in sorted({a, b}):
                self._processes(g, "after")
            if a == b and a in self.host_links:
                self.link_after[a] = self._link_state(a)
            if self._xid_set is not None:
                events, _ = self.reader.xid_events(self._xid_set)
                self.xids.extend((g, code, (a, b)) for g, code in events)
        except Exception:  # noqa: BLE001
            pass

    def pair_xids(self, a: int, b: int) -> list[str]:
        """'GPU0: Xid 79' for each Xid NVML reported while the pair ran (on any GPU of the run)."""
        return [f"GPU{g if g is not None else '?'}: Xid {code}" for g, code, pair in self.xids if pair == (a, b)]

    def close(self) -> None:
        self.stop()
        if self.reader is not None:
            try:
                self.reader.xid_close(self._xid_set)
                self._xid_set = None
                self.reader.close()
            except Exception:  # noqa: BLE001
                pass
            self.reader = None

    # -- judgement ---------------------------------------------------------------------------
    def judged(self, gpus: Iterable[int], upto: str = "after", pair: Optional[tuple[int, int]] = None) -> Contention:
        """The evidence for the given GPUs (and the pair's own 'during' and 'after' sightings)."""
        gpus = sorted(set(gpus))
        b = self.base
        c = Contention(checked=b.checked, window_s=b.window_s, check_s=b.check_s, added_s=b.added_s,
                       utilization={str(g): b.utilization.get(str(g)) for g in gpus if str(g) in b.utilization},
                       traffic={str(g): dict(b.traffic[str(g)]) for g in gpus if str(g) in b.traffic},
                       na={k: v for k, v in b.na.items() if k.rsplit(".", 1)[-1] in {str(g) for g in gpus} or "." not in k})
        with self._lock:
            seen = list(self.seen)
        # NVML may give pids of another PID namespace (a container): one such pid that appears with the test
        # and was not there before it is the test's own worker
        before_pids = {p.pid for p, _ in seen if p.seen == "before"}
        new_invisible = {p.pid for p, pr in seen if pr == pair and p.seen != "before" and p.name is None and p.pid not in before_pids}
        ours = new_invisible if len(new_invisible) == 1 and upto == "after" else set()
        for p, pr in seen:
            if p.gpu not in gpus:
                continue
            if p.seen != "before" and (upto == "before" or pr != pair):
                continue
            if p.pid in ours:
                c.na["processes.unseen_pid"] = (f"pid {p.pid} on GPU{p.gpu} is not visible here (another PID namespace) "
                                                "and came with the test: taken for the test's own worker")
                continue
            if not any(q.gpu == p.gpu and q.pid == p.pid for q in c.processes):
                c.processes.append(p)
        for p in c.processes:
            c.reasons.append(f"GPU{p.gpu}: another compute process {p.name or '(name not visible here)'} "
                             f"(pid {p.pid}{f', {p.used_mib} MiB' if p.used_mib is not None else ''}), seen {p.seen} the test")
        for g in gpus:
            u = c.utilization.get(str(g))
            if u is not None and u >= BUSY_UTIL_PERCENT:
                c.reasons.append(f"GPU{g}: {u}% utilised before the test (by others)")
            t = c.traffic.get(str(g), {})
            for key, label in (("pcie_tx_gbps", "PCIe out"), ("pcie_rx_gbps", "PCIe in"),
                               ("nvlink_tx_gbps", "NVLink out"), ("nvlink_rx_gbps", "NVLink in")):
                v = t.get(key)
                if v is not None and v >= BUSY_GBPS:
                    c.reasons.append(f"GPU{g}: {label} traffic {v:.1f} GB/s before the test (not the test's)")
        c.busy = bool(c.reasons)
        return c

    def link_report(self, g: int) -> dict[str, Any]:
        """A host link's PCIe state: before (idle), under load (best seen during copies), max, counters."""
        before = self.link_before.get(g, {})
        after = self.link_after.get(g, {})
        loaded = [(gen, w) for step, gen, w in self.link_samples.get(g, []) if step in LOAD_STEPS and gen and w]
        out: dict[str, Any] = {
            "idle_gen": before.get("gen_cur"), "idle_width": before.get("width_cur"),
            "gen_max": before.get("gen_max"), "width_max": before.get("width_max"),
            "load_samples": len(loaded),
        }
        if loaded:
            out["load_gen"] = max(gen for gen, _ in loaded)
            out["load_width"] = max(w for _, w in loaded)
        for key in ("replay",):
            if before.get(key) is not None:
                out[f"{key}_before"] = before[key]
            if after.get(key) is not None:
                out[f"{key}_after"] = after[key]
        for k, v in (before.get("aer") or {}).items():
            out[f"aer_{k}_before"] = v
        for k, v in (after.get("aer") or {}).items():
            out[f"aer_{k}_after"] = v
        na = dict(before.get("na") or {})
        if self.reader is None and not before:
            na["link"] = self.why or "NVML not available"
        if na:
            out["na"] = "; ".join(f"{k}: {v}" for k, v in sorted(na.items()))
        return out


#: Worker steps during which a host link carries the test's copies (its PCIe link must be up to speed).
LOAD_STEPS = ("h2d", "d2h", "host_bidirectional")


def busy_now(snapshot: Snapshot, nvml: Any = None, window_s: float = WINDOW_S) -> dict[int, Contention]:
    """Per GPU, what uses it now (for ``doctor``): processes, utilisation, traffic over ``window_s``."""
    watch = Watch(snapshot, snapshot.gpu_indices, nvml=nvml, window_s=window_s)
    watch.watch_xids = False  # no test follows: no Xid can be pinned on one
    try:
        if watch.reader is None:
            return {}
        watch.before()
        return {g: watch.judged([g], "before") for g in snapshot.gpu_indices}
    finally:
        watch.close()


def busy_findings(busy: dict[int, Contention]) -> list["Finding"]:
    """One warning per GPU in use now: copy-test figures taken now are not comparable (``doctor``)."""
    from ..findings import Finding, gpu_subject

    out = []
    for g, c in sorted(busy.items()):
        if c.busy:
            out.append(Finding("gpu.busy", gpu_subject(g), "warning",
                               f"GPU{g} is in use by other work: copy-test figures taken now are not comparable "
                               "(p2ptop bench refuses to measure it unless --allow-busy)",
                               list(c.reasons), {"gpu.busy": True}))
    return out
