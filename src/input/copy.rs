//! The trace's events found for copying as they are scanned, for the timeline: each piece of
//! the event array a scan thread reads comes out as the runs of its events in the input (and
//! the few it had to repair), written from the input's buffer as the piece is delivered, so
//! that the timeline needs no second read of its input.

use super::scan::RawEvent;

/// What a viewer makes of an event's time: the span of the phases the Firefox Profiler shows
/// as markers (`X B E b n e i I R`), `ts` to `ts + dur` (µs).
pub(crate) fn span(ev: &RawEvent<'_>) -> Option<(f64, f64)> {
    let ph = ev.ph.str()?;
    if !matches!(ph, "X" | "B" | "E" | "b" | "n" | "e" | "i" | "I" | "R") {
        return None;
    }
    let ts = ev.ts.num().filter(|t| t.is_finite())?;
    let dur = if ph == "X" { ev.dur.num().filter(|d| d.is_finite() && *d > 0.0).unwrap_or(0.0) } else { 0.0 };
    Some((ts, ts + dur))
}

/// The earliest start and latest end of events' spans ([`span`]), µs; none yet: (∞, −∞).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Extent(f64, f64);

impl Default for Extent {
    fn default() -> Extent {
        Extent(f64::INFINITY, f64::NEG_INFINITY)
    }
}

impl Extent {
    /// Takes in one event's span.
    pub(crate) fn note(&mut self, span: Option<(f64, f64)>) {
        if let Some((from, to)) = span {
            self.join(Extent(from, to));
        }
    }

    /// Takes in another extent (one of none changes nothing).
    pub(crate) fn join(&mut self, other: Extent) {
        (self.0, self.1) = (self.0.min(other.0), self.1.max(other.1));
    }

    /// (start, end).
    pub(crate) fn get(self) -> (f64, f64) {
        (self.0, self.1)
    }
}

/// The largest tid after any `"tid":` in `raw` (whitespace may follow the colon), or `max` if
/// larger: what the timeline's own threads are numbered above. Only whole numbers from 0 to
/// [`TID_CAP`] count: a string, a negative or fractional number, or a tid past the cap is no
/// tid those threads could take (the ones above the cap are not exact in a double, as
/// DevTools reads them, and numbering above them would give two threads one tid there).
pub(crate) fn max_tid(raw: &[u8], max: i64) -> i64 {
    static KEY: std::sync::LazyLock<memchr::memmem::Finder<'static>> =
        std::sync::LazyLock::new(|| memchr::memmem::Finder::new(b"\"tid\":"));
    let mut max = max;
    for at in KEY.find_iter(raw) {
        let rest = &raw[at + 6..];
        let rest = &rest[rest.iter().position(|c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r')).unwrap_or(rest.len())..];
        let n = rest.iter().position(|c| !c.is_ascii_digit()).unwrap_or(rest.len());
        // A fraction or an exponent makes it no whole tid (`1e3` included: rare, and skipped).
        if n == 0 || matches!(rest.get(n), Some(b'.' | b'e' | b'E')) || n > 16 {
            continue;
        }
        let tid = rest[..n].iter().fold(0i64, |v, d| v * 10 + i64::from(d - b'0'));
        if tid <= TID_CAP {
            max = max.max(tid);
        }
    }
    max
}

/// The largest input tid the timeline's threads are numbered above (2^52): the numbers just
/// above it stay exact in a double, as every tid up to 2^53 does.
pub(crate) const TID_CAP: i64 = 1 << 52;

/// A run of the copy: the input's bytes from one event's start to another's end (the events
/// between them separated by `,\n`, as the timeline writes them), or one event whose bytes are
/// not all UTF-8, with those written as U+FFFD (as Node reads them, so the output stays JSON).
#[derive(Debug)]
pub(crate) enum Part {
    /// Absolute offsets in the input.
    Input(u64, u64),
    Repaired(Vec<u8>),
}

/// One piece's events, as [`Part`]s to be written one after another with `,\n` between them.
#[derive(Debug, Default)]
pub(crate) struct Copied {
    pub(crate) parts: Vec<Part>,
    /// Events in the parts.
    pub(crate) events: u64,
    /// The events a viewer shows, from the earliest start to the latest end.
    pub(crate) span: Extent,
    /// [`max_tid`] of the events (0 if none).
    pub(crate) max_tid: i64,
}

impl Copied {
    /// Takes the events at `bounds` (offsets into `b`, whose first byte is at `base` in the
    /// input); `bad_utf8`, where sequences that are not UTF-8 start (absolute), in order.
    pub(crate) fn fill(&mut self, b: &[u8], base: u64, bounds: &[(usize, usize)], bad_utf8: &[u64]) {
        let mut bad = bad_utf8.iter().map(|&at| (at - base) as usize).peekable();
        for &(s, e) in bounds {
            let raw = &b[s..e];
            while bad.next_if(|&at| at < s).is_some() {}
            if bad.peek().is_some_and(|&at| at < e) {
                self.parts.push(Part::Repaired(String::from_utf8_lossy(raw).into_owned().into_bytes()));
                continue;
            }
            match self.parts.last_mut() {
                Some(Part::Input(_, end)) if b.get((*end - base) as usize..s) == Some(b",\n") => *end = base + e as u64,
                _ => self.parts.push(Part::Input(base + s as u64, base + e as u64)),
            }
        }
        self.events += bounds.len() as u64;
        // Over whole runs: the separators between their events hold no `"tid":`.
        for part in &self.parts {
            let bytes = match part {
                Part::Input(s, e) => &b[(s - base) as usize..(e - base) as usize],
                Part::Repaired(bytes) => bytes,
            };
            self.max_tid = max_tid(bytes, self.max_tid);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tids_are_read_as_json_writes_them() {
        let max = |raw: &str| max_tid(raw.as_bytes(), 0);
        assert_eq!(max(r#"{"pid":1,"tid":77,"args":{"data":{"tid":123}}}"#), 123);
        // Whitespace after the colon, as `json.dump` and most pretty-printers write it.
        assert_eq!(max(r#"{"pid": 1, "tid": 77}, {"tid":	9}"#), 77);
        assert_eq!(max("{\"tid\":\n  12}"), 12);
        // No whole tid: a string, a negative, a fraction, an exponent, a number past the cap.
        assert_eq!(max(r#"{"tid":"900"},{"tid":-4},{"tid":800.5},{"tid":7e2},{"tid":5}"#), 5);
        assert_eq!(max(&format!(r#"{{"tid":{}}},{{"tid":{}}},{{"tid":3}}"#, TID_CAP + 1, "9".repeat(30))), 3);
        assert_eq!(max(&format!(r#"{{"tid":{TID_CAP}}}"#)), TID_CAP);
        assert_eq!(max_tid(br#"{"tid":4}"#, 10), 10);
    }
}
