"""Rules of 2026-11-28 (second session), each from its own source, none for one paste.

1. CUDA sees no GPU at all, said in words or by the framework's own query: PyTorch's torch.cuda.is_available() False
   and device_count() 0 (torch/cuda/__init__.py: both are the visible device count, 0 when CUDA initialisation fails
   or nothing is visible), TensorFlow's "Num GPUs Available: 0", JAX's "No GPU/TPU found, falling back to CPU",
   "CUDA cannot find the GPU", GPU设备找不到: symptom.no_cuda_device, answered by cuda/no-device-visible and, where the
   GPUs sit on NVSwitch, by Fabric Manager not running (Fabric Manager user guide: CUDA initialisation fails with 802
   until the fabric is up, while nvidia-smi still lists the GPUs). Fewer GPUs than installed stays gpus_missing.
2. Models NVIDIA builds only into NVSwitch baseboards (HGX H20, HGX/DGX B200 and B300) mean an NVSwitch host.
3. NCCL's "unknown result code" (the default branch of ncclGetErrorString, src/init.cc) and PyTorch's "Unconvertible
   NCCL type" (torch/csrc/cuda/nccl.cpp): the caller and the NCCL library are of different versions.
4. An error line after an issue title's tag ("[QUESTION] OSError: ..."), nvidia-smi -L's "No devices found." after a
   launcher's prefix, and Slurm's one-GPU-per-task binding (--gpus-per-task=1, --gpu-bind=single:1)."""

from __future__ import annotations

import pytest

from p2ptop.commands.explain import explain

from .kbtools import bundled_kb, host_facts

KB = bundled_kb()


def answer(text: str, n: int = 3):
    return [(m.entry.id, m.entry.failure_class, m.confidence) for m, _ in explain(KB, text, [], n)]


@pytest.mark.parametrize("text", [
    "torch.cuda.is_available() returns False on this machine although nvidia-smi works.",
    "print(torch.cuda.is_available()) -> False",
    "torch.cuda.device_count() returns 0 inside the container",
    "Num GPUs Available:  0",
    "tf.config.list_physical_devices('GPU') returns an empty list",
    "No GPU/TPU found, falling back to CPU. (Set TF_CPP_MIN_LOG_LEVEL=0 and rerun for more info.)",
    "PyTorch cannot find the GPU after the driver update.",
    "Docker can't see any GPUs with --gpus all",
    "No CUDA devices were detected by the application.",
    "部署模型一直报错，提示GPU设备找不到",
    "容器里检测不到显卡",
    "torch.cuda.is_available()返回False",
])
def test_cuda_seeing_no_gpu_is_a_symptom(text):
    assert host_facts(text).get("symptom.no_cuda_device") is True


@pytest.mark.parametrize("text", [
    "torch.cuda.is_available() returns True and device_count() returns 2.",
    "I have 2x RTX 3090 but torch.cuda.device_count() returns 1",  # fewer than installed: gpus_missing
    "The second GPU is not detected by the driver after adding the riser.",
    "CUDA no longer fails to find the GPU after the reboot.",
    "The NVLink bridge is not detected.",
    "P2P between GPUs is not available on this board",  # the GPUs are not the subject
    "peer access between the two GPUs is not available",
    "NVLink between GPUs was not detected",
    "RDMA to the GPUs is not available",
    "when torch.cuda.is_available() returns False we fall back to the CPU",  # a condition
    "device = 'cuda' if torch.cuda.is_available() else 'cpu'",
])
def test_other_sentences_are_not_cuda_seeing_no_gpu(text):
    assert host_facts(text).get("symptom.no_cuda_device") is not True


def test_no_gpu_for_cuda_is_answered_by_the_visibility_entry():
    got = answer("torch.cuda.is_available() returns False on my RTX 3090 workstation, inside docker")
    assert got and got[0][0] == "cuda/no-device-visible" and got[0][2] in ("likely", "possible")


def test_on_an_nvswitch_host_fabric_manager_comes_first_and_visibility_stays():
    got = answer("HGX server with 8x NVIDIA H20: nvidia-smi lists all GPUs but torch.cuda.is_available() returns False.")
    ids = [i for i, _, _ in got]
    assert ids[0] == "fabric-manager/not-running-system-not-initialized" and got[0][2] in ("likely", "possible")
    assert "cuda/no-device-visible" in ids


def test_fabric_manager_is_not_offered_without_nvswitch():
    got = answer("torch.cuda.is_available() returns False on a workstation with two RTX 4090")
    assert all(c != "fabric_manager_not_running" for _, c, conf in got if conf in ("likely", "possible"))


@pytest.mark.parametrize("text,expected", [
    ("Our server has 8 H20 cards", True),
    ("HGX B200 node, 8 GPUs", True),
    ("GPU: NVIDIA H200 x2", None),  # H200 also comes as H200 NVL (PCIe): no NVSwitch from the name alone
    ("two L20 cards", None),
    ("8x H20 without NVSwitch (a PCIe test rig)", False),
])
def test_nvswitch_only_models_mean_an_nvswitch_host(text, expected):
    assert host_facts(text).get("host.nvswitch_present") is expected


def test_nvidia_smi_naming_an_h20_means_an_nvswitch_host():
    smi = """| NVIDIA-SMI 535.274.02             Driver Version: 535.274.02   CUDA Version: 12.2     |
|-----------------------------------------+----------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |
|                                         |                      |               MIG M. |
|=========================================+======================+======================|
|   0  NVIDIA H20                     Off | 00000000:18:00.0 Off |                    0 |
| N/A   26C    P0              75W / 500W |      0MiB / 97871MiB |      0%      Default |
|                                         |                      |             Disabled |
+-----------------------------------------+----------------------+----------------------+"""
    assert host_facts(smi).get("host.nvswitch_present") is True


@pytest.mark.parametrize("text", [
    "Failed, NCCL error /work/plugins/ncclPlugin/allreducePlugin.cpp:183 'unknown result code'",
    "RuntimeError: NCCL error in: /opt/src/comm.cpp:88, unknown result code",
    "RuntimeError: Unconvertible NCCL type",
])
def test_unknown_result_code_is_nccl_version_skew(text):
    got = answer(text)
    assert got and got[0][0] == "nccl/unknown-result-code-version-skew" and got[0][2] in ("likely", "possible")


def test_unknown_result_code_of_another_library_is_not_nccl():
    got = answer("tnfs: Unknown result code while mounting the share on the GPU box")
    assert "nccl/unknown-result-code-version-skew" not in [i for i, _, _ in got]


def test_an_error_line_after_an_issue_title_tag_is_the_error():
    assert str(host_facts("[QUESTION] OSError: [Errno 28] No space left on device").get("error.text", "")).startswith("[QUESTION] OSError")


@pytest.mark.parametrize("line", ["No devices were found", "No devices found.", "PROC_ID=0 No devices found."])
def test_nvidia_smi_finding_no_device_is_answered(line):
    got = answer(line)
    assert got and got[0][0] == "cuda/no-device-visible"


def test_one_task_seeing_no_device_is_not_a_host_without_gpus():
    text = ("PROC_ID=0 No devices found.\n"
            "PROC_ID=1 GPU 0: NVIDIA RTX A5000 (UUID: GPU-43f1fb2e-11d8-30c4-1b4a-70bd77fc7e54)")
    assert host_facts(text).get("host.gpu_count") != 0


@pytest.mark.parametrize("text", [
    "srun -n 2 -c 18 --gpus-per-task 1 python3 bench.py",
    "sbatch --gpus-per-task=1 --ntasks=8 job.sh",
    "srun --gpu-bind=single:1 python train.py",
])
def test_one_gpu_per_task_is_one_gpu_per_process(text):
    assert host_facts(text).get("host.one_gpu_per_process") is True


@pytest.mark.parametrize("text", [
    "srun --gpus-per-task=4 python train.py",
    "one GPU per rank, 8 ranks on the node",  # DDP's usual setup: each rank uses one GPU but sees them all
])
def test_more_gpus_per_task_or_one_gpu_used_per_rank_is_not_one_gpu_per_process(text):
    assert host_facts(text).get("host.one_gpu_per_process") is not True
