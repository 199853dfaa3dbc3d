"""Hypervisor, container, and the size of /dev/shm (NCCL's shared-memory transport lives there)."""

from __future__ import annotations

import os
import re
from typing import Optional

from .facts import Host

TITLE = "Virtualization and containers"
#: The facts this module adds, in the order doctor shows them.
FACTS = ("host.hypervisor_flag", "host.hypervisor", "host.virtualized", "host.container", "host.shm_mb")

#: DMI sys_vendor / product_name words -> hypervisor name.
DMI_HYPERVISORS = (
    ("qemu", "kvm"), ("kvm", "kvm"), ("amazon ec2", "amazon"), ("google compute engine", "google"),
    ("vmware", "vmware"), ("virtualbox", "oracle"), ("innotek", "oracle"), ("xen", "xen"),
    ("microsoft corporation virtual machine", "microsoft"), ("firecracker", "firecracker"),
    ("cloud hypervisor", "cloud-hypervisor"), ("openstack", "kvm"),
)
#: /proc/1/cgroup words -> container runtime.
CGROUP_RUNTIMES = (("kubepods", "kubernetes"), ("docker", "docker"), ("libpod", "podman"), ("containerd", "containerd"), ("lxc", "lxc"))
_SIZE = re.compile(r"size=(\d+)([kmgKMG]?)")


def _hypervisor(h: Host) -> tuple[Optional[str], str]:
    res = h.command(["systemd-detect-virt", "--vm"])
    name = res.out.strip()
    if res.rc == 0 and name and name != "none":
        return name, "systemd-detect-virt --vm"
    text, _ = h.read("sys/hypervisor/type")
    if text and text.strip():
        return text.strip(), "read /sys/hypervisor/type"
    dmi = " ".join(filter(None, (h.read(f"sys/class/dmi/id/{f}")[0] for f in ("sys_vendor", "product_name")))).lower()
    for word, hv in DMI_HYPERVISORS:
        if word in dmi:
            return hv, "read /sys/class/dmi/id/sys_vendor and product_name"
    tried = "systemd-detect-virt" + (f" ({res.na})" if res.na else "") + ", /sys/hypervisor/type, DMI"
    return None, tried


def _container(h: Host) -> tuple[Optional[str], str]:
    if h.env.get("KUBERNETES_SERVICE_HOST"):
        return "kubernetes", "KUBERNETES_SERVICE_HOST is set"
    if h.exists(".dockerenv"):
        return "docker", "/.dockerenv exists"
    if h.exists("run/.containerenv"):
        return "podman", "/run/.containerenv exists"
    if h.env.get("container"):
        return h.env["container"], "the container variable is set"
    text, _ = h.read("proc/1/cgroup")
    for word, runtime in CGROUP_RUNTIMES:
        if text and word in text:
            return runtime, f"'{word}' in /proc/1/cgroup"
    return None, "no /.dockerenv, /run/.containerenv, container variables or container cgroups"


def shm_mib(mounts: str) -> Optional[int]:
    """Size of /dev/shm from /proc/mounts text (its size= option), in MiB; None when not given."""
    for line in mounts.splitlines():
        parts = line.split()
        if len(parts) >= 4 and parts[1] == "/dev/shm":
            m = _SIZE.search(parts[3])
            if m:
                scale = {"": 1 / 1024, "k": 1, "m": 1024, "g": 1024 * 1024}[m.group(2).lower()]
                return int(int(m.group(1)) * scale // 1024)
    return None


def collect(h: Host) -> None:
    cpuinfo, why = h.read("proc/cpuinfo")
    flag = None
    if cpuinfo is not None:
        flag = bool(re.search(r"^flags\s*:.*\bhypervisor\b", cpuinfo, re.M))
    h.add("host.hypervisor_flag", flag, "'hypervisor' in the CPU flags of /proc/cpuinfo", why)
    name, how = _hypervisor(h)
    h.add("host.hypervisor", name, how, None if name else ("a VM of unknown kind" if flag else "no hypervisor found"))
    h.add("host.virtualized", bool(flag or name), "CPU hypervisor flag or a hypervisor name (GPU virtualization mode is added from NVML)")
    runtime, how = _container(h)
    h.add("host.container", runtime, how)
    mounts, why = h.read("proc/mounts")
    size = shm_mib(mounts) if mounts is not None else None
    if size is not None:
        h.add("host.shm_mb", size, "size= of /dev/shm in /proc/mounts")
    elif h.root == "/" and os.path.isdir("/dev/shm"):
        st = os.statvfs("/dev/shm")
        h.add("host.shm_mb", st.f_blocks * st.f_frsize // (1 << 20), "statvfs /dev/shm")
    else:
        h.add("host.shm_mb", None, "/proc/mounts", why or "no size for /dev/shm in /proc/mounts")
