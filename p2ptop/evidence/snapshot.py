"""A snapshot from a paste: what ``p2ptop import`` writes.

``snapshot_from_text(text, name) -> Snapshot`` turns a pasted ``nvidia-smi topo -m`` (with the
``topo -p2p`` matrices, ``nvidia-smi -q`` text or XML, the ``nvidia-smi`` table, ``nvidia-smi nvlink
-s`` where present) into a Snapshot whose Source kind is "import". Everything the paste does not say
is None with the reason "not in the paste" in its owner's ``na``. Nothing is guessed:

* path classes: a PCIe class becomes the pair's NVML ancestor (PIX -> SINGLE, PXB -> MULTIPLE, PHB
  -> HOSTBRIDGE, NODE -> NODE, SYS -> SYSTEM). NV# cells become NVLinks: when every pair shows the
  same NV#k (NVSwitch systems, and two GPUs), each GPU gets k active links to a hidden NVSwitch plane
  (what NVML shows in a VM), so every pair reads NV#k; otherwise each NV# pair gets k direct links,
  which needs the GPUs' bus ids from the paste (an NV# pair that cannot be placed is said in the
  notes). Link versions and counters are "not in the paste".
* P2P status per capability from the ``topo -p2p`` matrices; missing capabilities are N/A.
* host facts (``snapshot.host["facts"]``) from the paste's host-level facts, each with the line it
  came from as ``how``.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any, Optional

from ..findings import FACT_KEYS
from ..model import (
    GPU, HIDDEN_REMOTE_BUS, Fabric, NvLink, Pair, Snapshot, Source, P2P_CAPS, paste_peer,
)
from .read import Evidence, read_text

NA = "not in the paste"
_ANCESTOR = {"PIX": "SINGLE", "PXB": "MULTIPLE", "PHB": "HOSTBRIDGE", "NODE": "NODE", "SYS": "SYSTEM"}
_NV = re.compile(r"^NV(\d+)$")


class ImportError_(ValueError):
    """The paste holds nothing a snapshot can be built from; the message says what is needed."""


def _nvml_bus(bus: Optional[str]) -> Optional[str]:
    """"0000:3b:00.0" -> NVML's "00000000:3B:00.0"."""
    if not bus:
        return None
    dom, rest = bus.split(":", 1)
    return f"{dom.rjust(8, '0')}:{rest}".upper()


def _fill_na(obj: Any, skip: tuple[str, ...] = ()) -> None:
    for f in dataclasses.fields(obj):
        if f.name in skip or f.name == "na":
            continue
        if getattr(obj, f.name) is None and f.name not in obj.na:
            obj.na[f.name] = NA


def snapshot_from_evidence(ev: Evidence, name: str) -> Snapshot:
    topo = ev.structured.get("topo")
    smi_q = ev.structured.get("smi_q") or {}
    table = ev.structured.get("smi_table") or []
    facts = ev.facts_by_subject()
    host = facts.get("host", {})
    indices: list[int] = []
    if topo is not None:
        indices += topo.gpus
    indices += [i for i in range(len(smi_q.get("gpus", []))) if i not in indices]
    indices += [t["index"] for t in table if t["index"] not in indices]
    if not indices:
        pci_only = any("topo -mp" in n for n in ev.notes)
        raise ImportError_(
            "no GPU list found: import needs `nvidia-smi topo -m`, `nvidia-smi -q` (text or -x XML) or the "
            "`nvidia-smi` table in the paste" + ("; its `nvidia-smi topo -mp` matrix is PCIe only (NVLink left out), "
                                                "so it gives no pair's path: paste `nvidia-smi topo -m`" if pci_only else ""))
    indices = sorted(set(indices))
    notes: list[str] = []
    gpus: list[GPU] = []
    q_gpus = smi_q.get("gpus", [])
    for i in indices:
        q = q_gpus[i] if i < len(q_gpus) else {}
        t = next((t for t in table if t["index"] == i), {})
        g = GPU(index=i)
        g.name = q.get("name") or t.get("name") or facts.get(f"gpu:{i}", {}).get("gpu.name")
        g.uuid = q.get("uuid")
        g.pci_bus_id = _nvml_bus(q.get("bus_id") or t.get("bus_id"))
        g.architecture = q.get("architecture") or facts.get(f"gpu:{i}", {}).get("gpu.architecture")
        g.memory_total_mib = q.get("memory_total_mib")
        for key in ("pcie_gen_cur", "pcie_gen_max", "pcie_width_cur", "pcie_width_max"):
            setattr(g, key, q.get(key, facts.get(f"gpu:{i}", {}).get(f"gpu.{key}")))
        if topo is not None:
            g.cpu_affinity = topo.cpu_affinity.get(i)
            if topo.has_numa_column:
                g.numa_node = topo.numa.get(i)
                if g.numa_node is None and i in topo.cpu_affinity:
                    g.na["numa_node"] = "N/A in the paste"
            else:
                g.na["numa_node"] = "not in the paste (no NUMA Affinity column: an older driver)"
            if topo.has_gpu_numa_column:
                g.gpu_numa_id = topo.gpu_numa.get(i)
                if g.gpu_numa_id is None:
                    g.na["gpu_numa_id"] = "N/A in the paste"
            else:
                g.na["gpu_numa_id"] = "not in the paste (no GPU NUMA ID column: an older driver)"
        g.virtualization_mode = q.get("virtualization")
        mig = q.get("mig") if "mig" in q else t.get("mig")
        g.mig_mode = None if mig is None else ("Enabled" if mig else "Disabled")
        g.fabric = Fabric(state=q.get("fabric_state"), status=q.get("fabric_status"))
        _fill_na(g.fabric)
        g.na.setdefault("pcie_path", NA)
        gpus.append(g)
    by_index = {g.index: g for g in gpus}
    pairs: list[Pair] = []
    if topo is not None:
        nv = {k: int(_NV.match(v).group(1)) for k, v in topo.paths.items() if _NV.match(v)}
        all_pairs = [(a, b) for a in indices for b in indices if a != b]
        uniform = bool(nv) and len(nv) == len(all_pairs) and len(set(nv.values())) == 1
        if uniform:
            k = next(iter(nv.values()))
            for g in gpus:
                g.nvlinks = [NvLink(link=n, state="active", remote_pci_bus_id=HIDDEN_REMOTE_BUS, remote_type="NVSWITCH",
                                    na={"version": NA, "counters": NA, "p2p_supported": NA}) for n in range(k)]
            notes.append(f"NV{k} between every pair: shown as {k} links per GPU into one NVSwitch plane "
                         "(the paste cannot say whether the links go to switches or straight to the peer)")
        if nv and not uniform:
            by_number = []
            for (a, b), k in sorted(nv.items()):
                ga, gb = by_index.get(a), by_index.get(b)
                if ga is None or gb is None:
                    continue  # a GPU of the matrix the snapshot does not hold: no end to place a link on
                na = {"version": NA, "counters": NA, "p2p_supported": NA}
                if not gb.pci_bus_id:  # no bus id in the paste: the peer by the matrix's GPU number (model.paste_peer)
                    by_number.append(f"GPU{a}-GPU{b} NV{k}")
                    na["remote_pci_bus_id"] = f"not in the paste: the peer is GPU{b} of the matrix"
                start = len(ga.nvlinks)
                ga.nvlinks += [NvLink(link=start + n, state="active", remote_pci_bus_id=gb.pci_bus_id or paste_peer(b),
                                      remote_type="GPU", na=dict(na)) for n in range(k)]
            if by_number:
                notes.append("NVLinks placed by the matrix's GPU numbers (the paste gives no bus ids; links numbered in "
                             f"order, their own numbers not in the paste): {', '.join(by_number[:8])}"
                             + (" ..." if len(by_number) > 8 else ""))
        for g in gpus:
            if not g.nvlinks:
                g.na["nvlinks"] = "none in the paste" if topo.paths else NA
        for a, b in [(a, b) for a in indices for b in indices if a != b]:
            p = Pair(a=a, b=b)
            cls = topo.paths.get((a, b))
            if cls in _ANCESTOR:
                p.ancestor = _ANCESTOR[cls]
            else:
                p.na["ancestor"] = f"not in the paste (it shows {cls})" if cls else NA
            for cap in P2P_CAPS:
                status = topo.p2p.get(cap, {}).get((a, b))
                if status:
                    p.p2p[cap] = status
                else:
                    p.na[f"p2p.{cap}"] = NA
            pairs.append(p)
        if topo.p2p_cap_guessed:
            notes.append(f"a topo -p2p matrix without its capability was read as: {', '.join(topo.p2p_cap_guessed)}")
    else:
        notes.append("no nvidia-smi topo -m in the paste: pair paths and P2P status are not known")
        for g in gpus:
            g.na.setdefault("nvlinks", NA)
    for g in gpus:
        _fill_na(g, skip=("fabric",))
    host_facts: dict[str, Any] = {}
    for f in ev.findings:
        if f.subject != "host":
            continue
        for key, value in f.facts.items():
            if (key.startswith("host.") and key in FACT_KEYS or key.startswith("env.")) and key not in host_facts:
                host_facts[key] = {"value": value, "how": f.evidence[0] if f.evidence else "the paste", "na": None}
    snap = Snapshot(
        source=Source(kind="import", hostname=None, taken_at=None, detail=name, simulated=False),
        driver_version=host.get("host.driver_version"),
        cuda_driver_version=host.get("host.cuda_driver_version"),
        gpus=gpus,
        pairs=pairs,
        host={"facts": host_facts, "imported": True},
        notes=[f"Imported from a paste ({name}): read from {', '.join(ev.kinds) or 'nothing known'}; "
               "everything the paste does not say is N/A (not in the paste)."] + notes + list(ev.notes),
    )
    for key in ("driver_version", "cuda_driver_version", "nvml_version"):
        if getattr(snap, key) is None:
            snap.na[key] = NA
    snap.na["sockets"] = NA
    return snap


def snapshot_from_text(text: str, name: str = "paste") -> Snapshot:
    """The snapshot of a paste (see the module docstring). Raises ImportError_ when the paste has no GPU list."""
    return snapshot_from_evidence(read_text(text), name)
