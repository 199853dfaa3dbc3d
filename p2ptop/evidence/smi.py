"""``nvidia-smi`` (the table), ``nvidia-smi -q`` (text and ``-x`` XML, also truncated),
``nvidia-smi nvlink -s`` / ``-e`` (inactive links that a bridged PCIe card leaves unused by design are not
down: ``BRIDGED_SPARE_LINKS``), ``nvidia-smi -L``, and nvtop's device lines (name, PCIe link now).

Facts: host.driver_version, host.driver_major, host.cuda_driver_version, host.gpu_count,
gpu.name, gpu.consumer, gpu.product_class, gpu.architecture, gpu.mig, gpu.virtualization,
host.virtualized (virtualization mode not None), gpu.pcie_gen_cur/max, gpu.pcie_width_cur/max,
gpu.fabric_state, gpu.fabric_status, gpu.bar1_mb, gpu.pstate and gpu.utilization (-q "Performance State", Utilization
"Gpu", the CSV's pstate and utilization.gpu: whether the link was read under load), gpu.nvlink_down, gpu.nvlink_errors,
gpu.nvlink_replay_recovery; error.text for nvidia-smi's own failures ("No devices were found", with
host.gpu_count 0; "couldn't communicate with the NVIDIA driver"; ERR! in the table). Bus ids are noted
so other outputs of the paste map to GPU indices.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from .gpus import classify, no_nvlink_hardware, nvswitch_board_note
from .paste import Q_SECTIONS, Collector, norm_bus

_VERSIONS = re.compile(r"(?:Driver Version|KMD Version)\s*:\s*(\d+\.\d+(?:\.\d+)?)|(?:CUDA Version|CUDA UMD Version)\s*:\s*(\d+\.\d+)")
#: a GPU row of the table (multi-line: a search finds one anywhere in a paste; its rows alone, without the title or the
#: header, are the table all the same: a ticket quotes the two GPU lines that matter)
_TABLE_GPU = re.compile(r"^\|\s+(\d+)\s+(.+?)\s+(On|Off)\s+\|\s+([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d)\s", re.M)
TABLE_SCAN = 500_000  # characters searched for a GPU row where the paste has no title or header
_TAG = re.compile(r"<(/?)([a-zA-Z_][\w]*)((?:\s+[\w:-]+=\"[^\"]*\")*)\s*(/?)>([^<]*)")
_VIRT = {"none": "NONE", "pass-through": "PASSTHROUGH", "passthrough": "PASSTHROUGH", "vgpu": "VGPU",
         "host vgpu": "HOST_VGPU", "host_vgpu": "HOST_VGPU", "host vsga": "HOST_VSGA"}
_FABRIC = {"completed": "COMPLETED", "in progress": "IN_PROGRESS", "not started": "NOT_STARTED",
           "not supported": "NOT_SUPPORTED", "n/a": "NOT_SUPPORTED"}
#: NVIDIA vGPU profile names as a guest's nvidia-smi prints them ("GRID A100-20C", "NVIDIA A40-48Q", "T4-16Q")
_VGPU_PROFILE = re.compile(r"\b[A-Z]{1,2}\d{1,3}[A-Z]?-\d{1,3}[CQAB]\b")
#: nvidia-smi's lines that state no trouble of a report, as prose reads them (lower case): nvlink -c's capabilities
#: ("Link 0, P2P is supported: true")
PLAIN_LINES = r"^\s*link \d+, [\w ]+ supported: (?:true|false)\s*$"
_NVLINK_GPU = re.compile(r"^GPU (\d+): (.+?)(?: \(UUID: ([^)]+)\))?\s*$")
_NVLINK_LINK = re.compile(r"^\s*Link (\d+): (.*)$")


def _int(s: Optional[str]) -> Optional[int]:
    m = re.match(r"\s*(\d+)", s or "")
    return int(m.group(1)) if m else None


def _gpu_facts(c: Collector, idx: int, g: dict[str, Any]) -> None:
    subj = f"gpu:{idx}"
    line = g.get("_line", 1)
    lines = g.get("_lines", {})
    if g.get("bus_id"):
        c.note_bus(g["bus_id"], idx)
    name = g.get("name")
    if name:
        c.add(subj, "gpu.name", name, lines.get("name", line))
        cls, arch = classify(name)
        if cls:
            c.add(subj, "gpu.product_class", cls, lines.get("name", line))
            c.add(subj, "gpu.consumer", cls == "consumer", lines.get("name", line))
        c.add(subj, "gpu.architecture", g.get("architecture") or arch, lines.get("architecture", lines.get("name", line)))
        board = nvswitch_board_note(name)
        if board:
            c.add("host", "host.nvswitch_present", True, lines.get("name", line), severity="info", summary=board)
    for key in ("pcie_gen_cur", "pcie_gen_max", "pcie_width_cur", "pcie_width_max", "fabric_state", "fabric_status", "bar1_mb"):
        if g.get(key) is not None:
            c.add(subj, f"gpu.{key}", g[key], lines.get(key, line))
    if str(g.get("fabric_state") or "").upper() in ("COMPLETED", "IN_PROGRESS", "NOT_STARTED"):
        # nvidia-smi's Fabric State is the GPU's registration with the NVSwitch fabric (Fabric Manager's probe): a state
        # other than Not Supported / N/A says the GPU sits on such a fabric
        c.add("host", "host.nvswitch_present", True, lines.get("fabric_state", line), severity="info",
              summary="nvidia-smi -q shows a fabric registration state: the GPUs sit on an NVSwitch fabric")
    if g.get("mig") is not None:
        c.add(subj, "gpu.mig", g["mig"], lines.get("mig", line))
    for key in ("pstate", "utilization"):
        if g.get(key) is not None:
            c.add(subj, f"gpu.{key}", g[key], lines.get(key, line), severity="info")
    v = g.get("virtualization")
    if not v and name and _VGPU_PROFILE.search(name):  # a vGPU profile name: the guest of a VM sees a mediated GPU
        v = g["virtualization"] = "VGPU"
    if v:
        c.add(subj, "gpu.virtualization", v, lines.get("virtualization", line))
        if v != "NONE":
            c.add("host", "host.virtualized", True, lines.get("virtualization", line))


def _versions(c: Collector, driver: Optional[str], dline: int, cuda: Optional[str], cline: int) -> None:
    if driver:
        c.add("host", "host.driver_version", driver, dline)
        c.add("host", "host.driver_major", int(driver.split(".")[0]), dline)
    if cuda:
        c.add("host", "host.cuda_driver_version", cuda, cline)


def parse_xml(c: Collector) -> bool:
    text = c.paste.text
    start = text.find("<nvidia_smi_log")
    if start < 0:
        return False
    c.kind("nvidia-smi-q")
    c.tool("nvidia-smi-q", c.paste.line_of(start))
    gpus: list[dict[str, Any]] = []
    host: dict[str, Any] = {}
    stack: list[str] = []
    cur: Optional[dict[str, Any]] = None
    for m in _TAG.finditer(text, start):
        close, tag, attrs, selfclose, body = m.groups()
        if close:
            if tag in stack:
                while stack and stack.pop() != tag:
                    pass
            if tag == "gpu" and cur is not None:
                cur = None
            if tag == "nvidia_smi_log":
                break
            continue
        ln = c.paste.line_of(m.start())
        if tag == "gpu" and "id=" in attrs:
            bus = re.search(r'id="([^"]+)"', attrs)
            cur = {"bus_id": norm_bus(bus.group(1)) if bus else None, "_line": ln, "_lines": {}}
            gpus.append(cur)
        if not selfclose:
            stack.append(tag)
        val = body.strip()
        if not val:
            continue
        parent = stack[-2] if len(stack) > 1 else ""
        if cur is None:
            if tag == "driver_version":
                host["driver"], host["dline"] = val, ln
            elif tag == "cuda_version":
                host["cuda"], host["cline"] = val, ln
            continue
        key = None
        if tag == "product_name":
            key, v = "name", val
        elif tag == "product_architecture":
            key, v = "architecture", val
        elif tag == "uuid":
            key, v = "uuid", val
        elif tag == "minor_number":
            key, v = "minor", _int(val)
        elif tag == "current_mig":
            key, v = "mig", val.lower() == "enabled" if val.lower() in ("enabled", "disabled") else None
        elif tag == "virtualization_mode":
            key, v = "virtualization", _VIRT.get(val.lower(), val.upper())
        elif tag == "max_link_gen" and parent == "pcie_gen":
            key, v = "pcie_gen_max", _int(val)
        elif tag == "current_link_gen" and parent == "pcie_gen":
            key, v = "pcie_gen_cur", _int(val)
        elif tag == "max_link_width":
            key, v = "pcie_width_max", _int(val)
        elif tag == "current_link_width":
            key, v = "pcie_width_cur", _int(val)
        elif tag == "total" and parent == "bar1_memory_usage":
            key, v = "bar1_mb", _int(val)
        elif tag == "total" and parent == "fb_memory_usage":
            key, v = "memory_total_mib", _int(val)
        elif tag == "state" and parent == "fabric":
            key, v = "fabric_state", _FABRIC.get(val.lower(), val.upper())
        elif tag == "status" and parent == "fabric":
            key, v = "fabric_status", val
        elif tag == "performance_state":
            key, v = "pstate", val.upper()
        elif tag == "gpu_util" and parent == "utilization":
            key, v = "utilization", _int(val)
        elif tag == "numa_id" or tag == "gpu_numa_id":
            key, v = "gpu_numa", _int(val)
        if key and v is not None and key not in cur and (val.upper() not in ("N/A", "[N/A]") or key == "fabric_state"):
            cur[key] = v
            cur["_lines"][key] = ln
    _versions(c, host.get("driver"), host.get("dline", 1), host.get("cuda"), host.get("cline", 1))
    for i, g in enumerate(gpus):
        _gpu_facts(c, i, g)
    if gpus:
        c.add("host", "host.gpu_count", len(gpus), gpus[0]["_line"])
    c.structured.setdefault("smi_q", {"host": host, "gpus": gpus})
    return True


_Q_FIELD = re.compile(r"^\s*[A-Za-z][\w /().,+-]*?\s+:(?:\s|$)")
#: a field aligned as nvidia-smi aligns them: the label, two spaces or more, the colon (the match ends on it)
_Q_ALIGNED = re.compile(r"^\s*[A-Za-z][\w /().,+-]*?\s{2,}:(?=\s|$)")
#: where -q starts: a GPU's header, or an aligned field (in any case: a paste may be lower-cased)
_Q_START = re.compile(r"\s*GPU [0-9A-F]{4,8}:|" + _Q_ALIGNED.pattern, re.I)
_Q_GPU = re.compile(r"\s*GPU [0-9A-F]{4,8}:", re.I)


def q_own_lines(lines: list[str]) -> set[int]:
    """The numbers of the lines that are -q's own, from the first GPU header or field aligned as nvidia-smi aligns them
    (two spaces or more before the colon) to the last field: each field ("    HW Slowdown          : Not Active"), each
    GPU header, and each section title whose next line is a field or a title of its own indented deeper ("    MIG Mode",
    "    ECC Errors" above "        Volatile"; any, where the paste lost -q's nesting: :func:`_flattened`). The readers
    of sentences skip them (prose.parse, and the matcher's never-silent gate, prose.trouble_said, on its folded lower-case
    lines, where only the GPU header starts -q): a tool's labels are not the report's words (a healthy H200's -q read
    "HW Slowdown : Not Active" as slowness and "MIG Mode" as MIG in use)."""
    own: set[int] = set()
    shown = [(no, raw) for no, raw in enumerate(lines, 1) if raw.strip()]
    start = next((i for i, (_no, raw) in enumerate(shown) if _Q_START.match(raw)), None)
    if start is None:
        return own
    flat = _flattened(lines)
    end = max((i for i in range(start, len(shown)) if _Q_FIELD.match(shown[i][1])), default=start)
    for i in range(end, start - 1, -1):  # from the last: a title is known by what follows it
        no, raw = shown[i]
        if _Q_FIELD.match(raw) or _Q_GPU.match(raw):
            own.add(no)
        elif ":" not in raw and len(raw.strip()) <= 40 and i < end and shown[i + 1][0] in own:
            nxt = shown[i + 1][1]
            if flat or len(nxt) - len(nxt.lstrip()) > len(raw) - len(raw.lstrip()):
                own.add(no)
    return own


#: nvidia-smi -q pads every field's label to one width, whatever its section's indent: each colon of one output sits at one
#: column (55 on a 580 driver, 38 to 42 on older ones), further right than a writer aligns a list of "Key : value" lines
Q_COLON_MIN = 36


def q_excerpt(lines: list[str]) -> bool:
    """Is the paste an excerpt of ``nvidia-smi -q`` that its reader may not have read (a grep for labels, "nvidia-smi -q |
    grep -i slowdown", without the GPU header and without a section it reads): three or more fields, each colon at one
    column from Q_COLON_MIN on, that make half of its non-blank lines or more? Its lines are then the tool's, not the
    report's words ("HW Slowdown : Not Active", "GPU Slowdown Temp : 87 C")."""
    shown = [raw for raw in lines if raw.strip()]
    cols = [m.end() - 1 for raw in shown if (m := _Q_ALIGNED.match(raw))]
    return len(cols) >= 3 and 2 * len(cols) >= len(shown) and len(set(cols)) == 1 and cols[0] >= Q_COLON_MIN


def q_lines_of_paste(lines: list[str], read: Optional[bool] = None) -> set[int]:
    """-q's own lines (:func:`q_own_lines`) where the paste is -q's: its reader read it (``read``: prose.parse knows; the
    never-silent gate, prose.trouble_said, does not and takes -q's GPU header, "GPU 00000000:18:00.0", for it), or it is
    an excerpt (:func:`q_excerpt`); none in a writer's text that aligns a few "Key   : value" lines."""
    headed = read if read is not None else any(_Q_GPU.match(raw) for raw in lines)
    return q_own_lines(lines) if headed or q_excerpt(lines) else set()


def _flattened(lines: list[str]) -> bool:
    """Has the paste lost -q's nesting: no field ("Key : Value") indented deeper than the section title before it, where
    nvidia-smi indents every field under its title (a web page that collapsed runs of spaces, a viewer that trimmed
    each line's start)? Only with two titles or more followed by a field."""
    title, titled, deeper = None, 0, False
    for raw in lines:
        line = raw.strip()
        if not line or line == "--" or line.startswith("="):  # grep's separator, "====NVSMI LOG===="
            continue
        indent = len(raw) - len(raw.lstrip())
        key, colon, value = line.partition(":")
        if _Q_GPU.match(line):
            title = None  # a GPU's header: its fields are a level of their own, below no title
            continue
        if not colon or not value.strip():
            if not colon and len(line) > 40:
                continue  # a sentence, no title
            title = indent
            continue
        if title is not None:
            titled += 1
            deeper = deeper or indent > title
    return titled >= 2 and not deeper


def parse_q_text(c: Collector) -> bool:
    """``nvidia-smi -q`` as text: "Attached GPUs", "GPU 00000000:3B:00.0" sections of "Key : Value"; also a grep'd
    excerpt without the GPU headers, where grep's "--" separator or the same field met again starts the next GPU."""
    text = c.paste.text
    if not any(k in text for k in ("Attached GPUs", "Product Name", "GPU UUID") + Q_SECTIONS):
        return False
    gpus: list[dict[str, Any]] = []
    host: dict[str, Any] = {}
    cur: Optional[dict[str, Any]] = None
    section: list[tuple[int, str]] = []  # (indent, title)
    flat = _flattened(c.paste.lines)
    for no, raw in enumerate(c.paste.lines, 1):
        if not raw.strip():
            continue
        indent = len(raw) - len(raw.lstrip())
        line = raw.strip()
        if flat:  # every line at one indent: a title holds the fields after it, up to the next title
            indent = 0 if ":" not in line or not line.partition(":")[2].strip() else 1
        m = re.match(r"^GPU ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.\d)\s*$", line)
        if m:
            cur = {"bus_id": norm_bus(m.group(1)), "_line": no, "_lines": {}, "_headed": True}
            gpus.append(cur)
            section = []
            continue
        if line == "--" and cur is not None and not cur.get("_headed"):
            cur = None  # grep -A/-B's separator between the matches of two GPUs' sections
            section = []
            continue
        while section and section[-1][0] >= indent:
            section.pop()
        if ":" not in line:
            section.append((indent, line))
            continue
        k, _, v = line.partition(":")
        k, v = k.strip(), v.strip()
        if not v:
            section.append((indent, k))
            continue
        titles = [t for _, t in section]
        if cur is None and (k in ("Product Name", "GPU UUID", "Minor Number", "Virtualization Mode", "Product Architecture",
                                  "Performance State")
                            or any(t in Q_SECTIONS for t in titles)):
            cur = {"bus_id": None, "_line": no, "_lines": {}}  # a GPU section whose header the paste cut off
            gpus.append(cur)
        if k == "Attached GPUs" and _int(v):
            host["attached"], host["aline"] = _int(v), no  # the count nvidia-smi -q says, though a paste may cut after one GPU
        if cur is None:
            if k == "Driver Version":
                host["driver"], host["dline"] = v, no
            elif k == "CUDA Version":
                host["cuda"], host["cline"] = v, no
            continue
        key, val = None, None
        if k == "Product Name":
            key, val = "name", v
        elif k == "Product Architecture":
            key, val = "architecture", v
        elif k == "GPU UUID":
            key, val = "uuid", v
        elif k == "Current" and "MIG Mode" in titles:
            key, val = "mig", v.lower() == "enabled" if v.lower() in ("enabled", "disabled") else None
        elif k == "Virtualization Mode":
            key, val = "virtualization", _VIRT.get(v.lower(), v.upper())
        elif "PCIe Generation" in titles and k in ("Max", "Current"):
            key, val = ("pcie_gen_max" if k == "Max" else "pcie_gen_cur"), _int(v)
        elif "Link Width" in titles and k in ("Max", "Current"):
            key, val = ("pcie_width_max" if k == "Max" else "pcie_width_cur"), _int(v)
        elif k == "Total" and any("BAR1" in t for t in titles):
            key, val = "bar1_mb", _int(v)
        elif k == "Total" and any("FB Memory" in t for t in titles):
            key, val = "memory_total_mib", _int(v)
        elif k == "Performance State":
            key, val = "pstate", v.upper()
        elif k == "Gpu" and "Utilization" in titles:
            key, val = "utilization", _int(v)
        elif k == "State" and "Fabric" in titles:
            key, val = "fabric_state", _FABRIC.get(v.lower(), v.upper())
        elif k == "Status" and "Fabric" in titles:
            key, val = "fabric_status", v
        if key and val is not None and key in cur and not cur.get("_headed"):
            # the same field again in an excerpt without GPU headers ("nvidia-smi -q | grep -A3 Fabric" without
            # grep's separator): the next GPU's section
            cur = {"bus_id": None, "_line": no, "_lines": {}}
            gpus.append(cur)
        if key and val is not None and key not in cur and (v.upper() not in ("N/A", "[N/A]") or key == "fabric_state"):
            cur[key] = val
            cur["_lines"][key] = no
    if not gpus:
        return False
    c.kind("nvidia-smi-q")
    c.tool("nvidia-smi-q", gpus[0]["_line"])
    _versions(c, host.get("driver"), host.get("dline", 1), host.get("cuda"), host.get("cline", 1))
    for i, g in enumerate(gpus):
        _gpu_facts(c, i, g)
    if host.get("attached"):
        c.add("host", "host.gpu_count", max(host["attached"], len(gpus)), host["aline"])
    if all(g.get("_headed") for g in gpus):  # a grep'd section without its "GPU 0000:.." header says no count
        c.add("host", "host.gpu_count", len(gpus), gpus[0]["_line"])
    c.structured.setdefault("smi_q", {"host": host, "gpus": gpus})
    return True


def parse_table(c: Collector) -> bool:
    """The ``nvidia-smi`` table: versions in its title, a row per GPU with name and bus id, MIG M."""
    text = c.paste.text
    if "NVIDIA-SMI" not in text and "Bus-Id" not in text and not ("| " in text and _TABLE_GPU.search(text, 0, TABLE_SCAN)):
        return False
    found = False
    lines = c.paste.lines
    gpus = first_row = 0
    for no, line in enumerate(lines, 1):
        if "NVIDIA-SMI" in line or "Driver Version" in line or "KMD Version" in line:
            d = cu = None
            for m in _VERSIONS.finditer(line):
                d = d or m.group(1)
                cu = cu or m.group(2)
            if d or cu:
                found = True
                _versions(c, d, no, cu, no)
            continue
        m = _TABLE_GPU.match(line)
        if m:
            found = True
            idx, name, bus = int(m.group(1)), m.group(2).strip(), m.group(4)
            gpus = max(gpus, idx + 1)
            first_row = first_row or no
            g: dict[str, Any] = {"name": name, "bus_id": norm_bus(bus), "_line": no, "_lines": {}}
            for k in (1, 2):  # MIG M. is the last cell of the GPU's second or third line
                nxt = lines[no - 1 + k] if no - 1 + k < len(lines) else ""
                cells = [x.strip() for x in nxt.split("|") if x.strip()]
                if cells and cells[-1].split()[-1:] and cells[-1].split()[-1] in ("Enabled", "Disabled"):
                    g["mig"] = cells[-1].split()[-1] == "Enabled"
                    g["_lines"]["mig"] = no + k
            _gpu_facts(c, idx, g)
            c.structured.setdefault("smi_table", []).append({"index": idx, "name": name, "bus_id": norm_bus(bus)})
    if found:
        c.kind("nvidia-smi")
        if gpus:
            c.add("host", "host.gpu_count", gpus, first_row)  # the rows count the GPUs (the first row is where they begin)
    return found


#: PCIe cards whose NVLink bridges use fewer links than the chip has: H100 PCIe and H100 NVL bridge pairs at 600 GB/s
#: (NVIDIA's H100 PCIe / H100 NVL product briefs), 12 NVLink 4 links of 50 GB/s, of the GH100's 18 (900 GB/s on
#: SXM5). Up to 6 inactive links of 18 on such a card are unused links, not a fault; all 18 down is no bridge or
#: a failed one. (regex on the name, links the chip has, links the bridges leave unused)
BRIDGED_SPARE_LINKS = (re.compile(r"\bH100\b.*\b(?:NVL|PCIe)\b", re.I), 6)
_BRIDGED_CHIP_LINKS = 18


def bridged_spare_links(name: Optional[str], links: int, down: int) -> bool:
    """Are ``down`` inactive links of ``links`` the ones a bridged PCIe card leaves unused by design? (A paste cut
    before the last link lines still shows more than 12 links: the chip's 18.)"""
    rx, spare = BRIDGED_SPARE_LINKS
    return bool(name and rx.search(name)) and 12 < links <= _BRIDGED_CHIP_LINKS and 0 < down <= spare


#: the links an H100 PCIe / H100 NVL card leaves unused with its three NVLink bridges (each bridge joins four links:
#: 0-3, 6-9, 12-15): the same six links read <inactive> on bridged pairs in NVIDIA/nccl#1608 (H100 NVL), HPE's
#: DL380a H100 PCIe notes and Azure's NCv5 health-check report (NHC's "Link 4: Inactive ... Link 16: Inactive").
#: Four or more inactive links, all of them among these six, on a GPU with more than 12 links are that layout.
BRIDGE_SPARE_IDS = frozenset({4, 5, 10, 11, 16, 17})
#: Azure HPC's node health check (azurehpc-health-checks customTests/azure_gpu_nvlink.nhc): "check_nvlink_status: GPU
#: 0 has nvlinks inactive: Link 4: Inactive Link 5: Inactive ..." (the links of nvidia-smi nvlink -s that read
#: <inactive>, rewritten), "GPU 0 has all nvlinks inactive"
_NHC_NVLINK = re.compile(r"\bGPU (\d+) has (all )?nvlinks inactive\b:?(.*)$", re.I)
_NHC_LINK = re.compile(r"\bLink (\d+): Inactive\b", re.I)


#: cards whose NVLinks are bridges fitted or not (NVIDIA's PCIe products: H100/A100 PCIe, H100 NVL, A40, A30, RTX A6000,
#: GeForce RTX 3090, Quadro RTX): with no bridge every link reads inactive, as NVIDIA/DCGM#49 and NVSentinel#1481 show
_BRIDGE_CARD = re.compile(r"PCIe|\bNVL\b|\bA40\b|\bA30\b|RTX\s*A\d{4}|RTX\s*[68]000\b|RTX\s*3090|RTX\s*20[78]0|TITAN\s*RTX|Quadro", re.I)


#: a bridge the paste names, on its lower-cased text: not the PCIe bridges of nvidia-smi topo -m's legend ("a PCIe Host
#: Bridge", "multiple PCIe bridges", "a single PCIe bridge") nor lspci's ("PCI bridge", "Host bridge", "PCI-to-PCI bridge")
_BRIDGE_SAID = re.compile(r"(?<!host )(?<!pcie )(?<!pci )(?<!pci-to-pci )(?<!pci-e )\bbridge")


def _maybe_by_design(stats: dict[int, dict[str, Any]], gpu_count: Any, bridge_said: bool = False) -> Optional[str]:
    """Why the inactive links of this paste may be links the board does not wire (None unless every GPU with inactive
    links has such a reason): a two-GPU host whose two GPUs of one model each show some links up and the same number up
    (on two GPUs every link joins the pair, so how many the board wires is not in the paste: a board of two SXM2 V100s
    wires two of six); the inactive links of an 18-link GPU forming the bridged H100 PCIe/NVL layout (BRIDGE_SPARE_IDS);
    every link inactive on a card whose NVLinks are optional bridges (_BRIDGE_CARD: no bridge fitted), unless the
    paste names a bridge (one is fitted: all links down is its fault)."""
    why: dict[int, str] = {}
    for g, s in stats.items():
        ids = set(s.get("down_ids", ()))
        if len(ids) >= 4 and ids <= BRIDGE_SPARE_IDS and (s.get("nhc") or s["links"] > 12):
            why[g] = f"GPU {g}: links {', '.join(map(str, sorted(ids)))} inactive, the links a bridged H100 PCIe/NVL leaves unused"
        elif (s.get("all_inactive") or (s["links"] and s["down"] == s["links"] and not s.get("nhc"))) \
                and s["name"] and _BRIDGE_CARD.search(s["name"]) and not bridge_said:
            why[g] = f"GPU {g}: every NVLink of a {s['name']} inactive: no NVLink bridge fitted, or a failed one"
    if set(stats) == {0, 1} and not (isinstance(gpu_count, int) and gpu_count > 2):
        a, b = stats[0], stats[1]
        if not any(s.get("nhc") or s.get("all_inactive") or not (0 < s["down"] < s["links"]) for s in (a, b)) \
                and a["name"] == b["name"] and a["links"] - a["down"] == b["links"] - b["down"]:
            return (f"two GPUs, each with {a['links'] - a['down']} of {a['links']} NVLinks up: on a two-GPU board every "
                    "link joins the pair, and boards may wire fewer links than the chip has")
    faulty = [g for g, s in stats.items() if s["down"] or s.get("all_inactive")]
    if faulty and all(g in why for g in faulty):
        return why[faulty[0]]
    return None


#: what nvidia-smi nvlink -s prints under a GPU none of whose links is up ("NVML: Unable to retrieve NVLink information
#: as all links are inActive"): on a GPU without NVLink hardware that is every day, on an SXM part a fault
_ALL_INACTIVE = re.compile(r"Unable to retrieve NVLink information as all links are inactive", re.I)


def parse_nvlink(c: Collector) -> bool:
    """``nvidia-smi nvlink -s`` (speed per link, "<inactive>") and ``-e`` (error counters)."""
    if "Link 0:" not in c.paste.text and "Link 0 :" not in c.paste.text and \
            "all links are inactive" not in c.paste.plain and "nvlinks inactive" not in c.paste.plain:
        return False  # (plain: lower case; a case-blind regex on 20 MB took 0.2 s)
    cur: Optional[int] = None
    cur_line = 0
    stats: dict[int, dict[str, Any]] = {}
    for no, line in enumerate(c.paste.lines, 1):
        m = _NVLINK_GPU.match(line.strip())
        if m and m.group(1).isdigit():
            cur, cur_line = int(m.group(1)), no
            stats[cur] = {"line": no, "down": 0, "links": 0, "errors": 0, "replay_recovery": 0, "name": m.group(2)}
            continue
        h = _NHC_NVLINK.search(line)
        if h:
            cur, cur_line = int(h.group(1)), no
            s = stats.setdefault(cur, {"line": no, "down": 0, "links": 0, "errors": 0, "replay_recovery": 0, "name": None})
            s["nhc"] = True
            if h.group(2):
                s["all_inactive"] = no
            for k in _NHC_LINK.finditer(h.group(3)):
                s["down"] += 1
                s["links"] += 1
                s.setdefault("down_line", no)
                s.setdefault("down_ids", []).append(int(k.group(1)))
            continue
        if cur is None:
            continue
        if _ALL_INACTIVE.search(line):
            stats[cur]["all_inactive"] = no
            continue
        lm = _NVLINK_LINK.match(line)
        if not lm:
            continue
        rest = lm.group(2).strip()
        s = stats[cur]
        if "inactive" in rest.lower() or rest.lower() in ("<inactive>", "inactive"):
            s["down"] += 1
            s["links"] += 1
            s.setdefault("down_line", no)
            s.setdefault("down_ids", []).append(int(lm.group(1)))
        elif re.match(r"^[\d.]+ GB/s", rest):
            s["links"] += 1
        em = re.match(r"^(Replay|Recovery|CRC|CRC Data|CRC Flit)[\w ]*?Errors?\s*:\s*(\d+)", rest, re.I)
        if em:
            n = int(em.group(2))
            s["errors"] += n
            if em.group(1).lower() in ("replay", "recovery"):
                s["replay_recovery"] += n
            s["counters"] = True
    if not stats:
        return False
    c.kind("nvidia-smi-nvlink")
    spare = [g for g, s in stats.items() if s["links"] and s["down"] and bridged_spare_links(s["name"], s["links"], s["down"])]
    spare += [g for g, s in stats.items() if s.get("all_inactive") and no_nvlink_hardware(s["name"])]
    for g in spare:
        if stats[g].get("all_inactive"):
            c.add(f"gpu:{g}", "gpu.nvlink_down", 0, stats[g]["all_inactive"], severity="ok",
                  summary=f"GPU {g}: {stats[g]['name']} has no NVLink: 'all links are inActive' is what it always prints")
    if spare and all(g in spare for g, s in stats.items() if s["down"] or s.get("all_inactive")):
        # every "<inactive>" line of the paste is a link the card's bridges leave unused, or the GPU has no NVLink at
        # all: the lines are no symptom
        first = stats[spare[0]]
        c.add("host", "host.nvlink_inactive_by_design", True, first.get("down_line", first.get("all_inactive", first["line"])),
              severity="ok", summary="the inactive NVLinks are by design (links an H100 NVL/PCIe bridge leaves unused, or a GPU without NVLink)")
    why = None if c.has("host", "host.nvlink_inactive_by_design") else \
        _maybe_by_design(stats, c.get("host", "host.gpu_count"), bool(_BRIDGE_SAID.search(c.paste.plain)))
    if why:
        first = min(s.get("down_line", s["line"]) for s in stats.values())
        c.add("host", "host.nvlink_inactive_maybe_by_design", True, first, severity="info",
              summary=f"the inactive NVLinks may be links the board does not wire ({why})")
    for g, s in stats.items():
        subj = f"gpu:{g}"
        if s["links"] and s["down"] and bridged_spare_links(s["name"], s["links"], s["down"]):
            c.add(subj, "gpu.nvlink_down", 0, s.get("down_line", s["line"]), severity="ok",
                  summary=f"GPU {g}: {s['down']} of {s['links']} NVLinks inactive, as designed on {s['name']} "
                          f"(its NVLink bridges use {s['links'] - BRIDGED_SPARE_LINKS[1]} of {s['links']} links)")
        elif s["links"]:
            c.add(subj, "gpu.nvlink_down", s["down"], s.get("down_line", s["line"]),
                  severity="problem" if s["down"] else "ok")
        if s.get("counters"):
            c.add(subj, "gpu.nvlink_errors", s["errors"], s["line"])
            c.add(subj, "gpu.nvlink_replay_recovery", s["replay_recovery"], s["line"])
    return True


#: nvidia-smi's own failure messages (what it prints when NVML finds no GPU: "No devices were found", and with -L
#: "No devices found.", also after a prefix a launcher or an echo puts before it, or quoted in a sentence; when it cannot
#: reach the driver; or when it cannot query a GPU's fields: "ERR!" in the table), each the symptom line of a paste that
#: may hold nothing else
_NO_DEVICES = re.compile(r"(?:^|[\s=:\"'`“])No devices (?:were )?(?i:found)\b", re.M)
#: (each with a literal it holds: a text without it is not searched, so a 20 MB log costs a substring search in C, not a
#: regex tried at every position)
_SMI_FAILURES = ((_NO_DEVICES, "No devices ", "nvidia-smi found no GPU"),
                 (re.compile(re.escape("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver")),
                  "NVIDIA-SMI has failed", "nvidia-smi cannot reach the NVIDIA driver"),
                 (re.compile(r"^\s*\|.*ERR!", re.M), "ERR!", "nvidia-smi could not read a GPU's fields (ERR!)"))  # inside its table


def parse_failures(c: Collector) -> bool:
    found = False
    for rx, literal, summary in _SMI_FAILURES:
        if literal not in c.paste.text:
            continue
        m = rx.search(c.paste.text)
        if not m:
            continue
        no = c.paste.line_of(m.start())
        line = c.paste.line(no).strip()
        c.add("host", "error.text", line[:200], no, summary=summary)
        if rx is _NO_DEVICES and _NO_DEVICES.match(line):  # the whole output: no GPU (not one task's of several)
            c.add("host", "host.gpu_count", 0, no, severity="problem", summary=summary)
        c.kind("nvidia-smi")
        found = True
    return found


_LIST_GPU = re.compile(r"^GPU (\d+): (.+?) \(UUID: GPU-[0-9a-fA-F-]+\)\s*$")
_LIST_MIG = re.compile(r"^MIG \S+\s+Device\s+\d+: \(UUID: MIG-")


def parse_list(c: Collector) -> bool:
    """``nvidia-smi -L``: "GPU 0: NVIDIA GeForce RTX 4090 (UUID: GPU-...)" per GPU (its name and the count),
    "  MIG 3g.40gb Device 0: (UUID: MIG-...)" under a GPU whose MIG mode is on."""
    if "(UUID: GPU-" not in c.paste.text:
        return False
    gpus: list[int] = []
    cur, first = None, 0
    for no, line in enumerate(c.paste.lines, 1):
        s = line.strip()
        m = _LIST_GPU.match(s)
        if m:
            cur = int(m.group(1))
            gpus.append(cur)
            first = first or no
            _gpu_facts(c, cur, {"name": m.group(2), "_line": no, "_lines": {}})
        elif cur is not None and _LIST_MIG.match(s):
            c.add(f"gpu:{cur}", "gpu.mig", True, no)
    if not gpus:
        return False
    c.kind("nvidia-smi-L")
    c.add("host", "host.gpu_count", len(set(gpus)), first)
    return True


#: ``nvidia-smi --query-gpu=... --format=csv``: a header of the query's field names (with units in brackets:
#: "memory.total [MiB]"), then one row a GPU; the names are those of ``nvidia-smi --help-query-gpu``
_CSV_FIELDS = {"index": "index", "name": "name", "pci.bus_id": "bus_id", "driver_version": "driver",
               "pcie.link.gen.current": "pcie_gen_cur", "pcie.link.gen.gpucurrent": "pcie_gen_cur",
               "pcie.link.gen.max": "pcie_gen_max", "pcie.link.gen.gpumax": "pcie_gen_max",
               "pcie.link.width.current": "pcie_width_cur", "pcie.link.width.max": "pcie_width_max",
               "mig.mode.current": "mig", "virtualization_mode": "virtualization", "pstate": "pstate",
               "utilization.gpu": "utilization"}


def parse_query_csv(c: Collector) -> bool:
    """nvidia-smi's CSV query output (with its header): per GPU name, bus id, PCIe generation and width now and
    max, MIG mode, virtualization mode; the driver version."""
    if "pcie.link." not in c.paste.text and "pci.bus_id" not in c.paste.text and "mig.mode" not in c.paste.text \
            and "utilization.gpu" not in c.paste.text:
        return False
    lines = c.paste.lines
    found = False
    for no, line in enumerate(lines, 1):
        cols = [re.sub(r"\s*\[[^\]]*\]$", "", x.strip()) for x in line.split(",")]
        if len(cols) < 2 or not any(x in _CSV_FIELDS for x in cols) or not all(re.fullmatch(r"[\w.]+", x) for x in cols):
            continue
        keys = [_CSV_FIELDS.get(x) for x in cols]
        row_no = no
        for k in range(no, len(lines)):
            vals = [v.strip() for v in lines[k].split(",")]
            if len(vals) != len(cols) or not lines[k].strip():
                break
            row_no = k + 1
            g: dict[str, Any] = {"_line": row_no, "_lines": {}}
            for key, v in zip(keys, vals):
                if not key or v.upper() in ("N/A", "[N/A]", "[NOT SUPPORTED]"):
                    continue
                if key in ("pcie_gen_cur", "pcie_gen_max", "pcie_width_cur", "pcie_width_max", "index", "utilization"):
                    g[key] = _int(v)
                elif key == "mig":
                    g[key] = v.lower() == "enabled" if v.lower() in ("enabled", "disabled") else None
                elif key == "virtualization":
                    g[key] = _VIRT.get(v.lower().replace("_", " "), v.upper())
                elif key == "bus_id":
                    g[key] = norm_bus(v)
                else:
                    g[key] = v
            if g.get("driver"):
                _versions(c, g["driver"], row_no, None, row_no)
            idx = g.get("index") if isinstance(g.get("index"), int) else k - no
            _gpu_facts(c, idx, g)
            found = True
    if found:
        c.kind("nvidia-smi-csv")
        c.tool("nvidia-smi-csv", c.paste.first_line("pcie.link.", "pci.bus_id", "mig.mode", "utilization.gpu"))
    return found


#: nvtop's device line (src/interface.c): "Device 0 [NVIDIA GeForce RTX 3090] PCIe GEN 4@16x RX: ... TX: ..."; the
#: generation and width are the link's current ones (nvtop reads NVML's current link generation and width)
_NVTOP = re.compile(r"Device (\d+) \[([^\]]+)\][\s_*~`]*PCIe GEN (\d)\s*@\s*(\d+)x", re.I)


def parse_nvtop(c: Collector) -> bool:
    """nvtop's device lines: each GPU's name and its PCIe link now (gpu.pcie_gen_cur, gpu.pcie_width_cur)."""
    if "PCIe GEN" not in c.paste.text and "pcie gen" not in c.paste.lower:
        return False
    found = False
    for no, line in enumerate(c.paste.lines, 1):
        m = _NVTOP.search(line)
        if not m:
            continue
        found = True
        idx = int(m.group(1))
        _gpu_facts(c, idx, {"name": m.group(2).strip(), "_line": no, "_lines": {}})
        c.add(f"gpu:{idx}", "gpu.pcie_gen_cur", int(m.group(3)), no)
        c.add(f"gpu:{idx}", "gpu.pcie_width_cur", int(m.group(4)), no)
    if found:
        c.kind("nvtop")
        c.tool("nvtop", c.paste.first_line("PCIe GEN"))
    return found


def parse(c: Collector) -> bool:
    found = parse_xml(c)
    found = parse_q_text(c) or found
    found = parse_table(c) or found
    found = parse_nvlink(c) or found
    found = parse_failures(c) or found
    found = parse_list(c) or found
    found = parse_nvtop(c) or found
    found = parse_query_csv(c) or found
    return found
