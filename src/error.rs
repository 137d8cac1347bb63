//! Fatal errors ([`Error`]) and survivable oddities ([`Diagnostics`]).
//!
//! An error stops the run: the input cannot be read the way DevTools would read it. A warning is
//! something DevTools carries on past (often silently); jscalls counts it by kind, keeps the first
//! few with their positions, and lets `--strict` turn any of them into an error.

use std::collections::BTreeMap;
use std::fmt;

/// Where in the input something is: a 1-based line and column, the byte offset, and the index
/// of the trace event (0-based, in file order) when there is one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Location {
    /// 1-based line.
    pub line: u64,
    /// 1-based column, in bytes.
    pub column: u64,
    /// 0-based byte offset in the (decompressed) input.
    pub offset: u64,
    /// Index of the trace event in `traceEvents`, when the place is inside one.
    pub event: Option<u64>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)?;
        if let Some(ev) = self.event {
            write!(f, " (event {ev})")?;
        }
        Ok(())
    }
}

/// A fatal problem with the input or the environment.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The input is not what jscalls can read; `location` says where, `message` what was expected.
    #[error("{}{message}", location.map(|l| format!("{l}: ")).unwrap_or_default())]
    Input {
        /// Where the problem was found, when it has a place.
        location: Option<Location>,
        /// What is wrong, lower-case, without a trailing period.
        message: String,
    },
    /// Reading or writing failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// An argument given with the input does not fit it (a transform that names no function
    /// of the tree); `message` says which and why.
    #[error("{message}")]
    Argument {
        /// What is wrong, lower-case, without a trailing period.
        message: String,
    },
}

impl Error {
    /// An input error at a place.
    pub fn input(location: Option<Location>, message: impl Into<String>) -> Error {
        Error::Input { location, message: message.into() }
    }

    /// An argument that does not fit the input.
    pub fn argument(message: impl Into<String>) -> Error {
        Error::Argument { message: message.into() }
    }

    /// An I/O error with context.
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Error {
        Error::Io { context: context.into(), source }
    }
}

/// The kinds of survivable oddities. Each has a stable code, printed in summaries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum WarningKind {
    /// The input ended inside the event array; the complete events before the cut were used.
    Truncated,
    /// The gzip stream ended before its end marker (a truncated `.gz`); what it held was used.
    GzipCut,
    /// A UTF-8 byte order mark was skipped.
    ByteOrderMark,
    /// A trailing comma before `]` or `}` was accepted.
    TrailingComma,
    /// An element of `traceEvents` is not an object.
    NotAnObject,
    /// An event the pipeline needs has no name, or a name that is not a string.
    BadName,
    /// An X/B/E/I event has no numeric `ts` (or a non-numeric `dur`); it was skipped.
    BadTimestamp,
    /// An event has no `ph` (or not a one-letter one); every handler ignores it.
    BadPhase,
    /// Bytes that are not UTF-8 were replaced with U+FFFD, as Node's decoder does.
    InvalidUtf8,
    /// An event has no numeric integral `pid`/`tid`; it was skipped.
    BadThreadId,
    /// A `ProfileChunk`'s samples and timeDeltas disagree in length (DevTools logs and carries on).
    SamplesDeltasMismatch,
    /// Chunks whose `(pid, id)` never got a `Profile` head; DevTools drops them.
    ProfileWithoutHead,
    /// A profile with no nodes; DevTools skips it.
    EmptyProfile,
    /// A sample names a node id that the profile does not have; DevTools drops the sample.
    UnknownSampleNode,
    /// Nodes not reachable from the root (unknown, cyclic or self parents); ignored.
    UnknownParent,
    /// An `E` event with no open `B`, or whose `B` has another name or category.
    UnpairedEnd,
    /// A `B` event never closed (usual at the end of a recording); it keeps a duration of 0, as in DevTools.
    UnclosedBegin,
    /// A profile whose process DevTools drops (no valid frame URL): no calls for it.
    ProcessDropped,
    /// A profile on a thread with no trace events: DevTools 0.0.65 computes no calls for it.
    ThreadWithoutEvents,
    /// Several profiles on one thread; one was chosen, as DevTools does.
    ProfileNotChosen,
    /// The input has something DevTools itself would refuse or crash on; jscalls carried on.
    DevtoolsWouldFail,
    /// A node id is listed under several parents; it is duplicated as DevTools does.
    SharedNode,
    /// A node id appears twice in `nodes`; the later one wins, as in DevTools.
    DuplicateNodeId,
    /// A `.cpuprofile` shown as the Performance panel shows it has no `endTime`: the calls open
    /// at its end have no duration (`null`), as in DevTools.
    NoEndTime,
    /// The input has no CPU profile: nothing to estimate calls from.
    NoCpuProfile,
    /// Line data DevTools would read oddly or not at all: `lines` not as long as the samples,
    /// lines that are not whole positive numbers, `positionTicks` entries that are not numbers.
    /// (Nodes of native code with ticks but no URL are usual in Node's profiles: DevTools
    /// leaves them out, and so does jscalls, without a warning.)
    BadLineData,
    /// A sample's time delta moves the clock by more than a day, forwards or back: no genuine
    /// recording has one (its clock stops while the machine sleeps), so the times past it are
    /// likely wrong; they are used as given, as DevTools does.
    TimeLeap,
    /// Something else that does not fit a category.
    Other,
}

impl WarningKind {
    /// The stable code of the kind.
    pub fn code(self) -> &'static str {
        match self {
            WarningKind::Truncated => "truncated",
            WarningKind::GzipCut => "gzip-cut",
            WarningKind::ByteOrderMark => "byte-order-mark",
            WarningKind::TrailingComma => "trailing-comma",
            WarningKind::NotAnObject => "event-not-object",
            WarningKind::BadName => "bad-name",
            WarningKind::BadTimestamp => "bad-timestamp",
            WarningKind::BadPhase => "bad-phase",
            WarningKind::InvalidUtf8 => "invalid-utf8",
            WarningKind::BadThreadId => "bad-pid-tid",
            WarningKind::SamplesDeltasMismatch => "samples-deltas-mismatch",
            WarningKind::ProfileWithoutHead => "profile-without-head",
            WarningKind::EmptyProfile => "empty-profile",
            WarningKind::UnknownSampleNode => "unknown-sample-node",
            WarningKind::UnknownParent => "unreachable-node",
            WarningKind::UnpairedEnd => "unpaired-end",
            WarningKind::UnclosedBegin => "unclosed-begin",
            WarningKind::ProcessDropped => "process-dropped",
            WarningKind::ThreadWithoutEvents => "thread-without-events",
            WarningKind::ProfileNotChosen => "profile-not-chosen",
            WarningKind::DevtoolsWouldFail => "devtools-would-fail",
            WarningKind::SharedNode => "shared-node",
            WarningKind::DuplicateNodeId => "duplicate-node-id",
            WarningKind::NoEndTime => "no-end-time",
            WarningKind::NoCpuProfile => "no-cpu-profile",
            WarningKind::BadLineData => "bad-line-data",
            WarningKind::TimeLeap => "time-leap",
            WarningKind::Other => "other",
        }
    }

    /// Whether the warning only describes what DevTools does by design (a dropped process, a
    /// profile that lost the source priority), rather than something wrong with the input.
    /// Informational warnings do not fail `--strict`.
    pub fn is_informational(self) -> bool {
        matches!(
            self,
            WarningKind::ProcessDropped
                | WarningKind::ThreadWithoutEvents
                | WarningKind::ProfileNotChosen
                | WarningKind::UnclosedBegin
        )
    }
}

/// One warning with its place.
#[derive(Debug, Clone, PartialEq)]
pub struct Warning {
    /// What kind of oddity.
    pub kind: WarningKind,
    /// Where, when it has a place.
    pub location: Option<Location>,
    /// What happened and what jscalls did about it.
    pub message: String,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(l) = self.location {
            write!(f, "{l}: ")?;
        }
        write!(f, "{} [{}]", self.message, self.kind.code())
    }
}

/// Warnings counted by kind; the first few of each kind are kept in full.
#[derive(Debug, Clone, Default)]
pub struct Diagnostics {
    kept: Vec<Warning>,
    counts: BTreeMap<WarningKind, u64>,
}

/// How many warnings of one kind are kept with their messages.
pub(crate) const KEPT_PER_KIND: u64 = 5;

impl Diagnostics {
    /// Whether a warning of `kind` would be kept in full (so its location is worth computing).
    pub fn wants(&self, kind: WarningKind) -> bool {
        self.counts.get(&kind).copied().unwrap_or(0) < KEPT_PER_KIND
    }

    /// Records a warning.
    pub fn push(&mut self, kind: WarningKind, location: Option<Location>, message: impl Into<String>) {
        let n = self.counts.entry(kind).or_insert(0);
        *n += 1;
        if *n <= KEPT_PER_KIND {
            self.kept.push(Warning { kind, location, message: message.into() });
        }
    }

    /// Records a warning whose message is only built when it is kept.
    pub fn push_with(
        &mut self,
        kind: WarningKind,
        location: impl FnOnce() -> Option<Location>,
        message: impl FnOnce() -> String,
    ) {
        if self.wants(kind) {
            self.push(kind, location(), message());
        } else {
            *self.counts.entry(kind).or_insert(0) += 1;
        }
    }

    /// The kept warnings, in the order they were found.
    pub fn warnings(&self) -> &[Warning] {
        &self.kept
    }

    /// How many warnings of each kind, in kind order.
    pub fn counts(&self) -> impl Iterator<Item = (WarningKind, u64)> + '_ {
        self.counts.iter().map(|(&k, &c)| (k, c))
    }

    /// Total number of warnings.
    pub fn total(&self) -> u64 {
        self.counts.values().sum()
    }

    /// Number of warnings that are about the input (not informational).
    pub fn total_significant(&self) -> u64 {
        self.counts.iter().filter(|(k, _)| !k.is_informational()).map(|(_, c)| c).sum()
    }

    /// True when there are no warnings.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }
}
