//! The pair table: (left id, right id) -> (rank of the concatenation, its id).
//!
//! Every adjacent pair of symbols in a piece is looked up here: about twenty lookups for a
//! word the piece cache has not seen, most waiting on the previous merge. The table holds
//! the one pair of each token that merging joins (`reachable_pairs` in `build.rs`; 200k pairs
//! for o200k, 2.1 MB), beyond the CPU's second-level cache. A pair and the id it makes are
//! packed into one word of a table of 64-byte lines (`lines.rs`: one line per lookup, where a hash map waits for its
//! control bytes and then its bucket): o200k English, one thread, the same slices of text
//! encoded by both in one process, 7-8% faster (code 5%, Russian 5%, Chinese even to 3%
//! slower). Vocabularies that do not fit the packing (ids of 21 bits or more, ranks not the
//! ids less one constant) keep a hash map.
//!
//! In text of a script with few long tokens (Chinese, Japanese) most pairs are no token:
//! two characters that are tokens each. A filter of two bits per pair in one word (512 KB,
//! within the second-level cache) answers most of them before the table (o200k, Chinese:
//! 19.5 -> 13.8 ns/B).

use rustc_hash::FxHashMap;

use super::lines::Lines;
use crate::Rank;

/// Bits of each id in a packed word: left, right and the concatenation's id.
const ID_BITS: u32 = 21;
const ID_MASK: u64 = (1 << ID_BITS) - 1;
/// Ids below this one can be packed (all ones in every field is `EMPTY`).
const ID_LIMIT: Rank = (1 << ID_BITS) - 1;

/// Words of the filter (2^16 x 8 bytes: 512 KB; 2^15 and 2^17 measured the same).
const FILTER_BITS: u32 = 16;

#[inline(always)]
fn key(a: Rank, b: Rank) -> u64 {
    ((a as u64) << 32) | b as u64
}

#[inline(always)]
fn hash(k: u64) -> u64 {
    (k ^ (k >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// The filter's word and two bits for a pair's key.
#[inline(always)]
fn filter_slot(k: u64) -> (usize, u64) {
    let h = hash(k);
    let word = (h >> (64 - FILTER_BITS)) as usize;
    (word, 1 << ((h >> 20) & 63) | 1 << ((h >> 26) & 63))
}

/// Two tokens and the token they make: ((left id, right id), (rank, id)).
pub type Pair = ((Rank, Rank), (u32, Rank));

#[derive(Debug, Clone)]
enum Repr {
    /// Words `left << 42 | right << 21 | id`; rank = id - `offset`.
    Packed {
        lines: Lines,
        offset: Rank,
        filter: Box<[u64]>,
    },
    Map {
        map: FxHashMap<u64, (u32, Rank)>,
        filter: Box<[u64]>,
    },
}

#[derive(Debug, Clone)]
pub struct PairTable(Repr);

impl super::merge::Lookup for &PairTable {
    #[inline(always)]
    fn pair(&self, a: Rank, b: Rank) -> Option<(u32, Rank)> {
        self.get(a, b)
    }
}

impl PairTable {
    /// The table of `pairs`: ((left id, right id), (rank, id)); a later entry for the same
    /// pair replaces an earlier one.
    pub fn new(pairs: impl IntoIterator<Item = Pair>) -> Self {
        let map: FxHashMap<u64, (u32, Rank)> = pairs
            .into_iter()
            .map(|((a, b), v)| (key(a, b), v))
            .collect();
        let filter = make_filter(&map);
        Self(match Self::packed_words(&map) {
            Some((words, offset)) => {
                // (the map is freed before the lines are made, not held with them: o200k's
                // is 4.5 MB)
                drop(map);
                let n_lines = Lines::lines_for(words.len());
                let words = words
                    .into_iter()
                    .map(|(k, id)| (hash(k), k << ID_BITS | id));
                Repr::Packed {
                    lines: Lines::new(words, n_lines),
                    offset,
                    filter,
                }
            }
            None => Repr::Map { map, filter },
        })
    }

    /// The words (packed key, id) of the packed form of `map`, lowest ranks first, and the
    /// offset of ids over ranks, if every id fits and every rank is its id less one offset.
    fn packed_words(map: &FxHashMap<u64, (u32, Rank)>) -> Option<(Vec<(u64, u64)>, Rank)> {
        let offset = map
            .values()
            .next()
            .map_or(0, |&(rank, id)| id.wrapping_sub(rank));
        let fits = map.iter().all(|(&k, &(rank, id))| {
            let (a, b) = ((k >> 32) as Rank, k as Rank);
            a < ID_LIMIT && b < ID_LIMIT && id < ID_LIMIT && id.wrapping_sub(rank) == offset
        });
        if !fits {
            return None;
        }
        // lowest ranks first: the pairs of common tokens take their own line
        let mut words: Vec<(u64, u64)> = map
            .iter()
            .map(|(&k, &(_, id))| (pack_key(k), id as u64))
            .collect();
        words.sort_unstable_by_key(|&(k, id)| (id, k));
        Some((words, offset))
    }

    /// (rank, id) of the token that `a` followed by `b` makes, if any.
    #[inline(always)]
    pub fn get(&self, a: Rank, b: Rank) -> Option<(u32, Rank)> {
        match &self.0 {
            Repr::Packed {
                lines,
                offset,
                filter,
            } => {
                if a >= ID_LIMIT || b >= ID_LIMIT {
                    return None;
                }
                let k = (a as u64) << ID_BITS | b as u64;
                let h = hash(k);
                // the line is asked for before the filter is read, not after it answered:
                // the two waits overlap (paired in one process against the build without,
                // 2 MB slices, one thread: cl100k English 1.08x, code 1.01x, o200k code
                // 1.02-1.08x, multilingual 1.00-1.05x)
                lines.prefetch(h);
                let (word, bits) = filter_slot(key(a, b));
                if filter[word] & bits != bits {
                    return None;
                }
                let found = lines.find(h, |w| w >> ID_BITS == k)?;
                let id = (found & ID_MASK) as Rank;
                Some((id.wrapping_sub(*offset), id))
            }
            Repr::Map { map, filter } => {
                let k = key(a, b);
                let (word, bits) = filter_slot(k);
                if filter[word] & bits != bits {
                    return None;
                }
                map.get(&k).copied()
            }
        }
    }

    /// Every ((left id, right id), (rank, id)) of the table.
    pub fn entries(&self) -> Box<dyn Iterator<Item = Pair> + '_> {
        match &self.0 {
            Repr::Packed { lines, offset, .. } => Box::new(lines.words().map(|w| {
                let id = (w & ID_MASK) as Rank;
                let (a, b) = (w >> (2 * ID_BITS), (w >> ID_BITS) & ID_MASK);
                ((a as Rank, b as Rank), (id.wrapping_sub(*offset), id))
            })),
            Repr::Map { map, .. } => Box::new(
                map.iter()
                    .map(|(&k, &v)| (((k >> 32) as Rank, k as Rank), v)),
            ),
        }
    }
}

fn make_filter(map: &FxHashMap<u64, (u32, Rank)>) -> Box<[u64]> {
    let mut filter = vec![0u64; 1 << FILTER_BITS].into_boxed_slice();
    for &k in map.keys() {
        let (word, bits) = filter_slot(k);
        filter[word] |= bits;
    }
    filter
}

/// `key(a, b)` with each id in `ID_BITS` bits.
#[inline(always)]
fn pack_key(k: u64) -> u64 {
    (k >> 32) << ID_BITS | (k & 0xFFFF_FFFF)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random_pairs(
        seed: u64,
        n: usize,
        ids: usize,
        value: impl Fn(u32) -> (u32, Rank),
    ) -> Vec<((Rank, Rank), (u32, Rank))> {
        let mut rng = crate::test_rng(seed);
        (0..n as u32)
            .map(|i| ((rng(ids) as Rank, rng(ids) as Rank), value(i)))
            .collect()
    }

    /// Both forms find every pair with its value (the last given for a repeated pair),
    /// and nothing else; and the filter of the map form turns away most absent pairs.
    #[test]
    fn every_pair_found_and_no_other() {
        // packed (rank = id - 3), packed with ids at the limit, and the map form (ranks
        // not a shift of the ids; ids beyond 21 bits)
        type Value = Box<dyn Fn(u32) -> (u32, Rank)>;
        let cases: [(usize, Value, bool); 4] = [
            (200_000, Box::new(|i| (i, i + 3)), true),
            (
                ID_LIMIT as usize,
                Box::new(|i| (i, ID_LIMIT - 300_000 + i)),
                true,
            ),
            (200_000, Box::new(|i| (i, i * 7 % 1_000_003)), false),
            (1 << 24, Box::new(|i| (i, i)), false),
        ];
        for (seed, (ids, value, packed)) in cases.into_iter().enumerate() {
            let mut pairs = random_pairs(seed as u64, 300_000, ids, &value);
            // a repeated pair takes its last value
            pairs.push((pairs[10].0, value(5)));
            let table = PairTable::new(pairs.iter().copied());
            assert_eq!(
                matches!(table.0, Repr::Packed { .. }),
                packed,
                "case {seed}"
            );
            let want: FxHashMap<(Rank, Rank), (u32, Rank)> = pairs.iter().copied().collect();
            for (&(a, b), &v) in &want {
                assert_eq!(table.get(a, b), Some(v), "case {seed}");
            }
            let mut got: Vec<_> = table.entries().collect();
            let mut all: Vec<_> = want.iter().map(|(&k, &v)| (k, v)).collect();
            got.sort_unstable();
            all.sort_unstable();
            assert_eq!(got, all, "case {seed}");
            let mut rng = crate::test_rng(seed as u64 + 100);
            let (mut absent, mut passed) = (0, 0);
            for _ in 0..100_000 {
                let (a, b) = (rng(ids) as Rank, rng(ids) as Rank);
                if !want.contains_key(&(a, b)) {
                    absent += 1;
                    assert_eq!(table.get(a, b), None, "case {seed}");
                    if let Repr::Map { filter, .. } = &table.0 {
                        let (word, bits) = filter_slot(key(a, b));
                        passed += (filter[word] & bits == bits) as u32;
                    }
                }
            }
            // (two bits per pair in 4M bits, 300k pairs: about 2% of the rest get through)
            assert!(
                passed * 20 < absent,
                "{passed} of {absent} passed the filter"
            );
            // ids too large for the packing are never found in a packed table
            assert_eq!(table.get(ID_LIMIT, 0), None);
            assert_eq!(table.get(u32::MAX, u32::MAX), None);
        }
    }
}
