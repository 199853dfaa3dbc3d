"""The subcommands of the ``p2ptop`` command line, one module each.

Each module has ``add_parser(subparsers)`` and ``run(args) -> int`` (the exit status).
"""

COMMANDS = ("topo", "snapshot", "demo", "bench", "doctor", "explain", "kb", "report", "nccl", "import", "review", "exporter", "fleet")
#: a command whose module name differs from the command (``import`` is a Python keyword)
MODULES = {"import": "import_"}
#: each command's one-line help (``p2ptop --help`` shows these without importing the command modules)
SUMMARIES = {
    "topo": "print the path matrix (topo -m) and the P2P matrices (topo -p2p r/w/n/a/p)",
    "snapshot": "write a snapshot (JSON) of this host, or of a demo/replay",
    "demo": "list the bundled demo topologies (simulated)",
    "bench": "copy tests: bandwidth, latency and data integrity of GPU pairs and host links (needs CuPy; simulated with --demo/--replay)",
    "doctor": "host facts, findings and matching knowledge-base entries (exit 0: nothing wrong, 1: a problem, 2: could not run)",
    "explain": "match a log (FILE, or - for stdin) and the host's findings to knowledge-base entries",
    "kb": "lint, list and show knowledge-base entries",
    "report": "a ticket: report.md on stdout, or with --bundle a folder with screenshot, report and snapshot",
    "nccl": "NCCL's transport per GPU pair and its bus bandwidth (runs NCCL, or reads a job's NCCL_DEBUG=INFO log with --log)",
    "import": "turn a pasted nvidia-smi topo -m (and -p2p, -q) into a snapshot file",
    "review": "fixes tried on failing pairs: list, show ID, export ID",
    "exporter": "Prometheus metrics: P2P status per pair, paths, NVLinks, PCIe, copy tests, findings, read health",
    "fleet": "many hosts: snapshots (directory, glob) or Prometheus, ranked by worst state, odd ones out",
}
