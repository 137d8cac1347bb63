//! RendererHandler: `B`/`E` pairing on one stack shared by all threads, the frames and
//! processes the process filter reads (with MetaHandler's and AuctionWorkletsHandler's parts).

use super::prepare::TraceIdFound;
use super::{parse_args, TraceBuilder};
use crate::error::{Diagnostics, Error, WarningKind};
use crate::input::leaf::Leaf;
use crate::input::scan::RawEvent;
use crate::input::shapes;
use crate::input::shapes::{MapKey, MaybeObj};
use crate::input::sink::EventCtx;
use crate::js::Scalar;
use crate::model::{flags_for_name, Entry, INSTANT};
use crate::strings::StrId;

/// An open `B` event on the shared stack: where its entry is, and what an `E` must match.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Begin {
    /// The thread ([`u32::MAX`] for a begin that made no entry).
    pub(crate) thread: u32,
    pub(crate) entry: u32,
    pub(crate) ts: f64,
    pub(crate) name: Option<StrId>,
    pub(crate) cat: Scalar,
}

impl Begin {
    /// A begin that made no entry (bad pid, tid or ts): it still takes part in the pairing.
    const SKIPPED: Begin = Begin { thread: u32::MAX, entry: 0, ts: 0.0, name: None, cat: Scalar::Undefined };
}

/// One frame's renderer processes, in `Map` order: pid → the URLs seen, in order.
#[derive(Debug, Default)]
pub(crate) struct FrameProcesses {
    pub(crate) pids: Vec<(i64, Vec<Option<String>>)>,
}

impl TraceBuilder {
    /// TracingStartedInBrowser / FrameCommittedInBrowser / CommitLoad: frame → process URLs.
    pub(crate) fn frame_event(
        &mut self,
        name: &str,
        ev: &RawEvent<'_>,
        ctx: &EventCtx<'_>,
        diag: &mut Diagnostics,
    ) -> Result<(), Error> {
        match name {
            "TracingStartedInBrowser" => {
                let a: shapes::StartedArgs = match ev.args {
                    Some(a) => parse_args(a, ctx, "TracingStartedInBrowser args")?,
                    None => shapes::Args { data: MaybeObj::Missing },
                };
                let Some(data) = a.data.obj() else {
                    diag.push(
                        WarningKind::DevtoolsWouldFail,
                        Some(ctx.location()),
                        "TracingStartedInBrowser without args.data: DevTools refuses such a trace ('No frames found in trace data')",
                    );
                    return Ok(());
                };
                for f in data.frames.iter().flatten() {
                    self.add_frame(&f.frame, &f.process_id, &f.url);
                }
            }
            "FrameCommittedInBrowser" => {
                if let Some(a) = ev.args {
                    let a: shapes::FrameArgs = parse_args(a, ctx, "FrameCommittedInBrowser args")?;
                    if let Some(f) = a.data.obj() {
                        self.add_frame(&f.frame, &f.process_id, &f.url);
                    }
                }
            }
            _ => {
                // CommitLoad: the frame's process is the event's own.
                if let Some(a) = ev.args {
                    let a: shapes::FrameArgs = parse_args(a, ctx, "CommitLoad args")?;
                    if let Some(f) = a.data.obj() {
                        self.add_frame(&f.frame, &ev.pid, &f.url);
                    }
                }
            }
        }
        Ok(())
    }

    pub(crate) fn add_frame(&mut self, frame: &Leaf<'_>, pid: &Leaf<'_>, url: &Leaf<'_>) {
        self.serial += 1;
        let key = MapKey::of(frame, self.serial);
        let n = self.frames.len();
        let fi = *self.frame_index.entry(key.clone()).or_insert(n);
        if fi == n {
            self.frames.push((key, FrameProcesses::default()));
        }
        // Only numeric pids can match a thread's pid (a string "5" is another Map key).
        let Some(pid) = pid.int() else { return };
        let url = url.str().map(str::to_owned);
        let procs = &mut self.frames[fi].1.pids;
        match procs.iter_mut().find(|(p, _)| *p == pid) {
            Some((_, urls)) => urls.push(url),
            None => procs.push((pid, vec![url])),
        }
    }

    /// RendererHandler's `handleEvent` for one event: its thread, its time, its entry, `B`/`E`
    /// pairing and the process filter's facts. (Longer than most: it is the handler's one
    /// function, in its order, each step reading what the one before decided.)
    pub(crate) fn renderer_event(
        &mut self,
        name: &str,
        ph: u8,
        ev: &RawEvent<'_>,
        trace: Option<TraceIdFound<'_>>,
        ctx: &EventCtx<'_>,
        diag: &mut Diagnostics,
    ) -> Result<(), Error> {
        let (Some(pid), Some(tid)) = (ev.pid.int(), ev.tid.int()) else {
            diag.push_with(
                WarningKind::BadThreadId,
                || Some(ctx.location()),
                || format!("'{name}' ({}) has no integral pid/tid; skipped", ph as char),
            );
            if ph == b'B' {
                self.begins.push(Begin::SKIPPED);
            }
            return Ok(());
        };
        // ±Infinity (`1e400`) is a number to DevTools, which sorts such an event last.
        let ts = ev.ts.num().filter(|t| !t.is_nan());
        if ph == b'E' {
            self.thread(pid, tid);
            let Some(Begin { thread: th, entry, ts: begin_ts, name: bname, cat: bcat }) = self.begins.pop() else {
                return Ok(()); // unbalanced ends are legitimate (the begin was before tracing)
            };
            let cat = ev.cat.scalar(&mut self.strings).unwrap_or(Scalar::Undefined);
            let same = bname.is_some() && bname == self.strings.lookup(name) && cat == bcat;
            if !same {
                diag.push_with(
                    WarningKind::UnpairedEnd,
                    || Some(ctx.location()),
                    || {
                        format!(
                            "'E' event '{name}' closes a 'B' event with another name or category; the begin keeps duration 0 as in DevTools"
                        )
                    },
                );
                return Ok(());
            }
            let Some(ts) = ts else {
                diag.push(
                    WarningKind::BadTimestamp,
                    Some(ctx.location()),
                    "'E' event without a numeric ts; its begin keeps duration 0",
                );
                return Ok(());
            };
            if th != u32::MAX {
                self.threads[th as usize].entries.set_dur(entry, ts - begin_ts);
                if self.timings.any_open() {
                    self.timings.closed((th, entry), ts - begin_ts);
                }
            }
            return Ok(());
        }
        let Some(ts) = ts else {
            diag.push_with(
                WarningKind::BadTimestamp,
                || Some(ctx.location()),
                || format!("'{name}' ({}) has no numeric ts; skipped", ph as char),
            );
            if ph == b'B' {
                self.begins.push(Begin::SKIPPED);
            }
            return Ok(());
        };
        let dur = match (ph, &ev.dur) {
            (b'B', _) => 0.0,
            (_, Leaf::Missing | Leaf::Null) => 0.0,
            (_, Leaf::Num(d)) if !d.is_nan() => *d,
            // DevTools adds a text dur to ts as text ("10900" + "7"), and compares and divides
            // the result as the number it reads as: the event lasts to that time.
            (_, Leaf::Str(d)) if !d.is_empty() => {
                let end = crate::js::string_to_number(&format!("{}{d}", crate::js::number_to_string(ts)));
                if !end.is_finite() {
                    diag.push_with(
                        WarningKind::BadTimestamp,
                        || Some(ctx.location()),
                        || format!("'{name}' has a dur that is the text {d:?}, which DevTools adds to ts as text; it does not end at a number, so it is skipped"),
                    );
                    return Ok(());
                }
                diag.push_with(
                    WarningKind::BadTimestamp,
                    || Some(ctx.location()),
                    || format!("'{name}' has a dur that is the text {d:?}; DevTools adds it to ts as text, so the event lasts until {}, as there", crate::js::number_to_string(end)),
                );
                end - ts
            }
            (_, d) => {
                diag.push_with(
                    WarningKind::BadTimestamp,
                    || Some(ctx.location()),
                    || format!("'{name}' has a dur that is {}, not a number; skipped", d.type_name()),
                );
                return Ok(());
            }
        };
        if ev.has_call_frame {
            diag.push_with(
                WarningKind::DevtoolsWouldFail,
                || Some(ctx.location()),
                || format!("'{name}' has a top-level callFrame key; DevTools would mistake it for a ProfileCall; jscalls treats it as a trace event"),
            );
        }
        let th = self.thread(pid, tid);
        self.threads[th as usize].n_entries += 1;
        let trace = self.trace_id(ev, trace, ctx, diag)?;
        let mut flags = flags_for_name(name);
        if ph == b'I' {
            if trace == 0 && dur == 0.0 {
                return Ok(()); // see `INSTANT`: plays no part
            }
            flags |= INSTANT;
        }
        let idx = self.threads[th as usize].entries.push(Entry { ts, dur, trace, flags });
        self.name_entry(th, name, super::prepare::top_level_task(name, &ev.cat));
        if ph != b'I' && self.timings.wants(name) {
            self.timings.complete(name, ev, (th, idx), ts, dur, ctx.index);
        }
        if ph == b'B' {
            let name = Some(self.strings.intern(name));
            let cat = ev.cat.scalar(&mut self.strings).unwrap_or(Scalar::Undefined);
            self.begins.push(Begin { thread: th, entry: idx, ts, name, cat });
        }
        Ok(())
    }
}
