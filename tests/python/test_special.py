"""Special tokens: the allowed / disallowed policy, overlapping tokens, and training.

The policy is tiktoken's (DESIGN.md §2), so the GPT-2 tests compare every outcome, ids or
``ValueError``, with a tiktoken ``Encoding`` built from the same ranks and special tokens.

Where special tokens overlap (``<|a|>`` and ``<|a|>b``), tiktoken is no oracle: its matcher is
an alternation over a hash map's keys, so which token wins changes from one process to the
next. DESIGN.md fixes the rule instead: leftmost match, and the longest token where several
start at one position, whatever the registration order. Those tests use
``bytepair.reference`` (which implements that rule) and values worked out by hand.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from unittest import mock

import oracles
import pytest
import tiktoken
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import bytepair
import bytepair.tokenizer
from bytepair.reference import ReferenceTokenizer, count_pretokens, split_special
from bytepair.reference import train_bpe as reference_train_bpe

EOT = "<|endoftext|>"
PAD = "<|pad|>"
NOPE = "<|nope|>"  # not a special token of these tokenizers
EOT2 = EOT + EOT
A = "<|a|>"
AB = "<|a|>b"
BYTES = {i: bytes([i]) for i in range(256)}

# pieces that put special tokens at the start, the end, back to back and repeated, next to
# their own fragments ("<|endoftext" without "|>", "|>" alone)
special_text = st.lists(
    st.one_of(
        st.sampled_from(
            [EOT, PAD, EOT, NOPE, "<|", "|>", "<|endoftext", "endoftext|>", "<|pad|", "<", "|"]
        ),
        st.sampled_from([" ", "\n", "\n\n", "a", "Hello", " world", "😀", "日本", "'s", "!"]),
        st.text(max_size=3),
    ),
    max_size=25,
).map("".join)


@pytest.fixture(scope="module")
def gpt2(data_dir: Path) -> bytepair.Tokenizer:
    # <|endoftext|> keeps its vocab.json id 50256; <|pad|> is new, so it gets 50257
    return bytepair.Tokenizer.from_files(
        data_dir / "gpt2" / "vocab.json",
        data_dir / "gpt2" / "merges.txt",
        special_tokens=[EOT, PAD],
    )


@pytest.fixture(scope="module")
def gpt2_enc(data_dir: Path) -> tiktoken.Encoding:
    return oracles.tiktoken_with_specials(data_dir, {EOT: 50256, PAD: 50257})


def outcome(fn: Callable[..., list], *args: object, **kwargs: object) -> list | tuple[str, str]:
    """``fn(*args, **kwargs)``, or ("ValueError", the special token its message names)."""
    try:
        return fn(*args, **kwargs)
    except ValueError as e:
        named = re.findall(r"'(<\|[^']*)'", str(e))
        return ("ValueError", named[0] if named else str(e))


def test_gpt2_special_ids(gpt2: bytepair.Tokenizer, gpt2_enc: tiktoken.Encoding) -> None:
    assert gpt2.special_tokens == {EOT: 50256, PAD: 50257}
    assert gpt2.special_tokens_set == {EOT, PAD} == gpt2_enc.special_tokens_set
    assert gpt2.eot_token == 50256 == gpt2_enc.eot_token
    assert gpt2.n_vocab == 50258 == gpt2_enc.n_vocab
    assert gpt2.decode_single_token_bytes(50257) == PAD.encode()
    assert gpt2.decode([15496, 50256, 50257]) == f"Hello{EOT}{PAD}"


def test_default_raises_naming_the_token(
    gpt2: bytepair.Tokenizer, gpt2_enc: tiktoken.Encoding
) -> None:
    for text, token in [
        (EOT, EOT),
        (f"Hello{EOT}", EOT),
        (f"{PAD} world", PAD),
        (f"a {PAD}{EOT}", PAD),  # the leftmost one is named
        (f"x{EOT}y{PAD}z", EOT),
    ]:
        with pytest.raises(ValueError, match=re.escape(repr(token))):
            gpt2.encode(text)
        with pytest.raises(ValueError, match=re.escape(repr(token))):
            gpt2.encode_batch(["fine", text])
        with pytest.raises(ValueError, match=re.escape(repr(token))):
            list(gpt2.encode_iterable([text]))
    # the message starts as tiktoken's does, word for word
    with pytest.raises(ValueError) as bp_error:
        gpt2.encode(f"a {EOT}")
    with pytest.raises(ValueError) as tt_error:
        gpt2_enc.encode(f"a {EOT}")
    first = str(tt_error.value).splitlines()[0]
    assert first == "Encountered text corresponding to disallowed special token '<|endoftext|>'."
    assert str(bp_error.value).splitlines()[0] == first
    # a special token's fragments are ordinary text
    assert gpt2.encode("<|endoftext") == [27, 91, 437, 1659, 5239]
    assert gpt2.encode_ordinary(EOT) == [27, 91, 437, 1659, 5239, 91, 29]


def test_default_call_takes_the_general_way_where_it_must(
    gpt2: bytepair.Tokenizer, gpt2_enc: tiktoken.Encoding
) -> None:
    # `encode(text)` with the common policies (the default, `disallowed_special=()`,
    # `allowed_special="all"`) goes straight to the core (its fast way); the same policies
    # spelled otherwise (`set()`, `frozenset()` built anew, the set of every special token)
    # take the general way. Both give tiktoken's outcome on texts the fast way cannot answer
    # alone: special tokens, lone and paired surrogates (fixed as tiktoken fixes them), both
    fresh_empty = frozenset(["x"]) - {"x"}  # (an empty frozenset that is not the default)
    every = set(gpt2.special_tokens_set)
    for text in [
        "",
        "hello world",
        f"Hello{EOT}",
        "a\ud800b",
        "\ud83d\ude00 hi",
        f"\ud800{PAD}",
        "<|endoftext\ud800|>",
        f"{EOT[:5]}\udfff{EOT[5:]}",
    ]:
        want = outcome(gpt2_enc.encode, text)
        assert outcome(gpt2.encode, text) == want, text
        for allowed in (set(), fresh_empty):
            got = outcome(gpt2.encode, text, allowed_special=allowed, disallowed_special="all")
            assert got == want, (text, allowed)
        want = gpt2_enc.encode(text, disallowed_special=())
        for none in ((), [], set(), frozenset(), None):
            assert gpt2.encode(text, disallowed_special=none) == want, (text, none)
            assert gpt2.encode(text, allowed_special=set(), disallowed_special=none) == want
        want = gpt2_enc.encode(text, allowed_special="all")
        assert gpt2.encode(text, allowed_special="all") == want, text
        assert gpt2.encode(text, allowed_special=every) == want, text
    # decode's fast way (a list) and its general one (a tuple, an array) agree, and say the
    # same errors
    ids = gpt2_enc.encode("Hello world, hi")
    assert gpt2.decode(ids) == gpt2.decode(tuple(ids)) == "Hello world, hi"
    for bad in ([1, -1], [2**40], ["1"], [1.5]):
        with pytest.raises((KeyError, TypeError)) as fast:
            gpt2.decode(bad)
        with pytest.raises((KeyError, TypeError)) as general:
            gpt2.decode(tuple(bad))
        assert (type(fast.value), str(fast.value)) == (type(general.value), str(general.value))


def _stream(tok: bytepair.Tokenizer, chunks: list[str], **kw: object) -> list[int]:
    return list(tok.encode_iterable(chunks, **kw))


POLICIES = [
    (frozenset(), "all"),
    ("all", "all"),
    ({EOT}, "all"),
    ({PAD}, "all"),
    ({EOT}, ()),
    ({PAD}, ()),
    (frozenset(), ()),
    ("all", ()),
    (frozenset(), {EOT}),
    (frozenset(), [PAD]),
    ({PAD}, frozenset({EOT})),
    ({EOT}, {EOT}),  # allowed and disallowed: tiktoken checks disallowed first
    ({EOT, PAD}, ()),
    # names that are no special token: ignored when allowed; refused when disallowed, as
    # tiktoken refuses any string given as disallowed (QA)
    ({NOPE}, "all"),
    (frozenset(), {NOPE}),
    ({EOT}, {NOPE, PAD}),
    ("all", [NOPE]),
]
POLICY_IDS = [f"allowed={a}-disallowed={d}" for a, d in POLICIES]

FIXED = [
    "",
    EOT,
    PAD,
    EOT * 3,
    EOT + PAD + EOT,
    f"{EOT}Hello",
    f"Hello{EOT}",
    f"Hello {EOT} world {PAD}",
    f"{EOT}\n\n",
    f"{EOT}\n\ntesting!",
    f" {EOT} ",
    f"<|{EOT}|>",
    f"<|endoftext{EOT}",
    f"<|endoftext|{PAD}>",
    f"😀{EOT}😀",
    "no specials at all",
    f"hello{NOPE}",
    f"{NOPE}{EOT}",
    f"<|nope{EOT}|>",
]


@pytest.mark.parametrize(("allowed", "disallowed"), POLICIES, ids=POLICY_IDS)
def test_policies_equal_tiktoken_fixed(
    gpt2: bytepair.Tokenizer, gpt2_enc: tiktoken.Encoding, allowed, disallowed
) -> None:
    for text in FIXED:
        kw = {"allowed_special": allowed, "disallowed_special": disallowed}
        expected = outcome(gpt2_enc.encode, text, **kw)
        assert outcome(gpt2.encode, text, **kw) == expected, text
        assert outcome(_stream, gpt2, [text], **kw) == expected, text
        batch = outcome(gpt2.encode_batch, [text, "x"], **kw)
        assert batch == (expected if isinstance(expected, tuple) else [expected, [87]]), text


@given(special_text, st.sampled_from(POLICIES))
def test_policies_equal_tiktoken(
    gpt2: bytepair.Tokenizer, gpt2_enc: tiktoken.Encoding, text: str, policy
) -> None:
    allowed, disallowed = policy
    kw = {"allowed_special": allowed, "disallowed_special": disallowed}
    expected = outcome(gpt2_enc.encode, text, **kw)
    assert outcome(gpt2.encode, text, **kw) == expected
    assert outcome(gpt2.encode_batch, [text], num_threads=2, **kw) == (
        expected if isinstance(expected, tuple) else [expected]
    )


@given(special_text)
def test_all_and_ordinary(gpt2: bytepair.Tokenizer, gpt2_enc: tiktoken.Encoding, text: str) -> None:
    ids = gpt2.encode(text, allowed_special="all")
    assert ids == gpt2_enc.encode(text, allowed_special="all")
    assert ids.count(50256) == text.count(EOT)
    assert ids.count(50257) == text.count(PAD)
    assert gpt2.decode(ids) == text
    ordinary = gpt2.encode(text, disallowed_special=())
    assert ordinary == gpt2.encode_ordinary(text) == gpt2_enc.encode_ordinary(text)
    assert 50256 not in ordinary and 50257 not in ordinary
    assert gpt2.decode(ordinary) == text


def test_allowed_subset(gpt2: bytepair.Tokenizer) -> None:
    text = f"a{EOT}b{PAD}c"
    # <|pad|> is neither allowed nor explicitly permitted: raises, naming it
    with pytest.raises(ValueError, match=re.escape(repr(PAD))):
        gpt2.encode(text, allowed_special={EOT})
    pad_as_text = gpt2.encode_ordinary(PAD)
    assert gpt2.encode(text, allowed_special={EOT}, disallowed_special=()) == (
        [64, 50256, 65] + pad_as_text + [66]
    )
    eot_as_text = gpt2.encode_ordinary(EOT)
    assert gpt2.encode(text, allowed_special={PAD}, disallowed_special=()) == (
        [64] + eot_as_text + [65, 50257, 66]
    )
    # allowed_special takes any collection of names, as a set or frozenset or list
    for allowed in ({EOT, PAD}, frozenset({EOT, PAD}), [EOT, PAD], "all"):
        assert gpt2.encode(text, allowed_special=allowed) == [64, 50256, 65, 50257, 66]


def test_unknown_names_as_in_tiktoken(gpt2: bytepair.Tokenizer) -> None:
    # an allowed name that is not a special token of this tokenizer changes nothing
    # (tiktoken: the same); one set of names can serve several encodings
    plain = gpt2.encode("hello<|nope|>", disallowed_special=())
    assert gpt2.encode("hello<|nope|>", allowed_special={"<|nope|>"}) == plain
    assert gpt2.encode_batch(["hello<|nope|>"], allowed_special={"<|nope|>"}) == [plain]
    assert list(gpt2.encode_iterable(["hello<|nope|>"], allowed_special={"<|nope|>"})) == plain
    both = gpt2.encode("hello<|nope|>" + EOT, allowed_special={EOT, "<|nope|>"})
    assert both == plain + [gpt2.eot_token]
    # a disallowed one is looked for all the same, as tiktoken does (QA: a guard against
    # chat markup, disallowed_special={"<|im_start|>"} on cl100k, let it through): every
    # way of encoding refuses text that holds it, in a stream even where it spans chunks
    for refuse in (
        lambda t: gpt2.encode(t, disallowed_special={"<|nope|>"}),
        lambda t: gpt2.encode_batch(["x", t], disallowed_special=["<|nope|>"]),
        lambda t: gpt2.encode_to_numpy(t, disallowed_special={"<|nope|>"}),
        lambda t: gpt2.encode_with_unstable(t, disallowed_special={"<|nope|>"}),
        lambda t: list(gpt2.encode_iterable(list(t), disallowed_special={"<|nope|>"})),
    ):
        with pytest.raises(ValueError, match=re.escape("special token '<|nope|>'")):
            refuse("hello<|nope|> there")
    # a stream of 1000-character chunks is first encoded after 263 chunks (2^18
    # characters buffered): the name across that point
    long = "ab " * 90_000
    for at in range(262_990, 263_003):
        text = long[:at] + "<|nope|>" + long[at:]
        chunks = [text[i : i + 1000] for i in range(0, len(text), 1000)]
        with pytest.raises(ValueError, match=re.escape("'<|nope|>'")):
            list(gpt2.encode_iterable(chunks, disallowed_special={"<|nope|>"}))
    assert list(gpt2.encode_iterable([long], disallowed_special={"<|nope|>"})) == gpt2.encode(long)
    # a name the text does not hold is no error, whatever the flushes (QA: the text held
    # back at a flush was searched twice, and " ab word" was found across that seam)
    text = "word " * 60_000 + "ab"
    for chunks in ([text, "X"], [text[i : i + 999] for i in range(0, len(text), 999)] + ["X"]):
        got = list(gpt2.encode_iterable(chunks, disallowed_special={" ab word"}))
        assert got == gpt2.encode(text + "X", disallowed_special={" ab word"})
    # a bare string is not a set of names (it would be a set of characters)
    with pytest.raises(ValueError):
        gpt2.encode("hello", allowed_special=EOT)


def _every_encode(tok: bytepair.Tokenizer) -> list[Callable[..., object]]:
    """Every method that takes a special-token policy, as ``f(text, **policy)``."""
    return [
        tok.encode,
        tok.encode_to_numpy,
        tok.encode_with_unstable,
        lambda t, **kw: tok.encode_batch([t], **kw),
        lambda t, **kw: list(tok.encode_iterable([t], **kw)),
    ]


@pytest.mark.usefixtures("local_encodings")
def test_empty_string_disallowed_refuses_every_text_as_in_tiktoken(data_dir: Path) -> None:
    # "" in disallowed_special was ignored; tiktoken finds it in every text, "" included,
    # and raises: so does every encode method, naming the argument
    enc = oracles.tiktoken_encoding(data_dir, "cl100k_base")
    tok = bytepair.get_encoding("cl100k_base")
    for disallowed in ({""}, ["", "x"], frozenset({"", EOT})):
        for text in ("hello", ""):
            with pytest.raises(ValueError, match="disallowed special token ''"):
                enc.encode(text, disallowed_special=disallowed)
            for encode in _every_encode(tok):
                with pytest.raises(ValueError) as e:
                    encode(text, disallowed_special=disallowed)
                assert str(e.value) == (
                    "Encountered text corresponding to disallowed special token ''.\n"
                    "disallowed_special holds the empty string, which every text contains, so "
                    "every text is refused (as in tiktoken); leave it out."
                )
    # allowed, it is not a special token: ignored, as in tiktoken
    want = enc.encode("hello", allowed_special={""})
    assert tok.encode("hello", allowed_special={""}) == want == [15339]


@pytest.mark.usefixtures("local_encodings")
def test_disallowed_strings_are_searched_before_surrogates_are_fixed(data_dir: Path) -> None:
    # tiktoken searches the text as given, then fixes lone surrogates (U+FFFD) and escaped
    # pairs; encode_iterable searched the fixed text (QA): "\ud800" passed, "\ufffd" was
    # refused. Every method and every chunking now gives tiktoken's answer.
    enc = oracles.tiktoken_encoding(data_dir, "cl100k_base")
    tok = bytepair.get_encoding("cl100k_base")
    cases = [
        ("x\ud800", "\ud800"),
        ("ab\ud800cd", "b\ud800c"),
        ("x\ud800", "\ufffd"),
        ("x\ud83d\ude00", "\U0001f600"),
        ("x\ud83d\ude00y", "\ud83d\ude00"),
        ("x\ud83d\ude00y", "\ude00y"),
    ]
    # with a special token in the set too, and the default policy ("all")
    mixed = [(text, {name, EOT}) for text, name in cases] + [(t + EOT, "all") for t, _ in cases]
    for text, name in [(text, {name}) for text, name in cases] + mixed:
        try:
            want: object = enc.encode(text, disallowed_special=name)
        except ValueError:
            want = ValueError
        encodes: list[Callable[..., object]] = [
            tok.encode,
            lambda t, **kw: tok.encode_to_numpy(t, **kw).tolist(),
            lambda t, **kw: tok.encode_batch([t], **kw)[0],
        ]
        encodes += [
            lambda t, k=k, **kw: list(tok.encode_iterable([t[:k], t[k:]], **kw))
            for k in range(len(text) + 1)
        ]
        for encode in encodes:
            try:
                got = encode(text, disallowed_special=name)
            except ValueError:
                got = ValueError
            assert got == want, (text, name)
    # a special token that fixing surrogates spells: not in the text as given, so tiktoken
    # encodes it as ordinary text under its default policy (the core had searched the fixed
    # text and refused it)
    tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [], {"<\ufffd>": 256})
    tt = tok.to_tiktoken()
    for text in ("a<\ud800>b", "a<\ufffd>b"):
        try:
            want = tt.encode(text)
        except ValueError:
            want = ValueError
        for encode in (tok.encode, lambda t: tok.encode_to_numpy(t).tolist()):
            try:
                got = encode(text)
            except ValueError:
                got = ValueError
            assert got == want, text


@pytest.mark.usefixtures("local_encodings")
def test_policy_items_that_are_no_str_raise_as_in_tiktoken(data_dir: Path) -> None:
    # {5} or {b"<|endoftext|>"} was ignored here (the bytes one looks like allowing the
    # token); tiktoken raises TypeError: so does every encode method, naming the item
    enc = oracles.tiktoken_encoding(data_dir, "cl100k_base")
    tok = bytepair.get_encoding("cl100k_base")
    text = "hello"
    for bad in ({5}, [EOT, b"<|endoftext|>"], (None,), frozenset({EOT, 2.5})):
        for kw in ("allowed_special", "disallowed_special"):
            with pytest.raises(TypeError):
                enc.encode(text, **{kw: bad})
            for encode in _every_encode(tok):
                with pytest.raises(TypeError, match=f"^{kw} must be .*special-token strings; it"):
                    encode(text, **{kw: bad})
    # the same names as strings go through; checked once per frozenset, not per call
    names = frozenset({EOT, "<|not a token|>"})
    text = f"hello {EOT}"
    assert tok.encode(text, allowed_special=names) == enc.encode(text, allowed_special=names)


@pytest.mark.usefixtures("local_encodings")
def test_none_policies_as_in_tiktoken(data_dir: Path, tmp_path: Path) -> None:
    enc = oracles.tiktoken_encoding(data_dir, "cl100k_base")
    tok = bytepair.get_encoding("cl100k_base")
    text = "hello" + EOT
    # disallowed_special=None disallows nothing, as tiktoken's encode reads it
    for kw, want in [
        ({"disallowed_special": None}, [15339, 27, 91, 8862, 728, 428, 91, 29]),
        ({"allowed_special": "all", "disallowed_special": None}, [15339, 100257]),
    ]:
        assert enc.encode(text, **kw) == want
        assert tok.encode(text, **kw) == tok.encode_to_numpy(text, **kw).tolist() == want
        assert tok.encode_batch([text], **kw) == [want]
        assert list(tok.encode_iterable([text], **kw)) == want
    # allowed_special=None is a TypeError, as in tiktoken (it was read as set())
    for kw in ({"allowed_special": None}, {"allowed_special": None, "disallowed_special": ()}):
        with pytest.raises(TypeError):
            enc.encode(text, **kw)
        for encode in _every_encode(tok):
            with pytest.raises(TypeError) as e:
                encode(text, **kw)
            assert str(e.value) == (
                'allowed_special must be "all" or a set of special-token strings, not None '
                "(to allow none: set(), the default)"
            )
    with pytest.raises(TypeError, match="allowed_special must be"):
        bytepair.encode_to_file(tok, [__file__], tmp_path / "ids.npy", allowed_special=None)


@pytest.mark.parametrize(
    ("text", "named"),
    [(PAD + NOPE, PAD), (NOPE + PAD, NOPE), (f"a {NOPE} b {EOT}", NOPE), (f"a {EOT} {NOPE}", EOT)],
)
def test_refusal_names_the_leftmost_disallowed_string(
    gpt2: bytepair.Tokenizer, gpt2_enc: tiktoken.Encoding, text: str, named: str
) -> None:
    # with a special token and a string that is none both disallowed, the error names the
    # leftmost of them, as tiktoken's one search does; encode named the special token and
    # encode_batch the other wherever they were (found by test_policies_equal_tiktoken)
    policy = {"disallowed_special": {NOPE, PAD, EOT}}
    assert outcome(gpt2_enc.encode, text, **policy) == ("ValueError", named)
    for encode in _every_encode(gpt2):
        assert outcome(encode, text, **policy) == ("ValueError", named)
    chunks = [text[:3], text[3:9], text[9:]]
    assert outcome(lambda t, **kw: list(gpt2.encode_iterable(chunks, **kw)), text, **policy) == (
        "ValueError",
        named,
    )


def test_no_special_tokens() -> None:
    tok = bytepair.Tokenizer(BYTES, [])
    assert tok.special_tokens == {}
    assert tok.special_tokens_set == set()
    assert tok.eot_token is None
    assert tok.n_vocab == 256
    assert tok.encode(EOT) == list(EOT.encode())
    assert tok.encode(EOT, allowed_special="all") == list(EOT.encode())
    assert tok.encode(EOT, allowed_special={EOT}) == list(EOT.encode())  # not special here


def test_eot_token_only_for_endoftext() -> None:
    tok = bytepair.Tokenizer(BYTES, [], special_tokens=[PAD, EOT])
    assert tok.special_tokens == {PAD: 256, EOT: 257}
    assert tok.eot_token == 257
    tok = bytepair.Tokenizer(BYTES, [], special_tokens=[PAD])
    assert tok.eot_token is None
    assert tok.special_tokens_set == {PAD}


# special tokens that are regex syntax, non-ASCII, whitespace or newlines: matched as literal
# text. None overlaps another, so tiktoken is an oracle here too.
ODD = ["((", ".*", "\\\\", "[x]", "$$", "😀", "<|日本|>", "\n\n", "  ", "a|b", "^^", "(?i)A"]
odd_text = st.lists(
    st.one_of(st.sampled_from(ODD), st.sampled_from(["(", "$", "a", "b", "|", "\n", " ", "A"])),
    max_size=25,
).map("".join)


@pytest.fixture(scope="module")
def odd() -> tuple[bytepair.Tokenizer, ReferenceTokenizer, tiktoken.Encoding]:
    tok = bytepair.Tokenizer(BYTES, [], special_tokens=ODD)
    ref = ReferenceTokenizer(tok.vocab, [], special_tokens=ODD)
    return tok, ref, oracles.from_tokenizer(tok, "odd")


def test_odd_special_tokens_examples(odd) -> None:
    tok, _, _ = odd
    s = tok.special_tokens
    assert list(s.values()) == list(range(256, 256 + len(ODD)))
    assert tok.encode("a.*b", allowed_special="all") == [97, s[".*"], 98]
    assert tok.encode("(((", allowed_special="all") == [s["(("], 40]
    assert tok.encode("(?i)a(?i)A", allowed_special="all") == [*b"(?i)a", s["(?i)A"]]
    assert tok.encode("\n\n\n", allowed_special="all") == [s["\n\n"], 10]
    assert tok.encode("a|bb", allowed_special={"a|b"}) == [s["a|b"], 98]
    with pytest.raises(ValueError, match=re.escape(repr("😀"))):
        tok.encode("x😀")


@given(odd_text, st.sampled_from(["all", {"$$"}, {"\n\n", "  "}, {"(?i)A", ".*"}]))
def test_odd_special_tokens(odd, text: str, allowed) -> None:
    tok, ref, enc = odd
    ids = tok.encode(text, allowed_special=allowed, disallowed_special=())
    assert ids == ref.encode(text, allowed)
    assert ids == enc.encode(text, allowed_special=allowed, disallowed_special=())
    assert tok.decode(ids) == text
    # the default policy: raises exactly when tiktoken raises
    raised = isinstance(outcome(tok.encode, text, allowed_special=allowed), tuple)
    assert raised == isinstance(outcome(enc.encode, text, allowed_special=allowed), tuple)


# ------------------------------------------------------------------------------ overlapping


ORDERS = [
    [A, AB, EOT, EOT2],
    [AB, A, EOT2, EOT],
    [EOT2, A, EOT, AB],
]


@pytest.fixture(
    scope="module", params=range(len(ORDERS)), ids=["short-first", "long-first", "mixed"]
)
def overlapping(request) -> tuple[bytepair.Tokenizer, ReferenceTokenizer]:
    order = ORDERS[request.param]
    tok = bytepair.Tokenizer(BYTES, [], special_tokens=order)
    ref = ReferenceTokenizer(tok.vocab, [], special_tokens=order)
    return tok, ref


@pytest.mark.parametrize(
    ("text", "pieces"),
    [
        (AB, [AB]),
        (A, [A]),
        (A + A, [A, A]),
        (A + AB, [A, AB]),
        (AB + "b", [AB, "b"]),
        ("x" + A + "bb" + A, ["x", AB, "b", A]),
        (EOT, [EOT]),
        (EOT2, [EOT2]),
        (EOT * 3, [EOT2, EOT]),
        (EOT * 4, [EOT2, EOT2]),
        (EOT * 5, [EOT2, EOT2, EOT]),
        ("<|a" + A + "b", ["<", "|", "a", AB]),
        ("<|endoftext|" + EOT2, [*"<|endoftext|", EOT2]),
    ],
)
def test_longest_special_wins(overlapping, text: str, pieces: list[str]) -> None:
    tok, ref = overlapping
    specials = tok.special_tokens
    expected = [specials[p] if p in specials else ord(p) for p in pieces]
    assert tok.encode(text, allowed_special="all") == expected
    assert ref.encode(text, "all") == expected
    assert tok.encode_batch([text, text], allowed_special="all") == [expected, expected]
    assert list(tok.encode_iterable(list(text), allowed_special="all")) == expected
    assert tok.decode(expected) == text


def test_leftmost_special_wins() -> None:
    # "ab" starts first, so it wins over the longer "bcd" that overlaps it
    for order in (["ab", "bcd"], ["bcd", "ab"]):
        tok = bytepair.Tokenizer(BYTES, [], special_tokens=order)
        ab, bcd = tok.special_tokens["ab"], tok.special_tokens["bcd"]
        assert tok.encode("abcd", allowed_special="all") == [ab, 99, 100]
        assert tok.encode("xbcdab", allowed_special="all") == [120, bcd, ab]
        # only "bcd" allowed: "ab" is ordinary text, and "bcd" matches
        assert tok.encode("abcd", allowed_special={"bcd"}, disallowed_special=()) == [97, bcd]


def test_overlapping_subsets(overlapping) -> None:
    tok, ref = overlapping
    s = tok.special_tokens
    # only the short one allowed: "<|a|>b" is not matched, so <|a|> then "b"
    assert tok.encode(AB, allowed_special={A}, disallowed_special=()) == [s[A], 98]
    # only the long one allowed: a bare <|a|> is ordinary text
    assert tok.encode(AB + A, allowed_special={AB}, disallowed_special=()) == (
        [s[AB]] + list(A.encode())
    )
    # as tiktoken: the disallowed check scans the whole text, so a disallowed <|a|> inside an
    # allowed <|a|>b still raises
    with pytest.raises(ValueError, match=re.escape(repr(A))):
        tok.encode(AB, allowed_special={AB})
    with pytest.raises(ValueError, match=re.escape(repr(AB))):
        tok.encode(AB, allowed_special={A})
    for allowed in ({A}, {AB}, {EOT}, {EOT2}, {A, EOT2}, {AB, EOT}):
        for text in (AB + A + EOT * 3, "x" + A + "b" + EOT2, A + "bb" + EOT + "<|a|"):
            got = tok.encode(text, allowed_special=allowed, disallowed_special=())
            assert got == ref.encode(text, allowed), (allowed, text)


overlap_text = st.lists(
    st.sampled_from([A, AB, EOT, EOT2, "<|", "|>", "a", "b", "<|a", "|>b", "x", " ", "\n"]),
    max_size=30,
).map("".join)


@given(overlap_text)
def test_overlapping_equals_reference_any_order(text: str) -> None:
    pieces = None
    for order in ORDERS:
        tok = _overlap_tok(tuple(order))
        ids = tok.encode(text, allowed_special="all")
        ref = ReferenceTokenizer(tok.vocab, [], special_tokens=order)
        assert ids == ref.encode(text, "all")
        assert tok.decode(ids) == text
        # the same split into tokens whatever the registration order
        got = tok.decode_tokens_bytes(ids)
        assert pieces is None or got == pieces
        pieces = got
    # no merges: each special is one token, everything else one token per byte
    expected = []
    for span, is_special in split_special(text, [A, AB, EOT, EOT2]):
        expected += [span.encode()] if is_special else [bytes([b]) for b in span.encode()]
    assert pieces == expected


_OVERLAP_CACHE: dict[tuple[str, ...], bytepair.Tokenizer] = {}


def _overlap_tok(order: tuple[str, ...]) -> bytepair.Tokenizer:
    if order not in _OVERLAP_CACHE:
        _OVERLAP_CACHE[order] = bytepair.Tokenizer(BYTES, [], special_tokens=order)
    return _OVERLAP_CACHE[order]


# ------------------------------------------------------------------------------ streaming


def test_encode_iterable_special_cut_at_chunk_boundary() -> None:
    # a special token that contains another one: the stream must not cut before the inner
    # one while the outer one is still incomplete at the end of the buffer
    outer = "<|a|>xx<|a|>yy"
    tok = bytepair.Tokenizer(BYTES, [], special_tokens=[A, outer])
    text = "q" * 70_000 + outer + "z"
    expected = [113] * 70_000 + [tok.special_tokens[outer], 122]
    assert tok.encode(text, allowed_special="all") == expected
    split = len(text) - len("yyz")
    got = list(tok.encode_iterable([text[:split], text[split:]], allowed_special="all"))
    assert got == expected


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=25)
@given(overlap_text.filter(bool), st.data())
def test_encode_iterable_overlapping_random_chunks(text: str, data: st.DataObject) -> None:
    tok = _overlap_tok(tuple(ORDERS[0]))
    long_text = text * (80_000 // len(text) + 1)
    points = sorted(set(data.draw(st.lists(st.integers(0, len(long_text)), max_size=40))))
    chunks = [long_text[a:b] for a, b in zip([0, *points], [*points, len(long_text)])]
    expected = tok.encode(long_text, allowed_special="all")
    assert list(tok.encode_iterable(chunks, allowed_special="all")) == expected


NESTED = [A, AB, EOT, EOT2, "<|a|>xx<|a|>yy"]  # the last holds <|a|> inside it
nested_text = st.lists(
    st.sampled_from([*NESTED, "<|a|>xx", "<|a|>yy", "xx", "yy", "<|a", "|>", "a\nb", "\n"]),
    max_size=20,
).map("".join)


@given(nested_text, st.data())
def test_encode_iterable_tiny_buffer_specials(text: str, data: st.DataObject) -> None:
    # white-box: shrink the streaming buffer (if the module has one) so that short texts are
    # cut after almost every chunk, right before special tokens
    tok = _overlap_tok(tuple(NESTED))
    points = sorted(set(data.draw(st.lists(st.integers(0, len(text)), max_size=20))))
    chunks = [text[a:b] for a, b in zip([0, *points], [*points, len(text)])]
    expected = tok.encode(text, allowed_special="all")
    assert expected == ReferenceTokenizer(tok.vocab, [], NESTED).encode(text, "all")
    with mock.patch.object(bytepair.tokenizer, "_STREAM_CHUNK", 4, create=True):
        got = list(tok.encode_iterable(chunks, allowed_special="all"))
    assert got == expected


# ------------------------------------------------------------------------------ training


def test_trained_special_ids_and_no_cross_merges() -> None:
    # every ordinary span is one character, so there is no pair to merge: had training
    # deleted the specials and joined the spans, "xy" would be merged; had it counted their
    # text, "<|" and friends would be
    text = f"x{EOT}y{PAD}" * 50
    tok = bytepair.train(iter([text]), 300, special_tokens=[EOT, PAD])
    assert tok.special_tokens == {EOT: 256, PAD: 257}
    assert tok.merges == []
    assert tok.n_vocab == 258
    assert tok.encode(text, allowed_special="all")[:4] == [120, 256, 121, 257]


def test_trained_tinystories_specials(data_dir: Path) -> None:
    path = data_dir / "cs336" / "tinystories_sample.txt"
    text = path.read_text(encoding="utf-8")
    specials = [EOT, PAD, "<|a|>"]
    tok = bytepair.train(path, 600, special_tokens=specials)
    assert tok.special_tokens == {EOT: 256, PAD: 257, "<|a|>": 258}
    vocab = tok.vocab
    assert [vocab[i] for i in (256, 257, 258)] == [s.encode() for s in specials]
    # no learned token holds special-token text or spans one
    assert text.count(EOT) == 5
    for i in range(259, tok.n_vocab):
        assert b"<|" not in vocab[i] and b"|>" not in vocab[i], vocab[i]
    # the same merges as the reference, which cuts special tokens out before counting
    ref_vocab, ref_merges = reference_train_bpe(text, 600, special_tokens=specials)
    assert tok.merges == ref_merges
    assert vocab == ref_vocab
    ids = tok.encode(text, allowed_special="all")
    assert ids.count(256) == text.count(EOT)
    ref = ReferenceTokenizer(ref_vocab, ref_merges, special_tokens=specials)
    assert ids == ref.encode(text, "all")
    # the tokens between two <|endoftext|> are the encoding of that document alone
    docs = text.split(EOT)
    assert ids == _join_with([tok.encode_ordinary(d) for d in docs], 256)
    with pytest.raises(ValueError, match=re.escape(repr(EOT))):
        tok.encode(text)


def test_one_byte_special_tokens_train_save_load_and_construct(tmp_path: Path) -> None:
    # "[" and "\n" as special tokens: their ids come after the 256 bytes (as the CS336
    # reference vocabulary has them), the bytes 0x5b and 0x0a stay ordinary tokens, and the
    # tokenizer saves (it failed: "token b'[' appears twice"), loads and is rebuilt from
    # (vocab, merges) with the same ids
    text = "a [b] c [d]\n\n x [y]\n" * 20
    specials = ["[", "\n"]
    tok = bytepair.train(iter([text]), 280, special_tokens=specials)
    ref_vocab, ref_merges = reference_train_bpe(text, 280, special_tokens=specials)
    assert (tok.vocab, tok.merges) == (ref_vocab, ref_merges)
    assert tok.special_tokens == {"[": 256, "\n": 257}
    sample = "[x] \n y ["
    allowed = [256, 120, 93, 32, 257, 32, 121, 32, 256]  # worked out by hand: no merge applies
    ordinary = [91, 120, 93, 32, 10, 32, 121, 32, 91]
    assert tok.encode(sample, allowed_special="all") == allowed
    assert tok.encode(sample, disallowed_special=()) == ordinary
    path = tmp_path / "tok.json"
    tok.save(path)
    for again in (bytepair.load(path), bytepair.Tokenizer(ref_vocab, ref_merges, specials)):
        assert again.special_tokens == tok.special_tokens and again.vocab == tok.vocab
        assert again.encode(sample, allowed_special="all") == allowed
        assert again.encode(sample, disallowed_special=()) == ordinary
    # vocab.json (one id per token text) cannot hold both: a clear error, nothing written
    with pytest.raises(ValueError, match=r"token b'\[' appears twice, as ids 91 and 256"):
        tok.save(tmp_path / "gpt2", format="gpt2")
    assert not (tmp_path / "gpt2").exists()


def test_special_token_sharing_an_ordinary_id_round_trips_every_format(tmp_path: Path) -> None:
    # Tokenizer(vocab, merges, ["\n"]) makes the byte 0x0a (id 10) special too; the HF and
    # tiktoken files it wrote could not be read back (found by QA)
    trained = bytepair.train(iter(["a b\nc d\n"] * 10), 270)
    tok = bytepair.Tokenizer(trained.vocab, trained.merges, special_tokens=["\n"])
    assert tok.special_tokens == {"\n": 10}
    sample = "a\nb\n"
    want = tok.encode(sample, allowed_special="all")
    assert want == tok.encode(sample, disallowed_special=()) == [97, 10, 98, 10]
    loaded = []
    for fmt in ("native", "hf", "tiktoken"):
        path = tmp_path / f"tok-{fmt}"
        tok.save(path, format=fmt)
        extra = {"pattern": tok.pattern, "special_tokens": tok.special_tokens}
        loaded.append(bytepair.load(path, **(extra if fmt == "tiktoken" else {})))
    for again in loaded:
        assert again.special_tokens == {"\n": 10} and again.vocab == tok.vocab
        assert again.encode(sample, allowed_special="all") == want
    tokenizers = pytest.importorskip("tokenizers")
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "tok-hf"))
    assert hf.encode(sample, add_special_tokens=False).ids == want


def _join_with(parts: list[list[int]], sep: int) -> list[int]:
    out: list[int] = []
    for k, p in enumerate(parts):
        if k:
            out.append(sep)
        out.extend(p)
    return out


def test_special_token_already_in_vocab_keeps_id(data_dir: Path) -> None:
    # GPT-2's vocab.json has <|endoftext|> as an ordinary entry (50256): it keeps that id and
    # the new <|pad|> goes after the largest id; a special listed twice counts once
    tok = bytepair.Tokenizer.from_files(
        data_dir / "gpt2" / "vocab.json",
        data_dir / "gpt2" / "merges.txt",
        special_tokens=[PAD, EOT, PAD],
    )
    assert tok.special_tokens == {PAD: 50257, EOT: 50256}
    assert tok.decode([50257, 50256]) == PAD + EOT
    assert tok.encode(PAD + EOT, allowed_special="all") == [50257, 50256]


def test_special_token_ids_given_as_a_dict_are_kept(data_dir: Path) -> None:
    # {token: id}, as bytepair.load and Encoding take it: the ids given are the ids (the
    # constructor read the dict as a list of names: <|pad|> got 50257, not 50300), and match
    # tiktoken's Encoding with the same special tokens
    specials = {PAD: 50300, EOT: 50256}
    tok = bytepair.Tokenizer.from_files(
        data_dir / "gpt2" / "vocab.json", data_dir / "gpt2" / "merges.txt", special_tokens=specials
    )
    enc = oracles.tiktoken_with_specials(data_dir, specials)
    assert tok.special_tokens == specials and tok.n_vocab == enc.n_vocab == 50301
    text = f"a{PAD}b{EOT}"
    assert tok.encode(text, allowed_special="all") == [64, 50300, 65, 50256]
    assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
    assert tok.decode([50300, 50256]) == PAD + EOT
    # an id in a hole of the vocabulary is the token's; the id of its own bytes keeps the
    # byte an ordinary token too; a list still numbers new tokens after the largest id
    vocab = {**BYTES, 257: b"ab"}
    holed = bytepair.Tokenizer(vocab, [(b"a", b"b")], special_tokens={A: 256, "\n": 10})
    assert holed.special_tokens == {A: 256, "\n": 10} and holed.n_vocab == 258
    assert holed.encode(f"ab{A}\n", allowed_special="all") == [257, 256, 10]
    listed = bytepair.Tokenizer(vocab, [(b"a", b"b")], special_tokens=[A, "\n"])
    assert listed.special_tokens == {A: 258, "\n": 10}


@pytest.mark.parametrize(
    ("specials", "error", "message"),
    [
        # the id of another token: of an ordinary one, of a byte, of another special token
        (
            {PAD: 50255},
            ValueError,
            r"'<\|pad\|>' has id 50255, which is the id of the token b' gazed'",
        ),
        ({PAD: 10}, ValueError, r"'<\|pad\|>' has id 10, which is the id of the token b'\+'"),
        (
            {PAD: 50300, A: 50300},
            ValueError,
            r"'<\|a\|>' has id 50300, which is the id of special token '<\|pad\|>'",
        ),
        # an id that cannot be one
        ({PAD: -1}, ValueError, r"'<\|pad\|>' has id -1, out of range"),
        ({PAD: 2**32}, ValueError, r"'<\|pad\|>' has id 4294967296, out of range"),
        ({PAD: "50300"}, TypeError, r"'<\|pad\|>': its id must be an int, got '50300'"),
        ({PAD: True}, TypeError, r"'<\|pad\|>': its id must be an int, got True"),
    ],
)
def test_special_token_ids_given_as_a_dict_must_fit(
    data_dir: Path, specials: dict, error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=message):
        bytepair.Tokenizer.from_files(
            data_dir / "gpt2" / "vocab.json",
            data_dir / "gpt2" / "merges.txt",
            special_tokens=specials,
        )


def test_a_thousand_special_tokens(data_dir: Path, gpt2_enc: tiktoken.Encoding) -> None:
    # Models register hundreds of reserved tokens; every policy must still match tiktoken,
    # and a call allowing one token searches only for it (cheap to build, cached).
    specials = {f"<|reserved_{i}|>": 50257 + i for i in range(1000)}
    specials[EOT] = 50256
    tok = bytepair.Tokenizer.from_files(
        data_dir / "gpt2" / "vocab.json", data_dir / "gpt2" / "merges.txt", special_tokens=specials
    )
    assert tok.special_tokens == specials and tok.n_vocab == 51257
    enc = tiktoken.Encoding(
        "gpt2_1000",
        pat_str=gpt2_enc._pat_str,
        mergeable_ranks=gpt2_enc._mergeable_ranks,
        special_tokens=specials,
    )
    with open(data_dir / "cs336" / "tinystories_sample.txt", encoding="utf-8") as f:
        story = f.read(100_000)
    text = story.replace(". ", ". <|reserved_7|>").replace("\n", "<|reserved_999|>\n")
    text += "<|reserved_1000|><|reserved_|><|endoftext|>"
    assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
    one = {"<|reserved_7|>"}
    got = tok.encode(text, allowed_special=one, disallowed_special=())
    assert got == enc.encode(text, allowed_special=one, disallowed_special=())
    assert got.count(50264) == text.count("<|reserved_7|>") > 0
    with pytest.raises(ValueError, match="reserved_999"):
        tok.encode(text, allowed_special=one)
    assert (
        tok.encode_batch([text] * 3, allowed_special="all")
        == [enc.encode(text, allowed_special="all")] * 3
    )


@pytest.mark.parametrize(("bad", "error"), [("", ValueError), (None, TypeError), (3, TypeError)])
def test_empty_or_non_string_special_token_rejected(bad: object, error: type) -> None:
    # an empty string is a bad value, anything but a str a bad type (DESIGN.md §4)
    with pytest.raises(error, match="special tokens must be non-empty strings"):
        bytepair.Tokenizer(BYTES, [], special_tokens=[EOT, bad])  # type: ignore[list-item]


@pytest.mark.parametrize("bad", ["\ud800", "<|\udfff|>"])
def test_special_token_with_a_lone_surrogate_rejected(bad: str) -> None:
    # no UTF-8 bytes spell it, so no text could ever hold it: a ValueError, not an encode error
    with pytest.raises(ValueError, match="not valid Unicode text"):
        bytepair.Tokenizer(BYTES, [], special_tokens=[EOT, bad])


# Long texts are cut into parts (encode_batch on several threads; counting in chunks) right
# before a special token the splitting finds. Where special tokens overlap ("ab" and "bc" in
# "abc": leftmost wins; "<|a|>" inside "<|a|><|a|>": longest wins), a token found by a scan
# that starts mid-text may not be one the splitting finds; a cut there split "ab" in two.
OVERLAPPING = [(["ab", "bc"], "abc"), (["<|a|>", "<|a|><|a|>"], "<|a|><|a|><|a|>")]


@pytest.mark.parametrize(("specials", "hard"), OVERLAPPING)
def test_batch_parts_never_split_overlapping_special_tokens(specials: list[str], hard: str) -> None:
    # bytes only, no merges: an ordinary character is its byte's id
    tok = bytepair.Tokenizer({i: bytes([i]) for i in range(256)}, [], special_tokens=specials)
    # parts of 32 KB are cut in their second half: put the hard text across its start
    for n in range(16_380, 16_386):
        text = "x" * n + hard + "x" * 100_000
        expected = [
            i
            for span, special in split_special(text, specials)
            for i in ([tok.special_tokens[span]] if special else span.encode())
        ]
        assert tok.encode(text, allowed_special="all") == expected
        got = tok.encode_batch([text, text], allowed_special="all", num_threads=2)
        assert got == [expected, expected], n


@pytest.mark.parametrize(("specials", "hard"), OVERLAPPING)
def test_counting_chunks_never_split_overlapping_special_tokens(
    tmp_path: Path, specials: list[str], hard: str
) -> None:
    # counting cuts 1 MB chunks in their second half, at 512 KiB
    half = 1 << 19
    texts = [
        "x y " * ((half - n) // 4) + "x" * ((half - n) % 4) + hard + " z" * 300_000
        for n in range(1, 8)
    ]
    path = tmp_path / "corpus.txt"
    for text in texts:
        path.write_text(text, encoding="utf-8")
        want = count_pretokens([text], special_tokens=specials)
        for source in ([str(path)], iter([text])):
            got = bytepair.count(source, special_tokens=specials, threads=2)
            assert dict(got.items()) == dict(want)


@pytest.mark.parametrize("text", ["x" + NOPE + "y", "\ud800" + EOT, "a" + EOT + "b" + PAD])
def test_policies_given_as_iterators_read_as_sets(
    gpt2: bytepair.Tokenizer, gpt2_enc: tiktoken.Encoding, text: str
) -> None:
    # every encode method reads the policies more than once: given as a one-shot iterator,
    # disallowed_special was found empty by the second read and its text encoded (QA)
    policies = [
        {"disallowed_special": [NOPE, EOT]},
        {"allowed_special": [EOT], "disallowed_special": ()},
        {"allowed_special": [EOT]},
    ]
    methods = [
        *_every_encode(gpt2),
        lambda t, **kw: list(gpt2.encode_iterable([t[:2], t[2:]], **kw)),
    ]

    def result(encode: Callable[..., object], **policy: object) -> object:
        got = outcome(encode, text, **policy)  # type: ignore[arg-type]
        return got.tolist() if hasattr(got, "tolist") else got  # (numpy)

    for policy in policies:
        for encode in methods:
            want = result(encode, **{k: set(v) for k, v in policy.items()})
            assert result(encode, **{k: iter(v) for k, v in policy.items()}) == want
            assert result(encode, **{k: (n for n in v) for k, v in policy.items()}) == want
    refused = {"disallowed_special": [NOPE, EOT]}
    assert outcome(gpt2.encode, text, **refused) == outcome(gpt2_enc.encode, text, **refused)
    assert outcome(gpt2.encode, text, disallowed_special=iter([NOPE, EOT])) == outcome(
        gpt2_enc.encode, text, disallowed_special=iter([NOPE, EOT])
    )


def test_encode_to_file_reads_an_iterator_of_allowed_names_once(
    gpt2: bytepair.Tokenizer, tmp_path: Path
) -> None:
    # it checked the names (reading the iterator) and then encoded with none allowed
    import numpy as np

    src = tmp_path / "in.txt"
    src.write_text("a" + EOT + "b\n", encoding="utf-8")
    runs = {"set": {EOT}, "iter": iter([EOT])}
    got = {}
    for name, allowed in runs.items():
        out = tmp_path / f"{name}.npy"
        bytepair.encode_to_file(gpt2, [src], out, allowed_special=allowed, progress=False)
        got[name] = np.load(out).tolist()
    assert got["iter"] == got["set"] == gpt2.encode("a" + EOT + "b\n", allowed_special={EOT})
