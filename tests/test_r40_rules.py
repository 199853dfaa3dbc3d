"""Rules of the sixteenth session, each from what the program or the hardware does, not from one paste."""

from p2ptop.commands.explain import explain
from p2ptop.knowledge import load_kb

KB = load_kb()


def _top(text, n=3):
    return [(m.entry.id, m.confidence) for m, _ in explain(KB, text, [], n)]


def test_mig_in_a_vm_is_answered_by_mig_not_the_vm():
    """MIG instances have no peer access or CUDA IPC between them on bare metal either (the MIG user guide): where a text
    says MIG is enabled, the VM entry's generic signs (a hang, a failure) leave it an unsure candidate, not possible."""
    text = ("We run HPL on an A100 vGPU VM (ESXi) with MIG enabled, two MIG instances 3g.20gb, one rank each.\n"
            "The run hangs at the first exchange between the ranks and never finishes.\n")
    top = dict(_top(text, 5))
    assert top.get("mig/no-p2p-between-mig-instances") in ("likely", "possible")
    assert top.get("vm/peer-access-unsupported-in-vm", "unsure") == "unsure"
    # without MIG, the same VM and hang keep the VM entry offered
    top = dict(_top(text.replace(" with MIG enabled, two MIG instances 3g.20gb, one rank each", ", two GPUs passed through"), 5))
    assert top.get("vm/peer-access-unsupported-in-vm") in ("likely", "possible")
