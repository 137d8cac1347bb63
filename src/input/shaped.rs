//! A JSON value read into a [`Value`] with some of its members read otherwise: left out (their
//! syntax still read through), or their strings made something else. What is not kept is not
//! copied: a source map's `sourcesContent`, a Firefox profile's `markers`.

use std::borrow::Cow;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// How a value and what it holds are read.
pub(crate) trait Shape: Copy {
    /// How the value of member `key` is read; None: read through and left out.
    fn member(self, key: &str) -> Option<Self>;
    /// How an element of an array is read.
    fn element(self) -> Self;
    /// What a string becomes.
    fn string(self, s: Cow<'_, str>) -> Value {
        Value::String(s.into_owned())
    }
}

/// A value read as its shape says: [`serde_json::Value`]'s own reading otherwise.
#[derive(Clone, Copy)]
pub(crate) struct Shaped<S>(pub(crate) S);

impl<S: Shape> Shaped<S> {
    /// The value that is all of `bytes`.
    pub(crate) fn read(self, bytes: &[u8]) -> serde_json::Result<Value> {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let v = self.deserialize(&mut de)?;
        de.end()?;
        Ok(v)
    }
}

impl<'de, S: Shape> DeserializeSeed<'de> for Shaped<S> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de, S: Shape> Visitor<'de> for Shaped<S> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }
    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::from(n))
    }
    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(Value::from(n))
    }
    fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(self.0.string(Cow::Borrowed(s)))
    }
    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(self.0.string(Cow::Owned(s)))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let element = Shaped(self.0.element());
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(element)? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = serde_json::Map::new();
        while let Some(k) = map.next_key::<String>()? {
            match self.0.member(&k) {
                Some(shape) => {
                    let v = map.next_value_seed(Shaped(shape))?;
                    out.insert(k, v);
                }
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Value::Object(out))
    }
}
