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


def parse(c: Collector) -> bool:
    view = c.paste.select(_SELECT_WORDS, context=0)
    seen: dict[int, int] = {}  # device number -> the line that first selects it
    for m in _SELECT.finditer(view.text):
        seen.setdefault(int(next(g for g in m.groups() if g is not None)), view.line_of(m.start()))
    if len(seen) < 2:
        return False
    line = sorted(seen.values())[1]  # where the second GPU is selected
    c.add("host", "code.devices_selected", len(seen), line, severity="info",
          summary=f"the program selects {len(seen)} GPUs ({', '.join(map(str, sorted(seen)))})")
    if c.get("host", "error.cuda") == "cudaErrorIllegalAddress":
        c.add("host", "symptom.illegal_address_across_devices", True, line,
              summary="an illegal memory access in a program that uses more than one GPU: a kernel may be reading "
                      "another GPU's memory without peer access")
    return True
