"""Where the exporter's snapshots come from: one small function, so the reader can be swapped.

``make_reader(demo, replay)`` returns a callable that gives a fresh :class:`Snapshot` each time it is
called, or raises (NVML failing, the file gone). The exporter calls it from its own thread only.
Live reads keep NVML open between calls (``LiveSession``) and attach the host facts (cached 60 s).
"""

from __future__ import annotations

from typing import Callable, Optional

from ..model import Snapshot
from ..sources import SourceUnavailable, attach_host, open_snapshot

Reader = Callable[[], Snapshot]


def make_reader(demo: Optional[str] = None, replay: Optional[str] = None) -> Reader:
    if demo or replay:
        return lambda: open_snapshot(demo=demo, replay=replay)
    from ..sources.nvml import LiveSession, NvmlUnavailable

    session = LiveSession()

    def read() -> Snapshot:
        try:
            snap = session.read()
        except NvmlUnavailable as e:
            raise SourceUnavailable(str(e)) from None
        attach_host(snap)
        return snap

    return read
