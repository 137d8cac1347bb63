//! A range option found in one input: an error there names the input, what was asked for and
//! what the input has instead (exit 1: the option was well formed, the input lacks it).

use jscalls::ranges::{Query, Selection};
use jscalls::Assembled;

use super::Failed;

/// The window `q` picks in `assembled`, or the error printed under the input's `name`.
pub(crate) fn resolve(q: &Query, assembled: &Assembled, name: &str) -> Result<Selection, Failed> {
    q.resolve(assembled.timings(), assembled.trace_bounds()).map_err(|m| {
        say!("jscalls: error: {name}: {}: {m}", q.as_option());
        Failed::Reported
    })
}
