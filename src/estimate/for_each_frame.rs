//! The Performance panel's mode for a loaded `.cpuprofile`: `CPUProfileDataModel.forEachFrame`, the algorithm the
//! Performance panel uses for a loaded `.cpuprofile`. It follows node identity between
//! consecutive samples, emits the meta frames as calls, and ends the last frames one mean
//! sample interval after the last sample.

use rustc_hash::FxHashMap;

use super::per_call::{Depths, SelfTimes};
use super::ProfileCall;
use crate::model::profile::{ProfileModel, NONE};

/// A JS array of numbers that may be read or written at any integer index, including negative
/// ones, with `undefined` arithmetic (NaN), as the reference's stack bookkeeping is.
#[derive(Default)]
struct JsArray {
    pos: Vec<Option<f64>>,
    neg: FxHashMap<i64, f64>,
}

impl JsArray {
    fn get(&self, i: i64) -> f64 {
        if i >= 0 {
            self.pos.get(i as usize).copied().flatten().unwrap_or(f64::NAN)
        } else {
            self.neg.get(&i).copied().unwrap_or(f64::NAN)
        }
    }
    fn set(&mut self, i: i64, v: f64) {
        if i >= 0 {
            let i = i as usize;
            if self.pos.len() <= i {
                self.pos.resize(i + 1, None);
            }
            self.pos[i] = Some(v);
        } else {
            self.neg.insert(i, v);
        }
    }
}

/// The output of [`for_each_frame`]: calls in open order, with tree self time and depth.
pub(crate) struct FrameCalls {
    /// The calls.
    pub calls: Vec<ProfileCall>,
    /// Self time per call (µs), as the SamplesHandler's tree node has it.
    pub self_time: SelfTimes,
    /// Depth per call.
    pub depth: Depths,
}

struct Walk {
    top: i64,
    start: JsArray,
    children: JsArray,
    open_calls: Vec<usize>,
    out: FrameCalls,
}

impl Walk {
    fn open(&mut self, depth: i32, node: u32, sample: usize, t: f64) {
        self.out.calls.push(ProfileCall { node, sample_index: sample as i32, ts: t * 1000.0, dur: 0.0 });
        self.out.self_time.push_none();
        self.out.depth.push(depth);
        self.open_calls.push(self.out.calls.len() - 1);
        self.top += 1;
        self.start.set(self.top, t);
        self.children.set(self.top, 0.0);
    }

    fn close(&mut self, t: f64) {
        let start = self.start.get(self.top);
        let duration = t - start;
        let below = self.children.get(self.top - 1) + duration;
        self.children.set(self.top - 1, below);
        let self_ms = duration - self.children.get(self.top);
        if let Some(c) = self.open_calls.pop() {
            self.out.calls[c].dur = duration * 1000.0;
            self.out.self_time.set(c, self_ms * 1000.0);
        }
        self.top -= 1;
    }
}

/// Runs `forEachFrame` over the whole profile with the SamplesHandler's callbacks.
pub(crate) fn for_each_frame(model: &ProfileModel) -> FrameCalls {
    let mut w = Walk {
        top: 0,
        start: JsArray::default(),
        children: JsArray::default(),
        open_calls: Vec::new(),
        out: FrameCalls { calls: Vec::new(), self_time: SelfTimes::default(), depth: Depths::default() },
    };
    let nodes = &model.nodes;
    let ts = model.timestamps();
    let n = model.n_samples();
    let gc = model.gc;
    let depth = |x: u32| nodes[x as usize].depth;
    let parent = |x: u32| {
        let p = nodes[x as usize].parent;
        (p != NONE).then_some(p)
    };
    // lowerBound(timestamps, 0): the first timestamp that is not below 0.
    let (mut l, mut r) = (0usize, ts.len());
    while l < r {
        let m = (l + r) >> 1;
        if 0.0 > ts[m] {
            l = m + 1;
        } else {
            r = m;
        }
    }
    let mut prev_id = nodes[0].id;
    let mut gc_parent: Option<u32> = None;
    let mut node: Option<u32> = None;
    let mut stack_nodes: Vec<u32> = Vec::new();
    let mut i = r;
    while i < n {
        let t = ts[i];
        let id = model.sample_id(i);
        if id == prev_id {
            i += 1;
            continue;
        }
        node = model.node_by_id(id);
        let Some(mut prev) = model.node_by_id(prev_id) else {
            i += 1;
            continue;
        };
        if let (Some(g), true) = (gc, node == gc) {
            gc_parent = Some(prev);
            w.open(depth(prev) + 1, g, i, t);
            prev_id = id;
            i += 1;
            continue;
        }
        if let (Some(g), Some(gp)) = (gc, gc_parent) {
            if prev == g {
                w.close(t);
                prev = gp;
                gc_parent = None;
            }
        }
        while let Some(nd) = node {
            if depth(nd) <= depth(prev) {
                break;
            }
            stack_nodes.push(nd);
            node = parent(nd);
        }
        let mut p = Some(prev);
        while let Some(pv) = p {
            if Some(pv) == node {
                break;
            }
            w.close(t);
            if let Some(nd) = node {
                if depth(nd) == depth(pv) {
                    stack_nodes.push(nd);
                    node = parent(nd);
                }
            }
            p = parent(pv);
        }
        while let Some(cur) = stack_nodes.pop() {
            node = Some(cur);
            w.open(depth(cur), cur, i, t);
        }
        prev_id = id;
        i += 1;
    }
    // The end: the timestamp after the last sample (the extra one), or the profile's end.
    let end = match ts.get(i) {
        Some(&t) if t != 0.0 && !t.is_nan() => t,
        _ => model.profile_end,
    };
    if let (Some(_), Some(gp)) = (node, gc_parent) {
        if gc.is_some() && model.node_by_id(prev_id) == gc {
            w.close(end);
            prev_id = nodes[gp as usize].id;
        }
    }
    let mut m = model.node_by_id(prev_id);
    while let Some(x) = m {
        let Some(p) = parent(x) else { break };
        w.close(end);
        m = Some(p);
    }
    w.out
}
