"""Round 8's rules.

1. Shared memory said to have run out (``symptom.shm_exhausted``): NCCL's SHM transport keeps its segments and proxy
   buffers as files in /dev/shm (NCCL src/misc/shmutils.cc, ncclShmOpen: "Error while creating shared memory
   segment"; NCCL troubleshooting, "Sharing data": Docker's default 64 MB /dev/shm is too small,
   https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/troubleshooting.html#sharing-data).
2. A /dev/shm size written before its words ("64MB共享内存", "only 64 MB of shared memory") and a Chinese shm
   resolution that sets or mounts the shared memory ("设定共享内存", "挂载共享内存").
3. Such a shm fact is a trace of GPU communication: a text pasted into explain that says only that /dev/shm ran out or
   had to grow (a pod's or container's default) is not "no trace of GPUs" (findings.SHM_TRANSPORT_FACTS).

Positive lines are from the public threads named beside them; negatives must not fire."""

from __future__ import annotations

import pytest

from p2ptop.commands.explain import explain
from p2ptop.evidence import read_text

from .kbtools import bundled_kb, host_facts

KB = bundled_kb()


@pytest.mark.parametrize("text, source", [
    ('running error with "Bus error: nonexistent physical address"\n\nI find the main error is that it runs out of shared '
     "memory quickly at `/dev/shm`, not sure if the multiprocessing shows some inefficiency on this",
     "https://github.com/huggingface/transformers-bloom-inference/issues/16"),
    ("NCCL WARN Error while creating shared memory segment /dev/shm/nccl-abc (size 9637888): /dev/shm is full",
     "NCCL src/misc/shmutils.cc message; Docker's 64 MB /dev/shm"),
    ("训练时报错，共享内存不足", "the Chinese wording: shared memory not enough"),
    ("The job ran out of shm after a few steps", "a short wording"),
])
def test_shm_exhausted_read(text, source):
    assert host_facts(text).get("symptom.shm_exhausted") is True, source


@pytest.mark.parametrize("text", [
    "We do not run out of shared memory: /dev/shm is 32G.",
    "no shared memory full errors were seen",
    "The disk is full and the job stopped.",
    "GPU memory is full (CUDA out of memory).",
    "NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct",
])
def test_shm_exhausted_not_read(text):
    assert host_facts(text).get("symptom.shm_exhausted") is None, text


@pytest.mark.parametrize("text, mb", [
    # https://github.com/xorbitsai/inference/issues/1622 (the Chinese wording: the size before the words)
    ("我使用helm chart部署在k8s集群上，Pod默认只允许最多使用64MB共享内存，所以临时解决方案是用emptyDir直接设定共享内存给worker Pod", 64),
    ("the container only has 64 MB of shared memory", 64),
    ("a 2g /dev/shm is enough here", 2048),
    ("/dev/shm is only 64M in the container", 64),  # the order read before this round still holds
])
def test_shm_size_either_order(text, mb):
    assert host_facts(text).get("host.shm_mb") == mb


@pytest.mark.parametrize("text", [
    "The GPU has 64 MB of L2 cache and shared memory of 228 KB per SM.",  # no number directly before the words
    "NCCL_BUFFSIZE=4194304 with 8 channels",
])
def test_shm_size_not_read(text):
    assert host_facts(text).get("host.shm_mb") is None


def test_chinese_shm_set_as_fix():
    # https://github.com/xorbitsai/inference/issues/1622: "the temporary solution was to set the shared memory with an emptyDir"
    text = "我使用helm chart部署在k8s集群上，Pod默认只允许最多使用64MB共享内存，所以临时解决方案是用emptyDir直接设定共享内存给worker Pod"
    assert host_facts(text).get("symptom.fixed_by_shm_increase") is True
    assert host_facts("我们设置了共享内存，但是还是不行").get("symptom.fixed_by_shm_increase") is None


@pytest.mark.parametrize("text, source", [
    ("I had difficulty launching this stack successfully out of the box, and had to manually increase the Docker "
     "`/dev/shm` with an additional volumeMount as:", "https://github.com/vllm-project/production-stack/issues/44"),
    ("我使用helm chart部署在k8s集群上，Pod默认只允许最多使用64MB共享内存，所以临时解决方案是用emptyDir直接设定共享内存给worker Pod",
     "https://github.com/xorbitsai/inference/issues/1622"),
    ('running error with "Bus error: nonexistent physical address"\n\nI find the main error is that it runs out of shared '
     "memory quickly at `/dev/shm`, not sure if the multiprocessing shows some inefficiency on this",
     "https://github.com/huggingface/transformers-bloom-inference/issues/16"),
])
def test_shm_text_without_gpu_word_is_answered(text, source):
    ev = read_text(text)
    assert ev.gpu_related, source
    classes = [m.entry.failure_class for m, _ in explain(KB, text, [], None)]
    assert classes[:1] == ["shm_exhausted"], (source, classes)


@pytest.mark.parametrize("text", [
    "The build is stuck at 99 % and the disk is full.",
    "Our Postgres container crashed; we will look at the logs tomorrow.",
])
def test_no_gpu_no_shm_still_silent(text):
    assert not read_text(text).gpu_related
    assert explain(KB, text, [], None) == []


# --- after fresh8 was measured (its cases opened): MXNet's own P2P warning, a run said to stop -------------------------

MXNET_WARNING = ("src/kvstore/././comm.h:290: only 0 out of 12 GPU pairs are enabled direct access. It may affect the "
                 "perofmrance. You can set MXNET_ENABLE_GPU_P2P=0 to turn it off")  # apache/mxnet#3823, as pasted


def test_mxnet_p2p_warning_reads_as_peer_access_refused_on_the_pairs_it_counts():
    """MXNet's kvstore (src/kvstore/comm.h, EnableP2P) counts the ordered pairs where cudaDeviceEnablePeerAccess
    succeeded and warns "only E out of N GPU pairs are enabled direct access" when E < N."""
    from tests.kbtools import answer, host_facts

    assert host_facts(MXNET_WARNING)["p2p.read"] == "NOT_SUPPORTED"
    assert host_facts("[12:01:02] only 4 out of 12 GPU pairs are enabled direct access. \nIt may affect the performance.")["p2p.read"] == "NOT_SUPPORTED"
    assert "p2p.read" not in host_facts("only 12 out of 12 GPU pairs are enabled direct access")  # all enabled: no refusal
    assert answer(MXNET_WARNING)  # never silent: peer access refused on some pairs


def test_a_run_said_to_stop_randomly_is_a_hang_and_a_planned_stop_is_not():
    from tests.kbtools import host_facts

    assert host_facts("Training on 2 GPU's work fine - On 3 GPU's training stops randomly")["symptom.hang"] is True  # AlexeyAB/darknet#2807
    assert host_facts("with NCCL the job suddenly stopped after 300 steps on 8 GPUs")["symptom.hang"] is True
    for calm in ("The training stops at epoch 10 as configured on 4 GPUs",
                 "training stopped early by the early stopping callback on 2 GPUs",
                 "the process stops when the queue is empty"):
        assert "symptom.hang" not in host_facts(calm), calm
