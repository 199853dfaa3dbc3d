"""What programs print when a process sees fewer GPUs than it was given, or none: the frameworks' and tools' own checks
(Lightning, TGI, exllamav2, vLLM, PyTorch, Ray, TensorFlow, XLA, Paddle, Triton, UCCL, MegEngine, Xinference, xoscar,
Slurm, OpenPBS, Flux, ComfyUI, UCX, Numba, PyCUDA, cuGraph, Dask, CUDA.jl, AMReX, DeepEP, nv_peer_mem, NVSHMEM, CUTLASS, DeepLearningExamples, cuDSS, LMDeploy, verl, OneFlow, ollama, llama.cpp, JAX, DeepSpeed, Megatron-LM, Accelerate, MXNet, cuBLASMp, FBGEMM, NeMo-RL,
NeMo, slime, AReaL, ROLL, MLC LLM, Legion/Realm, HTCondor, NCCL, GROMACS, QUDA, cutorch, Caffe2, cuda-samples' cudaOpenMP,
node health checkers), each pattern written from its source's format string.

``parse(c)`` adds ``symptom.gpus_missing`` (fewer GPUs seen than asked for or installed) or, failing that,
``symptom.no_cuda_device`` (none seen), on the first line that says so. They are messages, not sentences: no negation or
condition is looked for around them (the prose reader's words for the same symptoms are in prose.py).
"""

from __future__ import annotations

import re

from ..knowledge.regex_safety import LiteralGate
from .paste import SAMPLE_HEAD, SAMPLE_TAIL, Collector

#: more GPUs asked for than the process sees, in the programs' own words (lower-cased text)
FEWER_GPUS = LiteralGate(re.compile(
    # mistral.rs (device_map: "Could not find cuda device with ordinal %d"; distributed: "NCCL rank %d must match device
    # ordinal, but device ordinal is %d. Ensure GPUs are visible in the correct order")
    r"\bcould not find cuda device with ordinal \d+\b|\bnccl rank \d+ must match device ordinal, but device ordinal is \d+\b|"
    # ComfyUI's prompt validation (execution.py: "Value not in list" with "{input}: '{value}' not in {choices}") on a node's
    # device input: the GPU a workflow names is not among the devices the process lists
    r"\bvalue not in list: \w*device\w*: 'cuda:\d+' not in \[|"
    # Accelerate's max-memory and device checks (utils/modeling.py get_max_memory: "Device %d is not available, available
    # devices are [...]" for a device past the count; "Device %d seems unavailable, Proceeding to check subsequent
    # devices." where a tensor cannot be put on it)
    r"\bdevice \d+ is not available, available devices are \[|\bdevice \d+ seems unavailable, proceeding to check subsequent devices\b|"
    # UCX's CUDA allocator (uct/cuda/base/cuda_alloc.c: "Illegal cuda device %d number of devices %d")
    r"\billegal cuda device \d+ number of devices \d+|"
    # KernelAbstractions on CUDA.jl ("Device id %d out of bounds."), Legion's Realm ("requested cuda device id out of
    # range: %d >= %d")
    r"\bdevice id \d+ out of bounds\b|\brequested cuda device id out of range: \d+ >= \d+|"
    # NVSHMEM's init ("cuda_device_id is set, but device at index %d is not valid"), CUTLASS's CuTe DSL distributed examples
    # ("Less than two devices", printed alone on its line)
    r"\bcuda_device_id is set, but device at index \d+ is not valid\b|(?m:^less than two devices$)|"
    # Slurm's GPU binding and device checks (gres.c: "Bind request %s does not specify any devices within the allocation for
    # task %d", "Not enough gres to bind %d per task", "_set_gres_device_desc: stat(/dev/nvidiaN): No such file or
    # directory"; slurmctld "Killing job %u: gres/gpu type %s not found on node %s")
    r"\bbind request gres/gpu:\S+ does not specify any devices within the allocation for task \d+|\bnot enough gres to bind \d+ per task\b|"
    r"\bstat\(/dev/nvidia\d+\): no such file or directory\b|\bkilling job \d+: gres/gpu type \S+ not found on node\b|"
    # schedulers that hold GPUs back from jobs: Slurm's GPU plugin (gres_gpu.c: "The following autodetected GPUs are being
    # ignored:", NVML found GPUs that gres.conf does not configure), HTCondor's condor_gpu_discovery ("skipping %d uuid=%s
    # during CUDA enumeration because of index": CUDA_VISIBLE_DEVICES inherited by the startd acts as a whitelist) and its
    # startd ("GPUs %s is now marked offline"), Flux's resource pool (Rv1Pool.py "unsatisfiable request: need %d node(s)
    # with %d cores and %d GPUs each, only %d eligible")
    r"\bthe following autodetected gpus are being ignored\b|\bskipping \d+ uuid=\S+ during cuda enumeration because of index\b|"
    r"\bgpus gpu-[0-9a-f-]+ is now marked offline\b|\bunsatisfiable request: need \d+ node\(s\) with \d+ cores and \d+ gpus each\b|"
    # multi-gpu-programming-models ("Number of visible devices (%d) is less than number of ranks on the node (%d)!"),
    # CUTLASS's distributed GEMM ("... compiled with TP = %d, but found only %d devices"), Warp ("Invalid device
    # identifier: cuda:%d")
    r"\bnumber of visible devices \(\d+\) is less than number of ranks on the node\b|\bbut found only \d+ devices\b|"
    r"\binvalid device identifier: cuda:\d+|"
    # GROMACS ("Some of the requested GPUs do not exist, behave strangely, or are not compatible"), QUDA ("Too few GPUs
    # available on %s"), Kokkos ("Requested GPU with id '%d' but only %dGPU(s) available"), OpenMM ("Illegal value for
    # DeviceIndex: %d")
    r"\bsome of the requested gpus do not exist\b|\btoo few gpus available on \S+|"
    r"\brequested gpu with id '\d+' but only \d+ ?gpu\(s\) available\b|\billegal value for deviceindex: \d+|"
    # dask-cuda (local_cuda_cluster.py "Can not scale beyond visible devices"; utils.py "Invalid device index or UUID: %s",
    # "Cannot get CPU affinity for device with index %d", "Devices in CUDA_VISIBLE_DEVICES must be comma-separated
    # integers or strings beginning with 'GPU-' or 'MIG-' prefixes")
    r"\bcan not scale beyond visible devices\b|\binvalid device index or uuid: \S+|\bcannot get cpu affinity for device with index \d+\b|"
    r"\bdevices in cuda_visible_devices must be comma-separated integers\b|"
    # frameworks' own checks that more GPUs were asked for than the process sees: Lightning (fabric/utilities/
    # device_parser.py "You requested gpu: [..]\n But your machine only has: [..]"; fabric/accelerators/cuda.py "You
    # requested to find %d devices but this machine only has %d GPUs"), TGI (launcher "`sharded` is true but only found %d
    # CUDA devices"; server utils/dist.py assert "Each process is one gpu"), exllamav2 (model_init.py "Too many entries in
    # gpu_split. %d CUDA devices are available")
    r"\byou requested gpus?:?\s*\[[^\]\n]*\]\s*but your machine only has\b|"
    r"\brequested to find \d+ devices but this machine only has \d+ gpus\b|"
    r"\bbut only found \d+ cuda devices\b|\bassertionerror: each process is one gpu\b|"
    r"\btoo many entries in gpu_split\. \d+ cuda devices are available\b|"
    # vLLM (v1/executor/ray_utils.py: "The number of required GPUs exceeds the total number of available GPUs in the placement
    # group", "Tensor parallel size may exceed available GPUs"; v1/worker/gpu_worker.py "DP adjusted local rank %d is out of
    # bounds for %d devices") and PyTorch (elastic local_elastic_agent.py "local_rank %d exceeds available GPUs in
    # CUDA_VISIBLE_DEVICES"; distributed_c10d.py "device_id cuda:%d is out of range. Please use a device index less than the
    # number of accelerators available")
    r"\bthe number of required gpus exceeds the total number of available gpus\b|\btensor parallel size may exceed available gpus\b|"
    r"\bdp adjusted local rank \d+ is out of bounds for \d+ devices\b|\blocal_rank \d+ exceeds available gpus in cuda_visible_devices\b|"
    r"\bdevice_id \S+ is out of range\. please use a device index less than the number of accelerators available\b|"
    # Ray (util/collective nccl_collective_group.py "Tensor list cannot be larger than the numberof available GPUs"; the
    # raylet's "Attempting to start raylet with %d GPU, but CUDA_VISIBLE_DEVICES contains"), TensorFlow (eager/context.py
    # "Invalid visible device index"; tf.distribute "Some requested devices ... are not visible to TensorFlow"), Paddle
    # (distributed/fleet/launch_utils.py "Can't find your gpus %s in CUDA_VISIBLE_DEVICES")
    r"\btensor list cannot be larger than the number ?of available gpus\b|\battempting to start raylet with \d+ gpus?, but cuda_visible_devices contains\b|"
    r"\binvalid visible device index\b|\bsome requested devices in `?tf\.distribute\.strategy`? are not visible to tensorflow\b|"
    r"\bcan't find your gpus \S+ in cuda_visible_devices\b|"
    # Triton's model config check (core model_config_utils.cc: "instance group %s of model %s specifies invalid or
    # unsupported gpu id %d. GPUs with at least the minimum required CUDA compute compatibility of %f are: ..."), UCCL's
    # P2P engine (p2p/engine.cc: "GPU index %d out of range (visible devices: %d)")
    r"\bspecifies invalid or unsupported gpu id \d+\b|\bgpu index \d+ out of range \(visible devices: \d+\)|"
    # MegEngine (comp_node.cpp: "request gpu%d out of valid range [0, %d)"), Xinference's worker (core/worker.py: "cannot use
    # the GPUs with these indexes: ... can only see these GPUs", "Requested GPUs exceed the number of available devices")
    r"\brequest gpu\d+ out of valid range \[0, \d+\)|\bcannot use the gpus with these indexes\b|"
    r"\brequested gpus exceed the number of available devices\b|"
    # Slurm (src/common/gres.c, node_config_validate / _validate_job_gres_cnt): a node reporting fewer GPUs than gres.conf
    # names ("gres/gpu count too low (6 < 8)", "gres/gpu count reported lower than configured", "gpu:h100 count too low",
    # "gres/gpu count mismatch on node")
    r"\bgres/gpu count (?:too low|reported lower than configured|mismatch on node)\b|\bgpu:\w+ count too low \(\d+ < \d+\)|"
    # Flux (flux-core resource/topo.c, draining a node whose hardware lacks what its configuration lists: "rank %d (%s)
    # missing resources: %s", e.g. gpu[2-3]); OpenPBS's cgroups hook ("GPUs discovered but could not be successfully
    # mapped to devices")
    r"\bmissing resources: (?:[\w,\[\]-]*,)?gpu\[?\d|\bgpus discovered but could not be successfully mapped to devices\b|"
    # cuBLASMp's samples (helpers.h: "Error: not enough visible CUDA devices for requested SPMG placement"), FBGEMM's
    # merge_pooled_embeddings check (TORCH_CHECK "target_device_index=%d, num_gpus=%d", printed only when the index is
    # past the GPUs the process sees)
    r"\bnot enough visible cuda devices for requested\b|\bare occupied by other processes and can't be used at the moment\b|"
    # PyTorch's NVML helpers (torch/cuda/__init__.py _get_nvml_device_index: "device %d is not visible
    # (CUDA_VISIBLE_DEVICES=%s)")
    r"\bdevice \d+ is not visible \(cuda_visible_devices=|"
    # vLLM's platform interface (visible_device_id_to_physical_device_id / logical_device_id_to_visible_device_id:
    # "visible device ordinal %d is out of range for CUDA_VISIBLE_DEVICES=%s", "Physical device %d for logical device %d
    # is not visible in CUDA_VISIBLE_DEVICES=%s")
    r"\bvisible device ordinal \d+ is out of range for cuda_visible_devices=|"
    r"\bphysical device \d+ for logical device \d+ is not visible in cuda_visible_devices=|"
    # XLA (platform_util.cc: "Allowed device set contains %d devices, but platform only sees %d"), TensorFlow
    # (gpu_device.cc: "Ignoring visible gpu device (...) with core count: %d. The minimum required count is %d";
    # "'visible_device_list' listed an invalid Device id '%s' but visible device count is %d")
    r"\ballowed device set contains \d+ devices, but platform only sees \d+\b|\bignoring visible gpu device \(device: \d+|"
    r"\bvisible_device_list' listed an invalid device id '\d+' but visible device count is \d+\b|"
    # RL post-training stacks: NeMo-RL's and slime's device checks ("GPU id %d is not valid under CUDA_VISIBLE_DEVICES=%s.
    # Expected one of ...", "Device id %s is not valid under %s=%s"), AReaL's local scheduler ("Requested %d GPUs but only %d
    # available"; on a list it cannot parse, only GPU 0, below), ROLL's resource manager (assert "num_gpus %d >
    # available_gpu %s"), and NeMo-RL's and ROLL's receivers of a CUDA IPC tensor ("Invalid device_uuid=%s": the sender's
    # GPU is none the receiving process sees)
    r"\b(?:gpu|device) id \d+ is not valid under \w*visible_devices\b|\brequested \d+ gpus but only \d+ available\b|"
    r"\bnum_gpus \d+ > available_gpu [\d.]+|\binvalid device_uuid=|"
    # Legion/Realm under FlexFlow (realm/cuda/cuda_module.cc: "%d GPUs requested, but only %d available!")
    r"\b\d+ gpus requested, but only \d+ available\b|"
    # NeMo's TensorRT-LLM export (export/trt_llm/tensorrt_llm_run.py: assert "Not enough GPUs, requesting %d")
    r"\bnot enough gpus, requesting \d+|"
    # cluster-toolkit's CI playbook (ansible fail: "GPU count did not match %d" after nvidia-smi -L listed another number)
    r"\bgpu count did not match \d+|"
    # PaddlePaddle (distributed/spawn.py: "the number of visible devices(%d) is less than the number of spawn processes(%d)",
    # "The selected gpu card %s cannot found in CUDA_VISIBLE_DEVICES (%s)"; utils/launch_utils.py: "Can't find your
    # selected_gpus %s in CUDA_VISIBLE_DEVICES[%s]"; "The device id %d exceeds gpu card number %d"; phi's cuda_info.cc
    # "Expected id < GetGPUDeviceCount(), but received id:%d >= GetGPUDeviceCount():%d", "The device id %d is out of range
    # [0, %d), where %d is the number of devices on this machine"; place.cc "Invalid CUDAPlace(%d), must inside [0, %d)"),
    # OneFlow ("Placement is invalid because device id must be less than num devices on node")
    r"\bthe number of visible devices\(\d+\) is less than the number of spawn processes\(\d+\)|"
    r"\bthe selected gpu card \S+ cannot found in cuda_visible_devices\b|\bcan't find your selected_gpus \S+ in cuda_visible_devices\b|"
    r"\bthe device id \d+ exceeds gpu card number \d+|\bexpected id < getgpudevicecount\(\), but received id:\s*\d+ >= getgpudevicecount\(\)|"
    r"\bthe device id \d+ is out of range \[0, \d+\), where \d+ is the number of devices\b|\binvalid cudaplace\(\d+\), must inside \[0, \d+\)|"
    r"\bplacement is invalid because device id must be less than num devices on node\b|"
    # AReaL's local scheduler on a list it cannot parse (UUIDs): "Invalid CUDA_VISIBLE_DEVICES: %s, using default [0]"
    r"\binvalid cuda_visible_devices: [^\n]{0,400}?, using default \[0\]|"
    # llama.cpp (llama.cpp: "invalid value for main_gpu: %d (available devices: %zu)")
    r"\binvalid value for main_gpu: \d+ \(available devices: \d+\)|"
    # Ray Train ("Accelerator 'GPU' is not available on all workers"), Ray's compiled graphs ("CUDA_VISIBLE_DEVICES set
    # incorrectly. expected to include %d")
    r"\baccelerator 'gpu' is not available on all workers\b|\bcuda_visible_devices set incorrectly\. (?:got [^\n]{0,40}, )?expected to include \d+|"
    r"\btarget_device_index=-?\d+, num_gpus=\d+\b|"
    # QUDA (include/communicator_quda.h: "Cannot blacklist invalid GPU device ordinal %d", an index past the GPUs the
    # process sees)
    r"\bcannot blacklist invalid gpu device ordinal \d+\b|"
    # cutorch (lib/THC/THCGeneral.c: THError("%d is not a device") for an index past the GPUs the process sees, printed
    # with " at <file>:<line>"), Caffe2's data_parallel_model ("** Only {} GPUs available, GPUs {} requested")
    r"\b\d+ is not a device at \S*thc\w*\.c:\d+|\bonly \d+ gpus available, gpus \[[\d, ]+\] requested\b", re.ASCII))
#: no GPU at all, in the programs' own words (lower-cased text)
NO_DEVICE = LiteralGate(re.compile(
    # nvidia-persistenced (its syslog: "Failed to query NVIDIA devices. Please ensure that the NVIDIA device files
    # (/dev/nvidia*) exist", "Unable to find any NVIDIA devices"), modprobe-utils ("NVIDIA: no NVIDIA devices found"),
    # cudarc ("Unable to dynamically load the \"cuda\" shared library": no libcuda in the process)
    r"\bfailed to query nvidia devices\. please ensure that the nvidia device files\b|\bunable to find any nvidia devices\b|"
    r"\bnvidia: no nvidia devices found\b|\bunable to dynamically load the \W?cuda\W? shared library\b|"
    # Warp ("Could not find or load the NVIDIA CUDA driver. GPU execution will not be available."; '"cuda" device
    # requested but CUDA is not supported by the hardware or driver')
    r"\bcould not find or load the nvidia cuda driver\b|\bdevice requested but cuda is not supported by the hardware or driver\b|"
    # OpenMM's CUDA platform ("No compatible CUDA device is available"); cuda-samples' cudaOpenMP, which ignores
    # cudaGetDeviceCount's error and prints "no CUDA capable devices were detected" for a count under one
    r"\bno compatible cuda device is available\b|\bno cuda[- ]capable devices were detected\b|"
    # MXNet (src/base.cc: "Please install cuda driver for GPU use.  No cuda driver detected.": libcuda not found)
    r"\bno cuda driver detected\b|"
    # Megatron-LM (initialize.py: assert torch.cuda.is_available(), "Megatron requires CUDA."), Lightning Fabric
    # (connector.py: "No supported gpu backend found!" for accelerator="gpu" without CUDA or MPS); (Accelerate's env report,
    # "- PyTorch accelerator: N/A", is collect_env.py's, with the other environment reports)
    r"\bmegatron requires cuda\b|\bno supported gpu backend found\b|"
    # vLLM's DeviceConfig when no platform is detected ("Failed to infer device type, please set the environment variable
    # `VLLM_LOGGING_LEVEL=DEBUG` ...")
    r"\bfailed to infer device type, please set the environment variable\b|"
    # JAX ("Unable to initialize backend 'cuda': Backend 'cuda' provides no devices"), TensorFlow / XLA's cudart stub
    # ("Could not find cuda drivers on your machine, GPU will not be used.")
    r"\bbackend '(?:cuda|gpu)' provides no devices\b|\bcould not find cuda drivers on your machine, gpu will not be used\b|"
    # ollama's GPU discovery ("no compatible GPUs were discovered"), llama.cpp built without a GPU backend ("llama.cpp was
    # compiled without CUDA/SYCL/Vulkan. Setting the split mode has no effect.")
    r"\bno compatible gpus were discovered\b|\bwas compiled without cuda\b|"
    # xoscar (Xinference's actor runtime, nvutils.py: "Failed to load libnvidia-ml: %s, no CUDA device will be enabled")
    r"\bno cuda device will be enabled\b|"
    # the container GPU hooks and runtimes: apptainer --nv ("Could not find any nv files on this host!" / "... nv
    # libraries ..."), enroot's hook ("Command not found: nvidia-container-cli"; "Kernel module nvidia_uvm is not loaded"),
    # podman --device ("stat /dev/nvidia-uvm: no such file or directory"): the container gets no usable GPU
    r"\bcould not find any nv (?:files|libraries) on this host\b|\bcommand not found: nvidia-container-cli\b|"
    r"\bkernel module nvidia_uvm is not loaded\b|\bstat /dev/nvidia(?:-uvm|ctl|\d+): no such file or directory\b|"
    # OneFlow (placement_symbol.cpp: "Can't construct placement with \"cuda\" type because there is no device!"),
    # Xinference's worker (core/worker.py: "`n_gpu` must be greater than 0 and not greater than the number of GPUs: 0 on
    # the machine")
    r"\bcan't construct placement with \W?cuda\W? type because there is no device\b|"
    r"\bmust be greater than 0 and not greater than the number of gpus: 0 on the machine\b|"
    # Lightning (fabric/utilities/device_parser.py, fabric/accelerators/cuda.py, the accelerator connector) and ollama's
    # GPU discovery (discover/gpu.go, cuInit's CUDA_ERROR_NO_DEVICE)
    r"\bgpus requested but none are available\b|\bthere are no visible cuda devices on this machine\b|"
    r"\bcudaaccelerator\W{0,2} can not run on your system since the accelerator is not available\b|"
    r"\bno nvidia devices detected by library\b|"
    # JAX (_src/xla_bridge.py "Unknown backend: 'gpu' requested, but no platforms that are instances of gpu are present"),
    # Ray (experimental/channel/nccl_group.py "NCCL actor has no GPUs assigned"; RLlib "Found 0 GPUs on your machine")
    r"\bunknown backend: \W{0,2}gpu\W{0,2} requested, but no platforms that are instances of gpu are present\b|"
    r"\bnccl actor has no gpus assigned\b|\bfound 0 gpus on your machine\b|"
    # JAX (_src/xla_bridge.py _get_backend_uncached: "Unknown backend cuda. Available backends are ['cpu']", the CUDA backend
    # skipped where no /dev/nvidia* device node is visible)
    r"\bunknown backend (?:cuda|gpu)\. available backends are \['cpu'\]|"
    # DeepSpeed's launcher when its accelerator counts no device (deepspeed/launcher/runner.py)
    r"\bunable to proceed, no gpu resources available\b|"
    # GROMACS (hardware/device_management.cu: cudaDriverGetVersion gave 0, "No valid CUDA driver found", printed after
    # "Detection of GPUs failed. The API reported:" and as "(GPU detection failed: ...)")
    r"\bno valid cuda driver found\b|"
    # MLC LLM (support/auto_device.py: "Not found device: cuda:0" logged, then "Device is not found on your local environment:
    # cuda")
    r"\bdevice is not found on your local environment: cuda\b|\bnot found device: cuda:\d+|"
    # NCCL (os/linux.cc from 2.30, misc/nvmlwrap.cc before: "Failed to open libnvidia-ml.so.1"): the driver's user-space
    # libraries are not in this environment (a container started without the NVIDIA runtime)
    r"\bfailed to open libnvidia-ml\.so(?:\.1)?\b|"
    # OneFlow (placement: "Placement is invalid because there is no device!"; its CUDA device check "GPU device does not exist")
    r"\bplacement is invalid because there is no device\b|\bgpu device does not exist\b|"
    # Azure's NHC (check_nvsmi_healthmon: "NVIDIA driver not loaded. FaultCode: NHCNA", nvidia-smi's exit code 9)
    r"\bnvidia driver not loaded\b|"
    # HTCondor's condor_gpu_discovery ("cuInit found no CUDA-capable devices. code=%d")
    r"\bcuinit found no cuda-capable devices\b|"
    # NVML's init refused with NVML_ERROR_DRIVER_NOT_LOADED (nvml.h: 9), as programs print the number ("nvmlInit() failed
    # with error 9", HTCondor's condor_gpu_discovery)
    r"\bnvmlinit(?:_v2)?\(\) failed with error 9\b|"
    # DeepSpeed's accelerator detection (accelerator/real_accelerator.py "Setting accelerator to CPU. If you have GPU or other
    # accelerator, we were unable to detect it."), Accelerate's launcher defaulting --num_processes to
    # torch.cuda.device_count() ("`--num_processes` was set to a value of `0`") and its notebook launcher ("Launching
    # training on one CPU."), Lightning's device summary ("GPU available: False, used: False"), NeMo ("GPU is required for
    # the quantization.", "Preemption is supported only on GPUs, disabling preemption"), verl's TensorRT-LLM server
    # ("TRTLLM http server should run on GPU node")
    r"\bsetting accelerator to cpu\. if you have gpu or other accelerator, we were unable to detect it\b|"
    r"`--num_processes` was set to a value of `0`|\blaunching training on one cpu\.|\bgpu available: false, used: false\b|"
    r"\bgpu is required for the quantization\b|\bpreemption is supported only on gpus, disabling preemption\b|"
    r"\btrtllm http server should run on gpu node\b|"
    # Numba ("CUDA driver library cannot be found."), PyCUDA's autoinit ("No CUDA enabled device found. Please check your
    # installation."), cuGraph's multi-GPU utils ("Could not get CUDA device count."), Dask's NVML diagnostics ("PyNVML is
    # installed, but NVML is not"), CUDA.jl ("CUDA driver not found"), AMReX ("No GPU device found")
    r"\bcuda driver library cannot be found\b|\bno cuda enabled device found\b|\bcould not get cuda device count\b|"
    r"\bpynvml is installed, but nvml is not\b|\bcuda driver not found\b|\bno gpu device found\b|"
    # DeepEP's lazy driver loader (csrc/utils/lazy_driver.hpp: "Failed to load CUDA driver `libcuda.so.1`"), nv_peer_mem's
    # service script ("the following required module is not loaded: nvidia")
    r"\bfailed to load cuda driver \W?libcuda\.so|\bthe following required module is not loaded: nvidia\b|"
    # NVIDIA DeepLearningExamples' HiFi-GAN ("Distributed mode requires CUDA."), CUDALibrarySamples' cuDSS multi-GPU sample
    # ("ERROR: no GPU devices found")
    r"\bdistributed mode requires cuda\b|\bno gpu devices found\b|"
    # coreutils' ls on the device nodes ("ls: cannot access '/dev/nvidia*': No such file or directory"): no NVIDIA device
    # node in this host or container (not /dev/nvidia-caps*: the MIG and IMEX capability nodes, no GPU)
    r"\bls: cannot access '?/dev/nvidia(?!-caps)[\w*?-]*'?: no such file or directory\b|"
    # Caffe2 (core/common_gpu.cc, cudaErrorUnknown from cudaGetDeviceCount: "... I will set the available devices to be zero.")
    r"\bi will set the available devices to be zero\b", re.ASCII | re.M))
#: programs' own counts of the GPUs asked for against the GPUs there, as (a literal the text must hold, the pattern): fewer GPUs
#: where more are asked for than are there. Each pattern names its two numbers ``asked`` and ``have`` (``asked2``/``have2``
#: in a second branch; ``shape``, a mesh whose product is asked for).
_COUNTS = (
    # a node health check's count against the one it expects (Azure's NHC check_gpu_count "Expected to see 8 but found 7",
    # gpud's "nvidia gpu count mismatch (found 7, expected 8)", AWS's health check "GPU count mismatch: expected=8,
    # detected=7", awsome-distributed-training's topology check "Topology GPU count mismatch: expected=8, topo=7")
    ("count", re.compile(r"(?<![a-z0-9])gpu[_ ]count\b[^\n]{0,60}?\bexpected(?: to see)?\s*[=:]?\s*(?P<asked>\d{1,3})\b[^\n]{0,20}?\b(?:but )?"
                         r"(?:found|detected|got|saw|seen|topo)\s*[=:]?\s*(?P<have>\d{1,3})\b|"
                         r"\bgpu count mismatch \(found (?P<have2>\d{1,3}), expected (?P<asked2>\d{1,3})\)", re.ASCII)),
    # LMDeploy's TurboMind (lmdeploy/turbomind/parallel_config.py): "no valid parallel config: dp=1, tp=2, ...,
    # available_devices=1", where available_devices is torch.cuda.device_count() times the nodes
    ("no valid parallel config", re.compile(r"\bno valid parallel config: [^\n]*?\btp=(?P<asked>\d+)[^\n]*?\bavailable_devices=(?P<have>\d+)")),
    # Ray's resource waits: Tune / Train v1 ("You asked for %s CPUs and %s GPUs [per trial], but the cluster only has %s CPUs
    # and %s GPUs available"), Train v2 ("The worker group requires {"GPU": 8.0} but the cluster only has a maximum of
    # {"GPU": 4.0} resources")
    ("but the cluster only has", re.compile(
        r"\byou asked for [\d.]+ cpus and (?P<asked>[\d.]+) gpus(?: per trial)?, but the cluster only has [\d.]+ cpus and (?P<have>[\d.]+) gpus available\b|"
        r"\brequires \{[^}]*\"gpu\": (?P<asked2>[\d.]+)[^}]*\} but the cluster only has a maximum of \{[^}]*\"gpu\": (?P<have2>[\d.]+)", re.ASCII)),
    # NVIDIA DeepLearningExamples' nnU-Net (utils.py set_cuda_devices: "Requested %d gpus, available %d.")
    ("gpus, available", re.compile(r"\brequested (?P<asked>\d+) gpus, available (?P<have>\d+)\b")),
    # JAX's meshes (_src/sharding_impls.py make_mesh "Number of devices %d must be >= the product of mesh_shape %s";
    # _src/mesh_utils.py create_device_mesh "... must equal the product of mesh_shape %s")
    ("mesh_shape", re.compile(r"\bnumber of devices (?P<have>\d+) must (?:be >=|equal) the product of mesh_shape \((?P<shape>[\d, ]+)\)")),
    # verl's resource pool (single_controller/ray/base.py): "Total available GPUs %d is less than total desired GPUs %d"
    ("total desired gpus", re.compile(r"\btotal available gpus (?P<have>\d+) is less than total desired gpus (?P<asked>\d+)\b")),
    # OpenPBS's scheduler (job_info.cpp: "Insufficient amount of resource: %s (R: %s A: %s T: %s)", asked, available, total):
    # a job asking for more than the vnode's total (it "Can Never Run"); more than are free only waits
    ("ngpus", re.compile(r"\binsufficient amount of resource: ngpus \(r: (?P<asked>\d+) a: \d+ t: (?P<have>\d+)\)", re.ASCII)),
)


def _asked_have(m: "re.Match") -> tuple[float, float]:
    g = m.groupdict()
    have = float(g.get("have") or g.get("have2"))
    if g.get("shape"):
        asked = 1.0
        for n in re.findall(r"\d+", g["shape"]):
            asked *= int(n)
        return asked, have
    return float(g.get("asked") or g.get("asked2")), have


def _fewer(low: str) -> "re.Match | None":
    m = FEWER_GPUS.search(low)
    if m:
        return m
    for literal, rx in _COUNTS:
        for m in rx.finditer(low) if literal in low else ():
            asked, have = _asked_have(m)
            if have < asked:
                return m
    return None


def parse(c: Collector) -> bool:
    view = c.paste.sample(SAMPLE_HEAD, SAMPLE_TAIL)  # the same sample prose reads (kept by the paste), lower-cased
    low = view.text
    m = _fewer(low)
    if m:
        line = view.line_of(m.start())
        c.add("host", "symptom.gpus_missing", True, line, severity="problem",
              summary="the program says it sees fewer GPUs than it was asked to use or the machine holds")
        return True
    m = NO_DEVICE.search(low)
    if m:
        line = view.line_of(m.start())
        c.add("host", "symptom.no_cuda_device", True, line, severity="problem",
              summary="the program says it sees no GPU")
        return True
    return False
