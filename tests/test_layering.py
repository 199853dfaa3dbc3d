"""House rules: only ui/ imports textual, only sources/nvml.py imports pynvml, only the worker processes import cupy."""

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent / "p2ptop"


def imports(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                yield a.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module.split(".")[0]


def offenders(module, allowed):
    out = []
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT).as_posix()
        if module in set(imports(path)) and not allowed(rel):
            out.append(rel)
    return out


def test_only_ui_imports_textual():
    assert offenders("textual", lambda rel: rel.startswith("ui/")) == []


def test_only_the_nvml_source_imports_pynvml():
    assert offenders("pynvml", lambda rel: rel == "sources/nvml.py") == []


def test_only_the_bench_worker_imports_cupy():
    """The worker processes: copy tests, IPC sides and NCCL ranks (bench/worker*), each in its own process."""
    assert offenders("cupy", lambda rel: rel.startswith("bench/worker")) == []
    assert offenders("cupy_backends", lambda rel: rel.startswith("bench/worker")) == []
