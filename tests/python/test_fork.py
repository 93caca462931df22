"""A process forked after bytepair used its thread pools (multiprocessing's default start
method on Linux before Python 3.14, PyTorch DataLoader workers) must work, not hang waiting
for worker threads that do not exist in the child. Oracle: the parent's own results."""

from __future__ import annotations

import multiprocessing as mp
import os
import subprocess
import sys
from pathlib import Path

import pytest

import bytepair

pytestmark = pytest.mark.skipif(
    sys.platform == "win32" or "fork" not in mp.get_all_start_methods(), reason="needs fork"
)

TEXTS = ["hello world, " * 3000 + str(i) for i in range(8)]


def _child_work(corpus: str) -> tuple[list[list[int]], list[str], list[tuple[bytes, bytes]]]:
    tok = _STATE["tok"]
    ids = tok.encode_batch(TEXTS)  # the default disallowed check runs in parallel too
    decoded = tok.decode_batch(ids)  # > 16384 ids: the parallel path
    trained = bytepair.train(corpus, 300, progress=False)
    return ids, decoded, trained.merges


_STATE: dict[str, bytepair.Tokenizer] = {}


def test_fork_after_parallel_work(data_dir: Path) -> None:
    corpus = str(data_dir / "cs336" / "corpus.en")
    tok = bytepair.Tokenizer.from_files(
        data_dir / "gpt2" / "vocab.json", data_dir / "gpt2" / "merges.txt"
    )
    _STATE["tok"] = tok
    # the parent builds its pools: batch encode and decode, and training
    expected_ids = tok.encode_batch(TEXTS, num_threads=2)
    expected_text = tok.decode_batch(expected_ids)
    expected_merges = bytepair.train(corpus, 300, progress=False).merges
    assert sum(map(len, expected_ids)) > 16384 and expected_text == TEXTS
    with mp.get_context("fork").Pool(1) as pool:
        ids, decoded, merges = pool.apply_async(_child_work, (corpus,)).get(timeout=120)
    assert ids == expected_ids
    assert decoded == TEXTS
    assert merges == expected_merges


def test_fork_while_a_thread_finds_the_temporary_folder(data_dir: Path) -> None:
    # (QA) a thread in its first get_encoding held the stdlib's lock for finding the
    # temporary folder (tiktoken's cache is under it) when another forked: the child's own
    # get_encoding waited for that lock for ever. Held here by hand, the child must still work.
    code = """if True:
        import os, signal, tempfile
        import bytepair
        tempfile._once_lock.acquire()
        pid = os.fork()
        if pid == 0:
            signal.alarm(60)  # (a hang ends the child, not the test run)
            ids = bytepair.get_encoding("r50k_base").encode("hello world")
            os._exit(0 if ids == [31373, 995] else 1)
        print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))
    """
    env = {
        k: v for k, v in os.environ.items() if k not in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR")
    }
    env["BYTEPAIR_DATA"] = str(data_dir)
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.split() == ["0"]
