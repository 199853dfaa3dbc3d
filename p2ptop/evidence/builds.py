"""Whether a program's GPU code was built for the paste's GPUs: ``host.build_lacks_gpu_arch``.

A CUDA library holds machine code (SASS) for the architectures it was compiled for and, where its build asked for it,
PTX the driver can compile for a newer one. A GPU of an architecture it holds neither for cannot run its kernels: CUDA
answers ``no kernel image is available for execution on the device`` (209), ``invalid device function`` (98) or, where
the kernel is looked up by name, ``named symbol not found`` (500), and NCCL's kernel set-up (src/enqueue.cc,
ncclInitKernelsForDevice) prints that as ``Cuda failure '...'``. Read here, each from its source:

* PyTorch's own check (torch/cuda/__init__.py ``_check_capability``): "NVIDIA GeForce RTX 5090 with CUDA capability
  sm_120 is not compatible with the current PyTorch installation." (also the GPU's architecture, from sm_NN) and, for a GPU below the build's minimum, "Found GPU0
  Tesla K80 which is of cuda capability 3.7. PyTorch no longer supports this GPU because it is too old." PyTorch's NCCL is
  built with the same architecture list;
* ``derive``: the CUDA version a library was built with (NCCL's "NCCL version 2.14.3+cuda11.8", PyTorch's collect_env
  "CUDA used to build PyTorch: 11.8") against the CUDA releases that can build code for the GPUs the paste names
  (``ARCH_CUDA``): a build older than the first CUDA that knows the architecture holds no machine code for it (only PTX
  of an older one, if its build kept PTX), and a CUDA that has dropped an architecture builds nothing for it.

The fact is context: it explains a kernel-image failure the text shows (the NCCL build entry's own lines), never offers
an entry by itself.

And ``host.driver_below_cuda_build``: the driver the paste names (nvidia-smi's "Driver Version: 384.111", prose) older than
the one the CUDA runtime of a library's build needs (``MIN_DRIVER``, CUDA's release notes, "CUDA Toolkit and Corresponding
Driver Versions"): a runtime newer than the driver cannot start (cudaErrorInsufficientDriver, 35, which NCCL reports as
"unhandled cuda error"). The builds read: NCCL's "NCCL version 2.7.8+cuda11.0", a NCCL package's version as apt, dpkg and rpm
list it ("libnccl2 ... 2.1.4-1+cuda9.1"), PyTorch's collect_env "CUDA used to build PyTorch" (collect_env.py, where the
report does not say CUDA is available), and a PyTorch wheel's local version tag ("torch 1.8.1+cu111": the CUDA runtime the
wheel bundles; not where the text says CUDA is available). Not read where
NCCL's log shows it got as far as its transports (the runtime started: CUDA's forward-compatibility package runs a newer
CUDA on an older data-centre driver).
"""

from __future__ import annotations

import re
from typing import Optional

from .paste import Collector

#: architecture -> (first CUDA release that compiles for it, first release that no longer does, or None): NVIDIA's CUDA
#: release notes and NCCL's makefiles/common.mk (CUDA 11.8 adds sm_89/sm_90, 12.8 sm_100/sm_120; 12.0 removes Kepler's
#: sm_35/sm_37; 13.0 removes Maxwell, Pascal and Volta, sm_50 to sm_72)
ARCH_CUDA: dict[str, tuple[tuple[int, int], Optional[tuple[int, int]]]] = {
    "Kepler": ((5, 0), (12, 0)), "Maxwell": ((6, 0), (13, 0)), "Pascal": ((8, 0), (13, 0)), "Volta": ((9, 0), (13, 0)),
    "Turing": ((10, 0), None), "Ampere": ((11, 0), None), "Ada": ((11, 8), None), "Hopper": ((11, 8), None),
    "Blackwell": ((12, 8), None),
}


def arch_of_sm(sm: int) -> Optional[str]:
    """The architecture of a compute capability written as sm_NN (sm_86 -> Ampere, sm_120 -> Blackwell)."""
    major, minor = divmod(sm, 10)
    if major == 7:
        return "Turing" if minor >= 5 else "Volta"
    if major == 8:
        return "Ada" if minor == 9 else "Ampere"
    return {3: "Kepler", 5: "Maxwell", 6: "Pascal", 9: "Hopper", 10: "Blackwell", 11: "Blackwell", 12: "Blackwell"}.get(major)


# torch/cuda/__init__.py: incompatible_device_warn ("{} with CUDA capability sm_{} is not compatible with the current PyTorch
# installation.") and old_gpu_warn ("Found GPU%d %s which is of cuda capability %d.%d.\n    PyTorch no longer supports this
# GPU because it is too old.")
_TORCH_NEW = re.compile(r"(?P<name>[^\n]{0,80}?) with cuda capability sm_(?P<sm>\d{2,3}) is not compatible with the current pytorch install")
_TORCH_OLD = re.compile(r"found gpu\d+ (?P<name>[^\n]{1,80}?) which is of cuda capability (?P<major>\d+)\.(?P<minor>\d)\.?\s*"
                        r"pytorch no longer supports this gpu because it is too old")
_CUDA = re.compile(r"^(\d+)\.(\d+)")
#: CUDA release -> the oldest Linux x86_64 driver that runs it, as (major, minor, patch): CUDA's release notes, "CUDA Toolkit
#: and Corresponding Driver Versions" (each release to 10.2 its own; 11.0 GA; from 11.1 on, minor version compatibility:
#: any 11.x on >= 450.80.02, 12.x on >= 525.60.13, 13.x on >= 580.65.06). 9.1 first shipped saying 387.26 (later 390.46):
#: the lower floor, so that no driver that ran it is called too old
MIN_DRIVER: dict[tuple[int, int], tuple[int, int, int]] = {
    (7, 0): (346, 46, 0), (7, 5): (352, 31, 0), (8, 0): (367, 48, 0), (9, 0): (384, 81, 0), (9, 1): (387, 26, 0),
    (9, 2): (396, 26, 0), (10, 0): (410, 48, 0), (10, 1): (418, 39, 0), (10, 2): (440, 33, 0), (11, 0): (450, 36, 6),
}
MIN_DRIVER_MAJOR: dict[int, tuple[int, int, int]] = {11: (450, 80, 2), 12: (525, 60, 13), 13: (580, 65, 6)}


def min_driver(cuda: tuple[int, int]) -> Optional[tuple[int, int, int]]:
    """The oldest driver that runs CUDA ``cuda`` (major, minor); None where the table does not know the release."""
    return MIN_DRIVER.get(cuda) or MIN_DRIVER_MAJOR.get(cuda[0])


def driver_below_cuda(driver: tuple[int, int, int], cuda: tuple[int, int]) -> Optional[bool]:
    """True where ``driver`` is older than CUDA ``cuda``'s minimum; None where the table does not know the release."""
    floor = min_driver(cuda)
    return None if floor is None else driver < floor


def driver_text(driver: tuple[int, int, int]) -> str:
    """A driver version as NVIDIA writes it (450.80.02, 384.111)."""
    return f"{driver[0]}.{driver[1]:02d}" + (f".{driver[2]:02d}" if driver[2] else "")


#: a NCCL package's version as apt, dpkg and rpm list it: "libnccl2 2.18.3-1+cuda12.2", "libnccl-dev is already the newest
#: version (2.1.4-1+cuda9.1)", "libnccl-2.21.5-1+cuda12.4.x86_64"
_NCCL_PACKAGE = re.compile(r"\blibnccl(?:2|-dev)?\b[^\n]{0,60}?\b2\.\d{1,2}\.\d{1,2}-\d+\+cuda(\d{1,2})\.(\d)\b", re.I)
_DRIVER_VERSION = re.compile(r"^(\d{3})\.(\d{1,3})(?:\.(\d{1,3}))?$")
#: a wheel's local version tag naming the CUDA runtime it bundles, as PyTorch's (and torchvision's, torchaudio's) wheels
#: carry it: "torch 1.8.1+cu111", "torch==2.1.0+cu121", "1.4.0+cu92" (cu + major + minor: cu92 is 9.2, cu111 11.1)
_WHEEL_CUDA = re.compile(r"\b(?:torch|torchvision|torchaudio|pytorch)\b[^\n]{0,30}?\+cu(\d{2,3})\b|(?<![\w.])\d\.\d{1,2}\.\d{1,2}\+cu(\d{2,3})\b", re.I)


def wheel_cuda(tag: str) -> str:
    """The CUDA release of a wheel tag's digits, as the other builds say it: "111" -> "11.1", "92" -> "9.2", "130" -> "13.0"."""
    return f"{tag[0]}.{tag[1]}" if len(tag) == 2 else f"{tag[:2]}.{tag[2]}"


def parse(c: Collector) -> bool:
    v = c.paste.select(("with cuda capability sm_", "which is of cuda capability"), context=1)
    if not v.text:
        return False
    m = _TORCH_NEW.search(v.text)
    if m is not None:
        name = m.group("name").strip(" :-'\"") or "the GPU"
        line = v.line_of(m.start("sm"))
        c.add("host", "host.build_lacks_gpu_arch", True, line, severity="info",
              summary=f"PyTorch's build holds no code for {name} (sm_{m.group('sm')}): its own capability check says so")
        c.add("host", "gpu.architecture", arch_of_sm(int(m.group("sm"))), line)  # where no reader named it before
        return True
    m = _TORCH_OLD.search(v.text)
    if m is not None:
        c.add("host", "host.build_lacks_gpu_arch", True, v.line_of(m.start("name")), severity="info",
              summary=f"PyTorch's build no longer holds code for {m.group('name').strip()} "
                      f"(compute capability {m.group('major')}.{m.group('minor')}): its own check says so")
        return True
    return False


def _version(text: Optional[str]) -> Optional[tuple[int, int]]:
    m = _CUDA.match(str(text or "").strip())
    return (int(m.group(1)), int(m.group(2))) if m else None


def derive(c: Collector) -> None:
    """A library's CUDA build against the architectures of the paste's GPUs (ARCH_CUDA) and against the driver (MIN_DRIVER)."""
    _driver_below_build(c)
    if c.has("host", "host.build_lacks_gpu_arch"):
        return
    archs = {f.value for (_s, key), f in c.facts.items() if key == "gpu.architecture" and f.value in ARCH_CUDA}
    if not archs:
        return
    builds = []
    log = c.structured.get("nccl")
    if log is not None and getattr(log, "cuda", None):
        builds.append((f"NCCL {log.version or ''}".strip(), log.cuda, log.version_line or 1))
    torch = c.facts.get(("host", "code.torch_cuda_build"))
    if torch is not None and torch.value != "none":
        builds.append(("PyTorch", torch.value, torch.line))
    for who, cuda, line in builds:
        have = _version(cuda)
        if have is None:
            continue
        for arch in sorted(archs):
            first, gone = ARCH_CUDA[arch]
            if have < first:
                why = f"CUDA {first[0]}.{first[1]} is the first that builds code for {arch}; only PTX JIT-compiled by the driver can run it"
            elif gone is not None and have >= gone:
                why = f"CUDA {gone[0]}.{gone[1]} no longer builds code for {arch}"
            else:
                continue
            c.add("host", "host.build_lacks_gpu_arch", True, line, severity="info",
                  summary=f"{who} was built with CUDA {cuda}, which holds no machine code for the {arch} GPUs the text names "
                          f"({why})")
            return


def _driver_below_build(c: Collector) -> None:
    """``host.driver_below_cuda_build``: the paste's driver against the CUDA runtime a library it names was built with."""
    driver = c.facts.get(("host", "host.driver_version"))
    m = _DRIVER_VERSION.match(str(driver.value)) if driver is not None else None
    if m is None or c.has("host", "host.driver_below_cuda_build"):
        return
    have = (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0))
    builds = []
    log = c.structured.get("nccl")
    if log is not None and log.channels:
        return  # NCCL got as far as its transports: its runtime started on this driver
    if log is not None and log.cuda:
        builds.append((f"NCCL {log.version or ''}".strip(), log.cuda, log.version_line or 1))
    v = c.paste.select(("libnccl",), context=0)
    package = _NCCL_PACKAGE.search(v.text) if v.text else None
    if package is not None:
        builds.append(("the NCCL package", f"{package.group(1)}.{package.group(2)}", v.line_of(package.start())))
    # (PyTorch's collect_env "CUDA used to build PyTorch" is read against the driver by collect_env.py, which knows whether
    # the report says CUDA is available; a wheel's tag is read here, except where the text says CUDA is available: CUDA's
    # forward-compatibility package runs a newer CUDA on an older data-centre driver)
    v = c.paste.select(("+cu",), context=0)
    wheel = _WHEEL_CUDA.search(v.text) if v.text else None
    if wheel is not None and not c.has("host", "host.cuda_available"):  # collect_env's or the console's answer
        builds.append(("the wheel " + wheel.group(0).strip(), wheel_cuda(wheel.group(1) or wheel.group(2)),
                       v.line_of(wheel.start())))
    for who, cuda, line in builds:
        want = _version(cuda)
        if want is None or not driver_below_cuda(have, want):
            continue
        c.add("host", "host.driver_below_cuda_build", True, line, severity="problem",
              summary=f"{who} is built with CUDA {cuda}, which needs driver {driver_text(min_driver(want))} or newer; "
                      f"the text's driver is {driver.value} (line {driver.line})")
        return
