//! The `jscalls` command: arguments → `jscalls::analyze` → an output file, written atomically.

mod alloc;

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand, ValueEnum};

use jscalls::{assemble, Assembled, Config, CpuProfileMode, Diagnostics, EngineVersion, Error, Limits, Source};

const EXAMPLES: &str = "\
Examples:
  jscalls calls trace.json.gz -o calls.json        calls of every profiled thread
  jscalls timeline trace.json -o timeline.json     the trace plus one X event per call
  node --cpu-prof app.js && jscalls calls CPU.*.cpuprofile
  curl -s .../trace.json | jscalls calls - | jq '.profiles[].callCount'
  jscalls calls app.cpuprofile --cpuprofile-mode performance-panel

Exit status: 0 success, 1 bad input or I/O error (or warnings with --strict), 2 usage error.";

#[derive(Debug, Parser)]
#[command(
    name = "jscalls",
    version,
    about = "Estimate JS call timelines from V8 CPU profiles and Chrome traces, exactly as Chrome DevTools does",
    after_help = EXAMPLES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Write the input trace with one complete (X) event per estimated JS call added on its
    /// thread: opens in DevTools, Perfetto and chrome://tracing.
    #[command(after_help = "Examples:
  jscalls timeline trace.json.gz -o timeline.json
  jscalls timeline CPU.20250101.cpuprofile -o timeline.json
  cat trace.json | jscalls timeline > timeline.json")]
    Timeline(Common),
    /// Write every estimated call of every profiled thread as compact JSON, in the DevTools
    /// oracle's format and order (diffable against it).
    #[command(after_help = "Examples:
  jscalls calls trace.json.gz -o calls.json
  jscalls calls app.cpuprofile --cpuprofile-mode performance-panel
  jscalls calls - < trace.json | jq '.profiles[] | {pid, tid, callCount}'")]
    Calls(Common),
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum CpuProfileModeArg {
    /// The same SamplesIntegrator as for traces, with no trace events.
    Integrator,
    /// The Performance panel's algorithm for a loaded .cpuprofile (forEachFrame): meta frames
    /// such as (program) and (idle) are calls, and the last sample lasts one mean interval.
    PerformancePanel,
}

#[derive(Debug, Clone, Copy, ValueEnum)]
enum EngineArg {
    /// @paulirish/trace_engine 0.0.65, the published engine that Lighthouse uses: pick it to
    /// match Lighthouse or that npm package.
    #[value(name = "0.0.65")]
    V0065,
    /// What current Chrome DevTools shows (the newest DevTools source): fake-JS mode after
    /// trace-id events, samples-only threads integrated, no auction-worklet exception.
    Latest,
}

#[derive(Debug, Args)]
struct Common {
    /// A trace (.json, JSON array or {traceEvents}) or a .cpuprofile, gzipped or not;
    /// `-` or nothing reads standard input. The kind is detected from the content.
    input: Option<PathBuf>,
    /// Where to write; `-` (the default) is standard output. A file is written to a temporary
    /// name in the same directory and renamed into place only when complete.
    #[arg(short, long, default_value = "-")]
    output: PathBuf,
    /// Flush the output file to disk before renaming it into place, so that it survives a
    /// system crash or power cut whole (costs a few milliseconds).
    #[arg(long)]
    fsync: bool,
    /// How a .cpuprofile is turned into calls.
    #[arg(long, value_enum, default_value = "integrator")]
    cpuprofile_mode: CpuProfileModeArg,
    /// Which DevTools behaviour to reproduce.
    #[arg(long, value_enum, default_value = "latest")]
    engine: EngineArg,
    /// Keep frames of V8 runtime functions (url "native V8Runtime"), like DevTools' "show all events".
    #[arg(long)]
    show_all_events: bool,
    /// Fail (exit 1, no output) when the input has anything to warn about.
    #[arg(long)]
    strict: bool,
    /// Do not print warnings.
    #[arg(short, long)]
    quiet: bool,
    /// The deepest stack accepted, in frames.
    #[arg(long, default_value_t = Limits::default().max_depth, value_name = "FRAMES")]
    max_depth: u32,
    /// The largest single event (or top-level .cpuprofile value) accepted, in bytes.
    #[arg(long, default_value_t = 1 << 30, value_name = "BYTES")]
    max_event_bytes: usize,
    /// Threads that share the work (default: the number of CPUs, at most 8; 1 runs it all on
    /// one thread; more than the CPUs adds none).
    #[arg(long, value_name = "N")]
    threads: Option<usize>,
}

impl Common {
    fn config(&self) -> Config {
        let mut cfg = Config::default();
        cfg.cpuprofile_mode = match self.cpuprofile_mode {
            CpuProfileModeArg::Integrator => CpuProfileMode::Integrator,
            CpuProfileModeArg::PerformancePanel => CpuProfileMode::PerformancePanel,
        };
        cfg.engine = match self.engine {
            EngineArg::V0065 => EngineVersion::V0_0_65,
            EngineArg::Latest => EngineVersion::Latest,
        };
        cfg.show_all_events = self.show_all_events;
        cfg.limits.max_depth = self.max_depth;
        cfg.max_event_bytes = self.max_event_bytes;
        if let Some(n) = self.threads {
            cfg.threads = n.max(1);
        }
        cfg
    }

    fn input_path(&self) -> Option<&Path> {
        self.input.as_deref().filter(|p| *p != Path::new("-"))
    }
}

/// The temporary output file being written, removed if jscalls is interrupted.
static PENDING: std::sync::Mutex<Option<PathBuf>> = std::sync::Mutex::new(None);

/// See `alloc.rs`: measured against glibc's allocator and mimalloc alone.
#[global_allocator]
static ALLOC: alloc::Split = alloc::Split;

fn main() -> ExitCode {
    // SIGINT, SIGTERM, SIGHUP: remove the temporary output (if any) and stop, so that nothing
    // half-written stays behind. The lock also waits for a rename in progress to finish.
    let _ = ctrlc::set_handler(|| {
        if let Some(p) = PENDING.lock().unwrap_or_else(|e| e.into_inner()).take() {
            let _ = fs::remove_file(p);
        }
        std::process::exit(130);
    });
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => exit_now(),
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("jscalls: error: {e}");
            ExitCode::from(if matches!(e, CliError::Usage(_)) { 2 } else { 1 })
        }
    }
}

/// Ends a successful run at once. Everything has been written and flushed by now; what is
/// left is handing memory back, which the system does anyway when the process ends: at exit,
/// mimalloc would first give back the pages it still holds, one `madvise` per span (1.5 ms
/// for the 31 MB of a 105 MB trace's run).
fn exit_now() -> ExitCode {
    if io::stdout().flush().is_err() || io::stderr().flush().is_err() {
        return ExitCode::SUCCESS;
    }
    #[cfg(unix)]
    // SAFETY: _exit ends the process without running exit handlers; the output file is
    // complete and renamed, and the standard streams are flushed above.
    unsafe {
        libc::_exit(0)
    }
    #[cfg(not(unix))]
    ExitCode::SUCCESS
}

/// The command's errors: the library's, with the input's name in front of positions.
enum CliError {
    Lib(Error),
    Named(String, Error),
    Usage(String),
}

impl CliError {
    fn is_broken_pipe(&self) -> bool {
        match self {
            CliError::Lib(e) | CliError::Named(_, e) => {
                matches!(e, Error::Io { source, .. } if source.kind() == io::ErrorKind::BrokenPipe)
            }
            CliError::Usage(_) => false,
        }
    }
}

impl std::fmt::Display for CliError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CliError::Lib(e) => write!(f, "{e}"),
            CliError::Named(name, e) => match e {
                Error::Input { location: Some(_), .. } => write!(f, "{name}:{e}"),
                _ => write!(f, "{name}: {e}"),
            },
            CliError::Usage(m) => write!(f, "{m}"),
        }
    }
}

fn run(cli: Cli) -> Result<(), CliError> {
    let (common, timeline) = match &cli.command {
        Command::Timeline(c) => (c, true),
        Command::Calls(c) => (c, false),
    };
    let cfg = common.config();
    let source = match common.input_path() {
        Some(p) => Source::file(p),
        None => Source::stdin().map_err(CliError::Lib)?,
    };
    let name = source.display_name();
    let out_path = (common.output != Path::new("-")).then_some(common.output.as_path());
    if let (Some(i), Some(o)) = (common.input_path(), out_path) {
        if same_file(i, o) {
            return Err(CliError::Usage(format!("the output {} is the input; refusing to overwrite it", o.display())));
        }
    }
    let named = |e: Error| CliError::Named(name.clone(), e);
    let (diagnostics, assembled) = assemble(&source, &cfg).map_err(named)?;
    report(&name, &diagnostics, common.quiet);
    if common.strict && diagnostics.total_significant() > 0 {
        let first = diagnostics
            .warnings()
            .iter()
            .find(|w| !w.kind.is_informational())
            .map(|w| w.to_string())
            .unwrap_or_default();
        return Err(named(Error::Strict { count: diagnostics.total_significant(), first }));
    }
    let input_label = match common.input_path() {
        Some(p) => p.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_else(|| name.clone()),
        None => "-".to_owned(),
    };
    let t = std::time::Instant::now();
    let cpu = jscalls::cpu_seconds();
    write_output(out_path, common.fsync, |w| produce(w, assembled, &source, &input_label, timeline, &cfg))
        .map_err(named)?;
    // JSCALLS_TIMING=1 prints the time of each stage on stderr (for measurements).
    if std::env::var_os("JSCALLS_TIMING").is_some() {
        eprintln!(
            "jscalls: timing: estimate+write {:.3} s, cpu {:.3} s (resident now {} MB, peak {} MB)",
            t.elapsed().as_secs_f64(),
            jscalls::cpu_seconds() - cpu,
            jscalls::memory_mb("VmRSS"),
            jscalls::memory_mb("VmHWM")
        );
    }
    Ok(())
}

/// Estimates the threads one at a time while writing them (memory holds one thread's calls).
fn produce(
    w: &mut dyn Write,
    a: Assembled,
    source: &Source,
    input_label: &str,
    timeline: bool,
    cfg: &Config,
) -> Result<(), Error> {
    if timeline {
        jscalls::output::timeline::write_timeline_from(w, source, a.lazy(cfg), cfg.max_event_bytes)
    } else {
        jscalls::output::calls::write_calls_from(w, a.lazy(cfg), input_label, cfg.engine.label(), cfg.threads)
            .map_err(|e| Error::io("cannot write the calls", e))
    }
}

/// The output's buffer. Small writes (the timeline's lines, the headers) are gathered here;
/// writes at least this large bypass it, which the calls writer's rendered parts (about 256 KB)
/// do, instead of being copied into a bigger buffer first (30 MB of copying for the generated
/// 105 MB trace's calls).
const OUT_BUFFER: usize = 128 << 10;

/// Writes to stdout, or to a temporary file next to `path` that is renamed into place on success
/// (flushed to disk first with `fsync`).
fn write_output(
    path: Option<&Path>,
    fsync: bool,
    f: impl FnOnce(&mut dyn Write) -> Result<(), Error>,
) -> Result<(), Error> {
    match path {
        None => {
            let stdout = io::stdout();
            let mut w = BufWriter::with_capacity(OUT_BUFFER, stdout.lock());
            f(&mut w)?;
            w.flush().map_err(|e| Error::io("cannot write to standard output", e))
        }
        Some(path) if fs::metadata(path).is_ok_and(|m| !m.is_file()) => {
            // A device or a pipe (`/dev/null`, `/dev/stdout`, a FIFO): write to it directly;
            // renaming a temporary file over it would replace the device with a file.
            let file = fs::OpenOptions::new()
                .write(true)
                .open(path)
                .map_err(|e| Error::io(format!("cannot open {}", path.display()), e))?;
            let mut w = BufWriter::with_capacity(OUT_BUFFER, file);
            f(&mut w)?;
            w.flush().map_err(|e| Error::io(format!("cannot write {}", path.display()), e))
        }
        Some(path) => {
            let dir = match path.parent() {
                Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
                _ => PathBuf::from("."),
            };
            let ctx = |what: &str| format!("cannot {what} {}", path.display());
            let tmp = tempfile::Builder::new()
                .prefix(".jscalls-")
                .suffix(".tmp")
                .tempfile_in(&dir)
                .map_err(|e| Error::io(ctx("create a temporary file for"), e))?;
            *PENDING.lock().unwrap_or_else(|e| e.into_inner()) = Some(tmp.path().to_path_buf());
            let mut w = BufWriter::with_capacity(OUT_BUFFER, EarlyWriteback::new(tmp, fsync));
            f(&mut w)?;
            let tmp = w.into_inner().map_err(|e| Error::io(ctx("write"), e.into_error()))?.file;
            if fsync {
                tmp.as_file().sync_all().map_err(|e| Error::io(ctx("write"), e))?;
            }
            // Temporary files are private (0600); the output gets the mode of the file it
            // replaces, or the usual 0644.
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                let mode = fs::metadata(path).map(|m| m.permissions().mode() & 0o7777).unwrap_or(0o644);
                tmp.as_file()
                    .set_permissions(fs::Permissions::from_mode(mode))
                    .map_err(|e| Error::io(ctx("set the permissions of"), e))?;
            }
            let mut pending = PENDING.lock().unwrap_or_else(|e| e.into_inner());
            tmp.persist(path).map_err(|e| Error::io(ctx("rename the output into"), e.error))?;
            *pending = None;
            Ok(())
        }
    }
}

/// A file being written that, when it is to be flushed to disk at the end (`--fsync`), asks
/// the kernel to start writing its bytes to disk a megabyte at a time, as soon as they are
/// written, so that the final `fsync` waits for the last megabyte instead of the whole output
/// (on Linux; elsewhere, or without `--fsync`, a plain file).
struct EarlyWriteback {
    file: tempfile::NamedTempFile,
    /// Whether writeback is started early.
    early: bool,
    /// Bytes written so far, and bytes whose writeback has been started.
    written: u64,
    started: u64,
}

impl EarlyWriteback {
    /// Writeback is started per this many bytes. The final `fsync` waits for up to this much
    /// besides the file's metadata: with 1 MiB it took 1.0-1.2 ms at the end of a 30 MB
    /// output, against 1.3-1.7 ms with 4 MiB.
    const STEP: u64 = 1 << 20;

    fn new(file: tempfile::NamedTempFile, early: bool) -> EarlyWriteback {
        EarlyWriteback { file, early, written: 0, started: 0 }
    }
}

impl Write for EarlyWriteback {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.file.write(buf)?;
        self.written += n as u64;
        if self.early && self.written - self.started >= Self::STEP {
            #[cfg(target_os = "linux")]
            {
                use std::os::fd::AsRawFd;
                // SAFETY: sync_file_range only reads its integer arguments; the descriptor is
                // open for as long as `self.file` lives. A failure is harmless (the final fsync
                // reports real errors), so its result is not checked.
                unsafe {
                    libc::sync_file_range(
                        self.file.as_file().as_raw_fd(),
                        self.started as libc::off64_t,
                        (self.written - self.started) as libc::off64_t,
                        libc::SYNC_FILE_RANGE_WRITE,
                    );
                }
            }
            self.started = self.written;
        }
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (fs::canonicalize(a), fs::canonicalize(b)) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    }
}

/// Prints the kept warnings (and notes, for what DevTools does by design) and a summary.
fn report(name: &str, d: &Diagnostics, quiet: bool) {
    if quiet || d.is_empty() {
        return;
    }
    let stderr = io::stderr();
    let mut e = stderr.lock();
    for w in d.warnings() {
        let label = if w.kind.is_informational() { "note" } else { "warning" };
        let _ = match w.location {
            Some(_) => writeln!(e, "jscalls: {label}: {name}:{w}"),
            None => writeln!(e, "jscalls: {label}: {name}: {w}"),
        };
    }
    let parts: Vec<String> = d.counts().map(|(k, c)| format!("{} ×{c}", k.code())).collect();
    let more = d.total().saturating_sub(d.warnings().len() as u64);
    let notes = d.total() - d.total_significant();
    let _ = writeln!(
        e,
        "jscalls: {} warning(s), {notes} note(s){}: {}",
        d.total_significant(),
        if more > 0 { format!(" ({more} not shown)") } else { String::new() },
        parts.join(", ")
    );
}
