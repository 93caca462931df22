"""Worst-case encoding: one huge pre-token, at 1, 2 and 4 MB, bytepair beside tiktoken.

Doubling the input should about double the time (no quadratic case). Ids are checked equal
to tiktoken's before timing. Writes (or replaces) the "Worst case" section of BENCHMARKS.md.

    python benches/worst_case.py [--out BENCHMARKS.md] [--repeats 3]
"""

from __future__ import annotations

import argparse
import base64
import os
import random
import statistics
import time
from pathlib import Path

import tiktoken
from tiktoken.load import load_tiktoken_bpe

import bytepair

DATA = Path(
    os.environ.get("BYTEPAIR_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)
SIZES = [1 << 20, 2 << 20, 4 << 20]
HEADER = "## Worst case: one huge pre-token"


def inputs(n: int) -> dict[str, str]:
    rng = random.Random(n)
    return {
        "'a' repeated": "a" * n,
        "random letters": "".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(n)),
        "base64 blob": base64.b64encode(rng.randbytes(n * 3 // 4)).decode()[:n],
        "spaces": " " * n,
        "newlines": "\n" * n,
        "'^' repeated": "^" * n,
        "emoji repeated": "\U0001f600" * (n // 4),
    }


def median_time(encode, text: str, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        encode(text)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="BENCHMARKS.md")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    os.environ.setdefault("BYTEPAIR_DATA", str(DATA))
    tok = bytepair.get_encoding("gpt2")
    enc = tiktoken.Encoding(
        "gpt2",
        pat_str=tok.pattern,
        mergeable_ranks=load_tiktoken_bpe(str(DATA / "tiktoken" / "r50k_base.tiktoken")),
        special_tokens={"<|endoftext|>": 50256},
    )
    rows = []
    for kind in inputs(1024):
        times = {"bytepair": [], "tiktoken": []}
        for n in SIZES:
            text = inputs(n)[kind]
            assert tok.encode_ordinary(text) == enc.encode_ordinary(text), kind
            times["bytepair"].append(median_time(tok.encode_ordinary, text, args.repeats))
            times["tiktoken"].append(median_time(enc.encode_ordinary, text, args.repeats))
            print(
                f"{kind} {n >> 20} MB: bytepair {times['bytepair'][-1]:.3f} s, "
                f"tiktoken {times['tiktoken'][-1]:.3f} s",
                flush=True,
            )
        rows.append((kind, times))

    lines = [
        HEADER,
        "",
        f"`python benches/worst_case.py` ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}), "
        f"GPT-2 vocabulary, `encode_ordinary` of one string that is a single pre-token, median "
        f"of {args.repeats}; ids equal tiktoken's. 'x2' is time(2 MB) / time(1 MB) and "
        "time(4 MB) / time(2 MB): about 2 means linear.",
        "",
        "| input | bytepair 1 / 2 / 4 MB (s) | x2 | tiktoken 1 / 2 / 4 MB (s) | x2 |",
        "|---|---|---|---|---|",
    ]
    for kind, t in rows:
        cells = []
        for lib in ("bytepair", "tiktoken"):
            ts = t[lib]
            cells.append(" / ".join(f"{x:.3f}" for x in ts))
            cells.append(f"{ts[1] / ts[0]:.2f}, {ts[2] / ts[1]:.2f}")
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    section = "\n".join(lines) + "\n"

    out = Path(args.out)
    text = out.read_text(encoding="utf-8") if out.exists() else "# Benchmarks\n"
    if HEADER in text:
        before, _, rest = text.partition(HEADER)
        nxt = rest.find("\n## ")
        text = before + section + (rest[nxt + 1 :] if nxt >= 0 else "")
    else:
        text = text.rstrip("\n") + "\n\n" + section
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
