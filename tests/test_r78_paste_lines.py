"""A paste's lines as they reached us: reflowed by a mail client or an archive, cut with a launcher's prefix, run together
into one line; TensorFlow's peer matrix under a line label (the forty-ninth round).

- The matcher's regexes run on its own lines; where the whole paste was reflowed, the breaks the evidence readers find
  to be the reflow's (paste.unreflow) are joined for the entries' patterns too, however short the line that a long
  word (an argument list, a path) left behind, and however many lines a message runs over.
- A reflow cuts at a space: those breaks are joined with a space only, never with nothing ("network AWS" / "Libfabric"
  is no "AWSLibfabric", which read as "WSL"); a line as long as the paste's longest may be a terminal's cut inside a
  word, so it is still tried both ways.
- One message printed again and again (each rank's NCCL WARN, the kernel's BAR lines) and reflowed the same way each
  time leaves remainders that start alike: those are no program's records, so the breaks before them are the reflow's.
  A program's two-line message printed twice is not taken for one (PyTorch's "Compile with `TORCH_USE_CUDA_DSA`").
- A launcher's lines (Ray's "(Runner pid=...) ") reflowed with their prefix are joined at the width they had with it,
  before the prefix comes off (each remainder has none).
- TensorFlow's peer matrix (gpu_device.cc: "Device interconnect StreamExecutor with strength 1 edge matrix:", the ids,
  then "0:   N Y N N" per device) was read only beside enough other lines: where its rows were most of the paste, their
  "0: " was taken for Slurm's srun --label and removed. Run into one line, it and an interactive Python's prompts
  (IPython's "In [2]: " / "Out[2]: ", the REPL's ">>> ") start lines again.
"""

from __future__ import annotations

import textwrap

from p2ptop.evidence.paste import Paste
from p2ptop.knowledge.matcher import Log, compile_pattern

from .kbtools import answer, top3


def mail(text: str, width: int = 72) -> str:
    """``text`` as a mail client reflows it: each line longer than ``width`` cut between words."""
    out = []
    for line in text.split("\n"):
        out.extend(textwrap.wrap(line, width, break_long_words=False, break_on_hyphens=False) or [line]
                   if len(line) > width else [line])
    return "\n".join(out)


# llama.cpp's CUDA_CHECK message for a device-to-device copy between two GPUs (ggml-cuda.cu), as its issue #3965 quotes it
GGML = ("This PR seems to break LLaMA2 70B for me. I also tested 13B (F16 precision) but that one worked fine, so I'm "
        "guessing it's GQA related?\n\n```\nCUDA error: cudaMemcpyAsync(src1_ddq_i, src1_ddq_i_source, "
        "src1_ncols*src1_padded_col_size*q8_1_ts/q8_1_bs, cudaMemcpyDeviceToDevice, stream): invalid argument\n"
        "  in function ggml_cuda_op_mul_mat at ggml-cuda.cu:8196\nGGML_ASSERT: ggml-cuda.cu:239: !\"CUDA error\"\n```\n")

# NCCL's net.cc WARN when NCCL_NET names a plugin it cannot load, printed by two ranks
AWS = ("nid006365:179857:179897 [1] net.cc:626 NCCL WARN Error: network AWS Libfabric not found.\n\n"
       "nid006365:180142:180163 [0] NCCL INFO NET/Plugin: Could not find: ofi libnccl-net-ofi.so. Using internal network "
       "plugin.\n...\nnid006365:180142:180163 [0] net.cc:626 NCCL WARN Error: network AWS Libfabric not found.")

# the kernel's PCI resource allocation (drivers/pci/setup-res.c) failing a GPU's 32 GiB BAR1
BAR = ("[    9.976682] pci 0000:02:00.0: BAR 1: no space for [mem size 0x800000000 64bit pref]\n"
       "[    9.976683] pci 0000:02:00.0: BAR 1: failed to assign [mem size 0x800000000 64bit pref]\n"
       "[    9.976684] pci 0000:02:00.0: BAR 3: no space for [mem size 0x02000000 64bit pref]\n"
       "[    9.976684] pci 0000:02:00.0: BAR 3: failed to assign [mem size 0x02000000 64bit pref]\n"
       "[    9.976685] pci 0000:02:00.0: BAR 0: assigned [mem 0x80000000-0x80ffffff]")


def test_a_message_reflowed_over_a_short_line_matches_its_entry():
    pasted = mail(GGML)
    assert "src1_ncols*src1_padded_col_size*q8_1_ts/q8_1_bs,\ncudaMemcpyDeviceToDevice" in pasted  # three lines
    rx = compile_pattern(r"cudaMemcpy(?:Async)?\([^\n]{0,300}cudaMemcpyDeviceToDevice[^\n]{0,200}?invalid argument")
    assert (Log(pasted).first_line(rx), Log(GGML).first_line(rx)) == (5, 4)  # the line where the message starts
    assert "peer_access_not_enabled" in top3(pasted) and "peer_access_not_enabled" in top3(GGML)


def test_a_reflow_break_is_joined_with_a_space_only():
    pasted = mail(AWS)
    assert "network AWS\nLibfabric" in pasted
    wsl = compile_pattern("WSL|microsoft-standard|DESKTOP[-:]|Windows")
    assert Log(pasted).first_line(wsl) is None
    assert not [a for a in answer(pasted) if a[3].startswith("wsl/")]
    aws = compile_pattern(r"network AWS Libfabric not found")
    assert Log(pasted).first_line(aws) == 1


def test_a_cut_at_the_full_width_is_still_tried_without_a_space():
    # a terminal's single cut inside a word ("Red" / "uceOp") is as long as the paste's longest line
    text = ("which pytorch version did the author use on orin nx?\n\n"
            "after installing my environment this came up: AttributeError: module 'torch.distributed' has no attribute 'Red\n"
            "uceOp', how do I solve it?")
    rx = compile_pattern(r"module 'torch\.distributed' has no attribute 'ReduceOp'")
    assert Log(text).first_line(rx) == 3


def test_repeated_messages_reflowed_alike_are_joined_for_the_readers():
    paste = Paste(mail(AWS))
    assert paste.reflowed == [1, 4, 7]
    assert paste.lines[0].endswith("NCCL WARN Error: network AWS Libfabric not found.")
    bar = Paste(mail(BAR))
    assert bar.lines[0].endswith("BAR 1: no space for [mem size 0x800000000 64bit pref]")
    assert bar.lines[2].endswith("BAR 1: failed to assign [mem size 0x800000000 64bit pref]")
    assert "bar1_too_small" in top3(mail(BAR)) and "bar1_too_small" in top3(BAR)


def test_a_two_line_message_printed_twice_is_no_reflow():
    text = ("RuntimeErrorRuntimeError: CUDA error: invalid device ordinal\n"
            "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
            ": CUDA error: invalid device ordinal\n"
            "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n")
    flowed = Paste(text).flowed(10_000, 10_000)
    assert "ordinal compile" not in flowed.lower()
    assert Paste(text).reflowed == []


# PyTorch's ProcessGroupNCCL error over NCCL's "Cuda failure 217" (its CUDACHECK's words), printed by a Ray actor
RAY = ("(Runner pid=16018) torch.distributed.DistBackendError: NCCL error in: "
       "/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3699, unhandled cuda error (run with NCCL_DEBUG=INFO for "
       "details), NCCL version 2.27.3\n"
       "(Runner pid=16018) ncclUnhandledCudaError: Call to CUDA function failed.\n"
       "(Runner pid=16018) Last error:\n"
       "(Runner pid=16018) Cuda failure 217 'peer access is not supported between these two devices'")


def test_a_launchers_lines_reflowed_with_their_prefix_are_joined_at_that_width():
    pasted = mail(RAY)
    assert "(Runner pid=16018) Cuda failure 217 'peer access is not supported\nbetween" in pasted
    paste = Paste(pasted)
    assert any(line.endswith("Cuda failure 217 'peer access is not supported between these two devices'")
               for line in paste.lines)
    assert paste.reflowed  # (explain's note says the paste had been reflowed)
    rx = compile_pattern(r"peer access is not supported between these two devices")
    assert Log(pasted).first_line(rx) is not None
    assert "p2p_unsupported_topology" in top3(pasted)


def test_a_launchers_lines_a_terminal_cut_are_joined_without_a_space():
    # the same lines hard-wrapped at 80 columns (words cut): joined as the terminal cut them, no space inside a word
    lines = []
    for line in RAY.split("\n"):
        while len(line) > 80:
            lines.append(line[:80])
            line = line[80:]
        lines.append(line)
    paste = Paste("\n".join(lines))
    assert "ProcessGroupNCCL.cpp:3699, unhandled cuda error" in paste.text
    assert "Cuda failure 217 'peer access is not supported between these two devices'" in paste.text


TF_HEAD = "Device interconnect StreamExecutor with strength 1 edge matrix:"
TF_ROWS = "     0 1 2 3 \n0:   N Y N N \n1:   Y N N N \n2:   N N N Y \n3:   N N Y N \n"
PAIRS = {"0-1": "OK", "0-2": "NOT_SUPPORTED", "0-3": "NOT_SUPPORTED", "1-2": "NOT_SUPPORTED", "1-3": "NOT_SUPPORTED",
         "2-3": "OK"}


def peer_reads(text: str) -> dict:
    from p2ptop.evidence import read_text

    return {f.subject.split(":", 1)[1]: v for f in read_text(text).findings for k, v in f.facts.items()
            if k == "p2p.read"}


def test_tensorflows_peer_matrix_alone_is_read():
    assert peer_reads(TF_HEAD + "\n" + TF_ROWS) == PAIRS
    assert peer_reads("2019-01-01 10:00:00.000000: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1115] "
                      + TF_HEAD + "\n" + TF_ROWS) == PAIRS


def test_srun_labels_still_come_off():
    text = "0: RuntimeError: CUDA error: invalid device ordinal\n1: RuntimeError: CUDA error: invalid device ordinal\n"
    assert Paste(text).lines[0] == "RuntimeError: CUDA error: invalid device ordinal"


def test_tensorflows_peer_matrix_run_into_one_line_is_read():
    text = ("I have four GTX 1080 cards and see: Adding visible gpu devices: 0, 1, 2, 3 " + TF_HEAD + " "
            + " ".join(TF_ROWS.split("\n")) + " and then it hangs when I train on all four cards with MirroredStrategy")
    assert "\n" not in text
    assert peer_reads(text) == PAIRS
    assert Paste(text).lines[-1].startswith("and then it hangs")


def test_an_interactive_pythons_prompts_start_lines_again():
    # (the one-line form of fresh80's floydhub paste: its code fence's marks survive the lost breaks)
    text = ("``` $ sudo docker run -t -i floydhub/pytorch:latest-gpu-py3 ipython Python 3.5.3 (default, Feb 13 2017, 20:35:17) "
            "Type \"copyright\", \"credits\" or \"license\" for more information. IPython 5.3.0 -- An enhanced "
            "Interactive Python. In [1]: import torch In [2]: torch.cuda.is_available() Out[2]: False ``` Any idea what "
            "went wrong here?")
    lines = Paste(text).lines
    assert "In [2]: torch.cuda.is_available()" in lines and any(line.startswith("Out[2]: False") for line in lines)
    from .kbtools import flat_facts

    assert flat_facts(text).get("symptom.no_cuda_device") is True
