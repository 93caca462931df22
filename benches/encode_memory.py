#!/usr/bin/env python
"""Memory of encoding: bytepair beside tiktoken, fastokens, bpe-openai and HF tokenizers.

For each encoding (``gpt2``, ``cl100k_base``, ``o200k_base``) and each library, a fresh
subprocess reads a 3 MB slice of the English corpus, then imports the library, builds the
encoding from the shared data, and encodes the slice once (``encode_ordinary``, the ids kept
as the list each library returns). It reports the growth of its resident memory (RSS) at each
step and its peak (``VmHWM``) above where it started, so the interpreter and the text,
the same for all, are left out. Ratios are the peer's peak over bytepair's (above 1: bytepair
needs less). Each cell is the median of 3 runs. Writes the "encode-memory" section of
BENCHMARKS.md.

    python benches/encode_memory.py [--out BENCHMARKS.md]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import data_dir, fmt_ratio, machine_line, now, versions, write_section  # noqa: E402

ENCODINGS = ["gpt2", "cl100k_base", "o200k_base"]
LIBS = ["bytepair", "tiktoken", "fastokens", "bpe-openai", "hf"]
RUNS = 3
SLICE = 3_000_000


def rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_mb() -> float:
    """The process's peak RSS (``VmHWM``): not ``ru_maxrss``, which a child started by
    ``subprocess`` inherits from the parent it was forked from (Linux keeps it across exec)."""
    with open("/proc/self/status", encoding="ascii") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmHWM")) / 1024


def child(lib: str, name: str, text_path: str, hf_json: str, data: str) -> None:
    """Prints JSON: MB of RSS added by the import, the build and the encode, and the peak."""
    text = Path(text_path).read_text(encoding="utf-8")
    # (the text's reading peaked a few MB above this; every library's peak is far above it)
    base = rss_mb()
    base_name = "r50k_base" if name == "gpt2" else name
    ranks = str(Path(data) / "tiktoken" / f"{base_name}.tiktoken")
    spec = json.loads((Path(data) / "tiktoken" / "encodings.json").read_text(encoding="utf-8"))
    pat, specials = spec[base_name]["pat_str"], spec[base_name]["special_tokens"]
    if lib == "bytepair":
        import bytepair

        imported = rss_mb()
        enc = bytepair.get_encoding(name)
        encode = enc.encode_ordinary
    elif lib == "tiktoken":
        import tiktoken
        import tiktoken.load

        imported = rss_mb()
        tt = tiktoken.Encoding(
            name,
            pat_str=pat,
            mergeable_ranks=tiktoken.load.load_tiktoken_bpe(ranks),
            special_tokens=specials,
        )
        encode = tt.encode_ordinary
    elif lib == "fastokens":
        import fastokens

        imported = rss_mb()
        if name in ("cl100k_base", "o200k_base"):
            ft = fastokens.Tokenizer.from_tiktoken(ranks, encoding=name)
        else:
            ft = fastokens.Tokenizer.from_tiktoken(ranks, pattern=pat, special_tokens=specials)

        def encode(t: str) -> list[int]:
            return ft.encode_ordinary(t).ids

    elif lib == "bpe-openai":
        import bpe_openai

        imported = rss_mb()
        bo = bpe_openai.get_encoding(name)

        def encode(t: str) -> list[int]:
            # (it refuses texts of 1,000,000 characters: pieces of ~100k, cut after a "\n"
            # before a non-space, where no pre-token of these patterns spans)
            ids: list[int] = []
            start = 0
            while start < len(t):
                cut = t.find("\n", start + 100_000)
                while cut != -1 and cut + 1 < len(t) and t[cut + 1].isspace():
                    cut = t.find("\n", cut + 1)
                end = len(t) if cut == -1 else cut + 1
                ids += bo.encode_ordinary(t[start:end])
                start = end
            return ids
    else:
        import tokenizers

        imported = rss_mb()
        hf = tokenizers.Tokenizer.from_file(hf_json)

        def encode(t: str) -> list[int]:
            return hf.encode(t, add_special_tokens=False).ids

    built = rss_mb()
    ids = encode(text)
    encoded = rss_mb()
    peak = peak_mb()
    print(
        json.dumps(
            {
                "import": imported - base,
                "build": built - imported,
                "encode": encoded - built,
                "peak": peak - base,
                "ids": len(ids),
            }
        )
    )


def english_slice(data: Path) -> str:
    raw = (data / "corpora" / "english_gutenberg.txt").read_bytes()
    end = raw.rfind(b"\n", 0, SLICE) + 1
    return raw[:end].decode("utf-8")


def measure(lib: str, name: str, text_path: Path, hf_json: Path, data: Path) -> dict | None:
    """The median of ``RUNS`` children's numbers; None if the library is missing."""
    runs = []
    for _ in range(RUNS):
        args = [sys.executable, __file__, "--child", lib, name, str(text_path), str(hf_json)]
        out = subprocess.run(args + [str(data)], capture_output=True, text=True)
        if out.returncode != 0:
            print(f"  {lib} {name}: {out.stderr.strip().splitlines()[-1:]}", file=sys.stderr)
            return None
        runs.append(json.loads(out.stdout))
    return {k: statistics.median(r[k] for r in runs) for k in runs[0]}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parents[1] / "BENCHMARKS.md"
    )
    p.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        child(*args.child)
        return
    import bytepair

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from encode_bench import tiktoken_cache_gpt2

    data = data_dir()
    os.environ.setdefault("BYTEPAIR_DATA", str(data))
    tiktoken_cache_gpt2(data)  # bpe-openai builds gpt2 through tiktoken's cache
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        text_path = Path(tmp) / "english.txt"
        text = english_slice(data)
        text_path.write_text(text, encoding="utf-8")
        for name in ENCODINGS:
            hf_json = Path(tmp) / f"{name}.json"
            bytepair.get_encoding(name).save(hf_json, format="hf")
            got = {lib: measure(lib, name, text_path, hf_json, data) for lib in LIBS}
            print(name, json.dumps(got), file=sys.stderr)
            rows.append((name, got))
    ids = {name: got["bytepair"]["ids"] for name, got in rows if got["bytepair"]}
    body = [
        "## Memory of encoding: bytepair vs tiktoken, fastokens, bpe-openai, HF tokenizers",
        "",
        f"`python benches/encode_memory.py` — {now()}; {machine_line()}. "
        f"{versions('tiktoken', 'fastokens', 'bpe-openai', 'tokenizers')}.",
        "",
        f"A fresh process per library and encoding, median of {RUNS}: after reading a "
        f"{len(text.encode()) / 1e6:.1f} MB slice of the English corpus it imports the library "
        "(import), builds the encoding from the shared data (build), and encodes the slice "
        "once with `encode_ordinary`, keeping the list of ids (encode: "
        + ", ".join(f"{n} {c:,} ids" for n, c in ids.items())
        + "). MB of resident memory added by each step, and the peak above the start "
        "(`VmHWM`; construction temporaries included). Ratio: the peer's peak over "
        "bytepair's (above 1: bytepair needs less).",
        "",
        "| encoding | library | import MB | build MB | encode MB | peak MB | peak vs bytepair |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for name, got in rows:
        ours = got["bytepair"]
        for lib in LIBS:
            r = got[lib]
            if r is None:
                body.append(f"| {name} | {lib} | — | — | — | — | not run |")
                continue
            ratio = "" if lib == "bytepair" or not ours else fmt_ratio(r["peak"] / ours["peak"])
            body.append(
                f"| {name} | {lib} | {r['import']:.1f} | {r['build']:.1f} | "
                f"{r['encode']:.1f} | {r['peak']:.1f} | {ratio} |"
            )
    write_section(args.out, "encode-memory", "\n".join(body))
    print("\n".join(body))


if __name__ == "__main__":
    main()
