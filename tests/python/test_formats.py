"""Tokenizer files: the native JSON format, GPT-2 files, format detection, atomic saves.

A save/load round trip must give back an identical tokenizer: the same vocabulary (ids
included), merges, special tokens and pattern, and the same ids when encoding real text.
The native file is meant to be read by people: a token that is UTF-8 is written as text.
Saving writes a temporary file and renames it (DESIGN.md §4), so a save that fails half way
leaves the old file as it was and no temporary file behind.
"""

from __future__ import annotations

import json
import os
import pickle
import shutil
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bytepair
from bytepair import reference
from bytepair.formats import native

EOT = "<|endoftext|>"
LOOKAHEAD_RE = r"""\p{L}+(?=\s)|\p{L}+|\p{N}|\s+(?!\S)|\s|[^\s\p{L}\p{N}]+"""


def read_text(path: Path, chars: int | None = None) -> str:
    with open(path, encoding="utf-8", newline="") as f:
        return f.read() if chars is None else f.read(chars)


def assert_identical(a: bytepair.Tokenizer, b: bytepair.Tokenizer, sample: str) -> None:
    """Same vocabulary, merges, special tokens, pattern, and the same ids on ``sample``."""
    assert a.vocab == b.vocab
    assert a.merges == b.merges
    assert a.special_tokens == b.special_tokens
    assert a.pattern == b.pattern
    assert a.n_vocab == b.n_vocab
    assert a.eot_token == b.eot_token
    ids = a.encode(sample, allowed_special="all")
    assert b.encode(sample, allowed_special="all") == ids
    assert b.encode_ordinary(sample) == a.encode_ordinary(sample)
    assert b.decode(ids) == sample


@pytest.fixture(scope="module")
def sample(data_dir: Path) -> str:
    """A slice of real text in several scripts, with special tokens, CRLF and odd spaces."""
    return (
        read_text(data_dir / "cs336" / "corpus.en", 20_000)
        + f"{EOT}\r\n  \t indented\n\n\n/path\n"
        + read_text(data_dir / "corpora" / "multilingual" / "zh.txt", 3_000)
        + EOT
        + read_text(data_dir / "corpora" / "multilingual" / "emoji_cldr.txt", 3_000)
        + "<|pad|>tail \xa0\u3000 e\u0301 \x00"
    )


@pytest.fixture(scope="module")
def trained(data_dir: Path) -> dict[str, bytepair.Tokenizer]:
    """Tokenizers trained with and without special tokens, with several patterns."""
    tiny = data_dir / "cs336" / "tinystories_sample.txt"
    corpus = data_dir / "cs336" / "corpus.en"
    zh = read_text(data_dir / "corpora" / "multilingual" / "zh.txt", 20_000)
    return {
        "no_specials": bytepair.train(tiny, 600),
        "specials": bytepair.train(corpus, 600, special_tokens=[EOT, "<|pad|>"]),
        "o200k": bytepair.train(corpus, 600, special_tokens=[EOT], pattern="o200k"),
        "cl100k": bytepair.train(tiny, 500, pattern="cl100k"),
        "custom": bytepair.train(corpus, 500, special_tokens=[EOT], pattern=LOOKAHEAD_RE),
        # byte-level merges inside CJK characters give tokens that are not UTF-8
        "cjk": bytepair.train(iter([zh]), 800, special_tokens=[EOT], pattern="o200k"),
    }


@pytest.fixture(scope="module")
def gpt2_files(data_dir: Path) -> tuple[Path, Path]:
    return data_dir / "gpt2" / "vocab.json", data_dir / "gpt2" / "merges.txt"


# ---------------------------------------------------------------------------------------------
# native round trips


@pytest.mark.parametrize("name", ["no_specials", "specials", "o200k", "cl100k", "custom", "cjk"])
def test_native_round_trip_trained(trained, name: str, sample: str, tmp_path: Path) -> None:
    tok = trained[name]
    path = tmp_path / "tok.json"
    tok.save(path)
    assert_identical(tok, bytepair.load(path), sample)
    assert_identical(tok, native.load(path), sample)
    # saving the loaded tokenizer writes the same document (but for the creation time)
    again = tmp_path / "again.json"
    bytepair.load(path).save(str(again))
    first, second = json.loads(path.read_text("utf-8")), json.loads(again.read_text("utf-8"))
    first["metadata"].pop("created")
    second["metadata"].pop("created")
    assert first == second


def test_native_document_layout(trained, tmp_path: Path) -> None:
    tok = trained["specials"]
    path = tmp_path / "tok.json"
    tok.save(path)
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["format"] == "bytepair"
    assert doc["version"] == 1
    assert doc["pattern"] == reference.GPT2_PATTERN
    assert doc["special_tokens"] == {EOT: 256, "<|pad|>": 257}
    assert [i for i, _ in doc["vocab"]] == list(range(600))
    assert doc["vocab"][256] == [256, EOT]
    assert doc["vocab"][65] == [65, "A"]
    assert doc["metadata"]["n_vocab"] == 600
    assert doc["metadata"]["bytepair_version"] == bytepair.__version__
    assert len(doc["merges"]) == 600 - 258
    first_left, first_right = tok.merges[0]
    assert doc["merges"][0] == [first_left.decode(), first_right.decode()]


def test_gpt2_from_files_round_trip(gpt2_files, sample: str, tmp_path: Path) -> None:
    vocab_json, merges_txt = gpt2_files
    for specials in (None, [EOT]):
        tok = bytepair.Tokenizer.from_files(vocab_json, merges_txt, special_tokens=specials)
        assert tok.n_vocab == 50257 and len(tok.merges) == 50000
        path = tmp_path / "gpt2.json"
        tok.save(path)
        loaded = bytepair.load(path)
        assert_identical(tok, loaded, sample if specials else sample.replace(EOT, "."))
        if specials:
            assert loaded.special_tokens == {EOT: 50256} and loaded.eot_token == 50256
        else:
            assert loaded.special_tokens == {} and loaded.eot_token is None
    # the GPT-2 ids of a few well-known tokens survive (GPT-2 alphabet: "Ġthe" is " the")
    encoder = json.loads(vocab_json.read_text(encoding="utf-8"))
    assert loaded.vocab[encoder["Ġthe"]] == b" the"
    assert loaded.vocab[encoder["ĊĊ"]] == b"\n\n"


def test_load_folder_with_gpt2_files(gpt2_files, sample: str, tmp_path: Path) -> None:
    vocab_json, merges_txt = gpt2_files
    folder = tmp_path / "gpt2 model"
    folder.mkdir()
    shutil.copy(vocab_json, folder / "vocab.json")
    shutil.copy(merges_txt, folder / "merges.txt")
    from_folder = bytepair.load(folder)
    # <|endoftext|>, in vocab.json and made by no merge, is special (GPT-2's convention)
    expected = bytepair.Tokenizer.from_files(vocab_json, merges_txt, special_tokens=[EOT])
    assert_identical(expected, from_folder, sample)
    assert bytepair.load(str(folder)).merges == expected.merges
    assert bytepair.load(f"{folder}/").merges == expected.merges
    # a file named with a trailing separator is no folder, as open() says (Path() dropped
    # the separator, and the file was read)
    expected.save(tmp_path / "tok.json")
    for name, error in [("tok.json/", NotADirectoryError), ("missing.json/", FileNotFoundError)]:
        with pytest.raises(error) as e:
            bytepair.load(f"{tmp_path}/{name}")
        assert e.value.filename == f"{tmp_path}/{name}"


def test_gpt2_files_with_version_header_and_crlf(gpt2_files, tmp_path: Path) -> None:
    # OpenAI's vocab.bpe starts with "#version: 0.2"; files edited on Windows end in CRLF
    vocab_json, merges_txt = gpt2_files
    # (all of them: merges cut short are refused, test_bad_files.py)
    lines = merges_txt.read_text(encoding="utf-8").split("\n")
    crlf = tmp_path / "merges.txt"
    crlf.write_bytes(("#version: 0.2\r\n" + "\r\n".join(lines) + "\r\n").encode())
    expected = [
        (reference.str_to_token(a), reference.str_to_token(b))
        for a, b in (line.split(" ") for line in lines if line)
    ]
    assert bytepair.Tokenizer.from_files(vocab_json, crlf).merges == expected


# ---------------------------------------------------------------------------------------------
# tokens that are awkward to write down


def test_awkward_tokens_survive_and_file_is_readable(tmp_path: Path) -> None:
    # spaces, newlines, CR, tab, NUL, quotes, backslash, CJK, emoji, half a UTF-8 character
    texts = [
        ' the the the\n\n\n\n\r\n\r\n\t\t "quoted" \\back\\slash\\ \x00\x00 中文中文 👍🏽👍🏽 '
    ] * 20
    tok = bytepair.train(iter(texts), 400, special_tokens=[EOT, "<|pad|>", "\n\n<sep>\n\n"])
    path = tmp_path / "tok.json"
    tok.save(path)
    loaded = bytepair.load(path)
    assert loaded.vocab == tok.vocab and loaded.merges == tok.merges
    assert loaded.special_tokens == tok.special_tokens
    content = path.read_text(encoding="utf-8")
    values = set(tok.vocab.values())
    # UTF-8 tokens appear as text (JSON string escapes only for quotes, controls, backslash)
    for token in (b" the", "中文".encode(), "👍🏽".encode(), b"\n\n"):
        assert token in values
        assert json.dumps(token.decode(), ensure_ascii=False) in content
    # and the rest in hex: every token that is not UTF-8 is written as {"hex": ...}
    not_utf8 = [t for t in values if not _is_utf8(t)]
    assert not_utf8, "training on CJK and emoji should learn partial characters"
    doc = json.loads(content)
    hexes = {entry[1]["hex"] for entry in doc["vocab"] if isinstance(entry[1], dict)}
    assert hexes == {t.hex() for t in not_utf8}


def _is_utf8(b: bytes) -> bool:
    try:
        b.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@st.composite
def handmade_tokenizers(draw):
    """(vocab, merges, specials): tokens made by merging arbitrary earlier tokens."""
    tokens = [bytes([i]) for i in range(256)]
    merges = []
    for _ in range(draw(st.integers(0, 25))):
        a = tokens[draw(st.integers(0, len(tokens) - 1))]
        b = tokens[draw(st.integers(0, len(tokens) - 1))]
        if a + b not in tokens:
            tokens.append(a + b)
            merges.append((a, b))
    vocab = dict(enumerate(tokens))
    # special tokens whose text is not already a token (that case: test_errors.py)
    specials = draw(
        st.lists(
            st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=6).filter(
                lambda s: s.encode() not in tokens
            ),
            unique=True,
            max_size=3,
        )
    )
    # ids need not be dense: room may be left before the special tokens (as cl100k_base
    # leaves 100256 unused); a hole below an ordinary token: test_bad_files.py
    gap = draw(st.integers(0, 1000))
    vocab.update({len(tokens) + gap + k: s.encode() for k, s in enumerate(specials)})
    return vocab, merges, specials


@settings(deadline=None)
@given(handmade_tokenizers(), st.text(max_size=40))
def test_handmade_tokenizers_round_trip(case, text: str) -> None:
    vocab, merges, specials = case
    tok = bytepair.Tokenizer(vocab, merges, special_tokens=specials)
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "t"
        tok.save(path)
        loaded = bytepair.load(path)
    assert loaded.vocab == tok.vocab
    assert loaded.merges == tok.merges == merges
    assert loaded.special_tokens == tok.special_tokens
    assert loaded.n_vocab == tok.n_vocab
    assert loaded.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")
    ids = sorted(tok.vocab)
    assert loaded.decode_bytes(ids) == tok.decode_bytes(ids)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_native_round_trip_of_continued_rank_encodings(
    name: str, local_encodings: None, sample: str, tmp_path: Path
) -> None:
    # cl100k_base and o200k_base leave ids unused before their special tokens (100256;
    # 199998, 200000..200017); continued training keeps those holes and adds ids after the
    # largest: the native file must take them back
    base = bytepair.get_encoding(name)
    texts = ["þe quïck brøwn føx ænd þe quïck brøwn føx"] * 3
    more = bytepair.train(iter(texts), base.n_vocab + 4, base=base)
    new_ids = list(range(base.n_vocab, base.n_vocab + 4))
    assert sorted(more.vocab)[-4:] == new_ids
    assert len(more.vocab) == len(base.vocab) + 4 < more.n_vocab  # the holes stay
    assert set(new_ids) & set(more.encode(texts[0]))
    more.save(tmp_path / "more.json")
    assert_identical(more, bytepair.load(tmp_path / "more.json"), sample + texts[0])


# ---------------------------------------------------------------------------------------------
# format detection


@pytest.mark.parametrize(
    "name", ["tokenizer.model", "no_extension", "vocab.txt", "tok.json.bak", "merges.txt"]
)
def test_native_format_detected_by_content(trained, name: str, tmp_path: Path) -> None:
    tok = trained["specials"]
    path = tmp_path / name
    tok.save(path)
    loaded = bytepair.load(path)
    assert loaded.vocab == tok.vocab and loaded.merges == tok.merges
    assert loaded.special_tokens == tok.special_tokens


@pytest.mark.parametrize(
    "prefix",
    [
        # a file re-saved by an editor may gain leading blank lines
        b"\n\n  ",
        # Windows editors (Notepad) write a UTF-8 byte order mark; Python's json.loads
        # accepts it (RFC 8259 §8.1 lets parsers ignore it), so the format check looks past it
        b"\xef\xbb\xbf",
    ],
    ids=["leading-whitespace", "utf8-bom"],
)
def test_native_format_detected_after_prefix(trained, prefix: bytes, tmp_path: Path) -> None:
    tok = trained["no_specials"]
    path = tmp_path / "tok.json"
    tok.save(path)
    path.write_bytes(prefix + path.read_bytes())
    assert bytepair.load(path).merges == tok.merges


def test_save_accepts_str_and_relative_paths(trained, tmp_path: Path, monkeypatch) -> None:
    tok = trained["no_specials"]
    monkeypatch.chdir(tmp_path)
    tok.save("relative.json")
    assert bytepair.load("relative.json").merges == tok.merges
    assert sorted(os.listdir(tmp_path)) == ["relative.json"]


# ---------------------------------------------------------------------------------------------
# atomic save


class Interrupted(Exception):
    """Raised by a patched function to simulate a failure in the middle of a save."""


def _boom(*args, **kwargs):
    raise Interrupted("simulated failure")


@pytest.mark.parametrize(
    "patch",
    [
        (os, "fsync"),  # after the temporary file is written, before the rename
        (os, "replace"),  # the rename itself fails
        (json, "dumps"),  # before anything is written
        (native, "to_document"),  # while building the document
    ],
)
def test_interrupted_save_keeps_old_file(trained, patch, tmp_path: Path, monkeypatch) -> None:
    old, new = trained["specials"], trained["o200k"]
    path = tmp_path / "tok.json"
    old.save(path)
    before = path.read_bytes()
    module, name = patch
    monkeypatch.setattr(module, name, _boom)
    with pytest.raises(Interrupted):
        new.save(path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["tok.json"]  # no temporary file left behind
    assert bytepair.load(path).merges == old.merges


def test_save_interrupted_by_keyboard_interrupt(trained, tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "tok.json"
    trained["specials"].save(path)
    before = path.read_bytes()

    def ctrl_c(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(os, "fsync", ctrl_c)
    with pytest.raises(KeyboardInterrupt):
        trained["cjk"].save(path)
    monkeypatch.undo()
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["tok.json"]


def test_interrupted_first_save_leaves_nothing(trained, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(os, "replace", _boom)
    with pytest.raises(Interrupted):
        trained["specials"].save(tmp_path / "new.json")
    monkeypatch.undo()
    assert os.listdir(tmp_path) == []


def test_save_replaces_existing_file(trained, sample: str, tmp_path: Path) -> None:
    path = tmp_path / "tok.json"
    trained["specials"].save(path)
    trained["cjk"].save(path)
    assert_identical(trained["cjk"], bytepair.load(path), sample.replace("<|pad|>", ""))
    assert os.listdir(tmp_path) == ["tok.json"]


def test_folder_of_hf_and_gpt2_files_loads_the_last_written(trained, tmp_path: Path) -> None:
    # (QA) a folder saved as HF, then as GPT-2, loaded the old tokenizer.json silently. A
    # folder of both is HF's (a Hub model folder: its tokenizer.json has the special tokens)
    # unless bytepair's GPT-2 files came after it; saved again as HF, it is HF's again
    old, new = trained["no_specials"], trained["cl100k"]
    assert old.vocab != new.vocab
    old.save(tmp_path / "tokenizer.json", format="hf")
    new.save(tmp_path, format="gpt2")
    assert bytepair.load(tmp_path).vocab == new.vocab
    stamp = (tmp_path / "bytepair.json").stat().st_mtime_ns
    old.save(tmp_path / "tokenizer.json", format="hf")
    os.utime(tmp_path / "tokenizer.json", ns=(stamp + 1_000_000, stamp + 1_000_000))
    assert bytepair.load(tmp_path).vocab == old.vocab
    # GPT-2's own files (no bytepair.json) beside a tokenizer.json: HF's
    (tmp_path / "bytepair.json").unlink()
    assert bytepair.load(tmp_path).vocab == old.vocab


@pytest.mark.parametrize(
    ("name", "format", "written"),
    [
        ("tok.tiktoken", None, "tiktoken"),
        ("TOK.TIKTOKEN", None, "tiktoken"),
        ("tok.json", None, "native"),
        ("tok", None, "native"),
        ("tok.tiktoken", "native", "native"),
        ("tok.json", "tiktoken", "tiktoken"),
    ],
)
def test_save_format_from_suffix(
    trained, sample: str, tmp_path: Path, name: str, format: str | None, written: str
) -> None:
    # without a format, a path named .tiktoken gets a rank file (what tiktoken.load reads);
    # any other name bytepair's JSON; a format given always wins
    tok = trained["no_specials"]
    path = tmp_path / name
    tok.save(path, format=format)
    head = path.read_bytes()[:1]
    assert (head == b"{") == (written == "native")
    if written == "tiktoken":
        # every line of a rank file: base64 of the token's bytes, then its rank
        first = path.read_text().splitlines()[0].split()
        assert first == ["AA==", "0"]
        back = bytepair.load(path, pattern=tok.pattern)
    else:
        back = bytepair.load(path)
    assert_identical(tok, back, sample)


@pytest.mark.parametrize("name", ["specials", "o200k", "custom", "cjk"])
def test_pickle_round_trip(trained, name: str, sample: str) -> None:
    # multiprocessing pickles tokenizers: the copy must be the same tokenizer
    tok = trained[name]
    copy = pickle.loads(pickle.dumps(tok))
    assert_identical(tok, copy, sample)


def test_pickle_gpt2_keeps_special_only_token(gpt2_files) -> None:
    vocab_json, merges_txt = gpt2_files
    tok = bytepair.Tokenizer.from_files(vocab_json, merges_txt, special_tokens=["<|endoftext|>"])
    copy = pickle.loads(pickle.dumps(tok))
    text = "Hello<|endoftext|> world"
    # GPT-2's ids, worked out with tiktoken's r50k: Hello=15496, eot=50256, " world"=995
    assert copy.encode(text, allowed_special="all") == [15496, 50256, 995]
    assert copy.encode_ordinary("<|endoftext|>") == tok.encode_ordinary("<|endoftext|>")
    assert copy.eot_token == 50256
