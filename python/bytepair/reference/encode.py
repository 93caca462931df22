"""Encoding and decoding with learned merges.

To encode a pre-token, start from its single bytes and keep merging the adjacent pair whose
merged bytes were learned earliest (the lowest "rank"), taking the leftmost pair among equals,
until no adjacent pair makes a learned token. This is tiktoken's rule; for a trained tokenizer
it gives the same result as replaying the merges in the order they were learned.

Worked example, with the merges learned from ``"low low lower lowest"`` (see ``train.py``):
ranks ``ow``=0, ``low``=1, `` low``=2, `` lowe``=3, ``st``=4, `` lowest``=5, `` lower``=6.
Encoding the pre-token `` slow`` (not in the vocab as a whole)::

    ␠ s l o w      candidate pairs: "ow" has rank 0, nothing else is a token
    ␠ s l ow       "low" has rank 1
    ␠ s low        "slow", " s" are no tokens: done -> ids [32, 115, 257]

Decoding is the easy direction: concatenate the bytes of the ids and decode them as UTF-8.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, Union

from .pretokenize import pretokenize, resolve_pattern, split_special

AllowedSpecial = Union[Literal["all"], Iterable[str]]


class ReferenceTokenizer:
    """A byte-level BPE tokenizer in plain Python: slow, small, and easy to check.

    Args:
        vocab: id -> token bytes. Must contain all 256 single bytes, the bytes of every merge
            (both halves and their concatenation) and every special token.
        merges: ``(left_bytes, right_bytes)`` pairs in the order they were learned; merge ``k``
            has rank ``k``.
        special_tokens: the special-token strings; each one's id is the id in ``vocab`` whose
            bytes are its UTF-8 encoding.
        pattern: pre-tokenizer preset name (``"gpt2"``, ``"cl100k"``, ``"o200k"``) or a regex.

    Raises:
        ValueError: if the vocab lacks a single byte, a merge's token or a special token.

    Example::

        >>> from bytepair.reference import train_bpe
        >>> vocab, merges = train_bpe("low low lower lowest", 300)
        >>> tok = ReferenceTokenizer(vocab, merges)
        >>> tok.encode("lowest slow")
        [257, 101, 260, 32, 115, 257]
        >>> tok.decode([257, 261])
        'low lowest'
    """

    def __init__(
        self,
        vocab: dict[int, bytes],
        merges: Iterable[tuple[bytes, bytes]],
        special_tokens: Iterable[str] = (),
        pattern: str = "gpt2",
    ) -> None:
        self.vocab: dict[int, bytes] = dict(vocab)
        self.merges: list[tuple[bytes, bytes]] = [(a, b) for a, b in merges]
        self.pattern: str = resolve_pattern(pattern)

        # special token string -> id, found by its bytes (the lowest id if there are several)
        self.special_tokens: dict[str, int] = {}
        for s in special_tokens:
            ids = [i for i, b in self.vocab.items() if b == s.encode("utf-8")]
            if not ids:
                raise ValueError(f"special token {s!r} is not in the vocab")
            self.special_tokens[s] = min(ids)
        special_ids = set(self.special_tokens.values())

        # bytes -> id for ordinary tokens. special ids are left out: ordinary text must never
        # turn into a special token. where several ids share bytes, the lowest id wins.
        self._ids: dict[bytes, int] = {}
        for i in sorted(self.vocab):
            if i not in special_ids:
                self._ids.setdefault(self.vocab[i], i)
        missing = [b for b in range(256) if bytes([b]) not in self._ids]
        if missing:
            raise ValueError(f"vocab lacks the single-byte tokens {missing[:10]} (and maybe more)")

        # bytes -> rank, where rank = index of the first merge producing those bytes
        self._ranks: dict[bytes, int] = {}
        for rank, (left, right) in enumerate(self.merges):
            for part in (left, right, left + right):
                if part not in self._ids:
                    raise ValueError(
                        f"merge {rank} {(left, right)!r}: {part!r} is not in the vocab"
                    )
            self._ranks.setdefault(left + right, rank)

    def _encode_piece(self, piece: bytes) -> list[int]:
        """Encode one pre-token's bytes; see the module docstring for the rule."""
        # a pre-token that is a token as a whole is that token: the vocab works as a cache
        if piece in self._ids:
            return [self._ids[piece]]
        parts = [bytes([b]) for b in piece]
        while len(parts) > 1:
            # find the adjacent pair with the lowest rank; strict < keeps the leftmost on a tie
            best_rank, best_i = None, None
            for i in range(len(parts) - 1):
                rank = self._ranks.get(parts[i] + parts[i + 1])
                if rank is not None and (best_rank is None or rank < best_rank):
                    best_rank, best_i = rank, i
            if best_i is None:
                break  # no adjacent pair forms a learned token
            parts[best_i : best_i + 2] = [parts[best_i] + parts[best_i + 1]]
        return [self._ids[p] for p in parts]

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode text, treating any special-token text as ordinary text.

        Example: with the tokenizer of the class docstring, ``encode_ordinary("low")`` is
        ``[257]``.
        """
        ids: list[int] = []
        for piece in pretokenize(text, self.pattern):
            ids.extend(self._encode_piece(piece.encode("utf-8")))
        return ids

    def encode(self, text: str, allowed_special: AllowedSpecial = frozenset()) -> list[int]:
        """Encode text; allowed special tokens map to their ids.

        Args:
            text: the text to encode.
            allowed_special: the special tokens to recognise, or ``"all"``. Only these are split
                off (longest first, see ``split_special``); the text of any other special
                token is encoded as ordinary text (the reference never raises for it).

        Returns:
            The token ids.

        Raises:
            TypeError: if ``allowed_special`` is a string other than ``"all"``.

        Example::

            >>> vocab = {i: bytes([i]) for i in range(256)} | {256: b"<|eot|>"}
            >>> tok = ReferenceTokenizer(vocab, [], special_tokens=["<|eot|>"])
            >>> tok.encode("a<|eot|>", allowed_special="all")
            [97, 256]
            >>> len(tok.encode("a<|eot|>"))  # not allowed: ordinary bytes
            8
        """
        if allowed_special == "all":
            allowed = set(self.special_tokens)
        elif isinstance(allowed_special, str):
            raise TypeError('allowed_special must be "all" or a collection of strings')
        else:
            # like tiktoken, names that are not special tokens of this tokenizer are ignored
            allowed = set(allowed_special) & set(self.special_tokens)
        ids: list[int] = []
        for span, is_special in split_special(text, allowed):
            if is_special:
                ids.append(self.special_tokens[span])
            else:
                ids.extend(self.encode_ordinary(span))
        return ids

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """Concatenate the bytes of the tokens.

        Raises:
            KeyError: for an id not in the vocab.
        """
        out = []
        for i in ids:
            if i not in self.vocab:
                raise KeyError(f"unknown token id {i}")
            out.append(self.vocab[i])
        return b"".join(out)

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """Decode ids to text; by default invalid UTF-8 becomes U+FFFD.

        A token may hold part of a UTF-8 character, so a slice of ids may not decode cleanly;
        ``errors`` is passed to ``bytes.decode`` (``"replace"``, ``"strict"``, ...).

        Raises:
            KeyError: for an id not in the vocab.
        """
        return self.decode_bytes(ids).decode("utf-8", errors=errors)


def encode(
    text: str,
    vocab: dict[int, bytes],
    merges: Iterable[tuple[bytes, bytes]],
    special_tokens: Iterable[str] = (),
    pattern: str = "gpt2",
    allowed_special: AllowedSpecial = frozenset(),
) -> list[int]:
    """One-shot ``ReferenceTokenizer(vocab, merges, special_tokens, pattern).encode(text, ...)``."""
    return ReferenceTokenizer(vocab, merges, special_tokens, pattern).encode(text, allowed_special)
