//! SamplesHandler: `Profile` and `ProfileChunk` events gathered into one profile per
//! `(pid, id)`, and the profile DevTools keeps for each thread (by source priority).

use super::prepare::{source_of, ChunkIn, Source};
use super::{args_error, parse_args, TraceBuilder};
use crate::error::{Diagnostics, Error, Location, WarningKind};
use crate::input::leaf::Leaf;
use crate::input::scan::RawEvent;
use crate::input::shapes;
use crate::input::shapes::MapKey;
use crate::input::sink::EventCtx;
use crate::model::column::{Ids, Mark, Positions, SmallDeltas};
use crate::model::nodes::raw_from_cpuprofile;
use crate::model::nodes::FrameCache;
use crate::model::profile::RawProfile;
use rustc_hash::FxHashMap;

#[derive(Debug)]
pub(crate) struct PreProfile {
    pub(crate) pid: i64,
    pub(crate) id: MapKey,
    pub(crate) raw: RawProfile,
    pub(crate) frame_cache: FrameCache,
    pub(crate) thread: Option<i64>,
    pub(crate) source: Option<Source>,
    /// Where the profile was first seen.
    pub(crate) location: Location,
    /// Running `startTime + Σ deltas` for the endTime quirk: (startTime used, sum, deltas summed).
    pub(crate) end_fold: (f64, f64, Mark),
}

impl TraceBuilder {
    pub(crate) fn profile(&mut self, pid: i64, id: &Leaf<'_>, loc: impl FnOnce() -> Location) -> usize {
        self.serial += 1;
        let key = MapKey::of(id, self.serial);
        if let Some(&i) = self.profile_index.get(&(pid, key.clone())) {
            return i;
        }
        let i = self.profiles.len();
        self.profiles.push(PreProfile {
            pid,
            id: key.clone(),
            raw: RawProfile {
                samples: Some(Ids::default()),
                time_deltas: Some(SmallDeltas::default()),
                // The SamplesHandler starts every chunked profile with `lines: []`.
                lines: self.keep_lines.then(Positions::default),
                columns: self.keep_lines.then(Positions::default),
                keep_lines: self.keep_lines,
                ..RawProfile::default()
            },
            frame_cache: FrameCache::default(),
            thread: None,
            source: None,
            location: loc(),
            end_fold: (f64::NAN, 0.0, Mark::default()),
        });
        self.profile_index.insert((pid, key), i);
        i
    }

    /// `Profile`, `ProfileChunk`, `CpuProfile`: the SamplesHandler.
    pub(crate) fn samples_event(
        &mut self,
        name: &str,
        ev: &RawEvent<'_>,
        chunk: Option<Result<ChunkIn, serde_json::Error>>,
        ctx: &EventCtx<'_>,
        diag: &mut Diagnostics,
    ) -> Result<(), Error> {
        let Some(pid) = ev.pid.int() else {
            diag.push(
                WarningKind::BadThreadId,
                Some(ctx.location()),
                format!("{name} event has no integral pid ({}); skipped", ev.pid.type_name()),
            );
            return Ok(());
        };
        match name {
            "Profile" => {
                let (Some(ts), Some(tid)) = (ev.ts.num().filter(|t| t.is_finite()), ev.tid.int()) else {
                    diag.push(
                        WarningKind::BadTimestamp,
                        Some(ctx.location()),
                        "Profile event without a numeric ts and an integral tid; skipped",
                    );
                    return Ok(());
                };
                let source = match ev.args {
                    Some(a) => {
                        let args: shapes::ProfileArgs = parse_args(a, ctx, "Profile args")?;
                        args.data.obj().and_then(|d| source_of(&d.source))
                    }
                    None => None,
                };
                let i = self.profile(pid, &ev.id, || ctx.location());
                let p = &mut self.profiles[i];
                p.raw.start_time = ts;
                p.thread = Some(tid);
                if source.is_some() {
                    p.source = source;
                }
            }
            "ProfileChunk" => self.chunk(pid, ev, chunk, ctx, diag)?,
            _ => {
                // CpuProfile with ph X: the whole profile in one event (a wrapped .cpuprofile).
                let Some(tid) = ev.tid.int() else {
                    diag.push(
                        WarningKind::BadThreadId,
                        Some(ctx.location()),
                        "CpuProfile event without an integral tid; skipped",
                    );
                    return Ok(());
                };
                let Some(args) = ev.args else {
                    return Err(Error::input(Some(ctx.location()), "CpuProfile event without args.data.cpuProfile"));
                };
                let a: shapes::CpuProfileArgs = parse_args(args, ctx, "CpuProfile args")?;
                let Some(json) = a.data.obj().and_then(|d| d.cpu_profile.obj()) else {
                    return Err(Error::input(Some(ctx.location()), "CpuProfile event without args.data.cpuProfile"));
                };
                let mut raw = raw_from_cpuprofile(json, &mut self.strings, Some(ctx.location()))?;
                raw.keep(self.keep_lines);
                let i = self.profile(pid, &ev.id, || ctx.location());
                self.profiles[i].raw = raw;
                self.profiles[i].thread = Some(tid);
            }
        }
        Ok(())
    }

    pub(crate) fn chunk(
        &mut self,
        pid: i64,
        ev: &RawEvent<'_>,
        parsed: Option<Result<ChunkIn, serde_json::Error>>,
        ctx: &EventCtx<'_>,
        diag: &mut Diagnostics,
    ) -> Result<(), Error> {
        let Some(args) = ev.args else {
            diag.push(
                WarningKind::DevtoolsWouldFail,
                Some(ctx.location()),
                "ProfileChunk without args: DevTools fails to load such a trace; skipped",
            );
            return Ok(());
        };
        let mut a = match parsed {
            Some(p) => p.map_err(|e| args_error(args, ctx, "ProfileChunk args", &e))?,
            None => ChunkIn::new(parse_args::<shapes::ChunkArgs>(args, ctx, "ProfileChunk args")?),
        };
        if self.keep_lines {
            // The scan kept the bytes of `lines` and `columns`, unread: read only when wanted.
            for (what, bytes, values) in
                [("lines", &mut a.lines_bytes, &mut a.lines), ("columns", &mut a.columns_bytes, &mut a.columns)]
            {
                if let (Some(bytes), None) = (bytes.take(), &values) {
                    *values = match crate::input::chunk::numbers_of(&bytes) {
                        Some(v) => v,
                        None => serde_json::from_slice(&bytes)
                            .map_err(|e| Error::input(Some(ctx.location()), format!("ProfileChunk: {what}: {e}")))?,
                    };
                }
            }
        }
        let mut new_nodes = Vec::new();
        // The profile is made before its nodes are read, as their frames go in its table (an
        // error here ends the run, so a profile made for nothing does not matter).
        let i = self.profile(pid, &ev.id, || ctx.location());
        if let Some(nodes) = a.nodes {
            new_nodes.reserve(nodes.len());
            let p = &mut self.profiles[i];
            for (k, n) in nodes.into_iter().enumerate() {
                let node = n
                    .into_raw(&a.frame_keys, &mut self.strings, &mut p.raw.frames, &mut p.frame_cache)
                    .map_err(|m| Error::input(Some(ctx.location()), format!("ProfileChunk: node {k}: {m}")))?;
                new_nodes.push(node);
            }
        }
        let deltas = a.time_deltas.as_ref();
        if let Some(d) = deltas {
            if d.n_non_numbers > 0 {
                let k = d.values.iter().position(|v| v.is_nan()).unwrap_or(0);
                return Err(Error::input(
                    Some(ctx.location()),
                    format!("ProfileChunk: timeDeltas[{k}] is not a number"),
                ));
            }
        }
        let p = &mut self.profiles[i];
        p.raw.nodes.extend(new_nodes);
        if let (Some(s), Some(c)) = (p.raw.samples.as_mut(), &a.samples) {
            s.extend(&c.0);
        }
        if let (Some(t), Some(d)) = (p.raw.time_deltas.as_mut(), deltas) {
            t.extend(&d.values);
        }
        // A chunk without lines (or columns) adds a 0 per sample it has.
        let n_samples = a.samples.as_ref().map_or(0, |s| s.0.len());
        for (to, from) in [(p.raw.lines.as_mut(), &a.lines), (p.raw.columns.as_mut(), &a.columns)] {
            if let Some(to) = to {
                match from {
                    Some(v) => to.extend(&v.values),
                    None => to.extend(&vec![0.0; n_samples]),
                }
            }
        }
        if let Some(ids) = a.trace_ids {
            let mut keyed = Vec::with_capacity(ids.len());
            for (k, v) in ids {
                if let Some(s) = v.scalar(&mut self.strings) {
                    keyed.push((self.key_code(k), s));
                }
            }
            self.profiles[i].raw.trace_ids.get_or_insert_with(FxHashMap::default).extend(keyed);
        }
        let p = &mut self.profiles[i];
        let (ns, nd) = (p.raw.samples.as_ref().map(|s| s.len()), p.raw.time_deltas.as_ref().map(|d| d.len()));
        if let (Some(ns), Some(nd)) = (ns, nd) {
            if ns != nd {
                diag.push_with(
                    WarningKind::SamplesDeltasMismatch,
                    || Some(ctx.location()),
                    || {
                        format!(
                            "ProfileChunk: the profile now has {ns} samples but {nd} timeDeltas; DevTools logs 'Failed to parse CPU profile' and carries on"
                        )
                    },
                );
                return Ok(());
            }
        }
        let end_falsy = p.raw.end_time == 0.0 || p.raw.end_time.is_nan();
        if end_falsy {
            if let Some(d) = &p.raw.time_deltas {
                // timeDeltas.reduce((x, y) => x + y, startTime), kept incrementally.
                let (start, mut sum, mut done) = p.end_fold;
                if start.to_bits() != p.raw.start_time.to_bits() {
                    sum = p.raw.start_time;
                    done = Mark::default();
                }
                for x in d.iter_since(done) {
                    sum += x;
                }
                p.end_fold = (p.raw.start_time, sum, d.end());
                p.raw.end_time = sum;
            }
        }
        if let Some(s) = a.source {
            p.source = Some(s);
        }
        Ok(())
    }
}
