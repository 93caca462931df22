"""Tests of bytepair.reference, the pure-Python oracle.

Expected values are worked out by hand in the comments, or come from the CS336 assignment-1
fixtures and the GPT-2 vocabulary in the shared data folder.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bytepair.reference import (
    CL100K_PATTERN,
    GPT2_PATTERN,
    O200K_PATTERN,
    PATTERNS,
    ReferenceTokenizer,
    bytes_to_unicode,
    count_pretokens,
    encode,
    merge_word,
    pretokenize,
    resolve_pattern,
    split_special,
    str_to_token,
    token_to_str,
    train_bpe,
    train_bpe_file,
    unicode_to_bytes,
)

EOT = "<|endoftext|>"

# a small text of our own for round trips: several scripts, emoji, digits, odd whitespace
SAMPLE = (
    "The quick brown fox jumps over the lazy dog. The dog sleeps; the fox doesn't!\n"
    "Numbers: 3.14159, 2024-05-10, 1,000,000 and 12345678.\n"
    "  Indented line\twith a tab\r\nand CRLF.\n\n"
    "Ünïcödé: café, naïve, Straße. 日本語のテキスト。中文文本。Русский текст.\n"
    "Emoji: 👍🏽 👨‍👩‍👧 🇯🇵 — done.  \n"
)


# ---------------------------------------------------------------------------------------------
# helpers: deliberately naive versions of training and encoding, to check the real ones against


def naive_train(texts, vocab_size, special_tokens=(), pattern="gpt2"):
    """Train by recounting every pair from scratch before each merge (no incremental update)."""
    words = [(list(w), n) for w, n in count_pretokens(texts, special_tokens, pattern).items()]
    vocab = {i: bytes([i]) for i in range(256)}
    for s in special_tokens:
        vocab[len(vocab)] = s.encode()
    merges = []
    while len(vocab) < vocab_size:
        counts = Counter()
        for w, n in words:
            for pair in zip(w, w[1:]):
                counts[pair] += n
        if not counts:
            break
        best = max(counts, key=lambda p: (counts[p], vocab[p[0]], vocab[p[1]]))
        new_id = len(vocab)
        vocab[new_id] = vocab[best[0]] + vocab[best[1]]
        merges.append((vocab[best[0]], vocab[best[1]]))
        words = [(merge_word(w, best, new_id), n) for w, n in words]
    return vocab, merges


def replay_encode(merges, text, pattern="gpt2", first_id=256):
    """Encode by applying the merges to each pre-token in learned order (as bytes, then ids).

    Merge k made token ``first_id + k`` (256 + the number of special tokens).
    """
    ids = {}
    for k, (a, b) in enumerate(merges):
        ids.setdefault(a + b, first_id + k)
    out = []
    for piece in pretokenize(text, pattern):
        parts = [bytes([b]) for b in piece.encode()]
        for a, b in merges:
            merged, i = [], 0
            while i < len(parts):
                if i + 1 < len(parts) and parts[i] == a and parts[i + 1] == b:
                    merged.append(a + b)
                    i += 2
                else:
                    merged.append(parts[i])
                    i += 1
            parts = merged
        out.extend(ids[p] if len(p) > 1 else p[0] for p in parts)
    return out


def read_gpt2_merges(path: Path) -> list[tuple[bytes, bytes]]:
    """Read a merges.txt written in GPT-2's byte alphabet: one "left right" pair per line."""
    merges = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#version"):
            left, right = line.split(" ")
            merges.append((str_to_token(left), str_to_token(right)))
    return merges


@pytest.fixture(scope="module")
def low_tok() -> ReferenceTokenizer:
    vocab, merges = train_bpe("low low lower lowest", 1000)
    return ReferenceTokenizer(vocab, merges)


@pytest.fixture(scope="module")
def sample_tok() -> ReferenceTokenizer:
    vocab, merges = train_bpe([SAMPLE] * 3, 400, special_tokens=[EOT])
    return ReferenceTokenizer(vocab, merges, special_tokens=[EOT])


@pytest.fixture(scope="module")
def gpt2_tok(data_dir: Path) -> ReferenceTokenizer:
    encoder = json.loads((data_dir / "gpt2" / "vocab.json").read_text(encoding="utf-8"))
    vocab = {i: str_to_token(s) if s != EOT else EOT.encode() for s, i in encoder.items()}
    merges = read_gpt2_merges(data_dir / "gpt2" / "merges.txt")
    return ReferenceTokenizer(vocab, merges, special_tokens=[EOT])


# ---------------------------------------------------------------------------------------------
# pretokenize.py


def test_patterns_match_tiktoken(data_dir: Path) -> None:
    encodings = json.loads((data_dir / "tiktoken" / "encodings.json").read_text())
    assert GPT2_PATTERN == encodings["r50k_base"]["pat_str"]
    assert GPT2_PATTERN == encodings["p50k_base"]["pat_str"]
    assert CL100K_PATTERN == encodings["cl100k_base"]["pat_str"]
    assert O200K_PATTERN == encodings["o200k_base"]["pat_str"]


def test_resolve_pattern() -> None:
    assert set(PATTERNS) == {"gpt2", "cl100k", "o200k"}
    assert resolve_pattern("gpt2") == GPT2_PATTERN
    assert resolve_pattern("cl100k") == CL100K_PATTERN
    assert resolve_pattern("o200k") == O200K_PATTERN
    assert resolve_pattern(r"\w+|\s+") == r"\w+|\s+"
    assert pretokenize("ab cd", r"\w+|\s+") == ["ab", " ", "cd"]
    # findall would return the group here; pretokenize returns whole matches
    assert pretokenize("ab cd", r"(a)b|\s|cd") == ["ab", " ", "cd"]
    with pytest.raises(ValueError, match="invalid pre-tokenizer pattern"):
        pretokenize("x", "(unclosed")


@pytest.mark.parametrize(
    ("pattern", "text", "expected"),
    [
        ("gpt2", "Hello world, it's 2024!", ["Hello", " world", ",", " it", "'s", " 2024", "!"]),
        # the last space of a run goes with the next word
        ("gpt2", "a  b", ["a", " ", " b"]),
        # trailing whitespace is one piece; "\n\n" before a word splits in two
        ("gpt2", "hi  \n", ["hi", "  \n"]),
        ("gpt2", "\n\ntesting!", ["\n", "\n", "testing", "!"]),
        ("gpt2", "don't", ["don", "'t"]),
        ("gpt2", "DON'T", ["DON", "'", "T"]),  # gpt2 contractions are lowercase only
        ("cl100k", "DON'T", ["DON", "'T"]),
        ("cl100k", "1234567", ["123", "456", "7"]),
        ("cl100k", "_foo bar", ["_foo", " bar"]),
        ("cl100k", "x\n\ny", ["x", "\n\n", "y"]),
        ("o200k", "don't", ["don't"]),
        ("o200k", "helloWorld", ["hello", "World"]),
        ("o200k", "a/b\n", ["a", "/b", "\n"]),
        ("gpt2", "", []),
    ],
)
def test_pretokenize_examples(pattern: str, text: str, expected: list[str]) -> None:
    assert pretokenize(text, pattern) == expected


@given(st.text())
def test_pretokenize_covers_text(text: str) -> None:
    for name in PATTERNS:
        assert "".join(pretokenize(text, name)) == text


def test_split_special_basic() -> None:
    assert split_special("", []) == []
    assert split_special("", [EOT]) == []
    assert split_special("no specials here", []) == [("no specials here", False)]
    assert split_special("plain", [EOT]) == [("plain", False)]
    assert split_special(f"a{EOT}b", [EOT]) == [("a", False), (EOT, True), ("b", False)]
    # specials at both ends and back to back: no empty ordinary spans in between
    assert split_special(f"{EOT}{EOT}x{EOT}", [EOT]) == [
        (EOT, True),
        (EOT, True),
        ("x", False),
        (EOT, True),
    ]


def test_split_special_longest_wins() -> None:
    double = EOT + EOT
    # both orders of registration: the longer token wins where both match
    for specials in ([EOT, double], [double, EOT]):
        assert split_special(f"a{EOT}{EOT}{EOT}b", specials) == [
            ("a", False),
            (double, True),
            (EOT, True),
            ("b", False),
        ]
    # leftmost beats longest: "x<a" starts before the longer "<a><b>"
    assert split_special("x<a><b>", ["<a>", "<a><b>", "x<a"]) == [("x<a", True), ("><b>", False)]
    # special characters of regex syntax are escaped
    assert split_special("1+1=2", ["1+1", "."]) == [("1+1", True), ("=2", False)]


@given(st.text(alphabet="ab<>|", max_size=30))
def test_split_special_rejoins(text: str) -> None:
    spans = split_special(text, ["<|", "<|a|>", "b"])
    assert "".join(s for s, _ in spans) == text
    assert all(s for s, _ in spans)


# ---------------------------------------------------------------------------------------------
# gpt2_bytes.py


def test_gpt2_byte_table() -> None:
    table = bytes_to_unicode()
    assert len(table) == 256 and len(set(table.values())) == 256
    # printable ASCII stands for itself; space, newline and NUL are moved up
    assert table[ord("A")] == "A" and table[ord("~")] == "~" and table[0xFF] == "ÿ"
    assert table[ord(" ")] == "Ġ" and table[ord("\n")] == "Ċ" and table[0] == "Ā"
    assert table[0xAD] == "Ń"  # soft hyphen, the last of the 68 moved bytes: chr(256 + 67)
    assert unicode_to_bytes()["Ġ"] == 32
    assert token_to_str(b" the") == "Ġthe"
    assert str_to_token("Ġthe") == b" the"
    every_byte = bytes(range(256))
    assert str_to_token(token_to_str(every_byte)) == every_byte
    with pytest.raises(KeyError, match="GPT-2 alphabet"):
        str_to_token("\u4e00")


# ---------------------------------------------------------------------------------------------
# train.py


def test_merge_word() -> None:
    assert merge_word([1, 2, 3, 1, 2], (1, 2), 9) == [9, 3, 9]
    # occurrences do not overlap; the leftmost is taken first
    assert merge_word([7, 7, 7], (7, 7), 9) == [9, 7]
    assert merge_word([7, 7, 7, 7], (7, 7), 9) == [9, 9]
    assert merge_word([1], (1, 2), 9) == [1]


def test_count_pretokens() -> None:
    assert count_pretokens(["low low", "low"]) == Counter({b"low": 2, b" low": 1})
    # special-token text is not counted
    assert count_pretokens([f"a{EOT}a"], [EOT]) == Counter({b"a": 2})


def test_train_low_lower_lowest() -> None:
    # pre-tokens: "low", " low", " lower", " lowest", once each ("␠" = space)
    # counts: (l,o)=4 (o,w)=4 (␠,l)=3 (w,e)=2 (e,r)=1 (e,s)=1 (s,t)=1
    #  1. (o,w): ties with (l,o) at 4, and b"o" > b"l"
    #  2. (l,ow)=4   3. (␠,low)=3   4. (␠low,e)=2
    #  5. (s,t): left of (␠lowe,r), (␠lowe,s), (s,t) is b" lowe", b" lowe", b"s"; b"s" is greatest
    #  6. (␠lowe,st): ties with (␠lowe,r); same left, b"st" > b"r"
    #  7. (␠lowe,r), then nothing is left to merge
    vocab, merges = train_bpe("low low lower lowest", 1000)
    assert merges == [
        (b"o", b"w"),
        (b"l", b"ow"),
        (b" ", b"low"),
        (b" low", b"e"),
        (b"s", b"t"),
        (b" lowe", b"st"),
        (b" lowe", b"r"),
    ]
    assert len(vocab) == 256 + 7  # stopped early
    assert all(vocab[i] == bytes([i]) for i in range(256))
    assert [vocab[i] for i in range(256, 263)] == [
        b"ow",
        b"low",
        b" low",
        b" lowe",
        b"st",
        b" lowest",
        b" lower",
    ]
    # vocab_size counts the 256 bytes: 259 leaves room for three merges
    assert train_bpe("low low lower lowest", 259)[1] == merges[:3]
    assert train_bpe("low low lower lowest", 256) == ({i: bytes([i]) for i in range(256)}, [])


def test_train_tie_breaks() -> None:
    # "abc" is one pre-token: (a,b)=1 (b,c)=1; b"b" > b"a", so (b,c) first, then (a,bc)
    assert train_bpe("abc", 300)[1] == [(b"b", b"c"), (b"a", b"bc")]

    # "ab", " ac": (a,b)=1 (␠,a)=1 (a,c)=1. left b"a" > b" ", and with equal left b"c" > b"b":
    # (a,c) first. then (a,b) vs (␠,ac): b"a" > b" " -> (a,b). last (␠,ac)
    assert train_bpe("ab ac", 300)[1] == [(b"a", b"c"), (b"a", b"b"), (b" ", b"ac")]

    # bytes decide ties, not ids. (a,b)=5 -> "ab" (id 256). then (ab,c)=2 and (z,d)=2 tie:
    # by ids (256 > 122) (ab,c) would win, but by bytes b"z" > b"ab", so (z,d) wins
    texts = ["ab"] * 3 + ["abc"] * 2 + ["zd"] * 2
    assert train_bpe(texts, 300)[1] == [(b"a", b"b"), (b"z", b"d"), (b"ab", b"c")]

    # a proper prefix compares smaller: (ab,c)=2 (a,bd)... here (a,c)=2 and (ab,x)=2 tie after
    # "ab" is made; b"ab" > b"a" so (ab,x) wins
    texts = ["ab"] * 3 + ["abx"] * 2 + ["ac"] * 2
    assert train_bpe(texts, 300)[1] == [(b"a", b"b"), (b"ab", b"x"), (b"a", b"c")]


def test_train_counts_weighted_and_non_overlapping() -> None:
    # "aaa" holds (a,a) twice and "bc" once, but "bc" occurs 3 times: (b,c)=3 > (a,a)=2
    assert train_bpe(["aaa"] + ["bc"] * 3, 257)[1] == [(b"b", b"c")]
    # "aaaa" -> after (a,a): [aa, aa], so the next pair is (aa,aa), counted once
    assert train_bpe("aaaa", 300)[1] == [(b"a", b"a"), (b"aa", b"aa")]
    # "aaa" -> [aa, a]: the leftmost occurrence merges; then (aa,a)
    assert train_bpe("aaa", 300)[1] == [(b"a", b"a"), (b"aa", b"a")]


def test_train_special_tokens() -> None:
    # "hello" twice, the special text not counted. all pairs count 2:
    # (h,e) (e,l) (l,l) (l,o): greatest left b"l", then right b"o" > b"l" -> (l,o)
    # then (h,e) (e,l) (l,lo) -> (l,lo); then (h,e) (e,llo): b"h" > b"e" -> (h,e); then (he,llo)
    vocab, merges = train_bpe(f"hello{EOT}hello", 1000, special_tokens=[EOT, "<pad>"])
    assert merges == [(b"l", b"o"), (b"l", b"lo"), (b"h", b"e"), (b"he", b"llo")]
    assert vocab[256] == EOT.encode() and vocab[257] == b"<pad>"
    assert vocab[258] == b"lo" and vocab[261] == b"hello" and len(vocab) == 262
    # the special token also separates pre-tokens: no merge spans "o<|" or "|>h"
    assert train_bpe(f"ab{EOT}ab", 1000, [EOT])[1] == [(b"a", b"b")]
    # without it, "<|endoftext|>" is ordinary text and gets merged
    assert len(train_bpe(f"ab{EOT}ab", 1000)[1]) > 1
    # vocab_size exactly 256 + specials: no merges
    assert train_bpe("abab", 257, [EOT]) == (
        {**{i: bytes([i]) for i in range(256)}, 256: b"<|endoftext|>"},
        [],
    )


def test_train_bad_arguments() -> None:
    with pytest.raises(ValueError, match="vocab_size=256 is too small"):
        train_bpe("abc", 256, special_tokens=[EOT])
    with pytest.raises(ValueError, match="too small"):
        train_bpe("abc", 100)
    with pytest.raises(ValueError, match="distinct"):
        train_bpe("abc", 300, special_tokens=[EOT, EOT])
    with pytest.raises(ValueError, match="non-empty"):
        train_bpe("abc", 300, special_tokens=[""])


def test_train_inputs() -> None:
    # an iterable of texts: each is pre-tokenized on its own
    assert train_bpe(iter(["ab", "ab"]), 300)[1] == [(b"a", b"b")]
    assert train_bpe(["ab", "ab"], 300) == train_bpe(("ab" for _ in range(2)), 300)
    # the empty corpus trains to the bytes alone
    assert train_bpe("", 300) == ({i: bytes([i]) for i in range(256)}, [])
    assert train_bpe([], 300)[1] == []


def test_train_bpe_file(tmp_path: Path) -> None:
    path = tmp_path / "corpus.txt"
    text = "line one\r\nline two\r\n"
    path.write_bytes(text.encode())
    # \r\n is kept, not turned into \n
    assert train_bpe_file(path, 300) == train_bpe(text, 300)
    assert (b"\r", b"\n") in train_bpe_file(path, 300)[1]
    with pytest.raises(FileNotFoundError):
        train_bpe_file(tmp_path / "missing.txt", 300)
    path.write_bytes(b"ok \xff bad")
    with pytest.raises(UnicodeDecodeError):
        train_bpe_file(path, 300)


@given(
    st.lists(st.text(alphabet="aab bc\n<|>", max_size=25), max_size=6),
    st.integers(min_value=257, max_value=300),
    st.sampled_from(["gpt2", "cl100k", "o200k"]),
)
def test_train_incremental_equals_naive(texts: list[str], vocab_size: int, pattern: str) -> None:
    # a small alphabet makes many ties, which is where bugs in the incremental update hide
    assert train_bpe(texts, vocab_size, ["<|>"], pattern) == naive_train(
        texts, vocab_size, ["<|>"], pattern
    )


def test_train_cs336_reference(data_dir: Path) -> None:
    cs336 = data_dir / "cs336"
    vocab, merges = train_bpe_file(cs336 / "corpus.en", 500, special_tokens=[EOT])
    assert merges == read_gpt2_merges(cs336 / "train-bpe-reference-merges.txt")
    expected = json.loads((cs336 / "train-bpe-reference-vocab.json").read_text(encoding="utf-8"))
    expected_bytes = {s.encode() if s == EOT else str_to_token(s) for s in expected}
    assert len(vocab) == 500
    assert set(vocab.values()) == expected_bytes


def test_train_en_ewt_invariants(data_dir: Path) -> None:
    vocab, merges = train_bpe_file(data_dir / "en_ewt" / "en_ewt.train.txt", 1000, [EOT])
    assert len(vocab) == 1000 and sorted(vocab) == list(range(1000))
    assert len(merges) == 1000 - 257
    for k, (left, right) in enumerate(merges):
        assert vocab[257 + k] == left + right
    # held-out text round-trips, is compressed, and rank encoding agrees with merge replay
    tok = ReferenceTokenizer(vocab, merges, [EOT])
    dev = (data_dir / "en_ewt" / "en_ewt.dev.txt").read_text(encoding="utf-8")
    ids = tok.encode(dev)
    assert tok.decode(ids) == dev
    assert len(ids) < len(dev.encode()) / 2  # about 2.4 bytes per token at this size
    head = dev[:5000]  # replay is slow: every merge is tried on every pre-token
    assert tok.encode(head) == replay_encode(merges, head, first_id=257)


# ---------------------------------------------------------------------------------------------
# encode.py


def test_encode_hand_worked(low_tok: ReferenceTokenizer) -> None:
    # ids: 256 "ow", 257 "low", 258 " low", 259 " lowe", 260 "st", 261 " lowest", 262 " lower"
    # " lowest" and " lower" are whole tokens. "lowest": l o w e s t -> (ow) l ow e s t ->
    # (low) low e s t -> (st) low e st; "lowe", "est" are no tokens -> [257, 101, 260]
    assert low_tok.encode("low lowest lower") == [257, 261, 262]
    assert low_tok.encode("lowest") == [257, 101, 260]
    # " slow": ␠ s l o w -> ␠ s l ow -> ␠ s low; " s" and "slow" are no tokens
    assert low_tok.encode(" slow") == [32, 115, 257]
    # "owl": (o,w) has rank 0 -> [ow, l]
    assert low_tok.encode("owl") == [256, 108]
    assert low_tok.encode("") == []
    assert low_tok.encode_ordinary("low") == [257]


def test_encode_lowest_rank_first_leftmost_on_ties() -> None:
    vocab = {i: bytes([i]) for i in range(256)}
    vocab.update({256: b"bc", 257: b"ab", 258: b"aa"})
    tok = ReferenceTokenizer(vocab, [(b"b", b"c"), (b"a", b"b"), (b"a", b"a")])
    # "abc": (b,c) has rank 0 and beats (a,b) of rank 1, although (a,b) is further left
    assert tok.encode("abc") == [97, 256]
    # "aaa": (a,a) occurs twice with equal rank; the leftmost merges -> [aa, a]
    assert tok.encode("aaa") == [258, 97]
    # the rank of a merge comes from its bytes: "ab" is learned at rank 1
    assert tok.encode("abab") == [257, 257]


def test_encode_gpt2(gpt2_tok: ReferenceTokenizer) -> None:
    # well-known GPT-2 token ids
    assert gpt2_tok.encode("Hello world") == [15496, 995]
    assert gpt2_tok.encode("Hello, world!") == [15496, 11, 995, 0]
    assert gpt2_tok.encode(f"{EOT}\n\ntesting!", allowed_special="all") == [
        50256,
        198,
        198,
        33407,
        0,
    ]
    # not allowed: encoded as the ordinary text "<", "|", "endoftext", "|", ">"
    assert 50256 not in gpt2_tok.encode(EOT)
    assert gpt2_tok.decode(gpt2_tok.encode(EOT)) == EOT
    assert gpt2_tok.decode(gpt2_tok.encode(SAMPLE)) == SAMPLE


def test_encode_special_tokens() -> None:
    double = EOT + EOT
    vocab, merges = train_bpe("some text", 300, special_tokens=[EOT, double])
    tok = ReferenceTokenizer(vocab, merges, special_tokens=[EOT, double])
    assert tok.special_tokens == {EOT: 256, double: 257}
    text = f"a{EOT}{EOT}{EOT}b"
    # all allowed: the longer special wins at the first position
    assert tok.encode(text, allowed_special="all") == [97, 257, 256, 98]
    # only the single one allowed: three of them
    assert tok.encode(text, allowed_special={EOT}) == [97, 256, 256, 256, 98]
    # none allowed (the default): plain bytes, no special ids
    ordinary = tok.encode(text)
    assert ordinary == tok.encode_ordinary(text)
    assert not {256, 257} & set(ordinary)
    assert tok.decode(ordinary) == text
    assert tok.decode([97, 257, 256, 98]) == text
    # unknown names in allowed_special are ignored, as in tiktoken
    assert tok.encode(text, allowed_special={"<nope>"}) == ordinary
    with pytest.raises(TypeError):
        tok.encode(text, allowed_special=EOT)  # a str other than "all"
    assert encode(text, vocab, merges, [EOT, double], allowed_special="all") == [97, 257, 256, 98]


def test_decode(low_tok: ReferenceTokenizer) -> None:
    assert low_tok.decode_bytes([257, 32, 0xE6]) == b"low \xe6"
    assert low_tok.decode([257, 0xE6]) == "low\ufffd"  # half of a UTF-8 character
    with pytest.raises(UnicodeDecodeError):
        low_tok.decode([0xE6], errors="strict")
    with pytest.raises(KeyError, match="unknown token id 9999"):
        low_tok.decode([257, 9999])


def test_tokenizer_validates_vocab() -> None:
    bytes_only = {i: bytes([i]) for i in range(256)}
    with pytest.raises(ValueError, match="special token"):
        ReferenceTokenizer(bytes_only, [], special_tokens=[EOT])
    with pytest.raises(ValueError, match="merge 0"):
        ReferenceTokenizer(bytes_only, [(b"a", b"b")])
    with pytest.raises(ValueError, match="single-byte"):
        ReferenceTokenizer({i: bytes([i]) for i in range(255)}, [])


@pytest.mark.parametrize(
    "text",
    [
        "",
        "a",
        " ",
        "hello world",
        "\x00\x01 nul and control",
        "line\r\nline\rline\n",
        "   leading and trailing   ",
        "日本語のテキスト",
        "안녕하세요",
        "👨‍👩‍👧‍👦🇯🇵👍🏽",
        "x" * 1000,
        "0" * 100,
        SAMPLE,
    ],
)
def test_round_trip(sample_tok: ReferenceTokenizer, text: str) -> None:
    assert sample_tok.decode(sample_tok.encode(text)) == text
    assert sample_tok.decode_bytes(sample_tok.encode(text)) == text.encode()


@given(st.text())
def test_round_trip_any_text(sample_tok: ReferenceTokenizer, text: str) -> None:
    assert sample_tok.decode(sample_tok.encode(text, allowed_special="all")) == text


@given(st.text(alphabet="lowers tn\n", max_size=40))
def test_rank_encoding_equals_merge_replay(low_tok: ReferenceTokenizer, text: str) -> None:
    # for a trained tokenizer, tiktoken's lowest-rank-first rule = replaying merges in order
    assert low_tok.encode(text) == replay_encode(low_tok.merges, text)


@given(st.lists(st.text(alphabet="aab cb\n", max_size=20), min_size=1, max_size=5), st.data())
def test_trained_tokenizer_encoding_equals_replay(texts: list[str], data: st.DataObject) -> None:
    vocab, merges = train_bpe(texts, 320)
    tok = ReferenceTokenizer(vocab, merges)
    text = data.draw(st.text(alphabet="aab cb\n", max_size=30))
    assert tok.encode(text) == replay_encode(merges, text)
    # the training texts too, and their pre-tokens one by one (these hit the whole-piece lookup)
    for t in texts:
        assert tok.encode(t) == replay_encode(merges, t)
        for piece in pretokenize(t):
            assert tok.encode(piece) == replay_encode(merges, piece)
