"""Bad tokenizer files, in every format: each raises ``ValueError`` naming the file, the line
or key, and what is wrong; never a panic, never a silent default. And saving is atomic in
every format: an interrupted save leaves the old file (or folder) intact.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
from bytepair.formats import _io

EOT = "<|endoftext|>"
FORMATS = ["native", "gpt2", "tiktoken", "hf"]


@pytest.fixture(scope="module")
def tok() -> bytepair.Tokenizer:
    # 256 <|endoftext|>, 257 "ab", 258 " ab", 259 " abc", 260 "abc"; merges.txt lines:
    # "#version: 0.2", "a b", "Ġ ab", "Ġab c", "ab c"
    return bytepair.train(iter(["abc abc abc ab ab abc"]), 261, special_tokens=[EOT])


def written(tok: bytepair.Tokenizer, fmt: str, folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / ("model" if fmt == "gpt2" else f"tok.{fmt}")
    tok.save(path, format=fmt)
    return path


def load(path: Path, fmt: str) -> bytepair.Tokenizer:
    if fmt == "tiktoken":
        return bytepair.load(path, pattern="gpt2", special_tokens={EOT: 256})
    return bytepair.load(path)


def raises(path: Path, fmt: str, *fragments: str) -> str:
    """Loads ``path``, expecting a ValueError whose message names the file and ``fragments``."""
    with pytest.raises(ValueError) as info:
        load(path, fmt)
    message = str(info.value)
    assert str(path) in message or path.name in message, message
    for fragment in fragments:
        assert fragment in message, message
    return message


# ---------------------------------------------------------------------------------------------
# truncated and malformed files


@pytest.mark.parametrize("fmt", ["native", "hf"])
@pytest.mark.parametrize("keep", [0.0, 0.5, 0.99])
def test_truncated_json(tok, fmt: str, keep: float, tmp_path: Path) -> None:
    path = written(tok, fmt, tmp_path)
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    raises(path, fmt, "not" if keep else "")


def test_truncated_gpt2_vocab_json(tok, tmp_path: Path) -> None:
    folder = written(tok, "gpt2", tmp_path)
    vocab = folder / "vocab.json"
    vocab.write_bytes(vocab.read_bytes()[:-40])
    raises(vocab, "gpt2", "vocab.json", "not valid JSON")  # named: the file inside the folder
    with pytest.raises(ValueError, match="vocab.json: not valid JSON"):
        bytepair.load(folder)


def test_truncated_rank_file_line(tok, tmp_path: Path) -> None:
    path = written(tok, "tiktoken", tmp_path)
    lines = path.read_bytes().splitlines()
    path.write_bytes(b"\n".join(lines[:-1] + [lines[-1].split()[0]]))  # rank cut off
    raises(path, "tiktoken", f"line {len(lines)}", "expected 'base64-token rank'")


def test_rank_file_cut_off_mid_line_says_truncated(data_dir: Path, tmp_path: Path) -> None:
    # (QA: cl100k cut at half its size plus 7 bytes ends in "IGV4aXRlZA== 52", and said only
    # "line 52384: rank 52 appears twice (line 53)") an error in a last line with no newline
    # says the file looks truncated, and still names the line
    data = (data_dir / "tiktoken" / "cl100k_base.tiktoken").read_bytes()
    path = tmp_path / "trunc.tiktoken"
    cut = f"{path}: line 52384: the file looks truncated (cut off in its last line, no newline)"
    for size, what in [
        (len(data) // 2 + 7, "rank 52 appears twice (line 53)"),
        (len(data) // 2 + 1, "expected 'base64-token rank', got b'IGV4aXRlZ'"),
    ]:
        path.write_bytes(data[:size])
        with pytest.raises(ValueError) as info:
            bytepair.load(path, pattern="cl100k")
        assert str(info.value) == f"{cut}: {what}"
    # the same line followed by a newline is a bad line, not a cut one
    path.write_bytes(data[: len(data) // 2 + 7] + b"\n")
    with pytest.raises(ValueError) as info:
        bytepair.load(path, pattern="cl100k")
    assert str(info.value) == f"{path}: line 52384: rank 52 appears twice (line 53)"
    # cut at the end of a line, the file holds whole lines: fewer ranks, no error
    whole = data[: data.rindex(b"\n", 0, len(data) // 2) + 1]
    path.write_bytes(whole)
    assert bytepair.load(path, pattern="cl100k").n_vocab == 52383


@pytest.mark.parametrize("n", [1, 2, 4])
def test_bad_line_among_the_first_of_a_rank_file(tok, n: int, tmp_path: Path) -> None:
    # a damaged line where the format is told apart is still a rank file's bad line, named
    path = written(tok, "tiktoken", tmp_path)
    lines = path.read_bytes().splitlines()
    lines[n - 1] = b"not base64 " + b"x" * 100
    path.write_bytes(b"\n".join(lines) + b"\n")
    message = raises(path, "tiktoken", f"line {n}: expected 'base64-token rank'", "b'not base64 x")
    assert "x" * 50 not in message  # the line is shortened
    assert bytepair.formats.detect(path) == "tiktoken"


def test_malformed_json_names_the_position(tok, tmp_path: Path) -> None:
    path = written(tok, "native", tmp_path)
    path.write_text(path.read_text("utf-8").replace('"merges":', '"merges"', 1), "utf-8")
    raises(path, "native", "not valid JSON", "line")


def test_bad_merges_line(tok, tmp_path: Path) -> None:
    folder = written(tok, "gpt2", tmp_path)
    merges = folder / "merges.txt"
    lines = merges.read_text("utf-8").split("\n")
    lines[2] = "a b c"
    merges.write_text("\n".join(lines), "utf-8")
    with pytest.raises(ValueError, match=r"merges.txt: line 3: expected two tokens"):
        bytepair.load(folder)


# ---------------------------------------------------------------------------------------------
# a merge naming an unknown token


def test_native_merge_names_unknown_token(tok, tmp_path: Path) -> None:
    path = written(tok, "native", tmp_path)
    doc = json.loads(path.read_text("utf-8"))
    doc["merges"][1] = ["ab", "zz"]
    path.write_text(json.dumps(doc), "utf-8")
    raises(path, "native", "merge 1", "b'zz'", "not in the vocabulary")


def test_gpt2_merge_names_unknown_token(tok, tmp_path: Path) -> None:
    folder = written(tok, "gpt2", tmp_path)
    merges = folder / "merges.txt"
    lines = merges.read_text("utf-8").split("\n")
    lines[4] = "ab q"
    merges.write_text("\n".join(lines), "utf-8")
    with pytest.raises(ValueError, match=r"merges.txt: line 5: b'abq' is not a token"):
        bytepair.load(folder)


def test_hf_merge_names_unknown_token(tok, tmp_path: Path) -> None:
    path = written(tok, "hf", tmp_path)
    doc = json.loads(path.read_text("utf-8"))
    doc["model"]["merges"][0] = "a x"
    path.write_text(json.dumps(doc), "utf-8")
    raises(path, "hf", "model.merges[0]", "b'ax' is not a token of model.vocab")


# ---------------------------------------------------------------------------------------------
# duplicate tokens or ids


def test_native_duplicate_token(tok, tmp_path: Path) -> None:
    path = written(tok, "native", tmp_path)
    doc = json.loads(path.read_text("utf-8"))
    doc["vocab"][258][1] = "ab"  # the token of 257 again
    path.write_text(json.dumps(doc), "utf-8")
    raises(path, "native", "vocab", "token b'ab' appears twice, as ids 257 and 258")


def test_native_duplicate_id(tok, tmp_path: Path) -> None:
    path = written(tok, "native", tmp_path)
    doc = json.loads(path.read_text("utf-8"))
    doc["vocab"][258][0] = 257
    path.write_text(json.dumps(doc), "utf-8")
    raises(path, "native", "vocab[258]", "257")


@pytest.mark.parametrize("at", [1, None])
def test_native_merge_listed_twice(tok, at, tmp_path: Path) -> None:
    # QA: a merge pasted twice loaded, with one more merge than merged tokens, and was saved
    # back so; a copy anywhere (next to the first, or at the end) is refused, naming both
    path = written(tok, "native", tmp_path)
    doc = json.loads(path.read_text("utf-8"))
    n = len(doc["merges"]) if at is None else at
    doc["merges"].insert(n, doc["merges"][0])
    path.write_text(json.dumps(doc), "utf-8")
    left, right = (t.encode() for t in doc["merges"][0])
    raises(path, "native", f"merges[{n}]", f"repeats merges[0]: {left!r} + {right!r}")


@pytest.mark.parametrize("bad", [True, -1, 2**32, 1.0, "257"])
def test_native_id_not_an_int(tok, bad, tmp_path: Path) -> None:
    # QA: `true` was read as id 1 and then reported as "id True is negative or appears twice"
    path = written(tok, "native", tmp_path)
    doc = json.loads(path.read_text("utf-8"))
    doc["vocab"][258][0] = bad
    path.write_text(json.dumps(doc), "utf-8")
    raises(path, "native", "vocab[258]", "id must be an int in [0, 2**32)", repr(bad))


@pytest.mark.parametrize("bad", [True, 1.0, "256"])
def test_native_special_id_not_an_int(tok, bad, tmp_path: Path) -> None:
    path = written(tok, "native", tmp_path)
    doc = json.loads(path.read_text("utf-8"))
    doc["special_tokens"][EOT] = bad
    path.write_text(json.dumps(doc), "utf-8")
    raises(path, "native", f"special token {EOT!r}", "id must be an int", repr(bad))


def test_refused_saves_name_the_path_given(tmp_path: Path) -> None:
    # QA: an hf save named "tokenizer.json" whatever the path, and a gpt2 save onto a file
    # gave a bare "File exists"
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"a"}  # bytes of id 97 again
    dup = bytepair.Tokenizer(vocab, [])
    target = tmp_path / "mine.json"
    with pytest.raises(ValueError, match=f"cannot write {re.escape(str(target))}: .*appears twice"):
        dup.save(target, format="hf")
    assert not target.exists()
    a_file = tmp_path / "model"
    a_file.write_text("keep me", "utf-8")
    plain = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [])
    with pytest.raises(FileExistsError, match="it is a file, and the format writes a folder"):
        plain.save(a_file, format="gpt2")
    assert a_file.read_text("utf-8") == "keep me"


def test_gpt2_duplicate_id(tok, tmp_path: Path) -> None:
    folder = written(tok, "gpt2", tmp_path)
    vocab = folder / "vocab.json"
    doc = json.loads(vocab.read_text("utf-8"))
    doc["abc"] = 257
    vocab.write_text(json.dumps(doc), "utf-8")
    with pytest.raises(ValueError, match=r"vocab.json: key 'abc': id 257 appears twice"):
        bytepair.load(folder)


def test_json_key_given_twice(tok, tmp_path: Path) -> None:
    # Python's json would silently keep the last one: a token that loses its first id
    folder = written(tok, "gpt2", tmp_path)
    vocab = folder / "vocab.json"
    text = vocab.read_text("utf-8")
    vocab.write_text(text.replace('"ab": 257', '"ab": 257, "ab": 258'), "utf-8")
    with pytest.raises(ValueError, match=r"vocab.json: key 'ab' appears twice"):
        bytepair.load(folder)


def test_hf_duplicate_id(tok, tmp_path: Path) -> None:
    path = written(tok, "hf", tmp_path)
    doc = json.loads(path.read_text("utf-8"))
    doc["model"]["vocab"]["zz"] = 3
    path.write_text(json.dumps(doc), "utf-8")
    raises(path, "hf", "model.vocab", "id 3 appears twice")


@pytest.mark.parametrize("steps", [1e308, "x", {"a": 1}, None])
def test_hf_pretokenizers_of_the_wrong_type(tok, steps, tmp_path: Path) -> None:
    # (QA: a number here was "TypeError: object of type 'float' has no len()", no file)
    path = written(tok, "hf", tmp_path)
    doc = json.loads(path.read_text("utf-8"))
    doc["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": steps}
    path.write_text(json.dumps(doc), "utf-8")
    raises(path, "hf", "pre_tokenizer", "expected ByteLevel")


def test_native_lone_surrogates(tok, tmp_path: Path) -> None:
    # (QA) a special token or kept metadata spelt with a lone surrogate escape ("\ud800"):
    # a bare UnicodeEncodeError, or a file that loaded and then could never be saved
    path = written(tok, "native", tmp_path)
    doc = json.loads(path.read_text("utf-8"))
    bad = dict(doc, special_tokens={"\ud800": 256})
    path.write_text(json.dumps(bad), "utf-8")
    raises(path, "native", "'\\ud800'", "lone surrogate")
    doc["metadata"]["training"]["note"] = "\ud800"
    path.write_text(json.dumps(doc), "utf-8")
    raises(path, "native", "metadata", "lone surrogate")


@pytest.mark.parametrize(
    ("key", "value", "fragment"),
    [
        ("records", 2**70, "bad sizes"),
        ("long_pretokens", [2**70, 1], "bad sizes"),
        ("pattern", "(unclosed", "its pattern does not compile"),
        ("special_tokens", ["<a>", "<a>"], "named twice"),
    ],
)
def test_counts_file_header(key: str, value: object, fragment: str, tmp_path: Path) -> None:
    # (QA: huge sizes were pyo3's OverflowError naming no file; a bad pattern or a special
    # token named twice loaded, and failed only when training)
    from bytepair.counts import _MAGIC

    path = tmp_path / "c.bpcounts"
    bytepair.count(iter(["hello world hello"]), pattern="cl100k").save(path)
    raw = path.read_bytes()
    end = raw.index(b"\n", len(_MAGIC))
    header = json.loads(raw[len(_MAGIC) : end])
    header[key] = value
    path.write_bytes(_MAGIC + json.dumps(header).encode() + raw[end:])
    with pytest.raises(ValueError) as info:
        bytepair.PretokenCounts.load(path)
    assert str(path) in str(info.value) and fragment in str(info.value), info.value


@pytest.mark.parametrize("twice", ["token", "rank"])
def test_rank_file_duplicates(tok, twice: str, tmp_path: Path) -> None:
    path = written(tok, "tiktoken", tmp_path)
    lines = path.read_bytes().splitlines()
    if twice == "token":
        extra = lines[97].split()[0] + b" 999"  # b"a" again
        raises_with = ("line 261", "token b'a' appears twice (line 98)")
    else:
        extra = base64.b64encode(b"zzz") + b" 97"
        raises_with = ("line 261", "rank 97 appears twice (line 98)")
    path.write_bytes(b"\n".join([*lines, extra]) + b"\n")
    raises(path, "tiktoken", *raises_with)


# ---------------------------------------------------------------------------------------------
# non-dense ids, unreachable tokens


def test_rank_file_with_gap(tok, tmp_path: Path) -> None:
    path = written(tok, "tiktoken", tmp_path)
    # rank 256 is the special token: without it named, the ranks have a gap
    with pytest.raises(ValueError, match=r"tok.tiktoken: ids are not dense: id 256 is missing"):
        bytepair.load(path, pattern="gpt2")
    # p50k_base has the same gap, filled by <|endoftext|> = 50256, as tiktoken defines it
    assert load(path, "tiktoken").vocab == tok.vocab


def test_gpt2_ids_not_dense(tok, tmp_path: Path) -> None:
    folder = written(tok, "gpt2", tmp_path)
    vocab = folder / "vocab.json"
    doc = json.loads(vocab.read_text("utf-8"))
    doc["abc"] = 300
    vocab.write_text(json.dumps(doc), "utf-8")
    with pytest.raises(ValueError, match=r"vocab.json: ids are not dense: id 260 is missing"):
        bytepair.load(folder)


def test_hf_ids_not_dense(tok, tmp_path: Path) -> None:
    path = written(tok, "hf", tmp_path)
    doc = json.loads(path.read_text("utf-8"))
    doc["model"]["vocab"]["abc"] = 1000
    path.write_text(json.dumps(doc), "utf-8")
    raises(path, "hf", "ids are not dense: id 260 is missing")


def test_gpt2_unreachable_token(tok, tmp_path: Path) -> None:
    folder = written(tok, "gpt2", tmp_path)
    merges = folder / "merges.txt"
    lines = merges.read_text("utf-8").split("\n")
    merges.write_text("\n".join(line for line in lines if line != "ab c"), "utf-8")
    with pytest.raises(ValueError, match=r"vocab.json: token 260 \(b'abc'\) is made by no merge"):
        bytepair.load(folder)
    # from_files of the same two files says the same (it accepted them, and encoded "abc"
    # differently from the tokenizer that wrote them)
    with pytest.raises(ValueError) as e:
        bytepair.Tokenizer.from_files(folder / "vocab.json", merges)
    assert str(e.value) == (
        f"{folder / 'vocab.json'}: token 260 (b'abc') is made by no merge (unreachable; "
        "b'ab' + b'c' are tokens); if it is a special token, declare it as one, else the "
        "merges are incomplete (a merges file cut short?)"
    )


def test_gpt2_id_hole_refused_by_from_files_as_by_load(data_dir: Path, tmp_path: Path) -> None:
    # "Ġthe" (id 262) moved to 999999: n_vocab would be a million, every id of "the" would
    # change; load refused the files, from_files took them (found by QA)
    vocab = json.loads((data_dir / "gpt2" / "vocab.json").read_text("utf-8"))
    vocab["Ġthe"] = 999_999
    (tmp_path / "vocab.json").write_text(json.dumps(vocab), "utf-8")
    (tmp_path / "merges.txt").write_bytes((data_dir / "gpt2" / "merges.txt").read_bytes())
    for load in (
        lambda: bytepair.Tokenizer.from_files(tmp_path / "vocab.json", tmp_path / "merges.txt"),
        lambda: bytepair.load(tmp_path),
    ):
        with pytest.raises(ValueError, match="vocab.json: ids are not dense: id 262 is missing"):
            load()


def test_gpt2_merges_cut_short_is_named(data_dir: Path, tmp_path: Path) -> None:
    # GPT-2's merges.txt cut at a line boundary after 20,000 merges: both readers refuse it
    vocab = tmp_path / "vocab.json"
    vocab.write_bytes((data_dir / "gpt2" / "vocab.json").read_bytes())
    lines = (data_dir / "gpt2" / "merges.txt").read_text("utf-8").split("\n")
    merges = tmp_path / "merges.txt"
    merges.write_text("\n".join(lines[:20_001]) + "\n", "utf-8")
    for load in (
        lambda: bytepair.Tokenizer.from_files(vocab, merges),
        lambda: bytepair.load(tmp_path),
    ):
        with pytest.raises(ValueError, match="made by no merge .*merges file cut short"):
            load()
    # cut right after the first byte of a "Ġ" (C4 A0): the error says the file ends inside a
    # character, which only a cut file does; a bad byte at the end is only "not UTF-8"
    raw = (data_dir / "gpt2" / "merges.txt").read_bytes()
    cut = raw.index("Ġ".encode(), 50_000) + 1
    merges.write_bytes(raw[:cut])
    with pytest.raises(ValueError) as e:
        bytepair.Tokenizer.from_files(vocab, merges)
    assert str(e.value) == (
        f"{merges}: not UTF-8 ('utf-8' codec can't decode byte 0xc4 in position {cut - 1}: "
        "unexpected end of data) (it ends inside a character: cut short?)"
    )
    merges.write_bytes(raw[: cut - 1] + b"\xff")
    with pytest.raises(ValueError) as e:
        bytepair.Tokenizer.from_files(vocab, merges)
    assert str(e.value).endswith("invalid start byte)")


def test_hf_unreachable_token(tok, tmp_path: Path) -> None:
    path = written(tok, "hf", tmp_path)
    doc = json.loads(path.read_text("utf-8"))
    doc["model"]["merges"] = [m for m in doc["model"]["merges"] if m != "ab c"]
    path.write_text(json.dumps(doc), "utf-8")
    raises(path, "hf", "token 260 (b'abc') is made by no merge")


def native_doc(tok: bytepair.Tokenizer, tmp_path: Path) -> tuple[Path, dict]:
    path = written(tok, "native", tmp_path)
    return path, json.loads(path.read_text("utf-8"))


def test_native_ids_not_dense(tok, tmp_path: Path) -> None:
    # "abc" moved from 260 to 300 (or 261): every id it encodes to would silently change
    path, doc = native_doc(tok, tmp_path)
    for moved, hole in ((300, "ids 260..299 are"), (261, "id 260 is")):
        doc["vocab"][260] = [moved, "abc"]
        path.write_text(json.dumps(doc), "utf-8")
        raises(path, "native", f"vocab: ids are not dense: {hole} missing below token {moved}")
    # a special token moved up leaves a hole below the ordinary tokens after it
    path, doc = native_doc(tok, tmp_path)
    doc["vocab"][256] = [1000, EOT]
    doc["special_tokens"] = {EOT: 1000}
    path.write_text(json.dumps(doc), "utf-8")
    raises(path, "native", "id 256 is missing below token 257, which is not a special token")


def test_native_room_before_special_tokens(tmp_path: Path) -> None:
    # as cl100k_base leaves 100256 unused before <|endoftext|>: ranks 0..259, EOT at 1000
    plain = bytepair.train(iter(["abc abc abc ab ab abc"]), 260)
    rank_file = written(plain, "tiktoken", tmp_path)
    spaced = bytepair.load(rank_file, pattern="gpt2", special_tokens={EOT: 1000})
    more = bytepair.train(iter(["abd abd abd"]), 1003, base=spaced)  # " abd" x2, "abd" x1
    assert sorted(more.vocab)[-4:] == [259, 1000, 1001, 1002]
    assert more.merges[-2:] == [(b" ab", b"d"), (b"ab", b"d")]
    for t in (spaced, more):
        t.save(tmp_path / "t.json")
        back = bytepair.load(tmp_path / "t.json")
        assert back.vocab == t.vocab and back.special_tokens == {EOT: 1000}
        text = f"abc abd{EOT} ab"
        assert back.encode(text, allowed_special="all") == t.encode(text, allowed_special="all")
    assert back.encode(f"abd abd{EOT}", allowed_special="all") == [1002, 1001, 1000]


def test_native_unreachable_token(tok, tmp_path: Path) -> None:
    # the merge that makes "abc" is lost: "abc" would never be output again
    path, doc = native_doc(tok, tmp_path)
    assert doc["merges"][-1] == ["ab", "c"]
    del doc["merges"][-1]
    path.write_text(json.dumps(doc), "utf-8")
    raises(path, "native", "token 260 (b'abc') is made by no merge", "b'ab' + b'c' are tokens")


def test_native_standalone_token(tmp_path: Path) -> None:
    # no two tokens make b"zzz" (b"zz" is none): BPE outputs it only for a whole pre-token,
    # as GPT-2's <|endoftext|> read without special tokens; the native file keeps it
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"zzz", 257: b"ab"}
    standalone = bytepair.Tokenizer(vocab, [(b"a", b"b")])
    assert standalone.encode("zzz zzzz ab") == [256, 32, 122, 122, 122, 122, 32, 257]
    standalone.save(tmp_path / "t.json")
    back = bytepair.load(tmp_path / "t.json")
    assert back.vocab == vocab
    assert back.encode("zzz zzzz ab") == [256, 32, 122, 122, 122, 122, 32, 257]


def test_native_refuses_ranks_no_merge_list_holds(tmp_path: Path) -> None:
    # tiktoken merges any two parts whose concatenation is a token: "abc" (rank 256) comes
    # from "ab" (rank 257) + "c". No merge list says that, so the native file cannot hold it
    ranks = {bytes([i]): i for i in range(256)} | {b"abc": 256, b"ab": 257}
    (tmp_path / "r.tiktoken").write_bytes(
        b"".join(base64.b64encode(b) + b" %d\n" % r for b, r in ranks.items())
    )
    tok = bytepair.load(tmp_path / "r.tiktoken", pattern="gpt2")
    assert tok.encode("xabc") == [120, 256]  # as tiktoken
    assert tok.merges == [(b"a", b"b")]
    with pytest.raises(ValueError, match=r"t.json: token 256 \(b'abc'\) is made by no merge"):
        tok.save(tmp_path / "t.json")
    assert sorted(os.listdir(tmp_path)) == ["r.tiktoken"]


def test_writers_refuse_what_they_cannot_hold(tmp_path: Path) -> None:
    # b"xy" is in the vocabulary but no merge makes it, though b"x" + b"y" would: GPT-2, HF
    # and native files could not say so
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"xy"}
    odd = bytepair.Tokenizer(vocab, [])
    for fmt in ("gpt2", "hf", "native"):
        with pytest.raises(ValueError, match=r"token 256 \(b'xy'\) is made by no merge"):
            odd.save(tmp_path / fmt, format=fmt)
    # ids with a gap: no rank file (rank = id); merges out of id order likewise
    gap = bytepair.Tokenizer({i: bytes([i]) for i in range(256)} | {300: b"ab"}, [(b"a", b"b")])
    with pytest.raises(ValueError, match="ids are not dense: id 256 is missing"):
        gap.save(tmp_path / "t", format="tiktoken")
    with pytest.raises(ValueError, match="native: ids are not dense: ids 256..299 are missing"):
        gap.save(tmp_path / "native")
    swapped = bytepair.Tokenizer(
        {i: bytes([i]) for i in range(256)} | {256: b"abc", 257: b"ab"},
        [(b"a", b"b"), (b"ab", b"c")],
    )
    with pytest.raises(ValueError, match="ids do not follow its merge order"):
        swapped.to_tiktoken()
    # two ids with the same bytes: vocab.json, the HF vocab and ranks map bytes to one id
    twice = bytepair.Tokenizer(
        {i: bytes([i]) for i in range(256)} | {256: b"ab", 257: b"ab"}, [(b"a", b"b")]
    )
    for fmt in ("gpt2", "hf", "tiktoken", "native"):
        with pytest.raises(ValueError, match="token b'ab' appears twice, as ids 256 and 257"):
            twice.save(tmp_path / fmt, format=fmt)
    assert os.listdir(tmp_path) == []  # nothing written
    # a special token spelt like another token in GPT-2's byte alphabet ("Ġ" is a space)
    clash = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [], special_tokens=["Ġ"])
    with pytest.raises(ValueError, match="special token 'Ġ' .* is spelt like token 32"):
        clash.save(tmp_path / "x.json", format="hf")


# ---------------------------------------------------------------------------------------------
# wrong hash, missing pattern, wrong format


def test_rank_file_wrong_hash(tok, tmp_path: Path) -> None:
    path = written(tok, "tiktoken", tmp_path)
    good = hashlib.sha256(path.read_bytes()).hexdigest()
    specials = {EOT: 256}
    loaded = bytepair.load(path, pattern="gpt2", special_tokens=specials, sha256=good)
    assert loaded.vocab == tok.vocab
    with pytest.raises(ValueError, match=rf"{path.name}: SHA-256 is {good}, expected (00)+$"):
        bytepair.load(path, pattern="gpt2", special_tokens=specials, sha256="00" * 32)
    upper = good.upper()
    assert (
        bytepair.load(path, pattern="gpt2", special_tokens=specials, sha256=upper).vocab
        == tok.vocab
    )
    # a hash that cannot be one is named as such, not as the file's mismatch (QA)
    for bad in ("00ff", good[:-1], good + "0", good[:-1] + "g", f" {good[1:]}"):
        with pytest.raises(ValueError, match=rf"^sha256 must be 64 hex digits, got '{bad}'$"):
            bytepair.load(path, pattern="gpt2", sha256=bad)
    with pytest.raises(TypeError, match="^sha256 must be a str of 64 hex digits, not bytes$"):
        bytepair.load(path, pattern="gpt2", sha256=good.encode())  # type: ignore[arg-type]


def test_get_encoding_wrong_hash(tok, tmp_path: Path) -> None:
    path = written(tok, "tiktoken", tmp_path)
    with pytest.raises(ValueError, match=rf"{path.name}: SHA-256 .* not that of tiktoken's"):
        bytepair.get_encoding("cl100k_base", path=path)


def test_rank_file_needs_a_pattern(tok, tmp_path: Path) -> None:
    path = written(tok, "tiktoken", tmp_path)
    with pytest.raises(ValueError, match=r"tok.tiktoken: a tiktoken rank file has no .*pattern"):
        bytepair.load(path)
    with pytest.raises(ValueError, match="for .tiktoken rank files"):
        bytepair.load(written(tok, "native", tmp_path), pattern="gpt2")


@pytest.mark.parametrize(
    "content, fragment",
    [
        (b"hello world\n", "not a tokenizer file"),
        (b"\x89PNG\r\n\x1a\n\x00\x00", "not a tokenizer file"),
        (b"", "the file is empty"),
        (b'{"format": "other", "version": 1}', "JSON, but not a tokenizer file"),
        (b'{"a": 0, "b": 1}', "looks like a GPT-2 vocab.json alone"),
        (b'{"format": "bytepair-gpt2", "pattern": "gpt2"}', "the note beside GPT-2 files"),
        (b"[1, 2, 3]", "not a tokenizer file"),
        (b'{"model": {"type": "BPE"}, "added_tokens": []}', "pre_tokenizer: expected ByteLevel"),
        (b'{"format": "bytepair", "version": 2}', "unsupported bytepair format version 2"),
        # (QA: "version '1' ... reads version 1" read as self-contradictory; true == 1)
        (b'{"format": "bytepair", "version": "1"}', "must be the integer 1, got '1' (str)"),
        (b'{"format": "bytepair", "version": true}', "must be the integer 1, got True (bool)"),
        (b'{"format": "bytepair", "version": 1.0}', "must be the integer 1, got 1.0 (float)"),
        # a native file of another version without "format" is no GPT-2 vocab.json
        (
            b'{"version": 99}',
            "unsupported bytepair format version 99 (this bytepair reads version 1)",
        ),
        (b'{"version": 99, "pattern": "gpt2", "vocab": []}', "format version 99"),
        (b'{"version": 1, "pattern": "gpt2"}', 'without "format": "bytepair"'),
    ],
)
def test_wrong_format(content: bytes, fragment: str, tmp_path: Path) -> None:
    path = tmp_path / "tokenizer.json"
    path.write_bytes(content)
    raises(path, "native", fragment)


def test_load_takes_a_path_not_a_document() -> None:
    with pytest.raises(
        TypeError, match="load takes the path of a tokenizer file or folder, not a dict"
    ):
        bytepair.load({"version": 99})  # type: ignore[arg-type]


def test_hf_file_of_another_model(tmp_path: Path) -> None:
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.Tokenizer(tokenizers.models.WordPiece({"[UNK]": 0, "a": 1}, unk_token="[UNK]"))
    path = tmp_path / "tokenizer.json"
    hf.save(str(path))
    raises(path, "hf", "model.type", "'WordPiece' is not a BPE model")


@pytest.mark.parametrize(
    "key, value, fragment",
    [
        ("normalizer", {"type": "NFC"}, "normalizer: bytepair has no normalizers"),
        ("pre_tokenizer", {"type": "Whitespace"}, "pre_tokenizer: expected ByteLevel"),
        (
            "pre_tokenizer",
            {"type": "ByteLevel", "add_prefix_space": True, "use_regex": True},
            "add_prefix_space",
        ),
        ("model.byte_fallback", True, "model.byte_fallback"),
        ("model.dropout", 0.1, "model.dropout"),
    ],
)
def test_hf_settings_bytepair_cannot_reproduce(tok, key, value, fragment, tmp_path) -> None:
    path = written(tok, "hf", tmp_path)
    doc = json.loads(path.read_text("utf-8"))
    where = doc["model"] if key.startswith("model.") else doc
    where[key.removeprefix("model.")] = value
    path.write_text(json.dumps(doc), "utf-8")
    raises(path, "hf", fragment)


def hf_variant(tok: bytepair.Tokenizer, tmp_path: Path, change) -> tuple[Path, object]:
    """tok's tokenizer.json changed by ``change(doc)``, and HF's tokenizer of it."""
    tokenizers = pytest.importorskip("tokenizers")
    path = written(tok, "hf", tmp_path)
    doc = json.loads(path.read_text("utf-8"))
    change(doc)
    path.write_text(json.dumps(doc), "utf-8")
    return path, tokenizers.Tokenizer.from_file(str(path))


@pytest.mark.parametrize(
    "flag, text, hf_ids",
    [
        # 256 <|endoftext|>, 257 "ab", 258 " ab", 259 " abc", 260 "abc"
        ("lstrip", f"ab {EOT} abc", [257, 256, 259]),  # the space before EOT is gone
        ("rstrip", f"ab {EOT} abc", [257, 32, 256, 260]),  # the space after EOT is gone
        ("single_word", f"ab{EOT}abc", [257, *b"<|endoftext|>", 260]),  # inside a word: text
    ],
)
def test_hf_added_token_flags(tok, flag: str, text: str, hf_ids, tmp_path: Path) -> None:
    def set_flag(doc) -> None:
        doc["added_tokens"][0][flag] = True

    path, hf = hf_variant(tok, tmp_path, set_flag)
    assert hf.encode(text).ids == hf_ids != tok.encode(text, allowed_special="all")
    raises(path, "hf", f"added_tokens[0].{flag}: True: HF ")


def _template(*single: dict) -> dict:
    return {
        "type": "TemplateProcessing",
        "single": list(single),
        "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
        "special_tokens": {EOT: {"id": EOT, "ids": [256], "tokens": [EOT]}},
    }


_TEXT = {"Sequence": {"id": "A", "type_id": 0}}
_EOT = {"SpecialToken": {"id": EOT, "type_id": 0}}
_BYTE_LEVEL = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True}


@pytest.mark.parametrize(
    "processor, fragment",
    [
        (_template(_EOT, _TEXT), "post_processor.single: HF adds '<|endoftext|>'"),
        (_template(_TEXT, _EOT), "post_processor.single: HF adds '<|endoftext|>'"),
        (
            {"type": "Sequence", "processors": [_BYTE_LEVEL, _template(_TEXT, _EOT)]},
            "post_processor.processors[1].single: HF adds '<|endoftext|>' to every encoding",
        ),
        (
            {"type": "BertProcessing", "sep": [EOT, 256], "cls": ["a", 97]},
            "post_processor: BertProcessing adds tokens to every encoding",
        ),
        (
            {"type": "RobertaProcessing", "sep": [EOT, 256], "cls": ["a", 97]},
            "post_processor: RobertaProcessing adds tokens",
        ),
    ],
)
def test_hf_post_processor_that_adds_tokens(tok, processor, fragment, tmp_path: Path) -> None:
    path, hf = hf_variant(tok, tmp_path, lambda doc: doc.update(post_processor=processor))
    ids = tok.encode("ab abc")
    assert ids == [257, 259]
    assert len(hf.encode("ab abc").ids) > 2 and hf.encode("ab abc").ids != ids
    raises(path, "hf", fragment)


@pytest.mark.parametrize(
    "processor",
    [
        _BYTE_LEVEL,  # offsets only
        {**_BYTE_LEVEL, "add_prefix_space": True, "trim_offsets": False},
        _template(_TEXT),  # adds nothing to one text (the pair template is never used)
        {"type": "Sequence", "processors": [_BYTE_LEVEL, _template(_TEXT)]},
    ],
)
def test_hf_post_processor_that_keeps_ids(tok, processor, tmp_path: Path) -> None:
    path, hf = hf_variant(tok, tmp_path, lambda doc: doc.update(post_processor=processor))
    loaded = bytepair.load(path)
    for text in ("ab abc", f" abc{EOT}ab  ab", "  x"):
        assert hf.encode(text).ids == loaded.encode(text, allowed_special="all")


@pytest.mark.parametrize(
    "key, value, hf_ids",
    [
        (
            "truncation",
            {"direction": "Right", "max_length": 2, "strategy": "LongestFirst", "stride": 0},
            [257, 259],
        ),
        (
            "padding",
            {
                "strategy": {"Fixed": 6},
                "direction": "Right",
                "pad_to_multiple_of": None,
                "pad_id": 0,
                "pad_type_id": 0,
                "pad_token": "Ā",
            },
            [257, 259, 258, 0, 0, 0],
        ),
    ],
)
def test_hf_truncation_and_padding(tok, key: str, value: dict, hf_ids, tmp_path: Path) -> None:
    path, hf = hf_variant(tok, tmp_path, lambda doc: doc.update({key: value}))
    assert tok.encode("ab abc ab") == [257, 259, 258]
    assert hf.encode("ab abc ab").ids == hf_ids
    raises(path, "hf", f"{key}: HF ")


def test_hf_normalized_added_tokens(tmp_path: Path) -> None:
    # without a normalizer, normalized: true matches the same text, except that HF matches
    # the tokens that are not normalized first, and only then the others in what is left
    tok = bytepair.train(iter(["ab ab abc"]), 261, special_tokens=["<a>", "b<a", "<b>"])
    text = "xb<a>y<b> <a>"
    assert tok.encode(text, allowed_special="all") == [120, 257, 62, 121, 258, 32, 256]

    def normalized(*flags: bool):
        def change(doc) -> None:
            for entry, flag in zip(doc["added_tokens"], flags):
                entry["normalized"] = flag

        return change

    for flags in ((True, True, True), (True, False, True), (False, False, True)):
        path, hf = hf_variant(tok, tmp_path / str(flags), normalized(*flags))
        assert hf.encode(text).ids == bytepair.load(path).encode(text, allowed_special="all")
    # "b<a" (normalized) would win over "<a>" (not): HF takes "<a>" first
    path, hf = hf_variant(tok, tmp_path, normalized(False, True, True))
    assert hf.encode(text).ids == [120, 98, 256, 121, 258, 32, 256]
    raises(path, "hf", "added_tokens[1].normalized", "'b<a' is normalized and overlaps '<a>'")


def test_hf_bad_regex(tok, tmp_path: Path) -> None:
    path = written(tok, "hf", tmp_path)
    doc = json.loads(path.read_text("utf-8"))
    doc["pre_tokenizer"]["pretokenizers"][0]["pattern"]["Regex"] = r"(\p{L}+"
    path.write_text(json.dumps(doc), "utf-8")
    raises(path, "hf")


def test_empty_folder(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="folder has no tokenizer files"):
        bytepair.load(tmp_path)


@pytest.mark.parametrize(
    ("present", "missing"),
    [
        ("vocab.json", "merges.txt"),
        ("merges.txt", "vocab.json"),
        ("encoder.json", "vocab.bpe"),
        ("vocab.bpe", "encoder.json"),
    ],
)
def test_gpt2_folder_missing_its_other_file(tmp_path: Path, present: str, missing: str) -> None:
    (tmp_path / present).write_text("{}" if present.endswith(".json") else "#version: 0.2\n")
    with pytest.raises(ValueError, match=f"folder has {present} but no {missing} beside it"):
        bytepair.load(tmp_path)


def test_gpt2_folder_with_a_folder_or_a_mixed_pair(tmp_path: Path) -> None:
    (tmp_path / "vocab.json").write_text("{}")
    (tmp_path / "merges.txt").mkdir()
    with pytest.raises(ValueError, match=r"merges.txt: not a file"):
        bytepair.load(tmp_path)
    (tmp_path / "merges.txt").rmdir()
    (tmp_path / "merges.txt").symlink_to(tmp_path / "gone")
    with pytest.raises(ValueError, match=r"merges.txt: a broken symlink"):
        bytepair.load(tmp_path)
    (tmp_path / "merges.txt").unlink()
    (tmp_path / "vocab.bpe").write_text("#version: 0.2\n")
    with pytest.raises(ValueError, match=r"has vocab.json and vocab.bpe, not a pair of GPT-2"):
        bytepair.load(tmp_path)


@pytest.mark.parametrize("content", [b"", b"\n\n", b"  \r\n"])
def test_empty_file_says_so(tmp_path: Path, content: bytes) -> None:
    for name in ("tok.json", "ranks.tiktoken"):
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(ValueError, match=f"{name}: the file is empty"):
            bytepair.load(path, pattern="gpt2") if name.endswith("tiktoken") else bytepair.load(
                path
            )


# ---------------------------------------------------------------------------------------------
# never a panic: damaged files give ValueError (or load, if the damage is harmless)


@pytest.fixture(scope="module")
def small_files(tmp_path_factory) -> dict[str, bytes]:
    tok = bytepair.train(
        iter(["low lower lowest newest widest 中文 👍"]), 300, special_tokens=[EOT]
    )
    folder = tmp_path_factory.mktemp("small")
    return {fmt: written(tok, fmt, folder / fmt).read_bytes() for fmt in ("native", "hf")} | {
        "tiktoken": written(tok, "tiktoken", folder / "t").read_bytes()
    }


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    fmt=st.sampled_from(["native", "hf", "tiktoken"]),
    cut=st.floats(0, 1),
    flips=st.lists(st.tuples(st.floats(0, 1), st.integers(0, 255)), max_size=4),
)
def test_damaged_files_never_panic(small_files, fmt, cut, flips, tmp_path_factory) -> None:
    data = bytearray(small_files[fmt][: max(1, int(len(small_files[fmt]) * cut))])
    for where, byte in flips:
        data[int(where * (len(data) - 1))] = byte
    path = tmp_path_factory.mktemp("damaged") / "file"
    path.write_bytes(bytes(data))
    try:
        load(path, fmt)
    except ValueError as e:
        assert str(path) in str(e)


# ---------------------------------------------------------------------------------------------
# atomic saves, in every format


class Interrupted(Exception):
    """Raised by a patched function to simulate a failure in the middle of a save."""


def _fail_on_call(n: int, real):
    calls = {"n": 0}

    def patched(*args, **kwargs):
        calls["n"] += 1
        if calls["n"] == n:
            raise Interrupted("simulated failure")
        return real(*args, **kwargs)

    return patched


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


# (format, function that fails, on which call): a GPT-2 folder is three files
_INTERRUPTIONS = [
    (fmt, patch, call)
    for fmt in FORMATS
    for patch in ("fsync", "replace")
    for call in ((1, 2, 3) if fmt == "gpt2" and patch == "fsync" else (1,))
]


@pytest.mark.parametrize("fmt, patch, call", _INTERRUPTIONS)
def test_interrupted_save_keeps_old_files(tok, fmt, patch, call, tmp_path, monkeypatch) -> None:
    old = written(tok, fmt, tmp_path)
    before = _snapshot(tmp_path)
    other = bytepair.train(iter(["xyz xyz xy"]), 259)
    monkeypatch.setattr(os, patch, _fail_on_call(call, getattr(os, patch)))
    with pytest.raises(Interrupted):
        other.save(old, format=fmt)
    monkeypatch.undo()
    assert _snapshot(tmp_path) == before  # old content, and no temporary file left
    assert load(old, fmt).vocab == tok.vocab


def test_interrupted_first_save_leaves_nothing(tok, tmp_path: Path, monkeypatch) -> None:
    real_fsync = os.fsync
    monkeypatch.setattr(_io.os, "fsync", _fail_on_call(3, real_fsync))  # the third gpt2 file
    with pytest.raises(Interrupted):
        tok.save(tmp_path / "model", format="gpt2")
    # nor the folders it made (QA: a full disk left an empty one), folders there before kept
    (tmp_path / "kept").mkdir()
    for model in (tmp_path / "a" / "b" / "model", tmp_path / "kept" / "model"):
        monkeypatch.setattr(_io.os, "fsync", _fail_on_call(3, real_fsync))
        with pytest.raises(Interrupted):
            tok.save(model, format="gpt2")
    # a folder that cannot be made, below two that were: those two taken away as well
    real_mkdir = os.mkdir

    def no_model(path, *args, **kwargs):
        # (once its parent exists: before, mkdir fails for the missing parent, which
        # pathlib then makes)
        if os.path.basename(path) == "model" and os.path.isdir(os.path.dirname(path)):
            raise PermissionError(13, "Permission denied", path)
        return real_mkdir(path, *args, **kwargs)

    monkeypatch.setattr(os, "mkdir", no_model)
    with pytest.raises(PermissionError):
        tok.save(tmp_path / "c" / "d" / "model", format="gpt2")
    monkeypatch.undo()
    assert os.listdir(tmp_path) == ["kept"] and os.listdir(tmp_path / "kept") == []


@pytest.mark.parametrize("fmt", [None, "native", "tiktoken", "hf"])
def test_a_file_format_refuses_a_path_ending_in_a_separator(tok, fmt, tmp_path: Path) -> None:
    # QA: save("t.tiktoken/") wrote a native JSON file named t.tiktoken
    for name in ("t.tiktoken/", "t.json/", "new/"):
        with pytest.raises(IsADirectoryError, match="ends with a path separator"):
            tok.save(f"{tmp_path}{os.sep}{name}", format=fmt)
    assert os.listdir(tmp_path) == []
    tok.save(str(tmp_path / "folder") + "/", format="gpt2")  # the folder format takes one
    assert bytepair.load(tmp_path / "folder").vocab == tok.vocab
