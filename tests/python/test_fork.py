"""A process forked after bytepair used its thread pools (multiprocessing's default start
method on Linux before Python 3.14, PyTorch DataLoader workers) must work, not hang waiting
for worker threads that do not exist in the child. Oracle: the parent's own results."""

from __future__ import annotations

import multiprocessing as mp
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
