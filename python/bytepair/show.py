"""Seeing tokens: how a tokenizer cuts a text, in the terminal (ANSI colors) or as HTML.

A byte-level token need not hold whole characters: ``"你"`` is three UTF-8 bytes and a small
vocabulary may split them over two or three tokens. Such tokens cannot be shown one by one,
so ``segments`` groups consecutive tokens until their bytes decode; a group is shown as its
characters, marked (underlined) as several tokens, and still counts as several tokens.

>>> import bytepair
>>> tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"lo"}, [(b"l", b"o")])
>>> [(s.ids, s.text) for s in segments(tok, "lo你")]
[([256], 'lo'), ([228, 189, 160], '你')]
>>> print(render_terminal(tok, "lo你", color=False))
lo|你
5 bytes, 4 tokens, 1.25 bytes/token
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .tokenizer import Tokenizer

__all__ = ["Segment", "render_html", "render_terminal", "segments", "summary"]

# pastel 256-color backgrounds with black text: readable on dark and light terminals
_ANSI_BACKGROUNDS = (153, 186, 218, 151, 223, 189)
_HTML_BACKGROUNDS = ("#b3d9ff", "#d7d787", "#ffafd7", "#afd7af", "#ffd7af", "#d7d7ff")
_RESET = "\x1b[0m"
_MAX_GROUP = 8  # tokens tried before giving up on decoding a group (invalid UTF-8 ids)


@dataclass(frozen=True)
class Segment:
    """One shown unit: a token, or consecutive tokens that only together make characters.

    Attributes:
        ids: the token ids (one, or several when a character is split between tokens).
        data: their bytes, concatenated.
        text: ``data`` decoded (invalid UTF-8 as U+FFFD).
    """

    ids: list[int]
    data: bytes
    text: str


def segments(
    tok: Tokenizer, text: str | None = None, ids: Sequence[int] | None = None
) -> list[Segment]:
    """The tokens of ``text`` (encoded with all special tokens allowed) or of ``ids``.

    Tokens are grouped only where a token's bytes end inside a UTF-8 character: a group
    ends as soon as its bytes decode, so whole-character tokens always stand alone.

    Raises:
        KeyError: an id is not in the vocabulary.
    """
    if ids is None:
        ids = tok.encode(text or "", allowed_special="all")
    out: list[Segment] = []
    group: list[int] = []
    data = b""
    for i in ids:
        group.append(i)
        data += tok.decode_single_token_bytes(i)
        try:
            decoded = data.decode("utf-8")
        except UnicodeDecodeError as e:
            incomplete = e.reason == "unexpected end of data"
            if incomplete and len(group) < _MAX_GROUP:
                continue  # the character goes on in the next token
            decoded = data.decode("utf-8", "replace")
        out.append(Segment(group, data, decoded))
        group, data = [], b""
    if group:
        out.append(Segment(group, data, data.decode("utf-8", "replace")))
    return out


def summary(segs: Sequence[Segment]) -> str:
    """``"N bytes, T tokens, B bytes/token"`` for some segments."""
    n_bytes = sum(len(s.data) for s in segs)
    n_tokens = sum(len(s.ids) for s in segs)
    per = f"{n_bytes / n_tokens:.2f}" if n_tokens else "-"
    return f"{n_bytes} bytes, {n_tokens} tokens, {per} bytes/token"


def render_terminal(
    tok: Tokenizer,
    text: str | None = None,
    *,
    ids: Sequence[int] | None = None,
    color: bool = True,
    show_ids: bool = False,
) -> str:
    """The text with token boundaries shown, then a summary line.

    Args:
        tok: the tokenizer.
        text: the text to encode (or give ``ids``).
        ids: token ids to show instead of encoding ``text``.
        color: cycle ANSI background colors over the tokens; else separate them with ``|``.
        show_ids: add a line with the ids, colored like their tokens.

    Newlines inside a token are shown as ``↵`` followed by the line break; a group of
    tokens sharing a character is underlined.
    """
    segs = segments(tok, text, ids)
    if not color:
        lines = ["|".join(_visible(s.text).replace("\n", "↵\n") for s in segs)]
        if show_ids:
            lines.append(" ".join(_ids_label(s) for s in segs))
        return "\n".join([*lines, summary(segs)])
    shown, labels = [], []
    for n, s in enumerate(segs):
        style = f"\x1b[48;5;{_ANSI_BACKGROUNDS[n % len(_ANSI_BACKGROUNDS)]}m\x1b[38;5;16m"
        labels.append(style + _ids_label(s) + _RESET)
        if len(s.ids) > 1:
            style += "\x1b[4m"
        # reset before each line break so the color does not run to the edge of the screen
        piece = _visible(s.text).replace("\n", "↵" + _RESET + "\n" + style)
        shown.append(style + piece + _RESET)
    lines = ["".join(shown)]
    if show_ids:
        lines.append(" ".join(labels))
    return "\n".join([*lines, summary(segs)])


# control characters other than newline and tab (ESC, BEL, CR, C1, DEL): printed raw they
# would drive the terminal, so untrusted text could rewrite the screen
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _visible(text: str) -> str:
    """``text`` with control characters shown as escapes (``\\x1b``), as the terminal view
    needs them."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def _ids_label(s: Segment) -> str:
    return "+".join(map(str, s.ids))


_PAGE = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; }}
#text {{ font-family: monospace; white-space: pre-wrap; line-height: 1.7; }}
#text span {{ border-radius: 2px; }}
{colors}
#text span.split {{ text-decoration: underline; }}
#summary {{ color: #333; }}
</style>
</head>
<body>
<h1>{title}</h1>
<p id="summary"><span id="token-count"></span> tokens,
<span id="byte-count"></span> bytes,
<span id="bytes-per-token"></span> bytes per token.
Hover over a token to see its id and bytes; underlined text is one character split between
several tokens.</p>
<div id="text">{spans}</div>
<script>
// the summary is computed from the spans themselves: data-n = tokens, data-b = bytes
let tokens = 0, bytes = 0;
for (const s of document.querySelectorAll("#text span")) {{
  tokens += Number(s.dataset.n);
  bytes += Number(s.dataset.b);
}}
document.getElementById("token-count").textContent = tokens;
document.getElementById("byte-count").textContent = bytes;
document.getElementById("bytes-per-token").textContent =
  tokens ? (bytes / tokens).toFixed(2) : "-";
</script>
</body>
</html>
"""


def render_html(
    tok: Tokenizer,
    text: str | None = None,
    *,
    ids: Sequence[int] | None = None,
    title: str = "bytepair tokens",
) -> str:
    """A self-contained HTML page showing the tokens of ``text`` (or ``ids``).

    Each token (or group of tokens sharing a character) is a ``<span>`` with a cycling
    background color; its ``title`` (shown on hover) gives the id(s) and bytes. The page's
    script fills in the token count, byte count and bytes per token from the spans'
    ``data-n`` / ``data-b`` attributes.
    """
    segs = segments(tok, text, ids)
    colors = "\n".join(
        f"#text span.c{n} {{ background: {c}; }}" for n, c in enumerate(_HTML_BACKGROUNDS)
    )
    spans = []
    for n, s in enumerate(segs):
        cls = f"c{n % len(_HTML_BACKGROUNDS)}" + (" split" if len(s.ids) > 1 else "")
        hover = " + ".join(f"id {i}: {tok.decode_single_token_bytes(i)!r}" for i in s.ids)
        shown = html.escape(s.text.replace("\n", "↵\n"))
        spans.append(
            f'<span class="{cls}" data-n="{len(s.ids)}" data-b="{len(s.data)}" '
            f'title="{html.escape(hover)}">{shown}</span>'
        )
    return _PAGE.format(title=html.escape(title), colors=colors, spans="".join(spans))
