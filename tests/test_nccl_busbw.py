"""busbw as nccl-tests computes it, checked against the real nccl-tests 2.19.6 tables of the two-H200 host
(../shared/captures/h200x2-nvswitch-vm/nccl-tests-*_perf.txt: same sizes, same algorithm factors)."""

import pathlib

import pytest

from p2ptop.nccl import busbw

CAP = pathlib.Path(__file__).resolve().parent.parent.parent / "shared" / "captures" / "h200x2-nvswitch-vm"


def nccl_tests_rows(path):
    """(size, out-of-place time us, algbw, busbw, in-place time, algbw, busbw) of an nccl-tests table."""
    rows = []
    for line in path.read_text().splitlines():
        f = line.split()
        if len(f) >= 13 and f[0].isdigit():
            rows.append((int(f[0]), int(f[1]), float(f[5]), float(f[6]), float(f[7]), float(f[9]), float(f[10]), float(f[11])))
    return rows


def nranks(path):
    return sum(1 for line in path.read_text().splitlines() if line.startswith("#  Rank"))


@pytest.mark.skipif(not CAP.exists(), reason="the shared H200 capture is not beside the repository")
@pytest.mark.parametrize("name, op", [("nccl-tests-all_reduce_perf.txt", "all_reduce"), ("nccl-tests-sendrecv_perf.txt", "sendrecv")])
def test_busbw_matches_the_real_nccl_tests_tables(name, op):
    path = CAP / name
    rows = nccl_tests_rows(path)
    n = nranks(path)
    assert n == 2 and len(rows) == 14
    # same sizes: nccl-tests -b 8 -e 1G -f 4 (the table's header), float32 counts
    assert [r[0] for r in rows] == busbw.sizes(8, 1 << 30, 4)
    assert all(r[1] == r[0] // busbw.TYPE_SIZE for r in rows)
    for size, count, t_out, alg_out, bus_out, t_in, alg_in, bus_in in rows:
        for t_us, alg, bus in ((t_out, alg_out, bus_out), (t_in, alg_in, bus_in)):
            ours = busbw.row(op, size, [t_us * 1e-6], n)
            # the table prints time to 0.01 us and GB/s to 0.01: the same figures within that rounding
            tol = 0.006 + alg * 0.01 / t_us
            assert ours["algbw"] == pytest.approx(alg, abs=tol), (size, t_us)
            assert ours["busbw"] == pytest.approx(bus, abs=tol), (size, t_us)
            assert ours["count"] == count
    big = rows[-1]
    assert busbw.row(op, big[0], [big[2] * 1e-6], n)["busbw"] == pytest.approx({"all_reduce": 313.21, "sendrecv": 355.94}[op], abs=0.01)


def test_the_algorithm_factors_are_nccl_tests_own():
    # all_reduce.cu AllReduceGetBw: 2(n-1)/n; sendrecv.cu SendRecvGetBw: 1
    assert busbw.bus_factor("all_reduce", 2) == 1.0
    assert busbw.bus_factor("all_reduce", 8) == pytest.approx(1.75)
    assert busbw.bus_factor("all_reduce", 72) == pytest.approx(2 * 71 / 72)
    assert busbw.bus_factor("sendrecv", 8) == 1.0
    assert busbw.busbw("all_reduce", 1 << 30, 0.01, 4) == pytest.approx((1 << 30) / 1e9 / 0.01 * 1.5)
    with pytest.raises(ValueError):
        busbw.bus_factor("alltoall", 2)


def test_ranks_times_are_averaged_as_nccl_tests_does_by_default():
    r = busbw.row("sendrecv", 1 << 20, [10e-6, 30e-6], 2)
    assert r["time_us"] == 20.0 and r["algbw"] == pytest.approx((1 << 20) / 1e9 / 20e-6, abs=0.01)


def test_sizes_default_to_8_bytes_through_1_gib():
    s = busbw.sizes()
    assert s[0] == 8 and s[-1] == 1 << 30 and len(s) == 28
    with pytest.raises(ValueError):
        busbw.sizes(8, 4, 2)
