"""DCGM's output: ``dcgmi diag`` result tables, ``dcgmi health -c``, ``dcgmi nvlink --link-status`` and ``-e`` and DCGM's
failure messages wherever they are pasted (nv-hostengine's log, DCGM exporter, NVSentinel). The messages are
DCGM's own formats (dcgmlib/dcgm_errors.h, ``DCGM_FR_*_MSG``), read tolerant of dcgmi's table, which cuts a
long message at the cell's width onto the next rows.

Facts: a failed P2P copy test (DCGM_FR_BROKEN_P2P_*): tool.verification_error, symptom.wrong_results; links down
(DCGM_FR_NVLINK_DOWN, _GPU_EXPECTED_NVLINKS_UP, _NVSWITCH_NVLINK_DOWN, the link-status letters): gpu.nvlink_down;
NVLink error counters over DCGM's threshold (DCGM_FR_NVLINK_ERROR_THRESHOLD, _CRC_ERROR_THRESHOLD, _EFFECTIVE_BER_THRESHOLD)
gpu.nvlink_errors,
and a counter that must stay zero (DCGM_FR_NVLINK_ERROR_CRITICAL: replay/recovery) gpu.nvlink_replay_recovery (both also
summed per GPU from ``dcgmi nvlink -e``'s counters); PCIe replays or corrected errors over DCGM's threshold
(DCGM_FR_PCIE_REPLAY_THRESHOLD_VIOLATION, _FIELD_THRESHOLD on the PCIe fields): gpu.pcie_link_errors; a PCIe
link below the generation or width DCGM's PCIe test requires while it loads the link (DCGM_FR_PCIE_GENERATION,
_PCIE_WIDTH): gpu.pcie_gen_cur / gpu.pcie_width_cur and gpu.pcie_degraded_under_load; an Xid DCGM saw
(DCGM_FR_XID_ERROR): host.xid_codes / host.xid_latest, gpu.lost for 79, symptom.crash; the NVLink fabric's training
(DCGM_FR_FABRIC_MANAGER_TRAINING_ERROR, _FABRIC_PROBE_STATE): host.fabric_manager / gpu.fabric_state, host.nvswitch_present;
a failed row of the diag table: error.text. Every message is also read from dcgmi's wrapped table cells, joined. The messages with no fact of their own (DCGM health's PCIe replay
rate, NvSwitch fatal errors and SXids) are the knowledge base's regexes.
"""

from __future__ import annotations

import re
from typing import Optional

from .paste import Collector
from .gpus import no_nvlink_hardware
from .system import CRASH_XIDS

#: DCGM's own failure messages (dcgmlib/dcgm_errors.h): DCGM_FR_BROKEN_P2P_MEMORY_DEVICE / _WRITER_DEVICE (and the
#: NVLink/PCIe variants), DCGM_FR_NVSWITCH_NVLINK_DOWN
_DCGM_P2P = re.compile(r"GPU (\d+) (?:was unsuccessfully written to(?: by (?:GPU )?(\d+))?(?: over (?:NVLink|PCIe))?|"
                       r"unsuccessfully wrote data(?: to GPU \d+)?(?: over (?:NVLink|PCIe))?) in a peer-to-peer test", re.I)
_DCGM_NVLINK_DOWN = re.compile(r"NVSwitch \d+'s NvLink \d+ is down", re.I)
#: DCGM_FR_NVLINK_DOWN "GPU %u's NvLink link %d is currently down" (also as dcgmi's table wraps it: "GPU 0GPU 0's NvLink
#: link 1 ..."), DCGM_FR_GPU_EXPECTED_NVLINKS_UP "Only %u NvLinks are up out of the expected %u" (dcgm_errors.h)
_DCGM_GPU_LINK_DOWN = re.compile(r"GPU (\d+)'s NvLink link (\d+) is currently down", re.I)
_DCGM_EXPECTED_UP = re.compile(r"Only (\d+) NvLinks? (?:are|is) up out of the expected (\d+)", re.I)
_DCGM_ROW = re.compile(r"^\|\s*(PCIe|NVLink|Memory Bandwidth|Diagnostic|Targeted Stress|Memtest|Pulse Test)[^|]*\|\s*(Fail\b[^|]*)\|", re.I)


#: DCGM_FR_NVLINK_ERROR_THRESHOLD "Detected %ld %s NvLink errors on GPU %u's NVLink which exceeds threshold of %u",
#: DCGM_FR_NVLINK_ERROR_CRITICAL "Detected %ld %s NvLink errors on GPU %u's NVLink (should be 0)",
#: DCGM_FR_NVLINK_CRC_ERROR_THRESHOLD "%.1f %s NvLink errors found occuring per second on GPU %u, exceeding the limit
#: of 100 per second." (%s: the counter's name, e.g. "CRC FLIT", "Replay", "Recovery")
_DCGM_NVLINK_ERRORS = re.compile(r"Detected (\d+) ([\w ]{1,40}?) NvLink errors on GPU (\d+)'s NVLink\s*(\(should be 0\)|which exceeds)"
                                 r"|([\d.]+) ([\w ]{1,40}?) NvLink errors found occur+ing per second on GPU (\d+)", re.I)
#: DCGM_FR_FIELD_THRESHOLD / DCGM_FR_PCIE_REPLAY_THRESHOLD_VIOLATION "Detected %ld %s for GPU %u which is above the
#: threshold %ld" (%s: the watched field's tag, dcgm_fields.cpp: "nvlink_recovery_error_count_total",
#: "nvlink_crc_flit_error_count_total", "pcie_replay_counter", ...): the NVLink counters are read here, the PCIe ones stay
#: gpu.pcie_link_errors (below)
_DCGM_FIELD = re.compile(r"Detected (\d+) (nvlink_\w+?)\s*for\s*GPU (\d+) which\s*is\s*above\s*the\s*threshold (\d+)", re.I)
#: ... and the PCIe counters of the same messages: DCGM_FR_PCIE_REPLAY_THRESHOLD_VIOLATION / DCGM_FR_FIELD_THRESHOLD on
#: "pcie_replay_counter" (DCGM_FI_DEV_PCIE_REPLAY_TOTAL) or "pcie_count_correctable_errors", and DCGM_FR_PCIE_REPLAY_VIOLATION
#: "Detected %ld %s for GPU %u" (nvvs DcgmRecorder.cpp: replays counted while a plugin ran, where none are allowed): link-level
#: retries of the GPU's PCIe link, what DCGM's own next step sends to a field diagnostic
_DCGM_PCIE_FIELD = re.compile(r"Detected (\d+) (pcie_replay_counter|pcie_count_correctable_errors)\s*for\s*GPU (\d+)"
                              r"(?:\s*which\s*is\s*above\s*the\s*threshold (\d+))?", re.I)
#: DCGM_FR_PCIE_GENERATION "GPU %u is running at PCI link generation %d, which is below the minimum allowed link
#: generation of %d (parameter '%s')"; DCGM_FR_PCIE_WIDTH "GPU %u is running at PCI link width %dX, which is below the
#: minimum allowed link generation of %d" (sic: "generation" in the width message too)
_DCGM_PCIE_LOW = re.compile(r"GPU (\d+) is running at PCI link (generation|width) (\d+)X?, which is below the minimum allowed", re.I)
#: DCGM_FR_XID_ERROR "Detected XID %u for GPU %u"
_DCGM_XID = re.compile(r"Detected XID (\d+) for GPU (\d+)", re.I)
#: DCGM_FR_NVLINK_EFFECTIVE_BER_THRESHOLD "Detected effective BER %.2e exceeds minimum threshold on GPU %u's NVLink."
_DCGM_BER = re.compile(r"Detected effective BER ([\d.eE+-]+) exceeds minimum threshold on GPU (\d+)'s NVLink", re.I)
#: DCGM_FR_FABRIC_MANAGER_TRAINING_ERROR "Fabric Manager (Cluster UUID: %s, Clique ID: %ld, Health Mask: %#lx): %s."
#: (nvvs Software.cpp: the GPU's fabric probe, "training not started" and the like) and DCGM_FR_FABRIC_PROBE_STATE
#: "GPU %u: Fabric State is %s (%lld)." (DcgmHealthWatch.cpp: "In Progress", "Not Started", "Failed", ...)
_DCGM_FM_TRAINING = re.compile(r"Fabric Manager \(Cluster UUID: [^,)]*, Clique ID: [^,)]*, Health Mask: [^)]*\): ([^.]+)\.", re.I)
_DCGM_FABRIC_STATE = re.compile(r"GPU (\d+): Fabric State is ([A-Za-z ]+?) \((\d+)\)", re.I)


def _nvlink_counter_key(name: str) -> str:
    """The fact of an NVLink counter DCGM names: replays and recoveries must stay zero (gpu.nvlink_replay_recovery), the
    others are errors over a threshold (gpu.nvlink_errors)."""
    return "gpu.nvlink_replay_recovery" if re.search(r"replay|recovery", name, re.I) else "gpu.nvlink_errors"


#: ``dcgmi nvlink --link-status`` (or ``-s``): "gpuId 0:" then one letter a link, "Key: Up=U, Down=D, Disabled=X,
#: Not Supported=_" (DCGM's dcgmi/Nvlink.cpp); NVSwitches as "physicalId N:" under "NvSwitches:"
#: (the owner's letters may follow on its own line: a paste that lost its line breaks, relined at "gpuId N:")
_DCGM_LINK_OWNER = re.compile(r"^(gpuId|physicalId)\s+(\d+)\s*:\s*((?:[UDX_]\s*)*)$")
_DCGM_LINK_STATES = re.compile(r"^(?:[UDX_]\s*)+$")


def parse_dcgm_link_status(c: Collector) -> bool:
    """Per GPU the links DCGM says are Down (D) among those it reports (U or D; X is disabled by configuration,
    _ not supported): gpu.nvlink_down; an NVSwitch's down links as the host's."""
    if "gpuId" not in c.paste.text and "physicalId" not in c.paste.text:
        return False
    lines = c.paste.lines
    found = False
    for no, line in enumerate(lines, 1):
        m = _DCGM_LINK_OWNER.match(line.strip())
        if not m:
            continue
        states: list[str] = m.group(3).split()
        k = no
        while k < len(lines) and _DCGM_LINK_STATES.match(lines[k].strip() or "-"):  # the letters may wrap
            states += lines[k].split()
            k += 1
        up, down = states.count("U"), states.count("D")
        if not up and not down:
            continue
        found = True
        if m.group(1) == "gpuId":
            c.add(f"gpu:{m.group(2)}", "gpu.nvlink_down", down, no + 1, severity="problem" if down else "ok",
                  summary=f"GPU {m.group(2)}: DCGM says {down} of {up + down} NVLinks down")
        elif down:
            c.add("host", "gpu.nvlink_down", down, no + 1, summary=f"NVSwitch {m.group(2)}: DCGM says {down} links down")
    if found:
        c.kind("dcgmi")
        c.tool("dcgmi", c.paste.first_line("NvLink Link Status", "gpuId"))
    return found


#: ``dcgmi nvlink -e -g N`` (dcgmi/Nvlink.cpp, GPUs before Blackwell): a box "NVLINK Error Counts" / "GPU N", then per link
#: "Link N" and its counters "-> CRC FLIT Error", "-> CRC Data Error", "-> Replay Error", "-> Recovery Error" (NvlinkDetail's
#: GetErrorCountType names). (Blackwell's "Error Detail" box of symbol and effective errors is not read here: DCGM judges
#: those by BER, whose own message is read above.)
_DCGM_NVLINK_E_GPU = re.compile(r"^\|\s*GPU (\d+)\s*\|\s*$")
_DCGM_NVLINK_E_ROW = re.compile(r"^\|\s*->\s*(CRC FLIT|CRC Data|Replay|Recovery) Error\s*\|\s*(\d+)\s*\|\s*$", re.I)


def parse_dcgm_nvlink_errors(c: Collector) -> bool:
    """``dcgmi nvlink -e``: per GPU the sum of its NVLink counters (gpu.nvlink_errors) and of those that must stay zero,
    replays and recoveries (gpu.nvlink_replay_recovery), as ``nvidia-smi nvlink -e`` gives them."""
    if "NVLINK Error Counts" not in c.paste.text:
        return False
    sums: dict[int, list[int]] = {}  # GPU -> [all counters, replay + recovery, first line]
    cur: Optional[int] = None
    for no, line in enumerate(c.paste.lines, 1):
        g = _DCGM_NVLINK_E_GPU.match(line.strip())
        if g is not None:
            cur = int(g.group(1))
            sums.setdefault(cur, [0, 0, no])
            continue
        r = _DCGM_NVLINK_E_ROW.match(line.strip()) if cur is not None else None
        if r is not None:
            n = int(r.group(2))
            sums[cur][0] += n
            if r.group(1).lower() in ("replay", "recovery"):
                sums[cur][1] += n
    for gpu, (total, faults, line) in sums.items():
        c.add(f"gpu:{gpu}", "gpu.nvlink_errors", total, line)
        c.add(f"gpu:{gpu}", "gpu.nvlink_replay_recovery", faults, line, severity="problem" if faults else "ok",
              summary=f"GPU {gpu}: DCGM counts {faults} NVLink replay/recovery errors" if faults else None)
    if sums:
        c.kind("dcgmi")
        c.tool("dcgmi", c.paste.first_line("NVLINK Error Counts"))
    return bool(sums)


def _dcgm_cells(lines: list[str]):
    """(line, text) of each right-hand cell of dcgmi's result table with the rows it wraps onto joined: dcgmi cuts a
    long message at the cell's width, mid-word ("... in a pee" / "r-to-peer test ..."), on rows whose left cell is empty."""
    cell, first = "", 0
    for no, line in enumerate(lines, 1):
        parts = line.rstrip().split("|")
        if len(parts) != 4 or parts[0].strip() or parts[3].strip():  # "| left | right |"
            if cell:
                yield first, cell
            cell, first = "", 0
            continue
        left, right = parts[1].strip(), parts[2][1:].rstrip() if parts[2].startswith(" ") else parts[2].rstrip()
        if left or not cell:
            if cell:
                yield first, cell
            cell, first = right, no
        else:
            cell += right
    if cell:
        yield first, cell


def parse(c: Collector) -> bool:
    """``dcgmi diag`` results and DCGM's messages: a failed P2P copy test is wrong data between GPUs, a
    failed PCIe/NVLink row of the result table an error line, an NVSwitch's NvLink down a link down."""
    text = c.paste.text
    low = text.lower()
    if "peer-to-peer test" not in low and "dcgm" not in low and "nvlink" not in low and "pci link" not in low \
            and "detected xid" not in low and "fabric state is" not in low and "cluster uuid" not in low \
            and "pcie_replay_counter" not in low and "pcie_count_correctable" not in low:
        return False
    found = parse_dcgm_link_status(c)
    found = parse_dcgm_nvlink_errors(c) or found
    down: dict[int, tuple[set, int]] = {}  # GPU -> (links DCGM says are down, first line)
    # each line, then each right-hand cell of dcgmi's tables with the rows it wraps onto joined (a message cut mid-word)
    cells: list[tuple[int, str]] = []
    if "|" in text:
        as_pasted = set(c.paste.lines)
        cells = [cell for cell in _dcgm_cells(c.paste.lines) if cell[1] not in as_pasted]
    for no, line in [*enumerate(c.paste.lines, 1), *cells]:
        for m in _DCGM_GPU_LINK_DOWN.finditer(line):
            down.setdefault(int(m.group(1)), (set(), no))[0].add(int(m.group(2)))
        e = _DCGM_EXPECTED_UP.search(line)
        if e and int(e.group(2)) > int(e.group(1)):
            found = True
            c.add("host", "gpu.nvlink_down", int(e.group(2)) - int(e.group(1)), no, severity="problem",
                  summary=f"DCGM: only {e.group(1)} NVLinks up of the {e.group(2)} expected")
        m = _DCGM_P2P.search(line)
        if m:
            found = True
            c.add("host", "tool.verification_error", True, no)
            c.add("host", "symptom.wrong_results", True, no)
            c.add("host", "error.text", line.strip()[:200], no)
            continue
        if _DCGM_NVLINK_DOWN.search(line):
            found = True
            c.add("host", "gpu.nvlink_down", 1, no, summary="DCGM: an NVSwitch's NvLink is down (at least one)")
            continue
        for m in _DCGM_NVLINK_ERRORS.finditer(line):
            found = True
            count, name, gpu = (m.group(1), m.group(2), m.group(3)) if m.group(1) else (m.group(5), m.group(6), m.group(7))
            n = max(1, round(float(count)))
            key = "gpu.nvlink_replay_recovery" if m.group(4) and m.group(4).startswith("(") else _nvlink_counter_key(name)
            c.add(f"gpu:{gpu}", key, n, no, severity="problem",
                  summary=f"GPU {gpu}: DCGM counted {count} {name.strip()} NvLink errors "
                          + ("(a counter that must stay zero)" if key.endswith("recovery") else "over its threshold"))
        for m in (_DCGM_FIELD.finditer(line) if "nvlink_" in line.lower() else ()):
            found = True
            count, tag, gpu = m.group(1), m.group(2), m.group(3)
            key = _nvlink_counter_key(tag)
            c.add(f"gpu:{gpu}", key, max(1, int(count)), no, severity="problem",
                  summary=f"GPU {gpu}: DCGM counted {count} {tag}, above its threshold {m.group(4)}")
        for m in (_DCGM_PCIE_FIELD.finditer(line) if "pcie_" in line.lower() else ()):
            found = True
            count, tag, gpu, limit = m.groups()
            if int(count) > 0:
                c.add(f"gpu:{gpu}", "gpu.pcie_link_errors", int(count), no, severity="problem",
                      summary=f"GPU {gpu}: DCGM counted {count} {tag}" + (f", above its threshold {limit}" if limit else " during the test"))
        for m in _DCGM_PCIE_LOW.finditer(line):
            found = True
            gpu, what, value = m.group(1), m.group(2).lower(), int(m.group(3))
            c.add(f"gpu:{gpu}", "gpu.pcie_gen_cur" if what == "generation" else "gpu.pcie_width_cur", value, no)
            c.add(f"gpu:{gpu}", "gpu.pcie_degraded_under_load", True, no, severity="problem",
                  summary=f"GPU {gpu}: DCGM's PCIe test saw link {what} {value}, below its minimum, while loading the link")
        for m in _DCGM_XID.finditer(line):
            found = True
            code, gpu = int(m.group(1)), m.group(2)
            c.add("host", "host.xid_codes", str(code), no, severity="problem")
            c.add("host", "host.xid_latest", code, no, severity="problem")
            if code == 79:
                c.add(f"gpu:{gpu}", "gpu.lost", True, no, severity="problem")
            if code in CRASH_XIDS:
                c.add("host", "symptom.crash", True, no)
        for m in (_DCGM_BER.finditer(line) if "BER" in line else ()):
            found = True
            c.add(f"gpu:{m.group(2)}", "gpu.nvlink_errors", 1, no, severity="problem",
                  summary=f"GPU {m.group(2)}: DCGM measured an NVLink effective bit error rate of {m.group(1)}, over its threshold")
        m = _DCGM_FM_TRAINING.search(line) if "Cluster UUID" in line else None
        if m:
            found = True
            state = "not running" if re.search(r"not started", m.group(1), re.I) else "failed"
            c.add("host", "host.nvswitch_present", True, no, severity="info")
            c.add("host", "host.fabric_manager", state, no, severity="problem",
                  summary=f"DCGM: the GPU's NVLink fabric training: {m.group(1).strip()}")
        m = _DCGM_FABRIC_STATE.search(line) if "Fabric State" in line else None
        if m:
            found = True
            said = m.group(2).strip().lower()
            c.add("host", "host.nvswitch_present", True, no, severity="info")
            if said in ("not started", "in progress"):
                c.add(f"gpu:{m.group(1)}", "gpu.fabric_state", said.upper().replace(" ", "_"), no, severity="problem",
                      summary=f"GPU {m.group(1)}: DCGM says its fabric state is {m.group(2).strip()}")
            elif said == "failed":
                c.add("host", "host.fabric_manager", "failed", no, severity="problem",
                      summary=f"GPU {m.group(1)}: DCGM says the fabric training failed")
        r = _DCGM_ROW.match(line.strip())
        if r:
            found = True
            c.add("host", "error.text", f"dcgmi diag {r.group(1)}: {r.group(2).strip()}"[:200], no)
    if not c.has("host", "tool.verification_error") and "|" in text:
        for no, cell in _dcgm_cells(c.paste.lines):
            if _DCGM_P2P.search(cell):  # a P2P failure message the table wrapped over several rows
                found = True
                c.add("host", "tool.verification_error", True, no)
                c.add("host", "symptom.wrong_results", True, no)
                c.add("host", "error.text", cell.strip()[:200], no)
                break
    for g, (links, no) in sorted(down.items()):
        found = True
        c.add(f"gpu:{g}", "gpu.nvlink_down", len(links), no, severity="problem",
              summary=f"GPU {g}: DCGM says NVLink link(s) {', '.join(map(str, sorted(links)))} down")
    if down and not c.has("host", "host.nvlink_inactive_maybe_by_design"):
        # DCGM reports every link of a GPU whose NVLinks carry nothing as down, also on PCIe cards without a bridge or
        # without NVLink at all (NVIDIA/DCGM#49, NVIDIA/NVSentinel#1481): where the paste does not name the GPUs as
        # parts whose links are always wired (SXM, or a model with NVLink that is no PCIe card), it may be no fault
        names = [c.get(f"gpu:{g}", "gpu.name") or c.get("host", "gpu.name") for g in down]
        if any(not n or no_nvlink_hardware(n) or re.search(r"PCIe|\bNVL\b", n, re.I) for n in names):
            c.add("host", "host.nvlink_inactive_maybe_by_design", True, min(no for _l, no in down.values()), severity="info",
                  summary="DCGM says NVLinks are down on GPUs the paste does not show to have wired NVLinks "
                          "(DCGM reports them down on PCIe cards without a bridge)")
    if found:
        c.kind("dcgmi")
        c.tool("dcgmi", c.paste.first_line("peer-to-peer test", "NvLink", "| PCIe", "Fail"))
    return found
