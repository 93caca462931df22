//! Characters that merging may start from whole ("atoms").
//!
//! A piece of Chinese, Hindi or Russian is two or three bytes per character, and merging it
//! from single bytes spends most of its merges putting each character back together. A
//! character `c` (two to four bytes; of four, those below U+20000, where most emoji are)
//! at `piece[i..i + n]` can start as one symbol when byte-level merging is sure to form it
//! before its bytes meet anything else, and to form it before it meets anything else
//! itself:
//! 1. merging `c`'s bytes alone gives the one token `c`; let `R` be the highest rank of
//!    those merges;
//! 2. no ranked token of rank <= `R` that occurs in the piece joins a part of `c` (a proper
//!    prefix or suffix of its bytes) to bytes outside it: until `c` is whole some merge
//!    inside it of rank <= `R` is pending, so a merge across its edge can only come later,
//!    and by then `c` is whole;
//! 3. no ranked token of rank <= `R` that occurs in the piece holds `c` whole plus more
//!    bytes, so that starting whole does not let `c` merge with a neighbour earlier than it
//!    could have.
//!
//! (The first merge across `c`'s edge makes a token that ends with a prefix of `c` or
//! starts with a suffix of it, `c` itself included; a token merged in a piece is a piece of
//! its bytes.) Merges elsewhere in the piece then happen in the same order as from bytes,
//! and the ids are the same (checked against byte-level merging in the tests, and against
//! tiktoken on every multilingual corpus in the Python tests).
//!
//! Whether a token of (2) or (3) occurs in the piece is decided by the byte right before
//! `c` (tokens that end inside `c`) and the byte right after it (tokens that start inside
//! it): a character keeps, for each side, the set of bytes that some such token of rank
//! <= `R` has there. Most characters have no such token at all; most others, such as the
//! Chinese characters of o200k that tokens join to a following character's first byte,
//! are atoms wherever their neighbour is not one of a handful of bytes. On o200k about
//! nine in ten characters of Chinese and Japanese text start whole.
//!
//! The same holds for a character of three or four bytes whose bytes merge alone into two
//! tokens (the highest rank of those merges `R`): it starts as those two, which no token
//! joins (in cl100k, where a third of the Chinese characters of a text are no token, that
//! is 35% less time on it).

use rustc_hash::FxHashMap;

use crate::Rank;

/// No atom for this code point.
const NONE: Rank = Rank::MAX;

/// Code points below this have a slot: the characters of two and three bytes, and those of
/// four in the first plane beyond (most emoji).
const END: u32 = 0x20000;

/// A set of bytes.
type ByteSet = [u64; 4];

#[inline]
fn has(set: &ByteSet, b: u8) -> bool {
    set[(b >> 6) as usize] >> (b & 63) & 1 == 1
}

fn add(set: &mut ByteSet, b: u8) {
    set[(b >> 6) as usize] |= 1 << (b & 63);
}

/// Atoms by code point (below `END`).
#[derive(Clone)]
pub struct Atoms {
    /// (first id, guard) by code point: the id is `NONE` for no atom; guard 0 means one id
    /// and an atom anywhere, else `guards[guard]` tells the rest.
    ids: Box<[(Rank, u32)]>,
    guards: Vec<Guard>,
}

/// What a character needs besides its first id: the bytes that may not stand before it
/// and after it, and its second id if merging its bytes alone ends in two tokens.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Guard {
    before: ByteSet,
    after: ByteSet,
    second: Rank,
}

/// The symbols a character starts as: one or two ids, and its width in bytes.
#[derive(Clone, Copy, Debug)]
pub struct Atom {
    pub ids: [Rank; 2],
    pub count: usize,
    pub width: usize,
}

impl std::fmt::Debug for Atoms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Atoms({}, {} guarded, {} of two ids)",
            self.count(),
            self.guarded(),
            self.pairs()
        )
    }
}

/// A key for up to four bytes: the length and the bytes.
#[inline]
fn short(b: &[u8]) -> u64 {
    debug_assert!(b.len() <= 4);
    b.iter().fold(b.len() as u64, |k, &x| (k << 8) | x as u64)
}

/// Lowest rank by neighbour byte, sparse: (byte, lowest rank of a token with it there).
type Neighbours = Vec<(u8, u32)>;

fn note(map: &mut FxHashMap<u64, Neighbours>, key: u64, byte: u8, rank: u32) {
    let v = map.entry(key).or_default();
    match v.iter_mut().find(|(b, _)| *b == byte) {
        Some(e) => e.1 = e.1.min(rank),
        None => v.push((byte, rank)),
    }
}

impl Atoms {
    /// The atoms of a vocabulary: `ranks` is every ranked token's bytes and rank, `token_id`
    /// the id of token bytes, `merge(bytes)` byte-level merging returning the ids and the
    /// highest rank merged.
    pub fn new(
        ranks: &FxHashMap<&[u8], u32>,
        token_id: impl Fn(&[u8]) -> Option<Rank>,
        merge: impl Fn(&[u8]) -> (Vec<Rank>, u32),
    ) -> Self {
        // for 1-4 bytes s: the bytes that follow s in a token that starts with s (`after`),
        // the bytes that precede s in a token that ends with s (`before`), each with the
        // lowest rank of such a token
        let mut after: FxHashMap<u64, Neighbours> = FxHashMap::default();
        let mut before: FxHashMap<u64, Neighbours> = FxHashMap::default();
        // (only where s can be a suffix, or a prefix, of a character: its bytes after the
        // first are continuation bytes, and its first one is not ASCII, or is a lead byte)
        let cont = |s: &[u8]| s.iter().all(|&b| b & 0xC0 == 0x80);
        for (&t, &r) in ranks {
            for k in 1..t.len().min(5) {
                let (head, tail) = (&t[..k], &t[t.len() - k..]);
                if head[0] >= 0x80 && cont(&head[1..]) {
                    note(&mut after, short(head), t[k], r);
                }
                if (0xC2..0xF5).contains(&tail[0]) && cont(&tail[1..]) {
                    note(&mut before, short(tail), t[t.len() - k - 1], r);
                }
            }
        }
        // the bytes with a token of rank <= limit there
        let at_most =
            |map: &FxHashMap<u64, Neighbours>, s: &[u8], limit: u32, set: &mut ByteSet| {
                for &(b, r) in map.get(&short(s)).into_iter().flatten() {
                    if r <= limit {
                        add(set, b);
                    }
                }
            };
        let mut ids = vec![(NONE, 0); END as usize].into_boxed_slice();
        let none = Guard {
            before: [0; 4],
            after: [0; 4],
            second: NONE,
        };
        let mut guards = vec![none]; // (index 0: nothing more)
        let mut guard_index: FxHashMap<Guard, u32> = FxHashMap::default();
        let mut buf = [0u8; 4];
        for cp in 0x80..END {
            let Some(c) = char::from_u32(cp) else {
                continue; // (surrogates)
            };
            let b = c.encode_utf8(&mut buf).as_bytes();
            let (merged, max_rank) = merge(b);
            let (first, second) = match merged[..] {
                [one] if token_id(b) == Some(one) => (one, NONE),
                [one, two] if b.len() >= 3 => (one, two),
                _ => continue, // (no merge, or a duplicate token's id)
            };
            // the bytes before `c` that end a token with a prefix of `c` (or `c` itself),
            // and the bytes after it that continue a token from a suffix of `c` (or `c`)
            let n = b.len();
            let mut guard = Guard { second, ..none };
            for j in 1..=n {
                at_most(&before, &b[..j], max_rank, &mut guard.before);
            }
            for j in 0..n {
                at_most(&after, &b[j..], max_rank, &mut guard.after);
            }
            let g = if guard == none {
                0
            } else {
                *guard_index.entry(guard).or_insert_with(|| {
                    guards.push(guard);
                    guards.len() as u32 - 1
                })
            };
            ids[cp as usize] = (first, g);
        }
        Self { ids, guards }
    }

    /// How many characters are atoms (guarded or not).
    pub fn count(&self) -> usize {
        self.ids.iter().filter(|&&(id, _)| id != NONE).count()
    }

    /// How many of them are atoms only between some neighbours.
    pub fn guarded(&self) -> usize {
        self.ids
            .iter()
            .filter(|&&(id, g)| {
                let guard = &self.guards[g as usize];
                id != NONE && (guard.before != [0; 4] || guard.after != [0; 4])
            })
            .count()
    }

    /// How many of them start as two ids.
    pub fn pairs(&self) -> usize {
        self.ids
            .iter()
            .filter(|&&(id, g)| id != NONE && self.guards[g as usize].second != NONE)
            .count()
    }

    /// The atom that starts at `p[i]`, if any: its neighbours in `p` decide a guarded one.
    /// Only well-formed UTF-8 is read as a character.
    #[inline]
    pub fn at(&self, p: &[u8], i: usize) -> Option<Atom> {
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
        } else if lead == 0xF0 {
            let cp = cont(1)? << 12 | cont(2)? << 6 | cont(3)?;
            if !(0x10000..END).contains(&cp) {
                return None; // (overlong, or beyond the table)
            }
            (cp, 4)
        } else {
            return None;
        };
        let (id, g) = self.ids[cp as usize];
        if id == NONE {
            return None;
        }
        let mut atom = Atom {
            ids: [id, NONE],
            count: 1,
            width: len,
        };
        if g != 0 {
            let guard = &self.guards[g as usize];
            if i > 0 && has(&guard.before, p[i - 1]) {
                return None;
            }
            if p.get(i + len).is_some_and(|&b| has(&guard.after, b)) {
                return None;
            }
            if guard.second != NONE {
                atom.ids[1] = guard.second;
                atom.count = 2;
            }
        }
        Some(atom)
    }
}
