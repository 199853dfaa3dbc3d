"""Error codes as logs print them, reduced to one key each so a log and an entry can be compared:
CUDA runtime names (cudaErrorX), driver names (CUDA_ERROR_X) and numbers, NCCL results, Xids."""

from __future__ import annotations

import re
from typing import Iterator, Union

#: CUDA error numbers (the runtime and driver API share these) -> key; only those the KB needs to read.
CUDA_NUMBERS: dict[int, str] = {
    35: "insufficientdriver",
    100: "nodevice",
    101: "invaliddevice",
    205: "mapbufferobjectfailed",
    217: "peeraccessunsupported",
    220: "nvlinkuncorrectable",
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
_XID = re.compile(r"\bxid\b\s*(?:\([^)]{0,80}\))?\s*:?\s*(\d{1,3})\b")


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
        for rx, base in ((_NUMBER, 10), (_HEX, 16), (_GLOG, 10)):
            for m in rx.finditer(low):
                n = int(m.group(1), base)
                if n in CUDA_NUMBERS:
                    yield CUDA_NUMBERS[n], shown[m.start():m.end()].strip()
    for m in _XID.finditer(low):
        yield f"xid{int(m.group(1))}", shown[m.start():m.end()].strip()
