#!/usr/bin/env python
"""Encoding speed of bytepair beside tiktoken, fastokens, bpe-openai and HF tokenizers.

One run measures, for the ``gpt2``, ``cl100k_base`` and ``o200k_base`` encodings on English
prose, Python source and a multilingual mix (zh, ja, ru, ar, hi, emoji names):

* **single thread**: ``encode_ordinary`` of one large text, the process pinned to one CPU
  (fastokens and HF otherwise spread one call over several threads);
* **batch**: the text's lines in one ``encode_ordinary_batch`` call, every CPU.

Cold, as users meet it: every timed call gets text no library has seen before (the corpus is
cut into ``repeats + 1`` distinct slices; slice 0 warms every library up, slices 1.. are
timed, libraries interleaved), so caches of earlier inputs (fastokens and HF keep one across
calls) help only as far as real text repeats itself. Each library gets its own copy of the
``str`` objects, so each pays Python's conversion of non-ASCII text to UTF-8 (CPython keeps
it in the object: without copies the first library called would pay it for all). Every
library's ids are compared with tiktoken's on every timed call; a library that differs is
marked and left out of the "fastest exact peer". Medians are reported in MB/s (10^6 bytes
of UTF-8 per second) with bytepair's speedup (peer time / bytepair time: above 1, bytepair
is faster), the median of the speedups slice by slice.

bpe-openai refuses texts of 1,000,000 characters or 200,000 tokens, and HF tokenizers slows down on
very long inputs, so both get the text in exact pieces (cut after a "\\n" followed by a
non-space, see ``_CUTS``) and their ids are concatenated.

Usage::

    python benches/encode_bench.py                 # ~25 minutes; writes BENCHMARKS.md
    python benches/encode_bench.py --quick --out /tmp/B.md
"""

from __future__ import annotations

import argparse
import concurrent.futures
import gc
import hashlib
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Callable

import regex

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (  # noqa: E402
    cpu_snapshot,
    data_dir,
    fmt_ratio,
    machine_line,
    now,
    other_load,
    versions,
    write_section,
)

ENCODINGS = ["gpt2", "cl100k_base", "o200k_base"]
# timings of each thread count in the threads table
THREAD_REPEATS = 12
MULTILINGUAL = ["zh", "ja", "ru", "ar", "hi", "emoji_cldr"]
PEERS = ["tiktoken", "fastokens", "bpe-openai", "hf"]
PIECE_CHARS = 500_000
# Exact cuts: right after a "\n" followed by a non-space. With cl100k/o200k a pre-token never
# spans it (their `\s*[\r\n]+` ends every whitespace run at its last newline); with gpt2 only
# when a non-space also precedes the "\n" (`\s+(?!\S)` would keep a run together otherwise).
_CUTS = {
    "gpt2": regex.compile(r"(?<=\S)\n(?=\S)"),
    "cl100k_base": regex.compile(r"\n(?=\S)"),
    "o200k_base": regex.compile(r"\n(?=\S)"),
}

Encoder = dict[str, Callable[[Any], Any]]  # {"single": text -> ids, "batch": lines -> ids}


def pieces(text: str, name: str, size: int = PIECE_CHARS) -> list[str]:
    """``text`` in pieces of about ``size`` characters, cut only where the cut is exact."""
    out, start = [], 0
    while len(text) - start > size:
        m = _CUTS[name].search(text, start + size)
        if m is None:
            break
        out.append(text[start : m.end()])
        start = m.end()
    out.append(text[start:])
    return out


def split_lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


# ====================================================================== the libraries


def encoding_spec(name: str, data: Path) -> tuple[Path, str, dict[str, int]]:
    """The rank file, pattern and special tokens of the encoding ``name`` in the shared data."""
    spec = json.loads((data / "tiktoken" / "encodings.json").read_text(encoding="utf-8"))
    base = "r50k_base" if name == "gpt2" else name
    return (
        data / "tiktoken" / f"{base}.tiktoken",
        spec[base]["pat_str"],
        spec[base]["special_tokens"],
    )


def tiktoken_encoding(name: str, data: Path) -> Any:
    """tiktoken's encoding ``name``, built offline from the shared data."""
    import tiktoken
    import tiktoken.load

    ranks_path, pat, specials = encoding_spec(name, data)
    ranks = tiktoken.load.load_tiktoken_bpe(str(ranks_path))
    return tiktoken.Encoding(name, pat_str=pat, mergeable_ranks=ranks, special_tokens=specials)


def build(name: str, data: Path, threads: int) -> tuple[dict[str, Encoder], dict[str, str]]:
    """Each library's encoder for ``name``, built offline; and why any library is missing."""
    import bytepair

    tt = tiktoken_encoding(name, data)
    ranks_path, pat, specials = encoding_spec(name, data)
    os.environ.setdefault("BYTEPAIR_DATA", str(data))
    bp = bytepair.get_encoding(name)
    libs: dict[str, Encoder] = {
        "bytepair": {
            "single": bp.encode_ordinary,
            "batch": lambda lines: bp.encode_ordinary_batch(lines, num_threads=threads),
        },
        "tiktoken": {
            "single": tt.encode_ordinary,
            "batch": lambda lines: tt.encode_ordinary_batch(lines, num_threads=threads),
        },
    }
    missing: dict[str, str] = {}
    try:
        import fastokens

        # its presets select its own scanner for the pattern; given as a string, cl100k's
        # pattern goes through PCRE2 at a quarter of the speed (same ids either way)
        if name in ("cl100k_base", "o200k_base"):
            ft = fastokens.Tokenizer.from_tiktoken(str(ranks_path), encoding=name)
        else:
            ft = fastokens.Tokenizer.from_tiktoken(
                str(ranks_path), pattern=pat, special_tokens=specials
            )
        libs["fastokens"] = {
            "single": lambda t: ft.encode_ordinary(t).ids,
            "batch": lambda lines: [e.ids for e in ft.encode_batch(lines)],
        }
    except ImportError as e:
        missing["fastokens"] = str(e)
    try:
        import bpe_openai

        if name == "gpt2":  # bpe-openai builds gpt2 through tiktoken's cache of GPT-2's files
            tiktoken_cache_gpt2(data)
        bo = bpe_openai.get_encoding(name)
        libs["bpe-openai"] = {
            "single": lambda t: [
                i for p in pieces(t, name, 100_000) for i in bo.encode_ordinary(p)
            ],
            "batch": lambda lines: bo.encode_ordinary_batch(lines, num_threads=threads),
        }
    except Exception as e:  # not installed, or its files are not at hand offline
        missing["bpe-openai"] = f"{type(e).__name__}: {e}"
    hf = build_hf(bp, pat)
    libs["hf"] = {
        "single": lambda t: [
            i for p in pieces(t, name) for i in hf.encode(p, add_special_tokens=False).ids
        ],
        "batch": lambda lines: [
            e.ids for e in hf.encode_batch_fast(lines, add_special_tokens=False)
        ],
    }
    return libs, missing


def tiktoken_cache_gpt2(data: Path) -> None:
    """Puts GPT-2's encoder.json / vocab.bpe (the shared vocab.json / merges.txt) where
    tiktoken's cache looks for them (files named by the SHA-1 of their URL)."""
    import hashlib
    import shutil
    import tempfile

    cache = Path(os.environ.setdefault("TIKTOKEN_CACHE_DIR", tempfile.mkdtemp(prefix="tt-")))
    url = "https://openaipublic.blob.core.windows.net/gpt-2/encodings/main/"
    for remote, local in [("vocab.bpe", "merges.txt"), ("encoder.json", "vocab.json")]:
        target = cache / hashlib.sha1((url + remote).encode()).hexdigest()
        if not target.exists():
            shutil.copyfile(data / "gpt2" / local, target)


def build_hf(tok: Any, pattern: str) -> Any:
    """An HF ``tokenizers`` BPE with the same vocabulary, merges and pattern (Split + ByteLevel)."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers

    from bytepair.reference import token_to_str

    vocab = {
        token_to_str(b): i for i, b in tok.vocab.items() if i not in tok.special_tokens.values()
    }
    merges = [(token_to_str(a), token_to_str(b)) for a, b in tok.merges]
    hf = Tokenizer(models.BPE(vocab, merges))
    hf.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    return hf


# ====================================================================== texts


def slices(data: Path, corpus: str, count: int, size: int) -> list[str]:
    """``count`` distinct texts of about ``size`` bytes each from one corpus, cut at lines."""
    if corpus == "multilingual":
        parts = [
            slices_of(data / "corpora" / "multilingual" / f"{lang}.txt", count, None)
            for lang in MULTILINGUAL
        ]
        return ["".join(p[k] for p in parts) for k in range(count)]
    file = {"english": "english_gutenberg.txt", "code": "python_stdlib.txt"}[corpus]
    return slices_of(data / "corpora" / file, count, size)


def slices_of(path: Path, count: int, size: int | None) -> list[str]:
    """``count`` consecutive line-aligned slices of ``size`` bytes (None: equal parts)."""
    raw = path.read_bytes()
    size = size or len(raw) // count
    if size * count > len(raw):
        raise SystemExit(f"{path} has {len(raw)} bytes, fewer than {count} x {size}")
    out, start = [], 0
    for _ in range(count):
        end = raw.rfind(b"\n", start, start + size) + 1 or start + size
        out.append(raw[start:end].decode("utf-8"))
        start = end
    return out


# ====================================================================== timing


def first_diff(a: Sequence[Any], b: Sequence[Any]) -> int:
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def run(
    libs: dict[str, Encoder],
    mode: str,
    texts: list[Any],
    nbytes: list[int],
    log: Callable[[str], None],
) -> tuple[dict[str, list[float]], dict[str, str]]:
    """MB/s of each library on each of texts[1:] (texts[0] warms up), and mismatches."""
    for lib in libs.values():
        lib[mode](texts[0])
    speeds: dict[str, list[float]] = {k: [] for k in libs}
    wrong: dict[str, str] = {}
    names = list(libs)
    # each slice in another order: a library that runs right after another meets the CPU's
    # caches as that one left them (HF's are the largest). Slice k goes through the libraries
    # in steps of the k-th number prime to their count, so that each follows a different one
    # in each slice (a rotation kept each behind the same one: bytepair was always after HF)
    steps = [s for s in range(1, len(names)) if math.gcd(s, len(names)) == 1] or [1]
    for k, text in enumerate(texts[1:], 1):
        out = {}
        step = steps[(k - 1) % len(steps)]
        for name in [names[(k - 1 + i * step) % len(names)] for i in range(len(names))]:
            lib = libs[name]
            own = fresh(text)
            gc.collect()
            gc.disable()
            t0 = time.perf_counter()
            out[name] = lib[mode](own)
            dt = time.perf_counter() - t0
            gc.enable()
            speeds[name].append(nbytes[k] / dt / 1e6)
        for name, ids in out.items():
            if ids != out["tiktoken"] and name not in wrong:
                i = first_diff(ids, out["tiktoken"])
                unit = "line" if mode == "batch" else "token"
                wrong[name] = f"slice {k}: differs from tiktoken at {unit} {i}"
        log("    " + ", ".join(f"{n} {s[-1]:.1f}" for n, s in speeds.items()) + " MB/s")
    return speeds, wrong


def medians(speeds: dict[str, list[float]]) -> dict[str, float]:
    return {k: statistics.median(v) for k, v in speeds.items()}


def fresh(text: Any) -> Any:
    """A new ``str`` equal to ``text`` (or a list of them): CPython keeps a string's UTF-8 once
    a library asks for it, so without a copy the first library called would convert every
    non-ASCII text to UTF-8 for all the others."""
    if isinstance(text, list):
        return [fresh(t) for t in text]
    return (text + "\0")[:-1]


# ====================================================================== report


def table(results: list[dict[str, Any]], mode: str, libs: list[str]) -> str:
    head = [
        "encoding",
        "corpus",
        *[f"{lib} MB/s" for lib in libs],
        "vs tiktoken",
        "vs fastest exact peer",
    ]
    rows = [f"| {' | '.join(head)} |", "|" + "---|" * 2 + "---:|" * (len(head) - 2)]
    for r in results:
        speed, wrong = r[mode], r[f"{mode}_wrong"]
        cells = []
        for lib in libs:
            s = speed.get(lib)
            cells.append(
                "—" if s is None else f"{s:.1f}" + (" (not exact)" if lib in wrong else "")
            )
        vs = pair_ratios(r[f"{mode}_slices"], wrong)
        best = min(vs, key=lambda k: statistics.median(vs[k]))
        rows.append(
            f"| {r['encoding']} | {r['corpus']} | {' | '.join(cells)} | "
            f"{fmt_ratio(statistics.median(vs['tiktoken']))} | "
            f"{fmt_ratio(statistics.median(vs[best]))} ({best}) |"
        )
    return "\n".join(rows)


def pair_ratios(each: dict[str, list[float]], wrong: dict[str, str]) -> dict[str, list[float]]:
    """bytepair's speedup over each exact peer, slice by slice: the libraries ran one after
    another on the same slice, so the host's drift (tens of percent over a minute here)
    falls on both sides of each ratio; a ratio of the two medians took it in."""
    return {
        k: [a / b for a, b in zip(each["bytepair"], v)]
        for k, v in each.items()
        if k != "bytepair" and k not in wrong
    }


def per_slice(results: list[dict[str, Any]]) -> list[str]:
    """One line per table row: bytepair's speedup over the fastest exact peer of the single
    thread table, on each slice."""
    lines = []
    for r in results:
        vs = pair_ratios(r["single_slices"], r["single_wrong"])
        best = min(vs, key=lambda k: statistics.median(vs[k]))
        lines.append(
            f"- {r['encoding']} {r['corpus']} (vs {best}): "
            + ", ".join(f"{x:.2f}" for x in vs[best])
        )
    return lines


def report(results: list[dict[str, Any]], args: argparse.Namespace, header: dict[str, str]) -> str:
    libs = ["bytepair", *PEERS]
    wrong = sorted(
        {
            f"{r['encoding']} {r['corpus']} {m}: {lib} {why}"
            for r in results
            for m in ("single", "call", "batch")
            for lib, why in r[f"{m}_wrong"].items()
        }
    )
    lines = [
        "## Encoding: bytepair vs tiktoken, fastokens, bpe-openai, HF tokenizers",
        "",
        f"`python benches/encode_bench.py{' --quick' if args.quick else ''}` — {header['when']}; "
        f"{header['machine']}. {header['versions']}. Other processes kept "
        f"{header['load']:.2f} CPUs busy on average during the run.",
        "",
        f"Cold: {args.repeats} timed slices of about {args.mb} MB per corpus (multilingual: "
        f"{', '.join(MULTILINGUAL)}, one part of each file per slice), each new to every "
        "library, after one warm-up slice, the libraries in another order in each slice "
        "(each after a different one); median MB/s. Ratios are bytepair's speedup "
        "(bold below 1), the median of its speedups slice by slice (each slice timed for "
        "all libraries within seconds, so the host's drift over minutes stays out of them); "
        "the fastest exact peer is the one bytepair leads by least. Each library gets its "
        "own copy of each `str` (so each pays "
        "Python's conversion of non-ASCII text to UTF-8). fastokens is built from its "
        "`cl100k_base` / `o200k_base` presets (its own scanner for them; gpt2 from the "
        "pattern). tokendagger did not build on this machine (no wheel for it; its "
        "source build failed), so it is not in the run.",
        "",
        "### Single thread (`encode_ordinary` of a whole slice, process pinned to one CPU)",
        "",
        table(results, "single", libs),
        "",
        "### One call on every CPU (`encode_ordinary` of a whole slice, not pinned)",
        "",
        "What a user gets from one call on a long text: fastokens and bytepair cut a text of "
        "64-128 KB or more into parts encoded on every CPU; tiktoken, bpe-openai and HF "
        "encode one text on one thread.",
        "",
        table(results, "call", libs),
        "",
        f"### Batch (`encode_ordinary_batch` of a slice's lines, {args.threads} threads)",
        "",
        "fastokens and HF use their own thread pools (every CPU); bytepair, tiktoken and "
        f"bpe-openai get `num_threads={args.threads}`.",
        "",
        table(results, "batch", libs),
        "",
        "Single thread, slice by slice (in the order timed): bytepair's speedup over the "
        "fastest exact peer of the table. Each slice is new text, and bytepair's cache of "
        "recent pre-tokens (src/encode/cache.rs) holds more of the corpus's words with each "
        "slice, so the later slices of a corpus are the faster ones for it.",
        "",
        *per_slice(results),
        "",
        "Ids that differ from tiktoken: " + ("; ".join(wrong) if wrong else "none."),
        "",
        "HF tokenizers here runs the pattern as given in a `Split` pre-tokenizer; its regex "
        "engine (Oniguruma) reads cl100k's possessive `\\p{N}{1,3}+` differently, hence "
        '"not exact" for cl100k. The `tokenizer.json` that `Tokenizer.save(format="hf")` '
        "writes uses an equivalent pattern and is exact (tests/python/test_interop.py).",
    ]
    return "\n".join(lines)


def thread_speedup(data: Path, args: argparse.Namespace, log: Callable[[str], None]) -> str:
    """bytepair alone: batches of a few big texts and of a text's lines (two sizes each) and
    one of many tiny ones, on 1 thread vs all CPUs. Each timing gets a tokenizer of its own,
    built for it (its piece cache empty but for a small warm-up text), so that both thread
    counts meet the same batch in the same state: new text, as users meet it. (With one
    tokenizer for all, each batch found the words the ones before had left in the cache,
    and the thread count that came second in each pair was favoured: 1.77x here became
    1.4-1.8x in the order 1, n, n, 1.) The thread counts alternate 1, n, n, 1, ...;
    ``THREAD_REPEATS`` timings each; the speedup is the median ratio of the timings side by
    side."""
    import bytepair

    ranks = data / "tiktoken" / "cl100k_base.tiktoken"
    spec = bytepair.get_encoding("cl100k_base", path=ranks)

    def new_tokenizer() -> bytepair.Tokenizer:
        # bytepair.load is not cached as get_encoding is: a new core and piece cache each time
        return bytepair.load(ranks, pattern=spec.pattern, special_tokens=spec.special_tokens)

    n = max(args.threads, 2)
    # The host's own speedup at the same moments: sha256 (hashlib lets the GIL go) of 2n
    # blocks of 16 MB, on 1 thread vs n, timed right after each bytepair timing. Pure
    # computation, no memory traffic, nothing shared: what this machine's CPUs give two
    # threads just then (its second CPU ran a busy loop up to 1.6x slower than its first
    # in some runs).
    blocks = [os.urandom(16 << 20) for _ in range(2 * n)]
    pool = concurrent.futures.ThreadPoolExecutor(n)

    def hash_all(k: int) -> float:
        # (after a pause: rayon's threads spin a while before they sleep, and right after
        # a batch the sha256 threads got 1.14-1.61x where alone they got 1.82-1.93x)
        time.sleep(0.05)
        t0 = time.perf_counter()
        if k == 1:
            for b in blocks:
                hashlib.sha256(b).digest()
        else:
            list(pool.map(lambda b: hashlib.sha256(b).digest(), blocks))
        return time.perf_counter() - t0

    # two English slices: one warms each new tokenizer up (code paths, pools), from the other
    # the batches are cut (its first 4 MB, and all 12 MB)
    warm, text = slices(data, "english", 2, 12_000_000)
    warm = warm[:200_000]
    rows = []
    for what, batch in [
        *[
            # 2n texts of equal size, cut where the cut is exact
            (
                f"{2 * n} big texts ({mb} MB in all)",
                pieces(part, "cl100k_base", len(part) // (2 * n) + 1),
            )
            for mb in (4, 12)
            for part in [text[: mb * 1_000_000]]
        ],
        *[
            # a corpus as users batch it: a text per line (or document)
            (f"{len(lines):,} lines ({mb} MB in all)", lines)
            for mb in (4, 12)
            for lines in [split_lines(text[: mb * 1_000_000])]
        ],
        ("100,000 strings of <= 12 chars", [line[:12] for line in split_lines(text)][:100_000]),
    ]:
        times: dict[int, list[float]] = {1: [], n: []}
        host: dict[int, list[float]] = {1: [], n: []}
        for i in range(2 * THREAD_REPEATS):
            k = 1 if i % 4 in (0, 3) else n
            tok = new_tokenizer()
            tok.encode_ordinary_batch(split_lines(warm), num_threads=k)
            copies = fresh(batch)
            # as in `run`: no garbage collection in the timing (the tables before leave
            # millions of objects, and 100,000 new lists set off full collections: the small
            # strings took twice the time here as alone), and the ids freed after the clock
            # (a million ints let go of on one thread were a serial part of both timings)
            gc.collect()
            gc.disable()
            t0 = time.perf_counter()
            ids = tok.encode_ordinary_batch(copies, num_threads=k)
            times[k].append(time.perf_counter() - t0)
            gc.enable()
            del ids, tok
            host[k].append(hash_all(k))
        one, many = statistics.median(times[1]), statistics.median(times[n])
        # the speedup of each pair of timings side by side (1 then n, n then 1, ...): this
        # host's speed drifts by tens of percent over seconds, and a ratio of the two
        # medians took that drift into the ratio (4 MB: 1.58x in one run, 2.00x in the next)
        ratios = [a / b for a, b in zip(times[1], times[n])]
        speedup = statistics.median(ratios)
        host_speedup = statistics.median(a / b for a, b in zip(host[1], host[n]))
        log(
            f"    {what}: {one:.3f} s vs {many:.3f} s; pair ratios "
            + " ".join(f"{r:.2f}" for r in ratios)
        )
        rows.append(
            f"| {what} | {one:.3f} | {many:.3f} | {speedup:.2f}x | "
            f"{min(ratios):.2f}-{max(ratios):.2f} | {host_speedup:.2f}x |"
        )
    pool.shutdown()
    return "\n".join(
        [
            f"### Threads: bytepair `encode_ordinary_batch`, 1 vs {n} threads (cl100k, English)",
            "",
            f"Each timing on a tokenizer built for it (its piece cache empty but for a 0.2 MB "
            f"warm-up text): new text for both thread counts. {THREAD_REPEATS} timings each, "
            "in the order 1, n, n, 1, ...: times are medians; the speedup is the median of "
            "the ratios of the timings side by side (first 1 with first n, and so on), and "
            "their range is given. Host: the same for sha256 of "
            f"{2 * n} blocks of 16 MB on 1 thread vs {n} (hashlib, the GIL released), "
            "timed right after each bytepair timing: pure computation, nothing shared, "
            "what this machine's CPUs gave that many threads at those moments.",
            "",
            f"| batch | 1 thread (s) | {n} threads (s) | speedup | range | host |",
            "|---|---:|---:|---:|---|---:|",
            *rows,
        ]
    )


PER_CALL_PASSES = 6


def per_call(data: Path, log: Callable[[str], None], n_lines: int = 20_000) -> str:
    """Microseconds per call on short texts, one call each (a prompt, a chat message, a line):
    where what a library does around the encoding (checking the special-token policy,
    converting arguments) costs as much as the encoding. cl100k_base; lines of an English
    slice; the ids decoded are tiktoken's. One thread (pinned), best of `PER_CALL_PASSES` passes
    over the lines, the libraries in turn, after a pass that warms every cache up (short texts
    repeat their words)."""
    import bytepair

    os.environ.setdefault("BYTEPAIR_DATA", str(data))
    tt = tiktoken_encoding("cl100k_base", data)
    bp = bytepair.get_encoding("cl100k_base")
    lines = [line for line in slices(data, "english", 2, 2_000_000)[1].splitlines() if line]
    lines = lines[:n_lines]
    ids = [tt.encode_ordinary(line) for line in lines]
    calls: dict[str, dict[str, Callable[[Any], Any]]] = {
        "bytepair": {
            "encode": bp.encode,
            "encode_ordinary": bp.encode_ordinary,
            "decode": bp.decode,
        },
        "tiktoken": {
            "encode": tt.encode,
            "encode_ordinary": tt.encode_ordinary,
            "decode": tt.decode,
        },
    }
    try:
        import fastokens

        ranks = str(data / "tiktoken" / "cl100k_base.tiktoken")
        ft = fastokens.Tokenizer.from_tiktoken(ranks, encoding="cl100k_base")
        calls["fastokens"] = {
            "encode": lambda t: ft.encode(t).ids,
            "encode_ordinary": lambda t: ft.encode_ordinary(t).ids,
            "decode": ft.decode,
        }
    except ImportError:
        pass
    all_cpus = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(all_cpus)})
    rows = []
    try:
        for what in ("encode", "encode_ordinary", "decode"):
            inputs = ids if what == "decode" else lines
            want = lines if what == "decode" else ids
            for lib, fns in calls.items():
                got = [fns[what](x) for x in inputs]  # (warm-up, and the answers checked)
                if got != want:
                    raise SystemExit(f"per call: {lib} {what} differs from tiktoken")
            # the libraries take turns pass by pass (each first in some pass), so a slow
            # stretch of this shared host falls on all of them, not on whichever ran then
            best = dict.fromkeys(calls, math.inf)
            order = list(calls)
            for p in range(PER_CALL_PASSES):
                for lib in order[p % len(order) :] + order[: p % len(order)]:
                    f = calls[lib][what]
                    gc.collect()
                    gc.disable()
                    t0 = time.perf_counter()
                    for x in inputs:
                        f(x)
                    best[lib] = min(best[lib], time.perf_counter() - t0)
                    gc.enable()
            us = {lib: t / len(inputs) * 1e6 for lib, t in best.items()}
            log("    " + what + ": " + ", ".join(f"{k} {v:.2f} us" for k, v in us.items()))
            fastest = min((v, k) for k, v in us.items() if k != "bytepair")
            rows.append(
                f"| `{what}` | "
                + " | ".join(f"{us[k]:.2f}" if k in us else "—" for k in calls)
                + f" | {fmt_ratio(fastest[0] / us['bytepair'])} ({fastest[1]}) |"
            )
    finally:
        os.sched_setaffinity(0, all_cpus)
    chars = sum(map(len, lines)) / len(lines)
    return "\n".join(
        [
            "### Per call: short texts one at a time (cl100k, English, one thread)",
            "",
            f"{len(lines):,} lines of an English slice ({chars:.0f} characters on average), one "
            "call each; `decode` of tiktoken's ids of each line. Microseconds per call, best of "
            f"{PER_CALL_PASSES} passes, the libraries taking turns pass by pass, after a warm-up "
            "pass (whose answers are checked against tiktoken's). Ratio: "
            "the fastest peer's time over bytepair's.",
            "",
            "| call | " + " | ".join(f"{k} us" for k in calls) + " | vs fastest peer |",
            "|---|" + "---:|" * len(calls) + "---:|",
            *rows,
        ]
    )


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    p.add_argument("--quick", action="store_true", help="1 MB slices, 1 timed repeat")
    p.add_argument("--repeats", type=int, default=9, help="timed slices per corpus (default 9)")
    p.add_argument("--mb", type=float, default=3.0, help="slice size in MB (default 3)")
    p.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    p.add_argument("--encodings", nargs="+", default=ENCODINGS)
    p.add_argument("--corpora", nargs="+", default=["english", "code", "multilingual"])
    p.add_argument(
        "--out", type=Path, default=Path(__file__).resolve().parents[1] / "BENCHMARKS.md"
    )
    args = p.parse_args(argv)
    if args.quick:
        args.repeats, args.mb = 1, 1.0
    data = data_dir()

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    all_cpus = os.sched_getaffinity(0)
    one_cpu = {min(all_cpus)}
    snap = cpu_snapshot()
    results = []
    for corpus in args.corpora:
        texts = slices(data, corpus, args.repeats + 1, int(args.mb * 1e6))
        nbytes = [len(t.encode("utf-8")) for t in texts]
        lines = [split_lines(t) for t in texts]
        for name in args.encodings:
            libs, missing = build(name, data, args.threads)
            for lib, why in missing.items():
                log(f"  {lib} missing: {why}")
            log(f"{name} / {corpus}: single thread")
            os.sched_setaffinity(0, one_cpu)
            try:
                single_slices, single_wrong = run(libs, "single", texts, nbytes, log)
            finally:
                os.sched_setaffinity(0, all_cpus)
            log(f"{name} / {corpus}: one call, every CPU")
            call, call_wrong = run(libs, "single", texts, nbytes, log)
            log(f"{name} / {corpus}: batch")
            batch, batch_wrong = run(libs, "batch", lines, nbytes, log)
            results.append(
                {
                    "encoding": name,
                    "corpus": corpus,
                    "single": medians(single_slices),
                    "single_slices": single_slices,
                    "single_wrong": single_wrong,
                    "call": medians(call),
                    "call_slices": call,
                    "call_wrong": call_wrong,
                    "batch": medians(batch),
                    "batch_slices": batch,
                    "batch_wrong": batch_wrong,
                }
            )
            del libs
    log("threads: bytepair batch speedup")
    threads = thread_speedup(data, args, log)
    log("per call: short texts one at a time")
    calls = per_call(data, log)
    header = {
        "when": now(),
        "machine": machine_line(),
        "versions": versions("tiktoken", "fastokens", "bpe-openai", "tokenizers"),
        "load": other_load(snap, cpu_snapshot()),
    }
    text = report(results, args, header) + "\n\n" + threads + "\n\n" + calls
    write_section(args.out, "encoding", text)
    print(text)


if __name__ == "__main__":
    main()
