"""The ``bytepair`` command line: train a tokenizer, encode and decode text, run a demo.

::

    bytepair train corpus.txt --vocab-size 1000 --special-token '<|endoftext|>' -o tok.json
    bytepair encode -t tok.json input.txt > ids.txt
    bytepair decode -t tok.json ids.txt > output.txt      # output.txt == input.txt, byte for byte
    bytepair demo

Text is read and written as raw UTF-8 bytes: no newline translation, so ``\\r\\n`` survives
``encode | decode``. Errors print one ``bytepair: error: ...`` line on stderr; the exit code is
1 for a failure at run time (missing file, bad data) and 2 for a bad command line.
"""

from __future__ import annotations

import argparse
import codecs
import glob
import os
import re
import sys
import time
from collections.abc import Iterator
from typing import BinaryIO, Callable, TextIO

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
    try:
        return run(args)
    except CLIError as e:
        return _fail(str(e))
    except OSError as e:
        if isinstance(e, BrokenPipeError):  # e.g. `bytepair encode big.txt | head`
            _silence_stdout()
            return 1
        return _fail(_os_error_message(e))
    except (ValueError, KeyError) as e:
        # the library's documented errors for bad data (their messages name the file)
        return _fail(e.args[0] if isinstance(e, KeyError) and e.args else str(e))
    except KeyboardInterrupt:
        return _fail("interrupted", code=130)


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
        default="gpt2",
        metavar="P",
        help="pre-tokenization: gpt2 (default), cl100k, o200k, or a regex in Python `regex` "
        "syntax. Stored in the tokenizer file",
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
        "token's id (allowed_special='all').",
    )
    _add_tokenizer_arg(p)
    p.add_argument("input", nargs="?", metavar="FILE", help="UTF-8 text (default: stdin)")
    p.add_argument(
        "--allow-special",
        action="store_true",
        help="encode special-token text as the special token's id",
    )
    p.set_defaults(run=_cmd_encode)

    p = sub.add_parser(
        "decode",
        help="decode token ids to text",
        description="Read token ids separated by whitespace (FILE, or stdin) and write the "
        "bytes they stand for to stdout, unchanged: `bytepair encode | bytepair decode` gives "
        "back the input byte for byte.",
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
    return parser


def _add_tokenizer_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "-t",
        "--tokenizer",
        required=True,
        metavar="TOK",
        help="tokenizer: a bytepair JSON file (from `bytepair train`), or a folder with GPT-2 "
        "vocab.json + merges.txt",
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
    p.add_argument("--long-pretokens", choices=["truncate", "skip"], default="truncate")
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
            raise CLIError(f"{path}: No such file or directory")
    out_dir = os.path.dirname(os.path.abspath(args.output))
    if not os.path.isdir(out_dir):  # fail before training, not after
        raise CLIError(f"{args.output}: cannot write there, folder {out_dir} does not exist")
    if os.path.isdir(args.output):
        raise CLIError(f"{args.output}: is a folder; give a file name for the tokenizer")

    start = time.perf_counter()
    base = bytepair.load(args.base) if args.base else None
    tok = bytepair.train(
        list(args.files),
        args.vocab_size,
        special_tokens=args.special_tokens,
        pattern=args.pattern,
        threads=args.threads,
        progress=False if args.no_progress else (True if args.progress else None),
        errors=args.errors,
        text_field=args.text_field,
        blank_line_docs=args.blank_line_docs,
        max_pretoken_length=args.max_pretoken_length,
        long_pretokens=args.long_pretokens,
        min_frequency=args.min_frequency,
        max_token_length=args.max_token_length,
        base=base,
    )
    seconds = time.perf_counter() - start
    tok.save(args.output)

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
    if args.allow_special:
        ids = tok.encode_iterable(_read_text(args.input), allowed_special="all")
    else:
        ids = tok.encode_iterable(_read_text(args.input), disallowed_special=())
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
    return 0


def _cmd_decode(args: argparse.Namespace) -> int:
    tok = _load_tokenizer(args.tokenizer)
    name = args.input or "<stdin>"
    sys.stdout.flush()
    out: BinaryIO | None = getattr(sys.stdout, "buffer", None)
    batch: list[int] = []

    def flush() -> None:
        try:
            data = tok.decode_bytes(batch)
        except KeyError as e:
            msg = e.args[0] if e.args else str(e)
            raise CLIError(
                f"{name}: {msg} (the tokenizer {args.tokenizer} has ids 0 to {tok.n_vocab - 1})"
            ) from None
        if out is not None:
            out.write(data)
        else:  # a text-only stdout (embedding, tests): the closest we can do
            sys.stdout.write(data.decode("utf-8", "surrogateescape"))
        batch.clear()

    for n, word in enumerate(_read_words(args.input), start=1):
        if not _ID.fullmatch(word):
            shown = word[:40].decode("utf-8", "replace")
            raise CLIError(f"{name}: word {n} is {shown!r}, not a token id (an integer >= 0)")
        if len(word) > 10:  # ids are 32-bit: more digits can only be unknown
            shown = word[:40].decode("ascii") + ("..." if len(word) > 40 else "")
            raise CLIError(
                f"{name}: word {n}: unknown token id {shown} "
                f"(the tokenizer {args.tokenizer} has ids 0 to {tok.n_vocab - 1})"
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


def _cmd_demo(args: argparse.Namespace) -> int:
    from . import demo

    return demo.run(args.vocab_sizes)


# ------------------------------------------------------------------------------------- io


def _load_tokenizer(path: str):  # type: ignore[no-untyped-def]
    import bytepair

    if not os.path.exists(path):
        raise CLIError(f"{path}: No such file or directory (the tokenizer, -t)")
    return bytepair.load(path)


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


def _read_text(path: str | None) -> Iterator[str]:
    """Yields the input as text in chunks, decoded as strict UTF-8 with no newline changes.

    Raises:
        CLIError: the input is not valid UTF-8 (names the byte offset).
    """
    f, name, close = _open_input(path)
    decoder = codecs.getincrementaldecoder("utf-8")("strict")
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
                raise CLIError(
                    f"{name}: invalid UTF-8 at byte offset {where} (byte 0x{bad})"
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
