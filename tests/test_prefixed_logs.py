"""Real NCCL logs behind torchrun's --tee prefix and NCCL's own timestamps (tests/fixtures/device/h200x2-prefixed-logs, a
device run on two H200s) are answered as the same logs without the prefix are, and as their settings say: the healthy
ones healthy, NCCL_P2P_DISABLE=1 by the variable's entry first, NCCL_P2P_LEVEL=LOC by the LOC entry, likely."""

import os
import re

import pytest

from p2ptop.commands.explain import answer
from p2ptop.knowledge import load_kb

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "device", "h200x2-prefixed-logs")
KB = load_kb()
#: what the launcher and NCCL put before each line in these logs, removed to get the plain log
_PREFIX = re.compile(r"^(?:\[default\d+\]:)?(?:\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] )?", re.M)
EXPECTED = {
    "tee-healthy.log": ("healthy", None, None),
    "ts-healthy.log": ("healthy", None, None),
    "tee-p2p-disable.log": (None, "nccl/p2p-disabled-by-env", None),
    "ts-p2p-disable.log": (None, "nccl/p2p-disabled-by-env", None),
    "tee-ts-p2p-level-loc.log": ("matches", "nccl/p2p-level-loc-disables-p2p", "likely"),
}


def _answer(text):
    got = answer(KB, text, [], 3, "host")
    return got["kind"], [(m.entry.id, m.confidence) for m, _ in got["results"]]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_a_prefixed_real_log_reads_as_its_plain_form(name):
    with open(os.path.join(HERE, name), encoding="utf-8") as fh:
        text = fh.read()
    plain = _PREFIX.sub("", text)
    assert plain != text
    kind, top = _answer(text)
    assert (kind, top) == _answer(plain)
    want_kind, want_first, want_conf = EXPECTED[name]
    if want_kind:
        assert kind == want_kind
    if want_first:
        assert top and top[0][0] == want_first
    if want_conf:
        assert top[0][1] == want_conf
