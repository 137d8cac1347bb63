//! The library's calls into the operating system that Rust cannot check: mapping an input file
//! and handing its pages back. Everything `unsafe` about the system is here, each with the
//! reason it is sound.

use std::fs::File;

/// Maps `file` read-only; None when it cannot be mapped (the caller then reads it).
///
/// # Safety argument
/// The mapping is read-only and only ever read as bytes. Another program changing the file
/// while it is read gives mixed bytes, as it does to `read`; one cutting it short makes the
/// next read of a page past the new end stop the process with SIGBUS, as it does any program
/// that maps its input ([`crate::Config::mmap`] turns mapping off; the command reports it).
pub(crate) fn map_file(file: &File) -> Option<memmap2::Mmap> {
    // SAFETY: see above.
    unsafe { memmap2::Mmap::map(file) }.ok()
}

/// Hands back the resident pages of `map[from..to]` (whole pages, rounded outward): they leave
/// the process's memory, not the page cache. Advice only: a failure leaves them resident.
///
/// # Safety argument
/// The mapping is of a file, shared and read-only: a page dropped is mapped again from the page
/// cache when it is next touched, with the same bytes, so a slice still into it (a neighbour's,
/// on a shared page) stays valid.
#[cfg(target_os = "linux")]
pub(crate) fn release_pages(map: &memmap2::Mmap, from: usize, to: usize) {
    let page = page_size();
    let first = from / page * page;
    let last = to.next_multiple_of(page).min(map.len());
    if last > first {
        // SAFETY: see above.
        let _ = unsafe { map.unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, first, last - first) };
    }
}

/// The system's page size (the unit of `madvise`).
#[cfg(target_os = "linux")]
pub(crate) fn page_size() -> usize {
    static PAGE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    // SAFETY: sysconf has no preconditions.
    *PAGE.get_or_init(|| usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096).max(1))
}
