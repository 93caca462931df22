//! A per-thread cache of pre-token -> ids, fixed size and allocation-free.
//!
//! Text repeats its words (Zipf's law), so most pre-tokens were seen a moment ago. A piece
//! hashes to one 64-byte line. Short pieces of few ids (most words) share a line two by two,
//! keyed by their bytes packed into two words (`key.rs`: one multiply to hash, two compares;
//! hashing and comparing byte by byte was a third of a hit): way 0 keeps the piece hit last,
//! a newcomer takes way 1, so the stream of words seen once that makes most misses cannot
//! push out a frequent word (o200k on 45 MB of English: 444k -> 221k misses, +7-13% speed).
//! Longer pieces, and short ones of many ids (a run of Chinese), have a line each in a second
//! table (a short one leaves a mark in its set, so a new short piece reads one line, not
//! two). A hit costs one hash and one or two cache lines, less than the vocabulary's hash
//! map (whose keys live behind a pointer) and far less than merging; a miss costs the same
//! plus a slot write, and never an allocation, so text that does not repeat loses almost
//! nothing. Each thread has its own tables (6 MiB), so no
//! locks are taken and an `Encoder` stays shareable between threads.

use std::cell::RefCell;
use std::hash::Hasher;

use rustc_hash::FxHasher;
use thread_local::ThreadLocal;

use super::key::{self, Key};
use crate::Rank;

/// Short pieces (most words): two slots of up to `SHORT_KEY` bytes and `SHORT_IDS` ids share
/// a 64-byte line, 2^`SHORT_BITS` lines.
const SHORT_KEY: usize = key::MAX;
const SHORT_IDS: usize = 3;
const SHORT_BITS: u32 = 16;
/// Longer pieces, or short ones of more ids (a run of Chinese): one slot of up to `LONG_KEY`
/// bytes and `LONG_IDS` ids per line, 2^`LONG_BITS` lines.
const LONG_KEY: usize = 30;
const LONG_IDS: usize = 8;
const LONG_BITS: u32 = 15;

#[derive(Clone, Copy)]
#[repr(C)]
struct Short {
    key: Key,
    n_ids: u32,
    ids: [Rank; SHORT_IDS],
}

impl Short {
    const EMPTY: Self = Self {
        key: [0; 2],
        n_ids: 0,
        ids: [0; SHORT_IDS],
    };

    /// `ids.len() <= SHORT_IDS`.
    #[inline(always)]
    fn new(key: Key, ids: &[Rank]) -> Self {
        let mut slot = Self {
            key,
            n_ids: ids.len() as u32,
            ..Self::EMPTY
        };
        slot.ids[..ids.len()].copy_from_slice(ids);
        slot
    }

    /// A short piece of more than `SHORT_IDS` ids is kept in the long table, and its key
    /// here with this count, so that a short piece not found here is not looked for there.
    const IN_LONG: u32 = u32::MAX;

    #[inline(always)]
    fn in_long(key: Key) -> Self {
        Self {
            key,
            n_ids: Self::IN_LONG,
            ..Self::EMPTY
        }
    }

    /// Appends the ids to `out` if this slot holds `key` with its ids.
    #[inline(always)]
    fn get(&self, key: Key, out: &mut Vec<Rank>) -> bool {
        if self.key != key || self.n_ids == Self::IN_LONG {
            return false;
        }
        copy_ids(&self.ids, self.n_ids as usize, out);
        true
    }
}

/// Appends `ids[..n]` to `out`.
#[inline(always)]
fn copy_ids<const I: usize>(ids: &[Rank; I], n: usize, out: &mut Vec<Rank>) {
    if out.capacity() - out.len() >= I {
        // copy all I ids, then drop the unused: a fixed-size copy is a few moves, a
        // variable-size one a call to memmove
        let end = out.len() + n;
        out.extend_from_slice(ids);
        out.truncate(end);
    } else {
        // (not at the cost of growing the output of a short text)
        out.extend_from_slice(&ids[..n]);
    }
}

#[derive(Clone, Copy)]
#[repr(C)]
struct Slot<const K: usize, const I: usize> {
    /// 0: empty (pieces are never empty).
    key_len: u8,
    n_ids: u8,
    key: [u8; K],
    ids: [Rank; I],
}

type Long = Slot<LONG_KEY, LONG_IDS>;

/// Two short slots in one cache line: way 0 holds the piece hit last, way 1 the newcomer.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct ShortSet([Short; 2]);

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct LongSet(Long);

const _: () = assert!(std::mem::size_of::<ShortSet>() == 64);
const _: () = assert!(std::mem::size_of::<LongSet>() == 64);

impl<const K: usize, const I: usize> Slot<K, I> {
    const EMPTY: Self = Self {
        key_len: 0,
        n_ids: 0,
        key: [0; K],
        ids: [0; I],
    };

    /// Appends this slot's ids to `out` if it holds `piece` (`piece.len() <= K`).
    #[inline(always)]
    fn get(&self, piece: &[u8], out: &mut Vec<Rank>) -> bool {
        if self.key_len as usize != piece.len() || !same(piece, &self.key) {
            return false;
        }
        copy_ids(&self.ids, self.n_ids as usize, out);
        true
    }

    /// Keeps `piece` -> `ids` (`piece.len() <= K`, `ids.len() <= I`).
    #[inline(always)]
    fn set(&mut self, piece: &[u8], ids: &[Rank]) {
        self.key_len = piece.len() as u8;
        self.key[..piece.len()].copy_from_slice(piece);
        self.n_ids = ids.len() as u8;
        self.ids[..ids.len()].copy_from_slice(ids);
    }
}

struct Tables {
    short: Box<[ShortSet]>,
    long: Box<[LongSet]>,
}

#[derive(Default)]
pub struct PieceCache {
    tables: ThreadLocal<RefCell<Tables>>,
}

impl PieceCache {
    /// Runs `f` with this thread's table. Not reentrant (an encode call never nests another).
    pub fn with<R>(&self, f: impl FnOnce(&mut Table<'_>) -> R) -> R {
        let cell = self.tables.get_or(|| {
            RefCell::new(Tables {
                short: vec![ShortSet([Short::EMPTY; 2]); 1 << SHORT_BITS].into_boxed_slice(),
                long: vec![LongSet(Long::EMPTY); 1 << LONG_BITS].into_boxed_slice(),
            })
        });
        let mut tables = cell.borrow_mut();
        f(&mut Table {
            tables: &mut tables,
        })
    }
}

/// One thread's table, borrowed for one encode call.
pub struct Table<'a> {
    tables: &'a mut Tables,
}

/// Pieces whose lines are on their way: each piece's line is asked of memory when the
/// piece arrives and read `AHEAD` pieces later.
const AHEAD: usize = 16;

/// A piece waiting in `Ahead`: its bytes, key (short pieces) and hash.
#[derive(Clone, Copy)]
struct Pending<'t> {
    piece: &'t [u8],
    key: Option<Key>,
    hash: u64,
}

/// The pieces of one text on their way through a `Table` (see `Table::push`).
pub struct Ahead<'t> {
    ring: [Option<Pending<'t>>; AHEAD],
    /// Pieces pushed so far; the oldest waiting one is at `next % AHEAD`.
    next: usize,
}

impl Default for Ahead<'_> {
    fn default() -> Self {
        Self {
            ring: [None; AHEAD],
            next: 0,
        }
    }
}

impl<'t> Table<'_> {
    /// The key (short pieces) and hash of `piece`, or None for a piece too long to keep.
    #[inline(always)]
    fn key_of(piece: &[u8], room: usize) -> Option<(Option<Key>, u64)> {
        let len = piece.len();
        if len <= SHORT_KEY {
            let key = key::pack(piece, room);
            Some((Some(key), key::hash(key)))
        } else if len <= LONG_KEY {
            let mut h = FxHasher::default();
            h.write(piece);
            Some((None, h.finish().wrapping_mul(0x9E37_79B9_7F4A_7C15)))
        } else {
            None
        }
    }

    /// Appends the ids of `piece` to `out`: from the table, or from `encode` (then kept).
    /// `room`: the bytes readable from the start of `piece` (it lies inside a longer text).
    #[inline]
    pub fn encode(
        &mut self,
        piece: &[u8],
        room: usize,
        out: &mut Vec<Rank>,
        encode: impl FnOnce(&[u8], &mut Vec<Rank>),
    ) {
        match Self::key_of(piece, room) {
            Some((key, hash)) => self.encode_keyed(piece, key, hash, out, encode),
            None => encode(piece, out),
        }
    }

    /// `encode` in a pipeline: `piece`'s line is fetched now and the piece encoded
    /// `AHEAD` pieces later (most lines come from beyond the CPU's second-level cache, and a
    /// hit waited on its line: two thirds of a hit's time). Ids come out in the order the
    /// pieces went in; `finish` encodes the pieces still waiting.
    #[inline]
    pub fn push(
        &mut self,
        ahead: &mut Ahead<'t>,
        piece: &'t [u8],
        room: usize,
        out: &mut Vec<Rank>,
        encode: impl Fn(&[u8], &mut Vec<Rank>),
    ) {
        let slot = ahead.next % AHEAD;
        if let Some(p) = ahead.ring[slot].take() {
            self.encode_keyed(p.piece, p.key, p.hash, out, &encode);
        }
        ahead.next += 1;
        match Self::key_of(piece, room) {
            Some((key, hash)) => {
                self.prefetch(key.is_some(), hash);
                ahead.ring[slot] = Some(Pending { piece, key, hash });
            }
            None => {
                // (too long to keep: encoded in turn, after the pieces before it)
                self.finish(ahead, out, &encode);
                encode(piece, out);
            }
        }
    }

    /// Encodes the pieces still waiting in `ahead`, in order.
    pub fn finish(
        &mut self,
        ahead: &mut Ahead<'t>,
        out: &mut Vec<Rank>,
        encode: impl Fn(&[u8], &mut Vec<Rank>),
    ) {
        for k in 0..AHEAD {
            let slot = (ahead.next + k) % AHEAD;
            if let Some(p) = ahead.ring[slot].take() {
                self.encode_keyed(p.piece, p.key, p.hash, out, &encode);
            }
        }
    }

    /// Asks the CPU for the line a piece of this hash is looked for in first.
    #[inline(always)]
    fn prefetch(&self, short: bool, hash: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let line = if short {
                &self.tables.short[(hash >> (64 - SHORT_BITS)) as usize] as *const ShortSet
                    as *const i8
            } else {
                &self.tables.long[(hash >> (64 - LONG_BITS)) as usize] as *const LongSet
                    as *const i8
            };
            // SAFETY: a prefetch is a hint; it reads nothing and cannot fault
            unsafe { _mm_prefetch(line, _MM_HINT_T0) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (short, hash);
    }

    /// `encode` of a piece whose key (short pieces) and hash are known.
    #[inline(always)]
    fn encode_keyed(
        &mut self,
        piece: &[u8],
        key: Option<Key>,
        hash: u64,
        out: &mut Vec<Rank>,
        encode: impl FnOnce(&[u8], &mut Vec<Rank>),
    ) {
        let set = &mut self.tables.short[(hash >> (64 - SHORT_BITS)) as usize].0;
        let long = &mut self.tables.long[(hash >> (64 - LONG_BITS)) as usize].0;
        // (a short piece is looked for in the long table only if its key here says so: a
        // miss, the case where that second line would come from memory, reads one line)
        let look_long = match key {
            Some(key) => {
                if set[0].get(key, out) {
                    return;
                }
                if set[1].get(key, out) {
                    set.swap(0, 1);
                    return;
                }
                set[0].key == key || set[1].key == key
            }
            None => true,
        };
        if look_long && long.get(piece, out) {
            return;
        }
        let start = out.len();
        encode(piece, out);
        let ids = &out[start..];
        match key {
            // a newcomer replaces way 1 only: the piece hit last stays until another is hit
            // twice, so a stream of words seen once cannot flush a frequent one
            Some(key) if ids.len() <= SHORT_IDS => set[1] = Short::new(key, ids),
            _ if ids.len() <= LONG_IDS => {
                long.set(piece, ids);
                if let Some(key) = key {
                    set[1] = Short::in_long(key);
                }
            }
            _ => {}
        }
    }
}

/// Whether `key` starts with `piece` (`piece.len() <= K`). Word-sized loads, the last one
/// overlapping, instead of a call to `memcmp`: the compare runs once per pre-token and a tenth
/// of encoding time went to the call.
#[inline(always)]
fn same<const K: usize>(piece: &[u8], key: &[u8; K]) -> bool {
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
        // many more distinct pieces than slots, lengths 1..=40 (1 to 14 ids: both tables, and
        // some above LONG_KEY), from a small alphabet so that prefixes and lengths collide
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
                    // the piece alone, or inside a longer text whose next bytes are read
                    // with it (and must not count)
                    let mut text = p.clone();
                    text.extend_from_slice(b"abcdabcdabcdabcd");
                    let room = if round == 0 { p.len() } else { text.len() };
                    table.encode(&text[..p.len()], room, &mut got, fake_encode);
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
        // the pipeline: ids in the order of the pieces, whatever their lengths (those too
        // long to keep are encoded in turn), repeats within the ring included, in texts of
        // every length around the ring's
        let mut text = Vec::new();
        let mut spans = Vec::new();
        for p in pieces.iter().take(3000) {
            spans.push(text.len()..text.len() + p.len());
            text.extend_from_slice(p);
        }
        for n in [
            0,
            1,
            AHEAD - 1,
            AHEAD,
            AHEAD + 1,
            3 * AHEAD + 5,
            spans.len(),
        ] {
            let fresh = PieceCache::default();
            let (mut got, mut want) = (Vec::new(), Vec::new());
            fresh.with(|table| {
                let mut ahead = Ahead::default();
                for r in &spans[..n] {
                    let room = text.len() - r.start;
                    table.push(&mut ahead, &text[r.clone()], room, &mut got, fake_encode);
                }
                table.finish(&mut ahead, &mut got, fake_encode);
            });
            for r in &spans[..n] {
                fake_encode(&text[r.clone()], &mut want);
            }
            assert_eq!(got, want, "{n} pieces");
        }
        // another thread has its own table, and a clone starts empty
        let copy = cache.clone();
        std::thread::scope(|s| {
            s.spawn(|| {
                copy.with(|table| {
                    let mut got = Vec::new();
                    table.encode(b"abc", 3, &mut got, fake_encode);
                    assert_eq!(got, [97 + 98 + 99 + 3000]);
                })
            });
        });
    }
}
