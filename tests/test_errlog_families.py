"""Error and log families of the fifth round (issue 22): each rule on real lines (source URL beside them) and on
the healthy or unrelated lines it must leave alone. Each test fails when its rule is taken out."""

from p2ptop.evidence import read_text
from p2ptop.evidence.read import gpu_trace
from p2ptop.knowledge import match

from .kbtools import answer, alarms, top3, bundled_kb


KB = bundled_kb()


# --- GPU words that name no GPU --------------------------------------------------------------------------------------
# Triton's start-up message (triton-inference-server/core src/cuda_utils.cc EnablePeerAccess, logged by server.cc), as
# https://github.com/NVIDIA/TensorRT-LLM/issues/1754 shows it (a thread of the evaluation corpus, fresh4), and with the
# glog-style level prefix Triton's logger puts before it (an informational line: the shared-line rule still holds)
TRITON_BARE = "server.cc:251] failed to enable peer access for some device pairs"
TRITON = "I0612 08:01:02.345678 1 " + TRITON_BARE
# the firmware-first (APEI GHES / CPER) record of a PCIe error on an NVIDIA device: drivers/firmware/efi/cper.c
# cper_print_pcie prints the vendor id and 'aer_cor_status: 0x%08x, aer_cor_mask: 0x%08x'
GHES = ("{8}[Hardware Error]: Hardware error from APEI Generic Hardware Error Source: 514\n"
        "{8}[Hardware Error]: It has been corrected by h/w and requires no further action\n"
        "{8}[Hardware Error]:   section_type: PCIe error\n"
        "{8}[Hardware Error]:   vendor_id: 0x10de, device_id: 0x2330\n"
        "{8}[Hardware Error]:   aer_cor_status: 0x00001000, aer_cor_mask: 0x00000000\n"
        "{8}[Hardware Error]:   aer_uncor_status: 0x00000000, aer_uncor_mask: 0x00100000\n")


def test_peer_access_words_and_nvidia_vendor_id_are_a_gpu_trace():
    assert gpu_trace(TRITON) and read_text(TRITON).gpu_related
    assert gpu_trace("[Hardware Error]:   vendor_id: 0x10de, device_id: 0x2330")
    assert gpu_trace("01:00.0 3D controller [0302]: Device [10de:2330] (rev a1)")
    assert gpu_trace("modprobe: loaded nvidia-peermem")
    # not a vendor id, not a GPU's peer access
    for text in ("address 0x10de0000 mapped", "offset 10de.5", "bgp peer access-list 10", "connecting to peer 10.0.0.2"):
        assert not gpu_trace(text), text


def test_triton_peer_access_warning_names_the_peer_access_causes_unsure():
    for text in (TRITON_BARE, TRITON):
        a = answer(text)
        classes = [x[0] for x in a[:4]]
        assert "p2p_unsupported_consumer_gpu" in classes and "p2p_unsupported_topology" in classes, text
        assert all(x[1] == "unsure" for x in a), text  # a message every cause of a pair without P2P shares


def test_ghes_corrected_pcie_error_is_the_aer_entry():
    assert "pcie/aer-corrected-link-errors" in [x[3] for x in answer(GHES)]
    # a record with no corrected error logged (status 0) is no sign
    healthy = GHES.replace("aer_cor_status: 0x00001000", "aer_cor_status: 0x00000000")
    assert "pcie/aer-corrected-link-errors" not in [x[3] for x in answer(healthy) if x[1] != "unsure"]


# --- ncclInternalError ------------------------------------------------------------------------------------------------
# https://github.com/NVIDIA/nccl/issues/1092 (title): NCCL 2.18 reports network errors as internal errors
INTERNAL_218 = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1333, "
                "internal error - please report this issue to the NCCL developers, NCCL version 2.18.1")
# nccl-tests' NCCLCHECK wording of the same result, no version (src/common.h)
INTERNAL_TESTS = "Test NCCL failure common.cu:958 'internal error - please report this issue to the NCCL developers / '"


def test_nccl_internal_error_on_2_18_is_the_release():
    a = answer(INTERNAL_218)
    assert a[0][3] == "nccl/internal-error-misreported-2-18" and a[0][1] in ("likely", "possible")


def test_nccl_internal_error_without_a_version_is_an_unsure_release_candidate():
    a = answer(INTERNAL_TESTS)
    assert a[0][3] == "nccl/internal-error-misreported-2-18" and a[0][1] == "unsure"
    # another NCCL result is not it
    other = "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:825, unhandled system error, NCCL version 2.18.1"
    assert "nccl/internal-error-misreported-2-18" not in [x[3] for x in answer(other)]


# --- wrong data after a peer copy: the IOMMU first (CUDA programming guide, 'IOMMU on Linux') -------------------------
# the pattern of https://github.com/pytorch/pytorch/issues/1637 and kin: a tensor moved between GPUs reads zeros
ZEROS = ">>> a = torch.tensor([1., 2.], device='cuda:0')\n>>> a.to('cuda:1')\ntensor([0., 0.], device='cuda:1')\n"


def test_wrong_data_after_a_peer_copy_ranks_the_iommu_first():
    assert top3(ZEROS)[0] == "iommu_acs_p2p_broken"
    assert alarms(ZEROS) == []  # still unsure: the IOMMU's state is not in the text


# --- never silent: a text that names GPUs and says, in words, that something goes wrong ------------------------------
def test_gpus_and_trouble_in_words_without_a_topic_word_get_candidates_on_their_words():
    # written for this test: GPUs named ("4 gpus", a driver version), an error said in words, no P2P/NCCL word
    # (no second driver version: a contrast of two is a fact of its own, tests/test_r15_rules.py)
    text = ("The model runs normally on one card but not on 4 gpus.\n"
            "The error above occurs with driver 550.90.07.")
    a = answer(text)
    assert a and all(x[1] == "unsure" for x in a)


def test_no_trouble_word_or_a_negated_one_or_a_tool_column_stays_silent():
    assert answer("I have 4 gpus and driver 550.90.07 installed.") == []
    assert answer("Training on 4 gpus with driver 550.90.07, no errors so far.") == []
    # nccl-tests' (and rccl-tests') table header, whitespace folded as the matcher reads it: '#wrong' is a column
    header = "# size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n# (B) (elements) (us) (GB/s) (GB/s)"
    row = "8 2 float sum -1 13.10 0.00 0.00 0 13.92 0.00 0.00 0"
    assert answer("# Using devices\n# Rank 0 Pid 2303 on host device 0 [0000:2f:00.0] GPU\n" + header + "\n" + row) == []


# --- NCCL's host names as a container's own ---------------------------------------------------------------------------
def test_nccl_host_names_that_are_container_defaults_say_a_container():
    # https://github.com/NVIDIA/Megatron-LM/issues/316 (a corpus thread, fresh3): Docker's default host name (container id)
    docker = ("ceceb0c7f2e6:454:838 [0] NCCL INFO Using network Socket\n"
              "ceceb0c7f2e6:455:839 [1] NCCL INFO Using network Socket\n")
    facts = read_text(docker).facts_by_subject()["host"]
    assert facts["host.container"] == "docker"
    # a Deployment's pod names (apimachinery's rand alphabet: pod-template-hash, then five characters)
    pods = ("trainer-64ff5b88b-kndtr:37188:37280 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.5<0>\n"
            "trainer-64ff5b88b-h57l5:37216:37277 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.6<0>\n")
    facts = read_text(pods).facts_by_subject()["host"]
    assert facts["host.container"] == "kubernetes" and facts["host.kubernetes"] is True
    # ordinary host names say nothing
    plain = ("dgx-a100-01:1234:1300 [0] NCCL INFO Bootstrap : Using ib0:10.0.0.5<0>\n"
             "gpu-node-17:1234:1301 [1] NCCL INFO Bootstrap : Using ib0:10.0.0.6<0>\n"
             "123456789012:1:2 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.7<0>\n")
    assert "host.container" not in read_text(plain).facts_by_subject().get("host", {})


# --- the answer of the next command is readable: `nvidia-smi -q | grep -i -A3 fabric` ---------------------------------
def test_a_grepped_fabric_section_is_read_and_in_progress_points_at_the_fabric_manager():
    from p2ptop.commands.explain import explain
    from p2ptop.knowledge.fact_roles import NEXT_COMMAND

    assert "grep -i -A3 fabric" in NEXT_COMMAND["gpu.fabric_state"]
    # nvidia-smi -q's Fabric section (State: Not Started / In Progress / Completed, Status), as the grep prints it
    grepped = ("$ nvidia-smi -q | grep -i -A3 fabric\n    Fabric\n        State                     : In Progress\n"
               "        Status                    : N/A\n")
    facts = read_text(grepped).facts_by_subject()
    assert facts["gpu:0"]["gpu.fabric_state"] == "IN_PROGRESS"
    ids = [m.entry.id for m, _ in explain(KB, grepped, [], None)[:3]]
    assert "fabric-manager/not-running-system-not-initialized" in ids
    done = grepped.replace("In Progress", "Completed").replace("N/A", "Success")
    assert explain(KB, done, [], None) == []


def test_a_log_of_nccl_info_lines_only_is_a_gpu_trace():
    # NCCL's prefix (src/include/debug.h); the prose sample blanks NCCL INFO lines, the trace must not miss them
    log = "trainer-64ff5b88b-kndtr:37188:37280 [0] NCCL INFO Channel 06/0 : 0[41000] -> 1[42000] [receive] via NET/IBext/0"
    assert gpu_trace(log)
    assert not gpu_trace("worker-1:225:232 [0] INFO Channel 06/0 : 0 -> 1 via tcp")


def test_a_217_message_cut_after_between_still_names_the_peer_access_family():
    # CUDA's 217 text ('peer access is not supported between these two devices', cudaGetErrorString) cut by the paste
    cut = "(Runner pid=16018) Cuda failure 217 'peer access is not supported between these"
    ids = [a[3] for a in answer(cut)]
    assert "cuda/peer-access-unsupported-consumer-gpu" in ids and "vm/peer-access-unsupported-in-vm" in ids
    assert any("regex matched" in r for m in match(KB, cut) if m.entry.id == "cuda/peer-access-unsupported-consumer-gpu"
               for r in m.reasons)


# --- compute-sanitizer's memcheck report is an error ----------------------------------------------------------------
def test_a_compute_sanitizer_invalid_access_is_an_error_and_names_the_peer_pointer_entry():
    # the memcheck report layout of NVIDIA's Compute Sanitizer documentation ("Invalid __global__ write of size 4 bytes",
    # "by thread ... in block ...", "Address 0x... is out of bounds"), here in an NCCL kernel
    report = ("========= Invalid __global__ write of size 16 bytes\n"
              "=========     at ncclDevFunc_AllReduce_Sum_bf16_RING_SIMPLE()+0x14440\n"
              "=========     by thread (221,0,0) in block (0,0,0)\n"
              "=========     Address 0x1bc00031d0 is out of bounds\n")
    facts = read_text(report).facts_by_subject()["host"]
    assert facts["error.text"].startswith("========= Invalid __global__ write") and facts["text.tool"] == "compute-sanitizer"
    assert "cuda/peer-pointer-without-enable-peer-access" in [a[3] for a in answer(report)[:3]]
    assert alarms(report) == []
    # the documentation's own prose about the error type is no report
    assert "error.text" not in read_text("memcheck reports an Invalid __global__ write when a kernel writes out of bounds.")\
        .facts_by_subject().get("host", {})


def test_nccl_under_windows_default_host_name_is_wsl2():
    # Windows' default device name ("DESKTOP-" and 7 characters); a WSL distribution takes the Windows host's name
    log = ("DESKTOP-VMBL43V:8347:8347 [0] NCCL INFO Bootstrap : Using eth0:172.23.125.43<0>\n"
           "DESKTOP-VMBL43V:8347:8347 [1] NCCL INFO cudaDriverVersion 12010\n")
    facts = read_text(log).facts_by_subject()["host"]
    assert facts["host.virtualized"] is True and "WSL2" in facts["host.hypervisor"]
    other = log.replace("DESKTOP-VMBL43V", "desktop-gpu-01")
    assert "host.virtualized" not in read_text(other).facts_by_subject()["host"]


def test_no_transport_found_is_an_nccl_failure():
    # NCCL's transport.cc WARN when no allowed transport joins two ranks (NVIDIA/nccl#602: P2P failing with SHM and
    # intra-node NET disabled errors out)
    warn = "host:1:1 [0] transport.cc:123 NCCL WARN No transport found for rank 0[1a000] -> rank 1[1b000]"
    facts = read_text(warn).facts_by_subject()["host"]
    assert facts["error.text"].startswith("No transport found")
    with_env = warn + "\nhost:1:1 [0] NCCL INFO NCCL_SHM_DISABLE set by environment to 1.\n" \
                      "host:1:1 [0] NCCL INFO NCCL_P2P_DISABLE set by environment to 1."
    assert top3(with_env)[0] == "nccl_env_misconfig"
