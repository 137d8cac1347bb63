//! The command's calls into the operating system that Rust cannot check, each with the reason
//! it is sound: how it ends (at once when done; on a catchable signal, a mapped input cut short
//! (SIGBUS) or memory it cannot get, after removing the temporary output and saying why), its
//! CPU time, and early writeback of its output.
//!
//! The ending paths run where little is allowed (a signal handler, a failing allocator): no
//! locks, no allocation, only `write`, `unlink` and `_exit`.

use std::ffi::{c_char, c_int, CString};
use std::path::Path;
use std::sync::atomic::{AtomicPtr, Ordering};

/// The temporary output file being written, as a C string; null when there is none. A path
/// once set is never freed: a handler on another thread may be reading it.
static PENDING: AtomicPtr<c_char> = AtomicPtr::new(std::ptr::null_mut());

/// Notes `path` as the temporary output to remove if the command is stopped.
pub(crate) fn set_pending(path: &Path) {
    use std::os::unix::ffi::OsStrExt;
    if let Ok(c) = CString::new(path.as_os_str().as_bytes()) {
        PENDING.store(c.into_raw(), Ordering::SeqCst);
    }
}

/// The temporary output is gone (renamed into place, or removed).
pub(crate) fn clear_pending() {
    PENDING.store(std::ptr::null_mut(), Ordering::SeqCst);
}

fn remove_pending() {
    let p = PENDING.swap(std::ptr::null_mut(), Ordering::SeqCst);
    if !p.is_null() {
        // SAFETY: `p` came from `CString::into_raw` and is never freed.
        unsafe { libc::unlink(p) };
    }
}

fn say(parts: &[&[u8]]) {
    for part in parts {
        // SAFETY: writes `part`'s bytes to stderr; a failure is ignored (nothing else to do).
        unsafe { libc::write(2, part.as_ptr().cast(), part.len()) };
    }
}

/// Removes the temporary output, says `parts` on stderr and ends the process with `code`.
fn stop(code: c_int, parts: &[&[u8]]) -> ! {
    remove_pending();
    say(parts);
    // SAFETY: ends the process at once; nothing is left to flush that matters (the output is
    // removed, and what was said went straight to the descriptor).
    unsafe { libc::_exit(code) }
}

/// The allocator could not get `size` bytes.
pub(crate) fn out_of_memory(size: usize) -> ! {
    let mut digits = itoa::Buffer::new();
    stop(
        1,
        &[
            b"jscalls: error: out of memory: ",
            digits.format(size).as_bytes(),
            b" bytes could not be allocated (is the process's memory limited, e.g. by ulimit -v?)\n",
        ],
    )
}

extern "C" fn on_stop(sig: c_int) {
    stop(128 + sig, &[]);
}

extern "C" fn on_bus(_: c_int) {
    stop(
        1,
        &[b"jscalls: error: the input file was cut short while it was read (another program is \
            changing it); read a finished copy, or set JSCALLS_NO_MMAP=1 to read it instead of \
            mapping it\n"],
    );
}

/// Ends the process at once with `code`, without exit handlers: the caller has flushed and
/// renamed everything that matters (at exit, the allocator would first hand its pages back one
/// `madvise` at a time, which the system does anyway).
pub(crate) fn exit_now(code: u8) -> ! {
    // SAFETY: ends the process; the caller's outputs are complete.
    unsafe { libc::_exit(c_int::from(code)) }
}

/// CPU time of the process so far, all threads, user and system (0 where it is not known).
pub(crate) fn cpu_seconds() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } == 0 {
        let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
        return s(u.ru_utime) + s(u.ru_stime);
    }
    0.0
}

/// Asks the kernel to start writing `len` bytes of `file` from `from` to disk now (Linux; a
/// no-op elsewhere). A failure is harmless: the final `fsync` reports real errors.
pub(crate) fn start_writeback(file: &std::fs::File, from: u64, len: u64) {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // SAFETY: sync_file_range only reads its integer arguments; the descriptor is open for
        // as long as `file` is borrowed.
        unsafe {
            libc::sync_file_range(
                file.as_raw_fd(),
                from as libc::off64_t,
                len as libc::off64_t,
                libc::SYNC_FILE_RANGE_WRITE,
            );
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (file, from, len);
}

/// Reserves disk blocks for `len` bytes of `file` from `from`, past its end, without changing
/// its size (Linux's `fallocate` with `FALLOC_FL_KEEP_SIZE`): writes into reserved blocks skip
/// the filesystem's delayed allocation of each page. Whether it was done (never emulated by
/// writing zeros; elsewhere, no).
pub(crate) fn reserve(file: &std::fs::File, from: u64, len: u64) -> bool {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        // Where `off_t` is 32 bits, past 2 GiB nothing more is reserved.
        let (Ok(from), Ok(len)) = (libc::off_t::try_from(from), libc::off_t::try_from(len)) else {
            return false;
        };
        // SAFETY: fallocate only reads its integer arguments; the descriptor is open for as long
        // as `file` is borrowed.
        unsafe { libc::fallocate(file.as_raw_fd(), libc::FALLOC_FL_KEEP_SIZE, from, len) == 0 }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (file, from, len);
        false
    }
}

/// Whether standard output was open when the command started. Rust's runtime puts `/dev/null`
/// (opened read-write) in place of a closed standard descriptor, so that output written to
/// a closed standard output would be lost without a word; that replacement is told apart from
/// a `> /dev/null` redirection (opened write-only) by its access mode.
pub(crate) fn stdout_was_open() -> bool {
    #[cfg(not(target_os = "linux"))]
    return true;
    // SAFETY: fstat writes only the struct it is given; fcntl F_GETFL only reads the flags.
    #[cfg(target_os = "linux")]
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(1, &mut st) != 0 {
            return false;
        }
        let dev_null = st.st_mode & libc::S_IFMT == libc::S_IFCHR && st.st_rdev == libc::makedev(1, 3);
        !(dev_null && libc::fcntl(1, libc::F_GETFL) & libc::O_ACCMODE == libc::O_RDWR)
    }
}

/// Installs the handlers: the signals that end a process by default remove the temporary
/// output first; SIGBUS (a mapped input cut short) says what happened; SIGXFSZ (a file size
/// limit) is ignored, so that the write fails with an error the command reports.
pub(crate) fn install() {
    let stopping = [
        libc::SIGINT,
        libc::SIGTERM,
        libc::SIGHUP,
        libc::SIGQUIT,
        libc::SIGUSR1,
        libc::SIGUSR2,
        libc::SIGALRM,
        libc::SIGVTALRM,
        libc::SIGPROF,
        libc::SIGXCPU,
    ];
    for sig in stopping {
        handle(sig, on_stop as extern "C" fn(c_int) as libc::sighandler_t);
    }
    handle(libc::SIGBUS, on_bus as extern "C" fn(c_int) as libc::sighandler_t);
    handle(libc::SIGXFSZ, libc::SIG_IGN);
}

fn handle(sig: c_int, handler: libc::sighandler_t) {
    // SAFETY: a zeroed sigaction with a handler and an empty mask is valid; the handlers only
    // call async-signal-safe functions (see the module's doc).
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = handler;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(sig, &action, std::ptr::null_mut());
    }
}
