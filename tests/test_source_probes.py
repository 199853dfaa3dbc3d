"""Coverage from the sources: every message the software itself prints about P2P trouble reaches its class.

tests/data/source_probes.json holds pastes written from the format strings of NCCL (transport/p2p.cc, shm.cc,
nvls.cc, transport.cc, graph/paths.cc, misc/cudawrap.cc, misc/shmutils.cc and os/linux.cc, os/linux_ipcsocket.cc,
proxy.cc, init.cc), ncclGetErrorString and PyTorch's "NCCL error in: ..." wrapping, CUDA's error strings as PyTorch,
CuPy, XLA/TensorFlow, Numba and the CUDA samples print them, Fabric Manager, nvidia-smi and the kernel's NVRM
Xid/SXid lines: placeholders filled with plausible values, none copied from the evaluation corpus. Each names its
source and the class expected (a list where a message is shared by several classes: any of them is right).

A probe is answered when its class is among the first three entries; a healthy probe (``none``) when no failure
entry is marked likely or possible; a failure probe is also wrong when the first entry marked likely or possible is of
another class, or when its class is reached only on shared words (retrieval) or as a lead. A probe with a ``note`` starting "known gap" is a message no source ties to one class:
it must get an answer, not a given class."""

from __future__ import annotations

import json
import os

import pytest

from p2ptop.commands.explain import explain
from p2ptop.knowledge.entry import BENIGN_CLASSES

from .kbtools import bundled_kb

KB = bundled_kb()
HERE = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(HERE, "data", "source_probes.json"), encoding="utf-8") as _f:
    PROBES = json.load(_f)["probes"]


def _answer(text: str) -> list[dict]:
    out = []
    for m, _label in explain(KB, text, [], None):
        d = m.to_dict()
        d["benign"] = bool(getattr(m.entry, "benign", False)) or d["failure_class"] in BENIGN_CLASSES
        out.append(d)
    return out


def _expected(probe: dict) -> list[str]:
    e = probe["expect"]
    return e if isinstance(e, list) else [e]


def test_probes_are_well_formed():
    from p2ptop.knowledge.entry import FAILURE_CLASSES
    ids = [p["id"] for p in PROBES]
    assert len(ids) == len(set(ids))
    assert len(PROBES) >= 140
    for p in PROBES:
        assert p["text"].strip() and p["source"] and p["message"] and p["family"], p["id"]
        for c in _expected(p):
            assert c == "none" or c in FAILURE_CLASSES, (p["id"], c)


@pytest.mark.parametrize("probe", PROBES, ids=[p["id"] for p in PROBES])
def test_source_probe(probe):
    answer = _answer(probe["text"])
    expected = _expected(probe)
    shown = [f"{a['failure_class']}:{a['confidence']}" for a in answer[:3]]
    confident = [a for a in answer if a["confidence"] in ("likely", "possible") and not a["benign"]]
    if expected == ["none"]:
        assert not confident, f"{probe['id']}: a failure entry offered on a healthy text: {shown}"
        return
    assert answer, f"{probe['id']}: no answer"
    if probe.get("note", "").startswith("known gap"):
        return
    classes = [a["failure_class"] for a in answer[:3]]
    assert any(c in classes for c in expected), f"{probe['id']}: expected {expected}, got {shown}"
    # reached on the entry's own signs (its regex, error code or facts), not only on shared words or as a lead
    hit = next(a for a in answer[:3] if a["failure_class"] in expected)
    assert not (hit["reasons"] or [""])[0].startswith(("retrieval:", "lead:")), \
        f"{probe['id']}: {hit['id']} reached only by {hit['reasons'][0][:60]}"
    if confident:
        assert confident[0]["failure_class"] in expected, f"{probe['id']}: wrong class marked likely: {shown}"
