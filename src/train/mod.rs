//! Training: count pre-tokens over a corpus ([`count`]), then learn merges from the
//! counts ([`merge`]). The two stages are separate so counts of several shards can be
//! added together before merging.

pub mod count;
pub mod merge;
mod store;

pub use count::{
    count_files, count_texts, CountOptions, Counter, InvalidUtf8, LongStats, PretokenCounts,
};
pub use merge::{train_continue, train_from_counts, MergeOptions, Trained};

/// Where a long-running stage is, for progress bars.
#[derive(Debug, Clone, Copy)]
pub enum Progress {
    /// `done` of `total` corpus bytes counted.
    Counting { done: u64, total: u64 },
    /// `done` of `total` merges learned.
    Merging { done: u64, total: u64 },
}

/// A progress callback; called from worker threads, so it must be `Sync`.
pub type ProgressFn<'a> = &'a (dyn Fn(Progress) + Sync);

/// A callback that ignores progress.
pub fn no_progress(_: Progress) {}
