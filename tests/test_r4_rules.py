"""Rules of the fourth round for errors, logs and tool outputs: an entry is confident only on its own symptom.
Each test uses real lines (source URL beside them) and the healthy lines the rule must leave alone; each fails when
its rule is taken out."""

from p2ptop.knowledge import load_kb, match
from p2ptop.knowledge.fact_roles import is_setting_line

KB = load_kb()


def answer(text, findings=()):
    return [(m.entry.failure_class, m.confidence, m.entry.benign, m.entry.id) for m in match(KB, text, findings)]


def alarms(text):
    """Failure entries offered as likely or possible (what a healthy text must not get)."""
    return [a for a in answer(text) if a[1] in ("likely", "possible") and not a[2]]


# --- a setting is context: NCCL's INFO echo of a variable it read (src/misc/param.cc, "%s set by environment to %s") --
# P2P and SHM switched off on purpose for a GPUDirect RDMA test (https://github.com/Mellanox/nv_peer_memory/issues/78)
SETTINGS_ON_PURPOSE = (
    "k69a05298:85517:85517 [0] NCCL INFO Using network IB\n"
    "NCCL version 2.7.8+cuda11.0\n"
    "k69a05298:85517:85801 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to LOC\n"
    "k69a05298:85517:85801 [0] NCCL INFO NCCL_SHM_DISABLE set by environment to 1.\n"
    "k69a05298:85517:85802 [1] NCCL INFO threadThresholds 8/8/64 | 16/8/64 | 8/8/64\n")


def test_setting_lines():
    assert is_setting_line("k69a05298:85517:85801 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to LOC")
    assert is_setting_line("$ export NCCL_SHM_DISABLE=1 NCCL_P2P_DISABLE=1")
    assert is_setting_line("-x NCCL_P2P_DISABLE=1")
    assert not is_setting_line("host:1:2 [0] transport/p2p.cc:238 NCCL WARN failed to open CUDA IPC handle : 217")
    assert not is_setting_line("NCCL_P2P_DISABLE=1 did not help, still error 217")


def test_a_setting_alone_offers_no_entry():
    assert alarms(SETTINGS_ON_PURPOSE) == []
    # still a candidate: the setting is what would explain a complaint the text does not show
    assert "nccl_env_misconfig" in [a[0] for a in answer(SETTINGS_ON_PURPOSE)[:3]]


def test_a_setting_beside_a_complaint_is_offered():
    # the same echo with the slowness the reporter complained of (https://github.com/NVIDIA/nccl-tests/issues/228:
    # 'NCCL_P2P_LEVEL set by environment to LOC' on an NVLink A100 host, all_reduce far below the links' bandwidth)
    text = ("node:1:1 [0] NCCL INFO NCCL_P2P_LEVEL set by environment to LOC\n"
            "node:1:1 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct\n"
            "the all_reduce bandwidth is very slow, only 20 GB/s\n")
    assert ("nccl_env_misconfig", "likely") in [a[:2] for a in answer(text)]
