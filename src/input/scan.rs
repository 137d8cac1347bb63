//! The trace event scanner, the hot path: it reads an event's envelope (`name`, `ph`, `ts`, …)
//! directly from the bytes, notes the `args` members that can hold a `sampleTraceId`, reads a
//! `ProfileChunk`'s args with [`super::chunk`], and skips everything else (see [`super::json`]).

use super::chunk;
use super::json::*;
use std::borrow::Cow;
use std::mem::ManuallyDrop;

use super::leaf::Leaf;
use super::shapes::ChunkArgs;

/// The fields of one trace event that the pipeline reads. Strings borrow from the input.
#[derive(Debug, Default)]
pub struct RawEvent<'a> {
    /// `name`.
    pub name: Leaf<'a>,
    /// `cat`.
    pub cat: Leaf<'a>,
    /// `ph`.
    pub ph: Leaf<'a>,
    /// `ts`, µs.
    pub ts: Leaf<'a>,
    /// `dur`, µs.
    pub dur: Leaf<'a>,
    /// `pid`.
    pub pid: Leaf<'a>,
    /// `tid`.
    pub tid: Leaf<'a>,
    /// `id` (the profile id of `Profile` / `ProfileChunk`).
    pub id: Leaf<'a>,
    /// `args`, unparsed (the bytes of the value).
    pub args: Option<&'a [u8]>,
    /// Whether the event has a top-level `callFrame` key (DevTools would take it for a ProfileCall).
    pub has_call_frame: bool,
    /// Where `name`'s characters start, counted from the event's first byte, when it is a string
    /// read in place (no escapes) and the scan was asked to note it ([`event_into`]'s
    /// `NAME_AT`: a cost on every event that only some sinks want); else 0.
    pub name_at: u32,
    /// Where the scan noted `name_at`: the name's number among the distinct names of the
    /// stretch of the input one scan thread read (from 1; 0: none), so that the one thread
    /// that keeps names reads each of them once a stretch, not once an event.
    pub name_id: u32,
    /// The members of `args` that can hold a `sampleTraceId`, read while `args` is skipped.
    pub args_ids: ArgsIds<'a>,
    /// `args` read as a `ProfileChunk`'s, when they have that shape (see [`event`]).
    pub chunk: Option<Box<ChunkArgs<'a>>>,
    /// Whether the event may own memory (a decoded string, a chunk), so that dropping it does
    /// something; see [`RawEvent::release`].
    owns: bool,
}

/// `args.beginData`, `args.sampleTraceId` and `args.data`, as far as a `sampleTraceId` goes
/// (duplicate keys: the last one counts, as with `JSON.parse`).
#[derive(Debug, Default, Clone)]
pub struct ArgsIds<'a> {
    /// `args.beginData`.
    pub begin_data: IdHolder<'a>,
    /// `args.sampleTraceId`.
    pub sample_trace_id: Leaf<'a>,
    /// `args.data`.
    pub data: IdHolder<'a>,
}

/// A member that may be an object holding a `sampleTraceId`.
#[derive(Debug, Default, Clone)]
pub enum IdHolder<'a> {
    /// Absent.
    #[default]
    Missing,
    /// An object, and its own `sampleTraceId` (Missing when it has none).
    Obj(Leaf<'a>),
    /// Another value.
    Other(Leaf<'a>),
}

impl<'a> RawEvent<'a> {
    /// The envelope alone, owning its strings; `args` becomes an empty slice when present
    /// (for a sink that has already read them).
    pub fn envelope(&self) -> RawEvent<'static> {
        RawEvent {
            name: self.name.clone().into_owned(),
            cat: self.cat.clone().into_owned(),
            ph: self.ph.clone().into_owned(),
            ts: self.ts.clone().into_owned(),
            dur: self.dur.clone().into_owned(),
            pid: self.pid.clone().into_owned(),
            tid: self.tid.clone().into_owned(),
            id: self.id.clone().into_owned(),
            args: self.args.map(|_| &b""[..]),
            has_call_frame: self.has_call_frame,
            name_at: 0,
            name_id: 0,
            args_ids: ArgsIds::default(),
            chunk: None,
            owns: true,
        }
    }

    /// Drops an event held in a [`ManuallyDrop`]: only when it may own memory, since most
    /// events borrow everything and a full drop checks every member, per event.
    #[inline]
    pub fn release(ev: ManuallyDrop<RawEvent<'a>>) {
        if ev.owns {
            drop(ManuallyDrop::into_inner(ev));
        }
    }

    /// The phase as a single byte, or 0 when it is not a one-character string.
    pub fn phase(&self) -> u8 {
        match &self.ph {
            Leaf::Str(s) if s.len() == 1 => s.as_bytes()[0],
            _ => 0,
        }
    }
}

/// A key of up to 7 bytes packed with its length into one integer (0 for longer keys), so that
/// matching a key is one comparison.
#[inline]
const fn pack(k: &[u8]) -> u64 {
    if k.len() > 7 {
        return 0;
    }
    let mut v = k.len() as u64;
    let mut i = 0;
    while i < k.len() {
        v |= (k[i] as u64) << (8 * (i + 1));
        i += 1;
    }
    v
}

/// The low `n` bytes of a word, for `n` up to 7: a key's bytes out of the eight loaded.
const LOW_BYTES: [u64; 8] = {
    let mut m = [0u64; 8];
    let mut n = 1;
    while n < 8 {
        m[n] = (1u64 << (8 * n)) - 1;
        n += 1;
    }
    m
};

const K_NAME: u64 = pack(b"name");
const K_PH: u64 = pack(b"ph");
const K_TS: u64 = pack(b"ts");
const K_DUR: u64 = pack(b"dur");
const K_PID: u64 = pack(b"pid");
const K_TID: u64 = pack(b"tid");
const K_CAT: u64 = pack(b"cat");
const K_ID: u64 = pack(b"id");
const K_ARGS: u64 = pack(b"args");

/// Whether args begin as a `ProfileChunk`'s do: `{"data":{"cpuProfile"`, or the first of the
/// other members Chrome writes before it (`columns`, `lines`: recent versions put the source
/// positions of the samples there) or without it (`timeDeltas`).
#[inline]
fn chunk_shaped(args: &[u8]) -> bool {
    const DATA: &[u8] = b"{\"data\":{\"";
    args.starts_with(DATA) && {
        let rest = &args[DATA.len()..];
        [&b"cpuProfile\""[..], b"columns\"", b"lines\"", b"timeDeltas\""].iter().any(|k| rest.starts_with(k))
    }
}

/// Skips the `args` value at `i` like [`skip`], reading on the way the members that can hold a
/// `sampleTraceId` into `ids` (`owns` is set when one holds a decoded string).
fn args<'a>(b: &'a [u8], i: usize, stack: &mut Vec<u8>, ids: &mut ArgsIds<'a>, owns: &mut bool) -> R<usize> {
    if at(b, i)? != b'{' {
        return skip(b, i, stack);
    }
    object(b, i, stack, |key, j, stack| match key.id_key() {
        IdKey::SampleTraceId => {
            let (v, e) = leaf_noting(b, j, stack, owns)?;
            ids.sample_trace_id = v;
            Ok(e)
        }
        IdKey::Data => {
            let (h, e) = id_holder(b, j, stack, owns)?;
            ids.data = h;
            Ok(e)
        }
        IdKey::BeginData => {
            let (h, e) = id_holder(b, j, stack, owns)?;
            ids.begin_data = h;
            Ok(e)
        }
        IdKey::Other => skip_value(b, j, stack),
    })
}

/// The value at `i` as an [`IdHolder`], and its end (`owns` as in [`leaf_noting`]).
fn id_holder<'a>(b: &'a [u8], i: usize, stack: &mut Vec<u8>, owns: &mut bool) -> R<(IdHolder<'a>, usize)> {
    if at(b, i)? != b'{' {
        return leaf_noting(b, i, stack, owns).map(|(v, e)| (IdHolder::Other(v), e));
    }
    let mut id = Leaf::Missing;
    let end = object(b, i, stack, |key, j, stack| {
        if key.id_key() == IdKey::SampleTraceId {
            let (v, e) = leaf_noting(b, j, stack, owns)?;
            id = v;
            Ok(e)
        } else {
            skip_value(b, j, stack)
        }
    })?;
    Ok((IdHolder::Obj(id), end))
}

/// A member's key, as [`object`] hands it over.
struct Key<'a> {
    /// The quoted key.
    quoted: &'a [u8],
    /// Whether it has escapes (then it is decoded to be compared).
    escaped: bool,
}

/// The members of `args` (and of its objects) that can hold a `sampleTraceId`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IdKey {
    SampleTraceId,
    Data,
    BeginData,
    Other,
}

impl Key<'_> {
    /// Which member that can hold a `sampleTraceId` the key names. Told apart by length first:
    /// most keys then cost one comparison, and the others a comparison of a known length.
    #[inline]
    fn id_key(&self) -> IdKey {
        let decoded;
        let k = if self.escaped {
            decoded = match string(self.quoted, 0) {
                Ok((k, _)) => k,
                Err(_) => return IdKey::Other,
            };
            decoded.as_bytes()
        } else {
            &self.quoted[1..self.quoted.len() - 1]
        };
        match k.len() {
            13 if k == b"sampleTraceId" => IdKey::SampleTraceId,
            4 if k == b"data" => IdKey::Data,
            9 if k == b"beginData" => IdKey::BeginData,
            _ => IdKey::Other,
        }
    }
}

/// The members of the object at `i` (a `{`), validated: `f(key, value index, stack)` reads or
/// skips each value and returns its end. Returns the end of the object.
#[inline]
fn object<'a>(
    b: &'a [u8],
    i: usize,
    stack: &mut Vec<u8>,
    mut f: impl FnMut(&Key<'a>, usize, &mut Vec<u8>) -> R<usize>,
) -> R<usize> {
    let mut i = ws(b, i + 1);
    if at(b, i)? == b'}' {
        return Ok(i + 1);
    }
    loop {
        let (value, kend, escaped) = key_at(b, i)?;
        let key = Key { quoted: &b[i..=kend], escaped };
        i = ws(b, f(&key, value, stack)?);
        match at(b, i)? {
            b',' => i = ws(b, i + 1),
            b'}' => return Ok(i + 1),
            _ => return Err(Stop::Syntax(i, "',' or '}' in an object")),
        }
    }
}

/// Parses the event object at `i` (after whitespace); duplicate keys: the last one wins, as
/// with `JSON.parse`. Returns the event and its end.
pub fn event<'a>(b: &'a [u8], i: usize, stack: &mut Vec<u8>) -> R<(RawEvent<'a>, usize)> {
    let mut ev = RawEvent::default();
    let end = event_into::<false>(b, i, stack, &mut ev)?;
    Ok((ev, end))
}

/// [`event`] into `ev`, which the caller keeps (a [`RawEvent`] is a few hundred bytes: moving
/// it out of a call costs a copy per event). `ev` must be fresh ([`RawEvent::default`]).
#[inline]
pub fn event_into<'a, const NAME_AT: bool>(
    b: &'a [u8],
    i: usize,
    stack: &mut Vec<u8>,
    ev: &mut RawEvent<'a>,
) -> R<usize> {
    let start = i;
    if at(b, i)? != b'{' {
        return Err(Stop::Syntax(i, "'{'"));
    }
    let mut i = ws(b, i + 1);
    if at(b, i)? == b'}' {
        return Ok(i + 1);
    }
    loop {
        if at(b, i)? != b'"' {
            return Err(Stop::Syntax(i, "a key string in an event"));
        }
        // A key without escapes ends at the first special byte, a quote; a plain key of up to
        // seven bytes (every key the envelope reads) is then packed as `pack` does, in one
        // load. Any other key takes the general path, which decodes it.
        let q = special(b, i + 1);
        let len = q.wrapping_sub(i + 1);
        let (code, kend, call_frame) = if b.get(q) == Some(&b'"') && len <= 7 && i + 9 <= b.len() {
            let word = u64::from_le_bytes(b[i + 1..i + 9].try_into().expect("eight bytes"));
            (((word & LOW_BYTES[len]) << 8) | len as u64, q, false)
        } else {
            let (kend, escaped) = string_end(b, i + 1)?;
            let k: Cow<[u8]> = if escaped {
                match string(b, i)? {
                    (Cow::Borrowed(s), _) => Cow::Borrowed(s.as_bytes()),
                    (Cow::Owned(s), _) => Cow::Owned(s.into_bytes()),
                }
            } else {
                Cow::Borrowed(&b[i + 1..kend])
            };
            (pack(k.as_ref()), kend, k.as_ref() == b"callFrame")
        };
        let mut j = ws(b, kend + 1);
        if at(b, j)? != b':' {
            return Err(Stop::Syntax(j, "':' after a key"));
        }
        j = ws(b, j + 1);
        let slot = match code {
            K_NAME => Some(&mut ev.name),
            K_PH => Some(&mut ev.ph),
            K_TS => Some(&mut ev.ts),
            K_DUR => Some(&mut ev.dur),
            K_PID => Some(&mut ev.pid),
            K_TID => Some(&mut ev.tid),
            K_CAT => Some(&mut ev.cat),
            K_ID => Some(&mut ev.id),
            K_ARGS => {
                // A repeated `args`: the last one counts, with what it holds (`ev` is fresh
                // otherwise, and dropping its defaults costs a visible share of the scan).
                if ev.args.is_some() {
                    ev.args_ids = ArgsIds::default();
                    ev.chunk = None;
                }
                // `ProfileChunk` args (the samples, a good part of a trace's bytes) are read
                // here once, instead of being skipped here and read again by the sink. Any
                // other shape, or a chunk that has members which could hold a trace id, is
                // skipped as any args are.
                let e = match chunk_shaped(&b[j..]).then(|| chunk::chunk_args_at(b, j, stack, true)).flatten() {
                    Some((chunk, e)) => {
                        ev.owns = true;
                        ev.chunk = Some(Box::new(chunk));
                        ev.args_ids.data = IdHolder::Obj(Leaf::Missing);
                        e
                    }
                    None => args(b, j, stack, &mut ev.args_ids, &mut ev.owns)?,
                };
                ev.args = Some(&b[j..e]);
                j = e;
                None
            }
            _ => {
                if call_frame {
                    ev.has_call_frame = true;
                }
                j = skip_value(b, j, stack)?;
                None
            }
        };
        if let Some(slot) = slot {
            let (v, e) = leaf_noting(b, j, stack, &mut ev.owns)?;
            *slot = v;
            if NAME_AT && code == K_NAME {
                ev.name_at = match ev.name {
                    Leaf::Str(Cow::Borrowed(_)) => (j + 1 - start) as u32,
                    _ => 0,
                };
            }
            j = e;
        }
        i = ws(b, j);
        match at(b, i)? {
            b',' => i = ws(b, i + 1),
            b'}' => return Ok(i + 1),
            _ => return Err(Stop::Syntax(i, "',' or '}' in an event")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skip_all(s: &str) -> R<usize> {
        skip(s.as_bytes(), 0, &mut Vec::new())
    }

    #[test]
    fn skips_what_json_parse_accepts() {
        for ok in [
            r#"{"a":[1,2,{"b":"c\"d\\"}],"e":null}"#,
            "[]",
            "{}",
            r#""\u00e9""#,
            "-0.5e+3 ",
            "[true,false,null]",
            "[0,-1,10,-20,3]",
            "[1 ,2]",
            "[1,2.5]",
            "[-0]",
        ] {
            assert!(skip_all(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn rejects_what_json_parse_rejects() {
        for (bad, at) in [
            (r#"{"a":tru}"#, 8),
            (r#"{"a" 1}"#, 5),
            (r#"[1,]"#, 3),
            (r#"{"a":1,}"#, 7),
            ("[\"a\u{1}b\"]", 3),
            (r#"["\q"]"#, 3),
            (r#"[01]"#, 2),
            (r#"{"a":1]"#, 6),
            ("[0,01]", 4),
            ("[1,-]", 4),
            ("[1,2,]", 5),
            ("[1,2}", 4),
        ] {
            match skip_all(bad) {
                Err(Stop::Syntax(p, _)) => assert_eq!(p, at, "{bad}"),
                other => panic!("{bad}: {other:?}"),
            }
        }
    }

    #[test]
    fn cut_values_ask_for_more() {
        for cut in [r#"{"a":[1,2"#, r#""abc"#, "12", r#"{"a"#, "tr", r#""\u00"#, "[1,2", "[1,2,", "[-"] {
            assert_eq!(skip_all(cut), Err(Stop::Eof), "{cut}");
        }
    }

    #[test]
    fn digit_runs_are_read_eight_bytes_at_a_time_as_one_at_a_time() {
        // Runs of every length up to 40 (past 19 the value wraps, as the byte loop's does),
        // ending in each kind of byte, at each offset from the end of the bytes.
        for len in 0..=40usize {
            for end in ["", ",", "}", ".5", "e3", "/", ":", "\u{ff}", " "] {
                for pad in 0..3 {
                    let body: String = (0..len).map(|k| char::from(b'0' + ((k * 7 + len) % 10) as u8)).collect();
                    let text = format!("{}{body}{end}", " ".repeat(pad));
                    let b = text.as_bytes();
                    let (mut j, mut want) = (pad, 0u64);
                    while j < b.len() && b[j].is_ascii_digit() {
                        want = want.wrapping_mul(10).wrapping_add((b[j] - b'0') as u64);
                        j += 1;
                    }
                    assert_eq!(digits(b, pad), (j, want), "{text:?}");
                }
            }
        }
    }

    #[test]
    fn numbers_are_correctly_rounded() {
        for s in [
            "0 ",
            "-0 ",
            "123456789012345 ",
            "1234567890123456789 ",
            "0.1 ",
            "2.5e-3 ",
            "1e400 ",
            "136560196826.99998 ",
        ] {
            let (v, _) = number(s.as_bytes(), 0).unwrap();
            let want: f64 = s.trim().parse().unwrap();
            assert_eq!(v.to_bits(), want.to_bits(), "{s}");
        }
    }

    #[test]
    fn chunk_args_are_read_during_the_scan_in_the_shapes_chrome_writes() {
        for data in [
            r#"{"cpuProfile":{"nodes":[],"samples":[1]},"timeDeltas":[5]}"#,
            // Recent Chrome: the samples' source positions first (keys in alphabetical order).
            r#"{"columns":[3],"cpuProfile":{"samples":[1]},"lines":[7],"timeDeltas":[5]}"#,
            r#"{"lines":[7],"timeDeltas":[5]}"#,
            r#"{"timeDeltas":[5]}"#,
        ] {
            let s = format!(r#"{{"args":{{"data":{data}}},"name":"ProfileChunk","ph":"P"}} "#);
            let (ev, _) = event(s.as_bytes(), 0, &mut Vec::new()).unwrap();
            assert!(ev.chunk.is_some(), "{data}");
        }
        // Another shape is skipped as any args are (and read later, when it is a chunk's).
        let (ev, _) = event(br#"{"args":{"data":{"frame":"F"}}} "#, 0, &mut Vec::new()).unwrap();
        assert!(ev.chunk.is_none());
    }

    #[test]
    fn args_members_that_can_hold_a_trace_id_are_read() {
        let s = r#"{"args":{"data":{"x":[1,{"sampleTraceId":9}],"sampleTraceId":5,"sampleTraceId":6},"sample\u0054raceId":"7","beginData":null,"z":{"data":1}}} "#;
        let (ev, _) = event(s.as_bytes(), 0, &mut Vec::new()).unwrap();
        let ids = &ev.args_ids;
        assert!(matches!(ids.data, IdHolder::Obj(Leaf::Num(n)) if n == 6.0), "{:?}", ids.data);
        assert_eq!(ids.sample_trace_id.str(), Some("7"));
        assert!(matches!(ids.begin_data, IdHolder::Other(Leaf::Null)), "{:?}", ids.begin_data);
        let (ev, _) = event(br#"{"args":[{"data":{"sampleTraceId":1}}]}"#, 0, &mut Vec::new()).unwrap();
        assert!(matches!(ev.args_ids.data, IdHolder::Missing));
    }

    #[test]
    fn an_event_says_whether_dropping_it_frees_memory() {
        // The scan drops only events that say so: one that owns memory and says it does not
        // would leak.
        let owns = |s: &str| event(s.as_bytes(), 0, &mut Vec::new()).unwrap().0.owns;
        for plain in [
            r#"{"name":"a","cat":"b","ph":"X","ts":1,"pid":1,"tid":"t","args":{"data":{"x":"\u00e9"}}}"#,
            r#"{"args":{"data":{"sampleTraceId":7},"beginData":[],"sampleTraceId":null}}"#,
            r#"{"args":{"other":{"sampleTraceId":"\u00e9"}},"x":"\n"}"#,
        ] {
            assert!(!owns(plain), "{plain}");
        }
        for owning in [
            r#"{"name":"\u00e9"}"#,
            r#"{"tid":"é"}"#,
            r#"{"args":{"sampleTraceId":"\n"}}"#,
            r#"{"args":{"data":{"sampleTraceId":"é"}}}"#,
            r#"{"args":{"beginData":"\t"}}"#,
            r#"{"args":{"data":{"cpuProfile":{"samples":[1]},"timeDeltas":[5]}}}"#,
        ] {
            assert!(owns(owning), "{owning}");
        }
    }

    #[test]
    fn a_repeated_args_replaces_what_the_first_held() {
        let chunk = r#"{"data":{"cpuProfile":{"samples":[1]},"timeDeltas":[5]},"sampleTraceId":3}"#;
        let s = format!(r#"{{"args":{chunk},"args":{{"beginData":{{"sampleTraceId":4}}}}}} "#);
        let (ev, _) = event(s.as_bytes(), 0, &mut Vec::new()).unwrap();
        assert!(ev.chunk.is_none());
        assert!(matches!(ev.args_ids.data, IdHolder::Missing), "{:?}", ev.args_ids.data);
        assert!(matches!(ev.args_ids.sample_trace_id, Leaf::Missing));
        assert!(matches!(ev.args_ids.begin_data, IdHolder::Obj(Leaf::Num(n)) if n == 4.0));
        let s = r#"{"args":{"sampleTraceId":3},"args":{"data":{"timeDeltas":[5]}}} "#;
        let (ev, _) = event(s.as_bytes(), 0, &mut Vec::new()).unwrap();
        assert!(ev.chunk.is_some());
        assert!(matches!(ev.args_ids.sample_trace_id, Leaf::Missing), "{:?}", ev.args_ids.sample_trace_id);
    }

    use proptest::prelude::*;
    use serde_json::Value;

    /// JSON text for a scalar: integers of every length around the fast path's 15 digits,
    /// fractions, exponents, strings with and without escapes or non-ASCII, literals.
    fn scalar() -> impl Strategy<Value = String> {
        prop_oneof![
            any::<i64>().prop_map(|n| n.to_string()),
            (0u64..1_000_000_000_000_000_000).prop_map(|n| n.to_string()),
            (0u32..100_000).prop_map(|n| n.to_string()),
            Just("-0".to_owned()),
            (any::<i32>(), 0u32..10_000).prop_map(|(a, b)| format!("{a}.{b}")),
            // (serde refuses exponents past f64, which JSON.parse takes as Infinity.)
            (-30i32..30, -300i32..300).prop_map(|(a, e)| format!("{a}e{e}")),
            "[a-zA-Z0-9 ._:/-]{0,24}".prop_map(|s| format!("\"{s}\"")),
            "[a-z\u{e9}\u{6f22}\"\\\n]{0,8}".prop_map(|s| serde_json::to_string(&s).unwrap()),
            Just("\"\\u00e9t\\u0073\"".to_owned()),
            prop_oneof![Just("true"), Just("false"), Just("null")].prop_map(str::to_owned),
        ]
    }

    /// JSON text for any value, nested two levels at most.
    fn value() -> impl Strategy<Value = String> {
        scalar().prop_recursive(2, 12, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(","))),
                prop::collection::vec((key(), inner), 0..4).prop_map(|m| {
                    let members: Vec<String> = m.into_iter().map(|(k, v)| format!("{k}:{v}")).collect();
                    format!("{{{}}}", members.join(","))
                }),
            ]
        })
    }

    /// A quoted key: the envelope's own, near misses, long ones and escaped ones.
    fn key() -> impl Strategy<Value = String> {
        let pick = |keys: Vec<&'static str>| prop::sample::select(keys).prop_map(|k| format!("\"{k}\""));
        prop_oneof![
            3 => pick(vec!["name", "ph", "ts", "dur", "pid", "tid", "cat", "id", "args"]),
            2 => pick(vec![
                "tdur", "tts", "s", "callFrame", "data", "beginData", "sampleTraceId", "nam", "names", "pidx",
                "a_rather_long_key", "n\\u0061me", "t\\u0073", "\\u0064ata", "\u{e9}t\u{e9}",
            ]),
            1 => "[a-z]{0,10}".prop_map(|k| format!("\"{k}\"")),
        ]
    }

    /// `args` shaped as a `ProfileChunk`'s, at times with members that hold a trace id.
    fn chunk_args() -> impl Strategy<Value = String> {
        let ints =
            prop::collection::vec(prop_oneof![4 => (-5i64..500).prop_map(|n| n.to_string()), 1 => scalar()], 0..6);
        let node = (1u32..9, prop::option::of(1u32..9), "[a-z]{0,4}")
            .prop_map(|(id, parent, f)| match parent {
                Some(p) => format!(r#"{{"callFrame":{{"functionName":"{f}","scriptId":1,"url":"","lineNumber":1,"columnNumber":2}},"id":{id},"parent":{p}}}"#),
                None => format!(r#"{{"callFrame":{{"functionName":"(root)"}},"id":{id}}}"#),
            });
        let extra = prop::sample::select(vec!["", r#","sampleTraceId":7"#, r#","beginData":{}"#, r#","lines":[1,2]"#]);
        let data_extra = prop::sample::select(vec!["", r#","sampleTraceId":3"#, r#","source":"Internal""#]);
        (prop::collection::vec(node, 0..3), ints.clone(), ints, extra, data_extra, any::<bool>()).prop_map(
            |(nodes, samples, deltas, extra, data_extra, deltas_first)| {
                let profile = format!(
                    r#""cpuProfile":{{"nodes":[{}],"samples":[{}],"trace_ids":{{"5":2}}}}"#,
                    nodes.join(","),
                    samples.join(",")
                );
                let deltas = format!(r#""timeDeltas":[{}]"#, deltas.join(","));
                let (a, b) = if deltas_first { (deltas, profile) } else { (profile, deltas) };
                format!(r#"{{"data":{{{a},{b}{data_extra}}}{extra}}}"#)
            },
        )
    }

    /// An event's text with optional whitespace between its tokens.
    fn event_text() -> impl Strategy<Value = String> {
        let member = prop_oneof![
            8 => (key(), prop_oneof![3 => scalar(), 1 => value()], any::<bool>()),
            1 => (Just("\"args\"".to_owned()), chunk_args(), any::<bool>()),
        ];
        prop::collection::vec(member, 0..12).prop_map(|members| {
            let parts: Vec<String> = members
                .into_iter()
                .map(|(k, v, spaced)| if spaced { format!(" {k} :\n{v} ") } else { format!("{k}:{v}") })
                .collect();
            format!("{{{}}}", parts.join(","))
        })
    }

    /// What `JSON.parse` gives for a member of `object`, as [`Leaf`] would hold it.
    fn expected(object: &serde_json::Map<String, Value>, k: &str) -> Leaf<'static> {
        match object.get(k) {
            None => Leaf::Missing,
            Some(Value::Null) => Leaf::Null,
            Some(Value::Bool(b)) => Leaf::Bool(*b),
            Some(Value::Number(n)) => Leaf::Num(n.as_f64().unwrap()),
            Some(Value::String(s)) => Leaf::Str(Cow::Owned(s.clone())),
            Some(Value::Object(_)) => Leaf::Object,
            Some(Value::Array(_)) => Leaf::Array,
        }
    }

    fn same(a: &Leaf<'_>, b: &Leaf<'_>) -> bool {
        match (a, b) {
            // Bit for bit: -0 and 0 differ.
            (Leaf::Num(x), Leaf::Num(y)) => x.to_bits() == y.to_bits(),
            _ => a == b,
        }
    }

    /// `event` against serde_json (as exact as `JSON.parse`) on one text: it takes what serde
    /// takes, with the same envelope, and refuses what serde refuses.
    fn agree(text: &str) -> Result<(), TestCaseError> {
        let b = format!("{text} ");
        // Up to where the text is taken or refused, every cut of it asks for more.
        let decided = match event(b.as_bytes(), 0, &mut Vec::new()) {
            Ok((ev, end)) => {
                let v: Value = match serde_json::from_slice(&b.as_bytes()[..end]) {
                    Ok(v) => v,
                    // JSON.parse reads a number past f64 as Infinity; serde refuses it.
                    Err(e) if e.to_string().starts_with("number out of range") => return Ok(()),
                    Err(e) => {
                        return Err(TestCaseError::fail(format!("scanner took what serde refuses ({e}): {text}")))
                    }
                };
                let o = v.as_object().unwrap();
                for (got, k) in [
                    (&ev.name, "name"),
                    (&ev.cat, "cat"),
                    (&ev.ph, "ph"),
                    (&ev.ts, "ts"),
                    (&ev.dur, "dur"),
                    (&ev.pid, "pid"),
                    (&ev.tid, "tid"),
                    (&ev.id, "id"),
                ] {
                    let want = expected(o, k);
                    prop_assert!(same(got, &want), "{k}: {got:?} vs {want:?} in {text}");
                }
                prop_assert_eq!(ev.has_call_frame, o.contains_key("callFrame"));
                // The members that can hold a trace id, as the last `args` has them.
                let args = o.get("args").and_then(Value::as_object);
                let member = |k: &str| args.map_or(Leaf::Missing, |a| expected(a, k));
                let holder = |k: &str, got: &IdHolder<'_>| match (args.and_then(|a| a.get(k)), got) {
                    (None, IdHolder::Missing) => true,
                    (Some(Value::Object(h)), IdHolder::Obj(id)) => same(id, &expected(h, "sampleTraceId")),
                    (Some(v), IdHolder::Other(l)) if !v.is_object() => same(l, &expected(args.unwrap(), k)),
                    _ => false,
                };
                let ids = &ev.args_ids;
                prop_assert!(same(&ids.sample_trace_id, &member("sampleTraceId")), "{:?} in {}", ids, text);
                prop_assert!(holder("data", &ids.data), "{:?} in {}", ids, text);
                prop_assert!(holder("beginData", &ids.begin_data), "{:?} in {}", ids, text);
                if let Some(chunk) = &ev.chunk {
                    let want: ChunkArgs = serde_json::from_slice(ev.args.unwrap()).unwrap();
                    prop_assert_eq!(format!("{chunk:?}"), format!("{want:?}"));
                }
                match (ev.args, o.get("args")) {
                    (None, None) => {}
                    (Some(raw), Some(a)) => prop_assert_eq!(&serde_json::from_slice::<Value>(raw).unwrap(), a),
                    (got, want) => prop_assert!(false, "args {got:?} vs {want:?} in {text}"),
                }
                end
            }
            Err(Stop::Eof) => {
                // (serde stops at a number past f64 before it sees the end.)
                let eof = serde_json::from_str::<Value>(text)
                    .is_err_and(|e| e.is_eof() || e.to_string().starts_with("number out of range"));
                prop_assert!(eof, "asked for more after a complete value: {}", text);
                text.len()
            }
            Err(Stop::Syntax(p, what)) => {
                prop_assert!(p < b.len(), "{p} past the end");
                prop_assert!(
                    serde_json::from_str::<Value>(text).is_err(),
                    "refused ({what} at {p}) what serde takes: {text}"
                );
                p + 1
            }
        };
        for cut in (0..decided.min(text.len())).filter(|&c| text.is_char_boundary(c)) {
            let r = event(&text.as_bytes()[..cut], 0, &mut Vec::new()).map(|(_, end)| end);
            prop_assert_eq!(r, Err(Stop::Eof), "cut at {} of {}", cut, text);
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        #[test]
        fn events_agree_with_serde(text in event_text()) {
            agree(&text)?;
        }

        #[test]
        fn damaged_events_agree_with_serde(
            text in event_text(),
            at in any::<prop::sample::Index>(),
            edit in prop::sample::select(vec![
                "", ",", "}", "]", "\"", "0", "00", "-", ".", "e", "\\", "\u{1}", " ", "x", ":", "{", "\u{e9}",
            ]),
            replace in any::<bool>(),
        ) {
            let mut cuts: Vec<usize> = (0..=text.len()).filter(|&c| text.is_char_boundary(c)).collect();
            let c = cuts.swap_remove(at.index(cuts.len()));
            let mut damaged = text[..c].to_owned();
            damaged.push_str(edit);
            let rest = &text[c..];
            let skip = if replace { rest.chars().next().map_or(0, char::len_utf8) } else { 0 };
            damaged.push_str(&rest[skip..]);
            // `event` is called after the whitespace before an event.
            agree(damaged.trim_start())?;
        }
    }

    #[test]
    fn newlines_and_ascii_agree_with_a_byte_loop() {
        // Every length around the 16-byte steps, a newline or a high byte at every place.
        for len in (0..200).chain([64 * 63 - 1, 64 * 63, 64 * 63 + 1, 64 * 64 + 17]) {
            for at in 0..len {
                for c in [b'\n', 0x80, 0xff, b'a'] {
                    let mut b = vec![b'x'; len];
                    b[at] = c;
                    b[len / 2] = b'\n';
                    let want = (b.iter().filter(|&&c| c == b'\n').count() as u64, b.is_ascii());
                    assert_eq!(newlines_and_ascii(&b), want, "len {len}, {c:#x} at {at}");
                }
            }
        }
    }

    #[test]
    fn newlines_are_counted_when_every_byte_is_one() {
        // The byte lanes count up to 4 a step for 63 steps before they are summed.
        for len in [64 * 63, 64 * 63 * 3 + 5] {
            assert_eq!(newlines_and_ascii(&vec![b'\n'; len]), (len as u64, true));
        }
    }

    #[test]
    fn invalid_utf8_finds_each_bad_sequence() {
        let b = b"ok \xff then \xc3( and \xe2\x82 end \xf0\x9f\x98\x80 \xf0\x9f";
        assert_eq!(invalid_utf8(b).collect::<Vec<_>>(), [3, 10, 17, 29]);
        assert_eq!(invalid_utf8("plain é ✓".as_bytes()).count(), 0);
    }

    #[test]
    fn kept_strings_replace_invalid_utf8_as_node_does() {
        let (ev, _) =
            event(b"{\"name\":\"a\xffb\",\"cat\":\"\xc3\xa9\",\"ph\":\"\xe9\\n\"} ", 0, &mut Vec::new()).unwrap();
        assert_eq!(ev.name.str(), Some("a\u{fffd}b"));
        assert!(matches!(ev.cat, Leaf::Str(Cow::Borrowed("\u{e9}"))), "{:?}", ev.cat);
        assert_eq!(ev.ph.str(), Some("\u{fffd}\n"));
    }

    #[test]
    fn events_keep_the_last_duplicate_and_raw_args() {
        let s = r#"{"name":"A","ts":1,"args":{"x":[1]},"ts":2.5,"name":"B\n","other":{"q":1},"callFrame":{}} "#;
        let (ev, end) = event(s.as_bytes(), 0, &mut Vec::new()).unwrap();
        assert_eq!(ev.name.str(), Some("B\n"));
        assert_eq!(ev.ts.num(), Some(2.5));
        assert_eq!(ev.args, Some(&br#"{"x":[1]}"#[..]));
        assert!(ev.has_call_frame);
        assert_eq!(end, s.len() - 1);
    }
}
