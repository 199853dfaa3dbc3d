"""Where the exporter's snapshots come from: one small function, so the reader can be swapped.

``make_reader(demo, replay)`` returns a callable that gives a fresh :class:`Snapshot` each time it is
called, or raises (NVML failing, the file gone). The exporter calls it from its own thread only.
Live reads go through the live path (``p2ptop.live.LiveSource``), as the dashboard's do: NVML kept open,
the static parts read again only when something says they may have changed, host facts attached.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

from ..model import Snapshot
from ..sources import open_snapshot

Reader = Callable[[], Snapshot]


def make_reader(demo: Optional[str] = None, replay: Optional[str] = None, nvml: Any = None) -> Reader:
    """``nvml``: the NVML module for live reads (tests pass the capture fake); None: pynvml."""
    if demo or replay:
        return lambda: open_snapshot(demo=demo, replay=replay)
    from ..live import LiveSource

    source = LiveSource(nvml, events=False)  # raises SourceUnavailable when NVML cannot start; the next read tries again
    return source.read
