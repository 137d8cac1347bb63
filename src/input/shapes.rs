//! serde shapes of the JSON values the pipeline reads beyond the event envelope: the `args` of
//! `ProfileChunk`, `Profile`, `CpuProfile`, the frame events, and whole `.cpuprofile` documents.
//!
//! Every leaf is [`Leaf`], so a wrong type becomes a precise message in the model.

use std::borrow::Cow;
use std::fmt;

use rustc_hash::FxHashMap;
use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde::Deserialize as DeriveDeserialize;

use super::leaf::{IdArray, Leaf, NumArray};

/// A value that may or may not be an object: `x?.field` in JS reads through only objects.
#[derive(Debug, Default)]
pub enum MaybeObj<T> {
    /// Absent.
    #[default]
    Missing,
    /// An object.
    Obj(T),
    /// Present but not an object.
    Other,
}

impl<T> MaybeObj<T> {
    /// The object, if it is one.
    pub fn obj(&self) -> Option<&T> {
        match self {
            MaybeObj::Obj(t) => Some(t),
            _ => None,
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for MaybeObj<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = MaybeObj<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
                T::deserialize(de::value::MapAccessDeserializer::new(map)).map(MaybeObj::Obj)
            }
            fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(MaybeObj::Other)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(MaybeObj::Other)
            }
            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(MaybeObj::Other)
            }
            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(MaybeObj::Other)
            }
            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(MaybeObj::Other)
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Self::Value, E> {
                Ok(MaybeObj::Other)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
                Ok(MaybeObj::Other)
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// `args` whose part of interest is `args.data` (most events' `args`).
#[derive(Debug, DeriveDeserialize)]
#[serde(bound(deserialize = "T: Deserialize<'de>"))]
pub struct Args<T> {
    /// `args.data`.
    #[serde(default)]
    pub data: MaybeObj<T>,
}

/// `args` of a `Profile` event.
pub type ProfileArgs<'a> = Args<ProfileData<'a>>;
/// `args` of a synthetic `CpuProfile` (ph X) event.
pub type CpuProfileArgs<'a> = Args<CpuProfileData<'a>>;
/// `args` of `TracingStartedInBrowser`.
pub type StartedArgs<'a> = Args<StartedData<'a>>;
/// `args` of `FrameCommittedInBrowser` and `CommitLoad`.
pub type FrameArgs<'a> = Args<FrameInfo<'a>>;
/// `args` of `AuctionWorkletRunningInProcess` / `AuctionWorkletDoneWithProcess`.
pub type WorkletArgs<'a> = Args<WorkletData<'a>>;

/// `args` of a `ProfileChunk`.
#[derive(Debug, DeriveDeserialize, Default)]
pub struct ChunkArgs<'a> {
    /// `args.data`.
    #[serde(default, borrow)]
    pub data: MaybeObj<ChunkData<'a>>,
}

/// `args.data` of a `ProfileChunk`.
#[derive(Debug, DeriveDeserialize, Default)]
pub struct ChunkData<'a> {
    /// `cpuProfile`: nodes, samples, trace_ids.
    #[serde(default, borrow, rename = "cpuProfile")]
    pub cpu_profile: MaybeObj<ChunkProfile<'a>>,
    /// `timeDeltas`, µs.
    #[serde(default, rename = "timeDeltas")]
    pub time_deltas: Option<NumArray>,
    /// `lines`: the 1-based line each sample ran (0: none), when serde read the args.
    #[serde(default)]
    pub lines: Option<NumArray>,
    /// The bytes of `lines`, unread, when the scan read the args.
    #[serde(skip)]
    pub lines_bytes: Option<&'a [u8]>,
    /// `columns`: the 1-based column of each sample's line (0: none), when serde read the args.
    #[serde(default)]
    pub columns: Option<NumArray>,
    /// The bytes of `columns`, unread, when the scan read the args.
    #[serde(skip)]
    pub columns_bytes: Option<&'a [u8]>,
    /// `source`.
    #[serde(default, borrow)]
    pub source: Leaf<'a>,
}

/// `args.data.cpuProfile` of a `ProfileChunk`.
#[derive(Debug, DeriveDeserialize, Default)]
pub struct ChunkProfile<'a> {
    /// New nodes.
    #[serde(default, borrow)]
    pub nodes: Option<Vec<NodeJson<'a>>>,
    /// Sample node ids.
    #[serde(default)]
    pub samples: Option<IdArray>,
    /// `trace_ids`: trace id → node id (or, in old traces, sample index → trace id).
    #[serde(default, borrow)]
    pub trace_ids: Option<FxHashMap<Cow<'a, str>, Leaf<'a>>>,
}

/// `Deserialize` for an object whose fields all have defaults, as `JSON.parse` reads it: a
/// key given twice keeps its last value (serde's derive refuses the second), unknown keys are
/// skipped.
macro_rules! last_wins {
    ($name:ident { $($field:ident : $key:literal),* $(,)? }) => {
        impl<'de: 'a, 'a> Deserialize<'de> for $name<'a> {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct V<'a>(std::marker::PhantomData<&'a ()>);
                impl<'de: 'a, 'a> Visitor<'de> for V<'a> {
                    type Value = $name<'a>;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("an object")
                    }
                    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                        let mut out = $name::default();
                        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
                            match &*key {
                                $($key => out.$field = map.next_value()?,)*
                                _ => {
                                    map.next_value::<IgnoredAny>()?;
                                }
                            }
                        }
                        Ok(out)
                    }
                }
                d.deserialize_map(V(std::marker::PhantomData))
            }
        }
    };
}

/// A profile node, in either style: CDP (`children`) or trace chunks (`parent`).
#[derive(Debug, Default)]
pub struct NodeJson<'a> {
    /// Node id.
    pub id: Leaf<'a>,
    /// Parent id (trace style).
    pub parent: Leaf<'a>,
    /// Child ids (CDP style).
    pub children: Option<Vec<Leaf<'a>>>,
    /// The frame.
    pub call_frame: MaybeObj<FrameJson<'a>>,
    /// `hitCount` (only its type matters).
    pub hit_count: Leaf<'a>,
    /// Legacy frame fields directly on the node (used when `callFrame` is absent).
    pub function_name: Leaf<'a>,
    /// Legacy.
    pub script_id: Leaf<'a>,
    /// Legacy.
    pub url: Leaf<'a>,
    /// Legacy (1-based).
    pub line_number: Leaf<'a>,
    /// Legacy (1-based).
    pub column_number: Leaf<'a>,
    /// `positionTicks`: samples per 1-based line of the node's function.
    pub position_ticks: Option<PositionTicksJson<'a>>,
}

/// A node's `positionTicks`: an array of `{line, ticks}`, or any other value, which DevTools
/// reads as no ticks (its loop runs to an undefined length).
#[derive(Debug, DeriveDeserialize)]
#[serde(untagged)]
pub enum PositionTicksJson<'a> {
    /// An array; an element that is not an object has neither field.
    List(#[serde(borrow)] Vec<MaybeObj<PositionTickJson<'a>>>),
    /// Anything else.
    Other(IgnoredAny),
}

/// One entry of a node's `positionTicks`.
#[derive(Debug, Default)]
pub struct PositionTickJson<'a> {
    /// `line`, 1-based.
    pub line: Leaf<'a>,
    /// `ticks`: how many samples.
    pub ticks: Leaf<'a>,
}

last_wins!(PositionTickJson { line: "line", ticks: "ticks" });

last_wins!(NodeJson {
    id: "id",
    parent: "parent",
    children: "children",
    call_frame: "callFrame",
    hit_count: "hitCount",
    function_name: "functionName",
    script_id: "scriptId",
    url: "url",
    line_number: "lineNumber",
    column_number: "columnNumber",
    position_ticks: "positionTicks",
});

/// A `callFrame`.
#[derive(Debug, Default)]
pub struct FrameJson<'a> {
    /// `functionName`.
    pub function_name: Leaf<'a>,
    /// `scriptId`: a string in CDP profiles, a number in trace chunks.
    pub script_id: Leaf<'a>,
    /// `url`.
    pub url: Leaf<'a>,
    /// `lineNumber`, 0-based.
    pub line_number: Leaf<'a>,
    /// `columnNumber`, 0-based.
    pub column_number: Leaf<'a>,
}

last_wins!(FrameJson {
    function_name: "functionName",
    script_id: "scriptId",
    url: "url",
    line_number: "lineNumber",
    column_number: "columnNumber",
});

/// A whole CDP `Profiler.Profile` (a `.cpuprofile`, or `args.data.cpuProfile` of `CpuProfile`).
#[derive(Debug, DeriveDeserialize, Default)]
pub struct CpuProfileJson<'a> {
    /// Nodes.
    #[serde(default, borrow)]
    pub nodes: Option<Vec<NodeJson<'a>>>,
    /// Sample node ids.
    #[serde(default)]
    pub samples: Option<IdArray>,
    /// Time deltas, µs.
    #[serde(default, rename = "timeDeltas")]
    pub time_deltas: Option<NumArray>,
    /// Start, µs.
    #[serde(default, borrow, rename = "startTime")]
    pub start_time: Leaf<'a>,
    /// End, µs.
    #[serde(default, borrow, rename = "endTime")]
    pub end_time: Leaf<'a>,
    /// The legacy nested-tree format.
    #[serde(default, rename = "head")]
    pub head: Option<IgnoredAny>,
    /// `lines`: the 1-based line each sample ran (0: none).
    #[serde(default)]
    pub lines: Option<NumArray>,
    /// `columns`: the 1-based column of each sample's line (0: none).
    #[serde(default)]
    pub columns: Option<NumArray>,
}

/// `args.data` of a `Profile` event.
#[derive(Debug, DeriveDeserialize, Default)]
pub struct ProfileData<'a> {
    /// `source`: Internal, Inspector, SelfProfiling.
    #[serde(default, borrow)]
    pub source: Leaf<'a>,
}

/// `args.data` of a `CpuProfile` event.
#[derive(Debug, DeriveDeserialize, Default)]
pub struct CpuProfileData<'a> {
    /// The whole profile.
    #[serde(default, borrow, rename = "cpuProfile")]
    pub cpu_profile: MaybeObj<CpuProfileJson<'a>>,
}

/// A frame as listed by `TracingStartedInBrowser` and `FrameCommittedInBrowser`.
#[derive(Debug, DeriveDeserialize, Default)]
pub struct FrameInfo<'a> {
    /// Frame id.
    #[serde(default, borrow)]
    pub frame: Leaf<'a>,
    /// URL.
    #[serde(default, borrow)]
    pub url: Leaf<'a>,
    /// Renderer process id.
    #[serde(default, borrow, rename = "processId")]
    pub process_id: Leaf<'a>,
}

/// `args.data` of `TracingStartedInBrowser`.
#[derive(Debug, DeriveDeserialize, Default)]
pub struct StartedData<'a> {
    /// The frames at the start of tracing.
    #[serde(default, borrow)]
    pub frames: Option<Vec<FrameInfo<'a>>>,
}

/// `args` of `thread_name`.
#[derive(Debug, DeriveDeserialize, Default)]
pub struct NameArgs<'a> {
    /// The thread's name.
    #[serde(default, borrow)]
    pub name: Leaf<'a>,
}

/// `args.data` of the auction worklet events.
#[derive(Debug, DeriveDeserialize, Default)]
pub struct WorkletData<'a> {
    /// The process the worklet runs in.
    #[serde(default, borrow)]
    pub pid: Leaf<'a>,
}

/// The trace metadata (top-level `metadata`), as far as it matters here.
#[derive(Debug, DeriveDeserialize, Default)]
pub struct Metadata<'a> {
    /// `"CPUProfile"` for a `.cpuprofile` that DevTools saved as a trace.
    #[serde(default, borrow, rename = "dataOrigin")]
    pub data_origin: Leaf<'a>,
}

/// Parses `T` from a raw JSON value.
pub fn parse<'a, T: Deserialize<'a>>(raw: &'a str) -> Result<T, serde_json::Error> {
    serde_json::from_str(raw)
}

/// A profile id or pid as a JS `Map` key: numbers and strings are distinct keys.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MapKey {
    /// `undefined` (the key is missing).
    Undefined,
    /// `null`.
    Null,
    /// A number, by its bits (0 and -0 are one key).
    Num(u64),
    /// A string.
    Str(Box<str>),
    /// Anything else (objects are distinct keys in JS; they never match).
    Other(u64),
}

impl MapKey {
    /// The key for a value; objects get a unique key each (`serial`).
    pub fn of(v: &Leaf<'_>, serial: u64) -> MapKey {
        match v {
            Leaf::Missing => MapKey::Undefined,
            Leaf::Null => MapKey::Null,
            Leaf::Num(n) => MapKey::Num(if *n == 0.0 { 0 } else { n.to_bits() }),
            Leaf::Str(s) => MapKey::Str(s.as_ref().into()),
            _ => MapKey::Other(serial),
        }
    }

    /// The key as JSON, for output.
    pub fn to_json(&self) -> String {
        match self {
            MapKey::Undefined | MapKey::Null | MapKey::Other(_) => "null".to_owned(),
            MapKey::Num(b) => {
                let mut s = String::new();
                crate::js::write_number(&mut s, f64::from_bits(*b));
                s
            }
            MapKey::Str(s) => {
                let mut out = String::new();
                crate::js::write_json_string(&mut out, s);
                out
            }
        }
    }
}

/// The `id2` of a user-timing or interaction event, read when it has no `id`.
#[derive(Debug, Default)]
pub struct Id2Event<'a> {
    /// `id2`: `{global, local}`.
    pub id2: MaybeObj<Id2Json<'a>>,
}

last_wins!(Id2Event { id2: "id2" });

/// An `id2` object.
#[derive(Debug, Default)]
pub struct Id2Json<'a> {
    /// `global`.
    pub global: Leaf<'a>,
    /// `local`.
    pub local: Leaf<'a>,
}

last_wins!(Id2Json { global: "global", local: "local" });

/// The `args` of an `EventTiming` start, as far as DevTools' interactions read them.
#[derive(Debug, Default)]
pub struct EventTimingArgs<'a> {
    /// `data`.
    pub data: MaybeObj<EventTimingData<'a>>,
}

last_wins!(EventTimingArgs { data: "data" });

/// `args.data` of an `EventTiming` start.
#[derive(Debug, Default)]
pub struct EventTimingData<'a> {
    /// `duration`, ms.
    pub duration: Leaf<'a>,
    /// `interactionId`.
    pub interaction_id: Leaf<'a>,
    /// `type` (`click`, `keydown`, …).
    pub event_type: Leaf<'a>,
    /// `timeStamp`.
    pub time_stamp: Leaf<'a>,
    /// `processingStart`.
    pub processing_start: Leaf<'a>,
    /// `processingEnd`.
    pub processing_end: Leaf<'a>,
}

last_wins!(EventTimingData {
    duration: "duration",
    interaction_id: "interactionId",
    event_type: "type",
    time_stamp: "timeStamp",
    processing_start: "processingStart",
    processing_end: "processingEnd",
});
