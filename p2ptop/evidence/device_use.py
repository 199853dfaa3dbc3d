"""The GPUs a pasted program selects, and an illegal address where it uses more than one.

A process reaches another GPU's memory only through a peer mapping: CUDA's programming guide ("Peer-to-Peer Memory
Access") requires ``cudaDeviceEnablePeerAccess`` before a kernel on one device dereferences a pointer to another's
memory; without it the access faults, and the runtime reports ``cudaErrorIllegalAddress`` (700, "an illegal memory
access was encountered"; CUDA.jl's ``ERROR_ILLEGAL_ADDRESS``). Memory from a stream-ordered pool needs
``cuMemPoolSetAccess`` for the other device likewise (CUDA driver API, "Stream Ordered Memory Allocator"). So a
program that selects two GPUs and then fails with an illegal address is the documented symptom of a peer pointer used
without peer access: ``symptom.illegal_address_across_devices``. One GPU selected, or none named, says nothing.

The selections are read as each framework's API writes them, with a literal device number: PyTorch
(``torch.cuda.set_device(1)``, ``.cuda(1)``, ``.to("cuda:1")``, ``torch.device("cuda:1")``, ``device="cuda:1"``),
the CUDA runtime (``cudaSetDevice(1)``), CuPy (``cupy.cuda.Device(1)``), CUDA.jl (``CUDA.device!(1)``), Numba
(``cuda.select_device(1)``) and TensorFlow (``tf.device("/gpu:1")``). Messages that name devices (a framework's
"cuda:0 and cuda:1") are not selections and are not read.

Caffe2 prints the operator that failed (core/operator.h: "Error from operator: " and the op's definition): its inputs
are blobs named under their device's scope (data_parallel_model's ``NameScope("gpu_N")``) and the GPU it ran on is its
``device_option { device_type: 1 cuda_gpu_id: N }`` (caffe2.proto: device type 1 is CUDA). An operator on one GPU with
an input of another reads that GPU's memory directly (``code.cross_device_read``). Caffe2 enables peer access at start-up
between every pair CUDA offers it for (core/context_gpu.cu, Caffe2InitializeCuda: cudaDeviceCanAccessPeer, then
cudaDeviceEnablePeerAccess), so there a kernel fault on such a read means the pair has no peer access at all
(``code.peer_access_enabled_where_supported``). A kernel fault is CUDA's illegal address (700; CUDA 9's number 77) or its
launch failure (719; CUDA 9's 4), which CUDA's error table describes as an exception in a kernel, "dereferencing an
invalid device pointer" among its causes.
"""

from __future__ import annotations

import re

from .paste import Collector

#: a selection of one GPU by number, in each framework's API (the number in one of the groups)
_SELECT = re.compile(
    r"\bset_device\(\s*(\d{1,2})\s*\)|"
    r"\bcudaSetDevice\(\s*(\d{1,2})\s*\)|"
    r"\bdevice!\(\s*(\d{1,2})\s*\)|"
    r"\bcuda\.Device\(\s*(\d{1,2})\s*\)|"
    r"\bselect_device\(\s*(\d{1,2})\s*\)|"
    r"\.cuda\(\s*(\d{1,2})\s*\)|"
    r"\b(?:to|device)\(\s*['\"]cuda:(\d{1,2})['\"]\s*\)|"
    r"\bdevice\s*=\s*['\"]cuda:(\d{1,2})['\"]|"
    r"\bdevice\(\s*['\"]/(?:device:)?gpu:(\d{1,2})['\"]\s*\)", re.I)
#: literals one of which a selection's line holds (lower case): only those lines are searched
_SELECT_WORDS = ("set_device", "setdevice", "device!", "cuda.device", "select_device", ".cuda(", "cuda:", "gpu:")


#: a Caffe2 operator's definition as its error prints it: the inputs (blob names under "gpu_N/") and, after them, the device
_C2_OP = re.compile(r"((?:\binput: \"[^\"]*\"\s*)+)(?:[^{}]{0,400}?)device_option \{\s*device_type: 1\s+cuda_gpu_id: (\d{1,2})")
_C2_SCOPE = re.compile(r"\binput: \"gpu_(\d{1,2})/")
#: the kernel faults a read of unmapped peer memory gives (CUDA's table: 700 illegal address, 719 launch failure)
_KERNEL_FAULTS = ("cudaErrorIllegalAddress", "cudaErrorLaunchFailure")


def _caffe2_cross_device(c: Collector, seen: dict[int, int]) -> bool:
    """Caffe2's failed operator reading a blob of another GPU: the GPUs it names join ``seen``."""
    text = c.paste.text
    if "device_option" not in text or "cuda_gpu_id" not in text:
        return False
    found = False
    for m in _C2_OP.finditer(text):
        own = int(m.group(2))
        others = {int(k) for k in _C2_SCOPE.findall(m.group(1))} - {own}
        if others:
            line = c.paste.line_of(m.start())
            for d in (own, *sorted(others)):
                seen.setdefault(d, line)
            if not found:
                c.add("host", "code.cross_device_read", True, line, severity="info",
                      summary=f"a Caffe2 operator on GPU {own} reads blobs of GPU {', '.join(map(str, sorted(others)))} directly")
                c.add("host", "code.peer_access_enabled_where_supported", "Caffe2", line, severity="info",
                      summary="Caffe2 enables peer access at start-up between every pair of GPUs that CUDA offers it for")
            found = True
    return found


def parse(c: Collector) -> bool:
    view = c.paste.select(_SELECT_WORDS, context=0)
    seen: dict[int, int] = {}  # device number -> the line that first selects it
    for m in _SELECT.finditer(view.text):
        seen.setdefault(int(next(g for g in m.groups() if g is not None)), view.line_of(m.start()))
    cross = _caffe2_cross_device(c, seen)
    if len(seen) < 2:
        return False
    line = sorted(seen.values())[1]  # where the second GPU is selected
    c.add("host", "code.devices_selected", len(seen), line, severity="info",
          summary=f"the program selects {len(seen)} GPUs ({', '.join(map(str, sorted(seen)))})")
    if c.get("host", "error.cuda") == "cudaErrorIllegalAddress" or (cross and c.get("host", "error.cuda") in _KERNEL_FAULTS):
        c.add("host", "symptom.illegal_address_across_devices", True, line,
              summary="an illegal memory access in a program that uses more than one GPU: a kernel may be reading "
                      "another GPU's memory without peer access")
    return True
