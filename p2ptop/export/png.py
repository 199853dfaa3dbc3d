"""The screenshot SVG as a PNG, rendered offline.

Rich/Textual SVGs ask for the web font Fira Code through ``@font-face`` URLs. Those rules are removed
(nothing is fetched) and the family is swapped for a monospace font installed here, found with
fontconfig's ``fc-list``; cairosvg (the optional ``png`` extra: ``pip install 'p2ptop[png]'``)
draws the result. Where cairosvg or a monospace font is missing the PNG is skipped and
:func:`unavailable_reason` says why, for the user to see.
"""

from __future__ import annotations

import functools
import re
import shutil
import subprocess
from typing import Optional

#: Monospace families we prefer, best first; any other installed monospace family will do.
PREFERRED_FAMILIES = ("DejaVu Sans Mono", "Liberation Mono", "Noto Sans Mono", "Ubuntu Mono", "Menlo", "Consolas")
INSTALL_HINT = "pip install 'p2ptop[png]'"

_FONT_FACE = re.compile(r"@font-face\s*\{[^}]*\}", re.DOTALL)
_WEB_FAMILY = re.compile(r"""font-family:\s*["']?Fira Code["']?""")


class PngUnavailable(RuntimeError):
    """No PNG can be made here; the message says why and what to install."""


@functools.lru_cache(maxsize=1)
def monospace_family() -> Optional[str]:
    """An installed monospace font family, or None when fontconfig finds none (or is absent)."""
    if shutil.which("fc-list") is None:
        return None
    try:
        out = subprocess.run(
            ["fc-list", ":spacing=mono", "family"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    families = {name.strip() for line in out.splitlines() for name in line.split(",") if name.strip()}
    for name in PREFERRED_FAMILIES:
        if name in families:
            return name
    return sorted(families)[0] if families else None


def unavailable_reason() -> Optional[str]:
    """Why no PNG can be made here, or None when it can."""
    try:
        import cairosvg  # noqa: F401
    except ImportError:
        return f"screenshot.png not made: cairosvg is not installed ({INSTALL_HINT})"
    except OSError as e:  # cairosvg is there but the cairo library is not
        return f"screenshot.png not made: the cairo library cannot be loaded ({e})"
    if monospace_family() is None:
        return "screenshot.png not made: no monospace font found by fontconfig (install fonts-dejavu-core)"
    return None


def offline_svg(svg: str, family: str) -> str:
    """The SVG with the web font rules removed and its family swapped for ``family``."""
    swapped = _WEB_FAMILY.sub(f"font-family: '{family}'", _FONT_FACE.sub("", svg))
    return swapped


def svg_to_png(svg: str) -> bytes:
    """The PNG of a screenshot SVG; :class:`PngUnavailable` when it cannot be made here."""
    reason = unavailable_reason()
    if reason:
        raise PngUnavailable(reason)
    import cairosvg

    family = monospace_family()
    assert family is not None
    try:
        return cairosvg.svg2png(bytestring=offline_svg(svg, family).encode("utf-8"), unsafe=False)
    except Exception as e:  # cairosvg raises parser and cairo errors of many types
        raise PngUnavailable(f"screenshot.png not made: cairosvg could not draw the SVG ({type(e).__name__}: {e})") from None
