//! `jscalls export`: the chosen threads' calls for other tools. One file per format, each
//! with its [`Format`] (its name, the file names that say it, its writer), listed in
//! [`FORMATS`]: a new format is a file and a line there.

use jscalls::ranges::{Query, Selection};
use std::io::{self, Write};

use clap::builder::PossibleValue;
use jscalls::tree::CollapsedTree;
use jscalls::{Assembled, Config, Error};

use super::args::{ExportArgs, Global, WeightArg};
use super::each::{self, Estimated, PerInput};
use super::files::Reads;
use super::output::Output;
use super::report::failure;
use super::sources::SourceDirs;
use super::tree::{self, Chosen, Failure};
use super::Failed;
use rustc_hash::FxHashMap as HashMap;

mod collapsed;
pub(crate) use collapsed::fold_below;
mod firefox;
pub(crate) mod pprof;
mod speedscope;
mod svg;

/// One output format: what `--to` calls it, the file names that say it, and its writer.
pub(crate) struct Format {
    /// What `--to` takes.
    pub(crate) name: &'static str,
    /// What it writes, for messages.
    pub(crate) what: &'static str,
    /// Its line in `--help`.
    help: &'static str,
    /// The suffix of an output named after its input.
    suffix: &'static str,
    /// Endings of a file name (a `.gz` aside) that say the format; the longest that matches
    /// wins.
    endings: &'static [&'static str],
    /// Whether it shows the calls in time (it needs each thread's spans).
    spans: bool,
    /// Whether it also weighs the CPU profile's samples (it needs each thread's sample stacks).
    counts: bool,
    /// Whether it shows the trace events (it needs each thread's events).
    markers: bool,
    /// Whether it reads the stacks' samples (their weights), not only the spans.
    samples: bool,
    /// The output of the chosen threads of `input`, with up to `threads` threads.
    render: fn(kept: Vec<Chosen>, args: &ExportArgs, input: &str, threads: usize) -> Result<Rendered, Failure>,
}

/// A format as `--to` takes it.
#[derive(Clone, Copy)]
pub(crate) struct ExportTo(pub(crate) &'static Format);

/// Every format, in `--help`'s order.
static FORMATS: [ExportTo; 5] = [
    ExportTo(&speedscope::FORMAT),
    ExportTo(&firefox::FORMAT),
    ExportTo(&collapsed::FORMAT),
    ExportTo(&svg::FORMAT),
    ExportTo(&pprof::FORMAT),
];

impl std::fmt::Debug for ExportTo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name)
    }
}

impl PartialEq for ExportTo {
    fn eq(&self, other: &ExportTo) -> bool {
        std::ptr::eq(self.0, other.0)
    }
}

impl clap::ValueEnum for ExportTo {
    fn value_variants<'a>() -> &'a [ExportTo] {
        &FORMATS
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(self.0.name).help(self.0.help))
    }
}

impl ExportTo {
    /// The format an output's name says: the longest ending that matches.
    pub(crate) fn from_path(p: &std::path::Path) -> Option<ExportTo> {
        let name = p.file_name()?.to_str()?.to_ascii_lowercase();
        let name = name.strip_suffix(".gz").unwrap_or(&name);
        FORMATS
            .iter()
            .flat_map(|f| f.0.endings.iter().map(move |e| (*e, *f)))
            .filter(|(e, _)| name.ends_with(e))
            .max_by_key(|(e, _)| e.len())
            .map(|(_, f)| f)
    }
}

struct Export<'a> {
    args: &'a ExportArgs,
    format: &'static Format,
    /// `--source`.
    dirs: Option<SourceDirs>,
    quiet: bool,
}

impl PerInput for Export<'_> {
    fn suffix(&self) -> &'static str {
        self.format.suffix
    }

    /// The events inside calls are in the stacks; the Firefox Profiler shows them as markers too.
    fn keeps_event_names(&self) -> bool {
        true
    }

    fn keeps_lines(&self) -> bool {
        self.args.select.by_line
    }

    /// Exports of the calls' self time read no sample once the calls are made, but pprof's
    /// sample counts (with `--by-line` the lines keep them).
    fn keeps_samples(&self) -> bool {
        self.format.counts || self.args.select.weight != WeightArg::SelfTime
    }

    /// The Firefox Profiler's source view shows them.
    fn keeps_script_texts(&self) -> bool {
        self.shows_sources()
    }

    fn shows_sources(&self) -> bool {
        std::ptr::eq(self.format, &firefox::FORMAT) && !self.args.no_sources
    }

    fn range(&self) -> Option<&Query> {
        self.args.select.range.query()
    }

    fn write(&self, e: Estimated<'_>, output: Output) -> Result<(), Failed> {
        let Estimated { assembled, cfg, label, name, timing, range, .. } = e;
        let sources = Sources { dirs: self.dirs.as_ref(), output: output.target() };
        let rendered = render(assembled, self.args, self.format, label, cfg.threads, sources, range.as_ref()).map_err(
            |f| match f {
                Failure::Usage(m) => Failed::Usage(m),
                Failure::Input(err) => failure(name, err),
            },
        )?;
        if let (Rendered::Firefox { missing, .. }, false) = (&rendered, self.quiet) {
            if let Some(first) = missing.first() {
                say!(
                    "jscalls: {name}: --source: {} of the profile's scripts are not in the folders given (first: {first})",
                    missing.len()
                );
            }
        }
        if let Some(t) = timing {
            t.report("estimate+render");
        }
        output
            .write(|w| rendered.write_to(w).map_err(|err| Error::io("cannot write the output", err)))
            .map_err(|err| failure(name, err))
    }
}

pub(crate) fn run(args: &ExportArgs, global: &Global, cfg: &Config, reads: Reads) -> Result<(), Failed> {
    crate::cli::no_bounds(global, "export")?;
    let out = args.out.output.as_deref().filter(|o| *o != std::path::Path::new("-"));
    let format = match (args.to, out.and_then(ExportTo::from_path)) {
        // Only a name that says another format disagrees: a plain `.json` may be anything.
        (Some(to), Some(named)) if to != named && named != ExportTo(&firefox::FORMAT) => {
            return Err(Failed::Usage(format!(
                "--to {} writes {}, but -o {} names {}: give a name that says it, or leave out --to",
                to.0.name,
                to.0.what,
                out.map(|o| o.display().to_string()).unwrap_or_default(),
                named.0.what
            )))
        }
        (Some(f), _) | (None, Some(f)) => f.0,
        (None, None) => {
            let names: Vec<&str> = FORMATS.iter().map(|f| f.0.name).collect();
            return Err(Failed::Usage(format!(
                "export: give --to {}, or -o a name that says it (x.speedscope.json, x.json.gz, x.collapsed, x.svg, x.pb.gz)",
                names.join("|")
            )));
        }
    };
    if !std::ptr::eq(format, &firefox::FORMAT) && args.no_sources {
        return Err(Failed::Usage("--no-sources is for the Firefox profile's source view: --to firefox".to_owned()));
    }
    if !std::ptr::eq(format, &svg::FORMAT) && args.icicle {
        return Err(Failed::Usage("--icicle draws an SVG: --to svg".to_owned()));
    }
    if std::ptr::eq(format, &speedscope::FORMAT) && args.by_time {
        return Err(Failed::Usage("--by-time is for collapsed stacks and SVG; speedscope has both views".to_owned()));
    }
    let dirs = match (&args.sources[..], std::ptr::eq(format, &firefox::FORMAT)) {
        ([], _) => None,
        (_, false) => {
            return Err(Failed::Usage(
                "--source puts scripts' text into a Firefox profile, for its source view: --to firefox".to_owned(),
            ))
        }
        (dirs, true) => Some(SourceDirs::new(dirs, "--source").map_err(Failed::Usage)?),
    };
    each::run(&args.out, &Export { args, format, dirs, quiet: global.quiet }, global, cfg, reads)
}

/// The format `--to NAME` names.
pub(crate) fn format_named(name: &str) -> Option<&'static Format> {
    FORMATS.iter().map(|f| f.0).find(|f| f.name == name)
}

/// A thread's name as the exports show it.
pub(super) fn thread_label(c: &Chosen) -> String {
    format!("{} (pid {}, tid {})", c.name.as_deref().unwrap_or("thread"), c.pid, c.tid)
}

/// A writer of an output, called once with where it goes.
pub(crate) type WriteLater = Box<dyn FnOnce(&mut dyn Write) -> io::Result<()>>;

/// An export, ready to be written.
pub(crate) enum Rendered {
    Bytes(Vec<u8>),
    /// Written as it is made, from what it holds (a document larger than what it is made of).
    Stream(WriteLater),
    /// Collapsed stacks written from their trees 512 lines at a time (not gathered first: a
    /// copy as large as the output), made on up to `threads` threads.
    Collapsed {
        trees: Vec<CollapsedTree>,
        threads: usize,
    },
    /// The Firefox Profiler's profile: each thread's tables, its samples and markers written
    /// on up to `threads` threads.
    Firefox {
        head: firefox::Head,
        parts: Vec<firefox::ThreadPart>,
        threads: usize,
        /// Scripts `--source` was asked for and does not have.
        missing: Vec<String>,
    },
}

impl Rendered {
    pub(crate) fn write_to(self, w: &mut dyn Write) -> io::Result<()> {
        match self {
            Rendered::Bytes(b) => w.write_all(&b),
            Rendered::Stream(write) => write(w),
            Rendered::Collapsed { trees, threads } => trees.iter().try_for_each(|t| t.write_lines(0, threads, w)),
            Rendered::Firefox { head, parts, threads, .. } => firefox::write(&head, &parts, threads, w),
        }
    }
}

/// The whole output for `assembled`, in `format`.
pub(crate) fn render(
    assembled: Assembled,
    args: &ExportArgs,
    format: &Format,
    input: &str,
    threads: usize,
    sources: Sources<'_>,
    window: Option<&Selection>,
) -> Result<Rendered, Failure> {
    let firefox = std::ptr::eq(format, &firefox::FORMAT);
    let texts: HashMap<String, String> = if firefox && !args.no_sources {
        let mut texts = HashMap::default();
        for (u, t) in assembled.source_texts() {
            texts.entry(u.to_owned()).or_insert_with(|| t.to_owned());
        }
        texts
    } else {
        HashMap::default()
    };
    let wants = tree::Wants {
        spans: format.spans || args.by_time,
        counts: format.counts,
        events: format.markers,
        samples: format.samples,
        // pprof sums each stack's rounded values: held one a stack from the start.
        rounded: std::ptr::eq(format, &pprof::FORMAT).then(|| pprof::scale(args)),
        per_stack: false,
        per_name: std::ptr::eq(format, &collapsed::FORMAT) || std::ptr::eq(format, &svg::FORMAT),
    };
    let kept = tree::choose(assembled, &args.select, window, wants)?;
    if kept.is_empty() {
        // The input's doing, not the command line's: exit 1, as for any input with nothing usable.
        return Err(Failure::Input(Error::input(None, "no thread has estimated calls to export")));
    }
    let mut rendered = (format.render)(kept, args, input, threads)?;
    if let Rendered::Firefox { head, parts, missing, .. } = &mut rendered {
        (head.sources, *missing) = firefox::sources(parts, texts, sources.dirs, sources.output)?;
    }
    Ok(rendered)
}

/// Where the Firefox export finds the text of scripts the trace does not carry.
#[derive(Default, Clone, Copy)]
pub(crate) struct Sources<'a> {
    /// `--source`.
    pub(crate) dirs: Option<&'a SourceDirs>,
    /// The output, which is never read as a source.
    pub(crate) output: Option<&'a std::path::Path>,
}
