"""Rules of 2026-11-28 (seventh session), each general, none for one paste.

Before the fresh22 part was judged:
1. Characters a web page or chat hides inside words (soft hyphen, zero-width space and joiners, word joiner, BOM) are
   dropped before reading: "pe\u200ber access is not supported" is CUDA's 217 message.
2. (tests/test_one_gpu_answers.py) an absence read from the host ("no NVSwitch on this host") makes no lead on its own.
"""

from __future__ import annotations

import pytest

from p2ptop.evidence import read_text
from p2ptop.evidence.paste import tidy

from .kbtools import classes

ERR = "RuntimeError: CUDA error: peer access is not supported between these two devices"


@pytest.mark.parametrize("ch", ["\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad"])
def test_invisible_characters_inside_words_are_dropped(ch):
    text = ERR.replace("peer", "pe" + ch + "er").replace("devices", "dev" + ch + "ices")
    assert tidy(text) == ERR
    facts = read_text(text).facts_by_subject()["host"]
    assert facts.get("error.cuda") == "cudaErrorPeerAccessUnsupported"
    assert "error" in read_text(text).kinds


def test_invisible_characters_reach_the_matcher_too():
    text = ERR.replace("supported", "sup\u200bported")
    assert set(classes(text)[:3]) & {"p2p_unsupported_topology", "p2p_unsupported_consumer_gpu", "vm_p2p_unavailable"}


def test_a_bom_at_the_start_of_a_paste_does_not_hide_its_first_line():
    topo = "\ufeff\tGPU0\tGPU1\tCPU Affinity\tNUMA Affinity\nGPU0\t X \tSYS\t0-15\t0\nGPU1\tSYS\t X \t16-31\t1\n"
    ev = read_text(topo)
    assert "nvidia-smi-topo" in ev.kinds
    assert ev.facts_by_subject()["pair:0-1"]["pair.path"] == "SYS"
