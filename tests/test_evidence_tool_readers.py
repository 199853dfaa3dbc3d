"""Tool outputs the readers learned in the third round (issue 22, tool outputs): setpci's ACS Control words,
lspci's BAR1, systemctl's Fabric Manager state, ``dcgmi nvlink --link-status``, nccl-tests' first format and a
table that never got a row, tensors that a copy between GPUs zeroed, nvtop's device lines, p2pBandwidthLatencyTest's
latency matrices, NCCL's topology XML, bridged H100 NVL/PCIe spare links, and the MIG rule-out.

Real pastes carry their thread (tests/fixtures/pastes/index.json; none of these threads is in benchmarks/corpus);
the other texts are written here from the tools' documented formats (sources beside each reader), mangled the way
pastes are (CRLF, quote marks, prompts, markdown emphasis, wrapped lines). Each test fails when its rule is removed."""

from __future__ import annotations

from pathlib import Path

import pytest

from p2ptop.commands.explain import answer
from p2ptop.knowledge import load_kb

from .test_evidence_pastes import facts  # (subject, key) -> the first value read

KB = load_kb()
PASTES = Path(__file__).parent / "fixtures" / "pastes"


def paste(name: str) -> str:
    return (PASTES / name).read_text()


def ranked(text: str) -> list[tuple[str, str]]:
    """(failure class, confidence) of the answer, best first."""
    return [(m.entry.failure_class, m.confidence) for m, _ in answer(KB, text, [], None)["results"]]


def classes(text: str, top: int = 3) -> list[str]:
    return [c for c, _ in ranked(text)[:top]]


def confident_faults(text: str) -> list[str]:
    return [c for c, conf in ranked(text) if conf in ("likely", "possible") and c != "pcie_link_idle_downclock_benign"]


def crlf(t: str) -> str:
    return t.replace("\n", "\r\n")


def quoted(t: str) -> str:
    return "".join("> " + ln + "\n" for ln in t.splitlines())


# ---- setpci: the ACS Control register ----------------------------------------------------------------------

SETPCI_LOOP = ("[user@node ~]$ for plx in $(lspci | grep -i plx | awk '{print $1}'); do sudo setpci -s ${plx} f2a.w; done\n"
               "[sudo] password for user:\n0000\n001d\n001d\n0000\n")


@pytest.mark.parametrize("mangle", [lambda t: t, crlf, quoted])
def test_setpci_acs_words_with_a_redirect_bit_are_acs_redirect(mangle):
    f = facts(mangle(SETPCI_LOOP))
    assert f[("host", "host.acs_redirect")] is True  # 0x1d: SrcValid, ReqRedir, CmpltRedir, UpstreamFwd
    assert "iommu_acs_p2p_broken" in classes(mangle(SETPCI_LOOP))


def test_setpci_acs_words_read_by_capability_name_and_with_v():
    text = ("$ sudo setpci -v -s 0000:03:08.0 ECAP_ACS+0x6.w\n0000:03:08.0 @1f2a = 0004\n")
    assert facts(text)[("host", "host.acs_redirect")] is True  # ReqRedir alone
    assert facts("$ sudo setpci -s 03:08.0 ECAP_ACS+6.w\n0011\n")[("host", "host.acs_redirect")] is False  # SrcValid|UpstreamFwd


def test_setpci_all_zero_is_acs_off_and_a_write_is_no_reading():
    assert facts(SETPCI_LOOP.replace("001d", "0000"))[("host", "host.acs_redirect")] is False
    assert ("host", "host.acs_redirect") not in facts("sudo setpci -s 03:08.0 f2a.w=0000\n")


# ---- lspci: BAR1 of an NVIDIA GPU ---------------------------------------------------------------------------

def test_lspci_vvvv_bar1_of_a_geforce_is_read():
    # https://github.com/geerlingguy/raspberry-pi-pcie-devices/issues/504 (regions marked [disabled])
    assert facts(paste("lspci-vvvv-4090-bar1-256m.txt"))[("gpu:0", "gpu.bar1_mb")] == 256


def test_lspci_v_without_region_numbers_takes_the_first_64bit_prefetchable_region():
    text = ("3b:00.0 3D controller: NVIDIA Corporation GH100 [H100 PCIe] (rev a1)\r\n"
            "\tMemory at e8000000 (32-bit, non-prefetchable) [size=16M]\r\n"
            "\tMemory at 21000000000 (64-bit, prefetchable) [size=128G]\r\n"
            "\tMemory at 23000000000 (64-bit, prefetchable) [size=32M]\r\n"
            "5e:00.0 Ethernet controller: Intel Corporation Ethernet Controller X710\r\n"
            "\tMemory at 22000000000 (64-bit, prefetchable) [size=8M]\r\n")
    f = facts(text)
    assert f[("gpu:0", "gpu.bar1_mb")] == 128 * 1024
    assert ("gpu:1", "gpu.bar1_mb") not in f  # the NIC's region is no GPU's BAR1


def test_a_small_bar1_alone_gives_only_an_unsure_bar1_candidate():
    got = ranked(paste("lspci-vvvv-4090-bar1-256m.txt"))
    assert ("bar1_too_small", "unsure") in got
    assert not [c for c, conf in got if conf in ("likely", "possible")]


# ---- Fabric Manager's state -------------------------------------------------------------------------------

@pytest.mark.parametrize("text,state", [
    ("[root@hgx ~]# systemctl status nvidia-fabricmanager\nUnit nvidia-fabricmanager.service could not be found.\n", "not running"),
    ("● nvidia-fabricmanager.service - NVIDIA fabric manager service\n"
     "     Loaded: loaded (/lib/systemd/system/nvidia-fabricmanager.service; disabled; vendor preset: enabled)\n"
     "     Active: inactive (dead)\n", "not running"),
    ("× nvidia-fabricmanager.service - NVIDIA fabric manager service\n"
     "     Loaded: loaded (/lib/systemd/system/nvidia-fabricmanager.service; enabled; vendor preset: enabled)\n"
     "     Active: failed (Result: exit-code) since Tue 2026-02-17 10:01:02 UTC; 3 days ago\n", "failed"),
    ("● nvidia-fabricmanager.service - NVIDIA fabric manager service\n"
     "     Loaded: loaded (/lib/systemd/system/nvidia-fabricmanager.service; enabled; vendor preset: enabled)\n"
     "     Active: active (running) since Tue 2026-02-17 10:01:02 UTC; 3 days ago\n", "running"),
    ('"reason": "NVIDIA-H200 checked fabric state; fabric manager found but not active",\n', "not running"),
])
def test_fabric_manager_state_from_systemctl_and_health_checks(text, state):
    assert facts(text)[("host", "host.fabric_manager")] == state
    assert facts(crlf(text))[("host", "host.fabric_manager")] == state


def test_fabric_manager_not_running_is_a_candidate_and_running_is_quiet():
    down = "systemctl status nvidia-fabricmanager\nUnit nvidia-fabricmanager.service could not be found.\n"
    assert "fabric_manager_not_running" in classes(down)
    up = ("● nvidia-fabricmanager.service - NVIDIA fabric manager service\n"
          "     Active: active (running) since Tue 2026-02-17 10:01:02 UTC; 3 days ago\n")
    assert not confident_faults(up)


# ---- dcgmi nvlink --link-status ---------------------------------------------------------------------------

DCGMI_DOWN = ("dcgmi nvlink --link-status\n+----------------------+\n|  NvLink Link Status  |\n+----------------------+\n"
              "GPUs:\n    gpuId 0:\n        U U U U U U U U U U U U\n    gpuId 1:\n        U U U U U U D D U U U U\n"
              "NvSwitches:\n    No NvSwitches found.\n\nKey: Up=U, Down=D, Disabled=X, Not Supported=_\n")


def test_dcgmi_link_status_counts_down_links_per_gpu():
    f = facts(DCGMI_DOWN)
    assert f[("gpu:0", "gpu.nvlink_down")] == 0 and f[("gpu:1", "gpu.nvlink_down")] == 2
    assert classes(DCGMI_DOWN)[0] == "nvlink_link_failure"


def test_dcgmi_link_status_letters_wrapped_over_lines():
    text = DCGMI_DOWN.replace("U U U U U U D D U U U U", "U U U U U U\n        D D U U U U")
    assert facts(text)[("gpu:1", "gpu.nvlink_down")] == 2


def test_dcgmi_link_status_all_up_is_healthy():
    # https://github.com/NVIDIA/dcgm-exporter/issues/576
    text = paste("dcgmi-nvlink-status-h100x8-healthy.txt")
    f = facts(text)
    assert all(f[(f"gpu:{g}", "gpu.nvlink_down")] == 0 for g in range(8))
    assert not confident_faults(text)


# ---- nvidia-smi nvlink -s on bridged PCIe cards -------------------------------------------------------------

def _nvlink_s(name: str, inactive: set[int], links: int = 18) -> str:
    rows = "".join(f"\t Link {i}: {'<inactive>' if i in inactive else '26.562 GB/s'}\n" for i in range(links))
    return f"nvidia-smi nvlink -s\nGPU 0: {name} (UUID: GPU-00000000-0000-0000-0000-000000000000)\n{rows}"


def test_h100_nvl_spare_links_are_no_fault():
    text = _nvlink_s("NVIDIA H100 NVL", {4, 5, 10, 11, 16, 17})
    f = facts(text)
    assert f[("gpu:0", "gpu.nvlink_down")] == 0 and f[("host", "host.nvlink_inactive_by_design")] is True
    assert not confident_faults(text)  # the "<inactive>" lines no longer offer nvlink/links-inactive


@pytest.mark.parametrize("name,inactive", [
    ("NVIDIA H100 NVL", set(range(18))),  # every link down: no bridge, or a failed one
    ("NVIDIA H100 80GB HBM3", {4, 5}),  # SXM: every link is used
    ("NVIDIA H100 NVL", {0, 1, 2, 3, 4, 5, 6}),  # more than the bridges leave unused
])
def test_inactive_links_beyond_what_a_bridge_leaves_unused_are_down(name, inactive):
    text = _nvlink_s(name, inactive)
    assert facts(text)[("gpu:0", "gpu.nvlink_down")] == len(inactive)
    assert classes(text)[0] == "nvlink_link_failure"


def test_a_spare_h100_nvl_beside_a_failing_sxm_still_says_the_fault():
    text = _nvlink_s("NVIDIA H100 NVL", {4, 5, 10, 11, 16, 17}) + _nvlink_s("NVIDIA H100 80GB HBM3", {3}).replace(
        "GPU 0:", "GPU 1:").replace("nvidia-smi nvlink -s\n", "")
    assert ("host", "host.nvlink_inactive_by_design") not in facts(text)
    assert "nvlink_link_failure" in classes(text)


# ---- a tensor copied between GPUs reads zeros ---------------------------------------------------------------

@pytest.mark.parametrize("name", ["pytorch-13803-cross-gpu-zeros.txt", "pytorch-56771-first-copy-zeros.txt"])
def test_a_tensor_zeroed_by_a_copy_between_gpus_is_wrong_results(name):
    # https://github.com/pytorch/pytorch/issues/13803, https://github.com/pytorch/pytorch/issues/56771
    text = paste(name)
    assert facts(text)[("host", "symptom.wrong_results")] is True
    assert "iommu_acs_p2p_broken" in classes(text)


def test_the_literal_the_code_built_counts_as_the_values_and_markdown_fences_do_not_matter():
    text = ('```python\na = torch.tensor([0.5, 0.25, 2.0])\nprint(a.to("cuda:0").to("cuda:2"))\n```\nOutput:\n'
            "```\ntensor([0., 0., 0.], device='cuda:2')\n```\n")
    assert facts(text)[("host", "symptom.wrong_results")] is True


@pytest.mark.parametrize("text", [
    "tensor([1., 2.], device='cuda:0')\ntensor([1., 2.], device='cuda:1')\n",  # the copy kept its values
    "x = torch.zeros(3).to('cuda:1')\nprint(x)\ntensor([0., 0., 0.], device='cuda:1')\ntensor([1., 2., 3.])\n",  # zeros built
    "tensor([1., 2.], device='cuda:0')\ntensor([0., 0., 0.], device='cuda:1')\n",  # not the same tensor (3 values, not 2)
    "tensor([1., 2.], device='cuda:0')\ntensor([0., 0.], device='cuda:1', grad_fn=<MulBackward0>)\n",  # computed, not copied
])
def test_tensors_that_were_not_zeroed_by_a_copy_say_nothing(text):
    assert ("host", "symptom.wrong_results") not in facts(text)


# ---- nccl-tests ---------------------------------------------------------------------------------------------

NCCLT_OLD = ("# Using devices\n#   Rank  0 uses device  0 [0x02] Tesla P100-PCIE-16GB\n"
             "#   Rank  1 uses device  1 [0x03] Tesla P100-PCIE-16GB\n\n"
             "#                                                 out-of-place                    in-place\n"
             "#      bytes             N    type      op     time  algbw  busbw      res     time  algbw  busbw      res\n")


def test_nccl_tests_first_format_names_the_gpus():
    f = facts(NCCLT_OLD)
    assert f[("gpu:0", "gpu.name")] == "Tesla P100-PCIE-16GB" and f[("gpu:1", "gpu.architecture")] == "Pascal"


@pytest.mark.parametrize("mangle", [lambda t: t, crlf, lambda t: "```\n" + t + "```\n"])
def test_nccl_tests_header_with_no_row_is_a_hang(mangle):
    text = mangle(NCCLT_OLD)
    assert facts(text)[("host", "symptom.hang")] is True
    assert "iommu_acs_p2p_broken" in classes(text)


def test_nccl_tests_header_followed_by_rows_or_an_error_is_no_hang():
    rows = NCCLT_OLD + "           8             2   float     sum    35.41   0.00   0.00    0e+00    34.55   0.00   0.00    0e+00\n"
    assert ("host", "symptom.hang") not in facts(rows)
    err = NCCLT_OLD + "node:123:123 [0] NCCL WARN Cuda failure 'peer access is not supported between these two devices'\n"
    assert ("host", "symptom.hang") not in facts(err)


# ---- nvtop and the idle downclock ---------------------------------------------------------------------------

def test_nvtop_lines_and_a_lower_generation_at_the_same_width_is_the_idle_downclock():
    text = ("Device 0 [NVIDIA GeForce RTX 3090] PCIe GEN 4@16x RX: 0.000 KiB/s TX: 0.000 KiB/s\n"
            "Device 1 [NVIDIA GeForce RTX 3090] **PCIe GEN 1@16x** RX: 0.000 KiB/s TX: 0.000 KiB/s\n")
    f = facts(text)
    assert f[("gpu:1", "gpu.pcie_gen_cur")] == 1 and f[("gpu:1", "gpu.pcie_width_cur")] == 16
    assert f[("gpu:1", "gpu.pcie_idle_downclock")] is True and ("gpu:0", "gpu.pcie_idle_downclock") not in f
    assert classes(text)[0] == "pcie_link_idle_downclock_benign"


def test_smi_q_generation_below_max_at_full_width_is_the_idle_downclock_and_a_narrow_link_is_not():
    q = ("GPU 00000000:3B:00.0\n    Product Name : NVIDIA RTX A6000\n        GPU Link Info\n            PCIe Generation\n"
         "                Max : 4\n                Current : 1\n            Link Width\n                Max : 16x\n"
         "                Current : 16x\n")
    assert facts(q)[("gpu:0", "gpu.pcie_idle_downclock")] is True
    narrow = q.replace("Current : 16x", "Current : 8x")
    assert ("gpu:0", "gpu.pcie_idle_downclock") not in facts(narrow)
    assert facts(narrow)[("gpu:0", "gpu.pcie_degraded_under_load")] is True


# ---- p2pBandwidthLatencyTest latency ------------------------------------------------------------------------

LATENCY = ("[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]\n"
           "Device: 0, NVIDIA RTX A6000, pciBusID: 17, pciDeviceID: 0, pciDomainID:0\n"
           "Device: 1, NVIDIA RTX A6000, pciBusID: 65, pciDeviceID: 0, pciDomainID:0\n"
           "P2P=Disabled Latency Matrix (us)\n   GPU     0      1 \n     0   2.07  14.21 \n     1  14.60   2.10 \n\n"
           "   CPU     0      1 \n     0   3.11   8.20 \n     1   8.13   3.02 \n"
           "P2P=Enabled Latency (P2P Writes) Matrix (us)\n   GPU     0      1 \n     0   2.07 {lat} \n     1 {lat}   2.09 \n\n"
           "   CPU     0      1 \n     0   3.02   2.46 \n     1   2.50   3.05 \n")


def test_p2p_enabled_latency_far_above_disabled_is_p2p_slower():
    text = LATENCY.format(lat="49275.38")
    assert facts(text)[("pair:0-1", "tool.p2p_slower_than_no_p2p")] is True
    assert ranked(text)  # never silent on a P2P problem


def test_p2p_bandwidth_matrices_with_an_escaped_backslash_are_read():
    text = ("Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)\n   D\\\\D     0      1\n     0 1290.10  11.20\n"
            "     1  11.31 1300.52\nUnidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n   D\\\\D     0      1\n"
            "     0 1291.23   3.02\n     1   2.98 1299.80\n")
    assert "D\\\\D" in text
    assert facts(text)[("pair:0-1", "tool.p2p_slower_than_no_p2p")] is True


def test_p2p_enabled_latency_below_disabled_is_healthy():
    text = LATENCY.format(lat="1.29")
    assert ("pair:0-1", "tool.p2p_slower_than_no_p2p") not in facts(text)
    assert not confident_faults(text)


# ---- NCCL's topology XML ------------------------------------------------------------------------------------

XML_GPU = ('    <pci busid="{bus}" class="0x030200" vendor="0x10de" device="0x20b5" subsystem_vendor="0x10de" '
           'subsystem_device="0x1533" link_speed="{speed}" link_width="{width}">\n      <gpu dev="{d}" sm="80" rank="{d}" gdr="1"/>\n'
           '    </pci>\n')


def _xml(speed: str, width: str, root_bus: bool = True) -> str:
    # root_bus: the GPUs in slots 09 and 0a of bus 00, as a VM places them (which alone says VM: evidence.read._root_bus);
    # else behind root ports, buses 1b and 1c, as on a physical host
    buses = [f"0000:00:0{9 + d:x}.0" if root_bus else f"0000:{0x1b + d:02x}:00.0" for d in range(2)]
    gpus = "".join(XML_GPU.format(bus=buses[d], d=d, speed=speed, width=width) for d in range(2))
    return f'<system version="1">\n  <cpu numaid="0" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="106">\n{gpus}  </cpu>\n</system>\n'


def test_nccl_topology_xml_with_no_pcie_link_on_any_gpu_is_a_vm():
    f = facts(_xml("", "0"))
    assert f[("host", "host.gpu_count")] == 2 and f[("gpu:1", "gpu.architecture")] == "Ampere"
    assert f[("host", "host.virtualized")] is True
    assert "vm_p2p_unavailable" in classes(_xml("", "0"))


def test_nccl_topology_xml_with_pcie_links_says_no_vm():
    f = facts(_xml("16.0 GT/s PCIe", "16", root_bus=False))
    assert f[("host", "host.gpu_count")] == 2 and ("host", "host.virtualized") not in f
    # the same GPUs in a VM's root-bus slots: a VM by their bus ids, PCIe links or not
    assert facts(_xml("16.0 GT/s PCIe", "16"))[("host", "host.virtualized")] is True


# ---- the MIG class where no GPU can run MIG -----------------------------------------------------------------

P2P_GNS = ("nvidia-smi topo -p2p r\n \tGPU0\tGPU1\t\n GPU0\tX\tGNS\t\n GPU1\tGNS\tX\t\n\nLegend:\n\n  X    = Self\n"
           "  GNS  = GPU not supported\n")


def test_mig_is_ruled_out_on_geforce_cards_and_kept_where_the_model_is_unknown():
    geforce = P2P_GNS + "GPU 0: NVIDIA GeForce RTX 5090 (UUID: GPU-1)\nGPU 1: NVIDIA GeForce RTX 5090 (UUID: GPU-2)\n"
    assert "mig_p2p_unsupported" not in [c for c, _ in ranked(geforce)]
    assert "mig_p2p_unsupported" in [c for c, _ in ranked(P2P_GNS)]  # GNS is what a MIG-enabled GPU reports too


# ---- topo -m: GPUs under a PCIe switch ----------------------------------------------------------------------

def test_pairs_under_a_pcie_switch_make_acs_a_candidate_never_a_confident_answer():
    text = ("\tGPU0\tGPU1\tGPU2\tGPU3\tCPU Affinity\n"
            "GPU0\t X \tPIX\tSYS\tSYS\t0-13\nGPU1\tPIX\t X \tSYS\tSYS\t0-13\n"
            "GPU2\tSYS\tSYS\t X \tPIX\t14-27\nGPU3\tSYS\tSYS\tPIX\t X \t14-27\n")
    got = ranked(text)
    assert ("iommu_acs_p2p_broken", "unsure") in got
    assert not confident_faults(text)


def test_the_next_command_never_asks_for_what_the_paste_shows():
    # the BAR1 candidate's class fact is gpu.bar1_mb; the lspci paste gives it, so the answer asks for something else
    a = answer(KB, paste("lspci-vvvv-4090-bar1-256m.txt"), [], None)
    assert a["next_command"] and a["next_command"]["fact"] != "gpu.bar1_mb"


# ---- nvidia-smi nvlink -s on a GPU without NVLink -----------------------------------------------------------

ALL_INACTIVE = "GPU {g}: {name} (UUID: GPU-{g}0000000-0000-0000-0000-000000000000)\n\t NVML: Unable to retrieve NVLink information as all links are inActive\n"


def test_all_links_inactive_on_a_gpu_without_nvlink_is_no_fault():
    text = "$ nvidia-smi nvlink -s\n" + "".join(ALL_INACTIVE.format(g=g, name="NVIDIA GeForce RTX 4090") for g in range(2))
    f = facts(text)
    assert f[("gpu:0", "gpu.nvlink_down")] == 0 and f[("host", "host.nvlink_inactive_by_design")] is True
    assert not confident_faults(text)
    assert not confident_faults(crlf(text))


@pytest.mark.parametrize("name", ["NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3"])
def test_all_links_inactive_on_an_sxm_gpu_is_the_nvlink_fault(name):
    text = "$ nvidia-smi nvlink -s\n" + ALL_INACTIVE.format(g=0, name=name)
    assert ("host", "host.nvlink_inactive_by_design") not in facts(text)
    assert classes(text)[0] == "nvlink_link_failure"


# ---- nvidia-smi --query-gpu ... --format=csv ----------------------------------------------------------------

CSV = ("$ nvidia-smi --query-gpu=index,name,pci.bus_id,pcie.link.gen.current,pcie.link.gen.max,pcie.link.width.current,"
       "pcie.link.width.max --format=csv\n"
       "index, name, pci.bus_id, pcie.link.gen.current, pcie.link.gen.max, pcie.link.width.current, pcie.link.width.max\n"
       "0, NVIDIA RTX A6000, 00000000:17:00.0, 1, 4, 16, 16\n"
       "1, NVIDIA RTX A6000, 00000000:65:00.0, 4, 4, 4, 16\n")


@pytest.mark.parametrize("mangle", [lambda t: t, crlf, quoted])
def test_smi_csv_query_gives_the_links_and_their_readings(mangle):
    f = facts(mangle(CSV))
    assert f[("gpu:0", "gpu.name")] == "NVIDIA RTX A6000" and f[("gpu:1", "gpu.pcie_width_cur")] == 4
    assert f[("gpu:0", "gpu.pcie_idle_downclock")] is True  # Gen1 of 4 at x16: idle
    assert f[("gpu:1", "gpu.pcie_degraded_under_load")] is True  # x4 of x16: no idle state narrows a link
    assert classes(mangle(CSV))[0] == "pcie_link_degraded"


def test_smi_csv_header_with_units_and_a_healthy_link():
    text = ("name, pcie.link.gen.max, pcie.link.gen.current, memory.total [MiB]\n"
            "NVIDIA H100 80GB HBM3, 5, 5, 81559 MiB\n")
    f = facts(text)
    assert f[("gpu:0", "gpu.pcie_gen_cur")] == 5 and ("gpu:0", "gpu.pcie_idle_downclock") not in f
    assert not confident_faults(text)


# ---- deviceQuery --------------------------------------------------------------------------------------------

DEVICE_QUERY = ("deviceQuery Starting...\n\n CUDA Device Query (Runtime API) version (CUDART static linking)\n\n"
                "Detected 2 CUDA Capable device(s)\n\nDevice 0: \"Tesla T4\"\n  CUDA Driver Version:                           12.2\n"
                "Device 1: \"Tesla T4\"\n  CUDA Driver Version:                           12.2\n"
                "> Peer-to-Peer (P2P) access from Tesla T4 (GPU0) -> Tesla T4 (GPU1) : {ans}\n"
                "> Peer-to-Peer (P2P) access from Tesla T4 (GPU1) -> Tesla T4 (GPU0) : {ans}\nResult = PASS\n")


def test_device_query_names_the_gpus_and_its_peer_lines_are_the_pairs_p2p():
    f = facts(DEVICE_QUERY.format(ans="Yes"))
    assert f[("host", "host.gpu_count")] == 2 and f[("gpu:1", "gpu.name")] == "Tesla T4"
    assert f[("pair:0-1", "p2p.read")] == "OK"
    assert not confident_faults(DEVICE_QUERY.format(ans="Yes"))
    no = DEVICE_QUERY.format(ans="No")
    assert facts(no)[("pair:0-1", "p2p.read")] == "NOT_SUPPORTED"
    assert "p2p_unsupported_topology" in classes(no)


# ---- nvbandwidth: a device-to-device test waived --------------------------------------------------------------

NVB = ("nvbandwidth Version: v0.7\nBuilt from Git version: v0.7\n\nCUDA Runtime Version: 12040\nCUDA Driver Version: 12040\n"
       "Driver Version: 550.54.15\n\n{devices}\n{run}")


@pytest.mark.parametrize("run", [
    "Waiving device_to_device_memcpy_write_ce.\n",  # v0.2
    "Running device_to_device_memcpy_read_ce.\nWaived. \n",
])
def test_nvbandwidth_waives_device_to_device_only_when_no_pair_has_peer_access(run):
    devices = "Device 0: NVIDIA GeForce RTX 2080 Ti\nDevice 1: NVIDIA GeForce RTX 2080 Ti\n"
    text = NVB.format(devices=devices, run=run)
    f = facts(text)
    assert f[("pair:0-1", "p2p.read")] == "NOT_SUPPORTED" and f[("gpu:1", "gpu.consumer")] is True
    assert classes(text)[0] == "p2p_unsupported_consumer_gpu"


def test_nvbandwidth_waived_on_one_gpu_says_nothing_of_a_pair():
    text = NVB.format(devices="Device 0: NVIDIA H100 80GB HBM3 (00000000:18:00)\n", run="Waiving device_to_device_memcpy_write_ce.\n")
    assert not [k for k in facts(text) if k[0].startswith("pair:")]


def test_an_unassigned_bar1_and_nvrms_invalid_bar1_message():
    lspci = ("05:00.0 3D controller: NVIDIA Corporation GP102GL [Tesla P40] (rev a1)\n"
             "\tRegion 0: Memory at fc000000 (32-bit, non-prefetchable) [size=16M]\n"
             "\tRegion 1: Memory at <unassigned> (64-bit, prefetchable)\n"
             "\tRegion 3: Memory at e4000000 (64-bit, prefetchable) [size=32M]\n")
    assert facts(lspci)[("gpu:0", "gpu.bar1_mb")] == 0  # not the 32M of BAR3
    # kernel-open/nvidia/nv-pci.c prints it when a BAR has no usable address
    dmesg = ("[   37.010658] NVRM: This PCI I/O region assigned to your NVIDIA device is invalid:\n"
             "               NVRM: BAR1 is 0M @ 0x0 (PCI:0000:56:00.0)\n")
    assert classes(dmesg)[0] == "bar1_too_small"


# ---- the IOMMU driver's start-up line ------------------------------------------------------------------------

@pytest.mark.parametrize("line", ["[    0.012345] DMAR: IOMMU enabled",
                                  "[    1.102030] pci 0000:00:00.2: AMD-Vi: Found IOMMU cap 0x40"])
def test_the_iommu_drivers_start_line_is_an_active_iommu_unless_passthrough_is_said(line):
    assert facts(line + "\n")[("host", "host.iommu_active")] is True
    pt = line + "\n[    1.2] iommu: Default domain type: Passthrough (set via kernel command line)\n"
    f = facts(pt)
    assert f[("host", "host.iommu_passthrough")] is True and ("host", "host.iommu_active") not in f


# ---- topo matrices turned into markdown tables ----------------------------------------------------------------

@pytest.mark.parametrize("sep", ["|------|------|------|--------------|", "|:--|:--:|:--:|:--|"])
def test_a_topo_matrix_as_a_markdown_table(sep):
    text = ("|      | GPU0 | GPU1 | CPU Affinity |\n" + sep + "\n"
            "| GPU0 | X    | SYS  | 0-15         |\n| GPU1 | SYS  | X    | 16-31        |\n")
    f = facts(text)
    assert f[("pair:0-1", "pair.path")] == "SYS" and f[("host", "host.gpu_count")] == 2


def test_the_nvidia_smi_table_is_not_read_as_a_markdown_matrix():
    table = ("+-----------------------------------------------------------------------------------------+\n"
             "| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |\n"
             "|=========================================+========================+======================|\n"
             "|   0  NVIDIA H100 80GB HBM3          On  |   00000000:18:00.0 Off |                    0 |\n")
    f = facts(table)
    assert f[("gpu:0", "gpu.name")] == "NVIDIA H100 80GB HBM3" and not [k for k in f if k[1] == "pair.path"]
