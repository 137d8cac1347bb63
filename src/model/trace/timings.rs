//! The events a user selects a range by: user-timing marks and measures, `console.time`
//! spans, interactions (`EventTiming` with an interaction id), and the complete events of one
//! name. Each is read from what the scan found of it, and its `id2` and an interaction's
//! `args.data` from its bytes, without a JSON tree (a page may hold tens of thousands of
//! marks and measures). Pairing follows DevTools' UserTimingsHandler (`matchEvents`) and
//! UserInteractionsHandler (`finalize`); the result is in [`crate::ranges::Timings`].

use rustc_hash::FxHashMap;

use crate::input::leaf::Leaf;
use crate::input::scan::RawEvent;
use crate::input::shapes::{EventTimingArgs, EventTimingData, Id2Event, MaybeObj};
use crate::ranges::{Kind, Landmark, Timings};

/// Names under `blink.user_timing` that the browser adds (resource and navigation timing):
/// DevTools leaves them out of its Timings track, and so out of the marks and measures.
const IGNORED: [&str; 22] = [
    "workerStart",
    "redirectStart",
    "redirectEnd",
    "fetchStart",
    "domainLookupStart",
    "domainLookupEnd",
    "connectStart",
    "connectEnd",
    "secureConnectionStart",
    "requestStart",
    "responseStart",
    "responseEnd",
    "navigationStart",
    "unloadEventStart",
    "unloadEventEnd",
    "domLoading",
    "domInteractive",
    "domContentLoadedEventStart",
    "domContentLoadedEventEnd",
    "domComplete",
    "loadEventStart",
    "loadEventEnd",
];

/// Whether the builder must see this event whole for the timings (decided on the scan
/// threads: a category or name test on the few phases that can be one).
#[inline]
pub(crate) fn is_timing(name: &str, ph: u8, cat: &Leaf<'_>) -> bool {
    match ph {
        b'b' | b'e' | b'n' | b'R' | b'I' => {
            name == "EventTiming"
                || cat
                    .str()
                    .is_some_and(|c| c == "blink.user_timing" || c == "blink.console" || node_timing_category(c))
        }
        _ => false,
    }
}

/// Node's `console.time` (`node.console`) and user-timing (`node.perf.usertiming`) categories.
fn node_timing_category(cat: &str) -> bool {
    let node = |c: &str| c == "node.console" || c == "node.perf.usertiming";
    // Most categories are one name: compared whole, not split.
    if memchr::memchr(b',', cat.as_bytes()).is_none() {
        return node(cat);
    }
    cat.split(',').any(node)
}

/// An async event's id as DevTools keys pairs by it (`id ?? id2.global ?? id2.local`, as a
/// string); None when it has none, or one that never pairs (a falsy id). `id2` is read from
/// the event's bytes `raw` only when there is no `id`; Err when they cannot be read.
fn synthetic_id(id: &Leaf<'_>, raw: &[u8]) -> Result<Option<String>, serde_json::Error> {
    let key = |v: &Leaf<'_>| js_key(v).filter(|_| v.truthy());
    if !id.is_nullish() {
        return Ok(key(id));
    }
    leniently(raw, |raw| {
        Ok(match serde_json::from_slice::<Id2Event<'_>>(raw)?.id2 {
            MaybeObj::Obj(id2) if !id2.global.is_nullish() => key(&id2.global),
            MaybeObj::Obj(id2) => key(&id2.local),
            _ => None,
        })
    })
}

/// `read` of `bytes`, or of a copy whose lone surrogates have stand-ins: serde refuses them,
/// `JSON.parse` takes them.
fn leniently<R>(bytes: &[u8], read: impl Fn(&[u8]) -> Result<R, serde_json::Error>) -> Result<R, serde_json::Error> {
    read(bytes).or_else(|e| match crate::input::json::lone_surrogates_replaced(bytes) {
        Some(fixed) => read(&fixed),
        None => Err(e),
    })
}

/// A value as a JavaScript template literal spells it (objects never pair: None).
fn js_key(v: &Leaf<'_>) -> Option<String> {
    match v {
        Leaf::Str(_) | Leaf::Num(_) | Leaf::Bool(_) => v.property_key(),
        _ => None,
    }
}

/// What DevTools reads of an `EventTiming` start's `args.data`.
#[derive(Debug, Clone, PartialEq)]
struct EventData {
    /// Whether UserInteractionsHandler takes the event for an interaction's start: a
    /// duration of at least 1 ms (or none) and an interaction id other than 0.
    start: bool,
    /// Whether `type`, `interactionId`, `timeStamp`, `processingStart` and `processingEnd`
    /// are all truthy, as an interaction's start needs them.
    complete: bool,
    event_type: Option<String>,
    interaction_id: Option<f64>,
}

impl EventData {
    /// The data of an event's `args` bytes; None when `args` or its `data` is not an object.
    fn of_args(args: &[u8]) -> Result<Option<EventData>, serde_json::Error> {
        leniently(args, |args| {
            Ok(match serde_json::from_slice::<MaybeObj<EventTimingArgs<'_>>>(args)? {
                MaybeObj::Obj(EventTimingArgs { data: MaybeObj::Obj(d) }) => Some(EventData::of(&d)),
                _ => None,
            })
        })
    }

    fn of(d: &EventTimingData<'_>) -> EventData {
        let short = d.duration.num().is_some_and(|x| x < 1.0);
        let no_id = matches!(d.interaction_id, Leaf::Missing) || d.interaction_id.num() == Some(0.0);
        let fields = [&d.event_type, &d.interaction_id, &d.time_stamp, &d.processing_start, &d.processing_end];
        EventData {
            start: !(short || no_id),
            complete: fields.iter().all(|v| v.truthy()),
            event_type: js_key(&d.event_type),
            interaction_id: d.interaction_id.num(),
        }
    }
}

/// One async or mark event, as read.
#[derive(Debug, Clone)]
struct Async {
    /// Its index in the event array (DevTools' raw order).
    order: u64,
    ph: u8,
    cat: String,
    name: String,
    ts: f64,
    /// `dur` when it is a number (DevTools sorts by `ts + (dur ?? 0)`).
    dur: Option<f64>,
    pid: i64,
    tid: i64,
    /// The pairing key (see [`synthetic_id`]).
    id: Option<String>,
    /// `EventTiming`: the raw `id` as a key of its own type (`n:1`, `s:1`, `u` for none).
    raw_id: String,
    /// `args.data`, for `EventTiming` starts.
    data: Option<EventData>,
}

/// A complete event with the wanted name, on its thread.
#[derive(Debug, Clone)]
pub(crate) struct Complete {
    pub(crate) name: String,
    pub(crate) pid: i64,
    pub(crate) tid: i64,
    pub(crate) ts: f64,
    pub(crate) dur: f64,
    pub(crate) cat: String,
    pub(crate) ph: u8,
    pub(crate) order: u64,
    pub(crate) event_type: Option<String>,
    pub(crate) interaction_id: Option<f64>,
}

/// What the builder gathers while the events go by.
#[derive(Debug, Default)]
pub(crate) struct TimingsBuilder {
    /// The names whose complete events are kept (a query by name needs DevTools' candidates).
    pub(crate) want: Vec<Box<str>>,
    events: Vec<Async>,
    complete: Vec<Complete>,
    /// An open `B` with the wanted name: (thread, entry) → its place in `complete`.
    open: FxHashMap<(u32, u32), usize>,
    /// Events skipped for a missing pid, tid or ts.
    pub(crate) unreadable: u64,
}

impl TimingsBuilder {
    /// Whether `name` is the one whose complete events are kept.
    #[inline]
    pub(crate) fn wants(&self, name: &str) -> bool {
        !self.want.is_empty() && self.want.iter().any(|w| **w == *name)
    }

    /// A complete (`X`) or begin (`B`) event with the wanted name, at entry `entry` of thread `th`.
    pub(crate) fn complete(&mut self, name: &str, ev: &RawEvent<'_>, key: (u32, u32), ts: f64, dur: f64, order: u64) {
        let (Some(pid), Some(tid)) = (ev.pid.int(), ev.tid.int()) else { return };
        // DevTools' candidates have a numeric `dur`: every `X` that has one, every `B` it made complete.
        let ph = ev.phase();
        if ph == b'X' && !matches!(ev.dur, Leaf::Num(_)) {
            return;
        }
        let cat = ev.cat.str().unwrap_or("").to_owned();
        // What DevTools says of a selected event: its `args.data.type` and `interactionId`.
        let data = ev.args.and_then(|a| EventData::of_args(a).ok().flatten());
        let (event_type, interaction_id) = data.map_or((None, None), |d| (d.event_type, d.interaction_id));
        if ph == b'B' {
            self.open.insert(key, self.complete.len());
        }
        self.complete.push(Complete {
            name: name.to_owned(),
            pid,
            tid,
            ts,
            dur,
            cat,
            ph,
            order,
            event_type,
            interaction_id,
        });
    }

    /// The `E` that closed the `B` at `key` gave it this duration.
    pub(crate) fn closed(&mut self, key: (u32, u32), dur: f64) {
        if let Some(i) = self.open.remove(&key) {
            self.complete[i].dur = dur;
        }
    }

    /// Whether a `B` of the wanted name may be open (most traces: none).
    #[inline]
    pub(crate) fn any_open(&self) -> bool {
        !self.open.is_empty()
    }

    /// A timing event ([`is_timing`]), its bytes `raw` at index `order`.
    pub(crate) fn event(&mut self, ev: &RawEvent<'_>, raw: &[u8], order: u64) {
        let (Some(pid), Some(tid), Some(ts)) = (ev.pid.int(), ev.tid.int(), ev.ts.num().filter(|t| t.is_finite()))
        else {
            self.unreadable += 1;
            return;
        };
        let Leaf::Str(name) = &ev.name else { return };
        let raw_id = match &ev.id {
            Leaf::Missing => "u".to_owned(),
            Leaf::Str(s) => format!("s:{s}"),
            Leaf::Num(n) => format!("n:{}", crate::js::number_to_string(*n)),
            _ => format!("o:{order}"), // null, booleans, objects: each its own
        };
        let Ok(id) = synthetic_id(&ev.id, raw) else {
            self.unreadable += 1;
            return;
        };
        // Only an interaction's start reads its data (a recording may hold many thousands of marks).
        let data = match ev.args.filter(|_| ev.phase() == b'b' && name.as_ref() == "EventTiming") {
            Some(args) => match EventData::of_args(args) {
                Ok(d) => d,
                Err(_) => {
                    self.unreadable += 1;
                    return;
                }
            },
            None => None,
        };
        self.events.push(Async {
            order,
            ph: ev.phase(),
            cat: ev.cat.str().unwrap_or("").to_owned(),
            name: name.to_string(),
            ts,
            dur: ev.dur.num(),
            pid,
            tid,
            id,
            raw_id,
            data,
        });
    }

    /// The landmarks: marks, pairs and complete events of the processes DevTools keeps.
    pub(crate) fn finish(mut self, kept: impl Fn(i64) -> bool) -> Timings {
        let mut out = Vec::new();
        let mut measures = Vec::new();
        let mut consoles = Vec::new();
        let mut node = Vec::new();
        let (mut starts, mut ends) = (Vec::new(), Vec::new());
        for e in std::mem::take(&mut self.events) {
            let ignored = IGNORED.contains(&e.name.as_str());
            match (e.cat.as_str(), e.ph) {
                ("blink.user_timing", b'R' | b'I') if !ignored => out.push(mark(&e)),
                ("blink.user_timing", b'b' | b'e' | b'n') if !ignored => measures.push(e),
                ("blink.console", b'b' | b'e' | b'n') => consoles.push(e),
                (c, b'b' | b'e' | b'n') if node_timing_category(c) => node.push(e),
                (c, b'R' | b'I') if node_timing_category(c) => out.push(mark(&e)),
                _ if e.name == "EventTiming" && e.ph == b'e' => ends.push(e),
                _ if e.name == "EventTiming" && e.ph == b'b' && e.data.as_ref().is_some_and(|d| d.start) => {
                    starts.push(e)
                }
                _ => {}
            }
        }
        // UserTimingsHandler pairs measures and console timings together.
        measures.extend(consoles);
        out.extend(match_pairs(measures, true));
        out.extend(match_pairs(node, false));
        out.extend(interactions(starts, ends));
        for c in self.complete.into_iter().filter(|c| kept(c.pid)) {
            out.push(Landmark {
                kind: Kind::Complete,
                name: c.name,
                ts: c.ts,
                dur: c.dur,
                pid: c.pid,
                tid: c.tid,
                ph: c.ph as char,
                cat: c.cat,
                order: c.order,
                devtools: true,
                event_type: c.event_type,
                interaction_id: c.interaction_id,
            });
        }
        Timings::new(out, self.want.iter().map(|w| w.to_string()).collect(), self.unreadable)
    }
}

/// The landmark of an event `begin` that lasts until `end` (µs), kept with `target`'s place
/// (a pair's is its end event's, as DevTools keeps it).
fn landmark(kind: Kind, begin: &Async, end: f64, target: &Async, devtools: bool) -> Landmark {
    Landmark {
        kind,
        name: begin.name.clone(),
        ts: begin.ts,
        dur: end - begin.ts,
        pid: target.pid,
        tid: target.tid,
        ph: target.ph as char,
        cat: target.cat.clone(),
        order: begin.order,
        devtools,
        event_type: None,
        interaction_id: None,
    }
}

/// A user-timing mark: an instant, which DevTools offers for no selection.
fn mark(e: &Async) -> Landmark {
    landmark(Kind::Mark, e, e.ts, e, false)
}

/// DevTools' `compareBeginAndEnd` (`ts + (dur ?? 0)` for the end): by start, then the later
/// end first; equal otherwise. `sortTraceEventsInPlace` sorts by it, stably.
fn time_order(a: &Async, b: &Async) -> std::cmp::Ordering {
    let (ea, eb) = (a.ts + a.dur.unwrap_or(0.0), b.ts + b.dur.unwrap_or(0.0));
    a.ts.partial_cmp(&b.ts)
        .unwrap_or(std::cmp::Ordering::Equal)
        .then(eb.partial_cmp(&ea).unwrap_or(std::cmp::Ordering::Equal))
}

/// `matchEvents` and `createSortedSyntheticEvents`: begins and ends of one id, category and
/// name paired last-in first-out; a begin with no end pairs with its instants.
fn match_pairs(mut events: Vec<Async>, devtools: bool) -> Vec<Landmark> {
    events.sort_by(time_order);
    let key = |e: &Async| e.id.as_ref().map(|id| format!("{}:{id}:{}", e.cat, e.name));
    let mut begins: FxHashMap<String, Vec<usize>> = FxHashMap::default();
    let mut instants: FxHashMap<String, Vec<usize>> = FxHashMap::default();
    let mut begin_order: Vec<String> = Vec::new();
    let mut pairs: Vec<(usize, usize)> = Vec::new();
    for (i, e) in events.iter().enumerate() {
        let Some(k) = key(e) else { continue };
        match e.ph {
            b'b' => {
                let v = begins.entry(k.clone()).or_insert_with(|| {
                    begin_order.push(k.clone());
                    Vec::new()
                });
                v.push(i);
            }
            b'n' => instants.entry(k).or_default().push(i),
            b'e' => {
                if let Some(b) = begins.get_mut(&k).and_then(Vec::pop) {
                    pairs.push((b, i));
                    // The pair takes its id's instants when the first of them is not before it.
                    if let Some(inst) = instants.get_mut(&k) {
                        if inst.first().is_some_and(|&f| events[f].ts >= events[b].ts) {
                            inst.clear();
                        }
                    }
                }
            }
            _ => {}
        }
    }
    // A begin left without an end pairs with its instants (the last begin of the id).
    for k in &begin_order {
        if let Some(&b) = begins.get(k).and_then(|v| v.last()) {
            if instants.get(k).is_some_and(|v| !v.is_empty()) {
                pairs.push((b, b));
            }
        }
    }
    pairs
        .into_iter()
        .map(|(b, t)| {
            let (begin, target) = (&events[b], &events[t]);
            let console = begin.cat.split(',').any(|c| c == "blink.console" || c == "node.console");
            let kind = if console { Kind::ConsoleTime } else { Kind::Measure };
            let mut l = landmark(kind, begin, target.ts, target, devtools);
            // Node's `console.time('batch')` is the span `time::batch`.
            if let (false, Some(label)) = (devtools, begin.name.strip_prefix("time::")) {
                l.name = label.to_owned();
            }
            l
        })
        .collect()
}

/// The interactions: `EventTiming` starts and ends merged in time order (`mergeOrdered`, which
/// drops an end that ties with a start), each end closing the last open start of its id.
fn interactions(starts: Vec<Async>, ends: Vec<Async>) -> Vec<Landmark> {
    let mut merged: Vec<&Async> = Vec::with_capacity(starts.len() + ends.len());
    let (mut i, mut j) = (0, 0);
    while i < starts.len() && j < ends.len() {
        let c = time_order(&starts[i], &ends[j]);
        merged.push(if c.is_le() { &starts[i] } else { &ends[j] });
        if c.is_le() {
            i += 1;
        }
        if c.is_ge() {
            j += 1;
        }
    }
    merged.extend(&starts[i..]);
    merged.extend(&ends[j..]);
    let mut open: FxHashMap<&str, Vec<&Async>> = FxHashMap::default();
    let mut out = Vec::new();
    for e in merged {
        if e.ph == b'b' {
            open.entry(e.raw_id.as_str()).or_default().push(e);
            continue;
        }
        let Some(b) = open.get_mut(e.raw_id.as_str()).and_then(Vec::pop) else { continue };
        let d = b.data.as_ref().expect("starts have data");
        if !d.complete {
            continue;
        }
        let mut l = landmark(Kind::Interaction, b, e.ts, b, true);
        l.event_type = d.event_type.clone();
        l.interaction_id = d.interaction_id;
        out.push(l);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_timing_categories_are_found_alone_or_in_a_list() {
        for (cat, node) in [
            ("node.console", true),
            ("node.perf.usertiming", true),
            ("node,node.console", true),
            ("v8,node.perf.usertiming,x", true),
            ("node.perf", false),
            ("node.console.x", false),
            ("xnode.console", false),
            ("devtools.timeline,rail", false),
            ("", false),
            (",", false),
        ] {
            assert_eq!(node_timing_category(cat), node, "{cat:?}");
        }
    }

    fn ev(order: u64, ph: u8, ts: f64, id: &str, data: Option<EventData>) -> Async {
        Async {
            order,
            ph,
            cat: "blink.user_timing".to_owned(),
            name: "m".to_owned(),
            ts,
            dur: None,
            pid: 1,
            tid: 1,
            id: Some(id.to_owned()),
            raw_id: format!("s:{id}"),
            data,
        }
    }

    #[test]
    fn ids_as_devtools_keys_them() {
        let id = |j: &str| {
            let (ev, _) = crate::input::scan::event(j.as_bytes(), 0, &mut Vec::new()).unwrap();
            synthetic_id(&ev.id, j.as_bytes()).unwrap()
        };
        assert_eq!(id(r#"{"id":"0x1"}"#), Some("0x1".to_owned()));
        assert_eq!(id(r#"{"id":12}"#), Some("12".to_owned()));
        assert_eq!(id(r#"{"id2":{"local":"0x3"}}"#), Some("0x3".to_owned()));
        assert_eq!(id(r#"{"id":null,"id2":{"global":"g","local":"l"}}"#), Some("g".to_owned()));
        // A falsy id never pairs; no id is no event.
        assert_eq!(id(r#"{"id":0}"#), None);
        assert_eq!(id(r#"{"id":""}"#), None);
        assert_eq!(id(r#"{}"#), None);
        // An id that is an object or array never pairs, whatever its `id2`.
        assert_eq!(id(r#"{"id":{"a":1},"id2":{"local":"l"}}"#), None);
        assert_eq!(id(r#"{"id":true}"#), Some("true".to_owned()));
        assert_eq!(id(r#"{"id2":{"global":null,"local":5}}"#), Some("5".to_owned()));
        assert_eq!(id(r#"{"id2":"0x3"}"#), None);
        // Duplicate keys: the last one counts, as with `JSON.parse`.
        assert_eq!(id(r#"{"id2":{"local":"a"},"id2":{"local":"b"}}"#), Some("b".to_owned()));
    }

    #[test]
    fn pairs_close_last_in_first_out_and_a_lone_begin_takes_its_instants() {
        let events = vec![
            ev(0, b'b', 0.0, "a", None),
            ev(1, b'b', 10.0, "a", None),
            ev(2, b'e', 20.0, "a", None),
            ev(3, b'e', 30.0, "a", None),
            ev(4, b'b', 40.0, "z", None),
            ev(5, b'n', 45.0, "z", None),
        ];
        let mut got: Vec<(f64, f64)> = match_pairs(events, true).iter().map(|l| (l.ts, l.dur)).collect();
        got.sort_by(|a, b| a.0.total_cmp(&b.0));
        assert_eq!(got, [(0.0, 30.0), (10.0, 10.0), (40.0, 0.0)]);
    }

    #[test]
    fn an_end_that_ties_with_its_start_is_dropped_as_merge_ordered_drops_it() {
        let args = br#"{"data":{"type":"click","interactionId":7,"timeStamp":1.0,
                         "processingStart":2.0,"processingEnd":3.0,"duration":16}}"#;
        let data = EventData::of_args(args).unwrap();
        assert!(data.as_ref().is_some_and(|d| d.start && d.complete));
        let mut start = ev(0, b'b', 100.0, "x", data);
        start.name = "EventTiming".to_owned();
        let mut end = ev(1, b'e', 100.0, "x", None);
        end.name = "EventTiming".to_owned();
        assert!(interactions(vec![start.clone()], vec![end.clone()]).is_empty());
        end.ts = 150.0;
        let got = interactions(vec![start], vec![end]);
        assert_eq!(got.len(), 1);
        assert_eq!((got[0].dur, got[0].interaction_id, got[0].event_type.as_deref()), (50.0, Some(7.0), Some("click")));
    }

    #[test]
    fn starts_that_are_not_interactions() {
        let start = |args: &str| EventData::of_args(args.as_bytes()).unwrap().is_some_and(|d| d.start);
        assert!(start(r#"{"data":{"interactionId":3,"duration":8}}"#));
        assert!(start(r#"{"data":{"interactionId":3}}"#), "no duration: kept, as DevTools");
        assert!(start(r#"{"data":{"interactionId":null}}"#), "an id that is null is not a missing one");
        assert!(!start(r#"{"data":{"interactionId":0,"duration":8}}"#));
        assert!(!start(r#"{"data":{"duration":8}}"#));
        assert!(!start(r#"{"data":{"interactionId":3,"duration":0.5}}"#));
        assert!(!start(r#"{"data":null}"#));
        assert!(!start(r#"{"data":[1]}"#));
        assert!(!start("null"));
        assert!(!start("{}"));
    }
}
