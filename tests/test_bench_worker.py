"""Pieces of the CuPy worker that run without CuPy: PCI bus ids (NVML's form vs CUDA's) and its test order."""

from p2ptop.bench import worker
from p2ptop.bench.catalog import MEASUREMENTS, TEST_MEASUREMENTS, TESTS


def test_nvml_and_cuda_bus_ids_match():
    assert worker._bus_key("00000000:3A:00.0") == worker._bus_key("0000:3a:00.0") == (0, 0x3A, 0, 0)
    assert worker._bus_key("00000001:07:1F.3") == (1, 7, 0x1F, 3)
    assert worker._bus_key("00000000:00:06.0") != worker._bus_key("00000000:00:07.0")
    assert worker._bus_key("garbage") is None


def test_every_test_has_a_worker_method_and_known_measurements():
    for test in TESTS:
        assert callable(getattr(worker.Worker, f"test_{test}"))
        assert set(TEST_MEASUREMENTS[test]) <= set(MEASUREMENTS)
    assert {m for ms in TEST_MEASUREMENTS.values() for m in ms} == set(MEASUREMENTS)
