"""``encode_with_unstable``: the stable ids of a prefix of a text, and every way it may go on.

A prompt's last pre-token may still grow when the text is continued ("hello fan" may become
"hello fanta"), so its ids are not final. tiktoken's ``Encoding.encode_with_unstable`` splits
the ids into the stable ones and a set of id sequences that can follow them; this module
gives the same answer with the same rules (tiktoken's ``_encode_unstable_native``):

1. The ids of the last pre-token are unstable; so are the all-whitespace ids before them
   when the last pre-token begins with one (a newline added later may merge with them).
2. Their bytes ``u`` may be the start of a single token: every token beginning with ``u``.
3. Or a token may straddle the end of ``u``: for each split ``u = p + s`` (``p`` non-empty)
   and each token ``t`` beginning with ``s``, the ids of ``p + t`` encoded as text (as one
   pre-token if ``p + t`` is not UTF-8), up to the first id that covers ``u``.
4. If ``u`` ends in a whitespace character after something else, ``u`` may also split
   before it: the two parts encoded separately.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .tokenizer import AllowedSpecial, DisallowedSpecial, Tokenizer

_SPACE_BYTES = frozenset(b" \n\t")


def encode_with_unstable(
    tok: Tokenizer,
    text: str,
    allowed_special: AllowedSpecial,
    disallowed_special: DisallowedSpecial,
) -> tuple[list[int], list[list[int]]]:
    """See ``Tokenizer.encode_with_unstable``."""
    from .tokenizer import _clean

    ids = tok.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
    text = _clean(text)
    allowed, _ = tok._policy(allowed_special, disallowed_special)
    n = _last_piece_ids(tok, text, allowed)
    specials = set(tok._special_tokens.values())

    def all_space(i: int) -> bool:
        return i not in specials and set(tok.decode_single_token_bytes(i)) <= _SPACE_BYTES

    if n and all_space(ids[-n]):
        while n < len(ids) and all_space(ids[-n - 1]):
            n += 1
    stable = ids[: len(ids) - n]
    unstable = tok.decode_bytes(ids[len(ids) - n :])
    if not unstable:
        return stable, []
    tokens, token_ids, longest = _sorted_tokens(tok)
    completions: set[tuple[int, ...]] = set()
    for k in _starting_with(tokens, unstable):
        completions.add((token_ids[k],))
    # a token can begin with the suffix only if the suffix is no longer than the longest token
    for i in range(max(1, len(unstable) - longest), len(unstable)):
        prefix, suffix = unstable[:i], unstable[i:]
        for k in _starting_with(tokens, suffix):
            completions.add(_covering(tok, prefix + tokens[k], len(unstable)))
    last = _last_char(unstable)
    if last is not None and _is_whitespace(last):
        split = len(unstable) - len(last.encode("utf-8"))
        if split > 0:
            head, tail = unstable[:split], unstable[split:]
            completions.add(tuple(tok._core.encode_piece(head) + tok._core.encode_piece(tail)))
    return stable, [list(c) for c in completions]


def _last_piece_ids(tok: Tokenizer, text: str, allowed: frozenset[str]) -> int:
    """How many ids the last pre-token of ``text`` has (0 if it ends in a special token)."""
    start = 0
    if allowed:
        # leftmost, longest first: as encoding finds them
        names = sorted(allowed, key=len, reverse=True)
        for m in re.finditer("|".join(map(re.escape, names)), text):
            start = m.end()
    # split by the encoder itself: Python's `regex` may know a newer Unicode
    last = tok._core.last_pretoken(text[start:])
    return 0 if last is None else len(tok._core.encode_piece(last))


def _sorted_tokens(tok: Tokenizer) -> tuple[list[bytes], list[int], int]:
    """The ordinary tokens' bytes in byte order, their ids, and the longest one's length
    (cached on ``tok``)."""
    cached = tok.__dict__.get("_unstable_tokens")
    if cached is None:
        specials = set(tok._special_tokens.values())
        pairs = sorted((b, i) for i, b in tok._core.tokens() if i not in specials)
        tokens = [b for b, _ in pairs]
        cached = (tokens, [i for _, i in pairs], max(map(len, tokens), default=0))
        tok.__dict__["_unstable_tokens"] = cached
    return cached


def _starting_with(tokens: list[bytes], prefix: bytes) -> range:
    """Indices of the sorted ``tokens`` that begin with ``prefix``."""
    lo = bisect_left(tokens, prefix)
    hi = lo
    while hi < len(tokens) and tokens[hi].startswith(prefix):
        hi += 1
    return range(lo, hi)


def _covering(tok: Tokenizer, possibility: bytes, length: int) -> tuple[int, ...]:
    """The ids of ``possibility`` up to the first one reaching ``length`` bytes."""
    try:
        ids = tok.encode_ordinary(possibility.decode("utf-8"))
    except UnicodeDecodeError:
        ids = tok._core.encode_piece(possibility)
    seq: list[int] = []
    covered = 0
    for i in ids:
        seq.append(i)
        covered += len(tok.decode_single_token_bytes(i))
        if covered >= length:
            break
    return tuple(seq)


def _last_char(data: bytes) -> str | None:
    """The character ``data`` ends with, if its last bytes are valid UTF-8."""
    for size in range(1, min(4, len(data)) + 1):
        if data[-size] & 0xC0 != 0x80:  # the first byte of a character
            try:
                return data[-size:].decode("utf-8")
            except UnicodeDecodeError:
                return None
    return None


def _is_whitespace(c: str) -> bool:
    # Unicode White_Space (Rust's char::is_whitespace); str.isspace adds U+001C..U+001F
    return c.isspace() and not "\x1c" <= c <= "\x1f"
