"""Every long call under a limit on address space: the right answer or MemoryError, never
the end of the process.

CS336's tests of memory (`test_encode_memory_usage`) set `RLIMIT_AS` to the resident size
plus 1 MB around `encode` and expect `MemoryError`. bytepair's core used to end the
interpreter there instead: a new thread started on the stack of one that ended and found no
memory for its thread-local storage (glibc: "cannot allocate memory for thread-local data:
ABORT"), or a Rust vector could not grow ("memory allocation of N bytes failed", abort).
Oracle: each call's answer without a limit, in the same process.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

CHILD = textwrap.dedent(
    r"""
    import io, os, resource, sys
    import numpy as np
    import bytepair

    data = sys.argv[1]
    gpt2 = f"{data}/gpt2/vocab.json", f"{data}/gpt2/merges.txt"
    tok = bytepair.Tokenizer.from_files(*gpt2, special_tokens=["<|endoftext|>"])
    with open(f"{data}/corpora/english_gutenberg.txt", encoding="utf-8", newline="") as f:
        text = f.read(2_000_000)
    lines = text.splitlines(keepends=True)
    ids = tok.encode(text)
    arr = np.array(ids, dtype=np.uint32)
    id_lists = [tok.encode(line) for line in lines]
    ranks = f"{data}/tiktoken/cl100k_base.tiktoken"
    corpus = f"{data}/cs336/corpus.en"
    sample = "Hello, world! 12345 <|endoftext|> naïve"

    def tokenizer(t):
        return t.n_vocab, t.encode(sample, allowed_special="all")

    ops = {
        "encode": lambda: tok.encode(text),
        "encode_ordinary": lambda: tok.encode_ordinary(text),
        "encode_batch": lambda: tok.encode_batch(lines),
        "encode_batch_3_threads": lambda: tok.encode_batch(lines, num_threads=3),
        "encode_batch_long": lambda: tok.encode_batch([text, text[::-1]]),
        "encode_to_numpy": lambda: tok.encode_to_numpy(text).tolist(),
        "encode_iterable": lambda: list(tok.encode_iterable(io.StringIO(text))),
        "encode_long_pretoken": lambda: tok.encode("abcdefghij" * 200_000),
        "decode": lambda: tok.decode(ids),
        "decode_bytes": lambda: tok.decode_bytes(ids),
        "decode_bytes_array": lambda: tok.decode_bytes(arr),
        "decode_batch": lambda: tok.decode_batch(id_lists),
        "vocab": lambda: tok.vocab,
        "from_files": lambda: tokenizer(bytepair.Tokenizer.from_files(*gpt2)),
        "load_rank_file": lambda: tokenizer(bytepair.load(ranks, pattern="cl100k")),
        "train": lambda: tokenizer(bytepair.train(corpus, vocab_size=500)),
    }
    want = {name: op() for name, op in ops.items()}

    def vm_size():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def data_size():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[5]) * os.sysconf("SC_PAGE_SIZE")

    AS, DATA = resource.RLIMIT_AS, resource.RLIMIT_DATA
    limits = [("rss+1MB", AS, lambda: rss() + 10**6)]
    limits += [(f"vm+{mb}MiB", AS, lambda mb=mb: vm_size() + (mb << 20))
               for mb in (0, 4, 8, 16, 32, 64, 128, 256)]
    limits += [(f"data+{mb}MiB", DATA, lambda mb=mb: data_size() + (mb << 20))
               for mb in (0, 4)]
    # room for a thread on every CPU and then some (glibc reserves 64 MiB a thread)
    ample = (128 * ((os.cpu_count() or 1) + 3) + 256) << 20
    limits.append(("ample", AS, lambda: vm_size() + ample))
    for kind, which, limit in limits:
        prev = resource.getrlimit(which)
        for name, op in ops.items():
            resource.setrlimit(which, (limit(), prev[1]))
            try:
                got = op()
            except MemoryError:
                got = MemoryError
            finally:
                resource.setrlimit(which, prev)
            outcome = "MemoryError" if got is MemoryError else (
                "ok" if got == want[name] else "WRONG")
            print(kind, name, outcome, flush=True)
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS is Linux's")
def test_calls_under_an_address_space_limit_answer_or_raise_memory_error(
    data_dir: Path,
) -> None:
    run = subprocess.run(
        [sys.executable, "-c", CHILD, str(data_dir)], capture_output=True, text=True, timeout=600
    )
    assert run.returncode == 0, (run.stdout[-1500:], run.stderr[-2000:])
    outcomes = [line.split() for line in run.stdout.splitlines()]
    assert len(outcomes) == 12 * 16
    assert all(o[2] in ("ok", "MemoryError") for o in outcomes), run.stdout
    by_limit: dict[str, set[str]] = {}
    for kind, _, outcome in outcomes:
        by_limit.setdefault(kind, set()).add(outcome)
    # the tight limits bind (the calls above cannot all fit in 1 MB more), and with room
    # to spare nothing is refused
    assert "MemoryError" in by_limit["rss+1MB"] and "MemoryError" in by_limit["vm+0MiB"]
    assert by_limit["ample"] == {"ok"}, run.stdout


FIRST_CALL = textwrap.dedent(
    r"""
    import io, json, os, resource, sys
    import bytepair

    data, op, limited = sys.argv[1], sys.argv[2], sys.argv[3] == "limited"
    gpt2 = f"{data}/gpt2/vocab.json", f"{data}/gpt2/merges.txt"
    tok = bytepair.Tokenizer.from_files(*gpt2, special_tokens=["<|endoftext|>"])
    with open(f"/proc/self/statm") as f:
        rss = int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    if limited:
        resource.setrlimit(resource.RLIMIT_AS, (rss + 10**6, resource.RLIM_INFINITY))
    text = "Hello, world! naïve café 12345\n" * 3
    try:
        got = {
            "encode": lambda: tok.encode(text),
            "encode_ordinary": lambda: tok.encode_ordinary(text),
            "encode_batch": lambda: tok.encode_batch([text, text[::-1]]),
            "encode_iterable": lambda: list(tok.encode_iterable(io.StringIO(text))),
            "decode": lambda: tok.decode([15496, 11, 995, 0]),
        }[op]()
    except MemoryError:
        got = "MemoryError"
    print(json.dumps(got))
    """
)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS is Linux's")
@pytest.mark.parametrize(
    "op", ["encode", "encode_ordinary", "encode_batch", "encode_iterable", "decode"]
)
def test_the_first_call_of_a_process_under_a_limit(data_dir: Path, op: str) -> None:
    # CS336's test_encode_memory_usage run alone: the first encode of the process makes the
    # shared block of int objects (megabytes), and a failed allocation of it aborted (QA).
    # Oracle: the same call in a process without the limit.
    def run(limit: str) -> object:
        child = subprocess.run(
            [sys.executable, "-c", FIRST_CALL, str(data_dir), op, limit],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert child.returncode == 0, child.stderr[-2000:]
        return json.loads(child.stdout)

    want = run("unlimited")
    assert want != "MemoryError"
    assert run("limited") in (want, "MemoryError")
