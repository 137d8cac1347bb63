//! `treify` (DevTools' `TreeHelpers.treify`): the flame-chart tree of a thread's events and calls, which gives each
//! call its depth (trace events count as ancestors) and its self time.

use super::per_call::{Depths, SelfTimes};
use super::ProfileCall;
use crate::model::Entry;

/// Fills `self_time` and `depth` of `calls` by walking the merge of the sorted `entries` with
/// the calls taken in `order` (push order for a trace, as the RendererHandler merges them;
/// sorted for a bare profile, as the oracle's integrator mode sorts them). Calls that
/// overflow their parent get no tree node and keep `None`.
pub(crate) fn treify(
    entries: &[Entry],
    calls: &[ProfileCall],
    order: &super::TreeOrder,
    self_time: &mut SelfTimes,
    depth: &mut Depths,
) {
    // Stack of (is_call, index, ts, end, self time).
    struct Open {
        call: Option<usize>,
        end: f64,
        self_time: f64,
    }
    let mut stack: Vec<Open> = Vec::new();
    let close = |o: Open, self_time: &mut SelfTimes| {
        if let Some(c) = o.call {
            self_time.set(c, o.self_time);
        }
    };
    let (mut ei, mut ci) = (0usize, 0usize);
    loop {
        // mergeEventsInOrder(entries, calls): the entry first unless the call sorts before it.
        let next = order.get(ci);
        let next_call = next.map(|k| &calls[k]);
        let take_entry = match (entries.get(ei), next_call) {
            (Some(e), Some(c)) => e.ts < c.ts || (e.ts == c.ts && e.end() > c.ts + c.dur),
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (None, None) => break,
        };
        let (ts, dur, call) = if take_entry {
            let e = &entries[ei];
            (e.ts, e.dur, None)
        } else {
            let k = next.expect("a call");
            let c = &calls[k];
            (c.ts, c.dur, Some(k))
        };
        let end = ts + dur;
        loop {
            let Some(p) = stack.last_mut() else {
                if let Some(c) = call {
                    depth.set(c, 0);
                }
                stack.push(Open { call, end, self_time: dur });
                break;
            };
            if ts >= p.end {
                let o = stack.pop().expect("non-empty");
                close(o, self_time);
                continue;
            }
            if end > p.end {
                break; // overflows its parent: no tree node
            }
            p.self_time -= dur;
            if let Some(c) = call {
                depth.set(c, stack.len() as i32);
            }
            stack.push(Open { call, end, self_time: dur });
            break;
        }
        if take_entry {
            ei += 1;
        } else {
            ci += 1;
        }
    }
    while let Some(o) = stack.pop() {
        close(o, self_time);
    }
}
