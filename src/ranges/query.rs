//! A range as a user asks for it, and how it is found in a recording.

use super::{ms, Kind, Landmark, Selection, Timings};

/// Which interaction.
#[derive(Debug, Clone, PartialEq)]
pub enum Pick {
    /// The one with the longest event (as INP picks it).
    Slowest,
    /// The K-th (0-based) in time order.
    Index(usize),
    /// The one with this interaction id.
    Id(f64),
}

/// A range, as asked for.
#[derive(Debug, Clone, PartialEq)]
pub enum Query {
    /// START..END in ms on the trace's clock; `+MS` from the recording's start.
    Window {
        /// As written.
        text: String,
        /// (relative to the start, ms).
        start: (bool, f64),
        /// (relative to the start, ms).
        end: (bool, f64),
    },
    /// The K-th DevTools candidate named NAME: a complete event or an async pair.
    Event {
        /// Its name.
        name: String,
        /// K.
        index: usize,
    },
    /// The K-th measure (or `console.time` span) named NAME.
    Measure {
        /// Its name.
        name: String,
        /// K.
        index: usize,
    },
    /// From one mark to another (each the K-th of its name).
    Between {
        /// The first mark and its index.
        from: (String, usize),
        /// The second mark and its index.
        to: (String, usize),
    },
    /// One interaction.
    Interaction(Pick),
}

/// `NAME` or `NAME#K`.
fn name_index(s: &str) -> Result<(String, usize), String> {
    if let Some((n, k)) = s.rsplit_once('#') {
        if !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()) {
            let k = k.parse().map_err(|_| format!("'{s}': the index after # is too large"))?;
            return non_empty(n).map(|n| (n, k));
        }
    }
    non_empty(s).map(|n| (n, 0))
}

fn non_empty(s: &str) -> Result<String, String> {
    if s.is_empty() {
        Err("a name is needed".to_owned())
    } else {
        Ok(s.to_owned())
    }
}

impl Query {
    /// `--range START..END`.
    pub fn window(s: &str) -> Result<Query, String> {
        let bad =
            || format!("'{s}': expected START..END in ms on the trace's clock, or +A..+B from the recording's start");
        let (a, b) = s.split_once("..").ok_or_else(bad)?;
        let end = |t: &str| -> Result<(bool, f64), String> {
            let (rel, n) = match t.trim().strip_prefix('+') {
                Some(n) => (true, n),
                None => (false, t.trim()),
            };
            let v: f64 = n.parse().map_err(|_| bad())?;
            if !v.is_finite() {
                return Err(bad());
            }
            Ok((rel, v))
        };
        let (start, end) = (end(a)?, end(b)?);
        if start.0 == end.0 && end.1 <= start.1 {
            let why = if end.1 == start.1 { "it is empty" } else { "its end is before its start" };
            return Err(format!("'{s}': {why}"));
        }
        Ok(Query::Window { text: s.to_owned(), start, end })
    }

    /// `--event NAME[#K]`.
    pub fn event(s: &str) -> Result<Query, String> {
        name_index(s).map(|(name, index)| Query::Event { name, index })
    }

    /// `--measure NAME[#K]`.
    pub fn measure(s: &str) -> Result<Query, String> {
        name_index(s).map(|(name, index)| Query::Measure { name, index })
    }

    /// `--between MARK[#K]..MARK[#K]`.
    pub fn between(s: &str) -> Result<Query, String> {
        let (a, b) = s.split_once("..").ok_or_else(|| format!("'{s}': expected FROM..TO, two marks' names"))?;
        Ok(Query::Between { from: name_index(a)?, to: name_index(b)? })
    }

    /// `--interaction [slowest|K|id=N]`.
    pub fn interaction(s: &str) -> Result<Query, String> {
        let s = s.trim();
        let pick = if s.is_empty() || s == "slowest" {
            Pick::Slowest
        } else if let Some(id) = s.strip_prefix("id=") {
            Pick::Id(id.parse().map_err(|_| format!("'{s}': id=N takes an interaction id, a number"))?)
        } else {
            Pick::Index(s.parse().map_err(|_| format!("'{s}': expected slowest, an index K or id=N"))?)
        };
        Ok(Query::Interaction(pick))
    }

    /// The written form of a budget's `within`: `measure:NAME[#K]`, `interaction[:PICK]`,
    /// `event:NAME[#K]`, `marks:FROM..TO`, `range:START..END`.
    pub fn parse(s: &str) -> Result<Query, String> {
        let (kind, arg) = s.split_once(':').unwrap_or((s, ""));
        match kind {
            "measure" => Query::measure(arg),
            "interaction" => Query::interaction(arg),
            "event" => Query::event(arg),
            "marks" => Query::between(arg),
            "range" => Query::window(arg),
            _ => Err(format!(
                "'{s}': expected measure:NAME, interaction[:slowest|K|id=N], event:NAME#K, marks:FROM..TO or range:START..END"
            )),
        }
    }

    /// The name whose complete events must be kept while reading, to find this.
    pub fn event_name(&self) -> Option<&str> {
        match self {
            Query::Event { name, .. } | Query::Measure { name, .. } => Some(name),
            Query::Interaction(_) => Some("EventTiming"),
            _ => None,
        }
    }

    /// What was asked for, for messages: `measure checkout#1`.
    pub fn describe(&self) -> String {
        match self {
            Query::Window { text, .. } => format!("range {text}"),
            Query::Event { name, index } => format!("event {name}#{index}"),
            Query::Measure { name, index: 0 } => format!("measure {name}"),
            Query::Measure { name, index } => format!("measure {name}#{index}"),
            Query::Between { from, to } => format!("marks {}#{}..{}#{}", from.0, from.1, to.0, to.1),
            Query::Interaction(Pick::Slowest) => "the slowest interaction".to_owned(),
            Query::Interaction(Pick::Index(k)) => format!("interaction {k}"),
            Query::Interaction(Pick::Id(id)) => format!("interaction id={id}"),
        }
    }

    /// The option that asks for it: `--measure`.
    pub fn flag(&self) -> &'static str {
        self.option().0
    }

    /// As the command line asks for it: `--measure checkout#0`.
    pub fn as_option(&self) -> String {
        let (o, a) = self.option();
        format!("{o} {a}")
    }

    /// The option that asks for it, and its argument (for the DevTools document's header).
    fn option(&self) -> (&'static str, String) {
        match self {
            Query::Window { text, .. } => ("--range", text.clone()),
            Query::Event { name, index } => ("--event", format!("{name}#{index}")),
            Query::Measure { name, index } => ("--measure", format!("{name}#{index}")),
            Query::Between { from, to } => ("--between", format!("{}#{}..{}#{}", from.0, from.1, to.0, to.1)),
            Query::Interaction(p) => (
                "--interaction",
                match p {
                    Pick::Slowest => "slowest".to_owned(),
                    Pick::Index(k) => k.to_string(),
                    Pick::Id(id) => format!("id={id}"),
                },
            ),
        }
    }

    /// The window in a recording that spans `bounds` (µs) with these timings, or why there is
    /// none (naming what the recording has instead).
    pub fn resolve(&self, timings: &Timings, bounds: (f64, f64)) -> Result<Selection, String> {
        let (option, arg) = self.option();
        let select = |min_us: f64, max_us: f64, event: Option<String>| Selection {
            option: option.to_owned(),
            arg: arg.clone(),
            min_us,
            max_us,
            event,
        };
        // A window in ms, as a range dragged in the panel is: µs → ms → µs, as DevTools converts.
        let in_ms = |a: f64, b: f64| select((a / 1000.0) * 1000.0, (b / 1000.0) * 1000.0, None);
        // An event DevTools lets a user select keeps its own µs; others are windows in ms.
        let of_landmark = |l: &Landmark| match l.devtools {
            true => select(l.ts, l.end(), timings.describe(l)),
            false => in_ms(l.ts, l.end()),
        };
        match self {
            Query::Window { start, end, .. } => {
                let at = |(rel, v): (bool, f64)| if rel { bounds.0 / 1000.0 + v } else { v };
                let (start, end) = (at(*start), at(*end));
                let span = || format!("{}..{} ms", bounds.0 / 1000.0, bounds.1 / 1000.0);
                if end <= start {
                    return Err(format!("its end is not after its start (the recording spans {})", span()));
                }
                if end * 1000.0 < bounds.0 || start * 1000.0 > bounds.1 {
                    return Err(format!("it lies outside the recording, which spans {}", span()));
                }
                Ok(select(start * 1000.0, end * 1000.0, None))
            }
            Query::Event { name, index } => {
                let cands = timings.devtools_candidates(name).unwrap_or_default();
                match cands.get(*index) {
                    Some(l) => Ok(of_landmark(l)),
                    None if cands.is_empty() => Err(format!(
                        "no event named '{name}' with a duration (complete events of the tracks, measures, console.time, EventTiming interactions)"
                    )),
                    None => Err(past_last(&format!("event {name}"), *index, cands.len())),
                }
            }
            Query::Measure { name, index } => {
                let found: Vec<&Landmark> = timings.measures().filter(|l| l.name == *name).collect();
                match found.get(*index) {
                    Some(l) => Ok(of_landmark(l)),
                    None if found.is_empty() => Err(format!("no measure named '{name}'; {}", list_measures(timings))),
                    None => Err(past_last(&format!("measure {name}"), *index, found.len())),
                }
            }
            Query::Between { from, to } => {
                let mark = |(n, k): &(String, usize)| -> Result<f64, String> {
                    let found: Vec<&Landmark> = timings.of(Kind::Mark).filter(|l| l.name == *n).collect();
                    match found.get(*k) {
                        Some(l) => Ok(l.ts),
                        None if found.is_empty() => Err(format!("no mark named '{n}'; {}", list_marks(timings))),
                        None => Err(past_last(&format!("mark {n}"), *k, found.len())),
                    }
                };
                let (a, b) = (mark(from)?, mark(to)?);
                if b <= a {
                    return Err(format!(
                        "mark {}#{} ({}) is not after mark {}#{} ({})",
                        to.0,
                        to.1,
                        ms(b),
                        from.0,
                        from.1,
                        ms(a)
                    ));
                }
                Ok(in_ms(a, b))
            }
            Query::Interaction(pick) => {
                let all = timings.interactions();
                if all.is_empty() {
                    return Err(
                        "no interactions (EventTiming events with an interaction id: record with the devtools.timeline category and click or type)"
                            .to_owned(),
                    );
                }
                let l = match pick {
                    Pick::Slowest => all.iter().copied().fold(all[0], |a, b| if b.dur > a.dur { b } else { a }),
                    Pick::Index(k) => *all.get(*k).ok_or_else(|| past_last("interaction", *k, all.len()))?,
                    Pick::Id(id) => *all.iter().find(|l| l.interaction_id == Some(*id)).ok_or_else(|| {
                        let ids: Vec<String> =
                            all.iter().filter_map(|l| l.interaction_id).map(|i| i.to_string()).collect();
                        format!("no interaction with id {id}; the ids are {}", ids.join(", "))
                    })?,
                };
                Ok(of_landmark(l))
            }
        }
    }
}

fn past_last(what: &str, k: usize, n: usize) -> String {
    format!("{what}#{k}: there are {n} (#0 to #{})", n - 1)
}

/// Names and counts, for an error: `checkout (2), add-item (5)`.
fn counted<'a>(names: impl Iterator<Item = &'a str>) -> String {
    let mut seen: Vec<(&str, usize)> = Vec::new();
    for n in names {
        match seen.iter_mut().find(|s| s.0 == n) {
            Some(s) => s.1 += 1,
            None => seen.push((n, 1)),
        }
    }
    let shown: Vec<String> =
        seen.iter().take(12).map(|(n, k)| if *k > 1 { format!("{n} ({k})") } else { (*n).to_owned() }).collect();
    let more = if seen.len() > 12 { format!(" and {} more", seen.len() - 12) } else { String::new() };
    format!("{}{more}", shown.join(", "))
}

fn list_measures(t: &Timings) -> String {
    match t.measures().next() {
        None => "the recording has none (record with the blink.user_timing category)".to_owned(),
        Some(_) => format!("the measures are {}", counted(t.measures().map(|l| l.name.as_str()))),
    }
}

fn list_marks(t: &Timings) -> String {
    match t.of(Kind::Mark).next() {
        None => "the recording has none (record with the blink.user_timing category)".to_owned(),
        Some(_) => format!("the marks are {}", counted(t.of(Kind::Mark).map(|l| l.name.as_str()))),
    }
}
