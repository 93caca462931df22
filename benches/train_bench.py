"""Training benchmark: bytepair vs HF tokenizers, rustbpe and bpeasy, side by side.

Writes the ``training`` section of BENCHMARKS.md (``<!-- begin:training -->`` ..
``<!-- end:training -->``; appended if absent).

What is measured:

1. **Ratios.** Each trainer learns a byte-level BPE vocabulary on the English corpus
   (``english_gutenberg.txt``) and the code corpus (``python_stdlib.txt``) at vocab 10000
   and 32000, with the same GPT-2 pattern, 2 threads. Every run is a fresh subprocess; its
   wall time is measured inside it around the training call (reading the file included,
   interpreter start-up and imports not) and its peak RSS is ``ru_maxrss`` from
   ``os.wait4``. bytepair reads the file itself (``bytepair.train(path)``); the peers get a
   generator reading the file lazily in ~1 MB pieces cut at exact GPT-2 pre-token
   boundaries (before a ``\\n`` that follows a non-space character), so nobody holds the
   corpus in memory and everybody sees the same pre-tokens. Libraries run round-robin
   within each repeat; the tables give medians.
2. **Merges.** On the first 1 MB of each corpus at vocab 800, the tokens each trainer
   learns (in order) are compared with the pure-Python ``bytepair.reference.train_bpe``.
3. **Growth.** bytepair (and the fastest peer, rustbpe) on 10 MB up to the largest corpus
   assembled from the shared data: every corpus concatenated, then repeated with its ASCII
   letters rotated (ROT13, a distinct text with the same statistics) to double it.

Usage::

    nice -n 19 python benches/train_bench.py --out BENCHMARKS.md --json /tmp/train.json
"""

from __future__ import annotations

import argparse
import codecs
import datetime
import json
import os
import platform
import random
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench import cpu_snapshot, hf_bpe_trainer_tokenizer, other_load  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(os.environ.get("BYTEPAIR_DATA", ROOT.parent / "shared" / "data"))
# bytepair's GPT-2 pattern (tiktoken's, possessive quantifiers): every library takes it as is
GPT2 = r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s"
KINDS = ["bytepair", "hf", "rustbpe", "bpeasy"]
NAMES = {
    "bytepair": "bytepair",
    "hf": "HF tokenizers",
    "rustbpe": "rustbpe",
    "bpeasy": "bpeasy",
}
PIECE_CHARS = 1 << 20
BPEASY_MAX_TOKEN_LENGTH = 1 << 16  # no limit in practice, as the others
BEGIN, END = "<!-- begin:training -->", "<!-- end:training -->"


# ------------------------------------------------------------------------------ worker


def lazy_pieces(path: str) -> Iterator[str]:
    """The file's text in ~1 MB pieces, read lazily, cut only right before a "\\n" that
    follows a non-space character (exact for the GPT-2 pattern: see benches/bench.py)."""
    buf: list[str] = []
    size = 0
    with open(path, encoding="utf-8", newline="") as f:
        for line in f:  # lines end in "\n"; a piece ends where a line's "\n" begins
            if size >= PIECE_CHARS and buf and len(buf[-1]) > 1 and not buf[-1][-2].isspace():
                last = buf[-1]
                buf[-1] = last[:-1]
                yield "".join(buf)
                buf, size = ["\n"], 1
            buf.append(line)
            size += len(line)
    if buf:
        yield "".join(buf)


def run_worker(kind: str, path: str, vocab_size: int, threads: int, tokens: bool) -> dict:
    os.environ["RAYON_NUM_THREADS"] = str(threads)
    if kind == "bytepair":
        import bytepair
    elif kind == "hf":
        import tokenizers  # noqa: F401  (imported before the RSS baseline, as the others)
    elif kind == "rustbpe":
        import rustbpe
    elif kind == "bpeasy":
        import bpeasy
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    cpu0, t0 = time.process_time(), time.perf_counter()
    extra = {}
    if kind == "bytepair":  # bytepair.train(path) is exactly these two stages
        counts = bytepair.count(path, threads=threads, progress=False)
        count_s = time.perf_counter() - t0
        if vocab_size == 0:  # counting only
            cpu = time.process_time() - cpu0
            return {"seconds": count_s, "count_s": count_s, "cpu": cpu, "distinct": len(counts)}
        tok = bytepair.train_from_counts(counts, vocab_size, progress=False)
        new = [a + b for a, b in tok.merges]
        extra = {"count_s": count_s, "distinct": len(counts)}
    elif kind == "hf":
        hf, trainer = hf_bpe_trainer_tokenizer(GPT2, vocab_size)
        hf.train_from_iterator(lazy_pieces(path), trainer)
        new = []
        if tokens:
            from bytepair.reference import str_to_token

            merges = json.loads(hf.to_str())["model"]["merges"]
            for m in merges:
                a, b = m.split(" ") if isinstance(m, str) else m
                new.append(str_to_token(a) + str_to_token(b))
    elif kind == "rustbpe":
        rt = rustbpe.Tokenizer()
        rt.train_from_iterator(lazy_pieces(path), vocab_size, pattern=GPT2)
        ranks = rt.get_mergeable_ranks()
        items = ranks.items() if isinstance(ranks, dict) else ranks
        new = [bytes(b) for b, r in sorted(items, key=lambda x: x[1]) if r >= 256]
    else:
        ranks = bpeasy.train_bpe(lazy_pieces(path), GPT2, BPEASY_MAX_TOKEN_LENGTH, vocab_size)
        new = [b for b, r in sorted(ranks.items(), key=lambda x: x[1]) if r >= 256]
    seconds = time.perf_counter() - t0
    return {
        "seconds": seconds,
        "cpu": time.process_time() - cpu0,
        "n_new": len(new),
        "tokens": [t.hex() for t in new] if tokens else None,
        "rss_before_kb": rss0,
        **extra,
    }


def spawn(kind: str, path: Path, vocab_size: int, threads: int, tokens: bool = False) -> dict:
    """One training in a fresh subprocess (at nice 19 like its parent); adds its peak RSS."""
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        out = f.name
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", kind, "--input", str(path)]
    cmd += ["--vocab-size", str(vocab_size), "--threads", str(threads), "--worker-out", out]
    if tokens:
        cmd.append("--tokens")
    proc = subprocess.Popen(cmd)
    _, status, usage = os.wait4(proc.pid, 0)
    code = os.waitstatus_to_exitcode(status)
    try:
        if code != 0:
            raise RuntimeError(f"{kind} worker failed (exit {code}) on {path} at {vocab_size}")
        with open(out, encoding="utf-8") as f:
            result = json.load(f)
    finally:
        os.unlink(out)
    result["maxrss_mb"] = usage.ru_maxrss / 1024
    return result


# ------------------------------------------------------------------------------ machine


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ["bytepair", "tokenizers", "rustbpe", "bpeasy"]:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


def git_head() -> str:
    try:
        return subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


# ------------------------------------------------------------------------------ corpora


def rot13_letters(text: str) -> str:
    return codecs.encode(text, "rot13")


def build_growth_corpora(tmp: Path, sizes_mb: list[int]) -> tuple[list[tuple[int, Path]], str]:
    """Files of the given sizes (MB, 10^6 bytes) cut from everything in the shared data,
    doubled with ROT13 when more is needed; returns them and a description."""
    parts = sorted((DATA / "corpora").rglob("*.txt")) + sorted((DATA / "en_ewt").glob("*.txt"))
    parts += sorted((DATA / "cs336").glob("*.txt")) + [DATA / "cs336" / "corpus.en"]
    # ~1 MB blocks of every file (cut after a newline), shuffled with a fixed seed: every
    # prefix holds the same mix of languages and code, so sizes compare like with like
    blocks: list[bytes] = []
    for p in parts:
        data = p.read_bytes().rstrip(b"\n") + b"\n"
        start = 0
        while start < len(data):
            end = data.find(b"\n", start + 10**6) + 1 or len(data)
            blocks.append(data[start:end])
            start = end
    random.Random(0).shuffle(blocks)
    base = b"".join(blocks)
    big = base
    rounds = 0
    while len(big) < max(sizes_mb) * 10**6:
        rounds += 1
        big += rot13_letters(base.decode("utf-8")).encode("utf-8") if rounds % 2 else base
    out = []
    for mb in sizes_mb:
        cut = whole_chars(big[: mb * 10**6])
        path = tmp / f"growth_{mb}MB.txt"
        path.write_bytes(cut)
        out.append((mb, path))
    desc = (
        f"all {len(parts)} text files of the shared data ({len(base) / 1e6:.1f} MB: English, "
        "code, eight other languages, emoji lists) cut into ~1 MB blocks at newlines and "
        "shuffled (fixed seed), then that text with its ASCII letters rotated by 13 "
        "(ROT13: different words, same statistics), alternately, until long enough"
    )
    return out, desc


def whole_chars(data: bytes) -> bytes:
    """``data`` without a UTF-8 character cut at its end."""
    i = len(data)
    while i > 0 and (data[i - 1] & 0xC0) == 0x80:
        i -= 1
    if i > 0 and data[i - 1] >= 0xC0:  # a lead byte: is its character complete?
        lead = data[i - 1]
        need = 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4
        if len(data) - (i - 1) < need:
            return data[: i - 1]
    return data


def first_mb(path: Path, tmp: Path, n: int = 10**6) -> Path:
    data = whole_chars(path.read_bytes()[:n])
    out = tmp / f"slice_{path.stem}.txt"
    out.write_bytes(data)
    return out


def compare_tokens(ref: list[bytes], got: list[bytes]) -> str:
    if ref == got:
        return f"identical ({len(ref)} merges)"
    prefix = next((i for i, (a, b) in enumerate(zip(ref, got)) if a != b), min(len(ref), len(got)))
    shared = len(set(ref) & set(got))
    return (
        f"differs: common prefix {prefix} of {len(ref)} merges, {shared}/{len(ref)} tokens "
        f"shared as a set; first difference at merge {prefix}: reference "
        f"{ref[prefix] if prefix < len(ref) else None!r}, got "
        f"{got[prefix] if prefix < len(got) else None!r}"
    )


# ------------------------------------------------------------------------------ main


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--worker", choices=KINDS)
    ap.add_argument("--input")
    ap.add_argument("--vocab-size", type=int)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--worker-out")
    ap.add_argument("--tokens", action="store_true")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--growth-mb", default="10,25,50,100,200")
    ap.add_argument("--out", default=str(ROOT / "BENCHMARKS.md"))
    ap.add_argument("--json")
    ap.add_argument("--build-growth", metavar="DIR")
    args = ap.parse_args()
    if args.build_growth:
        sizes = [int(x) for x in args.growth_mb.split(",")]
        print(json.dumps(build_growth_corpora(Path(args.build_growth), sizes)[1]))
        return
    if args.worker:
        result = run_worker(args.worker, args.input, args.vocab_size, args.threads, args.tokens)
        with open(args.worker_out, "w", encoding="utf-8") as f:
            json.dump(result, f)
        return

    kinds = [k for k in KINDS if versions()[k if k != "hf" else "tokenizers"] != "not installed"]
    corpora = {
        "english": DATA / "corpora" / "english_gutenberg.txt",
        "code": DATA / "corpora" / "python_stdlib.txt",
    }
    started = datetime.datetime.now(datetime.timezone.utc)
    load_start = os.getloadavg()
    snap0 = cpu_snapshot()
    results: dict[str, Any] = {"runs": {}, "check": {}, "growth": {}, "threads": {}}
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        # 1. side by side, round-robin within each repeat
        for rep in range(args.repeats):
            for cname, path in corpora.items():
                for vocab in (10000, 32000):
                    for kind in kinds:
                        r = spawn(kind, path, vocab, args.threads)
                        key = f"{cname}/{vocab}/{kind}"
                        results["runs"].setdefault(key, []).append(r)
                        print(
                            f"[{rep}] {key}: {r['seconds']:.2f} s, {r['maxrss_mb']:.0f} MB",
                            file=sys.stderr,
                        )
        snap1 = cpu_snapshot()
        # 2. merges against the reference on 1 MB slices
        from bytepair import reference

        for cname, path in corpora.items():
            sl = first_mb(path, tmp)
            t = time.perf_counter()
            vocab, _ = reference.train_bpe_file(sl, 800)
            ref_s = time.perf_counter() - t
            ref = [vocab[i] for i in range(256, len(vocab))]
            row = {"reference_s": ref_s, "bytes": sl.stat().st_size}
            for kind in kinds:
                got = [bytes.fromhex(h) for h in spawn(kind, sl, 800, args.threads, True)["tokens"]]
                row[kind] = compare_tokens(ref, got)
            results["check"][cname] = row
        # 3. growth: the corpora are built in a subprocess, so that this process stays
        # small (a child's ru_maxrss counts the memory of its parent at fork time)
        sizes = [int(x) for x in args.growth_mb.split(",")]
        built = subprocess.run(
            [sys.executable, __file__, "--build-growth", str(tmp), "--growth-mb", args.growth_mb],
            check=True,
            capture_output=True,
            text=True,
        )
        desc = json.loads(built.stdout)
        files = [(mb, tmp / f"growth_{mb}MB.txt") for mb in sizes]
        results["growth_desc"] = desc
        for mb, path in files:
            for kind in ["bytepair", "rustbpe"]:
                if kind not in kinds:
                    continue
                reps = args.repeats if kind == "bytepair" else 1
                runs = [spawn(kind, path, 10000, args.threads) for _ in range(reps)]
                results["growth"][f"{mb}/{kind}"] = runs
                print(f"growth {mb} MB {kind}: {runs[-1]['seconds']:.2f} s", file=sys.stderr)
        # 4. counting on 1 and 2 threads (vocab_size 0: the worker only counts)
        snap_t = cpu_snapshot()
        for t in (1, 2):
            runs = [spawn("bytepair", corpora["english"], 0, t) for _ in range(args.repeats)]
            results["threads"][str(t)] = runs
        results["threads"]["other_busy"] = other_load(snap_t, cpu_snapshot())
    snap2 = cpu_snapshot()
    results["meta"] = {
        "started": started.strftime("%Y-%m-%d %H:%M UTC"),
        "minutes": (snap2[2] - snap0[2]) / 60,
        "load_start": load_start,
        "load_end": os.getloadavg(),
        "other_busy_ratios": other_load(snap0, snap1),
        "other_busy_all": other_load(snap0, snap2),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "versions": versions(),
        "git": git_head(),
        "kinds": kinds,
        "threads": args.threads,
        "repeats": args.repeats,
        "sizes": {c: p.stat().st_size for c, p in corpora.items()},
    }
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1)
    write_section(Path(args.out), report(results, corpora))


def median(runs: list[dict], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def report(res: dict[str, Any], corpora: dict[str, Path]) -> str:
    m = res["meta"]
    kinds = m["kinds"]
    peers = [k for k in kinds if k != "bytepair"]
    v = m["versions"]
    missing = [NAMES[k] for k in KINDS if k not in kinds]
    la0 = " / ".join(f"{x:.2f}" for x in m["load_start"])
    la1 = " / ".join(f"{x:.2f}" for x in m["load_end"])
    lines = [
        "## Training at scale (bytepair vs HF tokenizers, rustbpe, bpeasy)",
        "",
        f"- Date: {m['started']}; the whole run took {m['minutes']:.1f} min. Command: "
        "`nice -n 19 python benches/train_bench.py` (git "
        f"{m['git']}; bytepair built with `maturin develop -r`).",
        f"- Machine: {m['cpus']} logical CPUs; Python {m['python']}; tokenizers "
        f"{v['tokenizers']}, rustbpe {v['rustbpe']}, bpeasy {v['bpeasy']}."
        + (f" Not installed: {', '.join(missing)}." if missing else ""),
        f"- Load: other processes kept on average {m['other_busy_ratios']:.2f} CPUs busy "
        f"during the side-by-side runs ({m['other_busy_all']:.2f} over the whole run; from "
        f"/proc/stat minus this benchmark's own CPU time). Load average at start {la0}, "
        f"at end {la1}. The machine is shared with other jobs: read differences under "
        "~15% as noise.",
        f"- {m['threads']} threads for everyone (bytepair `threads=`, `RAYON_NUM_THREADS` for "
        "the Rust peers). Same GPT-2 pattern string for all (possessive quantifiers, "
        "accepted by every library's regex engine). No special tokens. bpeasy's "
        f"`max_token_length` is {BPEASY_MAX_TOKEN_LENGTH} (no limit in practice).",
        "- Input: bytepair reads the file (`bytepair.train(path)`); the peers get a generator "
        "that reads the file lazily in ~1 MB pieces cut at exact pre-token boundaries, so no "
        "one holds the corpus in memory and all see the same pre-tokens.",
        f"- Each cell: median of {m['repeats']} runs, each a fresh subprocess, libraries "
        "round-robin. Time: wall seconds inside the child around the training call (file "
        "reading included, start-up and imports not). Peak RSS: the child's `ru_maxrss` "
        "(`os.wait4`), median, imports included (RSS before training in parentheses).",
        "",
    ]
    head = "| corpus | vocab | " + " | ".join(f"{NAMES[k]} s | {NAMES[k]} RSS MB" for k in kinds)
    head += " | fastest peer / bytepair | leanest peer RSS / bytepair |"
    lines += [head, "|" + "---|" * (2 + 2 * len(kinds) + 2)]
    for cname in corpora:
        mb = m["sizes"][cname] / 1e6
        for vocab in (10000, 32000):
            runs = {k: res["runs"][f"{cname}/{vocab}/{k}"] for k in kinds}
            cells = []
            for k in kinds:
                rss0 = statistics.median(r["rss_before_kb"] for r in runs[k]) / 1024
                cells.append(f"{median(runs[k], 'seconds'):.2f}")
                cells.append(f"{median(runs[k], 'maxrss_mb'):.0f} ({rss0:.0f})")
            ours_t = median(runs["bytepair"], "seconds")
            ours_m = median(runs["bytepair"], "maxrss_mb")
            ratio_t = min(median(runs[k], "seconds") for k in peers) / ours_t if peers else 0
            ratio_m = min(median(runs[k], "maxrss_mb") for k in peers) / ours_m if peers else 0
            lines.append(
                f"| {cname} ({mb:.1f} MB) | {vocab} | "
                + " | ".join(cells)
                + f" | **{ratio_t:.2f}x** | **{ratio_m:.2f}x** |"
            )
    lines += ["", "All runs (s):", ""]
    for key, runs in res["runs"].items():
        lines.append(f"- {key}: " + ", ".join(f"{r['seconds']:.2f}" for r in runs))
    lines += [
        "",
        "Targets (issue 5): fastest peer / bytepair >= 2 (at most half the fastest peer's "
        "time) and leanest peer RSS / bytepair >= 1 (peak memory at most the leanest's).",
        "",
        "### Merges against the reference",
        "",
        "Each trainer on the first 1 MB of the corpus at vocab 800; the tokens it learns, in "
        "order, against `bytepair.reference.train_bpe` (the CS336 rules: most frequent pair, "
        "ties to the lexicographically greatest pair of bytes).",
        "",
    ]
    for cname, row in res["check"].items():
        lines.append(
            f"- {cname} ({row['bytes'] / 1e6:.2f} MB; reference {row['reference_s']:.1f} s):"
        )
        for k in kinds:
            lines.append(f"  - {NAMES[k]}: {row[k]}")
    lines += [
        "",
        "The peers break ties between equally frequent pairs differently (HF and rustbpe by "
        "token ids, bpeasy by its own order), so after the first tie they drift; bytepair "
        "follows the reference exactly.",
        "",
        "### Growth with corpus size",
        "",
        f"Corpus: {res['growth_desc']}; cut to each size. Vocab 10000, "
        f"{m['threads']} threads; bytepair median of {m['repeats']} runs, rustbpe one run.",
        "",
        "| MB | distinct pre-tokens | bytepair s | counting s | counting MB/s | merging s "
        "| bytepair peak RSS MB | rustbpe s | rustbpe RSS MB |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for key in res["growth"]:
        mb_s, kind = key.split("/")
        if kind != "bytepair":
            continue
        ours = res["growth"][key]
        peer = res["growth"].get(f"{mb_s}/rustbpe")
        t = median(ours, "seconds")
        tc = median(ours, "count_s")
        peer_cells = (
            f"{median(peer, 'seconds'):.2f} | {median(peer, 'maxrss_mb'):.0f}" if peer else "- | -"
        )
        lines.append(
            f"| {mb_s} | {ours[0]['distinct']:,} | {t:.2f} | {tc:.2f} | {int(mb_s) / tc:.0f} | "
            f"{median([{'x': r['seconds'] - r['count_s']} for r in ours], 'x'):.2f} | "
            f"{median(ours, 'maxrss_mb'):.0f} | " + peer_cells + " |"
        )
    lines += [
        "",
        "Counting runs at a steady rate whatever the size (it is linear in the corpus, in "
        "parallel blocks). The merge loop and the peak memory follow the number (and length) "
        "of the distinct pre-tokens, second column, not the corpus size: the ROT13 copy that "
        "makes up the second 100 MB repeats every non-Latin pre-token (Chinese, Japanese, "
        "Arabic, ... have no ASCII letters to rotate), so it adds fewer distinct ones than the "
        "first 100 MB.",
    ]
    if res.get("threads"):
        one, two = (median(res["threads"][t], "seconds") for t in ("1", "2"))
        cores = statistics.median(r["cpu"] / r["seconds"] for r in res["threads"]["2"])
        mb = m["sizes"]["english"] / 1e6
        lines += [
            "",
            "### Counting on more cores",
            "",
            f"`bytepair.count` of the English corpus ({mb:.1f} MB), median of "
            f"{m['repeats']} runs: {one:.2f} s on 1 thread ({mb / one:.0f} MB/s), "
            f"{two:.2f} s on 2 threads ({mb / two:.0f} MB/s): {one / two:.2f}x with 2 threads. "
            f"CPU time / wall time on 2 threads: {cores:.2f} (cores actually used); other "
            f"processes kept {res['threads']['other_busy']:.2f} CPUs busy meanwhile, so "
            f"{2 - res['threads']['other_busy']:.2f} of the 2 were free on average.",
        ]
    return "\n".join(lines) + "\n"


def write_section(path: Path, body: str) -> None:
    text = path.read_text(encoding="utf-8") if path.exists() else "# Benchmarks\n"
    section = f"{BEGIN}\n{body}{END}\n"
    pattern = re.compile(re.escape(BEGIN) + r".*?" + re.escape(END) + r"\n?", re.S)
    # a script that replaces its own section up to the next "## " heading may have eaten
    # the begin marker: then the section starts at its heading
    headed = re.compile(r"^## Training at scale.*?" + re.escape(END) + r"\n?", re.S | re.M)
    if not pattern.search(text) and headed.search(text):
        pattern = headed
    if pattern.search(text):
        text = pattern.sub(lambda _: section, text, count=1)
    else:
        text = text.rstrip("\n") + "\n\n" + section
    path.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
