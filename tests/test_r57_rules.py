"""Rules of the twenty-fourth session: builds without NCCL (or without its rendezvous) in the frameworks' own words, and a
setting said to restore what failed is a workaround, not a setting of the failing run."""

import pytest

from p2ptop.commands.explain import explain
from p2ptop.evidence.read import read_text
from p2ptop.knowledge import load_kb


@pytest.fixture(scope="module")
def kb():
    return load_kb()


@pytest.mark.parametrize("text", [
    # torch/distributed/rendezvous.py: "No rendezvous handler for {}://"; PyTorch 1.7 on Windows registered only file://
    "RuntimeError: No rendezvous handler for env://",
    "raise RuntimeError(\"No rendezvous handler for {}://\".format(result.scheme))\nRuntimeError: No rendezvous handler for tcp://",
    # NVIDIA Caffe 0.15 parallel.cpp, BVLC Caffe tools/caffe.cpp, NVIDIA Caffe 0.16+ parallel.cpp
    'parallel.cpp:160] USE_NCCL := 1 must be specified for multi-GPU',
    "F0101 22:55:26.495918  8615 caffe.cpp:254] Multi-GPU execution not available - rebuild with USE_NCCL",
    "F0612 10:01:02.000000 123 parallel.cpp:88] USE_NCCL must be specified for multi-GPU mode",
    # MXNet src/kvstore/kvstore.cc for kvstore='nccl'
    "MXNetError: [10:12:01] src/kvstore/kvstore.cc:63: compile with USE_NCCL=1 to use nccl",
    # XGBoost's collective where it was built without NCCL
    "xgboost.core.XGBoostError: [12:00:00] src/common/device_helpers.cu:67: XGBoost is not compiled with NCCL.",
])
def test_a_build_without_nccl_in_its_own_words(kb, text):
    got = explain(kb, text, [], 3)
    assert got and got[0][0].entry.failure_class == "nccl_unavailable_platform"
    assert got[0][0].confidence in ("likely", "possible")


@pytest.mark.parametrize("text", [
    # a scheme no build registers: a typo, not a build without NCCL's rendezvous
    "RuntimeError: No rendezvous handler for nccl://",
    # NCCL ran: the build has it
    "host:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\nRuntimeError: No rendezvous handler for env://",
])
def test_no_build_without_nccl_where_the_text_says_otherwise(kb, text):
    got = explain(kb, text, [], 3)
    assert all(m.entry.failure_class != "nccl_unavailable_platform" or m.confidence == "unsure" for m, _ in got)
    assert not got or got[0][0].entry.failure_class != "nccl_unavailable_platform"


def _env(text):
    return {k: v for f in read_text(text).findings for k, v in f.facts.items() if k.startswith("env.")}


def test_a_setting_said_to_restore_is_a_workaround():
    said = ("Multi-GPU tests fail at the first NCCL collective with CUDA error 217.\n"
            "Set NCCL_CUMEM_HOST_ENABLE=0 in the shared GPU base image to force the legacy path, restoring multi-GPU collectives.")
    assert "env.NCCL_CUMEM_HOST_ENABLE" not in _env(said)
    # the same variable on a shell line of the failing run is a setting of it
    assert _env("NCCL_CUMEM_HOST_ENABLE=0 torchrun --nproc_per_node 2 train.py\nCUDA error 217")["env.NCCL_CUMEM_HOST_ENABLE"] == "0"


def _symptoms(text):
    return {k for f in read_text(text).findings for k, v in f.facts.items() if k.startswith("symptom.") and v}


@pytest.mark.parametrize("text", [
    "all GPUs spin at 100%, no error is raised, launch queues fill up behind the spinning kernel.",
    "both GPUs sit at 99% forever and the loss never prints",
    "the NCCL kernel keeps spinning forever on rank 1",
])
def test_gpus_spinning_at_full_utilisation_is_a_hang(text):
    assert "symptom.hang" in _symptoms(text)


@pytest.mark.parametrize("text", [
    "GPU utilization is 100% during training and each step takes 0.3 s as expected",  # busy, not stuck
    "the fan spins at 100% when both GPUs train",
])
def test_busy_gpus_are_no_hang(text):
    assert "symptom.hang" not in _symptoms(text)


@pytest.mark.parametrize("text", [
    "the scheduler ends in SIGFPE (exit code -8) inside symm_mem.rendezvous()",
    "Floating point exception (core dumped) after NCCL init on 2 GPUs",
    "worker received SIGILL during all_reduce on the GPUs",
])
def test_fatal_signals_by_name_are_a_crash(text):
    assert "symptom.crash" in _symptoms(text)


@pytest.mark.parametrize("text,var", [
    ("Setting `NCCL_CHUNK_SIZE` / `NCCL_P2P_NET_CHUNKSIZE` to **>= 1 MiB** makes `sendrecv_perf` return **incorrect results**.",
     "NCCL_CHUNK_SIZE"),
    ("setting NCCL_ALGO to Tree causes a hang on 8 GPUs", "NCCL_ALGO"),
])
def test_a_setting_with_its_value_named_as_the_cause(text, var):
    got = [f.facts["symptom.caused_by_env"] for f in read_text(text).findings if "symptom.caused_by_env" in f.facts]
    assert got == [var]


def test_a_setting_that_makes_it_work_is_no_cause():
    text = "setting NCCL_P2P_DISABLE to 1 makes it work on the two GPUs"
    assert not [f for f in read_text(text).findings if "symptom.caused_by_env" in f.facts]


def test_an_unregistered_rendezvous_scheme_is_trouble_before_gpu(kb):
    # printed so on the one-GPU H200 (h200x1-2026-11-30t): init_process_group(init_method="foo://...")
    from p2ptop.commands.explain import answer
    text = ('  File "/opt/torch/.venv/lib/python3.12/site-packages/torch/distributed/rendezvous.py", line 87, in rendezvous\n'
            '    raise RuntimeError(f"No rendezvous handler for {result.scheme}://")\n'
            "RuntimeError: No rendezvous handler for foo://")
    got = answer(kb, text, [], 3)
    assert got["kind"] == "before_gpu" and not got["results"]
    # env:// is a build's lack (PyTorch 1.7 on Windows), answered by its entry
    got = answer(kb, "RuntimeError: No rendezvous handler for env://", [], 3)
    assert got["kind"] == "matches" and got["results"][0][0].entry.id == "platform/no-nccl-in-windows-builds"


def test_a_python_traceback_frozen_frame_is_no_hang():
    # Python 3.11+ tracebacks name frozen modules ('File "<frozen runpy>"'): torchrun's own, printed so on two H200s
    # (h200x2-2026-11-30g, a worker killed by SIGFPE)
    text = ('Traceback (most recent call last):\n  File "<frozen runpy>", line 198, in _run_module_as_main\n'
            '  File "/opt/torch/.venv/lib/python3.12/site-packages/torch/distributed/run.py", line 994, in <module>\n'
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n"
            "  traceback : Signal 8 (SIGFPE) received by PID 2025")
    assert _symptoms(text) >= {"symptom.crash"} and "symptom.hang" not in _symptoms(text)
    assert "symptom.hang" in _symptoms("the training froze after the first all_reduce on 2 GPUs")
