"""Real outputs of a healthy two-H200 host (tests/fixtures/device/h200x2-healthy-outputs, device runs): each, explained
with the text alone, is healthy (or, for a sample whose output names no GPU, "no trace of GPUs"): no failure entry and no
unsure lead, and no symptom read from it. Before the sixteenth session, nvlink -s/-c/-e/-gt under their command line,
dmesg's NVLink boot lines and topo -p2p n got unsure leads."""

import glob
import os

import pytest

from p2ptop.commands.explain import answer
from p2ptop.evidence import read_text
from p2ptop.knowledge import load_kb

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "device", "h200x2-healthy-outputs")
FILES = sorted(glob.glob(os.path.join(HERE, "*.txt")))
KB = load_kb()


def test_the_fixtures_are_there():
    assert len(FILES) == 19


@pytest.mark.parametrize("path", FILES, ids=[os.path.basename(p) for p in FILES])
def test_a_healthy_hosts_output_is_healthy(path):
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    got = answer(KB, text, [], 3, "host")
    assert got["kind"] in ("healthy", "no_gpu_trace"), (got["kind"], [m.entry.id for m, _ in got["results"]])
    assert not got["results"]
    ev = read_text(text)
    assert not [f for f in ev.findings for k in f.facts if k.startswith(("symptom.", "error.", "tool."))]
