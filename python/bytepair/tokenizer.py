"""The ``Tokenizer``: encode and decode with a byte-level BPE vocabulary.

The special-token policy follows tiktoken (``allowed_special`` / ``disallowed_special``);
the merge rule inside a pre-token is tiktoken's rank rule, which for a trained tokenizer is
"apply merges in learned order" (README, "The rules"). The hot loops run in ``bytepair._core``
with the GIL released.
"""

from __future__ import annotations

import functools
import io
import itertools
import operator
import os
import re
import sys
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING, Any, Literal, Union, overload

from . import _core
from ._checks import (
    count_option,
    integer,
    is_text,
    iter_ids,
    not_ids,
    refuse_mapping,
    refuse_unordered,
)
from .stream import StreamDecoder

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = ["Tokenizer"]

AllowedSpecial = Union[Literal["all"], AbstractSet[str]]
DisallowedSpecial = Union[Literal["all"], Collection[str]]
PathLike = Union[str, "os.PathLike[str]"]

_STREAM_CHUNK = 1 << 18  # characters buffered before looking for a cut


# The default `allowed_special`, told from any other value by identity (`encode`'s fast way).
_NO_SPECIALS: frozenset[str] = frozenset()
_COLLECTIONS = (tuple, list, set, frozenset)
# the id lists the core reads itself (anything else is checked here first for text)
_ID_LISTS = frozenset((list, tuple))


class Tokenizer:
    """A byte-level BPE tokenizer: vocabulary, merges, pattern and special tokens.

    Build one by training (``bytepair.train``), by loading a file (``bytepair.load``,
    ``Tokenizer.from_files``), or directly from a vocabulary and merges, as in CS336:

    >>> vocab = {i: bytes([i]) for i in range(256)} | {256: b"lo", 257: b"low"}
    >>> tok = Tokenizer(vocab, [(b"l", b"o"), (b"lo", b"w")])
    >>> tok.encode("low lo")
    [257, 32, 256]
    >>> tok.decode([257, 32, 256])
    'low lo'

    Args:
        vocab: token id -> token bytes. Must contain all 256 single bytes. Ids are ints
            (of any integer type, numpy's too), 0 <= id < 2**32.
        merges: merges in rank order, as (left bytes, right bytes); both sides and their
            concatenation must be tokens of ``vocab``.
        special_tokens: special-token strings (a list: not a set, whose order changes from
            run to run). One already in ``vocab`` keeps its id; others get new ids after the
            largest id, in the order given. Or ``{token: id}`` (as
            ``bytepair.load`` and ``Encoding`` take them): each token gets its id, which must
            be unused (after the vocabulary, or a hole in it) or the id of the token's own
            bytes (``{"\\n": 10}``).
        pattern: pre-tokenization pattern: ``"gpt2"``, ``"cl100k"``, ``"o200k"`` or a regex
            in Python ``regex`` syntax.

    Raises:
        TypeError: ``vocab`` is not a dict of int -> bytes (an id that is no integer: a
            str, a float, a bool), ``merges`` is not iterable (None included), a merge is
            not a pair of bytes, a special token is not a ``str``, a special token's id
            is no int, or ``special_tokens`` is a set of two or more.
        ValueError: an id is out of range (0 <= id < 2**32), a merge names bytes that are
            not a token or repeats an earlier merge, a single byte is missing, two tokens
            share an id, a special token is empty or holds a lone surrogate, a special
            token's id is out of range or the id of other bytes, or the pattern is not a
            valid regex.
    """

    # (name, rank file path) of an OpenAI encoding made by ``get_encoding``: pickled by these
    _encoding: tuple[str, str] | None = None
    _metadata: dict[str, Any]

    def __init__(
        self,
        vocab: dict[int, bytes],
        merges: Sequence[tuple[bytes, bytes]],
        special_tokens: Mapping[str, int] | Iterable[str] | None = None,
        pattern: str = "gpt2",
    ) -> None:
        if not isinstance(vocab, dict):
            raise TypeError(f"vocab must be a dict of id -> bytes, got {type(vocab).__name__}")
        if isinstance(special_tokens, (str, bytes)):
            raise TypeError(
                f"special_tokens must be a list of strings, not the string {special_tokens!r} "
                f"(write [{special_tokens!r}])"
            )
        if not isinstance(merges, Iterable):
            none = " (no merges: [])" if merges is None else ""
            raise TypeError(
                "merges must be a list of (left bytes, right bytes) pairs, got "
                f"{type(merges).__name__}{none}"
            )
        # (an iterator was read twice: the encoder got the merges, tok.merges none)
        merges = list(merges)
        vocab = {_check_id(i): _check_bytes(i, b) for i, b in vocab.items()}
        if isinstance(special_tokens, Mapping):
            specials = _given_special_ids(vocab, special_tokens)
            self._build(vocab, merges, specials, pattern)
            return
        refuse_unordered("special_tokens", special_tokens)
        # A special token already in the vocabulary keeps its id; others get new ids after
        # the largest, in the order given (CS336's Tokenizer). Where its bytes have two ids
        # (a one-byte special token such as "[": the byte's id and its own after the bytes,
        # as train gives it) it is the later one, and the byte stays an ordinary token.
        by_bytes = {b: i for i, b in sorted(vocab.items())}
        specials = {}
        next_id = max(vocab, default=-1) + 1
        for s in special_tokens or ():
            b = _special_bytes(s)
            if s in specials:
                continue
            known = by_bytes.get(b)
            if known is None:
                known, next_id = _check_id(next_id), next_id + 1
                vocab[known] = b
            specials[s] = known
        self._build(vocab, merges, specials, pattern)

    def _build(
        self,
        vocab: dict[int, bytes],
        merges: Sequence[tuple[bytes, bytes]],
        specials: dict[str, int],
        pattern: str,
    ) -> None:
        """Checks the merges against the vocabulary and builds the core encoder."""
        by_bytes = set(vocab.values())
        # rank of a token = index of the first merge that makes it (tiktoken's rank rule)
        ranks: dict[bytes, int] = {}
        # (QA: a repeated merge line of a GPT-2 folder was taken, and the native file saved
        # from it then refused by `load`, as the native reader refuses one)
        seen: dict[tuple[bytes, bytes], int] = {}
        for rank, merge in enumerate(merges):
            # (QA: b"ab" unpacked into the ints 97, 98; a triple said "too many values")
            try:
                if isinstance(merge, (str, bytes, bytearray)):
                    raise TypeError
                left, right = merge
            except (TypeError, ValueError):
                raise TypeError(
                    f"merge {rank} is {merge!r}: merges are pairs (left, right) of bytes"
                ) from None
            if isinstance(left, str) or isinstance(right, str):
                raise TypeError(
                    f"merge {rank} is ({left!r}, {right!r}): merges are pairs of bytes; for "
                    "GPT-2's vocab.json + merges.txt use Tokenizer.from_files"
                )
            if not all(isinstance(x, (bytes, bytearray, memoryview)) for x in (left, right)):
                raise TypeError(f"merge {rank} is ({left!r}, {right!r}): merges are pairs of bytes")
            left, right = bytes(left), bytes(right)
            for side in (left, right, left + right):
                if side not in by_bytes:
                    raise ValueError(
                        f"merge {rank} ({left!r}, {right!r}) names {side!r}, "
                        "which is not in the vocabulary"
                    )
            first = seen.setdefault((left, right), rank)
            if first != rank:
                raise ValueError(f"merge {rank} ({left!r}, {right!r}) repeats merge {first}")
            ranks.setdefault(left + right, rank)
        # A special token that is also an ordinary token (a single byte, or made by a merge)
        # stays usable as ordinary text; one that nothing makes (GPT-2's <|endoftext|>) is
        # only special, as in tiktoken.
        special_only = {
            i for s, i in specials.items() if len(vocab[i]) > 1 and vocab[i] not in ranks
        }
        tokens = [(b, i, ranks.get(b)) for i, b in vocab.items() if i not in special_only]
        self._init(tokens, specials, pattern, [(bytes(a), bytes(b)) for a, b in merges])

    def __getstate__(self) -> dict[str, object]:
        # an OpenAI encoding goes by name (and rank file path), as in tiktoken: loading one
        # in every task of a process pool took 0.7 s and 5.7 MB of pickle; it is then read
        # where it is unpickled, from the cache of get_encoding
        if self._encoding is not None:
            return {"encoding": self._encoding}
        # any other carries the vocabulary, merges, specials and pattern
        return {
            "vocab": dict(self._core.tokens()),
            "merges": self.merges,
            "special_tokens": self._special_tokens,
            "pattern": self._pattern_name,
            "metadata": self._metadata,
            "name": self._name,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        if "encoding" in state:
            from .encodings import get_encoding

            name, path = state["encoding"]
            # (the same immutable core as the cached one, and copies of what may change)
            cached = get_encoding(name, path=path or None)
            self.__dict__.update(cached.__dict__)
            self._metadata = dict(cached._metadata)
            return
        self._build(state["vocab"], state["merges"], state["special_tokens"], state["pattern"])
        self._metadata = dict(state.get("metadata", {}))
        self._name = state.get("name", "bytepair")

    @classmethod
    def _from_ranks(
        cls, ranks: dict[bytes, int], special_tokens: dict[str, int], pattern: str
    ) -> Tokenizer:
        """A tiktoken-style vocabulary: id = rank; the merges are recovered when asked for."""
        self = cls.__new__(cls)
        tokens = [(b, r, r if len(b) > 1 else None) for b, r in ranks.items()]
        self._init(tokens, dict(special_tokens), pattern, None)
        self._ranks_are_ids = True
        return self

    @classmethod
    def _from_rank_file(
        cls, data: bytes, special_tokens: dict[str, int], pattern: str
    ) -> Tokenizer | None:
        """``_from_ranks`` of a rank file's bytes, read in Rust (no Python object per
        token); None when a line is not in the plain form (``encodings._parse_ranks`` then
        reads it or names the line)."""
        core = _core.CoreBPE.from_rank_file(
            data, list(special_tokens.items()), _resolve_pattern(pattern)
        )
        if core is None:
            return None
        self = cls.__new__(cls)
        self._init([], dict(special_tokens), pattern, None, core=core)
        self._ranks_are_ids = True
        return self

    def _init(
        self,
        tokens: list[tuple[bytes, int, int | None]],
        specials: dict[str, int],
        pattern: str,
        merges: list[tuple[bytes, bytes]] | None,
        core: _core.CoreBPE | None = None,
    ) -> None:
        self._pattern = _resolve_pattern(pattern)
        self._pattern_name = pattern
        self._special_tokens = dict(specials)
        self._merges = merges
        if core is None:
            _core.check_build(len(tokens))  # (a limit on address space: src/room.rs)
            core = _core.CoreBPE(tokens, list(specials.items()), self._pattern)
        self._core = core
        self._special_set = frozenset(specials)
        self._special_ids = frozenset(specials.values())
        self._ordinary_ids: dict[bytes, int] | None = None  # made on first use
        self._name = "bytepair"
        self._matchers: dict[frozenset[str], _core.AllowedSpecial] = {}
        self._metadata = {}
        # ids sort tokens in merge order (trained, or read from ranks): rank = id holds
        self._ranks_are_ids = False

    @classmethod
    def _from_ids(
        cls,
        vocab: list[bytes],
        merge_ids: Sequence[tuple[int, int]],
        special_tokens: Sequence[str],
        pattern: str,
    ) -> Tokenizer:
        """A trained tokenizer: ids 0..255 bytes, then specials, then one per merge."""
        self = cls.__new__(cls)
        n_special = len(special_tokens)
        first_merge = 256 + n_special
        tokens: list[tuple[bytes, int, int | None]] = [(vocab[i], i, None) for i in range(256)]
        tokens += [(vocab[i], i, i - first_merge) for i in range(first_merge, len(vocab))]
        specials = {s: 256 + k for k, s in enumerate(special_tokens)}
        merges = [(vocab[a], vocab[b]) for a, b in merge_ids]
        self._init(tokens, specials, pattern, merges)
        self._ranks_are_ids = True
        return self

    # ------------------------------------------------------------------ loading

    @classmethod
    def from_files(
        cls,
        vocab_filepath: PathLike,
        merges_filepath: PathLike,
        special_tokens: Mapping[str, int] | Iterable[str] | None = None,
        pattern: str = "gpt2",
    ) -> Tokenizer:
        """Loads GPT-2 style ``vocab.json`` + ``merges.txt`` (CS336's ``from_files``).

        Tokens in both files are written in GPT-2's byte <-> unicode alphabet (a space is
        ``Ġ``); ids are kept as in ``vocab.json``. A ``#version`` header line is skipped.

        Raises:
            FileNotFoundError: a file is missing.
            ValueError: a file is malformed (names the file and the line or key), a token
                of ``vocab.json`` that two tokens make is made by no merge (``merges.txt``
                lost lines), or the ids have a hole that is not room before a special token.
        """
        from .formats import gpt2
        from .formats._io import check_dense, check_reachable

        vocab, merges = gpt2.read(vocab_filepath, merges_filepath)
        try:
            tok = cls(vocab, merges, special_tokens=special_tokens, pattern=pattern)
        except ValueError as e:
            raise ValueError(f"{vocab_filepath}, {merges_filepath}: {e}") from None
        # as bytepair.load of the same files: a token two others make but no merge does means
        # merges.txt lost lines (cut short, say), and encoding would silently differ
        check_reachable(vocab, merges, tok.special_tokens, f"{vocab_filepath}", standalone_ok=True)
        check_dense(vocab, tok.special_tokens, f"{vocab_filepath}")  # as bytepair.load
        return tok

    def save(self, path: PathLike, format: str | None = None) -> None:
        """Writes the tokenizer to a file (or a folder, for ``"gpt2"``), atomically.

        Args:
            path: where to write: a file for ``"native"``, ``"tiktoken"`` and ``"hf"``; a
                folder (created if missing) for ``"gpt2"``.
            format: ``"native"`` (bytepair's JSON: everything, readable, versioned; see
                ``bytepair.formats.native``), ``"gpt2"`` (``vocab.json`` + ``merges.txt`` and
                a ``bytepair.json`` with the pattern and special tokens), ``"tiktoken"`` (a
                ``.tiktoken`` rank file: ordinary tokens only, no pattern, no special tokens)
                or ``"hf"`` (a HF tokenizers ``tokenizer.json``). None (the default):
                ``"tiktoken"`` for a path ending in ``.tiktoken``, else ``"native"``.

        Every file is written to a temporary name and renamed, so an interrupted save leaves
        an existing file intact. ``bytepair.load`` reads each format back.

        Raises:
            ValueError: an unknown format, or a tokenizer the format cannot hold (the message
                says why: e.g. a tiktoken file needs ids in merge order).
            OSError: the file cannot be written.
            TypeError: ``path`` is not a ``str`` or ``os.PathLike`` (bytes included, as for
                ``bytepair.load``).
        """
        from . import formats

        formats.save(self, path, format)

    def to_tiktoken(self, name: str = "bytepair") -> Any:
        """A ``tiktoken.Encoding`` that encodes exactly as this tokenizer does.

        It carries the ordinary tokens as ranks (rank = id), the pattern and the special
        tokens. tiktoken is imported only here.

        Raises:
            ImportError: tiktoken is not installed.
            ValueError: the ids are not in merge order or not dense, so ranks cannot equal
                ids (a tokenizer read from GPT-2 or HF files with shuffled ids).
        """
        from .formats import tiktoken as tiktoken_format

        return tiktoken_format.to_encoding(self, name)

    # ------------------------------------------------------------------ encoding

    def encode_ordinary(self, text: str) -> list[int]:
        """Encodes ``text`` ignoring special tokens (their text is encoded as ordinary text).

        Args:
            text: any ``str``; lone surrogates are encoded like U+FFFD, as in tiktoken.

        Returns:
            token ids.
        """
        try:
            return self._core.encode_ordinary(text)
        except UnicodeEncodeError:
            return self._core.encode_ordinary(_fix_surrogates(text))

    def encode(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = _NO_SPECIALS,
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[int]:
        """Encodes ``text`` into token ids, with tiktoken's special-token policy.

        Args:
            text: any ``str``; lone surrogates are encoded like U+FFFD, as in tiktoken.
            allowed_special: special tokens whose text becomes their id (``"all"`` for every
                one). Where several match at one place, the longest wins.
            disallowed_special: special tokens whose text raises ``ValueError``; ``"all"``
                (default) means every special token not allowed; ``()`` (or None) encodes such
                text as ordinary text.

        Returns:
            token ids.

        Raises:
            ValueError: ``text`` contains a disallowed special token, or any other string
                given in ``disallowed_special`` (as in tiktoken; a name in ``allowed_special``
                that is not a special token of this tokenizer is ignored, as in tiktoken);
                ``disallowed_special`` holds ``""``, which every text contains (tiktoken
                refuses every text then).
            TypeError: ``allowed_special`` is None (as in tiktoken; ``set()`` allows none) or
                either is not a collection of strings.

        >>> tok = Tokenizer({i: bytes([i]) for i in range(256)}, [], ["<|endoftext|>"])
        >>> tok.encode("a<|endoftext|>", allowed_special="all")
        [97, 256]
        """
        # The common policies straight to the core: on short texts (a line of 60 characters,
        # 0.8 us) the general checks below took as long again as the encoding. What the
        # core cannot answer alone (a special token's text, surrogates) takes the general way.
        if allowed_special is _NO_SPECIALS:
            if disallowed_special == "all":  # tiktoken's default
                try:
                    ids = self._core.encode_ordinary(text, bool(self._special_tokens))
                except UnicodeEncodeError:
                    ids = None
                if type(ids) is list:
                    return ids
            elif disallowed_special is None or (
                type(disallowed_special) in _COLLECTIONS and not disallowed_special
            ):  # none allowed, none refused (`disallowed_special=()`): ordinary text
                return self.encode_ordinary(text)
        elif allowed_special == "all" and disallowed_special == "all":
            try:
                return self._core.encode(text, None)
            except UnicodeEncodeError:
                pass
        allowed_special, disallowed_special = _read_once(allowed_special, disallowed_special)
        try:
            return self._encode(text, allowed_special, disallowed_special)
        except UnicodeEncodeError:
            text = self._refuse_as_given(text, allowed_special, disallowed_special)
            return self._encode(text, allowed_special, ())

    def encode_with_unstable(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> tuple[list[int], list[list[int]]]:
        """The ids of ``text`` that more text cannot change, and every way they may go on.

        As tiktoken's ``Encoding.encode_with_unstable`` (same rules, same answers; the order
        of the sequences is arbitrary, as there): for a prompt to be completed token by token.

        Args:
            text: any ``str``; lone surrogates are encoded like U+FFFD, as in ``encode``
                (tiktoken's ``encode_with_unstable`` raises ``UnicodeEncodeError`` there).
            allowed_special, disallowed_special: as in ``encode``.

        Returns:
            ``(stable, completions)``: ``stable`` encodes a prefix of ``text``; each sequence
            of ``completions`` (a list of id lists) continues ``stable`` into ids whose bytes
            begin with all of ``text``.

        Raises:
            ValueError: ``text`` contains a disallowed special token.

        >>> tok = get_encoding("gpt2")  # doctest: +SKIP
        >>> stable, completions = tok.encode_with_unstable("hello fan")  # doctest: +SKIP
        >>> tok.decode(stable), sorted(map(tok.decode, completions))[:3]  # doctest: +SKIP
        ('hello', [' fan', ' fana', ' fanatic'])
        """
        from .unstable import encode_with_unstable

        allowed_special, disallowed_special = _read_once(allowed_special, disallowed_special)
        return encode_with_unstable(self, text, allowed_special, disallowed_special)

    def _encode(
        self, text: str, allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial
    ) -> list[int]:
        # the two common policies, without building sets (a short text is encoded in less
        # time than `_policy` takes)
        if _default_policy(allowed_special, disallowed_special):
            ids = self._core.encode_ordinary(text, bool(self._special_tokens))
            if isinstance(ids, str):
                # (the core searched the text with surrogates fixed)
                text = self._refuse_as_given(text, allowed_special, disallowed_special)
                return self._core.encode_ordinary(text)
            return ids
        if allowed_special == "all" and disallowed_special == "all":
            return self._core.encode(text, None)
        matcher, ordinary = self._prepare(text, allowed_special, disallowed_special)
        if ordinary:
            return self._core.encode_ordinary(text)
        return self._core.encode(text, matcher)

    def _prepare(
        self, text: str, allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial
    ) -> tuple[_core.AllowedSpecial | None, bool]:
        """Checks ``text`` for disallowed special tokens; returns (matcher, ordinary) for the
        core: ``ordinary`` when no special token is allowed, ``matcher`` None for all."""
        allowed, disallowed = self._policy(allowed_special, disallowed_special)
        _refuse_foreign(self._foreign(disallowed_special), text)
        if disallowed:
            found = self._matcher(disallowed).find(text)
            if found is not None:
                raise _disallowed_error(found)
        if not allowed:
            return None, True
        if allowed == self._special_set:
            return None, False
        return self._matcher(allowed), False

    def encode_to_numpy(
        self,
        text: str,
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> npt.NDArray[np.uint32]:
        """Encodes ``text`` like ``encode`` straight into a numpy array (as tiktoken does).

        No Python int is made per token, so this is the fast way to turn large texts into
        training data.

        Returns:
            a read-only ``numpy.ndarray`` of dtype ``uint32`` and shape ``(n_tokens,)``.

        Raises:
            ValueError: as ``encode``.
        """
        import numpy as np

        allowed_special, disallowed_special = _read_once(allowed_special, disallowed_special)
        if _default_policy(allowed_special, disallowed_special):
            # the core looks for special tokens in the same pass over the text's UTF-8
            # (src/py/text.rs makes it; surrogates as tiktoken)
            buf = self._core.encode_to_bytes(text, None, True, bool(self._special_tokens))
            if isinstance(buf, str):  # (a special token's text, with surrogates fixed)
                text = self._refuse_as_given(text, allowed_special, disallowed_special)
                buf = self._core.encode_to_bytes(text, None, True, False)
        else:
            try:
                matcher, ordinary = self._prepare(text, allowed_special, disallowed_special)
            except UnicodeEncodeError:
                text = self._refuse_as_given(text, allowed_special, disallowed_special)
                matcher, ordinary = self._prepare(text, allowed_special, ())
            buf = self._core.encode_to_bytes(text, matcher, ordinary)
        assert isinstance(buf, bytes)  # (the calls that refuse found nothing)
        return np.frombuffer(buf, dtype=np.dtype("<u4"))

    def _policy(
        self, allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial
    ) -> tuple[frozenset[str], frozenset[str]]:
        if allowed_special == "all":
            allowed = self._special_set
        else:
            allowed = _token_set("allowed_special", allowed_special)
        if disallowed_special == "all":
            disallowed = self._special_set - allowed
        else:
            disallowed = _token_set("disallowed_special", disallowed_special)
            if "" in disallowed:
                # every text holds it: tiktoken refuses every text, "" included (this was
                # ignored here); said at once, before any text is searched
                raise ValueError(
                    "Encountered text corresponding to disallowed special token ''.\n"
                    "disallowed_special holds the empty string, which every text contains, so "
                    "every text is refused (as in tiktoken); leave it out."
                )
        # names that are not special tokens of this tokenizer: ignored when allowed, as
        # tiktoken does (code that passes one set of names to several encodings keeps
        # working); when disallowed, tiktoken still refuses text that holds them (`_foreign`)
        return allowed & self._special_set, disallowed & self._special_set

    def _refuse_as_given(
        self, text: str, allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial
    ) -> str:
        """Raises ``ValueError`` if ``text`` holds a disallowed string; returns ``text`` with
        surrogates fixed. tiktoken's order for a text holding surrogates: it searches the
        text as given, then encodes it fixed (a lone surrogate as U+FFFD, an escaped pair as
        its character). Searched after the fix, "\ud800" passed where "\ufffd" was
        disallowed, and a pair was refused where its character was (QA)."""
        _, disallowed = self._policy(allowed_special, disallowed_special)
        names = set(disallowed)
        if disallowed_special != "all":
            names |= _token_set("disallowed_special", disallowed_special)
        _refuse_foreign(_search_for(frozenset(names)), text)
        return _clean(text)

    def _foreign(self, disallowed_special: DisallowedSpecial) -> _Refused | None:
        """A search for the strings of ``disallowed_special``, or None if all of them are
        special tokens of this tokenizer (the core's matcher finds those). tiktoken refuses
        text holding any string given as disallowed, special token or not (QA: a guard
        against chat markup such as ``disallowed_special={"<|im_start|>"}`` on cl100k passed
        it through here). The search holds the special tokens given too, and runs first: the
        error then names the leftmost string, as tiktoken's one search does (two searches
        named ``<|pad|>`` in ``<|nope|><|pad|>``)."""
        if disallowed_special == "all" or not disallowed_special:
            return None
        names = _token_set("disallowed_special", disallowed_special)
        if names <= self._special_set:
            return None
        return _search_for(frozenset(n for n in names if n))

    def _check_special_names(self, names: AllowedSpecial) -> None:
        """Raises ``ValueError`` if a name of ``names`` (or ``"all"``) is not a special token
        of this tokenizer: for corpus jobs, where a mistyped name should stop the run."""
        if names == "all":
            return
        unknown = _token_set("allowed_special", names) - self._special_set
        if unknown:
            raise ValueError(
                f"not special tokens of this tokenizer: {sorted(unknown)!r} "
                f"(its special tokens: {sorted(self._special_set)!r})"
            )

    def _matcher(self, tokens: frozenset[str]) -> _core.AllowedSpecial:
        m = self._matchers.get(tokens)
        if m is None:
            # keep registration order so equal-length overlaps resolve the same every time
            ordered = [s for s in self._special_tokens if s in tokens]
            m = self._core.allowed_special(ordered)
            if len(self._matchers) < 64:
                self._matchers[tokens] = m
        return m

    def encode_batch(
        self,
        texts: Sequence[str],
        *,
        num_threads: int | None = None,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> list[list[int]]:
        """Encodes many texts in parallel (Rust threads, GIL released); same ids as ``encode``.

        Short texts are grouped into jobs; a long one (over about 32 KB) is cut into parts
        where pre-tokenizing the parts gives exactly the pre-tokens of the whole (after a
        ``"\n"`` between two non-space characters, or before an allowed special token), so
        even one long text uses every thread. Batches under 32 KB run on the calling thread.

        Args:
            texts: the texts.
            num_threads: threads to use, the calling thread included (default: one per
                core; at most four per core).

        Raises:
            ValueError: as ``encode``; a negative ``num_threads``.
            TypeError: ``num_threads`` not an int (a float, string or bool).
        """
        allowed_special, disallowed_special = _read_once(allowed_special, disallowed_special)
        allowed, disallowed = self._policy(allowed_special, disallowed_special)
        check = self._matcher(disallowed) if disallowed else None
        foreign = self._foreign(disallowed_special)
        if foreign is not None and not isinstance(texts, str):
            texts = list(texts)
            for i, text in enumerate(texts):
                _refuse_foreign(foreign, text, f"texts[{i}]")
        if not allowed:
            return self._batch(texts, None, True, num_threads, check)
        matcher = None if allowed == self._special_set else self._matcher(allowed)
        return self._batch(texts, matcher, False, num_threads, check)

    def _batch(
        self,
        texts: Sequence[str],
        matcher: _core.AllowedSpecial | None,
        ordinary: bool,
        num_threads: int | None,
        check: _core.AllowedSpecial | None,
    ) -> list[list[int]]:
        num_threads = _check_threads(num_threads)
        if isinstance(texts, (str, bytes, bytearray, memoryview)):
            # (bytes are a sequence too, of ints: the message named texts[0] an int)
            kind = type(texts).__name__
            raise TypeError(f"texts must be a sequence of str, not one {kind}")
        if type(texts) is not list:
            # (a list is passed as it is: the core holds each str itself while it works)
            texts = list(texts)
        try:
            ids, found = self._core.encode_batch(texts, matcher, ordinary, num_threads, check)
        except TypeError:
            # (PyO3's message names no position: "'bytes' object is not an instance of 'str'")
            bad = next((i for i, t in enumerate(texts) if not isinstance(t, str)), None)
            if bad is None:
                raise
            raise TypeError(
                f"texts[{bad}] is {type(texts[bad]).__name__}, not str (a batch holds str)"
            ) from None
        except UnicodeEncodeError:  # lone surrogates somewhere: fix them as tiktoken does
            texts = [_clean(t) for t in texts]
            ids, found = self._core.encode_batch(texts, matcher, ordinary, num_threads, check)
        if found is not None:
            index, token = found
            raise _disallowed_error(token, f"texts[{index}]")
        return ids

    def encode_ordinary_batch(
        self, texts: Sequence[str], *, num_threads: int | None = None
    ) -> list[list[int]]:
        """``encode_ordinary`` over many texts in parallel."""
        return self._batch(texts, None, True, num_threads, None)

    def encode_iterable(
        self,
        iterable: Iterable[str],
        *,
        allowed_special: AllowedSpecial = frozenset(),
        disallowed_special: DisallowedSpecial = "all",
    ) -> Iterator[int]:
        """Lazily encodes a stream of strings (a file object, a generator of lines, ...).

        The ids are exactly those of encoding the concatenated text, whatever the chunking:
        text is buffered and only its final part is encoded, up to the last two pre-tokens
        and any possible beginning of a special token (a pre-token or a special token may
        span two chunks). Memory stays bounded by the chunk size plus the longest pre-token.
        With a custom pattern, text is final only before a special token, so a stream
        without special tokens is held whole. Open files with ``newline=""``
        (``open(path, encoding="utf-8", newline="")``): Python's default newline
        translation turns ``\r\n`` into ``\n`` before bytepair sees the text.

        Returns:
            an iterator of token ids, in order (not a generator: it has no ``close``). Nothing
            is read or checked before its first item is asked for.

        Raises:
            ValueError: the stream contains a disallowed special token (raised when the
                text around it is reached).
            TypeError: ``iterable`` is a dict (any mapping: its keys are not taken as the
                text), or an item is not a ``str``.
        """
        # The ids come a list at a time out of `_id_lists`, and `chain` hands them out one
        # by one in C: a generator's `yield from` of each list took about twice as long per
        # id (11M ids: 0.36 s against 0.20). With the buffers cut at lines and encoded on
        # every CPU (`encode_stream_prefix`) and files read a buffer at a time below,
        # `list(encode_iterable(f))` of 45 MB of English went from 1.08 s to 0.43 s.
        return itertools.chain.from_iterable(
            self._id_lists(iterable, allowed_special, disallowed_special)
        )

    def _id_lists(
        self,
        iterable: Iterable[str],
        allowed_special: AllowedSpecial,
        disallowed_special: DisallowedSpecial,
    ) -> Iterator[list[int]]:
        """``encode_iterable``'s ids, as lists of ids in order."""
        # (encode_iterable({"a": 1, "b": 2}) encoded "ab", the keys; tiktoken has no
        # encode_iterable, and its batch methods, which take a dict, are left as they are)
        refuse_mapping("iterable", iterable, "an iterable of str")
        if isinstance(iterable, (io.TextIOWrapper, io.StringIO)):
            # a text file read a buffer at a time, not line by line: the same text, in less
            # than half the time (45 MB of English: 0.10 s against 0.23 s, and a turn of the
            # loop below per line). (Not any io.TextIOBase: one of a user's own may only
            # have lines to give, its `read` the base class's UnsupportedOperation.)
            iterable = iter(functools.partial(iterable.read, _STREAM_CHUNK), "")
        allowed_special, disallowed_special = _read_once(allowed_special, disallowed_special)
        allowed, disallowed = self._policy(allowed_special, disallowed_special)
        check = self._matcher(disallowed) if disallowed else None
        foreign = self._foreign(disallowed_special)
        # (the end of the text searched so far, and the chunks after it: a refused string
        # may span two searches)
        seen, unsearched = "", []
        if not allowed:
            mode, matcher = "ordinary", None
        elif allowed == self._special_set:
            mode, matcher = "all", None
        else:
            mode, matcher = "allowed", self._matcher(allowed)
        parts: list[str] = []
        size = 0
        flush_at = _STREAM_CHUNK
        for chunk in iterable:
            if not isinstance(chunk, str):
                raise TypeError(f"encode_iterable takes strings, got {type(chunk).__name__}")
            parts.append(chunk)
            size += len(chunk)
            if foreign is not None:
                unsearched.append(chunk)
            if size < flush_at:
                continue
            if foreign is not None:
                # the text as given is searched, as `encode` searches it, not the text with
                # surrogates fixed (QA: that let "\ud800" through and refused "\ufffd")
                seen, unsearched = _refuse_foreign_in(foreign, seen, unsearched), []
            raw = "".join(parts)
            # a high surrogate at the end may pair with a low one in the next chunk
            carry = raw[-1] if "\ud800" <= raw[-1] <= "\udbff" else ""
            buf = _clean(raw[: len(raw) - len(carry)])
            if check is not None and (found := check.find(buf)) is not None:
                raise _disallowed_error(found)
            ids, rest = self._core.encode_stream_prefix(buf, mode, matcher)
            yield ids
            parts, size = [rest, carry], len(rest) + len(carry)
            # a long pre-token still arriving is rescanned only after the buffer doubles,
            # which keeps the whole stream linear
            flush_at = max(_STREAM_CHUNK, 2 * size)
        if foreign is not None:
            _refuse_foreign_in(foreign, seen, unsearched)
        buf = _clean("".join(parts))
        if buf:
            yield self.encode(buf, allowed_special=allowed, disallowed_special=disallowed)

    # ------------------------------------------------------------------ decoding

    def decode_bytes(self, ids: Sequence[int]) -> bytes:
        """The concatenated bytes of ``ids``.

        Args:
            ids: token ids: a list, tuple, numpy array or other sequence of ints (any
                integer type).

        Raises:
            KeyError: an id is not in the vocabulary (the message names it).
            TypeError: ``ids`` is no sequence of ids: one int, a ``str``, bytes, None, an
                iterator or a set (as tiktoken refuses them; the message names ``ids``).
        """
        if is_text(ids):
            raise not_ids("ids", ids, "a sequence")
        data = _numpy_ids_as_bytes(ids)
        if data is not None:
            return self._core.decode_bytes_le(data)
        try:
            return self._core.decode_bytes(ids)
        except OverflowError:
            # pyo3 refuses negative or > 32-bit ids; name the first one, as for unknown ids
            # (by `operator.index`: an object with `__index__` compared as itself was a
            # TypeError of '<=' between int and it; QA)
            bad = next(i for i in map(operator.index, ids) if not 0 <= i < 2**32)
            raise KeyError(f"unknown token id {bad}") from None
        except TypeError:
            # (decode(5) said pyo3's "'int' object is not an instance of 'Sequence'")
            _refuse_non_sequence("ids", ids)
            raise

    def decode(self, ids: Sequence[int], errors: str = "replace") -> str:
        """Decodes ``ids`` to text; invalid UTF-8 becomes U+FFFD (``errors="replace"``).

        Args:
            ids: token ids (a sequence, as ``decode_bytes``).
            errors: as ``bytes.decode`` (``"strict"`` raises ``UnicodeDecodeError``).

        Raises:
            KeyError: an id is not in the vocabulary.
            TypeError: ``ids`` is no sequence of ids (as ``decode_bytes``).
        """
        if type(ids) is list and type(errors) is str:
            # (the core at once, the text made there: a line decodes in half a microsecond)
            try:
                return self._core.decode(ids, errors)
            except (OverflowError, TypeError):  # said as decode_bytes says it
                # (not a failed decoding: UnicodeDecodeError, or an error handler's own
                # error, would be met again, and the text decoded twice; QA)
                pass
        return self.decode_bytes(ids).decode("utf-8", errors)

    def decode_batch(
        self,
        batch: Sequence[Sequence[int]],
        *,
        errors: str = "replace",
        num_threads: int | None = None,
    ) -> list[str]:
        """``decode`` of each id list, in parallel (Rust threads, GIL released).

        Args:
            batch: id lists.
            errors: as ``decode``.
            num_threads: threads to use (default: one per core).

        Raises:
            KeyError: an id is not in the vocabulary (as ``decode_bytes_batch``).
            TypeError: ``batch`` or one of its items is no sequence (the message names it).
        """
        if not isinstance(errors, str):  # (as bytes.decode says it)
            raise TypeError(f"decode() argument 'errors' must be str, not {type(errors).__name__}")
        return self._decode_batch(batch, num_threads, errors)

    def decode_bytes_batch(
        self, batch: Sequence[Sequence[int]], *, num_threads: int | None = None
    ) -> list[bytes]:
        """``decode_bytes`` of each id list, in parallel.

        Raises:
            KeyError: an id is not in the vocabulary (the message names it and its list:
                ``'unknown token id 999999 (batch[7])'``).
            TypeError: ``batch`` or one of its items is no sequence (the message names it).
        """
        return self._decode_batch(batch, num_threads, None)

    @overload
    def _decode_batch(
        self, batch: Sequence[Sequence[int]], num_threads: int | None, errors: None
    ) -> list[bytes]: ...
    @overload
    def _decode_batch(
        self, batch: Sequence[Sequence[int]], num_threads: int | None, errors: str
    ) -> list[str]: ...
    def _decode_batch(
        self, batch: Sequence[Sequence[int]], num_threads: int | None, errors: str | None
    ) -> list[bytes] | list[str]:
        """``decode_bytes_batch``, or with ``errors`` ``decode_batch``."""
        num_threads = _check_threads(num_threads)
        try:
            if is_text(batch):
                raise TypeError
            batch = list(batch)
        except TypeError:
            raise TypeError(
                f"batch must be a sequence of id lists, not {type(batch).__name__}"
            ) from None
        # (the types in one pass in C: a loop here over 57,000 lists was a tenth of the call)
        if not _ID_LISTS.issuperset(map(type, batch)):
            for i, ids in enumerate(batch):
                if is_text(ids):
                    raise not_ids(f"batch[{i}]", ids, "a sequence")
        try:
            return self._core.decode_batch(batch, num_threads, errors)
        except (KeyError, OverflowError):
            # name the list too (QA: in a batch of 100,000 lists, which one?): the first
            # that `decode_bytes` refuses, with its message
            for i, ids in enumerate(batch):
                try:
                    self.decode_bytes(ids)
                except KeyError as e:
                    raise KeyError(f"{e.args[0]} (batch[{i}])") from None
            raise
        except TypeError:
            for i, ids in enumerate(batch):
                _refuse_non_sequence(f"batch[{i}]", ids)
            # an item of a list was to blame: name the list, as for unknown ids (QA)
            for i, ids in enumerate(batch):
                try:
                    self.decode_bytes(ids)
                except TypeError as e:
                    raise TypeError(f"{e} (batch[{i}])") from None
                except KeyError:
                    pass
            raise

    def stream_decoder(self, errors: str = "replace") -> StreamDecoder:
        """A decoder for ids that arrive a few at a time (generation, streaming output).

        Its ``decode(ids)`` returns the text that is complete so far and holds back the bytes
        of a UTF-8 character split between tokens until the rest arrives; ``flush()`` ends
        the stream. The texts it returns concatenate to ``decode(all ids, errors)``.

        >>> tok = Tokenizer({i: bytes([i]) for i in range(256)}, [])
        >>> dec = tok.stream_decoder()
        >>> [dec.decode(tok.encode("é")[:1]), dec.decode(tok.encode("é")[1:]), dec.flush()]
        ['', 'é', '']
        """
        return StreamDecoder(self.decode_bytes, errors)

    def decode_single_token_bytes(self, token: int) -> bytes:
        """The bytes of one token.

        Args:
            token: an id: any integer, numpy's included.

        Raises:
            KeyError: the id is not in the vocabulary.
            TypeError: ``token`` is not an integer.
        """
        try:
            token = operator.index(token)
        except TypeError:
            raise TypeError(f"a token id must be an int, got {type(token).__name__}") from None
        if token < 0:
            raise KeyError(f"unknown token id {token!r}")
        try:
            return self._core.token_bytes(token)
        except OverflowError:
            raise KeyError(f"unknown token id {token!r}") from None

    def decode_tokens_bytes(self, ids: Sequence[int]) -> list[bytes]:
        """The bytes of each token of ``ids``.

        Raises:
            KeyError: an id is not in the vocabulary.
            TypeError: ``ids`` is not an iterable of ids (one int, a ``str``, bytes, None).
        """
        return [self.decode_single_token_bytes(t) for t in iter_ids("ids", ids)]

    def decode_with_offsets(self, ids: Sequence[int]) -> tuple[str, list[int]]:
        """The text of ``ids`` and, for each token, the offset (in characters) in that text
        where it starts, as tiktoken's ``decode_with_offsets``. A token that starts inside a
        character (its first byte is a UTF-8 continuation byte) gets that character's offset.

        Raises:
            KeyError: an id is not in the vocabulary.
            TypeError: ``ids`` is not an iterable of ids (as ``decode_tokens_bytes``).
            UnicodeDecodeError: the bytes are not valid UTF-8 (strict, as tiktoken).
        """
        pieces = self.decode_tokens_bytes(ids)
        text = b"".join(pieces).decode("utf-8")
        offsets = []
        chars = 0  # characters started by the bytes so far: all but continuation bytes
        for piece in pieces:
            inside = 0x80 <= piece[0] < 0xC0
            offsets.append(max(0, chars - inside))
            chars += sum(not 0x80 <= b < 0xC0 for b in piece)
        return text, offsets

    def encode_single_token(self, text_or_bytes: str | bytes) -> int:
        """The id of the one token whose bytes are ``text_or_bytes`` (a ``str`` is taken as
        UTF-8): an ordinary token first, else a special token, as tiktoken.

        Raises:
            KeyError: no single token has these bytes.
            TypeError: ``text_or_bytes`` is neither ``str`` nor bytes.
        """
        if isinstance(text_or_bytes, str):
            piece = text_or_bytes.encode("utf-8", "surrogatepass")
        elif isinstance(text_or_bytes, (bytes, bytearray, memoryview)):
            piece = bytes(text_or_bytes)
        else:
            raise TypeError(f"expected str or bytes, got {type(text_or_bytes).__name__}")
        token = self._ordinary().get(piece)
        if token is None:
            try:
                token = self._special_tokens.get(piece.decode("utf-8"))
            except UnicodeDecodeError:
                pass
        if token is None:
            raise KeyError(text_or_bytes)
        return token

    def is_special_token(self, token: int) -> bool:
        """Whether the id ``token`` is a special token's.

        Raises:
            TypeError: ``token`` is not an integer (a Python or numpy int); tiktoken asserts
                it is an int. (A string, None or a float was answered False, hiding the
                mistake.)
        """
        token_id = integer(token)
        if token_id is None:
            raise TypeError(f"token must be an int id, not {type(token).__name__}")
        return token_id in self._special_ids

    def token_byte_values(self) -> list[bytes]:
        """The bytes of every ordinary (not special) token, sorted, as tiktoken."""
        return sorted(self._ordinary())

    def _ordinary(self) -> dict[bytes, int]:
        """Ordinary token bytes -> id (the lowest id of equal bytes), made on first use."""
        if self._ordinary_ids is None:
            special_ids = set(self._special_tokens.values())
            ids: dict[bytes, int] = {}
            for i, b in self._core.tokens():  # by id
                if i not in special_ids:
                    ids.setdefault(b, i)
            self._ordinary_ids = ids
        return self._ordinary_ids

    # ------------------------------------------------------------------ properties

    @property
    def vocab(self) -> dict[int, bytes]:
        """Token id -> token bytes, special tokens included (a new dict on each call)."""
        return dict(self._core.tokens())

    @property
    def merges(self) -> list[tuple[bytes, bytes]]:
        """Merges in rank order, as (left bytes, right bytes).

        For a vocabulary loaded from ranks alone (``get_encoding``), they are recovered from
        the ranks on first use: the merge of a token is the two parts that encoding its
        bytes with only lower ranks leaves.
        """
        if self._merges is None:
            tb = self._core.token_bytes
            self._merges = [(tb(a), tb(b)) for a, b in self._core.recover_merges()]
        return list(self._merges)

    @property
    def metadata(self) -> dict[str, Any]:
        """Where the tokenizer came from, as saved in native files (a new dict on each call).

        ``bytepair.train`` sets ``{"training": {"corpus_bytes": ..., "pretokens": ...}}``: the
        UTF-8 bytes and pre-tokens counted (special-token text excluded).
        """
        return {k: dict(v) if isinstance(v, dict) else v for k, v in self._metadata.items()}

    @property
    def pattern(self) -> str:
        """The pre-tokenization regex."""
        return self._pattern

    @property
    def special_tokens(self) -> dict[str, int]:
        """Special token -> id."""
        return dict(self._special_tokens)

    @property
    def special_tokens_set(self) -> set[str]:
        """The special tokens, as in tiktoken."""
        return set(self._special_set)

    @property
    def n_vocab(self) -> int:
        """One more than the largest token id (tiktoken's ``n_vocab``)."""
        return self._core.n_vocab

    @property
    def eot_token(self) -> int | None:
        """The id of ``<|endoftext|>``, or None if it is not a special token."""
        return self._special_tokens.get("<|endoftext|>")

    # tiktoken.Encoding's attributes, so that code written for tiktoken runs unchanged
    # (extending an encoding with special tokens reads _pat_str and _mergeable_ranks)

    @property
    def name(self) -> str:
        """The encoding's name (``get_encoding``'s, ``Encoding``'s), else ``"bytepair"``."""
        return self._name

    @property
    def max_token_value(self) -> int:
        """The largest token id (tiktoken's ``max_token_value``)."""
        return self._core.n_vocab - 1

    @property
    def _pat_str(self) -> str:
        return self._pattern

    @property
    def _mergeable_ranks(self) -> dict[bytes, int]:
        """Ordinary token bytes -> rank (= id), as a tiktoken rank file holds them.

        Raises:
            ValueError: the ids cannot be ranks (see ``formats.tiktoken.ordinary_ranks``).
        """
        from .formats.tiktoken import ordinary_ranks

        return ordinary_ranks(self, "mergeable ranks")

    def __repr__(self) -> str:
        # a preset's regex is shown by its (first) name, however it was given
        presets = _PRESET_NAMES.items()
        name = next((n for n, r in presets if r == self._pattern), self._pattern_name)
        return (
            f"<bytepair.Tokenizer n_vocab={self.n_vocab} "
            f"special_tokens={len(self._special_tokens)} pattern={name!r}>"
        )


_PRESET_NAMES = {
    "gpt2": _core.GPT2_PATTERN,
    "r50k": _core.GPT2_PATTERN,
    "r50k_base": _core.GPT2_PATTERN,
    "p50k": _core.GPT2_PATTERN,
    "p50k_base": _core.GPT2_PATTERN,
    "cl100k": _core.CL100K_PATTERN,
    "cl100k_base": _core.CL100K_PATTERN,
    "o200k": _core.O200K_PATTERN,
    "o200k_base": _core.O200K_PATTERN,
}


def _resolve_pattern(pattern: str) -> str:
    """A preset name's regex, or ``pattern`` itself when it is a regex.

    A string made only of letters, digits, ``_`` and ``-`` that is not a preset name is taken to
    be a misspelt name (``"gpt3"``, ``"GPT2"``) and rejected: as a regex it would match only
    that literal word, which is never what a tokenizer wants.

    Raises:
        ValueError: an empty pattern or an unknown preset name.
    """
    if not isinstance(pattern, str) or not pattern:
        raise ValueError(f"pattern must be a preset name or a non-empty regex, got {pattern!r}")
    if pattern in _PRESET_NAMES:
        return _PRESET_NAMES[pattern]
    word = pattern.strip()
    if word != pattern and word in _PRESET_NAMES:  # "gpt2 ": a regex matching that literal
        raise ValueError(
            f"unknown pattern name {pattern!r}: did you mean {word!r}? (with the spaces it "
            "would be a regex matching only that text)"
        )
    if pattern.replace("_", "").replace("-", "").isalnum() and pattern.isascii():
        raise ValueError(
            f"unknown pattern name {pattern!r}: the presets are "
            f"{', '.join(sorted(_PRESET_NAMES))}; any other pattern must be a regex"
        )
    return pattern


def _token_set(name: str, tokens: object) -> frozenset[str]:
    """A set of special-token strings from a collection. None is an empty
    ``disallowed_special``, as tiktoken reads it, and a ``TypeError`` for ``allowed_special``,
    as tiktoken raises (``set()`` allows none)."""
    if tokens is None:
        if name == "disallowed_special":
            return frozenset()
        raise TypeError(
            f'{name} must be "all" or a set of special-token strings, not None (to allow none: '
            "set(), the default)"
        )
    if isinstance(tokens, (str, bytes)):  # would be a set of characters
        raise ValueError(
            f'{name} must be "all" or a collection of special-token strings, not the string '
            f"{tokens!r} (write {{{tokens!r}}})"
        )
    try:
        names = frozenset(tokens)  # type: ignore[call-overload]
    except TypeError:
        raise TypeError(
            f'{name} must be "all" or a collection of strings, got {type(tokens).__name__}'
        ) from None
    # (tiktoken raises for an item that is no str; {5} or {b"<|endoftext|>"} was ignored here)
    bad = _first_non_str(names)
    if bad is not None:
        raise TypeError(
            f'{name} must be "all" or a collection of special-token strings; it holds '
            f"{bad[0]!r}, a {type(bad[0]).__name__}"
        )
    return names


@functools.lru_cache(maxsize=64)
def _first_non_str(names: frozenset[object]) -> tuple[object] | None:
    """The first item of ``names`` that is no ``str`` (in a tuple), or None. Cached: a
    thousand allowed names given again as the same frozenset are checked once, not on every
    encode (a frozenset keeps its hash)."""
    return next(((t,) for t in names if not isinstance(t, str)), None)


def _read_once(
    allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial
) -> tuple[AllowedSpecial, DisallowedSpecial]:
    """The policies, those given as one-shot iterators (a generator, ``iter(...)``) read into
    sets: every encode method reads them more than once (QA: ``disallowed_special=iter(...)``
    was found empty by the second read, and the text it was to refuse was encoded)."""
    if isinstance(allowed_special, Iterator):
        allowed_special = _token_set("allowed_special", allowed_special)
    if isinstance(disallowed_special, Iterator):
        disallowed_special = _token_set("disallowed_special", disallowed_special)
    return allowed_special, disallowed_special


def _special_bytes(s: object) -> bytes:
    """The UTF-8 of the special token ``s``: a non-empty ``str`` without lone surrogates.
    Another type is a ``TypeError``, ``""`` a ``ValueError`` (as ``bytepair.train`` says)."""
    if not isinstance(s, str) or not s:
        # (5 or b"<s>" was a ValueError, where train said TypeError)
        error = TypeError if not isinstance(s, str) else ValueError
        raise error(f"special tokens must be non-empty strings, got {s!r}")
    try:
        return s.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: no bytes to match in any text
        raise ValueError(f"special token {s!r} is not valid Unicode text") from None


def _given_special_ids(
    vocab: dict[int, bytes], special_tokens: Mapping[str, int]
) -> dict[str, int]:
    """Special tokens with the ids given (``{token: id}``), added to ``vocab`` (changed).

    As ``bytepair.load`` of a rank file and ``Encoding`` take them: an id no token has is the
    special token's own (after the vocabulary, as cl100k_base's ``<|endoftext|>`` = 100257,
    or in a hole, as p50k_base's = 50256); an id of ``vocab`` must hold the token's own bytes
    (``{"\\n": 10}``: the byte stays an ordinary token too). Any other id is refused: it
    would silently take another token's place.
    """
    specials: dict[str, int] = {}
    for s, given in special_tokens.items():
        b = _special_bytes(s)
        i = integer(given)
        if i is None:
            raise TypeError(f"special token {s!r}: its id must be an int, got {given!r}")
        if not 0 <= i < 2**32:
            raise ValueError(
                f"special token {s!r} has id {i}, out of range: ids are 0 <= id < 2**32"
            )
        held = vocab.setdefault(i, b)
        if held != b:
            other = next((t for t, j in specials.items() if j == i), None)
            whose = f"special token {other!r}" if other is not None else f"the token {held!r}"
            raise ValueError(f"special token {s!r} has id {i}, which is the id of {whose}")
        specials[s] = i
    return specials


def _numpy_ids_as_bytes(ids: object) -> bytes | None:
    """The ids of a one-dimensional numpy array of integers as little-endian uint32 bytes,
    if every id fits in 32 bits; else None (the general way reads them one by one and names
    a bad id). Read one by one, 2.5M ids of an array took 0.17 s with the GIL held; as bytes,
    a few milliseconds. numpy is not imported for it: an array exists only if it was.
    """
    np = sys.modules.get("numpy")
    # (an ndarray itself: a masked array's tolist() holds None where its data holds ids)
    if np is None or not isinstance(ids, np.ndarray) or type(ids) is not np.ndarray:
        return None
    if ids.ndim != 1 or ids.dtype.kind not in "iu":
        return None
    # (unsigned of 4 bytes or fewer, as encode_to_numpy's: every value fits, no pass needed)
    if not (ids.dtype.kind == "u" and ids.dtype.itemsize <= 4):
        if ids.size and not 0 <= ids.min() <= ids.max() < 2**32:
            return None
    return ids.astype("<u4", copy=False).tobytes()


def _refuse_non_sequence(name: str, ids: object) -> None:
    """After the core refused ``ids`` with a ``TypeError``: raises the one that names
    ``name`` if ``ids`` itself is no sequence (what ``PySequence_Check``, pyo3's test,
    refuses: a dict, or a type without ``__getitem__``), or one integer (numpy's scalars
    and 0-d arrays have ``__getitem__``). Otherwise an item was to blame and the caller
    re-raises the core's error, which names that item's type. Only the failure path pays
    for this check."""
    if (
        is_text(ids)
        or isinstance(ids, dict)
        or not hasattr(type(ids), "__getitem__")
        or integer(ids) is not None
    ):
        raise not_ids(name, ids, "a sequence") from None


def _check_bytes(i: object, b: object) -> bytes:
    if not isinstance(b, (bytes, bytearray, memoryview)):
        raise TypeError(f"vocab[{i!r}] must be bytes, got {type(b).__name__}")
    return bytes(b)


def _check_threads(num_threads: object) -> int | None:
    if num_threads is None:
        return None
    what = "a number of threads (an int >= 0, not a bool; 0 or None: every CPU)"
    n = count_option("num_threads", num_threads, 0, what=what)
    return min(n, 1 << 16)  # an upper bound; the core caps it further


def _check_id(i: object) -> int:
    """A token id must be an integer (of any type, numpy's too; not a bool) in [0, 2**32)
    (ids are 32-bit in the core, as in tiktoken): a ``TypeError`` for another type (it was a
    ``ValueError``, as for a value out of range), a ``ValueError`` out of range."""
    n = integer(i)
    if n is None:
        raise TypeError(f"vocab ids must be ints, got {i!r} ({type(i).__name__})")
    if not 0 <= n < 2**32:
        raise ValueError(f"token id {n} is out of range: ids are 0 <= id < 2**32")
    return n


_SETS = (frozenset, set)


def _default_policy(allowed_special: AllowedSpecial, disallowed_special: DisallowedSpecial) -> bool:
    """Whether the policy is tiktoken's default: every special token disallowed, none allowed."""
    return disallowed_special == "all" and type(allowed_special) in _SETS and not allowed_special


class _Refused:
    """A search for strings whose text ``encode`` refuses (see ``Tokenizer._foreign``)."""

    def __init__(self, names: frozenset[str]) -> None:
        # (longest first where several start at one place)
        ordered = sorted(names, key=lambda n: (-len(n), n))
        self.search = re.compile("|".join(map(re.escape, ordered)))
        # how much of a text's end a string that goes on in the next text can hold
        self.overlap = max(map(len, names)) - 1


@functools.lru_cache(maxsize=64)
def _search_for(names: frozenset[str]) -> _Refused | None:
    return _Refused(names) if names else None


def _refuse_foreign(refused: _Refused | None, text: str, where: str | None = None) -> None:
    if refused is not None and (m := refused.search.search(text)) is not None:
        raise _disallowed_error(m.group(), where)


def _refuse_foreign_in(refused: _Refused, seen: str, chunks: list[str]) -> str:
    """Searches the end of the text searched before (``seen``) and the ``chunks`` after
    it; returns the new end to keep (a string may go on in the next chunk)."""
    text = seen + "".join(chunks)
    _refuse_foreign(refused, text)
    return text[max(0, len(text) - refused.overlap) :]


def _disallowed_error(token: str, where: str | None = None) -> ValueError:
    """tiktoken's error for a disallowed special token; ``where``: the text of a batch that
    holds it (``"texts[3]"``)."""
    return ValueError(
        # the first line is tiktoken's, word for word (code written for tiktoken matches it)
        f"Encountered text corresponding to disallowed special token {token!r}.\n"
        + (f"It is in {where}.\n" if where else "")
        + f"To encode it as its special-token id, pass "
        f"allowed_special={{{token!r}}} (or allowed_special='all').\n"
        f"To encode it as ordinary text, pass disallowed_special=() "
        f"(or use encode_ordinary)."
    )


def _clean(text: str) -> str:
    """``text`` with lone surrogates fixed as tiktoken does (see ``_fix_surrogates``)."""
    return text if _is_utf8_clean(text) else _fix_surrogates(text)


def _fix_surrogates(text: str) -> str:
    # tiktoken's fix: a surrogate pair written as two escapes becomes its character, a lone
    # surrogate becomes U+FFFD.
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _is_utf8_clean(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
