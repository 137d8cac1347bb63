//! A call frame encoded once, on the scan thread, into bytes that are also the frame cache's
//! key: a frame seen before is found without interning its strings again.

use std::borrow::Cow;
use std::hash::BuildHasher;

use rustc_hash::FxBuildHasher;

use crate::input::leaf::Leaf;
use crate::input::shapes;
use crate::model::profile::{frame_from_json, Frames};
use crate::strings::Strings;

/// The `callFrame` objects of one profile already read, by an exact encoding of their
/// members: a frame seen again (most are: the generated traces have 570,000 nodes but 243
/// frames per profile, and real ones a few nodes per frame) costs one lookup instead of
/// interning each string and then the frame. Equal encodings are equal members, which
/// [`frame_from_json`] turns into the same frame; only frames read without error are kept.
#[derive(Debug, Default)]
pub(crate) struct FrameCache {
    /// The keys seen, end to end (one allocation, not one per frame).
    keys: Vec<u8>,
    /// (start in `keys`, length, frame) of each key seen, found by the key's hash.
    seen: hashbrown::HashTable<(u32, u32, u32)>,
    pub(crate) key: Vec<u8>,
}

impl FrameCache {
    /// The frame of `f`, read with [`frame_from_json`] unless seen before.
    pub(crate) fn frame(
        &mut self,
        f: &shapes::FrameJson<'_>,
        chunk: bool,
        strings: &mut Strings,
        frames: &mut Frames,
    ) -> Option<u32> {
        self.key.clear();
        encode_frame(f, &mut self.key);
        let key = std::mem::take(&mut self.key);
        let found = self.get(&key);
        let k = match found {
            Some(k) => k,
            None => {
                let k = frames.intern(frame_from_json(f, chunk, strings)?);
                self.insert(&key, k);
                k
            }
        };
        self.key = key;
        Some(k)
    }

    /// The frame whose members [`encode_frame`] wrote as `key`, decoded and read with
    /// [`frame_from_json`] unless seen before.
    pub(crate) fn frame_by_key(
        &mut self,
        key: &[u8],
        chunk: bool,
        strings: &mut Strings,
        frames: &mut Frames,
    ) -> Option<u32> {
        if let Some(k) = self.get(key) {
            return Some(k);
        }
        let k = frames.intern(frame_from_json(&decode_frame(key), chunk, strings)?);
        self.insert(key, k);
        Some(k)
    }

    /// The number of keys seen.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.seen.len()
    }

    fn get(&self, key: &[u8]) -> Option<u32> {
        let keys = &self.keys;
        self.seen
            .find(FxBuildHasher.hash_one(key), |&(at, n, _)| &keys[at as usize..(at + n) as usize] == key)
            .map(|e| e.2)
    }

    fn insert(&mut self, key: &[u8], frame: u32) {
        // A cache: past 4 GiB of keys, frames are read again instead.
        let (Ok(at), Ok(n)) = (u32::try_from(self.keys.len()), u32::try_from(key.len())) else { return };
        if at.checked_add(n).is_none() {
            return;
        }
        self.keys.extend_from_slice(key);
        let keys = &self.keys;
        self.seen.insert_unique(FxBuildHasher.hash_one(key), (at, n, frame), |&(a, n, _)| {
            FxBuildHasher.hash_one(&keys[a as usize..(a + n) as usize])
        });
    }
}

/// Appends the encoding of a frame's members that [`FrameCache`] keys frames by.
pub(crate) fn encode_frame(f: &shapes::FrameJson<'_>, out: &mut Vec<u8>) {
    for v in [&f.function_name, &f.script_id, &f.url, &f.line_number, &f.column_number] {
        encode_leaf(v, out);
    }
}

/// The members [`encode_frame`] wrote, borrowing their strings from `key`.
pub(crate) fn decode_frame(key: &[u8]) -> shapes::FrameJson<'_> {
    let mut i = 0;
    let mut next = || decode_leaf(key, &mut i);
    shapes::FrameJson {
        function_name: next(),
        script_id: next(),
        url: next(),
        line_number: next(),
        column_number: next(),
    }
}

/// The value [`encode_leaf`] wrote at `*i`; moves `*i` past it.
pub(crate) fn decode_leaf<'k>(key: &'k [u8], i: &mut usize) -> Leaf<'k> {
    let word = |at: usize| u64::from_le_bytes(key[at..at + 8].try_into().expect("eight bytes"));
    let tag = key[*i];
    *i += 1;
    match tag {
        0 => Leaf::Missing,
        1 => Leaf::Null,
        2 | 3 => Leaf::Bool(tag == 3),
        4 => {
            *i += 8;
            Leaf::Num(f64::from_bits(word(*i - 8)))
        }
        5 => {
            let len = word(*i) as usize;
            *i += 8 + len;
            let s = std::str::from_utf8(&key[*i - len..*i]).expect("the key was encoded from a str");
            Leaf::Str(Cow::Borrowed(s))
        }
        6 => Leaf::Object,
        _ => Leaf::Array,
    }
}

/// Appends an encoding of `v` that tells every two different values apart.
pub(crate) fn encode_leaf(v: &Leaf<'_>, out: &mut Vec<u8>) {
    match v {
        Leaf::Missing => out.push(0),
        Leaf::Null => out.push(1),
        Leaf::Bool(b) => out.push(2 + *b as u8),
        Leaf::Num(n) => {
            out.push(4);
            out.extend_from_slice(&n.to_bits().to_le_bytes());
        }
        Leaf::Str(s) => {
            out.push(5);
            out.extend_from_slice(&(s.len() as u64).to_le_bytes());
            out.extend_from_slice(s.as_bytes());
        }
        Leaf::Object => out.push(6),
        Leaf::Array => out.push(7),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::input::shapes::FrameJson;

    fn s(v: &str) -> Leaf<'_> {
        Leaf::Str(Cow::Borrowed(v))
    }

    /// Frames read through the cache are the frames read without it, in both modes, for
    /// members that differ only in type, in where a string splits, or by being absent.
    #[test]
    fn frame_cache_gives_the_frames_read_without_it() {
        let frame = |f: Leaf<'static>, sid: Leaf<'static>, url: Leaf<'static>, line: Leaf<'static>| FrameJson {
            function_name: f,
            script_id: sid,
            url,
            line_number: line,
            column_number: Leaf::Num(3.0),
        };
        let list = [
            frame(s("f"), Leaf::Num(1.0), s("a.js"), Leaf::Num(0.0)),
            frame(s("f"), s("1"), s("a.js"), Leaf::Num(0.0)),
            frame(s("f"), Leaf::Num(1.0), s("a.js"), Leaf::Missing),
            frame(s("f"), Leaf::Num(1.0), s("a.js"), Leaf::Num(-0.0)),
            frame(s("fa"), Leaf::Num(1.0), s(".js"), Leaf::Num(0.0)),
            frame(s("f"), Leaf::Num(1.0), Leaf::Null, Leaf::Num(0.0)),
            frame(s("f"), Leaf::Num(1.0), s(""), Leaf::Num(0.0)),
            frame(s("f"), Leaf::Num(1.0), s("a.js"), Leaf::Object),
            frame(s("f"), Leaf::Num(1.0), s("a.js"), Leaf::Num(0.0)),
            frame(Leaf::Str(Cow::Owned("é∂".into())), Leaf::Bool(true), Leaf::Array, Leaf::Num(0.0)),
            frame(s("f"), Leaf::Bool(false), s("a.js"), Leaf::Num(1e300)),
        ];
        for chunk in [true, false] {
            let (mut strings, mut frames, mut cache) = (Strings::default(), Frames::default(), FrameCache::default());
            let (mut strings2, mut frames2) = (Strings::default(), Frames::default());
            // The scan threads' way: each frame encoded, then read by its key (decoded once).
            let (mut strings3, mut frames3, mut cache3) =
                (Strings::default(), Frames::default(), FrameCache::default());
            // Twice over: the second round is read from the cache.
            for f in list.iter().chain(&list) {
                let got = cache.frame(f, chunk, &mut strings, &mut frames);
                let want = frame_from_json(f, chunk, &mut strings2).map(|x| frames2.intern(x));
                assert_eq!(got, want, "chunk {chunk}: {f:?}");
                let mut key = Vec::new();
                encode_frame(f, &mut key);
                assert_eq!(format!("{:?}", decode_frame(&key)), format!("{f:?}"));
                let by_key = cache3.frame_by_key(&key, chunk, &mut strings3, &mut frames3);
                assert_eq!(by_key, want, "chunk {chunk}, by key: {f:?}");
            }
            // Eleven members: one repeats the first, two fail to read (an object, an array) and
            // are not kept.
            assert_eq!(cache.len(), 8);
            assert_eq!(cache3.len(), 8);
            assert_eq!(format!("{frames:?}"), format!("{frames3:?}"));
        }
    }
}
