"""The path and P2P matrices as text, in the layout of ``nvidia-smi topo -m`` and ``topo -p2p``.

Used by ``p2ptop topo``, the ticket report and the tests that compare p2ptop with nvidia-smi.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time (start-up); the annotations are strings
if TYPE_CHECKING:
    from typing import Any, Optional

from .fabric import Fabric, PathClasses
from .model import P2P_CAPS, P2P_STATUS_SHORT, Snapshot

PATH_LEGEND = """Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks"""

P2P_LEGEND = """Legend:

  X    = Self
  OK   = Status Ok
  CNS  = Chipset not supported
  GNS  = GPU not supported
  TNS  = Topology not supported
  NS   = Not supported
  U    = Unknown"""
#: Added to the legend only when such a cell is shown (nvidia-smi has no code for them).
P2P_LEGEND_EXTRA = {
    "DR": "  DR   = Disabled by regkey (p2ptop's code for NVML_P2P_STATUS_DISABLED_BY_REGKEY)",
    "N/A": "  N/A  = could not be read (p2ptop; the snapshot says why)",
}

CAP_TITLES = {"read": "r (read)", "write": "w (write)", "nvlink": "n (nvlink)", "atomics": "a (atomics)", "pci": "p (pcie)"}


def path_cell(fabric: Fabric, a: int, b: int) -> str:
    if a == b:
        return " X "
    return fabric.path_class(a, b) or "N/A"


class _Paths:
    """Path classes from the snapshot (PathClasses); the graph (networkx) is built only where they cannot say."""

    def __init__(self, snapshot: Snapshot, fabric: Optional[Fabric]):
        self.snapshot, self.fabric, self.quick = snapshot, fabric, PathClasses(snapshot)

    def path_class(self, a: int, b: int) -> Optional[str]:
        if self.fabric is not None:
            return self.fabric.path_class(a, b)
        cls = self.quick.of(a, b)
        if cls is None:
            self.fabric = Fabric(self.snapshot)
            return self.fabric.path_class(a, b)
        return cls


def path_matrix(snapshot: Snapshot, fabric: Optional[Fabric] = None, legend: bool = True) -> str:
    """``nvidia-smi topo -m`` for the GPUs of a snapshot (tab-separated, as nvidia-smi prints)."""
    fabric = _Paths(snapshot, fabric)  # type: ignore[assignment]
    idx = snapshot.gpu_indices
    lines = ["\t" + "\t".join(f"GPU{i}" for i in idx) + "\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID"]
    for a in idx:
        gpu = snapshot.gpu(a)
        assert gpu is not None
        cells = [path_cell(fabric, a, b) for b in idx]
        cpu = gpu.cpu_affinity or "N/A"
        numa = str(gpu.numa_node) if gpu.numa_node is not None else "N/A"
        gnuma = str(gpu.gpu_numa_id) if gpu.gpu_numa_id is not None else "N/A"
        lines.append(f"GPU{a}\t" + "\t".join(cells) + f"\t{cpu}\t{numa}\t\t{gnuma}")
    text = "\n".join(lines)
    if legend:
        text += "\n\n" + PATH_LEGEND
    return text + "\n"


def p2p_cell(snapshot: Snapshot, a: int, b: int, cap: str) -> str:
    if a == b:
        return "X"
    pair = snapshot.pair(a, b)
    status = pair.status(cap) if pair else None
    return P2P_STATUS_SHORT.get(status, "U") if status else "N/A"


def p2p_legend(cells: set[str]) -> str:
    extra = [line for code, line in P2P_LEGEND_EXTRA.items() if code in cells]
    return "\n".join([P2P_LEGEND, *extra])


def p2p_matrix(snapshot: Snapshot, cap: str, legend: bool = True) -> str:
    """``nvidia-smi topo -p2p <r|w|n|a|p>`` for one capability (with its trailing tabs)."""
    idx = snapshot.gpu_indices
    lines = [" \t" + "".join(f"GPU{i}\t" for i in idx)]
    cells: set[str] = set()
    for a in idx:
        row = [p2p_cell(snapshot, a, b, cap) for b in idx]
        cells.update(row)
        lines.append(f" GPU{a}\t" + "".join(f"{c}\t" for c in row))
    text = "\n".join(lines)
    if legend:
        text += "\n\n" + p2p_legend(cells)
    return text + "\n"


def topo_report(snapshot: Snapshot, fabric: Optional[Fabric] = None) -> str:
    """The whole ``p2ptop topo`` text: a source line, the path matrix, then each P2P matrix. Without a
    ``fabric``, the graph is built only for pairs whose path class the snapshot alone cannot give."""
    src = snapshot.source
    out = [
        f"# p2ptop topo: {src.label} host {src.hostname or 'N/A'}, driver {snapshot.driver_version or 'N/A'}, "
        f"CUDA {snapshot.cuda_driver_version or 'N/A'}, {len(snapshot.gpus)} GPUs",
        "",
        path_matrix(snapshot, fabric),
    ]
    cells: set[str] = set()
    for cap in P2P_CAPS:
        out.append(f"## {CAP_TITLES[cap]}")
        out.append(p2p_matrix(snapshot, cap, legend=False))
        cells.update(p2p_cell(snapshot, a, b, cap) for a in snapshot.gpu_indices for b in snapshot.gpu_indices)
    out.append(p2p_legend(cells))
    return "\n".join(out) + "\n"


def topo_json(snapshot: Snapshot, fabric: Optional[Fabric] = None) -> dict[str, Any]:
    """The same content as data: per ordered pair its path class, P2P statuses and expected bandwidth."""
    fabric = fabric or Fabric(snapshot)
    pairs = []
    for a in snapshot.gpu_indices:
        for b in snapshot.gpu_indices:
            if a == b:
                continue
            pair = snapshot.pair(a, b)
            exp = fabric.expected(a, b)
            pairs.append(
                {
                    "a": a,
                    "b": b,
                    "path": fabric.path_class(a, b),
                    "nvml_ancestor": pair.ancestor if pair else None,
                    "p2p": {cap: (pair.status(cap) if pair else None) for cap in P2P_CAPS},
                    "na": dict(pair.na) if pair else {"pair": "not in snapshot"},
                    "expected_gbps": exp.gbps,
                    "expected_basis": exp.basis,
                }
            )
    return {
        "source": {"kind": snapshot.source.kind, "label": snapshot.source.label, "hostname": snapshot.source.hostname,
                   "taken_at": snapshot.source.taken_at, "simulated": snapshot.source.simulated},
        "driver_version": snapshot.driver_version,
        "cuda_driver_version": snapshot.cuda_driver_version,
        "gpus": [
            {"index": g.index, "name": g.name, "pci_bus_id": g.pci_bus_id, "cpu_affinity": g.cpu_affinity,
             "numa_node": g.numa_node, "gpu_numa_id": g.gpu_numa_id}
            for g in snapshot.gpus
        ],
        "pairs": pairs,
    }
