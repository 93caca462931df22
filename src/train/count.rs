//! Pre-token counting, in parallel over the whole corpus.
//!
//! Files are read in blocks and cut into chunks at places where pre-tokenizing the
//! chunks separately gives exactly the pre-tokens of the whole text (the rule is in
//! `pretokenize/cuts.rs`), and a file larger than memory is never read whole.

use std::borrow::Cow;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use rustc_hash::FxHashMap;

use super::{Progress, ProgressFn};
use crate::pretokenize::cuts::{find_cut, split_text, Cuts};
use crate::pretokenize::{Pretokenizer, Span, SpecialMatcher};
use crate::{Error, Result};

/// Pre-token bytes -> number of occurrences (64-bit), over a corpus.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct PretokenCounts {
    /// The counts; special-token text is never in here.
    pub counts: FxHashMap<Vec<u8>, u64>,
    /// Pre-tokens longer than the limit met while counting (truncated or skipped).
    pub long: LongStats,
}

/// How many pre-tokens were longer than [`CountOptions::max_pretoken_length`].
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct LongStats {
    /// Number of such pre-tokens (occurrences).
    pub count: u64,
    /// Length in bytes of the longest one.
    pub longest: u64,
}

impl LongStats {
    fn add(&mut self, other: LongStats) {
        self.count = self.count.saturating_add(other.count);
        self.longest = self.longest.max(other.longest);
    }
}

/// The error for a count that would pass 2^64 - 1.
pub fn too_many(key: &[u8], have: u64, more: u64) -> crate::Error {
    crate::Error::Invalid(format!(
        "the count of pre-token {:?} would pass 2^64 - 1 ({have} + {more}): counts are 64-bit",
        String::from_utf8_lossy(key)
    ))
}

/// Counting options beyond the pattern and the special tokens.
#[derive(Debug, Clone, Copy, Default)]
pub struct CountOptions {
    /// Pre-tokens longer than this many bytes are truncated to it (at a character
    /// boundary) or, with `skip_long`, not counted; None: no limit. A corrupt corpus (a
    /// megabyte without a space) would otherwise give one huge word that every merge of
    /// the merge loop rescans.
    pub max_pretoken_length: Option<usize>,
    /// Skip long pre-tokens instead of truncating them.
    pub skip_long: bool,
}

impl PretokenCounts {
    /// `add`, or an error (and these counts unchanged) if a count would pass 2^64 - 1: sums
    /// of saved counts, where `add` saturates.
    pub fn try_add(&mut self, other: &PretokenCounts) -> crate::Result<()> {
        for (k, v) in &other.counts {
            let have = self.counts.get(k).copied().unwrap_or(0);
            if have.checked_add(*v).is_none() {
                return Err(too_many(k, have, *v));
            }
        }
        self.add(other);
        Ok(())
    }

    /// Adds the counts of `other` to these (shards counted apart add up exactly).
    pub fn add(&mut self, other: &PretokenCounts) {
        for (k, v) in &other.counts {
            self.add_one(k, *v);
        }
        self.long.add(other.long);
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

    fn add_borrowed(&mut self, local: Local<'_>) {
        self.counts.reserve(local.0.len() / 4);
        for (k, v) in local.0 {
            self.add_one(k.as_bytes(), v);
        }
        self.long.add(local.1);
    }
}

/// Counts of one part of the corpus, borrowing the pre-tokens from its text.
type Local<'t> = (FxHashMap<&'t str, u64>, LongStats);

/// What counting needs: the compiled pattern, the special tokens and the options.
pub struct Counter {
    pretok: Pretokenizer,
    specials: SpecialMatcher,
    options: CountOptions,
}

impl Counter {
    /// Compiles the pattern (a preset name or a regex) and the special tokens.
    pub fn new(pattern: &str, special_tokens: &[String], options: CountOptions) -> Result<Self> {
        Ok(Self {
            pretok: Pretokenizer::new(pattern)?,
            specials: SpecialMatcher::new(special_tokens)?,
            options,
        })
    }

    fn cuts(&self) -> Cuts<'_> {
        Cuts::new(&self.pretok, Some(&self.specials))
    }

    /// Counts one pre-token, applying the length limit.
    fn add_piece<'t>(&self, piece: &'t str, local: &mut Local<'t>) {
        let piece = match self.options.max_pretoken_length {
            Some(limit) if piece.len() > limit => {
                local.1.count += 1;
                local.1.longest = local.1.longest.max(piece.len() as u64);
                if self.options.skip_long {
                    return;
                }
                let mut end = limit;
                while !piece.is_char_boundary(end) {
                    end -= 1;
                }
                &piece[..end]
            }
            _ => piece,
        };
        if !piece.is_empty() {
            *local.0.entry(piece).or_insert(0) += 1;
        }
    }

    /// Counts the pre-tokens of one chunk of text into `local`.
    fn count_chunk<'t>(&self, text: &'t str, local: &mut Local<'t>) -> Result<()> {
        for span in self.specials.split(text) {
            if let Span::Text(t) = span {
                self.pretok
                    .for_each(t, |piece| self.add_piece(piece, local))?;
            }
        }
        Ok(())
    }

    /// Counts chunks in parallel; returns the merged map borrowing from the chunks.
    fn count_parallel<'t>(&self, chunks: &[&'t str]) -> Result<Local<'t>> {
        chunks
            .par_iter()
            .map(|chunk| {
                let mut local = Local::default();
                self.count_chunk(chunk, &mut local)?;
                Ok(local)
            })
            .try_reduce(Local::default, |a, b| Ok(merge_maps(a, b)))
    }

    /// Counts whole texts (each one pre-tokenized on its own) into `out`.
    fn count_all<S: AsRef<str>>(&self, texts: &[S], out: &mut PretokenCounts) -> Result<()> {
        let cuts = self.cuts();
        let mut chunks: Vec<&str> = Vec::new();
        for t in texts {
            split_text(t.as_ref(), &cuts, CHUNK_BYTES, &mut chunks);
        }
        out.add_borrowed(self.count_parallel(&chunks)?);
        Ok(())
    }

    /// Counts a batch of a stream of `(text, ends_document)` chunks into `out`. A chunk
    /// may end anywhere: the part of a document after its last exact cut (see the module
    /// docs) is `carry`, prepended to the next chunk; the carry left at the end of the
    /// batch is returned, for the next batch. The counts equal those of the documents
    /// counted whole.
    pub fn count_stream(
        &self,
        chunks: &[(String, bool)],
        mut carry: String,
        out: &mut PretokenCounts,
    ) -> Result<String> {
        let cuts = self.cuts();
        let mut units: Vec<String> = Vec::new();
        for (text, ends) in chunks {
            carry.push_str(text);
            if *ends {
                units.push(std::mem::take(&mut carry));
                continue;
            }
            if let Some(c) = find_cut(carry.as_bytes(), 0, &cuts) {
                let rest = carry[c..].to_string();
                carry.truncate(c);
                units.push(std::mem::replace(&mut carry, rest));
            } else if carry.len() > STREAM_FALLBACK_BYTES {
                // no newline or special token to cut at: cut between final pre-tokens
                let consumed = self.count_final_prefix(&carry, out)?;
                carry.drain(..consumed);
            }
        }
        self.count_all(&units, out)?;
        Ok(carry)
    }

    /// Counts the pre-tokens of `text` (a document still arriving) that are final
    /// whatever follows, as split in the whole of `text`; returns the length they cover.
    /// Only the presets have final pre-tokens (a custom regex may look ahead without
    /// bound: there nothing is final before the last special token, which `find_cut`
    /// already handles). A special token that may be arriving at the end is held back.
    fn count_final_prefix(&self, text: &str, out: &mut PretokenCounts) -> Result<usize> {
        let hold = self
            .specials
            .partial_at_end(text, |_| true)
            .unwrap_or(text.len());
        let head = &text[..hold];
        let done = self.specials.find_all(head).last().map_or(0, |m| m.1);
        let tail = &head[done..];
        let Some(cut) = self.pretok.stream_cut(tail) else {
            return Ok(0);
        };
        let mut local = Local::default();
        self.count_chunk(&head[..done], &mut local)?;
        let base = tail.as_ptr() as usize;
        self.pretok.for_each(tail, |piece| {
            if piece.as_ptr() as usize - base < cut {
                self.add_piece(piece, &mut local);
            }
        })?;
        out.add_borrowed(local);
        Ok(done + cut)
    }
}

/// A document still arriving with no exact cut in this many bytes is cut between final
/// pre-tokens instead (slower: the text is pre-tokenized once more).
const STREAM_FALLBACK_BYTES: usize = 4 << 20;

fn merge_maps<'t>(mut a: Local<'t>, mut b: Local<'t>) -> Local<'t> {
    if a.0.len() < b.0.len() {
        std::mem::swap(&mut a, &mut b);
    }
    for (k, v) in b.0 {
        *a.0.entry(k).or_insert(0) += v;
    }
    a.1.add(b.1);
    a
}

/// Counts the pre-tokens of in-memory texts; each text is pre-tokenized on its own
/// (a text boundary is a pre-token boundary).
pub fn count_texts<S: AsRef<str> + Sync>(
    texts: &[S],
    pattern: &str,
    special_tokens: &[String],
    options: CountOptions,
) -> Result<PretokenCounts> {
    let counter = Counter::new(pattern, special_tokens, options)?;
    let mut out = PretokenCounts::default();
    counter.count_all(texts, &mut out)?;
    Ok(out)
}

/// Target size of one unit of parallel work.
const CHUNK_BYTES: usize = 1 << 20;
/// How much of a file is read at a time.
const BLOCK_BYTES: usize = 64 << 20;

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

/// Decodes a chunk by the policy; on `Strict`, the error is where the first invalid
/// sequence starts.
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

/// The first invalid sequence of a chunk, told as Python's `bytes.decode` tells it.
struct BadUtf8 {
    at: usize,
    bad: Vec<u8>,
    reason: &'static str,
}

impl BadUtf8 {
    /// The invalid sequence at `at` of `buf`, all that was read (not only the chunk being
    /// decoded: a sequence cut short by the chunk's end is told by the bytes after it, as
    /// Python, decoding the whole file, tells it).
    fn new(buf: &[u8], at: usize) -> Self {
        let bytes = &buf[at..(at + 4).min(buf.len())];
        let e = std::str::from_utf8(bytes).err();
        // std and CPython both take the maximal valid prefix of a sequence as the bad part
        // (Unicode's "maximal subpart" rule), so `error_len` is the length Python names
        let (bad, reason) = match e.and_then(|e| e.error_len()) {
            None => (bytes, "unexpected end of data"),
            Some(n) => {
                let lead = bytes[0];
                let starts = matches!(lead, 0x00..=0x7F | 0xC2..=0xF4);
                let reason = if starts {
                    "invalid continuation byte"
                } else {
                    "invalid start byte"
                };
                (&bytes[..n], reason)
            }
        };
        Self {
            at,
            bad: bad.to_vec(),
            reason,
        }
    }
}

/// Counts the pre-tokens of files, each read in blocks and counted in parallel.
pub fn count_files(
    paths: &[PathBuf],
    pattern: &str,
    special_tokens: &[String],
    options: CountOptions,
    invalid_utf8: InvalidUtf8,
    progress: ProgressFn,
) -> Result<PretokenCounts> {
    let counter = Counter::new(pattern, special_tokens, options)?;
    let io_err = |path: &Path, source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    let mut total = 0u64;
    for p in paths {
        total += std::fs::metadata(p).map_err(|e| io_err(p, e))?.len();
    }
    let cuts = counter.cuts();
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
            let text = decode(&buf[..cut], invalid_utf8).map_err(|at| {
                let e = BadUtf8::new(&buf, at);
                Error::InvalidUtf8 {
                    path: path.clone(),
                    offset: offset + e.at as u64,
                    bad: e.bad,
                    reason: e.reason,
                }
            })?;
            let mut chunks = Vec::new();
            split_text(&text, &cuts, CHUNK_BYTES, &mut chunks);
            counts.add_borrowed(counter.count_parallel(&chunks)?);
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
        let counter = Counter::new(pattern, specials, CountOptions::default()).unwrap();
        let mut local = Local::default();
        counter.count_chunk(text, &mut local).unwrap();
        let mut out = PretokenCounts::default();
        out.add_borrowed(local);
        out
    }

    #[test]
    fn streamed_chunks_cut_anywhere_count_like_whole_documents() {
        let specials = vec!["<|endoftext|>".to_string()];
        let doc =
            "Hello world.\n\n  New  para\nline<|endoftext|>next doc \u{3000}\n中文x\r\n end \n";
        for pattern in ["gpt2", "cl100k", "o200k", r"\S+\s*"] {
            let counter = Counter::new(pattern, &specials, CountOptions::default()).unwrap();
            let expect = whole(&doc.repeat(3), pattern, &specials);
            for step in [1, 2, 3, 5, 17] {
                let text = doc.repeat(3);
                let mut chunks = Vec::new();
                let mut i = 0;
                while i < text.len() {
                    let mut j = (i + step).min(text.len());
                    while !text.is_char_boundary(j) {
                        j += 1;
                    }
                    chunks.push((text[i..j].to_string(), j == text.len()));
                    i = j;
                }
                let mut got = PretokenCounts::default();
                let mut carry = String::new();
                for batch in chunks.chunks(4) {
                    carry = counter.count_stream(batch, carry, &mut got).unwrap();
                }
                assert!(carry.is_empty());
                assert_eq!(got, expect, "{pattern} {step}");
            }
        }
    }

    #[test]
    fn final_prefix_counts_like_the_whole_text() {
        // no newline to cut at: the fallback cuts between final pre-tokens
        let text = "ab  cd!! ef\t\tgh<|endoftext|>ij kl   mn".repeat(20);
        let specials = vec!["<|endoftext|>".to_string()];
        for pattern in ["gpt2", "cl100k", "o200k"] {
            let counter = Counter::new(pattern, &specials, CountOptions::default()).unwrap();
            for end in [7, 100, 333, text.len() - 5] {
                let mut got = PretokenCounts::default();
                let consumed = counter.count_final_prefix(&text[..end], &mut got).unwrap();
                counter
                    .count_stream(
                        &[(text[consumed..].to_string(), true)],
                        String::new(),
                        &mut got,
                    )
                    .unwrap();
                assert_eq!(got, whole(&text, pattern, &specials), "{pattern} {end}");
            }
        }
    }

    #[test]
    fn long_pretokens_are_truncated_or_skipped() {
        let text = "ab ééééé cd";
        for (skip, expect) in [(false, vec!["ab", " é", " cd"]), (true, vec!["ab", " cd"])] {
            let options = CountOptions {
                max_pretoken_length: Some(4),
                skip_long: skip,
            };
            let c = count_texts(&[text], "gpt2", &[], options).unwrap();
            let mut keys: Vec<&[u8]> = c.counts.keys().map(|k| k.as_slice()).collect();
            keys.sort();
            let mut want: Vec<&[u8]> = expect.iter().map(|k| k.as_bytes()).collect();
            want.sort();
            assert_eq!(keys, want);
            assert_eq!(
                c.long,
                LongStats {
                    count: 1,
                    longest: 11
                }
            );
        }
    }

    #[test]
    fn chunked_counts_equal_whole_text() {
        let specials = vec!["<|endoftext|>".to_string()];
        let text = "Hello world.\n\n\nNew  para\n  indented\nline<|endoftext|>next doc \u{3000}\n中文\n\r\nend \n x.\n/y\n"
            .repeat(50);
        for pattern in ["gpt2", "cl100k", "o200k", r"\S+\s*"] {
            let counter = Counter::new(pattern, &specials, CountOptions::default()).unwrap();
            let cuts = counter.cuts();
            for target in [1, 7, 16, 64, 1000] {
                let mut chunks = Vec::new();
                split_text(&text, &cuts, target, &mut chunks);
                assert!(chunks.len() > 1);
                assert_eq!(chunks.concat(), text);
                let mut got = PretokenCounts::default();
                got.add_borrowed(counter.count_parallel(&chunks).unwrap());
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
