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
    Ok(())
}

/// Runs `f` on a rayon pool of `num_threads` threads (None or 0: the global pool, one
/// thread per core).
fn run_in_pool<T: Send>(num_threads: Option<usize>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    match num_threads {
        None | Some(0) => Ok(f()),
        Some(n) => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .map_err(|e| pyo3::exceptions::PyRuntimeError::new_err(e.to_string()))?;
            Ok(pool.install(f))
        }
    }
}
