"""Real errors from a one-GPU H100 (tests/fixtures/device/h100x1-diagnosis, copied from the device run
of benchmarks/device/diagnosis.sh on nvidia-h100-x1, 2026-11-24), answered with the host's facts from
the same kind of host's capture (tests/fixtures/captures/h100x1-vm, --replay): the feedback of issue 22.
"""

from __future__ import annotations

import json
import os

from p2ptop import cli
from p2ptop.findings import Finding
from p2ptop.knowledge import load_kb, match
from p2ptop.knowledge.fact_roles import PAIR_CLASSES, PAIR_FACTS, first_look, readable
from p2ptop.knowledge.codes import key as code_key
from p2ptop.knowledge.matcher import shared_codes

from .conftest import FIXTURES

KB = load_kb()
H100 = os.path.join(FIXTURES, "captures", "h100x1-vm", "p2ptop-snapshot.json")
DEVICE = os.path.join(FIXTURES, "device", "h100x1-diagnosis")


def explain_json(name, capsys, *extra):
    """``p2ptop explain --json`` on a file: a name under DEVICE, or a path."""
    code = cli.main(["explain", os.path.join(DEVICE, str(name)), *extra, "--json"])
    assert code == 0
    return json.loads(capsys.readouterr().out)


def confident(doc):
    return [m for m in doc["matches"] if m["confidence"] in ("likely", "possible")]


def one_gpu():
    return [Finding("host.facts", "host", "ok", "host", [], {"host.gpu_count": 1})]


def test_api_usage_classes_survive_the_one_gpu_rule(capsys):
    # 705 from CuPy's deviceDisablePeerAccess without an enable: the CUDA runtime returns it on any host
    assert "peer_access_not_enabled" not in PAIR_CLASSES and "peer_access_already_enabled" not in PAIR_CLASSES
    doc = explain_json("cupy-disable-peer-not-enabled.txt", capsys, "--replay", H100)
    assert doc["matches"][0]["id"] == "cuda/peer-access-not-enabled"
    assert doc["matches"][0]["confidence"] in ("likely", "possible")
    # and the next command fits a one-GPU host: no pair's P2P status to read here
    assert doc["next_command"] is None or "topo -p2p" not in doc["next_command"]["command"]


def test_217_on_one_gpu_is_a_hidden_or_self_peer_not_nccl_ipc(capsys):
    doc = explain_json("cupy-peer-to-itself.txt", capsys, "--replay", H100)
    top = doc["matches"][0]
    assert top["id"] == "cuda/peer-access-unsupported-one-gpu" and top["failure_class"] == "device_not_visible"
    assert top["confidence"] in ("likely", "possible")
    for m in doc["matches"]:
        if m["id"] == "nccl/ipc-peer-gpu-not-visible":
            assert m["confidence"] == "unsure", m  # NCCL's own text (failed to open CUDA IPC handle) is absent
    # the pair-hardware classes of 217 are ruled out on one GPU
    assert not [m for m in doc["matches"] if m["failure_class"] in PAIR_CLASSES]


def test_a_shared_error_code_alone_does_not_make_an_entry_possible():
    assert code_key("cudaErrorPeerAccessUnsupported") in shared_codes(KB) and code_key(217) in shared_codes(KB)
    assert code_key("cudaErrorPeerAccessNotEnabled") not in shared_codes(KB)  # one class's own code
    text = open(os.path.join(DEVICE, "cupy-peer-to-itself.txt"), encoding="utf-8").read()
    # text alone: the entries whose own regex matched the 217 message lead, but that message is the line of several
    # classes' entries and nothing of theirs holds (matcher._one_of_several): unsure, the by-hardware entry first;
    # the NCCL IPC entry (regex absent) is no answer there: since the twenty-ninth session it lists no code and needs one GPU
    # per process said beside a failed IPC open
    ranked_ids = [m.entry.id for m in match(KB, text)]
    ms = {m.entry.id: m for m in match(KB, text)}
    assert ms["cuda/peer-access-unsupported-by-hardware"].confidence == "unsure"
    assert ms["cuda/peer-access-unsupported-by-hardware"].shared_line
    assert ranked_ids[0] == "cuda/peer-access-unsupported-by-hardware"
    hidden = ms.get("nccl/ipc-peer-gpu-not-visible")
    assert hidden is None or hidden.confidence == "unsure"
    # the one-GPU entry needs the host's GPU count: without it, it is no more than unsure
    assert ms["cuda/peer-access-unsupported-one-gpu"].confidence == "unsure"
    assert ms["cuda/peer-access-unsupported-one-gpu"].next_command["command"].startswith("nvidia-smi -L")
    # and on two GPUs it is gone
    two = [Finding("host.facts", "host", "ok", "host", [], {"host.gpu_count": 2})]
    assert "cuda/peer-access-unsupported-one-gpu" not in {m.entry.id for m in match(KB, text, two)}


def test_torch_invalid_peer_device_id_is_a_device_not_visible_case(capsys):
    doc = explain_json("torch-can-access-peer.txt", capsys, "--replay", H100)
    assert doc["matches"] and doc["matches"][0]["failure_class"] == "device_not_visible"
    assert doc["matches"][0]["confidence"] in ("likely", "possible")
    assert any("Invalid peer device id" in r for r in doc["matches"][0]["reasons"])


def test_cupy_invalid_ordinal_still_answered_as_before(capsys):
    doc = explain_json("cupy-can-access-peer-0-1.txt", capsys, "--replay", H100)
    assert [m["failure_class"] for m in confident(doc)][:2] == ["device_not_visible", "device_not_visible"]


def test_an_empty_text_is_said_to_be_empty(capsys):
    doc = explain_json("nccl-invalid-rank.txt", capsys, "--replay", H100)
    assert doc["answer"] == "empty_text" and doc["text_empty"] is True and doc["matches"] == []
    code = cli.main(["explain", os.path.join(DEVICE, "nccl-invalid-rank.txt"), "--replay", H100])
    out = capsys.readouterr().out
    assert code == 0 and "The text is empty" in out and "No sign of P2P trouble" not in out
    code = cli.main(["explain", os.path.join(DEVICE, "nccl-invalid-rank.txt"), "--text-only"])
    assert "The text is empty" in capsys.readouterr().out


def test_next_commands_fit_a_one_gpu_host(capsys):
    known = lambda k: {"host.gpu_count": [1]}.get(k, [])  # noqa: E731
    assert not any(readable(f, known) for f in PAIR_FACTS)
    assert readable("gpu.mig", known) and readable("p2p.read", lambda k: [])
    assert first_look(known)[0] == "env.CUDA_VISIBLE_DEVICES" and first_look(lambda k: [])[0] == "p2p.read"
    for name in ("cupy-disable-peer-not-enabled.txt", "cupy-peer-to-itself.txt", "torch-can-access-peer.txt"):
        doc = explain_json(name, capsys, "--replay", H100)
        cmds = [doc["next_command"]] + [m["next_command"] for m in doc["matches"]]
        for c in cmds:
            if c:
                assert c["fact"] not in PAIR_FACTS and "topo -p2p" not in c["command"] and "bench" not in c["command"], (name, c)
        for m in doc["matches"]:
            assert not set(m["deciding_facts"]) & PAIR_FACTS, (name, m["id"], m["deciding_facts"])


def test_a_hosts_absence_makes_no_lead(tmp_path, capsys):
    # "no NVSwitch on this host" holds on nearly every host: read from the one-GPU host it does not make the Fabric
    # Manager "nothing to do" entry a lead for a text about slow scaling (the fifth/sixth sessions' one-GPU run ranked it 2nd)
    p = tmp_path / "slow.txt"
    p.write_text("Training with DDP only gives a 2.5x speedup with 8 GPUs instead of 8x.\n")
    doc = explain_json(p, capsys, "--replay", H100)
    assert doc["matches"], doc  # still answered: unsure candidates on the slow symptom
    assert "fabric_manager_nothing_to_do" not in [m["failure_class"] for m in doc["matches"]]
    # the same absence said by the text itself ("deployed without NVSwitch") is the writer's context and still leads
    p.write_text("Our GH200 was marked unhealthy when deployed without NVSwitch; the fabric state check failed.\n")
    doc = explain_json(p, capsys, "--text-only")
    assert "fabric_manager_nothing_to_do" in [m["failure_class"] for m in doc["matches"]][:3]


def test_gpudirect_bar1_is_not_ruled_out_by_one_gpu(tmp_path, capsys):
    # a NIC reaching GPU memory (gdrcopy, GPUDirect RDMA) needs one GPU, not a pair: the eighth session's one-GPU H200
    # ruled gdrcopy's BAR1 message out as "no pair to talk between" ("nic_peer" on the entry since)
    p = tmp_path / "gdr.txt"
    p.write_text("[  812.4411] gdrdrv:__gdrdrv_pin_buffer:No address space left for BAR1 mapping.\n")
    doc = explain_json(p, capsys, "--replay", H100)
    assert doc["matches"] and doc["matches"][0]["failure_class"] == "bar1_too_small"
    assert doc["matches"][0]["confidence"] in ("likely", "possible")
    assert not doc["ruled_out_by_host"]
