//! `ProfileChunk` args read without serde when they have the usual shape, on the scan threads:
//! the nodes, frames and trace ids as serde would give them, the sample and delta arrays (most
//! of the bytes) read as numbers directly. Anything unusual is left to serde.

use std::borrow::Cow;

use rustc_hash::FxHashMap;

use super::json;
use super::leaf::{IdArray, Leaf, NumArray};
use super::shapes::*;

/// `ProfileChunk` args read with the scanner when they have the usual shape (an object `data`
/// with an object `cpuProfile`, no repeated keys): the value serde gives, with the sample and
/// delta arrays (most of the bytes) read without serde. `None` for any other shape; the caller
/// then lets serde read the args (and report what is wrong).
pub fn chunk_args_fast(b: &[u8]) -> Option<ChunkArgs<'_>> {
    chunk_args_at(b, 0, &mut Vec::new(), false).map(|(a, _)| a)
}

/// [`chunk_args_fast`] on the args object at `i`, with its end. With `no_trace_ids`, it also
/// gives up on any member that could hold a `sampleTraceId` (`args.sampleTraceId`,
/// `args.beginData`, `args.data.sampleTraceId`): when it does not, the args have none.
///
/// Every value is validated on the way (anything doubtful gives up), so the bytes up to the
/// end are JSON that [`json::skip`] would take.
pub fn chunk_args_at<'a>(
    b: &'a [u8],
    i: usize,
    stack: &mut Vec<u8>,
    no_trace_ids: bool,
) -> Option<(ChunkArgs<'a>, usize)> {
    let mut data = None;
    let end = object(b, i, &["data"], |k, key, i| match k {
        Some(_) => {
            let (d, e) = chunk_data(b, i, stack, no_trace_ids)?;
            data = Some(d);
            Some(e)
        }
        None if no_trace_ids && (key == "sampleTraceId" || key == "beginData") => None,
        None => skip_value(b, i, stack),
    })?;
    Some((ChunkArgs { data: data.map_or(MaybeObj::Missing, MaybeObj::Obj) }, end))
}

fn chunk_data<'a>(b: &'a [u8], i: usize, stack: &mut Vec<u8>, no_trace_ids: bool) -> Option<(ChunkData<'a>, usize)> {
    let mut d = ChunkData::default();
    let end = object(b, i, &["cpuProfile", "timeDeltas", "source", "lines", "columns"], |k, key, i| {
        match k {
            Some(0) => {
                let (p, e) = chunk_profile(b, i, stack)?;
                d.cpu_profile = MaybeObj::Obj(p);
                Some(e)
            }
            Some(1) => {
                let (v, e) = numbers(b, i, stack, |n| n, f64::NAN)?;
                // A JSON number is never NaN: the NaNs are the elements that were not numbers.
                d.time_deltas =
                    v.map(|values| NumArray { n_non_numbers: values.iter().filter(|x| x.is_nan()).count(), values });
                Some(e)
            }
            Some(3) => {
                // Skipped, as most commands do not read them; kept for one that does.
                let e = skip_value(b, i, stack)?;
                d.lines_bytes = Some(&b[i..e]);
                Some(e)
            }
            Some(4) => {
                let e = skip_value(b, i, stack)?;
                d.columns_bytes = Some(&b[i..e]);
                Some(e)
            }
            Some(_) => {
                let (v, e) = json::leaf(b, i, stack).ok()?;
                d.source = v;
                Some(e)
            }
            None if no_trace_ids && key == "sampleTraceId" => None,
            None => skip_value(b, i, stack),
        }
    })?;
    Some((d, end))
}

/// A `lines` value's numbers (`Some(None)` for `null`), NaN for elements that are not
/// numbers; None for any other value.
pub fn numbers_of(b: &[u8]) -> Option<Option<NumArray>> {
    let (v, _) = numbers(b, json::ws(b, 0), &mut Vec::new(), |n| n, f64::NAN)?;
    Some(v.map(|values| NumArray { n_non_numbers: values.iter().filter(|x| x.is_nan()).count(), values }))
}

fn chunk_profile<'a>(b: &'a [u8], i: usize, stack: &mut Vec<u8>) -> Option<(ChunkProfile<'a>, usize)> {
    let mut p = ChunkProfile::default();
    let end = object(b, i, &["nodes", "samples", "trace_ids"], |k, _, i| match k {
        Some(1) => {
            let id = |n: f64| Leaf::Num(n).int().unwrap_or(super::leaf::UNKNOWN_ID);
            let (v, e) = numbers(b, i, stack, id, super::leaf::UNKNOWN_ID)?;
            p.samples = v.map(IdArray);
            Some(e)
        }
        Some(0) => {
            let (v, e) = nullable_array_with(b, i, stack, NODES_GUESS, node)?;
            p.nodes = v;
            Some(e)
        }
        Some(_) => {
            let (v, e) = trace_ids(b, i, stack)?;
            p.trace_ids = v;
            Some(e)
        }
        None => skip_value(b, i, stack),
    })?;
    Some((p, end))
}

/// Room made up front for a chunk's new nodes (Chrome writes up to a few dozen per chunk, most
/// often none or a handful): the vector then rarely grows, and each step of growing copies
/// every node read so far.
const NODES_GUESS: usize = 16;

/// The array at `i` (`Some(None)` for `null`), each element read by `f`. None for any other
/// value, or when `f` gives up on an element.
fn nullable_array<'a, T>(
    b: &'a [u8],
    i: usize,
    stack: &mut Vec<u8>,
    f: impl FnMut(&'a [u8], usize, &mut Vec<u8>) -> Option<(T, usize)>,
) -> Option<(Option<Vec<T>>, usize)> {
    nullable_array_with(b, i, stack, 0, f)
}

/// [`nullable_array`], with room made for `capacity` elements up front.
fn nullable_array_with<'a, T>(
    b: &'a [u8],
    i: usize,
    stack: &mut Vec<u8>,
    capacity: usize,
    mut f: impl FnMut(&'a [u8], usize, &mut Vec<u8>) -> Option<(T, usize)>,
) -> Option<(Option<Vec<T>>, usize)> {
    use json::ws;
    match b.get(i) {
        Some(b'n') => return leaf(b, i, stack).map(|(_, e)| (None, e)),
        Some(b'[') => {}
        _ => return None,
    }
    let mut i = ws(b, i + 1);
    if b.get(i) == Some(&b']') {
        return Some((Some(Vec::new()), i + 1));
    }
    let mut out = Vec::with_capacity(capacity);
    loop {
        let (v, e) = f(b, i, stack)?;
        out.push(v);
        i = ws(b, e);
        match b.get(i) {
            Some(b',') => i = ws(b, i + 1),
            Some(b']') => return Some((Some(out), i + 1)),
            _ => return None,
        }
    }
}

/// Any value at `i` as a [`Leaf`], and its end.
fn leaf<'a>(b: &'a [u8], i: usize, stack: &mut Vec<u8>) -> Option<(Leaf<'a>, usize)> {
    json::leaf(b, i, stack).ok()
}

/// A profile node at `i`, as serde reads a [`NodeJson`]; None for a shape serde may read
/// differently (a repeated key, `children` or `callFrame` of an unusual type).
fn node<'a>(b: &'a [u8], i: usize, stack: &mut Vec<u8>) -> Option<(NodeJson<'a>, usize)> {
    // The members read as `Leaf`, in the order of `slots` below, then the two others.
    const KEYS: [&str; 10] = [
        "id",
        "parent",
        "hitCount",
        "functionName",
        "scriptId",
        "url",
        "lineNumber",
        "columnNumber",
        "children",
        "callFrame",
    ];
    let mut n = NodeJson::default();
    let NodeJson {
        id,
        parent,
        children,
        call_frame,
        hit_count,
        function_name,
        script_id,
        url,
        line_number,
        column_number,
        ..
    } = &mut n;
    let mut slots = [id, parent, hit_count, function_name, script_id, url, line_number, column_number];
    let end = object(b, i, &KEYS, |k, _, i| match k {
        Some(8) => {
            let (v, e) = nullable_array(b, i, stack, leaf)?;
            *children = v;
            Some(e)
        }
        Some(9) => {
            let (f, e) = frame(b, i, stack)?;
            *call_frame = MaybeObj::Obj(f);
            Some(e)
        }
        k => member(b, i, stack, k.map(|k| &mut *slots[k])),
    })?;
    Some((n, end))
}

/// A `callFrame` object at `i`; None for anything but an object.
fn frame<'a>(b: &'a [u8], i: usize, stack: &mut Vec<u8>) -> Option<(FrameJson<'a>, usize)> {
    let mut f = FrameJson::default();
    let FrameJson { function_name, script_id, url, line_number, column_number } = &mut f;
    let mut slots = [function_name, script_id, url, line_number, column_number];
    let keys = ["functionName", "scriptId", "url", "lineNumber", "columnNumber"];
    let end = object(b, i, &keys, |k, _, i| member(b, i, stack, k.map(|k| &mut *slots[k])))?;
    Some((f, end))
}

/// The value at `i` read into `slot`, or skipped when there is none; its end.
fn member<'a>(b: &'a [u8], i: usize, stack: &mut Vec<u8>, slot: Option<&mut Leaf<'a>>) -> Option<usize> {
    match slot {
        Some(slot) => {
            let (v, e) = leaf(b, i, stack)?;
            *slot = v;
            Some(e)
        }
        None => skip_value(b, i, stack),
    }
}

/// `trace_ids` at `i`: an object of any values (`Some(None)` for `null`); a repeated key keeps
/// the last value, as serde's map does.
#[allow(clippy::type_complexity)]
fn trace_ids<'a>(
    b: &'a [u8],
    i: usize,
    stack: &mut Vec<u8>,
) -> Option<(Option<FxHashMap<Cow<'a, str>, Leaf<'a>>>, usize)> {
    if b.get(i) == Some(&b'n') {
        return leaf(b, i, stack).map(|(_, e)| (None, e));
    }
    // Room for its members up front (one `:` each, up to the first `}`; at most 4,096 where
    // text could hold more): growing the map from empty took nearly as long as filling it.
    let rest = b.get(i..).unwrap_or_default();
    let room = memchr::memchr(b'}', rest).map_or(0, |end| memchr::memchr_iter(b':', &rest[..end]).count());
    let mut map = FxHashMap::with_capacity_and_hasher(room.min(4096), Default::default());
    let end = object(b, i, &[], |_, key, i| {
        let (v, e) = leaf(b, i, stack)?;
        map.insert(key, v);
        Some(e)
    })?;
    Some((Some(map), end))
}

/// The object at `i`: `f(which of keys, the key, index of the value)` returns the value's end,
/// or None to give up. A key of `keys` seen twice gives up too (serde's derive refuses repeated
/// fields).
fn object<'a>(
    b: &'a [u8],
    i: usize,
    keys: &[&str],
    mut f: impl FnMut(Option<usize>, Cow<'a, str>, usize) -> Option<usize>,
) -> Option<usize> {
    use json::{string, ws};
    if b.get(i) != Some(&b'{') {
        return None;
    }
    let mut seen = 0u32;
    let mut i = ws(b, i + 1);
    if b.get(i) == Some(&b'}') {
        return Some(i + 1);
    }
    loop {
        let (key, kend) = string(b, i).ok()?;
        let j = ws(b, kend);
        if b.get(j) != Some(&b':') {
            return None;
        }
        let k = keys.iter().position(|&n| n == key);
        if let Some(k) = k {
            if seen & (1 << k) != 0 {
                return None;
            }
            seen |= 1 << k;
        }
        i = ws(b, f(k, key, ws(b, j + 1))?);
        match b.get(i) {
            Some(b',') => i = ws(b, i + 1),
            Some(b'}') => return Some(i + 1),
            _ => return None,
        }
    }
}

/// The array at `i` (`Some(None)` for `null`): each number through `f`, any other element as
/// `other`. None for any other value.
fn numbers<T: Copy>(
    b: &[u8],
    i: usize,
    stack: &mut Vec<u8>,
    f: impl Fn(f64) -> T,
    other: T,
) -> Option<(Option<Vec<T>>, usize)> {
    // An array of numbers ends at its first ']' and has a comma between elements: counting
    // them (a fast search) sizes the vector once instead of growing it step by step. For
    // other elements (a string holding ']' or ','), the count is only a guess.
    let capacity = match b.get(i) {
        Some(b'[') => {
            let body = &b[i + 1..];
            let end = memchr::memchr(b']', body).unwrap_or(body.len());
            memchr::memchr_iter(b',', &body[..end]).count() + 1
        }
        _ => 0,
    };
    // The usual array, plain integers without whitespace, in a tight loop; anything else is
    // read again from the start by the general one.
    if capacity > 0 {
        let mut out = Vec::with_capacity(capacity);
        let mut j = i + 1;
        while let Some((n, e)) = small_int(b, j) {
            out.push(f(n as f64));
            match b.get(e) {
                Some(b',') => j = e + 1,
                Some(b']') => return Some((Some(out), e + 1)),
                _ => break,
            }
        }
    }
    nullable_array_with(b, i, stack, capacity, |b, i, stack| {
        Some(match small_int(b, i) {
            Some((n, e)) => (f(n as f64), e),
            None => match leaf(b, i, stack)? {
                (Leaf::Num(n), e) => (f(n), e),
                (_, e) => (other, e),
            },
        })
    })
}

/// A plain integer of at most 15 digits at `i` (exact as an f64), with its end; None for
/// anything else (a fraction, an exponent, a leading zero, more digits), which the full number
/// scanner then reads.
#[inline]
fn small_int(b: &[u8], i: usize) -> Option<(i64, usize)> {
    let neg = b.get(i) == Some(&b'-');
    let start = i + neg as usize;
    let mut j = start;
    let mut v: i64 = 0;
    while let Some(&d) = b.get(j) {
        if !d.is_ascii_digit() {
            break;
        }
        v = v * 10 + (d - b'0') as i64;
        j += 1;
        if j - start > 15 {
            return None;
        }
    }
    let digits = j - start;
    let leading_zero = digits > 1 && b[start] == b'0';
    // -0 is a float (negative zero), not an integer.
    if digits == 0 || leading_zero || (neg && v == 0) || matches!(b.get(j), Some(b'.' | b'e' | b'E') | None) {
        return None;
    }
    Some((if neg { -v } else { v }, j))
}

fn skip_value(b: &[u8], i: usize, stack: &mut Vec<u8>) -> Option<usize> {
    json::skip(b, i, stack).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast reader gives what serde gives, or leaves the args to serde.
    #[test]
    fn chunk_args_fast_agrees_with_serde() {
        let cases = [
            r#"{"data":{"cpuProfile":{"nodes":[{"id":1,"callFrame":{"functionName":"(root)"}}],"samples":[1,2,-0,3.5,1e2,12345678901234567,"x",null,-7]},"timeDeltas":[0,-0,1.25,1e-7,-3,123456789012345,1234567890123456,null,"5"]}}"#,
            r#"{"data":{"cpuProfile":{"samples":[],"trace_ids":{"12":3,"x":"y"}},"timeDeltas":null,"source":"Internal"},"other":[{"data":1}]}"#,
            r#"{"data":{"timeDeltas":[ 1 , 2 ],"cpuProfile":{"samples":[ 4 ]}}}"#,
            r#"{"data":{"cpuProfile":{"samples":[1]},"cpuProfile":{"samples":[2]}}}"#,
            r#"{"data":{"cpuProfile":5}}"#,
            r#"{"data":{"timeDeltas":{"a":1}}}"#,
            r#"[1]"#,
            r#"{"data":null}"#,
            r#"{"data":{"cpuProfile":{"nodes":[{"id":1,"parent":null,"callFrame":{"functionName":"f\u00e9","scriptId":"7","url":"u","lineNumber":-1,"columnNumber":2.5,"codeType":"JS"},"hitCount":3,"children":[2,"x",{}],"extra":[1]},{"id":"2","functionName":"legacy","url":7,"lineNumber":1,"columnNumber":2,"scriptId":0}],"trace_ids":{"5":4,"x":"y","5":{}}}}}"#,
            r#"{"data":{"cpuProfile":{"nodes":null,"trace_ids":null}}}"#,
            r#"{"data":{"cpuProfile":{"nodes":[{"id":1,"id":2}]}}}"#,
            r#"{"data":{"cpuProfile":{"nodes":[{"id":1,"callFrame":null}]}}}"#,
            r#"{"data":{"cpuProfile":{"nodes":[{"id":1,"callFrame":{"url":"a","url":"b"}}]}}}"#,
            r#"{"data":{"cpuProfile":{"nodes":[{"id":1,"children":5}]}}}"#,
            r#"{"data":{"cpuProfile":{"nodes":{"id":1}}}}"#,
            r#"{"data":{"cpuProfile":{"trace_ids":[1]}}}"#,
        ];
        let mut fast_ones = 0;
        for c in cases {
            let fast = chunk_args_fast(c.as_bytes());
            let slow = serde_json::from_slice::<ChunkArgs>(c.as_bytes());
            if let Some(f) = fast {
                fast_ones += 1;
                let s = slow.unwrap_or_else(|e| panic!("{c}: the fast reader took args serde refuses: {e}"));
                assert_eq!(format!("{f:?}"), format!("{s:?}"), "{c}");
            }
        }
        assert_eq!(fast_ones, 5, "the usual shapes take the fast path");
    }
}
