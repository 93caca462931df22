//! Pre-tokenization: split text on special tokens, then split each ordinary span into
//! pre-tokens with the pattern. Merges never cross a pre-token boundary (DESIGN.md §2).

use aho_corasick::{AhoCorasick, MatchKind};
use fancy_regex::Regex;

use crate::{Error, Result};

/// GPT-2's pattern (also r50k_base / p50k_base), as tiktoken writes it.
pub const GPT2_PATTERN: &str =
    r"'(?:[sdmt]|ll|ve|re)| ?\p{L}++| ?\p{N}++| ?[^\s\p{L}\p{N}]++|\s++$|\s+(?!\S)|\s";

/// cl100k_base's pattern (GPT-3.5 / GPT-4), as tiktoken writes it.
pub const CL100K_PATTERN: &str = r"'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s";

/// o200k_base's pattern (GPT-4o), as tiktoken writes it.
pub const O200K_PATTERN: &str = concat!(
    r"[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?",
    r"|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+",
);

/// The pattern of a preset name (`gpt2`, `r50k`, `p50k`, `cl100k`, `o200k`); any other
/// string is taken to be a regex itself.
pub fn resolve_pattern(name_or_regex: &str) -> &str {
    match name_or_regex {
        "gpt2" | "r50k" | "r50k_base" | "p50k" | "p50k_base" => GPT2_PATTERN,
        "cl100k" | "cl100k_base" => CL100K_PATTERN,
        "o200k" | "o200k_base" => O200K_PATTERN,
        other => other,
    }
}

/// Splits text into pre-tokens with a compiled pattern.
#[derive(Debug, Clone)]
pub struct Pretokenizer {
    regex: Regex,
    preset: bool,
}

impl Pretokenizer {
    /// Compiles a preset name or a regex (Python `regex` syntax: `\p{L}`, lookahead,
    /// possessive quantifiers).
    pub fn new(pattern: &str) -> Result<Self> {
        let pattern = resolve_pattern(pattern);
        let regex = fancy_regex::RegexBuilder::new(pattern)
            // Long runs (a million spaces) need more than the default budget; the
            // presets backtrack at most one character per match, so this never explodes.
            .backtrack_limit(100_000_000)
            .build()
            .map_err(|e| Error::InvalidPattern {
                pattern: pattern.to_string(),
                message: e.to_string(),
            })?;
        let preset = [GPT2_PATTERN, CL100K_PATTERN, O200K_PATTERN].contains(&pattern);
        Ok(Self { regex, preset })
    }

    /// Whether this is one of the preset patterns (whose pre-tokens never join a newline
    /// to a following non-space character, which lets corpus chunks be cut there).
    pub fn is_preset(&self) -> bool {
        self.preset
    }

    /// Calls `f` on each pre-token of `text`, in order. Empty matches are skipped (a
    /// custom pattern may match the empty string; it carries no bytes).
    pub fn for_each<'t>(&self, text: &'t str, mut f: impl FnMut(&'t str)) -> Result<()> {
        for m in self.regex.find_iter(text) {
            let m = m.map_err(|e| Error::PatternFailed(e.to_string()))?;
            if !m.as_str().is_empty() {
                f(m.as_str());
            }
        }
        Ok(())
    }
}

/// Finds special tokens in text: leftmost match, and the longest where several start at
/// the same position (so `<|endoftext|><|endoftext|>`, if registered, beats `<|endoftext|>`).
/// A piece of text after special-token splitting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Span<'t> {
    /// Ordinary text, to be pre-tokenized.
    Text(&'t str),
    /// The special token with this index (into the matcher's tokens).
    Special(usize),
}

#[derive(Debug, Clone)]
pub struct SpecialMatcher {
    automaton: Option<AhoCorasick>,
    tokens: Vec<String>,
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
            Some(
                AhoCorasick::builder()
                    .match_kind(MatchKind::LeftmostLongest)
                    .build(tokens)
                    .map_err(|e| {
                        Error::Invalid(format!("cannot build special-token matcher: {e}"))
                    })?,
            )
        };
        Ok(Self {
            automaton,
            tokens: tokens.to_vec(),
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

    /// Start of the last special token that begins in `text`, if any. Used to cut
    /// corpus chunks at a place where the split is exact.
    pub fn last_start(&self, text: &str) -> Option<usize> {
        self.automaton
            .as_ref()?
            .find_iter(text)
            .last()
            .map(|m| m.start())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(p: &Pretokenizer, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        p.for_each(text, |s| out.push(s.to_string())).unwrap();
        out
    }

    #[test]
    fn gpt2_splits_contractions_and_spaces() {
        let p = Pretokenizer::new("gpt2").unwrap();
        assert_eq!(pieces(&p, "I'm  here"), ["I", "'m", " ", " here"]);
        assert_eq!(pieces(&p, "a\n\n\nb"), ["a", "\n\n", "\n", "b"]);
    }

    #[test]
    fn cl100k_keeps_space_newline() {
        let p = Pretokenizer::new("cl100k").unwrap();
        assert_eq!(
            pieces(&p, "This is an \nexample"),
            ["This", " is", " an", " \n", "example"]
        );
        assert_eq!(pieces(&p, "12345"), ["123", "45"]);
    }

    #[test]
    fn presets_compile() {
        for name in ["gpt2", "cl100k", "o200k"] {
            Pretokenizer::new(name).unwrap();
        }
        assert!(Pretokenizer::new("(").is_err());
    }

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
}
