//! gzip on several threads, as the bytes are written: 256 KiB pieces, each deflated on its own
//! (by a helper thread while the writer goes on), each but the last ending with a sync flush
//! (on a byte boundary, with no reference to what came before), concatenated into one gzip
//! member whose CRC is combined from the pieces' (the method of pigz), passed on to the output
//! in order as they are done (so memory holds a few pieces, not the whole). The pieces do not
//! depend on the number of threads, nor on how the bytes were cut into writes, so neither do
//! the bytes.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::{Condvar, Mutex, MutexGuard};

use flate2::{Compress, Compression, Crc, FlushCompress, Status};

/// The size of a piece: small enough that the last ones, deflated once the writer is done,
/// take little time (1 MiB took 4 ms longer on the Firefox export of the generated trace),
/// large enough that what each sync flush and lost context cost is lost in the noise (+0.02 %).
const PIECE: usize = 1 << 18;

/// Everything `f` writes, gzipped at the fastest level on up to `threads` threads (this one
/// included) into `out`, as the pieces are done and in their order; with what `f` returned.
/// Writing to `out` fails `f`'s writes (a write error is returned to the writer).
pub(crate) fn gzip<R>(threads: usize, out: &mut dyn Write, f: impl FnOnce(&mut Pieces<'_, '_>) -> R) -> io::Result<R> {
    let shared = Shared {
        queue: Mutex::new(Queue {
            todo: VecDeque::new(),
            closed: false,
            done: VecDeque::new(),
            first_done: 0,
            spare: Vec::new(),
        }),
        posted: Condvar::new(),
    };
    let helpers = threads.max(1) - 1;
    // Header: deflate, no name, mtime 0, fastest (XFL 4), OS unknown.
    out.write_all(&[0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 255])?;
    let mut w = Pieces {
        shared: &shared,
        piece: Vec::with_capacity(PIECE),
        next: 0,
        backlog: helpers * 2,
        out,
        crc: Crc::new(),
        failed: None,
    };
    let r = std::thread::scope(|s| {
        for _ in 0..helpers {
            s.spawn(|| {
                while let Some(job) = shared.take(true) {
                    shared.finish(job);
                }
            });
        }
        let _closing = Closing(&shared);
        let r = f(&mut w);
        w.close();
        // This thread deflates what the helpers have not taken yet.
        while let Some(job) = shared.take(false) {
            shared.finish(job);
        }
        r
    });
    // Every piece is deflated now (the helpers are done): what is left goes out, then the CRC.
    w.pass_on()?;
    w.out.write_all(&w.crc.sum().to_le_bytes())?;
    w.out.write_all(&w.crc.amount().to_le_bytes())?;
    Ok(r)
}

/// The writer [`gzip`] hands out: it cuts what it is given into pieces, posts each full one,
/// and passes on the deflated ones that are next in order.
pub(crate) struct Pieces<'s, 'o> {
    shared: &'s Shared,
    piece: Vec<u8>,
    /// The number of the piece being filled.
    next: usize,
    /// Pieces waiting beyond this many are deflated by the writer itself, which keeps the
    /// memory bounded when writing outruns deflating (and does all of it with no helper).
    backlog: usize,
    out: &'o mut dyn Write,
    /// The CRC of the pieces passed on.
    crc: Crc,
    /// The first error writing to `out`.
    failed: Option<io::Error>,
}

struct Shared {
    queue: Mutex<Queue>,
    posted: Condvar,
}

struct Queue {
    /// Pieces posted and not taken: number, bytes, whether last.
    todo: VecDeque<(usize, Vec<u8>, bool)>,
    /// Set once the last piece is posted (or the writer is dropped).
    closed: bool,
    /// Each piece deflated, with its CRC, from piece `first_done` on (the earlier ones were
    /// passed on).
    done: VecDeque<Option<(Vec<u8>, Crc)>>,
    first_done: usize,
    /// Pieces deflated, emptied for the writer to fill again (a new block per piece, made on
    /// one thread and freed on another, held 7 MB more at the peak of a gzipped timeline of
    /// the 105 MB generated trace).
    spare: Vec<Vec<u8>>,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        // A panic while deflating leaves no half-changed queue: a slot is set whole or not.
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The next piece to deflate; with `wait`, waits for one until the writer closes.
    fn take(&self, wait: bool) -> Option<(usize, Vec<u8>, bool)> {
        let mut q = self.lock();
        loop {
            if let Some(job) = q.todo.pop_front() {
                return Some(job);
            }
            if q.closed || !wait {
                return None;
            }
            q = self.posted.wait(q).unwrap_or_else(|e| e.into_inner());
        }
    }

    fn finish(&self, (k, mut piece, last): (usize, Vec<u8>, bool)) {
        let r = deflate(&piece, last);
        piece.clear();
        let mut q = self.lock();
        q.spare.push(piece);
        let k = k - q.first_done;
        if q.done.len() <= k {
            q.done.resize_with(k + 1, || None);
        }
        q.done[k] = Some(r);
    }

    fn post(&self, job: (usize, Vec<u8>, bool), backlog: usize) {
        let mut q = self.lock();
        q.todo.push_back(job);
        let behind = (q.todo.len() > backlog).then(|| q.todo.pop_front()).flatten();
        drop(q);
        self.posted.notify_one();
        if let Some(job) = behind {
            self.finish(job);
        }
    }
}

impl Pieces<'_, '_> {
    /// Passes on the deflated pieces that are next in order.
    fn pass_on(&mut self) -> io::Result<()> {
        if let Some(e) = &self.failed {
            return Err(io::Error::new(e.kind(), e.to_string()));
        }
        let mut ready = Vec::new();
        {
            let mut q = self.shared.lock();
            while let Some(Some(_)) = q.done.front() {
                ready.push(q.done.pop_front().flatten().expect("a deflated piece"));
                q.first_done += 1;
            }
        }
        for (bytes, c) in ready {
            if let Err(e) = self.out.write_all(&bytes) {
                let again = io::Error::new(e.kind(), e.to_string());
                self.failed = Some(e);
                return Err(again);
            }
            self.crc.combine(&c);
        }
        Ok(())
    }

    /// Posts the last piece (empty when the bytes end on a piece's end) and lets the helpers go.
    fn close(&mut self) {
        if self.shared.lock().closed {
            return;
        }
        let piece = std::mem::take(&mut self.piece);
        self.shared.post((self.next, piece, true), usize::MAX);
        self.shared.lock().closed = true;
        self.shared.posted.notify_all();
    }
}

/// Closes the queue however the writing ends, so that the helpers return: a writer given up
/// on (a panic in the caller) drops what is left.
struct Closing<'s>(&'s Shared);

impl Drop for Closing<'_> {
    fn drop(&mut self) {
        let mut q = self.0.lock();
        if !q.closed {
            q.closed = true;
            q.todo.clear();
            drop(q);
            self.0.posted.notify_all();
        }
    }
}

impl Write for Pieces<'_, '_> {
    fn write(&mut self, mut buf: &[u8]) -> io::Result<usize> {
        let n = buf.len();
        while !buf.is_empty() {
            let take = (PIECE - self.piece.len()).min(buf.len());
            self.piece.extend_from_slice(&buf[..take]);
            buf = &buf[take..];
            if self.piece.len() == PIECE {
                let next = self.shared.lock().spare.pop().unwrap_or_else(|| Vec::with_capacity(PIECE));
                let full = std::mem::replace(&mut self.piece, next);
                self.shared.post((self.next, full, false), self.backlog);
                self.next += 1;
                self.pass_on()?;
            }
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// One piece as raw deflate, with its CRC.
fn deflate(piece: &[u8], last: bool) -> (Vec<u8>, Crc) {
    let mut crc = Crc::new();
    crc.update(piece);
    let mut z = Compress::new(Compression::fast(), false);
    let mut out = Vec::with_capacity(piece.len() / 2 + 64);
    let flush = if last { FlushCompress::Finish } else { FlushCompress::Sync };
    loop {
        let status = z.compress_vec(&piece[z.total_in() as usize..], &mut out, flush).expect("deflate of a buffer");
        let all_in = z.total_in() as usize == piece.len();
        match status {
            Status::StreamEnd => break,
            // A sync flush is complete once all input went in with room to spare in the output.
            _ if !last && all_in && out.len() < out.capacity() => break,
            _ => out.reserve(out.capacity().max(64)),
        }
    }
    (out, crc)
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    fn gunzip(z: &[u8]) -> Vec<u8> {
        let mut back = Vec::new();
        // GzDecoder (not MultiGzDecoder): one member, as every reader takes.
        flate2::read::GzDecoder::new(z).read_to_end(&mut back).unwrap();
        back
    }

    #[test]
    fn pieces_make_one_member_that_reads_back_whole() {
        let mut data = Vec::new();
        for i in 0..700_000u32 {
            data.extend_from_slice(format!("{},", i % 9973).as_bytes());
        }
        assert!(data.len() > 8 * super::PIECE);
        let gz = |threads, step: usize, data: &[u8]| {
            let mut out = Vec::new();
            super::gzip(threads, &mut out, |w| data.chunks(step.max(1)).try_for_each(|bit| w.write_all(bit)))
                .unwrap()
                .unwrap();
            out
        };
        let one = gz(1, data.len(), &data);
        assert_eq!(gunzip(&one), data);
        for threads in [2, 5] {
            // Written in uneven bits: the pieces are cut where they were, whatever the writes.
            assert_eq!(gz(threads, 77_777, &data), one, "the bytes do not depend on the threads nor on the writes");
        }
        // Ending on a piece's end: an empty last piece.
        let whole = &data[..2 * super::PIECE];
        assert_eq!(gunzip(&gz(2, whole.len(), whole)), whole);
        assert!(gunzip(&gz(2, 1, b"")).is_empty());
    }

    #[test]
    fn an_output_that_fails_fails_the_writes() {
        // Room for the header only: the first piece passed on fails, and the writes after it.
        struct Full(usize);
        impl Write for Full {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                let n = b.len().min(self.0);
                self.0 -= n;
                if n == 0 {
                    return Err(std::io::Error::other("no space left"));
                }
                Ok(n)
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let mut writes = 0;
        let r = super::gzip(2, &mut Full(10), |w| {
            (0..64).try_for_each(|_| {
                writes += 1;
                w.write_all(&[1; super::PIECE])
            })
        });
        assert_eq!(r.unwrap_err().to_string(), "no space left");
        assert!(writes < 64, "the writer stops at the first failure ({writes} writes)");
    }

    #[test]
    fn a_panic_while_writing_lets_the_helpers_go() {
        let r = std::panic::catch_unwind(|| {
            super::gzip(3, &mut Vec::new(), |w| {
                w.write_all(&vec![7u8; 3 * super::PIECE]).unwrap();
                panic!("the writer fails");
            })
        });
        assert!(r.is_err(), "the panic comes through, and the helpers do not wait forever");
    }
}
