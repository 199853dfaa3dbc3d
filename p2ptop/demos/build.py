"""Builds the bundled demo snapshots (``python -m p2ptop.demos.build [CAPTURE_DIR]``).

Run at development time; the JSON files it writes beside it are what p2ptop loads. Each demo's
figures and their origin are described in README.md beside this file. Everything here is simulated
except ``h200x2-vm``, which is the real capture run through the real NVML reader.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Callable, Optional

from ..model import GPU, CpuSocket, Fabric, NvLink, Pair, PcieDevice, Snapshot, Source

HERE = os.path.dirname(os.path.abspath(__file__))
TAKEN_AT = "2026-11-23T00:00:00+00:00"  # fixed, so rebuilding gives identical files


def _uuid(tag: str, i: int) -> str:
    return f"GPU-de000000-0000-4000-8000-{tag}{i:0{12 - len(tag)}d}"


def _links(n: int, version: int, remotes: list[str], remote_type: str = "NVSWITCH",
           down: tuple[int, ...] = (), errors: Optional[dict[int, dict[str, int]]] = None) -> list[NvLink]:
    out = []
    for link in range(n):
        counters = {"replay": 0, "recovery": 0, "crc_flit": 0, "crc_data": 0}
        counters.update((errors or {}).get(link, {}))
        out.append(
            NvLink(
                link=link,
                state="inactive" if link in down else "active",
                version=version,
                remote_pci_bus_id=remotes[link % len(remotes)] if remotes else None,
                remote_type=remote_type,
                p2p_supported=True,
                counters=counters,
            )
        )
    return out


def _pcie_path(switch_up: Optional[str], switch_down: Optional[str], root_port: str, gen: int, width: int,
               acs: Optional[int] = None) -> list[PcieDevice]:
    path = []
    if switch_down and switch_up:
        path.append(PcieDevice(bdf=switch_down, role="switch_downstream", vendor_id="0x1000", device_id="0xc030",
                               link_gen_cur=gen, link_gen_max=gen, link_width_cur=16, link_width_max=16, acs_ctrl=acs))
        path.append(PcieDevice(bdf=switch_up, role="switch_upstream", vendor_id="0x1000", device_id="0xc030",
                               link_gen_cur=gen, link_gen_max=gen, link_width_cur=width, link_width_max=width))
    path.append(PcieDevice(bdf=root_port, role="root_port", vendor_id="0x8086", device_id="0x352a",
                           link_gen_cur=gen, link_gen_max=gen, link_width_cur=width, link_width_max=width))
    return path


def _pairs(n: int, ancestor: Callable[[int, int], str], p2p: Callable[[int, int], dict[str, str]]) -> list[Pair]:
    return [Pair(a=a, b=b, ancestor=ancestor(a, b), p2p=p2p(a, b)) for a in range(n) for b in range(n) if a != b]


def _nvlink_p2p(a: int, b: int) -> dict[str, str]:
    return {"read": "OK", "write": "OK", "nvlink": "OK", "atomics": "OK", "pci": "NOT_SUPPORTED"}


def _demo_source(name: str, host: str) -> Source:
    return Source(kind="demo", hostname=host, taken_at=TAKEN_AT, detail=name, simulated=True)


SIMULATED = "simulated (demo)"
#: Host facts most demos share; each demo overrides what makes it what it is.
_BASE_HOST: dict[str, Any] = {
    "host.kernel_iommu_args": "", "host.iommu_units": [], "host.iommu_active": False, "host.iommu_passthrough": False,
    "host.hypervisor_flag": False, "host.virtualized": False, "host.container": None, "host.shm_mb": 257000,
    "host.nvidia_peermem": False, "host.nvswitch_pci_count": 0, "host.fabric_manager": "not installed",
    "host.registry_dwords": "", "host.xid": [],
}


def _host(gpus: list[GPU], facts: dict[str, Any], na: Optional[dict[str, str]] = None) -> dict[str, Any]:
    """Simulated host facts in the form p2ptop.host.collect() gives, every one marked simulated.

    ACS records come from the GPUs' PCIe paths (a bridge without acs_ctrl has no ACS capability)."""
    from ..host.env import P2P_VARIABLES
    from ..host.facts import Host
    from ..host.iommu import acs_record, add_acs_facts
    from ..sources.sysfs import sysfs_bdf

    h = Host(root="/nonexistent")
    h.add("host.gpu_bdfs", [sysfs_bdf(g.pci_bus_id) for g in gpus if g.pci_bus_id], SIMULATED)
    for name, value in dict(_BASE_HOST, **facts).items():
        h.add(name, value, SIMULATED)
    for name, why in (na or {}).items():
        h.add(name, None, SIMULATED, why)
    if "host.driver_version" in h.facts and h.facts["host.driver_version"]["value"]:
        h.add("host.driver_major", int(h.facts["host.driver_version"]["value"].split(".")[0]), SIMULATED)
    records = [acs_record(sysfs_bdf(g.pci_bus_id), d.bdf, d.role, d.acs_ctrl or 0, SIMULATED) for g in gpus for d in g.pcie_path]
    add_acs_facts(h, records, SIMULATED)
    for name in P2P_VARIABLES:
        h.facts.setdefault(f"env.{name}", {"value": None, "how": SIMULATED + " (not set)", "na": None})
    return {"facts": h.facts, "as_root": True, "simulated": True}


# --- the demos ----------------------------------------------------------------------------


def h200x2_vm(capture_dir: str) -> Snapshot:
    """The real capture of 2 H200s in a pass-through VM, read through the real NVML reader."""
    from ..sources.capture import Capture, FakeNvml
    from ..sources.nvml import read_snapshot

    snap = read_snapshot(FakeNvml(Capture.load(capture_dir)), sysfs_root="/nonexistent", hostname="h200x2-vm")
    snap.source = _demo_source("h200x2-vm", "h200x2-vm")
    for g in snap.gpus:
        # Bus 00 of domain 0 is the root bus: both GPUs sit directly on the host bridge
        # (NVML's common ancestor in the capture is HOSTBRIDGE).
        g.root_complex = "pci0000:00"
        g.na.pop("pcie_path", None)
    snap.sockets = [CpuSocket(id=0, numa_nodes=[0], cpus="0-31")]
    snap.host = _host(snap.gpus, {
        "host.driver_version": snap.driver_version, "host.hypervisor_flag": True, "host.hypervisor": "firecracker",
        "host.virtualized": True, "host.nvswitch_pci_count": 0, "host.fabric_manager": None,
    }, na={"host.os": "not in the capture", "host.kernel": "not in the capture", "host.shm_mb": "not in the capture",
           "host.kernel_iommu_args": "not in the capture",
           "host.fabric_manager": "runs outside the VM, on the host that owns the NVSwitches"})
    snap.na.pop("sockets", None)
    snap.notes.append(
        "Built from a real capture (shared/captures/h200x2-nvswitch-vm): 2 NVIDIA H200 behind NVSwitch in a "
        "Firecracker pass-through VM; the NVSwitches are hidden from the VM. Shown as a demo: simulated."
    )
    return snap


def dgx_h100() -> Snapshot:
    n = 8
    switches = ["00000000:05:00.0", "00000000:06:00.0", "00000000:07:00.0", "00000000:08:00.0"]
    # 18 links per GPU spread 5/4/4/5 over the four NVSwitch chips, as in the DGX H100 user guide.
    remote = [switches[0]] * 5 + [switches[1]] * 4 + [switches[2]] * 4 + [switches[3]] * 5
    buses = ["1B", "43", "52", "61", "9D", "C3", "D1", "DF"]
    gpus = []
    for i in range(n):
        sw = i // 2  # two GPUs behind each PCIe switch
        rc = ["pci0000:15", "pci0000:48", "pci0000:97", "pci0000:c1"][sw]
        gpus.append(GPU(
            index=i, name="NVIDIA H100 80GB HBM3", uuid=_uuid("h100", i), serial=f"DEMO-H100-{i}",
            pci_bus_id=f"00000000:{buses[i]}:00.0", brand="NVIDIA", architecture="Hopper",
            memory_total_mib=81559, compute_capability="9.0", pcie_gen_cur=5, pcie_gen_max=5,
            pcie_width_cur=16, pcie_width_max=16, pcie_replay_counter=0, utilization_gpu=0,
            numa_node=0 if i < 4 else 1, cpu_affinity="0-55,112-167" if i < 4 else "56-111,168-223",
            virtualization_mode="NONE", mig_mode="Disabled",
            fabric=Fabric(state="COMPLETED", status="Success", clique_id=0,
                          cluster_uuid="00000000-0000-0000-0000-000000000000"),
            nvlinks=_links(18, 6, remote),
            pcie_path=_pcie_path(f"0000:{int(rc[-2:], 16) + 1:02x}:00.0", f"0000:{int(rc[-2:], 16) + 2:02x}:{(i % 2) * 8:02x}.0",
                                 f"0000:{rc[-2:]}:01.0", 5, 16),
            root_complex=rc,
        ))

    def ancestor(a: int, b: int) -> str:
        if a // 2 == b // 2:
            return "SINGLE"
        return "NODE" if (a < 4) == (b < 4) else "SYSTEM"

    host = _host(gpus, {
        "host.os": "Ubuntu 22.04.5 LTS", "host.kernel": "5.15.0-1063-nvidia", "host.driver_version": "580.159.04",
        "host.kernel_cmdline": "BOOT_IMAGE=/boot/vmlinuz-5.15.0-1063-nvidia root=/dev/md0 ro",
        "host.nvidia_peermem": True, "host.nvswitch_pci_count": 4, "host.fabric_manager": "running",
        "host.fabric_manager_version": "580.159.04",
    })
    return Snapshot(
        host=host, source=_demo_source("dgx-h100", "dgx-h100-demo"), driver_version="580.159.04", cuda_driver_version="13.0",
        nvml_version="13.580.159.04", gpus=gpus, pairs=_pairs(n, ancestor, _nvlink_p2p),
        sockets=[CpuSocket(id=0, numa_nodes=[0], cpus="0-55,112-167"), CpuSocket(id=1, numa_nodes=[1], cpus="56-111,168-223")],
        notes=["Simulated DGX H100: 8 H100 SXM, 4 NVSwitch chips, 2 CPU sockets, 4 PCIe Gen5 switches."],
    )


def pcie_4gpu_iommu() -> Snapshot:
    n = 4
    gpus = []
    for i in range(n):
        sock = i // 2
        rc = ["pci0000:3a", "pci0000:b2"][sock]
        base = int(rc[-2:], 16)
        gpus.append(GPU(
            index=i, name="NVIDIA L40S", uuid=_uuid("l40s", i), serial=f"DEMO-L40S-{i}",
            pci_bus_id=f"00000000:{base + 3 + (i % 2):02X}:00.0", brand="NVIDIA", architecture="Ada",
            memory_total_mib=46068, compute_capability="8.9", pcie_gen_cur=4, pcie_gen_max=4,
            pcie_width_cur=16, pcie_width_max=16, pcie_replay_counter=0, utilization_gpu=0,
            numa_node=sock, cpu_affinity="0-31" if sock == 0 else "32-63",
            virtualization_mode="NONE", mig_mode=None, fabric=Fabric(state="NOT_SUPPORTED", na={}),
            nvlinks=[],
            # ACS control 0x1d on the switch's downstream ports: Source Validation, P2P Request and
            # Completion Redirect, Upstream Forwarding: peer traffic is sent up to the root complex.
            pcie_path=_pcie_path(f"0000:{base + 1:02x}:00.0", f"0000:{base + 2:02x}:{(i % 2) * 8:02x}.0",
                                 f"0000:{base:02x}:00.0", 4, 16, acs=0x1D),
            root_complex=rc,
            na={"nvlinks": "Not Supported", "mig_mode": "Not Supported"},
        ))

    def ancestor(a: int, b: int) -> str:
        return "SINGLE" if a // 2 == b // 2 else "SYSTEM"

    def p2p(a: int, b: int) -> dict[str, str]:
        if a // 2 == b // 2:
            return {"read": "OK", "write": "OK", "nvlink": "NOT_SUPPORTED", "atomics": "NOT_SUPPORTED", "pci": "OK"}
        return {"read": "CHIPSET_NOT_SUPPORTED", "write": "CHIPSET_NOT_SUPPORTED", "nvlink": "NOT_SUPPORTED",
                "atomics": "NOT_SUPPORTED", "pci": "CHIPSET_NOT_SUPPORTED"}

    return Snapshot(
        source=_demo_source("pcie-4gpu-iommu", "pcie-4gpu-demo"), driver_version="570.124.06",
        cuda_driver_version="12.8", nvml_version="12.570.124.06", gpus=gpus, pairs=_pairs(n, ancestor, p2p),
        sockets=[CpuSocket(id=0, numa_nodes=[0], cpus="0-31"), CpuSocket(id=1, numa_nodes=[1], cpus="32-63")],
        host=_host(gpus, {
            "host.os": "Ubuntu 22.04.4 LTS", "host.kernel": "6.5.0-41-generic", "host.driver_version": "570.124.06",
            "host.kernel_cmdline": "BOOT_IMAGE=/vmlinuz-6.5.0-41-generic root=/dev/sda1 ro intel_iommu=on",
            "host.kernel_iommu_args": "intel_iommu=on", "host.iommu_units": ["dmar0", "dmar1", "dmar2", "dmar3"],
            "host.iommu_active": True, "host.iommu_passthrough": False,
        }),
        notes=["Simulated: 4 PCIe L40S on two sockets, IOMMU on, ACS redirect on the switch ports; "
               "P2P refused across the sockets (chipset not supported)."],
    )


def rtx4090_2gpu() -> Snapshot:
    n = 2
    gpus = []
    for i in range(n):
        gpus.append(GPU(
            index=i, name="NVIDIA GeForce RTX 4090", uuid=_uuid("4090", i), serial=None,
            pci_bus_id=f"00000000:{[1, 0x41][i]:02X}:00.0", brand="GEFORCE", architecture="Ada",
            memory_total_mib=24564, compute_capability="8.9", pcie_gen_cur=4, pcie_gen_max=4,
            pcie_width_cur=16, pcie_width_max=16, pcie_replay_counter=0, utilization_gpu=0, numa_node=0,
            cpu_affinity="0-31", virtualization_mode="NONE", mig_mode=None, fabric=Fabric(state="NOT_SUPPORTED"),
            nvlinks=[], pcie_path=_pcie_path(None, None, f"0000:{[0, 0x40][i]:02x}:01.1", 4, 16),
            root_complex=["pci0000:00", "pci0000:40"][i],
            na={"serial": "Not Supported", "nvlinks": "Not Supported", "mig_mode": "Not Supported"},
        ))
    gns = {"read": "GPU_NOT_SUPPORTED", "write": "GPU_NOT_SUPPORTED", "nvlink": "NOT_SUPPORTED",
           "atomics": "NOT_SUPPORTED", "pci": "GPU_NOT_SUPPORTED"}
    host = _host(gpus, {
        "host.os": "Ubuntu 24.04.1 LTS", "host.kernel": "6.8.0-45-generic", "host.driver_version": "570.133.07",
        "host.kernel_cmdline": "BOOT_IMAGE=/boot/vmlinuz-6.8.0-45-generic root=UUID=0 ro quiet splash",
        "host.shm_mb": 64000, "host.cupy": "cupy-cuda12x 13.3.0", "host.cupy_cuda_runtime": "12.x",
    })
    return Snapshot(
        host=host, source=_demo_source("rtx4090-2gpu", "workstation-demo"), driver_version="570.133.07",
        cuda_driver_version="12.8", nvml_version="12.570.133.07", gpus=gpus,
        pairs=_pairs(n, lambda a, b: "NODE", lambda a, b: dict(gns)),
        sockets=[CpuSocket(id=0, numa_nodes=[0], cpus="0-31")],
        notes=["Simulated: two GeForce RTX 4090 on separate root complexes of one CPU; the stock driver "
               "does not offer P2P on GeForce cards (GPU not supported)."],
    )


def nvlink_degraded() -> Snapshot:
    n = 8
    switches = [f"00000000:{b:02X}:00.0" for b in (0xC4, 0xC5, 0xC6, 0xC7, 0xC8, 0xC9)]
    remote = [s for s in switches for _ in range(2)]  # 12 links: 2 to each of 6 NVSwitches (DGX A100)
    gpus = []
    for i in range(n):
        sw = i // 2
        rc = ["pci0000:00", "pci0000:20", "pci0000:80", "pci0000:a0"][sw]
        base = int(rc[-2:], 16)
        down: tuple[int, ...] = (4, 5) if i == 3 else ()
        errors = {6: {"crc_flit": 1287, "replay": 41}, 7: {"crc_flit": 12}} if i == 3 else None
        gpus.append(GPU(
            index=i, name="NVIDIA A100-SXM4-80GB", uuid=_uuid("a100", i), serial=f"DEMO-A100-{i}",
            pci_bus_id=f"00000000:{base + 7 + (i % 2) * 4:02X}:00.0", brand="NVIDIA", architecture="Ampere",
            memory_total_mib=81920, compute_capability="8.0", pcie_gen_cur=4, pcie_gen_max=4,
            pcie_width_cur=8 if i == 5 else 16, pcie_width_max=16, pcie_replay_counter=3 if i == 5 else 0,
            utilization_gpu=97 if i == 5 else 35, numa_node=0 if i < 4 else 1,
            cpu_affinity="0-63" if i < 4 else "64-127", virtualization_mode="NONE", mig_mode="Disabled",
            fabric=Fabric(state="COMPLETED", status="Success", clique_id=0),
            nvlinks=_links(12, 4, remote, down=down, errors=errors),
            pcie_path=_pcie_path(f"0000:{base + 1:02x}:00.0", f"0000:{base + 2:02x}:{(i % 2) * 8:02x}.0",
                                 f"0000:{base:02x}:01.0", 4, 16),
            root_complex=rc,
        ))

    def ancestor(a: int, b: int) -> str:
        if a // 2 == b // 2:
            return "MULTIPLE"
        return "NODE" if (a < 4) == (b < 4) else "SYSTEM"

    xid_text = "NVLink: fatal error detected on link {}(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)"
    xids = [{"pci": "0000:2b:00", "xid": 74, "text": xid_text.format(link)} for link in (4, 5)]
    host = _host(gpus, {
        "host.os": "Ubuntu 20.04.6 LTS", "host.kernel": "5.4.0-200-generic", "host.driver_version": "550.144.03",
        "host.kernel_cmdline": "BOOT_IMAGE=/boot/vmlinuz-5.4.0-200-generic root=/dev/md0 ro",
        "host.nvidia_peermem": True, "host.nvswitch_pci_count": 6, "host.fabric_manager": "running",
        "host.fabric_manager_version": "550.144.03", "host.xid": xids, "host.xid_codes": "74", "host.xid_latest": 74,
    })
    return Snapshot(
        host=host, source=_demo_source("nvlink-degraded", "dgx-a100-demo"), driver_version="550.144.03",
        cuda_driver_version="12.4", nvml_version="12.550.144.03", gpus=gpus, pairs=_pairs(n, ancestor, _nvlink_p2p),
        sockets=[CpuSocket(id=0, numa_nodes=[0], cpus="0-63"), CpuSocket(id=1, numa_nodes=[1], cpus="64-127")],
        notes=["Simulated DGX A100 with faults: GPU3 has NVLinks 4 and 5 down and CRC errors on links 6-7; "
               "GPU5 trained at PCIe Gen4 x8 of x16 while 97% busy."],
    )


def nvl72() -> Snapshot:
    n = 72
    switches = [f"00000000:{0x80 + s:02X}:00.0" for s in range(18)]
    gpus = []
    for i in range(n):
        tray = i // 4
        numa = (i // 2) % 2
        rc = f"pci{tray:04x}:00"
        gpus.append(GPU(
            index=i, name="NVIDIA GB200", uuid=_uuid("gb200", i), serial=f"DEMO-GB200-{i}",
            pci_bus_id=f"{tray:08X}:{1 + (i % 4):02X}:00.0", brand="NVIDIA", architecture="Blackwell",
            memory_total_mib=189471, compute_capability="10.0", pcie_gen_cur=5, pcie_gen_max=5,
            pcie_width_cur=16, pcie_width_max=16, pcie_replay_counter=0, utilization_gpu=0,
            numa_node=numa, cpu_affinity="0-71" if numa == 0 else "72-143",
            virtualization_mode="NONE", mig_mode="Disabled",
            fabric=Fabric(state="COMPLETED", status="Success", clique_id=1,
                          cluster_uuid="de000000-0000-4000-8000-000000000072"),
            nvlinks=_links(18, 7, switches),  # one link to each of the 18 NVSwitch chips
            pcie_path=[PcieDevice(bdf=f"{tray:04x}:00:0{(i % 4) + 1}.0", role="root_port", link_gen_cur=5,
                                  link_gen_max=5, link_width_cur=16, link_width_max=16)],
            root_complex=rc,
        ))

    def ancestor(a: int, b: int) -> str:
        if a // 4 == b // 4:
            return "HOSTBRIDGE" if (a // 2) % 2 == (b // 2) % 2 else "SYSTEM"
        return "NODE" if (a // 2) % 2 == (b // 2) % 2 else "SYSTEM"

    host = _host(gpus, {
        "host.os": "Ubuntu 24.04.2 LTS", "host.kernel": "6.8.0-1021-nvidia-64k", "host.driver_version": "580.159.04",
        "host.kernel_cmdline": "BOOT_IMAGE=/boot/vmlinuz-6.8.0-1021-nvidia-64k root=/dev/nvme0n1p2 ro",
        "host.nvidia_peermem": True, "host.fabric_manager": "running", "host.fabric_manager_version": "580.159.04",
    })
    return Snapshot(
        host=host, source=_demo_source("nvl72", "nvl72-demo"), driver_version="580.159.04", cuda_driver_version="13.0",
        nvml_version="13.580.159.04", gpus=gpus, pairs=_pairs(n, ancestor, _nvlink_p2p),
        sockets=[CpuSocket(id=0, numa_nodes=[0], cpus="0-71"), CpuSocket(id=1, numa_nodes=[1], cpus="72-143")],
        notes=["Simulated, for scale: 72 GB200 GPUs and 18 NVSwitch chips of an NVL72 rack drawn as one host "
               "(a real NVL72 tray's OS sees 4 GPUs)."],
    )


BUILDERS: dict[str, Callable[[], Snapshot]] = {
    "dgx-h100": dgx_h100,
    "pcie-4gpu-iommu": pcie_4gpu_iommu,
    "rtx4090-2gpu": rtx4090_2gpu,
    "nvlink-degraded": nvlink_degraded,
    "nvl72": nvl72,
}


def serialise(snap: Snapshot) -> str:
    return json.dumps(snap.to_dict(), separators=(",", ":"), sort_keys=False) + "\n"


def main(argv: list[str]) -> int:
    capture = argv[0] if argv else os.path.join(HERE, "..", "..", "..", "shared", "captures", "h200x2-nvswitch-vm")
    built = {name: fn() for name, fn in BUILDERS.items()}
    if os.path.isdir(capture):
        built["h200x2-vm"] = h200x2_vm(capture)
    else:
        print(f"capture folder {capture} not found: h200x2-vm left as it is", file=sys.stderr)
    for name, snap in built.items():
        with open(os.path.join(HERE, f"{name}.json"), "w", encoding="utf-8") as f:
            f.write(serialise(snap))
        print(f"wrote {name}.json ({len(snap.gpus)} GPUs)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
