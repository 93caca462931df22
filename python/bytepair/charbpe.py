"""Character-level BPE, exactly as the first course notes build it (before bytes).

bytepair itself is byte-level (README, "The rules"). This module keeps the older, character-level
system of the course notes this project grew from, so a student can run it, compare, and see
why byte-level BPE replaced it. The rules:

1. Pre-tokenize each sentence with ``\\w+(?:'\\w+)?|[^\\w\\s]``: words (with one inner
   apostrophe, ``don't``) and single punctuation characters. Whitespace is dropped, but a
   pre-token that follows whitespace gets the marker ``Ġ`` in front (``" the"`` -> ``Ġthe``).
   The first pre-token of a sentence has no marker.
2. Symbols are Unicode characters: ``Ġthe`` starts as ``Ġ t h e``.
3. Repeat ``num_merges`` times: count adjacent symbol pairs over all pre-tokens (weighted by
   how often the pre-token occurs), merge the most frequent pair everywhere. On a tie, the
   pair seen first in corpus order wins (what ``max`` over a dict filled in corpus order
   gives).
4. The vocabulary is every base character plus every merge product; ids follow the sorted
   order of the tokens. Files are JSON: ``{"merge_rules": [[a, b], ...], "vocab": {...}}``.

Its two limits, which byte-level BPE removes (docs/teaching.md shows both):

* a character never seen in training cannot be encoded at all (``ValueError``), where bytes
  cover every string;
* whitespace is not kept: ``"a  b"``, ``"a\\tb"`` and ``"a b"`` all decode to ``"a b"``,
  where byte-level BPE gives back the input exactly.

>>> bpe = train(["low low lower lowest"], num_merges=2)
>>> bpe.merge_rules
[('l', 'o'), ('lo', 'w')]
>>> bpe.tokenize("lowest low")
['low', 'e', 's', 't', 'Ġ', 'low']
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Union

from ._checks import refuse_mapping
from .formats._io import check_path, write_atomic

__all__ = ["PATTERN", "SPACE_MARKER", "CharBPE", "pretokenize", "train"]

PATTERN = r"\w+(?:'\w+)?|[^\w\s]"
"""The pre-tokenization regex of the course notes (Python ``re`` syntax, Unicode ``\\w``)."""

SPACE_MARKER = "Ġ"
"""Put in front of a pre-token that follows whitespace (GPT-2's symbol for a space)."""

_PRETOKEN = re.compile(PATTERN)

Pair = tuple[str, str]
PathLike = Union[str, "os.PathLike[str]"]


def pretokenize(text: str) -> list[str]:
    """Cuts one sentence into pre-tokens, marking those that follow whitespace.

    >>> pretokenize("Don't panic,  Arthur!")
    ["Don't", 'Ġpanic', ',', 'ĠArthur', '!']
    """
    out = []
    for m in _PRETOKEN.finditer(text):
        start = m.start()
        after_space = start > 0 and text[start - 1].isspace()
        out.append(SPACE_MARKER + m.group() if after_space else m.group())
    return out


def train(sentences: Iterable[str], num_merges: int) -> CharBPE:
    """Learns ``num_merges`` merge rules from sentences (rules 1-4 of the module docstring).

    Args:
        sentences: the corpus, one sentence per string (each is pre-tokenized on its own, so
            its first word gets no ``Ġ``).
        num_merges: merges to learn; training stops early when no pair is left.

    Returns:
        the trained ``CharBPE``.

    Raises:
        TypeError: ``num_merges`` is not an int; ``sentences`` is one ``str`` (not a list of
            them), a path, a dict (any mapping: its keys are not taken as the sentences),
            not iterable, or holds something that is not a ``str``.
        ValueError: ``num_merges`` is negative; the sentences hold no word (an empty
            corpus, or only whitespace).

    Pair counts are kept up to date incrementally: a merge only recounts the pre-tokens that
    contain the merged pair (``where`` maps each pair to them), not the whole corpus.
    """
    num_merges = _check_num_merges(num_merges)
    # pre-token -> count, in order of first appearance (dicts keep insertion order)
    counts: Counter[str] = Counter()
    for n, sentence in enumerate(_check_sentences(sentences)):
        if not isinstance(sentence, str):
            raise TypeError(f"sentence {n} is a {type(sentence).__name__}, not a str")
        counts.update(pretokenize(sentence))
    if not counts:
        raise ValueError("no words to learn from: the sentences are empty or only whitespace")
    words = [list(w) for w in counts]  # the current symbols of each distinct pre-token
    freqs = list(counts.values())
    base = {c for w in words for c in w}

    pair_counts: Counter[Pair] = Counter()
    where: dict[Pair, set[int]] = {}  # pair -> indices of the words that contain it
    for i, w in enumerate(words):
        for pair in zip(w, w[1:]):
            pair_counts[pair] += freqs[i]
            where.setdefault(pair, set()).add(i)

    merges: list[Pair] = []
    while len(merges) < num_merges and pair_counts:
        best = _most_frequent(pair_counts, where, words)
        merges.append(best)
        touched: set[Pair] = set()
        for i in sorted(where[best]):
            old = words[i]
            new = _merge(old, best)
            words[i] = new
            # take the word's old pairs out of the counts and put its new pairs in
            for pair in zip(old, old[1:]):
                pair_counts[pair] -= freqs[i]
            for pair in zip(new, new[1:]):
                pair_counts[pair] += freqs[i]
            for pair in set(zip(old, old[1:])) - set(zip(new, new[1:])):
                where[pair].discard(i)
                touched.add(pair)
            for pair in zip(new, new[1:]):
                where.setdefault(pair, set()).add(i)
        for pair in touched:  # pairs that no longer occur anywhere (``best`` among them)
            if not where[pair]:
                del pair_counts[pair], where[pair]
    return CharBPE(merges, _vocab(base, merges))


def _check_num_merges(num_merges: object) -> int:
    """An int >= 0 (numpy integers too; not a bool, a float or a str)."""
    n = None if isinstance(num_merges, bool) else getattr(num_merges, "__index__", None)
    if n is None:
        raise TypeError(f"num_merges must be an int, got {num_merges!r}")
    if n() < 0:
        raise ValueError(f"num_merges must be >= 0, got {num_merges}")
    return int(n())


def _check_sentences(sentences: object) -> Iterable[object]:
    """``sentences`` if it is an iterable of sentences, not one string or a path."""
    if isinstance(sentences, (str, bytes)):
        raise TypeError(
            "sentences must be an iterable of str, one per sentence, not one "
            f"{type(sentences).__name__} (write [text], or text.splitlines())"
        )
    if isinstance(sentences, os.PathLike):
        raise TypeError(
            f"sentences must be an iterable of str, not the path {os.fspath(sentences)!r} "
            "(read its lines first: Path(p).read_text(encoding='utf-8').splitlines())"
        )
    if not isinstance(sentences, Iterable):
        raise TypeError(f"sentences must be an iterable of str, got {type(sentences).__name__}")
    # (a Counter of sentences trained on each sentence once, its counts dropped)
    refuse_mapping("sentences", sentences, "an iterable of str")
    return sentences


def _most_frequent(
    pair_counts: Counter[Pair], where: dict[Pair, set[int]], words: list[list[str]]
) -> Pair:
    """The pair with the highest count; on a tie, the one that occurs first in the corpus.

    Words are numbered in order of first appearance, so a pair's first occurrence is at the
    smallest word index that contains it, at its leftmost position in that word.
    """
    top = max(pair_counts.values())
    tied = [p for p, n in pair_counts.items() if n == top]
    if len(tied) == 1:
        return tied[0]

    def first_seen(pair: Pair) -> tuple[int, int]:
        i = min(where[pair])
        w = words[i]
        return i, next(j for j in range(len(w) - 1) if (w[j], w[j + 1]) == pair)

    return min(tied, key=first_seen)


def _merge(symbols: list[str], pair: Pair) -> list[str]:
    """Replaces each occurrence of ``pair`` by its concatenation, left to right.

    >>> _merge(["a", "a", "a", "b"], ("a", "a"))
    ['aa', 'a', 'b']
    """
    out = []
    i = 0
    while i < len(symbols):
        if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == pair:
            out.append(symbols[i] + symbols[i + 1])
            i += 2
        else:
            out.append(symbols[i])
            i += 1
    return out


def _vocab(base: Iterable[str], merges: Iterable[Pair]) -> dict[str, int]:
    """Every base character and merge product, numbered in sorted order."""
    tokens = set(base) | {a + b for a, b in merges}
    return {t: i for i, t in enumerate(sorted(tokens))}


class CharBPE:
    """A trained character-level BPE: merge rules in learned order and a token -> id map.

    Args:
        merge_rules: (left, right) symbol pairs, in the order they were learned.
        vocab: token -> id; must contain both sides and the product of every rule.

    Raises:
        TypeError: ``vocab`` is not a dict of str -> int.
        ValueError: a merge rule is not a pair of strings or names a token missing from
            ``vocab``; two tokens share an id.
    """

    def __init__(self, merge_rules: Sequence[Pair], vocab: dict[str, int]) -> None:
        if not isinstance(vocab, dict):
            raise TypeError(f"vocab must be a dict of token -> id, got {type(vocab).__name__}")
        by_id: dict[int, str] = {}
        for t, i in vocab.items():
            if not isinstance(t, str) or isinstance(i, bool) or not isinstance(i, int):
                raise TypeError(f"vocab must map str tokens to int ids, got {t!r}: {i!r}")
            if i in by_id:
                raise ValueError(f"vocab: tokens {by_id[i]!r} and {t!r} share the id {i}")
            by_id[i] = t
        rules = list(merge_rules)
        for r, rule in enumerate(rules):
            if not (
                isinstance(rule, (tuple, list))
                and len(rule) == 2
                and all(isinstance(x, str) and x for x in rule)
            ):
                raise ValueError(
                    f"merge rule {r} must be a (left, right) pair of str, got {rule!r}"
                )
        self.merge_rules = [(a, b) for a, b in rules]
        self.vocab = dict(vocab)
        self.id_to_token = by_id
        self._rank = {pair: r for r, pair in reversed(list(enumerate(self.merge_rules)))}
        for r, (a, b) in enumerate(self.merge_rules):
            for token in (a, b, a + b):
                if token not in self.vocab:
                    raise ValueError(f"merge rule {r} ({a!r}, {b!r}): {token!r} is not in vocab")

    def tokenize(self, text: str) -> list[str]:
        """The tokens of ``text`` (as strings, ``Ġ`` marking a preceding space).

        Within each pre-token the merge rules apply in the order learned: the applicable rule
        learned first merges first (leftmost occurrence first), until none applies.

        Raises:
            ValueError: ``text`` has a character that was never seen in training.
        """
        tokens: list[str] = []
        for word in pretokenize(text):
            for c in word:
                if c not in self.vocab:
                    raise ValueError(
                        f"cannot encode {c!r} (U+{ord(c):04X}) in {word!r}: character-level "
                        "BPE only knows the characters of its training corpus"
                    )
            tokens += self._apply_merges(list(word))
        return tokens

    def _apply_merges(self, symbols: list[str]) -> list[str]:
        while len(symbols) > 1:
            ranked = [(self._rank.get(p, len(self._rank)), p) for p in zip(symbols, symbols[1:])]
            rank, pair = min(ranked)
            if rank == len(self._rank):
                break
            symbols = _merge(symbols, pair)
        return symbols

    def encode(self, text: str) -> list[int]:
        """Token ids of ``text``.

        Raises:
            ValueError: ``text`` has a character that was never seen in training.

        >>> bpe = train(["low low lower lowest"], num_merges=2)
        >>> bpe.decode(bpe.encode("lower  low"))  # the two spaces come back as one
        'lower low'
        """
        return [self.vocab[t] for t in self.tokenize(text)]

    def decode(self, ids: Sequence[int]) -> str:
        """The text of ``ids``: tokens joined, each ``Ġ`` turned back into one space.

        Raises:
            KeyError: an id is not in the vocabulary.
        """
        try:
            text = "".join(self.id_to_token[i] for i in ids)
        except KeyError as e:
            raise KeyError(f"unknown token id {e.args[0]!r}") from None
        return text.replace(SPACE_MARKER, " ")

    def save(self, path: PathLike) -> None:
        """Writes ``{"merge_rules": [[a, b], ...], "vocab": {token: id}}`` as UTF-8 JSON,
        atomically (a temporary file renamed over ``path``), as ``Tokenizer.save`` does: an
        interrupted save leaves the old file or the new one, never half a file.

        Raises:
            IsADirectoryError: ``path`` is a folder.
            FileNotFoundError: the folder of ``path`` does not exist.
            OSError: the file cannot be written.
            TypeError: ``path`` is not a ``str`` or ``os.PathLike`` (bytes included).
        """
        path = check_path(path, "CharBPE.save takes the path to write")
        doc = {"merge_rules": [list(p) for p in self.merge_rules], "vocab": self.vocab}
        write_atomic(path, json.dumps(doc, ensure_ascii=False, indent=1))

    @classmethod
    def load(cls, path: PathLike) -> CharBPE:
        """Reads a file written by ``save``.

        Raises:
            OSError: the file cannot be read.
            ValueError: it is not valid JSON of that shape (names the file and the key).
        """
        path = check_path(path, "CharBPE.load takes the path of a file written by save")
        try:
            with open(path, encoding="utf-8") as f:
                doc = json.load(f)
        except ValueError as e:  # (bad JSON or UTF-8, or an int of over 4300 digits)
            raise ValueError(f"{path}: not a JSON file: {e}") from None
        if not isinstance(doc, dict) or set(doc) != {"merge_rules", "vocab"}:
            raise ValueError(f'{path}: expected an object with keys "merge_rules" and "vocab"')
        rules, vocab = doc["merge_rules"], doc["vocab"]
        if not isinstance(vocab, dict) or not all(
            isinstance(t, str) and type(i) is int for t, i in vocab.items()
        ):
            raise ValueError(f'{path}: "vocab" must map token strings to integer ids')
        if not isinstance(rules, list):
            raise ValueError(f'{path}: "merge_rules" must be a list of [left, right] pairs')
        for n, rule in enumerate(rules):
            if not (
                isinstance(rule, list) and len(rule) == 2 and all(isinstance(s, str) for s in rule)
            ):
                raise ValueError(f'{path}: "merge_rules"[{n}] is {rule!r}, not [left, right]')
        try:
            return cls([(a, b) for a, b in rules], vocab)
        except ValueError as e:
            raise ValueError(f"{path}: {e}") from None

    def __repr__(self) -> str:
        return f"<CharBPE {len(self.vocab)} tokens, {len(self.merge_rules)} merge rules>"
