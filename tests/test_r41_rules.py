"""Rules of the seventeenth session, each from what the program or the hardware does, not from one paste. The NCCL
error-string rule came after opening fresh40 (labelled so): a fact misread there, not a case fitted."""

import pytest

from p2ptop.evidence import read_text


def _env(text):
    return {k: v for f in read_text(text).findings for k, v in f.facts.items() if k.startswith("env.")}


@pytest.mark.parametrize("text", [
    # NCCL's own error strings (src/init.cc ncclGetErrorString), as PyTorch, vLLM's pynccl and CuPy print them
    "RuntimeError: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)",
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
    "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3",
    "cupy_backends.cuda.libs.nccl.NcclError: NCCL_ERROR_SYSTEM_ERROR: unhandled system error (run with NCCL_DEBUG=INFO for details)",
    "ncclInvalidArgument: invalid argument (run with NCCL_DEBUG=WARN for details)",
])
def test_nccl_error_string_advice_is_no_setting(text):
    """After opening fresh40: "(run with NCCL_DEBUG=WARN for details)" is the end of NCCL's error string, advice that
    names a variable nobody set; it was read as env.NCCL_DEBUG = WARN, a setting of the failing run."""
    assert "env.NCCL_DEBUG" not in _env(text)


@pytest.mark.parametrize("text,value", [
    ("NCCL_DEBUG=INFO torchrun --nproc_per_node 2 train.py", "INFO"),
    ("$ NCCL_DEBUG=WARN python run.py\nRuntimeError: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)", "WARN"),
])
def test_a_variable_set_on_a_command_line_is_still_read(text, value):
    assert _env(text).get("env.NCCL_DEBUG") == value


def _top(text, n=3):
    from p2ptop.commands.explain import explain
    from p2ptop.knowledge import load_kb
    return [(m.entry.id, m.confidence) for m, _ in explain(load_kb(), text, [], n)]


_PLUGIN = ("Warning  UnexpectedAdmissionError  3m25s  kubelet  Allocate failed due to device plugin GetPreferredAllocation "
           "rpc failed with err: rpc error: code = Unknown desc = error getting list of preferred allocation devices: unable "
           "to get device link information: error getting NVLink for devices (0, 1): failed to get nvlink remote pci info: "
           "failed to get nvlink state: {reason}, which is unexpected")


def test_device_plugin_link_information_failure_is_a_broken_gpu():
    """After opening fresh40, from the device plugin's source (internal/rm/allocate.go alignedAlloc wraps go-gpuallocator's
    NVML pair queries as "unable to get device link information"): one GPU NVML cannot answer for rejects every GPU pod
    of the node. NVML's reason, where the paste keeps it, decides: 'GPU is lost' is Xid 79's GPU off the bus first."""
    top = _top(_PLUGIN.format(reason="GPU is lost"), 5)
    assert top[0] == ("xid/79-gpu-fallen-off-bus", "likely")
    assert ("k8s/device-plugin-link-information-failed", "possible") in top
    top = _top(_PLUGIN.format(reason="Unknown Error"))
    assert top[0] == ("k8s/device-plugin-link-information-failed", "possible")


def test_a_fact_said_both_ways_is_no_doubt():
    """A doubt (match.doubt) is a fact that speaks against the entry; where the text says the fact both ways (a
    p2pBandwidthLatencyTest of four GPUs: "Device=0 CAN Access Peer Device=1", "Device=0 CANNOT Access Peer Device=2"),
    it does not: the cross-socket entry, its pair on two sockets, stays first on its own example (NVIDIA/nccl#257)."""
    from p2ptop.knowledge import load_kb, match
    from p2ptop.knowledge.lint import example_findings
    kb = load_kb()
    entry = kb.get("cuda/peer-access-unsupported-cross-socket")
    ex = [e for e in entry.examples if "nccl/issues/257" in e["source"]][0]
    got = match(kb, ex["text"], example_findings(ex))
    assert got[0].entry.id == entry.id
    assert not any(r.startswith("in doubt") for r in got[0].reasons)


def _facts(text):
    return {(f.subject, k): v for f in read_text(text).findings for k, v in f.facts.items()}


def test_fabric_manager_start_script_precheck():
    """After opening fresh41, from Fabric Manager's start script (nvidia-fabricmanager-start.sh, 570+) as its journal
    shows it: "Detected NVL5+ system" is an NVLink-5 switch system; 'fabric manager cannot be started' is Fabric Manager
    failed. "Detected Pre-NVL5 system" says nothing of switches (every older host prints it)."""
    cut = 'Jul 20 16:15:36 node: Kernel module "ib_umad" has not been loaded, fabric manager cannot be started\n'
    facts = _facts("Jul 20 16:15:36 node: Detected NVL5+ system\n" + cut)
    assert facts[("host", "host.nvswitch_present")] is True
    assert facts[("host", "host.fabric_manager")] == "failed"
    facts = _facts("Jul 20 16:15:36 node: Detected Pre-NVL5 system\n" + cut)
    assert ("host", "host.nvswitch_present") not in facts
    assert facts[("host", "host.fabric_manager")] == "failed"


@pytest.mark.parametrize("text,wrong", [
    ("It is correct on the AWS instance but I got strange results on the local GPU machine with 2 GPUs.", True),
    ("With tensor parallel 2 the model gives weird outputs, with one GPU it is fine.", True),
    ("The strange thing is that the job hangs after NCCL init.", False),
])
def test_wrong_results_in_looser_words(text, wrong):
    """After opening fresh41: "strange results", "weird outputs" are wrong results said loosely; "the strange thing" is
    not."""
    assert (("host", "symptom.wrong_results") in _facts(text)) is wrong


@pytest.mark.parametrize("text,name", [
    # CUDACHECK macros that put the source file and line before CUDA's message (vLLM custom_all_reduce.cuh, DeepEP,
    # nccl-tests common.h), written from those macros; generic messages too
    ("RuntimeError: Failed: CUDA error .../deep_ep.cpp:226 'invalid resource handle'", "cudaErrorInvalidResourceHandle"),
    ("Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:307 'invalid argument'", "cudaErrorInvalidValue"),
    ("node1: Test CUDA failure common.cu:892 'out of memory'", "cudaErrorMemoryAllocation"),
])
def test_cuda_check_macro_with_file_and_line(text, name):
    assert _facts(text).get(("host", "error.cuda")) == name


def test_legacy_ipc_across_the_hosts_of_an_nvlink_domain():
    """After opening fresh41, from CUDA's documentation (legacy IPC handles are valid within one host; multi-node NVLink
    shares memory through fabric handles and IMEX): invalid resource handle (400) where the text says the NVLink domain
    spans several hosts is CUDA IPC across that boundary. Where the text does not say so, at most an unsure candidate."""
    text = ("On a single MNNVL / NVL72 ComputeDomain that spans multiple nodes (GB200), DeepEP fails at Buffer.__init__\n"
            "RuntimeError: Failed: CUDA error deep_ep.cpp:226 'invalid resource handle'\n")
    assert _facts(text)[("host", "host.nvlink_multi_node")] is True
    assert _top(text)[0] == ("cuda-ipc/legacy-handle-across-nvlink-domain-hosts", "likely")
    one_host = text.replace("On a single MNNVL / NVL72 ComputeDomain that spans multiple nodes (GB200)", "On one HGX B200 node")
    assert ("host", "host.nvlink_multi_node") not in _facts(one_host)
    assert dict(_top(one_host, 5)).get("cuda-ipc/legacy-handle-across-nvlink-domain-hosts", "unsure") == "unsure"


def test_the_store_sockets_exception_is_the_rendezvous_failure():
    """A one-H200 device run (benchmarks/results/h200x1-2026-11-29j, nccl-invalid-rank): a rank that never reached the
    store printed c10d's socket timeout and then the C++ exception for it, "Exception raised from throwTimeoutError at
    .../c10d/socket.cpp:1030" (c10::Error's what(), c10/util/Exception.cpp). That line is the same failure as the timeout:
    no GPU communication had begun, so no entry, not unsure leads on its words."""
    from p2ptop.commands.explain import answer
    from p2ptop.knowledge import load_kb
    text = ("[E1129 19:48:14.071456269 socket.cpp:1028] [c10d] The client socket has timed out after 60000ms while trying "
            "to connect to (127.0.0.1, 29623).\n"
            "Exception raised from throwTimeoutError at /pytorch/torch/csrc/distributed/c10d/socket.cpp:1030 (most recent "
            "call first):\n"
            "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x98 (0x7f2b4b in /opt/torch/lib/libc10.so)\n")
    got = answer(load_kb(), text, [], 3, "host")
    assert got["kind"] == "before_gpu" and not got["results"]


@pytest.mark.parametrize("line,folded", [
    ("a  b\tc ", "a b c"), (" lead", "lead"), ("x\u00a0\u00a0y", "x y"), ("ok line", "ok line"), ("é  x", "é x"),
    ("a\x0bb", "ab"),
])
def test_the_matchers_lines_are_folded_as_before(line, folded):
    """clean_lines keeps an ASCII line with single spaces as it is and folds any other (the 20 MB log's lines skip the
    split and join): the same lines as str.split folding every one."""
    from p2ptop.knowledge.matcher import clean_lines
    assert clean_lines(line) == [folded]


def test_tidy_on_ascii_skips_nothing_it_should_do():
    """paste.tidy's non-ASCII steps (invisible characters, wide spaces, typographic quotes) are skipped on an ASCII text
    only: a text with them is still cleaned."""
    from p2ptop.evidence.paste import tidy
    assert tidy("GPU0\u00a0\u00a0X \u201cNV18\u201d\u200b") == 'GPU0  X "NV18"'
    assert tidy("GPU0  X \"NV18\"") == 'GPU0  X "NV18"'


@pytest.mark.parametrize("text,multi", [
    ("On a single MNNVL / NVL72 ComputeDomain that spans multiple nodes (GB200), DeepEP fails", True),
    ("When the flag is set, the NVL domain spans multiple physical nodes (e.g. GB200 NVL72).", True),
    ("- 2 nodes, GB200 NVL72, MNNVL fabric, 1 GPU used per node\n- the TP=2 group spans two nodes", True),
    # "MNNVL" also names a backend or a setting that runs on one node (FlashInfer's mnnvl all-reduce, NCCL_MNNVL_ENABLE)
    ("mnnvl allreduce buffer size error on single-node TP8\n- **GPUs**: 8x H200 (single node, no NVSwitch multicast)", False),
    ("NCCL_MNNVL_ENABLE=0 on our one HGX B200 node", False),
    ("We run 2 nodes of H100 over InfiniBand", False),
])
def test_an_nvlink_domain_over_several_hosts(text, multi):
    """host.nvlink_multi_node is what the text says of the NVLink domain spanning hosts, not the word MNNVL (a first
    version read the word alone and gave fresh25's single-node FlashInfer 'mnnvl' backend the IPC entry: a prefixed copy
    of it lost its class, perturb_corpus.py)."""
    assert (("host", "host.nvlink_multi_node") in _facts(text)) is multi
