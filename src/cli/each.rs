//! The commands that read each input and write one output per input (`calls`, `timeline`,
//! `tree`, `export`): the inputs and their outputs planned before any work, then each input
//! read, estimated and handed to its command's writer.

use std::io::{self, IsTerminal, Write};
use std::path::{Path, PathBuf};

use jscalls::ranges::{Query, Selection, Timings};
use jscalls::{assemble, Assembled, Config, Diagnostics, Error, Source, TimelineStart};

use super::args::{Global, OutputArgs};
use super::files::Reads;
use super::frames::UserMaps;
use super::output::{same_file, spill_stream, stem, Output};
use super::report::{failure, report, strict, Progress, Timing};
use super::Failed;

/// What a per-input command writes.
pub(crate) trait PerInput {
    /// Each output's suffix when several inputs are written to `-o DIR`.
    fn suffix(&self) -> &'static str;
    /// Whether several inputs may be written one after another to standard output, each
    /// under its input's name (text meant for a person).
    fn shares_stdout(&self) -> bool {
        false
    }
    /// Whether the output begins with the input's events, copied (the timeline): into a file
    /// they are copied while the input is read, and the job's [`PerInput::write`] is not
    /// called; to standard output or a device their runs are noted as the input is read and
    /// [`Estimated::notes`] holds them, to be copied from a second read once the first has
    /// succeeded (a stream kept in a temporary file first), so that a failure writes nothing.
    fn copies_events(&self) -> bool {
        false
    }
    /// Whether the trace events' names are kept for the writer.
    fn keeps_event_names(&self) -> bool {
        false
    }
    /// Whether the profiles' line data is kept for the writer.
    fn keeps_lines(&self) -> bool {
        false
    }
    /// Whether each thread's samples are kept for the writer once its calls are made.
    fn keeps_samples(&self) -> bool {
        true
    }
    /// Whether the writer shows the scripts' text the trace carries (kept even with
    /// `--no-source-maps`).
    fn keeps_script_texts(&self) -> bool {
        false
    }
    /// Whether the writer shows original sources (the maps' `sourcesContent` is then kept).
    fn shows_sources(&self) -> bool {
        false
    }
    /// Whether the source maps given are applied before the writer sees the input (its
    /// functions then named and placed as DevTools shows them).
    fn applies_source_maps(&self) -> bool {
        true
    }
    /// The range the writer looks at, found in each input before it writes.
    fn range(&self) -> Option<&Query> {
        None
    }
    /// The names whose complete events the writer needs among the [`Timings`].
    fn range_event_names(&self) -> Vec<String> {
        self.range().map_or_else(Vec::new, |q| Timings::names_for(&[q]))
    }
    /// Writes one input's output; errors are printed under the input's name.
    fn write(&self, input: Estimated<'_>, output: Output) -> Result<(), Failed>;
}

/// One input, estimated, with what its writer may need.
pub(crate) struct Estimated<'a> {
    pub(crate) assembled: Assembled,
    /// Where it was read from (the timeline reads it again).
    pub(crate) source: &'a Source,
    pub(crate) diagnostics: &'a Diagnostics,
    pub(crate) cfg: &'a Config,
    /// The input's file name as outputs label it (`-` for standard input).
    pub(crate) label: &'a str,
    /// The input as messages name it.
    pub(crate) name: &'a str,
    /// Whether the output is standard output on a terminal.
    pub(crate) to_terminal: bool,
    pub(crate) timing: Option<&'a Timing>,
    /// The range asked for ([`PerInput::range`]), found in this input.
    pub(crate) range: Option<Selection>,
    /// The runs of events the read noted, for a job that [copies them](PerInput::copies_events).
    pub(crate) notes: Option<TimelineStart>,
}

/// Runs `job` on each input of `args`; `reads` holds the files options read.
pub(crate) fn run(
    args: &OutputArgs,
    job: &dyn PerInput,
    global: &Global,
    cfg: &Config,
    mut reads: Reads,
) -> Result<(), Failed> {
    let inputs: Vec<Option<&Path>> = if args.inputs.is_empty() {
        vec![None]
    } else {
        args.inputs.iter().map(|p| (p != Path::new("-")).then_some(p.as_path())).collect()
    };
    if inputs.iter().filter(|i| i.is_none()).count() > 1 {
        return Err(Failed::Usage("standard input (-) can be read only once".to_owned()));
    }
    if inputs.contains(&None) && io::stdin().is_terminal() {
        return Err(Failed::Usage(
            "no input: give a trace, .cpuprofile or Firefox profile (jscalls calls trace.json), or pipe one in; --help for more"
                .to_owned(),
        ));
    }
    for i in inputs.iter().flatten() {
        reads.add(i, "the input");
    }
    let outputs = plan_outputs(&inputs, args.output.as_deref(), job)?;
    for o in &outputs {
        reads.refuse(o.as_deref())?;
    }
    let mut maps = if job.applies_source_maps() { UserMaps::wanted(&global.source_maps)? } else { None };
    if let Some(m) = maps.as_mut() {
        m.keep_sources = job.shows_sources();
    }
    let mut failed = false;
    for (input, output) in inputs.iter().zip(&outputs) {
        let name = input.map_or_else(|| "<stdin>".to_owned(), |p| p.display().to_string());
        if inputs.len() > 1 && output.is_none() {
            // Several summaries on standard output: each under its input's name.
            let mut stdout = io::stdout().lock();
            let _ = writeln!(stdout, "{name}");
        }
        match run_one(*input, output.as_deref(), job, global, cfg, args.fsync, maps.as_ref()) {
            Ok(()) => {}
            Err(Failed::Usage(m)) => return Err(Failed::Usage(m)),
            Err(Failed::Pipe) => return Ok(()),
            Err(Failed::Reported) => failed = true,
            Err(e @ (Failed::Regression | Failed::NotMeasured)) => return Err(e),
        }
    }
    if failed {
        Err(Failed::Reported)
    } else {
        Ok(())
    }
}

/// Each input's output path (None: standard output), decided before any work. `-o DIR` (an
/// existing directory, or a name ending in `/`) gets one `NAME<suffix>` per input, however
/// many there are; standard input's NAME is `stdin`.
fn plan_outputs(
    inputs: &[Option<&Path>],
    output: Option<&Path>,
    job: &dyn PerInput,
) -> Result<Vec<Option<PathBuf>>, Failed> {
    let output = output.filter(|o| *o != Path::new("-"));
    let names_a_directory = output.is_some_and(|o| o.is_dir() || o.as_os_str().to_string_lossy().ends_with('/'));
    match output {
        Some(dir) if names_a_directory => {
            if !dir.is_dir() {
                let why = if dir.exists() { "is not a directory" } else { "does not exist" };
                return Err(Failed::Usage(format!("-o {}: the directory {why}", dir.display())));
            }
            let suffix = job.suffix();
            let mut out: Vec<Option<PathBuf>> = Vec::new();
            for input in inputs {
                let name = input.map_or_else(|| "stdin".to_owned(), stem);
                let path = dir.join(format!("{name}{suffix}"));
                if out.iter().flatten().any(|o| *o == path || same_file(o, &path)) {
                    return Err(Failed::Usage(format!("two inputs would both be written to {}", path.display())));
                }
                out.push(Some(path));
            }
            Ok(out)
        }
        _ if inputs.len() == 1 => Ok(vec![output.map(Path::to_path_buf)]),
        Some(o) => Err(Failed::Usage(format!(
            "{} inputs need -o DIR, an existing directory (one output per input); {} is not one",
            inputs.len(),
            o.display()
        ))),
        None if job.shares_stdout() => Ok(vec![None; inputs.len()]),
        None => Err(Failed::Usage(format!(
            "{} inputs need -o DIR, an existing directory (one output per input), or --format summary",
            inputs.len()
        ))),
    }
}

/// Reads one input and writes its output; errors are printed here, under the input's name.
fn run_one(
    input: Option<&Path>,
    out_path: Option<&Path>,
    job: &dyn PerInput,
    global: &Global,
    cfg: &Config,
    fsync: bool,
    maps: Option<&UserMaps>,
) -> Result<(), Failed> {
    let name = input.map_or_else(|| "<stdin>".to_owned(), |p| p.display().to_string());
    let fail = |e: Error| failure(&name, e);
    // The output is created first: a path that cannot be written fails before the work.
    let output = Output::create(out_path, fsync, cfg.threads).map_err(fail)?;
    let source = match input {
        Some(p) => Source::file(p),
        None => Source::stdin(),
    };
    // A stream read twice is kept in a temporary file on the way (removed when dropped).
    let mut _spill = None;
    let copy_while_reading = job.copies_events() && output.is_temp();
    let source = if job.copies_events() && !copy_while_reading && !source.can_reread() {
        let tmp = spill_stream(&source).map_err(fail)?;
        let s = Source::file(tmp.path());
        _spill = Some(tmp);
        s
    } else {
        source
    };
    let progress = Progress::start(input, global.quiet);
    let mut cfg = cfg.clone();
    cfg.progress = progress.as_ref().map(|p| p.bytes.clone());
    cfg.keep_event_names = job.keeps_event_names();
    cfg.keep_lines = job.keeps_lines();
    cfg.keep_samples = job.keeps_samples();
    cfg.keep_scripts |= job.keeps_script_texts();
    if job.range().is_some() {
        // A range is found from the trace's bounds (computed with the names) and its timings.
        cfg.keep_event_names = true;
    }
    cfg.range_event_names = job.range_event_names();
    let timing = Timing::start();
    // What follows the read; its failure is reported, and writes nothing.
    let read = |assembled: Result<(Diagnostics, Assembled), Error>| {
        let (diagnostics, mut assembled) = assembled.map_err(fail)?;
        if let Some(t) = &timing {
            t.report_stages(&assembled);
        }
        report(&name, &diagnostics, global.quiet, global.verbose);
        strict(global, &name, &diagnostics)?;
        if let Some(maps) = maps {
            let timing = Timing::start();
            if super::frames::apply(&mut assembled, maps, &name, global)? {
                if let Some(t) = &timing {
                    t.report("source maps");
                }
            }
        }
        let range = match job.range() {
            Some(q) => Some(super::range::resolve(q, &assembled, &name)?),
            None => None,
        };
        Ok((diagnostics, assembled, range))
    };
    if copy_while_reading {
        // A failure after the read stops the writing (the file is not kept) and is reported.
        let mut failed = None;
        let written = output.write(|w| {
            let read_back = jscalls::assemble_timeline(&source, &cfg, w);
            drop(progress);
            let (diagnostics, assembled, start) = read_back?;
            match read(Ok((diagnostics, assembled))) {
                Ok((_, assembled, _)) => {
                    let timing = Timing::start();
                    let r = assembled.finish_timeline(w, start);
                    if let Some(t) = &timing {
                        t.report("estimate+write");
                    }
                    r
                }
                Err(f) => {
                    failed = Some(f);
                    Err(Error::input(None, "stopped"))
                }
            }
        });
        return match failed {
            Some(f) => Err(f),
            None => written.map_err(fail),
        };
    }
    let (assembled, notes) = if job.copies_events() {
        // The events' runs are noted as the input is read, to be copied once it has succeeded.
        match TimelineStart::note(&source, &cfg) {
            Ok((diagnostics, assembled, notes)) => (Ok((diagnostics, assembled)), Some(notes)),
            Err(e) => (Err(e), None),
        }
    } else {
        (assemble(&source, &cfg), None)
    };
    drop(progress);
    let (diagnostics, assembled, range) = read(assembled)?;
    let label = match input {
        Some(p) => p.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_else(|| name.clone()),
        None => "-".to_owned(),
    };
    let timing = Timing::start();
    let estimated = Estimated {
        assembled,
        source: &source,
        diagnostics: &diagnostics,
        cfg: &cfg,
        label: &label,
        name: &name,
        to_terminal: out_path.is_none() && io::stdout().is_terminal(),
        timing: timing.as_ref(),
        range,
        notes,
    };
    let result = job.write(estimated, output);
    if let Some(t) = &timing {
        t.report("estimate+write");
    }
    result
}
