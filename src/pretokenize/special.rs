//! Special tokens: found in text before pre-tokenization, leftmost first, and the longest
//! where several start at one position (DESIGN.md §2).

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

use crate::{Error, Result};

/// A piece of text after special-token splitting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span<'t> {
    /// Ordinary text, to be pre-tokenized.
    Text(&'t str),
    /// The special token with this index (into the matcher's tokens).
    Special(usize),
}

/// Special tokens of more bytes than this in all are searched with an NFA, never a DFA: the
/// crate picks a DFA for a few tokens, whatever their length, and building one took time
/// growing with the square of a token's length where the token repeats one character
/// (found by QA: `"x" * 30_000`, 3.6 s; `"x" * 1_000_000` did not finish, and Ctrl-C
/// waited; the NFA: 0.002 s and 0.1 s). At this size the DFA takes 0.07 s at most.
const DFA_MAX_BYTES: usize = 4096;

/// Special tokens longer than this (in bytes) are no place to cut a text
/// ([`SpecialMatcher::last_start`]).
const LONGEST_CUT: usize = 256;

#[derive(Debug, Clone)]
pub struct SpecialMatcher {
    automaton: Option<AhoCorasick>,
    tokens: Vec<String>,
    /// The longest token's length in bytes (0 for none).
    longest: usize,
}

impl SpecialMatcher {
    /// Builds a matcher over `tokens`; an empty special token is rejected.
    pub fn new(tokens: &[String]) -> Result<Self> {
        if tokens.iter().any(|t| t.is_empty()) {
            return Err(Error::Invalid("a special token must not be empty".into()));
        }
        let automaton = if tokens.is_empty() {
            None
        } else {
            let bytes: usize = tokens.iter().map(String::len).sum();
            Some(
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostLongest)
                    .kind((bytes > DFA_MAX_BYTES).then_some(AhoCorasickKind::ContiguousNFA))
                    .build(tokens)
                    .map_err(|e| {
                        Error::Invalid(format!("cannot build special-token matcher: {e}"))
                    })?,
            )
        };
        Ok(Self {
            automaton,
            tokens: tokens.to_vec(),
            longest: tokens.iter().map(String::len).max().unwrap_or(0),
        })
    }

    /// The tokens this matcher looks for, in the order given.
    pub fn tokens(&self) -> &[String] {
        &self.tokens
    }

    /// The first special token in `text`, as (start byte, end byte, index into tokens).
    pub fn find(&self, text: &str) -> Option<(usize, usize, usize)> {
        let m = self.automaton.as_ref()?.find(text)?;
        Some((m.start(), m.end(), m.pattern().as_usize()))
    }

    /// Splits `text` into ordinary spans and special tokens, in text order. Empty ordinary
    /// spans are not yielded.
    pub fn split<'m, 't>(&'m self, text: &'t str) -> impl Iterator<Item = Span<'t>> + 'm
    where
        't: 'm,
    {
        let mut matches = self.automaton.as_ref().map(|ac| ac.find_iter(text));
        let mut last = 0;
        let mut pending: Option<Span<'t>> = None;
        std::iter::from_fn(move || {
            if let Some(s) = pending.take() {
                return Some(s);
            }
            if let Some(m) = matches.as_mut().and_then(|it| it.next()) {
                let special = Span::Special(m.pattern().as_usize());
                let before = &text[last..m.start()];
                last = m.end();
                if before.is_empty() {
                    return Some(special);
                }
                pending = Some(special);
                return Some(Span::Text(before));
            }
            matches = None;
            if last < text.len() {
                let rest = &text[last..];
                last = text.len();
                return Some(Span::Text(rest));
            }
            None
        })
    }

    /// The first position `p` (with `allow(p)`) from which the end of `text` is a proper
    /// prefix of one of the tokens: a special token may be arriving there, so a stream
    /// must not cut after it.
    pub fn partial_at_end(&self, text: &str, allow: impl Fn(usize) -> bool) -> Option<usize> {
        let bytes = text.as_bytes();
        if self.tokens.is_empty() {
            return None;
        }
        let from = bytes.len().saturating_sub(self.longest - 1);
        (from..bytes.len()).find(|&p| {
            let tail = &bytes[p..];
            text.is_char_boundary(p)
                && allow(p)
                && self
                    .tokens
                    .iter()
                    .any(|t| t.len() > tail.len() && t.as_bytes().starts_with(tail))
        })
    }

    /// Whether one of the tokens may start at the start of `bytes`, a window of a text:
    /// `bytes` begins with it, or is cut off inside it (empty `bytes`: anything may follow).
    pub fn may_start(&self, bytes: &[u8]) -> bool {
        self.tokens.iter().any(|t| {
            let n = t.len().min(bytes.len());
            t.as_bytes()[..n] == bytes[..n]
        })
    }

    /// (start, end) of every special token in `text`, in order.
    pub fn find_all(&self, text: &str) -> Vec<(usize, usize)> {
        match &self.automaton {
            Some(ac) => ac.find_iter(text).map(|m| (m.start(), m.end())).collect(),
            None => Vec::new(),
        }
    }

    /// Start of the last special token that `split` finds in `text` at or after byte
    /// `from`, if any: a place where text can be cut exactly. `text` must begin where no
    /// special token is open (a scan that began later could start inside one: `bc` inside
    /// `abc` when `ab` is a token too, or `<|a|>` inside a longer `<|a|><|a|>`). `text` is a
    /// window of a longer text: only a start that the longest token fits after counts, so
    /// that what the text holds beyond the window cannot change the matches up to it (with
    /// QA's tokens `"x" * 200_000` and `xx`, a window that ended inside the long one
    /// found `xx` there, and the text was cut inside it: 100,004 ids instead of 5).
    ///
    /// With a token longer than `LONGEST_CUT` there is no such place: to find the longest
    /// match at each place the search reads ahead up to the longest token's length, and
    /// with a million-byte token of one character repeated, a text of that character took
    /// minutes to search here window after window (the split of the whole text finds the
    /// long token in one pass).
    pub fn last_start(&self, text: &[u8], from: usize) -> Option<usize> {
        if self.longest > LONGEST_CUT {
            return None;
        }
        let last = text.len().checked_sub(self.longest)?;
        self.automaton
            .as_ref()?
            .find_iter(text)
            .map(|m| m.start())
            .take_while(|&s| s <= last)
            .filter(|&s| s >= from)
            .last()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longest_special_wins() {
        let toks = vec!["<|a|>".to_string(), "<|a|><|a|>".to_string()];
        let m = SpecialMatcher::new(&toks).unwrap();
        let seen: Vec<Span> = m.split("x<|a|><|a|>y<|a|>").collect();
        use Span::*;
        assert_eq!(seen, [Text("x"), Special(1), Text("y"), Special(0)]);
        assert_eq!(m.split("<|a|>").collect::<Vec<_>>(), [Special(0)]);
        assert_eq!(m.split("").count(), 0);
        assert!(SpecialMatcher::new(&["".to_string()]).is_err());
    }

    /// Long special tokens of one repeated character, on both sides of `DFA_MAX_BYTES`,
    /// build (a million-byte one never finished with a DFA) and match leftmost-longest.
    #[test]
    fn long_repetitive_specials() {
        for n in [DFA_MAX_BYTES - 2, DFA_MAX_BYTES + 1, 1_000_000] {
            let toks = vec!["x".repeat(n), "xx".to_string()];
            let m = SpecialMatcher::new(&toks).unwrap();
            let text = format!("a{}b", "x".repeat(n + 3));
            use Span::*;
            let want = [Text("a"), Special(0), Special(1), Text("xb")];
            assert_eq!(m.split(&text).collect::<Vec<_>>(), want, "{n}");
        }
    }
}
