"""The subcommands of the ``p2ptop`` command line, one module each.

Each module has ``add_parser(subparsers)`` and ``run(args) -> int`` (the exit status).
"""

COMMANDS = ("topo", "snapshot", "demo", "bench", "doctor", "explain", "kb", "report", "nccl", "import", "review", "exporter", "fleet")
#: a command whose module name differs from the command (``import`` is a Python keyword)
MODULES = {"import": "import_"}
