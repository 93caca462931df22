//! Pre-tokenization: split text on special tokens, then split each ordinary span into
//! pre-tokens with the pattern. Merges never cross a pre-token boundary (DESIGN.md §2).

mod classes;
pub mod cuts;
mod fast;
mod special;
mod windows;

use fancy_regex::Regex;

pub use fast::Preset;
pub use special::{Span, SpecialMatcher};

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

/// Builds what every pattern's first use would build (the table of character classes the
/// scanners read, 2 MiB): done when the module is imported (`py/mod.rs`), where a fork
/// waits for it, and not in a first encode that another thread's fork could interrupt (the
/// child's lock then stayed taken for ever; found by QA).
pub fn warm_up() {
    classes::Classes::get();
}

/// Splits text into pre-tokens with a compiled pattern.
#[derive(Debug, Clone)]
pub struct Pretokenizer {
    regex: Regex,
    /// The same pattern, never matching empty text (compiled with a custom pattern; `None` if
    /// fancy-regex cannot), to go on after an empty match as Python's `regex` does (see
    /// `for_each`).
    not_empty: std::sync::OnceLock<Option<Regex>>,
    pattern: String,
    /// The preset this pattern is, if any: then a hand-written scanner splits the text
    /// (identical output, several times faster than the regex).
    preset: Option<Preset>,
}

/// What is wrong with a pattern. fancy-regex hands most of a pattern to the regex crate,
/// whose error it reports only as "error parsing pattern 0": the syntax error inside says
/// what (its last line, after a drawing of the pattern it was given).
fn regex_error(e: &fancy_regex::Error) -> String {
    if let fancy_regex::Error::CompileError(c) = e {
        if let fancy_regex::CompileError::InnerError(inner) = c.as_ref() {
            if let Some(what) = inner.syntax_error().and_then(|s| {
                let s = s.to_string();
                s.lines()
                    .last()
                    .map(|l| l.trim_start_matches("error: ").to_string())
            }) {
                return what;
            }
        }
    }
    e.to_string()
}

/// `pattern` compiled never to match empty text.
fn not_empty_regex(pattern: &str) -> std::result::Result<Regex, fancy_regex::Error> {
    fancy_regex::RegexBuilder::new(pattern)
        .backtrack_limit(100_000_000)
        .find_not_empty(true)
        .build()
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
                message: regex_error(&e),
            })?;
        let preset = match pattern {
            GPT2_PATTERN => Some(Preset::Gpt2),
            CL100K_PATTERN => Some(Preset::Cl100k),
            O200K_PATTERN => Some(Preset::O200k),
            _ => None,
        };
        let not_empty = std::sync::OnceLock::new();
        if preset.is_none() {
            // a pattern that can match nothing but empty text would split no text into
            // pre-tokens (an error only once some text made it match): refused here
            // (regex-syntax knows the longest match of a pattern without lookaround, as
            // "(?:\b)+"; fancy-regex's own analysis catches others, as "(?=a)")
            let longest = regex_syntax::Parser::new()
                .parse(pattern)
                .ok()
                .and_then(|hir| hir.properties().maximum_len());
            let built = not_empty_regex(pattern);
            let never = matches!(&built, Err(fancy_regex::Error::CompileError(e))
                if matches!(**e, fancy_regex::CompileError::PatternCanNeverMatch));
            if longest == Some(0) || never {
                return Err(Error::InvalidPattern {
                    pattern: pattern.to_string(),
                    message: "it matches only empty text, which is no pre-token".into(),
                });
            }
            let _ = not_empty.set(built.ok());
        }
        Ok(Self {
            regex,
            not_empty,
            pattern: pattern.to_string(),
            preset,
        })
    }

    /// The same pre-tokenizer, but always splitting with the regex (for tests and
    /// benchmarks of the scanners).
    pub fn regex_only(mut self) -> Self {
        self.preset = None;
        self
    }

    /// Whether this is one of the preset patterns (whose pre-tokens never join a newline
    /// to a following non-space character, which lets corpus chunks be cut there).
    pub fn is_preset(&self) -> bool {
        self.preset.is_some()
    }

    /// Whether a whitespace run that holds a newline ends at its last newline whatever
    /// follows (`\s*[\r\n]+`, cl100k and o200k): then a newline between whitespace and a
    /// non-space character is a place to cut as well (`\r\n` line ends). GPT-2's
    /// `\s+(?!\S)` splits such a run one way before a letter and another at the end.
    pub fn newline_ends_space_runs(&self) -> bool {
        matches!(self.preset, Some(Preset::Cl100k | Preset::O200k))
    }

    /// Whether no pre-token holds a non-space character followed by whitespace (GPT-2's
    /// pattern: no alternative matches both, and none looks behind), so that the text can
    /// also be cut right before a newline that follows a non-space character (its only
    /// cut in `\r\n` text: after the `\n` its `\s+(?!\S)` ends a run differently).
    pub fn cuts_before_newlines(&self) -> bool {
        matches!(self.preset, Some(Preset::Gpt2))
    }

    /// Where `text`, a prefix of a longer text still arriving, can be cut so that the
    /// pre-tokens before the cut are final: the same whatever text follows. None for a
    /// custom regex (nothing bounds how far it looks ahead).
    ///
    /// For the presets a pre-token depends on at most a few characters after its end,
    /// except o200k's `[upper]*[lower]+`, which reads to the end of a run of letters that
    /// splits into at most two pre-tokens. So the last two pre-tokens, and at least
    /// `STREAM_MARGIN` bytes, are held back.
    pub fn stream_cut(&self, text: &str) -> Option<usize> {
        const STREAM_MARGIN: usize = 32;
        let preset = self.preset?;
        let mut starts: Vec<usize> = Vec::new();
        let base = text.as_ptr() as usize;
        fast::for_each(preset, text, |piece: &str| {
            starts.push(piece.as_ptr() as usize - base)
        });
        let mut k = starts.len().saturating_sub(2);
        while k > 0 && text.len() - starts[k] < STREAM_MARGIN {
            k -= 1;
        }
        Some(starts.get(k).copied().unwrap_or(0))
    }

    /// Calls `f` on each pre-token of `text`, in order: the matches of the pattern, as
    /// Python's `regex.finditer` finds them. An empty match carries no bytes and is not a
    /// pre-token; as in Python, the search then goes on at the same place for a match that
    /// is not empty (`a*|.` splits "a b" into "a", " ", "b"), and only if there is none
    /// there, one character further. Text no match covers is no pre-token (as in the CS336
    /// reference and tiktoken).
    pub fn for_each<'t>(&self, text: &'t str, f: impl FnMut(&'t str)) -> Result<()> {
        self.scan(text, f)
    }

    /// `for_each`, to any `Sink`.
    pub fn scan<'t>(&self, text: &'t str, mut f: impl Sink<'t>) -> Result<()> {
        if let Some(preset) = self.preset {
            fast::for_each(preset, text, f);
            return Ok(());
        }
        let failed = |e: fancy_regex::Error| Error::PatternFailed(e.to_string());
        // The leftmost match that is not empty from where it was last searched for: (start,
        // end), or None if there is none to the end of the text. It stays the leftmost from
        // any later place up to its start. (Searched for again at each empty match, it cost
        // the distance to it at every character before it: `x*` on 80 KB with no x took
        // 92 s, found by QA.)
        let mut ahead: Option<Option<(usize, usize)>> = None;
        let mut at = 0;
        while at <= text.len() {
            let Some(m) = self.regex.find_from_pos(text, at).map_err(failed)? else {
                break;
            };
            if m.end() > m.start() {
                f.piece(m.as_str());
                at = m.end();
                continue;
            }
            let here = m.start();
            let next = match ahead {
                Some(found) if found.is_none_or(|(start, _)| start >= here) => found,
                _ => {
                    let found = self
                        .not_empty()?
                        .find_from_pos(text, here)
                        .map_err(failed)?;
                    let found = found.map(|n| (n.start(), n.end()));
                    ahead = Some(found);
                    found
                }
            };
            match next {
                Some((start, end)) if start == here => {
                    f.piece(&text[start..end]);
                    at = end;
                }
                // (past the end: done)
                _ => at = here + text[here..].chars().next().map_or(1, char::len_utf8),
            }
        }
        Ok(())
    }

    /// The pattern compiled never to match empty text (`None` if it can match nothing else).
    fn not_empty(&self) -> Result<&Regex> {
        let re = self
            .not_empty
            .get_or_init(|| not_empty_regex(&self.pattern).ok());
        re.as_ref().ok_or_else(|| {
            Error::PatternFailed(format!(
                "the pattern {:?} matches only empty text, which is no pre-token",
                self.pattern
            ))
        })
    }
}

/// Finds special tokens in text: leftmost match, and the longest where several start at
/// the same position (so `<|endoftext|><|endoftext|>`, if registered, beats `<|endoftext|>`).
/// What receives the pre-tokens of a text, in order (any `FnMut(&str)` does). A type of its
/// own with an `#[inline(always)]` `piece` is copied into the scanner's loop, where a closure
/// the compiler judges too large stays a call per pre-token.
pub trait Sink<'t> {
    fn piece(&mut self, piece: &'t str);
}

impl<'t, F: FnMut(&'t str)> Sink<'t> for F {
    #[inline(always)]
    fn piece(&mut self, piece: &'t str) {
        self(piece)
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
    fn after_an_empty_match_a_longer_one_at_the_same_place() {
        // as Python's regex.finditer: "a*" matches empty before " ", then "." takes it
        let p = Pretokenizer::new(r"a*|.").unwrap();
        assert_eq!(pieces(&p, "a b"), ["a", " ", "b"]);
        assert_eq!(
            pieces(&Pretokenizer::new(r"\b|\w+").unwrap(), "hi you"),
            ["hi", "you"]
        );
        // a pattern that matches only empty text is refused when compiled
        for only_empty in [
            r"(?=a)",
            r"\b",
            r"(?:)",
            r"$",
            r"(?:\b)+",
            r"(?:a{0})+",
            r"(?:^)*",
        ] {
            let e = Pretokenizer::new(only_empty).unwrap_err().to_string();
            assert!(
                e.ends_with("it matches only empty text, which is no pre-token"),
                "{e}"
            );
        }
    }

    #[test]
    fn presets_compile() {
        for name in ["gpt2", "cl100k", "o200k"] {
            Pretokenizer::new(name).unwrap();
        }
        assert!(Pretokenizer::new("(").is_err());
    }
}
