"""nvbandwidth's JSON output (``nvbandwidth -j``; NVIDIA/nvbandwidth json_output.cpp), the same facts as its text output
(tools.parse_cuda_samples) from the same tool:

- ``"GPU Device list"``: ``"N: NAME (BUS): (HOST)"`` per device (recordDevices): gpu.name and the bus id;
- each of ``"testcases"``: ``name``, ``status`` (Passed, Waived, Error, Not Found, Running), ``bandwidth_description``
  ("memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)"), ``bandwidth_matrix`` (rows of strings, "N/A" where a pair has
  no figure) and ``error`` (recordErrorCurrentTest), and the top-level ``error``;
- a one-way device-to-device matrix is judged against each pair's link (tools.judge_link), a pair off the diagonal
  printed "N/A" is one whose peer access failed, a device-to-device test "Waived" is one with no pair of GPUs that can
  access each other (Testcase::filterHasAccessiblePeerPairs), a CPU-to-GPU matrix is judged against each GPU's own link
  (tools.judge_host_links), and the pattern check's failure in an error (memcpy.cpp's ASSERT) is wrong data.

The judges come from tools.py as arguments (as nccl_tests.parse takes them), so this module imports none of it.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Optional

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


def parse(c: Collector, judge_link: Callable, judge_host_links: Callable, gpu_name: Callable, peer: Callable,
          verify_failed: re.Pattern) -> bool:
    """Read nvbandwidth's JSON object out of the paste into ``c``; False where there is none that decodes."""
    text = c.paste.text
    if not is_json(text):
        return False
    got = _load(text)
    if got is None:
        return False
    body, start = got

    def line_of(needle: str, default: int) -> int:
        at = text.find(needle, start)
        return c.paste.line_of(at) if at >= 0 else default

    first = c.paste.line_of(start)
    c.kind("nvbandwidth")
    c.tool("nvbandwidth", first)
    devices: list[int] = []
    for entry in body.get("GPU Device list") or []:
        d = _DEVICE.match(str(entry))
        if d:
            idx = int(d.group(1))
            devices.append(idx)
            no = line_of(str(entry), first)
            gpu_name(c, idx, d.group(2), no)
            bus = d.group(3)
            c.note_bus(bus if "." in bus else bus + ".0", idx)
    sums: dict[str, Any] = {}
    waived = 0
    for case in body.get("testcases") or []:
        if not isinstance(case, dict):
            continue
        name = str(case.get("name") or "")
        no = line_of(f'"{name}"', first) if name else first
        status = str(case.get("status") or "")
        if isinstance(case.get("sum"), (int, float)):
            sums[name] = case["sum"]
        if status == "Waived" and name.startswith("device_to_device"):
            waived = waived or no
        error = str(case.get("error") or "")
        if error and verify_failed.search(error):
            c.add("host", "tool.verification_error", True, no)
            if name.startswith("device_to_device"):
                c.add("host", "symptom.wrong_results", True, no,
                      summary="nvbandwidth: a copy between GPUs returned wrong data (its pattern check failed)")
            else:
                c.add("host", "tool.host_copy_corrupt", True, no,
                      summary=f"nvbandwidth: {name} returned wrong data (its pattern check failed)")
        one_way = _ONE_WAY.match(str(case.get("bandwidth_description") or ""))
        matrix = case.get("bandwidth_matrix")
        if not one_way or not isinstance(matrix, list):
            continue
        cells = {(r, k): cell for r, row in enumerate(matrix) if isinstance(row, list) for k, cell in enumerate(row)}
        tool = "nvbandwidth " + name
        if one_way.group(1).upper() == "GPU" and name.startswith("device_to_device"):
            judge_link(c, {rk: v for rk, cell in cells.items() for v in [_figure(cell)] if v is not None}, no, tool)
            for (a, b), cell in cells.items():
                if a != b and _figure(cell) is None:  # its enablePeerAccess failed (testcases_ce.cpp)
                    peer(c, min(a, b), max(a, b), False, no)
        elif one_way.group(1).upper() == "CPU":
            judge_host_links(c, {g: v for (_r, g), cell in cells.items() for v in [_figure(cell)] if v is not None}, no, tool)
    top_error = str(body.get("error") or "")
    if top_error and verify_failed.search(top_error):
        c.add("host", "tool.verification_error", True, line_of('"error"', first))
    if waived and len(devices) >= 2:
        # a device-to-device test is waived when no pair of its GPUs can access each other
        for a in sorted(devices):
            for b in sorted(devices):
                if a < b:
                    peer(c, a, b, False, waived)
    c.structured.setdefault("tools", {})["nvbandwidth"] = sums
    return True
