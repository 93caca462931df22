#!/usr/bin/env python
"""Benchmark bytepair against tiktoken and HF ``tokenizers``, side by side, and write BENCHMARKS.md.

What is measured, in one run:

1. Training. A byte-level BPE with the GPT-2 pattern is trained on
   ``corpora/english_gutenberg.txt`` (45 MB) at vocab 10000 by bytepair and by HF ``tokenizers``
   (``BpeTrainer`` behind a ``Split(GPT-2 regex) + ByteLevel`` pre-tokenizer). Each trainer runs
   in its own subprocess so that its peak RSS can be read (``os.wait4``). HF's ``vocab_size`` is
   adjusted, if needed, until it learns as many merges as bytepair. The merges of the two are
   compared, and bytepair's merges are checked for exact equality with the pure-Python
   ``bytepair.reference`` oracle on a small slice (the oracle is too slow for 45 MB).
2. Encoding with the GPT-2 vocabulary (``gpt2/vocab.json`` + ``gpt2/merges.txt``) of English
   prose, Python source and a multilingual mix: one thread on the whole text, and line batches
   on several threads. Token ids are checked to be equal across the libraries before timing.
3. Every measurement is repeated (``--repeats``, default 3; libraries interleaved); the median
   wall time is reported with MB/s (10^6 bytes of UTF-8 per second) and the speedup of bytepair
   over each peer (peer time / bytepair time: above 1 means bytepair is faster).

Usage::

    python benches/bench.py                   # full run, several minutes; writes BENCHMARKS.md
    python benches/bench.py --quick --out /tmp/B.md   # 5 MB slices, 1 repeat (smoke test)

The data folder is ``../shared/data`` beside the checkout (env ``BYTEPAIR_DATA`` overrides it).
bytepair must be built in release mode (``maturin develop -r``) for the numbers to mean anything.
"""

from __future__ import annotations

import argparse
import datetime
import gc
import json
import os
import platform
import re
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[1]
MULTILINGUAL = ["zh", "ja", "ru", "ar", "hi", "emoji_cldr"]
LINES_PER_BATCH = 10_000
HF_CHUNK_CHARS = 1_000_000
DOC_PIECES = 4

# A cut right before a "\n" that follows a non-whitespace character is exact for the GPT-2
# pattern (possessive or not): no pre-token spans a non-space/space boundary, and a pre-token
# that starts at a whitespace character depends only on the text after it. So encoding or
# counting the pieces separately gives the same result as the whole text. Python's `\s` is a
# superset of Unicode White_Space, which only makes the rule stricter.
_EXACT_CUT = re.compile(r"\S\n")


def exact_chunks(text: str, target: int) -> list[str]:
    """Splits ``text`` into pieces of about ``target`` characters at exact GPT-2 cut points.

    Example: ``exact_chunks("ab\\ncd\\nef", 1) == ["ab", "\\ncd", "\\nef"]``.
    """
    chunks = []
    start = 0
    while len(text) - start > target:
        m = _EXACT_CUT.search(text, start + target - 1)
        if m is None:
            break
        cut = m.end() - 1  # the position of the "\n"
        chunks.append(text[start:cut])
        start = cut
    chunks.append(text[start:])
    return chunks


def split_lines(text: str) -> list[str]:
    """Splits on "\\n" only, keeping it (``str.splitlines`` also splits on \\r, \\x1c, ...)."""
    lines = [line + "\n" for line in text.split("\n")]
    lines[-1] = lines[-1][:-1]
    if not lines[-1]:
        lines.pop()
    return lines


def read_slice(path: Path, max_bytes: int | None) -> str:
    """Reads a UTF-8 file, or its first ``max_bytes`` bytes cut back to the last newline."""
    data = path.read_bytes()
    if max_bytes is not None and len(data) > max_bytes:
        data = data[: data.rindex(b"\n", 0, max_bytes) + 1]
    return data.decode("utf-8")


# ====================================================================== training workers


def hf_bpe_trainer_tokenizer(pattern: str, vocab_size: int) -> tuple[Any, Any]:
    """An HF tokenizer + trainer equivalent to bytepair's training with ``pattern``."""
    from tokenizers import Regex, Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Split(Regex(pattern), behavior="isolated"),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False),
        ]
    )
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        min_frequency=0,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    return tok, trainer


def run_worker(args: argparse.Namespace) -> None:
    """Child process: trains once, writes {seconds, merges, rss_before_train_kb} as JSON."""
    kind = args.worker
    if kind == "bytepair":
        import bytepair

        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        c0 = time.process_time()
        t0 = time.perf_counter()
        tok = bytepair.train(
            args.input, args.vocab_size, pattern="gpt2", threads=args.threads, progress=False
        )
        seconds = time.perf_counter() - t0
        cpu_seconds = time.process_time() - c0
        merges: list[Any] = [[a.hex(), b.hex()] for a, b in tok.merges]
        n_vocab = tok.n_vocab
    else:
        tok, trainer = hf_bpe_trainer_tokenizer(args.pattern, args.vocab_size)
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        c0 = time.process_time()
        t0 = time.perf_counter()
        if kind == "hf":  # whole-file semantics: the text in exact ~1 MB pieces
            with open(args.input, encoding="utf-8", newline="") as f:
                chunks = exact_chunks(f.read(), HF_CHUNK_CHARS)
            tok.train_from_iterator(chunks, trainer, length=len(chunks))
        elif kind == "hf-files":  # HF's own file reader: one sequence per line
            tok.train([args.input], trainer)
        else:
            raise SystemExit(f"unknown worker {kind!r}")
        seconds = time.perf_counter() - t0
        cpu_seconds = time.process_time() - c0
        raw = json.loads(tok.to_str())["model"]["merges"]
        merges = [m.split(" ", 1) if isinstance(m, str) else m for m in raw]
        n_vocab = tok.get_vocab_size()
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(
            {
                "seconds": seconds,
                "cpu_seconds": cpu_seconds,
                "merges": merges,
                "n_vocab": n_vocab,
                "rss_before_kb": rss0,
            },
            f,
        )


def spawn_trainer(
    kind: str, input_path: Path, vocab_size: int, threads: int, pattern: str, tmp: Path
) -> dict[str, Any]:
    """Runs one training in a subprocess; returns the worker's JSON plus its peak RSS (KiB)."""
    out = tmp / f"train-{kind}.json"
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", kind]
    cmd += ["--input", str(input_path), "--vocab-size", str(vocab_size)]
    cmd += ["--threads", str(threads), "--pattern", pattern, "--out", str(out)]
    proc = subprocess.Popen(cmd)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"training worker {kind} failed with exit code {proc.returncode}")
    with open(out, encoding="utf-8") as f:
        result = json.load(f)
    out.unlink()
    result["maxrss_kb"] = usage.ru_maxrss  # Linux: KiB
    result["vocab_size"] = vocab_size
    return result


def merges_to_bytes(kind: str, merges: list[list[str]]) -> list[tuple[bytes, bytes]]:
    """Worker merges (hex for bytepair, GPT-2 byte-unicode strings for HF) as byte pairs."""
    if kind == "bytepair":
        return [(bytes.fromhex(a), bytes.fromhex(b)) for a, b in merges]
    from bytepair.reference import str_to_token

    return [(str_to_token(a), str_to_token(b)) for a, b in merges]


def compare_merges(a: list[tuple[bytes, bytes]], b: list[tuple[bytes, bytes]]) -> dict[str, Any]:
    """How far two merge lists agree: common prefix, equal positions, shared merges, first diff."""
    prefix = 0
    for x, y in zip(a, b):
        if x != y:
            break
        prefix += 1
    n = min(len(a), len(b))
    same_pos = {k: sum(a[i] == b[i] for i in range(min(k, n))) for k in (100, 1000, n)}
    first = None
    if prefix < n:
        first = {"index": prefix, "a": a[prefix], "b": b[prefix]}
    return {
        "prefix": prefix,
        "n": n,
        "same_pos": same_pos,
        "shared": len(set(a) & set(b)),
        "shared_first_1000": len(set(a[:1000]) & set(b[:1000])),
        "first_diff": first,
    }


def bench_training(
    args: argparse.Namespace, corpus: Path, tmp: Path, pattern: str, log: Callable[[str], None]
) -> dict[str, Any]:
    """Trains with bytepair, HF (exact pieces) and HF (its file reader); see module docs."""
    corpus.read_bytes()  # warm the page cache so the first run does not pay for the disk
    kinds = ["bytepair", "hf", "hf-files"]
    runs: dict[str, list[dict[str, Any]]] = {k: [] for k in kinds}
    vocab: dict[str, int] = {k: args.vocab_size for k in kinds}
    notes: list[str] = []

    log(f"training: bytepair on {corpus.name}, vocab {args.vocab_size}")
    runs["bytepair"].append(
        spawn_trainer("bytepair", corpus, args.vocab_size, args.threads, pattern, tmp)
    )
    target = len(runs["bytepair"][0]["merges"])
    for kind in kinds[1:]:
        # HF's vocab_size counts distinct token strings: a merge that yields a string already in
        # the vocabulary adds no entry, so HF may learn more merges than vocab_size - 256.
        # Adjust until both learn the same number of merges.
        for _ in range(5):
            log(f"training: {kind}, vocab_size={vocab[kind]}")
            r = spawn_trainer(kind, corpus, vocab[kind], args.threads, pattern, tmp)
            got = len(r["merges"])
            if got == target:
                runs[kind].append(r)
                break
            notes.append(
                f"{kind}: vocab_size={vocab[kind]} gave {got} merges (bytepair: {target}); "
                f"retrying with vocab_size={vocab[kind] + target - got}"
            )
            vocab[kind] += target - got
        else:
            notes.append(f"{kind}: could not match bytepair's merge count; using the last run")
            runs[kind].append(r)
    for rep in range(1, args.repeats):
        for kind in kinds:
            log(f"training: {kind}, repeat {rep + 1}/{args.repeats}")
            runs[kind].append(spawn_trainer(kind, corpus, vocab[kind], args.threads, pattern, tmp))

    merges = {k: merges_to_bytes(k, runs[k][0]["merges"]) for k in kinds}
    for k in kinds:
        if any(merges_to_bytes(k, r["merges"]) != merges[k] for r in runs[k][1:]):
            notes.append(f"NONDETERMINISTIC: {k} learned different merges in different runs")
    size = corpus.stat().st_size
    rows = {}
    for k in kinds:
        secs = [r["seconds"] for r in runs[k]]
        rows[k] = {
            "times": secs,
            "median": statistics.median(secs),
            "cpu": statistics.median(r["cpu_seconds"] for r in runs[k]),
            "mbps": size / 1e6 / statistics.median(secs),
            "maxrss_mb": max(r["maxrss_kb"] for r in runs[k]) / 1024,
            "rss_before_mb": max(r["rss_before_kb"] for r in runs[k]) / 1024,
            "merges": len(merges[k]),
            "n_vocab": runs[k][0]["n_vocab"],
            "vocab_size_arg": vocab[k],
        }
    return {
        "corpus": corpus,
        "bytes": size,
        "rows": rows,
        "notes": notes,
        "cmp_hf": compare_merges(merges["bytepair"], merges["hf"]),
        "cmp_hf_files": compare_merges(merges["bytepair"], merges["hf-files"]),
        "cmp_hf_hf_files": compare_merges(merges["hf"], merges["hf-files"]),
    }


def check_reference(
    args: argparse.Namespace, corpus: Path, tmp: Path, pattern: str, log: Callable[[str], None]
) -> dict[str, Any]:
    """bytepair's merges vs the pure-Python oracle (and HF's) on a slice of the corpus."""
    import bytepair
    from bytepair import reference

    text = read_slice(corpus, args.ref_bytes)
    path = tmp / "reference-slice.txt"
    path.write_bytes(text.encode("utf-8"))
    vocab_size = args.ref_vocab
    log(f"reference check: {len(text.encode()) / 1e6:.2f} MB slice, vocab {vocab_size}")
    t0 = time.perf_counter()
    ref_vocab, ref_merges = reference.train_bpe(text, vocab_size)
    ref_seconds = time.perf_counter() - t0
    t0 = time.perf_counter()
    bp_text = bytepair.train(iter([text]), vocab_size, threads=args.threads, progress=False)
    bp_seconds = time.perf_counter() - t0
    bp_path = bytepair.train(str(path), vocab_size, threads=args.threads, progress=False)
    hf = spawn_trainer("hf", path, vocab_size, args.threads, pattern, tmp)
    hf_merges = merges_to_bytes("hf", hf["merges"])
    path.unlink()
    return {
        "bytes": len(text.encode("utf-8")),
        "vocab_size": vocab_size,
        "ref_merges": len(ref_merges),
        "ref_seconds": ref_seconds,
        "bp_seconds": bp_seconds,
        "text_equal": bp_text.merges == ref_merges and bp_text.vocab == ref_vocab,
        "path_equal": bp_path.merges == ref_merges and bp_path.vocab == ref_vocab,
        "cmp_bp": compare_merges(ref_merges, bp_text.merges),
        "cmp_hf": compare_merges(ref_merges, hf_merges),
    }


# ====================================================================== encoding


def build_encoders(data: Path) -> dict[str, Any]:
    """The GPT-2 tokenizer in each library, built offline from the shared data files."""
    import tiktoken
    import tiktoken.load
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    import bytepair

    vocab_json, merges_txt = data / "gpt2" / "vocab.json", data / "gpt2" / "merges.txt"
    encodings = json.loads((data / "tiktoken" / "encodings.json").read_text(encoding="utf-8"))
    tt = tiktoken.Encoding(
        "gpt2",
        pat_str=encodings["r50k_base"]["pat_str"],
        mergeable_ranks=tiktoken.load.load_tiktoken_bpe(
            str(data / "tiktoken" / "r50k_base.tiktoken")
        ),
        special_tokens={"<|endoftext|>": 50256},
    )
    bp = bytepair.Tokenizer.from_files(vocab_json, merges_txt)
    hf = Tokenizer(models.BPE.from_file(str(vocab_json), str(merges_txt)))
    hf.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    hf.decoder = decoders.ByteLevel()
    return {"tiktoken": tt, "bytepair": bp, "hf": hf}


def first_mismatch(a: Sequence[Any], b: Sequence[Any]) -> int:
    """Index of the first differing element (or the shorter length)."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def time_interleaved(
    fns: dict[str, Callable[[], Any]], repeats: int, log: Callable[[str], None], what: str
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Times each function ``repeats`` times, round-robin, GC off inside the timed region.

    Returns:
        ``(wall, cpu)``: wall-clock seconds and process CPU seconds (all threads) per run.
    """
    wall: dict[str, list[float]] = {k: [] for k in fns}
    cpu: dict[str, list[float]] = {k: [] for k in fns}
    for rep in range(repeats):
        for name, fn in fns.items():
            gc.collect()
            gc.disable()
            c0 = time.process_time()
            t0 = time.perf_counter()
            out = fn()
            dt = time.perf_counter() - t0
            dc = time.process_time() - c0
            gc.enable()
            del out
            wall[name].append(dt)
            cpu[name].append(dc)
            log(f"  {what} {name} run {rep + 1}/{repeats}: {dt:.3f} s (cpu {dc:.3f} s)")
    return wall, cpu


def bench_encoding(
    name: str, text: str, enc: dict[str, Any], args: argparse.Namespace, log: Callable[[str], None]
) -> dict[str, Any]:
    """Single-thread whole-text and multi-thread line-batch encoding of one corpus."""
    tt, bp, hf = enc["tiktoken"], enc["bytepair"], enc["hf"]
    nbytes = len(text.encode("utf-8"))
    hf_chunks = exact_chunks(text, HF_CHUNK_CHARS)
    # a few big documents: the text in DOC_PIECES exact pieces (their ids concatenate to the
    # whole-text ids); HF is left out here, at ~1 MB/s it would take minutes
    docs = exact_chunks(text, -(-len(text) // DOC_PIECES))
    lines = split_lines(text)
    batches = [lines[i : i + LINES_PER_BATCH] for i in range(0, len(lines), LINES_PER_BATCH)]
    n = args.threads

    def hf_single() -> list[int]:
        ids: list[int] = []
        for chunk in hf_chunks:
            ids += hf.encode(chunk, add_special_tokens=False).ids
        return ids

    single = {
        "bytepair": lambda: bp.encode_ordinary(text),
        "tiktoken": lambda: tt.encode_ordinary(text),
        "hf": hf_single,
    }

    def batched(f: Callable[[list[str]], list[list[int]]]) -> Callable[[], list[list[int]]]:
        def run() -> list[list[int]]:
            out: list[list[int]] = []
            for b in batches:
                out += f(b)
            return out

        return run

    batch = {
        "bytepair": batched(lambda b: bp.encode_ordinary_batch(b, num_threads=n)),
        "tiktoken": batched(lambda b: tt.encode_ordinary_batch(b, num_threads=n)),
        "hf": batched(lambda b: [e.ids for e in hf.encode_batch(b, add_special_tokens=False)]),
        "hf_fast": batched(
            lambda b: [e.ids for e in hf.encode_batch_fast(b, add_special_tokens=False)]
        ),
    }

    few = {
        "bytepair": lambda: bp.encode_ordinary_batch(docs, num_threads=n),
        "tiktoken": lambda: tt.encode_ordinary_batch(docs, num_threads=n),
    }

    # verify first (this is also the warm-up run)
    problems: list[str] = []
    log(f"encoding {name}: verifying ids")
    ids = {k: f() for k, f in single.items()}
    ntokens = len(ids["tiktoken"])
    for k in ("bytepair", "hf"):
        if ids[k] != ids["tiktoken"]:
            i = first_mismatch(ids[k], ids["tiktoken"])
            problems.append(
                f"single: {k} ids differ from tiktoken at token {i} "
                f"({k}: {ids[k][i : i + 5]}, tiktoken: {ids['tiktoken'][i : i + 5]}; "
                f"lengths {len(ids[k])} vs {ntokens})"
            )
    if bp.decode(ids["bytepair"]) != text:
        problems.append("single: bytepair decode(encode(text)) != text")
    for k, f in few.items():
        got = [i for piece in f() for i in piece]
        if got != ids["tiktoken"]:
            i = first_mismatch(got, ids["tiktoken"])
            problems.append(f"few big texts: {k} ids differ from whole-text ids at token {i}")
    del ids
    bids = {k: f() for k, f in batch.items()}
    for k in ("bytepair", "hf", "hf_fast"):
        if bids[k] != bids["tiktoken"]:
            i = first_mismatch(bids[k], bids["tiktoken"])
            problems.append(
                f"batch: {k} ids differ from tiktoken on line {i}: {lines[i][:60]!r} "
                f"({k}: {bids[k][i][:8]}, tiktoken: {bids['tiktoken'][i][:8]})"
            )
    batch_tokens = sum(len(x) for x in bids["tiktoken"])
    del bids
    for p in problems:
        log(f"!!! MISMATCH {name}: {p}")

    log(f"encoding {name}: timing single-thread")
    t_single, c_single = time_interleaved(single, args.repeats, log, f"{name} single")
    log(f"encoding {name}: timing batch ({n} threads)")
    t_batch, c_batch = time_interleaved(batch, args.repeats, log, f"{name} batch")
    log(f"encoding {name}: timing {len(docs)} big texts ({n} threads)")
    t_few, c_few = time_interleaved(few, args.repeats, log, f"{name} few")
    return {
        "name": name,
        "bytes": nbytes,
        "tokens": ntokens,
        "batch_tokens": batch_tokens,
        "lines": len(lines),
        "batches": len(batches),
        "hf_chunks": len(hf_chunks),
        "single": {k: statistics.median(v) for k, v in t_single.items()},
        "batch": {k: statistics.median(v) for k, v in t_batch.items()},
        "single_cpu": {k: statistics.median(v) for k, v in c_single.items()},
        "batch_cpu": {k: statistics.median(v) for k, v in c_batch.items()},
        "single_all": t_single,
        "batch_all": t_batch,
        "docs": len(docs),
        "few": {k: statistics.median(v) for k, v in t_few.items()},
        "few_cpu": {k: statistics.median(v) for k, v in c_few.items()},
        "few_all": t_few,
        "problems": problems,
    }


# ====================================================================== report


def cpu_snapshot() -> tuple[float, float, float]:
    """(CPU seconds used by the whole machine, by this process and its reaped children, wall)."""
    with open("/proc/stat", encoding="ascii") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal ...: busy = all but idle and iowait
    busy = sum(fields[:3]) + sum(fields[5:7])
    t = os.times()
    own = t.user + t.system + t.children_user + t.children_system
    return busy / os.sysconf("SC_CLK_TCK"), own, time.perf_counter()


def other_load(a: tuple[float, float, float], b: tuple[float, float, float]) -> float:
    """Average number of CPUs kept busy by other processes between two ``cpu_snapshot``s."""
    return max(0.0, ((b[0] - a[0]) - (b[1] - a[1])) / (b[2] - a[2]))


def build_fingerprint() -> str:
    """sha256 prefix and mtime of the compiled ``bytepair._core`` being measured."""
    import hashlib

    import bytepair._core

    so = Path(bytepair._core.__file__)
    digest = hashlib.sha256(so.read_bytes()).hexdigest()[:12]
    mtime = datetime.datetime.fromtimestamp(so.stat().st_mtime, datetime.timezone.utc)
    return f"`{so.name}` sha256 {digest}…, built {mtime:%Y-%m-%d %H:%M:%S} UTC"


def machine_info() -> dict[str, str]:
    """CPU, cores, memory, OS, Python and library versions."""
    from importlib.metadata import version

    import bytepair

    cpu = "unknown"
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    mem = "unknown"
    with open("/proc/meminfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    try:
        commit = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(REPO), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        commit += " + uncommitted changes" if dirty else ""
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    return {
        "cpu": cpu,
        "nproc": str(os.cpu_count()),
        "affinity": str(len(os.sched_getaffinity(0))),
        "mem": mem,
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "bytepair": f"{bytepair.__version__} (checkout at git {commit} when the run started)",
        "tiktoken": version("tiktoken"),
        "tokenizers": version("tokenizers"),
    }


def fmt_s(x: float) -> str:
    return f"{x:.3f}" if x < 10 else f"{x:.2f}"


def fmt_ratio(peer: float, ours: float) -> str:
    r = peer / ours
    return f"**{r:.2f}x**" if r < 1 else f"{r:.2f}x"


def table_header(cols: list[str], left: int = 1) -> str:
    """A markdown table header; the first ``left`` columns left-aligned, the rest right."""
    rule = ["---"] * left + ["---:"] * (len(cols) - left)
    return f"| {' | '.join(cols)} |\n|{'|'.join(rule)}|"


def fmt_merge(m: tuple[bytes, bytes]) -> str:
    return f"`{m[0]!r} + {m[1]!r}`"


def write_report(
    path: Path,
    args: argparse.Namespace,
    info: dict[str, str],
    started: datetime.datetime,
    elapsed: float,
    load: tuple[tuple[float, ...], tuple[float, ...]],
    builds: tuple[str, str, str],
    others: dict[str, float],
    training: dict[str, Any],
    ref: dict[str, Any],
    encoding: list[dict[str, Any]],
    hf_pattern_note: str,
) -> None:
    """Writes the markdown report."""
    out: list[str] = []
    w = out.append
    cmd = " ".join(shlex.quote(a) for a in [Path(sys.argv[0]).as_posix(), *sys.argv[1:]])
    w("# Benchmarks\n")
    w(
        "bytepair vs [tiktoken](https://github.com/openai/tiktoken) and "
        "[HF tokenizers](https://github.com/huggingface/tokenizers), measured side by side in "
        "one run of `benches/bench.py`."
        + (
            " **Quick mode: 5 MB slices, 1 repeat; a smoke test, not a benchmark.**"
            if args.quick
            else ""
        )
        + "\n"
    )
    w(f"- Date: {started:%Y-%m-%d %H:%M} UTC; the whole run took {elapsed / 60:.1f} min.")
    w(f"- Command: `python {cmd}`")
    w(
        f"- Machine: {info['cpu']}, {info['nproc']} logical CPUs ({info['affinity']} usable), "
        f"{info['mem']} RAM, {info['os']}."
    )
    w(
        f"- Python {info['python']}; bytepair {info['bytepair']}, built with "
        f"`maturin develop -r` (release, LTO); tiktoken {info['tiktoken']}; "
        f"tokenizers {info['tokenizers']}."
    )
    w(f"- bytepair extension measured: {builds[0]}.")
    if builds[0] != builds[1]:
        w(
            "- **WARNING: the bytepair extension was rebuilt during the training runs (after "
            f"training: {builds[1]}); the training numbers may mix two builds. Run again.**"
        )
    elif builds[1] != builds[2]:
        w(
            f"- Note: the extension file was rebuilt after the training runs (now {builds[2]}). "
            "The encoding runs still used the build above, which this process loaded at start, "
            "so every number here is from that one build; the current build is not measured."
        )
    w(
        "- Other processes kept on average "
        + ", ".join(f"{v:.2f} CPUs busy during {k}" for k, v in others.items())
        + f" (of {info['affinity']}; from /proc/stat minus this benchmark's own CPU time)."
    )
    busiest = max(others.values(), default=0.0)
    if busiest >= 0.5:
        w(
            f"- **Caveat: other jobs kept up to {busiest:.1f} of the {info['affinity']} CPUs busy, "
            "so the multi-thread measurements (training, batches) had less than "
            f"{info['affinity']} cores: compare their CPU time with their wall time before "
            "reading anything about parallel scaling into them.**"
        )
    w(
        f"- Load average (1/5/15 min) at start: {' / '.join(f'{x:.2f}' for x in load[0])}; "
        f"at end: {' / '.join(f'{x:.2f}' for x in load[1])}."
    )
    w(
        f"- Each number is the median of {args.repeats} run(s); libraries are run round-robin "
        "within each repeat. MB = 10^6 bytes of UTF-8 input. **Speedup = peer time / bytepair "
        "time: above 1 means bytepair is faster; values below 1 are in bold.**"
    )
    w(
        "- The machine is shared (other jobs may run at the same time) and small, so the "
        "numbers are noisy: differences under ~10-15% should not be read as real.\n"
    )

    # ---- training
    tr = training["rows"]
    bp = tr["bytepair"]
    w("## Training\n")
    w(
        f"Byte-level BPE, GPT-2 pattern, no special tokens, on `{training['corpus'].name}` "
        f"({training['bytes'] / 1e6:.1f} MB), vocab {args.vocab_size}, {args.threads} threads "
        "(bytepair `threads=`, HF `RAYON_NUM_THREADS`). Each run is a fresh subprocess; the time "
        "is measured inside it around the training call (reading the file included, interpreter "
        "start-up and imports not). Peak RSS is the child's `ru_maxrss` (max over runs); "
        "'RSS before' is the child's peak after imports, before training.\n"
    )
    trainer_cols = ["trainer", "input", "merges learned", "vocab_size passed", "median s"]
    trainer_cols += ["MB/s", "CPU s", "peak RSS MB", "RSS before MB", "bytepair speedup"]
    w(table_header(trainer_cols, left=2))
    labels = {
        "bytepair": ("bytepair", "`bytepair.train(path, ...)`"),
        "hf": ("HF tokenizers", "text in exact ~1 MB pieces, `train_from_iterator`"),
        "hf-files": ("HF tokenizers", "`Tokenizer.train([path])` (HF reads lines)"),
    }
    for k, r in tr.items():
        who, how = labels[k]
        ratio = "—" if k == "bytepair" else fmt_ratio(r["median"], bp["median"])
        w(
            f"| {who} | {how} | {r['merges']} | {r['vocab_size_arg']} | {fmt_s(r['median'])} | "
            f"{r['mbps']:.2f} | {fmt_s(r['cpu'])} | {r['maxrss_mb']:.0f} | "
            f"{r['rss_before_mb']:.0f} | {ratio} |"
        )
    w("")
    w(
        "All runs (s): "
        + "; ".join(f"{k}: {', '.join(fmt_s(t) for t in r['times'])}" for k, r in tr.items())
        + "\n"
    )
    w(f"HF setup: {hf_pattern_note}\n")
    for note in training["notes"]:
        w(f"- {note}")
    if training["notes"]:
        w("")

    w("### Are the merges the same?\n")
    w(
        f"- **bytepair vs the pure-Python reference** (`bytepair.reference.train_bpe`, the "
        f"CS336 rules) on the first {ref['bytes'] / 1e6:.2f} MB of the corpus at vocab "
        f"{ref['vocab_size']} ({ref['ref_merges']} merges): "
        + ("**identical**" if ref["text_equal"] else "**DIFFERENT**")
        + " merges and vocab when trained from the text, "
        + ("**identical**" if ref["path_equal"] else "**DIFFERENT**")
        + " when trained from the file. (Reference: "
        f"{ref['ref_seconds']:.1f} s; bytepair: {ref['bp_seconds']:.3f} s.)"
    )
    c = ref["cmp_hf"]
    w(
        f"- HF vs the reference on the same slice: common prefix {c['prefix']} of {c['n']} "
        f"merges; {c['shared']} of {c['n']} merges shared as a set."
        + (
            f" First difference at merge {c['first_diff']['index']}: reference "
            f"{fmt_merge(c['first_diff']['a'])}, HF {fmt_merge(c['first_diff']['b'])}."
            if c["first_diff"]
            else ""
        )
    )
    for key, what in (
        ("cmp_hf", "bytepair vs HF (exact pieces)"),
        ("cmp_hf_files", "bytepair vs HF (`train([path])`, per line)"),
        ("cmp_hf_hf_files", "HF (exact pieces) vs HF (per line)"),
    ):
        c = training[key]
        sp = c["same_pos"]
        line = (
            f"- {what}, full corpus: common prefix {c['prefix']} of {c['n']} merges; same merge "
            f"at the same position in {sp[100]}/100 of the first 100, {sp[1000]}/1000 of the "
            f"first 1000, {sp[c['n']]}/{c['n']} overall; shared as a set: {c['shared']}/{c['n']} "
            f"({c['shared_first_1000']}/1000 among the first 1000)."
        )
        if c["first_diff"]:
            d = c["first_diff"]
            line += f" First difference at merge {d['index']}: "
            line += f"{fmt_merge(d['a'])} vs {fmt_merge(d['b'])}."
        w(line)
    w(
        '\nBoth follow "most frequent pair first"; they may differ in how ties are broken '
        "(bytepair: lexicographically greatest byte pair, as CS336; HF: smallest pair of token "
        "ids), and after the first different merge the counts diverge. HF's file reader also "
        "cuts the text into lines, which changes a few pre-tokens (e.g. trailing spaces before a "
        "newline).\n"
    )

    # ---- encoding
    w("## Encoding (GPT-2 vocabulary)\n")
    w(
        "Same `gpt2/vocab.json` + `gpt2/merges.txt` in each library: bytepair "
        "`Tokenizer.from_files`, tiktoken `Encoding` built from `r50k_base.tiktoken`, HF "
        "`models.BPE.from_file` with a `ByteLevel(add_prefix_space=False)` pre-tokenizer. "
        "Ids are compared across the libraries before timing.\n"
    )
    w(
        "- **Single thread**: bytepair `encode_ordinary(text)` and tiktoken "
        "`encode_ordinary(text)` on the whole corpus as one string. HF `encode(...).ids` "
        "runs on the text cut into "
        f"~{HF_CHUNK_CHARS / 1e6:.0f} MB pieces at exact pre-token boundaries (a cut before a "
        "newline that follows a non-space character; the ids equal whole-text ids), because "
        "HF builds a full `Encoding` (offsets, token strings) and runs at about 1 MB/s.\n"
        f"- **Batch, {args.threads} threads**: the corpus split into lines (keeping `\\n`), "
        f"in batches of {LINES_PER_BATCH} lines, one call per batch: bytepair "
        f"`encode_ordinary_batch(num_threads={args.threads})`, tiktoken "
        f"`encode_ordinary_batch(num_threads={args.threads})`, HF `encode_batch` and "
        f"`encode_batch_fast` (no offsets) with `RAYON_NUM_THREADS={args.threads}`, ids taken "
        "from each `Encoding`.\n"
    )
    w("### Single thread, whole text\n")
    cols = ["corpus", "MB", "tokens", "bytepair s", "tiktoken s", "HF s", "bytepair MB/s"]
    cols += ["tiktoken MB/s", "HF MB/s", "speedup vs tiktoken", "speedup vs HF"]
    w(table_header(cols))
    for e in encoding:
        s, mb = e["single"], e["bytes"] / 1e6
        w(
            f"| {e['name']} | {mb:.1f} | {e['tokens']:,} | {fmt_s(s['bytepair'])} | "
            f"{fmt_s(s['tiktoken'])} | {fmt_s(s['hf'])} | {mb / s['bytepair']:.1f} | "
            f"{mb / s['tiktoken']:.1f} | {mb / s['hf']:.2f} | "
            f"{fmt_ratio(s['tiktoken'], s['bytepair'])} | {fmt_ratio(s['hf'], s['bytepair'])} |"
        )
    w("")
    w(
        "CPU time (`time.process_time`, median) of the same runs: less sensitive than wall time "
        "to other jobs on the machine.\n"
    )
    w(table_header(["corpus", "bytepair CPU s", "tiktoken CPU s", "HF CPU s", "vs tiktoken"]))
    for e in encoding:
        c = e["single_cpu"]
        w(
            f"| {e['name']} | {fmt_s(c['bytepair'])} | {fmt_s(c['tiktoken'])} | "
            f"{fmt_s(c['hf'])} | {fmt_ratio(c['tiktoken'], c['bytepair'])} |"
        )
    w("")
    w(f"### Batch of lines, {args.threads} threads\n")
    cols = ["corpus", "lines", "bytepair s", "tiktoken s", "HF s", "HF fast s", "bytepair MB/s"]
    cols += ["tiktoken MB/s", "HF MB/s", "HF fast MB/s", "speedup vs tiktoken", "vs HF"]
    cols += ["vs HF fast"]
    w(table_header(cols))
    for e in encoding:
        b, mb = e["batch"], e["bytes"] / 1e6
        w(
            f"| {e['name']} | {e['lines']:,} | {fmt_s(b['bytepair'])} | {fmt_s(b['tiktoken'])} | "
            f"{fmt_s(b['hf'])} | {fmt_s(b['hf_fast'])} | {mb / b['bytepair']:.1f} | "
            f"{mb / b['tiktoken']:.1f} | {mb / b['hf']:.1f} | {mb / b['hf_fast']:.1f} | "
            f"{fmt_ratio(b['tiktoken'], b['bytepair'])} | {fmt_ratio(b['hf'], b['bytepair'])} | "
            f"{fmt_ratio(b['hf_fast'], b['bytepair'])} |"
        )
    w("")
    w(
        "CPU time of the batch runs (all threads; the work done, not the wait): "
        + "; ".join(
            f"{e['name']}: " + ", ".join(f"{k} {fmt_s(v)}" for k, v in e["batch_cpu"].items())
            for e in encoding
        )
        + ".\n"
    )
    w(f"### Batch of a few big texts, {args.threads} threads\n")
    w(
        f"The whole corpus cut into {DOC_PIECES} exact pieces (as above, so their ids concatenate "
        "to the whole-text ids) and encoded in one `encode_ordinary_batch(pieces, "
        f"num_threads={args.threads})` call: bytepair vs tiktoken only (HF would take minutes). "
        "With enough cores this should take about the single-thread time divided by the "
        "number of threads.\n"
    )
    cols = ["corpus", "pieces", "bytepair s", "bytepair CPU s", "tiktoken s", "tiktoken CPU s"]
    cols += [
        "bytepair MB/s",
        "tiktoken MB/s",
        "speedup vs tiktoken",
        "bytepair: speedup over its single thread",
    ]
    w(table_header(cols))
    for e in encoding:
        f, c, mb = e["few"], e["few_cpu"], e["bytes"] / 1e6
        w(
            f"| {e['name']} | {e['docs']} | {fmt_s(f['bytepair'])} | {fmt_s(c['bytepair'])} | "
            f"{fmt_s(f['tiktoken'])} | {fmt_s(c['tiktoken'])} | {mb / f['bytepair']:.1f} | "
            f"{mb / f['tiktoken']:.1f} | {fmt_ratio(f['tiktoken'], f['bytepair'])} | "
            f"{fmt_ratio(e['single']['bytepair'], f['bytepair'])} |"
        )
    w("")
    w("All runs, wall time (s):\n")
    for e in encoding:
        for mode in ("single", "batch", "few"):
            runs = e[f"{mode}_all"]
            w(
                f"- {e['name']}, {mode}: "
                + "; ".join(f"{k} {', '.join(fmt_s(t) for t in v)}" for k, v in runs.items())
            )
    w("")
    w("### Id checks\n")
    for e in encoding:
        if e["problems"]:
            for p in e["problems"]:
                w(f"- **MISMATCH** in {e['name']}: {p}")
        else:
            w(
                f"- {e['name']}: bytepair, tiktoken and HF give identical ids, whole text "
                f"({e['tokens']:,} tokens) and per line ({e['batch_tokens']:,} tokens); "
                "bytepair's decode returns the text."
            )
    w("")
    w(
        "Corpora (`../shared/data`, see its README): `english_gutenberg.txt` (79 Project Gutenberg "
        "books), `python_stdlib.txt` (CPython 3.11 standard library), and `multilingual` = "
        + " + ".join(f"`multilingual/{m}.txt`" for m in MULTILINGUAL)
        + " concatenated in that order."
    )
    path.write_text("\n".join(out) + "\n", encoding="utf-8")


# ====================================================================== main


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--repeats", type=int, default=3, help="runs per measurement (median shown)")
    p.add_argument("--quick", action="store_true", help="5 MB slices and 1 repeat (smoke test)")
    p.add_argument("--out", type=Path, default=REPO / "BENCHMARKS.md", help="report path")
    p.add_argument("--json", type=Path, default=None, help="also write raw results as JSON")
    p.add_argument("--threads", type=int, default=2, help="threads for training and batches")
    p.add_argument("--vocab-size", type=int, default=10_000, help="training vocab size")
    # internal: training worker subprocess
    p.add_argument("--worker", default=None, help=argparse.SUPPRESS)
    p.add_argument("--input", default=None, help=argparse.SUPPRESS)
    p.add_argument("--pattern", default=None, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.quick:
        args.repeats = 1
    args.slice_bytes = 5_000_000 if args.quick else None
    args.ref_bytes = 1_000_000 if args.quick else 2_000_000
    args.ref_vocab = 500 if args.quick else 1000
    return args


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    if args.worker:
        run_worker(args)
        return
    # HF reads these when its thread pool starts; set them before anything imports tokenizers
    os.environ["RAYON_NUM_THREADS"] = str(args.threads)
    os.environ["TOKENIZERS_PARALLELISM"] = "true"
    started = datetime.datetime.now(datetime.timezone.utc)
    t_start = time.perf_counter()
    load0 = os.getloadavg()

    def log(msg: str) -> None:
        print(f"[{time.perf_counter() - t_start:7.1f}s] {msg}", file=sys.stderr, flush=True)

    data = Path(os.environ.get("BYTEPAIR_DATA", REPO.parent / "shared" / "data"))
    corpora = data / "corpora"
    import bytepair._core

    pattern = bytepair._core.GPT2_PATTERN
    from tokenizers import Regex, pre_tokenizers

    try:
        pre_tokenizers.Split(Regex(pattern), behavior="isolated").pre_tokenize_str("a  b")
        hf_pattern_note = (
            "HF's Oniguruma regex accepts bytepair's GPT-2 pattern with possessive quantifiers "
            f"(`{pattern}`) as is, so both pre-tokenize with the same pattern string."
        )
    except Exception as exc:  # noqa: BLE001 - any rejection means: fall back
        enc = json.loads((data / "tiktoken" / "encodings.json").read_text(encoding="utf-8"))
        pattern = enc["r50k_base"]["pat_str_no_possessive"]
        hf_pattern_note = (
            f"HF rejected the possessive GPT-2 pattern ({exc}); HF and bytepair both train with "
            f"the equivalent non-possessive pattern `{pattern}`."
        )

    build0 = build_fingerprint()
    info = machine_info()
    others: dict[str, float] = {}
    snap = cpu_snapshot()
    with tempfile.TemporaryDirectory(prefix="bytepair-bench-") as tmpdir:
        tmp = Path(tmpdir)
        english = corpora / "english_gutenberg.txt"
        if args.slice_bytes is not None:
            sliced = tmp / "english_gutenberg.txt"
            sliced.write_bytes(read_slice(english, args.slice_bytes).encode("utf-8"))
            english = sliced
        training = bench_training(args, english, tmp, pattern, log)
        ref = check_reference(args, corpora / "english_gutenberg.txt", tmp, pattern, log)
    others["training"], snap = other_load(snap, cpu_snapshot()), cpu_snapshot()
    build1 = build_fingerprint()  # the training workers loaded the file afresh

    enc = build_encoders(data)
    encoding = []
    texts = [
        ("english", [corpora / "english_gutenberg.txt"]),
        ("python", [corpora / "python_stdlib.txt"]),
        ("multilingual", [corpora / "multilingual" / f"{m}.txt" for m in MULTILINGUAL]),
    ]
    for name, paths in texts:
        # quick mode: an equal share of the slice from each file
        per_file = None if args.slice_bytes is None else args.slice_bytes // len(paths)
        text = "".join(read_slice(p, per_file) for p in paths)
        encoding.append(bench_encoding(name, text, enc, args, log))
        del text
        others[f"{name} encoding"], snap = other_load(snap, cpu_snapshot()), cpu_snapshot()

    elapsed = time.perf_counter() - t_start
    write_report(
        args.out,
        args,
        info,
        started,
        elapsed,
        (load0, os.getloadavg()),
        (build0, build1, build_fingerprint()),
        others,
        training,
        ref,
        encoding,
        hf_pattern_note,
    )
    log(f"wrote {args.out}")
    if args.json:
        raw = {
            "info": info,
            "training": {k: v for k, v in training.items() if not k.startswith("cmp")},
            "encoding": encoding,
        }
        args.json.write_text(json.dumps(raw, indent=1, default=str), encoding="utf-8")


if __name__ == "__main__":
    main()
