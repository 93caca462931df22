"""Ctrl-C in the tests: SIGINT sent to the main thread while a call runs."""

from __future__ import annotations

import signal
import threading
import time
from typing import Callable

import pytest


def seconds_to_interrupt(run: Callable[[], object], after: float, within: float) -> list[float]:
    """Times ``run()`` with SIGINT sent to the main thread ``after`` seconds in; ``run``
    must raise KeyboardInterrupt (a call that ignores it and returns is kept waiting, so it
    takes too long). Up to three tries, ending at the first that took under ``within``: on a
    shared machine one call may stall for a moment, while a call that only stops at its end
    is slow every time. Returns the seconds of each try."""

    def interrupt() -> None:
        time.sleep(after)
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)  # type: ignore[arg-type]

    took: list[float] = []
    for _ in range(3):
        threading.Thread(target=interrupt).start()
        t0 = time.perf_counter()
        with pytest.raises(KeyboardInterrupt):
            run()
            time.sleep(10 * within)  # (not reached if the call was interrupted)
        took.append(time.perf_counter() - t0)
        if took[-1] < within:
            break
    return took
