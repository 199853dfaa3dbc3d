"""The ticket bundle: one folder (and optionally a .tar.gz) with everything a ticket needs.

``<out_dir>/p2ptop-<host>-<YYYYmmdd-HHMMSS>/`` (UTC time of the export) holds:

- ``screenshot.svg`` and ``screenshot.txt``: the screen, as given by the caller;
- ``screenshot.png``: the SVG drawn offline, when the ``png`` extra and a monospace font are installed;
- ``report.md``: :func:`p2ptop.export.report.build_report`;
- ``snapshot.json``: the snapshot, which ``p2ptop --replay`` opens anywhere;
- ``README.txt``: what each file is, and what is missing and why.

Writing is atomic: the folder is built under a hidden temporary name beside the final one and renamed
at the end; on any error it is removed and :class:`ExportError` says what went wrong in one line.
"""

from __future__ import annotations

import datetime as _dt
import errno
import json
import os
import pathlib
import re
import shutil
import tarfile
import tempfile
from typing import Optional, Sequence

from ..model import Snapshot
from . import png
from .markdown import clean
from .redact import Redactor
from .report import build_report

REDACTED_NOTE = (
    "Redacted: hostnames, serial numbers, UUIDs and IP addresses are replaced by placeholders "
    "(host-1, serial-1, ip-1 padded with dots to the original's length; redacted-uuid-…), the same in every file."
)


class ExportError(RuntimeError):
    """A bundle could not be written; the message is one line saying why. Nothing was left behind."""


def bundle_name(host: Optional[str], when: _dt.datetime) -> str:
    safe = re.sub(r"[^A-Za-z0-9._-]+", "_", host or "unknown-host").strip("._") or "unknown-host"
    return f"p2ptop-{safe[:64]}-{when.strftime('%Y%m%d-%H%M%S')}"


def _write(path: pathlib.Path, data: str | bytes) -> None:
    """Every file of a bundle goes through here (tests make it fail like a full disk)."""
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode, **({} if isinstance(data, bytes) else {"encoding": "utf-8"})) as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _why(e: OSError) -> str:
    if e.errno == errno.ENOSPC:
        return "no space left on the device"
    if e.errno == errno.EDQUOT:
        return "disk quota exceeded"
    if e.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if e.errno == errno.EROFS:
        return "read-only file system"
    return e.strerror or str(e)


def write_bundle(
    snapshot: Snapshot,
    out_dir: str | os.PathLike,
    *,
    svg: Optional[str],
    text: Optional[str],
    redact: bool = False,
    tar: bool = False,
    kb_dirs: Sequence[str] = (),
    now: Optional[_dt.datetime] = None,
) -> pathlib.Path:
    """Write the bundle for ``snapshot`` in ``out_dir``; returns the bundle folder.

    ``svg``/``text`` are the screen (None when there is no screenshot; README.txt and report.md say
    so). With ``redact`` every file goes through one :class:`Redactor`. With ``tar`` a
    ``<folder>.tar.gz`` is written beside the folder. Raises :class:`ExportError`.
    """
    out = pathlib.Path(out_dir).expanduser()
    created = _make_dir(out)
    try:
        return _write_bundle_in(snapshot, out, svg=svg, text=text, redact=redact, tar=tar, kb_dirs=kb_dirs, now=now)
    except BaseException:
        for d in created:  # a directory made for this bundle goes too: nothing is left behind
            try:
                d.rmdir()
            except OSError:
                pass
        raise


def _make_dir(out: pathlib.Path) -> list[pathlib.Path]:
    """Create ``out`` (and missing parents) as ``mkdir -p`` would; returns what was created, deepest first."""
    if out.is_dir():
        return []
    if out.exists():
        raise ExportError(f"cannot write the bundle: {out} is not a directory")
    missing = [p for p in [out, *out.parents] if not p.exists()]
    try:
        out.mkdir(parents=True)
    except OSError as e:
        raise ExportError(f"cannot create {out}: {_why(e)}") from None
    return missing


def _write_bundle_in(snapshot: Snapshot, out: pathlib.Path, *, svg: Optional[str], text: Optional[str], redact: bool,
                     tar: bool, kb_dirs: Sequence[str], now: Optional[_dt.datetime]) -> pathlib.Path:
    when = (now or _dt.datetime.now(_dt.timezone.utc)).astimezone(_dt.timezone.utc)
    redactor = Redactor.for_snapshot(snapshot) if redact else None
    snap = redactor.snapshot(snapshot) if redactor else snapshot
    files = _contents(snap, svg, text, redactor, kb_dirs, reviews_of(snapshot))
    final = _free_name(out, bundle_name(snap.source.hostname, when))
    try:
        tmp = pathlib.Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".tmp", dir=out))
    except OSError as e:
        raise ExportError(f"cannot write the bundle in {out}: {_why(e)}") from None
    tar_tmp: Optional[pathlib.Path] = None
    try:
        for name, data in files.items():
            _write(tmp / name, data)
        if tar:
            tar_tmp = tmp.with_name(tmp.name + ".tar.gz")
            with tarfile.open(tar_tmp, "w:gz") as t:
                t.add(tmp, arcname=final.name)
        os.rename(tmp, final)
        if tar_tmp is not None:
            try:
                os.rename(tar_tmp, final.with_name(final.name + ".tar.gz"))
            except OSError:
                shutil.rmtree(final, ignore_errors=True)
                raise
    except OSError as e:
        shutil.rmtree(tmp, ignore_errors=True)
        if tar_tmp is not None and tar_tmp.exists():
            tar_tmp.unlink()
        raise ExportError(f"cannot write the bundle in {out}: {_why(e)}") from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if tar_tmp is not None and tar_tmp.exists():
            tar_tmp.unlink()
        raise
    return final


def notice(path: pathlib.Path) -> str:
    """One line for the user (dashboard notification, command output): the folder, and a missing PNG's reason."""
    line = f"Ticket bundle written: {path}"
    if (path / "screenshot.svg").exists() and not (path / "screenshot.png").exists():
        line += f" ({png.unavailable_reason() or 'screenshot.png not made: see README.txt in the bundle'})"
    return line


def _free_name(out: pathlib.Path, name: str) -> pathlib.Path:
    path, n = out / name, 2
    while path.exists() or path.with_name(path.name + ".tar.gz").exists():
        path, n = out / f"{name}-{n}", n + 1
    return path


def reviews_of(snapshot: Snapshot) -> tuple[list, Optional[str]]:
    """The reviews of fixes tried on this snapshot's host (p2ptop.review), or ([], why not)."""
    try:
        from ..review import ReviewStore, StoreError
    except ImportError as e:
        return [], f"Fixes tried not included: {e}."
    if not ReviewStore.exists():
        return [], None
    try:
        store = ReviewStore()
        try:
            return [r for r in store.list() if r.host == snapshot.source.hostname], None
        finally:
            store.close()
    except StoreError as e:
        return [], f"Fixes tried not included: {e}."


def _contents(
    snap: Snapshot, svg: Optional[str], text: Optional[str], redactor: Optional[Redactor], kb_dirs: Sequence[str],
    reviews: tuple[list, Optional[str]] = ([], None),
) -> dict[str, str | bytes]:
    """name -> content of every file, already redacted; README.txt and report.md say what is missing."""
    notes: list[str] = []
    files: dict[str, str | bytes] = {}
    trail_reviews, trail_note = reviews
    if trail_note:
        notes.append(trail_note)
    if svg is None or text is None:
        notes.append("No screenshot: the export was given none.")
    else:
        if redactor:
            svg, text = redactor.svg(svg), redactor.text(text)
        files["screenshot.svg"] = svg
        files["screenshot.txt"] = clean(text)
        try:
            files["screenshot.png"] = png.svg_to_png(svg)
        except png.PngUnavailable as e:
            notes.append(str(e) + ".")
    if redactor:
        notes.append(REDACTED_NOTE)
    trail = ""
    if trail_reviews:
        from ..review import trail_dict, trail_markdown
        scrub = redactor.text if redactor else None
        trail = trail_markdown(trail_reviews, scrub)
        files["reviews.json"] = json.dumps(trail_dict(trail_reviews, scrub), indent=1) + "\n"
    files["report.md"] = _report(snap, redactor, kb_dirs, notes, trail)
    files["snapshot.json"] = snap.to_json() + "\n"
    files["README.txt"] = _readme(snap, sorted(files), notes)
    if redactor:
        _check(redactor, files)
    return files


def report_markdown(snapshot: Snapshot, *, redact: bool = False, kb_dirs: Sequence[str] = ()) -> str:
    """report.md alone (``p2ptop report`` without ``--bundle``), redacted as a bundle would be."""
    redactor = Redactor.for_snapshot(snapshot) if redact else None
    snap = redactor.snapshot(snapshot) if redactor else snapshot
    notes = [REDACTED_NOTE] if redactor else []
    reviews, why = reviews_of(snapshot)
    if why:
        notes.append(why)
    trail = ""
    if reviews:
        from ..review import trail_markdown
        trail = trail_markdown(reviews, redactor.text if redactor else None)
    return _report(snap, redactor, kb_dirs, notes, trail)


def _report(snap: Snapshot, redactor: Optional[Redactor], kb_dirs: Sequence[str], notes: list[str], trail: str = "") -> str:
    """report.md of an already redacted snapshot; knowledge-base text and notes go through the redactor too."""
    report = build_report(snap, kb_dirs=kb_dirs, notes=notes, trail=trail)
    return redactor.text(report) if redactor else report


def _check(redactor: Redactor, files: dict[str, str | bytes]) -> None:
    """Refuse to write a redacted bundle in which an original is still there."""
    for name, data in files.items():
        if isinstance(data, bytes):
            continue  # the PNG is drawn from the redacted SVG
        if name.endswith(".json"):  # as a person reads it, non-ASCII text not \u-escaped
            data = json.dumps(json.loads(data), ensure_ascii=False)
        kinds = redactor.svg_leaks(data) if name.endswith(".svg") else redactor.leaks(data)
        if kinds:
            raise ExportError(
                f"redaction incomplete: {', '.join(kinds)} still present in {name}; no bundle was written"
            )


def _readme(snap: Snapshot, names: list[str], notes: list[str]) -> str:
    what = {
        "screenshot.svg": "the p2ptop screen as an SVG (opens in any browser)",
        "screenshot.txt": "the same screen as plain text",
        "screenshot.png": "the same screen as a PNG",
        "report.md": "the report, paste-ready in a GitHub or Jira issue",
        "snapshot.json": "the snapshot: `p2ptop --replay snapshot.json` (dashboard) or `p2ptop topo --replay snapshot.json`, on any machine, GPU or not",
    }
    lines = [f"p2ptop ticket bundle: {clean(snap.source.label)}, host {clean(snap.source.hostname or 'N/A')}", ""]
    if snap.source.simulated:
        lines += ["SIMULATED DATA: made from a bundled demo or a replay of one, not from real hardware.", ""]
    lines += [f"{name:<15} {what[name]}" for name in names if name in what]
    lines += [""] + notes if notes else []
    return "\n".join(lines) + "\n"
