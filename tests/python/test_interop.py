"""Interop: every format round-trips, and tiktoken and HF tokenizers, loading the files
bytepair writes, give bytepair's ids on the lines of every shared corpus.

Oracles: ``tiktoken.Encoding`` (from ``Tokenizer.to_tiktoken()`` and from the ``.tiktoken``
file through tiktoken's own loader), ``tokenizers.Tokenizer.from_file`` on the exported
``tokenizer.json``, and ``transformers.PreTrainedTokenizerFast(tokenizer_file=...)``.
Tokenizers are trained on a slice of each shared corpus (with and without special tokens,
with the gpt2 and o200k patterns); the OpenAI encodings come from the shared rank files.
Large corpora are sliced to keep the suite fast (the README records a run on every line of
every corpus in full).
"""

from __future__ import annotations

import base64
import json
import pickle
from pathlib import Path

import pytest

import bytepair
from bytepair.formats import hf as hf_format

tiktoken = pytest.importorskip("tiktoken")
tokenizers = pytest.importorskip("tokenizers")
tiktoken_load = pytest.importorskip("tiktoken.load")

EOT = "<|endoftext|>"
SPECIALS = [EOT, "<|pad|>", "\n\n<sep>\n\n"]
FORMATS = ["native", "gpt2", "tiktoken", "hf"]
LOOKAHEAD_RE = r"""\p{L}+(?=\s)|\p{L}+|\p{N}|\s+(?!\S)|\s|[^\s\p{L}\p{N}]+"""

# every shared corpus: (path under the data folder, characters read for the tests)
CORPORA = {
    "corpus.en": ("cs336/corpus.en", None),
    "tinystories": ("cs336/tinystories_sample.txt", None),
    "address": ("cs336/address.txt", None),
    "german": ("cs336/german.txt", None),
    "ewt": ("en_ewt/en_ewt.dev.txt", None),
    "zh": ("corpora/multilingual/zh.txt", 60_000),
    "ja": ("corpora/multilingual/ja.txt", 60_000),
    "ru": ("corpora/multilingual/ru.txt", 60_000),
    "ar": ("corpora/multilingual/ar.txt", 60_000),
    "hi": ("corpora/multilingual/hi.txt", 60_000),
    "emoji_cldr": ("corpora/multilingual/emoji_cldr.txt", 60_000),
    "emoji_test": ("corpora/multilingual/emoji-test.txt", 60_000),
    "gutenberg": ("corpora/english_gutenberg.txt", 120_000),
    "stdlib": ("corpora/python_stdlib.txt", 120_000),
}


def read_text(path: Path, chars: int | None = None) -> str:
    with open(path, encoding="utf-8", newline="") as f:
        return f.read() if chars is None else f.read(chars)


@pytest.fixture(scope="module")
def corpora(data_dir: Path) -> dict[str, str]:
    return {name: read_text(data_dir / rel, n) for name, (rel, n) in CORPORA.items()}


@pytest.fixture(scope="module")
def all_lines(corpora: dict[str, str]) -> list[str]:
    """Every line of every corpus slice, line ends kept, plus lines with special tokens."""
    lines = [line for text in corpora.values() for line in text.splitlines(keepends=True)]
    return lines + [f"a{EOT}b\n", f"{EOT}{EOT}", "x <|pad|>\n\n<sep>\n\n y", "\r\n\t \x00"]


@pytest.fixture(scope="module")
def mixed_lines(corpora: dict[str, str]) -> list[str]:
    """The first 60 lines of every corpus, and lines with special tokens."""
    lines = [line for text in corpora.values() for line in text.splitlines(keepends=True)[:60]]
    return lines + [f"a{EOT}b\n", f"{EOT}{EOT}", "x <|pad|>\n\n<sep>\n\n y", "\r\n\t \x00"]


def own_lines(name: str, corpora: dict[str, str], mixed_lines: list[str]) -> list[str]:
    """The lines of the corpus slice a tokenizer was trained on, and the mixed lines."""
    corpus = name.split("-")[0]
    return corpora[corpus][:20_000].splitlines(keepends=True) + mixed_lines


def _train_cases(corpora: dict[str, str]) -> dict[str, bytepair.Tokenizer]:
    cases = {}
    for name, text in corpora.items():
        piece = text[:40_000]
        cases[f"{name}-gpt2"] = bytepair.train(iter([piece]), 256 + 300)
        cases[f"{name}-o200k-specials"] = bytepair.train(
            iter([piece]), 256 + len(SPECIALS) + 300, special_tokens=SPECIALS, pattern="o200k"
        )
    return cases


@pytest.fixture(scope="module")
def trained(corpora: dict[str, str]) -> dict[str, bytepair.Tokenizer]:
    """Per corpus: gpt2 pattern without specials; o200k pattern with three specials."""
    return _train_cases(corpora)


@pytest.fixture(scope="module")
def encodings(data_dir: Path) -> dict[str, bytepair.Tokenizer]:
    folder = data_dir / "tiktoken"
    return {
        "gpt2": bytepair.get_encoding("gpt2", path=folder / "r50k_base.tiktoken"),
        "cl100k_base": bytepair.get_encoding("cl100k_base", path=folder / "cl100k_base.tiktoken"),
        "o200k_base": bytepair.get_encoding("o200k_base", path=folder / "o200k_base.tiktoken"),
    }


@pytest.fixture(scope="module")
def exported(encodings, tmp_path_factory) -> dict[str, dict[str, Path]]:
    """Each encoding written once in every format: {name: {format: path}}."""
    out: dict[str, dict[str, Path]] = {}
    for name, tok in encodings.items():
        folder = tmp_path_factory.mktemp(name)
        out[name] = {}
        for fmt in FORMATS:
            out[name][fmt] = folder / f"out-{fmt}"
            tok.save(out[name][fmt], format=fmt)
    return out


@pytest.fixture(scope="module")
def hf_encodings(exported) -> dict[str, object]:
    return {name: tokenizers.Tokenizer.from_file(str(p["hf"])) for name, p in exported.items()}


def assert_identical(a: bytepair.Tokenizer, b: bytepair.Tokenizer) -> None:
    assert a.vocab == b.vocab
    assert a.merges == b.merges
    assert a.special_tokens == b.special_tokens
    assert a.pattern == b.pattern
    assert a.n_vocab == b.n_vocab


def save_and_load(tok: bytepair.Tokenizer, fmt: str, tmp_path: Path) -> bytepair.Tokenizer:
    tmp_path.mkdir(parents=True, exist_ok=True)
    path = tmp_path / f"out-{fmt}"
    tok.save(path, format=fmt)
    if fmt == "tiktoken":  # a rank file holds neither pattern nor special tokens
        return bytepair.load(path, pattern=tok.pattern, special_tokens=tok.special_tokens)
    return bytepair.load(path)


# ---------------------------------------------------------------------------------------------
# round trips


@pytest.mark.parametrize("fmt", FORMATS)
def test_trained_round_trip_every_format(trained, mixed_lines, fmt: str, tmp_path: Path) -> None:
    for name, tok in trained.items():
        loaded = save_and_load(tok, fmt, tmp_path / name)
        assert_identical(tok, loaded)
        expected = tok.encode_batch(mixed_lines, allowed_special="all")
        assert loaded.encode_batch(mixed_lines, allowed_special="all") == expected
        assert bytepair.formats.detect(tmp_path / name / f"out-{fmt}") == fmt


@pytest.mark.parametrize("fmt", FORMATS)
def test_encodings_round_trip_every_format(encodings, exported, fmt: str) -> None:
    for name, tok in encodings.items():
        path = exported[name][fmt]
        if fmt == "tiktoken":
            loaded = bytepair.load(path, pattern=tok.pattern, special_tokens=tok.special_tokens)
        else:
            loaded = bytepair.load(path)
        assert_identical(tok, loaded)
        assert bytepair.formats.detect(path) == fmt


def test_round_trip_chains_through_every_format(trained, tmp_path: Path) -> None:
    # native -> gpt2 -> hf -> tiktoken -> native: still the same tokenizer
    tok = trained["zh-o200k-specials"]
    current = tok
    for step, fmt in enumerate(["native", "gpt2", "hf", "tiktoken", "native"]):
        current = save_and_load(current, fmt, tmp_path / str(step))
    assert_identical(tok, current)


def test_native_metadata(trained, corpora, tmp_path: Path) -> None:
    tok = trained["corpus.en-gpt2"]
    piece = corpora["corpus.en"][:40_000]
    assert tok.metadata["training"] == {
        "corpus_bytes": len(piece.encode("utf-8")),
        "pretokens": len(bytepair.reference.pretokenize(piece)),  # the oracle's pre-tokens
    }
    path = tmp_path / "tok.json"
    tok.save(path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["metadata"]["training"] == tok.metadata["training"]
    assert doc["metadata"]["n_vocab"] == 556
    assert doc["metadata"]["bytepair_version"] == bytepair.__version__
    assert bytepair.load(path).metadata == tok.metadata
    assert pickle.loads(pickle.dumps(tok)).metadata == tok.metadata
    # a version-1 file of before (no metadata at all) still reads
    del doc["metadata"]
    path.write_text(json.dumps(doc), encoding="utf-8")
    old = bytepair.load(path)
    assert old.metadata == {} and old.merges == tok.merges


# ---------------------------------------------------------------------------------------------
# tiktoken


def _tiktoken_from_file(tok: bytepair.Tokenizer, path: Path):
    """tiktoken's own loader on the exported rank file, with the pattern and specials."""
    tok.save(path, format="tiktoken")
    ranks = tiktoken_load.load_tiktoken_bpe(str(path))
    return tiktoken.Encoding(
        "exported", pat_str=tok.pattern, mergeable_ranks=ranks, special_tokens=tok.special_tokens
    )


def test_tiktoken_gives_bytepair_ids_trained(
    trained, corpora, mixed_lines, tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")  # tiktoken would cache files by path
    for name, tok in trained.items():
        lines = own_lines(name, corpora, mixed_lines)
        expected = tok.encode_batch(lines, allowed_special="all")
        for enc in (tok.to_tiktoken(), _tiktoken_from_file(tok, tmp_path / f"{name}.tiktoken")):
            assert enc.encode_batch(lines, allowed_special="all") == expected, name
            assert enc.n_vocab == tok.n_vocab


def test_tiktoken_gives_bytepair_ids_encodings(encodings, all_lines, tmp_path: Path) -> None:
    for name, tok in encodings.items():
        expected = tok.encode_batch(all_lines, disallowed_special=())
        enc = tok.to_tiktoken(name)
        assert enc.encode_ordinary_batch(all_lines) == expected, name
        assert enc.special_tokens_set == tok.special_tokens_set
        assert enc.encode(EOT, allowed_special="all") == [tok.eot_token]


def test_tiktoken_file_is_the_official_one(encodings, data_dir: Path, tmp_path: Path) -> None:
    # writing cl100k_base's ranks gives back OpenAI's file byte for byte
    tok = encodings["cl100k_base"]
    tok.save(tmp_path / "cl100k.tiktoken", format="tiktoken")
    official = data_dir / "tiktoken" / "cl100k_base.tiktoken"
    assert (tmp_path / "cl100k.tiktoken").read_bytes() == official.read_bytes()


def test_tiktoken_rank_file_lines(tmp_path: Path) -> None:
    tok = bytepair.train(iter(["ab ab ab"]), 257)  # one merge: b"a" + b"b" -> 256
    tok.save(tmp_path / "t", format="tiktoken")
    lines = (tmp_path / "t").read_bytes().splitlines()
    assert len(lines) == 257
    assert lines[97] == base64.b64encode(b"a") + b" 97"
    assert lines[256] == b"YWI= 256"  # base64("ab")


# ---------------------------------------------------------------------------------------------
# HF tokenizers and transformers


def _hf(tok: bytepair.Tokenizer, tmp_path: Path):
    path = tmp_path / "tokenizer.json"
    tok.save(path, format="hf")
    return tokenizers.Tokenizer.from_file(str(path)), path


def test_hf_gives_bytepair_ids_trained(trained, corpora, mixed_lines, tmp_path: Path) -> None:
    for name, tok in trained.items():
        hf, _ = _hf(tok, tmp_path)
        lines = own_lines(name, corpora, mixed_lines)
        expected = tok.encode_batch(lines, allowed_special="all")
        got = [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]
        assert got == expected, name
        assert hf.decode_batch(expected, skip_special_tokens=False) == [
            tok.decode(ids) for ids in expected
        ]


def test_hf_gives_bytepair_ids_encodings(encodings, hf_encodings, all_lines) -> None:
    for name, tok in encodings.items():
        hf = hf_encodings[name]
        expected = tok.encode_batch(all_lines, allowed_special="all")
        got = [e.ids for e in hf.encode_batch(all_lines, add_special_tokens=False)]
        assert got == expected, name
        assert hf.get_vocab_size() == len(tok.vocab)


@pytest.mark.parametrize(
    "text",
    [
        "1234567 digits in threes",  # cl100k: \p{N}{1,3}+ is not possessive in Oniguruma
        "trailing spaces   \n\n  ",
        "  \n\t\r\n x",
        "HELLO'S World'LL ſ K",  # case-insensitive contractions, long s, Kelvin sign
        "e\u0301\u0300 \u00a0\u2003x \u3000y",
    ],
)
def test_hf_matches_on_pattern_corners(encodings, hf_encodings, text: str) -> None:
    for name, tok in encodings.items():
        hf = hf_encodings[name]
        assert hf.encode(text, add_special_tokens=False).ids == tok.encode(text)


def test_hf_custom_lookahead_pattern(corpora, all_lines, tmp_path: Path) -> None:
    # a custom regex goes into the Split as is; this one means the same to Oniguruma
    tok = bytepair.train(iter([corpora["corpus.en"]]), 600, pattern=LOOKAHEAD_RE)
    hf, path = _hf(tok, tmp_path)
    expected = tok.encode_batch(all_lines, allowed_special="all")
    assert [e.ids for e in hf.encode_batch(all_lines, add_special_tokens=False)] == expected
    assert_identical(tok, bytepair.load(path))


def test_hf_document_layout(trained, tmp_path: Path) -> None:
    tok = trained["tinystories-o200k-specials"]
    _, path = _hf(tok, tmp_path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    split, byte_level = doc["pre_tokenizer"]["pretokenizers"]
    assert split["pattern"] == {"Regex": tok.pattern} and split["behavior"] == "Isolated"
    assert byte_level["type"] == "ByteLevel" and byte_level["use_regex"] is False
    assert doc["decoder"]["type"] == "ByteLevel"
    assert doc["model"]["type"] == "BPE" and doc["model"]["ignore_merges"] is True
    assert [(t["content"], t["id"], t["special"]) for t in doc["added_tokens"]] == [
        (s, 256 + k, True) for k, s in enumerate(SPECIALS)
    ]
    # the first merge is the first learned one, in the byte alphabet (a space is "Ġ")
    left, right = tok.merges[0]
    alphabet = _alphabet()
    spelt = "".join(alphabet[b] for b in left) + " " + "".join(alphabet[b] for b in right)
    assert doc["model"]["merges"][0] == spelt


def _alphabet() -> dict[int, str]:
    from bytepair.reference.gpt2_bytes import bytes_to_unicode

    return bytes_to_unicode()


def test_hf_cl100k_pattern_is_rewritten_for_oniguruma(encodings, exported) -> None:
    path = exported["cl100k_base"]["hf"]
    doc = json.loads(path.read_text(encoding="utf-8"))
    regex = doc["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"]
    assert regex == hf_format.HF_CL100K_PATTERN and "{1,3}+" not in regex
    # the possessive form really does differ in Oniguruma: digits are no longer in threes
    doc["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = encodings["cl100k_base"].pattern
    raw = tokenizers.Tokenizer.from_str(json.dumps(doc))
    tok = encodings["cl100k_base"]
    assert raw.encode("1234567", add_special_tokens=False).ids != tok.encode("1234567")
    assert tok.encode("1234567") == [4513, 10961, 22]  # "123" "456" "7", as tiktoken


def test_transformers_loads_exported_file(
    trained, encodings, exported, all_lines, tmp_path: Path
) -> None:
    transformers = pytest.importorskip("transformers")
    for tok in (trained["ja-o200k-specials"], encodings["o200k_base"]):
        if tok is encodings["o200k_base"]:
            path = exported["o200k_base"]["hf"]
        else:
            _, path = _hf(tok, tmp_path)
        fast = transformers.PreTrainedTokenizerFast(tokenizer_file=str(path))
        lines = all_lines[:2000]
        expected = tok.encode_batch(lines, allowed_special="all")
        got = fast(lines, add_special_tokens=False)["input_ids"]
        assert got == expected
        assert fast.decode(expected[5]) == tok.decode(expected[5])
        assert fast.convert_tokens_to_ids(EOT) == tok.eot_token


# ---------------------------------------------------------------------------------------------
# reading files of the other libraries


def test_read_hf_gpt2_style_file(data_dir: Path, encodings, all_lines, tmp_path: Path) -> None:
    # a GPT-2 style tokenizer.json, as HF builds it from GPT-2's vocab.json + merges.txt
    model = tokenizers.models.BPE.from_file(
        str(data_dir / "gpt2" / "vocab.json"), str(data_dir / "gpt2" / "merges.txt")
    )
    hf = tokenizers.Tokenizer(model)
    hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = tokenizers.decoders.ByteLevel()
    hf.add_special_tokens([tokenizers.AddedToken(EOT, special=True)])
    path = tmp_path / "gpt2-tokenizer.json"
    hf.save(str(path))
    tok = bytepair.load(path)
    assert tok.pattern == bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, []).pattern
    assert tok.special_tokens == {EOT: 50256}
    gpt2 = encodings["gpt2"]
    assert tok.vocab == gpt2.vocab and tok.merges == gpt2.merges
    lines = all_lines[:3000]
    expected = [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)]
    assert tok.encode_batch(lines, allowed_special="all") == expected


def test_read_hf_split_style_file_written_by_tokenizers(tmp_path: Path) -> None:
    # built with the tokenizers API (merges as [left, right] pairs, as 0.20+ writes them)
    alphabet = _alphabet()
    vocab = {alphabet[b]: b for b in range(256)}
    vocab.update({"ĠĠ": 256, "ĊĊ": 257, "ab": 258, "Ġab": 259})
    merges = [("Ġ", "Ġ"), ("Ċ", "Ċ"), ("a", "b"), ("Ġ", "ab")]
    hf = tokenizers.Tokenizer(tokenizers.models.BPE(vocab=vocab, merges=merges))
    hf.pre_tokenizer = tokenizers.pre_tokenizers.Sequence(
        [
            tokenizers.pre_tokenizers.Split(tokenizers.Regex(LOOKAHEAD_RE), behavior="isolated"),
            tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    hf.add_special_tokens([tokenizers.AddedToken("<s>", special=True)])
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    tok = bytepair.load(path)
    assert tok.pattern == LOOKAHEAD_RE
    assert tok.merges == [(b" ", b" "), (b"\n", b"\n"), (b"a", b"b"), (b" ", b"ab")]
    assert tok.special_tokens == {"<s>": 260}
    text = "ab ab  \n\n<s>x ab"
    assert tok.encode(text, allowed_special="all") == hf.encode(text).ids


def test_read_gpt2_folder_from_tiktoken_data_gym(data_dir: Path, encodings) -> None:
    # GPT-2's own files: the ids of vocab.json, <|endoftext|> special by GPT-2's convention
    tok = bytepair.load(data_dir / "gpt2")
    gpt2 = encodings["gpt2"]
    assert tok.vocab == gpt2.vocab and tok.merges == gpt2.merges
    assert tok.special_tokens == {EOT: 50256}


def test_read_openai_encoder_json_and_vocab_bpe(data_dir: Path, encodings, tmp_path) -> None:
    # OpenAI's names for the two files; vocab.bpe starts with "#version: 0.2"
    (tmp_path / "encoder.json").write_bytes((data_dir / "gpt2" / "vocab.json").read_bytes())
    (tmp_path / "vocab.bpe").write_bytes((data_dir / "gpt2" / "vocab.bpe").read_bytes())
    tok = bytepair.load(tmp_path)
    assert tok.merges == encodings["gpt2"].merges and tok.special_tokens == {EOT: 50256}


def test_gpt2_files_read_by_tiktoken(encodings, exported) -> None:
    # the GPT-2 encoding written as vocab.json + merges.txt is what tiktoken's data-gym loader
    # reads (it requires GPT-2's ids for single bytes, so only GPT-2's own vocabulary)
    folder = exported["gpt2"]["gpt2"]
    ranks = tiktoken_load.data_gym_to_mergeable_bpe_ranks(
        str(folder / "merges.txt"), str(folder / "vocab.json")
    )
    tok = encodings["gpt2"]
    assert ranks == {b: i for i, b in tok.vocab.items() if i != tok.eot_token}


def test_gpt2_files_read_by_hf(trained, corpora, mixed_lines, tmp_path: Path) -> None:
    # HF's BPE reading the written vocab.json + merges.txt gives bytepair's ids
    for name in ("ru-gpt2", "stdlib-gpt2", "emoji_cldr-gpt2"):
        tok = trained[name]
        tok.save(tmp_path / name, format="gpt2")
        model = tokenizers.models.BPE.from_file(
            str(tmp_path / name / "vocab.json"),
            str(tmp_path / name / "merges.txt"),
            ignore_merges=True,
        )
        hf = tokenizers.Tokenizer(model)
        hf.pre_tokenizer = tokenizers.pre_tokenizers.ByteLevel(add_prefix_space=False)
        lines = own_lines(name, corpora, mixed_lines)
        expected = tok.encode_batch(lines, allowed_special="all")
        assert [e.ids for e in hf.encode_batch(lines, add_special_tokens=False)] == expected


# ---------------------------------------------------------------------------------------------
# awkward tokens


def test_awkward_tokens_survive_every_format(tmp_path: Path, all_lines) -> None:
    # spaces, newlines, CR, tab, NUL, quotes, backslash, and half UTF-8 characters
    texts = [
        ' the the the\n\n\n\n\r\n\r\n\t\t "quoted" \\back\\slash\\ \x00\x00 中文中文 👍🏽👍🏽 '
    ] * 20
    tok = bytepair.train(iter(texts), 420, special_tokens=[EOT, "\n\n<sep>\n\n", "中文"])
    values = set(tok.vocab.values())
    assert {b"\n\n", b" the", b"\n\n\n\n\r\n\r\n\t\t", b" \x00\x00"} <= values
    assert any(not _is_utf8(b) for b in values)
    sample = texts[0] + "<|endoftext|>x\n\n<sep>\n\n中文"
    for fmt in FORMATS:
        loaded = save_and_load(tok, fmt, tmp_path / fmt)
        assert_identical(tok, loaded)
    hf, _ = _hf(tok, tmp_path)
    assert hf.encode(sample, add_special_tokens=False).ids == tok.encode(
        sample, allowed_special="all"
    )
    assert tok.to_tiktoken().encode(sample, allowed_special="all") == tok.encode(
        sample, allowed_special="all"
    )


def _is_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
