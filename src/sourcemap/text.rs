//! A script's text addressed as JavaScript addresses it: lines split at `\n`, columns in
//! UTF-16 units, in O(log n) whatever the lines' length (minified scripts are a few lines of
//! megabytes).

/// Line starts and the non-ASCII characters of a text (which its methods are given again).
#[derive(Debug)]
pub(crate) struct Lines {
    len: usize,
    /// Byte offset of each line's start.
    starts: Vec<usize>,
    /// Per non-ASCII character: its byte offset, how many more bytes than UTF-16 units the
    /// text has up to and including it, its UTF-16 offset and its length in units.
    wide: Vec<(usize, usize, usize, usize)>,
}

impl Lines {
    pub(crate) fn new(text: &str) -> Lines {
        let mut starts = vec![0];
        starts.extend(memchr::memchr_iter(b'\n', text.as_bytes()).map(|i| i + 1));
        let mut wide = Vec::new();
        if !text.is_ascii() {
            let mut extra = 0;
            for (i, c) in text.char_indices().filter(|(_, c)| !c.is_ascii()) {
                let unit = i - extra;
                extra += c.len_utf8() - c.len_utf16();
                wide.push((i, extra, unit, c.len_utf16()));
            }
        }
        Lines { len: text.len(), starts, wide }
    }

    /// Bytes more than UTF-16 units before byte offset `at` (a character's start).
    fn extra_before(&self, at: usize) -> usize {
        match self.wide.partition_point(|w| w.0 < at) {
            0 => 0,
            k => self.wide[k - 1].1,
        }
    }

    /// The UTF-16 offset of byte offset `at` from the text's start.
    fn units(&self, at: usize) -> usize {
        at - self.extra_before(at)
    }

    /// `Text.positionFromOffset` of a byte offset: (line, UTF-16 column).
    pub(crate) fn pos(&self, at: u32) -> (i64, i64) {
        let at = (at as usize).min(self.len);
        let line = self.starts.partition_point(|&s| s <= at) - 1;
        let col = self.units(at) - self.units(self.starts[line]);
        (line as i64, col as i64)
    }

    /// The character at (`line`, UTF-16 `column`) as `Text.extract` finds it: from the
    /// line's start, running on into the next lines; None past the text, before line 0, or
    /// inside a character of two units.
    pub(crate) fn char_at(&self, text: &str, line: i64, column: i64) -> Option<char> {
        let start = *self.starts.get(usize::try_from(line).ok()?)?;
        let want = self.units(start) + usize::try_from(column).ok()?;
        // The byte whose UTF-16 offset is `want`: units() grows with the offset.
        // The characters that start before `want`; the last may not end there.
        let k = self.wide.partition_point(|w| w.2 < want);
        let byte = match k {
            0 => want,
            k => {
                let (_, extra, unit, len) = self.wide[k - 1];
                if unit + len > want {
                    return None;
                }
                want + extra
            }
        };
        text.get(byte..)?.chars().next()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_are_utf16_units() {
        let text = "function f(a) {}\n  é😀(x\ny";
        let l = Lines::new(text);
        let at = |line, column| l.char_at(text, line, column);
        assert_eq!(at(0, 10), Some('('));
        assert_eq!(at(1, 2), Some('é'));
        // "😀" is two units: column 4 is inside it, 5 is the '(' after it.
        assert_eq!(at(1, 3), Some('😀'));
        assert_eq!(at(1, 4), None);
        assert_eq!(at(1, 5), Some('('));
        // Past a line's end, on into the next (as a substring of the whole text).
        assert_eq!(at(0, 17), Some(' '));
        assert_eq!(at(3, 0), None);
        assert_eq!(at(-1, 0), None);
        let byte = text.find('(').unwrap() as u32;
        assert_eq!(l.pos(byte), (0, 10));
        let paren2 = text.rfind('(').unwrap() as u32;
        assert_eq!(l.pos(paren2), (1, 5));
    }
}
