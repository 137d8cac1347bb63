//! gzip on several threads, as the bytes are written: 256 KiB pieces, each deflated on its own
//! (by a helper thread while the writer goes on), each but the last ending with a sync flush
//! (on a byte boundary, with no reference to what came before), concatenated into one gzip
//! member whose CRC is combined from the pieces' (the method of pigz). The pieces do not
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
/// included), with what `f` returned.
pub fn gzip<R>(threads: usize, f: impl FnOnce(&mut Pieces<'_>) -> R) -> (R, Vec<u8>) {
    let shared = Shared {
        queue: Mutex::new(Queue { todo: VecDeque::new(), closed: false, done: Vec::new() }),
        posted: Condvar::new(),
    };
    let helpers = threads.max(1) - 1;
    let r = std::thread::scope(|s| {
        for _ in 0..helpers {
            s.spawn(|| {
                while let Some(job) = shared.take(true) {
                    shared.finish(job);
                }
            });
        }
        let mut w = Pieces { shared: &shared, piece: Vec::with_capacity(PIECE), next: 0, backlog: helpers * 2 };
        let r = f(&mut w);
        w.close();
        // This thread deflates what the helpers have not taken yet.
        while let Some(job) = shared.take(false) {
            shared.finish(job);
        }
        r
    });
    let queue = shared.queue.into_inner().unwrap_or_else(|e| e.into_inner());
    // Header: deflate, no name, mtime 0, fastest (XFL 4), OS unknown.
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 255];
    let mut crc = Crc::new();
    for (bytes, c) in queue.done.into_iter().map(|d| d.expect("every piece is deflated")) {
        out.extend_from_slice(&bytes);
        crc.combine(&c);
    }
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&crc.amount().to_le_bytes());
    (r, out)
}

/// The writer [`gzip`] hands out: it cuts what it is given into pieces and posts each full one.
pub struct Pieces<'s> {
    shared: &'s Shared,
    piece: Vec<u8>,
    /// The number of the piece being filled.
    next: usize,
    /// Pieces waiting beyond this many are deflated by the writer itself, which keeps the
    /// memory bounded when writing outruns deflating (and does all of it with no helper).
    backlog: usize,
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
    /// Each piece deflated, with its CRC, by number.
    done: Vec<Option<(Vec<u8>, Crc)>>,
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

    fn finish(&self, (k, piece, last): (usize, Vec<u8>, bool)) {
        let r = deflate(&piece, last);
        let mut q = self.lock();
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

impl Pieces<'_> {
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

impl Drop for Pieces<'_> {
    /// A writer given up on (a panic in the caller) still lets the helpers return.
    fn drop(&mut self) {
        let mut q = self.shared.lock();
        if !q.closed {
            q.closed = true;
            q.todo.clear();
            drop(q);
            self.shared.posted.notify_all();
        }
    }
}

impl Write for Pieces<'_> {
    fn write(&mut self, mut buf: &[u8]) -> io::Result<usize> {
        let n = buf.len();
        while !buf.is_empty() {
            let take = (PIECE - self.piece.len()).min(buf.len());
            self.piece.extend_from_slice(&buf[..take]);
            buf = &buf[take..];
            if self.piece.len() == PIECE {
                let full = std::mem::replace(&mut self.piece, Vec::with_capacity(PIECE));
                self.shared.post((self.next, full, false), self.backlog);
                self.next += 1;
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
        assert!(data.len() > 3 * super::PIECE);
        let ((), one) = super::gzip(1, |w| w.write_all(&data).unwrap());
        assert_eq!(gunzip(&one), data);
        for threads in [2, 5] {
            // Written in uneven bits: the pieces are cut where they were, whatever the writes.
            let ((), z) = super::gzip(threads, |w| {
                for bit in data.chunks(77_777) {
                    w.write_all(bit).unwrap();
                }
            });
            assert_eq!(z, one, "the bytes do not depend on the threads nor on the writes");
        }
        // Ending on a piece's end: an empty last piece.
        let whole = &data[..2 * super::PIECE];
        assert_eq!(gunzip(&super::gzip(2, |w| w.write_all(whole).unwrap()).1), whole);
        assert!(gunzip(&super::gzip(2, |_| ()).1).is_empty());
    }

    #[test]
    fn a_panic_while_writing_lets_the_helpers_go() {
        let r = std::panic::catch_unwind(|| {
            super::gzip(3, |w| {
                w.write_all(&vec![7u8; 3 * super::PIECE]).unwrap();
                panic!("the writer fails");
            })
        });
        assert!(r.is_err(), "the panic comes through, and the helpers do not wait forever");
    }
}
