"""Every script under benchmarks/ imports (its names from p2ptop still exist): a refactor that renames what a
benchmark uses breaks it here, not on the device machine where it was to print its figures."""

from __future__ import annotations

import glob
import importlib.util
import os

import pytest

BENCH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "benchmarks")
SCRIPTS = sorted(glob.glob(os.path.join(BENCH, "*.py")) + glob.glob(os.path.join(BENCH, "device", "*.py")))


@pytest.mark.parametrize("path", SCRIPTS, ids=[os.path.relpath(p, BENCH) for p in SCRIPTS])
def test_benchmark_script_imports(path, monkeypatch):
    monkeypatch.syspath_prepend(os.path.dirname(path))
    spec = importlib.util.spec_from_file_location("bench_under_test_" + os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # the scripts run their work under `if __name__ == "__main__"` only
    assert callable(getattr(module, "main", None)) or "__main__" in open(path, encoding="utf-8").read()
