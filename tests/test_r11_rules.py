"""Rules written after fresh14 was judged and opened (2026-11-28), each from its own source, none for one paste.

1. Fewer GPUs seen than the machine holds, said in words ("can only see 1 GPU", "shows only one GPU", "only 2 of the 4
   GPUs are detected", "the second card is not detected", "device_count() returns 1 but ...", 只能识别到两张卡):
   symptom.gpus_missing. What a process sees is what CUDA_VISIBLE_DEVICES, the container's device list or the scheduler
   hands it (CUDA C Programming Guide, "CUDA Environment Variables"; NVIDIA Container Toolkit), and nvidia-smi lists
   only the GPUs the driver brought up; the entry gpu/fewer-gpus-visible-than-installed (device_not_visible) answers it,
   and says which layer to look at. Under MIG a process sees one MIG device by design: the MIG entry explains that, so
   the new entry is ruled out there. Before this, "nvidia-smi only shows one GPU" was answered "no sign of P2P trouble"."""

from __future__ import annotations

import pytest

from p2ptop.commands.explain import explain

from .kbtools import bundled_kb, host_facts

KB = bundled_kb()
ENTRY = "gpu/fewer-gpus-visible-than-installed"


def answer(text: str, n: int = 3):
    return [(m.entry.id, m.entry.failure_class, m.confidence) for m, _ in explain(KB, text, [], n)]


@pytest.mark.parametrize("text", [
    "Running 2x Titan RTX for ML, when I run the training loop I could only see 1 GPU.",
    "nvidia-smi only shows one GPU, the second A100 is not detected",
    "The server has 8 H100 but nvidia-smi shows only 6 GPUs after the reboot.",
    "Only 2 of the 4 GPUs are visible inside the pod.",
    "I have 2x RTX 3090 but torch.cuda.device_count() returns 1",
    "torch.cuda.device_count() only returns 1 on this dual-GPU workstation",
    "The second GPU is not detected by the driver after adding the riser.",
    "Docker does not see both GPUs, only GPU 0 is listed.",
    "服务器有4张A100，但是只能识别到2张卡",
    "装了两张4090，系统识别不到另一张卡",
])
def test_fewer_gpus_seen_is_a_symptom_and_is_answered(text):
    assert host_facts(text).get("symptom.gpus_missing") is True
    got = answer(text)
    assert got and got[0][0] == ENTRY and got[0][2] in ("likely", "possible")


@pytest.mark.parametrize("text", [
    "I only have one GPU available, so I ran the benchmark on a single card.",  # a one-GPU machine, nothing missing
    "torch.cuda.device_count() returns 2 as expected.",
    "torch.cuda.device_count() returns 0",  # no device at all: another symptom (cuda/no-device-visible)
    "Each container sees one GPU, as configured, and NCCL hangs in all_reduce.",  # a setup, not a missing GPU
    "The NVLink bridge is not detected.",
])
def test_other_sentences_are_not_missing_gpus(text):
    assert host_facts(text).get("symptom.gpus_missing") is not True


def test_under_mig_the_mig_entry_explains_one_device_and_the_new_entry_is_ruled_out():
    text = "With MIG enabled on the A100, nvidia-smi shows only one GPU and torch sees one device."
    assert host_facts(text).get("symptom.gpus_missing") is True
    assert ENTRY not in [i for i, _, _ in answer(text, 5)]


def test_the_count_seen_is_in_the_summary():
    from p2ptop.evidence import read_text

    ev = read_text("We can only see 2 GPUs out of eight.")
    said = [f for f in ev.findings if "symptom.gpus_missing" in f.facts]
    assert said and "(2 seen)" in said[0].summary and said[0].severity == "problem"


def test_it_fails_read_from_a_line_another_entry_explains_offers_no_setup_entry():
    """2. "It fails" read from the very line another entry's own text explains is that entry's error: the VM entry,
    offered only on that weak symptom and the host's VM (a Transformer Engine multicast error read on the 2 x H200 VM,
    2026-11-28: it came second, possible), stays an unsure candidate. Beside a failure in words of its own it is still
    offered."""
    from p2ptop.commands.explain import explain as run
    from p2ptop.demos import load_demo

    snap = load_demo("h200x2-vm")
    te = ("[rank3]: RuntimeError: CUDA device, driver and/or toolkit version does not support comm+GEMM overlap with "
          "CUDA Multicast. Launch app with UB_SKIPMC=1 to try CUDA IPC instead.")
    got = [(m.entry.id, m.confidence) for m, _ in run(KB, te, host_findings(snap), 3, "demo")]
    assert got[0] == ("transformer-engine/ub-no-cuda-multicast", "likely")
    assert all(c == "unsure" for i, c in got[1:] if i.startswith("vm/")), got
    words = "Inside the VM, P2P does not work between the two GPUs: NCCL all_reduce fails."
    got = [(m.entry.id, m.confidence) for m, _ in run(KB, words, [], 3)]
    assert ("vm/peer-access-unsupported-in-vm", "likely") in got or ("vm/peer-access-unsupported-in-vm", "possible") in got


def host_findings(snap):
    """The host's findings as explain --demo gives them."""
    from p2ptop.diagnose import findings_for, pair_fact_findings

    return findings_for(snap) + pair_fact_findings(snap)


def test_p2p_refused_entries_are_in_doubt_where_the_host_reports_p2p_ok():
    """3. An entry whose cause is peer access refused (a VM, the hardware, sockets, TensorFlow's and PyTorch's 'cannot
    access peer'; not the GeForce entry: patched drivers report P2P OK on GeForce cards that still fail) is in doubt (unsure, match.doubt) where the host's NVML reports P2P read OK for the
    pair: the text then comes from another host, or P2P is offered and fails in use (issue 22 point 2: the host's facts
    win, and the answer says so). Seen on the 2 x H200 VM, 2026-11-28: vLLM's 'Custom allreduce is disabled because your
    platform lacks GPU P2P capability' got the VM entry likely on a host whose NV18 pair reads P2P OK. Text alone, the
    same line is not in doubt."""
    from p2ptop.commands.explain import explain as run
    from p2ptop.demos import load_demo

    line = ("WARNING 03-11 10:22:41 [custom_all_reduce.py:212] Custom allreduce is disabled because your platform lacks GPU "
            "P2P capability or P2P test failed. To silence this warning, specify disable_custom_all_reduce=True explicitly.")
    on_host = run(KB, line, host_findings(load_demo("h200x2-vm")), 3, "demo")
    assert on_host and all(m.confidence == "unsure" for m, _ in on_host)
    assert any(r.startswith("in doubt: NVML reports P2P read OK") for m, _ in on_host for r in m.reasons)
    alone = run(KB, line, [], 3)
    assert alone and not any(r.startswith("in doubt") for m, _ in alone for r in m.reasons)
