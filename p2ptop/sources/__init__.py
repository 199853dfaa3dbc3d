"""Where snapshots come from: live NVML, a bundled demo, or a saved file (replay)."""

from __future__ import annotations

import os
TYPE_CHECKING = False  # typing is not imported at run time (start-up); the annotations are strings
if TYPE_CHECKING:
    from typing import Optional

    from ..model import Snapshot
# the model is imported where used: `p2ptop topo` starts NVML's warm-up (sources.nvml_warm) before it imports
# the model, so this package's own import must not (~9 ms)


class SourceUnavailable(RuntimeError):
    """The requested source cannot give a snapshot; the message says why and what to do."""


def read_live(sysfs_root: str = "/", host_facts: bool = True, what: str = "all") -> Snapshot:
    """One live snapshot from NVML (through the live path, p2ptop.live), with the host facts unless
    ``host_facts=False``; :class:`SourceUnavailable` when there is no usable driver."""
    from ..live import read_once

    return read_once(sysfs_root=sysfs_root, host_facts=host_facts, what=what)


#: Host facts (p2ptop/host) run a few commands; a refresh loop reuses them for this long.
HOST_FACTS_TTL_S = 60.0
_host_cache: dict[tuple, tuple[float, dict]] = {}


def attach_host(snap: Snapshot, root: str = "/") -> None:
    """Put the host facts in ``snap.host`` (collected at most every HOST_FACTS_TTL_S seconds for the
    same GPUs) and each bridge's ACS control on the GPUs' PCIe paths."""
    import copy
    import time

    from ..host import collect

    bus_ids = [g.pci_bus_id for g in snap.gpus if g.pci_bus_id]
    key = (root, tuple(bus_ids))
    now = time.monotonic()
    cached = _host_cache.get(key)
    if cached is None or now - cached[0] > HOST_FACTS_TTL_S:
        cached = _host_cache[key] = (now, collect(root=root, gpu_bus_ids=bus_ids))
    snap.host = copy.deepcopy(cached[1])
    acs = {r["bridge"]: r for r in snap.host["facts"].get("host.acs", {}).get("value") or []}
    for gpu in snap.gpus:
        for dev in gpu.pcie_path:
            r = acs.get(dev.bdf)
            if r is None:
                continue
            dev.acs_ctrl = r["acs_ctrl"]
            if r["acs_ctrl"] is None:
                dev.na["acs_ctrl"] = r["na"] or "unknown"


def read_replay(path: str) -> Snapshot:
    from ..model import load_snapshot

    snap = load_snapshot(path)
    if snap.source.kind != "replay":
        snap.source.origin_kind = snap.source.kind
    snap.source.kind = "replay"
    snap.source.detail = os.path.basename(path)
    if snap.source.origin_kind == "demo":
        snap.source.simulated = True
    return snap


def open_snapshot(demo: Optional[str] = None, replay: Optional[str] = None, host_facts: bool = True,
                  what: str = "all") -> Snapshot:
    """The snapshot a command asked for. Raises SnapshotError or SourceUnavailable with a clear message.
    ``host_facts=False``: a live read leaves the host facts out (for commands that do not show them)."""
    if demo and replay:
        from ..model import SnapshotError

        raise SnapshotError("choose one of --demo and --replay, not both")
    if demo:
        from ..demos import load_demo

        return load_demo(demo)
    if replay:
        return read_replay(replay)
    return read_live(host_facts=host_facts, what=what)
