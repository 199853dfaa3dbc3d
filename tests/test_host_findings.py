"""Findings from host facts and GPUs: diagnose.findings_for with snapshot.host from fake hosts."""

import pytest

from p2ptop.demos import DEMOS, load_demo
from p2ptop.diagnose import findings_for, host_facts
from p2ptop.findings import FACT_KEYS
from p2ptop.host import collect
from p2ptop.model import GPU, NvLink, Pair, Snapshot

from .fixtures.hosts.fakehost import Canned, fixture, make_host, no_packages, ok

PCIE_P2P = {"read": "OK", "write": "OK", "nvlink": "NOT_SUPPORTED", "atomics": "NOT_SUPPORTED", "pci": "OK"}


def snapshot(host=None, *, nvlink=False, brand="NVIDIA", name="NVIDIA H100 PCIe", virt="NONE", gpu_kw=None):
    gpus = []
    for i, bus in enumerate(("00000000:03:00.0", "00000000:83:00.0")):
        links = [NvLink(link=0, state="active", remote_pci_bus_id="00000000:05:00.0", remote_type="NVSWITCH")] if nvlink else []
        kw = dict(pcie_gen_cur=5, pcie_gen_max=5, pcie_width_cur=16, pcie_width_max=16, utilization_gpu=0)
        kw.update((gpu_kw or {}).get(i, {}))
        gpus.append(GPU(index=i, name=name, brand=brand, pci_bus_id=bus, virtualization_mode=virt, nvlinks=links, **kw))
    pairs = [Pair(a=a, b=b, ancestor="SYSTEM", p2p=dict(PCIE_P2P)) for a in (0, 1) for b in (0, 1) if a != b]
    return Snapshot(gpus=gpus, pairs=pairs, driver_version="580.159.04", host=host or {})


def host(tmp_path, *, env=None, run=None, is_root=True, **tree):
    return collect(root=make_host(tmp_path, **tree), env=env or {}, run=run or Canned(), is_root=is_root,
                   packages=no_packages, gpu_bus_ids=["00000000:03:00.0"])


def by_id(findings):
    out = {}
    for f in findings:
        out.setdefault(f.id, f)
    return out


def test_iommu_on_warns_for_pcie_pairs_and_only_informs_over_nvlink(tmp_path):
    h = host(tmp_path, cmdline="ro intel_iommu=on", iommu_type="DMA-FQ")
    f = by_id(findings_for(snapshot(h)))["iommu.on"]
    assert f.severity == "warning" and "intel_iommu=on" in f.summary and f.facts["host.iommu_active"] is True
    assert by_id(findings_for(snapshot(h, nvlink=True)))["iommu.on"].severity == "info"


def test_iommu_off_or_passthrough_is_no_finding(tmp_path):
    assert "iommu.on" not in by_id(findings_for(snapshot(host(tmp_path))))
    h = host(tmp_path / "pt", cmdline="ro iommu=pt", iommu_type="identity")
    assert "iommu.on" not in by_id(findings_for(snapshot(h)))


def test_acs_redirect_above_a_gpu_is_a_problem_for_pcie_p2p(tmp_path):
    h = host(tmp_path, acs=0x1D)
    f = by_id(findings_for(snapshot(h)))["acs.redirect"]
    assert f.severity == "problem" and "GPU0" in f.summary and "0000:02:08.0" in f.summary
    assert any("ReqRedir+" in e for e in f.evidence)
    assert f.facts["host.acs_redirect"] is True and f.facts["host.acs_redirect_bridges"] == "0000:02:08.0"
    assert by_id(findings_for(snapshot(h, nvlink=True)))["acs.redirect"].severity == "info"


def test_acs_unreadable_without_root_is_said(tmp_path):
    run = Canned({("lspci", "-vvv", "-D"): ok(fixture("commands/lspci-denied.txt"))})
    h = host(tmp_path, acs=0x1D, config_size=64, run=run, is_root=False)
    found = by_id(findings_for(snapshot(h)))
    assert "acs.redirect" not in found and found["acs.unreadable"].severity == "info"


def test_vm_is_information(tmp_path):
    f = by_id(findings_for(snapshot(host(tmp_path, cpuinfo="vm"), virt="PASSTHROUGH")))["host.virtualized"]
    assert f.severity == "info" and "PASSTHROUGH" in f.summary and f.facts["host.virtualized"] is True
    # NVML's virtualization mode alone is enough
    assert host_facts(snapshot({}, virt="PASSTHROUGH"))["host.virtualized"] is True


def test_container_with_small_dev_shm_warns(tmp_path):
    f = by_id(findings_for(snapshot(host(tmp_path, docker=True, mounts="docker"))))["host.shm_small"]
    assert f.severity == "warning" and "64 MiB" in f.summary and "docker" in f.summary
    assert "host.shm_small" not in by_id(findings_for(snapshot(host(tmp_path / "big"))))


def test_nccl_p2p_disable_is_a_problem(tmp_path):
    found = by_id(findings_for(snapshot(host(tmp_path, env={"NCCL_P2P_DISABLE": "1", "CUDA_VISIBLE_DEVICES": "1,0"}))))
    assert found["env.p2p_disabled"].severity == "problem" and found["env.p2p_disabled"].facts["env.NCCL_P2P_DISABLE"] == "1"
    assert found["env.set"].severity == "info" and "CUDA_VISIBLE_DEVICES=1,0" in found["env.set"].summary
    found = by_id(findings_for(snapshot(host(tmp_path / "b", env={"NCCL_P2P_DISABLE": "0"}))))
    assert "env.p2p_disabled" not in found


def test_nccl_p2p_level_loc_is_a_problem(tmp_path):
    found = by_id(findings_for(snapshot(host(tmp_path, env={"NCCL_P2P_LEVEL": "LOC"}))))
    assert found["env.p2p_level_off"].severity == "problem" and "env.set" not in found


def test_consumer_card(tmp_path):
    snap = snapshot(host(tmp_path, gpu_class="0x030000"), brand="GEFORCE", name="NVIDIA GeForce RTX 4090")
    f = by_id(findings_for(snap))["gpu.consumer"]
    assert f.severity == "info" and f.subject == "gpu:0"
    assert f.facts["gpu.product_class"] == "consumer" and f.facts["gpu.consumer"] is True


@pytest.mark.parametrize("brand, name, cls", [("NVIDIA", "NVIDIA H100 PCIe", "data-centre"), ("TESLA", "Tesla V100-SXM2-32GB", "data-centre"),
                                              ("QUADRO_RTX", "Quadro RTX 8000", "workstation"), ("TITAN", "NVIDIA TITAN RTX", "consumer")])
def test_product_class(brand, name, cls):
    snap = snapshot(brand=brand, name=name)
    facts = next(f for f in findings_for(snap) if f.subject == "pair:0-1").facts
    assert facts["gpu.product_class"] == cls
    assert ("gpu.consumer" in by_id(findings_for(snap))) == (cls == "consumer")


def test_pcie_x8_of_x16_under_load_and_idle_gen1():
    snap = snapshot(gpu_kw={0: dict(pcie_width_cur=8, utilization_gpu=97), 1: dict(pcie_gen_cur=1, utilization_gpu=0)})
    found = {(f.id, f.subject): f for f in findings_for(snap)}
    bad = found[("pcie.degraded", "gpu:0")]
    assert bad.severity == "problem" and "x8 of Gen5 x16" in bad.summary and bad.facts["gpu.pcie_degraded_under_load"] is True
    idle = found[("pcie.idle_downclock", "gpu:1")]
    assert idle.severity == "info" and idle.facts["gpu.pcie_idle_downclock"] is True and "Gen1" in idle.summary
    assert ("pcie.degraded", "gpu:1") not in found


def test_pcie_gen_low_under_load_is_a_problem_and_unknown_load_is_said():
    snap = snapshot(gpu_kw={0: dict(pcie_gen_cur=3, utilization_gpu=80), 1: dict(pcie_gen_cur=1, utilization_gpu=None)})
    found = {(f.id, f.subject): f for f in findings_for(snap)}
    assert found[("pcie.degraded", "gpu:0")].severity == "problem"
    assert found[("pcie.low_load_unknown", "gpu:1")].severity == "info"


def test_fabric_manager_down_on_an_nvswitch_host(tmp_path):
    run = Canned({("systemctl", "is-active", "nvidia-fabricmanager"): ok("failed\n", rc=3),
                  ("nv-fabricmanager", "--version"): ok("Fabric Manager version is : 580.159.04\n")})
    h = host(tmp_path, run=run)
    f = by_id(findings_for(snapshot(h, nvlink=True)))["fabric_manager.not_running"]
    assert f.severity == "problem" and "failed" in f.summary
    assert "fabric_manager.not_running" not in by_id(findings_for(snapshot(h)))  # no NVSwitch
    h = host(tmp_path / "vm", run=run, cpuinfo="vm")
    assert "fabric_manager.not_running" not in by_id(findings_for(snapshot(h, nvlink=True)))  # FM runs outside a VM


def test_xids(tmp_path):
    h = host(tmp_path, run=Canned({("dmesg",): ok(fixture("commands/dmesg-xid.txt"))}))
    f = by_id(findings_for(snapshot(h)))["xid.recent"]
    assert f.severity == "problem" and "79" in f.summary and any("fallen off the bus" in e for e in f.evidence)
    h = host(tmp_path / "b", run=Canned({("dmesg",): ok(fixture("commands/dmesg-xid.txt").split("\n[ 9342")[0])}))
    assert by_id(findings_for(snapshot(h)))["xid.recent"].severity == "warning"  # Xid 13 only: an application error


def test_registry_keys(tmp_path):
    root = make_host(tmp_path)
    params = fixture("files/nvidia-params.txt").replace('RegistryDwords: ""', 'RegistryDwords: "RMForceP2PType=1"')
    (tmp_path / "proc/driver/nvidia/params").write_text(params)
    h = collect(root=root, env={}, run=Canned(), is_root=True, packages=no_packages)
    f = by_id(findings_for(snapshot(h)))["driver.registry_keys"]
    assert f.severity == "warning" and "RMForceP2PType=1" in f.summary


def test_host_finding_facts_use_the_vocabulary(tmp_path):
    h = host(tmp_path, acs=0x1D, iommu_type="DMA", docker=True, mounts="docker", env={"NCCL_P2P_DISABLE": "1"},
             run=Canned({("dmesg",): ok(fixture("commands/dmesg-xid.txt"))}))
    for f in findings_for(snapshot(h)):
        for k, v in f.facts.items():
            assert k in FACT_KEYS or k.startswith("env."), (f.id, k)
            assert isinstance(v, (str, int, float, bool)), (f.id, k, v)
    facts = by_id(findings_for(snapshot(h)))["host.facts"].facts
    assert facts["host.os"] == "Ubuntu 22.04.4 LTS" and facts["host.driver_major"] == 580 and facts["host.gpu_count"] == 2


def test_demo_host_facts():
    for name in DEMOS:
        snap = load_demo(name)
        assert all(f["how"].startswith("simulated") for n, f in snap.host["facts"].items() if n != "host.acs_redirect"), name
    assert not any(f.is_problem for f in findings_for(load_demo("h200x2-vm")))
    found = by_id(findings_for(load_demo("pcie-4gpu-iommu")))
    assert found["acs.redirect"].severity == "problem" and found["iommu.on"].severity == "warning"
    assert "gpu.consumer" in by_id(findings_for(load_demo("rtx4090-2gpu")))
    assert by_id(findings_for(load_demo("nvlink-degraded")))["xid.recent"].severity == "problem"


def test_nvswitch_seen_in_pci_counts_as_present(tmp_path):
    from tests.fakesys import pci_device

    root = make_host(tmp_path)
    pci_device(root, ["pci0000:00", "0000:00:05.0"], cls="0x068000", vendor="0x10de", device="0x22a3")
    run = Canned({("systemctl", "is-active", "nvidia-fabricmanager"): ok("inactive\n", rc=3),
                  ("nv-fabricmanager", "--version"): ok("Fabric Manager version is : 580.159.04\n")})
    h = collect(root=root, env={}, run=run, is_root=True, packages=no_packages)
    assert h["facts"]["host.nvswitch_pci_count"]["value"] == 1
    snap = snapshot(h)  # no NVLink seen by NVML (e.g. links not trained), but the switches are on the bus
    assert host_facts(snap)["host.nvswitch_present"] is True
    assert by_id(findings_for(snap))["fabric_manager.not_running"].severity == "problem"
