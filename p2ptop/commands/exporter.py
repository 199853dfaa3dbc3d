"""``p2ptop exporter``: Prometheus metrics of this host (or of a demo or saved snapshot, labelled simulated)."""

from __future__ import annotations

import argparse
import re
import signal
import sys
import threading

from .common import EXIT_CANNOT_RUN, EXIT_OK, add_source_options, fail
from . import SUMMARIES

DEFAULT_LISTEN = ":9469"
_DURATION = re.compile(r"(\d+(?:\.\d+)?)([smhd]?)")
_UNIT_S = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str) -> float:
    """'90', '90s', '30m', '1h30m', '1d' -> seconds; ValueError when it is none of those."""
    text = text.strip().lower()
    pos, total = 0, 0.0
    for m in _DURATION.finditer(text):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNIT_S[m.group(2)]
        pos = m.end()
    if pos != len(text) or not text or total <= 0:
        raise ValueError(f"{text!r} is not a duration (e.g. 90s, 30m, 6h, 1h30m)")
    return total


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "exporter",
        help=SUMMARIES["exporter"],
        description="Serve Prometheus metrics at http://ADDR:PORT/metrics. NVML is read in its own thread every "
        "--interval seconds; a scrape never waits for it and serves the last read with its age. Labels follow "
        "dcgm-exporter's (gpu, UUID, pci_bus_id, modelName, Hostname). With --demo or --replay the figures are "
        "simulated and p2ptop_simulated says so.",
    )
    add_source_options(p)
    p.add_argument("--listen", default=DEFAULT_LISTEN, metavar="ADDR:PORT", help=f"where to serve (default {DEFAULT_LISTEN}; port 0 picks a free one)")
    p.add_argument("--interval", type=float, default=15.0, metavar="SECONDS", help="seconds between reads (default 15)")
    p.add_argument("--bench-every", metavar="DURATION", help="run copy tests of every pair this often (e.g. 6h), only while every GPU is idle")
    p.add_argument("--bench-files", metavar="GLOB", help="watch `bench --save` files matching GLOB and export their copy tests")
    p.add_argument("--once", action="store_true", help="print one scrape to stdout and exit (no server)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    try:
        from ..exporter import Exporter, make_reader, make_server, parse_listen, serve_in_thread
    except ImportError as e:
        return fail(f"the exporter needs prometheus-client ({e}); pip install 'p2ptop[exporter]'")
    if args.interval <= 0:
        return fail("--interval must be a positive number of seconds")
    try:
        bench_every = parse_duration(args.bench_every) if args.bench_every else None
        host, port = parse_listen(args.listen)
    except ValueError as e:
        return fail(f"--bench-every {e}" if "duration" in str(e) else str(e))
    exporter = Exporter(make_reader(demo=args.demo, replay=args.replay), args.interval,
                        kb_dirs=tuple(getattr(args, "kb", []) or []), bench_every=bench_every, bench_files=args.bench_files)
    if args.once:
        exporter.read_once()
        if bench_every:
            exporter.bench_if_idle()
            exporter.read_once()
        sys.stdout.write(exporter.scrape().decode("utf-8"))
        return EXIT_OK
    try:
        server = make_server(exporter, host, port)
    except OSError as e:
        return fail(f"cannot listen on {args.listen}: {e.strerror or e}")
    exporter.start()
    serve_in_thread(server)
    addr, real_port = server.server_address[:2]
    shown = "127.0.0.1" if addr in ("0.0.0.0", "") else addr
    print(f"p2ptop exporter: serving http://{shown}:{real_port}/metrics (reads every {args.interval:g} s"
          + (", simulated data" if args.demo or args.replay else "") + ")", flush=True)
    done = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: done.set())
    done.wait()
    server.shutdown()
    exporter.stop()
    return EXIT_OK
