//! Where the bytes come from: a file, standard input or memory; gzip is detected by its magic
//! bytes and inflated on a second thread, so that inflating and parsing overlap.

use std::fs::File;
use std::io::{self, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::Error;
use crate::input::reader::Window;
use crate::input::stream::{Prefetch, Stream};

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
        Ok(Window::new(self.stream()?, name, max_value))
    }

    /// Opens the input, inflating gzip (one or more members) when the first bytes say so.
    pub fn open(&self) -> Result<Box<dyn Read + Send>, Error> {
        self.stream().map(Stream::into_read)
    }

    /// [`Source::open`], as the window reads it.
    fn stream(&self) -> Result<Stream, Error> {
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
fn inflate_if_gzip(mut raw: Box<dyn Read + Send>, name: &str) -> Result<Stream, Error> {
    let mut magic = [0u8; 2];
    let n = read_full(&mut raw, &mut magic).map_err(|e| Error::io(format!("cannot read {name}"), e))?;
    let head = io::Cursor::new(magic[..n].to_vec());
    let joined = head.chain(raw);
    if n == 2 && magic == [0x1f, 0x8b] {
        let decoder = GzMembers::new(BufReader::with_capacity(1 << 20, joined));
        Ok(Prefetch::spawn(decoder))
    } else {
        Ok(Stream::Read(Box::new(joined)))
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
