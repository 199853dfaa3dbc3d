"""NVML events (Xid, ECC, clock changes) waited for in a thread of their own, turned into changes.

The thread blocks in ``nvmlEventSetWait_v2`` (WAIT_MS at a time: a wait returns the moment an event arrives,
so the length only sets how often an idle thread wakes), and hands each event to a callback the moment it
arrives: an Xid shows within a second, without reading dmesg. NVML cannot cut a wait short, so ``stop``
does not wait for it: when the thread is still inside a wait, it frees the event set itself (and runs the
caller's ``then``, e.g. nvmlShutdown) once the wait returns; NVML's init and shutdown are reference-counted,
so a reader opened meanwhile is not disturbed. Clock changes are not asked for: they say nothing about
peer-to-peer, and an idle H100 reported them often enough to keep the thread and the events log busy.
Every call goes through the reader (``NvmlReader.call``): a driver without events, or a GPU that does not
support a type, leaves the rest working and says why in :attr:`EventWatcher.status`.
"""

from __future__ import annotations

import ctypes
import datetime as _dt
import threading
from typing import Any, Callable, Optional

from ..changes import Change

#: nvmlEventType* bits (nvml.h; the same in nvidia-ml-py 13.x)
SINGLE_BIT_ECC, DOUBLE_BIT_ECC, PSTATE, XID, CLOCK = 0x1, 0x2, 0x4, 0x8, 0x10
#: what p2ptop asks for, where the GPU supports it (the lent H100 reported 0xff9f: all of these); not CLOCK
WANTED = SINGLE_BIT_ECC | DOUBLE_BIT_ECC | XID
EVENT_NAMES = {SINGLE_BIT_ECC: "single-bit ECC error", DOUBLE_BIT_ECC: "double-bit ECC error", PSTATE: "P-state change",
               XID: "Xid critical error", CLOCK: "clock change"}
#: Xid meanings, from NVIDIA's Xid catalogue (https://docs.nvidia.com/deploy/xid-errors/index.html)
XID_MEANINGS = {
    13: "graphics engine exception", 31: "GPU memory page fault", 43: "GPU stopped processing",
    45: "preemptive cleanup, due to previous errors", 48: "double-bit ECC error",
    61: "internal micro-controller breakpoint/warning", 62: "internal micro-controller halt",
    63: "ECC page retirement or row remapping recording event", 64: "ECC page retirement or row remapper recording failure",
    74: "NVLink error", 79: "GPU has fallen off the bus", 92: "high single-bit ECC error rate",
    94: "contained ECC error", 95: "uncontained ECC error", 119: "GSP RPC timeout", 120: "GSP error",
}
WAIT_MS = 5000
#: how long ``stop`` waits for the thread before leaving the clean-up to it
STOP_JOIN_S = 0.05


def handle_key(h: Any) -> Any:
    """Something hashable that is equal for two handles of the same GPU (ctypes pointers are compared by address)."""
    if isinstance(h, int):
        return h
    try:
        return ctypes.cast(h, ctypes.c_void_p).value
    except (TypeError, ctypes.ArgumentError):
        return id(h)


def event_change(index: Optional[int], event_type: int, data: int) -> Change:
    """The change an NVML event means (kinds of p2ptop.changes.KINDS)."""
    at = _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")
    subject = f"gpu:{index}" if index is not None else "host"
    who = f"GPU{index}" if index is not None else "A GPU"
    if event_type & XID:
        meaning = XID_MEANINGS.get(int(data))
        return Change("gpu.xid", subject, f"{who} Xid {int(data)}" + (f": {meaning}" if meaning else ""), at)
    if event_type & DOUBLE_BIT_ECC:
        return Change("gpu.ecc_dbe", subject, f"{who} double-bit ECC error (uncorrectable)", at)
    if event_type & SINGLE_BIT_ECC:
        return Change("gpu.ecc_sbe", subject, f"{who} single-bit ECC error (corrected)", at)
    name = EVENT_NAMES.get(event_type & -event_type, f"event 0x{event_type:x}")
    return Change("gpu.clock" if event_type & CLOCK else "gpu.event", subject, f"{who} {name}", at)


class EventWatcher:
    """Registers for NVML events on every GPU the reader has a handle of, and waits for them in a thread.

    ``on_change(change)`` is called from that thread. ``status`` says what was registered (or why not),
    per GPU: ``{"supported": mask, "registered": mask}`` or ``{"error": reason}``."""

    def __init__(self, reader: Any, on_change: Callable[[Change], None], wanted: int = WANTED):
        self.reader = reader
        self.on_change = on_change
        self.wanted = wanted
        self.status: dict[Any, dict[str, Any]] = {}
        self.delivered = 0
        self._set: Any = None
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None
        self._index_of: dict[Any, int] = {}
        self._state = threading.Lock()  # _done, _handed_over and _then, between stop() and the thread
        self._done = False
        self._handed_over = False
        self._then: Optional[Callable[[], None]] = None

    def start(self) -> bool:
        """True when at least one GPU is registered and the thread runs."""
        call = lambda *a: self.reader.call(*a, count=False)  # noqa: E731 - set-up is not part of a refresh
        es, why = call("nvmlEventSetCreate")
        if why is not None:
            self.status["host"] = {"error": why}
            return False
        self._set = es
        for index, h in self.reader.handles.items():
            supported, why = call("nvmlDeviceGetSupportedEventTypes", h)
            if why is not None:
                self.status[index] = {"error": why}
                continue
            mask = int(supported) & self.wanted
            if not mask:
                self.status[index] = {"supported": int(supported), "registered": 0}
                continue
            _, why = call("nvmlDeviceRegisterEvents", h, mask, es)
            if why is not None:
                self.status[index] = {"supported": int(supported), "error": why}
                continue
            self.status[index] = {"supported": int(supported), "registered": mask}
            self._index_of[handle_key(h)] = index
        if not self._index_of:
            self._free()
            return False
        self._thread = threading.Thread(target=self._run, name="p2ptop-nvml-events", daemon=True)
        self._thread.start()
        return True

    def _run(self) -> None:
        call = self.reader.call
        failures = 0
        while not self._stop.is_set():
            data, why = call("nvmlEventSetWait_v2", self._set, WAIT_MS, count=False)
            if why is not None:
                if "Timeout" in why or "timeout" in why:
                    failures = 0
                    continue
                failures += 1  # an unexpected error: do not spin on it
                if self._stop.wait(min(5.0, 0.5 * failures)):
                    break
                continue
            failures = 0
            try:
                index = self._index_of.get(handle_key(data.device))
                change = event_change(index, int(data.eventType), int(data.eventData))
            except Exception:  # noqa: BLE001 - an event we cannot read is dropped, the watcher goes on
                continue
            self.delivered += 1
            if self._stop.is_set():
                break  # stopped during the wait: the event is not delivered after stop
            try:
                self.on_change(change)
            except Exception:  # noqa: BLE001 - the callback's failure must not end the watcher
                pass
        with self._state:
            self._done = True
            then, self._then = self._then, None
            if self._handed_over:  # stop() left while this thread was in a wait: the clean-up is ours
                self._free()
        if then is not None:
            try:
                then()
            except Exception:  # noqa: BLE001
                pass

    def _free(self) -> None:
        if self._set is not None:
            self.reader.call("nvmlEventSetFree", self._set, count=False)
            self._set = None

    def stop(self, then: Optional[Callable[[], None]] = None) -> bool:
        """Stop the thread; free the event set, then call ``then``. True when done now; False when the thread
        is still in a wait (up to WAIT_MS): it frees the set and calls ``then`` itself when the wait returns."""
        self._stop.set()
        thread, self._thread = self._thread, None
        if thread is not None:
            thread.join(timeout=STOP_JOIN_S)
            with self._state:
                if not self._done:
                    self._handed_over, self._then = True, then
                    return False
        self._free()
        if then is not None:
            then()
        return True
