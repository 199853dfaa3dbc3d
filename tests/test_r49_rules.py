"""Rules of the twentieth session, each from what a program or library says, not from one paste."""

import pytest

from .kbtools import flat_facts

from p2ptop.commands.explain import explain
from p2ptop.knowledge import load_kb

#: NCCL's own report of a CUDA failure (src/include/checks.h CUDACHECK: "Cuda failure %d '%s'") as PyTorch prints it
#: under "Last error:", the text of cudaErrorPeerAccessUnsupported (217) in CUDA's error table
BARE_217 = ("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:3353, unhandled cuda error "
            "(run with NCCL_DEBUG=INFO for details), NCCL version 2.22.3\n"
            "ncclUnhandledCudaError: Call to CUDA function failed.\n"
            "Last error:\n"
            "Cuda failure 217 'peer access is not supported between these two devices'\n")


def _ranked(text, top=8):
    return [m for m, _ in explain(load_kb(), text, [], top)]


def test_it_fails_does_not_order_the_entries_of_a_shared_line():
    """A line that entries of several classes share (217: a GeForce card, a VM, a pair across sockets) makes each of them
    an unsure candidate, ranked among the others by its score on that line. "It fails", which the same line says for
    every one of them alike, is no sign of any one's own: an entry that weighs it more in its support (the VM entry)
    does not rank over another for it."""
    ms = {m.entry.id: m for m in _ranked(BARE_217)}
    cons, vm = ms["cuda/peer-access-unsupported-consumer-gpu"], ms["vm/peer-access-unsupported-in-vm"]
    assert cons.shared_line and vm.shared_line
    assert cons.shared_score == vm.shared_score  # the same line, no setup said: no sign of its own tells them apart
    # the weak symptom still counts where an entry's setup holds: a VM said makes the VM entry the answer
    said = _ranked("inside a KVM guest with GPU passthrough\n" + BARE_217)
    top = [m for m in said if m.entry.failure_class == "vm_p2p_unavailable"]
    assert top and said.index(top[0]) < 2


def test_the_shared_line_names_the_three_setups_it_may_be():
    """A bare 217 with no GPU model, VM or topology said: the answer's first candidates name different causes (the
    generic hardware entry, a GeForce card, a VM or NCCL's cuMem host path), each unsure, none likely on the line alone
    except an entry whose own condition holds (NCCL 2.24 or newer for the cuMem host path)."""
    ms = _ranked(BARE_217, top=4)
    classes = [m.entry.failure_class for m in ms[:3]]
    assert "p2p_unsupported_consumer_gpu" in classes
    assert all(m.confidence == "unsure" for m in ms if m.entry.id != "nccl/cumem-host-shm-217")


@pytest.mark.parametrize("text", [
    "4 L4 gpus, vLLM server on one and training on the rest: NCCL error",
    "two RTX 4090 cards, NCCL hangs",
    "2x RTX 5090: all_reduce hangs",
    "8x T4 on a cloud VM, NCCL error",
    "dual RTX PRO 6000 Blackwell, training hangs",
    "NVIDIA L40S x4, DDP stuck",
])
def test_gpus_without_nvlink_rule_out_the_nvlink_classes(text):
    """NVIDIA's product specifications: no Ada part (RTX 40, RTX 6000 Ada, L40/L40S, L4), no RTX 50 or RTX PRO Blackwell
    card, no T4, A10, A16 or A2 has NVLink. Where every GPU a text names is one of these and nothing shows a link, no
    NVLink can fail, no NVSwitch or multicast exists and no peer memory is reached over NVLink: those classes are ruled out
    (issue 22 point 3: a fact that rules an entry out removes it)."""
    assert flat_facts(text).get("host.no_nvlink_hardware") is True
    classes = {m.entry.failure_class for m in _ranked(text, top=12)}
    assert not classes & {"nvlink_link_failure", "nvlink_peer_memory_error", "nvls_multicast_failure",
                          "fabric_manager_not_running", "fabric_manager_version_mismatch"}


@pytest.mark.parametrize("text", [
    "8x A100 SXM, NCCL hangs",                                   # NVLink parts
    "two RTX 3090 with an NVLink bridge, NCCL hangs",            # a 3090 has an NVLink connector
    "L4 and A100 in one box, NCCL error",                        # a mix: the A100 has NVLink
    "2x RTX 4090\n        GPU0    GPU1\nGPU0     X      NV4\nGPU1    NV4      X\n",  # a link shown: the text says otherwise
    "NCCL hangs on our cluster",                                  # no GPU named
    "two RTX 4090 cards hang in NCCL; the same code works on our A100 server",  # another host named, with NVLink
    "We moved from 2x 4090 to 8x H100 and NCCL hangs",           # the model named first is not the host's now
])
def test_no_nvlink_is_said_only_where_every_named_gpu_lacks_it(text):
    assert "host.no_nvlink_hardware" not in flat_facts(text)


@pytest.mark.parametrize("text,key", [
    ("NCCL out of memory error after updating to PyTorch 2.7", "text.broken_by"),
    ("NCCL all_reduce hangs since the pytorch upgrade", "text.broken_by"),
    ("after upgrading vLLM the TP=2 run crashes", "text.broken_by"),
    ("DDP on 2 GPUs hung in NCCL; downgrading torch fixed it", "text.fixed_by"),
])
def test_a_framework_update_is_an_nccl_change(text, key):
    """PyTorch's pip wheels depend on a pinned nvidia-nccl-cu* release (the build matrix,
    .github/scripts/generate_binary_build_matrix.py), TensorFlow's and JAX's CUDA wheels likewise, and vLLM and SGLang pin a
    PyTorch: trouble said to begin (or end) with a framework's update is a change of NCCL too, and the entry for trouble
    that follows the NCCL release takes it as a sign of its own."""
    assert flat_facts(text).get(key) == "framework"
    ids = [m.entry.id for m in _ranked(text, top=5)]
    assert "nccl/trouble-follows-nccl-version" in ids


@pytest.mark.parametrize("text", ["after updating torchvision it hangs", "after updating drivers NCCL hangs"])
def test_only_a_framework_named_whole_is_one(text):
    assert flat_facts(text).get("text.broken_by") != "framework"


def test_nvidia_smi_rows_without_the_table_header_are_read():
    """nvidia-smi's GPU rows ("|   0  NVIDIA A10G   On  | 00000000:00:1B.0 Off |") have a shape of their own: a ticket that
    quotes the rows alone, without the title and header, is the table all the same; GPUs on a PCI root bus (00) are
    where a VM places passed-through devices (evidence/read.py _root_bus)."""
    text = ("issue with Device 0 peer access Device x is not available.\n\n"
            "|   0  NVIDIA A10G                    On  | 00000000:00:1B.0 Off |                    0 |\n"
            "|   1  NVIDIA A10G                    On  | 00000000:00:1C.0 Off |                    0 |\n")
    from p2ptop.evidence import read_text
    ev = read_text(text)
    names = [f.facts["gpu.name"] for f in ev.findings if "gpu.name" in f.facts and f.subject.startswith("gpu:")]
    assert names == ["NVIDIA A10G", "NVIDIA A10G"]
    f = flat_facts(text)
    assert f.get("host.gpu_count") == 2 and f.get("host.virtualized") is True
    assert _ranked(text)[0].entry.failure_class == "vm_p2p_unavailable"


@pytest.mark.parametrize("text,key,value", [
    ("NCCL hangs on our p5.48xlarge. Driver 535.161.08 works, after upgrading to driver 550.54.15 it doesn't work anymore.",
     "text.broken_by", "driver"),
    ("535 works, after upgrading the driver to 550 NCCL hangs", "text.broken_by", "driver"),
    ("NCCL hang was fixed after upgrading to the latest driver", "text.fixed_by", "driver"),
    ("downgrading torch fixed it, NCCL no longer hangs", "text.fixed_by", "framework"),
])
def test_what_follows_the_change_says_whether_it_fixed_or_broke(text, key, value):
    """"X works, after upgrading to Y it doesn't work anymore": the words that follow the change in its sentence say it
    brought the trouble, whatever "works" said before it."""
    f = flat_facts(text)
    assert f.get(key) == value
    assert ({"text.fixed_by", "text.broken_by"} - {key}).pop() not in f
