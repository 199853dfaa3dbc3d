"""The PNG: drawn offline with an installed monospace font, or skipped with a reason."""

import pytest

from p2ptop.demos import load_demo
from p2ptop.export import png

from .test_export_bundle import fake_screen


def test_offline_svg_drops_the_web_font_and_uses_the_installed_one():
    svg, _ = fake_screen(load_demo("h200x2-vm"))
    assert "@font-face" in svg and "cdnjs.cloudflare.com" in svg  # what Rich/Textual write
    out = png.offline_svg(svg, "DejaVu Sans Mono")
    assert "@font-face" not in out and "url(\"http" not in out and "Fira Code" not in out
    assert "font-family: 'DejaVu Sans Mono', monospace;" in out


def test_png_is_drawn_when_the_extra_and_a_font_are_here():
    if png.unavailable_reason():
        pytest.skip(png.unavailable_reason())
    data = png.svg_to_png(fake_screen(load_demo("h200x2-vm"))[0])
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 2000


def test_without_cairosvg_the_reason_names_the_extra(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_cairo(name, *a, **k):
        if name == "cairosvg":
            raise ImportError("No module named 'cairosvg'")
        return real(name, *a, **k)

    monkeypatch.setattr(builtins, "__import__", no_cairo)
    assert png.unavailable_reason() == "screenshot.png not made: cairosvg is not installed (pip install 'p2ptop[png]')"
    with pytest.raises(png.PngUnavailable, match="cairosvg is not installed"):
        png.svg_to_png("<svg/>")


def test_without_a_monospace_font_the_reason_says_so(monkeypatch):
    pytest.importorskip("cairosvg")
    monkeypatch.setattr(png, "monospace_family", lambda: None)
    assert "no monospace font" in png.unavailable_reason()


def test_font_lookup_prefers_known_families(monkeypatch):
    class Done:
        stdout = "Noto Sans Mono\nDejaVu Sans Mono,DejaVu Sans Mono Book\nFreeMono\n"

    png.monospace_family.cache_clear()
    monkeypatch.setattr(png.shutil, "which", lambda name: "/usr/bin/fc-list")
    monkeypatch.setattr(png.subprocess, "run", lambda *a, **k: Done())
    try:
        assert png.monospace_family() == "DejaVu Sans Mono"
        png.monospace_family.cache_clear()
        monkeypatch.setattr(png.shutil, "which", lambda name: None)
        assert png.monospace_family() is None
    finally:
        png.monospace_family.cache_clear()
