"""``bytepair demo``: train small tokenizers on Python's own documentation and show them at work.

The corpus is text every Python installation carries: the documentation topics of
``pydoc_data.topics`` (what ``help("for")`` prints), or, where a distribution strips that
module, the docstrings of standard-library modules. A sentence written for this demo and
every tenth topic are held out: the tokenizers never see them in training.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TextIO

__all__ = ["HELD_OUT_SENTENCE", "SPECIAL_TOKENS", "Corpus", "corpus", "run"]

SPECIAL_TOKENS = ("<|endoftext|>", "<|pad|>")
PATTERN = "gpt2"

# written for this demo: ordinary English, a number, punctuation, accents, curly quotes, emoji
HELD_OUT_SENTENCE = (
    "A tokenizer turns text into integers: byte pair encoding starts from the 256 bytes and "
    "merges the most frequent pair, again and again, so even “naïve” text or 🐍 round-trips."
)

# modules whose docstrings make the fallback corpus (all in the standard library)
_DOC_MODULES = (
    "argparse base64 bisect builtins calendar collections configparser contextlib copy csv "
    "dataclasses datetime decimal difflib enum fractions functools glob gzip hashlib heapq "
    "html inspect io ipaddress itertools json logging math os pathlib pickle pprint random "
    "re shutil statistics string struct subprocess tarfile tempfile textwrap threading "
    "typing unittest uuid zipfile"
).split()

_WIDTH = 100


@dataclass
class Corpus:
    """The demo's training text and held-out documents.

    Attributes:
        source: where the text comes from, for people.
        documents: (name, text) of every document, in order.
        train: names of the training documents.
        held_out: names of the held-out documents (every tenth).
    """

    source: str
    documents: list[tuple[str, str]]
    train: list[str]
    held_out: list[str]

    @property
    def train_text(self) -> str:
        """The training documents joined by ``<|endoftext|>``."""
        docs = dict(self.documents)
        return SPECIAL_TOKENS[0].join(docs[n] for n in self.train)

    def held_out_texts(self) -> list[str]:
        """The texts of the held-out documents."""
        docs = dict(self.documents)
        return [docs[n] for n in self.held_out]


def corpus() -> Corpus:
    """The demo corpus: ``pydoc_data.topics``, else standard-library docstrings.

    Documents are sorted by name; every tenth one (the 10th, 20th, ...) is held out.
    """
    documents = _pydoc_topics()
    if documents:
        source = "Python's documentation topics (pydoc_data.topics, what help('for') shows)"
    else:
        documents = _stdlib_docstrings()
        source = "docstrings of Python standard-library modules (pydoc_data is not installed)"
    documents.sort()
    held = {name for k, (name, _) in enumerate(documents) if k % 10 == 9}
    return Corpus(
        source=source,
        documents=documents,
        train=[n for n, _ in documents if n not in held],
        held_out=[n for n, _ in documents if n in held],
    )


def _pydoc_topics() -> list[tuple[str, str]]:
    try:
        from pydoc_data.topics import topics
    except ImportError:
        return []
    return [(k, v) for k, v in topics.items() if isinstance(v, str) and v.strip()]


def _stdlib_docstrings() -> list[tuple[str, str]]:
    import importlib
    import inspect
    import warnings

    documents = []
    with warnings.catch_warnings():  # e.g. typing.io warns that it is deprecated when read
        warnings.simplefilter("ignore")
        for module_name in _DOC_MODULES:
            try:
                module = importlib.import_module(module_name)
            except ImportError:
                continue
            parts = [inspect.getdoc(module) or ""]
            for attr, obj in sorted(vars(module).items()):
                if attr.startswith("_") or getattr(obj, "__module__", None) != module_name:
                    continue
                if inspect.isclass(obj) or inspect.isroutine(obj):
                    parts.append(inspect.getdoc(obj) or "")
            text = "\n\n".join(p for p in parts if p)
            if text:
                documents.append((module_name, text))
    return documents


# ------------------------------------------------------------------------------------ run


def run(vocab_sizes: Sequence[int] = (300, 600), out: TextIO | None = None) -> int:
    """Prints the demo; returns 0, or 1 if a round trip failed (it never should).

    Args:
        vocab_sizes: vocabulary sizes to train, each at least 256 + 2 special tokens.
        out: where to print (default: stdout).
    """
    from .train import count, train_from_counts

    out = out or sys.stdout
    if (getattr(out, "encoding", "utf-8") or "").lower().replace("-", "") != "utf8":
        # a console that cannot show emoji gets \U0001f40d instead of an exception
        reconfigure = getattr(out, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")

    def say(line: str = "") -> None:
        print(line, file=out)

    sizes = sorted(set(vocab_sizes))
    data = corpus()
    text = data.train_text
    held_texts = data.held_out_texts()
    if not text:
        say("bytepair demo: found no documentation text in this Python installation to train on")
        return 1
    sentence = HELD_OUT_SENTENCE
    sentence_bytes = len(sentence.encode("utf-8"))
    held_bytes = sum(len(t.encode("utf-8")) for t in held_texts)

    say("bytepair demo: byte pair encoding (BPE) in a few seconds")
    say()
    say("BPE turns text into integer ids. It starts with one token per byte (ids 0-255, so any")
    say("text at all can be encoded) and learns longer tokens from a corpus: it merges the most")
    say("frequent pair of adjacent tokens into a new token, again and again, until the")
    say("vocabulary has the size asked for.")
    say()
    say(f"Corpus:    {data.source}")
    say(
        f"           {len(data.train)} documents to train on, {len(text.encode('utf-8')):,} bytes, "
        f"with {SPECIAL_TOKENS[0]} between documents"
    )
    names = ", ".join(data.held_out)
    say(
        _fill(
            f"Held out:  {len(data.held_out)} other documents, not trained on ({names}), "
            f"{held_bytes:,} bytes, "
            "and a sentence written for this demo:"
        )
    )
    say(_fill(sentence, "           ", first="           "))
    specials = ", ".join(f"{s} = {256 + k}" for k, s in enumerate(SPECIAL_TOKENS))
    say(f"Special:   {specials} (reserved, never merged); pattern: {PATTERN}")

    start = time.perf_counter()
    counts = count(iter([text]), pattern=PATTERN, special_tokens=SPECIAL_TOKENS, progress=False)
    seconds = time.perf_counter() - start
    say(
        _fill(
            "Counting:  the text is cut into pre-tokens (words, with the space before them), "
            f"which merges never cross: {counts.total():,} pre-tokens, {len(counts):,} distinct, "
            f"counted in {seconds:.2f} s"
        )
    )

    rows = [("256 (bytes)", 0, sentence_bytes, held_bytes)]
    all_ok = True
    for k, size in enumerate(sizes):
        start = time.perf_counter()
        tok = train_from_counts(
            counts, size, special_tokens=SPECIAL_TOKENS, pattern=PATTERN, progress=False
        )
        seconds = time.perf_counter() - start
        merges = tok.merges
        ids = tok.encode(sentence)
        ok = tok.decode_bytes(ids) == sentence.encode("utf-8") and tok.decode(ids) == sentence
        all_ok = all_ok and ok
        held_tokens = sum(len(x) for x in tok.encode_ordinary_batch(held_texts))
        rows.append((str(size), len(merges), len(ids), held_tokens))

        say()
        title = f"vocab_size {size}: {len(merges)} merges learned in {seconds:.2f} s"
        if tok.n_vocab < size:
            title += " (stopped early: no pair left)"
        if k == 0:
            say("Below, | separates tokens, a space is part of the token after it (' the' is one")
            say("token), and \\xNN is a single byte of a longer UTF-8 character (“ is 3 bytes).")
            say()
        say(f"── {title} " + "─" * max(3, _WIDTH - len(title) - 4))
        if k == 0 and merges:
            shown = [f"{_quote(a)}+{_quote(b)}" for a, b in merges[:6]]
            say(_wrap(shown, "  ", "first merges:  ", _WIDTH))
        if merges:
            newest = [_quote(a + b) for a, b in merges[-8:]]
            say(_wrap(newest, "  ", "newest tokens: ", _WIDTH))
        pieces = [_show(b) for b in tok.decode_tokens_bytes(ids)]
        say(_wrap(pieces, "|", f"tokens ({len(ids)}):".ljust(15), _WIDTH, edges=True))
        say(_wrap([str(i) for i in ids], " ", "ids:".ljust(15), _WIDTH))
        verdict = (
            f"yes, byte for byte ({sentence_bytes} bytes)"
            if ok
            else "NO, this is a bug in bytepair"
        )
        say(f"{'round trip:'.ljust(15)}decode(encode(sentence)) == sentence: {verdict}")

    say()
    say("How the encoding shrinks as the vocabulary grows (fewer tokens = more bytes per token)")
    header = ("vocab_size", "merges", "sentence tokens", "bytes/token", "held-out tokens")
    say("  " + "  ".join(h.rjust(max(11, len(h))) for h in (*header, "bytes/token")))
    for label, n_merges, n_sentence, n_held in rows:
        cells = (
            label,
            f"{n_merges:,}",
            f"{n_sentence:,}",
            f"{sentence_bytes / n_sentence:.2f}",
            f"{n_held:,}",
            f"{held_bytes / n_held:.2f}" if n_held else "-",
        )
        widths = [max(11, len(h)) for h in (*header, "bytes/token")]
        say("  " + "  ".join(c.rjust(w) for c, w in zip(cells, widths)))
    base, last = rows[0], rows[-1]
    say(
        _fill(
            f"With {last[1]:,} merges the held-out documents take {last[3]:,} tokens instead of "
            f"{base[3]:,} bytes ({base[3] / last[3]:.1f}x fewer). For comparison, GPT-2's "
            "50,257-token vocabulary averages about 4 bytes/token on English prose.",
            indent="",
        )
    )

    mixed = f"Bye.{SPECIAL_TOKENS[0]}Hi"
    say()
    say(f"Special tokens are atomic when allowed, ordinary text otherwise ({mixed!r}):")
    allowed = [str(i) for i in tok.encode(mixed, allowed_special="all")]
    ordinary = [str(i) for i in tok.encode(mixed, disallowed_special=())]
    say(_wrap(allowed, " ", "  allowed_special='all':  ", _WIDTH))
    say(_wrap(ordinary, " ", "  disallowed_special=():  ", _WIDTH))
    say()
    say("Try it on your own text (corpus.txt and input.txt stand for your files):")
    activate = _activate_hint()
    if activate:
        say(f"  {activate}   # first: puts the bytepair command on your PATH")
    say("  bytepair train corpus.txt --vocab-size 1000 --special-token '<|endoftext|>' -o tok.json")
    say("  bytepair encode -t tok.json input.txt > ids.txt")
    say("  bytepair decode -t tok.json ids.txt > copy.txt   # the same bytes as input.txt")
    return 0 if all_ok else 1


def _activate_hint() -> str | None:
    """The command that activates the virtual environment this runs in, if its ``bytepair``
    command is not on PATH (``make demo`` runs ``.venv/bin/bytepair`` without activating:
    QA, the commands suggested after it said "command not found")."""
    import os
    import shutil

    bin_dir = os.path.dirname(sys.executable)
    if sys.prefix == sys.base_prefix or not os.path.exists(os.path.join(bin_dir, "activate")):
        return None
    found = shutil.which("bytepair")
    if found and os.path.samefile(os.path.dirname(found), bin_dir):
        return None
    return f". {os.path.relpath(os.path.join(bin_dir, 'activate'))}"


def _show(token: bytes) -> str:
    """A token for people: UTF-8 text, control characters and stray bytes escaped."""
    text = token.decode("utf-8", "backslashreplace")
    return "".join(_ESCAPES.get(c, c) if c.isprintable() is False else c for c in text)


_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
for _c in range(0x20):
    _ESCAPES.setdefault(chr(_c), f"\\x{_c:02x}")
_ESCAPES["\x7f"] = "\\x7f"


def _fill(text: str, indent: str = "           ", first: str = "") -> str:
    import textwrap

    return textwrap.fill(
        text, _WIDTH, initial_indent=first, subsequent_indent=indent, break_on_hyphens=False
    )


def _quote(token: bytes) -> str:
    return "'" + _show(token) + "'"


def _wrap(pieces: list[str], sep: str, label: str, width: int, edges: bool = False) -> str:
    """``label`` then ``pieces`` joined by ``sep``, wrapped at piece boundaries."""
    indent = " " * len(label)
    lines: list[str] = []
    line = label + (sep if edges else "")
    fresh = True  # nothing on this line yet
    for piece in pieces:
        add = piece if fresh else sep + piece
        if not fresh and len(line) + len(add) + (len(sep) if edges else 0) > width:
            lines.append(line + (sep if edges else ""))
            line = indent + (sep if edges else "")
            add = piece
        line += add
        fresh = False
    lines.append(line + (sep if edges and pieces else ""))
    return "\n".join(lines)
