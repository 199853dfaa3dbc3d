"""Tool outputs as people paste them: cut above the header, tabs, odd case and spacing, partial runs.

Each paste is written here after the tool's own output format (nvidia-smi topo's matrix and legend,
cuda-samples' p2pBandwidthLatencyTest.cu and simpleP2P.cu printf formats, NCCL's WARN lines, NVRM's
Xid message, nv-fabricmanager's version message); none is copied from the evaluation corpus.
"""

from __future__ import annotations

from p2ptop.commands.explain import answer
from p2ptop.evidence import read_text
from p2ptop.knowledge import load_kb

KB = load_kb()


def facts(text):
    return read_text(text).facts_by_subject()


def test_a_topo_p2p_matrix_cut_above_its_header_is_still_read():
    f = facts(" GPU0   X     CNS   CNS\n GPU1   CNS   X     OK\n GPU2   CNS   OK    X\n")
    assert f["pair:0-1"]["p2p.read"] in ("CHIPSET_NOT_SUPPORTED",)
    assert f["pair:1-2"]["p2p.read"] == "OK"


def test_a_topo_m_matrix_cut_above_its_header_gives_paths():
    f = facts("GPU0\t X \tSYS\t0-15\t0\nGPU1\tSYS\t X \t16-31\t1\n")
    assert f["pair:0-1"]["pair.path"] == "SYS"


def test_a_row_that_only_looks_like_a_matrix_row_is_not_one():
    assert "pair:0-1" not in facts("GPU0 X is what we call the first card\n")


def test_p2p_connectivity_matrix_zeros_are_pairs_without_peer_access():
    f = facts("P2P Connectivity Matrix\n     D\\D     0     1     2\n     0\t     1     1     0\n"
              "     1\t     1     1     0\n     2\t     0     0     1\n")
    assert f["pair:0-1"]["bench.peer_access"] == "ok"
    assert f["pair:0-2"]["bench.peer_access"] == "cudaErrorPeerAccessUnsupported"
    assert f["pair:1-2"]["bench.peer_access"] == "cudaErrorPeerAccessUnsupported"


def test_can_access_peer_lines_in_any_case_and_spacing():
    f = facts("Device=0 cannot access peer device=1\nDevice = 1   CANNOT Access Peer Device = 0\n")
    assert f["pair:0-1"]["bench.peer_access"] == "cudaErrorPeerAccessUnsupported"


def test_simplep2p_that_fails_its_check_is_a_symptom():
    text = ("[simpleP2P] - Starting...\n> Peer access from NVIDIA RTX A6000 (GPU0) -> NVIDIA RTX A6000 (GPU1) : Yes\n"
            "Verification error @ element 3: val = 0.000000, ref = 12.000000\nTest failed!\n")
    f = facts(text)["host"]
    assert f["tool.verification_error"] is True and f["symptom.wrong_results"] is True
    assert f["error.text"] == "Test failed!"


def test_an_nccl_warn_that_says_something_failed_is_the_error_line():
    text = ("node1:77:77 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>\n"
            "node1:77:90 [0] include/shm.h:28 NCCL WARN Call to posix_fallocate failed : No space left on device\n")
    f = facts(text)["host"]
    assert "posix_fallocate failed" in f["error.text"]
    a = answer(KB, text, [], 3)
    assert a["results"], "an NCCL WARN that says it failed must not be answered with silence"


def test_a_plain_nccl_info_log_has_no_error_line():
    f = facts("node1:77:77 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\nnode1:77:90 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM\n")
    assert "error.text" not in f["host"]


def test_fallen_off_the_bus_in_a_sentence_is_a_lost_gpu():
    f = facts("GPU has fallen off the bus after an hour of training on the second card.")["host"]
    assert f["gpu.lost"] is True


def test_fabric_managers_version_message_is_its_failure():
    # the failure it names: its version does not match the driver's (the state the version-mismatch entry reads)
    f = facts("nv-fabricmanager[2201]: fabric manager NVIDIA GPU driver interface version 550.54.14 don't match "
              "with driver version 550.90.07. Please update with matching NVIDIA driver package.")["host"]
    assert f["host.fabric_manager"] == "version mismatch"


def test_topo_p2p_codes_said_in_a_sentence():
    f = facts("nvidia-smi topo -p2p r shows CNS for every pair on the dual-socket box, and training hangs.")["host"]
    assert f["p2p.read"] == "CHIPSET_NOT_SUPPORTED" and f["symptom.hang"] is True
    # the tool's legend line is no report
    assert "p2p.read" not in facts("Legend:\n  X    = Self\n  CNS  = Chipset not supported\n")["host"]


def test_hang_words_from_the_frameworks_and_slow_words():
    assert facts("the collective keeps timing out after 600 s on two GPUs")["host"]["symptom.hang"] is True
    assert facts("NCCL all_reduce is much lower than expected on our 8 GPUs")["host"]["symptom.slow"] is True
    assert "symptom.hang" not in facts("we set the timeout to 600 s for 8 GPUs")["host"]
    assert "symptom.fails" not in facts("ls: cannot access '/dev/nvidia1': No such file or directory")["host"]
    assert facts("GPU0 cannot access the peer GPU1 memory")["host"]["symptom.fails"] is True


def test_gpu_families_named_in_prose():
    def host(t):
        return facts(f"We run {t} and NCCL hangs.")["host"]
    assert host("4x 2080 Ti GPUs")["gpu.consumer"] is True          # Turing GeForce after a count
    assert host("two NVIDIA L4 GPUs")["gpu.product_class"] == "data-centre"
    assert "gpu.name" not in host("level L4 of the cache on 2 nodes")  # L4 alone is no GPU
    assert host("RTX A6000 cards")["gpu.consumer"] is False          # workstation, not GeForce


def test_hypervisors_and_vgpu_named_in_prose():
    assert facts("Two A100s in XCP-ng guests and NCCL hangs.")["host"]["host.hypervisor"] == "Xen"
    assert facts("An OpenStack instance with 4 H100 and NCCL is stuck.")["host"]["host.hypervisor"] == "KVM"
    f = facts("Each VM has an A40 vGPU profile and P2P fails.")["host"]
    assert f["gpu.virtualization"] == "VGPU" and f["host.virtualized"] is True


def test_the_peer_access_query_answering_no_in_words_is_p2p_unavailable():
    f = facts("On 2x RTX 3090, torch.cuda.can_device_access_peer(0, 1) returns False.")["host"]
    assert f["p2p.read"] == "NOT_SUPPORTED"
    assert facts("cudaDeviceCanAccessPeer reports 1 for both GPUs")["host"]["p2p.read"] == "OK"
    a = answer(KB, "Our 2x RTX 3090 workstation: torch.cuda.can_device_access_peer returns False.", [], 3)
    assert "p2p_unsupported_consumer_gpu" in [m.entry.failure_class for m, _ in a["results"]]


def test_more_symptom_words():
    assert facts("With two GPUs in a KVM guest peer to peer transfers don't happen.")["host"]["symptom.fails"] is True
    assert facts("P2P copies between the GPUs go through the host instead.")["host"]["symptom.fails"] is True
    assert facts("NCCL tests time out unless P2P is disabled on 4 GPUs")["host"]["symptom.hang"] is True
    assert facts("The GPU vanishes under heavy P2P load until a reboot.")["host"]["gpu.lost"] is True
    assert "gpu.lost" not in facts("The GPU is fine; the warning vanished after the update.")["host"]


def test_nvlink_trouble_in_words_is_a_count_of_at_least_one():
    f = facts("One NVLink between GPU 1 and GPU 2 shows lots of replay errors.")["host"]
    assert f["gpu.nvlink_replay_recovery"] == 1
    assert facts("nvidia-smi nvlink -s shows two links inactive on GPU3")["host"]["gpu.nvlink_down"] == 1
    assert "gpu.nvlink_down" not in facts("Is NVLink disabled by NCCL_P2P_DISABLE=1 on our 8 GPUs?")["host"]


def test_passes_only_with_p2p_disabled_and_times_out_otherwise():
    f = facts("NCCL tests pass with NCCL_P2P_DISABLE=1 but time out otherwise on our 4-GPU server.")["host"]
    assert f["symptom.fixed_by_p2p_disable"] is True and f["symptom.hang"] is True


def test_chinese_card_words_and_paths_said_in_a_sentence():
    f = facts("两张卡在不同的 NUMA 节点上，topo 显示 SYS，P2P 带宽只有 10GB/s")["host"]
    assert "symptom.hang" not in f  # 两张卡在… is "two cards are on…", not "stuck at"
    assert f["pair.path"] == "SYS" and f["pair.cross_socket"] is True and f["symptom.slow"] is True
    assert facts("多卡训练卡在第一个 step 不动")["host"]["symptom.hang"] is True
    assert facts("nvidia-smi topo -m shows PHB between GPU0 and GPU1")["host"]["pair.path"] == "PHB"


def test_dcgmi_diag_p2p_failures_are_wrong_data_and_an_error_line():
    # DCGM's own messages (dcgm_errors.h DCGM_FR_BROKEN_P2P_*_DEVICE, DCGM_FR_NVSWITCH_NVLINK_DOWN)
    text = ("| PCIe                      | Fail - All                                     |\n"
            "| Warning                   | GPU 1 was unsuccessfully written to by 0 in a peer-to-peer test: x |\n")
    ev = read_text(text)
    f = ev.facts_by_subject()["host"]
    assert "dcgmi" in ev.kinds and f["tool.verification_error"] is True and f["symptom.wrong_results"] is True
    assert facts("NVSwitch 2's NvLink 17 is down.")["host"]["gpu.nvlink_down"] == 1
    assert "dcgmi" not in read_text("| PCIe                      | Pass                                           |\n").kinds


def test_nccl_tests_out_of_bounds_summary():
    assert facts("# Out of bounds values : 24 FAILED\n# Avg bus bandwidth    : 3.2\n")["host"]["tool.verification_error"] is True
    assert "tool.verification_error" not in facts("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 3.2\n")["host"]


def test_nccl_transport_said_in_words():
    assert facts("在 Proxmox 虚拟机里直通了两张 A100，NCCL 走的是 SHM 而不是 P2P，速度很慢")["host"]["nccl.transport"] == "SHM"
    assert facts("NCCL falls back to NET/Socket between the two GPUs")["host"]["nccl.transport"] == "NET/Socket"
    assert "nccl.transport" not in facts("We use NCCL 2.21 on 8 GPUs.")["host"]


def test_failure_slow_and_wrong_data_phrasings():
    def sym(t):
        return {k for k, v in facts(t)["host"].items() if k.startswith("symptom.") and v}
    assert "symptom.fails" in sym("I cannot get NCCL to use NVLink between my two A100")
    assert "symptom.fails" in sym("The driver refuses to enable P2P on the 4090s")
    assert "symptom.fails" in sym("两张卡 P2P 用不了")
    assert "symptom.slow" in sym("All-reduce reaches half the expected bandwidth on 8 GPUs")
    assert "symptom.wrong_results" in sym("results differ between GPU0 and GPU1 after the copy")
    assert not sym("We get NCCL to use NVLink on all 8 GPUs and it is fast.")


def test_a_symptom_said_to_be_absent_is_none():
    def sym(t):
        return {k for k, v in facts(t)["host"].items() if k.startswith("symptom.") and v}
    assert not sym("After the fix it no longer hangs on 2 GPUs.")
    assert not sym("We upgraded the driver to 550 and NCCL to 2.21 on the H100 nodes; no issues so far.")
    assert not sym("多卡通信没有问题")
    assert sym("NCCL does not hang but it is slow on 2 GPUs") >= {"symptom.slow"}
    assert "symptom.hang" not in sym("NCCL does not hang but it is slow on 2 GPUs")
    assert "symptom.hang" in sym("without NCCL_P2P_DISABLE it hangs on 2 GPUs")


def test_nvidia_smis_own_failures_are_symptom_lines():
    ev = read_text("No devices were found")
    f = ev.facts_by_subject()["host"]
    assert "nvidia-smi" in ev.kinds and f["error.text"] == "No devices were found" and f["host.gpu_count"] == 0
    a = answer(KB, "No devices were found", [], 3)
    pair_classes = {"p2p_unsupported_topology", "p2p_unsupported_consumer_gpu", "iommu_acs_p2p_broken"}
    assert a["results"] and not pair_classes & {m.entry.failure_class for m, _ in a["results"]}
    table = ("|   1  NVIDIA A100-SXM4-80GB          On  | 00000000:0F:00.0 Off |                  ERR! |\n"
             "| ERR!   ERR! ERR!    ERR! /  ERR! |   0MiB / 81920MiB |     ERR!     Default |\n")
    assert "ERR!" in read_text(table).facts_by_subject()["host"]["error.text"]
    assert "error.text" not in read_text("The cell said ERR! in my spreadsheet").facts_by_subject().get("host", {})
