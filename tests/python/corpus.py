"""The shared corpora as test inputs, text strategies that break tokenizers, and comparison
helpers that report the first difference instead of a huge diff."""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

BIG_FILES = ["corpora/english_gutenberg.txt", "corpora/python_stdlib.txt"]
SMALL_FILES = [
    "corpora/multilingual/ar.txt",
    "corpora/multilingual/emoji-test.txt",
    "corpora/multilingual/emoji_cldr.txt",
    "corpora/multilingual/hi.txt",
    "corpora/multilingual/ja.txt",
    "corpora/multilingual/ru.manifest.txt",
    "corpora/multilingual/ru.txt",
    "corpora/multilingual/zh.txt",
    "en_ewt/LICENSE.txt",
    "en_ewt/en_ewt.dev.txt",
    "en_ewt/en_ewt.test.txt",
    "en_ewt/en_ewt.train.txt",
    "cs336/address.txt",
    "cs336/corpus.en",
    "cs336/german.txt",
    "cs336/special_token_double_newlines_non_whitespace.txt",
    "cs336/special_token_trailing_newlines.txt",
    "cs336/tinystories_sample.txt",
    "cs336/train-bpe-reference-merges.txt",
]
ALL_FILES = BIG_FILES + SMALL_FILES
BIG_CHARS = int(float(os.environ.get("BYTEPAIR_BIG_MB", "6")) * 1_000_000)

# pieces of text that tend to break tokenizers: emoji (ZWJ, flags, skin tones), CJK, combining
# marks, CRLF, NUL, unusual whitespace, contractions, digit runs, "/" (o200k), "<|" and "|>"
ATOMS = [
    "😀",
    "👨‍👩‍👧",
    "🇯🇵",
    "👍🏽",
    "日本語",
    "中文",
    "한국어",
    "Ünïcödé",
    "e\u0301",
    "\r\n",
    "\r",
    "\n",
    "\n\n\n",
    "\x00",
    "\t",
    " ",
    "   ",
    " " * 40,
    "\x0b\x0c",
    "\x85",
    "\u00a0",
    "\u2028",
    "\u3000",
    "\u200b",
    "\ufeff",
    "\x1c",
    "'s",
    "'ll",
    "'S",
    "Hello",
    " world",
    "x",
    "123456789",
    " 42",
    "!",
    "...",
    "/",
    "//",
    "<|",
    "|>",
    "\U0010ffff",
    "\ufffd",
]
atom_text = st.lists(st.one_of(st.sampled_from(ATOMS), st.text(max_size=4)), max_size=40).map(
    "".join
)
whitespace_text = st.text(alphabet=" \t\n\r\x0b\x0c\x85\u00a0\u1680\u2028\u3000", max_size=300)
any_text = st.one_of(st.text(), atom_text, whitespace_text)


# ------------------------------------------------------------------------------ fixtures/helpers


@functools.cache
def read_text(path: Path) -> str:
    # newline="" keeps "\r\n" and lone "\r" exactly as in the file
    with open(path, encoding="utf-8", newline="") as f:
        return f.read()


def _line_start(text: str, pos: int) -> int:
    """The start of the line holding ``pos`` (so slices never cut a line)."""
    return 0 if pos <= 0 else text.rfind("\n", 0, pos) + 1


def corpus_slices(data_dir: Path, rel: str) -> tuple[str, str]:
    """(text whose lines are compared one by one, text encoded in one call)."""
    text = read_text(data_dir / rel)
    if rel not in BIG_FILES or BIG_CHARS <= 0 or len(text) <= 2 * BIG_CHARS:
        return text, text
    mid = _line_start(text, BIG_CHARS)
    end = _line_start(text, mid + BIG_CHARS)
    return text[:mid], text[mid:end]


def assert_all_equal(got: Sequence[Any], expected: Sequence[Any], inputs: Sequence[str]) -> None:
    """Equality of many results, reporting the first input that differs (not a huge diff)."""
    assert len(got) == len(expected) == len(inputs)
    for i, (g, e) in enumerate(zip(got, expected)):
        if g != e:
            pytest.fail(
                f"input #{i} {inputs[i][:300]!r} (len {len(inputs[i])}):\n"
                f"  expected {e[:60]}\n  got      {g[:60]}"
            )


def assert_ids_equal(got: list[int], expected: list[int]) -> None:
    """Equality of two long id lists, reporting where they first differ."""
    if got != expected:
        k = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), None)
        if k is None:
            k = min(len(got), len(expected))
        pytest.fail(
            f"ids differ at index {k} (lengths {len(got)} vs {len(expected)} expected):\n"
            f"  expected {expected[max(0, k - 5) : k + 10]}\n"
            f"  got      {got[max(0, k - 5) : k + 10]}"
        )
