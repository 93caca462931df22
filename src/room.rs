//! Room in a limited address space: whether threads may start, large buffers that fail
//! as `MemoryError`, and checks of work's memory before it starts.
//!
//! Under a limit on address space (`ulimit -v`, `resource.setrlimit(RLIMIT_AS, ...)`; the
//! CS336 memory tests set it to the resident size plus 1 MB) a new thread may start on the
//! stack of one that ended (glibc keeps them) and then find no memory for its thread-local
//! storage, which glibc answers by ending the whole process ("cannot allocate memory for
//! thread-local data: ABORT"), and a worker's buffers would fail the same way. So work
//! that would use threads runs on the calling thread instead when the limit leaves less
//! than [`PER_THREAD`] for each one, and its own large buffers fail as `MemoryError`
//! ([`zeroed_bytes`], [`ids_room`]; Rust's own allocations end the process when they
//! fail), and work made of many smaller allocations is checked first ([`check`]).

use crate::{Error, Result};

/// Address space a thread needs beyond its work: its stack (2-8 MiB) and the 64 MiB that
/// glibc reserves for a thread's own heap (arena) at its first allocation.
pub const PER_THREAD: usize = 96 << 20;

/// Bytes the process may still map before a limit on its address space (or on its data,
/// `RLIMIT_DATA`) is reached; None if neither is limited.
#[cfg(target_os = "linux")]
pub fn spare() -> Option<usize> {
    let limit = |resource| {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit fills the struct it is given
        let ok = unsafe { libc::getrlimit(resource, &mut lim) } == 0;
        (ok && lim.rlim_cur != libc::RLIM_INFINITY).then_some(lim.rlim_cur as usize)
    };
    let (space, data) = (limit(libc::RLIMIT_AS), limit(libc::RLIMIT_DATA));
    if space.is_none() && data.is_none() {
        return None;
    }
    // /proc/self/statm: sizes in pages; the first is the address space, the sixth the data
    // and stacks (what RLIMIT_DATA counts)
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: Vec<usize> = statm
        .split_whitespace()
        .filter_map(|f| f.parse().ok())
        .collect();
    // SAFETY: sysconf has no preconditions
    let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
    let used = |field: usize| {
        pages
            .get(field)
            .map_or(usize::MAX, |p| p.saturating_mul(page))
    };
    let left = |limit: Option<usize>, field| limit.map(|l| l.saturating_sub(used(field)));
    [left(space, 0), left(data, 5)].into_iter().flatten().min()
}

#[cfg(not(target_os = "linux"))]
pub fn spare() -> Option<usize> {
    None
}

/// Whether `threads` more threads may start (see the module's text).
pub fn threads_fit(threads: usize) -> bool {
    threads == 0 || spare().is_none_or(|left| left / PER_THREAD >= threads)
}

/// `Error::NoMemory` if a limit on address space leaves less than `bytes`: for work whose
/// many smaller allocations (each of which would end the process if it failed) add up to
/// about that much, checked before it starts.
pub fn check(bytes: usize, what: &'static str) -> Result<()> {
    match spare() {
        Some(left) if left < bytes => Err(Error::NoMemory { what, bytes }),
        _ => Ok(()),
    }
}

/// `n` zero bytes (as `vec![0; n]`: the system's zeroed pages for a large `n`, not
/// written), or `Error::NoMemory` naming `what` they are for.
pub fn zeroed_bytes(n: usize, what: &'static str) -> Result<Vec<u8>> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let no_memory = Error::NoMemory { what, bytes: n };
    let layout = std::alloc::Layout::array::<u8>(n).map_err(|_| no_memory)?;
    // SAFETY: `layout` has a non-zero size; a non-null pointer is `n` zeroed bytes from the
    // global allocator, with the layout `Vec<u8>` of capacity `n` frees them with
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) };
    if ptr.is_null() {
        return Err(Error::NoMemory { what, bytes: n });
    }
    // SAFETY: as above: `n` initialized bytes, capacity `n`, from the global allocator
    Ok(unsafe { Vec::from_raw_parts(ptr, n, n) })
}

/// Room in `ids` for the ids of `bytes` more bytes of text (one id a byte at most), or
/// `Error::NoMemory`: on a limited address space a vector of ids must not have to grow
/// while a text is encoded, where a failed growth would end the process.
pub fn ids_room(ids: &mut Vec<crate::Rank>, bytes: usize) -> Result<()> {
    ids.try_reserve(bytes).map_err(|_| Error::NoMemory {
        what: "the ids",
        bytes: bytes.saturating_mul(4),
    })
}
