"""scripts/make_screenshots.py: README pictures through the bundle's path."""

import importlib.util
import pathlib

import pytest

pytest.importorskip("p2ptop.ui.headless")

SCRIPT = pathlib.Path(__file__).resolve().parent.parent / "scripts" / "make_screenshots.py"


def load_script():
    spec = importlib.util.spec_from_file_location("make_screenshots", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_one_demo_gives_svg_txt_and_png_when_possible(tmp_path, capsys):
    from p2ptop.export.png import unavailable_reason

    mod = load_script()
    code = mod.main(["--demo", "rtx4090-2gpu", "--out", str(tmp_path), "--width", "160", "--height", "40"])
    names = sorted(p.name for p in tmp_path.iterdir())
    if unavailable_reason() is None:
        assert code == 0 and names == ["rtx4090-2gpu.png", "rtx4090-2gpu.svg", "rtx4090-2gpu.txt"]
    else:
        assert code == 1 and names == ["rtx4090-2gpu.svg", "rtx4090-2gpu.txt"]
    text = (tmp_path / "rtx4090-2gpu.txt").read_text()
    assert "workstation-demo" in text and "simulated" in text


def test_live_needs_a_name(tmp_path):
    mod = load_script()
    with pytest.raises(SystemExit):
        mod.main(["--live", "--out", str(tmp_path)])
