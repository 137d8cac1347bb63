//! A bare `.cpuprofile`: its top-level members parsed, its nodes (either node format), samples
//! and deltas made a raw profile, and the one thread DevTools makes of it.

use super::nodes::{parse_nodes, ParsedNodes};
use super::profile::{ProfileModel, RawProfile};
use super::{report_model, ThreadWork};
use crate::error::{Diagnostics, Error, Location, WarningKind};
use crate::input::leaf::{IdArray, Leaf, NumArray};
use crate::input::reader::serde_message;
use crate::input::shapes::CpuProfileJson;
use crate::model::{CpuProfileMode, ReadOptions};
use crate::strings::Strings;

/// The thread of a `.cpuprofile` whose top-level members are `fields` (pid 1, tid 1, profile
/// `0x1`, as DevTools wraps a loaded profile); none when the Performance panel would show
/// nothing.
pub(crate) fn thread_work(
    mut fields: Vec<(String, Vec<u8>)>,
    nodes: Option<Result<ParsedNodes, Error>>,
    location: Location,
    strings: &mut Strings,
    cfg: &ReadOptions<'_>,
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
    profile_thread(raw, "profile", location, strings, cfg, diag, bounds)
}

/// The thread of a profile's raw form, as [`thread_work`] makes it of a `.cpuprofile`'s;
/// `what` names the profile in messages.
pub(crate) fn profile_thread(
    mut raw: RawProfile,
    what: &str,
    location: Location,
    strings: &mut Strings,
    cfg: &ReadOptions<'_>,
    diag: &mut Diagnostics,
    bounds: &mut (f64, f64),
) -> Result<Vec<ThreadWork>, Error> {
    raw.keep(cfg.keep_lines);
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
    let model = ProfileModel::new(raw, strings, cfg.limits, what, Some(location))?;
    report_model(&model, what, location, diag);
    Ok(vec![ThreadWork {
        pid: 1,
        tid: 1,
        profile_id: "\"0x1\"".to_owned(),
        profile_order: 0,
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
    let mut nodes = ParsedNodes::absent();
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
            "lines" => json.lines = serde_json::from_slice::<Option<NumArray>>(raw).map_err(fail)?,
            "columns" => json.columns = serde_json::from_slice::<Option<NumArray>>(raw).map_err(fail)?,
            "startTime" => json.start_time = serde_json::from_slice::<Leaf>(raw).map_err(fail)?,
            "endTime" => json.end_time = serde_json::from_slice::<Leaf>(raw).map_err(fail)?,
            "head" => json.head = Some(serde::de::IgnoredAny),
            _ => {}
        }
    }
    nodes.into_raw(&json, location)
}
