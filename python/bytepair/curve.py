"""The compression curve: how the encoded length of held-out text falls as the vocabulary grows.

BPE learns merges one at a time, and each merge only ever joins tokens made by earlier
merges, so the first ``k`` merges of a tokenizer are themselves a complete tokenizer, of
``256 + specials + k`` tokens: the one training would have stopped at. One training (one
tokenizer file) therefore serves every vocabulary size up to its own.

``compression_curve`` measures a few sizes: it pre-tokenizes the held-out text once
(``bytepair.count``, in Rust, on all cores), then for each size encodes each distinct
pre-token once with the first ``k`` merges and weights it by how often it occurs.

>>> import bytepair
>>> tok = bytepair.train(iter(["low low lower lowest"]), 259)
>>> tok.merges
[(b'o', b'w'), (b'l', b'ow'), (b' ', b'low')]
>>> for p in compression_curve(tok, iter(["low lowest"])):
...     print(p.vocab_size, p.n_tokens, round(p.bytes_per_token, 2))
256 10 1.0
257 8 1.25
258 6 1.67
259 5 2.0
"""

from __future__ import annotations

import importlib.util
import math
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Union

from ._checks import refuse_mapping

if TYPE_CHECKING:
    import os

    from .tokenizer import Tokenizer

__all__ = [
    "CurvePoint",
    "compression_curve",
    "default_sizes",
    "first_merges",
    "format_table",
    "plot_curve",
]

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class CurvePoint:
    """The held-out text encoded by the tokenizer of one vocabulary size.

    Attributes:
        vocab_size: tokens in the vocabulary: 256 bytes + special tokens + ``n_merges``.
        n_merges: merges used (the first ``n_merges`` of the full tokenizer).
        n_tokens: tokens of the whole held-out text (documents encoded separately, special
            token text as ordinary text).
        n_bytes: UTF-8 bytes of the held-out text.
        n_documents: documents in the held-out text.
    """

    vocab_size: int
    n_merges: int
    n_tokens: int
    n_bytes: int
    n_documents: int

    @property
    def bytes_per_token(self) -> float:
        """Compression: UTF-8 bytes per token (1.0 with no merges)."""
        return self.n_bytes / self.n_tokens if self.n_tokens else math.nan

    @property
    def tokens_per_document(self) -> float:
        """Mean tokens per document."""
        return self.n_tokens / self.n_documents if self.n_documents else math.nan


def first_merges(tok: Tokenizer, k: int) -> Tokenizer:
    """The tokenizer made of ``tok``'s 256 bytes, special tokens and first ``k`` merges.

    Ids are kept: a trained tokenizer's first ``k`` merges have ids ``256 + specials`` to
    ``256 + specials + k - 1``, so this is exactly what training to that size gives.

    Raises:
        ValueError: ``k`` is negative or more than ``len(tok.merges)``.
    """
    from .tokenizer import Tokenizer

    merges = tok.merges
    if not 0 <= k <= len(merges):
        raise ValueError(f"k must be between 0 and {len(merges)} (the merges), got {k}")
    vocab = tok.vocab
    ids = {b: i for i, b in sorted(vocab.items(), reverse=True)}  # lowest id per bytes
    keep = {ids[bytes([b])] for b in range(256)} | {ids[a + b] for a, b in merges[:k]}
    keep |= set(tok.special_tokens.values())
    return Tokenizer(
        {i: vocab[i] for i in keep}, merges[:k], list(tok.special_tokens), pattern=tok.pattern
    )


def default_sizes(tok: Tokenizer, n: int = 10) -> list[int]:
    """About ``n`` merge counts from 0 to all of ``tok``'s merges, spaced evenly in log scale."""
    total = len(tok.merges)
    if total == 0:
        return [0]
    if n < 2:
        return [total]
    return sorted({0, total} | {round(total ** (j / (n - 1))) for j in range(n - 1)})


def documents_of(texts: PathLike | Iterable[PathLike] | Iterable[str]) -> Iterator[str]:
    """Each document of ``texts`` (anything ``bytepair.inputs.iter_chunks`` reads) whole."""
    from .inputs import iter_chunks

    parts: list[str] = []
    for chunk, ends in iter_chunks(texts):
        parts.append(chunk)
        if ends:
            yield "".join(parts)
            parts = []


def compression_curve(
    tok: Tokenizer,
    texts: PathLike | Iterable[PathLike] | Iterable[str],
    merges: Sequence[int] | None = None,
    *,
    threads: int | None = None,
) -> list[CurvePoint]:
    """Encoded size of held-out text at several vocabulary sizes of one tokenizer.

    Args:
        tok: the full tokenizer; its first ``k`` merges make the size-``k`` tokenizer.
        texts: the held-out text, any input ``bytepair.inputs.iter_chunks`` reads: path(s),
            folders, globs, jsonl, parquet, compressed files, or an iterable of str (one
            document each). Each document is held in memory whole while it is pre-tokenized.
        merges: the merge counts ``k`` to measure (default: ``default_sizes(tok)``).
        threads: threads for pre-tokenizing (default: one per core).

    Returns:
        one ``CurvePoint`` per ``k``, in the order given.

    Raises:
        ValueError: a ``k`` out of range (see ``first_merges``); empty held-out text; bad
            input as ``count``.
        TypeError: ``texts`` is a dict (any mapping: its keys are not taken as the text).
        OSError: a file cannot be read.
    """
    from .train import count

    # (a dict's keys were measured as the held-out text)
    refuse_mapping("texts", texts, "a path, a list of paths or an iterable of str")
    n_bytes = n_docs = 0

    def documents() -> Iterator[str]:  # each held-out document whole, counted on the way
        nonlocal n_bytes, n_docs
        for doc in documents_of(texts):
            n_bytes += len(doc.encode("utf-8", "surrogatepass"))
            n_docs += 1
            yield doc

    counts = count(documents(), pattern=tok.pattern, threads=threads, progress=False)
    if n_bytes == 0:  # bytes per token would be 0 / 0 at every size
        raise ValueError("the held-out text is empty: no bytes to measure the curve on")
    pieces = counts.items()
    points = []
    for k in default_sizes(tok) if merges is None else merges:
        sub = first_merges(tok, k)
        # BPE of one pre-token as it is (encode_ordinary would pre-tokenize it again,
        # which is not always the identity out of context)
        n_tokens = sum(c * len(sub._core.encode_piece(p)) for p, c in pieces)
        size = 256 + len(tok.special_tokens) + k
        points.append(CurvePoint(size, k, n_tokens, n_bytes, n_docs))
    return points


def format_table(points: Sequence[CurvePoint]) -> str:
    """The curve as a text table: vocab size, merges, tokens, bytes/token, tokens/document."""
    head = (
        f"{'vocab size':>10}  {'merges':>7}  {'tokens':>11}  {'bytes/token':>11}  "
        f"{'tokens/doc':>11}"
    )
    rows = [head, "-" * len(head)]
    for p in points:
        rows.append(
            f"{p.vocab_size:>10}  {p.n_merges:>7}  {p.n_tokens:>11}  "
            f"{p.bytes_per_token:>11.3f}  {p.tokens_per_document:>11.1f}"
        )
    return "\n".join(rows)


# what matplotlib's Agg backend writes, by file extension
PLOT_FORMATS = ("png", "svg", "svgz", "pdf", "eps", "ps", "jpg", "jpeg", "tif", "tiff", "webp")


def check_plot_target(path: str | os.PathLike[str]) -> None:
    """Fails early (before any work) if ``plot_curve`` could not write ``path``.

    Raises:
        ValueError: the extension is not an image format matplotlib writes.
        ImportError: matplotlib is not installed (``pip install 'bytepair[plot]'``).
    """
    ext = os.path.splitext(os.fspath(path))[1].lstrip(".").lower()
    if ext not in PLOT_FORMATS:
        raise ValueError(
            f"{os.fspath(path)}: the image format comes from the file name; use one of "
            + ", ".join("." + f for f in PLOT_FORMATS)
        )
    if importlib.util.find_spec("matplotlib") is None:
        raise ImportError(
            "plotting needs matplotlib: pip install 'bytepair[plot]' (or pip install matplotlib)"
        )


def plot_curve(points: Sequence[CurvePoint], path: PathLike, title: str = "") -> None:
    """Saves the curve as an image (PNG, SVG, PDF: from the name) with matplotlib.

    Two panels over the vocabulary size (log scale): bytes per token and tokens per document.

    Raises:
        ValueError: the extension is not an image format (see ``PLOT_FORMATS``).
        ImportError: matplotlib is not installed (``pip install 'bytepair[plot]'``).
    """
    check_plot_target(path)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = [p.vocab_size for p in points]
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(6, 6))
    top.plot(sizes, [p.bytes_per_token for p in points], marker="o")
    top.set_ylabel("bytes per token")
    bottom.plot(sizes, [p.tokens_per_document for p in points], marker="o", color="tab:orange")
    bottom.set_ylabel("tokens per document")
    bottom.set_xlabel("vocabulary size")
    bottom.set_xscale("log")
    for ax in (top, bottom):
        ax.grid(True, which="both", alpha=0.3)
    fig.suptitle(title or "compression curve")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
