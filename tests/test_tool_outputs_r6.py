"""Tool outputs, sixth round: peer-access refusals that only the GPU mix explains (CUDA offers no peer access across
architectures: aikitoria/open-gpu-kernel-modules#40, tensorflow/tensorflow#4013), NVLinks a board leaves unwired,
and the readers added this round. Texts are written here from the tools' documented formats (cuda-samples'
simpleP2P.cu / p2pBandwidthLatencyTest.cu printf formats, nvidia-smi nvlink -s); each test fails when its rule
is removed."""

from __future__ import annotations

from p2ptop.commands.explain import answer
from p2ptop.knowledge import load_kb

from .test_evidence_pastes import facts

KB = load_kb()


def ranked(text: str) -> list[tuple[str, str, str]]:
    return [(m.entry.failure_class, m.confidence, m.entry.id) for m, _ in answer(KB, text, [], None)["results"]]


def confident_faults(text: str) -> list[str]:
    return [c for c, conf, eid in ranked(text) if conf in ("likely", "possible")
            and not getattr(KB.get(eid), "benign", False) and c != "pcie_link_idle_downclock_benign"]


def simple_p2p(names: list[str], yes: set) -> str:
    lines = ["[./simpleP2P] - Starting...", "Checking GPU(s) for support of peer to peer memory access..."]
    for a, na in enumerate(names):
        for b, nb in enumerate(names):
            if a != b:
                ok = (min(a, b), max(a, b)) in yes
                lines.append(f"> Peer access from {na} (GPU{a}) -> {nb} (GPU{b}) : {'Yes' if ok else 'No'}")
    return "\n".join(lines)


def can_lines(names: list[str], yes: set) -> str:
    lines = ["[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]"]
    lines += [f"Device: {i}, {n}, pciBusID: {i + 1:x}, pciDeviceID: 0, pciDomainID:0" for i, n in enumerate(names)]
    for a in range(len(names)):
        for b in range(len(names)):
            if a != b:
                ok = (min(a, b), max(a, b)) in yes
                lines.append(f"Device={a} {'CAN' if ok else 'CANNOT'} Access Peer Device={b}")
    return "\n".join(lines)


def test_refusals_only_across_architectures_are_the_gpu_mix_not_a_fault():
    text = simple_p2p(["NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 4090"], {(0, 1)})
    f = facts(text)
    assert f[("host", "host.p2p_refused_only_across_models")] is True
    assert confident_faults(text) == []
    assert ranked(text)[0][2] == "cuda/peer-access-across-gpu-models"


def test_two_models_of_one_architecture_beside_granted_pairs_are_the_mix_too():
    # the patched GeForce driver pairs only cards of one chip: a 5090 with a 5070 Ti is refused, 5090s are not
    text = can_lines(["NVIDIA GeForce RTX 5090", "NVIDIA GeForce RTX 5090", "NVIDIA GeForce RTX 5070 Ti"], {(0, 1)})
    assert facts(text).get(("host", "host.p2p_refused_only_across_models")) is True
    assert confident_faults(text) == []


def test_a_refused_pair_of_one_model_is_no_mix():
    # the Y Y N N picture of a pair of sockets: the refusal is the platform's, whatever the models
    names = ["GeForce GTX 1080 Ti"] * 2 + ["GeForce GTX 1080 Ti"] * 2
    text = can_lines(names, {(0, 1), (2, 3)})
    assert ("host", "host.p2p_refused_only_across_models") not in facts(text)
    # (GeForce cards before Turing have PCIe peer access in the stock driver: the platform's entry, not the GeForce one; r51)
    assert "p2p_unsupported_topology" in confident_faults(text)
    assert "p2p_unsupported_consumer_gpu" not in confident_faults(text)


def test_memory_size_alone_does_not_make_two_models():
    names = ["Tesla V100-SXM2-16GB", "Tesla V100-SXM2-16GB", "Tesla V100-SXM2-32GB"]
    text = can_lines(names, {(0, 1)})
    assert ("host", "host.p2p_refused_only_across_models") not in facts(text)


def test_two_models_of_one_architecture_with_no_granted_pair_stay_the_consumer_policy():
    text = simple_p2p(["NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 3080"], set())
    assert ("host", "host.p2p_refused_only_across_models") not in facts(text)
    assert "p2p_unsupported_consumer_gpu" in confident_faults(text)


def nvlink_s(gpus: dict, name: str = "Tesla V100-SXM2-16GB", links: int = 6) -> str:
    """nvidia-smi nvlink -s as it prints (nvidia-smi's manual): a GPU line, then 'Link N: <speed>' or '<inactive>'."""
    out = []
    for g, up in gpus.items():
        out.append(f"GPU {g}: {name} (UUID: GPU-{g:08d}-0000-0000-0000-000000000000)")
        out += [f"\t Link {k}: {'25.781 GB/s' if k in up else '<inactive>'}" for k in range(links)]
    return "\n".join(out)


def nvlink_answer(text: str) -> list[tuple[str, str]]:
    return [(c, conf) for c, conf, _ in ranked(text) if c == "nvlink_link_failure"]


def test_two_gpus_with_the_same_links_up_may_be_a_board_that_wires_fewer():
    text = nvlink_s({0: {0, 2}, 1: {1, 2}})
    assert facts(text)[("host", "host.nvlink_inactive_maybe_by_design")] is True
    assert ranked(text)[0][:2] == ("nvlink_link_failure", "unsure")  # still named, never likely on a healthy board
    assert confident_faults(text) == []


def test_two_gpus_with_different_links_up_are_a_fault():
    text = nvlink_s({0: {0, 1, 2, 3}, 1: {1, 2}})
    assert ("host", "host.nvlink_inactive_maybe_by_design") not in facts(text)
    assert ("nvlink_link_failure", "likely") in nvlink_answer(text)


def test_one_gpu_shown_or_more_than_two_gpus_keep_the_fault():
    assert ("nvlink_link_failure", "likely") in nvlink_answer(nvlink_s({3: {0, 1, 2, 4}}))
    eight = nvlink_s({g: set(range(10)) for g in range(8)}, name="NVIDIA A100-SXM4-80GB", links=12)
    assert ("host", "host.nvlink_inactive_maybe_by_design") not in facts(eight)
    assert ("nvlink_link_failure", "likely") in nvlink_answer(eight)


NHC = ("ERROR:  nhc:  Health check failed:  check_nvlink_status: GPU 0 has nvlinks inactive:     Link {0}: Inactive\n"
       + "\n".join("         Link {%d}: Inactive" % i for i in range(1, 5)))


def test_nhc_inactive_links_are_read_and_the_bridge_spare_layout_is_in_doubt():
    spare = NHC.format(4, 5, 10, 11, 16)
    f = facts(spare)
    assert f[("gpu:0", "gpu.nvlink_down")] == 5
    assert f[("host", "host.nvlink_inactive_maybe_by_design")] is True
    assert confident_faults(spare) == []
    other = NHC.format(0, 1, 2, 3, 6)
    assert facts(other)[("gpu:0", "gpu.nvlink_down")] == 5
    assert ("host", "host.nvlink_inactive_maybe_by_design") not in facts(other)
    assert ("nvlink_link_failure", "likely") in nvlink_answer(other)


def test_a_single_spare_link_down_on_an_sxm_gpu_is_no_layout():
    text = nvlink_s({0: set(range(18)) - {4}}, name="NVIDIA H100 80GB HBM3", links=18)
    assert ("host", "host.nvlink_inactive_maybe_by_design") not in facts(text)
    assert ("nvlink_link_failure", "likely") in nvlink_answer(text)


RBT = """    RocmBandwidthTest Version: 2.6.0

    Device: 0,  AMD EPYC 7742 64-Core Processor
    Device: 1,  Instinct MI100,  GPU-0123456789abcdef,  43:0.0
    Device: 2,  Instinct MI100,  GPU-fedcba9876543210,  63:0.0

    Device Access

    D/D       0         1         2

    0         1         1         1

    1         1         1         {access}

    2         1         {access}         1

    Data Path Validation

    D/D       0           1           2

    0         N/A         {h2d}        PASS

    1         PASS        PASS        {p2p}

    2         PASS        {p2p}        PASS
"""


def test_rocm_bandwidth_test_validation_between_cpu_and_gpu_is_the_host_link():
    text = RBT.format(access=1, h2d="FAIL", p2p="PASS")
    f = facts(text)
    assert f[("host", "tool.host_copy_corrupt")] is True
    assert ("host", "symptom.wrong_results") not in f
    assert f[("pair:0-1", "p2p.read")] == "OK"
    assert ranked(text)[0][0] == "pcie_link_degraded"


def test_rocm_bandwidth_test_validation_between_gpus_is_wrong_data_and_all_pass_is_quiet():
    f = facts(RBT.format(access=0, h2d="PASS", p2p="FAIL"))
    assert f[("host", "symptom.wrong_results")] is True and f[("pair:0-1", "bench.integrity")] == "corrupt"
    assert f[("pair:0-1", "p2p.read")] == "NOT_SUPPORTED"
    healthy = RBT.format(access=1, h2d="PASS", p2p="PASS")
    assert ("host", "tool.host_copy_corrupt") not in facts(healthy)
    assert confident_faults(healthy) == []


def test_tensorrt_llms_peer_access_refusal_is_the_shared_refusal():
    # tensorrt_llm/_ipc_utils.py set_peer_access: cudaDeviceCanAccessPeer returned 0 -> "Can't enable access between
    # nodes A and B": the same answer as simpleP2P's 'No', which a GeForce, a VM or a pair across sockets all give
    bare = "RuntimeError: Can't enable access between nodes 1 and 0"
    assert confident_faults(bare) == []
    assert {"vm_p2p_unavailable", "p2p_unsupported_consumer_gpu", "p2p_unsupported_topology"} <= {c for c, _, _ in ranked(bare)}
    geforce = bare + "\n4x NVIDIA GeForce RTX 4090, tp_size=4"
    assert "p2p_unsupported_consumer_gpu" in confident_faults(geforce)


# lspci -vv's Resizable BAR capability (pciutils ls-ecaps.c cap_rebar)
REBAR_BLOCK = """01:00.0 VGA compatible controller: NVIDIA Corporation GA102 [GeForce RTX 3090] (rev a1)
\tRegion 0: Memory at fb000000 (32-bit, non-prefetchable) [size=16M]
\tRegion 1: Memory at 7800000000 (64-bit, prefetchable) [size={size}]
\tRegion 3: Memory at 7c00000000 (64-bit, prefetchable) [size=32M]
\tCapabilities: [bb0 v1] Physical Resizable BAR
\t\tBAR 0: current size: 16MB, supported: 16MB
\t\tBAR 1: current size: {size}B, supported: 64MB 128MB 256MB 512MB 1GB 2GB 4GB 8GB 16GB 32GB
\t\tBAR 3: current size: 32MB, supported: 32MB
"""


def test_resizable_bar_lines_give_bar1_with_or_without_their_header():
    assert facts(REBAR_BLOCK.format(size="32G"))[("gpu:0", "gpu.bar1_mb")] == 32768
    loose = "\n".join(REBAR_BLOCK.format(size="256M").splitlines()[5:])  # grep -A3 "Resizable BAR": no header
    assert facts(loose)[("gpu:0", "gpu.bar1_mb")] == 256
    assert ("bar1_too_small", "unsure") in [(c, conf) for c, conf, _ in ranked(loose)]


def test_resizable_bar_lines_of_another_layout_are_no_nvidia_bar1():
    amd = ("\t\tBAR 0: current size: 256MB, supported: 256MB 512MB 1GB 2GB 4GB 8GB 16GB\n"
           "\t\tBAR 2: current size: 2MB, supported: 2MB 4MB 8MB\n")
    assert not [k for k in facts(amd) if k[1] == "gpu.bar1_mb"]


# DCGM's messages (dcgm_errors.h): DCGM_FR_NVLINK_DOWN, DCGM_FR_GPU_EXPECTED_NVLINKS_UP
DCGM_DOWN = """| Overall Health            | Failure                                       |
|    -> NVLINK system       | Failure                                       |
|                           | GPU 0's NvLink link 0 is currently down ...   |
|                           | GPU 0's NvLink link 1 is currently down ...   |
"""


def test_dcgm_links_down_on_gpus_not_named_are_in_doubt_and_on_sxm_parts_a_fault():
    f = facts(DCGM_DOWN)
    assert f[("gpu:0", "gpu.nvlink_down")] == 2
    assert f[("host", "host.nvlink_inactive_maybe_by_design")] is True  # DCGM#49: a PCIe card with no bridge reads so
    assert ("nvlink_link_failure", "unsure") in [(c, conf) for c, conf, _ in ranked(DCGM_DOWN)]
    sxm = "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-1)\n" + DCGM_DOWN
    assert ("host", "host.nvlink_inactive_maybe_by_design") not in facts(sxm)
    assert "nvlink_link_failure" in confident_faults(sxm)


def test_dcgm_fewer_links_up_than_expected_is_a_fault():
    text = "| NVLink                    | Fail - GPU 3: Only 10 NvLinks are up out of the expected 12 |"
    assert facts(text)[("host", "gpu.nvlink_down")] == 2
    assert "nvlink_link_failure" in confident_faults(text)


def test_every_link_inactive_on_a_bridged_pcie_card_may_be_no_bridge_and_on_sxm_is_a_fault():
    pcie = ("GPU 0: NVIDIA A100 80GB PCIe (UUID: GPU-1)\n"
            "NVML: Unable to retrieve NVLink information as all links are inActive\n")
    assert facts(pcie)[("host", "host.nvlink_inactive_maybe_by_design")] is True
    assert confident_faults(pcie) == []
    sxm = pcie.replace("A100 80GB PCIe", "B200")
    assert ("host", "host.nvlink_inactive_maybe_by_design") not in facts(sxm)
    assert "nvlink_link_failure" in confident_faults(sxm)


def test_a_bridge_named_beside_every_link_inactive_is_the_bridges_fault():
    text = "\n".join([nvlink_s({0: set(), 1: set()}, name="NVIDIA GeForce RTX 3090", links=4),
                      "I installed the NVLink bridge but nvidia-smi shows all links inactive"])
    assert ("host", "host.nvlink_inactive_maybe_by_design") not in facts(text)
    assert "nvlink_link_failure" in confident_faults(text)
    assert ("host", "host.nvlink_inactive_maybe_by_design") in facts(nvlink_s({0: set(), 1: set()}, name="NVIDIA GeForce RTX 3090", links=4))


def test_two_geforce_architectures_with_no_pair_granted_stay_the_geforce_policy():
    text = can_lines(["NVIDIA GeForce RTX 3090", "NVIDIA GeForce RTX 4090"], set())
    assert ("host", "host.p2p_refused_only_across_models") not in facts(text)
    assert "p2p_unsupported_consumer_gpu" in confident_faults(text)
    dc = can_lines(["Tesla V100-PCIE-32GB", "NVIDIA A100-PCIE-40GB"], set())
    assert facts(dc)[("host", "host.p2p_refused_only_across_models")] is True


def test_a_bandwidth_written_beside_what_it_should_be_is_judged_against_it():
    slow = "GPU4<->GPU5: 13.5 GB/s   <- should be ~103 GB/s"
    assert facts(slow)[("host", "symptom.slow")] is True
    assert facts("P2P reaches only ~13-27 GB/s instead of expected ~100 GB/s")[("host", "symptom.slow")] is True
    assert ("host", "symptom.slow") not in facts("GPU0<->GPU1: 95.1 GB/s (expected ~103 GB/s)")
    assert ("host", "symptom.slow") not in facts("12 GB/s should be 100 MB/s")  # units differ: no judgement


def test_the_samples_own_device_names_decide_over_nvidia_smis_order():
    # nvidia-smi numbers by PCI bus, CUDA fastest first: in a mixed rig the same index may be another card
    smi = ("| NVIDIA-SMI 550.54.15              Driver Version: 550.54.15      CUDA Version: 12.4     |\n"
           "+-----------------------------------------------------------------------------------------+\n"
           "|   0  NVIDIA GeForce RTX 3090        Off |   00000000:01:00.0 Off |                  N/A |\n"
           "|   1  NVIDIA GeForce RTX 4090        Off |   00000000:02:00.0 Off |                  Off |\n"
           "|   2  NVIDIA GeForce RTX 4090        Off |   00000000:03:00.0 Off |                  Off |\n")
    sample = can_lines(["NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 4090", "NVIDIA GeForce RTX 3090"], {(0, 1)})
    assert facts(smi)[("gpu:2", "gpu.name")] == "NVIDIA GeForce RTX 4090"
    assert facts(smi + sample)[("host", "host.p2p_refused_only_across_models")] is True
