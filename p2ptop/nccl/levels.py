"""NCCL_P2P_LEVEL in NCCL's own terms (src/graph/paths.cc ncclGetLevel and ncclTopoCheckP2p; src/graph/topo.cc topoPathTypeStr).

NCCL uses P2P between two GPUs when their path type is at or below the level (``path->type <= p2pLevel``). The variable
takes a path type's name, in NCCL's order LOC < NVL < NVB < C2C < PIX < PXB < P2C < PXN < PHB < SYS (NVB, C2C, P2C and PXN
are NCCL-internal paths, named in newer releases), or an old-style number (``levelsOldToNew``: 0 LOC, 1 PIX, 2 PXB, 3 PHB,
4 and above SYS); NCCL_P2P_DISABLE=1 is LOC. nvidia-smi's path classes map onto NCCL's: NV# -> NVL, PIX, PXB, NODE and PHB
-> PHB (a host bridge in one NUMA node), SYS. Imports nothing of ours.
"""

from __future__ import annotations

import re
from typing import Optional

#: NCCL's path types up to SYS, in order (topoPathTypeStr)
ORDER = ("LOC", "NVL", "NVB", "C2C", "PIX", "PXB", "P2C", "PXN", "PHB", "SYS")
#: old-style numbers (ncclGetLevel's levelsOldToNew); higher numbers are SYS
_OLD = ("LOC", "PIX", "PXB", "PHB", "SYS", "SYS")
#: nvidia-smi's path class -> NCCL's path type
SMI_TO_NCCL = {"PIX": "PIX", "PXB": "PXB", "PHB": "PHB", "NODE": "PHB", "SYS": "SYS"}


def level_name(value: Optional[str]) -> Optional[str]:
    """NCCL's name for a NCCL_P2P_LEVEL value ("nvl" -> "NVL", "2" -> "PXB"), None when NCCL would ignore it."""
    v = str(value or "").strip()
    if v.upper() in ORDER:
        return v.upper()
    m = re.match(r"\d+", v)  # strtol: the leading digits
    return _OLD[min(int(m.group()), len(_OLD) - 1)] if m else None


def path_type(path: Optional[str]) -> Optional[str]:
    """NCCL's path type of an nvidia-smi path class ("NV18" -> "NVL", "NODE" -> "PHB"), None for unknown."""
    p = str(path or "").strip().upper()
    if p.startswith("NV"):
        return "NVL"
    return SMI_TO_NCCL.get(p)


def below_path(value: Optional[str], path: Optional[str]) -> bool:
    """Is a NCCL_P2P_LEVEL value below the pair's path, so NCCL leaves P2P off between them by the setting?"""
    lv, pt = level_name(value), path_type(path)
    return lv is not None and pt is not None and ORDER.index(lv) < ORDER.index(pt)

