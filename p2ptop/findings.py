"""Findings: facts with a subject, a severity and evidence, which the knowledge base matches.

A finding is produced by the diagnosis (snapshot + host facts), by the copy-test judgement, or by
anything else that observes the host. Its ``facts`` are flat key/value pairs from the vocabulary
below; knowledge-base entries match on those keys, so the vocabulary is the contract between the
producers (diagnose, bench) and the consumer (knowledge matcher).

This module imports nothing of ours but the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

SEVERITIES = ("ok", "info", "warning", "problem")

#: The fact keys a finding may carry, with what each means. Values are str, int, float or bool.
#: the facts of a /dev/shm that ran out or had to grow: where GPUs talk, that is NCCL's SHM transport (its segments and
#: proxy buffers are /dev/shm files, src/misc/shmutils.cc), so a text that says only this is GPU trouble though it names
#: no GPU (a pod's or container's default 64 MB /dev/shm); evidence.read and the matcher both count them as a GPU trace
SHM_TRANSPORT_FACTS = ("symptom.shm_exhausted", "symptom.fixed_by_shm_increase")

FACT_KEYS: dict[str, str] = {
    # pair facts (subject "pair:A-B")
    "pair.path": "path class of the pair: NV#, PIX, PXB, PHB, NODE, SYS",
    "pair.nvlink_count": "active NVLinks joining the pair",
    "p2p.read": "NVML P2P read status: OK, CHIPSET_NOT_SUPPORTED, GPU_NOT_SUPPORTED, TOPOLOGY_NOT_SUPPORTED, DISABLED_BY_REGKEY, NOT_SUPPORTED, UNKNOWN",
    "p2p.write": "NVML P2P write status (same values)",
    "p2p.nvlink": "NVML P2P NVLink status (same values)",
    "p2p.atomics": "NVML P2P atomics status (same values)",
    "p2p.pci": "NVML P2P PCI status (same values)",
    "pair.cross_socket": "True when the pair's path crosses the CPU socket interconnect (SYS)",
    # GPU facts (subject "gpu:N"), also merged into pair subjects for the pair's GPUs
    "gpu.name": "product name, e.g. 'NVIDIA GeForce RTX 4090'",
    "gpu.brand": "NVML brand: GEFORCE, NVIDIA, TESLA, QUADRO, ...",
    "gpu.consumer": "True for GeForce/Titan-class cards",
    "gpu.product_class": "consumer (GeForce, Titan), workstation (Quadro, RTX professional) or data-centre",
    "gpu.architecture": "Hopper, Ampere, Ada, ...",
    "gpu.nvlink_down": "number of NVLinks of the GPU that are not active",
    "tool.fewer_than_two_gpus": "number of devices a CUDA P2P sample saw when it waived for want of two (simpleP2P's "
                                "'CUDA-capable device count: 1'): GPUs CUDA does not see, or a MIG instance",
    "tool.host_copy_corrupt": "True when a copy tool says a copy between the CPU and a GPU returned wrong data (rocm_bandwidth_test's Data Path Validation FAIL): the GPU's host link corrupts transfers",
    "host.p2p_refused_only_across_models": "True when every pair a CUDA sample says cannot access its peer joins two different GPU models (two architectures, or two models beside granted pairs): the GPU mix, no platform fault",
    "host.p2p_refused_by_placement": "True when peer access is granted between some GPUs of one model and refused between others of the same model (no granted pair on NVLink): the refused pairs' placement (sockets, root complexes) decides",
    "host.nvlink_inactive_maybe_by_design": "True when the partly inactive NVLinks the paste shows may be links the board does not wire (two GPUs of one model with the same links up; the bridged H100 PCIe/NVL spare links without the model): an NVLink entry stays unsure",
    "host.nvlink_inactive_by_design": "True when every inactive NVLink the paste shows is inactive by design (links a bridged H100 NVL/PCIe card leaves unused: 6 of 18; a GPU model without NVLink)",
    "gpu.nvlink_errors": "sum of NVLink error counters of the GPU (CRC included)",
    "gpu.nvlink_replay_recovery": "sum of the NVLink replay and recovery counters of the GPU (link faults, not corrected CRC errors)",
    "gpu.pcie_degraded_under_load": "True when the PCIe link trained below its max while the GPU is busy",
    "gpu.pcie_link_errors": "PCIe link-level errors of the GPU that a tool counted over its limit (DCGM's pcie_replay_counter, pcie_count_correctable_errors)",
    "gpu.pcie_idle_downclock": "True when the PCIe generation is low only because the GPU is idle",
    "host.ranks_exceed_gpus": "True when a launch asks for more processes per node (torchrun --nproc-per-node, DeepSpeed --num_gpus, Accelerate num_processes) than the GPUs the text gives the host",
    "gpu.pstate": "performance state the paste shows (P0 busiest .. P12), as nvidia-smi prints it",
    "gpu.utilization": "GPU utilisation in percent the paste shows (nvidia-smi -q Utilization Gpu, utilization.gpu)",
    "gpu.pcie_width_cur": "current PCIe width", "gpu.pcie_width_max": "max PCIe width",
    "gpu.pcie_gen_cur": "current PCIe generation", "gpu.pcie_gen_max": "max PCIe generation",
    "gpu.fabric_state": "NVML fabric state: NOT_SUPPORTED, NOT_STARTED, IN_PROGRESS, COMPLETED",
    "gpu.fabric_status": "NVML fabric registration status ('Success' or an error)",
    "gpu.virtualization": "NONE, PASSTHROUGH, VGPU, HOST_VGPU, HOST_VSGA",
    "gpu.lost": "True when NVML said the GPU is lost",
    "gpu.busy": "True when other compute processes, utilisation or link traffic use the GPU now (copy tests not comparable)",
    # host facts (subject "host")
    "host.driver_version": "NVIDIA driver version, e.g. '580.159.04'",
    "host.driver_major": "major of the driver version, as an int",
    "host.cuda_driver_version": "CUDA version the driver supports, e.g. '13.0'",
    "host.nvml_version": "NVML library version, e.g. '13.580.159.04'",
    "host.os": "operating system name from /etc/os-release, e.g. 'Ubuntu 22.04.4 LTS'",
    "host.kernel": "kernel release, e.g. '6.8.0-45-generic'",
    "host.kernel_iommu_args": "IOMMU/ACS words of the kernel command line, e.g. 'intel_iommu=on iommu=pt' ('' when none)",
    "host.acs_redirect_bridges": "comma-separated bus ids of the bridges with ACS redirect on",
    "host.hypervisor_flag": "True when /proc/cpuinfo has the hypervisor CPU flag",
    "host.registry_dwords": "the driver's RegistryDwords parameter ('' when unset)",
    "host.dma_remap_peer_mmio": "the driver's DmaRemapPeerMmio parameter (0 or 1)",
    "host.xid_codes": "comma-separated Xid codes in the readable kernel log, e.g. '74,79'",
    "host.xid_latest": "the latest Xid code in the kernel log, as an int",
    "host.cupy_cuda_runtime": "CUDA runtime of the installed CuPy (package metadata), e.g. '12.x' or '12.4.127'",
    "host.as_root": "True when the host facts were read as root",
    "host.iommu_active": "True when an IOMMU translates DMA (sysfs iommu groups, not passthrough)",
    "host.iommu_passthrough": "True when iommu=pt or the default domain is identity",
    "host.acs_redirect": "True when a bridge between a GPU and its root port has ACS P2P redirect on",
    "host.acs_enabled": "True when a bridge's ACS Control has any bit on (lspci ACSCtl 'SrcValid+' included), redirect or not",
    "host.virtualized": "True inside a VM (hypervisor flag or GPU virtualization mode)",
    "host.hypervisor": "name of the hypervisor where known",
    "host.container": "container runtime name (docker, podman, kubernetes, ...) or absent",
    "host.shm_mb": "size of /dev/shm in MiB",
    "host.nvswitch_present": "True when NVSwitches are present or reported by NVLink remotes",
    "host.fabric_manager": "running, not running, failed, not installed, N/A; 'version mismatch' where a text says its version differs from the driver's",
    "host.fabric_manager_version": "Fabric Manager version where known",
    "host.nvidia_peermem": "True when the nvidia_peermem module is loaded",
    "host.gpu_count": "number of GPUs",
    "env.NCCL_P2P_DISABLE": "value of the variable (likewise env.NCCL_P2P_LEVEL, env.NCCL_SHM_DISABLE, env.CUDA_VISIBLE_DEVICES, ...)",
    # copy-test facts (subject "pair:A-B")
    "bench.status": "ok, failed, timeout, crashed, cancelled, unavailable (interrupted, busy, locked give no finding)",
    "bench.verdict": "healthy, slow, failing (contended and interrupted give no finding)",
    "bench.host_link": "True for a test of a GPU's own link to the host (pinned host memory <-> GPU)",
    "bench.integrity": "ok or corrupt",
    "bench.share": "measured one-way copy-engine bandwidth over expected (0..1)",
    "bench.error": "exact CUDA error text of a failed step",
    "bench.peer_access": "ok, or the error name of enabling peer access",
    # text evidence (p2ptop.evidence; FACTS.md of issue 22). Symptom facts: what went wrong.
    "error.cuda": "canonical CUDA runtime error name, e.g. 'cudaErrorPeerAccessUnsupported' (driver names and messages mapped to it)",
    "error.cuda_code": "the CUDA error's number, e.g. 217",
    "error.nccl": "NCCL result name, e.g. 'ncclSystemError', 'ncclUnhandledCudaError', 'ncclInternalError'",
    "error.text": "the error message line as written (short)",
    "error.cuda_call": "the CUDA API call the paste shows returning its CUDA error, as named (a check macro's statement, "
                       "a binding's stack frame), e.g. 'cuMemcpyDtoDAsync_v2', 'cudaMemcpyPeerAsync'",
    "error.fabric_handle_refused": "True: a fabric-handle (CU_MEM_HANDLE_TYPE_FABRIC) allocation, export or import was refused "
                                   "(CUDA_ERROR_NOT_PERMITTED, 800), as CUDA does when the process has no access to the IMEX channel",
    "symptom.hang": "True: a hang, deadlock, stuck job, watchdog timeout (卡住/卡死/挂起)",
    "symptom.wrong_results": "True: zeros, NaN, garbage, mismatches, verification errors (结果错误/全零)",
    "symptom.slow": "True: slow, low bandwidth, P2P slower than no P2P (很慢/带宽低)",
    "symptom.nvlink_unused": "True: the text says NVLink carries no traffic (not used, idle, zero throughput) while the GPUs "
                             "exchange data (没有走 NVLink)",
    "symptom.crash": "True: segfault, process killed, Xid, GPU lost",
    "symptom.fixed_by_p2p_disable": "True when the text says the job works with P2P disabled (NCCL_P2P_DISABLE=1)",
    "symptom.fixed_by_nvls_disable": "True when the text says the job works with NVLink SHARP disabled (NCCL_NVLS_ENABLE=0)",
    "symptom.fails_beyond_two_gpus": "True when the text says a run works on one or two GPUs and hangs or fails on more",
    "symptom.fails_beyond_nine_gpus": "True when the text gives the host ten or more GPUs and says the job works on nine or fewer",
    "symptom.no_cuda_device_driver_sees_gpus": "True when the text says a program sees no GPU (symptom.no_cuda_device) and that nvidia-smi or another framework sees them",
    "host.cuda_available": "True when the text shows CUDA available to the program (collect_env's 'Is CUDA available: True', a console's torch.cuda.is_available() answering True)",
    "symptom.container_without_driver": "True when the text, inside a container, says nvidia-smi is not found (the host's driver files were not mounted)",
    "symptom.container_cuda_insufficient_driver": "True when, inside a container the text names, CUDA reports its driver insufficient (cudaErrorInsufficientDriver, 35) and the text shows no driver older than the program's CUDA build: the CUDA runtime says the same when it finds no driver library at all (a container started without the NVIDIA Container Toolkit's mounts)",
    "tool.host_copy_slow": "True when a copy tool (bandwidthTest, nvbandwidth) measured pinned copies between the CPU and this GPU under a quarter of what its PCIe link gives (said, or as its model is built) or of a sibling of the same model",
    "symptom.illegal_address_across_devices": "True when a pasted program selects two or more GPUs by number and fails with an illegal memory access (cudaErrorIllegalAddress, 700)",
    "code.devices_selected": "how many GPUs a pasted program selects by number (torch.cuda.set_device(1), cudaSetDevice(1), CUDA.device!(1), cupy.cuda.Device(1), .to('cuda:1')); read only where two or more",
    "code.torch_cuda_build": "the CUDA version PyTorch was built with, as its environment report (collect_env) says ('none' for a CPU-only build)",
    "host.driver_below_cuda_build": "True where the driver is older than the minimum driver of the CUDA release a library was built with (PyTorch's collect_env, NCCL's '+cudaX.Y', a NCCL package's version; CUDA's release notes: e.g. 9.1 >= 387.26, 10.2 >= 440.33, any 11.x >= 450.80.02, 12.x >= 525.60.13, 13.x >= 580.65.06)",
    "host.build_lacks_gpu_arch": "True where a library's GPU code was built without the paste's GPU architecture: PyTorch's own capability check, or NCCL's / PyTorch's CUDA build older than the first CUDA that compiles for it (or newer than the last)",
    "host.windows": "the text names native Windows (a Windows version, a Windows path, win32): whose builds of PyTorch, TensorFlow and Paddle have no NCCL (WSL runs Linux, and is not this)",
    "host.cc_mode": "the GPUs' confidential-computing mode: on, devtools, ppcie (the multi-GPU protected PCIe mode), off, or enabled (NCCL's 'CC On': one of them)",
    "code.cross_device_read": "True where a pasted operator runs on one GPU and reads another GPU's memory directly (Caffe2's failed operator with inputs under another GPU's scope)",
    "code.peer_access_enabled_where_supported": "the framework that enables peer access itself between every pair CUDA offers it for (Caffe2): a peer read that faults there is a pair without peer access",
    "symptom.caused_by_env": "an NCCL variable's name (NCCL_P2P_USE_CUDA_MEMCPY ...): the text says the trouble comes when it is set, or went away when it was removed",
    "symptom.shm_exhausted": "True when the text says shared memory (/dev/shm) ran out or is full (共享内存不足)",
    "symptom.fixed_by_shm_increase": "True when the text says a larger /dev/shm (--shm-size, a bigger shm mount; 增大共享内存) was needed or fixed it",
    "symptom.no_cuda_device": "True: the text says CUDA or the framework sees no GPU at all (torch.cuda.is_available() is False, device_count() returns 0, no GPU detected; GPU设备找不到)",
    "symptom.gpus_missing": "True: the text says fewer GPUs are seen than the machine holds (can only see 1 GPU, the second card is not detected, device_count() returns 1 but ...; 只能识别到两张卡)",
    "symptom.fails": "True: the text says P2P/communication fails, does not work, is broken or unsupported (失败/不支持/无法)",
    "symptom.reported": "True (weak): a sentence of the text names GPU communication (P2P, NCCL, NVLink, peer access, IPC, all-reduce, between GPUs, multi-GPU; 多卡/卡间) and trouble (fails, error, issue, problem, not working, cannot, stuck, slow, wrong, how to fix; 报错/失败/问题/无法): opens leads, never offers an entry",
    "nccl.transport": "per pair: the worst transport NCCL used on the pair's channels: P2P/CUMEM, P2P/IPC, P2P/direct pointer, SHM, NET/IB, NET/Socket, ...",
    "nccl.p2p_fallback": "per pair: True when NCCL used SHM or NET on a pair that the same text/host says supports P2P",
    "nccl.p2p_off_by_path": "True when NCCL went via SHM/NET on a pair whose path crosses the CPU (PHB/NODE/SYS) with no NCCL_P2P_* setting: NCCL's default left P2P off there",
    "nccl.p2p_off_by_level": "True when NCCL went via SHM/NET on a pair whose path is above the NCCL_P2P_LEVEL set (NCCL_P2P_DISABLE not 1): the setting left P2P off there",
    "tool.p2p_slower_than_no_p2p": "True: p2pBandwidthLatencyTest/simpleP2P/nvbandwidth measured P2P enabled slower than disabled",
    "tool.verification_error": "True: simpleP2P 'Verification error', nccl-tests #wrong, bandwidthTest FAIL, nvbandwidth mismatches",
    "host.iommu_fault": "True when the kernel log holds IOMMU faults (AMD-Vi IO_PAGE_FAULT, DMAR fault)",
    # context facts: where it happened (never offer an entry on their own)
    "host.cpu_vendor": "AMD, Intel or ARM",
    "host.cpu_model": "the CPU model as written, e.g. 'EPYC 9654'",
    "host.kubernetes": "True when the text says Kubernetes (pods, k8s, GPU operator)",
    "host.bios_mentions": "comma-separated subset of ACS, IOMMU, VT-d, NPS, Above4G, ReBAR, SR-IOV mentioned in the text",
    "host.cuda_runtime_version": "CUDA runtime version of the job (NCCL's +cudaX.Y, torch's +cuXYZ), e.g. '12.4'",
    "nccl.setting_refused": "the NCCL variable whose value NCCL refused in a WARN (a topology or graph file it cannot read, an unknown "
                            "value, an algorithm list, NICs to merge that are not there), e.g. 'NCCL_TOPO_FILE'",
    "nccl.ranks_share_gpu": "True where two ranks of one NCCL communicator on one host print the same bus id (NCCL refuses it: "
                            "'Duplicate GPU detected', 'Multiple Ranks are using the same GPU/Partition')",
    "nccl.hosts_merged": "True where processes under one host name print different addresses for one interface (two machines or "
                         "containers) and NCCL (before 2.5.6, whose host hash is the name alone) connects ranks there by P2P or SHM",
    "text.trouble_before_gpu": "where the text's trouble lies before any GPU communication: 'rendezvous' where the processes "
                               "never met (PyTorch's store, torchelastic), 'launch' where the launcher could not start them "
                               "(Open MPI, PRRTE, Horovod, DeepSpeed), 'init_method' where init_process_group was given a "
                               "scheme no rendezvous handler serves, 'tool_usage' where nvidia-smi refused its own command "
                               "line and read no GPU",
    "host.all_pairs_nvlink": "True where every GPU pair the text gives a path for is joined by NVLink (NV#): no peer traffic crosses PCIe",
    "host.no_nvlink_hardware": "True where every GPU the text names is a model without NVLink (Ada, RTX 50, RTX PRO Blackwell, T4, A10/A16/A2) and nothing shows a link",
    "host.geforce_pcie_p2p": "True where every GPU the text names is a GeForce/TITAN card before Turing (GTX 10, 900, 700, TITAN X/Xp), "
                             "whose stock driver gives PCIe peer access",
    "host.cuda_ran": "True where the text shows CUDA work done on its GPUs (NCCL channels connected, a bus bandwidth measured, a run finished)",
    "nccl.version": "NCCL version, e.g. '2.18.3'",
    "gpu.mig": "True when MIG mode is enabled on the GPU",
    "gpu.bar1_mb": "BAR1 aperture total in MiB",
    "host.bar1_reassigned": "True when the kernel log shows every BAR 1 it failed to assign ('no space for') assigned on its next pass",
    "text.framework": "pytorch, tensorflow, jax, cupy, vllm, sglang, nccl-tests, deepspeed, ray or megatron",
    "text.tool": "nvidia-smi-topo, nvidia-smi-q, simpleP2P, p2pBandwidthLatencyTest, nvbandwidth, bandwidthTest, nccl-tests, lspci, dmesg, nccl-log",
    "text.language": "en or zh",
    "host.nvlink_multi_node": "True when the text says the GPUs' NVLink domain spans several hosts (multi-node NVLink, MNNVL: GB200/GB300 NVL72, a ComputeDomain over nodes): CUDA's legacy IPC handles are valid within one host only",
    "host.split_across_containers": "True when the text says one job's GPUs or ranks sit in different containers or pods (CUDA IPC between them needs a shared IPC namespace)",
    "host.one_gpu_per_process": "True when the text says each process, worker, container or pod sees one GPU of the host (GPUs split between them)",
    "text.fixed_by": "driver, nccl, cuda, kernel, bios or firmware: the text says changing that component's version fixed the trouble (or, of the driver/NCCL, that an older version fails and a newer one works)",
    "text.broken_by": "driver, nccl, cuda, kernel, bios or firmware: the text says the trouble began after changing that component's version (or, of the driver/NCCL, that an older version works and a newer one fails)",
    "text.no_gpu_by_design": "True when the text says the machine has no GPU by design (a CPU-only runner, node or instance)",
    "text.topic": "'gpu communication' when a sentence of the text (not a tool's output line) names P2P, peer access, NCCL, NVLink, GPUDirect, CUDA IPC or traffic between GPUs",
}


@dataclass
class Finding:
    id: str  # stable code, e.g. "p2p.not_supported", "pcie.degraded", "iommu.on"
    subject: str  # "host", "gpu:3", "pair:0-1"
    severity: str  # ok | info | warning | problem
    summary: str  # one line a person reads
    evidence: list[str] = field(default_factory=list)  # where it came from: "NVML P2P read = chipset not supported"
    facts: dict[str, Any] = field(default_factory=dict)  # keys from FACT_KEYS

    @property
    def pair(self) -> Optional[tuple[int, int]]:
        if self.subject.startswith("pair:"):
            a, b = self.subject[5:].split("-")
            return int(a), int(b)
        return None

    @property
    def is_problem(self) -> bool:
        return self.severity == "problem"


def pair_subject(a: int, b: int) -> str:
    return f"pair:{a}-{b}"


def gpu_subject(i: int) -> str:
    return f"gpu:{i}"


def group_pair_findings(findings: list[Finding]) -> list[list[Finding]]:
    """Findings in order, those of pairs with the same id, severity and evidence grouped together
    (shown once, "also pairs ..."): how doctor and the report keep 72-GPU hosts readable."""
    groups: dict[tuple, list[Finding]] = {}
    for f in findings:
        key = (f.id, f.severity, tuple(sorted(f.evidence))) if f.pair else (id(f),)
        groups.setdefault(key, []).append(f)
    return list(groups.values())

#: NCCL runs and logs, the cross-process IPC test and ``doctor --pid`` (p2ptop/nccl, bench/ipc.py, host/proc.py).
#: Keys defined above as well (nccl.transport, error.nccl, ...) keep the description given there.
for _key, _what in {
    "nccl.transport": "worst NCCL transport over the pair's channels: P2P/CUMEM, P2P/IPC, P2P/direct pointer, SHM, NET/IB, NET/Socket, ...",
    "nccl.p2p_fallback": "True when NCCL used SHM or NET on a pair that NVML says supports P2P",
    "nccl.version": "NCCL version, e.g. '2.28.9'",
    "nccl.status": "NCCL run status: ok, failed, timeout, crashed, cancelled, unavailable",
    "nccl.busbw": "send/recv bus bandwidth (GB/s, nccl-tests' formula) at the largest size",
    "nccl.busbw_share": "that busbw over the link's raw one-way figure (0..1)",
    "error.nccl": "NCCL result name: ncclSystemError, ncclUnhandledCudaError, ncclInternalError, ncclInvalidUsage, ncclRemoteError, ...",
    "error.cuda": "canonical CUDA runtime error name, e.g. cudaErrorPeerAccessUnsupported",
    "error.cuda_code": "the CUDA runtime error number",
    "error.text": "the error message line as written (short)",
    "ipc.kind": "CUDA IPC handle type of the cross-process test: legacy, cumem (POSIX fd), in_process",
    "ipc.namespace_differs": "True when the two IPC test processes were in different IPC namespaces",
    "ipc.pid_namespace_differs": "True when the two IPC test processes were in different PID namespaces",
    "proc.ipc_ns_shared": "True when the process given to doctor --pid shares p2ptop's IPC namespace",
    "proc.pid_ns_shared": "True when the process given to doctor --pid shares p2ptop's PID namespace",
}.items():
    FACT_KEYS.setdefault(_key, _what)
