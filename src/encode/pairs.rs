//! The pair table: (left id, right id) -> (rank of the concatenation, its id).
//!
//! Every adjacent pair of symbols in a piece is looked up here, and in text of a script
//! with few long tokens (Chinese, Japanese) most pairs are no token: two characters that
//! are tokens each. The table holds every split of every token into two tokens (446k pairs
//! for o200k, 8.5 MB), far beyond the CPU's second-level cache, so each such lookup waited
//! on the last-level cache. A filter of two bits per pair in one word (512 KB) answers most
//! of them first: a pair whose bits are not both set is no token (o200k, Chinese: 19.5 ->
//! 13.8 ns/B; English unchanged).

use rustc_hash::FxHashMap;

use crate::Rank;

/// Words of the filter (2^16 x 8 bytes: 512 KB; 2^15 and 2^17 measured the same).
const FILTER_BITS: u32 = 16;

#[inline]
fn key(a: Rank, b: Rank) -> u64 {
    ((a as u64) << 32) | b as u64
}

/// The filter's word and two bits for a pair's key.
#[inline(always)]
fn filter_slot(k: u64) -> (usize, u64) {
    let h = (k ^ (k >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let word = (h >> (64 - FILTER_BITS)) as usize;
    (word, 1 << ((h >> 20) & 63) | 1 << ((h >> 26) & 63))
}

#[derive(Debug, Clone)]
pub struct PairTable {
    map: FxHashMap<u64, (u32, Rank)>,
    filter: Box<[u64]>,
}

impl PairTable {
    /// The table of `pairs`: ((left id, right id), (rank, id)); a later entry for the same
    /// pair replaces an earlier one.
    pub fn new(pairs: impl IntoIterator<Item = ((Rank, Rank), (u32, Rank))>) -> Self {
        let mut map = FxHashMap::default();
        let mut filter = vec![0u64; 1 << FILTER_BITS].into_boxed_slice();
        for ((a, b), value) in pairs {
            let k = key(a, b);
            let (word, bits) = filter_slot(k);
            filter[word] |= bits;
            map.insert(k, value);
        }
        Self { map, filter }
    }

    /// (rank, id) of the token that `a` followed by `b` makes, if any.
    #[inline]
    pub fn get(&self, a: Rank, b: Rank) -> Option<(u32, Rank)> {
        let k = key(a, b);
        let (word, bits) = filter_slot(k);
        if self.filter[word] & bits != bits {
            return None;
        }
        self.map.get(&k).copied()
    }

    /// Every (rank, id) of the table.
    pub fn values(&self) -> impl Iterator<Item = (u32, Rank)> + '_ {
        self.map.values().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The filter never hides a pair of the table, and turns away most others.
    #[test]
    fn filter_keeps_every_pair() {
        let mut rng = crate::test_rng(7);
        let pairs: Vec<((Rank, Rank), (u32, Rank))> = (0..300_000)
            .map(|i| ((rng(200_000) as Rank, rng(200_000) as Rank), (i, i + 1)))
            .collect();
        let table = PairTable::new(pairs.iter().copied());
        let want: FxHashMap<(Rank, Rank), (u32, Rank)> = pairs.iter().copied().collect();
        for (&(a, b), &v) in &want {
            assert_eq!(table.get(a, b), Some(v));
        }
        let (mut absent, mut passed) = (0, 0);
        for _ in 0..100_000 {
            let (a, b) = (rng(200_000) as Rank, rng(200_000) as Rank);
            if !want.contains_key(&(a, b)) {
                absent += 1;
                assert_eq!(table.get(a, b), None);
                let (word, bits) = filter_slot(key(a, b));
                passed += (table.filter[word] & bits == bits) as u32;
            }
        }
        // (two bits per pair in 4M bits, 300k pairs: about 2% of the rest get through)
        assert!(
            passed * 20 < absent,
            "{passed} of {absent} absent pairs passed the filter"
        );
    }
}
