//! Where a command writes: a file checked before any work and renamed into place only when
//! complete, a device or pipe written directly, or standard output; and the checks that keep
//! an output from replacing an input.

use std::fs;
use std::io::{self, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use jscalls::{Error, Source};

use super::gzip;
#[cfg(unix)]
use super::process;

/// An input's file name without `.gz`, `.json` and `.cpuprofile`.
pub(crate) fn stem(p: &Path) -> String {
    let mut s = p.file_name().map_or_else(|| "input".to_owned(), |f| f.to_string_lossy().into_owned());
    for ext in [".gz", ".json", ".cpuprofile"] {
        if let Some(t) = s.strip_suffix(ext) {
            s = t.to_owned();
        }
    }
    s
}

/// Copies a stream into a temporary file, so that it can be read twice. The first bytes are
/// looked at first: what cannot start a trace or a profile is not copied further, and the
/// read of the file then reports it.
pub(crate) fn spill_stream(source: &Source) -> Result<tempfile::NamedTempFile, Error> {
    let ctx = |e| Error::io("cannot keep standard input in a temporary file", e);
    let mut tmp = tempfile::Builder::new().prefix(".jscalls-input-").tempfile().map_err(ctx)?;
    let mut src = source.open()?;
    let read_err = |e| Error::io(format!("cannot read {}", source.display_name()), e);
    // Up to the first byte that is not whitespace (a pipe may hand over a byte at a time).
    let mut block = [0u8; 4096];
    let first = loop {
        let n = match src.read(&mut block) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(read_err(e)),
        };
        tmp.write_all(&block[..n]).map_err(ctx)?;
        if n == 0 {
            break None;
        }
        if let Some(&c) = block[..n].iter().find(|c| !c.is_ascii_whitespace()) {
            break Some(c);
        }
    };
    if matches!(first, Some(b'[' | b'{' | 0xEF)) {
        io::copy(&mut src, &mut tmp).map_err(read_err)?;
    }
    tmp.flush().map_err(ctx)?;
    Ok(tmp)
}

/// The output's buffer. Small writes (the timeline's lines, the headers) are gathered here;
/// writes at least this large bypass it, as the calls writer's rendered parts (about 256 KB) do.
pub(crate) const OUT_BUFFER: usize = 128 << 10;

/// Where one run writes, opened before the work starts.
pub(crate) enum Output {
    Stdout,
    /// A device or a pipe (`/dev/null`, a FIFO): written directly; renaming a file over it
    /// would replace it.
    Direct(fs::File, PathBuf),
    /// A temporary file next to the target, renamed over it when complete (flushed to disk
    /// first when its writeback is started early, with `--fsync`).
    Temp {
        file: EarlyWriteback,
        target: PathBuf,
        /// Gzipped, on this many threads.
        gzip: Option<usize>,
    },
}

impl Output {
    /// `threads`: how many may gzip an output whose name ends in `.gz`.
    pub(crate) fn create(path: Option<&Path>, fsync: bool, threads: usize) -> Result<Output, Error> {
        let Some(path) = path else {
            #[cfg(unix)]
            if !process::stdout_was_open() {
                return Err(Error::io("cannot write to standard output", io::Error::other("it is closed")));
            }
            return Ok(Output::Stdout);
        };
        // A symbolic link is written through: its target is replaced, the link stays.
        let target = match fs::symlink_metadata(path) {
            Ok(m) if m.file_type().is_symlink() => fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()),
            _ => path.to_path_buf(),
        };
        let shown = path.display();
        // An already open descriptor named by path (`/dev/stdout`, `/dev/fd/N`, `/proc/self/fd/N`)
        // is written directly, like a device: renaming a file over what it names would replace
        // the file the caller opened, or the link itself.
        let descriptor =
            [Path::new("/dev/stdout"), Path::new("/dev/stderr"), Path::new("/dev/fd"), Path::new("/proc/self/fd")]
                .iter()
                .any(|d| path.starts_with(d));
        if descriptor || fs::metadata(&target).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
            let file = fs::OpenOptions::new()
                .write(true)
                .open(&target)
                .map_err(|e| Error::io(format!("cannot open {shown}"), e))?;
            return Ok(Output::Direct(file, path.to_path_buf()));
        }
        if target.is_dir() {
            return Err(Error::io(format!("cannot write {shown}"), io::Error::other("it is a directory")));
        }
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !dir.is_dir() {
            let why = if dir.exists() { "is not a directory" } else { "does not exist" };
            return Err(Error::io(
                format!("cannot write {shown}"),
                io::Error::other(format!("{} {why}", dir.display())),
            ));
        }
        // The name is noted for the signal handlers before the file exists: a signal between
        // its creation and the note would leave it behind.
        let tmp = tempfile::Builder::new().prefix(".jscalls-").suffix(".tmp").make_in(&dir, |p| {
            #[cfg(unix)]
            process::set_pending(p);
            let mut o = fs::OpenOptions::new();
            o.read(true).write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut o, 0o600);
            let file = o.open(p);
            // Not ours (a name taken: another is tried): not to be removed.
            #[cfg(unix)]
            if file.is_err() {
                process::clear_pending();
            }
            file
        });
        let tmp = tmp.map_err(|e| {
            // Without the temporary file's name, which means nothing to the user.
            let e = e
                .raw_os_error()
                .map_or_else(|| io::Error::new(e.kind(), e.kind().to_string()), io::Error::from_raw_os_error);
            Error::io(format!("cannot write {shown}"), e)
        })?;
        let gzip = path.extension().is_some_and(|e| e == "gz").then_some(threads);
        Ok(Output::Temp { file: EarlyWriteback::new(tmp, fsync), target, gzip })
    }

    /// Whether the output is a file kept only once complete.
    pub(crate) fn is_temp(&self) -> bool {
        matches!(self, Output::Temp { .. })
    }

    /// The file written (None: standard output).
    pub(crate) fn target(&self) -> Option<&Path> {
        match self {
            Output::Stdout => None,
            Output::Direct(_, p) => Some(p),
            Output::Temp { target, .. } => Some(target),
        }
    }

    /// Writes with `f` and, for a file, renames it into place; on failure nothing is left.
    pub(crate) fn write(self, f: impl FnOnce(&mut dyn Write) -> Result<(), Error>) -> Result<(), Error> {
        match self {
            Output::Stdout => {
                let ctx = "cannot write to standard output";
                let mut w = BufWriter::with_capacity(OUT_BUFFER, Noted::new(io::stdout().lock()));
                f(&mut w).map_err(|e| w.get_ref().blame(e, ctx))?;
                w.flush().map_err(|e| Error::io(ctx, e))
            }
            Output::Direct(file, path) => {
                let ctx = format!("cannot write {}", path.display());
                let mut w = BufWriter::with_capacity(OUT_BUFFER, Noted::new(file));
                f(&mut w).map_err(|e| w.get_ref().blame(e, &ctx))?;
                w.flush().map_err(|e| Error::io(ctx, e))
            }
            Output::Temp { file, target, gzip } => {
                let fsync = file.early;
                let ctx = |what: &str| format!("cannot {what} {}", target.display());
                let result = (|| {
                    let mut w = BufWriter::with_capacity(OUT_BUFFER, Noted::new(file));
                    if let Some(threads) = gzip {
                        // The fastest level: a third larger than the default, several times faster.
                        gzip::gzip(threads, &mut w, |p| f(p)).map_err(|e| Error::io(ctx("write"), e))??;
                    } else {
                        f(&mut w).map_err(|e| w.get_ref().blame(e, &ctx("write")))?;
                    }
                    let tmp = w.into_inner().map_err(|e| Error::io(ctx("write"), e.into_error()))?.inner;
                    let tmp = tmp.finish().map_err(|e| Error::io(ctx("write"), e))?;
                    if fsync {
                        tmp.as_file().sync_all().map_err(|e| Error::io(ctx("write"), e))?;
                    }
                    // Temporary files are private (0600); the output gets the mode of the file
                    // it replaces, or the usual 0644.
                    #[cfg(unix)]
                    {
                        use std::os::unix::fs::PermissionsExt;
                        let mode = fs::metadata(&target).map(|m| m.permissions().mode() & 0o7777).unwrap_or(0o644);
                        tmp.as_file()
                            .set_permissions(fs::Permissions::from_mode(mode))
                            .map_err(|e| Error::io(ctx("set the permissions of"), e))?;
                    }
                    // A signal after the rename finds no temporary file to remove: harmless.
                    tmp.persist(&target).map_err(|e| Error::io(ctx("rename the output into"), e.error))?;
                    Ok(())
                })();
                // Renamed, or removed when dropped on failure.
                #[cfg(unix)]
                process::clear_pending();
                result
            }
        }
    }
}

/// The output's writer, noting whether a write to it failed: an error of the writing is then
/// the output's, and names it.
struct Noted<W> {
    inner: W,
    failed: bool,
}

impl<W> Noted<W> {
    fn new(inner: W) -> Noted<W> {
        Noted { inner, failed: false }
    }

    /// `e`, said of the output (`ctx`) when it is an I/O error and a write to the output failed.
    fn blame(&self, e: Error, ctx: &str) -> Error {
        match e {
            Error::Io { source, .. } if self.failed => Error::io(ctx, source),
            e => e,
        }
    }
}

impl<W: Write> Write for Noted<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner.write(buf).inspect_err(|_| self.failed = true)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.inner.write_all(buf).inspect_err(|_| self.failed = true)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush().inspect_err(|_| self.failed = true)
    }
}

/// A file being written that, when it is to be flushed to disk at the end (`--fsync`), asks
/// the kernel to start writing its bytes to disk a megabyte at a time, as soon as they are
/// written, so that the final `fsync` waits for the last megabyte instead of the whole output
/// (on Linux; elsewhere, or without `--fsync`, a plain file). Its blocks are reserved ahead of
/// the writes ([`process::reserve`]; on ext4 a third of the kernel's time for writing a large
/// file was the delayed allocation of its pages, and renaming such a file over another
/// started its writeback); [`EarlyWriteback::finish`] gives back what was not written.
pub(crate) struct EarlyWriteback {
    file: tempfile::NamedTempFile,
    /// Whether writeback is started early.
    early: bool,
    /// Bytes written so far, and bytes whose writeback has been started.
    written: u64,
    started: u64,
    /// Bytes whose blocks are reserved, and whether to reserve more (not once the
    /// filesystem has refused).
    reserved: u64,
    reserving: bool,
}

impl EarlyWriteback {
    /// Writeback is started per this many bytes: the final `fsync` waits for up to this much
    /// besides the file's metadata.
    const STEP: u64 = 1 << 20;
    /// Blocks are reserved as much ahead as has been written, at least this much ...
    const RESERVE_MIN: u64 = 1 << 20;
    /// ... and at most this much.
    const RESERVE_MAX: u64 = 64 << 20;

    pub(crate) fn new(file: tempfile::NamedTempFile, early: bool) -> EarlyWriteback {
        EarlyWriteback { file, early, written: 0, started: 0, reserved: 0, reserving: true }
    }

    /// The file, its blocks past what was written given back.
    pub(crate) fn finish(self) -> io::Result<tempfile::NamedTempFile> {
        if self.reserved > self.written {
            self.file.as_file().set_len(self.written)?;
        }
        Ok(self.file)
    }
}

impl Write for EarlyWriteback {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.reserving && self.written + buf.len() as u64 > self.reserved {
            let to = self.written + self.written.clamp(Self::RESERVE_MIN, Self::RESERVE_MAX).max(buf.len() as u64);
            #[cfg(unix)]
            let done = process::reserve(self.file.as_file(), self.reserved, to - self.reserved);
            #[cfg(not(unix))]
            let done = false;
            if done {
                self.reserved = to;
            }
            self.reserving = done;
        }
        let n = self.file.as_file_mut().write(buf)?;
        self.written += n as u64;
        if self.early && self.written - self.started >= Self::STEP {
            #[cfg(unix)]
            process::start_writeback(self.file.as_file(), self.started, self.written - self.started);
            self.started = self.written;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.as_file_mut().flush()
    }
}

/// Whether two paths name the same file (device and inode: hard links and bind mounts too).
pub(crate) fn same_file(a: &Path, b: &Path) -> bool {
    match (fs::metadata(a), fs::metadata(b)) {
        (Ok(x), Ok(y)) => same_inode(&x, &y),
        _ => false,
    }
}

#[cfg(unix)]
pub(crate) fn same_inode(x: &fs::Metadata, y: &fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt;
    x.dev() == y.dev() && x.ino() == y.ino()
}

#[cfg(not(unix))]
pub(crate) fn same_inode(_: &fs::Metadata, _: &fs::Metadata) -> bool {
    false
}

/// Whether standard output is the file `input` (`jscalls timeline IN >> IN`).
pub(crate) fn stdout_is(input: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let Ok(fd) = io::stdout().as_fd().try_clone_to_owned() else { return false };
        let out = fs::File::from(fd).metadata();
        match (out, fs::metadata(input)) {
            (Ok(o), Ok(i)) => o.is_file() && same_inode(&o, &i),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        let _ = input;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file written in pieces has its bytes and, once finished, no blocks reserved past them
    /// (on a filesystem that reserves them: ext4 here; where it refuses, none were).
    #[test]
    fn a_finished_file_keeps_no_blocks_past_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = EarlyWriteback::new(tempfile::NamedTempFile::new_in(dir.path()).unwrap(), false);
        let piece: Vec<u8> = (0..=255u8).cycle().take(300_000).collect();
        for _ in 0..10 {
            w.write_all(&piece).unwrap();
        }
        assert!(w.reserved == 0 || w.reserved > w.written, "{} reserved for {} written", w.reserved, w.written);
        let file = w.finish().unwrap();
        let bytes = fs::read(file.path()).unwrap();
        assert_eq!(bytes.len(), 3_000_000);
        assert!(bytes.chunks(300_000).all(|c| c == piece));
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let blocks = fs::metadata(file.path()).unwrap().blocks() * 512;
            assert!(blocks < 3_000_000 + (64 << 10), "{blocks} bytes of blocks for 3,000,000");
        }
    }
}
