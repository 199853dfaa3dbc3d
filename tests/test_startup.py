"""Start-up: each command imports only what it uses (checked in a fresh interpreter), and the path classes
that `topo` prints without the graph equal the graph's on every demo."""

import json
import subprocess
import sys

import pytest

from p2ptop.demos import DEMOS, load_demo
from p2ptop.fabric import Fabric, PathClasses

HEAVY = ("networkx", "textual", "jsonschema", "p2ptop.host", "p2ptop.knowledge", "p2ptop.ui", "p2ptop.diagnose")


def imported(*argv: str) -> set[str]:
    """The heavy modules a `p2ptop ARGV` run imported, from sys.modules at exit, in a fresh interpreter."""
    code = (
        "import sys, io, contextlib, json\n"
        "from p2ptop.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        f"        main({list(argv)!r})\n"
        "    except SystemExit:\n"
        "        pass\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} or "
        f"any(m == h or m.startswith(h + '.') for h in {HEAVY!r}))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    mods = set(json.loads(out.stdout.strip().splitlines()[-1]))
    return {h for h in HEAVY if any(m == h or m.startswith(h + ".") for m in mods)}


def test_help_imports_neither_networkx_nor_textual():
    assert imported("--help") == set()  # not even what the commands use: their help is commands.SUMMARIES


def test_a_command_help_still_lists_its_options():
    out = subprocess.run([sys.executable, "-m", "p2ptop", "topo", "--help"], capture_output=True, text=True, check=True)
    assert "--json" in out.stdout and "--replay" in out.stdout


@pytest.mark.parametrize("demo", ["dgx-h100", "pcie-4gpu-iommu", "nvl72"])
def test_topo_text_needs_no_graph_when_nvml_gave_every_ancestor(demo):
    assert imported("topo", "--demo", demo) & set(HEAVY) == set()


def test_snapshot_imports_no_graph_and_no_ui():
    assert imported("snapshot", "--demo", "dgx-h100") & set(HEAVY) == set()


def test_doctor_imports_no_ui():
    mods = imported("doctor", "--demo", "dgx-h100")
    assert "textual" not in mods and "p2ptop.ui" not in mods
    assert "networkx" in mods and "p2ptop.host" in mods  # the findings need the graph; doctor shows host facts


def test_topo_builds_the_graph_where_only_it_can_say(tmp_path):
    snap = load_demo("pcie-4gpu-iommu")
    for pair in snap.pairs:
        pair.ancestor = None  # NVML could not say: the PCIe structure read from sysfs decides
    path = tmp_path / "s.json"
    path.write_text(snap.to_json())
    assert "networkx" in imported("topo", "--replay", str(path))


@pytest.mark.parametrize("demo", list(DEMOS))
def test_path_classes_without_the_graph_equal_the_graphs(demo):
    snap = load_demo(demo)
    fabric, quick = Fabric(snap), PathClasses(snap)
    for a in snap.gpu_indices:
        for b in snap.gpu_indices:
            assert quick.of(a, b) in (None, fabric.path_class(a, b)), (a, b)
            assert quick.nvlink_count(a, b) == fabric.nvlink_count(a, b), (a, b)


def test_topo_as_a_process_ends_quickly_with_its_whole_output_and_status():
    # cli.entry ends a QUICK_EXIT command with os._exit after flushing: the output must be whole, the status kept
    ok = subprocess.run([sys.executable, "-m", "p2ptop", "topo", "--demo", "dgx-h100"], capture_output=True, text=True)
    assert ok.returncode == 0
    full = subprocess.run([sys.executable, "-c", "import sys; from p2ptop.cli import main; sys.exit(main(['topo', '--demo', 'dgx-h100']))"],
                          capture_output=True, text=True)
    assert ok.stdout == full.stdout and "GPU7" in ok.stdout
    bad = subprocess.run([sys.executable, "-m", "p2ptop", "topo", "--demo", "nosuch"], capture_output=True, text=True)
    assert bad.returncode == 2 and "no demo named 'nosuch'" in bad.stderr
    # a reader that stops early (| head -1): no traceback
    p = subprocess.Popen([sys.executable, "-m", "p2ptop", "topo", "--demo", "nvl72"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.readline()
    p.stdout.close()
    err = p.stderr.read().decode()
    p.wait(timeout=60)
    assert "Traceback" not in err
