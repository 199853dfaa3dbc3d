"""The live poll: what to read from NVML when, kept apart from whoever shows it.

A full read (identity, topology, P2P status, each link's version, remote and capability, the PCIe path
from sysfs, the host facts) happens at the start and again only when something says the hardware may
have changed: a link went down or came up, a GPU was lost, came back or appeared, a PCIe link retrained,
NVML calls started failing, an NVML event (Xid, double-bit ECC) arrived, or ``static_every`` seconds
passed. Every other refresh reads only what moves (NvmlReader.read_dynamic). A dynamic refresh whose
changes call for a full read is followed at once by one, so what is handed out is never stale.
"""

from __future__ import annotations

import collections
import threading
import time
from dataclasses import dataclass, field
TYPE_CHECKING = False  # typing is not imported at run time (start-up); the annotations are strings
if TYPE_CHECKING:
    from typing import Any, Callable, Optional

from ..model import Snapshot

if TYPE_CHECKING:  # imported where a poll compares snapshots: a one-off read (topo, snapshot) does not need it
    from ..changes import Change

#: how often the parts that do not move are read again anyway (seconds)
STATIC_EVERY_S = 300.0
#: the share of a core that reading them again anyway may take: where a full read takes longer than
#: STATIC_EVERY_S x STATIC_SHARE, it repeats every (its own time / STATIC_SHARE) instead. P2P status is 5 calls an
#: ordered pair (25,560 at 72 GPUs) at ~1.6-1.9 ms a call on the 2 H200s' driver (2026-11-27): a 72-GPU full read
#: could take ~48 s, 16 % of a core if it came back every 5 minutes. A change that says the static parts may have
#: moved (RESTATIC_KINDS, RESTATIC_EVENTS) still reads them at once.
STATIC_SHARE = 0.01
#: changes after which the static parts may be stale: the next snapshot handed out is a full read
RESTATIC_KINDS = {"nvlink.down", "nvlink.up", "gpu.lost", "gpu.back", "gpu.added", "pcie.retrain",
                  "nvml.failing", "nvml.recovered"}
#: NVML events after which the next poll reads in full (a driver event: the GPU may have been reset)
RESTATIC_EVENTS = {"gpu.xid", "gpu.ecc_dbe"}


@dataclass
class Poll:
    """One refresh: the snapshot, the changes since the previous one, and what it cost."""

    snapshot: Snapshot
    changes: list["Change"] = field(default_factory=list)
    full: bool = True  # a full read (else only what moves)
    why_full: str = ""  # what made it a full read
    calls: int = 0  # NVML calls it made
    seconds: float = 0.0  # wall time it took
    compared: bool = True  # False: nothing before it to compare with (first read, or NVML reopened)


class LiveSource:
    """Live NVML, kept initialised between polls. The one face of the live path: the dashboard,
    ``p2ptop snapshot`` and an exporter all read through it.

    ``on_change`` (called from the event thread) receives the changes NVML events bring, the moment
    they arrive; they are also kept in :attr:`log` with every change the polls found.
    ``host_facts=False`` leaves the host facts out (commands that do not show them)."""

    def __init__(self, nvml: Any = None, sysfs_root: str = "/", *, host_facts: bool = True, events: bool = True,
                 static_every: float = STATIC_EVERY_S, on_change: Optional[Callable[[Change], None]] = None,
                 log_size: int = 1000, clock: Callable[[], float] = time.monotonic, what: str = "all"):
        self._nvml, self._sysfs_root = nvml, sysfs_root
        self.host_facts, self.events_wanted, self.static_every = host_facts, events, static_every
        self.on_change = on_change
        self.clock = clock
        self.what = what  # "topo": full reads read only what p2ptop topo prints (NvmlReader.read_open)
        self.log: collections.deque[Change] = collections.deque(maxlen=log_size)
        self.last: Optional[Snapshot] = None
        self.events: Any = None  # the EventWatcher, once started
        self.event_status: dict[Any, dict[str, Any]] = {}  # per GPU: event types supported and registered
        self._reader: Any = None
        self._static_at = 0.0
        self._full_wanted = ""
        self._lock = threading.Lock()
        #: how NVLink counters are read on this host where some are read in the slower round (else "")
        self.counter_note = ""
        self._note_said = ""
        self._polled_at: Optional[float] = None
        self.full_seconds = 0.0  # what the last full read took (wall time): it sets how often one comes anyway
        self._static_note_said = False

    # -- NVML open/close --
    def _open(self) -> Any:
        from ..sources import SourceUnavailable
        from ..sources.nvml import NvmlReader, NvmlUnavailable

        reader = NvmlReader(self._nvml, sysfs_root=self._sysfs_root)
        try:
            reader.open()
        except NvmlUnavailable as e:
            raise SourceUnavailable(
                f"{e}. No NVIDIA driver here? Try a bundled demo (p2ptop demo lists them: --demo NAME) "
                f"or a saved snapshot (--replay FILE)."
            ) from None
        self._reader = reader
        return reader

    def close(self) -> None:
        reader, self._reader = self._reader, None
        events, self.events = self.events, None
        if events is not None:
            # the event thread may be inside a wait NVML cannot cut short: it then frees its set and shuts
            # this reader's NVML down itself when the wait returns (close does not block on it)
            events.stop(then=reader.close if reader is not None else None)
        elif reader is not None:
            reader.close()
        self.last = None

    def _start_events(self) -> None:
        from .events import EventWatcher

        watcher = EventWatcher(self._reader, self._event)
        if watcher.start():
            self.events = watcher
        else:
            self.events = None
        self.event_status = watcher.status

    def _event(self, change: Change) -> None:
        with self._lock:
            self.log.append(change)
            if change.kind in RESTATIC_EVENTS:
                self._full_wanted = f"NVML event: {change.text}"
        if self.on_change is not None:
            self.on_change(change)

    # -- one refresh --
    def _why_full(self, now: float) -> str:
        last = self.last
        if last is None:
            return "first read"
        if self._full_wanted:
            return self._full_wanted
        every = self.static_interval()
        if now - self._static_at >= every:
            return f"every {every:g} s" if every == self.static_every else f"every {every:.0f} s (a full read takes " \
                   f"{self.full_seconds:.1f} s here: at most {STATIC_SHARE:.0%} of a core)"
        if "gpus" in last.na:
            return "NVML could not list the GPUs"
        for g in last.gpus:
            if "handle" in g.na or any("lost" in why.lower() for why in g.na.values()):
                return f"GPU{g.index} was lost"
        return ""

    def static_interval(self) -> float:
        """Seconds between full reads made only because time passed: ``static_every``, or longer where a full read
        takes more than STATIC_SHARE of that (large hosts)."""
        return max(self.static_every, self.full_seconds / STATIC_SHARE)

    def poll(self) -> Poll:
        """Read once; raises SourceUnavailable when NVML cannot start (the next poll tries again)."""
        t0 = time.perf_counter()
        reader = self._reader or self._open()
        diff = _diff
        compared = self.last is not None
        n0 = reader.ncalls
        try:
            now = self.clock()
            with self._lock:
                why = self._why_full(now)
                self._full_wanted = ""
            snap, changes = None, []
            if not why:
                snap = reader.read_dynamic(self.last)
                if snap is None:
                    why = "the GPU count changed or could not be read"
                else:
                    changes = diff(self.last, snap, reader.counter_seconds)
                    moved = sorted({c.kind for c in changes} & RESTATIC_KINDS)
                    if moved:
                        why = "changes: " + ", ".join(moved)
            if why:
                # counters are dynamic: a full read after the first carries them over (the refreshes read them)
                # (from this refresh's own read where there was one, so that what it read is not lost)
                before = snap if snap is not None else self.last
                t_full = time.perf_counter()
                snap = reader.read_open(what=self.what, carry=before if before is not None and before.gpus else None)
                self.full_seconds = time.perf_counter() - t_full
                self._static_at = now
                if self.host_facts:
                    from ..sources import attach_host

                    attach_host(snap, self._sysfs_root)
                changes = diff(self.last, snap)
        except Exception:
            self.close()
            raise
        if self.events is None and self.events_wanted and self.last is None:
            self._start_events()
        self.last = snap
        with self._lock:
            self.log.extend(changes)
        # how counters are read on this host: said once (and again if it changes), from the second poll on,
        # when the time between polls says how many seconds the round takes
        note = counter_note(reader)
        interval, self._polled_at = (now - self._polled_at if self._polled_at is not None else None), now
        if note and note != self._note_said and interval:
            from ..sources.nvlink_fields import ROUND_REFRESHES as ROUND

            self._note_said = note
            self.counter_note = note.replace("refreshes; link", f"refreshes (about {interval * ROUND:.0f} s at this "
                                             f"{interval:.3g} s refresh); link", 1)
            from ..changes import Change

            self._event(Change("nvml.counters", "host", self.counter_note, snap.source.taken_at or ""))
        if why and not self._static_note_said and self.static_interval() > self.static_every:
            self._static_note_said = True
            from ..changes import Change

            self._event(Change("nvml.static", "host", (
                f"A full read (identity, topology, P2P status of every pair) takes {self.full_seconds:.1f} s here: read "
                f"again every {self.static_interval() / 60:.0f} min rather than every {self.static_every / 60:g} min "
                f"(at most {STATIC_SHARE:.0%} of a core); a link going down or up, a GPU lost or back, a PCIe retrain "
                f"or a driver event still reads it at once"), snap.source.taken_at or ""))
        return Poll(snap, changes, bool(why), why, reader.ncalls - n0, time.perf_counter() - t0, compared)

    def read(self) -> Snapshot:
        return self.poll().snapshot


def _diff(old: Optional[Snapshot], new: Snapshot, link_seconds: Any = None) -> list:
    if old is None:
        return []  # nothing to compare (a one-off read): p2ptop.changes is not imported
    from ..changes import diff

    return diff(old, new, link_seconds)


def counter_note(reader: Any) -> str:
    """One line for the events log where some NVLink counters are read in the slower round: which GPUs,
    how often, and why (no batched field answers for them, or asking the batched fields every refresh costs
    more than reading them in turn). Empty where every counter is read every refresh."""
    from ..sources.nvlink_fields import ROUND_REFRESHES

    plans = sorted(getattr(reader, "plans", {}).items())
    by_total = {i: p for i, p in plans if p.totals_in_round}
    if by_total:  # the host's budget put every GPU's counters in the round (many GPUs)
        from ..sources.nvlink_fields import COUNTERS_EVERY_REFRESH_HOST_S as BUDGET

        ms = sum(p.totals_cost_s + (p.field_cost_s if p.per_link_fields() else 0.0) for p in by_total.values()) * 1000
        return (f"NVLink error counters of {len(by_total)} GPUs are read in turn, each GPU's totals once every "
                f"{ROUND_REFRESHES} refreshes; link states every refresh; a counter whose total moved is then read "
                f"link by link. Why: asking every GPU's counters every refresh would cost {ms:.0f} ms a refresh at the full "
                f"read's timing (the budget is {BUDGET * 1000:.0f} ms); a rise shows within {ROUND_REFRESHES} refreshes")
    slow = {i: p for i, p in plans if p.round}
    if not slow:
        return ""
    n = sum(len(p.round) for p in slow.values())
    total = sum(len(p.links) * 4 for p in slow.values())
    costly = [p for p in slow.values() if p.fields_in_round]
    why = ("the driver gives no batched field for them (field values 38/45/52/59 totals, 161-163 per link, "
           "per-link ids)")
    if costly:
        ms = max(p.field_cost_s for p in costly) * 1000
        why = (f"the driver's batched fields for them cost {ms:.0f} ms a GPU at the full read (a query a link), "
               f"too much for every refresh")
    return (f"NVLink error counters: {n} of {total} on GPU{', GPU'.join(str(i) for i in slow)} are read in turn, "
            f"each link once every {ROUND_REFRESHES} refreshes; link states every refresh. Why: {why}; "
            f"a rise shows within {ROUND_REFRESHES} refreshes")
