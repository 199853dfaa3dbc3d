"""The exporter's HTTP face: ``/metrics`` in Prometheus's text format, ``/`` a one-line pointer.

A threading server, so a slow client never holds another scrape; each scrape only joins text the
reader thread left (see core.py).
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Optional

from .core import Exporter

#: Prometheus's text format 0.0.4: what every Prometheus 2.x reads (prometheus-client 0.2x defaults to 1.0.0).
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def parse_listen(text: str) -> tuple[str, int]:
    """'ADDR:PORT', ':PORT' or 'PORT' -> (addr, port); ValueError with a clear message."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = "", text
    host = host.strip("[]") or "0.0.0.0"
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"--listen {text!r}: expected ADDR:PORT, e.g. 127.0.0.1:9469 or :9469")
    return host, int(port)


def make_server(exporter: Exporter, host: str, port: int) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                body, ctype, code = exporter.scrape(), CONTENT_TYPE, 200
            elif path == "/":
                body, ctype, code = b"p2ptop exporter: metrics at /metrics\n", "text/plain; charset=utf-8", 200
            else:
                body, ctype, code = b"not found; metrics at /metrics\n", "text/plain; charset=utf-8", 404
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args) -> None:  # quiet: one line per scrape is noise
            return

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    return server


def serve_in_thread(server: ThreadingHTTPServer) -> threading.Thread:
    t = threading.Thread(target=server.serve_forever, name="p2ptop-exporter-http", daemon=True)
    t.start()
    return t
