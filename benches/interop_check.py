"""Every line of every shared corpus: bytepair's ids against HF tokenizers and tiktoken
loading the files bytepair exports (``tokenizer.json``, ``to_tiktoken()``).

    python benches/interop_check.py                # whole corpora (a few minutes each)
    python benches/interop_check.py --chars 300000 # the first 300k characters of each

Checks the gpt2, cl100k_base and o200k_base encodings and tokenizers trained with the
o200k, cl100k and a lookahead pattern; prints the mismatching lines (none, so far).
The test suite runs slices of the same check (tests/python/test_interop.py).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import tiktoken  # noqa: F401  (to_tiktoken needs it)
import tokenizers

import bytepair

LOOKAHEAD_RE = r"""\p{L}+(?=\s)|\p{L}+|\p{N}|\s+(?!\S)|\s|[^\s\p{L}\p{N}]+"""
BATCH = 20_000


def corpora(data: Path) -> list[Path]:
    return [
        data / "cs336" / "corpus.en",
        data / "cs336" / "tinystories_sample.txt",
        *sorted((data / "en_ewt").glob("*.txt")),
        *sorted((data / "corpora" / "multilingual").glob("*.txt")),
        data / "corpora" / "english_gutenberg.txt",
        data / "corpora" / "python_stdlib.txt",
    ]


def tokenizers_to_check(data: Path) -> dict[str, bytepair.Tokenizer]:
    ranks = data / "tiktoken"
    with open(data / "corpora" / "multilingual" / "zh.txt", encoding="utf-8") as f:
        zh = f.read(200_000)
    corpus = data / "cs336" / "corpus.en"
    return {
        "gpt2": bytepair.get_encoding("gpt2", path=ranks / "r50k_base.tiktoken"),
        "cl100k_base": bytepair.get_encoding("cl100k_base", path=ranks / "cl100k_base.tiktoken"),
        "o200k_base": bytepair.get_encoding("o200k_base", path=ranks / "o200k_base.tiktoken"),
        "trained-o200k": bytepair.train(
            corpus, 2000, special_tokens=["<|endoftext|>"], pattern="o200k"
        ),
        "trained-lookahead": bytepair.train(corpus, 1000, pattern=LOOKAHEAD_RE),
        "trained-zh-cl100k": bytepair.train(iter([zh]), 3000, pattern="cl100k"),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chars", type=int, default=None, help="characters read per corpus")
    parser.add_argument("--data", default=os.environ.get("BYTEPAIR_DATA", "../shared/data"))
    args = parser.parse_args()
    data = Path(args.data)
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, tok in tokenizers_to_check(data).items():
            path = Path(tmp) / f"{name}.json"
            tok.save(path, format="hf")
            hf = tokenizers.Tokenizer.from_file(str(path))
            enc = tok.to_tiktoken(name)
            start = time.perf_counter()
            lines = hf_bad = tk_bad = 0
            for corpus in corpora(data):
                with open(corpus, encoding="utf-8", newline="") as f:
                    text = f.read(args.chars) if args.chars else f.read()
                all_lines = text.splitlines(keepends=True)
                for i in range(0, len(all_lines), BATCH):
                    chunk = all_lines[i : i + BATCH]
                    ids = tok.encode_batch(chunk, allowed_special="all")
                    by_hf = [e.ids for e in hf.encode_batch(chunk, add_special_tokens=False)]
                    by_tk = enc.encode_batch(chunk, allowed_special="all")
                    for line, a, b, c in zip(chunk, ids, by_hf, by_tk):
                        if a != b:
                            hf_bad += 1
                            print(f"  HF differs: {corpus.name}: {line[:100]!r}")
                        if a != c:
                            tk_bad += 1
                            print(f"  tiktoken differs: {corpus.name}: {line[:100]!r}")
                lines += len(all_lines)
            seconds = time.perf_counter() - start
            print(
                f"{name}: {lines} lines, HF mismatches {hf_bad}, tiktoken mismatches {tk_bad} "
                f"({seconds:.0f} s)",
                flush=True,
            )
            failures += hf_bad + tk_bad
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
