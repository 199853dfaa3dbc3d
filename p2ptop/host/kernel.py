"""OS, kernel and the kernel command line's IOMMU and ACS switches."""

from __future__ import annotations

import re

from .facts import Host

TITLE = "Kernel"
#: The facts this module adds, in the order doctor shows them.
FACTS = ("host.os", "host.kernel", "host.kernel_cmdline", "host.kernel_iommu_args")

#: Kernel command-line parameters that decide how the IOMMU and ACS treat peer traffic.
IOMMU_ARGS = ("iommu", "intel_iommu", "amd_iommu", "iommu.passthrough", "iommu.strict", "pcie_acs_override", "pci")


def iommu_args(cmdline: str) -> list[str]:
    """The IOMMU/ACS-related words of a command line, e.g. ['intel_iommu=on', 'iommu=pt', 'pci=noacs']."""
    out = []
    for word in cmdline.split():
        key, _, value = word.partition("=")
        if key not in IOMMU_ARGS:
            continue
        if key == "pci" and not re.search(r"noacs|acs", value):
            continue  # pci= options that have nothing to do with ACS
        out.append(word)
    return out


def collect(h: Host) -> None:
    text, why = h.read("etc/os-release")
    pretty = None
    if text is not None:
        m = re.search(r'^PRETTY_NAME="?([^"\n]*)"?', text, re.M)
        pretty = m.group(1) if m else None
        why = why or "no PRETTY_NAME in /etc/os-release"
    h.add("host.os", pretty, "read /etc/os-release (PRETTY_NAME)", why)
    text, why = h.read("proc/sys/kernel/osrelease")
    h.add("host.kernel", text.strip() if text is not None else None, "read /proc/sys/kernel/osrelease", why)
    text, why = h.read("proc/cmdline")
    cmdline = text.strip() if text is not None else None
    h.add("host.kernel_cmdline", cmdline, "read /proc/cmdline", why)
    h.add("host.kernel_iommu_args", " ".join(iommu_args(cmdline)) if cmdline is not None else None,
          "IOMMU/ACS words of /proc/cmdline (iommu, intel_iommu, amd_iommu, iommu.passthrough, pci=noacs, ...)", why)
