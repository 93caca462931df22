//! Exact BPE for long pieces of non-Latin text by backtracking over longest-prefix tokens.
//!
//! In a vocabulary where every token is made by merging two tokens of lower rank (checked
//! when the tables are built), the BPE encoding of a piece is the one way to cut it into
//! tokens such that every two neighbours are a "valid pair": BPE of their two byte strings
//! joined gives back exactly those two tokens. So the encoding can be found left to right:
//! take the longest token the rest of the piece starts with, keep it if it makes a valid pair
//! with the token before it and a cut at its end was not already found to fail, else try its
//! next shorter prefix token; with none left, give the previous token back. tiktoken's rule
//! rescans every pair of the piece after every merge, so on a long run of Chinese or Thai
//! (one pre-token of dozens of characters) this does far less work.
//! (The method is that of GitHub's `bpe` crate in rust-gems.)
//!
//! Only pieces without two ASCII bytes in a row take this path, so the tables hold only the
//! tokens that can occur in them (no two ASCII bytes in a row either: 4k tokens for cl100k,
//! 61k for o200k): cheap to build, and English and code never need them.

use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickKind, Anchored, Input, MatchKind, StartKind};
use rustc_hash::FxHashMap;

use super::pair_key;
use crate::Rank;

/// Pieces of at least this many bytes are long: backtracking beats merging on them (on a
/// multilingual corpus with cl100k, 13 to 64 bytes all gained, 20 the most).
pub const LONG_PIECE: usize = 20;

/// Whether the tables apply to `bytes`: no two ASCII bytes in a row, so every token inside
/// (and every part of one) has the same property and is in the tables.
#[inline]
pub fn eligible(bytes: &[u8]) -> bool {
    bytes.windows(2).all(|w| (w[0] | w[1]) >= 0x80)
}

/// Bytes of eligible pieces merged, per byte of the tokens in the tables, before the tables
/// are built. Building costs ~330 ns per byte of tokens (o200k's 61k eligible tokens, 0.5
/// MB: 0.17 s) and backtracking saves ~15 ns per byte of such pieces (o200k, 20 MB of
/// multilingual text), so by then merging has cost as much extra as building will (the
/// ski-rental rule): text with few such pieces never pays for the tables, and text with many
/// pays at most about twice what it would have with them from the start. (cl100k's tables,
/// 16 KB of tokens, come after 0.35 MB of such pieces; o200k's after 11 MB.)
const BUILD_AFTER_PER_BYTE: usize = 22;

/// The tables of an encoder, built the first time they are worth it (see
/// `BUILD_AFTER_PER_BYTE`) by the thread that finds so; the others keep merging meanwhile.
#[derive(Default)]
pub struct Lazy {
    tables: OnceLock<Option<Backtrack>>,
    merged: AtomicUsize,
    /// The process whose thread is building the tables (0: none). A process forked during
    /// the build has no such thread, and builds them itself.
    builder: AtomicU32,
}

impl Lazy {
    /// The tables, if built; else counts `len` more bytes merged, and builds them with
    /// `build` once `table_bytes * BUILD_AFTER_PER_BYTE` bytes have been.
    #[inline]
    pub fn get(
        &self,
        len: usize,
        table_bytes: usize,
        build: impl FnOnce() -> Option<Backtrack>,
    ) -> Option<&Backtrack> {
        if let Some(t) = self.tables.get() {
            return t.as_ref();
        }
        let merged = self.merged.fetch_add(len, Ordering::Relaxed) + len;
        if merged >= table_bytes.saturating_mul(BUILD_AFTER_PER_BYTE) {
            let me = std::process::id();
            let was = self.builder.load(Ordering::Acquire);
            let claimed = was != me
                && self
                    .builder
                    .compare_exchange(was, me, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok();
            if claimed {
                let _ = self.tables.set(build());
            }
        }
        None
    }

    /// Whether the tables are built and in use.
    pub fn in_use(&self) -> bool {
        self.tables.get().is_some_and(|t| t.is_some())
    }

    /// Builds the tables now, unless built (a build under way elsewhere is not waited for:
    /// this one is kept if it ends first); true if they are in use.
    pub fn build_now(&self, build: impl FnOnce() -> Option<Backtrack>) -> bool {
        if self.tables.get().is_none() {
            let _ = self.tables.set(build());
        }
        self.in_use()
    }
}

// A copy of an encoder starts over (the tables are rebuilt when worth it).
impl Clone for Lazy {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl std::fmt::Debug for Lazy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Lazy({:?})", self.tables.get())
    }
}

/// No token.
const NO: Rank = Rank::MAX;

pub struct Backtrack {
    /// Anchored leftmost-longest search over the tokens' bytes; pattern `k` is token `ids[k]`.
    ac: AhoCorasick,
    ids: Vec<Rank>,
    /// By id: bytes, rank, the pair whose merge makes the token (`(NO, NO)` for a single
    /// byte), and its longest proper prefix that is a token (`NO` for a single byte).
    len: Vec<u32>,
    rank: Vec<u32>,
    split: Vec<(Rank, Rank)>,
    next_prefix: Vec<Rank>,
    /// (left, right) -> rank of left + right, for the pairs of these tokens only: every pair
    /// looked at is a substring of an eligible piece, so its join, if a token, is one of
    /// them. Smaller than the encoder's table of all pairs, it stays in the CPU caches
    /// better: o200k's multilingual text went from 46 to 55 MB/s with it.
    pairs: FxHashMap<u64, u32>,
}

impl Backtrack {
    /// `tokens`: (id, bytes, rank) of every eligible mergeable token, single bytes included
    /// (their ranks are ignored); `split(bytes, rank)`: the two tokens whose merge makes
    /// a multi-byte token, `None` if BPE of its bytes with only lower ranks does not end in
    /// two tokens that merge into it; `id_of(bytes)`. `None` when the vocabulary does not
    /// have the property the method needs.
    pub fn new(
        tokens: &[(Rank, &[u8], u32)],
        split: impl Fn(&[u8], u32) -> Option<(Rank, Rank)>,
        id_of: impl Fn(&[u8]) -> Option<Rank>,
    ) -> Option<Self> {
        // tables by id: the caller's ids are dense (its decoder is a table)
        let size = tokens.iter().map(|t| t.0 as usize + 1).max()?;
        let mut s = Self {
            ac: AhoCorasick::new::<_, &[u8]>([]).ok()?,
            ids: Vec::with_capacity(tokens.len()),
            len: vec![0; size],
            rank: vec![u32::MAX; size],
            split: vec![(NO, NO); size],
            next_prefix: vec![NO; size],
            pairs: FxHashMap::default(),
        };
        let mut seen_rank = rustc_hash::FxHashSet::default();
        for &(id, bytes, rank) in tokens {
            let i = id as usize;
            if s.len[i] != 0 || id_of(bytes) != Some(id) {
                return None; // the same bytes twice, or an id twice
            }
            s.len[i] = bytes.len() as u32;
            s.ids.push(id);
            if bytes.len() == 1 {
                continue;
            }
            if !seen_rank.insert(rank) {
                return None; // two tokens of one rank: ties would be broken differently
            }
            s.rank[i] = rank;
            s.split[i] = split(bytes, rank)?;
            s.next_prefix[i] = (1..bytes.len()).rev().find_map(|k| id_of(&bytes[..k]))?;
            for k in 1..bytes.len() {
                if let (Some(l), Some(r)) = (id_of(&bytes[..k]), id_of(&bytes[k..])) {
                    s.pairs.insert(pair_key(l, r), rank);
                }
            }
        }
        let patterns: Vec<&[u8]> = tokens.iter().map(|t| t.1).collect();
        s.ac = AhoCorasick::builder()
            .match_kind(MatchKind::LeftmostLongest)
            .start_kind(StartKind::Anchored)
            .kind(Some(AhoCorasickKind::ContiguousNFA))
            // dense transitions for the root only: 2 MB instead of 11 for o200k, about as
            // fast; no prefilter (every search is anchored)
            .dense_depth(1)
            .prefilter(false)
            .build(&patterns)
            .ok()?;
        Some(s)
    }

    /// Whether BPE of the bytes of `a` then `b` gives back `a`, `b`: undo the later of the
    /// two merges that made them, one at a time, and check that no pair across the boundary
    /// would have merged first.
    #[inline]
    fn valid(&self, mut a: Rank, mut b: Rank) -> bool {
        // the time the state (.., a, b, ..) stopped existing: a rank, or a rank + 1 when the
        // merge was right of the boundary (the leftmost of equal ranks goes first)
        let mut limit = u64::MAX;
        loop {
            if self
                .pairs
                .get(&pair_key(a, b))
                .is_some_and(|&r| (r as u64) < limit)
            {
                return false;
            }
            let (sa, sb) = (self.split[a as usize], self.split[b as usize]);
            let (ra, rb) = (self.rank[a as usize], self.rank[b as usize]);
            if sa.0 != NO && (sb.0 == NO || ra > rb) {
                limit = ra as u64;
                a = sa.1;
            } else if sb.0 != NO {
                limit = rb as u64 + 1;
                b = sb.0;
            } else {
                return true;
            }
        }
    }

    #[inline]
    fn longest(&self, piece: &[u8], at: usize) -> Rank {
        self.ac
            .find(Input::new(&piece[at..]).anchored(Anchored::Yes))
            .map_or(NO, |m| self.ids[m.pattern().as_usize()])
    }

    /// Appends the ids of `piece` to `out` (false, and nothing appended, if the search
    /// fails, which the vocabulary check rules out).
    pub fn encode(&self, piece: &[u8], out: &mut Vec<Rank>) -> bool {
        let n = piece.len();
        let start = out.len();
        // dead[i]: no valid encoding of piece[i..] follows the tokens that end at i
        let mut small = [false; 257];
        let mut large = Vec::new();
        let dead: &mut [bool] = if n < small.len() {
            &mut small
        } else {
            large.resize(n + 1, false);
            &mut large
        };
        let mut at = 0;
        let mut cand = self.longest(piece, 0);
        while at < n {
            if cand != NO {
                let end = at + self.len[cand as usize] as usize;
                let before = (out.len() > start).then(|| out[out.len() - 1]);
                if !dead[end] && before.is_none_or(|b| self.valid(b, cand)) {
                    out.push(cand);
                    at = end;
                    cand = if at < n { self.longest(piece, at) } else { NO };
                } else {
                    cand = self.next_prefix[cand as usize];
                }
            } else {
                dead[at] = true;
                let Some(last) = (out.len() > start).then(|| out.pop()).flatten() else {
                    return false;
                };
                at -= self.len[last as usize] as usize;
                cand = self.next_prefix[last as usize];
            }
        }
        true
    }
}

impl std::fmt::Debug for Backtrack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Backtrack({} tokens)", self.ids.len())
    }
}
