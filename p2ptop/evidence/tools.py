"""The outputs of CUDA's P2P samples and tools: simpleP2P, deviceQuery, p2pBandwidthLatencyTest, topologyQuery, simpleIPC,
conjugateGradientMultiDeviceCG, nvbandwidth, bandwidthTest, nccl-tests' result tables, PyTorch tensors printed after a copy between GPUs, and rocm_bandwidth_test's Device Access and Data
Path Validation matrices (a FAIL between the CPU and a GPU: tool.host_copy_corrupt; between GPUs: wrong data).
(DCGM's output is read in evidence/dcgm.py.) After every parser, ``refusals_across_models`` says where peer access is refused only between different GPU models, and ``refusals_by_placement`` where it is granted to some pairs of one model and refused to others.

Tolerant of what pastes do: CAN/CANNOT lines in any case and spacing, p2pBandwidthLatencyTest's
"P2P Connectivity Matrix" (0 = no peer access for the pair), simpleP2P's "Test failed!", nccl-tests'
"Out of bounds values : N FAILED" without its table.

Facts: text.tool; per pair bench.peer_access ("ok" / "cudaErrorPeerAccessUnsupported" for
"Peer access ... : No" and "CANNOT Access Peer"), tool.p2p_slower_than_no_p2p (P2P=Enabled below
P2P=Disabled in p2pBandwidthLatencyTest's unidirectional matrices); tool.verification_error and
symptom.wrong_results (simpleP2P "Verification error", "Test failed", nvbandwidth's failed pattern check),
symptom.slow with tool.p2p_slower_than_no_p2p; per GPU tool.host_copy_slow (pinned copies between the CPU and the GPU,
bandwidthTest and nvbandwidth, far under its link or a sibling of the same model); simpleP2P's cudaMemcpyPeer rate judged
against the pair's link; topologyQuery's missing pairs, nvbandwidth's N/A cells and TensorFlow's interconnect matrix as peer
access per pair; Megatron's sniff-test communication outliers as slow; tool.fewer_than_two_gpus (simpleP2P waiving with one CUDA device);
gpu.name from the device lists; figures kept in ``structured["tools"]`` (the bandwidth matrices). nccl-tests'
tables are read in evidence/nccl_tests.py (every layout by its own header). p2pBandwidthLatencyTest's
latency matrices: P2P=Enabled far above P2P=Disabled is tool.p2p_slower_than_no_p2p too. A tensor on cuda:N printed all zeros (or NaN) beside the same values not
zero elsewhere in the paste (another device, the CPU, the literal it was built from): symptom.wrong_results.
"""

from __future__ import annotations

import re
from typing import Any, Optional

from . import nccl_tests, nvbandwidth_json
from ..pcie import PCIE_GBPS_PER_LANE
from .gpus import BUILT_MIN_WIDTH, MODEL_IN_PROSE, built_nvlink, built_pcie, classify
from .paste import TF_MATRIX, Collector, pair_subject

#: the CUDA samples' lines that state no trouble of a report, as prose reads them (lower case; their verdicts are this
#: module's: "Verification error", "Test failed!", "Peer access ... : No"): p2pBandwidthLatencyTest's "Device=0 CAN Access
#: Peer Device=1" and "P2P=Enabled" matrix titles, simpleP2P's progress lines (simpleP2P.cu's printf strings)
PLAIN_LINES = (r"device\s*=\s*\d|p2p\s*=\s*(?:enabled|disabled)|"
               r"^\s*(?:checking for multiple gpus|checking gpu\(s\) for support of peer to peer memory access|"
               r"enabling peer access between gpu\d+ and gpu\d+|allocating buffers \(\d+mb on gpu\d+|creating event handles|"
               r"preparing host buffer and memcpy to gpu\d+|run kernel on gpu\d+, taking source data from gpu\d+|"
               r"copy data back to host from gpu\d+ and verify|disabling peer access\.\.\.|shutting down\.\.\.|"
               r"cudamemcpypeer / cudamemcpy between gpu\d+ and gpu\d+:)")

#: simpleP2P "> Peer access from NAME (GPU0) -> NAME (GPU1) : Yes"; deviceQuery (and older simpleP2P) "> Peer-to-Peer
#: (P2P) access from NAME (GPU0) -> NAME (GPU1) : Yes" (cuda-samples deviceQuery.cpp, deviceQueryDrv.cpp)
_PEER = re.compile(r"Peer(?:-to-Peer \(P2P\))? access from (.*?)\s*\(GPU(\d+)\)\s*->\s*(.*?)\s*\(GPU(\d+)\)\s*:\s*(Yes|No)", re.I)
#: deviceQuery: 'Detected 2 CUDA Capable device(s)', 'Device 0: "NVIDIA H100 80GB HBM3"'
_DQ_COUNT = re.compile(r"Detected (\d+) CUDA Capable device")
_DQ_DEVICE = re.compile(r'^Device (\d+): "(.+)"\s*$')
_CAN = re.compile(r"Device\s*=\s*(\d+)\s+(CAN|CANNOT|CAN NOT)\s+Access\s+Peer\s+Device\s*=\s*(\d+)", re.I)
_DEVICE = re.compile(r"^Device:? (\d+)[,:] (.+?)(?:, pciBusID: ([0-9a-fA-F]+), pciDeviceID: ([0-9a-fA-F]+), pciDomainID:\s*([0-9a-fA-F]+)| \(([0-9A-Fa-f:]+)\))?\s*$")


def _matrix(lines: list[str], start: int, na: Optional[list[tuple[int, int]]] = None) -> tuple[dict[tuple[int, int], float], int]:
    """A "D\\D 0 1" matrix of figures after ``start`` (0-based index of its title); the (row, column) cells printed
    "N/A" are appended to ``na`` where one is given."""
    out: dict[tuple[int, int], float] = {}
    i = start + 1
    cols: list[int] = []
    while i < len(lines):
        t = lines[i].split()
        if not t:
            if cols and not out and i + 1 < len(lines) and lines[i + 1][:1] != "":
                i += 1  # a blank line between the head and the rows: a markdown table's delimiter row (paste.unpipe_tables)
                continue
            break
        if re.fullmatch(r"D[\\/]*D|GPU", t[0]) or (not cols and all(x.isdigit() for x in t)):  # D\D, D\\D (escaped in a post), D/D
            cols = [int(x) for x in t if x.isdigit()]
            i += 1
            continue
        if not t[0].isdigit() or not cols:
            break
        a = int(t[0])
        for b, v in zip(cols, t[1:]):
            try:
                out[(a, b)] = float(v)
            except ValueError:
                if na is not None and v == "N/A":
                    na.append((a, b))
        i += 1
    return out, i


def _peer(c: Collector, a: int, b: int, ok: bool, line: int) -> None:
    """A pair's answer to cudaDeviceCanAccessPeer as a CUDA sample prints it (simpleP2P/deviceQuery "Peer access
    from ... : Yes/No", p2pBandwidthLatencyTest "CAN/CANNOT Access Peer" and its connectivity matrix): the pair's
    bench.peer_access, and its P2P read status as the KB's entries ask for it (p2p.read OK / NOT_SUPPORTED, the
    same reading as the peer-access query said in words, prose._P2P_CAN_NO). A topo -p2p matrix of the same paste,
    read first, keeps its own (more precise) status."""
    subj = pair_subject(a, b)
    c.add(subj, "bench.peer_access", "ok" if ok else "cudaErrorPeerAccessUnsupported", line, severity="ok" if ok else "problem")
    c.add(subj, "p2p.read", "OK" if ok else "NOT_SUPPORTED", line, severity="ok" if ok else "problem",
          summary=f"GPU{min(a, b)} <-> GPU{max(a, b)}: cudaDeviceCanAccessPeer {'yes' if ok else 'no'} (CUDA sample)")


def _titled(mats: dict[str, dict], title: str) -> Optional[dict]:
    """p2pBandwidthLatencyTest's matrix whose title starts with ``title`` (the first printed), None where the paste has none."""
    return next((m for t, m in mats.items() if t.startswith(title)), None)


def _judge_latency(c: Collector, mats: dict[str, dict]) -> None:
    """p2pBandwidthLatencyTest's "P2P=Disabled Latency Matrix (us)" against its "P2P=Enabled Latency (P2P Writes) Matrix
    (us)" (each a GPU matrix then a CPU one; the reader keeps the GPU one), pair by pair. A peer write is one PCIe/NVLink
    transaction (a few us, also through a CPU's root complex); staged through the host it takes ten or more.
    - Enabled far above disabled: the peer path stalls (the ACS/IOMMU detour, a root complex that forwards P2P badly):
      ``tool.p2p_slower_than_no_p2p``.
    - Enabled at the staged figure (both at least 5 us, within a third of each other) while another pair gains (under
      half): the sample enables peer access only where cudaDeviceCanAccessPeer says yes (p2pBandwidthLatencyTest.cu, every
      output*Matrix: "if (p2p) { cudaDeviceCanAccessPeer(&access, i, j); if (access) cudaDeviceEnablePeerAccess(...)"),
      and cudaMemcpyPeerAsync stages the other pairs' copies, so the test used P2P where it could and not there: an
      inferred ``p2p.read`` NOT_SUPPORTED, where the paste lacks the sample's "CANNOT Access Peer" lines (cut off). Not
      from bandwidth: P2P allowed through a CPU often moves no faster than staging."""
    off, on = _titled(mats, "P2P=Disabled Latency"), _titled(mats, "P2P=Enabled Latency")
    if not (off and on):
        return
    staged: set[tuple[int, int]] = set()
    gains = False
    for (a, b), v_on in on["values"].items():
        v_off = off["values"].get((a, b))
        if a == b or v_off is None or v_off <= 0:
            continue
        if v_on > 2 * v_off and v_on - v_off > 5:
            c.add(pair_subject(a, b), "tool.p2p_slower_than_no_p2p", True, on["line"],
                  summary=f"GPU{a} -> GPU{b}: P2P enabled latency {v_on:.2f} us > P2P disabled {v_off:.2f} us")
            c.add("host", "symptom.slow", True, on["line"])
        elif v_on >= 5 and v_off >= 5 and 0.75 <= v_on / v_off <= 1.33:
            staged.add((min(a, b), max(a, b)))
        elif 0 < v_on < 0.5 * v_off:
            gains = True
    for a, b in sorted(staged) if gains else ():
        subj = pair_subject(a, b)
        if c.has(subj, "p2p.read"):  # the sample's own CAN/CANNOT line, or a topo -p2p matrix, said it
            continue
        c.add(subj, "p2p.read", "NOT_SUPPORTED", on["line"], severity="problem", inferred=True,
              summary=f"GPU{a} <-> GPU{b}: p2pBandwidthLatencyTest's P2P=Enabled latency is its P2P=Disabled one while "
                      "other pairs gain: the sample copied through the host there (cudaDeviceCanAccessPeer no)")


#: a GPU name without what does not change the chip: vendor and brand words, memory size and type, punctuation
_NAME_NOISE = re.compile(r"\b(?:nvidia|geforce|tesla|quadro)\b|\b\d+\s*[gm]i?b\b|\bhbm\d?e?\b|[^a-z0-9]+")


def _model(name: str) -> str:
    return _NAME_NOISE.sub("", name.lower())


def _name_of(c: Collector, idx: int) -> Optional[str]:
    """GPU ``idx``'s name: a CUDA sample's own first (its indices are CUDA's), else the one the paste gives the GPU."""
    return c.structured.get("cuda_names", {}).get(idx) or c.get(f"gpu:{idx}", "gpu.name")


def refusals_across_models(c: Collector) -> None:
    """host.p2p_refused_only_across_models: every pair a CUDA sample says cannot access its peer joins two different
    GPU models, each pair either of two architectures (libcuda's cuDeviceCanAccessPeer offers no peer access across
    architectures: NVIDIA forum 248378, aikitoria/open-gpu-kernel-modules#40 and #13, tensorflow/tensorflow#4013) or
    of two models while other pairs of the same paste can (so the driver and the platform do grant peer access); with no
    pair granted, only a pair of two architectures neither of which is a GeForce card (whose stock driver refuses anyway).
    Such a refusal is the GPU mix, not a fault of the platform, the driver or the VM. Run after every parser (names
    come from device lists, simpleP2P's lines, nvidia-smi)."""
    refused, granted = [], 0
    for (subject, key), fact in c.facts.items():
        if key != "bench.peer_access" or not subject.startswith("pair:"):
            continue
        if str(fact.value).lower() == "ok":
            granted += 1
        else:
            refused.append((subject, fact.line))
    if not refused:
        return
    for subject, _line in refused:
        try:
            a, b = (int(x) for x in subject[5:].split("-"))
        except ValueError:
            return
        na, nb = _name_of(c, a), _name_of(c, b)
        if not na or not nb or _model(na) == _model(nb):
            return
        (ca, xa), (cb, xb) = classify(na), classify(nb)
        # with no pair granted, a GeForce card's refusal is its stock driver's policy whatever the mix
        if not (granted or (xa and xb and xa != xb and "consumer" not in (ca, cb))):
            return
    first = min(line for _s, line in refused)
    c.add("host", "host.p2p_refused_only_across_models", True, first, severity="info",
          summary="peer access is refused only between GPUs of different models (CUDA offers none across "
                  "architectures); pairs of one model are not refused")


def refusals_by_placement(c: Collector) -> None:
    """host.p2p_refused_by_placement: on one host, peer access is granted between some GPUs of one model and refused between
    others of the same model (a CUDA sample's CAN/CANNOT lines or matrix, TensorFlow's interconnect matrix, a topo -p2p
    matrix, pairs p2pBandwidthLatencyTest copied through the host). The driver and the GPU model offer peer access, so the
    refused pairs' placement decides: their path crosses sockets or root complexes that do not route peer traffic. Not
    drawn where refusals are only across models (``refusals_across_models``), where a granted pair is joined by NVLink
    (a GeForce pair on an NVLink bridge has peer access that its PCIe pairs lack under the stock driver), or where the
    text names two models among the GPUs of the pairs. Run after every parser."""
    if c.has("host", "host.p2p_refused_only_across_models"):
        return
    granted, refused = [], []
    for (subject, key), fact in c.facts.items():
        if key != "p2p.read" or not subject.startswith("pair:"):
            continue
        (granted if str(fact.value) == "OK" else refused).append((subject, fact.line))
    if not granted or not refused:
        return
    for subject, _line in granted:
        path = str(c.get(subject, "pair.path") or "")
        if path.startswith("NV") or (c.get(subject, "pair.nvlink_count") or 0):
            return
    gpus = set()
    for subject, _line in granted + refused:
        try:
            gpus.update(int(x) for x in subject[5:].split("-"))
        except ValueError:
            return
    models = {_model(n) for n in (_name_of(c, g) for g in gpus) if n}
    if len(models) > 1:
        return
    # the GPUs' names in the text's words: two architectures named may be the pairs' mix (TensorFlow's device lines name
    # no model per index the readers keep)
    archs = {classify(m.group(0))[1] for m in MODEL_IN_PROSE.finditer(c.paste.text.lower())} - {None}
    if len(archs) > 1:
        return
    line = min(l for _s, l in refused)
    c.add("host", "host.p2p_refused_by_placement", True, line, severity="info",
          summary=f"peer access is granted between some of these GPUs ({granted[0][0][5:].replace('-', ' and ')}) and refused "
                  f"between others ({refused[0][0][5:].replace('-', ' and ')}), all of one model: the refused pairs' placement decides")


#: nvbandwidth's data check after a copy failing: v0.7 on "ASSERT in expression h_errorFlag == 0 in void
#: memcmpPatternHelper(...)" (memcpy.cpp's ASSERT, error_handling.h), v0.4-v0.6 " Invalid value when checking the pattern
#: at <ADDR>" then " Current offset [ N/SIZE]" (memcpy.cpp memcmpPattern)
_NVB_VERIFY = re.compile(r"ASSERT in expression h_errorFlag == 0|Invalid value when checking the pattern at <")
#: nvbandwidth's one-way device-to-device matrices: "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)", "<-" (not "<->")
_NVB_ONE_WAY = re.compile(r"^(?:memcpy|memory) (?:CE|SM) GPU\(row\) (?:->|<-) GPU\(column\) bandwidth", re.I)
#: the least one NVLink gives per direction (NVLink 1.0, P100: 20 GB/s; later generations 25 and more); with PCIe's
#: usable GB/s per lane per generation (pcie.PCIE_GBPS_PER_LANE), what a copy over the pasted link should reach
NVLINK_MIN_GBPS = 20.0
FAR_UNDER = 0.25  # measured under a quarter of the link's floor: far under, whatever the generation or overheads
HEALTHY_SHARE = 0.5  # at least half of that floor: the copy used the link
#: the narrowest link an NVIDIA GPU for compute is built with since Kepler: PCIe Gen3 x4 (mobile and the smallest cards;
#: the rest are x8/x16, NVLink above; the mining-only CMP boards, PCIe Gen1 x4, are left out: _MINING). A copy tool's
#: figure under a quarter of it is far under any GPU's link that trained as built, whatever the paste leaves unsaid (a
#: slot's x1 riser, a link trained down, or peer traffic stalled on its way)
ANY_GPU_LINK_GBPS = PCIE_GBPS_PER_LANE[3] * 4
_MINING = re.compile(r"\bcmp\s*\d", re.I)


def link_floor(c: Collector, a: int, b: int, host: bool = True) -> Optional[tuple[float, str]]:
    """(GB/s one way that the pair's link should give at the least, the link as said) from what the same paste
    shows: the pair's NV# in a topo matrix, else both GPUs' PCIe generation and width (nvidia-smi -q, lspci); else,
    where the text is read beside a host (``host``, ``Collector.host_links``) and the paste gives both GPUs' bus ids,
    that host's link between its GPUs of those bus ids. None where neither says the link."""
    topo = c.structured.get("topo")
    path = topo.paths.get((a, b)) or topo.paths.get((b, a)) if topo is not None else None
    if path and path.startswith("NV") and path[2:].isdigit():
        n = int(path[2:])
        return NVLINK_MIN_GBPS * n, f"{path} ({n} NVLink{'s' if n > 1 else ''})"
    links = []
    for g in (a, b):
        gen, width = c.get(f"gpu:{g}", "gpu.pcie_gen_max"), c.get(f"gpu:{g}", "gpu.pcie_width_max")
        if gen in PCIE_GBPS_PER_LANE and isinstance(width, int) and width > 0:
            links.append((PCIE_GBPS_PER_LANE[gen] * width, f"PCIe Gen{gen} x{width}"))
    if len(links) == 2:
        return min(links)
    if host and c.host_links is not None:
        ba, bb = c.bus_of_gpu(a), c.bus_of_gpu(b)
        if ba and bb and ba != bb:
            return c.host_links(ba, bb)
    return None


def built_floor(c: Collector, a: int, b: int) -> Optional[tuple[float, str]]:
    """The least GB/s one way a pair's link gives as its GPUs are built, for a paste that does not say the link: two SXM
    parts that NVIDIA builds only into boards joining every pair by NVLink, that NVLink (gpus.built_nvlink; a GPU paired
    with itself, its host link, is PCIe); else both models known, the older generation at x8 (gpus.built_pcie,
    BUILT_MIN_WIDTH), else any GPU's link (ANY_GPU_LINK_GBPS); None for a mining board's Gen1 x4. Only a figure far
    under it says something: the link may be wider."""
    names = [c.get(f"gpu:{g}", "gpu.name") or c.get("host", "gpu.name") for g in (a, b)]
    if any(n and _MINING.search(n) for n in names):
        return None
    nvl = [built_nvlink(n) for n in names] if a != b else []
    if nvl and all(nvl):
        # two SXM parts of boards that join every pair by NVLink (gpus.built_nvlink): their pair is NVLink as built
        return min(nvl), f"NVLink, as {names[0]} boards join every pair of GPUs (at the least)"
    gens = [built_pcie(n) for n in names]
    if all(gens):
        gen = min(gens)
        return PCIE_GBPS_PER_LANE[gen] * BUILT_MIN_WIDTH, f"PCIe Gen{gen}, as its GPUs are built (x{BUILT_MIN_WIDTH} at the least)"
    return ANY_GPU_LINK_GBPS, "any GPU's PCIe link (Gen3 x4, the narrowest built)"


def judge_link(c: Collector, measured: dict, line: int, tool: str) -> None:
    """A copy tool's one-way GB/s per pair against the pair's link in the same paste: far under it (FAR_UNDER) is
    symptom.slow with the pair's bench.verdict "slow"; at least HEALTHY_SHARE is the verdict "healthy" (a working
    state). Where the paste does not say the link, only "slow", against the link as the GPUs are built (built_floor)."""
    for (a, b), v in measured.items():
        if a == b or v is None:
            continue
        floor = link_floor(c, a, b)
        said = floor is not None
        floor = floor if said else built_floor(c, a, b)
        if floor is None:
            continue
        gbps, link = floor
        subj = pair_subject(a, b)
        if not said and v >= FAR_UNDER * gbps:
            continue  # the paste does not say the link: only a figure far under every GPU's link says something
        if v < FAR_UNDER * gbps:
            c.add(subj, "bench.verdict", "slow", line, severity="problem",
                  summary=f"GPU{a} -> GPU{b}: {tool} {v:.1f} GB/s, under a quarter of what {link} gives at the least ({gbps:.0f} GB/s)")
            c.add("host", "symptom.slow", True, line,
                  summary=f"{tool}: GPU{a} -> GPU{b} {v:.1f} GB/s on {link}")
        elif v >= HEALTHY_SHARE * gbps:
            c.add(subj, "bench.verdict", "healthy", line, severity="ok",
                  summary=f"GPU{a} -> GPU{b}: {tool} {v:.1f} GB/s on {link}")


def judge_host_links(c: Collector, measured: dict[int, float], line: int, tool: str,
                     what: str = "between the CPU and the GPU") -> None:
    """A copy tool's GB/s between the CPU and each GPU (pinned memory, one direction) against the GPU's own link: the
    PCIe generation and width the paste gives it, else as its model is built (built_floor, a GPU paired with itself);
    and against its siblings of the same model in the same run. Under a quarter of either is gpu tool.host_copy_slow
    (the copy keeps the link busy, so an idle link's power saving does not explain it) and symptom.slow."""
    model_of = {g: _model(c.get(f"gpu:{g}", "gpu.name") or c.get("host", "gpu.name") or "") for g in measured}
    best: dict[str, float] = {}
    for g, v in measured.items():
        best[model_of[g]] = max(best.get(model_of[g], 0.0), v)
    for g, v in sorted(measured.items()):
        floor = link_floor(c, g, g) or built_floor(c, g, g)
        model = model_of[g]
        why = None
        if floor is not None and v < FAR_UNDER * floor[0]:
            why = f"under a quarter of what {floor[1]} gives at the least ({floor[0]:.0f} GB/s)"
        elif model and best.get(model, 0.0) > 0 and v < FAR_UNDER * best[model]:
            why = f"under a quarter of what another GPU of the same model gets in the same run ({best[model]:.1f} GB/s)"
        if why:
            c.add(f"gpu:{g}", "tool.host_copy_slow", True, line, severity="problem",
                  summary=f"GPU{g}: {tool} {v:.1f} GB/s {what}, {why}")
            c.add("host", "symptom.slow", True, line, summary=f"{tool}: GPU{g} {v:.1f} GB/s {what}")


def _int_after(line: str) -> Optional[int]:
    m = re.search(r":\s*(\d+)", line)
    return int(m.group(1)) if m else None


def _gpu_name(c: Collector, idx: int, name: str, line: int) -> None:
    # CUDA's own device order (CUDA_DEVICE_ORDER is FASTEST_FIRST by default): nvidia-smi's index, read first into
    # gpu.name, may name another card in a rig of mixed GPUs
    c.structured.setdefault("cuda_names", {}).setdefault(idx, name)
    c.add(f"gpu:{idx}", "gpu.name", name, line)
    cls, arch = classify(name)
    if cls:
        c.add(f"gpu:{idx}", "gpu.product_class", cls, line)
        c.add(f"gpu:{idx}", "gpu.consumer", cls == "consumer", line)
    if arch:
        c.add(f"gpu:{idx}", "gpu.architecture", arch, line)


#: bandwidthTest (cuda-samples bandwidthTest.cu): " Device 0: NAME", " Host to Device Bandwidth, 1 Device(s)"
_BWT_DEVICE = re.compile(r"^\s*Device (\d+): (\S.*?)\s*$")
_BWT_DIRECTION = re.compile(r"^(Host to Device|Device to Host|Device to Device) Bandwidth, (\d+) Device\(s\)")
#: cuda-samples topologyQuery: std::cout << "GPU" << device1 << " <-> GPU" << device2 << ":" (a pair with peer access),
#: "GPU" << device << " <-> CPU:" (every device)
_TQ_PAIR = re.compile(r"^GPU(\d+) <-> GPU(\d+):$")
_TQ_CPU = re.compile(r"^GPU(\d+) <-> CPU:$")
#: nvbandwidth's one-way host copy matrices: "memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)", "<-" (not "<->")
_NVB_HOST = re.compile(r"^(?:memcpy|memory) (?:CE|SM) CPU\(row\) (?:->|<-) GPU\(column\) bandwidth", re.I)
#: conjugateGradientMultiDeviceCG: printf("GPU Device %d: \"%s\" with compute capability %d.%d\n")
_CG_DEVICE = re.compile(r'^GPU Device (\d+): "(.+)" with compute capability \d+\.\d+$')
#: cuda-samples simpleIPC: printf("Process %d: Verification mismatch at %lld: %d != %d\n")
_SIMPLEIPC_MISMATCH = re.compile(r"^Process \d+: Verification mismatch at \d+: -?\d+ != -?\d+")
#: cuda-samples simpleIPC: printf("Device %d is not peer capable with some other selected peers, skipping\n", i)
_SIMPLEIPC_NOT_PEER = re.compile(r"Device (\d+) is not peer capable with some other selected peers")


def _nvb_copy_failed(c: Collector, no: int, test: str, message: str) -> None:
    """nvbandwidth's data check failed after test ``test`` (its name): on a device-to-device test wrong data between
    GPUs, on a host test wrong data over the GPU's host link."""
    c.add("host", "tool.verification_error", True, no)
    c.add("host", "error.text", message.strip()[:200], no)
    if "host" in test and "device_to_device" not in test:
        c.add("host", "tool.host_copy_corrupt", True, no,
              summary=f"nvbandwidth: {test} returned wrong data (its pattern check failed)")
    else:
        c.add("host", "symptom.wrong_results", True, no,
              summary="nvbandwidth: a copy between GPUs returned wrong data (its pattern check failed)")


def _nvb_device_copies(c: Collector, measured: dict, na: list[tuple[int, int]], no: int, tool: str) -> None:
    """One direction of nvbandwidth's device-to-device copy: each pair's figure judged against its link; a pair off the
    diagonal printed N/A was skipped, its enablePeerAccess failed (testcases_ce.cpp, cuDeviceCanAccessPeer 0; the diagonal
    is N/A by design)."""
    judge_link(c, measured, no, tool)
    for a, b in na:
        if a != b:
            _peer(c, min(a, b), max(a, b), False, no)


def _nvb_waived(c: Collector, devices: list[int], no: int, named: bool = True) -> None:
    """nvbandwidth waives a device-to-device test when no pair of its GPUs can access each other
    (Testcase::filterHasAccessiblePeerPairs: cuDeviceCanAccessPeer 0 for every ordered pair): each pair of the listed
    devices has no peer access (one GPU listed has no pair). With no device list, that holds of the host's GPUs, as
    simpleIPC's refusal does, only where the waived tests are ``named`` device_to_device (v0.2's "Waiving
    device_to_device_...", a report's words) and the text counts no single GPU: nvbandwidth v0.8 on one H200 prints a
    bare "Waived: " for each device test (benchmarks/results/h200x1-2026-11-30w/nvbandwidth-1gpu.txt)."""
    if not devices:
        count = c.get("host", "host.gpu_count")
        if named and (count is None or count >= 2):
            c.add("host", "p2p.read", "NOT_SUPPORTED", no, severity="problem",
                  summary="nvbandwidth waived its device-to-device tests: no pair of the GPUs can access each other")
        return
    for a in devices:
        for b in devices:
            if a < b:
                _peer(c, a, b, False, no)


def parse_cuda_samples(c: Collector) -> bool:
    text = c.paste.text
    found = False
    tools: dict[str, Any] = c.structured.setdefault("tools", {})
    lines = c.paste.lines
    if "CUDA Capable device" in text or "CUDA Device Query" in text:
        for no, line in enumerate(lines, 1):
            m = _DQ_COUNT.search(line)
            if m:
                found = True
                c.add("host", "host.gpu_count", int(m.group(1)), no)
                continue
            d = _DQ_DEVICE.match(line.strip())
            if d:
                found = True
                _gpu_name(c, int(d.group(1)), d.group(2), no)
        if found:
            c.kind("deviceQuery")
            c.tool("deviceQuery", c.paste.first_line("CUDA Device Query", "CUDA Capable device"))
    if "simpleP2P" in text or "access from" in text or "cudaMemcpyPeer / cudaMemcpy" in text:
        count: Optional[int] = None
        for no, line in enumerate(lines, 1):
            m = _PEER.search(line)
            if m:
                found = True
                a, b, yes = int(m.group(2)), int(m.group(4)), m.group(5).lower() == "yes"
                for idx, name in ((a, m.group(1)), (b, m.group(3))):
                    if name and idx not in c.structured.get("cuda_names", {}):
                        _gpu_name(c, idx, name, no)
                _peer(c, a, b, yes, no)
            elif "verification error" in line.lower() or "verification failed" in line.lower():
                found = True
                c.add("host", "tool.verification_error", True, no)
                c.add("host", "symptom.wrong_results", True, no)
            elif "cudaMemcpyPeer / cudaMemcpy between" in line:
                found = True
                # simpleP2P.cu: printf("cudaMemcpyPeer / cudaMemcpy between GPU%d and GPU%d: %.2fGB/s\n"): 100 copies of
                # 64 MB, alternating direction, timed together: the pair's one-way rate over its link
                bw = re.search(r"between GPU(\d+) and GPU(\d+):\s*([\d.]+)\s*GB/s", line)
                if bw:
                    tools.setdefault("simpleP2P", {})["GB/s"] = float(bw.group(3))
                    judge_link(c, {(int(bw.group(1)), int(bw.group(2))): float(bw.group(3))}, no, "simpleP2P cudaMemcpyPeer")
            elif line.strip().lower().startswith("test failed"):  # simpleP2P.cu: "Test failed!" after its checks
                found = True
                c.add("host", "error.text", line.strip()[:200], no)
            elif line.startswith("CUDA-capable device count:"):  # simpleP2P.cu: printf("CUDA-capable device count: %i\n")
                found = True
                count = _int_after(line)
            elif "Two or more GPUs with Peer-to-Peer access capability are required" in line:
                found = True
                if count is not None and count < 2:
                    # simpleP2P.cu waives before any peer query when CUDA shows it fewer than two devices: no refusal of
                    # peer access, but GPUs CUDA does not see (CUDA_VISIBLE_DEVICES, a container's device list, MIG: a
                    # process sees one MIG instance)
                    c.add("host", "tool.fewer_than_two_gpus", count, no, severity="problem",
                          summary=f"simpleP2P: CUDA shows {count} device{'s' if count != 1 else ''}, two are needed")
                else:
                    c.add("host", "bench.peer_access", "cudaErrorPeerAccessUnsupported", no, severity="problem")
        if found and "deviceQuery" not in c.kinds:
            c.kind("simpleP2P")
            c.tool("simpleP2P", c.paste.first_line("simpleP2P", "Peer access from", "cudaMemcpyPeer / cudaMemcpy"))
    if " <-> CPU:" in text and "Atomic Supported:" in text:
        # topologyQuery (cuda-samples): "GPU%d <-> GPU%d:" for each ordered pair whose cudaDevP2PAttrAccessSupported is 1,
        # then "GPU%d <-> CPU:" for every device: a pair of the listed devices that is not listed has no peer access
        cpus = {int(m.group(1)): no for no, line in enumerate(lines, 1) for m in [_TQ_CPU.match(line.strip())] if m}
        pairs = {(int(m.group(1)), int(m.group(2))): no for no, line in enumerate(lines, 1) for m in [_TQ_PAIR.match(line.strip())] if m}
        if len(cpus) >= 2:
            found = True
            c.tool("topologyQuery", min(list(cpus.values()) + list(pairs.values())))
            c.add("host", "host.gpu_count", len(cpus), min(cpus.values()), severity="info")
            for a in sorted(cpus):
                for b in sorted(cpus):
                    if a < b:
                        listed = pairs.get((a, b)) or pairs.get((b, a))
                        _peer(c, a, b, bool(listed), listed or min(cpus.values()))
    low = text.lower()
    if "p2p connectivity matrix" in low or "access peer device" in low or "p2p=enabled" in low:
        found_p = False
        mats: dict[str, dict] = {}
        for no, line in enumerate(lines, 1):
            m = _CAN.search(line)
            if m:
                found_p = True
                a, can, b = int(m.group(1)), m.group(2).upper() == "CAN", int(m.group(3))
                _peer(c, a, b, can, no)
                continue
            d = _DEVICE.match(line.strip())
            if d and d.group(3) is not None:
                found_p = True
                _gpu_name(c, int(d.group(1)), d.group(2), no)
                bus = f"{int(d.group(5), 16):04x}:{int(d.group(3), 16):02x}:{int(d.group(4), 16):02x}.0"
                c.note_bus(bus, int(d.group(1)))
            if "Matrix" in line and ("P2P=" in line):
                found_p = True
                mat, _ = _matrix(lines, no - 1)
                title = line.strip()
                mats[title] = {"line": no, "values": mat}
            elif "p2p connectivity matrix" in line.lower():
                # cudaDeviceCanAccessPeer per pair, 1 or 0 (p2pBandwidthLatencyTest.cu prints "%6d" of it)
                found_p = True
                mat, _ = _matrix(lines, no - 1)
                for (a, b), v in mat.items():
                    if a < b and v in (0.0, 1.0) and mat.get((b, a), v) in (0.0, 1.0):
                        ok = v == 1.0 and mat.get((b, a), v) == 1.0
                        _peer(c, a, b, ok, no)
        if found_p:
            c.kind("p2pBandwidthLatencyTest")
            c.tool("p2pBandwidthLatencyTest", c.paste.first_line("[P2P (Peer-to-Peer) GPU Bandwidth Latency Test]",
                                                                "Access Peer Device", "P2P Connectivity Matrix", "P2P="))
            tools["p2pBandwidthLatencyTest"] = {k: {f"{a}-{b}": v for (a, b), v in m["values"].items()} for k, m in mats.items()}
            # uni- and bidirectional matrices alike (p2pBandwidthLatencyTest prints both; a paste may hold either)
            for direction in ("Unidirectional", "Bidirectional"):
                off, on = _titled(mats, f"{direction} P2P=Disabled Bandwidth"), _titled(mats, f"{direction} P2P=Enabled Bandwidth")
                if not (off and on):
                    continue
                for (a, b), v_on in on["values"].items():
                    v_off = off["values"].get((a, b))
                    if a == b or v_off is None:
                        continue
                    if v_on < 0.9 * v_off:
                        subj = pair_subject(a, b)
                        c.add(subj, "tool.p2p_slower_than_no_p2p", True, on["line"],
                              summary=f"GPU{a} -> GPU{b}: {direction.lower()} P2P enabled {v_on:.2f} GB/s < P2P disabled {v_off:.2f} GB/s")
                        c.add("host", "symptom.slow", True, on["line"])
            _judge_latency(c, mats)
            # P2P=Disabled: cudaMemcpyPeer without peer access, which the driver stages through host memory, so each
            # pair's figure is bounded by the slower of its two GPUs' host links. A GPU whose best staged pair is far
            # under what its link gives has a slow host link itself, or every GPU it was paired with has one.
            off = _titled(mats, "Unidirectional P2P=Disabled Bandwidth")
            if off:
                best: dict[int, float] = {}
                for (a, b), v in off["values"].items():
                    if a != b and v is not None:
                        for g in (a, b):
                            best[g] = max(best.get(g, 0.0), v)
                judge_host_links(c, best, off["line"], "p2pBandwidthLatencyTest P2P=Disabled",
                                 "at best, staged through the host with any other GPU (its link or all its peers' slow)")
            on = _titled(mats, "Unidirectional P2P=Enabled Bandwidth")
            if on:
                judge_link(c, on["values"], on["line"], "p2pBandwidthLatencyTest P2P=Enabled")
            found = True
    nvb = nvbandwidth_json.read(c)  # its JSON output (nvbandwidth -j): the same facts, read from its keys
    if nvb is not None:
        found = True
        c.kind("nvbandwidth")
        c.tool("nvbandwidth", nvb.first)
        for idx, name, bus, no in nvb.devices:
            _gpu_name(c, idx, name, no)
            c.note_bus(bus, idx)
        waived = 0
        for t in nvb.tests:
            d2d = t.name.startswith("device_to_device")
            if t.status == "Waived" and d2d:
                waived = waived or t.line
            if _NVB_VERIFY.search(t.error):
                _nvb_copy_failed(c, t.line, t.name, t.error)
            figures = {pair: v for pair, v in t.cells.items() if v is not None}
            if t.rows == "GPU" and d2d:
                _nvb_device_copies(c, figures, [pair for pair, v in t.cells.items() if v is None], t.line, "nvbandwidth " + t.name)
            elif t.rows == "CPU":
                judge_host_links(c, {g: v for (_cpu, g), v in figures.items()}, t.line, "nvbandwidth " + t.name)
        if _NVB_VERIFY.search(nvb.error):
            c.add("host", "tool.verification_error", True, nvb.error_line)
        if waived:
            _nvb_waived(c, [d[0] for d in nvb.devices], waived)
        tools["nvbandwidth"] = {t.name: t.sum for t in nvb.tests if t.sum is not None}
    elif "nvbandwidth" in text or "Running device_to_device" in text or "Running host_to_device" in text \
            or "checking the pattern at <" in text or "h_errorFlag == 0" in text \
            or ("device_to_device" in text and "waiv" in text.lower()):  # its test names, said waived in a report's words
        res: dict[str, Any] = {}
        devices: set[int] = set()
        d2d_waived = 0
        d2d_named = False  # a waived test named as device_to_device (v0.2's line, a report's words), not v0.8's bare "Waived:"
        for no, line in enumerate(lines, 1):
            s = line.strip()
            if s.startswith("SUM "):
                parts = s.split()
                if len(parts) >= 3:
                    try:
                        res[parts[1]] = float(parts[2])
                    except ValueError:
                        pass
            elif "waiv" in s.lower():
                res.setdefault("waived", []).append(no)
                # "Waiving device_to_device_memcpy_write_ce." (v0.2) or "Running device_to_device_...", then "Waived."
                test = s if "device_to_device" in s else (lines[no - 2] if no >= 2 else "")
                # v0.8 prints a filtered test's status alone, "Waived: " (nvbandwidth.cpp, Output::addTestcase): in a
                # single-node build the only filter a test can fail is filterHasAccessiblePeerPairs (testcase.h)
                if "device_to_device" in test or (s.startswith("Waived:") and "multinode" not in text):
                    d2d_waived = d2d_waived or no
                    d2d_named = d2d_named or "device_to_device" in test
            elif _NVB_VERIFY.search(s):
                # the copy's data check failed: on a device-to-device test wrong data between GPUs, on a host test
                # wrong data over the GPU's host link
                test = next((t for t in reversed(lines[max(0, no - 40):no - 1]) if t.strip().startswith("Running ")), "")
                _nvb_copy_failed(c, no, test.strip()[8:].rstrip("."), s)
            elif s.startswith("ERROR") or "mismatch" in s.lower():
                c.add("host", "tool.verification_error", True, no)
            d = _DEVICE.match(s)
            if d and d.group(6):
                _gpu_name(c, int(d.group(1)), d.group(2), no)
                c.note_bus(d.group(6) + ".0", int(d.group(1)))
            elif d and d.group(3) is None and "nvbandwidth" in text:  # v0.2: "Device 0: NVIDIA GeForce RTX 2080 Ti"
                _gpu_name(c, int(d.group(1)), d.group(2), no)
            if d:
                devices.add(int(d.group(1)))
            if _NVB_ONE_WAY.match(s) and "device_to_device" in (lines[no - 2] if no >= 2 else "") + lines[max(0, no - 3)]:
                na: list[tuple[int, int]] = []
                mat, _ = _matrix(lines, no - 1, na)  # one direction of a device-to-device copy, per pair (N/A on the diagonal)
                _nvb_device_copies(c, mat, na, no, "nvbandwidth " + s.split(" bandwidth")[0])
            elif _NVB_HOST.match(s):
                mat, _ = _matrix(lines, no - 1)  # one row (the CPU), a column per GPU
                judge_host_links(c, {g: v for (_cpu, g), v in mat.items()}, no, "nvbandwidth " + s.split(" bandwidth")[0])
        if d2d_waived:
            _nvb_waived(c, sorted(devices), d2d_waived, d2d_named)
        if res or "nvbandwidth Version" in text or c.has("host", "tool.verification_error"):
            found = True
            c.kind("nvbandwidth")
            c.tool("nvbandwidth", c.paste.first_line("nvbandwidth", "Running device_to_device", "Running host_to_device"))
            tools["nvbandwidth"] = res
    if "No two or more GPUs with same architecture capable of" in text:
        # conjugateGradientMultiDeviceCG (cuda-samples): printf("GPU Device %d: \"%s\" with compute capability %d.%d\n")
        # for each device that can take part, then "No two or more GPUs with same architecture capable of
        # concurrentManagedAccess found." when fewer than two of one architecture did: one listed (or none) is one seen
        listed = [(no, m) for no, line in enumerate(lines, 1) for m in [_CG_DEVICE.match(line.strip())] if m]
        if len(listed) <= 1:
            found = True
            no = next(n for n, line in enumerate(lines, 1) if "No two or more GPUs with same architecture" in line)
            for dno, m in listed:
                _gpu_name(c, int(m.group(1)), m.group(2), dno)
            c.kind("conjugateGradientMultiDeviceCG")
            c.tool("conjugateGradientMultiDeviceCG", no)
            c.add("host", "tool.fewer_than_two_gpus", len(listed), no, severity="problem",
                  summary=f"conjugateGradientMultiDeviceCG: {len(listed)} suitable device{'s' if len(listed) != 1 else ''}, two are needed")
    if "Verification mismatch at" in text:
        # simpleIPC (cuda-samples): printf("Process %d: Verification mismatch at %lld: %d != %d\n"): a buffer the other
        # processes' kernels wrote through CUDA IPC peer mappings does not hold what they wrote
        for no, line in enumerate(lines, 1):
            if _SIMPLEIPC_MISMATCH.search(line):
                found = True
                c.kind("simpleIPC")
                c.tool("simpleIPC", no)
                c.add("host", "tool.verification_error", True, no)
                c.add("host", "symptom.wrong_results", True, no,
                      summary="simpleIPC: data written by another process's GPU through CUDA IPC did not arrive")
                break
    m = _SIMPLEIPC_NOT_PEER.search(text) if "not peer capable" in text else None
    if m:
        # simpleIPC (cuda-samples): cudaDeviceCanAccessPeer said no between this device and one already selected
        no = text.count("\n", 0, m.start()) + 1
        found = True
        c.kind("simpleIPC")
        c.tool("simpleIPC", no)
        c.add("host", "p2p.read", "NOT_SUPPORTED", no, severity="problem",
              summary=f"simpleIPC: device {m.group(1)} cannot access a selected peer (skipped)")
    if "[CUDA Bandwidth Test]" in text or "Device to Device Bandwidth" in text:
        found = True
        c.kind("bandwidthTest")
        c.tool("bandwidthTest", c.paste.first_line("[CUDA Bandwidth Test]", "Device to Device Bandwidth"))
        direction, pinned, devices, measured = None, False, 0, {}
        gpu: Optional[int] = None  # the device of " Device 0: NAME" (bandwidthTest measures one unless --device=all)
        for no, line in enumerate(lines, 1):
            if "Result = FAIL" in line:
                c.add("host", "tool.verification_error", True, no)
            m = _BWT_DEVICE.match(line) if gpu is None else None
            if m:
                gpu = int(m.group(1))
                _gpu_name(c, gpu, m.group(2), no)
                continue
            m = _BWT_DIRECTION.match(line.strip())
            if m:
                direction, devices, pinned = m.group(1), int(m.group(2)), False
                continue
            if line.strip().startswith("PINNED Memory Transfers"):
                pinned = True
                continue
            if line.strip().startswith("PAGEABLE Memory Transfers"):
                pinned = False
                continue
            t = line.split()
            if direction in ("Host to Device", "Device to Host") and pinned and devices == 1 and len(t) == 2 and t[0].isdigit():
                try:
                    # bandwidthTest.cu: printf("   %u\t\t\t%s%.1f\n", size, ..., bandwidth) per transfer size
                    measured.setdefault(direction, (float(t[1]), no))
                except ValueError:
                    pass
        for direction, (v, no) in measured.items():
            judge_host_links(c, {gpu or 0: v}, no, f"bandwidthTest {direction.lower()} (pinned)")
    return found


#: rocm_bandwidth_test (ROCm/rocm_bandwidth_test: "Device: N,  NAME[,  GPU-UUID][,  BB:DD.F]" per agent, CPUs first;
#: "Device Access" (1: the row's agent can access the column's memory), and with -v "Data Path Validation" (PASS /
#: FAIL per copy, N/A where no copy ran; ROCm/rocm_bandwidth_test#4), rows possibly separated by blank lines)
_RBT_DEVICE = re.compile(r"^Device:\s*(\d+),\s+(.+?)\s*$")
_RBT_CPU = re.compile(r"\bCPU\b|\bXeon\b|\bEPYC\b|\bRyzen\b|\bThreadripper\b|\bCore\(TM\)", re.I)


def _rbt_matrix(lines: list[str], start: int) -> dict[tuple[int, int], str]:
    """The cells of a rocm_bandwidth_test matrix whose title is lines[start] (0-based): "D/D 0 1" then rows."""
    out: dict[tuple[int, int], str] = {}
    cols: list[int] = []
    for line in lines[start + 1:start + 200]:
        t = line.split()
        if not t:
            continue
        if t[0] in ("D/D", "D\\D", "D\\\\D"):
            cols = [int(x) for x in t[1:] if x.isdigit()]
            continue
        if not cols or not t[0].isdigit() or len(t) < 2:
            break
        for b, v in zip(cols, t[1:]):
            out[(int(t[0]), b)] = v.upper()
    return out


def parse_rocm_bandwidth_test(c: Collector) -> bool:
    """rocm_bandwidth_test: a FAIL in its Data Path Validation between a CPU and a GPU is a copy over the GPU's host link
    that returned wrong data (tool.host_copy_corrupt: a link that corrupts transfers, a riser, a failing slot); between
    two GPUs it is wrong data of a peer copy (symptom.wrong_results); Device Access 0/1 between two GPUs is the pair's
    peer access."""
    text = c.paste.text
    if "RocmBandwidthTest" not in text and "Data Path Validation" not in text and "rocm_bandwidth_test" not in text \
            and "rocm-bandwidth-test" not in text:
        return False
    lines = c.paste.lines
    agents: dict[int, str] = {}
    found = False
    for no, line in enumerate(lines, 1):
        d = _RBT_DEVICE.match(line.strip())
        if d:
            name = d.group(2).split(",")[0].strip()
            agents[int(d.group(1))] = "cpu" if _RBT_CPU.search(name) else "gpu"
            found = True
    gpus = sorted(a for a, k in agents.items() if k == "gpu")
    for no, line in enumerate(lines, 1):
        title = line.strip().lower()
        if title == "device access" and agents:
            for (a, b), v in _rbt_matrix(lines, no - 1).items():
                if a < b and a in gpus and b in gpus and v in ("0", "1"):
                    _peer(c, gpus.index(a), gpus.index(b), v == "1", no)
        elif title == "data path validation":
            found = True
            for (a, b), v in sorted(_rbt_matrix(lines, no - 1).items()):
                if v != "FAIL":
                    continue
                kinds = {agents.get(a), agents.get(b)}
                if kinds == {"cpu", "gpu"}:
                    g = gpus.index(a if agents.get(a) == "gpu" else b)
                    c.add("host", "tool.host_copy_corrupt", True, no,
                          summary=f"rocm_bandwidth_test: a copy between the CPU and GPU {g} failed its data validation")
                elif kinds == {"gpu"} and a != b:
                    c.add(pair_subject(gpus.index(a), gpus.index(b)), "bench.integrity", "corrupt", no, severity="problem")
                    c.add("host", "tool.verification_error", True, no)
                    c.add("host", "symptom.wrong_results", True, no)
    if found:
        c.kind("rocm-bandwidth-test")
        c.tool("rocm-bandwidth-test", c.paste.first_line("RocmBandwidthTest", "rocm_bandwidth_test", "Data Path Validation"))
    return found


#: a bandwidth the reporter set beside what it should be: "13.5 GB/s  <- should be ~103 GB/s", "only ~13-27 GB/s instead of
#: expected ~100 GB/s", "25 GB/s (expected 50 GB/s)", "got 3 GB/s vs the theoretical 25 GB/s"
_EXPECTED_BW = re.compile(
    r"(?P<got>\d+(?:\.\d+)?)\s*(?:[-–]\s*\d+(?:\.\d+)?\s*)?(?P<u1>[GM]B/s|GiB/s)[^\n\d]{0,30}?"
    r"\b(?:should be|expected|expecting|instead of(?: the)?(?: expected)?|vs\.? (?:the )?(?:expected|theoretical)|"
    r"theoretical(?: max(?:imum)?)?(?: is| of)?)\s*:?\s*(?:~|≈|about |around |roughly )?\s*(?P<want>\d+(?:\.\d+)?)\s*(?P<u2>[GM]B/s|GiB/s)?",
    re.I)


def parse_expected_bandwidth(c: Collector) -> bool:
    """A measured bandwidth written beside the figure the reporter expects of the link: under half of it is
    symptom.slow (the figure judged against what the text itself says the link gives)."""
    if "should be" not in c.paste.plain and "expect" not in c.paste.plain and "instead of" not in c.paste.plain \
            and "theoretical" not in c.paste.plain:
        return False
    for no, line in enumerate(c.paste.lines, 1):
        m = _EXPECTED_BW.search(line)
        if not m or (m.group("u2") and m.group("u2").lower() != m.group("u1").lower()):
            continue
        got, want = float(m.group("got")), float(m.group("want"))
        if want > 0 and got < 0.5 * want:
            c.add("host", "symptom.slow", True, no,
                  summary=f"{got:g} {m.group('u1')} measured where {want:g} is expected (under half)")
            return True
    return False


def parse_nccl_tests(c: Collector) -> bool:
    """nccl-tests' result tables and summary (every layout since 2017): evidence/nccl_tests.py."""
    return nccl_tests.parse(c, _gpu_name, link_floor, built_floor)


#: a PyTorch tensor as ``print`` shows it: "tensor([0.6000, 0.6000], device='cuda:1')" (repr of torch.Tensor: the
#: values, then ", device='cuda:N'" for a GPU tensor, dtype/grad keywords after them; nested lists for 2-D)
_TENSOR = re.compile(r"tensor\((\[[\s\d.,eE+\-\[\]naif]*\])((?:\s*,\s*\w+=[^,()]*)*)\)")
_LITERAL = re.compile(r"torch\.(?:tensor|Tensor|FloatTensor|as_tensor)\(\s*(\[[\s\d.,eE+\-\[\]]*\])")
_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|nan|inf")


def _values(body: str) -> list[float]:
    return [float(x) for x in _NUMBER.findall(body)]


def parse_tensor_copies(c: Collector) -> bool:
    """A tensor copied between GPUs that arrives as zeros (or NaN): a printed tensor on ``cuda:N`` whose values are
    all 0 (or NaN) while the same paste shows the same number of values, not all 0, on another device, on the CPU
    or as the literal the code built it from. That is a peer copy that moved no data (the known signature of a
    DMA the IOMMU or a broken P2P path dropped). A paste that builds zeros itself (torch.zeros, zero_) says nothing."""
    text = c.paste.text
    if "tensor(" not in text or "cuda:" not in text:
        return False
    low = text.lower()
    if "zeros" in low or "zero_(" in low or "fill_(0" in low:
        return False
    seen: list[tuple[str, list[float], int]] = []  # (device, values, line)
    for m in _LITERAL.finditer(text):
        seen.append(("literal", _values(m.group(1)), c.paste.line_of(m.start())))
    for m in _TENSOR.finditer(text):
        if "grad_fn" in (m.group(2) or ""):
            continue  # the result of a computation, not a copy
        dev = re.search(r"device='?\"?(cuda:\d+|cpu)", m.group(2) or "")
        seen.append((dev.group(1) if dev else "cpu", _values(m.group(1)), c.paste.line_of(m.start())))
    for dev, vals, no in seen:
        if not dev.startswith("cuda:") or not vals or not all(v == 0 or v != v for v in vals):
            continue
        other = next(((d, ln) for d, v, ln in seen if d != dev and len(v) == len(vals) and any(x != 0 and x == x for x in v)), None)
        if other:
            c.kind("pytorch-output")
            c.add("host", "symptom.wrong_results", True, no,
                  summary=f"a tensor on {dev} reads {'NaN' if any(v != v for v in vals) else 'all zeros'} while the same "
                          f"values are not zero on {other[0]} (line {other[1]}): a copy between devices lost its data")
            return True
    return False


#: Megatron-LM's GPU sniff test (megatron/training/gpu_sniff_test.py): "  {name}: median=%.2f, mean=%.2f, min=..., max=..."
#: for each measurement, then "    OUTLIER rank {i} ({host}): {value:.2f} ({deviation:+.1%})" for each rank off the median
_SNIFF_NAME = re.compile(r"^\s+(.+?): median=[\d.]+, mean=[\d.]+")
_SNIFF_OUTLIER = re.compile(r"^\s*OUTLIER rank \d+(?: \([^)]*\))?: [\d.]+ \((-\d+(?:\.\d+)?)%\)")
_SNIFF_COMM = re.compile(r"busbw|all-to-all|send/recv|bandwidth", re.I)


def parse_sniff_test(c: Collector) -> bool:
    """A communication measurement of Megatron's sniff test (all-to-all busbw, send/recv bandwidth) with ranks at half their
    median or less: those ranks' GPUs talk far slower than their peers (symptom.slow)."""
    if "OUTLIER rank" not in c.paste.text:
        return False
    name = None
    for no, line in enumerate(c.paste.lines, 1):
        m = _SNIFF_NAME.match(line)
        if m:
            name = m.group(1)
            continue
        o = _SNIFF_OUTLIER.match(line)
        if o and name and _SNIFF_COMM.search(name) and float(o.group(1)) <= -50:
            c.tool("Megatron GPU sniff test", no)
            c.add("host", "symptom.slow", True, no,
                  summary=f"Megatron's sniff test: a rank's {name.split(' [')[0]} {o.group(1)} % off the median")
            return True
    return False


#: TensorFlow's GPU device setup (core/common_runtime/gpu/gpu_device.cc): "Device interconnect StreamExecutor with strength 1
#: edge matrix:", a header of device ids, then per device "0:   N Y " (Y where peer access between the two can be enabled;
#: the diagonal is N), each a log line of its own ("2019-.. I tensorflow/.../gpu_device.cc:1064] 0:   N Y "); before 1.5
#: the same matrix as "DMA: 0 1 " (the ids on the head's own line) and rows whose diagonal is Y
_TF_ROW = re.compile(r"(?:\]|^)\s*(\d+):\s+((?:[YN]\s*)+)$")
_TF1_DMA = re.compile(r"(?:\]|^)\s*DMA:((?:[ \t]+\d+){2,})[ \t]*$", re.M)
#: ... and, for each pair the driver says cannot be peers (CanEnablePeerAccessTo: cuDeviceCanAccessPeer), a line of its own
#: before the matrix, at INFO: "Peer access not supported between device ordinals 0 and 5"
_TF_NO_PEER = re.compile(r"Peer access not supported between device ordinals (\d+) and (\d+)")


def _tf_matrix_start(c: Collector) -> Optional[tuple[int, int]]:
    """The line of TensorFlow's peer matrix head and how many lines after it its rows start, or None."""
    lines = c.paste.lines
    if TF_MATRIX in c.paste.text:
        return next(no for no, line in enumerate(lines, 1) if TF_MATRIX in line), 2
    if "DMA:" in c.paste.text:
        m = _TF1_DMA.search(c.paste.text)
        if m:
            return c.paste.line_of(m.start(1)), 1
    return None


def parse_tf_interconnect(c: Collector) -> bool:
    """TensorFlow's peer matrix: an N between two of its devices is no peer access for the pair, a Y peer access; and its
    lines that say a pair cannot be peers (``_TF_NO_PEER``), where the log holds no matrix or the matrix was cut off."""
    found = False
    at = _tf_matrix_start(c)
    if at:
        start, skip = at
        lines = c.paste.lines
        rows: dict[int, tuple[list[str], int]] = {}
        for no in range(start + skip, min(len(lines), start + 66) + 1):  # (the id header,) then a row per device
            m = _TF_ROW.search(lines[no - 1].rstrip())
            if not m:
                break
            rows[int(m.group(1))] = (m.group(2).split(), no)
        if len(rows) >= 2:
            c.tool("TensorFlow device interconnect", start)
            for a, (cells, no) in rows.items():
                for b, cell in enumerate(cells):
                    if a < b and b in rows:
                        _peer(c, a, b, cell == "Y" and rows[b][0][a:a + 1] != ["N"], no)
            found = True
    if not found and "Peer access not supported between device ordinals" in c.paste.text:
        seen: set[tuple[int, int]] = set()
        for m in _TF_NO_PEER.finditer(c.paste.text):
            a, b = sorted((int(m.group(1)), int(m.group(2))))
            if a != b and (a, b) not in seen:
                no = c.paste.line_of(m.start())
                if not seen:
                    c.tool("TensorFlow peer access", no)
                seen.add((a, b))
                _peer(c, a, b, False, no)
        found = bool(seen)
    return found


def parse(c: Collector) -> bool:
    a = parse_cuda_samples(c)
    b = parse_nccl_tests(c)
    t = parse_tensor_copies(c)
    r = parse_rocm_bandwidth_test(c)
    e = parse_expected_bandwidth(c)
    s = parse_sniff_test(c)
    f = parse_tf_interconnect(c)
    return a or b or t or r or e or s or f
