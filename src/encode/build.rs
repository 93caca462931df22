//! Building an encoder's tables from its vocabulary: every split of each token into two
//! tokens, the one pair of each that merging joins (the pair table), the pairs of single
//! bytes, and the helpers of that construction (its threads).

use rustc_hash::FxHashMap;

use super::lookup::TokenIds;
use super::merge;
use super::pairs::{Pair, PairTable};
use crate::Rank;

/// Merging of a few bytes, the plain way: the ids and the highest rank merged.
pub fn merge_with_max(
    bytes: &[u8],
    byte_ids: &[Rank; 256],
    lookup: impl Fn(Rank, Rank) -> Option<(u32, Rank)>,
) -> (Vec<Rank>, u32) {
    let mut syms: Vec<Rank> = bytes.iter().map(|&b| byte_ids[b as usize]).collect();
    let mut max_rank = 0;
    // the lowest rank, the leftmost among equal ones
    while let Some((rank, i, id)) = (1..syms.len())
        .filter_map(|i| lookup(syms[i - 1], syms[i]).map(|(r, id)| (r, i - 1, id)))
        .min()
    {
        max_rank = max_rank.max(rank);
        syms[i] = id;
        syms.remove(i + 1);
    }
    (syms, max_rank)
}

/// Every split of a ranked token into two tokens: ((left id, right id), (rank, id)).
pub fn every_split(
    ranks: &[(&[u8], u32)],
    token_ids: &FxHashMap<&[u8], Rank>,
    lookup: &TokenIds,
) -> Vec<Pair> {
    // Only split points where both halves have the length of some token can give two
    // tokens; checking just those keeps a vocabulary of a few very long tokens (trained
    // on "a" * 10**6, say) from costing the square of their length.
    let mut lengths: Vec<usize> = token_ids.keys().map(|k| k.len()).collect();
    lengths.sort_unstable();
    lengths.dedup();
    let has_length = |n: usize| lengths.binary_search(&n).is_ok();
    let mut pairs = Vec::with_capacity(ranks.len() * 2);
    for &(bytes, rank) in ranks {
        let Some(id) = lookup.get(bytes) else {
            continue; // (never: every ranked token is in the map)
        };
        for &k in lengths.iter().take_while(|&&k| k < bytes.len()) {
            if !has_length(bytes.len() - k) {
                continue;
            }
            let Some(l) = lookup.get(&bytes[..k]) else {
                continue;
            };
            if let Some(r) = lookup.get(&bytes[k..]) {
                pairs.push(((l, r), (rank, id)));
            }
        }
    }
    pairs
}

/// Of `pairs` (every split of each token, a token's splits next to each other), those that
/// merging can join: the last merge of BPE of each token's own bytes (`bytes_of` its id).
/// Merges inside the bytes a token ends up covering are those of BPE of its bytes alone, in
/// the same order (each was the lowest rank, leftmost, of the whole piece, so of the part),
/// so no other split of a token is ever the lowest pair and leaving it out changes no ids.
/// A token of one split keeps it without a look (if BPE never makes the token, the pair is
/// never the lowest either). o200k: 446k pairs -> 200k, 4.7 -> 2.1 MB: a lookup finds its
/// line in the CPU's caches more often.
pub fn reachable_pairs<'a>(
    pairs: Vec<Pair>,
    bytes_of: impl Fn(Rank) -> Option<&'a [u8]> + Sync,
    byte_ids: &[Rank; 256],
) -> PairTable {
    // (a plain map, not a `PairTable`: this one is only read here, and building the packed
    // form of every split held twice its memory at the peak of the construction)
    let table: FxHashMap<(Rank, Rank), (u32, Rank)> = pairs.iter().copied().collect();
    let get = |a, b| table.get(&(a, b)).copied();
    let byte_pairs = byte_pair_table(get, byte_ids);
    let tokens: Vec<&[_]> = pairs.chunk_by(|a, b| a.1 .1 == b.1 .1).collect();
    let kept = on_every_cpu(&tokens, |tokens| {
        let mut parts = Vec::new();
        let mut kept = Vec::with_capacity(tokens.len());
        for &splits in tokens {
            let (rank, id) = splits[0].1;
            let bytes = match bytes_of(id) {
                Some(bytes) if splits.len() > 1 => bytes,
                // (keeping a pair that is never the lowest changes nothing)
                _ => {
                    kept.extend_from_slice(splits);
                    continue;
                }
            };
            parts.clear();
            // (no atoms, nor pairs of bytes for a token of two: either could be the token)
            merge::byte_pair_merge(
                bytes,
                byte_ids,
                (bytes.len() > 2).then_some(&byte_pairs[..]),
                None,
                |a, b| get(a, b).filter(|&(_, made)| made != id),
                &mut parts,
            );
            if let [left, right] = parts[..] {
                if splits.iter().any(|s| s.0 == (left, right)) {
                    kept.push(((left, right), (rank, id)));
                }
            }
        }
        kept
    });
    // (freed before the table is made: o200k's splits and their map are 16 MB)
    drop(tokens);
    drop(table);
    drop(pairs);
    PairTable::new(kept)
}

/// (rank, id) of every pair of single bytes `a`, `b` at `a << 8 | b` (`merge::NONE`: no token).
pub fn byte_pair_table(
    get: impl Fn(Rank, Rank) -> Option<(u32, Rank)>,
    byte_ids: &[Rank; 256],
) -> Box<[(u32, Rank)]> {
    (0..1usize << 16)
        .map(|k| {
            let (a, b) = (byte_ids[k >> 8], byte_ids[k & 0xFF]);
            get(a, b).unwrap_or(merge::NONE)
        })
        .collect()
}

// (No `malloc_trim` after a construction: it gave 13 MB of o200k's freed temporaries back
// to the system, but the first encodes after it then faulted their output's pages in anew:
// cl100k multilingual 3-6% slower on the first slices.)

/// `f` of `items` cut into one part per CPU (at most eight), the results joined in order:
/// a vocabulary's construction looks up millions of pairs at random. Scoped threads of its
/// own, not rayon's global pool: a process forked from this one has none of its threads.
/// All on this thread where a limit on address space leaves no room for threads
/// (`room.rs`), and a part whose thread cannot start is done here too.
pub fn on_every_cpu<T: Sync, R: Send>(items: &[T], f: impl Fn(&[T]) -> Vec<R> + Sync) -> Vec<R> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
    if cpus == 1 || items.len() < 10_000 || !crate::room::threads_fit(cpus) {
        return f(items);
    }
    let f = &f;
    std::thread::scope(|s| {
        let parts: Vec<_> = items
            .chunks(items.len().div_ceil(cpus))
            .map(|part| {
                let thread = std::thread::Builder::new().spawn_scoped(s, move || f(part));
                (part, thread)
            })
            .collect();
        let parts: Vec<Vec<R>> = parts
            .into_iter()
            .map(|(part, thread)| match thread {
                Ok(t) => t.join().unwrap_or_else(|e| std::panic::resume_unwind(e)),
                Err(_) => f(part),
            })
            .collect();
        // (one allocation of the exact size: grown by doubling, o200k's 446k splits held
        // up to twice their 7 MB at the peak of the construction)
        let mut all = Vec::with_capacity(parts.iter().map(Vec::len).sum());
        for part in parts {
            all.extend(part);
        }
        all
    })
}
