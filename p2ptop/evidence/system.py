"""``lspci -vvv`` and the kernel log (``dmesg``, ``journalctl -k``).

lspci facts: host.acs_redirect (a bridge with ``ReqRedir+``, ``CmpltRedir+`` or ``EgressCtrl+`` in ACSCtl, or an ACS
Control register read with ``setpci`` whose redirect bits are set), host.acs_redirect_bridges, host.acs_enabled (any
ACS control bit on at a bridge, ``SrcValid+`` alone included: NCCL's troubleshooting guide, "PCI Access Control
Services (ACS)", tells its readers to run ``lspci -vvv | grep ACSCtl`` and reads "SrcValid+" as "ACS might be enabled"),
gpu.pcie_gen_cur/max and gpu.pcie_width_cur/max of NVIDIA functions (LnkSta / LnkCap), gpu.bar1_mb of
NVIDIA display functions (their BAR1: the Resizable BAR capability's "BAR 1: current size", also as lines grepped out
of their block in NVIDIA's layout, ``Region 1`` of ``lspci -vv`` or the first 64-bit prefetchable
``Memory at`` of ``lspci -v``), and the bridges whose link trained below its capability (kept in
``structured["lspci"]``).

Kernel log facts: gpu.pcie_gen/width_cur/max of NVIDIA GPUs from the PCI core's "available PCIe bandwidth" line,
host.xid_codes, host.xid_latest, gpu.lost (Xid 79 / "fallen off the bus"),
symptom.crash (Xid 79, 48, 62, 74, 119 ...), host.iommu_active and host.iommu_fault (AMD-Vi
IO_PAGE_FAULT, DMAR faults), host.iommu_passthrough, host.kernel_iommu_args (the command line),
host.driver_version (NVRM's "Kernel Module  535.104.05", in the kernel log or /proc/driver/nvidia/version), host.nvswitch_present (also where NVLSM, the NVLink Subnet
Manager of NVLink-5 switch systems, names itself, and where Fabric Manager's start script detects an "NVL5+ system"), host.fabric_manager / host.fabric_manager_version (Fabric Manager's
messages, ``systemctl status nvidia-fabricmanager``: its "Active:" line, or systemd's "Unit ... could not be found" when
it is not installed; a health checker's "fabric manager ... not active").

NVML's numeric fabric state in a library's or plugin's line (UCX, the DRA driver: "state=1"): gpu.fabric_state
(``parse_nvml_fabric_state``).
"""

from __future__ import annotations

import re
from typing import Any, Optional

from ..pcie import ACS_ALL_BITS, ACS_REDIRECT_MASK, acs_ctrl_of_lspci, link_gen
from .paste import Collector, norm_bus

_BLOCK = re.compile(r"^((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+(.+?)\s*$")
_LNK = re.compile(r"Speed\s+([\d.]+)GT/s[^,]*,\s*Width\s+x(\d+)")
#: a memory BAR as lspci prints it: "Region 1: Memory at 38000000000 (64-bit, prefetchable) [size=32G]" (-vv) or,
#: without the region number, "Memory at 10ffc0000000 (64-bit, prefetchable) [size=256M]" (-v). An NVIDIA GPU's BAR0
#: is its 32-bit register window, BAR1 its 64-bit prefetchable framebuffer aperture (the one P2P maps peers
#: through), BAR3 a small 64-bit one: the first 64-bit prefetchable region is BAR1.
_REGION = re.compile(r"^(?:Region (\d):\s*)?Memory at [0-9a-fA-F]+ \((32|64)-bit, (non-)?prefetchable\)"
                     r".*?\[size=(\d+)([KMGT])\]")
_SIZE_MB = {"K": 1 / 1024, "M": 1, "G": 1024, "T": 1024 * 1024}
#: lspci's Resizable BAR capability (pciutils ls-ecaps.c cap_rebar: "Capabilities: [bb4 v1] Physical Resizable BAR",
#: then per BAR "BAR 1: current size: 256MB, supported: 64MB 128MB 256MB"). An NVIDIA GPU's layout is BAR 0 16MB
#: (registers), BAR 1 the framebuffer aperture, BAR 3 32MB: BAR 1's current size is its BAR1.
_REBAR = re.compile(r"^BAR (\d): current size: (\d+)\s*([KMGT])i?B, supported:", re.I)
#: ``setpci -s BDF <ACS control>.w``: the ACS Control register (PCIe Base Specification, ACS Extended Capability) is
#: the word at the capability + 6: ECAP_ACS+0x6.w by name (NCCL's troubleshooting guide disables ACS with
#: "setpci -v -s ${BDF} ECAP_ACS+0x6.w=0000"; ECAP0d is the capability's number), f2a.w the same register's fixed
#: offset on PLX/Broadcom PEX switches (as posted in many P2P threads). Its bits: p2ptop.pcie.ACS_BITS (bit 0 Source
#: Validation; the redirect bits, P2P Request and Completion Redirect and P2P Egress Control, ACS_REDIRECT_MASK), the same
#: reading as the host's (p2ptop.host.iommu).
_SETPCI_ACS = re.compile(r"setpci\b.*?(?:\bf2a\b|ECAP_ACS\s*\+\s*(?:0x)?6\b|ECAP0?0?0?d\s*\+\s*(?:0x)?6\b)(?:\.w)?(?!\s*=)", re.I)
_SETPCI_VALUE = re.compile(r"^(?:(?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]\s*(?:@\S+\s*)?=?\s*)?([0-9a-fA-F]{4})$")
_XID = re.compile(r"NVRM: Xid \((?:PCI:)?([0-9a-fA-F:.]+)\):\s*(\d+)")
#: GKE's GPU health checker (container-engine-accelerators pkg/gpu/nvidia/health_check/health_checker.go): the Xid it adds as
#: the node condition ("XIDCritialError Condition not exists, adding:%!(EXTRA uint64=79)", its own misspelling and a Go format
#: with no verb) and the condition as kubectl shows it ("XidCriticalError  True ... {"79":true}")
_GKE_XID = re.compile(r"XIDCritialError Condition not exists, adding:%!\(EXTRA uint64=(\d+)\)|XidCriticalError\s+True\b[^\n]*?\{\"(\d+)\":true")
_IOMMU_ARGS = re.compile(r"\b(intel_iommu=\S+|amd_iommu=\S+|iommu=\S+|iommu\.passthrough=\S+|pcie_acs_override=\S+|vfio[-_]pci\.ids=\S+)")
_FM_VERSION = re.compile(r"Fabric ?Manager(?: version)?(?: is)?\s*:?\s*v?(\d+\.\d+\.\d+)", re.I)
#: the module's banner as the kernel log prints it at load ("NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.104.05 ...")
#: and as /proc/driver/nvidia/version gives it (nv-procfs.c: "NVRM version: %s" with the same id string)
_DRIVER = re.compile(r"NVRM(?: version)?: (?:loading )?NVIDIA UNIX (?:Open )?[\w-]+ Kernel Module(?: for \w+)?\s+(\d+\.\d+(?:\.\d+)?)")
#: systemd's answers about a unit (systemctl status): its header line "● nvidia-fabricmanager.service - ...", then
#: "Active: active (running)" / "inactive (dead)" / "failed (Result: ...)"; "Unit X.service could not be found."
_UNIT_HEADER = re.compile(r"(?:nvidia-)?fabricmanager(?:\.service)? - ", re.I)
_UNIT_MISSING = re.compile(r"Unit \S*fabricmanager\S* (?:could not be found|not found)|fabricmanager\S*: (?:unit )?not[- ]found", re.I)
_ACTIVE = re.compile(r"^\s*Active:\s*(active \(running\)|active|inactive|failed|activating|deactivating)", re.I)
#: a health checker's or a person's words for a Fabric Manager that is there but not running ("fabric manager found
#: but not active", "fabric manager is inactive", "not running")
_FM_INACTIVE = re.compile(r"fabric[ -]?manager\b[^.\n]{0,40}\b(?:not active|inactive|not running|not started|stopped)\b")
#: the IOMMU drivers' start-up lines: Intel "DMAR: IOMMU enabled" (drivers/iommu/intel/dmar.c), AMD "AMD-Vi: Found
#: IOMMU cap" / "perf/amd_iommu: Detected AMD IOMMU" (drivers/iommu/amd/init.c)
_IOMMU_ON = re.compile(r"DMAR: IOMMU enabled|AMD-Vi: Found IOMMU|Detected AMD IOMMU")
#: the PCI core's link report at enumeration (drivers/pci/pci.c __pcie_print_link_status): "<driver> BDF: 63.008 Gb/s
#: available PCIe bandwidth, limited by 8.0 GT/s PCIe x8 link at 0000:40:01.1 (capable of 252.048 Gb/s with 16.0 GT/s
#: PCIe x16 link)" where the path trained below the device's capability, "... Gb/s available PCIe bandwidth (16.0 GT/s
#: PCIe x16 link)" where it did not; journalctl may wrap it after "link at".
_PCI_BW = re.compile(r"(?:^|[\s\]])(\S+)\s+((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]):\s+[\d.]+ Gb/s available PCIe "
                     r"bandwidth(?:, limited by ([\d.]+) GT/s PCIe x(\d+) link at \S+\s+\(capable of [\d.]+ Gb/s with "
                     r"([\d.]+) GT/s PCIe x(\d+) link\)| \(([\d.]+) GT/s PCIe x(\d+) link\))")
#: the PCI core's line for a function it found: "pci 0000:41:00.0: [10de:2204] type 00 class 0x030000" (vendor 10de is
#: NVIDIA; class 0x03 a display or 3D controller, a GPU)
_PCI_NV_GPU = re.compile(r"((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]):\s+\[10de:[0-9a-fA-F]{4}\] type \d+ class 0x03")
CRASH_XIDS = {13, 31, 43, 45, 48, 61, 62, 63, 64, 68, 69, 74, 79, 92, 94, 95, 109, 119, 120, 140, 144, 145, 149, 154}


def _systemd_active(lines: list[str], header: int) -> Optional[tuple[str, int]]:
    """("running" | "not running" | "failed", line) from the "Active:" line under a unit's header line."""
    for k in range(header, min(len(lines), header + 6)):
        m = _ACTIVE.match(lines[k])
        if m:
            v = m.group(1).lower()
            return ("running" if v.startswith("active") else "failed" if v == "failed" else "not running"), k + 1
    return None



def parse_setpci_acs(c: Collector) -> bool:
    """``setpci -s BDF ECAP_ACS+6.w`` (or ``f2a.w``, in a loop over bridges) and the hex words it prints, one a
    bridge ("001d", or "0000:03:08.0 @f2a = 001d" with -v): a word with a redirect bit set is ACS redirect on."""
    text = c.paste.text
    if "setpci" not in text.lower():
        return False
    lines = c.paste.lines
    values: list[tuple[int, int]] = []
    for no, line in enumerate(lines, 1):
        if not _SETPCI_ACS.search(line):
            continue
        for k in range(no, min(len(lines), no + 256)):  # the words it printed, up to the next non-value line
            s = lines[k].strip()
            if not s or s.lower().startswith("[sudo]") or s.lower().startswith("password"):
                continue
            m = _SETPCI_VALUE.match(s)
            if not m:
                break
            values.append((int(m.group(1), 16), k + 1))
    if not values:
        return False
    c.kind("setpci")
    c.tool("setpci", values[0][1])
    on = [(v, no) for v, no in values if v & ACS_REDIRECT_MASK]
    if on:
        c.add("host", "host.acs_redirect", True, on[0][1], severity="problem",
              summary=f"ACS Control {on[0][0]:04x} read with setpci: P2P redirect (request, completion or egress) on "
                      f"({len(on)} of {len(values)} bridges): PCIe P2P goes up through the root complex")
    else:
        c.add("host", "host.acs_redirect", False, values[0][1], severity="ok")
    any_on = [(v, no) for v, no in values if v & ACS_ALL_BITS]
    c.add("host", "host.acs_enabled", bool(any_on), (any_on or values)[0][1], severity="info" if any_on else "ok")
    return True


def _is_nvidia_gpu(desc: str) -> bool:
    """An lspci function line's description is an NVIDIA GPU's (a VGA or 3D controller of NVIDIA's)."""
    return "NVIDIA" in desc and ("VGA" in desc or "3D controller" in desc)


def _nvidia_gpu_buses(c: Collector) -> set[str]:
    """The bus ids the paste shows as NVIDIA GPUs: lspci's function lines and the kernel's enumeration lines."""
    out = {norm_bus(m.group(1)) for m in _PCI_NV_GPU.finditer(c.paste.text)}
    for line in c.paste.lines:
        if line[:1] not in (" ", "\t", "") and "NVIDIA" in line:
            m = _BLOCK.match(line.strip())
            if m and _is_nvidia_gpu(m.group(2)):
                out.add(norm_bus(m.group(1)))
    return out


def parse_lspci(c: Collector) -> bool:
    found = parse_setpci_acs(c)
    text = c.paste.text
    if "LnkSta" not in text and "ACSCtl" not in text and not ("Memory at" in text and "NVIDIA" in text) \
            and "current size:" not in text:
        return found
    c.kind("lspci")
    c.tool("lspci", c.paste.first_line("ACSCtl", "LnkSta", "LnkCap", "Memory at"))
    bridges_redirect: list[tuple[str, int]] = []
    acs_seen = 0
    bridges_acs_on: list[tuple[str, int]] = []
    degraded: list[dict[str, Any]] = []
    nv_funcs: list[dict[str, Any]] = []
    cur: Optional[dict[str, Any]] = None
    loose_rebar: dict[int, tuple[int, int]] = {}  # Resizable BAR lines of no block the paste shows: BAR -> (MiB, line)
    for no, line in enumerate(c.paste.lines, 1):
        # a device's first line starts with its address; a paste indented as a whole (a quote, a literal block) indents
        # it too, and no line inside a block starts with an address
        if line.strip():
            m = _BLOCK.match(line.strip())
            if m:
                desc = m.group(2)
                cur = {"bdf": norm_bus(m.group(1)), "desc": desc, "line": no,
                       "bridge": "bridge" in desc.lower(),
                       "nvidia_gpu": _is_nvidia_gpu(desc)}
                if cur["nvidia_gpu"]:
                    nv_funcs.append(cur)
                continue
        s = line.strip()
        rb = _REBAR.match(s)
        if rb:
            size = (round(int(rb.group(2)) * _SIZE_MB[rb.group(3).upper()]), no)
            if cur is None:
                loose_rebar.setdefault(int(rb.group(1)), size)
            elif cur["nvidia_gpu"] and rb.group(1) == "1":
                cur["bar1"] = size  # the size it has now, over the Region line's (the same window)
            continue
        if cur is not None and cur["nvidia_gpu"] and s.startswith("Region 1: Memory at <unassigned>") and "bar1" not in cur:
            cur["bar1"] = (0, no)  # the BAR1 window got no address (no space for it above the bridge)
            continue
        r = _REGION.match(s) if cur is not None and cur["nvidia_gpu"] and "Memory at" in s else None
        if r and r.group(2) == "64" and not r.group(3) and "bar1" not in cur and (r.group(1) in (None, "1")):
            cur["bar1"] = (round(int(r.group(4)) * _SIZE_MB[r.group(5)]), no)
            continue
        if "ACSCtl" in s:  # also in a block whose header the paste cut off, or quoted in a sentence
            acs_seen += 1
            where = cur["bdf"] if cur else "(bridge above the paste)"
            ctrl = acs_ctrl_of_lspci(s)
            if ctrl and ctrl & ACS_REDIRECT_MASK:
                bridges_redirect.append((where, no))
            if ctrl:
                bridges_acs_on.append((where, no))
            continue
        if cur is None:
            continue
        elif s.startswith("LnkCap:"):
            m2 = _LNK.search(s)
            if m2:
                cur["cap"] = (link_gen(m2.group(1)), int(m2.group(2)), no)
        elif s.startswith("LnkSta:"):
            m2 = _LNK.search(s)
            if m2:
                cur["sta"] = (link_gen(m2.group(1)), int(m2.group(2)), no)
                cap = cur.get("cap")
                if cap and (cur["sta"][0] or 0) < (cap[0] or 0) or cap and cur["sta"][1] < cap[1]:
                    degraded.append({"bdf": cur["bdf"], "desc": cur["desc"], "cap": cap[:2], "sta": cur["sta"][:2], "line": no})
    if bridges_redirect:
        c.add("host", "host.acs_redirect", True, bridges_redirect[0][1], severity="problem",
              summary=f"ACS redirect on at bridge {bridges_redirect[0][0]}: PCIe P2P goes through the root complex")
        c.add("host", "host.acs_redirect_bridges", ",".join(b for b, _ in bridges_redirect), bridges_redirect[0][1])
    first_acs = next((no for no, l in enumerate(c.paste.lines, 1) if "ACSCtl" in l), 1) if acs_seen else 1
    if acs_seen and not bridges_redirect:
        c.add("host", "host.acs_redirect", False, first_acs, severity="ok")
    if bridges_acs_on:
        where, line = bridges_acs_on[0]
        c.add("host", "host.acs_enabled", True, line, severity="info",
              summary=f"ACS control bits on at {len(bridges_acs_on)} of {acs_seen} bridge(s), first {where}"
                      + ("" if bridges_redirect else " (redirect bits off; NCCL's troubleshooting guide reads SrcValid+ as "
                                                   "'ACS might be enabled': the full lspci -vvv of the bridges above the GPUs decides)"))
    elif acs_seen:
        c.add("host", "host.acs_enabled", False, first_acs, severity="ok")
    if not nv_funcs and 1 in loose_rebar and loose_rebar.get(0, (0,))[0] == 16 and 3 in loose_rebar:
        # Resizable BAR lines without their device's header, in NVIDIA's layout (16 MB registers at BAR 0, BAR 3)
        nv_funcs.append({"bdf": "", "desc": "", "line": loose_rebar[1][1], "bar1": loose_rebar[1]})
    for i, f in enumerate(nv_funcs):
        gpu = c.gpu_of_bus(f["bdf"]) if f["bdf"] else None
        if gpu is None:
            gpu = i
            if f["bdf"]:
                c.note_bus(f["bdf"], i)
        subj = f"gpu:{gpu}"
        if "sta" in f:
            c.add(subj, "gpu.pcie_gen_cur", f["sta"][0], f["sta"][2])
            c.add(subj, "gpu.pcie_width_cur", f["sta"][1], f["sta"][2])
        if "cap" in f:
            c.add(subj, "gpu.pcie_gen_max", f["cap"][0], f["cap"][2])
            c.add(subj, "gpu.pcie_width_max", f["cap"][1], f["cap"][2])
        if "bar1" in f:
            c.add(subj, "gpu.bar1_mb", f["bar1"][0], f["bar1"][1],
                  summary=f"{subj}: BAR1 (the aperture peers map through) is {f['bar1'][0]} MiB")
    c.structured["lspci"] = {"acs_redirect": [b for b, _ in bridges_redirect], "degraded": degraded,
                             "nvidia_functions": [f["bdf"] for f in nv_funcs if f["bdf"]]}
    return True


def _gpu_of_bus_or_next(c: Collector, bus: str) -> int:
    """The GPU a bus id is, or, for a GPU the paste names by bus only (the kernel log, sysfs), the next number."""
    gpu = c.gpu_of_bus(bus)
    if gpu is None:
        gpu = len(set(c.bus_to_gpu.values()))
        c.note_bus(bus, gpu)
    return gpu


def _kernel_pcie_links(c: Collector) -> bool:
    """The PCI core's link report of NVIDIA GPUs (the line's driver is nvidia, or the paste's enumeration line gives
    the function vendor 10de, class display/3D): the link's speed and width as trained against the device's
    capability, as gpu.pcie_gen/width_cur/max (the facts lspci's LnkSta/LnkCap give)."""
    if "available PCIe bandwidth" not in c.paste.text:
        return False
    lines = c.paste.lines
    nv = _nvidia_gpu_buses(c)
    found = False
    for no, line in enumerate(lines, 1):
        if "available PCIe bandwidth" not in line:
            continue
        joined = line + (" " + lines[no].strip() if no < len(lines) and line.rstrip().endswith(("link at", "link")) else "")
        m = _PCI_BW.search(joined)
        if not m:
            continue
        bus = norm_bus(m.group(2))
        if m.group(1).rstrip(":") != "nvidia" and bus not in nv and "NVIDIA" not in line:
            continue  # another device's link (a NIC, an NVMe drive, a bridge)
        if m.group(3):
            cur, cap = (link_gen(m.group(3)), int(m.group(4))), (link_gen(m.group(5)), int(m.group(6)))
        else:
            cur = cap = (link_gen(m.group(7)), int(m.group(8)))
        subj = f"gpu:{_gpu_of_bus_or_next(c, bus)}"
        found = True
        if cur[0]:
            c.add(subj, "gpu.pcie_gen_cur", cur[0], no)
        if cap[0]:
            c.add(subj, "gpu.pcie_gen_max", cap[0], no)
        c.add(subj, "gpu.pcie_width_cur", cur[1], no)
        c.add(subj, "gpu.pcie_width_max", cap[1], no)
    return found


#: sysfs's PCI link attributes (drivers/pci/pci-sysfs.c: current_link_speed / max_link_speed "%s" as "16.0 GT/s PCIe",
#: current_link_width / max_link_width "%u"), as `cat /sys/bus/pci/devices/<bdf>/<attr>` then the value on the next line, or
#: `grep . /sys/bus/pci/devices/*/current_link_*` as "<path>:<value>"
_SYSFS_LINK = re.compile(r"/sys/(?:bus/pci/devices|devices/pci[0-9a-f:]+(?:/[0-9a-f:.]+)*)/((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:"
                         r"[0-9a-fA-F]{2}\.[0-7])/(current|max)_link_(speed|width)\b(?::\s*(\S[^\n]*))?")


def parse_sysfs_links(c: Collector) -> bool:
    """sysfs's link attributes of NVIDIA GPUs (a function the paste shows as NVIDIA's: its lspci line, the kernel's
    enumeration line, or a bus id another reader gave a GPU): gpu.pcie_gen_cur/max and gpu.pcie_width_cur/max, as
    lspci's LnkSta/LnkCap give them."""
    text = c.paste.text
    if "_link_" not in text or "/sys/" not in text:
        return False
    lines = c.paste.lines
    nv = _nvidia_gpu_buses(c)
    found = False
    for no, line in enumerate(lines, 1):
        if "_link_" not in line:
            continue
        m = _SYSFS_LINK.search(line)
        if m is None:
            continue
        bus = norm_bus(m.group(1))
        gpu = c.gpu_of_bus(bus)
        if gpu is None and bus not in nv:
            continue  # another device's link (a NIC, an NVMe drive, a bridge)
        value, at = (m.group(4), no) if m.group(4) else ((lines[no].strip(), no + 1) if no < len(lines) else ("", no))
        if m.group(3) == "speed":
            v = link_gen(value)
        else:
            v = int(value) if value.isdigit() else None
        if not v:
            continue
        gpu = _gpu_of_bus_or_next(c, bus)
        key = f"gpu.pcie_{'gen' if m.group(3) == 'speed' else 'width'}_{'cur' if m.group(2) == 'current' else 'max'}"
        found = c.add(f"gpu:{gpu}", key, v, at) or found
    return found


#: NVLSM, the NVLink Subnet Manager that Fabric Manager needs on NVLink-5 (Blackwell) switch systems, naming itself
_NVLSM = re.compile(r"\bnvlsm\b", re.I)
#: nvidia-fabricmanager-start.sh's precheck (Fabric Manager 570+), as its journal shows it: "Detected NVL5+ system" where it
#: found the NVLink-5 switch trays' InfiniBand devices (an NVSwitch system), then 'Kernel module "ib_umad" has not been
#: loaded, fabric manager cannot be started' (the FM/NVLSM pair reaches the switches through /dev/infiniband/umad*).
#: "Detected Pre-NVL5 system" says nothing of switches: every older or NVSwitch-less host prints it as well.
_NVL5_DETECTED = re.compile(r"\bDetected NVL5\+ system\b")


#: NVML's GPU fabric state as a number in another tool's line (nvmlGpuFabricState_t: 0 not supported, 1 not started,
#: 2 in progress, 3 completed): UCX's "fabric_info: state=1 status=0" (uct/cuda/cuda_ipc/cuda_ipc_md.c), the DRA driver's
#: "NVLink fabric not attached (device 0/GPU-...): state=1, refusing to start" (k8s-dra-driver-gpu compute-domain plugin)
_NVML_FABRIC_STATE = re.compile(r"\bfabric\w*\b[^\n]{0,160}?\bstate\s*[=:]\s*([0-3])\b(?![.\d])", re.I)
#: the same state by its name, as a health checker prints NVML's fabric info (gpud's "unhealthy fabric state: GPU ...:
#: state=In Progress"; NVML's NVML_GPU_FABRIC_STATE_NOT_STARTED / IN_PROGRESS / COMPLETED, as XLA's interconnect status
#: prints the enum's name: "Interconnect Status: Fabric: state=IN_PROGRESS, status=Success")
_NVML_FABRIC_STATE_NAMED = re.compile(r"\bfabric\w*\b[^\n]{0,240}?\bstate\s*=\s*(not[ _]started|in[ _]progress|completed)\b", re.I)
_NVML_FABRIC_NAMES = {1: "NOT_STARTED", 2: "IN_PROGRESS", 3: "COMPLETED"}


def parse_nvml_fabric_state(c: Collector) -> bool:
    """NVML's numeric fabric state printed by a library or plugin: gpu.fabric_state (and NVSwitches present) for 1-3;
    the driver's NV_ERR_NVLINK_FABRIC_NOT_READY as nvidia-persistenced words it ("the NVLink fabric is not ready: 0x81")."""
    for no in c.paste.select(("fabric",), context=0).numbers:
        line = c.paste.line(no)
        if "NVLink fabric is not ready" in line:
            c.add("host", "gpu.fabric_state", "NOT_STARTED", no, severity="problem",
                  summary="the driver says the NVLink fabric is not ready (NV_ERR_NVLINK_FABRIC_NOT_READY)")
            c.add("host", "host.nvswitch_present", True, no, severity="info")
            return True
        m = _NVML_FABRIC_STATE.search(line)
        named = _NVML_FABRIC_STATE_NAMED.search(line) if m is None else None
        if named:
            state = named.group(1).upper().replace(" ", "_")
            c.add("host", "gpu.fabric_state", state, no, severity="ok" if state == "COMPLETED" else "problem",
                  summary=f"NVML's fabric state {named.group(1)} in a health checker's line")
            c.add("host", "host.nvswitch_present", True, no, severity="info")
            return True
        if m and int(m.group(1)) in _NVML_FABRIC_NAMES:
            state = _NVML_FABRIC_NAMES[int(m.group(1))]
            c.add("host", "gpu.fabric_state", state, no, severity="ok" if state == "COMPLETED" else "problem",
                  summary=f"NVML's fabric state {m.group(1)} ({state}) in a library's line")
            c.add("host", "host.nvswitch_present", True, no, severity="info")
            return True
    return False


_INACCESSIBLE = re.compile(r"\bnvidia ((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d): Unable to change power state from \w+ to D0, "
                           r"device inaccessible")
_BAR1_FAILED = re.compile(r"\b((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d): BAR 1: (?:no space for|failed to assign) "
                          r"\[mem size 0x[0-9a-fA-F]+ 64bit pref\]")
_BAR1_ASSIGNED = re.compile(r"\b((?:[0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.\d): BAR 1: assigned \[mem ")


def parse_kernel_log(c: Collector) -> bool:
    text = c.paste.text
    keys = ("NVRM", "Xid", "AMD-Vi", "DMAR", "IO_PAGE_FAULT", "Command line:", "fabricmanager", "Fabric Manager", "fabric manager",
            "nvidia-nvswitch", "iommu", "BOOT_IMAGE=", "available PCIe bandwidth", "nvlsm", "NVLSM", "ACS redirect is set",
            "device inaccessible", "BAR 1: ", "XIDCritialError")
    if not any(k in text for k in keys):
        return False
    found = _kernel_pcie_links(c)
    iommu_on = 0
    xids: list[tuple[int, int, str]] = []
    bar1_failed: dict[str, int] = {}  # device -> line of its BAR 1 assignment failure
    bar1_retried = 0  # line of a BAR 1 assigned after it had failed (the kernel's second pass, windows reallocated)
    for no, line in enumerate(c.paste.lines, 1):
        if "XIDCritialError" in line or "XidCriticalError" in line:
            m = _GKE_XID.search(line)
            if m:
                found = True
                code = int(m.group(1) or m.group(2))
                xids.append((code, no, ""))
                if code == 79:
                    c.add("host", "gpu.lost", True, no, severity="problem")
                continue
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
        if "ACS redirect is set between" in line:
            # drivers/pci/p2pdma.c (calc_map_type_and_dist): the kernel found ACS redirect on the path between a P2PDMA
            # client and provider, so their peer traffic goes up through the root complex
            found = True
            c.add("host", "host.acs_redirect", True, no, severity="problem",
                  summary="the kernel (p2pdma) says ACS redirect is set on the path between two devices")
        if "device inaccessible" in line:
            # drivers/pci/pci.c (pci_power_up): config space reads back all-ones, the device no longer answers on the bus;
            # on the GPU's own function (driver "nvidia"; "nvidia-gpu" is the USB-C controller's function of a GeForce)
            m = _INACCESSIBLE.search(line)
            if m:
                found = True
                gpu = c.gpu_of_bus(m.group(1))
                c.add(f"gpu:{gpu}" if gpu is not None else "host", "gpu.lost", True, no, severity="problem",
                      summary="the kernel cannot wake the GPU: it no longer answers on the PCIe bus")
        if "BAR 1: " in line:
            # drivers/pci/setup-res.c (pci_assign_resource): "BAR %d: no space for %pR" / "failed to assign"; a BAR 1 that is
            # itself 64-bit prefetchable follows a 32-bit BAR 0: the layout of NVIDIA's GPUs (BAR0 registers, BAR1 the
            # aperture peer traffic goes through); a later "BAR 1: assigned" for the device undoes it
            m = _BAR1_FAILED.search(line)
            if m:
                found = True
                bar1_failed[m.group(1)] = no
            m = _BAR1_ASSIGNED.search(line)
            if m and bar1_failed.pop(m.group(1), None) is not None:
                bar1_retried = no
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
        if _IOMMU_ON.search(line):
            found = True
            iommu_on = iommu_on or no
        if "Default domain type:" in line:
            found = True
            if "Passthrough" in line:
                c.add("host", "host.iommu_passthrough", True, no)
            elif "Translated" in line:
                c.add("host", "host.iommu_active", True, no)
        if "NVRM: loading NVIDIA" in line or "NVRM version: NVIDIA" in line:
            m = _DRIVER.search(line)
            if m:
                found = True
                c.add("host", "host.driver_version", m.group(1), no)
                c.add("host", "host.driver_major", int(m.group(1).split(".")[0]), no)
        if "nvidia-nvswitch" in line or "NVSwitch" in line and "NVRM" in line or _NVLSM.search(line) or _NVL5_DETECTED.search(line):
            # NVLSM (the NVLink Subnet Manager) runs only on NVLink-5 switch systems (Fabric Manager user guide)
            found = True
            c.add("host", "host.nvswitch_present", True, no)
        low = line.lower()
        if "fabricmanager" in low or "fabric manager" in low or "nv-fabricmanager" in low or "fabric-manager" in low:
            found = True
            m = _FM_VERSION.search(line)
            if m:
                c.add("host", "host.fabric_manager_version", m.group(1), no)
            active = _systemd_active(c.paste.lines, no) if _UNIT_HEADER.search(line) else None
            if active:
                state, ano = active
                c.add("host", "host.fabric_manager", state, ano, severity="ok" if state == "running" else "problem",
                      summary=f"systemctl: Fabric Manager {state}")
            elif _UNIT_MISSING.search(line):
                # systemd knows no such unit: Fabric Manager is not installed, so it is not running
                c.add("host", "host.fabric_manager", "not running", no, severity="problem",
                      summary="systemd: no nvidia-fabricmanager unit (Fabric Manager not installed)")
            elif "successfully configured" in low or "started fabric manager" in low or "active (running)" in low:
                c.add("host", "host.fabric_manager", "running", no)
            elif "version" in low and re.search(r"\b(mismatch|(?:don't|doesn't|do not|does not) match)(?!\w)", low):
                # its version said not to match the driver's: the service refuses to start (Fabric Manager user guide)
                c.add("host", "host.fabric_manager", "version mismatch", no, severity="problem")
            elif re.search(r"\b(failed|error|mismatch|exited|inactive \(dead\)|(?:don't|doesn't|do not|does not) match|"
                           r"(?:cannot|can't|could not|couldn't) (?:be )?start(?:ed)?)(?!\w)", low):
                c.add("host", "host.fabric_manager", "failed", no, severity="problem")
            elif _FM_INACTIVE.search(low):
                c.add("host", "host.fabric_manager", "not running", no, severity="problem")
    if bar1_retried and not bar1_failed:
        c.add("host", "host.bar1_reassigned", True, bar1_retried, severity="ok",
              summary="every BAR 1 the kernel failed to assign was assigned on its next pass")
    for bdf, no in bar1_failed.items():
        gpu = c.gpu_of_bus(bdf)
        c.add(f"gpu:{gpu}" if gpu is not None else "host", "gpu.bar1_mb", 0, no, severity="problem",
              summary=f"the kernel could not assign {bdf}'s 64-bit prefetchable BAR 1 (no address space for it)")
    if iommu_on and not c.has("host", "host.iommu_passthrough") and not c.has("host", "host.iommu_active"):
        # the IOMMU driver says it is on, and nothing in the paste says passthrough: DMA is translated (the default
        # domain of the Intel and AMD IOMMU drivers unless iommu=pt / iommu.passthrough=1)
        c.add("host", "host.iommu_active", True, iommu_on, severity="info",
              summary="the kernel log says the IOMMU is on (no passthrough in the paste)")
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
