"""Diagnosis rules of issue 22 (points 2-4): one matcher for text facts and host facts, no entry on
context alone, facts that rule entries out, unsure candidates with the command that decides, and
healthy hosts and logs answered with no failure entry. Through the matcher, `p2ptop explain` and
`p2ptop doctor`, on real captures (tests/fixtures/captures)."""

import json
import os

import pytest

from p2ptop import cli
from p2ptop.diagnose import findings_for, pair_fact_findings
from p2ptop.findings import FACT_KEYS, Finding
from p2ptop.knowledge import load_kb, match
from p2ptop.knowledge.fact_roles import NEXT_COMMAND, STATE_KEYS, SYMPTOM_KEYS, is_symptom, role
from p2ptop.knowledge.matcher import POSSIBLE, match_grouped
from p2ptop.sources import open_snapshot

from .conftest import FIXTURES
from .kbtools import kb_from

KB = load_kb()
CAPTURES = os.path.join(FIXTURES, "captures")
H100 = os.path.join(CAPTURES, "h100x1-vm", "p2ptop-snapshot.json")
H200_LIVE = os.path.join(CAPTURES, "h200x2-live", "p2ptop-snapshot.json")
H200_DIR = os.path.join(CAPTURES, "h200x2-nvswitch-vm")
NCCL_HEALTHY = os.path.join(H200_DIR, "nccl-2.28-allreduce-default.log")
P2P_TEST = os.path.join(H200_DIR, "p2pBandwidthLatencyTest.txt")

# What PyTorch, CuPy and NCCL print for a device index the process cannot see (their own wording:
# c10/cuda/CUDAException, cupy_backends/cuda/api/runtime.pyx, NCCL's init.cc), and an NCCL init error.
TORCH_ORDINAL = ("Traceback (most recent call last):\n  File \"t.py\", line 2, in <module>\n    torch.cuda.set_device(1)\n"
                 "RuntimeError: CUDA error: invalid device ordinal\n"
                 "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n")
CUPY_ORDINAL = ("Traceback (most recent call last):\n  File \"c.py\", line 3, in <module>\n    cupy.cuda.Device(1).use()\n"
                "  File \"cupy/cuda/device.pyx\", line 197, in cupy.cuda.device.Device.use\n"
                "cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorInvalidDevice: invalid device ordinal\n")
NCCL_INIT = ("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, "
             "invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.21.5\n"
             "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n"
             "Last error:\nDuplicate GPU detected : rank 1 and rank 0 both on CUDA device 18000\n")
CONTEXT_ONLY_CLASSES = {"nvls_multicast_failure", "fabric_manager_not_running", "fabric_manager_version_mismatch"}


def run(argv, capsys):
    code = cli.main(argv)
    out = capsys.readouterr()
    return code, out.out, out.err


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return str(p)


def confident(doc):
    return [m for m in doc["matches"] if m["confidence"] in ("likely", "possible")]


# ---- the fact classification ---------------------------------------------------------------------

def test_every_fact_key_has_a_role_and_the_symptom_keys_are_known_facts():
    for key in FACT_KEYS:
        assert role(key) in ("symptom", "context", "state"), key
    assert set(SYMPTOM_KEYS) <= set(FACT_KEYS) and set(STATE_KEYS) <= set(FACT_KEYS)
    for key in ("host.container", "host.virtualized", "host.driver_version", "gpu.name", "host.cpu_vendor", "gpu.mig",
                "host.nvswitch_present", "pair.nvlink_count", "env.NCCL_P2P_DISABLE"):
        assert role(key) == "context", key
    for key in ("error.cuda", "symptom.hang", "tool.verification_error", "nccl.p2p_fallback", "gpu.nvlink_down"):
        assert role(key) == "symptom", key


@pytest.mark.parametrize("key, value, symptom", [
    ("p2p.read", "OK", False), ("p2p.read", "CHIPSET_NOT_SUPPORTED", True),
    ("p2p.pci", "NOT_SUPPORTED", False),  # every NVLink pair: not a fault
    ("nccl.transport", "P2P/CUMEM", False), ("nccl.transport", "SHM/direct/direct", True),
    ("gpu.fabric_state", "COMPLETED", False), ("gpu.fabric_state", "IN_PROGRESS", True),
    ("gpu.nvlink_down", 0, False), ("gpu.nvlink_down", 2, True), ("symptom.hang", False, False),
    ("host.container", "docker", False),
])
def test_a_facts_role_can_depend_on_its_value(key, value, symptom):
    assert is_symptom(key, value) is symptom


def test_every_next_command_reads_a_known_fact():
    for fact in NEXT_COMMAND:
        assert fact in FACT_KEYS or fact.startswith("env."), fact


# ---- no entry on context alone -------------------------------------------------------------------

def _kb_with(tmp_path, **entries):
    return kb_from(KB.get("cuda/too-many-peers"), tmp_path, **entries)


def host(**facts):
    return [Finding("host.facts", "host", "ok", "host", [], {k.replace("__", "."): v for k, v in facts.items()})]


def test_context_that_every_require_holds_on_does_not_offer_an_entry(tmp_path):
    kb = _kb_with(tmp_path, ctx={"match": {"require": [{"fact": "host.container", "present": True}],
                                           "support": [{"fact": "host.virtualized", "equals": True}]}},
                  sym={"match": {"require": [{"fact": "host.container", "present": True}],
                                 "trigger": [{"fact": "symptom.hang", "equals": True}]}})
    assert match(kb, findings=host(host__container="docker", host__virtualized=True)) == []
    ranked = match(kb, findings=host(host__container="docker", symptom__hang=True))
    assert [m.entry.id for m in ranked] == ["test/sym"] and ranked[0].confidence != "unsure"


def test_a_log_condition_is_context_not_a_symptom(tmp_path):
    kb = _kb_with(tmp_path, about={"match": {"require": [{"fact": "log", "regex": r"\bNCCL\b"}]}})
    assert match(kb, "NCCL INFO Channel 00/02 : 0[0] -> 1[1] via P2P/CUMEM\n") == []


def test_the_single_gpu_h100_capture_answers_no_entry_for_its_real_errors(tmp_path, capsys):
    """The bug of issue 22: on this host (VM, container, no NVSwitch) every error was answered with
    nccl/nvls-multicast-in-container, possible, on 'inside a container' alone."""
    snap = open_snapshot(replay=H100)
    findings = findings_for(snap) + pair_fact_findings(snap)
    assert match(KB, findings=findings) == []  # the dashboard's and doctor's view of the host
    for name, text in (("torch.txt", TORCH_ORDINAL), ("cupy.txt", CUPY_ORDINAL), ("nccl.txt", NCCL_INIT)):
        code, out, _ = run(["explain", write(tmp_path, name, text), "--replay", H100, "--json"], capsys)
        doc = json.loads(out)
        assert code == 0
        ids = [m["id"] for m in doc["matches"]]
        assert "nccl/nvls-multicast-in-container" not in ids, name
        assert not any(m["failure_class"] in CONTEXT_ONLY_CLASSES for m in doc["matches"]), (name, ids)
        for m in doc["matches"]:
            # whatever is offered rests on a line of the text, not on the host's context
            assert any("line" in r for r in m["reasons"]), (name, m["id"], m["reasons"])
    code, out, _ = run(["doctor", "--replay", H100], capsys)
    assert "nvls" not in out and "0 of " in out and "Result: nothing wrong found (exit 0)" in out


def test_one_gpu_rules_pair_entries_out_even_on_their_own_text():
    text = "RuntimeError: CUDA error: peer access is not supported between these two devices\n"
    assert match(KB, text)  # the text alone: the 217 family
    one = host(host__gpu_count=1)
    assert [m.entry.id for m in match(KB, text, one) if m.entry.failure_class == "p2p_unsupported_topology"] == []


def test_no_nvswitch_and_no_nvlink_rule_nvls_and_fabric_manager_out():
    nvls = "transport/nvls.cc:251 NCCL WARN Cuda failure 1 'invalid argument'\n"
    fm = "cudaGetDeviceCount returned error 802: system not yet initialized\n"
    assert {"nccl/nvls-multicast-in-container"} <= {m.entry.id for m in match(KB, nvls)}
    assert {"fabric-manager/not-running-system-not-initialized"} <= {m.entry.id for m in match(KB, fm)}
    pcie = [Finding("pair.facts", "pair:0-1", "ok", "pair", [], {"pair.nvlink_count": 0, "pair.path": "PHB", "p2p.read": "OK"})] \
        + host(host__nvswitch_present=False, host__gpu_count=2)
    for text in (nvls, fm):
        assert not [m for m in match(KB, text, pcie) if m.entry.failure_class in CONTEXT_ONLY_CLASSES], text
    # the PCIe demos: diagnose knows there is no NVSwitch
    for demo in ("rtx4090-2gpu", "pcie-4gpu-iommu"):
        snap = open_snapshot(demo=demo)
        got = match_grouped(KB, nvls, findings_for(snap) + pair_fact_findings(snap))
        assert not [m for m, _ in got if m.entry.failure_class in CONTEXT_ONLY_CLASSES], demo


# ---- one matcher: text facts join host facts, the host wins, origins are named ------------------------

def text_finding(subject, line, **facts):
    return Finding("text.test", subject, "info", "from the paste", [f"line {line} of the paste: ..."],
                   {k.replace("__", "."): v for k, v in facts.items()})


def test_where_text_and_host_disagree_the_host_wins_and_the_answer_says_so():
    snap = open_snapshot(demo="h200x2-vm")
    hostf = findings_for(snap) + pair_fact_findings(snap)
    paste = [text_finding("pair:0-1", 14, p2p__read="CHIPSET_NOT_SUPPORTED"),
             text_finding("host", 3, error__cuda="cudaErrorPeerAccessUnsupported")]
    text = "\n\nRuntimeError: CUDA error: peer access is not supported between these two devices\n"
    got = match_grouped(KB, text, hostf + paste, origin="demo")
    assert got
    notes = [n for m, _ in got for n in m.notes]
    assert any("line 14 of the paste says p2p.read = CHIPSET_NOT_SUPPORTED" in n and "the demo says OK" in n for n in notes), notes
    for m, _ in got:  # the pasted CNS is not used: no entry stands on a failing P2P status
        assert not any("p2p.read = CHIPSET_NOT_SUPPORTED" in r for r in m.facts_for), m.reasons


def test_facts_per_pair_stay_per_pair():
    pairs = [Finding("pair.facts", "pair:0-1", "ok", "", [], {"pair.path": "NV18", "pair.nvlink_count": 18, "p2p.read": "OK"}),
             Finding("p2p.not_supported", "pair:0-2", "problem", "", [], {"pair.path": "SYS", "pair.cross_socket": True,
                                                                          "p2p.read": "CHIPSET_NOT_SUPPORTED", "gpu.consumer": False})]
    got = match_grouped(KB, findings=pairs + host(host__gpu_count=3))
    cross = {m.entry.id: label for m, label in got}
    assert cross.get("cuda/peer-access-unsupported-cross-socket") == "GPU0->GPU2"
    assert all(label != "GPU0->GPU1" for label in cross.values())


def test_every_reason_names_where_its_fact_came_from():
    snap = open_snapshot(demo="rtx4090-2gpu")
    text = "\nGPU 0: NVIDIA GeForce RTX 4090\nRuntimeError: CUDA error: peer access is not supported between these two devices\n"
    paste = [text_finding("host", 2, gpu__name="NVIDIA GeForce RTX 4090")]
    (top, label), *_ = match_grouped(KB, text, findings_for(snap) + pair_fact_findings(snap) + paste, origin="demo")
    assert top.entry.id == "cuda/peer-access-unsupported-consumer-gpu" and label.startswith("GPU0->GPU1")
    assert top.reasons[0].startswith("regex matched line 3:")
    assert any(r.endswith(", demo)") for r in top.reasons), top.reasons


def test_a_healthy_nv18_pair_is_known_so_a_log_about_it_is_not_asked_about_p2p(capsys, tmp_path):
    """NCCL_P2P_LEVEL=LOC made NCCL go via SHM on the H200 host's NV18 pair: the pair's facts come
    from the host (P2P OK, 18 NVLinks), so the answer names the fallback, not 'would decide: p2p.read'."""
    log = ("vm:1637:1637 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to LOC\n"
           "vm:1637:1650 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via SHM/direct/direct\n"
           "vm:1638:1651 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via SHM/direct/direct\n")
    code, out, _ = run(["explain", write(tmp_path, "loc.log", log), "--demo", "h200x2-vm", "--json"], capsys)
    doc = json.loads(out)
    assert any(s.startswith("nccl.p2p_fallback = True") for s in doc["symptoms"]), doc["symptoms"]
    assert "p2p.read" not in doc["deciding_facts"] and not any("p2p.read" in m["deciding_facts"] for m in doc["matches"])
    assert not confident(doc) or all(m["failure_class"] == "nccl_env_misconfig" for m in confident(doc))


# ---- never silent where there is evidence ------------------------------------------------------------

def test_symptoms_without_matching_text_give_unsure_candidates_with_facts_and_a_next_command():
    hang = [text_finding("host", 7, symptom__hang=True)]
    got = match(KB, "training hangs at the first all-reduce\n", hang)
    assert got and all(m.confidence == "unsure" and m.score < POSSIBLE for m in got)
    classes = {m.entry.failure_class for m in got}
    assert "iommu_acs_p2p_broken" in classes
    for m in got:
        assert any("symptom.hang = True, line 7 of the paste" in r for r in m.facts_for), m.facts_for
        assert m.deciding_facts and m.next_command and m.next_command["command"]
    acs = next(m for m in got if m.entry.id == "pcie/acs-redirect-blocks-p2p")
    assert acs.next_command == {"fact": "host.acs_redirect", "command": "sudo lspci -vvv | grep -i acsctl"}


def test_candidates_on_facts_alone_whose_conditions_are_known_false_are_ruled_out():
    hang = text_finding("host", 1, symptom__hang=True)
    assert "iommu/p2p-hang-or-corruption" in {m.entry.id for m in match(KB, "hang\n", [hang])}
    off = Finding("host.facts", "host", "ok", "", [], {"host.iommu_active": False})
    assert "iommu/p2p-hang-or-corruption" not in {m.entry.id for m in match(KB, "hang\n", [hang, off])}


def test_an_entry_on_its_text_keeps_the_facts_against_it():
    e217 = "RuntimeError: CUDA error: peer access is not supported between these two devices\n"
    m = {m.entry.id: m for m in match(KB, e217, [Finding("pair.facts", "pair:0-1", "ok", "", [], {"gpu.consumer": False})], origin="live host")}
    consumer = m["cuda/peer-access-unsupported-consumer-gpu"]
    assert consumer.facts_against == ["GeForce-class GPU (gpu.consumer = False, live host)"]
    assert consumer.score < POSSIBLE


def test_explain_json_carries_candidates_confidence_origins_and_the_next_command(tmp_path, capsys, monkeypatch):
    import p2ptop.commands.explain as ex

    from p2ptop.evidence import Evidence

    ev = Evidence([text_finding("host", 2, symptom__hang=True, text__framework="pytorch")], ["description"], True)

    def stub(text, log=None, links=None):  # the evidence reader's answer fixed, so the test is about the matcher and explain
        if log is not None:
            log.evidence = list(ev.findings)
        return ev

    monkeypatch.setattr(ex, "read_evidence", stub)
    code, out, _ = run(["explain", write(tmp_path, "d.txt", "we use pytorch\nit hangs forever\n"), "--text-only", "--json"], capsys)
    doc = json.loads(out)
    assert doc["answer"] == "unsure" and doc["matches"] and doc["next_command"]["command"]
    assert doc["symptoms"] == ["symptom.hang = True (line 2 of the paste)"]
    m = doc["matches"][0]
    assert m["confidence"] == "unsure" and m["facts_for"] and "next_command" in m and "facts_against" in m
    code, out, _ = run(["explain", write(tmp_path, "d.txt", "we use pytorch\nit hangs forever\n"), "--text-only"], capsys)
    assert "Unsure:" in out and "Next: $ " in out and "(unsure)" in out and "symptom.hang = True (line 2 of the paste)" in out


def test_a_text_without_any_trace_of_gpus_is_answered_in_words(tmp_path, capsys):
    code, out, _ = run(["explain", write(tmp_path, "x.txt", "the build failed: missing semicolon in main.c\n"), "--text-only"], capsys)
    assert code == 0 and "no trace of GPUs or P2P" in out
    code, out, _ = run(["explain", write(tmp_path, "x.txt", "the build failed: missing semicolon in main.c\n"), "--text-only", "--json"], capsys)
    doc = json.loads(out)
    assert doc["answer"] == "no_gpu_trace" and doc["matches"] == [] and doc["gpu_related"] is False


# ---- healthy hosts and logs: no failure entry likely or possible ------------------------------------

HEALTHY_HOSTS = [["--demo", "h200x2-vm"], ["--replay", H200_LIVE], ["--replay", H100]]


@pytest.mark.parametrize("host_args", HEALTHY_HOSTS, ids=["h200x2-vm-demo", "h200x2-live", "h100x1-vm"])
@pytest.mark.parametrize("log", [NCCL_HEALTHY, P2P_TEST, None], ids=["nccl-via-p2p", "p2pBandwidthLatencyTest", "no-log"])
def test_healthy_hosts_and_logs_get_no_failure_entry(host_args, log, capsys):
    code, out, _ = run(["explain"] + ([log] if log else []) + host_args + ["--json"], capsys)
    doc = json.loads(out)
    assert code == 0 and confident(doc) == [], [(m["id"], m["reasons"]) for m in confident(doc)]
    assert doc["answer"] == "healthy", (doc["answer"], doc["symptoms"])
    code, out, _ = run(["explain"] + ([log] if log else []) + host_args, capsys)
    assert "No sign of P2P trouble" in out


@pytest.mark.parametrize("log", [NCCL_HEALTHY, P2P_TEST], ids=["nccl-via-p2p", "p2pBandwidthLatencyTest"])
def test_healthy_logs_alone_get_no_failure_entry(log, capsys):
    code, out, _ = run(["explain", log, "--text-only", "--json"], capsys)
    doc = json.loads(out)
    assert confident(doc) == [] and doc["answer"] == "healthy", (doc["answer"], doc["symptoms"], doc["matches"][:1])


@pytest.mark.parametrize("host_args", HEALTHY_HOSTS, ids=["h200x2-vm-demo", "h200x2-live", "h100x1-vm"])
def test_doctor_on_healthy_hosts_offers_no_entry(host_args, capsys):
    code, out, _ = run(["doctor"] + host_args + ["--json"], capsys)
    doc = json.loads(out)
    assert doc["knowledge"]["matches"] == [], doc["knowledge"]["matches"]


def test_a_pasted_pair_joins_both_directions_of_the_hosts_pair():
    from p2ptop.knowledge.matcher import finding_groups

    snap = open_snapshot(demo="h200x2-vm")
    paste = [text_finding("pair:0-1", 5, nccl__transport="SHM/direct/direct")]
    groups = finding_groups(findings_for(snap) + pair_fact_findings(snap) + paste)
    assert set(groups) == {"GPU0->GPU1", "GPU1->GPU0"}
    for fs in groups.values():
        assert paste[0] in fs


def test_diagnose_says_no_nvswitch_only_where_the_nvlinks_were_read():
    from p2ptop.diagnose import host_facts

    assert host_facts(open_snapshot(demo="rtx4090-2gpu"))["host.nvswitch_present"] is False
    assert host_facts(open_snapshot(replay=H100))["host.nvswitch_present"] is False  # NVML: NVLink "Not Supported"
    assert host_facts(open_snapshot(demo="h200x2-vm"))["host.nvswitch_present"] is True
    snap = open_snapshot(demo="rtx4090-2gpu")
    snap.gpus[0].na["nvlinks"] = "GPU is lost"
    assert "host.nvswitch_present" not in host_facts(snap)


def test_healthy_pairs_facts_are_findings_for_matching_only():
    snap = open_snapshot(demo="h200x2-vm")
    pf = pair_fact_findings(snap)
    assert {f.subject for f in pf} == {"pair:0-1", "pair:1-0"} and all(f.severity == "ok" for f in pf)
    assert pf[0].facts["p2p.read"] == "OK" and pf[0].facts["pair.nvlink_count"] > 0
    assert not [f for f in findings_for(snap) if f.id == "pair.facts"]  # doctor and the report do not list them


def test_a_text_that_does_not_mention_a_thing_leaves_it_unknown_not_false(tmp_path):
    kb = _kb_with(tmp_path, wsl={"regex": "Could not find real path", "match": {"require": [{"fact": "log", "regex": "WSL"}]}})
    (m,) = match(kb, "NCCL WARN Could not find real path of /sys/class/pci_bus/0000:21\n")
    assert not m.facts_against and "log" not in m.deciding_facts and m.score > 0.5


def test_narrowing_lines_by_literals_never_misses_a_line_a_pattern_matches():
    """first_line picks candidate lines by the rarest literal sets of each branch; on every entry's
    examples (and the healthy NCCL log) it finds what a search of every line finds."""
    from p2ptop.knowledge.matcher import Log

    with open(NCCL_HEALTHY, encoding="utf-8") as f:
        texts = [f.read()] + [ex["text"] for e in KB.entries for ex in e.examples]
    patterns = [rx for e in KB.entries for rx in e.patterns]
    for text in texts:
        log = Log(text)
        for rx in patterns:
            brute = next((n for n, line in enumerate(log.lines, 1) if rx.search(line)), None)
            assert log.first_line(rx) == brute, (rx.pattern, text[:80])


def test_on_a_long_text_literals_proven_absent_by_its_words_never_hide_a_line():
    """Past COUNT_SAMPLE characters the matcher counts literals on a sample and proves a literal absent by the
    text's distinct words (Log._absent). Every entry's examples placed in the middle of a long healthy log, out
    of the sample, are still found on the same line a search of every line finds; and a literal made of two
    words that are both in the text, but never side by side, is not taken as absent (no false absence)."""
    from p2ptop.knowledge import matcher
    from p2ptop.knowledge.matcher import Log

    with open(NCCL_HEALTHY, encoding="utf-8") as f:
        healthy = f.read()
    filler = healthy * (matcher.COUNT_SAMPLE // len(healthy) + 1)
    middle = "\n".join(ex["text"] for e in KB.entries for ex in e.examples)
    log = Log(filler + "\n" + middle + "\n" + filler)
    assert not log._exact
    hits: dict[tuple[str, str], bool] = {}
    for rx in [rx for e in KB.entries for rx in e.patterns]:
        brute = None
        for n, line in enumerate(log.lines, 1):
            key = (rx.pattern, line)
            if key not in hits:
                hits[key] = bool(rx.search(line))
            if hits[key]:
                brute = n
                break
        assert log.first_line(rx) == brute, rx.pattern
    assert log._absent("no such wordzzz") and not log._absent("nccl info") and not log._absent("info nccl")


def test_a_short_run_joined_to_the_alternation_after_it_is_a_literal_set():
    """'2\\.' alone is too short to narrow a search; joined to the alternation right after it, each branch's
    leading characters make one literal per branch (2.1, 2.2), so an NCCL-version condition over a 20 MB log
    searches the lines holding them instead of the whole text. A branch with no leading character gives none."""
    from p2ptop.knowledge.regex_safety import literal_sets

    assert ("2.1", "2.2") in literal_sets(r"(?:NCCL version |NCCL-?|<= ?)2\.(?:1\d|2[0-2])\.\d")[0]
    assert all(len(st) == 1 for st in literal_sets(r"err(?:\d+|or) code")[0])  # "err" + a branch led by \d: no joined set
    assert ("sm_80", "sm_90") in literal_sets(r"sm_(?:80|90)")[0]
