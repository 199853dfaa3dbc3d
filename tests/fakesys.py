"""Builds fake sysfs trees for tests: PCI devices with their links, NUMA nodes and CPUs."""

import os


def pci_device(root, chain, *, cls="0x060400", speed="16.0 GT/s PCIe", width=16, max_speed=None, max_width=None,
               numa=-1, vendor="0x10b5", device="0x8796", extra=None):
    """Create /sys/devices/<chain...> and the /sys/bus/pci/devices link for its last element."""
    path = os.path.join(root, "sys/devices", *chain)
    os.makedirs(path, exist_ok=True)
    files = {
        "class": cls,
        "current_link_speed": speed,
        "max_link_speed": max_speed or speed,
        "current_link_width": str(width),
        "max_link_width": str(max_width or width),
        "numa_node": str(numa),
        "vendor": vendor,
        "device": device,
    }
    files.update(extra or {})
    for name, value in files.items():
        with open(os.path.join(path, name), "w") as f:
            f.write(value + "\n")
    bus = os.path.join(root, "sys/bus/pci/devices")
    os.makedirs(bus, exist_ok=True)
    link = os.path.join(bus, chain[-1])
    if not os.path.lexists(link):
        os.symlink(path, link)
    return path


def numa_nodes(root, nodes):
    """nodes: {node: (cpulist, package)}"""
    for node, (cpulist, pkg) in nodes.items():
        d = os.path.join(root, f"sys/devices/system/node/node{node}")
        os.makedirs(d, exist_ok=True)
        open(os.path.join(d, "cpulist"), "w").write(cpulist + "\n")
        first = int(cpulist.split("-")[0].split(",")[0])
        c = os.path.join(root, f"sys/devices/system/cpu/cpu{first}/topology")
        os.makedirs(c, exist_ok=True)
        open(os.path.join(c, "physical_package_id"), "w").write(f"{pkg}\n")
