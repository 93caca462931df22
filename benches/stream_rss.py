#!/usr/bin/env python
"""Peak memory of streaming a large file through ``Tokenizer.encode_iterable``.

Builds a file of ``--gb`` GB (default 1) in a temporary folder from the shared corpora
(English, code and the multilingual files, repeated), then, in a fresh subprocess per
encoding, counts the tokens of ``open(path, newline="")`` streamed through
``encode_iterable`` and reads the child's peak RSS (``os.wait4``). The token count is checked
against tiktoken on one copy of the corpus mix times the number of copies. Writes the
"streaming" section of BENCHMARKS.md; the file is deleted afterwards.

    python benches/stream_rss.py [--gb 1] [--out BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import data_dir, machine_line, now, write_section  # noqa: E402

PARTS = [
    "corpora/english_gutenberg.txt",
    "corpora/python_stdlib.txt",
    *(f"corpora/multilingual/{lang}.txt" for lang in ["zh", "ja", "ru", "ar", "hi", "emoji_cldr"]),
]
ENCODINGS = ["gpt2", "cl100k_base", "o200k_base"]


def child(path: str, name: str) -> None:
    """Counts the tokens of the file; prints JSON {tokens, seconds}."""
    import bytepair

    tok = bytepair.get_encoding(name)
    t0 = time.perf_counter()
    with open(path, encoding="utf-8", newline="") as f:
        n = sum(1 for _ in tok.encode_iterable(f))
    print(json.dumps({"tokens": n, "seconds": time.perf_counter() - t0}))


def run_child(path: Path, name: str) -> dict[str, float]:
    cmd = [sys.executable, __file__, "--child", str(path), "--encoding", name]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"child for {name} failed")
    return {**json.loads(out), "rss_mb": usage.ru_maxrss / 1024}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gb", type=float, default=1.0)
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "BENCHMARKS.md"))
    ap.add_argument("--child")
    ap.add_argument("--encoding")
    args = ap.parse_args()
    data = data_dir()
    os.environ.setdefault("BYTEPAIR_DATA", str(data))
    if args.child:
        return child(args.child, args.encoding)

    # the parent stays small while the children run: a forked child starts with the
    # parent's peak RSS on Linux, which would hide the child's own
    part_bytes = sum((data / p).stat().st_size for p in PARTS)
    copies = max(1, round(args.gb * 1e9 / part_bytes))
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big.txt"
        with open(path, "wb") as f:
            for _ in range(copies):
                for p in PARTS:
                    with open(data / p, "rb") as src:
                        shutil.copyfileobj(src, f, 1 << 24)
        size = path.stat().st_size
        for name in ENCODINGS:
            results[name] = run_child(path, name)
            print(name, results[name], flush=True)

    import tiktoken
    from tiktoken.load import load_tiktoken_bpe

    text = b"".join((data / p).read_bytes() for p in PARTS).decode("utf-8")
    spec = json.loads((data / "tiktoken" / "encodings.json").read_text(encoding="utf-8"))
    rows = []
    for name, r in results.items():
        base = "r50k_base" if name == "gpt2" else name
        enc = tiktoken.Encoding(
            name,
            pat_str=spec[base]["pat_str"],
            mergeable_ranks=load_tiktoken_bpe(str(data / "tiktoken" / f"{base}.tiktoken")),
            special_tokens={},
        )
        # copies join where one ends in "\n" and the next begins with English text: a cut
        # no pre-token spans, so the whole file has copies x one copy's tokens
        expected = copies * len(enc.encode_ordinary(text))
        rows.append((name, r, "yes" if r["tokens"] == expected else f"NO (expected {expected})"))
    lines = [
        "## Streaming: a 1 GB file through `encode_iterable`",
        "",
        f"`python benches/stream_rss.py --gb {args.gb:g}` — {now()}; {machine_line()}. "
        f"A {size / 1e9:.2f} GB file ({copies} copies of the English, code and multilingual "
        f"corpora, {part_bytes / 1e6:.1f} MB each), read with `open(path, newline='')` and "
        "counted through `encode_iterable` in a fresh process; peak RSS of that process "
        "(Python, the tokenizer and its tables included).",
        "",
        "| encoding | tokens | equals tiktoken x copies | seconds | MB/s | peak RSS (MB) |",
        "|---|---:|---|---:|---:|---:|",
    ]
    for name, r, ok in rows:
        lines.append(
            f"| {name} | {int(r['tokens']):,} | {ok} | {r['seconds']:.1f} | "
            f"{size / 1e6 / r['seconds']:.1f} | {r['rss_mb']:.0f} |"
        )
    write_section(Path(args.out), "streaming", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
