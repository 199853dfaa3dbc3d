"""What a paste carries around the program's own lines (evidence/paste.py ``tidy``). A launcher's or log collector's prefix before every line (evidence/paste.py ``_LAUNCHER``, ``_SRUN_LABEL``): the
readers and the matcher see the program's own lines, so a table or a message read bare reads the same behind
torchrun's "[default0]:" / "[rank3]:" (torch.distributed.elastic TailLog), Open MPI's --tag-output ("[1,0]<stdout>:"),
Ray's worker prefix ("(RayWorkerWrapper pid=4711, ip=10.0.0.2) "), docker compose ("vllm-1  | "), kubectl logs --prefix,
an RFC 3339 timestamp (docker logs -t) or Slurm's srun --label ("0: "), or indented as a whole (a markdown code
block)."""

from __future__ import annotations

from pathlib import Path

import pytest

from p2ptop.evidence import read_text
from p2ptop.evidence.paste import tidy, unwrap

from .kbtools import answer, host_facts, perturbation

FIX = Path(__file__).parent / "fixtures"

PREFIXES = {
    "torchrun-tee": "[default0]:",
    "torchrun-rank": "[rank3]: ",
    "openmpi-tag-output": "[1,0]<stdout>:",
    "ray-worker": "(RayWorkerWrapper pid=4711, ip=10.0.0.2) ",
    "ray-bare": "(pid=909597) ",
    "docker-compose": "vllm-1  | ",
    "kubectl-prefix": "[pod/trainer-0/pytorch] ",
    "rfc3339": "2026-11-29T14:03:07.123456789Z ",
    "srun-label": "0: ",
    "markdown-indent": "    ",  # a code block by indentation: the block as a whole is dedented
}


def _prefixed(text: str, prefix: str) -> str:
    return "\n".join(prefix + line for line in text.split("\n"))


def _facts(text: str) -> set:
    """The text's facts, as (key, value) (findings' own line numbers aside; the framework aside, which a prefix may name:
    a compose service called vllm, Ray's own "(pid=...)")."""
    return {(k, repr(v)) for f in read_text(text).findings for k, v in f.facts.items() if k != "text.framework"}


@pytest.mark.parametrize("name", sorted(PREFIXES))
@pytest.mark.parametrize("fixture", [
    "pastes/topo-m-4090x8-tabs-nics.txt",
    "pastes/p2pBandwidthLatencyTest-nccl-814-p2p-slower.txt",
    "captures/h200x2-nccl-2026-11-29/p2p-level-loc.log",
    "pastes/error-trtllm-1625-peer-access.txt",
    "pastes/nccl-tests-4090x8-devices.txt",
])
def test_a_prefixed_paste_reads_as_the_bare_one(name, fixture):
    text = (FIX / fixture).read_text(encoding="utf-8")
    bare = _facts(text)
    assert bare  # the fixture gives facts at all
    assert _facts(_prefixed(text, PREFIXES[name])) == bare
    # the first answer and the confident ones (the words of a prefix may reorder unsure candidates, which retrieval ranks)
    def firm(t):
        got = answer(t)
        return got[:1] + [a for a in got if a[1] in ("likely", "possible")]
    assert firm(_prefixed(text, PREFIXES[name])) == firm(text)


def test_tidy_removes_each_prefix_and_keeps_the_lines():
    for prefix in PREFIXES.values():
        text = f"{prefix}GPU0\tX \tNV18\n{prefix}GPU1\tNV18\t X"
        assert tidy(text) == "GPU0\tX \tNV18\nGPU1\tNV18\t X", prefix


@pytest.mark.parametrize("text", [
    "node-a:311:318 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via P2P/CUMEM",  # NCCL's own host:pid:tid [dev]
    "[  5.112] NVRM: Xid (PCI:0000:1b:00): 79, GPU has fallen off the bus.",  # dmesg's timestamp is the kernel's
    "1: lo: <LOOPBACK,UP,LOWER_UP> mtu 65536\n    inet 127.0.0.1/8 scope host lo",  # one `ip a` line is no srun label
    "| 0  NVIDIA H200  On |",  # nvidia-smi's table
])
def test_a_programs_own_line_start_is_kept(text):
    assert tidy(text) == text


def test_a_removed_prefix_still_says_which_program_ran():
    text = "(RayWorkerVllm pid=4028887) ERROR 03-28 21:38:23 ray_utils.py:44] ncclUnhandledCudaError: Call to CUDA function failed."
    assert host_facts(text).get("text.framework") == "vllm"
    assert host_facts("[default0]:" + text).get("text.framework") == "vllm"


def test_a_logger_prefix_before_nccls_reprinted_failure_still_matches_the_218_entry():
    # NCCL 2.18.1-2.18.5's transport set-up copy ("Cuda failure 'invalid argument'", reprinted by PyTorch after "Last
    # error:") behind vLLM's Ray worker logger
    text = ("(RayWorkerVllm pid=4028887) ERROR 03-28 21:38:23 ray_utils.py:44] torch.distributed.DistBackendError: NCCL error in: "
            "ProcessGroupNCCL.cpp:1333, unhandled cuda error, NCCL version 2.18.1\n"
            "(RayWorkerVllm pid=4028887) ERROR 03-28 21:38:23 ray_utils.py:44] Cuda failure 'invalid argument'")
    first = answer(text)[0]
    assert first[3] == "nccl/2-18-setup-memcpy-invalid-argument" and first[1] in ("likely", "possible")


# ---- a terminal's hard wrap ------------------------------------------------------------------------------------------------

def _cut(text: str) -> str:
    """The text as a terminal 80 columns wide cuts it: benchmarks/perturb_corpus.py's own "wrap80" change."""
    return perturbation("wrap80")(text)

LOG = ("node-a:311:318 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle : 217 peer access is not supported between these two devices\n"
       "node-a:311:318 [0] NCCL INFO transport.cc:68 -> 1\n"
       "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp:784, unhandled cuda error, NCCL version 2.7.8 and the second rank waits")


def test_a_hard_wrapped_paste_is_joined_again_on_the_line_where_each_message_starts():
    cut = _cut(LOG)
    assert cut.count("\n") > LOG.count("\n")
    joined = unwrap(cut).split("\n")
    assert len(joined) == cut.count("\n") + 1  # the same lines: a continuation is left empty
    assert joined[0].endswith("not supported between these two devices")
    assert _facts(cut) == _facts(LOG) or {k for k, _ in _facts(LOG)} <= {k for k, _ in _facts(cut)}


@pytest.mark.parametrize("text", [
    # lines of a tool's own that happen to be as long as each other: UUIDs, then a record of their own
    "GPU 0: Tesla V100-SXM2-16GB (UUID: GPU-388a149d-072d-881b-469c-a3e3c7c4dc19)\nLink 0: 25.781 GB/s\n"
    "GPU 1: Tesla V100-SXM2-16GB (UUID: GPU-142d0ca2-b09d-9c28-5583-7b3b749571f9)\nLink 0: <inactive>",
    # CUDA samples' device list: many lines near the longest, not cut
    "Device: 0, NVIDIA GeForce RTX 4090, pciBusID: 2, pciDeviceID: 0, pciDomainID:0\n"
    "Device: 1, NVIDIA GeForce RTX 4090, pciBusID: 17, pciDeviceID: 0, pciDomainID:0\n"
    "Device: 2, NVIDIA GeForce RTX 5090, pciBusID: 1, pciDeviceID: 0, pciDomainID:0\n"
    "Device: 6, NVIDIA GeForce RTX 3090, pciBusID: 12, pciDeviceID: 0, pciDomainID:0\nDevice=0 CAN Access Peer Device=1",
    # records alike, each as long as the longest line: HTCondor's diagnostics, NCCL lines without their host prefix
    "diag: skipping 2 uuid=3b1e5c7a-9d24-4f61-8c0e-5a7b2d9e1f43 during CUDA enumeration because of index\n"
    "diag: skipping 3 uuid=c84f0d12-6a3e-4b9f-a1d7-0e5c2b8f7a61 during CUDA enumeration because of index\n"
    "DetectedGPUs=\"GPU-1a2b3c4d, GPU-5e6f7a8b\"",
    # one line repeated by every rank (Accelerate's state), followed by a record of its own
    "Distributed environment: DistributedType.MULTI_GPU  Backend: nccl\nNum processes: 4\nProcess index: 0\n"
    "Distributed environment: DistributedType.MULTI_GPU  Backend: nccl\nNum processes: 4\nProcess index: 1",
    # nvidia-smi's table: every row as long as the border
    "+-----------------------------------------------------------------------------+\n"
    "| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2     |\n"
    "|-------------------------------+----------------------+----------------------+",
])
def test_lines_of_equal_length_that_no_width_cut_stay_apart(text):
    assert unwrap(text) == text


# ---- what a web page or a word processor makes of the characters ---------------------------------------------------------

@pytest.mark.parametrize("fixture", [
    "pastes/topo-m-4090x8-tabs-nics.txt",
    "captures/h200x2-nccl-2026-11-29/p2p-level-loc.log",
    "pastes/error-vllm-3688-invalid-argument.txt",
])
def test_non_breaking_spaces_and_typographic_quotes_read_as_the_program_printed_them(fixture):
    text = (FIX / fixture).read_text(encoding="utf-8")
    web = text.replace(" ", "\u00a0").replace("'", "\u2019").replace('"', "\u201d")
    assert _facts(web) == _facts(text)
    assert [a[3] for a in answer(web)[:1]] == [a[3] for a in answer(text)[:1]]


def test_tidy_reads_typographic_quotes_and_wide_spaces_back():
    assert tidy("Cuda failure \u2018invalid argument\u2019\u00a0and \u201cNo devices were found\u201d") == \
        "Cuda failure 'invalid argument' and \"No devices were found\""
