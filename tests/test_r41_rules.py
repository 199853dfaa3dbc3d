"""Rules of the seventeenth session, each from what the program or the hardware does, not from one paste. The NCCL
error-string rule came after opening fresh40 (labelled so): a fact misread there, not a case fitted."""

import pytest

from p2ptop.evidence import read_text


def _env(text):
    return {k: v for f in read_text(text).findings for k, v in f.facts.items() if k.startswith("env.")}


@pytest.mark.parametrize("text", [
    # NCCL's own error strings (src/init.cc ncclGetErrorString), as PyTorch, vLLM's pynccl and CuPy print them
    "RuntimeError: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)",
    "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, "
    "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3",
    "cupy_backends.cuda.libs.nccl.NcclError: NCCL_ERROR_SYSTEM_ERROR: unhandled system error (run with NCCL_DEBUG=INFO for details)",
    "ncclInvalidArgument: invalid argument (run with NCCL_DEBUG=WARN for details)",
])
def test_nccl_error_string_advice_is_no_setting(text):
    """After opening fresh40: "(run with NCCL_DEBUG=WARN for details)" is the end of NCCL's error string, advice that
    names a variable nobody set; it was read as env.NCCL_DEBUG = WARN, a setting of the failing run."""
    assert "env.NCCL_DEBUG" not in _env(text)


@pytest.mark.parametrize("text,value", [
    ("NCCL_DEBUG=INFO torchrun --nproc_per_node 2 train.py", "INFO"),
    ("$ NCCL_DEBUG=WARN python run.py\nRuntimeError: NCCL error: invalid usage (run with NCCL_DEBUG=WARN for details)", "WARN"),
])
def test_a_variable_set_on_a_command_line_is_still_read(text, value):
    assert _env(text).get("env.NCCL_DEBUG") == value
