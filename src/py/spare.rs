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
//! (a text of tens of megabytes) are not held after their call.

use std::cell::Cell;
use std::ops::{Deref, DerefMut};

use crate::Rank;

/// Buffers below this many bytes are not kept (the allocator reuses them without faults).
const MIN_BYTES: usize = 1 << 18;
/// Nor above this many: what a thread may hold for its next call, per kind.
const MAX_BYTES: usize = 1 << 25;

/// A kind of element with a kept buffer per thread.
pub trait Kept: Copy + Sized + 'static {
    /// Runs `f` on this thread's kept buffer (None once the thread is exiting).
    fn with_slot<R>(f: impl FnOnce(&Cell<Vec<Self>>) -> R) -> Option<R>;
}

thread_local! {
    static BYTES: Cell<Vec<u8>> = const { Cell::new(Vec::new()) };
    static IDS: Cell<Vec<Rank>> = const { Cell::new(Vec::new()) };
}

impl Kept for u8 {
    fn with_slot<R>(f: impl FnOnce(&Cell<Vec<u8>>) -> R) -> Option<R> {
        BYTES.try_with(f).ok()
    }
}

impl Kept for Rank {
    fn with_slot<R>(f: impl FnOnce(&Cell<Vec<Rank>>) -> R) -> Option<R> {
        IDS.try_with(f).ok()
    }
}

/// An empty buffer with room for `capacity` elements, that on drop is kept for the next
/// call of the thread it is dropped on (if its size is between `MIN_BYTES` and `MAX_BYTES`).
pub struct Spare<T: Kept>(Vec<T>);

impl<T: Kept> Spare<T> {
    /// The kept buffer if it has the room, else a new one. Err if the memory cannot be had.
    pub fn with_capacity(capacity: usize) -> Result<Self, std::collections::TryReserveError> {
        let size = capacity.saturating_mul(std::mem::size_of::<T>());
        let mut buf = if size >= MIN_BYTES {
            T::with_slot(Cell::take).unwrap_or_default()
        } else {
            Vec::new()
        };
        if buf.capacity() < capacity {
            // (not `reserve` on the kept one: it would copy its old contents)
            buf = Vec::new();
            buf.try_reserve_exact(capacity)?;
        }
        Ok(Self(buf))
    }
}

impl<T: Kept> Drop for Spare<T> {
    fn drop(&mut self) {
        let size = self.0.capacity() * std::mem::size_of::<T>();
        if !(MIN_BYTES..=MAX_BYTES).contains(&size) {
            return;
        }
        let mut buf = std::mem::take(&mut self.0);
        buf.clear();
        T::with_slot(|slot| {
            let held = slot.take();
            // (the larger one stays: a short text after a long one does not evict it)
            slot.set(if held.capacity() > buf.capacity() {
                held
            } else {
                buf
            });
        });
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
