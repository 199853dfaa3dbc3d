"""PyTorch's and vLLM's environment report, as issue templates ask for it (``python -m torch.utils.collect_env``,
``vllm collect-env``; torch/utils/collect_env.py and vllm/collect_env.py, the same format strings):

    Is CUDA available: False                      (vLLM: "Is CUDA available            : False")
    CUDA used to build PyTorch: 12.1              ("None" for a CPU-only build of PyTorch)
    GPU models and configuration: GPU 0: ...      (nvidia-smi -L without the UUIDs: the prose reader reads the models)
    Nvidia driver version: 470.82.01              (nvidia-smi's "Driver Version: (.*?) ")

"Is CUDA available" is ``str(torch.cuda.is_available())``. Facts:

* ``symptom.no_cuda_device`` where a CUDA build of PyTorch reports CUDA not available: it finds no usable GPU;
* ``code.torch_cuda_build``: the CUDA version PyTorch was built with ("none" for a CPU-only build, whose "not available"
  is no GPU fault and no symptom);
* ``host.driver_below_cuda_build`` where the driver is older than the minimum driver of that CUDA major version. CUDA's
  compatibility guide (minor version compatibility): an application built with any CUDA 11.x runs on a driver >= 450.80.02,
  12.x on >= 525.60.13, 13.x on >= 580.65.06 (Linux); below that the runtime PyTorch bundles cannot start
  (cudaErrorInsufficientDriver, 35: "CUDA driver version is insufficient for CUDA runtime version"), and
  ``torch.cuda.is_available()`` is False. A measured mismatch, so a symptom (the insufficient-driver entry's trigger); not
  read where the report says CUDA is available (CUDA's forward-compatibility package runs a newer CUDA on an older
  data-centre driver).
"""

from __future__ import annotations

import re
from typing import Optional

from .paste import Collector

#: the report's lines (lower-cased text; "key: value" in PyTorch's report, "key <spaces>: value" in vLLM's)
_AVAILABLE = re.compile(r"^is cuda available\s*:\s*(true|false)\s*$", re.M)
_BUILD = re.compile(r"^cuda used to build pytorch\s*:\s*(none|n/a|\d+\.\d+)\b", re.M)
_DRIVER = re.compile(r"^nvidia driver version\s*:\s*(\d{3})\.(\d{1,3})(?:\.(\d{1,3}))?\b", re.M)
#: CUDA major version -> the oldest Linux driver that runs any of its minor versions (CUDA compatibility guide, minor
#: version compatibility), as (major, minor, patch)
MIN_DRIVER: dict[int, tuple[int, int, int]] = {11: (450, 80, 2), 12: (525, 60, 13), 13: (580, 65, 6)}


def driver_below_cuda(driver: tuple[int, int, int], cuda_major: int) -> Optional[bool]:
    """True where ``driver`` is older than CUDA ``cuda_major``'s minimum; None where the table does not know the major."""
    floor = MIN_DRIVER.get(cuda_major)
    return None if floor is None else driver < floor


def parse(c: Collector) -> bool:
    low = c.paste.plain
    if "is cuda available" not in low and "cuda used to build pytorch" not in low:
        return False
    v = c.paste.select(("is cuda available", "cuda used to build pytorch", "nvidia driver version"), context=0)
    avail = _AVAILABLE.search(v.text)
    build = _BUILD.search(v.text)
    driver = _DRIVER.search(v.text)
    if not (avail or build):
        return False
    line = v.line_of
    c.tool("collect_env", line((avail or build).start()))
    cpu_only = build is not None and build.group(1) in ("none", "n/a")
    if build is not None:
        c.add("host", "code.torch_cuda_build", "none" if cpu_only else build.group(1), line(build.start()), severity="info",
              summary="PyTorch is a CPU-only build (CUDA used to build PyTorch: None)" if cpu_only
              else f"PyTorch was built with CUDA {build.group(1)}")
    if avail is not None and avail.group(1) == "false" and not cpu_only:
        c.add("host", "symptom.no_cuda_device", True, line(avail.start()), severity="problem",
              summary="collect_env: a CUDA build of PyTorch reports CUDA not available (it finds no usable GPU)")
    # (CUDA's forward-compatibility package lets a newer CUDA run on an older data-centre driver: where the report says CUDA
    # is available, the versions are no fault)
    if build is not None and not cpu_only and driver is not None and not (avail is not None and avail.group(1) == "true"):
        have = (int(driver.group(1)), int(driver.group(2)), int(driver.group(3) or 0))
        major = int(build.group(1).split(".")[0])
        if driver_below_cuda(have, major):
            floor = ".".join(f"{n:02d}" if i else str(n) for i, n in enumerate(MIN_DRIVER[major]))
            c.add("host", "host.driver_below_cuda_build", True, line(driver.start()), severity="problem",
                  summary=f"driver {'.'.join(map(str, have[:2]))} is older than CUDA {major}.x needs ({floor} or newer), "
                          f"and PyTorch is built with CUDA {build.group(1)}")
    return True
