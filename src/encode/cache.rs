//! A per-thread cache of pre-token -> ids, fixed size and allocation-free.
//!
//! Text repeats its words (Zipf's law), so most pre-tokens were seen a moment ago. The cache is
//! direct-mapped: a piece hashes to one 64-byte slot holding up to `KEY_MAX` bytes of piece
//! and `IDS_MAX` ids; a new piece simply overwrites the slot. A hit costs one hash and one
//! cache line, less than the vocabulary's hash map (whose keys live behind a pointer) and far
//! less than merging; a miss costs the same plus a 64-byte write, and never an allocation, so
//! text that does not repeat (a long run of Chinese) loses almost nothing. Each thread has its
//! own table, so no locks are taken and an `Encoder` stays shareable between threads.

use std::cell::RefCell;
use std::hash::Hasher;

use rustc_hash::FxHasher;
use thread_local::ThreadLocal;

use crate::Rank;

/// Longest piece kept, in bytes.
const KEY_MAX: usize = 30;
/// Most ids kept for one piece.
const IDS_MAX: usize = 8;
/// Slots per thread: 2^16 x 64 bytes = 4 MiB (2^14 missed a fifth more of English words).
const SLOT_BITS: u32 = 16;

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Slot {
    /// 0: empty (pieces are never empty).
    key_len: u8,
    n_ids: u8,
    key: [u8; KEY_MAX],
    ids: [Rank; IDS_MAX],
}

const EMPTY: Slot = Slot {
    key_len: 0,
    n_ids: 0,
    key: [0; KEY_MAX],
    ids: [0; IDS_MAX],
};

#[derive(Default)]
pub struct PieceCache {
    tables: ThreadLocal<RefCell<Box<[Slot]>>>,
}

impl PieceCache {
    /// Runs `f` with this thread's table. Not reentrant (an encode call never nests another).
    pub fn with<R>(&self, f: impl FnOnce(&mut Table<'_>) -> R) -> R {
        let cell = self
            .tables
            .get_or(|| RefCell::new(vec![EMPTY; 1 << SLOT_BITS].into_boxed_slice()));
        let mut slots = cell.borrow_mut();
        f(&mut Table { slots: &mut slots })
    }
}

/// One thread's table, borrowed for one encode call.
pub struct Table<'a> {
    slots: &'a mut [Slot],
}

impl Table<'_> {
    /// Appends the ids of `piece` to `out`: from the table, or from `encode` (then kept).
    #[inline]
    pub fn encode(
        &mut self,
        piece: &[u8],
        out: &mut Vec<Rank>,
        encode: impl FnOnce(&[u8], &mut Vec<Rank>),
    ) {
        if piece.len() > KEY_MAX {
            return encode(piece, out);
        }
        let mut h = FxHasher::default();
        h.write(piece);
        // the high bits of a multiplicative hash are the well-mixed ones
        let i = (h.finish().wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - SLOT_BITS)) as usize;
        let slot = &mut self.slots[i];
        let len = piece.len();
        if slot.key_len as usize == len && same(piece, &slot.key) {
            let n = slot.n_ids as usize;
            if out.capacity() - out.len() >= IDS_MAX {
                // copy all IDS_MAX ids, then drop the unused: a fixed-size copy is a few
                // moves, a variable-size one a call to memmove
                let end = out.len() + n;
                out.extend_from_slice(&slot.ids);
                out.truncate(end);
            } else {
                // (not at the cost of growing the output of a short text)
                out.extend_from_slice(&slot.ids[..n]);
            }
            return;
        }
        let start = out.len();
        encode(piece, out);
        let ids = &out[start..];
        if ids.len() <= IDS_MAX {
            slot.key_len = len as u8;
            slot.key[..len].copy_from_slice(piece);
            slot.n_ids = ids.len() as u8;
            slot.ids[..ids.len()].copy_from_slice(ids);
        }
    }
}

/// Whether `key` starts with `piece` (`piece.len() <= KEY_MAX`). Word-sized loads, the last one
/// overlapping, instead of a call to `memcmp`: the compare runs once per pre-token and a tenth
/// of encoding time went to the call.
#[inline(always)]
fn same(piece: &[u8], key: &[u8; KEY_MAX]) -> bool {
    let n = piece.len();
    let word = |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().unwrap());
    if n >= 8 {
        let mut i = 0;
        while i + 8 < n {
            if word(piece, i) != word(key, i) {
                return false;
            }
            i += 8;
        }
        word(piece, n - 8) == word(key, n - 8)
    } else if n >= 4 {
        let half = |s: &[u8], i: usize| u32::from_le_bytes(s[i..i + 4].try_into().unwrap());
        half(piece, 0) == half(key, 0) && half(piece, n - 4) == half(key, n - 4)
    } else {
        piece.iter().zip(key).all(|(a, b)| a == b)
    }
}

// A copy of an encoder starts with empty tables.
impl Clone for PieceCache {
    fn clone(&self) -> Self {
        Self::default()
    }
}

impl std::fmt::Debug for PieceCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PieceCache")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in for merging: ids that depend on every byte and on the length.
    fn fake_encode(piece: &[u8], out: &mut Vec<Rank>) {
        out.extend(
            piece
                .chunks(3)
                .map(|c| c.iter().map(|&b| b as Rank).sum::<Rank>() + 1000 * c.len() as Rank),
        );
    }

    #[test]
    fn hits_equal_misses_whatever_the_collisions() {
        let cache = PieceCache::default();
        let mut seed = 7u64;
        let mut pieces: Vec<Vec<u8>> = Vec::new();
        // many more distinct pieces than slots, lengths 1..=40 (some above KEY_MAX), from a
        // small alphabet so that prefixes and lengths collide
        for _ in 0..100_000 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = 1 + (seed >> 58) as usize % 40;
            let piece = (0..len)
                .map(|k| b'a' + ((seed >> (k % 50)) & 3) as u8)
                .collect();
            pieces.push(piece);
        }
        cache.with(|table| {
            for round in 0..2 {
                for p in &pieces {
                    let (mut got, mut want) = (Vec::new(), Vec::new());
                    table.encode(p, &mut got, fake_encode);
                    fake_encode(p, &mut want);
                    assert_eq!(
                        got,
                        want,
                        "round {round}, piece {:?}",
                        String::from_utf8_lossy(p)
                    );
                }
            }
        });
        // another thread has its own table, and a clone starts empty
        let copy = cache.clone();
        std::thread::scope(|s| {
            s.spawn(|| {
                copy.with(|table| {
                    let mut got = Vec::new();
                    table.encode(b"abc", &mut got, fake_encode);
                    assert_eq!(got, [97 + 98 + 99 + 3000]);
                })
            });
        });
    }
}
