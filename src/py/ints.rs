//! The Python ints of a vocabulary's ids, made once, from which lists of ids are built.
//!
//! Returning ids as a list is a large part of `encode` (a 3 MB text gives ~750k ids). Made
//! per token, the int objects were half of it; taken from this cache, a list costs one
//! reference per id. On CPython 3.11 and older that reference is still an increment of the
//! int's count, a write to its memory for every token (~0.6 ns per byte of English text,
//! a tenth of `encode_ordinary`): there the cache holds copies of the ints, laid out one
//! every 32 bytes in memory of its own and given a count of 2^60, so that no program could
//! ever release them all; lists take them without counting (what CPython 3.12 does itself
//! for its immortal objects; there the increments stay), and find the int of id `i` at
//! `block + 32 * i` without reading a table.

use std::sync::atomic::{AtomicUsize, Ordering};

use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyList;
use rayon::prelude::*;

use super::errors::to_py;
use crate::huge::{HugeSlice, Zeroable};
use crate::Rank;

/// A count that `Py_DECREF`s of uncounted references cannot bring to zero (2^60 of them
/// would take centuries).
const PINNED: ffi::Py_ssize_t = 1 << 60;

/// The item slots of a new list, written by several threads (each its own slots).
struct Slots(*mut *mut ffi::PyObject);
// SAFETY: the threads write disjoint slots of a list no one else sees yet
unsafe impl Sync for Slots {}

pub struct IntCache {
    /// The ints themselves (empty when `pinned` holds copies).
    ints: Vec<Py<PyAny>>,
    /// Pinned ints (CPython < 3.12): copies of the ints `0..n` laid out `STRIDE` bytes
    /// apart, each with the count `PINNED` (a list may hold them uncounted), so that the int
    /// of id `i` is at `block + i * STRIDE`: a list is filled by arithmetic, where a read of
    /// `ints[i]` (a table of megabytes, read in the order of the ids) was a tenth of
    /// `encode_ordinary` on English text. One block serves every tokenizer (`SHARED`).
    pinned: Option<Block>,
}

/// The bytes of one int object of a block: CPython 3.11's `PyLongObject` of one digit is
/// 28 bytes (count, type, size, digit); 32 keeps each in its own half line.
const STRIDE: usize = 32;

/// The memory of one int of a block (aligned as CPython's allocator aligns objects, and
/// more).
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Slot([u8; STRIDE]);

// SAFETY: bytes
unsafe impl Zeroable for Slot {}

/// Int objects in memory of our own, never freed (lists may hold them for ever).
struct Block(*mut u8);
// SAFETY: the block is written once, before it is shared, and only read after (counts
// change only with the GIL held, as for any object)
unsafe impl Send for Block {}
unsafe impl Sync for Block {}

/// The block every tokenizer shares, and how many ints it holds: ints are the same for all,
/// and a block is never freed, so one per tokenizer was megabytes lost for each tokenizer
/// made and dropped (a pickled one loaded in every task of a process pool).
static SHARED: std::sync::Mutex<Option<(usize, usize)>> = std::sync::Mutex::new(None);

/// The shared block's address and the log2 of the number of ints it holds, in one word
/// (blocks are 32-byte aligned: the low 5 bits are free), for `ids_of` to read without the
/// lock; 0 while there is none. An earlier, smaller block's ints (still in old lists) are
/// read as the ints they are.
static BLOCK_RANGE: AtomicUsize = AtomicUsize::new(0);

impl IntCache {
    /// The ints `0..n`; MemoryError if there is no memory for them (a first encode under a
    /// limit on address space, `room.rs`).
    pub fn new(py: Python<'_>, n: usize) -> PyResult<Self> {
        // Before 3.12 the count is the object's first field, a plain `Py_ssize_t`, and no
        // build is free-threaded; PyPy and others keep counting
        let cpython_before_312 = py.version_info() < (3, 12)
            && py
                .import("sys")
                .and_then(|sys| sys.getattr("implementation")?.getattr("name")?.extract())
                .is_ok_and(|name: String| name == "cpython");
        if cpython_before_312 {
            if let Some(block) = Self::shared_block(py, n) {
                return Ok(Self {
                    ints: Vec::new(),
                    pinned: Some(block),
                });
            }
        }
        let ints = Self::ints(py, 0..n)?;
        Ok(Self { ints, pinned: None })
    }

    fn ints(py: Python<'_>, range: std::ops::Range<usize>) -> PyResult<Vec<Py<PyAny>>> {
        let mut ints = Vec::new();
        ints.try_reserve_exact(range.len())
            .map_err(|_| pyo3::exceptions::PyMemoryError::new_err("no memory for the ints"))?;
        for i in range {
            // SAFETY: a new int, or NULL with MemoryError set
            let int = unsafe { Bound::from_owned_ptr_or_err(py, ffi::PyLong_FromSize_t(i))? };
            ints.push(int.unbind());
        }
        Ok(ints)
    }

    /// The shared block, made (or made larger: a power of two of ints, so a process makes
    /// few) if it holds fewer than `n` ints.
    fn shared_block(py: Python<'_>, n: usize) -> Option<Block> {
        use pyo3::sync::MutexExt;
        let mut shared = SHARED
            .lock_py_attached(py)
            .unwrap_or_else(|e| e.into_inner());
        match *shared {
            Some((held, base)) if held >= n => Some(Block(base as *mut u8)),
            _ => {
                let size = n.next_power_of_two().max(1 << 16);
                // (None where there is no memory for a block either: the ints are made then)
                let block = Self::block_by_template(py, size)
                    .or_else(|| Self::block(&Self::ints(py, 0..size).ok()?))?;
                *shared = Some((size, block.0 as usize));
                let range = block.0 as usize | size.trailing_zeros() as usize;
                BLOCK_RANGE.store(range, Ordering::Release);
                Some(block)
            }
        }
    }

    /// The ints `0..n` written from one template, without making them. Made as Python ints
    /// (and let go of), the 2^17 of cl100k were most of the first `encode` of a process:
    /// 5.5-7.3 ms for "hello world", now 1.3-2.1 ms (the rest: the first touch of the
    /// block's and the piece cache's pages; tiktoken's first call, 0.1 ms). A positive int
    /// below 2^30 is one 30-bit digit after a header that is the same for all (count, type,
    /// number of digits), so the block is int 0 copied whole and `i` as int 1's header
    /// followed by the digit `i`. None (the caller makes real ints) unless that holds: the
    /// slots of a spread of values, the largest included, are compared with the real ints,
    /// so a build with other digits (15 bits) or another layout falls back.
    fn block_by_template(py: Python<'_>, n: usize) -> Option<Block> {
        if !(2..=1 << 30).contains(&n) {
            return None;
        }
        let samples = [0, 1, 2, 255, 256, 257, 1000, 12_345, n / 2, n - 2, n - 1];
        let real = Self::ints(py, 0..2).ok()?;
        // SAFETY: as in `block`: each int read is a live object of its type's size; the
        // block has room for `n` slots of `STRIDE` bytes, each written within its slot
        unsafe {
            let one = real[1].as_ptr();
            let tp = ffi::Py_TYPE(one);
            let (basic, item) = ((*tp).tp_basicsize as usize, (*tp).tp_itemsize as usize);
            let size = basic + item;
            if item != 4 || (*(one as *mut ffi::PyVarObject)).ob_size != 1 || size > STRIDE {
                return None;
            }
            let mut template = Slot([0; STRIDE]);
            let at = template.0.as_mut_ptr();
            Self::copy_pinned(one, at)?;
            let mut block = HugeSlice::<Slot>::try_zeroed(n)?;
            let base = block.as_mut_ptr() as *mut u8;
            Self::copy_pinned(real[0].as_ptr(), base)?;
            for (i, slot) in block.iter_mut().enumerate().skip(1) {
                // (a whole slot stored at once: a copy of the header each was a call)
                *slot = template;
                (slot.0.as_mut_ptr().add(basic) as *mut u32).write_unaligned(i as u32);
            }
            for &v in samples.iter().filter(|&&v| v < n) {
                let int = Self::ints(py, v..v + 1).ok()?.pop()?;
                let op = int.as_ptr() as *const u8;
                let digits = (*(op as *const ffi::PyVarObject)).ob_size.unsigned_abs();
                let size = basic + digits * item;
                if size > STRIDE {
                    return None;
                }
                let skip = std::mem::size_of::<ffi::Py_ssize_t>(); // the count
                let slot = std::slice::from_raw_parts(base.add(v * STRIDE + skip), size - skip);
                if slot != std::slice::from_raw_parts(op.add(skip), size - skip) {
                    return None;
                }
            }
            std::mem::forget(block);
            Some(Block(base))
        }
    }

    /// Copies int `op` to `dst` with the count `PINNED`; None if it needs more than
    /// `STRIDE` bytes.
    ///
    /// # Safety
    /// `op` must be a live int; `dst` must have room for `STRIDE` bytes.
    unsafe fn copy_pinned(op: *mut ffi::PyObject, dst: *mut u8) -> Option<()> {
        let tp = ffi::Py_TYPE(op);
        let digits = (*(op as *mut ffi::PyVarObject)).ob_size.unsigned_abs();
        let size = (*tp).tp_basicsize as usize + digits * (*tp).tp_itemsize as usize;
        if size > STRIDE {
            return None;
        }
        std::ptr::copy_nonoverlapping(op as *const u8, dst, size);
        *(dst as *mut ffi::Py_ssize_t) = PINNED;
        Some(())
    }

    /// Copies of `ints` laid out `STRIDE` bytes apart with the count `PINNED`, or None if
    /// one does not fit.
    fn block(ints: &[Py<PyAny>]) -> Option<Block> {
        // SAFETY: each int is a live object whose size is its type's basic size plus its
        // digits (CPython's own rule, `_PyObject_VAR_SIZE`); the copy holds no pointer but
        // to the static int type, which instances do not count; the block is leaked, so the
        // copies are never freed, and their count never reaches zero
        unsafe {
            // (in 2 MiB pages where the system gives them: lists are freed by decrementing
            // each id's count, at random places in megabytes)
            let mut block = HugeSlice::<Slot>::try_zeroed(ints.len())?;
            let base = block.as_mut_ptr() as *mut u8;
            for (i, int) in ints.iter().enumerate() {
                Self::copy_pinned(int.as_ptr(), base.add(i * STRIDE))?;
            }
            std::mem::forget(block);
            Some(Block(base))
        }
    }

    /// One list of the ints of the ids of `parts`, in order, each below the `n` the cache
    /// was made with. With several parts (one long text encoded on several cores) and
    /// `spread`, the pinned ints are stored by the cores in parallel too: filled on this
    /// thread, the list was a serial part of such a call. (Not `spread` while other threads
    /// still encode: the pool would wake more threads than there are CPUs.)
    pub fn list<'py>(
        &self,
        py: Python<'py>,
        parts: &[impl AsRef<[Rank]> + Sync],
        spread: bool,
    ) -> PyResult<Bound<'py, PyList>> {
        let all = || parts.iter().flat_map(|p| p.as_ref());
        let Some(block) = &self.pinned else {
            return PyList::new(py, all().map(|&i| self.ints[i as usize].bind(py)));
        };
        let base = block.0 as usize;
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
                    *items.0.add(start + k) = (base + i as usize * STRIDE) as *mut ffi::PyObject;
                }
            };
            if let [one] = parts {
                // (one part, most lists of a batch: no vector of starts to make and free)
                fill(0, one.as_ref());
                return Ok(Bound::from_owned_ptr(py, list).cast_into_unchecked());
            }
            let starts: Vec<usize> = parts
                .iter()
                .scan(0, |at, p| {
                    let start = *at;
                    *at += p.as_ref().len();
                    Some(start)
                })
                .collect();
            let on_every_core = spread
                && parts.len() > 1
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

/// The ids of `seq`, a sequence of ints (see `ids_into`).
pub fn ids_of(seq: &Bound<'_, PyAny>) -> PyResult<Vec<Rank>> {
    let mut ids = Vec::new();
    ids_into(seq, &mut ids)?;
    Ok(ids)
}

/// Appends the ids of `seq`, a sequence of ints, to `out`. A list or tuple (exactly) is read
/// here, item by item: an int of the shared block is its id by its address alone (`(p -
/// block) / STRIDE`; the int's memory is not read), any other int by `PyLong_AsLongLong`.
/// Anything else (another sequence, numpy ints, an id below 0 or above `Rank::MAX`) is
/// extracted by PyO3, which raises the errors. (PyO3's extraction, an iterator and a
/// conversion per item, was 18 ns per id: most of `decode_bytes` of a long list.)
pub fn ids_into(seq: &Bound<'_, PyAny>, out: &mut Vec<Rank>) -> PyResult<()> {
    let start = out.len();
    if !plain_ids(seq, out).map_err(to_py)? {
        out.truncate(start);
        // (PyO3 sizes its vector by `len()` unchecked: `decode(range(10**12))` ended the
        // process for want of 4 TB, QA; the room is had here first, and the copy below fits)
        if let Ok(n) = seq.len() {
            out.try_reserve(n).map_err(|_| {
                to_py(crate::Error::NoMemory {
                    what: "the ids",
                    bytes: n.saturating_mul(4),
                })
            })?;
        }
        out.extend(seq.extract::<Vec<Rank>>()?);
    }
    Ok(())
}

/// `ids_into` of an exact list or tuple of ints in range: false (and some ids appended)
/// for anything else.
fn plain_ids(seq: &Bound<'_, PyAny>, out: &mut Vec<Rank>) -> crate::Result<bool> {
    let range = BLOCK_RANGE.load(Ordering::Acquire);
    let base = range & !(STRIDE - 1);
    let span = if range == 0 {
        0
    } else {
        STRIDE << (range & (STRIDE - 1))
    };
    let p = seq.as_ptr();
    // SAFETY: the GIL is held (`seq` is bound) and nothing here runs Python code, so the
    // list or tuple keeps its items while they are read; each item is a live object, and
    // only exact ints are read as ints (`PyLong_AsLongLong` calls no Python code on them)
    unsafe {
        let (items, n) = if ffi::PyList_CheckExact(p) != 0 {
            (
                (*(p as *mut ffi::PyListObject)).ob_item as *const *mut ffi::PyObject,
                ffi::PyList_GET_SIZE(p) as usize,
            )
        } else if ffi::PyTuple_CheckExact(p) != 0 {
            (
                (*(p as *mut ffi::PyTupleObject)).ob_item.as_ptr(),
                ffi::PyTuple_GET_SIZE(p) as usize,
            )
        } else {
            return Ok(false);
        };
        out.try_reserve(n).map_err(|_| crate::Error::NoMemory {
            what: "the ids",
            bytes: n.saturating_mul(4),
        })?;
        for k in 0..n {
            let item = *items.add(k);
            let at = (item as usize).wrapping_sub(base);
            if at < span {
                out.push((at / STRIDE) as Rank);
            } else if ffi::PyLong_CheckExact(item) != 0 {
                let v = ffi::PyLong_AsLongLong(item);
                if !(0..=Rank::MAX as i64).contains(&v) {
                    if !ffi::PyErr_Occurred().is_null() {
                        ffi::PyErr_Clear(); // (too large: PyO3 raises it again, its way)
                    }
                    return Ok(false);
                }
                out.push(v as Rank);
            } else {
                return Ok(false);
            }
        }
        Ok(true)
    }
}
