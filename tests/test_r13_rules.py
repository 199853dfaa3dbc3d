"""Rules written after fresh15 was judged and opened (2026-11-28), each from its source, none for one paste.

1. A rank killed by SIGBUS is reported by its launcher as a negative return code, -7 (Python's subprocess returncode
   -N for signal N): torch.distributed.elastic prints "failed (exitcode: -7)", DeepSpeed's launcher
   (deepspeed/launcher/launch.py) "... exits with return code = -7". In a multi-GPU job that is NCCL's (or the data
   loader's) shared memory running out in a too small /dev/shm (NCCL's troubleshooting page; tmpfs raises SIGBUS on
   pages beyond its size): nccl/shm-sigbus-dev-shm-too-small. The launchers' names (torchrun, torch.distributed,
   deepspeed) are traces of a GPU job, so such a text is no longer answered "no trace of GPUs".
2. GPU sharing in containers that names its shares "vGPU" (HAMi and its libvgpu.so, Volcano's vGPU device plugin) is no
   hypervisor's vGPU: it does not make the text a VM's."""

from __future__ import annotations

import pytest

from p2ptop.commands.explain import explain

from .kbtools import bundled_kb

KB = bundled_kb()


@pytest.mark.parametrize("text", [
    "torch.distributed.elastic.multiprocessing.api:failed (exitcode: -7) local_rank: 1 (pid: 123) of binary: /usr/bin/python",
    "[INFO] [runner.py:555:main] cmd = python -u -m deepspeed.launcher.launch --world_info=abc main.py\n"
    "[ERROR] [launch.py:321:sigkill_handler] ['/usr/bin/python', '-u', 'main.py', '--local_rank=3'] exits with return code = -7",
    "subprocess.CalledProcessError: Command '['torchrun', '--nproc_per_node=4', 'train.py']' returned non-zero exit status 1.\n"
    "worker 2 returncode=-7",
])
def test_a_launcher_reporting_return_code_minus_7_is_sigbus_from_dev_shm(text):
    got = [(m.entry.id, m.confidence) for m, _ in explain(KB, text, [], 3)]
    assert got and got[0][0] == "nccl/shm-sigbus-dev-shm-too-small" and got[0][1] in ("likely", "possible"), got


@pytest.mark.parametrize("text", [
    "torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 77) of binary: /usr/bin/python",
    "exits with return code = -9",  # SIGKILL (the OOM killer), not a bus error
])
def test_other_return_codes_are_not_sigbus(text):
    offered = [m.entry.id for m, _ in explain(KB, text, [], 3) if m.confidence in ("likely", "possible")]
    assert "nccl/shm-sigbus-dev-shm-too-small" not in offered


def test_a_launcher_line_is_a_trace_of_a_gpu_job():
    from p2ptop.evidence import read_text

    assert read_text("torchrun --nproc_per_node=8 train.py failed after 3 hours").gpu_related
    assert read_text("deepspeed --num_gpus 2 main.py stops without any error").gpu_related
    assert not read_text("the postgres job exits with return code = 1").gpu_related


@pytest.mark.parametrize("text", [
    "Running in Kubernetes with HAMi: volumeMounts: - mountPath: /usr/local/vgpu/libvgpu.so; vLLM with tensor parallel 2 fails.",
    "Pods get volcano.sh/vgpu-number: 2 and volcano.sh/vgpu-memory: 20000; NCCL all_reduce hangs between the two vgpus.",
])
def test_gpu_sharing_in_containers_is_no_vgpu_vm(text):
    """2. GPU sharing in containers that calls its shares "vGPU" with no hypervisor (HAMi, formerly k8s-vGPU-scheduler,
    whose HAMi-core is the libvgpu.so preloaded into a pod; Volcano's vGPU device plugin) is no NVIDIA vGPU VM: the VM
    entries are not offered on it."""
    from .kbtools import host_facts

    facts = host_facts(text)
    assert facts.get("gpu.virtualization") != "VGPU" and facts.get("host.virtualized") is not True
    offered = [m.entry.failure_class for m, _ in explain(KB, text, [], 3) if m.confidence in ("likely", "possible")]
    assert "vm_p2p_unavailable" not in offered


def test_nvidia_vgpu_in_a_vm_is_still_read():
    from .kbtools import host_facts

    facts = host_facts("A100 vGPU profile A100-40C in a VMware guest: NCCL hangs, P2P not supported.")
    assert facts.get("host.virtualized") is True
