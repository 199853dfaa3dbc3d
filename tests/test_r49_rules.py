"""Rules of the twentieth session, each from what a program or library says, not from one paste."""

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
