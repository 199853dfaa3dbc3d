"""Host-fact collectors against fake root trees and canned command outputs (tests/fixtures/hosts)."""

import ast
import pathlib

import pytest

from p2ptop.host import collect, needs_root
from p2ptop.host.facts import run_command
from p2ptop.host.iommu import acs_from_config, parse_lspci
from p2ptop.host.nvidia import cuda_of_cupy
from p2ptop.host.virt import shm_mib

from .fixtures.hosts.fakehost import GPU, ROOT_PORT, SWITCH_DOWN, SWITCH_UP, Canned, config_space, fixture, make_host, no_packages, ok


def facts(root, *, env=None, run=None, is_root=True, packages=no_packages, gpus=None):
    host = collect(root=str(root), env=env or {}, run=run or Canned(), is_root=is_root, packages=packages, gpu_bus_ids=gpus)
    return host, {k: v["value"] for k, v in host["facts"].items()}


def test_every_fact_says_how_and_why_not(tmp_path):
    host, _ = facts(make_host(tmp_path))
    for name, f in host["facts"].items():
        assert set(f) == {"value", "how", "na"}, name
        assert f["how"], name
        assert f["value"] is not None or f["na"] or name.startswith("env.") or name in ("host.container", "host.hypervisor"), name


def test_kernel_os_and_iommu_words_of_the_command_line(tmp_path):
    root = make_host(tmp_path, cmdline="BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro intel_iommu=on iommu=pt pci=noacs pci=realloc quiet")
    _, v = facts(root)
    assert v["host.os"] == "Ubuntu 22.04.4 LTS" and v["host.kernel"] == "6.5.0-41-generic"
    assert v["host.kernel_iommu_args"] == "intel_iommu=on iommu=pt pci=noacs"


def test_iommu_translating(tmp_path):
    _, v = facts(make_host(tmp_path, cmdline="ro intel_iommu=on", iommu_type="DMA-FQ"))
    assert v["host.iommu_active"] is True and v["host.iommu_passthrough"] is False
    assert v["host.iommu_units"] == ["dmar0"] and v["host.iommu_gpu_domains"] == {GPU: "DMA-FQ"}


def test_iommu_passthrough_is_not_active(tmp_path):
    _, v = facts(make_host(tmp_path, cmdline="ro intel_iommu=on iommu=pt", iommu_type="identity"))
    assert v["host.iommu_active"] is False and v["host.iommu_passthrough"] is True


def test_iommu_off(tmp_path):
    host, v = facts(make_host(tmp_path))
    assert v["host.iommu_active"] is False and v["host.iommu_units"] == []
    assert "no entries in /sys/class/iommu" in host["facts"]["host.iommu_active"]["how"]


def test_gpus_are_found_in_sysfs_without_nvml(tmp_path):
    _, v = facts(make_host(tmp_path))
    assert v["host.gpu_bdfs"] == [GPU]
    _, v = facts(make_host(tmp_path / "vga", gpu_class="0x030000"))  # a consumer card shows as a VGA controller
    assert v["host.gpu_bdfs"] == [GPU]


def test_acs_redirect_on_a_bridge_above_the_gpu(tmp_path):
    host, v = facts(make_host(tmp_path, acs=0x1D), gpus=["00000000:03:00.0"])
    assert v["host.acs_redirect"] is True and v["host.acs_redirect_bridges"] == SWITCH_DOWN
    by_bridge = {r["bridge"]: r for r in v["host.acs"]}
    assert set(by_bridge) == {SWITCH_DOWN, SWITCH_UP, ROOT_PORT}
    down = by_bridge[SWITCH_DOWN]
    assert down["acs_ctrl"] == 0x1D and down["role"] == "switch_downstream" and down["gpu"] == GPU
    assert down["acs"] == "SrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-"
    assert by_bridge[ROOT_PORT]["acs"] == "no ACS capability" and by_bridge[ROOT_PORT]["redirect"] is False
    assert f"/sys/bus/pci/devices/{SWITCH_DOWN}/config" in down["how"]


def test_acs_off_is_false_not_unknown(tmp_path):
    _, v = facts(make_host(tmp_path, acs=0x01))  # source validation only
    assert v["host.acs_redirect"] is False


def test_acs_needs_root_when_config_space_is_cut_to_64_bytes(tmp_path):
    root = make_host(tmp_path, acs=0x1D, config_size=64)
    run = Canned({("lspci", "-vvv", "-D"): ok(fixture("commands/lspci-denied.txt"))})
    host, v = facts(root, run=run, is_root=False)
    assert v["host.acs_redirect"] is None
    assert host["facts"]["host.acs_redirect"]["na"].startswith("needs root")
    assert ["lspci", "-vvv", "-D"] in run.calls
    assert "host.acs_redirect" in needs_root(host)


def test_acs_from_lspci_where_sysfs_cannot_tell(tmp_path):
    root = make_host(tmp_path, acs=None, config_size=256)  # no extended config space in sysfs
    run = Canned({("lspci", "-vvv", "-D"): ok(fixture("commands/lspci-acs.txt"))})
    host, v = facts(root, run=run)
    assert v["host.acs_redirect"] is True and v["host.acs_redirect_bridges"] == SWITCH_DOWN
    down = next(r for r in v["host.acs"] if r["bridge"] == SWITCH_DOWN)
    assert "lspci" in down["how"] and down["acs_ctrl"] == 0x1D


def test_acs_without_lspci_says_why(tmp_path):
    host, v = facts(make_host(tmp_path, config_size=256))
    assert v["host.acs_redirect"] is None
    assert "no extended config space" in host["facts"]["host.acs_redirect"]["na"]


def test_acs_config_parsing():
    assert acs_from_config(config_space(0x1D), is_root=True) == (0x1D, None)
    assert acs_from_config(config_space(None), is_root=True) == (0, None)
    assert acs_from_config(config_space(0x1D, 64), is_root=False) == (None, "needs root")
    parsed = parse_lspci(fixture("commands/lspci-acs.txt"))
    assert parsed[SWITCH_DOWN] == (0x1D, None) and parsed[SWITCH_UP] == (0, None) and parsed[ROOT_PORT] == (0x01, None)
    assert parse_lspci(fixture("commands/lspci-denied.txt"))[SWITCH_DOWN] == (None, "needs root")


def test_vm_from_the_cpu_flag_and_dmi(tmp_path):
    _, v = facts(make_host(tmp_path, cpuinfo="vm", dmi={"sys_vendor": "QEMU", "product_name": "Standard PC (Q35 + ICH9, 2009)"}))
    assert v["host.hypervisor_flag"] is True and v["host.virtualized"] is True and v["host.hypervisor"] == "kvm"


def test_vm_named_by_systemd_detect_virt(tmp_path):
    run = Canned({("systemd-detect-virt", "--vm"): ok("kvm\n")})
    host, v = facts(make_host(tmp_path, cpuinfo="vm"), run=run)
    assert v["host.hypervisor"] == "kvm" and host["facts"]["host.hypervisor"]["how"] == "systemd-detect-virt --vm"


def test_a_vm_without_a_name_is_still_a_vm(tmp_path):
    host, v = facts(make_host(tmp_path, cpuinfo="vm"))  # Firecracker: no DMI, no systemd-detect-virt
    assert v["host.virtualized"] is True and v["host.hypervisor"] is None
    assert host["facts"]["host.hypervisor"]["na"] == "a VM of unknown kind"


def test_bare_metal(tmp_path):
    run = Canned({("systemd-detect-virt", "--vm"): ok("none\n", rc=1)})
    _, v = facts(make_host(tmp_path), run=run)
    assert v["host.virtualized"] is False and v["host.hypervisor"] is None and v["host.container"] is None


def test_container_with_a_64_mb_dev_shm(tmp_path):
    _, v = facts(make_host(tmp_path, docker=True, mounts="docker"))
    assert v["host.container"] == "docker" and v["host.shm_mb"] == 64
    _, v = facts(make_host(tmp_path / "k8s"), env={"KUBERNETES_SERVICE_HOST": "10.0.0.1"})
    assert v["host.container"] == "kubernetes" and v["host.shm_mb"] == 128906


def test_shm_sizes():
    assert shm_mib("shm /dev/shm tmpfs rw,size=1g 0 0") == 1024
    assert shm_mib("tmpfs /dev/shm tmpfs rw,nosuid 0 0") is None


def test_nccl_p2p_disable_and_other_variables(tmp_path):
    _, v = facts(make_host(tmp_path), env={"NCCL_P2P_DISABLE": "1", "CUDA_VISIBLE_DEVICES": "1,0", "HOME": "/root"})
    assert v["env.NCCL_P2P_DISABLE"] == "1" and v["env.CUDA_VISIBLE_DEVICES"] == "1,0"
    assert v["env.NCCL_P2P_LEVEL"] is None and "env.HOME" not in v


def test_driver_params_peermem_and_versions(tmp_path):
    host, v = facts(make_host(tmp_path))
    assert v["host.driver_version"] == "580.159.04" and v["host.driver_major"] == 580
    assert v["host.nvidia_params"]["DmaRemapPeerMmio"] == "1" and v["host.registry_dwords"] == ""
    assert "ResmanDebugLevel" not in v["host.nvidia_params"]  # only the P2P-related ones
    assert v["host.dma_remap_peer_mmio"] == 1 and v["host.nvidia_peermem"] is True


def test_no_driver(tmp_path):
    host, v = facts(make_host(tmp_path, driver=False))
    assert v["host.driver_version"] is None and "no /proc/driver/nvidia/version" in host["facts"]["host.driver_version"]["na"]


@pytest.mark.parametrize("answer, state", [("active\n", "running"), ("inactive\n", "not running"), ("failed\n", "failed")])
def test_fabric_manager_states(tmp_path, answer, state):
    run = Canned({("systemctl", "is-active", "nvidia-fabricmanager"): ok(answer, rc=0 if answer == "active\n" else 3),
                  ("nv-fabricmanager", "--version"): ok("Fabric Manager version is : 580.159.04\n")})
    _, v = facts(make_host(tmp_path), run=run)
    assert v["host.fabric_manager"] == state and v["host.fabric_manager_version"] == "580.159.04"


def test_fabric_manager_not_installed_and_no_systemctl(tmp_path):
    run = Canned({("systemctl", "is-active", "nvidia-fabricmanager"): ok("inactive\n", rc=3)})
    _, v = facts(make_host(tmp_path), run=run)
    assert v["host.fabric_manager"] == "not installed"
    host, v = facts(make_host(tmp_path / "b"))
    assert v["host.fabric_manager"] is None and host["facts"]["host.fabric_manager"]["na"] == "systemctl not installed"


def test_xid_messages_from_the_kernel_log(tmp_path):
    run = Canned({("dmesg",): ok(fixture("commands/dmesg-xid.txt"))})
    _, v = facts(make_host(tmp_path), run=run)
    assert [x["xid"] for x in v["host.xid"]] == [13, 79]
    assert v["host.xid"][-1] == {"pci": "0000:03:00", "xid": 79, "text": "pid=0, name=, GPU has fallen off the bus."}
    assert v["host.xid_codes"] == "13,79" and v["host.xid_latest"] == 79


def test_unreadable_kernel_log_needs_root(tmp_path):
    run = Canned({("dmesg",): ok("", rc=1, err="dmesg: read kernel buffer failed: Operation not permitted\n")})
    host, v = facts(make_host(tmp_path), run=run, is_root=False)
    assert v["host.xid"] is None and host["facts"]["host.xid"]["na"] == "needs root"
    assert "host.xid" in needs_root(host)


def test_cupy_from_package_metadata_only(tmp_path):
    _, v = facts(make_host(tmp_path), packages=lambda: {"cupy-cuda12x": "13.3.0", "numpy": "2.1.0"})
    assert v["host.cupy"] == "cupy-cuda12x 13.3.0" and v["host.cupy_cuda_runtime"] == "12.x"
    _, v = facts(make_host(tmp_path / "b"), packages=lambda: {"cupy-cuda12x": "13.3.0", "nvidia-cuda-runtime-cu12": "12.4.127"})
    assert v["host.cupy_cuda_runtime"] == "12.4.127"
    assert cuda_of_cupy("cupy-cuda115") == "11.5" and cuda_of_cupy("cupy") is None


def test_control_characters_from_files_are_dropped(tmp_path):
    root = make_host(tmp_path, cmdline="ro quiet \x1b[31mred\x1b[0m")
    _, v = facts(root)
    assert "\x1b" not in v["host.kernel_cmdline"]


def test_facts_are_json_safe(tmp_path):
    import json

    host, _ = facts(make_host(tmp_path, acs=0x1D, iommu_type="DMA"), run=Canned({("dmesg",): ok(fixture("commands/dmesg-xid.txt"))}))
    assert json.loads(json.dumps(host)) == host


# --- the real runner -----------------------------------------------------------------------

def test_absent_command_is_na():
    res = run_command(["p2ptop-no-such-command-xyz"])
    assert res.rc is None and res.na == "p2ptop-no-such-command-xyz not installed"


def test_a_hanging_command_times_out():
    res = run_command(["sleep", "5"], timeout=0.2)
    assert res.rc is None and "timed out" in res.na


def test_a_real_command_runs_without_a_shell():
    res = run_command(["echo", "$HOME;", "ok"])
    assert res.rc == 0 and res.out == "$HOME; ok\n"


# --- safe by construction ------------------------------------------------------------------

HOST_PKG = pathlib.Path(__file__).resolve().parent.parent / "p2ptop" / "host"


def _calls(tree):
    return [n for n in ast.walk(tree) if isinstance(n, ast.Call)]


def test_host_package_never_uses_a_shell_and_only_opens_files_for_reading():
    for path in HOST_PKG.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for call in _calls(tree):
            for kw in call.keywords:
                assert not (kw.arg == "shell" and getattr(kw.value, "value", False)), f"{path.name}: shell=True"
            name = getattr(call.func, "id", None) or getattr(call.func, "attr", None)
            assert name not in ("system", "popen", "check_output", "getoutput"), f"{path.name}: {name}"
            if name in ("Popen", "run") and path.name != "facts.py":
                raise AssertionError(f"{path.name}: commands go through facts.run_command only")
            if name == "Popen":
                assert isinstance(call.args[0], ast.List), "argument list, never a command string"
            if name == "open":
                mode = call.args[1].value if len(call.args) > 1 else next((k.value.value for k in call.keywords if k.arg == "mode"), "r")
                assert set(mode) <= {"r", "b"}, f"{path.name}: open(..., {mode!r})"


def test_a_timed_out_command_does_not_wait_for_its_children():
    import time

    t = time.monotonic()
    res = run_command(["sh", "-c", "sleep 30 & sleep 30"], timeout=0.3)
    assert "timed out" in res.na and time.monotonic() - t < 5


def test_live_read_puts_host_facts_and_acs_on_the_snapshot(tmp_path, monkeypatch):
    import p2ptop.host
    from p2ptop import sources
    from p2ptop.model import GPU, Snapshot
    from p2ptop.sources.sysfs import read_pcie_path

    root = make_host(tmp_path, acs=0x1D)
    calls = []

    def fake_collect(root, gpu_bus_ids):
        calls.append(gpu_bus_ids)
        return collect(root=root, gpu_bus_ids=gpu_bus_ids, env={}, run=Canned(), is_root=True, packages=no_packages)

    monkeypatch.setattr(p2ptop.host, "collect", fake_collect)
    monkeypatch.setattr(sources, "_host_cache", {})

    def snap():
        _, path, _, _ = read_pcie_path("00000000:03:00.0", root)
        return Snapshot(gpus=[GPU(index=0, pci_bus_id="00000000:03:00.0", pcie_path=path)])

    first = snap()
    sources.attach_host(first, root)
    assert first.host["facts"]["host.acs_redirect"]["value"] is True
    assert {d.bdf: d.acs_ctrl for d in first.gpus[0].pcie_path} == {SWITCH_DOWN: 0x1D, SWITCH_UP: 0, ROOT_PORT: 0}
    second = snap()
    sources.attach_host(second, root)  # a refresh soon after reuses the facts
    assert len(calls) == 1 and second.host == first.host and second.host is not first.host
