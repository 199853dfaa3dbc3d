"""The ticket bundle: every part there, replayable, atomic, and clean failures."""

import errno
import io
import json
import os
import tarfile

import pytest
from rich.console import Console

from p2ptop import cli
from p2ptop.demos import DEMOS, load_demo
from p2ptop.export import bundle, png
from p2ptop.export.bundle import ExportError, write_bundle
from p2ptop.model import load_snapshot

PARTS = {"screenshot.svg", "screenshot.txt", "report.md", "snapshot.json", "README.txt"}


def fake_screen(snapshot):
    """A stand-in for the dashboard's headless render: Rich SVG and text showing the identifying values.

    Rich highlights numbers and UUIDs, so a serial or UUID is split over several styled runs, as a
    real screen may split them."""
    console = Console(record=True, width=140, file=io.StringIO(), color_system="truecolor")
    console.print(f"[bold]p2ptop[/] {snapshot.source.label} host {snapshot.source.hostname}")
    for g in snapshot.gpus[:8]:
        console.print(f"{g.label} {g.name} {g.pci_bus_id} uuid {g.uuid} serial {g.serial}")
    text = console.export_text(clear=False)
    return console.export_svg(title="p2ptop"), text


def files_of(path):
    return sorted(os.listdir(path))


@pytest.mark.parametrize("name", list(DEMOS))
def test_bundle_of_each_demo_has_every_part(name, tmp_path):
    snap = load_demo(name)
    svg, text = fake_screen(snap)
    path = write_bundle(snap, tmp_path, svg=svg, text=text)
    assert path.parent == tmp_path and path.name.startswith(f"p2ptop-{snap.source.hostname}-")
    have = set(files_of(path))
    assert PARTS <= have
    readme = (path / "README.txt").read_text()
    if png.unavailable_reason() is None:
        assert (path / "screenshot.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    else:
        assert "screenshot.png" not in have and png.unavailable_reason() in readme
    assert (path / "screenshot.txt").read_text() == text
    assert (path / "screenshot.svg").read_text() == svg
    report = (path / "report.md").read_text()
    assert report.startswith("# p2ptop report: ") and "Simulated data" in report
    assert "SIMULATED DATA" in readme
    assert [p.name for p in tmp_path.iterdir()] == [path.name]  # no temporary folder left


@pytest.mark.parametrize("name", ["pcie-4gpu-iommu", "nvlink-degraded", "h200x2-vm"])
def test_snapshot_json_replays_to_the_same_topo_output(name, tmp_path, capsys):
    snap = load_demo(name)
    path = write_bundle(snap, tmp_path, svg=None, text=None)
    assert cli.main(["topo", "--demo", name]) == 0
    direct = capsys.readouterr().out
    assert cli.main(["topo", "--replay", str(path / "snapshot.json")]) == 0
    replayed = capsys.readouterr().out
    d_head, d_body = direct.split("\n", 1)
    r_head, r_body = replayed.split("\n", 1)
    assert r_body == d_body and len(d_body) > 200
    assert "REPLAY simulated snapshot.json" in r_head and f"host {snap.source.hostname}," in r_head
    assert d_head.split(" host ", 1)[1] == r_head.split(" host ", 1)[1]  # same host, driver, CUDA, GPU count
    # the whole snapshot comes back, so the dashboard shows the same screens
    assert load_snapshot(str(path / "snapshot.json")).to_dict() == snap.to_dict()


def test_without_screenshot_the_bundle_says_so(tmp_path):
    path = write_bundle(load_demo("rtx4090-2gpu"), tmp_path, svg=None, text=None)
    assert not {"screenshot.svg", "screenshot.txt", "screenshot.png"} & set(files_of(path))
    assert "No screenshot" in (path / "README.txt").read_text()
    assert "No screenshot" in (path / "report.md").read_text()


def test_missing_png_support_is_reported_in_readme_and_report(tmp_path, monkeypatch):
    reason = "screenshot.png not made: cairosvg is not installed (pip install 'p2ptop[png]')"
    monkeypatch.setattr(png, "unavailable_reason", lambda: reason)
    snap = load_demo("h200x2-vm")
    path = write_bundle(snap, tmp_path, svg=fake_screen(snap)[0], text="screen")
    assert "screenshot.png" not in files_of(path)
    assert bundle.notice(path) == f"Ticket bundle written: {path} ({reason})"
    assert reason in (path / "README.txt").read_text()
    assert reason in (path / "report.md").read_text()


def test_tar_holds_the_same_folder(tmp_path):
    snap = load_demo("h200x2-vm")
    svg, text = fake_screen(snap)
    path = write_bundle(snap, tmp_path, svg=svg, text=text, tar=True)
    archive = path.with_name(path.name + ".tar.gz")
    with tarfile.open(archive) as t:
        names = {n for n in t.getnames()}
        assert {f"{path.name}/{f}" for f in files_of(path)} <= names
        data = t.extractfile(f"{path.name}/snapshot.json").read().decode()
    assert json.loads(data)["kind"] == "p2ptop-snapshot"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([path.name, archive.name])


def test_two_bundles_in_one_second_do_not_collide(tmp_path):
    import datetime as dt

    snap = load_demo("h200x2-vm")
    when = dt.datetime(2026, 11, 23, 10, 0, 0, tzinfo=dt.timezone.utc)
    a = write_bundle(snap, tmp_path, svg=None, text=None, now=when)
    b = write_bundle(snap, tmp_path, svg=None, text=None, now=when)
    assert a.name == "p2ptop-h200x2-vm-20261123-100000" and b.name == a.name + "-2"


# --- failures leave nothing behind ---------------------------------------------------------


def test_a_missing_directory_is_created_and_a_file_fails_cleanly(tmp_path):
    made = write_bundle(load_demo("h200x2-vm"), tmp_path / "new" / "dir", svg=None, text=None)
    assert made.parent == tmp_path / "new" / "dir" and (made / "report.md").exists()
    f = tmp_path / "a-file"
    f.write_text("x")
    with pytest.raises(ExportError, match="is not a directory"):
        write_bundle(load_demo("h200x2-vm"), f, svg=None, text=None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "new"]


def test_an_unwritable_directory_fails_cleanly(tmp_path, monkeypatch):
    target = tmp_path / "ro"
    target.mkdir()
    if os.geteuid() != 0:
        target.chmod(0o500)
    else:  # root writes anywhere: fail the temporary folder as the kernel would for a user
        def denied(*a, **k):
            raise PermissionError(errno.EACCES, "Permission denied")

        monkeypatch.setattr(bundle.tempfile, "mkdtemp", denied)
    try:
        with pytest.raises(ExportError) as e:
            write_bundle(load_demo("h200x2-vm"), target, svg=None, text=None)
        assert str(e.value) == f"cannot write the bundle in {target}: permission denied"
        assert "\n" not in str(e.value)
        assert list(target.iterdir()) == []
    finally:
        target.chmod(0o700)


@pytest.mark.parametrize("fail_at", [1, 3, 5])
def test_a_full_disk_fails_cleanly_and_leaves_nothing(tmp_path, monkeypatch, fail_at):
    real = bundle._write
    calls = []

    def write(path, data):
        calls.append(path.name)
        if len(calls) == fail_at:
            real(path, data[: len(data) // 2])  # half a file, as a full disk leaves it
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path, data)

    monkeypatch.setattr(bundle, "_write", write)
    snap = load_demo("nvlink-degraded")
    svg, text = fake_screen(snap)
    with pytest.raises(ExportError, match="no space left on the device"):
        write_bundle(snap, tmp_path, svg=svg, text=text, tar=True)
    assert list(tmp_path.iterdir()) == []


def test_a_failing_rename_of_the_archive_removes_the_folder_too(tmp_path, monkeypatch):
    real = os.rename

    def rename(src, dst):
        if str(dst).endswith(".tar.gz"):
            raise OSError(errno.ENOSPC, "No space left on device")
        real(src, dst)

    monkeypatch.setattr(bundle.os, "rename", rename)
    with pytest.raises(ExportError):
        write_bundle(load_demo("h200x2-vm"), tmp_path, svg=None, text=None, tar=True)
    assert list(tmp_path.iterdir()) == []


# --- the command ---------------------------------------------------------------------------


def test_report_command_prints_markdown_without_bundle(capsys):
    assert cli.main(["report", "--demo", "pcie-4gpu-iommu"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# p2ptop report: pcie-4gpu-demo, 4 GPUs") and "## Findings" in out


def test_report_command_writes_a_bundle(tmp_path, capsys):
    assert cli.main(["report", "--demo", "nvlink-degraded", "--bundle", str(tmp_path), "--tar"]) == 0
    out = capsys.readouterr().out.split()
    folder, archive = out
    assert os.path.isdir(folder) and os.path.isfile(archive)
    have = set(os.listdir(folder))
    assert {"report.md", "snapshot.json", "README.txt"} <= have
    try:
        import p2ptop.ui.headless  # noqa: F401
    except ModuleNotFoundError:
        return
    assert {"screenshot.svg", "screenshot.txt"} <= have


def test_report_command_errors_are_one_line(tmp_path, capsys):
    assert cli.main(["report", "--demo", "h200x2-vm", "--tar"]) == 2
    assert capsys.readouterr().err.strip() == "p2ptop: --tar needs --bundle [DIR]"
    (tmp_path / "a-file").write_text("x")
    assert cli.main(["report", "--demo", "h200x2-vm", "--bundle", str(tmp_path / "a-file")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1] == f"p2ptop: cannot write the bundle: {tmp_path / 'a-file'} is not a directory"
