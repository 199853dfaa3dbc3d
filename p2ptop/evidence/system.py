"""``lspci -vvv`` and the kernel log (``dmesg``, ``journalctl -k``).

lspci facts: host.acs_redirect (a bridge with ``ReqRedir+`` or ``CmpltRedir+`` in ACSCtl),
host.acs_redirect_bridges, gpu.pcie_gen_cur/max and gpu.pcie_width_cur/max of NVIDIA functions
(LnkSta / LnkCap), and the bridges whose link trained below its capability (kept in
``structured["lspci"]``).

Kernel log facts: host.xid_codes, host.xid_latest, gpu.lost (Xid 79 / "fallen off the bus"),
symptom.crash (Xid 79, 48, 62, 74, 119 ...), host.iommu_active and host.iommu_fault (AMD-Vi
IO_PAGE_FAULT, DMAR faults), host.iommu_passthrough, host.kernel_iommu_args (the command line),
host.driver_version (NVRM's "Kernel Module  535.104.05"), host.nvswitch_present,
host.fabric_manager / host.fabric_manager_version (Fabric Manager's messages).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from .paste import Collector, norm_bus

_BLOCK = re.compile(r"^((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+(.+?)\s*$")
_SPEED_GEN = {"2.5": 1, "5": 2, "8": 3, "16": 4, "32": 5, "64": 6}
_LNK = re.compile(r"Speed\s+([\d.]+)GT/s[^,]*,\s*Width\s+x(\d+)")
_XID = re.compile(r"NVRM: Xid \((?:PCI:)?([0-9a-fA-F:.]+)\):\s*(\d+)")
_IOMMU_ARGS = re.compile(r"\b(intel_iommu=\S+|amd_iommu=\S+|iommu=\S+|iommu\.passthrough=\S+|pcie_acs_override=\S+|vfio[-_]pci\.ids=\S+)")
_FM_VERSION = re.compile(r"Fabric ?Manager(?: version)?(?: is)?\s*:?\s*v?(\d+\.\d+\.\d+)", re.I)
_DRIVER = re.compile(r"NVRM: loading NVIDIA UNIX (?:Open )?[\w-]+ Kernel Module(?: for \w+)?\s+(\d+\.\d+(?:\.\d+)?)")
CRASH_XIDS = {13, 31, 43, 45, 48, 61, 62, 63, 64, 68, 69, 74, 79, 92, 94, 95, 109, 119, 120, 140, 144, 145, 149, 154}


def _gen(speed: str) -> Optional[int]:
    return _SPEED_GEN.get(speed.rstrip("0").rstrip(".") if "." in speed else speed)


def parse_lspci(c: Collector) -> bool:
    text = c.paste.text
    if "LnkSta" not in text and "ACSCtl" not in text:
        return False
    c.kind("lspci")
    c.tool("lspci", c.paste.first_line("ACSCtl", "LnkSta", "LnkCap"))
    bridges_redirect: list[tuple[str, int]] = []
    acs_seen = 0
    degraded: list[dict[str, Any]] = []
    nv_funcs: list[dict[str, Any]] = []
    cur: Optional[dict[str, Any]] = None
    for no, line in enumerate(c.paste.lines, 1):
        if line[:1] not in (" ", "\t", "") and line.strip():
            m = _BLOCK.match(line.strip())
            if m:
                desc = m.group(2)
                cur = {"bdf": norm_bus(m.group(1)), "desc": desc, "line": no,
                       "bridge": "bridge" in desc.lower(),
                       "nvidia_gpu": "NVIDIA" in desc and ("VGA" in desc or "3D controller" in desc)}
                if cur["nvidia_gpu"]:
                    nv_funcs.append(cur)
                continue
        s = line.strip()
        if "ACSCtl" in s:  # also in a block whose header the paste cut off, or quoted in a sentence
            acs_seen += 1
            if "ReqRedir+" in s or "CmpltRedir+" in s:
                bridges_redirect.append((cur["bdf"] if cur else "(bridge above the paste)", no))
            continue
        if cur is None:
            continue
        elif s.startswith("LnkCap:"):
            m2 = _LNK.search(s)
            if m2:
                cur["cap"] = (_gen(m2.group(1)), int(m2.group(2)), no)
        elif s.startswith("LnkSta:"):
            m2 = _LNK.search(s)
            if m2:
                cur["sta"] = (_gen(m2.group(1)), int(m2.group(2)), no)
                cap = cur.get("cap")
                if cap and (cur["sta"][0] or 0) < (cap[0] or 0) or cap and cur["sta"][1] < cap[1]:
                    degraded.append({"bdf": cur["bdf"], "desc": cur["desc"], "cap": cap[:2], "sta": cur["sta"][:2], "line": no})
    if bridges_redirect:
        c.add("host", "host.acs_redirect", True, bridges_redirect[0][1], severity="problem",
              summary=f"ACS redirect on at bridge {bridges_redirect[0][0]}: PCIe P2P goes through the root complex")
        c.add("host", "host.acs_redirect_bridges", ",".join(b for b, _ in bridges_redirect), bridges_redirect[0][1])
    elif acs_seen:
        first = next((no for no, l in enumerate(c.paste.lines, 1) if "ACSCtl" in l), 1)
        c.add("host", "host.acs_redirect", False, first, severity="ok")
    for i, f in enumerate(nv_funcs):
        gpu = c.gpu_of_bus(f["bdf"])
        if gpu is None:
            gpu = i
            c.note_bus(f["bdf"], i)
        subj = f"gpu:{gpu}"
        if "sta" in f:
            c.add(subj, "gpu.pcie_gen_cur", f["sta"][0], f["sta"][2])
            c.add(subj, "gpu.pcie_width_cur", f["sta"][1], f["sta"][2])
        if "cap" in f:
            c.add(subj, "gpu.pcie_gen_max", f["cap"][0], f["cap"][2])
            c.add(subj, "gpu.pcie_width_max", f["cap"][1], f["cap"][2])
    c.structured["lspci"] = {"acs_redirect": [b for b, _ in bridges_redirect], "degraded": degraded,
                             "nvidia_functions": [f["bdf"] for f in nv_funcs]}
    return True


def parse_kernel_log(c: Collector) -> bool:
    text = c.paste.text
    keys = ("NVRM", "Xid", "AMD-Vi", "DMAR", "IO_PAGE_FAULT", "Command line:", "fabricmanager", "Fabric Manager",
            "nvidia-nvswitch", "iommu", "BOOT_IMAGE=")
    if not any(k in text for k in keys):
        return False
    found = False
    xids: list[tuple[int, int, str]] = []
    for no, line in enumerate(c.paste.lines, 1):
        if "Xid" in line:
            m = _XID.search(line)
            if m:
                found = True
                code = int(m.group(2))
                xids.append((code, no, m.group(1)))
                if code == 79 or "fallen off the bus" in line:
                    gpu = c.gpu_of_bus(m.group(1))
                    c.add(f"gpu:{gpu}" if gpu is not None else "host", "gpu.lost", True, no, severity="problem")
                continue
        if "fallen off the bus" in line:
            found = True
            c.add("host", "gpu.lost", True, no, severity="problem")
            c.add("host", "symptom.crash", True, no)
        if "IO_PAGE_FAULT" in line or ("DMAR" in line and ("fault" in line.lower() or "DRHD" in line)):
            found = True
            c.add("host", "host.iommu_active", True, no)
            c.add("host", "host.iommu_fault", True, no, severity="problem",
                  summary="IOMMU faults in the kernel log (DMA from a device refused by the IOMMU)")
        if "Command line:" in line or "Kernel command line:" in line or line.lstrip().startswith("BOOT_IMAGE="):  # dmesg, /proc/cmdline
            found = True
            args = " ".join(_IOMMU_ARGS.findall(line))
            c.add("host", "host.kernel_iommu_args", args or "(none)", no)
            if re.search(r"\biommu=pt\b|iommu\.passthrough=1", line):
                c.add("host", "host.iommu_passthrough", True, no)
            elif re.search(r"\bintel_iommu=on\b|\bamd_iommu=force_isolation\b|\biommu\.passthrough=0\b|\biommu=nopt\b", line):
                # translation asked for and not passthrough: DMA (peer traffic included) goes through the IOMMU
                c.add("host", "host.iommu_active", True, no)
        if "Default domain type:" in line:
            found = True
            if "Passthrough" in line:
                c.add("host", "host.iommu_passthrough", True, no)
            elif "Translated" in line:
                c.add("host", "host.iommu_active", True, no)
        if "NVRM: loading NVIDIA" in line:
            m = _DRIVER.search(line)
            if m:
                found = True
                c.add("host", "host.driver_version", m.group(1), no)
                c.add("host", "host.driver_major", int(m.group(1).split(".")[0]), no)
        if "nvidia-nvswitch" in line or "NVSwitch" in line and "NVRM" in line:
            found = True
            c.add("host", "host.nvswitch_present", True, no)
        low = line.lower()
        if "fabricmanager" in low or "fabric manager" in low or "nv-fabricmanager" in low:
            found = True
            m = _FM_VERSION.search(line)
            if m:
                c.add("host", "host.fabric_manager_version", m.group(1), no)
            if "successfully configured" in low or "started fabric manager" in low or "active (running)" in low:
                c.add("host", "host.fabric_manager", "running", no)
            elif re.search(r"\b(failed|error|mismatch|exited|inactive \(dead\)|(?:don't|doesn't|do not|does not) match)(?!\w)", low):
                c.add("host", "host.fabric_manager", "failed", no, severity="problem")
    if xids:
        c.add("host", "host.xid_codes", ",".join(str(x) for x in dict.fromkeys(x for x, _, _ in xids)), xids[0][1],
              severity="problem")
        c.add("host", "host.xid_latest", xids[-1][0], xids[-1][1], severity="problem")
        crash = next(((x, no) for x, no, _ in xids if x in CRASH_XIDS), None)
        if crash:
            c.add("host", "symptom.crash", True, crash[1])
    if found:
        c.kind("dmesg")
        c.tool("dmesg", c.paste.first_line(*keys))
    return found
