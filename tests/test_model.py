import json

import pytest

from p2ptop.demos import DEMOS, load_demo
from p2ptop.model import SCHEMA_VERSION, Snapshot, SnapshotError, load_snapshot, save_snapshot


@pytest.mark.parametrize("name", list(DEMOS))
def test_demo_round_trips_through_json(name):
    snap = load_demo(name)
    again = Snapshot.from_json(snap.to_json())
    assert again == snap
    assert again.to_dict()["schema_version"] == SCHEMA_VERSION


def test_newer_schema_version_is_refused_with_a_clear_message():
    data = load_demo("rtx4090-2gpu").to_dict()
    data["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(SnapshotError, match="newer than this p2ptop understands"):
        Snapshot.from_dict(data)


@pytest.mark.parametrize(
    "text, message",
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "expected a JSON object"),
        ('{"kind": "something-else", "schema_version": 1}', "not a p2ptop snapshot"),
        ('{"kind": "p2ptop-snapshot"}', "schema_version' is missing"),
        ('{"kind": "p2ptop-snapshot", "schema_version": 1, "gpus": [{"index": "zero"}]}', r"gpus\[0\]\.index: expected an integer"),
        ('{"kind": "p2ptop-snapshot", "schema_version": 1, "gpus": {"a": 1}}', "gpus: expected a list"),
    ],
)
def test_broken_documents_name_what_is_wrong(text, message):
    with pytest.raises(SnapshotError, match=message):
        Snapshot.from_json(text, where="x.json")


def test_file_errors_name_the_file(tmp_path):
    with pytest.raises(SnapshotError, match="no such file"):
        load_snapshot(str(tmp_path / "missing.json"))
    with pytest.raises(SnapshotError, match="is a directory"):
        load_snapshot(str(tmp_path))
    binary = tmp_path / "b.json"
    binary.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(SnapshotError, match="b.json"):
        load_snapshot(str(binary))


def test_save_is_atomic_and_loadable(tmp_path):
    snap = load_demo("dgx-h100")
    path = tmp_path / "s.json"
    save_snapshot(snap, str(path))
    assert load_snapshot(str(path)) == snap
    assert [p.name for p in tmp_path.iterdir()] == ["s.json"]


def test_unknown_fields_are_ignored_but_types_are_checked():
    data = load_demo("rtx4090-2gpu").to_dict()
    data["future_field"] = {"x": 1}
    data["gpus"][0]["future"] = 3
    snap = Snapshot.from_dict(json.loads(json.dumps(data)))
    assert snap.gpus[0].name == "NVIDIA GeForce RTX 4090"


def test_demo_sources_are_labelled_simulated():
    for name in DEMOS:
        src = load_demo(name).source
        assert src.kind == "demo" and src.simulated
        assert "simulated" in src.label
