"""``bytepair.get_encoding``: the OpenAI encodings, equal to tiktoken built offline.

Oracle: tiktoken ``Encoding`` objects built from the same shared rank files and
``encodings.json`` (``oracles.py``); GPT-2's own ``merges.txt`` for the recovered merges.
"""

from __future__ import annotations

import hashlib
import io
import pickle
import random
import re
import shutil
import subprocess
import sys
import threading
import warnings
from pathlib import Path

import numpy as np
import pytest
import tiktoken
from corpus import (
    ALL_FILES,
    BIG_FILES,
    any_text,
    assert_all_equal,
    assert_ids_equal,
    read_text,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from oracles import load_ranks, tiktoken_encoding

import bytepair
from bytepair import encodings

NAMES = ["r50k_base", "p50k_base", "cl100k_base", "o200k_base"]
EOT = "<|endoftext|>"


@pytest.fixture(autouse=True)
def _local_files_only(local_encodings: None) -> None:
    """Every test here reads rank files from the shared data only (conftest)."""


# every shared corpus file; the two big ones as 1 MB slices (GPT-2 = r50k gets 2 x 6 MB in
# test_encode.py)
SLICE_CHARS = 1_000_000


@pytest.mark.parametrize("rel", ALL_FILES)
@pytest.mark.parametrize("name", ["p50k_base", "cl100k_base", "o200k_base"])
def test_equals_tiktoken_on_every_corpus(data_dir: Path, name: str, rel: str) -> None:
    tok = bytepair.get_encoding(name)
    enc = tiktoken_encoding(data_dir, name)
    text = read_text(data_dir / rel)
    if rel in BIG_FILES:
        text = text[:SLICE_CHARS]
    lines = text.splitlines(keepends=True)
    # every line, then the whole text in one call (pre-tokens across line ends)
    assert_all_equal(tok.encode_ordinary_batch(lines), enc.encode_ordinary_batch(lines), lines)
    ids = tok.encode_ordinary(text)
    assert_ids_equal(ids, enc.encode_ordinary(text))
    assert tok.decode(ids) == text
    # a batch of long texts: each encoded in parts on two threads, joined exactly
    batch = tok.encode_ordinary_batch([text, lines[0], text[len(text) // 3 :]], num_threads=2)
    assert_ids_equal(batch[0], ids)
    assert_ids_equal(batch[2], enc.encode_ordinary(text[len(text) // 3 :]))


@pytest.mark.parametrize("name", NAMES)
def test_encoding_shape(data_dir: Path, name: str) -> None:
    tok = bytepair.get_encoding(name)
    enc = tiktoken_encoding(data_dir, name)
    assert tok.n_vocab == enc.n_vocab
    assert tok.special_tokens == enc._special_tokens
    assert tok.pattern == enc._pat_str
    assert tok.eot_token == enc.eot_token


def test_gpt2_is_r50k_and_p50k_edit_adds_fim(data_dir: Path) -> None:
    gpt2, r50k = bytepair.get_encoding("gpt2"), bytepair.get_encoding("r50k_base")
    assert gpt2.vocab == r50k.vocab and gpt2.special_tokens == {EOT: 50256}
    edit = bytepair.get_encoding("p50k_edit")
    # tiktoken's p50k_edit: p50k ranks plus three FIM tokens after them
    fim = {"<|fim_prefix|>": 50281, "<|fim_middle|>": 50282, "<|fim_suffix|>": 50283}
    enc = tiktoken.Encoding(
        "p50k_edit",
        pat_str=tiktoken_encoding(data_dir, "p50k_base")._pat_str,
        mergeable_ranks=load_ranks(data_dir / "tiktoken" / "p50k_base.tiktoken"),
        special_tokens={EOT: 50256, **fim},
    )
    text = "def f():<|fim_prefix|>    return 1<|fim_suffix|>\n<|endoftext|>"
    assert edit.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")


# Regression cases from public reports (issue 3), ids from tiktoken.
REPORTED = [
    ("cl100k_base", "I'M we'll THEY'RE we'd"),
    ("cl100k_base", "'RE"),
    ("cl100k_base", "a  b"),
    ("cl100k_base", "This is an \nexample"),
    ("cl100k_base", "1 2 3 4 5"),
    ("cl100k_base", "a\r\nb"),
    ("cl100k_base", "hello   "),
    ("r50k_base", "\u201cwrote jack a letter\u201d"),
    ("o200k_base", "<|endoftext|>"),
    ("o200k_base", "\ud83d\ude00 and \ud800 alone"),
]


@pytest.mark.parametrize(("name", "text"), REPORTED)
def test_reported_cases(data_dir: Path, name: str, text: str) -> None:
    tok, enc = bytepair.get_encoding(name), tiktoken_encoding(data_dir, name)
    assert tok.encode(text, disallowed_special=()) == enc.encode(text, disallowed_special=())


def test_reported_values(data_dir: Path) -> None:
    cl100k = bytepair.get_encoding("cl100k_base")
    assert len(cl100k.encode("I'M we'll THEY'RE we'd")) == 8
    assert len(cl100k.encode("'RE")) == 1
    assert cl100k.encode("1 2 3 4 5") == [16, 220, 17, 220, 18, 220, 19, 220, 20]
    pieces = [cl100k.decode([t]) for t in cl100k.encode("a  b")]
    assert pieces == ["a", " ", " b"]
    o200k = bytepair.get_encoding("o200k_base")
    assert len(o200k.encode_ordinary(EOT)) == 7
    assert o200k.encode(EOT, allowed_special="all") == [199999]
    assert o200k.encode("") == []


# contractions in every case, digit runs, CRLF and special-token look-alikes, mixed with
# any Unicode and whitespace runs (corpus.any_text)
lookalike_text = st.lists(
    st.one_of(
        st.sampled_from(
            [
                "'s",
                "'S",
                "'re",
                "'RE",
                "'Ll",
                "n't",
                "'",
                "1234567",
                " 12",
                "3.14",
                "\r\n",
                "\r\n\r\n",
                " \n",
                "  ",
                "\t\n ",
                "<|endoftext|",
                "<|endoftext|>",
                "|>",
                "<|fim_prefix|>",
                "<|endofprompt|>",
                "<|",
                "HELLO",
                "CamelCase",
                "ÀÉÎ",
                "ß",
            ]
        ),
        any_text,
    ),
    max_size=20,
).map("".join)


@settings(deadline=None)  # the first example loads the rank files
@given(lookalike_text)
def test_equals_tiktoken_on_any_text(data_dir: Path, text: str) -> None:
    for name in NAMES:
        tok, enc = bytepair.get_encoding(name), tiktoken_encoding(data_dir, name)
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
        allowed = tok.encode(text, allowed_special="all")
        assert allowed == enc.encode(text, allowed_special="all")
        # lone surrogates come back as U+FFFD, as in tiktoken
        assert tok.decode(allowed) == text.encode("utf-16", "surrogatepass").decode(
            "utf-16", "replace"
        )


def test_recovered_merges_are_gpt2s(data_dir: Path) -> None:
    # a rank file has no merge list; recovered from the ranks, it must be GPT-2's own
    gpt2 = bytepair.get_encoding("gpt2")
    files = bytepair.Tokenizer.from_files(
        data_dir / "gpt2" / "vocab.json", data_dir / "gpt2" / "merges.txt"
    )
    assert gpt2.merges == files.merges


def test_native_round_trip_of_a_rank_encoding(data_dir: Path, tmp_path: Path) -> None:
    tok = bytepair.get_encoding("cl100k_base")
    tok.save(tmp_path / "cl100k.json")
    back = bytepair.load(tmp_path / "cl100k.json")
    text = read_text(data_dir / "corpora" / "multilingual" / "ja.txt")[:100_000]
    text += read_text(data_dir / "corpora" / "python_stdlib.txt")[:100_000]
    text += "<|endoftext|><|endofprompt|>"
    assert back.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")
    assert back.vocab == tok.vocab


def test_known_rank_file_with_another_pattern_warns(data_dir: Path, tmp_path: Path) -> None:
    path = data_dir / "tiktoken" / "cl100k_base.tiktoken"
    with pytest.warns(UserWarning, match=r"rank file of cl100k_base, whose pattern is 'cl100k'; "):
        wrong = bytepair.load(path, pattern="gpt2")
    assert wrong.encode("1234567") != bytepair.get_encoding("cl100k_base").encode("1234567")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        right = bytepair.load(path, pattern="cl100k", special_tokens={"<|endoftext|>": 100257})
        assert right.encode("1234567") == [4513, 10961, 22]  # "123" "456" "7", as tiktoken
        # a rank file bytepair does not know may have any pattern
        small = tmp_path / "small.tiktoken"
        small.write_bytes(b"".join(path.read_bytes().splitlines(keepends=True)[:300]))
        assert bytepair.load(small, pattern="gpt2").n_vocab == 300


def test_lookup_order_and_tiktoken_cache_names(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BYTEPAIR_DATA")
    monkeypatch.setattr(encodings, "_CHECKOUT_DATA", None)  # (not beside a checkout)
    with pytest.raises(FileNotFoundError, match="r50k_base.tiktoken"):
        bytepair.get_encoding("r50k_base")
    # tiktoken's cache: files named by the SHA-1 of their URL
    cache = tmp_path / "tk"
    cache.mkdir()
    url = "https://openaipublic.blob.core.windows.net/encodings/r50k_base.tiktoken"
    shutil.copy(
        data_dir / "tiktoken" / "r50k_base.tiktoken", cache / hashlib.sha1(url.encode()).hexdigest()
    )
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    assert bytepair.get_encoding("r50k_base").encode("hello world") == [31373, 995]
    # a damaged copy in the cache is passed over for a good one (as tiktoken fetches it
    # again); with no good copy anywhere, the error names the damaged file
    encodings._cache.clear()
    damaged = cache / hashlib.sha1(url.encode()).hexdigest()
    damaged.write_bytes(damaged.read_bytes()[:-10])
    monkeypatch.setenv("BYTEPAIR_DATA", str(data_dir))
    assert bytepair.get_encoding("r50k_base").encode("hello world") == [31373, 995]
    encodings._cache.clear()
    monkeypatch.delenv("BYTEPAIR_DATA")
    monkeypatch.setenv("BYTEPAIR_OFFLINE", "1")
    with pytest.raises(ValueError, match=f"{damaged.name}: SHA-256 .* damaged"):
        bytepair.get_encoding("r50k_base")
    # an explicit path wins
    encodings._cache.clear()
    own = tmp_path / "own"
    own.mkdir()
    shutil.copy(data_dir / "tiktoken" / "r50k_base.tiktoken", own / "x.tiktoken")
    assert bytepair.get_encoding("gpt2", path=own / "x.tiktoken").encode("hi") == [5303]
    # beside a source checkout (<checkout>/../shared/data) with no setting, past the damaged
    # cached copy; and where that folder really is for this checkout
    encodings._cache.clear()
    monkeypatch.setattr(encodings, "_CHECKOUT_DATA", data_dir)
    assert bytepair.get_encoding("r50k_base").encode("hello world") == [31373, 995]
    checkout = Path(encodings.__file__).resolve().parents[2]
    assert (checkout / "Cargo.toml").is_file()  # (an editable install of this checkout)
    assert encodings._CHECKOUT_DATA_DEFAULT == checkout.parent / "shared" / "data"


def test_download_when_no_copy_is_at_hand(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No copy anywhere: fetched from tiktoken's URL (served here by a stand-in for urllib's
    # urlopen: the tests have no network), checked by hash, kept in tiktoken's cache under
    # tiktoken's name for it.
    url = "https://openaipublic.blob.core.windows.net/encodings/r50k_base.tiktoken"
    good = (data_dir / "tiktoken" / "r50k_base.tiktoken").read_bytes()
    served = {"body": good}
    asked: list[str] = []

    def urlopen(u: str, timeout: float) -> io.BytesIO:
        asked.append(u)
        if served["body"] is None:
            raise OSError("no network")
        return io.BytesIO(served["body"])

    monkeypatch.setattr("urllib.request.urlopen", urlopen)
    cache = tmp_path / "cache"
    kept = cache / hashlib.sha1(url.encode()).hexdigest()
    monkeypatch.delenv("BYTEPAIR_OFFLINE")
    monkeypatch.delenv("BYTEPAIR_DATA")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    monkeypatch.setattr(encodings, "_CHECKOUT_DATA", None)
    assert bytepair.get_encoding("r50k_base").encode("hello world") == [31373, 995]
    assert asked == [url]
    assert kept.read_bytes() == good
    # read from the cache the next time, not fetched again
    encodings._cache.clear()
    assert bytepair.get_encoding("gpt2").encode("hello world") == [31373, 995]
    assert asked == [url]
    # a damaged download is refused and not kept; no network: the error says what to put where
    kept.unlink()
    encodings._cache.clear()
    served["body"] = good[:-10]
    with pytest.raises(ValueError, match="SHA-256 .* damaged"):
        bytepair.get_encoding("r50k_base")
    assert not kept.exists()
    served["body"] = None
    with pytest.raises(FileNotFoundError, match=f"put it at {re.escape(str(kept))}.*no network"):
        bytepair.get_encoding("r50k_base")


def test_importing_bytepair_loads_no_network_code() -> None:
    # urllib.request (ssl, http, email) is imported only to download: loaded by every import
    # of bytepair it was 3 MB of its 19 MB of memory
    code = "import sys, bytepair; print(sorted({'ssl', 'urllib.request'} & set(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_bad_rank_files_and_names(data_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="unknown encoding"):
        bytepair.get_encoding("cl100k")
    wrong = tmp_path / "wrong.tiktoken"
    shutil.copy(data_dir / "tiktoken" / "p50k_base.tiktoken", wrong)
    with pytest.raises(ValueError, match="SHA-256 .* it is p50k_base.tiktoken"):
        bytepair.get_encoding("r50k_base", path=wrong)
    with pytest.raises(ValueError, match="line 2"):
        encodings._parse_ranks(b"IQ== 0\nnot-base64!! 1\n", "x.tiktoken")


def test_encoding_for_model() -> None:
    assert bytepair.encoding_for_model("gpt-4o").n_vocab == 200019
    assert bytepair.encoding_for_model("gpt-4-0613").special_tokens["<|endofprompt|>"] == 100276
    assert bytepair.encoding_for_model("text-davinci-003").n_vocab == 50281
    with pytest.raises(KeyError, match="no encoding known"):
        bytepair.encoding_for_model("not-a-model")


@pytest.mark.parametrize("name", [None, 5, b"gpt2", ["gpt2"]])
def test_a_name_that_is_no_str_is_a_type_error(name: object) -> None:
    # (QA: get_encoding(None) and get_encoding(5) said ValueError "unknown encoding None",
    # tiktoken's ValueError "Expected a string"; a list said "unhashable type") a TypeError
    # naming the argument, as encoding_for_model already raised; unknown str names keep
    # their errors
    with pytest.raises(TypeError) as e:
        bytepair.get_encoding(name)  # type: ignore[arg-type]
    assert str(e.value) == (
        "get_encoding: name must be a str (one of gpt2, r50k_base, p50k_base, p50k_edit, "
        f"cl100k_base, o200k_base, o200k_harmony), got {type(name).__name__}"
    )
    with pytest.raises(TypeError) as e:
        bytepair.encoding_for_model(name)  # type: ignore[arg-type]
    assert str(e.value) == f"a model name is a str, got {type(name).__name__}"
    with pytest.raises(ValueError, match="unknown encoding 'None'"):
        bytepair.get_encoding("None")
    with pytest.raises(KeyError, match="no encoding known for model 'None'"):
        bytepair.encoding_for_model("None")


@pytest.mark.parametrize("name", ["p50k_base", "cl100k_base", "o200k_base"])
def test_rank_file_read_in_rust_equals_the_python_reader(data_dir: Path, name: str) -> None:
    data = (data_dir / "tiktoken" / f"{name}.tiktoken").read_bytes()
    specials = tiktoken_encoding(data_dir, name)._special_tokens
    fast = bytepair.Tokenizer._from_rank_file(data, specials, name.split("_")[0])
    slow = bytepair.Tokenizer._from_ranks(
        encodings._parse_ranks(data, name), specials, name.split("_")[0]
    )
    assert fast is not None
    assert fast._core.tokens() == slow._core.tokens()
    assert fast._core.recover_merges() == slow._core.recover_merges()


@pytest.mark.parametrize(
    "data",
    [
        b"IQ==\t0\n",  # a tab (tiktoken's reader splits on any whitespace)
        b"IQ== +0\n",  # a sign
        b"IQ==  0\n",  # two spaces
        b" IQ== 0\n",  # a leading space
        b"IQ== 0\rIg== 1\n",  # a lone \r ends a line for bytes.splitlines
        b"QR== 0\n",  # non-zero padding bits (Python's base64 accepts them)
        b"IQ== 0\nIQ== 1\n",  # a token twice (the Python reader names the line)
    ],
)
def test_rank_file_not_in_plain_form_is_left_to_the_python_reader(data: bytes) -> None:
    assert bytepair.Tokenizer._from_rank_file(data, {}, "gpt2") is None


OFFSET_TEXTS = [
    "",
    "héllo 🐍 wörld",
    "中文分词，日本語のテキスト。",
    "👩‍👩‍👧‍👦 family, 🇫🇷 flag, \u0301 lone mark",
    "ᚠᛇᚻ᛫ᛒᛦᚦ ꙮ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \U0001f9ea\U0001faa9",  # rare characters split into byte tokens
    "<|endoftext|> and <|endofprompt|>",
]


@pytest.mark.parametrize("name", NAMES)
def test_tiktoken_lookups_equal_tiktoken(data_dir: Path, name: str) -> None:
    tok = bytepair.get_encoding(name)
    tt = tiktoken_encoding(data_dir, name)
    assert tok.token_byte_values() == tt.token_byte_values()
    for text in (
        OFFSET_TEXTS
        + read_text(data_dir / "corpora" / "multilingual" / "ja.txt")[:3000].splitlines()
    ):
        ids = tok.encode(text, allowed_special="all")
        assert tok.decode_with_offsets(ids) == tt.decode_with_offsets(ids), text
    for i in [*range(0, tt.max_token_value + 1, 997), *tt._special_tokens.values()]:
        if i in tt._special_tokens.values() or i < tt.n_vocab - len(tt._special_tokens):
            piece = tt.decode_single_token_bytes(i)
            assert tok.encode_single_token(piece) == tt.encode_single_token(piece) == i
            assert tok.is_special_token(i) == tt.is_special_token(i)
    assert tok.encode_single_token(EOT) == tt.encode_single_token(EOT)
    eot = tt.eot_token
    assert tok.is_special_token(np.uint32(eot)) and not tok.is_special_token(np.int64(0))
    for not_an_id in [None, "<|endoftext|>", float(eot), True, [eot]]:
        with pytest.raises(TypeError, match="token must be an int id"):
            tok.is_special_token(not_an_id)  # type: ignore[arg-type]
    for bad_type in [123, None, 1.5]:
        with pytest.raises(TypeError, match="expected str or bytes"):
            tok.encode_single_token(bad_type)  # type: ignore[arg-type]
    for missing in ["not one token at all", b"\xff\xfe\xfd\xfc"]:
        with pytest.raises(KeyError):
            tt.encode_single_token(missing)
        with pytest.raises(KeyError):
            tok.encode_single_token(missing)
    lone_continuation = [tok.encode_single_token(b"\x80")]  # every single byte is a token
    for enc in (tok, tt):
        with pytest.raises(UnicodeDecodeError):
            enc.decode_with_offsets(lone_continuation)


@pytest.mark.parametrize("name", NAMES)
def test_tiktoken_attributes_equal_tiktoken(data_dir: Path, name: str) -> None:
    tok = bytepair.get_encoding(name)
    tt = tiktoken_encoding(data_dir, name)
    assert (tok.name, tok.max_token_value, tok._pat_str) == (
        name,
        tt.max_token_value,
        tt._pat_str,
    )
    assert tok._mergeable_ranks == tt._mergeable_ranks
    assert tok._special_tokens == tt._special_tokens
    assert pickle.loads(pickle.dumps(tok)).name == name


def test_encoding_extended_as_in_tiktoken(data_dir: Path) -> None:
    # the tiktoken idiom for adding special tokens, with bytepair in tiktoken's place
    text = "<|im_start|>user\nhi there<|im_end|><|endoftext|>"
    made = {}
    for lib, base in [
        (bytepair, bytepair.get_encoding("cl100k_base")),
        (tiktoken, tiktoken_encoding(data_dir, "cl100k_base")),
    ]:
        enc = lib.Encoding(
            name="cl100k_im",
            pat_str=base._pat_str,
            mergeable_ranks=base._mergeable_ranks,
            special_tokens={**base._special_tokens, "<|im_start|>": 100264, "<|im_end|>": 100265},
        )
        made[lib.__name__] = enc
    bp, tt = made["bytepair"], made["tiktoken"]
    assert bp.name == "cl100k_im" and bp.n_vocab == tt.n_vocab == 100277
    assert bp.encode(text, allowed_special="all") == tt.encode(text, allowed_special="all")
    with pytest.raises(ValueError, match=r"disallowed special token '<\|im_start\|>'"):
        bp.encode(text)
    # explicit_n_vocab: checked as tiktoken checks it (r50k: 50256 ranks + 1 special)
    r50k = bytepair.get_encoding("r50k_base")
    kwargs = {"pat_str": "gpt2", "mergeable_ranks": r50k._mergeable_ranks}
    specials = r50k._special_tokens
    assert bytepair.Encoding("r", **kwargs, special_tokens=specials, explicit_n_vocab=50257)
    with pytest.raises(ValueError, match="explicit_n_vocab is 50258"):
        bytepair.Encoding("r", **kwargs, special_tokens=specials, explicit_n_vocab=50258)
    with pytest.raises(ValueError, match="explicit_n_vocab is 5"):
        bytepair.Encoding(
            "x", pat_str="gpt2", mergeable_ranks={}, special_tokens={}, explicit_n_vocab=5
        )
    with pytest.raises(ValueError, match="no tokens"):
        bytepair.Encoding("x", pat_str="gpt2", mergeable_ranks={}, special_tokens={})
    with pytest.raises(TypeError, match="must be bytes"):
        bytepair.Encoding("x", pat_str="gpt2", mergeable_ranks={"a": 0}, special_tokens={})


def test_encoding_name_for_model_equals_tiktoken() -> None:
    import tiktoken.model

    with pytest.raises(TypeError, match="a model name is a str"):
        bytepair.encoding_name_for_model(None)  # type: ignore[arg-type]

    names = list(tiktoken.model.MODEL_TO_ENCODING)
    names += [p + "x-2025" for p in tiktoken.model.MODEL_PREFIX_TO_ENCODING]
    names += [
        "gpt-4o-mini",
        "chatgpt-4o-latest",
        "ft:gpt-4o-mini:org::x",
        "gpt-4-0613",
        "gpt-4.5",
        "gpt-4.1-nano",
        "o1-preview",
        "davinci-002",
        "davinci-codex",
        "not-a-model",
        "gpt",
        "text-davinci",
        "ada-002",
    ]
    for model in names:
        try:
            want = tiktoken.model.encoding_name_for_model(model)
        except KeyError:
            with pytest.raises(KeyError):
                bytepair.encoding_name_for_model(model)
            continue
        assert bytepair.encoding_name_for_model(model) == want, model


def test_o200k_harmony_equals_tiktoken(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # tiktoken's own definition (tiktoken_ext), its ranks read from the shared file
    import tiktoken.load
    import tiktoken_ext.openai_public as openai_public

    ranks = tiktoken.load.load_tiktoken_bpe(str(data_dir / "tiktoken" / "o200k_base.tiktoken"))
    monkeypatch.setattr(openai_public, "load_tiktoken_bpe", lambda *a, **k: ranks)
    tt = tiktoken.Encoding(**openai_public.o200k_harmony())
    tok = bytepair.get_encoding("o200k_harmony")
    assert (tok.name, tok.n_vocab, tok._special_tokens) == (tt.name, tt.n_vocab, tt._special_tokens)
    chat = (
        "<|start|>user<|message|>What is 2+2?<|end|><|start|>assistant<|channel|>final"
        "<|message|>4<|return|><|endofprompt|><|reserved_200018|><|reserved_201087|>"
    )
    for text in [
        chat,
        chat * 3 + read_text(data_dir / "corpora" / "multilingual" / "zh.txt")[:5000],
    ]:
        assert tok.encode(text, allowed_special="all") == tt.encode(text, allowed_special="all")
        assert tok.encode_ordinary(text) == tt.encode_ordinary(text)
        with pytest.raises(ValueError):
            tok.encode(text)
    # <|reserved_200018|> is an alias of <|endofprompt|>: one id, decoded as the first
    assert tok.encode("<|reserved_200018|>", allowed_special="all") == [200018]
    assert tok.decode_single_token_bytes(200018) == b"<|endofprompt|>"
    assert bytepair.encoding_for_model("gpt-oss-120b").name == "o200k_harmony"
    # formats that keep one text per id refuse it; pickling and the rank file keep it
    with pytest.raises(ValueError, match="share an id"):
        tok.save(tmp_path / "h.json")
    assert pickle.loads(pickle.dumps(tok)).encode(chat, allowed_special="all") == tok.encode(
        chat, allowed_special="all"
    )
    tok.save(tmp_path / "h.tiktoken", format="tiktoken")
    assert (tmp_path / "h.tiktoken").read_bytes() == (
        data_dir / "tiktoken" / "o200k_base.tiktoken"
    ).read_bytes()


def test_names_that_are_not_special_tokens_are_ignored_as_in_tiktoken(data_dir: Path) -> None:
    # drop-in code passes one set of names to several encodings (found by QA)
    tok = bytepair.get_encoding("cl100k_base")
    tt = tiktoken_encoding(data_dir, "cl100k_base")
    text = "hello<|endoftext|> <|im_start|>"
    for allowed in [{"<|im_start|>"}, {EOT, "<|im_start|>"}]:
        want = tt.encode(text, allowed_special=allowed, disallowed_special=())
        assert tok.encode(text, allowed_special=allowed, disallowed_special=()) == want
        assert tok.encode_batch([text], allowed_special=allowed, disallowed_special=()) == [want]
        assert (
            list(tok.encode_iterable(iter([text]), allowed_special=allowed, disallowed_special=()))
            == want
        )
    assert tok.encode("foo baz", disallowed_special={"bar"}) == tt.encode(
        "foo baz", disallowed_special={"bar"}
    )
    assert tok.encode("hi", allowed_special={"<|im_start|>"}) == tt.encode(
        "hi", allowed_special={"<|im_start|>"}
    )


# Runs of characters from scripts without spaces between words (one pre-token each), with
# marks, emoji, a few separators, and the odd Latin letter: merging starts from whole
# characters wherever their neighbours allow it (src/encode/atoms.rs), and most pairs of
# them are no token (the pair filter, src/encode/pairs.rs).
non_latin_text = st.lists(
    st.one_of(
        st.text(st.characters(min_codepoint=0x4E00, max_codepoint=0x4E80), min_size=10),
        st.text(st.characters(min_codepoint=0x0E00, max_codepoint=0x0E7F), min_size=10),
        st.text(st.characters(min_codepoint=0x3040, max_codepoint=0x30FF), min_size=5),
        st.text(st.characters(min_codepoint=0x0400, max_codepoint=0x04FF), min_size=5),
        st.text(st.characters(min_codepoint=0x0900, max_codepoint=0x097F), min_size=5),
        st.text(st.characters(min_codepoint=0x1F300, max_codepoint=0x1F64F), min_size=3),
        st.text(st.characters(min_codepoint=0x80, max_codepoint=0x10FFFF), min_size=5),
        st.sampled_from([" ", "\n", "a", "。", "、", "\u0301", "ー", " 的", "“", "”"]),
    ),
    max_size=12,
).map("".join)


@settings(deadline=None, max_examples=300)
@given(non_latin_text)
def test_non_latin_text_equals_tiktoken(data_dir: Path, text: str) -> None:
    for name in ("cl100k_base", "o200k_base"):
        tok, enc = bytepair.get_encoding(name), tiktoken_encoding(data_dir, name)
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text), name


# ------------------------------------------------------------------ encode_with_unstable
# Hand-picked cases: the docstring's "hello fanta", a trailing space (33k completions),
# whitespace runs with newlines (the all-space widening), a text ending in a special token,
# multi-byte characters (completions that are not UTF-8), a trailing ideographic space
# (the split before the last whitespace character).
UNSTABLE_TEXTS = [
    "hello fanta",
    "hello ",
    "",
    "a\n \n",
    "fn main() {\n    ",
    "it's 12345",
    "日本語",
    "héllo wörld",
    "word\u3000",
    "x\u00a0",
    "a  b",
    "a<|endoftext|>",
    "<|endoftext|> hi",
    # letters of Unicode 17 (Python's `regex` knows them, the encoders' tables do not: the
    # last pre-token must be the encoder's own)
    "a\u0558",
    "!!\u0558",
    "hello w\U00010940",
    # one long pre-token: linear, not quadratic, in its length
    "中文字" * 20_000,
]


def assert_same_unstable(
    tok: bytepair.Tokenizer, enc: tiktoken.Encoding, text: str, **kw: object
) -> None:
    stable, completions = tok.encode_with_unstable(text, **kw)
    want_stable, want_completions = enc.encode_with_unstable(text, **kw)
    assert stable == want_stable, text
    # the order of the completions is arbitrary (a set in tiktoken)
    assert sorted(map(tuple, completions)) == sorted(map(tuple, want_completions)), text


@pytest.mark.parametrize("name", NAMES)
def test_encode_with_unstable_equals_tiktoken(data_dir: Path, name: str) -> None:
    tok, enc = bytepair.get_encoding(name), tiktoken_encoding(data_dir, name)
    for text in UNSTABLE_TEXTS:
        assert_same_unstable(tok, enc, text, disallowed_special=())
        assert_same_unstable(tok, enc, text, allowed_special="all")
    # what the docstring promises: the stable ids encode a prefix, every completion goes on
    stable, completions = tok.encode_with_unstable("hello fan")
    assert tok.decode(stable) == "hello" and completions
    for seq in completions:
        assert tok.decode_bytes(stable + seq).startswith(b"hello fan")
    # the special-token policy is encode's
    with pytest.raises(ValueError, match="disallowed special token '<|endoftext|>'"):
        tok.encode_with_unstable("a<|endoftext|>")


@settings(deadline=None, max_examples=40)
@given(lookalike_text.map(lambda t: t[-12:]))
def test_encode_with_unstable_on_any_text(data_dir: Path, text: str) -> None:
    for name in ["r50k_base", "cl100k_base"]:
        tok, enc = bytepair.get_encoding(name), tiktoken_encoding(data_dir, name)
        assert_same_unstable(tok, enc, text, allowed_special="all")


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_threads_sharing_one_cache_give_tiktokens_ids(data_dir: Path, name: str) -> None:
    # A tokenizer's pre-token cache is shared by every thread that encodes with it (src/encode/
    # cache.rs: lines read and written under a version). Four Python threads (the GIL
    # released while they encode) and batches on four threads meet the same words at once in
    # a cache that starts empty and overflows (~100k distinct pre-tokens): every id must
    # still be tiktoken's.
    base = bytepair.get_encoding(name)
    fresh = bytepair.Encoding(
        name,
        pat_str=base._pat_str,
        mergeable_ranks=base._mergeable_ranks,
        special_tokens=base._special_tokens,
    )
    enc = tiktoken_encoding(data_dir, name)
    lines = []
    for rel in ["corpora/english_gutenberg.txt", "corpora/python_stdlib.txt"]:
        lines += read_text(data_dir / rel)[:2_000_000].splitlines(keepends=True)
    for lang in ["ru", "ja", "hi", "ar"]:
        lines += read_text(data_dir / f"corpora/multilingual/{lang}.txt").splitlines(keepends=True)
    random.Random(5).shuffle(lines)
    docs = ["".join(lines[i : i + 40]) for i in range(0, len(lines), 40)]
    expected = enc.encode_ordinary_batch(docs, num_threads=1)
    failures: list[str] = []

    def work(k: int) -> None:
        order = list(range(len(docs)))
        random.Random(k).shuffle(order)
        for i in order:
            if fresh.encode_ordinary(docs[i]) != expected[i]:
                failures.append(f"thread {k}, doc {i}")
                return

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    got = fresh.encode_ordinary_batch(docs, num_threads=4)
    for t in threads:
        t.join()
    assert not failures
    assert_all_equal(got, expected, docs)


def test_a_batch_whose_list_another_thread_changes_meanwhile() -> None:
    # A list given to a batch is not copied: the core holds each str while it encodes with
    # the GIL released (src/py/tokenizer.rs, encode_batch). Another thread replaces the
    # list's items all the while, each replaced str then freed but for that hold: every
    # text's ids must be those of a str that was in its place (ASCII, and non-ASCII that
    # the workers convert from the str's own characters), never of freed memory.
    tok = bytepair.get_encoding("cl100k_base")
    n = 20_000

    def made(i: int, r: int) -> str:
        # (built at run time: a str of its own, freed once the list lets go of it)
        return "".join([f"text {i} ", "naïve café ☕ " * (r % 2), "words " * (r + 3)])

    texts = [made(i, 0) for i in range(n)]
    stop = threading.Event()

    def change() -> None:
        rng = random.Random(7)
        while not stop.is_set():
            for _ in range(1000):
                texts[rng.randrange(n)] = made(rng.randrange(n), rng.randrange(1, 4))

    changer = threading.Thread(target=change)
    changer.start()
    try:
        for _ in range(6):
            got = tok.encode_ordinary_batch(texts, num_threads=2)
            assert len(got) == n
            for ids in got:
                text = tok.decode(ids)
                i, r = int(text.split()[1]), text.count("words ") - 3
                assert 0 <= i < n and 0 <= r < 4 and text == made(i, r), text[:80]
    finally:
        stop.set()
        changer.join()


def test_threads_asking_at_once_build_one_encoding(data_dir: Path, tmp_path: Path) -> None:
    # (QA: 16 first calls from 8 threads built 9 encodings of 0.2-0.4 s each) a path not
    # asked for before is a new entry of the cache, built once for all the threads
    path = tmp_path / "r50k_base.tiktoken"
    shutil.copy(data_dir / "tiktoken" / "r50k_base.tiktoken", path)
    got: list[bytepair.Tokenizer] = []
    start = threading.Barrier(8)

    def ask() -> None:
        start.wait()
        got.append(bytepair.get_encoding("gpt2", path=path))

    threads = [threading.Thread(target=ask) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 8 and all(tok is got[0] for tok in got)
    assert got[0].encode("hello world") == [31373, 995]


def test_spellings_of_one_path_share_one_encoding(
    data_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (QA: the cache was keyed by the path as written and never evicted: 40 spellings of one
    # o200k file, "/a/./b", "/a/././b", ..., built 40 copies, 869 MB) every spelling of one
    # file, relative, with "." and ".." or through a symlink, is one entry; another file and
    # the default lookup are entries of their own
    path = tmp_path / "r50k_base.tiktoken"
    shutil.copy(data_dir / "tiktoken" / "r50k_base.tiktoken", path)
    (tmp_path / "sub").mkdir()
    (tmp_path / "link.tiktoken").symlink_to(path)
    monkeypatch.chdir(tmp_path)
    first = bytepair.get_encoding("gpt2", path=path)
    spellings = [
        str(path),
        f"{tmp_path}/./r50k_base.tiktoken",
        f"{tmp_path}/././r50k_base.tiktoken",
        f"{tmp_path}//r50k_base.tiktoken",
        f"{tmp_path}/sub/../r50k_base.tiktoken",
        "r50k_base.tiktoken",
        "./r50k_base.tiktoken",
        Path("sub/../r50k_base.tiktoken"),
        tmp_path / "link.tiktoken",
        "link.tiktoken",
    ]
    for spelling in spellings:
        assert bytepair.get_encoding("gpt2", path=spelling) is first, spelling
    assert first.encode("hello world") == [31373, 995]
    # after pickling (by name and path) too
    assert pickle.loads(pickle.dumps(first)).encode("hello world") == [31373, 995]
    other = tmp_path / "copy.tiktoken"
    shutil.copy(path, other)
    second = bytepair.get_encoding("gpt2", path=other)
    assert second is not first and second.encode("hello world") == [31373, 995]
    assert bytepair.get_encoding("gpt2", path="./copy.tiktoken") is second
    assert bytepair.get_encoding("gpt2") is not first
    # the name still counts: r50k_base reads the same file but is an encoding of its own
    assert bytepair.get_encoding("r50k_base", path=path) is not first


# --------------------------------------------------------------- every Unicode character
def _contexts(c: str) -> str:
    """``c`` where each pattern tells it apart: among letters, digits, spaces, after an
    apostrophe and punctuation, doubled, before a newline."""
    return f"a{c}b 1{c}2 {c}{c} \t{c}\n'{c}s {c}a A{c} {c}!\n"


@pytest.mark.parametrize("name", ["r50k_base", "cl100k_base", "o200k_base"])
def test_every_code_point_equals_tiktoken(data_dir: Path, name: str) -> None:
    # The hand-written scanners classify characters by tables of their own (regex-syntax's,
    # src/pretokenize/classes.rs); hypothesis samples a few thousand characters, this
    # checks all 1,112,064 (every scalar value), in blocks that name the first that differs.
    tok, enc = bytepair.get_encoding(name), tiktoken_encoding(data_dir, name)
    scalars = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    for start in range(0, len(scalars), 8192):
        block = [_contexts(chr(c)) for c in scalars[start : start + 8192]]
        text = "".join(block)
        if tok.encode_ordinary(text) != enc.encode_ordinary(text):
            bad = next(t for t in block if tok.encode_ordinary(t) != enc.encode_ordinary(t))
            pytest.fail(f"{name}: U+{ord(bad[1]):04X} in {bad!r}")
