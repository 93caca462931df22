//! bytepair core: byte-level BPE training and encoding, free of Python types.
//!
//! The rules implemented here are fixed by DESIGN.md §2:
//! - [`pretokenize`]: pattern presets and special-token splitting (leftmost, longest wins).
//! - [`train`]: pre-token counting (parallel, chunked files) and the merge loop
//!   (incremental pair counts, pair -> words index, lazy max-heap; ties go to the
//!   lexicographically greatest pair of bytes, as in the CS336 reference).
//! - [`encode`]: tiktoken's rank rule inside each pre-token, special tokens, decoding.
//!
//! The Python bindings live in `py/` behind the `python` feature.

pub mod encode;
pub mod error;
pub mod huge;
pub mod pretokenize;
pub mod room;
pub mod train;

#[cfg(feature = "python")]
mod py;

/// A token id. For tokenizers trained here the id of a merged token is also its merge
/// priority (rank); for loaded vocabularies id and rank are kept separately.
pub type Rank = u32;

/// Two adjacent token ids.
pub type Pair = (Rank, Rank);

pub use error::{Error, Result};

/// A small deterministic random number generator for tests: `rand(n)` is in `0..n`.
#[cfg(test)]
pub(crate) fn test_rng(mut seed: u64) -> impl FnMut(usize) -> usize {
    move |n| {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 33) as usize % n
    }
}
