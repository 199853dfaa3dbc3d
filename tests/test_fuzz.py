"""Fuzzing: mutated snapshots through topo, doctor and report, mutated logs through explain; no traceback.

The mutations are seeded (tests/fuzz_snapshots.py), so a failure here replays with
``python -m tests.fuzz_snapshots N SEED``. Each bad file must end in a clear message, not a traceback.
"""

import contextlib
import io
import json
import random

import pytest

from p2ptop.cli import main
from p2ptop.demos import demo_path
from p2ptop.model import SCHEMA_VERSION, SnapshotError, load_snapshot
from tests.fuzz_snapshots import campaign

from pathlib import Path

LOGS = sorted((Path(__file__).parent / "fixtures" / "kb" / "logs").glob("*.log"))


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        rc = main(argv)
    return rc, out.getvalue(), err.getvalue()


def test_mutated_snapshots_never_end_in_a_traceback(tmp_path):
    failures = campaign(200, 20261124, str(tmp_path))
    assert not failures, "\n\n".join(f"mutation {i} of {demo}, {cmd}:\n{tb}" for i, demo, cmd, tb in failures[:3])


def _mutated_log(text, rng):
    lines = text.splitlines()
    for _ in range(rng.randrange(1, 6)):
        op = rng.randrange(5)
        i = rng.randrange(max(1, len(lines)))
        if op == 0 and lines:
            lines[i] = lines[i][: rng.randrange(len(lines[i]) + 1)]
        elif op == 1:
            lines.insert(i, rng.choice(["\x1b[31mNCCL WARN\x1b[0m", "[bold red]x[/]", "\x00\x01\x02", "a" * 50000, "Xid 79" * 1000, "(" * 5000]))
        elif op == 2 and lines:
            lines[i] = lines[i] * rng.randrange(2, 50)
        elif op == 3:
            lines = lines[::-1]
        else:
            lines.append(bytes(rng.randrange(256) for _ in range(64)).decode("latin-1"))
    return "\n".join(lines)


@pytest.mark.parametrize("seed", range(3))
def test_mutated_logs_never_end_in_a_traceback(tmp_path, seed):
    rng = random.Random(seed)
    for log in rng.sample(LOGS, 4):
        path = tmp_path / log.name
        path.write_text(_mutated_log(log.read_text(encoding="utf-8", errors="replace"), rng), encoding="utf-8")
        rc, out, err = run(["explain", "--text-only", str(path)])
        assert rc in (0, 1, 2)


def _doc(demo="dgx-h100"):
    return json.load(open(demo_path(demo), encoding="utf-8"))


def _write(tmp_path, name, data):
    p = tmp_path / name
    p.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
    return str(p)


def test_deeply_nested_snapshot_is_refused_with_a_message(tmp_path):
    doc = json.dumps(_doc())
    deep = doc.replace('"host": {', '"host": {"deep": ' + "[" * 100000 + "1" + "]" * 100000 + ", ", 1)
    path = _write(tmp_path, "deep.json", deep)
    rc, out, err = run(["topo", "--replay", path])
    assert rc == 2 and "nested too deeply" in err
    d = _doc()
    d["host"]["x"] = json.loads("[" * 200 + "]" * 200)
    path = _write(tmp_path, "deep2.json", d)
    with pytest.raises(SnapshotError, match="nested more than"):
        load_snapshot(path)


def test_pair_naming_a_missing_gpu_is_refused(tmp_path):
    d = _doc()
    d["pairs"][0]["b"] = 17
    with pytest.raises(SnapshotError, match=r"pairs\[0\]\.b: GPU17 does not exist in this snapshot \(GPUs: 0, 1, 2, 3, 4, 5, 6, 7\)"):
        load_snapshot(_write(tmp_path, "p.json", d))
    d = _doc()
    d["bench"] = [{"a": 0, "b": 9}]
    with pytest.raises(SnapshotError, match=r"bench\[0\]\.b: GPU9 does not exist"):
        load_snapshot(_write(tmp_path, "b.json", d))
    d = _doc()
    d["gpus"][1]["index"] = 0
    with pytest.raises(SnapshotError, match="used twice"):
        load_snapshot(_write(tmp_path, "g.json", d))


@pytest.mark.parametrize("fact,value,message", [
    ("host.registry_dwords", 5, r"host\.facts\.host\.registry_dwords\.value: expected a string, got 5"),
    ("host.shm_mb", "big", r"host\.shm_mb\.value: expected an integer"),
    ("host.xid", [{"xid": "79", "pci": "0000:3b:00", "text": "x"}], r"host\.xid\.value\[0\]\.xid: expected an integer"),
    ("host.xid", [{"pci": "0000:3b:00", "text": "x"}], r"host\.xid\.value\[0\]: field 'xid' is missing"),
    ("host.acs", [{"gpu": 1, "bridge": "b", "role": "r"}], r"host\.acs\.value\[0\]\.gpu: expected a string"),
    ("host.acs", "none", r"host\.acs\.value: expected a list"),
    ("host.iommu_active", "yes", r"expected true or false"),
    ("env.NCCL_P2P_DISABLE", 1, r"env\.NCCL_P2P_DISABLE\.value: expected a string"),
])
def test_host_facts_are_type_checked_on_load(tmp_path, fact, value, message):
    d = _doc("pcie-4gpu-iommu")
    d["host"]["facts"][fact] = {"value": value, "how": "test", "na": None}
    with pytest.raises(SnapshotError, match=message):
        load_snapshot(_write(tmp_path, "h.json", d))
    d["host"]["facts"][fact] = "not an object"
    with pytest.raises(SnapshotError, match="expected an object with value, how and na"):
        load_snapshot(_write(tmp_path, "h2.json", d))


def test_truncated_empty_and_future_files_say_why(tmp_path):
    text = json.dumps(_doc())
    rc, out, err = run(["doctor", "--replay", _write(tmp_path, "t.json", text[: len(text) // 2])])
    assert rc == 2 and "not valid JSON" in err and "truncated?" in err
    rc, out, err = run(["topo", "--replay", _write(tmp_path, "e.json", "")])
    assert rc == 2 and "empty file" in err
    d = _doc()
    d["schema_version"] = SCHEMA_VERSION + 1
    rc, out, err = run(["report", "--replay", _write(tmp_path, "f.json", d)])
    assert rc == 2 and "newer than this p2ptop understands" in err
