"""nvbandwidth's JSON output (``nvbandwidth -j``; NVIDIA/nvbandwidth json_output.cpp), the same facts as its text output
(tools.parse_cuda_samples) from the same tool:

- ``"GPU Device list"``: ``"N: NAME (BUS): (HOST)"`` per device (recordDevices): gpu.name and the bus id;
- each of ``"testcases"``: ``name``, ``status`` (Passed, Waived, Error, Not Found, Running), ``bandwidth_description``
  ("memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)"), ``bandwidth_matrix`` (rows of strings, "N/A" where a pair has
  no figure) and ``error`` (recordErrorCurrentTest), and the top-level ``error``.

This module decodes the object (:func:`read`); the facts are the tool reader's, the same as from the text output
(tools.py: the one-way matrices judged against the links, "N/A" pairs and a waived device-to-device test as pairs
without peer access, the pattern check's failure as wrong data).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Optional

from .paste import Collector

#: recordDevices: iDev << ": " << getDeviceDisplayInfo(iDev) << ": (" << localHostname << ")", the display info being
#: "NAME (BUS)" (common.cpp getDeviceDisplayInfo)
_DEVICE = re.compile(r"^\s*(\d+): (.+?) \(([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.\d)?)\)(?:: \(.*\))?\s*$")
_ONE_WAY = re.compile(r"^(?:memcpy|memory) (?:CE|SM) (GPU|CPU)\(row\) (?:->|<-) GPU\(column\) bandwidth", re.I)
_START = re.compile(r'\{\s*"nvbandwidth"\s*:')


def is_json(text: str) -> bool:
    """Does the text hold nvbandwidth's JSON object (its top-level key ``"nvbandwidth"``)?"""
    return '"nvbandwidth"' in text and _START.search(text) is not None


def _load(text: str) -> Optional[tuple[dict, int]]:
    m = _START.search(text)
    if m is None:
        return None
    try:
        doc, _end = json.JSONDecoder().raw_decode(text, m.start())
    except ValueError:  # cut or mangled: the text reader's patterns still read what they can
        return None
    body = doc.get("nvbandwidth") if isinstance(doc, dict) else None
    return (body, m.start()) if isinstance(body, dict) else None


def _figure(cell: Any) -> Optional[float]:
    try:
        return float(cell)
    except (TypeError, ValueError):
        return None


@dataclass
class Test:
    """One of ``"testcases"``: where its name stands, and what it says."""

    name: str
    line: int
    status: str
    error: str
    rows: Optional[str]  # "GPU" or "CPU" for a one-way matrix (its rows), None for any other
    cells: dict[tuple[int, int], Optional[float]]  # (row, column) -> GB/s, None where it printed "N/A"
    sum: Optional[float]


@dataclass
class Output:
    """nvbandwidth's JSON object as the tool reader needs it: the devices (index, name, bus id, line), the tests, the
    top-level error and the line the object starts on."""

    first: int
    devices: list[tuple[int, str, str, int]] = field(default_factory=list)
    tests: list[Test] = field(default_factory=list)
    error: str = ""
    error_line: int = 0


def read(c: Collector) -> Optional[Output]:
    """nvbandwidth's JSON object out of the paste, None where there is none that decodes. Facts are the tool reader's
    (tools.parse_cuda_samples), the same as for its text output."""
    text = c.paste.text
    if not is_json(text):
        return None
    got = _load(text)
    if got is None:
        return None
    body, start = got

    def line_of(needle: str, default: int) -> int:
        at = text.find(needle, start)
        return c.paste.line_of(at) if at >= 0 else default

    out = Output(first=c.paste.line_of(start))
    for entry in body.get("GPU Device list") or []:
        d = _DEVICE.match(str(entry))
        if d:
            bus = d.group(3)
            out.devices.append((int(d.group(1)), d.group(2), bus if "." in bus else bus + ".0", line_of(str(entry), out.first)))
    for case in body.get("testcases") or []:
        if not isinstance(case, dict):
            continue
        name = str(case.get("name") or "")
        one_way = _ONE_WAY.match(str(case.get("bandwidth_description") or ""))
        matrix = case.get("bandwidth_matrix")
        cells = {(r, k): _figure(cell) for r, row in enumerate(matrix) if isinstance(row, list)
                 for k, cell in enumerate(row)} if isinstance(matrix, list) else {}
        out.tests.append(Test(name=name, line=line_of(f'"{name}"', out.first) if name else out.first,
                              status=str(case.get("status") or ""), error=str(case.get("error") or ""),
                              rows=one_way.group(1).upper() if one_way and cells else None, cells=cells,
                              sum=case["sum"] if isinstance(case.get("sum"), (int, float)) else None))
    out.error = str(body.get("error") or "")
    out.error_line = line_of('"error"', out.first)
    return out
