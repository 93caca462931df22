"""Training: count pre-tokens over a corpus, then learn merges (README, "The rules").

The two stages are separate and both public: ``count`` gives ``PretokenCounts`` (which add
up with ``+``, so shards can be counted apart), ``train_from_counts`` runs the merge loop.
``train`` chains them. Both stages run in Rust (``bytepair._core``) with the GIL released.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypedDict, Union

from . import _core, inputs
from ._checks import caller_level, count_option, integer, refuse_mapping, refuse_unordered
from .counts import PretokenCounts
from .tokenizer import _PRESET_NAMES, Tokenizer, _clean, _resolve_pattern

__all__ = ["PretokenCounts", "count", "train", "train_bpe", "train_from_counts"]

PathLike = Union[str, "os.PathLike[str]"]
Input = Union[PathLike, Sequence[PathLike], Iterable[str]]

# characters of streamed text handed to Rust at a time (bounded memory)
_TEXT_BATCH_CHARS = 16 << 20
_LONG_POLICIES = ("truncate", "skip")


class _CountOptions(TypedDict):
    """What counting does with pre-tokens longer than a limit (``count``'s options)."""

    max_pretoken_length: int | None
    skip_long: bool


class _MergeOptions(TypedDict):
    """When merging stops and what it passes over (``train_from_counts``'s options)."""

    min_frequency: int
    max_token_length: int | None


def count(
    input: Input,
    *,
    pattern: str = "gpt2",
    special_tokens: Sequence[str] | None = (),
    threads: int | None = None,
    progress: bool | None = None,
    errors: str = "strict",
    text_field: str = "text",
    blank_line_docs: bool = False,
    max_pretoken_length: int | None = None,
    long_pretokens: str = "truncate",
) -> PretokenCounts:
    """Counts the pre-tokens of a corpus (the first stage of training).

    Plain UTF-8 text files are read and counted by the Rust core in 64 MB blocks, cut where
    the split is exact. Every other input (compressed files, jsonl, parquet, blank-line
    documents, iterators of ``str``) is streamed through ``bytepair.inputs.iter_chunks`` in
    batches of about 16 M characters; a document cut between two chunks is counted exactly
    as if whole (the unfinished end of a chunk is carried into the next batch). Memory
    grows with the number of distinct pre-tokens, not with the corpus. With a custom regex
    a streamed document is only cut before special tokens, so a huge compressed document
    without them is held whole.

    Args:
        input: what ``bytepair.inputs.iter_chunks`` reads: a path, a folder, a glob
            pattern, a list or tuple of those, or any other iterable of ``str`` (each item
            a document; a pre-token never spans two documents, nor two files).
        pattern: ``"gpt2"``, ``"cl100k"``, ``"o200k"`` or a regex (Python ``regex`` syntax).
        special_tokens: strings cut out of the text before pre-tokenization and never
            counted (e.g. ``"<|endoftext|>"`` between documents); None: none.
        threads: worker threads (default: one per core). The result never depends on it.
        progress: a tqdm bar of bytes read (bytes/s, ETA for files); default: when stderr
            is a terminal.
        errors: invalid UTF-8 in a file: ``"strict"`` raises ``CorpusDecodeError``
            naming the file and byte offset, ``"replace"`` turns each bad sequence into U+FFFD,
            ``"skip"`` (or ``"ignore"``) drops the bad bytes.
        text_field: the jsonl key / parquet column holding the text.
        blank_line_docs: plain-text files hold documents separated by blank lines.
        max_pretoken_length: pre-tokens longer than this many bytes (a corrupt file, a
            megabyte without a space) are truncated to it (at a character boundary) or
            skipped, and reported with a ``UserWarning``; None (default): no limit.
        long_pretokens: ``"truncate"`` or ``"skip"`` such pre-tokens.

    Returns:
        ``PretokenCounts`` (pre-token bytes -> 64-bit count; ``a + b`` adds two), which
        records ``pattern`` (as its regex) and ``special_tokens``.

    Raises:
        FileNotFoundError, OSError: a file cannot be read (the message names it).
        CorpusDecodeError: invalid UTF-8 (a ``ValueError`` and ``UnicodeDecodeError``:
            ``path``, byte ``offset``, the bad bytes and Python's reason), whether the file
            is read in Python or by the core.
        ValueError: a bad jsonl line or parquet column, an empty special token, an invalid
            pattern, an option out of range (a negative count).
        TypeError: an iterable item is not ``str``; ``input`` is a dict (or other mapping:
            counts are ``PretokenCounts``); an option of the wrong type (a float, string or
            bool where an int is asked); ``special_tokens`` is a set of two or more (their
            order gives their ids: a list).
    """
    # (its keys were counted as the texts, silently, and its counts dropped)
    refuse_mapping(
        "input",
        input,
        "paths or an iterable of str",
        "for counts you already have (pre-token bytes -> count), make "
        "bytepair.PretokenCounts(counts) and train with bytepair.train_from_counts",
    )
    regex = _resolve_pattern(pattern)
    specials = _check_specials(special_tokens)
    threads = _check_threads(threads)
    limit = _check_limit(max_pretoken_length)
    if long_pretokens not in _LONG_POLICIES:
        raise ValueError(f"long_pretokens must be 'truncate' or 'skip', got {long_pretokens!r}")
    opts: _CountOptions = {"max_pretoken_length": limit, "skip_long": long_pretokens == "skip"}
    inputs._check_errors(errors)
    paths = inputs.expand_paths(input)
    core = _core.PretokenCounts()
    if paths is None:
        with _Progress("count", progress, unit="B") as bar:
            _count_stream(core, inputs.iter_chunks(input), regex, specials, threads, opts, bar)
    else:
        sizes = [os.path.getsize(p) for p in paths]
        with _Progress("count", progress, unit="B", total=sum(sizes)) as bar:
            plain: list[str] = []  # a run of plain-text files, counted in one Rust call

            def count_plain() -> None:
                if plain:
                    cb = bar.offset_callback(bar.done)
                    core.add(_core.count_files(plain, regex, specials, cb, threads, errors, **opts))
                    bar.set(start)
                    plain.clear()

            start = 0
            for path, size in zip(paths, sizes):
                # a pipe or fifo is read once, as a stream: the Rust reader would reopen it
                if not blank_line_docs and _is_plain_file(path):
                    plain.append(path)
                    start += size
                    continue
                count_plain()
                chunks = inputs.iter_chunks(
                    path, text_field=text_field, errors=errors, blank_line_docs=blank_line_docs
                )
                _count_stream(core, chunks, regex, specials, threads, opts, None)
                start += size
                bar.set(start)
            count_plain()
    n_long, longest = core.long_pretokens
    if n_long:
        what = "skipped" if opts["skip_long"] else f"truncated to {limit} bytes"
        warnings.warn(
            f"{n_long} pre-token(s) longer than max_pretoken_length={limit} bytes "
            f"(the longest {longest} bytes) were {what}",
            stacklevel=caller_level(),
        )
    return PretokenCounts._wrap(core, regex, specials)


def _is_plain_file(path: str) -> bool:
    """Whether ``path`` is a regular uncompressed plain-text file (read by Rust)."""
    return not inputs.is_stream(path) and inputs.file_format(path) == (None, "text")


def _count_stream(
    core: _core.PretokenCounts,
    chunks: Iterator[tuple[str, bool]],
    regex: str,
    specials: list[str],
    threads: int | None,
    opts: _CountOptions,
    bar: _Progress | None,
) -> None:
    """Counts streamed chunks in batches, carrying a document's unfinished end along."""
    carry = ""
    batch: list[tuple[str, bool]] = []
    size = 0
    for text, ends in chunks:
        batch.append((_clean(text), ends))
        size += len(text)
        if size >= _TEXT_BATCH_CHARS:
            carry = core.count_stream(batch, carry, regex, specials, threads, **opts)
            if bar is not None:
                bar.add(sum(len(t.encode("utf-8", "surrogatepass")) for t, _ in batch))
            batch, size = [], 0
    if batch or carry:
        batch.append(("", True))  # the stream ends a document
        core.count_stream(batch, carry, regex, specials, threads, **opts)
        if bar is not None:
            bar.add(sum(len(t.encode("utf-8", "surrogatepass")) for t, _ in batch))


def train_from_counts(
    counts: PretokenCounts,
    vocab_size: int,
    *,
    special_tokens: Sequence[str] | None = None,
    pattern: str | None = None,
    progress: bool | None = None,
    min_frequency: int = 0,
    max_token_length: int | None = None,
    base: Tokenizer | None = None,
) -> Tokenizer:
    """Learns merges from pre-token counts (the second stage of training).

    Ids: 0..255 are the bytes, then the special tokens in the order given, then one id
    per merge in learned order. The most frequent adjacent pair is merged first; a tie
    goes to the lexicographically greatest (left bytes, right bytes), as in CS336.

    Continued training (``base`` given): every id and merge of ``base`` is kept; each
    distinct pre-token is first encoded with ``base`` (its own BPE), then the same merge
    loop runs on those token sequences, and new tokens get ids ``base.n_vocab``,
    ``base.n_vocab + 1``, ... The result equals ``bytepair.reference.train_bpe_continue``.

    Args:
        counts: from ``count``.
        vocab_size: total tokens wanted: 256 + len(special_tokens) + merges (with
            ``base``: ``base.n_vocab`` + new merges). Training stops early when no pair is
            left (or, with ``min_frequency``, none is frequent enough).
        special_tokens: special tokens, given ids 256, 257, ... Default: those of the
            counts (or of ``base``).
        pattern: stored in the tokenizer, so encoding splits text as counting did.
            Default: the counts' pattern (or ``base``'s), else ``"gpt2"``.
        progress: a tqdm bar of merges (merges/s); default: when stderr is a terminal.
        min_frequency: stop when the most frequent pair occurs fewer times than this.
        max_token_length: never create a token longer than this many bytes; such pairs
            are passed over.
        base: a ``Tokenizer`` to extend (trained here or loaded; its ids must be dense).

    Raises:
        ValueError: ``vocab_size`` below 256 + len(special_tokens) (or ``base.n_vocab``),
            bad special tokens or options out of range, a ``pattern`` / ``special_tokens``
            that differ from those the counts (or ``base``) were made with, or empty counts.
        TypeError: an option of the wrong type (a float, string or bool where an int is
            asked).
    """
    if not isinstance(counts, PretokenCounts):
        raise TypeError(f"counts must be PretokenCounts (from count), got {type(counts).__name__}")
    if base is not None:
        if not isinstance(base, Tokenizer):
            raise TypeError(f"base must be a Tokenizer, got {type(base).__name__}")
        pattern = _same_pattern(pattern, base.pattern, "the base tokenizer's")
        special_tokens = _same_specials(
            special_tokens, list(base.special_tokens), "the base tokenizer's"
        )
    if counts.pattern is not None:
        pattern = _same_pattern(pattern, counts.pattern, "the counts'")
        special_tokens = _same_specials(special_tokens, list(counts.special_tokens), "the counts'")
    pattern = "gpt2" if pattern is None else pattern
    specials = _check_specials(special_tokens or ())
    _core.count_texts([], _resolve_pattern(pattern), [])  # a bad pattern fails before training
    min_frequency = count_option("min_frequency", min_frequency, 0, _MAX_INDEX)
    if max_token_length is not None:
        max_token_length = count_option("max_token_length", max_token_length, 0, _MAX_INDEX)
        if max_token_length < 2:
            raise ValueError(f"max_token_length must be at least 2 bytes, got {max_token_length}")
    opts: _MergeOptions = {"min_frequency": min_frequency, "max_token_length": max_token_length}
    if base is not None:
        # (too large said first: QA got "4294967296 is below the 10000 ids the base has")
        vocab_size = _as_vocab_size(vocab_size)
        if vocab_size < base.n_vocab:
            raise ValueError(
                f"vocab_size {vocab_size} is below the {base.n_vocab} ids the base tokenizer has"
            )
        with _Progress("merge", progress, unit="merge") as bar:
            new, merge_ids = _core.train_continue(
                counts._core, base._core, vocab_size, bar.callback, **opts
            )
        _warn_huge_tokens(new)
        return _extend(base, new, merge_ids)
    vocab_size = _check_vocab_size(vocab_size, specials)
    with _Progress("merge", progress, unit="merge") as bar:
        vocab, merges = _core.train_from_counts(
            counts._core, vocab_size, specials, bar.callback, **opts
        )
    _warn_huge_tokens(vocab)
    tok = Tokenizer._from_ids(vocab, merges, specials, _pattern_name(pattern))
    corpus_bytes = sum(len(b) * n for b, n in counts.items())
    tok._metadata["training"] = {"corpus_bytes": corpus_bytes, "pretokens": counts.total()}
    return tok


# Tokens learned this long (bytes) come from odd data (a megabyte of one repeated character,
# a blob): kept, as the rule says, but said, since a tokenizer file holds each at ~2-4x its
# length (a 50 MB line of one letter gave a 1.2 GB file).
_HUGE_TOKEN = 1 << 20


def _warn_huge_tokens(tokens: Sequence[bytes]) -> None:
    longest = max(map(len, tokens), default=0)
    if longest >= _HUGE_TOKEN:
        warnings.warn(
            f"a learned token is {longest} bytes long (a run of one repeated character or a "
            "blob in the corpus?); it is kept, and saving the tokenizer writes it out. "
            "max_token_length=BYTES caps the length of learned tokens",
            stacklevel=caller_level(),
        )


def _extend(base: Tokenizer, new: list[bytes], merge_ids: list[tuple[int, int]]) -> Tokenizer:
    """``base`` with new tokens (ids from ``base.n_vocab`` on) and merges appended."""
    vocab = base.vocab
    first = base.n_vocab
    vocab.update({first + k: b for k, b in enumerate(new)})
    merges = base.merges + [(vocab[a], vocab[b]) for a, b in merge_ids]
    tok = Tokenizer.__new__(Tokenizer)
    tok._build(vocab, merges, base.special_tokens, base._pattern_name)
    return tok


def _same_pattern(given: str | None, recorded: str, whose: str) -> str:
    """``given`` (a preset by its name) if it splits as ``recorded`` does (None: take
    ``recorded``), else ValueError."""
    if given is None:
        return recorded
    given_regex, recorded_regex = _resolve_pattern(given), _resolve_pattern(recorded)
    # presets by name, in the message too, however they were given
    if given_regex != recorded_regex:
        raise ValueError(
            f"pattern={_pattern_name(given_regex)!r} differs from {whose} "
            f"{_pattern_name(recorded_regex)!r}"
        )
    return _pattern_name(given_regex)


def _same_specials(
    given: Sequence[str] | None, recorded: Sequence[str], whose: str
) -> Sequence[str]:
    """``given`` if it lists the special tokens of ``recorded`` in its order (None: take
    ``recorded``), else ValueError."""
    if given is None:
        return recorded
    if list(given) != list(recorded):
        raise ValueError(f"special_tokens={given!r} differs from {whose} {recorded!r}")
    return given


def _pattern_name(pattern: str) -> str:
    """A preset's name for its regex (what the tokenizer file stores), else the regex."""
    for name, regex in _PRESET_NAMES.items():
        if pattern == regex:
            return name
    return pattern


class _DefaultPattern(str):
    """``train``'s default pattern, ``"gpt2"``, told apart from a ``"gpt2"`` given (by
    identity): with ``base``, the default means the base's own pattern."""


_DEFAULT_PATTERN = _DefaultPattern("gpt2")


def train(
    input: Input,
    vocab_size: int,
    *,
    special_tokens: Sequence[str] | None = (),
    pattern: str = _DEFAULT_PATTERN,
    threads: int | None = None,
    progress: bool | None = None,
    errors: str = "strict",
    text_field: str = "text",
    blank_line_docs: bool = False,
    max_pretoken_length: int | None = None,
    long_pretokens: str = "truncate",
    min_frequency: int = 0,
    max_token_length: int | None = None,
    base: Tokenizer | None = None,
) -> Tokenizer:
    """Trains a byte-level BPE tokenizer on a corpus: ``count`` then ``train_from_counts``.

    >>> tok = train(iter(["low low lower lowest"]), vocab_size=259)
    >>> tok.merges
    [(b'o', b'w'), (b'l', b'ow'), (b' ', b'low')]
    >>> more = train(iter(["newest newer"]), vocab_size=261, base=tok)
    >>> more.merges[3:], more.encode("low newer")
    ([(b'w', b'e'), (b'n', b'e')], [257, 32, 260, 259, 114])

    Args:
        input: see ``count``: paths, folders, globs, compressed / jsonl / parquet files, or
            any other iterable of ``str`` (pass ``iter(texts)`` for an in-memory list).
        vocab_size: total tokens: 256 + len(special_tokens) + merges (with ``base``:
            ``base.n_vocab`` + new merges).
        special_tokens: e.g. ``["<|endoftext|>"]``; ids 256, 257, ...; never counted
            (None: none). With ``base``: its own are used (passing others raises ``ValueError``).
        pattern: ``"gpt2"`` (default, as CS336), ``"cl100k"``, ``"o200k"`` or a regex.
            With ``base``: by default the base's own; a pattern given must be the base's
            (``pattern="gpt2"`` with a cl100k_base base raises ``ValueError``: the new
            merges would be learned on other pre-tokens).
        threads: worker threads for counting (default: one per core). The merges never
            depend on it, nor on chunk sizes or the order of files.
        progress: progress bars for counting (bytes/s, ETA) and merging (merges/s);
            default: when stderr is a terminal.
        errors, text_field, blank_line_docs, max_pretoken_length, long_pretokens: see
            ``count``.
        min_frequency, max_token_length, base: see ``train_from_counts`` (``base``:
            continued training of an existing tokenizer, keeping all its ids and merges).

    Returns:
        the trained ``Tokenizer``.

    Raises:
        FileNotFoundError, OSError, ValueError, TypeError: see ``count`` and
            ``train_from_counts``; ``ValueError`` also for an empty corpus (no text outside
            special tokens).
    """
    if base is not None:
        if not isinstance(base, Tokenizer):
            raise TypeError(f"base must be a Tokenizer, got {type(base).__name__}")
        # the defaults mean "the base's own"; anything given must agree with it
        given = None if pattern is _DEFAULT_PATTERN else pattern
        pattern = _same_pattern(given, base.pattern, "the base tokenizer's")
        special_tokens = _same_specials(
            special_tokens or None, list(base.special_tokens), "the base's"
        )
    specials = _check_specials(special_tokens)
    if base is None:
        vocab_size = _check_vocab_size(vocab_size, specials)  # before counting a large corpus
    if isinstance(pattern, str):
        pattern = str(pattern)  # the default's plain "gpt2"
    counts = count(
        input,
        pattern=pattern,
        special_tokens=specials,
        threads=threads,
        progress=progress,
        errors=errors,
        text_field=text_field,
        blank_line_docs=blank_line_docs,
        max_pretoken_length=max_pretoken_length,
        long_pretokens=long_pretokens,
    )
    n_long = counts.long_pretokens[0]
    if len(counts) == 0 and n_long and long_pretokens == "skip":
        raise ValueError(
            f"no pre-tokens to train on: all {n_long} were longer than "
            f"max_pretoken_length={max_pretoken_length} bytes and skipped"
        )
    if len(counts) == 0:
        raise ValueError(
            f"no pre-tokens to train on: {_describe(input)} is empty (no text outside "
            "special tokens), or the pattern matches none of its text"
        )
    return train_from_counts(
        counts,
        vocab_size,
        special_tokens=specials,
        pattern=pattern,
        progress=progress,
        min_frequency=min_frequency,
        max_token_length=max_token_length,
        base=base,
    )


def _describe(input: object) -> str:
    """Names the corpus in an error: its file(s), else "the corpus"."""
    if isinstance(input, (str, os.PathLike)):
        return repr(os.fspath(input))
    if isinstance(input, (list, tuple)) and input:
        if all(isinstance(p, (str, os.PathLike)) for p in input):
            names = [repr(os.fspath(p)) for p in input[:3]]
            more = f" and {len(input) - 3} more" if len(input) > 3 else ""
            return "the corpus " + ", ".join(names) + more
    return "the corpus"


def train_bpe(
    input_path: PathLike,
    vocab_size: int,
    special_tokens: Sequence[str] | None = (),
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


def _as_vocab_size(vocab_size: object) -> int:
    """``vocab_size`` as an int below 2**32 (TypeError, ValueError); the lower bound is the
    caller's."""
    n = integer(vocab_size)
    if n is None:
        raise TypeError(f"vocab_size must be an int, got {vocab_size!r}")
    if n >= 2**32:
        raise ValueError(f"vocab_size {n} is too large: ids are 32-bit")
    return n


def _check_vocab_size(vocab_size: object, specials: list[str]) -> int:
    vocab_size = _as_vocab_size(vocab_size)
    if vocab_size < 256 + len(specials):
        raise ValueError(
            f"vocab_size {vocab_size} is below 256 bytes + {len(specials)} special token(s) "
            f"= {256 + len(specials)}"
        )
    return vocab_size


def _check_threads(threads: object) -> int | None:
    if threads is None:
        return None
    return count_option("threads", threads, 1, _MAX_THREADS, "a positive int or None")


def _check_specials(special_tokens: Sequence[str] | None) -> list[str]:
    if (
        special_tokens is None
    ):  # (as `Tokenizer` takes it; it was "'NoneType' object is not iterable")
        return []
    if isinstance(special_tokens, str):
        raise TypeError("special_tokens must be a list of strings, not one string")
    refuse_unordered("special_tokens", special_tokens)
    out: list[str] = []
    for s in special_tokens:
        if not isinstance(s, str) or not s:
            error = TypeError if not isinstance(s, str) else ValueError
            raise error(f"special tokens must be non-empty strings, got {s!r}")
        if s in out:
            raise ValueError(f"special token {s!r} is given twice")
        try:
            s.encode("utf-8")
        except UnicodeEncodeError:
            raise ValueError(f"special token {s!r} is not valid Unicode (lone surrogate)") from None
        out.append(s)
    return out


def _check_limit(limit: object) -> int | None:
    if limit is None:
        return None
    return count_option("max_pretoken_length", limit, 1, _MAX_INDEX, "a positive int or None")


# The core's integer widths: counts are u64, lengths usize (64-bit here); a thread count
# above this is a mistake, not a wish.
_MAX_INDEX = 2**63 - 1
_MAX_THREADS = 4096


class _Progress:
    """A tqdm bar for one stage, fed by the Rust core's callback ``(stage, done, total)``
    or by ``add`` / ``set`` from Python. Off unless ``enabled`` (default: stderr is a TTY)."""

    def __init__(
        self, stage: str, enabled: bool | None, unit: str, total: int | None = None
    ) -> None:
        if enabled is None:
            enabled = sys.stderr is not None and sys.stderr.isatty()
        self._bar: Any = None  # a tqdm bar, made on the first update
        self._stage = stage
        self._unit = unit
        self._enabled = enabled
        self._total = total
        self.done = 0

    def __enter__(self) -> _Progress:
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.close()

    @property
    def callback(self):  # type: ignore[no-untyped-def]
        return self._update if self._enabled else None

    def offset_callback(self, start: int):  # type: ignore[no-untyped-def]
        """A Rust callback for one part of the input that begins at ``start``."""
        if not self._enabled:
            return None
        return lambda stage, done, total: self.set(start + done)

    def add(self, n: int) -> None:
        self.set(self.done + n)

    def set(self, done: int) -> None:
        self.done = done
        if self._enabled:
            self._update(self._stage, done, self._total)

    def _update(self, stage: str, done: int, total: int | None) -> None:
        if self._bar is None:
            from tqdm.auto import tqdm

            desc = "counting pre-tokens" if stage == "count" else "merging"
            self._bar = tqdm(
                total=self._total if self._total is not None else total,
                desc=desc,
                unit=self._unit,
                unit_scale=self._unit == "B",
                file=sys.stderr,
            )
        self._bar.update(done - self._bar.n)
