//! Ranges of a recording the way users name them: a window in ms, one trace event, one
//! user-timing measure, the time between two marks, one interaction.
//!
//! A trace's marks, measures, `console.time` spans and interactions are gathered while it is
//! read ([`Timings`]); a [`Query`] picks one of them and becomes the [`Selection`] every command
//! works on. Events are picked as DevTools' Performance panel picks them when one is clicked
//! (its `--tree-range-event` candidates): complete events of the tracks' threads and the
//! engine's synthetic begin/end pairs, in `ts` order, ties in the order of that list.

mod query;

use std::collections::hash_map::Entry;
use std::fmt::Write as _;

use rustc_hash::FxHashMap;

pub use query::{Pick, Query};

/// A selected time range, as the Performance panel's range selection gives it to its trees:
/// a window in µs on the trace's clock (ms × 1000 for a range given in ms).
#[derive(Debug, Clone, PartialEq)]
pub struct Selection {
    /// How it was asked for (the option), for the document.
    pub option: String,
    /// With what (the option's argument).
    pub arg: String,
    /// The window's start, µs.
    pub min_us: f64,
    /// The window's end, µs.
    pub max_us: f64,
    /// The selected event, as a JSON object (DevTools' oracle's `event` field), when the range
    /// is one of the events DevTools offers.
    pub event: Option<String>,
}

impl Selection {
    /// Appends the fields every document gives a range, `"option":…,"arg":…,"startTime":MS,
    /// "endTime":MS` (ms, as the DevTools oracle writes them), for the caller to enclose.
    pub fn write_json_fields(&self, out: &mut String) {
        out.push_str("\"option\":");
        crate::js::write_json_string(out, &self.option);
        out.push_str(",\"arg\":");
        crate::js::write_json_string(out, &self.arg);
        out.push_str(",\"startTime\":");
        crate::js::write_number(out, self.min_us / 1000.0);
        out.push_str(",\"endTime\":");
        crate::js::write_number(out, self.max_us / 1000.0);
    }
}

/// What a landmark is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A complete trace event (`X`, or `B`/`E` made one) on one of the tracks' threads.
    Complete,
    /// A user-timing measure (`performance.measure`, or Node's).
    Measure,
    /// A `console.time` span.
    ConsoleTime,
    /// An `EventTiming` pair with an interaction id: a part of one interaction.
    Interaction,
    /// A user-timing mark (`performance.mark`): an instant.
    Mark,
}

impl Kind {
    /// The word for people and for JSON.
    pub fn name(self) -> &'static str {
        match self {
            Kind::Complete => "event",
            Kind::Measure => "measure",
            Kind::ConsoleTime => "console.time",
            Kind::Interaction => "interaction",
            Kind::Mark => "mark",
        }
    }
}

/// One event a range can be taken from.
#[derive(Debug, Clone, PartialEq)]
pub struct Landmark {
    /// What it is.
    pub kind: Kind,
    /// Its name (a measure's or mark's own name; `EventTiming` for an interaction).
    pub name: String,
    /// Start, µs on the trace's clock.
    pub ts: f64,
    /// Duration, µs (0 for a mark).
    pub dur: f64,
    /// Process and thread (a pair's: its end event's, as DevTools keeps it).
    pub pid: i64,
    /// Thread.
    pub tid: i64,
    /// Phase of the event DevTools keeps for it.
    pub ph: char,
    /// Category of that event.
    pub cat: String,
    /// Index of its (begin) event in the trace's event array.
    pub order: u64,
    /// Whether DevTools offers it for selection (Node's timings are jscalls' own).
    pub devtools: bool,
    /// An interaction's event type (`click`, `keydown`, ...).
    pub event_type: Option<String>,
    /// An interaction's id (the events of one user action share it).
    pub interaction_id: Option<f64>,
}

impl Landmark {
    /// End, µs.
    pub fn end(&self) -> f64 {
        self.ts + self.dur
    }
}

/// The landmarks of one recording.
#[derive(Debug, Clone, Default)]
pub struct Timings {
    /// Every landmark, in `ts` order (ties: complete events first, then pairs, each in their
    /// DevTools order).
    all: Vec<Landmark>,
    /// The names whose complete events were kept.
    complete_names: Vec<String>,
    /// Timing events that could not be read (no pid, tid or ts): skipped.
    pub unreadable: u64,
}

impl Timings {
    pub(crate) fn new(mut all: Vec<Landmark>, complete_names: Vec<String>, unreadable: u64) -> Timings {
        // The candidates' order: complete events by (pid, tid) then the thread's own order
        // (start, then the longer first), then pairs by raw index; then by ts, stable.
        let rank = |l: &Landmark| matches!(l.kind, Kind::Complete);
        all.sort_by(|a, b| {
            rank(b).cmp(&rank(a)).then_with(|| {
                if rank(a) {
                    (a.pid, a.tid)
                        .cmp(&(b.pid, b.tid))
                        .then(a.ts.total_cmp(&b.ts))
                        .then(b.end().total_cmp(&a.end()))
                        .then(a.order.cmp(&b.order))
                } else {
                    a.order.cmp(&b.order)
                }
            })
        });
        all.sort_by(|a, b| a.ts.partial_cmp(&b.ts).unwrap_or(std::cmp::Ordering::Equal));
        Timings { all, complete_names, unreadable }
    }

    /// Every landmark, in time order.
    pub fn all(&self) -> &[Landmark] {
        &self.all
    }

    /// The landmarks of one kind.
    pub fn of(&self, kind: Kind) -> impl Iterator<Item = &Landmark> {
        self.all.iter().filter(move |l| l.kind == kind)
    }

    /// The measures and `console.time` spans, in time order.
    pub fn measures(&self) -> impl Iterator<Item = &Landmark> {
        self.all.iter().filter(|l| matches!(l.kind, Kind::Measure | Kind::ConsoleTime))
    }

    /// The interactions, one per interaction id in time order of their first event: each its
    /// longest `EventTiming` pair (the first of the longest), as INP takes an interaction.
    pub fn interactions(&self) -> Vec<&Landmark> {
        let mut out: Vec<&Landmark> = Vec::new();
        // Each id's place in `out` (a recording may hold thousands).
        let mut at: FxHashMap<u64, usize> = FxHashMap::default();
        for l in self.of(Kind::Interaction) {
            let id = l.interaction_id.unwrap_or(f64::NAN).to_bits();
            match at.entry(id) {
                Entry::Occupied(i) => {
                    let i = *i.get();
                    if l.dur > out[i].dur {
                        out[i] = l;
                    }
                }
                Entry::Vacant(v) => {
                    v.insert(out.len());
                    out.push(l);
                }
            }
        }
        out
    }

    /// DevTools' candidates named `name` (its `--tree-range-event NAME#K` list), or None when
    /// the complete events of that name were not kept.
    pub fn devtools_candidates(&self, name: &str) -> Option<Vec<&Landmark>> {
        self.complete_names
            .iter()
            .any(|n| n == name)
            .then(|| self.all.iter().filter(|l| l.devtools && l.name == name && l.kind != Kind::Mark).collect())
    }

    /// The JSON object DevTools' oracle writes for a selected event (its index among the
    /// candidates of its name), when it is one of them.
    pub(crate) fn describe(&self, l: &Landmark) -> Option<String> {
        let cands = self.devtools_candidates(&l.name)?;
        let index = cands.iter().position(|c| std::ptr::eq(*c, l))?;
        let mut s = String::from("{\"name\":");
        crate::js::write_json_string(&mut s, &l.name);
        let kind = if l.kind == Kind::Complete { "complete" } else { "async pair" };
        let _ = write!(s, ",\"index\":{index},\"of\":{},\"kind\":\"{kind}\",\"ph\":", cands.len());
        crate::js::write_json_string(&mut s, &l.ph.to_string());
        s.push_str(",\"cat\":");
        crate::js::write_json_string(&mut s, &l.cat);
        let _ = write!(s, ",\"pid\":{},\"tid\":{},\"ts\":", l.pid, l.tid);
        crate::js::write_number(&mut s, l.ts);
        s.push_str(",\"dur\":");
        crate::js::write_number(&mut s, l.dur);
        if let Some(t) = &l.event_type {
            s.push_str(",\"type\":");
            crate::js::write_json_string(&mut s, t);
        }
        if let Some(id) = l.interaction_id {
            s.push_str(",\"interactionId\":");
            crate::js::write_number(&mut s, id);
        }
        s.push('}');
        Some(s)
    }

    /// Each landmark with its index among those of its name (the K of `NAME#K`), in the order
    /// given.
    pub fn indexed<'a>(ls: impl Iterator<Item = &'a Landmark>) -> Vec<(usize, &'a Landmark)> {
        // How many of each name came before.
        let mut seen: FxHashMap<&str, usize> = FxHashMap::default();
        ls.map(|l| {
            let n = seen.entry(&l.name).or_insert(0);
            *n += 1;
            (*n - 1, l)
        })
        .collect()
    }

    /// The names the complete events of which a query needs kept while reading.
    pub fn names_for(queries: &[&Query]) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for q in queries {
            if let Some(n) = q.event_name() {
                if !out.iter().any(|o| o == n) {
                    out.push(n.to_owned());
                }
            }
        }
        out
    }
}

/// A time in ms for people: `12.345 ms`.
pub(crate) fn ms(us: f64) -> String {
    let s = format!("{:.3}", us / 1000.0);
    format!("{} ms", s.trim_end_matches('0').trim_end_matches('.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(kind: Kind, name: &str, ts: f64, dur: f64, interaction_id: Option<f64>) -> Landmark {
        Landmark {
            kind,
            name: name.to_owned(),
            ts,
            dur,
            pid: 1,
            tid: 1,
            ph: 'b',
            cat: String::new(),
            order: ts as u64,
            devtools: true,
            event_type: None,
            interaction_id,
        }
    }

    /// Each landmark's index among those of its name, and each interaction id once (its
    /// longest pair, in the order of its first), counted by hand.
    #[test]
    fn names_are_counted_and_interactions_keep_their_longest() {
        let marks: Vec<Landmark> = ["a", "b", "a", "c", "b", "a"]
            .iter()
            .enumerate()
            .map(|(k, n)| at(Kind::Mark, n, k as f64, 0.0, None))
            .collect();
        let indexed: Vec<(usize, &str)> =
            Timings::indexed(marks.iter()).into_iter().map(|(k, l)| (k, l.name.as_str())).collect();
        assert_eq!(indexed, [(0, "a"), (0, "b"), (1, "a"), (0, "c"), (1, "b"), (2, "a")]);
        let pairs = [(7.0, 10.0), (3.0, 5.0), (7.0, 30.0), (3.0, 5.0), (9.0, 1.0), (7.0, 30.0)];
        let all = pairs
            .iter()
            .enumerate()
            .map(|(k, &(id, dur))| at(Kind::Interaction, "EventTiming", k as f64, dur, Some(id)));
        let t = Timings::new(all.collect(), Vec::new(), 0);
        let kept: Vec<(f64, f64)> = t.interactions().iter().map(|l| (l.interaction_id.unwrap(), l.ts)).collect();
        // Id 7's longest is its second (ts 2; the third ties and comes later); id 3's first.
        assert_eq!(kept, [(7.0, 2.0), (3.0, 1.0), (9.0, 4.0)]);
    }
}
