"""Error codes as logs print them, reduced to one key each so a log and an entry can be compared:
CUDA runtime names (cudaErrorX), driver names (CUDA_ERROR_X) and numbers, NCCL results, Xids."""

from __future__ import annotations

import re
from typing import Iterator, Union

#: CUDA error numbers (the runtime and driver API share these) -> key; only those the KB needs to read.
CUDA_NUMBERS: dict[int, str] = {
    35: "insufficientdriver",
    100: "nodevice",
    217: "peeraccessunsupported",
    220: "nvlinkuncorrectable",
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
_ALIASES = {"invalidhandle": "invalidresourcehandle"}

_NAME = re.compile(r"\b(?:cudaError(?P<rt>[A-Z][A-Za-z]+)|CUDA_ERROR_(?P<drv>[A-Z][A-Z_]+)|nccl(?P<nccl>[A-Z][A-Za-z]+Error|InvalidUsage|InvalidArgument))\b")
_CUDA_LINE = re.compile(r"cuda|cudart|nvrtc|cublas|nccl", re.IGNORECASE)
_NUMBER = re.compile(r"\b(?:error|err|code|status|returned|result|failure)\s*(?:code|=|:|#|is|number)?\s*[=:]?\s*\(?\s*(\d{2,3})\b", re.IGNORECASE)
_HEX = re.compile(r"\b(?:error|err|code|status|returned|result)\s*[=:]?\s*\(?\s*0x([0-9a-f]{1,4})\b", re.IGNORECASE)  # cuda-gdb: returned (0x2c0)
_XID = re.compile(r"\bXid\b\s*(?:\([^)]{0,80}\))?\s*:?\s*(\d{1,3})\b", re.IGNORECASE)


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


def codes_in_line(line: str) -> Iterator[tuple[str, str]]:
    """(key, the text as written) for each error code a log line names."""
    for m in _NAME.finditer(line):
        yield key(m.group(0)), m.group(0)
    if _CUDA_LINE.search(line):
        for m in _NUMBER.finditer(line):
            n = int(m.group(1))
            if n in CUDA_NUMBERS:
                yield CUDA_NUMBERS[n], m.group(0).strip()
        for m in _HEX.finditer(line):
            n = int(m.group(1), 16)
            if n in CUDA_NUMBERS:
                yield CUDA_NUMBERS[n], m.group(0).strip()
    for m in _XID.finditer(line):
        yield f"xid{int(m.group(1))}", m.group(0).strip()
