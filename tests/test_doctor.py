"""`p2ptop doctor`: exit status 0/1/2, text and --json, what root would add, no knowledge base."""

import json
import re
import sys

from p2ptop import cli
from p2ptop.commands import doctor
from p2ptop.demos import load_demo
from p2ptop.host import collect
from p2ptop.model import save_snapshot

from .fixtures.hosts.fakehost import Canned, fixture, make_host, no_packages, ok


def run(argv, capsys):
    code = cli.main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_healthy_vm_demo_exits_0(capsys):
    code, out, err = run(["doctor", "--demo", "h200x2-vm"], capsys)
    assert code == 0 and err == ""
    assert "DEMO h200x2-vm (simulated)" in out and "simulated data" in out
    assert "Running in a VM (firecracker; GPU virtualization PASSTHROUGH)" in out
    assert "Result: nothing wrong found (exit 0)" in out


def test_iommu_acs_demo_exits_1(capsys):
    code, out, _ = run(["doctor", "--demo", "pcie-4gpu-iommu"], capsys)
    assert code == 1
    assert re.search(r"host.iommu_active +yes", out)
    assert "PROBLEM  pair:0-1   GPU0->GPU1: ACS redirect at 0000:3c:00.0, 0000:3c:08.0" in out and "also pairs 1-0\n" in out
    assert "pcie/acs-redirect-blocks-p2p" in out  # the knowledge base sees the host fact and the pair's P2P status together
    assert "also pairs 0-3, 1-2, 1-3, 2-0, 2-1, 3-0, 3-1" in out  # eight ordered pairs folded into one entry
    assert "Result: a problem was found (exit 1)" in out


def test_json(capsys):
    code, out, _ = run(["doctor", "--demo", "pcie-4gpu-iommu", "--json"], capsys)
    data = json.loads(out)
    assert code == 1 and data["exit_status"] == 1 and data["status"] == "problem"
    assert data["source"]["simulated"] is True and data["gpu_count"] == 4
    assert data["host"]["facts"]["host.iommu_active"]["value"] is True
    ids = {f["id"] for f in data["findings"]}
    assert {"acs.redirect", "iommu.on", "p2p.not_supported", "host.facts"} <= ids
    assert "available" in data["knowledge"]
    code, out, _ = run(["doctor", "--demo", "h200x2-vm", "--json"], capsys)
    assert code == 0 and json.loads(out)["status"] == "ok"


def test_cannot_run_exits_2_with_one_line(tmp_path, capsys):
    code, out, err = run(["doctor", "--demo", "nope"], capsys)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1 and "no demo named" in err
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    code, out, err = run(["doctor", "--replay", str(bad)], capsys)
    assert code == 2 and out == "" and "not valid JSON" in err


def test_live_without_nvml_shows_host_facts_and_exits_2(tmp_path, monkeypatch, capsys):
    from p2ptop.sources import nvml

    def no_driver(*a, **k):
        raise nvml.NvmlUnavailable("NVML could not be initialised: NVML Shared Library Not Found")

    root = make_host(tmp_path, cpuinfo="vm")
    monkeypatch.setattr(nvml, "read_snapshot", no_driver)
    monkeypatch.setattr(doctor, "collect", lambda: collect(root=root, env={}, run=Canned(), is_root=False, packages=no_packages))
    code, out, _ = run(["doctor"], capsys)
    assert code == 2 and "NVML could not be initialised" in out
    assert re.search(r"host.hypervisor_flag +yes", out) and "could not run" in out
    code, out, _ = run(["doctor", "--json"], capsys)
    assert code == 2 and json.loads(out)["status"] == "could not run"


def test_says_what_root_would_add(tmp_path, capsys):
    root = make_host(tmp_path, acs=0x1D, config_size=64)
    run_ = Canned({("lspci", "-vvv", "-D"): ok(fixture("commands/lspci-denied.txt")),
                   ("dmesg",): ok("", rc=1, err="dmesg: read kernel buffer failed: Operation not permitted")})
    snap = load_demo("h200x2-vm")
    snap.host = collect(root=root, env={"NCCL_P2P_DISABLE": "1"}, run=run_, is_root=False, packages=no_packages)
    path = tmp_path / "snap.json"
    save_snapshot(snap, str(path))
    code, out, _ = run(["doctor", "--replay", str(path)], capsys)
    assert code == 1  # NCCL_P2P_DISABLE=1
    assert "NCCL_P2P_DISABLE is set" in out
    line = next(l for l in out.splitlines() if l.startswith("With root"))
    assert "host.acs_redirect" in line and "host.xid" in line
    code, out, _ = run(["doctor", "--replay", str(path), "--json"], capsys)
    assert set(json.loads(out)["needs_root"]) == {"host.acs_redirect", "host.acs_enabled", "host.xid"}


def test_no_knowledge_base_is_said_not_an_error(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "p2ptop.knowledge", None)  # import fails as if not installed
    code, out, _ = run(["doctor", "--demo", "pcie-4gpu-iommu"], capsys)
    assert code == 1 and "no knowledge base available" in out


def test_log_text_is_printed_as_data(tmp_path, capsys):
    snap = load_demo("h200x2-vm")
    root = make_host(tmp_path, cmdline="ro \x1b]0;pwned\x07quiet")
    dmesg = "[1.0] NVRM: Xid (PCI:0000:03:00): 79, \x1b[2Jgone\n"
    snap.host = collect(root=root, env={}, run=Canned({("dmesg",): ok(dmesg)}), is_root=True, packages=no_packages)
    path = tmp_path / "snap.json"
    save_snapshot(snap, str(path))
    code, out, _ = run(["doctor", "--replay", str(path)], capsys)
    assert "\x1b" not in out and "\x07" not in out and "Xid 79" in out


def test_gpu_section_tells_a_link_low_under_load(capsys):
    code, out, _ = run(["doctor", "--demo", "nvlink-degraded"], capsys)
    assert code == 1
    gpu5 = next(l for l in out.splitlines() if l.startswith("  GPU5 "))
    assert "PCIe Gen4 x8 of Gen4 x16 (below max), 97% busy" in gpu5 and "(data-centre)" in gpu5
    assert "NVLink 10/12 active, 1340 errors" in next(l for l in out.splitlines() if l.startswith("  GPU3 "))
    code, out, _ = run(["doctor", "--demo", "rtx4090-2gpu", "--json"], capsys)
    rows = json.loads(out)["gpus"]
    assert [r["product_class"] for r in rows] == ["consumer", "consumer"] and rows[0]["pcie_below_max"] is False
