"""A paste reflowed as a whole (the forty-fifth session).

A mail client, a mailing list's archive or a fixed-width web view reflows every line longer than its width between
words (textwrap's rule: a word goes to the next line only where it did not fit). Until now only the readers of
sentences read such a paragraph whole (``Paste.flowed``); the readers of a program's output (a topology matrix, an
nccl-tests table, an NCCL WARN line) read the cut lines as they were. ``paste.unreflow``, the last step of ``tidy``, joins
each soft break of a paste whose longest line is a reflow's width (60-100 columns) for every reader, the line count kept
(each remainder's line is left empty, as ``unwrap`` does for a terminal's hard wrap). ``soft_breaks`` no longer joins a
line that starts with a word two or more lines of its paragraph start with (a program's records: nvidia-smi nvlink -s's
"GPU 0:" / "NVML:", not only lines that repeat the previous line's first word)."""

import os
import textwrap

import pytest

from p2ptop.evidence.paste import soft_breaks, tidy, unreflow

from .kbtools import explained, flat_facts, text_facts

CAPTURES = os.path.join(os.path.dirname(__file__), "fixtures", "captures")


def reflow(text: str, width: int = 72) -> str:
    """Every line longer than ``width`` reflowed between words, as a mail client does."""
    out = []
    for line in text.split("\n"):
        out.extend(textwrap.wrap(line, width, break_long_words=False, break_on_hyphens=False)
                   if len(line) > width else [line])
    return "\n".join(out)


def capture(*parts: str) -> str:
    with open(os.path.join(CAPTURES, *parts), encoding="utf-8") as f:
        return f.read()


MESSAGES = [
    # NCCL's driver-call failure (src/include/cudawrap.h CUCHECK) under its host:pid:tid prefix
    "node7:1234:1290 [3] transport/alloc.cc:88 NCCL WARN Cuda failure 401 'the operation cannot be performed in the "
    "present state'\nnode7:1234:1290 [3] NCCL INFO init.cc:1200 -> 1",
    # NCCL's /dev/shm failure (src/misc/shmutils.cc), both WARN lines
    "misc/shmutils.cc:72 NCCL WARN Error: failed to extend /dev/shm/nccl-0aAbCd to 9637892 bytes, error 28 (No space "
    "left on device)\ninclude/shm.h:48 NCCL WARN Call to posix_fallocate failed : No space left on device",
    # a log collector's JSON record holding NCCL's message
    '{"level":"error","msg":"nccl failure","error":"NCCL WARN Cuda failure 217 \'peer access is not supported between '
    'these two devices\'","rank":3}',
]


@pytest.mark.parametrize("text, width", [(MESSAGES[0], 72), (MESSAGES[0], 80), (MESSAGES[1], 64), (MESSAGES[1], 72),
                                         (MESSAGES[1], 80), (MESSAGES[2], 64), (MESSAGES[2], 80)])
def test_each_message_whole_again_on_its_line(text, width):
    cut = reflow(text, width)
    assert cut.count("\n") > text.count("\n")  # the reflow did cut it
    joined = unreflow(cut)
    assert joined.count("\n") == cut.count("\n")  # line numbers kept: the remainders' lines are empty
    assert [line for line in joined.split("\n") if line] == text.split("\n")


def test_a_single_cut_joined_only_mid_sentence():
    # one soft break alone is weak evidence (the longest line of any paste is "full"): joined where its remainder goes on
    # mid-sentence ("'the operation ...", "devices"), not where it starts as a line of its own could ("401 'the ...",
    # "NCCL 2.18", "0")
    assert reflow(MESSAGES[0], 64).count("\n") == 2 and unreflow(reflow(MESSAGES[0], 64)) == reflow(MESSAGES[0], 64)
    flux = ("$ flux run -N1 -n1 printenv CUDA_VISIBLE_DEVICES\n-1\n"
            "$ flux run -N1 -n1 python -c 'import torch; print(torch.cuda.device_count())'\n0")
    assert tidy(flux) == flux


def test_a_command_line_is_never_a_remainder():
    smi = ("$ nvidia-smi -L\nGPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-2c8a6b16-b2c2-3df8-4a46-1c019335308d)\n"
           "GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-2c8a6b16-b2c2-3df8-4a46-1c0193353000)\n"
           "$ torchrun --standalone --nproc_per_node=2 r.py\n[rank1]: RuntimeError: CUDA error: invalid device ordinal")
    assert tidy(smi).split("\n")[3] == "torchrun --standalone --nproc_per_node=2 r.py"


@pytest.mark.parametrize("text", MESSAGES[:2])
def test_reflowed_message_answered_as_written(text):
    # (the JSON record is not: the matcher's own lines are not unreflowed, see ARCHITECTURE, and its wrapped-line search
    # puts one entry's hit on the cut line and the others' on the remainder, so the shared-message rule misses it)
    assert explained(reflow(text)) == explained(text)


@pytest.mark.parametrize("parts", [("h100x1-vm", "nvidia-smi-topo-m.txt"), ("h200x2-nvswitch-vm", "nvidia-smi-topo-m.txt"),
                                   ("h200x2-nvswitch-vm", "nvidia-smi-topo-p2p.txt"), ("h200x2-live", "nvidia-smi-topo-m.txt")])
def test_reflowed_topology_reads_as_the_capture(parts):
    # a real host's matrix mailed at 72 columns: before, its CPU-affinity column lost, a pair read as crossing sockets
    # (H100 VM, H200) or a -p2p matrix as failing
    text = capture(*parts)
    assert max(len(line) for line in text.split("\n")) > 72
    assert flat_facts(reflow(text)) == flat_facts(text)


@pytest.mark.parametrize("text", [
    capture("h200x2-live", "nvidia-smi-nvlink-s.txt"),  # records, each link's line indented
    # nvidia-smi nvlink -s on GPUs without NVLink: "GPU N: ..." and "NVML: ..." alternate; neither continues the other
    "GPU 0: NVIDIA GeForce RTX 3090 (UUID: GPU-1b2c3d4e-aaaa-bbbb-cccc-00000000aaaa)\n"
    "NVML: Unable to retrieve NVLink information as all links are inActive\n"
    "GPU 1: NVIDIA GeForce RTX 3090 (UUID: GPU-1b2c3d4e-aaaa-bbbb-cccc-00000000bbbb)\n"
    "NVML: Unable to retrieve NVLink information as all links are inActive",
    # a writer's short lines and a traceback
    "Environment:\nCUDA 12.1\nDriver 535.104.05 on Ubuntu 22.04 with two RTX 4090 cards in one workstation\nNCCL 2.18",
    'Traceback (most recent call last):\n  File "/opt/app/train.py", line 41, in <module>\n'
    "    model = DDP(model, device_ids=[local_rank])\nRuntimeError: CUDA error: peer access is not supported between "
    "these two devices",
    # a line written longer than any reflow's width: no reflow happened
    "x" * 150 + "\nnot a continuation of a reflow",
])
def test_writers_lines_stay(text):
    assert unreflow(text) == text


def test_records_alternating_with_another_record_are_no_continuations():
    lines = ["GPU 0: NVIDIA GeForce RTX 3090 (UUID: GPU-1b2c3d4e-aaaa-bbbb-cccc-00000000aaaa)",
             "NVML: Unable to retrieve NVLink information as all links are inActive",
             "GPU 1: NVIDIA GeForce RTX 3090 (UUID: GPU-1b2c3d4e-aaaa-bbbb-cccc-00000000bbbb)",
             "NVML: Unable to retrieve NVLink information as all links are inActive"]
    assert soft_breaks(lines, 80) == []
    # the same width, a writer's paragraph: its soft break is found
    assert soft_breaks(["We run two RTX 3090 cards in one box and every all_reduce in NCCL hangs forever",
                        "unless NCCL_P2P_DISABLE=1 is set."], 80) == [0]


def test_tidy_ends_with_unreflow():
    text = MESSAGES[1]
    assert tidy("> " + reflow(text).replace("\n", "\n> ")).split("\n")[0] == text.split("\n")[0]


def test_records_with_one_head_are_no_continuations():
    # grep . /sys/bus/pci/devices/*/current_link_* (each line a file's name and value): no reflow joins them
    lines = ["/sys/bus/pci/devices/0000:41:00.0/current_link_speed:2.5 GT/s PCIe",
             "/sys/bus/pci/devices/0000:41:00.0/current_link_width:16",
             "/sys/bus/pci/devices/0000:41:00.0/max_link_speed:16.0 GT/s PCIe",
             "/sys/bus/pci/devices/0000:41:00.0/max_link_width:16"]
    assert soft_breaks(lines, 72) == [] and unreflow("\n".join(lines)) == "\n".join(lines)


# --- an excerpt of two lines under grep's or cat's prefixes ------------------------------------------------------------
# grep -n -A1 / grep -H -A1 / cat -n of a two-line excerpt: both lines carry the prefix, which was read as one only on
# three lines or more. Two of two now count (the numbers must still rise); one line alone, or two where only one carries
# a number, stay as written.

PIDFD = ("RuntimeError: pidfd_getfd(pidfd=..., fd=...) failed with errno 1: Operation not permitted.\n"
         "  ... try adding --cap-add=SYS_PTRACE to your docker run command.")


@pytest.mark.parametrize("prefixed", [
    "101:" + PIDFD.replace("\n", "\n102:"),                                  # grep -n of two matches
    "logs/worker3.log:" + PIDFD.replace("\n", "\nlogs/worker3.log-"),        # grep -H -A1
    "    41\t" + PIDFD.replace("\n", "\n    42\t"),                          # cat -n
])
def test_two_line_excerpt_read_without_its_prefix(prefixed):
    assert tidy(prefixed) == tidy(PIDFD)
    assert explained(prefixed)[:1] == explained(PIDFD)[:1] == [("cuda_ipc_cross_boundary", "likely")]


@pytest.mark.parametrize("text", [
    "12:RuntimeError: CUDA error: invalid device ordinal\n3:during the second epoch",  # numbers that do not rise
    "2: GPU 1 is missing after the reboot\nnothing else changed",                          # one line numbered
])
def test_two_lines_not_a_tools_excerpt(text):
    assert tidy(text) == text


# --- PyTorch's NCCL error detail that lost its line breaks -------------------------------------------------------------
# c10d's getNcclErrorDetailStr returns "ncclUnhandledCudaError: Call to CUDA function failed." + "\nLast error:\n" + NCCL's
# last error, after "\n": in a paste folded onto one line (a chat, a form field) NCCL's last error starts a line again,
# so an entry's pattern for its start ("^Cuda failure ...") reads it.

FOLDED = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1331, "
          "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1 ncclUnhandledCudaError: Call "
          "to CUDA function failed. Last error: Cuda failure 'invalid argument' Traceback (most recent call last): "
          "File \"train.py\", line 14, in <module> main()")


def test_folded_nccl_detail_gets_its_lines_back():
    from p2ptop.evidence.paste import reline

    lines = reline(FOLDED).split("\n")
    assert "ncclUnhandledCudaError: Call to CUDA function failed." in lines
    assert "Last error:" in lines and "Cuda failure 'invalid argument'" in lines


def test_folded_nccl_detail_answered_as_the_lines():
    from p2ptop.evidence.paste import reline

    assert explained(FOLDED) == explained(reline(FOLDED))
    assert "nccl_version_bug" in [c for c, _ in explained(FOLDED)[:3]]


# --- grep -n's numbers before srun's label -----------------------------------------------------------------------------
# grep reads a file holding what the job printed: its "103:" is outermost, and where the line goes on with a space
# ("103:   D\D     0      1") it read as srun's "103: " label on those lines alone, so the numbers stayed on the others.

MATRIX = ("Unidirectional P2P=Enabled Bandwidth (P2P Writes) Matrix (GB/s)\n"
          "   D\\D     0      1      2      3\n"
          "     0 912.68   9.90   9.90   9.90\n"
          "     1   9.90 922.37   9.90   9.90\n"
          "     2  10.01  10.01 922.24  10.01\n"
          "     3  10.23  10.23  10.23 921.83")


def test_grep_numbers_come_off_before_srun_labels():
    numbered = "\n".join(f"{n}:{line}" for n, line in enumerate(MATRIX.split("\n"), 110))
    assert tidy(numbered) == tidy(MATRIX)
    labelled = "\n".join(f"{n}:0: {line}" for n, line in enumerate(MATRIX.split("\n"), 110))  # grep -n of srun -l output
    assert tidy(labelled) == tidy(MATRIX)
    assert tidy("\n".join("0: " + line for line in MATRIX.split("\n"))) == tidy(MATRIX)  # srun's label alone, as before


# --- a topology matrix as a markdown table, folded ---------------------------------------------------------------------
# GitHub issues often carry `nvidia-smi topo -m` as a markdown table; folded onto one line (a chat, a form field) its
# header, separator and rows start lines again, as the plain matrix's rows did.

MD_TOPO = ("| | GPU0 | GPU1 | CPU Affinity | NUMA Affinity |\n|---|---|---|---|---|\n"
           "| GPU0 | X | SYS | 0-15 | 0 |\n| GPU1 | SYS | X | 16-31 | 1 |")


def test_folded_markdown_topology_gets_its_rows_back():
    from p2ptop.evidence.paste import reline

    folded = "Two GPUs are slow to talk; nvidia-smi topo -m shows this on the node we got from the provider: " + \
        MD_TOPO.replace("\n", " ")
    assert reline(folded).split("\n")[1:] == MD_TOPO.split("\n")
    assert text_facts(folded).get("pair:0-1", {}).get("pair.path") == "SYS"


# --- a single hard cut inside an error's name or message ---------------------------------------------------------------
# A terminal cuts at its width wherever it stands; with only one line at that width, unwrap cannot tell the width and
# leaves the cut. Where the cut splits a name or message of CUDA's error table or NCCL's results (codes.known_across)
# it is no writer's break: joined, for the evidence readers (tidy) and for the matcher's codes alike.

from p2ptop.evidence.paste import rejoin_cut_names  # noqa: E402
from p2ptop.knowledge.codes import known_across  # noqa: E402


@pytest.mark.parametrize("a, b", [
    ("when I try run python train.py , it get an error :failed call to cuInit: CUDA_ER", "ROR_NO_DEVICE"),
    ("RuntimeError: CUDA error: cudaErrorPeerAcc", "essUnsupported (217) in the all-reduce"),
    ("NCCL error: ncclUnhandledCuda", "Error: Call to CUDA function failed."),
    ("RuntimeError: CUDA error: peer access is not sup", "ported between these two devices"),
])
def test_known_across(a, b):
    assert known_across(a, b)


@pytest.mark.parametrize("a, b", [
    ("RuntimeError: CUDA error: invalid argu", "ment"),              # a generic message: no sign of a cut
    ("the run failed with CUDA_ERROR_NO_DEVICE", "and then stopped"),  # whole on the first line
    ("we saw CUDA_ERROR_NO_DEVICE in the log; the", "next run was fine"),
    ("cudaErrorPeer", "Stuff"),                                       # no such name
])
def test_not_known_across(a, b):
    assert not known_across(a, b)


def test_single_cut_name_joined_for_readers_and_matcher():
    cut = "when I try run python train.py , it get an error :failed call to cuInit: CUDA_ER\nROR_NO_DEVICE\n"
    assert rejoin_cut_names(cut).split("\n")[:2] == [
        "when I try run python train.py , it get an error :failed call to cuInit: CUDA_ERROR_NO_DEVICE", ""]
    assert flat_facts(cut).get("error.cuda") == "cudaErrorNoDevice"
    assert explained(cut)[:1] == explained(cut.replace("CUDA_ER\n", "CUDA_ER"))[:1] == [("device_not_visible", "possible")]
    # a line of that length cut elsewhere stays as written
    other = "when I try run python train.py , it get an error :failed call to cuInit: somethi\nng else\n"
    assert rejoin_cut_names(other) == other


# --- a folded traceback's exception line ---------------------------------------------------------------------------------
# Python's traceback ends with the exception as traceback.format_exception_only prints it, "module.Type: message" at a
# line's start: in a paste folded onto one line it starts its line again, so the readers of an exception line read it.

def test_folded_traceback_ends_with_its_exception_line():
    from p2ptop.evidence.paste import reline

    folded = ('Traceback (most recent call last):   File "test_dist.py", line 4, in <module>     '
              'dist.init_process_group(backend="nccl", world_size=2, rank=0)   File "C:\\\\Anaconda\\\\lib\\\\site-packages\\\\torch'
              '\\\\distributed\\\\__init__.py", line 73, in init_process_group     raise RuntimeError("PyTorch built without '
              'distributed support") RuntimeError: PyTorch built without distributed support  ## Environment  - OS : Windows10')
    lines = reline(folded).split("\n")
    assert lines[-1].startswith("RuntimeError: PyTorch built without distributed support")
    assert any(line.rstrip().endswith('raise RuntimeError("PyTorch built without distributed support")') for line in lines)
    assert "nccl_unavailable_platform" in [c for c, _ in explained(folded)[:3]]


def test_an_exception_named_in_a_short_sentence_stays():
    from p2ptop.evidence.paste import reline

    text = "I get RuntimeError: CUDA error: invalid device ordinal when I start the second rank on the node."
    assert reline(text) == text


def test_the_answer_says_the_paste_was_reflowed():
    from p2ptop.evidence import read_text

    notes = read_text(reflow(MESSAGES[0], 72)).notes
    assert any("reflowed" in n and "1 line break" in n for n in notes)
    assert not any("reflowed" in n for n in read_text(MESSAGES[0]).notes)


# --- a paste that was not reflowed as a whole ----------------------------------------------------------------------------
# A reflow at the paste's width fills every line: a paragraph that a writer wrapped at a narrower width of their own,
# beside log lines longer than it, shows only a break here and there that the next word "would not have fitted" at the
# paste's width; it is left as written. A word longer than the width (a path, a URL) stands on a line of its own and
# does not set the width.

MIXED = ("I'm encountering intermittent errors while trying to use the Multi-Process\n"
         "Service with CUDA 7.0 for improving concurrent access to a Kepler K20Xm GPU by\n"
         "multiple MPI processes that perform GPU-to-GPU communication with each other.\n"
         "For certain transmission patterns between these processes, the program runs\n"
         "without any problems. For others (e.g., 16 processes partitioned into 4 groups),\n"
         "however, it dies with the following error:\n\n"
         "[node05:20562] [[58522,2],4] ORTE_ERROR_LOG: Error in file pml_ob1_recvreq.c at line 477\n"
         "[node05:20564] [[58522,2],6] ORTE_ERROR_LOG: Error in file pml_ob1_recvreq.c at line 477")


def test_a_paragraph_written_narrower_than_the_log_beside_it_stays():
    assert unreflow(MIXED) == MIXED


def test_a_long_word_on_its_own_line_does_not_set_the_width():
    text = ("E0216 06:57:36.106158  4415 pybind_state.h:422] Exception encountered running PythonOp function: "
            "RuntimeError: [enforce fail at context_gpu.h:307] error == cudaSuccess. 77 vs 0. Error at: "
            "/opt/caffe2/caffe2/core/context_gpu.h:307: an illegal memory access was encountered")
    cut = reflow(text, 72) + "\n\nAt:\n/opt/project/detectron/lib/ops/collect_and_distribute_fpn_rpn_proposals.py(62):"
    assert max(len(line) for line in cut.split("\n")) > 72
    assert unreflow(cut).split("\n")[0] == text
