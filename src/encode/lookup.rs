//! Token bytes -> id, for building an encoder's tables (`build.rs`, `atoms.rs`).
//!
//! The construction looks up millions of byte strings (every split of every token). Keyed
//! by `Vec<u8>`, a lookup follows a pointer to the stored key and calls `memcmp` on it.
//! Pieces of up to 16 bytes (almost all of them) are looked up here by value instead, as two
//! words read from the piece plus its length; longer ones by their bytes. (Encoding looks
//! nothing up whole: `Encoder::unmade_tokens`.)

use rustc_hash::{FxBuildHasher, FxHashMap};

use crate::huge::HugeAlloc;
use crate::Rank;

/// A piece of at most 16 bytes as a value: its first and last (up to) eight bytes, which
/// together with the length cover every byte exactly once or overlapping.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct ShortKey(u64, u64, u8);

const SHORT_MAX: usize = 16;

/// The first and last (up to) eight bytes of `p` (at most 16 bytes) as two words: with the
/// length, every byte exactly once or overlapping.
#[inline(always)]
fn ends(p: &[u8]) -> (u64, u64) {
    let n = p.len();
    if n >= 8 {
        let word = |i: usize| u64::from_le_bytes(p[i..i + 8].try_into().unwrap());
        (word(0), word(n - 8))
    } else if n >= 4 {
        let half = |i: usize| u32::from_le_bytes(p[i..i + 4].try_into().unwrap()) as u64;
        (half(0), half(n - 4))
    } else if n > 0 {
        // n <= 3: the first, middle and last bytes are all of them
        let b = |i: usize| p[i] as u64;
        (b(0) | b(n / 2) << 8 | b(n - 1) << 16, 0)
    } else {
        (0, 0)
    }
}

#[inline(always)]
fn short_key(p: &[u8]) -> ShortKey {
    debug_assert!(p.len() <= SHORT_MAX);
    let (lo, hi) = ends(p);
    ShortKey(lo, hi, p.len() as u8)
}

#[derive(Debug, Clone, Default)]
pub struct TokenIds {
    /// (read at random places in megabytes: in 2 MiB pages, `huge.rs`)
    short: hashbrown::HashMap<ShortKey, Rank, FxBuildHasher, HugeAlloc>,
    long: FxHashMap<Vec<u8>, Rank>,
}

impl std::fmt::Debug for ShortKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ShortKey({} bytes)", self.2)
    }
}

impl TokenIds {
    pub fn new(ids: &FxHashMap<&[u8], Rank>) -> Self {
        let mut out = Self::default();
        for (&bytes, &id) in ids {
            if bytes.len() <= SHORT_MAX {
                out.short.insert(short_key(bytes), id);
            } else {
                out.long.insert(bytes.to_vec(), id);
            }
        }
        out
    }

    #[inline]
    pub fn get(&self, piece: &[u8]) -> Option<Rank> {
        if piece.len() <= SHORT_MAX {
            self.short.get(&short_key(piece)).copied()
        } else {
            self.long.get(piece).copied()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_piece_up_to_the_limit_has_its_own_key() {
        // all strings over a two-letter alphabet with a zero byte, lengths 0..=17: keys of
        // different pieces (same length or not) never collide, and lookups find each one
        let mut pieces: Vec<Vec<u8>> = vec![vec![]];
        let mut level = vec![vec![]];
        for _ in 0..17 {
            level = level
                .iter()
                .flat_map(|p: &Vec<u8>| {
                    [0u8, b'a', b'b'].map(|b| {
                        let mut q = p.clone();
                        q.push(b);
                        q
                    })
                })
                .filter(|q| q.len() < 12 || q.iter().filter(|&&b| b == 0).count() < 2)
                .take(200_000)
                .collect();
            pieces.extend(level.iter().cloned());
        }
        let ids: FxHashMap<&[u8], Rank> = pieces
            .iter()
            .enumerate()
            .filter(|(i, _)| i % 3 != 0)
            .map(|(i, p)| (&p[..], i as Rank))
            .collect();
        let table = TokenIds::new(&ids);
        assert_eq!(table.short.len() + table.long.len(), ids.len());
        for p in &pieces {
            assert_eq!(table.get(p), ids.get(&p[..]).copied(), "{p:?}");
        }
    }
}
