//! # jscalls
//!
//! Estimates when JavaScript calls started and ended from V8 CPU-profile samples, exactly as
//! Chrome DevTools does (its trace engine's `SamplesIntegrator`), and writes the result as a
//! timeline trace or as a calls JSON.
//!
//! **In:** a V8 `.cpuprofile` (`node --cpu-prof`, CDP `Profiler.stop`) or a Chrome / Node trace
//! (a JSON array of events or `{"traceEvents": [...]}`, gzip or not) with `Profile` /
//! `ProfileChunk` events. **Out:** per profiled thread, the estimated calls (start, duration,
//! self time, depth, frame), field for field what DevTools computes.
//!
//! ```text
//! input (bytes → RawEvent / profile JSON)     streamed, scanned in parallel, delivered in order
//!   → model (profiles, per-thread entries)    SamplesHandler, RendererHandler, MetaHandler
//!   → estimate (ProfileCalls per thread)      SamplesIntegrator / forEachFrame, treify
//!   → output (calls JSON, timeline trace)
//! ```
//!
//! ```
//! use jscalls::{analyze, Config, Source};
//! let profile = r#"{"nodes":[{"id":1,"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1}},
//!   {"id":2,"parent":1,"callFrame":{"functionName":"work","scriptId":"1","url":"a.js","lineNumber":3,"columnNumber":0}}],
//!   "samples":[2,2,1],"timeDeltas":[100,100,100],"startTime":0,"endTime":300}"#;
//! let a = analyze(&Source::Memory(profile.as_bytes().into()), &Config::default()).unwrap();
//! let t = &a.timeline.threads[0];
//! assert_eq!(t.calls.len(), 1);
//! assert_eq!((t.calls[0].ts, t.calls[0].dur), (100.0, 200.0));
//! ```

#![warn(missing_docs)]

pub mod error;
pub mod estimate;
pub mod input;
pub mod js;
pub mod model;
pub mod output;
pub mod parallel;
pub mod strings;

pub use error::{Diagnostics, Error, Location, Warning, WarningKind};
pub use estimate::{Call, Mode, ThreadCalls, Timeline};
pub use input::Source;
pub use model::profile::Limits;
pub use model::trace::EngineVersion;

use estimate::IntegratorConfig;
use input::document::{read_document, Document};
use input::loose::{IdArray, Loose, NumArray};
use input::reader::serde_message;
use input::shapes::{CpuProfileJson, NodeJson};
use model::profile::ProfileModel;
use model::trace::{raw_from_cpuprofile, report_model, ThreadWork, TraceBuilder};

/// How a bare `.cpuprofile` is turned into calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CpuProfileMode {
    /// The SamplesIntegrator with no trace events (the same algorithm as for traces).
    Integrator,
    /// The Performance panel's own `forEachFrame` algorithm for a loaded `.cpuprofile`.
    PerformancePanel,
}

/// Options. The defaults are DevTools' defaults.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Config {
    /// How a `.cpuprofile` is estimated. Default: [`CpuProfileMode::Integrator`].
    pub cpuprofile_mode: CpuProfileMode,
    /// Keep `native V8Runtime` frames (DevTools' `showAllEvents`). Default: false.
    pub show_all_events: bool,
    /// Which DevTools to follow. Default: [`EngineVersion::Latest`], what current Chrome shows.
    pub engine: EngineVersion,
    /// Depth and size guards. Default: [`Limits::default`].
    pub limits: Limits,
    /// The largest single JSON value (one event) accepted, in bytes. Default: 1 GiB.
    pub max_event_bytes: usize,
    /// Threads that share the work: reading, profile models, estimates, rendering. Default: the
    /// number of CPUs (at most 8); 1 runs it all on the calling thread. The workers come from
    /// one pool per process, one per CPU but one (at most 7: the calling thread is the
    /// eighth), so more than that adds none.
    pub threads: usize,
    /// Set to the bytes of the event array read so far (decompressed), as reading advances: for
    /// a progress display on another thread. Default: none.
    pub progress: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            cpuprofile_mode: CpuProfileMode::Integrator,
            show_all_events: false,
            engine: EngineVersion::Latest,
            limits: Limits::default(),
            max_event_bytes: 1 << 30,
            threads: std::thread::available_parallelism().map(|n| n.get().min(8)).unwrap_or(1),
            progress: None,
        }
    }
}

/// What kind of input was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// A trace (array or `{traceEvents}`).
    Trace,
    /// A `.cpuprofile`.
    CpuProfile,
}

/// The result of [`analyze`].
#[derive(Debug)]
pub struct Analysis {
    /// The calls.
    pub timeline: Timeline,
    /// Warnings, counted by kind.
    pub diagnostics: Diagnostics,
    /// What the input was.
    pub kind: InputKind,
    /// Number of trace events read (0 for a `.cpuprofile`).
    pub n_events: u64,
}

/// Reads `source` and estimates its calls.
pub fn analyze(source: &Source, cfg: &Config) -> Result<Analysis, Error> {
    // JSCALLS_TIMING=1 prints the time of each stage on stderr (for measurements).
    let timing = std::env::var_os("JSCALLS_TIMING").is_some();
    let t0 = std::time::Instant::now();
    let (diag, assembled) = assemble(source, cfg)?;
    let t1 = std::time::Instant::now();
    let kind = assembled.kind;
    let n_events = assembled.n_events;
    let timeline = estimate_model(assembled, cfg);
    if timing {
        eprintln!(
            "jscalls: timing: read+parse+assemble {:.3} s, estimate {:.3} s (resident now {} MB, peak {} MB)",
            (t1 - t0).as_secs_f64(),
            t1.elapsed().as_secs_f64(),
            memory_mb("VmRSS"),
            memory_mb("VmHWM"),
        );
    }
    Ok(Analysis { timeline, diagnostics: diag, kind, n_events })
}

/// The input read and assembled: per-thread profiles and events, ready to estimate.
#[derive(Debug)]
pub struct Assembled {
    /// What the input was.
    pub kind: InputKind,
    /// Trace events read.
    pub n_events: u64,
    /// The threads to estimate.
    pub threads: Vec<ThreadWork>,
    mode: estimate::Mode,
    strings: strings::Strings,
}

/// Reads every event of `source` into `sink` (the scan alone; for measurements).
pub fn scan_all<S: input::document::Sink>(source: &Source, sink: &mut S, cfg: &Config) -> Result<Diagnostics, Error> {
    let mut diag = Diagnostics::default();
    let mut w = source.window(cfg.max_event_bytes)?;
    read_document(&mut w, sink, &mut diag, cfg.threads)?;
    Ok(diag)
}

/// Reads `source` and assembles its profiles and per-thread events (everything before the estimate).
pub fn assemble(source: &Source, cfg: &Config) -> Result<(Diagnostics, Assembled), Error> {
    let mut diag = Diagnostics::default();
    let t_read = std::time::Instant::now();
    let cpu_read = cpu_seconds();
    let mut w = source.window(cfg.max_event_bytes)?;
    w.progress = cfg.progress.clone();
    let mut builder = TraceBuilder::new(cfg.limits, cfg.engine);
    let doc = read_document(&mut w, &mut builder, &mut diag, cfg.threads)?;
    match doc {
        Document::Trace { metadata, n_events, .. } => {
            if std::env::var_os("JSCALLS_TIMING").is_some() {
                eprintln!(
                    "jscalls: timing: events read {:.3} s, cpu {:.3} s (resident now {} MB: {} MB allocated, {} MB of files)",
                    t_read.elapsed().as_secs_f64(),
                    cpu_seconds() - cpu_read,
                    memory_mb("VmRSS"),
                    memory_mb("RssAnon"),
                    memory_mb("RssFile")
                );
            }
            let t = std::time::Instant::now();
            let cpu = cpu_seconds();
            let tm = builder.finish(metadata.as_deref(), &mut diag, cfg.threads)?;
            if std::env::var_os("JSCALLS_TIMING").is_some() {
                eprintln!(
                    "jscalls: timing: profile models {:.3} s, cpu {:.3} s (resident now {} MB, peak {} MB)",
                    t.elapsed().as_secs_f64(),
                    cpu_seconds() - cpu,
                    memory_mb("VmRSS"),
                    memory_mb("VmHWM")
                );
            }
            let mode = if tm.cpu_profile_origin { estimate::Mode::CpuProfile } else { estimate::Mode::Trace };
            Ok((diag, Assembled { kind: InputKind::Trace, n_events, threads: tm.threads, mode, strings: tm.strings }))
        }
        Document::CpuProfile { fields, location } => {
            let mut strings = strings::Strings::default();
            let json = cpuprofile_json(&fields, location)?;
            let raw = raw_from_cpuprofile(&json, &mut strings, Some(location))?;
            let mode = match cfg.cpuprofile_mode {
                CpuProfileMode::Integrator => estimate::Mode::Integrator,
                CpuProfileMode::PerformancePanel => estimate::Mode::CpuProfile,
            };
            let mut threads = Vec::new();
            if raw.nodes.is_empty() && mode == estimate::Mode::CpuProfile {
                diag.push(
                    WarningKind::EmptyProfile,
                    Some(location),
                    "the profile has no nodes; DevTools shows nothing",
                );
            } else {
                let model = ProfileModel::new(raw, &strings, cfg.limits, "profile", Some(location))?;
                report_model(&model, "profile", location, &mut diag);
                threads.push(ThreadWork {
                    pid: 1,
                    tid: 1,
                    profile_id: "\"0x1\"".to_owned(),
                    thread_name: None,
                    model,
                    entries: Vec::new(),
                    trace_values: Vec::new(),
                    skipped: None,
                });
            }
            Ok((diag, Assembled { kind: InputKind::CpuProfile, n_events: 0, threads, mode, strings }))
        }
    }
}

/// CPU time of the process so far, all threads, user and system (for `JSCALLS_TIMING`; 0
/// where it is not known).
pub fn cpu_seconds() -> f64 {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: getrusage only writes the struct it is given.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut u) } == 0 {
            let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
            return s(u.ru_utime) + s(u.ru_stime);
        }
    }
    0.0
}

/// A memory figure of this process from `/proc/self/status` (Linux; 0 elsewhere), in MB, for
/// the `JSCALLS_TIMING` report.
pub fn memory_mb(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let line = status.lines().find(|l| l.starts_with(field)).unwrap_or("");
    line.split_whitespace().nth(1).and_then(|kb| kb.parse::<u64>().ok()).unwrap_or(0) / 1024
}

/// Estimates the calls of an assembled input.
pub fn estimate_model(a: Assembled, cfg: &Config) -> Timeline {
    let threads = estimate::estimate_all(a.threads, a.mode, integrator_config(cfg), cfg.threads);
    Timeline { mode: a.mode, strings: a.strings, threads }
}

fn integrator_config(cfg: &Config) -> IntegratorConfig {
    IntegratorConfig { show_all_events: cfg.show_all_events, version: cfg.engine, threads: cfg.threads }
}

impl Assembled {
    /// The threads, to be estimated one at a time as a writer reaches them
    /// (`output::calls::write_calls_from`, `output::timeline::write_timeline_from`): the same
    /// output as [`estimate_model`], with one thread's calls in memory instead of all of them.
    pub fn lazy(self, cfg: &Config) -> estimate::Lazy {
        estimate::Lazy {
            mode: self.mode,
            strings: self.strings,
            works: self.threads,
            cfg: integrator_config(cfg),
            threads: cfg.threads,
        }
    }
}

/// Parses the kept top-level fields of a `.cpuprofile`.
fn cpuprofile_json(fields: &[(String, Vec<u8>)], location: Location) -> Result<CpuProfileJson<'_>, Error> {
    let mut json = CpuProfileJson::default();
    for (key, raw) in fields {
        let fail =
            |e: serde_json::Error| Error::input(Some(location), format!("the \"{key}\" value: {}", serde_message(&e)));
        match key.as_str() {
            "nodes" => json.nodes = serde_json::from_slice::<Option<Vec<NodeJson>>>(raw).map_err(fail)?,
            "samples" => json.samples = serde_json::from_slice::<Option<IdArray>>(raw).map_err(fail)?,
            "timeDeltas" => json.time_deltas = serde_json::from_slice::<Option<NumArray>>(raw).map_err(fail)?,
            "startTime" => json.start_time = serde_json::from_slice::<Loose>(raw).map_err(fail)?,
            "endTime" => json.end_time = serde_json::from_slice::<Loose>(raw).map_err(fail)?,
            "head" => json.head = Some(serde::de::IgnoredAny),
            _ => {}
        }
    }
    Ok(json)
}
