//! Pre-token counting, in parallel over the whole corpus.
//!
//! Files are read in blocks and cut into chunks at places where pre-tokenizing the
//! chunks separately gives exactly the pre-tokens of the whole text: right before a
//! special token, or (for the preset patterns only) right after a `\n` that sits between
//! two non-whitespace characters, the second not `/` (no preset joins a newline to a
//! following non-space other than o200k's `[\r\n/]*`, and a lone newline ends the same way
//! at a chunk end as before a letter). A custom pattern might join anything, so its
//! chunks are cut only before special tokens. A cut never falls inside a UTF-8 sequence,
//! and a file larger than memory is never read whole.

use std::borrow::Cow;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::{Progress, ProgressFn};
use crate::pretokenize::{Pretokenizer, Span, SpecialMatcher};
use crate::{Error, Result};

/// Pre-token bytes -> number of occurrences (64-bit), over a corpus.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PretokenCounts {
    /// The counts; special-token text is never in here.
    pub counts: FxHashMap<Vec<u8>, u64>,
}

impl PretokenCounts {
    /// Adds the counts of `other` to these (shards counted apart add up exactly).
    pub fn add(&mut self, other: &PretokenCounts) {
        for (k, v) in &other.counts {
            self.add_one(k, *v);
        }
    }

    fn add_one(&mut self, key: &[u8], n: u64) {
        match self.counts.get_mut(key) {
            // saturate rather than wrap: 2^64 occurrences is not a real corpus, but a
            // hostile sum of saved counts must not turn into a small number
            Some(c) => *c = c.saturating_add(n),
            None => {
                self.counts.insert(key.to_vec(), n);
            }
        }
    }

    fn add_borrowed(&mut self, local: FxHashMap<&str, u64>) {
        self.counts.reserve(local.len() / 4);
        for (k, v) in local {
            self.add_one(k.as_bytes(), v);
        }
    }
}

/// Counts the pre-tokens of one chunk of text into `counts`.
fn count_chunk<'t>(
    text: &'t str,
    pretok: &Pretokenizer,
    specials: &SpecialMatcher,
    counts: &mut FxHashMap<&'t str, u64>,
) -> Result<()> {
    for span in specials.split(text) {
        if let Span::Text(t) = span {
            pretok.for_each(t, |piece| *counts.entry(piece).or_insert(0) += 1)?;
        }
    }
    Ok(())
}

fn merge_maps<'t>(
    mut a: FxHashMap<&'t str, u64>,
    mut b: FxHashMap<&'t str, u64>,
) -> FxHashMap<&'t str, u64> {
    if a.len() < b.len() {
        std::mem::swap(&mut a, &mut b);
    }
    for (k, v) in b {
        *a.entry(k).or_insert(0) += v;
    }
    a
}

/// Counts chunks in parallel; returns the merged map borrowing from the chunks.
fn count_chunks_parallel<'t>(
    chunks: &[&'t str],
    pretok: &Pretokenizer,
    specials: &SpecialMatcher,
) -> Result<FxHashMap<&'t str, u64>> {
    chunks
        .par_iter()
        .map(|chunk| {
            let mut local = FxHashMap::default();
            count_chunk(chunk, pretok, specials, &mut local)?;
            Ok(local)
        })
        .try_reduce(FxHashMap::default, |a, b| Ok(merge_maps(a, b)))
}

/// Counts the pre-tokens of in-memory texts; each text is pre-tokenized on its own
/// (a text boundary is a pre-token boundary).
pub fn count_texts<S: AsRef<str> + Sync>(
    texts: &[S],
    pattern: &str,
    special_tokens: &[String],
) -> Result<PretokenCounts> {
    let pretok = Pretokenizer::new(pattern)?;
    let specials = SpecialMatcher::new(special_tokens)?;
    let cuts = Cuts {
        specials: &specials,
        at_newlines: pretok.is_preset(),
    };
    let mut chunks: Vec<&str> = Vec::new();
    for t in texts {
        split_text(t.as_ref(), &cuts, CHUNK_BYTES, &mut chunks);
    }
    let mut out = PretokenCounts::default();
    out.add_borrowed(count_chunks_parallel(&chunks, &pretok, &specials)?);
    Ok(out)
}

/// Target size of one unit of parallel work.
const CHUNK_BYTES: usize = 1 << 20;
/// How much of a file is read at a time.
const BLOCK_BYTES: usize = 64 << 20;

fn is_space_before(bytes: &[u8]) -> bool {
    // The last character of `bytes`, decoded leniently: whitespace per Unicode White_Space,
    // the definition of `\s` in both fancy-regex and Python's `regex`.
    let start = bytes.iter().rposition(|&b| (b & 0xC0) != 0x80).unwrap_or(0);
    match std::str::from_utf8(&bytes[start..]) {
        Ok(s) => s.chars().next().is_none_or(char::is_whitespace),
        Err(_) => true,
    }
}

fn is_space_or_slash_after(bytes: &[u8]) -> bool {
    let end = bytes.len().min(4);
    let head = &bytes[..end];
    let valid = match std::str::from_utf8(head) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&head[..e.valid_up_to()]).unwrap_or(""),
    };
    valid
        .chars()
        .next()
        .is_none_or(|c| c.is_whitespace() || c == '/')
}

/// The last safe cut in `buf` (see the module docs), at or after `min`, or None.
fn find_cut(buf: &[u8], min: usize, cuts: &Cuts) -> Option<usize> {
    let specials = cuts.specials;
    let mut newline_cut = None;
    let mut end = if cuts.at_newlines { buf.len() } else { min };
    while let Some(i) = memchr_rev(b'\n', &buf[min..end]).map(|i| i + min) {
        let p = i + 1;
        if p < buf.len()
            && i > 0
            && !is_space_before(&buf[..i])
            && !is_space_or_slash_after(&buf[p..])
        {
            newline_cut = Some(p);
            break;
        }
        end = i;
    }
    // A cut before a special token is exact for any pattern. Only look at the tail so
    // that a corpus full of special tokens is not scanned twice.
    let tail = newline_cut.unwrap_or(min).max(min);
    let special_cut = std::str::from_utf8(&buf[tail..])
        .ok()
        .or_else(|| {
            // the tail may end inside a UTF-8 sequence or hold bad bytes; scan what is valid
            let bad = std::str::from_utf8(&buf[tail..]).err()?.valid_up_to();
            std::str::from_utf8(&buf[tail..tail + bad]).ok()
        })
        .and_then(|s| specials.last_start(s))
        .map(|s| s + tail)
        .filter(|&s| s > 0);
    match (newline_cut, special_cut) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// What a chunk may be cut at.
struct Cuts<'a> {
    specials: &'a SpecialMatcher,
    at_newlines: bool,
}

fn memchr_rev(needle: u8, hay: &[u8]) -> Option<usize> {
    hay.iter().rposition(|&b| b == needle)
}

/// Cuts `text` into chunks of about `target` bytes at safe places.
fn split_text<'t>(text: &'t str, cuts: &Cuts, target: usize, out: &mut Vec<&'t str>) {
    let bytes = text.as_bytes();
    let mut start = 0;
    while bytes.len() - start > target {
        let window_end = start + target;
        // search the second half of the window first, then anything after it
        let cut = find_cut(&bytes[start..window_end], target / 2, cuts)
            .or_else(|| find_cut(&bytes[start..], target, cuts))
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

/// What to do with bytes of a corpus file that are not valid UTF-8.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InvalidUtf8 {
    /// Fail, naming the file and the byte offset.
    Strict,
    /// Replace each maximal invalid sequence with U+FFFD (as Python's `errors="replace"`).
    Replace,
    /// Drop the invalid bytes (as Python's `errors="ignore"`).
    Skip,
}

/// Decodes a chunk by the policy; on `Strict`, the error is the offset of the first bad byte.
fn decode(bytes: &[u8], policy: InvalidUtf8) -> std::result::Result<Cow<'_, str>, usize> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(Cow::Borrowed(s)),
        Err(e) => match policy {
            InvalidUtf8::Strict => Err(e.valid_up_to()),
            InvalidUtf8::Replace => Ok(String::from_utf8_lossy(bytes)),
            InvalidUtf8::Skip => Ok(Cow::Owned(bytes.utf8_chunks().map(|c| c.valid()).collect())),
        },
    }
}

/// Counts the pre-tokens of files, each read in blocks and counted in parallel.
pub fn count_files(
    paths: &[PathBuf],
    pattern: &str,
    special_tokens: &[String],
    invalid_utf8: InvalidUtf8,
    progress: ProgressFn,
) -> Result<PretokenCounts> {
    let pretok = Pretokenizer::new(pattern)?;
    let specials = SpecialMatcher::new(special_tokens)?;
    let io_err = |path: &Path, source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut total = 0u64;
    for p in paths {
        total += std::fs::metadata(p).map_err(|e| io_err(p, e))?.len();
    }
    let cuts = Cuts {
        specials: &specials,
        at_newlines: pretok.is_preset(),
    };
    let mut done = 0u64;
    let mut counts = PretokenCounts::default();
    for path in paths {
        let mut file = File::open(path).map_err(|e| io_err(path, e))?;
        let mut buf: Vec<u8> = Vec::new();
        let mut offset = 0u64; // file offset of buf[0]
        let mut eof = false;
        while !eof || !buf.is_empty() {
            if !eof {
                let before = buf.len();
                buf.reserve(BLOCK_BYTES);
                let n = (&mut file)
                    .take(BLOCK_BYTES as u64)
                    .read_to_end(&mut buf)
                    .map_err(|e| io_err(path, e))?;
                eof = n == 0 || buf.len() - before < BLOCK_BYTES;
            }
            let cut = if eof {
                buf.len()
            } else {
                match find_cut(&buf, buf.len().saturating_sub(BLOCK_BYTES), &cuts) {
                    Some(c) => c,
                    None => continue, // no safe cut yet: read more
                }
            };
            let text =
                decode(&buf[..cut], invalid_utf8).map_err(|valid_up_to| Error::InvalidUtf8 {
                    path: path.clone(),
                    offset: offset + valid_up_to as u64,
                })?;
            let mut chunks = Vec::new();
            split_text(&text, &cuts, CHUNK_BYTES, &mut chunks);
            counts.add_borrowed(count_chunks_parallel(&chunks, &pretok, &specials)?);
            done += cut as u64;
            progress(Progress::Counting { done, total });
            buf.drain(..cut);
            offset += cut as u64;
        }
    }
    Ok(counts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn whole(text: &str, pattern: &str, specials: &[String]) -> PretokenCounts {
        let pretok = Pretokenizer::new(pattern).unwrap();
        let sm = SpecialMatcher::new(specials).unwrap();
        let mut local = FxHashMap::default();
        count_chunk(text, &pretok, &sm, &mut local).unwrap();
        let mut out = PretokenCounts::default();
        out.add_borrowed(local);
        out
    }

    #[test]
    fn chunked_counts_equal_whole_text() {
        let specials = vec!["<|endoftext|>".to_string()];
        let text = "Hello world.\n\n\nNew  para\n  indented\nline<|endoftext|>next doc \u{3000}\n中文\n\r\nend \n x.\n/y\n"
            .repeat(50);
        for pattern in ["gpt2", "cl100k", "o200k", r"\S+\s*"] {
            let sm = SpecialMatcher::new(&specials).unwrap();
            let pretok = Pretokenizer::new(pattern).unwrap();
            let cuts = Cuts {
                specials: &sm,
                at_newlines: pretok.is_preset(),
            };
            for target in [1, 7, 16, 64, 1000] {
                let mut chunks = Vec::new();
                split_text(&text, &cuts, target, &mut chunks);
                assert!(chunks.len() > 1);
                assert_eq!(chunks.concat(), text);
                let mut got = PretokenCounts::default();
                got.add_borrowed(count_chunks_parallel(&chunks, &pretok, &sm).unwrap());
                assert_eq!(got, whole(&text, pattern, &specials), "{pattern} {target}");
            }
        }
    }

    #[test]
    fn special_tokens_are_not_counted() {
        let c = whole("a<|endoftext|>a", "gpt2", &["<|endoftext|>".to_string()]);
        assert_eq!(c.counts.len(), 1);
        assert_eq!(c.counts[b"a".as_slice()], 2);
    }
}
