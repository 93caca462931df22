//! A hash table of packed words, eight to a 64-byte line: one memory access per lookup.
//!
//! The pair table is consulted at every merge of a pre-token the piece cache has not seen,
//! and it is megabytes, far beyond the CPU's second-level cache: what a lookup costs is the
//! cache lines it waits for. A hash map waits for two (its control bytes, then its bucket);
//! here a word is found in the line its hash names, or, when that line was full as the table
//! was built, in one of the lines after it (a line with an empty last slot ends the search:
//! slots fill in order and nothing is removed). Words given first take their own line, so
//! callers give the common ones first.

use crate::huge::{HugeSlice, Zeroable};

/// Words in a line.
pub const WAYS: usize = 8;
/// An empty slot; callers never store it.
pub const EMPTY: u64 = u64::MAX;

#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct Line([u64; WAYS]);

// SAFETY: words
unsafe impl Zeroable for Line {}

/// (in 2 MiB pages where the system gives them: `huge.rs`)
#[derive(Debug, Clone)]
pub struct Lines(HugeSlice<Line>);

/// The line of a hash among `n` lines: its top 32 bits scaled to `0..n`.
#[inline(always)]
fn line_of(h: u64, n: usize) -> usize {
    (((h >> 32) * n as u64) >> 32) as usize
}

impl Lines {
    /// A table of `(hash, word)`s, placed in the order given, in `n_lines` lines with room
    /// for them and one more (a search ends at a free slot); `lines_for(len)` makes it three
    /// quarters full.
    pub fn new(words: impl ExactSizeIterator<Item = (u64, u64)>, n_lines: usize) -> Self {
        assert!(
            n_lines * WAYS > words.len(),
            "room for every word and one more"
        );
        let mut lines = HugeSlice::new(n_lines, Line([EMPTY; WAYS]));
        let mut fill = vec![0u8; n_lines];
        for (h, word) in words {
            debug_assert_ne!(word, EMPTY);
            let mut i = line_of(h, n_lines);
            while fill[i] as usize == WAYS {
                i = if i + 1 == n_lines { 0 } else { i + 1 };
            }
            lines[i].0[fill[i] as usize] = word;
            fill[i] += 1;
        }
        Self(lines)
    }

    /// Lines for `n` words: three quarters full (smaller tables were faster on English,
    /// fewer lines to fetch; more lines overflow, but those of the words given last).
    pub fn lines_for(n: usize) -> usize {
        n / 6 + 1
    }

    /// The word stored with hash `h` for which `is(word)` holds, if any.
    #[inline(always)]
    pub fn find(&self, h: u64, is: impl Fn(u64) -> bool) -> Option<u64> {
        let lines = &self.0;
        let mut i = line_of(h, lines.len());
        loop {
            let line = &lines[i].0;
            // (all eight tested, no early exit: where in its line a word sits is random)
            let mut found = EMPTY;
            for &w in line {
                if is(w) {
                    found = w;
                }
            }
            if found != EMPTY {
                return Some(found);
            }
            if line[WAYS - 1] == EMPTY {
                return None;
            }
            i = if i + 1 == lines.len() { 0 } else { i + 1 };
        }
    }

    /// Asks for the line of hash `h` ahead of `find`.
    #[inline(always)]
    pub fn prefetch(&self, h: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let line = &self.0[line_of(h, self.0.len())] as *const Line as *const i8;
            // SAFETY: a prefetch is a hint; it reads nothing and cannot fault
            unsafe { _mm_prefetch(line, _MM_HINT_T0) };
        }
    }

    /// Every word stored.
    pub fn words(&self) -> impl Iterator<Item = u64> + '_ {
        self.0.iter().flat_map(|l| l.0).filter(|&w| w != EMPTY)
    }

    /// Lines whose last slot is taken.
    #[cfg(test)]
    pub fn full_lines(&self) -> usize {
        self.0.iter().filter(|l| l.0[WAYS - 1] != EMPTY).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Words are found through lines that overflowed into the next (and the last into
    /// the first), and absent ones are not, whatever the load.
    #[test]
    fn found_across_full_lines() {
        let mut rng = crate::test_rng(3);
        for (n_words, n_lines) in [(61, 8), (63, 8), (5, 1), (1000, 130), (3000, 500)] {
            // words 1..=n_words; hashes from few values so that lines crowd
            let hashes: Vec<u64> = (0..n_words).map(|_| (rng(7) as u64) << 61).collect();
            let table = Lines::new(
                hashes.iter().enumerate().map(|(w, &h)| (h, w as u64 + 1)),
                n_lines,
            );
            if n_words > 60 {
                assert!(
                    table.full_lines() >= 4,
                    "{n_words} words: too few full lines"
                );
            }
            for (w, &h) in hashes.iter().enumerate() {
                let w = w as u64 + 1;
                assert_eq!(table.find(h, |x| x == w), Some(w));
            }
            assert_eq!(table.find(hashes[0], |x| x == 0), None);
            assert_eq!(table.find(hashes[0], |x| x > n_words as u64), None);
            let mut all: Vec<u64> = table.words().collect();
            all.sort_unstable();
            assert_eq!(all, (1..=n_words as u64).collect::<Vec<_>>());
        }
    }
}
