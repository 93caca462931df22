"""Training in the Rust core must equal ``bytepair.reference`` exactly (DESIGN.md §2, §6).

Every test compares merges and the whole vocabulary (ids included) with the pure-Python
oracle, or with values worked out by hand in the comments, or with the CS336 fixtures.
Ties matter: the small hypothesis corpora are built from tiny alphabets so that most merges
are decided by the tie rule (greatest ``(left bytes, right bytes)``).

Also checked here: reading files in chunks gives the counts of the whole text, counts of
shards add up, the id layout, and that the thread count does not change the result.
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import reference

EOT = "<|endoftext|>"

# custom regexes (Python ``regex`` syntax, DESIGN.md §2): one with lookahead and \p classes,
# one with capturing groups (the whole match is the pre-token, not the group), one that
# skips characters (text it does not match is not counted at all)
LOOKAHEAD_RE = r"""\p{L}+(?=\s)|\p{L}+|\p{N}|\s+(?!\S)|\s|[^\s\p{L}\p{N}]+"""
GROUPS_RE = r"""(\w)(\w*)|(\s+)|([^\w\s])"""
LETTERS_ONLY_RE = r"""\p{L}+"""


def ref_train(texts, vocab_size, special_tokens=(), pattern="gpt2"):
    """The oracle: ``reference.train_bpe`` on a text or a list of texts."""
    return reference.train_bpe(texts, vocab_size, list(special_tokens), pattern)


def assert_same(tok: bytepair.Tokenizer, expected) -> None:
    """``tok`` has exactly the oracle's merges and vocabulary (ids included)."""
    vocab, merges = expected
    assert tok.merges == merges
    assert tok.vocab == vocab
    assert len(tok.vocab) == len(vocab)


def read_text(path: Path, chars: int | None = None) -> str:
    """A file's text with line endings kept as they are (as the Rust reader sees it)."""
    with open(path, encoding="utf-8", newline="") as f:
        return f.read() if chars is None else f.read(chars)


# ---------------------------------------------------------------------------------------------
# the CS336 fixtures


@pytest.fixture(scope="module")
def corpus_en(data_dir: Path) -> Path:
    return data_dir / "cs336" / "corpus.en"


def test_corpus_en_matches_reference(corpus_en: Path) -> None:
    tok = bytepair.train(corpus_en, 500, special_tokens=[EOT])
    assert_same(tok, reference.train_bpe_file(corpus_en, 500, [EOT]))
    assert len(tok.vocab) == 500


def test_corpus_en_matches_cs336_fixtures(data_dir: Path, corpus_en: Path) -> None:
    vocab, merges = bytepair.train_bpe(corpus_en, 500, [EOT])
    lines = (data_dir / "cs336" / "train-bpe-reference-merges.txt").read_text(encoding="utf-8")
    expected_merges = []
    for line in lines.split("\n"):
        if line:
            left, right = line.split(" ")
            expected_merges.append((reference.str_to_token(left), reference.str_to_token(right)))
    assert len(expected_merges) == 243
    assert merges == expected_merges
    # the fixture vocab numbers tokens its own way (<|endoftext|> is 0): compare the values
    fixture = json.loads(
        (data_dir / "cs336" / "train-bpe-reference-vocab.json").read_text(encoding="utf-8")
    )
    expected_values = {EOT.encode() if s == EOT else reference.str_to_token(s) for s in fixture}
    assert len(fixture) == 500
    assert set(vocab.values()) == expected_values
    assert sorted(vocab) == list(range(500))


def test_train_bpe_returns_plain_objects(corpus_en: Path) -> None:
    vocab, merges = bytepair.train_bpe(corpus_en, 300, [EOT])
    assert type(vocab) is dict and type(merges) is list
    assert all(type(k) is int and type(v) is bytes for k, v in vocab.items())
    assert all(type(a) is bytes and type(b) is bytes for a, b in merges)
    assert (vocab, merges) == reference.train_bpe_file(corpus_en, 300, [EOT])


def test_tinystories_sample(data_dir: Path) -> None:
    path = data_dir / "cs336" / "tinystories_sample.txt"
    tok = bytepair.train(path, 1000, special_tokens=[EOT])
    expected = reference.train_bpe_file(path, 1000, [EOT])
    assert_same(tok, expected)
    # the sample has <|endoftext|> separators: none of its bytes may be learned across them
    assert not any(EOT.encode() in t for i, t in tok.vocab.items() if i != 256)


def test_en_ewt_dev_whole(data_dir: Path) -> None:
    path = data_dir / "en_ewt" / "en_ewt.dev.txt"
    tok = bytepair.train(path, 1000)
    assert_same(tok, reference.train_bpe_file(path, 1000))
    assert len(tok.vocab) == 1000


@pytest.mark.parametrize(
    ("name", "vocab_size", "specials"),
    [
        ("address.txt", 400, ()),
        ("german.txt", 400, ()),  # training stops early: few distinct pairs
        ("special_token_trailing_newlines.txt", 300, (EOT,)),
        ("special_token_double_newlines_non_whitespace.txt", 300, (EOT,)),
    ],
)
def test_small_cs336_fixtures(data_dir: Path, name: str, vocab_size: int, specials) -> None:
    path = data_dir / "cs336" / name
    for pattern in ("gpt2", "cl100k", "o200k"):
        tok = bytepair.train(path, vocab_size, special_tokens=specials, pattern=pattern)
        assert_same(tok, reference.train_bpe_file(path, vocab_size, specials, pattern))


# ---------------------------------------------------------------------------------------------
# other patterns and other corpora


@pytest.mark.parametrize(
    ("relpath", "vocab_size", "specials", "pattern"),
    [
        ("en_ewt/en_ewt.test.txt", 800, (), "cl100k"),
        ("cs336/corpus.en", 600, (EOT,), "o200k"),
        ("cs336/tinystories_sample.txt", 700, (EOT,), "cl100k"),
        ("cs336/tinystories_sample.txt", 700, (EOT,), "o200k"),
        ("cs336/corpus.en", 500, (EOT,), LOOKAHEAD_RE),
        ("en_ewt/en_ewt.dev.txt", 500, (), GROUPS_RE),
        ("cs336/tinystories_sample.txt", 600, (EOT,), LETTERS_ONLY_RE),
    ],
)
def test_patterns_on_corpora(data_dir: Path, relpath, vocab_size, specials, pattern) -> None:
    path = data_dir / relpath
    tok = bytepair.train(path, vocab_size, special_tokens=specials, pattern=pattern)
    assert_same(tok, reference.train_bpe_file(path, vocab_size, specials, pattern))
    assert tok.pattern == reference.resolve_pattern(pattern)


# (file, characters read from its start, pattern): a slice of every other shared corpus
CORPUS_SLICES = [
    ("corpora/english_gutenberg.txt", 150_000, "gpt2"),
    ("corpora/python_stdlib.txt", 150_000, "cl100k"),
    ("corpora/multilingual/zh.txt", 25_000, "o200k"),
    ("corpora/multilingual/ja.txt", 25_000, "cl100k"),
    ("corpora/multilingual/ru.txt", 60_000, "o200k"),
    ("corpora/multilingual/ar.txt", 60_000, "gpt2"),
    ("corpora/multilingual/hi.txt", 60_000, "o200k"),
    ("corpora/multilingual/emoji_cldr.txt", 60_000, "cl100k"),
    ("corpora/multilingual/emoji-test.txt", 100_000, "gpt2"),
    ("en_ewt/en_ewt.train.txt", 150_000, "o200k"),
]


@pytest.mark.parametrize(("relpath", "chars", "pattern"), CORPUS_SLICES)
def test_corpus_slices(data_dir: Path, relpath: str, chars: int, pattern: str) -> None:
    text = read_text(data_dir / relpath, chars)
    tok = bytepair.train(iter([text]), 700, special_tokens=[EOT], pattern=pattern)
    assert_same(tok, ref_train(text, 700, [EOT], pattern))


# ---------------------------------------------------------------------------------------------
# worked by hand


def test_low_lower_lowest_by_hand() -> None:
    # the worked example of reference/train.py: 7 merges, then no pair is left
    tok = bytepair.train(iter(["low low lower lowest"]), 1000)
    assert tok.merges == [
        (b"o", b"w"),  # tie at 4 with (l, o): b"o" > b"l"
        (b"l", b"ow"),
        (b" ", b"low"),
        (b" low", b"e"),
        (b"s", b"t"),  # three-way tie at 1: b"s" is the greatest left side
        (b" lowe", b"st"),  # tie with (" lowe", "r"): b"st" > b"r"
        (b" lowe", b"r"),
    ]
    assert len(tok.vocab) == 263


def test_tie_compares_tuples_not_concatenations() -> None:
    # pre-tokens (\S+): ab x3, abc, az. merge 1: (a,b) with count 4. then (ab,c) and (a,z)
    # tie at 1; as tuples (b"ab", b"c") > (b"a", b"z"), though "az" > "abc" as strings.
    tok = bytepair.train(iter(["ab ab ab abc az"]), 300, pattern=r"\S+")
    assert tok.merges == [(b"a", b"b"), (b"ab", b"c"), (b"a", b"z")]


def test_overlapping_pairs_merge_left_to_right() -> None:
    # "aaaa" holds (a,a) three times; merging left to right gives [aa, aa], then [aaaa]
    tok = bytepair.train(iter(["aaaa"]), 300, pattern=r"\S+")
    assert tok.merges == [(b"a", b"a"), (b"aa", b"aa")]
    # "aaa" x2 and "aaaaa": (a,a) counts 2+2+4 = 8; "aaa" -> [aa, a], "aaaaa" -> [aa, aa, a].
    # then (aa,a) = 2+1 = 3 beats (aa,aa) = 1; "aaaaa" -> [aa, aaa], whose pair is the last
    tok = bytepair.train(iter(["aaa aaa aaaaa"]), 300, pattern=r"\S+")
    assert tok.merges == [(b"a", b"a"), (b"aa", b"a"), (b"aa", b"aaa")]
    assert tok.merges == ref_train("aaa aaa aaaaa", 300, (), r"\S+")[1]


def test_equal_counts_order_multibyte_pairs() -> None:
    # "é" is c3 a9 and "ü" is c3 bc; each once: (c3, bc) > (c3, a9), both above (a, b)
    tok = bytepair.train(iter(["é", "ü", "ab"]), 300)
    assert tok.merges == [(b"\xc3", b"\xbc"), (b"\xc3", b"\xa9"), (b"a", b"b")]


# ---------------------------------------------------------------------------------------------
# many small corpora full of ties

SPECIAL_POOL = [EOT, "<s>", "<s><s>", "<|pad|>", "§"]
WORD_POOL = [
    "a", "b", "ab", "ba", "aab", " ", "  ", "\n", "\n\n", "\r\n", "\t", "c", "ab c\n", "é",
    "中文", "👍", "👍🏽", "'s", "'S", "1", "22", "1234", "...", "/", "e\u0301", "\u3000", "\xa0",
]  # fmt: skip
# Any assigned character (Unicode 14, Python's unicodedata). Not unassigned ones: the `regex`
# module behind the reference may know a newer Unicode than the Rust regex crate (and
# tiktoken), e.g. regex 2026.x has Unicode 17, where U+0558 became a letter and U+0295 moved
# from Ll to Lo; the two then split such text differently, and tiktoken agrees with the core.
CHARS = st.characters(exclude_categories=("Cs", "Cn"), exclude_characters="\u0295")
PATTERNS = ["gpt2", "cl100k", "o200k", r"\S+|\s+", r"[ab]+|.", LOOKAHEAD_RE, GROUPS_RE]


@st.composite
def tie_corpora(draw):
    """(texts, special_tokens, pattern, vocab_size) with small alphabets and many ties."""
    specials = draw(st.lists(st.sampled_from(SPECIAL_POOL), unique=True, max_size=3))
    piece = st.one_of(
        st.text(alphabet="ab c\n", max_size=6),
        st.sampled_from(WORD_POOL),
        st.text(CHARS, max_size=3),
        *([st.sampled_from(specials)] if specials else []),
    )
    texts = draw(st.lists(st.lists(piece, max_size=12).map("".join), min_size=0, max_size=6))
    pattern = draw(st.sampled_from(PATTERNS))
    # an empty corpus (no pre-token at all) is an error, tested in test_errors.py
    assume(reference.count_pretokens(texts, specials, pattern))
    base = 256 + len(specials)
    # a small budget, or one so large that every pair gets merged (training stops early)
    vocab_size = draw(st.one_of(st.integers(base, base + 30), st.just(base + 5000)))
    return texts, specials, pattern, vocab_size


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tie_corpora())
def test_small_corpora_iterable_matches_reference(case) -> None:
    texts, specials, pattern, vocab_size = case
    expected = ref_train(texts, vocab_size, specials, pattern)
    tok = bytepair.train(iter(texts), vocab_size, special_tokens=specials, pattern=pattern)
    assert_same(tok, expected)
    # training stops early exactly when the oracle's does
    assert len(tok.vocab) == min(vocab_size, 256 + len(specials) + len(expected[1]))


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tie_corpora())
def test_small_corpora_file_matches_reference(case) -> None:
    texts, specials, pattern, vocab_size = case
    text = "".join(texts)  # a file is one text
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "corpus.txt"
        path.write_bytes(text.encode("utf-8"))  # hypothesis text has no lone surrogates
        tok = bytepair.train(path, vocab_size, special_tokens=specials, pattern=pattern)
        vocab, merges = bytepair.train_bpe(path, vocab_size, specials, pattern=pattern)
    expected = ref_train(text, vocab_size, specials, pattern)
    assert_same(tok, expected)
    assert (vocab, merges) == expected


@settings(deadline=None)
@given(tie_corpora())
def test_count_then_train_from_counts_matches_train(case) -> None:
    texts, specials, pattern, vocab_size = case
    half = len(texts) // 2
    counts = bytepair.count(iter(texts[:half]), pattern=pattern, special_tokens=specials)
    counts = counts + bytepair.count(iter(texts[half:]), pattern=pattern, special_tokens=specials)
    tok = bytepair.train_from_counts(counts, vocab_size, special_tokens=specials, pattern=pattern)
    assert_same(tok, ref_train(texts, vocab_size, specials, pattern))


def test_training_stops_when_pairs_run_out() -> None:
    # "ab" has one pair: one merge, then nothing is left
    tok = bytepair.train(iter(["ab"]), 10_000)
    assert tok.merges == [(b"a", b"b")]
    assert len(tok.vocab) == 257 < 10_000
    # single characters and whitespace only: no pair at all
    tok = bytepair.train(iter(["a b c d"]), 300, pattern=r"\S")
    assert tok.merges == []
    assert len(tok.vocab) == 256


# ---------------------------------------------------------------------------------------------
# files read in chunks give the counts of the whole text

ODD = (
    "  indented line\n/slash at the start\nx.\n/y\nsentence.\n/z\r\nwindows line\r\n"
    "end with space \n\n\n\nafter a run of newlines\n\t tab\n\u3000ideographic space\n"
    "\xa0nbsp\n\u2028line separator\n\x85next line\ne\u0301 combining\n\u0301mark first\n"
    f"{EOT}\nafter special\n{EOT}{EOT}x\n 123 4567 89012\n'S 'll 're\n中文测试。\n日本語\n"
    "CamelCaseWord HTTPServer\n!!!\n\n/\n//\n\n  \n"
)


@pytest.fixture(scope="module")
def big_corpus(data_dir: Path, tmp_path_factory) -> tuple[Path, str]:
    """A ~4 MB file: real text, CJK, odd whitespace, CRLF, lines starting with "/"."""
    parts = [
        read_text(data_dir / "cs336" / "corpus.en"),
        ODD,
        read_text(data_dir / "cs336" / "tinystories_sample.txt"),
        read_text(data_dir / "en_ewt" / "en_ewt.dev.txt"),
        ODD,
        read_text(data_dir / "corpora" / "multilingual" / "zh.txt", 30_000),
        ODD.replace("\n", "\r\n"),
        read_text(data_dir / "corpora" / "multilingual" / "ja.txt", 10_000),
    ]
    unit = "".join(parts)
    text = unit * (4_000_000 // len(unit.encode()) + 1)
    path = tmp_path_factory.mktemp("big") / "big corpus.txt"
    path.write_bytes(text.encode())
    assert path.stat().st_size > 3 * (1 << 20)  # several of the reader's ~1 MB chunks
    return path, text


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k", LOOKAHEAD_RE])
def test_big_file_counts_equal_whole_text(big_corpus, pattern: str) -> None:
    path, text = big_corpus
    from_file = bytepair.count(path, pattern=pattern, special_tokens=[EOT])
    from_text = bytepair.count(iter([text]), pattern=pattern, special_tokens=[EOT])
    expected = reference.count_pretokens([text], [EOT], pattern)
    assert dict(from_file.items()) == dict(expected)
    assert from_file == from_text
    assert from_file.total() == sum(expected.values())
    assert len(from_file) == len(expected)


def test_big_file_trains_like_whole_text(big_corpus) -> None:
    # the counts equal the oracle's (above), so equal training from them is enough here
    path, text = big_corpus
    tok = bytepair.train(path, 1500, special_tokens=[EOT])
    in_memory = bytepair.train(iter([text]), 1500, special_tokens=[EOT])
    assert tok.merges == in_memory.merges and tok.vocab == in_memory.vocab
    assert len(tok.merges) == 1500 - 257
    one_thread = bytepair.train(path, 1500, special_tokens=[EOT], threads=1)
    assert one_thread.merges == tok.merges and one_thread.vocab == tok.vocab


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    unit=st.lists(
        st.one_of(
            st.sampled_from(WORD_POOL + ["x\n", "\n/", ".\n", "a\nb", EOT, f"\n{EOT}\n"]),
            st.text(CHARS, max_size=4),
        ),
        min_size=1,
        max_size=20,
    )
    .map("".join)
    .filter(bool),
    pattern=st.sampled_from(["gpt2", "cl100k", "o200k"]),
    specials=st.sampled_from([[], [EOT]]),
)
def test_chunk_cuts_anywhere_give_whole_text_counts(unit: str, pattern: str, specials) -> None:
    # a text just over the reader's 1 MB chunk: it is cut once, wherever a newline or a
    # special token of this random unit allows; the counts must be those of the whole text
    text = unit * ((1 << 20) // len(unit.encode()) + 2000 // len(unit.encode()) + 2)
    assert len(text.encode()) > 1 << 20
    expected = dict(reference.count_pretokens([text], specials, pattern))
    expected.pop(b"", None)
    got = bytepair.count(iter([text]), pattern=pattern, special_tokens=specials)
    assert dict(got.items()) == expected
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "unit.txt"
        path.write_bytes(text.encode())
        got = bytepair.count(path, pattern=pattern, special_tokens=specials)
        assert dict(got.items()) == expected


# ---------------------------------------------------------------------------------------------
# several files, shards, and the PretokenCounts object


def test_several_files_are_separate_documents(tmp_path: Path) -> None:
    # Each file is pre-tokenized on its own, like each text of an iterable: a pre-token never
    # spans two files. So count([a, b]) == count(a) + count(b) always, and it equals counting
    # the concatenated text only when the files meet at a safe boundary.
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    # unsafe boundary: "hello" + "world" would be one pre-token in the concatenation
    a.write_text("say hello", encoding="utf-8")
    b.write_text("world again", encoding="utf-8")
    both = bytepair.count([a, b])
    assert both == bytepair.count(a) + bytepair.count(b)
    assert both == bytepair.count(iter(["say hello", "world again"]))
    assert both != bytepair.count(iter(["say helloworld again"]))
    assert dict(both.items()) == {b"say": 1, b" hello": 1, b"world": 1, b" again": 1}
    tok = bytepair.train((a, b), 300)  # a tuple of paths works like a list
    assert_same(tok, ref_train(["say hello", "world again"], 300))
    # safe boundary: a file ending in "x\n" followed by one starting with a letter
    a.write_text("one line.\nlast\n", encoding="utf-8")
    b.write_text("next file\n", encoding="utf-8")
    assert bytepair.count([a, b]) == bytepair.count(iter(["one line.\nlast\nnext file\n"]))


def test_shard_counts_add_up(data_dir: Path) -> None:
    text = read_text(data_dir / "en_ewt" / "en_ewt.dev.txt")
    lines = text.split("\n")
    mid = len(lines) // 2
    first, second = "\n".join(lines[:mid]) + "\n", "\n".join(lines[mid:])
    a = bytepair.count(iter([first]), special_tokens=[EOT])
    b = bytepair.count(iter([second]), special_tokens=[EOT])
    expected = reference.count_pretokens([first, second], [EOT])
    total = a + b
    assert dict(total.items()) == dict(expected)
    assert total.total() == a.total() + b.total() == sum(expected.values())
    assert len(total) == len(expected)
    assert b + a == total
    assert total + bytepair.PretokenCounts() == total
    # and the sum trains like the two texts
    tok = bytepair.train_from_counts(total, 600, special_tokens=[EOT])
    assert_same(tok, ref_train([first, second], 600, [EOT]))


def test_pretoken_counts_api() -> None:
    counts = bytepair.count(iter(["low low lower lowest low"]))
    # pre-tokens: "low", " low" x2, " lower", " lowest"
    assert counts.total() == 5
    assert len(counts) == 4
    # most frequent first, ties by bytes
    assert counts.items() == [(b" low", 2), (b" lower", 1), (b" lowest", 1), (b"low", 1)]
    built = bytepair.PretokenCounts([(b"low", 1), (b" low", 2), (b" low", 1)])
    assert built.items() == [(b" low", 3), (b"low", 1)]
    empty = bytepair.PretokenCounts()
    assert len(empty) == 0 and empty.total() == 0 and empty.items() == []
    # iterated as a dict is: its pre-tokens (iteration fell back to counts[0], a TypeError)
    assert list(counts) == counts.keys() == [b" low", b" lower", b" lowest", b"low"]
    assert dict(counts) == {b" low": 2, b" lower": 1, b" lowest": 1, b"low": 1}
    assert list(empty) == [] and dict(empty) == {}
    assert list(reversed(counts)) == counts.keys()[::-1] and list(reversed(empty)) == []


def test_counts_past_64_bits_are_refused_not_clipped() -> None:
    # (QA) sums of counts saturated at 2^64 - 1 and a pair count of 2^64 wrapped to 0, so
    # training chose other merges silently. Now: a sum past 2^64 - 1 is a ValueError (the
    # counts unchanged); the total is exact; training refuses counts whose pairs could
    # pass 2^63 (pair counts are signed); just below that, it trains as the reference does
    top = 2**64 - 1
    a = bytepair.PretokenCounts({b"a": top, b"b": 1})
    with pytest.raises(ValueError, match="would pass 2\\^64 - 1"):
        a + bytepair.PretokenCounts({b"a": 1})
    with pytest.raises(ValueError, match="would pass 2\\^64 - 1"):
        a += bytepair.PretokenCounts({b"b": 5, b"a": 1})
    assert a[b"a"] == top and a[b"b"] == 1  # unchanged, not half-added
    with pytest.raises(ValueError, match="would pass 2\\^64 - 1"):
        bytepair.PretokenCounts([(b"a", top), (b"a", 1)])
    assert (a + bytepair.PretokenCounts({b"b": top - 1})).total() == 2 * top
    huge = bytepair.PretokenCounts({b"ab": 2**63, b" ab": 2**63, b"xy": 5})
    with pytest.raises(ValueError, match="too large to train on exactly"):
        bytepair.train_from_counts(huge, 258)
    # the largest counts allowed: their pairs add up to 2^63 - 1
    n = (2**63 - 1 - 5) // 3
    ok = {b"ab": n, b" ab": n, b"xy": 5}
    got = bytepair.train_from_counts(bytepair.PretokenCounts(ok), 258).merges
    words = [list(w) for w in ok]
    want = reference.merge_loop(words, list(ok.values()), {i: bytes([i]) for i in range(256)}, 258)
    assert got == want == [(b"a", b"b"), (b" ", b"ab")]
    # pre-tokens are bytes: a str says so (QA: "string argument without an encoding")
    with pytest.raises(TypeError, match="pre-tokens are bytes"):
        bytepair.PretokenCounts({"a": 1})


def test_pretoken_counts_take_numpy_counts_and_refuse_other_keys() -> None:
    # counts of any integer type are ints (numpy's were "counts must be ints"); a key that is
    # not bytes is a TypeError saying so (a str was "string argument without an encoding";
    # an int n looked up n zero bytes and gave 0)
    np = pytest.importorskip("numpy")
    counts = bytepair.PretokenCounts({b"ab": np.int64(3), b"cd": np.uint64(2**62)})
    assert counts.items() == [(b"cd", 2**62), (b"ab", 3)]
    assert counts == bytepair.PretokenCounts({b"ab": 3, b"cd": 2**62})
    assert type(counts[b"ab"]) is int and counts[bytearray(b"ab")] == 3
    assert bytepair.train_from_counts(counts, 258).merges == [(b"c", b"d"), (b"a", b"b")]
    with pytest.raises(TypeError, match=r"pre-tokens are bytes, got the str 'ab' \(its UTF-8"):
        counts["ab"]  # type: ignore[index]
    with pytest.raises(TypeError, match="pre-tokens are bytes, got int"):
        counts[2]  # type: ignore[index]
    for bad in (1.0, True, np.bool_(True), "3"):
        with pytest.raises(TypeError, match=r"counts must be ints in \[0, 2\*\*64\)"):
            bytepair.PretokenCounts({b"ab": bad})
    for bad in (-1, np.int64(-1), 2**64):
        with pytest.raises(ValueError, match=r"counts must be ints in \[0, 2\*\*64\)"):
            bytepair.PretokenCounts({b"ab": bad})


def test_pretoken_counts_items_order_on_corpus(data_dir: Path) -> None:
    text = read_text(data_dir / "cs336" / "tinystories_sample.txt")
    counts = bytepair.count(iter([text]), special_tokens=[EOT])
    expected = reference.count_pretokens([text], [EOT])
    assert counts.items() == sorted(expected.items(), key=lambda kv: (-kv[1], kv[0]))


# ---------------------------------------------------------------------------------------------
# ids, special tokens, threads


def test_id_layout(data_dir: Path) -> None:
    specials = [EOT, "<|pad|>", "<s>"]
    tok = bytepair.train(
        data_dir / "cs336" / "tinystories_sample.txt", 400, special_tokens=specials
    )
    vocab = tok.vocab
    assert sorted(vocab) == list(range(400))
    assert all(vocab[i] == bytes([i]) for i in range(256))
    assert [vocab[256 + k] for k in range(3)] == [s.encode() for s in specials]
    assert tok.special_tokens == {EOT: 256, "<|pad|>": 257, "<s>": 258}
    assert tok.eot_token == 256
    for k, (left, right) in enumerate(tok.merges):
        assert vocab[259 + k] == left + right
    assert tok.n_vocab == 400


def test_special_token_text_is_never_counted() -> None:
    specials = [EOT, "<s>"]
    only = [EOT * 50 + "<s>" * 20 + EOT, "<s>", EOT + "<s>" + EOT]
    counts = bytepair.count(iter(only), special_tokens=specials)
    assert len(counts) == 0 and counts.total() == 0
    # so such a corpus is empty: training on it raises (test_errors.py::test_empty_corpus)
    with pytest.raises(ValueError):
        bytepair.train(iter(only), 1000, special_tokens=specials)
    # the special tokens' characters would be by far the most frequent pairs if counted
    tok = bytepair.train(iter([EOT * 100 + " ab" + EOT]), 1000, special_tokens=[EOT])
    assert tok.merges == [(b"a", b"b"), (b" ", b"ab")]
    assert len(tok.vocab) == 259


def test_longest_special_token_wins_when_training() -> None:
    # "<s><s>" is a special token of its own: it is cut out whole, and so is "<s>"; with only
    # "<s>" registered, "<s><s>x" still leaves nothing between the two tokens
    texts = ["a<s><s>b", "<s>ab<s><s><s>"]
    for specials in (["<s>"], ["<s>", "<s><s>"], ["<s><s>", "<s>"]):
        tok = bytepair.train(iter(texts), 300, special_tokens=specials)
        assert_same(tok, ref_train(texts, 300, specials))
        assert tok.merges == [(b"a", b"b")]


def test_special_token_that_is_not_in_the_text_still_gets_its_id() -> None:
    tok = bytepair.train(iter(["aa bb"]), 300, special_tokens=["<never>"])
    assert tok.vocab[256] == b"<never>"
    assert_same(tok, ref_train(["aa bb"], 300, ["<never>"]))


def test_threads_do_not_change_the_result(data_dir: Path) -> None:
    path = data_dir / "en_ewt" / "en_ewt.dev.txt"
    default = bytepair.train(path, 600, special_tokens=[EOT])
    for threads in (1, 2, 3):
        tok = bytepair.train(path, 600, special_tokens=[EOT], threads=threads)
        assert tok.merges == default.merges and tok.vocab == default.vocab
    text = read_text(path)
    assert bytepair.count(iter([text]), threads=1) == bytepair.count(path)


def test_training_is_deterministic() -> None:
    texts = ["ab ba " * 7, "cd dc " * 7, "中文 " * 7]
    runs = [bytepair.train(iter(texts), 280).merges for _ in range(3)]
    assert runs[0] == runs[1] == runs[2] == ref_train(texts, 280)[1]


def test_iterable_of_many_texts_equals_reference() -> None:
    # a generator of many small texts (streamed in batches); each is its own document
    texts = [f"line {i} of {'ab' * (i % 7)} text\n" for i in range(5000)]
    tok = bytepair.train((t for t in texts), 400)
    assert_same(tok, ref_train(texts, 400))
    counts = bytepair.count(iter(texts))
    assert dict(counts.items()) == dict(reference.count_pretokens(texts))
    assert sum(Counter(dict(counts.items())).values()) == counts.total()


def test_progress_bars_report_counting_and_merging(data_dir: Path, capsys) -> None:
    # progress=True shows tqdm bars on stderr for both stages; the result is unchanged
    path = data_dir / "cs336" / "tinystories_sample.txt"
    tok = bytepair.train(path, 300, special_tokens=["<|endoftext|>"], progress=True)
    err = capsys.readouterr().err
    assert "counting pre-tokens" in err and "merging" in err
    assert err.count("100%") == 2  # both bars reach their total (bytes, merges)
    assert f"{len(tok.merges)}/{len(tok.merges)}" in err
    quiet = bytepair.train(path, 300, special_tokens=["<|endoftext|>"], progress=False)
    assert capsys.readouterr().err == ""
    assert quiet.merges == tok.merges


def test_one_huge_pre_token_trains_loads_and_encodes() -> None:
    # "a" * 2**20 is one pre-token; BPE doubles it: a, aa, aaaa, ... 2**20 (20 merges), then
    # no pair is left. Tokens a megabyte long must not make building the encoder quadratic
    # (it once took minutes), and encoding must stay exact.
    with pytest.warns(UserWarning, match="a learned token is 1048576 bytes long"):
        tok = bytepair.train(iter(["a" * 2**20]), 1000)
    assert tok.merges == [(b"a" * 2**k, b"a" * 2**k) for k in range(20)]
    assert tok.encode("a" * 2**20) == [256 + 19]
    # 1 + 2 + 4 + ... : 13 = 8 + 4 + 1 -> merges are greedy from the left by rank
    ref = reference.ReferenceTokenizer(tok.vocab, tok.merges)
    assert tok.encode("a" * 13) == ref.encode("a" * 13)
    copy = bytepair.Tokenizer(tok.vocab, tok.merges)
    assert copy.encode("a" * 1000) == ref.encode("a" * 1000)


def test_ctrl_c_interrupts_the_merge_loop() -> None:
    # One pre-token of 2 MB: each merge goes over all of it (a tenth of a second or so), and
    # Ctrl-C waited for the last one (QA: still running 30 s after it). It arrives now
    # between two merges; train_continue takes the same way.
    import random
    import time

    from interrupts import seconds_to_interrupt

    rng = random.Random(5)
    text = "".join(rng.choice("abcdefgh") for _ in range(2_000_000))
    counts = bytepair.count(iter([text]))
    t0 = time.perf_counter()
    whole = bytepair.train_from_counts(counts, 256 + 600)
    took_whole = time.perf_counter() - t0
    assert len(whole.merges) == 600
    runs = [
        lambda: bytepair.train_from_counts(counts, 256 + 600),
        lambda: bytepair.train_from_counts(counts, 256 + 1200, base=whole),
    ]
    for run in runs:
        took = seconds_to_interrupt(run, took_whole / 10, took_whole / 2)
        assert min(took) < took_whole / 2, (took, took_whole)
