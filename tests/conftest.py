import os

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
H200_CAPTURE = os.path.join(FIXTURES, "captures", "h200x2-nvswitch-vm")


@pytest.fixture
def h200_capture():
    from p2ptop.sources.capture import Capture

    return Capture.load(H200_CAPTURE)


@pytest.fixture(autouse=True)
def _private_gpu_locks(tmp_path_factory, monkeypatch):
    """Copy tests take host-wide GPU locks: tests keep theirs in a folder of their own."""
    monkeypatch.setenv("P2PTOP_LOCK_DIR", str(tmp_path_factory.mktemp("locks")))
