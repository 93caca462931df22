//! Large buffers kept from one call to the next, one of each kind per thread.
//!
//! Encoding a text of megabytes fills two buffers about as large: its UTF-8 (unless Python
//! holds it already) and its ids. Freed after each call, their memory went back to the
//! system and came back on the next call a page at a time, each page a fault that the
//! kernel zeroes: on 3 MB slices of English, one thread, 14% of the time was in the kernel
//! and `encode_ordinary` ran 1.15-1.2x faster when the allocator was told to keep its memory.
//! A buffer of `MIN_BYTES` or more is therefore kept by the thread that frees it (the
//! largest one up to `MAX_BYTES`), and the next call of that thread that needs at most as
//! much takes it. Smaller buffers come from the allocator's own free lists; larger ones
//! (a text of tens of megabytes) are not held after their call. All threads together keep
//! at most `BUDGET` bytes (QA: 32 threads that each encoded 10 MB held 376 MB more).

use std::cell::Cell;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

use pyo3::exceptions::PyMemoryError;
use pyo3::PyResult;

use crate::Rank;

/// Buffers below this many bytes are not kept (the allocator reuses them without faults).
const MIN_BYTES: usize = 1 << 18;
/// Nor above this many: what a thread may hold for its next call, per kind.
const MAX_BYTES: usize = 1 << 25;
/// What all threads together may keep (the capacity of their kept buffers).
const BUDGET: usize = 1 << 26;

/// Bytes kept by all threads.
static KEPT: AtomicUsize = AtomicUsize::new(0);

/// A thread's kept buffer of one kind; its bytes leave the budget when the thread ends.
pub struct Slot<T>(Cell<Vec<T>>);

impl<T> Slot<T> {
    const fn new() -> Self {
        Self(Cell::new(Vec::new()))
    }

    /// The kept buffer (the slot left empty), its bytes out of the budget.
    fn take(&self) -> Vec<T> {
        let buf = self.0.take();
        KEPT.fetch_sub(bytes(&buf), Relaxed);
        buf
    }

    /// Keeps `buf` (emptied) instead of the buffer held, if it is larger (a short text after
    /// a long one does not evict the long one's) and the budget allows.
    fn offer(&self, mut buf: Vec<T>) {
        let held = self.0.take();
        let (size, old) = (bytes(&buf), bytes(&held));
        let grant = |kept: usize| (kept + size - old <= BUDGET).then(|| kept + size - old);
        if size > old && KEPT.fetch_update(Relaxed, Relaxed, grant).is_ok() {
            buf.clear();
            self.0.set(buf);
        } else {
            self.0.set(held);
        }
    }
}

impl<T> Drop for Slot<T> {
    fn drop(&mut self) {
        KEPT.fetch_sub(bytes(self.0.get_mut()), Relaxed);
    }
}

/// The bytes of a buffer's capacity.
fn bytes<T>(buf: &Vec<T>) -> usize {
    buf.capacity() * std::mem::size_of::<T>()
}

/// A kind of element with a kept buffer per thread.
pub trait Kept: Copy + Sized + 'static {
    /// Runs `f` on this thread's kept buffer (None once the thread is exiting).
    fn with_slot<R>(f: impl FnOnce(&Slot<Self>) -> R) -> Option<R>;
}

thread_local! {
    static BYTES: Slot<u8> = const { Slot::new() };
    static IDS: Slot<Rank> = const { Slot::new() };
}

impl Kept for u8 {
    fn with_slot<R>(f: impl FnOnce(&Slot<u8>) -> R) -> Option<R> {
        BYTES.try_with(f).ok()
    }
}

impl Kept for Rank {
    fn with_slot<R>(f: impl FnOnce(&Slot<Rank>) -> R) -> Option<R> {
        IDS.try_with(f).ok()
    }
}

/// An empty buffer with room for `capacity` elements, that on drop is kept for the next
/// call of the thread it is dropped on (if its size is between `MIN_BYTES` and `MAX_BYTES`).
pub struct Spare<T: Kept>(Vec<T>);

impl<T: Kept> Spare<T> {
    /// The kept buffer if it has the room, else a new one; MemoryError (naming `what` the
    /// buffer is for) if the memory cannot be had.
    pub fn with_capacity(capacity: usize, what: &str) -> PyResult<Self> {
        let size = capacity.saturating_mul(std::mem::size_of::<T>());
        let mut buf = if size >= MIN_BYTES {
            T::with_slot(Slot::take).unwrap_or_default()
        } else {
            Vec::new()
        };
        if buf.capacity() < capacity {
            // (not `reserve` on the kept one: it would copy its old contents)
            buf = Vec::new();
            buf.try_reserve_exact(capacity).map_err(|_| {
                PyMemoryError::new_err(format!("no memory for {what} ({size} bytes)"))
            })?;
        }
        Ok(Self(buf))
    }
}

impl<T: Kept> Drop for Spare<T> {
    fn drop(&mut self) {
        if !(MIN_BYTES..=MAX_BYTES).contains(&bytes(&self.0)) {
            return;
        }
        let buf = std::mem::take(&mut self.0);
        T::with_slot(|slot| slot.offer(buf));
    }
}

impl<T: Kept> Deref for Spare<T> {
    type Target = Vec<T>;
    fn deref(&self) -> &Vec<T> {
        &self.0
    }
}

impl<T: Kept> DerefMut for Spare<T> {
    fn deref_mut(&mut self) -> &mut Vec<T> {
        &mut self.0
    }
}

impl<T: Kept> From<Vec<T>> for Spare<T> {
    fn from(buf: Vec<T>) -> Self {
        Self(buf)
    }
}

impl<T: Kept> AsRef<[T]> for Spare<T> {
    fn as_ref(&self) -> &[T] {
        &self.0
    }
}
