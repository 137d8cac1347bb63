//! `jscalls calls`: every estimated call as JSON (the oracle's format and order), or a summary
//! per thread for a person.

use std::io::{self, IsTerminal, Write};
use std::path::Path;

use jscalls::{Assembled, Config, Diagnostics, EngineVersion, Error, Estimator};

use super::args::{CallsArgs, CallsFormat, Global};
use super::each::{self, Estimated, PerInput};
use super::files::Reads;
use super::output::Output;
use super::report::failure;
use super::{summary, Failed};
use jscalls::ranges::Query;

struct Calls<'a>(CallsFormat, Option<&'a Query>);

impl PerInput for Calls<'_> {
    fn suffix(&self) -> &'static str {
        match self.0 {
            CallsFormat::Json => ".calls.json",
            CallsFormat::Summary => ".summary.txt",
        }
    }

    fn shares_stdout(&self) -> bool {
        self.0 == CallsFormat::Summary
    }

    /// The summary counts the trace events inside calls apart from the JS; a range needs the
    /// trace's bounds, which are found with the names.
    fn keeps_event_names(&self) -> bool {
        self.0 == CallsFormat::Summary || self.1.is_some()
    }

    /// The calls and their summary read no sample once the calls are made (their count stays).
    fn keeps_samples(&self) -> bool {
        false
    }

    fn range(&self) -> Option<&Query> {
        self.1
    }

    fn write(&self, e: Estimated<'_>, output: Output) -> Result<(), Failed> {
        let Estimated { assembled, diagnostics, cfg, label, name, range, .. } = e;
        let result = output.write(|w| match self.0 {
            CallsFormat::Json => assembled.write_calls_of(w, label, range.as_ref()),
            CallsFormat::Summary => write_summary(w, assembled, diagnostics, cfg.engine, cfg.estimator),
        });
        result.map_err(|err| failure(name, err))
    }
}

pub(crate) fn run(args: &CallsArgs, global: &Global, cfg: &Config, reads: Reads) -> Result<(), Failed> {
    if args.thread.is_some() {
        return Err(Failed::Usage(
            "calls writes every thread; --thread chooses one in tree and export (--threads N sets how many CPU threads work)"
                .to_owned(),
        ));
    }
    let to_terminal = args.out.output.as_deref().is_none_or(|o| o == Path::new("-")) && io::stdout().is_terminal();
    let format = args.format.unwrap_or(if to_terminal { CallsFormat::Summary } else { CallsFormat::Json });
    if let (Some(q), CallsFormat::Summary) = (args.range.query(), format) {
        return Err(Failed::Usage(format!("{} selects the calls of the JSON: give --format json", q.flag())));
    }
    each::run(&args.out, &Calls(format, args.range.query()), global, cfg, reads)
}

/// The calls summary, thread by thread.
fn write_summary(
    w: &mut dyn Write,
    assembled: Assembled,
    d: &Diagnostics,
    engine: EngineVersion,
    estimator: Estimator,
) -> Result<(), Error> {
    let engine = match engine {
        EngineVersion::V0_0_65 => "0.0.65",
        EngineVersion::Latest => "latest",
    };
    let how = match estimator {
        Estimator::DevTools => "estimates them",
        Estimator::Midway => "finds them, each boundary that samples set placed midway",
        Estimator::LogMidway => "finds them, each boundary that samples set placed midway in log duration",
    };
    let mut text = format!("JS calls as DevTools ({engine}) {how}; --format json or -o FILE for every call\n");
    let mut threads = 0;
    let (timings, start) = (assembled.timings().clone(), assembled.trace_bounds().0);
    assembled.for_each_thread(|th| {
        threads += 1;
        summary::thread(&mut text, th);
        Ok::<(), Error>(())
    })?;
    if threads == 0 {
        text.push_str("  no profiled thread: the input has no CPU profile\n");
    }
    summary::timings(&mut text, &timings, start);
    if d.total_significant() > 0 {
        text.push_str(&format!("  ({} warning(s) about the input: see above)\n", d.total_significant()));
    }
    w.write_all(text.as_bytes()).map_err(|e| Error::io("cannot write the summary", e))
}
