"""The bundled demo topologies: snapshots stored as JSON beside this file (see README.md here).

Everything loaded from here is simulated and labelled so (``source.kind == "demo"``).
"""

from __future__ import annotations

import os
from importlib import resources

from ..model import Snapshot, SnapshotError

#: name -> one line on what it shows, in the order ``p2ptop demo`` lists them.
DEMOS = {
    "h200x2-vm": "2 H200 behind NVSwitch in a pass-through VM (from a real capture)",
    "dgx-h100": "8 H100 SXM through 4 NVSwitches, 2 CPU sockets, 4 PCIe switches",
    "pcie-4gpu-iommu": "4 PCIe L40S on 2 sockets, IOMMU and ACS on; P2P refused across sockets",
    "rtx4090-2gpu": "2 GeForce RTX 4090: P2P not supported by the GPU",
    "nvlink-degraded": "8 A100 SXM with NVLinks down, CRC errors and a GPU at PCIe x8",
    "nvl72": "72 GB200 and 18 NVSwitches (an NVL72 rack as one host, for scale)",
}
DEFAULT_DEMO = "dgx-h100"


class UnknownDemo(SnapshotError):
    pass


def demo_path(name: str) -> str:
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.json")


def load_demo(name: str) -> Snapshot:
    if name not in DEMOS:
        raise UnknownDemo(f"no demo named {name!r}; choose one of: {', '.join(DEMOS)}")
    text = resources.files(__package__).joinpath(f"{name}.json").read_text(encoding="utf-8")
    snap = Snapshot.from_json(text, where=f"demo {name}")
    snap.source.kind = "demo"
    snap.source.simulated = True
    snap.source.detail = name
    return snap
