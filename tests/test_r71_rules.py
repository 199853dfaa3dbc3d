"""Rules of the thirty-second session, each written from the tool's or language's own definition and checked with
near misses:

- Python prints "Traceback (most recent call last):" only for a raised exception (CPython's traceback module): a paste
  that stops at the stack's frames, its exception line cut off, still says the program failed (symptom.fails).
- p2pBandwidthLatencyTest's P2P=Disabled figures are copies the driver stages through host memory (cudaMemcpyPeer
  without peer access): a GPU whose best staged pair is far under what its PCIe link gives has a slow host link, or all
  its peers do (tool.host_copy_slow, as bandwidthTest's and nvbandwidth's host copies).
- NCCL 2.31's active diagnostics (NCCL_RUN_DIAGNOSTICS=1) print "NCCL DIAG [OK]   p2p: verified P2P access in both
  directions between every GPU pair" or "NCCL DIAG [INFO] p2p: only 52/56 GPU-to-GPU peer accesses passed verification"
  (NCCL user guide, Troubleshooting > Diagnostics): P2P reads and writes working, or failing verification."""

import json
import os

from p2ptop.nccl.log import read_nccl_log

from .kbtools import alarms, classes, explained, flat_facts
from .nccl_log_reference import read_nccl_log as reference_read

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "..", "benchmarks", "corpus")
FIXTURES = os.path.join(HERE, "fixtures")


def corpus_text(part, case_id):
    with open(os.path.join(CORPUS, part, case_id + ".json"), encoding="utf-8") as f:
        return json.load(f)["text"]


def fixture(*path):
    with open(os.path.join(FIXTURES, *path), encoding="utf-8", errors="replace") as f:
        return f.read()


# ---- a traceback cut before its exception line --------------------------------------------------------------------

WINDOWS_LAUNCH = corpus_text("fresh83", "sd-scripts-1627-windows-libuv")  # kohya-ss/sd-scripts#1627, first post


def test_a_traceback_without_its_exception_line_is_a_failure():
    assert flat_facts(WINDOWS_LAUNCH).get("symptom.fails") is True


def test_the_windows_launch_cut_short_gets_the_windows_build_entry_as_a_candidate():
    # Windows said (a drive letter's site-packages, PyTorch's "not supported in Windows or MacOs"), torch.distributed's
    # launcher in the frames: the candidate, unsure (no line of its own says NCCL or libuv is missing)
    got = explained(WINDOWS_LAUNCH)
    assert got and got[0] == ("nccl_unavailable_platform", "unsure")


def test_a_traceback_with_its_exception_line_is_that_error_not_the_header():
    text = ("Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n"
            "    torch.cuda.set_device(1)\nRuntimeError: CUDA error: invalid device ordinal\n")
    facts = flat_facts(text)
    assert facts.get("error.cuda") == "cudaErrorInvalidDevice"
    assert "symptom.fails" not in facts


def test_an_exception_line_without_a_message_completes_the_traceback():
    # torch.distributed.elastic raises RendezvousTimeoutError without a message (dynamic_rendezvous.py): the line is the
    # exception, so the paste is not cut
    text = ("Traceback (most recent call last):\n  File \"/usr/local/bin/torchrun\", line 8, in <module>\n"
            "    sys.exit(main())\ntorch.distributed.elastic.rendezvous.api.RendezvousTimeoutError\n")
    assert "symptom.fails" not in flat_facts(text)


def test_the_word_traceback_in_a_sentence_is_no_failure():
    facts = flat_facts("The traceback module prints 'Traceback (most recent call last):' before the frames, see the docs.\n"
                       "Two RTX 3090 GPUs.")
    assert "symptom.fails" not in facts


# ---- p2pBandwidthLatencyTest: copies staged through the host ----------------------------------------------------

X1_RISERS = corpus_text("fresh83", "rossumai-keras-multi-gpu-7gforce-x1-risers")  # rossumai/keras-multi-gpu notes


def test_staged_copies_far_under_any_link_are_slow_host_links():
    facts = flat_facts(X1_RISERS)
    assert facts.get("tool.host_copy_slow") is True
    assert classes(X1_RISERS)[0] == "pcie_link_degraded"


def test_healthy_staged_copies_are_no_slow_host_link():
    for text in (fixture("device", "h200x2-healthy-outputs", "p2pBandwidthLatencyTest.txt"),
                 fixture("pastes", "p2pBandwidthLatencyTest-nccl-814-p2p-slower.txt")):
        assert "tool.host_copy_slow" not in flat_facts(text)


def test_a_pair_slow_only_with_p2p_on_is_not_the_host_link():
    # NVIDIA/nccl#814: P2P enabled slower than disabled; the staged copies themselves are at the link's speed
    text = fixture("pastes", "p2pBandwidthLatencyTest-nccl-814-p2p-slower.txt")
    facts = flat_facts(text)
    assert facts.get("tool.p2p_slower_than_no_p2p") is True
    assert "pcie_link_degraded" not in classes(text, 1)


# ---- NCCL 2.31's diagnostics --------------------------------------------------------------------------------------

DIAG_OK = corpus_text("fresh83", "nccl-docs-diag-p2p-ok-8ranks")  # NCCL user guide, Diagnostics
DIAG_PARTIAL = ("NCCL DIAG === NCCL Diagnostics ===\n"
                "NCCL DIAG [INFO] p2p: only 52/56 GPU-to-GPU peer accesses passed verification\n"
                "NCCL DIAG NCCL diagnostics completed in 245.3 ms across 8 ranks\n")  # the same page's partial result


def test_the_reader_keeps_the_diagnostic_lines_as_the_reference_reader_does():
    for text in (DIAG_OK, DIAG_PARTIAL):
        log = read_nccl_log(text)
        assert log.is_nccl
        assert log.to_dict() == reference_read(text).to_dict()
    assert [d.kind for d in read_nccl_log(DIAG_OK).decisions] == ["diag_ok"]
    assert [d.kind for d in read_nccl_log(DIAG_PARTIAL).decisions] == ["diag_issue"]


def test_verified_p2p_is_a_healthy_state_and_offers_nothing():
    facts = flat_facts(DIAG_OK)
    assert facts.get("p2p.read") == "OK" and facts.get("p2p.write") == "OK"
    assert explained(DIAG_OK) == []


def test_peer_accesses_failing_verification_are_a_verification_error():
    facts = flat_facts(DIAG_PARTIAL)
    assert facts.get("tool.verification_error") is True
    assert "p2p.read" not in facts
    assert not alarms(DIAG_PARTIAL)  # NCCL says which check, not why: candidates, unsure
    assert explained(DIAG_PARTIAL)


def test_all_accesses_passing_in_a_count_is_no_error():
    text = "NCCL DIAG [INFO] p2p: only 56/56 GPU-to-GPU peer accesses passed verification\n"
    assert "tool.verification_error" not in flat_facts(text)


def test_a_diag_line_of_another_check_gives_no_p2p_fact():
    text = "NCCL DIAG [OK]   ras: every rank reports the same CUDA driver and NCCL version\n"  # a near miss, written here
    facts = flat_facts(text)
    assert "p2p.read" not in facts and "tool.verification_error" not in facts


# ---- NCCL's "P2P is disabled between ... GPUs A and B" names two GPUs ----------------------------------------------

def test_p2p_disabled_between_one_gpu_and_itself_is_no_link_fault():
    # NVIDIA/nccl 04cdb80: with several ranks on one GPU, NCCL compared topology indices and warned for the same
    # physical GPU ("GPUs 0 and 0"); the warning about two NVLink-connected GPUs is then about no link at all
    got = explained("P2P is disabled between NVLINK connected GPUs 0 and 0")
    assert ("nvlink_link_failure", "likely") not in got
    assert all(conf == "unsure" for _cls, conf in got)


def test_p2p_disabled_between_two_nvlink_gpus_stays_the_hardware_entry():
    for a, b in (("1", "0"), ("10", "1"), ("1", "10")):
        text = (f"NCCL WARN P2P is disabled between NVLINK connected GPUs {a} and {b}. This should not be the case given "
                "their connectivity, and is probably due to a hardware issue.")
        assert explained(text)[0] == ("nvlink_link_failure", "likely")


# ---- Paddle's install check: one GPU passes, several fail ----------------------------------------------------------

PADDLE_SEGV = corpus_text("fresh84", "paddle-26898-multicard-check-segv-conda-cuda")  # PaddlePaddle/Paddle#26898
PADDLE_HEALTHY = ("Running Verify Fluid Program ...\nYour Paddle Fluid works well on SINGLE GPU or CPU.\n"
                  "Your Paddle Fluid works well on MUTIPLE GPU or CPU.\n"
                  "Your Paddle Fluid is installed successfully! Let's start deep Learning with Paddle Fluid now\n")  # its docstring


def test_paddle_check_crashing_after_its_single_gpu_line_is_the_multi_gpu_run():
    assert explained(PADDLE_SEGV)[0] == ("nccl_unavailable_platform", "possible")


def test_paddle_check_warning_names_the_multi_gpu_run():
    # python/paddle/utils/install_check.py: the warning, then the "ONLY for single GPU" line
    for text in ("PaddlePaddle meets some problem with 2 GPUs. This may be caused by:",
                 "Your Paddle Fluid has some problem with multiple GPU. This may be caused by:",
                 "PaddlePaddle is installed successfully ONLY for single GPU! Let's start deep learning with PaddlePaddle now."):
        assert explained(text)[0][0] == "nccl_unavailable_platform", text


def test_paddle_check_passing_on_every_gpu_offers_nothing():
    assert explained(PADDLE_HEALTHY) == []
    assert explained("PaddlePaddle works well on 1 GPU.\nPaddlePaddle works well on 8 GPUs.\n"
                     "PaddlePaddle is installed successfully! Let's start deep learning with PaddlePaddle now.") == []


def test_paddle_check_cut_after_its_single_gpu_line_is_only_a_candidate():
    got = explained("Running Verify Fluid Program ...\nYour Paddle Fluid works well on SINGLE GPU or CPU.\n")
    assert got and all(conf == "unsure" for _cls, conf in got)


# ---- a link generation said to drop while the GPU is not in use -----------------------------------------------------

def test_nvidia_smis_own_words_on_an_idle_link_are_the_idle_downclock():
    # nvidia-smi's manual, "GPU Link information - current": "The current link generation and width. These may be reduced
    # when the GPU is not in use."; and a user's words for the same
    for text in ("The current link generation and width. These may be reduced when the GPU is not in use.",
                 "The PCIe generation drops when the card is idle, nvidia-smi shows Gen1 on an RTX A6000."):
        assert flat_facts(text).get("gpu.pcie_idle_downclock") is True, text


def test_a_generation_lower_under_load_is_not_the_idle_downclock():
    for text in ("My Gen4 card only runs at Gen3 under load.", "The link speed drops when the GPU is busy."):
        assert "gpu.pcie_idle_downclock" not in flat_facts(text), text


# ---- "CUDA devices" are the process's view --------------------------------------------------------------------------

def test_cuda_devices_said_to_vanish_are_hidden_from_the_process_not_lost_from_the_bus():
    # ultralytics/yolov5#13681: select_device('cpu') sets CUDA_VISIBLE_DEVICES=-1 for the whole process
    facts = flat_facts("Loading YOLOv5 model to CPU causes CUDA devices to disappear")
    assert facts.get("symptom.no_cuda_device") is True
    assert "gpu.lost" not in facts


def test_gpus_said_to_vanish_are_still_lost_gpus():
    for text in ("After a few hours of training one of the GPUs disappears from nvidia-smi.",
                 "The second card vanished after the Xid error."):
        assert flat_facts(text).get("gpu.lost") is True, text
