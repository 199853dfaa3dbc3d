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


def _facts(text):
    from p2ptop.evidence import read_text
    ev = read_text(text)
    return {(f.subject, k): v for f in ev.findings for k, v in f.facts.items()}, ev


_MATRIX = ("\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tPHB\t0-31\t0\nGPU1\tPHB\t X \t0-31\t0\n\nLegend:\n\n"
           "  X    = Self\n  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n")


def test_a_pci_only_matrix_gives_no_pair_path():
    """`nvidia-smi topo -mp` (--matrix_pci) prints the PCIe route alone: on an NVLink host its PHB is no pair's path as
    topo -m gives it (NV# first), so it is not read as one; the same matrix under `topo -m` is."""
    facts, ev = _facts("$ nvidia-smi topo -mp\n" + _MATRIX + "\nall_reduce is slow on these two GPUs\n")
    assert ("pair:0-1", "pair.path") not in facts and ("pair:0-1", "pair.cross_socket") not in facts
    assert facts.get(("host", "host.gpu_count")) == 2 and any("topo -mp" in n for n in ev.notes)
    facts, _ = _facts("$ nvidia-smi topo --matrix_pci\n" + _MATRIX)
    assert ("pair:0-1", "pair.path") not in facts
    facts, _ = _facts("$ nvidia-smi topo -m\n" + _MATRIX)
    assert facts.get(("pair:0-1", "pair.path")) == "PHB"
