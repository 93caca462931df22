"""GPT-2's reversible byte <-> unicode-character table.

GPT-2 stores its vocab.json and merges.txt as text, but tokens are arbitrary bytes: a token may
be a space, a control byte, or half of a UTF-8 character. So GPT-2 gives each of the 256 byte
values a printable stand-in character and writes tokens with those. Bytes that are already
printable and not a space stand for themselves; the other 68 (control bytes, space, DEL, NBSP,
soft hyphen, ...) are moved, in byte order, to U+0100, U+0101, ... . That is why a leading
space shows up as ``Ġ`` (U+0120, the stand-in of byte 32) and a newline as ``Ċ``.

Example::

    >>> token_to_str(b" the")
    'Ġthe'
    >>> str_to_token("Ġthe")
    b' the'
"""

from __future__ import annotations

from functools import cache


@cache
def bytes_to_unicode() -> dict[int, str]:
    """The GPT-2 table from byte value (0..255) to its stand-in character.

    Returns:
        A dict of 256 entries, byte value -> one-character ``str``; values are all distinct.
    """
    # these three ranges are printable and are kept as themselves
    printable = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(ord("¡"), ord("¬") + 1))
        + list(range(ord("®"), ord("ÿ") + 1))
    )
    table = {b: chr(b) for b in printable}
    # every other byte gets the next unused code point from 256 up, in byte order
    n = 0
    for b in range(256):
        if b not in table:
            table[b] = chr(256 + n)
            n += 1
    return dict(sorted(table.items()))


@cache
def unicode_to_bytes() -> dict[str, int]:
    """The inverse of ``bytes_to_unicode``: stand-in character -> byte value."""
    return {c: b for b, c in bytes_to_unicode().items()}


def token_to_str(token: bytes) -> str:
    """Write token bytes in GPT-2's alphabet, e.g. ``b" the"`` -> ``"Ġthe"``."""
    table = bytes_to_unicode()
    return "".join(table[b] for b in token)


def str_to_token(text: str) -> bytes:
    """Read a GPT-2-alphabet string back to bytes, e.g. ``"Ġthe"`` -> ``b" the"``.

    Raises:
        KeyError: if ``text`` has a character outside the GPT-2 alphabet.
    """
    table = unicode_to_bytes()
    try:
        return bytes(table[c] for c in text)
    except KeyError as e:
        raise KeyError(
            f"character {e.args[0]!r} of {text!r} is not in the GPT-2 alphabet"
        ) from None
