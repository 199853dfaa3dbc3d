"""Rules written after fresh13 was judged (2026-11-27, third session), each from its own source, none for one paste.

1. The text says NVIDIA's own driver blocks P2P ("the official driver disabled P2P", "官方驱动把 p2p 堵死了"): that is
   what the stock driver does on GeForce cards (PCIe P2P off; cudaDeviceCanAccessPeer answers 0 on them since the 4000
   series; tinygrad/open-gpu-kernel-modules patches the open modules to turn it back on), never on data-centre cards.
   So it names the cards as consumer ones, unless the text already names the GPU's class."""

from __future__ import annotations

import pytest


from .kbtools import bundled_kb, classes, host_facts

KB = bundled_kb()



@pytest.mark.parametrize("text", [
    "两张卡没有 nvlink，官方驱动好像已经把没link情况下的p2p模式堵死了，all_reduce 只有 7 GB/s",
    "英伟达驱动屏蔽了P2P，两卡通信只能走 CPU。",
    "The official driver has disabled P2P without NVLink, so all-reduce is slow on our two cards.",
    "P2P is blocked by the stock driver on these cards; NCCL all_reduce busbw is 6 GB/s.",
    "nvidia's proprietary driver locks peer-to-peer; we tried the tinygrad patch next.",
])
def test_driver_blocking_p2p_names_consumer_cards(text):
    facts = host_facts(text)
    assert facts.get("gpu.consumer") is True and facts.get("gpu.product_class") == "consumer"
    assert "p2p_unsupported_consumer_gpu" in classes(text)


@pytest.mark.parametrize("text", [
    "The driver disabled P2P because ACS is on.",  # no word that it is NVIDIA's own driver doing so by design
    "We disabled P2P in NCCL (NCCL_P2P_DISABLE=1) and the hang went away.",
    "On our 8x A100 the official driver has disabled P2P after the upgrade.",  # a data-centre card named: not consumer
    "驱动更新后 p2p 正常了。",
])
def test_other_sentences_do_not(text):
    assert host_facts(text).get("gpu.consumer") is not True
