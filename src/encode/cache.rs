//! A cache of pre-token -> ids shared by all threads, fixed size and allocation-free.
//!
//! Text repeats its words (Zipf's law), so most pre-tokens were seen a moment ago. A piece
//! hashes to one 64-byte line. Short pieces of few ids (most words) share a line two by two,
//! keyed by their bytes packed into two words (`key.rs`: one multiply to hash, two compares;
//! hashing and comparing byte by byte was a third of a hit): way 0 keeps the first piece that
//! came to the set, a newcomer takes way 1, so the stream of words seen once that makes most
//! misses cannot push out the common words met first. (Moving each piece hit in way 1 to way
//! 0 saves 1-4% of the misses, simulated on English, but writes on hits: lines that threads
//! share would go back and forth between their cores.) Longer pieces, and short ones of many ids (a run of Chinese), have
//! a line each in a second table (a short one leaves a mark in its set, so a new short piece
//! reads one line, not two). A hit costs one hash and one or two cache lines, less than the
//! vocabulary's hash map (whose keys live behind a pointer) and far less than merging; a miss
//! costs the same plus a line write, and never an allocation, so text that does not repeat
//! loses almost nothing.
//!
//! The short table has 2^17 sets (8 MiB), several times the distinct pieces of a few
//! megabytes of text. With 2^16, on the 3 MB slices of the code corpus, 6-9% of hits were
//! in way 1 (2-3% with 2^18) and 2-9% more pieces missed than with 2^18; 2^17 took 0.97x
//! the time on code and 0.91x on English (slices of a whole corpus one after another,
//! paired in one process), and 0.86-0.91x on a slice seen just before. 2^18 (16 MiB)
//! gained little more.
//!
//! The tables (10 MiB) are one per encoder, shared by the threads that encode with it: with a
//! table per thread, each of two threads learned the words of the text for itself (38% more
//! misses, each a merge, on 12 MB of English split over two threads). A line is read and
//! written as atomic words under a version in its last word (a seqlock): a reader keeps what
//! it read only if the version was even and did not change meanwhile; a writer
//! makes the version odd with a compare-and-swap (or gives up: the line is only a cache),
//! writes, and makes it even again. No lock is waited for, and a read that met a write is a
//! miss, never wrong ids.

use std::hash::Hasher;
use std::sync::atomic::{
    fence, AtomicU64,
    Ordering::{Acquire, Relaxed, Release},
};

use rustc_hash::{FxHashMap, FxHasher};

use super::key::{self, Key};
use crate::huge::{HugeSlice, Zeroable};
use crate::Rank;

/// Short pieces (most words): two slots of up to `SHORT_KEY` bytes and `SHORT_IDS` ids share
/// a 64-byte line, 2^`SHORT_BITS` lines.
const SHORT_KEY: usize = key::MAX;
const SHORT_IDS: usize = 3;
const SHORT_BITS: u32 = 17;
/// Longer pieces, or short ones of more ids (a run of Chinese): one slot of up to `LONG_KEY`
/// bytes and `LONG_IDS` ids per line, 2^`LONG_BITS` lines.
const LONG_KEY: usize = 30;
const LONG_IDS: usize = 7;
const LONG_BITS: u32 = 15;

/// One slot of a short set. `key[1]`'s top four bits (free: a key's last byte is its length,
/// at most 15) hold the number of ids, or `IN_LONG`; `tail` is the line's version in way 1.
#[derive(Clone, Copy)]
#[repr(C)]
struct Short {
    key: Key,
    ids: [Rank; SHORT_IDS],
    tail: u32,
}

/// The bits of `key[1]` that are the key's.
const KEY_BITS: u64 = (1 << 60) - 1;

impl Short {
    const EMPTY: Self = Self {
        key: [0; 2],
        ids: [0; SHORT_IDS],
        tail: 0,
    };

    /// `ids.len() <= SHORT_IDS`.
    #[inline(always)]
    fn new(key: Key, ids: &[Rank]) -> Self {
        let mut slot = Self {
            key: [key[0], key[1] | (ids.len() as u64) << 60],
            ..Self::EMPTY
        };
        slot.ids[..ids.len()].copy_from_slice(ids);
        slot
    }

    /// A short piece of more than `SHORT_IDS` ids is kept in the long table, and its key
    /// here with this count, so that a short piece not found here is not looked for there.
    const IN_LONG: u64 = 15;

    #[inline(always)]
    fn in_long(key: Key) -> Self {
        Self {
            key: [key[0], key[1] | Self::IN_LONG << 60],
            ..Self::EMPTY
        }
    }

    #[inline(always)]
    fn holds(&self, key: Key) -> bool {
        self.key[0] == key[0] && self.key[1] & KEY_BITS == key[1]
    }

    #[inline(always)]
    fn is_empty(&self) -> bool {
        self.key[1] == 0
    }

    /// Appends the ids to `out` if this slot holds `key` with its ids.
    #[inline(always)]
    fn get(&self, key: Key, out: &mut Vec<Rank>) -> bool {
        let n = self.key[1] >> 60;
        if !self.holds(key) || n == Self::IN_LONG {
            return false;
        }
        copy_ids(&self.ids, n as usize, out);
        true
    }
}

/// Appends `ids[..n]` to `out`.
#[inline(always)]
fn copy_ids<const I: usize>(ids: &[Rank; I], n: usize, out: &mut Vec<Rank>) {
    let len = out.len();
    if out.capacity() - len >= I {
        // all I ids copied, the first n counted: a fixed-size copy is a few moves, where
        // `extend_from_slice` was a call to memmove (10% of encoding time when not inlined)
        // SAFETY: there is room for I more ids; the n of them that are counted are written
        unsafe {
            out.as_mut_ptr().add(len).cast::<[Rank; I]>().write(*ids);
            out.set_len(len + n);
        }
    } else {
        // (not at the cost of growing the output of a short text)
        out.extend_from_slice(&ids[..n]);
    }
}

/// The slot of a long line; `version` is the line's.
#[derive(Clone, Copy)]
#[repr(C)]
struct Long {
    /// 0: empty (pieces are never empty).
    key_len: u8,
    n_ids: u8,
    key: [u8; LONG_KEY],
    ids: [Rank; LONG_IDS],
    version: u32,
}

/// Two short slots in one line: way 0 holds the first piece of the set, way 1 the newcomer.
type ShortSet = [Short; 2];

const _: () = assert!(std::mem::size_of::<ShortSet>() == 64);
const _: () = assert!(std::mem::size_of::<Long>() == 64);

impl Long {
    const EMPTY: Self = Self {
        key_len: 0,
        n_ids: 0,
        key: [0; LONG_KEY],
        ids: [0; LONG_IDS],
        version: 0,
    };

    /// Appends this slot's ids to `out` if it holds `piece` (`piece.len() <= LONG_KEY`).
    #[inline(always)]
    fn get(&self, piece: &[u8], out: &mut Vec<Rank>) -> bool {
        if self.key_len as usize != piece.len() || !same(piece, &self.key) {
            return false;
        }
        copy_ids(&self.ids, self.n_ids as usize, out);
        true
    }

    /// `piece` -> `ids` (`piece.len() <= LONG_KEY`, `ids.len() <= LONG_IDS`).
    #[inline(always)]
    fn new(piece: &[u8], ids: &[Rank]) -> Self {
        let mut slot = Self {
            key_len: piece.len() as u8,
            n_ids: ids.len() as u8,
            ..Self::EMPTY
        };
        slot.key[..piece.len()].copy_from_slice(piece);
        slot.ids[..ids.len()].copy_from_slice(ids);
        slot
    }
}

/// A 64-byte line of eight words, shared by threads; the high half of the last word is its
/// version (even: at rest, odd: being written).
#[repr(C, align(64))]
struct Line([AtomicU64; 8]);

/// A line's contents, as read at one version.
type Words = [u64; 8];

impl Line {
    /// A consistent copy of the line and its version, or None if a writer is at it.
    #[inline(always)]
    fn read(&self) -> Option<(Words, u64)> {
        let version = self.0[7].load(Acquire) >> 32;
        if version & 1 == 1 {
            return None;
        }
        let words = std::array::from_fn(|i| self.0[i].load(Relaxed));
        // (the words' loads may not pass the version's second load)
        fence(Acquire);
        (self.0[7].load(Relaxed) >> 32 == version).then_some((words, version))
    }

    /// Appends the ids of `key` to `out` if this short set holds them: a hit, read in place
    /// (copying the whole line first cost 10% more time on English).
    #[inline(always)]
    fn short_get(&self, key: Key, out: &mut Vec<Rank>) -> bool {
        let before = self.0[7].load(Acquire);
        // the way's words from `w` on: its key (with the count of ids), then its ids
        let way = |w: usize| {
            let (k0, k1) = (self.0[w].load(Relaxed), self.0[w + 1].load(Relaxed));
            (k0 == key[0] && k1 & KEY_BITS == key[1]).then_some((w, k1 >> 60))
        };
        let Some((w, n)) = way(0).or_else(|| way(4)) else {
            return false;
        };
        let (a, b) = (self.0[w + 2].load(Relaxed), self.0[w + 3].load(Relaxed));
        fence(Acquire);
        let after = self.0[7].load(Relaxed);
        // (an odd version: a writer was at the line all along)
        if (before ^ after) >> 32 != 0 || before & 1 << 32 != 0 || n == Short::IN_LONG {
            return false;
        }
        copy_ids(&[a as Rank, (a >> 32) as Rank, b as Rank], n as usize, out);
        true
    }

    /// Writes `words` if the line is still at `version` (else another thread wrote it since
    /// it was read, or writes it now: this write is dropped).
    #[cold]
    fn write(&self, version: u64, words: Words) {
        let now = self.0[7].load(Relaxed);
        let busy = (now & 0xFFFF_FFFF) | (version + 1) << 32;
        if now >> 32 != version
            || version & 1 == 1
            || self.0[7]
                .compare_exchange(now, busy, Acquire, Relaxed)
                .is_err()
        {
            return;
        }
        // (the words' stores may not pass the odd version's)
        fence(Release);
        for (word, &w) in self.0[..7].iter().zip(&words) {
            word.store(w, Relaxed);
        }
        let done = (words[7] & 0xFFFF_FFFF) | ((version + 2) & 0xFFFF_FFFF) << 32;
        self.0[7].store(done, Release);
    }
}

/// The short set in `words`.
#[inline(always)]
fn short_set(words: Words) -> ShortSet {
    // SAFETY: both are 64 bytes of plain integers, any bits valid (asserted above)
    unsafe { std::mem::transmute(words) }
}

/// The long slot in `words`.
#[inline(always)]
fn long_slot(words: Words) -> Long {
    // SAFETY: as for `short_set`
    unsafe { std::mem::transmute(words) }
}

fn words<T: Copy>(value: T) -> Words {
    assert!(std::mem::size_of::<T>() == 64);
    // SAFETY: `T` is one of the 64-byte line types above, plain integers without padding
    unsafe { std::mem::transmute_copy(&value) }
}

// SAFETY: eight atomic words
unsafe impl Zeroable for Line {}

/// The two tables. Made with the encoder, not on first use: a first use under a `OnceLock`
/// in one thread while another forked the process left the child's lock taken for ever (its
/// first encode hung; found by QA). Zeroed lines are empty slots at version 0, their pages
/// given by the system as first touched, in 2 MiB pages where it can (`huge.rs`).
pub struct PieceCache {
    short: HugeSlice<Line>,
    long: HugeSlice<Line>,
}

impl Default for PieceCache {
    fn default() -> Self {
        Self {
            short: HugeSlice::zeroed(1 << SHORT_BITS),
            long: HugeSlice::zeroed(1 << LONG_BITS),
        }
    }
}

impl PieceCache {
    /// Runs `f` with the tables.
    pub fn with<R>(&self, f: impl FnOnce(&mut Table<'_>) -> R) -> R {
        f(&mut Table { tables: self })
    }
}

/// The tables, as one encode call uses them.
pub struct Table<'a> {
    tables: &'a PieceCache,
}

/// Pieces whose lines are on their way: each piece's line is asked of memory when the
/// piece arrives and read `AHEAD` pieces later.
const AHEAD: usize = 16;

/// A piece waiting in `Ahead`.
#[derive(Clone, Copy)]
enum Pending<'t> {
    /// A piece the tables may hold: its bytes, key (short pieces) and hash.
    Kept {
        piece: &'t [u8],
        key: Option<Key>,
        hash: u64,
    },
    /// A piece too long for the tables (`LONG_KEY`).
    Long(&'t [u8]),
}

/// Pieces too long for the tables whose ids one call remembers (`Ahead::long`), and the ids
/// it holds for them in all: bounds on its memory, whatever the text.
const LONG_PIECES: usize = 1024;
const LONG_IDS_HELD: usize = 1 << 16;

/// The pieces of one text on their way through a `Table` (see `Table::push`).
pub struct Ahead<'t> {
    ring: [Option<Pending<'t>>; AHEAD],
    /// Pieces pushed so far; the oldest waiting one is at `next % AHEAD`.
    next: usize,
    /// Pieces too long for the tables, met in this text, and where their ids are in
    /// `long_ids`: a run of indentation or a line of `#` recurs through a file of code (3 MB
    /// of the code corpus: 425 such pieces, 57 distinct), and merging one (~450 ns) costs
    /// as much as twenty-odd hits.
    long: FxHashMap<&'t [u8], (u32, u32)>,
    long_ids: Vec<Rank>,
}

impl Default for Ahead<'_> {
    fn default() -> Self {
        Self {
            ring: [None; AHEAD],
            next: 0,
            long: FxHashMap::default(),
            long_ids: Vec::new(),
        }
    }
}

impl<'t> Ahead<'t> {
    /// Appends the ids of `piece`, too long for the tables: remembered, or from `encode`.
    #[cold]
    fn encode_long(
        &mut self,
        piece: &'t [u8],
        out: &mut Vec<Rank>,
        encode: impl FnOnce(&[u8], &mut Vec<Rank>),
    ) {
        if let Some(&(start, len)) = self.long.get(piece) {
            out.extend_from_slice(&self.long_ids[start as usize..(start + len) as usize]);
            return;
        }
        let start = out.len();
        encode(piece, out);
        let ids = &out[start..];
        if self.long.len() < LONG_PIECES && self.long_ids.len() + ids.len() <= LONG_IDS_HELD {
            let at = self.long_ids.len() as u32;
            self.long_ids.extend_from_slice(ids);
            self.long.insert(piece, (at, ids.len() as u32));
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
    /// hit waited on its line: two thirds of a hit's time). A piece too long for the tables
    /// takes its turn in the ring too (it used to empty the ring first, and the pieces after
    /// it met their lines not yet there). Ids come out in the order the pieces went in;
    /// `finish` encodes the pieces still waiting.
    #[inline(always)]
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
            self.encode_pending(ahead, p, out, &encode);
        }
        ahead.next += 1;
        ahead.ring[slot] = Some(match Self::key_of(piece, room) {
            Some((key, hash)) => {
                self.prefetch(key.is_some(), hash);
                Pending::Kept { piece, key, hash }
            }
            None => Pending::Long(piece),
        });
    }

    /// Encodes the pieces still waiting in `ahead`, in order.
    pub fn finish(
        &mut self,
        ahead: &mut Ahead<'t>,
        out: &mut Vec<Rank>,
        encode: impl Fn(&[u8], &mut Vec<Rank>),
    ) {
        // (only the slots in use: a text of a few pieces, one of a batch of short strings,
        // looked at all sixteen)
        for k in AHEAD - ahead.next.min(AHEAD)..AHEAD {
            let slot = (ahead.next + k) % AHEAD;
            if let Some(p) = ahead.ring[slot].take() {
                self.encode_pending(ahead, p, out, &encode);
            }
        }
    }

    /// `encode` of a piece leaving the ring.
    #[inline(always)]
    fn encode_pending(
        &mut self,
        ahead: &mut Ahead<'t>,
        p: Pending<'t>,
        out: &mut Vec<Rank>,
        encode: impl Fn(&[u8], &mut Vec<Rank>),
    ) {
        match p {
            Pending::Kept { piece, key, hash } => self.encode_keyed(piece, key, hash, out, encode),
            Pending::Long(piece) => ahead.encode_long(piece, out, encode),
        }
    }

    /// Asks the CPU for the line a piece of this hash is looked for in first.
    #[inline(always)]
    fn prefetch(&self, short: bool, hash: u64) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let line = if short {
                &self.tables.short[(hash >> (64 - SHORT_BITS)) as usize] as *const Line as *const i8
            } else {
                &self.tables.long[(hash >> (64 - LONG_BITS)) as usize] as *const Line as *const i8
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
        let short = &self.tables.short[(hash >> (64 - SHORT_BITS)) as usize];
        let long = &self.tables.long[(hash >> (64 - LONG_BITS)) as usize];
        if let Some(key) = key {
            if short.short_get(key, out) {
                return;
            }
        }
        Self::encode_rest(short, long, piece, key, out, encode)
    }

    /// `encode_keyed` past a miss in `short_get` (out of line: hits are most calls): the
    /// long table, then `encode`, and the ids kept.
    #[inline(never)]
    fn encode_rest(
        short: &Line,
        long: &Line,
        piece: &[u8],
        key: Option<Key>,
        out: &mut Vec<Rank>,
        encode: impl FnOnce(&[u8], &mut Vec<Rank>),
    ) {
        // the short set as read, to be written back with a newcomer
        let mut seen = None;
        // (a short piece is looked for in the long table only if its key here says so: a
        // miss, the case where that second line would come from memory, reads one line)
        let look_long = match (key, key.and_then(|_| short.read())) {
            (Some(key), Some((words_read, version))) => {
                let set = short_set(words_read);
                // (written meanwhile: this thread's `short_get` found neither way)
                if set[0].get(key, out) || set[1].get(key, out) {
                    return;
                }
                seen = Some((set, version));
                set[0].holds(key) || set[1].holds(key)
            }
            // (a long piece, or a writer was at the short set)
            _ => true,
        };
        if look_long {
            if let Some((words_read, _)) = long.read() {
                if long_slot(words_read).get(piece, out) {
                    return;
                }
            }
        }
        let start = out.len();
        encode(piece, out);
        keep(short, seen, long, piece, key, &out[start..]);
    }
}

/// Keeps `piece` -> `ids` after a miss: in the short set read as `seen` (None: it could not
/// be read, or the piece has no key), or in the long line with a mark in the short set.
#[cold]
fn keep(
    short: &Line,
    seen: Option<(ShortSet, u64)>,
    long: &Line,
    piece: &[u8],
    key: Option<Key>,
    ids: &[Rank],
) {
    // a newcomer takes way 1 (way 0 while it is empty, or the way of its own mark)
    let put = |key: Key, slot: Short| {
        if let Some((mut set, version)) = seen {
            let way = if set[0].holds(key) || set[0].is_empty() {
                0
            } else {
                1
            };
            set[way] = slot;
            short.write(version, words(set));
        }
    };
    match key {
        Some(key) if ids.len() <= SHORT_IDS => put(key, Short::new(key, ids)),
        _ if ids.len() <= LONG_IDS => {
            if let Some((_, version)) = long.read() {
                long.write(version, words(Long::new(piece, ids)));
            }
            if let Some(key) = key {
                put(key, Short::in_long(key));
            }
        }
        _ => {}
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

    /// Runs `f(thread, table)` on four threads at once, all with the tables of `cache`.
    fn on_four_threads(cache: &PieceCache, f: impl Fn(u64, &mut Table<'_>) + Sync) {
        std::thread::scope(|s| {
            for t in 0..4 {
                let f = &f;
                s.spawn(move || cache.with(|table| f(t, table)));
            }
        });
    }

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
        // pieces too long for the tables, each met many times among others (remembered by
        // the call) and more distinct ones than it remembers: ids in order all the same
        let mut text = Vec::new();
        let mut spans = Vec::new();
        for i in 0..3 * LONG_PIECES {
            let long = match i % 3 {
                0 => vec![b' '; LONG_KEY + 1 + i % 7],
                1 => vec![b'#'; 100 + i % 2],
                _ => format!("{:0>40}", i).into_bytes(),
            };
            for p in [&long[..], &pieces[i % pieces.len()][..], &long[..]] {
                spans.push(text.len()..text.len() + p.len());
                text.extend_from_slice(p);
            }
        }
        let (mut got, mut want) = (Vec::new(), Vec::new());
        PieceCache::default().with(|table| {
            let mut ahead = Ahead::default();
            for r in &spans {
                let room = text.len() - r.start;
                table.push(&mut ahead, &text[r.clone()], room, &mut got, fake_encode);
            }
            table.finish(&mut ahead, &mut got, fake_encode);
            assert!(ahead.long.len() <= LONG_PIECES && ahead.long_ids.len() <= LONG_IDS_HELD);
        });
        for r in &spans {
            fake_encode(&text[r.clone()], &mut want);
        }
        assert_eq!(got, want, "long pieces");
        // another thread finds what this one kept (without encoding), and a clone starts empty
        let mut kept = Vec::new();
        cache.with(|table| table.encode(b"zyzzyva", 7, &mut kept, fake_encode));
        std::thread::scope(|s| {
            s.spawn(|| {
                cache.with(|table| {
                    let mut got = Vec::new();
                    table.encode(b"zyzzyva", 7, &mut got, |_, _| panic!("not kept"));
                    assert_eq!(got, kept);
                })
            });
        });
        let copy = cache.clone();
        let mut calls = 0;
        copy.with(|table| {
            let mut got = Vec::new();
            table.encode(b"zyzzyva", 7, &mut got, |p, o| {
                calls += 1;
                fake_encode(p, o)
            });
            assert_eq!(got, kept);
        });
        assert_eq!(calls, 1);
    }

    #[test]
    fn line_versions() {
        let line = Line(Default::default());
        let (words0, v0) = line.read().unwrap();
        assert_eq!((words0, v0), ([0; 8], 0));
        let new: Words = std::array::from_fn(|i| 0x1111 * (i as u64 + 1));
        line.write(v0, new);
        let (got, v1) = line.read().unwrap();
        assert_eq!(v1, 2);
        assert_eq!(got[..7], new[..7]);
        assert_eq!(got[7], (new[7] & 0xFFFF_FFFF) | 2 << 32);
        // a write from a read of an older version is dropped
        line.write(v0, [7; 8]);
        assert_eq!(line.read().unwrap(), (got, 2));
        // while a writer holds the line (odd version) it cannot be read or written
        line.0[7].store(3 << 32, Relaxed);
        assert!(line.read().is_none());
        line.write(3, [7; 8]);
        line.write(2, [7; 8]);
        assert_eq!(line.0[0].load(Relaxed), new[0]);
        // a short set is searched in place: its ids come out only at an even, unchanged version
        let key = key::pack(b"word", 4);
        let set = [Short::new(key, &[7, 8]), Short::EMPTY];
        let line = Line(Default::default());
        line.write(0, words(set));
        let mut got = Vec::new();
        assert!(line.short_get(key, &mut got) && got == [7, 8]);
        let at_rest = line.0[7].load(Relaxed);
        line.0[7].store(at_rest | 1 << 32, Relaxed);
        assert!(!line.short_get(key, &mut got) && got == [7, 8]);
        line.0[7].store(at_rest, Relaxed);
        assert!(!line.short_get(key::pack(b"wore", 4), &mut got) && got == [7, 8]);
        // versions wrap within their 32 bits
        line.0[7].store(0xFFFF_FFFE << 32, Relaxed);
        line.write(0xFFFF_FFFE, new);
        assert_eq!(line.read().unwrap().1, 0);
    }

    /// Threads that encode the same pieces at once, most of them colliding in the tables
    /// (many more pieces than slots), so that reads meet writes: every id right.
    #[test]
    fn threads_sharing_the_tables_get_the_ids_of_their_pieces() {
        let mut seed = 11u64;
        let pieces: Vec<Vec<u8>> = (0..200_000)
            .map(|_| {
                seed = seed
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let len = 1 + (seed >> 58) as usize % 34;
                (0..len)
                    .map(|k| b'a' + ((seed >> (k % 50)) & 7) as u8)
                    .collect()
            })
            .collect();
        on_four_threads(&PieceCache::default(), |t, table| {
            for round in 0..3 {
                let mut got = Vec::new();
                let mut ahead = Ahead::default();
                let order = |i: usize| (i * (2 * t as usize + 1) + round * 7919) % pieces.len();
                for i in 0..pieces.len() {
                    let p = &pieces[order(i)];
                    table.push(&mut ahead, p, p.len(), &mut got, fake_encode);
                }
                table.finish(&mut ahead, &mut got, fake_encode);
                let mut want = Vec::new();
                for i in 0..pieces.len() {
                    fake_encode(&pieces[order(i)], &mut want);
                }
                assert!(got == want, "thread {t}, round {round}");
            }
        });
    }

    /// Threads that keep encoding pieces of the same two short sets and two long lines, so
    /// that many reads meet writes: a read that mixed two writes would give ids of the wrong
    /// piece. (A race test only meets the interleavings that happen to occur; `line_versions`
    /// checks the protocol's rules one by one.)
    #[test]
    fn reads_that_meet_writes_are_misses() {
        let set_of = |p: &[u8]| {
            let hash = if p.len() <= SHORT_KEY {
                key::hash(key::pack(p, p.len()))
            } else {
                Table::key_of(p, p.len()).unwrap().1
            };
            let bits = if p.len() <= SHORT_KEY {
                SHORT_BITS
            } else {
                LONG_BITS
            };
            (p.len() <= SHORT_KEY, hash >> (64 - bits))
        };
        let mut seed = 3u64;
        let mut pieces: Vec<Vec<u8>> = Vec::new();
        let mut sets = Vec::new();
        while pieces.len() < 40 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            // short pieces of 1-3 ids (fake_encode: one id per 3 bytes), long ones of up to 7
            let len = [1, 4, 9, 16, 21][(seed >> 40) as usize % 5];
            let piece: Vec<u8> = (0..len)
                .map(|k| b'a' + ((seed >> (k % 60)) & 15) as u8)
                .collect();
            let set = set_of(&piece);
            if sets.len() < 4
                && !sets.contains(&set)
                && sets.iter().filter(|s: &&(bool, u64)| s.0 == set.0).count() < 2
            {
                sets.push(set);
            }
            if sets.contains(&set) && !pieces.contains(&piece) {
                pieces.push(piece);
            }
        }
        on_four_threads(&PieceCache::default(), |t, table| {
            let mut r = t + 1;
            for _ in 0..300_000 {
                r = r.wrapping_mul(6364136223846793005).wrapping_add(1);
                let p = &pieces[(r >> 33) as usize % pieces.len()];
                let (mut got, mut want) = (Vec::new(), Vec::new());
                table.encode(p, p.len(), &mut got, fake_encode);
                fake_encode(p, &mut want);
                assert_eq!(got, want, "thread {t}");
            }
        });
    }
}
