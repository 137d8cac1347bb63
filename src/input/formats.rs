//! The input formats. A trace (an array of events, or an object with `traceEvents`) is read
//! event by event by the walker; every other format is one JSON object, recognised here by its
//! top-level members and handed whole to its reader in `model/` (`model::read_object`). A new
//! object format is a row of [`OBJECT_FORMATS`], a variant of [`InputKind`] and its reader.

/// What kind of input was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// A trace (array or `{traceEvents}`).
    Trace,
    /// A `.cpuprofile`.
    CpuProfile,
    /// A Firefox profile: Firefox's own (Gecko) format, or the Firefox Profiler's processed one.
    Gecko,
}

/// A top-level object's kept members: (key, raw value) in file order.
pub(crate) type Members = [(String, Vec<u8>)];

/// A format that is one JSON object.
pub(crate) struct ObjectFormat {
    pub(crate) kind: InputKind,
    /// The top-level members its reader reads: only these are kept.
    pub(crate) members: &'static [&'static str],
    /// Whether an object whose kept members are these is of the format (the first row that
    /// says so wins).
    pub(crate) is: fn(&Members) -> bool,
}

fn has(fields: &Members, key: &str) -> bool {
    fields.iter().any(|(k, _)| k == key)
}

/// The object formats, in the order they are tried.
pub(crate) const OBJECT_FORMATS: &[ObjectFormat] = &[
    ObjectFormat {
        kind: InputKind::Gecko,
        // `shared`: the processed format's tables.
        members: &["meta", "libs", "threads", "processes", "shared"],
        is: |f| has(f, "meta") && has(f, "threads") && !has(f, "nodes"),
    },
    ObjectFormat {
        kind: InputKind::CpuProfile,
        members: &["nodes", "samples", "timeDeltas", "startTime", "endTime", "head", "timestamps", "lines", "columns"],
        // An empty `nodes` value is an array the sink took where it lay.
        is: |f| f.iter().any(|(k, v)| (k == "nodes" && matches!(v.first(), None | Some(b'['))) || k == "head"),
    },
];

/// Whether some object format reads the top-level member `key`.
pub(crate) fn kept(key: &str) -> bool {
    OBJECT_FORMATS.iter().any(|f| f.members.contains(&key))
}

/// What an input may be, for the error when it is none of them.
pub(crate) const EXPECTED: &str = "expected a trace ({\"traceEvents\": [...]}), a CPU profile ({\"nodes\": [...], \"samples\": [...], \"timeDeltas\": [...]}) or a Firefox profile ({\"meta\": {...}, \"threads\": [...]}); this object is none of them";
