"""``df`` (coreutils) on /dev/shm, and DeepSpeed's ds_report and Ray's object-store lines for it: host.shm_mb, the size of the shared-memory file system NCCL's SHM transport and
PyTorch's DataLoader workers allocate in (a container's default is 64 MB). It is what fact_roles.NEXT_COMMAND asks
for (``df -h /dev/shm``), so its answer is read: the data line whose last column is ``/dev/shm``, its second column
the size, in ``df -h``'s units (K, M, G, T: powers of 1024), in ``df -H``'s (powers of 1000) where the command line
says -H/--si, or in 1K blocks (plain ``df``, header "1K-blocks")."""

from __future__ import annotations

import re

from .paste import Collector

#: Filesystem Size Used Avail Use% Mounted on / shm 64M 0 64M 0% /dev/shm ("-" for an unknown size on some systems)
_ROW = re.compile(r"^\s*(\S+)\s+(\d+(?:[.,]\d+)?)([KMGTP]?)i?B?\s+\S+\s+\S+\s+\d+%\s+/dev/shm/?\s*$")
_BLOCKS = re.compile(r"^\s*Filesystem\s+(1K|1k|1024)-blocks\b|^\s*Filesystem\s+(\d+)[kK]?-blocks\b")
_SI = re.compile(r"\bdf\b[^\n|;]*\s(?:-\w*H\w*|--si)\b")
_UNIT = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40, "P": 1 << 50}


#: DeepSpeed's ds_report (deepspeed/env_report.py: ("shared memory (/dev/shm) size", human_readable_size(f_frsize *
#: f_blocks)), printed "shared memory (/dev/shm) size .... 64.00 MB", powers of 1024)
_DS_REPORT = re.compile(r"^\s*shared memory \(/dev/shm\) size \.+ (\d+(?:\.\d+)?) ([KMGT]?)B\s*$", re.M)


#: Ray's object store (ray/_private/services.py): "the object store is using /tmp instead of /dev/shm because /dev/shm has
#: only %d bytes available", "exceeds /dev/shm size (%s GB)" (bytes / 10**9)
_RAY_SHM = re.compile(r"/dev/shm has only (\d+) bytes available|exceeds /dev/shm size \(([\d.]+) GB\)")


def _shm_size(c: Collector, size: float, no: int, tool: str, said: str) -> bool:
    """host.shm_mb from a size in bytes that ``tool`` printed on line ``no`` (as ``said``)."""
    c.tool(tool, no)
    return c.add("host", "host.shm_mb", int(round(size / (1 << 20))), no, severity="info", summary=f"/dev/shm is {said} ({tool})")


def parse(c: Collector) -> bool:
    text = c.paste.text
    r = _RAY_SHM.search(text) if "/dev/shm" in text and ("bytes available" in text or "/dev/shm size (" in text) else None
    if r:
        size = int(r.group(1)) if r.group(1) else float(r.group(2)) * 1e9
        return _shm_size(c, size, c.paste.line_of(r.start()), "ray", f"{int(round(size / (1 << 20)))} MiB") or True
    m = _DS_REPORT.search(text) if "shared memory (/dev/shm) size" in text else None
    if m:
        return _shm_size(c, float(m.group(1)) * _UNIT[m.group(2)], c.paste.line_of(m.start()), "ds_report",
                         f"{m.group(1)} {m.group(2)}B") or True
    if "/dev/shm" not in text or "%" not in text:
        return False
    si = _SI.search(text) is not None
    blocks = None
    for no, line in enumerate(c.paste.lines, 1):
        if "/dev/shm" not in line and "-blocks" not in line:
            continue  # a long log mentions /dev/shm in its errors: only df's header and row are read
        b = _BLOCKS.match(line)
        if b:
            blocks = 1024 if b.group(1) else int(b.group(2)) * 1024
            continue
        m = _ROW.match(line)
        if not m:
            continue
        num, unit = float(m.group(2).replace(",", ".")), m.group(3)
        if unit:
            size = num * (1000 ** ("KMGTP".index(unit) + 1) if si else _UNIT[unit])
        elif blocks:
            size = num * blocks
        else:
            continue  # a bare number with no header saying its unit
        c.kind("df")
        _shm_size(c, size, no, "df", f"{m.group(2)}{unit or ' blocks'}")
        return True
    return False
