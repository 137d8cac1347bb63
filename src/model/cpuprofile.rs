//! A bare `.cpuprofile`: its top-level members parsed, its nodes (either node format), samples
//! and deltas made a raw profile, and the one thread DevTools makes of it.

use super::column::{Deltas, Ids};
use super::profile::{Frames, ProfileModel, RawNode, RawProfile};
use super::trace::{node_from_json, FrameCache};
use super::{report_model, ThreadWork};
use crate::error::{Diagnostics, Error, Location, WarningKind};
use crate::input::leaf::{IdArray, Leaf, NumArray};
use crate::input::reader::serde_message;
use crate::input::shapes::{self, CpuProfileJson, NodeJson};
use crate::strings::Strings;
use crate::{Config, CpuProfileMode};

/// The thread of a `.cpuprofile` whose top-level members are `fields` (pid 1, tid 1, profile
/// `0x1`, as DevTools wraps a loaded profile); none when the Performance panel would show
/// nothing.
pub fn thread_work(
    mut fields: Vec<(String, Vec<u8>)>,
    nodes: Option<Result<ParsedNodes, Error>>,
    location: Location,
    strings: &mut Strings,
    cfg: &Config,
    diag: &mut Diagnostics,
    bounds: &mut (f64, f64),
) -> Result<Vec<ThreadWork>, Error> {
    for (_, v) in &mut fields {
        // Rare: serde refuses lone surrogates, so they are given their stand-ins first.
        if let Some(fixed) = crate::input::json::lone_surrogates_replaced(v) {
            *v = fixed;
        }
    }
    let raw = read_fields(&fields, nodes, location, strings)?;
    // The members' bytes (as large as the input) go before the model is built.
    drop(fields);
    *bounds = profile_bounds(raw.start_time, raw.end_time, cfg.cpuprofile_mode);
    // The integrator sums the deltas instead; the Performance panel ends the last calls at NaN.
    if raw.end_time.is_nan() && cfg.cpuprofile_mode == CpuProfileMode::PerformancePanel {
        let m = "the profile has no endTime: the calls open at its end get no duration (null), as in DevTools";
        diag.push(WarningKind::NoEndTime, Some(location), m);
    }
    if raw.nodes.is_empty() && cfg.cpuprofile_mode == CpuProfileMode::PerformancePanel {
        diag.push(WarningKind::EmptyProfile, Some(location), "the profile has no nodes; DevTools shows nothing");
        return Ok(Vec::new());
    }
    let model = ProfileModel::new(raw, strings, cfg.limits, "profile", Some(location))?;
    report_model(&model, "profile", location, diag);
    Ok(vec![ThreadWork {
        pid: 1,
        tid: 1,
        profile_id: "\"0x1\"".to_owned(),
        thread_name: None,
        profile_name: None,
        model,
        entries: Vec::new(),
        names: Vec::new(),
        trace_values: Vec::new(),
        skipped: None,
    }])
}

/// The trace bounds DevTools gives a loaded profile (µs): those of the `CpuProfile` event of
/// its fake trace (`startTime`, lasting `endTime − startTime`), which MetaHandler skips when its
/// ts is 0; the oracle's integrator mode takes them as they are.
fn profile_bounds(start: f64, end: f64, mode: CpuProfileMode) -> (f64, f64) {
    if mode == CpuProfileMode::PerformancePanel && start == 0.0 {
        return (f64::INFINITY, f64::NEG_INFINITY);
    }
    (start, start + (end - start))
}

/// Parses the kept top-level fields of a `.cpuprofile` into a raw profile. The nodes are made
/// raw nodes one at a time as they are parsed, so that the parsed form of only one node is held
/// at once (a profile of a million nodes would otherwise hold them all twice).
fn read_fields(
    fields: &[(String, Vec<u8>)],
    mut parsed: Option<Result<ParsedNodes, Error>>,
    location: Location,
    strings: &mut Strings,
) -> Result<RawProfile, Error> {
    let mut json = CpuProfileJson::default();
    let mut nodes = ParsedNodes { nodes: Nodes::new(), present: false };
    for (key, raw) in fields {
        let fail =
            |e: serde_json::Error| Error::input(Some(location), format!("the \"{key}\" value: {}", serde_message(&e)));
        match key.as_str() {
            // Empty: read where it lay ([`parse_nodes`]).
            "nodes" if raw.is_empty() => {
                nodes = parsed
                    .take()
                    .unwrap_or_else(|| Err(Error::input(Some(location), "the \"nodes\" value was not kept")))?
            }
            "nodes" => nodes = parse_nodes(raw, location, strings)?,
            "samples" => json.samples = serde_json::from_slice::<Option<IdArray>>(raw).map_err(fail)?,
            "timeDeltas" => json.time_deltas = serde_json::from_slice::<Option<NumArray>>(raw).map_err(fail)?,
            "startTime" => json.start_time = serde_json::from_slice::<Leaf>(raw).map_err(fail)?,
            "endTime" => json.end_time = serde_json::from_slice::<Leaf>(raw).map_err(fail)?,
            "head" => json.head = Some(serde::de::IgnoredAny),
            _ => {}
        }
    }
    if json.head.is_some() && !nodes.present {
        return Err(Error::input(Some(location), LEGACY));
    }
    finish_raw(&json, nodes.nodes.list, nodes.nodes.frames, Some(location))
}

/// A `.cpuprofile`'s `nodes` value, read.
#[derive(Debug)]
pub struct ParsedNodes {
    nodes: Nodes,
    /// Whether the value was an array (not null).
    present: bool,
}

/// Reads a `.cpuprofile`'s `nodes` value (an array or null) one node at a time, so that the
/// parsed form of only one node is held at once.
pub fn parse_nodes(raw: &[u8], location: Location, strings: &mut Strings) -> Result<ParsedNodes, Error> {
    // Rare: serde refuses lone surrogates, so they are given their stand-ins first.
    let fixed = crate::input::json::lone_surrogates_replaced(raw);
    let raw = fixed.as_deref().unwrap_or(raw);
    let mut nodes = Nodes::new();
    let mut de = serde_json::Deserializer::from_slice(raw);
    let seed = NodesSeed { nodes: &mut nodes, strings };
    match serde::de::DeserializeSeed::deserialize(seed, &mut de).and_then(|present| {
        de.end()?;
        Ok(present)
    }) {
        Ok(present) => Ok(ParsedNodes { nodes, present }),
        Err(e) => {
            let message = nodes.failed.take().unwrap_or_else(|| format!("the \"nodes\" value: {}", serde_message(&e)));
            Err(Error::input(Some(location), message))
        }
    }
}

const LEGACY: &str = "the legacy .cpuprofile format (a 'head' tree instead of 'nodes') is not supported";

/// The raw nodes read so far, their frames, and the first node that could not be read.
#[derive(Debug)]
struct Nodes {
    list: Vec<RawNode>,
    frames: Frames,
    cache: FrameCache,
    failed: Option<String>,
}

impl Nodes {
    fn new() -> Nodes {
        Nodes { list: Vec::new(), frames: Frames::default(), cache: FrameCache::default(), failed: None }
    }

    /// Adds the next node; on failure, says which node and why.
    fn add(&mut self, n: &NodeJson<'_>, strings: &mut Strings) -> Result<(), String> {
        let raw = node_from_json(n, false, strings, &mut self.frames, &mut self.cache)
            .map_err(|m| format!("nodes[{}]: {m}", self.list.len()))?;
        self.list.push(raw);
        Ok(())
    }
}

/// Reads a `nodes` value (an array, or null) into [`Nodes`]; its value is whether it was an array.
struct NodesSeed<'n, 's> {
    nodes: &'n mut Nodes,
    strings: &'s mut Strings,
}

impl<'de> serde::de::DeserializeSeed<'de> for NodesSeed<'_, '_> {
    type Value = bool;
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de> serde::de::Visitor<'de> for NodesSeed<'_, '_> {
    type Value = bool;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a sequence")
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<bool, E> {
        Ok(false)
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<bool, D::Error> {
        d.deserialize_seq(self)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
        while let Some(n) = seq.next_element::<NodeJson<'de>>()? {
            if let Err(m) = self.nodes.add(&n, self.strings) {
                self.nodes.failed = Some(m);
                return Err(serde::de::Error::custom("a node that cannot be read"));
            }
        }
        Ok(true)
    }
}

/// A [`RawProfile`] from a CDP `Profiler.Profile` object.
pub fn raw_from_cpuprofile(
    json: &shapes::CpuProfileJson<'_>,
    strings: &mut Strings,
    location: Option<Location>,
) -> Result<RawProfile, Error> {
    let fail = |m: String| Error::input(location, m);
    if json.head.is_some() && json.nodes.is_none() {
        return Err(fail(LEGACY.into()));
    }
    let mut nodes = Nodes::new();
    for n in json.nodes.iter().flatten() {
        nodes.add(n, strings).map_err(fail)?;
    }
    finish_raw(json, nodes.list, nodes.frames, location)
}

/// The rest of a [`RawProfile`]: its times, samples and deltas, checked.
fn finish_raw(
    json: &shapes::CpuProfileJson<'_>,
    nodes: Vec<RawNode>,
    frames: Frames,
    location: Option<Location>,
) -> Result<RawProfile, Error> {
    let fail = |m: String| Error::input(location, m);
    let start_time = json
        .start_time
        .num()
        .ok_or_else(|| fail(format!("expected startTime to be a number, found {}", json.start_time.type_name())))?;
    let end_time = match &json.end_time {
        Leaf::Num(n) => *n,
        // Absent, it is `undefined` to DevTools: NaN in its arithmetic, read only at the end.
        Leaf::Missing => f64::NAN,
        other => return Err(fail(format!("expected endTime to be a number, found {}", other.type_name()))),
    };
    if let Some(d) = &json.time_deltas {
        if d.n_non_numbers > 0 {
            let k = d.values.iter().position(|v| v.is_nan()).unwrap_or(0);
            return Err(fail(format!("timeDeltas[{k}] is not a number")));
        }
    }
    Ok(RawProfile {
        start_time,
        end_time,
        nodes,
        frames,
        samples: json.samples.as_ref().map(|s| Ids::from_slice(&s.0)),
        time_deltas: json.time_deltas.as_ref().map(|d| Deltas::from_slice(&d.values)),
        trace_ids: None,
    })
}
