"""nvbandwidth's JSON output (nvbandwidth -j, json_output.cpp) reads as its text output does: the real capture of the
two-H200 host (tests/fixtures/captures/h200x2-nvswitch-vm/nvbandwidth.json) is healthy; the variants below change one
thing of it each, as nvbandwidth itself would print it (a slow matrix, a pair printed N/A, a waived device-to-device test,
the pattern check's error), and are labelled as edited copies, not captures."""

import json
import os

from p2ptop.evidence import read_text

CAPTURE = os.path.join(os.path.dirname(__file__), "fixtures", "captures", "h200x2-nvswitch-vm", "nvbandwidth.json")


def _doc():
    with open(CAPTURE, encoding="utf-8") as fh:
        return json.load(fh)


def _facts(doc_or_text):
    text = doc_or_text if isinstance(doc_or_text, str) else json.dumps(doc_or_text, indent="\t")
    ev = read_text(text)
    return {(f.subject, k): v for f in ev.findings for k, v in f.facts.items()}, ev


def _d2d(doc):
    return [t for t in doc["nvbandwidth"]["testcases"] if t["name"].startswith("device_to_device")]


def test_the_real_capture_is_nvbandwidth_and_healthy():
    with open(CAPTURE, encoding="utf-8") as fh:
        facts, ev = _facts(fh.read())
    assert "nvbandwidth" in ev.kinds
    assert facts[("gpu:0", "gpu.name")] == "NVIDIA H200" and facts[("gpu:1", "gpu.name")] == "NVIDIA H200"
    assert not any(k[1].startswith(("symptom.", "tool.")) for k in facts)
    assert ("pair:0-1", "p2p.read") not in facts


def test_a_slow_device_to_device_matrix_is_slow():
    doc = _doc()
    for t in _d2d(doc):
        t["bandwidth_matrix"] = [[c if c == "N/A" else f"{float(c) / 15:.3f}" for c in row] for row in t["bandwidth_matrix"]]
    facts, ev = _facts(doc)
    assert facts.get(("host", "symptom.slow")) is True
    assert facts.get(("pair:0-1", "bench.verdict")) == "slow"


def test_a_pair_printed_na_had_no_peer_access():
    doc = _doc()
    t = next(t for t in _d2d(doc) if "->" in t["bandwidth_description"] and "<->" not in t["bandwidth_description"])
    t["bandwidth_matrix"] = [["N/A", "N/A"], ["N/A", "N/A"]]
    facts, _ = _facts(doc)
    assert facts.get(("pair:0-1", "p2p.read")) == "NOT_SUPPORTED"


def test_a_waived_device_to_device_test_means_no_pair_can_access_another():
    doc = _doc()
    doc["nvbandwidth"]["testcases"] = [{"name": "device_to_device_memcpy_read_ce", "status": "Waived"}] + [
        t for t in doc["nvbandwidth"]["testcases"] if not t["name"].startswith("device_to_device")]
    facts, _ = _facts(doc)
    assert facts.get(("pair:0-1", "p2p.read")) == "NOT_SUPPORTED"


def test_the_pattern_checks_error_is_wrong_data():
    doc = _doc()
    t = _d2d(doc)[0]
    t["status"] = "Error"
    t["error"] = "ASSERT in expression h_errorFlag == 0 in void memcmpPatternHelper(CUstream, ...) : memcpy.cpp:134"
    facts, _ = _facts(doc)
    assert facts.get(("host", "tool.verification_error")) is True and facts.get(("host", "symptom.wrong_results")) is True


def test_prose_around_the_json_and_a_cut_json_do_not_lose_it():
    with open(CAPTURE, encoding="utf-8") as fh:
        raw = fh.read()
    facts, ev = _facts("Here is `nvbandwidth -j` on the box:\n" + raw + "\nany idea?\n")
    assert "nvbandwidth" in ev.kinds and facts[("gpu:1", "gpu.name")] == "NVIDIA H200"
    facts, ev = _facts(raw[: len(raw) // 2])  # cut: the text reader reads what it can, nothing raises
    assert ev.failed_parsers == []

