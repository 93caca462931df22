"""bytepair.reference: byte-level BPE in a few hundred lines of plain Python.

This package is the test oracle for bytepair's Rust core, and a place to learn how BPE works.
Read the modules in this order: ``pretokenize``, ``train``, ``encode``.

What BPE does
-------------
Byte pair encoding turns text into a list of integer ids. It starts with one token per byte
(ids 0..255, so any text at all can be encoded) and learns bigger tokens from a corpus:

1. Pre-tokenize: cut the text into words with a regex (``"low lower"`` -> ``"low"``,
   ``" lower"``), so tokens never span two words. Special tokens such as ``<|endoftext|>``
   are cut out first and kept whole.
2. Train: count every adjacent pair of tokens in all the words, turn the most frequent pair
   into a new token (a "merge"), and repeat until the vocabulary has the size asked for.
3. Encode new text: cut it the same way, then inside each word apply the learned merges,
   earliest learned first, until none applies.
4. Decode: concatenate the bytes of the tokens.

Example::

    >>> from bytepair.reference import ReferenceTokenizer, train_bpe
    >>> vocab, merges = train_bpe("low low lower lowest", vocab_size=259)
    >>> merges  # "ow" and "lo" both occur 4 times; the tie goes to the greater pair
    [(b'o', b'w'), (b'l', b'ow'), (b' ', b'low')]
    >>> tok = ReferenceTokenizer(vocab, merges)
    >>> tok.encode("low lowest")
    [257, 258, 101, 115, 116]
    >>> tok.decode([257, 258, 101, 115, 116])
    'low lowest'

The exact rules (ids, tie-breaks, special tokens) are in the README ("The rules"). This
code favours being obviously right over being fast: it trains on about a megabyte of text
in seconds.
"""

from .encode import ReferenceTokenizer, encode
from .gpt2_bytes import bytes_to_unicode, str_to_token, token_to_str, unicode_to_bytes
from .pretokenize import (
    CL100K_PATTERN,
    GPT2_PATTERN,
    O200K_PATTERN,
    PATTERNS,
    pretokenize,
    resolve_pattern,
    split_special,
)
from .train import (
    count_pretokens,
    merge_loop,
    merge_word,
    train_bpe,
    train_bpe_continue,
    train_bpe_file,
)

__all__ = [
    "CL100K_PATTERN",
    "GPT2_PATTERN",
    "O200K_PATTERN",
    "PATTERNS",
    "ReferenceTokenizer",
    "bytes_to_unicode",
    "count_pretokens",
    "encode",
    "merge_loop",
    "merge_word",
    "pretokenize",
    "resolve_pattern",
    "split_special",
    "str_to_token",
    "token_to_str",
    "train_bpe",
    "train_bpe_continue",
    "train_bpe_file",
    "unicode_to_bytes",
]
