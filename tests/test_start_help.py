"""`p2ptop --help` shows commands.SUMMARIES without importing the command modules; each module's own
parser uses the same one-line help."""

import argparse

import pytest

from p2ptop import cli
from p2ptop.commands import COMMANDS, SUMMARIES


def _helps(parser: argparse.ArgumentParser) -> dict[str, str]:
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    return {c.dest: c.help for c in sub._choices_actions}


def test_every_command_has_one_summary_and_its_module_uses_it():
    assert set(SUMMARIES) == set(COMMANDS)
    full = _helps(cli.build_parser(COMMANDS))
    short = _helps(cli.build_parser(COMMANDS, summaries_only=True))
    assert full == short == SUMMARIES


def test_help_imports_neither_the_model_nor_the_command_modules():
    import subprocess
    import sys

    code = ("import sys, io, contextlib\nfrom p2ptop.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()):\n    try: main(['--help'])\n    except SystemExit: pass\n"
            "print(sorted(m for m in sys.modules if m in ('p2ptop.model', 'dataclasses', 'p2ptop.commands.common', 'argparse')"
            " or m.startswith('p2ptop.commands.') and m != 'p2ptop.commands'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


@pytest.mark.parametrize("columns", [1, 10, 24, 40, 60, 80, 81, 120, 200])
def test_bare_help_is_what_argparse_prints(columns, monkeypatch, capsys):
    """cli.top_help lays out the bare --help without argparse: the same text argparse's HelpFormatter
    gives for the same parser, at every width (usage wrapped or not, narrow terminals included)."""
    monkeypatch.setenv("COLUMNS", str(columns))
    with pytest.raises(SystemExit):
        cli.build_parser(COMMANDS, summaries_only=True).parse_args(["--help"])
    by_argparse = capsys.readouterr().out
    assert cli.main(["--help"]) == 0
    assert capsys.readouterr().out == by_argparse
    assert "usage: p2ptop" in by_argparse and "explain" in by_argparse


def test_help_with_a_command_is_that_commands_help(capsys):
    with pytest.raises(SystemExit):
        cli.main(["explain", "--help"])
    out = capsys.readouterr().out
    assert out.startswith("usage: p2ptop explain") and "COMMAND" not in out
