//! Loosely typed JSON values for serde.
//!
//! Real traces put odd types in odd places (a string `pid`, a number `name`). Parsing every field
//! as [`Loose`] keeps the parse going, so the model can name the exact field and event that is
//! wrong, or do what DevTools does with it, instead of failing with a generic type error.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::js::Scalar;
use crate::strings::Strings;

/// Any JSON value, with strings borrowed from the input and compound values skipped.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Loose<'a> {
    /// The key was not there.
    #[default]
    Missing,
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number, correctly rounded to f64 as `JSON.parse` does.
    Num(f64),
    /// A string.
    Str(Cow<'a, str>),
    /// An object (skipped).
    Object,
    /// An array (skipped).
    Array,
}

impl<'a> Loose<'a> {
    /// The same value, owning its string.
    pub fn into_owned(self) -> Loose<'static> {
        match self {
            Loose::Missing => Loose::Missing,
            Loose::Null => Loose::Null,
            Loose::Bool(b) => Loose::Bool(b),
            Loose::Num(n) => Loose::Num(n),
            Loose::Str(s) => Loose::Str(Cow::Owned(s.into_owned())),
            Loose::Object => Loose::Object,
            Loose::Array => Loose::Array,
        }
    }

    /// The number, if this is one.
    pub fn num(&self) -> Option<f64> {
        match *self {
            Loose::Num(n) => Some(n),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn str(&self) -> Option<&str> {
        match self {
            Loose::Str(s) => Some(s),
            _ => None,
        }
    }

    /// An integral number that fits in ±2^53 (the ids and pids jscalls can key exactly).
    pub fn int(&self) -> Option<i64> {
        crate::js::safe_int(self.num()?)
    }

    /// True when the key is absent or `null` (`x ?? d` takes `d`).
    pub fn is_nullish(&self) -> bool {
        matches!(self, Loose::Missing | Loose::Null)
    }

    /// JavaScript truthiness.
    pub fn truthy(&self) -> bool {
        match self {
            Loose::Missing | Loose::Null => false,
            Loose::Bool(b) => *b,
            Loose::Num(n) => *n != 0.0 && !n.is_nan(),
            Loose::Str(s) => !s.is_empty(),
            Loose::Object | Loose::Array => true,
        }
    }

    /// The value as a [`Scalar`] (objects and arrays become `None`).
    pub fn scalar(&self, strings: &mut Strings) -> Option<Scalar> {
        Some(match self {
            Loose::Missing => Scalar::Undefined,
            Loose::Null => Scalar::Null,
            Loose::Bool(b) => Scalar::Bool(*b),
            Loose::Num(n) => Scalar::Num(*n),
            Loose::Str(s) => Scalar::Str(strings.intern(s)),
            Loose::Object | Loose::Array => return None,
        })
    }

    /// A short description of the JSON type, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Loose::Missing => "nothing (no such key)",
            Loose::Null => "null",
            Loose::Bool(_) => "a boolean",
            Loose::Num(_) => "a number",
            Loose::Str(_) => "a string",
            Loose::Object => "an object",
            Loose::Array => "an array",
        }
    }

    /// The property key JavaScript would use for this value (`obj[value]`), for scalars.
    pub fn property_key(&self) -> Option<String> {
        Some(match self {
            Loose::Missing => "undefined".to_owned(),
            Loose::Null => "null".to_owned(),
            Loose::Bool(b) => b.to_string(),
            Loose::Num(n) => crate::js::number_to_string(*n),
            Loose::Str(s) => s.to_string(),
            Loose::Object => "[object Object]".to_owned(),
            Loose::Array => return None,
        })
    }
}

struct LooseVisitor;

impl<'de> Visitor<'de> for LooseVisitor {
    type Value = Loose<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Loose::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Loose::Num(v as f64))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Loose::Num(v as f64))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Loose::Num(v))
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Loose::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Loose::Str(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Loose::Str(Cow::Owned(v)))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Loose::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Loose::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Loose::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Loose::Array)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Loose::Object)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Loose<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LooseVisitor)
    }
}

/// A JSON array of numbers where other elements are allowed and counted (JS would carry them).
#[derive(Debug, Default, Clone)]
pub struct NumArray {
    /// The elements; a non-number element is NaN here and counted in `n_non_numbers`.
    pub values: Vec<f64>,
    /// How many elements were not numbers.
    pub n_non_numbers: usize,
}

impl<'de> Deserialize<'de> for NumArray {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = NumArray;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of numbers")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<NumArray, A::Error> {
                let mut out = NumArray { values: Vec::with_capacity(seq.size_hint().unwrap_or(0)), n_non_numbers: 0 };
                while let Some(v) = seq.next_element::<Loose<'de>>()? {
                    match v.num() {
                        Some(n) => out.values.push(n),
                        None => {
                            out.values.push(f64::NAN);
                            out.n_non_numbers += 1;
                        }
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_seq(V)
    }
}

/// A JSON array of node ids: integral numbers are kept, anything else can never match a node
/// (DevTools looks ids up in a `Map` keyed by number) and becomes [`UNKNOWN_ID`].
#[derive(Debug, Default, Clone)]
pub struct IdArray(pub Vec<i64>);

/// The id of a sample that names no possible node.
pub const UNKNOWN_ID: i64 = i64::MIN;

impl<'de> Deserialize<'de> for IdArray {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = IdArray;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an array of node ids")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<IdArray, A::Error> {
                let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                while let Some(v) = seq.next_element::<Loose<'de>>()? {
                    out.push(v.int().unwrap_or(UNKNOWN_ID));
                }
                Ok(IdArray(out))
            }
        }
        d.deserialize_seq(V)
    }
}
