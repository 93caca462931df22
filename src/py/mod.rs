//! The PyO3 module `bytepair._core`: type conversions and GIL release only. The rules
//! that users touch (special-token policy, file formats, errors) live in Python.

mod errors;
mod tokenizer;
mod trainer;

use pyo3::prelude::*;

#[pymodule(gil_used = false)]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("GPT2_PATTERN", crate::pretokenize::GPT2_PATTERN)?;
    m.add("CL100K_PATTERN", crate::pretokenize::CL100K_PATTERN)?;
    m.add("O200K_PATTERN", crate::pretokenize::O200K_PATTERN)?;
    m.add_class::<tokenizer::CoreBPE>()?;
    m.add_class::<tokenizer::AllowedSpecial>()?;
    m.add_class::<trainer::PretokenCounts>()?;
    m.add_function(wrap_pyfunction!(trainer::count_files, m)?)?;
    m.add_function(wrap_pyfunction!(trainer::count_texts, m)?)?;
    m.add_function(wrap_pyfunction!(trainer::train_from_counts, m)?)?;
    m.add_function(wrap_pyfunction!(trainer::train_continue, m)?)?;
    Ok(())
}

/// Runs `f` on a rayon pool of `num_threads` threads (None or 0: one per core; at most four
/// per core, as in tiktoken). Pools are built once per size and kept: building one per call
/// would cost more than encoding a batch of short texts. rayon's global pool is never used,
/// and a process forked from one that built pools (multiprocessing, DataLoader workers)
/// builds its own: the parent's worker threads do not exist in the child, and waiting for
/// them would hang forever.
fn run_in_pool<T: Send>(num_threads: Option<usize>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex};
    type Pools = (u32, HashMap<usize, Arc<rayon::ThreadPool>>);
    static POOLS: Mutex<Option<Pools>> = Mutex::new(None);
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    let n = match num_threads {
        None | Some(0) => cores,
        Some(n) => n.min(4 * cores),
    };
    let pool = {
        let mut guard = POOLS.lock().unwrap_or_else(|e| e.into_inner());
        let pid = std::process::id();
        if guard.as_ref().is_some_and(|(owner, _)| *owner != pid) {
            // forked: the parent's pools have no threads here; never touch them again
            if let Some((_, old)) = guard.take() {
                std::mem::forget(old);
            }
        }
        let (_, pools) = guard.get_or_insert_with(|| (pid, HashMap::new()));
        match pools.get(&n) {
            Some(p) => p.clone(),
            None => {
                let p = Arc::new(
                    rayon::ThreadPoolBuilder::new()
                        .num_threads(n)
                        .build()
                        .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?,
                );
                pools.insert(n, p.clone());
                p
            }
        }
    };
    Ok(pool.install(f))
}
