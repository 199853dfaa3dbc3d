"""Text evidence on real pastes: the repository's captures of the H200 host, the KB's real log
fixtures (tests/fixtures/kb/logs) and excerpts of public threads (tests/fixtures/pastes/index.json,
tests/fixtures/nccl_logs/index.json name each source)."""

import json
from pathlib import Path

import pytest

from p2ptop.evidence import read_text
from p2ptop.findings import FACT_KEYS

HERE = Path(__file__).parent
PASTES = HERE / "fixtures" / "pastes"
KB_LOGS = HERE / "fixtures" / "kb" / "logs"
NCCL_LOGS = HERE / "fixtures" / "nccl_logs"
H200 = HERE / "fixtures" / "captures" / "h200x2-nvswitch-vm"
H200_LIVE = HERE / "fixtures" / "captures" / "h200x2-live"
SHARED = HERE.parent.parent / "shared" / "captures"


def facts(text):
    return read_text(text).facts_by_subject()


def paste(name):
    return (PASTES / name).read_text()


def test_index_names_every_paste_with_a_source():
    index = json.loads((PASTES / "index.json").read_text())
    assert {e["file"] for e in index} == {p.name for p in PASTES.glob("*.txt")}
    assert all(e["source"].startswith("https://github.com/") for e in index)


def test_every_fact_key_is_in_the_vocabulary_and_every_finding_cites_a_line():
    texts = [p.read_text() for p in [*PASTES.glob("*.txt"), *KB_LOGS.glob("*.log"), *NCCL_LOGS.glob("*.log"),
                                     *H200.glob("*.txt"), *H200.glob("*.xml")]]
    for text in texts:
        ev = read_text(text)
        assert ev.failed_parsers == []
        for f in ev.findings:
            assert f.id.startswith("text.")
            for k in f.facts:
                assert k in FACT_KEYS or k.startswith("env."), k
            cite = f.evidence[0].removeprefix("inferred from ") if f.evidence else ""  # a fact read from a line's shape
            assert cite.startswith("line ")
            no = int(cite.split()[1])
            assert 1 <= no <= len(text.split("\n"))
        json.dumps(ev.to_dict())


# --- nvidia-smi topo -m / -p2p -------------------------------------------------------------


def test_topo_h200_nv18_pair():
    ev = read_text((H200 / "nvidia-smi-topo-m.txt").read_text())
    assert ev.kinds == ["nvidia-smi-topo"]
    fb = ev.facts_by_subject()
    assert fb["pair:0-1"] == {"pair.path": "NV18", "pair.nvlink_count": 18, "pair.cross_socket": False}
    assert fb["host"]["host.gpu_count"] == 2
    assert ev.evidence_for("pair:0-1", "pair.path")[0].startswith("line 2 of the paste: GPU0 X NV18")
    topo = ev.structured["topo"]
    assert topo.cpu_affinity == {0: "0-31", 1: "0-31"} and topo.numa == {0: 0, 1: 0} and topo.gpu_numa == {0: None, 1: None}


def test_topo_tabs_with_nic_rows_and_the_same_paste_wrapped():
    for name in ("topo-m-4090x8-tabs-nics.txt", "topo-m-4090x8-wrapped.txt"):
        ev = read_text(paste(name))
        fb = ev.facts_by_subject()
        pairs = [s for s in fb if s.startswith("pair:")]
        assert len(pairs) == 28, name
        assert all(fb[p]["pair.path"] == "SYS" and fb[p]["pair.cross_socket"] for p in pairs)
        topo = ev.structured["topo"]
        assert topo.cpu_affinity[4] == "56-111,168-223" and topo.numa[4] == 1, name
        assert topo.nic_paths[(6, "NIC0")] == "PHB"
        assert fb["host"]["host.gpu_count"] == 8


def test_topo_16_gpus_old_driver_with_mlx5_columns():
    ev = read_text(paste("topo-m-dgx2-16gpu.txt"))
    fb = ev.facts_by_subject()
    assert len([s for s in fb if s.startswith("pair:")]) == 120
    assert fb["pair:0-15"]["pair.path"] == "NV6" and fb["pair:14-15"]["pair.nvlink_count"] == 6
    topo = ev.structured["topo"]
    assert not topo.has_numa_column and topo.cpu_affinity[15] == "24-47,72-95"
    assert topo.nic_paths[(2, "mlx5_1")] == "PIX"


def test_topo_header_after_a_prompt_and_space_aligned():
    fb = facts(paste("topo-m-5070x2-prompt-on-header.txt"))
    assert fb["pair:0-1"]["pair.path"] == "PHB"


def test_topo_p2p_matrix_to_nvml_status_names():
    ev = read_text(paste("topo-p2p-r-5090x2-gns.txt"))
    assert "nvidia-smi-topo-p2p" in ev.kinds
    assert ev.facts_by_subject()["pair:0-1"]["p2p.read"] == "GPU_NOT_SUPPORTED"
    ev = read_text((H200 / "nvidia-smi-topo-p2p.txt").read_text())
    fb = ev.facts_by_subject()["pair:0-1"]
    assert fb["p2p.read"] == "OK" and fb["p2p.pci"] == "NOT_SUPPORTED" and fb["p2p.atomics"] == "OK"


# --- nvidia-smi -q, table, nvlink --------------------------------------------------------


def test_smi_q_xml_of_the_h200_host():
    ev = read_text((H200 / "nvidia-smi-q.xml").read_text())
    fb = ev.facts_by_subject()
    assert fb["host"]["host.driver_version"] == "580.159.04" and fb["host"]["host.cuda_driver_version"] == "13.0"
    g = fb["gpu:1"]
    assert g["gpu.name"] == "NVIDIA H200" and g["gpu.architecture"] == "Hopper" and g["gpu.consumer"] is False
    assert (g["gpu.pcie_gen_cur"], g["gpu.pcie_gen_max"], g["gpu.pcie_width_cur"], g["gpu.pcie_width_max"]) == (5, 5, 16, 16)
    assert g["gpu.virtualization"] == "PASSTHROUGH" and fb["host"]["host.virtualized"] is True
    assert g["gpu.fabric_state"] == "COMPLETED" and g["gpu.bar1_mb"] == 262144 and g["gpu.mig"] is False
    assert ev.structured["smi_q"]["gpus"][1]["bus_id"] == "0000:00:07.0"


def test_smi_q_xml_truncated_still_reads_what_is_there():
    text = (H200 / "nvidia-smi-q.xml").read_text()
    fb = facts(text[: len(text) // 3])
    assert fb["gpu:0"]["gpu.name"] == "NVIDIA H200" and "gpu:1" not in fb


def test_smi_table_versions_names_bus_ids_and_mig():
    text = """+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 610.57.04              KMD Version: 610.57.04     CUDA UMD Version: 13.3     |
+-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA RTX 6000 Ada Gene...    Off |   00000000:01:00.0 Off |                  Off |
| 30%   39C    P8             29W /  300W |      18MiB /  49140MiB |      0%      Default |
|                                         |                        |                  N/A |
+-----------------------------------------+------------------------+----------------------+
|   1  NVIDIA GeForce RTX 4090        Off |   00000000:4B:00.0 Off |                  Off |
| 30%   35C    P8             20W /  450W |       1MiB /  49140MiB |      0%      Default |
|                                         |                        |             Disabled |
"""  # https://github.com/aikitoria/open-gpu-kernel-modules/issues/38 (as posted; the MIG cell of GPU1 set to Disabled here)
    ev = read_text(text)
    fb = ev.facts_by_subject()
    assert fb["host"]["host.driver_version"] == "610.57.04" and fb["host"]["host.cuda_driver_version"] == "13.3"
    assert fb["gpu:0"]["gpu.product_class"] == "workstation" and fb["gpu:0"]["gpu.architecture"] == "Ada"
    assert fb["gpu:1"]["gpu.consumer"] is True and fb["gpu:1"]["gpu.mig"] is False and "gpu.mig" not in fb["gpu:0"]
    assert fb["host"]["host.gpu_count"] == 2


def test_nvlink_status_inactive_links():
    fb = facts((KB_LOGS / "azhpc-73-nvlink-inactive.log").read_text())
    assert fb["gpu:3"]["gpu.nvlink_down"] == 2
    fb = facts((H200_LIVE / "nvidia-smi-nvlink-s.txt").read_text())
    assert fb["gpu:0"]["gpu.nvlink_down"] == 0 and fb["gpu:1"]["gpu.nvlink_down"] == 0


def test_nvlink_error_counters():
    text = "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-x)\n\t Link 0: Replay Errors: 3\n\t Link 0: Recovery Errors: 1\n\t Link 0: CRC Errors: 7\n"
    fb = facts(text)["gpu:0"]
    assert fb["gpu.nvlink_errors"] == 11 and fb["gpu.nvlink_replay_recovery"] == 4


# --- lspci, kernel log ---------------------------------------------------------------------


def test_lspci_acs_redirect_and_acs_off():
    ev = read_text(paste("lspci-plx-acs-redirect.txt"))
    fb = ev.facts_by_subject()["host"]
    assert fb["host.acs_redirect"] is True and ev.evidence_for("host", "host.acs_redirect")[0].startswith("line 2 ")
    fb = facts((KB_LOGS / "nccl-606-acsctl-srcvalid.log").read_text())["host"]
    assert fb["host.acs_redirect"] is False  # SrcValid+ alone: ACS on (host.acs_enabled), no redirect
    assert fb["host.acs_enabled"] is True


def test_lspci_link_below_capability_on_a_gpu():
    text = ("3b:00.0 3D controller: NVIDIA Corporation GA100 [A100 PCIe 80GB] (rev a1)\n"
            "\t\tLnkCap:\tPort #0, Speed 16GT/s, Width x16, ASPM not supported\n"
            "\t\tLnkSta:\tSpeed 2.5GT/s (downgraded), Width x8 (downgraded)\n")  # lspci's own line format
    ev = read_text(text)
    g = ev.facts_by_subject()["gpu:0"]
    assert (g["gpu.pcie_gen_cur"], g["gpu.pcie_gen_max"], g["gpu.pcie_width_cur"], g["gpu.pcie_width_max"]) == (1, 4, 8, 16)
    assert ev.structured["lspci"]["degraded"][0]["bdf"] == "0000:3b:00.0"


def test_kernel_log_fallen_off_the_bus_and_xid():
    fb = facts(paste("dmesg-fallen-off-bus.txt"))["host"]
    assert fb["host.xid_codes"] == "79" and fb["host.xid_latest"] == 79
    assert fb["gpu.lost"] is True and fb["symptom.crash"] is True and fb["host.driver_version"] == "570.158.01"


def test_kernel_log_iommu_faults_and_command_line():
    fb = facts(paste("dmesg-cuda-samples-48-amd-vi.txt"))["host"]
    assert fb["host.iommu_fault"] is True and fb["host.iommu_active"] is True
    text = "[    0.000000] Command line: BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro amd_iommu=on iommu=pt\n"  # the kernel's own line
    fb = facts(text)["host"]
    assert fb["host.kernel_iommu_args"] == "amd_iommu=on iommu=pt" and fb["host.iommu_passthrough"] is True


def test_fabric_manager_version_mismatch():
    fb = facts((KB_LOGS / "gpu-operator-544-fm-mismatch.log").read_text())["host"]
    assert fb["host.fabric_manager"] == "failed"


# --- NCCL logs -------------------------------------------------------------------------------


@pytest.mark.skipif(not (SHARED / "h200x2-nvswitch-vm").exists(), reason="shared captures not beside the repo")
def test_healthy_h200_nccl_log_gives_p2p_and_no_symptom():
    ev = read_text((SHARED / "h200x2-nvswitch-vm" / "nccl-2.28-allreduce-default.log").read_text())
    fb = ev.facts_by_subject()
    assert fb["pair:0-1"] == {"nccl.transport": "P2P/CUMEM"}
    assert fb["host"]["nccl.version"] == "2.28.9" and fb["host"]["env.NCCL_NVLS_ENABLE"] == "0"
    assert ev.symptom_findings == []
    # a VM from its GPUs' bus ids (NCCL's busId 60/70: 0000:00:06.0 and :07.0, on the root bus), not from
    # its name "vm"; inferred, not said: cited so, and no setup the text describes
    assert fb["host"]["host.virtualized"] is True
    vm = next(f for f in ev.findings if f.id == "text.host.virtualized")
    assert vm.evidence[0].startswith("inferred from line ") and "busId" in vm.evidence[0]


def test_nccl_shm_on_an_nv18_pair_is_a_fallback():
    topo = (H200 / "nvidia-smi-topo-m.txt").read_text()
    log = ("vm:1:1 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to LOC\n"
           "vm:1:1 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 60 commId 0x5 - Init COMPLETE\n"
           "vm:2:2 [1] NCCL INFO comm 0x2 rank 1 nranks 2 cudaDev 1 nvmlDev 1 busId 70 commId 0x5 - Init COMPLETE\n"
           "vm:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct\n")
    ev = read_text(topo + "\n" + log)
    fb = ev.facts_by_subject()
    assert fb["pair:0-1"]["nccl.transport"] == "SHM" and fb["pair:0-1"]["nccl.p2p_fallback"] is True
    assert fb["host"]["env.NCCL_P2P_LEVEL"] == "LOC"


def test_nccl_ranks_map_to_gpus_by_bus_id_when_the_paste_names_them():
    smi = (H200 / "nvidia-smi-q.xml").read_text()
    # rank 0 on the GPU at 00:07.0 (GPU1), rank 1 at 00:06.0 (GPU0): by bus id, not by rank number
    log = ("vm:1:1 [1] NCCL INFO comm 0x1 rank 0 nranks 3 cudaDev 1 nvmlDev 1 busId 70 commId 0x5 - Init COMPLETE\n"
           "vm:2:2 [0] NCCL INFO comm 0x2 rank 1 nranks 3 cudaDev 0 nvmlDev 0 busId 60 commId 0x5 - Init COMPLETE\n"
           "vm:1:1 [1] NCCL INFO Channel 00/0 : 0[1] -> 1[0] via P2P/CUMEM\n")
    ev = read_text(smi + "\n" + log)
    assert ev.facts_by_subject()["pair:0-1"]["nccl.transport"] == "P2P/CUMEM"


def test_nccl_could_not_enable_p2p_means_fallback_and_multi_node_net_is_no_gpu_pair():
    fb = facts((NCCL_LOGS / "nccl-1516-shm-could-not-enable-p2p.log").read_text())
    assert fb["pair:0-1"]["nccl.transport"] == "SHM" and fb["pair:0-1"]["nccl.p2p_fallback"] is True
    fb = facts((NCCL_LOGS / "nccl-952-ipc-socket-multinode.log").read_text())
    assert all(v.get("nccl.transport", "P2P").startswith("P2P") for s, v in fb.items() if s.startswith("pair:"))


def test_nccl_errors_and_cuda_error_in_a_warn():
    fb = facts((KB_LOGS / "ray-lightning-24-ipc.log").read_text())["host"]
    assert fb["error.nccl"] == "ncclUnhandledCudaError"
    assert fb["error.cuda"] == "cudaErrorPeerAccessUnsupported" and fb["error.cuda_code"] == 217
    assert fb["text.framework"] in ("ray", "pytorch")
    fb = facts((KB_LOGS / "nccl-290-shm.log").read_text())["host"]
    assert fb["error.nccl"] == "ncclSystemError"


# --- CUDA tools, nccl-tests -----------------------------------------------------------------


def test_p2p_bandwidth_latency_test_h200_healthy():
    ev = read_text((H200 / "p2pBandwidthLatencyTest.txt").read_text())
    fb = ev.facts_by_subject()
    assert fb["pair:0-1"]["bench.peer_access"] == "ok" and "tool.p2p_slower_than_no_p2p" not in fb["pair:0-1"]
    assert fb["gpu:0"]["gpu.name"] == "NVIDIA H200" and ev.symptom_findings == []


def test_p2p_bandwidth_latency_test_p2p_slower_than_off():
    ev = read_text(paste("p2pBandwidthLatencyTest-nccl-814-p2p-slower.txt"))
    fb = ev.facts_by_subject()
    pairs = [s for s in fb if s.startswith("pair:")]
    assert len(pairs) == 15 and all(fb[p]["tool.p2p_slower_than_no_p2p"] is True for p in pairs)
    assert fb["host"]["symptom.slow"] is True


def test_p2p_bandwidth_latency_test_cannot_access_peer():
    fb = facts(paste("p2pBandwidthLatencyTest-mixed-peers.txt"))
    assert fb["pair:0-1"]["bench.peer_access"] == "ok"
    assert fb["pair:0-2"]["bench.peer_access"] == "cudaErrorPeerAccessUnsupported"
    assert fb["gpu:2"]["gpu.architecture"] == "Blackwell" and fb["gpu:0"]["gpu.consumer"] is True


def test_simple_p2p_healthy_and_verification_error():
    ev = read_text(paste("simpleP2P-l4-healthy.txt"))
    fb = ev.facts_by_subject()
    assert fb["pair:0-1"]["bench.peer_access"] == "ok" and fb["pair:0-1"]["pair.path"] == "SYS"
    assert ev.symptom_findings == [] and "simpleP2P" in ev.kinds
    fb = facts("> Peer access from NVIDIA GeForce RTX 4090 (GPU0) -> NVIDIA GeForce RTX 4090 (GPU1) : Yes\n"
               "Verification error @ element 1: val = 0.000000, ref = 4.000000\nTest failed!\n")
    assert fb["host"]["tool.verification_error"] is True and fb["host"]["symptom.wrong_results"] is True


def test_nvbandwidth_and_nccl_tests_of_the_h200_host():
    ev = read_text((H200 / "nvbandwidth.txt").read_text())
    assert ev.structured["tools"]["nvbandwidth"]["device_to_device_memcpy_read_ce"] == 788.01
    assert ev.symptom_findings == []
    if (SHARED / "h200x2-nvswitch-vm").exists():
        ev = read_text((SHARED / "h200x2-nvswitch-vm" / "nccl-tests-all_reduce_perf.txt").read_text())
        assert ev.structured["tools"]["nccl-tests"]["busbw_by_size"][536870912] == 313.21
        assert ev.symptom_findings == []


def test_nccl_tests_device_list_names_gpus_and_bus_ids():
    ev = read_text(paste("nccl-tests-4090x8-devices.txt"))
    fb = ev.facts_by_subject()
    assert fb["gpu:3"]["gpu.name"] == "NVIDIA GeForce RTX 4090" and fb["host"]["nccl.version"] == "2.24.3"


# --- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize("text,name,code", [
    ("RuntimeError: CUDA error: invalid device ordinal\nCUDA kernel errors might be asynchronously reported", "cudaErrorInvalidDevice", 101),
    ("cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorPeerAccessUnsupported: peer access is not supported between these two devices",
     "cudaErrorPeerAccessUnsupported", 217),
    ("jaxlib.xla_extension.XlaRuntimeError: INTERNAL: CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", "cudaErrorPeerAccessUnsupported", 217),
    ("RuntimeError: CUDART error: peer access is not supported between these\n two devices", "cudaErrorPeerAccessUnsupported", 217),
    ("torch.AcceleratorError: CUDA error: Invalid access of peer GPU memory over nvlink or a hardware error", "cudaErrorContained", 226),
    ("CUDA error 217 at ggml-cuda.cu:6292: peer access is not supp", "cudaErrorPeerAccessUnsupported", 217),
    ("CUDA error at bandwidthTest.cu:256 code=802(cudaErrorSystemNotReady)", "cudaErrorSystemNotReady", 802),
    ("RuntimeError: CUDA error: out of memory", "cudaErrorMemoryAllocation", 2),
])
def test_cuda_errors_as_frameworks_print_them(text, name, code):
    fb = facts(text)["host"]
    assert (fb["error.cuda"], fb["error.cuda_code"]) == (name, code)


def test_generic_message_needs_cuda_on_the_line():
    assert "error.cuda" not in facts("ValueError: invalid argument\n").get("host", {})


def test_tensorflow_too_many_peers_with_a_wrapped_line():
    fb = facts((KB_LOGS / "tensorflow-30887-too-many-peers.log").read_text())["host"]
    assert fb["error.cuda"] == "cudaErrorTooManyPeers" and fb["text.framework"] == "tensorflow"


def test_nccl_result_from_torch_text():
    fb = facts((KB_LOGS / "easyr1-579-shm-217.log").read_text())["host"]
    assert fb["error.nccl"] == "ncclUnhandledCudaError" and fb["error.cuda"] == "cudaErrorPeerAccessUnsupported"
    assert fb["nccl.version"] == "2.27.3"


def test_watchdog_timeout_is_a_hang():
    fb = facts("[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught collective operation timeout: "
               "WorkNCCL(SeqNum=1, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600070 milliseconds before timing out.")["host"]
    assert fb["symptom.hang"] is True and fb["text.framework"] == "pytorch"


# --- prose ------------------------------------------------------------------------------------


def test_prose_english_freeze_fixed_by_p2p_disable():
    ev = read_text(paste("prose-en-nccl-631-freeze.txt"))
    fb = ev.facts_by_subject()["host"]
    assert fb["symptom.hang"] is True and fb["symptom.fixed_by_p2p_disable"] is True
    assert "env.NCCL_P2P_DISABLE" not in fb  # a workaround, not a setting of the failing run
    assert ev.gpu_related and fb["text.language"] == "en"


def test_prose_chinese_hang_a800_and_env():
    fb = facts(paste("prose-zh-llamafactory-7300.txt"))["host"]
    assert fb["text.language"] == "zh" and fb["symptom.hang"] is True
    assert fb["gpu.architecture"] == "Ampere" and fb["gpu.product_class"] == "data-centre"
    assert fb["env.NCCL_P2P_LEVEL"] == "NVL"


def test_prose_vm_passthrough_consumer_card():
    fb = facts(paste("prose-en-nccl-175-1080ti-vm.txt"))["host"]
    assert fb["host.hypervisor"] == "KVM" and fb["host.virtualized"] is True
    assert fb["gpu.virtualization"] == "PASSTHROUGH"


def test_prose_words():
    text = ("Two RTX 4090 on an AMD EPYC 7763 board, Ubuntu in Proxmox, docker with k8s. IOMMU and ACS are on, "
            "Above 4G decoding enabled. Driver 550.54.15, NCCL 2.18.3, CUDA 12.1. P2P bandwidth is low: only 3 GB/s.")
    fb = facts(text)["host"]
    assert fb["gpu.consumer"] is True and fb["gpu.architecture"] == "Ada"
    assert (fb["host.cpu_vendor"], fb["host.hypervisor"], fb["host.container"], fb["host.kubernetes"]) == ("AMD", "Proxmox", "kubernetes", True)
    assert fb["host.bios_mentions"] == "ACS,IOMMU,Above4G"
    assert (fb["host.driver_version"], fb["nccl.version"], fb["host.cuda_runtime_version"]) == ("550.54.15", "2.18.3", "12.1")
    assert fb["symptom.slow"] is True


def test_text_without_gpus_says_so():
    ev = read_text("The build failed because the disk is full.\nPlease retry tomorrow.\n")
    assert not ev.gpu_related and ev.symptom_findings == []
    assert read_text("").findings == [] or not read_text("").gpu_related


def test_binary_or_odd_text_does_not_raise():
    ev = read_text("\x00\x1b[31mGPU0\x1b[0m\tGPU1\n\r\nGPU0 X NV4\n" + "é" * 10)
    assert ev.failed_parsers == []


def test_smi_q_text_section_without_its_header():
    ev = read_text(paste("smi-q-text-passthrough.txt"))
    fb = ev.facts_by_subject()
    assert "nvidia-smi-q" in ev.kinds
    assert fb["gpu:0"]["gpu.virtualization"] == "PASSTHROUGH" and fb["host"]["host.virtualized"] is True
    assert ev.structured["smi_q"]["gpus"][0]["uuid"] == "GPU-072b19bd-4ccf-63cf-6435-cf462aff833d"


def test_smi_q_text_with_gpu_header_pcie_mig_bar1():
    text = """==============NVSMI LOG==============

Driver Version                            : 535.104.05
CUDA Version                              : 12.2

Attached GPUs                             : 1
GPU 00000000:3B:00.0
    Product Name                          : NVIDIA A100-SXM4-80GB
    MIG Mode
        Current                           : Enabled
        Pending                           : Enabled
    GPU Virtualization Mode
        Virtualization Mode               : None
    PCI
        GPU Link Info
            PCIe Generation
                Max                       : 4
                Current                   : 1
            Link Width
                Max                       : 16x
                Current                   : 8x
    BAR1 Memory Usage
        Total                             : 131072 MiB
    Fabric
        State                             : N/A
        Status                            : N/A
"""  # the layout of nvidia-smi -q (535 driver); values chosen to test each field
    fb = facts(text)
    g = fb["gpu:0"]
    assert g["gpu.mig"] is True and g["gpu.virtualization"] == "NONE" and g["gpu.bar1_mb"] == 131072
    assert (g["gpu.pcie_gen_cur"], g["gpu.pcie_gen_max"], g["gpu.pcie_width_cur"], g["gpu.pcie_width_max"]) == (1, 4, 8, 16)
    assert "gpu.fabric_status" not in g and "host.virtualized" not in fb["host"]
    assert fb["host"]["host.driver_version"] == "535.104.05" and fb["host"]["host.cuda_driver_version"] == "12.2"


def test_p2p_fallback_rule_for_the_matcher():
    from p2ptop.evidence import is_p2p_fallback

    assert is_p2p_fallback("SHM", path="NV18") and is_p2p_fallback("NET/Socket", p2p_read="OK")
    assert not is_p2p_fallback("SHM", path="SYS") and not is_p2p_fallback("P2P/IPC", path="NV4")
    assert not is_p2p_fallback("SHM")


def test_invalid_device_ordinal_with_cuda_visible_devices_on_the_command_line():
    text = ("$ CUDA_VISIBLE_DEVICES=0 python train.py\nTraceback (most recent call last):\n"
            "  File \"train.py\", line 3, in <module>\n    torch.cuda.set_device(1)\n"
            "RuntimeError: CUDA error: invalid device ordinal\n")
    fb = facts(text)["host"]
    assert fb["error.cuda"] == "cudaErrorInvalidDevice" and fb["env.CUDA_VISIBLE_DEVICES"] == "0"
    assert fb["error.text"] == "RuntimeError: CUDA error: invalid device ordinal" and fb["text.framework"] == "pytorch"


def test_a_section_title_xid_is_no_crash_and_huge_lines_are_read():
    assert "symptom.crash" not in facts("## xid\n(none)\n").get("host", {})
    ev = read_text("x" * 3_000_000 + "\nRuntimeError: CUDA error: invalid device ordinal\n")
    assert ev.facts_by_subject()["host"]["error.cuda"] == "cudaErrorInvalidDevice"


@pytest.mark.skipif(not (SHARED / "h100x1-vm").exists(), reason="shared captures not beside the repo")
def test_single_gpu_h100_captures_have_no_symptom():
    for name in ("nvidia-smi-topo-m.txt", "nvidia-smi-topo-p2p.txt", "nvidia-smi-q.xml", "host.txt"):
        ev = read_text((SHARED / "h100x1-vm" / name).read_text())
        assert ev.symptom_findings == [], name
    assert "nvidia-smi-topo-p2p" in read_text((SHARED / "h100x1-vm" / "nvidia-smi-topo-p2p.txt").read_text()).kinds


@pytest.mark.parametrize("text,name,arch,consumer", [
    ("两张4090显卡做多卡训练，NCCL卡住", "4090", "Ada", True),
    ("我们有8张A100，跑NCCL很慢", "A100", "Ampere", False),
    ("I have 4 x 3090s", "3090", "Ampere", True),
    ("2x RTX 6000 Ada in a Proxmox VM", "RTX 6000 Ada", "Ada", False),
    ("服务器是H20，虚拟机直通", "H20", "Hopper", False),
])
def test_gpu_models_in_sentences(text, name, arch, consumer):
    fb = facts(text)["host"]
    assert (fb["gpu.name"], fb["gpu.architecture"], fb["gpu.consumer"]) == (name, arch, consumer)


def test_a_bare_number_is_no_gpu():
    assert "gpu.name" not in facts("port 4090 is open on the firewall\n").get("host", {})


@pytest.mark.parametrize("name,cuda,nccl,framework", [
    ("error-vllm-3688-invalid-argument.txt", "cudaErrorInvalidValue", "ncclUnhandledCudaError", "vllm"),
    ("error-jax-17399-nccl-init.txt", None, "ncclUnhandledCudaError", "jax"),
    ("error-jaxley-53-illegal-address.txt", "cudaErrorIllegalAddress", None, None),
    ("error-trtllm-1625-peer-access.txt", "cudaErrorPeerAccessUnsupported", None, None),
])
def test_real_framework_errors(name, cuda, nccl, framework):
    ev = read_text(paste(name))
    fb = ev.facts_by_subject()["host"]
    assert fb.get("error.cuda") == cuda and fb.get("error.nccl") == nccl
    if framework:
        assert fb["text.framework"] == framework
    assert ev.gpu_related and ev.symptom_findings


def test_each_tool_is_named_with_the_line_it_starts_on():
    ev = read_text(paste("simpleP2P-l4-healthy.txt"))
    tools = {f.facts["text.tool"]: f.evidence[0] for f in ev.findings if "text.tool" in f.facts}
    assert tools["nvidia-smi-topo"].startswith("line 1 ") and tools["simpleP2P"].startswith("line 4 ")


def test_nccl_warn_cuda_failure_401_and_acs_quoted_in_a_sentence():
    fb = facts((KB_LOGS / "nccl-1788-nvls.log").read_text())["host"]
    assert fb["error.cuda"] == "cudaErrorIllegalState" and fb["error.cuda_code"] == 401
    fb = facts((KB_LOGS / "nccl-2079-acs.log").read_text())["host"]
    assert fb["host.acs_redirect"] is True


def test_cuda_table_is_one_row_per_number_with_unique_names():
    from p2ptop.knowledge.codes import CUDA_ERRORS, cuda_error

    nums = [n for n, *_ in CUDA_ERRORS]
    assert nums == sorted(set(nums))
    for n, rt, drv, msg in CUDA_ERRORS:
        assert cuda_error(rt) == (n, rt) and cuda_error(msg) == (n, rt) and cuda_error(n) == (n, rt)
        if drv:
            assert cuda_error(drv) == (n, rt)
