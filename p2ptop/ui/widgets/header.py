"""The header line: host, driver, CUDA version, GPU count and where the snapshot came from.

It stays one line at any width: where the full text does not fit, the separators narrow, "driver" becomes
"drv", the host name is shortened (then left out), then the CUDA version; the source badge (LIVE, DEMO ...
(simulated), REPLAY) and the GPU count always show."""

from __future__ import annotations

from typing import Optional

from rich.text import Text
from textual.widgets import Static

from ...model import Snapshot
from ..look import clean


def _parts(snap: Snapshot, updated: Optional[str], compact: bool, host_room: Optional[int], cuda: bool,
           cut: int = 0) -> list[tuple[str, str]]:
    src = snap.source
    sep = " " if compact else "  "
    parts: list[tuple[str, str]] = [(" p2ptop ", "bold reverse"), (" ", "")]
    if src.kind == "nvml":
        parts.append((" LIVE (simulated) " if src.simulated else " LIVE ", "bold reverse green"))
        if updated:
            parts.append((f" {updated}", "dim"))
    elif src.kind == "demo":
        parts.append((f" DEMO {clean(src.detail or '')} (simulated) ", "bold reverse magenta"))
    elif src.kind == "import" or src.origin_kind == "import":
        parts.append((" IMPORTED ", "bold reverse yellow"))
        parts.append((f" {clean(src.detail or '')}{'' if compact else ', from a paste (the rest N/A)'}", ""))
    else:
        sim = " simulated" if src.simulated else ""
        parts.append((f" REPLAY{sim} ", "bold reverse cyan"))
        taken = f", taken {clean(src.taken_at or 'N/A')}" if not compact else ""
        detail = clean(src.detail or "")
        if cut:  # the file name's end says most (its date, its host): keep that
            detail = "…" + detail[cut + 1:] if cut + 1 < len(detail) else ""
        parts.append((f" {detail}{taken}", ""))
    host = clean(src.hostname or "host N/A")
    if host_room is None or len(host) <= host_room:
        parts.append((f"{sep}{host}", "bold"))
    elif host_room >= 8:  # a few letters and "…" say nothing: then no host name
        parts.append((f"{sep}{host[:host_room - 1]}…", "bold"))
    parts.append((f"{sep}{'drv' if compact else 'driver'} {clean(snap.driver_version or 'N/A')}", ""))
    if cuda:
        parts.append((f"{sep}CUDA {clean(snap.cuda_driver_version or 'N/A')}", ""))
    n = len(snap.gpus)
    parts.append((f"{sep}{n} GPU{'s' if n != 1 else ''}", ""))
    return parts


def header_text(snap: Optional[Snapshot], updated: Optional[str] = None, width: Optional[int] = None) -> Text:
    """The header; with ``width``, the longest form that fits in that many columns."""
    if snap is None:
        t = Text()
        t.append(" p2ptop ", style="bold reverse")
        t.append("  reading…", style="dim")
        return t
    forms = [dict(compact=False, host_room=None, cuda=True), dict(compact=True, host_room=None, cuda=True)]
    parts = _parts(snap, updated, **forms[0])
    if width is not None:
        for form in forms:
            parts = _parts(snap, updated, **form)
            if sum(len(p) for p, _ in parts) <= width:
                break
        else:
            for cuda in (True, False):
                base = _parts(snap, updated, compact=True, host_room=0, cuda=cuda)
                room = width - sum(len(p) for p, _ in base) - 1  # the separator before the host
                parts = _parts(snap, updated, compact=True, host_room=room, cuda=cuda)
                if sum(len(p) for p, _ in parts) <= width:
                    break
            else:
                excess = sum(len(p) for p, _ in parts) - width
                parts = _parts(snap, updated, compact=True, host_room=0, cuda=False, cut=excess)
    t = Text(no_wrap=True, overflow="ellipsis")
    for text, style in parts:
        t.append(text, style=style)
    return t


class Header(Static):
    _snap: Optional[Snapshot] = None
    _updated: Optional[str] = None

    def show(self, snap: Optional[Snapshot], updated: Optional[str] = None) -> None:
        self._snap, self._updated = snap, updated
        self.refresh()

    def render(self) -> Text:
        return header_text(self._snap, self._updated, self.size.width or None)
