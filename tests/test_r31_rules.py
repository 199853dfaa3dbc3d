"""Rules of the eleventh session (2026-11-29, second), each written from a tool's or library's own source, never from one
case: DCGM's PCIe counters over their threshold (nvvs/src/DcgmRecorder.cpp with dcgmlib/dcgm_errors.h:
DCGM_FR_PCIE_REPLAY_THRESHOLD_VIOLATION / DCGM_FR_FIELD_THRESHOLD "Detected %ld %s for GPU %u which is above the threshold
%ld" and DCGM_FR_PCIE_REPLAY_VIOLATION "Detected %ld %s for GPU %u", the field tags from dcgmlib/src/dcgm_fields.cpp).
(NCCL's topology print has its own file, tests/test_nccl_topology_print.py.)
"""

from __future__ import annotations

from .kbtools import answer, explained
from .kbtools import text_facts as _facts


def _top(text, n=3):
    return [c for c, _ in explained(text)[:n]]


# ---- 1. DCGM's PCIe counters over their threshold --------------------------------------------------------------------

def _diag(rows):
    head = ("+---------------------------+------------------------------------------------+\n"
            "| Diagnostic                | Result                                         |\n"
            "+===========================+================================================+\n"
            "+-----  Integration  -------+------------------------------------------------+\n"
            "| pcie                      | Fail                                           |\n")
    return head + "".join(f"| {l:<25} | {r:<46} |\n" for l, r in rows) + \
        "+---------------------------+------------------------------------------------+\n"


def test_dcgm_pcie_replays_over_threshold_even_when_the_table_wraps_the_message():
    text = _diag([("", "GPU0: Fail"), ("Warning: GPU0", "Detected 97 pcie_replay_counter for GPU 0 wh"),
                  ("", "ich is above the threshold 80 Run a field dia"), ("", "gnostic on the GPU.")])
    assert _facts(text)["gpu:0"]["gpu.pcie_link_errors"] == 97
    assert _top(text, 1) == ["pcie_link_degraded"]


def test_dcgm_correctable_errors_and_the_plain_violation_message():
    one = "Detected 27 pcie_count_correctable_errors for GPU 2 which is above the threshold 0"
    assert _facts("dcgmi diag -r 2\n" + one)["gpu:2"]["gpu.pcie_link_errors"] == 27
    plain = "dcgmi diag -r 3\nError: Detected 12 pcie_replay_counter for GPU 1"
    assert _facts(plain)["gpu:1"]["gpu.pcie_link_errors"] == 12
    assert "pcie_link_degraded" in _top(plain)


def test_no_pcie_errors_from_zero_counts_other_fields_or_nvlink_counters():
    zero = "dcgmi diag -r 2\nDetected 0 pcie_replay_counter for GPU 0 which is above the threshold 0"
    assert "gpu.pcie_link_errors" not in _facts(zero).get("gpu:0", {})
    nvl = "dcgmi diag -r 2\nDetected 400 nvlink_crc_flit_error_count_total for GPU 0 which is above the threshold 100"
    assert "gpu.pcie_link_errors" not in _facts(nvl).get("gpu:0", {})
    tput = "dcgmi dmon\nDetected 400 pcie_tx_throughput for GPU 0 which is above the threshold 100"
    assert "gpu.pcie_link_errors" not in _facts(tput).get("gpu:0", {})
    # a healthy diag offers no failure entry
    ok = _diag([("", "GPU0: Pass"), ("", "GPU1: Pass")]).replace("| Fail ", "| Pass ")
    assert not [a for a in answer(ok) if a[1] in ("likely", "possible") and not a[2]]


# ---- 2. dcgmi nvlink -e: the per-link counters summed per GPU ------------------------------------------------------

def _nvlink_e(gpu, counts):
    rows = ["+-----------------------------+------------------------------------------------+",
            "| NVLINK Error Counts                                                          |",
            f"| GPU {gpu:<73}|",
            "+=============================+================================================+"]
    for link, (flit, data, replay, recovery) in enumerate(counts):
        rows.append(f"| Link {link:<23}|                                                |")
        for name, n in (("CRC FLIT Error", flit), ("CRC Data Error", data), ("Replay Error", replay), ("Recovery Error", recovery)):
            rows.append(f"| -> {name:<25}| {n:<47}|")
    rows.append("+-----------------------------+------------------------------------------------+")
    return "$ dcgmi nvlink -e -g %d\n" % gpu + "\n".join(rows) + "\n"


def test_dcgmi_nvlink_e_replays_and_recoveries_are_link_faults():
    text = _nvlink_e(2, [(0, 0, 0, 0), (812, 40, 37, 2), (0, 0, 0, 0)])
    f = _facts(text)["gpu:2"]
    assert f["gpu.nvlink_replay_recovery"] == 39 and f["gpu.nvlink_errors"] == 891
    assert _top(text, 1) == ["nvlink_link_failure"]


def test_dcgmi_nvlink_e_crc_only_or_all_zero_is_no_link_fault():
    crc = _facts(_nvlink_e(0, [(5, 1, 0, 0), (0, 0, 0, 0)]))["gpu:0"]
    assert crc["gpu.nvlink_replay_recovery"] == 0 and crc["gpu.nvlink_errors"] == 6
    zero = _nvlink_e(1, [(0, 0, 0, 0)] * 4)
    assert _facts(zero)["gpu:1"]["gpu.nvlink_replay_recovery"] == 0
    assert not [a for a in answer(zero) if a[1] in ("likely", "possible") and not a[2]]


# ---- 3. (after opening fresh30) Caffe2's failed operator reading another GPU's blob -----------------------------------
# Caffe2's core/operator.h prints "Error from operator: " and the op's definition; data_parallel_model puts each GPU's blobs
# under NameScope("gpu_N"); caffe2.proto's device_type 1 is CUDA; core/context_gpu.cu enables peer access at start-up for
# every pair cudaDeviceCanAccessPeer allows. A kernel fault on a cross-device read there is a pair without peer access.

def _c2(fault, inputs=("gpu_2/fc_w_grad", "gpu_3/fc_w_grad"), gpu=2, device_type=1):
    ins = " ".join(f'input: "{i}"' for i in inputs)
    return (f"E0301 11:02:03.000001  9120 context_gpu.h:126] Encountered CUDA error: {fault}\n"
            f"F0301 11:02:03.000002  9120 operator.h:200] Computation on device returned error in operator\n"
            f'{ins} output: "{inputs[0]}" name: "" type: "Sum" device_option {{ device_type: {device_type} cuda_gpu_id: {gpu} }}\n')


def test_caffe2_cross_device_operator_with_a_kernel_fault_is_a_pair_without_peer_access():
    for fault in ("an illegal memory access was encountered", "unspecified launch failure"):
        f = _facts(_c2(fault))["host"]
        assert f["code.cross_device_read"] is True and f["code.devices_selected"] == 2
        assert f["symptom.illegal_address_across_devices"] is True
        top = _top(_c2(fault))
        assert top[0] == "p2p_unsupported_topology" and "peer_access_not_enabled" in top


def test_caffe2_same_device_cpu_or_no_fault_is_no_such_symptom():
    same = _facts(_c2("an illegal memory access was encountered", inputs=("gpu_2/a", "gpu_2/b")))["host"]
    assert "code.cross_device_read" not in same and "symptom.illegal_address_across_devices" not in same
    cpu = _facts(_c2("an illegal memory access was encountered", device_type=0))["host"]
    assert "code.cross_device_read" not in cpu
    other = _facts(_c2("out of memory"))["host"]
    assert other["code.cross_device_read"] is True and "symptom.illegal_address_across_devices" not in other


def test_a_plain_two_gpu_program_with_an_illegal_address_keeps_both_causes():
    text = ("x = torch.ones(4, device='cuda:0')\ny = x.to('cuda:1')\n"
            "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    top = _top(text)
    assert top[0] == "peer_access_not_enabled" and "p2p_unsupported_topology" in top


# ---- 4. (after opening fresh30) a scaling efficiency reported short is slowness ---------------------------------------

def test_scaling_efficiency_short_is_slow_and_a_good_one_is_not():
    for t in ("Scaling efficiency only 73% on 16 GPUs", "we get a scaling efficiency of 55% with 8 GPUs",
              "the scaling efficiency is poor", "low scaling efficiency on two nodes", "8卡扩展效率只有60%"):
        assert _facts(t)["host"].get("symptom.slow") is True, t
    for t in ("scaling efficiency of 95% on 8 GPUs", "scaling efficiency is 92%", "we measure scaling efficiency"):
        assert "symptom.slow" not in _facts(t).get("host", {}), t


# ---- 5. round 62 (HPC applications): their own no-driver and bad-ordinal lines ---------------------------------------

def test_gromacs_no_cuda_driver_and_quda_bad_ordinal():
    gmx = ("Detection of GPUs failed. The API reported:\nNo valid CUDA driver found\n\n"
           "Running on 1 node with total 32 cores, 64 processing units (GPU detection failed: No valid CUDA driver found)\n")
    assert _facts(gmx)["host"].get("symptom.no_cuda_device") is True
    assert _top(gmx, 1) == ["device_not_visible"]
    quda = "ERROR: Cannot blacklist invalid GPU device ordinal 2 (rank 0, host node01, communicator_quda.h:487 in comm_gdr_blacklist())\n"
    assert "device_not_visible" in _top(quda)


# ---- 6. round 61 (older frameworks): their own peer-refusal, fewer-GPU and driver lines --------------------------------

def test_cutorch_and_convnet2_peer_refusals_are_the_pairs_p2p_status():
    cut = "/home/u/torch/install/bin/luajit: p2p access not supported for 0 accessing 2 at /tmp/cutorch/lib/THC/THCGeneral.c:261\n"
    assert _facts(cut)["pair:0-2"]["p2p.read"] == "NOT_SUPPORTED"
    conv = "Enabling peer access GPU 0 --> GPU 1\nNo peer access GPU 0 -->  GPU 3\n"
    assert _facts(conv)["pair:0-3"]["p2p.read"] == "NOT_SUPPORTED"
    assert "pair:0-1" not in _facts(conv)


def test_caffe2_and_cutorch_fewer_gpus_no_device_and_old_driver():
    assert "device_not_visible" in _top("WARNING:data_parallel_model:** Only 2 GPUs available, GPUs [0, 1, 2, 3] requested\n")
    assert "device_not_visible" in _top("luajit: 4 is not a device at /tmp/cutorch/lib/THC/THCGeneral.c:220\n")
    zero = ("E1129 10:12:03.551270  2310 common_gpu.cc:55] Found an unknown error - this may be due to an incorrectly set up "
            "environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. I will set the available "
            "devices to be zero.\n")
    assert _top(zero, 1) == ["device_not_visible"]
    old = "W1129 10:05:12.880170  2201 common_gpu.cc:46] Insufficient cuda driver. Cannot use cuda.\n"
    assert _top(old, 1) == ["driver_too_old_for_cuda"]
    # the words alone, elsewhere, are no such fact
    assert "symptom.gpus_missing" not in _facts("the number 4 is not a device id we use").get("host", {})


# ---- 7. round 60 (NCCL's topology print): a pair NCCL keeps off P2P because its path crosses the CPU ------------------
# graph/paths.cc ncclTopoCheckP2p: NCCL's default P2P level is PXB on Intel x86 (PATH_SYS elsewhere); a pair further apart
# goes via SHM without any setting. That is NCCL's choice for a path through the CPU, the through-CPU entry's subject.

Q = "srv:10:10 [0] NCCL INFO "


def _sys_log(via="SHM/direct/direct", extra=""):
    return "\n".join([
        Q + "NCCL version 2.21.5+cuda12.4", extra,
        Q + "comm 0x1 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 3b000 commId 0x7 - Init START",
        Q + "GPU/0-3b000 :GPU/0-3b000 (0/5000.0/LOC) GPU/0-86000 (3/10.0/SYS) CPU/0-0 (1/24.0/PHB) ",
        Q + "+ PCI[24.0] - GPU/0-86000 (1)",
        Q + f"Channel 00/0 : 0[0] -> 1[1] via {via}",
        "srv:10:11 [1] NCCL INFO " + f"Channel 00/0 : 1[1] -> 0[0] via {via}",
    ])


def test_a_pair_across_sockets_via_shm_with_no_setting_is_nccls_default_through_the_cpu():
    f = _facts(_sys_log())["pair:0-1"]
    assert f["pair.path"] == "SYS" and f["nccl.p2p_off_by_path"] is True
    assert "p2p_through_cpu_slow" in _top(_sys_log())
    # not where a setting decides, nor where NCCL went via P2P
    set_ = _facts(_sys_log(extra=Q + "NCCL_P2P_DISABLE set by environment to 1"))["pair:0-1"]
    assert "nccl.p2p_off_by_path" not in set_
    assert "nccl.p2p_off_by_path" not in _facts(_sys_log(via="P2P/CUMEM/read"))["pair:0-1"]
    assert not [a for a in answer(_sys_log(via="P2P/CUMEM/read")) if a[1] in ("likely", "possible") and not a[2]]


def test_a_rank_without_its_rank_line_is_the_gpu_of_its_number_on_one_host():
    # rank 1's own rank line is not in the paste and the brackets hold bus ids (NCCL before 2.19), which nothing else names;
    # rank 0 is on GPU 0: rank 1 is taken as GPU 1
    old = _sys_log().replace("0[0] -> 1[1]", "0[3b000] -> 1[86000]").replace("1[1] -> 0[0]", "1[86000] -> 0[3b000]")
    assert "pair:0-1" in _facts(old)
    # a rank 0 on GPU 3 breaks the default: nothing is guessed
    other = old.replace("cudaDev 0 nvmlDev 0", "cudaDev 3 nvmlDev 3")
    assert "pair:0-1" not in _facts(other) and "pair:1-3" not in _facts(other)


def test_nccl_topology_xml_gpus_under_different_cpus_are_a_sys_pair():
    xml = ('<system version="1">\n'
           '  <cpu host_hash="0x1" numaid="0" arch="x86_64" vendor="GenuineIntel">\n'
           '    <pci busid="0000:17:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16">\n'
           '      <gpu dev="0" sm="80" rank="0" gdr="1"/>\n    </pci>\n  </cpu>\n'
           '  <cpu host_hash="0x1" numaid="1" arch="x86_64" vendor="GenuineIntel">\n'
           '    <pci busid="0000:ca:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16">\n'
           '      <gpu dev="1" sm="80" rank="1" gdr="1"/>\n    </pci>\n  </cpu>\n</system>\n')
    f = _facts(xml)["pair:0-1"]
    assert f["pair.path"] == "SYS" and f["pair.cross_socket"] is True
    two_hosts = xml.replace('host_hash="0x1" numaid="1"', 'host_hash="0x2" numaid="1"')
    assert "pair:0-1" not in _facts(two_hosts)
    one_cpu = xml.replace('numaid="1"', 'numaid="0"')
    assert "pair:0-1" not in _facts(one_cpu)


# ---- 8. PyTorch's and vLLM's environment report (collect_env) ---------------------------------------------------------
# torch/utils/collect_env.py and vllm/collect_env.py: "Is CUDA available: {str(torch.cuda.is_available())}", "CUDA used
# to build PyTorch: {torch.version.cuda}" ('None' for CPU builds), "Nvidia driver version: ..."; CUDA's compatibility guide:
# 11.x needs a driver >= 450.80.02, 12.x >= 525.60.13, 13.x >= 580.65.06.

TORCH_ENV = ("PyTorch version: 2.1.0+cu121\nIs debug build: False\nCUDA used to build PyTorch: {build}\n"
             "Is CUDA available: {avail}\nCUDA runtime version: 12.1.105\n"
             "GPU models and configuration: GPU 0: NVIDIA A100-SXM4-80GB\nNvidia driver version: {driver}\n")
VLLM_ENV = ("==============================\n       PyTorch Info\n==============================\n"
            "PyTorch version              : 2.7.0+cu128\nCUDA used to build PyTorch   : {build}\n\n"
            "==============================\n       CUDA / GPU Info\n==============================\n"
            "Is CUDA available            : {avail}\nCUDA runtime version         : 12.8.93\n"
            "GPU models and configuration : \nGPU 0: NVIDIA H100 80GB HBM3\nGPU 1: NVIDIA H100 80GB HBM3\n\n"
            "Nvidia driver version        : {driver}\n")


def test_collect_env_cuda_not_available_on_an_old_driver_is_the_driver():
    for fmt, build, driver in ((TORCH_ENV, "12.1", "470.82.01"), (VLLM_ENV, "12.8", "520.61.05"), (TORCH_ENV, "11.8", "440.33.01")):
        text = fmt.format(build=build, avail="False", driver=driver)
        f = _facts(text)["host"]
        assert f["symptom.no_cuda_device"] is True and f["host.driver_below_cuda_build"] is True, (build, driver)
        assert _top(text, 1) == ["driver_too_old_for_cuda"]


def test_collect_env_new_enough_driver_cpu_build_or_cuda_available_is_no_driver_fault():
    ok = _facts(TORCH_ENV.format(build="12.1", avail="False", driver="535.104.05"))["host"]
    assert ok["symptom.no_cuda_device"] is True and "host.driver_below_cuda_build" not in ok
    cpu = _facts(TORCH_ENV.format(build="None", avail="False", driver="535.104.05"))["host"]
    assert cpu["code.torch_cuda_build"] == "none" and "symptom.no_cuda_device" not in cpu
    # forward compatibility: a newer CUDA available on an older data-centre driver is no fault
    fwd = _facts(VLLM_ENV.format(build="12.8", avail="True", driver="470.256.02"))["host"]
    assert "host.driver_below_cuda_build" not in fwd and "symptom.no_cuda_device" not in fwd
    healthy = VLLM_ENV.format(build="12.8", avail="True", driver="570.133.20")
    assert not [a for a in answer(healthy) if a[1] in ("likely", "possible") and not a[2]]


# ---- 9. a Python console's answers about the GPUs (evidence/console.py) -----------------------------------------------

def test_console_answers_no_gpu_in_each_prompt_form():
    for t in (">>> import torch\n>>> torch.cuda.is_available()\nFalse\n", "In [2]: torch.cuda.is_available()\nOut[2]: False\n",
              "$ python -c 'import torch; print(torch.cuda.is_available())'\nFalse\n", ">>> torch.cuda.device_count()\n0\n",
              ">>> tf.config.list_physical_devices('GPU')\n[]\n", ">>> cupy.cuda.runtime.getDeviceCount()\n0\n",
              "In [3]: jax.devices()\nOut[3]: [CpuDevice(id=0)]\n"):
        assert _facts(t)["host"].get("symptom.no_cuda_device") is True, t
        assert _top(t, 1) == ["device_not_visible"], t


def test_console_peer_query_is_the_pairs_p2p_status():
    no = ">>> torch.cuda.can_device_access_peer(0, 1)\nFalse\n"
    assert _facts(no)["pair:0-1"]["p2p.read"] == "NOT_SUPPORTED"
    assert {"p2p_unsupported_consumer_gpu", "p2p_unsupported_topology", "vm_p2p_unavailable"} <= set(_top(no))
    yes = ">>> cupy.cuda.runtime.deviceCanAccessPeer(1, 0)\n1\n"
    assert _facts(yes)["pair:0-1"]["p2p.read"] == "OK"


def test_console_answers_that_see_gpus_or_are_not_answers_say_nothing():
    for t in (">>> torch.cuda.is_available()\nTrue\n", ">>> torch.cuda.device_count()\n2\n",
              ">>> jax.devices()\n[CudaDevice(id=0), CudaDevice(id=1)]\n", ">>> torch.cuda.is_available()\n>>> x = 0\n",
              "if torch.cuda.is_available():\n    model.cuda()\n", ">>> tf.config.list_physical_devices('CPU')\n[]\n",
              ">>> print(torch.cuda.is_available(), torch.cuda.device_count())\nFalse 0\n",
              ">>> torch.cuda.can_device_access_peer(1, 1)\nFalse\n"):
        f = _facts(t)
        assert "symptom.no_cuda_device" not in f.get("host", {}) and not any("p2p.read" in d for d in f.values()), t


# ---- 10. the driver's own proc file and the device nodes ---------------------------------------------------------------
# open-gpu-kernel-modules kernel-open/nvidia/nv-procfs.c: "NVRM version: %s" (the module's id string, as its load banner);
# coreutils' ls: "ls: cannot access '%s': No such file or directory"

def test_proc_driver_version_and_missing_device_nodes():
    proc = ("$ cat /proc/driver/nvidia/version\n"
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.133.20  Release Build  (dvs-builder@U16-I3-B03-4-3)\n")
    assert _facts(proc)["host"]["host.driver_version"] == "570.133.20"
    nodes = "$ ls /dev/nvidia*\nls: cannot access '/dev/nvidia*': No such file or directory\n"
    assert _facts(nodes)["host"]["symptom.no_cuda_device"] is True
    assert _top(nodes, 1) == ["device_not_visible"]
    assert "symptom.no_cuda_device" not in _facts("ls: cannot access '/data/ckpt': No such file or directory\n").get("host", {})


# ---- 11. sysfs's PCI link attributes (drivers/pci/pci-sysfs.c) ----------------------------------------------------------

NV_LINE = "41:00.0 VGA compatible controller: NVIDIA Corporation GA102 [GeForce RTX 3090] (rev a1)\n"


def test_sysfs_link_width_below_max_is_a_degraded_link_and_gen_below_max_idle():
    cat = NV_LINE + ("$ cat /sys/bus/pci/devices/0000:41:00.0/current_link_width\n4\n"
                     "$ cat /sys/bus/pci/devices/0000:41:00.0/max_link_width\n16\n")
    f = _facts(cat)["gpu:0"]
    assert (f["gpu.pcie_width_cur"], f["gpu.pcie_width_max"]) == (4, 16) and f["gpu.pcie_degraded_under_load"] is True
    grep = NV_LINE + ("/sys/bus/pci/devices/0000:41:00.0/current_link_speed:2.5 GT/s PCIe\n"
                      "/sys/bus/pci/devices/0000:41:00.0/current_link_width:16\n"
                      "/sys/bus/pci/devices/0000:41:00.0/max_link_speed:16.0 GT/s PCIe\n"
                      "/sys/bus/pci/devices/0000:41:00.0/max_link_width:16\n")
    g = _facts(grep)["gpu:0"]
    assert (g["gpu.pcie_gen_cur"], g["gpu.pcie_gen_max"]) == (1, 4) and g.get("gpu.pcie_idle_downclock") is True


def test_sysfs_links_of_devices_not_shown_as_nvidia_are_not_read():
    nic = ("01:00.0 Ethernet controller: Mellanox Technologies MT28908 Family [ConnectX-6]\n"
           "$ cat /sys/bus/pci/devices/0000:01:00.0/current_link_width\n8\n")
    assert not any(k.startswith("gpu.pcie") for d in _facts(nic).values() for k in d)
    bare = "$ cat /sys/bus/pci/devices/0000:81:00.0/current_link_width\n4\n"
    assert not any(k.startswith("gpu.pcie") for d in _facts(bare).values() for k in d)


# ---- 12. the NCCL version as the package managers and PyTorch print it ------------------------------------------------

def test_nccl_version_from_pip_dpkg_rpm_and_torch():
    for t, v in (("$ pip list | grep nccl\nnvidia-nccl-cu12          2.20.5\n", "2.20.5"),
                 ("ii  libnccl2       2.18.3-1+cuda12.2   amd64   NVIDIA Collective Communication Library (NCCL) Runtime\n", "2.18.3"),
                 ("$ rpm -qa | grep nccl\nlibnccl-2.21.5-1+cuda12.4.x86_64\n", "2.21.5"),
                 ("$ python -c 'import torch; print(torch.cuda.nccl.version())'\n(2, 19, 3)\n", "2.19.3")):
        assert _facts(t)["host"]["nccl.version"] == v, t
    assert "nccl.version" not in _facts("\tlibnccl.so.2 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnccl.so.2\n").get("host", {})


# ---- 13. Hugging Face's env reports (accelerate/commands/env.py; transformers' env command the same way) --------------

def test_hugging_face_env_reports_cuda_not_available_on_a_cuda_build():
    old = "- `Accelerate` version: 0.25.0\n- Python version: 3.10.12\n- PyTorch version (GPU?): 2.1.0+cu121 (False)\n"
    new = "- `Accelerate` version: 1.7.0\n- PyTorch version: 2.7.0+cu126\n- PyTorch accelerator: N/A\n"
    for t in (old, new):
        assert _facts(t)["host"]["symptom.no_cuda_device"] is True
        assert _top(t, 1) == ["device_not_visible"]
    for t in ("- PyTorch version (GPU?): 2.1.2+cpu (False)\n", "- PyTorch version (GPU?): 2.1.0+cu121 (True)\n",
              "- PyTorch version: 2.7.0+cu126\n- PyTorch accelerator: CUDA\n- GPU type: NVIDIA A100-SXM4-80GB\n",
              "- PyTorch version: 2.7.0+cpu\n- PyTorch accelerator: N/A\n"):
        assert "symptom.no_cuda_device" not in _facts(t).get("host", {}), t


def test_sglang_check_env_cuda_not_available():
    t = "Python: 3.10.14\nCUDA available: False\nPyTorch: 2.4.0+cu121\nsglang: 0.4.6\n"
    assert _facts(t)["host"]["symptom.no_cuda_device"] is True
    cpu = "Python: 3.10.14\nCUDA available: False\nPyTorch: 2.4.0+cpu\n"
    assert "symptom.no_cuda_device" not in _facts(cpu)["host"]
    ok = "CUDA available: True\nGPU 0,1: NVIDIA A100-SXM4-80GB\nPyTorch: 2.4.0+cu121\n"
    assert "symptom.no_cuda_device" not in _facts(ok)["host"]
