"""regex_safety.LiteralGate: a search of a long text skipped where the text lacks the literals every match needs,
and the same answer as the regex itself everywhere (the prose reader's patterns run through it)."""

import re

import pytest

from p2ptop.evidence import prose
from p2ptop.knowledge.regex_safety import GATE_MIN, GATE_PARSE_MIN, LiteralGate

FILLER = "w1127 12:00:00.000 123 torch/distributed/run.py:792] setting omp_num_threads environment variable\n" * 80


def _gates():
    return [(name, v) for name, v in vars(prose).items() if isinstance(v, LiteralGate)]


def test_prose_patterns_are_gated():
    assert len(_gates()) > 50


@pytest.mark.parametrize("tail", [
    "", "it works with nccl_p2p_disable=1\n", "two rtx 4090 cards hang in all_reduce inside a proxmox vm\n",
    "nccl 2.21.5 hangs, 2.20.5 works. 显卡之间 p2p 不通\n", "the job is stuck at 100% gpu util after upgrading the driver to 550\n",
])
def test_gate_answers_as_the_regex(tail):
    text = FILLER + tail + FILLER
    assert len(text) >= GATE_MIN
    for name, gate in _gates():
        m1, m2 = gate.search(text), gate.rx.search(text)
        assert (m1 and m1.span()) == (m2 and m2.span()), name
        assert [m.span() for m in gate.finditer(text)] == [m.span() for m in gate.rx.finditer(text)], name


def test_absent_literal_skips_and_present_finds():
    gate = LiteralGate(re.compile(r"\bpeer access (?:is )?not (?:supported|available)"))
    # the first short text is searched as it is (the parse of the literals would cost more than the search it saves)
    assert gate.search(FILLER) is None and gate.possible(FILLER)
    text = FILLER + "error: peer access not available\n"  # a second text: the literals are asked first
    assert gate.possible(text) and gate.search(text).group(0) == "peer access not available"
    assert not gate.possible(FILLER + "\n") and gate.search(FILLER + "\n") is None
    assert list(gate.finditer(FILLER + " ")) == [] and gate.findall(FILLER + "  ") == []


def test_a_long_first_text_is_gated_at_once():
    long = FILLER * (GATE_PARSE_MIN // len(FILLER) + 1)
    gate = LiteralGate(re.compile(r"\bpeer access (?:is )?not (?:supported|available)"))
    assert not gate.possible(long) and gate.search(long) is None


def test_case_that_the_literals_cannot_decide_is_not_gated():
    upper = FILLER + "NCCL WARN\n"
    assert LiteralGate(re.compile(r"NCCL WARN")).search(upper) is not None  # upper-case literal: searched directly
    assert LiteralGate(re.compile(r"nccl warn", re.I)).search(upper) is not None  # case-blind: searched directly
    assert LiteralGate(re.compile(r"(?i)nccl warn")).search(upper) is not None
    assert LiteralGate(re.compile(r"\x4eCCL WARN")).search(upper) is not None  # a letter spelt as an escape


def test_match_is_not_gated_and_attributes_pass_through():
    rx = re.compile(r"(?P<v>\d+)\s*gpus?")
    gate = LiteralGate(rx)
    assert gate.match("8 gpus").group("v") == "8"
    assert gate.pattern == rx.pattern and gate.groupindex == rx.groupindex


def test_gate_remembers_one_text_only():
    gate = LiteralGate(re.compile(r"cuda ipc"))
    a, b = FILLER + "cuda ipc\n", FILLER + "nothing\n"
    assert gate.search(a) and gate.search(b) is None and gate.search(a)
