//! Firefox profiles read into the model: each sampled thread becomes a CPU profile (a node
//! per function and call path, a sample per sample) that the integrator estimates as it does a
//! `.cpuprofile`. Two formats, one file each: Firefox's raw Gecko profile (`raw.rs`) and the
//! Firefox Profiler's processed profile (`processed.rs`); `sampled.rs` holds what both share.

mod processed;
mod raw;
mod sampled;

use serde_json::Value;

use crate::error::{Diagnostics, Error, Location};
use crate::input::shaped::{Shape, Shaped};
use crate::model::ReadOptions;
use crate::model::ThreadWork;
use crate::strings::Strings;
use sampled::{At, Reading};

pub use raw::Symbols;

/// The threads of a Firefox profile, given its top-level members: the raw Gecko format
/// (`meta`, `libs`, `threads`, `processes`) or the processed one (`meta.preprocessedProfileVersion`).
pub(crate) fn thread_works(
    fields: Vec<(String, Vec<u8>)>,
    location: Location,
    strings: &mut Strings,
    cfg: &ReadOptions<'_>,
    diag: &mut Diagnostics,
    bounds: &mut (f64, f64),
) -> Result<Vec<ThreadWork>, Error> {
    let at = At { location };
    let mut root = serde_json::Map::new();
    for (key, raw) in &fields {
        // Rare: serde refuses lone surrogates, which JSON.parse takes; they get stand-ins.
        let fixed = crate::input::json::lone_surrogates_replaced(raw);
        let raw = fixed.as_deref().unwrap_or(raw);
        let v = Shaped(Unmarked).read(raw).map_err(|e| at.err(key, format!("not JSON ({e})")))?;
        root.insert(key.clone(), v);
    }
    drop(fields);
    let root = Value::Object(root);
    let mut r = Reading { strings, cfg, diag, bounds };
    if root.get("meta").and_then(|m| m.get("preprocessedProfileVersion")).is_some() {
        processed::thread_works(&root, &at, &mut r)
    } else {
        raw::thread_works(&root, &at, &mut r)
    }
}

/// How a member of a Firefox profile is read: as a JSON value without the `markers` of its
/// threads, which no estimate reads and which are most of a recorded profile's bytes.
#[derive(Clone, Copy)]
struct Unmarked;

impl Shape for Unmarked {
    fn member(self, key: &str) -> Option<Unmarked> {
        (key != "markers").then_some(Unmarked)
    }
    fn element(self) -> Unmarked {
        Unmarked
    }
}
