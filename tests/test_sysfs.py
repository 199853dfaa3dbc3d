from p2ptop.sources import sysfs

from .fakesys import numa_nodes, pci_device


def _tree(root):
    rc = "pci0000:3a"
    pci_device(root, [rc, "0000:3a:00.0"], numa=0)  # root port
    pci_device(root, [rc, "0000:3a:00.0", "0000:3b:00.0"], speed="32.0 GT/s PCIe")  # switch upstream
    pci_device(root, [rc, "0000:3a:00.0", "0000:3b:00.0", "0000:3c:08.0"], speed="32.0 GT/s PCIe")  # downstream
    pci_device(root, [rc, "0000:3a:00.0", "0000:3b:00.0", "0000:3c:08.0", "0000:3d:00.0"], cls="0x030200",
               speed="2.5 GT/s PCIe", max_speed="32.0 GT/s PCIe", width=8, max_width=16, numa=0, vendor="0x10de")
    numa_nodes(root, {0: ("0-31", 0), 1: ("32-63", 1)})


def test_pcie_path_above_a_gpu(tmp_path):
    _tree(str(tmp_path))
    rc, path, numa, na = sysfs.read_pcie_path("00000000:3D:00.0", str(tmp_path))
    assert rc == "pci0000:3a"
    assert [d.role for d in path] == ["switch_downstream", "switch_upstream", "root_port"]
    assert [d.bdf for d in path] == ["0000:3c:08.0", "0000:3b:00.0", "0000:3a:00.0"]
    assert path[0].link_gen_cur == 5 and path[0].link_width_cur == 16
    assert numa == 0 and na == {}


def test_missing_gpu_is_a_reason_not_an_error(tmp_path):
    rc, path, numa, na = sysfs.read_pcie_path("00000000:99:00.0", str(tmp_path))
    assert rc is None and path == [] and "no sysfs entry" in na["pcie_path"]


def test_sockets(tmp_path):
    _tree(str(tmp_path))
    sockets, why = sysfs.read_sockets(str(tmp_path))
    assert why is None
    assert [(s.id, s.numa_nodes, s.cpus) for s in sockets] == [(0, [0], "0-31"), (1, [1], "32-63")]


def test_link_gen():
    assert sysfs.link_gen("16.0 GT/s PCIe") == 4
    assert sysfs.link_gen("8.0 GT/s PCIe") == 3
    assert sysfs.link_gen("Unknown") is None
