"""A knowledge base of test entries built from a real entry of the bundled KB (for matcher tests)."""

from __future__ import annotations

import copy
import functools
import json

from p2ptop.knowledge.loader import load_paths


def kb_from(base_entry, tmp_path, **entries):
    """One entry per keyword, ``test/NAME``: ``base_entry``'s data with its regexes, codes and examples
    cleared and ``changes`` applied; loaded from ``tmp_path``, which must load without problems."""
    base = copy.deepcopy(base_entry.data)
    for name, changes in entries.items():
        d = dict(base, id=f"test/{name}", examples=[], transition_graph={}, error_codes=[], error_code=None)
        d.update({"regex": "", "regexes": [], **changes})
        (tmp_path / f"{name}.json").write_text(json.dumps(d), encoding="utf-8")
    kb = load_paths([tmp_path])
    assert kb.problems == []
    return kb



@functools.lru_cache(maxsize=1)
def bundled_kb():
    """The bundled knowledge base, loaded once for every test module that asks."""
    from p2ptop.knowledge import load_kb

    return load_kb()


def text_facts(text):
    """The facts read from a pasted text, by subject ("host", "gpu:N", "pair:A-B")."""
    from p2ptop.evidence import read_text

    return read_text(text).facts_by_subject()


def flat_facts(text):
    """Every fact read from a pasted text, whatever its subject (a key read for several subjects: the last one's value)."""
    from p2ptop.evidence import read_text

    return {k: v for f in read_text(text).findings for k, v in f.facts.items()}


def host_facts(text):
    """The host-level facts read from a pasted text."""
    return text_facts(text).get("host", {})


def answer(text, findings=()):
    """The bundled-KB answer to a text as (class, confidence, benign, entry id), best first."""
    from p2ptop.knowledge import match

    return [(m.entry.failure_class, m.confidence, m.entry.benign, m.entry.id) for m in match(bundled_kb(), text, findings)]


def alarms(text):
    """Failure entries offered as likely or possible (what a healthy text must not get)."""
    return [a for a in answer(text) if a[1] in ("likely", "possible") and not a[2]]


def classes(text, n=3):
    """The classes of ``p2ptop explain``'s first ``n`` entries for a text alone (unsure ones included), best first."""
    from p2ptop.commands.explain import explain

    return [m.entry.failure_class for m, _ in explain(bundled_kb(), text, [], n)]


def top3(text):
    return [a[0] for a in answer(text)[:3]]


def explained(text):
    """``p2ptop explain``'s answer to a text alone, as (class, confidence), best first."""
    from p2ptop.commands.explain import explain

    return [(m.entry.failure_class, m.confidence) for m, _ in explain(bundled_kb(), text, [], None)]


def first_entry(text):
    """``p2ptop explain``'s first entry for a text alone, as (entry id, confidence); (None, None) when it offers none."""
    from p2ptop.commands.explain import explain

    got = explain(bundled_kb(), text, [], 3)
    return (got[0][0].entry.id, got[0][0].confidence) if got else (None, None)


@functools.lru_cache(maxsize=None)
def _perturb_corpus():
    """benchmarks/perturb_corpus.py, loaded once: its changes are how the tests make a paste's forms too."""
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parent.parent / "benchmarks" / "perturb_corpus.py"
    sys.path.insert(0, str(path.parent))
    try:
        spec = importlib.util.spec_from_file_location("perturb_corpus_for_tests", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


def perturbation(name):
    """The change ``name`` of benchmarks/perturb_corpus.py (a function of the text): "wrap80", "fullwidth", "gfm", "bat" ..."""
    return _perturb_corpus().CHANGES[name]


#: the real pastes the form tests change (tests/fixtures/pastes, their sources in its index.json): an error, a topo -m
#: with NIC rows, p2pBandwidthLatencyTest, dmesg, nccl-tests, a JAX traceback (the first six: the forty-first session's),
#: lspci, nvidia-smi -q and a description
FORM_PASTES = ["error-trtllm-1625-peer-access.txt", "topo-m-4090x8-tabs-nics.txt", "p2pBandwidthLatencyTest-mixed-peers.txt",
               "dmesg-cuda-samples-48-amd-vi.txt", "nccl-tests-4090x8-devices.txt", "error-jax-17399-nccl-init.txt",
               "lspci-plx-acs-redirect.txt", "smi-q-text-passthrough.txt", "prose-en-nccl-631-freeze.txt"]


def pasted(name):
    """A real paste of tests/fixtures/pastes (its source in that folder's index.json), its last line end left off: what
    the form tests change with a perturbation."""
    from pathlib import Path

    return (Path(__file__).resolve().parent / "fixtures" / "pastes" / name).read_text(encoding="utf-8").rstrip("\n")
