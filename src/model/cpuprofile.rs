//! A bare `.cpuprofile` as a raw profile: its nodes (either node format), samples and deltas.

use super::packed::{Deltas, Ids};
use super::profile::{Frames, RawProfile};
use super::trace::{node_from_json, FrameCache};
use crate::error::{Error, Location};
use crate::input::loose::Loose;
use crate::input::shapes;
use crate::strings::Strings;

/// A [`RawProfile`] from a CDP `Profiler.Profile` object.
pub fn raw_from_cpuprofile(
    json: &shapes::CpuProfileJson<'_>,
    strings: &mut Strings,
    location: Option<Location>,
) -> Result<RawProfile, Error> {
    let fail = |m: String| Error::input(location, m);
    if json.head.is_some() && json.nodes.is_none() {
        return Err(fail("the legacy .cpuprofile format (a 'head' tree instead of 'nodes') is not supported".into()));
    }
    let mut nodes = Vec::new();
    let (mut frames, mut cache) = (Frames::default(), FrameCache::default());
    for (k, n) in json.nodes.iter().flatten().enumerate() {
        nodes.push(
            node_from_json(n, false, strings, &mut frames, &mut cache).map_err(|m| fail(format!("nodes[{k}]: {m}")))?,
        );
    }
    let start_time = json
        .start_time
        .num()
        .ok_or_else(|| fail(format!("expected startTime to be a number, found {}", json.start_time.type_name())))?;
    let end_time = match &json.end_time {
        Loose::Num(n) => *n,
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
