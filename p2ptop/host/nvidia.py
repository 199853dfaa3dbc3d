"""The NVIDIA driver: version, P2P-related parameters, nvidia_peermem, Fabric Manager, Xid messages, CuPy.

CuPy's CUDA runtime is read from package metadata only: cupy is never imported here.
"""

from __future__ import annotations

import re
from typing import Optional

from .facts import NEEDS_ROOT, Host

TITLE = "NVIDIA driver"
#: The facts this module adds, in the order doctor shows them.
FACTS = ("host.driver_version", "host.driver_major", "host.nvidia_params", "host.registry_dwords",
         "host.dma_remap_peer_mmio", "host.nvidia_peermem", "host.nvswitch_pci_count", "host.fabric_manager",
         "host.fabric_manager_version", "host.xid", "host.xid_codes", "host.xid_latest", "host.cupy", "host.cupy_cuda_runtime")

#: Driver parameters (/proc/driver/nvidia/params) that change peer-to-peer behaviour.
P2P_PARAMS = ("RegistryDwords", "RegistryDwordsPerDevice", "DmaRemapPeerMmio", "GrdmaPciTopoCheckOverride",
              "EnableResizableBar", "NvLinkDisable")
NVSWITCH_CLASS = "0x0680"  # NVSwitch PCI functions: class "other bridge", NVIDIA vendor
XID_KEEP = 20  # the latest this many Xid messages are kept
_XID = re.compile(r"NVRM: Xid \(PCI:([0-9a-fA-F:.]+)\): (\d+),?\s*(.*)")


def parse_params(text: str) -> dict[str, str]:
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            out[key.strip()] = value.strip().strip('"')
    return out


def parse_xids(log: str) -> list[dict]:
    """Kernel log text -> [{"pci": ..., "xid": 79, "text": ...}], oldest first."""
    out = []
    for line in log.splitlines():
        m = _XID.search(line)
        if m:
            out.append({"pci": m.group(1).lower(), "xid": int(m.group(2)), "text": m.group(3).strip()[:200]})
    return out


def cuda_of_cupy(name: str) -> Optional[str]:
    """'cupy-cuda12x' -> '12.x'; 'cupy-cuda115' -> '11.5'; None for a source build ('cupy')."""
    m = re.fullmatch(r"cupy-cuda(\d+)(x?)", name)
    if not m:
        return None
    digits, x = m.groups()
    return f"{digits}.x" if x else f"{digits[:-1]}.{digits[-1]}"


def _driver(h: Host) -> None:
    text, why = h.read("proc/driver/nvidia/version")
    version, how = None, "read /proc/driver/nvidia/version"
    if text is not None:
        m = re.search(r"Kernel Module(?: for \S+)?\s+([\d.]+)", text)
        version, why = (m.group(1), None) if m else (None, "no version in /proc/driver/nvidia/version")
    if version is None:
        mod, _ = h.read("sys/module/nvidia/version")
        if mod and mod.strip():
            version, how = mod.strip(), "read /sys/module/nvidia/version"
    h.add("host.driver_version", version, how, why)
    h.add("host.driver_major", int(version.split(".")[0]) if version else None, how, why)


def _params(h: Host) -> None:
    text, why = h.read("proc/driver/nvidia/params")
    how = "read /proc/driver/nvidia/params"
    params = parse_params(text) if text is not None else None
    h.add("host.nvidia_params", {k: params[k] for k in P2P_PARAMS if k in params} if params is not None else None, how, why)
    if params is not None:
        h.add("host.registry_dwords", params.get("RegistryDwords", ""), how)
        dma = params.get("DmaRemapPeerMmio")
        h.add("host.dma_remap_peer_mmio", int(dma) if dma and dma.isdigit() else None, how, "not in the driver parameters")


def _modules_and_switches(h: Host) -> None:
    modules, why = h.read("proc/modules")
    loaded = None
    if modules is not None:
        loaded = any(line.split(" ", 1)[0] == "nvidia_peermem" for line in modules.splitlines())
    elif h.exists("sys/module"):
        loaded, why = h.exists("sys/module/nvidia_peermem"), None
    h.add("host.nvidia_peermem", loaded, "read /proc/modules", why)
    count = 0
    for bdf in h.listdir("sys/bus/pci/devices") or []:
        vendor, _ = h.read(f"sys/bus/pci/devices/{bdf}/vendor")
        cls, _ = h.read(f"sys/bus/pci/devices/{bdf}/class")
        if (vendor or "").strip().lower() == "0x10de" and (cls or "").strip().lower().startswith(NVSWITCH_CLASS):
            count += 1
    h.add("host.nvswitch_pci_count", count, "NVIDIA functions of class 0x0680 in /sys/bus/pci/devices")


def _fabric_manager(h: Host) -> None:
    res = h.command(["systemctl", "is-active", "nvidia-fabricmanager"])
    how = "systemctl is-active nvidia-fabricmanager"
    installed = h.command(["nv-fabricmanager", "--version"])
    if res.na:
        state, why = None, res.na
    else:
        word = res.out.strip().splitlines()[0] if res.out.strip() else ""
        state = {"active": "running", "activating": "starting", "failed": "failed"}.get(word, "not running" if word else None)
        if state == "not running" and installed.na:
            state, how = "not installed", how + "; nv-fabricmanager not installed"
        why = None if state else (res.err.strip().splitlines() or [f"no answer (exit {res.rc})"])[0][:120]
    h.add("host.fabric_manager", state, how, why)
    m = re.search(r"version\s*(?:is\s*:?)?\s*:?\s*([\d.]+)", installed.out, re.I)
    h.add("host.fabric_manager_version", m.group(1) if m else None, "nv-fabricmanager --version",
          installed.na or "no version in its output")


def _xids(h: Host) -> None:
    res = h.command(["dmesg"])
    how = "dmesg (kernel log), NVRM: Xid lines"
    if res.na:
        h.add("host.xid", None, how, res.na)
        return
    if res.rc != 0:
        denied = "not permitted" in res.err.lower() or "permission" in res.err.lower()
        h.add("host.xid", None, how, NEEDS_ROOT if denied and not h.is_root else (res.err.strip()[:120] or f"exit {res.rc}"))
        return
    xids = parse_xids(res.out)[-XID_KEEP:]
    h.add("host.xid", xids, how)
    if xids:
        h.add("host.xid_codes", ",".join(str(c) for c in sorted({x["xid"] for x in xids})), how)
        h.add("host.xid_latest", xids[-1]["xid"], how)


def _cupy(h: Host) -> None:
    how = "Python package metadata (cupy is not imported)"
    try:
        pkgs = h.packages()
    except Exception as e:  # broken metadata must not stop doctor
        h.add("host.cupy", None, how, f"package metadata unreadable ({e})")
        return
    cupys = sorted(n for n in pkgs if n == "cupy" or n.startswith("cupy-cuda"))
    if not cupys:
        h.add("host.cupy", None, how, "CuPy not installed")
        return
    name = cupys[0]
    h.add("host.cupy", f"{name} {pkgs[name]}", how)
    runtime = next((f"{pkgs[n]}" for n in sorted(pkgs) if re.fullmatch(r"nvidia-cuda-runtime-cu\d+", n)), None)
    h.add("host.cupy_cuda_runtime", runtime or cuda_of_cupy(name),
          "nvidia-cuda-runtime package version" if runtime else f"CUDA major in the package name {name}",
          "CuPy built from source: its CUDA is not in the metadata")


def collect(h: Host) -> None:
    _driver(h)
    _params(h)
    _modules_and_switches(h)
    _fabric_manager(h)
    _xids(h)
    _cupy(h)
