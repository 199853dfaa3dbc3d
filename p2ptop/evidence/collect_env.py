"""PyTorch's and vLLM's environment report, as issue templates ask for it (``python -m torch.utils.collect_env``,
``vllm collect-env``; torch/utils/collect_env.py and vllm/collect_env.py, the same format strings):

    Is CUDA available: False                      (vLLM: "Is CUDA available            : False")
    CUDA used to build PyTorch: 12.1              ("None" for a CPU-only build of PyTorch)
    GPU models and configuration: GPU 0: ...      (nvidia-smi -L without the UUIDs: the prose reader reads the models)
    Nvidia driver version: 470.82.01              (nvidia-smi's "Driver Version: (.*?) ")

"Is CUDA available" is ``str(torch.cuda.is_available())``. SGLang's check_env prints "CUDA available: False" and "PyTorch: 2.4.0+cu121"; Hugging Face's reports say the same in their own words
(accelerate/commands/env.py, and transformers' env command the same way: ``- PyTorch version (GPU?): 2.1.0+cu121 (False)``,
the second value ``torch.cuda.is_available()``; accelerate since May 2025: ``- PyTorch version: 2.7.0+cu126`` and
``- PyTorch accelerator: N/A`` where neither CUDA nor another accelerator is available). Facts:

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

from .builds import driver_below_cuda, driver_text, min_driver
from .paste import Collector

#: the report's lines (lower-cased text; "key: value" in PyTorch's report, "key <spaces>: value" in vLLM's)
_AVAILABLE = re.compile(r"^(?:is )?cuda available\s*:\s*(true|false)\s*$", re.M)  # (SGLang's check_env: "CUDA available: False")
_SGL_TORCH = re.compile(r"^pytorch\s*:\s*(\S+)", re.M)  # SGLang's check_env: "PyTorch: 2.4.0+cu121"
_BUILD = re.compile(r"^cuda used to build pytorch\s*:\s*(none|n/a|\d+\.\d+)\b", re.M)
_DRIVER = re.compile(r"^nvidia driver version\s*:\s*(\d{3})\.(\d{1,3})(?:\.(\d{1,3}))?\b", re.M)

#: Hugging Face's env reports (lower-cased): the PyTorch version with CUDA's availability, or the accelerator it found
_HF_GPU = re.compile(r"^\W{0,3}pytorch version \(gpu\?\)\s*:\s*(\S+)\s*\((true|false)\)", re.M)
_HF_VERSION = re.compile(r"^\W{0,3}pytorch version\s*:\s*(\S+)", re.M)
_HF_ACCEL = re.compile(r"^\W{0,3}pytorch accelerator\s*:\s*(\S+)", re.M)


def _cuda_build_of(version: str) -> Optional[bool]:
    """A PyTorch version string's build: True for a CUDA wheel ("+cu121"), False for a CPU one ("+cpu"), None unsaid."""
    return True if "+cu" in version else False if "+cpu" in version else None


def _hugging_face(c: Collector) -> bool:
    v = c.paste.select(("pytorch version", "pytorch accelerator"), context=0)
    gpu, accel = _HF_GPU.search(v.text), _HF_ACCEL.search(v.text)
    if gpu is not None:
        c.tool("hf-env", v.line_of(gpu.start()))
        if gpu.group(2) == "false" and _cuda_build_of(gpu.group(1)) is not False:
            c.add("host", "symptom.no_cuda_device", True, v.line_of(gpu.start()), severity="problem",
                  summary="Hugging Face's env report: PyTorch reports CUDA not available (it finds no usable GPU)")
        return True
    version = _HF_VERSION.search(v.text)
    if accel is not None:
        c.tool("hf-env", v.line_of(accel.start()))
        if accel.group(1) == "n/a" and (version is None or _cuda_build_of(version.group(1)) is not False):
            c.add("host", "symptom.no_cuda_device", True, v.line_of(accel.start()), severity="problem",
                  summary="accelerate's env report: a CUDA build of PyTorch finds no accelerator (no usable GPU)")
        return True
    return False


def parse(c: Collector) -> bool:
    low = c.paste.plain
    if "pytorch version (gpu?)" in low or "pytorch accelerator" in low:
        if _hugging_face(c):
            return True
    if "cuda available" not in low and "cuda used to build pytorch" not in low:
        return False
    v = c.paste.select(("cuda available", "cuda used to build pytorch", "nvidia driver version", "pytorch:"), context=0)
    avail = _AVAILABLE.search(v.text)
    build = _BUILD.search(v.text)
    sgl = _SGL_TORCH.search(v.text) if build is None else None
    if sgl is not None and "+cpu" in sgl.group(1):
        build = sgl  # a CPU build: "none" below
    driver = _DRIVER.search(v.text)
    if not (avail or build):
        return False
    line = v.line_of
    c.tool("collect_env", line((avail or build).start()))
    cpu_only = build is not None and (build.group(1) in ("none", "n/a") or "+cpu" in build.group(1))
    if build is not None:
        c.add("host", "code.torch_cuda_build", "none" if cpu_only else build.group(1), line(build.start()), severity="info",
              summary="PyTorch is a CPU-only build" if cpu_only
              else f"PyTorch was built with CUDA {build.group(1)}")
    if avail is not None and avail.group(1) == "true":
        c.add("host", "host.cuda_available", True, line(avail.start()), severity="info",
              summary="collect_env: CUDA is available to PyTorch")
    if avail is not None and avail.group(1) == "false" and not cpu_only:
        c.add("host", "symptom.no_cuda_device", True, line(avail.start()), severity="problem",
              summary="collect_env: a CUDA build of PyTorch reports CUDA not available (it finds no usable GPU)")
    # (CUDA's forward-compatibility package lets a newer CUDA run on an older data-centre driver: where the report says CUDA
    # is available, the versions are no fault)
    if build is not None and not cpu_only and driver is not None and not (avail is not None and avail.group(1) == "true"):
        have = (int(driver.group(1)), int(driver.group(2)), int(driver.group(3) or 0))
        major, minor = (int(x) for x in build.group(1).split(".")[:2])
        if driver_below_cuda(have, (major, minor)):
            c.add("host", "host.driver_below_cuda_build", True, line(driver.start()), severity="problem",
                  summary=f"driver {'.'.join(map(str, have[:2]))} is older than CUDA {major}.{minor} needs "
                          f"({driver_text(min_driver((major, minor)))} or newer), and PyTorch is built with CUDA {build.group(1)}")
    return True
