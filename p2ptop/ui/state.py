"""What the views show for one snapshot, prepared once (off the UI thread) so that drawing is lookups.

A :class:`DashboardState` is built by the polling worker from a snapshot and the state before it, and
handed to the UI in a message. It holds the fabric graph, the findings, the path class of every pair,
each GPU's health and the changes since the previous snapshot. Copy-test results are not frozen here:
they arrive while the state is on screen, so the app keeps them and asks :meth:`pair_state` with them.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Optional

from ..changes import Change, diff
from ..diagnose import findings_for, p2p_unknown
from ..fabric import Expectation, Fabric
from ..findings import Finding
from ..model import GPU, BenchResult, Pair, Snapshot
from .look import SEVERITY_ORDER, worst

#: findings that make a GPU "degraded" on screen
DEGRADING = {"nvlink.down", "nvlink.all_down", "nvlink.errors", "pcie.degraded", "fabric.not_ready"}
#: how long a change stays marked in the views
CHANGE_MARK_SECONDS = 60.0
#: copy-test outcomes that make a pair "failing"
FAILED_STATUSES = {"failed", "timeout", "crashed"}


def _steady(gpu: GPU) -> GPU:
    """A GPU without its utilization, which moves all the time on a busy host and matters to the
    findings only for a PCIe link trained low (busy or idle), so it is kept there."""
    return gpu if gpu.pcie_degraded else dataclasses.replace(gpu, utilization_gpu=None)


def same_hardware(a: Snapshot, b: Snapshot) -> bool:
    """True when two snapshots differ at most in when they were taken, copy-test results and the
    utilization of GPUs whose findings do not depend on it."""
    if (a.pairs, a.sockets, a.host, a.na, a.driver_version, a.cuda_driver_version) != (
            b.pairs, b.sockets, b.host, b.na, b.driver_version, b.cuda_driver_version):
        return False
    return [_steady(g) for g in a.gpus] == [_steady(g) for g in b.gpus]


def routine_refresh(was: "DashboardState", now: "DashboardState") -> bool:
    """True when a refresh changed only routine things (every change of severity info, e.g. corrected NVLink CRC
    errors at a harmless rate): the same findings by code, subject and severity, and the same change marks."""
    key = lambda state: sorted((f.id, f.subject, f.severity) for f in state.findings)  # noqa: E731
    return (now.indices == was.indices and all(c.severity == "info" for c in now.changes)
            and now.marked() == was.marked() and key(now) == key(was))


class DashboardState:
    def __init__(self, snapshot: Snapshot, previous: Optional["DashboardState"] = None,
                 changes: Optional[list[Change]] = None):
        """``changes``: those the source already found (the live path's change log); else computed here."""
        self.snapshot = snapshot
        self.changes: list[Change] = changes if changes is not None else diff(previous.snapshot if previous else None, snapshot)
        if previous is not None and not self.changes and same_hardware(previous.snapshot, snapshot):
            # the usual live refresh: nothing moved, so the analysis of the previous snapshot still holds
            # (it is what makes idle refreshes cheap at 72 GPUs, where the findings take a second)
            self.fabric, self.findings, self.path = previous.fabric, previous.findings, previous.path
            self.unchanged = True
        else:
            self.unchanged = False
            self.fabric = Fabric(snapshot)
            self.path = {(a, b): self.fabric.path_class(a, b) for a in snapshot.gpu_indices for b in snapshot.gpu_indices}
            self.findings = findings_for(snapshot, self.fabric)
        self.indices = snapshot.gpu_indices
        self.pairs: dict[tuple[int, int], Pair] = {(p.a, p.b): p for p in snapshot.pairs}
        self.by_subject: dict[str, list[Finding]] = {}
        for f in self.findings:
            self.by_subject.setdefault(f.subject, []).append(f)
        now = time.monotonic()
        # GPU -> monotonic time of its last change, carried over from the previous state
        self.changed_at: dict[int, float] = dict(previous.changed_at) if previous else {}
        for c in self.changes:
            if c.severity == "info":
                continue  # logged, not marked: e.g. corrected CRC errors at a harmless rate
            for i in c.gpus:
                self.changed_at[i] = now
        if self.unchanged and previous is not None and previous.indices == self.indices:
            self.gpu_state: dict[int, str] = previous.gpu_state  # from the same findings and pairs
        else:
            self.gpu_state = {i: self._gpu_state(i) for i in self.indices}
        self._expected: dict[tuple[int, int], Expectation] = {}

    # -- GPUs --
    def gpu_findings(self, index: int) -> list[Finding]:
        return self.by_subject.get(f"gpu:{index}", [])

    def _gpu_state(self, index: int) -> str:
        ids = {f.id for f in self.gpu_findings(index)}
        if "gpu.lost" in ids or "handle" in (self.snapshot.gpu(index).na if self.snapshot.gpu(index) else {}):
            return "lost"
        states = ["degraded"] if ids & DEGRADING else []
        if any(self.pair_p2p_refused(index, b) or self.pair_p2p_refused(b, index) for b in self.indices if b != index):
            states.append("nop2p")
        return worst(states)

    def marked(self) -> set[int]:
        """The GPUs whose change marks show now."""
        return {i for i in self.changed_at if self.recently_changed(i)}

    def recently_changed(self, index: int) -> bool:
        at = self.changed_at.get(index)
        return at is not None and time.monotonic() - at < CHANGE_MARK_SECONDS

    # -- pairs --
    def pair_p2p_refused(self, a: int, b: int) -> bool:
        pair = self.pairs.get((a, b))
        return bool(pair) and any(pair.p2p.get(cap) not in (None, "OK") for cap in ("read", "write"))

    def pair_p2p_unknown(self, a: int, b: int) -> Optional[str]:
        """Why the pair's P2P status is not known ("read and write not in the paste"), or None when it is."""
        return p2p_unknown(self.pairs.get((a, b)))

    def pair_findings(self, a: int, b: int) -> list[Finding]:
        return self.by_subject.get(f"pair:{a}-{b}", [])

    def host_findings(self) -> list[Finding]:
        return self.by_subject.get("host", [])

    def expected(self, a: int, b: int) -> Expectation:
        key = (a, b)
        if key not in self._expected:
            self._expected[key] = self.fabric.expected(a, b)
        return self._expected[key]

    def share(self, result: Optional[BenchResult]) -> Optional[float]:
        """Measured one-way copy-engine bandwidth as a share of what the link should give."""
        if result is None:
            return None
        m = result.measurement("ce_one_way")
        if m is None or m.value is None:
            return None
        expected = m.expected or self.expected(result.a, result.b).gbps
        return m.value / expected if expected else None

    def worst_pair(self) -> Optional[tuple[int, int]]:
        """The first pair in the worst state: where the dashboard opens, so a problem shows at once."""
        pairs = [(a, b) for a in self.indices for b in self.indices if a != b]
        if not pairs:
            return None
        return min(pairs, key=lambda p: SEVERITY_ORDER.index(self.pair_state(*p)))

    def pair_state(self, a: int, b: int, result: Optional[BenchResult] = None) -> str:
        if a == b:  # the diagonal: GPU a's host link, once it was measured
            if result is None:
                return "self"
            if result.status in FAILED_STATUSES or result.verdict == "failing" or result.integrity == "corrupt":
                return "failing"
            return {"slow": "degraded", "contended": "contended", "healthy": "ok"}.get(result.verdict or "", "unknown")
        states = [self.gpu_state.get(a, "unknown"), self.gpu_state.get(b, "unknown")]
        states = [s if s != "nop2p" else "ok" for s in states]  # a GPU refusing P2P elsewhere says nothing of this pair
        if self.pair_p2p_refused(a, b):
            states.append("nop2p")
        if (a, b) not in self.pairs or self.pair_p2p_unknown(a, b):
            states.append("unknown")  # a P2P status not read is not known, never healthy
        if result is not None:
            if result.status in FAILED_STATUSES or result.verdict == "failing" or result.integrity == "corrupt":
                states.append("failing")
            elif result.verdict == "slow":
                states.append("degraded")
            elif result.verdict == "contended":
                states.append("contended")
        return worst(states)
