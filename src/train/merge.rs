//! The merge loop: learn merges from pre-token counts.
//!
//! Pair counts are kept up to date incrementally: a merge touches only the words (distinct
//! pre-tokens) that contain the merged pair, found through a pair -> words index, and
//! changes only the pairs next to each merged occurrence. The best pair comes from a
//! max-heap refreshed lazily: counts of existing pairs only fall, so a popped entry whose
//! count is stale is pushed back with its current count, and an entry whose count is
//! current is the true maximum. There is never a full recount per merge.
//!
//! Tie rule (DESIGN.md §2, the CS336 reference): highest count, then the lexicographically
//! greatest (left bytes, right bytes).

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};

use super::{PretokenCounts, Progress, ProgressFn};
use crate::{Error, Pair, Rank, Result};

/// The result of training: the vocabulary (id -> bytes: 256 single bytes, then the special
/// tokens, then one token per merge) and the merges as id pairs, in learned order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trained {
    /// Token bytes by id.
    pub vocab: Vec<Vec<u8>>,
    /// Learned merges, in order; merge i created token `256 + n_special + i`.
    pub merges: Vec<Pair>,
}

/// A candidate merge in the heap: ordered by count, then by the pair's bytes.
struct MergeJob {
    count: u64,
    pair: Pair,
    left: Rc<[u8]>,
    right: Rc<[u8]>,
}

impl Ord for MergeJob {
    fn cmp(&self, other: &Self) -> Ordering {
        // Max-heap: higher count first; on a tie the greater (left, right) bytes first.
        self.count
            .cmp(&other.count)
            .then_with(|| self.left.cmp(&other.left))
            .then_with(|| self.right.cmp(&other.right))
    }
}

impl PartialOrd for MergeJob {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for MergeJob {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for MergeJob {}

/// Replaces every non-overlapping occurrence of `pair`, left to right, with `new_id`, and
/// applies the change to `pair_counts` (weighted by the word's count `freq`). Pairs that
/// appear (they all contain `new_id`) are added to `appeared`. `scratch` is a reused
/// buffer. A word listed for the pair that no longer holds it (the pair -> words index is
/// never pruned) is left alone after one scan, without copying.
fn merge_word(
    word: &mut Vec<Rank>,
    pair: Pair,
    new_id: Rank,
    freq: i64,
    pair_counts: &mut FxHashMap<Pair, i64>,
    appeared: &mut Vec<Pair>,
    scratch: &mut Vec<Rank>,
) {
    let (a, b) = pair;
    let Some(first) = word.windows(2).position(|w| w[0] == a && w[1] == b) else {
        return;
    };
    scratch.clear();
    scratch.extend_from_slice(word);
    let old: &[Rank] = scratch;
    let n = old.len();
    word.truncate(first);
    let out = word;
    // Old pairs next to a merged occurrence disappear; `removed_upto` keeps a pair shared
    // by two neighbouring occurrences (a b a b) from being removed twice.
    let mut removed_upto = 0usize; // old pairs [0, removed_upto) are handled
    let mut remove = |j: usize, counts: &mut FxHashMap<Pair, i64>| {
        if j + 1 > removed_upto {
            *counts.entry((old[j], old[j + 1])).or_insert(0) -= freq;
            removed_upto = j + 1;
        }
    };
    let mut i = first;
    while i < n {
        if i + 1 < n && old[i] == a && old[i + 1] == b {
            if i > 0 {
                remove(i - 1, pair_counts);
            }
            remove(i, pair_counts);
            if i + 2 < n {
                remove(i + 1, pair_counts);
            }
            out.push(new_id);
            i += 2;
        } else {
            out.push(old[i]);
            i += 1;
        }
    }
    for k in first.saturating_sub(1)..out.len().saturating_sub(1) {
        if out[k] == new_id || out[k + 1] == new_id {
            let p = (out[k], out[k + 1]);
            *pair_counts.entry(p).or_insert(0) += freq;
            appeared.push(p);
        }
    }
}

/// Pair counts and the pair -> words index of the initial words, built in parallel.
fn initial_pairs(
    words: &[Vec<Rank>],
    freqs: &[i64],
) -> (FxHashMap<Pair, i64>, FxHashMap<Pair, Vec<u32>>) {
    type Maps = (FxHashMap<Pair, i64>, FxHashMap<Pair, Vec<u32>>);
    let empty = || (FxHashMap::default(), FxHashMap::default());
    let merge = |mut a: Maps, mut b: Maps| -> Maps {
        if a.0.len() < b.0.len() {
            std::mem::swap(&mut a, &mut b);
        }
        for (p, c) in b.0 {
            *a.0.entry(p).or_insert(0) += c;
        }
        for (p, w) in b.1 {
            a.1.entry(p).or_default().extend(w);
        }
        a
    };
    (0..words.len())
        .into_par_iter()
        .fold(empty, |mut acc: Maps, i| {
            for w in words[i].windows(2) {
                let p = (w[0], w[1]);
                *acc.0.entry(p).or_insert(0) += freqs[i];
                acc.1.entry(p).or_default().push(i as u32);
            }
            acc
        })
        .reduce(empty, merge)
}

/// Options of the merge loop.
#[derive(Debug, Clone, Copy, Default)]
pub struct MergeOptions<'a> {
    /// Stop when the most frequent pair occurs fewer times than this.
    pub min_frequency: u64,
    /// Never create a token longer than this many bytes (such pairs are passed over).
    pub max_token_length: Option<usize>,
    /// Set by another thread to stop the loop (Ctrl-C): it ends with `Error::Interrupted`
    /// before its next merge.
    pub stop: Option<&'a AtomicBool>,
}

/// Learns merges from pre-token counts until the vocabulary has `vocab_size` tokens
/// (256 bytes + special tokens + merges) or no pair is left.
pub fn train_from_counts(
    counts: &PretokenCounts,
    vocab_size: usize,
    special_tokens: &[String],
    options: MergeOptions<'_>,
    progress: ProgressFn,
) -> Result<Trained> {
    let base = 256 + special_tokens.len();
    if vocab_size < base {
        return Err(Error::Invalid(format!(
            "vocab_size {vocab_size} is below 256 bytes + {} special token(s) = {base}",
            special_tokens.len()
        )));
    }
    let mut vocab: Vec<Vec<u8>> = (0..=255u8).map(|b| vec![b]).collect();
    vocab.extend(special_tokens.iter().map(|s| s.as_bytes().to_vec()));
    let bytes_to_ids = |k: &[u8]| k.iter().map(|&b| b as Rank).collect();
    merge_words(counts, &bytes_to_ids, vocab, vocab_size, options, progress)
}

/// Continued training: learns new merges on top of an existing vocabulary. Each distinct
/// pre-token is first encoded with the existing tokenizer (`encode`, its own BPE); the
/// merge loop then runs on those token sequences with the usual rules, and new tokens
/// take the ids after the last existing one. `base_vocab[id]` is the bytes of token `id`
/// (empty for an id that is not a mergeable token, such as a special token).
/// The result's `vocab` includes the base; `merges` holds the new merges only.
pub fn train_continue(
    counts: &PretokenCounts,
    base_vocab: Vec<Vec<u8>>,
    encode: &(dyn Fn(&[u8]) -> Vec<Rank> + Sync),
    vocab_size: usize,
    options: MergeOptions<'_>,
    progress: ProgressFn,
) -> Result<Trained> {
    if vocab_size < base_vocab.len() {
        return Err(Error::Invalid(format!(
            "vocab_size {vocab_size} is below the {} tokens the tokenizer already has",
            base_vocab.len()
        )));
    }
    merge_words(counts, encode, base_vocab, vocab_size, options, progress)
}

/// The merge loop over the distinct pre-tokens of `counts`, each turned into token ids
/// by `to_ids`, with `vocab` as the tokens so far.
fn merge_words(
    counts: &PretokenCounts,
    to_ids: &(dyn Fn(&[u8]) -> Vec<Rank> + Sync),
    vocab: Vec<Vec<u8>>,
    vocab_size: usize,
    options: MergeOptions<'_>,
    progress: ProgressFn,
) -> Result<Trained> {
    if counts.counts.is_empty() {
        return Err(Error::Invalid(
            "no pre-tokens to train on: the corpus is empty (no text outside special tokens), \
             or the pattern matches none of its text"
                .into(),
        ));
    }
    if vocab_size > Rank::MAX as usize {
        return Err(Error::Invalid(format!(
            "vocab_size {vocab_size} is too large"
        )));
    }
    let base = vocab.len();

    // 1. Words: the distinct pre-tokens as token ids, with their counts. Sorting makes the
    //    run independent of hash order (the result does not depend on it either way).
    let mut entries: Vec<(&Vec<u8>, u64)> = counts
        .counts
        .iter()
        .filter(|(k, _)| k.len() >= 2)
        .map(|(k, &v)| (k, v))
        .collect();
    entries.par_sort_unstable();
    // Every pair count is at most the pairs of all words together; kept below 2^63, no
    // count can wrap (pair counts are signed: a merge takes counts away)
    let pairs: u128 = entries
        .iter()
        .map(|&(k, v)| v as u128 * (k.len() as u128 - 1))
        .sum();
    if pairs > i64::MAX as u128 {
        return Err(Error::Invalid(format!(
            "the counts are too large to train on exactly: their words hold {pairs} pairs in \
             all, and pair counts are 63-bit (at most {})",
            i64::MAX
        )));
    }
    let (mut words, freqs): (Vec<Vec<Rank>>, Vec<i64>) = entries
        .par_iter()
        .map(|&(k, v)| (to_ids(k), v as i64))
        .filter(|(w, _)| w.len() >= 2)
        .unzip();
    drop(entries);
    let mut vocab: Vec<Rc<[u8]>> = vocab.into_iter().map(Rc::from).collect();

    // 2. Initial pair counts and where each pair occurs.
    let (mut pair_counts, mut where_to_update) = initial_pairs(&words, &freqs);

    // 3. The heap of candidate merges; a pair that would make a token longer than
    //    `max_token_length` never enters it.
    let fits = |pair: Pair, vocab: &[Rc<[u8]>]| {
        options
            .max_token_length
            .is_none_or(|m| vocab[pair.0 as usize].len() + vocab[pair.1 as usize].len() <= m)
    };
    let job = |pair: Pair, count: i64, vocab: &[Rc<[u8]>]| MergeJob {
        count: count as u64,
        pair,
        left: vocab[pair.0 as usize].clone(),
        right: vocab[pair.1 as usize].clone(),
    };
    let mut heap: BinaryHeap<MergeJob> = pair_counts
        .iter()
        .filter(|(&p, &c)| c > 0 && fits(p, &vocab))
        .map(|(&p, &c)| job(p, c, &vocab))
        .collect();

    // 4. Merge until the vocabulary is full.
    let total = (vocab_size - base) as u64;
    // (room for the merges the pairs at hand can start, not for all `total` asked: a
    // vocab_size of billions on a small corpus reserved gigabytes and aborted the process)
    let mut merges: Vec<Pair> = Vec::with_capacity((total as usize).min(heap.len()));
    let mut appeared: Vec<Pair> = Vec::new();
    let mut scratch: Vec<Rank> = Vec::new();
    let report_every = (total / 200).max(1);
    while vocab.len() < vocab_size {
        if options.stop.is_some_and(|s| s.load(Relaxed)) {
            return Err(Error::Interrupted);
        }
        let Some(top) = heap.pop() else { break };
        let current = pair_counts.get(&top.pair).copied().unwrap_or(0);
        if current <= 0 {
            continue;
        }
        if current as u64 != top.count {
            heap.push(job(top.pair, current, &vocab));
            continue;
        }
        if (current as u64) < options.min_frequency {
            break; // the most frequent pair is rarer than asked for
        }
        let new_id = vocab.len() as Rank;
        let merged: Vec<u8> = [&*top.left, &*top.right].concat();
        vocab.push(Rc::from(merged));
        merges.push(top.pair);

        let mut touched = where_to_update.remove(&top.pair).unwrap_or_default();
        touched.sort_unstable();
        touched.dedup();
        appeared.clear();
        for &w in &touched {
            let w = w as usize;
            let before = appeared.len();
            merge_word(
                &mut words[w],
                top.pair,
                new_id,
                freqs[w],
                &mut pair_counts,
                &mut appeared,
                &mut scratch,
            );
            for &p in &appeared[before..] {
                where_to_update.entry(p).or_default().push(w as u32);
            }
        }
        pair_counts.remove(&top.pair);
        let fresh: FxHashSet<Pair> = appeared.iter().copied().collect();
        for p in fresh {
            let c = pair_counts[&p];
            if c > 0 && fits(p, &vocab) {
                heap.push(job(p, c, &vocab));
            }
        }
        let done = merges.len() as u64;
        if done.is_multiple_of(report_every) || done == total {
            progress(Progress::Merging { done, total });
        }
    }
    Ok(Trained {
        vocab: vocab.iter().map(|t| t.to_vec()).collect(),
        merges,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::train::{count_texts, no_progress};

    fn merges_bytes(t: &Trained) -> Vec<(String, String)> {
        t.merges
            .iter()
            .map(|&(a, b)| {
                (
                    String::from_utf8_lossy(&t.vocab[a as usize]).into_owned(),
                    String::from_utf8_lossy(&t.vocab[b as usize]).into_owned(),
                )
            })
            .collect()
    }

    #[test]
    fn low_lower_lowest() {
        // Pre-tokens: "low" x2, " low" x1, " lower" x1, " lowest" x1 (gpt2 pattern).
        // Pair counts: (l,o)=5, (o,w)=5, ( ,l)=3, (w,e)=2, ... -> tie 5/5 goes to the
        // greater pair ("o","w") > ("l","o"); then (l, ow)=5.
        let counts =
            count_texts(&["low low lower lowest"], "gpt2", &[], Default::default()).unwrap();
        let t = train_from_counts(&counts, 258, &[], Default::default(), &no_progress).unwrap();
        assert_eq!(
            merges_bytes(&t),
            [("o".into(), "w".into()), ("l".into(), "ow".into())]
        );
        assert_eq!(t.vocab[257], b"low");
    }

    #[test]
    fn overlapping_pair_counts_stay_exact() {
        // "aaaa" (one word, count 1): (a,a) has 3 occurrences, merging gives [aa, aa], then
        // (aa,aa) -> aaaa. Counts must stay exact through the overlap.
        let counts = count_texts(&["aaaa"], "gpt2", &[], Default::default()).unwrap();
        let t = train_from_counts(&counts, 300, &[], Default::default(), &no_progress).unwrap();
        assert_eq!(t.merges, [(97, 97), (256, 256)]);
        assert_eq!(t.vocab.len(), 258); // stopped early: no pair left
    }

    #[test]
    fn rejects_small_vocab() {
        let counts = count_texts(&["ab"], "gpt2", &[], Default::default()).unwrap();
        assert!(train_from_counts(
            &counts,
            256,
            &["<s>".into()],
            Default::default(),
            &no_progress
        )
        .is_err());
    }
}
