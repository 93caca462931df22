//! Training entry points: counting (files, texts, streams) and the merge loop, GIL released.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::Duration;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::errors::to_py;
use super::run_in_pool;
use super::tokenizer::CoreBPE;
use crate::train::{self, CountOptions, Counter, InvalidUtf8, LongStats, MergeOptions, Progress};
use crate::Pair;

/// Pre-token bytes -> count over a corpus; add two with `+`.
#[pyclass(module = "bytepair._core")]
#[derive(Clone, Default)]
pub struct PretokenCounts {
    pub inner: train::PretokenCounts,
}

#[pymethods]
impl PretokenCounts {
    #[new]
    #[pyo3(signature = (items=None))]
    fn new(items: Option<Vec<(Vec<u8>, u64)>>) -> PyResult<Self> {
        let mut inner = train::PretokenCounts::default();
        for (k, v) in items.unwrap_or_default() {
            let have = inner.counts.get(&k).copied().unwrap_or(0);
            let sum = have
                .checked_add(v)
                .ok_or_else(|| to_py(train::count::too_many(&k, have, v)))?;
            inner.counts.insert(k, sum);
        }
        inner.counts.retain(|k, &mut v| v > 0 && !k.is_empty());
        Ok(Self { inner })
    }

    fn __len__(&self) -> usize {
        self.inner.counts.len()
    }

    fn __add__(&self, other: &PretokenCounts) -> PyResult<PretokenCounts> {
        let mut out = self.clone();
        out.inner.try_add(&other.inner).map_err(to_py)?;
        Ok(out)
    }

    /// Adds `other` into these counts, in place (unchanged if a count would pass 2^64 - 1).
    fn add(&mut self, other: &PretokenCounts) -> PyResult<()> {
        self.inner.try_add(&other.inner).map_err(to_py)
    }

    fn __eq__(&self, other: &PretokenCounts) -> bool {
        self.inner.counts == other.inner.counts
    }

    /// Total number of pre-tokens counted (exact: the sum of 64-bit counts may pass 2^64).
    fn total(&self) -> u128 {
        self.inner.counts.values().map(|&c| c as u128).sum()
    }

    /// The count of one pre-token (0 if absent).
    fn get(&self, key: &[u8]) -> u64 {
        self.inner.counts.get(key).copied().unwrap_or(0)
    }

    /// (pre-token bytes, count) pairs, most frequent first, ties by bytes.
    fn items<'py>(&self, py: Python<'py>) -> Vec<(Bound<'py, PyBytes>, u64)> {
        let mut v: Vec<(&Vec<u8>, &u64)> = self.inner.counts.iter().collect();
        v.sort_unstable_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
        v.into_iter()
            .map(|(k, &c)| (PyBytes::new(py, k), c))
            .collect()
    }

    /// (number, longest length in bytes) of the pre-tokens over the length limit.
    #[getter]
    fn long_pretokens(&self) -> (u64, u64) {
        (self.inner.long.count, self.inner.long.longest)
    }

    #[setter]
    fn set_long_pretokens(&mut self, value: (u64, u64)) {
        self.inner.long = LongStats {
            count: value.0,
            longest: value.1,
        };
    }

    /// The records of a saved file (without its header).
    fn to_bytes<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        let body = py.detach(|| self.inner.to_bytes());
        PyBytes::new(py, &body)
    }

    /// Reads `n` records written by `to_bytes`; ValueError on corrupt data.
    #[staticmethod]
    fn from_bytes(py: Python<'_>, data: &[u8], n: u64) -> PyResult<PretokenCounts> {
        let inner = py
            .detach(|| train::PretokenCounts::from_bytes(data, n))
            .map_err(to_py)?;
        Ok(Self { inner })
    }

    /// Counts a batch of streamed `(text, ends_document)` chunks into these counts;
    /// `carry` is the unfinished end of the document before the batch; returns the new
    /// carry (see `Counter::count_stream`).
    #[pyo3(signature = (chunks, carry, pattern, special_tokens, threads=None, max_pretoken_length=None, skip_long=false))]
    #[allow(clippy::too_many_arguments)]
    fn count_stream(
        &mut self,
        py: Python<'_>,
        chunks: Vec<(String, bool)>,
        carry: String,
        pattern: &str,
        special_tokens: Vec<String>,
        threads: Option<usize>,
        max_pretoken_length: Option<usize>,
        skip_long: bool,
    ) -> PyResult<String> {
        let options = count_options(max_pretoken_length, skip_long);
        let counter = Counter::new(pattern, &special_tokens, options).map_err(to_py)?;
        let inner = &mut self.inner;
        py.detach(|| run_in_pool(threads, || counter.count_stream(&chunks, carry, inner)))?
            .map_err(to_py)
    }
}

fn count_options(max_pretoken_length: Option<usize>, skip_long: bool) -> CountOptions {
    CountOptions {
        max_pretoken_length,
        skip_long,
    }
}

/// Wraps an optional Python callable `f(stage: str, done: int, total: int)`.
fn progress_fn(cb: Option<Py<PyAny>>) -> impl Fn(Progress) + Sync {
    move |p: Progress| {
        if let Some(cb) = &cb {
            let (stage, done, total) = match p {
                Progress::Counting { done, total } => ("count", done, total),
                Progress::Merging { done, total } => ("merge", done, total),
            };
            Python::attach(|py| {
                // A failing progress bar must not stop training.
                let _ = cb.call1(py, (stage, done, total));
            });
        }
    }
}

/// `MemoryError` if a limit on address space leaves too little to train on `bytes` of text
/// (`room.rs`): blocks of up to 64 MiB are read and counted on every thread, and the counts
/// and the merge loop's tables take up to about twice the text (BENCHMARKS.md: 200 MB,
/// 442 MB at the peak).
fn check_training(bytes: usize) -> PyResult<()> {
    crate::room::check(bytes.saturating_mul(2) + (192 << 20), "counting the corpus").map_err(to_py)
}

#[pyfunction]
#[pyo3(signature = (paths, pattern, special_tokens, progress=None, threads=None, errors="strict", max_pretoken_length=None, skip_long=false))]
#[allow(clippy::too_many_arguments)]
pub fn count_files(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    pattern: &str,
    special_tokens: Vec<String>,
    progress: Option<Py<PyAny>>,
    threads: Option<usize>,
    errors: &str,
    max_pretoken_length: Option<usize>,
    skip_long: bool,
) -> PyResult<PretokenCounts> {
    let invalid_utf8 = match errors {
        "strict" => InvalidUtf8::Strict,
        "replace" => InvalidUtf8::Replace,
        "ignore" | "skip" => InvalidUtf8::Skip,
        other => {
            return Err(PyValueError::new_err(format!(
                "errors must be 'strict', 'replace' or 'skip', got {other:?}"
            )))
        }
    };
    let options = count_options(max_pretoken_length, skip_long);
    // (the files' sizes as given now: a file that cannot be read is reported below)
    let size = paths
        .iter()
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len() as usize)
        .fold(0usize, usize::saturating_add);
    check_training(size)?;
    let report = progress_fn(progress);
    let inner = py
        .detach(|| {
            run_in_pool(threads, || {
                train::count_files(
                    &paths,
                    pattern,
                    &special_tokens,
                    options,
                    invalid_utf8,
                    &report,
                )
            })
        })?
        .map_err(to_py)?;
    Ok(PretokenCounts { inner })
}

#[pyfunction]
#[pyo3(signature = (texts, pattern, special_tokens, threads=None, max_pretoken_length=None, skip_long=false))]
pub fn count_texts(
    py: Python<'_>,
    texts: Vec<String>,
    pattern: &str,
    special_tokens: Vec<String>,
    threads: Option<usize>,
    max_pretoken_length: Option<usize>,
    skip_long: bool,
) -> PyResult<PretokenCounts> {
    let options = count_options(max_pretoken_length, skip_long);
    check_training(texts.iter().map(String::len).sum())?;
    let inner = py
        .detach(|| {
            run_in_pool(threads, || {
                train::count_texts(&texts, pattern, &special_tokens, options)
            })
        })?
        .map_err(to_py)?;
    Ok(PretokenCounts { inner })
}

/// Runs `work` on a thread of its own while this one, without the GIL, waits for it and
/// every 50 ms runs Python's signal handlers: the merge loop can run for minutes (a large
/// vocabulary, or a pre-token of megabytes: a tenth of a second a merge), and Ctrl-C went
/// unseen until it ended (QA). An exception from a handler (KeyboardInterrupt) sets `stop`,
/// which `work` checks before each merge; it is waited for, and the exception returned.
fn interruptible<T: Send>(
    py: Python<'_>,
    stop: &AtomicBool,
    work: impl FnOnce() -> T + Send,
) -> PyResult<T> {
    if !crate::room::threads_fit(1) {
        let left = crate::room::spare().unwrap_or(0) >> 20;
        return Err(pyo3::exceptions::PyMemoryError::new_err(format!(
            "no memory to start the merge loop's thread: the limit on this process's \
             address space leaves {left} MiB"
        )));
    }
    std::thread::scope(|s| {
        let (done, mut result) = mpsc::channel();
        let worker = std::thread::Builder::new()
            .spawn_scoped(s, move || {
                let out = work();
                let _ = done.send(());
                out
            })
            .map_err(|e| {
                pyo3::exceptions::PyMemoryError::new_err(format!(
                    "could not start the merge loop's thread: {e}"
                ))
            })?;
        let mut raised = None;
        loop {
            // (the receiver goes into the closure and back: a closure run without the GIL
            // must be Send, and a `&Receiver` is not)
            let got;
            (got, result) =
                py.detach(move || (result.recv_timeout(Duration::from_millis(50)), result));
            match got {
                Err(RecvTimeoutError::Timeout) if raised.is_none() => {
                    if let Err(e) = py.check_signals() {
                        stop.store(true, Relaxed);
                        raised = Some(e);
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                // (sent, or the worker panicked: its panic is passed on below)
                _ => break,
            }
        }
        let out = py
            .detach(|| worker.join())
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        match raised {
            Some(e) => Err(e),
            None => Ok(out),
        }
    })
}

/// Runs the merge loop; returns (vocab bytes by id, merges as id pairs).
#[pyfunction]
#[pyo3(signature = (counts, vocab_size, special_tokens, progress=None, min_frequency=0, max_token_length=None))]
pub fn train_from_counts<'py>(
    py: Python<'py>,
    counts: &PretokenCounts,
    vocab_size: usize,
    special_tokens: Vec<String>,
    progress: Option<Py<PyAny>>,
    min_frequency: u64,
    max_token_length: Option<usize>,
) -> PyResult<(Vec<Bound<'py, PyBytes>>, Vec<Pair>)> {
    let report = progress_fn(progress);
    let stop = AtomicBool::new(false);
    let options = MergeOptions {
        min_frequency,
        max_token_length,
        stop: Some(&stop),
    };
    let trained = interruptible(py, &stop, || {
        run_in_pool(None, || {
            train::train_from_counts(&counts.inner, vocab_size, &special_tokens, options, &report)
        })
    })??
    .map_err(to_py)?;
    let vocab = trained.vocab.iter().map(|t| PyBytes::new(py, t)).collect();
    Ok((vocab, trained.merges))
}

/// Continued training on top of `base`: returns (bytes of the new tokens, in id order
/// from `base.n_vocab`, new merges as id pairs).
#[pyfunction]
#[pyo3(signature = (counts, base, vocab_size, progress=None, min_frequency=0, max_token_length=None))]
pub fn train_continue<'py>(
    py: Python<'py>,
    counts: &PretokenCounts,
    base: &CoreBPE,
    vocab_size: usize,
    progress: Option<Py<PyAny>>,
    min_frequency: u64,
    max_token_length: Option<usize>,
) -> PyResult<(Vec<Bound<'py, PyBytes>>, Vec<Pair>)> {
    let report = progress_fn(progress);
    let stop = AtomicBool::new(false);
    let options = MergeOptions {
        min_frequency,
        max_token_length,
        stop: Some(&stop),
    };
    let enc = base.encoder();
    let n = enc.n_vocab();
    let tokens = enc.tokens();
    if n > 2 * tokens.len() + 1024 {
        return Err(PyValueError::new_err(format!(
            "continued training needs dense ids: the largest id is {} for {} tokens",
            n - 1,
            tokens.len()
        )));
    }
    let mut base_vocab = vec![Vec::new(); n];
    for (id, bytes) in tokens {
        base_vocab[id as usize] = bytes.to_vec();
    }
    // (a piece merged without its ids for want of memory, on any thread: `merge.rs`)
    let no_memory = std::sync::atomic::AtomicUsize::new(0);
    let encode = |piece: &[u8]| {
        let mut out = Vec::new();
        enc.encode_piece(piece, &mut out);
        if let Err(crate::Error::NoMemory { bytes, .. }) = crate::encode::no_memory_for_pieces() {
            no_memory.store(bytes, Relaxed);
        }
        out
    };
    let trained = interruptible(py, &stop, || {
        run_in_pool(None, || {
            train::train_continue(
                &counts.inner,
                base_vocab,
                &encode,
                vocab_size,
                options,
                &report,
            )
        })
    })??
    .map_err(to_py)?;
    match no_memory.into_inner() {
        0 => {}
        bytes => {
            let what = "merging a long pre-token";
            return Err(to_py(crate::Error::NoMemory { what, bytes }));
        }
    }
    let vocab = trained.vocab[n..]
        .iter()
        .map(|t| PyBytes::new(py, t))
        .collect();
    Ok((vocab, trained.merges))
}
