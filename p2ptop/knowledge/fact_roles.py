"""What each fact says to the matcher: a *symptom* (something went wrong) or *context* (where it
happened), the facts that rule a class of entries out, and the one command that reads a missing fact.

The rule the matcher keeps (issue 22, kb/README.md): an entry is offered only on a symptom of its own
(its regex or error code matched a line, or one of its own conditions holds on a symptom fact).
Context (a container, a VM, a driver version, a GPU model, a CPU) only raises or lowers an entry
that a symptom already points at.

A key is a symptom key, a context key, or a *state* key whose role depends on its value: a P2P
status is a symptom when it is not OK, the fabric state when registration did not complete, an NCCL
transport when it is not P2P. Every key of ``FACT_KEYS`` that is not listed here is context; so is ``gpu.nvlink_errors`` (CRC counts are
corrected by retry and matter only as a rate, see diagnose.LINK_FAULT_COUNTERS) and every ``env.*`` (a
setting says where, the transport it led to says what went wrong).
"""

from __future__ import annotations

import re
from typing import Any, Callable, Optional

SYMPTOM, CONTEXT = "symptom", "context"

#: Keys that are symptoms whenever they hold a true, non-zero, non-empty value.
SYMPTOM_KEYS: dict[str, str] = {
    "error.cuda": "a CUDA error was printed",
    "error.cuda_code": "a CUDA error number was printed",
    "error.nccl": "an NCCL error result was printed",
    "error.text": "an error line",
    "error.cuda_call": "the CUDA call that returned the error was named",
    "error.fabric_handle_refused": "a fabric-handle allocation, export or import was refused",
    "symptom.hang": "a hang, deadlock or timeout was described",
    "symptom.wrong_results": "wrong results, zeros, NaN or corruption were described",
    "symptom.slow": "slowness or low bandwidth was described",
    "symptom.nvlink_unused": "NVLink was said to carry no traffic while the GPUs exchange data",
    "symptom.crash": "a crash, a killed process or a lost GPU was described",
    "nccl.p2p_fallback": "NCCL used SHM or NET on a pair that supports P2P",
    "nccl.setting_refused": "NCCL refused the value of one of its variables",
    "nccl.ranks_share_gpu": "two ranks of one NCCL communicator are on the same GPU",
    "nccl.hosts_merged": "NCCL took two machines under one host name for one host and connects them by P2P or SHM",
    "nccl.p2p_off_by_path": "NCCL left P2P off on a pair whose path crosses the CPU",
    "nccl.p2p_off_by_level": "NCCL left P2P off on a pair whose path is above the NCCL_P2P_LEVEL set",
    "tool.p2p_slower_than_no_p2p": "a copy tool measured P2P slower than without it",
    "tool.verification_error": "a copy tool found wrong data",
    "tool.host_copy_slow": "a copy tool measured the GPU's copies to or from the CPU far under its link",
    "gpu.nvlink_down": "NVLinks measured down",
    "gpu.nvlink_replay_recovery": "NVLink replay or recovery counted",
    "gpu.pcie_degraded_under_load": "PCIe link measured below its max under load",
    "gpu.pcie_link_errors": "PCIe replays or corrected errors counted over a limit",
    "host.driver_below_cuda_build": "the driver is older than the CUDA release a library (PyTorch, NCCL) was built with needs",
    "gpu.pcie_idle_downclock": "PCIe link measured low while idle",
    "gpu.lost": "the GPU is lost",
    "host.xid_codes": "Xid codes in the kernel log",
    "host.xid_latest": "an Xid in the kernel log",
    "host.acs_redirect": "ACS redirect measured on a bridge above a GPU",
    "host.iommu_fault": "IOMMU faults on DMA in the kernel log",
    "symptom.fixed_by_p2p_disable": "the job works only with P2P disabled",
    "symptom.fixed_by_shm_increase": "the job needed a larger /dev/shm",
    "symptom.shm_exhausted": "shared memory (/dev/shm) ran out",
    "symptom.caused_by_env": "the trouble comes with an NCCL variable set (said in words)",
    "symptom.fixed_by_nvls_disable": "the job works only with NVLink SHARP disabled (NCCL_NVLS_ENABLE=0)",
    "symptom.fails_beyond_two_gpus": "the job works on one or two GPUs and hangs or fails on more",
    "symptom.fails_beyond_nine_gpus": "the job works on nine or fewer GPUs and fails on the host's ten or more",
    "symptom.illegal_address_across_devices": "an illegal memory access in a program that selects two or more GPUs",
    "symptom.gpus_missing": "fewer GPUs seen than the machine holds was described",
    "symptom.no_cuda_device": "CUDA or the framework sees no GPU at all (described)",
    "symptom.no_cuda_device_driver_sees_gpus": "a program sees no GPU while nvidia-smi or another framework sees them (described)",
    "symptom.container_without_driver": "inside a container, nvidia-smi is not found: the host's driver files were not mounted",
    "symptom.container_cuda_insufficient_driver": "inside a container, CUDA says its driver is insufficient (35), with no driver shown too old",
    "symptom.fails": "a failure was described (fails, does not work, not supported)",
    "symptom.reported": "the text reports trouble with GPU communication in general words (weak: opens leads only)",
    "bench.error": "a copy test failed with an error",
}

_NOT_OK = {"OK", "Success", "SUCCESS", ""}

#: Keys whose role depends on the value: the predicate says when the value is a symptom.
STATE_KEYS: dict[str, Callable[[Any], bool]] = {
    # read and write only: p2p.pci is NOT_SUPPORTED on every NVLink pair, p2p.nvlink and p2p.atomics on
    # every PCIe pair, by design (diagnose judges a pair on read/write too)
    **{f"p2p.{cap}": (lambda v: str(v).upper() not in ("OK", "UNKNOWN", "")) for cap in ("read", "write")},
    "gpu.fabric_state": lambda v: str(v).upper() in ("NOT_STARTED", "IN_PROGRESS"),
    "gpu.fabric_status": lambda v: str(v) not in _NOT_OK,
    "host.fabric_manager": lambda v: str(v).lower() in ("not running", "failed", "version mismatch"),
    "nccl.transport": lambda v: not str(v).upper().startswith("P2P"),
    "nccl.status": lambda v: str(v).lower() in ("failed", "timeout", "crashed"),
    "bench.status": lambda v: str(v).lower() in ("failed", "timeout", "crashed"),
    "bench.verdict": lambda v: str(v).lower() in ("slow", "failing"),
    "bench.integrity": lambda v: str(v).lower() == "corrupt",
    "bench.peer_access": lambda v: str(v).lower() not in ("ok", ""),
}

#: Pseudo-facts of conditions: a matched log line is a symptom; a finding is one when it is a
#: warning or a problem (an info/ok finding only restates context, e.g. "P2P crosses the CPU").
LOG_ROLE = SYMPTOM


#: A line that only states a setting: NCCL's echo of an environment variable it read ("NCCL_P2P_LEVEL set by
#: environment to LOC", src/misc/param.cc ncclLoadParam / src/misc/utils.cc ncclGetEnv: INFO(NCCL_ENV, "%s set by
#: environment to %s")) or the shell line that sets one ("export NCCL_SHM_DISABLE=1", "-x NCCL_P2P_DISABLE=1",
#: "NCCL_P2P_LEVEL=LOC python ..."). A setting is context (kb/README.md, the symptom rule): an entry whose only text is
#: such a line is offered when the text also holds a complaint (COMPLAINT_EXEMPT), never on the setting alone
#: (NCCL prints the echo at INFO level on every healthy run that sets the variable on purpose).
SETTING_LINE = re.compile(
    r"\bNCCL_\w+ set by environment to\b|"
    r"^\W{0,4}(?:[\w@.:~\-\[\]]*[$#]\s*)?(?:export\s+|-x\s+|env\s+)?NCCL_\w+\s*=\s*['\"]?[\w./:,-]*['\"]?"
    r"(?:\s+(?:export\s+|-x\s+)?NCCL_\w+\s*=\s*['\"]?[\w./:,-]*['\"]?)*\s*(?:[;&|#].*)?$",
    re.I)
#: Symptom facts that are no complaint about a setting: what NCCL does because of the setting (it leaves P2P for
#: SHM/NET), "works with NCCL_P2P_DISABLE=1" (the setting as a fix), trouble named in general words only.
COMPLAINT_EXEMPT = frozenset({"nccl.p2p_fallback", "nccl.transport", "symptom.fixed_by_p2p_disable", "symptom.fixed_by_nvls_disable",
                              "symptom.reported", "finding"})


#: A line a log framework printed at its informational level: NCCL's "NCCL INFO" (src/include/debug.h: INFO() prints
#: "NCCL INFO", WARN() "NCCL WARN"; a failure is a WARN line or an error return) and glog's "I" severity, which
#: TensorFlow, XLA, Caffe and PaddlePaddle use ("I tensorflow/core/common_runtime/gpu/gpu_init.cc:45] ...",
#: "2017-06-28 16:04:54.002462: I tensorflow/...cc:779] ...", "I0614 10:20:30.123456 1234 file.cc:45] ...": glog's
#: LogMessage prefix, severity letter I/W/E/F). The framework goes on after such a line: on its own it is no failure.
#: So do the success lines of Paddle's install check (python/paddle/utils/install_check.py: "PaddlePaddle works well on 1
#: GPU.", the older fluid check's "Your Paddle Fluid works well on SINGLE GPU or CPU.").
INFO_LINE = re.compile(
    r"\bNCCL INFO\b(?!.*(?:->\s*\d+\s*$|\berror\b|\bfail))|"
    r"\bworks well on (?:SINGLE|MUTIPLE|MULTIPLE|\d+) (?:GPU|CPU)s?\b|"
    r"(?:^|[\]:]\s)I(?:\d{4} \d\d:\d\d:\d\d\.\d+\s+\d+)?\s+[\w/.\-]+\.(?:cc|cpp|cu|h|py):\d+\]", re.I)


def is_info_line(line: str) -> bool:
    """Is this line printed at a log framework's informational level (NCCL INFO, glog I), and says no failure?"""
    return bool(INFO_LINE.search(line))


def is_setting_line(line: str) -> bool:
    """Does this line only state a setting (an NCCL variable read or set), no failure?"""
    return bool(SETTING_LINE.search(line))


def role(key: str) -> str:
    """symptom, context or state (a symptom for some values): documented in kb/README.md."""
    if key in SYMPTOM_KEYS or key.startswith(("error.", "symptom.", "tool.")):
        return SYMPTOM
    if key in STATE_KEYS:
        return "state"
    return CONTEXT


def is_symptom(key: str, value: Any) -> bool:
    """Does this fact, with this value, say that something went wrong?"""
    if value is None or value is False or value == "" or value == 0:
        return False
    r = role(key)
    if r == SYMPTOM:
        return True
    if r == "state":
        return bool(STATE_KEYS[key](value))
    return False


# ---- facts that rule a class out --------------------------------------------------------------

#: Classes that need a second GPU's hardware path (a pair's link, bridge or driver support): one GPU rules
#: them out. Not the API-usage classes (peer_access_already_enabled 704, peer_access_not_enabled 705): the
#: CUDA runtime returns those on any host, one GPU included, when a program enables peer access twice or
#: disables what it never enabled (cudaDeviceEnablePeerAccess/cudaDeviceDisablePeerAccess, CUDA runtime
#: API "Peer Device Memory Access"); seen for real on a one-GPU H100 (CuPy deviceDisablePeerAccess, 705).
PAIR_CLASSES = frozenset({
    "iommu_acs_p2p_broken", "p2p_unsupported_consumer_gpu", "p2p_unsupported_topology", "vm_p2p_unavailable",
    "too_many_peers", "p2p_through_cpu_slow",
    "nvlink_peer_memory_error", "mig_p2p_unsupported", "bar1_too_small", "p2p_driver_regression",
})
#: Facts of a GPU pair (or read by a pair's test): no command reads them on a host with one GPU.
PAIR_FACTS = frozenset({"p2p.read", "p2p.write", "p2p.nvlink", "p2p.atomics", "p2p.pci", "pair.path",
                        "pair.nvlink_count", "pair.cross_socket", "bench.status", "bench.integrity",
                        "bench.verdict", "nccl.transport", "nccl.p2p_fallback"})


def one_gpu(known: Callable[[str], list]) -> bool:
    """Do the facts say the host has one GPU (or none found): no pair, no pair's fact to read?"""
    return known("host.gpu_count") in ([1], [0])


#: facts only the reading of a tool's whole output gives (the pattern of its refused pairs or inactive links): no
#: command reads them on their own, so an entry's exclude or doubt on one never names it as the fact that would decide
READ_FROM_OUTPUT = frozenset({"host.p2p_refused_only_across_models", "host.p2p_refused_by_placement",
                              "host.nvlink_inactive_maybe_by_design"})


def readable(fact: str, known: Callable[[str], list]) -> bool:
    """Can a command read this fact on the host the facts describe? A pair's fact cannot on one GPU."""
    return not (fact in PAIR_FACTS and one_gpu(known))


def first_look(known: Callable[[str], list]) -> tuple[str, str]:
    """(fact, command) to run first when no candidate names a missing fact: the pair's P2P status, or on a
    one-GPU host the GPUs the process can see (a pair's peer is hidden or is the device itself)."""
    if one_gpu(known):
        return "env.CUDA_VISIBLE_DEVICES", NEXT_COMMAND["env.CUDA_VISIBLE_DEVICES"]
    return "p2p.read", NEXT_COMMAND["p2p.read"]
#: Classes that need NVSwitch or NVLink: a host with neither rules them out (and NVLink link failures, a host with one GPU
#: and no NVSwitch: see ruled_out).
NVSWITCH_CLASSES = frozenset({"nvls_multicast_failure", "fabric_manager_not_running", "fabric_manager_version_mismatch"})
#: classes that ruled_out decides on whether the entry's own message matched (``own_text``): named by their own messages,
#: otherwise only where the text says their setup
OWN_TEXT_CLASSES = frozenset({"nccl_unavailable_platform"})
#: the classes whose cause lives in NVLink hardware (a link, NVLink peer memory, an NVSwitch fabric and its multicast)
NVLINK_CLASSES = NVSWITCH_CLASSES | {"nvlink_link_failure", "nvlink_peer_memory_error"}


#: architectures with no MIG-capable product (NVIDIA's MIG User Guide, "Supported GPUs": A30/A100 onwards, Hopper and
#: Blackwell data-centre parts; no Ada, Turing or older part has MIG), and the product class that never has it (GeForce)
NO_MIG_ARCHITECTURES = frozenset({"Kepler", "Maxwell", "Pascal", "Volta", "Turing", "Ada"})


#: architectures without NVLink multicast (CUDA's CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED is 0 before sm_90; NCCL
#: checks it before it sets NVLS up, src/transport/nvls.cc): NVLS (NVLink SHARP) cannot be what failed on them
NO_NVLS_ARCHITECTURES = frozenset({"Kepler", "Maxwell", "Pascal", "Volta", "Turing", "Ampere", "Ada"})


def no_mig_gpus(known: Callable[[str], list]) -> bool:
    """Do the facts name the GPUs, and is every one of a kind that has no MIG?"""
    classes, archs = known("gpu.product_class"), known("gpu.architecture")
    if classes and all(v == "consumer" for v in classes):
        return True
    return bool(archs) and all(v in NO_MIG_ARCHITECTURES for v in archs)


def ruled_out(failure_class: Optional[str], known: Callable[[str], list], multicast_absent: bool = False,
              nic_peer: bool = False, own_text: bool = True) -> Optional[str]:
    """Why facts rule an entry of this class out (None when they do not). ``known(key)`` gives the
    values the matcher holds for a fact, host facts first. ``multicast_absent``: the entry's message is printed
    *because* the GPUs have no CUDA multicast (an entry's "multicast_absent": Transformer Engine's initialize_ub raises
    "... does not support comm+GEMM overlap with CUDA Multicast" where CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED is 0,
    which every GPU before Hopper and every GPU without NVSwitch answers; transformer_engine/common/util/cuda_runtime.cpp
    supports_multicast): the rules that say multicast cannot exist then confirm it instead of ruling it out.
    ``nic_peer``: the entry's peer is a NIC or another PCIe device reaching GPU memory (GPUDirect RDMA), so one GPU on the
    host does not rule it out. ``own_text``: the entry's own message matched a line of the text (or the caller asks as if it
    had): a build without NCCL is named by its own messages, else only where the text names the platform (Windows)."""
    # one GPU with MIG on holds several instances, and those are what cannot talk P2P (MIG User Guide)
    mig_instances = failure_class == "mig_p2p_unsupported" and any(v is True for v in known("gpu.mig") or [])
    if failure_class in PAIR_CLASSES and known("host.gpu_count") in ([0], [1]) and not mig_instances \
            and not (nic_peer and known("host.gpu_count") == [1]):  # GPUDirect RDMA needs one GPU and a NIC, no GPU pair
        return ("no GPU found on the host" if known("host.gpu_count") == [0] else "one GPU on the host") + \
            ": no pair to talk between"
    mig = known("gpu.mig")
    if failure_class == "mig_p2p_unsupported" and mig and all(v is False for v in mig):
        return "MIG is off on every GPU"
    if failure_class == "mig_p2p_unsupported" and not any(v is True for v in mig or []) and no_mig_gpus(known):
        return "none of the GPUs can run MIG (a GeForce card, or an architecture before Ampere or without MIG)"
    if failure_class == "nccl_unavailable_platform":
        ran = known("nccl.transport") or known("error.nccl") or "nccl-log" in (known("text.tool") or [])
        if ran or (known("nccl.version") and not own_text):
            # NCCL's own log line, transport or result code: the build has NCCL (a build without it prints none of them);
            # a release named in words ("NCCL 2.2.12 downloaded from the site") beside the entry's own message (CMake's
            # "Could NOT find Nccl") is the package the build could not find, not NCCL running
            return "NCCL itself ran: its version, a transport or an NCCL result is in the text or on the host"
        if not own_text and True not in (known("host.windows") or []):
            # a Linux build of the frameworks has NCCL; without the build's own message, only a platform said to lack it
            # (native Windows) makes this class a candidate on words or context
            return "no message of a build without NCCL, and the text names no platform without it (native Windows)"
    if multicast_absent:
        return None  # the rules below say multicast cannot exist: the very cause this entry's message reports
    archs = known("gpu.architecture")
    if failure_class == "nvls_multicast_failure" and archs and all(v in NO_NVLS_ARCHITECTURES for v in archs):
        return "NVLS needs NVLink multicast, which no GPU before Hopper has"
    if failure_class == "nvlink_link_failure" and known("host.nvswitch_present") == [False] and known("host.gpu_count") == [1]:
        # NVLinks join a GPU to a peer GPU or to an NVSwitch: one GPU and no NVSwitch leave no link to fail (a host whose
        # links are down still shows them, so a link count of 0 alone rules nothing out)
        return "one GPU and no NVSwitch on the host: no NVLink to fail"
    if failure_class in NVLINK_CLASSES and known("host.no_nvlink_hardware") == [True]:
        return "the GPUs named have no NVLink (Ada, RTX 50, RTX PRO Blackwell, T4, A10/A16/A2): no link, NVSwitch or multicast"
    if failure_class == "p2p_unsupported_consumer_gpu" and known("host.geforce_pcie_p2p") == [True]:
        return ("the GPUs named are GeForce cards before Turing (GTX 10, 900, 700, TITAN X/Xp), whose stock driver gives "
                "PCIe peer access: the GeForce P2P restriction began with Turing")
    if failure_class in NVSWITCH_CLASSES and known("host.nvswitch_present") == [False]:
        links = known("pair.nvlink_count")
        fabric = known("gpu.fabric_state")
        if (links and all(not v for v in links)) or (fabric and all(str(v).upper() == "NOT_SUPPORTED" for v in fabric)) \
                or 1 in known("host.gpu_count"):
            return "no NVSwitch and no NVLink on the host"
    return None


# ---- the one command that reads a missing fact -------------------------------------------------

#: fact -> the command that reads it (on the machine where the trouble is). Order is priority: the
#: answer's one next command is the first of these that one of its candidates misses.
NEXT_COMMAND: dict[str, str] = {
    "p2p.read": "nvidia-smi topo -p2p r",
    "p2p.write": "nvidia-smi topo -p2p w",
    "pair.path": "nvidia-smi topo -m",
    "pair.nvlink_count": "nvidia-smi topo -m",
    "pair.cross_socket": "nvidia-smi topo -m",
    "gpu.consumer": "nvidia-smi -L",
    "gpu.product_class": "nvidia-smi -L",
    "gpu.name": "nvidia-smi -L",
    "host.gpu_count": "nvidia-smi -L",
    "env.CUDA_VISIBLE_DEVICES": "echo CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES; nvidia-smi -L",
    "host.acs_redirect": "sudo lspci -vvv | grep -i acsctl",
    "host.iommu_active": "cat /proc/cmdline; ls /sys/kernel/iommu_groups | wc -l",
    "host.iommu_passthrough": "cat /proc/cmdline; sudo dmesg | grep -i -e iommu -e dmar -e amd-vi",
    "host.virtualized": "systemd-detect-virt; nvidia-smi -q | grep -i virtualization",
    "gpu.virtualization": "nvidia-smi -q | grep -i -A2 virtualization",
    "bench.status": "p2ptop bench 0 1",
    "bench.integrity": "p2ptop bench 0 1",
    "bench.verdict": "p2ptop bench 0 1",
    "nccl.transport": "NCCL_DEBUG=INFO <your job> 2>&1 | grep via",
    "nccl.p2p_fallback": "NCCL_DEBUG=INFO <your job> 2>&1 | grep via",
    "nccl.p2p_off_by_level": "NCCL_DEBUG=INFO <your job> 2>&1 | grep -e 'NCCL_P2P_LEVEL set by environment' -e via; nvidia-smi topo -m",
    "nccl.p2p_off_by_path": "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH <your job> 2>&1 | grep -e via -e 'GPU/'",
    "env.NCCL_P2P_DISABLE": "NCCL_DEBUG=INFO <your job> 2>&1 | grep -e 'set by environment' -e via",
    "env.NCCL_P2P_LEVEL": "NCCL_DEBUG=INFO <your job> 2>&1 | grep -e 'set by environment' -e via",
    "env.NCCL_SHM_DISABLE": "NCCL_DEBUG=INFO <your job> 2>&1 | grep -e 'set by environment' -e via",
    "env.NCCL_NVLS_ENABLE": "NCCL_DEBUG=INFO <your job> 2>&1 | grep -i -e nvls -e 'set by environment'",
    "env.NCCL_CUMEM_HOST_ENABLE": "NCCL_DEBUG=INFO <your job> 2>&1 | grep -e 'set by environment' -e 'NCCL version'",
    "host.nvswitch_present": "nvidia-smi -q | grep -i -A3 fabric",
    "gpu.fabric_state": "nvidia-smi -q | grep -i -A3 fabric",
    "host.fabric_manager": "systemctl status nvidia-fabricmanager",
    "host.fabric_manager_version": "nv-fabricmanager --version; nvidia-smi | head -4",
    "gpu.nvlink_down": "nvidia-smi nvlink -s",
    "gpu.nvlink_replay_recovery": "nvidia-smi nvlink -e",
    "gpu.nvlink_errors": "nvidia-smi nvlink -e",
    "host.xid_codes": "sudo dmesg | grep -i xid",
    "gpu.pcie_degraded_under_load": "nvidia-smi -q -d PCIE (while the job runs)",
    "gpu.pcie_idle_downclock": "nvidia-smi -q -d PCIE (while the job runs)",
    "gpu.pcie_link_errors": "nvidia-smi -q -d PCIE | grep -i -e replay -e 'Link'",
    "host.shm_mb": "df -h /dev/shm",
    "host.container": "cat /proc/1/cgroup; ls /.dockerenv",
    "host.driver_version": "nvidia-smi | head -4",
    "host.driver_major": "nvidia-smi | head -4",
    "gpu.mig": "nvidia-smi -L",
    "gpu.bar1_mb": "nvidia-smi -q -d MEMORY | grep -A3 BAR1",
    "host.cc_mode": "sudo python3 nvidia_gpu_tools.py --devices gpus --query-cc-mode  # NVIDIA/gpu-admin-tools; or nvidia-smi conf-compute -f",
    "host.build_lacks_gpu_arch": "python -c 'import torch; print(torch.cuda.get_arch_list(), torch.cuda.get_device_capability())'; cuobjdump --list-elf $(python -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__))')/lib/libnccl.so.2 | grep -o 'sm_[0-9]*' | sort -u",
    "nccl.version": "NCCL_DEBUG=INFO <your job> 2>&1 | grep -e 'NCCL version' -e 'cudaDriverVersion'",
}

#: failure class -> the fact that first tells whether a report is of this class (a key of NEXT_COMMAND):
#: the next command of a candidate that names no missing fact of its own (a retrieval candidate). Read
#: off each class's definition (kb/entry.py FAILURE_CLASSES): what the class is about, where it is seen.
CLASS_FACT: dict[str, str] = {
    "iommu_acs_p2p_broken": "host.acs_redirect",
    "p2p_unsupported_consumer_gpu": "gpu.consumer",
    "p2p_unsupported_topology": "pair.path",
    "vm_p2p_unavailable": "host.virtualized",
    "peer_access_already_enabled": "p2p.read",
    "peer_access_not_enabled": "p2p.read",
    "too_many_peers": "host.gpu_count",
    "fabric_manager_not_running": "host.fabric_manager",
    "fabric_manager_version_mismatch": "host.fabric_manager_version",
    "fabric_manager_nothing_to_do": "host.nvswitch_present",
    "nvls_multicast_failure": "env.NCCL_NVLS_ENABLE",
    "nvlink_link_failure": "gpu.nvlink_down",
    "shm_exhausted": "host.shm_mb",
    "cuda_ipc_cross_boundary": "host.container",
    "nccl_env_misconfig": "env.NCCL_P2P_LEVEL",
    "nccl_version_bug": "nccl.version",
    "p2p_driver_regression": "host.driver_version",
    "p2p_through_cpu_slow": "pair.path",
    "driver_too_old_for_cuda": "host.driver_version",
    "pcie_link_degraded": "gpu.pcie_degraded_under_load",
    "pcie_link_idle_downclock_benign": "gpu.pcie_idle_downclock",
    "device_not_visible": "env.CUDA_VISIBLE_DEVICES",
    "mig_p2p_unsupported": "gpu.mig",
    "bar1_too_small": "gpu.bar1_mb",
    "gpu_fallen_off_bus": "host.xid_codes",
    "nvlink_peer_memory_error": "host.xid_codes",
}


def next_command(facts: list[str], ordered: bool = False) -> Optional[tuple[str, str]]:
    """(fact, command) for the first of ``facts`` a command reads: in the order given when ``ordered``
    (an entry's own: its required facts first), else in the table's priority."""
    known = [f for f in facts if f in NEXT_COMMAND]
    if not ordered:
        order = {k: i for i, k in enumerate(NEXT_COMMAND)}
        known.sort(key=order.__getitem__)
    return (known[0], NEXT_COMMAND[known[0]]) if known else None


def deciding_command(per_candidate: list[list[str]]) -> Optional[tuple[str, str]]:
    """The one next command of an answer: reads the fact that most candidates miss (ties: table order)."""
    count: dict[str, int] = {}
    for facts in per_candidate:
        for f in dict.fromkeys(facts):
            if f in NEXT_COMMAND:
                count[f] = count.get(f, 0) + 1
    if not count:
        return None
    order = {k: i for i, k in enumerate(NEXT_COMMAND)}
    best = min(count, key=lambda f: (-count[f], order[f]))
    return best, NEXT_COMMAND[best]
