"""`p2ptop --help` reads each command's one-line help from its module's text: the same as parsing it."""

import ast
from importlib.util import find_spec

from p2ptop import cli
from p2ptop.commands import COMMANDS, MODULES


def test_help_summaries_read_from_the_text_equal_what_the_modules_say():
    got = cli.command_summaries()
    checked = 0
    for name in COMMANDS:
        spec = find_spec(f"p2ptop.commands.{MODULES.get(name, name)}")
        if spec is None:
            continue
        tree = ast.parse(open(spec.origin, encoding="utf-8").read())
        calls = [n for n in ast.walk(tree) if isinstance(n, ast.Call) and getattr(n.func, "attr", None) == "add_parser"
                 and n.args and isinstance(n.args[0], ast.Constant) and n.args[0].value == name]
        helps = [k.value.value for k in calls[0].keywords if k.arg == "help"]
        assert got[name] == helps[0], name
        checked += 1
    assert checked == len(got) >= 10


def test_help_imports_neither_the_model_nor_ast(tmp_path):
    import subprocess
    import sys

    code = ("import sys, io, contextlib\nfrom p2ptop.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    try: main(['--help'])\n    except SystemExit: pass\n"
            "print(sorted(m for m in ('p2ptop.model', 'ast', 'dataclasses', 'p2ptop.commands.common') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
