"""nccl-tests' output (NVIDIA/nccl-tests), read by its own column header so every layout it has printed reads alike:

- 2017 (src/common.cu b188a15): ``#  bytes  N  type  op  time  algbw  busbw  res`` (out-of-place, then in-place), no
  root column, ``res`` the largest difference from the expected value (``%7.0le``);
- 2019-2022 (547e119): ``#  size  count  type  redop  time  algbw  busbw  error`` (all_reduce; root only for rooted
  collectives), ``error`` again the largest difference (``%5.0le``);
- 2022 on: ``#  size  count  type  redop  root  time  algbw  busbw  #wrong`` (src/util.cu writeResultHeader), the
  number of wrong elements; 2025 builds add ``copybw`` before ``#wrong``, ``-I 1`` per-iteration columns after it,
  ``-T`` a timestamp.

A difference counts as wrong data as nccl-tests counts it (``DeltaMaxValue(type) * (nranks - 1)``: 1e-2 for half and
bfloat16, 1e-5 for float, 1e-12 for double, 0 for integers); ``#wrong`` above 0 is wrong data. The summary "Out of
bounds values : N FAILED" (N > 0) is wrong data without its table; "HOST: Test timeout (Ns) FILE:LINE" (common.cu: the
collective did not complete within ``-T``/the timeout) and a table header with no row after it are a hang.

Facts: tool.verification_error and symptom.wrong_results, symptom.hang, nccl.status ok (a table with figures and no
wrong element), symptom.slow (the peak busbw under a quarter of the least
link the paste shows between the ranks' GPUs: topo NV#, or PCIe generation and width; read beside a host, that host's
link between the GPUs of the ranks' bus ids; else, all ranks on one node, the link as the GPUs are built: tools.link_floor,
tools.built_floor), gpu.name and bus ids from "# Rank N ... device D [BUS] NAME"; busbw by size in
``structured["tools"]``.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from ..knowledge.regex_safety import ISSUE_TEMPLATE_LINE
from .paste import Collector

#: nccl-tests' (and rccl-tests') own lines that state no trouble of a report, as prose reads them (lower case): the "#"
#: rows of its header and summary (common.cu's "#  Rank ...", "# nThread", "#  Using devices", "# Collective test
#: concluded", "# Avg bus bandwidth", "# Out of bounds values", the "#wrong" column titles) and rccl-tests' version line
PLAIN_LINES = (r"^\s*#(?:\s{2}|\s*wrong|\s*out of bounds|\s*avg bus|\s*nccl-tests|\s*nthread|\s*using devices|\s*collective test)|"
               r"^\s*rccl-tests: version\b")
_DEV = re.compile(r"#\s+Rank\s+(\d+)\s+(?:Group\s+\d+\s+)?Pid\s+\d+\s+on\s+(\S+)\s+device\s+(\d+)\s+\[(?:0x)?([0-9a-fA-F:.]+)\]\s+(.+?)\s*$")
#: the first nccl-tests (2017-2018, common.cu): "#   Rank  0 on     titan1 device  0 [0x02] TITAN Xp" or "uses device"
_DEV_OLD = re.compile(r"#\s+Rank\s+(\d+)\s+(?:on\s+\S+\s+device|uses\s+device)\s+(\d+)\s+\[(?:0x)?([0-9a-fA-F:.]+)\]\s+(.+?)\s*$")
#: the column header of the result table
_HEADER = re.compile(r"^#\s*(?:bytes|size)\s+(?:N|count)\s+type\b.*\bbusbw\b", re.I)
_TYPE_DELTA = {"half": 1e-2, "float16": 1e-2, "bfloat16": 1e-2, "float": 1e-5, "float32": 1e-5, "double": 1e-12,
               "float64": 1e-12}
_OOB = re.compile(r"Out of bounds values\s*:\s*(\d+)\s+FAILED", re.I)
_AVG_FAILED = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*[\d.]+\s+FAILED\b")
_TIMEOUT = re.compile(r"^\S+: Test timeout \((\d+)s\) \S+:\d+\s*$")
_NGPUS = re.compile(r"\bnGpus (\d+)\b")
_ERROR_FIGURE = re.compile(r"\d(?:\.\d+)?e[-+]\d+", re.I)
_NUM = re.compile(r"^-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?$")


class _Layout:
    """Where busbw and the wrong-data column sit in a row, from the table's header (or from the row's shape)."""

    def __init__(self, names: list[str]):
        self.names = names
        self.busbw = [i for i, n in enumerate(names) if n == "busbw"]
        self.wrong = [i for i, n in enumerate(names) if n in ("#wrong", "error", "res")]
        self.counts = any(n == "#wrong" for n in names)  # a count of elements; else the largest difference

    @classmethod
    def from_header(cls, line: str) -> "_Layout":
        return cls(line.lstrip("#").split())

    @classmethod
    def guess(cls, tokens: list[str]) -> Optional["_Layout"]:
        """A row whose header the paste cut off: the current layout has an integer root where older ones have a time."""
        if len(tokens) < 8:
            return None
        # the older layout's error column is the largest difference in "%5.0le" ("2e-07", "0e+00"); its time column, like
        # the newer one's root, can be a bare integer (nccl-tests prints times of 10 ms and more without decimals)
        if _ERROR_FIGURE.fullmatch(tokens[7]):
            return cls(["size", "count", "type", "redop", "time", "algbw", "busbw", "error"])
        if re.fullmatch(r"-?\d+", tokens[4]) and len(tokens) >= 9:
            return cls(["size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong"])
        return cls(["size", "count", "type", "redop", "time", "algbw", "busbw", "error"])


def _wrong(value: str, layout: _Layout, dtype: str, nranks: int) -> Optional[bool]:
    if not _NUM.match(value):
        return None  # N/A: no check ran
    v = float(value)
    if layout.counts:
        return v > 0
    return v > _TYPE_DELTA.get(dtype.lower(), 0.0) * max(1, nranks - 1)


#: nccl-tests (src/util.cu): "Invalid number of GPUs: %d requested but only %d were found."
_TOO_FEW = re.compile(r"Invalid number of GPUs: (\d+) requested but only (\d+) were found")


def parse(c: Collector, gpu_name, link_floor, built_floor=None) -> bool:
    """``gpu_name(c, index, name, line)`` records a rank's GPU; ``link_floor(c, a, b, host)`` is the least GB/s one way
    the paste (or, with ``host``, the host it is read beside) shows the pair's link to give (tools.link_floor), None where
    it does not say; ``built_floor(c, a, b)`` the
    least the pair's link gives as its GPUs are built (tools.built_floor), the floor of a run whose ranks are all on
    one node where the paste does not say the link."""
    text = c.paste.text
    if "busbw" not in text and "Avg bus bandwidth" not in text and "# Using devices" not in text \
            and "Out of bounds values" not in text and "Test timeout" not in text and "Invalid number of GPUs" not in text:
        return False
    lines = c.paste.lines
    few = next(((no, m) for no, line in enumerate(lines, 1) for m in [_TOO_FEW.search(line)] if m), None)
    if few:
        # nccl-tests' own check (src/util.cu): more GPUs asked for than the process can see
        c.kind("nccl-tests")
        c.add("host", "symptom.gpus_missing", True, few[0], severity="problem",
              summary=f"nccl-tests: {few[1].group(1)} GPUs requested but only {few[1].group(2)} visible to the process")
    oob = next(((no, m) for no, line in enumerate(lines, 1) for m in [_OOB.search(line)] if m and int(m.group(1)) > 0), None)
    low_bw = next((no for no, line in enumerate(lines, 1) if _AVG_FAILED.search(line)), None)
    if low_bw:
        # nccl-tests' own verdict (src/common.cu): with NCCL_TESTS_MIN_BW set, "Avg bus bandwidth : %g FAILED" when the
        # average is under 90 % of that minimum
        c.kind("nccl-tests")
        c.add("host", "symptom.slow", True, low_bw,
              summary="nccl-tests: the average bus bandwidth is under the minimum it was given (NCCL_TESTS_MIN_BW): FAILED")
    if oob:
        c.kind("nccl-tests")
        c.add("host", "tool.verification_error", True, oob[0])
        c.add("host", "symptom.wrong_results", True, oob[0])
    rows: list[dict[str, Any]] = []
    wrong_line = None
    header = 0
    layout: Optional[_Layout] = None
    ranks = 0
    devices: set[int] = set()
    nodes: set[str] = set()  # the hosts the ranks say they run on ("# Rank 0 ... on node1 device 0 ...")
    ngpus = next((int(m.group(1)) for m in map(_NGPUS.search, lines[:200]) if m), 0)
    timeout = 0
    for no, line in enumerate(lines, 1):
        # a table pasted indented (a Markdown or reStructuredText literal block, a quote) keeps its "#" lines after the indent
        line = line.lstrip() if line[:1] in (" ", "\t") and line.lstrip().startswith("#") else line
        if line.startswith("#"):
            o = _DEV_OLD.match(line)
            d = None if o else _DEV.match(line)
            if o:
                ranks += 1
                devices.add(int(o.group(2)))
                gpu_name(c, int(o.group(2)), o.group(4), no)
                bus = o.group(3)
                c.note_bus(f"0000:{int(bus, 16):02x}:00.0" if ":" not in bus else bus, int(o.group(2)))
                c.kind("nccl-tests")
            elif d:
                ranks += 1
                nodes.add(d.group(2))
                devices.add(int(d.group(3)))
                gpu_name(c, int(d.group(3)), d.group(5), no)
                bus = d.group(4)
                if ":" not in bus:  # older nccl-tests print the bus number alone: [0x1b]
                    bus = f"0000:{int(bus, 16):02x}:00.0"
                elif bus.count(":") == 1 and len(bus.split(":")[0]) > 2:  # [0000:2c:00]
                    bus = bus + ".0"
                c.note_bus(bus, int(d.group(3)))
                c.kind("nccl-tests")
            elif _HEADER.match(line):
                header = header or no
                layout = _Layout.from_header(line)
            continue
        if _TIMEOUT.match(line.strip()):
            timeout = timeout or no
            continue
        tokens = line.split()
        if len(tokens) < 7 or not tokens[0].isdigit() or not tokens[1].isdigit():
            continue
        lay = layout if layout and len(tokens) >= (layout.busbw or [99])[0] + 1 else _Layout.guess(tokens)
        if lay is None or not lay.busbw or not lay.wrong:
            continue
        try:
            busbw = float(tokens[lay.busbw[0]])
        except (ValueError, IndexError):
            continue
        rows.append({"size": int(tokens[0]), "busbw": busbw, "line": no})
        nranks = ngpus if ngpus > 1 else ranks or 2
        for i in lay.wrong:
            if i < len(tokens) and _wrong(tokens[i], lay, tokens[2], max(ranks, nranks)) and wrong_line is None:
                wrong_line = no
    if timeout:
        c.kind("nccl-tests")
        c.tool("nccl-tests", timeout)
        c.add("host", "symptom.hang", True, timeout,
              summary="nccl-tests: a collective did not complete before the test's timeout")
    if not rows:
        if header and not oob and not timeout and not any(l.strip() and not l.lstrip().startswith("#")
                                                          and not ISSUE_TEMPLATE_LINE.match(l) for l in lines[header:]):
            # the table's header is the paste's last line (an issue template's own lines after it aside): nccl-tests
            # prints a row per size as each completes (8 bytes first, in well under a second), so a run that printed
            # none stopped in its first collective
            c.kind("nccl-tests")
            c.tool("nccl-tests", header)
            c.add("host", "symptom.hang", True, header,
                  summary="nccl-tests printed its table header and no result: the first collective never completed")
        return "nccl-tests" in c.kinds
    c.kind("nccl-tests")
    c.tool("nccl-tests", rows[0]["line"])
    c.add("host", "text.framework", "nccl-tests", rows[0]["line"], severity="info")
    if wrong_line:
        c.add("host", "tool.verification_error", True, wrong_line)
        c.add("host", "symptom.wrong_results", True, wrong_line)
    elif not oob and not timeout and any(r["busbw"] > 0 for r in rows):
        # a result table with figures and no wrong element: the collective ran and checked its data (a working state)
        c.add("host", "nccl.status", "ok", rows[0]["line"], severity="ok",
              summary="nccl-tests ran its collective over every size with no wrong element")
    c.structured.setdefault("tools", {})["nccl-tests"] = {"busbw_by_size": {r["size"]: r["busbw"] for r in rows}}
    # busbw is the rate each GPU's link carries in the collective (nccl-tests' PERFORMANCE.md): far under the least
    # link the paste shows between its GPUs (topo NV#, else both GPUs' PCIe generation and width) is slow
    topo = c.structured.get("topo")
    gpus = sorted(devices) or (sorted(topo.gpus) if topo is not None else [])
    # (the host's own links only for a run of one node: ranks on several nodes talk over the network)
    floors = [link_floor(c, a, b, host=len(nodes) <= 1) for a in gpus for b in gpus if a < b]
    # (only a run up to 16 MiB and more: smaller messages never fill a link, whatever the path)
    if not (floors and all(floors)) and built_floor and len(nodes) == 1 and len(devices) >= 2:
        # every rank on one node: its GPUs talk over their own links (P2P, SHM), at least what they are built with
        floors = [built_floor(c, a, b) for a in gpus for b in gpus if a < b]
        floors = [(f[0], f[1] + ", all ranks on one node") if f else None for f in floors]
    if floors and all(floors) and max(r["size"] for r in rows) >= 16 << 20:
        gbps, link = min(floors)
        peak = max(rows, key=lambda r: r["busbw"])
        if peak["busbw"] < 0.25 * gbps:
            c.add("host", "symptom.slow", True, peak["line"],
                  summary=f"nccl-tests peak busbw {peak['busbw']} GB/s, under a quarter of what {link} gives at the least "
                          f"({gbps:.0f} GB/s)")
    return True
