"""symptom.reported: a text that reports trouble with GPU communication in general words (issue 22
point 4, "never silent where there is evidence"). Real public sentences, outside the evaluation
corpus, each with its URL; negatives included. The fact is weak: it opens leads (unsure), never an
entry marked likely or possible."""

from __future__ import annotations

import glob
import os

import pytest

from p2ptop.commands.explain import answer
from p2ptop.evidence import read_text
from p2ptop.knowledge import load_kb, match
from p2ptop.knowledge.fact_roles import SYMPTOM_KEYS, is_symptom
from p2ptop.knowledge.matcher import WEAK_SYMPTOMS

from .conftest import FIXTURES

KB = load_kb()
SHARED = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "shared", "captures")

REPORTS = [
    # (text as written, source)
    ("Multi GPU training doesn't work. Single GPU training works just fine.\n\nGPUs: 2 * RTX 5090 32GB\n",
     "https://github.com/IAHispano/Applio/issues/1153"),
    ("多GPU训练失败,提示没有安装NVIDIA NCCL,可是windows好像安装不了NCCL", "https://github.com/Akegarasu/lora-scripts/issues/239"),
    ("NCCL error of PyTorch 2.1.0 when using multiple gpus", "https://github.com/pytorch/pytorch/issues/113245"),
    ("It's some problem with multi-gpu training.", "https://github.com/karfly/learnable-triangulation-pytorch/issues/81"),
    ("May be worth trying to build with `GGML_CUDA_NO_PEER_COPY`, in case it is an issue copying data between the GPUs.",
     "https://github.com/ggml-org/llama.cpp/issues/12012"),
    ("RuntimeError on NCCL when Training with Multiple GPUs", "https://github.com/facebookresearch/detectron2/issues/3259"),
]

NOT_REPORTS = [
    # GPU words, no trouble
    ("i tried multi gpu on kaggle 2 weeks ago and everything was fine", "https://github.com/IAHispano/Applio/issues/1153"),
    ("NCCL provides routines such as all-gather, all-reduce, broadcast, reduce, reduce-scatter as well as point-to-point "
     "send and receive that are optimized to achieve high bandwidth and low latency over PCIe and NVLink high-speed "
     "interconnects within a node and over NVIDIA Mellanox Network across nodes.",
     "https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/overview.html"),
    # trouble, no GPU-communication words
    ("I no longer have access to that environment unfortunately. That dataset I was training was large, and it failed.",
     "https://github.com/IAHispano/Applio/issues/1153"),
    # a clean simpleP2P run (tool output, not a sentence)
    ("Checking GPU(s) for support of peer to peer memory access...\n"
     "> Peer access from NVIDIA GeForce RTX 5090 (GPU0) -> NVIDIA GeForce RTX 5090 (GPU1) : Yes\n"
     "Enabling peer access between GPU0 and GPU1...\ncudaMemcpyPeer / cudaMemcpy between GPU0 and GPU1: 26.51GB/s\n"
     "Disabling peer access...\nShutting down...\nTest passed\n",
     "https://github.com/aikitoria/open-gpu-kernel-modules/issues/11"),
]


def reported(text):
    return read_text(text).facts_by_subject().get("host", {}).get("symptom.reported")


@pytest.mark.parametrize("text,source", REPORTS, ids=[s for _, s in REPORTS])
def test_real_reports_are_read_as_reported_trouble(text, source):
    assert reported(text) is True, source


@pytest.mark.parametrize("text,source", NOT_REPORTS, ids=[f"{i}:{s}" for i, (_, s) in enumerate(NOT_REPORTS)])
def test_healthy_or_unrelated_sentences_are_not(text, source):
    assert reported(text) is None, source


def test_the_fact_is_a_documented_weak_symptom():
    from p2ptop.findings import FACT_KEYS

    assert "symptom.reported" in FACT_KEYS and "symptom.reported" in SYMPTOM_KEYS and "symptom.reported" in WEAK_SYMPTOMS
    assert is_symptom("symptom.reported", True)


@pytest.mark.parametrize("text,source", REPORTS, ids=[s for _, s in REPORTS])
def test_a_report_alone_is_never_answered_likely_or_possible_unless_a_named_error_is(text, source):
    ev = read_text(text)
    a = answer(KB, text, [], None, evidence=ev)
    named = any(k.startswith("error.") or k in ("symptom.hang", "symptom.slow", "symptom.wrong_results", "symptom.crash", "symptom.fails")
                for f in ev.findings for k in f.facts)
    if not named:
        assert all(m.confidence == "unsure" for m, _ in a["results"]), (source, [(m.entry.id, m.confidence) for m, _ in a["results"]])
    assert a["kind"] in ("matches", "unsure"), source  # never silent
    assert a["kind"] == "matches" or a["next_command"], source  # an unsure answer names the one next command


def test_a_report_with_context_gets_ranked_leads_and_one_next_command():
    # two sentences of one report: the trouble in general words, the GPUs' model (consumer cards)
    text = ("I face a problem like this, but I actually checked the P2P connection between the two GPUs\n"
            "The GPUs I use are RTX 4090s\n")
    source = "https://github.com/LLMServe/DistServe/issues/39"
    ev = read_text(text)
    assert {k for f in ev.findings for k in f.facts if k.startswith(("symptom.", "error."))} == {"symptom.reported"}
    a = answer(KB, text, [], None, evidence=ev)
    assert a["kind"] == "unsure" and a["results"], source
    classes = [m.entry.failure_class for m, _ in a["results"]]
    assert "p2p_unsupported_consumer_gpu" in classes[:3], classes
    assert all(m.unsure for m, _ in a["results"])
    assert a["next_command"]["command"]


def _healthy_texts():
    out = [os.path.join(FIXTURES, "pastes", "simpleP2P-l4-healthy.txt")]
    out += sorted(glob.glob(os.path.join(SHARED, "h200x2-nvswitch-vm", "*.txt")) + glob.glob(os.path.join(SHARED, "h200x2-nvswitch-vm", "*.log")))
    out += sorted(glob.glob(os.path.join(SHARED, "h100x1-vm", "nvidia-smi-*.txt")))
    return [p for p in out if os.path.exists(p)]


@pytest.mark.parametrize("path", _healthy_texts(), ids=os.path.basename)
def test_healthy_tool_output_and_nccl_logs_via_p2p_are_not_reports(path):
    text = open(path, encoding="utf-8", errors="replace").read()
    assert reported(text) is None
    assert not [m for m in match(KB, text) if m.confidence in ("likely", "possible") and not m.entry.benign]
