"""``PretokenCounts``: the result of counting a corpus, which adds up, saves and loads.

The file format (``.bpcounts`` by convention), version 1::

    line 1   b"bytepair-pretoken-counts 1\\n"
    line 2   a JSON object and b"\\n": {"pattern": regex, "special_tokens": [str, ...],
             "records": n, "body_bytes": m, "crc32": CRC-32 of the body,
             "long_pretokens": [count, longest]}
    body     m bytes: n records in increasing byte order of the pre-tokens, each
             varint(shared) varint(len) bytes[len] varint(count) -- the pre-token is the
             first `shared` bytes of the previous one followed by `bytes`; varints are
             unsigned LEB128 (7 bits a byte, low bits first); counts are 64-bit.

Sorted keys with front coding make the file small (English pre-tokens share prefixes) and
the same counts always give the same bytes. Loading checks the magic, the header, the body
size and CRC, and every record (lengths, strict order, positive counts) before use: a bad
or truncated file is a ``ValueError`` naming the file and what is wrong.
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Iterable, Iterator, Sequence
from typing import Union

from . import _core
from ._checks import integer
from .formats._io import check_path, write_atomic

__all__ = ["PretokenCounts"]

PathLike = Union[str, "os.PathLike[str]"]
_MAGIC = b"bytepair-pretoken-counts 1\n"
_MAX_HEADER = 1 << 20


class PretokenCounts:
    """Pre-token bytes -> 64-bit count over a corpus, with the settings that made them.

    Made by ``bytepair.count``; ``train_from_counts`` learns merges from them. Counts of
    shards add up with ``a + b`` to exactly the counts of the whole corpus (so counting can
    be spread over processes or machines), and ``save`` / ``load`` keep them on disk.

    Counts know the ``pattern`` (the regex) and ``special_tokens`` they were made with;
    adding counts made with different ones raises ``ValueError``.

    >>> a = PretokenCounts({b"low": 2, b" low": 1})
    >>> b = PretokenCounts({b"low": 1})
    >>> (a + b)[b"low"], len(a + b), (a + b).total()
    (3, 2, 4)

    Args:
        items: initial counts, a mapping or iterable of ``(bytes, count)`` (counts: ints of
            any type, numpy's too, >= 0; zero counts are dropped).
        pattern: the pre-tokenization regex (a preset name is resolved), or None for
            counts not tied to one (they add to any).
        special_tokens: the special tokens cut out before counting.
    """

    __slots__ = ("_core", "pattern", "special_tokens")

    def __init__(
        self,
        items: Iterable[tuple[bytes, int]] | dict[bytes, int] | None = None,
        *,
        pattern: str | None = None,
        special_tokens: Sequence[str] = (),
    ) -> None:
        if isinstance(items, dict):
            items = items.items()
        pairs = [(_check_key(k), _check_count(v)) for k, v in (items or ())]
        self._core = _core.PretokenCounts(pairs)
        if pattern is not None:
            from .tokenizer import _resolve_pattern

            pattern = _resolve_pattern(pattern)
        self.pattern: str | None = pattern
        self.special_tokens: tuple[str, ...] = tuple(special_tokens)

    @classmethod
    def _wrap(
        cls, core: _core.PretokenCounts, pattern: str | None, special_tokens: Sequence[str]
    ) -> PretokenCounts:
        self = cls.__new__(cls)
        self._core = core
        self.pattern = pattern
        self.special_tokens = tuple(special_tokens)
        return self

    # ------------------------------------------------------------------ container

    def __len__(self) -> int:
        """The number of distinct pre-tokens."""
        return len(self._core)

    def __getitem__(self, key: bytes) -> int:
        """The count of one pre-token (0 if it never occurred).

        Raises:
            TypeError: ``key`` is not bytes (a ``str``: index with its UTF-8).
        """
        # (a str was "string argument without an encoding"; an int n gave the count of n
        # zero bytes)
        return self._core.get(_check_key(key))

    def __contains__(self, key: object) -> bool:
        return isinstance(key, (bytes, bytearray)) and self._core.get(bytes(key)) > 0

    def __iter__(self) -> Iterator[bytes]:
        """The pre-tokens, in the order of ``items`` (as iterating a dict gives its keys)."""
        # (without it, iteration fell back to __getitem__(0) and raised "pre-tokens are
        # bytes, got int")
        return iter(self.keys())

    def __reversed__(self) -> Iterator[bytes]:
        """The pre-tokens in the reverse order of ``items`` (``reversed()`` also fell back to
        ``__getitem__``)."""
        return reversed(self.keys())

    def keys(self) -> list[bytes]:
        """The pre-tokens, in the order of ``items`` (so ``dict(counts)`` works)."""
        return [k for k, _ in self._core.items()]

    def items(self) -> list[tuple[bytes, int]]:
        """``(pre-token bytes, count)`` pairs, most frequent first, ties in byte order."""
        return self._core.items()

    def total(self) -> int:
        """The number of pre-tokens counted (the sum of the counts)."""
        return self._core.total()

    @property
    def long_pretokens(self) -> tuple[int, int]:
        """``(how many, longest length in bytes)`` of the pre-tokens that were longer than
        ``max_pretoken_length`` when counting (truncated or skipped)."""
        return self._core.long_pretokens

    def __repr__(self) -> str:
        return f"PretokenCounts({len(self)} pre-tokens, total {self.total()})"

    # ------------------------------------------------------------------ adding

    def _check_same_settings(self, other: PretokenCounts) -> None:
        if self.pattern is not None and other.pattern is not None:
            if self.pattern != other.pattern:
                raise ValueError(
                    "cannot add counts made with different patterns: "
                    f"{self.pattern!r} and {other.pattern!r}"
                )
        if self.special_tokens and other.special_tokens:
            if self.special_tokens != other.special_tokens:
                raise ValueError(
                    "cannot add counts made with different special tokens: "
                    f"{list(self.special_tokens)!r} and {list(other.special_tokens)!r}"
                )

    def __add__(self, other: object) -> PretokenCounts:
        """Counts of both (shards counted apart add up exactly).

        Raises:
            ValueError: the two were counted with different patterns or special tokens, or
                a count would pass 2^64 - 1 (counts are 64-bit; ``+=`` then leaves the
                counts as they were).
        """
        if not isinstance(other, PretokenCounts):
            return NotImplemented
        self._check_same_settings(other)
        return PretokenCounts._wrap(
            self._core + other._core,
            self.pattern if self.pattern is not None else other.pattern,
            self.special_tokens or other.special_tokens,
        )

    def __radd__(self, other: object) -> PretokenCounts:
        if isinstance(other, int) and other == 0:  # sum(list_of_counts)
            return self
        return NotImplemented

    def __iadd__(self, other: object) -> PretokenCounts:
        if not isinstance(other, PretokenCounts):
            return NotImplemented
        self._check_same_settings(other)
        self._core.add(other._core)
        if self.pattern is None:
            self.pattern = other.pattern
        self.special_tokens = self.special_tokens or other.special_tokens
        return self

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PretokenCounts):
            return NotImplemented
        return (
            self._core == other._core
            and self.pattern == other.pattern
            and self.special_tokens == other.special_tokens
        )

    __hash__ = None  # type: ignore[assignment]

    def __getstate__(self) -> bytes:
        return self._serialize()

    def __setstate__(self, state: bytes) -> None:
        other = PretokenCounts._parse(state, "<pickle>")
        self._core, self.pattern, self.special_tokens = (
            other._core,
            other.pattern,
            other.special_tokens,
        )

    # ------------------------------------------------------------------ files

    def save(self, path: PathLike) -> None:
        """Writes the counts to ``path`` (format in the module docstring), atomically: a
        temporary file is written and renamed, so an interrupted save leaves any old file.

        Args:
            path: a ``str`` or ``os.PathLike``, as ``Tokenizer.save`` takes it.

        Raises:
            IsADirectoryError: ``path`` is a folder (``"."`` and ``""`` too).
            FileNotFoundError: the folder of ``path`` does not exist.
            OSError: the file cannot be written.
            TypeError: ``path`` is not a ``str`` or ``os.PathLike`` (bytes included).
        """
        path = check_path(path, "PretokenCounts.save takes the path to write")
        # as Tokenizer.save: a folder, "" or a missing folder is refused, naming the path,
        # before any temporary file is made (QA: a raw OSError naming the temporary file)
        write_atomic(path, self._serialize())

    @classmethod
    def load(cls, path: PathLike) -> PretokenCounts:
        """Reads counts written by ``save``.

        Args:
            path: a ``str`` or ``os.PathLike``, as ``bytepair.load`` takes it.

        Raises:
            FileNotFoundError, OSError: the file cannot be read.
            TypeError: ``path`` is not a ``str`` or ``os.PathLike`` (bytes included).
            ValueError: not a counts file, or corrupt or truncated (the message says what).
        """
        path = check_path(path, "PretokenCounts.load takes the path of a counts file")
        with open(path, "rb") as f:
            data = f.read()
        return cls._parse(data, path)

    def _serialize(self) -> bytes:
        body = self._core.to_bytes()
        header = {
            "pattern": self.pattern,
            "special_tokens": list(self.special_tokens),
            "records": len(self),
            "body_bytes": len(body),
            "crc32": zlib.crc32(body),
            "long_pretokens": list(self.long_pretokens),
        }
        return _MAGIC + json.dumps(header).encode() + b"\n" + body

    @classmethod
    def _parse(cls, data: bytes, name: str) -> PretokenCounts:
        def bad(what: str) -> ValueError:
            return ValueError(f"{name}: not a valid pre-token counts file: {what}")

        if not data.startswith(_MAGIC):
            raise bad("it does not start with the bytepair-pretoken-counts header")
        end = data.find(b"\n", len(_MAGIC), len(_MAGIC) + _MAX_HEADER)
        if end < 0:
            raise bad("the header line is missing or too long")
        try:
            header = json.loads(data[len(_MAGIC) : end])
            pattern = header["pattern"]
            specials = header["special_tokens"]
            records = header["records"]
            size = header["body_bytes"]
            crc = header["crc32"]
            long_count, longest = header.get("long_pretokens", [0, 0])
        except (ValueError, KeyError, TypeError) as e:
            raise bad(f"bad header ({e})") from None
        if not (pattern is None or isinstance(pattern, str)) or not (
            isinstance(specials, list) and all(isinstance(s, str) and s for s in specials)
        ):
            raise bad("bad pattern or special tokens in the header")
        ints = (records, size, crc, long_count, longest)
        # (QA: a huge records or long_pretokens was pyo3's OverflowError, naming no file)
        if not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2**64 for v in ints):
            raise bad("bad sizes in the header")
        if pattern is not None:
            from .tokenizer import _resolve_pattern

            try:  # (QA: a bad pattern loaded, and failed only when training)
                _core.count_texts([], _resolve_pattern(pattern), [])
            except ValueError as e:
                raise bad(f"its pattern does not compile ({e})") from None
        if len(set(specials)) < len(specials):
            raise bad("a special token is named twice in the header")
        body = data[end + 1 :]
        if len(body) != size:
            raise bad(f"the body has {len(body)} bytes, the header says {size} (truncated?)")
        if zlib.crc32(body) != crc:
            raise bad("the CRC-32 of the body does not match (corrupt)")
        try:
            core = _core.PretokenCounts.from_bytes(body, records)
        except ValueError as e:
            raise bad(str(e)) from None
        core.long_pretokens = (long_count, longest)
        return cls._wrap(core, pattern, specials)


def _check_key(k: object) -> bytes:
    if isinstance(k, str):
        raise TypeError(f"pre-tokens are bytes, got the str {k!r} (its UTF-8: {k!r}.encode())")
    if not isinstance(k, (bytes, bytearray, memoryview)):
        raise TypeError(f"pre-tokens are bytes, got {type(k).__name__}")
    return bytes(k)


def _check_count(v: object) -> int:
    # any integer type: counts from a numpy array or a pandas column are numpy ints
    n = integer(v)
    if n is None or not 0 <= n < 2**64:
        error = TypeError if n is None else ValueError
        raise error(f"counts must be ints in [0, 2**64), got {v!r}")
    return n
