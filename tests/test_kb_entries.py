"""The shipped knowledge base: it loads whole, covers every failure class, each entry carries a real
example that matches it, translations and sources are there, and a healthy host matches nothing."""

import glob
import json
import os

import pytest

from p2ptop.diagnose import findings_for
from p2ptop.knowledge import FAILURE_CLASSES, load_kb, load_paths, match
from p2ptop.knowledge.lint import example_findings
from p2ptop.knowledge.paths import builtin_dir
from p2ptop.sources.capture import FakeNvml
from p2ptop.sources.nvml import read_snapshot

from .conftest import FIXTURES, H200_CAPTURE

SEEDS = sorted(glob.glob(os.path.join(FIXTURES, "seeds", "*.txt")))
KB = load_paths([builtin_dir()])
LOGS = os.path.join(FIXTURES, "kb", "logs")


def test_the_built_in_kb_loads_without_problems():
    assert KB.problems == []
    assert len(KB.entries) >= 30


def test_every_failure_class_has_an_entry():
    covered = {e.failure_class for e in KB.entries}
    assert set(FAILURE_CLASSES) - covered == set()


@pytest.mark.parametrize("path", SEEDS, ids=os.path.basename)
def test_the_seed_files_load_and_validate_unchanged(path):
    kb = load_paths([path])
    assert kb.problems == []
    with open(path, encoding="utf-8") as f:
        assert kb.entries[0].data == json.load(f)


def test_the_seed_ids_are_kept_and_the_tensorflow_signature_corrected():
    seeds = [json.load(open(p, encoding="utf-8")) for p in SEEDS]
    for seed in seeds:
        assert KB.get(seed["id"]) is not None
    tf = KB.get("tensorflow/gpu-peer-access-error")
    assert "Unable to enable peer access between device ordinals" in tf.signature
    # the seed's message is not what TensorFlow prints, so it must not be what the entry looks for
    # (the retrieval fallback may still name entries on their words, unsure: not on their regexes)
    said = match(KB, "InternalError: Peer access from GPU:0 to GPU:1 is not supported by the current CUDA driver or device topology")
    assert [m for m in said if m.basis != "retrieval"] == [] and all(m.confidence == "unsure" for m in said)


@pytest.mark.parametrize("entry", KB.entries, ids=lambda e: e.id)
def test_each_entry_ships_a_real_example_that_matches_it_first(entry):
    assert entry.examples, "no example"
    for ex in entry.examples:
        assert ex["source"].startswith(("http", "public", "CUDA")), ex["source"]
        ranked = [m.entry.id for m in match(KB, ex["text"], example_findings(ex))]
        assert ranked and ranked[0] == entry.id, (ex["source"], ranked[:3])


@pytest.mark.parametrize("entry", KB.entries, ids=lambda e: e.id)
def test_each_entry_is_translated_cited_and_honest_about_verification(entry):
    d = entry.data
    assert d["signature_zh"].strip() and d["root_cause_zh"].strip()
    assert len(d["workarounds_zh"]) == len(d["workarounds"]) and all(z.strip() for z in d["workarounds_zh"])
    assert entry.sources and all(s.startswith("http") for s in entry.sources)
    for item in entry.dead_ends + entry.workarounds:
        assert item.get("sources"), item
    assert any(w.get("command") for w in entry.workarounds) or entry.failure_class in ("peer_access_not_enabled",)
    assert d["verification_tier"] in ("source_checked", "issue_reported", "ai_generated", "hardware_verified")
    assert d.get("verification_note")


def _capture_snapshot():
    from p2ptop.sources.capture import Capture

    return read_snapshot(FakeNvml(Capture.load(H200_CAPTURE)), sysfs_root="/nonexistent", hostname="h200")


def test_the_healthy_h200_capture_matches_no_entry():
    snap = _capture_snapshot()
    findings = findings_for(snap)
    assert match(KB, findings=findings) == []
    for name in sorted(os.listdir(H200_CAPTURE)):
        if name == "field_values.json":
            continue  # the fake's model of the host's field-value answers (prose about them), not what the host printed
        with open(os.path.join(H200_CAPTURE, name), encoding="utf-8", errors="replace") as f:
            text = f.read()
        assert match(KB, text, findings) == [], name


def test_a_healthy_pair_with_all_its_facts_matches_nothing():
    """Even ok-severity findings carrying every pair fact (NV18, P2P OK) must not pull an entry in."""
    from p2ptop.diagnose import gpu_facts
    from p2ptop.fabric import Fabric
    from p2ptop.findings import Finding

    snap = _capture_snapshot()
    fab = Fabric(snap)
    facts = {"pair.path": fab.path_class(0, 1), "pair.nvlink_count": fab.nvlink_count(0, 1), "pair.cross_socket": False}
    facts.update({f"p2p.{k}": v for k, v in snap.pair(0, 1).p2p.items()})
    facts.update(gpu_facts(snap.gpu(0)))
    ok = Finding("pair.ok", "pair:0-1", "ok", "healthy", [], facts)
    assert match(KB, findings=[ok] + findings_for(snap)) == []


CASES = json.load(open(os.path.join(LOGS, "index.json"), encoding="utf-8"))


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["file"])
def test_real_logs_match_the_expected_entry_first(case):
    with open(os.path.join(LOGS, case["file"]), encoding="utf-8") as f:
        text = f.read()
    ms = match(KB, text, example_findings({"facts": case.get("facts")}))
    ranked = [m.entry.id for m in ms]
    if case["expect"] is None:
        assert ranked == []
    else:
        assert ranked[:1] == [case["expect"]], ranked[:3]
        if "confidence" in case:
            assert ms[0].confidence == case["confidence"]


def test_load_kb_reads_the_user_dir_and_extra_dirs_later_ones_override(tmp_path, monkeypatch):
    cfg = tmp_path / "cfg"
    (cfg / "p2ptop" / "kb").mkdir(parents=True)
    entry = json.loads(json.dumps(KB.get("cuda/too-many-peers").data))
    entry["root_cause"] = "overridden by the user"
    (cfg / "p2ptop" / "kb" / "mine.json").write_text(json.dumps(entry), encoding="utf-8")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(cfg))
    kb = load_kb()
    assert kb.get("cuda/too-many-peers").root_cause == "overridden by the user"
    assert len(kb.entries) == len(KB.entries)
    extra = tmp_path / "extra"
    extra.mkdir()
    entry["root_cause"] = "overridden by --kb"
    entry2 = dict(entry, id="site/new-entry")
    (extra / "a.json").write_text(json.dumps(entry), encoding="utf-8")
    (extra / "b.json").write_text(json.dumps(entry2), encoding="utf-8")
    kb = load_kb([extra])
    assert kb.get("cuda/too-many-peers").root_cause == "overridden by --kb"
    assert kb.get("site/new-entry") is not None and len(kb.entries) == len(KB.entries) + 1
