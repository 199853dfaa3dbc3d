"""Rules of the thirty-first session.

An NCCL log's error code is what its first failure returned: "transport.cc:40 NCCL WARN No transport found for rank"
and then PyTorch's "unhandled system error" / ncclSystemError (selectTransport's return). An entry offered on nothing
but that shared code, beside context (a small /dev/shm on the live host, the release the log names), is the failure's
consequence and stays unsure (matcher._code_after_explained_failure); where the code is all the text has, it is
offered as before."""

import json
import os

import pytest
from .kbtools import bundled_kb, text_facts

from p2ptop.cli import main
from p2ptop.commands.explain import explain

HERE = os.path.dirname(os.path.abspath(__file__))
CAPS = os.path.join(HERE, "fixtures", "captures")
NO_TRANSPORT = os.path.join(CAPS, "h200x2-nccl-2026-11-29", "no-transport-2026-12-01.log")
SNAPSHOT = os.path.join(CAPS, "h200x2-live", "p2ptop-snapshot-bench.json")
REASON = "its only sign is an error code shared by several classes, which follows line"


@pytest.fixture(scope="module")
def kb():
    return bundled_kb()


def answers(kb, text, n=6):
    return [(m.entry.id, m.confidence, m) for m, _ in explain(kb, text, [], n)]


def test_real_no_transport_log_alone(kb):
    with open(NO_TRANSPORT, encoding="utf-8") as f:
        text = f.read()
    got = answers(kb, text)
    assert got[0][:2] == ("nccl/p2p-and-shm-disabled-uses-network", "likely")
    for eid in ("nccl/shm-attach-no-such-file", "nccl/shm-dev-shm-full"):
        m = next(m for i, c, m in got if i == eid)
        assert m.confidence == "unsure"
    attach = next(m for i, c, m in got if i == "nccl/shm-attach-no-such-file")
    assert any(r.startswith(REASON) and "nccl/p2p-and-shm-disabled-uses-network" in r for r in attach.reasons)


def test_live_host_small_dev_shm_does_not_make_the_code_its_own(tmp_path, capsys):
    # the two-H200 host as it ran the job: its /dev/shm set small (the device machine's was); the log's failure is
    # NCCL's "No transport found", the ncclSystemError after it is that failure's
    with open(SNAPSHOT, encoding="utf-8") as f:
        snap = json.load(f)
    snap["host"]["facts"]["host.shm_mb"]["value"] = 64
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(snap), encoding="utf-8")
    main(["explain", "--replay", str(path), "--json", NO_TRANSPORT])
    got = {m["id"]: m for m in json.loads(capsys.readouterr().out)["matches"]}
    assert got["nccl/p2p-and-shm-disabled-uses-network"]["confidence"] == "likely"
    shm = got.get("nccl/shm-dev-shm-full")
    assert shm is None or shm["confidence"] == "unsure"


def test_the_code_alone_is_still_offered_on_a_small_dev_shm(kb):
    # nothing explains the failure but the code: a container and the code, as before (offered, not demoted by this rule)
    text = ("Running in a docker container.\n"
            "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error "
            "(run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
            "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n")
    got = answers(kb, text)
    assert not any(REASON in r for _i, _c, m in got for r in m.reasons)


def test_a_failure_after_the_code_does_not_explain_it(kb):
    # the code comes first, the explained WARN after it: the code's entry is not that WARN's consequence
    text = ("misc/shmutils.cc:72 NCCL WARN Error: failed to extend /dev/shm/nccl-abc to 9637892 bytes\n"
            "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n")
    got = answers(kb, text)
    assert got[0][:2] == ("nccl/shm-dev-shm-full", "likely")


@pytest.mark.parametrize("line", [
    # nvidia-smi names the GPU by index and bus id (newer releases), by index alone, or by bus id alone
    "Unable to determine the device handle for GPU1: 0000:82:00.0: Unknown Error",
    "Unable to determine the device handle for GPU1: Unknown Error",
    "Unable to determine the device handle for GPU 0000:02:00.0: GPU is lost. Reboot the system to recover this GPU",
    "Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error",
    "Unable to determine the device handle for GPU3: 0000:04:00.0: GPU is lost.",
])
def test_nvidia_smi_lost_gpu_in_every_form(kb, line):
    got = answers(kb, line)
    assert got and got[0][0] == "nvml/gpu-is-lost" and got[0][1] in ("likely", "possible")


def test_lost_gpu_needs_the_error_after_the_bus_id(kb):
    got = answers(kb, "Unable to determine the device handle for GPU1: 0000:82:00.0: Insufficient Permissions")
    assert not any(i == "nvml/gpu-is-lost" and c in ("likely", "possible") for i, c, _m in got)


@pytest.mark.parametrize("said,value", [
    # nvidia-smi topo -p2p's codes written as a reading's value (its legend: GNS = GPU not supported, CNS = Chipset...)
    ("- `nvidia-smi topo -p2p r`: GNS (GPU not supported)", "GPU_NOT_SUPPORTED"),
    ("canAccessPeer is 0 on all pairs; `nvidia-smi topo -p2p r` = GNS", "GPU_NOT_SUPPORTED"),
    ("nvidia-smi topo -p2p r: CNS for every pair", "CHIPSET_NOT_SUPPORTED"),
    ("topo -p2p r shows TNS", "TOPOLOGY_NOT_SUPPORTED"),
])
def test_topo_p2p_code_as_a_value_in_prose(said, value):
    got = [f.get("p2p.read") for f in text_facts(said).values()]
    assert value in got


def test_topo_p2p_legend_or_matrix_after_a_colon_is_no_reading():
    for text in ("nvidia-smi topo -p2p r:\n        GPU0    GPU1\n GPU0   X       OK\n GPU1   OK      X\n",
                 "Legend:\n  GNS  = GPU not supported\n"):
        assert all(f.get("p2p.read") in (None, "OK") for f in text_facts(text).values())


def test_cmp_mining_cards_are_geforce_class_with_their_own_link():
    from p2ptop.evidence.gpus import built_pcie, classify
    assert classify("NVIDIA CMP 170HX") == ("consumer", "Ampere")
    assert classify("CMP 30HX") == ("consumer", "Turing")
    # a CMP's PCIe link is cut down by design (170HX: x4 Gen1): no built generation to judge its link against
    assert built_pcie("NVIDIA CMP 170HX") is None and built_pcie("NVIDIA GeForce RTX 3090") == 4
    # laptop MX parts have no built generation either (the pattern once held a backspace character where \b was meant)
    assert built_pcie("NVIDIA GeForce MX450") is None


def test_no_control_characters_in_sources():
    # a control character in a source file (a backspace written where a regex meant \b) is invisible and silently wrong
    import re
    bad = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]")
    root = os.path.join(HERE, "..")
    found = []
    for top in ("p2ptop", "tests", "benchmarks", "kb"):
        for dirpath, _dirs, files in os.walk(os.path.join(root, top)):
            if "corpus" in dirpath or "fixtures" in dirpath or "results" in dirpath:
                continue  # verbatim real text and captures keep what their tools printed
            for name in files:
                if name.endswith((".py", ".json")):
                    with open(os.path.join(dirpath, name), encoding="utf-8", errors="replace") as f:
                        if bad.search(f.read()):
                            found.append(os.path.join(dirpath, name))
    assert found == []


DOCKER_217 = ("Running in a docker container.\n"
              "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error (run "
              "with NCCL_DEBUG=INFO for details), NCCL version 2.21.5\n"
              "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n")


def _replayed(tmp_path, capsys, text, shm_mb):
    with open(SNAPSHOT, encoding="utf-8") as f:
        snap = json.load(f)
    snap["host"]["facts"]["host.shm_mb"]["value"] = shm_mb
    path = tmp_path / "snap.json"
    path.write_text(json.dumps(snap), encoding="utf-8")
    paste = tmp_path / "paste.txt"
    paste.write_text(text, encoding="utf-8")
    capsys.readouterr()
    main(["explain", "--replay", str(path), "--json", str(paste)])
    return {m["id"]: m for m in json.loads(capsys.readouterr().out)["matches"]}


def test_a_large_dev_shm_puts_the_full_shm_entry_in_doubt_on_a_shared_code(tmp_path, capsys):
    # the one-H200 device host: /dev/shm 128 GiB, 0 % used; a container's "unhandled system error" is no sign it is full
    got = _replayed(tmp_path, capsys, DOCKER_217, 257811)
    shm = got["nccl/shm-dev-shm-full"]
    assert shm["confidence"] == "unsure" and any(r.startswith("in doubt: /dev/shm is 16 GiB") for r in shm["reasons"])
    # a small /dev/shm: the same text offers it, as before
    assert _replayed(tmp_path, capsys, DOCKER_217, 64)["nccl/shm-dev-shm-full"]["confidence"] == "likely"


def test_nccls_own_full_shm_message_is_believed_on_a_large_dev_shm(tmp_path, capsys):
    text = "misc/shmutils.cc:72 NCCL WARN Error: failed to extend /dev/shm/nccl-abc to 9637892 bytes\n"
    shm = _replayed(tmp_path, capsys, text, 257811)["nccl/shm-dev-shm-full"]
    assert shm["confidence"] == "likely" and not any(r.startswith("in doubt") for r in shm["reasons"])


@pytest.mark.parametrize("text", [
    "when i am running this command : mpirun -np 1 ./build/all_reduce_perf -b 8 -e 128M -f 2 -g 2. I found this",
    "./build/sendrecv_perf_mpi -b 8 -e 1G hangs after the first size",
])
def test_nccl_tests_programs_are_gpu_words(text):
    from p2ptop.evidence import read_text
    assert read_text(text).gpu_related


def test_perf_words_of_other_tools_are_not():
    from p2ptop.evidence import read_text
    assert not read_text("./build/my_perf -b 8 finished; perf stat shows 3 IPC").gpu_related


@pytest.mark.parametrize("said,value", [
    ("nvidia-smi topo -p2p a\nGPU0 ↔ GPU1 : NS (Not Supported)", "NOT_SUPPORTED"),
    ("GPU0<->GPU1: CNS (Chipset not supported)", "CHIPSET_NOT_SUPPORTED"),
    ("we ran topo -p2p r; GPU 2 - GPU 3 = GNS", "GPU_NOT_SUPPORTED"),
])
def test_a_pairs_topo_p2p_code_written_out(said, value):
    assert value in [f.get("p2p.read") for f in text_facts(said).values()]


def test_a_pair_and_ns_without_topo_p2p_or_its_legend_is_no_reading():
    # "ns" is also nanoseconds: without the tool named or the legend's words, no status is read
    assert all(f.get("p2p.read") is None for f in text_facts("GPU0 - GPU1 : ns latency 350").values())


NVLINK_UNSAID = "neither the text nor the host names NVLink or NVSwitch hardware"


def test_a_shared_code_alone_puts_an_nvlink_cause_last_where_no_nvlink_is_said(kb):
    # ncclUnhandledCudaError is listed by entries of several classes; the NVLink one's setup is nowhere in the text
    got = answers(kb, "NCCL Error 1: unhandled cuda error on the broadcast step of torch.nn.parallel.replicate.", 8)
    nv = next(m for i, c, m in got if i == "nccl/p2p-disabled-nvlink-connected-hw")
    assert nv.confidence == "unsure" and any(r.startswith(NVLINK_UNSAID) for r in nv.reasons)
    assert got[0][0] != "nccl/p2p-disabled-nvlink-connected-hw"


def test_the_same_code_beside_nvlink_said_keeps_its_rank(kb):
    got = answers(kb, "NCCL Error 1: unhandled cuda error on the broadcast step; the two A100 are joined by NVLink "
                      "bridges.", 8)
    nv = next(m for i, c, m in got if i == "nccl/p2p-disabled-nvlink-connected-hw")
    assert not any(r.startswith(NVLINK_UNSAID) for r in nv.reasons)
    assert got[0][0] == "nccl/p2p-disabled-nvlink-connected-hw" or got[0][2].score == nv.score


def test_an_offered_entry_of_the_setup_says_the_setup(kb):
    # CUDA's 802 (cudaErrorSystemNotReady) offers Fabric Manager not running on its own code: NVSwitch hardware is in play,
    # so the version-mismatch entry beside it on a shared code alone is not put last as "no NVLink said"
    got = answers(kb, "RuntimeError: CUDA error: system not yet initialized\nCUDA error 802 on cudaGetDeviceCount", 8)
    assert any(c in ("likely", "possible") and m.entry.failure_class == "fabric_manager_not_running" for i, c, m in got)
    assert not any(r.startswith(NVLINK_UNSAID) for _i, _c, m in got for r in m.reasons
                   if m.entry.failure_class in ("fabric_manager_version_mismatch", "fabric_manager_not_running"))


def test_a_word_one_hard_wrap_cut_still_names_gpus():
    from p2ptop.evidence import read_text
    from p2ptop.evidence.paste import words_rejoined
    text = ("The default version was cu121, which didn't work and failed (RuntimeError: The N\n"
            "VIDIA driver on your system is too old) in this cell:\n"
            "PyTorch Version: 2.1.2+cu121")
    assert "The NVIDIA driver" in words_rejoined(text)
    assert read_text(text).gpu_related
    got = answers(bundled_kb(), text)
    assert got and got[0][0] == "cuda/insufficient-driver"


def test_short_lines_and_cuts_between_words_are_not_rejoined():
    from p2ptop.evidence.paste import words_rejoined
    assert words_rejoined("short line N\nVIDIA") == ""  # under the width a terminal wraps at
    assert words_rejoined("x" * 70 + " \nnext line") == ""  # the cut fell between words: nothing to rejoin


def test_the_wrappers_code_above_nccls_last_error_is_that_errors(kb):
    # PyTorch prints the code first and NCCL's own last error under "Last error:" (ProcessGroupNCCL): the code is the
    # last error's, as _mark_first_failure already takes NCCL's last error for the first failure
    text = ("[rank0]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:3780, unhandled system error "
            "(run with NCCL_DEBUG=INFO for details), NCCL version 2.28.9\n"
            "[rank0]: ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.\n"
            "[rank0]: Last error:\n"
            "[rank0]: Error while creating shared memory segment /dev/shm/nccl-XG7Qvq (size 9637888), error: No space left "
            "on device (28)\n")
    got = answers(kb, text)
    assert got[0][:2] == ("nccl/shm-dev-shm-full", "likely")
    attach = next(m for i, c, m in got if i == "nccl/shm-attach-no-such-file")
    assert attach.confidence == "unsure"
    assert any("is PyTorch's wrapper of line 4's failure" in r for r in attach.reasons)
