"""Issue 22 point 4, as a general mechanism: never silent where the text shows a symptom of GPU trouble.

Where no entry's own regex or fact rule makes it likely, the answer is completed with candidates on the
entries' own words (p2ptop.knowledge.retrieval: BM25 between the text and each entry's text, the text's
facts as concept terms), labelled unsure, each with the facts for and against it and one next command.
Context alone (a VM, a GPU model) offers nothing; a text with no trace of GPUs says so.

The texts here are written for these tests from the tools' and libraries' own vocabulary (nvidia-smi's
legend, NCCL's troubleshooting page, CUDA's error table); none is copied from the evaluation corpus.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from p2ptop.commands.explain import _as_json, _as_text, answer
from p2ptop.knowledge import load_kb
from p2ptop.knowledge.fact_roles import CLASS_FACT, NEXT_COMMAND
from p2ptop.knowledge.loader import load_paths
from p2ptop.knowledge.matcher import FILL_CLASSES, RETRIEVAL_CAP, match
from p2ptop.knowledge.retrieval import HEAD, MAX_MARKED, TAIL, Index, query_text, tokens

KB = load_kb()
CAPTURES = Path(__file__).parent / "fixtures" / "captures"


def _classes(a):
    return [m.entry.failure_class for m, _ in a["results"]]


# ---- tokens ------------------------------------------------------------------------------------------

def test_tokens_split_identifiers_stem_words_and_map_symptom_families():
    t = tokens("cudaErrorPeerAccessUnsupported with NCCL_P2P_DISABLE=1; the job hangs")
    for w in ("cudaerrorpeeraccessunsupport", "peer", "access", "unsupport", "nccl_p2p_disabl", "nccl", "p2p", "hang"):
        assert w in t, w
    assert "_hang" in t and "_unsupported" in t  # families: "hangs" is a hang, "Unsupported" is unsupported
    assert "the" not in t and "with" not in t
    # the words of one family meet: "stuck" in a report, "deadlock" in an entry
    assert "_hang" in tokens("training is stuck") and "_hang" in tokens("a deadlock in the kernel")


def test_chinese_is_read_as_character_bigrams_and_its_symptom_words_as_families():
    t = tokens("多卡训练卡住了，带宽很低")
    assert "多卡" in t and "训练" in t and "卡住" in t
    assert "_hang" in t and "_slow" in t


def test_a_tools_setting_value_is_not_a_word_of_the_report():
    assert "disabl" not in tokens("Unidirectional P2P=Disabled Bandwidth Matrix (GB/s)")
    assert "disabl" in tokens("we disabled P2P")


def test_bm25_ranks_the_entry_whose_own_words_the_text_shares(tmp_path):
    base = json.loads(json.dumps(KB.get("nccl/shm-dev-shm-full").data))
    texts = {"shm": ("NCCL cannot allocate its shared memory segment in /dev/shm: no space left", "shm_exhausted"),
             "acs": ("PCIe ACS redirect on a switch port sends peer traffic through the root complex", "iommu_acs_p2p_broken"),
             "mig": ("P2P is not available between MIG instances", "mig_p2p_unsupported")}
    for name, (sig, cls) in texts.items():
        d = dict(base, id=f"test/{name}", failure_class=cls, signature=sig, signature_zh="", root_cause=sig,
                 root_cause_zh="", regex="", regexes=[], error_codes=[], error_code=None, tags=[], aliases=[])
        (tmp_path / f"{name}.json").write_text(json.dumps(d), encoding="utf-8")
    kb = load_paths([tmp_path])
    assert kb.problems == []
    idx = Index(kb.entries)
    assert idx.scores(tokens("the ACS bits on the switch redirect peer traffic"))[0][0].id == "test/acs"
    assert idx.scores(tokens("/dev/shm is full, no space left"))[0][0].id == "test/shm"
    assert idx.scores(tokens("two MIG instances cannot do P2P"))[0][0].id == "test/mig"
    assert idx.scores(tokens("my cat sleeps on the keyboard")) == []


def test_the_query_of_a_huge_log_is_bounded():
    lines = [f"host:1:1 [0] NCCL INFO Channel {i % 32:02d}/0 : 0[0] -> 1[1] via P2P/CUMEM" for i in range(200_000)]
    lines[100_000] = "host:1:1 [0] NCCL WARN Cuda failure 'peer access is not supported between these two devices'"
    q = query_text(lines)
    assert len(q) <= HEAD + TAIL + MAX_MARKED * 200 + 2 * 200
    assert "NCCL WARN Cuda failure" in q  # a marked line from the middle is read


# ---- the fallback in answers ---------------------------------------------------------------------------

HANG_IN_A_GUEST = ("After moving our four A100 PCIe cards into a Proxmox guest with passthrough, NCCL's all_reduce_perf "
                   "gets stuck right after init and never finishes.")
ZEROS_ZH = "两张 RTX 4090 之间用 cudaMemcpyPeer 拷贝后，目标卡上的数据全是0。"
#: a hang with no setup any entry claims (HANG_IN_A_GUEST's VM now offers the VM entry on its own: a hang inside a VM
#: is one of its triggers, with_setup)
HANG_AFTER_MOVE = ("After moving our four A100 PCIe cards into a new chassis, NCCL's all_reduce_perf gets stuck right after init "
                   "and never finishes.")


@pytest.mark.parametrize("text", [HANG_IN_A_GUEST, ZEROS_ZH,
                                  "Since the BIOS update P2P between GPU0 and GPU1 is much slower than expected.",
                                  "Running two ranks in separate docker containers, NCCL fails in cuMemImportFromShareableHandle."])
def test_a_symptom_with_no_matching_entry_gets_three_unsure_candidates_each_with_one_next_command(text):
    a = answer(KB, text, [], 3)
    assert a["kind"] in ("unsure", "matches")
    assert len(a["results"]) == 3
    for m, _ in a["results"]:
        if m.confidence != "unsure":
            continue
        assert m.next_command and m.next_command["command"] in NEXT_COMMAND.values(), m.entry.id
        assert m.facts_for, m.entry.id
    assert a["next_command"] and a["next_command"]["command"] in NEXT_COMMAND.values()
    # the few lines of an unsure answer name different causes
    unsure = [m.entry.failure_class for m, _ in a["results"] if m.confidence == "unsure"]
    assert len(set(unsure)) == len(unsure)


def test_retrieval_candidates_are_never_likely_or_possible_and_say_what_they_share():
    a = answer(KB, HANG_IN_A_GUEST, [], None)
    got = [m for m, _ in a["results"] if m.basis == "retrieval"]
    assert got, "the VM hang names no entry on its words"
    for m in got:
        assert m.confidence == "unsure" and m.unsure and m.score <= RETRIEVAL_CAP
        assert m.reasons[0].startswith("retrieval: its own text shares these words with the text: ")
        assert any(r.startswith("beside the symptom (symptom.hang = True, line 1 of the paste") for r in m.reasons)
    # the VM entry is no retrieval candidate here: a hang inside a VM offers it on its own signs (its with_setup
    # trigger), its context (the VM) saying so
    vm = next(m for m, _ in a["results"] if m.entry.failure_class == "vm_p2p_unavailable")
    assert vm.basis == "signs" and vm.confidence == "possible"
    assert any("host.virtualized = True" in r for r in vm.facts_for)


def test_a_candidate_with_no_missing_fact_of_its_own_gets_its_class_command():
    for cls, fact in CLASS_FACT.items():
        assert fact in NEXT_COMMAND, (cls, fact)
    a = answer(KB, "Running two ranks in separate docker containers, NCCL fails in cuMemImportFromShareableHandle.", [], None)
    for m, _ in a["results"]:
        assert m.confidence != "unsure" or m.next_command, m.entry.id


def test_context_alone_offers_nothing_but_unsure_candidates_whose_own_setup_it_describes():
    # issue 22 points 3 and 4: a setup without a symptom offers no entry (nothing likely or possible), but a text
    # that names GPUs is not left empty: candidates whose own conditions hold on what it describes, unsure, each
    # saying the text names no symptom
    a = answer(KB, "We run eight H100 SXM cards in a DGX inside a KVM guest, driver 550.54.15.", [], 3)
    assert a["kind"] == "unsure" and a["results"]
    for m, _ in a["results"]:
        assert m.confidence == "unsure" and m.basis == "retrieval"
        assert any(r.startswith("the text names no symptom") for r in m.reasons)
    assert "vm_p2p_unavailable" in _classes(a)
    out = _as_text(a, "x", None, None, KB, "en")
    assert "the text names no symptom" in out and "if nothing fails, nothing needs fixing" in out


def test_a_gpu_list_or_a_healthy_matrix_without_a_symptom_stays_healthy():
    # nothing in a GPU list fits any entry's own conditions: no candidate on the GPU model alone
    a = answer(KB, "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-47a3d7f5-994a-ec6f-cf14-933f0929aec3)", [], 3)
    assert a["kind"] == "healthy" and a["results"] == []
    out = _as_text(a, "x", None, None, KB, "en")
    assert "No sign of P2P trouble" in out and "Read in the text:" in out
    # GPUs joined by NVLink (NV#) read as working: no candidates either
    a = answer(KB, "\tGPU0\tGPU1\nGPU0\t X \tNV18\nGPU1\tNV18\t X \n", [], 3)
    assert a["kind"] == "healthy" and a["results"] == []


def test_a_text_with_no_trace_of_gpus_says_so():
    a = answer(KB, "My cat sleeps on the keyboard and the build is stuck.", [], 3)
    assert a["kind"] == "no_gpu_trace" and a["results"] == []


def test_one_gpu_rules_out_pair_classes_among_retrieval_candidates():
    from p2ptop.findings import Finding

    one = [Finding(id="host.gpu_count", subject="host", severity="info", summary="one GPU", evidence=["live host"],
                   facts={"host.gpu_count": 1})]
    got = match(KB, "The training job hangs at the first collective and never finishes.", one)
    pair_classes = {"iommu_acs_p2p_broken", "p2p_unsupported_consumer_gpu", "p2p_unsupported_topology",
                    "vm_p2p_unavailable", "too_many_peers", "p2p_through_cpu_slow", "bar1_too_small"}
    assert got and not [m.entry.id for m in got if m.entry.failure_class in pair_classes]


def test_json_carries_the_basis_and_the_next_command_of_each_candidate():
    a = answer(KB, HANG_AFTER_MOVE, [], 3)
    j = _as_json(a, HANG_AFTER_MOVE, None, None, KB, "en")
    assert j["answer"] == "unsure" and len(j["matches"]) == 3
    for d in j["matches"]:
        assert d["basis"] in ("signs", "lead", "retrieval") and d["confidence"] == "unsure"
        assert d["next_command"]["command"]


def test_fill_stops_at_three_new_classes():
    got = match(KB, "P2P between our GPUs is broken and NCCL fails.")
    assert len({m.entry.failure_class for m in got if m.basis == "retrieval"}) <= FILL_CLASSES


# ---- healthy texts stay healthy --------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["nccl-2.28-allreduce-default.log", "nvidia-smi-topo-m.txt", "nvidia-smi-topo-p2p.txt"])
def test_healthy_captures_get_no_candidate(name):
    path = CAPTURES / "h200x2-nvswitch-vm" / name
    if not path.exists():
        pytest.skip(f"{path} not present")
    a = answer(KB, path.read_text(encoding="utf-8", errors="replace"), [], 3)
    assert a["kind"] == "healthy" and a["results"] == []


def test_a_fitting_setup_ranks_a_candidate_above_a_bare_symptom():
    # the GeForce entry's own condition (a GeForce card) holds; the slow-path entries only share "slower"
    a = answer(KB, "Is P2P supported on the 4090? Our multi-GPU inference is slower than on one card.", [], 3)
    assert "p2p_unsupported_consumer_gpu" in _classes(a)
    m = next(m for m, _ in a["results"] if m.entry.failure_class == "p2p_unsupported_consumer_gpu")
    assert m.context_held >= 1 and m.confidence == "unsure"


def test_retrieval_names_the_rarest_shared_words_and_no_chinese_function_bigrams():
    t = tokens("NCCL 走的是 SHM 而不是 P2P")
    assert "的是" not in t and "而不" not in t
    a = answer(KB, "在 Proxmox 虚拟机里直通了两张 A100，NCCL 走的是 SHM 而不是 P2P，速度很慢", [], 3)
    assert "vm_p2p_unavailable" in _classes(a)


def test_leave_one_thread_out_removes_the_entries_citing_the_thread():
    import importlib.util
    import sys

    bench = Path(__file__).resolve().parent.parent / "benchmarks"
    sys.path.insert(0, str(bench))
    try:
        spec = importlib.util.spec_from_file_location("eval_leave_thread_out", bench / "eval_leave_thread_out.py")
        loto = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(loto)
        from split import thread_of
    finally:
        sys.path.remove(str(bench))
    e = KB.get("consumer/geforce-nccl-p2p-hang")
    assert loto.cites(e, thread_of("https://github.com/NVIDIA/nccl-tests/issues/117"))
    assert not loto.cites(e, thread_of("https://github.com/NVIDIA/nccl/issues/1"))


def test_the_hosts_context_alone_makes_no_candidate_of_a_text_without_a_symptom():
    # seen on the live one-GPU H100 (a container): its own healthy one-rank NCCL log was answered with the
    # /dev/shm entry on "inside a container (live host)". A text without a symptom gets candidates only on
    # what the TEXT describes; the host's context is not something the text asks about.
    from p2ptop.findings import Finding

    host = [Finding(id="host.container", subject="host", severity="info", summary="inside a container",
                    evidence=["live host"], facts={"host.container": "docker"}),
            Finding(id="host.gpu_count", subject="host", severity="info", summary="one GPU", evidence=["live host"],
                    facts={"host.gpu_count": 1})]
    log = ("vm:796:796 [0] NCCL INFO cudaDriverVersion 13000\n"
           "vm:796:796 [0] NCCL INFO Bootstrap: Using eth0:10.0.0.2<0>\n"
           "vm:796:796 [0] NCCL INFO NCCL version 2.28.9+cuda13.0\n"
           "vm:796:796 [0] NCCL INFO ncclCommInitRankConfig comm 0x1d098cc0 rank 0 nranks 1 cudaDev 0 nvmlDev 0 "
           "busId 60 commId 0x9491bbbd038d5ba1 - Init COMPLETE\n"
           "vm:796:796 [0] NCCL INFO comm 0x1d098cc0 rank 0 nranks 1 cudaDev 0 busId 60 - Destroy COMPLETE\n")
    a = answer(KB, log, host, 3, origin="live host")
    assert a["kind"] == "healthy" and a["results"] == []
    # the same setup said in the text itself ("in a docker container") does make candidates, unsure
    said = "We run NCCL on one node in a docker container with four A100 GPUs.\n" + log
    got = answer(KB, said, [], 3)
    assert all(m.confidence == "unsure" for m, _ in got["results"])


def test_mig_off_on_every_gpu_rules_the_mig_entries_out():
    # an invalid device ordinal is also what ranks on MIG instances print; a host whose GPUs all have MIG off
    # rules that cause out (as no NVSwitch rules out NVLS), a host with MIG on keeps it
    from p2ptop.findings import Finding

    text = "torch.AcceleratorError: CUDA error: invalid device ordinal\n"
    def host(mig):
        return [Finding(id="gpu.mig", subject="GPU0", severity="info", summary="MIG", evidence=["replay"], facts={"gpu.mig": mig}),
                Finding(id="host.gpu_count", subject="host", severity="info", summary="2 GPUs", evidence=["replay"],
                        facts={"host.gpu_count": 2})]
    off = {m.entry.failure_class for m in match(KB, text, host(False))}
    on = {m.entry.failure_class for m in match(KB, text, host(True))}
    assert "mig_p2p_unsupported" not in off and "mig_p2p_unsupported" in on
    assert "device_not_visible" in off
