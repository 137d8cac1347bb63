//! The generated positions of a profile's recorded lines, which source maps move to their
//! original places as the newest DevTools' Sources panel does (`LineLevelProfile.Helper.update`:
//! each (script, line, column) through `rawLocationToUILocation`, a line without a column from
//! its start).

use rustc_hash::FxHashMap;

use super::line_bits;
use crate::js::Scalar;
use crate::model::profile::{ProfileModel, NONE};
use crate::sourcemap::FrameKey;
use crate::strings::Strings;

/// A profile's recorded lines as positions in their scripts: each distinct position once, and
/// for each entry of `lines` (with the frame of the sample it pairs with) and of each node's
/// `positionTicks`, its position's index ([`NONE`]: no line, or no script).
#[derive(Debug, Default)]
pub(crate) struct SampledPositions {
    pub(crate) keys: Vec<FrameKey>,
    pub(crate) lines: Vec<u32>,
    pub(crate) ticks: Vec<Vec<u32>>,
}

impl SampledPositions {
    /// The positions of `m`'s lines (none when it keeps no line data).
    pub(crate) fn of(m: &ProfileModel, strings: &Strings) -> SampledPositions {
        let mut out = SampledPositions::default();
        let mut index: FxHashMap<(u32, u64, u64), u32> = FxHashMap::default();
        let text = |s: Scalar| match s {
            Scalar::Undefined | Scalar::Null => String::new(),
            s => s.to_js_string(strings),
        };
        let mut at = |frame: u32, line: f64, column: f64, keys: &mut Vec<FrameKey>| -> u32 {
            let f = &m.frames[frame as usize];
            let (url, script_id) = (text(f.url), text(f.script_id));
            let scripted = !url.is_empty() || script_id.parse::<f64>().is_ok_and(|n| n != 0.0);
            let whole = line >= 1.0 && line.fract() == 0.0 && line < 1e15;
            if !(whole && scripted) {
                return NONE;
            }
            let column = if column >= 1.0 && column.fract() == 0.0 && column < 1e15 { column as i64 - 1 } else { 0 };
            *index.entry((frame, line_bits(line), column as u64)).or_insert_with(|| {
                let name = String::new();
                keys.push(FrameKey { url, script_id, name, line: Some(line as i64 - 1), column: Some(column) });
                keys.len() as u32 - 1
            })
        };
        if let Some(lines) = &m.lines {
            let mut columns = m.columns.as_ref().map(|c| c.iter());
            for (k, line) in lines.iter().enumerate() {
                let column = columns.as_mut().and_then(Iterator::next).unwrap_or(0.0);
                let node = m.sample_nodes.get(k).copied().unwrap_or(NONE);
                let p = if node == NONE || node as usize >= m.nodes.len() {
                    NONE
                } else {
                    at(m.nodes[m.line_node(node) as usize].frame, line, column, &mut out.keys)
                };
                out.lines.push(p);
            }
        }
        for (node, ticks) in &m.position_ticks {
            let frame = m.nodes[*node as usize].frame;
            out.ticks.push(ticks.iter().map(|&(line, _)| at(frame, line, 0.0, &mut out.keys)).collect());
        }
        out
    }
}
