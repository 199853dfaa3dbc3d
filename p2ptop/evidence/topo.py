"""``nvidia-smi topo -m`` and ``nvidia-smi topo -p2p r|w|n|a|p`` as pasted: tabs or spaces, rows
wrapped onto several lines, turned into a markdown table, NIC rows and columns, old drivers without "NUMA Affinity"/"GPU NUMA
ID" (and with ``SOC`` for ``SYS``), 16 GPUs and more, terminal colour codes, a paste cut above its header
(rows "GPU0  X ...", "GPU1 ..." in order say the columns).

Facts: ``pair.path``, ``pair.nvlink_count``, ``pair.cross_socket`` (path matrix), ``p2p.read``,
``p2p.write``, ``p2p.nvlink``, ``p2p.atomics``, ``p2p.pci`` (NVML status names), ``host.gpu_count``.

NCCL's topology dump (``NCCL_TOPO_DUMP_FILE``, XML) is the same kind of fact, read here too (``parse_nccl_xml``):
host.gpu_count, gpu.architecture (sm), host.nvswitch_present, host.virtualized (no GPU with a PCIe link).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from .paste import MD_SEPARATOR, Collector, pair_subject

PATH_CELLS = {"X", "NV", "PIX", "PXB", "PHB", "NODE", "SYS", "SOC", "N/A", "PSB"}
_NV = re.compile(r"^NV(\d+)$")
#: topo -p2p legend codes -> NVML P2P status names (the p2p.* facts' values).
P2P_CODES = {"OK": "OK", "CNS": "CHIPSET_NOT_SUPPORTED", "GNS": "GPU_NOT_SUPPORTED", "TNS": "TOPOLOGY_NOT_SUPPORTED",
             "NS": "NOT_SUPPORTED", "U": "UNKNOWN", "DR": "DISABLED_BY_REGKEY"}
CAP_NAMES = {"r": "read", "w": "write", "n": "nvlink", "a": "atomics", "p": "pci"}
_LABEL = re.compile(r"^(GPU\d+|NIC\d+|mlx\d+_\d+|mlx5_\d+|CPU\d*|NVSwitch\d*)$")
_CAP_HINT = re.compile(r"(?:-p2p\s+([rwnap])\b|^#+\s*([rwnap])(?:\s*\((?:read|write|nvlink|atomics|pcie?)\))?\s*$)", re.I)
_AFFINITY = re.compile(r"^(\d+(-\d+)?(,\d+(-\d+)?)*|N/A)$")


@dataclass
class Matrix:
    """One matrix as printed: column labels, rows by label, the trailing cells of each row."""
    columns: list[str]
    rows: dict[str, list[str]] = field(default_factory=dict)
    extra: dict[str, list[str]] = field(default_factory=dict)  # affinity, NUMA ... after the cells
    row_lines: dict[str, int] = field(default_factory=dict)
    header_line: int = 0
    tail_titles: list[str] = field(default_factory=list)  # "CPU Affinity", "NUMA Affinity", "GPU NUMA ID"

    @property
    def cells(self) -> set[str]:
        return {c for r in self.rows.values() for c in r}


@dataclass
class TopoPaste:
    """What ``p2ptop import`` needs from the matrices of a paste."""
    gpus: list[int] = field(default_factory=list)
    paths: dict[tuple[int, int], str] = field(default_factory=dict)
    cpu_affinity: dict[int, str] = field(default_factory=dict)
    numa: dict[int, Optional[int]] = field(default_factory=dict)
    gpu_numa: dict[int, Optional[int]] = field(default_factory=dict)
    has_numa_column: bool = False
    has_gpu_numa_column: bool = False
    nics: dict[str, str] = field(default_factory=dict)  # NIC0 -> mlx5_0
    nic_paths: dict[tuple[int, str], str] = field(default_factory=dict)
    p2p: dict[str, dict[tuple[int, int], str]] = field(default_factory=dict)  # cap -> (a, b) -> status
    p2p_cap_guessed: list[str] = field(default_factory=list)
    path_line: int = 0


_HEADER_START = re.compile(r"(?<![\w-])GPU0[ \t]+(?:GPU\d+|NIC\d+|mlx\S+|CPU)\b")


def _header_tokens(line: str) -> Optional[list[str]]:
    """The header's tokens from "GPU0" on (a shell prompt may stand before it), or None."""
    m = _HEADER_START.search(line)  # the header's own "GPU0", not one in the words before it ("GPU0<->GPU2 bonded: ...")
    toks = line[m.start() if m else line.find("GPU0"):][:20000].split()
    if not toks or toks[0] != "GPU0":
        return None
    if len(toks) == 1:
        return toks
    second = toks[1]
    if _LABEL.match(second) or second in ("CPU",):
        return toks
    return None


def _headless(lines: list[str], i: int) -> Optional[list[str]]:
    """Column labels of a matrix pasted without its header line: a row "GPU0  X  ..." (GPU0's own cell
    first), then rows GPU1, GPU2 ... in order; the columns are those GPUs (at least two). None otherwise."""
    t = lines[i].split()
    if len(t) < 3 or t[0] != "GPU0" or t[1] != "X":
        return None
    k = 1
    while i + k < len(lines) and (lines[i + k].split() or [""])[0] == f"GPU{k}":
        k += 1
    return [f"GPU{r}" for r in range(k)] if k >= 2 else None


def _columns(tokens: list[str]) -> tuple[list[str], list[str]]:
    """Column labels up to "CPU Affinity", and the titles after them."""
    cols, tail = [], []
    i = 0
    while i < len(tokens) and _LABEL.match(tokens[i]) and not tokens[i].startswith("CPU"):
        cols.append(tokens[i])
        i += 1
    rest = " ".join(tokens[i:])
    for title in ("CPU Affinity", "NUMA Affinity", "GPU NUMA ID"):
        if title in rest:
            tail.append(title)
    return cols, tail


def _unpipe(line: str) -> str:
    """A matrix row someone turned into a markdown table ("| GPU0 | X | NV12 | 0-63 |") as topo prints it; the
    table's separator row ("|---|---|") as a blank line."""
    if "|" not in line:
        return line
    if MD_SEPARATOR.match(line):
        return ""
    st = line.strip()
    return line.replace("|", " ") if st.startswith("|") and st.endswith("|") else line


def _flat(toks: list[str], line: int) -> Optional[Matrix]:
    """A matrix whose line breaks were lost ("GPU0 GPU1 GPU0 X NV4 0-31 GPU1 NV4 X 0-31", as a chat or a forum mirror
    flattens a paste): the header's labels up to the first label seen again, then each row in the header's order, its
    cells, and affinity values until the next row's label. None where the tokens are not such a matrix."""
    first = toks[0]
    try:
        k = toks.index(first, 1)
    except ValueError:
        return None
    cols, tail = _columns(toks[:k])
    if len(cols) < 2 or len(set(cols)) != len(cols):
        return None
    m = Matrix(cols, header_line=line, tail_titles=tail)
    rest, r, pos = toks[k:], 0, 0
    while pos < len(rest) and r < len(cols) and rest[pos] == cols[r]:
        label, pos = cols[r], pos + 1
        cells = rest[pos:pos + len(cols)]
        if len(cells) < len(cols) or any(_LABEL.match(t) for t in cells):
            break
        pos += len(cols)
        extra = []
        nxt = cols[r + 1] if r + 1 < len(cols) else None
        while pos < len(rest) and rest[pos] != nxt and _AFFINITY.match(rest[pos]) and len(extra) < max(len(tail), 3):
            extra.append(rest[pos])
            pos += 1
        m.rows[label], m.extra[label], m.row_lines[label] = cells, extra, line
        r += 1
    return m if len(m.rows) >= 2 else None


def read_matrices(c: Collector) -> list[Matrix]:
    lines = [_unpipe(l) for l in c.paste.lines] if "|" in c.paste.text else c.paste.lines
    out: list[Matrix] = []
    i, n = 0, len(lines)
    while i < n:
        line = lines[i]
        if "GPU0" not in line:
            i += 1
            continue
        toks = _header_tokens(line)
        headless = None if toks is not None else _headless(lines, i)
        if toks is None and headless is None:
            i += 1
            continue
        if headless is not None:  # a paste cut above its header: the rows GPU0.. say the columns
            toks = headless
            header_line, j = i + 1, i
        else:
            header_line = i + 1
            j = i + 1
        # a wrapped header goes on with more labels on the next line
        while headless is None and j < n and lines[j].split() and lines[j].split()[0] != "GPU0" and all(
                _LABEL.match(t) or t in ("CPU", "Affinity", "NUMA", "GPU", "ID") for t in lines[j].split()):
            toks += lines[j].split()
            j += 1
        flat = _flat(toks, header_line) if headless is None else None
        if flat is not None:  # the whole matrix on one line (a paste whose line breaks were lost)
            out.append(flat)
            i = header_line
            continue
        cols, tail = _columns(toks)
        m = Matrix(cols, header_line=header_line, tail_titles=tail)
        cur: Optional[str] = None
        while j < n:
            t = lines[j].split()
            if not t:
                if cur is not None and len(m.rows[cur]) < len(cols):
                    j += 1
                    continue
                if m.rows:
                    break
                j += 1
                continue
            if t[0] == "Legend:" or (t[0] == "GPU0" and _header_tokens(lines[j]) is not None):
                break
            if _LABEL.match(t[0]) and t[0] not in m.rows and (cur is None or len(m.rows[cur]) >= len(cols) or t[0] != cur):
                cur = t[0]
                m.rows[cur], m.extra[cur], m.row_lines[cur] = [], [], j + 1
                t = t[1:]
            elif cur is None:
                break
            for tok in t:
                if len(m.rows[cur]) < len(cols):
                    m.rows[cur].append(tok)
                else:
                    m.extra[cur].append(tok)
            j += 1
        if m.rows:
            out.append(m)
        i = j
    return out


def _cap_for(c: Collector, header_line: int) -> Optional[str]:
    for no in range(header_line - 1, max(0, header_line - 6), -1):
        h = _CAP_HINT.search(c.paste.line(no).strip())
        if h:
            letter = (h.group(1) or h.group(2)).lower()
            return CAP_NAMES[letter]
    return None


#: NCCL's topology dump (NCCL_TOPO_DUMP_FILE, src/graph/xml.cc): <system> of <cpu numaid=..> holding <pci busid=..
#: class=.. link_speed=".." link_width=".."> nodes (link_* read from sysfs max_link_speed / max_link_width), a GPU as
#: <gpu dev=N sm=CC ...> inside its <pci>, NVLinks as <nvlink target=BUSID count=N tclass=0x..>
_XML_PCI = re.compile(r"<pci\b([^>]*)>")
_XML_GPU = re.compile(r"<gpu\b([^>]*)/?>")
_XML_ATTR = re.compile(r'(\w+)="([^"]*)"')
_SM_ARCH = ((100, "Blackwell"), (90, "Hopper"), (89, "Ada"), (80, "Ampere"), (75, "Turing"), (70, "Volta"), (60, "Pascal"))
NVSWITCH_CLASS = "0x068000"  # PCI class of an NVSwitch (bridge, other), as NCCL's dump names an NVLink's far end


#: the command of a PCIe-only matrix, as a paste shows it before the matrix (nvidia-smi's -mp, --matrix_pci)
_PCI_ONLY = re.compile(r"\btopo\s+(?:-mp|--matrix_pci)\b")


def _pci_only(c: Collector, header_line: int) -> bool:
    """Is the matrix whose header is at ``header_line`` introduced by `nvidia-smi topo -mp` (on one of the 3 lines
    before it, or on the header line itself)?"""
    return any(_PCI_ONLY.search(c.paste.line(no)) for no in range(max(1, header_line - 3), header_line + 1))


def parse_nccl_xml(c: Collector) -> bool:
    """NCCL's topology XML: host.gpu_count, each GPU's architecture (sm), host.nvswitch_present (an NVLink whose far
    end is an NVSwitch), and host.virtualized where no GPU has a PCIe link at all (link_speed "" and link_width 0 on
    every GPU: sysfs gives no link for them, which a real GPU on a host's PCIe always has; an emulated conventional
    PCI bus, as a VM's machine type gives, has none)."""
    text = c.paste.text
    if "<gpu " not in text or "<pci " not in text:
        return False
    gpus: list[tuple[dict, dict, int]] = []
    last_pci: dict = {}
    cpu_of: dict[int, str] = {}  # GPU -> the <cpu> (NUMA node) it hangs under
    last_cpu = ""
    for m in re.finditer(r"<cpu\b[^>]*>|<pci\b[^>]*>|<gpu\b[^>]*>", text):
        attrs = dict(_XML_ATTR.findall(m.group(0)))
        if m.group(0).startswith("<cpu"):
            last_cpu = attrs.get("numaid", "") + "/" + attrs.get("host_hash", "")
        elif m.group(0).startswith("<pci"):
            last_pci = attrs
        elif "dev" in attrs:
            gpus.append((attrs, last_pci, c.paste.line_of(m.start())))
            if attrs["dev"].isdigit() and last_cpu:
                cpu_of.setdefault(int(attrs["dev"]), last_cpu)
    if not gpus:
        return False
    c.kind("nccl-topo-xml")
    c.tool("nccl-topo-xml", gpus[0][2])
    c.add("host", "host.gpu_count", len({g["dev"] for g, _, _ in gpus}), gpus[0][2])
    for g, pci, line in gpus:
        if not g["dev"].isdigit():
            continue
        if pci.get("busid"):
            c.note_bus(pci["busid"], int(g["dev"]))
        sm = g.get("sm", "")
        arch = next((a for floor, a in _SM_ARCH if sm.isdigit() and int(sm) >= floor), None)
        if arch:
            c.add(f"gpu:{g['dev']}", "gpu.architecture", arch, line)
    # two GPUs under different CPUs (NUMA nodes) of one host: their path crosses the CPUs' interconnect, NCCL's SYS
    # (graph/topo.cc: each <cpu> is a node; GPUs of different CPU nodes reach each other through the SYS link); a
    # different host_hash is another host, no pair
    by_gpu = sorted(cpu_of.items())
    for i, (a, ca) in enumerate(by_gpu):
        for b, cb in by_gpu[i + 1:]:
            if ca != cb and ca.split("/")[1] == cb.split("/")[1]:
                line = next(ln for g, _, ln in gpus if g.get("dev") == str(b))
                c.add(pair_subject(a, b), "pair.path", "SYS", line, severity="info",
                      summary=f"NCCL's topology: GPU{a} and GPU{b} hang under different CPUs (SYS)")
                c.add(pair_subject(a, b), "pair.cross_socket", True, line, severity="info")
    if NVSWITCH_CLASS in text and "<nvlink" in text:
        c.add("host", "host.nvswitch_present", True, c.paste.first_line(NVSWITCH_CLASS), severity="info")
    if all(p and p.get("link_width", "") in ("0", "") and not p.get("link_speed", "").strip() for _, p, _ in gpus):
        c.add("host", "host.virtualized", True, gpus[0][2], severity="info",
              summary="NCCL's topology: no GPU has a PCIe link (link_speed empty, link_width 0), as on a VM's emulated PCI bus")
    return True


#: one pair's cell written out on a line of its own, as people retell a topo matrix ("GPU0 ↔ GPU1 : NS (Not
#: Supported)", "GPU0 <-> GPU1: NV12", "GPU1 - GPU3 = PHB"): two GPUs, then one code of nvidia-smi's legends, the
#: path legend of topo -m (NV#, PIX, PXB, PHB, NODE, SYS, SOC) or the status legend of topo -p2p (OK, CNS, GNS, TNS,
#: NS, DR, U; whose capability, read/write/nvlink/atomics/pci, the command above the lines says, as for a matrix).
#: The two legends share no code; the codes are nvidia-smi's upper-case spellings, matched as written. Joined by a
#: word or a dash ("GPU0 and GPU1", "GPU0 - GPU1"), the pair must be followed by ":" or "=", so that a sentence
#: ("GPU0 and GPU1 OK") is not read as a cell.
_PAIR_LINE = re.compile(r"^\W{0,4}GPU ?(\d{1,2})\s*(?:(?:↔|⟷|<->|<-->|<=>|->)\s*GPU ?(\d{1,2})\s*[:=]?|"
                        r"(?:-|–|—|/|&|\band\b|\bto\b)\s*GPU ?(\d{1,2})\s*[:=])\s*[`'\"]?"
                        r"(OK|CNS|GNS|TNS|NS|DR|U|NV\d{1,2}|PIX|PXB|PHB|NODE|SYS|SOC)[`'\"]?(?:\s*\(|\s*$|\s*[,.;]|\s+[-–—]\s)")
#: two GPUs joined as _PAIR_LINE joins them, anywhere: one search in C over the whole paste before its lines are read one by
#: one (a 20 MB NCCL log names GPUs on thousands of lines and pairs on none)
_PAIR_HINT = re.compile(r"GPU ?\d{1,2}\s*(?:↔|⟷|<->|<-->|<=>|->|-|–|—|/|&|and|to)\s*GPU ?\d")


def _pair_lines(c: Collector) -> bool:
    """Pairs retold a line each (``_PAIR_LINE``), where the paste holds no matrix: their path or P2P status as a matrix
    cell of the same code would give it."""
    if not _PAIR_HINT.search(c.paste.text):
        return False
    found, first = False, 0
    kinds = set()
    for no, line in enumerate(c.paste.lines, 1):
        if "GPU" not in line:
            continue
        m = _PAIR_LINE.match(line)
        if not m:
            continue
        a, b, code = int(m.group(1)), int(m.group(2) or m.group(3)), m.group(4)
        if a == b:
            continue
        subj = pair_subject(a, b)
        first = first or no
        kinds.add("nvidia-smi-topo-p2p" if code in P2P_CODES else "nvidia-smi-topo")
        if code in P2P_CODES:
            cap = _cap_for(c, no) or "read"
            found = c.add(subj, f"p2p.{cap}", P2P_CODES[code], no, severity="ok" if code == "OK" else "problem",
                          summary=f"GPU{a} -> GPU{b}: P2P {cap} {code} ({P2P_CODES[code]}), as the text retells it") or found
        else:
            cls = "SYS" if code == "SOC" else code
            if c.add(subj, "pair.path", cls, no, summary=f"GPU{a} <-> GPU{b}: {cls}, as the text retells it"):
                found = True
                nv = _NV.match(cls)
                if nv:
                    c.add(subj, "pair.nvlink_count", int(nv.group(1)), no)
                c.add(subj, "pair.cross_socket", cls == "SYS", no)
    if found:
        for k in sorted(kinds):
            c.kind(k)
        c.tool("nvidia-smi-topo", first)
    return found


def parse(c: Collector) -> bool:
    xml = parse_nccl_xml(c)
    if "GPU" not in c.paste.text:
        return xml
    if "GPU0" not in c.paste.text:
        return _pair_lines(c) or xml
    mats = read_matrices(c)
    if not mats:
        return _pair_lines(c) or xml
    topo = TopoPaste()
    found = False
    for m in mats:
        gpu_cols = [int(x[3:]) for x in m.columns if x.startswith("GPU")]
        cells = m.cells
        p2p_like = cells and cells <= set(P2P_CODES) | {"X", "N/A"} and (
            cells - {"X", "N/A"} or (not m.tail_titles and _cap_for(c, m.header_line)))
        if p2p_like:
            cap = _cap_for(c, m.header_line)
            if cap is None:
                cap = next((k for k in CAP_NAMES.values() if k not in topo.p2p), "read")
                topo.p2p_cap_guessed.append(cap)
                c.notes.append(f"a topo -p2p matrix at line {m.header_line} does not say its capability: read as {cap}")
            found = True
            c.kind("nvidia-smi-topo-p2p")
            c.tool("nvidia-smi-topo", m.header_line)
            statuses = topo.p2p.setdefault(cap, {})
            for label, row in m.rows.items():
                if not label.startswith("GPU"):
                    continue
                a = int(label[3:])
                for col, cell in zip(m.columns, row):
                    if not col.startswith("GPU"):
                        continue
                    b = int(col[3:])
                    if a == b or cell not in P2P_CODES:
                        continue
                    statuses[(a, b)] = P2P_CODES[cell]
                    if a < b or (b, a) not in statuses:
                        c.add(pair_subject(a, b), f"p2p.{cap}", P2P_CODES[cell], m.row_lines[label],
                              severity="ok" if cell == "OK" else "problem",
                              summary=f"GPU{a} -> GPU{b}: P2P {cap} {cell} ({P2P_CODES[cell]})")
            continue
        if not any(x in PATH_CELLS or _NV.match(x) for x in cells):
            continue
        found = True
        c.kind("nvidia-smi-topo")
        c.tool("nvidia-smi-topo", m.header_line)
        if _pci_only(c, m.header_line):
            # `nvidia-smi topo -mp` (--matrix_pci): the PCIe route alone, NVLink left out; a pair's path as topo -m
            # gives it (NV# first) is not in it, so its cells are no pair's path
            c.notes.append(f"the matrix at line {m.header_line} is `nvidia-smi topo -mp` (PCIe only): its cells do not say "
                           "whether NVLink joins a pair, so no pair's path is read from it")
            if gpu_cols:
                c.add("host", "host.gpu_count", len(gpu_cols), m.header_line)
            continue
        topo.path_line = topo.path_line or m.header_line
        for g in gpu_cols:
            if g not in topo.gpus:
                topo.gpus.append(g)
        topo.has_numa_column = topo.has_numa_column or "NUMA Affinity" in m.tail_titles
        topo.has_gpu_numa_column = topo.has_gpu_numa_column or "GPU NUMA ID" in m.tail_titles
        for label, row in m.rows.items():
            if label.startswith("GPU"):
                a = int(label[3:])
                for col, cell in zip(m.columns, row):
                    if col.startswith("GPU"):
                        b = int(col[3:])
                        if a == b or cell in ("X", "N/A"):
                            continue
                        cls = "SYS" if cell == "SOC" else cell
                        topo.paths[(a, b)] = cls
                        if a < b:
                            subj, ln = pair_subject(a, b), m.row_lines[label]
                            c.add(subj, "pair.path", cls, ln, summary=f"GPU{a} <-> GPU{b}: {cls}")
                            nv = _NV.match(cls)
                            if nv:
                                c.add(subj, "pair.nvlink_count", int(nv.group(1)), ln)
                            c.add(subj, "pair.cross_socket", cls == "SYS", ln)
                    elif col.startswith(("NIC", "mlx")):
                        topo.nic_paths[(a, col)] = cell
                extra = m.extra.get(label, [])
                if extra and _AFFINITY.match(extra[0]):
                    topo.cpu_affinity[a] = extra[0]
                    if len(extra) > 1 and "NUMA Affinity" in m.tail_titles:
                        topo.numa[a] = int(extra[1]) if extra[1].isdigit() else None
                    if len(extra) > 2 and "GPU NUMA ID" in m.tail_titles:
                        topo.gpu_numa[a] = int(extra[2]) if extra[2].isdigit() else None
        if topo.gpus:
            c.add("host", "host.gpu_count", len(topo.gpus), m.header_line)
    if found:
        for no, line in enumerate(c.paste.lines, 1):  # the NIC legend: "  NIC0: mlx5_0"
            if "NIC" in line:
                mm = re.match(r"^\s*(NIC\d+):\s*(\S+)\s*$", line)
                if mm:
                    topo.nics[mm.group(1)] = mm.group(2)
        c.structured["topo"] = topo
    return found or xml
