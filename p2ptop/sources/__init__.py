"""Where snapshots come from: live NVML, a bundled demo, or a saved file (replay)."""

from __future__ import annotations

import os
from typing import Optional

from ..model import Snapshot, SnapshotError, load_snapshot


class SourceUnavailable(RuntimeError):
    """The requested source cannot give a snapshot; the message says why and what to do."""


def read_live(sysfs_root: str = "/") -> Snapshot:
    """One live snapshot from NVML; :class:`SourceUnavailable` when there is no usable driver."""
    from .nvml import NvmlUnavailable, read_snapshot

    try:
        return read_snapshot(sysfs_root=sysfs_root)
    except NvmlUnavailable as e:
        raise SourceUnavailable(
            f"{e}. No NVIDIA driver here? Try a bundled demo (p2ptop demo lists them: --demo NAME) "
            f"or a saved snapshot (--replay FILE)."
        ) from None


def read_replay(path: str) -> Snapshot:
    snap = load_snapshot(path)
    if snap.source.kind != "replay":
        snap.source.origin_kind = snap.source.kind
    snap.source.kind = "replay"
    snap.source.detail = os.path.basename(path)
    if snap.source.origin_kind == "demo":
        snap.source.simulated = True
    return snap


def open_snapshot(demo: Optional[str] = None, replay: Optional[str] = None) -> Snapshot:
    """The snapshot a command asked for. Raises SnapshotError or SourceUnavailable with a clear message."""
    if demo and replay:
        raise SnapshotError("choose one of --demo and --replay, not both")
    if demo:
        from ..demos import load_demo

        return load_demo(demo)
    if replay:
        return read_replay(replay)
    return read_live()
