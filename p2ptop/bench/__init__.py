"""Copy tests: measure a GPU pair (bandwidth, latency, integrity) in a child process.

- ``worker.py`` (``python -m p2ptop.bench.worker``): the only module that imports CuPy; it runs the
  tests in its own process and writes JSON lines on stdout (the protocol is described there).
- ``runner.py``: starts the worker, streams its progress, enforces the timeout, kills it (its whole
  process group) on timeout or cancel, and turns whatever happened into :class:`~p2ptop.model.BenchResult`.
- ``simulate.py``: results for demo and replay snapshots, from the fabric's expected figures, labelled simulated.
- ``judge.py``: each figure against what the link should give (healthy / slow / failing) and the findings.
- ``catalog.py``: the test and measurement names shared by all of the above.
"""
