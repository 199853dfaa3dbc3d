"""Rules of 2026-11-29 (ninth session), each general, none for one paste. The texts here are written from the
programs' format strings, not taken from the evaluation corpus.

Before fresh27 was judged:
1. NCCL >= 2.28.9's "Check P2P Type isAllDirectP2p %d directMode %d isAllCudaP2p %d" (src/transport.cc,
   ncclTransportCheckP2pType): isAllCudaP2p 0 says NVML's P2P read or write status is not OK for some pair of the node's
   GPUs (graph/paths.cc ncclTopoCheckP2p), or the ranks see different /dev/shm. It is a decision of the one NCCL reader
   (and of the reference reader) and gives the host p2p.read NOT_SUPPORTED; isAllDirectP2p 0 alone follows
   NCCL_P2P_LEVEL too and gives nothing, nor does 2.26's intraNodeP2pSupport 0 (also 0 with one local rank).
"""

from __future__ import annotations

from p2ptop.evidence import read_text

from .kbtools import explained


def _facts(text):
    return read_text(text).facts_by_subject()


# ---- 1. NCCL's own summary of the node's CUDA P2P ----------------------------------------------------------------------

CHECK_NO = "gpu-a:7781:7802 [0] NCCL INFO Check P2P Type isAllDirectP2p 0 directMode 0 isAllCudaP2p 0\n"
CHECK_YES = "gpu-a:7781:7802 [0] NCCL INFO Check P2P Type isAllDirectP2p 0 directMode 0 isAllCudaP2p 1\n"
OLD = "gpu-a:7781:7802 [0] NCCL INFO Check P2P Type intraNodeP2pSupport 0 directMode 0\n"
SHM = "gpu-a:7781:7802 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct\n"


def test_all_cuda_p2p_0_is_the_hosts_p2p_status_not_ok():
    f = _facts(CHECK_NO + SHM)
    assert f["host"]["p2p.read"] == "NOT_SUPPORTED"


def test_all_cuda_p2p_1_and_the_older_line_say_nothing_of_the_status():
    for t in (CHECK_YES + SHM, OLD + SHM):
        assert "p2p.read" not in _facts(t).get("host", {})


def test_both_nccl_readers_read_the_decision():
    from p2ptop.nccl.log import read_nccl_log

    from .nccl_log_reference import read_nccl_log as reference_read

    for t, want in ((CHECK_NO, [("cuda_p2p_not_all", None)]), (CHECK_YES, []), (OLD, [])):
        ours = [(d.kind, d.devs) for d in read_nccl_log(t).decisions]
        ref = [(d.kind, d.devs) for d in reference_read(t).decisions]
        assert ours == ref == want


def test_the_status_leads_to_a_pair_cause_not_only_the_p2p_level():
    # with SHM alone the P2P level is the first guess; NVML saying no puts a cause of unsupported P2P among the three
    top = {c for c, _ in explained(CHECK_NO + SHM)[:3]}
    assert top & {"p2p_unsupported_topology", "p2p_unsupported_consumer_gpu", "vm_p2p_unavailable",
                  "mig_p2p_unsupported"}
