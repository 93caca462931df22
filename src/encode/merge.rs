//! Byte-pair merging inside one pre-token.
//!
//! Short pieces use a flat scan: with n symbols and m merges this is O(mn), and for the
//! handful of bytes of a typical pre-token nothing beats it. Long pieces (a megabyte of
//! one letter, a base64 blob) use a linked list of symbols and a queue of pairs made of one
//! bucket per rank, consumed left to right: time grows linearly with the length (plus a
//! log of the number of distinct ranks), so there is no quadratic worst case. Both pick
//! the lowest-rank pair and, among equal ranks, the leftmost, so they give identical ids.

use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

use super::atoms::{Atom, Atoms};
use crate::Rank;

/// Pieces longer than this (in bytes) go to the bucket queue.
const SCAN_MAX: usize = 128;

/// No merge for this pair.
pub const NONE: (u32, Rank) = (u32::MAX, 0);

/// Long pieces from this many bytes have their memory checked against a limit on address
/// space first (`room.rs`): their lists and queue take up to about 23 bytes a byte (a
/// 5 MB piece of ten letters repeated: 113 MB at the peak), asked for as `NEED_PER_BYTE`.
const CHECKED_FROM: usize = 1 << 12;
const NEED_PER_BYTE: usize = 40;

thread_local! {
    /// The memory a long piece's merge asked for and could not have (its ids are then
    /// missing), 0 if none: taken by the encode call that merged it, which fails with
    /// `Error::NoMemory` (a flag, not a `Result` through the scanner's inlined loop and the
    /// piece cache).
    static NO_MEMORY: Cell<usize> = const { Cell::new(0) };
}

/// The memory (bytes) a piece merged on this thread since the last call went without, for
/// want of it, its ids missing (0 if none; cleared).
pub fn take_no_memory() -> usize {
    NO_MEMORY.with(|flag| flag.replace(0))
}

/// The (rank, id) of the token two tokens make, if any: any `Fn(Rank, Rank)` of that, or a
/// type whose `pair` is `#[inline(always)]`, which merging then inlines (a closure around the
/// pair table stayed a call per lookup, a dozen for a word the piece cache has not seen).
pub trait Lookup {
    fn pair(&self, a: Rank, b: Rank) -> Option<(u32, Rank)>;
}

impl<F: Fn(Rank, Rank) -> Option<(u32, Rank)>> Lookup for F {
    #[inline(always)]
    fn pair(&self, a: Rank, b: Rank) -> Option<(u32, Rank)> {
        self(a, b)
    }
}

/// Merges `piece` and appends its ids to `out`. `lookup(a, b)` gives the (rank, id) of the
/// pair's concatenation, if it is a token; `byte_pairs`, if given, the same for every pair of
/// single bytes `a`, `b` at `a << 8 | b` (`NONE` for no token).
pub fn byte_pair_merge(
    piece: &[u8],
    byte_ids: &[Rank; 256],
    byte_pairs: Option<&[(u32, Rank)]>,
    atoms: Option<&Atoms>,
    lookup: impl Lookup,
    out: &mut Vec<Rank>,
) {
    if piece.len() <= SCAN_MAX {
        merge_scan(piece, byte_ids, byte_pairs, atoms, lookup, out)
    } else if piece.len() < u32::MAX as usize {
        merge_long::<u32>(piece, byte_ids, atoms, lookup, out)
    } else {
        merge_long::<usize>(piece, byte_ids, atoms, lookup, out)
    }
}

/// The symbols merging starts from at `piece[i]`: a whole character (one or two ids) where
/// `atoms` allows it, else the byte.
#[inline(always)]
fn first_symbols(piece: &[u8], i: usize, byte_ids: &[Rank; 256], atoms: Option<&Atoms>) -> Atom {
    let b = piece[i];
    let atom = match atoms {
        Some(a) if b >= 0xC2 => a.at(piece, i),
        _ => None,
    };
    atom.unwrap_or(Atom {
        ids: [byte_ids[b as usize], 0],
        count: 1,
        width: 1,
    })
}

fn merge_scan(
    piece: &[u8],
    byte_ids: &[Rank; 256],
    byte_pairs: Option<&[(u32, Rank)]>,
    atoms: Option<&Atoms>,
    lookup: impl Lookup,
    out: &mut Vec<Rank>,
) {
    let get = |a, b| lookup.pair(a, b).unwrap_or(NONE);
    // Fixed arrays on the stack: a short piece costs no allocation.
    let mut syms = [0 as Rank; SCAN_MAX];
    let mut pairs = [NONE; SCAN_MAX];
    // the symbols to start from: bytes, or whole characters where `atoms` says the merges
    // would form them first (`atoms.rs`). The first pairs of two bytes come from a flat
    // table in the CPU cache (a run of Chinese from bytes needs two lookups per byte in
    // all, half of them these).
    let mut n = 0;
    let mut i = 0;
    // the previous symbol's byte, if it is a single byte
    let mut prev_byte: Option<u8> = None;
    while i < piece.len() {
        let b = piece[i];
        let Atom { ids, count, width } = first_symbols(piece, i, byte_ids, atoms);
        if n > 0 {
            pairs[n - 1] = match (prev_byte, width, byte_pairs) {
                (Some(a), 1, Some(table)) => table[(a as usize) << 8 | b as usize],
                _ => get(syms[n - 1], ids[0]),
            };
        }
        syms[n] = ids[0];
        n += 1;
        if count == 2 {
            // (merging the character alone stopped at these two: no token joins them)
            pairs[n - 1] = NONE;
            syms[n] = ids[1];
            n += 1;
        }
        prev_byte = (width == 1).then_some(b);
        i += width;
    }
    // pairs[i] = (rank, id) of syms[i] + syms[i + 1], for i < len - 1
    let mut len = n;
    while len > 1 {
        let mut best = NONE.0;
        let mut at = 0;
        for (i, &(rank, _)) in pairs[..len - 1].iter().enumerate() {
            if rank < best {
                best = rank;
                at = i;
            }
        }
        if best == NONE.0 {
            break;
        }
        syms[at] = pairs[at].1;
        syms.copy_within(at + 2..len, at + 1);
        pairs.copy_within(at + 1..len - 1, at);
        len -= 1;
        if at + 1 < len {
            pairs[at] = get(syms[at], syms[at + 1]);
        }
        if at > 0 {
            pairs[at - 1] = get(syms[at - 1], syms[at]);
        }
    }
    out.extend_from_slice(&syms[..len]);
}

/// An index into a long piece: `u32` halves the memory (and the page faults) of the lists
/// of a long piece; a piece of 4 GiB or more uses `usize`.
trait Ix: Copy + Ord + Default {
    const END: Self;
    fn of(i: usize) -> Self;
    fn at(self) -> usize;
}

impl Ix for u32 {
    const END: u32 = u32::MAX;
    #[inline]
    fn of(i: usize) -> u32 {
        i as u32
    }
    #[inline]
    fn at(self) -> usize {
        self as usize
    }
}

impl Ix for usize {
    const END: usize = usize::MAX;
    #[inline]
    fn of(i: usize) -> usize {
        i
    }
    #[inline]
    fn at(self) -> usize {
        self
    }
}

/// Positions of the pairs of one rank, consumed left to right.
#[derive(Default)]
struct Bucket<I> {
    pos: Vec<I>,
    /// `pos[..done]` are consumed.
    done: usize,
    /// `pos[done..]` may be out of order (sorted before the next one is taken).
    unsorted: bool,
    /// The rank is in the queue of ranks.
    queued: bool,
}

/// A priority queue of pairs by (rank, position) made of one bucket per rank plus a small
/// heap of the ranks present. A bucket fills mostly in text order and is consumed left to
/// right, so a megabyte-long piece is merged in streaming passes over memory instead of
/// the random walks of one big heap.
struct Buckets<I> {
    buckets: Vec<Bucket<I>>,
    /// rank -> its bucket in `buckets`.
    by_rank: rustc_hash::FxHashMap<u32, usize>,
    ranks: BinaryHeap<Reverse<u32>>,
    /// (rank, bucket) of the last push, and of the last pop: pushes come in runs of one
    /// rank, pops too (hashing the rank for each was most of a push, a quarter of the time
    /// of a megabyte of one letter).
    pushed: (u32, usize),
    popped: (u32, usize),
}

impl<I: Ix> Buckets<I> {
    fn new() -> Self {
        Self {
            buckets: Vec::new(),
            by_rank: Default::default(),
            ranks: BinaryHeap::new(),
            // (no pair has rank NONE.0)
            pushed: (NONE.0, 0),
            popped: (NONE.0, 0),
        }
    }

    fn push(&mut self, rank: u32, i: I) {
        if self.pushed.0 != rank {
            let next = self.buckets.len();
            let k = *self.by_rank.entry(rank).or_insert(next);
            if k == next {
                self.buckets.push(Bucket::default());
            }
            self.pushed = (rank, k);
        }
        let b = &mut self.buckets[self.pushed.1];
        if b.pos.last().is_some_and(|&last| i < last) {
            b.unsorted = true;
        }
        b.pos.push(i);
        if !b.queued {
            b.queued = true;
            self.ranks.push(Reverse(rank));
        }
    }

    /// The leftmost position of the lowest rank for which `current(rank, i)` holds (stale
    /// entries, whose pair has changed since, are dropped).
    fn pop(&mut self, current: impl Fn(u32, usize) -> bool) -> Option<(u32, usize)> {
        while let Some(&Reverse(rank)) = self.ranks.peek() {
            if self.popped.0 != rank {
                let k = self.by_rank[&rank]; // (a queued rank has a bucket)
                self.popped = (rank, k);
            }
            let b = &mut self.buckets[self.popped.1];
            if b.unsorted {
                b.pos[b.done..].sort_unstable();
                b.unsorted = false;
            }
            while let Some(&i) = b.pos.get(b.done) {
                b.done += 1;
                if current(rank, i.at()) {
                    return Some((rank, i.at()));
                }
            }
            b.pos = Vec::new(); // a consumed bucket of a long run gives its memory back
            b.done = 0;
            b.queued = false;
            self.ranks.pop();
        }
        None
    }
}

/// One symbol of a long piece, its neighbours and the pair it starts: kept together so that
/// a merge touches one or two cache lines, not four arrays (a megabyte piece's lists are
/// tens of megabytes, far beyond the CPU caches).
#[derive(Clone, Copy)]
struct Node<I> {
    sym: Rank,
    /// (rank, id) of this symbol + the next (NONE if it is no token, or this symbol is
    /// merged away).
    pair: (u32, Rank),
    prev: I,
    /// The next symbol; a symbol merged away points to itself.
    next: I,
}

fn merge_long<I: Ix>(
    piece: &[u8],
    byte_ids: &[Rank; 256],
    atoms: Option<&Atoms>,
    lookup: impl Lookup,
    out: &mut Vec<Rank>,
) {
    if piece.is_empty() {
        return;
    }
    let need = piece.len().saturating_mul(NEED_PER_BYTE);
    let fits = piece.len() < CHECKED_FROM || crate::room::spare().is_none_or(|left| left >= need);
    // (in huge pages where Linux gives them, `huge.rs`: a fault per 2 MiB, not per 4 KiB;
    // two megabytes of spaces took 27 ms, not 36)
    let mut nodes = allocator_api2::vec::Vec::<Node<I>, _>::new_in(crate::huge::HugeAlloc);
    if !fits || nodes.try_reserve_exact(piece.len()).is_err() {
        NO_MEMORY.with(|flag| flag.set(need));
        return;
    }
    let end = I::END;
    // The queue holds (rank, i) for every current pair, plus stale entries: one is current
    // only if nodes[i].pair still has its rank. A merge never makes a pair of its own rank
    // (the new token is longer than the one of that rank), so a rank's bucket does not grow
    // while it is consumed; lower ranks that a merge makes (rank files need not be
    // monotone) go first, as the rule requires.
    let mut queue = Buckets::<I>::new();
    let mut i = 0;
    while i < piece.len() {
        let Atom { ids, count, width } = first_symbols(piece, i, byte_ids, atoms);
        for &sym in &ids[..count] {
            let k = nodes.len();
            // each pair looked up as its second symbol is added, the first one still in
            // the CPU's cache (in a pass of its own, after the list was made, the list was
            // read back from memory: two megabytes of spaces took 51 ms, now 38)
            if k > 0 {
                if let Some(p) = lookup.pair(nodes[k - 1].sym, sym) {
                    nodes[k - 1].pair = p;
                    queue.push(p.0, I::of(k - 1));
                }
            }
            nodes.push(Node {
                sym,
                pair: NONE,
                prev: if k == 0 { end } else { I::of(k - 1) },
                next: I::of(k + 1),
            });
        }
        i += width;
    }
    let n = nodes.len();
    nodes[n - 1].next = end;
    let mut live = n;
    while let Some((_, i)) = queue.pop(|rank, i| nodes[i].pair.0 == rank && rank != NONE.0) {
        let j = nodes[i].next;
        if j == end {
            continue;
        }
        let j = j.at();
        let id = nodes[i].pair.1;
        let after = nodes[j].next;
        nodes[i].sym = id;
        nodes[j].pair = NONE;
        nodes[j].next = I::of(j);
        nodes[i].next = after;
        if after != end {
            nodes[after.at()].prev = I::of(i);
        }
        // the two pairs around the new symbol
        if nodes[i].prev != end {
            let p = nodes[i].prev.at();
            nodes[p].pair = lookup.pair(nodes[p].sym, id).unwrap_or(NONE);
            if nodes[p].pair != NONE {
                queue.push(nodes[p].pair.0, I::of(p));
            }
        }
        nodes[i].pair = NONE;
        if after != end {
            if let Some(q) = lookup.pair(id, nodes[after.at()].sym) {
                nodes[i].pair = q;
                queue.push(q.0, I::of(i));
            }
        }
        live -= 1;
    }
    // the symbols left, in order: in index order, not by following `next` (each load
    // waited on the one before: two megabytes of spaces took 68 ms, now 51)
    out.reserve(live);
    out.extend(
        nodes
            .iter()
            .enumerate()
            .filter(|&(k, node)| node.next != I::of(k))
            .map(|(_, node)| node.sym),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rule written as plainly as possible: merge the leftmost lowest-rank pair, repeat.
    fn merge_naive(piece: &[u8], table: impl Fn(Rank, Rank) -> Option<(u32, Rank)>) -> Vec<Rank> {
        let mut syms: Vec<Rank> = piece.iter().map(|&b| b as Rank).collect();
        loop {
            let best = (0..syms.len().saturating_sub(1))
                .filter_map(|i| table(syms[i], syms[i + 1]).map(|(r, id)| (r, i, id)))
                .min();
            let Some((_, i, id)) = best else { return syms };
            syms[i] = id;
            syms.remove(i + 1);
        }
    }

    /// Both strategies must agree with the plain rule on every piece.
    #[test]
    fn scan_equals_long() {
        let byte_ids: [Rank; 256] = std::array::from_fn(|i| i as Rank);
        // merges over {a, b}: aa, ab, ba, bb get ranks; then 4-byte tokens
        let table = |a: Rank, b: Rank| -> Option<(u32, Rank)> {
            match (a, b) {
                (97, 97) => Some((3, 256)),
                (97, 98) => Some((1, 257)),
                (98, 97) => Some((2, 258)),
                (256, 257) => Some((4, 259)),
                (257, 257) => Some((5, 260)),
                (258, 97) => Some((6, 261)),
                // not monotone, as a rank file may be: "aab" ranks below "aa", which makes it
                (256, 98) => Some((0, 262)),
                (262, 97) => Some((2, 263)),
                _ => None,
            }
        };
        let mut seed = 12345u64;
        for len in [0usize, 1, 2, 3, 5, 17, 127, 128, 129, 200, 1000] {
            for _ in 0..50 {
                let piece: Vec<u8> = (0..len)
                    .map(|_| {
                        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1);
                        if (seed >> 33).is_multiple_of(2) {
                            b'a'
                        } else {
                            b'b'
                        }
                    })
                    .collect();
                let expected = merge_naive(&piece, table);
                let mut y = Vec::new();
                merge_long::<u32>(&piece, &byte_ids, None, table, &mut y);
                let mut z = Vec::new();
                merge_long::<usize>(&piece, &byte_ids, None, table, &mut z);
                assert_eq!(z, expected);
                assert_eq!(y, expected, "long {:?}", String::from_utf8_lossy(&piece));
                if len <= SCAN_MAX {
                    let mut x = Vec::new();
                    merge_scan(&piece, &byte_ids, None, None, table, &mut x);
                    assert_eq!(x, expected, "scan {:?}", String::from_utf8_lossy(&piece));
                    let flat: Vec<(u32, Rank)> = (0..1 << 16)
                        .map(|k| table(k >> 8, k & 0xFF).unwrap_or(NONE))
                        .collect();
                    let mut x = Vec::new();
                    merge_scan(&piece, &byte_ids, Some(&flat), None, table, &mut x);
                    assert_eq!(x, expected, "flat {:?}", String::from_utf8_lossy(&piece));
                }
            }
        }
    }
}
