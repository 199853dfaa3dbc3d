"""Lines a program frames, and lines a console pads (the forty-sixth round).

Each rule is written from the program that frames the lines, as the launchers' prefixes were:

- Julia's ConsoleLogger prints a record of several lines in a box's left edge ("┌ Error: ...", "│   key = value",
  "└ @ Main file.jl:12"); rich's panels and traceback boxes put a right edge after the padded text ("│ ... │").
- pytest prints an exception's lines after its fail marker: "E" and the indent less one (_pytest/_code/code.py,
  get_exconly with markall: "E   RuntimeError: ..."; the indent is 4, or 4 and the failing statement's own), the
  message's own indent after it.
- A console that pads every line to its width (Windows' conhost, screen) or a markdown line break leaves spaces at
  line ends; they stretched the distance between words that a reader allows.
- A single hard cut inside one of NCCL's own messages ("unhandled sys" / "tem error", ncclGetErrorString) is joined
  as one inside CUDA's was.
"""

import os
import re

import pytest

from p2ptop.evidence.paste import tidy, unframe, unprefix
from p2ptop.knowledge.codes import known_across

from .kbtools import explained, flat_facts

CAPTURES = os.path.join(os.path.dirname(__file__), "fixtures", "captures")


def capture(*parts: str) -> str:
    with open(os.path.join(CAPTURES, *parts), encoding="utf-8") as f:
        return f.read()


def julia(text: str) -> str:
    """The text as Julia's ConsoleLogger prints a record of several lines."""
    lines = text.split("\n")
    return "\n".join(("┌ " if i == 0 else "└ " if i == len(lines) - 1 else "│ ") + line for i, line in enumerate(lines))


def panel(text: str, width: int = 120) -> str:
    """The text inside a rich panel: each line padded to the panel's width between its two edges."""
    return "\n".join(f"│ {line:<{width}} │" for line in text.split("\n"))


def pytest_marked(text: str, indent: int = 4) -> str:
    return "\n".join("E" + " " * (indent - 1) + line for line in text.split("\n"))


def padded(text: str, width: int = 120) -> str:
    return "\n".join(line.ljust(width) for line in text.split("\n"))


TOPO = capture("h200x2-nvswitch-vm", "nvidia-smi-topo-m.txt")
ERROR = ("Traceback (most recent call last):\n  File \"/opt/app/train.py\", line 41, in <module>\n"
         "    model = DDP(model, device_ids=[local_rank])\n"
         "RuntimeError: CUDA error: peer access is not supported between these two devices\n"
         "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be "
         "incorrect.")


@pytest.mark.parametrize("frame", [julia, panel, pytest_marked, padded, lambda t: pytest_marked(t, 8)])
def test_a_framed_topology_reads_as_the_capture(frame):
    assert flat_facts(frame(TOPO)) == flat_facts(TOPO)


@pytest.mark.parametrize("frame", [julia, panel, pytest_marked, padded])
def test_a_framed_error_is_answered_as_written(frame):
    assert explained(frame(ERROR)) == explained(ERROR)
    assert explained(ERROR)  # (an answer to compare: the error is one the knowledge base knows)


def test_pytests_run_keeps_the_messages_own_indent():
    run = ("    def test_p2p():\n>       x.to('cuda:1')\n"
           "E       RuntimeError: CUDA error: an illegal memory access was encountered\n"
           "E\n"
           "E         detail indented by the message itself\n"
           "\n"
           "tests/test_p2p.py:12: RuntimeError")
    assert unframe(run).split("\n") == [
        "    def test_p2p():", ">       x.to('cuda:1')", "RuntimeError: CUDA error: an illegal memory access was encountered",
        "", "  detail indented by the message itself", "", "tests/test_p2p.py:12: RuntimeError"]


@pytest.mark.parametrize("text", [
    "E0916 21:30:26.347004   133 common.cpp:114] Cannot create Cublas handle.",  # glog's level letter: no space after it
    "E\nEvent   stays",  # a lone "E" and a word starting with E: no pytest run
    "GPU0 │ X │ NV18",  # a box's edge inside a line, not at its start
    "|   0  NVIDIA H200                    On  |   00000000:19:00.0 Off |                    0 |",  # nvidia-smi's ASCII table
    "╭──────────── Traceback (most recent call last) ────────────╮",  # a box's top border: no text to free
])
def test_unframed_lines_stay(text):
    assert unframe(text) == text


def test_a_launcher_outside_or_inside_the_frame():
    inner = "[rank0]: E   RuntimeError: CUDA error: peer access is not supported between these two devices"
    outer = "│ (EngineCore_DP0 pid=2944726) RuntimeError: pidfd_getfd(pidfd=185, fd=163) failed with errno 1\n" * 2
    assert unprefix(inner) == "RuntimeError: CUDA error: peer access is not supported between these two devices"
    assert unprefix(outer).split("\n")[0] == "RuntimeError: pidfd_getfd(pidfd=185, fd=163) failed with errno 1"


def test_trailing_spaces_come_off_and_keep_the_words_near():
    # the GPUDirect registration limit is read where the size is said near the registration call: padding each line
    # to a console's width had put them 240 characters apart
    text = ("When I use this function:\nibv_reg_mr(rc_get_pd(), GPU_ADDR,SIZE, IBV_ACCESS_LOCAL_WRITE)\n\n"
            "If the SIZE is over 500MB ,it will return NULL.\n\nGPU Tesla T4  Driver Version: 460.91.03")
    assert flat_facts(text).get("gpu.bar1_mb") == 500
    assert flat_facts(padded(text)) == flat_facts(text)
    assert tidy("a  \nb\t\nc ") == "a\nb\nc"


@pytest.mark.parametrize("a, b", [
    ("RuntimeError: NCCL error: unhandled sys", "tem error (run with NCCL_DEBUG=INFO for details)"),
    ("ncclRemoteError: remote process exited or there was a net", "work error"),
])
def test_nccls_own_messages_known_across(a, b):
    assert known_across(a, b)


def test_nccls_short_generic_message_is_not():
    assert not known_across("NCCL error: internal er", "ror")  # "internal error" is shorter than a message that tells


# --- nvidia-smi -q that lost its nesting ----------------------------------------------------------------------------------
# nvidia-smi indents every field under its section title; a web page that collapses runs of spaces puts every field at
# one indent, a viewer that trims each line's start at none. A title then holds the fields after it, to the next title.

Q_EXCERPT = """GPU 00000000:2D:00.0
    Product Name                          : NVIDIA GeForce GTX 1080 Ti
    GPU Link Info
        PCIe Generation
            Max                           : 3
            Current                       : 1
        Link Width
            Max                           : 16x
            Current                       : 8x
    BAR1 Memory Usage
        Total                             : 256 MiB
        Used                              : 5 MiB"""


@pytest.mark.parametrize("flatten", [lambda t: re.sub(r"[ \t]+", " ", t),  # runs of spaces collapsed
                                     lambda t: "\n".join(line.lstrip() for line in t.split("\n"))])  # starts trimmed
def test_flattened_q_reads_as_nested(flatten):
    facts = flat_facts(Q_EXCERPT)
    assert (facts["gpu.pcie_gen_cur"], facts["gpu.pcie_gen_max"], facts["gpu.pcie_width_cur"], facts["gpu.bar1_mb"]) == (1, 3, 8, 256)
    assert flat_facts(flatten(Q_EXCERPT)) == facts


def test_nested_q_keeps_its_nesting():
    # a field after a title at the title's own indent is the title's sibling where the paste is nested
    text = "    Clocks Event Reasons\n        Idle                : Active\n    PCIe Generation\n        Current : 4\n" \
           "    Max                                  : 3\n"
    assert "gpu.pcie_gen_max" not in flat_facts(text)


def test_squeezed_q_with_its_gpu_header_reads_as_nested():
    # `tr -s ' '` keeps one level of -q's nesting (a GPU header at column 0, its fields at 1) and loses the rest: on the
    # live H200 (h200x1-2026-12-02d) the squeezed -q had lost every field below a title
    text = "==============NVSMI LOG==============\n\nTimestamp                       : Wed Dec  2 05:01:12 2026\n" \
           "Driver Version                  : 580.159.04\n\nAttached GPUs                   : 1\n" + Q_EXCERPT
    facts = flat_facts(text)
    assert facts["gpu.pcie_gen_cur"] == 1 and facts["gpu.bar1_mb"] == 256
    assert flat_facts(re.sub(" +", " ", text)) == facts


# --- a healthy host's nvidia-smi -q is no report -------------------------------------------------------------------------
# The live H200's full `nvidia-smi -q` (tests/fixtures/captures/h200x1-vm/nvidia-smi-q.txt) read "HW Slowdown : Not Active"
# as slowness and the "MIG Mode" title as MIG in use, so the MIG entries were offered as leads on a healthy host. The
# readers of sentences now skip the lines -q's reader reads as its own (smi._q_own_lines: its aligned fields and the
# titles above deeper fields).

LIVE_Q = capture("h200x1-vm", "nvidia-smi-q.txt")


def test_live_q_says_no_trouble():
    facts = flat_facts(LIVE_Q)
    assert not any(k.startswith("symptom.") for k in facts)
    assert facts.get("gpu.mig") is not True and facts["gpu.name"] == "NVIDIA H200"
    assert explained(LIVE_Q) == []


@pytest.mark.parametrize("change", [lambda t: "\n".join(line.lstrip() for line in t.split("\n")),
                                    lambda t: re.sub(" +", " ", t), padded])
def test_live_q_reframed_reads_the_same(change):
    assert flat_facts(change(LIVE_Q)) == flat_facts(LIVE_Q)


def test_sentences_beside_q_still_read():
    text = "Training is very slow on this host, here is nvidia-smi -q:\n" + LIVE_Q + "\nWe use MIG instances for the job."
    facts = flat_facts(text)
    assert facts.get("symptom.slow") is True and facts.get("gpu.mig") is True


def test_jenkins_timestamps_come_off():
    # Jenkins' Timestamper writes the RFC 3339 time in brackets before each line of a pipeline's console text
    stamped = "\n".join("[2026-11-29T14:03:07.123Z] " + line for line in TOPO.split("\n"))
    assert flat_facts(stamped) == flat_facts(TOPO)
    assert unprefix("[2026-11-29T14:03:07.123Z] RuntimeError: x\n[2026-11-29T14:03:08.001Z] y") == "RuntimeError: x\ny"
    assert unprefix("[2026-11-29] RuntimeError: x") == "[2026-11-29] RuntimeError: x"  # a date alone is no Timestamper's


# --- a healthy host's other outputs (h200x1-2026-12-02g) -------------------------------------------------------------------
# Each was answered with leads on the live H200: the matcher's never-silent gate read a word of trouble in -q's labels
# (its lines are folded and lower case there, so -q's own lines are found by its GPU header and fields: prose._q_lines),
# in a dotted name of --query-gpu's header, and "No MIG-enabled devices found." was read as MIG in use.

@pytest.mark.parametrize("name", ["nvidia-smi-q-d-performance.txt", "nvidia-smi-q-d-ecc.txt", "nvidia-smi-q-d-row-remapper.txt",
                                  "nvidia-smi-query-gpu.csv", "nvidia-smi-q.txt"])
def test_healthy_outputs_are_no_report(name):
    from p2ptop.evidence.read import trouble_said

    text = capture("h200x1-vm", name)
    assert not trouble_said(text)
    assert explained(text) == []


def test_no_mig_enabled_devices_is_no_mig():
    assert "gpu.mig" not in flat_facts(capture("h200x1-vm", "nvidia-smi-mig-lgi.txt"))
    assert flat_facts("We run the job on MIG-enabled GPUs and NCCL hangs.").get("gpu.mig") is True


@pytest.mark.parametrize("text, said", [
    ("Vulnerability Tsx async abort:   Mitigation; TSX disabled", False),  # lscpu's
    ("name, clocks_event_reasons.hw_slowdown, ecc.errors.uncorrected.volatile.total\nNVIDIA H200, Not Active, 0", False),
    ("The all-reduce hangs and then NCCL errors out on both GPUs.", True),  # a sentence still says it
    ("GPU 00000000:00:06.0\n    HW Slowdown : Not Active\nOur training became slow after the upgrade.", True),
])
def test_trouble_said(text, said):
    from p2ptop.evidence.read import trouble_said

    assert trouble_said(text) is said
