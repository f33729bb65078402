"""The course's value iteration in its own order (babytris.claims.course_code), against
what the course's program printed when built here (diaarca/baby-tetris, g++ 12.2.0,
libstdc++ of Debian 12; its main replaced by one that runs only this value iteration,
with the first piece, height and discount given and EPSILON 1e-8: the course's own main
draws the first piece after srand(time)) and against babytris's own solve."""

import numpy as np
import pytest

import babytris
from babytris.claims.course_code import course_trace, hash_map_order

# `./tetris 4 0.1` at commit c40fed4 with an L first, every sweep's delta as printed.
C40FED4_4X4_01 = ["6.10288", "0.45", "0.0253066", "0.000888491", "5.21674e-05", "2.60806e-06", "1.22162e-07"]
C40FED4_4X4_01 += ["1.13432e-09"]
# The same at commit 3a845fc (its search also starts from the other piece, an I).
C3A845FC_4X4_01 = ["6.10301", "0.462506", "0.0259078", "0.00126553", "6.19904e-05", "2.66266e-06", "9.27239e-08"]
C3A845FC_4X4_01 += ["1.34931e-09"]


def test_the_hash_map_order_is_libstdcxx_s():
    # Printed by iterating a std::unordered_map<unsigned long, int> after emplacing keys
    # (k*k*31 + k*7) % 1009 -> k for k = 0..69 (three rehashes, buckets shared), g++ 12.2.0.
    printed = [68, 67, 65, 64, 62, 60, 19, 59, 43, 22, 61, 17, 23, 48, 16, 30, 57, 15, 49, 0, 27, 20, 7, 52, 26]
    printed += [47, 55, 66, 1, 46, 11, 3, 10, 4, 37, 21, 9, 5, 14, 69, 25, 35, 18, 2, 42, 6, 8, 12, 29, 32, 31]
    printed += [28, 50, 38, 34, 36, 45, 33, 40, 13, 44, 41, 51, 53, 54, 24, 56, 63, 39, 58]
    assert hash_map_order([(k * k * 31 + k * 7) % 1009 for k in range(70)]) == printed


@pytest.mark.parametrize(("seeds", "printed"), [(("L",), C40FED4_4X4_01), (("L", "I"), C3A845FC_4X4_01)])
def test_every_sweep_is_the_course_programs(seeds, printed):
    trace = course_trace(4, 4, 0.1, seeds=seeds)
    assert [f"{d:.6g}" for d in trace.deltas] == printed
    assert f"{trace.values.mean():.6g}" == "0.565842"  # its "average over final V"


def test_discount_09_as_the_programs_print_it():
    # c40fed4 with an L first printed 89 sweeps, from 8.32875 down to 9.75963e-09, average 4.15109;
    # with an I first, 7.98949 in 90.
    trace = course_trace(4, 4, 0.9, seeds=("L",))
    assert (f"{trace.deltas[0]:.6g}", f"{trace.deltas[-1]:.6g}", trace.sweeps) == ("8.32875", "9.75963e-09", 89)
    assert f"{trace.values.mean():.6g}" == "4.15109"
    assert str(course_trace(4, 4, 0.9, seeds=("I",))) == "7.98949 in 90"
    # 3a845fc printed 8.32875 in 87; the slides print 8.36976 in 90 (an I first, then an L).
    assert str(course_trace(4, 4, 0.9, seeds=("L", "I"))) == "8.32875 in 87"
    assert str(course_trace(4, 4, 0.9, seeds=("I", "L"))) == "8.36976 in 90"


def test_the_course_game_is_babytris_s():
    trace = course_trace(4, 4, 0.9, tol=1e-12)
    exact = babytris.solve(width=4, height=4, discount=0.9, tol=1e-12)
    assert len(trace.values) == exact.n_states == 25_956
    row = {int(b): i for i, b in enumerate(exact.boards)}
    assert set(row) == {int(b) for b in trace.boards}
    rows = [row[int(b)] for b in trace.boards]
    np.testing.assert_allclose(trace.values, exact.values[rows, trace.pieces], atol=1e-10)


def test_the_order_changes_the_trace_not_the_values():
    a, b = course_trace(4, 3, 0.5, seeds=("I", "L")), course_trace(4, 3, 0.5, seeds=["L", "I"])
    assert a.deltas != b.deltas
    va = dict(zip(zip(a.boards.tolist(), a.pieces.tolist()), a.values))
    vb = dict(zip(zip(b.boards.tolist(), b.pieces.tolist()), b.values))
    assert va.keys() == vb.keys()
    assert max(abs(va[k] - vb[k]) for k in va) < 1e-7


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"width": 3}, "width"),
        ({"width": 5}, "four cells"),
        ({"height": np.int64(6)}, "height"),
        ({"height": 2}, "height"),
        ({"discount": 1.0}, "discount"),
        ({"discount": float("nan")}, "discount"),
        ({"tol": 0}, "tol"),
        ({"max_sweeps": 0}, "max_sweeps"),
        ({"seeds": ("I", "I")}, "seeds"),
        ({"seeds": ("O",)}, "seeds"),
        ({"seeds": "IL"}, "seeds"),
        ({"seeds": [["I"]]}, "seeds"),
    ],
)
def test_bad_arguments_are_named(kwargs, field):
    with pytest.raises(ValueError, match=field):
        course_trace(**kwargs)


@pytest.mark.parametrize(
    ("hashes", "field"), [([1, 1], "distinct"), ([-1], "size_t"), ([2**64], "size_t"), ([True], "size_t")]
)
def test_bad_hashes_are_refused(hashes, field):
    with pytest.raises(ValueError, match=field):
        hash_map_order(hashes)


def test_numpy_scalars_and_a_sweep_cap():
    trace = course_trace(np.int64(4), np.int32(4), np.float64(0.9), max_sweeps=np.int64(3))
    assert trace.sweeps == 3
