//! Firefox profiles read into the model: each sampled thread becomes a CPU profile (a node
//! per function and call path, a sample per sample) that the integrator estimates as it does a
//! `.cpuprofile`. Two formats, one file each: Firefox's raw Gecko profile (`raw.rs`) and the
//! Firefox Profiler's processed profile (`processed.rs`); `sampled.rs` holds what both share.

mod processed;
mod raw;
mod sampled;

use serde_json::Value;

use crate::error::{Diagnostics, Error, Location};
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
        let Unmarked(v) = serde_json::from_slice(raw).map_err(|e| at.err(key, format!("not JSON ({e})")))?;
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

/// A member of a Firefox profile as a JSON value without the `markers` of its threads: the
/// model reads none, and they are most of a recorded profile's bytes (their syntax is still
/// read through).
struct Unmarked(Value);

impl<'de> serde::Deserialize<'de> for Unmarked {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Unmarked, D::Error> {
        d.deserialize_any(UnmarkedVisitor).map(Unmarked)
    }
}

/// [`Unmarked`]'s visitor: serde_json's own `Value`, but for `markers`.
struct UnmarkedVisitor;

impl<'de> serde::de::Visitor<'de> for UnmarkedVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }
    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(Unmarked(v)) = seq.next_element()? {
            items.push(v);
        }
        Ok(Value::Array(items))
    }
    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if key == "markers" {
                map.next_value::<serde::de::IgnoredAny>()?;
            } else {
                let Unmarked(v) = map.next_value()?;
                members.insert(key, v);
            }
        }
        Ok(Value::Object(members))
    }
}
