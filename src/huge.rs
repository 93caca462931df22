//! Tables read at random, in 2 MiB pages where Linux gives them.
//!
//! The piece cache (10 MiB), the pair table, the ints of returned lists and the token map of
//! a construction are megabytes read at random places. With 4 KiB pages a read at a random
//! place also misses the CPU's table of page addresses (the TLB), and the page walk that
//! follows can cost as much as the read: the piece cache's prefetches waited on them (a
//! quarter of the main loop's samples on Python code). Asked for with
//! `madvise(MADV_HUGEPAGE)` (Linux's default "transparent huge pages" setting grants it on
//! request), such a table is a handful of pages: the piece cache alone made cl100k code 8%
//! and o200k English 3-5% faster, the token map (when encoding still looked every piece up
//! in it) code 3% more. Elsewhere, below 1 MiB, or if the system refuses, the memory is an
//! ordinary allocation.

use std::alloc::{self, Layout};

use allocator_api2::alloc::Allocator;
use std::ptr::NonNull;

/// The size of a huge page on x86-64 and arm64 Linux.
const HUGE: usize = 2 << 20;
/// Tables from this size are given whole huge pages (a table of 1-2 MiB then holds up to
/// 1 MiB it does not use: cl100k's pair table is 1.1 MiB).
const HUGE_MIN: usize = 1 << 20;

/// Types of which all-zero bytes are a valid value.
///
/// # Safety
/// Implement only for such types (integers, atomics, arrays and `repr(C)` structs of them).
pub unsafe trait Zeroable {}

// SAFETY: integers and atomic integers of all-zero bytes are 0
unsafe impl Zeroable for u8 {}
unsafe impl Zeroable for u64 {}
unsafe impl Zeroable for std::sync::atomic::AtomicU64 {}
// SAFETY: an array of values of which zero bytes are valid
unsafe impl<T: Zeroable, const N: usize> Zeroable for [T; N] {}

/// `len` values of `T` in memory from `HugeAlloc`. `T` has no destructor (plain numbers).
pub struct HugeSlice<T> {
    ptr: NonNull<T>,
    len: usize,
}

// SAFETY: a HugeSlice owns its values as a Box<[T]> would
unsafe impl<T: Send> Send for HugeSlice<T> {}
unsafe impl<T: Sync> Sync for HugeSlice<T> {}

impl<T: Zeroable> HugeSlice<T> {
    /// `len` values whose bytes are all zero, untouched until used (the system's zeroed
    /// pages).
    pub fn zeroed(len: usize) -> Self {
        let layout = Layout::array::<T>(len).expect("a table that fits in memory");
        Self::try_zeroed(len).unwrap_or_else(|| alloc::handle_alloc_error(layout))
    }

    /// `zeroed`, or None if the memory cannot be had.
    pub fn try_zeroed(len: usize) -> Option<Self> {
        assert!(!std::mem::needs_drop::<T>(), "plain values only");
        let layout = Layout::array::<T>(len).ok()?;
        let ptr = if layout.size() == 0 {
            NonNull::dangling()
        } else {
            HugeAlloc.allocate_zeroed(layout).ok()?.cast()
        };
        Some(Self { ptr, len })
    }
}

impl<T: Zeroable + Copy> HugeSlice<T> {
    /// `len` copies of `value`.
    pub fn new(len: usize, value: T) -> Self {
        let mut s = Self::zeroed(len);
        s.fill(value);
        s
    }
}

impl<T> std::ops::Deref for HugeSlice<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        // SAFETY: `ptr` holds `len` values (zeroed ones valid: `T: Zeroable` to make one)
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T> std::ops::DerefMut for HugeSlice<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as for `deref`, and `self` is borrowed mutably
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Zeroable + Copy> Clone for HugeSlice<T> {
    fn clone(&self) -> Self {
        let mut c = Self::zeroed(self.len);
        c.copy_from_slice(self);
        c
    }
}

impl<T> std::fmt::Debug for HugeSlice<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HugeSlice({} values)", self.len)
    }
}

impl<T> Drop for HugeSlice<T> {
    fn drop(&mut self) {
        let layout = Layout::array::<T>(self.len).expect("made with this layout");
        if layout.size() != 0 {
            // SAFETY: allocated by `HugeAlloc` with this layout in `zeroed`
            unsafe { HugeAlloc.deallocate(self.ptr.cast(), layout) }
        }
    }
}

/// Zeroed memory for `layout` at a 2 MiB boundary, its size rounded up to whole huge pages
/// and asked to be in them: its start. None below `HUGE_MIN`, where this is not Linux, or if
/// the system has no memory for it.
#[cfg(target_os = "linux")]
fn map_huge(layout: Layout) -> Option<NonNull<u8>> {
    if layout.size() < HUGE_MIN || layout.align() > HUGE {
        return None;
    }
    let size = layout.size().checked_next_multiple_of(HUGE)?;
    // (one huge page more, to start at a boundary; the rest is given back)
    let length = size.checked_add(HUGE)?;
    // SAFETY: a new private anonymous mapping, no file, no fixed address
    let start = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            length,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if start == libc::MAP_FAILED {
        return None;
    }
    let start = start as usize;
    let aligned = start.next_multiple_of(HUGE);
    // SAFETY: the head and tail of the mapping, outside `aligned..aligned + size`; then advice
    // only (a refusal, as with huge pages turned off, leaves ordinary pages)
    unsafe {
        if aligned > start {
            libc::munmap(start as *mut libc::c_void, aligned - start);
        }
        if start + length > aligned + size {
            libc::munmap(
                (aligned + size) as *mut libc::c_void,
                start + length - aligned - size,
            );
        }
        libc::madvise(aligned as *mut libc::c_void, size, libc::MADV_HUGEPAGE);
    }
    NonNull::new(aligned as *mut u8)
}

#[cfg(not(target_os = "linux"))]
fn map_huge(_: Layout) -> Option<NonNull<u8>> {
    None
}

#[cfg(target_os = "linux")]
fn unmap(start: NonNull<u8>, length: usize) {
    // SAFETY: a whole mapping made by `map_huge`, unmapped once (by its owner)
    unsafe { libc::munmap(start.as_ptr() as *mut libc::c_void, length) };
}

#[cfg(not(target_os = "linux"))]
fn unmap(_: NonNull<u8>, _: usize) {
    unreachable!("nothing is mapped here")
}

/// Allocations of `HUGE_MIN` bytes or more in huge pages, others from the global allocator:
/// for `HugeSlice` and for hash maps read at random (`encode/lookup.rs`).
#[derive(Debug, Clone, Copy, Default)]
pub struct HugeAlloc;

// SAFETY: memory is mapped for each allocation of `HUGE_MIN` or more (or refused) and
// unmapped with it, the rest goes to the global allocator and back: the choice depends on
// the layout only, which is the same at allocation and deallocation
unsafe impl allocator_api2::alloc::Allocator for HugeAlloc {
    fn allocate(&self, layout: Layout) -> Result<NonNull<[u8]>, allocator_api2::alloc::AllocError> {
        if cfg!(target_os = "linux") && layout.size() >= HUGE_MIN {
            let ptr = map_huge(layout).ok_or(allocator_api2::alloc::AllocError)?;
            return Ok(NonNull::slice_from_raw_parts(ptr, layout.size()));
        }
        allocator_api2::alloc::Global.allocate(layout)
    }

    fn allocate_zeroed(
        &self,
        layout: Layout,
    ) -> Result<NonNull<[u8]>, allocator_api2::alloc::AllocError> {
        if cfg!(target_os = "linux") && layout.size() >= HUGE_MIN {
            // (a new mapping is zeroed, and its pages are left untouched until used)
            return self.allocate(layout);
        }
        allocator_api2::alloc::Global.allocate_zeroed(layout)
    }

    unsafe fn deallocate(&self, ptr: NonNull<u8>, layout: Layout) {
        if cfg!(target_os = "linux") && layout.size() >= HUGE_MIN {
            unmap(ptr, layout.size().next_multiple_of(HUGE));
        } else {
            // SAFETY: allocated by `Global` with this layout (the caller's promise)
            unsafe { allocator_api2::alloc::Global.deallocate(ptr, layout) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_whatever_the_size() {
        // below a huge page (the allocator), above (a mapping), empty; clones are copies
        for len in [0usize, 1, 1000, (3 << 20) / 8 + 5] {
            let mut s = HugeSlice::new(len, 7u64);
            assert_eq!(s.len(), len);
            assert!(s.iter().all(|&v| v == 7));
            if len > 0 {
                s[len - 1] = 9;
            }
            let c = s.clone();
            assert_eq!(&c[..], &s[..]);
            // (a table of a megabyte or more starts at a huge page, on Linux)
            if cfg!(target_os = "linux") && len * 8 >= HUGE_MIN {
                assert!((s.as_ptr() as usize).is_multiple_of(HUGE));
            }
            let z = HugeSlice::<u8>::zeroed(len);
            assert!(z.iter().all(|&v| v == 0));
        }
    }

    #[test]
    fn hash_maps_in_huge_pages() {
        // a map that grows from the global allocator into mappings (and moves between them
        // as it grows), is cloned and dropped: every value found
        let mut map =
            hashbrown::HashMap::<u64, u64, rustc_hash::FxBuildHasher, HugeAlloc>::default();
        for k in 0..300_000u64 {
            map.insert(k * 7919, k);
        }
        let copy = map.clone();
        drop(map);
        assert!((0..300_000u64).all(|k| copy.get(&(k * 7919)) == Some(&k)));
        assert_eq!(copy.get(&1), None);
    }
}
