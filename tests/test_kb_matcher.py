"""The matcher on logs in general: tolerant of case, whitespace and terminal codes; reads CUDA error
names and numbers; facts decide between entries that share a message; missing facts are named."""

import json

import pytest

from p2ptop.findings import Finding
from p2ptop.knowledge import load_kb, load_paths, match
from p2ptop.knowledge.matcher import POSSIBLE, clean_lines

KB = load_kb()
E217 = "RuntimeError: CUDA error: peer access is not supported between these two devices"


def pair(**facts):
    return [Finding("p2p.not_supported", "pair:0-1", "problem", "test", [], {k.replace("__", "."): v for k, v in facts.items()})]


def ids(matches):
    return [m.entry.id for m in matches]


def test_case_whitespace_and_terminal_codes_do_not_matter():
    noisy = "\x1b[31mRUNTIMEERROR: cuda error:   PEER ACCESS is not\tsupported between these  two devices\x1b[0m"
    assert ids(match(KB, noisy))[:1] == ids(match(KB, E217))[:1] == ["cuda/peer-access-unsupported-by-hardware"]


def test_reasons_name_the_line():
    text = "starting\nloading model\n" + E217 + "\n"
    (top,) = match(KB, text, top=1)
    assert top.reasons[0].startswith("regex matched line 3:")


def test_cuda_error_names_and_numbers_are_read_from_any_wording():
    for line in ("CUDA error at foo.cu:12 code=802(cudaErrorSystemNotReady) \"cudaSetDevice(0)\"",
                 "cuInit failed: CUDA_ERROR_SYSTEM_NOT_READY",
                 "cudaGetDeviceCount returned error 802"):
        assert "fabric-manager/not-running-system-not-initialized" in ids(match(KB, line)), line
    assert "cuda/peer-access-already-enabled" in ids(match(KB, "cudaDeviceEnablePeerAccess returned cudaErrorPeerAccessAlreadyEnabled"))
    assert "cuda/too-many-peers" in ids(match(KB, "CUDA_ERROR_TOO_MANY_PEERS"))
    assert "nvlink/uncorrectable-nvlink-error" in ids(match(KB, "kernel: NVRM: Xid (PCI:0000:3b:00): 74, pid=1234, name=python"))
    # glog/Caffe checks print 'error == cudaSuccess (N vs. 0)'
    assert "cuda/system-driver-mismatch" in ids(match(KB, "Check failed: e == cudaSuccess (803 vs. 0)"))
    # cuda-gdb prints the code in hex: 0x2c0 = 704
    assert ids(match(KB, "warning: Cuda API error detected: cudaDeviceEnablePeerAccess returned (0x2c0)")) == ["cuda/peer-access-already-enabled"]


def test_other_frameworks_wording_of_the_same_failure():
    assert ids(match(KB, "UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 12080)."))[:1] == ["cuda/insufficient-driver"]
    assert ids(match(KB, "what():  Error (gpu_burn-drv.cpp:298): system not yet initialized"))[:1] == ["fabric-manager/not-running-system-not-initialized"]
    assert ids(match(KB, "LogicError: cuCtxEnablePeerAccess failed: peer access is not supported between these two devices"))[:1] == ["cuda/peer-access-unsupported-by-hardware"]
    vllm = "WARNING custom_all_reduce.py:74] Custom allreduce is disabled because your platform lacks GPU P2P capability or P2P test failed."
    assert ids(match(KB, vllm))[:1] == ["cuda/peer-access-unsupported-by-hardware"]
    assert ids(match(KB, "GPU 0: NVIDIA GeForce RTX 4090\n" + vllm))[:1] == ["cuda/peer-access-unsupported-consumer-gpu"]


def test_a_number_alone_is_not_read_as_a_cuda_error():
    assert match(KB, "processed 802 files in 35 seconds, error rate 217 per million") == []


@pytest.mark.parametrize("facts, expected", [
    ({"gpu__consumer": True, "p2p__read": "GPU_NOT_SUPPORTED"}, "cuda/peer-access-unsupported-consumer-gpu"),
    ({"gpu__consumer": False, "pair__cross_socket": True, "p2p__read": "CHIPSET_NOT_SUPPORTED"}, "cuda/peer-access-unsupported-cross-socket"),
    ({"gpu__consumer": False, "pair__cross_socket": False, "host__virtualized": True, "p2p__read": "NOT_SUPPORTED"}, "vm/peer-access-unsupported-in-vm"),
])
def test_facts_decide_what_error_217_means(facts, expected):
    ranked = match(KB, E217, pair(**facts))
    assert ids(ranked)[0] == expected
    assert ranked[0].score > ranked[1].score
    assert any("p2p.read" in r for r in ranked[0].reasons)


def test_without_facts_the_answer_names_the_facts_that_would_decide():
    ranked = match(KB, E217)
    assert ids(ranked)[0] == "cuda/peer-access-unsupported-by-hardware"
    assert {"gpu.consumer", "pair.cross_socket", "host.virtualized"} <= set(ranked[0].deciding_facts)
    assert ranked[0].score < 0.75  # not 'likely' on text alone


def test_a_contradicted_requirement_lowers_the_entry():
    consumer = {m.entry.id: m for m in match(KB, E217, pair(gpu__consumer=False))}["cuda/peer-access-unsupported-consumer-gpu"]
    assert consumer.score < POSSIBLE and any(r.startswith("against:") for r in consumer.reasons)


def test_facts_read_from_the_log_itself_count():
    text = "GPU 0: NVIDIA GeForce RTX 4090\n" + E217
    assert ids(match(KB, text))[0] == "cuda/peer-access-unsupported-consumer-gpu"


def test_findings_alone_match_and_benign_entries_rank_below_faults():
    idle = Finding("pcie.idle_downclock", "gpu:0", "info", "idle", [], {"gpu.pcie_idle_downclock": True})
    down = Finding("nvlink.down", "gpu:1", "problem", "down", [], {"gpu.nvlink_down": 2})
    ranked = ids(match(KB, findings=[idle, down]))
    assert ranked.index("nvlink/links-inactive") < ranked.index("pcie/idle-link-downclock-benign")


def test_nothing_in_nothing_out():
    assert match(KB) == [] and match(KB, "", []) == [] and match(KB, "all good\n") == []


def test_top_limits_the_answer():
    assert len(match(KB, E217, top=2)) == 2


def _mini(tmp_path, **entries):
    base = json.loads(json.dumps(KB.get("cuda/too-many-peers").data))
    for name, changes in entries.items():
        d = dict(base, id=f"test/{name}", examples=[], transition_graph={}, error_codes=[], error_code=None, **changes)
        (tmp_path / f"{name}.json").write_text(json.dumps(d), encoding="utf-8")
    kb = load_paths([tmp_path])
    assert kb.problems == []
    return kb


def test_one_line_counts_once_however_many_patterns_it_meets(tmp_path):
    kb = _mini(tmp_path, one={"regex": "widget failed", "regexes": ["widget", "failed"], "match": {}},
               two={"regex": "widget failed", "regexes": [], "match": {}})
    scores = {m.entry.id: m.score for m in match(kb, "the widget failed here")}
    assert scores["test/one"] == scores["test/two"]


def test_triggers_and_excludes(tmp_path):
    kb = _mini(tmp_path, t={"regex": "", "match": {"require": [{"fact": "gpu.consumer", "equals": True}],
                                                   "trigger": [{"fact": "p2p.read", "equals": "GPU_NOT_SUPPORTED"}],
                                                   "exclude": [{"fact": "env.NCCL_P2P_DISABLE", "equals": "1"}]}})
    assert match(kb, findings=pair(gpu__consumer=True, p2p__read="OK")) == []  # required fact alone is not a fault
    assert ids(match(kb, findings=pair(gpu__consumer=True, p2p__read="GPU_NOT_SUPPORTED"))) == ["test/t"]
    assert match(kb, findings=pair(gpu__consumer=True, p2p__read="GPU_NOT_SUPPORTED", env__NCCL_P2P_DISABLE="1")) == []


def test_lines_are_cut_and_cleaned():
    (line,) = clean_lines("a" * 10000 + "\x00\x1b[2J")
    assert len(line) == 2000 and "\x1b" not in line
