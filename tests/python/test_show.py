"""Seeing tokens: ``bytepair.show`` and ``bytepair show`` (terminal colors, HTML page).

Oracles: ``Tokenizer.encode`` for the ids, tiktoken's GPT-2 for a real vocabulary, small
cases by hand, and headless Chromium (Debian's ``chromium``; ``.ci/run`` installs it) for
the token count that the HTML page's own script computes.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import bytepair
from bytepair import show
from bytepair.cli import main

ANSI = re.compile(r"\x1b\[[0-9;]*m")
EOT = "<|endoftext|>"
TEXT = "Hello wörld, 你好 👋🏽!\n\tTabs\r\nand <|endoftext|> & <b>tags</b>"


@pytest.fixture(scope="module")
def tok() -> bytepair.Tokenizer:
    corpus = ["Hello world, hello there! The world says hello.\n"] * 5
    return bytepair.train(iter(corpus), 300, special_tokens=[EOT])


@pytest.fixture(scope="module")
def gpt2(data_dir: Path) -> bytepair.Tokenizer:
    return bytepair.get_encoding("gpt2", path=data_dir / "tiktoken" / "r50k_base.tiktoken")


def test_segments_group_split_characters() -> None:
    vocab = {i: bytes([i]) for i in range(256)} | {256: b"lo", 257: b"\xe4\xbd"}
    tok = bytepair.Tokenizer(vocab, [(b"l", b"o"), (b"\xe4", b"\xbd")])
    segs = show.segments(tok, "lo你x")
    # "你" is e4 bd a0: token 257 holds its first two bytes, so 257 and 160 show together
    assert [(s.ids, s.text) for s in segs] == [([256], "lo"), ([257, 160], "你"), ([120], "x")]
    # ids that never decode are shown with U+FFFD, one group per bad run
    bad = show.segments(tok, ids=[0xFF, 0x41, 0xE4])
    assert [(s.ids, s.text) for s in bad] == [([255], "\ufffd"), ([65], "A"), ([228], "\ufffd")]


@given(st.text(max_size=50))
def test_segments_cover_every_token(text: str) -> None:
    tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)} | {256: b"\xc3\xa9"}, [])
    segs = show.segments(tok, text)
    assert [i for s in segs for i in s.ids] == tok.encode(text, allowed_special="all")
    assert b"".join(s.data for s in segs) == text.encode("utf-8", "replace")


def test_terminal_plain_and_colored(tok: bytepair.Tokenizer) -> None:
    ids = tok.encode(TEXT, allowed_special="all")
    segs = show.segments(tok, TEXT)
    plain = show.render_terminal(tok, TEXT, color=False, show_ids=True)
    text_part, ids_line, summary = plain.rsplit("\n", 2)
    # control characters (the \r of TEXT's \r\n) are shown as escapes, not sent raw
    visible = [s.text.replace("\r", "\\x0d").replace("\n", "↵\n") for s in segs]
    assert text_part == "|".join(visible)
    assert [int(i) for i in re.split(r"[ +]", ids_line)] == ids
    n_bytes = len(TEXT.encode("utf-8"))
    assert summary == f"{n_bytes} bytes, {len(ids)} tokens, {n_bytes / len(ids):.2f} bytes/token"
    colored = show.render_terminal(tok, TEXT, show_ids=True)
    assert "\x1b[48;5;" in colored
    shown = "".join(visible)
    assert ANSI.sub("", colored) == f"{shown}\n{ids_line}\n{summary}"
    # the special token is one token, shown whole
    assert any(s.text == EOT and s.ids == [tok.special_tokens[EOT]] for s in segs)


class _Spans(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.spans: list[dict[str, str | None]] = []
        self.texts: list[str] = []
        self._inside = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "span" and "data-n" in dict(attrs):
            self.spans.append(dict(attrs))
            self.texts.append("")
            self._inside = True

    def handle_endtag(self, tag: str) -> None:
        self._inside = False

    def handle_data(self, data: str) -> None:
        if self._inside:
            self.texts[-1] += data


def test_html_spans_titles_and_text(gpt2: bytepair.Tokenizer) -> None:
    page = show.render_html(gpt2, TEXT)
    parser = _Spans()
    parser.feed(page)
    ids = gpt2.encode(TEXT, allowed_special="all")
    assert sum(int(s["data-n"] or 0) for s in parser.spans) == len(ids)
    assert sum(int(s["data-b"] or 0) for s in parser.spans) == len(TEXT.encode("utf-8"))
    assert "".join(parser.texts).replace("↵\n", "\n") == TEXT  # escaped and unescaped back
    titles = [s["title"] or "" for s in parser.spans]
    assert [int(i) for t in titles for i in re.findall(r"id (\d+)", t)] == ids
    assert titles[0] == f"id {ids[0]}: b'Hello'"
    body = page.split('<div id="text">')[1].split("</div>")[0]
    assert "<b>" not in body and "</b>" not in body and "&lt;" in body and "&amp;" in body
    assert 'class="c' in page and "split" in page  # 👋🏽 is split between GPT-2 tokens


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("chromium is not installed (.ci/run installs Debian's chromium)")


def test_html_page_in_headless_chromium(gpt2: bytepair.Tokenizer, tmp_path: Path) -> None:
    browser = chromium()
    page = tmp_path / "tokens.html"
    page.write_text(show.render_html(gpt2, TEXT), encoding="utf-8")
    args = [browser, "--headless", "--disable-gpu", "--dump-dom", page.as_uri()]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        args.insert(1, "--no-sandbox")  # chromium refuses to run as root with its sandbox
    home = tmp_path / "home"  # a profile of its own, nothing from the user's
    env = dict(os.environ, HOME=str(home), XDG_CONFIG_HOME=str(home), XDG_CACHE_HOME=str(home))
    dom = subprocess.run(args, capture_output=True, text=True, timeout=120, env=env).stdout
    ids = gpt2.encode(TEXT, allowed_special="all")
    n_bytes = len(TEXT.encode("utf-8"))
    assert f'<span id="token-count">{len(ids)}</span>' in dom, dom[-2000:]
    assert f'<span id="byte-count">{n_bytes}</span>' in dom
    assert f'<span id="bytes-per-token">{n_bytes / len(ids):.2f}</span>' in dom


def test_cli_show(tok: bytepair.Tokenizer, tmp_path: Path, capsys) -> None:  # type: ignore
    tok_path = tmp_path / "tok.json"
    tok.save(tok_path)
    out = tmp_path / "t.html"
    assert main(["show", "-t", str(tok_path), "hello world", "--ids", "--html", str(out)]) == 0
    captured = capsys.readouterr()
    ids = tok.encode("hello world")
    assert (
        captured.out == show.render_terminal(tok, "hello world", color=False, show_ids=True) + "\n"
    )
    assert captured.out.splitlines()[1] == " ".join(map(str, ids))
    assert out.read_text(encoding="utf-8") == show.render_html(
        tok, "hello world", title="text with tok.json"
    )
    src = tmp_path / "in.txt"
    src.write_bytes(TEXT.encode("utf-8"))
    assert main(["show", "-t", str(tok_path), "--file", str(src), "--color", "always"]) == 0
    assert ANSI.sub("", capsys.readouterr().out).startswith("Hello wörld")
    assert main(["show", "-t", str(tok_path)]) == 2  # TEXT or --file is required
    capsys.readouterr()
    assert main(["show", "-t", str(tok_path), "--file", str(tmp_path / "none.txt")]) == 1
    assert "none.txt: No such file or directory" in capsys.readouterr().err
