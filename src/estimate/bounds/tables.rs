//! What the calls' boundaries need to know of one another: made in one pass over the calls,
//! where each call's run of samples ends (bounds and midway) and the changes DevTools made on
//! each sample (midway); kept as the midway pass goes, the call each was opened in.

use super::times::{partition_from, Side};
use crate::estimate::ProfileCall;
use crate::model::profile::{ProfileModel, NONE};

/// What the calls' boundaries need to know of one another, made in one pass over the calls.
pub(super) struct CallTables {
    /// Per call, the first sample at or after its end (`t.len()` for none): the one that closed
    /// the call or, when an event's end closed it, the first after that (with bounds or midway).
    pub(super) ends: Vec<u32>,
    /// The calls DevTools ended and opened on each sample (midway).
    pub(super) changes: Changes,
}

impl CallTables {
    pub(super) fn new(
        model: &ProfileModel,
        calls: &[ProfileCall],
        t: &[f64],
        bounds: bool,
        midway: bool,
    ) -> CallTables {
        let mut at = Changes::new(if midway && !calls.is_empty() { t.len() } else { 0 });
        let mut ends = Vec::with_capacity(if bounds || midway { calls.len() } else { 0 });
        if !(bounds || midway) {
            return CallTables { ends, changes: at };
        }
        for call in calls {
            let end = call.ts + call.dur;
            let k = usize::try_from(call.sample_index).ok().filter(|&k| k < t.len());
            let j = match k {
                Some(k) => {
                    let mut j = k + 1;
                    partition_from(t, &mut j, |v| v < end).max(k + 1)
                }
                None => t.partition_point(|&x| x < end),
            };
            ends.push(j as u32);
            if !midway {
                continue;
            }
            let node = &model.nodes[call.node as usize];
            if let Some(k) = k {
                at.update(k, |ch| {
                    ch.opened += 1;
                    ch.outermost_opened = ch.outermost_opened.min(node.depth);
                });
            }
            if t.get(j) == Some(&end) {
                at.update(j, |ch| {
                    ch.closed += 1;
                    ch.deepest_closed = ch.deepest_closed.max(node.depth);
                });
            }
        }
        CallTables { ends, changes: at }
    }
}

/// The calls the midway pass has made at each depth, as DevTools made them and as moved: the
/// call each new one was opened inside is the last one made a level up, when it holds the
/// call's start. By depth, not by node: DevTools goes on with a call across a frame equal to
/// its own under another node. (A table of parents would cost 8 bytes a call; this, a row a
/// depth.)
pub(super) struct Nesting {
    /// Per depth, the last call made at it ([`Opened::NONE`] where none was).
    at: Vec<Opened>,
    /// Where the last outermost call (depth 0, none found around it) ends once moved.
    outermost_end: f64,
}

/// A call the pass has made, with where its last child ends once moved.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Opened {
    pub(super) index: u32,
    /// DevTools' start and end.
    pub(super) ts: f64,
    pub(super) end: f64,
    pub(super) sample_index: i32,
    /// The start and end once moved.
    pub(super) start: f64,
    pub(super) stop: f64,
    /// Where its last child so far ends once moved.
    pub(super) children_end: f64,
}

impl Opened {
    const NONE: Opened = Opened {
        index: NONE,
        ts: f64::NAN,
        end: f64::NAN,
        sample_index: -1,
        start: f64::NAN,
        stop: f64::NAN,
        children_end: f64::NEG_INFINITY,
    };
}

impl Nesting {
    pub(super) fn new() -> Nesting {
        Nesting { at: Vec::new(), outermost_end: f64::NEG_INFINITY }
    }

    /// The call a call `depth` deep starting at `ts` was opened inside (the next call made
    /// must be this one).
    pub(super) fn parent(&self, depth: i32, ts: f64) -> Option<Opened> {
        let d = usize::try_from(depth).ok()?.checked_sub(1)?;
        self.at.get(d).copied().filter(|p| p.index != NONE && p.ts <= ts && ts <= p.end)
    }

    /// Where the siblings before a call `depth` deep in `parent` end once moved: `None` when
    /// its siblings are not known (a deeper call whose parent was not found).
    pub(super) fn siblings_end(&self, parent: Option<&Opened>, depth: i32) -> Option<f64> {
        match parent {
            Some(p) => Some(p.children_end),
            None => (depth <= 0).then_some(self.outermost_end),
        }
    }

    /// Records a call `depth` deep in `parent` (what [`Nesting::parent`] gave).
    pub(super) fn made(&mut self, parent: Option<&Opened>, depth: i32, opened: Opened) {
        match parent {
            Some(_) => self.at[depth as usize - 1].children_end = opened.stop,
            None if depth <= 0 => self.outermost_end = opened.stop,
            None => {}
        }
        if let Ok(d) = usize::try_from(depth) {
            if self.at.len() <= d {
                self.at.resize(d + 1, Opened::NONE);
            }
            self.at[d] = Opened { children_end: f64::NEG_INFINITY, ..opened };
        }
    }
}

/// Where between two samples a frame most likely opened or closed. Between sample `k − 1` and
/// sample `k` the frames that close do so innermost first and those that open outermost first,
/// closing before opening; with nothing else known the K changes spread evenly over the gap,
/// the i-th at i / (K + 1) of it (the mean of the i-th of K uniform times). A single change
/// lies halfway; two frames swapped at one depth, the end at a third, the start at two thirds.
/// The changes are DevTools' own: the calls it ended on a sample and opened at it.
pub(super) struct Changes {
    /// Per sample: the calls that ended on it and the deepest one's depth, the calls opened at
    /// it and the outermost one's depth, in 16 bits each where they fit (nearly always: 8
    /// bytes a sample, against 16), else [`Small::BIG`] and the sample's in `big`.
    at: Vec<Small>,
    big: rustc_hash::FxHashMap<u32, Change>,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Change {
    pub(super) closed: u32,
    pub(super) deepest_closed: i32,
    pub(super) opened: u32,
    pub(super) outermost_opened: i32,
}

/// A [`Change`] in 16-bit fields: counts as they are, depths from 0 with `u16::MAX` for none.
#[derive(Clone, Copy)]
struct Small {
    closed: u16,
    deepest_closed: u16,
    opened: u16,
    outermost_opened: u16,
}

impl Small {
    /// A sample whose change is in the side table.
    const BIG: Small = Small { closed: u16::MAX, deepest_closed: 0, opened: 0, outermost_opened: 0 };
    const NONE: Small = Small { closed: 0, deepest_closed: u16::MAX, opened: 0, outermost_opened: u16::MAX };

    /// `c` in 16 bits, when each of its fields fits.
    fn of(c: Change) -> Option<Small> {
        let count = |n: u32| u16::try_from(n).ok().filter(|&n| n != u16::MAX);
        let depth = |d: i32, none: i32| if d == none { Some(u16::MAX) } else { count(u32::try_from(d).ok()?) };
        Some(Small {
            closed: count(c.closed)?,
            deepest_closed: depth(c.deepest_closed, i32::MIN)?,
            opened: count(c.opened)?,
            outermost_opened: depth(c.outermost_opened, i32::MAX)?,
        })
    }

    fn change(self) -> Change {
        let depth = |d: u16, none: i32| if d == u16::MAX { none } else { i32::from(d) };
        Change {
            closed: u32::from(self.closed),
            deepest_closed: depth(self.deepest_closed, i32::MIN),
            opened: u32::from(self.opened),
            outermost_opened: depth(self.outermost_opened, i32::MAX),
        }
    }
}

impl Changes {
    pub(super) fn new(samples: usize) -> Changes {
        Changes { at: vec![Small::NONE; samples], big: Default::default() }
    }

    /// How many samples there are changes for (none without midway).
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.at.len()
    }

    /// The change on sample `k`.
    fn get(&self, k: usize) -> Option<Change> {
        let s = *self.at.get(k)?;
        Some(if s.closed == u16::MAX { self.big[&(k as u32)] } else { s.change() })
    }

    /// Changes sample `k`'s change by `f`.
    pub(super) fn update(&mut self, k: usize, f: impl FnOnce(&mut Change)) {
        let Some(mut c) = self.get(k) else { return };
        let was_big = self.at[k].closed == u16::MAX;
        f(&mut c);
        self.at[k] = match Small::of(c) {
            Some(s) => {
                // (An outermost depth can come down into 16 bits again.)
                if was_big {
                    self.big.remove(&(k as u32));
                }
                s
            }
            None => {
                self.big.insert(k as u32, c);
                Small::BIG
            }
        };
    }

    /// The fraction of the gap from sample `k − 1`'s capture to sample `k`'s at which a frame
    /// of this `depth` most likely started (`Side::Start`, opened at `k`) or ended (`Side::End`,
    /// ended on `k`).
    pub(super) fn place(&self, k: usize, depth: i32, side: Side) -> f64 {
        let Some(c) = self.get(k) else { return 0.5 };
        // The frame's place in the order of the changes (1 for the first).
        let i = match side {
            Side::Start => i64::from(c.closed) + i64::from(depth) - i64::from(c.outermost_opened) + 1,
            Side::End => i64::from(c.deepest_closed) - i64::from(depth) + 1,
        };
        let n = i64::from(c.closed) + i64::from(c.opened);
        if (1..=n).contains(&i) {
            i as f64 / (n + 1) as f64
        } else {
            0.5 // not among the changes counted there (an odd stack): halfway
        }
    }
}
