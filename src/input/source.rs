//! Where the bytes come from: a file, standard input or memory; gzip is detected by its magic
//! bytes and inflated on a second thread, so that inflating and parsing overlap.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread;

use crate::error::Error;
use crate::input::reader::Window;

/// An input: a file, standard input or bytes in memory.
#[derive(Debug, Clone)]
pub enum Source {
    /// A file on disk (a regular file, or a FIFO or device, which can be read only once).
    File(PathBuf),
    /// Bytes in memory.
    Memory(Arc<[u8]>),
    /// Standard input, streamed: it can be read only once.
    Stdin,
}

/// How an input is read: the largest single JSON value accepted, and whether a plain file is
/// mapped.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WindowOptions {
    pub(crate) max_event_bytes: usize,
    pub(crate) mmap: bool,
}

impl Source {
    /// A file source.
    pub fn file(path: impl AsRef<Path>) -> Source {
        Source::File(path.as_ref().to_path_buf())
    }

    /// Standard input, read as a stream (memory does not grow with its size).
    pub fn stdin() -> Source {
        Source::Stdin
    }

    /// The name to use in messages.
    pub fn display_name(&self) -> String {
        match self {
            Source::File(p) => p.display().to_string(),
            Source::Memory(_) | Source::Stdin => "<stdin>".to_owned(),
        }
    }

    /// The file's own name (no directory), when the input is a file.
    pub fn file_name(&self) -> Option<String> {
        match self {
            Source::File(p) => p.file_name().map(|n| n.to_string_lossy().into_owned()),
            Source::Memory(_) | Source::Stdin => None,
        }
    }

    /// Whether the input can be read a second time (a regular file or bytes in memory; not
    /// standard input, a FIFO or a device).
    pub fn can_reread(&self) -> bool {
        match self {
            Source::File(p) => std::fs::metadata(p).is_ok_and(|m| m.is_file()),
            Source::Memory(_) => true,
            Source::Stdin => false,
        }
    }

    /// A window over the input for the event reader. With `mmap`, a plain (not gzip) regular
    /// file is mapped rather than read: nothing is copied, and the pages read are handed back
    /// as the window moves on. Anything else is [opened](Source::open).
    ///
    /// A mapped file must not shrink while it is read: a page past its new end cannot be read
    /// and the process is stopped by the system (SIGBUS), as every program that maps its input
    /// is ([`crate::Config::mmap`]).
    pub(crate) fn window(&self, o: WindowOptions) -> Result<Window, Error> {
        let (max_value, mmap) = (o.max_event_bytes, o.mmap);
        let name = self.display_name();
        if let Source::File(path) = self {
            // Opened once: a FIFO or a device gives its bytes to the first reader only.
            let file = open_input(path)?;
            if mmap {
                if let Some(map) = map_plain_file(&file, &name)? {
                    return Ok(Window::mapped(map, name, max_value));
                }
            }
            return Ok(Window::new(inflate_if_gzip(Box::new(file), &name)?, name, max_value));
        }
        Ok(Window::new(self.open()?, name, max_value))
    }

    /// Opens the input, inflating gzip (one or more members) when the first bytes say so.
    pub fn open(&self) -> Result<Box<dyn Read + Send>, Error> {
        let name = self.display_name();
        let raw: Box<dyn Read + Send> = match self {
            Source::File(p) => Box::new(open_input(p)?),
            Source::Memory(b) => Box::new(io::Cursor::new(ArcBytes(b.clone()))),
            Source::Stdin => Box::new(io::stdin()),
        };
        inflate_if_gzip(raw, &name)
    }
}

/// Opens an input file; a directory is refused here, with one mention of its path.
fn open_input(path: &Path) -> Result<File, Error> {
    let name = path.display();
    let file = File::open(path).map_err(|e| Error::io(format!("cannot open {name}"), e))?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(Error::io(
            format!("cannot read {name}"),
            io::Error::new(
                io::ErrorKind::IsADirectory,
                "it is a directory, not a trace, a .cpuprofile or a Firefox profile",
            ),
        ));
    }
    Ok(file)
}

/// `raw`, inflated when its first bytes are gzip's magic bytes.
fn inflate_if_gzip(mut raw: Box<dyn Read + Send>, name: &str) -> Result<Box<dyn Read + Send>, Error> {
    let mut magic = [0u8; 2];
    let n = read_full(&mut raw, &mut magic).map_err(|e| Error::io(format!("cannot read {name}"), e))?;
    let head = io::Cursor::new(magic[..n].to_vec());
    let joined = head.chain(raw);
    if n == 2 && magic == [0x1f, 0x8b] {
        let decoder = GzMembers::new(BufReader::with_capacity(1 << 20, joined));
        Ok(Prefetch::spawn(decoder))
    } else {
        Ok(Box::new(joined))
    }
}

/// The gzip members of a stream, one after another, inflated. What follows the last member
/// may be zero bytes (padding, as some writers leave), which end the stream as Node's
/// `gunzipSync` ends it; any other byte there is an error.
struct GzMembers<R: std::io::BufRead> {
    /// The member being inflated; None between members.
    member: Option<flate2::bufread::GzDecoder<R>>,
    /// The stream, between members.
    rest: Option<R>,
}

impl<R: std::io::BufRead> GzMembers<R> {
    fn new(r: R) -> GzMembers<R> {
        GzMembers { member: Some(flate2::bufread::GzDecoder::new(r)), rest: None }
    }

    /// After a member: whether another one starts (false at the end of the stream, or of zero
    /// padding; an error for anything else).
    fn next_member(&mut self) -> io::Result<bool> {
        let Some(mut r) = self.rest.take() else { return Ok(false) };
        loop {
            let buf = r.fill_buf()?;
            if buf.is_empty() {
                return Ok(false);
            }
            if buf[0] == 0x1f {
                self.member = Some(flate2::bufread::GzDecoder::new(r));
                return Ok(true);
            }
            let zeros = buf.iter().take_while(|&&b| b == 0).count();
            if zeros == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "bytes after the gzip data that are neither gzip nor zero padding",
                ));
            }
            r.consume(zeros);
        }
    }
}

impl<R: std::io::BufRead> Read for GzMembers<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        loop {
            let Some(member) = &mut self.member else {
                if self.next_member()? {
                    continue;
                }
                return Ok(0);
            };
            let n = member.read(out)?;
            if n > 0 || out.is_empty() {
                return Ok(n);
            }
            let done = self.member.take().expect("a member");
            self.rest = Some(done.into_inner());
        }
    }
}

/// Maps `file` when it is a regular, non-empty file that does not start with gzip's magic bytes.
/// `None` when it is not, or when it cannot be mapped (it is then read).
fn map_plain_file(file: &File, name: &str) -> Result<Option<memmap2::Mmap>, Error> {
    let meta = file.metadata().map_err(|e| Error::io(format!("cannot read {name}"), e))?;
    if !meta.is_file() || meta.len() < 2 || usize::try_from(meta.len()).is_err() {
        return Ok(None);
    }
    let Some(map) = crate::sys::map_file(file) else { return Ok(None) };
    if map[..2] == [0x1f, 0x8b] {
        return Ok(None);
    }
    Ok(Some(map))
}

struct ArcBytes(Arc<[u8]>);

impl AsRef<[u8]> for ArcBytes {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

fn read_full(r: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// Reads from `inner` on a background thread in large blocks, a few blocks ahead. Used blocks
/// go back to the reader, so that no memory is allocated (and faulted in) per block.
struct Prefetch {
    /// Blocks, each with the length of its bytes read.
    rx: Option<Receiver<io::Result<Block>>>,
    free: SyncSender<Vec<u8>>,
    cur: Vec<u8>,
    /// Bytes of `cur` read, and taken.
    len: usize,
    pos: usize,
    done: bool,
    handle: Option<thread::JoinHandle<()>>,
}

impl Drop for Prefetch {
    /// Stops the reader thread and waits for it: no thread outlives its input.
    fn drop(&mut self) {
        drop(self.rx.take()); // its next send fails, and it returns
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

const PREFETCH_BLOCK: usize = 4 << 20;

/// A block of [`PREFETCH_BLOCK`] bytes and how many of them were read.
type Block = (Vec<u8>, usize);

impl Prefetch {
    /// `inner` read on a thread of its own; read on the caller's thread when no thread can be
    /// started (a process limit), only slower.
    fn spawn<R: Read + Send + 'static>(inner: R) -> Box<dyn Read + Send> {
        let (tx, rx) = sync_channel::<io::Result<Block>>(3);
        let (free, recycled) = sync_channel::<Vec<u8>>(4);
        let slot = Arc::new(std::sync::Mutex::new(Some(inner)));
        let theirs = slot.clone();
        let spawned = crate::parallel::spawn_named("jscalls-read", move || {
            let Some(mut inner) = theirs.lock().ok().and_then(|mut s| s.take()) else { return };
            loop {
                // A recycled block keeps its length: zeroed once, when it was made.
                let mut block = recycled.try_recv().unwrap_or_default();
                block.resize(PREFETCH_BLOCK, 0);
                let mut n = 0;
                let mut err = None;
                while n < block.len() {
                    match inner.read(&mut block[n..]) {
                        Ok(0) => break,
                        Ok(k) => n += k,
                        Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                        Err(e) => {
                            err = Some(io::Error::new(e.kind(), format!("gzip stream: {e}")));
                            break;
                        }
                    }
                }
                // What was read before an error is handed over first.
                if n > 0 && tx.send(Ok((block, n))).is_err() {
                    return;
                }
                if let Some(e) = err {
                    let _ = tx.send(Err(e));
                    return;
                }
                if n == 0 {
                    return;
                }
            }
        });
        match spawned {
            Ok(handle) => Box::new(Prefetch {
                rx: Some(rx),
                free,
                cur: Vec::new(),
                len: 0,
                pos: 0,
                done: false,
                handle: Some(handle),
            }),
            Err(_) => {
                let inner = slot.lock().ok().and_then(|mut s| s.take()).expect("the thread never started");
                Box::new(inner)
            }
        }
    }
}

impl Read for Prefetch {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.pos == self.len {
            if self.done {
                return Ok(0);
            }
            let Some(rx) = &self.rx else { return Ok(0) };
            match rx.recv() {
                Ok(Ok((block, len))) => {
                    let used = std::mem::replace(&mut self.cur, block);
                    if used.capacity() > 0 {
                        let _ = self.free.try_send(used);
                    }
                    (self.len, self.pos) = (len, 0);
                }
                Ok(Err(e)) => {
                    self.done = true;
                    return Err(e);
                }
                Err(_) => {
                    self.done = true;
                    return Ok(0);
                }
            }
        }
        let n = out.len().min(self.len - self.pos);
        out[..n].copy_from_slice(&self.cur[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}
