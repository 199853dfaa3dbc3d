"""Prometheus exporter (``p2ptop exporter``): P2P status, paths, links, copy tests, findings and read health.

The face: :class:`Exporter` (reads in its own thread, ``scrape()`` serves the last read),
:func:`make_reader` (where snapshots come from), :func:`make_server` (HTTP), :data:`METRICS` (every
metric name it emits, with type and help).
"""

from .core import Exporter
from .metrics import METRICS
from .server import make_server, parse_listen, serve_in_thread
from .source import make_reader

__all__ = ["Exporter", "METRICS", "make_reader", "make_server", "parse_listen", "serve_in_thread"]
