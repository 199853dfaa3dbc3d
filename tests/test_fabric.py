import pytest

from p2ptop.demos import load_demo
from p2ptop.fabric import NVLINK_GBPS_PER_LINK, PCIE_GBPS_PER_LANE, Fabric, pcie_gbps


def test_graph_has_every_kind_of_node():
    f = Fabric(load_demo("dgx-h100"))
    kinds = {d["kind"] for _, d in f.graph.nodes(data=True)}
    assert kinds == {"gpu", "nvswitch", "pcie_switch", "host_bridge", "cpu"}
    assert len(f.nodes_of("gpu")) == 8 and len(f.nodes_of("nvswitch")) == 4
    assert len(f.nodes_of("pcie_switch")) == 4 and len(f.nodes_of("cpu")) == 2


def test_nvl72_scale():
    f = Fabric(load_demo("nvl72"))
    assert len(f.nodes_of("gpu")) == 72 and len(f.nodes_of("nvswitch")) == 18
    assert f.path_class(0, 71) == "NV18"
    assert f.expected(0, 71).gbps == 18 * 50.0


def test_expected_bandwidth_nvlink_and_pcie():
    h200 = Fabric(load_demo("h200x2-vm"))
    e = h200.expected(0, 1)
    assert e.kind == "nvlink" and e.gbps == 18 * NVLINK_GBPS_PER_LINK[6] == 450.0
    assert "NVLink 4.0" in e.basis
    pcie = Fabric(load_demo("pcie-4gpu-iommu"))
    e = pcie.expected(0, 1)
    assert e.kind == "pcie" and e.gbps == pcie_gbps(4, 16) == pytest.approx(31.5)
    assert e.basis == "PCIe Gen4 x16"


def test_degraded_links_lower_the_trained_figure():
    f = Fabric(load_demo("nvlink-degraded"))
    e = f.expected(0, 3)
    assert e.gbps == 300.0 and e.trained_gbps == 250.0
    bundles = sorted(f.link_label("gpu3", v) for v in f.graph["gpu3"] if v.startswith("nvswitch"))
    assert bundles.count("NV2") == 5 and "NV0/2" in bundles  # links 4 and 5 go to the third switch
    labels = [f.link_label("gpu5", v) for v in f.graph["gpu5"] if f.graph.edges["gpu5", v]["kind"] == "pcie"]
    assert labels == ["PCIe Gen4 x8/16"]


def test_pcie_table():
    assert PCIE_GBPS_PER_LANE[5] * 16 == pytest.approx(63.0, rel=0.01)
    assert pcie_gbps(None, 16) is None and pcie_gbps(9, 16) is None


def test_unknown_hierarchy_falls_back_to_nvml():
    snap = load_demo("pcie-4gpu-iommu")
    for g in snap.gpus:
        g.pcie_path, g.root_complex = [], None
    f = Fabric(snap)
    assert f.path_class(0, 1) == "PIX"  # NVML's ancestor
    assert f.graph_path_class(0, 1) is None
    assert f.expected(0, 2).gbps is not None or f.expected(0, 2).reason
