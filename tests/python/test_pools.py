"""Thread pools follow the CPUs the caller may use: a pool's threads keep the CPU set of the
thread that made them, so a pool made while the process was pinned to one CPU (a benchmark's
single-thread table, `taskset`, a worker that pins itself) must not run later batches there.
Oracle: the CPU sets the kernel reports for the process's threads."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(
    not hasattr(os, "sched_setaffinity") or len(os.sched_getaffinity(0)) < 2,
    reason="needs Linux CPU affinity and two CPUs",
)

CHILD = """if True:
    import glob, os
    import bytepair
    tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [])
    batch = ["hello world, " * 3000 + str(i) for i in range(8)]  # (enough for the pools)
    every = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(every)})
    pinned = tok.encode_ordinary_batch(batch, num_threads=2)
    os.sched_setaffinity(0, every)
    free = tok.encode_ordinary_batch(batch, num_threads=2)
    assert pinned == free
    main = str(os.getpid())
    for task in glob.glob("/proc/self/task/*"):
        if os.path.basename(task) != main:
            print(sorted(os.sched_getaffinity(int(os.path.basename(task)))))
"""


def test_a_batch_after_unpinning_runs_on_every_cpu() -> None:
    run = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr[-2000:]
    every = sorted(os.sched_getaffinity(0))
    workers = run.stdout.splitlines()
    # the pinned batch's workers stay on their CPU; the later batch has workers of its own
    assert str([min(every)]) in workers
    assert str(every) in workers
