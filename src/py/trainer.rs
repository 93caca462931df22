//! Training entry points: counting (files or texts) and the merge loop, GIL released.

use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::PyBytes;

use super::errors::to_py;
use super::run_in_pool;
use crate::train::{self, InvalidUtf8, Progress};
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
    fn new(items: Option<Vec<(Vec<u8>, u64)>>) -> Self {
        let mut inner = train::PretokenCounts::default();
        for (k, v) in items.unwrap_or_default() {
            *inner.counts.entry(k).or_insert(0) += v;
        }
        Self { inner }
    }

    fn __len__(&self) -> usize {
        self.inner.counts.len()
    }

    fn __add__(&self, other: &PretokenCounts) -> PretokenCounts {
        let mut out = self.clone();
        out.inner.add(&other.inner);
        out
    }

    fn __eq__(&self, other: &PretokenCounts) -> bool {
        self.inner == other.inner
    }

    /// Total number of pre-tokens counted.
    fn total(&self) -> u64 {
        self.inner.counts.values().sum()
    }

    /// (pre-token bytes, count) pairs, most frequent first, ties by bytes.
    fn items<'py>(&self, py: Python<'py>) -> Vec<(Bound<'py, PyBytes>, u64)> {
        let mut v: Vec<(&Vec<u8>, &u64)> = self.inner.counts.iter().collect();
        v.sort_unstable_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
        v.into_iter()
            .map(|(k, &c)| (PyBytes::new(py, k), c))
            .collect()
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

#[pyfunction]
#[pyo3(signature = (paths, pattern, special_tokens, progress=None, threads=None, errors="strict"))]
pub fn count_files(
    py: Python<'_>,
    paths: Vec<PathBuf>,
    pattern: &str,
    special_tokens: Vec<String>,
    progress: Option<Py<PyAny>>,
    threads: Option<usize>,
    errors: &str,
) -> PyResult<PretokenCounts> {
    let invalid_utf8 = match errors {
        "strict" => InvalidUtf8::Strict,
        "replace" => InvalidUtf8::Replace,
        "ignore" | "skip" => InvalidUtf8::Skip,
        other => {
            return Err(pyo3::exceptions::PyValueError::new_err(format!(
                "errors must be 'strict', 'replace' or 'ignore', got {other:?}"
            )))
        }
    };
    let report = progress_fn(progress);
    let inner = py
        .detach(|| {
            run_in_pool(threads, || {
                train::count_files(&paths, pattern, &special_tokens, invalid_utf8, &report)
            })
        })?
        .map_err(to_py)?;
    Ok(PretokenCounts { inner })
}

#[pyfunction]
#[pyo3(signature = (texts, pattern, special_tokens, threads=None))]
pub fn count_texts(
    py: Python<'_>,
    texts: Vec<String>,
    pattern: &str,
    special_tokens: Vec<String>,
    threads: Option<usize>,
) -> PyResult<PretokenCounts> {
    let inner = py
        .detach(|| {
            run_in_pool(threads, || {
                train::count_texts(&texts, pattern, &special_tokens)
            })
        })?
        .map_err(to_py)?;
    Ok(PretokenCounts { inner })
}

/// Runs the merge loop; returns (vocab bytes by id, merges as id pairs).
#[pyfunction]
#[pyo3(signature = (counts, vocab_size, special_tokens, progress=None))]
pub fn train_from_counts<'py>(
    py: Python<'py>,
    counts: &PretokenCounts,
    vocab_size: usize,
    special_tokens: Vec<String>,
    progress: Option<Py<PyAny>>,
) -> PyResult<(Vec<Bound<'py, PyBytes>>, Vec<Pair>)> {
    let report = progress_fn(progress);
    let trained = py
        .detach(|| train::train_from_counts(&counts.inner, vocab_size, &special_tokens, &report))
        .map_err(to_py)?;
    let vocab = trained.vocab.iter().map(|t| PyBytes::new(py, t)).collect();
    Ok((vocab, trained.merges))
}
