"""Rules of 2026-11-28 (seventh session), each general, none for one paste.

Before the fresh22 part was judged:
1. Characters a web page or chat hides inside words (soft hyphen, zero-width space and joiners, word joiner, BOM) are
   dropped before reading: "pe\u200ber access is not supported" is CUDA's 217 message.
2. (tests/test_one_gpu_answers.py) an absence read from the host ("no NVSwitch on this host") makes no lead on its own.
After opening fresh22 (labelled so):
3. The CUDA call that returned an error is read where the paste names it (error.cuda_call): a check macro's statement on
   the error's line ("CUDA error: cudaMemcpyAsync(...): invalid argument", which is also CUDA's message now), or the
   first CUDA API frame of the stack trace after it (CUDA.jl: "[3] cuMemcpyDtoDAsync_v2(dst::CuPtr{Float32}, ...").
4. Memory of another GPU used from a context that cannot access it (kb cuda/peer-memory-not-accessible-from-current-
   context): Triton's launcher message (cuPointerGetAttribute(CU_POINTER_ATTRIBUTE_DEVICE_POINTER) refused) for tensors
   on cuda:N, and a device-to-device or peer copy refused as an invalid argument (pool / VMM memory follows
   cudaMemPoolSetAccess / cuMemSetAccess, not peer access); a text showing CPU tensors leaves Triton's message in doubt.
5. CPython's faulthandler line for SIGBUS ("Fatal Python error: Bus error", Modules/faulthandler.c) is the SIGBUS entry's
   symptom, and JAX's multi-device execution (pmap, pxla) a multi-device GPU job of its require.
After opening fresh23 (labelled so):
6. A bug said to be in a part of an NCCL release named before its version ("a bug in NCCL RAS v2.27.3", "a bug in the
   NCCL NVLS code of 2.19.3") ties the trouble to that release (text.broken_by nccl), as "a bug in NCCL 2.27.3" did.
After opening fresh24 (labelled so):
7. Too little shared memory said in words ("insufficient shared memory (shm)", PyTorch DataLoader's message on a worker's
   SIGBUS, torch/utils/data/_utils/signal_handling.py) is shared memory running out.
8. cudaErrorDevicesUnavailable (46) is CUDA's answer for a GPU in Exclusive_Process/Prohibited compute mode that another
   context holds (CUDA runtime API's description): kb cuda/devices-busy-exclusive-compute-mode lists it beside the
   reset-required entry, so the code alone offers neither; the compute mode in the paste ("E. Process") offers it.
"""

from __future__ import annotations

import pytest

from p2ptop.evidence import read_text
from p2ptop.evidence.paste import tidy

from .kbtools import classes, explained

ERR = "RuntimeError: CUDA error: peer access is not supported between these two devices"


@pytest.mark.parametrize("ch", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"])
def test_invisible_characters_inside_words_are_dropped(ch):
    text = ERR.replace("peer", "pe" + ch + "er").replace("devices", "dev" + ch + "ices")
    assert tidy(text) == ERR
    facts = read_text(text).facts_by_subject()["host"]
    assert facts.get("error.cuda") == "cudaErrorPeerAccessUnsupported"
    assert "error" in read_text(text).kinds


def test_invisible_characters_reach_the_matcher_too():
    text = ERR.replace("supported", "sup\u200bported")
    assert set(classes(text)[:3]) & {"p2p_unsupported_topology", "p2p_unsupported_consumer_gpu", "vm_p2p_unavailable"}


def test_a_bom_at_the_start_of_a_paste_does_not_hide_its_first_line():
    topo = "\ufeff\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tSYS\t0-15\t0\nGPU1\tSYS\t X \t16-31\t1\n"
    ev = read_text(topo)
    assert "nvidia-smi-topo" in ev.kinds
    assert ev.facts_by_subject()["pair:0-1"]["pair.path"] == "SYS"


# ---- 3. the failing CUDA call ---------------------------------------------------------------------------------------

def _host(text):
    return read_text(text).facts_by_subject().get("host", {})


def test_a_check_macros_statement_gives_the_call_and_the_message():
    t = ("CUDA error: cudaMemcpyPeerAsync(dst, 1, src, 0, nbytes, stream): invalid argument\n"
         "  in function copy_between at kernels.cu:120")
    h = _host(t)
    assert h["error.cuda"] == "cudaErrorInvalidValue"
    assert h["error.cuda_call"] == "cudaMemcpyPeerAsync"


def test_a_bindings_stack_frame_gives_the_call():
    t = ("ERROR: CUDA error: invalid argument (code 1, ERROR_INVALID_VALUE)\n"
         "Stacktrace:\n"
         " [1] throw_api_error(res::CUDA.cudaError_enum)\n"
         "   @ CUDA ~/.julia/packages/CUDA/abcde/lib/cudadrv/libcuda.jl:27\n"
         " [2] cuMemcpyPeerAsync(dstDevice::CuPtr{Float32}, dstContext::CuContext, srcDevice::CuPtr{Float32})\n")
    assert _host(t)["error.cuda_call"] == "cuMemcpyPeerAsync"


def test_a_library_name_is_no_call():
    t = "CUDA error: an illegal memory access was encountered\n  cuBLAS (handle) failed in cublasGemmEx\n  cuDNN(version 8) ok\n"
    assert "error.cuda_call" not in _host(t)


def test_error_helpers_are_no_call_and_an_unrelated_later_line_is_not_read():
    t = ("CUDA error: cudaGetLastError(): an illegal memory access was encountered\n\n"
         "later: cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost) is called in the loader\n")
    h = _host(t)
    assert h["error.cuda"] == "cudaErrorIllegalAddress"
    assert "error.cuda_call" not in h  # the helper is not the call; the blank line ends the trace


# ---- 4. another GPU's memory from the wrong context -----------------------------------------------------------------

def test_triton_pointer_message_for_a_tensor_on_another_gpu():
    t = ("x = torch.randn(1024, device='cuda:1')\n"
         "ValueError: Pointer argument (at 0) cannot be accessed from Triton (cpu tensor?)")
    answer = explained(t)
    assert answer[0][0] == "peer_access_not_enabled" and answer[0][1] in ("likely", "possible"), answer


def test_triton_pointer_message_for_cpu_tensors_stays_in_doubt():
    t = ("x = torch.randn(1024, device='cpu')\n"
         "ValueError: Pointer argument (at 0) cannot be accessed from Triton (cpu tensor?)")
    assert not [a for a in explained(t) if a[1] in ("likely", "possible")]


@pytest.mark.parametrize("line", [
    "CUDA error: cudaMemcpyPeerAsync(dst, 1, src, 0, nbytes, stream): invalid argument",
    "CUDA error: cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyDeviceToDevice, stream): invalid argument",
    "cuMemcpyDtoDAsync_v2 failed: CUDA_ERROR_INVALID_VALUE",
])
def test_a_copy_between_devices_refused_as_invalid(line):
    answer = explained("2 GPUs, memory from cudaMallocAsync on each\n" + line)
    assert answer[0][0] == "peer_access_not_enabled", answer


def test_a_host_to_device_copy_refused_is_not_peer_memory():
    t = "CUDA error: cudaMemcpyAsync(dst, src, nbytes, cudaMemcpyHostToDevice, stream): invalid argument"
    assert "peer_access_not_enabled" not in [a[0] for a in explained(t) if a[1] in ("likely", "possible")]


# ---- 5. SIGBUS as CPython's faulthandler prints it, in a multi-device JAX job -----------------------------------------

def test_faulthandler_bus_error_in_a_multi_device_jax_job_is_shm():
    t = ("Fatal Python error: Bus error\n\n"
         "Thread 0x00007f0000000000 (most recent call first):\n"
         '  File "/usr/lib/python3/site-packages/jax/_src/interpreters/pxla.py", line 1100 in __call__\n')
    answer = explained(t)
    assert answer[0][0] == "shm_exhausted", answer


def test_faulthandler_bus_error_of_a_single_process_without_gpus_words_is_not_shm_offered():
    t = "Fatal Python error: Bus error\n\nCurrent thread 0x00007f00 (most recent call first):\n  File \"load.py\", line 3\n"
    assert "shm_exhausted" not in [a[0] for a in explained(t) if a[1] in ("likely", "possible")]


# ---- 6. a bug in a part of an NCCL release --------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "Possible bug in NCCL RAS v2.27.3: polling RAS crashes the job",
    "I think there is a bug in the NCCL NVLS code of 2.19.3, all_reduce hangs on H100",
])
def test_a_bug_in_a_part_of_an_nccl_release(text):
    assert _host(text).get("text.broken_by") == "nccl"
    assert "nccl_version_bug" in classes(text)


def test_a_bug_in_nccl_tests_names_no_release():
    assert "text.broken_by" not in _host("There is a bug in NCCL tests with 2 GPUs, it hangs")
    # nccl-tests has 2.x versions of its own: a bug in them is no NCCL release's
    assert "text.broken_by" not in _host("I think there is a bug in NCCL tests 2.13.8, all_reduce_perf hangs")


# ---- 7. too little shared memory, in words --------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
    "训练时提示 bus error，insufficient shared memery (shm)",
    "The container has not enough shared memory for the workers",
])
def test_too_little_shared_memory_said(text):
    assert _host(text).get("symptom.shm_exhausted") is True


def test_shared_memory_said_sufficient_is_not_read():
    assert "symptom.shm_exhausted" not in _host("We gave the container 16 GB of shared memory, which is plenty")


# ---- 8. devices busy or unavailable: the compute mode -----------------------------------------------------------------

BUSY = "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable"


def test_devices_unavailable_alone_offers_no_entry():
    assert not [a for a in explained(BUSY) if a[1] in ("likely", "possible")]
    assert "device_not_visible" in classes(BUSY)  # still a candidate, unsure


def test_devices_unavailable_with_exclusive_process_mode():
    t = BUSY + "\n| N/A   30C    P0    60W / 400W |      4MiB / 40960MiB |      0%   E. Process |\n"
    answer = explained(t)
    assert answer[0] == ("device_not_visible", "likely") or answer[0] == ("device_not_visible", "possible"), answer
    t = BUSY + "\n    Compute Mode                          : Exclusive_Process\n"
    assert explained(t)[0][0] == "device_not_visible"
