"""--redact: no original hostname, UUID, serial or IP address in any file of the bundle."""

import tarfile

import pytest

from p2ptop import cli
from p2ptop.demos import DEMOS, load_demo
from p2ptop.export.bundle import ExportError, write_bundle
from p2ptop.export.redact import Redactor, svg_lines

from .test_export_bundle import fake_screen

IPS = ["10.20.30.40", "fe80::1ff:fe23:4567:890a"]
EXTRA_UUID = "4a0b3b6c-1f2e-4d5c-9b8a-7f6e5d4c3b2a"


def identifying(snap):
    """Every original the redaction must remove, lower-cased."""
    out = {snap.source.hostname.lower()}
    for g in snap.gpus:
        for v in (g.uuid, g.serial, g.fabric.cluster_uuid):
            if v and v != "00000000-0000-0000-0000-000000000000":
                out.add(v.lower())
    return out | {ip.lower() for ip in IPS} | {EXTRA_UUID}


def with_extras(snap):
    """A snapshot with identifying data also in free text: host facts, notes and a copy-test error."""
    snap.host.setdefault("facts", {})["host.hostname"] = {"value": snap.source.hostname + ".corp.example.com",
                                                          "how": "read /etc/hostname", "na": None}
    snap.host["facts"]["host.xid"] = {"value": [{"pci": "0000:3b:00", "xid": 79, "text": f"on {snap.source.hostname} "
                                                 f"peer {IPS[0]} via {IPS[1]}"}], "how": "dmesg", "na": None}
    snap.notes.append(f"collected by job {EXTRA_UUID} on {snap.source.hostname.upper()}")
    return snap


def bundle_texts(path):
    return {p.name: p.read_text(encoding="utf-8") for p in path.iterdir() if p.suffix != ".png"}


@pytest.mark.parametrize("name", list(DEMOS))
def test_redacted_bundle_has_no_original_in_any_file(name, tmp_path):
    snap = with_extras(load_demo(name))
    originals = identifying(snap)
    svg, text = fake_screen(snap)
    path = write_bundle(snap, tmp_path, svg=svg, text=text, redact=True, tar=True)
    texts = bundle_texts(path)
    assert {"report.md", "snapshot.json", "screenshot.svg", "screenshot.txt", "README.txt"} <= set(texts)
    with tarfile.open(path.with_name(path.name + ".tar.gz")) as t:
        names = t.getnames()
    for where, content in list(texts.items()) + [("folder and archive names", path.name + " ".join(names))]:
        low = content.lower()
        assert [o for o in originals if o in low] == [], where
    for line in svg_lines(texts["screenshot.svg"]):  # also across styled runs of one line
        assert [o for o in originals if o in line.lower()] == []
    placeholder = "host-1".ljust(len(snap.source.hostname), ".")
    assert path.name.startswith("p2ptop-host-1-")
    assert placeholder in texts["screenshot.txt"] and placeholder in texts["report.md"]


def test_same_original_same_placeholder_in_every_file(tmp_path):
    snap = with_extras(load_demo("h200x2-vm"))
    svg, text = fake_screen(snap)
    path = write_bundle(snap, tmp_path, svg=svg, text=text, redact=True)
    texts = bundle_texts(path)
    uuid0 = "GPU-redacted-uuid-0001-0000-000000000001"
    for name in ("snapshot.json", "screenshot.txt"):
        assert uuid0 in texts[name], name
    assert "serial-2....." in texts["screenshot.txt"] and "serial-2....." in texts["snapshot.json"]
    for name in ("snapshot.json", "report.md"):
        assert "ip-1......." in texts[name] and "ip-2" in texts[name], name
    # the host's FQDN and short name share one placeholder
    assert "host-1..." in texts["report.md"] and "host-2" not in "".join(texts.values())


def test_redacted_snapshot_still_replays(tmp_path, capsys):
    path = write_bundle(load_demo("pcie-4gpu-iommu"), tmp_path, svg=None, text=None, redact=True)
    assert cli.main(["topo", "--replay", str(path / "snapshot.json")]) == 0
    out = capsys.readouterr().out
    assert "host host-1........," in out and "\tPIX\tSYS\tSYS\t" in out


def test_redact_on_stdout(capsys):
    assert cli.main(["report", "--demo", "nvlink-degraded", "--redact"]) == 0
    out = capsys.readouterr().out
    assert "dgx-a100-demo" not in out and "host-1......." in out


def test_free_text_detection():
    r = Redactor()
    text = ("at 192.168.1.7 and 2001:db8::8a2e:370:7334, not 10:25:00, 00000000:3A:00.0, 580.159.04, "
            "96.00.74.00.01, 300.1.1.1 or std::vector; uuid GPU-5D2C1A0E-1111-2222-3333-444455556666 "
            "and 5d2c1a0e-1111-2222-3333-444455556666; nil 00000000-0000-0000-0000-000000000000")
    out = r.text(text)
    assert "192.168.1.7" not in out and "2001:db8::8a2e:370:7334" not in out
    for kept in ("10:25:00", "00000000:3A:00.0", "580.159.04", "96.00.74.00.01", "300.1.1.1", "std::vector",
                 "00000000-0000-0000-0000-000000000000"):
        assert kept in out
    # the prefixed and bare forms of one UUID get one number
    assert "GPU-redacted-uuid-0001-0000-000000000001" in out and " redacted-uuid-0001-0000-000000000001;" in out
    assert r.text(out) == out  # placeholders are not redacted again


def test_hostname_match_is_whole_word_and_case_blind():
    r = Redactor()
    r.add("host", "gpu-node7")
    assert r.text("GPU-NODE7 gpu-node7.lab gpu-node71 xgpu-node7") == "host-1... host-1....lab gpu-node71 xgpu-node7"


def test_svg_with_an_original_split_over_runs_is_redrawn():
    snap = load_demo("nvlink-degraded")
    svg, _ = fake_screen(snap)
    serial = snap.gpus[0].serial  # DEMO-A100-0: Rich styles the trailing number apart
    assert serial not in svg and any(serial in line for line in svg_lines(svg))
    r = Redactor.for_snapshot(snap)
    out = r.svg(svg)
    assert not any(serial in line for line in svg_lines(out))
    assert any("serial-1..." in line for line in svg_lines(out))
    assert r.svg_leaks(out) == []


def test_a_leak_the_redactor_cannot_remove_stops_the_bundle(tmp_path, monkeypatch):
    snap = load_demo("h200x2-vm")
    monkeypatch.setattr(Redactor, "svg", lambda self, svg: svg)  # a broken SVG pass
    svg, text = fake_screen(snap)
    with pytest.raises(ExportError, match=r"redaction incomplete: .* still present in screenshot.svg") as e:
        write_bundle(snap, tmp_path, svg=svg, text=text, redact=True)
    assert list(tmp_path.iterdir()) == []
    assert "h200x2-vm" not in str(e.value)  # the message names no original


@pytest.mark.parametrize("name", ["nvlink-degraded", "rtx4090-2gpu"])
def test_redacted_svg_shows_the_same_lines_as_the_redacted_text(name):
    """Runs after a placeholder move with it: the SVG's lines read exactly as screenshot.txt's."""
    snap = load_demo(name)
    snap.source.hostname = "n7x"  # shorter than its placeholder: the rest of the line moves right
    svg, text = fake_screen(snap)
    r = Redactor.for_snapshot(snap)
    out_svg, out_text = r.svg(svg), r.text(text)
    assert [l.rstrip() for l in svg_lines(out_svg)[1:]] == [l.rstrip() for l in out_text.splitlines()]
    assert "host-1" in out_text.splitlines()[0]


def test_non_ascii_hostname_is_redacted_in_the_json_too(tmp_path):
    snap = load_demo("rtx4090-2gpu")
    snap.source.hostname = "büro-gpu"
    path = write_bundle(snap, tmp_path, svg=None, text=None, redact=True)
    raw = (path / "snapshot.json").read_text()
    assert "b\\u00fcro" not in raw and "büro" not in raw and "host-1.." in raw
