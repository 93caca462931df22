"""Training at scale (issue 5): counts that add up, save and load; every input kind;
determinism; 64-bit counts; min_frequency / max_token_length / max_pretoken_length;
continued training; progress.

Oracles: ``bytepair.reference`` (counting, ``train_bpe``, ``merge_loop``,
``train_bpe_continue``), the plain-file Rust path for streamed inputs, and hand-worked values.
"""

from __future__ import annotations

import gzip
import importlib
import json
import pickle
import random
import warnings
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bytepair
from bytepair import inputs, reference
from bytepair.counts import PretokenCounts

train_mod = importlib.import_module("bytepair.train")  # the module, not bytepair.train()

EOT = "<|endoftext|>"


@pytest.fixture(scope="module")
def docs(data_dir: Path) -> list[str]:
    """About 200 KB of real documents: paragraphs of the English corpus, each ending in one
    newline, with no blank line inside."""
    data = (data_dir / "corpora" / "english_gutenberg.txt").read_bytes()[:200_000]
    text = data.decode("utf-8", "ignore").replace("\r\n", "\n")
    out = [p.strip("\n") + "\n" for p in text.split("\n\n") if p.strip()]
    out = [p for p in out if not any(not line.strip() for line in p.split("\n")[:-1])]
    assert len(out) > 200
    return out


@pytest.fixture(scope="module")
def code_text(data_dir: Path) -> str:
    data = (data_dir / "corpora" / "python_stdlib.txt").read_bytes()[:400_000]
    return data.decode("utf-8", "ignore")


def ref_counts(texts, specials=(), pattern="gpt2") -> dict[bytes, int]:
    return dict(reference.count_pretokens(texts, specials, pattern))


def as_dict(counts: PretokenCounts) -> dict[bytes, int]:
    return dict(counts.items())


def small_stream_chunks(monkeypatch, chunk_bytes: int = 997, batch_chars: int = 5003) -> None:
    monkeypatch.setattr(inputs, "CHUNK_BYTES", chunk_bytes)
    monkeypatch.setattr(inputs, "CHUNK_CHARS", chunk_bytes)
    monkeypatch.setattr(train_mod, "_TEXT_BATCH_CHARS", batch_chars)


# ------------------------------------------------------------------ counts: settings, +, files


def test_counts_record_settings_and_refuse_mixing() -> None:
    a = bytepair.count(iter(["hello world"]), special_tokens=[EOT])
    assert a.pattern == reference.GPT2_PATTERN and a.special_tokens == (EOT,)
    b = bytepair.count(iter(["hello"]), pattern="cl100k", special_tokens=[EOT])
    with pytest.raises(ValueError, match="different patterns"):
        a + b
    c = bytepair.count(iter(["hello"]), special_tokens=["<|pad|>"])
    with pytest.raises(ValueError, match="different special tokens"):
        a + c
    with pytest.raises(ValueError, match="pattern='o200k' differs from the counts' 'gpt2'"):
        bytepair.train_from_counts(a, 300, pattern="o200k")
    # a pattern given as a preset's regex is named too
    with pytest.raises(ValueError, match="pattern='o200k' differs from the counts' 'gpt2'"):
        bytepair.train_from_counts(a, 300, pattern=reference.O200K_PATTERN)
    with pytest.raises(ValueError, match="differs from the counts'"):
        bytepair.train_from_counts(a, 300, special_tokens=[])
    # hand-made counts carry no settings and add to anything
    assert (a + PretokenCounts({b"hello": 2}))[b"hello"] == 3
    # the recorded settings are the tokenizer's defaults
    tok = bytepair.train_from_counts(a, 260)
    assert tok.special_tokens == {EOT: 256} and tok.pattern == reference.GPT2_PATTERN


def test_shards_add_up_to_the_whole(docs: list[str], tmp_path: Path) -> None:
    shards = [docs[i::3] for i in range(3)]
    whole = bytepair.count(iter(docs))
    parts = [bytepair.count(iter(s)) for s in shards]
    assert sum(parts) == whole == parts[0] + parts[1] + parts[2]
    assert as_dict(whole) == ref_counts(docs)
    # saved on "other machines", loaded and added: the same tokenizer as counting at once
    paths = []
    for i, p in enumerate(parts):
        paths.append(tmp_path / f"shard{i}.bpcounts")
        p.save(paths[-1])
    total = sum(PretokenCounts.load(p) for p in paths)
    assert total == whole
    tok = bytepair.train_from_counts(total, 600)
    vocab, merges = reference.train_bpe(docs, 600)
    assert tok.merges == merges and tok.vocab == vocab
    acc = PretokenCounts()
    for p in parts:
        acc += p
    assert as_dict(acc) == as_dict(whole)


def test_save_load_roundtrip_and_bad_files(tmp_path: Path) -> None:
    counts = bytepair.count(iter(["the then there théâtre 😀", "x" * 300]), special_tokens=[EOT])
    path = tmp_path / "c.bpcounts"
    counts.save(path)
    back = PretokenCounts.load(path)
    assert back == counts and back.items() == counts.items()
    assert back.pattern == counts.pattern and back.special_tokens == (EOT,)
    assert pickle.loads(pickle.dumps(counts)) == counts
    data = path.read_bytes()
    header_end = data.index(b"\n", 30)
    # every truncation, a flipped body byte, a wrong magic: ValueError naming the file
    for cut in sorted({0, 5, 27, header_end, header_end + 1, len(data) - 1}):
        path.write_bytes(data[:cut])
        with pytest.raises(ValueError, match=r"c\.bpcounts: not a valid pre-token counts file"):
            PretokenCounts.load(path)
    flipped = bytearray(data)
    flipped[-3] ^= 0x40
    path.write_bytes(bytes(flipped))
    with pytest.raises(ValueError, match="CRC-32"):
        PretokenCounts.load(path)
    path.write_bytes(data.replace(b'"records": ', b'"records": 1', 1))
    with pytest.raises(ValueError, match="record|bytes after"):
        PretokenCounts.load(path)
    with pytest.raises(FileNotFoundError):
        PretokenCounts.load(tmp_path / "missing.bpcounts")


def test_saved_file_is_compact_and_deterministic(code_text: str, tmp_path: Path) -> None:
    a = bytepair.count(iter([code_text]))
    b = bytepair.count(iter([code_text[::-1][::-1]]), threads=1)
    a.save(tmp_path / "a")
    b.save(tmp_path / "b")
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()
    raw = sum(len(k) + 8 for k, _ in a.items())
    assert (tmp_path / "a").stat().st_size < raw * 0.6


# ------------------------------------------------------------------ 64-bit counts


def test_counts_above_2_31_are_exact() -> None:
    big = 3 * 2**31 + 7
    a = PretokenCounts({b"ab": big, b"cd": 2**40, b"abcd": 2**33})
    b = PretokenCounts({b"ab": big, b"xy": 2**62})
    s = a + b
    assert (
        s[b"ab"] == 2 * big and s[b"xy"] == 2**62 and s.total() == 2 * big + 2**40 + 2**33 + 2**62
    )
    # pair counts: (a,b) = 2*big + 2**33, (c,d) = 2**40 + 2**33, (x,y) = 2**62, (b,c) = 2**33
    tok = bytepair.train_from_counts(s, 262)
    words = [list(k) for k, _ in s.items()]
    freqs = [v for _, v in s.items()]
    vocab = {i: bytes([i]) for i in range(256)}
    ref = reference.merge_loop(words, freqs, vocab, 262)
    assert tok.merges == ref
    assert tok.merges[:3] == [(b"x", b"y"), (b"c", b"d"), (b"a", b"b")]
    # counts that differ only beyond 32 bits decide the order
    c = PretokenCounts({b"pq": 2**32 + 1, b"rs": 2**32})
    assert bytepair.train_from_counts(c, 258).merges == [(b"p", b"q"), (b"r", b"s")]
    with pytest.raises(ValueError, match="2\\*\\*64"):
        PretokenCounts({b"a": 2**64})


# ------------------------------------------------------------------ every input kind


def test_every_input_kind_counts_the_same_documents(docs: list[str], tmp_path: Path) -> None:
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    zstandard = pytest.importorskip("zstandard")
    expect = ref_counts(docs)
    lines = "".join(json.dumps({"text": d, "id": i}) + "\n" for i, d in enumerate(docs))
    (tmp_path / "d.jsonl").write_text(lines, encoding="utf-8")
    (tmp_path / "d.jsonl.gz").write_bytes(gzip.compress(lines.encode()))
    (tmp_path / "d.jsonl.zst").write_bytes(zstandard.ZstdCompressor().compress(lines.encode()))
    pq.write_table(pa.table({"content": docs}), tmp_path / "d.parquet", row_group_size=17)
    folder = tmp_path / "folder"
    folder.mkdir()
    for i, d in enumerate(docs):
        name = folder / f"{i:04d}.txt"
        if i % 3:
            name.write_text(d, encoding="utf-8")
        else:  # some of them compressed
            (folder / f"{i:04d}.txt.gz").write_bytes(gzip.compress(d.encode()))
    (tmp_path / "blank.txt").write_text("\n".join(docs), encoding="utf-8")
    cases = {
        "iterator": iter(docs),
        "generator": (d for d in docs),
        "jsonl": tmp_path / "d.jsonl",
        "jsonl.gz": tmp_path / "d.jsonl.gz",
        "jsonl.zst": str(tmp_path / "d.jsonl.zst"),
        "folder": folder,
        "glob": str(folder / "*.txt*"),
    }
    for name, inp in cases.items():
        assert as_dict(bytepair.count(inp)) == expect, name
    got = bytepair.count(tmp_path / "d.parquet", text_field="content")
    assert as_dict(got) == expect
    got = bytepair.count(tmp_path / "blank.txt", blank_line_docs=True)
    assert as_dict(got) == expect
    # the whole file as one document is something else
    assert as_dict(bytepair.count(tmp_path / "blank.txt")) != expect


@pytest.mark.parametrize("pattern", ["gpt2", "cl100k", "o200k", r"\S+\s*|\s+"])
def test_streamed_chunks_count_like_the_plain_file(
    monkeypatch, code_text: str, tmp_path: Path, pattern: str
) -> None:
    # one document, compressed, read in ~1 KB chunks and counted in ~5 K-character batches:
    # the chunk ends fall anywhere, and must not change a single count
    text = code_text[:150_000].replace("\n\n\n", f"\n{EOT}\n") + "  trailing   "
    plain = tmp_path / "plain.txt"
    plain.write_bytes(text.encode())
    (tmp_path / "c.txt.gz").write_bytes(gzip.compress(text.encode()))
    whole = bytepair.count(plain, pattern=pattern, special_tokens=[EOT])
    assert as_dict(whole) == ref_counts([text], [EOT], pattern)
    small_stream_chunks(monkeypatch)
    streamed = bytepair.count(tmp_path / "c.txt.gz", pattern=pattern, special_tokens=[EOT])
    assert streamed == whole


def test_a_long_line_without_cuts_streams_exactly(monkeypatch, tmp_path: Path) -> None:
    # 6 MB with no newline and no special token: the fallback cuts between final pre-tokens
    rng = random.Random(5)
    words = ["alpha", "beta", "  gamma", "δέλτα", "!!", "42", "\t", "x'y"]
    text = " ".join(rng.choice(words) for _ in range(900_000))
    (tmp_path / "long.txt.gz").write_bytes(gzip.compress(text.encode(), compresslevel=1))
    monkeypatch.setattr(train_mod, "_TEXT_BATCH_CHARS", 1 << 20)
    for pattern in ["gpt2", "o200k"]:
        streamed = bytepair.count(tmp_path / "long.txt.gz", pattern=pattern)
        assert streamed == bytepair.count(iter([text]), pattern=pattern)


# ------------------------------------------------------------------ determinism


def test_merges_do_not_depend_on_threads_chunks_or_file_order(
    monkeypatch, docs: list[str], tmp_path: Path
) -> None:
    folder = tmp_path / "docs"
    folder.mkdir()
    paths = []
    for i, d in enumerate(docs):
        paths.append(folder / f"{i:04d}.txt")
        paths[-1].write_text(d, encoding="utf-8")
    vocab, merges = reference.train_bpe(docs, 700)
    results = []
    for threads in (1, 2, 4):
        results.append(bytepair.train(folder, 700, threads=threads))
    shuffled = paths[:]
    random.Random(1).shuffle(shuffled)
    results.append(bytepair.train(shuffled, 700))
    results.append(bytepair.train(iter(docs[::-1]), 700, threads=3))
    small_stream_chunks(monkeypatch, chunk_bytes=61, batch_chars=499)
    joined = tmp_path / "all.jsonl.gz"
    joined.write_bytes(
        gzip.compress("".join(json.dumps({"text": d}) + "\n" for d in docs).encode())
    )
    results.append(bytepair.train(joined, 700, threads=2))
    for tok in results:
        assert tok.merges == merges
        assert tok.vocab == vocab


# ------------------------------------------------------------------ options


@pytest.mark.parametrize("min_frequency", [0, 2, 5, 40])
def test_min_frequency_matches_reference(docs: list[str], min_frequency: int) -> None:
    texts = docs[:20]
    tok = bytepair.train(iter(texts), 2000, min_frequency=min_frequency)
    vocab, merges = reference.train_bpe(texts, 2000, min_frequency=min_frequency)
    assert tok.merges == merges
    counts = bytepair.count(iter(texts))
    if min_frequency > 1:
        assert len(merges) < len(bytepair.train_from_counts(counts, 2000).merges)
    # the stop is on the best pair's count: recount it by hand
    words = [list(k) for k, _ in counts.items()]
    freqs = [v for _, v in counts.items()]
    full = reference.merge_loop(words, freqs, dict(enumerate(bytes([b]) for b in range(256))), 2000)
    assert merges == full[: len(merges)]


@pytest.mark.parametrize("max_len", [2, 3, 5, 8])
def test_max_token_length_matches_reference(docs: list[str], max_len: int) -> None:
    texts = docs[:30]
    tok = bytepair.train(iter(texts), 700, max_token_length=max_len)
    vocab, merges = reference.train_bpe(texts, 700, max_token_length=max_len)
    assert tok.merges == merges and tok.vocab == vocab
    assert max(len(b) for b in tok.vocab.values()) <= max_len
    with pytest.raises(ValueError, match="at least 2"):
        bytepair.train(iter(texts), 700, max_token_length=1)


def test_learned_tokens_of_a_megabyte_are_said() -> None:
    # A 3 MB run of one letter is one pre-token: merge k learns a token of 2^k bytes (a, aa,
    # aaaa, ...), so merge 20 one of 2^20. Kept (the reference keeps it too), but a warning
    # says so, at the caller's line; capped by max_token_length, or shorter, no warning.
    text = "a" * 3_000_000
    with pytest.warns(UserWarning, match=r"a learned token is 1048576 bytes long") as caught:
        tok = bytepair.train(iter([text]), 256 + 20)
    assert caught[0].filename == __file__
    assert max(len(b) for b in tok.vocab.values()) == 2**20
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tok = bytepair.train(iter([text]), 256 + 20, max_token_length=2**16)
        assert max(len(b) for b in tok.vocab.values()) == 2**16
        base = bytepair.train(iter([text]), 256 + 19)
        assert max(len(b) for b in base.vocab.values()) == 2**19
    with pytest.warns(UserWarning, match=r"a learned token is 1048576 bytes long"):
        bytepair.train(iter([text]), 256 + 20, base=base)


def test_long_pretokens_truncated_or_skipped_and_reported() -> None:
    texts = ["short words " + "z" * 5000 + " end", "ok " + "€" * 10]  # "€" is 3 bytes
    with pytest.warns(UserWarning, match=r"2 pre-token\(s\) longer than max_pretoken_length=20 "):
        c = bytepair.count(iter(texts), max_pretoken_length=20)
    # " zzz...": 20 bytes; " €€€...": 19, cut at a character boundary
    assert c[b" " + b"z" * 19] == 1 and c[" €€€€€€".encode()] == 1
    assert c.long_pretokens == (2, 5001)  # " zzz..." is the longest
    with pytest.warns(UserWarning, match="skipped"):
        s = bytepair.count(iter(texts), max_pretoken_length=20, long_pretokens="skip")
    assert as_dict(s) == {k: v for k, v in ref_counts(texts).items() if len(k) <= 20}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert as_dict(bytepair.count(iter(texts))) == ref_counts(texts)  # no limit: exact
    with pytest.raises(ValueError, match="long_pretokens"):
        bytepair.count(iter(texts), long_pretokens="drop")
    # every pre-token skipped: the error says so (it said the corpus was empty)
    with pytest.warns(UserWarning), pytest.raises(ValueError) as e:
        bytepair.train(iter(["z" * 50]), 300, max_pretoken_length=20, long_pretokens="skip")
    assert str(e.value) == (
        "no pre-tokens to train on: all 1 were longer than max_pretoken_length=20 bytes and skipped"
    )
    # a megabyte without a space trains quickly once truncated
    with pytest.warns(UserWarning) as caught:
        tok = bytepair.train(iter(["q" * 2**20 + " and some text"]), 300, max_pretoken_length=1000)
    assert max(len(b) for b in tok.vocab.values()) <= 1000
    # the warning points at this line, the caller's, not at bytepair's own train -> count
    assert [w.filename for w in caught] == [__file__]


# ------------------------------------------------------------------ continued training


def test_continued_training_matches_reference_and_keeps_ids(docs: list[str]) -> None:
    old, new = docs[:40], docs[40:80]
    base = bytepair.train(iter(old), 500, special_tokens=[EOT])
    more = bytepair.train(iter(new), 800, base=base)
    bvocab, bmerges = reference.train_bpe(old, 500, [EOT])
    vocab, merges = reference.train_bpe_continue(bvocab, bmerges, new, 800, [EOT])
    assert more.merges == merges and more.vocab == vocab
    assert len(more.merges) == 800 - 257
    assert all(more.vocab[i] == b for i, b in base.vocab.items())
    assert more.merges[: len(base.merges)] == base.merges
    assert more.special_tokens == base.special_tokens
    # through counts, and from a tokenizer saved and loaded
    counts = bytepair.count(iter(new), special_tokens=[EOT])
    assert bytepair.train_from_counts(counts, 800, base=base).merges == merges
    with pytest.raises(ValueError, match="differs from the base"):
        bytepair.train(iter(new), 800, base=base, pattern="cl100k")
    with pytest.raises(ValueError, match="below the 500 ids"):
        bytepair.train(iter(new), 499, base=base)


def test_continued_training_pattern_must_be_the_bases(docs: list[str]) -> None:
    # pattern="gpt2" on a cl100k-pattern base used to be taken for the default and ignored
    base = bytepair.train(iter(docs[:20]), 300, pattern="cl100k")
    with pytest.raises(
        ValueError, match="pattern='gpt2' differs from the base tokenizer's 'cl100k'"
    ):
        bytepair.train(iter(docs[20:40]), 320, pattern="gpt2", base=base)
    counts = bytepair.count(iter(docs[20:40]), pattern="cl100k")
    with pytest.raises(ValueError, match="pattern='gpt2' differs from the base tokenizer's"):
        bytepair.train_from_counts(counts, 320, pattern="gpt2", base=base)
    # not given, or given as the base's: the base's pattern
    more = bytepair.train(iter(docs[20:40]), 320, base=base)
    assert more.pattern == base.pattern == bytepair.reference.CL100K_PATTERN
    assert bytepair.train(iter(docs[20:40]), 320, pattern="cl100k", base=base).merges == (
        more.merges
    )
    # and "gpt2" with a GPT-2 pattern base is fine, as is the default without a base
    gpt2_base = bytepair.train(iter(docs[:20]), 300)
    assert gpt2_base.pattern == bytepair.reference.GPT2_PATTERN
    assert bytepair.train(iter(docs[20:40]), 320, pattern="gpt2", base=gpt2_base).n_vocab == 320


@given(
    old=st.lists(st.text(alphabet="abc de\n", max_size=30), min_size=1, max_size=6),
    new=st.lists(st.text(alphabet="abcdé \nf", max_size=30), min_size=1, max_size=6),
    n_old=st.integers(0, 12),
    n_new=st.integers(0, 20),
)
def test_continued_training_property(old, new, n_old, n_new) -> None:
    if not any(t.strip() for t in old) or not any(t for t in new):
        return
    base = bytepair.train(iter(old), 257 + n_old, special_tokens=["<s>"])
    size = base.n_vocab + n_new
    bvocab, bmerges = reference.train_bpe(old, 257 + n_old, ["<s>"])
    vocab, merges = reference.train_bpe_continue(bvocab, bmerges, new, size, ["<s>"])
    more = bytepair.train(iter(new), size, base=base)
    assert more.merges == merges and more.vocab == vocab
    for text in old + new:
        assert more.decode(more.encode(text)) == text


def test_continuing_on_the_same_corpus_equals_training_longer(docs: list[str]) -> None:
    texts = docs[:60]
    short = bytepair.train(iter(texts), 400)
    assert (
        bytepair.train(iter(texts), 700, base=short).merges
        == bytepair.train(iter(texts), 700).merges
    )


def test_continue_a_loaded_gpt2_tokenizer(data_dir: Path, docs: list[str], tmp_path: Path) -> None:
    gpt2 = bytepair.Tokenizer.from_files(
        data_dir / "gpt2" / "vocab.json", data_dir / "gpt2" / "merges.txt", [EOT]
    )
    texts = [d.replace("the", "þe").replace("and", "ænd") for d in docs[:25]]  # new words
    more = bytepair.train(iter(texts), gpt2.n_vocab + 40, base=gpt2)
    assert more.n_vocab == gpt2.n_vocab + 40
    assert more.vocab[50256] == EOT.encode() and more.special_tokens == {EOT: 50256}
    vocab, merges = reference.train_bpe_continue(gpt2.vocab, gpt2.merges, texts, 50297, [EOT])
    assert more.merges == merges and more.vocab == vocab
    # old text encodes as before; the new tokens are used on the new text
    sample = "Once upon a time, there was a girl."
    assert more.encode(sample) == gpt2.encode(sample)
    assert len(more.encode(texts[0])) < len(gpt2.encode(texts[0]))
    more.save(tmp_path / "more.json")
    again = bytepair.train(iter(texts), 50300, base=bytepair.load(tmp_path / "more.json"))
    assert again.merges[: len(more.merges)] == more.merges


# ------------------------------------------------------------------ progress


def test_progress_of_streamed_counting(capsys, docs: list[str], tmp_path: Path) -> None:
    (tmp_path / "d.jsonl.gz").write_bytes(
        gzip.compress("".join(json.dumps({"text": d}) + "\n" for d in docs).encode())
    )
    bytepair.train(tmp_path / "d.jsonl.gz", 300, progress=True)
    err = capsys.readouterr().err
    assert "counting pre-tokens" in err and "B/s" in err and "merging" in err
    assert "merge/s" in err
    bytepair.train(iter(docs), 300)  # stderr is no terminal here: quiet
    assert capsys.readouterr().err == ""


def test_cli_trains_on_folders_with_options(docs: list[str], tmp_path: Path, capsys) -> None:
    from bytepair.cli import main

    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "a.jsonl").write_text(
        "".join(json.dumps({"body": d}) + "\n" for d in docs[:30]), encoding="utf-8"
    )
    out = tmp_path / "t.json"
    args = ["train", str(tmp_path / "in"), "--vocab-size", "400", "--text-field", "body"]
    assert main([*args, "--min-frequency", "3", "--max-token-length", "6", "-o", str(out)]) == 0
    vocab, merges = reference.train_bpe(docs[:30], 400, min_frequency=3, max_token_length=6)
    assert bytepair.load(out).merges == merges
    out2 = tmp_path / "t2.json"
    args = ["train", str(tmp_path / "in"), "--vocab-size", "450", "--text-field", "body"]
    assert main([*args, "--base", str(out), "--progress", "-o", str(out2)]) == 0
    err = capsys.readouterr().err
    assert "merging" in err and f"= {256 + len(merges)} of {out} + " in err
    assert bytepair.load(out2).merges[: len(merges)] == merges


def test_counts_total_is_sum_of_items(docs: list[str]) -> None:
    counts = bytepair.count(iter(docs))
    assert counts.total() == sum(Counter(as_dict(counts)).values())
    assert b"Once" in counts and b"zzzz-not-there" not in counts
