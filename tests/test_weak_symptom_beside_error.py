"""'It fails' in words beside a specific error the text names: an entry offered on those words with its setup held
(a VM) but that neither matches the error's text nor lists its code does not explain the failure: unsure.
Error strings from CUDA's error table (cudaErrorSystemNotReady 802, cudaErrorPeerAccessUnsupported 217)."""

from p2ptop.evidence import read_text
from p2ptop.knowledge import load_kb, match

KB = load_kb()
VM = "vm/peer-access-unsupported-in-vm"


def _answer(text):
    ev = read_text(text)
    return {m.entry.id: m for m in match(KB, text, ev.findings)}


def test_an_error_the_vm_entry_does_not_list_leaves_it_unsure_beside_the_entry_that_explains_it():
    got = _answer("Training fails to start in our KVM guest (PCI passthrough).\n"
                  "RuntimeError: CUDA error: system not yet initialized (error 802)\n")
    assert VM not in got or got[VM].unsure
    assert any(not m.unsure and m.entry.failure_class.startswith("fabric_manager") for m in got.values())


def test_an_error_the_vm_entry_lists_keeps_it_offered():
    got = _answer("Training fails in our KVM guest (PCI passthrough) with 2 GPUs.\n"
                  "torch.distributed.DistBackendError: NCCL error: unhandled cuda error, NCCL version 2.21.5\n"
                  "Cuda failure 217 'peer access is not supported between these two devices'\n")
    assert VM in got and not got[VM].unsure
