"""Host facts: what decides peer-to-peer beyond NVML (IOMMU, ACS, hypervisor, container, driver, NCCL).

``collect()`` is the one entry point. It returns plain JSON-safe data for ``snapshot.host``::

    {"facts": {name: {"value": ..., "how": "read /proc/cmdline", "na": None or "needs root"}},
     "as_root": False}

One module per group of facts (kernel, iommu, virt, nvidia, env); each has ``collect(host)``.
Read-only by construction; every reader takes a root path and commands go through an injectable
runner, so tests use fake trees and canned outputs.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Mapping, Optional

from ..sources.sysfs import sysfs_bdf
from . import env as _env
from . import iommu, kernel, nvidia, virt
from .facts import NEEDS_ROOT, Host, Runner, prefetched, run_command

COLLECTORS = (kernel, iommu, virt, nvidia, _env)

#: (title, fact names) per group, in the order doctor shows them.
SECTIONS = tuple((m.TITLE, m.FACTS) for m in COLLECTORS)


def collect(root: str = "/", env: Optional[Mapping[str, str]] = None, run: Runner = run_command,
            gpu_bus_ids: Optional[list[str]] = None, is_root: Optional[bool] = None,
            packages: Optional[Callable[[], dict[str, str]]] = None) -> dict[str, Any]:
    """Every host fact. ``gpu_bus_ids`` (NVML or sysfs form) say where the GPUs are; without them
    NVIDIA GPUs are looked up in sysfs."""
    h = Host(root=root, env=dict(os.environ if env is None else env), run=prefetched(run),
             is_root=(os.geteuid() == 0) if is_root is None else is_root)
    if packages is not None:
        h.packages = packages
    if gpu_bus_ids:
        h.gpu_bdfs = [_bdf(b) for b in gpu_bus_ids if _bdf(b)]
        how = "NVML PCI bus ids"
    else:
        h.gpu_bdfs = iommu.find_gpus(h)
        how = "NVIDIA display/3D functions in /sys/bus/pci/devices"
    h.add("host.gpu_bdfs", h.gpu_bdfs, how)
    for module in COLLECTORS:
        module.collect(h)
    return {"facts": h.facts, "as_root": h.is_root}


def _bdf(bus_id: str) -> Optional[str]:
    try:
        return sysfs_bdf(bus_id)
    except (ValueError, AttributeError):
        return None


def needs_root(host: Mapping[str, Any]) -> list[str]:
    """Names of the facts that root could read and this run could not."""
    return [name for name, f in (host.get("facts") or {}).items() if NEEDS_ROOT in str(f.get("na") or "")]


__all__ = ["collect", "needs_root", "NEEDS_ROOT", "SECTIONS"]
