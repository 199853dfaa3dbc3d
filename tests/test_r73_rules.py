"""Rules of the thirty-fourth session, each written from the printing program's source and checked with near misses:

- NCCL's failed driver call with CUDA_ERROR_ILLEGAL_STATE: CUCHECK (src/include/cudawrap.h) prints
  "Cuda failure %d '%s'" for a CUDA *driver* call, and NCCL's driver calls are the multicast ones of NVLS
  (cuMulticastCreate/AddDevice/BindMem, transport/nvls.cc) and the cuMem* ones; 401 ("the operation cannot be performed
  in the present state") is what the multicast team's setup returns where the fabric cannot take it (NVIDIA/nccl#1788,
  nvls.cc:254 cuMulticastAddDevice). The NVLS entry reads that NCCL line as one of its further regexes: offered as
  possible, not likely, on the line alone; NCCL_NVLS_ENABLE=0 in the environment rules it out as before. The runtime
  calls' format (CUDACHECK: "Cuda failure 'the operation ...'", no number) and a framework's own 401 are not read."""

import pytest

from .kbtools import alarms, explained


NVLS = "nvls_multicast_failure"


@pytest.mark.parametrize("text", [
    # PyTorch's wrapper of NCCL's last error (ProcessGroupNCCL), as a 3+ GPU job prints it
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
    "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
    "ncclUnhandledCudaError: Call to CUDA function failed.\n"
    "Last error:\nCuda failure 401 'the operation cannot be performed in the present state'",
    # NCCL's WARN line itself, with a host:pid:tid prefix and the location NCCL 2.30 prints
    "node7:1234:1290 [3] transport/alloc.cc:88 NCCL WARN Cuda failure 401 'the operation cannot be performed in the "
    "present state'\nnode7:1234:1290 [3] NCCL INFO init.cc:1200 -> 1",
])
def test_nccl_driver_call_illegal_state_offers_nvls(text):
    got = explained(text)
    assert got and got[0] == (NVLS, "possible")


@pytest.mark.parametrize("text", [
    # a runtime call (CUDACHECK prints no number): any cudaErrorIllegalState, e.g. a stream capture
    "NCCL WARN Cuda failure 'the operation cannot be performed in the present state'",
    # the framework's own CUDA error, not NCCL's driver call
    "RuntimeError: CUDA error: the operation cannot be performed in the present state\n"
    "CUDA kernel errors might be asynchronously reported at some other API call",
    # another code in the same format
    "NCCL WARN Cuda failure 4010 'unknown error'",
    "NCCL WARN Cuda failure 2 'out of memory'",
])
def test_near_misses_do_not_offer_nvls(text):
    assert all(c != NVLS for c, _conf, _b, _id in alarms(text))


def test_nvls_disabled_rules_it_out():
    text = ("NCCL INFO NCCL_NVLS_ENABLE set by environment to 0.\n"
            "NCCL WARN Cuda failure 401 'the operation cannot be performed in the present state'")
    assert all(c != NVLS for c, _conf, _b, _id in alarms(text))
