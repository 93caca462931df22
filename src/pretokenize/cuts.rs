//! Where a text can be cut so that its pieces, pre-tokenized one by one, give exactly the
//! pre-tokens of the whole: right before a special token that is split out, or (for the
//! preset patterns only) right after a `\n` that sits between two non-whitespace
//! characters, the second not `/` (no preset joins a newline to a following non-space
//! other than o200k's `[\r\n/]*`, and a lone newline ends the same way at a chunk end as
//! before a letter). For cl100k and o200k the character before the `\n` may be whitespace
//! too (`\r\n` line ends): their `\s*[\r\n]+` ends a whitespace run at its last newline,
//! at a chunk end as before a letter; and the character after it may be whitespace too, if
//! a non-space character follows before any `\r` or `\n` (an indented line), and no special
//! token that is split out may start in that whitespace or at that character (before one,
//! cl100k's `\s++$` takes the newline and the whitespace whole). For GPT-2's
//! pattern (whose `\s+(?!\S)` does not end a `\r\n` run that way) the place right before a
//! newline that follows a non-space character is a cut instead: no GPT-2 pre-token holds a
//! non-space character and then whitespace. A custom pattern might join anything, so its
//! text is cut only before special tokens. A cut never falls inside a UTF-8 sequence.
//! Training cuts corpus chunks here; encoding cuts one long text into parts for several
//! threads (and to answer Ctrl-C between them).

use super::{Pretokenizer, SpecialMatcher};

fn is_space_before(bytes: &[u8]) -> bool {
    // The last character of `bytes`, decoded leniently: whitespace per Unicode White_Space,
    // the definition of `\s` in both fancy-regex and Python's `regex`.
    let start = bytes.iter().rposition(|&b| (b & 0xC0) != 0x80).unwrap_or(0);
    match std::str::from_utf8(&bytes[start..]) {
        Ok(s) => s.chars().next().is_none_or(char::is_whitespace),
        Err(_) => true,
    }
}

/// Whether the text may be cut right after a newline that `rest` follows: `rest` starts
/// with a non-space character other than `/`, or, where whitespace runs end at their last
/// newline (`after_space`: cl100k, o200k), with whitespace that holds no `\r` or `\n` and
/// then a non-space character. There `\s*[\r\n]+` ends at this newline, and the
/// whitespace starts the next pre-token just as at a chunk's start (indented code has few
/// other cuts: a stretch of 1.5 MB of the Python corpus had none). A character cut off by
/// the end of `rest` is no cut. Returns where that non-space character is in `rest`.
fn cut_after_newline(rest: &[u8], after_space: bool) -> Option<usize> {
    let mut i = 0;
    loop {
        let b = *rest.get(i)?;
        let len = match b {
            0x00..=0x7F => 1,
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => return None,
        };
        let c = rest
            .get(i..i + len)
            .and_then(|s| std::str::from_utf8(s).ok())
            .and_then(|s| s.chars().next())?;
        if c == '\r' || c == '\n' {
            return None;
        }
        if !c.is_whitespace() {
            // (o200k's `[\r\n/]*` joins a `/` right after the newline to it)
            return (i > 0 || c != '/').then_some(i);
        }
        if !after_space {
            return None;
        }
        i += len;
    }
}

/// Whether a special token that is split out may start in `rest[..=c]`, the whitespace
/// after a newline and the non-space character at `c` (or beyond the end of `rest`, a
/// window of the text). Then the whitespace run from the newline may end the text before
/// that token, where cl100k's `\s++$` takes it whole with the newline: a cut after the
/// newline would split it (QA: `x\n  <|endoftext|>` gave `\n`, `  ` where tiktoken gives
/// `\n  `). Only the whitespace runs of cuts after whitespace are concerned: a newline
/// right before a token ends the same way with or without the cut.
fn special_may_end_run(rest: &[u8], c: usize, specials: Option<&SpecialMatcher>) -> bool {
    specials.is_some_and(|m| (0..=c).any(|j| m.may_start(&rest[j..])))
}

/// The last safe cut in `buf` (see the module docs), at or after `min`, or None. `buf` must
/// begin at a safe cut or at the start of the text.
pub fn find_cut(buf: &[u8], min: usize, cuts: &Cuts) -> Option<usize> {
    let specials = cuts.specials;
    let mut newline_cut = None;
    let mut end = if cuts.at_newlines { buf.len() } else { min };
    while let Some(i) = memchr_rev(b'\n', &buf[min..end]).map(|i| i + min) {
        let p = i + 1;
        if p < buf.len()
            && i > 0
            && (cuts.after_space || !is_space_before(&buf[..i]))
            && cut_after_newline(&buf[p..], cuts.after_space)
                .is_some_and(|c| c == 0 || !special_may_end_run(&buf[p..], c, specials))
        {
            newline_cut = Some(p);
            break;
        }
        end = i;
        if cuts.before_newlines {
            // before the run of `\r` and `\n` that holds this newline, if a non-space
            // character comes first (the newlines inside the run are no cut either way)
            let mut j = i;
            while j > min && matches!(buf[j - 1], b'\r' | b'\n') {
                j -= 1;
            }
            if j > 0 && !matches!(buf[j - 1], b'\r' | b'\n') && !is_space_before(&buf[..j]) {
                newline_cut = Some(j);
                break;
            }
            end = j;
        }
    }
    // A cut before a special token is exact for any pattern, if the token is one that
    // splitting finds: the scan starts at the start of `buf`, a cut or the text's start,
    // where no special token is open.
    let tail = newline_cut.unwrap_or(min).max(min);
    let special_cut = specials
        .and_then(|m| m.last_start(buf, tail))
        .filter(|&s| s > 0);
    match (newline_cut, special_cut) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// What a chunk may be cut at.
pub struct Cuts<'a> {
    specials: Option<&'a SpecialMatcher>,
    at_newlines: bool,
    /// A newline after whitespace is a cut too (see the module docs).
    after_space: bool,
    /// So is the place before a newline that follows a non-space character (GPT-2's
    /// pattern, see `Pretokenizer::cuts_before_newlines`).
    before_newlines: bool,
}

impl<'a> Cuts<'a> {
    /// Cuts for text pre-tokenized by `pretok` after splitting out `specials` (every
    /// special token that will be split out, and no other; None: no special token is).
    pub fn new(pretok: &Pretokenizer, specials: Option<&'a SpecialMatcher>) -> Self {
        // a newline cut could fall inside a special token that holds a newline
        let special_newline = specials.is_some_and(|m| m.tokens().iter().any(|t| t.contains('\n')));
        // (and a cut before a `\r` could fall inside one that holds a `\r`)
        let special_cr = specials.is_some_and(|m| m.tokens().iter().any(|t| t.contains('\r')));
        let at_newlines = pretok.is_preset() && !special_newline;
        Cuts {
            specials,
            at_newlines,
            after_space: pretok.newline_ends_space_runs(),
            before_newlines: at_newlines && !special_cr && pretok.cuts_before_newlines(),
        }
    }
}

fn memchr_rev(needle: u8, hay: &[u8]) -> Option<usize> {
    hay.iter().rposition(|&b| b == needle)
}

/// A cut in `buf` (which begins at a safe cut) at or after `from`, near the first one: the
/// rest is searched in windows that double, each from where the last one ended, so a long
/// stretch without a cut costs a scan of about twice its length and the part it makes is
/// at most about twice as long as it must be. (One backward search over all the rest found
/// the last cut of the whole text: everything after a stretch without cuts became one part,
/// on one thread.)
fn first_cut_after(buf: &[u8], mut from: usize, cuts: &Cuts) -> Option<usize> {
    while from < buf.len() {
        let end = (2 * from).min(buf.len());
        if let Some(c) = find_cut(&buf[..end], from, cuts) {
            return Some(c);
        }
        from = end;
    }
    None
}

/// Cuts `text` into chunks of about `target` bytes at safe places.
pub fn split_text<'t>(text: &'t str, cuts: &Cuts, target: usize, out: &mut Vec<&'t str>) {
    let bytes = text.as_bytes();
    let mut start = 0;
    while bytes.len() - start > target {
        let rest = &bytes[start..];
        // the last cut in the second half of the window, else the first one after it
        let cut = find_cut(&rest[..target], target / 2, cuts)
            .or_else(|| first_cut_after(rest, target, cuts))
            .map(|c| c + start);
        match cut {
            Some(c) if c > start => {
                out.push(&text[start..c]);
                start = c;
            }
            _ => break,
        }
    }
    if start < bytes.len() {
        out.push(&text[start..]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pretokenize::Span;

    /// The special tokens `split` finds in `text`, as (start, index).
    fn specials_in(m: &SpecialMatcher, text: &str) -> Vec<(usize, usize)> {
        let base = text.as_ptr() as usize;
        let mut at = 0;
        let mut out = Vec::new();
        for span in m.split(text) {
            match span {
                Span::Text(t) => at = t.as_ptr() as usize - base + t.len(),
                Span::Special(i) => {
                    out.push((at, i));
                    at += m.tokens()[i].len();
                }
            }
        }
        out
    }

    #[test]
    fn every_cut_splits_exactly_as_the_whole() {
        // random texts of the characters that decide pre-token ends around newlines (CRLF,
        // lone CR, spaces, tabs, other whitespace, '/', punctuation, a digit, a non-ASCII
        // letter), cut into small parts: the parts' pre-tokens are the whole text's, for
        // every preset
        let alphabet = [
            "a", "B", " ", "\n", "\r", "\t", "/", ".", "1", "é", "\r\n", "\u{a0}", "\n    ",
            "\u{3000}", "\u{85}", "\u{b}",
        ];
        for preset in ["gpt2", "cl100k", "o200k"] {
            let pretok = Pretokenizer::new(preset).unwrap();
            let cuts = Cuts::new(&pretok, None);
            let mut seed = 12345u64;
            let mut cut_at_crlf = 0;
            let mut cut_before_newline = 0;
            let mut cut_before_space = 0;
            for _ in 0..3000 {
                let text = random_text(&mut seed, &alphabet, 60);
                let whole = pieces(&pretok, &text);
                let mut parts = Vec::new();
                split_text(&text, &cuts, 8, &mut parts);
                assert_eq!(parts.concat(), text);
                let joined: Vec<&str> = parts.iter().flat_map(|p| pieces(&pretok, p)).collect();
                assert_eq!(joined, whole, "{preset} {text:?} cut as {parts:?}");
                let cut = &parts[..parts.len() - 1]; // (the last part ends with the text)
                cut_at_crlf += cut.iter().filter(|p| p.ends_with("\r\n")).count();
                cut_before_newline += parts[1..]
                    .iter()
                    .filter(|p| p.starts_with(['\r', '\n']))
                    .count();
                cut_before_space += parts[1..]
                    .iter()
                    .filter(|p| {
                        p.starts_with(|c: char| c.is_whitespace() && c != '\r' && c != '\n')
                    })
                    .count();
            }
            // the cuts each pattern allows are taken (and only those)
            assert_eq!(cut_at_crlf > 0, preset != "gpt2", "{preset}");
            assert_eq!(cut_before_newline > 0, preset == "gpt2", "{preset}");
            assert_eq!(cut_before_space > 0, preset != "gpt2", "{preset}");
        }
    }

    fn pieces<'t>(pretok: &Pretokenizer, text: &'t str) -> Vec<&'t str> {
        let mut out = Vec::new();
        pretok.for_each(text, |p| out.push(p)).unwrap();
        out
    }

    /// The special tokens and pre-tokens of `text`, special tokens split out first.
    fn spans<'t>(pretok: &Pretokenizer, m: &SpecialMatcher, text: &'t str) -> Vec<Span<'t>> {
        let mut out = Vec::new();
        for span in m.split(text) {
            match span {
                Span::Text(t) => out.extend(pieces(pretok, t).into_iter().map(Span::Text)),
                special => out.push(special),
            }
        }
        out
    }

    /// `n` strings of `alphabet` picked at random (a small LCG: `seed` goes on).
    fn random_text(seed: &mut u64, alphabet: &[&str], n: usize) -> String {
        let mut text = String::new();
        for _ in 0..n {
            *seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            text.push_str(alphabet[(*seed >> 33) as usize % alphabet.len()]);
        }
        text
    }

    /// `text` cut into parts of each `target` size: the parts' special tokens and
    /// pre-tokens, one part after another, are the whole text's.
    fn assert_parts_keep_spans(
        pretok: &Pretokenizer,
        m: &SpecialMatcher,
        cuts: &Cuts,
        text: &str,
        targets: &[usize],
    ) {
        let whole = spans(pretok, m, text);
        for &target in targets {
            let mut parts = Vec::new();
            split_text(text, cuts, target, &mut parts);
            assert_eq!(parts.concat(), text);
            let joined: Vec<Span> = parts.iter().flat_map(|p| spans(pretok, m, p)).collect();
            assert_eq!(joined, whole, "{text:?} cut as {parts:?}");
        }
    }

    #[test]
    fn every_cut_splits_exactly_as_the_whole_around_special_tokens() {
        // (QA: with cl100k, "x\n  <|endoftext|>" was cut after the newline, and `\s++$`
        // took "\n" and "  " where the whole text gives "\n  ") random texts of newlines,
        // whitespace and special tokens (one starting with a space, one with a letter),
        // cut into small parts: each part's special tokens and pre-tokens are the whole's,
        // for every preset
        let specials: Vec<String> = ["<|e|>", " <s>", "ab"].map(String::from).to_vec();
        let m = SpecialMatcher::new(&specials).unwrap();
        let alphabet = [
            "x", "a", "b", " ", "  ", "\n", "\r\n", "\t", "/", "é", "\n    ", "<|e|>", " <s>",
            "<|e", "<",
        ];
        for preset in ["gpt2", "cl100k", "o200k"] {
            let pretok = Pretokenizer::new(preset).unwrap();
            let cuts = Cuts::new(&pretok, Some(&m));
            let mut seed = 777u64;
            for case in 0..4000 {
                let text = if case < 40 {
                    // the report's text, its special token at every place of a window
                    format!("{}x\n  <|e|> tail", "y".repeat(case))
                } else {
                    random_text(&mut seed, &alphabet, 50)
                };
                assert_parts_keep_spans(&pretok, &m, &cuts, &text, &[6, 8, 12]);
            }
        }
    }

    #[test]
    fn no_cut_inside_a_special_token_longer_than_the_window() {
        // (QA: tokens `"x" * 200_000` and `xx`; a window that ended inside the long one
        // found `xx` there and cut the text inside it) random texts of x runs around
        // tokens longer than the windows, and of prefixes of each other, cut into small
        // parts: each part's special tokens and pre-tokens are the whole's
        let specials: Vec<String> =
            ["x".repeat(20), "xx".into(), "<|e|>".into(), "y".repeat(9)].to_vec();
        let m = SpecialMatcher::new(&specials).unwrap();
        let alphabet = ["x", "xx", "xxxxxxx", "y", "yyyy", " ", "\n", "<|e|>", "a"];
        let mut seed = 4242u64;
        for preset in ["gpt2", "cl100k", "o200k"] {
            let pretok = Pretokenizer::new(preset).unwrap();
            let cuts = Cuts::new(&pretok, Some(&m));
            for _ in 0..3000 {
                let text = random_text(&mut seed, &alphabet, 40);
                assert_parts_keep_spans(&pretok, &m, &cuts, &text, &[6, 8, 12, 30]);
            }
        }
    }

    #[test]
    fn no_cut_before_a_newline_inside_a_special_token() {
        // GPT-2 text with \r\n line ends is cut before them; not when a special token
        // that is split out holds a \r (a cut there could fall inside it): then only
        // before the special tokens themselves
        let pretok = Pretokenizer::new("gpt2").unwrap();
        let text = "word\r\n".repeat(400);
        let mut parts = Vec::new();
        split_text(&text, &Cuts::new(&pretok, None), 100, &mut parts);
        assert!(parts.len() > 20 && parts[1..].iter().all(|p| p.starts_with('\r')));
        let m = SpecialMatcher::new(&["d\r".to_string()]).unwrap();
        let mut parts = Vec::new();
        split_text(&text, &Cuts::new(&pretok, Some(&m)), 100, &mut parts);
        assert!(parts.len() > 20 && parts[1..].iter().all(|p| p.starts_with("d\r")));
    }

    #[test]
    fn a_stretch_without_cuts_does_not_join_the_rest() {
        // a stretch of 10 windows without a newline, then short lines: the lines after it
        // are still cut into parts of about the target, not left in one part
        let pretok = Pretokenizer::new("cl100k").unwrap();
        let cuts = Cuts::new(&pretok, None);
        let target = 1000;
        let text = format!("{}{}", "word ".repeat(2000), "a line\n".repeat(5000));
        let mut parts = Vec::new();
        split_text(&text, &cuts, target, &mut parts);
        assert_eq!(parts.concat(), text);
        assert!(parts[0].len() >= 10_000 && parts[0].len() <= 2 * 10_000 + 2 * target);
        assert!(
            parts[1..].iter().all(|p| p.len() <= target),
            "{:?}",
            parts.iter().map(|p| p.len()).collect::<Vec<_>>()
        );
    }

    #[test]
    fn cuts_never_fall_inside_overlapping_special_tokens() {
        // "bc" starts inside "ab" in "abc"; "<|a|>" inside "<|a|><|a|>"; wherever the
        // window's second half begins, a cut is only ever before a token split finds
        let pretok = Pretokenizer::new("gpt2").unwrap();
        for (specials, hard) in [
            (vec!["ab", "bc"], "abc"),
            (vec!["<|a|>", "<|a|><|a|>"], "<|a|><|a|>"),
            (vec!["ab", "bc", "cd"], "abcd\nabcd"),
        ] {
            let specials: Vec<String> = specials.into_iter().map(String::from).collect();
            let m = SpecialMatcher::new(&specials).unwrap();
            let cuts = Cuts::new(&pretok, Some(&m));
            for offset in 0..24 {
                let text = format!("{}{hard}{}", "x".repeat(offset), "x".repeat(40));
                let mut parts = Vec::new();
                split_text(&text, &cuts, 16, &mut parts);
                assert_eq!(parts.concat(), text);
                let mut got = Vec::new();
                let mut start = 0;
                for p in &parts {
                    got.extend(specials_in(&m, p).into_iter().map(|(s, i)| (s + start, i)));
                    start += p.len();
                }
                assert_eq!(got, specials_in(&m, &text), "{specials:?} {parts:?}");
            }
        }
    }
}
