"""Training: learn BPE merges from a corpus.

The recipe (README, "The rules"; the CS336 rules):

1. Cut the text on special tokens and throw their text away, then cut each remaining span into
   pre-tokens with the pattern, and count how often each pre-token occurs (as UTF-8 bytes).
2. Every pre-token starts as a sequence of single bytes, whose ids are the byte values 0..255.
3. Repeat until the vocabulary is full: find the adjacent pair of ids that occurs most often
   (each pre-token's pairs count as many times as the pre-token occurs), make it a new token,
   and replace it everywhere. On a tie in count, the pair whose bytes compare greatest wins.

Worked example on ``"low low lower lowest"`` (gpt2 pattern, no special tokens). The pre-tokens
are ``low``, `` low``, `` lower``, `` lowest``, once each (``␠`` is a space)::

    counts: (l,o)=4 (o,w)=4 (␠,l)=3 (w,e)=2 (e,r)=1 (e,s)=1 (s,t)=1
    merge 1: (o,w)        tie at 4 with (l,o); b"o" > b"l", so (o,w) wins   -> id 256 "ow"
    merge 2: (l,ow)       count 4                                          -> id 257 "low"
    merge 3: (␠,low)      count 3                                          -> id 258 " low"
    merge 4: (␠low,e)     count 2                                          -> id 259 " lowe"
    merge 5: (s,t)        three-way tie at 1; b"s" > b" lowe"               -> id 260 "st"
    merge 6: (␠lowe,st)   tie at 1 with (␠lowe,r); b"st" > b"r"             -> id 261 " lowest"
    merge 7: (␠lowe,r)    the last pair left                               -> id 262 " lower"

after which no pairs are left, so training stops at 263 tokens whatever ``vocab_size`` asked for.
"""

from __future__ import annotations

import os
from collections import Counter, defaultdict
from collections.abc import Iterable

from .._checks import refuse_mapping
from .pretokenize import pretokenize, split_special

Pair = tuple[int, int]


def count_pretokens(
    texts: Iterable[str], special_tokens: Iterable[str] = (), pattern: str = "gpt2"
) -> Counter[bytes]:
    """Count the pre-tokens of some texts, as UTF-8 bytes.

    Special-token text is cut out and not counted. Each text is split on its own, so no
    pre-token spans two texts.

    Example::

        >>> count_pretokens(["low low", "low"])
        Counter({b'low': 2, b' low': 1})
    """
    special_tokens = list(special_tokens)
    counts: Counter[str] = Counter()
    for text in texts:
        for span, is_special in split_special(text, special_tokens):
            if not is_special:
                counts.update(pretokenize(span, pattern))
    return Counter({piece.encode("utf-8"): n for piece, n in counts.items()})


def merge_word(ids: list[int], pair: Pair, new_id: int) -> list[int]:
    """Replace every occurrence of ``pair`` in ``ids`` by ``new_id``, left to right.

    Occurrences may not overlap: the scan takes the leftmost one and continues after it.

    Example::

        >>> merge_word([1, 2, 3, 1, 2], (1, 2), 9)
        [9, 3, 9]
        >>> merge_word([7, 7, 7], (7, 7), 9)  # only positions 0-1 merge
        [9, 7]
    """
    out = []
    i = 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def _pairs(ids: list[int]) -> list[Pair]:
    # the adjacent pairs of a word, with repeats: [1, 2, 1, 2] -> [(1, 2), (2, 1), (1, 2)]
    return list(zip(ids, ids[1:]))


def _is_a_file_name(text: object) -> bool:
    """Whether ``text`` is one short line that names an existing file."""
    if not isinstance(text, str) or len(text) > 4096 or "\n" in text:
        return False
    try:
        return os.path.isfile(text)
    except (OSError, ValueError):  # NUL bytes, names too long
        return False


def train_bpe(
    text_or_texts: str | Iterable[str],
    vocab_size: int,
    special_tokens: Iterable[str] = (),
    pattern: str = "gpt2",
    min_frequency: int = 0,
    max_token_length: int | None = None,
) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """Train a byte-level BPE tokenizer (README, "The rules"; same results as the CS336 reference).

    Args:
        text_or_texts: the corpus, either one ``str`` or an iterable of ``str`` (each is split
            and pre-tokenized on its own).
        vocab_size: the total number of tokens wanted: 256 single bytes + the special tokens +
            the merges. Training stops earlier if no adjacent pair is left to merge.
        special_tokens: special-token strings, given ids 256, 257, ... in this order. Their text
            is cut out of the corpus before counting.
        pattern: pre-tokenizer preset name (``"gpt2"``, ``"cl100k"``, ``"o200k"``) or a regex.
        min_frequency: stop as soon as the best pair occurs fewer times than this.
        max_token_length: never make a token longer than this many bytes: a pair whose
            merge would be longer is passed over (the next best pair is merged instead).

    Returns:
        ``(vocab, merges)``: ``vocab`` maps id -> token bytes (ids 0..255 are the bytes,
        then the special tokens, then one id per merge); ``merges`` lists the learned merges
        in order as ``(left_bytes, right_bytes)``, and merge ``k`` created id
        ``256 + len(special_tokens) + k``.

    Raises:
        ValueError: if ``vocab_size < 256 + len(special_tokens)``, a special token is empty or
            repeated, or the pattern is not a valid regex.

    Example::

        >>> vocab, merges = train_bpe("low low lower lowest", vocab_size=259)
        >>> merges
        [(b'o', b'w'), (b'l', b'ow'), (b' ', b'low')]
        >>> vocab[258]
        b' low'
    """
    special_tokens = list(special_tokens)
    if any(not s for s in special_tokens):
        raise ValueError("special tokens must be non-empty strings")
    if len(set(special_tokens)) != len(special_tokens):
        raise ValueError(f"special tokens must be distinct, got {special_tokens!r}")
    if vocab_size < 256 + len(special_tokens):
        raise ValueError(
            f"vocab_size={vocab_size} is too small: it must be at least 256 (single bytes) + "
            f"{len(special_tokens)} (special tokens) = {256 + len(special_tokens)}"
        )
    texts = _texts(text_or_texts)

    # ids 0..255 are the single bytes, then the special tokens in the order given
    vocab: dict[int, bytes] = {b: bytes([b]) for b in range(256)}
    for s in special_tokens:
        vocab[len(vocab)] = s.encode("utf-8")

    # 1. count pre-tokens. a pre-token that occurs 1000 times is stored once, with its count:
    # words[i] is its current list of ids and freqs[i] how often it occurs. the bytes of a
    # pre-token are already its ids, since byte b has id b.
    pretoken_counts = count_pretokens(texts, special_tokens, pattern)
    words: list[list[int]] = [list(piece) for piece in pretoken_counts]
    freqs: list[int] = list(pretoken_counts.values())
    merges = merge_loop(words, freqs, vocab, vocab_size, min_frequency, max_token_length)
    return vocab, merges


def _texts(text_or_texts: str | Iterable[str]) -> Iterable[str]:
    """The texts of ``train_bpe``'s first argument: one ``str``, or an iterable of them.

    Raises:
        TypeError: a file name or path (``train_bpe_file`` reads files), or a dict (its keys
            would be trained on and its counts dropped).
    """
    if isinstance(text_or_texts, os.PathLike) or _is_a_file_name(text_or_texts):
        # bytepair.train_bpe takes a path and this one text: name the mix-up, do not train
        # on the 20 characters of a file name
        name = os.fspath(text_or_texts)  # type: ignore[arg-type]
        raise TypeError(
            f"train_bpe takes the corpus text, and {name!r} is the name "
            "of a file: pass its text, or use train_bpe_file(path)"
        )
    refuse_mapping(
        "text_or_texts",
        text_or_texts,
        "a str or an iterable of str",
        "for counts you already have (pre-token -> count), train with bytepair.train_from_counts",
    )
    return [text_or_texts] if isinstance(text_or_texts, str) else text_or_texts


def merge_loop(
    words: list[list[int]],
    freqs: list[int],
    vocab: dict[int, bytes],
    vocab_size: int,
    min_frequency: int = 0,
    max_token_length: int | None = None,
) -> list[tuple[bytes, bytes]]:
    """Steps 2 and 3 of the recipe: merge the best pair of ``words`` over and over.

    ``vocab`` (id -> bytes) gets one new id per merge, after its largest id, until the
    largest id is ``vocab_size - 1``; ``words`` are updated in place. Returns the merges.
    """
    merges: list[tuple[bytes, bytes]] = []

    # 2. count adjacent pairs, weighted by frequency, and remember which words hold each pair
    # so that a merge only needs to look at those words
    pair_counts: dict[Pair, int] = defaultdict(int)
    where: dict[Pair, set[int]] = defaultdict(set)
    for i, (word, freq) in enumerate(zip(words, freqs)):
        for pair in _pairs(word):
            pair_counts[pair] += freq
            where[pair].add(i)

    def fits(p: Pair) -> bool:
        return max_token_length is None or len(vocab[p[0]]) + len(vocab[p[1]]) <= max_token_length

    # 3. merge the best pair, over and over
    new_id = max(vocab) + 1
    while new_id < vocab_size:
        candidates = [p for p in pair_counts if fits(p)]
        if not candidates:
            break
        # highest count first; on a tie, the greatest (left bytes, right bytes). a plain max()
        # over all pairs is slow-ish but obviously right, which is the point of this module
        best = max(candidates, key=lambda p: (pair_counts[p], vocab[p[0]], vocab[p[1]]))
        if pair_counts[best] < min_frequency:
            break
        vocab[new_id] = vocab[best[0]] + vocab[best[1]]
        merges.append((vocab[best[0]], vocab[best[1]]))

        # update only the words that contain the pair: take away all of a word's old pairs,
        # add all of its new pairs. (the merged pair itself ends at count 0, since left-to-right
        # replacement leaves no occurrence of it behind.)
        for i in sorted(where.pop(best)):
            old, freq = words[i], freqs[i]
            new = merge_word(old, best, new_id)
            words[i] = new
            old_pairs, new_pairs = _pairs(old), _pairs(new)
            for pair in old_pairs:
                pair_counts[pair] -= freq
            for pair in new_pairs:
                pair_counts[pair] += freq
            for pair in set(old_pairs) - set(new_pairs):
                # this word no longer holds the pair; forget pairs that occur nowhere now
                if pair in where:
                    where[pair].discard(i)
                    if not where[pair]:
                        del where[pair]
                if pair_counts[pair] == 0:
                    del pair_counts[pair]
            for pair in new_pairs:
                where[pair].add(i)
        new_id += 1
    return merges


def train_bpe_continue(
    vocab: dict[int, bytes],
    merges: Iterable[tuple[bytes, bytes]],
    text_or_texts: str | Iterable[str],
    vocab_size: int,
    special_tokens: Iterable[str] = (),
    pattern: str = "gpt2",
    min_frequency: int = 0,
    max_token_length: int | None = None,
) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """Continued training: extend a tokenizer with merges learned on new text.

    The rule: count the pre-tokens of the new text as ``train_bpe`` does (same pattern and
    special tokens as the tokenizer); turn each pre-token into the ids the existing tokenizer
    gives it (``ReferenceTokenizer`` encoding: lowest-rank merge first); then run the merge
    loop of ``train_bpe`` on those id sequences, with the same tie rule, giving each new token
    the id after the current largest. Every existing id and merge is kept as it was; the new
    merges come after the old ones, so encoding text that the old merges cover is unchanged
    up to where new merges apply. As in ordinary training, a merge may give bytes that are
    already a token (reached by another split); it still gets a new id, and encoding uses the
    lowest id for those bytes. Continuing on the corpus a tokenizer was trained on gives the
    merges of training longer in one go.

    Args:
        vocab, merges: the existing tokenizer (any ids; every single byte must be a token).
        text_or_texts, special_tokens, pattern, min_frequency, max_token_length: as
            ``train_bpe``; ``special_tokens`` must be the tokenizer's own.
        vocab_size: the total size wanted, ``max(vocab) + 1 + new merges``.

    Returns:
        ``(vocab, merges)``: the old ones extended.

    Example::

        >>> vocab, merges = train_bpe("low low lower lowest", 258)
        >>> vocab, merges = train_bpe_continue(vocab, merges, "newest newer", 260)
        >>> merges
        [(b'o', b'w'), (b'l', b'ow'), (b'w', b'e'), (b'n', b'e')]
    """
    from .encode import ReferenceTokenizer

    special_tokens = list(special_tokens)
    base = ReferenceTokenizer(vocab, merges, special_tokens, pattern)
    if vocab_size < max(vocab) + 1:
        raise ValueError(f"vocab_size={vocab_size} is below the {max(vocab) + 1} existing ids")
    texts = _texts(text_or_texts)
    pretoken_counts = count_pretokens(texts, special_tokens, pattern)
    words = [base._encode_piece(piece) for piece in pretoken_counts]
    freqs = list(pretoken_counts.values())
    vocab = dict(vocab)
    new = merge_loop(words, freqs, vocab, vocab_size, min_frequency, max_token_length)
    return vocab, list(base.merges) + new


def train_bpe_file(
    path: str | os.PathLike[str],
    vocab_size: int,
    special_tokens: Iterable[str] = (),
    pattern: str = "gpt2",
) -> tuple[dict[int, bytes], list[tuple[bytes, bytes]]]:
    """Train on a UTF-8 text file; see ``train_bpe`` for the arguments and result.

    The file is read as one text, with line endings kept as they are (``\\r\\n`` stays
    ``\\r\\n``), so the result depends only on the file's bytes.

    Raises:
        FileNotFoundError / OSError: if the file cannot be read.
        UnicodeDecodeError: if the file is not valid UTF-8 (the error gives the byte offset).
        ValueError: as ``train_bpe``.
    """
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    return train_bpe(text, vocab_size, special_tokens, pattern)
