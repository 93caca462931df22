"""Pre-tokenization: cutting text into the pieces that BPE works inside.

BPE never merges across a pre-token boundary. Before any merging, text goes through two cuts:

1. ``split_special`` cuts out special tokens such as ``<|endoftext|>``. They are atoms: their
   text is never counted during training and never split during encoding.
2. ``pretokenize`` cuts each remaining span with a regex into words, numbers, punctuation runs
   and whitespace runs, the way GPT-2 / tiktoken do.

Example with the GPT-2 pattern::

    >>> split_special("hi<|endoftext|>you", ["<|endoftext|>"])
    [('hi', False), ('<|endoftext|>', True), ('you', False)]
    >>> pretokenize("Hello world, it's 2024!", GPT2_PATTERN)
    ['Hello', ' world', ',', ' it', "'s", ' 2024', '!']

Patterns use the syntax of the third-party ``regex`` module (``\\p{L}`` for letters,
possessive quantifiers such as ``++``), which the standard ``re`` module lacks.

One known difference from tiktoken (and bytepair's Rust core, which follow the Rust regex
crate): the ``regex`` module may ship newer Unicode tables, so a character assigned in a recent
Unicode version (U+10955, say) can be a letter here and not there. On such text this oracle
splits differently; tiktoken's ids are the rule (README, "The rules").
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

import regex

# the gpt-2 pattern (also used by r50k_base and p50k_base), written as tiktoken writes it.
# contractions, then letter runs, digit runs, punctuation runs (each with one optional leading
# space), then whitespace. `\s+(?!\S)` leaves the last space of a run for the next word, so
# "a  b" splits as ["a", " ", " b"].
GPT2_PATTERN = (
    r"""'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"""
)

# cl100k_base (gpt-3.5 / gpt-4): case-insensitive contractions, a word may start with one
# non-letter (e.g. "_foo"), numbers are cut into chunks of at most 3 digits, and newlines get
# their own pieces.
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|"""
    r""" ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)

# o200k_base (gpt-4o): words are split at case changes (so "HelloWorld" -> "Hello", "World")
# and keep a trailing contraction. built from parts exactly like tiktoken's openai_public.py.
O200K_PATTERN = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",  # noqa: E501
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",  # noqa: E501
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)

PATTERNS: dict[str, str] = {
    "gpt2": GPT2_PATTERN,
    "cl100k": CL100K_PATTERN,
    "o200k": O200K_PATTERN,
}


def resolve_pattern(name_or_regex: str) -> str:
    """Turn a preset name into its regex; any other string is taken to be a regex as-is.

    Args:
        name_or_regex: ``"gpt2"``, ``"cl100k"``, ``"o200k"``, or a regex in ``regex`` syntax.

    Returns:
        The regex source string.

    Example::

        >>> resolve_pattern("gpt2") == GPT2_PATTERN
        True
        >>> resolve_pattern(r"\\w+|\\s+")
        '\\\\w+|\\\\s+'
    """
    return PATTERNS.get(name_or_regex, name_or_regex)


@cache
def _compile(pattern: str) -> regex.Pattern:
    # compiling is far slower than matching, and the same few patterns are used over and over
    try:
        return regex.compile(pattern)
    except regex.error as e:
        raise ValueError(f"invalid pre-tokenizer pattern {pattern!r}: {e}") from e


@cache
def _special_regex(special_tokens: tuple[str, ...]) -> regex.Pattern:
    # an alternation tries its branches in order, so putting longer tokens first makes the
    # longest token win wherever several start at the same position; the regex search itself
    # supplies "leftmost".
    by_length = sorted(special_tokens, key=len, reverse=True)
    return regex.compile("|".join(regex.escape(s) for s in by_length))


def split_special(text: str, special_tokens: Iterable[str]) -> list[tuple[str, bool]]:
    """Split text into ordinary spans and special-token spans.

    Matching rule (README, "The rules"; as tiktoken): scan left to right, take the leftmost special
    token; where several start at the same position, the longest wins. Empty ordinary spans
    are left out, so ``""`` gives ``[]``.

    Args:
        text: the text to split (a ``str``; positions are in characters).
        special_tokens: the special-token strings to look for; empty means none.

    Returns:
        A list of ``(span, is_special)`` pairs whose spans concatenate back to ``text``.

    Example::

        >>> split_special("a<|eot|><|eot|>b", ["<|eot|>", "<|eot|><|eot|>"])
        [('a', False), ('<|eot|><|eot|>', True), ('b', False)]
        >>> split_special("no specials", [])
        [('no specials', False)]
    """
    specials = tuple(sorted(set(s for s in special_tokens if s)))
    if not specials:
        return [(text, False)] if text else []

    spans: list[tuple[str, bool]] = []
    start = 0
    for m in _special_regex(specials).finditer(text):
        if m.start() > start:
            spans.append((text[start : m.start()], False))
        spans.append((m.group(), True))
        start = m.end()
    if start < len(text):
        spans.append((text[start:], False))
    return spans


def pretokenize(text: str, pattern: str = GPT2_PATTERN) -> list[str]:
    """Cut a span of ordinary text into pre-tokens with a regex.

    Args:
        text: text that contains no special tokens (split those off first with
            ``split_special``).
        pattern: a preset name (``"gpt2"``, ``"cl100k"``, ``"o200k"``) or a regex.

    Returns:
        The matches of the pattern, left to right, empty ones left out (an empty match
        carries no bytes: no pre-token). For the preset patterns every character belongs
        to exactly one match, so ``"".join(pretokenize(t)) == t``.

    Raises:
        ValueError: if the pattern is not a valid regex.

    Example::

        >>> pretokenize("low low lower lowest")
        ['low', ' low', ' lower', ' lowest']
        >>> pretokenize("1234567", "cl100k")
        ['123', '456', '7']
    """
    # finditer rather than findall: findall returns the groups, not the whole match, when a
    # custom pattern has capturing groups
    # (QA: a custom pattern that can match empty text, `a*|.`, gave '' pre-tokens, which
    # count_pretokens counted as b'')
    return [m.group() for m in _compile(resolve_pattern(pattern)).finditer(text) if m.group()]
