//! Loosely typed JSON values for serde.
//!
//! Real traces put odd types in odd places (a string `pid`, a number `name`). Parsing every field
//! as [`Leaf`] keeps the parse going, so the model can name the exact field and event that is
//! wrong, or do what DevTools does with it, instead of failing with a generic type error.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};

use crate::js::Scalar;
use crate::strings::Strings;

/// Any JSON value, with strings borrowed from the input and compound values skipped.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Leaf<'a> {
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

impl<'a> Leaf<'a> {
    /// The same value, owning its string.
    pub fn into_owned(self) -> Leaf<'static> {
        match self {
            Leaf::Missing => Leaf::Missing,
            Leaf::Null => Leaf::Null,
            Leaf::Bool(b) => Leaf::Bool(b),
            Leaf::Num(n) => Leaf::Num(n),
            Leaf::Str(s) => Leaf::Str(Cow::Owned(s.into_owned())),
            Leaf::Object => Leaf::Object,
            Leaf::Array => Leaf::Array,
        }
    }

    /// The number, if this is one.
    pub fn num(&self) -> Option<f64> {
        match *self {
            Leaf::Num(n) => Some(n),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn str(&self) -> Option<&str> {
        match self {
            Leaf::Str(s) => Some(s),
            _ => None,
        }
    }

    /// An integral number that fits in ±2^53 (the ids and pids jscalls can key exactly).
    pub fn int(&self) -> Option<i64> {
        crate::js::safe_int(self.num()?)
    }

    /// True when the key is absent or `null` (`x ?? d` takes `d`).
    pub fn is_nullish(&self) -> bool {
        matches!(self, Leaf::Missing | Leaf::Null)
    }

    /// JavaScript truthiness.
    pub fn truthy(&self) -> bool {
        match self {
            Leaf::Missing | Leaf::Null => false,
            Leaf::Bool(b) => *b,
            Leaf::Num(n) => *n != 0.0 && !n.is_nan(),
            Leaf::Str(s) => !s.is_empty(),
            Leaf::Object | Leaf::Array => true,
        }
    }

    /// The value as a [`Scalar`] (objects and arrays become `None`).
    pub fn scalar(&self, strings: &mut Strings) -> Option<Scalar> {
        Some(match self {
            Leaf::Missing => Scalar::Undefined,
            Leaf::Null => Scalar::Null,
            Leaf::Bool(b) => Scalar::Bool(*b),
            Leaf::Num(n) => Scalar::Num(*n),
            Leaf::Str(s) => Scalar::Str(strings.intern(s)),
            Leaf::Object | Leaf::Array => return None,
        })
    }

    /// A short description of the JSON type, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Leaf::Missing => "nothing (no such key)",
            Leaf::Null => "null",
            Leaf::Bool(_) => "a boolean",
            Leaf::Num(_) => "a number",
            Leaf::Str(_) => "a string",
            Leaf::Object => "an object",
            Leaf::Array => "an array",
        }
    }

    /// The property key JavaScript would use for this value (`obj[value]`), for scalars.
    pub fn property_key(&self) -> Option<String> {
        Some(match self {
            Leaf::Missing => "undefined".to_owned(),
            Leaf::Null => "null".to_owned(),
            Leaf::Bool(b) => b.to_string(),
            Leaf::Num(n) => crate::js::number_to_string(*n),
            Leaf::Str(s) => s.to_string(),
            Leaf::Object => "[object Object]".to_owned(),
            Leaf::Array => return None,
        })
    }
}

struct LeafVisitor;

impl<'de> Visitor<'de> for LeafVisitor {
    type Value = Leaf<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        Ok(Leaf::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Leaf::Num(v as f64))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Leaf::Num(v as f64))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Leaf::Num(v))
    }
    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Leaf::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Leaf::Str(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Self::Value, E> {
        Ok(Leaf::Str(Cow::Owned(v)))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Leaf::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
        Ok(Leaf::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        Leaf::deserialize(d)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Leaf::Array)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Leaf::Object)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Leaf<'a> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(LeafVisitor)
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
                while let Some(v) = seq.next_element::<Leaf<'de>>()? {
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
pub(crate) const UNKNOWN_ID: i64 = i64::MIN;

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
                while let Some(v) = seq.next_element::<Leaf<'de>>()? {
                    out.push(v.int().unwrap_or(UNKNOWN_ID));
                }
                Ok(IdArray(out))
            }
        }
        d.deserialize_seq(V)
    }
}
