"""Rules of the eighteenth session, each from what the program or the library does, not from one paste. Those that came
after opening fresh42 say so: a fact misread or an error with no entry there, not a case fitted."""

import pytest

from .kbtools import flat_facts

from p2ptop.evidence import read_text


def _top(text, n=3):
    from p2ptop.commands.explain import explain
    from p2ptop.knowledge import load_kb
    return [(m.entry.id, m.confidence) for m, _ in explain(load_kb(), text, [], n)]


@pytest.mark.parametrize("text", [
    "tensor.to(device) not copying data correctly between two GPUs",
    "cudaMemcpyPeer is not copying the data correctly from GPU 0 to GPU 1",
    "the buffer gets copied incorrectly when I move it to the second card",
    "# Moving between two GPUs, tensor becomes [0, 0, 0] instead of [1, 2, 3] on device='cuda:1'",
    "after the peer copy y is tensor([0., 0., 0.]) instead of the input",
])
def test_a_copy_said_wrong_or_data_shown_as_zeros_is_wrong_results(text):
    """After opening fresh42: a GPU-to-GPU copy said not to copy the data correctly, and data shown turned into zeros
    where other values were expected, are wrong results (what a peer copy through a broken IOMMU mapping looks like)."""
    assert flat_facts(text).get("symptom.wrong_results") is True


@pytest.mark.parametrize("text", [
    "the script copies the data correctly to the second GPU",
    "the weights are copied to every GPU before training",
    "x = torch.zeros(3)  # [0, 0, 0] is the start value",
])
def test_a_correct_copy_or_a_start_value_is_no_wrong_result(text):
    assert "symptom.wrong_results" not in flat_facts(text)


@pytest.mark.parametrize("text", [
    "pynvml.NVMLError_InvalidArgument: Invalid Argument",
    '  File "/usr/local/lib/python3.10/dist-packages/vllm/third_party/pynvml.py", line 2609, in nvmlDeviceGetHandleByIndex\n'
    "    _nvmlCheckReturn(ret)\nvllm.third_party.pynvml.NVMLError_InvalidArgument: Invalid Argument",
])
def test_nvml_invalid_argument_is_an_index_past_the_visible_gpus(text):
    """After opening fresh42, from NVML's reference (nvmlDeviceGetHandleByIndex: NVML_ERROR_INVALID_ARGUMENT if the
    index is invalid) and the programs that turn a CUDA device into an NVML index (vLLM through CUDA_VISIBLE_DEVICES,
    GPU-affinity helpers through the local rank): the NVML face of an invalid device ordinal."""
    top = _top(text)
    assert top[0][0] == "nvml/handle-by-index-invalid-argument"
    assert top[0][1] in ("likely", "possible")


def test_another_nvml_error_is_not_that_entry():
    assert "nvml/handle-by-index-invalid-argument" not in [e for e, _ in _top("pynvml.NVMLError_NotSupported: Not Supported")]


@pytest.mark.parametrize("text,state", [
    ("NVIDIA Fabric Manager stops running on Ubuntu 18.04 and Ubuntu 20.04", "failed"),
    ("nvidia-fabricmanager won't start after the driver upgrade", "failed"),
    ("the fabric manager service exited with status 1", "failed"),
    ("fabric manager is not running on the node", "not running"),
    ("the fabric manager service is not started", "not running"),
])
def test_fabric_manager_said_to_stop_or_not_start_has_failed(text, state):
    """After opening fresh43, from Fabric Manager's user guide (a service that refuses to start, e.g. on a version that
    differs from the driver's): a service said to stop, exit or not start has failed; one not started is not running."""
    assert flat_facts(text).get("host.fabric_manager") == state


def test_a_failed_fabric_manager_offers_the_version_mismatch_among_its_causes():
    top = [e for e, _ in _top("NVIDIA Fabric Manager stops running on Ubuntu 18.04 and Ubuntu 20.04")]
    assert "fabric-manager/version-mismatch" in top


def test_the_ngc_containers_start_check_is_cuda_seeing_no_gpu():
    """After opening fresh43: NGC containers' entrypoint prints "ERROR: No supported GPU(s) detected to run this
    container" when CUDA finds no GPU it can use (on an NVSwitch board, also while Fabric Manager is down)."""
    text = "[MaskRCNN/Pytorch] ERROR: No supported GPU(s) detected to run this container"
    assert flat_facts(text).get("symptom.no_cuda_device") is True
    top = [e for e, _ in _top(text)]
    assert "fabric-manager/not-running-system-not-initialized" in top


FLAT = "$ nvidia-smi topo -m GPU0 GPU1 GPU2 GPU3 GPU0 X PHB NV4 PHB GPU1 PHB X PHB NV4 GPU2 NV4 PHB X PHB GPU3 PHB NV4 PHB X"


def test_a_topo_matrix_on_one_line_is_read_pair_by_pair():
    """After opening fresh43 (a forum mirror that flattened a pasted matrix onto one line): the header's labels up to the
    first one seen again, then each row in order, give every pair its path, as the multi-line matrix does."""
    from p2ptop.evidence.topo import read_matrices
    from p2ptop.evidence.paste import Collector, Paste
    c = Collector(Paste(FLAT))
    (m,) = read_matrices(c)
    assert m.columns == ["GPU0", "GPU1", "GPU2", "GPU3"]
    assert m.rows["GPU0"] == ["X", "PHB", "NV4", "PHB"] and m.rows["GPU3"] == ["PHB", "NV4", "PHB", "X"]
    with_affinity = ("GPU0 GPU1 CPU Affinity NUMA Affinity GPU NUMA ID GPU0 X NV18 0-47 0 N/A "
                     "GPU1 NV18 X 0-47 0 N/A Legend: X = Self")
    (m,) = read_matrices(Collector(Paste(with_affinity)))
    assert m.rows["GPU1"] == ["NV18", "X"] and m.extra["GPU0"] == ["0-47", "0", "N/A"]


def test_a_line_that_points_at_the_error_is_explained_where_the_error_is():
    """'I got this error' says the error shown elsewhere in the text happened: where an entry's own pattern explains that
    error, an entry of another class is not offered on 'it fails' and its setup (a GeForce card) alone."""
    text = ("CUDASymmetricMemory requires pidfd_open and pidfd_getfd support\n\n"
            "I am just running gpt-fast with the latest torch nightly, and set ENABLE_INTRA_NODE_COMM=1. I got this error.\n"
            "GPU 0: NVIDIA GeForce RTX 4090\nGPU 1: NVIDIA GeForce RTX 4090\n")
    top = _top(text)
    assert top[0] == ("torch/cuda-ipc-pidfd-getfd-not-permitted", "likely")
    assert ("cuda/peer-access-unsupported-consumer-gpu", "possible") not in top


def test_a_paste_that_lost_its_line_breaks_gets_them_back_where_programs_start_lines():
    """A chat or a forum mirror that joins a paste's lines with spaces: a line break again before what programs print
    only at a line's start (NCCL's "host:pid:tid [dev] NCCL INFO", with or without "NCCL" and the source file of a WARN;
    the CUDA samples' rows; nccl-tests' heads; topo's header and rows), so each reader sees its own lines."""
    from p2ptop.evidence.paste import reline
    log = ("It hangs. clima:810632:810657 [0] NCCL INFO Topology detection: network path /sys/devices/pci0000:2b/0000:2b:08.1 "
           "is not a PCI device (usb). Attaching to first CPU clima:810632:810657 [0] graph/xml.h:85 NCCL WARN Attribute "
           "busid of node nic not found learngpu060:3728589:3730445 [2] INFO Ring 00 : 2[2] -> 3[3] via P2P/IPC")
    lines = reline(log).split("\n")
    assert lines[0] == "It hangs." and len(lines) == 4
    assert lines[2].startswith("clima:810632:810657 [0] graph/xml.h:85 NCCL WARN") and lines[3].startswith("learngpu060:")
    sample = ("[P2P (Peer-to-Peer) GPU Bandwidth Latency Test] Device: 0, NVIDIA RTX A6000, pciBusID: 3 Device: 1, NVIDIA RTX "
              "A6000, pciBusID: 21 Device=0 CAN Access Peer Device=1 Device=1 CAN Access Peer Device=0 Unidirectional "
              "P2P=Disabled Bandwidth Matrix (GB/s) D\\D 0 1 0 673.20 13.15 1 12.99 673.20 Unidirectional P2P=Enabled "
              "Bandwidth (P2P Writes) Matrix (GB/s) D\\D 0 1 0 673.49 2.60 1 2.12 672.33")
    lines = reline(sample).split("\n")
    assert "D\\D 0 1" in lines and "0 673.49 2.60" in lines and "1 2.12 672.33" in lines
    facts = flat_facts(sample)
    assert facts.get("tool.p2p_slower_than_no_p2p") is True


@pytest.mark.parametrize("text", [
    "short line",
    "A description of a problem with two GPUs. " * 20,  # long, but no place where a program starts a line
    "a log\nwith its own\nline breaks\n" * 50,
])
def test_text_with_its_line_breaks_or_none_to_restore_is_unchanged(text):
    from p2ptop.evidence.paste import reline
    assert reline(text) == text


def test_restored_line_breaks_are_said():
    from p2ptop.evidence import read_text
    text = ("It hangs. clima:810632:810657 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct clima:810632:810657 "
            "[1] NCCL INFO Channel 00 : 1[1] -> 0[0] via SHM/direct/direct and it sits there, the two GPUs joined by NVLink "
            "as nvidia-smi says each time I look at it again during the day, and as the topology matrix says too.")
    assert len(text) > 300
    ev = read_text(text)
    assert any("lost its line breaks: 2 restored" in n for n in ev.notes)
    assert not any("line breaks" in n for n in read_text(text.replace(" clima", "\nclima")).notes)


@pytest.mark.parametrize("text", [
    "running the main implementation doesn't seem to use any of the nvlink lanes during inference",
    "the NVLink throughput stays at 0 while the two GPUs exchange activations",
    "no data is transferred over the NVLink during training",
    "训练时没有走 NVLink",
])
def test_nvlink_said_to_stay_idle_is_a_symptom(text):
    """After opening fresh45: NVLink said to carry no traffic while the GPUs exchange data means the copies do not go
    peer to peer over it (CUDA stages cudaMemcpyPeer through the host without peer access; a VM that hides the links)."""
    assert flat_facts(text).get("symptom.nvlink_unused") is True


@pytest.mark.parametrize("text", [
    "Is it possible to use NVLink to transfer the data between GPUs?",
    "Does it use NVLink?",
    "we do not use nvlink bridges on these cards",
])
def test_a_question_or_a_setup_without_nvlink_is_no_such_symptom(text):
    assert "symptom.nvlink_unused" not in flat_facts(text)


def test_idle_nvlink_offers_the_missing_peer_access_first():
    top = _top("I watch nvidia-smi nvlink --getthroughput d: the program doesn't seem to use any of the nvlink lanes during "
               "inference on my two RTX A6000 with an NVLink bridge")
    assert top[0][0] == "cuda/peer-pointer-without-enable-peer-access"


def test_nvshmem_nvls_team_setup_error_is_the_multicast_setup():
    """After opening fresh45, from NVSHMEM's error macro ("FILE:LINE: non-zero status: N") in its NVLS team setup
    (src/host/team/team_internal_nvls.cpp): the NVLink SHARP multicast setup failing."""
    text = ("/dvs/p4/build/sw/rel/gpgpu/toolkit/r12.9/main_nvshmem/src/host/team/team_internal_nvls.cpp:258: non-zero status: "
            "401 cuMemMap failed to map 137438953472 bytes handle at address: 0x17700000000 offset 0 on device 3")
    assert _top(text)[0][0] == "nccl/nvls-multicast-setup-failed"


def test_lspci_and_smi_list_that_lost_line_breaks_get_them_back():
    from p2ptop.evidence.paste import reline
    text = ("$ sudo lspci -vv -s 01:00.0 | grep -A4 \"Physical Resizable BAR\"     BAR 0: current size: 16MB, supported: 16MB"
            "     BAR 1: current size: 256MB, supported: 64MB 128MB 256MB     BAR 3: current size: 32MB, supported: 32MB")
    assert [l.strip()[:5] for l in reline(text).split("\n")] == ["$ sud", "BAR 0", "BAR 1", "BAR 3"]
    smi = ("srun -n 2 nvidia-smi -L GPU 0: NVIDIA A100 80GB PCIe (UUID: GPU-e7b3bccd-51ac-85a4) "
           "GPU 1: NVIDIA A100 80GB PCIe (UUID: GPU-989d4723-8384-4046) and then main() ``` torch.distributed.DistBackendError: x")
    lines = reline(smi).split("\n")
    assert lines[1].startswith("GPU 0: NVIDIA A100") and lines[2].startswith("GPU 1:") and "```" in lines


def test_nccl_invalid_usage_alone_makes_the_duplicate_gpu_entry_a_candidate_only():
    """NCCL's init returns ncclInvalidUsage after "Duplicate GPU detected" (more ranks than GPUs), and for many other
    misuses too: the code alone makes that entry a candidate (unsure), never possible or likely; its own message still
    makes it likely."""
    text = ("RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:911, invalid usage, NCCL version 2.7.8\n"
            "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n")
    top = _top(text)
    assert top[0] == ("nccl/duplicate-gpu-detected", "unsure")
    dup = "NCCL WARN Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000\n" + text
    assert _top(dup)[0] == ("nccl/duplicate-gpu-detected", "likely")


def test_the_device_plugins_own_words_are_a_trace_of_gpus():
    """NVIDIA's Kubernetes device plugin's "unable to get device link information" (its NVML pair queries) is a GPU trace
    although the kubelet event names no GPU: the event is answered, not 'nothing to explain' (fresh40's empty answer)."""
    from p2ptop.commands.explain import answer
    from p2ptop.knowledge import load_kb
    text = ("Warning  UnexpectedAdmissionError  pod/...  Allocate failed due to device plugin GetPreferredAllocation rpc "
            "failed\nwith err: rpc error: code = Unknown desc = error getting list of preferred allocation devices:\n"
            "unable to get device link information: ...\n")
    a = answer(load_kb(), text, [], 3)
    assert a["kind"] == "matches" and a["results"][0][0].entry.id == "k8s/device-plugin-link-information-failed"


def test_the_matcher_reads_the_restored_lines_the_evidence_reads():
    """One numbering for a paste whose line breaks were restored: the matcher's lines (entries' hits) and the evidence's
    lines (facts' origins) are the same lines."""
    from p2ptop.evidence.paste import Paste
    from p2ptop.knowledge.matcher import Log
    text = ("It hangs. clima:810632:810657 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct clima:810632:810657 "
            "[1] NCCL INFO Channel 00 : 1[1] -> 0[0] via SHM/direct/direct and it sits there, the two GPUs joined by NVLink "
            "as nvidia-smi says each time I look at it again during the day, and as the topology matrix says too.")
    paste, log = Paste(text), Log(text)
    assert paste.relined == 2 and len(log.lines) == len(paste.lines) == 3
    assert log.lines[1].startswith("clima:810632:810657 [0] NCCL INFO")
