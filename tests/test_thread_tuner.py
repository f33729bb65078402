"""The thread tuner: one thread unless more are clearly faster, and back to one when they stall.

The sweeps here are fakes that advance a fake clock, so the tuner's choices
are tested without timing anything."""

from __future__ import annotations

import os

import pytest

from babytris.engine import resources
from babytris.solvers import sweeping


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class FakeSweeper:
    """Sweeps that take ``seconds[threads]`` of the fake clock (a list is consumed per sweep)."""

    def __init__(self, clock: FakeClock, seconds: dict) -> None:
        self.clock, self.seconds, self.n_threads, self.used = clock, seconds, 1, []

    def _sweep(self) -> float:
        took = self.seconds[self.n_threads]
        self.clock.now += took.pop(0) if isinstance(took, list) else took
        self.used.append(self.n_threads)
        return 0.0

    def greedy_sweep(self, V_prev=None, W_prev=None) -> float:
        return self._sweep()

    def evaluation_sweep(self, changes=None) -> float:
        return self._sweep()


@pytest.fixture
def clock(monkeypatch):
    fake = FakeClock()
    monkeypatch.setattr(sweeping.time, "perf_counter", fake)
    monkeypatch.setattr(resources.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(resources, "runnable_elsewhere", lambda: 0)  # an idle machine unless a test says otherwise
    monkeypatch.setattr(sweeping, "cpu_pressure", lambda: None)  # no pressure reading unless a test gives one
    return fake


def run(clock, seconds, n_sweeps=8, n_threads=2):
    sweeper = FakeSweeper(clock, seconds)
    tuner = sweeping.ThreadTuner(sweeper, n_threads)
    for _ in range(n_sweeps):
        tuner.greedy_sweep()
    return sweeper.used


def test_threads_clearly_faster_are_kept(clock):
    # untimed first sweep, one timed one-thread sweep, the probe, then threads
    assert run(clock, {1: 0.010, 2: 0.006}) == [1, 1, 2, 2, 2, 2, 2, 2]


def test_threads_not_clearly_faster_are_dropped(clock):
    # 0.85 of one thread's time in each of the PROBES threaded sweeps
    assert sweeping.ThreadTuner.PROBES == 3
    assert run(clock, {1: 0.010, 2: 0.0085}) == [1, 1, 2, 2, 2, 1, 1, 1]


def test_a_slow_first_threaded_sweep_is_probed_again(clock):
    """The first threaded sweep wakes the workers and warms the second core's caches: a later
    probe that is clearly faster keeps the threads."""
    assert run(clock, {1: 0.010, 2: [0.012, 0.009, 0.006] + [0.006] * 5}) == [1, 1, 2, 2, 2, 2, 2, 2]


def kinds(clock, seconds, order):
    """The threads each sweep of ``order`` ("g": greedy, "e": evaluation) ran on."""
    sweeper = FakeSweeper(clock, seconds)
    tuner = sweeping.ThreadTuner(sweeper, 2)
    for kind in order:
        tuner.greedy_sweep() if kind == "g" else tuner.evaluation_sweep()
    return sweeper.used


def test_a_kind_takes_the_threads_its_sibling_kept(clock):
    """Greedy and evaluation sweeps go through the same layers: once the evaluation's probe kept the
    threads, greedy sweeps take them without a one-thread sweep of their own."""
    assert kinds(clock, {1: 0.010, 2: 0.006}, "geeegeeeg") == [1, 1, 2, 2, 2, 2, 2, 2, 2]
    # Not the other way round: evaluation sweeps, which may be too short for threads, probe themselves.
    assert kinds(clock, {1: 0.010, 2: 0.006}, "ggggeee") == [1, 1, 2, 2, 1, 2, 2]


def test_no_sibling_threads_where_the_probe_dropped_them(clock):
    """Evaluation probes not clearly faster: the greedy sweeps make their own reference and probe."""
    used = kinds(clock, {1: 0.010, 2: 0.0085}, "geeeegggg")
    assert used == [1, 1, 2, 2, 2, 1, 2, 2, 2]


def test_an_inherited_kind_still_falls_back_when_it_stalls(clock):
    """The threads' speed-up for the sibling estimates one thread's greedy time: 6 ms x 10/6 = 10 ms;
    a greedy sweep over twice that sends the greedy kind back to one thread for good."""
    seconds = {1: 0.010, 2: [0.006, 0.006, 0.025] + [0.006] * 5}  # (the evaluation probe, then greedy sweeps)
    assert kinds(clock, seconds, "geegggg") == [1, 1, 2, 2, 2, 1, 1]
    seconds = {1: 0.010, 2: [0.006, 0.006, 0.015] + [0.006] * 5}  # under twice the estimate (not the 6 ms seen)
    assert kinds(clock, seconds, "geegggg") == [1, 1, 2, 2, 2, 2, 2]


def test_short_sweeps_never_try_threads(clock):
    assert run(clock, {1: 0.0002, 2: 0.00001}) == [1] * 8
    assert run(clock, {1: 0.0007, 2: 0.0004}) == [1, 1, 2, 2, 2, 2, 2, 2]  # 4x5's evaluation sweeps


def test_threads_that_stall_fall_back_to_one_thread_for_good(clock):
    stall = [0.006, 0.006, 0.030] + [0.001] * 10  # the machine gets busy at the third threaded sweep
    assert run(clock, {1: 0.010, 2: stall}) == [1, 1, 2, 2, 2, 1, 1, 1]


def test_one_thread_asked_is_one_thread(clock):
    assert run(clock, {1: 0.010, 2: 0.001}, n_threads=1) == [1] * 8


def test_no_probe_while_other_tasks_hold_the_cores(clock, monkeypatch):
    monkeypatch.setattr(resources, "runnable_elsewhere", lambda: 2)  # a spinning process per core
    assert run(clock, {1: 0.010, 2: 0.006}) == [1] * 8


def test_the_probe_waits_for_free_cores(clock, monkeypatch):
    """Cores found busy are not looked at again for BUSY_SECONDS (each look is system calls, where a
    thread on a busy machine loses its core): with sweeps of 10 ms and 20 ms between looks, the
    looks come before sweeps 3, 5 and 7, and the third finds the cores free.  Each busy look
    reads the load twice."""
    monkeypatch.setattr(sweeping.ThreadTuner, "BUSY_SECONDS", 0.02)
    busy = iter([1, 1, 1, 1, 0])  # one other task, then none: two cores free from the third look on
    looks = []
    monkeypatch.setattr(resources, "runnable_elsewhere", lambda: looks.append(clock.now) or next(busy, 0))
    assert run(clock, {1: 0.010, 2: 0.006}) == [1, 1, 1, 1, 1, 1, 2, 2]
    assert looks == pytest.approx([0.020, 0.020, 0.040, 0.040, 0.060])


class FakePressure:
    """``cpu_pressure()`` growing by ``share`` of the fake clock's time (None: unreadable)."""

    def __init__(self, clock: FakeClock, share: float | None) -> None:
        self.clock, self.share, self.reads = clock, share, []

    def __call__(self) -> int | None:
        self.reads.append(round(self.clock.now * 1000))
        return None if self.share is None else round(self.share * self.clock.now * 1e6)


@pytest.mark.parametrize(
    "share, holds",
    [
        # tasks waited for the CPUs (every core busy), or no reading: the long hold at once
        (0.5, [2, 52, 102]),
        (None, [2, 52, 102]),
        # they did not (a task of a moment, or one busy core of two): 2 ms, then twice as long each time
        (0.0, [2, 4, 8, 16, 32, 64, 114]),
        (0.2, [2, 4, 8, 16, 32, 64, 114]),
    ],
)
def test_how_long_busy_cores_hold_the_probe_off(clock, monkeypatch, share, holds):
    """Sweeps of 1 ms on one thread and one other task throughout: the looks (two reads of the load
    each) come as the holds end; the pressure is read as the tuner starts and at each busy look."""
    looks = []
    monkeypatch.setattr(resources, "runnable_elsewhere", lambda: looks.append(round(clock.now * 1000)) or 1)
    pressure = FakePressure(clock, share)
    monkeypatch.setattr(sweeping, "cpu_pressure", pressure)
    sweeper = FakeSweeper(clock, {1: 0.001, 2: 0.0005})
    tuner = sweeping.ThreadTuner(sweeper, 2, sweeping.ThreadTuner.THREADED_FIRST_TOUCHES)
    for _ in range(120):
        tuner.greedy_sweep()
    assert sweeper.used == [1] * 120  # (the first sweep's look found the cores busy too)
    assert looks == [0, 0] + [ms for ms in holds for _ in range(2)]
    assert pressure.reads == [0] + holds


def test_the_short_holds_go_on_doubling_through_a_long_one(clock, monkeypatch):
    """Every busy look in a row doubles the next short hold, a long one (the tasks waited) included;
    a free look starts them again from 2 ms."""
    busy = iter([1] * 8 + [0] + [1] * 2)  # (a busy look reads the load twice, a free one once)
    monkeypatch.setattr(resources, "runnable_elsewhere", lambda: next(busy, 0))
    shares = iter([0.0, 0.0, 0.5, 0.0, 0.0, 0.0])
    monkeypatch.setattr(sweeping.ThreadTuner, "_stalled_share", lambda self: next(shares))
    tuner = sweeping.ThreadTuner(FakeSweeper(clock, {}), 2)
    holds = []
    for _ in range(6):  # busy, busy, busy (waited), busy, free, busy
        free = tuner._cores_free()
        holds.append(None if free else round((tuner._busy_until - clock.now) * 1000))
        clock.now = max(clock.now, tuner._busy_until)
    assert holds == [2, 4, 50, 16, None, 2]


def test_the_stalled_share_is_the_waiting_share_since_the_last_reading(clock, monkeypatch):
    totals = iter([1_000_000, 1_005_000, 1_005_000, None, 1_005_000, 1_010_000, 1_000_000, 1_000_000, 1_100_000])
    monkeypatch.setattr(sweeping, "cpu_pressure", lambda: next(totals))
    tuner = sweeping.ThreadTuner(FakeSweeper(clock, {}), 2)
    assert tuner._stalled_share() is None  # nothing to compare with yet
    clock.now = 0.010
    assert tuner._stalled_share() == pytest.approx(0.5)  # 5 ms of 10
    assert tuner._stalled_share() is None  # no time passed
    clock.now = 0.020
    assert tuner._stalled_share() is None  # unreadable
    clock.now = 0.030
    assert tuner._stalled_share() is None  # readable again: nothing to compare with
    clock.now = 0.040
    assert tuner._stalled_share() == pytest.approx(0.5)
    clock.now = 0.050
    assert tuner._stalled_share() is None  # the total went back (another counter): no answer, not 0
    clock.now = 0.060
    assert tuner._stalled_share() == 0.0
    clock.now = 0.070
    assert tuner._stalled_share() == 1.0  # (at most all the time: the reads' own skew)


def test_a_tuner_reads_the_pressure_as_it_starts(clock, monkeypatch):
    """The first busy look has a window to measure the waits over: the tuner's start (one other task,
    no waits: short holds from the first look on; without the reading at the start, the first look
    finds nothing to compare with and holds for BUSY_SECONDS).  Not for a small table."""
    pressure = FakePressure(clock, 0.0)
    monkeypatch.setattr(sweeping, "cpu_pressure", pressure)
    looks = []
    monkeypatch.setattr(resources, "runnable_elsewhere", lambda: looks.append(round(clock.now * 1000)) or 1)
    run(clock, {1: 0.001, 2: 0.0005}, n_sweeps=10)  # (a small table: no first touches given)
    assert pressure.reads == [2] and looks == [2, 2]  # (no reading at the start: the first busy look holds 50 ms)
    large = sweeping.ThreadTuner.THREADED_FIRST_TOUCHES
    for first_touches, reads in ((large - 1, []), (large, [10]), (large, [10]), (large, [10])):
        pressure.reads.clear()
        sweeping.ThreadTuner(FakeSweeper(clock, {}), 2, first_touches)
        assert pressure.reads == reads
    pressure.reads.clear()
    sweeping.ThreadTuner(FakeSweeper(clock, {}), 1, large)
    assert pressure.reads == []  # one thread asked: nothing to decide


@pytest.mark.parametrize(
    "text, total",
    [
        (
            "some avg10=0.00 avg60=0.00 avg300=0.00 total=2448235100\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
            2448235100,
        ),
        ("some avg10=1.50 avg60=0.20 avg300=0.05 total=12\n", 12),  # (before Linux 5.13: no full line)
        ("full avg10=0.00 avg60=0.00 avg300=0.00 total=0\nsome avg10=0.00 avg60=0.00 avg300=0.00 total=77\n", 77),
        ("some avg10=0.00 avg60=0.00 avg300=0.00\n", None),
        ("some avg10=0.00 total=many\n", None),
        ("", None),
    ],
)
def test_cpu_pressure_reads_the_some_line(monkeypatch, tmp_path, text, total):
    path = tmp_path / "cpu"
    path.write_text(text)
    monkeypatch.setattr(resources, "CPU_PRESSURE", str(path))
    assert resources.cpu_pressure() == total


def test_cpu_pressure_is_none_where_it_cannot_be_read(monkeypatch, tmp_path):
    monkeypatch.setattr(resources, "CPU_PRESSURE", str(tmp_path / "absent"))
    assert resources.cpu_pressure() is None


@pytest.mark.skipif(not os.access(resources.CPU_PRESSURE, os.R_OK), reason="no CPU pressure on this machine")
def test_cpu_pressure_reads_this_machine():
    first = resources.cpu_pressure()
    assert first is not None and 0 <= first <= resources.cpu_pressure()


def test_a_first_sweep_of_large_fresh_arrays_runs_on_the_threads(clock, monkeypatch):
    """The untimed first sweep (which maps the values' pages) runs on the threads if it first
    touches THREADED_FIRST_TOUCHES bytes or more and the cores are free; a busy look then holds no
    probe off."""
    large = sweeping.ThreadTuner.THREADED_FIRST_TOUCHES

    def first(touches):
        sweeper = FakeSweeper(clock, {1: 0.010, 2: 0.006})
        tuner = sweeping.ThreadTuner(sweeper, 2, touches)
        for _ in range(8):
            tuner.greedy_sweep()
        return sweeper.used

    assert first(large) == [2, 1, 2, 2, 2, 2, 2, 2]
    assert first(large - 1) == [1, 1, 2, 2, 2, 2, 2, 2]
    busy = iter([1])  # a task of a moment, gone at the look's second read: no load
    monkeypatch.setattr(resources, "runnable_elsewhere", lambda: next(busy, 0))
    assert first(large) == [2, 1, 2, 2, 2, 2, 2, 2]
    busy = iter([1, 1])  # a task at both reads of the first look, none after
    monkeypatch.setattr(resources, "runnable_elsewhere", lambda: next(busy, 0))
    assert first(large) == [1, 1, 2, 2, 2, 2, 2, 2]
    monkeypatch.setattr(resources, "runnable_elsewhere", lambda: 2)
    assert first(large) == [1] * 8


def test_unreadable_load_does_not_block_the_probe(clock, monkeypatch):
    monkeypatch.setattr(resources, "runnable_elsewhere", lambda: None)
    assert run(clock, {1: 0.010, 2: 0.006}) == [1, 1, 2, 2, 2, 2, 2, 2]


def test_runnable_elsewhere_reads_this_machine():
    others = resources.runnable_elsewhere()
    assert others is None or 0 <= others < 100_000


def test_the_enumeration_takes_only_idle_cores_by_default(monkeypatch):
    monkeypatch.setattr(resources.os, "cpu_count", lambda: 4)
    for others, idle in ((0, 4), (1, 3), (3, 1), (7, 1), (None, 4)):
        monkeypatch.setattr(resources, "runnable_elsewhere", lambda others=others: others)
        assert resources.idle_cores(4) == idle
        assert resources.idle_cores(2) == min(2, idle)
    # A look reads the load twice and takes the lesser: a task runnable for a moment is no load.
    reads = iter([3, 0, 3, 1, 2, None])
    monkeypatch.setattr(resources, "runnable_elsewhere", lambda: next(reads))
    assert [resources.idle_cores(4) for _ in range(3)] == [4, 3, 2]


def test_runnable_elsewhere_leaves_out_this_process_threads(monkeypatch):
    """OpenMP workers spin after a parallel region: counted as other tasks, they kept a solve that had
    just run threads on one thread.  The count is the load's running tasks less this process's."""
    assert resources._own_running_threads() >= 1  # the caller at least
    loadavg = "0.50 0.40 0.30 5/300 1234\n"
    real_open = open

    def fake_open(path, *args, **kw):
        if path == "/proc/loadavg":
            import io

            return io.StringIO(loadavg)
        return real_open(path, *args, **kw)

    monkeypatch.setattr("builtins.open", fake_open)
    monkeypatch.setattr(resources, "_own_running_threads", lambda: 3)
    assert resources.runnable_elsewhere() == 2
    monkeypatch.setattr(resources, "_own_running_threads", lambda: 7)
    assert resources.runnable_elsewhere() == 0


def test_one_thread_asked_never_looks_at_the_load(monkeypatch):
    """Each look is a dozen system calls: with ``n_jobs=1`` there is nothing to decide, and the
    passes after the sweeps take the threads the tuner chose instead of looking again."""
    import babytris

    table = babytris.enumerate_boards(babytris.Rules(width=4, height=4))

    def no_look():
        raise AssertionError("looked at the load")

    monkeypatch.setattr(resources, "runnable_elsewhere", no_look)
    assert resources.idle_cores(1) == 1
    for opponent in ("random", "minimax"):
        solution = babytris.solve_transitions(table, opponent=opponent, n_jobs=1)
        assert solution.converged


def test_small_boards_enumerate_on_one_thread_without_a_look(monkeypatch):
    """Fewer possible boards than two threads' share of the table (4x4: 2**16 < 2 * 50,000): one
    thread, and no look at the load; a bigger board looks (4x5: once, as its search starts)."""
    import babytris

    looks = []
    monkeypatch.setattr(resources.os, "cpu_count", lambda: 2)
    monkeypatch.setattr(resources, "runnable_elsewhere", lambda: looks.append(1) or 0)
    small = babytris.enumerate_boards(babytris.Rules(width=4, height=4))
    assert looks == [] and small.n_boards == 12_978
    big = babytris.enumerate_boards(babytris.Rules(width=4, height=5))
    assert looks == [1] and big.n_boards == 182_101
