"""The fabric: a networkx graph built from a snapshot, pair path classes and expected bandwidth.

Nodes (``kind`` attribute): ``gpu``, ``nvswitch``, ``pcie_switch``, ``host_bridge``, ``cpu``.
Edges (``kind``): ``nvlink`` (a bundle of links: ``links``, ``active``, ``version``, ``errors``),
``pcie`` (one hop: ``gen``/``width`` current and max), ``smp`` (the socket interconnect).

The path class of a pair is what ``nvidia-smi topo -m`` prints. ``path_class`` gives NVML's answer
(NVLink count, else NVML's common ancestor) and falls back to the graph's structure where NVML could
not say; ``graph_path_class`` is the structure alone, so the two can be checked against each other.
"""

from __future__ import annotations

from dataclasses import dataclass
TYPE_CHECKING = False  # typing is not imported at run time (start-up); the annotations are strings
if TYPE_CHECKING:
    from typing import Optional

from .model import ANCESTOR_PATH_CLASS, GPU, NVLINK_VERSION_NAMES, Snapshot
from .pcie import PCIE_GBPS_PER_LANE, pcie_gbps  # noqa: F401 - PCIE_GBPS_PER_LANE is part of this module's face

# --- per-link figures --------------------------------------------------------------------
#: NVLink bandwidth per link, per direction, in GB/s, by NVML version enum.
#: Sources: NVIDIA NVLink page https://www.nvidia.com/en-us/data-center/nvlink/ (per-GPU totals:
#: P100 160 GB/s over 4 links, V100 300 GB/s over 6, A100 600 GB/s over 12, H100 900 GB/s over 18,
#: B200 1.8 TB/s over 18; each total counts both directions) and the Hopper/Ampere/Volta
#: architecture whitepapers. NVLink 6.0 per-link figures are not published in a form we can cite:
#: left unknown rather than guessed.
NVLINK_GBPS_PER_LINK: dict[int, Optional[float]] = {
    1: 20.0,  # NVLink 1.0 (P100): 160 / 4 / 2
    2: 25.0,  # NVLink 2.0 (V100): 300 / 6 / 2
    3: 25.0,  # NVLink 2.2
    4: 25.0,  # NVLink 3.0 (A100): 600 / 12 / 2
    5: 25.0,  # NVLink 3.1
    6: 25.0,  # NVLink 4.0 (H100, H200): 900 / 18 / 2
    7: 50.0,  # NVLink 5.0 (B200, GB200): 1800 / 18 / 2
    8: None,  # NVLink 6.0: not cited
}
@dataclass
class Expectation:
    """What a pair should reach one way over its path."""

    gbps: Optional[float]  # from the links' maximum capability
    trained_gbps: Optional[float]  # from what the links trained at now
    kind: str  # nvlink | pcie | unknown
    basis: str  # "18 x NVLink 4.0 at 25 GB/s" / "PCIe Gen5 x16"
    reason: Optional[str] = None  # why gbps is None


# --- building the graph -------------------------------------------------------------------


def gpu_node(index: int) -> str:
    return f"gpu{index}"


class PathClasses:
    """What ``nvidia-smi topo -m`` prints for each pair, from the snapshot alone, without the graph (and
    so without networkx): NV# from the active NVLinks (direct links, the lower count of the two ends, plus
    the smaller of the two GPUs' NVSwitch bundles), else NVML's common ancestor. ``of`` answers None
    where only the graph's structure could say (no ancestor read): ask ``Fabric.path_class`` then.
    ``Fabric.nvlink_count`` counts the same links on the graph; tests hold the two equal on every demo."""

    def __init__(self, snapshot: Snapshot):
        self.snapshot = snapshot
        bus_to_gpu = snapshot.bus_to_gpu()
        self.direct: dict[tuple[int, int], int] = {}  # (a, b) -> active links a -> b as a sees them
        self.switch: dict[int, int] = {}  # GPU -> active links into the NVSwitch plane
        for gpu in snapshot.gpus:
            self.switch[gpu.index] = 0
            for link in gpu.nvlinks:
                remote = (link.remote_pci_bus_id or "").upper()
                if link.remote_type == "GPU" and remote in bus_to_gpu:
                    key = (gpu.index, bus_to_gpu[remote])
                    self.direct[key] = self.direct.get(key, 0) + (1 if link.active else 0)
                elif link.remote_type == "NVSWITCH" or link.remote_hidden:
                    self.switch[gpu.index] += 1 if link.active else 0

    def nvlink_count(self, a: int, b: int) -> int:
        ends = [self.direct[k] for k in ((a, b), (b, a)) if k in self.direct]
        return (min(ends) if ends else 0) + min(self.switch.get(a, 0), self.switch.get(b, 0))

    def of(self, a: int, b: int) -> Optional[str]:
        return _nv_or_ancestor(self.snapshot, a, b, self.nvlink_count)


def _nv_or_ancestor(snapshot: Snapshot, a: int, b: int, nvlink_count) -> Optional[str]:
    """X, NV# (``nvlink_count(a, b)`` active links), else NVML's common ancestor's class; None when neither says."""
    if a == b:
        return "X"
    n = nvlink_count(a, b)
    if n:
        return f"NV{n}"
    pair = snapshot.pair(a, b)
    if pair and pair.ancestor in ANCESTOR_PATH_CLASS:
        return ANCESTOR_PATH_CLASS[pair.ancestor]
    return None


def build(snapshot: Snapshot) -> "Fabric":
    return Fabric(snapshot)


class Fabric:
    """The graph of one snapshot and the questions asked of it."""

    def __init__(self, snapshot: Snapshot):
        import networkx as nx  # here: importing this module (the CLI's parser, path classes) does not pay for it

        self.snapshot = snapshot
        self.graph = nx.Graph()
        self._bus_to_gpu = snapshot.bus_to_gpu()
        self._parent: dict[str, list[str]] = {}  # gpu node -> PCIe nodes above it, nearest first
        self._socket_of_node: dict[int, int] = {}
        for s in snapshot.sockets:
            for n in s.numa_nodes:
                self._socket_of_node[n] = s.id
        self._build()

    # -- construction --
    def _build(self) -> None:
        g = self.graph
        for gpu in self.snapshot.gpus:
            g.add_node(gpu_node(gpu.index), kind="gpu", index=gpu.index, label=gpu.label, name=gpu.name or "")
        self._add_nvlinks()
        self._add_pcie()
        # per GPU: (active, total) NVLinks into the NVSwitch plane, asked for every pair
        self._switch_links: dict[str, tuple[int, int]] = {}
        for u in self.nodes_of("gpu"):
            bundles = [d for _, v, d in g.edges(u, data=True) if d["kind"] == "nvlink" and g.nodes[v]["kind"] == "nvswitch"]
            self._switch_links[u] = (sum(d["active"] for d in bundles), sum(d["links"] for d in bundles))

    def _add_nvlinks(self) -> None:
        g = self.graph
        for gpu in self.snapshot.gpus:
            bundles: dict[str, dict] = {}
            for link in gpu.nvlinks:
                remote = (link.remote_pci_bus_id or "").upper()
                if link.remote_type == "GPU" and remote in self._bus_to_gpu:
                    other = gpu_node(self._bus_to_gpu[remote])
                elif link.remote_type == "NVSWITCH" or link.remote_hidden:
                    if link.remote_hidden or not remote:
                        other = "nvswitch:hidden"
                        if other not in g:
                            g.add_node(other, kind="nvswitch", label="NVSwitch fabric", hidden=True)
                    else:
                        other = f"nvswitch:{remote}"
                        if other not in g:
                            g.add_node(other, kind="nvswitch", label=f"NVSwitch {remote}", hidden=False, bus=remote)
                else:
                    continue  # not connected, or a peer we cannot place
                b = bundles.setdefault(other, {"links": 0, "active": 0, "versions": set(), "errors": 0, "link_ids": []})
                b["links"] += 1
                b["link_ids"].append(link.link)
                if link.active:
                    b["active"] += 1
                if link.version is not None:
                    b["versions"].add(link.version)
                b["errors"] += sum(v for v in link.counters.values() if v)
            for other, b in bundles.items():
                version = max(b["versions"]) if b["versions"] else None
                attrs = dict(
                    kind="nvlink",
                    links=b["links"],
                    active=b["active"],
                    down=b["links"] - b["active"],
                    version=version,
                    version_name=NVLINK_VERSION_NAMES.get(version) if version else None,
                    errors=b["errors"],
                )
                u = gpu_node(gpu.index)
                if g.has_edge(u, other) and g.edges[u, other]["kind"] == "nvlink":
                    # GPU-GPU links are seen from both ends: keep the lower active count.
                    e = g.edges[u, other]
                    e["active"] = min(e["active"], attrs["active"])
                    e["down"] = max(e["down"], attrs["down"])
                    e["errors"] = max(e["errors"], attrs["errors"])
                else:
                    g.add_edge(u, other, **attrs)

    def _socket_for(self, gpu: GPU) -> str:
        if gpu.numa_node is not None and gpu.numa_node in self._socket_of_node:
            sid = self._socket_of_node[gpu.numa_node]
        elif gpu.numa_node is not None and self.snapshot.sockets:
            sid = gpu.numa_node
        else:
            sid = 0
        node = f"cpu{sid}"
        if node not in self.graph:
            self.graph.add_node(node, kind="cpu", label=f"CPU{sid}", socket=sid)
        return node

    def _add_pcie(self) -> None:
        g = self.graph
        for gpu in self.snapshot.gpus:
            gnode = gpu_node(gpu.index)
            chain: list[str] = []
            below = gnode
            below_link = dict(
                gen=gpu.pcie_gen_cur, width=gpu.pcie_width_cur, gen_max=gpu.pcie_gen_max, width_max=gpu.pcie_width_max
            )
            # Walk up the PCIe path: collapse each switch's ports into one node.
            path = list(gpu.pcie_path)
            i = 0
            while i < len(path):
                dev = path[i]
                if dev.role == "root_port":
                    break
                if dev.role == "switch_downstream" and i + 1 < len(path) and path[i + 1].role == "switch_upstream":
                    up = path[i + 1]
                    node = f"pcisw:{up.bdf}"
                    next_link = dict(gen=up.link_gen_cur, width=up.link_width_cur, gen_max=up.link_gen_max, width_max=up.link_width_max)
                    i += 2
                else:
                    node = f"pcisw:{dev.bdf}"
                    next_link = dict(gen=dev.link_gen_cur, width=dev.link_width_cur, gen_max=dev.link_gen_max, width_max=dev.link_width_max)
                    i += 1
                if node not in g:
                    g.add_node(node, kind="pcie_switch", label=f"PCIe switch {node.split(':', 1)[1]}")
                if not g.has_edge(below, node):
                    g.add_edge(below, node, kind="pcie", **below_link)
                chain.append(node)
                below, below_link = node, next_link
            if gpu.root_complex:
                hb = f"hb:{gpu.root_complex}"
                label = f"Host bridge {gpu.root_complex[3:]}"
                known = True
            else:
                hb = f"hb:unknown:{gpu.numa_node if gpu.numa_node is not None else '?'}"
                label = "PCIe (hierarchy not read)"
                known = False
            if hb not in g:
                g.add_node(hb, kind="host_bridge", label=label, known=known)
            if not g.has_edge(below, hb):
                g.add_edge(below, hb, kind="pcie", **below_link)
            chain.append(hb)
            cpu = self._socket_for(gpu)
            if not g.has_edge(hb, cpu):
                g.add_edge(hb, cpu, kind="host")
            chain.append(cpu)
            self._parent[gnode] = chain
        cpus = sorted(n for n, d in g.nodes(data=True) if d["kind"] == "cpu")
        for i, a in enumerate(cpus):
            for b in cpus[i + 1 :]:
                g.add_edge(a, b, kind="smp")

    # -- questions --
    def nodes_of(self, kind: str) -> list[str]:
        return [n for n, d in self.graph.nodes(data=True) if d["kind"] == kind]

    def nvlink_count(self, a: int, b: int) -> int:
        """Active NVLinks joining a pair: direct links, plus the bundle through NVSwitches."""
        g = self.graph
        ua, ub = gpu_node(a), gpu_node(b)
        if ua not in g or ub not in g:
            return 0
        direct = g.edges[ua, ub]["active"] if g.has_edge(ua, ub) and g.edges[ua, ub]["kind"] == "nvlink" else 0
        return direct + min(self._switch_links[ua][0], self._switch_links[ub][0])

    def nvlink_version(self, a: int) -> Optional[int]:
        memo = self.__dict__.setdefault("_nvlink_version_memo", {})  # the graph does not change once built
        if a not in memo:
            versions = [d["version"] for _, _, d in self.graph.edges(gpu_node(a), data=True) if d["kind"] == "nvlink" and d["version"]]
            memo[a] = max(versions) if versions else None
        return memo[a]

    def graph_path_class(self, a: int, b: int) -> Optional[str]:
        """The PCIe path class from the graph's structure alone; None where it was not read."""
        n = self.nvlink_count(a, b)
        if n:
            return f"NV{n}"
        if a == b:
            return "X"
        ca, cb = self._parent.get(gpu_node(a)), self._parent.get(gpu_node(b))
        if not ca or not cb:
            return None
        hb_a, hb_b = ca[-2], cb[-2]
        if not self.graph.nodes[hb_a].get("known") or not self.graph.nodes[hb_b].get("known"):
            if ca[-1] != cb[-1] and self.snapshot.sockets:
                return "SYS"
            return None
        if hb_a == hb_b:
            common = next((x for x in ca[:-2] if x in cb[:-2]), None)
            if common is None:
                return "PHB"
            bridges = ca.index(common) + cb.index(common) + 1  # switches on the way, the common one once
            return "PIX" if bridges == 1 else "PXB"
        if ca[-1] == cb[-1]:
            return "NODE"
        return "SYS"

    def path_class(self, a: int, b: int) -> Optional[str]:
        """What ``nvidia-smi topo -m`` prints for the pair: NV#, else NVML's ancestor, else the graph's."""
        return _nv_or_ancestor(self.snapshot, a, b, self.nvlink_count) or self.graph_path_class(a, b)

    def pcie_route(self, a: int, b: int) -> list[tuple[str, str, dict]]:
        """The PCIe hops between two GPUs (edges along the shortest path avoiding NVLink)."""
        import networkx as nx

        g = self.graph
        view = nx.subgraph_view(g, filter_edge=lambda u, v: g.edges[u, v]["kind"] != "nvlink")
        try:
            nodes = nx.shortest_path(view, gpu_node(a), gpu_node(b))
        except (nx.NetworkXNoPath, nx.NodeNotFound):
            return []
        return [(u, v, g.edges[u, v]) for u, v in zip(nodes, nodes[1:])]

    def expected(self, a: int, b: int) -> Expectation:
        """The bandwidth one way a pair should reach (raw link rate, before protocol overhead)."""
        n = self.nvlink_count(a, b)
        if n:
            version = min(v for v in (self.nvlink_version(a), self.nvlink_version(b)) if v) if (self.nvlink_version(a) or self.nvlink_version(b)) else None
            per = NVLINK_GBPS_PER_LINK.get(version) if version else None
            name = NVLINK_VERSION_NAMES.get(version, "?") if version else "?"
            # max capability: the links a pair would have if every link were up
            total = self._nvlink_total(a, b)
            count = f"{total}" if total == n else f"{n} of {total}"
            basis = f"{count} x NVLink {name}" + (f" at {per:g} GB/s" if per else "")
            if per is None:
                return Expectation(None, None, "nvlink", basis, f"no cited per-link figure for NVLink {name}")
            return Expectation(round(total * per, 1), round(n * per, 1), "nvlink", basis)
        hops = [d for _, _, d in self.pcie_route(a, b) if d["kind"] == "pcie"]
        if not hops:
            return Expectation(None, None, "unknown", "path not known", "the PCIe path between the GPUs was not read")
        caps = [pcie_gbps(h.get("gen_max"), h.get("width_max")) for h in hops]
        trained = [pcie_gbps(h.get("gen"), h.get("width")) for h in hops]
        if any(c is None for c in caps):
            return Expectation(None, None, "pcie", "PCIe (link speed not read)", "a PCIe link's generation or width could not be read")
        worst = min(range(len(caps)), key=lambda i: caps[i])
        h = hops[worst]
        basis = f"PCIe Gen{h.get('gen_max')} x{h.get('width_max')}"
        tr = min(t for t in trained if t is not None) if all(t is not None for t in trained) else None
        return Expectation(caps[worst], tr, "pcie", basis)

    def _nvlink_total(self, a: int, b: int) -> int:
        g = self.graph
        ua, ub = gpu_node(a), gpu_node(b)
        direct = g.edges[ua, ub]["links"] if g.has_edge(ua, ub) and g.edges[ua, ub]["kind"] == "nvlink" else 0
        return direct + min(self._switch_links[ua][1], self._switch_links[ub][1])

    def host_expected(self, a: int, b: int) -> Optional[float]:
        """A copy staged through host memory is bounded by the slower GPU's own PCIe link."""
        figures = []
        for i in (a, b):
            gpu = self.snapshot.gpu(i)
            if gpu is None:
                return None
            figures.append(pcie_gbps(gpu.pcie_gen_max, gpu.pcie_width_max))
        return min(figures) if all(f is not None for f in figures) else None

    def link_label(self, u: str, v: str) -> str:
        """NV18, NV17/18 (links down), PCIe Gen5 x16, PCIe Gen4 x8/16."""
        d = self.graph.edges[u, v]
        if d["kind"] == "nvlink":
            return f"NV{d['active']}" + (f"/{d['links']}" if d["down"] else "")
        if d["kind"] == "pcie":
            gen, width, wmax, gmax = d.get("gen"), d.get("width"), d.get("width_max"), d.get("gen_max")
            if gen is None and width is None:
                return "PCIe"
            text = f"PCIe Gen{gen if gen is not None else '?'} x{width if width is not None else '?'}"
            if wmax and width and width < wmax:
                text += f"/{wmax}"
            if gmax and gen and gen < gmax:
                text += f" (max Gen{gmax})"
            return text
        if d["kind"] == "smp":
            return "CPU interconnect"
        return ""
