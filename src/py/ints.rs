//! The Python ints of a vocabulary's ids, made once, from which lists of ids are built.
//!
//! Returning ids as a list is a large part of `encode` (a 3 MB text gives ~750k ids). Made
//! per token, the int objects were half of it; taken from this cache, a list costs one
//! reference per id. On CPython 3.11 and older that reference is still an increment of the
//! int's count, a write to its memory for every token (~0.6 ns per byte of English text,
//! a tenth of `encode_ordinary`): there the cached ints are given a count of 2^60 once, so
//! that no program could ever release them all, and lists take them without counting (what
//! CPython 3.12 does itself for its immortal objects; there the increments stay).

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyList;
use rayon::prelude::*;

use crate::Rank;

/// A count that `Py_DECREF`s of uncounted references cannot bring to zero (2^60 of them
/// would take centuries).
const PINNED: ffi::Py_ssize_t = 1 << 60;

/// The item slots of a new list, written by several threads (each its own slots).
struct Slots(*mut *mut ffi::PyObject);
// SAFETY: the threads write disjoint slots of a list no one else sees yet
unsafe impl Sync for Slots {}

pub struct IntCache {
    ints: Vec<Py<PyAny>>,
    /// The ints have the count `PINNED`: a list may hold them uncounted.
    pinned: bool,
}

impl IntCache {
    /// The ints `0..n`.
    pub fn new(py: Python<'_>, n: usize) -> Self {
        // Before 3.12 the count is the object's first field, a plain `Py_ssize_t`, and no
        // build is free-threaded; PyPy and others keep counting
        let pinned = py.version_info() < (3, 12)
            && py
                .import("sys")
                .and_then(|sys| sys.getattr("implementation")?.getattr("name")?.extract())
                .is_ok_and(|name: String| name == "cpython");
        let ints = (0..n as Rank)
            .map(|i| {
                let Ok(int) = i.into_pyobject(py);
                let int = int.into_any().unbind();
                if pinned {
                    // SAFETY: a live object of CPython < 3.12, whose first field is its count
                    unsafe { *(int.as_ptr() as *mut ffi::Py_ssize_t) = PINNED };
                }
                int
            })
            .collect();
        Self { ints, pinned }
    }

    /// One list of the ints of the ids of `parts`, in order, each below the `n` the cache
    /// was made with. With several parts (one long text encoded on several cores) the
    /// pinned ints are stored by the cores in parallel too: filled on this thread, the list
    /// was a serial part of such a call.
    pub fn list<'py>(
        &self,
        py: Python<'py>,
        parts: &[impl AsRef<[Rank]> + Sync],
    ) -> PyResult<Bound<'py, PyList>> {
        let all = || parts.iter().flat_map(|p| p.as_ref());
        if !self.pinned {
            return PyList::new(py, all().map(|&i| self.ints[i as usize].bind(py)));
        }
        let len: usize = parts.iter().map(|p| p.as_ref().len()).sum();
        // SAFETY: `PyList_New` gives a new list of `len` empty slots (or NULL with an
        // exception set), which no other code can see until it is returned; each slot is
        // filled once with a live int whose count is `PINNED`, so the reference the list
        // holds need not be counted (see the module comment). The threads only store
        // pointers into their own slots; the GIL stays held.
        unsafe {
            let list = ffi::PyList_New(len as ffi::Py_ssize_t);
            if list.is_null() {
                return Err(PyErr::fetch(py));
            }
            let items = Slots((*(list as *mut ffi::PyListObject)).ob_item);
            let fill = |start: usize, ids: &[Rank]| {
                // (the `Slots`, which is Sync, not its raw pointer, which is not)
                let items = &items;
                for (k, &i) in ids.iter().enumerate() {
                    *items.0.add(start + k) = self.ints[i as usize].as_ptr();
                }
            };
            let starts: Vec<usize> = parts
                .iter()
                .scan(0, |at, p| {
                    let start = *at;
                    *at += p.as_ref().len();
                    Some(start)
                })
                .collect();
            let on_every_core = parts.len() > 1
                && super::run_in_pool(None, || {
                    parts
                        .par_iter()
                        .zip(&starts)
                        .for_each(|(p, &start)| fill(start, p.as_ref()))
                })
                .is_ok();
            if !on_every_core {
                // (one part, or no pool could be made: the slots are filled here)
                for (p, &start) in parts.iter().zip(&starts) {
                    fill(start, p.as_ref());
                }
            }
            Ok(Bound::from_owned_ptr(py, list).cast_into_unchecked())
        }
    }
}
