//! gzip of a whole buffer on several threads: 1 MiB pieces deflated each on its own, each but
//! the last ending with a sync flush (on a byte boundary, with no reference to what came
//! before), concatenated into one gzip member whose CRC is combined from the pieces' (the
//! method of pigz). The pieces do not depend on the number of threads, so neither do the bytes.

use flate2::{Compress, Compression, Crc, FlushCompress, Status};

/// The size of a piece.
const PIECE: usize = 1 << 20;

/// `data` gzipped at the fastest level, on up to `threads` threads.
pub fn gzip(data: &[u8], threads: usize) -> Vec<u8> {
    let pieces: Vec<&[u8]> = if data.is_empty() { vec![data] } else { data.chunks(PIECE).collect() };
    let mut done: Vec<Option<(Vec<u8>, Crc)>> = (0..pieces.len()).map(|_| None).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let slots = std::sync::Mutex::new(&mut done);
    std::thread::scope(|s| {
        for _ in 0..threads.clamp(1, pieces.len()) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(p) = pieces.get(k) else { break };
                let r = deflate(p, k + 1 == pieces.len());
                slots.lock().expect("no thread panics")[k] = Some(r);
            });
        }
    });
    // Header: deflate, no name, mtime 0, fastest (XFL 4), OS unknown.
    let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 255];
    let mut crc = Crc::new();
    for (bytes, c) in done.into_iter().map(|d| d.expect("every piece is deflated")) {
        out.extend_from_slice(&bytes);
        crc.combine(&c);
    }
    out.extend_from_slice(&crc.sum().to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
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
    use std::io::Read;

    #[test]
    fn pieces_make_one_member_that_reads_back_whole() {
        let mut data = Vec::new();
        for i in 0..700_000u32 {
            data.extend_from_slice(format!("{},", i % 9973).as_bytes());
        }
        for threads in [1, 2, 5] {
            let z = super::gzip(&data, threads);
            let mut back = Vec::new();
            // GzDecoder (not MultiGzDecoder): one member, as every reader takes.
            flate2::read::GzDecoder::new(&z[..]).read_to_end(&mut back).unwrap();
            assert_eq!(back, data);
            assert_eq!(z, super::gzip(&data, 1), "the bytes do not depend on the threads");
        }
        let mut back = Vec::new();
        flate2::read::GzDecoder::new(&super::gzip(b"", 2)[..]).read_to_end(&mut back).unwrap();
        assert!(back.is_empty());
    }
}
