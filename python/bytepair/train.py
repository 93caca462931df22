"""Training: count pre-tokens over a corpus, then learn merges (DESIGN.md §2).

The two stages are separate and both public: ``count`` gives ``PretokenCounts`` (which add
up with ``+``, so shards can be counted apart), ``train_from_counts`` runs the merge loop.
``train`` chains them. Both stages run in Rust (``bytepair._core``) with the GIL released.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import Union

from . import _core
from .tokenizer import Tokenizer, _clean, _resolve_pattern

__all__ = ["PretokenCounts", "count", "train", "train_bpe", "train_from_counts"]

PretokenCounts = _core.PretokenCounts
PathLike = Union[str, "os.PathLike[str]"]
Input = Union[PathLike, Sequence[PathLike], Iterable[str]]

# texts handed to Rust at a time when training from an iterator (bounded memory)
_TEXT_BATCH_CHARS = 32 << 20


def count(
    input: Input,
    *,
    pattern: str = "gpt2",
    special_tokens: Sequence[str] = (),
    threads: int | None = None,
    progress: bool | None = None,
    errors: str = "strict",
) -> _core.PretokenCounts:
    """Counts the pre-tokens of a corpus (the first stage of training).

    Args:
        input: a path, a list or tuple of paths (UTF-8 text files, read in chunks, never
            whole), or any other iterable of ``str`` (each item is a separate text; a
            pre-token never spans two items), streamed in batches.
        pattern: ``"gpt2"``, ``"cl100k"``, ``"o200k"`` or a regex (Python ``regex`` syntax).
        special_tokens: strings cut out of the text before pre-tokenization and never
            counted (e.g. ``"<|endoftext|>"`` between documents).
        threads: worker threads (default: one per core).
        progress: show a progress bar (default: when stderr is a terminal).
        errors: invalid UTF-8 in a file: ``"strict"`` raises ``ValueError`` naming the file
            and byte offset, ``"replace"`` turns each bad sequence into U+FFFD, ``"ignore"``
            drops it (as ``bytes.decode``).

    Returns:
        ``PretokenCounts``: pre-token bytes -> 64-bit count; ``a + b`` adds two.

    Raises:
        FileNotFoundError, OSError: a file cannot be read (the message names it).
        ValueError: invalid UTF-8 (names the file and byte offset), an empty special token,
            or an invalid pattern.
    """
    pattern = _resolve_pattern(pattern)
    specials = _check_specials(special_tokens)
    threads = _check_threads(threads)
    if errors not in ("strict", "replace", "ignore"):
        raise ValueError(f"errors must be 'strict', 'replace' or 'ignore', got {errors!r}")
    paths = _as_paths(input)
    if paths is not None:
        with _Progress("count", progress, unit="B") as bar:
            return _core.count_files(paths, pattern, specials, bar.callback, threads, errors)
    if isinstance(input, (bytes, bytearray)):
        raise TypeError("input must be a path, a list of paths or an iterable of str, not bytes")
    total = _core.PretokenCounts()
    for batch in _batches(input):  # type: ignore[arg-type]
        total = total + _core.count_texts(batch, pattern, specials, threads)
    return total


def train_from_counts(
    counts: _core.PretokenCounts,
    vocab_size: int,
    *,
    special_tokens: Sequence[str] = (),
    pattern: str = "gpt2",
    progress: bool | None = None,
) -> Tokenizer:
    """Learns merges from pre-token counts (the second stage of training).

    Ids: 0..255 are the bytes, then the special tokens in the order given, then one id
    per merge in learned order. The most frequent adjacent pair is merged first; a tie
    goes to the lexicographically greatest (left bytes, right bytes), as in CS336.

    Args:
        counts: from ``count`` (the same ``special_tokens`` and ``pattern`` should be used).
        vocab_size: total tokens wanted: 256 + len(special_tokens) + merges. Training stops
            early when no pair is left.
        special_tokens: special tokens, given ids 256, 257, ...
        pattern: stored in the tokenizer, so encoding splits text as counting did.
        progress: show a progress bar (default: when stderr is a terminal).

    Raises:
        ValueError: ``vocab_size`` below 256 + len(special_tokens), or bad special tokens.
    """
    specials = _check_specials(special_tokens)
    _check_vocab_size(vocab_size, specials)
    _core.count_texts([], _resolve_pattern(pattern), [])  # a bad pattern fails before training
    with _Progress("merge", progress, unit="merge") as bar:
        vocab, merges = _core.train_from_counts(counts, vocab_size, specials, bar.callback)
    tok = Tokenizer._from_ids(vocab, merges, specials, pattern)
    corpus_bytes = sum(len(b) * n for b, n in counts.items())
    tok._metadata["training"] = {"corpus_bytes": corpus_bytes, "pretokens": counts.total()}
    return tok


def train(
    input: Input,
    vocab_size: int,
    *,
    special_tokens: Sequence[str] = (),
    pattern: str = "gpt2",
    threads: int | None = None,
    progress: bool | None = None,
    errors: str = "strict",
) -> Tokenizer:
    """Trains a byte-level BPE tokenizer on a corpus: ``count`` then ``train_from_counts``.

    >>> tok = train(iter(["low low lower lowest"]), vocab_size=259)
    >>> tok.merges
    [(b'o', b'w'), (b'l', b'ow'), (b' ', b'low')]

    Args:
        input: a path, a list or tuple of paths, or any other iterable of ``str`` (pass
            ``iter(texts)`` for an in-memory list of texts).
        vocab_size: total tokens: 256 + len(special_tokens) + merges.
        special_tokens: e.g. ``["<|endoftext|>"]``; ids 256, 257, ...; never counted.
        pattern: ``"gpt2"`` (default, as CS336), ``"cl100k"``, ``"o200k"`` or a regex.
        threads: worker threads for counting (default: one per core).
        progress: show progress bars (default: when stderr is a terminal).
        errors: invalid UTF-8 in a file: ``"strict"`` (raise), ``"replace"`` or ``"ignore"``.

    Returns:
        the trained ``Tokenizer``.

    Raises:
        FileNotFoundError, OSError, ValueError: see ``count`` and ``train_from_counts``;
            ``ValueError`` also for an empty corpus (no text outside special tokens).
    """
    specials = _check_specials(special_tokens)
    _check_vocab_size(vocab_size, specials)  # fail before counting a large corpus
    counts = count(
        input,
        pattern=pattern,
        special_tokens=specials,
        threads=threads,
        progress=progress,
        errors=errors,
    )
    return train_from_counts(
        counts, vocab_size, special_tokens=specials, pattern=pattern, progress=progress
    )


def train_bpe(
    input_path: PathLike,
    vocab_size: int,
    special_tokens: Sequence[str] = (),
    **kwargs: object,
) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """CS336's ``train_bpe``: returns ``(vocab, merges)`` as plain Python objects.

    Args:
        input_path: a UTF-8 text file.
        vocab_size: total tokens: 256 + len(special_tokens) + merges.
        special_tokens: special tokens, ids 256, 257, ...
        **kwargs: passed to ``train`` (``pattern``, ``threads``, ``progress``).

    Returns:
        ``vocab`` (id -> token bytes) and ``merges`` (list of (bytes, bytes), in order).
    """
    tok = train(input_path, vocab_size, special_tokens=special_tokens, **kwargs)  # type: ignore[arg-type]
    return tok.vocab, tok.merges


def _check_vocab_size(vocab_size: int, specials: list[str]) -> None:
    if isinstance(vocab_size, bool) or not isinstance(vocab_size, int):
        raise TypeError(f"vocab_size must be an int, got {vocab_size!r}")
    if vocab_size < 256 + len(specials):
        raise ValueError(
            f"vocab_size {vocab_size} is below 256 bytes + {len(specials)} special token(s) "
            f"= {256 + len(specials)}"
        )
    if vocab_size >= 2**32:
        raise ValueError(f"vocab_size {vocab_size} is too large: ids are 32-bit")


def _check_threads(threads: int | None) -> int | None:
    if threads is None:
        return None
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive int or None, got {threads!r}")
    return threads


def _check_specials(special_tokens: Sequence[str]) -> list[str]:
    if isinstance(special_tokens, str):
        raise TypeError("special_tokens must be a list of strings, not one string")
    out: list[str] = []
    for s in special_tokens:
        if not isinstance(s, str) or not s:
            raise ValueError(f"special tokens must be non-empty strings, got {s!r}")
        if s in out:
            raise ValueError(f"special token {s!r} is given twice")
        try:
            s.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"special token {s!r} is not valid Unicode (lone surrogate)") from None
        out.append(s)
    return out


def _as_paths(input: object) -> list[str] | None:
    """The paths named by ``input``, or None when it is an iterable of texts."""
    if isinstance(input, (str, os.PathLike)):
        return [os.fspath(input)]
    if isinstance(input, (list, tuple)) and all(isinstance(p, (str, os.PathLike)) for p in input):
        paths = [os.fspath(p) for p in input]
        for p in paths:
            if not os.path.exists(p):
                raise FileNotFoundError(
                    2,
                    "No such file or directory (a list or tuple is read as paths; "
                    "pass iter(texts) to train on in-memory texts)",
                    p,
                )
        return paths
    return None


def _batches(texts: Iterable[str]) -> Iterator[list[str]]:
    it = iter(texts)
    while True:
        batch: list[str] = []
        size = 0
        for t in it:
            if not isinstance(t, str):
                raise TypeError(f"texts must be str, got {type(t).__name__}")
            batch.append(_clean(t))
            size += len(t)
            if size >= _TEXT_BATCH_CHARS:
                break
        if not batch:
            return
        yield batch
        if size < _TEXT_BATCH_CHARS:
            return


class _Progress:
    """A tqdm bar fed by the Rust core's progress callback (stage, done, total)."""

    def __init__(self, stage: str, enabled: bool | None, unit: str) -> None:
        if enabled is None:
            enabled = sys.stderr is not None and sys.stderr.isatty()
        self._bar = None
        self._stage = stage
        self._unit = unit
        self._enabled = enabled

    def __enter__(self) -> _Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.close()

    @property
    def callback(self):  # type: ignore[no-untyped-def]
        return self._update if self._enabled else None

    def _update(self, stage: str, done: int, total: int) -> None:
        if self._bar is None:
            from tqdm.auto import tqdm

            desc = "counting pre-tokens" if stage == "count" else "merging"
            self._bar = tqdm(total=total, desc=desc, unit=self._unit, unit_scale=self._unit == "B")
        self._bar.update(done - self._bar.n)
