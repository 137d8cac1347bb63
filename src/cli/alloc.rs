//! The command's memory allocator (part of the binary, not of the library).
//!
//! jscalls makes millions of small blocks on several threads and a few dozen large tables that
//! live for one stage each; the two are served differently (figures in `docs/performance.md`):
//!
//! - **Small blocks** (under [`LARGE`]) come from mimalloc, whose per-thread heaps free a block
//!   made on another thread without a lock (the scan threads make what the delivering thread
//!   frees; glibc's arenas locked there).
//! - **Large blocks** get a mapping of their own, aligned and sized to whole 2 MiB pages and
//!   marked for transparent huge pages (one page fault per 2 MiB instead of 512), grown with
//!   `mremap` instead of copying, and handed back to the system as soon as they are freed, so
//!   that a stage's peak holds only what that stage uses.
//! - mimalloc's own arena is committed on demand (`MIMALLOC_ARENA_EAGER_COMMIT=0`, unless the
//!   variable is set): committed up front it is marked for huge pages, and the small blocks of
//!   a few threads then spread over 2 MiB pages that the kernel zeroes whole.

use std::alloc::{GlobalAlloc, Layout};

/// Blocks of at least this size get a mapping of their own.
pub(crate) const LARGE: usize = 1 << 20;

/// `mi_option_purge_delay`, after `mi_option_eager_commit_delay` in mimalloc v2's
/// `mi_option_e` (libmimalloc-sys names the one before it only).
const PURGE_DELAY: libmimalloc_sys::mi_option_t = libmimalloc_sys::mi_option_eager_commit_delay + 1;

/// From now on, memory freed goes back to the system at once rather than after mimalloc's
/// delay (10 ms): for a command that holds one input's results while it reads the next, whose
/// peaks would otherwise add up. (It costs `calls` about 15 % of its time, so only there.)
pub(crate) fn return_freed_memory_at_once() {
    // SAFETY: mi_option_set takes a valid option and any value.
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, 0) }
}

/// Hands what this thread's heap holds free back to the system now.
pub(crate) fn release_free_memory() {
    // SAFETY: mi_collect only walks mimalloc's own heap of the calling thread.
    unsafe { libmimalloc_sys::mi_collect(true) }
}

/// mimalloc for small blocks, mappings of their own for large ones.
pub(crate) struct Split;

/// Whether mimalloc's options are set (before its first allocation).
static CONFIGURED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// mimalloc for a new small block, its options set first (freeing or resizing a block needs
/// no check: making it ran this).
#[inline]
fn small() -> mimalloc::MiMalloc {
    if !CONFIGURED.load(std::sync::atomic::Ordering::Relaxed) {
        configure();
    }
    mimalloc::MiMalloc
}

/// `mi_option_arena_eager_commit`: the fifth member of `mi_option_e` in mimalloc v2's
/// `mimalloc.h` (libmimalloc-sys names only some of them).
#[cfg(target_os = "linux")]
const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;

/// Sets mimalloc's options, where the environment does not: called before mimalloc reserves
/// its arena (on its first allocation), when the process has a single thread.
#[cold]
fn configure() {
    #[cfg(target_os = "linux")]
    // SAFETY: getenv reads a NUL-terminated name and allocates nothing (this runs inside the
    // allocator); mi_option_set takes a valid option and any value.
    unsafe {
        if libc::getenv(c"MIMALLOC_ARENA_EAGER_COMMIT".as_ptr()).is_null() {
            libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0);
        }
    }
    CONFIGURED.store(true, std::sync::atomic::Ordering::Relaxed);
}

#[cfg(target_os = "linux")]
mod large {
    use std::ptr::null_mut;

    const HUGE: usize = 2 << 20;

    fn round_up(n: usize, to: usize) -> usize {
        (n + to - 1) & !(to - 1)
    }

    /// A new mapping of at least `size` bytes starting on a 2 MiB boundary; null if the
    /// system refuses.
    pub(super) unsafe fn map(size: usize) -> *mut u8 {
        // Whole huge pages (see the module docs).
        let Some(need) = size.checked_add(HUGE - 1).map(|n| n & !(HUGE - 1)) else { return null_mut() };
        let Some(len) = need.checked_add(HUGE) else { return null_mut() };
        // Linux places mappings of whole huge pages on a huge-page boundary, but that is not
        // promised: map a huge page more than needed and trim both ends.
        let p = libc::mmap(
            null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        );
        if p == libc::MAP_FAILED {
            return null_mut();
        }
        let start = p as usize;
        let aligned = round_up(start, HUGE);
        let end = aligned + need;
        if aligned > start {
            libc::munmap(p, aligned - start);
        }
        if start + len > end {
            libc::munmap(end as *mut libc::c_void, start + len - end);
        }
        // Advice only: without transparent huge pages the mapping works all the same.
        libc::madvise(aligned as *mut libc::c_void, end - aligned, libc::MADV_HUGEPAGE);
        aligned as *mut u8
    }

    pub(super) unsafe fn unmap(p: *mut u8, size: usize) {
        libc::munmap(p as *mut libc::c_void, round_up(size, HUGE));
    }

    /// Resizes a mapping made by [`map`], keeping its bytes; null (the old one left as it
    /// was) if the system refuses.
    pub(super) unsafe fn remap(p: *mut u8, old: usize, new: usize) -> *mut u8 {
        let (old_len, new_len) = (round_up(old, HUGE), round_up(new, HUGE));
        if old_len == new_len {
            return p;
        }
        // Shrinking, or growing into free address space just after it, keeps it in place.
        let q = libc::mremap(p as *mut libc::c_void, old_len, new_len, 0);
        if q != libc::MAP_FAILED {
            return p;
        }
        // Otherwise its pages move into a new aligned mapping (the move replaces it).
        let dest = map(new);
        if dest.is_null() {
            return null_mut();
        }
        let q = libc::mremap(
            p as *mut libc::c_void,
            old_len,
            new_len,
            libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
            dest as *mut libc::c_void,
        );
        if q == libc::MAP_FAILED {
            unmap(dest, new);
            return null_mut();
        }
        dest
    }
}

/// Whether a block of this layout gets a mapping of its own.
#[inline]
fn is_large(l: &Layout) -> bool {
    cfg!(target_os = "linux") && l.size() >= LARGE && l.align() <= 4096
}

// SAFETY: the layout's size and alignment decide which allocator makes a block, and the same
// test on the layout it is freed or resized with (the one it was made with, as `GlobalAlloc`
// requires) finds that allocator again; a resize across `LARGE` makes a new block, copies
// and frees the old one. Fresh mappings are zeroed, so `alloc_zeroed` needs nothing more.
unsafe impl GlobalAlloc for Split {
    #[inline]
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        #[cfg(target_os = "linux")]
        if is_large(&l) {
            return checked(large::map(l.size()), l.size());
        }
        checked(small().alloc(l), l.size())
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        #[cfg(target_os = "linux")]
        if is_large(&l) {
            return checked(large::map(l.size()), l.size());
        }
        checked(small().alloc_zeroed(l), l.size())
    }

    #[inline]
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        #[cfg(target_os = "linux")]
        if is_large(&l) {
            return large::unmap(p, l.size());
        }
        // A block exists, so `small` has run: mimalloc is configured.
        mimalloc::MiMalloc.dealloc(p, l)
    }

    #[inline]
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new_size: usize) -> *mut u8 {
        let new = Layout::from_size_align_unchecked(new_size, l.align());
        match (is_large(&l), is_large(&new)) {
            (false, false) => checked(mimalloc::MiMalloc.realloc(p, l, new_size), new_size),
            #[cfg(target_os = "linux")]
            (true, true) => checked(large::remap(p, l.size(), new_size), new_size),
            _ => {
                let q = self.alloc(new);
                if !q.is_null() {
                    std::ptr::copy_nonoverlapping(p, q, l.size().min(new_size));
                    self.dealloc(p, l);
                }
                q
            }
        }
    }
}

/// `p`, or the command ends with a clear error when memory could not be had: an allocation
/// failure would otherwise abort the process with a bare message.
#[inline]
fn checked(p: *mut u8, size: usize) -> *mut u8 {
    #[cfg(unix)]
    if p.is_null() {
        super::process::out_of_memory(size);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks that `v` holds 0, 1, 2, … and nothing else.
    fn check(v: &[u64]) {
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64), "contents lost");
    }

    #[test]
    fn blocks_keep_their_bytes_across_sizes() {
        // `Split` called directly, so that each path is taken on purpose.
        unsafe {
            let a = Split;
            let mut size = 8usize;
            let l = Layout::from_size_align(size, 8).unwrap();
            let mut p = a.alloc(l) as *mut u64;
            *p = 0;
            let mut n = 1;
            // Small → large (a copy), large → large in place or moved, up to 48 MiB.
            while size < 48 << 20 {
                let new = size * 3;
                p = a.realloc(p as *mut u8, Layout::from_size_align(size, 8).unwrap(), new) as *mut u64;
                assert!(!p.is_null());
                size = new;
                for i in n..size / 8 {
                    *p.add(i) = i as u64;
                }
                n = size / 8;
                check(std::slice::from_raw_parts(p, n));
            }
            // Large → large smaller, then large → small (a copy).
            for new in [3 << 20, 5 << 10] {
                p = a.realloc(p as *mut u8, Layout::from_size_align(size, 8).unwrap(), new) as *mut u64;
                size = new;
                check(std::slice::from_raw_parts(p, size / 8));
            }
            a.dealloc(p as *mut u8, Layout::from_size_align(size, 8).unwrap());
        }
    }

    /// mimalloc's arena is committed on demand unless the environment says otherwise. The
    /// option's number is checked by its neighbours in `mi_option_e`, whose defaults are
    /// known: eager_commit (1) before it, purge_decommits (1) and allow_large_os_pages (0,
    /// numbered by libmimalloc-sys) after it.
    #[cfg(target_os = "linux")]
    #[test]
    fn the_arena_is_committed_on_demand() {
        use libmimalloc_sys::{mi_option_get, mi_option_large_os_pages};
        unsafe {
            let l = Layout::from_size_align(64, 8).unwrap();
            Split.dealloc(Split.alloc(l), l);
            if libc::getenv(c"MIMALLOC_ARENA_EAGER_COMMIT".as_ptr()).is_null() {
                assert_eq!(mi_option_get(ARENA_EAGER_COMMIT), 0);
            }
            assert_eq!(mi_option_large_os_pages, ARENA_EAGER_COMMIT + 2);
            let around =
                [ARENA_EAGER_COMMIT - 1, ARENA_EAGER_COMMIT + 1, ARENA_EAGER_COMMIT + 2].map(|o| mi_option_get(o));
            assert_eq!(around, [1, 1, 0]);
        }
    }

    /// The purge delay's number is checked by its default (10 ms) and its neighbour's
    /// (eager_commit_delay, 1).
    #[cfg(target_os = "linux")]
    #[test]
    fn the_purge_delay_is_the_option_after_eager_commit_delay() {
        use libmimalloc_sys::{mi_option_eager_commit_delay, mi_option_get};
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            unsafe {
                assert_eq!((mi_option_get(mi_option_eager_commit_delay), mi_option_get(PURGE_DELAY)), (1, 10));
            }
        }
    }

    #[test]
    fn large_blocks_are_zeroed_and_aligned() {
        unsafe {
            let a = Split;
            for (size, align) in [(LARGE, 8), (7 << 20, 4096), (3 << 20, 1 << 16)] {
                let l = Layout::from_size_align(size, align).unwrap();
                let p = a.alloc_zeroed(l);
                assert!(!p.is_null());
                assert_eq!(p as usize % align, 0);
                assert!(std::slice::from_raw_parts(p, size).iter().all(|&b| b == 0));
                std::ptr::write_bytes(p, 0xa5, size);
                a.dealloc(p, l);
            }
        }
    }
}
