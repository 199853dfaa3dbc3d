"""``read_text(text) -> Evidence``: every format parser over one paste, in a fixed order."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from ..findings import SHM_TRANSPORT_FACTS, Finding
from . import builds, cc, checks, collect_env, console, dcgm, device_use, df, errors, launch, nccl, prose, smi, system, tools, topo
from .gpus import geforce_with_pcie_p2p, no_nvlink_hardware
from .paste import SYMPTOM_PREFIXES, Collector, Paste, words_rejoined

#: (name, parser) in the order they run: structured outputs first, so their values win over prose.
PARSERS = (
    ("nvidia-smi", smi.parse),
    ("topo", topo.parse),
    ("lspci", system.parse_lspci),
    ("sysfs-links", system.parse_sysfs_links),
    ("kernel-log", system.parse_kernel_log),
    ("fabric-state", system.parse_nvml_fabric_state),
    ("cc-mode", cc.parse),
    ("df", df.parse),
    ("cuda-tools", tools.parse),
    ("dcgm", dcgm.parse),
    ("nccl", nccl.parse),
    ("env", nccl.parse_env_lines),
    ("errors", errors.parse),
    ("device-use", device_use.parse),
    ("console", console.parse),
    ("gpu-checks", checks.parse),
    ("collect-env", collect_env.parse),
    ("builds", builds.parse),
    ("prose", prose.parse),
    ("launch", launch.parse),
)
#: the readers of programs that never print on an NCCL INFO line: they read the paste with those lines blank
#: (Paste.outside_nccl, line numbers kept), so a long NCCL log costs them nothing
OUTSIDE_NCCL = frozenset({"nvidia-smi", "lspci", "sysfs-links", "kernel-log", "fabric-state", "cc-mode", "df", "cuda-tools", "dcgm"})
#: ASCII word boundaries: "禁用p2p和shm", "NCCL报错" name P2P and NCCL (a Chinese character is a Unicode word character).
#: Also GPU words that name no GPU: "peer access" (CUDA's cudaDeviceEnablePeerAccess/cudaDeviceCanAccessPeer, as servers and
#: frameworks word it: "failed to enable peer access for some device pairs"), NVIDIA's PCI vendor id 10de where a kernel or
#: firmware log gives it as an id ("vendor_id: 0x10de", "[10de:2330]", "10de:20b5"), and the peer-memory modules
#: (nvidia-peermem, nv_peer_mem) and GPUDirect's others (gdrcopy's gdrdrv/gdrapi, a GPU's BAR1 aperture), and NVLSM (the
#: NVLink Subnet Manager of NVLink-5 switch systems), Transformer Engine userbuffers' socket (/tmp/ub-ipc-socket-*): each says
#: a GPU of NVIDIA's is the subject. So do symmetric memory (PyTorch's symm_mem, the frameworks' SymmMemCommunicator), MNNVL
#: and NVLS (and the multimem operations NVLS runs), and the serving frameworks' own variables (VLLM_*, SGLANG_*).
#: A function whose name holds cuda between underscores (Triton's register_cuda_shared_memory) names CUDA too, and so do the
#: driver's libraries (libcuda.so, libnvidia-ml.so).
#: Also the GPU communication libraries whose own lines may name no GPU word (NVSHMEM, DeepEP, NIXL, UCCL, MSCCL++, BytePS, TensorRT-LLM,
#: Transformer Engine's userbuffers): "team_internal.cpp:782: ... Create multicast groups for UC heap failed" is NVSHMEM's.
#: NCCL's own lines without the word NCCL are NCCL's too: its subsystems' tags and its bootstrap's "no socket interface found".
#: And the launchers of multi-GPU jobs, whose failure lines name no GPU (torchrun / torch.distributed.elastic's "failed
#: (exitcode: -7)", DeepSpeed's launcher "exits with return code = -7", logged as "[launch.py:N:sigkill_handler]"): the job
#: they ran is the GPU communication, and so is DDP (PyTorch's DistributedDataParallel, Lightning's DDPStrategy, "ddp_spawn") and a
#: Windows traceback's path "torch\distributed\rendezvous.py", whose store errors name no GPU; torch.distributed's own words on
#: Windows name none either: TCPStore's "use_libuv was requested but PyTorch was build without libuv support"
#: (torch/csrc/distributed/c10d/TCPStore.cpp) and the elastic launcher's "Redirects are currently not supported in Windows or
#: MacOs." (torch/distributed/elastic/multiprocessing/redirects.py). NCCL inside a name is NCCL too (libnccl.so, ProcessGroupNCCL,
#: PyNcclCommunicator, NcclAllReduce). So does pidfd_getfd (and pidfd_open) with the error after it: how CUDA VMM memory (PyTorch's
#: expandable segments, UCX's cuda_ipc, FlashInfer's and symmetric memory's buffers) is shared between processes, the importer
#: copying the exporter's file descriptor; PyTorch prints "pidfd_getfd: " and strerror (c10/cuda/CUDACachingAllocator.cpp,
#: ExpandableSegment::fromShared), UCX "pidfd_open(%d) failed: %m" (uct/cuda/cuda_ipc/cuda_ipc_cache.c): a worker's
#: "failed with error 'pidfd_getfd: Operation not permitted'" names no GPU, and is a CUDA IPC that the kernel refused.
_GPU_WORDS = re.compile(
    r"\b(?:gpus?|cuda\w*|\w*nccl\w*|nvidia\w*|nvlink|nvswitch|p2p|peer[- ]to[- ]peer|geforce|tesla|quadro|rtx|gtx|cudnn|"
    r"(?:py)?nvml\w*|lib(?:cuda|nvidia)\w*|nvrm|xid|cupy|vllm\w*|sglang\w*|nvshmem\w*|deep_?ep|nixl\w*|uccl\w*|mscclpp|byteps|tensorrt[-_]llm|trt[-_]llm|userbuffers|nvbandwidth|simplep2p|tensor[-_]parallel[-_]size|torchrun|torch[./\\]distributed\w*|ddp\w*|use_libuv|redirects are currently not supported in windows|deepspeed|launch\.py:\d+:sigkill_handler|"
    r"\w*symm_?mem\w*|symmetric memory|mnnvl|nvls|multimem|[ahlvbt]\d{2,3}0?s?|[1-5]0[5-9]0(?:\s*ti)?s?|"
    r"(?:enable|enabling|disable|disabling|can(?:not)?|no)[ _]peer[ _]access|peer[ _]access[ _](?:is[ _])?(?:not|already|unsupported|enabled|disabled|fail\w*|error\w*)|"
    r"peer[ _]?mem\w*|nv_peer_mem|gdr(?:drv|api|copy)|gpudirect|bar1|nvlsm|imex|ub-ipc-socket|pidfd_(?:getfd|open)\W{1,4}(?:\(\d+\) failed: )?"
    r"(?:operation not permitted|no such process|function not implemented|bad file descriptor)|"
    # NCCL's own words that name no NCCL: its subsystems' tags (NET/Socket, NET/IB, NET/Plugin) and its bootstrap's
    # "no socket interface found" (src/bootstrap.cc since 2019), which a paste may keep without the tag before it
    r"net/(?:socket|ib|plugin)|no socket interface found|"
    # nccl-tests' programs (src/*.cu: all_reduce_perf, all_gather_perf, ..., built as build/*_perf, *_perf_mpi with MPI=1)
    r"(?:all_reduce|all_gather|reduce_scatter|broadcast|reduce|alltoall|sendrecv|scatter|gather|hypercube)_perf(?:_mpi)?|"
    # NVIDIA's Kubernetes device plugin's own words for its NVML pair queries (alignedAlloc; a kubelet event names no GPU)
    r"unable to get device link information)\b|_cuda_\w+|(?:vendor[ _]?id\W{1,3}|\[|\b)(?:0x)?10de(?=[:\]]|\b(?![.:]\d))|显卡|显存|多卡|单卡|gpu|"
    # a count of cards in Chinese ("4 卡训练", "8卡", "两张卡"): 卡 after a count is a card, not 卡住 (stuck)
    r"(?<![\d.])\d{1,2}\s*[张块]?\s*卡(?![住死顿在着])|[两二三四六八]\s*[张块]\s*卡(?![住死顿在着])|"
    # QEMU's iommufd backend when a passed-through device's PCI BAR cannot be mapped for peer DMA (backends/iommufd.c)
    r"iommu_ioas_map failed: [a-z ]+, pci bar\?|"
    # torch.cuda.get_device_properties' own check of the index (torch/cuda/__init__.py: raise AssertionError("Invalid device
    # id")): a CUDA device is its subject, whatever words the writer puts around it
    r"assertionerror: invalid device id", re.ASCII)


@dataclass
class Evidence:
    """The facts read from one paste. See the package docstring for the contract."""

    findings: list[Finding] = field(default_factory=list)
    kinds: list[str] = field(default_factory=list)
    gpu_related: bool = False
    notes: list[str] = field(default_factory=list)
    structured: dict[str, Any] = field(default_factory=dict, repr=False)
    lines: int = 0
    failed_parsers: list[str] = field(default_factory=list)

    def facts_by_subject(self) -> dict[str, dict[str, Any]]:
        """{subject: {key: value}}; where a key has several values (several CUDA errors) the first."""
        out: dict[str, dict[str, Any]] = {}
        for f in self.findings:
            d = out.setdefault(f.subject, {})
            for k, v in f.facts.items():
                d.setdefault(k, v)
        return out

    def evidence_for(self, subject: str, key: str) -> list[str]:
        """Where a fact came from: ["line 14 of the paste: ..."]."""
        return [e for f in self.findings if f.subject == subject and key in f.facts for e in f.evidence]

    @property
    def symptom_findings(self) -> list[Finding]:
        """The findings of the symptom itself (an entry needs at least one of them)."""
        return [f for f in self.findings if any(k.startswith(SYMPTOM_PREFIXES) for k in f.facts)
                and f.severity in ("problem", "warning")]

    @property
    def nccl_log(self):
        """The p2ptop.nccl.NcclLog of the paste, or None."""
        return self.structured.get("nccl")

    def to_dict(self) -> dict[str, Any]:
        return {
            "kinds": list(self.kinds),
            "gpu_related": self.gpu_related,
            "lines": self.lines,
            "notes": list(self.notes),
            "failed_parsers": list(self.failed_parsers),
            "facts": self.facts_by_subject(),
            "findings": [{"id": f.id, "subject": f.subject, "severity": f.severity, "summary": f.summary,
                          "evidence": list(f.evidence), "facts": dict(f.facts)} for f in self.findings],
        }


#: NCCL's own log prefix (src/include/debug.h: "host:pid:tid [dev] NCCL INFO|WARN ..."): the prose sample blanks these
#: lines, yet a log of nothing but them (channels, rings, ranks) is NCCL's, so GPUs'
_NCCL_PREFIX = re.compile(r"\bNCCL (?:INFO|WARN)\b")


def _names_gpu_words(text: str, paste: Optional[Paste] = None) -> bool:
    """Do the GPU words occur in the text's sample (of ``paste``, the text read already, where given), or in a short
    paste once a word a single hard wrap cut is whole again (paste.words_rejoined: "The N" / "VIDIA driver")?"""
    if _GPU_WORDS.search((paste or Paste(text)).sample(500_000, 100_000).text) is not None:
        return True
    joined = words_rejoined(text)
    return bool(joined) and _GPU_WORDS.search(Paste(joined).sample(500_000, 100_000).text) is not None


def prefixes_name_gpus(prefixes: list[str]) -> bool:
    """Do the prefixes taken off a paste's lines (``Paste.prefixes``, the matcher's ``Log.prefixes``) name GPUs, CUDA,
    NCCL or P2P (a logger's source file "CUDASymmetricMemory.cu", "ProcessGroupNCCL.cpp")? Each file name's words apart
    (CamelCase and the suffix split), as the GPU words are matched whole."""
    words = " ".join(re.sub(r"([a-z])([A-Z])|([A-Z]+)([A-Z][a-z])|[._/:\[\]]", r"\1\3 \2\4", p) for p in prefixes)
    return _GPU_WORDS.search(words.lower()) is not None


def gpu_trace(text: str) -> bool:
    """Does the text name GPUs, CUDA, NCCL, NVLink, P2P or a GPU model anywhere (first 500 KB, last 100 KB)?"""
    if _names_gpu_words(text):
        return True
    return _NCCL_PREFIX.search(text[:500_000]) is not None or _NCCL_PREFIX.search(text[-100_000:]) is not None


trouble_said = prose.trouble_said  # prose's vocabulary: its trouble words, negations, tool lines and legends


def _root_bus(bus: Optional[str]) -> bool:
    """Is this GPU bus id ("0000:00:1b.0") on a root bus, where a VM places its passed-through devices? On a physical
    host a discrete GPU is a PCIe endpoint behind a root port (or a switch below one), so its bus is the port's secondary
    bus, 01 or higher: bus 00 holds the host bridge and the root complex's integrated endpoints only (PCIe Base
    Specification, "Root Complex Integrated Endpoint"). QEMU/KVM plugs devices straight into its root bus (i440fx's
    PCI bus 0; q35's pcie.0, QEMU docs/pcie.txt), as AWS's and GCP's GPU VMs show them ("00000000:00:1E.0",
    NCCL's busId "1e0"), and Hyper-V's virtual PCI gives each device a root bus of its own domain (Azure's
    "0001:00:00.0"). 0000:00:00.0 itself (the host bridge's address, or a GPU whose bus id reads as zeros) says nothing."""
    if not bus:
        return False
    parts = bus.split(":")
    if len(parts) != 3 or parts[1] != "00":
        return False
    return not (parts[0].strip("0") == "" and parts[2].split(".")[0] == "00")


def _all_pairs_nvlink(c) -> None:
    """``host.all_pairs_nvlink``: every GPU pair the text gives a path for is joined by NVLink (nvidia-smi topo -m's NV#).
    Their peer traffic does not cross PCIe, where ACS redirects peer requests and the IOMMU translates DMA (NCCL's
    troubleshooting guide, "PCI Access Control Services (ACS)"): neither can hang or corrupt it."""
    paths = [(f.line, str(f.value)) for (subject, key), f in c.facts.items() if key == "pair.path" and subject.startswith("pair:")]
    if paths:
        if all(p.startswith("NV") for _, p in paths):
            c.add("host", "host.all_pairs_nvlink", True, min(line for line, _ in paths), severity="info",
                  summary=f"every GPU pair the text gives a path for ({len(paths)}) is joined by NVLink: no peer traffic crosses PCIe")
        return
    # no matrix, but an NVSwitch fabric (HGX/DGX named, a model built only into NVSwitch baseboards, the cloud's 8-GPU HGX
    # machines): its switches join every GPU to every other by NVLink (NVIDIA's HGX/DGX architecture; topo -m shows NV#
    # for every pair), unless the text says a GPU's NVLinks are down or carry nothing (then its peers may go over PCIe)
    switch = c.facts.get(("host", "host.nvswitch_present"))
    if switch is not None and switch.value is True and not any(k in ("gpu.nvlink_down", "symptom.nvlink_unused") for (_s, k) in c.facts):
        c.add("host", "host.all_pairs_nvlink", True, switch.line, severity="info",
              summary="an NVSwitch fabric joins every GPU pair by NVLink: no peer traffic crosses PCIe")


#: facts that show NVLink on the text's host: a pair joined by NVLink, links counted, measured or said idle, NVSwitches
_NVLINK_SEEN = ("pair.nvlink_count", "gpu.nvlink_down", "gpu.nvlink_replay_recovery", "gpu.nvlink_errors", "symptom.nvlink_unused",
                "host.nvswitch_present", "p2p.nvlink")


def _every_gpu_named(c, holds: Callable[[str], bool]):
    """The first ``gpu.name`` fact where every GPU the text names holds ``holds``: the tools' names and every model its
    sentences name (prose keeps them all, ``structured["models_named"]``); None where one does not, or none is named."""
    names = [f for (_s, k), f in c.facts.items() if k == "gpu.name" and f.value]
    if not names or not all(holds(str(v)) for v in [f.value for f in names] + c.structured.get("models_named", [])):
        return None
    return min(names, key=lambda f: f.line)


def _no_nvlink_hardware(c) -> None:
    """``host.no_nvlink_hardware``: every GPU the text names is a model without NVLink (gpus.no_nvlink_hardware: Ada, RTX
    50, RTX PRO Blackwell, T4, A10/A16/A2), and nothing in it shows an NVLink (an NV# path, a link counted or measured,
    an NVSwitch): no link can fail, no NVSwitch or multicast exists, no peer memory is reached over NVLink."""
    first = _every_gpu_named(c, no_nvlink_hardware)
    if first is None:
        return  # (the sentences' other models too: "the same code works on our A100 server" names a host with NVLink)
    for (_s, k), f in c.facts.items():
        if k in _NVLINK_SEEN and f.value not in (None, False, 0, "NOT_SUPPORTED") \
                or (k == "pair.path" and str(f.value).startswith("NV")):
            return
    c.add("host", "host.no_nvlink_hardware", True, first.line, severity="info",
          summary=f"{first.value} has no NVLink (nor has any GPU the text names): no NVLink, NVSwitch or NVLink multicast on this host")


def _geforce_pcie_p2p(c) -> None:
    """``host.geforce_pcie_p2p``: every GPU the text names (the tools' names and every model its sentences name) is a
    GeForce/TITAN card before Turing (gpus.geforce_with_pcie_p2p: GTX 10, 900, 700, TITAN X/Xp), whose stock driver
    gives PCIe peer access: the GeForce driver policy (no PCIe P2P, from Turing on) is not why a pair of them cannot talk."""
    first = _every_gpu_named(c, geforce_with_pcie_p2p)
    if first is None:
        return
    c.add("host", "host.geforce_pcie_p2p", True, first.line, severity="info",
          summary=f"{first.value} is a GeForce card before Turing (as is every GPU the text names): its stock driver gives "
                  "PCIe peer access; the GeForce P2P restriction began with Turing")


def _cuda_ran(c) -> None:
    """``host.cuda_ran``: the text shows CUDA work done on its GPUs: NCCL connected a pair's channels (a transport read),
    measured a bus bandwidth or finished a run, a copy test ran. On an NVSwitch host CUDA does not initialise while the
    fabric is down (Fabric Manager user guide: cudaErrorSystemNotReady, 802, until the GPUs register with the fabric), so
    work done there speaks against Fabric Manager not running (a doubt of that entry, not a rule: a multi-node log can
    hold a healthy node's channels and a failing node's 802)."""
    line = None
    for (_s, key), f in c.facts.items():
        if key in ("nccl.transport", "nccl.busbw") or (key in ("nccl.status", "bench.status") and f.value == "ok"):
            line = f.line if line is None else min(line, f.line)
    if line is not None:
        c.add("host", "host.cuda_ran", True, line, severity="info",
              summary="CUDA work ran on the text's GPUs (NCCL channels connected, bandwidth measured or a run finished)")


def _container_cuda_insufficient_driver(c) -> None:
    """``symptom.container_cuda_insufficient_driver``: inside a container the text names, CUDA reports its driver
    insufficient (cudaErrorInsufficientDriver, 35), and the text shows no driver older than the program's CUDA build
    (``host.driver_below_cuda_build``, read before). CUDA images carry no driver: the NVIDIA Container Toolkit mounts the
    host's driver libraries (libcuda.so.1 with its 'compute' capability, nvidia-smi with 'utility') into containers started
    with --gpus, --runtime=nvidia or a pod's nvidia.com/gpu, and the CUDA runtime that finds no driver library at all
    reports that same 35 ("CUDA driver version is insufficient for CUDA runtime version"; the toolkit's "Specialized
    Configurations with Docker": 'compute' is "required for CUDA and OpenCL applications"; nvidia-docker#400: fixed by
    `--gpus all`; seen on the H200 with libcuda.so.1 hidden, benchmarks/results/h200x1-2026-12-02m). So beside an image's
    CUDA newer than the host's driver, the container started without the host's driver is a cause."""
    container = c.facts.get(("host", "host.container"))
    error = c.facts.get(("host", "error.cuda_code"))
    if container is None or not container.value or error is None or error.value != 35:
        return
    if c.get("host", "host.driver_below_cuda_build") is True:
        return  # the text shows the driver older than the build: the runtime's 35 says just that
    c.add("host", "symptom.container_cuda_insufficient_driver", True, error.line, severity="problem",
          summary=f"inside a container ({container.value}, line {container.line}) CUDA says its driver is insufficient "
                  "(35): also what CUDA says where the container has no driver library at all (started without the "
                  "NVIDIA Container Toolkit's mounts)")


def _vm_by_bus_ids(c) -> None:
    """host.virtualized where every GPU bus id the paste gives (nvidia-smi, topo, lspci, CUDA samples, NCCL's ranks
    and pre-2.19 channel brackets) is on a root bus (_root_bus)."""
    if c.has("host", "host.virtualized"):
        return
    seen: dict[str, int] = {}
    if c.bus_to_gpu:
        first: dict[str, int] = {}
        for (subject, _k), f in c.facts.items():
            if subject.startswith("gpu:"):
                first[subject] = min(first.get(subject, f.line), f.line)
        for bus, gpu in c.bus_to_gpu.items():
            seen.setdefault(bus, first.get(f"gpu:{gpu}", 1))
    log = c.structured.get("nccl")
    if log is not None:
        for r in log.ranks:
            seen.setdefault(r.bus_id, r.line)
        for ch in log.channels[:2000]:
            for b in (ch.src_bus, ch.dst_bus):
                if b:
                    seen.setdefault(b, ch.line)
    if seen and all(_root_bus(b) for b in seen):
        bus, line = next(iter(seen.items()))
        c.add("host", "host.virtualized", True, line, severity="info", inferred=True,
              summary=f"the GPUs sit on a PCI root bus ({', '.join(list(seen)[:2])}): where a VM places passed-through "
                      "devices (on a physical host a GPU is behind a root port, bus 01 or higher)")


def _busy(c, subject: str) -> bool:
    """Does the paste show this GPU busy (utilisation 50 % or more, in a performance state P0-P2 where one is given)?"""
    util, pstate = c.get(subject, "gpu.utilization"), c.get(subject, "gpu.pstate")
    return isinstance(util, int) and util >= 50 and (not isinstance(pstate, str) or pstate in ("P0", "P1", "P2"))


#: the words of "I get an error" without what fails ("get an error", "got this error", "the following warning")
_AN_ERROR_SAID = re.compile(r"\b(?:errors?|exceptions?|warnings?)\b", re.I)


def _error_is_a_benign_warning(c) -> None:
    """"I get an error" where the only warning the pasted NCCL log shows is one NCCL prints on healthy hosts
    (nccl.BENIGN_WARN: "Failed to open libibverbs.so", a WARN up to NCCL 2.10 and an INFO since, after which NCCL goes on
    over sockets), and the paste names no error, failing call or other symptom: the error the person means is that
    line, which reports no failure, so "it fails" is not taken as a symptom (a note says why)."""
    log = c.structured.get("nccl")
    fails = c.facts.get(("host", "symptom.fails"))
    if log is None or fails is None or not log.warnings:
        return
    if not all(nccl.BENIGN_WARN.search(w.message) for w in log.warnings):
        return
    if not _AN_ERROR_SAID.search(c.paste.line(fails.line)):
        return
    if any(k.startswith("error.") or (k.startswith(SYMPTOM_PREFIXES) and k not in ("symptom.fails", "symptom.reported"))
           for (_s, k) in c.facts):
        return
    c.withdraw("host", "symptom.fails")
    first = log.warnings[0]
    c.notes.append(f"the error the text speaks of (line {fails.line}) is, as far as the paste shows, NCCL's "
                   f"'{first.message[:60]}' (line {first.line}): it reports no failure (NCCL goes on over sockets)")


def derive(c) -> None:
    """Facts that follow from what the parsers read, by the live host's own rules (p2ptop/diagnose.py):
    "I get an error" where the only warning is one NCCL prints on healthy hosts is no symptom (_error_is_a_benign_warning);
    a GPU whose PCIe link trained narrower than its max (lspci LnkSta below LnkCap, nvidia-smi -q Link
    Width Current below Max) is degraded whatever its load: GPUs lower the link's generation when idle,
    never its width. A generation below max at full width is what an idle GPU shows (nvidia-smi's manual:
    the current link generation and width "may be reduced when the GPU is not in use"): gpu.pcie_idle_downclock,
    whose entry is benign and asks for a reading under load, unless the paste shows that GPU busy (nvidia-smi's
    utilisation 50 % or more, P0-P2): then it is gpu.pcie_degraded_under_load. "Max" is the link's max where the paste gives it,
    else the generation another GPU of the same model shows at the same width in the same paste (nvtop)."""
    tools.refusals_across_models(c)
    tools.refusals_by_placement(c)
    builds.derive(c)
    nccl.off_by_level(c)
    _vm_by_bus_ids(c)
    _all_pairs_nvlink(c)
    _no_nvlink_hardware(c)
    _geforce_pcie_p2p(c)
    _cuda_ran(c)
    _container_cuda_insufficient_driver(c)
    _error_is_a_benign_warning(c)
    launch.never_met(c)
    widths: dict[str, tuple[int, Any]] = {}
    for (subject, key), fact in list(c.facts.items()):
        if key != "gpu.pcie_width_cur" or not subject.startswith("gpu:"):
            continue
        cur, top = fact.value, c.get(subject, "gpu.pcie_width_max")
        widths[subject] = (fact.line, cur)
        if isinstance(cur, int) and isinstance(top, int) and 0 < cur < top:
            c.add(subject, "gpu.pcie_degraded_under_load", True, fact.line, severity="problem",
                  summary=f"{subject}: PCIe link x{cur} of x{top} (a width below max is no idle power saving)")
    for subject, (line, width) in widths.items():
        gen, width_max = c.get(subject, "gpu.pcie_gen_cur"), c.get(subject, "gpu.pcie_width_max")
        if not isinstance(gen, int) or not isinstance(width, int) or c.has(subject, "gpu.pcie_degraded_under_load"):
            continue
        if isinstance(width_max, int) and width < width_max:
            continue
        top = c.get(subject, "gpu.pcie_gen_max")
        if not isinstance(top, int):
            name = c.get(subject, "gpu.name")
            peers = [c.get(s, "gpu.pcie_gen_cur") for s, (_, w) in widths.items()
                     if s != subject and w == width and name and c.get(s, "gpu.name") == name]
            top = max((g for g in peers if isinstance(g, int)), default=None)
        if isinstance(top, int) and 0 < gen < top and _busy(c, subject):
            # the paste shows the GPU at work (P0-P2 at half its utilisation or more) when the link was read: a GPU
            # raises its link to the top generation under load, so a lower one is the link's fault, not power saving
            c.add(subject, "gpu.pcie_degraded_under_load", True, line, severity="problem",
                  summary=f"{subject}: PCIe Gen{gen} x{width} of Gen{top} while the GPU is busy "
                          f"({c.get(subject, 'gpu.utilization')} % utilisation)")
        elif isinstance(top, int) and 0 < gen < top:
            c.add(subject, "gpu.pcie_idle_downclock", True, line, severity="info",
                  summary=f"{subject}: PCIe Gen{gen} x{width}, Gen{top} possible: a lower generation at full width "
                          "is what an idle GPU shows (read it again under load)")


def read_text(text: str, host_links: Optional[Callable[[str, str], Optional[tuple[float, str]]]] = None) -> Evidence:
    """Read every format this package knows out of ``text``. Never raises on what the text holds: a
    parser that fails is named in ``failed_parsers`` and the others go on. ``host_links(bus_a, bus_b)``: the link
    between two GPUs of the host the text is read beside (GB/s one way, what it is; ``Collector.host_links``)."""
    if not isinstance(text, str):
        text = text.decode("utf-8", "replace") if isinstance(text, (bytes, bytearray)) else str(text)
    paste = Paste(text)
    c = Collector(paste, host_links=host_links)
    if paste.relined:
        c.notes.append(f"the paste had lost its line breaks: {paste.relined} restored where programs start their lines "
                       "(line numbers count the restored lines)")
    if paste.reflowed:
        c.notes.append(f"the paste had been reflowed (a mail client, an archive, a fixed-width page): {len(paste.reflowed)} "
                       "line break(s) inside its messages read as spaces, so a message's facts are on the line where it starts")
    failed: list[str] = []
    for name, parser in PARSERS:
        c.paste = paste.outside_nccl() if name in OUTSIDE_NCCL else paste
        try:
            parser(c)
        except Exception as exc:  # noqa: BLE001 - one broken parser must not lose the others' facts
            failed.append(f"{name}: {type(exc).__name__}: {exc}")
    c.paste = paste
    try:
        derive(c)
    except Exception as exc:  # noqa: BLE001
        failed.append(f"derive: {type(exc).__name__}: {exc}")
    gpu_related = bool(set(c.kinds) - {"prose"}) or any(
        f.facts and next(iter(f.facts)).startswith(("error.", "gpu.", "nccl.", "p2p.", "pair.", "host.acs_",
                                                     "symptom.gpus_missing", "symptom.no_cuda_device") + SHM_TRANSPORT_FACTS)
        for f in c.findings)
    if not gpu_related:
        # the text's words, or what a launcher's or logger's prefix taken off its lines says (PyTorch's "[W1129 ...
        # CUDASymmetricMemory.cu:247]", a file of CUDA's)
        gpu_related = _names_gpu_words(text, paste) or bool(paste.prefixes) and prefixes_name_gpus(paste.prefixes)
    return Evidence(findings=c.findings, kinds=c.kinds, gpu_related=gpu_related, notes=c.notes,
                    structured=c.structured, lines=len(paste.lines), failed_parsers=failed)
