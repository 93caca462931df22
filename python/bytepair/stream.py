"""Decoding ids that arrive a few at a time.

A token may end in the middle of a UTF-8 character (byte-level BPE makes tokens of byte
sequences, not characters), so decoding each token on its own would print U+FFFD for the
halves of a character split between two tokens. The stream decoder keeps those bytes until
the character is complete, using Python's incremental UTF-8 decoder.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable
from typing import Callable

from ._checks import iter_ids

__all__ = ["StreamDecoder"]


class StreamDecoder:
    """Turns a stream of token ids into text, holding back incomplete UTF-8 characters.

    Made by ``Tokenizer.stream_decoder(errors)``. Not thread-safe: one per stream.

    Args:
        decode_bytes: ids -> bytes (``Tokenizer.decode_bytes``).
        errors: what to do with invalid UTF-8, as in ``bytes.decode``: ``"replace"`` (U+FFFD),
            ``"strict"`` (raise ``UnicodeDecodeError``), ``"ignore"``, ...
    """

    def __init__(self, decode_bytes: Callable[[list[int]], bytes], errors: str = "replace"):
        try:
            codecs.lookup_error(errors)
        except (LookupError, TypeError):
            raise ValueError(f"unknown errors handler {errors!r} (as in bytes.decode)") from None
        self._decode_bytes = decode_bytes
        self._utf8 = codecs.getincrementaldecoder("utf-8")(errors=errors)

    def decode(self, ids: Iterable[int]) -> str:
        """The text completed by ``ids`` (may be ``""`` while a character is incomplete).

        Raises:
            KeyError: an id is not in the vocabulary (the stream's state is unchanged).
            TypeError: ``ids`` is not an iterable of ints: one int, a ``str``, or bytes (as
                ``Tokenizer.decode`` refuses them: their values are no token ids).
        """
        # (decode(5) said "'int' object is not iterable"; b"ab" was decoded as ids 97, 98)
        return self._utf8.decode(self._decode_bytes(list(iter_ids("ids", ids))))

    def flush(self) -> str:
        """Ends the stream: returns what is held back, decoded with ``errors`` (an incomplete
        character becomes U+FFFD under ``"replace"``), and resets the decoder (also when
        ``"strict"`` raises ``UnicodeDecodeError``)."""
        try:
            return self._utf8.decode(b"", final=True)
        finally:
            self._utf8.reset()

    @property
    def pending(self) -> bytes:
        """The bytes held back: the start of a character still incomplete."""
        return self._utf8.getstate()[0]
