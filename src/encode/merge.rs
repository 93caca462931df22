//! Byte-pair merging inside one pre-token.
//!
//! Short pieces use a flat scan: with n symbols and m merges this is O(mn), and for the
//! handful of bytes of a typical pre-token nothing beats it. Long pieces (a megabyte of
//! one letter, a base64 blob) use a min-heap over a linked list of symbols, O(n log n), so
//! there is no quadratic worst case. Both pick the lowest-rank pair and, among equal ranks,
//! the leftmost, so they give identical ids.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::Rank;

/// Pieces longer than this (in bytes) go to the heap.
const SCAN_MAX: usize = 128;

/// No merge for this pair.
const NONE: (u32, Rank) = (u32::MAX, 0);

/// Merges `piece` and appends its ids to `out`. `lookup(a, b)` gives the (rank, id) of the
/// pair's concatenation, if it is a token.
pub fn byte_pair_merge(
    piece: &[u8],
    byte_ids: &[Rank; 256],
    lookup: impl Fn(Rank, Rank) -> Option<(u32, Rank)>,
    out: &mut Vec<Rank>,
) {
    if piece.len() <= SCAN_MAX {
        merge_scan(piece, byte_ids, lookup, out)
    } else {
        merge_heap(piece, byte_ids, lookup, out)
    }
}

fn merge_scan(
    piece: &[u8],
    byte_ids: &[Rank; 256],
    lookup: impl Fn(Rank, Rank) -> Option<(u32, Rank)>,
    out: &mut Vec<Rank>,
) {
    let get = |a, b| lookup(a, b).unwrap_or(NONE);
    let mut syms: Vec<Rank> = piece.iter().map(|&b| byte_ids[b as usize]).collect();
    // pairs[i] = (rank, id) of syms[i] + syms[i + 1]
    let mut pairs: Vec<(u32, Rank)> = syms.windows(2).map(|w| get(w[0], w[1])).collect();
    loop {
        let mut best = NONE.0;
        let mut at = 0;
        for (i, &(rank, _)) in pairs.iter().enumerate() {
            if rank < best {
                best = rank;
                at = i;
            }
        }
        if best == NONE.0 {
            break;
        }
        syms[at] = pairs[at].1;
        syms.remove(at + 1);
        pairs.remove(at);
        if at < pairs.len() {
            pairs[at] = get(syms[at], syms[at + 1]);
        }
        if at > 0 {
            pairs[at - 1] = get(syms[at - 1], syms[at]);
        }
    }
    out.extend_from_slice(&syms);
}

fn merge_heap(
    piece: &[u8],
    byte_ids: &[Rank; 256],
    lookup: impl Fn(Rank, Rank) -> Option<(u32, Rank)>,
    out: &mut Vec<Rank>,
) {
    const END: usize = usize::MAX;
    let n = piece.len();
    let mut syms: Vec<Rank> = piece.iter().map(|&b| byte_ids[b as usize]).collect();
    let mut next: Vec<usize> = (1..=n).map(|i| if i == n { END } else { i }).collect();
    let mut prev: Vec<usize> = (0..n).map(|i| if i == 0 { END } else { i - 1 }).collect();
    let mut alive = vec![true; n];
    // (rank, position, left sym, right sym): position order is text order, so equal
    // ranks pop leftmost first. An entry is stale once either symbol has changed.
    let mut heap: BinaryHeap<Reverse<(u32, usize, Rank, Rank)>> = BinaryHeap::with_capacity(n);
    for i in 0..n - 1 {
        if let Some((rank, _)) = lookup(syms[i], syms[i + 1]) {
            heap.push(Reverse((rank, i, syms[i], syms[i + 1])));
        }
    }
    while let Some(Reverse((rank, i, a, b))) = heap.pop() {
        let j = next[i];
        if !alive[i] || j == END || syms[i] != a || syms[j] != b {
            continue;
        }
        let Some((_, id)) = lookup(a, b) else {
            continue;
        };
        syms[i] = id;
        alive[j] = false;
        next[i] = next[j];
        if next[j] != END {
            prev[next[j]] = i;
        }
        let _ = rank;
        if prev[i] != END {
            let p = prev[i];
            if let Some((r, _)) = lookup(syms[p], id) {
                heap.push(Reverse((r, p, syms[p], id)));
            }
        }
        if next[i] != END {
            let k = next[i];
            if let Some((r, _)) = lookup(id, syms[k]) {
                heap.push(Reverse((r, i, id, syms[k])));
            }
        }
    }
    let mut i = 0;
    while i != END {
        out.push(syms[i]);
        i = next[i];
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random-ish vocabularies: both strategies must agree on every piece.
    #[test]
    fn scan_equals_heap() {
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
                _ => None,
            }
        };
        let mut seed = 12345u64;
        for len in [1usize, 2, 3, 5, 17, 200, 1000] {
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
                let (mut x, mut y) = (Vec::new(), Vec::new());
                merge_scan(&piece, &byte_ids, table, &mut x);
                merge_heap(&piece, &byte_ids, table, &mut y);
                assert_eq!(x, y, "{:?}", String::from_utf8_lossy(&piece));
            }
        }
    }
}
