"""What people write, in English and Chinese: GPU models, hypervisors and passthrough, containers and
Kubernetes, symptoms, "works with NCCL_P2P_DISABLE=1", versions, BIOS words, the CPU.

Facts (subject "host"): gpu.name, gpu.product_class, gpu.consumer, gpu.architecture (a model named
in the text), host.virtualized, host.hypervisor, gpu.virtualization ("PASSTHROUGH"),
host.container, host.kubernetes, symptom.hang, symptom.wrong_results, symptom.slow, symptom.nvlink_unused, symptom.crash,
symptom.fixed_by_p2p_disable, symptom.fails, symptom.gpus_missing (fewer GPUs seen than installed),
symptom.no_cuda_device (CUDA or the framework sees no GPU: is_available() False, device_count() 0, GPU设备找不到), host.fabric_manager ("not running"/"failed" in words),
gpu.bar1_mb (a BAR size in words), host.nvswitch_present (HGX/DGX named, or "without NVSwitch"), pair.cross_socket (QPI/UPI, different sockets), gpu.mig (MIG in words),
error.cuda/error.cuda_code (a CUDA error number in a sentence), host.driver_version, host.driver_major, nccl.version,
host.cuda_runtime_version, host.bios_mentions, host.cpu_vendor, host.cpu_model, text.language;
text.fixed_by / text.broken_by (a change of the driver/NCCL/CUDA said to fix or start the trouble, or two driver or NCCL
versions contrasted: one said to work, another to fail, each in its own clause; text.broken_by also for a release named
where the trouble starts or as a regression: "starting from nccl-X", "since NCCL X", "NCCL X has a performance regression");
symptom.caused_by_env (an NCCL variable said to bring the trouble: set in a condition the trouble follows, named as its
cause, or removed to fix it; never NCCL_DEBUG*, never a variable said to make it work); host.split_across_containers (one
job's GPUs or ranks in different containers or pods); host.nvlink_multi_node (an NVLink domain said to span several hosts:
MNNVL, an NVL72 over nodes); pair.path PIX (the GPUs said to sit under
one PCIe switch/PLX) or a topo code said between two named GPUs; gpu.consumer (GeForce/consumer/gaming cards named as a
class, where no model is named); symptom.fails also for an error said to have been seen ("I get the following error",
"it reports error", "the error above occurs"), "used to work", "works only on/with", peer access "not available";
gpu.virtualization "VGPU" (NVIDIA vGPU named), gpu.lost (a GPU said to vanish), gpu.nvlink_down and
gpu.nvlink_replay_recovery (NVLink down / replay errors said in words: recorded as 1, "at least one"),
nccl.transport (NCCL said to go via SHM or NET), pair.path (a topo code said in a sentence), p2p.read
(topo -p2p's CNS/GNS/TNS/NS said in a sentence, or CUDA's peer-access query said to answer no).

symptom.reported (weak): the text REPORTS trouble with GPU communication in general words, where no
more precise symptom may be named. It holds when one sentence (a line, cut at . ! ? 。！？) names
both a topic of GPU communication and a word of trouble:

- topic, strong: P2P, peer-to-peer, peer access/memory, NCCL, NVLink, NVSwitch, CUDA IPC, "between
  (the/two/both/N) GPUs/cards", GPU-to-GPU, inter-GPU, multi-GPU, multiple GPUs; 多卡, 双卡, 卡间,
  显卡之间, GPU 之间, 点对点. Weak topics, counted only in a text that also names a GPU/CUDA/显卡:
  all-reduce/all-gather/reduce-scatter/all-to-all, collectives, IPC, DDP/torch.distributed,
  tensor parallel; 通信, 分布式, 张量并行, 互联. Sources: the terms of NCCL's user guide
  (https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/usage/collectives.html,
  .../docs/troubleshooting.html), CUDA's "Peer Device Memory Access" and IPC API sections
  (https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__PEER.html), PyTorch's distributed
  docs (https://pytorch.org/docs/stable/distributed.html), vLLM's distributed-inference docs
  (tensor parallel).
- trouble: fail(s/ed/ure), error(s), issue(s), problem(s), not working / doesn't work / won't,
  can't, cannot, unable, stuck, hang/hung, freeze, crash, abort, slow, low bandwidth, wrong,
  incorrect, broken, bug, timeout/timed out, "how to fix/solve/debug", "any idea/help"; 报错, 失败,
  问题, 不能, 无法, 出错, 错误, 异常, 不行, 怎么办, 如何解决, 卡住, 卡死, 慢, 不通, 不工作, 不支持,
  求助. The words GitHub's and NVIDIA's forum issue templates ask reporters to use ("Describe the
  bug", "what went wrong", "error messages") and NCCL's troubleshooting page's headings.
Lines of tool output are not sentences: NCCL INFO lines (outside this parser's view), nccl-tests
comment rows ("#  ", "#wrong"), legends, "Device=N ... Peer", "P2P=Enabled/Disabled" matrices.
It is weak (fact_roles.SYMPTOM_KEYS; matcher.WEAK_SYMPTOMS): it never offers an entry, it only
opens the matcher's leads (unsure) and the answer's one next command.

Every pattern runs once over the lower-cased text outside NCCL INFO lines, its first 96 KB and last
32 KB (paste.SAMPLE_HEAD / SAMPLE_TAIL: people write their sentences around a log, not inside it;
case-sensitive patterns on lower case are fast), and only the first match of each is kept. A pattern
whose literals the sample lacks is not run at all (regex_safety.LiteralGate), so a 20 MB paste costs
a few passes of the regex engine.
"""

from __future__ import annotations

import re
from itertools import islice
from typing import Optional

from ..knowledge.regex_safety import LiteralGate
from . import nccl, nccl_tests, smi, tools
from .gpus import EIGHT_GPU_BOARD_MACHINE, MODEL_IN_PROSE, classify, count_of, nvswitch_board_note
from .launch import gpus_said
from .nccl import BENIGN_WARN
from .paste import GPU_TOOLS, SAMPLE_HEAD, SAMPLE_TAIL, Collector, Paste


def _same_version(a: str, b: str) -> bool:
    """Two driver versions agree as far as both are written ("535.104" and "535.104.05" agree; "535.104" and
    "535.129.03" do not)."""
    pa, pb = a.split("."), b.split(".")
    n = min(len(pa), len(pb))
    return [int(x) for x in pa[:n]] == [int(x) for x in pb[:n]]


def _width_below_max(low: str) -> tuple[int, int, int] | None:
    """(offset, current, best) of a PCIe width said to run below what the link or slot offers, in the first of the
    three ways people say it that holds (_WIDTH_DOWN, _WIDTH_CUR_MAX, _WIDTH_SLOT), or None."""
    for rx in (_WIDTH_DOWN, _WIDTH_CUR_MAX, _WIDTH_SLOT):
        m = rx.search(low)
        if not m:
            continue
        g = [int(x) if x else None for x in m.groups()]
        if rx is _WIDTH_DOWN:
            cur, top = g[0], g[1]
        elif rx is _WIDTH_CUR_MAX:  # current first (groups 1-4) or max first (groups 5-8)
            cur, top = (g[0] or g[1], g[2] or g[3]) if g[0] or g[1] else (g[6] or g[7], g[4] or g[5])
        else:
            cur, top = g[0] or g[1], g[2] or g[3]
        if cur < top <= 16:
            return m.start(), cur, top
    return None


def _rx(pattern: str) -> LiteralGate:
    """A pattern of this reader: ASCII word boundaries, so an English word written against Chinese counts as a
    word ("hang住", "NCCL 2.21.5版本", "出现nan", "p2p不通": Python's Unicode \\b sees no boundary between
    "hang" and "住", both being word characters). Its searches of the sample first ask whether the sample holds the
    literals every match needs (regex_safety.LiteralGate: most patterns are absent from most pastes)."""
    return LiteralGate(re.compile(pattern, re.ASCII))


#: WSL named: a hypervisor of its own (below), and no native Windows (WSL runs Linux)
_WSL_WORDS = r"\bwsl ?2?\b|windows subsystem for linux"
_HYPERVISORS = (
    ("Proxmox", r"proxmox|\bpve\b"),
    ("ESXi", r"\besxi\b|vsphere|vmware"),
    # WSL 2 runs Linux in a Hyper-V utility VM with paravirtualised GPUs (CUDA on WSL user guide; kb/wsl__nccl-wsl2-no-p2p)
    ("WSL2", _WSL_WORDS),
    ("Hyper-V", r"hyper-?v\b|\bdda\b"),
    ("Xen", r"\bxen(?:server)?\b|xcp-ng"),
    ("KVM", r"\bkvm\b|\bqemu\b|libvirt|\bunraid\b|\bvirt-manager\b|\bovmf\b|cloud-hypervisor|\bopenstack\b|\bnutanix\b|\bahv\b"),
    ("VirtualBox", r"virtualbox"),
)
#: native Windows named (lower-cased text): a Windows version or machine, "on/under Windows" (not "Windows Subsystem for
#: Linux": WSL runs Linux), win32 / win_amd64, a Windows path (C:\Users\..., ...\site-packages\...), a default Windows
#: host name (DESKTOP-XXXXXXX), "Windows下": the platform whose builds of PyTorch, TensorFlow and Paddle have no NCCL
_WINDOWS = _rx(r"\bwindows\s*(?:1[01]|7|8\.1|8|server|pcs?|machines?|hosts?|systems?|os|laptops?|desktops?)\b|"
               r"\b(?:on|under|in|with|for|using)\s+(?:native\s+)?windows\b(?!\s+subsystem)|\bwin(?:32|_amd64|64)\b|"
               r"\b[a-z]:\\(?:users|program files|programdata|python\d*|anaconda\d*|miniconda\d*|tools)\\|\\site-packages\\|"
               r"windows\s*(?:下|上|系统|环境|平台)|\bdesktop-[a-z0-9]{7}\b")
_WSL = _rx(_WSL_WORDS)
#: confidential computing on the GPUs, in words: "CC mode on/enabled", "confidential computing (mode) enabled", "enabled
#: confidential computing", a confidential VM (CVM) or a TDX / SEV-SNP guest ("PPCIe mode" is the multi-GPU mode: not this;
#: gpu-admin-tools' "CC mode is on", a tool's line run on the host, is evidence/cc.py's)
_CC_ON = _rx(r"(?<!ppcie )(?<!protected pcie )\b(?:cc|confidential[- ]comput\w*)\s+mode\s+(?:on|enabled|(?:is|was)\s+enabled)\b|"
             r"\bconfidential[- ]comput\w*\s+(?:is\s+|was\s+)?enabled\b|\benabl\w*\s+(?:the\s+)?(?:gpu\s+)?(?:cc|confidential[- ]comput\w*)(?:\s+mode)?\b|"
             r"\bconfidential (?:vms?|virtual machines?|guests?)\b|\bcvms?\b|\b(?:tdx|sev-snp)\s+(?:vms?|guests?|cvms?)\b")
#: NVIDIA vGPU (a mediated, time-sliced GPU in a guest; nvidia-smi -q "Virtualization Mode: VGPU")
_VGPU = r"\bv-?gpus?\b|\bgrid (?:driver|license|vgpu)|virtualization mode\s*:?\s*vgpu"
#: GPU sharing in containers that calls its shares "vGPU" with no hypervisor: HAMi (formerly k8s-vGPU-scheduler; its
#: HAMi-core is the libvgpu.so preloaded into a pod to enforce nvidia.com/gpumem and gpucores) and Volcano's vGPU device
#: plugin (volcano.sh/vgpu-number, vgpu-memory; the plugin itself is volcano-vgpu-device-plugin, its repository
#: volcano-sh/devices). A text naming one says nothing of a VM with its "vgpu".
_VGPU_SHARING = _rx(r"libvgpu|\bhami\b|hami-core|k8s-vgpu|volcano\.sh/vgpu|\bvolcano[- ]vgpu\b|\bvgpu-device-plugin\b|"
                    r"\bvgpu-(?:number|memory|cores)\b|nvidia\.com/gpu(?:mem|cores)\b")
_VM = (r"\bvirtual machines?\b|\b(?:a|an|the|in|inside|my|our|this|each|guest|windows|linux|ubuntu)\s+vms?\b|\bguest os\b|虚拟机|云主机|云服务器|\bec2\b|\bazure\b|\bgcp\b|\bcloud instance|\bcloud vms?\b|"
       r"\b(?:the|a|my|our|linux|windows|ubuntu)\s+guests?\b(?!\s+(?:users?|accounts?|login|wi-?fi|network|access|mode))|"
       r"(?:阿里云|腾讯云|华为云|百度云|火山引擎)(?:(?!裸金属)[^。\n]){0,10}实例|云实例|"
       # Azure's GPU VM sizes (NC/ND/NV series: "Standard_ND96asr_v4", "NC80adis_H100_v5"; learn.microsoft.com sizes docs)
       r"\b(?:standard_)?n[cdv]\d{1,3}[a-z]*(?:_[a-z0-9]+)*_v\d\b|"
       # AWS EC2 GPU instance types (p3/p4d/p5/g4dn/g5/g6 ... .Nxlarge; ".metal" is bare metal: not matched), GCP's GPU
       # machine types (a2-highgpu-8g, a3-megagpu-8g, g2-standard-24), the notebook services that run on cloud VMs
       # (Kaggle, Colab, SageMaker): https://aws.amazon.com/ec2/instance-types/, https://cloud.google.com/compute/docs/gpus
       r"\b(?:p[2-6][a-z]*|g[3-6][a-z]*)\.\d*x?large\b|\b(?:a[234]|g2)-(?:highgpu|megagpu|ultragpu|edgegpu|standard)-\d+g?\b|"
       r"\bkaggle\b|\bcolab\b|\bsagemaker\b")
#: (the IOMMU's own passthrough, "Default domain type: Passthrough", "iommu.passthrough=1", is no GPU passthrough)
#: The verb in two words ("pass through") is passthrough only with a device as its object or subject, or a VM as where
#: to ("pass through the two GPUs", "the GPU is passed through to the VM"): "the workers pass through the barrier" is not.
_PASSTHROUGH = (r"(?<!domain type: )(?<!iommu\.)(?<!iommu )pass(?:ing|ed|es)?-?through|"
                r"pass(?:ing|ed|es)?\s+through\s+(?:(?:the|a|an|my|our|both|all|two|three|four|eight|\d+)\s+)?(?:[\w-]+\s+){0,2}?"
                r"(?:gpus?|cards?|devices?|nvidia|geforce|rtx|tesla|quadro|[ahlv]\d{2,3}s?|pcie?)\b|"
                r"(?:gpus?|cards?|devices?|pcie?)\s+(?:(?:is|are|was|were|being|been|get|gets|got)\s+)?pass(?:ed|ing)?\s+through|"
                r"pass(?:ing|ed|es)?\s+(?:\w+\s+){0,3}?through\s+to\s+(?:the\s+|a\s+|my\s+)?(?:vms?|guests?|virtual|kvm|qemu|proxmox|esxi|lxc)\b|"
                r"\bvfio\b|直通|gpudirect[-_ ]?clique")  # x-nv-gpudirect-clique: QEMU vfio-pci's P2P hint
#: a setup contrasted with bare metal ("on bare metal, this works") is a VM's
_BARE_METAL = r"(?:on|with) bare[- ]?metal\b[^.\n]{0,40}\b(?:works?|fine|ok|passes)|works? (?:fine |well )?on bare[- ]?metal|裸机(?:上)?(?:正常|可以)"
#: Fabric Manager said to be absent, stopped or failing, in words (NVIDIA Fabric Manager user guide's service names)
#: Fabric Manager said to differ in version from the driver (its user guide: the service refuses to start unless its
#: version matches the driver's: https://docs.nvidia.com/datacenter/tesla/fabric-manager-user-guide/)
_FM_MISMATCH = _rx(r"fabric[- _]?manager(?:\.service)?(?:[^.\n]|\.\d){0,80}?(?:version\s+mismatch|mismatch\w*|not (?:be\s+)?in sync|out of sync|"
                   r"(?:does|do|did)\s*(?:n'?t|not)\s+match|different version|versions?\s+(?:differ\w*|are different|(?:do|does)\s*(?:n'?t|not)\s+match)|(?:requires?|needs?|must)\b[^.\n]{0,40}\b(?:same|matching) version)|"
                   r"(?:version\s+mismatch|mismatch\w*|out of sync)\s+(?:between|of|with)\s+(?:the\s+)?(?:\w+\s+){0,3}fabric[- _]?manager|"
                   # "a mismatched Fabric Manager version to the driver", "mismatching fabricmanager and driver versions"
                   r"\bmismatch\w*\s+(?:\w+\s+){0,2}?fabric[- _]?manager\b[^.\n]{0,40}?\b(?:versions?|drivers?)\b|"
                   r"fabric[- _]?manager[^。\n]{0,30}版本不(?:一致|匹配)")
#: Fabric Manager's own version, as people quote it or as its package is named ("fabric manager 535.104.05",
#: "nvidia-fabricmanager-535_535.104.05-1", "fabricmanager version: 550.54.15")
_FM_VERSION = _rx(r"fabric[- _]?manager\w*(?:-\d{3})?(?:\s+(?:package|pkg|service|daemon))?(?:\s+version)?\s*(?:(?:is|was)\s+)?(?:(?:still|now|at|on)\s+)?[:=_-]?\s*v?(\d{3}\.\d{1,3}(?:\.\d{1,3})?)\b")
#: Fabric Manager said to run ("the nvidia-fabricmanager daemon/service is up and running", "fabric manager is active"):
#: the state `systemctl status nvidia-fabricmanager` reads as "active (running)" ("is started" is not: a service started
#: on every instance may fail at once)
_FM_UP = _rx(r"fabric[- _]?manager\w*(?:\.service)?`?\s*(?:\(?(?:daemon|service)(?:\s*/\s*(?:daemon|service))?\)?\s+)?"
             r"(?:is|are|has been)\s+(?:up and running|running|active(?:\s+\(running\))?)\b(?!\s+but\b)")
_FM_DOWN = _rx(r"(?:nvidia-)?fabric[- _]?manage\w*`?\s*(?:service\s+)?(?:is|was|has)?\s*(?:not (?:installed|running|started)|(?:is|was|were|are)n['’]?t (?:installed|running|started)|"
                      r"missing|inactive|dead|stopped|crash\w*|fail\w*|"
                      # a service said to stop, exit or not start ("Fabric Manager stops running on Ubuntu 20.04")
                      r"stops(?:\s+(?:running|working))?\b|keeps?\s+(?:stopping|crashing|failing|exiting|dying)|exit(?:s|ed)\b|dies\b|died\b|(?:is|went)\s+down\b|"
                      r"(?:won['’]?t|will not|does\s*n['’]?o?t|did\s*n['’]?o?t|cannot|can['’]?t|could\s*n['’]?o?t|unable to)\s+(?:be\s+)?start\w*)|"
                      r"(?:failures?|crash\w*|restart\w*) of (?:the )?fabric[- _]?manager|"
                      r"fabric[- _]?manager[^.\n]{0,30}(?:未启动|没有启动|未安装|失败)")
#: a BAR1 size as people write it ("BAR=256MB", "256MB and 512MB bar sizes", "BAR1: 32GB")
_BAR_SIZE = _rx(r"\bbar1?\s*(?:size)?\s*[=:]\s*(\d+)\s*([mg])i?b\b|\b(\d+)\s*([mg])i?b\b[^.\n]{0,20}\bbar1?\s*(?:sizes?|aperture)\b")
#: GPUDirect pinning or registration said to stop at a size ("it can only pin about 220MB", "ibv_reg_mr ... if the SIZE is
#: over 500MB, it will return NULL"): what a GPU lets third parties map is its BAR1 aperture (GDRCopy README, "BAR1 size";
#: NVIDIA GPUDirect RDMA guide, "PCI BAR sizes": https://docs.nvidia.com/cuda/gpudirect-rdma/), so the size is BAR1's, about
_PIN_LIMIT = _rx(r"(?:\bpin\w*|\bregist\w*|reg_mr|gdr_pin|nvidia_p2p_get_pages|\bmap(?:s|ped|ping)?\b)[\s\S]{0,160}?"
                 r"(?:\bonly\b|at most|up to|\bmax(?:imum)?\b|\bover\b|more than|above|beyond|larger than|exceeds?)\s+"
                 r"(?:about\s+|around\s+|~\s*)?(\d+)\s*([mg])i?b\b|"
                 r"\b(?:only|at most)\s+(?:be\s+)?(?:pin|regist|map)\w*\s+(?:about\s+|around\s+|~\s*)?(\d+)\s*([mg])i?b\b")
_GPUDIRECT = _rx(r"gdr|gpudirect|rdma|ibv_reg_mr|peer[-_ ]?mem|nvidia_p2p|nv_peer")
#: a pair across CPU sockets in words (QPI/UPI, different I/O hubs or sockets; 跨 NUMA/CPU)
_CROSS_SOCKET = (r"\bqpi\b|\bupi\b|different (?:i/?o hubs?|iohs?|sockets|cpus|cpu sockets|numa nodes)|across (?:the )?(?:cpu )?sockets|"
                 r"\bnot (?:on|under|attached to|connected to|in) the same (?:cpu(?: socket)?|socket|numa node)\b|\b(?:the )?other (?:cpu|processor)(?: socket)?\b|"
                 r"跨\s*(?:numa|cpu|socket)|不同(?:的)?\s*(?:numa|cpu|socket|插槽)|不在同一(?:个|颗)?\s*(?:cpu|socket|numa)|"
                 r"(?:numa|cpu|socket)\s*(?:节点)?\s*不同|分别(?:插在|接在|挂在|位于|连在)[^。，,\n]{0,10}?(?:两个|两颗|不同的?)\s*(?:cpu|socket|numa)")
#: an NVSwitch system in words: the HGX/DGX boards that carry them ("NVSwitch" alone is no sign: Fabric Manager's
#: own failure on a host without one says "query NVSwitch device information ... failed"); "without NVSwitch" says none
_NO_NVSWITCH = r"(?:without|no|lacks?|not have|doesn'?t have|has no)\s+(?:an?\s+|any\s+)?nvswitch|没有\s*nvswitch"
#: ... but not the DGX and HGX machines built without them (NVIDIA's system guides): DGX-1 and HGX-1 (the V100/P100 hybrid
#: cube-mesh: some pairs have no NVLink), DGX Station (four GPUs joined directly), DGX Spark (one GB10), the 4-GPU HGX
#: boards (A100/H100 4-GPU: direct NVLink); "DGX OS" names the software, not the machine
#: ... or a host named by its NVSwitches: "NVSwitch-based systems", "on NVSwitch servers", "nodes with NVSwitch" (the words
#: of NVIDIA's Fabric Manager user guide and release notes for the machines that carry them, "NVSwitch H100 based systems";
#: "non-NVSwitch" says none)
_NVSWITCH = (r"\bhgx\b(?!\s*-?\s*1\b)(?![^.\n]{0,24}?\b4[- ]?gpu)|"
             r"\bdgx\b(?!\s*-?\s*(?:1\b|station\b|spark\b|os\b|workstation\b))|"
             r"(?<!non-)(?<!non )\bnvswitch(?:es)?[- ](?:[\w.]+[- ]){0,2}?(?:based|equipped|enabled)\b|"
             r"(?<!non-)(?<!non )\bnvswitch (?:systems?|servers?|nodes?|hosts?|machines?|platforms?|boxes)\b|"
             r"\b(?:systems?|servers?|nodes?|hosts?|machines?|platforms?) (?:with|using|that have|having) (?:an? |the )?nvswitch")
#: MIG named in words ("two MIG devices", "Multi-Instance GPU")
_MIG = (r"\bmig (?:(?:gpu|compute) )?(?:devices?|instances?|slices?|mode|enabled|partitions?|profiles?)\b|\bmigs\b|multi-instance gpu|"
        r"\bmig[- ]enabled\b|\b(?:with|under|using|in) mig\b|\bmig-[0-9a-f]{8}|\bmig-gpu-|\b[1-7]g\.\d{1,3}gb\b")  # nvidia-smi -L's MIG UUIDs, profile names (1g.10gb)
#: a program that will not or cannot look for MIG instances ("nvmlInit() failed with error 9; will not discover dynamic
#: properties or MIG instances", HTCondor's condor_gpu_discovery): MIG named as what it could not query
_MIG_NOT_READ = re.compile(r"\b(?:will not|won't|cannot|can't|unable to|failed to|could not|couldn't) (?:discover|detect|enumerate|query|list)\b"
                          r"[^\n]{0,80}\bmig\b|"
                          # nvidia-smi mig -lgi / -lci on a GPU with MIG off: "No MIG-enabled devices found."
                          r"\bno mig[- ]enabled (?:devices?|gpus?)\b")
#: a CUDA error number in a sentence: "CUDA initialization fails with 802 system error", "CUDA error 401"
_CUDA_NUMBER_WORDS = _rx(r"cuda[^.\n]{0,60}?\b(?:with|error|code)\s+(?:error\s+|code\s+)?(\d{3})\b")
#: GPUs of one host split one per process, worker, container or pod ("one GPU per container", "each pod gets 1 GPU",
#: "per container 1 GPU", 每个容器一张卡): CUDA IPC and P2P need the peer GPU visible in the process (CUDA runtime API,
#: cudaIpcOpenMemHandle; NCCL troubleshooting, "Docker": https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html)
#: (not "one GPU per process": DDP's usual layout, where every process still sees every GPU)
_UNIT = r"(?:containers?|pods?|workers?)"
_ONE_GPU_EACH = _rx(r"\b(?:one|1|a single)\s+gpus?\s+(?:per|for each|in each|each)\s+" + _UNIT + r"\b|"
                    r"\b(?:each|every)\s+" + _UNIT + r"\s+(?:has|gets|sees|uses|owns|is given|is assigned|only sees|with|)\s*(?:only\s+|just\s+)?(?:one|1|a single)\s+gpu\b|"
                    r"\b" + _UNIT + r"\s+(?:with|having|of)\s+(?:one|1|a single)\s+gpu\s+each\b|"
                    # what a rank or process SEES ("each rank only sees its own GPU", "every process can see only one GPU"):
                    # visibility said, not DDP's one GPU used per process
                    r"\b(?:each|every)\s+(?:ranks?|process(?:es)?|tasks?|containers?|pods?|workers?)\s+(?:only\s+)?(?:sees|can see|is able to see)\s+"
                    r"(?:only\s+)?(?:one|1|a single|its own|their own)\s+gpu\b|"
                    r"\bper\s+" + _UNIT + r"\s+(?:one|1|a single)\s+gpu\b|"
                    r"\b" + _UNIT + r"\b[^.\n]{0,30}?\bonly\s+(?:one|1|a single)\s+gpu\b|"
                    r"每(?:个|一个)\s*(?:容器|pod|worker)\s*(?:只)?(?:有|分配|使用|用)?\s*(?:一|1)\s*(?:张|块|个)\s*(?:卡|gpu|显卡)|"
                    # Slurm binding one GPU to each task: "--gpus-per-task=1" / "--gpus-per-task 1" (srun/sbatch: the
                    # option implies --gpu-bind=per_task, each task's cgroup and CUDA_VISIBLE_DEVICES hold its own GPU
                    # only) and "--gpu-bind=single:1"
                    # (Slurm 23.11 on: the same binding as "--tres-bind=gres/gpu:per_task:1", srun's general form of --gpu-bind)
                    # (a word processor or a chat makes the "--" a dash: "—gpus-per-task=1")
                    r"(?:--|[\u2013\u2014])(?:gpus-per-task[= ]1\b|gpu-bind[= ](?:single:1|per_task:1)\b|tres-bind[= ]gres/gpu:(?:single:1|per_task:1)\b)")
#: one job's GPUs or ranks said to sit in different containers or pods ("between two docker", "across containers", "two
#: jobs running in two containers respectively", "two docker with each holding two graphic cards", 不同容器之间, 跨容器):
#: CUDA IPC (and so NCCL's P2P transport) between processes of different containers needs a shared IPC namespace, else
#: NCCL treats them as separate hosts (NCCL troubleshooting, "Docker": "--ipc=host"; CUDA IPC needs the peer process's
#: handles: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html#docker)
_CTR = r"(?:docker\s+)?(?:containers?|dockers|docker instances?|pods)"
_SPLIT_CONTAINERS = _rx(r"\b(?:across|between|among)\s+(?:the\s+)?(?:two|2|three|four|different|separate|multiple|several)?\s*(?:docker\s+)?"
                        r"(?:containers?|dockers|docker instances|pods|docker)\b|"
                        r"\b(?:two|2|three|four|different|separate|multiple|several)\s+" + _CTR + r"\b[^.\n]{0,20}?\b(?:each|respectively)\b|"
                        r"\b(?:each|every)\s+(?:docker\s+)?(?:container|pod)\s+(?:\w+\s+){0,2}?(?:holding|having|with|owns?|gets?|has)\s+(?:\w+\s+)?(?:gpus|cards|graphic cards)\b|"
                        r"\b(?:in|into|on)\s+(?:two|2|different|separate)\s+" + _CTR + r"\b|"
                        r"\b(?:two|2|multiple|several|different|separate)\s+" + _CTR + r"\s+(?:\w+\s+)?(?:are\s+|running\s+)?(?:on|in)\s+the\s+same\s+(?:node|host|machine|server)\b|"
                        r"(?:不同|两个|多个|各个)(?:的)?\s*(?:docker\s*)?(?:容器|pod)\s*(?:之间|间|中|里)|跨\s*(?:docker\s*)?(?:容器|pod)")
#: an NVLink domain said to span several hosts (multi-node NVLink, MNNVL: GB200/GB300 NVL72 racks, a Kubernetes
#: ComputeDomain over several nodes): CUDA's legacy IPC handles (cudaIpcGetMemHandle / cudaIpcOpenMemHandle) are valid
#: only between processes of one host; memory shared across the hosts of the domain needs fabric handles
#: (CU_MEM_HANDLE_TYPE_FABRIC) and IMEX (CUDA programming guide, "Multi-Node NVLink"; DeepEP's Buffer use_fabric)
#: (said to span hosts: "MNNVL" alone also names a backend or a setting that runs on one node, FlashInfer's "mnnvl"
#: all-reduce on a single-node TP8, NCCL_MNNVL_ENABLE)
_MULTI_NODE_NVLINK = _rx(r"\b(?:mnnvl|multi[- ]node nvlink|(?:nvlink|nvl) domain|compute ?domain|nvl(?:36|72|144|576))\b[^.\n]{0,60}?"
                         r"\b(?:spans?|spanning|across|over)\s+(?:the\s+)?(?:multiple|several|many|both|all|two|\d+|different|separate)?\s*"
                         r"(?:physical\s+)?(?:nodes|hosts|trays|machines)\b")
#: or, in two places of the text, a multi-node NVLink system named and a job said to span several nodes ("2 nodes, GB200
#: NVL72, MNNVL fabric ... the TP=2 group spans two nodes"); "single-node TP8" on an NVL72 word says the opposite
_MNNVL_NAMED = _rx(r"\b(?:mnnvl|multi[- ]node nvlink|nvl(?:36|72|144|576)|gb[23]00)\b")
_SEVERAL_NODES = _rx(r"\b(?:spans?|spanning|across|over|on)\s+(?:the\s+)?(?:two|2|three|four|\d{1,3}|multiple|several|many|both|different|separate)\s+"
                     r"(?:physical\s+)?(?:nodes|hosts|machines|trays)\b|(?<![\w-])(?:[2-9]|\d{2,3})\s+nodes\b|\bmulti[- ]node (?:tp|tensor|serving|inference|job|run|setup)")
_CONTAINERS = (("kubernetes", r"kubernetes|\bk8s\b|kubectl|\bpods?\b|\bhelm\b|gpu-operator"),
               ("docker", r"\bdocker\b|nvidia-docker|--gpus\s"),
               ("podman", r"\bpodman\b"),
               ("singularity", r"singularity|apptainer"),
               ("enroot", r"\benroot\b|\bpyxis\b"),
               ("lxc", r"\blxc\b|\blxd\b"))
#: a container without its runtime's name ("inside the container", "4 containers with 1 GPU each", 容器)
_CONTAINER_ZH = r"容器|\b(?:in|inside|within|from|into|across|between|among|a|an|the|each|every|my|our|two|several|multiple|different|separate|\d+)\s+(?:\w+\s+)?containers?\b"
#: a speedup's figure set short of the one expected ("... 1.6x instead of the theoretical 2x", "... 1.2x rather than 2x")
_SHORT_OF_X = (r"\b(?:instead of|rather than|not|vs\.?|versus|below|less than|short of)\s+"
               r"(?:the\s+)?(?:theoretical\s+|expected\s+|ideal\s+|linear\s+)?\d+(?:\.\d+)?\s*x\b")
_SYMPTOMS = (
    ("symptom.hang", r"\bhangs?\b(?!\s+off\b(?!\s+and\b))|\bhanging\b(?!\s+off\b(?!\s+and\b))|\bhung\b|deadlock|\bstuck\b|\bstuck(?:ing|ed)\b|\bfreez(?:e|es|ing)\b|(?<!<)\bfroze(?:n)?\b|"
                     r"never (?:finishes|returns|completes)|no progress|100 ?% (?:gpu[- ]?)?util|watchdog|\btimed out\b|"
                     r"\btim(?:es|ing) out\b|\b(?:but|and|then|otherwise|still)\s+time\s?out\b|\b(?:tests?|jobs?|runs?|they|calls?|collectives?|operations?|ranks?)\s+(?:\w+\s+){0,2}time\s?out\b|\btimeout (?:error|exception|occurred|happens|after|while|when|waiting)|"
                     r"operation timeout|\b(?:nccl|collective|all[-_ ]?reduce|all[-_ ]?gather|broadcast|barrier)\s+time-?outs?\b|\bnot responding\b|\bunresponsive\b|\bwaits? (?:forever|indefinitely)|"
                     r"\bblocks? (?:forever|indefinitely)|"
                     # the expert-parallel kernels' own timeouts (DeepEP and its forks NIXL-EP, UCCL-EP: "DeepEP dispatch NVL
                     # receiver timeout", "DeepEP timeout for dispatch receivers", "timeout for barrier", "timeout check failed"):
                     # a peer's write that never landed
                     r"\b(?:receivers?|senders?|forwarders?|dispatch|combine|barrier)\s+time-?out\b|"
                     r"\btime-?out for (?:the )?(?:barrier|dispatch|combine|(?:\w+ )?(?:receivers?|senders?|forwarders?))\b|\btime-?out check failed\b|"
                     # Transformer Engine's userbuffers kernels after UB_TIMEOUT (userbuffers.cu: "pushrecv [...]: expecting %d,
                     # observed %d", "[%d] Allgather: SM %d [%d]: expecting %d got %d"): a peer's flag write that never arrived
                     r"\buserbuffers\.cu:\w+:\d+\][^\n]{0,160}?\bexpecting \d+,? (?:observed|got) \d+|"
                     # a run said to stop in the middle, with no error ("On 3 GPU's training stops randomly")
                     r"\b(?:training|job|run|process|program)\s+(?:\w+\s+){0,2}?(?:stops|stopped|halts|halted)\s+(?:randomly|suddenly|unexpectedly|at random|"
                     r"without (?:any |an )?(?:error|message)|responding|progressing)\b|\b(?:randomly|suddenly|unexpectedly)\s+(?:stops|stopped|halts|halted)\b|"
                     # NCCL troubleshooting / PyTorch watchdog wording: a collective that stalls, waits, never finishes
                     r"\bstall(?:s|ed|ing)?\b|\bwaiting (?:forever|indefinitely)|\btakes? forever\b|\btook forever\b|"
                     r"\b(?:does|did|do)\s*(?:n'?t|not) (?:finish|complete|return|progress|proceed)\b|never (?:finish|complete|return|progress|end)\w*|"
                     r"\bjust sits? (?:there|idle)|\bnothing (?:happens|is happening|moves|progresses)\b(?!\s+to\b)|"
                     r"\butili[sz]ation\b[^.\n]{0,20}?\b(?:stays?|stuck|remains?|sits?|pinned|locked)\b[^.\n]{0,10}?100 ?%|"
                     # the GPUs said to spin or sit at 99-100 % with nothing moving, and a spinning kernel: NCCL's kernels
                     # busy-wait on the peer's flags, so a hang shows as full utilisation without traffic (NCCL
                     # troubleshooting; "all GPUs spin at 100%", "GPUs sit at 99% forever", "the spinning kernel")
                     r"\bgpus?\b[^.\n]{0,30}?\b(?:spin(?:s|ning)?|sit(?:s|ting)?|stuck|stay(?:s|ing)?|pinned|remain(?:s|ing)?|locked)\s+at\s+~?\s*(?:99|100) ?%|"
                     r"\bspinning (?:cuda |nccl |gpu )?kernels?\b|\bkernels?\s+(?:\w+\s+){0,2}?spin(?:s|ning)?\s+(?:forever|indefinitely)\b|"
                     r"(?:初始化|启动)(?:时间|过程)?(?:很长|很久|特别久|非常久|非常长)|\btimeouts? (?:in|on|during|at|for|inside) (?:the )?(?:\w+[_.])?(?:all[-_ ]?reduce|all[-_ ]?gather|reduce[-_ ]?scatter|broadcast|barrier|nccl|collective)|"
                     r"卡住|卡死|挂起|死锁|夯住|停滞|(?<![张块个两二三四六八号的显多单双\d])卡顿|卡着不动|一直不动|(?:一直|被)阻塞|阻塞住|(?:出现|发生|产生)阻塞|阻塞现象|无响应|没有响应|没反应|不动了|停住|停在|无进展|一直等|(?<![张块个两二三四六八号的显多单双\d])卡(?:在|再)|一直等待|超时"),
    ("symptom.wrong_results", r"wrong (?:results?|outputs?|values?|answers?|data|numbers?|gradients?|sums?|tokens?|bytes|predictions?|logits)|"
                              r"incorrect (?:results?|outputs?|values?|data|gradients?|sums?|tokens?|bytes|predictions?|logits)|all zeros?|"
                              # the same in looser words ("strange results on the local machine", "weird outputs with 2 GPUs")
                              r"\b(?:strange|weird|bizarre|abnormal|nonsensical) (?:results?|outputs?|values?|numbers?|predictions?)\b|"
                              r"\bchecksums?\b[^.\n]{0,40}?(?:differ|mismatch|wrong|fail|(?:does|do|did)\s*(?:n'?t|not) match)|\bchecksum (?:error|failure)s?\b|"
                              r"\b(?:results?|outputs?|values?|data|sums?|tensors?)\b[^.\n]{0,40}?\b(?:are|is|were|was)(?: not|n'?t) (?:correct|right|the same)\b|"
                              r"\b(?:results?|outputs?|values?|data|sums?|tensors?)\b[^.\n]{0,40}?\b(?:are|is|were|was|becomes?|became)\s+(?:all\s+|completely\s+|totally\s+|always\s+)?(?:incorrect|wrong|invalid)\b|"
                              r"\bloss\b[^.\n]{0,30}?\bdiverg\w*|"
                              r"silently (?:drops?|dropp\w*|loses?|corrupts?)|drops? the writes?|data loss|zeroed[- ]out|"
                              # a copy that "succeeds" but leaves the destination unchanged (a silent failure: CUDA returns success;
                              # what a peer copy through a broken IOMMU mapping or driver looks like to its user)
                              r"\bsilently (?:fail\w*|wrong|incorrect|writes? nothing|does nothing|(?:returns?|gives?|produces?) (?:wrong|bad|incorrect))|"
                              r"\bfails? silently\b|\bsilent (?:data )?(?:corruption|failures?|data loss)\b|\bwrites? nothing\b|"
                              r"\b(?:does|do|did)\s*(?:n'?t|not)\s+(?:actually\s+)?(?:write|copy|transfer)\s+(?:the\s+|any\s+)?data\b|"
                              # a copy said to be wrong ("tensor.to(device) not copying data correctly between two GPUs",
                              # "the data is copied incorrectly"), and data shown turned into zeros ("becomes [0, 0, 0] instead of")
                              r"\b(?:not|n't|never|fails? to|failed to)\s+(?:be(?:ing)?\s+)?cop(?:y|ying|ied)\s+(?:the\s+)?(?:data|tensors?|values?|memory|buffers?)\s+(?:correctly|properly|right)\b|"
                              r"\bcop(?:y|ies|ied|ying)\s+(?:the\s+)?(?:data|tensors?|values?|memory|buffers?)\s+(?:incorrectly|wrongly)\b|\b(?:is|are|was|were|gets?|got) copied (?:incorrectly|wrongly)\b|"
                              r"\b(?:becomes?|became|turns? into|turned into|gives?|gave|returns?|returned|shows?|showed|gets?|got|is|are|was|were)\s+(?:tensor\()?\[\s*(?:0\.?0*\s*,\s*)+0\.?0*\s*\][^.\n]{0,60}?\binstead of\b|"
                              r"\b(?:data|values?|buffers?|destination)\s+(?:is|are|was|were)\s+(?:never|not)\s+(?:actually\s+)?(?:written|copied|transferred)\b|"
                              r"静默(?:失败|出错|错误)|数据(?:没有|未|没)(?:被)?(?:写入|拷贝|复制|传过去)|"
                              r"\bzeros\b|\bnans?\b|garbage|gibberish|garbled|\bdegenerate (?:output|text|results?|tokens?)|"
                              r"\b(?:output|outputs|text|answers?|responses?)\b[^.\n]{0,30}\b(?:is|are|was|were|becomes?|became)\s+(?:\w+\s+)?(?:gibberish|garbage|nonsense|corrupted|degenerate)|"
                              # a mismatch of data, not of versions, types or shapes ("Driver/library version mismatch", "a mismatched
                              # Fabric Manager version", "size mismatch for weight": a setup's error, not wrong results)
                              r"(?<!version )(?<!version-)(?<!library )(?<!type )(?<!shape )(?<!size )(?<!dtype )(?<!abi )(?<!driver )"
                              r"\bmismatch(?:es|ed)?\b(?![^.\n]{0,40}?\b(?:versions?|drivers?|librar(?:y|ies)|shapes?|dtypes?|types?)\b)|"
                              # corrupted data, not a corrupted object or file: NCCL's own "Error : corrupted comm object
                              # detected" (init.cc's CommCheck: a communicator handle that is not NCCL's, e.g. from another
                              # libnccl in the process), a corrupt download, checkpoint or install is no wrong result
                              r"corrupt(?:ed|ion|s)?\b(?!\s+(?:comm\b|comm object|communicators?|handles?|files?|checkpoints?|zip|archives?|"
                              r"downloads?|caches?|headers?|packages?|install\w*|state[_ ]dict|weights? files?|elf|image|disk))|verification (?:error|failed)|"
                              r"\b(?:results?|outputs?|values?|data) (?:are|is|were|was) (?:different|inconsistent|off)\b|"
                              r"\binf(?:s| values?)\b|\bresults? (?:differ|diverge)\w*|\bdifferent (?:results|outputs|values) (?:on|from|between)\b|"
                              r"\bwrongs\b|\bwrong[`'\"]?\s+(?:transfers?|elements?|copies)\b|\b(?:non-?zero|high|many)\s+#?wrong\b|#wrong\s+(?:is|are|was|were|column)\b|"
                              r"(?:结果|数据|输出|数值)不正确|结果错误|结果不对|结果异常|数值异常|数据(?:出错|错乱|不对)|全零|全是0|全0|乱码|数据错误|不一致|精度异常|校验失败|"
                              r"数据(?:被)?(?:破坏|损坏|篡改)|校验(?:不通过|错误)"),
    # NVLink said to stay idle while the GPUs exchange data (nvidia-smi nvlink's throughput counters at zero): the copies
    # do not go peer to peer over it (CUDA stages cudaMemcpyPeer through the host without peer access; NCCL with P2P off;
    # a VM that hides the links; links down)
    ("symptom.nvlink_unused", r"\b(?:does\s*n['’]?o?t|did\s*n['’]?o?t|do\s*n['’]?o?t|is\s*n['’]?o?t|are\s*n['’]?o?t|not|never)\s+"
                              r"(?:seem\s+to\s+|appear\s+to\s+|actually\s+|even\s+)?(?:be\s+)?(?:use|using|used|utili[sz]\w*|go\w*\s+(?:over|through|via))\s+"
                              r"(?:any\s+of\s+)?(?:the\s+|my\s+)?nvlinks?\b(?!\s*(?:\?|bridges?\b|cables?\b|connectors?\b|switch))|"
                              r"\bno\s+(?:data|traffic|transfers?|bytes)\s+(?:is\s+|are\s+|was\s+|were\s+)?(?:\w+\s+)?(?:over|through|via|on|across)\s+(?:the\s+)?nvlinks?\b|"
                              # the same in the passive ("the NVLinks are not used at all", "NVLink isn't being utilized")
                              r"\bnvlinks?\s+(?:(?:is|are|was|were)\s+not|is\s*n['’]t|are\s*n['’]t|was\s*n['’]t|were\s*n['’]t)\s+(?:being\s+|even\s+|actually\s+)?(?:used|utili[sz]ed)\b|"
                              r"\bnvlinks?\s+(?:throughput|traffic|usage|utili[sz]ation|bandwidth|counters?|tx|rx)\s+(?:is|are|was|were|stays?|remains?|shows?|showed|reads?)\s+"
                              r"(?:at\s+|always\s+|still\s+|just\s+)?(?:0|zero|empty|idle|nothing|unchanged)\b|"
                              r"\bnvlinks?\s+(?:is|are|was|were|stays?|remains?)\s+(?:completely\s+|totally\s+)?(?:idle|unused)\b|"
                              r"nvlink\s*(?:没有|未|没)(?:被)?(?:使用|用到|利用)|(?:没有|未|没)(?:走|使用|用到|经过)\s*nvlink"),
    ("symptom.slow", r"\bslow(?:er|ly|down)?\b|low bandwidth|poor (?:performance|bandwidth)|bandwidth (?:is|was) (?:low|only)|"
                     r"only (?:gets? |reach(?:es)? |achiev(?:es|ed)? |hits? |sees? |gives? |shows? )?\d+(?:\.\d+)? ?gb/s|throughput drops?|"
                     # a loss of speed named ("a performance drop has been introduced", "a 60% busbw regression", "drop in bandwidth")
                     r"\b(?:performance|perf|throughput|bandwidth|busbw|algbw)\s+(?:drops?|dropped|regressions?|regressed|loss|hit|penalty)\b|"
                     r"\b(?:drop|regression|loss|decrease)\s+(?:in|of)\s+(?:the\s+)?(?:performance|throughput|bandwidth|busbw|algbw)\b|"
                     r"(?:achiev\w*|reach\w*|gets?|getting|got|see|seeing|measur\w*) (?:only|just|merely) (?:about |around |~)?\d+(?:\.\d+)? ?gb/s|"
                     r"(?:performance|bandwidth|throughput|speed)\b[^.\n]{0,25}?\bdegrad\w*|\bdegrad\w* (?:the )?(?:performance|bandwidth|throughput|speed)|"
                     r"(?:bandwidth|throughput|performance|speed|busbw)\b[^.\n]{0,30}?\b(?:is|was|are|were)\s+(?:very |really |quite |extremely |so |pretty )?(?:poor|terrible|bad|awful|horrible|abysmal)|"
                     r"(?:far|well|way|much) (?:below|under) (?:the |what )?(?:expected|theoretical|spec|nominal|peak|advertised|should|it should|the link)|"
                     r"\b(?:much |far |way )?longer\b[^.\n]{0,30}?\bthan expected|"
                     r"bandwidth\b[^.\n]{0,30}\b(?:low|lower|drops?|dropped|degraded)\b|(?:low|lower|reduced|degraded) (?:p2p |nccl |bus ?)?bandwidth|"
                     r"(?:less|lower) than \d+(?:\.\d+)? ?[mg]b/s|(?:much |far |way )?(?:lower|slower|less) than expected|"
                     # a ceiling reported ("busbw capped at ~100 GB/s", "tops out at 12 GB/s"): the rate stops below what is wanted
                     r"\b(?:capped|stuck|plateau\w*|tops? out|topped out|maxe[sd] out|max(?:es)? out) at (?:about |around |~|only )?"
                     r"\d+(?:\.\d+)?(?:\s*-\s*\d+(?:\.\d+)?)? ?gb/s|"
                     r"\b(?:extremely |very |really )?low (?:\w+ )?(?:throughput|tok(?:ens)?/s)\b|\bbottleneck\w*|\bunder ?perform\w*|\bhalf (?:of )?(?:the )?(?:expected|bandwidth|speed|throughput)\b|"
                     # GPUs kept idle ("GPU is underutilized", "low GPU utilization", "utilization only 40%"): waiting on each
                     # other or on a feed, the same symptom as slow; its cause is for the facts beside it to say
                     r"\bunder-?utili[sz]\w*|\blow (?:gpu |sm )?utili[sz]ation\b|\butili[sz]ation\b[^.\n]{0,25}?\b(?:only|just|stuck at|never above|at most|below)\s+(?:about |around |~)?[1-6]?\d(?:\.\d+)?\s*%|"
                     r"利用率(?:很|非常|特别)?低|利用率(?:只有|仅|才|不到)|"
                     # a pair measured against its neighbours ("the bandwidth to GPU 2 is half of the others", "a third of the other pairs")
                     r"\b(?:bandwidth|speed|throughput|busbw|transfers?|cop(?:y|ies)|gb/s)\b[^.\n]{0,50}?\b(?:only\s+)?(?:half|a third|a quarter|one third|one quarter|a fraction)\s+(?:of\s+)?(?:what\s+)?(?:the\s+)?(?:others?|rest|other\s+(?:gpus?|pairs?|cards?|links?|slots?))\b|"
                     r"带宽不足|性能(?:很|非常)?差|吞吐(?:量)?(?:很|非常)?(?:低|下降)|很慢|变慢|慢了|带宽低|带宽很低|带宽只有|速度慢|速度下降|性能差|性能下降|远低于|(?:只有|仅有?|才)\s*\d+(?:\.\d+)?\s*gb/s|带宽[^。\n]{0,30}(?:降|低|损失|下降)|损失[^。\n]{0,10}带宽|"
                     r"(?:速度|带宽|吞吐)[^。\n]{0,8}?只有[^。\n]{0,10}?(?:一半|\d+\s*%|几分之一)|速度(?:很|非常|特别)?低|比单卡(?:还)?慢|"
                     # the words of scaling reports ("crawls", "sluggish", "doesn't scale", "takes ages"; 龟速, 带宽上不去, 跑不满)
                     r"\bcrawl(?:s|ing|ed)?\b|\bsluggish\b|\b(?:does|do|did)\s*(?:n'?t|not)\s+scale\b|\bscal\w+ (?:badly|poorly|terribly)\b|"
                     r"\bpoor(?:ly)? scal\w*|\btakes? ages\b|龟速|(?:带宽|速度|吞吐)(?:一直)?上不去|跑不满|"
                     # a scaling efficiency reported short ("scaling efficiency only 73%", "scaling efficiency of 55%", "poor
                     # scaling efficiency"): the throughput over N GPUs against N times one GPU's; 扩展效率只有 60%
                     r"\bscaling efficiency\b[^.\n]{0,25}?(?:\b(?:only|just|merely|barely)\s+(?:about |around |~)?\d{1,2}(?:\.\d+)?\s*%|"
                     r"\b(?:of|is|was|at|drops? to|dropped to|around|about)\s+~?[1-7]?\d(?:\.\d+)?\s*%|\b(?:is|was)\s+(?:very |really |quite )?(?:low|poor|bad))|"
                     r"\b(?:low|poor|bad)\s+scaling efficiency\b|扩展效率[^。\n]{0,10}?(?:只有|仅|才|不到|很低|低)|"
                     # a speedup over GPUs below the count ("a 1.6x speedup instead of 2x", "only 1.2x faster with 4 GPUs",
                     # "sub-linear scaling"; 加速比只有 1.3)
                     r"\b(?:speed-?ups?|accelerations?|scaling)\b[^.\n]{0,40}?\b\d+(?:\.\d+)?\s*x\b[^.\n]{0,20}?" + _SHORT_OF_X + "|"
                     r"\b\d+(?:\.\d+)?\s*x\s+(?:speed-?ups?|accelerations?|scaling)\b[^.\n]{0,40}?" + _SHORT_OF_X + "|"
                     r"\b(?:only|just|merely)\s+(?:(?:about|around|~)\s*)?(?:an?\s+)?\d+(?:\.\d+)?\s*x\s+(?:speed-?ups?|accelerations?|faster|scaling)\b|"
                     r"\b(?:sub-?linear|not linear(?:ly)?|non-?linear|less than linear) (?:speed-?ups?|scaling)\b|\b(?:speed-?ups?|scaling) (?:is|was|are|were) (?:sub-?linear|not linear)|加速比[^。\n]{0,10}?(?:只有|仅|才|不到|很低|低)|"
                     # no gain from more GPUs, in the words of data-parallel reports ("doesn't run faster with multi-gpu", "no
                     # speedup with 2 GPUs", "same time as with one GPU", "as slow as a single GPU"; 多卡(训练)没有(变)快, 和单卡一样慢)
                     r"\b(?:does|do|did|is|was)\s*(?:n'?t|not)\s+(?:\w+\s+){0,2}(?:any\s+)?faster\s+(?:with|on|using|when using|across)\s+"
                     r"(?:\d+|two|three|four|eight|multiple|more|several|multi-?)\s*-?(?:gpus?|cards?|devices?)\b|"
                     r"\bno\s+(?:\w+\s+)?speed-?ups?\s+(?:with|on|from|using|when using|across)\s+(?:\d+|two|three|four|eight|multiple|more|several|multi-?)\s*-?(?:gpus?|cards?|devices?)\b|"
                     r"\b(?:same|similar)\s+(?:speed|time|throughput)\s+(?:as|with|like)\s+(?:on\s+|with\s+|using\s+)?(?:1|one|a single|single)\s+(?:gpu|card|device)\b|"
                     # the same said the other way round, against one GPU named by its count or model ("speed is same as 1x
                     # H100", "throughput is about the same as a single 4090", "time stays the same as with one card")
                     r"\b(?:speed|time|throughput|performance|it/s|s/it)\s+(?:is|was|are|were|stays?|stayed|remains?|remained)\s+(?:about\s+|roughly\s+|basically\s+|almost\s+|nearly\s+|exactly\s+)?(?:the\s+)?same\s+(?:as|like)\s+"
                     r"(?:on\s+|with\s+|using\s+)?(?:1|one|a single|single)\s*(?:x\s*)?(?:gpus?|cards?|devices?|(?:nvidia\s+|rtx\s*)?[a-z]{0,2}\d{2,4}(?:\s*ti)?)\b|"
                     r"\b(?:as slow as|no faster than|not faster than)\s+(?:on\s+|with\s+|using\s+)?(?:1|one|a single|single)\s+(?:gpu|card|device)\b|"
                     r"多卡[^。\n]{0,10}?(?:没有|并没有|并未|没)(?:变)?(?:快|加速)|(?:和|与|跟)单卡(?:一样|差不多)(?:慢|快)?|"
                     # a training time said far longer ("training time is much longer than his", "epoch time is way longer")
                     r"\b(?:training|epoch|iteration|step|run)\s*times?\s+(?:is|are|was|were)\s+(?:much|far|way|a lot|significantly)\s+long+er\b|"
                     # a regression of speed, as release notes and bisecting reports say it ("performance regression", 性能回退)
                     r"\b(?:performance|perf|bandwidth|throughput|speed|busbw)\s+regress\w*|性能(?:回退|退化|倒退)"),
    # a failure in words, where no error name is pasted: the phrasings of P2P reports ("P2P does not work",
    # "can't be enabled", "not supported between the cards", "stopped working", "tests failed"); Chinese 失败/
    # 不支持/无法/不能/报错/不工作 (blog.gitcode.com write-ups). Kept to verbs of failing: a bare "error" is not one.
    ("symptom.fails", r"\b(?:does|do|did|is|are|was|were|could|can|would|will)\s*(?:n[o']?t|not)\s+(?:work|run(?!\s+(?:any\s+)?(?:faster|quicker|slower))|enable|be enabled|happen|"
                      r"communicat\w*|utili[sz]e|use|support|succeed|pass)\w*|\bcan'?t be enabled|"
                      r"\b(?:can'?t|cannot|can not|couldn'?t)\s+(?:work|run|communicat\w*|talk|enable)\b|\bcannot\s+(?:be enabled|"
                      r"enable|communicat\w*)\b|\bunable to\s+(?:enable|communicat\w*)\b|"
                      r"\b(?:cannot|can'?t|can not|unable to)\s+access\s+(?:the\s+|its\s+|each\s+)?(?:peer|other\s+gpu|gpu\s*\d)\w*|"
                      r"\b(?:is|are|was|were)\s+not able to\s+(?:communicat\w*|talk|enable|access|use|see|reach)\b|"
                      r"\b(?:cannot|can'?t|can not|could ?n[o']?t|unable to)\s+(?:see|access|reach|talk to|communicate with)\s+each other\b|\bnot working\b|"
                      r"\bnever (?:uses?|used|enables?|enabled|picks?|selects?|chooses?)\s+(?:the\s+)?(?:p2p|nvlink|peer[- ]to[- ]peer|peer access)\b|"
                      r"\bstopped working\b|\bno longer works?\b|\bbroken\b|\b(?:tests?|training|job|run|init\w*|p2p|nccl)\s+"
                      r"(?:\w+\s+){0,2}fail(?:s|ed|ing)?\b|\bfails?\s+(?:to|with|on)\b|\bfailed\s+(?:to|with|on)\b|"
                      r"(?:p2p|peer|access|nvlink|gpus?|cards?|devices?)\b[^.\n]{0,40}\b(?:not supported|unsupported)\b|"
                      r"\bno support for (?:p2p|peer)|"
                      # "report no peer access", "there is no P2P support between them" (CUDA's answer said as an absence)
                      r"\b(?:report|reports|reported|shows?|showed|says?|said|there (?:is|was))\s+no\s+(?:p2p|peer)(?:[- ]to[- ]peer)?\s+(?:access|support|capability|connectivity)\b|"
                      r"\b(?:can'?t|cannot|can not|unable to|could ?n[o']?t)\s+get\b[^.\n]{0,50}?\bto\s+(?:work|use|run|enable|talk|communicat\w*|see)\b|"
                      r"\bfail(?:s|ed)?\s+(?:like this|like that|when|whenever|after|during|every|each time|again|randomly|intermittently)\b|"
                      r"\b(?:always|still|randomly|sometimes|often|consistently|immediately|intermittently)\s+fail(?:s|ed|ing)?\b|"
                      r"\brefuses? to\s+(?:work|run|enable|start|use)\b|\bkeeps? (?:failing|crashing|erroring)\b|"
                      # CUDA IPC: a handle that cannot be opened, mapped or imported (cudaIpcOpenMemHandle, cuMemImportFromShareableHandle)
                      r"\b(?:can'?t|cannot|can not|couldn'?t|unable to|fails? to|failed to)\s+(?:open|map|import|get|export)\s+(?:the\s+|an?\s+)?(?:cuda\s+)?(?:ipc\s+)?(?:mem(?:ory)?\s+)?handles?\b|"
                      r"\b(?:enable_?peer_?access|peer access|p2p|nccl\w*|cuda\w*|all_?reduce)\b[^.\n]{0,40}?\b(?:returns?|returned|throws?|threw|raises?|raised|gives?|gave)\s+(?:an?\s+|the\s+)?(?!no\b|zero\b|any\b)(?:\w+\s+)?errors?\b|"
                      r"\bwon'?t\s+(?:work|start|run|enable|communicat\w*|initiali[sz]e)\b|"
                      # an error said to have been seen, in the phrasings of issue templates and forum posts ("I get the
                      # following error", "it reports error", "the error above occurs", "raises an exception", "CUDA error when
                      # training"): GitHub's bug template asks for "what went wrong" and "error messages"; a report that names
                      # no error string still reports one (weak: the entry's own setup must hold for it to count)
                      r"\b(?:get|gets|got|getting|encounter\w*|met|meet|meeting|hit|hitting|run into|ran into|running into|receiv\w*|"
                      r"fac(?:e|es|ed|ing)|see|seeing|saw)\s+(?:the\s+following|the\s+same|this|these|that|an?|the|some|following|similar|"
                      r"below|same)\s+(?:[\w-]+\s+){0,2}?(?:errors?|exceptions?)\b|"
                      r"\b(?:reports?|reported|throws?|threw|thrown|raises?|raised|gives?|gave|prints?|printed|emits?|emitted)\s+(?!no\b|zero\b|any\b)"
                      r"(?:an?\s+|the\s+|this\s+|that\s+|the following\s+|following\s+|some\s+|the same\s+)?(?:[\w-]+\s+)?(?:errors?|exceptions?)\b|"
                      r"\bcaus(?:e|es|ed|ing)\s+(?:an?\s+|the\s+|this\s+|that\s+)?(?:[\w-]+\s+)?(?:errors?|exceptions?)\b|"
                      r"\b(?:errors?|exceptions?)\s+(?:above\s+|below\s+)?(?:occurs?|occurred|occurring|happens?|happened|appears?|appeared|"
                      r"(?:is|was|gets?|got) (?:raised|thrown|reported)|shows? up|showed up|pops? up|popped up)\b|"
                      r"\b(?:cuda|nccl|runtime|distributed)\s+errors?\s+(?:when|while|during|at|after|on|with)\b|"
                      r"\bfail(?:s|ed)?\s+(?:at|in|while|inside)\s+(?:the\s+)?\w|"
                      # it worked before (a regression said without naming what changed), or works only on some GPUs/settings
                      r"\bused to work\b|\bworked (?:fine |well |perfectly )?(?:before|previously|until)\b|"
                      r"\b(?:works?|worked|runs?|ran)\s+(?:fine\s+|normally\s+|correctly\s+|well\s+|ok\s+)?only\s+(?:on|with|when|if|in|between)\b|"
                      r"\bonly\s+(?:works?|worked|runs?|ran)\s+(?:fine\s+|normally\s+|correctly\s+)?(?:on|with|when|if|in|between)\b|"
                      r"(?:p2p|peer|access)\b[^.\n]{0,40}\b(?:is|are|was|were)\s+(?:not available|unavailable)\b|"
                      r"(?:出现|遇到|碰到|抛出|提示|报)了?(?:以下|如下|下面的|这个|这样的|一个)?(?:错误|异常)|之前(?:是)?(?:可以|正常)(?:运行|跑)?的|只有[^。，,\n]{0,20}?(?:才)?(?:可以|能|正常)|"
                      r"用不了|跑不起来|连不上|起不来|不起作用|没有效果|"
                      # peer traffic said to take the host path instead ("everything goes via the host")
                      r"\b(?:traffic|transfers?|copies|copy|data|everything|it)\b[^.\n]{0,40}?\b(?:goes|go|going|gets? routed|is routed|"
                      r"travels?|passes|bounces?|is staged)\s+(?:via|through|over)\s+(?:the\s+)?(?:host|cpu|system memory|sysmem|root complex)\b|"
                      r"\b(?:get|gets|got|getting|hit|hits|see|seeing|saw|throws?|threw|raises?|raised|report(?:s|ed)?)\s+(?:an?\s+|the\s+|some\s+)?(?:nccl|cuda) errors?\b|失败|不支持|无法|不能用|不可用|报错|不工作|不通|出错|(?:出现|发生|遇到|碰到)了?错误|(?:nccl|cuda)\s*error的?错误"),
    # NVLink trouble in words, with nvidia-smi nvlink's own names (-s: "<inactive>", -e: Replay/Recovery/CRC Errors)
    ("gpu.nvlink_replay_recovery", r"\bnvlinks?\b[^.\n]{0,60}?\b(?:replay|recovery)\s+(?:errors?|counts?|counters?|events?)|"
                                   r"\b(?:replay|recovery)\s+errors?\b[^.\n]{0,40}?\bnvlinks?\b"),
    ("gpu.nvlink_down", r"\bnvlinks?\b[^.\n]{0,40}?\b(?:inactive|(?:is|are|went|goes|go) down|not active)\b|"
                        r"\b(?:inactive|down)\s+nvlinks?\b|\blinks? (?:\d+ )?(?:is |are )?inactive\b|"
                        # the link not found at all, or a bridge not making contact (nvidia-smi nvlink -s prints no link)
                        r"\bnvlinks?\b(?:\s+bridges?)?\s+(?:is\s+|are\s+|was\s+|were\s+)?(?:not|n't|never)\s+(?:\w+\s+)?(?:detected|recogni[sz]ed|found|seated)\b|"
                        # ... with the cards between ("the NVLink bridge between the two 3090s is not detected")
                        r"\bnvlink\s+bridges?\b[^.\n]{0,40}?\b(?:is|are|was|were|does|do|did)\s*(?:not|n't|never)\s+(?:\w+\s+)?(?:detected|recogni[sz]ed|found|seated|show(?:n|ing)? up)\b|"
                        r"\bnvlink\s+bridges?\b[^.\n]{0,40}?\b(?:loose|not (?:fully |properly )?(?:seated|inserted|plugged)|partial(?:ly)? contact)|"
                        # Chinese: NVLink 断开 / 掉线 / 未激活 / 不活跃 / 没有连上 / 识别不到
                        r"\bnvlinks?\b[^。，,\n]{0,12}?(?:断开|断了|掉线|未激活|不活跃|没有?激活|没有?连上|连不上|识别不到|检测不到)|"
                        # ... or the verb first: 查不到/找不到/看不到/识别不到/检测不到 NVLink (在工作)
                        r"(?:查不到|找不到|看不到|识别不到|检测不到)[^。，,\n]{0,6}?\bnvlinks?\b"),
    # a GPU said to vanish from the host (what NVRM's "fallen off the bus" looks like to a user)
    # (not "CUDA devices": the devices a process's CUDA runtime enumerates, which a setting hides: _NO_CUDA_DEVICE)
    ("gpu.lost", r"(?<!cuda )\b(?:gpus?|cards?|devices?)\b[^.;,!?\n]{0,24}?\b(?:vanish\w*|disappear\w*|drops? off|dropped off|falls? off the bus|falling off the bus|fell off the bus|goes missing|went missing|"
                 r"is lost|was lost|no longer (?:shows?|visible|detected|appears?))|掉卡|掉了?\s*(?:显卡|gpu|一张卡)|显卡消失|(?:显卡|gpu)\s*(?:不见了|丢失)|"
                 r"(?:显卡|gpu|卡)[^。，,\n]{0,8}?(?:从总线上?掉|掉线|从总线上?消失)"),
    # (SIGBUS, "Bus error": what a process gets touching a /dev/shm file past what tmpfs holds; NCCL troubleshooting)
    ("symptom.crash", r"segfault|segmentation fault|core dumped|sigsegv|sigabrt|\bbus error\b|\bsigbus\b|\bsigfpe\b|\bfloating point exception\b|\bsigill\b|\bcrash(?:es|ed|ing)?\b|\bcrash\s?(?:loop\s?)?back\s?off\b|"
                      r"fallen off the bus|fell off the bus|falls? off the bus|falling off the bus|\bxid\s*:?\s*\d{1,3}\b|崩溃|段错误|掉卡"),
)
#: facts that are counts on the live host, said in words here: recorded as 1, "at least one"
_COUNTED = {"gpu.nvlink_down": "the text says an NVLink is down or inactive (at least one)",
            "gpu.nvlink_replay_recovery": "the text says NVLink replay or recovery errors were counted (at least one)"}
#: the gap between the setting and the word that says it worked: within the line, and not across a command's own
#: words ("NCCL_P2P_DISABLE=1 ./build/all_reduce_perf -g 4 ... 2 GPU正常": the flags of a command line are no report),
#: nor across a sentence ("Single GPU works fine. Forcing NCCL_P2P_DISABLE=1 did not help")
_GAP = r"(?:(?!\./|\s-{1,2}[a-z]|[.!?;](?:\s|$)|[。！？；])[^\n]){0,%d}?"  # nor across a sentence's end
#: P2P turned off, as people write it: the variable, "disabling P2P", "with P2P off", 禁用/关闭 P2P
_P2P_OFF = (r"(?:nccl_p2p_disable\s*=\s*1|p2p_disable=1|disabl\w* (?:the )?p2p|p2p (?:is )?disabled|(?:turn\w*|switch\w*) off (?:the )?p2p|"
            r"\bp2p (?:turned |switched )?off\b|(?:禁用|关闭|关掉|关了|禁掉|禁止)\s*(?:nccl\s*的?\s*)?p2p|p2p\s*(?:关闭|禁用|关掉)(?:后|之后|以后)?)")
#: what says the change worked, after it ("... and it works", "就好了") and before it ("fixed by ...", "works with ...")
_OFF_WORKED = (r"(?:works?|worked|runs?\b(?!\s+(?:into|out|on\b|at\b))|fix\w*|solv\w*|resolv\w*|help\w*|fine|ok\b|no longer|goes away|pass(?:es|ed)?\b|succeed\w*|avoid\w*|"
               r"no (?:issues?|problems?|hangs?|errors?)\b|"
               r"(?:good|the|a|only|simple)\s+(?:solution|workaround|fix)|解决|可以|正常|就好|不卡了|不再卡|不会卡|不hang了|没问题|跑通|成功|"
               r"才能|才(?:可以|行|不会|不再)|能跑|就行)")
_OFF_WORKED_BEFORE = (r"(?:works?|worked|fix\w*|solv\w*|resolv\w*|help\w*|runs? fine|pass(?:es|ed)?|succeed\w*|"
                      r"no (?:issues?|problems?|hangs?|errors?)\b|解决|可以|正常)")
#: the switch said to be needed for it to run at all ("I have to set NCCL_P2P_DISABLE=1", "runs only when ... is exported",
#: "hangs unless", 必须设置 / 需要加上 ... 才能跑)
_OFF_NEEDED = (r"(?:\b(?:have to|had to|has to|need(?:s|ed)? to|must|required to|only (?:when|if|with|after)|unless|except (?:with|when))\b|"
               r"必须|需要|只有|得)")


def _fixed_by_off(off: str, off_named: str, workaround: str) -> re.Pattern:
    """'it works with X turned off', in the three orders people write it: the switch then the words that it worked, the
    words then the switch (``off_named``: its explicit forms only), and the switch said to be needed; ``workaround``: the
    variable under a "Workaround:" heading."""
    return _rx(r"workaround\W{0,20}(?:\n[^\n]*){0,2}?" + workaround + "|"
               + off + _GAP % 80 + _OFF_WORKED + "|"
               + _OFF_WORKED_BEFORE + _GAP % 60 + off_named + "|"
               + _OFF_NEEDED + _GAP % 40 + off + "|"
               # the switch set for a purpose ("set NCCL_NVLS_ENABLE=0 to fall back to non-NVLS algorithms", "... to avoid the hang")
               + off + r"`?\s+(?:in order\s+)?to\s+(?:fall\w* back|avoid|fix|work ?around|get around|prevent|resolve|solve|make it work)\b")


_FIXED_BY_P2P_OFF = _fixed_by_off(_P2P_OFF, r"(?:nccl_p2p_disable\s*=\s*1|p2p_disable=1|disabl\w* p2p)", r"nccl_p2p_disable\s*=\s*1")
#: NVLink SHARP (NVLS) turned off, as people write it: NCCL_NVLS_ENABLE=0 (NCCL's env docs: "NCCL_NVLS_ENABLE ... 0 disables
#: NVLink SHARP"), "disabling NVLS", "non-NVLS algorithms", 禁用/关闭 NVLS: the trouble gone with it says NVLS was its path
_NVLS_OFF = (r"(?:nccl_nvls_enable\s*=\s*0|disabl\w* (?:the )?nvls|nvls (?:is )?disabled|(?:turn\w*|switch\w*) off (?:the )?nvls|"
             r"\bnvls (?:turned |switched )?off\b|(?:fall\w* )?back to non-nvls|(?:禁用|关闭|关掉|关了|禁掉)\s*nvls)")
_FIXED_BY_NVLS_OFF = _fixed_by_off(_NVLS_OFF, r"(?:nccl_nvls_enable\s*=\s*0|disabl\w* (?:the )?nvls)", r"nccl_nvls_enable\s*=\s*0")
#: a larger /dev/shm said to have been needed or to have fixed it ("had to manually increase the Docker /dev/shm",
#: "--shm-size=16g fixed it", "solved by mounting a bigger /dev/shm", "增大共享内存后正常"): NCCL's SHM transport and its
#: proxy buffers live in /dev/shm, and Docker's default is 64 MB (NCCL troubleshooting, "Docker: ... increase the shared
#: memory ... --shm-size=1g": https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html#sharing-data)
_SHM_WORD = r"(?:the\s+|its\s+|a\s+)?(?:(?:docker|container|pod|default)(?:'s)?\s+)?(?:(?:bigger|larger)\s+)?[`'\"]?(?:--)?(?:/dev/shm|shm[- _]?size|\bshm\b|shared memory(?:\s+size)?|共享内存|shm\s*大小)"
_SHM_GROW = _rx(r"(?:\bincreas\w*|\braise\w*|\braising|\benlarg\w*|\bbump\w*|\bexpand\w*|\bgrow\w*|\bmount\w*|增大|增加|调大|扩大|加大|设定|设置|挂载)"
                r"\s*(?:\w+\s+){0,2}?" + _SHM_WORD + r"|" + _SHM_WORD + r"\s*(?:was\s+|is\s+)?(?:increas\w*|enlarg\w*|rais\w*|bump\w*|调大|增大|扩大)|"
                # the size set to a figure, in Chinese word order ("把 --shm-size 调到 16g", "共享内存改成 8G")
                + _SHM_WORD + r"\s*(?:调到|调成|改到|改成|改为|设为|设成|设置为|设到|增加到|加到|提高到)\s*\d+\s*[gm]|"
                r"--shm-size\s*[= ]\s*\d+\s*[gm]\w*" + _GAP % 60 + r"(?:works?|worked|fix\w*|solv\w*|resolv\w*|help\w*|解决|正常)")
#: shared memory said to have run out ("it runs out of shared memory quickly at /dev/shm", "/dev/shm is full",
#: "共享内存不足"): NCCL's SHM transport and proxy buffers are files in /dev/shm (src/misc/shmutils.cc: ncclShmOpen,
#: "Error while creating shared memory segment"; NCCL troubleshooting, "Shared memory": Docker's default 64 MB is too
#: small, https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html#sharing-data)
_SHM_OUT = _rx(r"\b(?:ran|runs?|running|run)\s+out\s+of\s+(?:the\s+)?(?:shared[- ]memory|shm\b|/dev/shm)|\bout of shared[- ]memory\b|"
               r"(?:/dev/shm|shared[- ]memory|\bshm\b)\s+(?:is\s+|was\s+|gets?\s+|got\s+|became\s+|being\s+)?(?:full|exhausted|filled up)\b|"
               r"(?:exhaust\w*|fill\w* up)\s+(?:the\s+)?(?:/dev/shm|shared[- ]memory)|"
               # too little of it (PyTorch's DataLoader on a worker's SIGBUS: "This might be caused by insufficient shared
               # memory (shm)", torch/utils/data/_utils/signal_handling.py; a typo of "memory" still reads)
               r"\b(?:insufficient|not enough|too little|lack of)\s+(?:the\s+)?(?:shared[- ]mem\w*|shm\b|/dev/shm)|"
               r"共享内存\s*(?:资源|空间)?\s*(?:不足|不够|耗尽|用完|满了|已满|爆了)|"
               # a shared-memory call that ran out of room, on one line (BytePS's shared_memory.cc: "Check failed:
               # (ftruncate(shm_fd, size)) >= (0) No space left on device"; a path under /dev/shm)
               r"(?:shared_memory|shm_open|shm_fd|/dev/shm/)[^\n]{0,120}?\bno space left on device\b|"
               # PyTorch's shared-memory files (aten MapAllocator: shm_open("/torch_<pid>_<rand>_<n>"), so they live in
               # /dev/shm): "unable to write to file </torch_3321_2875193601_17>: No space left on device (28)"
               r"\bunable to write to file </torch_\d+_\d+(?:_\d+)?>: no space left on device\b|"
               # vLLM's shared-memory checks ("Insufficient space in /dev/shm for Engram tables: ... required, 64 MiB free")
               # and SGLang's multimodal transport ("Failed to allocate shared memory for ... ([Errno 28] No space left on
               # device)")
               r"\binsufficient space in /dev/shm\b|\bshared memory\b[^\n]{0,120}?\bno space left on device\b|"
               # UCX's POSIX shared-memory transport (src/uct/sm/mm/posix/mm_posix.c): "Not enough memory to write total of
               # %zu bytes. Please check that /dev/shm or the directory you specified has more available memory."
               r"\bnot enough memory to write total of \d+ bytes\. please check that /dev/shm\b")
#: the needed change said outright: "had to", "fixed by", "after ...", "works", "solved"
_SHM_FIX_WORDS = _rx(r"\bhad to\b|\bneed(?:ed)? to\b|\bfix\w*|\bsolv\w*|\bresolv\w*|\bworks?\b|\bworked\b|\bhelp(?:s|ed)?\b|\bafter\b|"
                     r"went away|goes away|解决|正常|就好|之后|后")
#: the setting said NOT to help (an auxiliary's n't only: "volumeMount" is no negation) ("Forcing NCCL_P2P_DISABLE=1 did not help", "设置 NCCL_P2P_DISABLE=1 也没有解决")
_NOT_FIXED = _rx(r"\bnot\b|\b(?:do|does|did|is|was|were|are|could|would|ca|wo|has|have|had|should)n['’]?t\b|\bcannot\b|\bnever\b|\bno (?:effect|difference|luck|change)|没有|没用|无效|未能|不起作用|也不行|还是不行")
#: a resolution in words: changing a component's version fixed it ("fixed after upgrading the driver", "downgrading
#: NCCL to 2.18 solved it", "works with the 570 driver" is not one: a version named, not a change)
_CHANGE = r"(?:updat|upgrad|downgrad|roll\w* ?back|revert|switch|rebuil|recompil|re-?install)\w*"
#: the frameworks whose releases bring their own NCCL (PyTorch's pip wheels pin an nvidia-nccl-cu* release, TensorFlow's
#: and JAX's CUDA wheels likewise; vLLM and SGLang pin a PyTorch): a change of one is a change of NCCL ("framework")
_FRAMEWORK = r"pytorch|torch|tensorflow|jax(?:lib)?|vllm|sglang"
_PART = (r"(?:(?:the\s+|to\s+(?:the\s+)?(?:latest|newer|older|new|an?\s+(?:newer|older))\s+|our\s+|my\s+)?(?:nvidia\s+|gpu\s+)?"
         r"(driver|nccl|cuda(?: toolkit)?|kernel|bios|firmware)|"
         # a framework is named after "to" without a word for its age ("after updating to PyTorch 2.7")
         r"(?:the\s+|to\s+(?:the\s+)?(?:(?:latest|newer|older|new)\s+)?|our\s+|my\s+)?(" + _FRAMEWORK + r")\b)")
#: the rest of a sentence that says the change brought the trouble ("..., after upgrading the driver it doesn't work
#: anymore / it hangs / no longer works"): what worked is the state before the change
_TROUBLE_AFTER = _rx(r"\b(?:does\s*n[o']?t|do\s*n[o']?t|did\s*n[o']?t|is\s*n[o']?t|no longer|stopped)\s+(?:\w+\s+)?work\w*|"
                            r"\b(?<!no longer )(?<!not )(?<!never )(?:breaks?|broke|fails?|failed|hangs?|hung|stuck|crash\w*)\b(?!\s+(?:before|earlier|previously))")


def _component(what: str) -> str:
    """A changed part as text.fixed_by/broken_by name it: a framework that brings its own NCCL is "framework"."""
    return "framework" if re.fullmatch(_FRAMEWORK, what) else what


_FIXED = r"(?:fix\w*|solv\w*|resolv\w*|work(?:s|ed)?|went away|goes away|helped|succeed\w*)"
_NEAR = r"(?:[^.\n]|\.\d){0,40}?"  # within the sentence (a version's dots do not end it)
_FIXED_BY_CHANGE = _rx(
    _FIXED + r"\b" + _NEAR + r"\b(?:by|after|with|when)\s+" + _CHANGE + r"\s+" + _PART + "|"
    + _CHANGE + r"\s+" + _PART + r"\b" + _NEAR + r"\b" + _FIXED + r"\b(?! ?n'?t)|"
    + r"\bfix(?:ed)?\s*(?:was|is|:)\s*(?:to\s+)?" + _CHANGE + r"\s+" + _PART + "|"
    + r"(?:升级|降级|更新|回退)了?\s*((?:cuda\s*|nvidia\s*|显卡)?驱动|nccl|cuda)[^。\n]{0,20}?(?:解决|正常|好了)|"
    + r"((?:cuda\s*|nvidia\s*|显卡)?驱动|nccl|cuda)(?:版本)?[^。\n，,]{0,16}?(?:升级|降级|更新|回退|换回|切换)[^。\n，,]{0,20}?(?:解决|正常|好了|没问题)|"
    # an OLDER release said to work: a regression of that component ("we got it working on an older driver revision",
    # "works fine with the previous NCCL", "旧版驱动正常")
    + r"\b(?:works?|worked|working|runs?|ran|running|fine|ok)\b(?:\s+\w+){0,2}?\s+(?:on|with|using|under)\s+(?:an?\s+|the\s+)?"
      r"(?:older|previous|earlier|prior|last)\s+(?:\w+\s+)?(?:(?:nvidia|gpu)\s+)?(driver|nccl)s?\b|"
    + r"\b(?:older|previous|earlier|prior)\s+(?:(?:nvidia|gpu)\s+)?(driver|nccl)s?\b(?:\s+\w+){0,3}?\s+(?:works?|worked|is fine|was fine|runs? fine)\b|"
    + r"(?:旧版|旧的|老版本?的?|之前的)\s*(驱动|nccl)[^。\n]{0,10}?(?:正常|可以|没问题)")
#: a release of a component: "nccl-2.27.3", "NCCL 2.19", "driver 545", "the 560 driver", "CUDA 12.4" (the number makes it a release)
_RELEASE = (r"(?:(nccl|driver|cuda)[- _]?(?:version\s+|v)?\d{1,3}(?:\.\d{1,3}){0,2}\b|(?:the\s+)?\d{3}(?:\.\d{1,3}){0,2}\s+(driver)s?\b)")
_REGRESSION_SAID = (r"\b(?:starting|beginning)\s+(?:from|with|at|in)\s+[`'\"]?" + _RELEASE
                    + r"|\bsince\s+[`'\"]?" + _RELEASE
                    + r"|\bfrom\s+[`'\"]?" + _RELEASE + r"[`'\"]?\s+on(?:wards?)?\b"
                    + r"|" + _RELEASE + r"[`'\"]?\s+(?:\w+\s+){0,2}?(?:has|have|had|introduc\w*|brings?|brought|shows?|showed|caus\w*|is|was)\s+"
                      r"(?:an?\s+|the\s+|some\s+|this\s+)?(?:\w+\s+)?regression"
                    + r"|\bregression\w*\s+(?:\([^)\n]{0,20}\)\s+)?(?:in|with|since|from|of|introduced (?:in|by))\s+(?:the\s+)?(?:newer?\s+|latest\s+|recent\s+)?" + _RELEASE
                    + r"|\b(nccl|driver)\s+(?:\d[\d.]*\s+)?regression"
                    # a release named as having the bug ("a bug in NCCL 2.20.3", "the NCCL 2.19 bug", "a known issue of
                    # driver 550"): the words of NCCL's and NVIDIA's release notes ("Fix bug in ...", "Known Issues")
                    + r"|\b(?:bug|known issue|defect)s?\s+(?:in|of|with)\s+(?:the\s+)?" + _RELEASE
                    # ... or in a part of a release named before its version ("a bug in NCCL RAS v2.27.3", "a bug in the
                    # NCCL NVLS code of 2.19.3"): NCCL's release notes name the part ("Fix RAS ...", "Fix NVLS ...")
                    + r"|\b(?:bug|known issue|defect)s?\s+(?:in|of|with)\s+(?:the\s+)?(nccl)[- _](?!tests?\b)(?:[a-z][\w/-]{1,15}\s+){1,2}(?:code\s+)?(?:of\s+|in\s+)?v?2\.\d{1,2}(?:\.\d{1,3})?\b"
                    + r"|" + _RELEASE + r"[`'\"]?\s+(?:\w+\s+)?(?:bug|known issue|defect)s?\b"
                    # the change named as the cause ("Upgrading NCCL from 2.22 to 2.24/2.29 causes significant performance regression")
                    + r"|\b" + _CHANGE + r"\s+(?:the\s+|our\s+|my\s+)?(?:nvidia\s+)?(nccl|driver|cuda)\b(?:[^.\n]|\.\d){0,40}?\b(?:caus\w*|introduc\w*|brought|brings?|leads? to|led to|results? in)\b"
                    + r"|从\s*(nccl|cuda|驱动)\s*v?\d[\d.]*\s*(?:版本)?\s*(?:开始|起)"
                    + r"|(nccl|cuda|驱动)\s*(?:版本)?\s*v?\d[\d.]*[^。\n，,]{0,10}?(?:回归|退化|性能回退)")
#: an NCCL variable said to bring the trouble: set in a condition the trouble follows ("when the NCCL_P2P_USE_CUDA_MEMCPY
#: function is enabled, ... will hang", "if I set NCCL_ALGO=Tree it crashes", "With NCCL_CUMEM_ENABLE=0 set ... I get very slow
#: all-reduce"), named as the cause ("NCCL_MIN_NCHANNELS=32 causes a hang"), or its removal said to fix it ("unsetting
#: NCCL_IB_DISABLE fixed it", "去掉 NCCL_P2P_LEVEL 后正常"). NCCL's env docs: parameters of the Debugging section "should not be
#: used in production ... Keeping them set may result in sub-optimal behavior, crashes, or hangs"
#: (https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html). Not NCCL_DEBUG* (it only prints), not a variable
#: set to get the job working (the sentence says it works: a workaround, whose fault is elsewhere)
_VAR = r"[`'\"]?(nccl_(?!debug)[a-z0-9_]+)(?:\s*=\s*[`'\"]?[\w.^,-]+)?[`'\"]?"
_ENV_CAUSE = _rx(r"\b(?:when|whenever|if|once|after|with)\s+(?:i\s+|we\s+|you\s+)?(?:set(?:ting)?\s+|enabl\w*\s+|export\w*\s+|add\w*\s+|us(?:e|ing)\s+)?"
                 r"(?:the\s+)?(?:env(?:ironment)?\s+(?:variable\s+)?)?" + _VAR +
                 r"\s*(?:(?:function|variable|option|flag|setting|env(?:ironment variable)?)\s+)?"
                 r"(?:(?:is|was|are|were|gets?|got)\s+)?(?:set|enabled|on|turned on|used|exported|added|applied)?\b|"
                 + _VAR + r"\s+(?:\w+\s+)?(?:causes?|caused|makes?|made|leads? to|led to|results? in|triggers?|triggered|breaks?|broke)\b|"
                 # the setting named with its value, or with a second variable, before the verb ("Setting NCCL_CHUNK_SIZE /
                 # NCCL_P2P_NET_CHUNKSIZE to >= 1 MiB makes sendrecv_perf return incorrect results", "setting NCCL_ALGO to
                 # Tree causes a hang")
                 r"\bsetting\s+" + _VAR + r"(?:\s*(?:/|,|and|or)\s*[`'\"]?nccl_[a-z0-9_]+[`'\"]?)*\s+to\s+[^.\n]{1,30}?\s"
                 r"(?:causes?|caused|makes?|made|leads? to|led to|results? in|triggers?|triggered|breaks?|broke)\b|"
                 # named as the reason ("crashed because NCCL_BUFFSIZE was set"), or set and then removed to fix it
                 # ("NCCL_ALGO=Ring was set in the launcher; unsetting it fixed it")
                 r"\b(?:because|due to)\s+(?:of\s+)?(?:the\s+|a\s+|an\s+)?(?:env(?:ironment)?\s+(?:variable\s+)?)?" + _VAR + r"\s+(?:(?:is|was|were|being)\s+)?(?:\w+\s+)?(?:set|exported|enabled)\b|"
                 + _VAR + r"\s+(?:is|was|were|had been|got)\s+(?:\w+\s+){0,2}?(?:set|exported|added|left)\b[^.\n]{0,80}?"
                 r"\b(?:unset\w*|remov\w*|delet\w*|dropp\w*)\s+(?:it|that|this|the (?:variable|setting|line|export))\b"
                 r"(?=[^.\n]{0,40}?\b(?:works?|worked|fix\w*|solv\w*|resolv\w*|goes away|went away|fine)\b)|"
                 r"\b(?:unset\w*|remov\w*|delet\w*|dropp?\w*|without)\s+(?:the\s+)?(?:env(?:ironment)?\s+(?:variable\s+)?)?" + _VAR +
                 r"(?=[^.\n]{0,60}?\b(?:works?|worked|fix\w*|solv\w*|resolv\w*|goes away|went away|fine)\b)|"
                 r"(?:去掉|删除|删掉|取消)\s*" + _VAR + r"(?=[^。\n]{0,20}?(?:正常|解决|好了))|"
                 r"(?:设置|开启|启用|加上)(?:了)?\s*" + _VAR + r"(?:\s*(?:后|之后|以后|时))")
_ENV_TROUBLE = _rx(r"\bhang\w*|\bhung\b|\bstuck\b|deadlock|\bfreez\w*|\bslow\w*|\bcrash\w*|\bfail\w*|\berrors?\b|\bwrong\b|\bincorrect\b|"
                   r"\bcorrupt\w*|\bsegfault|\btime ?outs?\b|\btimed out\b|\bdrops?\b|\bdegrad\w*|\bnan\b|"
                   r"卡住|卡死|挂起|变慢|很慢|报错|失败|出错|崩溃|错误")
_ENV_WORKED = _rx(r"\b(?:works?|worked|working|fine|complet\w*|succeed\w*|pass(?:es|ed)?|gets? past|got past|fix\w*|solv\w*|resolv\w*|goes away|went away|no longer|avoid\w*|workaround|help\w*)\b|正常|解决|好了")
#: the trouble said to begin after a change of version ("after the driver update", "since upgrading NCCL to 2.19",
#: "升级驱动后"): read only in a text that also holds a symptom, and never where the change is said to have fixed it
_BROKEN_BY_CHANGE = _rx(r"\b(?:after|since|following)\s+(?:the\s+|a\s+|an\s+|my\s+|our\s+|this\s+)?(?:(?:nvidia|gpu)\s+)?"
                        r"(driver|nccl|cuda|kernel|bios|firmware|" + _FRAMEWORK + r")\s+(?:update|upgrade|downgrade|change|install\w*)|"
                        r"\b(?:after|since)\s+" + _CHANGE + r"\s+" + _PART + "|"
                        # the NVIDIA driver's own packages updated, by hand or by the distribution's automatic updates
                        # (Ubuntu's linux-modules-nvidia-<branch>-<kernel>, nvidia-driver-<branch>, nvidia-dkms-<branch>,
                        # libnvidia-compute-<branch>: "after the host got an automatic update of linux-modules-nvidia-440-...",
                        # "since unattended-upgrades updated nvidia-driver-535"); the container toolkit and Fabric Manager
                        # are packages of their own, not the driver
                        r"\b(?:after|since|following)\s+(?:[\w-]+\s+){0,5}?" + _CHANGE + r"\s+(?:of\s+|to\s+)?(?:the\s+)?"
                        r"(?:(nvidia)\s+(?:gpu\s+)?driver|(?:linux-(?:modules|objects|signatures)-|lib)?(nvidia)-"
                        r"(?!container|docker|fabric|cuda-mps|persistenced)[a-z0-9][\w.:+-]*)|"
                        # a driver branch as the change's end ("after upgrading from 535", "since moving to 550.54"): NVIDIA's
                        # driver branches are three digits, R450-R599 in the CUDA 11-13 era
                        r"\b(?:after|since)\s+(?:upgrad|updat|downgrad|mov|switch|go)\w*\s+(?:from|to)\s+(?:the\s+)?r?(4[5-9]\d|5\d\d)(?:\.\d{1,3}){0,2}\b"
                        r"(?!\s*(?:mb|mib|gb|gib|w\b|watts?|mhz|%|gpus?|cores?|steps?|series|rtx|gtx))|"
                        r"(?:升级|更新|降级)了?\s*((?:cuda\s*|nvidia\s*|显卡)?驱动|nccl|cuda)[^。\n，,]{0,12}?(?:后|之后|以后)|"
                        r"((?:cuda\s*|nvidia\s*|显卡)?驱动|nccl|cuda)(?:版本)?[^。\n，,]{0,16}?(?:升级|更新|降级|换)[^。\n，,]{0,16}?(?:后|之后|以后)|"
                        # a release named as where the trouble starts, or as a regression (the words of release notes and
                        # bisecting reports: "starting from nccl-2.27.3 I see #wrong", "since NCCL 2.19", "NCCL 2.19.4 has a
                        # performance regression", "a regression in the 545 driver", "从 NCCL 2.19 开始", "驱动 545 回退"):
                        # NCCL's release notes list "Fix ... regression"; NVIDIA's driver release notes "Fixed a regression"
                        + _REGRESSION_SAID)
#: nvidia-smi not found ("bash: nvidia-smi: command not found", "both nvcc and nvidia-smi not found", "nvidia-smi 命令返回错误
#: command not found"): in a container, nvidia-smi is one of the host's files the NVIDIA Container Toolkit mounts (its
#: "utility" capability), so a container started without the toolkit (no --gpus, no nvidia runtime) has none
_SMI_MISSING = _rx(r"\bnvidia-smi\b[^\n.]{0,40}?(?::\s*|\s+)(?:command not found|not found)\b|\bnvidia-smi\b[^\n]{0,20}?(?:命令)?(?:找不到|未找到)")
#: fewer GPUs seen than the machine holds, said in words: what a process sees is what CUDA_VISIBLE_DEVICES, the
#: container's device list (NVIDIA_VISIBLE_DEVICES, docker --gpus, a pod's nvidia.com/gpu) or the scheduler passes on
#: (CUDA C Programming Guide, "CUDA Environment Variables"; NVIDIA Container Toolkit, "Specialized configurations"),
#: and nvidia-smi itself lists only the GPUs the driver brought up. "can only see 1 GPU", "shows only one GPU", "only 2 of
#: the 4 GPUs are detected", "the second GPU is not detected", "device_count() returns 1 but ...", 只能识别到两张卡, and the one
#: seen named instead of counted ("only the TITAN is seen"), or some said missing ("Some CUDA devices not shown").
#: (0 GPUs is another symptom: no device at all, cuda/no-device-visible.) A count of what is seen is kept where said.
_N_GPUS = r"(?:\d+|one|two|three|four|five|six|seven|a single|single)"
_GPU_NOUN = r"(?:\w+\s+){0,2}?(?:gpus?|cards?|devices?|graphics cards?)\b"
_GPUS_MISSING = _rx(
    r"\bonly\s+(?:ever\s+|really\s+|actually\s+)?(?:be\s+able\s+to\s+)?(?:see|sees|saw|seeing|detects?|detected|finds?|found|recogni[sz]es?|recogni[sz]ed|shows?|showed|lists?|listed)\s+"
    r"(?:the\s+)?(?P<n1>" + _N_GPUS + r")\s+(?:of\s+(?:the|my|our)\s+(?:(?:\d+|two|three|four|eight)\s+)?)?" + _GPU_NOUN + r"|"
    r"\b(?:shows?|showing|sees?|seeing|lists?|listing|detects?|detecting|recogni[sz]es?|finds?)\s+only\s+(?P<n2>" + _N_GPUS + r")\s+" + _GPU_NOUN + r"|"
    r"\bonly\s+(?P<n3>" + _N_GPUS + r")\s+(?:of\s+(?:the|my|our)\s+(?:\d+|two|three|four|eight)\s+)?" + _GPU_NOUN + r"\s+(?:is|are|was|were|gets?|got|being)?\s*"
    r"(?:visible|detected|recogni[sz]ed|found|listed|shown|seen|show(?:s|ed|ing)?\s+up|enumerated)\b|"
    r"\b(?:second|other|2nd|3rd|third|fourth|remaining)\s+" + _GPU_NOUN + r"\s+(?:is|are|was|were|does|do|did)?\s*(?:not|n't|never)\s+(?:being\s+)?"
    r"(?:detected|recogni[sz]ed|found|visible|listed|shown|seen|show(?:s|n)?\s+up)\b|"
    r"\b(?:does|did|do|can|could|cannot|can't|won't)\s*(?:not|n't)?\s+(?:show|see|list|detect|recogni[sz]e|find|report|enumerate)\s+(?:the\s+)?(?:second|other|2nd|both|all\s+(?:\d+|two|three|four|eight)|remaining)\s+" + _GPU_NOUN + r"|"
    # a GPU past the first named by its index as not shown ("doesn't report `GPU 1 ...` when I call nvidia-smi", "I do not
    # see cuda:2": nvidia-smi and CUDA number GPUs from 0, PyTorch's device strings too), or the second one said ignored
    # ("the open driver ignores the second GPU installed")
    r"\b(?:does|did|do)\s*(?:not|n't)\s+(?:ever\s+)?(?:show|see|list|detect|recogni[sz]e|find|report|enumerate)\s+[`'\"]?(?:gpu\s?|cuda:)[1-9]\b|"
    r"\b(?:ignores?|ignored|ignoring)\s+(?:the\s+|my\s+|our\s+)?(?:second|other|2nd)\s+" + _GPU_NOUN + r"|"
    # the one seen named instead of counted: "only the TITAN is seen by ComfyUI", "only my smaller device is recognized"
    r"\bonly\s+(?:the|my|our|one)\s+(?:\w+\s+){0,2}?(?:gpus?|cards?|devices?|titan\w*|rtx\s?\w+|quadro\w*|a\d{3,4}\w*|[ahlvb]\d{2,3}\w*|\d{4}(?:\s?ti)?)\s+"
    r"(?:is|was|gets?|got)\s+(?:being\s+)?(?:seen|recogni[sz]ed|detected|visible|listed|shown|picked up)\b|"
    # some of them said missing: "Some CUDA devices not shown", "one of my GPUs is not detected"
    r"\b(?:some|one of (?:the|my|our))\s+(?:cuda\s+|nvidia\s+)?(?:gpus|devices|cards)\s+(?:(?:is|are|were|was)\s+)?(?:not|n't|never)\s+(?:being\s+)?"
    r"(?:detected|recogni[sz]ed|found|visible|listed|shown|seen|show(?:s|n)?\s+up)\b|"
    r"(?:只能|只|仅|仅能)(?:识别|检测|看|显示|找|认|读)到?了?\s*(?P<n4>\d+|一|两|二|三|四|五|六|七)\s*(?:张|块|个)|"
    r"(?:识别|检测|认|读)不(?:到|出)\s*(?:第二张|另一张|其[他它余]的?|剩下的|另外的?)")
#: the same, through a device count: "torch.cuda.device_count() returns 1" in a sentence that says it should be more
_COUNT_SAID = _rx(r"device_?count\(\)\W{0,3}\s*(?:only\s+)?(?:returns?|returned|=+|is|was|gives?|gave|shows?|reports?|prints?|outputs?)\s*:?\s*(?:only\s+)?[`'\"]?(?P<n5>[1-9]\d?)\b")
_COUNT_SHORT = _rx(r"\bonly\b|\bbut\b|\binstead\b|\balthough\b|\beven though\b|\bwhile\b|\bshould\b|只|但")


#: CUDA (or the framework over it) sees no GPU at all, said in words or as the framework's own query: PyTorch's
#: torch.cuda.is_available() returning False and device_count() returning 0 (torch/cuda/__init__.py: both are the
#: visible device count, 0 when CUDA initialisation fails or nothing is visible), TensorFlow's empty
#: list_physical_devices('GPU') ("Num GPUs Available: 0"), JAX falling back to the CPU, "CUDA cannot find the GPU",
#: "no GPU detected", GPU设备找不到 / 检测不到显卡 / cuda不可用. CUDA's own causes are few (cudaGetDeviceCount: no device
#: visible, 100; the driver older than the runtime, 35; on NVSwitch systems the fabric not initialised by Fabric
#: Manager, 802): entries of those causes answer it. Fewer GPUs than installed is symptom.gpus_missing, not this.
_NO_CUDA_DEVICE = _rx(
    r"\bis_available\(\)\W{0,3}\s*(?:(?:always|still|only)\s+)?(?:returns?|returned|returning|is|was|gives?|gave|prints?|printed|outputs?|shows?|=+|->|:|返回(?:的是|值为|值是)?|为|是|显示)\s*:?\s*[`'\"]?false\b|"
    r"\b(?:cuda\.|torch\.cuda\.)device_count\(\)\W{0,3}\s*(?:(?:always|still)\s+)?(?:returns?|returned|is|was|=+|gives?|gave|prints?|printed|shows?|->|:|返回|为|是)\s*:?\s*[`'\"]?0\b(?!\.\d)|"
    r"\bnum gpus available:?\s*0\b|\bnumber of (?:available |visible |cuda )?gpus(?: available| found| visible)?\s*[:=]\s*0\b(?!\.\d)|\blist_physical_devices\(\W*gpu\W*\)\W{0,3}\s*(?:returns?|returned|is|gives?|gave|shows?|->|:)?\s*(?:an\s+)?(?:\[\]|empty)|"
    r"\bno gpu/tpu found, falling back to cpu\b|"
    # CUDA's devices (what the process's runtime enumerates under CUDA_VISIBLE_DEVICES) said to vanish
    r"\bcuda devices?\b[^.;,!?\n]{0,20}?\b(?:vanish\w*|disappear\w*|goes missing|go missing|went missing)\b|"
    # ... and the same in the progressive ("the GPU Docker install is not finding GPU devices")
    r"\b(?:cuda|pytorch|torch|tensorflow|jax|vllm|sglang|ollama|docker|install(?:ation)?|image|the container|containers?|the (?:program|code|application|app|job|process|model|server|service|framework|pod))\s+"
    r"(?:(?:still\s+)?(?:can(?:not|'t| not)|could(?: not|n't)|does(?: not|n't)|did(?: not|n't)|do(?: not|n't)|won't|is(?: not|n't) able to|fails? to|failed to|unable to)\s+"
    r"(?:find|see|detect|recogni[sz]e|use|access|locate)|(?:is|are|was|were)(?: not|n't)\s+(?:finding|seeing|detecting|recogni[sz]ing|picking up|locating))\s+"
    r"(?:the\s+|any\s+|a\s+|my\s+|our\s+)?(?:nvidia\s+)?(?:gpus?|gpu devices?|cuda devices?|cuda-capable devices?|graphics cards?)\b(?!\s*\d)|"
    # ... and the NGC containers' start check ("ERROR: No supported GPU(s) detected to run this container": CUDA
    # initialisation found no GPU it can use)
    r"\bno\s+(?:supported\s+|compatible\s+|usable\s+)?(?:nvidia\s+|cuda\s+)?(?:gpus?|gpu\(s\)|cuda(?:-capable)? devices?)\s+(?:is\s+|are\s+|was\s+|were\s+)?(?:found|detected|available|visible|recogni[sz]ed)\b|"
    r"(?<!second )(?<!other )(?<!\d )\bgpus?\s+(?:devices?\s+)?(?:is|are|was|were)?\s*not\s+(?:found|detected|recogni[sz]ed|available)\b|"
    r"(?:找不到|检测不到|识别不到|没有检测到|未检测到|未找到|没找到|无法识别|无法检测到?|无法找到)\s*(?:任何\s*)?(?:gpu|显卡|cuda\s*设备|nvidia\s*设备)|"
    r"(?:gpu|显卡|cuda)\s*(?:设备)?\s*(?:一直|总是|始终)?\s*(?:找不到|检测不到|识别不到|不可用|用不了|无法使用)")
#: ... unless the GPUs are not the subject ("P2P between the GPUs is not available", "NVLink between GPUs was not
#: detected": something between or to them is missing) or the sentence is a condition ("when torch.cuda.is_available()
#: returns False we fall back to the CPU", "if no GPU is found")
_HYPOTHETICAL = _rx(r"\b(?:if|when|unless|whether)\b[^.\n]*$")  # a clause that only supposes what follows
#: a machine the text says has no GPU by design (a CPU-only runner, node or instance; "no GPU installed, by design"):
#: nothing seeing a GPU there is as it should be
_NO_GPU_BY_DESIGN = _rx(r"\bcpu[- ]only (?:ci |build |test )?(?:runners?|machines?|nodes?|hosts?|instances?|servers?|vms?|workers?|"
                        r"builders?|boxes|agents?|pods?)\b|\b(?:no|without(?: an?| any)?) (?:nvidia )?gpus?\b[^.\n]{0,30}?"
                        r"\b(?:by design|on purpose|intentionally|as expected)\b|没有(?:显卡|gpu)的(?:机器|节点|服务器)|纯\s*cpu\s*(?:机器|节点|服务器)")
_NO_CUDA_DEVICE_NOT_SAID = _rx(r"\b(?:between|to|across|among|from|with|over|through|of|and|if|when|whether|unless)\s+"
                              r"(?:(?:the|two|both|all|my|our|these|those|\d+|multiple|several|other)\s+){0,2}(?:[\w.]*\.)?$")


#: the driver itself sees the GPUs, said beside a program that finds none: "nvidia-smi works correctly", "nvidia-smi
#: shows both cards", "GPU support works for other invocations (PyTorch, Jupyter)", nvidia-smi 正常. cudaGetDeviceCount
#: then fails in that program's CUDA runtime, not in the driver: the runtime newer than the driver (35,
#: cudaErrorInsufficientDriver, CUDA's compatibility rule: each toolkit needs a minimum driver; frameworks that ship an
#: older runtime still work) is one cause among the others (a hidden device, 100; the fabric not initialised, 802)
_DRIVER_SEES_GPUS = _rx(
    r"\bnvidia-smi`?\s+(?:command\s+)?(?:works|is working|worked|runs|ran|shows|showed|lists|listed|displays|detects|sees|"
    r"recogni[sz]es|reports)\b(?!\s+(?:no\b|nothing|an?\s+error|errors?\b|fail))|"
    r"\bnvidia-smi`?\s+(?:output\s+)?(?:is|looks)\s+(?:fine|ok|normal|correct)\b|"
    r"\b(?:gpu support|the gpu|gpus|cuda)\s+works?\s+(?:fine\s+|correctly\s+|well\s+)?(?:for|with|in|under|via)\s+(?:other|pytorch|torch|tensorflow|jupyter)\b|"
    r"nvidia-smi\s*(?:命令)?\s*(?:正常|能看到|可以看到|显示正常)")


def _gpus_missing(low: str) -> "re.Match | None":
    """The first place the text says fewer GPUs are seen than there are (None if it does not)."""
    m = _GPUS_MISSING.search(low)
    if m:
        return m
    for m in _COUNT_SAID.finditer(low):
        if _COUNT_SHORT.search(_sentence(low, m.start(), m.end())):
            return m
    return None


_SYMPTOM_KEYS = ("symptom.hang", "symptom.wrong_results", "symptom.slow", "symptom.fails", "symptom.crash", "symptom.reported")
#: a driver branch without its minor ("fixed with 570", "driver 560", "R535"), only in a text that says "driver"
_DRIVER_MAJOR = _rx(r"(?:\bdrivers?\s+(?:version\s+|branch\s+)?|\b(?:with|on|to|from|using)\s+(?:driver\s+)?|\br|"
                   r"驱动(?:版本)?\s*(?:是|为|:|：)?\s*|驱动\S{0,4}?(?:升级|降级|更新|回退)(?:到|至)\s*)"
                           r"(4[5-9]\d|5\d\d)(?!\d|\.\d)(?!\s*(?:mb|mib|gb|gib|w\b|mhz|%|x\b|gpus?|cores?))")
#: a measured bandwidth set against what it was or should be, in one sentence: "0.5 GB/s ... with 545 it was 25 GB/s",
#: "expected ~25 GB/s but got 3 GB/s", "gives 0.8 GB/s instead of 12 GB/s" (what p2pBandwidthLatencyTest, nvbandwidth and
#: nccl-tests reports compare: a figure against the previous one or the link's rate). Groups: (figure, unit) pairs
_BW = r"(\d+(?:\.\d+)?)\s*(gb/s|gbps|gib/s|gb/sec|mb/s|mib/s)"
_BW_THEN = (r"(?:it\s+|that\s+|this\s+|which\s+|bandwidth\s+)?(?:was|were|used to (?:be|get|give|reach)|had been)\s+(?:about\s+|around\s+|~|over\s+)?"
            r"|(?:before|previously|earlier)\s*[:,]?\s*(?:it\s+was\s+|we\s+(?:got|had|saw)\s+)?(?:about\s+|around\s+|~)?"
            r"|(?:expect\w*|should (?:be|get|give|reach)|instead of|rather than|down from|theoretical(?:ly)?|nominal|spec(?:ified)?)\s*(?:of\s+|is\s+|to\s+)?(?:about\s+|around\s+|~|over\s+)?")
_BW_CONTRAST = _rx(_BW + r"[^.\n]{0,80}?\b(?:" + _BW_THEN + r")" + _BW + "|"
                   r"(?<![\w])(?:" + _BW_THEN + r")" + _BW + r"[^.\n]{0,80}?\b(?:but|now|only|get|gets|got|getting|see|seeing|measur\w*)\b[^.\n]{0,30}?" + _BW)


def _bw_gbs(value: str, unit: str) -> float:
    return float(value) / (1000.0 if unit.startswith("m") else 1.0)


#: a bandwidth that fell, in figures ("18 -> 2 BUSBW", "from 20 GB/s to 9 GB/s", "带宽从 300 降到 20")
_DROP = _rx(r"(\d+(?:\.\d+)?)\s*(?:->|→|=>|to)\s*(\d+(?:\.\d+)?)\s*(?:gb/s|gbps|busbw|algbw|bus ?bandwidth)")


def _bandwidth_fell(low: str) -> "tuple[int, str] | None":
    """(offset, summary) of the first bandwidth said in figures to be half or less of what it was or should be: a fall
    written as one (_DROP), or a figure set against the earlier or expected one (_BW_CONTRAST); None otherwise."""
    for m in _DROP.finditer(low):
        if float(m.group(2)) * 2 < float(m.group(1)):
            return m.start(), f"a bandwidth fell from {m.group(1)} to {m.group(2)}"
    for m in _BW_CONTRAST.finditer(low):
        g = m.groups()
        now, then = (g[0:2], g[2:4]) if g[0] else (g[6:8], g[4:6])  # measured first, or the expected figure first
        if _bw_gbs(*now) * 2 <= _bw_gbs(*then):
            return m.start(), f"the text measures {now[0]} {now[1]} against {then[0]} {then[1]} it was or should be"
    return None


#: P2P said available in words: "cudaDeviceCanAccessPeer reports 1", "can_device_access_peer returns True",
#: "`nvidia-smi topo -p2p r` says OK for every pair"
#: the peer-access query as CUDA (cudaDeviceCanAccessPeer), PyTorch (can_device_access_peer) and CuPy
#: (deviceCanAccessPeer) name it, lower case
_PEER_QUERY = r"(?:candeviceaccesspeer|can_device_access_peer|can_access_peer|cudadevicecanaccesspeer|devicecanaccesspeer)"
_P2P_SAID_OK = _rx(_PEER_QUERY + r"\W{0,3}\s*"
                          r"(?:\w+\s+){0,2}(?:reports?|returns?|says?|gives?|is)\s+(?:1|true)\b|topo -p2p r`?\s+(?:says|shows|reports)\s+`?ok\b")
#: P2P said unavailable in words, with nvidia-smi topo -p2p's own codes (its legend: CNS = Chipset not supported,
#: GNS = GPU not supported, TNS = Topology not supported, NS = Not supported): "topo -p2p r shows CNS for every pair", or
#: the reading written as a value ("`nvidia-smi topo -p2p r`: GNS (GPU not supported)", "topo -p2p r = GNS")
_P2P_SAID_NO = _rx(r"(?:topo\s+-p2p\s*\w?|p2p (?:status|matrix))`?(?:[^.\n]{0,40}?\b(?:shows?|says?|reports?|gives?|prints?|is|are)\s+|[ \t]*[:=][ \t]*)"
                          r"(?:only\s+|all\s+)?[`'\"]?(cns|gns|tns|ns|chipset not supported|gpu not supported|topology not supported|not supported)\b")
#: ... or a pair's reading written out ("GPU0 ↔ GPU1 : NS (Not Supported)", "GPU0<->GPU1: CNS"): the pair, then a colon or
#: "=", then topo -p2p's code; taken where the text names topo -p2p or the code is followed by its legend's words
_P2P_PAIR_SAID_NO = _rx(r"\bgpu\s?\d+\s*(?:↔|⟷|⇔|<->|<-->|<=>|->|→|-|–|/|and|&)\s*gpu\s?\d+\s*[:=]\s*[`'\"]?(cns|gns|tns|ns)\b"
                        r"[`'\"]?(\s*\((?:chipset|gpu|topology)?\s*not supported\))?")
_TOPO_P2P = re.compile(r"topo\s+-p2p\b")  # the tool named, as _P2P_SAID_NO reads it
_P2P_NO_VALUE = {"cns": "CHIPSET_NOT_SUPPORTED", "chipset not supported": "CHIPSET_NOT_SUPPORTED", "gns": "GPU_NOT_SUPPORTED",
                 "gpu not supported": "GPU_NOT_SUPPORTED", "tns": "TOPOLOGY_NOT_SUPPORTED",
                 "topology not supported": "TOPOLOGY_NOT_SUPPORTED", "ns": "NOT_SUPPORTED", "not supported": "NOT_SUPPORTED"}
#: the peer-access query said to answer no: cudaDeviceCanAccessPeer's canAccessPeer = 0 (CUDA runtime API),
#: torch.cuda.can_device_access_peer / cupy's deviceCanAccessPeer returning False or 0
_P2P_CAN_NO = _rx(_PEER_QUERY + r"\W{0,3}\s*(?:\([^)\n]{0,20}\)\s*)?(?:\w+\s+){0,2}(?:reports?|returns?|returned|says?|gives?|gave|is|was)\s+"
                         r"[`'\"]?(?:0|false)\b")
#: P2P said unsupported between the GPUs in the reporter's words, as CUDA words it (cudaErrorPeerAccessUnsupported, 217:
#: "peer access is not supported between these two devices"; cudaDeviceCanAccessPeer's "peer capable"): "P2P is not
#: supported", "the GPUs don't support peer access", "non-peer accessible GPUs", "not P2P capable", "不支持P2P". Not in a
#: condition ("if P2P is not available, NCCL falls back"), nor CUDA's own message (errors.py reads it as error 217).
_P2P_WORDS_NO = _rx(r"\b(?:p2p|peer[- ]to[- ]peer|peer access)(?: access| communication| transfers?)?\s+(?:is|was|are|were)\s*(?:not|n't)\s+(?:supported|possible|available)\b|"
                    # CUTLASS's CuTe DSL examples: "CUDA P2P access not available"
                    r"\bcuda p2p access not available\b|"
                    # NVIDIA Warp's start-up banner: "CUDA peer access:" then "Not supported" on the next line
                    r"\bcuda peer access:\s*\n\s*not supported\b|"
                    r"\b(?:p2p|peer[- ]to[- ]peer|peer access)(?: access| communication)?\s+(?:isn't|wasn't|aren't)\s+(?:supported|possible|available)\b|"
                    r"\bnon[- ]?peer[- ]accessible\b|\bnot\s+peer[- ]accessible\b|\bnot\s+(?:p2p|peer)[- ]capable\b|"
                    r"\b(?:do|does|did)\s*(?:not|n't)\s+support\s+(?:p2p|peer[- ]to[- ]peer|peer access)\b|"
                    r"\bno\s+(?:p2p|peer[- ]to[- ]peer|peer access)\s+support\b|"
                    r"不支持\s*(?:p2p|点对点)|(?:p2p|点对点)\s*(?:通信|访问)?\s*(?:是)?不支持")
_P2P_WORDS_NO_NOT_SAID = _rx(r"(?:\bif|\bwhen|\bwhenever|\bin case|\bwhether|\bunless|如果|若)\b[^.\n]{0,30}$")
#: MXNet's kvstore (src/kvstore/comm.h, EnableP2P) after cudaDeviceEnablePeerAccess on every ordered pair: "only E out of
#: N GPU pairs are enabled direct access. It may affect the performance. You can set MXNET_ENABLE_GPU_P2P=0 ..."
_MXNET_P2P = _rx(r"\bonly (\d+) out of (\d+) gpu pairs are enabled direct access")
#: a pair's path class said in a sentence, with nvidia-smi topo -m's own codes: "topo says SYS", "topo 显示 PHB"
_PATH_SAID = _rx(r"(?:topo(?:\s+-m)?`?[^.\n]{0,20}?|\b(?:topo(?:logy)?|path|connection)\s+between\s+(?:gpu\s?)?\d+\s+and\s+(?:gpu\s?)?\d+\s+)"
                 r"(?:shows?|says?|reports?|gives?|is|are|显示|是)\s*[`'\"]?(sys|node|phb|pxb|pix|nv\d+)\b|"
                 # "GPU0 and GPU1 are connected via PIX", "GPU0-GPU2 is SYS", "GPU0和GPU1之间是SYS连接"
                 r"\bgpu\s?\d+\s*(?:and|&|<->|-|和|与|跟)\s*gpu\s?\d+\s*(?:(?:are|is)\s+)?(?:(?:connected|linked)\s+)?"
                 r"(?:via|through|over|by|之间(?:是|为|走|通过)?|是|走)\s*[`'\"]?(sys|node|phb|pxb|pix|nv\d+)(?![a-z])")
#: two GPUs said to sit under one PCIe switch ("both GPUs are behind the same PLX switch", "under a PCIe switch", "挂在同一个
#: PCIe 交换机下"): nvidia-smi topo -m's PIX ("at most a single PCIe bridge"; its legend), the path where ACS redirects
#: peer traffic up to the root complex (NCCL troubleshooting, "PCI Access Control Services (ACS)")
_SWITCH_SAID = _rx(r"\b(?:behind|under|on|below|beneath|share|sharing|shares|connected to|attached to|hang(?:s|ing)? off)\s+"
                   r"(?:the\s+same\s+|a\s+single\s+|one\s+|the\s+|a\s+|an\s+|same\s+)?(?:\w+\s+)?"
                   r"(?:(?:pcie?|pci-e|pci express)(?:\s+gen\s?\d)?\s+switch(?:es)?|plx(?:\s+(?:switch|chip|bridge))?|pex\s?\d{4}\w*|switchtec)\b|"
                   r"(?:同一个?|一个)\s*(?:pcie?\s*(?:交换机|交换芯片|switch)|plx)(?:\s*[(（][^)）\n]{0,20}[)）])?\s*(?:下|上|下面|之下)|"
                   r"(?:pcie?\s*(?:交换机|switch)|plx)\s*下的?(?:两|多)")
#: GeForce/gaming cards named as a class, with no model ("our consumer GPUs", "GeForce cards", 消费级显卡, 游戏卡): NVIDIA
#: does not support P2P on GeForce products (CUDA's cudaDeviceCanAccessPeer answers 0 on them since the 4000 series;
#: NCCL troubleshooting: "...consumer GPUs...")
_CONSUMER_SAID = _rx(r"\bconsumer[- ](?:grade\s+|level\s+)?(?:nvidia\s+)?(?:gpus?|cards?|graphics cards?|video cards?)\b|\bgeforce\b|"
                     r"\bgaming (?:gpus?|cards?|graphics cards?)\b|消费级\s*(?:显卡|gpu|卡)|游戏(?:显)?卡")
#: the text says NVIDIA's own driver blocks P2P ("the official driver has disabled P2P", "官方驱动把 p2p 堵死了"): what
#: NVIDIA's driver does on GeForce cards, whose PCIe P2P it turns off (CUDA's cudaDeviceCanAccessPeer answers 0 there
#: since the 4000 series; the patched open kernel modules, tinygrad/open-gpu-kernel-modules, exist to turn it back
#: on), never on data-centre cards, where the stock driver allows it
_DRIVER_BLOCKS_P2P = _rx(
    r"\b(?:official|stock|nvidia'?s?|proprietary|closed[- ]source)\s+(?:linux\s+)?drivers?\b[^.\n。]{0,40}?"
    r"\b(?:disabl|block|lock|remov|crippl|kill|prevent)\w*\s+(?:the\s+)?(?:pcie\s+)?(?:p2p|peer[- ]to[- ]peer)\b|"
    r"\b(?:p2p|peer[- ]to[- ]peer)\b[^.\n。]{0,30}?\b(?:is|was|has been|have been|got|are|were)\s+(?:disabled|blocked|locked|removed|crippled)\s+"
    r"(?:by|in)\s+(?:the\s+)?(?:official|stock|nvidia'?s?|proprietary)\s+drivers?\b|"
    r"(?:官方|英伟达|nvidia|n卡|原版|原厂)\s*驱动[^。\n]{0,30}?p2p[^。\n]{0,10}?(?:堵死|屏蔽|禁用|禁止|锁|封|阉割|关闭|砍)|"
    r"(?:官方|英伟达|nvidia|n卡|原版|原厂)\s*驱动[^。\n]{0,10}?(?:堵死|屏蔽|禁用|禁止|锁|封|阉割|关闭|砍)[^。\n]{0,10}?p2p")
#: NCCL's transport said in words ("NCCL goes via SHM instead of P2P", "falls back to NET/Socket", "NCCL 走的是 SHM"):
#: the names NCCL prints in its "via P2P/SHM/NET" channel lines
_NCCL_VIA_SAID = _rx(r"\bnccl\b[^.\n。]{0,60}?(?:\bvia|\buses?|\busing|\bgoes (?:via|through|over)|\bwent (?:via|through|over)|"
                            r"\bfalls? back to|\bfell back to|\b(?:are|is|were|was|get|gets|got) connected (?:by|via|over|through)|\bleverag\w*|\bresorts? to|"
                            r"\b(?:choos|select|pick)\w*|\bonly (?:uses?|works? (?:with|over|via))|走的是|走|使用|用的是|改用|回退到)\s*(?:the\s+)?[`'\"]?(shm|net/socket|net/ib|socket)\b|"
                            # "only SHM can work across containers", "only SHM works": the one transport said to work
                            r"\bonly\s+[`'\"]?(shm)\b[`'\"]?\s+(?:can\s+|could\s+)?(?:work|works|worked|is used|was used|gets used)\b")
#: P2P and SHM turned off in words (the nccl/p2p-and-shm-disabled-uses-network setting without its variables)
_P2P_SHM_OFF = _rx(r"禁用\s*p2p\s*(?:与|和|及|、|/)\s*shm|disabl\w*\s+(?:both\s+)?p2p\s+(?:and|&|/)\s+shm|"
                          r"p2p\s+(?:and|&|/)\s+shm\s+(?:are\s+|were\s+)?disabled")
#: a /dev/shm size in words ("共享内存大小为64MB", "--shm-size=64m", "/dev/shm is only 64M")
_SHM_SIZE = _rx(r"(?:shm[- _]size|/dev/shm|shared memory|共享内存)[^\n。.]{0,20}?(\d+)\s*([mg])(?:i?b)?\b|"
               # the size before the words ("64MB共享内存", "only 64 MB of shared memory", "a 64M /dev/shm")
               r"(?<![\d.])(\d+)\s*([mg])(?:i?b)?\s*(?:of\s+|的\s*)?(?:/dev/shm|shared memory|共享内存|\bshm\b)")
#: a PCIe link said to run narrower than it should ("x8 instead of x16", "only x4 in an x16 slot", "gpuz shows x1"
#: with a card that should do more): GPUs lower a link's generation when idle, never its width (PCIe base spec, ASPM /
#: link speed management; NVIDIA: "nvidia-smi -q ... Link Width Current/Max"), so a narrower width is degraded whatever
#: the load; a lower generation counts only where the text says the GPUs were busy ("during training", "under load")
_WIDTH_DOWN = _rx(r"\bx(\d{1,2})\b[^.\n]{0,24}?(?:\b(?:instead of|rather than|not|below|vs\.?|versus|should be|expected|in an?)\b|(?:应该是|应为|本应|而不是|不是|正常是|理论上是)|"
                  r"\b(?:while|but|whereas|although)\s+(?:the\s+|its\s+)?(?:slot|card|gpu|max\w*|lnkcap|capabilit\w*|link cap\w*)\s+(?:is|supports|can do|allows|says)\b)\s*"
                  r"(?:the\s+|a\s+|an\s+)?(?:full\s+)?(?:(?:pcie\s*)?gen\s?\d\s*)?x(\d{1,2})\b")
#: the same said in nvidia-smi -q's own words ("Link Width ... Max 16x, Current 8x"; "current width x8, max x16"),
#: either order; a width is one of PCIe's (1, 2, 4, 8, 16, 32 lanes), written x8 or 8x
_W = r"(?:x(1|2|4|8|16|32)|(1|2|4|8|16|32)x)\b"
_WIDTH_CUR_MAX = _rx(r"\bcurrent(?:ly)?\s*(?:link\s*)?(?:width\s*)?(?:is\s*|of\s*|at\s*)?[:=]?\s*" + _W +
                     r"[^.\n]{0,30}?\bmax(?:imum)?\s*(?:link\s*)?(?:width\s*)?(?:is\s*|of\s*)?[:=]?\s*" + _W + "|"
                     r"\bmax(?:imum)?\s*(?:link\s*)?(?:width\s*)?(?:is\s*|of\s*)?[:=]?\s*" + _W +
                     r"[^.\n]{0,30}?\bcurrent(?:ly)?\s*(?:link\s*)?(?:width\s*)?(?:is\s*|of\s*|at\s*)?[:=]?\s*" + _W)
#: a trained width set against what the slot or card offers, in one sentence ("negotiates only x4 ...; the slot is
#: wired x16", "runs at x8 although the card supports x16")
_WIDTH_SLOT = _rx(r"\b(?:negotiat\w*|trains?|trained|training|runs?|running|stuck|links? (?:up|at))\s+(?:only\s+)?(?:at\s+|to\s+|with\s+|as\s+)?(?:only\s+)?"
                  r"(?:pcie\s*)?(?:gen\s?\d\s*)?" + _W + r"(?:(?![.!?](?:\s|$))[^\n]){0,60}?\b(?:slot|wired|capable|capab\w*|supports?|max\w*|lnkcap|electrically)\b"
                  r"[^.\n]{0,20}?" + _W)
#: a GPU's link said to run one or two lanes wide ("running at PCIe x1", "trained to x2", "an x1 link"): NVIDIA's GPUs
#: are built x16 (a few low-end cards x8; mining-only CMP boards Gen1 x4), so x1/x2 is below any GPU's LnkCap: a riser, an
#: x1 slot or a bad seat (lspci would print "Width x1 (downgraded)"). Written with the word PCIe or the word link/lane,
#: never a bare "x1" ("H100 x1" counts GPUs)
_WIDTH_NARROW = _rx(r"\b(?:runs?|running|ran|trains?|trained|negotiat\w*|stuck|operat\w*|links?(?:\s+up)?|only)\s+(?:only\s+)?(?:at|to|as|on|in)\s+(?:only\s+)?(?:an?\s+)?"
                    r"pcie\s*(?:gen\s?\d\s*|\d\.0\s*)?x(1|2)\b(?!\.\d)|\b(?:pcie\s*(?:gen\s?\d\s*|\d\.0\s*)?)?x(1|2)\s+(?:links?|lanes?|width|speed|mode)\b")
#: a link that is no GPU's: another device named, or the kernel's own link report ("... Gb/s available PCIe bandwidth,
#: limited by ..."), which system.py reads for NVIDIA functions only
_NOT_A_GPU_LINK = _rx(r"\b(?:nics?|hcas?|nvme|ssds?|network (?:card|adapter)|ethernet|infiniband|mellanox|connectx|usb|sata|sound card)\b"
                      r"|available pcie bandwidth")
#: lspci's own verdict on a width: pciutils (ls-caps.c, link_compare) writes "Width x8 (downgraded)" where LnkSta's
#: width is below LnkCap's; its "(downgraded)" after a speed ("2.5GT/s (downgraded)") is what an idle link shows too
_WIDTH_MARKED_DOWN = _rx(r"\bx(1|2|4|8|16)\s*\(downgraded\)")
_G = r"(?:pcie\s*)?gen(?:eration)?\s?"  # a generation's name in nvidia-smi -q's words
#: a PCIe generation said to run below what the link offers, each pattern with (running, best) as its two groups,
#: or (best, running) where its flag says so: "gen1 instead of gen4"; "trains at gen3 ... supports gen4";
#: nvidia-smi -q's own words ("Link Gen Current 1, Max 4", "current gen 3, max gen 5"; either order); one GPU set against
#: its neighbours ("gen1 x16 while the others run gen4"). A lower generation is also what an idle link shows
#: (nvidia-smi's manual), so the reader takes it only with the GPUs busy or the link said to have trained there.
_GEN_DOWN = (  # (pattern, True where its first group is the best generation and its second the running one)
    (_rx(r"\bgen\s?(\d)\b[^.\n]{0,40}?\b(?:instead of|rather than|below|vs\.?|versus|not|although it (?:supports|advertises))\s+(?:the\s+)?(?:pcie\s+)?gen\s?(\d)\b"), False),
    (_rx(r"\b(?:trains?|trained|runs?|running|stuck|links?)\s+(?:at|to|on)\s+gen\s?(\d)\b[^.\n]{0,60}?\b(?:advertis\w*|capab\w*|supports?|max(?:imum)?)\b[^.\n]{0,30}?gen\s?(\d)\b"), False),
    (_rx(r"\b(?:advertis\w*|capab\w*|supports?)\s+gen\s?(\d)\b[^.\n]{0,80}?\b(?:trains?|trained|runs?|running|stuck)\s+(?:at|to)\s+gen\s?(\d)\b"), True),
    (_rx(r"\bgen(?:eration)?\b[^.\n]{0,20}?\bcurrent(?:ly)?\s*(?:is\s*|of\s*|at\s*)?[:=]?\s*(?:gen\s?)?([1-6])\b[^.\n]{0,30}?\bmax(?:imum)?\s*(?:is\s*|of\s*)?[:=]?\s*(?:gen\s?)?([1-6])\b|"
         r"\bcurrent(?:ly)?\s*(?:link\s*)?" + _G + r"(?:is\s*|of\s*|at\s*)?[:=]?\s*([1-6])\b[^.\n]{0,30}?\bmax(?:imum)?\s*(?:link\s*)?(?:" + _G + r")?(?:is\s*|of\s*)?[:=]?\s*([1-6])\b"), False),
    (_rx(r"\bgen(?:eration)?\b[^.\n]{0,20}?\bmax(?:imum)?\s*(?:is\s*|of\s*)?[:=]?\s*(?:gen\s?)?([1-6])\b[^.\n]{0,30}?\bcurrent(?:ly)?\s*(?:is\s*|of\s*|at\s*)?[:=]?\s*(?:gen\s?)?([1-6])\b|"
         r"\bmax(?:imum)?\s*(?:link\s*)?" + _G + r"(?:is\s*|of\s*)?[:=]?\s*([1-6])\b[^.\n]{0,30}?\bcurrent(?:ly)?\s*(?:link\s*)?(?:" + _G + r")?(?:is\s*|of\s*|at\s*)?[:=]?\s*([1-6])\b"), True),
    (_rx(r"\bgen\s?([1-6])\b[^.\n]{0,60}?\b(?:while|but|whereas)\s+(?:all\s+)?(?:the\s+)?(?:others?|rest|other\s+(?:\w+\s+)?(?:gpus?|cards?|slots?|ones?))\b"
         r"[^.\n]{0,20}?\bgen\s?([1-6])\b"), False),
)


def _gen_below_best(low: str) -> tuple[int, int, int, int] | None:
    """(offset, end, running, best) of the first PCIe generation said to run below what the link offers (_GEN_DOWN), or None."""
    for rx, best_first in _GEN_DOWN:
        for m in rx.finditer(low):
            g = [int(x) for x in m.groups() if x]
            cur, best = (g[1], g[0]) if best_first else (g[0], g[1])
            if cur < best:
                return m.start(), m.end(), cur, best
    return None


#: the lower generation said to be what the link TRAINED (negotiated) to, or to hold until a retrain: a link-training
#: outcome, not ASPM's idle down-clock (PCIe base spec, Link Control "Retrain Link" and Link Control 2 "Target Link
#: Speed"; setpci's LNKCTL2 retrain recipe: https://github.com/amoghmunikote/cmpunlocker/issues/19)
_TRAINED_LOW = _rx(r"\btrain(?:s|ed|ing)?\s+(?:at|to|on)\b|\bnegotiat\w*|\bretrain\w*|\bre-train\w*|\bstuck\s+at\b")
_IDLE_WORD = _rx(r"\bidle\b|low[- ]power|power[- ]saving|not (?:being )?used|\bresting\b|空闲")
_SLOW_GEN = _rx(r"\b(?:2\.5|5(?:\.0)?)\s?gt/s\b|\b(?:(?:runs?|running|stuck|trains?|trained|links?)\s+(?:at|to|on)|at|(?:shows?|showing|reports?|reporting)(?:\s+only)?)\s+[*_`]*(?:pcie\s+)?gen\s?[12]\b")
_BUSY = _rx(r"\b(?:training|under (?:heavy )?load|while (?:busy|running|training)|during (?:training|inference|the run|production)|100 ?% util\w*|in production)\b")
#: an idle PCIe link in words ("runs at 2.5 GT/s ... when it is not being used", "low power state")
#: (or with the generation's name: "when the GPU is idle ... lspci shows Gen1"; nvidia-smi's manual: the link generation "may
#: be reduced when the GPU is not in use"; Gen1/Gen2 only: every GPU doing P2P trains Gen3 or faster under load)
_LINK_LOW = r"(?:\d(?:\.\d)?\s*gt/s|\bgen\s?[12]\b|\bpcie\s*(?:1\.[01]|2\.0)\b)"
_IDLE_LINK = _rx(_LINK_LOW + r"[\s\S]{0,300}?(?:\bidle|low[- ]power|power[- ]saving|not (?:being )?used|resting)|"
                 r"(?:\bidle|low[- ]power|power[- ]saving|resting|no (?:tasks?|work|load|jobs?|processes) (?:on|running))[\s\S]{0,300}?" + _LINK_LOW + "|"
                 # the link's generation said to drop while the GPU is not in use, in nvidia-smi's own words ("the current
                 # link generation and width. These may be reduced when the GPU is not in use") or a user's
                 r"\b(?:link )?(?:generation|gen|speed)s?\b[^.\n]{0,80}?\b(?:reduc\w*|drops?|dropp\w*|lower\w*|downgrad\w*|falls?)\b"
                 r"[^.\n]{0,40}?\bwhen (?:the )?(?:gpus?|cards?|devices?) (?:is |are )?(?:not in use|idle)\b|"
                 r"\blink generation and width\b[\s\S]{0,40}?\breduced when (?:the )?gpu is not in use\b")
_DRIVER = _rx(r"(?:driver(?: version)?|nvidia-driver-|驱动(?:版本)?)\s*[:=]?\s*(?:(?:is|was)\s+)?(?:(?:still|now|at|on)\s+)?v?(\d{3}\.\d{1,3}(?:\.\d{1,3})?)\b")
#: a driver branch written bare, as people contrast them ("works with driver 525 but hangs with 530", "535 正常, 550 报错"):
#: NVIDIA's branches are numbered in steps of five (450 ... 580), so 512 or 600 W are not one; used only for a contrast
#: in a sentence that names the driver
_DRIVER_BRANCH = _rx(r"(?<![\w.])(4[5-9][05]|5\d[05])(?:\.\d{1,3}){0,2}(?![\w.]|\.\d)(?!\s*(?:mb|mib|gb|gib|w\b|watts?|mhz|%|gpus?|cores?|steps?|series))")
_DRIVER_WORD = _rx(r"\bdrivers?\b|驱动")
#: (also as pip pins it, PyTorch's collect_env "[pip3] nvidia-nccl-cu12==2.21.5", and vLLM's "vLLM is using nccl==2.21.5";
#: as the package managers list it: pip list's "nvidia-nccl-cu12   2.20.5", dpkg -l's "libnccl2   2.18.3-1+cuda12.2",
#: rpm -qa's "libnccl-2.21.5-1+cuda12.4.x86_64"; and torch.cuda.nccl.version()'s tuple "(2, 19, 3)" printed after the call)
#: NCCL's version as people write it: "NCCL 2.18.3", "nccl version: 2.21.5", "nvidia-nccl-cu12==2.20.5", "libnccl2 2.19.3",
#: "NCCL version is 2.26.2", "the current version of nvidia-nccl-cu12 is 2.21.5"
_NCCL_VERSION = _rx(r"(?:nccl(?: version)?\s*[:=]{0,2}\s*v?|nvidia-nccl-cu\d+\s*(?:==\s*|[ \t]+)|\blibnccl(?:2|-dev)?[ \t-]+|"
                    r"(?:nccl|nvidia-nccl-cu\d+)(?: library)?(?: version)? (?:is|was) v?)(2\.\d{1,2}\.\d{1,2})\b")
_NCCL_VERSION_TUPLE = _rx(r"\bnccl\.version\(\)\W{0,4}\s*\((2),\s*(\d{1,2}),\s*(\d{1,2})\)")
#: what stands right before nvidia-smi's "CUDA Version:", on its banner line or -q's line before: the driver's version
_SMI_BANNER = re.compile(r"driver version\s*:\s*\d+\.[\d.]*\s*$")
_CUDA_VERSION = _rx(r"(?:cuda(?: toolkit| runtime| version)?\s*[:=]?\s*v?|\+cu)(1[0-3])\.?(\d)(?:\.\d+)?\b")
#: the IOMMU said to be on / off / in passthrough, in words or as the kernel parameters people quote (kernel
#: parameters: https://docs.kernel.org/admin-guide/kernel-parameters.html intel_iommu=, amd_iommu=, iommu=pt/soft;
#: NCCL troubleshooting, "PCI Access Control Services (ACS)" / IOMMU: https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html)
_IOMMU_WORD = r"(?:(?:amd[- ]?vi|intel|vt-d|amd)\s+|intel_|amd_)?iommu(?:\s*/\s*acs)?"
_IOMMU_PT = _rx(r"\biommu\s*=\s*(?:pt|soft)\b|\biommu\.passthrough\s*=\s*1|\biommu\b[^.\n]{0,30}\bpass-?through mode|"
                r"iommu\s*(?:设置为|设为|改为)?\s*(?:pt|直通)模式")
_IOMMU_OFF = _rx(r"\b(?:intel|amd)_iommu\s*=\s*off\b|\biommu\s*=\s*off\b|" + _IOMMU_WORD + r"\s+(?:is\s+|was\s+|got\s+)?(?:disabled|off|turned off)\b|"
                 r"\b(?:disabl\w*|turn\w* off|switch\w* off)\s+(?:the\s+|both\s+)?(?:[\w-]+\s+(?:and|&)\s+)?" + _IOMMU_WORD + r"\b|(?:关闭|禁用|关掉)了?\s*iommu|iommu\s*(?:已)?(?:关闭|禁用)")
_IOMMU_ON = _rx(r"\b(?:intel|amd)_iommu\s*=\s*on\b|" + _IOMMU_WORD + r"\s+(?:is\s+|was\s+)?(?:enabled|on|active|turned on)\b|"
                r"\b(?:enabl\w*|turn\w* on|switch\w* on)\s+(?:the\s+)?" + _IOMMU_WORD + r"\b|\bwith\s+(?:the\s+)?" + _IOMMU_WORD + r"\s+(?:on|enabled)\b|"
                r"(?:开启|启用|打开)了?\s*iommu|iommu\s*(?:已)?(?:开启|启用|打开)")
#: a change said to have fixed the trouble, within its sentence: after it ("... and it works now", "后正常", "may solve
#: it") or before it ("Fix: disable IOMMU", "P2P works after disabling intel_iommu")
_FIX_AFTER = _rx(_GAP % 80 + r"(?:works?|worked|fix\w*|solv\w*|resolv\w*|help\w*|goes away|went away|succeed\w*|解决|正常|好了|就好)")
_FIX_BEFORE = _rx(r"(?:\bfix(?:es|ed)?|\bsolv\w*|\bresolv\w*|\bworks?|\bworked|\bsolution|\bworkaround)\b\W{0,3}"
                  r"(?:(?:is|was|by|after|when|with|once|since)\s+)?(?:(?:simply|just|also)\s+)?\W{0,2}$")
_FIX_NEXT = _rx(r"\s*(?:this|that|it|which|now)\b,?\s+(?:\w+\s+){0,4}?(?:solved|fixed|resolved|works|worked|helped)\b(?! ?n'?t)|"
               # 然后/之后/后来/这样/现在/再 ... 正常/好了/解决/成功 (the next sentence in Chinese: "then, after a restart, all was normal")
               r"\s*(?:然后|之后|后来|这样|现在|再)[^。！？\n]{0,16}?(?:正常|好了|解决|成功)(?!不)")


#: a number of GPUs in a run, as reporters and launchers write it ("with 4 GPUs", "two cards", "8*GPUs", "-g 4", "g=2",
#: "--nproc_per_node=8", "more than 2 GPUs" (read as 3), "4 卡", "两张卡")
_GPU_COUNT = _rx(r"\b(more than |over )?(\d{1,2}|one|a single|single|two|three|four|six|eight|sixteen)\s*(?:x\s*|\*\s*|-)?\s*"
                 r"(?:nvidia\s+)?(?:[a-z]?\d{2,4}\w*\s+)?(?:gpu|card|rank|device)(?:'?s)?\b|"
                 r"(?<![\w-])-g\s*(\d{1,2})\b|\bg\s*=\s*(\d{1,2})\b|\bnproc[-_]per[-_]node[= ]\s*(\d{1,2})\b|"
                 r"(\d{1,2}|[一单两二三四六八])\s*(?:张|块|个)?\s*(?:gpu|卡)")
#: a clause that says it went well, or that it went wrong (one clause: split at sentence ends, commas, "but", "while")
_RUN_OK = _rx(r"\b(?:works?|worked|working|fine|normal(?:ly)?|ok(?:ay)?|pass(?:es|ed)?|succeed\w*|successful\w*|completes?|no (?:issue|problem)s?)\b|正常|没问题|可以跑|能跑")
_RUN_BAD = _rx(r"\b(?:hangs?|hung|hanging|stuck|freez\w*|froze|deadlock\w*|fail\w*|crash\w*|errors?|timeouts?|timed out|stops?|stopped|"
               r"(?:does|do|did)\s*(?:n'?t|not)\s+work|not working)\b|卡住|卡死|报错|失败|挂起|hang住")
_RUN_CLAUSE_CUT = re.compile(r"[.;!?。；！？，,]\s|\s[-–—]\s|[。；！？，]|\n|\b(?:but|while|whereas|however|though)\b|但是?|而")


def _fails_beyond_two(low: str) -> "tuple[int, int, int] | None":
    """(offset, gpus that work, gpus that fail) where the text says a run works on one or two GPUs and hangs or fails
    on more (NCCL uses NVLink SHARP only with more than two GPUs: src/transport/nvls.cc, ncclNvlsInit returns before
    any multicast set-up when gpuCount <= 2), or None."""
    ok_n, bad = None, None
    start = 0
    for cut in [*(_m.start() for _m in _RUN_CLAUSE_CUT.finditer(low)), len(low)]:
        clause, at = low[start:cut], start
        start = cut + 1
        counts = []
        for m in _GPU_COUNT.finditer(clause):
            if m.group(2):
                n = count_of(m.group(2)) or 0
                n = n + 1 if m.group(1) else n  # "more than 2 GPUs"
            else:
                g = next(x for x in m.groups()[2:] if x)
                n = count_of(g) or 0
            counts.append(n)
        if not counts:
            continue
        said_bad, said_ok = _RUN_BAD.search(clause), _RUN_OK.search(clause)
        if said_bad and not said_ok and max(counts) >= 3:
            bad = bad or (at, max(counts))
        elif said_ok and not said_bad and max(counts) <= 2:
            ok_n = ok_n or max(counts)
    if ok_n and bad:
        return bad[0], ok_n, bad[1]
    return None


#: a count of GPUs (or of the processes, ranks or instances a job puts one per GPU) that still works: "9 or fewer GPUs",
#: "less than 10 instances" (9), "up to 8 GPUs"; and a clause that says the fault is absent ("the error does not occur")
_FEWER_COUNT = _rx(r"(?:(?:less|fewer) th[ae]n\s+(\d{1,2})|(\d{1,2})\s+or\s+(?:fewer|less)|up to\s+(\d{1,2})|(\d{1,2}))\s+"
                   r"(?:\w+\s+)?(?:gpus|devices|cards|instances|processes|ranks|workers)\b")
_FAULT_ABSENT = _rx(r"\b(?:error|problem|issue|crash|hang|failure)s?\s+(?:does|did|do)\s*(?:not|n't)\s+(?:occur|happen|appear|show up|reproduce)\b")


def _fails_beyond_nine(low: str) -> "tuple[int, int, int] | None":
    """(offset, gpus that work, gpus the host has) where the text gives the host ten or more GPUs and says the job works
    on nine or fewer: CUDA's limit of peers (cudaDeviceEnablePeerAccess: "each device can support a system-wide maximum
    of eight peer connections", so nine GPUs are the most that all reach each other), or None."""
    host = gpus_said(low)
    if not host or host < 10:
        return None
    for m in _FEWER_COUNT.finditer(low):
        n = int(m.group(1)) - 1 if m.group(1) else int(next(g for g in m.groups()[1:] if g))
        if not 2 <= n <= 9:
            continue
        sentence = _sentence(low, m.start(), m.end())
        if _FAULT_ABSENT.search(sentence) or (_RUN_OK.search(sentence) and not _RUN_BAD.search(sentence)):
            return m.start(), n, host
    return None


def _sentence_span(low: str, start: int, end: int) -> tuple[int, int]:
    """Where the sentence (cut at . ! ? 。！？ and line ends, a version's dots kept) around low[start:end] begins and ends."""
    a = max(low.rfind("\n", 0, start), *(low.rfind(p, 0, start) for p in (". ", "! ", "? ", "。", "！", "？")))
    b = [i for i in (low.find("\n", end), low.find(". ", end), low.find("。", end), low.find("? ", end)) if i >= 0]
    return a + 1, (min(b) if b else len(low))


def _sentence(low: str, start: int, end: int) -> str:
    """The sentence (cut at . ! ? 。！？ and line ends, a version's dots kept) around low[start:end]."""
    a, b = _sentence_span(low, start, end)
    return low[a:b]


#: a version said to work ("when the driver 545.23.08 is installed, all versions work fine", "works with NCCL 2.18.3",
#: "驱动 535 正常") or to fail ("the error occurs ... with driver 550.90.07", "hangs with 2.19.3", "报错"), in its sentence
_WORKS_SAID = _rx(r"\b(?:works?|worked|working|runs? (?:fine|normally|well|correctly|ok)|ran (?:fine|normally|well)|(?:is|was|are|were) (?:fine|ok|good)|"
                  r"no (?:issues?|problems?|errors?|hangs?)|succeed\w*|pass(?:es|ed)?|correct (?:results?|outputs?|values?|data|answers?|sums?))\b|"
                  r"正常|没问题|没有问题|可以用|能用|结果正确")
_FAILS_SAID = _rx(r"\berrors?\b|\bfail\w*|\bhang\w*|\bhung\b|\bstuck\b|\bcrash\w*|\bbroken\b|\bbreaks?\b|\bissues?\b|\bproblems?\b|"
                  r"\bwrong\b|\bslow\w*|\bdeadlock\w*|\btime ?outs?\b|\btimed out\b|n'?t work|not work|报错|失败|卡住|卡死|出错|错误|异常|问题")


#: in a text that names NCCL, a bare 2.x.y is NCCL's release (its versions are 2.x.y since 2017) unless another library's
#: name or a "v" stands right before it (torch 2.1.0, python 2.7.18, CUDA 12.2.0, a plugin's v2.9.0)
_NCCL_VERSION_ANY = _rx(r"(?<![\w.])(?<!v)(?<!torch )(?<!torch==)(?<!python )(?<!cuda )(?<!version )(2\.\d{1,2}\.\d{1,2})(?![\d.]\d)|"
                        r"nccl(?: version)?\s*[:=]?\s*v?(2\.\d{1,2}\.\d{1,2})\b")
#: the cuts between contrasted clauses ("but with nccl 2.10.3, get an error" is one side of the contrast), and a clause's
#: cuts: those and a comma or colon
_CONTRAST = r";\s|\s(?:but|while|whereas|however|yet)\b|；|但是?|而"
_CONTRAST_CUT = _rx(_CONTRAST)
_CLAUSE_CUT = _rx(r"[,:]\s|，|" + _CONTRAST)


def _version_contrast(low: str, rx: re.Pattern) -> tuple[str, int, str, str] | None:
    """Two versions of one component, one said (in its sentence) to work and another to fail: the trouble follows that
    component's version, the contrast a regression report is made of ("The error occurs when the driver 550.90.07 is
    installed. When the driver 545.23.08 is installed, all versions work fine."). (key, offset, good, bad) or None:
    ``text.broken_by`` when the version that works is the older one (a newer one broke it), else ``text.fixed_by``."""
    good: dict[str, int] = {}
    bad: dict[str, int] = {}
    for n, m in enumerate(rx.finditer(low)):
        if n >= 40:  # people contrast a few versions; a log that prints one on every line says nothing more
            break
        # the sentence within 300 characters either side (a paste without sentence ends is no sentence)
        window = max(0, m.start() - 300)
        begin, stop = _sentence_span(low[window:m.end() + 300], m.start() - window, m.end() - window)
        begin, stop = begin + window, stop + window
        sentence, at = low[begin:stop], m.start() - begin
        # the clause of the version first ("hangs with 2.19.3 but 2.18.5 works fine"), then its side of the contrast
        # ("... but with nccl 2.10.3, get an error"), else its whole sentence
        sides = []
        for cut in (_CLAUSE_CUT, _CONTRAST_CUT):
            cuts = [0] + [x.end() for x in cut.finditer(sentence)] + [len(sentence)]
            a = max(x for x in cuts if x <= max(at, 0))
            b = min(x for x in cuts if x > max(at, 0)) if any(x > max(at, 0) for x in cuts) else len(sentence)
            sides.append(sentence[a:b])
        ok, failing = None, None
        for said in (*sides, sentence):
            ok = _WORKS_SAID.search(said)
            ok = ok if ok and not _NOT_FIXED.search(said[max(0, ok.start() - 12):ok.start()]) else None
            failing = next((x for x in _FAILS_SAID.finditer(said) if not _NEGATED.search(said[max(0, x.start() - 12):x.start()])), None)
            if ok or failing:
                break
        version = next(g for g in m.groups() if g)
        if ok and not failing:
            good.setdefault(version, m.start())
        elif failing and not ok:
            bad.setdefault(version, m.start())
    pairs = [(g, b) for g in good for b in bad if g != b]
    if not pairs:
        return None
    g, b = pairs[0]
    newer_broke = tuple(int(x) for x in g.split(".")) < tuple(int(x) for x in b.split("."))
    return ("text.broken_by" if newer_broke else "text.fixed_by"), min(good[g], bad[b]), g, b


def _fixed_near(low: str, m: re.Match) -> bool:
    """Is the change at ``m`` said, within its sentence, to have fixed the trouble (and not "did not help")?"""
    after = _FIX_AFTER.match(low, m.end())
    if after and not _NOT_FIXED.search(after.group(0)):
        return True
    if _FIX_BEFORE.search(low[max(0, m.start() - 40):m.start()]):
        return True
    # or the next sentence says so ("... and rebooting. This solved an issue with NCCL", "Now, the test works!")
    end = _SENTENCE_END.search(low, m.end(), m.end() + 200)
    return bool(end and _FIX_NEXT.match(low, end.end()))


#: ACS said to be on where GPUs sit ("ACS is enabled on the following PCI devices", a checker's "found some acs enabled
#: devices (needs to be disabled)"): NCCL's troubleshooting asks for it off, since it redirects peer traffic up to the root
#: complex; not in a condition or an instruction ("if ACS is enabled", "make sure ACS is enabled"), not of turning it on
_ACS_SAID_ON = _rx(r"\bacs\s+(?:is|was|are|were)\s+(?:still\s+)?(?:enabled|turned on|on)\b|\bacs[- ]enabled\s+(?:devices|bridges|ports|switch\w*)\b|"
                   r"\bacs\s*(?:是)?(?:开启|启用|打开)(?:的|了|状态)")
_ACS_SAID_ON_NOT = _rx(r"(?:\bif|\bwhen|\bwhether|\bunless|\bmake sure|\bensure|\bcheck|如果|确保)\b[^.\n]{0,30}$")
#: a change said to have FIXED the trouble says what was wrong when it was seen (as for the IOMMU above): ACS turned
#: off -> ACS redirected peer traffic (NCCL troubleshooting, "PCI Access Control Services (ACS)"); the NVLink bridge
#: reseated/replaced -> a link was down; Fabric Manager started/installed -> it was not running (its user guide: the
#: GPUs of an NVSwitch system stay uninitialised without it). (fact, value, change, summary)
_FIXED_BY_ACTION = (
    ("host.acs_redirect", True,
     _rx(r"(?:\bdisabl\w*|\bturn\w* off|\bswitch\w* off|\bclear\w*|关闭|禁用|关掉)\s*(?:the\s+|all\s+)?(?:pci(?:e)?\s+)?(?:acs|access control services)\b"),
     "the text says turning ACS off fixed it (ACS redirected peer traffic when the trouble was seen)"),
    ("gpu.nvlink_down", 1,
     _rx(r"(?:\breseat\w*|\bre-seat\w*|\breplac\w*|\bswapp?\w*|\bre-?insert\w*|重新插(?:了|上)?(?:一次|一下|一遍)?|重插|更换)\s*(?:the\s+|an?\s+|both\s+)?(?:nvlink\s+)?(?:bridges?|nvlinks?)\b"),
     "the text says reseating/replacing the NVLink bridge fixed it (a link was down, at least one)"),
    ("host.fabric_manager", "not running",
     _rx(r"(?:\bstart\w*|\brestart\w*|\benabl\w*|\binstall\w*|启动|重启|安装)\s*(?:the\s+)?(?:nvidia-)?fabric[- _]?manager"),
     "the text says starting/installing Fabric Manager fixed it (it was not running when the trouble was seen)"),
)
_BIOS = (("ACS", r"\bacs\b|access control services"), ("IOMMU", r"iommu"), ("VT-d", r"vt-d|\bvtd\b"),
         ("NPS", r"\bnps ?[124]?\b"), ("Above4G", r"above ?4g|4g decoding|above 4 ?gb"),
         ("ReBAR", r"resizable bar|re-?size bar|\brebar\b|\bsam\b"), ("SR-IOV", r"sr-?iov"))
_CPU = (("AMD", r"(?:amd\s+)?(epyc\s*\w*(?:\s+\d{4}\w*)?|threadripper(?:\s+pro)?\s*\w*|ryzen\s*\d*\s*\w*|"
               # AMD's HEDT/workstation chipsets name the CPU's vendor on a board ("TRX40 Designare", "WRX80E"): AMD's sockets
               # sTRX4 (TRX40/TRX50), sWRX8 (WRX80/WRX90) and TR4 (X399) take Threadripper CPUs only
               r"\b(?:trx40|trx50|wrx80e?|wrx90e?|x399)\b)"),
        # (Intel's names as /proc/cpuinfo and lscpu print them: "Intel(R) Xeon(R) CPU E5-2690 v4 @ 2.60GHz", "Intel(R) Xeon(R)
        # Platinum 8480+", "Intel(R) Core(TM) Ultra 9 285K")
        ("Intel", r"(?:intel(?:\(r\))?\s+)?(xeon(?:\(r\))?\s*(?:cpu\s+(?=e[357]-))?(?:platinum|gold|silver|bronze|w|e[357](?=-))?[-\s]*\w*(?:\s+v[2-5]\b)?|"
                  r"core(?:\(tm\))?\s+(?:i[3579]-\w+|ultra\s+[3579]\s+\w+))"),
        ("ARM", r"(grace\s+(?:hopper|cpu)|neoverse[-\s]\w+|\baarch64\b|ampere altra\w*)"))
#: A host named by its CPU's maker alone ("on an AMD server", "Intel-based host", "AMD平台"): the vendor without a model.
#: Only a word for the machine or its processor follows the maker, so an AMD or Intel GPU ("AMD GPU server", "Intel Arc")
#: is not read as the host's CPU.
_HOST_WORDS = (r"(?:server|host|platform|cpu|processor|machine|motherboard|mainboard|system|node|chipset|workstation|"
               r"服务器|平台|主板|处理器|机器)s?(?![a-z0-9_])")
_CPU_VENDOR_ONLY = tuple((vendor, _rx(rf"\b{maker}(?:[- ]based)?\s*{_HOST_WORDS}"))
                         for vendor, maker in (("AMD", "amd"), ("Intel", "intel")))
_TOPIC_STRONG = (r"\bp2p\b|peer[- ]to[- ]peer|\bpeer (?:access|memory|copy|copies|device)|gpu ?direct|\bgdr\b|memcpy_?peer|\bcan_?(?:device_)?access_?peer|\bnccl\w*|\bnvlink\w*|\bnvswitch|"
                 # NCCL under other names: vLLM's pynccl wrapper, CuPy's cupy.cuda.nccl, AMD's RCCL (NCCL's port, same API and env)
                 r"\bpy_?nccl\b|\brccl\w*|"
                 r"cuda[- _]?ipc|\bbetween (?:the |my |both |two |all |\d+ )?(?:\w+ )?(?:gpus|cards|devices)\b|"
                 r"\bgpu[- ]to[- ]gpu\b|\binter[- ]?gpu\b|\bmulti[- ]?gpus?\b|\bmultiple gpus\b|"
                 # the serving frameworks' own switch for splitting a model over several GPUs (vLLM/SGLang --tensor-parallel-size,
                 # --tp, tensor_parallel_size=): https://docs.vllm.ai/en/latest/serving/distributed_serving.html
                 r"--tensor[-_]parallel[-_]size\b|\btensor_parallel_size\s*=|--tp(?:[-_]size)?[ =]\s*[2-9]|"
                 r"多卡|双卡|(?:[2-8]|[二两三四六八])\s*卡(?:训练|推理|并行|运行|跑)|多\s*(?:张|个|块)\s*(?:卡|gpu|显卡)|多\s*gpu|卡间|卡与卡|显卡之间|gpu\s*之间|gpu\s*间|点对点")
_TOPIC_WEAK = (r"\ball[-_ ]?reduce|\ball[-_ ]?gather|\breduce[-_ ]?scatter|\ball[-_ ]?to[-_ ]?all|\bcollectives?\b|\bipc\b|"
               r"\bddp\b|torch\.distributed|distributed (?:training|inference|data parallel)|tensor[- _]parallel\w*|"
               # PyTorch's multi-GPU launchers and parallel styles (torchrun --nproc_per_node, DataParallel, FSDP; DeepSpeed,
               # Horovod; model/pipeline parallel): https://pytorch.org/docs/stable/distributed.html, .../elastic/run.html
               r"\bdata[- _]?parallel\w*|\bmodel[- _]parallel\w*|\bpipeline[- _]parallel\w*|\bfsdp\b|\btorchrun\b|nproc[-_]per[-_]node|"
               r"\bdeepspeed\b|\bhorovod\b|"
               # several GPUs counted ("with 4 GPUs", "on two GPUs", "2x GPUs", "8卡"): a job over more than one GPU
               r"\b(?:[2-9]|1[0-6]|two|three|four|six|eight|multiple|several)\s*(?:x\s*)?gpus\b|"
               r"通信|分布式|张量并行|数据并行|模型并行|流水线并行|互联")
_TROUBLE = (r"\bfail\w*|\w*error(?:s|ed)?\b|\bissues?\b|\bproblems?\b|\bnot working\b|\b(?:does|do|did|is|are|was)\s*(?:n't|not)\s+work|"
            r"\bwon'?t\b|\bcan'?t\b|\bcannot\b|\bunable\b|\bstuck\b|\bhang\w*|\bhung\b|\bfreez\w*|\bcrash\w*|\babort\w*|"
            r"\bslow\w*|low (?:bandwidth|throughput|performance)|\bwrong\b|\bincorrect\b|\bbroken\b|\bbugs?\b|"
            r"\btime ?outs?\b|\btimed out\b|how (?:to|do i|can i|could i|should i) (?:fix|solve|resolve|debug)|"
            r"any (?:ideas?|help|suggestions?)\b|"
            r"报错|失败|问题|不能|无法|出错|错误|异常|不行|怎么办|如何解决|卡住|卡死|很慢|变慢|太慢|不通|不工作|不支持|求助")
_REPORT_TOPIC = _rx(_TOPIC_STRONG + "|" + _TOPIC_WEAK)
_REPORT_TOPIC_STRONG = _rx(_TOPIC_STRONG)
_REPORT_TROUBLE = _rx(_TROUBLE)
#: a symptom said to be absent right before its word ("doesn't hang", "no longer hangs", "never saw NaN", "不再卡住")
#: ("not/never/no longer" may take an adverb between: "does not even hang"; "no/without" only a determiner: "without any
#: hang", while "setups without NVSwitch hang" says the setups hang)
#: PyTorch's watchdog prints after every NCCL timeout, whatever the data: "Some NCCL operations have failed or timed out. Due
#: to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data."
#: (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp): a caveat of a hang, no wrong result seen
_WATCHDOG_CAVEAT = _rx(r"might run on corrupted/incomplete data")
_SAID_ABSENT = _rx(r"(?:(?:\bnot|n't|\bnever|\bno longer)\s+(?:\w+\s+)?|(?:\bno|\bwithout|\bnever (?:saw|see|seen|had))\s+"
                   r"(?:(?:any|a|an|the|more|further|other|real|such)\s+)?)(?:[`'\"“]\s*(?:[\w:/-]+\s+){0,3})?$|不再\s*$|没有\s*$|不会\s*$")
#: a failure ASKED about, not reported: "I want to know whether nccl does not support such VMs?", "是否不支持"
#: (a question of a hypothesis says what the reporter fears, not what was seen)
_ASKED = _rx(r"(?:\bwhether|\bwonder(?:ing)? if|\bknow if|\bask(?:ing)? if|\bcurious if|是否)[^.\n?!,;。？！，]{0,60}$")
#: P2P enabled said to measure slower than disabled (p2pBandwidthLatencyTest prints both matrices; nvbandwidth too):
#: what a tool says in figures, said in words ("P2P disabled bandwidth is higher than enabled", "P2P=on is slower than off")
_P2P_SLOWER_SAID = _rx(r"\bp2p\s*(?:=\s*)?(?:disabled|off)\b[^.\n]{0,40}?\b(?:higher|faster|better|more)\b[^.\n]{0,20}?\bthan\b[^.\n]{0,20}?\b(?:enabled|on)\b|"
                       r"\bp2p\s*(?:=\s*)?(?:enabled|on)\b[^.\n]{0,40}?\b(?:lower|slower|worse|less)\b[^.\n]{0,20}?\bthan\b[^.\n]{0,20}?\b(?:disabled|off)\b|"
                       r"(?:关闭|禁用)\s*p2p[^。\n]{0,20}?(?:更快|反而快|带宽更高)|p2p[^。\n]{0,10}?(?:开启|启用)[^。\n]{0,20}?(?:更慢|反而慢|带宽更低)")
#: a trouble word said to be absent ("no issues", "without errors", "never had problems", "没有问题")
_NEGATED = _rx(r"(?:\bno|\bwithout|\bnever had|\bzero|\bnot any|\bany)\s+$|没有\s*$|不再\s*$|无\s*$")
_GPU_NAMED = _rx(r"\bgpus?\b|\bcuda\b|显卡|\bgpu")
#: lines of tool output (not sentences), each tool's as its reader knows them (PLAIN_LINES of nccl_tests, nccl, tools, smi),
#: and p2ptop topo's own section titles for the -p2p matrices ("## n (nvlink)", topo_text.CAP_TITLES; nvidia-smi's "p (prop)")
_TOOL_LINE = _rx("|".join((nccl_tests.PLAIN_LINES, nccl.PLAIN_LINES, tools.PLAIN_LINES, smi.PLAIN_LINES,
                           r"^## [rwnap] \((?:read|write|nvlink|atomics|pci|prop)\w*\)\s*$",
                           # lscpu's (and collect_env's CPU section's) "Vulnerability Tsx async abort: Mitigation; ...", one
                           # per file of /sys/devices/system/cpu/vulnerabilities: the CPU's, no trouble of the report
                           r"^\s*vulnerability [\w /.-]+:\s",
                           # the NVIDIA module's /proc/driver/nvidia/params, one parameter a line as nv-procfs.c's
                           # nv_procfs_read_params prints it ("%s: %u", "RmMsg: \"%s\"", a string of registry keys
                           # without spaces): "NvLinkDisable: 1" names NVLink in no sentence of a report; a record's
                           # quoted message with spaces (YAML's message: "GPU 3's NvLink link 16 is down") is a sentence
                           r'^\s*[a-z][a-z0-9]*:\s*(?:\d+|"[^"\s]*")\s*$')))
#: a tool's counter of errors at zero ("Link 0: Replay Errors: 0" of nvidia-smi nvlink -e, "Volatile ... Errors : 0"):
#: read after the trouble word, it says none happened
_ZERO_COUNT = _rx(r"\s*:\s*0+(?:\.0+)?\s*(?:$|\|)")
#: the kernel's own lines (dmesg's "[   0.577806] nvidia-nvlink: ...", the journal's "... kernel: "): a module naming
#: NVLink or peer memory at boot is no report of GPU communication (text.topic); one with a word of trouble still is
_KERNEL_LINE = _rx(r"^\s*\[\s*\d+\.\d+\]|^\w{3}\s+\d+\s+\d\d:\d\d:\d\d\s+\S+\s+kernel:")
#: a command line alone, as people paste it above a tool's output without its prompt: a GPU tool's name and then only
#: options, short words, numbers, PCI ids, subcommands and pipes to grep/head/tail ("nvidia-smi nvlink -s", "nvidia-smi
#: topo -p2p n", "dmesg | grep -i nvlink", "dcgmi diag -r 2", "NCCL_DEBUG=WARN ./build/broadcast_perf -b 8 -e 256M -f 2
#: -g 2", the variables it is run with before it); a sentence that starts with the tool's name goes on in words. Read
#: token by token (:func:`_is_command`), once each: a regex with choices that overlap backtracks exponentially on a long
#: line that is no command.
_COMMAND_TOOL = re.compile("(?:" + "|".join(map(re.escape, GPU_TOOLS)) + r"|\./[\w./-]+|[\w-]+_perf)$")
_COMMAND_ENV = re.compile(r"[a-z_][a-z0-9_]*=\S*$")
_COMMAND_TOKEN = re.compile(r"-{1,2}[\w=.,:/*-]*|[a-z0-9]{1,3}|\d+(?:\.\d+)?[kmgt]?|[0-9a-f]{2,4}:[\w:.]*|"
                            r"topo|nvlink|dmon|pmon|diag|discovery|health|stats|'[^']*'|\"[^\"]*\"")
_COMMAND_FILTERS = {"grep", "egrep", "head", "tail", "less", "sort", "uniq"}


def _is_command(line: str) -> bool:
    """Is ``line`` (lower case) a GPU tool's command alone (``_COMMAND_TOOL``, after sudo and variables), its other words
    options, short words, numbers, PCI ids or subcommands, or a pipe to a filter whose pattern may be any word?"""
    words = line.split()
    while words and (words[0] == "sudo" or _COMMAND_ENV.match(words[0])):
        words = words[1:]
    if not words or not _COMMAND_TOOL.match(words[0]):
        return False
    pattern_next = False  # after "| grep" and its options: one pattern word of any shape
    after_pipe = False
    for w in words[1:]:
        if after_pipe:
            if w not in _COMMAND_FILTERS:
                return False
            after_pipe, pattern_next = False, w in ("grep", "egrep")
        elif w == "|":
            after_pipe, pattern_next = True, False
        elif w.startswith("-"):
            continue
        elif pattern_next:
            pattern_next = False
        elif not _COMMAND_TOKEN.fullmatch(w):
            return False
    return not after_pipe


_SENTENCE_END = _rx(r"[.!?。！？](?:\s|$)|[。！？]")
_LEGEND = _rx(r"legend|^\s*(?:x|sys|node|phb|pxb|pix|nv#|nv\d+|[cgt]?ns|ok|u)\s*=|\b(?:cns|gns|tns)\s*=|"
              # a field of nvidia-smi -q whose value says it is absent ("Host VGPU Mode : N/A", "vGPU Software Licensed
              # Product ... : N/A"): the tool's own label, not the report's setup
              r"^\s*[a-z][\w /().-]*?\s{2,}:\s*(?:n/a|\[n/a\]|none|disabled|not supported)\s*$")
_CJK = re.compile(r"[\u4e00-\u9fff]")


MODELS_KEPT = 20  # models named in the sentences, kept for the rules on all of them


def _model_named(m: re.Match) -> tuple[str, Optional[str], Optional[str], str]:
    """A model MODEL_IN_PROSE matched: (its name as matched, product class, architecture, the full name those were read
    from: a bare GeForce number is an RTX or a GTX card, "4090" -> "rtx 4090")."""
    bare = m.group("counted") or m.group("bare")
    name = " ".join((bare or m.group(0)).split())
    name = name[:-1] if name.endswith("s") and name[-2:-1].isdigit() else name  # "3090s"
    full = "rtx " + name if name[:2].isdigit() else name
    cls, arch = classify(full)
    if cls is None and name[:2] in ("50", "40", "30", "20", "10"):
        full = ("geforce gtx " if name[:2] == "10" else "geforce rtx ") + name
        cls, arch = classify(full)
    return name, cls, arch, full


def parse(c: Collector) -> bool:
    view = c.paste.sample(SAMPLE_HEAD, SAMPLE_TAIL)
    low = c.paste.flowed(SAMPLE_HEAD, SAMPLE_TAIL)  # the sample's text, a reflowed paragraph's phrases whole again
    found = False
    ln = view.line_of

    # -q's own lines (its fields and titles), where its reader read one or the paste is an excerpt of it: no sentences of
    # the report
    tool_lines = smi.q_lines_of_paste(c.paste.lines, read="smi_q" in c.structured)

    def _first(_c: Collector, rx: str | re.Pattern | LiteralGate, skip: re.Pattern | LiteralGate | None = None,
               said: bool = False) -> re.Match | None:
        """The first match outside a tool's legend lines (nvidia-smi topo's "SYS = ... (e.g., QPI/UPI)",
        "GNS = GPU not supported") and its own lines (``tool_lines``): a legend is printed by the tool, it says nothing
        of the report; nor on a line ``skip`` finds; nor, with ``said``, one the words before deny (``_SAID_ABSENT``:
        "not in a container", "we do not use docker")."""
        rx = _rx(rx) if isinstance(rx, str) else rx
        m = rx.search(low)
        while m and (ln(m.start()) in tool_lines or _LEGEND.search(line := c.paste.line(ln(m.start())).lower())
                     or (skip is not None and skip.search(line))
                     or (said and _SAID_ABSENT.search(low[max(0, m.start() - 24):m.start()]))):
            nl = low.find("\n", m.start())
            m = rx.search(low, nl + 1) if nl >= 0 else None
        return m

    # language
    cjk = len(_CJK.findall(low[:200000]))
    c.add("host", "text.language", "zh" if cjk >= 5 else "en", 1, severity="info")
    # GPU model in a sentence
    model = None  # the model named first, and its line
    # every model the sentences name: the first is the host's; the others ("works on our A100 server") are kept for a rule
    # on what every GPU named lacks (read.py, host.no_nvlink_hardware)
    named = list(islice(MODEL_IN_PROSE.finditer(low), MODELS_KEPT))
    c.structured["models_named"] = [_model_named(x)[3] for x in named]
    m = named[0] if named else None
    if m:
        bare = m.group("counted") or m.group("bare")
        name, cls, arch, _full = _model_named(m)
        line = ln(m.start())
        written = c.paste.line(line)  # the name as written, where lower() kept the line's length
        if len(written) == len(written.lower()) and not bare:
            i = written.lower().find(m.group(0).split("\n")[0])
            if i >= 0:
                name = " ".join(written[i:i + len(m.group(0))].split())
        if name[-1:] in "sS" and name[-2:-1].isdigit():  # "3090s", "A100s"
            name = name[:-1]
        found = c.add("host", "gpu.name", name, line) or found
        if cls:
            c.add("host", "gpu.product_class", cls, line)
            c.add("host", "gpu.consumer", cls == "consumer", line)
        if arch:
            c.add("host", "gpu.architecture", arch, line)
        model = (name, line)
    # hypervisor / VM / passthrough
    for name, rx in _HYPERVISORS:
        m = _first(c, rx)
        if m:
            c.add("host", "host.hypervisor", name, ln(m.start()))
            c.add("host", "host.virtualized", True, ln(m.start()))
            found = True
            break
    # (not where NCCL's own lines already read WSL 2 from Windows' default host name, evidence/nccl.py: the same name is
    # then WSL's Linux VM, no native Windows)
    m = _first(c, _WINDOWS) if not _WSL.search(low) and "WSL" not in str(c.get("host", "host.hypervisor") or "") else None
    if m:
        c.add("host", "host.windows", True, ln(m.start()), severity="info")
    m = _first(c, _VM)
    if m:
        found = c.add("host", "host.virtualized", True, ln(m.start())) or found
    m = _first(c, _PASSTHROUGH)
    if m:
        c.add("host", "gpu.virtualization", "PASSTHROUGH", ln(m.start()))
        c.add("host", "host.virtualized", True, ln(m.start()))
        found = True
    # confidential computing said in words ("CC mode on", "with confidential computing enabled", "inside a confidential VM",
    # Intel TDX / AMD SEV-SNP guests): a GPU passed through to a confidential VM runs in CC mode (NVIDIA's deployment guides)
    m = _first(c, _CC_ON)
    if m:
        c.add("host", "host.cc_mode", "on" if "mode" in m.group(0) or "enabled" in m.group(0) else "enabled", ln(m.start()))
        found = c.add("host", "host.virtualized", True, ln(m.start())) or found
    m = _first(c, _VGPU) if not _VGPU_SHARING.search(low) else None
    if m:
        c.add("host", "gpu.virtualization", "VGPU", ln(m.start()))
        found = c.add("host", "host.virtualized", True, ln(m.start())) or found
    m = _first(c, _BARE_METAL)
    if m:
        found = c.add("host", "host.virtualized", True, ln(m.start()),
                      summary="the text contrasts its setup with bare metal (a VM)") or found
    m = _first(c, _FM_MISMATCH)
    fm = _FM_VERSION.search(low) if not m else None
    if fm:
        # both versions given and different: the user guide says Fabric Manager must run the driver's exact version
        # (any driver version said that agrees with Fabric Manager's, as in an upgrade told from one to the other, is
        # no mismatch; a driver version inside Fabric Manager's own words is not the driver's)
        drivers = [d.group(1) for d in _DRIVER.finditer(low) if not fm.start() <= d.start() < fm.end()]
        if drivers and not any(_same_version(fm.group(1), d) for d in drivers):
            m = fm
    if m:
        found = c.add("host", "host.fabric_manager", "version mismatch", ln(m.start()),
                      summary="the text says Fabric Manager's version does not match the driver's (it refuses to start)") or found
    m = _first(c, _FM_DOWN) if not m else None
    if m:
        # a service that stops, exits, dies or will not start has failed; one not installed, not started or inactive
        # is simply not running
        state = ("failed" if re.search(r"fail|crash|restart|stops|stopping|exit|die[sd]|dying|down\b|start|失败", m.group(0))
                 and not re.search(r"not (?:be\s+)?started|n['’]?t started", m.group(0)) else "not running")
        found = c.add("host", "host.fabric_manager", state, ln(m.start())) or found
    elif not c.has("host", "host.fabric_manager"):
        up = _first(c, _FM_UP)
        if up:
            c.add("host", "host.fabric_manager", "running", ln(up.start()), severity="info",
                  summary="the text says Fabric Manager is running")
    m = _first(c, _BAR_SIZE)
    if m:
        n, unit = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        found = c.add("host", "gpu.bar1_mb", int(n) * (1024 if unit == "g" else 1), ln(m.start())) or found
    m = _first(c, _PIN_LIMIT) if _GPUDIRECT.search(low) and "gpu.bar1_mb" not in {k for f in c.findings for k in f.facts} else None
    if m:
        n, unit = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        found = c.add("host", "gpu.bar1_mb", int(n) * (1024 if unit == "g" else 1), ln(m.start()),
                      summary="the text says GPUDirect pinning/registration stops at this size (the BAR1 aperture bounds it)") or found
    m = _first(c, _CROSS_SOCKET)
    if m:
        found = c.add("host", "pair.cross_socket", True, ln(m.start()), severity="info") or found
    m = _first(c, _NO_NVSWITCH)
    if m:
        found = c.add("host", "host.nvswitch_present", False, ln(m.start()), severity="info") or found
    else:
        m = _first(c, _NVSWITCH)
        board = nvswitch_board_note(model[0]) if model else None
        if m:
            found = c.add("host", "host.nvswitch_present", True, ln(m.start()), severity="info") or found
        elif board:
            c.add("host", "host.nvswitch_present", True, model[1], severity="info", summary=board)
        else:
            # a cloud machine built on the 8-GPU HGX board: an NVSwitch host (gpus.EIGHT_GPU_BOARD_MACHINE)
            machine = EIGHT_GPU_BOARD_MACHINE.search(low)
            if machine:
                c.add("host", "host.nvswitch_present", True, ln(machine.start()), severity="info",
                      summary=f"{machine.group(0)} is built on the 8-GPU HGX baseboard, which joins its GPUs through NVSwitch chips")
    # (a program saying it cannot look for MIG instances says nothing of MIG mode: the next mention, if any)
    m = _first(c, _MIG, skip=_MIG_NOT_READ)
    if m:
        found = c.add("host", "gpu.mig", True, ln(m.start())) or found
    m = _first(c, _CUDA_NUMBER_WORDS)
    if m:
        from ..knowledge.codes import CUDA_BY_NUMBER
        num = int(m.group(1))
        if num in CUDA_BY_NUMBER:
            name = CUDA_BY_NUMBER[num]
            name = name[0] if isinstance(name, tuple) else getattr(name, "name", name)
            if isinstance(name, str) and name.startswith("cuda"):
                c.add("host", "error.cuda", name, ln(m.start()))
                found = c.add("host", "error.cuda_code", num, ln(m.start())) or found
    # containers: said, not denied ("bare metal, not in a container", "we do not use docker", "without docker")
    for name, rx in _CONTAINERS:
        m = _first(c, rx, said=True)
        if m:
            c.add("host", "host.container", name, ln(m.start()))
            if name == "kubernetes":
                c.add("host", "host.kubernetes", True, ln(m.start()))
            found = True
            break
    else:
        m = _first(c, _CONTAINER_ZH, said=True)
        if m:
            found = c.add("host", "host.container", "container", ln(m.start())) or found
    m = _first(c, _SMI_MISSING) if c.has("host", "host.container") else None
    if m:
        found = c.add("host", "symptom.container_without_driver", True, ln(m.start()), severity="problem",
                      summary="inside a container, nvidia-smi is not found: the host's driver files were not mounted into it") or found
    m = _first(c, _SPLIT_CONTAINERS)
    if m:
        found = c.add("host", "host.split_across_containers", True, ln(m.start()), severity="info",
                      summary="the text says one job's GPUs or ranks sit in different containers or pods") or found
    m = _first(c, _MULTI_NODE_NVLINK) or (_first(c, _SEVERAL_NODES) if _first(c, _MNNVL_NAMED) else None)
    if m:
        found = c.add("host", "host.nvlink_multi_node", True, ln(m.start()), severity="info",
                      summary="the text says the GPUs' NVLink domain spans several hosts (multi-node NVLink)") or found
    m = _first(c, _ONE_GPU_EACH)
    if m:
        found = c.add("host", "host.one_gpu_per_process", True, ln(m.start()), severity="info",
                      summary="the text says each process/container sees one GPU of the host") or found
    # symptoms
    for key, rx in _SYMPTOMS:
        m = _first(c, rx)
        while m and (_SAID_ABSENT.search(low[max(0, m.start() - 24):m.start()])  # "it no longer hangs"
                     or (key == "symptom.fails" and _ASKED.search(low[max(0, m.start() - 80):m.start()]))
                     or BENIGN_WARN.search(c.paste.line(ln(m.start())))  # NCCL's own no-fault WARN
                     or (key == "symptom.wrong_results" and _WATCHDOG_CAVEAT.search(c.paste.line(ln(m.start())).lower()))):
            nxt = _rx(rx).search(low, m.end())
            m = nxt if nxt and ln(nxt.start()) not in tool_lines and not _LEGEND.search(c.paste.line(ln(nxt.start())).lower()) else None
        if m:
            if key in _COUNTED:  # a count said in words: "at least one" (the live host gives the number)
                found = c.add("host", key, 1, ln(m.start()), summary=_COUNTED[key]) or found
                continue
            found = c.add("host", key, True, ln(m.start())) or found
    def unsaid(at: int) -> bool:  # "no longer ...", or a tool's legend line: not the text's own statement
        return bool(_SAID_ABSENT.search(low[max(0, at - 24):at]) or ln(at) in tool_lines
                    or _LEGEND.search(c.paste.line(ln(at)).lower()))

    m = _gpus_missing(low)
    if m and not unsaid(m.start()):
        n = next((g for g in (m.groupdict().get(k) for k in ("n1", "n2", "n3", "n4", "n5")) if g), None)
        seen = count_of(n)
        found = c.add("host", "symptom.gpus_missing", True, ln(m.start()), severity="problem",
                      summary="the text says fewer GPUs are seen than the machine holds"
                              + (f" ({seen} seen)" if seen else "")) or found
    elif not c.has("host", "symptom.gpus_missing"):
        m = _first(c, _NO_CUDA_DEVICE)
        while m and (unsaid(m.start()) or _NO_CUDA_DEVICE_NOT_SAID.search(low[max(0, m.start() - 40):m.start()])):
            m = _NO_CUDA_DEVICE.search(low, m.end())
        if m:
            found = c.add("host", "symptom.no_cuda_device", True, ln(m.start()), severity="problem",
                          summary="the text says CUDA (or the framework) sees no GPU at all") or found
    m = _NO_GPU_BY_DESIGN.search(low)
    while m and (unsaid(m.start()) or _HYPOTHETICAL.search(low, max(0, m.start() - 60), m.start())):
        m = _NO_GPU_BY_DESIGN.search(low, m.end())  # not a condition: PyTorch's "If you are running on a CPU-only machine"
    if m:
        found = c.add("host", "text.no_gpu_by_design", True, ln(m.start()), severity="info",
                      summary="the text says the machine has no GPU by design (a CPU-only runner or node)") or found
    if c.has("host", "symptom.no_cuda_device"):
        m = _DRIVER_SEES_GPUS.search(low)
        if m and not unsaid(m.start()):
            found = c.add("host", "symptom.no_cuda_device_driver_sees_gpus", True, ln(m.start()), severity="problem",
                          summary="a program sees no GPU while the text says the driver (nvidia-smi) or another "
                                  "framework sees them") or found
    hit, topic = _reported(c, low, ln, tool_lines)
    if topic is not None:
        found = c.add("host", "text.topic", "gpu communication", topic, severity="info",
                      summary="a sentence of the text names GPU communication (P2P, NCCL, NVLink, peer access ...)") or found
    if hit is not None:
        found = c.add("host", "symptom.reported", True, hit, severity="warning",
                      summary="the text reports trouble with GPU communication (in general words)") or found
    m = _P2P_SLOWER_SAID.search(low)
    if m and not c.has("host", "tool.p2p_slower_than_no_p2p"):
        found = c.add("host", "tool.p2p_slower_than_no_p2p", True, ln(m.start()), severity="problem",
                      summary="the text says P2P enabled measures slower than disabled") or found
    m = _P2P_SAID_OK.search(low)
    if m:
        found = c.add("host", "p2p.read", "OK", ln(m.start()), severity="ok",
                      summary="the text says CUDA/NVML report P2P available") or found
    said_ok = m is not None
    m = _P2P_SAID_NO.search(low) if not said_ok else None
    if m is None and not said_ok:
        named = _TOPO_P2P.search(low) is not None
        m = next((p for p in _P2P_PAIR_SAID_NO.finditer(low) if p.group(2) or named), None)
    if m is None and not said_ok:
        m2 = _P2P_CAN_NO.search(low)
        if m2:
            found = c.add("host", "p2p.read", "NOT_SUPPORTED", ln(m2.start()), severity="problem",
                          summary="the text says CUDA's peer-access query answers no") or found
    if m:
        found = c.add("host", "p2p.read", _P2P_NO_VALUE[m.group(1)], ln(m.start()), severity="problem",
                      summary="the text says nvidia-smi reports P2P unsupported") or found
    if not said_ok and not c.has("host", "p2p.read"):
        for m in _P2P_WORDS_NO.finditer(low):
            a, b = _sentence_span(low, m.start(), m.end())
            if "these two devices" in low[a:b] or _P2P_WORDS_NO_NOT_SAID.search(low[max(a, m.start() - 40):m.start()]):
                continue
            found = c.add("host", "p2p.read", "NOT_SUPPORTED", ln(m.start()), severity="problem",
                          summary="the text says P2P (peer access) is not supported between the GPUs") or found
            break
    if not c.has("host", "host.acs_redirect"):
        for m in _ACS_SAID_ON.finditer(low):
            if _ACS_SAID_ON_NOT.search(low[max(0, m.start() - 40):m.start()]):
                continue
            found = c.add("host", "host.acs_redirect", True, ln(m.start()), severity="problem",
                          summary="the text says ACS is enabled (it redirects PCIe peer traffic up to the root complex)") or found
            break
    m = _MXNET_P2P.search(low)
    if m and int(m.group(1)) < int(m.group(2)) and not said_ok:
        found = c.add("host", "p2p.read", "NOT_SUPPORTED", ln(m.start()), severity="problem",
                      summary=f"MXNet enabled peer access on {m.group(1)} of {m.group(2)} GPU pairs "
                              f"(cudaDeviceEnablePeerAccess failed on the others)") or found
    m = _NCCL_VIA_SAID.search(low)
    if m:
        said = m.group(1) or m.group(2)
        via = "SHM" if said == "shm" else "NET/IB" if said == "net/ib" else "NET/Socket"
        found = c.add("host", "nccl.transport", via, ln(m.start()), severity="warning",
                      summary=f"the text says NCCL goes via {via}") or found
    m = _PATH_SAID.search(low)
    if m:
        path = (m.group(1) or m.group(2)).upper()
        c.add("host", "pair.path", path, ln(m.start()), severity="info",
              summary=f"the text says nvidia-smi topo shows {path} for the pair")
        if path in ("SYS",):
            c.add("host", "pair.cross_socket", True, ln(m.start()), severity="info")
        found = True
    m = _first(c, _SWITCH_SAID) if not c.has("host", "pair.path") else None
    if m:
        found = c.add("host", "pair.path", "PIX", ln(m.start()), severity="info",
                      summary="the text says the GPUs sit under one PCIe switch (topo -m's PIX)") or found
    if not c.has("host", "gpu.consumer"):
        m = _first(c, _CONSUMER_SAID)
        if m:
            c.add("host", "gpu.product_class", "consumer", ln(m.start()), severity="info")
            found = c.add("host", "gpu.consumer", True, ln(m.start()), severity="info",
                          summary="the text names GeForce/consumer cards (no P2P on GeForce)") or found
    if not c.has("host", "gpu.consumer") and not c.has("host", "gpu.product_class"):
        m = _DRIVER_BLOCKS_P2P.search(low)
        if m:
            c.add("host", "gpu.product_class", "consumer", ln(m.start()), severity="info")
            found = c.add("host", "gpu.consumer", True, ln(m.start()), severity="info",
                          summary="the text says NVIDIA's own driver blocks P2P, as it does on GeForce cards") or found
    m = _P2P_SHM_OFF.search(low)
    if m:
        c.add("host", "env.NCCL_P2P_DISABLE", "1", ln(m.start()), severity="info")
        found = c.add("host", "env.NCCL_SHM_DISABLE", "1", ln(m.start()), severity="info") or found
    m = _first(c, _SHM_SIZE)
    if m:
        size, unit = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
        found = c.add("host", "host.shm_mb", int(size) * (1024 if unit == "g" else 1), ln(m.start())) or found
    narrow = _width_below_max(low)
    marked = _WIDTH_MARKED_DOWN.search(low) if not narrow else None
    if narrow:
        at, cur, top = narrow
        found = c.add("host", "gpu.pcie_degraded_under_load", True, ln(at),
                      summary=f"the text says the PCIe link runs at x{cur} instead of x{top} (a width is never lowered when idle)") or found
    elif marked:
        found = c.add("host", "gpu.pcie_degraded_under_load", True, ln(marked.start()),
                      summary=f"lspci marks the link's width x{marked.group(1)} as downgraded (below LnkCap's; a width is "
                              "never lowered when idle)") or found
    elif (narrow_gpu := _WIDTH_NARROW.search(low)) and not _NOT_A_GPU_LINK.search(_sentence(low, narrow_gpu.start(), narrow_gpu.end())):
        found = c.add("host", "gpu.pcie_degraded_under_load", True, ln(narrow_gpu.start()),
                      summary=f"the text says a link runs x{narrow_gpu.group(1) or narrow_gpu.group(2)} wide (NVIDIA GPUs are "
                              "built x16 or x8; a width is never lowered when idle)") or found
    else:
        lower = _gen_below_best(low)
        if lower:
            at, end, cur, best = lower
            said = _sentence(low, at, end)
            if (_BUSY.search(low) or _TRAINED_LOW.search(said)) and not _IDLE_WORD.search(said):
                found = c.add("host", "gpu.pcie_degraded_under_load", True, ln(at),
                              summary=f"the text says the PCIe link runs at Gen{cur} below Gen{best} while the GPUs are busy") or found
    if not c.has("host", "gpu.pcie_degraded_under_load"):
        # a Gen1/Gen2 speed said while the GPUs are busy: every GPU doing P2P trains Gen3 or faster, and a busy GPU
        # does not idle its link down (nvidia-smi's manual: the link generation "may be reduced when the GPU is not in use")
        m = _SLOW_GEN.search(low)
        said = _sentence(low, m.start(), m.end()) if m else ""
        if m and _BUSY.search(said) and not _IDLE_WORD.search(said):
            found = c.add("host", "gpu.pcie_degraded_under_load", True, ln(m.start()),
                          summary="the text says the PCIe link runs at Gen1/Gen2 speed while the GPUs are busy") or found
    m = _IDLE_LINK.search(low)
    if m:
        found = c.add("host", "gpu.pcie_idle_downclock", True, ln(m.start()),
                      summary="the text says the PCIe link is slow while idle") or found
    fell = None if any(f.facts.get("symptom.slow") for f in c.findings) else _bandwidth_fell(low)
    if fell:
        found = c.add("host", "symptom.slow", True, ln(fell[0]), summary=fell[1]) or found
    m = _FIXED_BY_CHANGE.search(low)
    fixed_by = False
    if m and re.search(r"n'?t\b|\bnot\b|\bno\b|\bnever\b|没有|未", m.group(0)):
        m = None  # "upgrading the driver did not help / doesn't work"
    if m and _TROUBLE_AFTER.search(low, m.end(), _sentence_span(low, m.start(), m.end())[1]):
        m = None  # "535 works, after upgrading to driver 550 it doesn't work anymore": the change is what broke it
    if m:
        what = next(g for g in m.groups() if g)
        what = "driver" if what.endswith("驱动") else "cuda" if what.startswith("cuda") else _component(what)
        fixed_by = True
        found = c.add("host", "text.fixed_by", what, ln(m.start()), severity="info",
                      summary=f"the text says changing the {what} version fixed it") or found
    m = _BROKEN_BY_CHANGE.search(low)
    if m and not fixed_by and any(f.facts.get(k) for f in c.findings for k in _SYMPTOM_KEYS):
        what = next(g for g in m.groups() if g)
        what = ("driver" if what.endswith("驱动") or what.isdigit() or what == "nvidia" else "cuda" if what.startswith("cuda")
                else _component(what))
        found = c.add("host", "text.broken_by", what, ln(m.start()), severity="info",
                      summary=f"the text says the trouble began after changing the {what} version") or found
    if not c.has("host", "text.fixed_by") and not c.has("host", "text.broken_by"):
        for what, rx in (("driver", _DRIVER), ("driver", _DRIVER_BRANCH), ("nccl", _NCCL_VERSION_ANY if "nccl" in low else _NCCL_VERSION)):
            said = _version_contrast(low, rx)
            if said and rx is _DRIVER_BRANCH and not _DRIVER_WORD.search(_sentence(low, said[1], said[1] + 3)):
                said = None  # bare branch numbers count only in a sentence about the driver
            if said:
                key, line_at, good, bad = said
                found = c.add("host", key, what, ln(line_at), severity="info",
                              summary=f"the text says it works with {what} {good} and fails with {what} {bad}") or found
                break
    for m in _SHM_GROW.finditer(low):
        sentence = _sentence(low, m.start(), m.end())
        if _SHM_FIX_WORDS.search(sentence) and not _NOT_FIXED.search(sentence):
            found = c.add("host", "symptom.fixed_by_shm_increase", True, ln(m.start()),
                          summary="the text says a larger /dev/shm was needed or fixed it (shared memory ran out)") or found
            break
    m = next((x for x in _SHM_OUT.finditer(low) if not _SAID_ABSENT.search(low[max(0, x.start() - 24):x.start()])), None)
    if m:
        found = c.add("host", "symptom.shm_exhausted", True, ln(m.start()),
                      summary="the text says shared memory (/dev/shm) ran out") or found
    for key, rx, summary in (("symptom.fixed_by_p2p_disable", _FIXED_BY_P2P_OFF, "the text says it works with P2P disabled (NCCL_P2P_DISABLE=1)"),
                             ("symptom.fixed_by_nvls_disable", _FIXED_BY_NVLS_OFF,
                              "the text says it works with NVLink SHARP disabled (NCCL_NVLS_ENABLE=0)")):
        m = next((x for x in rx.finditer(low) if not _NOT_FIXED.search(x.group(0))
                  and not _SAID_ABSENT.search(low[max(0, x.start() - 24):x.start()])), None)  # "we don't need to set ..."
        if m:
            found = c.add("host", key, True, ln(m.start()), summary=summary) or found
    nine = _fails_beyond_nine(low)
    if nine:
        at, ok_n, host_n = nine
        found = c.add("host", "symptom.fails_beyond_nine_gpus", True, ln(at),
                      summary=f"the text says it works on {ok_n} GPUs and fails with all {host_n} (CUDA: at most eight peers per GPU)") or found
    beyond = _fails_beyond_two(low)
    if beyond:
        at, ok_n, bad_n = beyond
        found = c.add("host", "symptom.fails_beyond_two_gpus", True, ln(at),
                      summary=f"the text says it works on {ok_n} GPU{'s' if ok_n > 1 else ''} and hangs or fails on {bad_n}") or found
    if not c.has("host", "symptom.fixed_by_p2p_disable") and not c.has("host", "symptom.fixed_by_nvls_disable"):
        for m in _ENV_CAUSE.finditer(low):
            var = next(g for g in m.groups() if g)
            a, b = _sentence_span(low, m.start(), m.end())
            said = low[a:b]
            removed = not re.match(r"(?:when|whenever|if|once|after|with|because|due to|设置|开启|启用|加上)", m.group(0)) and not re.search(
                r"caus|make|made|lead|led|result|trigger|break|broke", m.group(0))
            if re.match(r"because|due to", m.group(0)):
                # the reason given for the trouble said before it ("it crashed because X was set"; not "it works because X is set")
                before = said[:m.start() - a]
                if _ENV_WORKED.search(before) or not _ENV_TROUBLE.search(before):
                    continue
            elif not removed:
                # the trouble follows the setting: in its sentence, or the next one ("When X=0 is set, NCCL uses TCP. I get very slow ...")
                after = low[b:b + 200].split("\n", 1)[0] if b < len(low) and low[b:b + 1] != "\n" else ""
                if (_ENV_WORKED.search(said) or not (_ENV_TROUBLE.search(said[m.end() - a:]) or _ENV_TROUBLE.search(said[:m.start() - a])
                                                      or (after and _ENV_TROUBLE.search(after) and not _ENV_WORKED.search(after)))):
                    continue
                if _SAID_ABSENT.search(low[max(0, m.start() - 24):m.start()]) or _NOT_FIXED.search(said[:m.start() - a][-12:]):
                    continue
            elif _NOT_FIXED.search(low[m.end():m.end() + 60].split(".")[0]):
                continue  # "removing NCCL_X did not fix it"
            found = c.add("host", "symptom.caused_by_env", var.upper(), ln(m.start()), severity="problem",
                          summary=f"the text says the trouble comes with {var.upper()} set (goes without it)") or found
            break
    # versions
    m = _DRIVER.search(low)
    if m:
        c.add("host", "host.driver_version", m.group(1), ln(m.start()))
        c.add("host", "host.driver_major", int(m.group(1).split(".")[0]), ln(m.start()))
        found = True
    elif "driver" in low or "驱动" in low:
        m = _DRIVER_MAJOR.search(low)
        if m:
            found = c.add("host", "host.driver_major", int(m.group(1)), ln(m.start())) or found
    m = _NCCL_VERSION.search(low)
    if m:
        found = c.add("host", "nccl.version", m.group(1), ln(m.start())) or found
    elif "nccl.version()" in low:
        m = _NCCL_VERSION_TUPLE.search(low)
        if m:
            found = c.add("host", "nccl.version", ".".join(m.groups()), ln(m.start())) or found
    for m in _CUDA_VERSION.finditer(low):
        # nvidia-smi's banner ("NVIDIA-SMI 550.144.03  Driver Version: 550.144.03  CUDA Version: 12.4") and -q ("Driver
        # Version : 580.159.04" then "CUDA Version : 13.0") give the newest CUDA the driver supports (host.cuda_driver_version,
        # read by smi), not the CUDA a program was built with: a "CUDA Version" right after a driver's version, on its line
        # or the line before, is the driver's
        if _SMI_BANNER.search(low, low.rfind("\n", 0, max(0, low.rfind("\n", 0, m.start()))) + 1, m.start()):
            continue
        found = c.add("host", "host.cuda_runtime_version", f"{m.group(1)}.{m.group(2)}", ln(m.start())) or found
        break
    # the IOMMU said to be on, off or in passthrough ("disabled IOMMU in BIOS", "intel_iommu=on", "开启 IOMMU 后");
    # turning it off (or to passthrough) said to have FIXED the trouble says it was on when the trouble was seen
    pt, off, on = _first(c, _IOMMU_PT), _first(c, _IOMMU_OFF), _first(c, _IOMMU_ON)
    change = next((x for x in (off, pt) if x and _fixed_near(low, x)), None)
    if c.has("host", "host.iommu_passthrough") or c.has("host", "host.iommu_active"):
        pass  # a kernel log or command line said it: its words win over a sentence's
    elif change:
        found = c.add("host", "host.iommu_active", True, ln(change.start()), severity="info",
                      summary="the text says turning the IOMMU off or to passthrough fixed it (it was on when the trouble was seen)") or found
    elif pt:
        found = c.add("host", "host.iommu_passthrough", True, ln(pt.start()), severity="info",
                      summary="the text says the IOMMU is in passthrough (iommu=pt)") or found
        c.add("host", "host.iommu_active", False, ln(pt.start()), severity="info")
    elif (off or on) and not (off and on):  # both said (before / after a change): the state at the trouble is unknown
        m = on or off
        found = c.add("host", "host.iommu_active", bool(on), ln(m.start()), severity="info",
                      summary="the text says the IOMMU is " + ("on" if on else "off")) or found
    for key, value, rx, summary in _FIXED_BY_ACTION:
        if c.has("host", key):
            continue  # a tool's reading or a sentence of the state itself wins
        m = next((x for x in rx.finditer(low) if _fixed_near(low, x)), None)
        if m:
            found = c.add("host", key, value, ln(m.start()), severity="warning", summary=summary) or found
    # BIOS words
    words, first_line = [], None
    for name, rx in _BIOS:
        m = _first(c, rx)
        if m:
            words.append(name)
            first_line = first_line or ln(m.start())
    if words:
        found = c.add("host", "host.bios_mentions", ",".join(words), first_line or 1) or found
    # CPU
    for vendor, rx in _CPU:
        m = _first(c, rx)
        if m:
            model = " ".join(m.group(1).split())[:60]
            written = c.paste.line(ln(m.start()))
            i = written.lower().find(model)
            if i >= 0 and len(written) == len(written.lower()):
                model = written[i:i + len(model)]
            c.add("host", "host.cpu_vendor", vendor, ln(m.start()))
            c.add("host", "host.cpu_model", model, ln(m.start()))
            found = True
            break
    else:
        for vendor, rx in _CPU_VENDOR_ONLY:
            m = _first(c, rx)
            if m:
                c.add("host", "host.cpu_vendor", vendor, ln(m.start()))
                found = True
                break
    if found:
        c.kind("prose")
    return found


#: literals one of which every topic word holds: lines without any are never searched with the regexes
_TOPIC_LITERALS = ("p2p", "peer", "nccl", "nvlink", "nvswitch", "ipc", "between", "gpu", "multi", "reduce", "gather",
                   "to-all", "to_all", "toall", "to all", "collective", "ddp", "distributed", "parallel",
                   "rccl", "torchrun", "nproc", "fsdp", "deepspeed", "horovod", "卡训练", "卡推理", "卡并行", "卡运行", "卡跑",
                   "多卡", "双卡", "卡间", "卡与卡", "显卡", "点对点", "通信", "分布式", "并行", "互联")


def _reported(c: Collector, low: str, ln, tool_lines: set[int] = frozenset()) -> tuple[int | None, int | None]:
    """(the line of the first sentence that names a topic of GPU communication and a word of trouble (see
    the module docstring), the line of the first sentence that names a strong topic at all), each or None.
    A substring search for the topic literals picks the lines
    (at most 400), so a long log costs a few passes in C, not a regex over the whole text."""
    commands = set(c.paste.commands) | tool_lines  # typed, or a tool's own line
    starts: set[int] = set()
    for lit in _TOPIC_LITERALS:
        pos, n = low.find(lit), 0
        while pos != -1 and n < 400:
            line_start = low.rfind("\n", 0, pos) + 1
            starts.add(line_start)
            nl = low.find("\n", pos)
            if nl == -1:
                break
            pos, n = low.find(lit, nl + 1), n + 1
    gpu_named: bool | None = None
    topic: int | None = None
    for line_start in sorted(starts)[:400]:
        line_end = low.find("\n", line_start)
        line_end = len(low) if line_end < 0 else line_end
        line = low[line_start:line_end]
        if _TOOL_LINE.search(line) or _LEGEND.search(line) or _is_command(line) or ln(line_start) in commands:
            continue  # a tool's own line, or a command typed ("$ nvidia-smi nvlink -s"): no sentence of the report
        kernel = _KERNEL_LINE.match(line) is not None
        for m in _REPORT_TOPIC.finditer(line):
            if topic is None and not kernel and _REPORT_TOPIC_STRONG.match(line, m.start()) is not None:
                topic = ln(line_start)
            if _REPORT_TOPIC_STRONG.match(line, m.start()) is None:
                if gpu_named is None:
                    gpu_named = _GPU_NAMED.search(low) is not None
                if not gpu_named:
                    continue
            # the sentence around the topic word, within its line
            start = 0
            for e in _SENTENCE_END.finditer(line, max(0, m.start() - 300), m.start()):
                start = e.end()
            e = _SENTENCE_END.search(line, m.end(), min(len(line), m.end() + 300))
            end = e.start() if e else min(len(line), m.end() + 300)
            for t in _REPORT_TROUBLE.finditer(line, max(start, m.start() - 300), end):
                if _ZERO_COUNT.match(line, t.end()):
                    continue  # a tool's counter at zero ("Replay Errors: 0")
                if not _NEGATED.search(line[max(0, t.start() - 12):t.start()]) \
                        and not _SAID_ABSENT.search(line[max(0, t.start() - 24):t.start()]):  # "no issues so far", "no longer hangs"
                    return ln(line_start), topic
    return None, topic


_URL = re.compile(r"\S+://\S+")
_IN_IDENTIFIER = re.compile(r"[._]\w")




def trouble_said(text: str) -> bool:
    """Does a line of the text (first 256 KB) say that something goes wrong, in the trouble words of the report rule
    (_REPORT_TROUBLE: an error, a failure, a problem, a hang...), not negated ("no issues so far")? A tool's header or
    legend ("#wrong", "errors") and a URL's path ("/issues/12") are no such words. (read.trouble_said, for the
    matcher's never-silent gate.)"""
    lines = Paste(text).sample(256_000, 0).text.splitlines()[:2000]
    own = smi.q_lines_of_paste(lines)  # -q's labels ("HW Slowdown", "ECC Errors", "Remapping Failure"): no words of trouble
    for no, line in enumerate(lines, 1):
        line = line.lower()
        if no in own or _TOOL_LINE.search(line) or _LEGEND.search(line):
            continue
        line = _URL.sub(" ", line)
        for t in _REPORT_TROUBLE.finditer(line):
            if line[t.start() - 1:t.start()] == "#" or _ZERO_COUNT.match(line, t.end()) or _IN_IDENTIFIER.match(line, t.end()) \
                    or line[t.start() - 1:t.start()] in (".", "_"):
                # a column of a tool's table ("#wrong" of nccl-tests, whitespace folded by the matcher), a zero count, a
                # part of a dotted or snake-case name (nvidia-smi --query-gpu's "ecc.errors.uncorrected", "hw_slowdown")
                continue
            if not _NEGATED.search(line[max(0, t.start() - 12):t.start()]):
                return True
    return False
