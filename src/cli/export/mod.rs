//! `jscalls export`: the chosen threads' calls for other tools: speedscope, the Firefox
//! Profiler, collapsed stacks, SVG flame graphs (inferno).

use std::fmt::Write as _;
use std::io::{self, Write};

use jscalls::tree::export::{self, Profile, ProfileKind};
use jscalls::{Assembled, Error};

use super::args::{ExportArgs, ExportFormat, Global, WeightArg};
use super::each::{self, Estimated, PerInput};
use super::files::Reads;
use super::output::Output;
use super::report::failure;
use super::tree::{self, Chosen, Failure};
use super::Failed;
use jscalls::Config;

mod firefox;

use firefox::{firefox, write_profile, write_threads, ThreadPart};

struct Export<'a> {
    args: &'a ExportArgs,
    format: ExportFormat,
}

impl PerInput for Export<'_> {
    fn suffix(&self) -> &'static str {
        self.format.suffix()
    }

    /// The events inside calls are in the stacks; the Firefox Profiler shows them as markers too.
    fn keeps_event_names(&self) -> bool {
        true
    }

    fn write(&self, e: Estimated<'_>, output: Output) -> Result<(), Failed> {
        let Estimated { assembled, cfg, label, name, timing, .. } = e;
        let rendered = render(assembled, self.args, self.format, label, cfg.threads).map_err(|f| match f {
            Failure::Usage(m) => Failed::Usage(m),
            Failure::Input(err) => failure(name, err),
        })?;
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
    let format = match (args.to, out.and_then(ExportFormat::from_path)) {
        // Only a name that says another format disagrees: a plain `.json` may be anything.
        (Some(to), Some(named)) if to != named && named != ExportFormat::Firefox => {
            return Err(Failed::Usage(format!(
                "--to {} writes {}, but -o {} names {}: give a name that says it, or leave out --to",
                to.name(),
                to.what(),
                out.map(|o| o.display().to_string()).unwrap_or_default(),
                named.what()
            )))
        }
        (Some(f), _) | (None, Some(f)) => f,
        (None, None) => {
            return Err(Failed::Usage(
                "export: give --to speedscope|firefox|collapsed|svg, or -o a name that says it (x.speedscope.json, x.json.gz, x.collapsed, x.svg)"
                    .to_owned(),
            ))
        }
    };
    if format != ExportFormat::Svg && args.icicle {
        return Err(Failed::Usage("--icicle draws an SVG: --to svg".to_owned()));
    }
    if format == ExportFormat::Speedscope && args.by_time {
        return Err(Failed::Usage("--by-time is for collapsed stacks and SVG; speedscope has both views".to_owned()));
    }
    each::run(&args.out, &Export { args, format }, global, cfg, reads)
}

/// A thread's name as the exports show it.
pub(super) fn thread_label(c: &Chosen) -> String {
    format!("{} (pid {}, tid {})", c.name.as_deref().unwrap_or("thread"), c.pid, c.tid)
}

/// An export, ready to be written.
pub(crate) enum Rendered {
    Bytes(Vec<u8>),
    /// Collapsed stacks written from their trees line by line (not gathered first: a copy as
    /// large as the output).
    Collapsed(Vec<export::CollapsedTree>),
    /// Lines, each written with its newline.
    Lines(Vec<String>),
    /// The Firefox Profiler's profile, serialized as it is written (see [`Rewrite`]); with
    /// `tracing_ms`, its weights are µs to be written as ms.
    Firefox {
        profile: Box<fxprof_processed_profile::Profile>,
        tracing_ms: bool,
    },
    /// The same for several threads, a profile each, serialized in parallel and spliced into
    /// one as they are written (see [`firefox`]).
    FirefoxThreads {
        parts: Vec<ThreadPart>,
        /// Whether one of them has JavaScript (the whole's `meta.usesOnlyOneStackType`).
        js: bool,
        tracing_ms: bool,
        threads: usize,
    },
}

impl Rendered {
    pub(crate) fn write_to(self, w: &mut dyn Write) -> io::Result<()> {
        match self {
            Rendered::Bytes(b) => w.write_all(&b),
            Rendered::Collapsed(trees) => {
                let mut result = Ok(());
                for t in &trees {
                    t.each_line(0, |l| {
                        if result.is_ok() {
                            result = w.write_all(l.as_bytes()).and_then(|()| w.write_all(b"\n"));
                        }
                    });
                }
                result
            }
            Rendered::Lines(lines) => lines.iter().try_for_each(|l| {
                w.write_all(l.as_bytes())?;
                w.write_all(b"\n")
            }),
            Rendered::Firefox { profile, tracing_ms } => write_profile(&profile, tracing_ms, w),
            Rendered::FirefoxThreads { parts, js, tracing_ms, threads } => {
                write_threads(&parts, js, tracing_ms, threads, w)
            }
        }
    }
}

/// The whole output for `assembled`, in `format`.
pub(crate) fn render(
    assembled: Assembled,
    args: &ExportArgs,
    format: ExportFormat,
    input: &str,
    threads: usize,
) -> Result<Rendered, Failure> {
    let spans = matches!(format, ExportFormat::Speedscope | ExportFormat::Firefox) || args.by_time;
    let kept = tree::choose(assembled, &args.select, spans)?;
    if kept.is_empty() {
        // The input's doing, not the command line's: exit 1, as for any input with nothing usable.
        return Err(Failure::Input(Error::input(None, "no thread has estimated calls to export")));
    }
    let several = kept.len() > 1;
    match format {
        ExportFormat::Speedscope => {
            let kind = match args.select.weight {
                WeightArg::SelfTime => ProfileKind::Evented,
                WeightArg::Samples => ProfileKind::SampledCount,
                WeightArg::SampleTime => ProfileKind::SampledTime,
            };
            let profiles: Vec<Profile<'_>> = kept
                .iter()
                .map(|c| Profile { name: thread_label(c), stacks: &c.stacks, spans: &c.spans, kind })
                .collect();
            let mut out = String::new();
            export::speedscope(&mut out, input, &profiles);
            Ok(Rendered::Bytes(out.into_bytes()))
        }
        ExportFormat::Firefox => Ok(firefox(&kept, args.select.weight, input, threads)),
        ExportFormat::Collapsed | ExportFormat::Svg => {
            let mut lines = Vec::new();
            // The flame graph's lines from the trees, end to end in one string (not a string
            // each: thousands of lines hundreds of bytes long).
            let (mut text, mut ends) = (String::new(), Vec::new());
            // Threads by label, so that their blocks of sorted lines are sorted as a whole.
            let mut by_label: Vec<(String, &Chosen)> = kept.iter().map(|c| (thread_label(c), c)).collect();
            by_label.sort_by(|a, b| a.0.cmp(&b.0));
            if args.by_time {
                for (label, c) in by_label {
                    export::collapsed_by_time(&mut lines, &c.stacks, &c.spans, several.then_some(label).as_deref());
                }
            } else {
                let trees: Vec<export::CollapsedTree> = by_label
                    .iter()
                    .map(|(label, c)| export::CollapsedTree::new(&c.stacks, several.then_some(label.as_str())))
                    .collect();
                if format == ExportFormat::Collapsed {
                    return Ok(Rendered::Collapsed(trees));
                }
                // inferno leaves out frames under `min_width` percent of the whole; subtrees
                // under half that go in as one line each (see `CollapsedTree::write`).
                let total: u64 = trees.iter().map(export::CollapsedTree::total).sum();
                let min_width = inferno::flamegraph::Options::default().min_width;
                let fold = (total as f64 * min_width / 100.0 / 2.0) as u64;
                for t in &trees {
                    t.each_line(fold, |l| {
                        text.push_str(l);
                        ends.push(text.len());
                    });
                }
            }
            if format == ExportFormat::Collapsed {
                return Ok(Rendered::Lines(lines));
            }
            let lines: Vec<&str> = if args.by_time {
                lines.iter().map(String::as_str).collect()
            } else {
                ends.iter().scan(0, |from, &end| Some(&text[std::mem::replace(from, end)..end])).collect()
            };
            if lines.is_empty() {
                return Err(Failure::Input(Error::input(None, "nothing to draw: every stack weighs under 1")));
            }
            let mut opt = inferno::flamegraph::Options::default();
            // Names from the input, made safe for XML as the lines' names are.
            let input = export::collapsed_text(input);
            opt.title = format!("{input}: {}", if args.by_time { "flame chart" } else { "flame graph" });
            let mut sub = if several {
                format!("{} threads", kept.len())
            } else {
                export::collapsed_text(&thread_label(&kept[0]))
            };
            let _ = write!(
                sub,
                ", {}",
                match args.select.weight {
                    WeightArg::SelfTime => "estimated calls' self time (µs)",
                    WeightArg::Samples => "CPU profile samples",
                    WeightArg::SampleTime => "CPU profile samples' time (µs)",
                }
            );
            opt.subtitle = Some(sub);
            opt.count_name = if args.select.weight == WeightArg::Samples { "samples" } else { "µs" }.to_owned();
            opt.name_type = "Function:".to_owned();
            opt.deterministic = true;
            // A label is `name url:line:column`: keep the name when it does not fit.
            opt.text_truncate_direction = inferno::flamegraph::TextTruncateDirection::Right;
            opt.flame_chart = args.by_time;
            // Sorted already (`export::collapsed`; checked, as a label could break it); a flame
            // chart keeps its time order.
            // inferno compares the lines trimmed: so must this check, or it refuses them.
            opt.no_sort = !args.by_time && lines.windows(2).all(|w| w[0].trim() <= w[1].trim());
            if args.icicle {
                opt.direction = inferno::flamegraph::Direction::Inverted;
            }
            let mut svg = Vec::new();
            inferno::flamegraph::from_lines(&mut opt, lines.iter().copied(), &mut svg)
                .map_err(|e| Failure::Input(Error::input(None, format!("the flame graph cannot be drawn: {e}"))))?;
            Ok(Rendered::Bytes(svg))
        }
    }
}
