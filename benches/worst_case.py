"""Worst-case encoding: one huge pre-token, at 1, 2 and 4 MB, bytepair beside tiktoken.

Doubling the input should about double the time (no quadratic case). Ids are checked equal
to tiktoken's before timing. Times are the process CPU time of the best of ``--repeats`` runs
(the least disturbed by other jobs on a shared machine). Writes the "worst-case" section of
BENCHMARKS.md.

    python benches/worst_case.py [--out BENCHMARKS.md] [--repeats 3]
"""

from __future__ import annotations

import argparse
import base64
import os
import random
import sys
import time
from pathlib import Path

import tiktoken
from tiktoken.load import load_tiktoken_bpe

import bytepair

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import data_dir, machine_line, now, write_section  # noqa: E402

SIZES = [1 << 20, 2 << 20, 4 << 20, 8 << 20]


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


def best_time(encode, text: str, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.process_time()
        encode(text)
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(Path(__file__).resolve().parents[1] / "BENCHMARKS.md"))
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()

    data = data_dir()
    os.environ.setdefault("BYTEPAIR_DATA", str(data))
    tok = bytepair.get_encoding("gpt2")
    enc = tiktoken.Encoding(
        "gpt2",
        pat_str=tok.pattern,
        mergeable_ranks=load_tiktoken_bpe(str(data / "tiktoken" / "r50k_base.tiktoken")),
        special_tokens={"<|endoftext|>": 50256},
    )
    rows = []
    for kind in inputs(1024):
        times = {"bytepair": [], "tiktoken": []}
        for n in SIZES:
            text = inputs(n)[kind]
            assert tok.encode_ordinary(text) == enc.encode_ordinary(text), kind
            times["bytepair"].append(best_time(tok.encode_ordinary, text, args.repeats))
            times["tiktoken"].append(best_time(enc.encode_ordinary, text, args.repeats))
            print(
                f"{kind} {n >> 20} MiB: bytepair {times['bytepair'][-1]:.3f} s, "
                f"tiktoken {times['tiktoken'][-1]:.3f} s",
                flush=True,
            )
        rows.append((kind, times))

    sizes = " / ".join(str(n >> 20) for n in SIZES)
    lines = [
        "## Worst case: one huge pre-token",
        "",
        f"`python benches/worst_case.py` — {now()}; {machine_line()}. GPT-2 vocabulary, "
        "`encode_ordinary` of one string that is a single pre-token; ids equal tiktoken's. "
        f"CPU seconds, best of {args.repeats}. 'x2' is the time ratio of each size to the one "
        "before (2 means linear).",
        "",
        f"| input | bytepair {sizes} MiB (s) | x2 | tiktoken {sizes} MiB (s) | x2 |",
        "|---|---|---|---|---|",
    ]
    for kind, t in rows:
        cells = []
        for lib in ("bytepair", "tiktoken"):
            ts = t[lib]
            cells.append(" / ".join(f"{x:.3f}" for x in ts))
            cells.append(", ".join(f"{b / a:.2f}" for a, b in zip(ts, ts[1:])))
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    write_section(Path(args.out), "worst-case", "\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
