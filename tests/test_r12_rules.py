"""Rules written in the source audit of 2026-11-29 (tests/data/source_probes.json, families vllm, sglang,
tensorrt-llm, nvshmem, deepep, transformer-engine, ucx, openmpi, mscclpp, horovod, paddle), each from the message's
own source; no rule was written for a corpus case.

1. CUDA's error number where Open MPI prints it: its help texts give a driver call's "return value:"
   ("cuIpcOpenMemHandle return value:  217", opal/mca/common/cuda/help-mpi-common-cuda.txt) and common_cuda.c logs
   "CUDA: cuDeviceCanAccessPeer failed: res=101"; vLLM's and SGLang's ctypes wrapper raises "CUDART error: <CUDA's
   message>" (cuda_wrapper.py CUDART_CHECK). All are error.cuda now.
2. Lines of the GPU communication libraries that name no GPU word (NVSHMEM's "team_internal.cpp:782: non-zero
   status: 7 Create multicast groups for UC heap failed ...") count as GPU text (evidence.read._GPU_WORDS).
3. Transformer Engine's "does not support comm+GEMM overlap with CUDA Multicast" (entry
   transformer-engine/ub-no-cuda-multicast, class nvls_multicast_failure) is printed because the GPU has no
   multicast: fact_roles.ruled_out does not apply the class's pre-Hopper and no-NVSwitch rules to it
   (the entry's "multicast_absent": true), and still applies them to NCCL's NVLS entries.
4. Narrower regexes: a Python or C call "cudaIpcOpenMemHandle(" in a traceback is no IPC failure by itself
   (nccl/ipc-peer-gpu-not-visible), and Open MPI's "This is an unrecoverable error" is not CUDA's error
   (cuda-ipc/open-handle-across-containers)."""

from __future__ import annotations

import re

import pytest

from p2ptop.commands.explain import explain
from p2ptop.evidence.read import gpu_trace
from p2ptop.knowledge.fact_roles import ruled_out

from .kbtools import bundled_kb, host_facts

KB = bundled_kb()
TE = "transformer-engine/ub-no-cuda-multicast"
TE_MESSAGE = ("RuntimeError: CUDA device, driver and/or toolkit version does not support comm+GEMM overlap with CUDA "
              "Multicast. Launch app with UB_SKIPMC=1 to try CUDA IPC instead.")


def answer(text: str, n: int = 3):
    return [(m.entry.id, m.entry.failure_class, m.confidence) for m, _ in explain(KB, text, [], n)]


def _patterns(entry_file):
    import json
    import os
    path = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "kb", entry_file)
    with open(path, encoding="utf-8") as f:
        e = json.load(f)
    return [re.compile(p, re.I) for p in [e["regex"], *e.get("regexes", [])]]


@pytest.mark.parametrize("text, name", [
    ("  cuIpcOpenMemHandle return value:  217", "cudaErrorPeerAccessUnsupported"),
    ("  cuIpcOpenMemHandle return value:  201", "cudaErrorDeviceUninitialized"),
    ("[node3:04412] CUDA: cuDeviceCanAccessPeer failed: res=101", "cudaErrorInvalidDevice"),
    ("RuntimeError: CUDART error: operation not supported", "cudaErrorNotSupported"),
])
def test_cuda_numbers_and_messages_as_open_mpi_and_vllm_print_them(text, name):
    assert host_facts(text).get("error.cuda") == name


@pytest.mark.parametrize("text", [
    "main() return value: 217 after 3 retries",           # not a CUDA driver call
    "curl return value: 7",                                # a cu... word that is no CUDA call and no CUDA number
    "worker res=101 requests served",                      # res= on a line that says nothing of CUDA
    "the test returned 217 rows",
])
def test_other_numbers_are_not_cuda_errors(text):
    assert "error.cuda" not in host_facts(text)


@pytest.mark.parametrize("text", [
    "/workspace/nvshmem/src/host/team/team_internal.cpp:782: non-zero status: 7 Create multicast groups for UC heap failed",
    "RuntimeError: CUDA runtime exception (/DeepEP/csrc/utils/shared_memory.hpp:111): 201",
    "[TensorRT-LLM][WARNING] Since Peer to Peer not supported, fallback to AllReduceStrategy: NCCL",
    "mscclpp._mscclpp.Error: connection closed by remote peer",
    "userbuffers-host.cpp:664 in function register_user_buffer_collective: Assertion failed",
])
def test_communication_library_lines_are_gpu_text(text):
    assert gpu_trace(text)


@pytest.mark.parametrize("text", ["the build is stuck at 80 %", "deep epochs take long", "the trt file is missing"])
def test_plain_sentences_are_still_not_gpu_text(text):
    assert not gpu_trace(text)


def test_multicast_absent_entry_is_kept_on_ampere_and_nccl_nvls_is_not():
    ampere = {"gpu.architecture": ["Ampere"]}.get
    known = lambda k: ampere(k) or []  # noqa: E731
    assert ruled_out("nvls_multicast_failure", known, KB.get(TE).multicast_absent) is None
    assert ruled_out("nvls_multicast_failure", known, KB.get("nccl/nvls-multicast-setup-failed").multicast_absent)
    no_switch = {"host.nvswitch_present": [False], "pair.nvlink_count": [0]}
    known2 = lambda k: no_switch.get(k, [])  # noqa: E731
    assert ruled_out("nvls_multicast_failure", known2, KB.get(TE).multicast_absent) is None
    assert ruled_out("nvls_multicast_failure", known2, KB.get("nccl/nvls-multicast-setup-failed").multicast_absent)
    one_gpu = {"host.gpu_count": [1]}
    known3 = lambda k: one_gpu.get(k, [])  # noqa: E731
    assert ruled_out("nvls_multicast_failure", known3, KB.get(TE).multicast_absent) == ruled_out("nvls_multicast_failure", known3)


@pytest.mark.parametrize("context", [
    "GPU 0: NVIDIA A100-SXM4-80GB\n",
    "GPU 0: NVIDIA GeForce RTX 4090\nGPU 1: NVIDIA GeForce RTX 4090\n",
    "GPU 3: NVIDIA H100 80GB HBM3\n",
    "",
])
def test_transformer_engine_multicast_message_is_answered_on_any_gpu(context):
    got = answer(context + TE_MESSAGE)
    assert got and got[0][0] == TE and got[0][2] in ("likely", "possible"), got


def test_transformer_engine_multicast_entry_is_not_a_lead_on_other_multicast_text():
    got = answer("transport/nvls.cc:251 NCCL WARN Cuda failure 1 'invalid argument'")
    assert TE not in [g[0] for g in got[:1]]
    assert TE not in [g[0] for g in answer("NCCL INFO NVLS multicast support is available on dev 0")]


def test_traceback_call_is_not_an_ipc_failure():
    # the call's bare name is the CUDA IPC entry's since the twenty-ninth session (the hidden-peer entry keeps NCCL's own line)
    pats = _patterns("cuda-ipc__open-handle-across-containers.json")
    line = "    pointers.append(lib.cudaIpcOpenMemHandle(h).value)"
    assert not any(p.search(line) for p in pats)
    assert any(p.search("Program hit cudaErrorPeerAccessUnsupported on CUDA API call to cudaIpcOpenMemHandle.")
               for p in pats)


def test_open_mpi_help_text_words_are_not_cuda_error():
    pats = _patterns("cuda-ipc__open-handle-across-containers.json")
    assert not any(p.search("The call to cuIpcOpenMemHandle failed. This is an unrecoverable error") for p in pats)
    assert any(p.search("cuda_ipc_cache.c:288  UCX  ERROR cuIpcOpenMemHandle() failed: invalid argument") for p in pats)
    assert any(p.search("  cuIpcOpenMemHandle return value:  201") for p in pats)


@pytest.mark.parametrize("text", [
    "GPU 0: NVIDIA A100-SXM4-80GB\nGPU 1: NVIDIA A100-SXM4-80GB\nthe all_reduce hangs forever after the first step",
    "8x H100 with NVSwitch, NCCL all_reduce is slow and sometimes hangs",
])
def test_transformer_engine_multicast_entry_is_no_lead_on_gpu_context_alone(text):
    assert TE not in [g[0] for g in answer(text, 10)]


def test_transformer_engine_multicast_entry_stays_ruled_out_on_words_alone():
    from p2ptop.findings import Finding
    from p2ptop.knowledge import match
    host = [Finding("host.facts", "host", "ok", "host", [], {"host.nvswitch_present": False, "host.gpu_count": 2}),
            Finding("pair.facts", "pair:0-1", "ok", "pair", [], {"pair.nvlink_count": 0, "pair.path": "PHB"})]
    words = "cudaGetDeviceCount returned error 802: system not yet initialized\n"
    assert TE not in [m.entry.id for m in match(KB, words, host)]
    assert TE in [m.entry.id for m in match(KB, TE_MESSAGE, host)][:1]
