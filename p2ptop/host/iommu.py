"""The IOMMU (sysfs) and ACS on every bridge between each GPU and its root port (PCI config space).

Nothing here writes anywhere: config space is read from sysfs with ``open(..., "rb")``. Without root,
Linux gives only the first 64 bytes of config space, and ACS is an extended capability (offset
0x100 and up), so ACS then reads as N/A "needs root"; ``lspci -vvv`` is asked where it can do better.
"""

from __future__ import annotations

import re
import struct
from typing import Any, Optional

from ..pcie import ACS_REDIRECT_MASK, acs_ctrl_of_lspci, acs_text  # ACS bits, shared with the text readers
from ..sources.sysfs import read_pcie_path
from .facts import NEEDS_ROOT, Host

TITLE = "IOMMU and ACS"
#: The facts this module adds, in the order doctor shows them.
FACTS = ("host.gpu_bdfs", "host.iommu_units", "host.iommu_gpu_domains", "host.iommu_active", "host.iommu_passthrough",
         "host.acs", "host.acs_redirect", "host.acs_redirect_bridges", "host.acs_enabled")

NVIDIA_VENDOR = "0x10de"
GPU_CLASSES = ("0x0300", "0x0302")  # VGA and 3D controllers
ACS_EXT_CAP_ID = 0x000D


def acs_from_config(config: bytes, is_root: bool) -> tuple[Optional[int], Optional[str]]:
    """(ACS control register, None), (0, None) without an ACS capability, or (None, why)."""
    if len(config) < 256:
        return None, NEEDS_ROOT if not is_root else f"only {len(config)} bytes of config space readable"
    if len(config) <= 256:
        return None, "no extended config space (hidden by the platform or hypervisor)"
    offset, seen = 0x100, set()
    while offset and offset not in seen and offset + 8 <= len(config):
        seen.add(offset)
        (header,) = struct.unpack_from("<I", config, offset)
        if header in (0, 0xFFFFFFFF):
            break
        if header & 0xFFFF == ACS_EXT_CAP_ID:
            (ctrl,) = struct.unpack_from("<H", config, offset + 6)
            return ctrl, None
        offset = (header >> 20) & 0xFFC
    return 0, None


def parse_lspci(text: str) -> dict[str, tuple[Optional[int], Optional[str]]]:
    """`lspci -vvv -D` -> {bdf: (ACS control or 0 without ACS, None) or (None, why)}."""
    out: dict[str, tuple[Optional[int], Optional[str]]] = {}
    for block in re.split(r"\n(?=\S)", text):
        m = re.match(r"([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s", block)
        if not m:
            continue
        bdf = m.group(1).lower()
        ctl = re.search(r"ACSCtl:\s*(.*)", block)
        if ctl:
            out[bdf] = (acs_ctrl_of_lspci(ctl.group(1)) or 0, None)
        elif "<access denied>" in block:
            out[bdf] = (None, NEEDS_ROOT)
        else:
            out[bdf] = (0, None)
    return out


def acs_record(gpu: str, bridge: str, role: str, ctrl: Optional[int], how: str, na: Optional[str] = None) -> dict[str, Any]:
    return {
        "gpu": gpu, "bridge": bridge, "role": role, "acs_ctrl": ctrl,
        "acs": acs_text(ctrl) if ctrl else ("no ACS capability" if ctrl == 0 else None),
        "redirect": bool(ctrl & ACS_REDIRECT_MASK) if ctrl is not None else None,
        "how": how, "na": None if ctrl is not None else na,
    }


def add_acs_facts(h: Host, records: list[dict[str, Any]], how: str, gpus_found: bool = True) -> None:
    """host.acs (every bridge), host.acs_redirect, host.acs_redirect_bridges and host.acs_enabled (any ACS control bit
    on at a bridge, SrcValid alone included) from ACS records."""
    h.add("host.acs", records, how)
    redirect = sorted({r["bridge"] for r in records if r["redirect"]})
    unknown = [r for r in records if r["redirect"] is None]
    no_bridge = f"{how}: no PCI bridge between the GPUs and the root complex"
    if not gpus_found:
        for name in ("host.acs_redirect", "host.acs_enabled"):
            h.add(name, None, how, "no NVIDIA GPU in /sys/bus/pci/devices")
        return
    if unknown:
        reasons = sorted({r["na"] or "unknown" for r in unknown})
        why = NEEDS_ROOT if NEEDS_ROOT in reasons else "; ".join(reasons)
        unreadable = f"{why} ({len(unknown)} of {len(records)} bridges unreadable)"
    # any control bit on is ACS enabled, redirecting or not; known only where every bridge was read, or one has a bit on
    if any(r["acs_ctrl"] for r in records):
        h.add("host.acs_enabled", True, how)
    else:
        h.add("host.acs_enabled", None if unknown else False, how if records else no_bridge, unreadable if unknown else None)
    if redirect:
        h.add("host.acs_redirect", True, how)
        h.add("host.acs_redirect_bridges", ", ".join(redirect), how)
    elif unknown:
        h.add("host.acs_redirect", None, how, unreadable)
    else:
        h.add("host.acs_redirect", False, how if records else no_bridge)


def find_gpus(h: Host) -> list[str]:
    """NVIDIA display/3D functions in /sys/bus/pci/devices, sysfs form."""
    out = []
    for bdf in h.listdir("sys/bus/pci/devices") or []:
        vendor, _ = h.read(f"sys/bus/pci/devices/{bdf}/vendor")
        cls, _ = h.read(f"sys/bus/pci/devices/{bdf}/class")
        if (vendor or "").strip().lower() == NVIDIA_VENDOR and (cls or "").strip().lower().startswith(GPU_CLASSES):
            out.append(bdf)
    return out


def _collect_acs(h: Host) -> None:
    how = "ACS control of each bridge from every GPU up to its root port, from PCI config space in sysfs"
    records = []
    for gpu in h.gpu_bdfs:
        _, devices, _, _ = read_pcie_path(gpu, root=h.root)
        for dev in devices:
            rel = f"sys/bus/pci/devices/{dev.bdf}/config"
            config, why = h.read_bytes(rel)
            ctrl, why = acs_from_config(config, h.is_root) if config is not None else (None, why)
            records.append(acs_record(gpu, dev.bdf, dev.role, ctrl, f"read /{rel}", why))
    if any(r["acs_ctrl"] is None for r in records):
        res = h.command(["lspci", "-vvv", "-D"])
        if res.rc == 0:
            parsed = parse_lspci(res.out)
            for i, r in enumerate(records):
                ctrl, why = parsed.get(r["bridge"], (None, "not in lspci output"))
                if r["acs_ctrl"] is None and ctrl is not None:
                    records[i] = acs_record(r["gpu"], r["bridge"], r["role"], ctrl, "lspci -vvv -D (ACSCtl)")
                elif r["acs_ctrl"] is None and r["na"] != NEEDS_ROOT and why:
                    r["na"] = why
            how += "; lspci -vvv -D where sysfs could not tell"
    add_acs_facts(h, records, how, gpus_found=bool(h.gpu_bdfs))


def _collect_iommu(h: Host) -> None:
    units = h.listdir("sys/class/iommu")
    groups = h.listdir("sys/kernel/iommu_groups")
    h.add("host.iommu_units", units or [], "list /sys/class/iommu")
    domains = {}
    for gpu in h.gpu_bdfs:
        text, _ = h.read(f"sys/bus/pci/devices/{gpu}/iommu_group/type")
        if text is not None:
            domains[gpu] = text.strip()
    if domains:
        h.add("host.iommu_gpu_domains", domains, "read /sys/bus/pci/devices/<GPU>/iommu_group/type")
    cmd, _ = h.read("proc/cmdline")
    words = (cmd or "").split()
    pt_arg = "iommu=pt" in words or "iommu.passthrough=1" in words
    if not units and not groups:
        h.add("host.iommu_active", False, "no entries in /sys/class/iommu or /sys/kernel/iommu_groups")
        h.add("host.iommu_passthrough", False, "no IOMMU in sysfs")
        return
    how = f"IOMMU units in /sys/class/iommu ({', '.join(units or []) or 'none'}), {len(groups or [])} iommu groups"
    if domains:
        identity = all(t == "identity" for t in domains.values())
        h.add("host.iommu_active", not identity, how + "; GPU default domain types: " + ", ".join(sorted(set(domains.values()))))
        h.add("host.iommu_passthrough", identity, "GPU iommu_group/type is identity" if identity else "GPU iommu_group/type")
    else:
        h.add("host.iommu_active", not pt_arg, how + "; /proc/cmdline " + ("has" if pt_arg else "has no") + " iommu=pt")
        h.add("host.iommu_passthrough", pt_arg, "iommu=pt or iommu.passthrough=1 in /proc/cmdline")


def collect(h: Host) -> None:
    _collect_iommu(h)
    _collect_acs(h)
