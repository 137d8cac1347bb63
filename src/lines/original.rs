//! Line times at their original places once source maps apply, as the newest DevTools'
//! Sources panel shows them (`LineLevelProfile.Helper.update`): each sample's (script, line,
//! column) through `rawLocationToUILocation`, a line without a column at its start.

use rustc_hash::FxHashMap;

use super::{key_labels_into, line_bits, rows, Addition, LineTimes, ScriptKey};
use crate::sourcemap::{FrameAt, FrameKey, Resolution};

/// Line times through source maps (see [`crate::Assembled::original_line_times`]).
#[derive(Debug, Clone)]
pub struct OriginalLines {
    /// The times: each line a map covers at its original file and line (keyed by that file's
    /// URL), the others on their script as before.
    pub times: LineTimes,
    /// Additions a map moved.
    pub mapped: u64,
    /// All additions.
    pub additions: u64,
    /// Additions whose sample recorded no column (older recordings, `positionTicks`): mapped
    /// from their line's start, as DevTools maps them.
    pub without_column: u64,
}

impl LineTimes {
    /// The generated position of an addition: its frame's script, 0-based line and column.
    fn position(&self, a: &Addition) -> Option<FrameKey> {
        if a.line < 1.0 || a.line.fract() != 0.0 || a.line > i64::MAX as f64 {
            return None;
        }
        let (url, script_id) = self.places[a.place as usize].clone();
        let column = if a.column >= 1.0 && a.column.fract() == 0.0 && a.column < i64::MAX as f64 {
            a.column as i64 - 1
        } else {
            0
        };
        Some(FrameKey { url, script_id, name: String::new(), line: Some(a.line as i64 - 1), column: Some(column) })
    }

    /// Every distinct generated position of the additions, with the process and thread that
    /// recorded it: what the source maps are asked about.
    pub(crate) fn positions(&self) -> Vec<(FrameKey, FrameAt)> {
        let mut seen: FxHashMap<(usize, u32, u64, u64), ()> = FxHashMap::default();
        let mut out = Vec::new();
        for (k, p) in self.profiles.iter().enumerate() {
            for a in &p.additions {
                if seen.insert((k, a.place, line_bits(a.line), line_bits(a.column)), ()).is_some() {
                    continue;
                }
                if let Some(key) = self.position(a) {
                    out.push((key, FrameAt { pid: p.pid, tid: p.tid }));
                }
            }
        }
        out
    }

    /// These times with each addition at the original place `res` gives its position.
    pub(crate) fn through(&self, res: &Resolution) -> OriginalLines {
        let mut keys = self.keys.clone();
        let mut url_keys: FxHashMap<String, u32> = keys
            .iter()
            .enumerate()
            .filter_map(|(k, key)| match key {
                ScriptKey::Url(u) => Some((u.clone(), k as u32)),
                ScriptKey::Id(_) => None,
            })
            .collect();
        let (mut mapped, mut additions, mut without_column) = (0, 0, 0);
        let mut profiles = self.profiles.clone();
        for p in &mut profiles {
            for a in &mut p.additions {
                additions += 1;
                let original = self.position(a).and_then(|k| res.frames.get(&k)).and_then(|r| r.original.as_ref());
                let Some((url, line, column)) = original else { continue };
                let next = keys.len() as u32;
                a.key = *url_keys.entry(url.clone()).or_insert_with(|| {
                    keys.push(ScriptKey::Url(url.clone()));
                    next
                });
                mapped += 1;
                without_column += u64::from(a.column < 1.0);
                (a.line, a.column) = ((*line + 1) as f64, (*column + 1) as f64);
            }
        }
        let mut labels = self.labels.clone();
        let mut merged_labels = self.merged_labels.clone();
        for l in labels.iter_mut().chain([&mut merged_labels]) {
            key_labels_into(&keys, l);
        }
        for (p, l) in profiles.iter_mut().zip(&labels) {
            p.rows = rows(&[&*p], &keys, &self.functions, l);
        }
        let mut in_order: Vec<_> = profiles.iter().collect();
        in_order.sort_by_key(|p| p.order);
        let merged = rows(&in_order, &keys, &self.functions, &merged_labels);
        let times = LineTimes {
            profiles,
            merged,
            keys,
            functions: self.functions.clone(),
            places: self.places.clone(),
            labels,
            merged_labels,
        };
        OriginalLines { times, mapped, additions, without_column }
    }
}
