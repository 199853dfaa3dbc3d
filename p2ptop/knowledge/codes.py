"""Error codes as logs print them, reduced to one key each so a log and an entry can be compared:
CUDA runtime names (cudaErrorX), driver names (CUDA_ERROR_X) and numbers, NCCL results, Xids."""

from __future__ import annotations

import re
from typing import Iterator, Optional, Union

from ..nccl.log import NCCL_RESULT_TEXTS, NCCL_RESULTS

#: CUDA error numbers (the runtime and driver API share these) -> key; only those the KB needs to read.
CUDA_NUMBERS: dict[int, str] = {
    35: "insufficientdriver",
    36: "callrequiresnewerdriver",
    100: "nodevice",
    101: "invaliddevice",
    205: "mapbufferobjectfailed",
    217: "peeraccessunsupported",
    220: "nvlinkuncorrectable",
    222: "unsupportedptxversion",
    226: "contained",
    304: "operatingsystem",
    400: "invalidresourcehandle",
    700: "illegaladdress",
    704: "peeraccessalreadyenabled",
    705: "peeraccessnotenabled",
    711: "toomanypeers",
    719: "launchfailure",
    802: "systemnotready",
    803: "systemdrivermismatch",
    804: "compatnotsupportedondevice",
}
_ALIASES = {"invalidhandle": "invalidresourcehandle", "mapfailed": "mapbufferobjectfailed", "deviceunavailable": "devicesunavailable"}

_NAME = re.compile(r"\b(?:cudaError(?P<rt>[A-Z][A-Za-z]+)|CUDA_ERROR_(?P<drv>[A-Z][A-Z_]+)|nccl(?P<nccl>[A-Z][A-Za-z]+Error|InvalidUsage|InvalidArgument))\b")
# These three run on the lower-cased line (case-sensitive patterns are much faster than IGNORECASE).
_CUDA_WORDS = ("cuda", "nvrtc", "cublas", "nccl")
_NUMBER = re.compile(r"\b(?:error|err|code|status|returned|result|failure)\s*(?:code|=|:|#|is|number)?\s*[=:]?\s*\(?\s*(\d{2,3})\b")
_HEX = re.compile(r"\b(?:error|err|code|status|returned|result)\s*[=:]?\s*\(?\s*0x([0-9a-f]{1,4})\b")  # cuda-gdb: returned (0x2c0)
_GLOG = re.compile(r"==\s*cudasuccess\s*\((\d{2,3}) vs\.? 0\)")  # glog/Caffe: error == cudaSuccess (35 vs. 0)
#: a CUDA check macro that prints where it failed before the status ("Cuda failure in file 'yolo_layer.cu' line 51: 35", the
#: TensorRT plugins' CHECK in yolo_layer.cu of the TensorRT YOLO demos that Frigate and others ship)
_FILE_LINE = re.compile(r"\bcuda failure in file\b[^\n]{0,160}?\bline \d+\s*:\s*(\d{2,3})\b")
#: an Xid as NVRM prints it ("Xid (PCI:0000:3b:00): 79"), as the device plugin logs it ("XidCriticalError: Xid=79 on
#: Device=...", NVIDIA/k8s-device-plugin internal/rm/health.go) and as DCGM exporter labels its gauge
#: (DCGM_FI_DEV_XID_ERRORS{...,err_code="74",...}, dcgm-exporter's xid collector)
_XID = re.compile(r"\bxid\b\s*(?:\([^)]{0,80}\))?\s*[:=]?\s*(\d{1,3})\b|"
                  r"\bdcgm_fi_dev_xid_errors\{[^}]{0,400}?\berr_code=\"(\d{1,3})\"")


def key(code: Union[str, int]) -> str:
    """The comparison key of a code as an entry writes it: 217, 'cudaErrorPeerAccessUnsupported',
    'CUDA_ERROR_PEER_ACCESS_UNSUPPORTED', 'ncclSystemError', 'Xid 74'."""
    if isinstance(code, int):
        return CUDA_NUMBERS.get(code, f"cuda{code}")
    s = code.strip()
    m = re.fullmatch(r"xid\s*(\d+)", s, re.IGNORECASE)
    if m:
        return f"xid{int(m.group(1))}"
    if s.isdigit():
        return key(int(s))
    m = _NAME.fullmatch(s)
    if m and m.group("nccl"):
        return "nccl:" + m.group("nccl").lower()
    if m:
        s = m.group("rt") or m.group("drv")
    k = s.replace("_", "").lower()
    return _ALIASES.get(k, k)


#: A line can name a code only if it holds one of these (lower case); the matcher looks at no other line.
GATES = ("cudaerror", "cuda_error_", "cudasuccess", "error", "invalid", "code", "status", "returned", "result", "failure", "xid")


def codes_in_line(line: str) -> Iterator[tuple[str, str]]:
    """(key, the text as written) for each error code a log line names. A bare number counts only
    on a line that mentions CUDA or NCCL."""
    for m in _NAME.finditer(line):
        yield key(m.group(0)), m.group(0)
    low = line.lower()
    shown = line if len(low) == len(line) else low
    if any(w in low for w in _CUDA_WORDS):
        for rx, base in ((_NUMBER, 10), (_HEX, 16), (_GLOG, 10), (_FILE_LINE, 10)):
            for m in rx.finditer(low):
                n = int(m.group(1), base)
                if n in CUDA_NUMBERS:
                    yield CUDA_NUMBERS[n], shown[m.start():m.end()].strip()
    for m in _XID.finditer(low):
        yield f"xid{int(m.group(1) or m.group(2))}", shown[m.start():m.end()].strip()


# --- the full CUDA error table --------------------------------------------------------------------
#: CUDA's error table: (number, runtime name, driver-API name, the message cudaGetErrorString /
#: cuGetErrorString prints). Numbers and names from CUDA 13.1's driver_types.h (enum cudaError) and
#: cuda.h (CUresult); messages as the runtime prints them. Runtime and driver numbers agree for
#: every code listed. The text evidence reader (p2ptop.evidence) maps driver names, numbers and
#: messages to the runtime name with it; CUDA_NUMBERS above stays the matcher's short list.
CUDA_ERRORS: tuple[tuple[int, str, str, str], ...] = (
    (1, "cudaErrorInvalidValue", "CUDA_ERROR_INVALID_VALUE", "invalid argument"),
    (2, "cudaErrorMemoryAllocation", "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"),
    (3, "cudaErrorInitializationError", "CUDA_ERROR_NOT_INITIALIZED", "initialization error"),
    (4, "cudaErrorCudartUnloading", "CUDA_ERROR_DEINITIALIZED", "driver shutting down"),
    (9, "cudaErrorInvalidConfiguration", "", "invalid configuration argument"),
    (13, "cudaErrorInvalidSymbol", "", "invalid device symbol"),
    (17, "cudaErrorInvalidDevicePointer", "", "invalid device pointer"),
    (21, "cudaErrorInvalidMemcpyDirection", "", "invalid copy direction for memcpy"),
    (34, "cudaErrorStubLibrary", "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"),
    (35, "cudaErrorInsufficientDriver", "", "CUDA driver version is insufficient for CUDA runtime version"),
    (36, "cudaErrorCallRequiresNewerDriver", "", "API call is not supported in the installed CUDA driver"),
    (46, "cudaErrorDevicesUnavailable", "", "CUDA-capable device(s) is/are busy or unavailable"),
    (53, "cudaErrorPriorLaunchFailure", "", "unspecified launch failure in prior launch"),
    (98, "cudaErrorInvalidDeviceFunction", "", "invalid device function"),
    (100, "cudaErrorNoDevice", "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"),
    (101, "cudaErrorInvalidDevice", "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"),
    (200, "cudaErrorInvalidKernelImage", "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"),
    (201, "cudaErrorDeviceUninitialized", "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"),
    (209, "cudaErrorNoKernelImageForDevice", "CUDA_ERROR_NO_BINARY_FOR_GPU", "no kernel image is available for execution on the device"),
    (214, "cudaErrorECCUncorrectable", "CUDA_ERROR_ECC_UNCORRECTABLE", "uncorrectable ECC error encountered"),
    (216, "cudaErrorDeviceAlreadyInUse", "CUDA_ERROR_CONTEXT_ALREADY_IN_USE", "exclusive-thread device already in use by a different thread"),
    (217, "cudaErrorPeerAccessUnsupported", "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", "peer access is not supported between these two devices"),
    (218, "cudaErrorInvalidPtx", "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"),
    (220, "cudaErrorNvlinkUncorrectable", "CUDA_ERROR_NVLINK_UNCORRECTABLE", "uncorrectable NVLink error detected during the execution"),
    (222, "cudaErrorUnsupportedPtxVersion", "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", "the provided PTX was compiled with an unsupported toolchain."),
    (226, "cudaErrorContained", "CUDA_ERROR_CONTAINED", "Invalid access of peer GPU memory over nvlink or a hardware error"),
    (304, "cudaErrorOperatingSystem", "CUDA_ERROR_OPERATING_SYSTEM", "OS call failed or operation not supported on this OS"),
    (400, "cudaErrorInvalidResourceHandle", "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"),
    (401, "cudaErrorIllegalState", "CUDA_ERROR_ILLEGAL_STATE", "the operation cannot be performed in the present state"),
    (500, "cudaErrorSymbolNotFound", "CUDA_ERROR_NOT_FOUND", "named symbol not found"),
    (600, "cudaErrorNotReady", "CUDA_ERROR_NOT_READY", "device not ready"),
    (700, "cudaErrorIllegalAddress", "CUDA_ERROR_ILLEGAL_ADDRESS", "an illegal memory access was encountered"),
    (701, "cudaErrorLaunchOutOfResources", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", "too many resources requested for launch"),
    (702, "cudaErrorLaunchTimeout", "CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated"),
    (704, "cudaErrorPeerAccessAlreadyEnabled", "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", "peer access is already enabled"),
    (705, "cudaErrorPeerAccessNotEnabled", "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", "peer access has not been enabled"),
    (709, "cudaErrorContextIsDestroyed", "CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed"),
    (710, "cudaErrorAssert", "CUDA_ERROR_ASSERT", "device-side assert triggered"),
    (711, "cudaErrorTooManyPeers", "CUDA_ERROR_TOO_MANY_PEERS", "peer mapping resources exhausted"),
    (712, "cudaErrorHostMemoryAlreadyRegistered", "CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED", "part or all of the requested memory range is already mapped"),
    (713, "cudaErrorHostMemoryNotRegistered", "CUDA_ERROR_HOST_MEMORY_NOT_REGISTERED", "pointer does not correspond to a registered memory region"),
    (714, "cudaErrorHardwareStackError", "CUDA_ERROR_HARDWARE_STACK_ERROR", "hardware stack error"),
    (715, "cudaErrorIllegalInstruction", "CUDA_ERROR_ILLEGAL_INSTRUCTION", "an illegal instruction was encountered"),
    (716, "cudaErrorMisalignedAddress", "CUDA_ERROR_MISALIGNED_ADDRESS", "misaligned address"),
    (719, "cudaErrorLaunchFailure", "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"),
    (720, "cudaErrorCooperativeLaunchTooLarge", "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE", "too many blocks in cooperative launch"),
    (721, "cudaErrorTensorMemoryLeak", "CUDA_ERROR_TENSOR_MEMORY_LEAK", "tensor memory not completely freed"),
    (800, "cudaErrorNotPermitted", "CUDA_ERROR_NOT_PERMITTED", "operation not permitted"),
    (801, "cudaErrorNotSupported", "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"),
    (802, "cudaErrorSystemNotReady", "CUDA_ERROR_SYSTEM_NOT_READY", "system not yet initialized"),
    (803, "cudaErrorSystemDriverMismatch", "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "system has unsupported display driver / cuda driver combination"),
    (804, "cudaErrorCompatNotSupportedOnDevice", "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "forward compatibility was attempted on non supported HW"),
    (805, "cudaErrorMpsConnectionFailed", "CUDA_ERROR_MPS_CONNECTION_FAILED", "MPS client failed to connect to the MPS control daemon or the MPS server"),
    (900, "cudaErrorStreamCaptureUnsupported", "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "operation not permitted when stream is capturing"),
    (901, "cudaErrorStreamCaptureInvalidated", "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "operation failed due to a previous error during capture"),
    (909, "cudaErrorTimeout", "CUDA_ERROR_TIMEOUT", "wait operation timed out"),
    (999, "cudaErrorUnknown", "CUDA_ERROR_UNKNOWN", "unknown error"),
)
#: Messages too common to name a CUDA error unless the line says CUDA ("CUDA error: out of memory").
GENERIC_CUDA_MESSAGES = frozenset({"invalid argument", "out of memory", "initialization error", "unknown error",
                                   "operation not permitted", "operation not supported", "device not ready",
                                   "context is destroyed", "misaligned address", "hardware stack error",
                                   "driver shutting down", "invalid resource handle", "named symbol not found",
                                   "wait operation timed out", "invalid device function"})
CUDA_BY_NUMBER: dict[int, tuple[str, str, str]] = {n: (rt, drv, msg) for n, rt, drv, msg in CUDA_ERRORS}
CUDA_BY_NAME: dict[str, int] = {**{rt: n for n, rt, _d, _m in CUDA_ERRORS}, **{d: n for n, _r, d, _m in CUDA_ERRORS if d}}
CUDA_BY_MESSAGE: dict[str, int] = {msg.lower().rstrip("."): n for n, _r, _d, msg in CUDA_ERRORS}
#: every error name a terminal's hard cut could split: CUDA's runtime and driver names, NCCL's results (nccl.h)
ERROR_NAMES = frozenset({*CUDA_BY_NAME, *NCCL_RESULTS.values()})
#: CUDA's messages that say which error they are (not the generic ones), and NCCL's (ncclGetErrorString: "unhandled
#: system error", "remote process exited or there was a network error"), lower case
_TOLD_MESSAGES = tuple(m for m in (*CUDA_BY_MESSAGE, *(t for t, _name in NCCL_RESULT_TEXTS))
                       if m not in GENERIC_CUDA_MESSAGES and len(m) >= 16)
_WORD_TAIL = re.compile(r"\w+$")
_WORD_HEAD = re.compile(r"\w+")


def known_across(a: str, b: str) -> bool:
    """Does an error name (ERROR_NAMES) or one of CUDA's or NCCL's own messages run from the end of line ``a`` straight on into
    line ``b``, cut inside a word and whole in neither line ("...cuInit: CUDA_ER" / "ROR_NO_DEVICE", "peer access is not
    sup" / "ported between these two devices"): a terminal's hard cut, which no writer makes?"""
    tail, head = _WORD_TAIL.search(a), _WORD_HEAD.match(b)
    if tail is None or head is None:
        return False
    if tail.group(0) + head.group(0) in ERROR_NAMES:
        return True
    left = a[-160:].lower()
    joined, at = left + b[:160].lower(), len(left)
    for msg in _TOLD_MESSAGES:
        i = joined.find(msg)
        while i != -1:
            if i < at < i + len(msg):
                return True
            i = joined.find(msg, i + 1)
    return False


#: Runtime names as CUDA < 10.1 numbered them (cudaErrorPeerAccessAlreadyEnabled was 50 then): names
#: stay valid, only the old numbers differ, so a number is read only beside a modern name or message.
_ALIASES.update({"launchfailed": "launchfailure", "invalidimage": "invalidkernelimage", "notfound": "symbolnotfound",
                 "outofmemory": "memoryallocation", "notinitialized": "initializationerror", "nobinaryforgpu": "nokernelimagefordevice"})


def cuda_error(name_or_number: Union[str, int]) -> Optional[tuple[int, str]]:
    """(number, runtime name) of a CUDA error written as a runtime name, a driver name, a number or
    its message; None when CUDA's table has no such error."""
    if isinstance(name_or_number, int):
        hit = CUDA_BY_NUMBER.get(name_or_number)
        return (name_or_number, hit[0]) if hit else None
    s = name_or_number.strip()
    if s.isdigit():
        return cuda_error(int(s))
    n = CUDA_BY_NAME.get(s)
    if n is None:
        n = CUDA_BY_MESSAGE.get(s.lower().rstrip("."))
    return (n, CUDA_BY_NUMBER[n][0]) if n is not None else None


#: CUDA errors that say CUDA itself could not start or reach the GPU, whatever call met them (cuInit and the driver
#: checks of CUDA's error table: initialization error 3, stub library 34, insufficient driver 35, call requires newer
#: driver 36, no device 100, system not ready 802, driver mismatch 803, forward compatibility unsupported 804). Where
#: NCCL reports one from inside a transport (transport/nvls.cc, p2p.cc...), the transport is not the cause.
CUDA_UNUSABLE = frozenset({3, 34, 35, 36, 100, 802, 803, 804})
_UNUSABLE_WORDS = tuple((n, [w.lower().rstrip(".") for w in CUDA_BY_NUMBER[n] if w]) for n in sorted(CUDA_UNUSABLE))


def unusable_cuda_in_line(line: str) -> set[int]:
    """The numbers of the CUDA_UNUSABLE errors a line names (runtime or driver name, or the message on a line that
    says CUDA, NCCL's "Cuda failure 'initialization error'" included)."""
    low = line.lower()
    if "cuda" not in low:
        return set()
    return {n for n, words in _UNUSABLE_WORDS if any(w in low for w in words)}


#: CUDA errors that any kernel or program bug gives, on any GPU and host (an out-of-bounds access, a failed launch, a bad
#: argument, OOM): their message names no cause. An entry whose regex matches only such a message is offered on its own
#: conditions (its NCCL version, its GPU, its setup), not on the message (matcher: the generic-message rule).
CUDA_GENERIC = frozenset({1, 2, 201, 400, 700, 709, 710, 715, 716, 719, 999})
_GENERIC_TEXTS = tuple(w.lower().rstrip(".") for n in sorted(CUDA_GENERIC) for w in CUDA_BY_NUMBER[n] if w)


def is_generic_cuda_text(matched: str) -> bool:
    """Is this matched text (a regex's match on a line) only the name or message, or part of the message, of an error
    of CUDA_GENERIC?"""
    t = " ".join(matched.lower().split()).rstrip(".")
    return len(t) >= 6 and any(t in w for w in _GENERIC_TEXTS)

