"""Rules of the twenty-third session: a pidfd_getfd / pidfd_open failure is a CUDA IPC refused by the kernel (the way CUDA VMM
memory is shared between processes), so a text that names nothing else is answered; literal sets of small classes."""

import pytest

from p2ptop.commands.explain import explain
from p2ptop.evidence.read import read_text
from p2ptop.knowledge import load_kb
from p2ptop.knowledge.regex_safety import LiteralGate, literal_sets


@pytest.fixture(scope="module")
def kb():
    return load_kb()


@pytest.mark.parametrize("text", [
    # PyTorch's ExpandableSegment::fromShared: TORCH_CHECK(false, "pidfd_getfd: ", std::strerror(err)), re-raised by a worker
    "Exception: Worker failed with error 'pidfd_getfd: Operation not permitted'",
    "RuntimeError: pidfd_getfd: Operation not permitted",
    # UCX's cuda_ipc cache: "pidfd_open(%d) failed: %m" where the exporter's pid is in another PID namespace
    "cuda_ipc_cache.c:123 UCX ERROR pidfd_open(4242) failed: No such process",
])
def test_pidfd_failure_is_a_gpu_text(text):
    assert read_text(text).gpu_related


@pytest.mark.parametrize("text", [
    "the supervisor duplicates the server's socket with pidfd_getfd and resumes it",  # the syscall named, no failure
    "seccomp: the default profile blocks pidfd_getfd",
])
def test_pidfd_named_without_a_failure_is_no_gpu_text(text):
    assert not read_text(text).gpu_related


def test_pidfd_eperm_answered_with_the_ipc_entry(kb):
    got = explain(kb, "Exception: Worker failed with error 'pidfd_getfd: Operation not permitted'", [], 3)
    assert got and got[0][0].entry.id == "torch/cuda-ipc-pidfd-getfd-not-permitted"
    assert got[0][0].confidence in ("likely", "possible")


@pytest.mark.parametrize("pattern,expected", [
    (r"NCCL (?:version )?v?2\.[0-4]\.\d", ("2.0.", "2.1.", "2.2.", "2.3.", "2.4.")),  # the class joined, and the dot after it
    (r"RTX 50[6-9]0", ("rtx 5060", "rtx 5070", "rtx 5080", "rtx 5090")),
    (r"sm_[89]0\b", ("sm_80", "sm_90")),
])
def test_literal_sets_join_a_small_class(pattern, expected):
    assert expected in literal_sets(pattern)[0]


@pytest.mark.parametrize("pattern,expected", [
    (r"x[A-F]yz", ((("yz",),),)),  # capitals in a case-sensitive class are not the lower-cased literals
    (r"abc\d", ((("abc",),),)),  # a category: \d matches other scripts' digits too
    (r"abc[^d]", ((("abc",),),)),  # a negation
    (r"abc[0-9a-z]", ((("abc",),),)),  # more than CLASS_CHARS characters
])
def test_literal_sets_leave_other_classes_alone(pattern, expected):
    assert literal_sets(pattern) == expected


def test_literal_sets_read_a_group_matched_once():
    assert literal_sets(r"(?m:^less than \d+ gpus)") == ((("less than ",), (" gpus",)),)
    assert literal_sets(r"x(?:abc)?y") == ()  # an optional group says nothing


@pytest.mark.parametrize("pattern,text,hit", [
    (r"nccl 2\.[0-4]\.\d", "x" * 5000 + " nccl 2.3.7 ", True),
    (r"nccl 2\.[0-4]\.\d", "x" * 5000 + " nccl 2.28.9 ", False),
    (r"(?m:^less than \d+ gpus)", "x" * 5000 + "\nless than 2 gpus", True),
])
def test_gated_search_equals_the_search(pattern, text, hit):
    import re

    rx = re.compile(pattern)
    assert (LiteralGate(rx).search(text) is not None) == (rx.search(text) is not None) == hit


@pytest.mark.parametrize("text", [
    "A performance drop has been introduced, at least on specific hardware.",
    "we see a 60% busbw regression after the upgrade",
    "there is a big drop in bandwidth between GPU0 and GPU1",
])
def test_a_loss_of_speed_named_is_slow(text):
    assert any(f.facts.get("symptom.slow") for f in read_text(text + " (NCCL all_reduce on 8 GPUs)").findings)


def test_a_drop_of_something_else_is_not_slow():
    assert not any(f.facts.get("symptom.slow") for f in read_text("the loss drops quickly on 8 GPUs with NCCL").findings)


_BLACKWELL_IMA = ("enqueue.cc:1556 NCCL WARN Cuda failure 700 'an illegal memory access was encountered'\n"
                  "GPU 0: NVIDIA GeForce RTX 5090\nGPU 1: NVIDIA GeForce RTX 5090\n")


def _entry(kb, text, entry_id):
    return next((m for m, _ in explain(kb, text, [], None) if m.entry.id == entry_id), None)


def test_an_entry_on_given_releases_is_unsure_where_the_text_names_no_release(kb):
    # the matcher's rule for a required fact the text does not give (UNSURE_CAP) holds for a required NCCL release too
    m = _entry(kb, _BLACKWELL_IMA, "nccl/blackwell-pcie-illegal-access-512k")
    assert m is not None and m.confidence == "unsure" and "nccl.version" in m.deciding_facts


def test_an_entry_on_given_releases_is_out_where_the_text_names_another(kb):
    assert _entry(kb, "NCCL version 2.28.3+cuda12.9\n" + _BLACKWELL_IMA, "nccl/blackwell-pcie-illegal-access-512k") is None
    m = _entry(kb, "NCCL version 2.26.2+cuda12.8\n" + _BLACKWELL_IMA, "nccl/blackwell-pcie-illegal-access-512k")
    assert m is not None and m.confidence in ("likely", "possible")


@pytest.mark.parametrize("text", [
    # PyTorch's torch/distributed/distributed_c10d.py where is_nccl_available() is False (Windows, CPU-only builds)
    'File "C:\\\\Users\\\\me\\\\envs\\\\t\\\\lib\\\\site-packages\\\\torch\\\\distributed\\\\distributed_c10d.py", line 1013\n'
    "RuntimeError: Distributed package doesn't have NCCL built in",
    # TensorFlow's op registry on a build without its NCCL ops
    "InvalidArgumentError: Op type not registered 'NcclAllReduce' in binary running on DESKTOP-K1BEKCL.",
    # PyTorch's TCPStore on a Windows wheel (no libuv), under a traceback through torch.distributed
    'File "C:\\\\py\\\\Lib\\\\site-packages\\\\torch\\\\distributed\\\\rendezvous.py", line 185, in _create_c10d_store\n'
    "RuntimeError: use_libuv was requested but PyTorch was build without libuv support",
    # torch/cuda/nccl.py's warning
    "D:\\\\Anaconda3\\\\lib\\\\site-packages\\\\torch\\\\cuda\\\\nccl.py:15: UserWarning: PyTorch is not compiled with NCCL support",
])
def test_a_build_without_nccl_is_named(kb, text):
    got = explain(kb, text, [], 3)
    assert got and got[0][0].entry.failure_class == "nccl_unavailable_platform"


def test_a_build_without_nccl_is_ruled_out_where_nccl_ran(kb):
    # NCCL's own version line says the build has NCCL: the class is no candidate, however the words fit
    text = ("host:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
            "the multi-GPU training on Windows with the gloo fallback and tcp init fails with a RuntimeError in distributed\n")
    assert all(m.entry.failure_class != "nccl_unavailable_platform" for m, _ in explain(kb, text, [], None))


@pytest.mark.parametrize("text,windows", [
    ("I run it on Windows 10 with two GPUs", True),
    ('File "C:\\\\Users\\\\me\\\\site-packages\\\\torch\\\\x.py", line 3', True),
    ("windows下 多卡 训练 报错", True),
    ("WSL2 on Windows 11 with two GPUs", False),  # WSL runs Linux, where the frameworks have NCCL
    ("the windows of the server room are open; two GPUs", False),
])
def test_native_windows_said(text, windows):
    got = [f.facts["host.windows"] for f in read_text(text).findings if "host.windows" in f.facts]
    assert got == ([True] if windows else [])


def test_a_build_without_nccl_is_no_candidate_on_words_alone(kb):
    # a rendezvous failure on Linux shares words with the entry (TCPStore, distributed) but names no platform without NCCL
    text = ('  File "/srv/train.py", line 9, in <module>\n    dist.init_process_group("nccl", rank=rank, world_size=world)\n'
            "[rank3]: RuntimeError: CUDA error: invalid device ordinal\ntorch.distributed.DistStoreError: Timed out")
    assert all(m.entry.failure_class != "nccl_unavailable_platform" for m, _ in explain(kb, text, [], None))
    said = "On Windows 11 " + text.replace("/srv/train.py", "C:\\\\train.py")
    assert any(m.entry.failure_class == "nccl_unavailable_platform" for m, _ in explain(kb, said, [], None))
