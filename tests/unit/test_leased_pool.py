"""The bounded pool that drains a leased queue (compaction and fact extraction share it)."""

from __future__ import annotations

import threading
import time

from kenning.lease import LeasedPool


class _Queue(LeasedPool[int]):
    """A pool over an in-memory list whose first empty claim pauses until released, so a
    test can queue work exactly while a thread has seen the queue empty."""

    def __init__(self, threads: int = 1) -> None:
        super().__init__(threads=threads, name="test-pool", what="test pool")
        self.jobs: list[int] = []
        self.ran: list[int] = []
        self.saw_empty = threading.Event()
        self.go_on = threading.Event()
        self._paused = False

    def _claim(self) -> int | None:
        if self.jobs:
            return self.jobs.pop(0)
        if not self._paused:
            self._paused = True
            self.saw_empty.set()
            self.go_on.wait(10)
        return None

    def _run(self, job: int) -> bool:
        self.ran.append(job)
        self._count("completed")
        return True


def test_work_queued_while_a_thread_leaves_is_still_run() -> None:
    pool = _Queue()
    pool.wake()
    assert pool.saw_empty.wait(10)
    pool.jobs.append(7)  # queued after the thread found the queue empty...
    pool.wake()  # ...and woken while that thread still counts as busy
    pool.go_on.set()
    assert pool.wait(10)
    assert pool.ran == [7] and pool.completed == 1 and pool.busy == 0


def test_a_pool_runs_every_job_on_at_most_its_threads_and_stops_when_closed() -> None:
    pool = _Queue(threads=3)
    pool.go_on.set()
    pool.jobs.extend(range(50))
    pool.wake()
    assert pool.busy <= 3
    assert pool.wait(10)
    assert sorted(pool.ran) == list(range(50)) and pool.completed == 50
    pool.close()
    pool.jobs.append(99)
    pool.wake()
    assert pool.wait(1) and pool.ran.count(99) == 0


class _Batches(LeasedPool[list[int]]):
    """A pool whose job is everything queued when it claims (as a fact reader reads every
    unread turn of a session), pausing *settle_s* after each job."""

    def __init__(self, settle_s: float) -> None:
        super().__init__(threads=1, name="test-pool", what="test pool", settle_s=settle_s)
        self.queued: list[int] = []
        self.jobs: list[list[int]] = []
        self.started = threading.Event()

    def _claim(self) -> list[int] | None:
        job, self.queued = self.queued, []
        return job or None

    def _run(self, job: list[int]) -> bool:
        self.jobs.append(job)
        self.started.set()
        return True


def test_work_queued_while_a_thread_pauses_after_a_job_is_read_as_one_job() -> None:
    pool = _Batches(settle_s=30)
    pool.queued.append(1)
    pool.wake()  # the first job is claimed at once: no pause before it
    assert pool.started.wait(10)
    for n in (2, 3, 4):
        pool.queued.append(n)
        pool.wake()
    started = time.monotonic()
    assert pool.wait(10)  # a waiter ends the pause: not 30 s
    assert time.monotonic() - started < 10
    assert pool.jobs == [[1], [2, 3, 4]] and pool.busy == 0
    pool.close()


def test_a_pausing_thread_is_not_busy_and_close_ends_its_pause() -> None:
    pool = _Batches(settle_s=30)
    pool.queued.append(1)
    pool.wake()
    assert pool.started.wait(10)
    deadline = time.monotonic() + 10
    while pool.busy and time.monotonic() < deadline:  # the job ends, the pause begins
        time.sleep(0.01)
    assert pool.busy == 0 and pool.jobs == [[1]]
    started = time.monotonic()
    pool.close()
    assert time.monotonic() - started < 10
