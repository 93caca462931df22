"""The ``bytepair`` command line: train a tokenizer, encode and decode text, run a demo.

::

    bytepair train corpus.txt --vocab-size 1000 --special-token '<|endoftext|>' -o tok.json
    bytepair encode -t tok.json input.txt > ids.txt
    bytepair decode -t tok.json ids.txt > output.txt      # output.txt == input.txt, byte for byte
    bytepair demo
    bytepair convert tok.json tokenizer.json --to hf      # native, gpt2, tiktoken, hf
    bytepair inspect tokenizer.json --text sample.txt

Text is read and written as raw UTF-8 bytes: no newline translation, so ``\\r\\n`` survives
``encode | decode``. Errors print one ``bytepair: error: ...`` line on stderr; the exit code is
1 for a failure at run time (missing file, bad data) and 2 for a bad command line.
"""

from __future__ import annotations

import argparse
import codecs
import contextlib
import glob
import os
import re
import signal
import sys
import threading
import time
import warnings
from collections.abc import Iterable, Iterator
from itertools import chain
from typing import TYPE_CHECKING, BinaryIO, Callable, TextIO

if TYPE_CHECKING:
    from .tokenizer import Tokenizer

__all__ = ["main"]

_READ_CHUNK = 1 << 16  # bytes read from an input file at a time
_WRITE_IDS = 1 << 13  # ids written to stdout at a time
_DECODE_IDS = 1 << 16  # ids decoded at a time

_HELP_EXIT_CODES = "Exit codes: 0 success, 1 error (files, data), 2 bad command line"


class CLIError(Exception):
    """A user-facing error: printed as one line, exit code 1."""


def main(argv: list[str] | None = None) -> int:
    """Runs the ``bytepair`` command line.

    Args:
        argv: the arguments after the program name (default: ``sys.argv[1:]``).

    Returns:
        the exit code: 0 on success, 1 on an error at run time, 2 on a bad command line.
    """
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help, --version, or a usage error (argparse printed it)
        return e.code if isinstance(e.code, int) else 2
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    run: Callable[[argparse.Namespace], int] = args.run
    if getattr(args, "output", None) == "":  # (QA: -o '' said "<cwd>: is a folder")
        return _fail("the output's name is empty (-o / OUT)", code=2)
    try:
        with _stop_signals(), warnings.catch_warnings():
            # the library's warnings (truncated pre-tokens, ...) as one line each, in the CLI's
            # words: not Python's "file:line: UserWarning" and a line of its source
            warnings.showwarning = lambda message, *_: _warn(str(message), args)
            return run(args)
    except _Terminated as e:  # SIGTERM / SIGHUP (timeout, Slurm, docker stop): clean up too
        return _fail(f"terminated by signal {e.signum}", code=128 + e.signum)
    except CLIError as e:
        return _fail(_cli_hints(str(e), args))
    except OSError as e:
        if isinstance(e, BrokenPipeError):  # e.g. `bytepair encode big.txt | head`
            _silence_stdout()
            return 1
        return _fail(_cli_hints(_os_error_message(e), args))
    except ImportError as e:  # an optional package a file needs (pyarrow, zstandard, ...)
        return _fail(str(e))
    except (ValueError, KeyError) as e:
        # the library's documented errors for bad data (their messages name the file)
        return _fail(_cli_hints(e.args[0] if isinstance(e, KeyError) and e.args else str(e), args))
    except KeyboardInterrupt:
        return _fail("interrupted", code=130)


def _warn(message: str, args: argparse.Namespace) -> None:
    message = re.sub(r"\bmax_pretoken_length=", "--max-pretoken-length ", message)
    message = re.sub(r"\bmax_token_length=", "--max-token-length ", message)
    print(f"bytepair: warning: {_cli_hints(message, args)}", file=sys.stderr)


class _Terminated(BaseException):
    """SIGTERM or SIGHUP arrived: unwinds like Ctrl-C, so temporary files are removed."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _stop_signals() -> Iterator[None]:
    """Turns SIGTERM and SIGHUP into ``_Terminated`` while a command runs (main thread only;
    the previous handlers come back afterwards)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: object) -> None:
        raise _Terminated(signum)

    names = [n for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n)]
    old = {n: signal.signal(getattr(signal, n), stop) for n in names}
    try:
        yield
    finally:
        for n, handler in old.items():
            signal.signal(getattr(signal, n), handler)


# --------------------------------------------------------------------------------- parser


def _parser() -> argparse.ArgumentParser:
    from . import __version__

    parser = argparse.ArgumentParser(
        prog="bytepair",
        description="Byte-level BPE tokenizers: train on text files, encode text to token ids "
        "and decode ids back to text, exactly.",
        epilog="Start with `bytepair demo`. " + _HELP_EXIT_CODES + ".",
    )
    parser.add_argument("--version", action="version", version=f"bytepair {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    p = sub.add_parser(
        "train",
        help="train a tokenizer on text files",
        description="Train a byte-level BPE tokenizer on UTF-8 text files and save it as "
        "bytepair's JSON format. Ids: 0-255 are the bytes, then the special tokens in the "
        "order given, then one id per merge in the order learned.",
        epilog="example: bytepair train corpus.txt --vocab-size 10000 "
        "--special-token '<|endoftext|>' -o tok.json",
    )
    p.add_argument(
        "files",
        nargs="+",
        metavar="FILE",
        help="the corpus: UTF-8 text files, folders (every file under them), glob patterns; "
        ".jsonl / .parquet files and gzip / zstd / bz2 / xz compressed files are read too",
    )
    p.add_argument(
        "--vocab-size",
        type=_int_at_least(1),
        required=True,
        metavar="N",
        help="total tokens: 256 bytes + special tokens + merges (training stops early when "
        "no pair is left to merge)",
    )
    p.add_argument(
        "--special-token",
        action="append",
        default=[],
        dest="special_tokens",
        metavar="TOK",
        help="a special token (repeatable), e.g. '<|endoftext|>' between documents; its text "
        "is cut out of the corpus and never merged. Ids 256, 257, ... in the order given",
    )
    p.add_argument(
        "--pattern",
        default=None,
        metavar="P",
        help="pre-tokenization: gpt2 (default; with --base, the base's), cl100k, o200k, or a "
        "regex in Python `regex` syntax. Stored in the tokenizer file",
    )
    p.add_argument(
        "--threads",
        type=_int_at_least(1),
        default=None,
        metavar="N",
        help="threads for counting (default: one per core)",
    )
    p.add_argument(
        "--no-progress",
        action="store_true",
        help="no progress bars (shown by default when stderr is a terminal)",
    )
    p.add_argument(
        "--progress",
        action="store_true",
        help="progress bars even when stderr is not a terminal",
    )
    p.add_argument(
        "--errors",
        choices=["strict", "replace", "skip", "ignore"],
        default="strict",
        help="invalid UTF-8 in a corpus file: fail naming the byte offset (strict, default), "
        "replace it with U+FFFD, or drop it (skip, or ignore)",
    )
    _add_training_options(p)
    p.add_argument(
        "-o", "--output", required=True, metavar="OUT", help="where to write the tokenizer"
    )
    p.set_defaults(run=_cmd_train)

    p = sub.add_parser(
        "encode",
        help="encode text to token ids",
        description="Encode UTF-8 text (FILE, or stdin) and print the token ids on one line, "
        "separated by spaces. The whole input is encoded as one text (newlines included) in "
        "bounded memory. Special tokens: by default the text of a special token such as "
        "'<|endoftext|>' is encoded as ordinary text (like tiktoken's disallowed_special=()), "
        "so any input encodes without error; with --allow-special it becomes the special "
        "token's id (allowed_special='all'). With -o, the ids of a whole corpus go to a "
        "binary file for language-model training instead.",
        epilog="example: bytepair encode -t tok.json corpus/ -o train.bin --eot",
    )
    _add_tokenizer_arg(p)
    p.add_argument(
        "input",
        nargs="*",
        metavar="INPUT",
        help="UTF-8 text (default: stdin); several inputs, folders, globs, .jsonl, .parquet "
        "and gzip/zstd files are read as `bytepair train` reads them, one document per file "
        "(per jsonl line, parquet row); without -o each document's ids go on their own line",
    )
    p.add_argument(
        "--allow-special",
        action="store_true",
        help="encode special-token text as the special token's id",
    )
    _add_export_args(p)
    p.set_defaults(run=_cmd_encode)

    p = sub.add_parser(
        "decode",
        help="decode token ids to text",
        description="Read token ids separated by whitespace (FILE, or stdin), or the id file "
        "that `bytepair encode -o` wrote (.npy, or a raw file with its .json sidecar), and "
        "write the bytes they stand for to stdout, unchanged: `bytepair encode | bytepair "
        "decode` gives back the input byte for byte.",
    )
    _add_tokenizer_arg(p)
    p.add_argument("input", nargs="?", metavar="FILE", help="token ids (default: stdin)")
    p.set_defaults(run=_cmd_decode)

    p = sub.add_parser(
        "demo",
        help="train small tokenizers on Python's own docs and show what they do",
        description="Train tokenizers of a few sizes on the documentation that ships with "
        "Python, encode a sentence none of them saw, and show how the encoding shrinks as the "
        "vocabulary grows. Needs no input and takes a few seconds.",
    )
    p.add_argument(
        "--vocab-sizes",
        nargs="+",
        type=_int_at_least(258),
        default=[300, 600],
        metavar="N",
        help="vocabulary sizes to train (default: 300 600; each at least 258 = 256 bytes + "
        "2 special tokens)",
    )
    p.set_defaults(run=_cmd_demo)

    p = sub.add_parser(
        "show",
        help="show how a tokenizer cuts a text (colored tokens, or an HTML page)",
        description="Print TEXT (or the text of --file) with its token boundaries shown by "
        "cycling background colors, then its size in bytes and tokens. Special-token text "
        "becomes the special token. A character split between several tokens is shown once, "
        "underlined.",
        epilog="example: bytepair show -t tok.json 'Hello, world!' --ids --html tokens.html",
    )
    _add_tokenizer_arg(p)
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("text", nargs="?", metavar="TEXT", help="the text to show")
    src.add_argument("--file", metavar="F", help="show the text of this UTF-8 file instead")
    p.add_argument("--ids", action="store_true", help="also print the token ids")
    p.add_argument(
        "--color",
        choices=["auto", "always", "never"],
        default="auto",
        help="ANSI colors: when stdout is a terminal (auto, default), always, or never "
        "(tokens separated by |)",
    )
    p.add_argument(
        "--html",
        metavar="OUT.html",
        help="also write a self-contained HTML page: colored tokens, id and bytes on hover, "
        "bytes per token",
    )
    p.set_defaults(run=_cmd_show)

    p = sub.add_parser(
        "curve",
        help="compression curve: bytes per token as the vocabulary grows",
        description="The first k merges of a tokenizer form the tokenizer of size "
        "256 + specials + k, so one tokenizer shows the whole curve. Encode held-out text "
        "at about ten vocabulary sizes (log-spaced) and print vocab size, bytes per token "
        "and tokens per document; with -o, plot it (needs matplotlib).",
        epilog="example: bytepair curve -t tok.json --text heldout.txt -o curve.png",
    )
    _add_tokenizer_arg(p)
    p.add_argument(
        "--text",
        nargs="+",
        required=True,
        metavar="HELDOUT",
        help="held-out text: files, folders or globs (one document per text file, per jsonl line)",
    )
    p.add_argument(
        "--sizes",
        nargs="+",
        type=_int_at_least(256),
        metavar="N",
        help="vocabulary sizes to measure (default: about 10, log-spaced, up to the "
        "tokenizer's own)",
    )
    p.add_argument("-o", "--output", metavar="curve.png", help="save a plot (PNG, SVG, PDF)")
    p.set_defaults(run=_cmd_curve)

    _add_convert_parser(sub)
    _add_inspect_parser(sub)
    return parser


def _add_export_args(p: argparse.ArgumentParser) -> None:
    """The options of ``bytepair encode -o``: ids of a corpus to a file."""
    p.add_argument(
        "-o",
        "--output",
        metavar="OUT",
        help="write the ids of all INPUTs to OUT.npy (NumPy) or OUT.bin (raw little-endian) "
        "instead of printing them: uint16 when the vocabulary fits, else uint32, on all "
        "cores, with a sidecar OUT.json(.bin.json / .npy.json) recording the tokenizer hash, "
        "dtype and counts; read it back with bytepair.open_ids(OUT)",
    )
    p.add_argument(
        "--eot",
        action="store_true",
        help="put the end-of-text special token after each document",
    )
    p.add_argument(
        "--eot-token",
        default="<|endoftext|>",
        metavar="TOKEN",
        help="the special token --eot puts there (default: <|endoftext|>)",
    )
    p.add_argument(
        "--threads", type=_int_at_least(1), metavar="N", help="threads (default: one per core)"
    )
    p.add_argument("--no-progress", action="store_true", help="no progress bar (with -o)")
    p.add_argument(
        "--text-field",
        default="text",
        metavar="KEY",
        help="the jsonl key / parquet column holding the text (default: text)",
    )
    p.add_argument(
        "--errors",
        choices=["strict", "replace", "skip", "ignore"],
        default="strict",
        help="invalid UTF-8 in an input: fail naming the byte offset (strict, default), "
        "replace it with U+FFFD, or skip (or ignore) it",
    )
    p.add_argument(
        "--blank-line-docs",
        action="store_true",
        help="a blank line ends a document in plain-text inputs",
    )


def _add_tokenizer_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-t",
        "--tokenizer",
        required=True,
        metavar="TOK",
        help="tokenizer: a bytepair JSON file (from `bytepair train`), a HF tokenizer.json, "
        "a folder with GPT-2 vocab.json + merges.txt (see `bytepair convert`), or the name "
        "of an OpenAI encoding (gpt2, r50k_base, p50k_base, p50k_edit, cl100k_base, "
        "o200k_base, o200k_harmony; as bytepair.get_encoding; a file or folder of that name "
        "comes first)",
    )


def _add_training_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--text-field",
        default="text",
        metavar="KEY",
        help="the text key of .jsonl files / column of .parquet files (default: text)",
    )
    p.add_argument(
        "--blank-line-docs",
        action="store_true",
        help="plain-text files hold documents separated by blank lines",
    )
    p.add_argument(
        "--min-frequency",
        type=_int_at_least(0),
        default=0,
        metavar="N",
        help="stop when the most frequent pair occurs fewer than N times",
    )
    p.add_argument(
        "--max-token-length",
        type=_int_at_least(2),
        default=None,
        metavar="BYTES",
        help="never make a token longer than this many bytes",
    )
    p.add_argument(
        "--max-pretoken-length",
        type=_int_at_least(1),
        default=None,
        metavar="BYTES",
        help="pre-tokens longer than this (corrupt data) are truncated, or skipped with "
        "--long-pretokens skip, and reported",
    )
    p.add_argument(
        "--long-pretokens",
        choices=["truncate", "skip"],
        default=None,
        help="what --max-pretoken-length does to a longer pre-token (default: truncate)",
    )
    p.add_argument(
        "--base",
        default=None,
        metavar="TOK",
        help="continued training: extend this tokenizer (a bytepair JSON file or a GPT-2 "
        "folder), keeping all its ids and merges; --vocab-size is then its n_vocab + new merges",
    )


def _int_at_least(low: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"{value} is below {low}")
        return value

    return parse


# ------------------------------------------------------------------------------- commands


def _cmd_train(args: argparse.Namespace) -> int:
    import bytepair

    for path in args.files:
        if not os.path.exists(path) and not glob.has_magic(path):
            raise CLIError(f"{path}: {_why_missing(path)}")
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):  # fail before training, not after
        raise CLIError(f"{args.output}: cannot write there, {_not_a_folder(out_dir)}")
    if os.path.isdir(args.output):
        raise CLIError(f"{args.output}: is a folder; give a file name for the tokenizer")
    if os.path.exists(args.output):
        from .inputs import expand_paths

        for path in expand_paths(list(args.files)) or []:
            if os.path.samefile(path, args.output):
                raise CLIError(f"{args.output}: is one of the training inputs; not overwriting it")

    if args.long_pretokens and args.max_pretoken_length is None:
        raise CLIError(
            f"--long-pretokens {args.long_pretokens} needs --max-pretoken-length BYTES (the "
            "length above which a pre-token is long)"
        )
    start = time.perf_counter()
    base = _load_tokenizer(args.base, "--base") if args.base else None
    tok = bytepair.train(
        list(args.files),
        args.vocab_size,
        special_tokens=args.special_tokens,
        **({} if args.pattern is None else {"pattern": args.pattern}),  # default: --base's
        threads=args.threads,
        progress=False if args.no_progress else (True if args.progress else None),
        errors=args.errors,
        text_field=args.text_field,
        blank_line_docs=args.blank_line_docs,
        max_pretoken_length=args.max_pretoken_length,
        long_pretokens=args.long_pretokens or "truncate",
        min_frequency=args.min_frequency,
        max_token_length=args.max_token_length,
        base=base,
    )
    seconds = time.perf_counter() - start
    tok.save(args.output, format="native")

    n_special = len(tok.special_tokens)
    n_merges = len(tok.merges)
    plural = "" if n_special == 1 else "s"
    summary = (
        f"bytepair: wrote {args.output}: n_vocab {tok.n_vocab} = 256 bytes + {n_special} "
        f"special token{plural} + {n_merges} merges, trained in {seconds:.2f} s"
    )
    if base is not None:
        summary = (
            f"bytepair: wrote {args.output}: n_vocab {tok.n_vocab} = {base.n_vocab} of "
            f"{args.base} + {tok.n_vocab - base.n_vocab} new merges, trained in {seconds:.2f} s"
        )
    if tok.n_vocab < args.vocab_size:
        why = "no pair left to merge" if not args.min_frequency else "no pair frequent enough"
        summary += f" (stopped before {args.vocab_size}: {why})"
    print(summary, file=sys.stderr)
    return 0


def _cmd_encode(args: argparse.Namespace) -> int:
    tok = _load_tokenizer(args.tokenizer)
    if args.output is not None:
        return _encode_to_file(tok, args)
    inputs = args.input
    structured = args.eot or args.blank_line_docs or len(inputs) > 1
    if not structured and (not inputs or inputs[0] == "-" or _is_plain_text(inputs[0])):
        return _encode_one(tok, args, inputs[0] if inputs else None)
    return _encode_documents(tok, args)


def _encode_one(tok, args: argparse.Namespace, path: str | None) -> int:  # type: ignore[no-untyped-def]
    """One text (a file or stdin) printed as one line of ids."""
    text = _read_text(path, getattr(args, "errors", "strict"))
    if args.allow_special:
        ids = tok.encode_iterable(text, allowed_special="all")
    else:
        ids = tok.encode_iterable(text, disallowed_special=())
    _print_ids(ids)
    return 0


def _encode_documents(tok, args: argparse.Namespace) -> int:  # type: ignore[no-untyped-def]
    """Several inputs, folders, jsonl, parquet...: one line of ids per document."""
    from .inputs import _iter_stream, iter_chunks

    if "-" in args.input and list(args.input) != ["-"]:
        raise CLIError("stdin (-) can only be encoded alone")
    eot = _eot_ids(tok, args.eot_token if args.eot else None)
    allowed = "all" if args.allow_special else frozenset()
    if args.input in ([], ["-"]):  # stdin, read once as a file would be
        stdin, name, _ = _open_input(None)
        chunks = _iter_stream(stdin, name, args.text_field, args.errors, args.blank_line_docs)
    else:
        chunks = iter_chunks(
            list(args.input),
            text_field=args.text_field,
            errors=args.errors,
            blank_line_docs=args.blank_line_docs,
        )
    for text, ends in chunks:
        parts = [text]
        while not ends:  # the rest of this document
            text, ends = next(chunks)
            parts.append(text)
        ids = tok.encode_iterable(parts, allowed_special=allowed, disallowed_special=())
        _print_ids(chain(ids, eot))
    return 0


def _encode_to_file(tok, args: argparse.Namespace) -> int:  # type: ignore[no-untyped-def]
    from .ids import encode_to_file, sidecar_path

    if not args.input or "-" in args.input:
        raise CLIError("encode -o needs input files (stdin is not supported with -o)")
    suffix = os.path.splitext(args.output)[1].lower()
    if os.path.abspath(args.output).startswith(("/dev/", "/proc/")):
        # (/dev/stdout would get the sidecar /dev/stdout.json)
        raise CLIError(
            f"{args.output}: -o writes an id file and its sidecar; to print ids, leave out -o"
        )
    if args.output == "-" or suffix in _TEXT_SUFFIXES:  # -o writes binary ids, a file
        target = "ids.txt" if args.output == "-" else args.output
        raise CLIError(
            f"{args.output}: -o writes binary ids (name it .npy or .bin); for ids as text, "
            f"leave out -o and redirect: bytepair encode -t ... > {target}"
        )
    if suffix in _OTHER_FORMATS:
        raise CLIError(
            f"{args.output}: -o writes a .npy file or raw ids (.bin), not {suffix}; name it "
            ".npy or .bin"
        )
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):  # fail before encoding, not after
        raise CLIError(f"{args.output}: cannot write there, {_not_a_folder(out_dir)}")
    # the tokenizer's own file(s) are never overwritten with ids
    tok_path = os.path.realpath(args.tokenizer)
    outs = {os.path.realpath(args.output), os.path.realpath(sidecar_path(args.output))}
    if tok_path in outs or any(os.path.dirname(o) == tok_path for o in outs):
        raise CLIError(f"{args.output}: is the tokenizer's file; not overwriting it")
    info = encode_to_file(
        tok,
        list(args.input),
        args.output,
        eot=args.eot_token if args.eot else False,
        allowed_special="all" if args.allow_special else frozenset(),
        num_threads=args.threads,
        progress=False if args.no_progress else None,
        text_field=args.text_field,
        errors=args.errors,
        blank_line_docs=args.blank_line_docs,
    )
    rate = info["bytes_read"] / max(info["seconds"], 1e-9) / 1e6
    print(
        f"bytepair: wrote {args.output}: {info['n_tokens']} tokens ({info['dtype']}) of "
        f"{_plural(info['n_documents'], 'document')}, {info['bytes_read']} bytes in "
        f"{info['seconds']:.2f} s ({rate:.1f} MB/s); sidecar {sidecar_path(args.output)}",
        file=sys.stderr,
    )
    return 0


# names that promise text or another format, which `encode -o` (binary ids) refuses
_TEXT_SUFFIXES = {".txt", ".text", ".csv", ".tsv", ".json", ".jsonl", ".md"}
_OTHER_FORMATS = {".npz", ".gz", ".zip", ".tar", ".zst", ".bz2", ".xz", ".parquet", ".pkl"}


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def _eot_ids(tok, name: str | None) -> list[int]:  # type: ignore[no-untyped-def]
    from .ids import _eot_id

    return [] if name is None else [_eot_id(tok, name)]  # type: ignore[list-item]


def _is_plain_text(path: str) -> bool:
    """Whether ``path`` is one text to stream: a plain-text file, a pipe or a missing file
    (then the one-text path says so). A folder or a glob is several documents, as
    several inputs are."""
    from .inputs import file_format

    if os.path.isdir(path):
        return False
    if not os.path.exists(path):
        return not glob.has_magic(path)
    return not os.path.isfile(path) or file_format(path) == (None, "text")


def _print_ids(ids: Iterable[int]) -> None:
    out = sys.stdout
    sep = ""
    batch: list[str] = []
    for i in ids:
        batch.append(str(i))
        if len(batch) >= _WRITE_IDS:
            out.write(sep + " ".join(batch))
            sep, batch = " ", []
    if batch:
        out.write(sep + " ".join(batch))
    out.write("\n")
    out.flush()


def _cmd_show(args: argparse.Namespace) -> int:
    from . import show

    if args.html is not None:  # the page never replaces what it shows, nor a folder
        if args.html == "":
            raise CLIError("the page's name is empty (--html)")
        if args.html.endswith(("/", os.sep)) or os.path.isdir(args.html):
            raise CLIError(f"{args.html}: is a folder; give a file name for the page")
        page_path = os.path.realpath(args.html)
        for what, path in (("the tokenizer", args.tokenizer), ("the input", args.file)):
            if path is not None and os.path.realpath(path) == page_path:
                raise CLIError(f"{args.html}: is {what}; not overwriting it")
        out_dir = os.path.dirname(os.path.abspath(args.html))
        if not os.path.isdir(out_dir):  # said as train -o and encode -o say it
            raise CLIError(f"{args.html}: cannot write there, {_not_a_folder(out_dir)}")
    tok = _load_tokenizer(args.tokenizer)
    if args.file is not None:
        text = "".join(_read_text(args.file))
    else:
        text = args.text
    color = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
    print(show.render_terminal(tok, text, color=color, show_ids=args.ids))
    if args.html:
        title = f"{os.path.basename(args.file or 'text')} with {os.path.basename(args.tokenizer)}"
        page = show.render_html(tok, text, title=title)
        with open(args.html, "w", encoding="utf-8") as f:
            f.write(page)
        print(f"bytepair: wrote {args.html}", file=sys.stderr)
    return 0


def _cmd_curve(args: argparse.Namespace) -> int:
    from . import curve

    if args.output:  # a bad image name or a missing matplotlib fails before the work
        try:
            curve.check_plot_target(args.output)
        except (ImportError, ValueError) as e:
            raise CLIError(str(e)) from None
    tok = _load_tokenizer(args.tokenizer)
    base = 256 + len(tok.special_tokens)
    top = base + len(tok.merges)
    merges = None
    if args.sizes:
        bad = [n for n in args.sizes if not base <= n <= top]
        if bad:
            raise CLIError(
                f"--sizes {bad[0]}: this tokenizer makes vocabularies of {base} to {top} "
                f"tokens (256 bytes + {base - 256} special + up to {len(tok.merges)} merges)"
            )
        merges = [n - base for n in args.sizes]
    points = curve.compression_curve(tok, list(args.text), merges)
    print(curve.format_table(points))
    if args.output:
        try:
            curve.plot_curve(
                points, args.output, title=f"compression curve: {os.path.basename(args.tokenizer)}"
            )
        except ImportError as e:
            raise CLIError(str(e)) from None
        print(f"bytepair: wrote {args.output}", file=sys.stderr)
    return 0


def _ids_of(tok: Tokenizer, name: str) -> str:
    """The ids ``tok`` has, for an unknown id's message: ``0 to n_vocab - 1``, and those in
    between that are no token (QA: "cl100k_base has ids 0 to 100276", where 100256 is none)."""
    top = tok.n_vocab - 1
    unused = sorted(set(range(top + 1)) - set(tok.vocab)) if len(tok.vocab) <= top else []
    runs: list[str] = []
    for i in unused:
        if runs and int(runs[-1].rpartition("-")[2]) == i - 1:
            runs[-1] = f"{runs[-1].partition('-')[0]}-{i}"
        else:
            runs.append(str(i))
    but = ""
    if runs:
        shown = ", ".join(runs[:3]) + (", ..." if len(runs) > 3 else "")
        but = f", but {len(unused)} of them are no token: {shown}"
    return f"the tokenizer {name} has ids 0 to {top}{but}"


def _cmd_decode(args: argparse.Namespace) -> int:
    tok = _load_tokenizer(args.tokenizer)
    name = args.input or "<stdin>"
    sys.stdout.flush()
    out: BinaryIO | None = getattr(sys.stdout, "buffer", None)
    batch: list[int] = []
    chunks = _id_file_chunks(args.input, tok)
    done = 0  # ids decoded before `batch`, to name where an unknown one is

    def flush() -> None:
        nonlocal done
        try:
            data = tok.decode_bytes(batch)
        except KeyError as e:
            msg = e.args[0] if e.args else str(e)
            at = done + _first_unknown(tok, batch)
            where = f"ids[{at}]" if chunks is not None else f"word {at + 1}"
            raise CLIError(f"{name}: {where}: {msg} ({_ids_of(tok, args.tokenizer)})") from None
        if out is not None:
            out.write(data)
        else:  # a text-only stdout (embedding, tests): the closest we can do
            sys.stdout.write(data.decode("utf-8", "surrogateescape"))
        done += len(batch)
        batch.clear()

    if chunks is not None:
        for ids_chunk in chunks:
            batch.extend(ids_chunk)
            flush()
        if out is not None:
            out.flush()
        return 0
    for n, word in enumerate(_read_words(args.input), start=1):
        if not _ID.fullmatch(word):
            shown = word[:40].decode("utf-8", "replace")
            raise CLIError(
                f"{name}: word {n} is {shown!r}, not a token id (an integer >= 0)"
                + _binary_hint(args.input, word)
            )
        if len(word.lstrip(b"0")) > 10:  # ids are 32-bit: more digits can only be unknown
            shown = word[:40].decode("ascii") + ("..." if len(word) > 40 else "")
            raise CLIError(
                f"{name}: word {n}: unknown token id {shown} ({_ids_of(tok, args.tokenizer)})"
            )
        batch.append(int(word))
        if len(batch) >= _DECODE_IDS:
            flush()
    flush()
    if out is not None:
        out.flush()
    else:
        sys.stdout.flush()
    return 0


_ID = re.compile(rb"[0-9]+")


def _first_unknown(tok: Tokenizer, ids: list[int]) -> int:
    """The index of the first id of ``ids`` that is no token of ``tok`` (0 if none is)."""
    for i, t in enumerate(ids):
        try:
            tok.decode_single_token_bytes(t)
        except KeyError:
            return i
    return 0


# control bytes that text of ids never holds (QA: a raw id file whose sidecar was lost was
# read as text, and the error named a word of binary noise and nothing else)
_CONTROL = re.compile(rb"[\x00-\x08\x0e-\x1f]")


def _binary_hint(path: str | None, word: bytes) -> str:
    """For a file that looks like a raw id file of ``encode -o`` read as text: what is missing."""
    from .ids import sidecar_path

    if not path or path == "-" or not (path.endswith(".bin") or _CONTROL.search(word)):
        return ""
    return (
        f"; if {path} is an id file of `bytepair encode -o`, its sidecar "
        f"{sidecar_path(path)} (dtype and counts) is missing"
    )


def _id_file_chunks(path: str | None, tok: Tokenizer) -> Iterator[list[int]] | None:
    """The ids of an id file that ``encode -o`` wrote (a ``.npy``, or a raw file beside its
    ``.json`` sidecar), in chunks; None for anything else (ids as text)."""
    from . import ids

    if not path or path == "-" or not os.path.isfile(path):
        return None
    with open(path, "rb") as f:
        npy = f.read(len(ids._NPY_MAGIC)) == ids._NPY_MAGIC
    side = ids.sidecar_path(path)
    has_side = os.path.isfile(side)
    if not npy and not has_side:
        return None
    try:
        arr = ids.open_ids(path)
        recorded = ids._read_sidecar(side).get("tokenizer_sha256") if has_side else None
    except ValueError as e:
        raise CLIError(str(e)) from None
    if recorded is not None and recorded != ids.tokenizer_sha256(tok):
        print(
            f"bytepair: warning: {path} was written with another tokenizer than this one "
            "(its sidecar records a different tokenizer_sha256)",
            file=sys.stderr,
        )
    return (arr[i : i + _DECODE_IDS].tolist() for i in range(0, len(arr), _DECODE_IDS))


def _cmd_demo(args: argparse.Namespace) -> int:
    from . import demo

    return demo.run(args.vocab_sizes)


# ------------------------------------------------------------------- convert and inspect


def _add_rank_file_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--pattern",
        default=None,
        metavar="P",
        help="for a .tiktoken rank file, which does not store it: gpt2, cl100k, o200k or a regex",
    )
    p.add_argument(
        "--special-token",
        action="append",
        default=None,
        dest="special_tokens",
        metavar="TOK[=ID]",
        help="for a .tiktoken rank file: a special token (repeatable), as TOK=ID; or give "
        "every one without =ID to number them after the largest rank, in order",
    )


def _add_convert_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "convert",
        help="convert a tokenizer file to another format",
        description="Read a tokenizer in any format bytepair knows (detected from the content) "
        "and write it in another: native (bytepair JSON), gpt2 (a folder with vocab.json + "
        "merges.txt), tiktoken (a .tiktoken rank file: no pattern, no special tokens) or hf "
        "(a HF tokenizers tokenizer.json). The ids are kept.",
        epilog="example: bytepair convert tok.json tokenizer.json --to hf",
    )
    p.add_argument(
        "input", metavar="IN", help="tokenizer file or folder, or an encoding name (cl100k_base)"
    )
    p.add_argument("output", metavar="OUT", help="file to write (a folder for --to gpt2)")
    p.add_argument(
        "--to",
        required=True,
        choices=["native", "gpt2", "tiktoken", "hf"],
        help="the format to write",
    )
    _add_rank_file_args(p)
    p.set_defaults(run=_cmd_convert)


def _add_inspect_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "inspect",
        help="describe a tokenizer file",
        description="Print a tokenizer's format, pattern, vocabulary size, special tokens, "
        "longest tokens and first and last merges, and with --text how many bytes of a "
        "sample each token covers on average.",
    )
    p.add_argument(
        "file", metavar="FILE", help="tokenizer file or folder, or an encoding name (o200k_base)"
    )
    p.add_argument(
        "--text",
        metavar="SAMPLE",
        help="a sample: a UTF-8 text file, or else the text itself; prints bytes per token",
    )
    p.add_argument("--top", type=_int_at_least(0), default=5, metavar="N", help="tokens shown")
    _add_rank_file_args(p)
    p.set_defaults(run=_cmd_inspect)


def _load_any(args: argparse.Namespace, path: str):  # type: ignore[no-untyped-def]
    """Loads ``path``; --pattern / --special-token apply to rank files."""
    import bytepair

    from .formats import detect

    if not os.path.exists(path):
        if path in bytepair.list_encoding_names():
            # an OpenAI encoding by name, as -t takes it: its pattern and special tokens
            # are tiktoken's, so the rank-file options do not apply
            if args.pattern is not None or args.special_tokens:
                raise CLIError(
                    f"{path}: an encoding has its own pattern and special tokens; "
                    "--pattern and --special-token are for .tiktoken rank files"
                )
            return bytepair.get_encoding(path)
        raise CLIError(
            f"{path}: {_why_missing(path)} (nor the name of an OpenAI encoding: "
            f"{_encoding_names()})"
        )
    _note_shadowed_encoding(path, path)
    if args.pattern is None and detect(path) == "tiktoken":
        raise CLIError(
            f"{path}: a .tiktoken rank file does not store its pattern; pass --pattern "
            "(gpt2, cl100k, o200k or a regex)"
        )
    specials: dict[str, int] | list[str] | None = None
    if args.special_tokens:
        named = [t.rpartition("=") for t in args.special_tokens]
        with_id = [bool(sep and s and i.isdigit()) for s, sep, i in named]
        if all(with_id):
            specials = {s: int(i) for s, _, i in named}
        elif not any(with_id):
            specials = list(args.special_tokens)
        else:
            raise CLIError("give every --special-token an =ID, or none (then ids follow the ranks)")
    return bytepair.load(path, pattern=args.pattern, special_tokens=specials)


def _cmd_convert(args: argparse.Namespace) -> int:
    tok = _load_any(args, args.input)
    if args.to != "gpt2" and os.path.isdir(args.output):
        raise CLIError(f"{args.output}: is a folder; --to {args.to} writes a file")
    if _tokenizer_files(args.input) & _tokenizer_files(args.output, args.to == "gpt2"):
        # (QA: `convert t.json t.json --to tiktoken` replaced the tokenizer with a rank file,
        # its pattern and special tokens lost)
        raise CLIError(f"{args.output}: is the input tokenizer's file; not overwriting it")
    tok.save(args.output, format=args.to)
    specials = _plural(len(tok.special_tokens), "special token")
    if args.to == "tiktoken" and tok.special_tokens:
        specials += " (not stored in a rank file: name them again when loading it)"
    print(
        f"bytepair: wrote {args.output} ({args.to}): n_vocab {tok.n_vocab}, {specials}, "
        f"{_plural(len(tok.merges), 'merge')}",
        file=sys.stderr,
    )
    return 0


def _tokenizer_files(path: str, folder: bool | None = None) -> set[str]:
    """The real paths of the files of a tokenizer at ``path``: a GPT-2 folder's files, its
    sidecar included (``folder`` None: if ``path`` is a folder), else the file itself."""
    from .formats.gpt2 import SIDECAR

    if folder is None:
        folder = os.path.isdir(path)
    parts = ("vocab.json", "merges.txt", SIDECAR)
    names = [os.path.join(path, n) for n in parts] if folder else [path]
    return {os.path.realpath(n) for n in names}


def _cmd_inspect(args: argparse.Namespace) -> int:
    from .formats import detect

    tok = _load_any(args, args.file)
    kind = detect(args.file) if os.path.exists(args.file) else f"OpenAI encoding {args.file}"
    for line in _describe(tok, kind, args.top):
        print(line)
    if args.text is not None:
        if os.path.isfile(args.text) and _is_plain_text(args.text):
            samples, name = ["".join(_read_text(args.text))], args.text
        elif os.path.exists(args.text) or (glob.has_magic(args.text) and glob.glob(args.text)):
            # a folder, a glob, jsonl, parquet, compressed: documents, as curve reads them
            from .curve import documents_of

            samples, name = list(documents_of(args.text)), args.text
        else:
            samples, name = [args.text], "the text"
            if os.sep in args.text or re.fullmatch(r"[^\s]+\.[A-Za-z0-9]{1,5}", args.text):
                _warn(f"no file named {args.text!r}: the sample is this text itself", args)
        n_ids = sum(map(len, tok.encode_batch(samples, disallowed_special=())))
        n_bytes = sum(len(t.encode("utf-8", "surrogatepass")) for t in samples)
        per = f"{n_bytes / n_ids:.2f}" if n_ids else "-"
        print(
            f"sample:         {name}: {_plural(n_bytes, 'byte')}, {_plural(n_ids, 'token')}, "
            f"{per} bytes per token"
        )
    return 0


def _describe(tok, kind: str, top: int) -> list[str]:  # type: ignore[no-untyped-def]
    from . import _core

    presets = {
        _core.GPT2_PATTERN: "gpt2",
        _core.CL100K_PATTERN: "cl100k",
        _core.O200K_PATTERN: "o200k",
    }
    vocab, specials, merges = tok.vocab, tok.special_tokens, tok.merges
    special_ids = set(specials.values())
    ordinary = [(i, b) for i, b in vocab.items() if i not in special_ids]
    longest = sorted(ordinary, key=lambda item: (-len(item[1]), item[0]))[:top]
    by_id = sorted(specials.items(), key=_by_id)
    shown_specials = ", ".join(f"{s!r}={i}" for s, i in by_id[:_SPECIALS_SHOWN])
    if len(by_id) > _SPECIALS_SHOWN:  # o200k_harmony has 1091
        shown_specials += f", ... ({len(by_id)} in all)"
    lines = [
        f"format:         {kind}",
        f"pattern:        {presets.get(tok.pattern, 'custom')}: {tok.pattern}",
        f"vocab size:     {len(vocab)} tokens, n_vocab {tok.n_vocab} "
        f"(256 bytes, {len(specials)} special, {len(merges)} merges)",
        f"special tokens: {shown_specials or '(none)'}",
        "longest tokens: "
        + (", ".join(f"{i} {b!r} ({len(b)} bytes)" for i, b in longest) or "(none)"),
        "first merges:   " + (", ".join(_merge(m) for m in merges[:top]) or "(none)"),
        "last merges:    " + (", ".join(_merge(m) for m in merges[-top:] if top) or "(none)"),
    ]
    for key, value in tok.metadata.get("training", {}).items():
        lines.append(f"training:       {key} {value}")
    return lines


_SPECIALS_SHOWN = 12


def _by_id(item: tuple[str, int]) -> int:
    return item[1]


def _merge(pair: tuple[bytes, bytes]) -> str:
    return f"{pair[0]!r}+{pair[1]!r}"


# ------------------------------------------------------------------------------------- io


def _load_tokenizer(path: str, flag: str = "-t"):  # type: ignore[no-untyped-def]
    import bytepair

    from .formats import _HEAD, tiktoken

    if not os.path.exists(path):
        if path in bytepair.list_encoding_names():
            return bytepair.get_encoding(path)
        raise CLIError(
            f"{path}: {_why_missing(path)} (the tokenizer, {flag}; or the name of an "
            f"OpenAI encoding: {_encoding_names()})"
        )
    _note_shadowed_encoding(path, f"{flag} {path}")
    if os.path.isfile(path):
        with open(path, "rb") as f:
            is_rank_file = tiktoken.looks_like_rank_file(f.read(_HEAD))
        if is_rank_file:  # bytepair.load would ask for pattern=, which no flag here gives
            raise CLIError(f"{path}: {_rank_file_hint(path, flag)}")
    return bytepair.load(path)


def _not_a_folder(folder: str) -> str:
    """Why ``folder`` cannot hold an output: it is a file, or it does not exist."""
    if os.path.exists(folder):
        return f"{folder} is a file, not a folder"
    return f"folder {folder} does not exist"


def _why_missing(path: str) -> str:
    """Why ``path`` cannot be read, in the system's words: "Not a directory" for a file
    named as a folder ("c.txt/", "c.txt/x"), as ``cat`` says, else "No such file or
    directory"."""
    try:
        os.stat(path)
    except OSError as e:
        return e.strerror or "No such file or directory"
    return "No such file or directory"


def _note_shadowed_encoding(path: str, what: str) -> None:
    """Says on stderr that an existing ``path`` named like an OpenAI encoding is read, not
    the encoding (``-t gpt2`` in a folder that holds a gpt2/, as the shared data does)."""
    import bytepair

    if path in bytepair.list_encoding_names():
        kind = "folder" if os.path.isdir(path) else "file"
        print(
            f"bytepair: note: {what} is the {kind} {os.path.abspath(path)}, not the "
            f"OpenAI encoding (for that, run from another folder)",
            file=sys.stderr,
        )


def _encoding_names() -> str:
    """The names ``-t``, ``convert`` and ``inspect`` take besides files, for error messages."""
    import bytepair

    return ", ".join(bytepair.list_encoding_names())


def _rank_file_hint(path: str, flag: str) -> str:
    """How to use a rank file, which does not store its pattern or special tokens."""
    import hashlib

    from .encodings import encodings_of_rank_file

    with open(path, "rb") as f:
        names = encodings_of_rank_file(hashlib.sha256(f.read()).hexdigest())
    if names:  # one of OpenAI's: its name gives the pattern and the special tokens
        return f"this is the rank file of {' / '.join(names)}: pass {flag} {names[-1]}"
    return (
        "a .tiktoken rank file does not store its pattern; make a tokenizer file of it first: "
        f"bytepair convert {path} tok.json --to native --pattern P (P: gpt2, cl100k, o200k "
        "or a regex)"
    )


def _open_input(path: str | None) -> tuple[BinaryIO, str, bool]:
    """The binary stream to read, its name for messages, and whether we must close it."""
    if path is None or path == "-":
        stdin: TextIO = sys.stdin
        buf = getattr(stdin, "buffer", None)
        if buf is None:  # a text-only stdin (tests, embedding): read it as UTF-8 bytes
            import io

            return io.BytesIO(stdin.read().encode("utf-8", "surrogateescape")), "<stdin>", False
        return buf, "<stdin>", False
    if os.path.isdir(path):
        raise CLIError(f"{path}: is a folder, not a file")
    return open(path, "rb"), path, True


def _read_text(path: str | None, errors: str = "strict") -> Iterator[str]:
    """Yields the input as text in chunks, decoded as UTF-8 with no newline changes.

    Args:
        errors: invalid UTF-8: ``"strict"`` (raise), ``"replace"`` (U+FFFD), ``"skip"`` (drop).

    Raises:
        CLIError: the input is not valid UTF-8 and ``errors="strict"`` (names the byte offset).
    """
    f, name, close = _open_input(path)
    decoder = codecs.getincrementaldecoder("utf-8")({"skip": "ignore"}.get(errors, errors))
    offset = 0  # bytes read before the current chunk
    try:
        while True:
            data = f.read(_READ_CHUNK)
            pending = len(decoder.getstate()[0])
            try:
                text = decoder.decode(data, final=not data)
            except UnicodeDecodeError as e:
                where = offset - pending + e.start
                bad = e.object[e.start : e.start + 1].hex()
                from .inputs import _ERRORS_HINT  # (worded as --errors by `_cli_hints`)

                raise CLIError(
                    f"{name}: invalid UTF-8 at byte offset {where} (byte 0x{bad}): {e.reason}"
                    + _ERRORS_HINT
                ) from None
            if text:
                yield text
            if not data:
                return
            offset += len(data)
    finally:
        if close:
            f.close()


def _read_words(path: str | None) -> Iterator[bytes]:
    """Yields the whitespace-separated words of the input, reading it in chunks."""
    f, _, close = _open_input(path)
    tail = b""
    try:
        while True:
            data = f.read(_READ_CHUNK)
            if not data:
                break
            words = (tail + data).split()
            # a word touching the end of the chunk may go on in the next one
            tail = words.pop() if words and not data[-1:].isspace() else b""
            yield from words
        if tail:
            yield tail
    finally:
        if close:
            f.close()


def _os_error_message(e: OSError) -> str:
    reason = re.sub(r" \(os error \d+\)$", "", e.strerror or str(e))
    return f"{e.filename}: {reason}" if e.filename else reason


def _cli_hints(message: str, args: argparse.Namespace) -> str:
    """A library message with its hints for Python callers worded as this command's flags
    (or dropped where the command has no such flag)."""
    from .inputs import _ERRORS_HINT, _PATHS_HINT, _TEXT_FIELD_HINT

    errors = "; pass --errors replace or --errors skip to read it anyway"
    text_field = "; pass --text-field KEY to pick another"
    flags = {
        _ERRORS_HINT: errors if "errors" in args else "",
        _TEXT_FIELD_HINT: text_field if "text_field" in args else "",
        _PATHS_HINT: "",  # the command line has no in-memory texts
    }
    for hint, flag in flags.items():
        message = message.replace(hint, flag)
    return message


def _fail(message: str, code: int = 1) -> int:
    one_line = " ".join(line.strip() for line in message.splitlines() if line.strip())
    print(f"bytepair: error: {one_line or 'unknown error'}", file=sys.stderr)
    return code


def _silence_stdout() -> None:
    # the reader went away: send what Python still wants to flush at exit nowhere
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


if __name__ == "__main__":
    sys.exit(main())
