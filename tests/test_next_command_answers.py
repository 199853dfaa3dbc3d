"""Every next command p2ptop asks for (fact_roles.NEXT_COMMAND) has an answer p2ptop can read: the output of that
command, in its tool's documented format, pasted back gives the fact the command was asked for. Outputs below are
written in each tool's format (pciutils' ls-ecaps.c ACSCtl line, systemd's status, nvidia-smi's -q / nvlink / -L
layouts, the kernel's NVRM Xid line, coreutils' df), not copied from a thread."""

import pytest

from p2ptop.evidence import read_text
from p2ptop.knowledge.fact_roles import NEXT_COMMAND

ANSWERS = {
 "host.acs_redirect": "\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-\n\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-",
 "host.iommu_active": "BOOT_IMAGE=/vmlinuz-5.15.0-91-generic root=/dev/mapper/vg-root ro intel_iommu=on\n87",
 "host.iommu_passthrough": "BOOT_IMAGE=/vmlinuz-5.15.0-91-generic root=UUID=1234 ro iommu=pt\n[    0.000000] DMAR: IOMMU enabled\n[    0.912345] iommu: Default domain type: Passthrough (set via kernel command line)",
 "host.virtualized": "$ systemd-detect-virt\nkvm",
 "gpu.virtualization": "    GPU Virtualization Mode\n        Virtualization Mode               : Pass-Through\n        Host VGPU Mode                    : N/A",
 "host.fabric_manager": "● nvidia-fabricmanager.service - NVIDIA fabric manager service\n     Loaded: loaded (/lib/systemd/system/nvidia-fabricmanager.service; enabled; vendor preset: enabled)\n     Active: failed (Result: exit-code) since Tue 2024-01-02 10:00:00 UTC; 5min ago",
 "host.fabric_manager_version": "Fabric Manager version is : 535.129.03",
 "gpu.nvlink_down": "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-1d2f3a4b-0000-1111-2222-333344445555)\n\t Link 0: 25 GB/s\n\t Link 1: <inactive>",
 "gpu.nvlink_replay_recovery": "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-1d2f3a4b-0000-1111-2222-333344445555)\n\t Link 0: Replay Errors: 12\n\t Link 0: Recovery Errors: 3\n\t Link 0: CRC Errors: 0",
 "host.xid_codes": "[ 1234.567890] NVRM: Xid (PCI:0000:3b:00): 79, pid=0, GPU has fallen off the bus.",
 "gpu.pcie_degraded_under_load": "    GPU Link Info\n        PCIe Generation\n            Max                       : 4\n            Current                   : 4\n        Link Width\n            Max                       : 16x\n            Current                   : 8x",
 "host.shm_mb": "Filesystem      Size  Used Avail Use% Mounted on\nshm              64M     0   64M   0% /dev/shm",
 "host.container": "$ cat /proc/1/cgroup\n0::/docker/3f4e5d6c7b8a9f0e1d2c3b4a5f6e7d8c9b0a1f2e3d4c5b6a7f8e9d0c1b2a3f4e\n$ ls /.dockerenv\n/.dockerenv",
 "host.driver_version": "Tue Jan  2 10:00:00 2024\n+---------------------------------------------------------------------------------------+\n| NVIDIA-SMI 535.129.03             Driver Version: 535.129.03   CUDA Version: 12.2     |\n|-----------------------------------------+----------------------+----------------------+",
 "gpu.mig": "GPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-1d2f3a4b-0000-1111-2222-333344445555)\n  MIG 3g.20gb     Device  0: (UUID: MIG-2d2f3a4b-0000-1111-2222-333344445555)",
 "gpu.bar1_mb": "    BAR1 Memory Usage\n        Total                             : 256 MiB\n        Used                              : 2 MiB\n        Free                              : 254 MiB",
 "nccl.version": "NCCL version 2.18.1+cuda12.1",
 "env.NCCL_P2P_LEVEL": "node1:1234:1234 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to LOC",
 "env.CUDA_VISIBLE_DEVICES": "CUDA_VISIBLE_DEVICES=0,1\nGPU 0: NVIDIA A100-SXM4-40GB (UUID: GPU-1d2f3a4b-0000-1111-2222-333344445555)",
 "gpu.consumer": "GPU 0: NVIDIA GeForce RTX 4090 (UUID: GPU-1d2f3a4b-0000-1111-2222-333344445555)\nGPU 1: NVIDIA GeForce RTX 4090 (UUID: GPU-2d2f3a4b-0000-1111-2222-333344445555)",
 "host.nvswitch_present": "    Fabric\n        State                             : Completed\n        Status                            : Success",
}



@pytest.mark.parametrize("fact", sorted(ANSWERS))
def test_the_answer_to_a_next_command_gives_its_fact(fact):
    assert fact in NEXT_COMMAND  # a command p2ptop asks for
    facts = {k: v for subj in read_text(ANSWERS[fact]).facts_by_subject().values() for k, v in subj.items()}
    assert fact in facts, (NEXT_COMMAND[fact], facts)


def test_df_units_and_what_is_not_df():
    def shm(text):
        return read_text(text).facts_by_subject().get("host", {}).get("host.shm_mb")

    assert shm("Filesystem      Size  Used Avail Use% Mounted on\ntmpfs            32G   12K   32G   1% /dev/shm") == 32768
    assert shm("Filesystem     1K-blocks  Used Available Use% Mounted on\nshm                65536     0     65536   0% /dev/shm") == 64
    assert shm("$ df -H /dev/shm\nFilesystem      Size  Used Avail Use% Mounted on\nshm              68M     0   68M   0% /dev/shm") == 65
    assert shm("shm 65536 0 65536 0% /dev/shm") is None  # a bare number, no header: unit unknown
    assert shm("the /dev/shm is 100% full") is None
