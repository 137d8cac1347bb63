//! The bytes of an input as the window reads them: from the source, or inflated ahead on a
//! thread of its own ([`Prefetch`]), whose blocks are copied in without zeroing room first.

use std::io::{self, Read};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread;

/// The bytes of an input as they come: read from the source, or inflated ahead on a thread
/// of its own, in memory already.
pub(crate) enum Stream {
    Read(Box<dyn Read + Send>),
    Inflated(Box<Prefetch>),
}

impl Stream {
    /// Appends up to `max` bytes to `buf` (fewer when fewer are ready); 0 at the end.
    /// Inflated bytes are copied in; others are read into room zeroed first.
    pub(crate) fn append(&mut self, buf: &mut Vec<u8>, max: usize) -> io::Result<usize> {
        match self {
            Stream::Read(r) => {
                let start = buf.len();
                buf.resize(start + max, 0);
                let got = r.read(&mut buf[start..]);
                buf.truncate(start + got.as_ref().map_or(0, |&n| n));
                got
            }
            Stream::Inflated(p) => p.append(buf, max),
        }
    }

    /// The same bytes as a reader.
    pub(crate) fn into_read(self) -> Box<dyn Read + Send> {
        match self {
            Stream::Read(r) => r,
            Stream::Inflated(p) => p,
        }
    }
}

/// Reads from `inner` on a background thread in large blocks, a few blocks ahead. Used blocks
/// go back to the reader, so that no memory is allocated (and faulted in) per block.
pub(crate) struct Prefetch {
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
    pub(crate) fn spawn<R: Read + Send + 'static>(inner: R) -> Stream {
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
            Ok(handle) => Stream::Inflated(Box::new(Prefetch {
                rx: Some(rx),
                free,
                cur: Vec::new(),
                len: 0,
                pos: 0,
                done: false,
                handle: Some(handle),
            })),
            Err(_) => {
                let inner = slot.lock().ok().and_then(|mut s| s.take()).expect("the thread never started");
                Stream::Read(Box::new(inner))
            }
        }
    }

    /// Whether bytes are ready in `cur`, waiting for the next block when it is used up; false
    /// at the end of the stream (an error once, after the bytes read before it).
    fn ready(&mut self) -> io::Result<bool> {
        while self.pos == self.len {
            if self.done {
                return Ok(false);
            }
            let Some(rx) = &self.rx else { return Ok(false) };
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
                    return Ok(false);
                }
            }
        }
        Ok(true)
    }

    /// Appends up to `max` of the bytes ready (waiting for a block when none is); 0 at the end.
    fn append(&mut self, buf: &mut Vec<u8>, max: usize) -> io::Result<usize> {
        if !self.ready()? {
            return Ok(0);
        }
        let n = max.min(self.len - self.pos);
        buf.extend_from_slice(&self.cur[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

impl Read for Prefetch {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if !self.ready()? {
            return Ok(0);
        }
        let n = out.len().min(self.len - self.pos);
        out[..n].copy_from_slice(&self.cur[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gives `data`, then fails with `kind` (when given) instead of ending.
    struct Failing {
        data: io::Cursor<Vec<u8>>,
        kind: Option<io::ErrorKind>,
    }

    impl Read for Failing {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            match (self.data.read(out)?, self.kind) {
                (0, Some(kind)) if !out.is_empty() => Err(io::Error::new(kind, "broken")),
                (n, _) => Ok(n),
            }
        }
    }

    fn bytes(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect()
    }

    /// Everything `s` appends in steps of `step`, and the error it ended with.
    fn drain(mut s: Stream, step: usize) -> (Vec<u8>, Option<io::ErrorKind>) {
        let mut buf = Vec::new();
        loop {
            let before = buf.len();
            match s.append(&mut buf, step) {
                Ok(0) => return (buf, None),
                Ok(n) => assert_eq!(buf.len(), before + n),
                Err(e) => {
                    assert_eq!(buf.len(), before, "a failed append adds nothing");
                    return (buf, Some(e.kind()));
                }
            }
        }
    }

    #[test]
    fn appends_give_every_byte_in_order_across_blocks() {
        let data = bytes(3 * PREFETCH_BLOCK + 12_345);
        for step in [1 << 10, 256 << 10, PREFETCH_BLOCK + 1] {
            let inflated = Prefetch::spawn(io::Cursor::new(data.clone()));
            assert!(matches!(inflated, Stream::Inflated(_)));
            assert_eq!(drain(inflated, step), (data.clone(), None));
            let read = Stream::Read(Box::new(io::Cursor::new(data.clone())));
            assert_eq!(drain(read, step), (data.clone(), None));
        }
    }

    #[test]
    fn an_error_comes_after_the_bytes_read_before_it() {
        let data = bytes(PREFETCH_BLOCK + 777);
        let kind = Some(io::ErrorKind::UnexpectedEof);
        let inflated = Prefetch::spawn(Failing { data: io::Cursor::new(data.clone()), kind });
        assert_eq!(drain(inflated, 64 << 10), (data.clone(), kind));
        let read = Stream::Read(Box::new(Failing { data: io::Cursor::new(data.clone()), kind }));
        assert_eq!(drain(read, 64 << 10), (data, kind));
    }
}
