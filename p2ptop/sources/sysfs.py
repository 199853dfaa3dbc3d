"""The PCIe hierarchy above a GPU and the CPU sockets, read from Linux sysfs (no root needed).

Every reader takes ``root`` so tests can point it at a fake tree. Nothing here raises for a
missing or unreadable file: values that cannot be read are None with a reason in ``na``.
"""

from __future__ import annotations

import os
import re
TYPE_CHECKING = False  # typing is not imported at run time (start-up); the annotations are strings
if TYPE_CHECKING:
    from typing import Optional

from ..model import CpuSocket, PcieDevice
from ..pcie import link_gen

_BDF = re.compile(r"^[0-9a-f]{4,8}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")


def sysfs_bdf(nvml_bus_id: str) -> str:
    """NVML's '00000000:3A:00.0' -> sysfs '0000:3a:00.0'."""
    dom, rest = nvml_bus_id.split(":", 1)
    return f"{int(dom, 16) & 0xFFFF:04x}:{rest.lower()}"


def _read(path: str) -> tuple[Optional[str], Optional[str]]:
    try:
        with open(path, encoding="ascii", errors="replace") as f:
            return f.read().strip(), None
    except FileNotFoundError:
        return None, "not in sysfs"
    except PermissionError:
        return None, "needs root"
    except OSError as e:
        return None, f"unreadable ({e.strerror or e})"


def _int(text: Optional[str]) -> Optional[int]:
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def read_link(devdir: str, dev: PcieDevice) -> None:
    """Fill a device's current and maximum link from sysfs."""
    for attr, fname, conv in (
        ("link_gen_cur", "current_link_speed", link_gen),
        ("link_gen_max", "max_link_speed", link_gen),
        ("link_width_cur", "current_link_width", _int),
        ("link_width_max", "max_link_width", _int),
    ):
        text, why = _read(os.path.join(devdir, fname))
        value = conv(text) if text is not None else None
        if value is None:
            dev.na[attr] = why or f"unrecognised value {text!r}"
        setattr(dev, attr, value)


def read_pcie_path(nvml_bus_id: str, root: str = "/") -> tuple[Optional[str], list[PcieDevice], Optional[int], dict[str, str]]:
    """The chain of PCI functions above a GPU.

    Returns (root complex like 'pci0000:00', devices from the GPU's parent up to the root port,
    the GPU's NUMA node from sysfs, reasons for what could not be read).
    """
    na: dict[str, str] = {}
    try:
        bdf = sysfs_bdf(nvml_bus_id)
    except (ValueError, AttributeError):
        return None, [], None, {"pcie_path": f"bus id {nvml_bus_id!r} not understood"}
    link = os.path.join(root, "sys/bus/pci/devices", bdf)
    if not os.path.exists(link):
        return None, [], None, {"pcie_path": "no sysfs entry for the GPU (not Linux, or hidden)"}
    real = os.path.realpath(link)
    parts = real.split(os.sep)
    rc_idx = next((i for i, p in enumerate(parts) if p.startswith("pci") and ":" in p), None)
    if rc_idx is None:
        return None, [], None, {"pcie_path": f"unexpected sysfs path {real}"}
    root_complex = parts[rc_idx]
    chain = [p for p in parts[rc_idx + 1 :] if _BDF.match(p)]
    numa_text, why = _read(os.path.join(real, "numa_node"))
    numa = _int(numa_text)
    if numa is None or numa < 0:
        na["numa_node"] = why or "sysfs reports no NUMA node (-1)"
        numa = None
    devices: list[PcieDevice] = []
    prefix = os.sep.join(parts[: rc_idx + 1])
    # chain[-1] is the GPU itself; walk its ancestors from nearest to the root port. Below the root
    # port, switch ports alternate upstream (odd depth) and downstream (even depth); extended
    # config space (port type) needs root, so the structure is what tells them apart.
    for depth in range(len(chain) - 2, -1, -1):
        devdir = os.path.join(prefix, *chain[: depth + 1])
        dev = PcieDevice(bdf=chain[depth])
        dev.vendor_id, _ = _read(os.path.join(devdir, "vendor"))
        dev.device_id, _ = _read(os.path.join(devdir, "device"))
        if depth == 0:
            dev.role = "root_port"
        elif not _is_bridge(devdir):
            dev.role = "endpoint"
        else:
            dev.role = "switch_upstream" if depth % 2 == 1 else "switch_downstream"
        read_link(devdir, dev)
        devices.append(dev)
    return root_complex, devices, numa, na


def _listdir(path: str) -> list[str]:
    try:
        return os.listdir(path)
    except OSError:
        return []


def _is_bridge(devdir: str) -> bool:
    text, _ = _read(os.path.join(devdir, "class"))
    return bool(text and text.lower().startswith("0x0604"))


def read_sockets(root: str = "/") -> tuple[list[CpuSocket], Optional[str]]:
    """CPU sockets with their NUMA nodes and CPUs, from /sys/devices/system."""
    node_dir = os.path.join(root, "sys/devices/system/node")
    nodes = sorted(
        int(n[4:]) for n in _listdir(node_dir) if n.startswith("node") and n[4:].isdigit()
    )
    if not nodes:
        return [], "no NUMA nodes in sysfs"
    sockets: dict[int, CpuSocket] = {}
    for node in nodes:
        cpulist, _ = _read(os.path.join(node_dir, f"node{node}", "cpulist"))
        first = _first_cpu(cpulist)
        pkg = None
        if first is not None:
            pkg = _int(_read(os.path.join(root, f"sys/devices/system/cpu/cpu{first}/topology/physical_package_id"))[0])
        if pkg is None:
            pkg = node if cpulist else 0  # memory-only nodes and unknown packages: one socket per node
        sock = sockets.setdefault(pkg, CpuSocket(id=pkg))
        sock.numa_nodes.append(node)
        if cpulist:
            sock.cpus = cpulist if not sock.cpus else f"{sock.cpus},{cpulist}"
    return [sockets[k] for k in sorted(sockets)], None


def _first_cpu(cpulist: Optional[str]) -> Optional[int]:
    if not cpulist:
        return None
    m = re.match(r"(\d+)", cpulist)
    return int(m.group(1)) if m else None


#: The GPU's AER counter files (Linux Documentation/PCI/pcieaer-howto.rst) and the total line of each.
AER_FILES = {"correctable": ("aer_dev_correctable", "TOTAL_ERR_COR"),
             "nonfatal": ("aer_dev_nonfatal", "TOTAL_ERR_NONFATAL"),
             "fatal": ("aer_dev_fatal", "TOTAL_ERR_FATAL")}


def read_aer(nvml_bus_id: str, root: str = "/") -> tuple[dict[str, int], dict[str, str]]:
    """The GPU's AER error totals ({"correctable": n, "nonfatal": n, "fatal": n}) and, per missing one, why."""
    values: dict[str, int] = {}
    why: dict[str, str] = {}
    try:
        bdf = sysfs_bdf(nvml_bus_id)
    except ValueError:
        return values, {k: f"bad bus id {nvml_bus_id!r}" for k in AER_FILES}
    for key, (name, total) in AER_FILES.items():
        text, err = _read(os.path.join(root, "sys/bus/pci/devices", bdf, name))
        if text is None:
            why[key] = err or "unreadable"
            continue
        for line in text.splitlines():
            parts = line.split()
            if len(parts) == 2 and parts[0] == total and parts[1].isdigit():
                values[key] = int(parts[1])
                break
        else:
            why[key] = f"no {total} line in {name}"
    return values, why
