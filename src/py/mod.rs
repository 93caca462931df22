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

/// Runs `f` on a rayon pool of `num_threads` threads (None or 0: the global pool, one
/// thread per core). Pools are built once per size and kept: building one per call would
/// cost more than encoding a batch of short texts.
fn run_in_pool<T: Send>(num_threads: Option<usize>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    use std::collections::HashMap;
    use std::sync::{Arc, Mutex, OnceLock};
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let n = match num_threads {
        None | Some(0) => return Ok(f()),
        Some(n) if n == rayon::current_num_threads() => return Ok(f()),
        // an upper bound, as in tiktoken: more threads than a few per core only cost
        Some(n) => n.min(4 * std::thread::available_parallelism().map_or(1, |c| c.get())),
    };
    let pool = {
        let mut pools = POOLS
            .get_or_init(Default::default)
            .lock()
            .unwrap_or_else(|e| e.into_inner());
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
