//! The PyO3 module `bytepair._core`: type conversions and GIL release only. The rules
//! that users touch (special-token policy, file formats, errors) live in Python.

mod errors;
mod ints;
mod spare;
mod text;
mod tokenizer;
mod trainer;

use std::sync::Arc;

use pyo3::prelude::*;

#[pymodule(gil_used = false)]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    // (a limit on address space that leaves no room for the scanner's tables is a
    // MemoryError here: their allocation would end the process, QA)
    crate::room::check(16 << 20, "importing bytepair").map_err(errors::to_py)?;
    // (under the import lock, which os.fork waits for)
    crate::pretokenize::warm_up();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("GPT2_PATTERN", crate::pretokenize::GPT2_PATTERN)?;
    m.add("CL100K_PATTERN", crate::pretokenize::CL100K_PATTERN)?;
    m.add("O200K_PATTERN", crate::pretokenize::O200K_PATTERN)?;
    m.add_class::<tokenizer::CoreBPE>()?;
    m.add_class::<tokenizer::AllowedSpecial>()?;
    m.add_class::<trainer::PretokenCounts>()?;
    m.add_function(wrap_pyfunction!(tokenizer::check_build, m)?)?;
    m.add_function(wrap_pyfunction!(trainer::count_files, m)?)?;
    m.add_function(wrap_pyfunction!(trainer::count_texts, m)?)?;
    m.add_function(wrap_pyfunction!(trainer::train_from_counts, m)?)?;
    m.add_function(wrap_pyfunction!(trainer::train_continue, m)?)?;
    Ok(())
}

/// Runs `f` on the rayon pool of `num_threads` threads (see [`pool`]).
fn run_in_pool<T: Send>(num_threads: Option<usize>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    Ok(pool(num_threads)?.install(f))
}

/// The rayon pool of `num_threads` threads (None or 0: one per core; at most four per core,
/// as in tiktoken). Pools are built once per size and kept: building one per call would cost
/// more than encoding a batch of short texts. A pool's threads keep the CPUs of the thread
/// that made it, so pools are kept per CPU set too: made while the process was pinned to one
/// CPU (`taskset`, a worker that pins itself) and kept after the pinning was lifted, they
/// ran every later batch on that one CPU (two threads no faster than one). rayon's global
/// pool is never used, and a process forked from one that built pools (multiprocessing,
/// DataLoader workers) builds its own: the parent's worker threads do not exist in the
/// child, and waiting for them would hang forever.
fn pool(num_threads: Option<usize>) -> PyResult<Arc<rayon::ThreadPool>> {
    let key = (pool_size(num_threads), affinity_key());
    let n = key.0;
    let mut pools = process_pools().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = pools.get(&key) {
        return Ok(p.clone());
    }
    // (not even a thread of a pool of one where there is no room for it: it could end the
    // process, `room.rs`)
    if !crate::room::threads_fit(n) {
        let left = crate::room::spare().unwrap_or(0) >> 20;
        return Err(pyo3::exceptions::PyMemoryError::new_err(format!(
            "no memory to start {n} thread(s): the limit on this process's address space \
             leaves {left} MiB"
        )));
    }
    let p = Arc::new(
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build()
            .map_err(|e| {
                pyo3::exceptions::PyRuntimeError::new_err(format!(
                    "could not start {n} thread(s): {e}"
                ))
            })?,
    );
    pools.insert(key, p.clone());
    Ok(p)
}

/// Pools by (threads, CPU set of the thread that made them).
type Pools = std::sync::Mutex<std::collections::HashMap<(usize, u64), Arc<rayon::ThreadPool>>>;

/// This process's pools, behind a lock of its own. A child forked while another thread held
/// its parent's lock (building a pool) found that lock taken for ever (found by QA), so a
/// child never touches its parent's pools or lock: they are left as they are (leaked; their
/// threads are not the child's), and it makes its own.
fn process_pools() -> &'static Pools {
    use std::sync::atomic::{AtomicPtr, Ordering::AcqRel, Ordering::Acquire};
    static CURRENT: AtomicPtr<(u32, Pools)> = AtomicPtr::new(std::ptr::null_mut());
    let pid = std::process::id();
    loop {
        let current = CURRENT.load(Acquire);
        // SAFETY: a pointer stored here is never freed
        if let Some((owner, pools)) = unsafe { current.as_ref() } {
            if *owner == pid {
                return pools;
            }
        }
        let new = Box::into_raw(Box::new((pid, Pools::default())));
        if CURRENT
            .compare_exchange(current, new, AcqRel, Acquire)
            .is_err()
        {
            // another thread of this process put its own first: use that one
            // SAFETY: `new` was never shared
            drop(unsafe { Box::from_raw(new) });
        }
    }
}

/// The number of threads of the pool for `num_threads`: 1 (the calling thread alone) if
/// a limit on address space leaves no room for more (`room.rs`).
fn pool_size(num_threads: Option<usize>) -> usize {
    let cores = cores();
    let n = match num_threads {
        None | Some(0) => cores,
        Some(n) => n.min(4 * cores),
    };
    if n > 1 && !crate::room::threads_fit(n) {
        1
    } else {
        n
    }
}

/// The CPUs this process may use now: its affinity mask (the benchmark pins and unpins;
/// so may a user), within a cgroup CPU quota read once. `available_parallelism` reads both,
/// but the quota from files: ~20 us, which every `encode` call paid.
fn cores() -> usize {
    static QUOTA: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let all = || std::thread::available_parallelism().map_or(1, |c| c.get());
    let affinity = match affinity() {
        None => return all(),
        Some(n) if n <= 1 => return 1,
        Some(n) => n,
    };
    // (a quota binds if it allows fewer CPUs than the mask does)
    let quota = *QUOTA.get_or_init(|| Some(all()).filter(|&n| n < affinity).unwrap_or(usize::MAX));
    affinity.min(quota).max(1)
}

/// This thread's affinity mask (None where unknown).
#[cfg(target_os = "linux")]
fn cpu_set() -> Option<libc::cpu_set_t> {
    // SAFETY: `set` is a zeroed cpu_set_t, filled by the call if it succeeds
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        (libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0)
            .then_some(set)
    }
}

/// The number of CPUs in this thread's affinity mask (None where unknown).
#[cfg(target_os = "linux")]
fn affinity() -> Option<usize> {
    // SAFETY: CPU_COUNT reads the set it is given
    cpu_set().map(|set| unsafe { libc::CPU_COUNT(&set) as usize })
}

/// This thread's affinity mask as a key (0 where unknown).
#[cfg(target_os = "linux")]
fn affinity_key() -> u64 {
    use std::hash::{Hash, Hasher};
    let Some(set) = cpu_set() else { return 0 };
    // SAFETY: a cpu_set_t is plain bits
    let bits: &[u8] = unsafe {
        std::slice::from_raw_parts(
            &set as *const libc::cpu_set_t as *const u8,
            std::mem::size_of::<libc::cpu_set_t>(),
        )
    };
    let mut h = rustc_hash::FxHasher::default();
    bits.hash(&mut h);
    h.finish()
}

#[cfg(not(target_os = "linux"))]
fn affinity() -> Option<usize> {
    None
}

#[cfg(not(target_os = "linux"))]
fn affinity_key() -> u64 {
    0
}

/// Runs `work` on every job, jobs taken in order by `threads` threads: this one and a pool
/// of `threads - 1`. This thread also hands each result to `take` (with the GIL held) as
/// soon as it is ready, and encodes a job itself (the GIL released) whenever no result is
/// waiting. Building Python objects needs the GIL, so it cannot run on the workers; done
/// after all the work it would be a serial tail (a fifth of `encode`'s time), done here
/// it overlaps the work without ever running more threads than asked for. If `take`
/// fails, the workers stop after their current job and the error is returned.
fn pipelined<J: Sync, R: Send>(
    py: Python<'_>,
    jobs: &[J],
    threads: usize,
    work: impl Fn(&J) -> R + Sync,
    mut take: impl FnMut(usize, R) -> PyResult<()>,
) -> PyResult<()> {
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
    use std::sync::mpsc::TryRecvError;
    let pool = pool(Some(threads.saturating_sub(1).max(1)))?;
    let (next, stop) = (AtomicUsize::new(0), AtomicBool::new(false));
    let (tx, rx) = std::sync::mpsc::channel::<(usize, R)>();
    // the next job not yet taken by any thread, with its index
    let next_job = || {
        let k = next.fetch_add(1, Relaxed);
        jobs.get(k).map(|job| (k, job))
    };
    std::thread::scope(|s| {
        let (next_job, stop, work, pool) = (&next_job, &stop, &work, &pool);
        let workers = std::thread::Builder::new().spawn_scoped(s, move || {
            pool.scope(|ps| {
                for _ in 0..pool.current_num_threads() {
                    let tx = tx.clone();
                    ps.spawn(move |_| {
                        while !stop.load(Relaxed) {
                            let Some((k, job)) = next_job() else { break };
                            if tx.send((k, work(job))).is_err() {
                                break;
                            }
                        }
                    });
                }
            });
        });
        let workers = workers.map_err(|e| {
            pyo3::exceptions::PyMemoryError::new_err(format!("could not start a thread: {e}"))
        })?;
        let mut rx = rx;
        let mut run = || -> PyResult<()> {
            loop {
                let (k, r) = match rx.try_recv() {
                    Ok(done) => done,
                    Err(TryRecvError::Disconnected) => return Ok(()),
                    Err(TryRecvError::Empty) => {
                        match next_job() {
                            Some((k, job)) => (k, py.detach(|| work(job))),
                            None => {
                                // `&mut`: a Receiver may be used from the thread that waits
                                // without the GIL, but not shared with it
                                let rx = &mut rx;
                                match py.detach(move || rx.recv()) {
                                    Ok(done) => done,
                                    Err(_) => return Ok(()),
                                }
                            }
                        }
                    }
                };
                take(k, r)?;
            }
        };
        let result = run();
        if result.is_err() {
            stop.store(true, Relaxed);
        }
        drop(rx);
        py.detach(|| workers.join())
            .map_err(|_| pyo3::panic::PanicException::new_err("a worker thread panicked"))?;
        result
    })
}
