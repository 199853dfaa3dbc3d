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


_NVLINK_S = ("GPU 0: NVIDIA H200 (UUID: GPU-90095fd6-7e62-5832-a41a-560181f69a1c)\n" + "".join(
    f"\t Link {i}: 26.562 GB/s\n" for i in range(18)) + "GPU 1: NVIDIA H200 (UUID: GPU-5f0c0d0e-1111-2222-3333-444455556666)\n"
    + "".join(f"\t Link {i}: 26.562 GB/s\n" for i in range(18)))


def test_a_command_line_above_a_healthy_output_is_no_report():
    """The command people paste above a tool's output ("$ nvidia-smi nvlink -s", or the same without its prompt) is a
    command typed, not a sentence naming GPU communication: a healthy output under it stays healthy (a real sweep of
    two H200s gave unsure leads on nvlink -s/-c/-e/-gt with their command line)."""
    for head in ("$ nvidia-smi nvlink -s\n", "nvidia-smi nvlink -s\n", "root@node:~# nvidia-smi nvlink -s\n",
                 "$ sudo nvidia-smi nvlink -s | head -40\n"):
        facts, _ = _facts(head + _NVLINK_S)
        assert ("host", "text.topic") not in facts, head
        assert dict(_top(head + _NVLINK_S)) == {}, head
    # a sentence that starts with the tool's name is the report's own words
    facts, _ = _facts("nvidia-smi nvlink shows every link up but NCCL still goes via SHM\n" + _NVLINK_S)
    assert facts.get(("host", "text.topic")) == "gpu communication"


def test_the_kernels_own_lines_are_no_report():
    """dmesg's boot lines that name NVLink ("nvidia-nvlink: Nvlink Core is being initialized") are the kernel's (real,
    from the two-H200 host), not a sentence of the report; its NVRM/Xid facts come from the kernel-log reader."""
    text = ("[    0.483526] nvidia: loading out-of-tree module taints kernel.\n"
            "[    0.577806] nvidia-nvlink: Nvlink Core is being initialized, major device number 240\n"
            "[    0.577828] NVRM: loading NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (nixbld@)  \n"
            "[    1.166300] NVRM: gpuClearFbhubPoisonIntrForBug2924523_GA100: FBHUB Interrupt detected. Clearing it.\n")
    facts, _ = _facts(text)
    assert ("host", "text.topic") not in facts
    assert dict(_top(text)) == {}
    # the same lines under a sentence that names the trouble are a report
    facts, _ = _facts("NCCL over NVLink hangs after boot, here is dmesg:\n" + text)
    assert facts.get(("host", "text.topic")) == "gpu communication"


def test_nvlink_capabilities_and_zero_error_counters_are_healthy():
    """nvidia-smi nvlink -c ("Link 0, P2P is supported: true") and nvlink -e with every counter at zero, as the two-H200
    host printed them (with their command line), are no trouble; a counter above zero still is the NVLink reader's."""
    caps = "$ nvidia-smi nvlink -c\nGPU 0: NVIDIA H200 (UUID: GPU-02d910ee-c7d3-daea-c117-54d0bd05e920)\n" + "".join(
        f"\t Link {i}, P2P is supported: true\n\t Link {i}, Access to system memory supported: true\n"
        f"\t Link {i}, SLI is supported: true\n\t Link {i}, Link is supported: true\n" for i in range(18))
    errs = "$ nvidia-smi nvlink -e\nGPU 0: NVIDIA H200 (UUID: GPU-02d910ee-c7d3-daea-c117-54d0bd05e920)\n" + "".join(
        f"\t Link {i}: Replay Errors: 0\n\t Link {i}: Recovery Errors: 0\n\t Link {i}: CRC Errors: 0\n\n" for i in range(18))
    for text in (caps, errs):
        assert dict(_top(text)) == {}
        facts, _ = _facts(text)
        assert ("host", "text.topic") not in facts and ("host", "symptom.reported") not in facts
    facts, _ = _facts(errs.replace("Link 3: CRC Errors: 0", "Link 3: CRC Errors: 1187"))
    assert any(k[1].startswith("gpu.nvlink") and v for k, v in facts.items())


def test_a_tools_own_header_lines_are_no_report():
    """A command run with its variables ("NCCL_DEBUG=WARN ./build/broadcast_perf -b 8 -e 256M -f 2 -g 2"), NCCL's own
    version line ("NCCL version 2.19.4+cuda12.2", init.cc) and rccl-tests' version line are a program's lines: a healthy
    table under them stays healthy (real corpus cases: nccl-tests-183, rccl-1129)."""
    for line in ("NCCL_DEBUG=WARN ./build/broadcast_perf -b 8 -e 256M -f 2 -g 2", "NCCL version 2.19.4+cuda12.2",
                 "rccl-tests: Version develop:3f7f785"):
        facts, _ = _facts(line + "\n")
        assert ("host", "text.topic") not in facts, line
    # the variables' own facts are still read from the command
    facts, _ = _facts("NCCL_P2P_DISABLE=1 ./build/all_reduce_perf -b 8 -e 128M -f 2 -g 2\n")
    assert facts.get(("host", "env.NCCL_P2P_DISABLE")) == "1"
    # a sentence about an NCCL version is the report's own
    facts, _ = _facts("NCCL version 2.19.4 hangs on our two H800s\n")
    assert facts.get(("host", "text.topic")) == "gpu communication"


def test_simple_p2p_progress_lines_are_no_report():
    """simpleP2P's progress lines (its printf strings: "Checking GPU(s) for support of peer to peer memory access...",
    "Enabling peer access between GPU0 and GPU1...", its cudaMemcpyPeer figure) are the program's: a run cut before its
    verdict says nothing by them (real corpus case tinygrad-30); its failures are still read (the tool reader)."""
    run = ("Checking for multiple GPUs...\nCUDA-capable device count: 2\n\nChecking GPU(s) for support of peer to peer "
           "memory access...\nEnabling peer access between GPU0 and GPU1...\nAllocating buffers (64MB on GPU0, GPU1 and CPU "
           "Host)...\nCreating event handles...\ncudaMemcpyPeer / cudaMemcpy between GPU0 and GPU1: 24.60GB/s\n"
           "Preparing host buffer and memcpy to GPU0...\nRun kernel on GPU1, taking source data from GPU0 and writing to GPU1...\n")
    facts, _ = _facts(run)
    assert ("host", "text.topic") not in facts
    assert dict(_top(run)) == {}
    failed = run + "Copy data back to host from GPU0 and verify results...\nVerification error @ element 1: val = 0.000000, ref = 4.000000\n"
    assert _facts(failed)[0].get(("host", "tool.verification_error")) is True


def test_an_nccl_log_that_ends_in_its_setup_gets_a_note_not_a_symptom():
    """A paste that ends on an NCCL INFO line before any channel is connected or 'Init COMPLETE' (real corpus case
    nccl-182, NCCL 2.4.2) may be a hang in setup or a cut paste: a note says both, no symptom is made of it."""
    cut = ("Thread 1 nGpus 2 minBytes 8 maxBytes 134217728 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
           "host:10156:10156 [0] NCCL INFO NET/Socket : Using [0]enp7s0:10.0.0.2<0>\nNCCL version 2.4.2+cuda9.0\n"
           "host:10156:10156 [1] NCCL INFO nranks 2\n"
           "host:10156:10156 [0] NCCL INFO comm 0x563ed42dd520 rank 0 nranks 2 cudaDev 0 nvmlDev 0\n"
           "host:10156:10156 [1] NCCL INFO comm 0x563ed42c2010 rank 1 nranks 2 cudaDev 1 nvmlDev 1\n"
           "host:10156:10156 [1] NCCL INFO Channel 00 :    0   1\n")
    facts, ev = _facts(cut)
    assert any("ends in NCCL's setup" in n for n in ev.notes)
    assert not any(k[1].startswith("symptom.") for k in facts)
    done = cut + "host:10156:10156 [0] NCCL INFO Ring 00 : 0[0] -> 1[1] via P2P/IPC\n"
    assert not any("ends in NCCL's setup" in n for n in _facts(done)[1].notes)
    assert not any("ends in NCCL's setup" in n for n in _facts(cut + "it works now\n")[1].notes)


def test_a_command_is_read_token_by_token():
    """prose._is_command: a GPU tool's command with options, short words, numbers, PCI ids, subcommands and a pipe to a
    filter is a command; a line that goes on in words is not, however long (a regex with overlapping choices took seconds
    on twenty numbers before a word: the reading is token by token now)."""
    from p2ptop.evidence.prose import _is_command
    for line in ("nvidia-smi nvlink -s", "sudo lspci -vvv -d 10de: | grep -e lnksta", "nccl_debug=warn ./build/all_reduce_perf "
                 "-b 8 -e 256m -f 2 -g 2", "dmesg | grep -i \"nvrm\"", "sudo nvidia-smi nvlink -s | head -40"):
        assert _is_command(line), line
    for line in ("nvidia-smi nvlink shows links down", "nvidia-smi |", "dmesg | awk '{print $1}'",
                 "nvidia-smi " + " ".join(["12"] * 5000) + " is broken", "nvidia-smi" + " | grep -i x" * 5000 + " then it hangs"):
        assert not _is_command(line), line[:60]


def test_p2ptops_own_topo_titles_are_no_report():
    """`p2ptop topo`'s own section titles for its -p2p matrices ("## n (nvlink)", topo_text.CAP_TITLES) are the tool's:
    the real one-GPU H100 capture's `p2ptop topo` output is healthy with the text alone."""
    from p2ptop.topo_text import CAP_TITLES
    for title in CAP_TITLES.values():
        facts, _ = _facts(f"## {title}\n \tGPU0\t\n GPU0\tX\t\n")
        assert ("host", "text.topic") not in facts, title


def test_import_of_a_pci_only_matrix_says_why():
    """`p2ptop import` of a paste holding only `nvidia-smi topo -mp` (the real two-H200 output) fails with an error that
    names the matrix and what to paste instead."""
    import os
    import pytest
    from p2ptop.evidence import read_text
    from p2ptop.evidence.snapshot import ImportError_, snapshot_from_evidence
    path = os.path.join(os.path.dirname(__file__), "fixtures", "device", "h200x2-healthy-outputs", "topo-mp.txt")
    with open(path, encoding="utf-8") as fh:
        ev = read_text(fh.read())
    with pytest.raises(ImportError_, match=r"topo -mp.*PCIe only.*nvidia-smi topo -m"):
        snapshot_from_evidence(ev, "paste")
