"""The header line: host, driver, CUDA version, GPU count and where the snapshot came from."""

from __future__ import annotations

from typing import Optional

from rich.text import Text
from textual.widgets import Static

from ...model import Snapshot
from ..look import clean


def header_text(snap: Optional[Snapshot], updated: Optional[str] = None) -> Text:
    t = Text()
    t.append(" p2ptop ", style="bold reverse")
    if snap is None:
        t.append("  reading…", style="dim")
        return t
    src = snap.source
    t.append(" ")
    if src.kind == "nvml":
        t.append(" LIVE ", style="bold reverse green")
        if updated:
            t.append(f" {updated}", style="dim")
    elif src.kind == "demo":
        t.append(f" DEMO {clean(src.detail or '')} (simulated) ", style="bold reverse magenta")
    elif src.kind == "import" or src.origin_kind == "import":
        t.append(" IMPORTED ", style="bold reverse yellow")
        t.append(f" {clean(src.detail or '')}, from a paste (the rest N/A)")
    else:
        sim = " simulated" if src.simulated else ""
        t.append(f" REPLAY{sim} ", style="bold reverse cyan")
        t.append(f" {clean(src.detail or '')}, taken {clean(src.taken_at or 'N/A')}")
    t.append(f"  {clean(src.hostname or 'host N/A')}", style="bold")
    t.append(f"  driver {clean(snap.driver_version or 'N/A')}")
    t.append(f"  CUDA {clean(snap.cuda_driver_version or 'N/A')}")
    t.append(f"  {len(snap.gpus)} GPU{'s' if len(snap.gpus) != 1 else ''}")
    return t


class Header(Static):
    def show(self, snap: Optional[Snapshot], updated: Optional[str] = None) -> None:
        self.update(header_text(snap, updated))
